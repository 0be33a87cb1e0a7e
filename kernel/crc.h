/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The CRC-32 behind vroce_crc32() (core/crc32.h): the kernel's table code
 * crc32_le() or the crypto API's "crc32" shash (crc32-pclmul on x86),
 * whichever measured faster at module load (crc_select.c).
 *
 * Copyright (c) 2026 the vroce developers
 */
#ifndef VROCE_CRC_H
#define VROCE_CRC_H

#include <linux/types.h>

struct crypto_shash;

/* Shorter buffers always go to crc32_le(): the shash only adds a call. */
#define VROCE_CRC_SHASH_MIN	64

/* The measurement: VROCE_CRC_BENCH_N chunk sizes, in a 4 KiB buffer. */
#define VROCE_CRC_BENCH_N	3
#define VROCE_CRC_BUF_LEN	4096

/* Nanoseconds per chunk size for one implementation. */
struct vroce_crc_times {
	u64 ns[VROCE_CRC_BENCH_N];
};

/* The shash in use, or NULL for crc32_le(); set at load, cleared at exit. */
extern struct crypto_shash *vroce_crc_tfm;

/* One raw CRC-32 update through the crc32 shash @tfm (crc.c). */
u32 vroce_crc_shash(struct crypto_shash *tfm, u32 crc, const void *buf,
		    size_t len);

/*
 * What vroce_crc32() does with @tfm in use: the shash for long enough
 * buffers, crc32_le() otherwise or when @tfm is NULL (crc.c).
 */
u32 vroce_crc_with(struct crypto_shash *tfm, u32 crc, const void *buf,
		   size_t len);

/* Time @tfm (NULL: crc32_le) over @buf, VROCE_CRC_BUF_LEN bytes. */
void vroce_crc_bench(struct crypto_shash *tfm, const u8 *buf,
		     struct vroce_crc_times *t);

/* Log @t as MB/s per chunk size, under the name @name (crc_bench.c). */
void vroce_crc_bench_log(const char *name, const struct vroce_crc_times *t);

/* Total of @t, to compare implementations. */
u64 vroce_crc_bench_total(const struct vroce_crc_times *t);

/* Choose the implementation at load and release it at unload. */
int vroce_crc_init(void);
void vroce_crc_exit(void);

#endif /* VROCE_CRC_H */
