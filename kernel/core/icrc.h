/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * Invariant CRC of RoCEv2 packets (IBTA vol 1 annex A17, "ICRC").
 *
 * The ICRC is CRC-32 (see crc32.h; seeded with all ones, inverted at the
 * end) over, in order:
 *
 *   1. 8 bytes of 0xff standing for the (absent) masked IB LRH;
 *   2. the IP header with the fields routers change set to all ones:
 *        IPv4: TOS (DSCP and ECN), TTL, header checksum;
 *        IPv6: traffic class, flow label, hop limit;
 *   3. the UDP header with its checksum set to 0xffff;
 *   4. the BTH with byte 4 (FECN, BECN, 6 reserved bits: "resv8a", the
 *      byte just before DestQP) set to 0xff;
 *   5. the rest of the packet: extension headers, payload and pad, up to
 *      but not including the ICRC itself.
 *
 * The 4-byte ICRC follows the pad and is sent least significant byte
 * first (little-endian), unlike every other field.
 *
 * Every other IP/UDP field is covered as is, so the IP total/payload
 * length, the IPv4 identification and the UDP length must hold their
 * final values before the ICRC is computed. IPv4 options (whole header,
 * per its IHL) are covered; IPv6 extension headers are not supported.
 *
 * Two ways to use this:
 *
 * Contiguous packet, from the IP header to the end of the ICRC:
 *   vroce_icrc_compute(), vroce_icrc_generate(), vroce_icrc_verify().
 *
 * Headers and payload apart (e.g. payload in page fragments):
 *
 *   vr_u32 crc;
 *   int off = vroce_icrc_begin(&crc, iph, hdr_bytes);   masked part
 *   crc = vroce_icrc_update(crc, iph + off, hdr_len - VROCE_BTH_LEN);
 *   for each payload fragment:
 *           crc = vroce_icrc_update(crc, frag, frag_len);
 *   crc = vroce_icrc_update(crc, pad_bytes, pad);
 *   vroce_icrc_put(icrc_slot, vroce_icrc_final(crc));    (or compare with
 *                                                  vroce_icrc_get())
 *
 * where vroce_icrc_begin() returns the offset just after the BTH, and any
 * split of step 5 into update calls gives the same result.
 */
#ifndef VROCE_CORE_ICRC_H
#define VROCE_CORE_ICRC_H

#include "types.h"
#include "crc32.h"

#define VROCE_ICRC_SEED		0xffffffffu

/*
 * Begin an ICRC: run the CRC over steps 1 to 4 above. @ip points at the IP
 * header; @len bytes must be readable there, at least up to the end of the
 * BTH. Only the headers are read: the payload may live elsewhere.
 *
 * Stores the CRC register in @crc and returns the offset from @ip of the
 * first byte after the BTH, where vroce_icrc_update() continues. Fails with
 * VROCE_ESHORT if @len does not hold IP, UDP and BTH headers, VROCE_EINVAL
 * on a bad IP version or header length, VROCE_EPROTO if UDP does not
 * directly follow the IP header.
 */
int vroce_icrc_begin(vr_u32 *crc, const void *ip, vr_size len);

/* Continue the ICRC register @crc over @len more bytes. */
static inline vr_u32 vroce_icrc_update(vr_u32 crc, const void *buf,
				       vr_size len)
{
	return vroce_crc32(crc, buf, len);
}

/* The ICRC value from the final register. */
static inline vr_u32 vroce_icrc_final(vr_u32 crc)
{
	return ~crc;
}

/* Read an ICRC value from the wire (little-endian). */
static inline vr_u32 vroce_icrc_get(const void *buf)
{
	const vr_u8 *p = buf;

	return (vr_u32)p[0] | (vr_u32)p[1] << 8 |
	       (vr_u32)p[2] << 16 | (vr_u32)p[3] << 24;
}

/* Write an ICRC value to the wire (little-endian). */
static inline void vroce_icrc_put(void *buf, vr_u32 icrc)
{
	vr_u8 *p = buf;

	p[0] = (vr_u8)icrc;
	p[1] = (vr_u8)(icrc >> 8);
	p[2] = (vr_u8)(icrc >> 16);
	p[3] = (vr_u8)(icrc >> 24);
}

/*
 * Contiguous packets. @ip points at the IP header; @len bytes are readable
 * there. The packet ends where its UDP length says (trailing bytes, e.g.
 * Ethernet padding, are ignored) and its last 4 bytes are the ICRC slot.
 * Fail as vroce_ipudp_parse() does, or with VROCE_ESHORT when the UDP
 * payload is shorter than a BTH plus an ICRC.
 *
 * vroce_icrc_compute()  stores in @icrc the ICRC the packet should carry;
 *                       returns the offset of the ICRC slot from @ip.
 * vroce_icrc_generate() computes and writes it into the slot; same return.
 * vroce_icrc_verify()   returns 0 if the slot holds the right ICRC,
 *                       VROCE_EBADCRC if not.
 */
int vroce_icrc_compute(vr_u32 *icrc, const void *ip, vr_size len);
int vroce_icrc_generate(void *ip, vr_size len);
int vroce_icrc_verify(const void *ip, vr_size len);

#endif /* VROCE_CORE_ICRC_H */
