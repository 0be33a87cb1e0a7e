// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The error completion comes first. Two RC QPs of one device, connected
 * to each other, each with one CQ for its SQ and RQ. The client posts a
 * receive, then a request that must fail at the server, then a good
 * SEND. The first completion on the client's CQ must be the failed
 * request's, with the remote error status; only after it come the flush
 * completions of both queues. The server, whose receive WQE was the bad
 * one, must see that WQE's error first, then its other receive flushed.
 *
 * Cases: the server's receive MR deregistered, moved to another PD, or
 * given another translation after the receive was posted; and an RDMA
 * WRITE with an rkey that does not exist. On vroce, the client then
 * posts a receive and a SEND to its QP, which the device moved to ERR
 * unbeknown to the provider: each must complete flushed.
 *
 *   err_order -d DEV [-g GIDIDX] [-p PORT] [-s | PEER]
 *
 * Without -s and PEER, client and server are two QPs of DEV in this
 * process. With -s, this is the server of a run across two hosts; with
 * PEER, its client, which prints the TAP of both ends.
 *
 * Copyright (c) 2026 the vroce developers
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"
#include "rc_connect.h"
#include "pair_args.h"
#include "xchg.h"

#define MSG		256		/* the spoiled receive's length */
#define LONG		4096		/* a SEND of four packets */
#define LONG_RECV	2048		/* too short for it, by two packets */
#define SLOT		4096
#define CLIENT_RECV	100
#define CLIENT_BAD	1
#define CLIENT_GOOD	2
#define CLIENT_LATE_RECV 101
#define CLIENT_LATE_SEND 3
#define SERVER_BAD	200
#define SERVER_GOOD	201

enum bad_kind {
	BAD_DEREG, BAD_PD, BAD_XLAT, BAD_LEN, BAD_WRITE, BAD_READ, BAD_RNR,
	BAD_GONE, BAD_N
};

/*
 * Each case: what goes wrong, the client's failed request and its status,
 * and the server's first completion (0: every receive flushed, in order;
 * -1: no completion at all). rdma_rxe reports a receive too short as an
 * operational error, not as IBTA's invalid request and length error: it
 * may give the *_rxe statuses instead, vroce may not.
 */
static const struct bad_case {
	const char *name;
	enum ibv_wr_opcode op;
	uint32_t len;
	enum ibv_wc_status client, client_rxe;
	int server, server_rxe;
} cases[BAD_N] = {
	[BAD_DEREG] = { "receive MR deregistered", IBV_WR_SEND, MSG,
			IBV_WC_REM_OP_ERR, IBV_WC_REM_OP_ERR,
			IBV_WC_LOC_PROT_ERR, IBV_WC_LOC_QP_OP_ERR },
	[BAD_PD] = { "receive MR moved to another PD", IBV_WR_SEND, MSG,
		     IBV_WC_REM_OP_ERR, IBV_WC_REM_OP_ERR,
		     IBV_WC_LOC_PROT_ERR, IBV_WC_LOC_QP_OP_ERR },
	[BAD_XLAT] = { "receive MR given another translation", IBV_WR_SEND,
		       MSG, IBV_WC_REM_OP_ERR, IBV_WC_REM_OP_ERR,
		       IBV_WC_LOC_PROT_ERR, IBV_WC_LOC_QP_OP_ERR },
	[BAD_LEN] = { "SEND longer than the receive, failing mid-message",
		      IBV_WR_SEND, LONG, IBV_WC_REM_INV_REQ_ERR,
		      IBV_WC_REM_OP_ERR, IBV_WC_LOC_LEN_ERR,
		      IBV_WC_LOC_QP_OP_ERR },
	[BAD_WRITE] = { "RDMA WRITE with an unknown rkey", IBV_WR_RDMA_WRITE,
			MSG, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR },
	[BAD_READ] = { "RDMA READ with an unknown rkey", IBV_WR_RDMA_READ,
		       MSG, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR },
	[BAD_RNR] = { "SEND to a QP without receives, RNR retries run out",
		      IBV_WR_SEND, MSG, IBV_WC_RNR_RETRY_EXC_ERR,
		      IBV_WC_RNR_RETRY_EXC_ERR, -1, -1 },
	[BAD_GONE] = { "SEND to a QP in ERR, transport retries run out",
		       IBV_WR_SEND, MSG, IBV_WC_RETRY_EXC_ERR,
		       IBV_WC_RETRY_EXC_ERR },
};


struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct ibv_mr *mr;		/* send buffer and the good receives */
	uint8_t *buf;			/* send, server's good, client's receive */
	uint8_t *rbuf, *rbuf2;		/* the server's bad receive, elsewhere */
	int gid;
	union ibv_gid my_gid;
	int rxe;			/* this device is rdma_rxe */
	int peer_rxe;			/* the server's is */
};

/* One end: its QP, its CQ for both queues, the server's receive MR. */
struct end {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *rmr;
};

/* What an end saw: its first completion, and whether it was right. */
struct seen {
	int ok;
	char why[160];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int end_create(struct env *e, struct end *x)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	x->cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	if (!x->cq)
		return -1;
	ia.send_cq = x->cq;
	ia.recv_cq = x->cq;
	x->qp = ibv_create_qp(e->pd, &ia);
	return x->qp ? 0 : -1;
}

static void end_destroy(struct end *x)
{
	if (x->qp)
		ibv_destroy_qp(x->qp);
	if (x->cq)
		ibv_destroy_cq(x->cq);
	if (x->rmr)
		ibv_dereg_mr(x->rmr);
	memset(x, 0, sizeof(*x));
}

static int end_connect(struct env *e, struct end *x, uint32_t dqpn,
		       const union ibv_gid *dgid)
{
	struct rc_path p = {
		.dqpn = dqpn, .dgid = dgid, .sgid_idx = e->gid,
		.dest_rd_atomic = 1, .rd_atomic = 1, .min_rnr_timer = 1,
		.timeout = 14, .rnr_retry = 3,
	};

	return rc_connect(x->qp, &p);
}

static int post_recv(struct ibv_qp *qp, uint64_t id, void *addr,
		     uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct env *e, struct ibv_qp *qp, uint64_t id,
		     enum ibv_wr_opcode op, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf, .length = len, .lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = 0x10000;
		wr.wr.rdma.rkey = 0x00dead00;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* Makes the server's posted receive WQE or QP bad, as @kind says. */
static int spoil_recv(struct env *e, struct end *x, enum bad_kind kind)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	switch (kind) {
	case BAD_DEREG:
		if (ibv_dereg_mr(x->rmr))
			return -1;
		x->rmr = NULL;
		return 0;
	case BAD_PD:
		return ibv_rereg_mr(x->rmr, IBV_REREG_MR_CHANGE_PD, e->pd2,
				    NULL, 0, 0);
	case BAD_XLAT:
		return ibv_rereg_mr(x->rmr, IBV_REREG_MR_CHANGE_TRANSLATION,
				    NULL, e->rbuf2, MSG, 0);
	case BAD_GONE:
		return ibv_modify_qp(x->qp, &a, IBV_QP_STATE);
	default:
		return 0;
	}
}

/* The server's end: connected, two receives posted, then spoiled. */
static int server_prepare(struct env *e, struct end *x, enum bad_kind kind,
			  uint32_t dqpn, const union ibv_gid *dgid)
{
	uint32_t len = kind == BAD_LEN ? LONG_RECV : MSG;

	if (end_create(e, x) || end_connect(e, x, dqpn, dgid))
		return -1;
	x->rmr = ibv_reg_mr(e->pd, e->rbuf, SLOT, IBV_ACCESS_LOCAL_WRITE);
	if (!x->rmr)
		return -1;
	if (kind != BAD_RNR &&
	    (post_recv(x->qp, SERVER_BAD, e->rbuf, len, x->rmr->lkey) ||
	     post_recv(x->qp, SERVER_GOOD, e->buf + SLOT, SLOT,
		       e->mr->lkey)))
		return -1;
	return spoil_recv(e, x, kind) ? -2 : 0;
}

/* Polls @cq until @n completions or @secs; returns how many came. */
static int reap(struct ibv_cq *cq, struct ibv_wc *wc, int n, double secs)
{
	double end = now() + secs;
	int got = 0, r;

	while (got < n && now() < end) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			break;
		got += r;
	}
	return got;
}

static const char *st(enum ibv_wc_status s)
{
	return ibv_wc_status_str(s);
}

/*
 * @wc[0] must be @first_id with a status of @ok1 or @ok2; every later one
 * a flush error, and all of @ids must be there.
 */
static void check_order(const struct ibv_wc *wc, int got, uint64_t first_id,
			enum ibv_wc_status ok1, enum ibv_wc_status ok2,
			const uint64_t *ids, int nids, struct seen *s)
{
	int i, j, found;

	s->ok = 0;
	if (got < 1 + nids) {
		snprintf(s->why, sizeof(s->why), "%d completions of %d", got,
			 1 + nids);
		return;
	}
	if (wc[0].wr_id != first_id ||
	    (wc[0].status != ok1 && wc[0].status != ok2)) {
		snprintf(s->why, sizeof(s->why),
			 "first: wr_id %llu %s (want %llu %s)",
			 (unsigned long long)wc[0].wr_id, st(wc[0].status),
			 (unsigned long long)first_id, st(ok1));
		return;
	}
	for (i = 1; i < got; i++)
		if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
			snprintf(s->why, sizeof(s->why),
				 "completion %d: wr_id %llu %s", i,
				 (unsigned long long)wc[i].wr_id,
				 st(wc[i].status));
			return;
		}
	for (j = 0; j < nids; j++) {
		for (found = 0, i = 1; i < got; i++)
			found |= wc[i].wr_id == ids[j];
		if (!found) {
			snprintf(s->why, sizeof(s->why), "no flush of wr_id %llu",
				 (unsigned long long)ids[j]);
			return;
		}
	}
	s->ok = 1;
	snprintf(s->why, sizeof(s->why), "%s first, then %d flushed",
		 st(wc[0].status), got - 1);
}

/* The server's completions, once the client has seen its own. */
static void server_check(struct env *e, struct end *x, enum bad_kind kind,
			 struct seen *s)
{
	static const uint64_t good[] = { SERVER_GOOD };
	const struct bad_case *c = &cases[kind];
	struct ibv_wc wc[4];
	int got;

	if (c->server < 0) {
		got = reap(x->cq, wc, 1, 1);
		s->ok = !got;
		snprintf(s->why, sizeof(s->why), "%d completions", got);
		return;
	}
	got = reap(x->cq, wc, 2, 10);
	if (c->server) {
		check_order(wc, got, SERVER_BAD, c->server,
			    e->rxe ? c->server_rxe : c->server, good, 1, s);
		return;
	}
	/* No receive WQE at fault: both receives flushed. */
	s->ok = got == 2 && wc[0].status == IBV_WC_WR_FLUSH_ERR &&
		wc[1].status == IBV_WC_WR_FLUSH_ERR &&
		wc[0].wr_id == SERVER_BAD && wc[1].wr_id == SERVER_GOOD;
	snprintf(s->why, sizeof(s->why), "%d completions, %s", got,
		 s->ok ? "both flushed in order" : "not both flushed in order");
}

/*
 * The QP went to ERR on the device's own (the provider's state of it is
 * still RTS): a receive and a SEND posted now complete flushed, each.
 */
static void client_post_late(struct env *e, struct end *x,
			     const struct bad_case *c)
{
	struct ibv_wc wc[4];
	int got = 0, flushed = 0, i, ok;

	if (e->rxe) {
		tap_skip("%s: client: posts after the error (vroce only)",
			 c->name);
		return;
	}
	ok = !post_recv(x->qp, CLIENT_LATE_RECV, e->buf + 2 * SLOT, SLOT,
			e->mr->lkey) &&
	     !post_send(e, x->qp, CLIENT_LATE_SEND, IBV_WR_SEND, MSG);
	if (ok)
		got = reap(x->cq, wc, 2, 5);
	for (i = 0; i < got; i++)
		flushed += wc[i].status == IBV_WC_WR_FLUSH_ERR &&
			   (wc[i].wr_id == CLIENT_LATE_RECV ||
			    wc[i].wr_id == CLIENT_LATE_SEND);
	tap_ok(ok && got == 2 && flushed == 2 &&
	       wc[0].wr_id != wc[1].wr_id,
	       "%s: client: a receive and a SEND posted after the error: %d of 2 flushed",
	       c->name, flushed);
}

/* The client's requests and completions; TAP lines. */
static void client_run(struct env *e, struct end *x, enum bad_kind kind)
{
	static const uint64_t flushed[] = { CLIENT_RECV, CLIENT_GOOD };
	const struct bad_case *c = &cases[kind];
	struct ibv_wc wc[8];
	struct seen s;
	int ok;

	ok = !post_recv(x->qp, CLIENT_RECV, e->buf + 2 * SLOT, SLOT,
			e->mr->lkey) &&
	     !post_send(e, x->qp, CLIENT_BAD, c->op, c->len) &&
	     !post_send(e, x->qp, CLIENT_GOOD, IBV_WR_SEND, MSG);
	tap_ok(ok, "%s: client's receive, bad request and SEND posted",
	       c->name);
	check_order(wc, reap(x->cq, wc, 3, 20), CLIENT_BAD, c->client,
		    e->peer_rxe ? c->client_rxe : c->client, flushed, 2, &s);
	tap_ok(s.ok, "%s: client: %s", c->name, s.why);
	if (s.ok)
		client_post_late(e, x, c);
}

/* Both ends in this process, on one device. */
static void run_local(struct env *e, enum bad_kind kind)
{
	struct end c = { 0 }, sv = { 0 };
	struct seen s;
	int ok;

	ok = !end_create(e, &c) &&
	     !server_prepare(e, &sv, kind, c.qp->qp_num, &e->my_gid) &&
	     !end_connect(e, &c, sv.qp->qp_num, &e->my_gid);
	if (tap_ok(ok, "%s: pair connected, server's receives posted",
		   cases[kind].name)) {
		client_run(e, &c, kind);
		server_check(e, &sv, kind, &s);
		tap_ok(s.ok, "%s: server: %s", cases[kind].name, s.why);
	}
	end_destroy(&c);
	end_destroy(&sv);
}

/* ---- across two hosts: one exchange per case ------------------------ */

enum { M_CASE = 1, M_CHECK, M_QUIT };

/* The server's end of one case; answers with its QPN and its verdict. */
static int serve_case(struct env *e, int fd, struct xchg_msg *m)
{
	enum bad_kind kind = (enum bad_kind)m->v[1];
	union ibv_gid dgid;
	struct end x = { 0 };
	struct seen s;
	int err;

	memcpy(dgid.raw, m->gid, sizeof(dgid.raw));
	err = kind >= BAD_N ? -1 :
	      server_prepare(e, &x, kind, (uint32_t)m->v[2], &dgid);
	memset(m, 0, sizeof(*m));
	/* rdma_rxe of Linux 6.1 has no rereg_mr: those cases are skipped. */
	m->v[0] = err ? 1 : 0;
	if (err == -2 && e->rxe && (kind == BAD_PD || kind == BAD_XLAT))
		m->v[0] = 2;
	m->v[1] = x.qp ? x.qp->qp_num : 0;
	m->v[2] = e->rxe;
	memcpy(m->gid, e->my_gid.raw, sizeof(m->gid));
	if (xchg_send(fd, m) || err) {
		err = err == -2 && m->v[0] == 2 ? 0 : -1;
		goto out;
	}
	if (xchg_recv(fd, m, 60000) || m->v[0] != M_CHECK) {
		err = -1;
		goto out;
	}
	server_check(e, &x, kind, &s);
	memset(m, 0, sizeof(*m));
	m->v[0] = s.ok;
	memcpy(m->v + 1, s.why, sizeof(s.why) < 15 * 8 ? sizeof(s.why) : 15 * 8);
	err = xchg_send(fd, m);
out:
	end_destroy(&x);
	return err;
}

static int server(struct env *e, int port)
{
	struct xchg_msg m;
	int fd, err = 0;

	fd = xchg_serve(port, 120000);
	if (fd < 0) {
		perror("err_order: no client");
		return 1;
	}
	while (!err) {
		if (xchg_recv(fd, &m, 120000))
			err = 1;
		else if (m.v[0] == M_QUIT)
			break;
		else if (m.v[0] != M_CASE || serve_case(e, fd, &m))
			err = 1;
	}
	close(fd);
	printf("%s\n", err ? "failed" : "done");
	return err;
}

/* The client's end of one case, the server's verdict relayed. */
static void drive_case(struct env *e, int fd, enum bad_kind kind)
{
	struct xchg_msg m = { .v = { M_CASE, kind } };
	struct end x = { 0 };
	union ibv_gid dgid;
	char why[15 * 8 + 1];
	int ok;

	ok = !end_create(e, &x);
	m.v[2] = ok ? x.qp->qp_num : 0;
	memcpy(m.gid, e->my_gid.raw, sizeof(m.gid));
	ok = ok && !xchg_send(fd, &m) && !xchg_recv(fd, &m, 30000);
	if (ok && m.v[0] == 2) {
		tap_skip("%s: the server's rdma_rxe cannot re-register an MR",
			 cases[kind].name);
		end_destroy(&x);
		return;
	}
	ok = ok && !m.v[0];
	e->peer_rxe = (int)m.v[2];
	memcpy(dgid.raw, m.gid, sizeof(dgid.raw));
	ok = ok && !end_connect(e, &x, (uint32_t)m.v[1], &dgid);
	if (tap_ok(ok, "%s: pair connected, server's receives posted",
		   cases[kind].name)) {
		client_run(e, &x, kind);
		memset(&m, 0, sizeof(m));
		m.v[0] = M_CHECK;
		ok = !xchg_send(fd, &m) && !xchg_recv(fd, &m, 30000);
		memcpy(why, m.v + 1, sizeof(why) - 1);
		why[sizeof(why) - 1] = 0;
		tap_ok(ok && m.v[0], "%s: server: %s", cases[kind].name,
		       ok ? why : "no answer");
	}
	end_destroy(&x);
}

static void client(struct env *e, const char *peer, int port)
{
	struct xchg_msg m = { .v = { M_QUIT } };
	int fd, kind;

	fd = xchg_connect(peer, port, 15000);
	if (!tap_ok(fd >= 0, "connect to the server at %s port %d", peer,
		    port))
		return;
	for (kind = BAD_DEREG; kind < BAD_N; kind++)
		drive_case(e, fd, kind);
	xchg_send(fd, &m);
	close(fd);
}

static int env_open(struct env *e, const char *dev, int gid)
{
	size_t len = 3 * SLOT;

	e->ctx = open_by_name(dev);
	if (!e->ctx)
		return -1;
	e->rxe = !strncmp(ibv_get_device_name(e->ctx->device), "rxe", 3);
	e->peer_rxe = e->rxe;
	e->gid = gid >= 0 ? gid : roce_v2_ipv4_gid(e->ctx);
	e->pd = ibv_alloc_pd(e->ctx);
	e->pd2 = ibv_alloc_pd(e->ctx);
	e->buf = calloc(1, len);
	e->rbuf = calloc(1, SLOT);
	e->rbuf2 = calloc(1, SLOT);
	if (e->gid < 0 || !e->pd || !e->pd2 || !e->buf || !e->rbuf ||
	    !e->rbuf2 || ibv_query_gid(e->ctx, 1, e->gid, &e->my_gid))
		return -1;
	e->mr = ibv_reg_mr(e->pd, e->buf, len, IBV_ACCESS_LOCAL_WRITE);
	return e->mr ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct pair_args a = { .dev = "vroce0", .gid = -1, .port = 18700 };
	struct env e = { 0 };
	int kind;

	if (pair_args_parse(argc, argv,
			    "err_order -d DEV [-g GIDIDX] [-p PORT] [-s | PEER]",
			    &a))
		return 2;
	if (env_open(&e, a.dev, a.gid)) {
		fprintf(stderr, "err_order: cannot set up %s: %s\n", a.dev,
			strerror(errno));
		if (a.srv)
			return 1;
		tap_ok(0, "%s: device, two PDs, MR", a.dev);
		return tap_done();
	}
	if (a.srv)
		return server(&e, a.port);
	tap_ok(1, "%s: device, two PDs, MR", a.dev);
	if (a.peer)
		client(&e, a.peer, a.port);
	else
		for (kind = BAD_DEREG; kind < BAD_N; kind++)
			run_local(&e, kind);
	return tap_done();
}
