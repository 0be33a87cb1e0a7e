// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The QP state machine through the stock libibverbs: every legal
 * transition of RC, UC and UD QPs succeeds and query_qp returns what was
 * set; illegal transitions and missing or extra attributes fail with
 * EINVAL and leave the QP unchanged.
 *
 *   qp_state [DEVICE]        (default vroce0)
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int gid;
};

static struct ibv_qp *new_qp(struct env *e, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(e->pd, &ia);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* The required attributes of each forward transition, per QP type. */
static int to_init(struct ibv_qp *qp, enum ibv_qp_type t, int mask_drop,
		   int mask_add)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .pkey_index = 0,
		.qkey = 0x11111111,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, (mask & ~mask_drop) | mask_add);
}

static int to_rtr(struct env *e, struct ibv_qp *qp, enum ibv_qp_type t,
		  int mask_drop, int mask_add)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = qp->qp_num, .rq_psn = 0x123456,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .sgid_index = e->gid, .hop_limit = 64 } },
	};
	int mask = IBV_QP_STATE;

	ibv_query_gid(e->ctx, 1, e->gid, &a.ah_attr.grh.dgid);
	if (t != IBV_QPT_UD)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	if (t == IBV_QPT_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, (mask & ~mask_drop) | mask_add);
}

static int to_rts(struct ibv_qp *qp, enum ibv_qp_type t, int mask_drop,
		  int mask_add)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .sq_psn = 0x654321, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 4,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (t == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, (mask & ~mask_drop) | mask_add);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static const char *tname(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

/*
 * A UD SEND to @qp itself, with no data; it completes once sent (the
 * packet finds no receive and is dropped). Returns its AH, or NULL.
 */
static struct ibv_ah *ud_send_self(struct env *e, struct ibv_qp *qp)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = e->gid, .hop_limit = 64 },
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x5d, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_ah *ah;

	if (ibv_query_gid(e->ctx, 1, e->gid, &aa.grh.dgid))
		return NULL;
	ah = ibv_create_ah(e->pd, &aa);
	if (!ah)
		return NULL;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qp->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	if (ibv_post_send(qp, &wr, &bad)) {
		ibv_destroy_ah(ah);
		return NULL;
	}
	return ah;
}

/* Whether the SEND of ud_send_self() completes within 5 s. */
static int ud_sent(struct env *e)
{
	struct timespec t0, t;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n = ibv_poll_cq(e->cq, 1, &wc);
		if (n)
			return n == 1 && wc.wr_id == 0x5d &&
			       wc.status == IBV_WC_SUCCESS;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 5);
	return 0;
}

static void check_path(struct env *e, enum ibv_qp_type t)
{
	struct ibv_qp *qp = new_qp(e, t);
	struct ibv_qp_init_attr ia;
	struct ibv_ah *ah;
	struct ibv_qp_attr a;
	int ret;

	if (!tap_ok(qp != NULL, "%s: create", tname(t)))
		return;
	tap_ok(qp_state(qp) == IBV_QPS_RESET, "%s: starts in RESET", tname(t));
	/* Illegal from RESET: straight to RTR or RTS. */
	errno = 0;
	ret = to_rtr(e, qp, t, 0, 0);
	tap_ok(ret == EINVAL && qp_state(qp) == IBV_QPS_RESET,
	       "%s: RESET->RTR is EINVAL (%d), QP unchanged", tname(t), ret);
	ret = to_rts(qp, t, 0, 0);
	tap_ok(ret == EINVAL, "%s: RESET->RTS is EINVAL (%d)", tname(t), ret);
	/* Missing required attribute, then an extra one. */
	ret = to_init(qp, t, IBV_QP_PORT, 0);
	tap_ok(ret == EINVAL && qp_state(qp) == IBV_QPS_RESET,
	       "%s: INIT without PORT is EINVAL (%d)", tname(t), ret);
	ret = to_init(qp, t, 0, IBV_QP_SQ_PSN);
	tap_ok(ret == EINVAL && qp_state(qp) == IBV_QPS_RESET,
	       "%s: INIT with SQ_PSN is EINVAL (%d)", tname(t), ret);
	ret = to_init(qp, t, 0, 0);
	tap_ok(!ret && qp_state(qp) == IBV_QPS_INIT, "%s: RESET->INIT (%d)",
	       tname(t), ret);
	ret = to_rts(qp, t, 0, 0);
	tap_ok(ret == EINVAL && qp_state(qp) == IBV_QPS_INIT,
	       "%s: INIT->RTS is EINVAL (%d)", tname(t), ret);
	if (t != IBV_QPT_UD) {
		ret = to_rtr(e, qp, t, IBV_QP_DEST_QPN, 0);
		tap_ok(ret == EINVAL && qp_state(qp) == IBV_QPS_INIT,
		       "%s: RTR without DEST_QPN is EINVAL (%d)", tname(t),
		       ret);
	}
	ret = to_rtr(e, qp, t, 0, 0);
	tap_ok(!ret && qp_state(qp) == IBV_QPS_RTR, "%s: INIT->RTR (%d)",
	       tname(t), ret);
	ret = to_rts(qp, t, IBV_QP_SQ_PSN, 0);
	tap_ok(ret == EINVAL && qp_state(qp) == IBV_QPS_RTR,
	       "%s: RTS without SQ_PSN is EINVAL (%d)", tname(t), ret);
	ret = to_rts(qp, t, 0, 0);
	tap_ok(!ret && qp_state(qp) == IBV_QPS_RTS, "%s: RTR->RTS (%d)",
	       tname(t), ret);

	memset(&a, 0, sizeof(a));
	ret = ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			   IBV_QP_CAP | IBV_QP_PORT, &ia);
	tap_ok(!ret && a.sq_psn == 0x654321 && a.port_num == 1 &&
	       (t == IBV_QPT_UD ? a.qkey == 0x11111111 :
		a.rq_psn == 0x123456 && a.path_mtu == IBV_MTU_1024 &&
		a.dest_qp_num == qp->qp_num) &&
	       (t != IBV_QPT_RC || (a.timeout == 14 && a.retry_cnt == 7 &&
				    a.max_rd_atomic == 4 &&
				    a.max_dest_rd_atomic == 4 &&
				    a.min_rnr_timer == 12)),
	       "%s: query_qp returns the values set", tname(t));
	tap_ok(!to_state(qp, IBV_QPS_SQD) && qp_state(qp) == IBV_QPS_SQD,
	       "%s: RTS->SQD", tname(t));
	/* SQD takes posts and holds them; RTS sends them. */
	ah = t == IBV_QPT_UD ? ud_send_self(e, qp) : NULL;
	tap_ok(!to_state(qp, IBV_QPS_RTS) && qp_state(qp) == IBV_QPS_RTS,
	       "%s: SQD->RTS", tname(t));
	if (t == IBV_QPT_UD) {
		tap_ok(ah && ud_sent(e),
		       "%s: a SEND posted in SQD goes out after SQD->RTS",
		       tname(t));
		if (ah)
			ibv_destroy_ah(ah);
	}
	ret = to_state(qp, IBV_QPS_SQE);
	tap_ok(ret == EINVAL && qp_state(qp) == IBV_QPS_RTS,
	       "%s: RTS->SQE by the user is EINVAL (%d)", tname(t), ret);
	tap_ok(!to_state(qp, IBV_QPS_ERR) && qp_state(qp) == IBV_QPS_ERR,
	       "%s: RTS->ERR", tname(t));
	ret = to_state(qp, IBV_QPS_RTS);
	tap_ok(ret == EINVAL && qp_state(qp) == IBV_QPS_ERR,
	       "%s: ERR->RTS is EINVAL (%d)", tname(t), ret);
	tap_ok(!to_state(qp, IBV_QPS_RESET) && qp_state(qp) == IBV_QPS_RESET,
	       "%s: ERR->RESET", tname(t));
	tap_ok(!to_init(qp, t, 0, 0) && !to_state(qp, IBV_QPS_ERR) &&
	       qp_state(qp) == IBV_QPS_ERR, "%s: INIT->ERR", tname(t));
	tap_ok(!ibv_destroy_qp(qp), "%s: destroy", tname(t));
}

/* The states a user can reach, and the legal moves between them (IBTA). */
static const enum ibv_qp_state states[] = {
	IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD,
	IBV_QPS_ERR,
};

static int legal(enum ibv_qp_state cur, enum ibv_qp_state next)
{
	switch (cur) {
	case IBV_QPS_RESET:
		return next == IBV_QPS_RESET || next == IBV_QPS_INIT;
	case IBV_QPS_INIT:
		return next == IBV_QPS_INIT || next == IBV_QPS_RTR ||
		       next == IBV_QPS_RESET || next == IBV_QPS_ERR;
	case IBV_QPS_RTR:
		return next == IBV_QPS_RTS || next == IBV_QPS_RESET ||
		       next == IBV_QPS_ERR;
	case IBV_QPS_RTS:
	case IBV_QPS_SQD:
		return next == IBV_QPS_RTS || next == IBV_QPS_SQD ||
		       next == IBV_QPS_RESET || next == IBV_QPS_ERR;
	default: /* ERR */
		return next == IBV_QPS_RESET || next == IBV_QPS_ERR;
	}
}

/* One move with the attributes it requires. */
static int move(struct env *e, struct ibv_qp *qp, enum ibv_qp_type t,
		enum ibv_qp_state cur, enum ibv_qp_state next)
{
	if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
		return to_init(qp, t, 0, 0);
	if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR)
		return to_rtr(e, qp, t, 0, 0);
	if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS)
		return to_rts(qp, t, 0, 0);
	return to_state(qp, next);
}

/* From RESET along INIT, RTR, RTS to @s; SQD via RTS, ERR via INIT. */
static int reach(struct env *e, struct ibv_qp *qp, enum ibv_qp_type t,
		 enum ibv_qp_state s)
{
	static const enum ibv_qp_state path[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
	};
	enum ibv_qp_state goal = s == IBV_QPS_SQD ? IBV_QPS_RTS :
				 s == IBV_QPS_ERR ? IBV_QPS_INIT : s;
	enum ibv_qp_state cur = IBV_QPS_RESET;
	unsigned int i;

	if (to_state(qp, IBV_QPS_RESET))
		return -1;
	for (i = 0; i < 3 && cur != goal; i++) {
		if (move(e, qp, t, cur, path[i]))
			return -1;
		cur = path[i];
	}
	if (s == IBV_QPS_SQD || s == IBV_QPS_ERR)
		return to_state(qp, s);
	return 0;
}

/* Every pair of user-reachable states: legal moves succeed, others fail. */
static void check_all(struct env *e, enum ibv_qp_type t)
{
	struct ibv_qp *qp = new_qp(e, t);
	unsigned int i, j;
	int bad = 0, n = 0, ret;

	if (!qp)
		return;
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		for (j = 0; j < sizeof(states) / sizeof(states[0]); j++) {
			if (reach(e, qp, t, states[i]) ||
			    qp_state(qp) != states[i]) {
				tap_diag("%s: cannot reach state %d", tname(t),
					 states[i]);
				bad++;
				continue;
			}
			ret = move(e, qp, t, states[i], states[j]);
			n++;
			if (legal(states[i], states[j]) ?
			    ret || qp_state(qp) != states[j] :
			    ret != EINVAL || qp_state(qp) != states[i]) {
				tap_diag("%s: %d->%d gave %d, state %d",
					 tname(t), states[i], states[j], ret,
					 qp_state(qp));
				bad++;
			}
		}
	tap_ok(!bad, "%s: all %d moves between RESET, INIT, RTR, RTS, SQD, ERR",
	       tname(t), n);
	ibv_destroy_qp(qp);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "vroce0";
	struct env e = { 0 };

	e.ctx = open_by_name(name);
	if (!tap_ok(e.ctx != NULL, "open %s", name))
		return tap_done();
	e.gid = roce_v2_ipv4_gid(e.ctx);
	e.pd = ibv_alloc_pd(e.ctx);
	e.cq = ibv_create_cq(e.ctx, 16, NULL, NULL, 0);
	if (!tap_ok(e.gid >= 0 && e.pd && e.cq, "gid %d, pd, cq", e.gid))
		return tap_done();
	check_path(&e, IBV_QPT_RC);
	check_path(&e, IBV_QPT_UC);
	check_path(&e, IBV_QPT_UD);
	check_all(&e, IBV_QPT_RC);
	check_all(&e, IBV_QPT_UC);
	check_all(&e, IBV_QPT_UD);
	tap_ok(!ibv_destroy_cq(e.cq) && !ibv_dealloc_pd(e.pd) &&
	       !ibv_close_device(e.ctx), "cleanup");
	return tap_done();
}
