/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vegaslab_cc.h: the Linux-flavour Vegas controllers of vegaslab as plain C, shared by the BPF
 * struct_ops program (kernel/vegaslab.bpf.c) and the userspace replay test (kernel/replay.c).
 *
 * What this is
 * ------------
 * A line-for-line integer twin of the simulator's Linux flavour:
 *
 *   - the Vegas machinery of crates/vegaslab-cc/src/vegas_linux.rs (`LinuxVegas<R>`): RTT
 *     bookkeeping, rounds, slow start and its exit, Reno below three samples and during loss
 *     recovery, the loss cut, the clamps;
 *   - four once-per-round rules (`LinuxRule`s):
 *       VL_RULE_CLASSIC    src/vegas.rs `Classic`: Brakmo-Peterson Vegas as tcp_vegas.c;
 *       VL_RULE_VEGAS_A    src/vegas_a.rs `VegasALinux`: Vegas-A (Srijith, Jacob, Ananda 2005,
 *                          section 3, pseudo-code lines 01-26), alpha/beta adapt with the
 *                          throughput trend;
 *       VL_RULE_ADAVEGAS   src/adavegas.rs `AdaVegasState` (Maor and Mansour, section III-B and
 *                          Table I): the increment grows with the run of increase rounds;
 *       VL_RULE_FIXED_INC  src/adavegas.rs `FixedIncrement`: Vegas with +inc packets per
 *                          increase round (the paper's Vegas_1 = alpha 1, beta 3, inc 1 and
 *                          Vegas_8 = alpha 4, beta 8, inc 8);
 *       VL_RULE_ROVEGAS    src/rovegas.rs `RoVegasLinuxRule` (Chan, Chan, Chen, section 3):
 *                          classic Vegas whose samples and rounds discount router-reported
 *                          queueing times (AQT, AQT-echo; "RoVegas" below).
 *
 * The decisions must equal the Rust controllers' exactly: `make -C kernel check-vectors` replays
 * the checked-in decision vectors (crates/vegaslab-cc/tests/vectors/<name>-linux.csv.gz) through
 * this header and compares cwnd and ssthresh on every row. Any change here or in the Rust
 * controllers that is not mirrored on the other side fails that check.
 *
 * Out of scope: CUBIC (the kernel has its own); its vectors are not replayed here.
 *
 * RoVegas
 * -------
 * Classic Linux Vegas with the two changes of rovegas.rs's "Linux flavour" docs, fed by
 * vl_pkts_acked_q(), which takes a sample's optional queueing times (whole µs: AQT = backward,
 * AQT-echo = forward; kernel/aqt.h says how they reach the kernel):
 *   (1) the sample's baseRTT candidate is rtt_us + 1 - (AQT + AQT-echo), at least 1 µs; a
 *       sample without queueing times is its own candidate (plain Vegas);
 *   (2) the round's diff (and target) use minRTT - QT_b, QT_b = sum of the round's probing
 *       samples' AQT / their count (truncated); minRTT itself when there were no probing
 *       samples or QT_b >= minRTT (inconsistent stamps).
 * The sums restart with every round (vl_reset_round: a round ended, Vegas re-enabled). Other
 * rules ignore queueing times, so vl_pkts_acked() is vl_pkts_acked_q() without them.
 *
 * Constraints (why the code looks the way it does)
 * ------------------------------------------------
 * The same text compiles (a) into BPF after `vmlinux.h`, and (b) into userspace C after
 * <linux/types.h> (included below when vmlinux.h was not). Hence: only __u8/__u16/__u32/__u64/
 * __s32/__s64 types, no libc, no floating point, no globals, no loops, no recursion, no arrays,
 * every division by a value that is proven or guarded non-zero, and only unsigned 64-bit
 * division (signed division needs BPF ISA v4, which clang 14 does not emit). Everything is
 * `static __always_inline`, so each struct_ops program inlines what it uses.
 *
 * Units
 * -----
 * cwnd, ssthresh and clamp are whole packets (the kernel's snd_cwnd, snd_ssthresh,
 * snd_cwnd_clamp). snd_nxt and the ACK point (snd_una) are sequence numbers in any one unit:
 * packets in the vectors, bytes in the kernel. They are only compared (wrap-safe, as the
 * kernel's after(): (__s32)(a - b) > 0) and subtracted; the one quantity built from them,
 * Vegas-A's "packets sent in the round", enters only a ratio compared by cross-multiplication
 * with the previous round's, so bytes and packets give the same decisions. RTTs are µs
 * (ack_sample.rtt_us); like tcp_vegas.c, a sample is stored as rtt_us + 1 so that a 0 µs
 * sample still counts.
 *
 * Thresholds as integers (the loader's job)
 * -----------------------------------------
 * diff is a whole number of packets, so a fractional scenario threshold has an exact integer
 * form (vegas_linux.rs, "Thresholds as integers"): `diff < alpha` is `diff < ceil(alpha)`,
 * `diff > beta` is `diff > floor(beta)`, `diff > gamma` is `diff > floor(gamma)`. struct
 * vl_params holds those integers: for whole-number parameters they are the parameters
 * themselves; for fractional ones the loader stores ceil(alpha), floor(beta), floor(gamma)
 * (negative values count as 0). Vegas-A's alpha/beta are whole (its reader requires it) and are
 * the initial values of the adapting thresholds. AdaVegas ignores alpha, beta and inc (Table I
 * supplies them). inc is whole packets (FixedIncrement truncates a fractional inc).
 */
#ifndef VEGASLAB_CC_H
#define VEGASLAB_CC_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Which once-per-round rule decides (struct vl_params.rule). */
#define VL_RULE_CLASSIC 0
#define VL_RULE_VEGAS_A 1
#define VL_RULE_ADAVEGAS 2
#define VL_RULE_FIXED_INC 3
#define VL_RULE_ROVEGAS 4
/* The rule of each registered algorithm with a Linux flavour, by its name (the kernel build's
 * list comes from the registry: scripts/kernel_algorithms.py). */
#define VL_RULE_VEGAS VL_RULE_CLASSIC
#define VL_RULE_VEGAS_1 VL_RULE_FIXED_INC
#define VL_RULE_VEGAS_8 VL_RULE_FIXED_INC

/* Vegas-A: who takes Th(t) == Th(t-rtt) with alpha < diff < beta (vegas_a.rs, point 1). */
#define VL_EQUAL_INCREASE 0 /* line 02, "increase" (default) */
#define VL_EQUAL_HOLD 1     /* line 06, "hold" */
/* Vegas-A: where diff == beta > alpha goes (vegas_a.rs, point 3). */
#define VL_AT_BETA_BETWEEN 0 /* lines 01-09, "between" (default) */
#define VL_AT_BETA_HOLD 1    /* lines 24-25, "hold" */

/* "No RTT yet": Rust's u32::MAX for baseRTT and the round's minimum. */
#define VL_NO_RTT 0xffffffffU

/* Parameters, fixed per loaded program (module docs, "Thresholds as integers"). */
struct vl_params {
	__u32 rule;             /* VL_RULE_* */
	__u32 alpha, beta;      /* ceil(alpha), floor(beta), packets; Vegas-A: initial values */
	__u32 gamma;            /* floor(gamma), packets: slow start ends at diff > gamma */
	__u32 inc;              /* VL_RULE_FIXED_INC: packets added on an increase round */
	__u32 equal_throughput; /* VL_RULE_VEGAS_A: VL_EQUAL_* */
	__u32 at_beta;          /* VL_RULE_VEGAS_A: VL_AT_BETA_* */
};

/*
 * Per-connection state: the kernel keeps it in icsk_ca_priv (104 bytes). Field names follow
 * the Rust structs they mirror.
 */
struct vl_state {
	/* LinuxVegas (vegas_linux.rs) */
	__u32 base_rtt_us;  /* all-time minimum RTT, µs + 1; VL_NO_RTT before a sample */
	__u32 min_rtt_us;   /* this round's minimum RTT, µs + 1; VL_NO_RTT at a round's start */
	__u32 cnt_rtt;      /* RTT samples in this round */
	__u32 beg_snd_nxt;  /* snd_nxt when the round began: the round ends on an ACK after it */
	__u8 doing_vegas_now; /* 1: Vegas decides (Open); 0: Reno does (recovery) */
	/* VegasALinux (vegas_a.rs) */
	__u8 va_has_prev;   /* a previous round's Th exists (else Th(t-rtt) counts as 0) */
	__s8 va_trend;      /* sign of Th(t) - Th(t-rtt) at the last round (observability) */
	__u8 va_last_line;  /* pseudo-code line the last CA round took (observability) */
	__u32 va_alpha, va_beta; /* the adapting thresholds, whole packets */
	__u32 va_prev_sent; /* Th(t-rtt) = va_prev_sent / va_prev_rtt_us */
	__u32 va_prev_rtt_us;
	/* AdaVegasState (adavegas.rs) */
	__u32 ada_succ;      /* successive increase rounds */
	__u32 ada_table_row; /* the succ whose Table I row alpha/beta/inc hold */
	__u32 ada_inc;       /* packets added per increase round */
	__u32 ada_last_inc;  /* size of the next congestion decrease, before halving */
	__u32 ada_steady;    /* consecutive steady rounds */
	/* RoVegasLinuxRule (rovegas.rs) */
	__u32 ro_probes;     /* probing samples (with queueing times) in this round */
	__u64 ro_backward_sum_us; /* sum of their AQT (backward queueing), µs */
	/* Not a decision input: the BPF program's last consumed AQT stamp counter (vegaslab.bpf.c),
	 * so that one stamp feeds one sample only. The replay leaves it alone. */
	__u32 ro_stamp_seen;
};

_Static_assert(sizeof(struct vl_state) <= 104, "struct vl_state must fit Linux's icsk_ca_priv (104 bytes)");

/*
 * The part of the socket the controllers read and write (cwnd, ssthresh, cwnd_cnt). Reno's ACK
 * counter and prior_cwnd are the socket's own, as for tcp_vegas.c (tcp_reno_cong_avoid works on
 * tp->snd_cwnd_cnt, tcp_reno_undo_cwnd reads tp->prior_cwnd), so the kernel's resets apply:
 * the BPF program maps them from the socket (vl_win_from_sock below); the replay keeps them
 * across rows and does what the kernel does at a loss (prior_cwnd = cwnd, cwnd_cnt = 0).
 */
struct vl_win {
	__u32 cwnd;     /* snd_cwnd, packets */
	__u32 ssthresh; /* snd_ssthresh, packets (0x7fffffff: infinite) */
	__u32 clamp;    /* snd_cwnd_clamp, packets */
	__u32 snd_nxt;  /* next sequence number to send, same unit as the ACK point */
	__u32 cwnd_cnt; /* snd_cwnd_cnt: packets acknowledged towards Reno's next +1 */
	__u32 prior_cwnd;   /* prior_cwnd: cwnd when the last loss was detected */
	__u32 cwnd_limited; /* tcp_is_cwnd_limited(): 1 if cwnd, not the sender, limits sending */
};

/* A round's congestion-avoidance outcome (vegas_linux.rs `LinuxAction`). */
#define VL_HOLD 0
#define VL_INCREASE 1
#define VL_DECREASE 2

/* The kernel's after(a, b): a is later than b, modulo 2^32. */
static __always_inline int vl_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

static __always_inline __s64 vl_min_s64(__s64 a, __s64 b)
{
	return a < b ? a : b;
}

static __always_inline __s64 vl_max_s64(__s64 a, __s64 b)
{
	return a > b ? a : b;
}

/* Saturating +1 / -1 (Rust's saturating_add / saturating_sub on the rules' counters). */
static __always_inline __u32 vl_inc_sat(__u32 x)
{
	return x == 0xffffffffU ? x : x + 1;
}

static __always_inline __u32 vl_dec_sat(__u32 x)
{
	return x == 0 ? 0 : x - 1;
}

/* A fresh round (vegas_linux.rs `reset_round`): forget its samples. */
static __always_inline void vl_reset_round(struct vl_state *s)
{
	s->cnt_rtt = 0;
	s->min_rtt_us = VL_NO_RTT;
	/* RoVegas' round_reset (all rules: the other rules never read these). */
	s->ro_probes = 0;
	s->ro_backward_sum_us = 0;
}

/* Vegas on, a new round from snd_nxt (vegas_linux.rs `enable`, Linux's vegas_enable). */
static __always_inline void vl_enable(struct vl_state *s, __u32 snd_nxt)
{
	s->doing_vegas_now = 1;
	s->beg_snd_nxt = snd_nxt;
	vl_reset_round(s);
}

/*
 * A new connection: the state of a freshly built Rust controller (`LinuxVegas::new` and the
 * rule's `new`). The round starts at the current snd_nxt (Linux's tcp_vegas_init does so; the
 * Rust controller starts at 0, which is the vectors' snd_nxt at init, and in the kernel
 * snd_nxt is an arbitrary initial sequence number, so only snd_nxt is meaningful there).
 */
static __always_inline void vl_init(struct vl_state *s, const struct vl_params *p, struct vl_win *w)
{
	s->base_rtt_us = VL_NO_RTT;
	vl_enable(s, w->snd_nxt);
	/* Vegas-A: the scenario's initial alpha and beta, no previous round. */
	s->va_has_prev = 0;
	s->va_trend = 0;
	s->va_last_line = 0;
	s->va_alpha = p->alpha;
	s->va_beta = p->beta;
	s->va_prev_sent = 0;
	s->va_prev_rtt_us = 1;
	/* AdaVegas: succ 0, Table I's first row (alpha 1, beta 3, inc 1), lastInc 1. */
	s->ada_succ = 0;
	s->ada_table_row = 0;
	s->ada_inc = 1;
	s->ada_last_inc = 1;
	s->ada_steady = 0;
}

/*
 * One RTT sample (vegas_linux.rs `pkts_acked`, Linux's tcp_vegas_pkts_acked) with the
 * queueing times its ACK carried, if any (has_q; qb_us = AQT, backward; qf_us = AQT-echo,
 * forward; whole µs). rtt_us < 0 is "no sample". Stored as rtt_us + 1; baseRTT is the
 * all-time minimum of the baseRTT candidates, minRTT the round's minimum of the samples.
 * RoVegas (point (1) of the module docs): a probing sample's candidate is
 * rtt_us + 1 - (qb + qf), at least 1, and its qb joins the round's sum; every other rule (and
 * a sample without queueing times) takes the sample itself.
 */
static __always_inline void vl_pkts_acked_q(struct vl_state *s, const struct vl_params *p, struct vl_win *w,
					    __s32 rtt_us, int has_q, __u32 qb_us, __u32 qf_us)
{
	__u32 vrtt, cand;

	(void)w;
	if (rtt_us < 0)
		return;
	vrtt = (__u32)rtt_us + 1;
	cand = vrtt;
	if (p->rule == VL_RULE_ROVEGAS && has_q) {
		__u64 q = (__u64)qb_us + qf_us;

		s->ro_backward_sum_us += qb_us;
		s->ro_probes = vl_inc_sat(s->ro_probes);
		cand = q < vrtt ? (__u32)(vrtt - q) : 1; /* saturating at 1 µs (vrtt - q >= 1 here) */
	}
	if (cand < s->base_rtt_us)
		s->base_rtt_us = cand;
	if (vrtt < s->min_rtt_us)
		s->min_rtt_us = vrtt;
	s->cnt_rtt++;
}

/* One RTT sample without queueing times: every rule but RoVegas takes only these. */
static __always_inline void vl_pkts_acked(struct vl_state *s, const struct vl_params *p, struct vl_win *w,
					  __s32 rtt_us)
{
	vl_pkts_acked_q(s, p, w, rtt_us, 0, 0, 0);
}

/*
 * The RTT a round's diff uses (vegas_linux.rs `LinuxRule::round_rtt_us`): the round's minimum;
 * RoVegas (point (2)): minus QT_b, the truncated mean AQT of the round's probing samples, when
 * there were any and QT_b is below the minimum.
 */
static __always_inline __u64 vl_round_rtt(const struct vl_state *s, const struct vl_params *p)
{
	__u64 min_rtt = s->min_rtt_us;

	if (p->rule == VL_RULE_ROVEGAS && s->ro_probes > 0) {
		__u64 qt_b = s->ro_backward_sum_us / s->ro_probes;

		if (qt_b < min_rtt)
			return min_rtt - qt_b;
	}
	return min_rtt;
}

/*
 * Linux's tcp_slow_start (vegas_linux.rs `slow_start`): cwnd = min(cwnd + acked, ssthresh),
 * then at most the clamp; returns the packets left over (acked minus the growth before the
 * clamp). Called in slow start only (cwnd < ssthresh), so the result is never negative.
 */
static __always_inline __u32 vl_slow_start(struct vl_win *w, __u32 acked)
{
	__s64 cwnd = w->cwnd;
	__s64 grown = vl_min_s64(cwnd + (__s64)acked, (__s64)w->ssthresh);

	w->cwnd = (__u32)vl_min_s64(grown, (__s64)w->clamp);
	return (__u32)((__s64)acked - (grown - cwnd));
}

/*
 * Linux's tcp_cong_avoid_ai with w = cwnd (vegas_linux.rs `reno_cong_avoid`): credit gathered
 * at a larger window first gives +1; then acked counts towards +1 per win acknowledged
 * packets (snd_cwnd_cnt); at most the clamp.
 */
static __always_inline void vl_cong_avoid_ai(struct vl_win *w, __u32 acked)
{
	/* Linux's snd_cwnd is never 0; the guard keeps the division defined. */
	__u64 win = w->cwnd > 1 ? w->cwnd : 1;
	__u64 cwnd = w->cwnd;
	__u64 cnt = w->cwnd_cnt;

	if (cnt >= win) {
		cnt = 0;
		cwnd += 1;
	}
	cnt += acked;
	if (cnt >= win) {
		__u64 more = cnt / win;

		cnt -= more * win;
		cwnd += more;
	}
	w->cwnd_cnt = (__u32)cnt; /* < win <= 2^32 - 1 */
	w->cwnd = (__u32)(cwnd < w->clamp ? cwnd : w->clamp);
}

/*
 * Linux's tcp_reno_cong_avoid (vegas_linux.rs `reno_cong_avoid`): nothing unless cwnd-limited
 * (tcp_is_cwnd_limited); in slow start tcp_slow_start, and done if nothing is left over;
 * otherwise tcp_cong_avoid_ai with what is left (in congestion avoidance, all of acked, even 0).
 */
static __always_inline void vl_reno_cong_avoid(struct vl_win *w, __u32 acked)
{
	if (!w->cwnd_limited)
		return;
	if (w->cwnd < w->ssthresh) {
		acked = vl_slow_start(w, acked);
		if (!acked)
			return;
	}
	vl_cong_avoid_ai(w, acked);
}

/* Table I of AdaVegas (adavegas.rs `table_i_whole`; the third row's printed "4 <= succ" is a
 * typo for 8 <= succ). A chain of comparisons, no array. */
static __always_inline void vl_table_i(__u32 succ, __u32 *alpha, __u32 *beta, __u32 *inc)
{
	if (succ <= 3) {
		*alpha = 1, *beta = 3, *inc = 1;
	} else if (succ <= 7) {
		*alpha = 2, *beta = 4, *inc = 2;
	} else if (succ <= 15) {
		*alpha = 2, *beta = 4, *inc = 4;
	} else {
		*alpha = 4, *beta = 8, *inc = 8;
	}
}

/*
 * Vegas-A: Th(t) = sent / rtt against Th(t-rtt) (0 before any round, i.e. (0, 1)), exactly:
 * sent * prev_rtt vs prev_sent * rtt (two 32-bit factors: no overflow in 64 bits). Records this
 * round as the next round's Th(t-rtt). Returns +1, 0 or -1 (vegas_a.rs `VegasALinux::shift`).
 */
static __always_inline int vl_va_shift(struct vl_state *s, __u32 sent, __u32 rtt_us)
{
	__u64 prev_sent = s->va_has_prev ? s->va_prev_sent : 0;
	__u64 prev_rtt = s->va_has_prev ? s->va_prev_rtt_us : 1;
	__u64 now_side = (__u64)sent * prev_rtt;
	__u64 prev_side = prev_sent * (__u64)rtt_us;
	int ord = now_side > prev_side ? 1 : (now_side < prev_side ? -1 : 0);

	s->va_has_prev = 1;
	s->va_prev_sent = sent;
	s->va_prev_rtt_us = rtt_us;
	s->va_trend = (__s8)ord;
	return ord;
}

/*
 * Vegas-A's congestion-avoidance round, section 3, lines 01-26, in integers (vegas_a.rs
 * `VegasALinux::congestion_avoidance`; the ambiguity choices are the named options there).
 * Returns VL_INCREASE / VL_DECREASE / VL_HOLD; the step is always one packet.
 */
static __always_inline int vl_vegas_a_round(struct vl_state *s, const struct vl_params *p, __u64 diff,
					    __u32 sent, __u32 rtt_us)
{
	int ord = vl_va_shift(s, sent, rtt_us);
	__u64 alpha = s->va_alpha, beta = s->va_beta;
	int line02 = p->equal_throughput == VL_EQUAL_HOLD ? ord > 0 : ord >= 0;
	int at_beta = p->at_beta == VL_AT_BETA_BETWEEN && diff == beta;

	if ((beta > diff || at_beta) && diff > alpha) {
		/* 01: alpha < diff < beta (or == beta under "between") */
		if (line02) {
			/* 02-04: throughput did not fall: cwnd, alpha, beta + 1 */
			s->va_alpha = vl_inc_sat(s->va_alpha);
			s->va_beta = vl_inc_sat(s->va_beta);
			s->va_last_line = 3;
			return VL_INCREASE;
		}
		s->va_last_line = 7; /* 06-07: no update */
		return VL_HOLD;
	}
	if (diff <= alpha) {
		/* 10: diff <= alpha */
		if (alpha >= 1 && ord >= 0) {
			s->va_last_line = 12; /* 11-12: cwnd + 1 */
			return VL_INCREASE;
		}
		if (alpha > 1 && ord < 0) {
			/* 14-15: throughput fell with inflated thresholds: all three - 1 */
			s->va_alpha = s->va_alpha - 1;
			s->va_beta = vl_dec_sat(s->va_beta);
			s->va_last_line = 15;
			return VL_DECREASE;
		}
		if (alpha == 1) {
			s->va_last_line = 18; /* 17-18: cwnd + 1 */
			return VL_INCREASE;
		}
		s->va_last_line = 10; /* alpha 0: none of 11, 14, 17 */
		return VL_HOLD;
	}
	if (diff > beta) {
		/* 20-22: congestion: thresholds - 1 if alpha > 1; cwnd - 1 */
		if (alpha > 1) {
			s->va_alpha = s->va_alpha - 1;
			s->va_beta = vl_dec_sat(s->va_beta);
		}
		s->va_last_line = 22;
		return VL_DECREASE;
	}
	s->va_last_line = 25; /* 24-25: diff == beta under "hold" */
	return VL_HOLD;
}

/*
 * AdaVegas' round (adavegas.rs `congestion_avoidance_linux` and `step`, section III-B): the
 * region from diff against the Table I row last read; an increase round extends the run
 * (succ + 1), re-reads Table I and adds inc; a congested round halves lastInc (at least 1)
 * and takes that many packets off; a steady round ends the run, and the second steady round
 * in a row resets lastInc to 1. *n is the step in packets.
 */
static __always_inline int vl_adavegas_round(struct vl_state *s, __u64 diff, __u32 *n)
{
	__u32 alpha, beta, inc;

	vl_table_i(s->ada_table_row, &alpha, &beta, &inc);
	if (diff > beta) {
		s->ada_succ = 0;
		s->ada_steady = 0;
		s->ada_last_inc = s->ada_last_inc / 2 > 1 ? s->ada_last_inc / 2 : 1;
		*n = s->ada_last_inc;
		return VL_DECREASE;
	}
	if (diff < alpha) {
		s->ada_succ = vl_inc_sat(s->ada_succ);
		s->ada_table_row = s->ada_succ;
		vl_table_i(s->ada_succ, &alpha, &beta, &inc);
		s->ada_inc = inc;
		s->ada_last_inc = inc;
		s->ada_steady = 0;
		*n = inc;
		return VL_INCREASE;
	}
	s->ada_succ = 0;
	s->ada_steady = vl_inc_sat(s->ada_steady);
	if (s->ada_steady >= 2)
		s->ada_last_inc = 1;
	*n = 0;
	return VL_HOLD;
}

/*
 * The rule's congestion-avoidance decision for one round with diff (packets). Classic,
 * RoVegas (its rule is Classic's) and fixed-increment Vegas compare with the integer thresholds in the order tcp_vegas.c does:
 * diff > beta first (-1), then diff < alpha (+1, or +inc), else hold.
 */
static __always_inline int vl_rule_round(struct vl_state *s, const struct vl_params *p, __u64 diff, __u32 sent,
					 __u32 rtt_us, __u32 *n)
{
	if (p->rule == VL_RULE_VEGAS_A) {
		*n = 1;
		return vl_vegas_a_round(s, p, diff, sent, rtt_us);
	}
	if (p->rule == VL_RULE_ADAVEGAS)
		return vl_adavegas_round(s, diff, n);
	/* VL_RULE_CLASSIC, VL_RULE_ROVEGAS and VL_RULE_FIXED_INC */
	if (diff > p->beta) {
		*n = 1;
		return VL_DECREASE;
	}
	if (diff < p->alpha) {
		*n = p->rule == VL_RULE_FIXED_INC ? p->inc : 1;
		return VL_INCREASE;
	}
	*n = 0;
	return VL_HOLD;
}

/*
 * The end of a round with three samples or more (vegas_linux.rs `round`; Brakmo and Peterson's
 * expected - actual in tcp_vegas.c's integer form): target = cwnd * baseRTT / RTT and
 * diff = cwnd * (RTT - baseRTT) / baseRTT, both truncated. In slow start, diff > gamma ends it
 * (cwnd = min(cwnd, target + 1), then ssthresh = min(ssthresh, cwnd) with that new cwnd),
 * else slow start grows. In congestion avoidance the rule decides; a decrease of n packets
 * also lowers ssthresh to min(ssthresh, cwnd - n), the decremented cwnd (mainline
 * tcp_vegas_ssthresh, read after each branch's change and before the clamp). At the end cwnd
 * is kept in [2, clamp] and ssthresh raised to at least 3/4 of cwnd (tcp_current_ssthresh).
 * Signed 64-bit intermediates, as the Rust i64s: a decrease may pass below zero before the clamp.
 */
static __always_inline void vl_round(struct vl_state *s, const struct vl_params *p, struct vl_win *w, __u32 sent,
				     __u32 acked)
{
	/* rtt >= 1 always; base >= 1 once a sample was taken (a round has >= 3), guarded anyway. */
	__u64 round_rtt = vl_round_rtt(s, p);
	__u64 rtt = round_rtt > 1 ? round_rtt : 1;
	__u64 base = s->base_rtt_us > 1 ? s->base_rtt_us : 1;
	__s64 cwnd = w->cwnd;
	__s64 ssthresh = w->ssthresh;
	__s64 clamp = w->clamp;
	__u64 target = (__u64)cwnd * base / rtt;
	__u64 diff = (__u64)cwnd * (rtt > base ? rtt - base : 0) / base;
	int in_slow_start = cwnd < ssthresh;

	if (in_slow_start) {
		/* Vegas-A remembers every measured round's Th, slow start included (point 7). */
		if (p->rule == VL_RULE_VEGAS_A)
			vl_va_shift(s, sent, (__u32)rtt);
		if (diff > p->gamma) {
			cwnd = vl_min_s64(cwnd, (__s64)target + 1);
			ssthresh = vl_min_s64(ssthresh, cwnd);
		} else {
			/* tcp_slow_start; Vegas drops the leftover. */
			vl_slow_start(w, acked);
			cwnd = w->cwnd;
		}
	} else {
		__u32 n = 0;
		int act = vl_rule_round(s, p, diff, sent, (__u32)rtt, &n);

		if (act == VL_DECREASE) {
			cwnd -= (__s64)n;
			ssthresh = vl_min_s64(ssthresh, cwnd);
		} else if (act == VL_INCREASE) {
			cwnd += (__s64)n;
		}
	}
	/* Rust's clamp(2, clamp): the lower bound first, then the upper. */
	if (cwnd < 2)
		cwnd = 2;
	if (cwnd > clamp)
		cwnd = clamp;
	ssthresh = vl_max_s64(ssthresh, (cwnd >> 1) + (cwnd >> 2));
	w->cwnd = (__u32)cwnd;
	w->ssthresh = (__u32)ssthresh;
}

/*
 * A new cumulative ACK outside loss recovery (vegas_linux.rs `cong_avoid`, Linux's
 * tcp_vegas_cong_avoid). snd_una is the new ACK point, acked the packets it acknowledges.
 * Vegas off: Reno. The first ACK after the round's start point ends the round: fewer than
 * three samples: Reno; else the round's decision. Within a round only slow start grows.
 */
static __always_inline void vl_cong_avoid(struct vl_state *s, const struct vl_params *p, struct vl_win *w,
					  __u32 snd_una, __u32 acked)
{
	if (!s->doing_vegas_now) {
		vl_reno_cong_avoid(w, acked);
		return;
	}
	if (vl_after(snd_una, s->beg_snd_nxt)) {
		/* Packets (bytes) sent in the round; 0 if a timeout pulled snd_nxt back. */
		__s32 d = (__s32)(w->snd_nxt - s->beg_snd_nxt);
		__u32 sent = d > 0 ? (__u32)d : 0;

		s->beg_snd_nxt = w->snd_nxt;
		if (s->cnt_rtt <= 2)
			vl_reno_cong_avoid(w, acked);
		else
			vl_round(s, p, w, sent, acked);
		vl_reset_round(s);
	} else if (w->cwnd < w->ssthresh) {
		/* tcp_vegas_cong_avoid's own slow start: no cwnd-limited check. */
		vl_slow_start(w, acked);
	}
}

/*
 * A loss (vegas_linux.rs `ssthresh`, Linux's tcp_reno_ssthresh): the new ssthresh,
 * max(cwnd / 2, 2). The caller (the kernel, or the replay) sets cwnd: ssthresh when fast
 * recovery ends, 1 after a timeout; and, before the call, prior_cwnd = cwnd and cwnd_cnt = 0
 * (the kernel's tcp_init_cwnd_reduction and tcp_enter_loss).
 */
static __always_inline __u32 vl_ssthresh(struct vl_state *s, const struct vl_params *p, struct vl_win *w)
{
	__u32 half = w->cwnd >> 1;

	(void)s;
	(void)p;
	return half > 2 ? half : 2;
}

/*
 * Recovery entered or left (vegas_linux.rs `set_state`, Linux's tcp_vegas_state): Vegas runs
 * only in the Open state and restarts with a fresh round when recovery ends; entering
 * recovery switches it off and tells the rule (AdaVegas: a loss ends the run, succ and the
 * steady count to 0).
 */
static __always_inline void vl_set_state(struct vl_state *s, const struct vl_params *p, struct vl_win *w, int open)
{
	if (open) {
		vl_enable(s, w->snd_nxt);
		return;
	}
	s->doing_vegas_now = 0;
	if (p->rule == VL_RULE_ADAVEGAS) {
		s->ada_succ = 0;
		s->ada_steady = 0;
	}
}

/*
 * A reduction proved spurious (vegas_linux.rs `undo_cwnd`, Linux's tcp_reno_undo_cwnd): the
 * window to restore, max(cwnd, prior_cwnd). The caller sets cwnd to it.
 */
static __always_inline __u32 vl_undo_cwnd(const struct vl_win *w)
{
	return w->cwnd > w->prior_cwnd ? w->cwnd : w->prior_cwnd;
}

/*
 * Sending resumes after idle (CA_EVENT_TX_START; vegas_linux.rs `cwnd_event`, Linux's
 * tcp_vegas_cwnd_event -> tcp_vegas_init): forget baseRTT, Vegas on, a fresh round. The rule's
 * own state (Vegas-A's thresholds and Th, AdaVegas' run) and Reno's counter are kept, as in
 * the Rust controller.
 */
static __always_inline void vl_tx_start(struct vl_state *s, const struct vl_params *p, struct vl_win *w)
{
	(void)p;
	s->base_rtt_us = VL_NO_RTT;
	vl_enable(s, w->snd_nxt);
}

#ifdef __VMLINUX_H__
/*
 * BPF only: the socket as struct vl_win and back (vegaslab.bpf.c and header_check.bpf.c).
 * cwnd_limited is tcp_is_cwnd_limited() (include/net/tcp.h), which BPF cannot call: the
 * sender's is_cwnd_limited flag, or in slow start cwnd < 2 x max_packets_out (so that cwnd may
 * grow to twice what the last window carried).
 */
static __always_inline void vl_win_from_sock(struct sock *sk, struct vl_win *w)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;

	w->cwnd = tp->snd_cwnd;
	w->ssthresh = tp->snd_ssthresh;
	w->clamp = tp->snd_cwnd_clamp;
	w->snd_nxt = tp->snd_nxt;
	w->cwnd_cnt = tp->snd_cwnd_cnt;
	w->prior_cwnd = tp->prior_cwnd;
	if (tp->is_cwnd_limited)
		w->cwnd_limited = 1;
	else if (tp->snd_cwnd < tp->snd_ssthresh)
		w->cwnd_limited = tp->snd_cwnd < 2 * tp->max_packets_out;
	else
		w->cwnd_limited = 0;
}

/* What the controllers write: cwnd, ssthresh and Reno's ACK counter. */
static __always_inline void vl_win_to_sock(struct sock *sk, const struct vl_win *w)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	tp->snd_cwnd = w->cwnd;
	tp->snd_ssthresh = w->ssthresh;
	tp->snd_cwnd_cnt = w->cwnd_cnt;
}
#endif

#endif /* VEGASLAB_CC_H */
