// SPDX-License-Identifier: GPL-2.0
/*
 * vegaslab's congestion controls as BPF struct_ops: the kernel twin of the simulator's Linux
 * flavour (crates/vegaslab-cc/src/vegas_linux.rs and the variants). Every decision is made by
 * the shared header vegaslab_cc.h, which the userspace replay test (kernel/replay.c) runs on
 * the Rust controllers' decision vectors; this file only maps the socket to the header's
 * window and back.
 *
 * One object per algorithm, built from this file with -DVL_NAME and -DVL_RULE (see
 * kernel/Makefile): vl_vegas, vl_vegas_a, vl_adavegas, vl_vegas_1, vl_vegas_8, vl_rovegas. Parameters are
 * read-only globals (.rodata) that the loader sets before loading (kernel/loader.c), in the
 * units of the scenario files (packets; the loader applies the integer thresholds).
 *
 * Units: cwnd and ssthresh in packets (snd_cwnd, snd_ssthresh), sequence numbers in bytes
 * (snd_nxt and the ACK point); the header only compares and subtracts them, so bytes and the
 * vectors' packets decide alike. RTT samples in µs (ack_sample.rtt_us).
 *
 * vl_rovegas (VL_RULE_ROVEGAS) also reads RoVegas' router-reported queueing times: the
 * sock_ops program kernel/aqt_sockops.bpf.c parses the AQT option of every incoming segment
 * into the socket-storage map vl_aqt_stamps (pinned, shared with this object: aqt.h) before
 * tcp_ack() runs, so pkts_acked finds the stamp of the ACK it is called for. A stamp is used
 * once: the map's counter must have moved since the last pkts_acked (vl_state.ro_stamp_seen);
 * otherwise, and when the socket has no storage (the sock_ops program is not attached to its
 * cgroup), the sample has no queueing times and RoVegas decides as classic Vegas.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "vegaslab_cc.h"
#include "aqt.h"

char _license[] SEC("license") = "GPL";

#ifndef VL_NAME
#error "build with -DVL_NAME=<name> -DVL_RULE=<rule> (kernel/Makefile)"
#endif
#define VL_STR2(x) #x
#define VL_STR(x) VL_STR2(x)
#define VL_OP(op) VL_OP2(VL_NAME, op)
#define VL_OP2(n, op) VL_OP3(n, op)
#define VL_OP3(n, op) n##_##op
/* BPF_PROG pastes its name: expand VL_OP first. */
#define VL_PROG(op, args...) VL_PROG2(VL_OP(op), args)
#define VL_PROG2(name, args...) BPF_PROG(name, args)

/* Parameters, set by the loader before the object is loaded. */
const volatile __u32 vl_alpha = VL_ALPHA;
const volatile __u32 vl_beta = VL_BETA;
const volatile __u32 vl_gamma = VL_GAMMA;
const volatile __u32 vl_inc = VL_INC;
const volatile __u32 vl_equal_throughput = 0; /* 0: "increase" (line 02), 1: "hold" (line 06) */
const volatile __u32 vl_at_beta = 0;          /* 0: "between" (lines 01-09), 1: "hold" (24-25) */

#if VL_RULE == VL_RULE_ROVEGAS
/* The AQT stamps, shared with aqt_sockops.bpf.c (same definition, pinned by name). */
VL_AQT_STAMPS_MAP;

/* Observability (read by vegaslab.kernel.rovegas_counters), over every socket since
 * registration: RTT samples taken, and how many of them came with a fresh AQT stamp; the
 * smallest RTT sample, the smallest baseRTT candidate a stamped sample gave (its RTT minus its
 * stamps) and the largest stamped queueing time (AQT + AQT-echo), all in µs, 0 while there was
 * none. A candidate well below the smallest sample minus the propagation delay's share means
 * stamps that claimed more queueing than the sample held, which lowers baseRTT for good. Written
 * without atomics: a race between sockets can lose an update, never make one up. */
__u64 vl_ro_samples = 0;
__u64 vl_ro_stamped = 0;
__u64 vl_ro_min_rtt_us = 0;
__u64 vl_ro_min_candidate_us = 0;
__u64 vl_ro_max_queueing_us = 0;
#endif

static __always_inline struct vl_state *vl_priv(struct sock *sk)
{
	return (struct vl_state *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline void vl_params_of(struct vl_params *p)
{
	p->rule = VL_RULE;
	p->alpha = vl_alpha;
	p->beta = vl_beta;
	p->gamma = vl_gamma;
	p->inc = vl_inc;
	p->equal_throughput = vl_equal_throughput;
	p->at_beta = vl_at_beta;
}

/* What every hook starts from: the parameters and the socket's window. */
static __always_inline void vl_begin(struct sock *sk, struct vl_params *p, struct vl_win *w)
{
	vl_params_of(p);
	vl_win_from_sock(sk, w);
}

static __always_inline void vl_win_back(struct sock *sk, const struct vl_win *w)
{
	vl_win_to_sock(sk, w);
}

SEC("struct_ops")
void VL_PROG(init, struct sock *sk)
{
	struct vl_params p;
	struct vl_win w;

	vl_begin(sk, &p, &w);
	vl_init(vl_priv(sk), &p, &w);
#if VL_RULE == VL_RULE_ROVEGAS
	{
		/* Stamps parsed before this point (the handshake) are not this controller's. */
		struct vl_aqt_stamp *st = bpf_sk_storage_get(&VL_AQT_MAP_NAME, sk, 0, 0);

		vl_priv(sk)->ro_stamp_seen = st ? st->count : 0;
	}
#endif
	vl_win_back(sk, &w);
}

SEC("struct_ops")
void VL_PROG(pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vl_params p;
	struct vl_win w;

	vl_begin(sk, &p, &w);
#if VL_RULE == VL_RULE_ROVEGAS
	{
		struct vl_state *s = vl_priv(sk);
		struct vl_aqt_stamp *st = bpf_sk_storage_get(&VL_AQT_MAP_NAME, sk, 0, 0);
		__u32 qb = 0, qf = 0, count;
		int fresh = 0;

		if (st) {
			count = st->count;
			qb = st->rx_aqt;  /* AQT: the ACK's own (backward) queueing */
			qf = st->rx_echo; /* AQT-echo: the data's (forward) queueing */
			fresh = count != s->ro_stamp_seen;
			s->ro_stamp_seen = count;
		}
		if (sample->rtt_us >= 0) {
			__u64 rtt = (__u64)sample->rtt_us;

			__sync_fetch_and_add(&vl_ro_samples, 1);
			if (vl_ro_min_rtt_us == 0 || rtt < vl_ro_min_rtt_us)
				vl_ro_min_rtt_us = rtt;
			if (fresh) {
				__u64 q = (__u64)qb + qf;
				__u64 cand = q < rtt ? rtt - q : 0;

				__sync_fetch_and_add(&vl_ro_stamped, 1);
				if (vl_ro_min_candidate_us == 0 || cand < vl_ro_min_candidate_us)
					vl_ro_min_candidate_us = cand;
				if (q > vl_ro_max_queueing_us)
					vl_ro_max_queueing_us = q;
			}
		}
		vl_pkts_acked_q(s, &p, &w, sample->rtt_us, fresh, qb, qf);
	}
#else
	vl_pkts_acked(vl_priv(sk), &p, &w, sample->rtt_us);
#endif
	vl_win_back(sk, &w);
}

SEC("struct_ops")
void VL_PROG(cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct vl_params p;
	struct vl_win w;

	vl_begin(sk, &p, &w);
	vl_cong_avoid(vl_priv(sk), &p, &w, ack, acked);
	vl_win_back(sk, &w);
}

SEC("struct_ops")
__u32 VL_PROG(ssthresh, struct sock *sk)
{
	struct vl_params p;
	struct vl_win w;

	vl_begin(sk, &p, &w);
	return vl_ssthresh(vl_priv(sk), &p, &w);
}

SEC("struct_ops")
void VL_PROG(set_state, struct sock *sk, __u8 new_state)
{
	struct vl_params p;
	struct vl_win w;

	vl_begin(sk, &p, &w);
	vl_set_state(vl_priv(sk), &p, &w, new_state == TCP_CA_Open);
	vl_win_back(sk, &w);
}

SEC("struct_ops")
void VL_PROG(cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct vl_params p;
	struct vl_win w;

	if (ev != CA_EVENT_TX_START && ev != CA_EVENT_CWND_RESTART)
		return;
	vl_begin(sk, &p, &w);
	vl_tx_start(vl_priv(sk), &p, &w);
	vl_win_back(sk, &w);
}

/* tcp_reno_undo_cwnd: the window before the (spurious) reduction, if larger. */
SEC("struct_ops")
__u32 VL_PROG(undo_cwnd, struct sock *sk)
{
	struct vl_params p;
	struct vl_win w;

	vl_begin(sk, &p, &w);
	return vl_undo_cwnd(&w);
}

SEC(".struct_ops")
struct tcp_congestion_ops VL_NAME = {
	.init = (void *)VL_OP(init),
	.pkts_acked = (void *)VL_OP(pkts_acked),
	.cong_avoid = (void *)VL_OP(cong_avoid),
	.ssthresh = (void *)VL_OP(ssthresh),
	.set_state = (void *)VL_OP(set_state),
	.cwnd_event = (void *)VL_OP(cwnd_event),
	.undo_cwnd = (void *)VL_OP(undo_cwnd),
	.name = VL_STR(VL_NAME),
};
