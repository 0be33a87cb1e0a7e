// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory shared with user space: rings and device memory (dm.c) are
 * vmalloc'd (zeroed, whole pages, charged to the owner's memory cgroup)
 * by their owner, inserted here to get an mmap offset for the provider,
 * and mapped on the provider's mmap() of the uverbs fd. ib_core frees
 * an entry (mmap_free) once its owner removed it and no mmap() is in
 * progress; pages still mapped by a process keep their own page
 * references, so a process never sees freed memory.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "vroce.h"
#include "compat.h"

struct vroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *vaddr;			/* zeroed vmalloc memory, whole pages */
};

static struct vroce_mmap_entry *
to_vmentry(struct rdma_user_mmap_entry *rdma_entry)
{
	return container_of(rdma_entry, struct vroce_mmap_entry, rdma);
}

/*
 * Makes @vaddr (zeroed vmalloc memory, @size bytes) mappable by the context
 * and returns the entry; *@offset is the mmap offset for user space. The
 * caller removes the entry with rdma_user_mmap_entry_remove() and frees
 * @vaddr only from vroce_mmap_free(), which owns it from now on.
 */
struct rdma_user_mmap_entry *
vroce_mmap_insert(struct ib_ucontext *ibuc, void *vaddr, size_t size,
		  u64 *offset)
{
	struct vroce_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL_ACCOUNT);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	entry->vaddr = vaddr;
	err = rdma_user_mmap_entry_insert(ibuc, &entry->rdma,
					  PAGE_ALIGN(size));
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	*offset = rdma_user_mmap_get_offset(&entry->rdma);
	return &entry->rdma;
}

/*
 * Maps the pages of @vaddr, all of @vma, as remap_vmalloc_range() does;
 * that one takes only vmalloc_user() memory, which is not charged to a
 * memory cgroup.
 */
static int vroce_mmap_pages(struct vm_area_struct *vma, void *vaddr)
{
	unsigned long uaddr;
	int err;

	for (uaddr = vma->vm_start; uaddr < vma->vm_end; uaddr += PAGE_SIZE) {
		err = vm_insert_page(vma, uaddr, vmalloc_to_page(vaddr));
		if (err)
			return err;
		vaddr += PAGE_SIZE;
	}
	vroce_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return 0;
}

int vroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	unsigned long len = vma->vm_end - vma->vm_start;
	int err = -EINVAL;

	rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma_entry)
		return -EINVAL;
	/* A ring or a DM is mapped whole, from its start, or not at all. */
	if (len == rdma_entry->npages << PAGE_SHIFT)
		err = vroce_mmap_pages(vma, to_vmentry(rdma_entry)->vaddr);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

void vroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct vroce_mmap_entry *entry = to_vmentry(rdma_entry);

	vfree(entry->vaddr);
	kfree(entry);
}
