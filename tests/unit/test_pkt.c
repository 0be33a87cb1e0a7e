// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * Whole transport packets: vroce_pkt_parse() and vroce_pkt_hdr().
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "roce.h"
#include "util.h"

/* Parse a heap copy of exactly @len bytes, so overreads are caught. */
static int parse(struct vroce_pkt *pkt, const uint8_t *buf, size_t len)
{
	uint8_t *b = tight_copy(buf, len);
	int ret = vroce_pkt_parse(pkt, b, len);

	free(b);
	return ret;
}

/* RC SEND_ONLY, pad 1, 3 bytes of payload "abc", ICRC (not checked). */
static void test_send_only(void **state)
{
	uint8_t p[32];
	size_t n;
	struct vroce_pkt pkt;

	(void)state;
	n = hex2bin("04 90 ff ff 00 00 00 2a 80 00 00 07"
		    "61 62 63 00"
		    "11 22 33 44", p, sizeof(p));
	assert_int_equal(n, 20);
	assert_int_equal(parse(&pkt, p, n), 0);
	assert_ptr_equal(pkt.op, vroce_opcode_info(VROCE_OP_RC_SEND_ONLY));
	assert_int_equal(pkt.len, 20);
	assert_int_equal(pkt.hdr_len, 12);
	assert_int_equal(pkt.paylen, 3);
	assert_int_equal(pkt.bth.pad, 1);
	assert_true(pkt.bth.se);
	assert_int_equal(pkt.bth.dqpn, 42);
	assert_int_equal(pkt.bth.psn, 7);
	assert_true(pkt.bth.ackreq);
}

/* RDMA WRITE ONLY with immediate, 8 bytes, no pad. */
static void test_write_imm(void **state)
{
	uint8_t p[64];
	size_t n;
	struct vroce_pkt pkt;
	struct vroce_reth reth;
	uint32_t imm;
	const uint8_t *h;

	(void)state;
	n = hex2bin("0b 00 ff ff 00 00 00 05 00 00 00 01"
		    "00 00 00 00 10 00 00 00 00 00 12 34 00 00 00 08"
		    "ca fe f0 0d"
		    "01 02 03 04 05 06 07 08"
		    "00 00 00 00", p, sizeof(p));
	assert_int_equal(parse(&pkt, p, n), 0);
	assert_int_equal(pkt.hdr_len, 32);
	assert_int_equal(pkt.paylen, 8);

	h = vroce_pkt_hdr(&pkt, p, VROCE_HDR_RETH);
	assert_ptr_equal(h, p + 12);
	assert_int_equal(vroce_reth_parse(&reth, h, 16), 16);
	assert_true(reth.va == 0x10000000ull);
	assert_int_equal(reth.rkey, 0x1234);
	assert_int_equal(reth.dma_len, 8);

	h = vroce_pkt_hdr(&pkt, p, VROCE_HDR_IMMDT);
	assert_ptr_equal(h, p + 28);
	assert_int_equal(vroce_immdt_parse(&imm, h, 4), 4);
	assert_int_equal(imm, 0xcafef00d);
	assert_null(vroce_pkt_hdr(&pkt, p, VROCE_HDR_AETH));
}

/* An ACK has no payload: exactly BTH + AETH + ICRC. */
static void test_ack(void **state)
{
	uint8_t p[32];
	size_t n;
	struct vroce_pkt pkt;

	(void)state;
	n = hex2bin("11 00 ff ff 00 00 00 09 00 00 00 05"
		    "1f 00 00 03"
		    "00 00 00 00", p, sizeof(p));
	assert_int_equal(parse(&pkt, p, n), 0);
	assert_int_equal(pkt.paylen, 0);
	assert_ptr_equal(vroce_pkt_hdr(&pkt, p, VROCE_HDR_AETH), p + 12);

	/* 4 more bytes would be payload on an ACK */
	memset(p + n, 0, 4);
	assert_int_equal(parse(&pkt, p, n + 4), VROCE_EINVAL);
}

/* A zero-length send is legal. */
static void test_zero_len_send(void **state)
{
	uint8_t p[16] = { 0x04, 0x00, 0xff, 0xff };
	struct vroce_pkt pkt;

	(void)state;
	assert_int_equal(parse(&pkt, p, 16), 0);
	assert_int_equal(pkt.paylen, 0);
}

static void test_cnp(void **state)
{
	uint8_t p[32] = { 0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18 };
	struct vroce_pkt pkt;

	(void)state;
	assert_int_equal(parse(&pkt, p, 32), 0);
	assert_int_equal(pkt.hdr_len, 28);
	assert_int_equal(pkt.paylen, 0);
	assert_true(pkt.bth.becn);
	assert_int_equal(pkt.bth.dqpn, 0x118);
	assert_int_equal(parse(&pkt, p, 28), VROCE_ESHORT);
}

static void test_errors(void **state)
{
	uint8_t p[64];
	struct vroce_pkt pkt, orig;
	size_t l;

	(void)state;
	memset(p, 0, sizeof(p));
	p[0] = VROCE_OP_RC_RDMA_WRITE_FIRST;	/* BTH + RETH = 28 */

	memset(&orig, 0x5a, sizeof(orig));
	for (l = 0; l < 32; l++) {
		pkt = orig;
		assert_int_equal(parse(&pkt, p, l), VROCE_ESHORT);
		assert_memory_equal(&pkt, &orig, sizeof(pkt));
	}
	assert_int_equal(parse(&pkt, p, 32), 0);
	assert_int_equal(parse(&pkt, p, 36), 0);
	assert_int_equal(parse(&pkt, p, 34), VROCE_EINVAL);	/* not 4n */

	/* pad count larger than what follows the headers */
	p[1] = 0x30;
	assert_int_equal(parse(&pkt, p, 32), VROCE_EINVAL);
	assert_int_equal(parse(&pkt, p, 36), 0);
	assert_int_equal(pkt.paylen, 1);
	p[1] = 0x10;
	assert_int_equal(parse(&pkt, p, 32), VROCE_EINVAL);
	assert_int_equal(parse(&pkt, p, 36), 0);
	assert_int_equal(pkt.paylen, 3);
	p[1] = 0;

	/* transport version must be 0 */
	p[1] = 0x01;
	assert_int_equal(parse(&pkt, p, 32), VROCE_EPROTO);
	p[1] = 0;

	/* unknown opcodes */
	p[0] = 0x1f;
	assert_int_equal(parse(&pkt, p, 32), VROCE_EPROTO);
	p[0] = 0x4c;	/* RD */
	assert_int_equal(parse(&pkt, p, 32), VROCE_EPROTO);
}

static void test_pad_len(void **state)
{
	(void)state;
	assert_int_equal(vroce_pad_len(0), 0);
	assert_int_equal(vroce_pad_len(1), 3);
	assert_int_equal(vroce_pad_len(2), 2);
	assert_int_equal(vroce_pad_len(3), 1);
	assert_int_equal(vroce_pad_len(4), 0);
	assert_int_equal(vroce_pad_len(4095), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_only),
		cmocka_unit_test(test_write_imm),
		cmocka_unit_test(test_ack),
		cmocka_unit_test(test_zero_len_send),
		cmocka_unit_test(test_cnp),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_pad_len),
	};

	return cmocka_run_group_tests_name("pkt", tests, NULL, NULL);
}
