// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * XRC between two hosts, the data checked at both ends. The server has
 * two XRC domains: SRQs A and B (each with its own CQ) and a target QP
 * in the first, SRQ C in the second. The client's initiator QP talks to
 * that target QP:
 *
 *   send    SENDs of 3000, 100 and 1025 bytes into SRQ A, B and A: each
 *           lands in the receive of the SRQ it names and completes on
 *           that SRQ's CQ, for the target QP
 *   rdma    RDMA WRITE of 5000 bytes, RDMA READ of 3000 and a fetch and
 *           add, checked against the server's memory (the PD of the
 *           SRQs)
 *   wr_api  a SEND with immediate data into SRQ B through the ibv_wr_*
 *           API (ibv_wr_set_xrc_srqn)
 *   domain  a SEND naming SRQ C, of the other domain: the client's
 *           completion is a remote invalid request error
 *
 *   xrc_wire -d DEV -g GIDIDX [-p PORT] -s        server
 *   xrc_wire -d DEV -g GIDIDX [-p PORT] PEER      client (TAP)
 *
 * Copyright (c) 2026 the vroce developers
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"
#include "rc_connect.h"
#include "wire_test.h"
#include "pair_args.h"
#include "xchg.h"
#include "pattern.h"

#define BUF		(128 * 1024)
#define RECV_OFF	32768		/* the server's receives */
#define RECV_LEN	4096
#define NRECV		4
#define WRITE_OFF	8192
#define READ_OFF	16384
#define ATOMIC_OFF	24576
#define ADD		0x1234

enum { SRQ_A, SRQ_B, SRQ_C, NSRQ };
enum { C_OPEN = 1, C_CHECK, C_QUIT };
enum test { T_SEND, T_RDMA, T_WR_API, T_DOMAIN, T_N };

static const char *const test_name[T_N] = {
	"XRC SENDs into two SRQs", "XRC RDMA WRITE, READ and fetch and add",
	"XRC SEND with immediate through ibv_wr_set_xrc_srqn",
	"XRC SEND naming an SRQ of another domain",
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_xrcd *xrcd[2];
	struct ibv_cq *cq[NSRQ];	/* server: one a SRQ; client: [0] */
	struct ibv_srq *srq[NSRQ];
	struct ibv_qp *qp;		/* target (server), initiator (client) */
	struct ibv_mr *mr;
	uint8_t *buf;
	int gid;
	union ibv_gid my_gid;
	char why[120];
} n;

#define WHY(...) snprintf(n.why, sizeof(n.why), __VA_ARGS__)

/* One completion of @cq within 10 s; 0 if one came. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return wire_poll(cq, wc, 10000);
}

/*
 * RESET -> INIT -> RTR towards the peer's QP @dqpn (PSNs 0), and on to
 * RTS for the initiator: a target only receives.
 */
static int qp_connect(uint32_t dqpn, const uint8_t *gid)
{
	int tgt = n.qp->qp_type == IBV_QPT_XRC_RECV;
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	struct ibv_qp_attr a;

	if (qp_to_init(n.qp, tgt ? IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC : 0))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	memcpy(a.ah_attr.grh.dgid.raw, gid, 16);
	a.ah_attr.grh.sgid_index = n.gid;
	a.ah_attr.grh.hop_limit = 64;
	if (tgt) {
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (ibv_modify_qp(n.qp, &a, mask))
		return -1;
	if (tgt)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(n.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* ---- server ---------------------------------------------------------- */

static int srv_srq(int i)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.pd = n.pd,
	};
	struct ibv_sge sge = { .length = RECV_LEN, .lkey = n.mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int k;

	n.cq[i] = ibv_create_cq(n.ctx, 16, NULL, NULL, 0);
	if (!n.cq[i])
		return -1;
	sa.cq = n.cq[i];
	sa.xrcd = n.xrcd[i == SRQ_C];
	n.srq[i] = ibv_create_srq_ex(n.ctx, &sa);
	if (!n.srq[i])
		return -1;
	for (k = 0; k < NRECV; k++) {
		wr.wr_id = i * 10 + k;
		sge.addr = (uintptr_t)(n.buf + RECV_OFF +
				       (i * NRECV + k) * RECV_LEN);
		if (ibv_post_srq_recv(n.srq[i], &wr, &bad))
			return -1;
	}
	return 0;
}

/* The server's objects, its target QP connected to the client's QP. */
static int srv_open(const struct xchg_msg *m)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	int i;

	for (i = 0; i < 2; i++) {
		n.xrcd[i] = ibv_open_xrcd(n.ctx, &xa);
		if (!n.xrcd[i])
			return -1;
	}
	for (i = 0; i < NSRQ; i++)
		if (srv_srq(i))
			return -1;
	qa.xrcd = n.xrcd[0];
	n.qp = ibv_create_qp_ex(n.ctx, &qa);
	if (!n.qp)
		return -1;
	fill(n.buf + READ_OFF, 3000, 4);
	memset(n.buf + ATOMIC_OFF, 0x11, 8);
	return qp_connect((uint32_t)m->v[1], m->gid);
}

/* The next receive of SRQ @i: receive @k, @len bytes of @seed. */
static int srv_recv(int i, int k, uint32_t len, unsigned int seed, int imm)
{
	const uint8_t *p = n.buf + RECV_OFF + (i * NRECV + k) * RECV_LEN;
	struct ibv_wc wc;

	if (poll_one(n.cq[i], &wc)) {
		WHY("SRQ %c: no completion", 'A' + i);
		return 0;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)(i * 10 + k) ||
	    wc.byte_len != len || wc.qp_num != n.qp->qp_num ||
	    !!(wc.wc_flags & IBV_WC_WITH_IMM) != imm ||
	    (imm && ntohl(wc.imm_data) != 0xabcd)) {
		WHY("SRQ %c: %s wr_id %llu len %u qp %u flags %x", 'A' + i,
		    ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id,
		    wc.byte_len, wc.qp_num, wc.wc_flags);
		return 0;
	}
	if (!same(p, len, seed)) {
		WHY("SRQ %c receive %d: data differs", 'A' + i, k);
		return 0;
	}
	return 1;
}

static int srv_check(enum test t)
{
	uint64_t v;

	n.why[0] = 0;
	switch (t) {
	case T_SEND:
		return srv_recv(SRQ_A, 0, 3000, 1, 0) &&
		       srv_recv(SRQ_B, 0, 100, 2, 0) &&
		       srv_recv(SRQ_A, 1, 1025, 3, 0);
	case T_RDMA:
		memcpy(&v, n.buf + ATOMIC_OFF, 8);
		if (!same(n.buf + WRITE_OFF, 5000, 5)) {
			WHY("RDMA WRITE: data differs");
			return 0;
		}
		if (v != 0x1111111111111111ULL + ADD) {
			WHY("fetch and add: %#llx", (unsigned long long)v);
			return 0;
		}
		return 1;
	case T_WR_API:
		return srv_recv(SRQ_B, 1, 2000, 6, 1);
	default:
		WHY("no such check");
		return 0;
	}
}

/* The answer to one of the client's messages (xchg_serve_loop()). */
static void srv_answer(struct xchg_msg *m)
{
	int st, i;

	n.why[0] = 0;
	if (m->v[0] == C_OPEN) {
		st = !srv_open(m);
		if (!st)
			WHY("server setup: %s", strerror(errno));
	} else {
		st = srv_check((enum test)m->v[1]);
	}
	memset(m, 0, sizeof(*m));
	m->v[0] = st;
	m->v[1] = n.qp ? n.qp->qp_num : 0;
	for (i = 0; i < NSRQ; i++)
		if (n.srq[i])
			ibv_get_srq_num(n.srq[i], (uint32_t *)&m->v[2 + i]);
	m->v[5] = n.mr->rkey;
	m->v[6] = (uintptr_t)n.buf;
	memcpy(m->v + 7, n.why, 64);
	memcpy(m->gid, n.my_gid.raw, sizeof(m->gid));
}

static int server(int port)
{
	if (xchg_serve_loop(port, C_QUIT, srv_answer))
		return 1;
	printf("done\n");
	return 0;
}

/* ---- client ---------------------------------------------------------- */

static struct {
	int fd;
	uint32_t qpn, srqn[NSRQ], rkey;
	uint64_t addr;
	char why[65];
} peer;

static int ask(uint64_t cmd, enum test t)
{
	struct xchg_msg m = { .v = { cmd, t } };
	int i;

	if (cmd == C_OPEN) {
		m.v[1] = n.qp->qp_num;
		memcpy(m.gid, n.my_gid.raw, sizeof(m.gid));
	}
	if (wire_ask(peer.fd, &m, peer.why, sizeof(peer.why)))
		return 0;
	peer.qpn = (uint32_t)m.v[1];
	for (i = 0; i < NSRQ; i++)
		peer.srqn[i] = (uint32_t)m.v[2 + i];
	peer.rkey = (uint32_t)m.v[5];
	peer.addr = m.v[6];
	if (cmd == C_OPEN && m.v[0] && qp_connect(peer.qpn, m.gid)) {
		snprintf(peer.why, sizeof(peer.why), "client connect: %s",
			 strerror(errno));
		return 0;
	}
	return (int)m.v[0];
}

/* The next completion must be @status for @id. */
static int expect(uint64_t id, enum ibv_wc_status status, const char *what)
{
	return wire_expect(n.cq[0], 10000, id, status, what, n.why,
			   sizeof(n.why));
}

static int post(uint64_t id, enum ibv_wr_opcode op, int srq, uint32_t off,
		uint32_t len, uint64_t raddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(n.buf + off), .length = len,
		.lkey = n.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.qp_type.xrc.remote_srqn = peer.srqn[srq];
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = peer.rkey;
		wr.wr.atomic.compare_add = ADD;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = peer.rkey;
	}
	return ibv_post_send(n.qp, &wr, &bad);
}

static int run_send(void)
{
	fill(n.buf, 3000, 1);
	fill(n.buf + 4096, 100, 2);
	fill(n.buf + 8192, 1025, 3);
	return !post(1, IBV_WR_SEND, SRQ_A, 0, 3000, 0) &&
	       !post(2, IBV_WR_SEND, SRQ_B, 4096, 100, 0) &&
	       !post(3, IBV_WR_SEND, SRQ_A, 8192, 1025, 0) &&
	       expect(1, IBV_WC_SUCCESS, "SEND to A") &&
	       expect(2, IBV_WC_SUCCESS, "SEND to B") &&
	       expect(3, IBV_WC_SUCCESS, "SEND to A");
}

static int run_rdma(void)
{
	uint64_t v;

	fill(n.buf, 5000, 5);
	memset(n.buf + READ_OFF, 0, 3000);
	if (post(1, IBV_WR_RDMA_WRITE, SRQ_A, 0, 5000, peer.addr + WRITE_OFF) ||
	    post(2, IBV_WR_RDMA_READ, SRQ_B, READ_OFF, 3000,
		 peer.addr + READ_OFF) ||
	    post(3, IBV_WR_ATOMIC_FETCH_AND_ADD, SRQ_A, ATOMIC_OFF, 8,
		 peer.addr + ATOMIC_OFF) ||
	    !expect(1, IBV_WC_SUCCESS, "RDMA WRITE") ||
	    !expect(2, IBV_WC_SUCCESS, "RDMA READ") ||
	    !expect(3, IBV_WC_SUCCESS, "fetch and add"))
		return 0;
	memcpy(&v, n.buf + ATOMIC_OFF, 8);
	if (!same(n.buf + READ_OFF, 3000, 4)) {
		WHY("RDMA READ: data differs");
		return 0;
	}
	if (v != 0x1111111111111111ULL) {
		WHY("fetch and add returned %#llx", (unsigned long long)v);
		return 0;
	}
	return 1;
}

static int run_wr_api(void)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(n.qp);

	if (!qx) {
		WHY("ibv_qp_to_qp_ex: NULL");
		return 0;
	}
	fill(n.buf, 2000, 6);
	ibv_wr_start(qx);
	qx->wr_id = 4;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(qx, htonl(0xabcd));
	ibv_wr_set_xrc_srqn(qx, peer.srqn[SRQ_B]);
	ibv_wr_set_sge(qx, n.mr->lkey, (uintptr_t)n.buf, 2000);
	if (ibv_wr_complete(qx)) {
		WHY("ibv_wr_complete: %s", strerror(errno));
		return 0;
	}
	return expect(4, IBV_WC_SUCCESS, "SEND with immediate to B");
}

static int run_domain(void)
{
	return !post(5, IBV_WR_SEND, SRQ_C, 0, 64, 0) &&
	       expect(5, IBV_WC_REM_INV_REQ_ERR, "SEND to C");
}

static void drive(enum test t)
{
	int ok;

	n.why[0] = 0;
	switch (t) {
	case T_SEND:
		ok = run_send();
		break;
	case T_RDMA:
		ok = run_rdma();
		break;
	case T_WR_API:
		ok = run_wr_api();
		break;
	default:
		ok = run_domain();
		break;
	}
	tap_ok(ok, "%s: client side %s", test_name[t], n.why);
	if (!ok || t == T_DOMAIN)
		return;
	ok = ask(C_CHECK, t);
	tap_ok(ok, "%s: server side %s", test_name[t], peer.why);
}

static int client_qp(void)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM,
		.pd = n.pd,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
	};

	n.cq[0] = ibv_create_cq(n.ctx, 16, NULL, NULL, 0);
	if (!n.cq[0])
		return -1;
	qa.send_cq = n.cq[0];
	qa.recv_cq = n.cq[0];
	n.qp = ibv_create_qp_ex(n.ctx, &qa);
	return n.qp ? 0 : -1;
}

static int client(const char *host, int port)
{
	int t, ok;

	peer.fd = xchg_connect(host, port, 15000);
	if (!tap_ok(peer.fd >= 0, "connect to the server at %s port %d",
		    host, port))
		return tap_done();
	ok = !client_qp();
	if (!tap_ok(ok && ask(C_OPEN, 0), "XRC initiator and target connected %s",
		    ok ? peer.why : strerror(errno)))
		return tap_done();
	for (t = 0; t < T_N; t++)
		drive((enum test)t);
	ask(C_QUIT, 0);
	close(peer.fd);
	return tap_done();
}

static int setup(const char *dev, int gid)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	n.ctx = open_by_name(dev);
	if (!n.ctx)
		return -1;
	n.gid = gid;
	n.pd = ibv_alloc_pd(n.ctx);
	n.buf = aligned_alloc(4096, BUF);
	if (!n.pd || !n.buf || ibv_query_gid(n.ctx, 1, n.gid, &n.my_gid))
		return -1;
	memset(n.buf, 0, BUF);
	n.mr = ibv_reg_mr(n.pd, n.buf, BUF, acc);
	return n.mr ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct pair_prog prog = {
		.name = "xrc_wire", .objects = "PD, MR", .port = 18810,
		.setup = setup, .server = server, .client = client,
	};

	return pair_main(argc, argv, &prog);
}
