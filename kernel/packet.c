// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Building outgoing packets: an skb with the BTH and the extension headers
 * its opcode carries, room for the payload and zeroed pad bytes; and the
 * transmit of a connected QP's packet along its path, with counting.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/skbuff.h>

#include "vroce.h"
#include "core/roce.h"

/* Writes the extension headers of @t that @op carries, after the BTH. */
static void vroce_pack_ext(const struct vroce_opcode_info *op,
			   const struct vroce_txpkt *t, u8 *bth)
{
	unsigned int off;

	off = vroce_hdr_offset(op, VROCE_HDR_DETH);
	if (off)
		vroce_deth_pack(&t->deth, bth + off, VROCE_DETH_LEN);
	off = vroce_hdr_offset(op, VROCE_HDR_RETH);
	if (off)
		vroce_reth_pack(&t->reth, bth + off, VROCE_RETH_LEN);
	off = vroce_hdr_offset(op, VROCE_HDR_ATMETH);
	if (off)
		vroce_atmeth_pack(&t->atmeth, bth + off, VROCE_ATMETH_LEN);
	off = vroce_hdr_offset(op, VROCE_HDR_AETH);
	if (off)
		vroce_aeth_pack(&t->aeth, bth + off, VROCE_AETH_LEN);
	off = vroce_hdr_offset(op, VROCE_HDR_ATMACK);
	if (off)
		vroce_atmack_pack(&t->atmack, bth + off, VROCE_ATMACK_LEN);
	off = vroce_hdr_offset(op, VROCE_HDR_IMMDT);
	if (off)
		memcpy(bth + off, &t->imm, VROCE_IMMDT_LEN);
	off = vroce_hdr_offset(op, VROCE_HDR_IETH);
	if (off)
		vroce_ieth_pack(t->ieth, bth + off, VROCE_IETH_LEN);
}

struct sk_buff *vroce_pkt_build(const struct vroce_txpkt *t, u8 **payload,
				gfp_t gfp)
{
	const struct vroce_opcode_info *op = vroce_opcode_info(t->opcode);
	u32 pad = vroce_pad_len(t->paylen);
	struct vroce_bth bth = {
		.opcode = t->opcode,
		.se = t->se,
		.pad = pad,
		.pkey = VROCE_DEFAULT_PKEY,
		.dqpn = t->dqpn & VROCE_QPN_MASK,
		.ackreq = t->ackreq,
		.psn = t->psn & VROCE_PSN_MASK,
	};
	struct sk_buff *skb;
	u8 *p;

	if (WARN_ON_ONCE(!op))
		return NULL;
	skb = alloc_skb(VROCE_HEADROOM + op->hdr_len + t->paylen + pad +
			VROCE_ICRC_LEN, gfp);
	if (!skb)
		return NULL;
	skb_reserve(skb, VROCE_HEADROOM);
	p = skb_put(skb, op->hdr_len + t->paylen + pad);
	vroce_bth_pack(&bth, p, VROCE_BTH_LEN);
	vroce_pack_ext(op, t, p);
	memset(p + op->hdr_len + t->paylen, 0, pad);
	*payload = p + op->hdr_len;
	VROCE_SKB_PAYLEN(skb) = t->paylen;
	return skb;
}

void vroce_qp_xmit(struct vroce_qp *qp, struct sk_buff *skb)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);

	vroce_count(vdev, VROCE_CNT_TX_PACKETS, 1);
	vroce_count(vdev, VROCE_CNT_TX_BYTES, VROCE_SKB_PAYLEN(skb));
	vroce_net_xmit(vdev, skb, &qp->path);
}

void vroce_qp_xmit_queue(struct vroce_qp *qp, struct sk_buff_head *q)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(q)))
		vroce_qp_xmit(qp, skb);
}
