// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * AETH syndromes and RNR timer codes (IBTA vol 1, 9.7.5.2.4, table 45).
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "roce.h"

static void test_syndrome_values(void **state)
{
	(void)state;
	/* ACK: type 00; 0x1f is "invalid credit count". */
	assert_int_equal(vroce_aeth_syn_ack(0), 0x00);
	assert_int_equal(vroce_aeth_syn_ack(5), 0x05);
	assert_int_equal(vroce_aeth_syn_ack(VROCE_AETH_CREDIT_INVALID), 0x1f);
	/* RNR NAK: type 01 */
	assert_int_equal(vroce_aeth_syn_rnr_nak(0), 0x20);
	assert_int_equal(vroce_aeth_syn_rnr_nak(14), 0x2e);
	assert_int_equal(vroce_aeth_syn_rnr_nak(31), 0x3f);
	/* NAK: type 11, codes 0..4 */
	assert_int_equal(vroce_aeth_syn_nak(VROCE_NAK_PSN_SEQ_ERR), 0x60);
	assert_int_equal(vroce_aeth_syn_nak(VROCE_NAK_INVALID_REQ), 0x61);
	assert_int_equal(vroce_aeth_syn_nak(VROCE_NAK_REMOTE_ACCESS_ERR),
			 0x62);
	assert_int_equal(vroce_aeth_syn_nak(VROCE_NAK_REMOTE_OP_ERR), 0x63);
	assert_int_equal(vroce_aeth_syn_nak(VROCE_NAK_INVALID_RD_REQ), 0x64);
}

static void test_syndrome_range(void **state)
{
	(void)state;
	assert_int_equal(vroce_aeth_syn_ack(32), VROCE_EINVAL);
	assert_int_equal(vroce_aeth_syn_rnr_nak(32), VROCE_EINVAL);
	assert_int_equal(vroce_aeth_syn_nak(5), VROCE_EINVAL);
	assert_int_equal(vroce_aeth_syn_nak(31), VROCE_EINVAL);
}

static void test_syndrome_decode(void **state)
{
	unsigned int v;

	(void)state;
	for (v = 0; v < 32; v++) {
		assert_int_equal(vroce_aeth_syn_type(vroce_aeth_syn_ack(v)),
				 VROCE_AETH_ACK);
		assert_int_equal(vroce_aeth_syn_value(vroce_aeth_syn_ack(v)),
				 v);
		assert_int_equal(
			vroce_aeth_syn_type(vroce_aeth_syn_rnr_nak(v)),
			VROCE_AETH_RNR_NAK);
		assert_int_equal(
			vroce_aeth_syn_value(vroce_aeth_syn_rnr_nak(v)), v);
	}
	for (v = 0; v <= VROCE_NAK_INVALID_RD_REQ; v++) {
		assert_int_equal(vroce_aeth_syn_type(vroce_aeth_syn_nak(v)),
				 VROCE_AETH_NAK);
		assert_int_equal(vroce_aeth_syn_value(vroce_aeth_syn_nak(v)),
				 v);
	}
	assert_int_equal(vroce_aeth_syn_type(0x40), VROCE_AETH_RSVD);
	assert_int_equal(vroce_aeth_syn_type(0x5f), VROCE_AETH_RSVD);
	/* the reserved top bit does not change the decoding */
	assert_int_equal(vroce_aeth_syn_type(0xe3), VROCE_AETH_NAK);
	assert_int_equal(vroce_aeth_syn_value(0xe3), 3);
	assert_int_equal(vroce_aeth_syn_type(0x85), VROCE_AETH_ACK);
}

static void test_rnr_timer_table(void **state)
{
	unsigned int t;

	(void)state;
	/* spot checks against the spec table */
	assert_int_equal(vroce_rnr_timer_usecs(0), 655360);
	assert_int_equal(vroce_rnr_timer_usecs(1), 10);
	assert_int_equal(vroce_rnr_timer_usecs(5), 60);
	assert_int_equal(vroce_rnr_timer_usecs(14), 1280);
	assert_int_equal(vroce_rnr_timer_usecs(18), 5120);
	assert_int_equal(vroce_rnr_timer_usecs(25), 61440);
	assert_int_equal(vroce_rnr_timer_usecs(31), 491520);
	assert_int_equal(vroce_rnr_timer_usecs(32), 0);

	/*
	 * Codes 1..31 grow; from code 2 on every other step doubles
	 * (x1.5 then x4/3), so code n + 2 is twice code n.
	 */
	for (t = 2; t <= 31; t++)
		assert_true(vroce_rnr_timer_usecs(t) >
			    vroce_rnr_timer_usecs(t - 1));
	for (t = 2; t + 2 <= 31; t++)
		assert_int_equal(vroce_rnr_timer_usecs(t + 2),
				 2 * vroce_rnr_timer_usecs(t));
	assert_true(vroce_rnr_timer_usecs(0) > vroce_rnr_timer_usecs(31));
}

static void test_rnr_timer_from_usecs(void **state)
{
	unsigned int t;

	(void)state;
	assert_int_equal(vroce_rnr_timer_from_usecs(0), 1);
	assert_int_equal(vroce_rnr_timer_from_usecs(10), 1);
	assert_int_equal(vroce_rnr_timer_from_usecs(11), 2);
	assert_int_equal(vroce_rnr_timer_from_usecs(1000), 14);
	assert_int_equal(vroce_rnr_timer_from_usecs(491520), 31);
	assert_int_equal(vroce_rnr_timer_from_usecs(491521), 0);
	assert_int_equal(vroce_rnr_timer_from_usecs(10000000), 0);
	for (t = 1; t <= 31; t++)
		assert_int_equal(
			vroce_rnr_timer_from_usecs(vroce_rnr_timer_usecs(t)),
			t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syndrome_values),
		cmocka_unit_test(test_syndrome_range),
		cmocka_unit_test(test_syndrome_decode),
		cmocka_unit_test(test_rnr_timer_table),
		cmocka_unit_test(test_rnr_timer_from_usecs),
	};

	return cmocka_run_group_tests_name("aeth", tests, NULL, NULL);
}
