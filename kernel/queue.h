/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A ring shared with user space (see "Shared rings" in vroce-abi.h).
 *
 * The kernel keeps its own index (own) privately and never reads it back
 * from the shared header; the peer's index is read once per batch and
 * accepted only if the ring discipline allows it.
 *
 * Copyright (c) 2026 the vroce developers
 */
#ifndef VROCE_QUEUE_H
#define VROCE_QUEUE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/vroce-abi.h>

struct vroce_queue {
	void *buf;			/* vmalloc'd, zeroed, header first */
	struct vroce_ring_hdr *hdr;
	u32 entries;			/* power of two */
	u32 stride;			/* bytes per entry, power of two */
	u32 own;			/* the index the kernel owns */
	size_t size;			/* bytes mapped by user space */
	struct rdma_user_mmap_entry *mmap;	/* NULL for kernel rings */
	u64 mmap_offset;
};

int vroce_queue_init(struct vroce_queue *ring, u32 entries, u32 stride,
		    struct ib_ucontext *ibuc);
void vroce_queue_destroy(struct vroce_queue *ring);

static inline void *vroce_queue_slot(const struct vroce_queue *ring, u32 idx)
{
	return ring->buf + VROCE_RING_ENTRIES_OFFSET +
	       (size_t)(idx & (ring->entries - 1)) * ring->stride;
}

/*
 * For a ring the kernel consumes: the number of entries user space has
 * produced, or -EINVAL if its producer index is impossible.
 */
int vroce_queue_produced(struct vroce_queue *ring);

/* For a ring the kernel consumes: hand entries up to own back. */
static inline void vroce_queue_publish_cons(struct vroce_queue *ring)
{
	/* Our reads of the entries happen before the provider reuses them. */
	smp_store_release(&ring->hdr->cons, ring->own);
}

/*
 * For a ring the kernel produces into: free entries, or -EINVAL if the
 * consumer index user space wrote is impossible.
 */
int vroce_queue_free(struct vroce_queue *ring);

static inline void vroce_queue_publish_prod(struct vroce_queue *ring)
{
	/* The entries are written before the provider can see them. */
	smp_store_release(&ring->hdr->prod, ring->own);
}

#endif /* VROCE_QUEUE_H */
