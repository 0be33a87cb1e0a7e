// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation with their SQ and RQ rings, query, destruction,
 * and the post_send doorbell. The state machine is in qp_modify.c.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/log2.h>

#include "vroce.h"

#define VROCE_QPN_MIN		0x11	/* 0 and 1 are the special QPs */
#define VROCE_SEND_HDR		sizeof(struct vroce_send_wqe)
#define VROCE_RECV_HDR		sizeof(struct vroce_recv_wqe)
#define VROCE_SGE		sizeof(struct vroce_sge)

/*
 * The QP types we make. QP1 belongs to the kernel's MAD layer; no QP0 on
 * RoCE. An XRC initiator sends only, and has no receive queue; ib_core
 * creates an XRC target, whatever its owner, without udata: it has no
 * ring, only a responder.
 */
static int vroce_qp_check_type(struct ib_qp_init_attr *init,
			       struct ib_udata *udata)
{
	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		return 0;
	case IB_QPT_GSI:
		return udata ? -EOPNOTSUPP : 0;
	case IB_QPT_XRC_INI:
		/* Kernel WRs cannot name a remote SRQ. */
		if (!udata)
			return -EOPNOTSUPP;
		return init->srq || init->cap.max_recv_wr ? -EINVAL : 0;
	case IB_QPT_XRC_TGT:
		return init->xrcd ? 0 : -EINVAL;
	default:
		return -EOPNOTSUPP;
	}
}

static int vroce_qp_check_init(struct ib_qp_init_attr *init,
			       struct ib_udata *udata)
{
	struct ib_qp_cap *cap = &init->cap;
	int err = vroce_qp_check_type(init, udata);

	if (err)
		return err;
	if (init->create_flags || init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	if (udata && !vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;
	if (cap->max_send_wr > VROCE_MAX_QP_WR ||
	    cap->max_recv_wr > VROCE_MAX_QP_WR ||
	    cap->max_send_sge > VROCE_MAX_SGE ||
	    cap->max_recv_sge > VROCE_MAX_SGE ||
	    cap->max_inline_data > VROCE_MAX_INLINE)
		return -EINVAL;
	return 0;
}

/*
 * Rounds the requested capabilities up to what the rings really hold and
 * reports the real values back, as ibv_create_qp(3) promises.
 */
static void vroce_qp_size(struct ib_qp_cap *cap, u32 *sq_stride,
			  u32 *rq_stride)
{
	u32 payload = max_t(u32, cap->max_send_sge * VROCE_SGE,
			    cap->max_inline_data);

	*sq_stride = roundup_pow_of_two(VROCE_SEND_HDR + max_t(u32, payload,
							       VROCE_SGE));
	*rq_stride = roundup_pow_of_two(VROCE_RECV_HDR +
					max_t(u32, cap->max_recv_sge, 1) *
					VROCE_SGE);
	cap->max_send_wr = roundup_pow_of_two(max_t(u32, cap->max_send_wr, 1));
	cap->max_recv_wr = roundup_pow_of_two(max_t(u32, cap->max_recv_wr, 1));
	cap->max_send_sge = min_t(u32, (*sq_stride - VROCE_SEND_HDR) /
				  VROCE_SGE, VROCE_MAX_SGE);
	cap->max_inline_data = min_t(u32, *sq_stride - VROCE_SEND_HDR,
				     VROCE_MAX_INLINE);
	cap->max_recv_sge = min_t(u32, (*rq_stride - VROCE_RECV_HDR) /
				  VROCE_SGE, VROCE_MAX_SGE);
}

static int vroce_qp_resp(struct ib_udata *udata, struct vroce_qp *qp)
{
	struct vroce_create_qp_resp resp = {
		.sq_offset = qp->sq.mmap_offset,
		.rq_offset = qp->rq.mmap_offset,
		.sq_size = qp->sq.size,
		.rq_size = qp->rq.size,
		.sq_entries = qp->sq.entries,
		.rq_entries = qp->rq.entries,
		.sq_wqe_size = qp->sq.stride,
		.rq_wqe_size = qp->rq.stride,
		.qpn = qp->ibqp.qp_num,
	};

	return ib_copy_to_udata(udata, &resp, min(sizeof(resp),
						  udata->outlen));
}

static int vroce_qp_rings(struct vroce_qp *qp, struct ib_ucontext *ibuc,
			  u32 sq_stride, u32 rq_stride)
{
	int err;

	err = vroce_queue_init(&qp->sq, qp->cap.max_send_wr, sq_stride, ibuc);
	if (err)
		return err;
	/* A QP with an SRQ takes its receives from there; XRC has none. */
	if (vroce_qp_has_rq(qp)) {
		err = vroce_queue_init(&qp->rq, qp->cap.max_recv_wr, rq_stride,
				       ibuc);
		if (err) {
			vroce_queue_destroy(&qp->sq);
			return err;
		}
	}
	/* No send engine runs yet: the first post must wake it. */
	qp->sq.hdr->notify = VROCE_SQ_NEEDS_WAKEUP;
	return 0;
}

/*
 * A QP number not used for as long as possible: from the one after the
 * last handed out, wrapping around, so a late packet for a destroyed QP
 * does not reach a new QP with its number.
 */
static int vroce_qpn_alloc(struct vroce_dev *vdev)
{
	const int last = VROCE_QPN_MIN + VROCE_MAX_QP - 1;
	int from = atomic_read(&vdev->next_qpn);
	int qpn;

	if (from < VROCE_QPN_MIN || from > last)
		from = VROCE_QPN_MIN;
	qpn = ida_alloc_range(&vdev->qpn_ida, from, last, GFP_KERNEL);
	if (qpn == -ENOSPC && from > VROCE_QPN_MIN)
		qpn = ida_alloc_range(&vdev->qpn_ida, VROCE_QPN_MIN, from - 1,
				      GFP_KERNEL);
	if (qpn >= 0)
		atomic_set(&vdev->next_qpn, qpn + 1);
	return qpn;
}

int vroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibqp->device);
	struct vroce_ucontext *uctx = rdma_udata_to_drv_context(udata,
			struct vroce_ucontext, ibuc);
	struct vroce_qp *qp = to_vqp(ibqp);
	u32 sq_stride, rq_stride;
	int qpn, err;

	err = vroce_qp_check_init(init, udata);
	if (err)
		return err;
	qpn = init->qp_type == IB_QPT_GSI ? 1 : vroce_qpn_alloc(vdev);
	if (qpn < 0)
		return qpn == -ENOSPC ? -ENOMEM : qpn;

	mutex_init(&qp->state_lock);
	init_completion(&qp->released);
	INIT_LIST_HEAD(&qp->bound_mws);
	INIT_WORK(&qp->tx_work, vroce_tx_work);
	__skb_queue_head_init(&qp->tx_batch);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->resp.lock);
	INIT_LIST_HEAD(&qp->resp.odp_link);
	skb_queue_head_init(&qp->resp.later);
	qp->err_event = -1;
	vroce_qp_size(&init->cap, &sq_stride, &rq_stride);
	if (init->srq || init->qp_type == IB_QPT_XRC_INI ||
	    init->qp_type == IB_QPT_XRC_TGT) {
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
	}
	qp->cap = init->cap;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->attrs.state = IB_QPS_RESET;
	qp->attrs.port_num = VROCE_PORT;
	ibqp->qp_num = qpn;

	err = -ENOMEM;
	qp->ref = vroce_qp_ref_new(qp, vdev);
	if (!qp->ref)
		goto qpn;
	qp->wqe_buf = kmalloc(sq_stride, GFP_KERNEL_ACCOUNT);
	if (!qp->wqe_buf)
		goto ref;
	err = vroce_qp_rings(qp, udata ? &uctx->ibuc : NULL, sq_stride,
			     rq_stride);
	if (err)
		goto buf;
	seqlock_init(&qp->path_lock);
	if (!vroce_qp_is_ud(qp)) {
		err = vroce_req_init(qp);
		if (err)
			goto rings;
		err = dst_cache_init(&qp->routes.cache, GFP_KERNEL_ACCOUNT);
		if (err)
			goto req;
	}
	err = udata ? vroce_qp_resp(udata, qp) : 0;
	if (err)
		goto req;
	/* Visible to the receive path from here on. */
	err = xa_insert_bh(&vdev->qps, qpn, qp->ref, GFP_KERNEL_ACCOUNT);
	if (err)
		goto req;
	atomic_inc(&vdev->n_qp);
	return 0;
req:
	if (!vroce_qp_is_ud(qp)) {
		dst_cache_destroy(&qp->routes.cache);
		vroce_req_destroy(qp);
	}
rings:
	vroce_queue_destroy(&qp->rq);
	vroce_queue_destroy(&qp->sq);
buf:
	kfree(qp->wqe_buf);
ref:
	vroce_qp_ref_put(qp->ref);	/* never published */
qpn:
	if (qpn != 1)
		ida_free(&vdev->qpn_ida, qpn);
	return err;
}

/*
 * Waits until no lookup holds @qp: the receive path holds it for a
 * moment, a coalesced ACK until it is sent, a READ response that waits
 * for an ODP fault until the fault is done. Packets in the stack do not
 * (struct vroce_qp_ref). Should one never let go, say every half
 * minute who still holds what, rather than hang without a word.
 */
static void vroce_qp_wait_released(struct vroce_qp *qp)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	bool rc = !vroce_qp_is_ud(qp);

	while (!wait_for_completion_timeout(&qp->released, 30 * HZ))
		pr_warn_ratelimited("%s: QP %u destroy waits: %u references, ACK queued %d\n",
			dev_name(&vdev->ibdev.dev), qp->ibqp.qp_num,
			refcount_read(&qp->ref->count),
			rc ? READ_ONCE(qp->resp.ack_queued) : 0);
}

int vroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibqp->device);
	struct vroce_qp *qp = to_vqp(ibqp);

	/*
	 * No new packet finds the QP; wait for those in flight. A lock-free
	 * lookup (vroce_qp_get()) may still read the count it found: that
	 * goes after a grace period, the QP at once.
	 */
	xa_erase_bh(&vdev->qps, ibqp->qp_num);
	/* READ responses not sent yet are not sent any more. */
	if (!vroce_qp_is_ud(qp))
		vroce_resp_reset(qp);
	vroce_qp_put(qp);
	vroce_qp_wait_released(qp);
	/*
	 * Then the engine and the timers, which kick each other. The flag is
	 * set under the requester's lock, under which the engine and the
	 * receive path arm the timers: none is armed after comp_stop.
	 */
	if (vroce_qp_is_ud(qp)) {
		WRITE_ONCE(qp->dying, true);
	} else {
		spin_lock_bh(&qp->req.lock);
		WRITE_ONCE(qp->dying, true);
		spin_unlock_bh(&qp->req.lock);
		vroce_comp_stop(qp);
	}
	cancel_work_sync(&qp->tx_work);
	/* Its packets still in the stack hold the rest (tx_pace.c). */
	vroce_qp_ref_put(qp->ref);
	__skb_queue_purge(&qp->tx_batch);	/* empty after every run */
	/* No engine or timer uses it now: its type 2 windows go. */
	vroce_mw_unbind_qp(qp);
	if (vroce_qp_is_ud(qp))
		vroce_mcast_detach_qp(qp);
	kfree(qp->wqe_buf);
	if (!vroce_qp_is_ud(qp)) {
		vroce_resp_reset(qp);
		vroce_req_destroy(qp);
		dst_cache_destroy(&qp->routes.cache);
	}

	/*
	 * Nothing makes completions now: the QP's number is free to reuse.
	 * (An XRC target's are on its SRQs' CQs, which it does not know;
	 * no kernel consumer uses XRC. The provider drops a user QP's
	 * completions from its user CQs itself: vroce_cq_clean().)
	 */
	if (ibqp->send_cq)
		vroce_cq_purge(to_vcq(ibqp->send_cq), ibqp->qp_num);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		vroce_cq_purge(to_vcq(ibqp->recv_cq), ibqp->qp_num);

	mutex_lock(&qp->state_lock);
	rdma_destroy_ah_attr(&qp->attrs.ah_attr);
	vroce_queue_destroy(&qp->rq);
	vroce_queue_destroy(&qp->sq);
	mutex_unlock(&qp->state_lock);
	if (ibqp->qp_num != 1)
		ida_free(&vdev->qpn_ida, ibqp->qp_num);
	atomic_dec(&vdev->n_qp);
	return 0;
}

static void vroce_query_attrs(struct vroce_qp *qp, struct ib_qp_attr *attr)
{
	const struct vroce_qp_attrs *a = &qp->attrs;

	attr->qp_state = a->state;
	attr->cur_qp_state = a->state;
	attr->path_mtu = a->path_mtu;
	attr->path_mig_state = a->path_mig_state;
	attr->qkey = a->qkey;
	attr->rq_psn = a->rq_psn;
	attr->sq_psn = a->sq_psn;
	attr->dest_qp_num = a->dest_qp_num;
	attr->qp_access_flags = a->access_flags;
	attr->pkey_index = a->pkey_index;
	attr->en_sqd_async_notify = a->en_sqd_async_notify;
	attr->sq_draining = a->sq_draining;
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->port_num = a->port_num;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	attr->cap = qp->cap;
	/* Callers of query_qp do not release a GID reference: give none. */
	attr->ah_attr = a->ah_attr;
	attr->ah_attr.grh.sgid_attr = NULL;
}

int vroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct vroce_qp *qp = to_vqp(ibqp);

	mutex_lock(&qp->state_lock);
	vroce_query_attrs(qp, attr);
	mutex_unlock(&qp->state_lock);

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = qp->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	return 0;
}

/*
 * The doorbell of a user QP: uverbs POST_SEND with no work requests. It
 * wakes the send engine of a QP in RTS; a QP in ERR flushes what was
 * posted.
 */
int vroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct vroce_qp *qp = to_vqp(ibqp);

	/* An XRC target sends nothing of its own. */
	if (vroce_qp_is_xrc_tgt(qp)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (!ibqp->uobject)
		return vroce_kpost_send(qp, wr, bad_wr);
	if (wr) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	vroce_count(to_vdev(ibqp->device), VROCE_CNT_DOORBELLS, 1);
	mutex_lock(&qp->state_lock);
	if (qp->attrs.state == IB_QPS_ERR)
		vroce_qp_flush(qp);
	else if (qp->attrs.state == IB_QPS_RTS)
		vroce_tx_doorbell(qp);
	mutex_unlock(&qp->state_lock);
	return 0;
}
