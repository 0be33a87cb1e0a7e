// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device memory (ibv_alloc_dm(3)). A software device has no memory of its
 * own, so a DM is zeroed kernel memory, whole pages, charged to the
 * caller's memory cgroup. The process maps it: its mmap offset is the one
 * driver attribute of UVERBS_METHOD_DM_ALLOC (vroce-abi.h). MRs on it
 * (ibv_reg_dm_mr(3), always zero-based) reach it through a page map, as a
 * user MR does (mr.c); each such MR holds a reference on every page it
 * maps. ib_core refuses to free a DM that still has MRs.
 *
 * It cannot be swapped: like pinned user memory (ib_umem_get()), it counts
 * in the caller's pinned_vm against RLIMIT_MEMLOCK unless it has
 * CAP_IPC_LOCK, until the DM is freed.
 *
 * The memory belongs to the DM's mmap entry from the start: ib_core frees
 * the entry (vroce_mmap_free()) once the DM is gone and no mmap() is in
 * progress, and pages a process still maps keep their own references.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>
#define UVERBS_MODULE_NAME vroce
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/vroce-abi.h>

#include "vroce.h"

struct vroce_dm {
	struct ib_dm ibdm;
	void *vaddr;			/* owned by the mmap entry */
	size_t size;			/* whole pages */
	struct rdma_user_mmap_entry *mmap;
	struct mm_struct *mm;		/* whose pinned_vm it counts in */
};

static struct vroce_dm *to_vdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct vroce_dm, ibdm);
}

/*
 * The page at @index of @ibdm, with a reference for the caller, or NULL
 * past its end.
 */
struct page *vroce_dm_get_page(struct ib_dm *ibdm, size_t index)
{
	struct vroce_dm *dm = to_vdm(ibdm);
	struct page *page;

	if (index >= dm->size >> PAGE_SHIFT)
		return NULL;
	page = vmalloc_to_page(dm->vaddr + (index << PAGE_SHIFT));
	get_page(page);
	return page;
}

/* Counts @dm's pages in the caller's pinned_vm, as ib_umem_get() does. */
static int vroce_dm_pin_account(struct vroce_dm *dm)
{
	unsigned long npages = dm->size >> PAGE_SHIFT;
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;

	if (atomic64_add_return(npages, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	mmgrab(mm);
	dm->mm = mm;
	return 0;
}

static void vroce_dm_pin_unaccount(struct vroce_dm *dm)
{
	atomic64_sub(dm->size >> PAGE_SHIFT, &dm->mm->pinned_vm);
	mmdrop(dm->mm);
}

static int vroce_dm_check(const struct ib_dm_alloc_attr *attr)
{
	/* Offset 0 of the mapping is page aligned, and no more. */
	if (!attr->length || attr->length > VROCE_MAX_DM_SIZE ||
	    attr->alignment > PAGE_SHIFT)
		return -EINVAL;
	return 0;
}

struct ib_dm *vroce_alloc_dm(struct ib_device *ibdev,
			     struct ib_ucontext *ibuc,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct vroce_dev *vdev = to_vdev(ibdev);
	struct vroce_dm *dm;
	u64 offset;
	int err;

	err = vroce_dm_check(attr);
	if (err)
		return ERR_PTR(err);
	if (atomic_inc_return(&vdev->n_dm) > VROCE_MAX_DM) {
		err = -ENOMEM;
		goto uncount;
	}
	dm = kzalloc(sizeof(*dm), GFP_KERNEL_ACCOUNT);
	if (!dm) {
		err = -ENOMEM;
		goto uncount;
	}
	dm->size = PAGE_ALIGN(attr->length);
	err = vroce_dm_pin_account(dm);
	if (err)
		goto free_dm;
	dm->vaddr = __vmalloc(dm->size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!dm->vaddr) {
		err = -ENOMEM;
		goto unaccount;
	}
	dm->mmap = vroce_mmap_insert(ibuc, dm->vaddr, dm->size, &offset);
	if (IS_ERR(dm->mmap)) {
		err = PTR_ERR(dm->mmap);
		vfree(dm->vaddr);
		goto unaccount;
	}
	err = uverbs_copy_to(attrs, VROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (err) {
		rdma_user_mmap_entry_remove(dm->mmap);
		goto unaccount;
	}
	return &dm->ibdm;
unaccount:
	vroce_dm_pin_unaccount(dm);
free_dm:
	kfree(dm);
uncount:
	atomic_dec(&vdev->n_dm);
	return ERR_PTR(err);
}

int vroce_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct vroce_dm *dm = to_vdm(ibdm);

	rdma_user_mmap_entry_remove(dm->mmap);
	vroce_dm_pin_unaccount(dm);
	atomic_dec(&to_vdev(ibdm->device)->n_dm);
	kfree(dm);
	return 0;
}

/* UVERBS_METHOD_DM_ALLOC answers with the mmap offset of the memory. */
ADD_UVERBS_ATTRIBUTES_SIMPLE(vroce_dm_alloc, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(VROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

const struct uapi_definition vroce_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &vroce_dm_alloc),
	{},
};
