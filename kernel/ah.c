// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles. ib_core has already resolved the destination MAC
 * through the neighbour table (ib_resolve_eth_dmac) and looked up the
 * source GID's attributes; we check that the AH is a RoCE v2 one and give
 * it a number that UD send WQEs name (struct vroce_create_ah_resp).
 *
 * Copyright (c) 2026 the vroce developers
 */
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

int vroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibah->device);
	struct vroce_ah *ah = to_vah(ibah);
	struct vroce_create_ah_resp resp = {};
	int err;

	err = vroce_ah_check(init->ah_attr);
	if (!err)
		err = vroce_path_from_attr(vdev, init->ah_attr, &ah->path);
	if (err)
		return err;
	if (udata && !vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;
	if (atomic_inc_return(&vdev->n_ah) > VROCE_MAX_AH) {
		err = -ENOMEM;
		goto dec;
	}
	err = xa_alloc_bh(&vdev->ahs, &ah->num, ah, XA_LIMIT(1, VROCE_MAX_AH),
		       init->flags & RDMA_CREATE_AH_SLEEPABLE ?
		       GFP_KERNEL : GFP_ATOMIC);
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
	xa_erase_bh(&vdev->ahs, ah->num);
dec:
	atomic_dec(&vdev->n_ah);
	return err;
}

int vroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct vroce_dev *vdev = to_vdev(ibah->device);
	struct vroce_ah *ah = to_vah(ibah);

	xa_erase_bh(&vdev->ahs, ah->num);
	rdma_destroy_ah_attr(&ah->attr);
	atomic_dec(&vdev->n_ah);
	return 0;
}
