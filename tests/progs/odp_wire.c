// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * On-demand paging between two hosts (IBV_ACCESS_ON_DEMAND). The server's
 * memory for its peer is an explicit ODP MR over an anonymous mapping,
 * never prefetched; the client's is an implicit ODP MR (the whole address
 * space) over a mapping of its own. Over one RC connection:
 *
 *   write       RDMA WRITE of 20000 bytes into pages the server never
 *               touched: the server faults them in behind RNR NAKs
 *   read        RDMA READ of 12000 bytes the server wrote, into client
 *               pages never touched: both ends fault
 *   atomic      fetch and add on the server's ODP MR
 *   send        a SEND of 10000 bytes into a receive on the server's MR
 *   inval-write the server drops the pages of the write (MADV_DONTNEED):
 *               a second WRITE lands in the new pages the server reads
 *   inval-read  the server drops the read's pages and writes anew: a
 *               READ brings the new bytes, not the pages of before
 *   prefetch    ibv_advise_mr(PREFETCH_WRITE, FLUSH) on fresh client
 *               pages, then a READ into them
 *   big-read    a READ of 6 MiB (more than one fault) from server pages
 *               the MR never saw into client pages never touched
 *   unmapped    an RDMA WRITE into a page of the server's MR that the
 *               server unmapped: a remote access error
 *
 * Before that the client checks the verbs on its own: the ODP
 * capabilities, and ibv_advise_mr's and ibv_reg_mr's refusals.
 *
 *   odp_wire -d DEV -g GIDIDX [-p PORT] -s        server
 *   odp_wire -d DEV -g GIDIDX [-p PORT] PEER      client (TAP)
 *
 * Copyright (c) 2026 the vroce developers
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"
#include "rc_connect.h"
#include "wire_test.h"
#include "pair_args.h"
#include "xchg.h"
#include "pattern.h"

#define BUF_LEN		(12 << 20)
#define WRITE_OFF	4100		/* not page aligned */
#define WRITE_LEN	20000
#define READ_OFF	65536
#define READ_LEN	12000
#define ATOMIC_OFF	98304
#define RECV_OFF	102400
#define SEND_LEN	10000
#define BIG_OFF		(4 << 20)
#define BIG_LEN		(6 << 20)	/* more than one fault's 4 MiB */
#define HOLE_OFF	(BUF_LEN - 8192)	/* the server unmaps this page */
#define ADD		0x1234
#define ODP		IBV_ACCESS_ON_DEMAND
#define ALL_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

enum { C_OPEN = 1, C_CHECK, C_PREP, C_QUIT };
enum test {
	T_WRITE, T_READ, T_ATOMIC, T_SEND, T_INVAL_WRITE, T_INVAL_READ,
	T_PREFETCH, T_BIG_READ, T_UNMAPPED, T_N
};

static const char *const test_name[T_N] = {
	"RDMA WRITE into untouched ODP pages",
	"RDMA READ from an ODP MR into untouched implicit ODP pages",
	"fetch and add on an ODP MR",
	"SEND into a receive on an ODP MR",
	"RDMA WRITE after the server dropped those pages",
	"RDMA READ after the server dropped and rewrote those pages",
	"RDMA READ into pages ibv_advise_mr prefetched",
	"RDMA READ of 6 MiB from cold ODP pages into cold ODP pages",
	"RDMA WRITE into a page the server unmapped",
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;		/* server: explicit; client: implicit */
	uint8_t *buf;
	int gid;
	union ibv_gid my_gid;
	char why[120];
} n;

#define WHY(...) snprintf(n.why, sizeof(n.why), __VA_ARGS__)

static int buf_holds(size_t off, size_t len, unsigned int seed)
{
	if (!same(n.buf + off, len, seed)) {
		WHY("[%zu, +%zu): data differs", off, len);
		return -1;
	}
	return 0;
}

static int buf_open(void)
{
	n.buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return n.buf == MAP_FAILED ? -1 : 0;
}

/* Gives pages [@off, + @len) of our buffer back: they read as zeros. */
static int buf_drop(size_t off, size_t len)
{
	size_t first = off & ~4095UL;

	return madvise(n.buf + first, off + len - first, MADV_DONTNEED);
}

static int qp_open(void)
{
	return wire_rc_open(n.ctx, n.pd, &n.cq, &n.qp);
}

static int qp_connect(uint32_t dqpn, const uint8_t *gid)
{
	return wire_connect(n.qp, n.gid, dqpn, gid);
}

/* ---- server ---------------------------------------------------------- */

static int srv_open(const struct xchg_msg *m)
{
	struct ibv_sge sge = { .length = SEND_LEN };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int err;

	if (buf_open() || qp_open())
		return -1;
	/* Written before the MR exists: in the process, not in the MR. */
	fill(n.buf + READ_OFF, READ_LEN, 2);
	fill(n.buf + BIG_OFF, BIG_LEN, 9);
	memcpy(n.buf + ATOMIC_OFF, &(uint64_t){ 0x1111111111111111ULL }, 8);
	n.mr = ibv_reg_mr(n.pd, n.buf, BUF_LEN, ALL_ACCESS | ODP);
	if (!n.mr)
		return -1;
	sge.addr = (uintptr_t)n.buf + RECV_OFF;
	sge.lkey = n.mr->lkey;
	if (qp_connect((uint32_t)m->v[1], m->gid))
		return -1;
	err = ibv_post_recv(n.qp, &wr, &bad);
	if (err)
		errno = err;
	return err ? -1 : 0;
}

/* What the server does before test @t: 0, or -1 with n.why set. */
static int srv_prep(enum test t)
{
	switch (t) {
	case T_INVAL_WRITE:
		if (buf_drop(WRITE_OFF, WRITE_LEN)) {
			WHY("madvise: %s", strerror(errno));
			return -1;
		}
		/* The process sees new, zeroed pages now. */
		if (n.buf[WRITE_OFF] || n.buf[WRITE_OFF + WRITE_LEN - 1]) {
			WHY("MADV_DONTNEED left data");
			return -1;
		}
		return 0;
	case T_INVAL_READ:
		if (buf_drop(READ_OFF, READ_LEN)) {
			WHY("madvise: %s", strerror(errno));
			return -1;
		}
		fill(n.buf + READ_OFF, READ_LEN, 6);
		return 0;
	case T_UNMAPPED:
		if (munmap(n.buf + HOLE_OFF, 4096)) {
			WHY("munmap: %s", strerror(errno));
			return -1;
		}
		return 0;
	default:
		return 0;
	}
}

static int srv_check(enum test t)
{
	struct ibv_wc wc;
	uint64_t v;

	switch (t) {
	case T_WRITE:
		return !buf_holds(WRITE_OFF, WRITE_LEN, 1);
	case T_INVAL_WRITE:
		return !buf_holds(WRITE_OFF, WRITE_LEN, 5);
	case T_ATOMIC:
		memcpy(&v, n.buf + ATOMIC_OFF, 8);
		if (v != 0x1111111111111111ULL + ADD) {
			WHY("fetch and add left %#llx", (unsigned long long)v);
			return 0;
		}
		return 1;
	case T_SEND:
		if (wire_poll(n.cq, &wc, 20000)) {
			WHY("no receive completion");
			return 0;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 7 ||
		    wc.byte_len != SEND_LEN) {
			WHY("receive: %s wr_id %llu len %u",
			    ibv_wc_status_str(wc.status),
			    (unsigned long long)wc.wr_id, wc.byte_len);
			return 0;
		}
		return !buf_holds(RECV_OFF, SEND_LEN, 3);
	default:
		return 1;
	}
}

/* The answer to one of the client's messages (xchg_serve_loop()). */
static void srv_answer(struct xchg_msg *m)
{
	int st;

	n.why[0] = 0;
	if (m->v[0] == C_OPEN) {
		st = !srv_open(m);
		if (!st)
			WHY("server setup: %s", strerror(errno));
	} else if (m->v[0] == C_PREP) {
		st = !srv_prep((enum test)m->v[1]);
	} else {
		st = srv_check((enum test)m->v[1]);
	}
	wire_answer(m, st, n.qp, n.why, &n.my_gid);
	m->v[2] = n.mr ? n.mr->rkey : 0;
	m->v[3] = (uintptr_t)n.buf;
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
	uint32_t qpn, rkey;
	uint64_t addr;
	char why[65];
} peer;

static int ask(uint64_t cmd, enum test t)
{
	struct xchg_msg m = { .v = { cmd, t } };

	if (cmd == C_OPEN) {
		m.v[1] = n.qp->qp_num;
		memcpy(m.gid, n.my_gid.raw, sizeof(m.gid));
	}
	if (wire_ask(peer.fd, &m, peer.why, sizeof(peer.why)))
		return 0;
	peer.qpn = (uint32_t)m.v[1];
	peer.rkey = (uint32_t)m.v[2];
	peer.addr = m.v[3];
	if (cmd == C_OPEN && m.v[0] && qp_connect(peer.qpn, m.gid)) {
		snprintf(peer.why, sizeof(peer.why), "client connect: %s",
			 strerror(errno));
		return 0;
	}
	return (int)m.v[0];
}

static int expect(uint64_t id, enum ibv_wc_status status, const char *what)
{
	return wire_expect(n.cq, 20000, id, status, what, n.why, sizeof(n.why));
}

/*
 * Work request @id: @op from [@off, + @len) of our buffer to offset
 * @roff of the server's MR.
 */
static int post(uint64_t id, enum ibv_wr_opcode op, size_t off,
		uint32_t len, uint64_t roff)
{
	struct ibv_sge sge = { .addr = (uintptr_t)n.buf + off, .length = len,
			       .lkey = n.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = peer.addr + roff;
		wr.wr.atomic.rkey = peer.rkey;
		wr.wr.atomic.compare_add = ADD;
	} else {
		wr.wr.rdma.remote_addr = peer.addr + roff;
		wr.wr.rdma.rkey = peer.rkey;
	}
	return ibv_post_send(n.qp, &wr, &bad);
}

static int prefetched_read(void)
{
	struct ibv_sge sge = { .addr = (uintptr_t)n.buf + 163840,
			       .length = READ_LEN, .lkey = n.mr->lkey };
	int err;

	err = ibv_advise_mr(n.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	if (err) {
		WHY("ibv_advise_mr: %s", strerror(err));
		return 0;
	}
	return !post(7, IBV_WR_RDMA_READ, 163840, READ_LEN, READ_OFF) &&
	       expect(7, IBV_WC_SUCCESS, "RDMA READ") &&
	       !buf_holds(163840, READ_LEN, 6);
}

static int run(enum test t)
{
	uint64_t v;

	switch (t) {
	case T_WRITE:
		fill(n.buf, WRITE_LEN, 1);
		return !post(1, IBV_WR_RDMA_WRITE, 0, WRITE_LEN, WRITE_OFF) &&
		       expect(1, IBV_WC_SUCCESS, "RDMA WRITE");
	case T_READ:
		return !post(2, IBV_WR_RDMA_READ, 32768, READ_LEN, READ_OFF) &&
		       expect(2, IBV_WC_SUCCESS, "RDMA READ") &&
		       !buf_holds(32768, READ_LEN, 2);
	case T_ATOMIC:
		if (post(3, IBV_WR_ATOMIC_FETCH_AND_ADD, 65536, 8,
			 ATOMIC_OFF) ||
		    !expect(3, IBV_WC_SUCCESS, "fetch and add"))
			return 0;
		memcpy(&v, n.buf + 65536, 8);
		if (v != 0x1111111111111111ULL) {
			WHY("fetch and add returned %#llx",
			    (unsigned long long)v);
			return 0;
		}
		return 1;
	case T_SEND:
		fill(n.buf + 98304, SEND_LEN, 3);
		return !post(4, IBV_WR_SEND, 98304, SEND_LEN, 0) &&
		       expect(4, IBV_WC_SUCCESS, "SEND");
	case T_INVAL_WRITE:
		fill(n.buf, WRITE_LEN, 5);
		return !post(5, IBV_WR_RDMA_WRITE, 0, WRITE_LEN, WRITE_OFF) &&
		       expect(5, IBV_WC_SUCCESS, "RDMA WRITE");
	case T_INVAL_READ:
		/* Our own pages go too: faulted in again for the READ. */
		if (buf_drop(32768, READ_LEN)) {
			WHY("madvise: %s", strerror(errno));
			return 0;
		}
		return !post(6, IBV_WR_RDMA_READ, 32768, READ_LEN, READ_OFF) &&
		       expect(6, IBV_WC_SUCCESS, "RDMA READ") &&
		       !buf_holds(32768, READ_LEN, 6);
	case T_PREFETCH:
		return prefetched_read();
	case T_BIG_READ:
		return !post(9, IBV_WR_RDMA_READ, BIG_OFF, BIG_LEN, BIG_OFF) &&
		       expect(9, IBV_WC_SUCCESS, "RDMA READ") &&
		       !buf_holds(BIG_OFF, BIG_LEN, 9);
	default:
		fill(n.buf, 64, 8);
		return !post(8, IBV_WR_RDMA_WRITE, 0, 64, HOLE_OFF + 64) &&
		       expect(8, IBV_WC_REM_ACCESS_ERR,
			      "RDMA WRITE into the hole");
	}
}

static void drive(enum test t)
{
	int ok;

	n.why[0] = 0;
	ok = ask(C_PREP, t);
	if (!tap_ok(ok, "%s: server prepares %s", test_name[t], peer.why))
		return;
	ok = run(t);
	tap_ok(ok, "%s: client side %s", test_name[t], n.why);
	if (!ok)
		return;
	ok = ask(C_CHECK, t);
	tap_ok(ok, "%s: server side %s", test_name[t], peer.why);
}

/* The verbs on their own: capabilities and refusals. */
static void local_checks(void)
{
	uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		      IBV_ODP_SUPPORT_ATOMIC;
	struct ibv_device_attr_ex ax = {};
	struct ibv_sge sge = { .length = 4096 };
	struct ibv_mr *mr;
	int err;

	err = ibv_query_device_ex(n.ctx, NULL, &ax);
	tap_ok(!err && (ax.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
	       (ax.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT),
	       "odp_caps.general_caps %#llx: ODP and implicit ODP",
	       (unsigned long long)ax.odp_caps.general_caps);
	tap_ok((ax.odp_caps.per_transport_caps.rc_odp_caps & rc) == rc,
	       "rc_odp_caps %#x: SEND, RECV, WRITE, READ, ATOMIC",
	       ax.odp_caps.per_transport_caps.rc_odp_caps);
	tap_ok(ax.odp_caps.per_transport_caps.ud_odp_caps ==
	       IBV_ODP_SUPPORT_SEND, "ud_odp_caps %#x: SEND only",
	       ax.odp_caps.per_transport_caps.ud_odp_caps);

	/* A plain MR cannot be prefetched. */
	mr = ibv_reg_mr(n.pd, n.buf + 200704, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (mr) {
		sge.addr = (uintptr_t)n.buf + 200704;
		sge.lkey = mr->lkey;
		err = ibv_advise_mr(n.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
				    &sge, 1);
		tap_ok(err == EFAULT,
		       "ibv_advise_mr on an MR without ODP: EFAULT (%s)",
		       strerror(err));
		ibv_dereg_mr(mr);
	} else {
		tap_ok(0, "ibv_reg_mr of a plain MR: %s", strerror(errno));
	}
	sge.addr = (uintptr_t)n.buf;
	sge.lkey = n.mr->lkey + 0x100;
	err = ibv_advise_mr(n.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1);
	tap_ok(err == EFAULT, "ibv_advise_mr with an unknown lkey: EFAULT (%s)",
	       strerror(err));
	errno = 0;
	mr = ibv_reg_mr(n.pd, n.buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_MW_BIND | ODP);
	tap_ok(!mr && errno == EOPNOTSUPP,
	       "ibv_reg_mr ODP with MW_BIND: EOPNOTSUPP (%s)",
	       mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

static int client(const char *host, int port)
{
	int t, ok;

	ok = !buf_open() && !qp_open();
	n.mr = ok ? ibv_reg_mr(n.pd, NULL, SIZE_MAX, ALL_ACCESS | ODP) : NULL;
	if (!tap_ok(n.mr != NULL, "implicit ODP MR, RC QP (%s)",
		    n.mr ? "ok" : strerror(errno)))
		return tap_done();
	local_checks();
	peer.fd = xchg_connect(host, port, 15000);
	if (!tap_ok(peer.fd >= 0, "connect to the server at %s port %d",
		    host, port))
		return tap_done();
	if (!tap_ok(ask(C_OPEN, 0), "RC QPs connected %s", peer.why))
		return tap_done();
	for (t = 0; t < T_N; t++)
		drive((enum test)t);
	ask(C_QUIT, 0);
	close(peer.fd);
	tap_ok(!ibv_destroy_qp(n.qp) && !ibv_dereg_mr(n.mr),
	       "QP destroyed, implicit ODP MR deregistered");
	return tap_done();
}

static int setup(const char *dev, int gid)
{
	n.gid = gid;
	return wire_open(dev, gid, &n.ctx, &n.pd, &n.my_gid);
}

int main(int argc, char **argv)
{
	static const struct pair_prog prog = {
		.name = "odp_wire", .objects = "PD", .port = 18830,
		.setup = setup, .server = server, .client = client,
	};

	return pair_main(argc, argv, &prog);
}
