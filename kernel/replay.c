// SPDX-License-Identifier: GPL-2.0
/*
 * replay: run a Rust controller's decision vectors through vegaslab_cc.h and check that the C
 * twin decides the same cwnd and ssthresh on every row.
 *
 *   replay RULE FILE      RULE: an algorithm with a Linux flavour (vegas, vegas-a, ...)
 *                         FILE: crates/vegaslab-cc/tests/vectors/<RULE>-linux.csv.gz
 *
 * Exit 0 and "N rows, all equal"; exit 1 naming the first row (file line) whose cwnd or
 * ssthresh differs, with expected and got; exit 2 on bad usage or a malformed file (the
 * message names the file, line and column).
 *
 * File format and replay rules: crates/vegaslab-cc/tests/vectors/README.md. Each row sets the
 * window from its "before" columns (cwnd, ssthresh, clamp, next_seq as snd_nxt, cwnd_limited as
 * tcp_is_cwnd_limited()), calls the hook, and compares with cwnd_out / ssthresh_out. The
 * controller's own state (struct vl_state) carries over between rows; an `init` row starts it
 * afresh. The socket's Reno counter and prior_cwnd (struct vl_win) carry over too, and the
 * replay does to them what the kernel does: 0 on a new connection; at a loss (an `ssthresh`
 * row) prior_cwnd = cwnd and the counter 0 before the call (tcp_init_cwnd_reduction,
 * tcp_enter_loss). Sequence numbers are packets here; the header only compares and subtracts
 * them, so they are passed as __u32.
 *
 * Parameters are those tests/decision_vectors.rs `algorithms()` generates the files with: the
 * Linux defaults of each algorithm, from vegaslab's registry (build/algorithms.h). A pkts_acked row's qb_us / qf_us (RoVegas' AQT and AQT-echo, µs) are both
 * empty (the ACK carried no queueing times) or both integers in [0, 2^32 - 1]; they go to
 * vl_pkts_acked_q, which only the RoVegas rule reads them in. CUBIC is out of scope
 * (vegaslab_cc.h does not implement it).
 */
#include <linux/types.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "vegaslab_cc.h"

#define NCOLS 16
static const char *const header = "hook,now_us,rtt_us,qb_us,qf_us,seqno,acked,arg,next_seq,last_ack,clamp,"
				  "cwnd_limited,cwnd,ssthresh,cwnd_out,ssthresh_out";
enum { C_HOOK, C_NOW, C_RTT, C_QB, C_QF, C_SEQNO, C_ACKED, C_ARG, C_NEXT_SEQ, C_LAST_ACK, C_CLAMP,
       C_CWND_LIMITED, C_CWND, C_SSTHRESH, C_CWND_OUT, C_SSTHRESH_OUT };
static const char *const colname[NCOLS] = { "hook",     "now_us",       "rtt_us",   "qb_us",
					     "qf_us",    "seqno",        "acked",    "arg",
					     "next_seq", "last_ack",     "clamp",    "cwnd_limited",
					     "cwnd",     "ssthresh",     "cwnd_out", "ssthresh_out" };

struct rule_def {
	const char *name;
	struct vl_params params;
};

/* Every registered algorithm with a Linux flavour, with its Linux defaults (build/algorithms.h,
 * from vegaslab's registry). */
#include "algorithms.h"
#define VL_RULE_DEF(cc, rule, alpha, beta, gamma, inc, eq, at_beta) \
	{ cc, { rule, alpha, beta, gamma, inc, eq, at_beta } },
static const struct rule_def rules[] = { VL_ALGORITHMS(VL_RULE_DEF) };

static const char *file;
static long line;

static void usage(void)
{
	size_t i;

	fprintf(stderr, "usage: replay RULE FILE\n  RULE:");
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		fprintf(stderr, "%s %s", i ? "," : "", rules[i].name);
	fprintf(stderr, "\n  FILE: a decision-vector file, e.g. crates/vegaslab-cc/tests/vectors/vegas-linux.csv.gz\n");
	exit(2);
}

static void __attribute__((noreturn, format(printf, 2, 3))) bad(int col, const char *fmt, ...)
{
	va_list ap;

	if (col >= 0)
		fprintf(stderr, "replay: %s:%ld: column %s: ", file, line, colname[col]);
	else
		fprintf(stderr, "replay: %s:%ld: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* A required integer column within [lo, hi]. */
static long long num(char **f, int col, long long lo, long long hi)
{
	char *end;
	long long v;

	if (!*f[col])
		bad(col, "empty, but this hook needs it");
	errno = 0;
	v = strtoll(f[col], &end, 10);
	if (errno || *end)
		bad(col, "\"%s\" is not an integer", f[col]);
	if (v < lo || v > hi)
		bad(col, "%lld is outside [%lld, %lld]", v, lo, hi);
	return v;
}

int main(int argc, char **argv)
{
	const struct vl_params *p = NULL;
	struct vl_state s;
	struct vl_win w;
	char buf[512];
	long rows = 0;
	int have_init = 0;
	gzFile gz;
	size_t i;

	if (argc != 3)
		usage();
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (!strcmp(argv[1], rules[i].name))
			p = &rules[i].params;
	if (!p) {
		fprintf(stderr, "replay: unknown rule \"%s\"\n", argv[1]);
		usage();
	}
	file = argv[2];
	gz = gzopen(file, "rb");
	if (!gz) {
		fprintf(stderr, "replay: %s: cannot open: %s\n", file, strerror(errno ? errno : ENOENT));
		return 2;
	}
	memset(&s, 0, sizeof(s));
	memset(&w, 0, sizeof(w));

	while (gzgets(gz, buf, sizeof(buf))) {
		char *f[NCOLS], *rest = buf, *tok;
		size_t len = strlen(buf);
		long long cwnd_out, ss_out;
		const char *hook;
		int n = 0;

		line++;
		if (len && buf[len - 1] == '\n') {
			buf[--len] = 0;
		} else {
			int err;
			const char *msg = gzerror(gz, &err);

			if (err != Z_OK && err != Z_STREAM_END)
				bad(-1, "truncated or corrupt gzip data: %s", msg);
			if (!gzeof(gz))
				bad(-1, "line longer than %zu characters", sizeof(buf) - 2);
		}
		if (line == 1) {
			if (strcmp(buf, header))
				bad(-1, "header is \"%s\", expected \"%s\"", buf, header);
			continue;
		}
		if (!len)
			continue;
		while ((tok = strsep(&rest, ",")) != NULL) {
			if (n == NCOLS)
				bad(-1, "more than %d columns", NCOLS);
			f[n++] = tok;
		}
		if (n != NCOLS)
			bad(-1, "%d columns, expected %d", n, NCOLS);

		hook = f[C_HOOK];
		/* The window before the call. */
		w.cwnd = (__u32)num(f, C_CWND, 0, 0xffffffffLL);
		w.ssthresh = (__u32)num(f, C_SSTHRESH, 0, 0x7fffffffLL);
		w.clamp = (__u32)num(f, C_CLAMP, 0, 0xffffffffLL);
		w.snd_nxt = (__u32)num(f, C_NEXT_SEQ, -0x80000000LL, 0xffffffffLL);
		w.cwnd_limited = (__u32)num(f, C_CWND_LIMITED, 0, 1);
		cwnd_out = num(f, C_CWND_OUT, 0, 0xffffffffLL);
		ss_out = num(f, C_SSTHRESH_OUT, 0, 0x7fffffffLL);

		if (!strcmp(hook, "init")) {
			memset(&s, 0, sizeof(s));
			w.cwnd_cnt = 0; /* a new socket's */
			w.prior_cwnd = 0;
			vl_init(&s, p, &w);
			have_init = 1;
		} else if (!have_init) {
			bad(C_HOOK, "\"%s\" before the first init row", hook);
		} else if (!strcmp(hook, "pkts_acked")) {
			__s32 rtt = (__s32)num(f, C_RTT, -0x80000000LL, 0x7ffffffeLL);
			int has_q = *f[C_QB] || *f[C_QF];
			__u32 qb = 0, qf = 0;

			if (has_q) {
				/* Both or neither: num() names the empty one. */
				qb = (__u32)num(f, C_QB, 0, 0xffffffffLL);
				qf = (__u32)num(f, C_QF, 0, 0xffffffffLL);
			}
			vl_pkts_acked_q(&s, p, &w, rtt, has_q, qb, qf);
		} else if (!strcmp(hook, "cong_avoid")) {
			__u32 snd_una = (__u32)(num(f, C_SEQNO, -1, 0xfffffffeLL) + 1);

			vl_cong_avoid(&s, p, &w, snd_una, (__u32)num(f, C_ACKED, 0, 0xffffffffLL));
		} else if (!strcmp(hook, "ssthresh")) {
			__u32 ss;

			w.prior_cwnd = w.cwnd;
			w.cwnd_cnt = 0;
			ss = vl_ssthresh(&s, p, &w);

			w.ssthresh = ss;
			if (!strcmp(f[C_ARG], "fast_retransmit"))
				w.cwnd = ss;
			else if (!strcmp(f[C_ARG], "timeout"))
				w.cwnd = 1;
			else
				bad(C_ARG, "\"%s\" (allowed for ssthresh: fast_retransmit, timeout)", f[C_ARG]);
		} else if (!strcmp(hook, "set_state")) {
			int open;

			if (!strcmp(f[C_ARG], "open"))
				open = 1;
			else if (!strcmp(f[C_ARG], "recovery") || !strcmp(f[C_ARG], "loss"))
				open = 0;
			else
				bad(C_ARG, "\"%s\" (allowed for set_state: open, recovery, loss)", f[C_ARG]);
			vl_set_state(&s, p, &w, open);
		} else if (!strcmp(hook, "cwnd_event")) {
			if (strcmp(f[C_ARG], "tx_start"))
				bad(C_ARG, "\"%s\" (allowed for cwnd_event: tx_start)", f[C_ARG]);
			vl_tx_start(&s, p, &w);
		} else if (!strcmp(hook, "undo_cwnd")) {
			w.cwnd = vl_undo_cwnd(&w);
		} else {
			bad(C_HOOK,
			    "unknown hook \"%s\" (allowed: init, pkts_acked, cong_avoid, ssthresh, set_state, cwnd_event, "
			    "undo_cwnd)",
			    hook);
		}
		rows++;
		if (w.cwnd != cwnd_out || w.ssthresh != ss_out) {
			printf("%s:%ld: %s (rule %s)\n  row:      %s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n"
			       "  expected: cwnd %lld, ssthresh %lld\n  got:      cwnd %u, ssthresh %u\n",
			       file, line,
			       w.cwnd != cwnd_out ? (w.ssthresh != ss_out ? "cwnd and ssthresh differ" : "cwnd differs")
						  : "ssthresh differs",
			       argv[1], f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12],
			       f[13], f[14], f[15], cwnd_out, ss_out, w.cwnd, w.ssthresh);
			gzclose(gz);
			return 1;
		}
	}
	{
		int err;
		const char *msg = gzerror(gz, &err);

		if (err != Z_OK && err != Z_STREAM_END)
			bad(-1, "read error: %s", msg);
	}
	gzclose(gz);
	if (line == 0)
		bad(-1, "empty file (no header)");
	if (rows == 0)
		bad(-1, "no rows after the header");
	printf("%s: %ld rows, all equal\n", file, rows);
	return 0;
}
