// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The QP state machine: modify_qp checks a transition and its attribute
 * mask against the IBTA table in core/qp_state.c, then every attribute
 * value, and only then changes anything. Entering ERR flushes both work
 * queues into their CQs; entering RESET discards them.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include "vroce.h"
#include "vroce_trace.h"
#include "core/roce.h"

/*
 * Flags a QP's access may hold: the remote operations it lets in, and
 * the local ones some applications pass too (perftest sets LOCAL_WRITE);
 * those two grant nothing on a QP and are accepted as no-ops.
 */
#define VROCE_QP_ACCESS		(IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_MW_BIND)

static int vroce_check_av(const struct rdma_ah_attr *ah)
{
	const struct ib_gid_attr *sgid = ah->grh.sgid_attr;

	if (!(rdma_ah_get_ah_flags(ah) & IB_AH_GRH) ||
	    rdma_ah_get_port_num(ah) != VROCE_PORT)
		return -EINVAL;
	/* vroce speaks RoCE v2 only. */
	if (!sgid || sgid->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	return 0;
}

static int vroce_check_values(const struct ib_qp_attr *a, int mask)
{
	if (mask & IB_QP_ALT_PATH)
		return -EOPNOTSUPP;	/* no automatic path migration */
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    a->path_mig_state != IB_MIG_MIGRATED)
		return -EOPNOTSUPP;
	if (((mask & IB_QP_PORT) && a->port_num != VROCE_PORT) ||
	    ((mask & IB_QP_PKEY_INDEX) && a->pkey_index >= VROCE_MAX_PKEYS) ||
	    ((mask & IB_QP_PATH_MTU) &&
	     (a->path_mtu < IB_MTU_256 || a->path_mtu > IB_MTU_4096)) ||
	    ((mask & IB_QP_TIMEOUT) && a->timeout > 31) ||
	    ((mask & IB_QP_RETRY_CNT) && a->retry_cnt > 7) ||
	    ((mask & IB_QP_RNR_RETRY) && a->rnr_retry > 7) ||
	    ((mask & IB_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31) ||
	    ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	     a->max_rd_atomic > VROCE_MAX_QP_RD_ATOM) ||
	    ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	     a->max_dest_rd_atomic > VROCE_MAX_QP_RD_ATOM) ||
	    ((mask & IB_QP_RQ_PSN) && a->rq_psn > VROCE_PSN_MASK) ||
	    ((mask & IB_QP_SQ_PSN) && a->sq_psn > VROCE_PSN_MASK) ||
	    ((mask & IB_QP_DEST_QPN) && a->dest_qp_num > VROCE_QPN_MASK) ||
	    ((mask & IB_QP_ACCESS_FLAGS) &&
	     (a->qp_access_flags & ~VROCE_QP_ACCESS)))
		return -EINVAL;
	if (mask & IB_QP_AV)
		return vroce_check_av(&a->ah_attr);
	return 0;
}

/* QP1 follows the UD rules, less the port (IBTA 11.2.5.3 notes). */
static enum vroce_qp_type vroce_check_type(struct ib_qp *ibqp)
{
	if (ibqp->qp_type == IB_QPT_GSI)
		return VROCE_QPT_UD;
	return (enum vroce_qp_type)ibqp->qp_type;
}

static int vroce_check_mask(struct ib_qp *ibqp, enum ib_qp_state cur,
			    enum ib_qp_state next, int mask)
{
	if (ibqp->qp_type == IB_QPT_GSI && cur == IB_QPS_RESET &&
	    next == IB_QPS_INIT)
		mask |= IB_QP_PORT;
	return mask;
}

static void vroce_apply(struct vroce_qp_attrs *q, const struct ib_qp_attr *a,
			int mask)
{
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		q->en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & IB_QP_ACCESS_FLAGS)
		q->access_flags = a->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		q->pkey_index = a->pkey_index;
	if (mask & IB_QP_QKEY)
		q->qkey = a->qkey;
	if (mask & IB_QP_AV)
		rdma_replace_ah_attr(&q->ah_attr, &a->ah_attr);
	if (mask & IB_QP_PATH_MTU)
		q->path_mtu = a->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		q->timeout = a->timeout;
	if (mask & IB_QP_RETRY_CNT)
		q->retry_cnt = a->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		q->rnr_retry = a->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		q->rq_psn = a->rq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = a->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		q->sq_psn = a->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IB_QP_PATH_MIG_STATE)
		q->path_mig_state = a->path_mig_state;
	if (mask & IB_QP_DEST_QPN)
		q->dest_qp_num = a->dest_qp_num;
}

u8 vroce_wc_opcode(u8 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_UVERBS_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_UVERBS_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_UVERBS_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_UVERBS_WC_FETCH_ADD;
	case VROCE_WR_ATOMIC_WRITE:
		return VROCE_WC_ATOMIC_WRITE;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_UVERBS_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_UVERBS_WC_BIND_MW;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_UVERBS_WC_SEND;
	}
}

/*
 * Completes every WQE user space has posted to @ring with a flush error.
 * Only wr_id and opcode of each WQE are used, from one copy of it.
 */
static void vroce_flush_ring(struct vroce_qp *qp, struct vroce_queue *ring,
			     struct vroce_cq *cq, bool send)
{
	struct vroce_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->ibqp.qp_num,
	};
	struct vroce_send_wqe wqe;
	int n = vroce_queue_produced(ring);

	if (n < 0) {
		pr_warn_ratelimited("vroce: QP %u: broken %s ring, not flushed\n",
				    qp->ibqp.qp_num, send ? "send" : "receive");
		return;
	}
	while (n--) {
		/* The header of a receive WQE is a prefix of a send WQE's. */
		memcpy(&wqe, vroce_queue_slot(ring, ring->own),
		       send ? sizeof(struct vroce_send_wqe) :
			      sizeof(struct vroce_recv_wqe));
		cqe.wr_id = wqe.wr_id;
		cqe.opcode = send ? vroce_wc_opcode(wqe.opcode) :
				    IB_WC_RECV;
		vroce_cq_add(cq, &cqe, false);
		ring->own++;
	}
	vroce_queue_publish_cons(ring);
}

void vroce_qp_flush(struct vroce_qp *qp)
{
	/* What the transport holds is older than what is left in the rings. */
	if (!vroce_qp_is_ud(qp)) {
		vroce_req_flush(qp);
		vroce_resp_flush(qp);
	}
	/* An XRC target has neither a SQ anyone posts to nor a CQ. */
	if (qp->ibqp.send_cq) {
		spin_lock_bh(&qp->sq_lock);
		vroce_flush_ring(qp, &qp->sq, to_vcq(qp->ibqp.send_cq), true);
		spin_unlock_bh(&qp->sq_lock);
	}
	/* Receives posted to an SRQ belong to the SRQ, not to this QP. */
	if (!vroce_qp_has_rq(qp))
		return;
	spin_lock_bh(&qp->rq_lock);
	vroce_flush_ring(qp, &qp->rq, to_vcq(qp->ibqp.recv_cq), false);
	spin_unlock_bh(&qp->rq_lock);
}

/*
 * Publishes the QP's state to the packet path, which reads it without a
 * lock: whatever a state lets a packet use is set before it.
 */
static void vroce_qp_set_state(struct vroce_qp *qp, enum ib_qp_state next)
{
	/* Pairs with smp_load_acquire() in vroce_resp_rx(). */
	smp_store_release(&qp->attrs.state, next);
}

/* Drops whatever is posted, without completions; caller holds the lock. */
static void vroce_discard_ring(struct vroce_queue *ring)
{
	int n = vroce_queue_produced(ring);

	if (n > 0)
		ring->own += n;
	vroce_queue_publish_cons(ring);
}

/*
 * The SQ and the requester: the requester's indices go on from the
 * ring's own index (it publishes the ring's cons from them), and the
 * whole ring is free once the requester lets go of what it held.
 */
static void vroce_qp_reset_sq(struct vroce_qp *qp)
{
	spin_lock_bh(&qp->sq_lock);
	vroce_discard_ring(&qp->sq);
	spin_unlock_bh(&qp->sq_lock);
	if (vroce_qp_is_ud(qp))
		return;
	vroce_req_reset(qp);
	spin_lock_bh(&qp->sq_lock);
	vroce_queue_publish_cons(&qp->sq);
	spin_unlock_bh(&qp->sq_lock);
}

/*
 * RESET is in force first, so that no packet starts anything; then the
 * responder takes no more receive WQEs (until RTR) and lets go of the
 * one it held, and only then are the rings emptied.
 */
static void vroce_qp_reset(struct vroce_qp *qp)
{
	vroce_qp_set_state(qp, IB_QPS_RESET);
	if (!vroce_qp_is_ud(qp))
		vroce_resp_reset(qp);
	vroce_qp_reset_sq(qp);
	/*
	 * A response or time-out handled before the requester went idle may
	 * have asked for ERR: the QP connected again must not get it.
	 */
	qp->err_event = -1;
	WRITE_ONCE(qp->err_pending, false);
	/* No engine runs for it: the first post after RTS wakes one. */
	WRITE_ONCE(qp->sq.hdr->notify, VROCE_SQ_NEEDS_WAKEUP);
	if (vroce_qp_has_rq(qp)) {
		spin_lock_bh(&qp->rq_lock);
		vroce_discard_ring(&qp->rq);
		spin_unlock_bh(&qp->rq_lock);
		WRITE_ONCE(qp->rq.hdr->notify, 0);
	}
	rdma_destroy_ah_attr(&qp->attrs.ah_attr);
	memset(&qp->attrs, 0, sizeof(qp->attrs));
	qp->attrs.port_num = VROCE_PORT;
}

static void vroce_qp_event(struct vroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* The SQ of a QP in SQD has nothing in flight any more. */
void vroce_qp_drained(struct vroce_qp *qp)
{
	if (qp->attrs.en_sqd_async_notify)
		vroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

/* Connected QPs: the path MTU, both ways, is what the port can carry. */
static void vroce_qp_rtr(struct vroce_qp *qp)
{
	u32 port = vroce_mtu_to_bytes(vroce_port_mtu(to_vdev(qp->ibqp.device)));
	u32 path = vroce_mtu_to_bytes(qp->attrs.path_mtu);

	qp->resp.mtu = max_t(u32, min(port, path), 256);
	vroce_resp_start(qp);
}

static void vroce_qp_sqd(struct vroce_qp *qp)
{
	bool busy = false;

	if (!vroce_qp_is_ud(qp)) {
		spin_lock_bh(&qp->req.lock);
		busy = qp->req.tail != qp->req.next || !vroce_req_idle(qp);
		qp->attrs.sq_draining = busy;
		spin_unlock_bh(&qp->req.lock);
	}
	if (!busy)
		vroce_qp_drained(qp);
}

/*
 * Into ERR: everything posted completes flushed. A QP on an SRQ takes no
 * more receives from it, which IBTA's Last WQE Reached event tells the
 * owner (so that it may destroy the QP without losing the SRQ's WQEs).
 */
static void vroce_qp_enter_err(struct vroce_qp *qp, enum ib_qp_state cur)
{
	/*
	 * The provider may not know of the move (the kernel made it): ask
	 * for the doorbell after every post from now on (vroce-abi.h).
	 */
	WRITE_ONCE(qp->sq.hdr->notify, VROCE_SQ_NEEDS_WAKEUP);
	if (vroce_qp_has_rq(qp))
		WRITE_ONCE(qp->rq.hdr->notify, VROCE_RQ_FLUSH);
	/*
	 * Pairs with the provider's barrier between prod and notify: either
	 * the flush sees a WQE posted meanwhile or its poster sees the flag.
	 */
	smp_mb();
	vroce_qp_flush(qp);
	if (qp->ibqp.srq && cur != IB_QPS_ERR)
		vroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/* What entering @next does to a connected (RC, UC) QP. */
static void vroce_qp_enter_conn(struct vroce_qp *qp, enum ib_qp_state cur,
				enum ib_qp_state next)
{
	switch (next) {
	case IB_QPS_ERR:
		vroce_qp_enter_err(qp, cur);
		break;
	case IB_QPS_RTR:
		if (cur == IB_QPS_INIT)
			vroce_qp_rtr(qp);
		break;
	case IB_QPS_RTS:
		if (cur == IB_QPS_RTR)
			vroce_req_start(qp);
		else
			vroce_tx_kick(qp);	/* from SQD: go on */
		break;
	case IB_QPS_SQD:
		if (cur != IB_QPS_SQD)
			vroce_qp_sqd(qp);
		break;
	default:
		break;
	}
}

static void vroce_qp_enter(struct vroce_qp *qp, enum ib_qp_state cur,
			   enum ib_qp_state next)
{
	if (cur != next)
		trace_vroce_qp_state(&qp->ibqp, cur, next);
	if (next == IB_QPS_RESET) {
		vroce_qp_reset(qp);
		return;
	}
	/* ERR and SQD hold things back: in force before the work. */
	if (next == IB_QPS_ERR || next == IB_QPS_SQD)
		vroce_qp_set_state(qp, next);
	if (!vroce_qp_is_ud(qp))
		vroce_qp_enter_conn(qp, cur, next);
	else if (next == IB_QPS_ERR)
		vroce_qp_enter_err(qp, cur);
	else if (next == IB_QPS_SQD)
		vroce_qp_drained(qp);
	else if (next == IB_QPS_RTS && cur == IB_QPS_SQD)
		vroce_tx_kick(qp);	/* what was posted in SQD goes now */
	/* INIT, RTR and RTS let packets in: only once all is set for them. */
	vroce_qp_set_state(qp, next);
}

/*
 * Asks for the QP to move to ERR, from any context; the send engine's
 * work item carries it out (with @event, if not -1) under the state lock.
 */
void vroce_qp_error(struct vroce_qp *qp, int event)
{
	if (event >= 0)
		qp->err_event = event;
	/* The event is set before the work item can see the request. */
	smp_store_release(&qp->err_pending, true);
	vroce_tx_kick(qp);
}

/* The work item's half of vroce_qp_error(); caller holds state_lock. */
void vroce_qp_error_move(struct vroce_qp *qp)
{
	int event = qp->err_event;

	WRITE_ONCE(qp->err_pending, false);
	qp->err_event = -1;
	if (qp->attrs.state == IB_QPS_RESET || qp->attrs.state == IB_QPS_ERR)
		return;
	vroce_qp_enter(qp, qp->attrs.state, IB_QPS_ERR);
	if (event >= 0)
		vroce_qp_event(qp, event);
}

int vroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct vroce_qp *qp = to_vqp(ibqp);
	enum ib_qp_state cur, next;
	struct vroce_path path;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (!vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;

	mutex_lock(&qp->state_lock);
	cur = qp->attrs.state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	err = -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		goto out;
	if (vroce_qp_modify_check(vroce_check_type(ibqp),
				  (enum vroce_qp_state)cur,
				  (enum vroce_qp_state)next,
				  vroce_check_mask(ibqp, cur, next, mask)))
		goto out;
	err = vroce_check_values(attr, mask);
	if (err)
		goto out;

	if ((mask & IB_QP_AV) && !vroce_qp_is_ud(qp)) {
		err = vroce_path_from_attr(to_vdev(ibqp->device), &attr->ah_attr,
					   &path);
		if (err)
			goto out;
		path.sport = vroce_udp_sport(ibqp->qp_num);
		vroce_path_new_route(&qp->routes, &path);
		/* Readers run in softirq too: BHs off while it changes. */
		write_seqlock_bh(&qp->path_lock);
		qp->path = path;
		write_sequnlock_bh(&qp->path_lock);
	}
	vroce_apply(&qp->attrs, attr, mask);
	if (mask & IB_QP_STATE)
		vroce_qp_enter(qp, cur, next);
out:
	mutex_unlock(&qp->state_lock);
	return err;
}
