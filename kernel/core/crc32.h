/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * The CRC-32 primitive the core needs but does not implement.
 *
 * The environment links in vroce_crc32(): the kernel module uses
 * crc32_le() or the crypto API's crc32 shash, whichever it measured
 * faster at load (kernel/crc.c, kernel/crc_select.c), the host unit
 * tests use tests/unit/crc32_host.c.
 *
 * Contract. vroce_crc32(crc, buf, len) feeds @len bytes at @buf into the
 * CRC register @crc and returns the new register value, where:
 *   - the CRC is CRC-32 of IEEE 802.3 / Ethernet, polynomial 0x04c11db7,
 *     processed bit-reflected (LSB first; reversed polynomial 0xedb88320);
 *   - there is no inversion on entry nor on exit: callers seed the register
 *     (with 0xffffffff for ICRC) and invert the final value themselves;
 *   - it chains: vroce_crc32(vroce_crc32(c, a, n), b, m) equals the CRC
 *     of the n + m bytes a||b from c; len 0 returns @crc unchanged;
 *   - @buf has no alignment requirement, and the function has no state,
 *     never sleeps and may run in any context (softirq included).
 * That is exactly the kernel's crc32_le(). Check value:
 * ~vroce_crc32(0xffffffff, "123456789", 9) == 0xcbf43926.
 */
#ifndef VROCE_CORE_CRC32_H
#define VROCE_CORE_CRC32_H

#include "types.h"

vr_u32 vroce_crc32(vr_u32 crc, const void *buf, vr_size len);

#endif /* VROCE_CORE_CRC32_H */
