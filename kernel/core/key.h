/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * Memory keys and remote access checks.
 *
 * An lkey or rkey of an MR or MW is 32 bits: a 24-bit index (bits 31..8)
 * that names the region, and an 8-bit key byte (bits 7..0) that changes
 * each time the index is reused, as the IBTA suggests, so that a stale
 * key of a former user of the index no longer matches.
 *
 * Access flags carry the values of the kernel's enum ib_access_flags.
 */
#ifndef VROCE_CORE_KEY_H
#define VROCE_CORE_KEY_H

#include "types.h"

#define VROCE_KEY_INDEX_MAX	0xffffffu
#define VROCE_KEY_INDEX_SHIFT	8
#define VROCE_KEY_BYTE_MASK	0xffu

/* The key of index @index (masked to 24 bits) with key byte @byte. */
static inline vr_u32 vroce_key_make(vr_u32 index, vr_u8 byte)
{
	return (index & VROCE_KEY_INDEX_MAX) << VROCE_KEY_INDEX_SHIFT | byte;
}

static inline vr_u32 vroce_key_index(vr_u32 key)
{
	return key >> VROCE_KEY_INDEX_SHIFT;
}

static inline vr_u8 vroce_key_byte(vr_u32 key)
{
	return key & VROCE_KEY_BYTE_MASK;
}

/*
 * The key byte to use when an index is reused after one with key byte
 * @prev: any of the 255 other byte values, picked by @random (pass
 * get_random_u32()), so it always differs from @prev but the next one
 * cannot be guessed from it. (2^32 = 1 mod 255: the pick is uniform but
 * for one value in 2^32.)
 */
static inline vr_u8 vroce_key_next_byte(vr_u8 prev, vr_u32 random)
{
	return (vr_u8)(prev + 1 + random % 255);
}

/*
 * [@addr, @addr + @len) lies within the region [@mr_start, @mr_start +
 * @mr_len). A zero @len is within if @addr is in the region or at its
 * end. A region that would wrap past 2^64 contains nothing. No sum here
 * can overflow.
 */
static inline vr_bool vroce_range_ok(vr_u64 mr_start, vr_u64 mr_len,
				     vr_u64 addr, vr_u64 len)
{
	vr_u64 off;

	/* The region itself must end at or before 2^64. */
	if (mr_start && mr_len > 0 - mr_start)
		return 0;
	if (addr < mr_start)
		return 0;
	off = addr - mr_start;
	if (off > mr_len)
		return 0;
	return len <= mr_len - off;
}

/*
 * P_Keys (IBTA 10.9.3): the low 15 bits name the partition, the top bit
 * says full (1) or limited (0) membership. Two P_Keys match when they
 * name the same partition and at least one of them is a full member; the
 * invalid P_Keys, partition 0, match nothing.
 */
#define VROCE_PKEY_FULL		0x8000u
#define VROCE_PKEY_BASE_MASK	0x7fffu

static inline vr_bool vroce_pkey_match(vr_u16 a, vr_u16 b)
{
	if (!(a & VROCE_PKEY_BASE_MASK))
		return 0;
	if ((a ^ b) & VROCE_PKEY_BASE_MASK)
		return 0;
	return ((a | b) & VROCE_PKEY_FULL) != 0;
}

/* Access flags: the values of enum ib_access_flags. */
#define VROCE_ACCESS_LOCAL_WRITE	(1u << 0)
#define VROCE_ACCESS_REMOTE_WRITE	(1u << 1)
#define VROCE_ACCESS_REMOTE_READ	(1u << 2)
#define VROCE_ACCESS_REMOTE_ATOMIC	(1u << 3)
#define VROCE_ACCESS_MW_BIND		(1u << 4)

#define VROCE_ACCESS_ZERO_BASED		(1u << 5)

#define VROCE_ACCESS_ALL		((1u << 5) - 1)
#define VROCE_ACCESS_REMOTE		(VROCE_ACCESS_REMOTE_WRITE | \
					 VROCE_ACCESS_REMOTE_READ | \
					 VROCE_ACCESS_REMOTE_ATOMIC)

/*
 * IB_ACCESS_OPTIONAL: flags a device may ignore (bits 20..29, e.g.
 * IB_ACCESS_RELAXED_ORDERING). Applications pass them freely.
 */
#define VROCE_ACCESS_OPTIONAL_RANGE	0x3ff00000u

/*
 * Access flags @flags are acceptable for registering an MR: no bit
 * outside VROCE_ACCESS_ALL but the ignored optional ones, and remote
 * write or remote atomic only with local write (ibv_reg_mr(3)). Not for
 * the access flags of a QP or of an MW bind, where remote write alone is
 * usual.
 */
static inline vr_bool vroce_access_flags_valid(vr_u32 flags)
{
	flags &= ~VROCE_ACCESS_OPTIONAL_RANGE;
	if (flags & ~VROCE_ACCESS_ALL)
		return 0;
	if ((flags & (VROCE_ACCESS_REMOTE_WRITE |
		      VROCE_ACCESS_REMOTE_ATOMIC)) &&
	    !(flags & VROCE_ACCESS_LOCAL_WRITE))
		return 0;
	return 1;
}

/*
 * The access flags of a memory window bind (ibv_bind_mw(3), the
 * mw_access_flags of IBV_WR_BIND_MW), for a window of type 1 if @type1.
 * A window grants remote rights and may be zero-based (remote addresses
 * are then offsets from its start); local write and MW bind are rights of
 * the MR, which a window cannot give, so they are accepted and ignored,
 * as rxe and mlx5 do, like the optional flags. Returns the flags the
 * window keeps (remote rights and zero-based), or -1 if @flags has a bit
 * no window takes, or asks for a zero-based type 1 window (IBTA
 * o10-36.2.2).
 */
static inline int vroce_mw_bind_access(vr_u32 flags, vr_bool type1)
{
	flags &= ~VROCE_ACCESS_OPTIONAL_RANGE;
	if (flags & ~(VROCE_ACCESS_ALL | VROCE_ACCESS_ZERO_BASED))
		return -1;
	if (type1 && (flags & VROCE_ACCESS_ZERO_BASED))
		return -1;
	return (int)(flags & (VROCE_ACCESS_REMOTE | VROCE_ACCESS_ZERO_BASED));
}

#endif /* VROCE_CORE_KEY_H */
