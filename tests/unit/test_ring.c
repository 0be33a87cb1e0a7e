// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * Shared ring index arithmetic: powers of two, slots, fill levels across
 * the 2^32 wrap, and the checks of indices read from an untrusted peer.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "roce.h"

#define N_ELEMS(a)	(sizeof(a) / sizeof((a)[0]))

static void test_pow2(void **state)
{
	uint32_t i;

	(void)state;
	assert_false(vroce_ring_is_pow2(0));
	assert_true(vroce_ring_is_pow2(1));
	assert_true(vroce_ring_is_pow2(2));
	assert_false(vroce_ring_is_pow2(3));
	assert_false(vroce_ring_is_pow2(6));
	assert_false(vroce_ring_is_pow2(0xffffffff));
	assert_false(vroce_ring_is_pow2(0x80000001));
	for (i = 0; i < 32; i++) {
		assert_true(vroce_ring_is_pow2(1u << i));
		if (i > 1)
			assert_false(vroce_ring_is_pow2((1u << i) - 1));
		if (i > 0)
			assert_false(vroce_ring_is_pow2((1u << i) + 1));
	}
}

static void test_roundup(void **state)
{
	uint32_t n;

	(void)state;
	assert_int_equal(vroce_ring_roundup_pow2(0, 1024), 0);
	assert_int_equal(vroce_ring_roundup_pow2(1, 1024), 1);
	assert_int_equal(vroce_ring_roundup_pow2(2, 1024), 2);
	assert_int_equal(vroce_ring_roundup_pow2(3, 1024), 4);
	assert_int_equal(vroce_ring_roundup_pow2(5, 1024), 8);
	assert_int_equal(vroce_ring_roundup_pow2(513, 1024), 1024);
	assert_int_equal(vroce_ring_roundup_pow2(1024, 1024), 1024);
	assert_int_equal(vroce_ring_roundup_pow2(1025, 1024), 0);
	/* a max that is no power of two caps below it */
	assert_int_equal(vroce_ring_roundup_pow2(600, 1000), 0);
	assert_int_equal(vroce_ring_roundup_pow2(500, 1000), 512);
	/* the absolute limit */
	assert_int_equal(VROCE_RING_ENTRIES_LIMIT, 0x80000000u);
	assert_int_equal(vroce_ring_roundup_pow2(0x80000000u, 0xffffffff),
			 0x80000000u);
	assert_int_equal(vroce_ring_roundup_pow2(0x40000001u, 0xffffffff),
			 0x80000000u);
	assert_int_equal(vroce_ring_roundup_pow2(0x80000001u, 0xffffffff), 0);
	assert_int_equal(vroce_ring_roundup_pow2(0xffffffff, 0xffffffff), 0);
	assert_int_equal(vroce_ring_roundup_pow2(5, 0), 0);

	for (n = 1; n <= 70000; n++) {
		uint32_t p = vroce_ring_roundup_pow2(n, 1u << 20);

		assert_true(vroce_ring_is_pow2(p));
		assert_true(p >= n);
		assert_true(p / 2 < n);
	}
}

static void test_slot(void **state)
{
	(void)state;
	assert_int_equal(vroce_ring_slot(0, 8), 0);
	assert_int_equal(vroce_ring_slot(7, 8), 7);
	assert_int_equal(vroce_ring_slot(8, 8), 0);
	assert_int_equal(vroce_ring_slot(13, 8), 5);
	assert_int_equal(vroce_ring_slot(0xffffffff, 8), 7);
	assert_int_equal(vroce_ring_slot(0xffffffff, 1), 0);
	assert_int_equal(vroce_ring_slot(0x12345678, 0x10000), 0x5678);
	assert_int_equal(vroce_ring_slot(0xffffffff, 0x80000000u),
			 0x7fffffff);
	/* consecutive indices stay consecutive slots across 2^32 */
	assert_int_equal(vroce_ring_slot(0xffffffff + 1u, 16), 0);
}

static void test_levels(void **state)
{
	(void)state;
	/* empty */
	assert_int_equal(vroce_ring_used(5, 5), 0);
	assert_int_equal(vroce_ring_free(5, 5, 8), 8);
	assert_true(vroce_ring_empty(5, 5));
	assert_false(vroce_ring_full(5, 5, 8));
	/* partly used */
	assert_int_equal(vroce_ring_used(8, 5), 3);
	assert_int_equal(vroce_ring_free(8, 5, 8), 5);
	assert_false(vroce_ring_empty(8, 5));
	assert_false(vroce_ring_full(8, 5, 8));
	/* full */
	assert_int_equal(vroce_ring_used(13, 5), 8);
	assert_int_equal(vroce_ring_free(13, 5, 8), 0);
	assert_true(vroce_ring_full(13, 5, 8));
	/* inconsistent: more than full, or consumer ahead of producer */
	assert_int_equal(vroce_ring_free(14, 5, 8), 0);
	assert_true(vroce_ring_full(14, 5, 8));
	assert_int_equal(vroce_ring_free(4, 5, 8), 0);
	assert_true(vroce_ring_full(4, 5, 8));

	/* across the 2^32 wrap */
	assert_int_equal(vroce_ring_used(2, 0xfffffffe), 4);
	assert_int_equal(vroce_ring_free(2, 0xfffffffe, 4), 0);
	assert_true(vroce_ring_full(2, 0xfffffffe, 4));
	assert_int_equal(vroce_ring_used(0, 0xffffffff), 1);
	assert_int_equal(vroce_ring_free(0, 0xffffffff, 4), 3);
	assert_true(vroce_ring_empty(0xffffffff + 1u, 0));

	/* the largest ring */
	assert_int_equal(vroce_ring_free(0x80000000u, 0, 0x80000000u), 0);
	assert_int_equal(vroce_ring_free(0x7fffffff, 0, 0x80000000u), 1);
	assert_int_equal(vroce_ring_free(0x80000001u, 0, 0x80000000u), 0);
}

/* Walk a producer and consumer together far across 2^32. */
static void test_walk(void **state)
{
	const uint32_t entries = 16;
	uint32_t prod = 0xffffff00u, cons = 0xffffff00u;
	uint32_t n, k, seen = 0;

	(void)state;
	for (n = 0; n < 4000; n++) {
		/* produce (n % 7) entries, as far as there is room */
		for (k = 0; k < n % 7; k++) {
			if (vroce_ring_full(prod, cons, entries))
				break;
			prod++;
		}
		assert_true(vroce_ring_peer_prod_ok(cons, prod, entries));
		assert_true(vroce_ring_peer_cons_ok(prod, cons, entries));
		assert_true(vroce_ring_used(prod, cons) <= entries);
		assert_int_equal(vroce_ring_used(prod, cons) +
				 vroce_ring_free(prod, cons, entries),
				 entries);
		/* consume (n % 5) entries, in slot order */
		for (k = 0; k < n % 5 && !vroce_ring_empty(prod, cons); k++) {
			assert_int_equal(vroce_ring_slot(cons, entries),
					 seen % entries);
			cons++;
			seen++;
		}
	}
	/* the walk did cross the wrap */
	assert_true(cons < 0xffffff00u);
	assert_int_equal(seen, cons - 0xffffff00u);
}

/* The kernel consumes; the producer index comes from user memory. */
static void test_peer_prod(void **state)
{
	const uint32_t e = 64;
	static const uint32_t owns[] = {
		0, 1, 63, 64, 1000, 0x7fffffff, 0x80000000u,
		0xffffffc0u, 0xffffffc1u, 0xfffffffeu, 0xffffffffu,
	};
	unsigned int i;
	uint32_t own, d;

	(void)state;
	for (i = 0; i < N_ELEMS(owns); i++) {
		own = owns[i];
		/* 0..entries ahead is fine, across the wrap too */
		for (d = 0; d <= e; d++)
			assert_true(vroce_ring_peer_prod_ok(own, own + d, e));
		/* beyond a full ring */
		assert_false(vroce_ring_peer_prod_ok(own, own + e + 1, e));
		assert_false(vroce_ring_peer_prod_ok(own, own + 0x10000, e));
		assert_false(vroce_ring_peer_prod_ok(own, own + 0x80000000u,
						     e));
		/* behind the kernel's consumer: moved backwards */
		assert_false(vroce_ring_peer_prod_ok(own, own - 1, e));
		assert_false(vroce_ring_peer_prod_ok(own, own - e, e));
		assert_false(vroce_ring_peer_prod_ok(own, own - e - 1, e));
		/* hostile absolutes */
		assert_int_equal(vroce_ring_peer_prod_ok(own, 0xffffffffu, e),
				 (uint32_t)(0xffffffffu - own) <= e);
		assert_int_equal(vroce_ring_peer_prod_ok(own, 0, e),
				 (uint32_t)(0 - own) <= e);
	}
	/* concretely, at the wrap */
	assert_true(vroce_ring_peer_prod_ok(0xfffffff0u, 0x30, e));
	assert_false(vroce_ring_peer_prod_ok(0xfffffff0u, 0x31, e));
	assert_false(vroce_ring_peer_prod_ok(0x10, 0xfffffff0u, e));
	/* the largest ring */
	assert_true(vroce_ring_peer_prod_ok(5, 0x80000005u, 0x80000000u));
	assert_false(vroce_ring_peer_prod_ok(5, 0x80000006u, 0x80000000u));
	assert_false(vroce_ring_peer_prod_ok(5, 4, 0x80000000u));
}

/* The kernel produces; the consumer index comes from user memory. */
static void test_peer_cons(void **state)
{
	const uint32_t e = 64;
	static const uint32_t owns[] = {
		0, 1, 63, 64, 1000, 0x7fffffff, 0x80000000u,
		0xffffffc0u, 0xffffffc1u, 0xfffffffeu, 0xffffffffu,
	};
	unsigned int i;
	uint32_t own, d;

	(void)state;
	for (i = 0; i < N_ELEMS(owns); i++) {
		own = owns[i];
		/* 0..entries behind is fine, across the wrap too */
		for (d = 0; d <= e; d++) {
			assert_true(vroce_ring_peer_cons_ok(own, own - d, e));
			assert_int_equal(vroce_ring_free(own, own - d, e),
					 e - d);
		}
		/* more than a ring behind */
		assert_false(vroce_ring_peer_cons_ok(own, own - e - 1, e));
		assert_false(vroce_ring_peer_cons_ok(own, own - 0x80000000u,
						     e));
		/* ahead of what the kernel produced */
		assert_false(vroce_ring_peer_cons_ok(own, own + 1, e));
		assert_false(vroce_ring_peer_cons_ok(own, own + e, e));
		assert_false(vroce_ring_peer_cons_ok(own, own + 0x7fffffff,
						     e));
	}
	/* concretely, at the wrap */
	assert_true(vroce_ring_peer_cons_ok(0x30, 0xfffffff0u, e));
	assert_false(vroce_ring_peer_cons_ok(0x31, 0xfffffff0u, e));
	assert_false(vroce_ring_peer_cons_ok(0xfffffff0u, 0x10, e));
	assert_true(vroce_ring_peer_cons_ok(0, 0xffffffffu, 1));
	assert_false(vroce_ring_peer_cons_ok(0, 0xfffffffeu, 1));
}

/*
 * Compaction: a ring of 8 entries of 12 bytes, each a tag (its index
 * when written, at byte 0), a QP number (at byte 4) and a filler byte
 * pattern (bytes 8..11) that must move with its entry.
 */
#define C_NUM		8u
#define C_STRIDE	12u
#define C_KEY_OFF	4u

static void c_put(uint8_t *ring, uint32_t idx, uint32_t qpn)
{
	uint8_t *e = ring + (idx & (C_NUM - 1)) * C_STRIDE;

	memcpy(e, &idx, 4);
	memcpy(e + C_KEY_OFF, &qpn, 4);
	memset(e + 8, (int)(idx * 7 + 1), 4);
}

/* The entry at @idx has the tag, QP number and filler of index @tag. */
static void c_check(const uint8_t *ring, uint32_t idx, uint32_t tag,
		    uint32_t qpn)
{
	const uint8_t *e = ring + (idx & (C_NUM - 1)) * C_STRIDE;
	uint32_t v;
	int i;

	memcpy(&v, e, 4);
	assert_int_equal(v, tag);
	memcpy(&v, e + C_KEY_OFF, 4);
	assert_int_equal(v, qpn);
	for (i = 8; i < 12; i++)
		assert_int_equal(e[i], (uint8_t)(tag * 7 + 1));
}

/*
 * The ring sits between two guards of C_GUARD bytes that the compaction
 * must leave as they are.
 */
#define C_GUARD		16u
#define C_BUF		(C_GUARD + C_NUM * C_STRIDE + C_GUARD)

static uint8_t *c_ring(uint8_t *buf)
{
	memset(buf, 0xa5, C_GUARD);
	memset(buf + C_BUF - C_GUARD, 0xa5, C_GUARD);
	return buf + C_GUARD;
}

static uint32_t c_compact(uint8_t *ring, uint32_t cons, uint32_t prod,
			  uint32_t qpn)
{
	uint32_t ret, i;

	ret = vroce_ring_compact(ring, C_NUM, C_STRIDE, cons, prod,
				 C_KEY_OFF, qpn);
	for (i = 0; i < C_GUARD; i++) {
		assert_int_equal(ring[(int)i - (int)C_GUARD], 0xa5);
		assert_int_equal(ring[C_NUM * C_STRIDE + i], 0xa5);
	}
	return ret;
}

static void test_compact_none_all(void **state)
{
	uint8_t buf[C_BUF], *ring = c_ring(buf);
	uint32_t i;

	(void)state;
	memset(ring, 0, C_NUM * C_STRIDE);
	/* Empty: nothing to look at. */
	assert_int_equal(c_compact(ring, 5, 5, 0), 5);
	/* Nothing matches: cons stays, every entry where it was. */
	for (i = 3; i < 9; i++)
		c_put(ring, i, 10 + (i & 1));
	assert_int_equal(c_compact(ring, 3, 9, 12), 3);
	for (i = 3; i < 9; i++)
		c_check(ring, i, i, 10 + (i & 1));
	/* Everything matches: cons moves up to prod. */
	for (i = 3; i < 9; i++)
		c_put(ring, i, 42);
	assert_int_equal(c_compact(ring, 3, 9, 42), 9);
	/* A full ring, none kept but the last. */
	for (i = 0; i < C_NUM; i++)
		c_put(ring, 100 + i, i == C_NUM - 1 ? 1 : 2);
	assert_int_equal(c_compact(ring, 100, 100 + C_NUM, 2), 107);
	c_check(ring, 107, 107, 1);
}

/* Mixed, across the 2^32 wrap: the kept entries end next to prod. */
static void test_compact_wrap(void **state)
{
	static const uint32_t qpn[7] = { 9, 4, 9, 9, 5, 4, 9 };
	uint8_t buf[C_BUF], *ring = c_ring(buf);
	uint32_t cons = 0xfffffffdu, prod = cons + 7, i, at;

	(void)state;
	memset(ring, 0xee, C_NUM * C_STRIDE);
	for (i = 0; i < 7; i++)
		c_put(ring, cons + i, qpn[i]);
	assert_int_equal(c_compact(ring, cons, prod, 9), cons + 4);
	/* Kept, oldest first: 4 (index cons+1), 5 (cons+4), 4 (cons+5). */
	c_check(ring, cons + 4, cons + 1, 4);
	c_check(ring, cons + 5, cons + 4, 5);
	c_check(ring, cons + 6, cons + 5, 4);
	/* The slot past prod, never produced, is untouched. */
	at = prod & (C_NUM - 1);
	for (i = 0; i < C_STRIDE; i++)
		assert_int_equal(ring[at * C_STRIDE + i], 0xee);
	/* Again with what is left: drop the 4s, the 5 stays at the top. */
	assert_int_equal(c_compact(ring, cons + 4, prod, 4), cons + 6);
	c_check(ring, cons + 6, cons + 4, 5);
}

/*
 * Only the field at @key_off counts, all 32 bits of it: a tag equal to
 * the key is kept, and so are QP numbers that differ from it only in a
 * high byte.
 */
static void test_compact_key_field(void **state)
{
	uint8_t buf[C_BUF], *ring = c_ring(buf);

	(void)state;
	c_put(ring, 0, 1);		/* tag 0 */
	c_put(ring, 1, 0);		/* tag 1, QP 0 */
	c_put(ring, 2, 2);		/* tag 2 */
	assert_int_equal(c_compact(ring, 0, 3, 0), 1);
	c_check(ring, 1, 0, 1);
	c_check(ring, 2, 2, 2);

	c_put(ring, 10, 0x01000009);
	c_put(ring, 11, 9);
	c_put(ring, 12, 0x00010009);
	c_put(ring, 13, 0x00000109);
	c_put(ring, 14, 0x09000000);
	assert_int_equal(c_compact(ring, 10, 15, 9), 11);
	c_check(ring, 11, 10, 0x01000009);
	c_check(ring, 12, 12, 0x00010009);
	c_check(ring, 13, 13, 0x00000109);
	c_check(ring, 14, 14, 0x09000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pow2),
		cmocka_unit_test(test_roundup),
		cmocka_unit_test(test_slot),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_peer_prod),
		cmocka_unit_test(test_peer_cons),
		cmocka_unit_test(test_compact_none_all),
		cmocka_unit_test(test_compact_wrap),
		cmocka_unit_test(test_compact_key_field),
	};

	return cmocka_run_group_tests_name("ring", tests, NULL, NULL);
}
