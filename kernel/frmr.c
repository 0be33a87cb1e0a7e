// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fast registration (FRWR) for kernel consumers: ib_alloc_mr() makes an
 * MR with room for a page list and no translation yet; ib_map_mr_sg()
 * stages the pages of a scatterlist; an IB_WR_REG_MR work request then
 * registers them (in SQ order, like every local operation) under a key
 * the consumer chose, and LOCAL_INV or SEND with Invalidate end it. An
 * FRMR that is not registered grants nothing. Each registration is a new
 * struct vroce_frmr_map, published with RCU and freed a grace period
 * after it ends, so that a packet racing a new registration sees the old
 * one or the new one whole.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include "vroce.h"
#include "core/roce.h"

struct ib_mr *vroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct vroce_mr *mr;
	int err = -ENOMEM;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > VROCE_MAX_FRMR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->frmr = true;
	mr->max_pages = max_num_sg;
	/* Lookups read them as soon as the key is published. */
	mr->ibmr.device = ibpd->device;
	mr->ibmr.pd = ibpd;
	mr->stage = kvcalloc(max_num_sg, sizeof(*mr->stage), GFP_KERNEL);
	if (!mr->stage)
		goto free;
	err = vroce_mr_publish(to_vdev(ibpd->device), mr);
	if (err)
		goto free;
	return &mr->ibmr;
free:
	vroce_mr_free(mr);
	return ERR_PTR(err);
}

static int vroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct vroce_mr *mr = to_vmr(ibmr);

	if (mr->nstaged >= mr->max_pages)
		return -ENOMEM;
	mr->stage[mr->nstaged++] = addr;
	return 0;
}

int vroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct vroce_mr *mr = to_vmr(ibmr);

	/* The page map is walked in pages of PAGE_SIZE. */
	if (ibmr->page_size != PAGE_SIZE)
		return -EINVAL;
	mr->nstaged = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, vroce_set_page);
}

/* The registration the staged pages of @mr make, under @key. */
static struct vroce_frmr_map *vroce_frmr_map_new(struct vroce_mr *mr,
						 u32 key, int access)
{
	struct vroce_frmr_map *map;
	u32 i, n = mr->nstaged;

	if (!n || n > mr->max_pages)
		return NULL;
	/* The send engine's context: it may not sleep. */
	map = vroce_fail_packet() ? NULL :
	      kmalloc(struct_size(map, pages, n), GFP_ATOMIC);
	if (!map)
		return NULL;
	/* Virtual DMA: the staged addresses are kernel virtual addresses. */
	for (i = 0; i < n; i++)
		map->pages[i] = virt_to_page((void *)(uintptr_t)mr->stage[i]);
	map->x.pages = map->pages;
	map->x.npages = n;
	map->x.iova = mr->ibmr.iova;
	map->x.length = mr->ibmr.length;
	map->x.page_offset = mr->ibmr.iova - mr->stage[0];
	map->x.key = key;
	map->x.access = access;
	return map;
}

/*
 * An IB_WR_REG_MR WQE of a kernel QP; returns an IB_WC status, or
 * VROCE_WC_NOMEM: try again when there is memory.
 */
u8 vroce_frmr_register(struct vroce_qp *qp, const struct vroce_send_wqe *w)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	struct vroce_frmr_map *map = NULL;
	struct vroce_mr *mr;
	void *entry;
	u8 status = IB_WC_MW_BIND_ERR;

	xa_lock_bh(&vdev->keys);
	entry = xa_load(&vdev->keys, vroce_key_index(w->u.bind.mr_lkey));
	mr = xa_pointer_tag(entry) == VROCE_KEY_MR ? xa_untag_pointer(entry) :
						    NULL;
	if (!mr || !mr->frmr || rcu_access_pointer(mr->map) ||
	    mr->ibmr.pd != qp->ibqp.pd || !mr->nstaged ||
	    !vroce_access_flags_valid(w->u.bind.access))
		goto out;
	/* The new key names the MR's own slot of the key table. */
	if (vroce_key_index(w->u.bind.new_rkey) !=
	    vroce_key_index(w->u.bind.mr_lkey))
		goto out;
	map = vroce_frmr_map_new(mr, w->u.bind.new_rkey, w->u.bind.access);
	if (!map) {
		status = VROCE_WC_NOMEM;
		goto out;
	}
	mr->ibmr.lkey = w->u.bind.new_rkey;
	mr->ibmr.rkey = w->u.bind.new_rkey;
	rcu_assign_pointer(mr->map, map);
	status = IB_WC_SUCCESS;
out:
	xa_unlock_bh(&vdev->keys);
	return status;
}
