// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Verbs between two hosts that the other wire tests do not reach, each
 * on fresh QPs, the data checked at the far end:
 *
 *   uc        UC SEND of three packets and RDMA WRITE of five
 *   fence     RDMA READ, then a SEND with IBV_SEND_FENCE of the buffer the
 *             READ fills: the SEND carries what the READ fetched
 *   solicited a CQ armed with ibv_req_notify_cq(solicited_only = 1): a
 *             plain SEND raises no event, a SEND with IBV_SEND_SOLICITED
 *             does
 *   mw1       a type 1 window bound with ibv_bind_mw(): RDMA WRITE into it
 *             lands; one byte past it fails with a remote access error
 *   local_inv a type 2 window bound with IBV_WR_BIND_MW, then invalidated
 *             with IBV_WR_LOCAL_INV: WRITE works before, fails after
 *   srq       RC SENDs of sizes 1 B to 3 KiB into the receives of an SRQ
 *
 *   verbs_wire -d DEV -g GIDIDX [-p PORT] -s        server
 *   verbs_wire -d DEV -g GIDIDX [-p PORT] PEER      client (TAP)
 *
 * Copyright (c) 2026 the vroce developers
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"
#include "rc_connect.h"
#include "wire_test.h"
#include "pair_args.h"
#include "xchg.h"
#include "pattern.h"

#define BUF		(64 * 1024)
#define WIN_OFF		16384		/* the memory windows */
#define WIN_LEN		4096
#define RECV_OFF	32768		/* the server's receives */
#define RECV_LEN	4096
#define NRECV		8

enum test { T_UC, T_FENCE, T_SOLICITED, T_MW1, T_LOCAL_INV, T_SRQ, T_N };

static const char *const test_name[T_N] = {
	"UC SEND and RDMA WRITE", "IBV_SEND_FENCE after RDMA READ",
	"IBV_SEND_SOLICITED and solicited-only CQ events",
	"type 1 memory window (ibv_bind_mw)",
	"IBV_WR_LOCAL_INV of a type 2 window", "RC over an SRQ",
};

enum { C_OPEN = 1, C_CHECK, C_QUIT };

/* One end's device, memory and the current test's objects. */
static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mw *mw;
	struct ibv_mr *mr;
	uint8_t *buf;
	int gid;
	union ibv_gid my_gid;
	uint32_t rkey;			/* what the client is to use */
	char why[120];
} n;

#define WHY(...) snprintf(n.why, sizeof(n.why), __VA_ARGS__)

static void objects_free(void)
{
	if (n.qp)
		ibv_destroy_qp(n.qp);
	if (n.mw)
		ibv_dealloc_mw(n.mw);
	if (n.srq)
		ibv_destroy_srq(n.srq);
	if (n.cq)
		ibv_destroy_cq(n.cq);
	n.qp = NULL;
	n.mw = NULL;
	n.srq = NULL;
	n.cq = NULL;
}

/* A fresh CQ (on the completion channel) and QP of @type, maybe on an SRQ. */
static int objects_new(enum ibv_qp_type type, int with_srq)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};

	n.cq = ibv_create_cq(n.ctx, 64, NULL, n.ch, 0);
	if (!n.cq)
		return -1;
	if (with_srq) {
		n.srq = ibv_create_srq(n.pd, &sa);
		if (!n.srq)
			return -1;
		ia.srq = n.srq;
	}
	ia.send_cq = n.cq;
	ia.recv_cq = n.cq;
	n.qp = ibv_create_qp(n.pd, &ia);
	return n.qp ? 0 : -1;
}

static int qp_connect(uint32_t dqpn, const uint8_t *gid)
{
	/* UC takes no atomics, retries or read credits: rc_connect() knows. */
	return wire_connect(n.qp, n.gid, dqpn, gid);
}

static int post_recv(unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(n.buf + RECV_OFF + (i % NRECV) * RECV_LEN),
		.length = RECV_LEN, .lkey = n.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (n.srq)
		return ibv_post_srq_recv(n.srq, &wr, &bad);
	return ibv_post_recv(n.qp, &wr, &bad);
}

/* Polls for one completion within @ms; 0 if one came. */
static int poll_one(struct ibv_wc *wc, int ms)
{
	return wire_poll(n.cq, wc, ms);
}

/* The next completion must be @status for @id; records why not. */
static int expect(uint64_t id, enum ibv_wc_status status, const char *what)
{
	return wire_expect(n.cq, 10000, id, status, what, n.why, sizeof(n.why));
}

/* Waits up to @ms for a CQ event on the channel; 1 if one came. */
static int cq_event(int ms)
{
	struct pollfd p = { .fd = n.ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;

	if (poll(&p, 1, ms) != 1)
		return 0;
	if (ibv_get_cq_event(n.ch, &cq, &ctx))
		return 0;
	ibv_ack_cq_events(cq, 1);
	return 1;
}

/* ---- server ---------------------------------------------------------- */

static int bind_type1(void)
{
	struct ibv_mw_bind mb = {
		.wr_id = 77, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = n.mr, .addr = (uintptr_t)(n.buf + WIN_OFF),
			.length = WIN_LEN,
			.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
		},
	};

	n.mw = ibv_alloc_mw(n.pd, IBV_MW_TYPE_1);
	if (!n.mw || ibv_bind_mw(n.qp, n.mw, &mb))
		return -1;
	if (!expect(77, IBV_WC_SUCCESS, "bind_mw"))
		return -1;
	n.rkey = n.mw->rkey;
	return 0;
}

static int bind_type2(void)
{
	struct ibv_send_wr wr = {
		.wr_id = 78, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	n.mw = ibv_alloc_mw(n.pd, IBV_MW_TYPE_2);
	if (!n.mw)
		return -1;
	n.rkey = ibv_inc_rkey(n.mw->rkey);
	wr.bind_mw.mw = n.mw;
	wr.bind_mw.rkey = n.rkey;
	wr.bind_mw.bind_info.mr = n.mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)(n.buf + WIN_OFF);
	wr.bind_mw.bind_info.length = WIN_LEN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_post_send(n.qp, &wr, &bad))
		return -1;
	return expect(78, IBV_WC_SUCCESS, "IBV_WR_BIND_MW") ? 0 : -1;
}

static int local_inv(void)
{
	struct ibv_send_wr wr = {
		.wr_id = 79, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = n.rkey,
	}, *bad;

	if (ibv_post_send(n.qp, &wr, &bad))
		return -1;
	return expect(79, IBV_WC_SUCCESS, "IBV_WR_LOCAL_INV") ? 0 : -1;
}

/* A test's server objects, connected; receives posted, window bound. */
static int srv_open(enum test t, struct xchg_msg *m)
{
	unsigned int i;

	objects_free();
	memset(n.buf, 0, BUF);
	if (objects_new(t == T_UC ? IBV_QPT_UC : IBV_QPT_RC, t == T_SRQ) ||
	    qp_connect((uint32_t)m->v[2], m->gid))
		return -1;
	for (i = 0; i < NRECV; i++)
		if (post_recv(i))
			return -1;
	n.rkey = n.mr->rkey;
	if (t == T_FENCE)
		fill(n.buf, 2048, 5);
	if (t == T_SOLICITED && ibv_req_notify_cq(n.cq, 1))
		return -1;
	if (t == T_MW1 && bind_type1())
		return -1;
	if (t == T_LOCAL_INV && bind_type2())
		return -1;
	return 0;
}

/* Checks @len bytes of receive @i of @seed, completed as @id. */
static int srv_recv(uint64_t id, uint32_t len, unsigned int seed)
{
	struct ibv_wc wc;

	if (poll_one(&wc, 10000)) {
		WHY("receive %llu: no completion", (unsigned long long)id);
		return 0;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.wr_id != id || wc.byte_len != len ||
	    wc.qp_num != n.qp->qp_num) {
		WHY("receive %llu: %s opcode %d wr_id %llu len %u qp %u",
		    (unsigned long long)id, ibv_wc_status_str(wc.status),
		    wc.opcode, (unsigned long long)wc.wr_id, wc.byte_len,
		    wc.qp_num);
		return 0;
	}
	if (!same(n.buf + RECV_OFF + (id % NRECV) * RECV_LEN, len, seed)) {
		WHY("receive %llu: data differs", (unsigned long long)id);
		return 0;
	}
	return 1;
}

static const uint32_t srq_len[] = { 1, 100, 1024, 1025, 2048, 3000, 7, 512 };

/* One check step @step of test @t; fills n.why, returns 1 if right. */
static int srv_check(enum test t, unsigned int step)
{
	unsigned int i;

	n.why[0] = 0;
	switch (t) {
	case T_UC:
		if (!srv_recv(0, 3000, 1))
			return 0;
		if (!same(n.buf + 8192, 5000, 2)) {
			WHY("UC RDMA WRITE: data differs");
			return 0;
		}
		return 1;
	case T_FENCE:
		return srv_recv(0, 2048, 5);
	case T_SOLICITED:
		if (step == 0) {
			if (cq_event(500)) {
				WHY("an event for an unsolicited SEND");
				return 0;
			}
			return srv_recv(0, 100, 3);
		}
		if (!cq_event(5000)) {
			WHY("no event for a solicited SEND");
			return 0;
		}
		return srv_recv(1, 100, 4);
	case T_MW1:
		if (!same(n.buf + WIN_OFF, WIN_LEN, 6)) {
			WHY("WRITE through the window: data differs");
			return 0;
		}
		return 1;
	case T_LOCAL_INV:
		if (!same(n.buf + WIN_OFF, WIN_LEN, 7)) {
			WHY("WRITE through the window: data differs");
			return 0;
		}
		return !local_inv();
	case T_SRQ:
		for (i = 0; i < NRECV; i++)
			if (!srv_recv(i, srq_len[i], 10 + i))
				return 0;
		return 1;
	default:
		WHY("no such test");
		return 0;
	}
}

/* The answer to one of the client's messages (xchg_serve_loop()). */
static void srv_answer(struct xchg_msg *m)
{
	int st;

	if (m->v[0] == C_OPEN) {
		n.why[0] = 0;
		st = srv_open((enum test)m->v[1], m) ? 0 : 1;
		if (!st && !n.why[0])
			WHY("server setup: %s", strerror(errno));
	} else {
		st = srv_check((enum test)m->v[1], (unsigned int)m->v[2]);
	}
	memset(m, 0, sizeof(*m));
	m->v[0] = st;
	m->v[1] = n.qp ? n.qp->qp_num : 0;
	m->v[2] = n.rkey;
	m->v[3] = (uintptr_t)n.buf;
	memcpy(m->v + 4, n.why, 88);
	m->v[15] = !strncmp(ibv_get_device_name(n.ctx->device), "rxe", 3);
	memcpy(m->gid, n.my_gid.raw, sizeof(m->gid));
}

static int server(int port)
{
	if (xchg_serve_loop(port, C_QUIT, srv_answer))
		return 1;
	objects_free();
	printf("done\n");
	return 0;
}

/* ---- client ---------------------------------------------------------- */

static struct {
	int fd;
	uint32_t qpn, rkey;
	uint64_t addr;
	char why[89];
	int rxe;			/* the server is rdma_rxe */
} peer;

/* Asks the server; returns its status word, its text in peer.why. */
static int ask(uint64_t cmd, enum test t, uint64_t arg)
{
	struct xchg_msg m = { .v = { cmd, t, arg } };

	if (cmd == C_OPEN) {
		m.v[2] = n.qp->qp_num;
		memcpy(m.gid, n.my_gid.raw, sizeof(m.gid));
	}
	if (xchg_send(peer.fd, &m) || xchg_recv(peer.fd, &m, 60000)) {
		snprintf(peer.why, sizeof(peer.why), "the server is gone");
		return 0;
	}
	peer.qpn = (uint32_t)m.v[1];
	peer.rkey = (uint32_t)m.v[2];
	peer.addr = m.v[3];
	memcpy(peer.why, m.v + 4, sizeof(peer.why) - 1);
	peer.why[sizeof(peer.why) - 1] = 0;
	peer.rxe = (int)m.v[15];
	if (cmd == C_OPEN && m.v[0] && qp_connect(peer.qpn, m.gid)) {
		snprintf(peer.why, sizeof(peer.why), "client connect: %s",
			 strerror(errno));
		return 0;
	}
	return (int)m.v[0];
}

static int post(uint64_t id, enum ibv_wr_opcode op, uint32_t off,
		uint32_t len, uint64_t raddr, unsigned int flags)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(n.buf + off), .length = len,
		.lkey = n.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED | flags,
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = peer.rkey;
	return ibv_post_send(n.qp, &wr, &bad);
}

static int run_uc(void)
{
	fill(n.buf, 3000, 1);
	fill(n.buf + 4096, 5000, 2);
	return !post(1, IBV_WR_SEND, 0, 3000, 0, 0) &&
	       !post(2, IBV_WR_RDMA_WRITE, 4096, 5000, peer.addr + 8192, 0) &&
	       expect(1, IBV_WC_SUCCESS, "UC SEND") &&
	       expect(2, IBV_WC_SUCCESS, "UC WRITE");
}

static int run_fence(void)
{
	memset(n.buf, 0, 2048);
	return !post(1, IBV_WR_RDMA_READ, 0, 2048, peer.addr, 0) &&
	       !post(2, IBV_WR_SEND, 0, 2048, 0, IBV_SEND_FENCE) &&
	       expect(1, IBV_WC_SUCCESS, "READ") &&
	       expect(2, IBV_WC_SUCCESS, "fenced SEND");
}

static int run_solicited(void)
{
	fill(n.buf, 100, 3);
	if (post(1, IBV_WR_SEND, 0, 100, 0, 0) ||
	    !expect(1, IBV_WC_SUCCESS, "SEND"))
		return 0;
	if (!ask(C_CHECK, T_SOLICITED, 0)) {
		snprintf(n.why, sizeof(n.why), "server: %s", peer.why);
		return 0;
	}
	fill(n.buf, 100, 4);
	return !post(2, IBV_WR_SEND, 0, 100, 0, IBV_SEND_SOLICITED) &&
	       expect(2, IBV_WC_SUCCESS, "solicited SEND");
}

static int run_window(enum test t)
{
	unsigned int seed = t == T_MW1 ? 6 : 7;

	fill(n.buf, WIN_LEN, seed);
	if (post(1, IBV_WR_RDMA_WRITE, 0, WIN_LEN, peer.addr + WIN_OFF, 0) ||
	    !expect(1, IBV_WC_SUCCESS, "WRITE into the window"))
		return 0;
	if (!ask(C_CHECK, t, 0)) {
		snprintf(n.why, sizeof(n.why), "server: %s", peer.why);
		return 0;
	}
	/*
	 * Past the window, or into the invalidated one: both refused.
	 * rdma_rxe of Linux 6.1 checks an access through a window against
	 * the bounds of the window's MR only: the WRITE past it goes through.
	 */
	if (t == T_MW1 && peer.rxe) {
		tap_diag("the server is rdma_rxe: no WRITE past the window");
		return 1;
	}
	if (t == T_MW1)
		return !post(2, IBV_WR_RDMA_WRITE, 0, 1,
			     peer.addr + WIN_OFF + WIN_LEN, 0) &&
		       expect(2, IBV_WC_REM_ACCESS_ERR, "WRITE past the window");
	return !post(2, IBV_WR_RDMA_WRITE, 0, 1, peer.addr + WIN_OFF, 0) &&
	       expect(2, IBV_WC_REM_ACCESS_ERR,
		      "WRITE into the invalidated window");
}

static int run_srq(void)
{
	unsigned int i;
	uint32_t off = 0;

	for (i = 0; i < NRECV; i++) {
		fill(n.buf + off, srq_len[i], 10 + i);
		if (post(i, IBV_WR_SEND, off, srq_len[i], 0, 0))
			return 0;
		off += 4096;
	}
	for (i = 0; i < NRECV; i++)
		if (!expect(i, IBV_WC_SUCCESS, "SEND"))
			return 0;
	return 1;
}

static void drive(enum test t)
{
	int ok;

	objects_free();
	n.why[0] = 0;
	ok = !objects_new(t == T_UC ? IBV_QPT_UC : IBV_QPT_RC, 0);
	if (!tap_ok(ok && ask(C_OPEN, t, 0), "%s: QPs connected %s",
		    test_name[t], ok ? peer.why : strerror(errno)))
		return;
	switch (t) {
	case T_UC:
		ok = run_uc();
		break;
	case T_FENCE:
		ok = run_fence();
		break;
	case T_SOLICITED:
		ok = run_solicited();
		break;
	case T_MW1:
	case T_LOCAL_INV:
		ok = run_window(t);
		break;
	default:
		ok = run_srq();
		break;
	}
	tap_ok(ok, "%s: client side %s", test_name[t], n.why);
	if (!ok)
		return;
	/* The window tests' last server check came before their last WRITE. */
	if (t == T_MW1 || t == T_LOCAL_INV)
		return;
	ok = ask(C_CHECK, t, 1);
	tap_ok(ok, "%s: server side %s", test_name[t], peer.why);
}

static int client(const char *host, int port)
{
	int t;

	peer.fd = xchg_connect(host, port, 15000);
	if (!tap_ok(peer.fd >= 0, "connect to the server at %s port %d",
		    host, port))
		return tap_done();
	for (t = 0; t < T_N; t++)
		drive((enum test)t);
	objects_free();
	ask(C_QUIT, 0, 0);
	close(peer.fd);
	return tap_done();
}

static int setup(const char *dev, int gid)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND;

	n.ctx = open_by_name(dev);
	if (!n.ctx)
		return -1;
	n.gid = gid;
	n.pd = ibv_alloc_pd(n.ctx);
	n.ch = ibv_create_comp_channel(n.ctx);
	n.buf = aligned_alloc(4096, BUF);
	if (!n.pd || !n.ch || !n.buf ||
	    ibv_query_gid(n.ctx, 1, n.gid, &n.my_gid))
		return -1;
	n.mr = ibv_reg_mr(n.pd, n.buf, BUF, acc);
	return n.mr ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct pair_prog prog = {
		.name = "verbs_wire", .objects = "PD, channel, MR", .port = 18800,
		.setup = setup, .server = server, .client = client,
	};

	return pair_main(argc, argv, &prog);
}
