// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CRC-32 the protocol core uses for ICRC: the kernel's crc32_le,
 * which is accelerated where the CPU allows. See core/crc32.h for the
 * contract (raw update, no pre- or post-inversion).
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/crc32.h>

#include "core/crc32.h"

vr_u32 vroce_crc32(vr_u32 crc, const void *buf, vr_size len)
{
	return crc32_le(crc, buf, len);
}
