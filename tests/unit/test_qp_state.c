// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * The QP state machine: every (type, current state, next state) against
 * an expectation written here, independently, from the IBTA Modify QP
 * tables (vol 1, 10.3.1 and 11.2.5), with the numeric values of the
 * kernel's enum ib_qp_state, ib_qp_type and ib_qp_attr_mask.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "roce.h"

#define N_ELEMS(a)	(sizeof(a) / sizeof((a)[0]))

/* enum ib_qp_attr_mask, spelled out again. */
#define STATE			(1u << 0)
#define CUR_STATE		(1u << 1)
#define EN_SQD_ASYNC_NOTIFY	(1u << 2)
#define ACCESS_FLAGS		(1u << 3)
#define PKEY_INDEX		(1u << 4)
#define PORT			(1u << 5)
#define QKEY			(1u << 6)
#define AV			(1u << 7)
#define PATH_MTU		(1u << 8)
#define TIMEOUT			(1u << 9)
#define RETRY_CNT		(1u << 10)
#define RNR_RETRY		(1u << 11)
#define RQ_PSN			(1u << 12)
#define MAX_QP_RD_ATOMIC	(1u << 13)
#define ALT_PATH		(1u << 14)
#define MIN_RNR_TIMER		(1u << 15)
#define SQ_PSN			(1u << 16)
#define MAX_DEST_RD_ATOMIC	(1u << 17)
#define PATH_MIG_STATE		(1u << 18)
#define CAP			(1u << 19)
#define DEST_QPN		(1u << 20)
#define RATE_LIMIT		(1u << 25)

/* enum ib_qp_state and enum ib_qp_type. */
enum { RESET, INIT, RTR, RTS, SQD, SQE, ERR, NSTATES };
enum { RC = 2, UC = 3, UD = 4 };

static const int types[] = { RC, UC, UD };

struct legal {
	int type, cur, next;
	uint32_t req, opt;
};

/*
 * Every legal transition but the blanket ones (any -> RESET, any but
 * RESET -> ERR; see expect()), one line per type.
 */
static const struct legal table[] = {
	/* RESET -> INIT */
	{ RC, RESET, INIT, PKEY_INDEX | PORT | ACCESS_FLAGS, 0 },
	{ UC, RESET, INIT, PKEY_INDEX | PORT | ACCESS_FLAGS, 0 },
	{ UD, RESET, INIT, PKEY_INDEX | PORT | QKEY, 0 },

	/* INIT -> INIT */
	{ RC, INIT, INIT, 0, PKEY_INDEX | PORT | ACCESS_FLAGS },
	{ UC, INIT, INIT, 0, PKEY_INDEX | PORT | ACCESS_FLAGS },
	{ UD, INIT, INIT, 0, PKEY_INDEX | PORT | QKEY },

	/* INIT -> RTR */
	{ RC, INIT, RTR,
	  AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC |
	  MIN_RNR_TIMER,
	  ALT_PATH | ACCESS_FLAGS | PKEY_INDEX },
	{ UC, INIT, RTR,
	  AV | PATH_MTU | DEST_QPN | RQ_PSN,
	  ALT_PATH | ACCESS_FLAGS | PKEY_INDEX },
	{ UD, INIT, RTR, 0, PKEY_INDEX | QKEY },

	/* RTR -> RTS */
	{ RC, RTR, RTS,
	  SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC,
	  CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER |
	  PATH_MIG_STATE },
	{ UC, RTR, RTS, SQ_PSN,
	  CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE },
	{ UD, RTR, RTS, SQ_PSN, CUR_STATE | QKEY },

	/* RTS -> RTS */
	{ RC, RTS, RTS, 0,
	  CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE |
	  MIN_RNR_TIMER },
	{ UC, RTS, RTS, 0,
	  CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE },
	{ UD, RTS, RTS, 0, CUR_STATE | QKEY },

	/* RTS -> SQD */
	{ RC, RTS, SQD, 0, EN_SQD_ASYNC_NOTIFY },
	{ UC, RTS, SQD, 0, EN_SQD_ASYNC_NOTIFY },
	{ UD, RTS, SQD, 0, EN_SQD_ASYNC_NOTIFY },

	/* SQD -> RTS */
	{ RC, SQD, RTS, 0,
	  CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER |
	  PATH_MIG_STATE },
	{ UC, SQD, RTS, 0,
	  CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE },
	{ UD, SQD, RTS, 0, CUR_STATE | QKEY },

	/* SQD -> SQD */
	{ RC, SQD, SQD, 0,
	  PORT | AV | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC |
	  MAX_DEST_RD_ATOMIC | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX |
	  MIN_RNR_TIMER | PATH_MIG_STATE },
	{ UC, SQD, SQD, 0,
	  AV | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | PATH_MIG_STATE },
	{ UD, SQD, SQD, 0, PKEY_INDEX | QKEY },

	/* SQE -> RTS: UC and UD only; an RC QP never enters SQE. */
	{ UC, SQE, RTS, 0, CUR_STATE | ACCESS_FLAGS },
	{ UD, SQE, RTS, 0, CUR_STATE | QKEY },
};

/* Is (type, cur, next) legal? If so, its required and optional masks. */
static int expect(int type, int cur, int next, uint32_t *req, uint32_t *opt)
{
	size_t i;

	*req = 0;
	*opt = 0;
	if (next == RESET)
		return 1;
	if (next == ERR)
		return cur != RESET;
	for (i = 0; i < N_ELEMS(table); i++) {
		if (table[i].type == type && table[i].cur == cur &&
		    table[i].next == next) {
			*req = table[i].req;
			*opt = table[i].opt;
			return 1;
		}
	}
	return 0;
}

static int check(int type, int cur, int next, uint32_t mask)
{
	return vroce_qp_modify_check((enum vroce_qp_type)type,
				     (enum vroce_qp_state)cur,
				     (enum vroce_qp_state)next, mask);
}

static void test_values(void **state)
{
	(void)state;
	assert_int_equal(VROCE_QPS_RESET, 0);
	assert_int_equal(VROCE_QPS_INIT, 1);
	assert_int_equal(VROCE_QPS_RTR, 2);
	assert_int_equal(VROCE_QPS_RTS, 3);
	assert_int_equal(VROCE_QPS_SQD, 4);
	assert_int_equal(VROCE_QPS_SQE, 5);
	assert_int_equal(VROCE_QPS_ERR, 6);
	assert_int_equal(VROCE_QPS_COUNT, 7);
	assert_int_equal(VROCE_QPT_RC, 2);
	assert_int_equal(VROCE_QPT_UC, 3);
	assert_int_equal(VROCE_QPT_UD, 4);

	assert_int_equal(VROCE_QP_ATTR_STATE, STATE);
	assert_int_equal(VROCE_QP_ATTR_CUR_STATE, CUR_STATE);
	assert_int_equal(VROCE_QP_ATTR_EN_SQD_ASYNC_NOTIFY,
			 EN_SQD_ASYNC_NOTIFY);
	assert_int_equal(VROCE_QP_ATTR_ACCESS_FLAGS, ACCESS_FLAGS);
	assert_int_equal(VROCE_QP_ATTR_PKEY_INDEX, PKEY_INDEX);
	assert_int_equal(VROCE_QP_ATTR_PORT, PORT);
	assert_int_equal(VROCE_QP_ATTR_QKEY, QKEY);
	assert_int_equal(VROCE_QP_ATTR_AV, AV);
	assert_int_equal(VROCE_QP_ATTR_PATH_MTU, PATH_MTU);
	assert_int_equal(VROCE_QP_ATTR_TIMEOUT, TIMEOUT);
	assert_int_equal(VROCE_QP_ATTR_RETRY_CNT, RETRY_CNT);
	assert_int_equal(VROCE_QP_ATTR_RNR_RETRY, RNR_RETRY);
	assert_int_equal(VROCE_QP_ATTR_RQ_PSN, RQ_PSN);
	assert_int_equal(VROCE_QP_ATTR_MAX_QP_RD_ATOMIC, MAX_QP_RD_ATOMIC);
	assert_int_equal(VROCE_QP_ATTR_ALT_PATH, ALT_PATH);
	assert_int_equal(VROCE_QP_ATTR_MIN_RNR_TIMER, MIN_RNR_TIMER);
	assert_int_equal(VROCE_QP_ATTR_SQ_PSN, SQ_PSN);
	assert_int_equal(VROCE_QP_ATTR_MAX_DEST_RD_ATOMIC, MAX_DEST_RD_ATOMIC);
	assert_int_equal(VROCE_QP_ATTR_PATH_MIG_STATE, PATH_MIG_STATE);
	assert_int_equal(VROCE_QP_ATTR_CAP, CAP);
	assert_int_equal(VROCE_QP_ATTR_DEST_QPN, DEST_QPN);
	assert_int_equal(VROCE_QP_ATTR_ALL, 0x1fffff);
}

/* One legal transition, every way of getting its mask right or wrong. */
static void check_legal(int type, int cur, int next, uint32_t req,
			uint32_t opt)
{
	uint32_t r, o, bit;
	int i;

	assert_int_equal(vroce_qp_modify_masks((enum vroce_qp_type)type,
					       (enum vroce_qp_state)cur,
					       (enum vroce_qp_state)next,
					       &r, &o), 0);
	assert_int_equal(r, req);
	assert_int_equal(o, opt);

	assert_int_equal(check(type, cur, next, STATE | req), 0);
	assert_int_equal(check(type, cur, next, STATE | req | opt), 0);

	for (i = 0; i < 32; i++) {
		bit = 1u << i;
		if (bit == STATE)
			continue;
		if (req & bit) {
			/* Any required attribute missing. */
			assert_int_equal(check(type, cur, next,
					       STATE | (req & ~bit)),
					 VROCE_EINVAL);
			assert_int_equal(check(type, cur, next,
					       STATE | ((req | opt) & ~bit)),
					 VROCE_EINVAL);
		} else if (opt & bit) {
			/* Each optional attribute on its own. */
			assert_int_equal(check(type, cur, next,
					       STATE | req | bit), 0);
			assert_int_equal(check(type, cur, next,
					       STATE | req | (opt & ~bit)),
					 0);
		} else {
			/* Any attribute neither required nor optional. */
			assert_int_equal(check(type, cur, next,
					       STATE | req | bit),
					 VROCE_EINVAL);
			assert_int_equal(check(type, cur, next,
					       STATE | req | opt | bit),
					 VROCE_EINVAL);
		}
	}

	if (cur == next) {
		/* The same modify without the STATE bit: no state change. */
		assert_int_equal(check(type, cur, next, req), 0);
		assert_int_equal(check(type, cur, next, req | opt), 0);
		assert_int_equal(vroce_qp_attrs_modifiable(
					 (enum vroce_qp_type)type,
					 (enum vroce_qp_state)cur), opt);
	} else {
		/* A state change must name the new state. */
		assert_int_equal(check(type, cur, next, req), VROCE_EINVAL);
		assert_int_equal(check(type, cur, next, req | opt),
				 VROCE_EINVAL);
	}
}

static void check_illegal(int type, int cur, int next)
{
	uint32_t r = 1, o = 1;

	assert_int_equal(vroce_qp_modify_masks((enum vroce_qp_type)type,
					       (enum vroce_qp_state)cur,
					       (enum vroce_qp_state)next,
					       &r, &o), VROCE_EINVAL);
	assert_int_equal(r, 0);
	assert_int_equal(o, 0);
	assert_int_equal(check(type, cur, next, 0), VROCE_EINVAL);
	assert_int_equal(check(type, cur, next, STATE), VROCE_EINVAL);
	assert_int_equal(check(type, cur, next, 0x1fffff), VROCE_EINVAL);
	assert_int_equal(check(type, cur, next, 0xffffffff), VROCE_EINVAL);
	if (cur == next)
		assert_int_equal(vroce_qp_attrs_modifiable(
					 (enum vroce_qp_type)type,
					 (enum vroce_qp_state)cur), 0);
}

/* All 7 x 7 transitions of each of the 3 types. */
static void test_all_transitions(void **state)
{
	unsigned int t, nlegal = 0;
	int cur, next;
	uint32_t req, opt;

	(void)state;
	for (t = 0; t < N_ELEMS(types); t++) {
		for (cur = 0; cur < NSTATES; cur++) {
			for (next = 0; next < NSTATES; next++) {
				if (expect(types[t], cur, next, &req, &opt)) {
					check_legal(types[t], cur, next,
						    req, opt);
					nlegal++;
				} else {
					check_illegal(types[t], cur, next);
				}
			}
		}
	}
	/* 7 to RESET + 6 to ERR + 8 others each; SQE -> RTS for UC, UD. */
	assert_int_equal(nlegal, 3 * (7 + 6 + 8) + 2);
}

/* The masks real applications (the rdma-core examples) use. */
static void test_usual_masks(void **state)
{
	(void)state;
	/* ibv_rc_pingpong */
	assert_int_equal(check(RC, RESET, INIT, STATE | PKEY_INDEX | PORT |
			       ACCESS_FLAGS), 0);
	assert_int_equal(check(RC, INIT, RTR, STATE | AV | PATH_MTU |
			       DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC |
			       MIN_RNR_TIMER), 0);
	assert_int_equal(check(RC, RTR, RTS, STATE | TIMEOUT | RETRY_CNT |
			       RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC), 0);
	/* ibv_uc_pingpong */
	assert_int_equal(check(UC, RESET, INIT, STATE | PKEY_INDEX | PORT |
			       ACCESS_FLAGS), 0);
	assert_int_equal(check(UC, INIT, RTR, STATE | AV | PATH_MTU |
			       DEST_QPN | RQ_PSN), 0);
	assert_int_equal(check(UC, RTR, RTS, STATE | SQ_PSN), 0);
	/* ibv_ud_pingpong */
	assert_int_equal(check(UD, RESET, INIT, STATE | PKEY_INDEX | PORT |
			       QKEY), 0);
	assert_int_equal(check(UD, INIT, RTR, STATE), 0);
	assert_int_equal(check(UD, RTR, RTS, STATE | SQ_PSN), 0);

	/* UD has no remote access flags, a connected QP no Q_Key. */
	assert_int_equal(check(UD, RESET, INIT, STATE | PKEY_INDEX | PORT |
			       QKEY | ACCESS_FLAGS), VROCE_EINVAL);
	assert_int_equal(check(RC, RESET, INIT, STATE | PKEY_INDEX | PORT |
			       ACCESS_FLAGS | QKEY), VROCE_EINVAL);
	/* UC has no RDMA read/atomic resources. */
	assert_int_equal(check(UC, INIT, RTR, STATE | AV | PATH_MTU |
			       DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC),
			 VROCE_EINVAL);

	/* Error and reset from anywhere but RESET -> ERR. */
	assert_int_equal(check(RC, RTS, ERR, STATE), 0);
	assert_int_equal(check(RC, ERR, ERR, STATE), 0);
	assert_int_equal(check(RC, ERR, RESET, STATE), 0);
	assert_int_equal(check(UD, RESET, RESET, STATE), 0);
	assert_int_equal(check(UD, RESET, ERR, STATE), VROCE_EINVAL);
	assert_int_equal(check(RC, RTS, ERR, STATE | CUR_STATE),
			 VROCE_EINVAL);

	/* No shortcuts, no way back but through RESET. */
	assert_int_equal(check(RC, RESET, RTR, STATE | AV | PATH_MTU |
			       DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC |
			       MIN_RNR_TIMER), VROCE_EINVAL);
	assert_int_equal(check(RC, ERR, RTS, STATE), VROCE_EINVAL);
	assert_int_equal(check(RC, RTS, RTR, STATE), VROCE_EINVAL);
	assert_int_equal(check(RC, SQE, RTS, STATE), VROCE_EINVAL);
	assert_int_equal(check(UC, SQE, RTS, STATE), 0);

	/* Never: resizing, rate limits, reserved bits. */
	assert_int_equal(check(RC, RTS, RTS, CAP), VROCE_EINVAL);
	assert_int_equal(check(RC, RTS, RTS, RATE_LIMIT), VROCE_EINVAL);
	assert_int_equal(check(RC, RTS, RTS, 1u << 21), VROCE_EINVAL);
	assert_int_equal(check(RC, RTS, RTS, 1u << 31), VROCE_EINVAL);
}

/* Modify QP without a state change, as the module calls it. */
static void test_modifiable(void **state)
{
	(void)state;
	assert_int_equal(vroce_qp_attrs_modifiable(VROCE_QPT_RC,
						   VROCE_QPS_RTS),
			 ACCESS_FLAGS | MIN_RNR_TIMER | ALT_PATH |
			 PATH_MIG_STATE | CUR_STATE);
	assert_int_equal(vroce_qp_attrs_modifiable(VROCE_QPT_UD,
						   VROCE_QPS_RTS),
			 QKEY | CUR_STATE);
	assert_int_equal(vroce_qp_attrs_modifiable(VROCE_QPT_UC,
						   VROCE_QPS_INIT),
			 PKEY_INDEX | PORT | ACCESS_FLAGS);
	assert_int_equal(vroce_qp_attrs_modifiable(VROCE_QPT_RC,
						   VROCE_QPS_RTR), 0);
	assert_int_equal(vroce_qp_attrs_modifiable(VROCE_QPT_RC,
						   VROCE_QPS_RESET), 0);
	assert_int_equal(vroce_qp_attrs_modifiable(VROCE_QPT_UD,
						   VROCE_QPS_ERR), 0);

	assert_int_equal(check(RC, RTS, RTS, MIN_RNR_TIMER), 0);
	assert_int_equal(check(RC, RTS, RTS, 0), 0);
	assert_int_equal(check(RC, RTS, RTS, SQ_PSN), VROCE_EINVAL);
	assert_int_equal(check(UC, RTS, RTS, MIN_RNR_TIMER), VROCE_EINVAL);
	/* No modify at all in RTR or SQE, not even an empty one. */
	assert_int_equal(check(RC, RTR, RTR, 0), VROCE_EINVAL);
	assert_int_equal(check(UD, SQE, SQE, 0), VROCE_EINVAL);
	/* In RESET and ERR: nothing but the (empty) no-op. */
	assert_int_equal(check(RC, RESET, RESET, 0), 0);
	assert_int_equal(check(RC, RESET, RESET, PORT), VROCE_EINVAL);
	assert_int_equal(check(UD, ERR, ERR, 0), 0);
	assert_int_equal(check(UD, ERR, ERR, QKEY), VROCE_EINVAL);
}

/*
 * XRC initiators and targets move as RC QPs do, except into RTR and RTS
 * (ib_core's qp_state_table): an initiator is not asked for responder
 * attributes, a target not for requester ones.
 */
static void test_xrc(void **state)
{
	enum { XI = 9, XT = 10 };
	const uint32_t init = STATE | PKEY_INDEX | PORT | ACCESS_FLAGS;
	const uint32_t rtr = STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN;
	const uint32_t rts_rc = STATE | SQ_PSN | TIMEOUT | RETRY_CNT |
				RNR_RETRY | MAX_QP_RD_ATOMIC;
	const uint32_t resp = MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;

	(void)state;
	assert_int_equal(check(XI, RESET, INIT, init), 0);
	assert_int_equal(check(XT, RESET, INIT, init), 0);
	assert_int_equal(check(XI, INIT, RTR, rtr), 0);
	assert_int_equal(check(XI, INIT, RTR, rtr | resp), VROCE_EINVAL);
	assert_int_equal(check(XT, INIT, RTR, rtr), VROCE_EINVAL);
	assert_int_equal(check(XT, INIT, RTR, rtr | resp), 0);
	assert_int_equal(check(XI, RTR, RTS, rts_rc), 0);
	assert_int_equal(check(XI, RTR, RTS, rts_rc | MIN_RNR_TIMER),
			 VROCE_EINVAL);
	assert_int_equal(check(XT, RTR, RTS, STATE | SQ_PSN | TIMEOUT), 0);
	assert_int_equal(check(XT, RTR, RTS, rts_rc), VROCE_EINVAL);
	assert_int_equal(check(XI, RTS, ERR, STATE), 0);
	assert_int_equal(check(XT, RTR, RESET, STATE), 0);
	assert_int_equal(check(XT, RESET, RTR, rtr | resp), VROCE_EINVAL);
}

static void test_bad_args(void **state)
{
	static const int bad_types[] = { 0, 1, 5, 6, 7, 8, 11, 255, -1 };
	uint32_t r, o;
	unsigned int i;
	int s;

	(void)state;
	for (i = 0; i < N_ELEMS(bad_types); i++) {
		for (s = 0; s < NSTATES; s++) {
			assert_int_equal(check(bad_types[i], s, RESET, STATE),
					 VROCE_EINVAL);
			assert_int_equal(check(bad_types[i], s, ERR, STATE),
					 VROCE_EINVAL);
			assert_int_equal(check(bad_types[i], s, s, 0),
					 VROCE_EINVAL);
		}
		assert_int_equal(check(bad_types[i], RESET, INIT,
				       STATE | PKEY_INDEX | PORT | QKEY),
				 VROCE_EINVAL);
		assert_int_equal(vroce_qp_attrs_modifiable(
					 (enum vroce_qp_type)bad_types[i],
					 VROCE_QPS_RTS), 0);
	}
	for (s = NSTATES; s < 300; s++) {
		assert_int_equal(check(RC, s, RESET, STATE), VROCE_EINVAL);
		assert_int_equal(check(RC, s, ERR, STATE), VROCE_EINVAL);
		assert_int_equal(check(RC, RTS, s, STATE), VROCE_EINVAL);
		assert_int_equal(check(UD, s, s, 0), VROCE_EINVAL);
	}
	assert_int_equal(check(RC, -1, RESET, STATE), VROCE_EINVAL);
	assert_int_equal(check(RC, RTS, -1, STATE), VROCE_EINVAL);
	assert_int_equal(vroce_qp_modify_masks(VROCE_QPT_RC,
					       (enum vroce_qp_state)7,
					       VROCE_QPS_RESET, &r, &o),
			 VROCE_EINVAL);
}

static void test_names(void **state)
{
	static const char * const names[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};
	int s;

	(void)state;
	for (s = 0; s < NSTATES; s++)
		assert_string_equal(vroce_qp_state_name((enum vroce_qp_state)s),
				    names[s]);
	assert_string_equal(vroce_qp_state_name((enum vroce_qp_state)7), "?");
	assert_string_equal(vroce_qp_state_name((enum vroce_qp_state)-1),
			    "?");
	assert_string_equal(vroce_qp_state_name((enum vroce_qp_state)1000),
			    "?");
}

/* Which states take posted work requests, and which flush them. */
static void test_post(void **state)
{
	static const struct {
		int recv, send, flush_recv, flush_send;
	} want[NSTATES] = {
		[RESET]	= { 0, 0, 0, 0 },
		[INIT]	= { 1, 0, 0, 0 },
		[RTR]	= { 1, 0, 0, 0 },
		[RTS]	= { 1, 1, 0, 0 },
		[SQD]	= { 1, 1, 0, 0 },
		[SQE]	= { 1, 1, 0, 1 },
		[ERR]	= { 1, 1, 1, 1 },
	};
	enum vroce_qp_state s;
	int i;

	(void)state;
	for (i = 0; i < NSTATES; i++) {
		s = (enum vroce_qp_state)i;
		assert_int_equal(vroce_qp_state_can_post_recv(s), want[i].recv);
		assert_int_equal(vroce_qp_state_can_post_send(s), want[i].send);
		assert_int_equal(vroce_qp_state_flushes_recv(s),
				 want[i].flush_recv);
		assert_int_equal(vroce_qp_state_flushes_send(s),
				 want[i].flush_send);
	}
	s = (enum vroce_qp_state)7;
	assert_false(vroce_qp_state_can_post_recv(s));
	assert_false(vroce_qp_state_can_post_send(s));
	s = (enum vroce_qp_state)-1;
	assert_false(vroce_qp_state_can_post_recv(s));
	assert_false(vroce_qp_state_can_post_send(s));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_all_transitions),
		cmocka_unit_test(test_usual_masks),
		cmocka_unit_test(test_modifiable),
		cmocka_unit_test(test_xrc),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_post),
	};

	return cmocka_run_group_tests_name("qp_state", tests, NULL, NULL);
}
