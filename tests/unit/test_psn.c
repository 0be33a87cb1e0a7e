// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * 24-bit PSN arithmetic with wraparound.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "roce.h"

static void test_add(void **state)
{
	(void)state;
	assert_int_equal(vroce_psn_add(0, 1), 1);
	assert_int_equal(vroce_psn_add(0xfffffe, 1), 0xffffff);
	assert_int_equal(vroce_psn_add(0xffffff, 1), 0);
	assert_int_equal(vroce_psn_add(0xffffff, 2), 1);
	assert_int_equal(vroce_psn_add(0xfffff0, 0x20), 0x10);
	assert_int_equal(vroce_psn_add(5, (uint32_t)-1), 4);	/* minus 1 */
	assert_int_equal(vroce_psn_add(0, (uint32_t)-1), 0xffffff);
	assert_int_equal(vroce_psn_add(0x123456, 0x1000000), 0x123456);
}

static void test_diff(void **state)
{
	(void)state;
	assert_int_equal(vroce_psn_diff(5, 5), 0);
	assert_int_equal(vroce_psn_diff(6, 5), 1);
	assert_int_equal(vroce_psn_diff(5, 6), -1);
	/* across the wrap */
	assert_int_equal(vroce_psn_diff(0, 0xffffff), 1);
	assert_int_equal(vroce_psn_diff(0xffffff, 0), -1);
	assert_int_equal(vroce_psn_diff(0x10, 0xfffff0), 0x20);
	assert_int_equal(vroce_psn_diff(0xfffff0, 0x10), -0x20);
	/* the edges of the window */
	assert_int_equal(vroce_psn_diff(0x7fffff, 0), 0x7fffff);
	assert_int_equal(vroce_psn_diff(0x800000, 0), -0x800000);
	assert_int_equal(vroce_psn_diff(0, 0x800000), -0x800000);
	assert_int_equal(vroce_psn_diff(0, 0x7fffff), -0x7fffff);
	assert_int_equal(vroce_psn_diff(0x800001, 0), -0x7fffff);
	/* only 24 bits count */
	assert_int_equal(vroce_psn_diff(0x1000005, 3), 2);
}

static void test_compare(void **state)
{
	(void)state;
	assert_true(vroce_psn_before(1, 2));
	assert_false(vroce_psn_before(2, 1));
	assert_false(vroce_psn_before(2, 2));
	assert_true(vroce_psn_after(2, 1));
	assert_false(vroce_psn_after(2, 2));
	assert_true(vroce_psn_before(0xffffff, 0));
	assert_true(vroce_psn_after(0, 0xffffff));
	assert_true(vroce_psn_before(0xfffff0, 0x10));
	assert_true(vroce_psn_after(0x10, 0xfffff0));
	assert_true(vroce_psn_after(0x7fffff, 0));
	assert_true(vroce_psn_before(0x800000, 0));
}

/* diff and add agree everywhere: a + diff(b, a) == b. */
static void test_add_diff_inverse(void **state)
{
	uint32_t a, d;
	int32_t k;

	(void)state;
	for (a = 0; a < 0x1000000; a += 0x10101) {
		for (d = 0; d < 0x1000000; d += 0x3e9f7) {
			uint32_t b = vroce_psn_add(a, d);

			k = vroce_psn_diff(b, a);
			assert_true(k >= -0x800000 && k < 0x800000);
			assert_int_equal(vroce_psn_add(a, (uint32_t)k), b);
			assert_int_equal(vroce_psn_before(a, b), k > 0);
		}
	}
}

static void test_window(void **state)
{
	(void)state;
	assert_true(vroce_psn_in_window(10, 10, 1));
	assert_false(vroce_psn_in_window(11, 10, 1));
	assert_false(vroce_psn_in_window(9, 10, 5));
	assert_true(vroce_psn_in_window(14, 10, 5));
	assert_false(vroce_psn_in_window(15, 10, 5));
	assert_false(vroce_psn_in_window(10, 10, 0));
	/* across the wrap */
	assert_true(vroce_psn_in_window(0xfffffe, 0xfffffe, 4));
	assert_true(vroce_psn_in_window(0, 0xfffffe, 4));
	assert_true(vroce_psn_in_window(1, 0xfffffe, 4));
	assert_false(vroce_psn_in_window(2, 0xfffffe, 4));
	assert_false(vroce_psn_in_window(0xfffffd, 0xfffffe, 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_add_diff_inverse),
		cmocka_unit_test(test_window),
	};

	return cmocka_run_group_tests_name("psn", tests, NULL, NULL);
}
