// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * IB MTU enum, bytes, and the active MTU for a netdev MTU.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "roce.h"

static void test_enum_bytes(void **state)
{
	(void)state;
	/* the values of enum ib_mtu */
	assert_int_equal(VROCE_IB_MTU_256, 1);
	assert_int_equal(VROCE_IB_MTU_4096, 5);

	assert_int_equal(vroce_mtu_to_bytes(VROCE_IB_MTU_256), 256);
	assert_int_equal(vroce_mtu_to_bytes(VROCE_IB_MTU_512), 512);
	assert_int_equal(vroce_mtu_to_bytes(VROCE_IB_MTU_1024), 1024);
	assert_int_equal(vroce_mtu_to_bytes(VROCE_IB_MTU_2048), 2048);
	assert_int_equal(vroce_mtu_to_bytes(VROCE_IB_MTU_4096), 4096);
	assert_int_equal(vroce_mtu_to_bytes(0), 0);
	assert_int_equal(vroce_mtu_to_bytes(6), 0);
	assert_int_equal(vroce_mtu_to_bytes(-1), 0);

	assert_int_equal(vroce_mtu_from_bytes(256), VROCE_IB_MTU_256);
	assert_int_equal(vroce_mtu_from_bytes(1024), VROCE_IB_MTU_1024);
	assert_int_equal(vroce_mtu_from_bytes(4096), VROCE_IB_MTU_4096);
	assert_int_equal(vroce_mtu_from_bytes(0), 0);
	assert_int_equal(vroce_mtu_from_bytes(1000), 0);
	assert_int_equal(vroce_mtu_from_bytes(8192), 0);
	assert_int_equal(vroce_mtu_from_bytes(128), 0);
}

static void test_overhead(void **state)
{
	(void)state;
	/* IPv6 40 + UDP 8 + BTH 12 + AtomicETH 28 + ICRC 4 */
	assert_int_equal(VROCE_ROCE_OVERHEAD, 92);
}

static void test_netdev(void **state)
{
	(void)state;
	assert_int_equal(vroce_mtu_for_netdev(1500), VROCE_IB_MTU_1024);
	assert_int_equal(vroce_mtu_for_netdev(9000), VROCE_IB_MTU_4096);
	assert_int_equal(vroce_mtu_for_netdev(1100), VROCE_IB_MTU_512);
	assert_int_equal(vroce_mtu_for_netdev(65535), VROCE_IB_MTU_4096);

	/* the exact thresholds: IB MTU + 92 */
	assert_int_equal(vroce_mtu_for_netdev(4188), VROCE_IB_MTU_4096);
	assert_int_equal(vroce_mtu_for_netdev(4187), VROCE_IB_MTU_2048);
	assert_int_equal(vroce_mtu_for_netdev(2140), VROCE_IB_MTU_2048);
	assert_int_equal(vroce_mtu_for_netdev(2139), VROCE_IB_MTU_1024);
	assert_int_equal(vroce_mtu_for_netdev(1116), VROCE_IB_MTU_1024);
	assert_int_equal(vroce_mtu_for_netdev(1115), VROCE_IB_MTU_512);
	assert_int_equal(vroce_mtu_for_netdev(604), VROCE_IB_MTU_512);
	assert_int_equal(vroce_mtu_for_netdev(603), VROCE_IB_MTU_256);
	assert_int_equal(vroce_mtu_for_netdev(348), VROCE_IB_MTU_256);

	/* too small for any IB MTU */
	assert_int_equal(vroce_mtu_for_netdev(347), 0);
	assert_int_equal(vroce_mtu_for_netdev(68), 0);
	assert_int_equal(vroce_mtu_for_netdev(0), 0);
}

/* A full packet of the chosen MTU always fits the netdev. */
static void test_netdev_fits(void **state)
{
	uint32_t nd;
	int m;

	(void)state;
	for (nd = 0; nd < 10000; nd++) {
		m = vroce_mtu_for_netdev(nd);
		if (!m)
			continue;
		assert_true(vroce_mtu_to_bytes(m) + VROCE_ROCE_OVERHEAD <= nd);
		if (m < VROCE_IB_MTU_4096)
			assert_true(vroce_mtu_to_bytes(m + 1) +
				    VROCE_ROCE_OVERHEAD > nd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enum_bytes),
		cmocka_unit_test(test_overhead),
		cmocka_unit_test(test_netdev),
		cmocka_unit_test(test_netdev_fits),
	};

	return cmocka_run_group_tests_name("mtu", tests, NULL, NULL);
}
