// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: one receive ring shared with the provider, as a
 * QP's RQ is (or, for a kernel consumer, filled by post_srq_recv in
 * kverbs.c), plus the limit that, once armed, raises
 * IB_EVENT_SRQ_LIMIT_REACHED when the receive path takes the SRQ below it.
 * An XRC SRQ is the same ring, found by the number XRC requests name
 * (xrc.c), and completes into its own CQ.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/log2.h>

#include "vroce.h"

static int vroce_srq_check(const struct ib_srq_attr *attr)
{
	if (attr->max_wr > VROCE_MAX_SRQ_WR || attr->max_sge > VROCE_MAX_SRQ_SGE)
		return -EINVAL;
	return 0;
}

static int vroce_srq_resp(struct ib_udata *udata, struct vroce_srq *srq)
{
	struct vroce_create_srq_resp resp = {
		.ring_offset = srq->rq.mmap_offset,
		.ring_size = srq->rq.size,
		.entries = srq->rq.entries,
		.wqe_size = srq->rq.stride,
		.srqn = srq->srqn,
	};

	return ib_copy_to_udata(udata, &resp, min(sizeof(resp),
						  udata->outlen));
}

int vroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibsrq->device);
	struct vroce_ucontext *uctx = rdma_udata_to_drv_context(udata,
			struct vroce_ucontext, ibuc);
	struct ib_ucontext *ibuc = uctx ? &uctx->ibuc : NULL;
	struct vroce_srq *srq = to_vsrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	u32 stride;
	int err;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	if (!vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;
	err = vroce_srq_check(attr);
	if (err)
		return err;
	if (atomic_inc_return(&vdev->n_srq) > VROCE_MAX_SRQ) {
		err = -ENOMEM;
		goto dec;
	}

	spin_lock_init(&srq->lock);
	attr->max_wr = roundup_pow_of_two(max_t(u32, attr->max_wr, 1));
	stride = roundup_pow_of_two(sizeof(struct vroce_recv_wqe) +
				    max_t(u32, attr->max_sge, 1) *
				    sizeof(struct vroce_sge));
	attr->max_sge = min_t(u32, (stride - sizeof(struct vroce_recv_wqe)) /
			      sizeof(struct vroce_sge), VROCE_MAX_SRQ_SGE);
	srq->max_sge = attr->max_sge;
	err = vroce_queue_init(&srq->rq, attr->max_wr, stride, ibuc);
	if (err)
		goto dec;
	err = vroce_srqn_alloc(srq);
	if (err)
		goto ring;
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srqn;
	/* A kernel SRQ's consumer posts with post_srq_recv (kverbs.c). */
	err = udata ? vroce_srq_resp(udata, srq) : 0;
	if (err)
		goto srqn;
	return 0;
srqn:
	vroce_srqn_free(srq);
ring:
	vroce_queue_destroy(&srq->rq);
dec:
	atomic_dec(&vdev->n_srq);
	return err;
}

int vroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct vroce_srq *srq = to_vsrq(ibsrq);
	unsigned long flags;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	/* The ring is mapped by the provider and does not grow. */
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (!vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->rq.entries)
			return -EINVAL;
		spin_lock_irqsave(&srq->lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
	}
	return 0;
}

/*
 * After a receive was taken, caller holding srq->lock: has the SRQ fallen
 * below its armed limit? Then the limit is disarmed, as IBTA says, and
 * the caller raises the event with vroce_srq_limit_event().
 */
bool vroce_srq_check_limit(struct vroce_srq *srq)
{
	int left;

	if (!srq->limit)
		return false;
	left = vroce_queue_produced(&srq->rq);
	if (left < 0 || left >= srq->limit)
		return false;
	srq->limit = 0;
	return true;
}

void vroce_srq_limit_event(struct vroce_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

int vroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct vroce_srq *srq = to_vsrq(ibsrq);

	attr->max_wr = srq->rq.entries;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int vroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct vroce_srq *srq = to_vsrq(ibsrq);

	vroce_srqn_free(srq);
	vroce_queue_destroy(&srq->rq);
	atomic_dec(&to_vdev(ibsrq->device)->n_srq);
	return 0;
}
