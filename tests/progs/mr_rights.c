// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows bound with local rights in their access flags (issue 10
 * V1). An MR with local write and MW bind; windows bound over parts of it
 * with IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, which rxe and
 * mlx5 take (the local right is the MR's and is ignored):
 *
 *   - type 1 through ibv_bind_mw(), then an RDMA WRITE through it;
 *   - type 2 through IBV_WR_BIND_MW, then an RDMA WRITE through it;
 *   - type 2, zero-based: the WRITE names an offset from the window's
 *     start; one past the window's end fails with a remote access error.
 *
 * And ibv_rereg_mr(), which keeps the MR's keys (issue 10 V2): an MR
 * registered with local write only, its rkey taken as a peer would take
 * it, then re-registered, the same lkey and rkey before and after, and a
 * WRITE with the old rkey working:
 *
 *   - IBV_REREG_MR_CHANGE_ACCESS adding remote write;
 *   - IBV_REREG_MR_CHANGE_TRANSLATION to another buffer: the WRITE lands
 *     there, and the old buffer stays unchanged;
 *   - IBV_REREG_MR_CHANGE_PD to a second PD: a QP of that PD writes with
 *     the rkey, one of the first PD is refused.
 *
 * Each WRITE goes from an RC QP of DEVICE to itself (loopback through the
 * device's IPv4 RoCE v2 GID); the bytes are checked, and so are the bytes
 * around them, which must not change.
 *
 *   mr_rights [DEVICE]   (default vroce0)
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"

#define BUF_SIZE	(64 * 1024)
#define WIN_LEN		8192
#define MSG		1000
#define FILL		0x5a		/* what the target holds before */

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_pd *pd2;		/* for IBV_REREG_MR_CHANGE_PD */
	struct ibv_mr *src_mr2;		/* the source in pd2 */
	struct ibv_cq *cq;
	int gid;
	uint8_t *dst;			/* the target, BUF_SIZE */
	uint8_t *src;			/* what is written, BUF_SIZE */
	struct ibv_mr *dst_mr;		/* local write and MW bind */
	struct ibv_mr *src_mr;		/* local write */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* One completion within 5 s: its status, or -1 if none came. */
static int poll_one(struct env *e, uint64_t *wr_id)
{
	long long end = now_ms() + 5000;
	struct ibv_wc wc;
	int n;

	do {
		n = ibv_poll_cq(e->cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n == 1) {
			if (wr_id)
				*wr_id = wc.wr_id;
			return wc.status;
		}
	} while (now_ms() < end);
	return -1;
}

/* An RC QP of PD @pd connected to itself, in RTS; NULL on failure. */
static struct ibv_qp *new_qp(struct env *e, struct ibv_pd *pd)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (qp && loopback_rc_rts(e->ctx, qp, e->gid)) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

/* RDMA WRITE of MSG bytes of src (from @soff) to @raddr with @rkey. */
static int write_one(struct env *e, struct ibv_qp *qp, uint32_t soff,
		     uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e->src + soff), .length = MSG,
		.lkey = qp->pd == e->pd ? e->src_mr->lkey : e->src_mr2->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};
	struct ibv_send_wr *bad;

	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	return poll_one(e, NULL);
}

/*
 * dst holds src[@soff, + MSG) at @doff and FILL elsewhere in [@doff -
 * 256, @doff + MSG + 256) (within the buffer).
 */
static int landed(struct env *e, uint32_t doff, uint32_t soff)
{
	uint32_t lo = doff >= 256 ? doff - 256 : 0;
	uint32_t hi = doff + MSG + 256 <= BUF_SIZE ? doff + MSG + 256 :
						   BUF_SIZE;
	uint32_t i;

	if (memcmp(e->dst + doff, e->src + soff, MSG))
		return 0;
	for (i = lo; i < hi; i++)
		if ((i < doff || i >= doff + MSG) && e->dst[i] != FILL)
			return 0;
	return 1;
}

static int bind2(struct env *e, struct ibv_qp *qp, struct ibv_mw *mw,
		 uint32_t off, unsigned int access, uint32_t *rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 2, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = e->dst_mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)(e->dst + off);
	wr.bind_mw.bind_info.length = WIN_LEN;
	wr.bind_mw.bind_info.mw_access_flags = access;
	*rkey = wr.bind_mw.rkey;
	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	return poll_one(e, NULL);
}

static void test_type1(struct env *e)
{
	const uint32_t off = 4096, at = 100;
	struct ibv_mw_bind b = {
		.wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = e->dst_mr, .addr = (uintptr_t)(e->dst + off),
			.length = WIN_LEN,
			.mw_access_flags = IBV_ACCESS_LOCAL_WRITE |
					   IBV_ACCESS_REMOTE_WRITE,
		},
	};
	struct ibv_qp *qp = new_qp(e, e->pd);
	struct ibv_mw *mw = ibv_alloc_mw(e->pd, IBV_MW_TYPE_1);
	int st;

	if (!tap_ok(qp && mw, "type 1: a QP and a window"))
		goto out;
	st = ibv_bind_mw(qp, mw, &b) ? -2 : poll_one(e, NULL);
	tap_ok(st == IBV_WC_SUCCESS,
	       "type 1: ibv_bind_mw with LOCAL_WRITE | REMOTE_WRITE completes with success (status %d)",
	       st);
	st = write_one(e, qp, 0, (uintptr_t)(e->dst + off + at), mw->rkey);
	tap_ok(st == IBV_WC_SUCCESS && landed(e, off + at, 0),
	       "type 1: RDMA WRITE of %d bytes through the window (rkey 0x%x): status %d, data %s",
	       MSG, mw->rkey, st, landed(e, off + at, 0) ? "right" : "wrong");
out:
	if (mw)
		ibv_dealloc_mw(mw);
	if (qp)
		ibv_destroy_qp(qp);
}

static void test_type2(struct env *e, int zero_based)
{
	const char *name = zero_based ? "type 2 zero-based" : "type 2";
	const uint32_t off = zero_based ? 32768 : 16384, at = 300;
	unsigned int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp *qp = new_qp(e, e->pd);
	struct ibv_mw *mw = ibv_alloc_mw(e->pd, IBV_MW_TYPE_2);
	uint64_t raddr;
	uint32_t rkey = 0;
	int st;

	if (zero_based)
		access |= IBV_ACCESS_ZERO_BASED;
	if (!tap_ok(qp && mw, "%s: a QP and a window", name))
		goto out;
	st = bind2(e, qp, mw, off, access, &rkey);
	tap_ok(st == IBV_WC_SUCCESS,
	       "%s: IBV_WR_BIND_MW with LOCAL_WRITE | REMOTE_WRITE%s completes with success (status %d)",
	       name, zero_based ? " | ZERO_BASED" : "", st);
	/* A zero-based window's addresses are offsets from its start. */
	raddr = zero_based ? at : (uintptr_t)(e->dst + off + at);
	st = write_one(e, qp, 2000, raddr, rkey);
	tap_ok(st == IBV_WC_SUCCESS && landed(e, off + at, 2000),
	       "%s: RDMA WRITE of %d bytes to 0x%llx through the window (rkey 0x%x): status %d, data %s",
	       name, MSG, (unsigned long long)raddr, rkey, st,
	       landed(e, off + at, 2000) ? "right" : "wrong");
	if (!zero_based)
		goto out;
	/* Past the window's end: nothing moves, the QP goes to ERR. */
	st = write_one(e, qp, 0, WIN_LEN - MSG / 2, rkey);
	tap_ok(st == IBV_WC_REM_ACCESS_ERR &&
	       e->dst[off + WIN_LEN - MSG / 2] == FILL &&
	       e->dst[off + WIN_LEN] == FILL,
	       "%s: a WRITE that ends past the window fails with a remote access error (status %d), target unchanged",
	       name, st);
out:
	if (mw)
		ibv_dealloc_mw(mw);
	if (qp)
		ibv_destroy_qp(qp);
}

/* Whether @p[0, BUF_SIZE) holds src[@soff, + MSG) at @off, FILL elsewhere. */
static int holds(const uint8_t *p, const uint8_t *src, uint32_t off,
		 uint32_t soff)
{
	uint32_t i;

	if (memcmp(p + off, src + soff, MSG))
		return 0;
	for (i = 0; i < BUF_SIZE; i++)
		if ((i < off || i >= off + MSG) && p[i] != FILL)
			return 0;
	return 1;
}

static int all_fill(const uint8_t *p)
{
	uint32_t i;

	for (i = 0; i < BUF_SIZE; i++)
		if (p[i] != FILL)
			return 0;
	return 1;
}

/*
 * ibv_rereg_mr(@flags) of an MR registered with local write only over a
 * buffer of its own: the keys stay, and a WRITE with the rkey taken
 * before it lands.
 */
static void test_rereg(struct env *e, int flags, const char *name)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	uint8_t *a = aligned_alloc(4096, BUF_SIZE);
	uint8_t *b = aligned_alloc(4096, BUF_SIZE);
	struct ibv_pd *pd = flags & IBV_REREG_MR_CHANGE_PD ? e->pd2 : e->pd;
	uint8_t *target = flags & IBV_REREG_MR_CHANGE_TRANSLATION ? b : a;
	struct ibv_qp *qp = NULL, *other = NULL;
	struct ibv_mr *mr = NULL;
	uint32_t lkey, rkey, soff = 3000, at = 5000;
	int ret, st;

	if (!a || !b)
		goto out;
	memset(a, FILL, BUF_SIZE);
	memset(b, FILL, BUF_SIZE);
	/* CHANGE_PD alone keeps the access: give it remote write already. */
	mr = ibv_reg_mr(e->pd, a, BUF_SIZE,
			flags & IBV_REREG_MR_CHANGE_ACCESS ?
			IBV_ACCESS_LOCAL_WRITE : rw);
	qp = new_qp(e, pd);
	if (!tap_ok(mr && qp, "%s: an MR and a QP", name))
		goto out;
	lkey = mr->lkey;
	rkey = mr->rkey;
	/* libibverbs wants access 0 unless it is to change. */
	ret = ibv_rereg_mr(mr, flags, e->pd2, b, BUF_SIZE,
			   flags & IBV_REREG_MR_CHANGE_ACCESS ? rw : 0);
	tap_ok(ret == 0 && mr->lkey == lkey && mr->rkey == rkey,
	       "%s: ibv_rereg_mr returns %d, keys 0x%x/0x%x before, 0x%x/0x%x after",
	       name, ret, lkey, rkey, mr->lkey, mr->rkey);
	st = write_one(e, qp, soff, (uintptr_t)(target + at), rkey);
	tap_ok(st == IBV_WC_SUCCESS && holds(target, e->src, at, soff) &&
	       (target == a || all_fill(a)),
	       "%s: RDMA WRITE with the rkey taken before rereg: status %d, data %s",
	       name, st, holds(target, e->src, at, soff) ? "right" : "wrong");
	if (!(flags & IBV_REREG_MR_CHANGE_PD))
		goto out;
	/* The old PD's QPs lost the MR. */
	other = new_qp(e, e->pd);
	st = other ? write_one(e, other, 0, (uintptr_t)(b + 100), rkey) : -2;
	tap_ok(st == IBV_WC_REM_ACCESS_ERR && b[100] == FILL,
	       "%s: a QP of the old PD is refused (status %d), target unchanged",
	       name, st);
out:
	if (other)
		ibv_destroy_qp(other);
	if (qp)
		ibv_destroy_qp(qp);
	if (mr)
		ibv_dereg_mr(mr);
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "vroce0";
	struct env e = {};
	uint32_t i;

	e.ctx = open_by_name(dev);
	if (!tap_ok(e.ctx != NULL, "open %s", dev))
		return tap_done();
	e.gid = roce_v2_ipv4_gid(e.ctx);
	e.pd = ibv_alloc_pd(e.ctx);
	e.pd2 = ibv_alloc_pd(e.ctx);
	e.cq = ibv_create_cq(e.ctx, 16, NULL, NULL, 0);
	e.dst = aligned_alloc(4096, BUF_SIZE);
	e.src = aligned_alloc(4096, BUF_SIZE);
	if (!tap_ok(e.gid >= 0 && e.pd && e.pd2 && e.cq && e.dst && e.src,
		    "IPv4 RoCE v2 GID %d, two PDs, a CQ, buffers", e.gid))
		return tap_done();
	memset(e.dst, FILL, BUF_SIZE);
	for (i = 0; i < BUF_SIZE; i++)
		e.src[i] = (uint8_t)(i * 13 + 1);
	e.dst_mr = ibv_reg_mr(e.pd, e.dst, BUF_SIZE,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	e.src_mr = ibv_reg_mr(e.pd, e.src, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	e.src_mr2 = ibv_reg_mr(e.pd2, e.src, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!tap_ok(e.dst_mr && e.src_mr && e.src_mr2,
		    "target MR (LOCAL_WRITE | MW_BIND) and source MRs"))
		return tap_done();

	test_type1(&e);
	test_type2(&e, 0);
	test_type2(&e, 1);
	test_rereg(&e, IBV_REREG_MR_CHANGE_ACCESS, "rereg CHANGE_ACCESS");
	test_rereg(&e, IBV_REREG_MR_CHANGE_TRANSLATION,
		   "rereg CHANGE_TRANSLATION");
	test_rereg(&e, IBV_REREG_MR_CHANGE_PD, "rereg CHANGE_PD");

	ibv_dereg_mr(e.src_mr2);
	ibv_dereg_mr(e.src_mr);
	ibv_dereg_mr(e.dst_mr);
	ibv_destroy_cq(e.cq);
	ibv_dealloc_pd(e.pd2);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	return tap_done();
}
