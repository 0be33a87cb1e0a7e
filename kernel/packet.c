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

/*
 * Writes the extension headers of @t that @op carries, after the BTH, in
 * wire order (the order of their VROCE_HDR_* bits, as vroce_hdr_offset()
 * counts them).
 */
static void vroce_pack_ext(const struct vroce_opcode_info *op,
			   const struct vroce_txpkt *t, u8 *bth)
{
	unsigned int hdrs = op->hdrs;
	u8 *p = bth + VROCE_BTH_LEN;

	if (hdrs & VROCE_HDR_DETH) {
		vroce_deth_pack(&t->deth, p, VROCE_DETH_LEN);
		p += VROCE_DETH_LEN;
	}
	if (hdrs & VROCE_HDR_XRCETH) {
		vroce_xrceth_pack(t->xrcsrq, p, VROCE_XRCETH_LEN);
		p += VROCE_XRCETH_LEN;
	}
	if (hdrs & VROCE_HDR_RETH) {
		vroce_reth_pack(&t->reth, p, VROCE_RETH_LEN);
		p += VROCE_RETH_LEN;
	}
	if (hdrs & VROCE_HDR_ATMETH) {
		vroce_atmeth_pack(&t->atmeth, p, VROCE_ATMETH_LEN);
		p += VROCE_ATMETH_LEN;
	}
	if (hdrs & VROCE_HDR_AETH) {
		vroce_aeth_pack(&t->aeth, p, VROCE_AETH_LEN);
		p += VROCE_AETH_LEN;
	}
	if (hdrs & VROCE_HDR_ATMACK) {
		vroce_atmack_pack(&t->atmack, p, VROCE_ATMACK_LEN);
		p += VROCE_ATMACK_LEN;
	}
	if (hdrs & VROCE_HDR_IMMDT) {
		memcpy(p, &t->imm, VROCE_IMMDT_LEN);
		p += VROCE_IMMDT_LEN;
	}
	if (hdrs & VROCE_HDR_IETH)
		vroce_ieth_pack(t->ieth, p, VROCE_IETH_LEN);
	/* A CNP's reserved bytes (last) stay as zeroed. */
}

/*
 * Writes the BTH and extension headers of @t to @buf (op->hdr_len bytes,
 * at most VROCE_HDR_MAX) and returns their length; 0 for an opcode we do
 * not know.
 */
u32 vroce_pkt_pack_hdr(const struct vroce_txpkt *t, u8 *buf)
{
	const struct vroce_opcode_info *op = vroce_opcode_info(t->opcode);
	struct vroce_bth bth = {
		.opcode = t->opcode,
		.se = t->se,
		.pad = vroce_pad_len(t->paylen),
		.pkey = VROCE_DEFAULT_PKEY,
		.dqpn = t->dqpn & VROCE_QPN_MASK,
		.ackreq = t->ackreq,
		.psn = t->psn & VROCE_PSN_MASK,
	};

	if (WARN_ON_ONCE(!op || op->hdr_len > VROCE_HDR_MAX))
		return 0;
	/*
	 * A head is not zeroed when it is allocated (txbuf.c): a field a pack
	 * function refuses, or reserved bytes no one packs, must not carry
	 * what the buffer held.
	 */
	memset(buf, 0, op->hdr_len);
	vroce_bth_pack(&bth, buf, VROCE_BTH_LEN);
	vroce_pack_ext(op, t, buf);
	return op->hdr_len;
}

/*
 * An skb with the headers of @t, packed in place, and @room bytes of
 * linear space after.
 */
static struct sk_buff *vroce_pkt_alloc(const struct vroce_txpkt *t, u32 room,
				       gfp_t gfp)
{
	struct sk_buff *skb;
	u32 len;

	if (vroce_fail_packet())
		return NULL;
	skb = vroce_skb_alloc(VROCE_HEADROOM + VROCE_HDR_MAX + room +
			      VROCE_ICRC_LEN, gfp);
	if (!skb)
		return NULL;
	skb_reserve(skb, VROCE_HEADROOM);
	len = vroce_pkt_pack_hdr(t, skb_tail_pointer(skb));
	if (!len) {
		kfree_skb(skb);
		return NULL;
	}
	skb_put(skb, len);
	VROCE_SKB_PAYLEN(skb) = t->paylen;
	return skb;
}

struct sk_buff *vroce_pkt_build(const struct vroce_txpkt *t, u8 **payload,
				gfp_t gfp)
{
	u32 pad = vroce_pad_len(t->paylen);
	struct sk_buff *skb;

	skb = vroce_pkt_alloc(t, t->paylen + pad, gfp);
	if (!skb)
		return NULL;
	*payload = skb_put(skb, t->paylen + pad);
	memset(*payload + t->paylen, 0, pad);
	return skb;
}

/*
 * Zero-copy payloads: the pages of the MR are attached to the skb as
 * fragments (each holding a page reference), and the pad and the ICRC
 * slot follow in a last small fragment. The ICRC is computed over the
 * fragments when the packet is sent (vroce_skb_icrc()).
 */
struct vroce_frags {
	struct sk_buff *skb;
	unsigned int n;
};

/* Fragments of the payload; one more is kept for the pad and ICRC. */
#define VROCE_PAYLOAD_FRAGS	(MAX_SKB_FRAGS - 1)

static int vroce_count_piece(void *ctx, struct page *page, u32 off, u32 n)
{
	struct vroce_frags *f = ctx;

	return ++f->n > VROCE_PAYLOAD_FRAGS ? -E2BIG : 0;
}

static void vroce_skb_add_frag(struct sk_buff *skb, struct page *page,
			       u32 off, u32 n)
{
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page, off, n);
	skb->len += n;
	skb->data_len += n;
	skb->truesize += n;
}

static int vroce_add_piece(void *ctx, struct page *page, u32 off, u32 n)
{
	struct vroce_frags *f = ctx;

	/*
	 * Counted in an earlier RCU section: an FRMR registered again since
	 * may be cut into more pieces now; never past the array.
	 */
	if (skb_shinfo(f->skb)->nr_frags >= VROCE_PAYLOAD_FRAGS)
		return -E2BIG;
	get_page(page);
	vroce_skb_add_frag(f->skb, page, off, n);
	return 0;
}

/* The zeroed pad and ICRC slot, in a fragment of their own. */
static int vroce_skb_add_tail(struct sk_buff *skb, u32 pad)
{
	u32 n = pad + VROCE_ICRC_LEN;
	struct page *page;
	u8 *p;

	p = netdev_alloc_frag(SMP_CACHE_BYTES);
	if (!p)
		return -ENOMEM;
	memset(p, 0, n);
	page = virt_to_head_page(p);
	vroce_skb_add_frag(skb, page, p - (u8 *)page_address(page), n);
	return 0;
}

/* Where a payload comes from: an SGL from an offset, or an MR range. */
struct vroce_src {
	struct vroce_sgl *sgl;
	struct vroce_mr *mr;
	u32 key;		/* of @mr's registration that was checked */
	u64 pos;
};

static int vroce_src_pages(const struct vroce_src *src, u32 len,
			   int (*fn)(void *ctx, struct page *page, u32 off,
				     u32 n),
			   void *ctx)
{
	if (src->sgl)
		return vroce_sgl_pages(src->sgl, src->pos, len, fn, ctx);
	return vroce_mr_pages(src->mr, src->key, src->pos, len, fn, ctx);
}

/*
 * Whether @src reads an FRMR or an ODP MR, whose pages must not go out as
 * fragments: an FRMR's pages are the ULP's again once an invalidation
 * completes, an ODP MR's the process's once the MMU notifier returned,
 * while a fragment would still point at them.
 */
static bool vroce_src_pages_go(const struct vroce_src *src)
{
	struct vroce_mr *mr;
	u32 i;

	if (!src->sgl)
		return src->mr->frmr || src->mr->odp;
	for (i = 0; i < src->sgl->n; i++) {
		mr = src->sgl->mrs[i];
		if (mr && (mr->frmr || mr->odp))
			return true;
	}
	return false;
}

/*
 * A packet whose payload comes from @src: in fragments if its pages
 * allow it (not a DMA MR or an FRMR, not too many pieces) and the netdev
 * takes fragments, else copied.
 */
static struct sk_buff *vroce_pkt_build_src(const struct vroce_txpkt *t,
					   const struct vroce_src *src)
{
	bool linear = t->linear || vroce_src_pages_go(src);
	struct vroce_frags f = {};
	struct sk_buff *skb;
	int err = 0;
	u8 *p;

	/*
	 * A deregistered (revoked) MR sends nothing: -EACCES, no packet. (An
	 * ODP MR, whose page may not be mapped, is always copied.)
	 */
	if (t->paylen && !linear)
		err = vroce_src_pages(src, t->paylen, vroce_count_piece, &f);
	if (err == -EACCES)
		return NULL;
	if (!t->paylen || linear || err) {
		skb = vroce_pkt_build(t, &p, GFP_ATOMIC);
		if (skb && src->sgl)
			err = vroce_sgl_read(src->sgl, src->pos, p, t->paylen);
		else if (skb && t->paylen)
			err = vroce_mr_copy(src->mr, src->key, src->pos, p,
					    t->paylen, false);
		if (skb && err) {
			kfree_skb(skb);
			return NULL;
		}
		return skb;
	}
	skb = vroce_pkt_alloc(t, 0, GFP_ATOMIC);
	if (!skb)
		return NULL;
	f.skb = skb;
	if (vroce_src_pages(src, t->paylen, vroce_add_piece, &f) ||
	    vroce_skb_add_tail(skb, vroce_pad_len(t->paylen))) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

struct sk_buff *vroce_pkt_build_sgl(const struct vroce_txpkt *t,
				    struct vroce_sgl *sgl, u32 off)
{
	struct vroce_src src = { .sgl = sgl, .pos = off };

	return vroce_pkt_build_src(t, &src);
}

struct sk_buff *vroce_pkt_build_mr(const struct vroce_txpkt *t,
				   struct vroce_mr *mr, u32 key, u64 iova)
{
	struct vroce_src src = { .mr = mr, .key = key, .pos = iova };

	return vroce_pkt_build_src(t, &src);
}

/*
 * Computes and writes the ICRC of a packet whose payload is in fragments
 * (skb->data at the IP header, the headers linear, the ICRC slot at the
 * end of the last fragment).
 */
int vroce_skb_icrc(struct sk_buff *skb)
{
	unsigned int i, nr = skb_shinfo(skb)->nr_frags;
	const skb_frag_t *frag;
	u32 crc, len;
	u8 *p;
	int off;

	off = vroce_icrc_begin(&crc, skb->data, skb_headlen(skb));
	if (off < 0 || !nr)
		return -EINVAL;
	crc = vroce_icrc_update(crc, skb->data + off, skb_headlen(skb) - off);
	for (i = 0; i < nr; i++) {
		frag = &skb_shinfo(skb)->frags[i];
		len = skb_frag_size(frag);
		p = skb_frag_address(frag);
		if (i == nr - 1) {
			if (len < VROCE_ICRC_LEN)
				return -EINVAL;
			len -= VROCE_ICRC_LEN;
		}
		crc = vroce_icrc_update(crc, p, len);
		if (i == nr - 1)
			vroce_icrc_put(p + len, vroce_icrc_final(crc));
	}
	return 0;
}

void vroce_qp_count_tx(struct vroce_qp *qp, const struct sk_buff *skb)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);

	vroce_count(vdev, VROCE_CNT_TX_PACKETS, 1);
	vroce_count(vdev, VROCE_CNT_TX_BYTES, VROCE_SKB_PAYLEN(skb));
}

/* Sends the packets of @q in order, stretches of them as batches. */
void vroce_qp_xmit_queue(struct vroce_qp *qp, struct sk_buff_head *q)
{
	struct sk_buff *skb;
	struct vroce_path p;

	if (skb_queue_empty(q))
		return;
	skb_queue_walk(q, skb)
		vroce_qp_count_tx(qp, skb);
	vroce_qp_path(qp, &p);
	vroce_xmit_list(to_vdev(qp->ibqp.device), q, &p);
}
