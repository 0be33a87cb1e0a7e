// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester of RC and UC QPs: the send engine (tx.c) asks it for one
 * packet at a time. It copies each WQE out of the SQ ring once, checks
 * the copy (opcode, lengths, local keys) and keeps it until it completes;
 * the ring entry is handed back (cons) only then. Messages are cut into
 * path-MTU packets with the first/middle/last opcodes, PSNs assigned in
 * order. RC packets stay unacknowledged until the completer (comp.c) sees
 * them acknowledged; going back to resend is a rewind to the oldest
 * unacknowledged PSN. UC WQEs complete when their last packet is sent.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/skbuff.h>

#include "vroce.h"
#include "vroce_trace.h"
#include "core/roce.h"

/* What one step of the requester sends: an skb, or a packet left unbuilt. */
struct vroce_req_out {
	u32 psn;			/* of the packet's first PSN */
	struct sk_buff *skb;
	bool local;
	struct vroce_local_pkt lp;	/* if @local (local.c) */
};

static bool vroce_wr_is_write(u8 opcode)
{
	return opcode == IB_UVERBS_WR_RDMA_WRITE ||
	       opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
}

static bool vroce_wr_is_local(u8 opcode)
{
	return opcode == IB_UVERBS_WR_BIND_MW ||
	       opcode == IB_UVERBS_WR_LOCAL_INV || opcode == IB_WR_REG_MR;
}

static bool vroce_req_op_ok(struct vroce_qp *qp, u8 opcode)
{
	switch (opcode) {
	case IB_WR_REG_MR:
		return !qp->ibqp.uobject;	/* kernel FRWR only */
	case IB_UVERBS_WR_BIND_MW:
	case IB_UVERBS_WR_LOCAL_INV:
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return true;
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
	case VROCE_WR_ATOMIC_WRITE:
		return vroce_qp_reliable(qp);
	default:
		return false;
	}
}

int vroce_req_init(struct vroce_qp *qp)
{
	struct vroce_req *req = &qp->req;

	spin_lock_init(&req->lock);
	req->swq = kvcalloc(qp->sq.entries, sizeof(*req->swq),
			    GFP_KERNEL_ACCOUNT);
	req->wqes = kvcalloc(qp->sq.entries, qp->sq.stride, GFP_KERNEL_ACCOUNT);
	if (!req->swq || !req->wqes) {
		kvfree(req->swq);
		kvfree(req->wqes);
		return -ENOMEM;
	}
	vroce_comp_init(qp);
	return 0;
}

/* Lets go of the WQEs still held, without completions. */
static void vroce_req_drop_all(struct vroce_qp *qp)
{
	struct vroce_req *req = &qp->req;
	struct vroce_swqe *sw;

	for (; req->tail != req->head; req->tail++) {
		sw = vroce_swqe(qp, req->tail);
		vroce_sgl_release(&sw->sgl);
		sw->sgl.n = 0;
	}
	if (req->odp_mr)
		vroce_mr_put(req->odp_mr);
	req->odp_mr = NULL;
	req->odp_wait = false;
}

/*
 * Whether an ODP page under bytes [@skip, @skip + @len) of @sgl, the SGL
 * of WQE req->next, is not mapped: then the engine faults it in
 * (vroce_req_odp_fault()) before it builds the packet. Caller holds the
 * lock.
 */
static bool vroce_req_odp_wants(struct vroce_qp *qp, struct vroce_sgl *sgl,
				u32 skip, u32 len, u32 *at)
{
	struct vroce_req *req = &qp->req;

	if (!vroce_sgl_odp_missing(sgl, skip, len, &req->odp_mr,
				   &req->odp_iova, &req->odp_len, at))
		return false;
	req->odp_wait = true;
	req->odp_wqe = req->next;
	return true;
}

/*
 * Whether the ODP pages a READ's or atomic's answers land in are not all
 * mapped (then the engine faults them in first). Looks at each page once
 * per WQE: sw->odp_ok says how far they were found mapped (a page taken
 * since makes a response miss it, and the READ is asked again, from
 * read_off, with odp_ok back at 0: vroce_comp_read()).
 */
static bool vroce_req_odp_dest(struct vroce_qp *qp, struct vroce_swqe *sw)
{
	u32 from = max(sw->read_off, sw->odp_ok);
	u32 at;

	if (!sw->sgl.odp || from >= sw->len)
		return false;
	if (vroce_req_odp_wants(qp, &sw->sgl, from, sw->len - from, &at)) {
		sw->odp_ok = at;	/* mapped up to there */
		return true;
	}
	sw->odp_ok = sw->len;
	return false;
}

/*
 * In the engine's work item, which may sleep (caller holds the QP's
 * state_lock, not the requester's lock): faults in the ODP pages a WQE
 * waits for. True if it did; a page that cannot be mapped (or no memory
 * for it) fails the WQE with a local protection error, in order.
 */
bool vroce_req_odp_fault(struct vroce_qp *qp)
{
	struct vroce_req *req = &qp->req;
	struct vroce_mr *mr;
	u64 iova, len;
	int err;

	if (!READ_ONCE(req->odp_wait))
		return false;
	spin_lock_bh(&req->lock);
	mr = req->odp_mr;
	iova = req->odp_iova;
	/* The engine goes on as it maps: a fault takes 4 MiB at most. */
	len = min_t(u64, req->odp_len, VROCE_ODP_FAULT_MAX);
	req->odp_mr = NULL;
	spin_unlock_bh(&req->lock);
	err = mr ? vroce_odp_fault(mr, iova, len) : 0;
	spin_lock_bh(&req->lock);
	if (err && req->odp_wait && req->next == req->odp_wqe &&
	    req->next != req->head)
		vroce_swqe(qp, req->next)->status = IB_WC_LOC_PROT_ERR;
	req->odp_wait = false;
	spin_unlock_bh(&req->lock);
	if (mr)
		vroce_mr_put(mr);
	return true;
}

void vroce_req_destroy(struct vroce_qp *qp)
{
	vroce_comp_stop(qp);
	vroce_req_drop_all(qp);
	kvfree(qp->req.swq);
	kvfree(qp->req.wqes);
}

/* Entering RTS from RTR: the send PSN and the retry budgets. */
void vroce_req_start(struct vroce_qp *qp)
{
	struct vroce_req *req = &qp->req;

	spin_lock_bh(&req->lock);
	req->next_psn = qp->attrs.sq_psn;
	req->una = req->next_psn;
	req->psn_hi = req->next_psn;
	req->window = VROCE_WINDOW_MAX;
	req->since_ackreq = 0;
	req->rtt_on = false;
	req->timer_confirm = false;
	memset(&req->rtt, 0, sizeof(req->rtt));
	req->stream_until = 0;
	req->stream_ended = false;
	req->retries = qp->attrs.retry_cnt;
	req->rnr_retries = qp->attrs.rnr_retry;
	req->mtu = qp->resp.mtu;
	req->failed = 0;
	spin_unlock_bh(&req->lock);
}

/* Entering RESET: forget everything (the ring is discarded apart). */
void vroce_req_reset(struct vroce_qp *qp)
{
	struct vroce_req *req = &qp->req;

	vroce_comp_stop(qp);
	spin_lock_bh(&req->lock);
	vroce_req_drop_all(qp);
	/*
	 * Nothing is outstanding: a late response finds the requester idle
	 * and is dropped, and an engine run before RTS has nothing to wait
	 * for. RTS sets the PSNs anew (vroce_req_start()).
	 */
	req->una = req->next_psn;
	req->psn_hi = req->next_psn;
	/* cons is published from tail: go on from the ring's own index. */
	req->head = qp->sq.own;
	req->next = req->head;
	req->tail = req->head;
	req->next_off = 0;
	req->rd_out = 0;
	req->failed = 0;
	req->rnr_wait = false;
	req->nomem_wait = false;
	req->blocked = false;
	req->resynced = false;
	req->probe = false;
	spin_unlock_bh(&req->lock);
}

/* Hands ring entries back up to the oldest WQE not completed. */
static void vroce_req_publish(struct vroce_qp *qp)
{
	/* Our reads of the entries happen before the provider reuses them. */
	smp_store_release(&qp->sq.hdr->cons, qp->req.tail);
}

/*
 * Entering ERR: every WQE taken and not completed completes with a flush
 * error, in order; the caller flushes the ring after them.
 */
void vroce_req_flush(struct vroce_qp *qp)
{
	struct vroce_req *req = &qp->req;

	spin_lock_bh(&req->lock);
	if (!req->failed)
		req->failed = IB_WC_WR_FLUSH_ERR;
	del_timer(&req->retry_timer);
	del_timer(&req->rnr_timer);
	while (req->tail != req->head)
		vroce_req_complete(qp, IB_WC_WR_FLUSH_ERR);
	req->next = req->tail;
	spin_unlock_bh(&req->lock);
}

/*
 * Completes the oldest WQE with @status: a CQE if it asked for one or
 * failed, its MRs let go, its ring entry handed back. Caller holds the
 * lock.
 */
void vroce_req_complete(struct vroce_qp *qp, u8 status)
{
	struct vroce_req *req = &qp->req;
	struct vroce_swqe *sw = vroce_swqe(qp, req->tail);
	const struct vroce_send_wqe *w = vroce_swqe_wqe(qp, req->tail);
	struct vroce_cqe cqe = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = vroce_wc_opcode(w->opcode),
		.qp_num = qp->ibqp.qp_num,
	};
	bool signal = status != IB_WC_SUCCESS || qp->sq_sig_all ||
		      (w->flags & VROCE_WQE_SIGNALED);

	if (vroce_wr_is_rd_atomic(w->opcode)) {
		cqe.byte_len = sw->len;
		if ((s32)(req->tail - req->next) < 0 && req->rd_out)
			req->rd_out--;
	}
	vroce_sgl_release(&sw->sgl);
	sw->sgl.n = 0;
	sw->started = false;
	/*
	 * The ring entry goes back before the CQE appears: a consumer that
	 * polls it may post again at once into a ring of exactly its size.
	 */
	req->tail++;
	vroce_req_publish(qp);
	if (signal)
		vroce_cq_add(to_vcq(qp->ibqp.send_cq), &cqe, false);
}

/*
 * Stops the requester after a fatal error of the oldest WQE: it completes
 * with @status and the QP moves to ERR, which flushes the rest.
 */
void vroce_req_fail(struct vroce_qp *qp, u8 status)
{
	struct vroce_req *req = &qp->req;

	if (req->failed)
		return;
	if (req->tail != req->head)
		vroce_req_complete(qp, status);
	req->failed = status;
	del_timer(&req->retry_timer);
	del_timer(&req->rnr_timer);
	vroce_qp_error(qp, -1);
}

/* Goes back to resend from the oldest unacknowledged PSN. */
void vroce_req_rewind(struct vroce_qp *qp)
{
	struct vroce_req *req = &qp->req;
	const struct vroce_send_wqe *w;
	struct vroce_swqe *sw;

	req->next = req->tail;
	req->next_psn = req->una;
	req->next_off = 0;
	req->rd_out = 0;
	req->rtt_on = false;	/* what is resent gives no round trip */
	if (req->tail == req->head)
		return;
	sw = vroce_swqe(qp, req->tail);
	w = vroce_swqe_wqe(qp, req->tail);
	/* A READ resumes from read_off; an atomic is resent whole. */
	if (sw->started && !vroce_wr_is_rd_atomic(w->opcode))
		req->next_off = vroce_psn_diff(req->una, sw->first_psn) *
				req->mtu;
}

/* Everything sent is acknowledged (and no WQE waits for responses). */
bool vroce_req_idle(struct vroce_qp *qp)
{
	return qp->req.una == qp->req.psn_hi;
}

/* Checks the copy of a WQE just taken; errors complete it when its turn comes. */
static void vroce_req_check(struct vroce_qp *qp, struct vroce_swqe *sw,
			    const struct vroce_send_wqe *w)
{
	int len, access = 0;

	sw->started = false;
	sw->read_off = 0;
	sw->odp_ok = 0;
	sw->status = IB_WC_SUCCESS;
	sw->sgl.n = 0;
	sw->len = 0;
	/* An XRC request names a 24-bit SRQ; other QPs ignore the field. */
	if (!vroce_req_op_ok(qp, w->opcode) ||
	    (qp->ibqp.qp_type == IB_QPT_XRC_INI &&
	     (w->xrc_srqn & ~VROCE_QPN_MASK))) {
		sw->status = IB_WC_LOC_QP_OP_ERR;
		return;
	}
	if (vroce_wr_is_local(w->opcode))
		return;		/* no data: the WQE's own fields say it all */
	if (w->opcode == VROCE_WR_ATOMIC_WRITE) {
		/* Its 8 bytes are in the WQE: no SGEs, no inline data. */
		if (w->num_sge || (w->flags & VROCE_WQE_INLINE))
			sw->status = IB_WC_LOC_LEN_ERR;
		sw->len = sizeof(u64);
		return;
	}
	if (w->flags & VROCE_WQE_INLINE) {
		if (vroce_wr_is_rd_atomic(w->opcode) ||
		    w->inline_len > qp->cap.max_inline_data)
			sw->status = IB_WC_LOC_LEN_ERR;
		else
			sw->len = w->inline_len;
		return;
	}
	if (w->num_sge > qp->cap.max_send_sge) {
		sw->status = IB_WC_LOC_LEN_ERR;
		return;
	}
	if (vroce_wr_is_rd_atomic(w->opcode))
		access = IB_ACCESS_LOCAL_WRITE;
	len = vroce_sgl_prepare(qp, &sw->sgl, (const void *)(w + 1),
				w->num_sge, access);
	if (len < 0) {
		sw->sgl.n = 0;
		sw->status = -len;
		return;
	}
	sw->len = len;
	if (w->opcode != IB_UVERBS_WR_RDMA_READ &&
	    vroce_wr_is_rd_atomic(w->opcode) && len != sizeof(u64))
		sw->status = IB_WC_LOC_LEN_ERR;
}

/*
 * Whether the SQ, found empty, belongs to a stream (core/ack.h,
 * vroce_stream_waits()): then the engine stops without asking for a
 * doorbell (req->blocked: the completer kicks it when an acknowledgement
 * lets it go on, and every message's last packet asks for one), so that
 * what the application posts meanwhile costs no system call and leaves
 * together, in batches, at that kick. The stream is held for a few
 * round trips after it had VROCE_STREAM_DEPTH WQEs in flight: without
 * that, when one acknowledgement completed everything, each of the
 * application's next posts rang the doorbell and went alone until the
 * depth was reached again (measured on the wire: ib_write_bw of 64 B rang
 * it once per five messages, and went 1.4 times faster with the hold).
 * A ping-pong, a lone request or a few in flight never reach the depth:
 * the engine sleeps as on an idle ring and their next post rings the
 * doorbell. The wait is bounded by the hold: if no acknowledgement comes
 * (a lost one, and the QP's retransmit timer is long, or off with
 * timeout 0), the stream timer kicks the engine when the hold ends, and
 * the engine, no longer in a stream until an ACK completes something,
 * takes what was posted and sleeps with need-wakeup set (comp.c).
 * Caller holds the requester's lock.
 */
static bool vroce_req_streaming(struct vroce_qp *qp)
{
	struct vroce_req *req = &qp->req;
	u64 now = local_clock();

	/* The last hold ran out with no ACK: not again until one comes. */
	if (req->stream_ended) {
		if (req->tail == req->stream_end_tail)
			return false;
		req->stream_ended = false;
	}
	if (!vroce_stream_waits(req->head - req->tail, now, req->rtt.srtt,
				&req->stream_until))
		return false;
	req->blocked = true;
	vroce_comp_stream(qp, req->stream_until - now);
	return true;
}

/* Takes the next WQE of the ring: VROCE_TX_SENT if one was taken. */
static int vroce_req_take(struct vroce_qp *qp)
{
	struct vroce_req *req = &qp->req;
	int n;

	/*
	 * Every ring entry is taken and not completed, so the provider
	 * cannot have posted more: the engine goes to sleep as on an empty
	 * ring, and the provider's next post rings the doorbell. Waiting for
	 * the completer to kick the engine instead would wake it once per
	 * completion for nothing in a ping-pong (a send queue of one); a
	 * stream waits for it.
	 */
	if (req->head - req->tail >= qp->sq.entries)
		return vroce_req_streaming(qp) ? VROCE_TX_WAIT : VROCE_TX_IDLE;
	spin_lock(&qp->sq_lock);
	n = vroce_queue_produced(&qp->sq);
	if (n > 0) {
		memcpy(vroce_swqe_wqe(qp, req->head),
		       vroce_queue_slot(&qp->sq, qp->sq.own), qp->sq.stride);
		qp->sq.own++;
	}
	spin_unlock(&qp->sq_lock);
	if (n <= 0)
		return vroce_req_streaming(qp) ? VROCE_TX_WAIT : VROCE_TX_IDLE;
	vroce_req_check(qp, vroce_swqe(qp, req->head),
			vroce_swqe_wqe(qp, req->head));
	req->head++;
	return VROCE_TX_SENT;
}

/* Opcode of a SEND or RDMA WRITE packet, by its place in the message. */
static u8 vroce_req_opcode(struct vroce_qp *qp, u8 wr, bool first, bool last)
{
	bool imm = wr == IB_UVERBS_WR_SEND_WITH_IMM ||
		   wr == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	u8 op = vroce_wr_is_write(wr) ? VROCE_OP_RC_RDMA_WRITE_FIRST :
					VROCE_OP_RC_SEND_FIRST;

	if (wr == IB_UVERBS_WR_SEND_WITH_INV && last)
		return first ? VROCE_OP_RC_SEND_ONLY_INV :
			       VROCE_OP_RC_SEND_LAST_INV;
	/* FIRST, MIDDLE, LAST, LAST_IMM, ONLY, ONLY_IMM follow in order. */
	if (first && last)
		op += imm ? 5 : 4;
	else if (last)
		op += imm ? 3 : 2;
	else if (!first)
		op += 1;
	if (qp->ibqp.qp_type == IB_QPT_UC)
		op |= VROCE_TRANSPORT_UC;
	return op;
}

/*
 * An XRC initiator sends the RC request @t built as an XRC one, for the
 * SRQ the WQE names.
 */
static void vroce_req_xrc(struct vroce_qp *qp, const struct vroce_send_wqe *w,
			  struct vroce_txpkt *t)
{
	if (qp->ibqp.qp_type != IB_QPT_XRC_INI)
		return;
	t->opcode |= VROCE_TRANSPORT_XRC;
	t->xrcsrq = w->xrc_srqn & VROCE_QPN_MASK;	/* checked at the take */
}

static void vroce_req_begin(struct vroce_req *req, struct vroce_swqe *sw,
			    u32 len)
{
	if (sw->started)
		return;
	sw->first_psn = req->next_psn;
	sw->npkts = max_t(u32, 1, DIV_ROUND_UP(len, req->mtu));
	sw->started = true;
}

/* Whether the next packet asks for an acknowledgement (core/ack.h). */
static bool vroce_req_ackreq(const struct vroce_req *req, bool last)
{
	struct vroce_ackreq_in in = {
		.psn = req->next_psn,
		.una = req->una,
		.window = req->window,
		.since = req->since_ackreq,
		.last = last,
		.probe = req->probe,
	};

	return vroce_ackreq_wanted(&in);
}

/*
 * A packet goes out with @ackreq: counts the packets since the last
 * AckReq, and times the round trip of an AckReq sent for the first time
 * when none is timed (core/rtt.h).
 */
static void vroce_req_sent(struct vroce_req *req, bool ackreq)
{
	req->since_ackreq = ackreq ? 0 : req->since_ackreq + 1;
	if (ackreq && !req->rtt_on &&
	    !vroce_psn_before(req->next_psn, req->psn_hi)) {
		req->rtt_on = true;
		req->rtt_psn = req->next_psn;
		req->rtt_start = local_clock();
	}
}

/*
 * The payload of @t, bytes [@off, ...) of the WQE, into @out: unbuilt
 * for a local destination (local.c), else an skb. RC payloads go out of
 * the MR's pages without a copy (unless the netdev has no scatter-gather):
 * the WQE completes only once acknowledged, so they stay put until sent.
 * UC completes at once, inline data lives in our WQE copy: copied.
 */
static bool vroce_req_payload(struct vroce_qp *qp, struct vroce_swqe *sw,
			      const struct vroce_send_wqe *w,
			      const struct vroce_txpkt *t, u32 off,
			      struct vroce_req_out *out)
{
	bool inl = w->flags & VROCE_WQE_INLINE;
	struct sk_buff *skb;
	int err;
	u8 *p;

	if (vroce_local_wanted(qp, inl)) {
		err = vroce_local_prepare(&out->lp, t, &sw->sgl, off);
		out->local = !err;
		if (err != -E2BIG)
			return out->local;
	}
	if (vroce_qp_reliable(qp) && !inl) {
		skb = vroce_pkt_build_sgl(t, &sw->sgl, off);
	} else {
		skb = vroce_pkt_build(t, &p, GFP_ATOMIC);
		if (skb && inl)
			memcpy(p, (const u8 *)(w + 1) + off, t->paylen);
		else if (skb && vroce_sgl_read(&sw->sgl, off, p, t->paylen)) {
			kfree_skb(skb);
			skb = NULL;
		}
	}
	out->skb = skb;
	return skb;
}

/* The next packet of a SEND or RDMA WRITE. */
static bool vroce_req_data(struct vroce_qp *qp, struct vroce_swqe *sw,
			   const struct vroce_send_wqe *w,
			   struct vroce_req_out *out)
{
	struct vroce_req *req = &qp->req;
	struct vroce_txpkt t = {};
	bool first, last;
	u32 idx;

	vroce_req_begin(req, sw, sw->len);
	idx = req->next_off / req->mtu;
	first = idx == 0;
	last = idx + 1 >= sw->npkts;
	t.opcode = vroce_req_opcode(qp, w->opcode, first, last);
	t.psn = req->next_psn;
	t.dqpn = qp->attrs.dest_qp_num;
	t.paylen = min(req->mtu, sw->len - req->next_off);
	t.ackreq = vroce_qp_reliable(qp) && vroce_req_ackreq(req, last);
	t.se = last && (w->flags & VROCE_WQE_SOLICITED);
	t.reth.va = w->u.rdma.remote_addr;
	t.reth.rkey = w->u.rdma.rkey;
	t.reth.dma_len = sw->len;
	t.imm = (__force __be32)w->imm_data;
	t.ieth = w->imm_data;
	t.linear = vroce_qp_tx_linear(qp);
	vroce_req_xrc(qp, w, &t);
	if (!(w->flags & VROCE_WQE_INLINE) &&
	    vroce_req_odp_wants(qp, &sw->sgl, req->next_off, t.paylen, NULL))
		return false;
	if (!vroce_req_payload(qp, sw, w, &t, req->next_off, out)) {
		/*
		 * A local MR deregistered since the WQE was taken sends
		 * nothing more: the WQE fails, in order, like one that
		 * failed its checks.
		 */
		if (vroce_sgl_revoked(&sw->sgl))
			sw->status = IB_WC_LOC_PROT_ERR;
		return false;
	}
	vroce_req_sent(req, t.ackreq);
	req->next_off += t.paylen;
	req->next_psn = vroce_psn_add(req->next_psn, 1);
	if (last) {
		req->next++;
		req->next_off = 0;
	}
	return true;
}

/* A READ request (for what is still missing) or an atomic request. */
static struct sk_buff *vroce_req_rd_atomic(struct vroce_qp *qp,
					   struct vroce_swqe *sw,
					   const struct vroce_send_wqe *w)
{
	struct vroce_req *req = &qp->req;
	struct vroce_txpkt t = {
		.psn = req->next_psn,
		.dqpn = qp->attrs.dest_qp_num,
		.ackreq = true,
	};
	struct sk_buff *skb;
	u32 npkts = 1;
	u8 *p;

	if (w->opcode == IB_UVERBS_WR_RDMA_READ) {
		vroce_req_begin(req, sw, sw->len);
		t.opcode = VROCE_OP_RC_RDMA_READ_REQ;
		t.reth.va = w->u.rdma.remote_addr + sw->read_off;
		t.reth.rkey = w->u.rdma.rkey;
		t.reth.dma_len = sw->len - sw->read_off;
		npkts = max_t(u32, 1, DIV_ROUND_UP(t.reth.dma_len, req->mtu));
	} else {
		vroce_req_begin(req, sw, 0);
		t.opcode = w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ?
			   VROCE_OP_RC_CMP_SWAP : VROCE_OP_RC_FETCH_ADD;
		t.atmeth.va = w->u.atomic.remote_addr;
		t.atmeth.rkey = w->u.atomic.rkey;
		if (t.opcode == VROCE_OP_RC_CMP_SWAP) {
			t.atmeth.compare = w->u.atomic.compare_add;
			t.atmeth.swap_add = w->u.atomic.swap;
		} else {
			t.atmeth.swap_add = w->u.atomic.compare_add;
		}
	}
	vroce_req_xrc(qp, w, &t);
	skb = vroce_pkt_build(&t, &p, GFP_ATOMIC);
	if (!skb)
		return NULL;
	vroce_req_sent(req, true);
	req->next_psn = vroce_psn_add(req->next_psn, npkts);
	req->next++;
	req->rd_out++;
	return skb;
}

/*
 * An RDMA Atomic Write: one packet, its 8 bytes taken from the WQE. The
 * responder answers it as a READ of no data (IBTA 1.5), so it counts
 * against max_rd_atomic as a READ does.
 */
static struct sk_buff *vroce_req_atomic_write(struct vroce_qp *qp,
					      struct vroce_swqe *sw,
					      const struct vroce_send_wqe *w)
{
	struct vroce_req *req = &qp->req;
	struct vroce_txpkt t = {
		.opcode = VROCE_OP_RC_ATOMIC_WRITE,
		.psn = req->next_psn,
		.dqpn = qp->attrs.dest_qp_num,
		.ackreq = true,
		.paylen = sizeof(u64),
		.reth.va = w->u.atomic.remote_addr,
		.reth.rkey = w->u.atomic.rkey,
		.reth.dma_len = sizeof(u64),
	};
	struct sk_buff *skb;
	u8 *p;

	vroce_req_begin(req, sw, sizeof(u64));
	vroce_req_xrc(qp, w, &t);
	skb = vroce_pkt_build(&t, &p, GFP_ATOMIC);
	if (!skb)
		return NULL;
	memcpy(p, &w->u.atomic.swap, sizeof(u64));
	vroce_req_sent(req, true);
	req->next_psn = vroce_psn_add(req->next_psn, 1);
	req->next++;
	req->rd_out++;
	return skb;
}

/* Whether WQE @w may go out now; if not, the completer wakes the engine. */
static bool vroce_req_may_send(struct vroce_qp *qp, struct vroce_swqe *sw,
			       const struct vroce_send_wqe *w)
{
	struct vroce_req *req = &qp->req;
	u32 max_rd = max_t(u32, qp->attrs.max_rd_atomic, 1);

	if (!vroce_qp_reliable(qp))
		return true;
	if (!vroce_window_open(req->next_psn, req->una, req->window))
		return false;
	/*
	 * After a timeout only the oldest unacknowledged packet goes out, as
	 * a probe: its acknowledgement says how far the responder got, and
	 * the rest follows from there (vroce_comp_progress()). Resending the
	 * whole window on every timeout floods a slow link with duplicates
	 * (and duplicate READs answer in full), so that timeouts feed more
	 * timeouts.
	 */
	if (req->probe && req->next_psn != req->una)
		return false;
	if (vroce_wr_is_rd_atomic(w->opcode) && req->rd_out >= max_rd)
		return false;
	/* A fence waits for earlier READs and atomics to complete. */
	if ((w->flags & VROCE_WQE_FENCE) && !sw->started && req->rd_out)
		return false;
	return true;
}

/*
 * A local operation (BIND_MW, LOCAL_INV) runs when everything before it
 * has completed, and completes at once.
 */
static int vroce_req_local(struct vroce_qp *qp, const struct vroce_send_wqe *w)
{
	struct vroce_req *req = &qp->req;
	u8 status = IB_WC_SUCCESS;

	if (req->tail != req->next) {
		req->blocked = true;
		return VROCE_TX_WAIT;
	}
	if (w->opcode == IB_UVERBS_WR_BIND_MW)
		status = vroce_mw_bind(qp, w);
	else if (w->opcode == IB_WR_REG_MR)
		status = vroce_frmr_register(qp, w);
	else if (vroce_key_invalidate(qp, w->imm_data, false))
		status = IB_WC_LOC_PROT_ERR;
	if (status == VROCE_WC_NOMEM) {
		vroce_comp_nomem(qp);
		return VROCE_TX_WAIT;
	}
	req->next++;
	if (status != IB_WC_SUCCESS) {
		vroce_req_fail(qp, status);
		return VROCE_TX_STOP;
	}
	vroce_req_complete(qp, IB_WC_SUCCESS);
	return VROCE_TX_SENT;
}

/* The start of vroce_req_packet(): the next packet into @out, if any. */
static int vroce_req_next(struct vroce_qp *qp, struct vroce_req_out *out)
{
	struct vroce_req *req = &qp->req;
	const struct vroce_send_wqe *w;
	struct vroce_swqe *sw;
	int res;

	if (req->failed)
		return VROCE_TX_STOP;
	if (req->rnr_wait || req->nomem_wait || req->odp_wait)
		return VROCE_TX_WAIT;
	if (req->next == req->head) {
		/* SQD finishes what was started but takes nothing new. */
		if (READ_ONCE(qp->attrs.state) != IB_QPS_RTS)
			return vroce_req_idle(qp) ? VROCE_TX_STOP :
						    VROCE_TX_WAIT;
		res = vroce_req_take(qp);
		if (res != VROCE_TX_SENT)
			return res;
	}
	sw = vroce_swqe(qp, req->next);
	w = vroce_swqe_wqe(qp, req->next);
	if (sw->status) {
		/* It completes in order: after everything before it. */
		if (req->tail != req->next) {
			req->blocked = true;
			return VROCE_TX_WAIT;
		}
		vroce_req_fail(qp, sw->status);
		return VROCE_TX_STOP;
	}
	if (vroce_wr_is_local(w->opcode))
		return vroce_req_local(qp, w);
	if (!vroce_req_may_send(qp, sw, w)) {
		req->blocked = true;
		return VROCE_TX_WAIT;
	}
	if (vroce_pace_wait(qp, &qp->ref->req))
		return VROCE_TX_WAIT;
	/* READ responses and atomic ACKs land in mapped pages. */
	if (vroce_wr_is_rd_atomic(w->opcode) &&
	    w->opcode != VROCE_WR_ATOMIC_WRITE && vroce_req_odp_dest(qp, sw))
		return VROCE_TX_WAIT;
	out->psn = req->next_psn;
	if (w->opcode == VROCE_WR_ATOMIC_WRITE)
		out->skb = vroce_req_atomic_write(qp, sw, w);
	else if (vroce_wr_is_rd_atomic(w->opcode))
		out->skb = vroce_req_rd_atomic(qp, sw, w);
	else
		vroce_req_data(qp, sw, w, out);
	if (req->odp_wait)
		return VROCE_TX_WAIT;
	/* A revoked MR fails the WQE at the next step; else no memory. */
	if (!out->skb && !out->local && !sw->status) {
		vroce_comp_nomem(qp);
		return VROCE_TX_WAIT;
	}
	return VROCE_TX_SENT;
}

/*
 * After a packet, first of PSN @psn, left: the retransmit count, the
 * timer, UC completion.
 */
static void vroce_req_account(struct vroce_qp *qp, u32 psn)
{
	struct vroce_req *req = &qp->req;

	if (vroce_psn_before(psn, req->psn_hi)) {
		vroce_count(to_vdev(qp->ibqp.device), VROCE_CNT_RETRANSMITS, 1);
		trace_vroce_retransmit(&qp->ibqp, psn, req->psn_hi);
	}
	if (vroce_psn_after(req->next_psn, req->psn_hi))
		req->psn_hi = req->next_psn;
	if (vroce_qp_reliable(qp)) {
		vroce_comp_arm(qp, false);
	} else if (req->next != req->tail) {
		/* UC: done once the last packet is out. */
		req->una = req->next_psn;
		vroce_req_complete(qp, IB_WC_SUCCESS);
	}
}

/*
 * Caller holds the lock. Makes the next packet in @out and returns
 * VROCE_TX_SENT, or says why there is none.
 */
static int vroce_req_packet(struct vroce_qp *qp, struct vroce_req_out *out)
{
	int res = vroce_req_next(qp, out);

	if (res == VROCE_TX_SENT && (out->skb || out->local))
		vroce_req_account(qp, out->psn);
	return res;
}

/*
 * One step of the send engine for an RC or UC QP: sends one packet if it
 * can. Returns enum vroce_tx_res.
 */
int vroce_req_step(struct vroce_qp *qp)
{
	struct vroce_req_out out;
	int res;

	out.skb = NULL;
	out.local = false;
	spin_lock_bh(&qp->req.lock);
	res = vroce_req_packet(qp, &out);
	spin_unlock_bh(&qp->req.lock);
	if (out.skb) {
		vroce_pace_own(qp, out.skb);
		vroce_qp_xmit_batch(qp, out.skb);
	} else if (out.local) {
		vroce_local_xmit(qp, &out.lp);
	}
	return res;
}
