// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: queue pairs.
 *
 * A QP has a send queue ring and, unless it takes its receives from an
 * SRQ, a receive queue ring, both produced by the provider: post_send and
 * post_recv write WQEs and publish them by advancing prod, with no system
 * call.  The kernel's send engine sleeps when it finds the SQ empty; it
 * then sets VROCE_SQ_NEEDS_WAKEUP in the SQ's notify word and post_send
 * wakes it with one POST_SEND command carrying no work requests.  The
 * same command flushes a QP in ERR; when the kernel moved the QP there on
 * its own, it says so in the notify words of both rings
 * (VROCE_SQ_NEEDS_WAKEUP, VROCE_RQ_FLUSH), and post_recv too rings.
 *
 * An XRC INI QP (IBV_QPT_XRC_SEND) has only the send queue, each of its
 * WQEs naming the remote XRC SRQ; an XRC TGT QP (IBV_QPT_XRC_RECV),
 * created or opened with ibv_open_qp(), has no ring at all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vroce.h"

static_assert(sizeof(struct vroce_sge) == sizeof(struct ibv_sge),
	      "struct vroce_sge");

/* The send flags vroce knows. */
#define VROCE_SEND_FLAGS_KNOWN \
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
	 IBV_SEND_INLINE)

static int vroce_wq_init(struct vroce_wq *wq)
{
	return pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
}

/*
 * Map the rings the kernel created, after checking that they can hold
 * what it granted in attr->cap: max_*_wr WQEs of max_*_sge SGEs (or, in
 * the SQ, max_inline_data bytes) each.  An XRC TGT QP has no ring; an
 * XRC INI QP only an SQ, as has a QP with an SRQ.
 *
 * Which rings there are is decided by the QP's type and attr->srq, not
 * by the offsets: 0 is a valid mmap offset (ib_core hands out the lowest
 * free page offset of the context, 0 first, and reuses it once its ring
 * is gone), so any ring may be at offset 0.
 */
static int vroce_qp_map(struct vroce_qp *qp, int cmd_fd,
			const struct ibv_qp_init_attr_ex *attr,
			const struct vroce_create_qp_resp *drv)
{
	const struct ibv_qp_cap *cap = &attr->cap;
	uint64_t need;
	int ret;

	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return 0;
	need = (uint64_t)cap->max_send_sge * sizeof(struct vroce_sge);
	if (need < cap->max_inline_data)
		need = cap->max_inline_data;
	need += sizeof(struct vroce_send_wqe);
	if (cap->max_send_wr > drv->sq_entries ||
	    cap->max_send_sge > UINT8_MAX || drv->sq_wqe_size < need)
		return EPROTO;

	ret = vroce_ring_map(&qp->sq.ring, cmd_fd, drv->sq_offset,
			     drv->sq_size, drv->sq_entries, drv->sq_wqe_size);
	if (ret)
		return ret;
	qp->sq.max_sge = cap->max_send_sge;
	qp->max_inline = cap->max_inline_data;

	/*
	 * The receives of an SRQ-backed QP go to the SRQ's ring; an XRC INI
	 * QP receives nothing.
	 */
	if (attr->srq || attr->qp_type == IBV_QPT_XRC_SEND)
		return 0;

	need = (uint64_t)cap->max_recv_sge * sizeof(struct vroce_sge) +
	       sizeof(struct vroce_recv_wqe);
	if (cap->max_recv_wr > drv->rq_entries || drv->rq_wqe_size < need)
		ret = EPROTO;
	else
		ret = vroce_ring_map(&qp->rq.ring, cmd_fd, drv->rq_offset,
				     drv->rq_size, drv->rq_entries,
				     drv->rq_wqe_size);
	if (ret) {
		vroce_ring_unmap(&qp->sq.ring);
		return ret;
	}
	qp->rq.max_sge = cap->max_recv_sge;
	return 0;
}

/*
 * Where a libibverbs of our private ABI may keep verbs_qp.comp_mask:
 * struct ibv_qp_ex grew in v44 and in v45 (vroce.h).
 */
static const uint16_t comp_mask_slots[] = { 344, 352, 360 };
#define COMP_MASK_MARK 0xa5a5a5a5U

/* Marks each slot, before libibverbs writes its comp_mask into one. */
static void vroce_qp_comp_mask_mark(struct vroce_qp *qp)
{
	uint32_t mark = COMP_MASK_MARK;
	size_t i;

	for (i = 0; i < sizeof(comp_mask_slots) / sizeof(comp_mask_slots[0]); i++)
		memcpy((uint8_t *)&qp->vqp + comp_mask_slots[i], &mark,
		       sizeof(mark));
}

/*
 * ibv_cmd_create_qp_ex() always writes comp_mask (0, or VERBS_QP_XRCD),
 * and for an XRC QP its xrcd pointer after it: the first slot no longer
 * marked is libibverbs' comp_mask.  The slots still marked are members
 * of its struct ibv_qp_ex, NULL until qp_ex.c sets them.
 */
static void vroce_qp_comp_mask_find(struct vroce_qp *qp)
{
	uint8_t *base = (uint8_t *)&qp->vqp;
	uint32_t v, zero = 0;
	size_t i;

	qp->comp_mask_at = 0;
	for (i = 0; i < sizeof(comp_mask_slots) / sizeof(comp_mask_slots[0]); i++) {
		memcpy(&v, base + comp_mask_slots[i], sizeof(v));
		if (v == COMP_MASK_MARK)
			memcpy(base + comp_mask_slots[i], &zero, sizeof(zero));
		else if (!qp->comp_mask_at)
			qp->comp_mask_at = comp_mask_slots[i];
	}
}

/*
 * A zeroed QP in memory of @ibpd (NULL: none, as an XRC TGT QP has), its
 * queue locks set up; NULL with errno set on failure.
 */
static struct vroce_qp *vroce_qp_alloc(struct ibv_pd *ibpd)
{
	struct vroce_qp *qp;
	bool custom;
	int ret;

	qp = vroce_pd_zalloc(ibpd, sizeof(*qp), VROCE_RES_TYPE_QP, &custom);
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->alloc_pd = ibpd;
	qp->custom = custom;
	qp->sq.lockless = qp->rq.lockless = vroce_pd_lockless(ibpd);

	ret = vroce_wq_init(&qp->sq);
	if (ret)
		goto err_free;
	ret = vroce_wq_init(&qp->rq);
	if (ret)
		goto err_sq_lock;
	return qp;

err_sq_lock:
	pthread_spin_destroy(&qp->sq.lock);
err_free:
	vroce_pd_free(ibpd, qp, VROCE_RES_TYPE_QP, custom);
	errno = ret;
	return NULL;
}

/* Undoes vroce_qp_alloc(). */
static void vroce_qp_dealloc(struct vroce_qp *qp)
{
	pthread_spin_destroy(&qp->rq.lock);
	pthread_spin_destroy(&qp->sq.lock);
	vroce_pd_free(qp->alloc_pd, qp, VROCE_RES_TYPE_QP, qp->custom);
}

/*
 * What the kernel is asked for a QP of @attr, in @kattr; 0 or the errno
 * of an attr that cannot make one.  RC, UC and UD need a PD and both CQs.
 * An XRC INI QP (XRC_SEND) needs a PD and a send CQ; it has no receive
 * side, so a receive CQ and receive capabilities are ignored and an SRQ
 * refused.  An XRC TGT QP (XRC_RECV) needs an XRC domain and nothing
 * else: its PD, CQs and work queues are the XRC SRQs' it serves.
 */
static int vroce_qp_kattr(struct ibv_context *ibctx,
			  const struct ibv_qp_init_attr_ex *attr,
			  struct ibv_qp_init_attr_ex *kattr)
{
	bool pd = (attr->comp_mask & IBV_QP_INIT_ATTR_PD) && attr->pd &&
		  attr->pd->context == ibctx;

	/* What comp_mask does not name, the kernel is not told. */
	*kattr = *attr;
	kattr->comp_mask = IBV_QP_INIT_ATTR_PD;
	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		return pd && attr->send_cq && attr->recv_cq ? 0 : EINVAL;
	case IBV_QPT_XRC_SEND:
		kattr->recv_cq = NULL;
		kattr->cap.max_recv_wr = 0;
		kattr->cap.max_recv_sge = 0;
		return pd && attr->send_cq && !attr->srq ? 0 : EINVAL;
	case IBV_QPT_XRC_RECV:
		*kattr = (struct ibv_qp_init_attr_ex){
			.qp_context = attr->qp_context,
			.qp_type = attr->qp_type,
			.comp_mask = IBV_QP_INIT_ATTR_XRCD,
			.xrcd = attr->xrcd,
		};
		return (attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) &&
		       attr->xrcd && attr->xrcd->context == ibctx ? 0 : EINVAL;
	default:
		return EOPNOTSUPP;
	}
}

/*
 * Creates a QP of any type vroce has and maps its rings; on failure NULL
 * with errno set.  attr->cap is set to what the kernel granted.
 */
struct vroce_qp *vroce_qp_new(struct ibv_context *ibctx,
			      struct ibv_qp_init_attr_ex *attr)
{
	struct vroce_create_qp_cmd_resp resp = {};
	struct ibv_qp_init_attr_ex kattr;
	struct ibv_create_qp cmd = {};
	struct vroce_qp *qp;
	int ret;

	ret = vroce_qp_kattr(ibctx, attr, &kattr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = vroce_qp_alloc(kattr.pd);
	if (!qp)
		return NULL;

	/*
	 * On success this also writes the granted capabilities to
	 * kattr.cap, and sets the XRC domain of a TGT QP in qp->vqp.
	 */
	vroce_qp_comp_mask_mark(qp);
	ret = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, &kattr, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp));
	vroce_qp_comp_mask_find(qp);
	if (ret)
		goto err_dealloc;

	ret = vroce_qp_map(qp, ibctx->cmd_fd, &kattr, &resp.drv);
	if (ret)
		goto err_destroy;

	qp->state = IBV_QPS_RESET;
	qp->sq_sig_all = kattr.sq_sig_all;
	/* ib_core's answer: a TGT QP's creation has no driver data. */
	qp->qpn = qp->vqp.qp.qp_num;
	vroce_pd_get(kattr.pd);
	attr->cap = kattr.cap;
	return qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_dealloc:
	vroce_qp_dealloc(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *vroce_create_qp(struct ibv_pd *ibpd,
			       struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = ibpd,
	};
	struct vroce_qp *qp;

	qp = vroce_qp_new(ibpd->context, &ex);
	if (!qp)
		return NULL;
	attr->cap = ex.cap;
	return &qp->vqp.qp;
}

/*
 * ibv_open_qp(): the XRC TGT QP attr->qp_num of attr->xrcd, which another
 * process (or context) created.  It has no rings; it is modified, queried
 * and destroyed (which only closes it) as any QP.
 */
struct ibv_qp *vroce_open_qp(struct ibv_context *ibctx,
			     struct ibv_qp_open_attr *attr)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_NUM |
			      IBV_QP_OPEN_ATTR_TYPE;
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_open_qp cmd = {};
	struct vroce_qp *qp;
	int ret;

	if ((attr->comp_mask & need) != need || !attr->xrcd ||
	    attr->xrcd->context != ibctx ||
	    attr->qp_type != IBV_QPT_XRC_RECV) {
		errno = EINVAL;
		return NULL;
	}
	qp = vroce_qp_alloc(NULL);
	if (!qp)
		return NULL;
	/* libibverbs' struct verbs_qp may use the slack behind ours. */
	ret = ibv_cmd_open_qp(ibctx, &qp->vqp, offsetof(struct vroce_qp, sq),
			      attr, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		vroce_qp_dealloc(qp);
		errno = ret;
		return NULL;
	}
	qp->state = IBV_QPS_UNKNOWN;
	qp->qpn = attr->qp_num;
	return &qp->vqp.qp;
}

int vroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	struct vroce_qp *qp = to_vqp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (!ret && (attr_mask & IBV_QP_STATE))
		__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELEASE);
	return ret;
}

int vroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

/*
 * Unmaps and frees what vroce_qp_new() or vroce_open_qp() made, once the
 * kernel QP is gone.
 */
static void vroce_qp_release(struct vroce_qp *qp)
{
	vroce_ring_unmap(&qp->sq.ring);
	vroce_ring_unmap(&qp->rq.ring);
	vroce_qpx_free(qp);
	vroce_pd_put(qp->alloc_pd);
	vroce_qp_dealloc(qp);
}

/*
 * Undoes vroce_qp_new() for a QP the application never saw; the memory
 * goes even if the kernel refuses to destroy its QP (closing the context
 * destroys it then).
 */
void vroce_qp_free(struct vroce_qp *qp)
{
	ibv_cmd_destroy_qp(&qp->vqp.qp);
	vroce_qp_release(qp);
}

int vroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct vroce_qp *qp = to_vqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	/*
	 * The kernel makes no more of its completions: drop those not
	 * polled.  (An XRC target QP's are on its SRQs' CQs; they stay.)
	 */
	if (ibqp->send_cq)
		vroce_cq_clean(to_vcq(ibqp->send_cq), ibqp->qp_num);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		vroce_cq_clean(to_vcq(ibqp->recv_cq), ibqp->qp_num);
	vroce_qp_release(qp);
	return 0;
}

/*
 * Room for one more WQE?  cons is the last value read from the ring; it
 * is read again only when the ring looks full.  A cons the kernel moved
 * past prod (a broken ring) also reads as full.
 */
bool vroce_wq_full(struct vroce_wq *wq, uint32_t *cons)
{
	if (!vroce_ring_full(wq->prod, *cons, wq->ring.num))
		return false;
	*cons = vroce_ring_load_acquire(&wq->ring.hdr->cons);
	return vroce_ring_full(wq->prod, *cons, wq->ring.num);
}

/*
 * Posting receives is allowed in every state but RESET (the IBTA QP state
 * machine: INIT, RTR, RTS, SQD and SQE accept them; in ERR they are
 * accepted too, and the kernel completes them with a flush error).
 *
 * The RQ has no doorbell of its own: a receive waits for a packet.  In
 * ERR, where it must be flushed instead, post_recv rings the SQ doorbell,
 * which makes the kernel flush both queues of a QP in ERR: in an ERR this
 * process asked for, or one the kernel moved the QP to on its own and
 * flagged with VROCE_RQ_FLUSH.  Failures are reported as in post_send.
 */
/*
 * Writes the receive WRs of @wr into @wq (an RQ or an SRQ ring), with one
 * release of prod for the batch. Returns 0 or the errno of the first WR
 * it rejects, which *@bad_wr then points at; *@posted says whether any
 * WR went in.
 */
int vroce_wq_post_recv(struct vroce_wq *wq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr, bool *posted)
{
	struct vroce_recv_wqe *wqe;
	struct vroce_sge *sge;
	uint32_t start, cons;
	int ret = 0;
	int i;

	vroce_wq_lock(wq);
	start = wq->prod;
	cons = vroce_ring_load_acquire(&wq->ring.hdr->cons);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			ret = EINVAL;
			break;
		}
		if (vroce_wq_full(wq, &cons)) {
			ret = ENOMEM;
			break;
		}

		wqe = vroce_ring_entry(&wq->ring, wq->prod);
		*wqe = (struct vroce_recv_wqe){
			.wr_id = wr->wr_id,
			.num_sge = wr->num_sge,
		};
		sge = (struct vroce_sge *)(wqe + 1);
		for (i = 0; i < wr->num_sge; i++)
			sge[i] = (struct vroce_sge){
				.addr = wr->sg_list[i].addr,
				.length = wr->sg_list[i].length,
				.lkey = wr->sg_list[i].lkey,
			};
		wq->prod++;
	}
	*posted = wq->prod != start;
	if (*posted)
		vroce_ring_store_release(&wq->ring.hdr->prod, wq->prod);
	vroce_wq_unlock(wq);

	if (ret)
		*bad_wr = wr;
	return ret;
}

/*
 * Whether the kernel asks for the doorbell after a receive: it moved the
 * QP to ERR on its own (a remote error, retries run out), which the QP's
 * state here does not show.  Caller has published the ring's prod.
 */
static bool vroce_rq_flush_asked(struct vroce_qp *qp)
{
	/*
	 * Pairs with the kernel's barrier between setting VROCE_RQ_FLUSH and
	 * flushing the ring: either it flushes our WQE or we see its flag.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&qp->rq.ring.hdr->notify, __ATOMIC_RELAXED) &
	       VROCE_RQ_FLUSH;
}

int vroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct vroce_qp *qp = to_vqp(ibqp);
	int state = vroce_qp_state(qp);
	bool posted;
	int ret, db;

	/*
	 * An SRQ-backed QP has no RQ: receives go to ibv_post_srq_recv().
	 * Nor has an XRC QP: an INI QP receives nothing, a TGT QP's
	 * receives go to the XRC SRQ each request names.
	 */
	if (!qp->rq.ring.hdr || state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}

	ret = vroce_wq_post_recv(&qp->rq, wr, bad_wr, &posted);
	/* In ERR, the doorbell makes the kernel flush what was posted. */
	if (posted && (state == IBV_QPS_ERR || vroce_rq_flush_asked(qp))) {
		db = vroce_sq_doorbell(qp);
		if (db && !ret) {
			*bad_wr = wr;
			ret = db;
		}
	}
	return ret;
}

/*
 * The opcodes each transport allows (the opcode table of ibv_post_send(3),
 * less SEND_WITH_INV on UC: the IBTA defines Send with Invalidate packets
 * for RC and XRC only), and their enum ib_uverbs_wr_opcode value; an XRC
 * INI QP posts what RC does.  Returns -1 if the QP cannot post it.
 */
static int vroce_wqe_opcode(enum ibv_qp_type qp_type,
			    enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
		return IB_UVERBS_WR_SEND;
	case IBV_WR_SEND_WITH_IMM:
		return IB_UVERBS_WR_SEND_WITH_IMM;
	default:
		break;
	}
	if (qp_type == IBV_QPT_UD)
		return -1;

	switch (opcode) {
	case IBV_WR_RDMA_WRITE:
		return IB_UVERBS_WR_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	case IBV_WR_LOCAL_INV:
		return IB_UVERBS_WR_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return IB_UVERBS_WR_BIND_MW;
	default:
		break;
	}
	if (qp_type == IBV_QPT_UC)
		return -1;

	switch (opcode) {
	case IBV_WR_RDMA_READ:
		return IB_UVERBS_WR_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
	case IBV_WR_SEND_WITH_INV:
		return IB_UVERBS_WR_SEND_WITH_INV;
	case IBV_WR_ATOMIC_WRITE:
		return VROCE_WR_ATOMIC_WRITE;
	default:
		return -1;
	}
}

/* Inline data is only meaningful where the WR sends local data. */
static bool vroce_opcode_can_inline(enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return true;
	default:
		return false;
	}
}

/* Copy the gather list's bytes behind the WQE header. */
static int vroce_copy_inline(struct vroce_qp *qp, const struct ibv_send_wr *wr,
			     struct vroce_send_wqe *hdr, uint8_t *data)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > qp->max_inline)
		return EINVAL;

	for (i = 0; i < wr->num_sge; i++) {
		memcpy(data, (const void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		data += wr->sg_list[i].length;
	}
	hdr->inline_len = len;
	hdr->flags |= VROCE_WQE_INLINE;
	return 0;
}

/*
 * Checks one WR against the QP and fills the WQE header @hdr from it; the
 * gather list or inline data behind the header is the caller's. *@sges
 * says whether the WR's SGEs carry data (not for LOCAL_INV and BIND_MW).
 */
int vroce_send_wqe_hdr(struct vroce_qp *qp, const struct ibv_send_wr *wr,
		       struct vroce_send_wqe *hdr, bool *sges)
{
	enum ibv_qp_type qp_type = qp->vqp.qp.qp_type;
	int opcode;

	*hdr = (struct vroce_send_wqe){ .wr_id = wr->wr_id };
	*sges = true;
	opcode = vroce_wqe_opcode(qp_type, wr->opcode);
	if (opcode < 0 || wr->num_sge < 0 ||
	    (uint32_t)wr->num_sge > qp->sq.max_sge ||
	    (wr->send_flags & ~VROCE_SEND_FLAGS_KNOWN))
		return EINVAL;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    !vroce_opcode_can_inline(wr->opcode))
		return EINVAL;

	hdr->opcode = opcode;
	if (wr->send_flags & IBV_SEND_FENCE)
		hdr->flags |= VROCE_WQE_FENCE;
	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		hdr->flags |= VROCE_WQE_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		hdr->flags |= VROCE_WQE_SOLICITED;

	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		hdr->imm_data = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		hdr->imm_data = wr->invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		hdr->u.rdma.remote_addr = wr->wr.rdma.remote_addr;
		hdr->u.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (wr->wr.atomic.remote_addr & 7)
			return EINVAL;
		hdr->u.atomic.remote_addr = wr->wr.atomic.remote_addr;
		hdr->u.atomic.compare_add = wr->wr.atomic.compare_add;
		hdr->u.atomic.swap = wr->wr.atomic.swap;
		hdr->u.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_ATOMIC_WRITE:
		/* ibv_wr_atomic_write() put its 8 bytes in wr.atomic.swap. */
		if (wr->wr.atomic.remote_addr & 7)
			return EINVAL;
		hdr->u.atomic.remote_addr = wr->wr.atomic.remote_addr;
		hdr->u.atomic.swap = wr->wr.atomic.swap;
		hdr->u.atomic.rkey = wr->wr.atomic.rkey;
		*sges = false;
		break;
	case IBV_WR_LOCAL_INV:
		/* Names its target by rkey only: no data, no SGEs. */
		*sges = false;
		break;
	case IBV_WR_BIND_MW:
		/*
		 * The MW is named by the new rkey (same index, new key);
		 * the bind moves no data, so the WR's SGEs are not used.
		 */
		hdr->u.bind.addr = wr->bind_mw.bind_info.addr;
		hdr->u.bind.length = wr->bind_mw.bind_info.length;
		hdr->u.bind.mr_lkey = wr->bind_mw.bind_info.mr ?
				      wr->bind_mw.bind_info.mr->lkey : 0;
		hdr->u.bind.new_rkey = wr->bind_mw.rkey;
		hdr->u.bind.access = wr->bind_mw.bind_info.mw_access_flags;
		*sges = false;
		break;
	default:
		break;
	}

	if (qp_type == IBV_QPT_UD) {
		struct ibv_ah *ah = wr->wr.ud.ah;

		if (!ah)
			return EINVAL;
		/*
		 * An AH of this context was made by vroce's create_ah and
		 * carries the kernel's AH number.  Any other AH is not ours:
		 * the WQE names AH 0, which the kernel rejects.
		 */
		if (ah->context == qp->vqp.qp.context)
			hdr->u.ud.ah_num = to_vah(ah)->ah_num;
		hdr->u.ud.remote_qpn = wr->wr.ud.remote_qpn;
		hdr->u.ud.remote_qkey = wr->wr.ud.remote_qkey;
	}
	/* An XRC INI QP sends to the XRC SRQ each WR names. */
	if (qp_type == IBV_QPT_XRC_SEND)
		hdr->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	return 0;
}

/* Writes @n SGEs of @sg behind the WQE header of @slot, counted in @hdr. */
void vroce_wqe_put_sges(void *slot, struct vroce_send_wqe *hdr,
			const struct ibv_sge *sg, int n)
{
	struct vroce_sge *sge = (struct vroce_sge *)((uint8_t *)slot +
						    sizeof(*hdr));
	int i;

	hdr->num_sge = n;
	for (i = 0; i < n; i++)
		sge[i] = (struct vroce_sge){
			.addr = sg[i].addr,
			.length = sg[i].length,
			.lkey = sg[i].lkey,
		};
}

/*
 * Check one WR against the QP and, if it is valid, write its WQE to the
 * slot.  Nothing is written for a WR that fails.
 */
static int vroce_write_send_wqe(struct vroce_qp *qp,
				const struct ibv_send_wr *wr, void *slot)
{
	struct vroce_send_wqe hdr;
	bool sges;
	int ret;

	/* An atomic write has no ibv_send_wr form: ibv_wr_atomic_write(). */
	if (wr->opcode == IBV_WR_ATOMIC_WRITE)
		return EINVAL;
	ret = vroce_send_wqe_hdr(qp, wr, &hdr, &sges);
	if (ret)
		return ret;
	if (wr->send_flags & IBV_SEND_INLINE) {
		ret = vroce_copy_inline(qp, wr, &hdr,
					(uint8_t *)slot + sizeof(hdr));
		if (ret)
			return ret;
	} else if (sges) {
		vroce_wqe_put_sges(slot, &hdr, wr->sg_list, wr->num_sge);
	}

	memcpy(slot, &hdr, sizeof(hdr));
	return 0;
}

/*
 * Wake the kernel's send engine: POST_SEND with no work requests, through
 * libibverbs' own command path, which uses the ioctl form of the command
 * where the kernel has it.  A process that received the command FD from
 * another (ibv_import_device()) must: the kernel refuses it write()
 * (ib_safe_file_access(): the FD was opened under other credentials).
 */
int vroce_sq_doorbell(struct vroce_qp *qp)
{
	struct ibv_send_wr *bad = NULL;

	return ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad);
}

/*
 * Publishes the WQEs written up to sq.prod to the kernel; true if its send
 * engine sleeps and needs the doorbell.  Caller holds the SQ lock.
 */
bool vroce_sq_publish(struct vroce_qp *qp)
{
	struct vroce_wq *sq = &qp->sq;

	vroce_ring_store_release(&sq->ring.hdr->prod, sq->prod);
	/*
	 * Pairs with the kernel's barrier between setting NEEDS_WAKEUP and
	 * reading prod again: either it sees our prod or we see its flag.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&sq->ring.hdr->notify, __ATOMIC_RELAXED) &
	       VROCE_SQ_NEEDS_WAKEUP;
}

/*
 * Whether the QP has a send queue (an XRC TGT QP has none) and its state
 * lets it take WRs (RTS on).
 */
bool vroce_sq_accepts(struct vroce_qp *qp)
{
	if (!qp->sq.ring.hdr)
		return false;
	switch (vroce_qp_state(qp)) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		return false;
	default:
		return true;
	}
}

/*
 * Posting sends is refused in RESET, INIT and RTR (in the IBTA QP state
 * machine the send queue accepts WRs from RTS on) and allowed in RTS, SQD,
 * SQE and ERR; in SQE and ERR the kernel completes them with a flush
 * error.  A QP without a send queue (XRC TGT) refuses them all: EINVAL.
 *
 * WRs before the first one that fails are posted; *bad_wr names the one
 * that failed.  If all were posted but the doorbell system call failed,
 * the WRs sit in the SQ until the send engine next wakes; that error is
 * returned with *bad_wr naming the first WR.
 */
int vroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	struct vroce_qp *qp = to_vqp(ibqp);
	struct vroce_wq *sq = &qp->sq;
	struct ibv_send_wr *first = wr;
	bool wakeup = false;
	void *slot;
	uint32_t start, cons;
	int ret = 0;

	if (!vroce_sq_accepts(qp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	vroce_wq_lock(sq);
	start = sq->prod;
	cons = vroce_ring_load_acquire(&sq->ring.hdr->cons);
	for (; wr; wr = wr->next) {
		if (vroce_wq_full(sq, &cons)) {
			ret = ENOMEM;
			break;
		}
		slot = vroce_ring_entry(&sq->ring, sq->prod);
		ret = vroce_write_send_wqe(qp, wr, slot);
		if (ret)
			break;
		sq->prod++;
	}
	if (sq->prod != start)
		wakeup = vroce_sq_publish(qp);
	vroce_wq_unlock(sq);

	if (ret) {
		*bad_wr = wr;
		if (wakeup)
			vroce_sq_doorbell(qp);
		return ret;
	}
	if (wakeup) {
		ret = vroce_sq_doorbell(qp);
		if (ret)
			*bad_wr = first;
	}
	return ret;
}
