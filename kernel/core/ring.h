/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * Index arithmetic of the shared rings (uapi/rdma/vroce-abi.h, "Shared
 * rings"). A ring holds a power-of-two number of entries; its producer
 * and consumer indices are free-running 32-bit counters, and an entry's
 * slot is index & (entries - 1). The ring holds prod - cons entries
 * (modulo 2^32), which the discipline keeps within 0..entries.
 *
 * One side of every ring is the untrusted provider. The kernel keeps its
 * own index privately and reads the peer's index from shared memory; it
 * must accept that index only if the vroce_ring_peer_*_ok() check for its
 * side holds, before it computes anything else from it:
 *
 *   the kernel consumes (SQ, RQ, SRQ): peer prod - own cons in 0..entries
 *   the kernel produces (CQ):          own prod - peer cons in 0..entries
 *
 * The provider uses the same helpers the other way round: it accepts the
 * kernel's prod of a CQ only if vroce_ring_peer_prod_ok() holds (else
 * polling fails with EIO, and never reads past the ring), and takes an
 * SQ or RQ whose indices are more than a ring apart as full.
 *
 * Every helper here works modulo 2^32, so indices wrap past 0xffffffff
 * like any other value.
 */
#ifndef VROCE_CORE_RING_H
#define VROCE_CORE_RING_H

#include "types.h"

/*
 * The largest entry count the index arithmetic allows: with 2^32 entries
 * a full ring and an empty one would look the same.
 */
#define VROCE_RING_ENTRIES_LIMIT	(1u << 31)

/* @n is a power of two (0 is not). */
static inline vr_bool vroce_ring_is_pow2(vr_u32 n)
{
	return n && !(n & (n - 1));
}

/*
 * The smallest power of two >= @n, if that is at most @max (and at most
 * VROCE_RING_ENTRIES_LIMIT); else, and for @n == 0, 0.
 */
static inline vr_u32 vroce_ring_roundup_pow2(vr_u32 n, vr_u32 max)
{
	vr_u32 p = 1;

	if (!n || n > VROCE_RING_ENTRIES_LIMIT || n > max)
		return 0;
	while (p < n)
		p <<= 1;
	return p <= max ? p : 0;
}

/* The slot of index @idx in a ring of @entries (a power of two). */
static inline vr_u32 vroce_ring_slot(vr_u32 idx, vr_u32 entries)
{
	return idx & (entries - 1);
}

/* Entries between @cons and @prod: produced and not yet consumed. */
static inline vr_u32 vroce_ring_used(vr_u32 prod, vr_u32 cons)
{
	return prod - cons;
}

/*
 * Entries the producer may still write into a ring of @entries; 0 also
 * if @prod and @cons are inconsistent (more than @entries apart).
 */
static inline vr_u32 vroce_ring_free(vr_u32 prod, vr_u32 cons,
				     vr_u32 entries)
{
	vr_u32 used = prod - cons;

	return used <= entries ? entries - used : 0;
}

static inline vr_bool vroce_ring_empty(vr_u32 prod, vr_u32 cons)
{
	return prod == cons;
}

/* Full, or inconsistent: nothing more may be produced. */
static inline vr_bool vroce_ring_full(vr_u32 prod, vr_u32 cons,
				      vr_u32 entries)
{
	return vroce_ring_free(prod, cons, entries) == 0;
}

/*
 * A ring this side consumes: is @peer_prod, the producer index read from
 * shared memory, consistent with @own_cons, this side's consumer index?
 * It is iff it is 0..@entries ahead of @own_cons. Then
 * vroce_ring_used(peer_prod, own_cons) entries are ready to consume.
 */
static inline vr_bool vroce_ring_peer_prod_ok(vr_u32 own_cons,
					      vr_u32 peer_prod,
					      vr_u32 entries)
{
	return peer_prod - own_cons <= entries;
}

/*
 * A ring this side produces into: is @peer_cons, the consumer index read
 * from shared memory, consistent with @own_prod, this side's producer
 * index? It is iff it is 0..@entries behind @own_prod. Then
 * vroce_ring_free(own_prod, peer_cons, entries) slots are free.
 */
static inline vr_bool vroce_ring_peer_cons_ok(vr_u32 own_prod,
					      vr_u32 peer_cons,
					      vr_u32 entries)
{
	return own_prod - peer_cons <= entries;
}

/* The entry of index @idx in a ring of @num entries of @stride bytes. */
static inline vr_u8 *vroce_ring_at(vr_u8 *entries, vr_u32 num, vr_u32 stride,
				   vr_u32 idx)
{
	return entries + (vr_size)vroce_ring_slot(idx, num) * stride;
}

/*
 * Removes from a ring the entries between @cons and @prod whose 32-bit
 * field at byte @key_off equals @key, and slides the others, in order,
 * towards @prod; returns the new consumer index, @cons plus the number
 * removed. The ring is @num entries (a power of two) of @stride bytes at
 * @entries; the caller owns every slot from @cons up to @prod (it is the
 * consumer and the producer writes no slot below @prod until the new
 * consumer index is published), and has checked that @prod - @cons is
 * at most @num. Used to drop a destroyed QP's completions from a CQ.
 */
static inline vr_u32 vroce_ring_compact(vr_u8 *entries, vr_u32 num,
					vr_u32 stride, vr_u32 cons,
					vr_u32 prod, vr_u32 key_off,
					vr_u32 key)
{
	vr_u32 src = prod, dst = prod, val;
	const vr_u8 *from;

	while (src != cons) {
		from = vroce_ring_at(entries, num, stride, --src);
		__builtin_memcpy(&val, from + key_off, sizeof(val));
		if (val == key)
			continue;
		if (--dst == src)
			continue;
		__builtin_memcpy(vroce_ring_at(entries, num, stride, dst),
				 from, stride);
	}
	return dst;
}

#endif /* VROCE_CORE_RING_H */
