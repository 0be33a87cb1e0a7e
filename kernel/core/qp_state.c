// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * The QP state machine; see qp_state.h.
 *
 * The legal transitions are a list of rules. A rule names a transition,
 * the QP types it holds for, and the attributes it requires and allows.
 * A (type, cur, next) matches at most one rule; one that matches none is
 * illegal. The two blanket rules, to RESET and to ERR, are code, not
 * rows.
 */

#include "qp_state.h"

#define T_RC		(1u << VROCE_QPT_RC)
#define T_UC		(1u << VROCE_QPT_UC)
#define T_UD		(1u << VROCE_QPT_UD)
#define T_XI		(1u << VROCE_QPT_XRC_INI)
#define T_XT		(1u << VROCE_QPT_XRC_TGT)
/* XRC QPs move as RC ones do, except into RTR and RTS. */
#define T_RCX		(T_RC | T_XI | T_XT)
#define T_ALL		(T_RCX | T_UC | T_UD)

#define A(x)		VROCE_QP_ATTR_##x

/* Optional in RTR -> RTS, RTS -> RTS and SQD -> RTS. */
#define TO_RTS_OPT_UD	(A(CUR_STATE) | A(QKEY))
#define TO_RTS_OPT_UC	(A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | \
			 A(PATH_MIG_STATE))
#define TO_RTS_OPT_RC	(TO_RTS_OPT_UC | A(MIN_RNR_TIMER))

/* Optional in SQD -> SQD. */
#define SQD_OPT_UD	(A(PKEY_INDEX) | A(QKEY))
#define SQD_OPT_UC	(A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) | \
			 A(PKEY_INDEX) | A(PATH_MIG_STATE))
#define SQD_OPT_RC	(SQD_OPT_UC | A(PORT) | A(TIMEOUT) | A(RETRY_CNT) | \
			 A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) | \
			 A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER))

/* INIT -> RTR. */
#define RTR_REQ_UC	(A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN))
#define RTR_REQ_RC	(RTR_REQ_UC | A(MAX_DEST_RD_ATOMIC) | \
			 A(MIN_RNR_TIMER))
#define RTR_OPT_CONN	(A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX))
#define RTR_OPT_UD	(A(PKEY_INDEX) | A(QKEY))

/* RTR -> RTS of an RC QP. */
#define RTS_REQ_RC	(A(SQ_PSN) | A(TIMEOUT) | A(RETRY_CNT) | \
			 A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC))

/* The attributes RESET -> INIT sets (and INIT -> INIT may change). */
#define INIT_UD		(A(PKEY_INDEX) | A(PORT) | A(QKEY))
#define INIT_CONN	(A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS))

struct vroce_qp_rule {
	vr_u8 cur;
	vr_u8 next;
	vr_u16 types;		/* T_* bits */
	vr_u32 req;
	vr_u32 opt;
};

#define RULE(c, n, t, r, o)						\
	{ .cur = VROCE_QPS_##c, .next = VROCE_QPS_##n, .types = (t),	\
	  .req = (r), .opt = (o) }

static const struct vroce_qp_rule vroce_qp_rules[] = {
	RULE(RESET, INIT, T_UD,		INIT_UD,	0),
	RULE(RESET, INIT, T_RCX | T_UC,	INIT_CONN,	0),

	RULE(INIT, INIT, T_UD,		0,		INIT_UD),
	RULE(INIT, INIT, T_RCX | T_UC,	0,		INIT_CONN),

	RULE(INIT, RTR, T_UD,		0,		RTR_OPT_UD),
	RULE(INIT, RTR, T_UC,		RTR_REQ_UC,	RTR_OPT_CONN),
	RULE(INIT, RTR, T_RC | T_XT,	RTR_REQ_RC,	RTR_OPT_CONN),
	RULE(INIT, RTR, T_XI,		RTR_REQ_UC,	RTR_OPT_CONN),

	RULE(RTR, RTS, T_UD,		A(SQ_PSN),	TO_RTS_OPT_UD),
	RULE(RTR, RTS, T_UC,		A(SQ_PSN),	TO_RTS_OPT_UC),
	RULE(RTR, RTS, T_RC,		RTS_REQ_RC,	TO_RTS_OPT_RC),
	RULE(RTR, RTS, T_XI,		RTS_REQ_RC,	TO_RTS_OPT_UC),
	RULE(RTR, RTS, T_XT,		A(TIMEOUT) | A(SQ_PSN),
							TO_RTS_OPT_RC),

	RULE(RTS, RTS, T_UD,		0,		TO_RTS_OPT_UD),
	RULE(RTS, RTS, T_UC,		0,		TO_RTS_OPT_UC),
	RULE(RTS, RTS, T_RCX,		0,		TO_RTS_OPT_RC),

	RULE(RTS, SQD, T_ALL,		0,		A(EN_SQD_ASYNC_NOTIFY)),

	RULE(SQD, RTS, T_UD,		0,		TO_RTS_OPT_UD),
	RULE(SQD, RTS, T_UC,		0,		TO_RTS_OPT_UC),
	RULE(SQD, RTS, T_RCX,		0,		TO_RTS_OPT_RC),

	RULE(SQD, SQD, T_UD,		0,		SQD_OPT_UD),
	RULE(SQD, SQD, T_UC,		0,		SQD_OPT_UC),
	RULE(SQD, SQD, T_RCX,		0,		SQD_OPT_RC),

	RULE(SQE, RTS, T_UD,		0,		TO_RTS_OPT_UD),
	RULE(SQE, RTS, T_UC,		0,		A(CUR_STATE) |
							A(ACCESS_FLAGS)),
};

/* ARRAY_SIZE(), which the core cannot include. */
#define VROCE_QP_NRULES	(sizeof(vroce_qp_rules) / sizeof(*vroce_qp_rules))

static vr_bool vroce_qp_type_ok(enum vroce_qp_type type)
{
	return type == VROCE_QPT_RC || type == VROCE_QPT_UC ||
	       type == VROCE_QPT_UD || type == VROCE_QPT_XRC_INI ||
	       type == VROCE_QPT_XRC_TGT;
}

int vroce_qp_modify_masks(enum vroce_qp_type type, enum vroce_qp_state cur,
			  enum vroce_qp_state next, vr_u32 *req, vr_u32 *opt)
{
	vr_size i;

	*req = 0;
	*opt = 0;
	if (!vroce_qp_type_ok(type) ||
	    (vr_u32)cur >= VROCE_QPS_COUNT || (vr_u32)next >= VROCE_QPS_COUNT)
		return VROCE_EINVAL;

	/* Any state may be reset; any but RESET may be forced to ERR. */
	if (next == VROCE_QPS_RESET)
		return 0;
	if (next == VROCE_QPS_ERR)
		return cur == VROCE_QPS_RESET ? VROCE_EINVAL : 0;

	for (i = 0; i < VROCE_QP_NRULES; i++) {
		const struct vroce_qp_rule *r = &vroce_qp_rules[i];

		if (r->cur == cur && r->next == next &&
		    (r->types & (1u << type))) {
			*req = r->req;
			*opt = r->opt;
			return 0;
		}
	}
	return VROCE_EINVAL;
}

int vroce_qp_modify_check(enum vroce_qp_type type, enum vroce_qp_state cur,
			  enum vroce_qp_state next, vr_u32 mask)
{
	vr_u32 req, opt;

	if (vroce_qp_modify_masks(type, cur, next, &req, &opt))
		return VROCE_EINVAL;

	/* Only a modify that names the new state may change it. */
	if (cur != next && !(mask & VROCE_QP_ATTR_STATE))
		return VROCE_EINVAL;
	mask &= ~VROCE_QP_ATTR_STATE;

	if ((mask & req) != req)
		return VROCE_EINVAL;
	if (mask & ~(req | opt))
		return VROCE_EINVAL;
	return 0;
}

vr_u32 vroce_qp_attrs_modifiable(enum vroce_qp_type type,
				 enum vroce_qp_state state)
{
	vr_u32 req, opt;

	if (vroce_qp_modify_masks(type, state, state, &req, &opt))
		return 0;
	return opt;
}

const char *vroce_qp_state_name(enum vroce_qp_state state)
{
	static const char * const names[VROCE_QPS_COUNT] = {
		[VROCE_QPS_RESET]	= "RESET",
		[VROCE_QPS_INIT]	= "INIT",
		[VROCE_QPS_RTR]		= "RTR",
		[VROCE_QPS_RTS]		= "RTS",
		[VROCE_QPS_SQD]		= "SQD",
		[VROCE_QPS_SQE]		= "SQE",
		[VROCE_QPS_ERR]		= "ERR",
	};

	if ((vr_u32)state >= VROCE_QPS_COUNT)
		return "?";
	return names[state];
}
