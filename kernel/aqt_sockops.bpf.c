// SPDX-License-Identifier: GPL-2.0
/*
 * aqt_sockops: the TCP ends of RoVegas' AQT option (layout and design: aqt.h). A cgroup
 * sock_ops program: every TCP socket created by a process in the cgroup it is attached to
 * (and the sockets accepted from such a listener) writes the option on every segment after
 * the handshake and parses the peer's.
 *
 *   ESTABLISHED (active or passive)  turn on the write and parse-unknown-option callbacks
 *   HDR_OPT_LEN_CB                   reserve 12 bytes (the kernel takes them off the MSS)
 *   WRITE_HDR_OPT_CB                 AQT = 0, AQT-echo = the AQT last received
 *   PARSE_HDR_OPT_CB                 store (AQT, AQT-echo) in vl_aqt_stamps, count + 1
 *
 * The parse callback runs from tcp_validate_incoming() (the slow path of
 * tcp_rcv_established), which a segment with an unknown option always takes because its
 * header length differs from the predicted one; that is before tcp_ack(), so a congestion
 * control's pkts_acked for the same ACK already sees the ACK's stamp.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "aqt.h"

char _license[] SEC("license") = "GPL";

VL_AQT_STAMPS_MAP;

struct vl_aqt_opt {
	__u8 kind, len;
	__be16 exid;
	__be32 aqt, echo;
} __attribute__((packed));

SEC("sockops")
int vl_aqt_sockops(struct bpf_sock_ops *skops)
{
	struct vl_aqt_stamp *st;
	struct vl_aqt_opt opt = {};
	struct bpf_sock *sk;

	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
						 BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG |
						 BPF_SOCK_OPS_PARSE_UNKNOWN_HDR_OPT_CB_FLAG);
		return 1;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		bpf_reserve_hdr_opt(skops, VL_AQT_LEN, 0);
		return 1;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		sk = skops->sk;
		if (!sk)
			return 1;
		st = bpf_sk_storage_get(&VL_AQT_MAP_NAME, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		opt.kind = VL_AQT_KIND;
		opt.len = VL_AQT_LEN;
		opt.exid = bpf_htons(VL_AQT_EXID);
		opt.aqt = 0;
		opt.echo = st ? bpf_htonl(st->rx_aqt) : 0;
		if (bpf_store_hdr_opt(skops, &opt, sizeof(opt), 0) == 0 && st)
			st->written++;
		return 1;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		sk = skops->sk;
		if (!sk)
			return 1;
		opt.kind = VL_AQT_KIND;
		opt.len = 4; /* search by kind and the 2-byte ExID (bpf_load_hdr_opt's docs) */
		opt.exid = bpf_htons(VL_AQT_EXID);
		if (bpf_load_hdr_opt(skops, &opt, sizeof(opt), 0) != VL_AQT_LEN)
			return 1;
		st = bpf_sk_storage_get(&VL_AQT_MAP_NAME, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!st)
			return 1;
		st->rx_aqt = bpf_ntohl(opt.aqt);
		st->rx_echo = bpf_ntohl(opt.echo);
		st->count++;
		return 1;
	}
	return 1;
}
