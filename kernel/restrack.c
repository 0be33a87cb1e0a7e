// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Driver details of a QP for `rdma -dd resource show qp`: where an RC or
 * UC QP's requester and responder stand (PSNs, what is in flight, retries
 * left), read under their locks as one snapshot each.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "vroce.h"

struct vroce_res_req {
	u32 sq_psn, una, psn_hi, wqes, rd_out, window;
	u8 retries, rnr_retries, failed;
};

struct vroce_res_resp {
	u32 rq_psn, msn, answers_queued, read_skbs, read_skbs_peak;
};

static int vroce_fill_res_req(struct sk_buff *msg, struct vroce_qp *qp)
{
	struct vroce_req *req = &qp->req;
	struct vroce_res_req r;

	spin_lock_bh(&req->lock);
	r.sq_psn = req->next_psn;
	r.una = req->una;
	r.psn_hi = req->psn_hi;
	r.wqes = req->head - req->tail;
	r.rd_out = req->rd_out;
	r.window = req->window;
	r.retries = req->retries;
	r.rnr_retries = req->rnr_retries;
	r.failed = req->failed;
	spin_unlock_bh(&req->lock);

	if (rdma_nl_put_driver_u32(msg, "sq_psn", r.sq_psn) ||
	    rdma_nl_put_driver_u32(msg, "una_psn", r.una) ||
	    rdma_nl_put_driver_u32(msg, "max_sent_psn", r.psn_hi) ||
	    rdma_nl_put_driver_u32(msg, "sq_wqes_active", r.wqes) ||
	    rdma_nl_put_driver_u32(msg, "rd_atomic_out", r.rd_out) ||
	    rdma_nl_put_driver_u32(msg, "window", r.window) ||
	    rdma_nl_put_driver_u32(msg, "retries_left", r.retries) ||
	    rdma_nl_put_driver_u32(msg, "rnr_retries_left", r.rnr_retries) ||
	    rdma_nl_put_driver_u32(msg, "sq_error_status", r.failed))
		return -EMSGSIZE;
	return 0;
}

static int vroce_fill_res_resp(struct sk_buff *msg, struct vroce_qp *qp)
{
	struct vroce_resp *resp = &qp->resp;
	struct vroce_res_resp r;

	spin_lock_bh(&resp->lock);
	r.rq_psn = resp->epsn;
	r.msn = resp->msn;
	r.answers_queued = resp->res_head - resp->res_tail;
	r.read_skbs_peak = resp->skbs_peak;
	spin_unlock_bh(&resp->lock);
	/*
	 * A dump may run while destroy_qp drops the QP's hold on its ref
	 * (ib_core deletes the QP's restrack entry after destroy_qp), which
	 * then goes a grace period after its last packet: dying is set
	 * before that.
	 */
	rcu_read_lock();
	r.read_skbs = READ_ONCE(qp->dying) ? 0 :
		      atomic_read(&qp->ref->resp.n);
	rcu_read_unlock();

	if (rdma_nl_put_driver_u32(msg, "rq_psn", r.rq_psn) ||
	    rdma_nl_put_driver_u32(msg, "msn", r.msn) ||
	    rdma_nl_put_driver_u32(msg, "answers_queued", r.answers_queued) ||
	    rdma_nl_put_driver_u32(msg, "read_resp_in_stack", r.read_skbs) ||
	    rdma_nl_put_driver_u32(msg, "read_resp_in_stack_peak",
				   r.read_skbs_peak))
		return -EMSGSIZE;
	return 0;
}

/* The details go in a nested RDMA_NLDEV_ATTR_DRIVER table. */
int vroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct vroce_qp *qp = to_vqp(ibqp);
	struct nlattr *table;

	if (!vroce_qp_reliable(qp) && ibqp->qp_type != IB_QPT_UC)
		return 0;
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (vroce_fill_res_req(msg, qp) || vroce_fill_res_resp(msg, qp)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}
