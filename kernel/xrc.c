// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * XRC: domains, and the SRQ numbers an XRC request names.
 *
 * An XRC domain is only a name that ties XRC SRQs and XRC target QPs
 * together (ib_core shares it between processes). Every SRQ gets a 24-bit
 * number from the device's table; a target QP's responder finds the SRQ
 * of each request by the number in its XRCETH, lock-free, and uses it
 * only while it handles that packet. Removing an SRQ from the table waits
 * for a grace period, so no packet still uses it when it goes.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include "vroce.h"

int vroce_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibxrcd->device);

	if (udata && !vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;
	if (atomic_inc_return(&vdev->n_xrcd) > VROCE_MAX_PD) {
		atomic_dec(&vdev->n_xrcd);
		return -ENOMEM;
	}
	return 0;
}

int vroce_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	atomic_dec(&to_vdev(ibxrcd->device)->n_xrcd);
	return 0;
}

/*
 * A number for @srq, not reused for as long as possible. Only an XRC SRQ
 * can be found by it: a basic SRQ's number is reserved (a NULL entry),
 * so that no packet ever holds a basic SRQ, which ib_core frees as soon
 * as destroy_srq returns.
 */
int vroce_srqn_alloc(struct vroce_srq *srq)
{
	struct vroce_dev *vdev = to_vdev(srq->ibsrq.device);
	bool xrc = srq->ibsrq.srq_type == IB_SRQT_XRC;
	int err;

	err = xa_alloc_cyclic(&vdev->srqs, &srq->srqn, xrc ? srq : NULL,
			      XA_LIMIT(1, VROCE_QPN_MASK), &vdev->next_srqn,
			      GFP_KERNEL_ACCOUNT);
	return err < 0 ? err : 0;
}

/* No packet finds @srq any more, nor uses it, once this returns. */
void vroce_srqn_free(struct vroce_srq *srq)
{
	struct vroce_dev *vdev = to_vdev(srq->ibsrq.device);

	xa_erase(&vdev->srqs, srq->srqn);
	if (srq->ibsrq.srq_type == IB_SRQT_XRC)
		synchronize_rcu();
}

/*
 * The XRC SRQ number @srqn of XRC target @qp's domain, or NULL. Called
 * with bottom halves off (the receive path, or under resp.lock), which
 * vroce_srqn_free()'s grace period waits for.
 */
struct vroce_srq *vroce_xsrq_find(struct vroce_qp *qp, u32 srqn)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	struct vroce_srq *srq = xa_load(&vdev->srqs, srqn);

	if (!srq || srq->ibsrq.srq_type != IB_SRQT_XRC ||
	    !qp->ibqp.xrcd || srq->ibsrq.ext.xrc.xrcd != qp->ibqp.xrcd)
		return NULL;
	return srq;
}
