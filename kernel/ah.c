// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles. ib_core has already resolved the destination MAC
 * through the neighbour table (ib_resolve_eth_dmac) and looked up the
 * source GID's attributes; we check that the AH is a RoCE v2 one and give
 * it a number that UD send WQEs name (struct vroce_create_ah_resp). The
 * send path looks the number up without a lock (vroce_ah_dest_get()).
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "vroce.h"

static int vroce_ah_check(const struct rdma_ah_attr *attr)
{
	const struct ib_gid_attr *sgid = attr->grh.sgid_attr;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    rdma_ah_get_port_num(attr) != VROCE_PORT)
		return -EINVAL;
	if (!sgid || sgid->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	return 0;
}

/*
 * The AH table's lock keeps interrupts off: ib_cm creates and destroys
 * AHs under a spinlock taken with spin_lock_irqsave() (cm_alloc_msg()),
 * the MAD layer in other contexts. With @gfp that may sleep, the
 * allocation lets go of the lock (and turns interrupts on) while it
 * waits, which is right there: such callers run with them on.
 */
static int vroce_ah_insert(struct vroce_dev *vdev, struct vroce_ah *ah,
			   gfp_t gfp)
{
	unsigned long flags;
	int err;

	xa_lock_irqsave(&vdev->ahs, flags);
	err = __xa_alloc(&vdev->ahs, &ah->num, ah->dest,
			 XA_LIMIT(1, VROCE_MAX_AH), gfp);
	xa_unlock_irqrestore(&vdev->ahs, flags);
	return err;
}

static void vroce_ah_erase(struct vroce_dev *vdev, struct vroce_ah *ah)
{
	unsigned long flags;

	xa_lock_irqsave(&vdev->ahs, flags);
	__xa_erase(&vdev->ahs, ah->num);
	xa_unlock_irqrestore(&vdev->ahs, flags);
}

int vroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibah->device);
	struct vroce_ah *ah = to_vah(ibah);
	struct vroce_create_ah_resp resp = {};
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							     GFP_ATOMIC;
	int err;

	err = vroce_ah_check(init->ah_attr);
	if (err)
		return err;
	if (udata && !vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;
	ah->dest = kzalloc(sizeof(*ah->dest), gfp | __GFP_ACCOUNT);
	if (!ah->dest)
		return -ENOMEM;
	ah->dest->pd = ibah->pd;
	err = vroce_path_from_attr(vdev, init->ah_attr, &ah->dest->path);
	if (err)
		goto free;
	if (atomic_inc_return(&vdev->n_ah) > VROCE_MAX_AH) {
		err = -ENOMEM;
		goto dec;
	}
	err = vroce_ah_insert(vdev, ah, gfp);
	if (err)
		goto dec;
	rdma_copy_ah_attr(&ah->attr, init->ah_attr);

	if (udata && udata->outlen) {
		resp.ah_num = ah->num;
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err)
			goto erase;
	}
	return 0;
erase:
	rdma_destroy_ah_attr(&ah->attr);
	vroce_ah_erase(vdev, ah);
	atomic_dec(&vdev->n_ah);
	kfree_rcu(ah->dest, rcu);	/* a sender may have found it */
	return err;
dec:
	atomic_dec(&vdev->n_ah);
free:
	kfree(ah->dest);
	return err;
}

int vroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct vroce_dev *vdev = to_vdev(ibah->device);
	struct vroce_ah *ah = to_vah(ibah);

	vroce_ah_erase(vdev, ah);
	rdma_destroy_ah_attr(&ah->attr);
	atomic_dec(&vdev->n_ah);
	kfree_rcu(ah->dest, rcu);
	return 0;
}

/*
 * Copies the destination of AH @num into @p if the AH belongs to @pd.
 * Lock-free: the destination of a destroyed AH outlives any reader.
 */
int vroce_ah_dest_get(struct vroce_dev *vdev, u32 num, const struct ib_pd *pd,
		      struct vroce_path *p)
{
	const struct vroce_ah_dest *d;
	int err = -EINVAL;

	rcu_read_lock();
	d = xa_load(&vdev->ahs, num);
	if (d && d->pd == pd) {
		*p = d->path;
		err = 0;
	}
	rcu_read_unlock();
	return err;
}
