/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * Packet Sequence Number arithmetic.
 *
 * PSNs are 24 bits and wrap. Two PSNs compare through their signed
 * distance modulo 2^24, taken in the window [-2^23, 2^23): @a is "before"
 * @b when b is reached from a by moving forward 1 to 2^23 steps.
 * At exactly 2^23 apart each is "before" the other; live PSNs are never
 * that far apart.
 */
#ifndef VROCE_CORE_PSN_H
#define VROCE_CORE_PSN_H

#include "types.h"

#define VROCE_PSN_MASK		0xffffffu
#define VROCE_PSN_HALF		0x800000u	/* 2^23 */

/* @psn + @n, modulo 2^24. @n may be any u32 (i.e. also -1 for "minus 1"). */
static inline vr_u32 vroce_psn_add(vr_u32 psn, vr_u32 n)
{
	return (psn + n) & VROCE_PSN_MASK;
}

/* Signed distance @a - @b, modulo 2^24, in [-2^23, 2^23). */
static inline vr_s32 vroce_psn_diff(vr_u32 a, vr_u32 b)
{
	vr_u32 d = (a - b) & VROCE_PSN_MASK;

	if (d >= VROCE_PSN_HALF)
		return (vr_s32)d - (vr_s32)(VROCE_PSN_MASK + 1);
	return (vr_s32)d;
}

/* @a comes strictly before @b. */
static inline vr_bool vroce_psn_before(vr_u32 a, vr_u32 b)
{
	return vroce_psn_diff(a, b) < 0;
}

/* @a comes strictly after @b. */
static inline vr_bool vroce_psn_after(vr_u32 a, vr_u32 b)
{
	return vroce_psn_diff(a, b) > 0;
}

/* @psn lies in the @n PSNs starting at @start: start <= psn < start + n. */
static inline vr_bool vroce_psn_in_window(vr_u32 psn, vr_u32 start,
					  vr_u32 n)
{
	vr_s32 d = vroce_psn_diff(psn, start);

	return d >= 0 && (vr_u32)d < n;
}

#endif /* VROCE_CORE_PSN_H */
