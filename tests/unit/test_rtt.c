// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * The round-trip estimate of the retransmit timer (core/rtt.h).
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "roce.h"

/* No sample yet: the QP's own timeout. */
static void test_floor(void **state)
{
	struct vroce_rtt r = { 0 };

	(void)state;
	assert_int_equal(vroce_rtt_timeout(&r, 67108), 67108);
	assert_int_equal(vroce_rtt_timeout(&r, 0), 0);
}

static void test_first_sample(void **state)
{
	struct vroce_rtt r = { 0 };

	(void)state;
	vroce_rtt_sample(&r, 1000);
	assert_int_equal(r.srtt, 1000);
	assert_int_equal(r.rttvar, 500);
	/* srtt + 4 * rttvar = 3000, above a 2000 us floor */
	assert_int_equal(vroce_rtt_timeout(&r, 2000), 3000);
	/* a larger floor wins */
	assert_int_equal(vroce_rtt_timeout(&r, 67108), 67108);
}

/* Steady samples: srtt converges, rttvar decays towards 0. */
static void test_converges(void **state)
{
	struct vroce_rtt r = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 200; i++)
		vroce_rtt_sample(&r, 40000);
	assert_int_equal(r.srtt, 40000);
	assert_true(r.rttvar < 100);
	assert_true(vroce_rtt_timeout(&r, 1000) >= 40000);
	assert_true(vroce_rtt_timeout(&r, 1000) < 40500);
}

/* A slow path pushes the timer past a short QP timeout. */
static void test_slow_path(void **state)
{
	struct vroce_rtt r = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 20; i++)
		vroce_rtt_sample(&r, i % 2 ? 30000 : 90000);
	assert_true(r.srtt > 30000 && r.srtt < 90000);
	assert_true(vroce_rtt_timeout(&r, 67108) > 90000);
}

/* The estimate never exceeds VROCE_RTT_MAX_US; a larger floor does. */
static void test_cap(void **state)
{
	struct vroce_rtt r = { 0 };

	(void)state;
	vroce_rtt_sample(&r, 0xffffffffu);
	assert_int_equal(r.srtt, VROCE_RTT_MAX_US);
	assert_int_equal(vroce_rtt_timeout(&r, 1000), VROCE_RTT_MAX_US);
	assert_int_equal(vroce_rtt_timeout(&r, 0xffffffffu), 0xffffffffu);
}

/* A zero sample still counts as a sample (srtt 0 means "none"). */
static void test_zero_sample(void **state)
{
	struct vroce_rtt r = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 100; i++)
		vroce_rtt_sample(&r, 0);
	assert_true(r.srtt > 0);
	assert_int_equal(vroce_rtt_timeout(&r, 4), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_first_sample),
		cmocka_unit_test(test_converges),
		cmocka_unit_test(test_slow_path),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_zero_sample),
	};

	return cmocka_run_group_tests_name("rtt", tests, NULL, NULL);
}
