// SPDX-License-Identifier: GPL-2.0
/*
 * aqt_tc: an AQT-enabled hop for RoVegas' AQT option (layout and design: aqt.h), as two tc
 * clsact programs (one object each, built from this file twice: see its end):
 *
 *   vl_aqt_egress   on the router's interface, egress: AQT -= now_us (mod 2^32)
 *   vl_aqt_ingress  on the next hop's interface (its peer veth), ingress: AQT += now_us
 *
 * tc egress runs before the qdisc, so the difference is the time from there to the next
 * hop's ingress: qdisc wait, serialisation at the shaped rate and the veth crossing. now_us is
 * bpf_ktime_get_ns() / 1000 truncated to 32 bits; the kernel clock is one for all namespaces
 * and the mod-2^32 arithmetic cancels the wrap. The TCP checksum is fixed incrementally
 * (bpf_l4_csum_replace). Only IPv4/TCP segments carrying the option (kind 253, length 12,
 * ExID 0x564C) are touched; every packet passes (TC_ACT_OK).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "aqt.h"

char _license[] SEC("license") = "GPL";

#define ETH_HLEN_ 14
#define ETH_P_IP_ 0x0800
#define IPPROTO_TCP_ 6
#define TC_ACT_OK_ 0
/* The TCP options area is at most 40 bytes; each option is >= 1 byte, but NOPs come in
 * pairs at most in Linux's layouts, so 24 steps cover every segment the ends write. */
#define MAX_OPT_STEPS 24

/* The offset of the AQT field in skb, or -1 when the segment carries no AQT option. */
static __always_inline int aqt_field_offset(struct __sk_buff *skb, __u32 *csum_off)
{
	__u16 proto;
	__u8 vihl, ipproto, doff_byte;
	__u32 ihl, l4, doff, off, end;
	int i;

	if (bpf_skb_load_bytes(skb, 12, &proto, 2) || proto != bpf_htons(ETH_P_IP_))
		return -1;
	if (bpf_skb_load_bytes(skb, ETH_HLEN_, &vihl, 1) || bpf_skb_load_bytes(skb, ETH_HLEN_ + 9, &ipproto, 1))
		return -1;
	if (ipproto != IPPROTO_TCP_)
		return -1;
	ihl = (vihl & 0x0f) * 4;
	if (ihl < 20)
		return -1;
	l4 = ETH_HLEN_ + ihl;
	if (bpf_skb_load_bytes(skb, l4 + 12, &doff_byte, 1))
		return -1;
	doff = (doff_byte >> 4) * 4;
	if (doff <= 20)
		return -1;
	off = l4 + 20;
	end = l4 + doff;
	for (i = 0; i < MAX_OPT_STEPS; i++) {
		__u8 kl[4];

		if (off >= end)
			return -1;
		if (bpf_skb_load_bytes(skb, off, kl, 1))
			return -1;
		if (kl[0] == 0) /* end of options */
			return -1;
		if (kl[0] == 1) { /* NOP */
			off += 1;
			continue;
		}
		if (off + 2 > end || bpf_skb_load_bytes(skb, off, kl, 2))
			return -1;
		if (kl[1] < 2)
			return -1;
		if (kl[0] == VL_AQT_KIND && kl[1] == VL_AQT_LEN && off + VL_AQT_LEN <= end) {
			if (bpf_skb_load_bytes(skb, off, kl, 4))
				return -1;
			if (kl[2] == (VL_AQT_EXID >> 8) && kl[3] == (VL_AQT_EXID & 0xff)) {
				*csum_off = l4 + 16;
				return (int)(off + VL_AQT_OFF_AQT);
			}
		}
		off += kl[1];
	}
	return -1;
}

static __always_inline int aqt_shift(struct __sk_buff *skb, int add)
{
	__u32 csum_off = 0, now_us, old_be, new_be, v;
	int off = aqt_field_offset(skb, &csum_off);

	if (off < 0)
		return TC_ACT_OK_;
	if (bpf_skb_load_bytes(skb, off, &old_be, 4))
		return TC_ACT_OK_;
	now_us = (__u32)(bpf_ktime_get_ns() / 1000);
	v = bpf_ntohl(old_be);
	v = add ? v + now_us : v - now_us;
	new_be = bpf_htonl(v);
	if (bpf_skb_store_bytes(skb, off, &new_be, 4, 0))
		return TC_ACT_OK_;
	bpf_l4_csum_replace(skb, csum_off, old_be, new_be, 4);
	return TC_ACT_OK_;
}

/* One program per object (tc attaches an object's program by section): the Makefile builds
 * build/vl_aqt_egress.bpf.o (-DVL_AQT_INGRESS=0) and build/vl_aqt_ingress.bpf.o (=1). */
#ifndef VL_AQT_INGRESS
#error "build with -DVL_AQT_INGRESS=0 (egress) or 1 (ingress): kernel/Makefile"
#endif
#if VL_AQT_INGRESS
SEC("tc")
int vl_aqt_ingress(struct __sk_buff *skb)
{
	return aqt_shift(skb, 1);
}
#else
SEC("tc")
int vl_aqt_egress(struct __sk_buff *skb)
{
	return aqt_shift(skb, 0);
}
#endif
