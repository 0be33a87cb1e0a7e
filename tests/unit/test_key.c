// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * Memory keys: index and key byte round trips, key byte renewal, the
 * overflow-safe remote range check, and the access flag rules.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "roce.h"

#define N_ELEMS(a)	(sizeof(a) / sizeof((a)[0]))

/* A small xorshift generator: reproducible "random" input. */
static uint32_t rnd_state = 0x2545f491u;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

static void test_make_split(void **state)
{
	uint32_t idx, key;
	unsigned int b;

	(void)state;
	assert_int_equal(VROCE_KEY_INDEX_MAX, 0xffffff);
	assert_int_equal(vroce_key_make(0, 0), 0);
	assert_int_equal(vroce_key_make(1, 0), 0x100);
	assert_int_equal(vroce_key_make(0x123456, 0x78), 0x12345678);
	assert_int_equal(vroce_key_make(0xffffff, 0xff), 0xffffffff);
	/* the index is masked to 24 bits */
	assert_int_equal(vroce_key_make(0x1000001, 0x02), 0x102);
	assert_int_equal(vroce_key_index(0x12345678), 0x123456);
	assert_int_equal(vroce_key_byte(0x12345678), 0x78);
	assert_int_equal(vroce_key_index(0xffffffff), 0xffffff);
	assert_int_equal(vroce_key_byte(0xffffffff), 0xff);

	for (idx = 0; idx <= VROCE_KEY_INDEX_MAX; idx += 0x1011) {
		for (b = 0; b < 256; b += 17) {
			key = vroce_key_make(idx, (uint8_t)b);
			assert_int_equal(vroce_key_index(key), idx);
			assert_int_equal(vroce_key_byte(key), b);
		}
	}
	for (b = 0; b < 100000; b++) {
		key = rnd();
		assert_int_equal(vroce_key_make(vroce_key_index(key),
						vroce_key_byte(key)), key);
	}
}

static void test_next_byte(void **state)
{
	static const uint32_t edges[] = {
		0, 1, 2, 253, 254, 255, 256, 509, 510, 0x7fffffff,
		0x80000000u, 0xfffffffeu, 0xffffffffu,
	};
	unsigned int prev, i, hits[256];
	uint8_t nb;

	(void)state;
	for (prev = 0; prev < 256; prev++) {
		for (i = 0; i < N_ELEMS(edges); i++)
			assert_int_not_equal(vroce_key_next_byte((uint8_t)prev,
								 edges[i]),
					     prev);
		for (i = 0; i < 20000; i++)
			assert_int_not_equal(vroce_key_next_byte((uint8_t)prev,
								 rnd()),
					     prev);
	}

	/*
	 * Every other byte is reachable, about equally often: 255 * 400
	 * random picks from one prev; each of the 255 should come up near
	 * 400 times.
	 */
	for (prev = 0; prev < 256; prev += 85) {
		memset(hits, 0, sizeof(hits));
		for (i = 0; i < 255 * 400; i++)
			hits[vroce_key_next_byte((uint8_t)prev, rnd())]++;
		assert_int_equal(hits[prev], 0);
		for (i = 0; i < 256; i++) {
			if (i == prev)
				continue;
			assert_in_range(hits[i], 250, 550);
		}
	}

	/* The result follows the random input, not prev alone. */
	nb = vroce_key_next_byte(7, 0);
	for (i = 1; i < 255; i++)
		assert_int_not_equal(vroce_key_next_byte(7, i), nb);
	/* Consecutive random values give 255 different bytes. */
	memset(hits, 0, sizeof(hits));
	for (i = 0; i < 255; i++)
		hits[vroce_key_next_byte(0x42, 0x12345 + i)]++;
	for (i = 0; i < 256; i++)
		assert_int_equal(hits[i], i == 0x42 ? 0 : 1);
}

static void test_range(void **state)
{
	const uint64_t max = UINT64_MAX;

	(void)state;
	/* plain */
	assert_true(vroce_range_ok(0x1000, 0x100, 0x1000, 0x100));
	assert_true(vroce_range_ok(0x1000, 0x100, 0x1080, 0x80));
	assert_true(vroce_range_ok(0x1000, 0x100, 0x10ff, 1));
	assert_false(vroce_range_ok(0x1000, 0x100, 0x10ff, 2));
	assert_false(vroce_range_ok(0x1000, 0x100, 0x1000, 0x101));
	assert_false(vroce_range_ok(0x1000, 0x100, 0xfff, 1));
	assert_false(vroce_range_ok(0x1000, 0x100, 0xfff, 2));
	assert_false(vroce_range_ok(0x1000, 0x100, 0x1100, 1));
	/* zero length: anywhere inside or at the end */
	assert_true(vroce_range_ok(0x1000, 0x100, 0x1000, 0));
	assert_true(vroce_range_ok(0x1000, 0x100, 0x1050, 0));
	assert_true(vroce_range_ok(0x1000, 0x100, 0x1100, 0));
	assert_false(vroce_range_ok(0x1000, 0x100, 0x1101, 0));
	assert_false(vroce_range_ok(0x1000, 0x100, 0xfff, 0));
	/* an empty region */
	assert_true(vroce_range_ok(0x1000, 0, 0x1000, 0));
	assert_false(vroce_range_ok(0x1000, 0, 0x1000, 1));
	assert_false(vroce_range_ok(0x1000, 0, 0x1001, 0));

	/* lengths that would wrap addr + len */
	assert_false(vroce_range_ok(0x1000, 0x100, 0x1080, max));
	assert_false(vroce_range_ok(0x1000, 0x100, 0x1080, max - 0x7f));
	assert_false(vroce_range_ok(0x1000, 0x100, 0x1080,
				    max - 0x1080 + 2));
	assert_false(vroce_range_ok(0, max, 1, max));
	assert_false(vroce_range_ok(0x1000, 0x100, max, 0x1001));
	assert_false(vroce_range_ok(0x1000, 0x100, max, 2));

	/* a region at the very top of the address space */
	assert_true(vroce_range_ok(max - 0xff, 0x100, max - 0xff, 0x100));
	assert_true(vroce_range_ok(max - 0xff, 0x100, max, 1));
	assert_true(vroce_range_ok(max - 0xff, 0x100, max, 0));
	assert_false(vroce_range_ok(max - 0xff, 0x100, max, 2));
	assert_false(vroce_range_ok(max - 0xff, 0x100, max - 0xff, 0x101));
	assert_false(vroce_range_ok(max - 0xff, 0x100, max - 0x100, 1));
	assert_false(vroce_range_ok(max - 0xff, 0x100, max, max));
	/* the whole address space but its last byte */
	assert_true(vroce_range_ok(0, max, 0, max));
	assert_true(vroce_range_ok(0, max, max, 0));
	assert_true(vroce_range_ok(0, max, max - 1, 1));
	assert_false(vroce_range_ok(0, max, max, 1));
	assert_true(vroce_range_ok(1, max, max, 1));

	/* a region that would itself wrap past 2^64 contains nothing */
	assert_false(vroce_range_ok(max - 0xff, 0x101, max - 0xff, 1));
	assert_false(vroce_range_ok(max - 0xff, 0x101, max, 0));
	assert_false(vroce_range_ok(2, max, 2, 1));
	assert_false(vroce_range_ok(max, max, max, 0));
	assert_false(vroce_range_ok(max, 2, max, 1));
	assert_true(vroce_range_ok(max, 1, max, 1));
}

/* Against a 128-bit reference, for random and edge values. */
static void test_range_reference(void **state)
{
	static const uint64_t edges[] = {
		0, 1, 2, 0xff, 0x100, 0x1000, 0x7fffffffffffffffull,
		0x8000000000000000ull, UINT64_MAX - 0x100, UINT64_MAX - 1,
		UINT64_MAX,
	};
	const unsigned int ne = N_ELEMS(edges);
	unsigned int a, b, c, d, i;
	uint64_t v[4];

	(void)state;
	for (i = 0; i < ne * ne * ne * ne + 200000; i++) {
		if (i < ne * ne * ne * ne) {
			a = i % ne;
			b = i / ne % ne;
			c = i / ne / ne % ne;
			d = i / ne / ne / ne;
			v[0] = edges[a];
			v[1] = edges[b];
			v[2] = edges[c];
			v[3] = edges[d];
		} else {
			/* random, in a small space so hits happen */
			v[0] = ((uint64_t)rnd() << 32 | rnd()) >> (rnd() % 64);
			if (rnd() % 8 == 0)
				v[0] = UINT64_MAX - rnd() % 0x400;
			v[1] = rnd() % 0x200;
			v[2] = v[0] + (uint64_t)(rnd() % 0x300) - 0x80;
			v[3] = rnd() % 0x200;
			if (rnd() % 4 == 0)
				v[3] = UINT64_MAX - rnd() % 0x200;
		}
		{
			unsigned __int128 s = v[0], l = v[1];
			unsigned __int128 x = v[2], n = v[3];
			int want = s + l <= (unsigned __int128)1 << 64 &&
				   x >= s && x + n <= s + l;

			assert_int_equal(vroce_range_ok(v[0], v[1], v[2], v[3]),
					 want);
		}
	}
}

static void test_access(void **state)
{
	uint32_t f;
	int i;

	(void)state;
	assert_int_equal(VROCE_ACCESS_LOCAL_WRITE, 1);
	assert_int_equal(VROCE_ACCESS_REMOTE_WRITE, 2);
	assert_int_equal(VROCE_ACCESS_REMOTE_READ, 4);
	assert_int_equal(VROCE_ACCESS_REMOTE_ATOMIC, 8);
	assert_int_equal(VROCE_ACCESS_MW_BIND, 16);
	assert_int_equal(VROCE_ACCESS_OPTIONAL_RANGE, 0x3ff00000);

	/* every combination of the five known bits */
	for (f = 0; f < 32; f++) {
		int need_lw = (f & (2 | 8)) != 0;

		assert_int_equal(vroce_access_flags_valid(f),
				 !need_lw || (f & 1));
	}
	assert_true(vroce_access_flags_valid(0));
	assert_true(vroce_access_flags_valid(VROCE_ACCESS_LOCAL_WRITE));
	assert_true(vroce_access_flags_valid(VROCE_ACCESS_REMOTE_READ));
	assert_true(vroce_access_flags_valid(VROCE_ACCESS_MW_BIND));
	assert_false(vroce_access_flags_valid(VROCE_ACCESS_REMOTE_WRITE));
	assert_false(vroce_access_flags_valid(VROCE_ACCESS_REMOTE_ATOMIC));
	assert_false(vroce_access_flags_valid(VROCE_ACCESS_REMOTE_WRITE |
					      VROCE_ACCESS_REMOTE_READ));
	assert_true(vroce_access_flags_valid(VROCE_ACCESS_LOCAL_WRITE |
					     VROCE_ACCESS_REMOTE_WRITE |
					     VROCE_ACCESS_REMOTE_READ |
					     VROCE_ACCESS_REMOTE_ATOMIC));

	/* unknown bits: zero-based, on-demand, hugetlb, and the rest */
	for (i = 5; i < 32; i++) {
		f = VROCE_ACCESS_LOCAL_WRITE | 1u << i;
		if (i >= 20 && i <= 29)
			/* optional: a device may ignore them */
			assert_true(vroce_access_flags_valid(f));
		else
			assert_false(vroce_access_flags_valid(f));
	}
	/* optional bits do not excuse a missing local write */
	assert_false(vroce_access_flags_valid(VROCE_ACCESS_REMOTE_WRITE |
					      1u << 20));
}

/* The flags of a memory window bind: local rights ignored, not refused. */
static void test_mw_bind_access(void **state)
{
	const uint32_t zb = VROCE_ACCESS_ZERO_BASED;
	uint32_t f;
	int i, t1;

	(void)state;
	assert_int_equal(VROCE_ACCESS_ZERO_BASED, 32);
	assert_int_equal(VROCE_ACCESS_REMOTE, 2 | 4 | 8);

	/* every combination of the six known bits, both window types */
	for (t1 = 0; t1 < 2; t1++) {
		for (f = 0; f < 64; f++) {
			int want = (int)(f & (2 | 4 | 8 | 32));

			if (t1 && (f & zb))
				want = -1;
			assert_int_equal(vroce_mw_bind_access(f, t1), want);
			/* optional bits change nothing */
			assert_int_equal(vroce_mw_bind_access(f | 1u << 20 |
							      1u << 29, t1),
					 want);
		}
	}
	/* the case: local write with remote write, either type */
	f = VROCE_ACCESS_LOCAL_WRITE | VROCE_ACCESS_REMOTE_WRITE;
	assert_int_equal(vroce_mw_bind_access(f, 1), VROCE_ACCESS_REMOTE_WRITE);
	assert_int_equal(vroce_mw_bind_access(f, 0), VROCE_ACCESS_REMOTE_WRITE);
	assert_int_equal(vroce_mw_bind_access(f | VROCE_ACCESS_MW_BIND, 0),
			 VROCE_ACCESS_REMOTE_WRITE);
	/* zero-based: type 2 only (IBTA o10-36.2.2) */
	assert_int_equal(vroce_mw_bind_access(f | zb, 0),
			 VROCE_ACCESS_REMOTE_WRITE | zb);
	assert_int_equal(vroce_mw_bind_access(f | zb, 1), -1);
	/* unknown bits: on-demand, hugetlb, and the rest */
	for (i = 6; i < 32; i++) {
		if (i >= 20 && i <= 29)
			continue;
		assert_int_equal(vroce_mw_bind_access(1u << i, 0), -1);
		assert_int_equal(vroce_mw_bind_access(1u << i, 1), -1);
	}
}

static void test_pkey(void **state)
{
	(void)state;
	/* The default partition, full and limited members. */
	assert_true(vroce_pkey_match(0xffff, 0xffff));
	assert_true(vroce_pkey_match(0x7fff, 0xffff));
	assert_true(vroce_pkey_match(0xffff, 0x7fff));
	assert_false(vroce_pkey_match(0x7fff, 0x7fff));
	/* Another partition, whatever the membership. */
	assert_false(vroce_pkey_match(0x1234, 0xffff));
	assert_false(vroce_pkey_match(0x9234, 0xffff));
	assert_false(vroce_pkey_match(0xfffe, 0xffff));
	assert_true(vroce_pkey_match(0x9234, 0x1234));
	/* Partition 0 is invalid, even against itself. */
	assert_false(vroce_pkey_match(0x0000, 0x0000));
	assert_false(vroce_pkey_match(0x8000, 0x8000));
	assert_false(vroce_pkey_match(0x8000, 0x0000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_make_split),
		cmocka_unit_test(test_next_byte),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_range_reference),
		cmocka_unit_test(test_access),
		cmocka_unit_test(test_mw_bind_access),
		cmocka_unit_test(test_pkey),
	};

	return cmocka_run_group_tests_name("key", tests, NULL, NULL);
}
