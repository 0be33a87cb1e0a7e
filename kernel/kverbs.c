// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel verbs: what kernel consumers (the MAD layer's QP1 under rdma_cm,
 * storage and file system ULPs) post and poll through ib_core. Kernel
 * QPs and CQs use the same rings as user ones, in kernel memory: posting
 * writes a WQE into the ring and kicks the send engine (these verbs may
 * be called with interrupts off, so they never sleep and never send
 * themselves); polling converts CQEs into struct ib_wc.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <rdma/ib_verbs.h>

#include "vroce.h"

static int vroce_wc_flags(const struct vroce_cqe *c)
{
	int f = 0;

	if (c->flags & VROCE_CQE_GRH)
		f |= IB_WC_GRH;
	if (c->flags & VROCE_CQE_WITH_IMM)
		f |= IB_WC_WITH_IMM;
	if (c->flags & VROCE_CQE_WITH_INV)
		f |= IB_WC_WITH_INVALIDATE;
	if (c->flags & VROCE_CQE_IP_CSUM_OK)
		f |= IB_WC_IP_CSUM_OK;
	if ((c->flags & VROCE_CQE_GRH) && c->network_hdr_type)
		f |= IB_WC_WITH_NETWORK_HDR_TYPE;
	return f;
}

static void vroce_cqe_to_wc(struct vroce_dev *vdev, const struct vroce_cqe *c,
			    struct ib_wc *wc)
{
	struct vroce_qp_ref *ref;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = c->wr_id;
	wc->status = c->status;
	wc->opcode = c->opcode;
	wc->byte_len = c->byte_len;
	wc->src_qp = c->src_qp;
	wc->wc_flags = vroce_wc_flags(c);
	if (c->flags & VROCE_CQE_WITH_INV)
		wc->ex.invalidate_rkey = c->imm_data;
	else
		wc->ex.imm_data = (__force __be32)c->imm_data;
	wc->pkey_index = c->pkey_index;
	wc->sl = c->sl;
	wc->port_num = VROCE_PORT;
	wc->network_hdr_type = c->network_hdr_type;
	/*
	 * destroy_qp purges a kernel QP's completions before its number can
	 * be reused (vroce_cq_purge()); one polled while its QP is being
	 * destroyed names no QP.
	 */
	rcu_read_lock();
	ref = xa_load(&vdev->qps, c->qp_num);
	wc->qp = ref ? &ref->qp->ibqp : NULL;
	rcu_read_unlock();
}

int vroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct vroce_dev *vdev = to_vdev(ibcq->device);
	struct vroce_cq *cq = to_vcq(ibcq);
	unsigned long flags;
	int n = 0;
	u32 cons;

	/*
	 * Kernel CQs only: a user CQ is polled in its ring by the provider,
	 * and uverbs' own POLL_CQ would hand out QPs found by numbers that
	 * user space can write. The producer and this consumer share
	 * cq->lock.
	 */
	if (ibcq->uobject)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&cq->lock, flags);
	cons = cq->ring.hdr->cons;
	while (n < num_entries && cons != cq->ring.own) {
		vroce_cqe_to_wc(vdev, vroce_queue_slot(&cq->ring, cons),
				&wc[n]);
		n++;
		cons++;
	}
	cq->ring.hdr->cons = cons;
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int vroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct vroce_cq *cq = to_vcq(ibcq);
	unsigned long irqf;
	u32 arm;
	int missed = 0;

	/* The arm word the provider writes for user CQs (vroce-abi.h). */
	spin_lock_irqsave(&cq->lock, irqf);
	arm = (cq->notified_seq + 1) << VROCE_CQ_ARM_SEQ_SHIFT;
	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED)
		arm |= VROCE_CQ_ARM_SOLICITED;
	WRITE_ONCE(cq->ring.hdr->notify, arm);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    cq->ring.hdr->cons != cq->ring.own)
		missed = 1;
	spin_unlock_irqrestore(&cq->lock, irqf);
	return missed;
}

/* Writes the SGEs or the inline data of @wr into @w; -EINVAL if too many. */
static int vroce_kwqe_data(struct vroce_qp *qp, const struct ib_send_wr *wr,
			   struct vroce_send_wqe *w)
{
	struct vroce_sge *sge = (struct vroce_sge *)(w + 1);
	u8 *data = (u8 *)(w + 1);
	u32 len = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->cap.max_send_sge)
		return -EINVAL;
	if (!(wr->send_flags & IB_SEND_INLINE)) {
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		w->num_sge = wr->num_sge;
		return 0;
	}
	/* Kernel addresses: this device's DMA addresses are virtual ones. */
	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->cap.max_inline_data - len)
			return -EINVAL;
		memcpy(data + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	w->inline_len = len;
	return 0;
}

/*
 * Writes the WQE of @wr into @w (a ring slot); -EINVAL if it is bad.
 * Atomic write is for user QPs only: ib_core of 6.1 has no such work
 * request, and no kernel user of a later one posts it.
 */
static int vroce_kwqe(struct vroce_qp *qp, const struct ib_send_wr *wr,
		      struct vroce_send_wqe *w)
{
	if (wr->opcode == VROCE_WR_ATOMIC_WRITE)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->flags = wr->send_flags & (IB_SEND_FENCE | IB_SEND_SIGNALED |
				     IB_SEND_SOLICITED | IB_SEND_INLINE);
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		w->imm_data = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		w->imm_data = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		w->u.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->u.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->u.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->u.atomic.compare_add = atomic_wr(wr)->compare_add;
		w->u.atomic.swap = atomic_wr(wr)->swap;
		w->u.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		w->u.bind.mr_lkey = reg_wr(wr)->mr->lkey;
		w->u.bind.new_rkey = reg_wr(wr)->key;
		w->u.bind.access = reg_wr(wr)->access;
		return 0;
	case IB_WR_LOCAL_INV:
		return 0;
	default:
		break;
	}
	if (vroce_qp_is_ud(qp)) {
		if (!ud_wr(wr)->ah)
			return -EINVAL;
		w->u.ud.ah_num = to_vah(ud_wr(wr)->ah)->num;
		w->u.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		w->u.ud.remote_qkey = ud_wr(wr)->remote_qkey;
	}
	return vroce_kwqe_data(qp, wr, w);
}

/* Room for one more WQE in a kernel ring the kernel also consumes. */
static void *vroce_kring_slot(struct vroce_queue *ring)
{
	if (ring->hdr->prod - READ_ONCE(ring->hdr->cons) >= ring->entries)
		return NULL;
	return vroce_queue_slot(ring, ring->hdr->prod);
}

int vroce_kpost_send(struct vroce_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr)
{
	unsigned long flags;
	void *slot;
	int err = 0;

	spin_lock_irqsave(&qp->sq_lock, flags);
	for (; wr; wr = wr->next) {
		slot = vroce_kring_slot(&qp->sq);
		err = slot ? vroce_kwqe(qp, wr, slot) : -ENOMEM;
		if (err)
			break;
		/* The engine reads the WQE only after it sees prod move. */
		smp_store_release(&qp->sq.hdr->prod, qp->sq.hdr->prod + 1);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (err)
		*bad_wr = wr;
	vroce_tx_kick(qp);
	return err;
}

static int vroce_kpost_recv_ring(struct vroce_queue *rq, u32 max_sge,
				 const struct ib_recv_wr *wr,
				 const struct ib_recv_wr **bad_wr)
{
	struct vroce_recv_wqe *w;
	struct vroce_sge *sge;
	int i, err = 0;

	for (; wr; wr = wr->next) {
		w = vroce_kring_slot(rq);
		err = -ENOMEM;
		if (!w)
			break;
		err = -EINVAL;
		if (wr->num_sge < 0 || wr->num_sge > max_sge)
			break;
		err = 0;
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		sge = (struct vroce_sge *)(w + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		/* The receive path reads the WQE only after prod moves. */
		smp_store_release(&rq->hdr->prod, rq->hdr->prod + 1);
	}
	if (err)
		*bad_wr = wr;
	return err;
}

int vroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct vroce_qp *qp = to_vqp(ibqp);
	unsigned long flags;
	int err;

	if (ibqp->uobject || !vroce_qp_has_rq(qp)) {
		*bad_wr = wr;
		/* User QPs post through their ring; XRC QPs have no RQ. */
		return ibqp->uobject ? -EOPNOTSUPP : -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	err = vroce_kpost_recv_ring(&qp->rq, qp->cap.max_recv_sge, wr, bad_wr);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	/*
	 * ib_drain_rq(): a receive posted in ERR completes flushed. rq_lock
	 * orders this against a move to ERR, which sets the state before its
	 * flush takes the lock: either the flush sees this receive or we see
	 * the state.
	 */
	if (READ_ONCE(qp->attrs.state) == IB_QPS_ERR)
		vroce_tx_kick(qp);
	return err;
}

/* A kernel consumer's receives for an SRQ; user SRQs post to their ring. */
int vroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct vroce_srq *srq = to_vsrq(ibsrq);
	unsigned long flags;
	int err;

	if (ibsrq->uobject) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&srq->lock, flags);
	err = vroce_kpost_recv_ring(&srq->rq, srq->max_sge, wr, bad_wr);
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}
