// SPDX-License-Identifier: MIT
/*
 * struct_ops congestion controls the simulator's BPF loader is tested with: one object per
 * VARIANT_* macro (kernel/Makefile, target test-objects, writes build/test-objects/<variant>.bpf.o).
 *
 *   PLAIN   Reno from Linux's kfuncs, a .bss call counter and a division by a register
 *   EMPTY   only init: lacks the hooks Linux requires (ssthresh, cong_avoid, undo_cwnd)
 *   OOB     cong_avoid writes far past the socket
 *   LOOP    cong_avoid loops forever
 *   HELPER  cong_avoid calls bpf_get_prandom_u32, a helper the simulator does not provide
 *   FIELD   cong_avoid reads tcp_sock.rcv_wnd, a field the simulator does not offer
 *   ATOMIC  cong_avoid counts with __sync_fetch_and_add (a BPF atomic)
 *   HOOK    defines in_ack_event, a hook the simulator does not call
 *   KFUNC   calls cubictcp_cong_avoid, a kfunc the simulator does not provide
 *   MAP     refers to a BPF map (section .maps), which the simulator does not provide
 *   BIGDATA two zeroed arrays in sections of their own, each under the simulator's bound on an
 *           object's data and together over it (a .bss takes no bytes in the file)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "Dual MIT/GPL";

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern void cubictcp_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;

#ifdef VARIANT_MAP
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hostile_map SEC(".maps");
#endif

/* Calls of cong_avoid, per object in Linux; per controller in the simulator. */
__u64 hostile_calls = 0;

#ifdef VARIANT_BIGDATA
__u8 hostile_big_a[700 * 1024] SEC(".bss.big_a");
__u8 hostile_big_b[700 * 1024] SEC(".bss.big_b");
#endif

SEC("struct_ops")
void BPF_PROG(hostile_init, struct sock *sk)
{
}

#ifndef VARIANT_EMPTY
static __always_inline __attribute__((unused)) struct tcp_sock *tcp(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

SEC("struct_ops")
__u32 BPF_PROG(hostile_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(hostile_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops")
void BPF_PROG(hostile_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
#if defined(VARIANT_OOB)
	volatile __u64 *p = (volatile __u64 *)((char *)sk + 4096 + (acked & 0xff));

	*p = 42;
#elif defined(VARIANT_LOOP)
	volatile __u32 i = 0;

	while (i < ack)
		i += 0;
	tcp(sk)->snd_cwnd = i;
#elif defined(VARIANT_HELPER)
	tcp(sk)->snd_cwnd += bpf_get_prandom_u32() & 1;
#elif defined(VARIANT_FIELD)
	tcp(sk)->snd_cwnd += tcp(sk)->rcv_wnd & 1;
#elif defined(VARIANT_ATOMIC)
	__sync_fetch_and_add(&hostile_calls, 1);
#elif defined(VARIANT_KFUNC)
	cubictcp_cong_avoid(sk, ack, acked);
#elif defined(VARIANT_MAP)
	tcp(sk)->snd_cwnd = (__u32)(unsigned long)&hostile_map;
#else
	hostile_calls++;
	if (acked > 1) {
		/* Linux: x / 0 = 0 and x % 0 = x; ack is 0 when the simulator acknowledges
		 * sequence number -1. */
		tcp(sk)->snd_ssthresh = tcp(sk)->snd_cwnd / ack;
		tcp(sk)->snd_cwnd = tcp(sk)->snd_cwnd % ack + (__u32)hostile_calls;
		return;
	}
	tcp_reno_cong_avoid(sk, ack, acked);
#endif
}
#endif

#ifdef VARIANT_HOOK
SEC("struct_ops")
void BPF_PROG(hostile_in_ack_event, struct sock *sk, __u32 flags)
{
}
#endif

SEC(".struct_ops")
struct tcp_congestion_ops hostile = {
	.init = (void *)hostile_init,
#ifndef VARIANT_EMPTY
	.ssthresh = (void *)hostile_ssthresh,
	.cong_avoid = (void *)hostile_cong_avoid,
	.undo_cwnd = (void *)hostile_undo_cwnd,
#endif
#ifdef VARIANT_HOOK
	.in_ack_event = (void *)hostile_in_ack_event,
#endif
	.name = "hostile",
};
