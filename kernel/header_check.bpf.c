// SPDX-License-Identifier: GPL-2.0
/*
 * A check that vegaslab_cc.h is BPF-friendly (make -C kernel header-check), independent of the
 * real program (kernel/vegaslab.bpf.c). The header is included after vmlinux.h, as the real
 * program does, and every hook calls the header with parameters read from a writable global
 * (.bss/.data, not .rodata): neither clang nor the verifier can prove any rule or branch dead,
 * so all four rules are compiled and, if loaded, all of them are verified.
 *
 * `make header-check` only compiles. `make header-verify` (root, BTF, bpftool) also loads it
 * through the verifier by registering it as the congestion control "vl_hdr_check" and
 * unregistering it at once; nothing uses it in between.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "vegaslab_cc.h"

char _license[] SEC("license") = "GPL";

/* Writable, so unknown to the verifier: every rule and option stays reachable. */
struct vl_params hc_params = { .rule = VL_RULE_CLASSIC, .alpha = 2, .beta = 4, .gamma = 1, .inc = 1 };

static __always_inline struct vl_state *hc_priv(struct sock *sk)
{
	return (struct vl_state *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

SEC("struct_ops")
void BPF_PROG(hc_init, struct sock *sk)
{
	struct vl_params p = hc_params;
	struct vl_win w;

	vl_win_from_sock(sk, &w);
	vl_init(hc_priv(sk), &p, &w);
	vl_win_to_sock(sk, &w);
}

SEC("struct_ops")
void BPF_PROG(hc_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vl_params p = hc_params;
	struct vl_win w;

	vl_win_from_sock(sk, &w);
	vl_pkts_acked(hc_priv(sk), &p, &w, sample->rtt_us);
	vl_win_to_sock(sk, &w);
}

SEC("struct_ops")
void BPF_PROG(hc_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct vl_params p = hc_params;
	struct vl_win w;

	vl_win_from_sock(sk, &w);
	vl_cong_avoid(hc_priv(sk), &p, &w, ack, acked);
	vl_win_to_sock(sk, &w);
}

SEC("struct_ops")
__u32 BPF_PROG(hc_ssthresh, struct sock *sk)
{
	struct vl_params p = hc_params;
	struct vl_win w;

	vl_win_from_sock(sk, &w);
	return vl_ssthresh(hc_priv(sk), &p, &w);
}

SEC("struct_ops")
void BPF_PROG(hc_set_state, struct sock *sk, __u8 new_state)
{
	struct vl_params p = hc_params;
	struct vl_win w;

	vl_win_from_sock(sk, &w);
	vl_set_state(hc_priv(sk), &p, &w, new_state == TCP_CA_Open);
	vl_win_to_sock(sk, &w);
}

SEC("struct_ops")
void BPF_PROG(hc_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct vl_params p = hc_params;
	struct vl_win w;

	if (ev != CA_EVENT_TX_START)
		return;
	vl_win_from_sock(sk, &w);
	vl_tx_start(hc_priv(sk), &p, &w);
	vl_win_to_sock(sk, &w);
}

SEC("struct_ops")
__u32 BPF_PROG(hc_undo_cwnd, struct sock *sk)
{
	struct vl_win w;

	vl_win_from_sock(sk, &w);
	return vl_undo_cwnd(&w);
}

SEC(".struct_ops")
struct tcp_congestion_ops vl_hdr_check = {
	.init = (void *)hc_init,
	.pkts_acked = (void *)hc_pkts_acked,
	.cong_avoid = (void *)hc_cong_avoid,
	.ssthresh = (void *)hc_ssthresh,
	.set_state = (void *)hc_set_state,
	.cwnd_event = (void *)hc_cwnd_event,
	.undo_cwnd = (void *)hc_undo_cwnd,
	.name = "vl_hdr_check",
};
