/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * A whole transport packet: the BTH, the extension headers its opcode
 * implies, the payload, the pad bytes and the ICRC.
 *
 *   | BTH | ext headers | payload | pad (0..3) | ICRC |
 *   \----- hdr_len -----/
 */
#ifndef VROCE_CORE_PKT_H
#define VROCE_CORE_PKT_H

#include "types.h"
#include "hdr.h"
#include "opcode.h"

struct vroce_pkt {
	const struct vroce_opcode_info *op;
	struct vroce_bth bth;
	vr_u32 len;		/* BTH to the end of the ICRC */
	vr_u32 hdr_len;		/* BTH plus extension headers */
	vr_u32 paylen;		/* payload bytes, pad excluded */
};

/*
 * Parse and sanity check the packet of @len bytes at @buf (the UDP
 * payload; the ICRC is not checked here, see icrc.h). On success fills
 * @pkt and returns 0. Fails with:
 *   VROCE_ESHORT  shorter than its headers plus the ICRC;
 *   VROCE_EPROTO  unknown opcode or a transport version other than 0;
 *   VROCE_EINVAL  length not a multiple of 4 (or over 64 KiB), pad longer
 *                 than the data after the headers, or payload on an
 *                 opcode that carries none.
 */
int vroce_pkt_parse(struct vroce_pkt *pkt, const void *buf, vr_size len);

/* Pointer to extension header @hdr (enum vroce_hdr), VR_NULL if absent. */
const void *vroce_pkt_hdr(const struct vroce_pkt *pkt, const void *buf,
			  unsigned int hdr);

/* Number of pad bytes that make @paylen a multiple of 4. */
static inline unsigned int vroce_pad_len(vr_u32 paylen)
{
	return (0u - paylen) & 3;
}

#endif /* VROCE_CORE_PKT_H */
