// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * IPv4/IPv6 + UDP header parsing for RoCEv2; see ipudp.h.
 */

#include "ipudp.h"
#include "be.h"

#define IPV4_FRAG_MASK	0x3fff	/* MF flag and fragment offset */

static int parse_ipv4(struct vroce_ipudp *out, const vr_u8 *p, vr_size len,
		      vr_u32 *dgram_len)
{
	vr_u32 hlen, tot_len;

	if (len < VROCE_IPV4_HDR_LEN)
		return VROCE_ESHORT;
	hlen = (p[0] & 0xf) * 4u;
	tot_len = vroce_get_be16(p + 2);
	if (hlen < VROCE_IPV4_HDR_LEN || tot_len < hlen)
		return VROCE_EINVAL;
	if (hlen > len)
		return VROCE_ESHORT;
	if (p[9] != VROCE_IPPROTO_UDP ||
	    (vroce_get_be16(p + 6) & IPV4_FRAG_MASK))
		return VROCE_EPROTO;

	out->ipver = 4;
	out->tclass = p[1];
	out->ip_hlen = (vr_u16)hlen;
	*dgram_len = tot_len;
	return 0;
}

static int parse_ipv6(struct vroce_ipudp *out, const vr_u8 *p, vr_size len,
		      vr_u32 *dgram_len)
{
	vr_u32 tot_len;

	if (len < VROCE_IPV6_HDR_LEN)
		return VROCE_ESHORT;
	tot_len = VROCE_IPV6_HDR_LEN + vroce_get_be16(p + 4);
	if (p[6] != VROCE_IPPROTO_UDP)
		return VROCE_EPROTO;

	out->ipver = 6;
	out->tclass = (vr_u8)((p[0] & 0xf) << 4 | p[1] >> 4);
	out->ip_hlen = VROCE_IPV6_HDR_LEN;
	*dgram_len = tot_len;
	return 0;
}

int vroce_ipudp_parse(struct vroce_ipudp *out, const void *ip, vr_size len)
{
	const vr_u8 *p = ip;
	const vr_u8 *udp;
	vr_u32 dgram_len, hlen, udp_len;
	int ret;

	if (len < 1)
		return VROCE_ESHORT;
	switch (p[0] >> 4) {
	case 4:
		ret = parse_ipv4(out, p, len, &dgram_len);
		break;
	case 6:
		ret = parse_ipv6(out, p, len, &dgram_len);
		break;
	default:
		return VROCE_EINVAL;
	}
	if (ret)
		return ret;

	/*
	 * The UDP header within the datagram, and the UDP datagram within
	 * len. Not the whole IP datagram: the UDP stack trims a packet to
	 * its UDP length, so the IP header may count bytes that are gone.
	 */
	hlen = out->ip_hlen;
	if (dgram_len < hlen + VROCE_UDP_HDR_LEN)
		return VROCE_EINVAL;
	if (len < hlen + VROCE_UDP_HDR_LEN)
		return VROCE_ESHORT;
	udp = p + hlen;
	udp_len = vroce_get_be16(udp + 4);
	if (udp_len < VROCE_UDP_HDR_LEN || udp_len > dgram_len - hlen)
		return VROCE_EINVAL;
	if (udp_len > len - hlen)
		return VROCE_ESHORT;

	out->sport = vroce_get_be16(udp);
	out->dport = vroce_get_be16(udp + 2);
	out->udp_len = (vr_u16)udp_len;
	return hlen + VROCE_UDP_HDR_LEN;
}

vr_u16 vroce_udp_sport(vr_u32 qpn)
{
	/* Multiplicative (Fibonacci) hash; keep the top 14 bits. */
	vr_u32 h = (qpn & 0xffffffu) * 0x61c88647u;

	return (vr_u16)(VROCE_UDP_SPORT_MIN | h >> 18);
}
