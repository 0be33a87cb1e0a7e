// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows, type 1 and type 2: allocation and deallocation, with
 * keys from the space MRs use. Binding is a BIND_MW work request (for
 * both types; the provider turns ibv_bind_mw() into one), carried out by
 * the requester in SQ order; SEND with Invalidate and LOCAL_INV unbind a
 * type 2 window. An unbound window grants nothing. Binding state changes
 * under the lock of the key table, which remote lookups hold too, so an
 * R_Key check never sees half a binding.
 *
 * A type 2 window is tied to the QP it was bound on, the QP itself, not
 * its number (numbers come round again): only that QP reaches it, only a
 * SEND with Invalidate arriving on that QP invalidates it, and destroying
 * the QP unbinds it.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include "vroce.h"
#include "core/roce.h"

/* Ends @mw's binding, if any; under the keys lock. */
static void vroce_mw_unbind(struct vroce_mw *mw)
{
	if (mw->mr)
		atomic_dec(&mw->mr->bound_mws);
	mw->mr = NULL;
	if (mw->qp)
		list_del(&mw->qp_node);
	mw->qp = NULL;
}

/* destroy_qp: the type 2 windows bound on @qp are bound no more. */
void vroce_mw_unbind_qp(struct vroce_qp *qp)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	struct vroce_mw *mw, *next;

	xa_lock_bh(&vdev->keys);
	list_for_each_entry_safe(mw, next, &qp->bound_mws, qp_node)
		vroce_mw_unbind(mw);
	xa_unlock_bh(&vdev->keys);
}

int vroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibmw->device);
	u32 key;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (!vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;
	if (atomic_inc_return(&vdev->n_mw) > VROCE_MAX_MW) {
		err = -ENOMEM;
		goto dec;
	}
	err = vroce_key_alloc(vdev, to_vmw(ibmw), VROCE_KEY_MW, &key);
	if (err)
		goto dec;
	ibmw->rkey = key;
	return 0;
dec:
	atomic_dec(&vdev->n_mw);
	return err;
}

int vroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct vroce_dev *vdev = to_vdev(ibmw->device);
	struct vroce_mw *mw = to_vmw(ibmw);

	xa_lock_bh(&vdev->keys);
	vroce_mw_unbind(mw);
	__xa_erase(&vdev->keys, vroce_key_index(ibmw->rkey));
	xa_unlock_bh(&vdev->keys);
	atomic_dec(&vdev->n_mw);
	return 0;
}

/* The object with the index of @key and tag @tag; under the xarray lock. */
static void *vroce_key_obj(struct vroce_dev *vdev, u32 key, int tag)
{
	void *entry = xa_load(&vdev->keys, vroce_key_index(key));

	return xa_pointer_tag(entry) == tag ? xa_untag_pointer(entry) : NULL;
}

/*
 * Checks a bind of @mw over @mr: the window's access flags to set, or
 * -IB_WC_MW_BIND_ERR.
 */
static int vroce_mw_bind_check(struct vroce_qp *qp, struct vroce_mw *mw,
			       struct vroce_mr *mr,
			       const struct vroce_send_wqe *w)
{
	const struct vroce_mr_xlate *x;
	int access;

	if (!mw || mw->ibmw.pd != qp->ibqp.pd)
		return -IB_WC_MW_BIND_ERR;
	/* A type 2 window is invalidated before it is bound again. */
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->mr)
		return -IB_WC_MW_BIND_ERR;
	/* Local rights in the flags are the MR's: ignored, not refused. */
	access = vroce_mw_bind_access(w->u.bind.access,
				      mw->ibmw.type == IB_MW_TYPE_1);
	if (access < 0)
		return -IB_WC_MW_BIND_ERR;
	if (!w->u.bind.length)
		return access;
	x = mr ? vroce_mr_xlate(mr) : NULL;
	if (!x || x->key != w->u.bind.mr_lkey ||
	    mr->ibmr.pd != qp->ibqp.pd || mr->dma ||
	    !(x->access & IB_ACCESS_MW_BIND) ||
	    !vroce_range_ok(x->iova, x->length, w->u.bind.addr,
			    w->u.bind.length))
		return -IB_WC_MW_BIND_ERR;
	/* Remote writes and atomics need a locally writable MR. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(x->access & IB_ACCESS_LOCAL_WRITE))
		return -IB_WC_MW_BIND_ERR;
	return access;
}

/* A BIND_MW WQE (checked copy): binds the MW its new R_Key names. */
u8 vroce_mw_bind(struct vroce_qp *qp, const struct vroce_send_wqe *w)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	struct vroce_mw *mw;
	struct vroce_mr *mr;
	int access;

	xa_lock_bh(&vdev->keys);
	mw = vroce_key_obj(vdev, w->u.bind.new_rkey, VROCE_KEY_MW);
	mr = vroce_key_obj(vdev, w->u.bind.mr_lkey, VROCE_KEY_MR);
	access = vroce_mw_bind_check(qp, mw, mr, w);
	if (access >= 0) {
		vroce_mw_unbind(mw);
		mw->mr = w->u.bind.length ? mr : NULL;
		if (mw->mr)
			atomic_inc(&mr->bound_mws);
		if (mw->mr && mw->ibmw.type == IB_MW_TYPE_2) {
			mw->qp = qp;
			list_add(&mw->qp_node, &qp->bound_mws);
		}
		/* The bind check matched it against the MR's registration. */
		mw->mr_key = w->u.bind.mr_lkey;
		mw->addr = w->u.bind.addr;
		mw->length = w->u.bind.length;
		mw->access = access;
		mw->ibmw.rkey = w->u.bind.new_rkey;
	}
	xa_unlock_bh(&vdev->keys);
	return access < 0 ? -access : IB_WC_SUCCESS;
}

/*
 * Invalidates @rkey for SEND with Invalidate (@remote) or LOCAL_INV: only
 * a bound type 2 window or a registered FRMR of the QP's PD can be, and a
 * window remotely only through the QP it is bound on; 0 or -EINVAL.
 */
int vroce_key_invalidate(struct vroce_qp *qp, u32 rkey, bool remote)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	struct vroce_mw *mw;
	struct vroce_mr *mr;
	struct vroce_frmr_map *map;
	int err = -EINVAL;

	xa_lock_bh(&vdev->keys);
	mr = vroce_key_obj(vdev, rkey, VROCE_KEY_MR);
	map = mr && mr->frmr ? rcu_dereference_protected(mr->map,
		lockdep_is_held(&vdev->keys.xa_lock)) : NULL;
	/*
	 * As dereg_mr, an FRMR with windows bound stays registered. (ib_core
	 * gives windows to user PDs only and FRMRs to kernel PDs only, so no
	 * bind can reach one today; the rule stands should that change.)
	 */
	if (map && map->x.key == rkey && mr->ibmr.pd == vroce_qp_rx_pd(qp) &&
	    !atomic_read(&mr->bound_mws)) {
		/*
		 * The map goes after a grace period; the pages are the
		 * ULP's again once the copies that took them have ended.
		 */
		RCU_INIT_POINTER(mr->map, NULL);
		kfree_rcu(map, rcu);
		vroce_mr_wait_copies(mr);
		err = 0;
	}
	mw = vroce_key_obj(vdev, rkey, VROCE_KEY_MW);
	if (mw && mw->ibmw.rkey == rkey &&
	    mw->ibmw.pd == vroce_qp_rx_pd(qp) &&
	    mw->ibmw.type == IB_MW_TYPE_2 && mw->mr &&
	    (!remote || mw->qp == qp)) {
		vroce_mw_unbind(mw);
		err = 0;
	}
	xa_unlock_bh(&vdev->keys);
	return err;
}
