// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * Whole-packet parse; see pkt.h.
 */

#include "pkt.h"

int vroce_pkt_parse(struct vroce_pkt *pkt, const void *buf, vr_size len)
{
	const struct vroce_opcode_info *op;
	struct vroce_bth bth;
	vr_size body;
	int ret;

	ret = vroce_bth_parse(&bth, buf, len);
	if (ret < 0)
		return ret;
	op = vroce_opcode_info(bth.opcode);
	if (!op || bth.tver != 0)
		return VROCE_EPROTO;
	if (len < (vr_size)op->hdr_len + VROCE_ICRC_LEN)
		return VROCE_ESHORT;
	if (len & 3 || len > 0xffff)
		return VROCE_EINVAL;

	body = len - op->hdr_len - VROCE_ICRC_LEN;
	if (bth.pad > body)
		return VROCE_EINVAL;
	if (!(op->flags & VROCE_OPF_PAYLOAD) && body != 0)
		return VROCE_EINVAL;

	pkt->op = op;
	pkt->bth = bth;
	pkt->len = (vr_u32)len;
	pkt->hdr_len = op->hdr_len;
	pkt->paylen = (vr_u32)(body - bth.pad);
	return 0;
}

const void *vroce_pkt_hdr(const struct vroce_pkt *pkt, const void *buf,
			  unsigned int hdr)
{
	unsigned int off = vroce_hdr_offset(pkt->op, hdr);

	return off ? (const vr_u8 *)buf + off : VR_NULL;
}
