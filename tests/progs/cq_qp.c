// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CQs and QPs through the stock libibverbs: creation limits and errnos,
 * capability rounding, EBUSY for a CQ in use, flushing on ERR (exactly
 * one completion per posted WR, with the right wr_id), completion events
 * through a channel, resize_cq keeping unpolled completions in order, and
 * many create/destroy cycles.
 *
 *   cq_qp [DEVICE [CYCLES]]      (default vroce0, 1000)
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int gid;

static struct ibv_qp *new_qp(struct ibv_cq *cq, enum ibv_qp_type t,
			     struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t, .cap = *cap,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	*cap = ia.cap;
	return qp;
}

static int to_rts(struct ibv_qp *qp)
{
	return loopback_rc_rts(ctx, qp, gid);
}

static int to_rts_nowhere(struct ibv_qp *qp)
{
	const struct rc_path p = {
		.rd_atomic = 1, .timeout = 20, .rnr_retry = 7,
	};

	if (loopback_rc_rtr(ctx, qp, gid, 0xfffff0))
		return -1;
	return rc_to_rts(qp, &p);
}

static int to_err(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static char buf[64];
static struct ibv_mr *buf_mr;	/* the sends' and receives' buffer */

static int post(struct ibv_qp *qp, int nrecv, int nsend, uint64_t base)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8,
			       .lkey = buf_mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *brwr;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *bswr;
	int i;

	for (i = 0; i < nrecv; i++) {
		rwr.wr_id = base + i;
		if (ibv_post_recv(qp, &rwr, &brwr))
			return -1;
	}
	for (i = 0; i < nsend; i++) {
		swr.wr_id = base + 1000 + i;
		swr.send_flags = i & 1 ? IBV_SEND_SIGNALED : 0;
		if (ibv_post_send(qp, &swr, &bswr))
			return -1;
	}
	return 0;
}

static void check_limits(void)
{
	struct ibv_device_attr da;
	struct ibv_qp_cap cap = { 5, 3, 2, 1, 20 };
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	ibv_query_device(ctx, &da);
	errno = 0;
	cq = ibv_create_cq(ctx, da.max_cqe + 1, NULL, NULL, 0);
	tap_ok(!cq && errno == EINVAL, "create_cq over max_cqe: EINVAL (%d)",
	       errno);
	cq = ibv_create_cq(ctx, 5, NULL, NULL, 0);
	if (!tap_ok(cq && cq->cqe >= 5, "create_cq 5: cqe %d", cq ? cq->cqe : 0))
		return;
	qp = new_qp(cq, IBV_QPT_RC, &cap);
	tap_ok(qp && cap.max_send_wr >= 5 && cap.max_recv_wr >= 3 &&
	       cap.max_send_sge >= 2 && cap.max_recv_sge >= 1 &&
	       cap.max_inline_data >= 20,
	       "create_qp rounds caps up: wr %u/%u sge %u/%u inline %u",
	       cap.max_send_wr, cap.max_recv_wr, cap.max_send_sge,
	       cap.max_recv_sge, cap.max_inline_data);
	errno = 0;
	tap_ok(ibv_destroy_cq(cq) == EBUSY, "destroy_cq in use: EBUSY");
	tap_ok(qp && !ibv_destroy_qp(qp) && !ibv_destroy_cq(cq),
	       "destroy QP, then CQ");

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	cap = (struct ibv_qp_cap){ da.max_qp_wr + 1, 1, 1, 1, 0 };
	errno = 0;
	qp = new_qp(cq, IBV_QPT_RC, &cap);
	tap_ok(!qp && errno == EINVAL, "max_send_wr over max_qp_wr: EINVAL");
	cap = (struct ibv_qp_cap){ 1, 1, da.max_sge + 1, 1, 0 };
	qp = new_qp(cq, IBV_QPT_RC, &cap);
	tap_ok(!qp && errno == EINVAL, "max_send_sge over max_sge: EINVAL");
	cap = (struct ibv_qp_cap){ 1, 1, 1, 1, 4096 };
	qp = new_qp(cq, IBV_QPT_RC, &cap);
	tap_ok(!qp && errno == EINVAL, "max_inline_data 4096: EINVAL");
	ibv_destroy_cq(cq);
}

/* Polls up to @n completions, waiting a little for them. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0, i, r;

	for (i = 0; i < 1000 && got < n; i++) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
	}
	return got;
}

static void check_flush(void)
{
	struct ibv_qp_cap cap = { 8, 8, 1, 1, 0 };
	struct ibv_wc wc[32];
	struct ibv_cq *cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	struct ibv_qp *qp = new_qp(cq, IBV_QPT_RC, &cap);
	uint64_t next_s = 1100, next_r = 100;
	int n, i, order = 1, flush = 1;

	/*
	 * Connected to a QP number nobody has, with a retransmit timeout of
	 * 4.3 s: the sends go out and are never acknowledged, the receives
	 * never filled, until the QP goes to ERR.
	 */
	if (!tap_ok(qp && !to_rts_nowhere(qp), "RC QP to RTS, peer QP absent"))
		return;
	tap_ok(!post(qp, 5, 6, 100), "post 5 receives and 6 sends");
	usleep(100000);
	tap_ok(ibv_poll_cq(cq, 32, wc) == 0, "nothing completes before ERR");
	tap_ok(!to_err(qp), "modify to ERR");
	n = poll_n(cq, wc, 32);
	tap_ok(n == 11, "exactly 11 flush completions (%d)", n);
	/* Each queue completes in posting order; IBTA leaves SQ vs RQ open. */
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_WR_FLUSH_ERR ||
		    wc[i].qp_num != qp->qp_num)
			flush = 0;
		if (wc[i].wr_id >= 1000 ? wc[i].wr_id != next_s++ :
					  wc[i].wr_id != next_r++)
			order = 0;
	}
	tap_ok(flush, "all IBV_WC_WR_FLUSH_ERR on the QP");
	tap_ok(order && next_s == 1106 && next_r == 105,
	       "each queue's wr_ids once, in posting order");
	tap_ok(!ibv_destroy_qp(qp) && !ibv_destroy_cq(cq), "cleanup");
}

static void check_event(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq = ch ? ibv_create_cq(ctx, 16, NULL, ch, 0) : NULL;
	struct ibv_qp_cap cap = { 4, 4, 1, 1, 0 };
	struct ibv_qp *qp = cq ? new_qp(cq, IBV_QPT_RC, &cap) : NULL;
	struct pollfd pfd = { .fd = ch ? ch->fd : -1, .events = POLLIN };
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx;

	if (!tap_ok(qp && !to_rts(qp), "channel, CQ, QP in RTS"))
		return;
	tap_ok(!ibv_req_notify_cq(cq, 0), "req_notify_cq");
	tap_ok(poll(&pfd, 1, 200) == 0, "no event before a completion");
	post(qp, 1, 0, 7);
	to_err(qp);
	tap_ok(poll(&pfd, 1, 5000) == 1 && !ibv_get_cq_event(ch, &ev_cq,
							      &ev_ctx) &&
	       ev_cq == cq, "completion event arrives on the channel");
	if (ev_cq)
		ibv_ack_cq_events(cq, 1);
	tap_ok(poll(&pfd, 1, 200) == 0, "one event per arm");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
}

static void check_resize(void)
{
	struct ibv_qp_cap cap = { 8, 8, 1, 1, 0 };
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp = new_qp(cq, IBV_QPT_RC, &cap);
	struct ibv_wc wc[16];
	int i, n, ret, order = 1;

	if (!tap_ok(qp && !to_rts(qp) && !post(qp, 8, 0, 500) && !to_err(qp),
		    "8 unpolled completions"))
		return;
	tap_ok(ibv_poll_cq(cq, 1, wc) == 1 && wc[0].wr_id == 500,
	       "poll the first");
	ret = ibv_resize_cq(cq, 64);
	tap_ok(!ret && cq->cqe >= 64, "resize up to 64 (cqe %d)", cq->cqe);
	errno = 0;
	tap_ok(ibv_resize_cq(cq, 4) == EINVAL,
	       "resize below the 7 unpolled: EINVAL");
	tap_ok(!ibv_resize_cq(cq, 8) && cq->cqe >= 8, "resize down to 8");
	n = poll_n(cq, wc, 16);
	for (i = 0; i < n; i++)
		if (wc[i].wr_id != 501 + (uint64_t)i)
			order = 0;
	tap_ok(n == 7 && order, "the 7 others survive, in order (%d)", n);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static void check_post_state(void)
{
	struct ibv_qp_cap cap = { 4, 4, 1, 1, 0 };
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp = new_qp(cq, IBV_QPT_RC, &cap);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8,
			       .lkey = buf_mr->lkey };
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *bad = NULL;
	int ret;

	ret = ibv_post_send(qp, &swr, &bad);
	tap_ok(ret == EINVAL && bad == &swr, "post_send in RESET: EINVAL, bad_wr");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

/* Waits up to 5 s for async event @type; 1 if it came. */
static int async_event(enum ibv_event_type type)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int got;

	while (poll(&pfd, 1, 5000) == 1 && !ibv_get_async_event(ctx, &ev)) {
		got = ev.event_type == type;
		ibv_ack_async_event(&ev);
		if (got)
			return 1;
	}
	return 0;
}

static void check_async(void)
{
	struct ibv_qp_cap cap = { 4, 4, 1, 1, 0 };
	struct ibv_cq *cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_qp *qp = cq ? new_qp(cq, IBV_QPT_RC, &cap) : NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD,
				 .en_sqd_async_notify = 1 };

	if (!tap_ok(qp && !to_rts(qp), "QP in RTS on a 1-entry CQ"))
		return;
	tap_ok(!ibv_modify_qp(qp, &a, IBV_QP_STATE |
			      IBV_QP_EN_SQD_ASYNC_NOTIFY) &&
	       async_event(IBV_EVENT_SQ_DRAINED),
	       "RTS->SQD with notify: IBV_EVENT_SQ_DRAINED");
	post(qp, 4, 0, 900);
	to_err(qp);
	tap_ok(async_event(IBV_EVENT_CQ_ERR),
	       "4 flushes into a 1-entry CQ: IBV_EVENT_CQ_ERR");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static void check_cycles(int cycles)
{
	struct ibv_qp_cap cap = { 4, 4, 1, 1, 0 };
	int i, fails = 0;

	for (i = 0; i < cycles; i++) {
		struct ibv_pd *p = ibv_alloc_pd(ctx);
		struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
		struct ibv_qp *qp = NULL;

		if (p && cq) {
			struct ibv_qp_init_attr ia = {
				.send_cq = cq, .recv_cq = cq,
				.qp_type = IBV_QPT_UD, .cap = cap,
			};
			qp = ibv_create_qp(p, &ia);
		}
		if (!qp || ibv_destroy_qp(qp) || ibv_destroy_cq(cq) ||
		    ibv_dealloc_pd(p))
			fails++;
	}
	tap_ok(!fails, "%d create/destroy cycles of PD, CQ, QP (%d failed)",
	       cycles, fails);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "vroce0";
	int cycles = argc > 2 ? atoi(argv[2]) : 1000;

	ctx = open_by_name(name);
	if (!tap_ok(ctx != NULL, "open %s", name))
		return tap_done();
	gid = roce_v2_ipv4_gid(ctx);
	pd = ibv_alloc_pd(ctx);
	buf_mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf),
				 IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!tap_ok(gid >= 0 && pd && buf_mr, "gid %d, pd, mr", gid))
		return tap_done();
	check_limits();
	check_flush();
	check_event();
	check_resize();
	check_post_state();
	check_async();
	check_cycles(cycles);
	tap_ok(!ibv_dereg_mr(buf_mr) && !ibv_dealloc_pd(pd) &&
	       !ibv_close_device(ctx), "cleanup");
	return tap_done();
}
