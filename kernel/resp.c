// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder of RC and UC QPs. A request packet is checked in this
 * order before any byte moves: PSN (a gap gets one sequence NAK, a
 * duplicate is acknowledged again or its READ or atomic replayed), the
 * opcode sequence, the QP's remote access flags, the packet length, and
 * for RDMA the R_Key, PD, MR access and bounds. Then the payload goes
 * straight into the receive WQE's buffers or the target MR, and an ACK, a
 * READ response or an atomic ACK is queued. Errors NAK the request and
 * move the QP to ERR; a missing receive WQE gets an RNR NAK. UC does the
 * same without any answer: a gap or an error drops the message.
 * Answers are sent after the lock is let go. A READ's responses are not
 * all built at once: the READ is kept as a resource with a cursor, and
 * its responses go out a budget at a time (a first few from the receive
 * softirq, the rest from the QP's send engine), with a bound on those in
 * flight below the netdev, and paced by what the device has there
 * (tx_pace.c). Answers that come after an unsent READ
 * response in PSN order wait behind it.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/skbuff.h>

#include "vroce.h"
#include "vroce_trace.h"
#include "core/roce.h"

/* What the checks and execution of one request packet come to. */
enum vroce_verdict {
	VROCE_RESP_OK,
	VROCE_RESP_RNR,		/* no receive WQE */
	VROCE_RESP_DROP,	/* UC: nothing to answer */
	VROCE_RESP_INV_REQ,
	VROCE_RESP_ACCESS_ERR,
	VROCE_RESP_OP_ERR,
};

#define VROCE_KINDS	(VROCE_OPF_SEND | VROCE_OPF_WRITE | VROCE_OPF_READ | \
			 VROCE_OPF_ATOMIC | VROCE_OPF_ATOMIC_WRITE)
/* The requests a responder resource answers, and answers again. */
#define VROCE_RESP_ANSWERED	(VROCE_OPF_READ | VROCE_OPF_ATOMIC | \
				 VROCE_OPF_ATOMIC_WRITE)

/* READ responses one run of the send engine sends, and the receive path. */
#define VROCE_RESP_BUDGET	64
#define VROCE_RESP_RX_BUDGET	16
/*
 * READ responses of a QP in flight below the netdev (sent, not freed):
 * no more are built at VROCE_RESP_SKBS_HIGH, and the engine is woken when
 * they drop to VROCE_RESP_SKBS_LOW; or, paced (tx_pace.c), at half of
 * the pacing minimum.
 */
#define VROCE_RESP_SKBS_HIGH	64
#define VROCE_RESP_SKBS_LOW	32

static u16 vroce_kind(const struct vroce_pkt *pkt)
{
	return pkt->op->flags & VROCE_KINDS;
}

/* A READ sends no more responses; its MR is let go. Caller holds the lock. */
static void vroce_res_stop(struct vroce_res *res)
{
	res->rd.active = false;
	if (res->mr)
		vroce_mr_put(res->mr);
	res->mr = NULL;
}

/* Every READ stops; nothing is left to send but the answers on "later". */
static void vroce_resp_drop_res(struct vroce_resp *resp)
{
	u32 i;

	for (i = 0; i < VROCE_MAX_QP_RD_ATOM; i++)
		vroce_res_stop(&resp->res[i]);
	resp->res_tail = resp->res_head;
}

static void vroce_resp_ack_now(struct vroce_qp *qp, struct sk_buff_head *q);

/* Entering RTR: the expected PSN; nothing in progress. */
void vroce_resp_start(struct vroce_qp *qp)
{
	struct vroce_resp *resp = &qp->resp;

	spin_lock_bh(&resp->lock);
	resp->epsn = qp->attrs.rq_psn;
	resp->msn = 0;
	resp->cur = 0;
	resp->nak_sent = false;
	resp->failed = false;
	vroce_resp_drop_res(resp);
	__skb_queue_purge(&resp->later);
	resp->res_head = 0;
	resp->res_tail = 0;
	memset(resp->res, 0, sizeof(resp->res));
	resp->ack_pending = false;
	spin_unlock_bh(&resp->lock);
}

/* Lets go of the message in progress; caller holds the lock. */
static void vroce_resp_abort(struct vroce_qp *qp)
{
	struct vroce_resp *resp = &qp->resp;

	vroce_sgl_release(&resp->sgl);
	resp->sgl.n = 0;
	if (resp->wmr)
		vroce_mr_put(resp->wmr);
	resp->wmr = NULL;
	resp->cur = 0;
}

/*
 * Entering RESET, or destroyed: a coalesced ACK still pending goes out,
 * the receive WQE held is dropped, and no request is looked at until RTR
 * (vroce_resp_start()), not even one that saw the old state before RESET
 * was published.
 */
void vroce_resp_reset(struct vroce_qp *qp)
{
	struct sk_buff_head q;

	__skb_queue_head_init(&q);
	spin_lock_bh(&qp->resp.lock);
	vroce_resp_ack_now(qp, &q);
	vroce_resp_abort(qp);
	qp->resp.have_wqe = false;
	qp->resp.failed = true;
	qp->resp.ack_pending = false;
	vroce_resp_drop_res(&qp->resp);
	__skb_queue_purge(&qp->resp.later);
	spin_unlock_bh(&qp->resp.lock);
	vroce_qp_xmit_queue(qp, &q);
}

/* The RC opcode of @pkt's operation: an XRC one less its transport. */
static u8 vroce_rc_opcode(const struct vroce_pkt *pkt)
{
	return pkt->bth.opcode & ~VROCE_TRANSPORT_MASK;
}

/*
 * The CQ receives complete into: an XRC target's is the CQ of the SRQ
 * the WQE came from, looked up again if no request is in hand (bottom
 * halves are off: see vroce_xsrq_find()); NULL if that SRQ is gone.
 */
static struct vroce_cq *vroce_resp_cq(struct vroce_qp *qp)
{
	struct vroce_srq *srq = qp->resp.xsrq;

	if (!vroce_qp_is_xrc_tgt(qp))
		return to_vcq(qp->ibqp.recv_cq);
	if (!srq || srq->srqn != qp->resp.wqe_srqn)
		srq = vroce_xsrq_find(qp, qp->resp.wqe_srqn);
	return srq ? to_vcq(srq->ibsrq.ext.cq) : NULL;
}

static void vroce_resp_recv_cqe(struct vroce_qp *qp, u8 status, u8 opcode,
				u32 len, const struct vroce_pkt *pkt,
				const u8 *bth)
{
	struct vroce_resp *resp = &qp->resp;
	struct vroce_cq *cq = vroce_resp_cq(qp);
	struct vroce_cqe cqe = {
		.wr_id = resp->wqe.wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = len,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = qp->attrs.dest_qp_num,
	};
	const u8 *h;

	if (pkt && status == IB_WC_SUCCESS) {
		h = vroce_pkt_hdr(pkt, bth, VROCE_HDR_IMMDT);
		if (h) {
			memcpy(&cqe.imm_data, h, sizeof(cqe.imm_data));
			cqe.flags |= VROCE_CQE_WITH_IMM;
		}
		h = vroce_pkt_hdr(pkt, bth, VROCE_HDR_IETH);
		if (h) {
			vroce_ieth_parse(&cqe.imm_data, h, VROCE_IETH_LEN);
			cqe.flags |= VROCE_CQE_WITH_INV;
		}
	}
	vroce_sgl_release(&resp->sgl);
	resp->sgl.n = 0;
	resp->have_wqe = false;
	if (cq)
		vroce_cq_add(cq, &cqe,
			     (pkt && pkt->bth.se) || status != IB_WC_SUCCESS);
}

/*
 * Entering ERR: a coalesced ACK still pending goes out; a receive WQE in
 * use completes first, flushed. READs send no more responses; answers
 * already made (a NAK) still go out.
 */
void vroce_resp_flush(struct vroce_qp *qp)
{
	struct sk_buff_head q;

	__skb_queue_head_init(&q);
	spin_lock_bh(&qp->resp.lock);
	vroce_resp_ack_now(qp, &q);
	qp->resp.failed = true;
	vroce_resp_drop_res(&qp->resp);
	if (qp->resp.have_wqe)
		vroce_resp_recv_cqe(qp, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, 0,
				    NULL, NULL);
	vroce_resp_abort(qp);
	spin_unlock_bh(&qp->resp.lock);
	vroce_qp_xmit_queue(qp, &q);
}

/*
 * Every answer goes to the peer QP and carries our current MSN; an XRC
 * target's are XRC opcodes.
 */
static void vroce_resp_address(struct vroce_qp *qp, struct vroce_txpkt *t)
{
	if (vroce_qp_is_xrc_tgt(qp))
		t->opcode |= VROCE_TRANSPORT_XRC;
	t->dqpn = qp->attrs.dest_qp_num;
	t->aeth.msn = qp->resp.msn & VROCE_MSN_MASK;
}

/*
 * Whether an answer made now could overtake one not sent yet: a READ
 * response still to build, an answer waiting behind one, or a context
 * that is sending some. Caller holds the lock.
 */
static bool vroce_resp_busy(const struct vroce_resp *resp)
{
	return resp->res_tail != resp->res_head || resp->tx_owner ||
	       !skb_queue_empty(&resp->later);
}

/*
 * An answer other than a READ response goes on @q (sent once the lock is
 * let go), or, if something is still to be sent before it, behind all the
 * READs and atomics taken so far (vroce_resp_fill() sends it). Caller
 * holds the lock.
 */
static void vroce_resp_place(struct vroce_qp *qp, struct sk_buff *skb,
			     struct sk_buff_head *q)
{
	struct vroce_resp *resp = &qp->resp;

	if (!skb)
		return;
	if (!vroce_resp_busy(resp)) {
		__skb_queue_tail(q, skb);
		return;
	}
	/*
	 * Bounded: a peer that keeps a READ going and floods duplicates
	 * would otherwise pile up answers here. One dropped is one the
	 * requester asks for again.
	 */
	if (skb_queue_len(&resp->later) >= VROCE_RESP_LATER_MAX) {
		kfree_skb(skb);
		vroce_count(to_vdev(qp->ibqp.device), VROCE_CNT_TX_DROPPED, 1);
		return;
	}
	VROCE_SKB_AFTER(skb) = resp->res_head;
	__skb_queue_tail(&resp->later, skb);
}

static struct sk_buff *vroce_resp_ack_skb(struct vroce_qp *qp, int syndrome,
					  u32 psn, u32 msn);

/* The pending coalesced ACK, if any, placed before what comes next. */
static void vroce_resp_take_pending_ack(struct vroce_qp *qp,
					struct sk_buff_head *q)
{
	struct vroce_resp *resp = &qp->resp;

	if (!resp->ack_pending)
		return;
	resp->ack_pending = false;
	vroce_resp_place(qp, vroce_resp_ack_skb(qp,
			 vroce_aeth_syn_ack(VROCE_AETH_CREDIT_INVALID),
			 resp->ack_psn, resp->ack_msn), q);
}

/*
 * Leaving RTR or RTS for ERR or RESET, or destroyed: the coalesced ACK
 * still pending goes out now, on @q, or behind the answers another
 * context is sending (vroce_resp_place()). The messages it acknowledges
 * have completed here, and their consumer may have seen that and torn
 * the QP down before the ACK tasklet ran; without the ACK the peer would
 * retry into a retry-exceeded error. Not while READ responses are still
 * to build: those are dropped, and the ACK must not pass them. ack_queued
 * stays: the tasklet's list may still hold the QP. Caller holds the lock.
 */
static void vroce_resp_ack_now(struct vroce_qp *qp, struct sk_buff_head *q)
{
	struct vroce_resp *resp = &qp->resp;

	if (!resp->failed && resp->res_tail == resp->res_head)
		vroce_resp_take_pending_ack(qp, q);
}

/* An answer: the coalesced ACK (if one is pending) goes out ahead of it. */
static void vroce_resp_answer(struct vroce_qp *qp, struct sk_buff *skb,
			      struct sk_buff_head *q)
{
	vroce_resp_take_pending_ack(qp, q);
	vroce_resp_place(qp, skb, q);
}

static void vroce_resp_queue(struct vroce_qp *qp, struct vroce_txpkt *t,
			     struct sk_buff_head *q)
{
	u8 *p;

	vroce_resp_address(qp, t);
	vroce_resp_answer(qp, vroce_pkt_build(t, &p, GFP_ATOMIC), q);
}

/* An ACK (or NAK, by @syndrome) of @psn, carrying @msn. */
static struct sk_buff *vroce_resp_ack_skb(struct vroce_qp *qp, int syndrome,
					  u32 psn, u32 msn)
{
	struct vroce_txpkt t = {
		.opcode = VROCE_OP_RC_ACK,
		.psn = psn,
		.aeth.syndrome = syndrome,
	};
	struct sk_buff *skb;
	u8 *p;

	vroce_resp_address(qp, &t);
	t.aeth.msn = msn & VROCE_MSN_MASK;
	skb = vroce_pkt_build(&t, &p, GFP_ATOMIC);
	if (skb && vroce_aeth_syn_type(syndrome) != VROCE_AETH_ACK)
		trace_vroce_nak_sent(&qp->ibqp, psn, syndrome);
	return skb;
}

/* An ACK (or NAK, by @syndrome) of @psn, queued on @q. */
static void vroce_resp_ack(struct vroce_qp *qp, struct sk_buff_head *q,
			   int syndrome, u32 psn)
{
	vroce_resp_answer(qp, vroce_resp_ack_skb(qp, syndrome, psn,
						 qp->resp.msn), q);
}

static void vroce_resp_atomic_ack(struct vroce_qp *qp, struct sk_buff_head *q,
				  u32 psn, u64 orig)
{
	struct vroce_txpkt t = {
		.opcode = VROCE_OP_RC_ATOMIC_ACK,
		.psn = psn,
		.aeth.syndrome = vroce_aeth_syn_ack(VROCE_AETH_CREDIT_INVALID),
		.atmack.orig = orig,
	};

	vroce_resp_queue(qp, &t, q);
}

/*
 * A READ response is freed: one less in flight; wake the engine at LOW,
 * or when the responses waited for the stack (tx_pace.c).
 */
static void vroce_resp_skb_done(struct sk_buff *skb)
{
	struct vroce_qp_ref *ref = vroce_pace_take(skb);
	bool wake;

	if (!ref)
		return;
	rcu_read_lock();	/* vroce_qp_ref_put() */
	if (vroce_pace_freed(ref, &ref->resp, &wake) == VROCE_RESP_SKBS_LOW &&
	    !vroce_pace_waiting(&ref->resp))
		wake = true;
	if (wake)
		vroce_pace_kick(ref);
	vroce_qp_ref_put(ref);
	rcu_read_unlock();
}

/*
 * Whether the next response of READ @res may be built: 0; -EAGAIN if a
 * page of its ODP MR is not mapped (odp.c faults it in, with what
 * follows, and then kicks the engine, which goes on from there); -EACCES
 * if that page failed to fault, or the MR was deregistered (its page map
 * is empty then, and no fault comes).
 */
static int vroce_resp_read_odp(struct vroce_qp *qp, struct vroce_res *res)
{
	struct vroce_rd_cursor *c = &res->rd;

	if (!res->mr || !res->mr->odp || !c->active || !c->left)
		return 0;
	if (!vroce_mr_live(res->mr, res->mr_key))
		return -EACCES;
	return vroce_odp_ready(res->mr, c->va, min(c->left, qp->resp.mtu),
			       c->left, qp);
}

/*
 * The next READ response of @res, counted for the QP until it is freed
 * (tx_pace.c); NULL if none can be built (the requester asks again),
 * ERR_PTR(-EAGAIN) if it waits for an ODP fault (vroce_resp_read_odp()),
 * or ERR_PTR(-EACCES) if its MR was deregistered meanwhile or its page
 * cannot be mapped (*@psn is then the response's PSN). Caller holds the
 * lock.
 */
static struct sk_buff *vroce_resp_read_skb(struct vroce_qp *qp,
					   struct vroce_res *res, u32 *psn)
{
	static const u8 ops[] = {
		[VROCE_POS_FIRST] = VROCE_OP_RC_RDMA_READ_RESP_FIRST,
		[VROCE_POS_MIDDLE] = VROCE_OP_RC_RDMA_READ_RESP_MIDDLE,
		[VROCE_POS_LAST] = VROCE_OP_RC_RDMA_READ_RESP_LAST,
		[VROCE_POS_ONLY] = VROCE_OP_RC_RDMA_READ_RESP_ONLY,
	};
	struct vroce_txpkt t = {
		.aeth.syndrome = vroce_aeth_syn_ack(VROCE_AETH_CREDIT_INVALID),
	};
	struct sk_buff *skb;
	bool revoked;
	int pos, err;
	u64 va;
	u8 *p;

	err = vroce_resp_read_odp(qp, res);
	if (err) {
		*psn = res->rd.psn;
		return ERR_PTR(err);
	}
	pos = vroce_rd_next(&res->rd, qp->resp.mtu, &t.psn, &va, &t.paylen);
	if (!pos)
		return NULL;
	t.opcode = ops[pos];
	vroce_resp_address(qp, &t);
	t.aeth.msn = res->msn & VROCE_MSN_MASK;
	t.linear = vroce_qp_tx_linear(qp);
	/* The MR's pages go out as fragments, without a copy, if they may. */
	skb = t.paylen ? vroce_pkt_build_mr(&t, res->mr, res->mr_key, va) :
			 vroce_pkt_build(&t, &p, GFP_ATOMIC);
	revoked = !skb && t.paylen && !vroce_mr_live(res->mr, res->mr_key);
	if (!res->rd.active || !skb)
		vroce_res_stop(res);	/* done; or the requester asks again */
	*psn = t.psn;
	if (!skb)
		return revoked ? ERR_PTR(-EACCES) : NULL;
	vroce_pace_hold(qp, &qp->ref->resp, skb, vroce_resp_skb_done);
	qp->resp.skbs_peak = max_t(u32, qp->resp.skbs_peak,
				   atomic_read(&qp->ref->resp.n));
	return skb;
}

/*
 * The MR of a READ being answered was deregistered: a remote access
 * error NAK of the response @psn that could not be built, with @msn, that
 * of the last message completed before the READ (the requester
 * completes the READ with IB_WC_REM_ACCESS_ERR, and does not ask again
 * until it runs out of retries), and the QP goes to ERR. Caller holds
 * the lock.
 */
static void vroce_resp_read_revoked(struct vroce_qp *qp, u32 psn, u32 msn,
				    struct sk_buff_head *q)
{
	struct sk_buff *skb;

	skb = vroce_resp_ack_skb(qp,
				 vroce_aeth_syn_nak(VROCE_NAK_REMOTE_ACCESS_ERR),
				 psn, msn);
	if (skb)
		__skb_queue_tail(q, skb);
	qp->resp.failed = true;
	vroce_qp_error(qp, IB_EVENT_QP_ACCESS_ERR);
}

/*
 * Moves the answers that are due onto @q, in PSN order: the answers
 * waiting for the READs and atomics before res_tail, then the responses
 * of the READ at res_tail, @budget at most, and only while fewer than
 * VROCE_RESP_SKBS_HIGH are in flight. Caller holds the lock.
 */
static void vroce_resp_fill(struct vroce_qp *qp, struct sk_buff_head *q,
			    u32 budget)
{
	struct vroce_resp *resp = &qp->resp;
	struct vroce_res *res;
	struct sk_buff *skb;
	u32 built = 0;
	u32 psn;

	for (;;) {
		while ((skb = skb_peek(&resp->later)) &&
		       (s32)(resp->res_tail - VROCE_SKB_AFTER(skb)) >= 0) {
			__skb_unlink(skb, &resp->later);
			__skb_queue_tail(q, skb);
		}
		if (resp->res_tail == resp->res_head)
			break;
		res = &resp->res[resp->res_tail % VROCE_MAX_QP_RD_ATOM];
		if (resp->failed || !res->rd.active) {
			vroce_res_stop(res);
			resp->res_tail++;
			continue;
		}
		if (built >= budget ||
		    atomic_read(&qp->ref->resp.n) >= VROCE_RESP_SKBS_HIGH ||
		    vroce_pace_wait(qp, &qp->ref->resp))
			break;
		skb = vroce_resp_read_skb(qp, res, &psn);
		if (PTR_ERR(skb) == -EAGAIN)
			break;		/* the ODP fault kicks us again */
		if (IS_ERR(skb)) {
			vroce_resp_read_revoked(qp, psn, res->msn - 1, q);
			continue;
		}
		if (skb) {
			__skb_queue_tail(q, skb);
			built++;
		}
	}
}

/*
 * Sends the answers that are due, @budget packets at most (READ responses
 * and the answers behind them). One context sends at a time; while it
 * does, the answers others make wait on "later" (vroce_resp_busy()), so
 * none overtakes another. Once all is
 * sent, so is a coalesced ACK that waited. Returns true if something
 * remains that only another run will send; not what waits for responses
 * in flight to be freed, whose destructor kicks the engine.
 */
static bool vroce_resp_push(struct vroce_qp *qp, u32 budget)
{
	struct vroce_resp *resp = &qp->resp;
	struct sk_buff_head q;
	bool more = false;

	__skb_queue_head_init(&q);
	spin_lock_bh(&resp->lock);
	if (resp->tx_owner) {
		spin_unlock_bh(&resp->lock);
		return false;	/* the owner goes on until nothing is due */
	}
	resp->tx_owner = true;
	for (;;) {
		vroce_resp_fill(qp, &q, budget);
		if (skb_queue_empty(&q))
			break;
		/*
		 * Answers count too: while the lock is let go, other CPUs may
		 * add them as fast as this loop sends them (a peer flooding
		 * duplicates during a READ), and the loop must end.
		 */
		budget -= min_t(u32, budget, skb_queue_len(&q));
		spin_unlock_bh(&resp->lock);
		vroce_qp_xmit_queue(qp, &q);
		spin_lock_bh(&resp->lock);
		if (!budget) {
			more = resp->res_tail != resp->res_head &&
			       atomic_read(&qp->ref->resp.n) <
			       VROCE_RESP_SKBS_HIGH &&
			       !vroce_pace_waiting(&qp->ref->resp);
			more |= !skb_queue_empty(&resp->later);
			break;
		}
	}
	resp->tx_owner = false;
	if (!resp->failed && !vroce_resp_busy(resp) && !resp->ack_queued)
		vroce_resp_take_pending_ack(qp, &q);
	spin_unlock_bh(&resp->lock);
	vroce_qp_xmit_queue(qp, &q);
	return more;
}

/* The send engine's part (tx.c): true if it must run again. */
bool vroce_resp_tx(struct vroce_qp *qp)
{
	return vroce_resp_push(qp, VROCE_RESP_BUDGET);
}

/* Takes a receive WQE for the message starting now: 1, 0 (none) or -1. */
static int vroce_resp_take(struct vroce_qp *qp)
{
	struct vroce_resp *resp = &qp->resp;
	int got;

	if (resp->have_wqe)
		return 1;	/* UC: kept from a message that was dropped */
	got = vroce_take_recv(qp, &resp->wqe, resp->sge);
	if (got)
		resp->have_wqe = true;
	if (got && resp->xsrq)
		resp->wqe_srqn = resp->xsrq->srqn;
	resp->sgl.n = 0;
	return got;
}

static enum vroce_verdict vroce_resp_send(struct vroce_qp *qp,
					  const struct vroce_pkt *pkt,
					  const u8 *bth)
{
	struct vroce_resp *resp = &qp->resp;
	u8 pos = pkt->op->pos;
	const u8 *ieth;
	u32 rkey;
	int len, err;

	if (pos == VROCE_POS_FIRST || pos == VROCE_POS_ONLY) {
		switch (vroce_resp_take(qp)) {
		case 0:
			return VROCE_RESP_RNR;
		case -1:
			vroce_resp_recv_cqe(qp, IB_WC_LOC_LEN_ERR, IB_WC_RECV,
					    0, NULL, NULL);
			return VROCE_RESP_OP_ERR;
		}
		vroce_sgl_release(&resp->sgl);
		len = vroce_sgl_prepare(qp, &resp->sgl, resp->sge,
					resp->wqe.num_sge,
					IB_ACCESS_LOCAL_WRITE);
		if (len < 0) {
			resp->sgl.n = 0;
			vroce_resp_recv_cqe(qp, -len, IB_WC_RECV, 0, NULL,
					    NULL);
			return VROCE_RESP_OP_ERR;
		}
		resp->off = 0;
	}
	if (pkt->paylen > resp->sgl.len - resp->off) {
		vroce_resp_recv_cqe(qp, IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0,
				    NULL, NULL);
		return VROCE_RESP_INV_REQ;
	}
	/*
	 * A receive MR deregistered since the first packet takes no more.
	 * An ODP page not mapped is faulted in meanwhile (odp.c): RNR NAK.
	 */
	err = vroce_sgl_write_pkt(&resp->sgl, resp->off, pkt);
	if (err == -EAGAIN)
		err = vroce_sgl_odp_missed(&resp->sgl, resp->off, pkt->paylen);
	if (err == -EAGAIN)
		return VROCE_RESP_RNR;
	if (err) {
		vroce_resp_recv_cqe(qp, IB_WC_LOC_PROT_ERR, IB_WC_RECV, 0,
				    NULL, NULL);
		return VROCE_RESP_OP_ERR;
	}
	resp->off += pkt->paylen;
	if (pos == VROCE_POS_FIRST) {
		resp->cur = VROCE_OPF_SEND;
	} else if (pos == VROCE_POS_LAST || pos == VROCE_POS_ONLY) {
		/* SEND with Invalidate: only a bound type 2 MW can be. */
		ieth = vroce_pkt_hdr(pkt, bth, VROCE_HDR_IETH);
		if (ieth) {
			vroce_ieth_parse(&rkey, ieth, VROCE_IETH_LEN);
			if (vroce_key_invalidate(qp, rkey, true)) {
				vroce_resp_recv_cqe(qp, IB_WC_LOC_PROT_ERR,
						    IB_WC_RECV, 0, NULL, NULL);
				return VROCE_RESP_INV_REQ;
			}
		}
		vroce_resp_recv_cqe(qp, IB_WC_SUCCESS, IB_WC_RECV, resp->off,
				    pkt, bth);
		resp->cur = 0;
		resp->msn++;
	}
	return VROCE_RESP_OK;
}

static enum vroce_verdict vroce_resp_write(struct vroce_qp *qp,
					   const struct vroce_pkt *pkt,
					   const u8 *bth)
{
	struct vroce_resp *resp = &qp->resp;
	bool imm = pkt->op->flags & VROCE_OPF_IMM;
	u8 pos = pkt->op->pos;
	struct vroce_reth reth;
	int got, err;

	if (pos == VROCE_POS_FIRST || pos == VROCE_POS_ONLY) {
		vroce_reth_parse(&reth, vroce_pkt_hdr(pkt, bth, VROCE_HDR_RETH),
				 VROCE_RETH_LEN);
		if (resp->wmr)
			vroce_mr_put(resp->wmr);
		resp->wmr = NULL;
		/* A zero-length WRITE names no memory: its R_Key is moot. */
		if (reth.dma_len) {
			resp->wmr = vroce_mr_get_remote(qp, reth.rkey, &reth.va,
							reth.dma_len,
							IB_ACCESS_REMOTE_WRITE,
							&resp->wkey);
			if (!resp->wmr)
				return VROCE_RESP_ACCESS_ERR;
		}
		resp->wva = reth.va;
		resp->wleft = reth.dma_len;
		resp->wlen = reth.dma_len;
	}
	if (pkt->paylen > resp->wleft ||
	    ((pos == VROCE_POS_LAST || pos == VROCE_POS_ONLY) &&
	     pkt->paylen != resp->wleft))
		return VROCE_RESP_INV_REQ;
	/* With immediate data it needs a receive WQE before any byte moves. */
	if (imm) {
		got = vroce_resp_take(qp);
		if (got == 0) {
			if (pos == VROCE_POS_ONLY)
				vroce_resp_abort(qp);
			return VROCE_RESP_RNR;
		}
		if (got < 0) {
			vroce_resp_recv_cqe(qp, IB_WC_LOC_LEN_ERR,
					    IB_WC_RECV_RDMA_WITH_IMM, 0, NULL,
					    NULL);
			return VROCE_RESP_OP_ERR;
		}
	}
	/* An MR deregistered since the first packet takes no more bytes. */
	err = pkt->paylen ? vroce_mr_write_pkt(resp->wmr, resp->wkey,
					       resp->wva, pkt) : 0;
	if (err == -EAGAIN)
		err = vroce_odp_missed(resp->wmr, resp->wva, pkt->paylen,
				       resp->wleft);
	if (err == -EAGAIN)
		return VROCE_RESP_RNR;	/* an ODP page is faulted in */
	if (err)
		return VROCE_RESP_ACCESS_ERR;
	resp->wva += pkt->paylen;
	resp->wleft -= pkt->paylen;
	if (pos == VROCE_POS_FIRST)
		resp->cur = VROCE_OPF_WRITE;
	if (pos == VROCE_POS_LAST || pos == VROCE_POS_ONLY) {
		vroce_resp_abort(qp);
		resp->msn++;
		if (imm)
			vroce_resp_recv_cqe(qp, IB_WC_SUCCESS,
					    IB_WC_RECV_RDMA_WITH_IMM,
					    resp->wlen, pkt, bth);
	}
	return VROCE_RESP_OK;
}

/*
 * Whether a new READ or atomic may be taken: the peer has fewer than
 * max_dest_rd_atomic with answers not all sent (more is an Invalid
 * Request, as IBTA has it); counted when not. Caller holds the lock.
 */
static bool vroce_resp_rd_room(struct vroce_qp *qp)
{
	struct vroce_resp *resp = &qp->resp;

	if (vroce_rd_room(resp->res_head, resp->res_tail,
			  qp->attrs.max_dest_rd_atomic))
		return true;
	vroce_count(to_vdev(qp->ibqp.device), VROCE_CNT_RD_ATOMIC_OVER, 1);
	return false;
}

/* The resource of a new READ or atomic, the slot's old one let go. */
static struct vroce_res *vroce_resp_new_res(struct vroce_resp *resp)
{
	struct vroce_res *res;

	res = &resp->res[resp->res_head % VROCE_MAX_QP_RD_ATOM];
	vroce_res_stop(res);
	res->idx = resp->res_head++;
	return res;
}

static enum vroce_verdict vroce_resp_read(struct vroce_qp *qp,
					  const struct vroce_pkt *pkt,
					  const u8 *bth, struct sk_buff_head *q)
{
	struct vroce_resp *resp = &qp->resp;
	struct vroce_mr *mr = NULL;
	u32 mr_key = 0;
	struct vroce_reth reth;
	struct vroce_res *res;
	u32 npkts;

	/* RTR sets the MTU before it lets requests in; never divide by 0. */
	if (!resp->mtu)
		return VROCE_RESP_DROP;
	vroce_reth_parse(&reth, vroce_pkt_hdr(pkt, bth, VROCE_HDR_RETH),
			 VROCE_RETH_LEN);
	if (reth.dma_len > VROCE_MAX_MSG_SZ || !vroce_resp_rd_room(qp))
		return VROCE_RESP_INV_REQ;
	if (reth.dma_len) {
		mr = vroce_mr_get_remote(qp, reth.rkey, &reth.va, reth.dma_len,
					 IB_ACCESS_REMOTE_READ, &mr_key);
		if (!mr)
			return VROCE_RESP_ACCESS_ERR;
	}
	npkts = vroce_rd_npkts(reth.dma_len, resp->mtu);
	/* A coalesced ACK of what came before goes out ahead. */
	vroce_resp_take_pending_ack(qp, q);
	res = vroce_resp_new_res(resp);
	res->kind = VROCE_OPF_READ;
	res->first_psn = pkt->bth.psn;
	res->last_psn = vroce_psn_add(pkt->bth.psn, npkts - 1);
	res->msn = ++resp->msn;
	/* The resource holds the MR until its last response is built. */
	res->mr = mr;
	res->mr_key = mr_key;
	vroce_rd_start(&res->rd, pkt->bth.psn, reth.va, reth.dma_len);
	/* The responses use the PSNs up to the last one. */
	resp->epsn = vroce_psn_add(resp->epsn, npkts - 1);
	return VROCE_RESP_OK;
}

static enum vroce_verdict vroce_resp_atomic(struct vroce_qp *qp,
					    const struct vroce_pkt *pkt,
					    const u8 *bth,
					    struct sk_buff_head *q)
{
	struct vroce_resp *resp = &qp->resp;
	struct vroce_atmeth a;
	struct vroce_res *res;
	struct vroce_mr *mr;
	u32 mr_key;
	u64 orig;
	int err;

	vroce_atmeth_parse(&a, vroce_pkt_hdr(pkt, bth, VROCE_HDR_ATMETH),
			   VROCE_ATMETH_LEN);
	if (a.va & 7 || !vroce_resp_rd_room(qp))
		return VROCE_RESP_INV_REQ;
	mr = vroce_mr_get_remote(qp, a.rkey, &a.va, sizeof(u64),
				 IB_ACCESS_REMOTE_ATOMIC, &mr_key);
	if (!mr)
		return VROCE_RESP_ACCESS_ERR;
	err = vroce_mr_atomic(mr, mr_key, a.va, vroce_rc_opcode(pkt), a.swap_add,
			      a.compare, &orig);
	if (err == -EAGAIN)
		err = vroce_odp_missed(mr, a.va, 8, 8);
	vroce_mr_put(mr);
	if (err == -EAGAIN)
		return VROCE_RESP_RNR;	/* its ODP page is faulted in */
	if (err == -EACCES)
		return VROCE_RESP_ACCESS_ERR;	/* deregistered meanwhile */
	if (err)
		return VROCE_RESP_INV_REQ;
	resp->msn++;
	/* Its ACK comes after what the READs before it still send. */
	vroce_resp_atomic_ack(qp, q, pkt->bth.psn, orig);
	res = vroce_resp_new_res(resp);
	res->kind = VROCE_OPF_ATOMIC;
	res->first_psn = pkt->bth.psn;
	res->last_psn = pkt->bth.psn;
	res->orig = orig;
	res->msn = resp->msn;
	if (resp->res_tail == res->idx)
		resp->res_tail++;	/* nothing before it: all sent */
	return VROCE_RESP_OK;
}

/*
 * An RDMA Atomic Write (IBTA 1.5): its 8 bytes go, in one store, to an
 * 8-byte aligned address the R_Key opens for remote write. Like a READ it
 * takes a responder resource and is answered by an RDMA READ response, of
 * no data; a duplicate gets that answer again and is not done again.
 */
static enum vroce_verdict vroce_resp_atomic_write(struct vroce_qp *qp,
						  const struct vroce_pkt *pkt,
						  const u8 *bth,
						  struct sk_buff_head *q)
{
	struct vroce_resp *resp = &qp->resp;
	struct vroce_reth reth;
	struct vroce_res *res;
	struct vroce_mr *mr;
	u32 mr_key;
	u64 val;
	int err;

	vroce_reth_parse(&reth, vroce_pkt_hdr(pkt, bth, VROCE_HDR_RETH),
			 VROCE_RETH_LEN);
	if (reth.dma_len != sizeof(val) || pkt->paylen != sizeof(val) ||
	    reth.va & 7 || !vroce_resp_rd_room(qp))
		return VROCE_RESP_INV_REQ;
	mr = vroce_mr_get_remote(qp, reth.rkey, &reth.va, sizeof(val),
				 IB_ACCESS_REMOTE_WRITE, &mr_key);
	if (!mr)
		return VROCE_RESP_ACCESS_ERR;
	err = vroce_pkt_read_pay(pkt, &val, sizeof(val));
	if (!err)
		err = vroce_mr_atomic(mr, mr_key, reth.va,
				      vroce_rc_opcode(pkt), val, 0, NULL);
	if (err == -EAGAIN)
		err = vroce_odp_missed(mr, reth.va, 8, 8);
	vroce_mr_put(mr);
	if (err == -EAGAIN)
		return VROCE_RESP_RNR;	/* its ODP page is faulted in */
	if (err == -EACCES)
		return VROCE_RESP_ACCESS_ERR;	/* deregistered meanwhile */
	if (err)
		return VROCE_RESP_INV_REQ;
	/* Its answer is sent as a READ's responses are, in PSN order. */
	vroce_resp_take_pending_ack(qp, q);
	res = vroce_resp_new_res(resp);
	res->kind = VROCE_OPF_ATOMIC_WRITE;
	res->first_psn = pkt->bth.psn;
	res->last_psn = pkt->bth.psn;
	res->msn = ++resp->msn;
	vroce_rd_start(&res->rd, pkt->bth.psn, 0, 0);
	return VROCE_RESP_OK;
}

/* Middle and last packets continue a message; the rest start one. */
static bool vroce_resp_seq_ok(struct vroce_resp *resp,
			      const struct vroce_pkt *pkt)
{
	u8 pos = pkt->op->pos;
	bool cont = pos == VROCE_POS_MIDDLE || pos == VROCE_POS_LAST;

	if (resp->cur)
		return cont && vroce_kind(pkt) == resp->cur;
	return !cont;
}

static bool vroce_resp_access_ok(struct vroce_qp *qp,
				 const struct vroce_pkt *pkt)
{
	int flags = qp->attrs.access_flags;

	switch (vroce_kind(pkt)) {
	case VROCE_OPF_WRITE:
	case VROCE_OPF_ATOMIC_WRITE:
		return flags & IB_ACCESS_REMOTE_WRITE;
	case VROCE_OPF_READ:
		return flags & IB_ACCESS_REMOTE_READ;
	case VROCE_OPF_ATOMIC:
		return flags & IB_ACCESS_REMOTE_ATOMIC;
	default:
		return true;
	}
}

/* First and middle packets are full; a last one is not empty. */
static bool vroce_resp_len_ok(struct vroce_resp *resp,
			      const struct vroce_pkt *pkt)
{
	switch (pkt->op->pos) {
	case VROCE_POS_FIRST:
	case VROCE_POS_MIDDLE:
		return pkt->paylen == resp->mtu;
	case VROCE_POS_LAST:
		return pkt->paylen && pkt->paylen <= resp->mtu;
	default:
		return pkt->paylen <= resp->mtu;
	}
}

/* The request with the expected PSN: checks, then executes it. */
static enum vroce_verdict vroce_resp_execute(struct vroce_qp *qp,
					     const struct vroce_pkt *pkt,
					     const u8 *bth,
					     struct sk_buff_head *q)
{
	struct vroce_resp *resp = &qp->resp;
	enum vroce_verdict v;

	if (!vroce_resp_seq_ok(resp, pkt) || !vroce_resp_access_ok(qp, pkt))
		return VROCE_RESP_INV_REQ;
	switch (vroce_kind(pkt)) {
	case VROCE_OPF_SEND:
		if (!vroce_resp_len_ok(resp, pkt))
			return VROCE_RESP_INV_REQ;
		v = vroce_resp_send(qp, pkt, bth);
		break;
	case VROCE_OPF_WRITE:
		if (!vroce_resp_len_ok(resp, pkt))
			return VROCE_RESP_INV_REQ;
		v = vroce_resp_write(qp, pkt, bth);
		break;
	case VROCE_OPF_READ:
		v = vroce_resp_read(qp, pkt, bth, q);
		break;
	case VROCE_OPF_ATOMIC:
		v = vroce_resp_atomic(qp, pkt, bth, q);
		break;
	case VROCE_OPF_ATOMIC_WRITE:
		v = vroce_resp_atomic_write(qp, pkt, bth, q);
		break;
	default:
		return VROCE_RESP_DROP;
	}
	if (v == VROCE_RESP_OK)
		resp->epsn = vroce_psn_add(resp->epsn, 1);
	return v;
}

/*
 * Acknowledges @psn (and all before it) once the current batch of
 * received packets is handled (resp_ack.c). Caller holds the lock.
 */
static void vroce_resp_ack_later(struct vroce_qp *qp, u32 psn)
{
	struct vroce_resp *resp = &qp->resp;

	resp->ack_psn = psn;
	resp->ack_msn = resp->msn;
	resp->ack_pending = true;
	if (!resp->ack_queued) {
		resp->ack_queued = true;
		vroce_ack_queue(qp);
	}
}

/* The tasklet of resp_ack.c: the QP is off its list; its ACK goes out. */
void vroce_resp_send_pending_ack(struct vroce_qp *qp)
{
	struct sk_buff_head q;

	__skb_queue_head_init(&q);
	spin_lock_bh(&qp->resp.lock);
	qp->resp.ack_queued = false;
	/* Not ahead of READ responses: the sender sends it after them. */
	if (qp->resp.failed)
		qp->resp.ack_pending = false;
	else if (!vroce_resp_busy(&qp->resp))
		vroce_resp_take_pending_ack(qp, &q);
	spin_unlock_bh(&qp->resp.lock);
	vroce_qp_xmit_queue(qp, &q);
}

/*
 * A request with a PSN before the expected one: answer it again. A READ
 * or atomic is checked as a first one is (the QP's access flags; for a
 * READ the R_Key, access and bounds too): what fails is an error of the
 * QP as it would have been then.
 */
static enum vroce_verdict vroce_resp_duplicate(struct vroce_qp *qp,
					       const struct vroce_pkt *pkt,
					       const u8 *bth,
					       struct sk_buff_head *q)
{
	struct vroce_resp *resp = &qp->resp;
	u32 psn = pkt->bth.psn;
	struct vroce_reth reth;
	struct vroce_mr *mr = NULL;
	u32 mr_key = 0;
	struct vroce_res *res = NULL;
	long long len;
	u32 i;

	vroce_count(to_vdev(qp->ibqp.device), VROCE_CNT_DUP_REQUESTS, 1);
	for (i = 0; i < VROCE_MAX_QP_RD_ATOM; i++) {
		if (resp->res[i].kind == vroce_kind(pkt) &&
		    vroce_psn_in_window(psn, resp->res[i].first_psn,
					vroce_psn_diff(resp->res[i].last_psn,
						       resp->res[i].first_psn) +
					1))
			res = &resp->res[i];
	}
	/*
	 * A READ or atomic we did not answer (or no longer keep) gets
	 * nothing, and is not judged either: anyone who knows the QP number
	 * can send one with an old PSN, and it must not end the QP.
	 */
	if ((vroce_kind(pkt) & VROCE_RESP_ANSWERED) && !res)
		return VROCE_RESP_OK;
	if ((vroce_kind(pkt) & VROCE_RESP_ANSWERED) &&
	    !vroce_resp_access_ok(qp, pkt))
		return VROCE_RESP_INV_REQ;
	switch (vroce_kind(pkt)) {
	case VROCE_OPF_READ:
		/* A READ resent from the middle names what is still missing. */
		vroce_reth_parse(&reth, vroce_pkt_hdr(pkt, bth, VROCE_HDR_RETH),
				 VROCE_RETH_LEN);
		if (reth.dma_len > VROCE_MAX_MSG_SZ)
			return VROCE_RESP_INV_REQ;
		len = vroce_rd_resume_len(res->first_psn, res->last_psn, psn,
					  reth.dma_len, resp->mtu);
		if (len < 0)
			break;
		reth.dma_len = len;
		if (reth.dma_len) {
			mr = vroce_mr_get_remote(qp, reth.rkey, &reth.va,
						 reth.dma_len,
						 IB_ACCESS_REMOTE_READ,
						 &mr_key);
			if (!mr)
				return VROCE_RESP_ACCESS_ERR;
		}
		/* Its responses start again from there, nothing built yet. */
		vroce_res_stop(res);
		res->mr = mr;
		res->mr_key = mr_key;
		vroce_rd_start(&res->rd, psn, reth.va, reth.dma_len);
		if ((s32)(res->idx - resp->res_tail) < 0)
			resp->res_tail = res->idx;
		break;
	case VROCE_OPF_ATOMIC:
		if (res && res->first_psn == psn)
			vroce_resp_atomic_ack(qp, q, psn, res->orig);
		break;
	case VROCE_OPF_ATOMIC_WRITE:
		/* Its answer again, from the resource; the write is not redone. */
		vroce_res_stop(res);
		vroce_rd_start(&res->rd, psn, 0, 0);
		if ((s32)(res->idx - resp->res_tail) < 0)
			resp->res_tail = res->idx;
		break;
	default:
		if (pkt->bth.ackreq)
			vroce_resp_ack(qp, q, vroce_aeth_syn_ack(VROCE_AETH_CREDIT_INVALID),
				       vroce_psn_add(resp->epsn, -1));
		break;
	}
	return VROCE_RESP_OK;
}

/* A fatal error of a request: NAK it, and the QP goes to ERR. */
static void vroce_resp_error(struct vroce_qp *qp, enum vroce_verdict v,
			     u32 psn, struct sk_buff_head *q)
{
	unsigned int code = VROCE_NAK_REMOTE_OP_ERR;
	int event = IB_EVENT_QP_FATAL;

	if (v == VROCE_RESP_INV_REQ) {
		code = VROCE_NAK_INVALID_REQ;
		event = IB_EVENT_QP_REQ_ERR;
	} else if (v == VROCE_RESP_ACCESS_ERR) {
		code = VROCE_NAK_REMOTE_ACCESS_ERR;
		event = IB_EVENT_QP_ACCESS_ERR;
	}
	vroce_resp_ack(qp, q, vroce_aeth_syn_nak(code), psn);
	qp->resp.failed = true;
	vroce_qp_error(qp, event);
}

/*
 * An RC request: true if it was executed, or taken as a duplicate (answered
 * again, or ignored if it was never answered); false if it was dropped (out
 * of sequence, refused, or an RNR).
 */
static bool vroce_resp_rc(struct vroce_qp *qp, const struct vroce_pkt *pkt,
			  const u8 *bth, struct sk_buff_head *q)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	struct vroce_resp *resp = &qp->resp;
	s32 d = vroce_psn_diff(pkt->bth.psn, resp->epsn);
	enum vroce_verdict v;

	if (d > 0) {
		/* A gap: one NAK until the expected PSN comes. */
		if (!resp->nak_sent) {
			resp->nak_sent = true;
			vroce_count(vdev, VROCE_CNT_SEQ_NAK_SENT, 1);
			vroce_resp_ack(qp, q,
				       vroce_aeth_syn_nak(VROCE_NAK_PSN_SEQ_ERR),
				       resp->epsn);
		}
		return false;
	}
	if (d < 0) {
		v = vroce_resp_duplicate(qp, pkt, bth, q);
		if (v != VROCE_RESP_OK)
			vroce_resp_error(qp, v, pkt->bth.psn, q);
		return v == VROCE_RESP_OK;
	}
	resp->nak_sent = false;
	v = vroce_resp_execute(qp, pkt, bth, q);
	switch (v) {
	case VROCE_RESP_OK:
		if (pkt->bth.ackreq &&
		    (vroce_kind(pkt) & (VROCE_OPF_SEND | VROCE_OPF_WRITE)))
			vroce_resp_ack_later(qp, pkt->bth.psn);
		return true;
	case VROCE_RESP_RNR:
		/* What follows in flight is resent anyway: no sequence NAK. */
		resp->nak_sent = true;
		vroce_count(vdev, VROCE_CNT_RNR_NAK_SENT, 1);
		vroce_resp_ack(qp, q,
			       vroce_aeth_syn_rnr_nak(qp->attrs.min_rnr_timer),
			       pkt->bth.psn);
		break;
	case VROCE_RESP_DROP:
		break;
	default:
		vroce_resp_error(qp, v, pkt->bth.psn, q);
		break;
	}
	return false;
}

/*
 * XRC target: an RC responder whose receive WQEs, PD and CQ are those of
 * the XRC SRQ each request names (XRCETH), which must be of the QP's XRC
 * domain; a SEND goes on into the SRQ it started in. Anything else is an
 * Invalid Request if it is the request expected next, and dropped if not,
 * as the RC responder treats what is out of sequence: a packet that
 * guessed no PSN cannot end the QP.
 */
static bool vroce_resp_xrc(struct vroce_qp *qp, const struct vroce_pkt *pkt,
			   const u8 *bth, struct sk_buff_head *q)
{
	struct vroce_resp *resp = &qp->resp;
	struct vroce_srq *srq;
	u32 srqn;
	bool used;

	vroce_xrceth_parse(&srqn, vroce_pkt_hdr(pkt, bth, VROCE_HDR_XRCETH),
			   VROCE_XRCETH_LEN);
	srq = vroce_xsrq_find(qp, srqn);
	if (pkt->bth.psn == resp->epsn &&
	    (!srq || (resp->have_wqe && srqn != resp->wqe_srqn))) {
		vroce_resp_error(qp, VROCE_RESP_INV_REQ, pkt->bth.psn, q);
		return false;
	}
	if (!srq)
		return false;
	resp->xsrq = srq;
	used = vroce_resp_rc(qp, pkt, bth, q);
	resp->xsrq = NULL;
	return used;
}

/*
 * UC: no answers; a gap or an error drops the message in progress. True
 * if the packet was executed.
 */
static bool vroce_resp_uc(struct vroce_qp *qp, const struct vroce_pkt *pkt,
			  const u8 *bth, struct sk_buff_head *q)
{
	struct vroce_resp *resp = &qp->resp;
	u8 pos = pkt->op->pos;

	if (pkt->bth.psn != resp->epsn || !vroce_resp_seq_ok(resp, pkt)) {
		vroce_resp_abort(qp);
		resp->epsn = vroce_psn_add(pkt->bth.psn, 1);
		if (pos != VROCE_POS_FIRST && pos != VROCE_POS_ONLY)
			return false;
		resp->epsn = pkt->bth.psn;
	}
	if (vroce_resp_execute(qp, pkt, bth, q) != VROCE_RESP_OK) {
		vroce_resp_abort(qp);
		resp->epsn = vroce_psn_add(pkt->bth.psn, 1);
		return false;
	}
	return true;
}

/*
 * A request packet for @qp, an RC or UC QP (ICRC and headers checked):
 * true if it was used, false if it was dropped (rx.c counts which).
 */
bool vroce_resp_rx(struct vroce_qp *qp, const struct vroce_pkt *pkt,
		   const u8 *bth)
{
	/* What the state lets us use is set before it (vroce_qp_set_state). */
	int state = smp_load_acquire(&qp->attrs.state);
	struct sk_buff_head q;
	bool push, used = false;

	if (state < IB_QPS_RTR || state == IB_QPS_ERR)
		return false;
	__skb_queue_head_init(&q);
	spin_lock_bh(&qp->resp.lock);
	if (!qp->resp.failed) {
		if (vroce_qp_is_xrc_tgt(qp))
			used = vroce_resp_xrc(qp, pkt, bth, &q);
		else if (qp->ibqp.qp_type == IB_QPT_RC)
			used = vroce_resp_rc(qp, pkt, bth, &q);
		else
			used = vroce_resp_uc(qp, pkt, bth, &q);
	}
	/* READ responses or answers behind them, and nobody sending. */
	push = vroce_resp_busy(&qp->resp) && !qp->resp.tx_owner;
	spin_unlock_bh(&qp->resp.lock);
	vroce_qp_xmit_queue(qp, &q);
	/* A first few responses now; the send engine does the rest. */
	if (push && vroce_resp_push(qp, VROCE_RESP_RX_BUDGET))
		vroce_tx_kick(qp);
	return used;
}
