// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * The opcode table, against an independent list written from IBTA vol 1
 * table 38 / 9.2-9.5, plus table-wide consistency rules.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "roce.h"

#define D	VROCE_HDR_DETH
#define R	VROCE_HDR_RETH
#define AT	VROCE_HDR_ATMETH
#define A	VROCE_HDR_AETH
#define AA	VROCE_HDR_ATMACK
#define I	VROCE_HDR_IMMDT
#define IE	VROCE_HDR_IETH
#define X	VROCE_HDR_XRCETH

#define FIRST	VROCE_POS_FIRST
#define MIDDLE	VROCE_POS_MIDDLE
#define LAST	VROCE_POS_LAST
#define ONLY	VROCE_POS_ONLY

#define SEND	VROCE_OPF_SEND
#define WRITE	VROCE_OPF_WRITE
#define READ	VROCE_OPF_READ
#define RRESP	VROCE_OPF_READ_RESP
#define ACK	VROCE_OPF_ACK
#define ATOM	VROCE_OPF_ATOMIC
#define AACK	VROCE_OPF_ATOMIC_ACK
#define AWRITE	VROCE_OPF_ATOMIC_WRITE

struct expect {
	uint8_t op;
	const char *name;
	unsigned int hdrs;
	unsigned int len;	/* total header bytes, from the spec */
	unsigned int kind;
	int pos;
	int payload;
	int solicit;
};

static const struct expect known[] = {
	{ 0x00, "RC_SEND_FIRST", 0, 12, SEND, FIRST, 1, 0 },
	{ 0x01, "RC_SEND_MIDDLE", 0, 12, SEND, MIDDLE, 1, 0 },
	{ 0x02, "RC_SEND_LAST", 0, 12, SEND, LAST, 1, 1 },
	{ 0x03, "RC_SEND_LAST_WITH_IMMEDIATE", I, 16, SEND, LAST, 1, 1 },
	{ 0x04, "RC_SEND_ONLY", 0, 12, SEND, ONLY, 1, 1 },
	{ 0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", I, 16, SEND, ONLY, 1, 1 },
	{ 0x06, "RC_RDMA_WRITE_FIRST", R, 28, WRITE, FIRST, 1, 0 },
	{ 0x07, "RC_RDMA_WRITE_MIDDLE", 0, 12, WRITE, MIDDLE, 1, 0 },
	{ 0x08, "RC_RDMA_WRITE_LAST", 0, 12, WRITE, LAST, 1, 0 },
	{ 0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", I, 16, WRITE, LAST,
	  1, 1 },
	{ 0x0a, "RC_RDMA_WRITE_ONLY", R, 28, WRITE, ONLY, 1, 0 },
	{ 0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", R | I, 32, WRITE, ONLY,
	  1, 1 },
	{ 0x0c, "RC_RDMA_READ_REQUEST", R, 28, READ, ONLY, 0, 0 },
	{ 0x0d, "RC_RDMA_READ_RESPONSE_FIRST", A, 16, RRESP, FIRST, 1, 0 },
	{ 0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", 0, 12, RRESP, MIDDLE, 1, 0 },
	{ 0x0f, "RC_RDMA_READ_RESPONSE_LAST", A, 16, RRESP, LAST, 1, 0 },
	{ 0x10, "RC_RDMA_READ_RESPONSE_ONLY", A, 16, RRESP, ONLY, 1, 0 },
	{ 0x11, "RC_ACKNOWLEDGE", A, 16, ACK, ONLY, 0, 0 },
	{ 0x12, "RC_ATOMIC_ACKNOWLEDGE", A | AA, 24, AACK, ONLY, 0, 0 },
	{ 0x13, "RC_COMPARE_SWAP", AT, 40, ATOM, ONLY, 0, 0 },
	{ 0x14, "RC_FETCH_ADD", AT, 40, ATOM, ONLY, 0, 0 },
	{ 0x16, "RC_SEND_LAST_WITH_INVALIDATE", IE, 16, SEND, LAST, 1, 1 },
	{ 0x17, "RC_SEND_ONLY_WITH_INVALIDATE", IE, 16, SEND, ONLY, 1, 1 },
	/* IBTA 1.5: RDMA Atomic Write, a RETH and 8 bytes of payload. */
	{ 0x1d, "RC_RDMA_ATOMIC_WRITE", R, 28, AWRITE, ONLY, 1, 0 },

	{ 0x20, "UC_SEND_FIRST", 0, 12, SEND, FIRST, 1, 0 },
	{ 0x21, "UC_SEND_MIDDLE", 0, 12, SEND, MIDDLE, 1, 0 },
	{ 0x22, "UC_SEND_LAST", 0, 12, SEND, LAST, 1, 1 },
	{ 0x23, "UC_SEND_LAST_WITH_IMMEDIATE", I, 16, SEND, LAST, 1, 1 },
	{ 0x24, "UC_SEND_ONLY", 0, 12, SEND, ONLY, 1, 1 },
	{ 0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", I, 16, SEND, ONLY, 1, 1 },
	{ 0x26, "UC_RDMA_WRITE_FIRST", R, 28, WRITE, FIRST, 1, 0 },
	{ 0x27, "UC_RDMA_WRITE_MIDDLE", 0, 12, WRITE, MIDDLE, 1, 0 },
	{ 0x28, "UC_RDMA_WRITE_LAST", 0, 12, WRITE, LAST, 1, 0 },
	{ 0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", I, 16, WRITE, LAST,
	  1, 1 },
	{ 0x2a, "UC_RDMA_WRITE_ONLY", R, 28, WRITE, ONLY, 1, 0 },
	{ 0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", R | I, 32, WRITE, ONLY,
	  1, 1 },

	{ 0x64, "UD_SEND_ONLY", D, 20, SEND, ONLY, 1, 1 },
	{ 0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", D | I, 24, SEND, ONLY, 1, 1 },

	{ 0x81, "CNP", VROCE_HDR_CNP_RSVD, 28, VROCE_OPF_CNP, ONLY, 0, 0 },

	/* XRC (IBTA 9.2, 14.6): requests carry an XRCETH (4 bytes). */
	{ 0xa0, "XRC_SEND_FIRST", X, 16, SEND, FIRST, 1, 0 },
	{ 0xa1, "XRC_SEND_MIDDLE", X, 16, SEND, MIDDLE, 1, 0 },
	{ 0xa2, "XRC_SEND_LAST", X, 16, SEND, LAST, 1, 1 },
	{ 0xa3, "XRC_SEND_LAST_WITH_IMMEDIATE", X | I, 20, SEND, LAST, 1, 1 },
	{ 0xa4, "XRC_SEND_ONLY", X, 16, SEND, ONLY, 1, 1 },
	{ 0xa5, "XRC_SEND_ONLY_WITH_IMMEDIATE", X | I, 20, SEND, ONLY, 1, 1 },
	{ 0xa6, "XRC_RDMA_WRITE_FIRST", X | R, 32, WRITE, FIRST, 1, 0 },
	{ 0xa7, "XRC_RDMA_WRITE_MIDDLE", X, 16, WRITE, MIDDLE, 1, 0 },
	{ 0xa8, "XRC_RDMA_WRITE_LAST", X, 16, WRITE, LAST, 1, 0 },
	{ 0xa9, "XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE", X | I, 20, WRITE, LAST,
	  1, 1 },
	{ 0xaa, "XRC_RDMA_WRITE_ONLY", X | R, 32, WRITE, ONLY, 1, 0 },
	{ 0xab, "XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", X | R | I, 36, WRITE,
	  ONLY, 1, 1 },
	{ 0xac, "XRC_RDMA_READ_REQUEST", X | R, 32, READ, ONLY, 0, 0 },
	{ 0xad, "XRC_RDMA_READ_RESPONSE_FIRST", A, 16, RRESP, FIRST, 1, 0 },
	{ 0xae, "XRC_RDMA_READ_RESPONSE_MIDDLE", 0, 12, RRESP, MIDDLE, 1, 0 },
	{ 0xaf, "XRC_RDMA_READ_RESPONSE_LAST", A, 16, RRESP, LAST, 1, 0 },
	{ 0xb0, "XRC_RDMA_READ_RESPONSE_ONLY", A, 16, RRESP, ONLY, 1, 0 },
	{ 0xb1, "XRC_ACKNOWLEDGE", A, 16, ACK, ONLY, 0, 0 },
	{ 0xb2, "XRC_ATOMIC_ACKNOWLEDGE", A | AA, 24, AACK, ONLY, 0, 0 },
	{ 0xb3, "XRC_COMPARE_SWAP", X | AT, 44, ATOM, ONLY, 0, 0 },
	{ 0xb4, "XRC_FETCH_ADD", X | AT, 44, ATOM, ONLY, 0, 0 },
	{ 0xb6, "XRC_SEND_LAST_WITH_INVALIDATE", X | IE, 20, SEND, LAST, 1, 1 },
	{ 0xb7, "XRC_SEND_ONLY_WITH_INVALIDATE", X | IE, 20, SEND, ONLY, 1, 1 },
	{ 0xbd, "XRC_RDMA_ATOMIC_WRITE", X | R, 32, AWRITE, ONLY, 1, 0 },
};

static const struct expect *find_known(unsigned int op)
{
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].op == op)
			return &known[i];
	return NULL;
}

static int popcount(unsigned int v)
{
	return __builtin_popcount(v);
}

/* Every opcode we know, and nothing else. */
static void test_defined_set(void **state)
{
	unsigned int op;
	int n = 0;

	(void)state;
	for (op = 0; op < 256; op++) {
		const struct vroce_opcode_info *info = vroce_opcode_info(op);
		const struct expect *e = find_known(op);

		if (!e) {
			if (info)
				print_error("opcode 0x%02x should be unknown\n",
					    op);
			assert_null(info);
			assert_string_equal(vroce_opcode_name(op), "UNKNOWN");
			continue;
		}
		n++;
		assert_non_null(info);
		assert_string_equal(info->name, e->name);
		assert_string_equal(vroce_opcode_name(op), e->name);
	}
	assert_int_equal(n, 24 + 12 + 2 + 1 + 24);
}

static void test_undefined_examples(void **state)
{
	static const uint8_t undef[] = {
		0x15, 0x18, 0x1f, 0x2c, 0x3f, 0x40, 0x4c, 0x60, 0x63, 0x66,
		0x80, 0x82, 0xb5, 0xb8, 0xbc, 0xbe, 0xc0, 0xff,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(undef); i++)
		assert_null(vroce_opcode_info(undef[i]));
}

/* Against the independent list: headers, length, kind, position. */
static void test_against_spec(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const struct expect *e = &known[i];
		const struct vroce_opcode_info *info =
			vroce_opcode_info(e->op);

		assert_non_null(info);
		assert_int_equal(info->hdrs, e->hdrs);
		assert_int_equal(info->hdr_len, e->len);
		assert_int_equal(info->flags & VROCE_OPF_KINDS, e->kind);
		assert_int_equal(info->pos, e->pos);
		assert_int_equal(!!(info->flags & VROCE_OPF_PAYLOAD),
				 e->payload);
		assert_int_equal(!!(info->flags & VROCE_OPF_SOLICIT),
				 e->solicit);
		assert_int_equal(info->transport, e->op & 0xe0);
	}
}

/* Rules that tie the fields of every entry together. */
static void test_consistency(void **state)
{
	unsigned int op;

	(void)state;
	for (op = 0; op < 256; op++) {
		const struct vroce_opcode_info *info = vroce_opcode_info(op);
		unsigned int f;

		if (!info)
			continue;
		f = info->flags;

		/* header length = BTH + its extension headers */
		assert_int_equal(info->hdr_len,
				 12 + vroce_hdrs_size(info->hdrs));
		assert_int_equal(info->hdr_len % 4, 0);
		assert_int_equal(info->transport, op & VROCE_TRANSPORT_MASK);
		assert_int_equal(popcount(f & VROCE_OPF_KINDS), 1);
		assert_true(info->pos >= VROCE_POS_FIRST &&
			    info->pos <= VROCE_POS_ONLY);

		/* requester xor responder, except the CNP (neither) */
		if (f & VROCE_OPF_CNP)
			assert_int_equal(f & (VROCE_OPF_REQ | VROCE_OPF_RESP),
					 0);
		else
			assert_int_equal(popcount(f & (VROCE_OPF_REQ |
						       VROCE_OPF_RESP)), 1);
		if (f & (VROCE_OPF_READ_RESP | VROCE_OPF_ACK |
			 VROCE_OPF_ATOMIC_ACK))
			assert_true(f & VROCE_OPF_RESP);

		/* header flags match the header mask */
		assert_int_equal(!!(f & VROCE_OPF_IMM),
				 !!(info->hdrs & VROCE_HDR_IMMDT));
		assert_int_equal(!!(f & VROCE_OPF_INV),
				 !!(info->hdrs & VROCE_HDR_IETH));
		assert_int_equal(!!(f & VROCE_OPF_ATOMIC),
				 !!(info->hdrs & VROCE_HDR_ATMETH));
		assert_int_equal(!!(f & VROCE_OPF_ATOMIC_ACK),
				 !!(info->hdrs & VROCE_HDR_ATMACK));
		assert_int_equal(!!(info->transport == VROCE_TRANSPORT_UD),
				 !!(info->hdrs & VROCE_HDR_DETH));

		/* RETH starts a write, and is the read request's */
		if (info->hdrs & VROCE_HDR_RETH)
			assert_true(f & (VROCE_OPF_WRITE | VROCE_OPF_READ |
					 VROCE_OPF_ATOMIC_WRITE));
		/* an atomic write is one packet: RETH and 8 bytes */
		if (f & VROCE_OPF_ATOMIC_WRITE)
			assert_true(info->pos == VROCE_POS_ONLY &&
				    (info->hdrs & ~VROCE_HDR_XRCETH) ==
				    VROCE_HDR_RETH &&
				    (f & VROCE_OPF_PAYLOAD));
		if (f & VROCE_OPF_WRITE)
			assert_int_equal(!!(info->hdrs & VROCE_HDR_RETH),
					 info->pos == VROCE_POS_FIRST ||
					 info->pos == VROCE_POS_ONLY);
		/* read responses: AETH on first, last and only */
		if (f & VROCE_OPF_READ_RESP)
			assert_int_equal(!!(info->hdrs & VROCE_HDR_AETH),
					 info->pos != VROCE_POS_MIDDLE);

		/* only RC and XRC requests are acknowledged */
		assert_int_equal(!!(f & VROCE_OPF_NEEDS_ACK),
				 (info->transport == VROCE_TRANSPORT_RC ||
				  info->transport == VROCE_TRANSPORT_XRC) &&
				 !!(f & VROCE_OPF_REQ));
		/* XRCETH: on XRC requests, and only there */
		assert_int_equal(!!(info->hdrs & VROCE_HDR_XRCETH),
				 info->transport == VROCE_TRANSPORT_XRC &&
				 !!(f & VROCE_OPF_REQ));

		/* immediate and solicited events come at a message's end */
		if (f & (VROCE_OPF_IMM | VROCE_OPF_SOLICIT | VROCE_OPF_INV))
			assert_true(info->pos == VROCE_POS_LAST ||
				    info->pos == VROCE_POS_ONLY);
		if (f & VROCE_OPF_IMM)
			assert_true(f & VROCE_OPF_SOLICIT);
		if (f & VROCE_OPF_SEND)
			assert_int_equal(!!(f & VROCE_OPF_SOLICIT),
					 info->pos == VROCE_POS_LAST ||
					 info->pos == VROCE_POS_ONLY);
		if (f & VROCE_OPF_WRITE)
			assert_int_equal(!!(f & VROCE_OPF_SOLICIT),
					 !!(f & VROCE_OPF_IMM));

		/* payload: sends, writes and read responses only */
		assert_int_equal(!!(f & VROCE_OPF_PAYLOAD),
				 !!(f & (VROCE_OPF_SEND | VROCE_OPF_WRITE |
					 VROCE_OPF_READ_RESP |
					 VROCE_OPF_ATOMIC_WRITE)));

		/* UD carries single-packet messages only */
		if (info->transport == VROCE_TRANSPORT_UD)
			assert_int_equal(info->pos, VROCE_POS_ONLY);
	}
}

static void test_names_unique(void **state)
{
	unsigned int a, b;

	(void)state;
	for (a = 0; a < 256; a++) {
		if (!vroce_opcode_info(a))
			continue;
		for (b = a + 1; b < 256; b++)
			if (vroce_opcode_info(b))
				assert_string_not_equal(vroce_opcode_name(a),
							vroce_opcode_name(b));
	}
}

/* UC is the RC send/write subset, entry for entry. */
static void test_uc_mirrors_rc(void **state)
{
	unsigned int op;

	(void)state;
	for (op = 0; op <= 0x0b; op++) {
		const struct vroce_opcode_info *rc = vroce_opcode_info(op);
		const struct vroce_opcode_info *uc =
			vroce_opcode_info(0x20 | op);

		assert_non_null(uc);
		assert_int_equal(uc->hdrs, rc->hdrs);
		assert_int_equal(uc->hdr_len, rc->hdr_len);
		assert_int_equal(uc->pos, rc->pos);
		assert_int_equal(uc->flags,
				 rc->flags & ~VROCE_OPF_NEEDS_ACK);
		assert_string_equal(uc->name + 2, rc->name + 2);
	}
	for (op = 0x0c; op < 0x20; op++)
		assert_null(vroce_opcode_info(0x20 | op));
}

/*
 * XRC is RC, entry for entry, with an XRCETH in front of the other
 * extension headers of each request.
 */
static void test_xrc_mirrors_rc(void **state)
{
	unsigned int op;

	(void)state;
	for (op = 0; op < 0x20; op++) {
		const struct vroce_opcode_info *rc = vroce_opcode_info(op);
		const struct vroce_opcode_info *x =
			vroce_opcode_info(0xa0 | op);
		unsigned int xeth;

		if (!rc) {
			assert_null(x);
			continue;
		}
		assert_non_null(x);
		xeth = rc->flags & VROCE_OPF_REQ ? VROCE_HDR_XRCETH : 0;
		assert_int_equal(x->hdrs, rc->hdrs | xeth);
		assert_int_equal(x->hdr_len, rc->hdr_len + (xeth ? 4 : 0));
		assert_int_equal(x->pos, rc->pos);
		assert_int_equal(x->flags, rc->flags);
		assert_string_equal(x->name + 3, rc->name + 2);
		if (xeth)
			assert_int_equal(vroce_hdr_offset(x, VROCE_HDR_XRCETH),
					 12);
	}
}

static void test_hdr_sizes(void **state)
{
	(void)state;
	assert_int_equal(vroce_hdr_size(VROCE_HDR_DETH), 8);
	assert_int_equal(vroce_hdr_size(VROCE_HDR_XRCETH), 4);
	assert_int_equal(vroce_hdr_size(VROCE_HDR_RETH), 16);
	assert_int_equal(vroce_hdr_size(VROCE_HDR_ATMETH), 28);
	assert_int_equal(vroce_hdr_size(VROCE_HDR_AETH), 4);
	assert_int_equal(vroce_hdr_size(VROCE_HDR_ATMACK), 8);
	assert_int_equal(vroce_hdr_size(VROCE_HDR_IMMDT), 4);
	assert_int_equal(vroce_hdr_size(VROCE_HDR_IETH), 4);
	assert_int_equal(vroce_hdr_size(VROCE_HDR_CNP_RSVD), 16);
	assert_int_equal(vroce_hdr_size(0), 0);
	assert_int_equal(vroce_hdr_size(VROCE_HDR_RETH | VROCE_HDR_AETH), 0);
	assert_int_equal(vroce_hdrs_size(VROCE_HDR_RETH | VROCE_HDR_IMMDT),
			 20);
	assert_int_equal(vroce_hdrs_size(0), 0);
}

/* Extension header offsets follow the IBTA wire order. */
static void test_hdr_offsets(void **state)
{
	const struct vroce_opcode_info *i;

	(void)state;
	i = vroce_opcode_info(VROCE_OP_RC_RDMA_WRITE_ONLY_IMM);
	assert_int_equal(vroce_hdr_offset(i, VROCE_HDR_RETH), 12);
	assert_int_equal(vroce_hdr_offset(i, VROCE_HDR_IMMDT), 28);
	assert_int_equal(vroce_hdr_offset(i, VROCE_HDR_AETH), 0);

	i = vroce_opcode_info(VROCE_OP_RC_ATOMIC_ACK);
	assert_int_equal(vroce_hdr_offset(i, VROCE_HDR_AETH), 12);
	assert_int_equal(vroce_hdr_offset(i, VROCE_HDR_ATMACK), 16);

	i = vroce_opcode_info(VROCE_OP_UD_SEND_ONLY_IMM);
	assert_int_equal(vroce_hdr_offset(i, VROCE_HDR_DETH), 12);
	assert_int_equal(vroce_hdr_offset(i, VROCE_HDR_IMMDT), 20);

	i = vroce_opcode_info(VROCE_OP_RC_SEND_ONLY_INV);
	assert_int_equal(vroce_hdr_offset(i, VROCE_HDR_IETH), 12);

	i = vroce_opcode_info(VROCE_OP_RC_FETCH_ADD);
	assert_int_equal(vroce_hdr_offset(i, VROCE_HDR_ATMETH), 12);
	assert_int_equal(vroce_hdr_offset(i, VROCE_HDR_RETH), 0);

	i = vroce_opcode_info(VROCE_OP_RC_SEND_MIDDLE);
	assert_int_equal(vroce_hdr_offset(i, VROCE_HDR_RETH), 0);
}

/* Every present header ends within hdr_len; the last one ends at it. */
static void test_hdr_offsets_tile(void **state)
{
	unsigned int op, bit, end;

	(void)state;
	for (op = 0; op < 256; op++) {
		const struct vroce_opcode_info *info = vroce_opcode_info(op);

		if (!info)
			continue;
		end = 12;
		for (bit = 1; bit <= VROCE_HDR_ALL; bit <<= 1) {
			if (!(info->hdrs & bit))
				continue;
			assert_int_equal(vroce_hdr_offset(info, bit), end);
			end += vroce_hdr_size(bit);
		}
		assert_int_equal(end, info->hdr_len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defined_set),
		cmocka_unit_test(test_undefined_examples),
		cmocka_unit_test(test_against_spec),
		cmocka_unit_test(test_consistency),
		cmocka_unit_test(test_names_unique),
		cmocka_unit_test(test_uc_mirrors_rc),
		cmocka_unit_test(test_xrc_mirrors_rc),
		cmocka_unit_test(test_hdr_sizes),
		cmocka_unit_test(test_hdr_offsets),
		cmocka_unit_test(test_hdr_offsets_tile),
	};

	return cmocka_run_group_tests_name("opcode", tests, NULL, NULL);
}
