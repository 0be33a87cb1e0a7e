// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: shared receive queues, basic and XRC.
 *
 * An SRQ is one receive ring, laid out as a QP's RQ: post_srq_recv writes
 * struct vroce_recv_wqe and its SGEs at stride wqe_size and publishes them
 * by advancing prod, with no system call; the kernel consumes them as
 * packets arrive on any QP attached to the SRQ.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "vroce.h"

/*
 * Map the ring the kernel created, after checking that it can hold what
 * the kernel granted in attr: max_wr WQEs of max_sge SGEs each.  The
 * number of an XRC SRQ in the kernel's core response (verbs_srq.srq_num)
 * must be the one of its driver response: XRC INI QPs name the SRQ by
 * what ibv_get_srq_num() returns.
 */
static int vroce_srq_map(struct vroce_srq *srq, int cmd_fd,
			 const struct ibv_srq_attr *attr,
			 const struct vroce_create_srq_resp *drv)
{
	uint64_t need;
	int ret;

	need = (uint64_t)attr->max_sge * sizeof(struct vroce_sge) +
	       sizeof(struct vroce_recv_wqe);
	if (attr->max_wr > drv->entries || drv->wqe_size < need)
		return EPROTO;
	if (srq->vsrq.srq_type == IBV_SRQT_XRC &&
	    srq->vsrq.srq_num != drv->srqn)
		return EPROTO;

	ret = vroce_ring_map(&srq->wq.ring, cmd_fd, drv->ring_offset,
			     drv->ring_size, drv->entries, drv->wqe_size);
	if (ret)
		return ret;
	srq->wq.max_sge = attr->max_sge;
	srq->srqn = drv->srqn;
	return 0;
}

/*
 * The kernel's command for an SRQ of @attr: CREATE_SRQ for a basic one,
 * CREATE_XSRQ for an XRC one, each with our driver response.  On success
 * the granted max_wr and max_sge are in attr->attr.
 */
static int vroce_srq_cmd(struct vroce_srq *srq,
			 struct ibv_srq_init_attr_ex *attr,
			 struct vroce_create_srq_cmd_resp *resp)
{
	struct ibv_create_xsrq xcmd = {};
	struct ibv_create_srq cmd = {};

	if (attr->srq_type == IBV_SRQT_XRC)
		return ibv_cmd_create_srq_ex(attr->pd->context, &srq->vsrq,
					     attr, &xcmd, sizeof(xcmd),
					     &resp->ibv_resp, sizeof(*resp));
	/* struct ibv_srq_init_attr is where the _ex one starts. */
	return ibv_cmd_create_srq(attr->pd, &srq->vsrq.srq,
				  (struct ibv_srq_init_attr *)attr, &cmd,
				  sizeof(cmd), &resp->ibv_resp, sizeof(*resp));
}

/*
 * Creates the SRQ of @attr (srq_type set, a PD) and maps its ring; on
 * failure NULL with errno set.
 */
static struct vroce_srq *vroce_srq_new(struct ibv_srq_init_attr_ex *attr)
{
	struct vroce_create_srq_cmd_resp resp = {};
	struct ibv_pd *ibpd = attr->pd;
	struct vroce_srq *srq;
	bool custom;
	int ret;

	srq = vroce_pd_zalloc(ibpd, sizeof(*srq), VROCE_RES_TYPE_SRQ, &custom);
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	srq->alloc_pd = ibpd;
	srq->custom = custom;
	srq->wq.lockless = vroce_pd_lockless(ibpd);

	ret = pthread_spin_init(&srq->wq.lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_free;

	ret = vroce_srq_cmd(srq, attr, &resp);
	if (ret)
		goto err_lock;

	ret = vroce_srq_map(srq, ibpd->context->cmd_fd, &attr->attr,
			    &resp.drv);
	if (ret)
		goto err_destroy;
	/* ibv_create_srq_ex() leaves these to the provider. */
	srq->vsrq.srq.srq_context = attr->srq_context;
	srq->vsrq.srq.pd = ibpd;
	vroce_pd_get(ibpd);
	return srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_lock:
	pthread_spin_destroy(&srq->wq.lock);
err_free:
	vroce_pd_free(ibpd, srq, VROCE_RES_TYPE_SRQ, custom);
	errno = ret;
	return NULL;
}

struct ibv_srq *vroce_create_srq(struct ibv_pd *ibpd,
				 struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_BASIC,
		.pd = ibpd,
	};
	struct vroce_srq *srq = vroce_srq_new(&ex);

	if (!srq)
		return NULL;
	attr->attr = ex.attr;
	return &srq->vsrq.srq;
}

/* An SRQ of @attr needs a PD, and an XRC one an XRC domain and a CQ. */
static bool vroce_srq_attr_ok(struct ibv_context *ibctx,
			      const struct ibv_srq_init_attr_ex *attr)
{
	const uint32_t xrc = IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;

	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ibctx)
		return false;
	if (attr->srq_type != IBV_SRQT_XRC)
		return true;
	return (attr->comp_mask & xrc) == xrc && attr->xrcd && attr->cq &&
	       attr->xrcd->context == ibctx && attr->cq->context == ibctx;
}

/*
 * ibv_create_srq_ex(): a basic SRQ as ibv_create_srq() makes it, or an
 * XRC SRQ (IBV_SRQT_XRC), which also needs an XRC domain and a CQ of this
 * context.  Tag matching (IBV_SRQT_TM) is not supported: EOPNOTSUPP.
 */
struct ibv_srq *vroce_create_srq_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	struct ibv_srq_init_attr_ex ex = *attr;
	struct vroce_srq *srq;

	if (!(ex.comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		ex.srq_type = IBV_SRQT_BASIC;
	if ((ex.comp_mask & ~known) ||
	    (ex.srq_type != IBV_SRQT_BASIC && ex.srq_type != IBV_SRQT_XRC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!vroce_srq_attr_ok(ibctx, &ex)) {
		errno = EINVAL;
		return NULL;
	}
	ex.comp_mask |= IBV_SRQ_INIT_ATTR_TYPE;
	srq = vroce_srq_new(&ex);
	if (!srq)
		return NULL;
	attr->attr = ex.attr;
	return &srq->vsrq.srq;
}

/* The number the kernel gave the SRQ; what XRC INI QPs send to. */
int vroce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	*srq_num = to_vsrq(ibsrq)->srqn;
	return 0;
}

/*
 * The kernel takes IBV_SRQ_LIMIT (up to the SRQ's size) and refuses
 * IBV_SRQ_MAX_WR with EOPNOTSUPP: the ring is mapped and cannot grow.
 */
int vroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int vroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

/* EBUSY while a QP uses the SRQ: it then stays as it was. */
int vroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct vroce_srq *srq = to_vsrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;

	vroce_ring_unmap(&srq->wq.ring);
	pthread_spin_destroy(&srq->wq.lock);
	vroce_pd_put(srq->alloc_pd);
	vroce_pd_free(srq->alloc_pd, srq, VROCE_RES_TYPE_SRQ, srq->custom);
	return 0;
}

/*
 * WRs before the first one that fails are posted, and published with one
 * release store of prod; *bad_wr names the one that failed: EINVAL for
 * more SGEs than the SRQ takes, ENOMEM when the ring is full.
 */
int vroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	bool posted;

	return vroce_wq_post_recv(&to_vsrq(ibsrq)->wq, wr, bad_wr, &posted);
}

/* Tag matching (IBV_SRQT_TM) is not supported, so no SRQ takes ops. */
int vroce_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *op,
		       struct ibv_ops_wr **bad_op)
{
	(void)ibsrq;

	*bad_op = op;
	return EOPNOTSUPP;
}
