// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * RoCEv2 ICRC: masking and ordering; the CRC itself comes from
 * vroce_crc32(). See icrc.h.
 */

#include "icrc.h"
#include "hdr.h"
#include "ipudp.h"

#define LRH_LEN		8	/* the masked LRH: all ones */
#define IPV4_MAX_HLEN	60

/* Byte offsets of the masked fields. */
#define IPV4_TOS	1
#define IPV4_TTL	8
#define IPV4_CSUM	10
#define IPV6_HLIM	7
#define UDP_CSUM	6
#define BTH_RESV8A	4

/* Masked LRH, then IP, UDP and BTH headers: the most steps 1-4 cover. */
#define MASKED_MAX	(LRH_LEN + IPV4_MAX_HLEN + VROCE_UDP_HDR_LEN + \
			 VROCE_BTH_LEN)

/* IP header length at @p, or an error; @len bytes are readable. */
static int ip_hdr_len(const vr_u8 *p, vr_size len)
{
	vr_u32 hlen;

	if (len < 1)
		return VROCE_ESHORT;
	switch (p[0] >> 4) {
	case 4:
		if (len < VROCE_IPV4_HDR_LEN)
			return VROCE_ESHORT;
		hlen = (p[0] & 0xf) * 4u;
		if (hlen < VROCE_IPV4_HDR_LEN)
			return VROCE_EINVAL;
		if (p[9] != VROCE_IPPROTO_UDP)
			return VROCE_EPROTO;
		return (int)hlen;
	case 6:
		if (len < VROCE_IPV6_HDR_LEN)
			return VROCE_ESHORT;
		if (p[6] != VROCE_IPPROTO_UDP)
			return VROCE_EPROTO;
		return VROCE_IPV6_HDR_LEN;
	default:
		return VROCE_EINVAL;
	}
}

/* Set the variant fields of the IP header copy at @ip to all ones. */
static void mask_ip(vr_u8 *ip)
{
	if (ip[0] >> 4 == 4) {
		ip[IPV4_TOS] = 0xff;
		ip[IPV4_TTL] = 0xff;
		ip[IPV4_CSUM] = 0xff;
		ip[IPV4_CSUM + 1] = 0xff;
	} else {
		/* version:4 traffic class:8 flow label:20 */
		ip[0] |= 0x0f;
		ip[1] = 0xff;
		ip[2] = 0xff;
		ip[3] = 0xff;
		ip[IPV6_HLIM] = 0xff;
	}
}

int vroce_icrc_begin(vr_u32 *crc, const void *ip, vr_size len)
{
	vr_u8 buf[MASKED_MAX];
	vr_u8 *udp, *bth;
	vr_size n;
	int hlen;

	hlen = ip_hdr_len(ip, len);
	if (hlen < 0)
		return hlen;
	n = (vr_size)hlen + VROCE_UDP_HDR_LEN + VROCE_BTH_LEN;
	if (len < n)
		return VROCE_ESHORT;

	__builtin_memset(buf, 0xff, LRH_LEN);
	__builtin_memcpy(buf + LRH_LEN, ip, n);
	mask_ip(buf + LRH_LEN);
	udp = buf + LRH_LEN + hlen;
	udp[UDP_CSUM] = 0xff;
	udp[UDP_CSUM + 1] = 0xff;
	bth = udp + VROCE_UDP_HDR_LEN;
	bth[BTH_RESV8A] = 0xff;

	*crc = vroce_crc32(VROCE_ICRC_SEED, buf, LRH_LEN + n);
	return (int)n;
}

int vroce_icrc_compute(vr_u32 *icrc, const void *ip, vr_size len)
{
	struct vroce_ipudp iu;
	vr_u32 crc, end;
	int off;

	off = vroce_ipudp_parse(&iu, ip, len);
	if (off < 0)
		return off;
	if (iu.udp_len < VROCE_UDP_HDR_LEN + VROCE_BTH_LEN + VROCE_ICRC_LEN)
		return VROCE_ESHORT;
	end = iu.ip_hlen + iu.udp_len - VROCE_ICRC_LEN;

	off = vroce_icrc_begin(&crc, ip, len);
	if (off < 0)
		return off;
	crc = vroce_icrc_update(crc, (const vr_u8 *)ip + off, end - off);
	*icrc = vroce_icrc_final(crc);
	return (int)end;
}

int vroce_icrc_generate(void *ip, vr_size len)
{
	vr_u32 icrc;
	int off;

	off = vroce_icrc_compute(&icrc, ip, len);
	if (off < 0)
		return off;
	vroce_icrc_put((vr_u8 *)ip + off, icrc);
	return off;
}

int vroce_icrc_verify(const void *ip, vr_size len)
{
	vr_u32 icrc;
	int off;

	off = vroce_icrc_compute(&icrc, ip, len);
	if (off < 0)
		return off;
	if (vroce_icrc_get((const vr_u8 *)ip + off) != icrc)
		return VROCE_EBADCRC;
	return 0;
}
