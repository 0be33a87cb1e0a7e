// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * Host implementation of vroce_crc32() for the unit tests: the contract of
 * kernel/core/crc32.h (reflected CRC-32, polynomial 0xedb88320, no
 * inversion), byte-at-a-time with a table built on first use. In the kernel
 * module, crc32_le() takes its place.
 */

#include "crc32.h"

#define CRC32_POLY_REFLECTED	0xedb88320u

static vr_u32 table[256];
static int table_ready;

static void build_table(void)
{
	vr_u32 i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ ((c & 1) ? CRC32_POLY_REFLECTED : 0);
		table[i] = c;
	}
	table_ready = 1;
}

vr_u32 vroce_crc32(vr_u32 crc, const void *buf, vr_size len)
{
	const vr_u8 *p = buf;

	if (!table_ready)
		build_table();
	while (len--)
		crc = (crc >> 8) ^ table[(crc ^ *p++) & 0xff];
	return crc;
}
