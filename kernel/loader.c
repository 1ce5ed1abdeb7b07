// SPDX-License-Identifier: GPL-2.0
/*
 * vl-loader: register one of vegaslab's BPF congestion controls with its parameters.
 *
 *   vl-loader register OBJ [VAR=VALUE ...]
 *
 * Opens OBJ (kernel/build/<name>.bpf.o), sets the named read-only globals (vl_alpha, vl_beta,
 * vl_gamma, vl_inc, vl_equal_throughput, vl_at_beta: unsigned 32-bit) before loading, loads
 * it, and registers every struct_ops congestion control in it. libbpf 1.1 has no
 * .struct_ops.link, so registration goes through the map and the link is disconnected before
 * exit: the algorithm stays registered after this process ends (KERNEL.md). Listing and
 * unregistering are bpftool's (vegaslab.kernel calls it). Python's vegaslab.kernel validates
 * the parameters with the simulator's own reader first; this program only checks that each
 * VAR exists and is 32 bits wide.
 *
 * Exit status 0 on success; 1 with one line on stderr saying what failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static struct bpf_map *rodata_map(struct bpf_object *obj)
{
	struct bpf_map *m;
	const char *suffix = ".rodata";

	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);
		size_t n = strlen(name), k = strlen(suffix);

		if (bpf_map__is_internal(m) && n >= k && strcmp(name + n - k, suffix) == 0)
			return m;
	}
	return NULL;
}

/* Set the 32-bit .rodata variable `var` to `value` in `data` (the map's initial value). */
static int set_var(struct btf *btf, void *data, size_t size, const char *var, unsigned long value)
{
	int id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	const struct btf_type *sec;
	const struct btf_var_secinfo *v;
	int i;

	if (id < 0) {
		fprintf(stderr, "vl-loader: the object has no .rodata parameters\n");
		return -1;
	}
	sec = btf__type_by_id(btf, id);
	v = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *t = btf__type_by_id(btf, v->type);
		const char *name = btf__name_by_offset(btf, t->name_off);
		__u32 x = (__u32)value;

		if (strcmp(name, var) != 0)
			continue;
		if (v->size != sizeof(x) || v->offset + sizeof(x) > size) {
			fprintf(stderr, "vl-loader: parameter %s is not a 32-bit value\n", var);
			return -1;
		}
		memcpy((char *)data + v->offset, &x, sizeof(x));
		return 0;
	}
	fprintf(stderr, "vl-loader: the object has no parameter %s\n", var);
	return -1;
}

static int cmd_register(const char *path, int nsets, char **sets)
{
	struct bpf_object *obj;
	struct bpf_map *ro, *m;
	const void *initial;
	void *data = NULL;
	size_t size = 0;
	int i, err, registered = 0;

	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "vl-loader: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	ro = rodata_map(obj);
	if (nsets > 0) {
		if (!ro || !(initial = bpf_map__initial_value(ro, &size))) {
			fprintf(stderr, "vl-loader: %s has no parameters to set\n", path);
			goto fail;
		}
		data = malloc(size);
		if (!data)
			goto fail;
		memcpy(data, initial, size);
		for (i = 0; i < nsets; i++) {
			char *eq = strchr(sets[i], '='), *end;
			unsigned long value;

			if (!eq || eq == sets[i] || !eq[1]) {
				fprintf(stderr, "vl-loader: expected VAR=VALUE, got %s\n", sets[i]);
				goto fail;
			}
			*eq = '\0';
			errno = 0;
			value = strtoul(eq + 1, &end, 10);
			if (errno || *end || value > 0xffffffffUL) {
				fprintf(stderr, "vl-loader: %s: not an unsigned 32-bit number: %s\n", sets[i], eq + 1);
				goto fail;
			}
			if (set_var(bpf_object__btf(obj), data, size, sets[i], value))
				goto fail;
		}
		if (bpf_map__set_initial_value(ro, data, size)) {
			fprintf(stderr, "vl-loader: cannot set the parameters of %s\n", path);
			goto fail;
		}
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "vl-loader: the kernel refused %s: %s\n", path, strerror(-err));
		goto fail;
	}
	bpf_object__for_each_map(m, obj) {
		struct bpf_link *link;

		if (bpf_map__type(m) != BPF_MAP_TYPE_STRUCT_OPS)
			continue;
		link = bpf_map__attach_struct_ops(m);
		if (!link) {
			fprintf(stderr, "vl-loader: cannot register %s: %s (already registered? unregister it first)\n",
				bpf_map__name(m), strerror(errno));
			goto fail;
		}
		/* Keep it registered after we exit. */
		bpf_link__disconnect(link);
		bpf_link__destroy(link);
		printf("%s\n", bpf_map__name(m));
		registered++;
	}
	free(data);
	bpf_object__close(obj);
	if (!registered) {
		fprintf(stderr, "vl-loader: %s holds no congestion control\n", path);
		return 1;
	}
	return 0;
fail:
	free(data);
	bpf_object__close(obj);
	return 1;
}

int main(int argc, char **argv)
{
	libbpf_set_print(quiet_print);
	if (argc >= 3 && strcmp(argv[1], "register") == 0)
		return cmd_register(argv[2], argc - 3, argv + 3);
	fprintf(stderr, "usage: vl-loader register OBJ [VAR=VALUE ...]\n");
	return 2;
}
