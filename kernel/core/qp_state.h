/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * The QP state machine of RC, UC and UD QPs (IBTA vol 1, 10.3.1 "QP and
 * EE context states", and the Modify QP attribute tables of 11.2.5): which
 * state transitions Modify QP may request, and which attributes each of
 * them requires or allows.
 *
 * States, QP types, and attribute mask bits carry the numeric values of
 * the kernel's enum ib_qp_state, enum ib_qp_type and enum ib_qp_attr_mask,
 * so the module passes those through unchanged.
 *
 * Transitions Modify QP may request (R = required, O = optional; every
 * transition to another state also requires VROCE_QP_ATTR_STATE):
 *
 *   RESET -> RESET  nothing
 *   any   -> RESET  nothing
 *   any but RESET -> ERR   nothing (IBTA: "an error can be forced from
 *                   any state, except Reset")
 *   RESET -> INIT   R: PKEY_INDEX PORT, and QKEY (UD) or ACCESS_FLAGS
 *   INIT  -> INIT   O: PKEY_INDEX PORT, and QKEY (UD) or ACCESS_FLAGS
 *   INIT  -> RTR    UD O: PKEY_INDEX QKEY
 *                   UC R: AV PATH_MTU DEST_QPN RQ_PSN
 *                      O: ALT_PATH ACCESS_FLAGS PKEY_INDEX
 *                   RC as UC, and R: MAX_DEST_RD_ATOMIC MIN_RNR_TIMER
 *   RTR   -> RTS    UD R: SQ_PSN  O: CUR_STATE QKEY
 *                   UC R: SQ_PSN
 *                      O: CUR_STATE ALT_PATH ACCESS_FLAGS PATH_MIG_STATE
 *                   RC R: SQ_PSN TIMEOUT RETRY_CNT RNR_RETRY
 *                         MAX_QP_RD_ATOMIC
 *                      O: as UC, and MIN_RNR_TIMER
 *   RTS   -> RTS    O: as RTR -> RTS
 *   SQD   -> RTS    O: as RTR -> RTS
 *   RTS   -> SQD    O: EN_SQD_ASYNC_NOTIFY
 *   SQD   -> SQD    UD O: PKEY_INDEX QKEY
 *                   UC O: AV ALT_PATH ACCESS_FLAGS PKEY_INDEX
 *                         PATH_MIG_STATE
 *                   RC O: as UC, and PORT TIMEOUT RETRY_CNT RNR_RETRY
 *                         MAX_QP_RD_ATOMIC MAX_DEST_RD_ATOMIC
 *                         MIN_RNR_TIMER
 *   SQE   -> RTS    UD O: CUR_STATE QKEY
 *                   UC O: CUR_STATE ACCESS_FLAGS
 *                   RC never enters SQE: not a transition
 *
 * Nothing else is legal; in particular RESET -> ERR, RTR -> RTR and
 * SQE -> SQE are not. CAP (resizing the queues) and every bit above
 * DEST_QPN are never allowed.
 *
 * Modify QP without VROCE_QP_ATTR_STATE changes attributes in the current
 * state: check it as the transition cur -> cur (with the STATE bit absent
 * or present, alike). Where that is no legal transition (RTR, SQE) no
 * attribute may change. vroce_qp_attrs_modifiable() gives the attributes
 * a QP may change while it stays in a state.
 *
 * VROCE_QP_ATTR_CUR_STATE is the caller's claim of the state the QP is
 * in; the check does not compare it with anything. The module must treat
 * attr->cur_qp_state as @cur only if it matches the QP's actual state (or
 * refuse the call): the claim exists so that a consumer that has not yet
 * seen an asynchronous move to SQE can still move the QP back to RTS.
 *
 * SQD -> SQD and SQD -> RTS are legal here at any time; the IBTA allows
 * them only once the send queue has drained. That is up to the module.
 */
#ifndef VROCE_CORE_QP_STATE_H
#define VROCE_CORE_QP_STATE_H

#include "types.h"

/* The values of enum ib_qp_state. */
enum vroce_qp_state {
	VROCE_QPS_RESET	= 0,
	VROCE_QPS_INIT	= 1,
	VROCE_QPS_RTR	= 2,
	VROCE_QPS_RTS	= 3,
	VROCE_QPS_SQD	= 4,
	VROCE_QPS_SQE	= 5,
	VROCE_QPS_ERR	= 6,
};

#define VROCE_QPS_COUNT	7

/* The values of enum ib_qp_type; SMI (0), GSI (1) and the rest are not ours. */
enum vroce_qp_type {
	VROCE_QPT_RC	= 2,
	VROCE_QPT_UC	= 3,
	VROCE_QPT_UD	= 4,
	VROCE_QPT_XRC_INI	= 9,	/* XRC initiator: sends only */
	VROCE_QPT_XRC_TGT	= 10,	/* XRC target: receives only */
};

/* The bits of enum ib_qp_attr_mask. */
#define VROCE_QP_ATTR_STATE			(1u << 0)
#define VROCE_QP_ATTR_CUR_STATE			(1u << 1)
#define VROCE_QP_ATTR_EN_SQD_ASYNC_NOTIFY	(1u << 2)
#define VROCE_QP_ATTR_ACCESS_FLAGS		(1u << 3)
#define VROCE_QP_ATTR_PKEY_INDEX		(1u << 4)
#define VROCE_QP_ATTR_PORT			(1u << 5)
#define VROCE_QP_ATTR_QKEY			(1u << 6)
#define VROCE_QP_ATTR_AV			(1u << 7)
#define VROCE_QP_ATTR_PATH_MTU			(1u << 8)
#define VROCE_QP_ATTR_TIMEOUT			(1u << 9)
#define VROCE_QP_ATTR_RETRY_CNT			(1u << 10)
#define VROCE_QP_ATTR_RNR_RETRY			(1u << 11)
#define VROCE_QP_ATTR_RQ_PSN			(1u << 12)
#define VROCE_QP_ATTR_MAX_QP_RD_ATOMIC		(1u << 13)
#define VROCE_QP_ATTR_ALT_PATH			(1u << 14)
#define VROCE_QP_ATTR_MIN_RNR_TIMER		(1u << 15)
#define VROCE_QP_ATTR_SQ_PSN			(1u << 16)
#define VROCE_QP_ATTR_MAX_DEST_RD_ATOMIC	(1u << 17)
#define VROCE_QP_ATTR_PATH_MIG_STATE		(1u << 18)
#define VROCE_QP_ATTR_CAP			(1u << 19)
#define VROCE_QP_ATTR_DEST_QPN			(1u << 20)

/* Every bit above, i.e. the kernel's IB_QP_ATTR_STANDARD_BITS. */
#define VROCE_QP_ATTR_ALL			((1u << 21) - 1)

/*
 * May a QP of @type in state @cur be modified with attribute mask @mask
 * and, if @cur != @next, move to @next? 0 if so; VROCE_EINVAL if @type or
 * a state is unknown, the transition is illegal, a required attribute is
 * missing, or an attribute is neither required nor optional.
 */
int vroce_qp_modify_check(enum vroce_qp_type type, enum vroce_qp_state cur,
			  enum vroce_qp_state next, vr_u32 mask);

/*
 * The attributes transition @cur -> @next of a QP of @type requires
 * (@req) and allows (@opt), without VROCE_QP_ATTR_STATE. 0 if the
 * transition is legal; VROCE_EINVAL (and both masks 0) if not.
 */
int vroce_qp_modify_masks(enum vroce_qp_type type, enum vroce_qp_state cur,
			  enum vroce_qp_state next, vr_u32 *req, vr_u32 *opt);

/*
 * The attributes a QP of @type may change while it stays in @state
 * (Modify QP without VROCE_QP_ATTR_STATE); 0 if none or unknown.
 */
vr_u32 vroce_qp_attrs_modifiable(enum vroce_qp_type type,
				 enum vroce_qp_state state);

/* "RESET", "INIT", ..., "ERR"; "?" for an unknown state. Never NULL. */
const char *vroce_qp_state_name(enum vroce_qp_state state);

/*
 * Posting work requests (IBTA vol 1, 10.3.1 and 11.4.1):
 *
 *   state   post_recv              post_send
 *   RESET   immediate error        immediate error
 *   INIT    queued                 immediate error
 *   RTR     queued, processed      immediate error
 *   RTS     queued, processed      queued, processed
 *   SQD     queued, processed      queued, not processed until RTS
 *   SQE     queued, processed      completed with flush error
 *   ERR     completed with flush error
 *
 * vroce_qp_state_can_post_*() say whether a post succeeds (is not an
 * immediate error); vroce_qp_state_flushes_*() whether what it posts is
 * then completed with a flush error instead of being processed.
 */
static inline vr_bool vroce_qp_state_can_post_recv(enum vroce_qp_state state)
{
	return state >= VROCE_QPS_INIT && state <= VROCE_QPS_ERR;
}

static inline vr_bool vroce_qp_state_can_post_send(enum vroce_qp_state state)
{
	return state >= VROCE_QPS_RTS && state <= VROCE_QPS_ERR;
}

static inline vr_bool vroce_qp_state_flushes_recv(enum vroce_qp_state state)
{
	return state == VROCE_QPS_ERR;
}

static inline vr_bool vroce_qp_state_flushes_send(enum vroce_qp_state state)
{
	return state == VROCE_QPS_SQE || state == VROCE_QPS_ERR;
}

#endif /* VROCE_CORE_QP_STATE_H */
