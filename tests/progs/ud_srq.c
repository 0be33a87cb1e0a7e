// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD traffic into a QP on an SRQ, on one host: the bytes arrive through
 * the SRQ's buffers with the GRH area in front, and an armed srq_limit
 * raises IBV_EVENT_SRQ_LIMIT_REACHED once, when the SRQ falls below it;
 * the QP moved to ERR raises IBV_EVENT_QP_LAST_WQE_REACHED.
 *
 *   ud_srq [DEVICE]      (default vroce0)
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"

#define QKEY	0x11223344
#define MSG	256

static char rbuf[4][40 + MSG], sbuf[MSG];

static int async_event(struct ibv_context *ctx, enum ibv_event_type type,
		       int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int got;

	while (poll(&pfd, 1, ms) == 1 && !ibv_get_async_event(ctx, &ev)) {
		got = ev.event_type == type;
		ibv_ack_async_event(&ev);
		if (got)
			return 1;
	}
	return 0;
}

static int recv_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n = 0;

	for (i = 0; i < 5000 && !n; i++)
		n = ibv_poll_cq(cq, 1, wc);
	return n;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "vroce0";
	struct ibv_context *ctx = open_by_name(name);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_srq_attr lim = { .srq_limit = 3 };
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_UD,
				       .cap = { 4, 0, 1, 0, 0 } };
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND, .num_sge = 1,
				   .send_flags = IBV_SEND_SIGNALED }, *bs;
	struct ibv_recv_wr rwr = { .num_sge = 1 }, *br;
	struct ibv_sge ssge, rsge;
	struct ibv_mr *smr, *rmr;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	int i, ok = 1;

	if (!tap_ok(ctx != NULL, "open %s", name))
		return tap_done();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	srq = ibv_create_srq(pd, &sa);
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.srq = srq;
	qp = srq ? ibv_create_qp(pd, &qa) : NULL;
	smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0);
	rmr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	aa.grh.sgid_index = roce_v2_ipv4_gid(ctx);
	ibv_query_gid(ctx, 1, aa.grh.sgid_index, &aa.grh.dgid);
	ah = ibv_create_ah(pd, &aa);
	if (!tap_ok(qp && smr && rmr && ah && !ud_qp_rts(qp, QKEY),
		    "UD QP on an SRQ, in RTS, with an AH to itself"))
		return tap_done();

	for (i = 0; i < 4; i++) {
		rsge = (struct ibv_sge){ .addr = (uintptr_t)rbuf[i],
					 .length = sizeof(rbuf[i]),
					 .lkey = rmr->lkey };
		rwr.wr_id = i;
		rwr.sg_list = &rsge;
		ok &= !ibv_post_srq_recv(srq, &rwr, &br);
	}
	tap_ok(ok && !ibv_modify_srq(srq, &lim, IBV_SRQ_LIMIT),
	       "4 receives on the SRQ, limit armed at 3");

	for (i = 0; i < 2; i++) {
		memset(sbuf, 'a' + i, sizeof(sbuf));
		ssge = (struct ibv_sge){ .addr = (uintptr_t)sbuf,
					 .length = MSG, .lkey = smr->lkey };
		swr.sg_list = &ssge;
		swr.wr_id = 100 + i;
		swr.wr.ud.ah = ah;
		swr.wr.ud.remote_qpn = qp->qp_num;
		swr.wr.ud.remote_qkey = QKEY;
		ok = !ibv_post_send(qp, &swr, &bs);
		/* One send and one receive completion, in either order. */
		ok &= recv_one(cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS;
		if (wc.opcode != IBV_WC_RECV)
			ok &= recv_one(cq, &wc) == 1 &&
			      wc.status == IBV_WC_SUCCESS;
		else
			ok &= recv_one(cq, &(struct ibv_wc){ 0 }) == 1;
		tap_ok(ok && wc.opcode == IBV_WC_RECV && wc.wr_id == (uint64_t)i &&
		       wc.byte_len == 40 + MSG && (wc.wc_flags & IBV_WC_GRH) &&
		       wc.src_qp == qp->qp_num &&
		       rbuf[i][40] == 'a' + i && rbuf[i][40 + MSG - 1] == 'a' + i,
		       "message %d arrives in SRQ buffer %d with its GRH area",
		       i, i);
		if (i == 0)
			tap_ok(!async_event(ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
					    300),
			       "3 receives left: no limit event yet");
	}
	tap_ok(async_event(ctx, IBV_EVENT_SRQ_LIMIT_REACHED, 5000),
	       "2 left, below the limit: IBV_EVENT_SRQ_LIMIT_REACHED");
	memset(&lim, 0, sizeof(lim));
	tap_ok(!ibv_query_srq(srq, &lim) && lim.srq_limit == 0,
	       "the limit is disarmed after the event");
	tap_ok(!ibv_modify_qp(qp, &err, IBV_QP_STATE) &&
	       async_event(ctx, IBV_EVENT_QP_LAST_WQE_REACHED, 5000),
	       "QP on the SRQ to ERR: IBV_EVENT_QP_LAST_WQE_REACHED");

	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	tap_ok(!ibv_close_device(ctx), "cleanup");
	return tap_done();
}
