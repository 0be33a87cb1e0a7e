// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rings shared with user space: allocation, mapping, and the checks of
 * the index user space owns.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "vroce.h"
#include "queue.h"
#include "core/roce.h"

int vroce_queue_init(struct vroce_queue *ring, u32 entries, u32 stride,
		    struct ib_ucontext *ibuc)
{
	struct rdma_user_mmap_entry *entry;

	memset(ring, 0, sizeof(*ring));
	ring->entries = entries;
	ring->stride = stride;
	ring->size = PAGE_ALIGN(VROCE_RING_ENTRIES_OFFSET +
				(size_t)entries * stride);
	/*
	 * Sized by the caller's capabilities: charged to its memory cgroup
	 * (vmalloc_user() charges nothing). Zeroed, whole pages: nothing of
	 * the kernel's shows through the mapping (mmap.c).
	 */
	ring->buf = __vmalloc(ring->size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!ring->buf)
		return -ENOMEM;
	ring->hdr = ring->buf;
	if (!ibuc)
		return 0;

	entry = vroce_mmap_insert(ibuc, ring->buf, ring->size,
				  &ring->mmap_offset);
	if (IS_ERR(entry)) {
		vfree(ring->buf);
		ring->buf = NULL;
		return PTR_ERR(entry);
	}
	ring->mmap = entry;
	return 0;
}

void vroce_queue_destroy(struct vroce_queue *ring)
{
	if (!ring->buf)
		return;
	/* A mapped ring's memory is freed by vroce_mmap_free(). */
	if (ring->mmap)
		rdma_user_mmap_entry_remove(ring->mmap);
	else
		vfree(ring->buf);
	ring->buf = NULL;
	ring->hdr = NULL;
	ring->mmap = NULL;
}

int vroce_queue_produced(struct vroce_queue *ring)
{
	/* Pairs with the provider's release of prod after it wrote WQEs. */
	u32 prod = smp_load_acquire(&ring->hdr->prod);

	if (!vroce_ring_peer_prod_ok(ring->own, prod, ring->entries))
		return -EINVAL;
	return vroce_ring_used(prod, ring->own);
}

int vroce_queue_free(struct vroce_queue *ring)
{
	/* Pairs with the provider's release of cons after it read CQEs. */
	u32 cons = smp_load_acquire(&ring->hdr->cons);

	if (!vroce_ring_peer_cons_ok(ring->own, cons, ring->entries))
		return -EINVAL;
	return vroce_ring_free(ring->own, cons, ring->entries);
}
