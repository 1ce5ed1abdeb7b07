// SPDX-License-Identifier: GPL-2.0
/*
 * vl-loader: register one of vegaslab's BPF congestion controls with its parameters.
 *
 *   vl-loader register OBJ [VAR=VALUE ...]
 *   vl-loader sockops OBJ CGROUP_DIR
 *
 * Opens OBJ (kernel/build/<name>.bpf.o), sets the named read-only globals (vl_alpha, vl_beta,
 * vl_gamma, vl_inc, vl_equal_throughput, vl_at_beta: unsigned 32-bit) before loading, loads
 * it, and registers every struct_ops congestion control in it. libbpf 1.1 has no
 * .struct_ops.link, so registration goes through the map and the link is disconnected before
 * exit: the algorithm stays registered after this process ends (docs/testbed.md, "What the
 * kernel offers"). Listing and
 * unregistering are bpftool's (vegaslab.kernel calls it). Python's vegaslab.kernel validates
 * the parameters with the simulator's own reader first; this program only checks that each
 * VAR exists and is 32 bits wide.
 *
 * `sockops` loads the sock_ops program in OBJ (kernel/build/vl_aqt_sockops.bpf.o, RoVegas'
 * AQT option ends) and attaches it to the cgroup v2 directory CGROUP_DIR
 * (BPF_CGROUP_SOCK_OPS, multi-attach); it prints the program id. The attachment outlives this
 * process: `bpftool cgroup detach CGROUP_DIR sock_ops id ID` (or removing the cgroup) ends it.
 *
 * Both commands open objects with libbpf's pin root at /sys/fs/bpf/vegaslab (aqt.h): a map
 * declared LIBBPF_PIN_BY_NAME there (vl_aqt_stamps) is reused when pinned and pinned when
 * new, so the sock_ops program and every vl_rovegas share one socket-storage map. The
 * directory must be on a bpf filesystem (vegaslab.kernel mounts one on /sys/fs/bpf if needed).
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
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/types.h>
#include "aqt.h"

static struct bpf_object *open_obj(const char *path)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = VL_AQT_PIN_DIR);
	struct bpf_object *obj;

	mkdir(VL_AQT_PIN_DIR, 0700); /* fails harmlessly if present; libbpf names the real error */
	obj = bpf_object__open_file(path, &opts);
	if (!obj)
		fprintf(stderr, "vl-loader: cannot open %s: %s\n", path, strerror(errno));
	return obj;
}

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

	obj = open_obj(path);
	if (!obj)
		return 1;
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

static int cmd_sockops(const char *path, const char *cgroup)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int err, cg, fd;

	cg = open(cgroup, O_RDONLY | O_DIRECTORY);
	if (cg < 0) {
		fprintf(stderr, "vl-loader: cannot open the cgroup %s: %s\n", cgroup, strerror(errno));
		return 1;
	}
	obj = open_obj(path);
	if (!obj) {
		close(cg);
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "vl-loader: the kernel refused %s: %s\n", path, strerror(-err));
		goto fail;
	}
	prog = bpf_object__next_program(obj, NULL);
	if (!prog || bpf_program__type(prog) != BPF_PROG_TYPE_SOCK_OPS) {
		fprintf(stderr, "vl-loader: %s holds no sock_ops program\n", path);
		goto fail;
	}
	fd = bpf_program__fd(prog);
	if (bpf_prog_attach(fd, cg, BPF_CGROUP_SOCK_OPS, BPF_F_ALLOW_MULTI)) {
		fprintf(stderr, "vl-loader: cannot attach %s to %s: %s\n", path, cgroup, strerror(errno));
		goto fail;
	}
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
		printf("%u\n", info.id);
	bpf_object__close(obj);
	close(cg);
	return 0;
fail:
	bpf_object__close(obj);
	close(cg);
	return 1;
}

int main(int argc, char **argv)
{
	libbpf_set_print(quiet_print);
	if (argc >= 3 && strcmp(argv[1], "register") == 0)
		return cmd_register(argv[2], argc - 3, argv + 3);
	if (argc == 4 && strcmp(argv[1], "sockops") == 0)
		return cmd_sockops(argv[2], argv[3]);
	fprintf(stderr, "usage: vl-loader register OBJ [VAR=VALUE ...]\n       vl-loader sockops OBJ CGROUP_DIR\n");
	return 2;
}
