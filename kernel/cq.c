// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues. The CQ ring is shared with the provider, which polls
 * it without a system call; the kernel is the only producer. Arming for
 * a completion event is a word in the ring header, read here when a
 * completion is added (see "CQ arming" in vroce-abi.h).
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/log2.h>

#include "vroce.h"
#include "core/ring.h"

static int vroce_cq_entries(int cqe)
{
	if (cqe < 1 || cqe > VROCE_MAX_CQE)
		return -EINVAL;
	return roundup_pow_of_two(cqe);
}

static int vroce_cq_resp(struct ib_udata *udata, struct vroce_cq *cq)
{
	struct vroce_create_cq_resp resp = {
		.ring_offset = cq->ring.mmap_offset,
		.ring_size = cq->ring.size,
		.entries = cq->ring.entries,
		.cqn = cq->cqn,
	};

	return ib_copy_to_udata(udata, &resp, min(sizeof(resp),
						  udata->outlen));
}

int vroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct vroce_create_cq_arg *arg)
{
	struct ib_udata *udata = vroce_create_cq_udata(arg);
	struct vroce_dev *vdev = to_vdev(ibcq->device);
	struct vroce_ucontext *uctx = rdma_udata_to_drv_context(udata,
			struct vroce_ucontext, ibuc);
	struct vroce_cq *cq = to_vcq(ibcq);
	int entries, err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (udata && !vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;
	entries = vroce_cq_entries(attr->cqe);
	if (entries < 0)
		return entries;
	if (atomic_inc_return(&vdev->n_cq) > VROCE_MAX_CQ) {
		err = -ENOMEM;
		goto dec;
	}

	spin_lock_init(&cq->lock);
	/* A kernel CQ's ring stays in the kernel (kverbs.c polls it). */
	err = vroce_queue_init(&cq->ring, entries, sizeof(struct vroce_cqe),
			      udata ? &uctx->ibuc : NULL);
	if (err)
		goto dec;
	cq->cqn = atomic_inc_return(&vdev->next_cqn);
	ibcq->cqe = entries;

	err = udata ? vroce_cq_resp(udata, cq) : 0;
	if (err)
		goto ring;
	return 0;
ring:
	vroce_queue_destroy(&cq->ring);
dec:
	atomic_dec(&vdev->n_cq);
	return err;
}

int vroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct vroce_cq *cq = to_vcq(ibcq);

	/* ib_core refuses with EBUSY while a QP or SRQ uses the CQ. */
	vroce_queue_destroy(&cq->ring);
	atomic_dec(&to_vdev(ibcq->device)->n_cq);
	return 0;
}

/* Moves the unpolled completions of @cq into @ring. Caller holds cq->lock. */
static int vroce_cq_move(struct vroce_cq *cq, struct vroce_queue *ring)
{
	/* Pairs with the provider's release of cons after it read CQEs. */
	u32 cons = smp_load_acquire(&cq->ring.hdr->cons);
	u32 n = cq->ring.own - cons;
	u32 i;

	if (n > cq->ring.entries)
		return -EINVAL;		/* the provider broke the ring */
	if (n > ring->entries)
		return -EINVAL;		/* smaller than what is unpolled */
	for (i = 0; i < n; i++)
		memcpy(vroce_queue_slot(ring, i),
		       vroce_queue_slot(&cq->ring, cons + i),
		       sizeof(struct vroce_cqe));
	ring->own = n;
	ring->hdr->cons = 0;
	ring->hdr->notify = READ_ONCE(cq->ring.hdr->notify);
	vroce_queue_publish_prod(ring);
	return 0;
}

int vroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct vroce_ucontext *uctx = rdma_udata_to_drv_context(udata,
			struct vroce_ucontext, ibuc);
	struct vroce_cq *cq = to_vcq(ibcq);
	struct vroce_resize_cq_resp resp = {};
	struct vroce_queue ring, old;
	unsigned long flags;
	int entries, err;

	if (!udata)
		return -EOPNOTSUPP;
	entries = vroce_cq_entries(cqe);
	if (entries < 0)
		return entries;
	err = vroce_queue_init(&ring, entries, sizeof(struct vroce_cqe),
			      &uctx->ibuc);
	if (err)
		return err;

	spin_lock_irqsave(&cq->lock, flags);
	err = vroce_cq_move(cq, &ring);
	if (!err) {
		old = cq->ring;
		cq->ring = ring;
		ibcq->cqe = entries;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	if (err) {
		vroce_queue_destroy(&ring);
		return err;
	}
	vroce_queue_destroy(&old);

	resp.ring_offset = ring.mmap_offset;
	resp.ring_size = ring.size;
	resp.entries = ring.entries;
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp),
						  udata->outlen));
}

/* Whether adding @cqe fires an armed completion event. */
static bool vroce_cq_should_notify(struct vroce_cq *cq,
				   const struct vroce_cqe *cqe, bool solicited)
{
	u32 notify = READ_ONCE(cq->ring.hdr->notify);
	u32 seq = notify >> VROCE_CQ_ARM_SEQ_SHIFT;

	if (seq == cq->notified_seq)
		return false;
	if ((notify & VROCE_CQ_ARM_SOLICITED) && !solicited &&
	    cqe->status == IB_WC_SUCCESS)
		return false;
	cq->notified_seq = seq;
	return true;
}

static void vroce_cq_overflow(struct vroce_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * Drops the unpolled completions of QP @qpn from kernel CQ @cq, keeping
 * the others in order: once a kernel QP is destroyed, no completion may
 * name its number, which a new QP can take (kverbs.c resolves wc->qp by
 * number). The consumer, vroce_poll_cq(), also holds cq->lock.
 */
void vroce_cq_purge(struct vroce_cq *cq, u32 qpn)
{
	struct vroce_queue *ring = &cq->ring;
	unsigned long flags;

	if (cq->ibcq.uobject)
		return;
	/* A kernel ring's indices are the kernel's: own - cons <= entries. */
	spin_lock_irqsave(&cq->lock, flags);
	ring->hdr->cons = vroce_ring_compact(ring->buf +
					     VROCE_RING_ENTRIES_OFFSET,
					     ring->entries, ring->stride,
					     ring->hdr->cons, ring->own,
					     offsetof(struct vroce_cqe, qp_num),
					     qpn);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * Adds one completion. Fails with -ENOSPC when the CQ is full or broken;
 * the CQ then reports IB_EVENT_CQ_ERR once and takes no more completions.
 */
int vroce_cq_add(struct vroce_cq *cq, const struct vroce_cqe *cqe,
		 bool solicited)
{
	bool notify = false, overflow = false;
	struct vroce_cqe *slot;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->broken || vroce_queue_free(&cq->ring) <= 0) {
		overflow = !cq->broken;
		cq->broken = true;
		err = -ENOSPC;
	} else {
		slot = vroce_queue_slot(&cq->ring, cq->ring.own);
		memcpy(slot, cqe, sizeof(*cqe));
		/* The completion's time: ibv_wc_read_completion_ts(). */
		slot->timestamp = ktime_get_ns();
		cq->ring.own++;
		vroce_queue_publish_prod(&cq->ring);
		/*
		 * Pairs with the provider's barrier between arming and its
		 * next poll: either we see the arm or it sees this CQE.
		 */
		smp_mb();
		notify = vroce_cq_should_notify(cq, cqe, solicited);
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (overflow)
		vroce_cq_overflow(cq);
	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return err;
}
