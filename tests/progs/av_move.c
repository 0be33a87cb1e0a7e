// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * av_move: a connected RC QP moves to another address of its peer with
 * RTS -> SQD -> SQD (a new address vector) -> RTS, and its packets follow:
 * its requests, its READ responses and what it accepts as from its peer.
 * For tests/vm/96-av-move.sh.
 *
 *   av_move -a DEV_A -g GID_A -b DEV_B -1 GID_B1 -2 GID_B2 [-x CMD]
 *
 * One process holds both ends: QP a on DEV_A (GID index GID_A) and QP b
 * on DEV_B, first at GID index GID_B1. A round is 8 RDMA WRITEs of 16 KiB
 * from a into b's memory and 8 RDMA READs of 16 KiB by b from a's memory,
 * all in flight at once, each checked byte for byte. After the first
 * round, a moves its address vector to b's GID_B2 and b its source GID to
 * GID_B2 (both through SQD), CMD runs (the test makes b's first address
 * unreachable), and the second round must go the new way: a QP that kept
 * its old path or its old route would lose every packet to retry
 * exceeded. Exit status 0 only if every check passed (TAP on stdout).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"
#include "pattern.h"

#define MSG		(16 * 1024)
#define NMSG		8
#define LEN		(2 * NMSG * MSG)	/* a WRITE half, a READ half */
#define DEADLINE_S	30

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	uint8_t *buf;
	int gid_idx;
	union ibv_gid gid;
};

static int end_open(struct end *e, const char *dev, int gid_idx)
{
	struct ibv_qp_init_attr ia;

	e->ctx = open_by_name(dev);
	e->pd = e->ctx ? ibv_alloc_pd(e->ctx) : NULL;
	e->cq = e->pd ? ibv_create_cq(e->ctx, 2 * NMSG, NULL, NULL, 0) : NULL;
	e->buf = calloc(1, LEN);
	if (!e->cq || !e->buf)
		return -1;
	e->mr = ibv_reg_mr(e->pd, e->buf, LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = NMSG;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	e->qp = e->mr ? ibv_create_qp(e->pd, &ia) : NULL;
	e->gid_idx = gid_idx;
	if (!e->qp || ibv_query_gid(e->ctx, 1, gid_idx, &e->gid))
		return -1;
	return 0;
}

/* @e's QP connected to @peer's; 8 READs in flight at its responder. */
static int end_connect(struct end *e, const struct end *peer)
{
	const struct rc_path p = {
		.dqpn = peer->qp->qp_num, .rq_psn = 100, .sq_psn = 100,
		.dgid = &peer->gid, .sgid_idx = e->gid_idx,
		.dest_rd_atomic = NMSG, .rd_atomic = NMSG,
		.min_rnr_timer = 12, .timeout = 14, .rnr_retry = 7,
	};

	return rc_connect(e->qp, &p);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* SQD -> SQD with a new address vector: @sgid_idx towards @dgid. */
static int move_av(struct ibv_qp *qp, int sgid_idx, const union ibv_gid *dgid)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_SQD;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = sgid_idx;
	a.ah_attr.grh.hop_limit = 64;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV);
}

/* The QP's state and address vector as ibv_query_qp() reports them. */
static int query(struct ibv_qp *qp, struct ibv_qp_attr *a)
{
	struct ibv_qp_init_attr ia;

	return ibv_query_qp(qp, a, IBV_QP_STATE | IBV_QP_AV, &ia);
}

/* RTS -> SQD, until drained, -> SQD with the new AV -> RTS. */
static int move(struct end *e, int sgid_idx, const union ibv_gid *dgid)
{
	struct ibv_qp_attr a;
	int i;

	if (to_state(e->qp, IBV_QPS_SQD))
		return -1;
	/* Nothing is in flight (the round was polled): drained at once. */
	for (i = 0; i < 100; i++) {
		if (query(e->qp, &a))
			return -1;
		if (!a.sq_draining)
			break;
		poll(NULL, 0, 10);
	}
	if (a.sq_draining) {
		tap_diag("the SQ is still draining after 1 s");
		return -1;
	}
	if (move_av(e->qp, sgid_idx, dgid) || to_state(e->qp, IBV_QPS_RTS) ||
	    query(e->qp, &a))
		return -1;
	return a.qp_state == IBV_QPS_RTS &&
	       a.ah_attr.grh.sgid_index == sgid_idx &&
	       !memcmp(&a.ah_attr.grh.dgid, dgid, sizeof(*dgid)) ? 0 : -1;
}

static int post_rdma(struct end *from, const struct end *to,
		     enum ibv_wr_opcode op, size_t off, int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)from->buf + off + i * MSG,
		.length = MSG,
		.lkey = from->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {
			.remote_addr = (uintptr_t)to->buf + off + i * MSG,
			.rkey = to->mr->rkey,
		},
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(from->qp, &wr, &bad);
}

/* Polls @n successful completions from each of @a and @b, or fails. */
static int wait_both(struct end *a, struct end *b, int n)
{
	struct end *e[2] = { a, b };
	int got[2] = { 0, 0 }, k, r;
	time_t end = time(NULL) + DEADLINE_S;
	struct ibv_wc wc;

	while (got[0] < n || got[1] < n) {
		for (k = 0; k < 2; k++) {
			r = ibv_poll_cq(e[k]->cq, 1, &wc);
			if (r < 0)
				return -1;
			if (!r)
				continue;
			if (wc.status != IBV_WC_SUCCESS) {
				tap_diag("%s: %s", k ? "b" : "a",
					 ibv_wc_status_str(wc.status));
				return -1;
			}
			got[k]++;
		}
		if (time(NULL) > end) {
			tap_diag("deadline: a %d, b %d of %d completions",
				 got[0], got[1], n);
			return -1;
		}
	}
	return 0;
}

/*
 * One round with seed @seed: a WRITEs the first half of its buffer into
 * b's, b READs the second half of a's into its own.
 */
static int round_trip(struct end *a, struct end *b, unsigned int seed)
{
	size_t half = NMSG * MSG;
	int i, err = 0;

	fill(a->buf, LEN, seed);
	memset(b->buf, 0, LEN);
	for (i = 0; i < NMSG && !err; i++)
		err = post_rdma(a, b, IBV_WR_RDMA_WRITE, 0, i) ||
		      post_rdma(b, a, IBV_WR_RDMA_READ, half, i);
	if (err || wait_both(a, b, NMSG))
		return -1;
	/* b's first half came by WRITE, its second by READ. */
	if (!same(b->buf, LEN, seed)) {
		tap_diag("data differ (the WRITEs' half %s)",
			 same(b->buf, half, seed) ? "is right" : "too");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *deva = NULL, *devb = NULL, *cmd = NULL;
	int ga = -1, gb1 = -1, gb2 = -1, c;
	struct end a = {}, b = {};
	union ibv_gid gid2;

	while ((c = getopt(argc, argv, "a:g:b:1:2:x:")) != -1) {
		switch (c) {
		case 'a':
			deva = optarg;
			break;
		case 'g':
			ga = atoi(optarg);
			break;
		case 'b':
			devb = optarg;
			break;
		case '1':
			gb1 = atoi(optarg);
			break;
		case '2':
			gb2 = atoi(optarg);
			break;
		case 'x':
			cmd = optarg;
			break;
		default:
			return 2;
		}
	}
	if (!deva || !devb || ga < 0 || gb1 < 0 || gb2 < 0) {
		fprintf(stderr, "usage: av_move -a DEV_A -g GID_A -b DEV_B -1 GID_B1 -2 GID_B2 [-x CMD]\n");
		return 2;
	}
	if (!tap_ok(!end_open(&a, deva, ga) && !end_open(&b, devb, gb1) &&
		    !ibv_query_gid(b.ctx, 1, gb2, &gid2),
		    "both ends set up (%s GID %d, %s GIDs %d and %d)",
		    deva, ga, devb, gb1, gb2))
		return tap_done();
	if (!tap_ok(!end_connect(&a, &b) && !end_connect(&b, &a),
		    "a and b connected over b's first address"))
		return tap_done();
	tap_ok(!round_trip(&a, &b, 1),
	       "first address: 8 WRITEs and 8 READs of 16 KiB, data checked");
	tap_ok(!move(&a, ga, &gid2),
	       "a: RTS -> SQD -> SQD with b's second address -> RTS, the AV reads back");
	tap_ok(!move(&b, gb2, &a.gid),
	       "b: RTS -> SQD -> SQD from its second address -> RTS, the AV reads back");
	if (cmd)
		tap_ok(system(cmd) == 0, "ran: %s", cmd);
	tap_ok(!round_trip(&a, &b, 2),
	       "second address: 8 WRITEs and 8 READs of 16 KiB, data checked");
	return tap_done();
}
