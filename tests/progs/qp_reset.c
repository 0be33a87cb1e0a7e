// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A QP used again after RESET: two RC QPs of one device, connected to
 * each other, send more messages each way than their SQs hold; then both
 * go to RESET, which discards their posted receives without completions,
 * and are connected again, and the same traffic must go through as on a
 * new QP pair: every post succeeds, every message arrives whole, in
 * order, in the receive WQE posted for it. Last, one QP goes to RESET
 * with a full SQ of SENDs waiting for acknowledgements, and the pair,
 * connected again, must carry the same traffic.
 *
 *   qp_reset [DEVICE [ROUNDS]]   (default vroce0, 3 rounds)
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"

/*
 * max_send_wr and max_recv_wr asked. At least the requester's stream depth
 * (8 WQEs in flight), so that a full SQ in flight makes the send engine
 * wait for the completer rather than sleep (reset_in_flight()).
 */
#define DEPTH		8
#define MSG		300		/* bytes per message */
#define SLOTS		64		/* buffers per direction and kind */

struct side {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint32_t sq_depth;		/* what create_qp gave */
	uint32_t rq_depth;
	uint64_t next_recv;		/* wr_id of the next receive posted */
	uint64_t first_recv;		/* wr_id the next message must land in */
};

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;			/* per side: SLOTS send, SLOTS recv */
	int gid;
	struct side s[2];
};

static uint8_t *send_buf(struct env *e, int side, uint32_t slot)
{
	return e->buf + ((size_t)side * 2 * SLOTS + slot % SLOTS) * MSG;
}

static uint8_t *recv_buf(struct env *e, int side, uint64_t wr_id)
{
	return e->buf + ((size_t)side * 2 * SLOTS + SLOTS + wr_id % SLOTS) *
			MSG;
}

static void fill(uint8_t *p, unsigned int round, uint32_t n)
{
	int i;

	for (i = 0; i < MSG; i++)
		p[i] = (uint8_t)(round * 131 + n * 7 + i);
}

static int post_recv(struct env *e, int side)
{
	struct side *s = &e->s[side];
	uint64_t id = s->next_recv;
	struct ibv_sge sge = {
		.addr = (uintptr_t)recv_buf(e, side, id),
		.length = MSG, .lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret;

	memset(recv_buf(e, side, id), 0, MSG);
	ret = ibv_post_recv(s->qp, &wr, &bad);
	if (!ret)
		s->next_recv++;
	return ret;
}

static int post_send(struct env *e, int side, unsigned int round, uint32_t n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)send_buf(e, side, n),
		.length = MSG, .lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = n, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	fill(send_buf(e, side, n), round, n);
	return ibv_post_send(e->s[side].qp, &wr, &bad);
}

/* What one direction of a round saw; the first error is kept. */
struct flow {
	uint32_t sent, done, recvd;
	char why[160];
};

#define FLOW_ERR(f, ...)						\
	do {								\
		if (!(f)->why[0])					\
			snprintf((f)->why, sizeof((f)->why), __VA_ARGS__); \
	} while (0)

static void reap_send(struct env *e, int side, struct flow *f)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(e->s[side].cq, 1, &wc) == 1) {
		if (wc.qp_num != e->s[side].qp->qp_num) {
			FLOW_ERR(f, "completion of QP %u on the sender's CQ",
				 wc.qp_num);
		} else if (wc.status != IBV_WC_SUCCESS ||
			   wc.opcode != IBV_WC_SEND || wc.wr_id != f->done) {
			FLOW_ERR(f, "send completion %u: status %d opcode %d wr_id %llu",
				 f->done, wc.status, wc.opcode,
				 (unsigned long long)wc.wr_id);
		}
		f->done++;
	}
}

static void reap_recv(struct env *e, int side, unsigned int round,
		      struct flow *f)
{
	struct side *s = &e->s[side];
	uint8_t want[MSG];
	struct ibv_wc wc;

	while (ibv_poll_cq(s->cq, 1, &wc) == 1) {
		fill(want, round, f->recvd);
		if (wc.qp_num != s->qp->qp_num || wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != IBV_WC_RECV || wc.byte_len != MSG ||
		    wc.wr_id != s->first_recv) {
			FLOW_ERR(f, "receive %u: qp %u status %d opcode %d len %u wr_id %llu (want %llu)",
				 f->recvd, wc.qp_num, wc.status, wc.opcode,
				 wc.byte_len, (unsigned long long)wc.wr_id,
				 (unsigned long long)s->first_recv);
		} else if (memcmp(recv_buf(e, side, wc.wr_id), want, MSG)) {
			FLOW_ERR(f, "receive %u: data differs", f->recvd);
		}
		s->first_recv = wc.wr_id + 1;
		f->recvd++;
		if (post_recv(e, side))
			FLOW_ERR(f, "post_recv again: %s", strerror(errno));
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* @n messages from side @from to the other, a full SQ at a time. */
static void flow(struct env *e, int from, unsigned int round, uint32_t n)
{
	struct side *src = &e->s[from];
	double end = now() + 20;
	struct flow f = { 0 };
	int ret;

	while ((f.done < n || f.recvd < n) && !f.why[0] && now() < end) {
		while (f.sent < n && f.sent - f.done < src->sq_depth &&
		       !f.why[0]) {
			ret = post_send(e, from, round, f.sent);
			if (ret) {
				FLOW_ERR(&f, "post_send %u (%u completed): %s",
					 f.sent, f.done, strerror(ret));
				break;
			}
			f.sent++;
		}
		reap_send(e, from, &f);
		reap_recv(e, !from, round, &f);
	}
	if (f.done < n || f.recvd < n)
		FLOW_ERR(&f, "%u sent, %u completed, %u received of %u",
			 f.sent, f.done, f.recvd, n);
	tap_ok(!f.why[0], "round %u: %u messages QP %u -> QP %u (SQ depth %u) %s",
	       round, n, src->qp->qp_num, e->s[!from].qp->qp_num,
	       src->sq_depth, f.why);
}

/* INIT, RTR towards the other QP, RTS, with PSNs of this round. */
static int connect_qp(struct env *e, int side, uint32_t psn)
{
	union ibv_gid dgid;
	const struct rc_path p = {
		.dqpn = e->s[!side].qp->qp_num, .rq_psn = psn, .sq_psn = psn,
		.dgid = &dgid, .sgid_idx = e->gid, .dest_rd_atomic = 1,
		.rd_atomic = 1, .min_rnr_timer = 1, .timeout = 14,
		.rnr_retry = 7, .access = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_query_gid(e->ctx, 1, e->gid, &dgid))
		return -1;
	return rc_connect(e->s[side].qp, &p);
}

/* Both QPs connected, each with a full RQ whose first WQE is next. */
static void connect_round(struct env *e, unsigned int round)
{
	uint32_t i;
	int side, ok;

	for (side = 0; side < 2; side++) {
		struct side *s = &e->s[side];

		ok = !connect_qp(e, side, 0x100 * round);
		s->first_recv = s->next_recv;
		for (i = 0; ok && i < s->rq_depth; i++)
			ok = !post_recv(e, side);
		tap_ok(ok, "round %u: QP %u connected, %u receives posted",
		       round, s->qp->qp_num, s->rq_depth);
	}
}

/* RESET: what is posted goes without a completion. */
static void reset_round(struct env *e, unsigned int round)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc;
	int side, ok, n;

	for (side = 0; side < 2; side++) {
		ok = !ibv_modify_qp(e->s[side].qp, &a, IBV_QP_STATE);
		n = 0;
		while (ibv_poll_cq(e->s[side].cq, 1, &wc) == 1)
			n++;
		tap_ok(ok && !n, "round %u: QP %u to RESET, %d completions after it",
		       round, e->s[side].qp->qp_num, n);
	}
}

/*
 * RESET while SENDs wait for their acknowledgements: the other QP went to
 * RESET first and drops them. A full SQ in flight makes the send engine
 * wait for the completer instead of sleeping; connected again, the QP's
 * first post must still wake it.
 */
static void reset_in_flight(struct env *e, unsigned int round)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct side *s = &e->s[0];
	struct ibv_wc wc;
	uint32_t i;
	int ok, n = 0;

	connect_round(e, round);
	ok = !ibv_modify_qp(e->s[1].qp, &a, IBV_QP_STATE);
	for (i = 0; ok && i < s->sq_depth; i++)
		ok = !post_send(e, 0, round, i);
	/* They leave, and nothing answers (a retry waits 67 ms). */
	usleep(20000);
	ok = ok && !ibv_modify_qp(s->qp, &a, IBV_QP_STATE);
	while (ibv_poll_cq(s->cq, 1, &wc) == 1)
		n++;
	tap_ok(ok, "round %u: QP %u to RESET with %u SENDs unacknowledged (%d completions)",
	       round, s->qp->qp_num, s->sq_depth, n);
}

static int setup(struct env *e, const char *dev)
{
	size_t len = (size_t)4 * SLOTS * MSG;
	int side;

	e->ctx = open_by_name(dev);
	if (!e->ctx)
		return -1;
	e->gid = roce_v2_ipv4_gid(e->ctx);
	e->pd = ibv_alloc_pd(e->ctx);
	e->buf = calloc(1, len);
	if (e->gid < 0 || !e->pd || !e->buf)
		return -1;
	e->mr = ibv_reg_mr(e->pd, e->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!e->mr)
		return -1;
	for (side = 0; side < 2; side++) {
		struct side *s = &e->s[side];
		struct ibv_qp_init_attr ia = {
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		s->cq = ibv_create_cq(e->ctx, 4 * SLOTS, NULL, NULL, 0);
		if (!s->cq)
			return -1;
		ia.send_cq = s->cq;
		ia.recv_cq = s->cq;
		s->qp = ibv_create_qp(e->pd, &ia);
		if (!s->qp || ia.cap.max_send_wr > SLOTS ||
		    ia.cap.max_recv_wr > SLOTS)
			return -1;
		s->sq_depth = ia.cap.max_send_wr;
		s->rq_depth = ia.cap.max_recv_wr;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "vroce0";
	unsigned int round, rounds = argc > 2 ? atoi(argv[2]) : 3;
	struct env e = { 0 };
	uint32_t n;

	if (!tap_ok(!setup(&e, dev), "%s: PD, MR, two CQs, two RC QPs", dev))
		return tap_done();
	for (round = 1; round <= rounds; round++) {
		connect_round(&e, round);
		/* More than the SQ holds, and than its ring has entries. */
		n = 4 * e.s[0].sq_depth + 3;
		flow(&e, 0, round, n);
		flow(&e, 1, round, n);
		reset_round(&e, round);
	}
	reset_in_flight(&e, round);
	connect_round(&e, ++round);
	n = 4 * e.s[0].sq_depth + 3;
	flow(&e, 0, round, n);
	flow(&e, 1, round, n);
	ibv_destroy_qp(e.s[0].qp);
	ibv_destroy_qp(e.s[1].qp);
	ibv_destroy_cq(e.s[0].cq);
	ibv_destroy_cq(e.s[1].cq);
	ibv_dereg_mr(e.mr);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	return tap_done();
}
