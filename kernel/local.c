// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Packets between QPs of this device (two processes, or two containers,
 * on one host), never built: an RC SEND or RDMA WRITE packet whose
 * destination is a GID of this device goes from the requester straight to
 * the receive path as its headers and the spans of the sender's MRs that
 * hold its payload, and the responder copies the payload from those MRs
 * into its own: MR to MR, with no skb, no UDP or IP header and no ICRC.
 * Everything from the BTH on is the same as for a packet off the wire:
 * the headers are packed and parsed by the same code, the responder and
 * the completer run their usual checks (PSN, R_Key, bounds, access), and
 * the counters count the packet. Other local packets (acknowledgements,
 * READ requests and responses, atomics, UC, inline data) are built and
 * delivered as skbs (net.c), and so are payloads of more than
 * VROCE_LOCAL_PIECES pieces or from an FRMR (sgl.c).
 *
 * Copyright (c) 2026 the vroce developers
 */
#include "vroce.h"
#include "core/roce.h"

/*
 * Whether a packet of connected QP @qp, with its payload in the SGL (not
 * @inline_data), goes to its local destination unbuilt. RC only: its
 * WQE, and so the SGL, lives until the packet is acknowledged; a UC WQE
 * completes when sent.
 */
bool vroce_local_wanted(const struct vroce_qp *qp, bool inline_data)
{
	return qp->path.loopback && qp->ibqp.qp_type == IB_QPT_RC &&
	       !inline_data;
}

/*
 * Fills @lp with the headers of @t and the spans of bytes [@off, @off +
 * t->paylen) of @sgl, holding their MRs. 0; -EACCES if an MR of the span
 * was deregistered (nothing goes out); -E2BIG if the payload has too many
 * pieces (the caller builds an skb instead); -EFAULT if @sgl is shorter
 * (never, with the lengths checked).
 */
int vroce_local_prepare(struct vroce_local_pkt *lp,
			const struct vroce_txpkt *t, struct vroce_sgl *sgl,
			u32 off)
{
	int n;

	lp->hdr_len = vroce_pkt_pack_hdr(t, lp->hdr);
	if (!lp->hdr_len)
		return -EINVAL;
	lp->paylen = t->paylen;
	n = vroce_sgl_hold_span(sgl, off, t->paylen, lp);
	return n < 0 ? n : 0;
}

/*
 * Bytes [@pos, @pos + @len) of the payload of @lp into @buf. An MR the
 * sender deregistered while its packet was on the way (IBTA leaves that
 * undefined) reads as zeros: never anything else.
 */
void vroce_local_read(const struct vroce_local_pkt *lp, u32 pos, void *buf,
		      u32 len)
{
	const struct vroce_local_piece *pc;
	u32 i, m;

	for (i = 0; i < lp->n && len; i++) {
		pc = &lp->piece[i];
		if (pos >= pc->len) {
			pos -= pc->len;
			continue;
		}
		m = min(len, pc->len - pos);
		vroce_mr_copy(pc->mr, pc->key, pc->iova + pos, buf, m, false);
		buf += m;
		len -= m;
		pos = 0;
	}
	/* Never reached for a packet the receive path checked: its length. */
	memset(buf, 0, len);
}

/*
 * Delivers @lp, a packet of @qp (state_lock held: its path does not
 * change), to its local destination, after what the send engine queued
 * before it, and lets go of its MRs.
 */
void vroce_local_xmit(struct vroce_qp *qp, struct vroce_local_pkt *lp)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);

	vroce_qp_xmit_flush(qp);
	vroce_count(vdev, VROCE_CNT_TX_PACKETS, 1);
	vroce_count(vdev, VROCE_CNT_TX_BYTES, lp->paylen);
	vroce_count(vdev, VROCE_CNT_TX_LOCAL, 1);
	vroce_rx_local_pkt(vdev, &qp->path, lp);
	while (lp->n)
		vroce_mr_put(lp->piece[--lp->n].mr);
}
