/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aqt.h: RoVegas' AQT option on this project's kernels, shared by kernel/aqt_sockops.bpf.c
 * (the TCP ends), kernel/aqt_tc.bpf.c (the router's clock) and vl_rovegas (vegaslab.bpf.c).
 *
 * Why a TCP option and not the paper's IP option
 * -----------------------------------------------
 * The RoVegas paper (Chan et al., "Design and performance evaluation of an improved TCP
 * congestion avoidance scheme", section 3, Fig. 1) defines AQT as an IP option. A Linux end cannot
 * add an IP option per packet from BPF, and the TCP stack ignores unknown IP options, but
 * BPF sock_ops has header-option callbacks (BPF_SOCK_OPS_HDR_OPT_LEN_CB, WRITE_HDR_OPT_CB,
 * PARSE_HDR_OPT_CB) that write and read a TCP option on every segment. So AQT is an RFC 6994
 * experimental TCP option:
 *
 *     byte 0      kind 253 (experimental; 254 is taken by Linux's TFO magic 0xF989 parsing)
 *     byte 1      length 12
 *     bytes 2-3   ExID 0x564C ("VL", not IANA-registered: a lab-only identifier)
 *     bytes 4-7   AQT, µs, network order: accumulated queueing time of this segment
 *     bytes 8-11  AQT-echo, µs, network order: the AQT of the last segment received from the peer
 *
 * 12 bytes, the simulator's RoVegas `option_bytes` default, a multiple of 4 (no padding). Both
 * ends write it on every segment after the handshake (probe_every = 1, the simulator's
 * default): AQT = 0 and AQT-echo = the AQT field of the last option received. So on the data
 * sender, a received ACK's AQT is the backward queueing time (the ACK's own path) and its
 * AQT-echo the forward queueing time (of the data segment the receiver last got).
 *
 * The router's measurement (aqt_tc.bpf.c): tc clsact egress on a router interface runs BEFORE
 * the qdisc, so it cannot see the wait. It subtracts now (µs, CLOCK_MONOTONIC, mod 2^32) from
 * AQT; a tc ingress program on the next hop's interface (another namespace, the same kernel
 * clock) adds now back. AQT thus grows by the time between the two: the qdisc wait plus the
 * serialisation at the shaped rate plus the veth crossing (a few µs). Both programs are needed
 * on every instrumented hop; a segment that passes only one of them carries garbage.
 *
 * What this kernel does with it (checked on 6.18)
 * -------------------------------------------------
 *   - Every segment carries it: TCP hands GSO super-packets to the stack even with GSO off on
 *     the device; WRITE_HDR_OPT_CB runs once per super-packet and software segmentation
 *     copies the header, option included, into every packet (same echo in all of them).
 *   - The kernel counts the 12 bytes as header: the MSS shrinks by 12, full packets stay
 *     1514 bytes on the wire.
 *   - Option space is 40 bytes: timestamps take 12 and SACK is written first, so an ACK with
 *     two or more SACK blocks (loss recovery) has no room and carries no AQT; its sample
 *     reaches RoVegas without queueing times (a plain Vegas sample, as the rule allows).
 *   - An incoming unknown option forces tcp_rcv_established's slow path (header length !=
 *     the predicted one), where tcp_validate_incoming() ends with the parse callback and
 *     tcp_ack() (hence pkts_acked) follows: the congestion control sees the same ACK's stamp.
 *   - bpf_sk_storage_get is callable from struct_ops tcp_congestion_ops programs.
 *   - sock_ops needs a cgroup v2: the program runs for sockets created by processes in the
 *     cgroup it is attached to; an accepted socket inherits its listener's cgroup.
 *
 * The sender's view reaches the congestion control through a socket-local storage map (this
 * header's struct vl_aqt_stamp) pinned at VL_AQT_PIN_DIR/VL_AQT_MAP_NAME, which the sock_ops
 * object and every vl_rovegas object reuse (libbpf LIBBPF_PIN_BY_NAME with that pin root).
 */
#ifndef VEGASLAB_AQT_H
#define VEGASLAB_AQT_H

#define VL_AQT_KIND 253
#define VL_AQT_LEN 12
#define VL_AQT_EXID 0x564C
/* Offset of the AQT field inside the option (the echo follows it at 8). */
#define VL_AQT_OFF_AQT 4

/* The pinned storage map shared by the sock_ops object and vl_rovegas. */
#define VL_AQT_PIN_DIR "/sys/fs/bpf/vegaslab"
#define VL_AQT_MAP_NAME vl_aqt_stamps

/* Per socket: the last AQT option received, and how many were received (the freshness
 * counter: the congestion control uses a stamp once, when count moved since it last looked). */
struct vl_aqt_stamp {
	__u32 rx_aqt;   /* AQT field: queueing of the peer's segments on their way here, µs */
	__u32 rx_echo;  /* AQT-echo: queueing of this end's segments on their way there, µs */
	__u32 count;    /* options parsed on this socket (wraps) */
	__u32 written;  /* options written on this socket (observability) */
};

/*
 * The stamps map, for BPF objects only (vegaslab.bpf.c's vl_rovegas and aqt_sockops.bpf.c
 * each write VL_AQT_STAMPS_MAP; one definition, so that the two pinned-by-name maps match).
 */
#define VL_AQT_STAMPS_MAP                                   \
	struct {                                            \
		__uint(type, BPF_MAP_TYPE_SK_STORAGE);      \
		__uint(map_flags, BPF_F_NO_PREALLOC);       \
		__type(key, int);                           \
		__type(value, struct vl_aqt_stamp);         \
		__uint(pinning, LIBBPF_PIN_BY_NAME);        \
	} VL_AQT_MAP_NAME SEC(".maps")

#endif /* VEGASLAB_AQT_H */
