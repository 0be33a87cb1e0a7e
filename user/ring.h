/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * The provider's side of the shared rings of <rdma/vroce-abi.h>: mapping
 * one, finding an entry, and the index loads and stores of the ring
 * discipline.  The provider produces on the SQ and RQ and consumes on the
 * CQ; on each ring it keeps the index it owns in its own memory and only
 * ever stores it to the header, never reads it back.
 */
#ifndef VROCE_RING_H
#define VROCE_RING_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include <rdma/vroce-abi.h>

#include "../kernel/core/ring.h"

struct vroce_ring {
	struct vroce_ring_hdr *hdr;	/* start of the mapping */
	uint8_t *entries;		/* hdr + VROCE_RING_ENTRIES_OFFSET */
	size_t map_size;
	uint32_t num;			/* entries, a power of two */
	uint32_t stride;		/* bytes per entry */
};

/* The other side's index: entries it covers are ours to read or reuse. */
static inline uint32_t vroce_ring_load_acquire(const uint32_t *idx)
{
	return __atomic_load_n(idx, __ATOMIC_ACQUIRE);
}

/* Publish our index after writing (producer) or reading (consumer). */
static inline void vroce_ring_store_release(uint32_t *idx, uint32_t val)
{
	__atomic_store_n(idx, val, __ATOMIC_RELEASE);
}

static inline void *vroce_ring_entry(const struct vroce_ring *ring,
				     uint32_t idx)
{
	return ring->entries + (size_t)(idx & (ring->num - 1)) * ring->stride;
}

/*
 * Map the ring the kernel described: num entries of stride bytes behind
 * the header, map_size bytes at offset of cmd_fd.  Returns 0 or an errno
 * value: EPROTO if the description cannot be a ring (num not a power of
 * two, or a map too small to hold it), else mmap()'s error.
 */
static inline int vroce_ring_map(struct vroce_ring *ring, int cmd_fd,
				 uint64_t offset, uint32_t map_size,
				 uint32_t num, uint32_t stride)
{
	void *addr;

	if (!vroce_ring_is_pow2(num) || !stride ||
	    map_size < VROCE_RING_ENTRIES_OFFSET ||
	    (map_size - VROCE_RING_ENTRIES_OFFSET) / stride < num)
		return EPROTO;

	addr = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    cmd_fd, (off_t)offset);
	if (addr == MAP_FAILED)
		return errno;

	ring->hdr = addr;
	ring->entries = (uint8_t *)addr + VROCE_RING_ENTRIES_OFFSET;
	ring->map_size = map_size;
	ring->num = num;
	ring->stride = stride;
	return 0;
}

static inline void vroce_ring_unmap(struct vroce_ring *ring)
{
	if (ring->hdr)
		munmap(ring->hdr, ring->map_size);
	ring->hdr = NULL;
	ring->entries = NULL;
}

#endif /* VROCE_RING_H */
