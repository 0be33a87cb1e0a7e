// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device memory between two hosts (ibv_alloc_dm(3)), the data checked at
 * both ends through ibv_memcpy_to_dm / ibv_memcpy_from_dm. The server's
 * only memory for its peer is a DM (of a length that is not whole pages)
 * with zero-based MRs on it (remote addresses are offsets from an MR's
 * start); the client sends from a DM of its own. Over one RC connection:
 *
 *   write   RDMA WRITE of 5000 bytes into the server's DM
 *   read    RDMA READ of 3000 bytes the server put in its DM
 *   atomic  fetch and add on 8 bytes of the server's DM
 *   send    a SEND of 2000 bytes from the client's DM into a receive
 *           whose buffer is in the server's DM
 *   offset  RDMA WRITE of 3000 bytes to address 0 of a second MR, on the
 *           server's DM from an offset that is not page aligned: they
 *           land at that offset, and nothing either side of the MR moves
 *   bounds  an RDMA WRITE past the end of the server's DM MR: a remote
 *           access error, and the DM unchanged
 *
 * Before that the client checks the verbs on its own: max_dm_size, a new
 * DM reads as zeros, refused sizes, alignments, ranges and access flags,
 * and ibv_free_dm's EBUSY while an MR is on the DM. The server leaves its
 * DM and MR for process exit to free.
 *
 *   dm_wire -d DEV -g GIDIDX [-p PORT] -s        server
 *   dm_wire -d DEV -g GIDIDX [-p PORT] PEER      client (TAP)
 *
 * Copyright (c) 2026 the vroce developers
 */
#define _GNU_SOURCE
#include <errno.h>
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

#define DM_LEN		(64 * 1024)
#define SRV_DM_LEN	(DM_LEN - 100)	/* the server's: not whole pages */
#define MR_LEN		(DM_LEN - 4096)	/* the server's MR: not the last page */
#define WRITE_OFF	4096
#define READ_OFF	12288
#define ATOMIC_OFF	16384
#define RECV_OFF	20480
#define MR2_OFF		40100		/* the second MR: not page aligned */
#define MR2_LEN		3000
#define ADD		0x1234
#define ZB		IBV_ACCESS_ZERO_BASED

enum { C_OPEN = 1, C_CHECK, C_QUIT };
enum test { T_WRITE, T_READ, T_ATOMIC, T_SEND, T_OFFSET, T_BOUNDS, T_N };

static const char *const test_name[T_N] = {
	"RDMA WRITE into device memory", "RDMA READ from device memory",
	"fetch and add on device memory",
	"SEND from device memory into device memory",
	"RDMA WRITE into a DM MR at an offset within a page",
	"RDMA WRITE past the end of a DM MR",
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_dm *dm;
	struct ibv_mr *mr;		/* on dm */
	struct ibv_mr *mr2;		/* server: on dm at MR2_OFF */
	uint8_t tmp[DM_LEN];
	int gid;
	union ibv_gid my_gid;
	char why[120];
} n;

#define WHY(...) snprintf(n.why, sizeof(n.why), __VA_ARGS__)

/* [@off, + @len) of our DM, read into n.tmp: 0 if it holds @seed. */
static int dm_holds(uint64_t off, size_t len, unsigned int seed)
{
	int err = ibv_memcpy_from_dm(n.tmp, n.dm, off, len);

	if (err) {
		WHY("ibv_memcpy_from_dm: %s", strerror(err));
		return -1;
	}
	if (!same(n.tmp, len, seed)) {
		WHY("DM [%llu, +%zu): data differs", (unsigned long long)off,
		    len);
		return -1;
	}
	return 0;
}

/* 0 if [@off, + @len) of our DM holds only zeros. */
static int dm_zero(uint64_t off, size_t len)
{
	int err = ibv_memcpy_from_dm(n.tmp, n.dm, off, len);
	size_t i;

	if (err) {
		WHY("ibv_memcpy_from_dm: %s", strerror(err));
		return -1;
	}
	for (i = 0; i < len; i++)
		if (n.tmp[i]) {
			WHY("DM byte %llu is %#x, not 0",
			    (unsigned long long)(off + i), n.tmp[i]);
			return -1;
		}
	return 0;
}

/* Our DM of @len bytes and a zero-based MR on its first @mr_len. */
static int dm_open(size_t len, size_t mr_len, unsigned int access)
{
	struct ibv_alloc_dm_attr da = { .length = len };

	n.dm = ibv_alloc_dm(n.ctx, &da);
	if (!n.dm)
		return -1;
	n.mr = ibv_reg_dm_mr(n.pd, n.dm, 0, mr_len, access | ZB);
	return n.mr ? 0 : -1;
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
	struct ibv_sge sge = { .addr = RECV_OFF, .length = 4096 };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	uint64_t v = 0x1111111111111111ULL;
	int err;

	if (dm_open(SRV_DM_LEN, MR_LEN,
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC) ||
	    qp_open())
		return -1;
	n.mr2 = ibv_reg_dm_mr(n.pd, n.dm, MR2_OFF, MR2_LEN,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      ZB);
	if (!n.mr2)
		return -1;
	fill(n.tmp, 3000, 2);
	err = ibv_memcpy_to_dm(n.dm, READ_OFF, n.tmp, 3000);
	if (!err)
		err = ibv_memcpy_to_dm(n.dm, ATOMIC_OFF, &v, sizeof(v));
	if (err) {
		errno = err;
		return -1;
	}
	sge.lkey = n.mr->lkey;
	if (qp_connect((uint32_t)m->v[1], m->gid))
		return -1;
	err = ibv_post_recv(n.qp, &wr, &bad);
	if (err)
		errno = err;
	return err ? -1 : 0;
}

static int srv_check(enum test t)
{
	struct ibv_wc wc;
	uint64_t v;

	switch (t) {
	case T_WRITE:
		return !dm_holds(WRITE_OFF, 5000, 1);
	case T_ATOMIC:
		if (ibv_memcpy_from_dm(&v, n.dm, ATOMIC_OFF, sizeof(v)))
			return 0;
		if (v != 0x1111111111111111ULL + ADD) {
			WHY("fetch and add left %#llx", (unsigned long long)v);
			return 0;
		}
		return 1;
	case T_SEND:
		if (wire_poll(n.cq, &wc, 10000)) {
			WHY("no receive completion");
			return 0;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 7 ||
		    wc.byte_len != 2000) {
			WHY("receive: %s wr_id %llu len %u",
			    ibv_wc_status_str(wc.status),
			    (unsigned long long)wc.wr_id, wc.byte_len);
			return 0;
		}
		return !dm_holds(RECV_OFF, 2000, 3);
	case T_OFFSET:
		return !dm_holds(MR2_OFF, MR2_LEN, 7) &&
		       !dm_zero(MR2_OFF - 100, 100) &&
		       !dm_zero(MR2_OFF + MR2_LEN, 100);
	case T_BOUNDS:
		/* Nothing moved: the MR's last bytes and what follows. */
		return !dm_zero(MR_LEN - 32, SRV_DM_LEN - MR_LEN + 32);
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
	} else {
		st = srv_check((enum test)m->v[1]);
	}
	wire_answer(m, st, n.qp, n.why, &n.my_gid);
	m->v[2] = n.mr ? n.mr->rkey : 0;
	m->v[3] = n.mr2 ? n.mr2->rkey : 0;
}

static int server(int port)
{
	if (xchg_serve_loop(port, C_QUIT, srv_answer))
		return 1;
	printf("done\n");
	/* The DM, its MRs and the QP go with the process. */
	return 0;
}

/* ---- client ---------------------------------------------------------- */

static struct {
	int fd;
	uint32_t qpn, rkey, rkey2;
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
	peer.rkey2 = (uint32_t)m.v[3];
	if (cmd == C_OPEN && m.v[0] && qp_connect(peer.qpn, m.gid)) {
		snprintf(peer.why, sizeof(peer.why), "client connect: %s",
			 strerror(errno));
		return 0;
	}
	return (int)m.v[0];
}

static int expect(uint64_t id, enum ibv_wc_status status, const char *what)
{
	return wire_expect(n.cq, 10000, id, status, what, n.why, sizeof(n.why));
}

/*
 * Work request @id: @op from [@off, + @len) of our DM to @raddr of the
 * server's MR @rkey.
 */
static int post_to(uint64_t id, enum ibv_wr_opcode op, uint64_t off,
		   uint32_t len, uint32_t rkey, uint64_t raddr)
{
	struct ibv_sge sge = { .addr = off, .length = len,
			       .lkey = n.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = ADD;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(n.qp, &wr, &bad);
}

/* post_to() the server's first MR. */
static int post(uint64_t id, enum ibv_wr_opcode op, uint64_t off,
		uint32_t len, uint64_t raddr)
{
	return post_to(id, op, off, len, peer.rkey, raddr);
}

/* Puts @len bytes of @seed at @off of our DM. */
static int dm_fill(uint64_t off, size_t len, unsigned int seed)
{
	int err;

	fill(n.tmp, len, seed);
	err = ibv_memcpy_to_dm(n.dm, off, n.tmp, len);
	if (err)
		WHY("ibv_memcpy_to_dm: %s", strerror(err));
	return err;
}

static int run(enum test t)
{
	uint64_t v;

	switch (t) {
	case T_WRITE:
		return !dm_fill(0, 5000, 1) &&
		       !post(1, IBV_WR_RDMA_WRITE, 0, 5000, WRITE_OFF) &&
		       expect(1, IBV_WC_SUCCESS, "RDMA WRITE");
	case T_READ:
		return !dm_fill(8192, 3000, 9) &&
		       !post(2, IBV_WR_RDMA_READ, 8192, 3000, READ_OFF) &&
		       expect(2, IBV_WC_SUCCESS, "RDMA READ") &&
		       !dm_holds(8192, 3000, 2);
	case T_ATOMIC:
		if (post(3, IBV_WR_ATOMIC_FETCH_AND_ADD, 16384, 8,
			 ATOMIC_OFF) ||
		    !expect(3, IBV_WC_SUCCESS, "fetch and add") ||
		    ibv_memcpy_from_dm(&v, n.dm, 16384, sizeof(v)))
			return 0;
		if (v != 0x1111111111111111ULL) {
			WHY("fetch and add returned %#llx",
			    (unsigned long long)v);
			return 0;
		}
		return 1;
	case T_SEND:
		return !dm_fill(24576, 2000, 3) &&
		       !post(4, IBV_WR_SEND, 24576, 2000, 0) &&
		       expect(4, IBV_WC_SUCCESS, "SEND");
	case T_OFFSET:
		return !dm_fill(0, MR2_LEN, 7) &&
		       !post_to(6, IBV_WR_RDMA_WRITE, 0, MR2_LEN, peer.rkey2, 0) &&
		       expect(6, IBV_WC_SUCCESS, "RDMA WRITE to the second MR");
	default:
		return !dm_fill(0, 64, 4) &&
		       !post(5, IBV_WR_RDMA_WRITE, 0, 64, MR_LEN - 32) &&
		       expect(5, IBV_WC_REM_ACCESS_ERR, "RDMA WRITE past the end");
	}
}

static void drive(enum test t)
{
	int ok;

	n.why[0] = 0;
	ok = run(t);
	tap_ok(ok, "%s: client side %s", test_name[t], n.why);
	if (!ok)
		return;
	ok = ask(C_CHECK, t);
	tap_ok(ok, "%s: server side %s", test_name[t], peer.why);
}

/* ibv_alloc_dm with @len and @align must fail with EINVAL. */
static void refused_alloc(uint64_t len, uint32_t align, const char *what)
{
	struct ibv_alloc_dm_attr da = { .length = len,
					.log_align_req = align };
	struct ibv_dm *dm;

	errno = 0;
	dm = ibv_alloc_dm(n.ctx, &da);
	tap_ok(!dm && errno == EINVAL, "ibv_alloc_dm %s: EINVAL (%s)", what,
	       dm ? "allocated" : strerror(errno));
	if (dm)
		ibv_free_dm(dm);
}

/* ibv_reg_dm_mr over [@off, + @len) with @access must fail, EINVAL. */
static void refused_mr(uint64_t off, size_t len, unsigned int access,
		       const char *what)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dm_mr(n.pd, n.dm, off, len, access);
	tap_ok(!mr && errno == EINVAL, "ibv_reg_dm_mr %s: EINVAL (%s)", what,
	       mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

/* The verbs on their own, on the client's DM; n.mr is on it. */
static void local_checks(void)
{
	struct ibv_device_attr_ex ax;
	uint64_t max = 0;
	int err;

	if (!ibv_query_device_ex(n.ctx, NULL, &ax))
		max = ax.max_dm_size;
	tap_ok(max >= DM_LEN, "max_dm_size %llu", (unsigned long long)max);
	n.why[0] = 0;
	tap_ok(!dm_zero(0, DM_LEN), "a new DM reads as zeros %s", n.why);
	refused_alloc(max + 1, 0, "one byte over max_dm_size");
	refused_alloc(0, 0, "of 0 bytes");
	refused_alloc(4096, 13, "aligned beyond a page");
	err = ibv_memcpy_to_dm(n.dm, DM_LEN - 8, n.tmp, 16);
	tap_ok(err == EINVAL, "ibv_memcpy_to_dm past the end: EINVAL (%s)",
	       strerror(err));
	err = ibv_memcpy_from_dm(n.tmp, n.dm, UINT64_MAX - 4, 16);
	tap_ok(err == EINVAL, "ibv_memcpy_from_dm, offset wrapping: EINVAL (%s)",
	       strerror(err));
	refused_mr(0, 4096, IBV_ACCESS_LOCAL_WRITE, "not zero-based");
	refused_mr(DM_LEN - 4096, 8192, IBV_ACCESS_LOCAL_WRITE | ZB,
		   "past the end");
	errno = 0;
	err = ibv_free_dm(n.dm);
	tap_ok(err == EBUSY, "ibv_free_dm with an MR on it: EBUSY (%s)",
	       strerror(err));
}

static int client(const char *host, int port)
{
	struct ibv_dm *dm;
	int t, ok;

	ok = !dm_open(DM_LEN, DM_LEN, IBV_ACCESS_LOCAL_WRITE) && !qp_open();
	if (!tap_ok(ok, "DM, zero-based MR on it, RC QP (%s)",
		    ok ? "ok" : strerror(errno)))
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
	dm = n.dm;
	tap_ok(!ibv_destroy_qp(n.qp) && !ibv_dereg_mr(n.mr),
	       "QP destroyed, DM MR deregistered");
	tap_ok(ibv_free_dm(dm) == 0, "ibv_free_dm once its MR is gone");
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
		.name = "dm_wire", .objects = "PD", .port = 18820,
		.setup = setup, .server = server, .client = client,
	};

	return pair_main(argc, argv, &prog);
}
