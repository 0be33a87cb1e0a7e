// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CRC-32 the protocol core uses for ICRC (contract in core/crc32.h:
 * raw update, no pre- or post-inversion, any context). Either the
 * kernel's crc32_le() or the crypto API's "crc32" shash, as chosen at
 * load by crc_select.c.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/limits.h>

#include "core/crc32.h"
#include "crc.h"

struct crypto_shash *vroce_crc_tfm;

/*
 * The crc32 shash keeps its CRC register, a u32 with no inversion, as
 * its whole descriptor context (crypto/crc32_generic.c, crc32-pclmul):
 * seed it directly instead of calling init, which would load the key.
 * The descriptor lives on the stack, so this runs in any context; the
 * pclmul driver itself falls back to crc32_le() where SIMD is unusable.
 */
u32 vroce_crc_shash(struct crypto_shash *tfm, u32 crc, const void *buf,
		    size_t len)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	u32 *reg = shash_desc_ctx(desc);

	desc->tfm = tfm;
	*reg = crc;
	if (unlikely(crypto_shash_update(desc, buf, len)))
		return crc32_le(crc, buf, len);
	return *reg;
}

u32 vroce_crc_with(struct crypto_shash *tfm, u32 crc, const void *buf,
		   size_t len)
{
	if (tfm && len >= VROCE_CRC_SHASH_MIN && len <= UINT_MAX)
		return vroce_crc_shash(tfm, crc, buf, len);
	return crc32_le(crc, buf, len);
}

vr_u32 vroce_crc32(vr_u32 crc, const void *buf, vr_size len)
{
	return vroce_crc_with(READ_ONCE(vroce_crc_tfm), crc, buf, len);
}
