/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * Big-endian loads and stores, byte by byte.
 *
 * Wire headers are big-endian and may sit at any alignment, so every field
 * is read and written one byte at a time. The compiler folds these into
 * single (byte-swapping) accesses where the target allows it.
 */
#ifndef VROCE_CORE_BE_H
#define VROCE_CORE_BE_H

#include "types.h"

static inline vr_u16 vroce_get_be16(const vr_u8 *p)
{
	return (vr_u16)(p[0] << 8 | p[1]);
}

static inline vr_u32 vroce_get_be24(const vr_u8 *p)
{
	return (vr_u32)p[0] << 16 | (vr_u32)p[1] << 8 | p[2];
}

static inline vr_u32 vroce_get_be32(const vr_u8 *p)
{
	return (vr_u32)p[0] << 24 | (vr_u32)p[1] << 16 |
	       (vr_u32)p[2] << 8 | p[3];
}

static inline vr_u64 vroce_get_be64(const vr_u8 *p)
{
	return (vr_u64)vroce_get_be32(p) << 32 | vroce_get_be32(p + 4);
}

static inline void vroce_put_be16(vr_u8 *p, vr_u16 v)
{
	p[0] = (vr_u8)(v >> 8);
	p[1] = (vr_u8)v;
}

static inline void vroce_put_be24(vr_u8 *p, vr_u32 v)
{
	p[0] = (vr_u8)(v >> 16);
	p[1] = (vr_u8)(v >> 8);
	p[2] = (vr_u8)v;
}

static inline void vroce_put_be32(vr_u8 *p, vr_u32 v)
{
	p[0] = (vr_u8)(v >> 24);
	p[1] = (vr_u8)(v >> 16);
	p[2] = (vr_u8)(v >> 8);
	p[3] = (vr_u8)v;
}

static inline void vroce_put_be64(vr_u8 *p, vr_u64 v)
{
	vroce_put_be32(p, (vr_u32)(v >> 32));
	vroce_put_be32(p + 4, (vr_u32)v);
}

#endif /* VROCE_CORE_BE_H */
