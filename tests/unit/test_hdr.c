// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * Transport headers: byte images written by hand from IBTA vol 1 ch. 9,
 * round trips, and clean failure on short buffers and out-of-range fields.
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

#define GUARD 0xee

/* Deterministic pseudo-random numbers for the round trips. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/*
 * Checks one header kind: @image (its exact wire form, @size bytes) must
 * parse into @want and @want must pack back into @image; every length below
 * @size must fail without writing anything; packing must not write past
 * the header.
 */
#define CHECK_HDR(kind, type, image, size, want)			\
	do {								\
		type got_, orig_;					\
		uint8_t out_[64];					\
		uint8_t *b_;						\
		size_t l_;						\
		assert_int_equal(sizeof(image), size);			\
		memset(&got_, 0, sizeof(got_));				\
		assert_int_equal(vroce_##kind##_parse(&got_, image,	\
						      size), size);	\
		check_##kind(&got_, &(want));				\
		memset(out_, GUARD, sizeof(out_));			\
		assert_int_equal(vroce_##kind##_pack(&(want), out_,	\
						     size), size);	\
		assert_memory_equal(out_, image, size);			\
		for (l_ = size; l_ < sizeof(out_); l_++)		\
			assert_int_equal(out_[l_], GUARD);		\
		memset(&orig_, 0x5a, sizeof(orig_));			\
		for (l_ = 0; l_ < size; l_++) {				\
			memcpy(&got_, &orig_, sizeof(got_));		\
			b_ = tight_copy(image, l_);			\
			assert_int_equal(vroce_##kind##_parse(&got_,	\
					 b_, l_), VROCE_ESHORT);	\
			free(b_);					\
			assert_memory_equal(&got_, &orig_,		\
					    sizeof(got_));		\
			memset(out_, GUARD, sizeof(out_));		\
			assert_int_equal(vroce_##kind##_pack(&(want),	\
					 out_, l_), VROCE_ENOSPC);	\
			for (size_t k_ = 0; k_ < sizeof(out_); k_++)	\
				assert_int_equal(out_[k_], GUARD);	\
		}							\
	} while (0)

static void check_bth(const struct vroce_bth *g, const struct vroce_bth *w)
{
	assert_int_equal(g->opcode, w->opcode);
	assert_int_equal(g->se, w->se);
	assert_int_equal(g->mig, w->mig);
	assert_int_equal(g->pad, w->pad);
	assert_int_equal(g->tver, w->tver);
	assert_int_equal(g->pkey, w->pkey);
	assert_int_equal(g->fecn, w->fecn);
	assert_int_equal(g->becn, w->becn);
	assert_int_equal(g->dqpn, w->dqpn);
	assert_int_equal(g->ackreq, w->ackreq);
	assert_int_equal(g->psn, w->psn);
}

static void check_reth(const struct vroce_reth *g, const struct vroce_reth *w)
{
	assert_true(g->va == w->va);
	assert_int_equal(g->rkey, w->rkey);
	assert_int_equal(g->dma_len, w->dma_len);
}

static void check_aeth(const struct vroce_aeth *g, const struct vroce_aeth *w)
{
	assert_int_equal(g->syndrome, w->syndrome);
	assert_int_equal(g->msn, w->msn);
}

static void check_atmeth(const struct vroce_atmeth *g,
			 const struct vroce_atmeth *w)
{
	assert_true(g->va == w->va);
	assert_int_equal(g->rkey, w->rkey);
	assert_true(g->swap_add == w->swap_add);
	assert_true(g->compare == w->compare);
}

static void check_atmack(const struct vroce_atmack *g,
			 const struct vroce_atmack *w)
{
	assert_true(g->orig == w->orig);
}

static void check_deth(const struct vroce_deth *g, const struct vroce_deth *w)
{
	assert_int_equal(g->qkey, w->qkey);
	assert_int_equal(g->sqpn, w->sqpn);
}

static void test_sizes(void **state)
{
	(void)state;
	assert_int_equal(VROCE_BTH_LEN, 12);
	assert_int_equal(VROCE_RETH_LEN, 16);
	assert_int_equal(VROCE_AETH_LEN, 4);
	assert_int_equal(VROCE_ATMETH_LEN, 28);
	assert_int_equal(VROCE_ATMACK_LEN, 8);
	assert_int_equal(VROCE_IMMDT_LEN, 4);
	assert_int_equal(VROCE_IETH_LEN, 4);
	assert_int_equal(VROCE_DETH_LEN, 8);
	assert_int_equal(VROCE_ICRC_LEN, 4);
}

/*
 * RC SEND_ONLY, SE, pad 2, P_Key 0xffff, B bit, DestQP 0x123456, AckReq,
 * PSN 0xabcdef:
 *   byte 1 = SE(0x80) | PadCnt 2 << 4 (0x20) = 0xa0, byte 4 = B = 0x40.
 */
static void test_bth_image(void **state)
{
	static const uint8_t img[] = {
		0x04, 0xa0, 0xff, 0xff, 0x40, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,
	};
	struct vroce_bth w = {
		.opcode = 0x04, .se = 1, .pad = 2, .pkey = 0xffff,
		.becn = 1, .dqpn = 0x123456, .ackreq = 1, .psn = 0xabcdef,
	};

	(void)state;
	CHECK_HDR(bth, struct vroce_bth, img, 12, w);
}

/* Every bit of bytes 1 and the F/B bits set; QP and PSN at their maximum. */
static void test_bth_all_ones(void **state)
{
	static const uint8_t img[] = {
		0x81, 0xff, 0x80, 0x01, 0xc0, 0xff, 0xff, 0xff,
		0x80, 0xff, 0xff, 0xff,
	};
	struct vroce_bth w = {
		.opcode = 0x81, .se = 1, .mig = 1, .pad = 3, .tver = 15,
		.pkey = 0x8001, .fecn = 1, .becn = 1, .dqpn = 0xffffff,
		.ackreq = 1, .psn = 0xffffff,
	};

	(void)state;
	CHECK_HDR(bth, struct vroce_bth, img, 12, w);
}

/* Reserved bits (resv6a, resv7) are ignored on parse, zero on pack. */
static void test_bth_reserved(void **state)
{
	static const uint8_t img[] = {
		0x11, 0x00, 0xff, 0xff, 0x3f, 0x00, 0x00, 0x01,
		0x7f, 0x00, 0x00, 0x02,
	};
	uint8_t out[12];
	struct vroce_bth h;

	(void)state;
	assert_int_equal(vroce_bth_parse(&h, img, sizeof(img)), 12);
	assert_false(h.fecn);
	assert_false(h.becn);
	assert_false(h.ackreq);
	assert_int_equal(h.dqpn, 1);
	assert_int_equal(h.psn, 2);
	assert_int_equal(vroce_bth_pack(&h, out, sizeof(out)), 12);
	assert_int_equal(out[4], 0);
	assert_int_equal(out[8], 0);
}

static void test_bth_range(void **state)
{
	struct vroce_bth ok = { .opcode = 4, .pkey = 0xffff }, h;
	uint8_t out[16];

	(void)state;
	assert_int_equal(vroce_bth_pack(&ok, out, sizeof(out)), 12);

	h = ok;
	h.pad = 4;
	assert_int_equal(vroce_bth_pack(&h, out, sizeof(out)), VROCE_EINVAL);
	h = ok;
	h.tver = 16;
	assert_int_equal(vroce_bth_pack(&h, out, sizeof(out)), VROCE_EINVAL);
	h = ok;
	h.dqpn = 0x1000000;
	assert_int_equal(vroce_bth_pack(&h, out, sizeof(out)), VROCE_EINVAL);
	h = ok;
	h.psn = 0x1000000;
	assert_int_equal(vroce_bth_pack(&h, out, sizeof(out)), VROCE_EINVAL);
}

static void test_bth_roundtrip(void **state)
{
	struct vroce_bth w, g;
	uint8_t out[12];
	int i;
	uint64_t r;

	(void)state;
	for (i = 0; i < 10000; i++) {
		r = rnd();
		w = (struct vroce_bth) {
			.opcode = (uint8_t)r, .se = r >> 8 & 1,
			.mig = r >> 9 & 1, .pad = r >> 10 & 3,
			.tver = r >> 12 & 15, .pkey = (uint16_t)(r >> 16),
			.fecn = r >> 32 & 1, .becn = r >> 33 & 1,
			.dqpn = (uint32_t)(r >> 34) & 0xffffff,
			.ackreq = r >> 58 & 1,
			.psn = (uint32_t)rnd() & 0xffffff,
		};
		assert_int_equal(vroce_bth_pack(&w, out, sizeof(out)), 12);
		memset(&g, 0, sizeof(g));
		assert_int_equal(vroce_bth_parse(&g, out, sizeof(out)), 12);
		check_bth(&g, &w);
	}
}

static void test_reth(void **state)
{
	static const uint8_t img[] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,	/* VA */
		0x09, 0x0a, 0x0b, 0x0c,				/* R_Key */
		0x0d, 0x0e, 0x0f, 0x10,				/* length */
	};
	struct vroce_reth w = {
		.va = 0x0102030405060708ull, .rkey = 0x090a0b0c,
		.dma_len = 0x0d0e0f10,
	};

	(void)state;
	CHECK_HDR(reth, struct vroce_reth, img, 16, w);
}

static void test_aeth(void **state)
{
	/* NAK, remote operational error, MSN 0xabcd */
	static const uint8_t img[] = { 0x63, 0x00, 0xab, 0xcd };
	struct vroce_aeth w = { .syndrome = 0x63, .msn = 0xabcd }, bad = w;
	uint8_t out[4];

	(void)state;
	CHECK_HDR(aeth, struct vroce_aeth, img, 4, w);
	bad.msn = 0x1000000;
	assert_int_equal(vroce_aeth_pack(&bad, out, 4), VROCE_EINVAL);
}

static void test_atmeth(void **state)
{
	static const uint8_t img[] = {
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,	/* VA */
		0x99, 0xaa, 0xbb, 0xcc,				/* R_Key */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,	/* swap/add */
		0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,	/* compare */
	};
	struct vroce_atmeth w = {
		.va = 0x1122334455667788ull, .rkey = 0x99aabbcc,
		.swap_add = 1, .compare = 0xfedcba9876543210ull,
	};

	(void)state;
	CHECK_HDR(atmeth, struct vroce_atmeth, img, 28, w);
}

static void test_atmack(void **state)
{
	static const uint8_t img[] = {
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
	};
	struct vroce_atmack w = { .orig = 0x8877665544332211ull };

	(void)state;
	CHECK_HDR(atmack, struct vroce_atmack, img, 8, w);
}

static void test_deth(void **state)
{
	/* The well-known GSI Q_Key, source QP 1. */
	static const uint8_t img[] = {
		0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	};
	static const uint8_t rsvd[] = {
		0x80, 0x01, 0x00, 0x00, 0xff, 0xab, 0xcd, 0xef,
	};
	struct vroce_deth w = { .qkey = 0x80010000, .sqpn = 1 }, h;
	uint8_t out[8];

	(void)state;
	CHECK_HDR(deth, struct vroce_deth, img, 8, w);

	/* reserved byte ignored */
	assert_int_equal(vroce_deth_parse(&h, rsvd, 8), 8);
	assert_int_equal(h.sqpn, 0xabcdef);
	h.sqpn = 0x1000000;
	assert_int_equal(vroce_deth_pack(&h, out, 8), VROCE_EINVAL);
}

static void test_immdt_ieth(void **state)
{
	static const uint8_t img[] = { 0xde, 0xad, 0xbe, 0xef };
	uint8_t out[8], *b;
	uint32_t v = 0;
	size_t l;

	(void)state;
	assert_int_equal(vroce_immdt_parse(&v, img, 4), 4);
	assert_int_equal(v, 0xdeadbeef);
	assert_int_equal(vroce_ieth_parse(&v, img, 4), 4);
	assert_int_equal(v, 0xdeadbeef);

	memset(out, GUARD, sizeof(out));
	assert_int_equal(vroce_immdt_pack(0xdeadbeef, out, 4), 4);
	assert_memory_equal(out, img, 4);
	assert_int_equal(out[4], GUARD);
	assert_int_equal(vroce_ieth_pack(0x12345678, out, 8), 4);
	assert_int_equal(out[0], 0x12);
	assert_int_equal(out[3], 0x78);
	assert_int_equal(out[4], GUARD);

	for (l = 0; l < 4; l++) {
		v = 7;
		b = tight_copy(img, l);
		assert_int_equal(vroce_immdt_parse(&v, b, l), VROCE_ESHORT);
		assert_int_equal(vroce_ieth_parse(&v, b, l), VROCE_ESHORT);
		free(b);
		assert_int_equal(v, 7);
		assert_int_equal(vroce_immdt_pack(1, out, l), VROCE_ENOSPC);
		assert_int_equal(vroce_ieth_pack(1, out, l), VROCE_ENOSPC);
	}
}

/* XRCETH: reserved byte, then the 24-bit SRQ number. */
static void test_xrceth(void **state)
{
	static const uint8_t img[] = { 0xff, 0x12, 0x34, 0x56 };
	uint8_t out[8], *b;
	uint32_t v = 0;
	size_t l;

	(void)state;
	assert_int_equal(vroce_xrceth_parse(&v, img, 4), 4);
	assert_int_equal(v, 0x123456);	/* reserved bits ignored */

	memset(out, GUARD, sizeof(out));
	assert_int_equal(vroce_xrceth_pack(0xabcdef, out, 8), 4);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 0xab);
	assert_int_equal(out[3], 0xef);
	assert_int_equal(out[4], GUARD);
	assert_int_equal(vroce_xrceth_pack(0x1000000, out, 8), VROCE_EINVAL);

	for (l = 0; l < 4; l++) {
		v = 7;
		b = tight_copy(img, l);
		assert_int_equal(vroce_xrceth_parse(&v, b, l), VROCE_ESHORT);
		free(b);
		assert_int_equal(v, 7);
		assert_int_equal(vroce_xrceth_pack(1, out, l), VROCE_ENOSPC);
	}
}

static void test_ext_roundtrip(void **state)
{
	struct vroce_reth r, r2;
	struct vroce_atmeth a, a2;
	struct vroce_deth d, d2;
	uint8_t out[32];
	int i;

	(void)state;
	for (i = 0; i < 2000; i++) {
		r = (struct vroce_reth) { rnd(), (uint32_t)rnd(),
					  (uint32_t)rnd() };
		assert_int_equal(vroce_reth_pack(&r, out, 16), 16);
		assert_int_equal(vroce_reth_parse(&r2, out, 16), 16);
		check_reth(&r2, &r);

		a = (struct vroce_atmeth) { rnd(), (uint32_t)rnd(), rnd(),
					    rnd() };
		assert_int_equal(vroce_atmeth_pack(&a, out, 28), 28);
		assert_int_equal(vroce_atmeth_parse(&a2, out, 28), 28);
		check_atmeth(&a2, &a);

		d = (struct vroce_deth) { (uint32_t)rnd(),
					  (uint32_t)rnd() & 0xffffff };
		assert_int_equal(vroce_deth_pack(&d, out, 8), 8);
		assert_int_equal(vroce_deth_parse(&d2, out, 8), 8);
		check_deth(&d2, &d);
	}
}

/* The big-endian helpers on unaligned addresses. */
static void test_be_helpers(void **state)
{
	uint8_t b[16] = { 0 };

	(void)state;
	vroce_put_be64(b + 1, 0x0102030405060708ull);
	assert_int_equal(b[1], 0x01);
	assert_int_equal(b[8], 0x08);
	assert_true(vroce_get_be64(b + 1) == 0x0102030405060708ull);
	vroce_put_be24(b + 9, 0xabcdef);
	assert_int_equal(vroce_get_be24(b + 9), 0xabcdef);
	assert_int_equal(vroce_get_be16(b + 9), 0xabcd);
	vroce_put_be32(b + 3, 0xfffefdfc);
	assert_int_equal(vroce_get_be32(b + 3), 0xfffefdfc);
	vroce_put_be16(b + 13, 0xfeed);
	assert_int_equal(b[13], 0xfe);
	assert_int_equal(b[14], 0xed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_bth_image),
		cmocka_unit_test(test_bth_all_ones),
		cmocka_unit_test(test_bth_reserved),
		cmocka_unit_test(test_bth_range),
		cmocka_unit_test(test_bth_roundtrip),
		cmocka_unit_test(test_reth),
		cmocka_unit_test(test_aeth),
		cmocka_unit_test(test_atmeth),
		cmocka_unit_test(test_atmack),
		cmocka_unit_test(test_deth),
		cmocka_unit_test(test_immdt_ieth),
		cmocka_unit_test(test_xrceth),
		cmocka_unit_test(test_ext_roundtrip),
		cmocka_unit_test(test_be_helpers),
	};

	return cmocka_run_group_tests_name("hdr", tests, NULL, NULL);
}
