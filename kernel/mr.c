// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions. A user MR pins its pages through ib_umem and keeps a
 * page map (one struct page pointer per page) built once at registration:
 * the data path walks it without locks, and it never changes for the
 * life of the MR (rereg makes a new MR under the same keys). A DMA MR
 * (kernel users) covers kernel virtual addresses and has no page map. An
 * MR on device memory (dm.c) maps the DM's pages, holding a reference on
 * each, and is zero-based.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "vroce.h"
#include "core/roce.h"

#define VROCE_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND)

static int vroce_mr_check_access(int access)
{
	if (access & ~(VROCE_MR_ACCESS | IB_ACCESS_OPTIONAL |
		       IB_ACCESS_ON_DEMAND))
		return -EOPNOTSUPP;
	/* ibv_reg_mr(3): remote write or atomic needs local write. */
	if (!vroce_access_flags_valid(access & ~IB_ACCESS_ON_DEMAND))
		return -EINVAL;
	return 0;
}

static int vroce_mr_page_map(struct vroce_mr *mr)
{
	struct sg_page_iter iter;
	u32 i = 0;

	struct vroce_mr_xlate *x = &mr->x;

	x->npages = ib_umem_num_pages(mr->umem);
	x->pages = kvcalloc(x->npages, sizeof(*x->pages), GFP_KERNEL_ACCOUNT);
	if (!x->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON(i >= x->npages))
			break;
		x->pages[i++] = sg_page_iter_page(&iter);
	}
	x->page_offset = ib_umem_offset(mr->umem);
	return 0;
}

/* Gives @mr its key and counts it; @mr must be fully set up. */
int vroce_mr_publish(struct vroce_dev *vdev, struct vroce_mr *mr)
{
	u32 key;
	int err;

	if (atomic_inc_return(&vdev->n_mr) > VROCE_MAX_MR) {
		atomic_dec(&vdev->n_mr);
		return -ENOMEM;
	}
	refcount_set(&mr->ref, 1);
	err = vroce_key_alloc(vdev, mr, VROCE_KEY_MR, &key);
	if (err) {
		atomic_dec(&vdev->n_mr);
		return err;
	}
	mr->x.key = key;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return 0;
}

/* Drops the page references an MR on device memory holds. */
static void vroce_mr_put_pages(struct vroce_mr_xlate *x)
{
	u32 i;

	for (i = 0; i < x->npages && x->pages && x->pages[i]; i++)
		put_page(x->pages[i]);
}

/*
 * Unpins the pages of @mr; no copy may use them any more. An FRMR's
 * registration goes after a grace period: lookups read it before they
 * take a reference.
 */
static void vroce_mr_unpin(struct vroce_mr *mr)
{
	struct vroce_frmr_map *map = rcu_replace_pointer(mr->map, NULL, true);

	if (map)
		kfree_rcu(map, rcu);
	if (mr->dm)
		vroce_mr_put_pages(&mr->x);
	kvfree(mr->x.pages);
	mr->x.pages = NULL;
	kvfree(mr->stage);
	mr->stage = NULL;
	if (mr->umem)
		ib_umem_release(mr->umem);
	mr->umem = NULL;
	vroce_odp_release(mr);
}

/* The struct of @mr (and its ODP state) after a grace period. */
void vroce_mr_kfree(struct vroce_mr *mr)
{
	vroce_odp_free(mr->odp);
	kfree_rcu(mr, rcu);
}

/*
 * Frees an MR the data path never held (a failed registration). Lock-free
 * lookups may still read the struct: it goes after a grace period.
 */
void vroce_mr_free(struct vroce_mr *mr)
{
	vroce_mr_unpin(mr);
	vroce_mr_kfree(mr);
}

/* An ODP MR (odp.c): nothing pinned; implicit for 0 and U64_MAX. */
static struct vroce_mr *vroce_mr_build_odp(struct vroce_dev *vdev, u64 start,
					   u64 length, u64 iova, int access)
{
	struct vroce_mr *mr;
	int err;

	/* A window lends the MR's pages: not pages that come and go. */
	if (access & IB_ACCESS_MW_BIND)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = vroce_odp_init(vdev, mr, start, length, iova, access);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return mr;
}

/* A user MR over [@start, + @length) at @iova, pinned, with no key yet. */
static struct vroce_mr *vroce_mr_build(struct ib_pd *ibpd, u64 start,
				       u64 length, u64 iova, int access,
				       struct ib_udata *udata)
{
	struct vroce_mr *mr;
	int err;

	err = vroce_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	if (!vroce_udata_in_ok(udata, 0))
		return ERR_PTR(-EOPNOTSUPP);
	if (access & IB_ACCESS_ON_DEMAND)
		return vroce_mr_build_odp(to_vdev(ibpd->device), start, length,
					  iova, access);
	if (!length || length > VROCE_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto free;
	}
	err = vroce_mr_page_map(mr);
	if (err)
		goto free;
	mr->x.iova = iova;
	mr->x.length = length;
	mr->x.access = access;
	return mr;
free:
	vroce_mr_free(mr);
	return ERR_PTR(err);
}

struct ib_mr *vroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct vroce_mr *mr;
	int err;

	mr = vroce_mr_build(ibpd, start, length, iova, access, udata);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = vroce_mr_publish(to_vdev(ibpd->device), mr);
	if (err) {
		vroce_mr_free(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/*
 * An MR on [@attr->offset, + @attr->length) of device memory (dm.c): a
 * page map of the DM's pages, each with a reference, addressed from 0
 * (ib_core lets only zero-based ones through, within the DM).
 */
struct ib_mr *vroce_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs)
{
	int access = attr->access_flags & ~IB_ZERO_BASED;
	struct vroce_mr_xlate *x;
	size_t first = attr->offset >> PAGE_SHIFT;
	struct vroce_mr *mr;
	int err;
	u32 i;

	err = vroce_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	if (!attr->length || attr->length > VROCE_MAX_DM_SIZE ||
	    attr->offset > VROCE_MAX_DM_SIZE)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->dm = true;
	x = &mr->x;
	x->page_offset = offset_in_page(attr->offset);
	x->npages = DIV_ROUND_UP(x->page_offset + attr->length, PAGE_SIZE);
	x->pages = kvcalloc(x->npages, sizeof(*x->pages), GFP_KERNEL_ACCOUNT);
	if (!x->pages) {
		err = -ENOMEM;
		goto free;
	}
	for (i = 0; i < x->npages; i++) {
		x->pages[i] = vroce_dm_get_page(ibdm, first + i);
		if (!x->pages[i]) {
			err = -EINVAL;
			goto free;
		}
	}
	x->length = attr->length;
	x->access = access;
	/* Lookups read them as soon as the key is published. */
	mr->ibmr.device = ibpd->device;
	mr->ibmr.pd = ibpd;
	/* ib_core sets neither for a DM MR; QUERY_MR and restrack show them. */
	mr->ibmr.iova = 0;
	mr->ibmr.length = attr->length;
	err = vroce_mr_publish(to_vdev(ibpd->device), mr);
	if (err)
		goto free;
	return &mr->ibmr;
free:
	vroce_mr_free(mr);
	return ERR_PTR(err);
}

struct ib_mr *vroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct vroce_mr *mr;
	int err;

	err = vroce_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->dma = true;
	mr->x.access = access;
	mr->x.length = U64_MAX;
	err = vroce_mr_publish(to_vdev(ibpd->device), mr);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

int vroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibmr->device);
	struct vroce_mr *mr = to_vmr(ibmr);
	bool counted;

	/*
	 * ibv_dereg_mr(3): not while a memory window is bound to it. Binds
	 * happen under the key table's lock: check and erase under it too.
	 */
	xa_lock_bh(&vdev->keys);
	if (atomic_read(&mr->bound_mws)) {
		xa_unlock_bh(&vdev->keys);
		return -EBUSY;
	}
	/*
	 * A re-registered MR's key names its successor now, which also took
	 * over its place in n_mr.
	 */
	counted = !mr->replaced;
	if (counted)
		__xa_erase(&vdev->keys, vroce_key_index(ibmr->lkey));
	xa_unlock_bh(&vdev->keys);
	/*
	 * Held by nobody: from 1 to 0, no late lookup can take it any more,
	 * so no copy runs or can start. The usual case (a ULP tearing down
	 * its MR pools) costs no grace period per MR.
	 */
	if (refcount_dec_if_one(&mr->ref)) {
		vroce_mr_unpin(mr);
		if (counted)
			atomic_dec(&vdev->n_mr);
		vroce_mr_kfree(mr);
		return 0;
	}
	/*
	 * No new lookup finds it now, but a packet may hold it as long as
	 * its peer wishes (a WRITE First and nothing after it): revoke it
	 * rather than wait for that. Each copy looks at the flag in an RCU
	 * read-side section, so after one grace period none is running and
	 * none will start: the pages can go. The struct goes with the last
	 * reference (vroce_mr_put()), and the WRITE in progress fails with a
	 * remote access error NAK at its next packet.
	 */
	WRITE_ONCE(mr->revoked, true);
	synchronize_rcu();
	vroce_mr_unpin(mr);
	if (counted)
		atomic_dec(&vdev->n_mr);
	vroce_mr_put(mr);
	return 0;
}

/*
 * Puts @mr in the place of @old under @old's keys: one store into the key
 * table, so a packet finds either MR whole, never a mix. @mr must be fully
 * set up, with its PD. -EBUSY while a window is bound to @old.
 */
static int vroce_mr_replace(struct vroce_dev *vdev, struct vroce_mr *old,
			    struct vroce_mr *mr)
{
	void *prev;

	refcount_set(&mr->ref, 1);
	mr->x.key = old->x.key;
	mr->ibmr.lkey = old->ibmr.lkey;
	mr->ibmr.rkey = old->ibmr.rkey;
	xa_lock_bh(&vdev->keys);
	if (atomic_read(&old->bound_mws)) {
		xa_unlock_bh(&vdev->keys);
		return -EBUSY;
	}
	/* The slot is in use: storing into it allocates nothing. */
	prev = __xa_store(&vdev->keys, vroce_key_index(old->ibmr.lkey),
			  xa_tag_pointer(mr, VROCE_KEY_MR), GFP_ATOMIC);
	if (WARN_ON(xa_untag_pointer(prev) != old)) {
		__xa_store(&vdev->keys, vroce_key_index(old->ibmr.lkey), prev,
			   GFP_ATOMIC);
		xa_unlock_bh(&vdev->keys);
		return -EINVAL;
	}
	old->replaced = true;
	xa_unlock_bh(&vdev->keys);
	return 0;
}

/*
 * Re-registration keeps the keys (ibv_rereg_mr(3)): it builds a new MR
 * with the new translation, access and PD and publishes it under the old
 * MR's keys in one store; ib_core then deregisters the old MR, which no
 * lookup finds any more. The old MR is untouched if anything fails.
 */
struct ib_mr *vroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibmr->device);
	struct vroce_mr *old = to_vmr(ibmr);
	struct vroce_mr *mr;
	int err;

	if (flags & ~IB_MR_REREG_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	/* ib_core refuses MRs on device memory; kernel MRs never come. */
	if (!old->umem)
		return ERR_PTR(-EOPNOTSUPP);
	if (atomic_read(&old->bound_mws))
		return ERR_PTR(-EBUSY);
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = (u64)old->umem->address;
		length = old->x.length;
		iova = old->x.iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = old->x.access;
	if (!(flags & IB_MR_REREG_PD))
		ibpd = ibmr->pd;
	mr = vroce_mr_build(ibpd, start, length, iova, access, udata);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* Lookups check the PD: it must be there before the MR is found. */
	mr->ibmr.device = ibmr->device;
	mr->ibmr.pd = ibpd;
	err = vroce_mr_replace(vdev, old, mr);
	if (err) {
		vroce_mr_free(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}
