// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * rdma_ops: data correctness of RC (and UD) traffic between two nodes,
 * over the stock libibverbs, for any pair of RoCE v2 devices (rdma_rxe,
 * vroce).
 *
 *   rdma_ops -d DEV -g GIDIDX [-s] [--ipv6] [-p PORT]          server
 *   rdma_ops -d DEV -g GIDIDX [--ipv6] [--atomic-write] [-p PORT] PEER_IP
 *                                                             client
 *
 * The client drives everything and prints TAP; the server is a passive
 * helper that owns the target memory. They talk over one TCP connection
 * (xchg.h): the client sends a command, the server answers. Commands:
 * CONNECT (a fresh QP on the server, connected to the client's; answers
 * QPN, PSN, GID and the addresses and rkeys of its memory), FILL and CHECK
 * (write or verify a byte pattern in the server's memory), RECV (post a
 * receive), WAIT (poll for a receive completion), GET64/SET64, BIND (bind
 * a type 2 memory window) and QUIT. So every byte check on the server's
 * side runs on the server, against the memory the HCA wrote, and the
 * client checks its own memory locally.
 *
 * The server registers a 4 MiB buffer with local write and remote
 * write/read/atomic access (the allocation continues one unregistered
 * slack area past its end, for out-of-bounds checks) and a 64 KiB buffer
 * with local write and remote read only. Guard bytes (0xa5) around every
 * target range show writes that went too far. The path MTU is 1024.
 *
 * The client's cases (one TAP line each): SEND, SEND_WITH_IMM, RDMA_WRITE,
 * RDMA_WRITE_WITH_IMM and RDMA_READ of 0, 1, MTU-1, MTU, MTU+1 bytes and
 * 1 MiB; inline SEND/WRITE up to max_inline_data; FETCH_AND_ADD and
 * CMP_AND_SWP (old value, new remote value); 5 gather SGEs over 16 pages
 * into a 3-SGE receive, an RDMA WRITE and an RDMA READ; a chain of
 * unsignaled and signaled requests; SEND_WITH_INV of a type 2 MW's rkey;
 * remote errors on fresh QP pairs (bad rkey, out of bounds, unaligned
 * atomic, no REMOTE_WRITE), the target memory untouched each time; RNR
 * with rnr_retry 7 (waits) and 1 (fails); UD SENDs up to the MTU.
 *
 * What rdma_rxe gives (rxe to rxe, Debian Linux 6.1, rdma-core 44): bad
 * rkey and out-of-bounds WRITE/READ, WRITE into an MR without REMOTE_WRITE:
 * IBV_WC_REM_ACCESS_ERR; unaligned atomic: refused by the provider's
 * ibv_post_send with EINVAL, never sent (its responder would NAK it as an
 * Invalid Request, IBV_WC_REM_INV_REQ_ERR); RNR with rnr_retry 1:
 * IBV_WC_RNR_RETRY_EXC_ERR. Its responder flags SEND_WITH_INV with the
 * kernel's bit for it, not IBV_WC_WITH_INV (see expect_inv_flag()).
 *
 * --ipv6 runs a subset of the cases and requires GIDIDX to be an IPv6 GID
 * (not IPv4-mapped); PEER_IP may be IPv4 or IPv6 either way.
 *
 * --atomic-write (both ends must have IBTA 1.5's RDMA Atomic Write, which
 * rdma_rxe has from Linux 6.2 on) makes the client's RC QPs extended QPs
 * with IBV_QP_EX_WITH_ATOMIC_WRITE and adds ibv_wr_atomic_write() cases:
 * the 8 bytes land, an unaligned address is refused (by the provider, as
 * vroce's does, or by the responder with IBV_WC_REM_INV_REQ_ERR, as
 * rdma_rxe's provider lets it through), and an R_Key without remote write
 * gives IBV_WC_REM_ACCESS_ERR.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"
#include "rc_connect.h"
#include "xchg.h"

#define OPS_PORT	18600
#define BUF_SIZE	(4u << 20)	/* registered */
#define BUF_SLACK	8192		/* allocated past the MR, never registered */
#define RO_SIZE		65536
#define MTU		1024
#define MIB		(1u << 20)
#define GUARD		64
#define CANARY		0		/* pattern seed of guard bytes (0xa5) */
#define WAIT_MS		15000
#define DEPTH		64
#define QKEY		0x11110000u
#define GRH_LEN		40
#define PAGE		4096
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Offsets into the buffers; unaligned on purpose where RDMA does not care. */
#define L_SRC		(PAGE + 40)
#define L_DST		(MIB + 65536 + 16)
#define L_RES		(3 * MIB)		/* 8-byte atomic result */
#define L_SG		(3 * MIB + PAGE)	/* 16 pages of SGEs */
#define R_DATA		(2 * PAGE + 24)
#define R_ATOM		(2 * MIB)
#define R_SG		(2 * MIB + 65536)	/* 16 pages of SGEs */
#define R_MW		(3 * MIB)
#define MW_LEN		65536

enum cmd {
	C_CONNECT = 1, C_FILL, C_CHECK, C_RECV, C_WAIT, C_GET64, C_SET64,
	C_BIND, C_QUIT,
};

/* Which server buffer a FILL or CHECK is about. */
enum { MEM_RW, MEM_RO };

struct node {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	uint8_t *buf, *ro;
	struct ibv_mr *mr, *ro_mr;
	union ibv_gid gid;
	int gid_idx;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t psn;
	uint32_t max_inline;
	uint32_t max_sge;
	int fd;
	/* server: a type 2 memory window for SEND_WITH_INV */
	struct ibv_mr *mw_mr;
	struct ibv_mw *mw;
};

/* What the client knows of the server's side. */
struct peer {
	uint32_t qpn, psn;
	union ibv_gid gid;
	uint64_t addr, ro_addr;
	uint32_t rkey, ro_rkey;
	uint32_t vendor_id;
	char dev[17];
};

/* One contiguous piece of a buffer. */
struct seg {
	uint64_t off;
	uint32_t len;
};

static struct node n;
static struct peer pr;
static bool atomic_write;	/* --atomic-write: RC QPs are extended */
static uint32_t seed_counter;
static int post_ret;	/* what the last ibv_post_send returned */

/* ---- byte patterns ---------------------------------------------------- */

static uint64_t mix(uint32_t seed, uint64_t word)
{
	uint64_t x = (word + 1) * 0x9e3779b97f4a7c15ull +
		     seed * 0xd1b54a32d192ed03ull;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x;
}

/*
 * Byte i of stream @seed is byte (i % 8) of mix(seed, i / 8); seed CANARY
 * is all 0xa5. @base is the stream offset of p[0].
 */
static void fill(uint8_t *p, uint64_t len, uint32_t seed, uint64_t base)
{
	uint64_t j, i, x = 0;

	if (seed == CANARY) {
		memset(p, 0xa5, len);
		return;
	}
	for (j = 0; j < len; j++) {
		i = base + j;
		if (j == 0 || !(i & 7))
			x = mix(seed, i >> 3);
		p[j] = x >> ((i & 7) * 8);
	}
}

/* Returns the index of the first byte that differs, or -1. */
static int64_t check(const uint8_t *p, uint64_t len, uint32_t seed,
		     uint64_t base, uint8_t *want)
{
	uint64_t j, i, x = 0;
	uint8_t w;

	for (j = 0; j < len; j++) {
		i = base + j;
		if (seed == CANARY) {
			w = 0xa5;
		} else {
			if (j == 0 || !(i & 7))
				x = mix(seed, i >> 3);
			w = x >> ((i & 7) * 8);
		}
		if (p[j] != w) {
			*want = w;
			return j;
		}
	}
	return -1;
}

static uint32_t next_seed(void)
{
	return ++seed_counter * 7919 + 1;
}

/* ---- device and QPs ----------------------------------------------------- */

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int node_open(const char *dev, int gid_idx)
{
	const int full = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	n.gid_idx = gid_idx;
	n.ctx = open_by_name(dev);
	if (!n.ctx) {
		fprintf(stderr, "rdma_ops: cannot open %s\n", dev);
		return -1;
	}
	if (ibv_query_device(n.ctx, &n.dev) ||
	    ibv_query_port(n.ctx, 1, &n.port) ||
	    ibv_query_gid(n.ctx, 1, gid_idx, &n.gid)) {
		perror("rdma_ops: query");
		return -1;
	}
	n.pd = ibv_alloc_pd(n.ctx);
	n.buf = map(BUF_SIZE + BUF_SLACK);
	n.ro = map(RO_SIZE + BUF_SLACK);
	if (!n.pd || !n.buf || !n.ro) {
		perror("rdma_ops: pd/buffers");
		return -1;
	}
	n.mr = ibv_reg_mr(n.pd, n.buf, BUF_SIZE, full);
	n.ro_mr = ibv_reg_mr(n.pd, n.ro, RO_SIZE,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!n.mr || !n.ro_mr) {
		perror("rdma_ops: reg_mr");
		return -1;
	}
	n.max_sge = n.dev.max_sge < 8 ? n.dev.max_sge : 8;
	return 0;
}

static void qp_free(void)
{
	if (n.mw) {
		ibv_dealloc_mw(n.mw);
		n.mw = NULL;
	}
	if (n.qp) {
		ibv_destroy_qp(n.qp);
		n.qp = NULL;
	}
	if (n.cq) {
		ibv_destroy_cq(n.cq);
		n.cq = NULL;
	}
}

/* ibv_create_qp(), or for --atomic-write's RC QPs ibv_create_qp_ex(). */
static struct ibv_qp *create_qp(struct ibv_qp_init_attr *ia)
{
	struct ibv_qp_init_attr_ex ex = {
		.send_cq = ia->send_cq,
		.recv_cq = ia->recv_cq,
		.cap = ia->cap,
		.qp_type = ia->qp_type,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = n.pd,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	struct ibv_qp *qp;

	if (!atomic_write || ia->qp_type != IBV_QPT_RC)
		return ibv_create_qp(n.pd, ia);
	qp = ibv_create_qp_ex(n.ctx, &ex);
	if (qp)
		ia->cap = ex.cap;
	return qp;
}

/* A fresh QP of @type with its own CQ, replacing the previous one. */
static int qp_new(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia;

	qp_free();
	n.cq = ibv_create_cq(n.ctx, 2 * DEPTH, NULL, NULL, 0);
	if (!n.cq)
		return -1;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = n.cq;
	ia.recv_cq = n.cq;
	ia.qp_type = type;
	ia.cap.max_send_wr = DEPTH;
	ia.cap.max_recv_wr = DEPTH;
	ia.cap.max_send_sge = n.max_sge;
	ia.cap.max_recv_sge = n.max_sge;
	ia.cap.max_inline_data = 64;
	n.qp = create_qp(&ia);
	if (!n.qp) {
		ia.cap.max_inline_data = 0;
		n.qp = create_qp(&ia);
	}
	if (!n.qp)
		return -1;
	n.max_inline = ia.cap.max_inline_data;
	n.psn = lrand48() & 0xffffff;
	return 0;
}

static int clamp_rd(int cap)
{
	return cap < 1 ? 1 : cap > 4 ? 4 : cap;
}

/* RESET -> INIT -> RTR -> RTS of an RC QP towards the peer's QP. */
static int qp_rts_rc(uint32_t dqpn, uint32_t dpsn, const union ibv_gid *dgid,
		     int min_rnr, int rnr_retry)
{
	const struct rc_path p = {
		.dqpn = dqpn, .rq_psn = dpsn, .sq_psn = n.psn, .dgid = dgid,
		.sgid_idx = n.gid_idx,
		.dest_rd_atomic = clamp_rd(n.dev.max_qp_rd_atom),
		.rd_atomic = clamp_rd(n.dev.max_qp_init_rd_atom),
		.min_rnr_timer = min_rnr, .timeout = 14, .rnr_retry = rnr_retry,
	};

	return rc_connect(n.qp, &p);
}

static int qp_rts_ud(void)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = QKEY;
	if (ibv_modify_qp(n.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(n.qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = n.psn;
	return ibv_modify_qp(n.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* Polls the CQ for one completion for up to @ms (0: just look once). */
static bool cq_wait(struct ibv_wc *wc, int ms)
{
	long long end = xchg_now_ms() + ms;
	int r;

	memset(wc, 0, sizeof(*wc));
	for (;;) {
		r = ibv_poll_cq(n.cq, 1, wc);
		if (r)
			return r == 1;
		if (xchg_now_ms() >= end)
			return false;
		xchg_sleep_ms(1);
	}
}

static int post_recv(uint64_t wr_id, const struct seg *s, int ns)
{
	struct ibv_sge sge[8];
	struct ibv_recv_wr wr, *bad;
	int i;

	if (ns > 8)
		return -1;
	for (i = 0; i < ns; i++) {
		sge[i].addr = (uintptr_t)(n.buf + s[i].off);
		sge[i].length = s[i].len;
		sge[i].lkey = n.mr->lkey;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = ns;
	return ibv_post_recv(n.qp, &wr, &bad);
}

/* ---- server ------------------------------------------------------------- */

/* The server memory a command names, or NULL when out of the allocation. */
static uint8_t *srv_mem(uint64_t which, uint64_t off, uint64_t len)
{
	uint64_t size = which == MEM_RO ? RO_SIZE : BUF_SIZE;

	if (which > MEM_RO || off > size + BUF_SLACK ||
	    len > size + BUF_SLACK - off)
		return NULL;
	return (which == MEM_RO ? n.ro : n.buf) + off;
}

static uint64_t srv_connect(struct xchg_msg *m)
{
	bool ud = m->v[1];
	union ibv_gid g;
	int r;

	memcpy(g.raw, m->gid, sizeof(g.raw));
	if (qp_new(ud ? IBV_QPT_UD : IBV_QPT_RC))
		return errno ? errno : EIO;
	if (ud)
		r = qp_rts_ud();
	else
		r = qp_rts_rc(m->v[2], m->v[3], &g, m->v[4], 7);
	if (r)
		return errno ? errno : EIO;
	memset(m, 0, sizeof(*m));
	m->v[1] = n.qp->qp_num;
	m->v[2] = n.psn;
	m->v[3] = (uintptr_t)n.buf;
	m->v[4] = n.mr->rkey;
	m->v[5] = (uintptr_t)n.ro;
	m->v[6] = n.ro_mr->rkey;
	m->v[7] = n.dev.vendor_id;
	strncpy((char *)&m->v[8], ibv_get_device_name(n.ctx->device), 16);
	memcpy(m->gid, n.gid.raw, sizeof(m->gid));
	return 0;
}

static uint64_t srv_fill_check(struct xchg_msg *m, bool do_check)
{
	uint8_t *p = srv_mem(m->v[1], m->v[2], m->v[3]);
	uint8_t want = 0;
	int64_t at;

	if (!p)
		return EINVAL;
	if (!do_check) {
		fill(p, m->v[3], m->v[4], m->v[5]);
		return 0;
	}
	at = check(p, m->v[3], m->v[4], m->v[5], &want);
	if (at < 0)
		return 0;
	m->v[1] = at;
	m->v[2] = p[at];
	m->v[3] = want;
	return 1;
}

static uint64_t srv_recv(struct xchg_msg *m)
{
	struct seg s[6];
	uint64_t ns = m->v[2], i;

	if (ns > 6 || !n.qp)
		return EINVAL;
	for (i = 0; i < ns; i++) {
		s[i].off = m->v[3 + 2 * i];
		s[i].len = m->v[4 + 2 * i];
		if (s[i].off > BUF_SIZE || s[i].len > BUF_SIZE - s[i].off)
			return EINVAL;
	}
	return post_recv(m->v[1], s, ns) ? EIO : 0;
}

static uint64_t srv_wait(struct xchg_msg *m)
{
	struct ibv_wc wc;

	if (!n.cq || !cq_wait(&wc, m->v[1] > 60000 ? 60000 : m->v[1]))
		return 1;
	memset(m, 0, sizeof(*m));
	m->v[1] = wc.status;
	m->v[2] = wc.opcode;
	m->v[3] = wc.byte_len;
	m->v[4] = wc.wc_flags;
	m->v[5] = be32toh(wc.imm_data);
	m->v[6] = wc.wr_id;
	m->v[7] = wc.src_qp;
	m->v[8] = wc.invalidated_rkey;
	return 0;
}

static uint64_t srv_get_set64(struct xchg_msg *m, bool set)
{
	uint8_t *p = srv_mem(MEM_RW, m->v[1], 8);

	if (!p)
		return EINVAL;
	if (set)
		memcpy(p, &m->v[2], 8);
	else
		memcpy(&m->v[2], p, 8);
	return 0;
}

/* Binds a type 2 MW on the current QP over [off, off + len). */
static uint64_t srv_bind(struct xchg_msg *m)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	uint32_t rkey;

	if (!n.qp || !srv_mem(MEM_RW, m->v[1], m->v[2]))
		return EINVAL;
	if (!n.mw_mr)
		n.mw_mr = ibv_reg_mr(n.pd, n.buf, BUF_SIZE, acc);
	if (!n.mw)
		n.mw = ibv_alloc_mw(n.pd, IBV_MW_TYPE_2);
	if (!n.mw_mr || !n.mw)
		return errno ? errno : EIO;
	rkey = ibv_inc_rkey(n.mw->rkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb1d;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = n.mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = n.mw_mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)(n.buf + m->v[1]);
	wr.bind_mw.bind_info.length = m->v[2];
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ;
	if (ibv_post_send(n.qp, &wr, &bad))
		return errno ? errno : EIO;
	if (!cq_wait(&wc, WAIT_MS))
		return ETIMEDOUT;
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 0xb1d) {
		m->v[1] = wc.status;
		return EIO;
	}
	m->v[1] = rkey;
	return 0;
}

static int server(int port)
{
	struct xchg_msg m;
	uint64_t st;
	int fd;

	fd = xchg_serve(port, 120000);
	if (fd < 0) {
		fprintf(stderr, "rdma_ops: no client\n");
		return 1;
	}
	for (;;) {
		if (xchg_recv(fd, &m, 120000)) {
			fprintf(stderr, "rdma_ops: client gone\n");
			return 1;
		}
		switch (m.v[0]) {
		case C_CONNECT:
			st = srv_connect(&m);
			break;
		case C_FILL:
			st = srv_fill_check(&m, false);
			break;
		case C_CHECK:
			st = srv_fill_check(&m, true);
			break;
		case C_RECV:
			st = srv_recv(&m);
			break;
		case C_WAIT:
			st = srv_wait(&m);
			break;
		case C_GET64:
			st = srv_get_set64(&m, false);
			break;
		case C_SET64:
			st = srv_get_set64(&m, true);
			break;
		case C_BIND:
			st = srv_bind(&m);
			break;
		case C_QUIT:
			m.v[0] = 0;
			xchg_send(fd, &m);
			close(fd);
			qp_free();
			printf("done\n");
			return 0;
		default:
			st = EINVAL;
		}
		m.v[0] = st;
		if (xchg_send(fd, &m)) {
			fprintf(stderr, "rdma_ops: cannot answer\n");
			return 1;
		}
	}
}

/* ---- client: talking to the server ---------------------------------- */

/* Sends @m, replaces it with the answer and returns its status word. */
static uint64_t rpc(struct xchg_msg *m)
{
	if (xchg_send(n.fd, m) || xchg_recv(n.fd, m, WAIT_MS + 65000)) {
		tap_ok(false, "the server answers (command %llu)",
		       (unsigned long long)m->v[0]);
		exit(tap_done() | 1);
	}
	return m->v[0];
}

static bool rfill(int which, uint64_t off, uint64_t len, uint32_t seed,
		  uint64_t base)
{
	struct xchg_msg m = { .v = { C_FILL, which, off, len, seed, base } };

	if (rpc(&m)) {
		tap_diag("server FILL %llu+%llu failed",
			 (unsigned long long)off, (unsigned long long)len);
		return false;
	}
	return true;
}

static bool rcheck(int which, uint64_t off, uint64_t len, uint32_t seed,
		   uint64_t base)
{
	struct xchg_msg m = { .v = { C_CHECK, which, off, len, seed, base } };

	if (!rpc(&m))
		return true;
	if (m.v[0] == 1)
		tap_diag("server memory at %llu (of %llu+%llu): 0x%02x, want 0x%02x%s",
			 (unsigned long long)(off + m.v[1]),
			 (unsigned long long)off, (unsigned long long)len,
			 (unsigned int)m.v[2], (unsigned int)m.v[3],
			 seed == CANARY ? " (guard byte)" : "");
	else
		tap_diag("server CHECK %llu+%llu failed",
			 (unsigned long long)off, (unsigned long long)len);
	return false;
}

static bool lcheck(uint64_t off, uint64_t len, uint32_t seed, uint64_t base)
{
	uint8_t want = 0;
	int64_t at = check(n.buf + off, len, seed, base, &want);

	if (at < 0)
		return true;
	tap_diag("local memory at %llu (of %llu+%llu): 0x%02x, want 0x%02x%s",
		 (unsigned long long)(off + at), (unsigned long long)off,
		 (unsigned long long)len, n.buf[off + at], want,
		 seed == CANARY ? " (guard byte)" : "");
	return false;
}

/* Guard, @len bytes of @seed, guard, at @off of the server's memory. */
static bool rfill_span(int which, uint64_t off, uint64_t len, uint32_t seed)
{
	return rfill(which, off - GUARD, GUARD, CANARY, 0) &&
	       rfill(which, off, len, seed, 0) &&
	       rfill(which, off + len, GUARD, CANARY, 0);
}

static bool rcheck_span(int which, uint64_t off, uint64_t len, uint32_t seed)
{
	return rcheck(which, off - GUARD, GUARD, CANARY, 0) &&
	       rcheck(which, off, len, seed, 0) &&
	       rcheck(which, off + len, GUARD, CANARY, 0);
}

static void lfill_span(uint64_t off, uint64_t len, uint32_t seed)
{
	fill(n.buf + off - GUARD, GUARD, CANARY, 0);
	fill(n.buf + off, len, seed, 0);
	fill(n.buf + off + len, GUARD, CANARY, 0);
}

static bool lcheck_span(uint64_t off, uint64_t len, uint32_t seed)
{
	return lcheck(off - GUARD, GUARD, CANARY, 0) &&
	       lcheck(off, len, seed, 0) &&
	       lcheck(off + len, GUARD, CANARY, 0);
}

static bool r_recv(uint64_t wr_id, const struct seg *s, int ns)
{
	struct xchg_msg m = { .v = { C_RECV, wr_id, ns } };
	int i;

	for (i = 0; i < ns && i < 6; i++) {
		m.v[3 + 2 * i] = s[i].off;
		m.v[4 + 2 * i] = s[i].len;
	}
	if (rpc(&m)) {
		tap_diag("server could not post a receive");
		return false;
	}
	return true;
}

/* The server's next receive completion, within @ms. */
static bool r_wait(struct ibv_wc *wc, int ms)
{
	struct xchg_msg m = { .v = { C_WAIT, ms } };

	memset(wc, 0, sizeof(*wc));
	if (rpc(&m))
		return false;
	wc->status = m.v[1];
	wc->opcode = m.v[2];
	wc->byte_len = m.v[3];
	wc->wc_flags = m.v[4];
	wc->wr_id = m.v[6];
	wc->src_qp = m.v[7];
	/* imm_data and invalidated_rkey share their bytes. */
	wc->imm_data = htobe32(m.v[5]);
	return true;
}

static bool rset64(uint64_t off, uint64_t val)
{
	struct xchg_msg m = { .v = { C_SET64, off, val } };

	return !rpc(&m);
}

static uint64_t rget64(uint64_t off)
{
	struct xchg_msg m = { .v = { C_GET64, off } };

	if (rpc(&m))
		tap_diag("server GET64 failed");
	return m.v[2];
}

/* A fresh pair of QPs of @ud or RC type, connected to each other. */
static bool fresh_pair(bool ud, int min_rnr, int rnr_retry)
{
	struct xchg_msg m = { .v = { C_CONNECT, ud } };
	int r;

	if (qp_new(ud ? IBV_QPT_UD : IBV_QPT_RC)) {
		tap_diag("create %s QP: %s", ud ? "UD" : "RC", strerror(errno));
		return false;
	}
	m.v[2] = n.qp->qp_num;
	m.v[3] = n.psn;
	m.v[4] = min_rnr;
	memcpy(m.gid, n.gid.raw, sizeof(m.gid));
	if (rpc(&m)) {
		tap_diag("server CONNECT failed: %s", strerror(m.v[0]));
		return false;
	}
	pr.qpn = m.v[1];
	pr.psn = m.v[2];
	pr.addr = m.v[3];
	pr.rkey = m.v[4];
	pr.ro_addr = m.v[5];
	pr.ro_rkey = m.v[6];
	pr.vendor_id = m.v[7];
	memcpy(pr.dev, &m.v[8], 16);
	memcpy(pr.gid.raw, m.gid, sizeof(pr.gid.raw));
	r = ud ? qp_rts_ud() : qp_rts_rc(pr.qpn, pr.psn, &pr.gid, min_rnr,
					  rnr_retry);
	if (r) {
		tap_diag("modify %s QP to RTS: %s", ud ? "UD" : "RC",
			 strerror(errno));
		return false;
	}
	return true;
}

static bool fresh_rc(void)
{
	return fresh_pair(false, 12, 7);
}

/* ---- client: posting and expecting ---------------------------------- */

struct wr {
	enum ibv_wr_opcode op;
	const struct seg *sg;
	int nsge;
	unsigned int flags;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t imm;		/* host order; the rkey to invalidate for _INV */
	uint64_t cmp, val;	/* atomics: compare (or add), swap */
	uint64_t id;
	struct ibv_ah *ah;	/* UD */
};

/* Posts @count work requests as one chained list. */
static bool post(const struct wr *w, int count)
{
	struct ibv_send_wr s[8], *bad;
	struct ibv_sge sge[8][8];
	int i, j;

	if (count > 8)
		return false;
	memset(s, 0, sizeof(s));
	for (i = 0; i < count; i++) {
		for (j = 0; j < w[i].nsge && j < 8; j++) {
			sge[i][j].addr = (uintptr_t)(n.buf + w[i].sg[j].off);
			sge[i][j].length = w[i].sg[j].len;
			sge[i][j].lkey = n.mr->lkey;
		}
		s[i].wr_id = w[i].id;
		s[i].next = i + 1 < count ? &s[i + 1] : NULL;
		s[i].sg_list = sge[i];
		s[i].num_sge = w[i].nsge;
		s[i].opcode = w[i].op;
		s[i].send_flags = w[i].flags;
		if (w[i].op == IBV_WR_SEND_WITH_INV)
			s[i].invalidate_rkey = w[i].imm;
		else
			s[i].imm_data = htobe32(w[i].imm);
		if (w[i].op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
		    w[i].op == IBV_WR_ATOMIC_CMP_AND_SWP) {
			s[i].wr.atomic.remote_addr = w[i].raddr;
			s[i].wr.atomic.rkey = w[i].rkey;
			s[i].wr.atomic.compare_add = w[i].cmp;
			s[i].wr.atomic.swap = w[i].val;
		} else if (w[i].ah) {
			s[i].wr.ud.ah = w[i].ah;
			s[i].wr.ud.remote_qpn = pr.qpn;
			s[i].wr.ud.remote_qkey = QKEY;
		} else {
			s[i].wr.rdma.remote_addr = w[i].raddr;
			s[i].wr.rdma.rkey = w[i].rkey;
		}
	}
	post_ret = ibv_post_send(n.qp, s, &bad);
	if (post_ret) {
		tap_diag("ibv_post_send returned %d (%s)", post_ret,
			 strerror(abs(post_ret)));
		return false;
	}
	return true;
}

/* Checks a completion: @got, its status, and (on success) opcode, wr_id. */
static bool expect_wc(const char *who, const struct ibv_wc *wc, bool got,
		      enum ibv_wc_status st, int opcode, uint64_t wr_id)
{
	if (!got) {
		tap_diag("%s: no completion", who);
		return false;
	}
	if (wc->status != st) {
		tap_diag("%s: status %s (%d), want %s", who,
			 ibv_wc_status_str(wc->status), wc->status,
			 ibv_wc_status_str(st));
		return false;
	}
	if (wc->wr_id != wr_id) {
		tap_diag("%s: wr_id %llu, want %llu", who,
			 (unsigned long long)wc->wr_id,
			 (unsigned long long)wr_id);
		return false;
	}
	if (st == IBV_WC_SUCCESS && (int)wc->opcode != opcode) {
		tap_diag("%s: opcode %d, want %d", who, wc->opcode, opcode);
		return false;
	}
	return true;
}

static bool expect_eq(const char *what, uint64_t got, uint64_t want)
{
	if (got == want)
		return true;
	tap_diag("%s: 0x%llx, want 0x%llx", what, (unsigned long long)got,
		 (unsigned long long)want);
	return false;
}

static bool local_wc(enum ibv_wc_status st, int opcode, uint64_t wr_id,
		     struct ibv_wc *wc)
{
	return expect_wc("requester", wc, cq_wait(wc, WAIT_MS), st, opcode,
			 wr_id);
}

static bool remote_wc(int opcode, uint64_t wr_id, struct ibv_wc *wc)
{
	return expect_wc("responder", wc, r_wait(wc, WAIT_MS),
			 IBV_WC_SUCCESS, opcode, wr_id);
}

/* After a failed case on the shared pair: start the next from scratch. */
static void reset_if(bool ok)
{
	if (!ok && !fresh_rc())
		tap_diag("could not reconnect after a failure");
}

static const char *size_name(uint64_t len)
{
	static char b[32];

	if (len == MIB)
		return "1 MiB";
	snprintf(b, sizeof(b), "%llu bytes", (unsigned long long)len);
	return b;
}

/* ---- client: the cases ------------------------------------------------ */

/* SEND or SEND_WITH_IMM of @len bytes from one SGE into one receive. */
static void case_send(uint64_t len, bool imm, bool inl)
{
	uint32_t seed = next_seed();
	struct seg ls = { L_SRC, len }, rs = { R_DATA, len + GUARD };
	struct wr w = {
		.op = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.sg = &ls, .nsge = len ? 1 : 0, .imm = seed, .id = seed,
		.flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0),
	};
	struct ibv_wc lwc, rwc;
	bool ok = true;

	fill(n.buf + L_SRC, len, seed, 0);
	ok &= rfill_span(MEM_RW, R_DATA, len, CANARY);
	ok &= r_recv(seed, &rs, 1);
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_SEND, seed, &lwc);
	ok &= remote_wc(IBV_WC_RECV, seed, &rwc);
	ok &= expect_eq("responder byte_len", rwc.byte_len, len);
	ok &= expect_eq("responder WITH_IMM",
			!!(rwc.wc_flags & IBV_WC_WITH_IMM), imm);
	if (imm)
		ok &= expect_eq("responder imm", be32toh(rwc.imm_data), seed);
	ok &= rcheck_span(MEM_RW, R_DATA, len, seed);
	ok &= lcheck(L_SRC, len, seed, 0);
	tap_ok(ok, "%s%s, %s: completions, byte_len%s, data and guards",
	       imm ? "SEND_WITH_IMM" : "SEND", inl ? " inline" : "",
	       size_name(len), imm ? ", imm" : "");
	reset_if(ok);
}

/* RDMA WRITE (WITH_IMM) of @len bytes into the server's buffer. */
static void case_write(uint64_t len, bool imm, bool inl)
{
	uint32_t seed = next_seed();
	struct seg ls = { L_SRC, len };
	struct wr w = {
		.op = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
		.sg = &ls, .nsge = len ? 1 : 0, .imm = seed, .id = seed,
		.flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0),
		.raddr = pr.addr + R_DATA, .rkey = pr.rkey,
	};
	struct ibv_wc lwc, rwc;
	bool ok = true;

	fill(n.buf + L_SRC, len, seed, 0);
	ok &= rfill_span(MEM_RW, R_DATA, len, CANARY);
	if (imm)
		ok &= r_recv(seed, NULL, 0);
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, seed, &lwc);
	if (imm) {
		ok &= remote_wc(IBV_WC_RECV_RDMA_WITH_IMM, seed, &rwc);
		ok &= expect_eq("responder byte_len", rwc.byte_len, len);
		ok &= expect_eq("responder WITH_IMM",
				!!(rwc.wc_flags & IBV_WC_WITH_IMM), 1);
		ok &= expect_eq("responder imm", be32toh(rwc.imm_data), seed);
	}
	ok &= rcheck_span(MEM_RW, R_DATA, len, seed);
	tap_ok(ok, "RDMA_WRITE%s%s, %s: completion%s, data and guards",
	       imm ? "_WITH_IMM" : "", inl ? " inline" : "", size_name(len),
	       imm ? "s, byte_len, imm" : "");
	reset_if(ok);
}

/* RDMA READ of @len bytes of the server's buffer. */
static void case_read(uint64_t len)
{
	uint32_t seed = next_seed();
	struct seg ls = { L_DST, len };
	struct wr w = {
		.op = IBV_WR_RDMA_READ, .sg = &ls, .nsge = len ? 1 : 0,
		.id = seed, .flags = IBV_SEND_SIGNALED,
		.raddr = pr.addr + R_DATA, .rkey = pr.rkey,
	};
	struct ibv_wc lwc;
	bool ok = true;

	ok &= rfill_span(MEM_RW, R_DATA, len, seed);
	lfill_span(L_DST, len, CANARY);
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_RDMA_READ, seed, &lwc);
	ok &= expect_eq("requester byte_len", lwc.byte_len, len);
	ok &= lcheck_span(L_DST, len, seed);
	ok &= rcheck_span(MEM_RW, R_DATA, len, seed);
	tap_ok(ok, "RDMA_READ, %s: completion, byte_len, data and guards",
	       size_name(len));
	reset_if(ok);
}

static bool have_atomics(void)
{
	return n.dev.atomic_cap != IBV_ATOMIC_NONE;
}

/*
 * One atomic on the 8 bytes at R_ATOM holding @init; checks the fetched
 * value, the remote value against @expect, and the guards on both sides.
 */
static bool atomic_op(enum ibv_wr_opcode op, uint64_t init, uint64_t cmp,
		      uint64_t val, uint64_t expect)
{
	uint32_t seed = next_seed();
	struct seg ls = { L_RES, 8 };
	struct wr w = {
		.op = op, .sg = &ls, .nsge = 1, .id = seed,
		.flags = IBV_SEND_SIGNALED, .raddr = pr.addr + R_ATOM,
		.rkey = pr.rkey, .cmp = cmp, .val = val,
	};
	struct ibv_wc lwc;
	uint64_t old;
	bool ok = true;

	ok &= rfill_span(MEM_RW, R_ATOM, 8, CANARY) && rset64(R_ATOM, init);
	lfill_span(L_RES, 8, CANARY);
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_SUCCESS, op == IBV_WR_ATOMIC_FETCH_AND_ADD ?
		       IBV_WC_FETCH_ADD : IBV_WC_COMP_SWAP, seed, &lwc);
	ok &= expect_eq("requester byte_len", lwc.byte_len, 8);
	memcpy(&old, n.buf + L_RES, 8);
	ok &= expect_eq("fetched old value", old, init);
	ok &= expect_eq("remote value", rget64(R_ATOM), expect);
	ok &= lcheck(L_RES - GUARD, GUARD, CANARY, 0) &&
	      lcheck(L_RES + 8, GUARD, CANARY, 0);
	ok &= rcheck(MEM_RW, R_ATOM - GUARD, GUARD, CANARY, 0) &&
	      rcheck(MEM_RW, R_ATOM + 8, GUARD, CANARY, 0);
	return ok;
}

static void case_atomics(bool all)
{
	const uint64_t init = 0x0123456789abcdefull, add = 0x1000000000000011ull;
	bool ok;

	if (!have_atomics()) {
		tap_skip("atomics: the device reports IBV_ATOMIC_NONE");
		return;
	}
	ok = atomic_op(IBV_WR_ATOMIC_FETCH_AND_ADD, init, add, 0, init + add);
	tap_ok(ok, "ATOMIC_FETCH_AND_ADD: old value returned, remote = old + add, guards");
	reset_if(ok);
	ok = atomic_op(IBV_WR_ATOMIC_FETCH_AND_ADD, ~0ull, 2, 0, 1);
	tap_ok(ok, "ATOMIC_FETCH_AND_ADD wraps around 2^64");
	reset_if(ok);
	ok = atomic_op(IBV_WR_ATOMIC_CMP_AND_SWP, init, init, ~init, ~init);
	tap_ok(ok, "ATOMIC_CMP_AND_SWP, equal: old value returned, remote swapped");
	reset_if(ok);
	if (!all)
		return;
	ok = atomic_op(IBV_WR_ATOMIC_CMP_AND_SWP, init, init ^ 1, ~init, init);
	tap_ok(ok, "ATOMIC_CMP_AND_SWP, not equal: old value returned, remote unchanged");
	reset_if(ok);
}

/*
 * One ibv_wr_atomic_write() of @val to @raddr with @rkey; its completion
 * must have @status. Returns false if anything else happened.
 */
static bool atomic_write_op(uint64_t raddr, uint32_t rkey, uint64_t val,
			    enum ibv_wc_status status)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(n.qp);
	uint32_t seed = next_seed();
	struct ibv_wc wc;
	int ret;

	if (!x || !x->wr_atomic_write) {
		tap_diag("the RC QP has no ibv_wr_atomic_write");
		return false;
	}
	ibv_wr_start(x);
	x->wr_id = seed;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, rkey, raddr, &val);
	ret = ibv_wr_complete(x);
	if (ret) {
		tap_diag("ibv_wr_complete: %s", strerror(ret));
		return false;
	}
	return local_wc(status, IBV_WC_ATOMIC_WRITE, seed, &wc);
}

static void case_atomic_write(void)
{
	const uint64_t init = 0x0123456789abcdefull, val = 0xfedcba9876543210ull;
	struct ibv_qp_ex *x;
	const char *how;
	struct ibv_wc wc;
	uint32_t seed;
	bool ok;
	int ret;

	if (!atomic_write) {
		tap_skip("ibv_wr_atomic_write: not asked for (--atomic-write)");
		return;
	}
	ok = rfill_span(MEM_RW, R_ATOM, 8, CANARY) && rset64(R_ATOM, init);
	ok &= atomic_write_op(pr.addr + R_ATOM, pr.rkey, val, IBV_WC_SUCCESS);
	ok &= expect_eq("remote value", rget64(R_ATOM), val);
	ok &= rcheck(MEM_RW, R_ATOM - GUARD, GUARD, CANARY, 0) &&
	      rcheck(MEM_RW, R_ATOM + 8, GUARD, CANARY, 0);
	tap_ok(ok, "ATOMIC_WRITE: IBV_WC_ATOMIC_WRITE, the 8 bytes landed, guards");
	reset_if(ok);

	/* The provider may refuse it (vroce), or the responder (rdma_rxe's). */
	x = ibv_qp_to_qp_ex(n.qp);
	ok = x && x->wr_atomic_write &&
	     rfill_span(MEM_RW, R_ATOM, 16, CANARY) && rset64(R_ATOM, init);
	how = "?";
	if (ok) {
		seed = next_seed();
		ibv_wr_start(x);
		x->wr_id = seed;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(x, pr.rkey, pr.addr + R_ATOM + 4, &val);
		ret = ibv_wr_complete(x);
		if (ret == EINVAL) {
			how = "refused at ibv_wr_complete (EINVAL)";
			ok = !cq_wait(&wc, 100);
		} else {
			how = "IBV_WC_REM_INV_REQ_ERR";
			ok = !ret && local_wc(IBV_WC_REM_INV_REQ_ERR, 0, seed,
					      &wc);
		}
	}
	ok &= expect_eq("remote value", rget64(R_ATOM), init);
	ok &= rcheck(MEM_RW, R_ATOM + 8, 8 + GUARD, CANARY, 0) &&
	      rcheck(MEM_RW, R_ATOM - GUARD, GUARD, CANARY, 0);
	tap_ok(ok, "ATOMIC_WRITE at addr %% 8 == 4: %s, memory untouched", how);
	reset_if(false);

	seed = next_seed();
	ok = rfill(MEM_RO, 0, RO_SIZE, seed, 0);
	ok &= atomic_write_op(pr.ro_addr + 64, pr.ro_rkey, val,
			      IBV_WC_REM_ACCESS_ERR);
	ok &= rcheck(MEM_RO, 0, RO_SIZE, seed, 0);
	tap_ok(ok, "ATOMIC_WRITE with an R_Key without remote write: IBV_WC_REM_ACCESS_ERR");
	reset_if(false);	/* the QP is in ERR */
}

/* Five SGEs of the client, spanning 16 pages, crossing page boundaries. */
static const struct seg sg_local[] = {
	{ L_SG + 100, 5000 },
	{ L_SG + 3 * PAGE - 1, 3 },
	{ L_SG + 5 * PAGE + 1, 12289 },
	{ L_SG + 9 * PAGE - 1000, 2000 },
	{ L_SG + 12 * PAGE + 4000, 9000 },
};
#define SG_N		5
#define SG_TOTAL	(5000 + 3 + 12289 + 2000 + 9000)

/* Three receive SGEs of the server; the last one is longer than needed. */
static const struct seg sg_remote[] = {
	{ R_SG + 8, PAGE + 13 },
	{ R_SG + 4 * PAGE + 1, 9000 },
	{ R_SG + 8 * PAGE + 3, SG_TOTAL - PAGE - 13 - 9000 + GUARD },
};

/*
 * Checks an area of 16 pages at @area (local or server memory) where the
 * stream @seed of @total bytes was scattered over @s: the pieces hold the
 * stream, everything else is guard bytes.
 */
static bool check_scatter(bool remote, uint64_t area, const struct seg *s,
			  int ns, uint64_t total, uint32_t seed)
{
	uint64_t pos = area, base = 0, used;
	bool ok = true;
	int i;

	for (i = 0; i < ns; i++) {
		used = s[i].len < total - base ? s[i].len : total - base;
		if (remote) {
			ok &= rcheck(MEM_RW, pos, s[i].off - pos, CANARY, 0);
			ok &= rcheck(MEM_RW, s[i].off, used, seed, base);
		} else {
			ok &= lcheck(pos, s[i].off - pos, CANARY, 0);
			ok &= lcheck(s[i].off, used, seed, base);
		}
		pos = s[i].off + used;
		base += used;
	}
	if (remote)
		ok &= rcheck(MEM_RW, pos, area + 16 * PAGE - pos, CANARY, 0);
	else
		ok &= lcheck(pos, area + 16 * PAGE - pos, CANARY, 0);
	return ok;
}

static void fill_gather(uint32_t seed)
{
	uint64_t base = 0;
	int i;

	fill(n.buf + L_SG, 16 * PAGE, CANARY, 0);
	for (i = 0; i < SG_N; i++) {
		fill(n.buf + sg_local[i].off, sg_local[i].len, seed, base);
		base += sg_local[i].len;
	}
}

/* SEND gathered from 5 SGEs, scattered into a receive of 3 SGEs. */
static void case_sgl_send(void)
{
	uint32_t seed = next_seed();
	struct wr w = {
		.op = IBV_WR_SEND, .sg = sg_local, .nsge = SG_N, .id = seed,
		.flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc lwc, rwc;
	bool ok = true;

	fill_gather(seed);
	ok &= rfill(MEM_RW, R_SG, 16 * PAGE, CANARY, 0);
	ok &= r_recv(seed, sg_remote, 3);
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_SEND, seed, &lwc);
	ok &= remote_wc(IBV_WC_RECV, seed, &rwc);
	ok &= expect_eq("responder byte_len", rwc.byte_len, SG_TOTAL);
	ok &= check_scatter(true, R_SG, sg_remote, 3, SG_TOTAL, seed);
	tap_ok(ok, "SEND of %u bytes from %d SGEs over 16 pages into a 3-SGE receive: data and guards",
	       SG_TOTAL, SG_N);
	reset_if(ok);
}

/* RDMA WRITE gathered from 5 SGEs into one contiguous remote range. */
static void case_sgl_write(void)
{
	uint32_t seed = next_seed();
	struct wr w = {
		.op = IBV_WR_RDMA_WRITE, .sg = sg_local, .nsge = SG_N,
		.id = seed, .flags = IBV_SEND_SIGNALED,
		.raddr = pr.addr + R_DATA, .rkey = pr.rkey,
	};
	struct ibv_wc lwc;
	bool ok = true;

	fill_gather(seed);
	ok &= rfill_span(MEM_RW, R_DATA, SG_TOTAL, CANARY);
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, seed, &lwc);
	ok &= rcheck_span(MEM_RW, R_DATA, SG_TOTAL, seed);
	tap_ok(ok, "RDMA_WRITE of %u bytes gathered from %d SGEs: data and guards",
	       SG_TOTAL, SG_N);
	reset_if(ok);
}

/* RDMA READ of one contiguous remote range scattered into 5 SGEs. */
static void case_sgl_read(void)
{
	uint32_t seed = next_seed();
	struct wr w = {
		.op = IBV_WR_RDMA_READ, .sg = sg_local, .nsge = SG_N,
		.id = seed, .flags = IBV_SEND_SIGNALED,
		.raddr = pr.addr + R_DATA, .rkey = pr.rkey,
	};
	struct ibv_wc lwc;
	bool ok = true;

	fill(n.buf + L_SG, 16 * PAGE, CANARY, 0);
	ok &= rfill_span(MEM_RW, R_DATA, SG_TOTAL, seed);
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_RDMA_READ, seed, &lwc);
	ok &= expect_eq("requester byte_len", lwc.byte_len, SG_TOTAL);
	ok &= check_scatter(false, L_SG, sg_local, SG_N, SG_TOTAL, seed);
	tap_ok(ok, "RDMA_READ of %u bytes scattered into %d SGEs: data and guards",
	       SG_TOTAL, SG_N);
	reset_if(ok);
}

/*
 * A chain of 6 requests, SENDs and RDMA WRITEs, of which only #2 and #5
 * are signaled: exactly those two complete on the requester, every SEND
 * completes on the responder in order, all the data lands.
 */
static void case_unsignaled(void)
{
	uint32_t seed = next_seed();
	struct seg ls[6], rs;
	struct wr w[6];
	struct ibv_wc wc;
	bool ok = true;
	int k;

	ok &= rfill(MEM_RW, R_DATA - GUARD, 6 * PAGE + GUARD, CANARY, 0);
	memset(w, 0, sizeof(w));
	for (k = 0; k < 6; k++) {
		ls[k].off = L_SRC + k * PAGE;
		ls[k].len = 100 + 37 * k;
		fill(n.buf + ls[k].off, ls[k].len, seed + k, 0);
		w[k].sg = &ls[k];
		w[k].nsge = 1;
		w[k].id = k;
		w[k].flags = k == 2 || k == 5 ? IBV_SEND_SIGNALED : 0;
		if (k == 1 || k == 4) {
			w[k].op = IBV_WR_RDMA_WRITE;
			w[k].raddr = pr.addr + R_DATA + k * PAGE;
			w[k].rkey = pr.rkey;
		} else {
			w[k].op = IBV_WR_SEND;
			rs.off = R_DATA + k * PAGE;
			rs.len = PAGE - GUARD;
			ok &= r_recv(k, &rs, 1);
		}
	}
	ok &= post(w, 6);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_SEND, 2, &wc);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_SEND, 5, &wc);
	if (cq_wait(&wc, 200)) {
		tap_diag("an unsignaled request completed: wr_id %llu",
			 (unsigned long long)wc.wr_id);
		ok = false;
	}
	for (k = 0; k < 6; k++) {
		if (w[k].op == IBV_WR_SEND) {
			ok &= remote_wc(IBV_WC_RECV, k, &wc);
			ok &= expect_eq("responder byte_len", wc.byte_len,
					ls[k].len);
		}
		ok &= rcheck(MEM_RW, R_DATA + k * PAGE, ls[k].len, seed + k, 0);
		ok &= rcheck(MEM_RW, R_DATA + k * PAGE + ls[k].len,
			     PAGE - ls[k].len, CANARY, 0);
	}
	tap_ok(ok, "4 unsignaled + 2 signaled SEND/RDMA_WRITE: only the signaled complete, all data lands");
	reset_if(ok);
}

/*
 * The responder's completion of a SEND_WITH_INV must carry IBV_WC_WITH_INV.
 * rdma_rxe copies the kernel's IB_WC_WITH_INVALIDATE (bit 2) into the
 * user CQE unconverted, where bit 2 reads as IBV_WC_IP_CSUM_OK; accept
 * that only from a responder whose device is named rxe* (as the VM tests
 * name rdma_rxe devices), and say so.
 */
static bool expect_inv_flag(unsigned int flags)
{
	if (flags & IBV_WC_WITH_INV)
		return true;
	if (!strncmp(pr.dev, "rxe", 3) && (flags & IBV_WC_IP_CSUM_OK)) {
		tap_diag("rdma_rxe responder: wc_flags 0x%x has the kernel's IB_WC_WITH_INVALIDATE bit, not IBV_WC_WITH_INV (known rxe quirk)",
			 flags);
		return true;
	}
	tap_diag("responder wc_flags 0x%x lack IBV_WC_WITH_INV", flags);
	return false;
}

/*
 * SEND_WITH_INV on a fresh pair: the server binds a type 2 MW over
 * R_MW; an RDMA WRITE through it works; SEND_WITH_INV of its rkey gives the
 * responder IBV_WC_WITH_INV and the rkey; then a WRITE through it fails.
 */
static void case_send_inv(void)
{
	uint32_t seed = next_seed();
	struct xchg_msg m = { .v = { C_BIND, R_MW, MW_LEN } };
	struct seg ls = { L_SRC, 100 }, rs = { R_DATA, 32 + GUARD };
	struct wr w = {
		.op = IBV_WR_RDMA_WRITE, .sg = &ls, .nsge = 1, .id = 1,
		.flags = IBV_SEND_SIGNALED, .raddr = pr.addr + R_MW,
	};
	struct ibv_wc lwc, rwc;
	uint32_t mwkey;
	bool ok;

	if (!(n.dev.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS)) {
		tap_skip("SEND_WITH_INV: no IBV_DEVICE_MEM_MGT_EXTENSIONS");
		return;
	}
	ok = fresh_rc();
	w.raddr = pr.addr + R_MW;
	if (!ok || rpc(&m)) {
		tap_ok(false, "SEND_WITH_INV: the server binds a type 2 MW (status %llu)",
		       (unsigned long long)m.v[0]);
		reset_if(false);
		return;
	}
	mwkey = m.v[1];
	w.rkey = mwkey;
	fill(n.buf + L_SRC, 100, seed, 0);
	ok &= rfill_span(MEM_RW, R_MW, MW_LEN - GUARD, CANARY);
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 1, &lwc);
	ok &= rcheck(MEM_RW, R_MW, 100, seed, 0) &&
	      rcheck(MEM_RW, R_MW + 100, GUARD, CANARY, 0);
	tap_ok(ok, "RDMA_WRITE through a bound type 2 MW (rkey 0x%x)", mwkey);

	ok = true;
	ls.len = 32;
	w = (struct wr){
		.op = IBV_WR_SEND_WITH_INV, .sg = &ls, .nsge = 1, .id = 2,
		.flags = IBV_SEND_SIGNALED, .imm = mwkey,
	};
	ok &= rfill_span(MEM_RW, R_DATA, 32, CANARY);
	ok &= r_recv(2, &rs, 1);
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_SEND, 2, &lwc);
	ok &= remote_wc(IBV_WC_RECV, 2, &rwc);
	ok &= expect_inv_flag(rwc.wc_flags);
	ok &= expect_eq("responder WITH_IMM", !!(rwc.wc_flags & IBV_WC_WITH_IMM),
			0);
	ok &= expect_eq("invalidated rkey", rwc.invalidated_rkey, mwkey);
	ok &= expect_eq("responder byte_len", rwc.byte_len, 32);
	ok &= rcheck_span(MEM_RW, R_DATA, 32, seed);
	tap_ok(ok, "SEND_WITH_INV: responder gets IBV_WC_WITH_INV, the rkey, byte_len, data");

	ok = true;
	ls.len = 100;
	fill(n.buf + L_SRC, 100, seed + 1, 0);
	w = (struct wr){
		.op = IBV_WR_RDMA_WRITE, .sg = &ls, .nsge = 1, .id = 3,
		.flags = IBV_SEND_SIGNALED, .raddr = pr.addr + R_MW,
		.rkey = mwkey,
	};
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_REM_ACCESS_ERR, 0, 3, &lwc);
	ok &= rcheck(MEM_RW, R_MW, 100, seed, 0) &&
	      rcheck(MEM_RW, R_MW + 100, GUARD, CANARY, 0);
	tap_ok(ok, "RDMA_WRITE through the invalidated MW: IBV_WC_REM_ACCESS_ERR, memory untouched");
	reset_if(false);
}

/*
 * An RDMA WRITE (or READ) of @len bytes at @raddr/@rkey on a fresh pair
 * that must fail with @st; the server's bytes [@area, @area + @alen) are
 * guard bytes before and must still be, as must the client's target.
 */
static bool err_rdma(enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
		     uint32_t len, uint64_t area, uint64_t alen,
		     enum ibv_wc_status st)
{
	uint32_t seed = next_seed();
	struct seg ls = { op == IBV_WR_RDMA_READ ? L_DST : L_SRC, len };
	struct wr w = {
		.op = op, .sg = &ls, .nsge = 1, .id = seed,
		.flags = IBV_SEND_SIGNALED, .raddr = raddr, .rkey = rkey,
	};
	struct ibv_wc lwc;
	bool ok;

	ok = fresh_rc();
	if (op == IBV_WR_RDMA_READ)
		lfill_span(L_DST, len, CANARY);
	else
		fill(n.buf + L_SRC, len, seed, 0);
	ok &= rfill(MEM_RW, area, alen, CANARY, 0);
	ok &= post(&w, 1);
	ok &= local_wc(st, 0, seed, &lwc);
	if (lwc.status != IBV_WC_SUCCESS)
		tap_diag("requester status: %s", ibv_wc_status_str(lwc.status));
	ok &= rcheck(MEM_RW, area, alen, CANARY, 0);
	if (op == IBV_WR_RDMA_READ)
		ok &= lcheck_span(L_DST, len, CANARY);
	return ok;
}

static void case_errors(bool all)
{
	uint64_t end = pr.addr + BUF_SIZE;
	bool ok;

	ok = err_rdma(IBV_WR_RDMA_WRITE, pr.addr + R_DATA, pr.rkey ^ 0x5a, 512,
		      R_DATA - GUARD, 512 + 2 * GUARD, IBV_WC_REM_ACCESS_ERR);
	tap_ok(ok, "RDMA_WRITE with a bad rkey: IBV_WC_REM_ACCESS_ERR, memory untouched");
	if (!all)
		return;
	ok = err_rdma(IBV_WR_RDMA_READ, pr.addr + R_DATA, pr.rkey ^ 0x5a, 512,
		      R_DATA - GUARD, 512 + 2 * GUARD, IBV_WC_REM_ACCESS_ERR);
	tap_ok(ok, "RDMA_READ with a bad rkey: IBV_WC_REM_ACCESS_ERR, nothing read");
	/*
	 * 3000 bytes from 1500 before the end of the MR: the first packet
	 * alone would fit, but the whole request must be refused.
	 */
	ok = err_rdma(IBV_WR_RDMA_WRITE, end - 1500, pr.rkey, 3000,
		      BUF_SIZE - 4096, 4096 + BUF_SLACK, IBV_WC_REM_ACCESS_ERR);
	tap_ok(ok, "RDMA_WRITE across the end of the MR: IBV_WC_REM_ACCESS_ERR, memory untouched");
	ok = err_rdma(IBV_WR_RDMA_READ, end - 1500, pr.rkey, 3000,
		      BUF_SIZE - 4096, 4096 + BUF_SLACK, IBV_WC_REM_ACCESS_ERR);
	tap_ok(ok, "RDMA_READ across the end of the MR: IBV_WC_REM_ACCESS_ERR, nothing read");
}

/*
 * FETCH_AND_ADD at an address that is not 8-byte aligned. The responder
 * must NAK it as an Invalid Request, which the requester completes with
 * IBV_WC_REM_INV_REQ_ERR (rdma_rxe's responder does so). rdma_rxe's
 * provider never sends it: ibv_post_send refuses it with EINVAL (its
 * validate_send_wr), which is accepted too, as long as nothing happens.
 */
static void case_err_unaligned_atomic(void)
{
	uint32_t seed = next_seed();
	const uint64_t init = 0x5555aaaa5555aaaaull;
	struct seg ls = { L_RES, 8 };
	struct wr w = {
		.op = IBV_WR_ATOMIC_FETCH_AND_ADD, .sg = &ls, .nsge = 1,
		.id = seed, .flags = IBV_SEND_SIGNALED,
		.raddr = pr.addr + R_ATOM + 4, .rkey = pr.rkey, .cmp = 1,
	};
	struct ibv_wc lwc;
	const char *how;
	bool ok;

	if (!have_atomics()) {
		tap_skip("unaligned atomic: the device reports IBV_ATOMIC_NONE");
		return;
	}
	ok = fresh_rc();
	w.raddr = pr.addr + R_ATOM + 4;
	w.rkey = pr.rkey;
	ok &= rfill_span(MEM_RW, R_ATOM, 16, CANARY) && rset64(R_ATOM, init);
	lfill_span(L_RES, 8, CANARY);
	if (post(&w, 1)) {
		ok &= local_wc(IBV_WC_REM_INV_REQ_ERR, 0, seed, &lwc);
		how = "IBV_WC_REM_INV_REQ_ERR";
	} else if (post_ret == EINVAL || post_ret == -EINVAL) {
		/* The provider may refuse it before it reaches the wire. */
		tap_diag("refused by ibv_post_send (%d): nothing sent",
			 post_ret);
		ok &= !cq_wait(&lwc, 100);
		how = "refused at post (EINVAL)";
	} else {
		ok = false;
		how = "?";
	}
	ok &= expect_eq("remote value", rget64(R_ATOM), init);
	ok &= rcheck(MEM_RW, R_ATOM + 8, 8 + GUARD, CANARY, 0) &&
	      rcheck(MEM_RW, R_ATOM - GUARD, GUARD, CANARY, 0);
	ok &= lcheck_span(L_RES, 8, CANARY);
	tap_ok(ok, "ATOMIC_FETCH_AND_ADD at addr %% 8 == 4: %s, memory untouched",
	       how);
	reset_if(false);
}

/* The server's second MR allows remote read but not remote write. */
static void case_err_permission(void)
{
	uint32_t seed = next_seed();
	struct seg ls = { L_DST, 512 };
	struct wr w = {
		.op = IBV_WR_RDMA_READ, .sg = &ls, .nsge = 1, .id = 1,
		.flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc lwc;
	bool ok;

	ok = fresh_rc();
	w.raddr = pr.ro_addr + 1024;
	w.rkey = pr.ro_rkey;
	ok &= rfill(MEM_RO, 0, RO_SIZE, seed, 0);
	lfill_span(L_DST, 512, CANARY);
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 1, &lwc);
	ok &= lcheck(L_DST, 512, seed, 1024);
	ok &= lcheck(L_DST - GUARD, GUARD, CANARY, 0) &&
	      lcheck(L_DST + 512, GUARD, CANARY, 0);
	tap_ok(ok, "RDMA_READ from an MR without REMOTE_WRITE works");

	ok = true;
	ls.off = L_SRC;
	fill(n.buf + L_SRC, 512, seed + 1, 0);
	w.op = IBV_WR_RDMA_WRITE;
	w.id = 2;
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_REM_ACCESS_ERR, 0, 2, &lwc);
	ok &= rcheck(MEM_RO, 0, RO_SIZE, seed, 0);
	tap_ok(ok, "RDMA_WRITE into an MR without REMOTE_WRITE: IBV_WC_REM_ACCESS_ERR, memory untouched");
	reset_if(false);
}

/*
 * Receiver not ready: a SEND with no receive posted. With rnr_retry 7
 * (infinite) it waits and completes once the receive comes ~200 ms later;
 * with rnr_retry 1 and the shortest RNR timer it fails.
 */
static void case_rnr_wait(void)
{
	uint32_t seed = next_seed();
	struct seg ls = { L_SRC, 300 }, rs = { R_DATA, 300 + GUARD };
	struct wr w = {
		.op = IBV_WR_SEND, .sg = &ls, .nsge = 1, .id = seed,
		.flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc lwc, rwc;
	bool ok;

	ok = fresh_pair(false, 14, 7);
	fill(n.buf + L_SRC, 300, seed, 0);
	ok &= rfill_span(MEM_RW, R_DATA, 300, CANARY);
	ok &= post(&w, 1);
	if (cq_wait(&lwc, 200)) {
		tap_diag("the SEND completed (%s) with no receive posted",
			 ibv_wc_status_str(lwc.status));
		ok = false;
	}
	ok &= r_recv(seed, &rs, 1);
	ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_SEND, seed, &lwc);
	ok &= remote_wc(IBV_WC_RECV, seed, &rwc);
	ok &= expect_eq("responder byte_len", rwc.byte_len, 300);
	ok &= rcheck_span(MEM_RW, R_DATA, 300, seed);
	tap_ok(ok, "RNR, rnr_retry 7: the SEND waits for a receive posted 200 ms later, then completes");
	reset_if(false);
}

static void case_rnr_fail(void)
{
	uint32_t seed = next_seed();
	struct seg ls = { L_SRC, 300 };
	struct wr w = {
		.op = IBV_WR_SEND, .sg = &ls, .nsge = 1, .id = seed,
		.flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc lwc, rwc;
	bool ok;

	ok = fresh_pair(false, 1, 1);
	fill(n.buf + L_SRC, 300, seed, 0);
	ok &= rfill_span(MEM_RW, R_DATA, 300, CANARY);
	ok &= post(&w, 1);
	ok &= local_wc(IBV_WC_RNR_RETRY_EXC_ERR, 0, seed, &lwc);
	if (r_wait(&rwc, 0)) {
		tap_diag("the responder completed something: %s",
			 ibv_wc_status_str(rwc.status));
		ok = false;
	}
	ok &= rcheck_span(MEM_RW, R_DATA, 300, CANARY);
	tap_ok(ok, "RNR, rnr_retry 1: IBV_WC_RNR_RETRY_EXC_ERR, memory untouched");
	reset_if(false);
}

/* UD SENDs of each size in @sizes; the receive gets a 40-byte GRH first. */
static void case_ud(const uint64_t *sizes, int count)
{
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	struct ibv_wc lwc, rwc;
	uint64_t max = 128u << n.port.active_mtu, len;
	bool ok;
	int i;

	ok = fresh_pair(true, 0, 0);
	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.dgid = pr.gid;
	aa.grh.sgid_index = n.gid_idx;
	aa.grh.hop_limit = 64;
	ah = ok ? ibv_create_ah(n.pd, &aa) : NULL;
	if (!ah) {
		tap_ok(false, "UD QP pair and address handle (%s)",
		       strerror(errno));
		reset_if(false);
		return;
	}
	for (i = 0; i < count; i++) {
		uint32_t seed = next_seed();
		struct seg ls, rs;
		struct wr w = {
			.op = IBV_WR_SEND, .sg = &ls, .id = seed, .ah = ah,
			.flags = IBV_SEND_SIGNALED,
		};

		len = sizes[i] > max ? max : sizes[i];
		ls = (struct seg){ L_SRC, len };
		rs = (struct seg){ R_DATA - GRH_LEN, GRH_LEN + len + GUARD };
		w.nsge = len ? 1 : 0;
		ok = true;
		fill(n.buf + L_SRC, len, seed, 0);
		ok &= rfill_span(MEM_RW, R_DATA - GRH_LEN, GRH_LEN + len,
				 CANARY);
		ok &= r_recv(seed, &rs, 1);
		ok &= post(&w, 1);
		ok &= local_wc(IBV_WC_SUCCESS, IBV_WC_SEND, seed, &lwc);
		ok &= remote_wc(IBV_WC_RECV, seed, &rwc);
		ok &= expect_eq("responder byte_len", rwc.byte_len,
				GRH_LEN + len);
		ok &= expect_eq("responder GRH flag",
				!!(rwc.wc_flags & IBV_WC_GRH), 1);
		ok &= expect_eq("responder src_qp", rwc.src_qp, n.qp->qp_num);
		ok &= rcheck(MEM_RW, R_DATA, len, seed, 0) &&
		      rcheck(MEM_RW, R_DATA + len, GUARD, CANARY, 0) &&
		      rcheck(MEM_RW, R_DATA - GRH_LEN - GUARD, GUARD, CANARY, 0);
		tap_ok(ok, "UD SEND, %s: completions, GRH + byte_len, src_qp, data and guards",
		       size_name(len));
	}
	ibv_destroy_ah(ah);
	reset_if(false);
}

/* ---- client: main ------------------------------------------------------ */

static void describe(bool ipv6)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	bool mapped = !memcmp(n.gid.raw, v4mapped, sizeof(v4mapped));

	tap_diag("max_sge %d, atomic_cap %d, MEM_MGT_EXTENSIONS %s, active_mtu %d",
		 n.dev.max_sge, n.dev.atomic_cap,
		 n.dev.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS ?
		 "yes" : "no", 128 << n.port.active_mtu);
	tap_ok(ipv6 != mapped, "GID %d is an %s GID", n.gid_idx,
	       ipv6 ? "IPv6" : "IPv4-mapped");
}

static void run_full(void)
{
	static const uint64_t sizes[] = { 0, 1, MTU - 1, MTU, MTU + 1, MIB };
	static const uint64_t imm_sizes[] = { 0, 1, MTU, MTU + 1, MIB };
	static const uint64_t ud_sizes[] = { 0, 1, MTU - 1, MTU };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		case_send(sizes[i], false, false);
	for (i = 0; i < ARRAY_SIZE(imm_sizes); i++)
		case_send(imm_sizes[i], true, false);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		case_write(sizes[i], false, false);
	for (i = 0; i < ARRAY_SIZE(imm_sizes); i++)
		case_write(imm_sizes[i], true, false);
	if (n.max_inline) {
		case_send(0, false, true);
		case_send(1, false, true);
		case_send(n.max_inline, true, true);
		case_write(1, false, true);
		case_write(n.max_inline, false, true);
	} else {
		tap_skip("inline sends: max_inline_data is 0");
	}
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		case_read(sizes[i]);
	case_atomics(true);
	case_atomic_write();
	if (n.max_sge >= SG_N) {
		case_sgl_send();
		case_sgl_write();
		case_sgl_read();
	} else {
		tap_skip("scatter-gather: max_sge %u < %d", n.max_sge, SG_N);
	}
	case_unsignaled();
	case_send_inv();
	case_errors(true);
	case_err_unaligned_atomic();
	case_err_permission();
	case_rnr_wait();
	case_rnr_fail();
	case_ud(ud_sizes, 4);
}

static void run_subset(void)
{
	static const uint64_t sizes[] = { 0, 1, MTU + 1, 65536 };
	static const uint64_t ud_sizes[] = { 1, MTU };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		case_send(sizes[i], false, false);
		case_write(sizes[i], false, false);
		case_read(sizes[i]);
	}
	case_send(MTU + 1, true, false);
	case_write(MTU + 1, true, false);
	if (n.max_inline)
		case_send(1, false, true);
	case_atomics(false);
	if (n.max_sge >= SG_N)
		case_sgl_send();
	case_unsignaled();
	case_errors(false);
	case_rnr_fail();
	case_ud(ud_sizes, 2);
}

static int client(const char *peer, int port, bool ipv6)
{
	struct xchg_msg m = { .v = { C_QUIT } };
	long long t0 = xchg_now_ms();

	n.fd = xchg_connect(peer, port, 15000);
	if (!tap_ok(n.fd >= 0, "connect to the server at %s port %d", peer,
		    port))
		return tap_done();
	describe(ipv6);
	if (!tap_ok(fresh_rc(), "RC QP pair connected (path MTU %d)", MTU)) {
		rpc(&m);
		return tap_done();
	}
	tap_diag("qpn 0x%x <-> 0x%x, max_inline_data %u, server device %s (vendor_id 0x%x)",
		 n.qp->qp_num, pr.qpn, n.max_inline, pr.dev, pr.vendor_id);
	if (ipv6)
		run_subset();
	else
		run_full();
	qp_free();
	rpc(&m);
	tap_diag("%s run took %lld ms", ipv6 ? "IPv6" : "IPv4",
		 xchg_now_ms() - t0);
	return tap_done();
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rdma_ops -d DEV -g GIDIDX [-s] [--ipv6] [--atomic-write] [-p PORT] [PEER_IP]\n"
		"  server without PEER_IP (or with -s), client (TAP) with it\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "gid", required_argument, NULL, 'g' },
		{ "port", required_argument, NULL, 'p' },
		{ "server", no_argument, NULL, 's' },
		{ "ipv6", no_argument, NULL, '6' },
		{ "atomic-write", no_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = NULL, *peer = NULL;
	int gid = -1, port = OPS_PORT, c;
	bool srv = false, ipv6 = false;

	while ((c = getopt_long(argc, argv, "d:g:p:s6", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gid = atoi(optarg);
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			srv = true;
			break;
		case '6':
			ipv6 = true;
			break;
		case 'w':
			atomic_write = true;
			break;
		default:
			usage();
		}
	}
	if (optind < argc)
		peer = argv[optind++];
	if (!dev || gid < 0 || optind < argc || (srv && peer))
		usage();
	srand48(getpid() ^ xchg_now_ms());
	if (node_open(dev, gid)) {
		if (peer) {
			tap_ok(false, "open %s", dev);
			return tap_done();
		}
		return 1;
	}
	if (!peer)
		return server(port);
	return client(peer, port, ipv6);
}
