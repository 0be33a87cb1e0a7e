// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: extended QPs and the ibv_wr_* work request
 * API (ibv_create_qp_ex() with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS).
 *
 * The builders write the same WQEs as post_send, into the same ring and
 * with the same checks (vroce_send_wqe_hdr()): each WR is written to its
 * slot when the next builder or ibv_wr_complete() closes it, and
 * ibv_wr_complete() publishes them all with one release of prod, so the
 * kernel sees nothing before it and nothing at all after ibv_wr_abort().
 * The builders return nothing: the first error is kept and
 * ibv_wr_complete() returns it, having posted none of the batch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vroce.h"

/* The ibv_wr_* operations of each QP type, as post_send allows them. */
#define VROCE_QPX_UD_OPS \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define VROCE_QPX_UC_OPS \
	(VROCE_QPX_UD_OPS | IBV_QP_EX_WITH_RDMA_WRITE | \
	 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_LOCAL_INV | \
	 IBV_QP_EX_WITH_BIND_MW)
#define VROCE_QPX_RC_OPS \
	(VROCE_QPX_UC_OPS | IBV_QP_EX_WITH_RDMA_READ | \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV | \
	 IBV_QP_EX_WITH_ATOMIC_WRITE)

static uint64_t vroce_qpx_ops(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
	case IBV_QPT_XRC_SEND:
		return VROCE_QPX_RC_OPS;
	case IBV_QPT_UC:
		return VROCE_QPX_UC_OPS;
	case IBV_QPT_UD:
		return VROCE_QPX_UD_OPS;
	default:
		return 0;
	}
}

static void vroce_wr_fail(struct vroce_qpx *x, int err)
{
	if (!x->err)
		x->err = err;
}

/* Writes the open WR to its slot, past the published prod. */
static void vroce_wr_close(struct vroce_qp *qp)
{
	struct vroce_qpx *x = qp->x;
	struct vroce_send_wqe hdr;
	uint8_t *slot;
	bool sges;

	if (!x->open)
		return;
	x->open = false;
	if (x->err)
		return;
	if (vroce_wq_full(&qp->sq, &x->cons)) {
		x->err = ENOMEM;
		return;
	}
	x->err = vroce_send_wqe_hdr(qp, &x->wr, &hdr, &sges);
	if (x->err)
		return;
	slot = vroce_ring_entry(&qp->sq.ring, qp->sq.prod);
	if (x->wr.send_flags & IBV_SEND_INLINE) {
		memcpy(slot + sizeof(hdr), x->inl, x->inl_len);
		hdr.inline_len = x->inl_len;
		hdr.flags |= VROCE_WQE_INLINE;
	} else if (sges) {
		vroce_wqe_put_sges(slot, &hdr, x->sge, x->wr.num_sge);
	}
	memcpy(slot, &hdr, sizeof(hdr));
	qp->sq.prod++;
}

/* Closes the WR before and opens one of @opcode with wr_id and wr_flags. */
static struct ibv_send_wr *vroce_wr_open(struct ibv_qp_ex *ibqpx,
					 enum ibv_wr_opcode opcode)
{
	struct vroce_qp *qp = to_vqp_ex(ibqpx);
	struct vroce_qpx *x = qp->x;

	vroce_wr_close(qp);
	x->wr = (struct ibv_send_wr){
		.wr_id = ibqpx->wr_id,
		.sg_list = x->sge,
		.opcode = opcode,
		/* Inline data is a setter's choice here, not a flag. */
		.send_flags = ibqpx->wr_flags & ~IBV_SEND_INLINE,
	};
	x->inl_len = 0;
	x->open = true;
	return &x->wr;
}

/* The open WR for a setter; NULL (and an error) if none is open. */
static struct vroce_qpx *vroce_wr_cur(struct ibv_qp_ex *ibqpx)
{
	struct vroce_qpx *x = to_vqp_ex(ibqpx)->x;

	if (x->open)
		return x;
	vroce_wr_fail(x, EINVAL);
	return NULL;
}

/* An operation vroce does not have: the batch fails with EOPNOTSUPP. */
static void vroce_wr_unsupported(struct ibv_qp_ex *ibqpx)
{
	struct vroce_qp *qp = to_vqp_ex(ibqpx);

	vroce_wr_close(qp);
	vroce_wr_fail(qp->x, EOPNOTSUPP);
}

/* ---- builders ---- */

static void vroce_wr_send(struct ibv_qp_ex *ibqpx)
{
	vroce_wr_open(ibqpx, IBV_WR_SEND);
}

static void vroce_wr_send_imm(struct ibv_qp_ex *ibqpx, __be32 imm_data)
{
	vroce_wr_open(ibqpx, IBV_WR_SEND_WITH_IMM)->imm_data = imm_data;
}

static void vroce_wr_send_inv(struct ibv_qp_ex *ibqpx, uint32_t rkey)
{
	vroce_wr_open(ibqpx, IBV_WR_SEND_WITH_INV)->invalidate_rkey = rkey;
}

static void vroce_wr_rdma(struct ibv_qp_ex *ibqpx, enum ibv_wr_opcode op,
			  uint32_t rkey, uint64_t remote_addr, __be32 imm)
{
	struct ibv_send_wr *wr = vroce_wr_open(ibqpx, op);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = remote_addr;
	wr->imm_data = imm;
}

static void vroce_wr_rdma_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				uint64_t remote_addr)
{
	vroce_wr_rdma(ibqpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void vroce_wr_rdma_write_imm(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				    uint64_t remote_addr, __be32 imm_data)
{
	vroce_wr_rdma(ibqpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		      imm_data);
}

static void vroce_wr_rdma_read(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	vroce_wr_rdma(ibqpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void vroce_wr_atomic(struct ibv_qp_ex *ibqpx, enum ibv_wr_opcode op,
			    uint32_t rkey, uint64_t remote_addr,
			    uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr *wr = vroce_wr_open(ibqpx, op);

	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = remote_addr;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void vroce_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				    uint64_t remote_addr, uint64_t compare,
				    uint64_t swap)
{
	vroce_wr_atomic(ibqpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
			compare, swap);
}

static void vroce_wr_atomic_fetch_add(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				      uint64_t remote_addr, uint64_t add)
{
	vroce_wr_atomic(ibqpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
			add, 0);
}

/* IBTA 1.5's RDMA Atomic Write: the 8 bytes at @atomic_wr, copied now. */
static void vroce_wr_atomic_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				  uint64_t remote_addr, const void *atomic_wr)
{
	struct ibv_send_wr *wr = vroce_wr_open(ibqpx, IBV_WR_ATOMIC_WRITE);

	if (!atomic_wr) {
		vroce_wr_fail(to_vqp_ex(ibqpx)->x, EINVAL);
		return;
	}
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = remote_addr;
	memcpy(&wr->wr.atomic.swap, atomic_wr, sizeof(wr->wr.atomic.swap));
}

static void vroce_wr_bind_mw(struct ibv_qp_ex *ibqpx, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *bind_info)
{
	struct ibv_send_wr *wr = vroce_wr_open(ibqpx, IBV_WR_BIND_MW);

	if (!bind_info) {
		vroce_wr_fail(to_vqp_ex(ibqpx)->x, EINVAL);
		return;
	}
	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = rkey;
	wr->bind_mw.bind_info = *bind_info;
}

static void vroce_wr_local_inv(struct ibv_qp_ex *ibqpx, uint32_t rkey)
{
	vroce_wr_open(ibqpx, IBV_WR_LOCAL_INV)->invalidate_rkey = rkey;
}

static void vroce_wr_send_tso(struct ibv_qp_ex *ibqpx, void *hdr,
			      uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr;
	(void)hdr_sz;
	(void)mss;
	vroce_wr_unsupported(ibqpx);
}

/* ---- setters ---- */

static void vroce_wr_set_sge_list(struct ibv_qp_ex *ibqpx, size_t num_sge,
				  const struct ibv_sge *sg_list)
{
	struct vroce_qpx *x = vroce_wr_cur(ibqpx);

	if (!x)
		return;
	if (num_sge > to_vqp_ex(ibqpx)->sq.max_sge) {
		vroce_wr_fail(x, EINVAL);
		return;
	}
	if (num_sge)
		memcpy(x->sge, sg_list, num_sge * sizeof(*sg_list));
	x->wr.num_sge = num_sge;
	x->wr.send_flags &= ~IBV_SEND_INLINE;
}

static void vroce_wr_set_sge(struct ibv_qp_ex *ibqpx, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	const struct ibv_sge sge = {
		.addr = addr,
		.length = length,
		.lkey = lkey,
	};

	vroce_wr_set_sge_list(ibqpx, 1, &sge);
}

static void vroce_wr_set_inline_data_list(struct ibv_qp_ex *ibqpx,
					  size_t num_buf,
					  const struct ibv_data_buf *buf)
{
	struct vroce_qpx *x = vroce_wr_cur(ibqpx);
	uint32_t max = to_vqp_ex(ibqpx)->max_inline;
	size_t len = 0;
	size_t i;

	if (!x)
		return;
	for (i = 0; i < num_buf; i++) {
		if (buf[i].length > max - len) {
			vroce_wr_fail(x, EINVAL);
			return;
		}
		len += buf[i].length;
	}
	/* The data is copied now: the caller may reuse its buffers. */
	len = 0;
	for (i = 0; i < num_buf; i++) {
		memcpy(x->inl + len, buf[i].addr, buf[i].length);
		len += buf[i].length;
	}
	x->inl_len = len;
	x->wr.num_sge = 0;
	x->wr.send_flags |= IBV_SEND_INLINE;
}

static void vroce_wr_set_inline_data(struct ibv_qp_ex *ibqpx, void *addr,
				     size_t length)
{
	const struct ibv_data_buf buf = { .addr = addr, .length = length };

	vroce_wr_set_inline_data_list(ibqpx, 1, &buf);
}

static void vroce_wr_set_ud_addr(struct ibv_qp_ex *ibqpx, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct vroce_qpx *x = vroce_wr_cur(ibqpx);

	if (!x)
		return;
	x->wr.wr.ud.ah = ah;
	x->wr.wr.ud.remote_qpn = remote_qpn;
	x->wr.wr.ud.remote_qkey = remote_qkey;
}

/* The remote XRC SRQ of a WR of an XRC INI QP; no other QP has one. */
static void vroce_wr_set_xrc_srqn(struct ibv_qp_ex *ibqpx, uint32_t srqn)
{
	struct vroce_qpx *x = vroce_wr_cur(ibqpx);

	if (!x)
		return;
	if (ibqpx->qp_base.qp_type != IBV_QPT_XRC_SEND) {
		vroce_wr_fail(x, EOPNOTSUPP);
		return;
	}
	x->wr.qp_type.xrc.remote_srqn = srqn;
}

/* ---- the critical section ---- */

static void vroce_wr_start(struct ibv_qp_ex *ibqpx)
{
	struct vroce_qp *qp = to_vqp_ex(ibqpx);
	struct vroce_qpx *x = qp->x;

	vroce_wq_lock(&qp->sq);
	x->start = qp->sq.prod;
	x->cons = vroce_ring_load_acquire(&qp->sq.ring.hdr->cons);
	x->err = 0;
	x->open = false;
}

static void vroce_wr_abort(struct ibv_qp_ex *ibqpx)
{
	struct vroce_qp *qp = to_vqp_ex(ibqpx);

	qp->x->open = false;
	qp->sq.prod = qp->x->start;
	vroce_wq_unlock(&qp->sq);
}

/*
 * Posts the WRs built since ibv_wr_start(), all or (on the first error,
 * which it returns) none.  As post_send, the SQ takes WRs from RTS on.
 * Only if the doorbell system call itself fails (the device is gone) is
 * its error returned for a batch that is in the ring, as post_send does.
 */
static int vroce_wr_complete(struct ibv_qp_ex *ibqpx)
{
	struct vroce_qp *qp = to_vqp_ex(ibqpx);
	struct vroce_qpx *x = qp->x;
	bool wakeup = false;
	int err;

	vroce_wr_close(qp);
	err = x->err;
	if (!err && !vroce_sq_accepts(qp))
		err = EINVAL;
	if (err) {
		qp->sq.prod = x->start;
		vroce_wq_unlock(&qp->sq);
		return err;
	}
	if (qp->sq.prod != x->start)
		wakeup = vroce_sq_publish(qp);
	vroce_wq_unlock(&qp->sq);
	return wakeup ? vroce_sq_doorbell(qp) : 0;
}

/* ---- creation ---- */

static void vroce_qpx_set_ops(struct ibv_qp_ex *e)
{
	e->wr_atomic_cmp_swp = vroce_wr_atomic_cmp_swp;
	e->wr_atomic_fetch_add = vroce_wr_atomic_fetch_add;
	e->wr_bind_mw = vroce_wr_bind_mw;
	e->wr_local_inv = vroce_wr_local_inv;
	e->wr_rdma_read = vroce_wr_rdma_read;
	e->wr_rdma_write = vroce_wr_rdma_write;
	e->wr_rdma_write_imm = vroce_wr_rdma_write_imm;
	e->wr_send = vroce_wr_send;
	e->wr_send_imm = vroce_wr_send_imm;
	e->wr_send_inv = vroce_wr_send_inv;
	e->wr_send_tso = vroce_wr_send_tso;
	e->wr_set_ud_addr = vroce_wr_set_ud_addr;
	e->wr_set_xrc_srqn = vroce_wr_set_xrc_srqn;
	e->wr_set_inline_data = vroce_wr_set_inline_data;
	e->wr_set_inline_data_list = vroce_wr_set_inline_data_list;
	e->wr_set_sge = vroce_wr_set_sge;
	e->wr_set_sge_list = vroce_wr_set_sge_list;
	e->wr_start = vroce_wr_start;
	e->wr_complete = vroce_wr_complete;
	e->wr_abort = vroce_wr_abort;
}

/*
 * The builders' state, sized by the capabilities the kernel granted, and
 * the builders; wr_atomic_write only if @ops asks for it.
 */
static int vroce_qpx_init(struct vroce_qp *qp, uint64_t ops)
{
	size_t sges = (size_t)qp->sq.max_sge * sizeof(struct ibv_sge);
	struct vroce_qpx *x;

	x = vroce_pd_zalloc(qp->alloc_pd, sizeof(*x) + sges + qp->max_inline,
			    VROCE_RES_TYPE_QP_EX, &qp->x_custom);
	if (!x)
		return ENOMEM;
	x->sge = (struct ibv_sge *)(x + 1);
	x->inl = (uint8_t *)x->sge + sges;
	qp->x = x;
	vroce_qpx_set_ops(&qp->vqp.qp_ex);
	/*
	 * comp_mask goes where the libibverbs we run with keeps it, which
	 * creation found (qp.c); it hands out the ibv_qp_ex then.
	 */
	if (qp->comp_mask_at) {
		uint8_t *at = (uint8_t *)&qp->vqp + qp->comp_mask_at;
		uint32_t mask;

		memcpy(&mask, at, sizeof(mask));
		mask |= VERBS_QP_EX;
		memcpy(at, &mask, sizeof(mask));
	}
	if (ibv_qp_to_qp_ex(&qp->vqp.qp) != &qp->vqp.qp_ex)
		return EOPNOTSUPP;
	if (!(ops & IBV_QP_EX_WITH_ATOMIC_WRITE))
		return 0;
	/*
	 * A libibverbs older than v44 has no wr_atomic_write: its comp_mask
	 * is where that member is.  An application built with headers that
	 * have it cannot be running with that one anyway.
	 */
	if (qp->comp_mask_at ==
	    offsetof(struct ibv_qp_ex, wr_atomic_write))
		return EOPNOTSUPP;
	qp->vqp.qp_ex.wr_atomic_write = vroce_wr_atomic_write;
	return 0;
}

void vroce_qpx_free(struct vroce_qp *qp)
{
	if (qp->x)
		vroce_pd_free(qp->alloc_pd, qp->x, VROCE_RES_TYPE_QP_EX,
			      qp->x_custom);
	qp->x = NULL;
}

/*
 * ibv_create_qp_ex(): what ibv_create_qp() creates, and XRC QPs: an INI
 * QP (XRC_SEND) with a PD, a TGT QP (XRC_RECV) with an XRC domain
 * (IBV_QP_INIT_ATTR_XRCD) instead.  No create flags, no TSO.  The
 * ibv_wr_* operations come if send_ops_flags asks for them; an operation
 * the QP type cannot post (any, on a TGT QP) fails the creation with
 * EOPNOTSUPP, as the man page says.
 */
struct ibv_qp *vroce_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS;
	bool ops = attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	uint64_t can = vroce_qpx_ops(attr->qp_type);
	struct vroce_qp *qp;
	int ret;

	if ((attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) ||
	    (ops && (!can || (attr->send_ops_flags & ~can)))) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	qp = vroce_qp_new(ibctx, attr);
	if (!qp)
		return NULL;
	if (ops) {
		ret = vroce_qpx_init(qp, attr->send_ops_flags);
		if (ret) {
			vroce_qp_free(qp);
			errno = ret;
			return NULL;
		}
	}
	return &qp->vqp.qp;
}
