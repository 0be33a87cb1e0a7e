// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The load-time measurement of a CRC-32 implementation: 16 KiB in
 * chunks of 64 B, 1 KiB and 4 KiB, best of three passes each: 144 KiB
 * of CRC per implementation, about a millisecond for both together even
 * in a QEMU TCG VM.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/preempt.h>
#include <linux/printk.h>
#include <linux/sizes.h>
#include <linux/ktime.h>

#include "crc.h"

#define BENCH_BYTES	SZ_16K
#define BENCH_PASSES	3

static const unsigned int bench_sizes[VROCE_CRC_BENCH_N] = {
	64, SZ_1K, SZ_4K
};

/* Nanoseconds of one pass: BENCH_BYTES through @size byte chunks. */
static u64 bench_pass(struct crypto_shash *tfm, const u8 *buf,
		      unsigned int size)
{
	unsigned int i, off = 0;
	u32 crc = ~0u;
	u64 t;

	preempt_disable();
	t = ktime_get_ns();
	for (i = 0; i < BENCH_BYTES / size; i++) {
		crc = vroce_crc_with(tfm, crc, buf + off, size);
		off = (off + size) % VROCE_CRC_BUF_LEN;
	}
	barrier_data(&crc);
	t = ktime_get_ns() - t;
	preempt_enable();
	return t;
}

void vroce_crc_bench(struct crypto_shash *tfm, const u8 *buf,
		     struct vroce_crc_times *t)
{
	unsigned int i, pass;

	for (i = 0; i < VROCE_CRC_BENCH_N; i++) {
		t->ns[i] = U64_MAX;
		for (pass = 0; pass < BENCH_PASSES; pass++)
			t->ns[i] = min(t->ns[i],
				       bench_pass(tfm, buf, bench_sizes[i]));
	}
}

/* MB/s (10^6 bytes per second) of one measurement. */
static u64 bench_mbps(u64 ns)
{
	return div64_u64((u64)BENCH_BYTES * 1000, max_t(u64, ns, 1));
}

void vroce_crc_bench_log(const char *name, const struct vroce_crc_times *t)
{
	pr_info("vroce: icrc: %s: 64 B %llu MB/s, 1 KiB %llu MB/s, 4 KiB %llu MB/s\n",
		name, bench_mbps(t->ns[0]), bench_mbps(t->ns[1]),
		bench_mbps(t->ns[2]));
}

u64 vroce_crc_bench_total(const struct vroce_crc_times *t)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < VROCE_CRC_BENCH_N; i++)
		sum += t->ns[i];
	return sum;
}
