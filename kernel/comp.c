// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The completer of RC QPs: ACKs, NAKs, READ responses and atomic ACKs
 * from the responder complete the requester's WQEs in order, and timers
 * run beside it. The retransmit timer (4.096 us * 2^timeout) fires when
 * nothing was acknowledged for that long and sends the engine back to
 * the oldest unacknowledged PSN, retry_cnt times; the RNR timer waits
 * out an RNR NAK, rnr_retry times (7: forever); the back-off timer
 * restarts an engine that could not allocate a packet; the stream timer
 * ends a stream's wait for an ACK (req.c) when its hold ends. A gap in
 * what comes back (an ACK past a READ whose responses were lost, a
 * response after a lost one, a sequence NAK) sends the engine back at
 * once, once per PSN.
 * It runs in the receive path and in timer context, under the
 * requester's lock, and never transmits: it kicks the send engine.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/jiffies.h>
#include <linux/sched/clock.h>
#include <linux/timer.h>

#include "vroce.h"
#include "vroce_trace.h"
#include "core/roce.h"

/* The QP's timeout, or longer where acknowledgements take longer. */
static unsigned long vroce_retry_jiffies(struct vroce_qp *qp)
{
	u64 floor_us = div_u64(4096ULL << qp->attrs.timeout, NSEC_PER_USEC);
	u32 us = vroce_rtt_timeout(&qp->req.rtt, min_t(u64, floor_us, U32_MAX));

	return max_t(unsigned long, usecs_to_jiffies(us), 1);
}

/* An acknowledgement reached the PSN being timed: a round-trip sample. */
static void vroce_comp_rtt(struct vroce_req *req)
{
	u64 ns;

	if (!req->rtt_on || !vroce_psn_before(req->rtt_psn, req->una))
		return;
	ns = local_clock() - req->rtt_start;
	vroce_rtt_sample(&req->rtt, min_t(u64, div_u64(ns, NSEC_PER_USEC),
					  U32_MAX));
	req->rtt_on = false;
}

/*
 * Starts the retransmit timer if it is not running; with @restart, from
 * now in any case (something was acknowledged). Caller holds the lock.
 */
void vroce_comp_arm(struct vroce_qp *qp, bool restart)
{
	struct timer_list *t = &qp->req.retry_timer;

	/* Timeout 0 means no timer at all (IBTA 9.7.6.1.3). */
	if (!qp->attrs.timeout || READ_ONCE(qp->dying))
		return;
	if (restart || !timer_pending(t)) {
		qp->req.timer_confirm = false;
		mod_timer(t, jiffies + vroce_retry_jiffies(qp));
	}
}

/* A loss: less in flight, so that recovery resends less (core/ack.h). */
static void vroce_comp_shrink(struct vroce_req *req)
{
	req->window = vroce_window_shrink(req->window);
}

/* Goes back to una once for each una; false if it did already. */
static bool vroce_comp_resync(struct vroce_qp *qp)
{
	struct vroce_req *req = &qp->req;

	if (req->resynced && req->resync_psn == req->una)
		return false;
	req->resynced = true;
	req->resync_psn = req->una;
	/* The responder told us where it is: resend all from there. */
	req->probe = false;
	vroce_comp_shrink(req);
	vroce_req_rewind(qp);
	return true;
}

static void vroce_retry_timeout(struct timer_list *t)
{
	struct vroce_qp *qp = from_timer(qp, t, req.retry_timer);
	struct vroce_req *req = &qp->req;
	bool kick = false;

	spin_lock_bh(&req->lock);
	if (req->failed || req->rnr_wait || vroce_req_idle(qp))
		goto out;
	/*
	 * The first expiry looks again two ticks later. After the CPU was
	 * held up (a busy host, a descheduled VM) the timer softirq runs
	 * before the receive softirq has handled the acknowledgements that
	 * arrived meanwhile; they get their turn first.
	 */
	if (!req->timer_confirm) {
		req->timer_confirm = true;
		mod_timer(t, jiffies + 2);
		goto out;
	}
	req->timer_confirm = false;
	vroce_count(to_vdev(qp->ibqp.device), VROCE_CNT_TIMEOUTS, 1);
	trace_vroce_timeout(&qp->ibqp, req->una, req->retries);
	if (!req->retries) {
		vroce_req_fail(qp, IB_WC_RETRY_EXC_ERR);
		goto out;
	}
	req->retries--;
	req->resynced = true;
	req->resync_psn = req->una;
	req->probe = true;
	vroce_comp_shrink(req);
	vroce_req_rewind(qp);
	kick = true;
out:
	spin_unlock_bh(&req->lock);
	if (kick)
		vroce_tx_kick(qp);
}

static void vroce_rnr_timeout(struct timer_list *t)
{
	struct vroce_qp *qp = from_timer(qp, t, req.rnr_timer);
	struct vroce_req *req = &qp->req;
	bool kick = false;

	spin_lock_bh(&req->lock);
	if (req->rnr_wait && !req->failed) {
		req->rnr_wait = false;
		vroce_req_rewind(qp);
		kick = true;
	}
	spin_unlock_bh(&req->lock);
	if (kick)
		vroce_tx_kick(qp);
}

static void vroce_nomem_timeout(struct timer_list *t)
{
	struct vroce_qp *qp = from_timer(qp, t, req.nomem_timer);
	struct vroce_req *req = &qp->req;
	bool kick;

	spin_lock_bh(&req->lock);
	kick = req->nomem_wait;
	req->nomem_wait = false;
	spin_unlock_bh(&req->lock);
	if (kick)
		vroce_tx_kick(qp);
}

/* How long an engine without packet memory waits before it tries again. */
#define VROCE_NOMEM_BACKOFF_MS	4

/*
 * No memory for the next packet: the engine stops and tries again
 * VROCE_NOMEM_BACKOFF_MS later (a jiffy at least), rather than spin while
 * memory is short. Nothing was sent, so nothing is rewound. Caller holds
 * the requester's lock.
 */
void vroce_comp_nomem(struct vroce_qp *qp)
{
	unsigned long delay = max_t(unsigned long, 1,
				    msecs_to_jiffies(VROCE_NOMEM_BACKOFF_MS));

	qp->req.nomem_wait = true;
	if (!READ_ONCE(qp->dying))
		mod_timer(&qp->req.nomem_timer, jiffies + delay);
}

/*
 * The hold ended with no acknowledgement to end the wait. Until one
 * completes something, the engine does not hold the stream again: it
 * takes what was posted and sleeps with need-wakeup set, so a QP whose
 * ACK was lost (and whose retransmit timer is long, or off) is not
 * woken every hold for nothing.
 */
static void vroce_stream_timeout(struct timer_list *t)
{
	struct vroce_qp *qp = from_timer(qp, t, req.stream_timer);
	struct vroce_req *req = &qp->req;

	spin_lock_bh(&req->lock);
	req->stream_ended = true;
	req->stream_end_tail = req->tail;
	spin_unlock_bh(&req->lock);
	vroce_tx_kick(qp);
}

/*
 * The engine waits for an acknowledgement in a stream whose hold ends
 * @left_ns from now (req.c): it is kicked then (two jiffies later at
 * most; never earlier) if none came, so the wait stays bounded when the
 * acknowledgement was lost and the retransmit timer is long, or off. A
 * timer that fires after an acknowledgement has kicked the engine costs
 * one run that finds nothing. Caller holds the requester's lock.
 */
void vroce_comp_stream(struct vroce_qp *qp, u64 left_ns)
{
	if (!READ_ONCE(qp->dying))
		mod_timer(&qp->req.stream_timer,
			  jiffies + 2 + nsecs_to_jiffies(left_ns));
}

void vroce_comp_init(struct vroce_qp *qp)
{
	timer_setup(&qp->req.retry_timer, vroce_retry_timeout, 0);
	timer_setup(&qp->req.rnr_timer, vroce_rnr_timeout, 0);
	timer_setup(&qp->req.nomem_timer, vroce_nomem_timeout, 0);
	timer_setup(&qp->req.stream_timer, vroce_stream_timeout, 0);
}

/* Process context, no lock: no timer runs or is armed after this. */
void vroce_comp_stop(struct vroce_qp *qp)
{
	del_timer_sync(&qp->req.retry_timer);
	del_timer_sync(&qp->req.rnr_timer);
	del_timer_sync(&qp->req.nomem_timer);
	del_timer_sync(&qp->req.stream_timer);
}

/* The PSN a READ or atomic waits for a response to. */
static u32 vroce_comp_resume_psn(struct vroce_qp *qp, struct vroce_swqe *sw)
{
	return vroce_psn_add(sw->first_psn, sw->read_off / qp->req.mtu);
}

/*
 * Completes what an acknowledgement of every PSN up to @psn covers.
 * READs and atomics complete by their responses only: false if @psn
 * passes one whose responses were lost, which must then be resent.
 */
static bool vroce_comp_acked(struct vroce_qp *qp, u32 psn)
{
	struct vroce_req *req = &qp->req;
	const struct vroce_send_wqe *w;
	struct vroce_swqe *sw;
	u32 last;

	while (req->tail != req->head) {
		sw = vroce_swqe(qp, qp->req.tail);
		w = vroce_swqe_wqe(qp, qp->req.tail);
		if (!sw->started)
			break;
		if (vroce_wr_is_rd_atomic(w->opcode))
			return vroce_psn_before(psn,
						vroce_comp_resume_psn(qp, sw));
		last = vroce_psn_add(sw->first_psn, sw->npkts - 1);
		if (vroce_psn_before(psn, last)) {
			if (!vroce_psn_before(psn, req->una))
				req->una = vroce_psn_add(psn, 1);
			break;
		}
		req->una = vroce_psn_add(last, 1);
		vroce_req_complete(qp, IB_WC_SUCCESS);
	}
	return true;
}

static void vroce_comp_rnr(struct vroce_qp *qp, unsigned int code)
{
	struct vroce_req *req = &qp->req;
	unsigned long delay;

	if (qp->attrs.rnr_retry != 7) {
		if (!req->rnr_retries) {
			vroce_req_fail(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		req->rnr_retries--;
	}
	req->rnr_wait = true;
	del_timer(&req->retry_timer);
	delay = max_t(unsigned long,
		      usecs_to_jiffies(vroce_rnr_timer_usecs(code)), 1);
	if (!READ_ONCE(qp->dying))
		mod_timer(&req->rnr_timer, jiffies + delay);
}

static u8 vroce_nak_status(unsigned int code)
{
	switch (code) {
	case VROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case VROCE_NAK_REMOTE_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case VROCE_NAK_REMOTE_OP_ERR:
		return IB_WC_REM_OP_ERR;
	case VROCE_NAK_INVALID_RD_REQ:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_BAD_RESP_ERR;
	}
}

/* An ACK, RNR NAK or NAK for @psn. */
static void vroce_comp_aeth(struct vroce_qp *qp, const struct vroce_pkt *pkt,
			    const u8 *bth, u32 psn)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	struct vroce_aeth aeth;
	unsigned int value;

	vroce_aeth_parse(&aeth, vroce_pkt_hdr(pkt, bth, VROCE_HDR_AETH),
			 VROCE_AETH_LEN);
	value = vroce_aeth_syn_value(aeth.syndrome);
	if (vroce_aeth_syn_type(aeth.syndrome) == VROCE_AETH_ACK) {
		if (!vroce_comp_acked(qp, psn))
			vroce_comp_resync(qp);
		return;
	}
	/* A NAK acknowledges everything before its PSN. */
	if (!vroce_comp_acked(qp, vroce_psn_add(psn, -1))) {
		vroce_comp_resync(qp);
		return;
	}
	if (psn != qp->req.una)
		return;
	switch (vroce_aeth_syn_type(aeth.syndrome)) {
	case VROCE_AETH_RNR_NAK:
		trace_vroce_nak_rcvd(&qp->ibqp, psn, aeth.syndrome);
		vroce_count(vdev, VROCE_CNT_RNR_NAK_RCVD, 1);
		vroce_comp_rnr(qp, value);
		break;
	case VROCE_AETH_NAK:
		trace_vroce_nak_rcvd(&qp->ibqp, psn, aeth.syndrome);
		if (value == VROCE_NAK_PSN_SEQ_ERR) {
			vroce_count(vdev, VROCE_CNT_SEQ_NAK_RCVD, 1);
			vroce_comp_resync(qp);
		} else {
			vroce_req_fail(qp, vroce_nak_status(value));
		}
		break;
	default:
		break;
	}
}

/*
 * A READ response or atomic ACK must answer the oldest unacknowledged
 * PSN; it acknowledges the SENDs and WRITEs before it. Returns the WQE it
 * answers, or NULL if it is a duplicate or shows a gap (then resends).
 * @wr_opcode is the WQE's opcode an atomic ACK answers; a READ response
 * (@wr_opcode RDMA_READ) answers a READ or an atomic write.
 */
static struct vroce_swqe *vroce_comp_answer(struct vroce_qp *qp, u32 psn,
					    u8 wr_opcode)
{
	struct vroce_req *req = &qp->req;
	const struct vroce_send_wqe *w;
	struct vroce_swqe *sw;

	if (vroce_psn_after(psn, req->una) &&
	    !vroce_comp_acked(qp, vroce_psn_add(psn, -1))) {
		vroce_comp_resync(qp);
		return NULL;
	}
	if (psn != req->una) {
		if (vroce_psn_after(psn, req->una))
			vroce_comp_resync(qp);
		return NULL;
	}
	if (req->tail == req->head)
		return NULL;
	sw = vroce_swqe(qp, qp->req.tail);
	w = vroce_swqe_wqe(qp, qp->req.tail);
	if (w->opcode == VROCE_WR_ATOMIC_WRITE &&
	    wr_opcode == IB_UVERBS_WR_RDMA_READ)
		wr_opcode = VROCE_WR_ATOMIC_WRITE;
	if (!sw->started || w->opcode != wr_opcode ||
	    psn != vroce_comp_resume_psn(qp, sw))
		return NULL;
	return sw;
}

/*
 * The READ response (IBTA 1.5: of no data) that answers the atomic write
 * the oldest WQE is.
 */
static void vroce_comp_atomic_write(struct vroce_qp *qp,
				    const struct vroce_pkt *pkt)
{
	if (pkt->op->pos != VROCE_POS_ONLY || pkt->paylen) {
		vroce_req_fail(qp, IB_WC_BAD_RESP_ERR);
		return;
	}
	qp->req.una = vroce_psn_add(qp->req.una, 1);
	vroce_req_complete(qp, IB_WC_SUCCESS);
}

static void vroce_comp_read(struct vroce_qp *qp, const struct vroce_pkt *pkt,
			    const u8 *bth, u32 psn)
{
	struct vroce_req *req = &qp->req;
	struct vroce_swqe *sw;
	bool last;
	u32 left;
	int err;

	sw = vroce_comp_answer(qp, psn, IB_UVERBS_WR_RDMA_READ);
	if (!sw)
		return;
	if (vroce_swqe_wqe(qp, req->tail)->opcode == VROCE_WR_ATOMIC_WRITE) {
		vroce_comp_atomic_write(qp, pkt);
		return;
	}
	left = sw->len - sw->read_off;
	last = pkt->op->pos == VROCE_POS_LAST || pkt->op->pos == VROCE_POS_ONLY;
	if (last ? pkt->paylen != left :
		   pkt->paylen != req->mtu || pkt->paylen >= left) {
		vroce_req_fail(qp, IB_WC_BAD_RESP_ERR);
		return;
	}
	/*
	 * A local MR deregistered meanwhile takes nothing. An ODP page
	 * invalidated since the READ went out (the engine mapped them all
	 * first): ask again from here, the engine maps it again first.
	 */
	err = vroce_sgl_write_pkt(&sw->sgl, sw->read_off, pkt);
	if (err == -EAGAIN) {
		sw->odp_ok = 0;
		vroce_req_rewind(qp);
		return;
	}
	if (err) {
		vroce_req_fail(qp, IB_WC_LOC_PROT_ERR);
		return;
	}
	sw->read_off += pkt->paylen;
	req->una = vroce_psn_add(req->una, 1);
	if (last)
		vroce_req_complete(qp, IB_WC_SUCCESS);
}

static void vroce_comp_atomic(struct vroce_qp *qp, const struct vroce_pkt *pkt,
			      const u8 *bth, u32 psn)
{
	const struct vroce_send_wqe *w = vroce_swqe_wqe(qp, qp->req.tail);
	struct vroce_atmack ack;
	struct vroce_swqe *sw;
	int err;

	if (qp->req.tail == qp->req.head ||
	    !vroce_wr_is_rd_atomic(w->opcode) ||
	    w->opcode == IB_UVERBS_WR_RDMA_READ ||
	    w->opcode == VROCE_WR_ATOMIC_WRITE)
		return;
	sw = vroce_comp_answer(qp, psn, w->opcode);
	if (!sw)
		return;
	vroce_atmack_parse(&ack, vroce_pkt_hdr(pkt, bth, VROCE_HDR_ATMACK),
			   VROCE_ATMACK_LEN);
	/*
	 * As for a READ response (vroce_comp_read()): the responder answers
	 * the atomic sent again with the value it kept.
	 */
	err = vroce_sgl_write(&sw->sgl, 0, &ack.orig, sizeof(u64));
	if (err == -EAGAIN) {
		sw->odp_ok = 0;
		vroce_req_rewind(qp);
		return;
	}
	if (err) {
		vroce_req_fail(qp, IB_WC_LOC_PROT_ERR);
		return;
	}
	qp->req.una = vroce_psn_add(qp->req.una, 1);
	vroce_req_complete(qp, IB_WC_SUCCESS);
}

/* After a packet: timers, budgets and the engine follow the progress. */
static bool vroce_comp_progress(struct vroce_qp *qp, u32 old_una,
				u32 old_tail, u32 old_next_psn)
{
	struct vroce_req *req = &qp->req;
	bool kick = false, probe;

	if (req->failed)
		return false;
	if (req->una != old_una || req->tail != old_tail) {
		probe = req->probe;
		req->retries = qp->attrs.retry_cnt;
		req->rnr_retries = qp->attrs.rnr_retry;
		req->probe = false;
		req->window = vroce_window_grow(req->window);
		vroce_comp_rtt(req);
		if (vroce_req_idle(qp))
			del_timer(&req->retry_timer);
		else
			vroce_comp_arm(qp, true);
		/* What was resent may have been acknowledged meanwhile. */
		if ((s32)(req->tail - req->next) > 0 ||
		    vroce_psn_before(req->next_psn, req->una))
			vroce_req_rewind(qp);
		if (req->blocked &&
		    vroce_req_unblocked(req->tail != old_tail, probe,
					req->next_psn, req->una,
					req->window)) {
			req->blocked = false;
			kick = true;
		}
	}
	if (req->next_psn != old_next_psn)
		kick = true;	/* a rewind: resend */
	if (qp->attrs.sq_draining && req->tail == req->head &&
	    vroce_req_idle(qp)) {
		qp->attrs.sq_draining = 0;
		vroce_qp_drained(qp);
	}
	return kick;
}

/*
 * A response packet for @qp, an RC QP (ICRC and headers checked): false
 * if it was dropped unused (no request outstanding, or a PSN outside
 * those sent and not yet acknowledged).
 */
bool vroce_comp_rx(struct vroce_qp *qp, const struct vroce_pkt *pkt,
		   const u8 *bth)
{
	struct vroce_req *req = &qp->req;
	u32 psn = pkt->bth.psn;
	u32 old_una, old_tail, old_next_psn;
	bool kick = false, used = false;

	spin_lock_bh(&req->lock);
	if (req->failed || vroce_req_idle(qp))
		goto out;
	/* Valid PSNs: from the last acknowledged one to the last sent. */
	if (vroce_psn_diff(psn, req->una) < -1 ||
	    !vroce_psn_before(psn, req->psn_hi))
		goto out;
	used = true;
	old_una = req->una;
	old_tail = req->tail;
	old_next_psn = req->next_psn;
	if (pkt->op->flags & VROCE_OPF_ACK)
		vroce_comp_aeth(qp, pkt, bth, psn);
	else if (pkt->op->flags & VROCE_OPF_READ_RESP)
		vroce_comp_read(qp, pkt, bth, psn);
	else if (pkt->op->flags & VROCE_OPF_ATOMIC_ACK)
		vroce_comp_atomic(qp, pkt, bth, psn);
	kick = vroce_comp_progress(qp, old_una, old_tail, old_next_psn);
out:
	spin_unlock_bh(&req->lock);
	if (kick)
		vroce_tx_kick(qp);
	return used;
}
