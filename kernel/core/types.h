/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * Base types of the protocol core.
 *
 * The core builds both inside the kernel module and into host unit tests
 * (and the provider includes ring.h), so it includes no system header at
 * all. The fixed-width types below are spelled out from the compiler's
 * own types; they are the same types the kernel uses for u8/u16/u32/u64
 * (the kernel is int-ll64 on every arch), so pointers to either mix
 * without casts.
 *
 * They are macros, not typedefs: the kernel style forbids new typedefs.
 */
#ifndef VROCE_CORE_TYPES_H
#define VROCE_CORE_TYPES_H

#define vr_u8		unsigned char
#define vr_u16		unsigned short
#define vr_u32		unsigned int
#define vr_u64		unsigned long long
#define vr_s32		int
#define vr_size		__SIZE_TYPE__
#define vr_bool		_Bool

#define VR_NULL		((void *)0)

_Static_assert(sizeof(vr_u16) == 2, "vr_u16 must be 16 bits");
_Static_assert(sizeof(vr_u32) == 4, "vr_u32 must be 32 bits");
_Static_assert(sizeof(vr_u64) == 8, "vr_u64 must be 64 bits");

/*
 * Error codes of the core. Every function that can fail returns one of
 * these (always negative) or a non-negative success value. They are not
 * errno values: kernel callers map them (usually all to -EINVAL).
 */
enum vroce_err {
	VROCE_ESHORT	= -1,	/* input shorter than the header it must hold */
	VROCE_EINVAL	= -2,	/* a field is out of range or malformed */
	VROCE_ENOSPC	= -3,	/* output buffer too small */
	VROCE_EPROTO	= -4,	/* well formed, but not something we handle */
	VROCE_EBADCRC	= -5,	/* ICRC mismatch */
};

#endif /* VROCE_CORE_TYPES_H */
