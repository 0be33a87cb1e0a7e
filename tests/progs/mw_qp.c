// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A type 2 memory window belongs to the QP it was bound on. Pairs of RC
 * QPs of one device, connected to each other (client C, server S), one PD;
 * a type 2 window bound by IBV_WR_BIND_MW on S1:
 *   - C1's RDMA WRITE through it lands; C2's (another QP pair, same PD)
 *     gets a remote access error;
 *   - a SEND with Invalidate of its rkey arriving on S2 fails (S2's receive
 *     completes with a local protection error, C2's SEND with a remote
 *     error) and leaves the window bound: C1's WRITE still lands;
 *   - a SEND with Invalidate arriving on S1 invalidates it: S1's receive
 *     reports the rkey, C1's next WRITE gets a remote access error;
 *   - bound again on a new S1 and that QP destroyed, the window is unbound:
 *     binding it on another QP succeeds, and a WRITE through it lands.
 *
 *   mw_qp [DEVICE]   (default vroce0)
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"

#define BUF		65536
#define WIN_OFF		8192
#define WIN_LEN		4096
#define MSG		64

struct pair {
	struct ibv_cq *cq[2];		/* 0: client, 1: server */
	struct ibv_qp *qp[2];
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	uint8_t *buf;
	int gid;
	uint32_t rkey;
} e;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pair_free(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (p->qp[i])
			ibv_destroy_qp(p->qp[i]);
		if (p->cq[i])
			ibv_destroy_cq(p->cq[i]);
	}
	memset(p, 0, sizeof(*p));
}

static int rts(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };

	if (loopback_rc_rtr(e.ctx, qp, e.gid, dest))
		return -1;
	a.timeout = 14;
	a.retry_cnt = 3;
	a.rnr_retry = 3;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int pair_new(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct ibv_qp_init_attr ia = {
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 8, .max_recv_wr = 8,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		p->cq[i] = ibv_create_cq(e.ctx, 32, NULL, NULL, 0);
		if (!p->cq[i])
			return -1;
		ia.send_cq = p->cq[i];
		ia.recv_cq = p->cq[i];
		p->qp[i] = ibv_create_qp(e.pd, &ia);
		if (!p->qp[i])
			return -1;
	}
	return rts(p->qp[0], p->qp[1]->qp_num) ||
	       rts(p->qp[1], p->qp[0]->qp_num) ? -1 : 0;
}

/* The next completion of @cq, within 5 s; its status, or -1. */
static int next_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = now() + 5;

	while (now() < end) {
		int r = ibv_poll_cq(cq, 1, wc);

		if (r < 0)
			return -1;
		if (r == 1)
			return wc->status;
	}
	return -1;
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t inv,
		uint8_t fill)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e.buf, .length = MSG, .lkey = e.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	memset(e.buf, fill, MSG);
	if (op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = (uintptr_t)(e.buf + WIN_OFF);
		wr.wr.rdma.rkey = e.rkey;
	} else {
		wr.invalidate_rkey = inv;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* A WRITE of @fill through the window from @p's client; its status. */
static int write_via(struct pair *p, uint8_t fill)
{
	struct ibv_wc wc;
	int st;

	if (post(p->qp[0], IBV_WR_RDMA_WRITE, 0, fill))
		return -1;
	st = next_wc(p->cq[0], &wc);
	if (st == IBV_WC_SUCCESS && e.buf[WIN_OFF] != fill)
		return -2;		/* completed, did not land */
	return st;
}

static int post_recv(struct pair *p)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e.buf + 2 * WIN_OFF), .length = MSG,
		.lkey = e.mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(p->qp[1], &wr, &bad);
}

/* Binds the window on @p's server QP with a new rkey; 0 if it took. */
static int bind_on(struct pair *p)
{
	struct ibv_send_wr wr = {
		.wr_id = 9, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	uint32_t rkey = ibv_inc_rkey(e.rkey);

	wr.bind_mw.mw = e.mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = e.mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)(e.buf + WIN_OFF);
	wr.bind_mw.bind_info.length = WIN_LEN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_post_send(p->qp[1], &wr, &bad) ||
	    next_wc(p->cq[1], &wc) != IBV_WC_SUCCESS)
		return -1;
	e.rkey = rkey;
	return 0;
}

/* SEND with Invalidate of the window's rkey from @p's client. */
static void send_inv(struct pair *p, int on_bound_qp)
{
	struct ibv_wc cw, sw;
	int cst, sst;

	if (post_recv(p) || post(p->qp[0], IBV_WR_SEND_WITH_INV, e.rkey, 7)) {
		tap_ok(0, "post a SEND with Invalidate: %s", strerror(errno));
		return;
	}
	cst = next_wc(p->cq[0], &cw);
	sst = next_wc(p->cq[1], &sw);
	if (on_bound_qp)
		tap_ok(cst == IBV_WC_SUCCESS && sst == IBV_WC_SUCCESS &&
		       (sw.wc_flags & IBV_WC_WITH_INV) &&
		       sw.invalidated_rkey == e.rkey,
		       "SEND with Invalidate on the bound QP: client %d, server %d, rkey 0x%x",
		       cst, sst, sst == IBV_WC_SUCCESS ? sw.invalidated_rkey : 0);
	else
		tap_ok(cst > 0 && cst != IBV_WC_WR_FLUSH_ERR &&
		       sst == IBV_WC_LOC_PROT_ERR,
		       "SEND with Invalidate on another QP fails: client %d, server %d",
		       cst, sst);
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "vroce0";
	struct pair p1 = { 0 }, p2 = { 0 };
	int st, ok;

	e.ctx = open_by_name(dev);
	ok = e.ctx != NULL;
	if (ok) {
		e.gid = roce_v2_ipv4_gid(e.ctx);
		e.pd = ibv_alloc_pd(e.ctx);
		e.buf = aligned_alloc(4096, BUF);
		ok = e.gid >= 0 && e.pd && e.buf;
	}
	if (ok) {
		e.mr = ibv_reg_mr(e.pd, e.buf, BUF, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
		e.mw = e.mr ? ibv_alloc_mw(e.pd, IBV_MW_TYPE_2) : NULL;
		ok = e.mw && !pair_new(&p1) && !pair_new(&p2);
	}
	if (!tap_ok(ok, "%s: PD, MR, type 2 MW, two QP pairs", dev))
		return tap_done();
	e.rkey = e.mw->rkey;
	tap_ok(!bind_on(&p1), "window bound on S1 (QP %u)", p1.qp[1]->qp_num);

	st = write_via(&p1, 1);
	tap_ok(st == IBV_WC_SUCCESS, "WRITE through it from C1 lands (%d)", st);
	st = write_via(&p2, 2);
	tap_ok(st == IBV_WC_REM_ACCESS_ERR,
	       "WRITE through it from C2 gets a remote access error (%d)", st);
	pair_free(&p2);
	tap_ok(!pair_new(&p2), "a new C2-S2 pair");

	send_inv(&p2, 0);
	st = write_via(&p1, 3);
	tap_ok(st == IBV_WC_SUCCESS,
	       "the window is still bound: C1's WRITE lands (%d)", st);

	send_inv(&p1, 1);
	st = write_via(&p1, 4);
	tap_ok(st == IBV_WC_REM_ACCESS_ERR,
	       "invalidated: C1's WRITE gets a remote access error (%d)", st);
	pair_free(&p1);

	ok = !pair_new(&p1) && !bind_on(&p1);
	tap_ok(ok, "bound again on a new S1 (QP %u)",
	       p1.qp[1] ? p1.qp[1]->qp_num : 0);
	pair_free(&p1);
	pair_free(&p2);
	ok = !pair_new(&p2) && !bind_on(&p2);
	tap_ok(ok, "S1 destroyed: the window binds on another QP");
	st = ok ? write_via(&p2, 5) : -1;
	tap_ok(st == IBV_WC_SUCCESS, "WRITE through the new binding lands (%d)",
	       st);
	pair_free(&p2);
	ibv_dealloc_mw(e.mw);
	ibv_dereg_mr(e.mr);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	return tap_done();
}
