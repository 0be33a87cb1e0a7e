/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * The IP/UDP encapsulation of RoCEv2 (IBTA annex A17): locating the
 * transport packet inside an IPv4 or IPv6 datagram, and choosing the UDP
 * source port.
 */
#ifndef VROCE_CORE_IPUDP_H
#define VROCE_CORE_IPUDP_H

#include "types.h"

#define VROCE_UDP_PORT		4791	/* RoCEv2 destination port */
#define VROCE_IPV4_HDR_LEN	20	/* without options */
#define VROCE_IPV6_HDR_LEN	40
#define VROCE_UDP_HDR_LEN	8
#define VROCE_IPPROTO_UDP	17

#define VROCE_UDP_SPORT_MIN	0xc000	/* RoCEv2 source ports: 0xc000.. */

/* What vroce_ipudp_parse() found. */
struct vroce_ipudp {
	vr_u8 ipver;		/* 4 or 6 */
	vr_u8 tclass;		/* IPv4 TOS or IPv6 traffic class: DSCP, ECN */
	vr_u16 ip_hlen;		/* IP header bytes, IPv4 options included */
	vr_u16 sport;
	vr_u16 dport;
	vr_u16 udp_len;		/* UDP length field: 8 + UDP payload */
};

/*
 * Parse the IPv4 or IPv6 header at @ip and the UDP header after it.
 * @len is the number of bytes readable at @ip. The UDP datagram (as its
 * UDP length counts it) must fit in @len and in the IP datagram (as its
 * IP header counts it); trailing bytes, such as Ethernet padding, are
 * ignored. The IP datagram itself need not fit in @len: the kernel's UDP
 * stack trims a packet to its UDP length and leaves the IP header as it
 * came, so the bytes past the UDP datagram may be gone.
 *
 * Returns the offset of the UDP payload (the BTH) from @ip; its length is
 * out->udp_len - 8. Fails with VROCE_ESHORT on truncated input,
 * VROCE_EINVAL on inconsistent lengths, and VROCE_EPROTO for IP fragments,
 * IPv6 extension headers (UDP must follow the fixed header) and anything
 * that is not UDP. The UDP ports are reported, not checked.
 */
int vroce_ipudp_parse(struct vroce_ipudp *out, const void *ip, vr_size len);

/*
 * UDP source port for a QP: a hash of @qpn spread over 0xc000..0xffff, so
 * that ECMP routers keep each QP on one path and spread QPs across paths.
 * Deterministic: both ends of a connection can recompute it.
 */
vr_u16 vroce_udp_sport(vr_u32 qpn);

#endif /* VROCE_CORE_IPUDP_H */
