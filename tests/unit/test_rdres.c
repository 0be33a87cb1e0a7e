// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * The responder's READ response cursor (core/rdres.h): packet count,
 * positions, addresses and PSNs of a READ's responses, across the PSN
 * wrap; the restart of a duplicate READ; the bound on resources.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "roce.h"

static void test_npkts(void **state)
{
	(void)state;
	assert_int_equal(vroce_rd_npkts(0, 1024), 1);
	assert_int_equal(vroce_rd_npkts(1, 1024), 1);
	assert_int_equal(vroce_rd_npkts(1024, 1024), 1);
	assert_int_equal(vroce_rd_npkts(1025, 1024), 2);
	assert_int_equal(vroce_rd_npkts(0x80000000U, 1024), 0x200000);
	assert_int_equal(vroce_rd_npkts(0x80000000U, 256), 0x800000);
}

/* Walks a whole READ: every response, in order, covering [va, va+len). */
static void walk(vr_u32 psn, vr_u64 va, vr_u32 len, vr_u32 mtu)
{
	struct vroce_rd_cursor c;
	vr_u32 n = 0, p, l, total = 0, want = vroce_rd_npkts(len, mtu);
	vr_u64 a;
	int pos;

	vroce_rd_start(&c, psn, va, len);
	while ((pos = vroce_rd_next(&c, mtu, &p, &a, &l))) {
		assert_int_equal(p, vroce_psn_add(psn, n));
		assert_true(a == va + total);
		if (want == 1)
			assert_int_equal(pos, VROCE_POS_ONLY);
		else if (n == 0)
			assert_int_equal(pos, VROCE_POS_FIRST);
		else if (n == want - 1)
			assert_int_equal(pos, VROCE_POS_LAST);
		else
			assert_int_equal(pos, VROCE_POS_MIDDLE);
		if (pos == VROCE_POS_FIRST || pos == VROCE_POS_MIDDLE)
			assert_int_equal(l, mtu);
		else
			assert_true(l <= mtu && (l || !len));
		total += l;
		n++;
	}
	assert_int_equal(n, want);
	assert_int_equal(total, len);
	assert_false(c.active);
	assert_int_equal(vroce_rd_next(&c, mtu, &p, &a, &l), 0);
}

static void test_walk(void **state)
{
	(void)state;
	walk(100, 0x1000, 0, 1024);
	walk(100, 0x1000, 1, 1024);
	walk(100, 0x1000, 1024, 1024);
	walk(100, 0x1000, 1025, 1024);
	walk(0xfffffe, 0x7fff0000, 5 * 4096 + 3, 4096);	/* PSN wrap */
	walk(7, 0xffffffff0000ULL, 64 * 1024, 256);
}

/* A budget at a time: stopping and resuming changes nothing. */
static void test_resume(void **state)
{
	struct vroce_rd_cursor c;
	vr_u32 p, l, n = 0;
	vr_u64 a;
	int pos, first = 0, last = 0;

	(void)state;
	vroce_rd_start(&c, 0xfffff0, 0, 1000 * 1024);
	while (c.active) {
		for (int i = 0; i < 64 && c.active; i++) {
			pos = vroce_rd_next(&c, 1024, &p, &a, &l);
			first += pos == VROCE_POS_FIRST;
			last += pos == VROCE_POS_LAST;
			assert_int_equal(p, vroce_psn_add(0xfffff0, n));
			n++;
		}
	}
	assert_int_equal(n, 1000);
	assert_int_equal(first, 1);
	assert_int_equal(last, 1);
	/* No MTU: nothing, and the cursor stays. */
	vroce_rd_start(&c, 1, 0, 10);
	assert_int_equal(vroce_rd_next(&c, 0, &p, &a, &l), 0);
	assert_true(c.active);
}

static void test_resume_len(void **state)
{
	(void)state;
	/* a READ of 10 packets at PSN 100..109, MTU 1024 */
	assert_true(vroce_rd_resume_len(100, 109, 100, 10 * 1024, 1024) ==
		    10 * 1024);
	assert_true(vroce_rd_resume_len(100, 109, 105, 5 * 1024 - 7, 1024) ==
		    5 * 1024 - 7);
	/* asks for more than its PSNs carry: cut */
	assert_true(vroce_rd_resume_len(100, 109, 109, 1 << 20, 1024) == 1024);
	/* a PSN outside */
	assert_true(vroce_rd_resume_len(100, 109, 99, 1024, 1024) < 0);
	assert_true(vroce_rd_resume_len(100, 109, 110, 1024, 1024) < 0);
	/* across the wrap */
	assert_true(vroce_rd_resume_len(0xfffffe, 1, 0, 2048, 1024) == 2048);
	assert_true(vroce_rd_resume_len(0xfffffe, 1, 2, 2048, 1024) < 0);
	assert_true(vroce_rd_resume_len(100, 109, 100, 0, 1024) == 0);
	assert_true(vroce_rd_resume_len(100, 109, 100, 10, 0) < 0);
}

static void test_room(void **state)
{
	(void)state;
	assert_true(vroce_rd_room(0, 0, 1));
	assert_false(vroce_rd_room(1, 0, 1));
	assert_true(vroce_rd_room(0, 0, 0));	/* 0 counts as 1 */
	assert_false(vroce_rd_room(1, 0, 0));
	assert_true(vroce_rd_room(1, 1, 0));
	assert_false(vroce_rd_room(2, 1, 0));
	assert_true(vroce_rd_room(3, 0, 4));
	assert_false(vroce_rd_room(4, 0, 4));
	/* counters wrap */
	assert_true(vroce_rd_room(2, 0xfffffffe, 16));
	assert_false(vroce_rd_room(14, 0xfffffffe, 16));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_npkts),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_resume),
		cmocka_unit_test(test_resume_len),
		cmocka_unit_test(test_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
