// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * Pack and parse of the transport headers; layouts are in hdr.h.
 */

#include "hdr.h"
#include "be.h"

#define BTH_SE		0x80	/* byte 1 */
#define BTH_MIG		0x40
#define BTH_PAD_SHIFT	4
#define BTH_PAD_MASK	0x3
#define BTH_TVER_MASK	0xf
#define BTH_FECN	0x80	/* byte 4 */
#define BTH_BECN	0x40
#define BTH_ACKREQ	0x80	/* byte 8 */

int vroce_bth_pack(const struct vroce_bth *h, void *buf, vr_size len)
{
	vr_u8 *p = buf;

	if (len < VROCE_BTH_LEN)
		return VROCE_ENOSPC;
	if (h->pad > BTH_PAD_MASK || h->tver > BTH_TVER_MASK ||
	    h->dqpn > VROCE_QPN_MASK || h->psn > VROCE_QPN_MASK)
		return VROCE_EINVAL;

	p[0] = h->opcode;
	p[1] = (h->se ? BTH_SE : 0) | (h->mig ? BTH_MIG : 0) |
	       h->pad << BTH_PAD_SHIFT | h->tver;
	vroce_put_be16(p + 2, h->pkey);
	p[4] = (h->fecn ? BTH_FECN : 0) | (h->becn ? BTH_BECN : 0);
	vroce_put_be24(p + 5, h->dqpn);
	p[8] = h->ackreq ? BTH_ACKREQ : 0;
	vroce_put_be24(p + 9, h->psn);
	return VROCE_BTH_LEN;
}

int vroce_bth_parse(struct vroce_bth *h, const void *buf, vr_size len)
{
	const vr_u8 *p = buf;

	if (len < VROCE_BTH_LEN)
		return VROCE_ESHORT;

	h->opcode = p[0];
	h->se = p[1] & BTH_SE;
	h->mig = p[1] & BTH_MIG;
	h->pad = (p[1] >> BTH_PAD_SHIFT) & BTH_PAD_MASK;
	h->tver = p[1] & BTH_TVER_MASK;
	h->pkey = vroce_get_be16(p + 2);
	h->fecn = p[4] & BTH_FECN;
	h->becn = p[4] & BTH_BECN;
	h->dqpn = vroce_get_be24(p + 5);
	h->ackreq = p[8] & BTH_ACKREQ;
	h->psn = vroce_get_be24(p + 9);
	return VROCE_BTH_LEN;
}

int vroce_reth_pack(const struct vroce_reth *h, void *buf, vr_size len)
{
	vr_u8 *p = buf;

	if (len < VROCE_RETH_LEN)
		return VROCE_ENOSPC;

	vroce_put_be64(p, h->va);
	vroce_put_be32(p + 8, h->rkey);
	vroce_put_be32(p + 12, h->dma_len);
	return VROCE_RETH_LEN;
}

int vroce_reth_parse(struct vroce_reth *h, const void *buf, vr_size len)
{
	const vr_u8 *p = buf;

	if (len < VROCE_RETH_LEN)
		return VROCE_ESHORT;

	h->va = vroce_get_be64(p);
	h->rkey = vroce_get_be32(p + 8);
	h->dma_len = vroce_get_be32(p + 12);
	return VROCE_RETH_LEN;
}

int vroce_aeth_pack(const struct vroce_aeth *h, void *buf, vr_size len)
{
	vr_u8 *p = buf;

	if (len < VROCE_AETH_LEN)
		return VROCE_ENOSPC;
	if (h->msn > VROCE_MSN_MASK)
		return VROCE_EINVAL;

	p[0] = h->syndrome;
	vroce_put_be24(p + 1, h->msn);
	return VROCE_AETH_LEN;
}

int vroce_aeth_parse(struct vroce_aeth *h, const void *buf, vr_size len)
{
	const vr_u8 *p = buf;

	if (len < VROCE_AETH_LEN)
		return VROCE_ESHORT;

	h->syndrome = p[0];
	h->msn = vroce_get_be24(p + 1);
	return VROCE_AETH_LEN;
}

int vroce_atmeth_pack(const struct vroce_atmeth *h, void *buf, vr_size len)
{
	vr_u8 *p = buf;

	if (len < VROCE_ATMETH_LEN)
		return VROCE_ENOSPC;

	vroce_put_be64(p, h->va);
	vroce_put_be32(p + 8, h->rkey);
	vroce_put_be64(p + 12, h->swap_add);
	vroce_put_be64(p + 20, h->compare);
	return VROCE_ATMETH_LEN;
}

int vroce_atmeth_parse(struct vroce_atmeth *h, const void *buf, vr_size len)
{
	const vr_u8 *p = buf;

	if (len < VROCE_ATMETH_LEN)
		return VROCE_ESHORT;

	h->va = vroce_get_be64(p);
	h->rkey = vroce_get_be32(p + 8);
	h->swap_add = vroce_get_be64(p + 12);
	h->compare = vroce_get_be64(p + 20);
	return VROCE_ATMETH_LEN;
}

int vroce_atmack_pack(const struct vroce_atmack *h, void *buf, vr_size len)
{
	if (len < VROCE_ATMACK_LEN)
		return VROCE_ENOSPC;

	vroce_put_be64(buf, h->orig);
	return VROCE_ATMACK_LEN;
}

int vroce_atmack_parse(struct vroce_atmack *h, const void *buf, vr_size len)
{
	if (len < VROCE_ATMACK_LEN)
		return VROCE_ESHORT;

	h->orig = vroce_get_be64(buf);
	return VROCE_ATMACK_LEN;
}

int vroce_deth_pack(const struct vroce_deth *h, void *buf, vr_size len)
{
	vr_u8 *p = buf;

	if (len < VROCE_DETH_LEN)
		return VROCE_ENOSPC;
	if (h->sqpn > VROCE_QPN_MASK)
		return VROCE_EINVAL;

	vroce_put_be32(p, h->qkey);
	p[4] = 0;
	vroce_put_be24(p + 5, h->sqpn);
	return VROCE_DETH_LEN;
}

int vroce_deth_parse(struct vroce_deth *h, const void *buf, vr_size len)
{
	const vr_u8 *p = buf;

	if (len < VROCE_DETH_LEN)
		return VROCE_ESHORT;

	h->qkey = vroce_get_be32(p);
	h->sqpn = vroce_get_be24(p + 5);
	return VROCE_DETH_LEN;
}

/* ImmDt and IETH: one 32-bit word each. */
static int put_word(vr_u32 v, void *buf, vr_size len)
{
	if (len < 4)
		return VROCE_ENOSPC;

	vroce_put_be32(buf, v);
	return 4;
}

static int get_word(vr_u32 *v, const void *buf, vr_size len)
{
	if (len < 4)
		return VROCE_ESHORT;

	*v = vroce_get_be32(buf);
	return 4;
}

int vroce_immdt_pack(vr_u32 imm, void *buf, vr_size len)
{
	return put_word(imm, buf, len);
}

int vroce_immdt_parse(vr_u32 *imm, const void *buf, vr_size len)
{
	return get_word(imm, buf, len);
}

int vroce_ieth_pack(vr_u32 rkey, void *buf, vr_size len)
{
	return put_word(rkey, buf, len);
}

int vroce_ieth_parse(vr_u32 *rkey, const void *buf, vr_size len)
{
	return get_word(rkey, buf, len);
}

int vroce_xrceth_pack(vr_u32 srqn, void *buf, vr_size len)
{
	if (srqn & ~VROCE_QPN_MASK)
		return VROCE_EINVAL;
	return put_word(srqn, buf, len);
}

int vroce_xrceth_parse(vr_u32 *srqn, const void *buf, vr_size len)
{
	vr_u32 v;
	int ret = get_word(&v, buf, len);

	if (ret >= 0)
		*srqn = v & VROCE_QPN_MASK;
	return ret;
}
