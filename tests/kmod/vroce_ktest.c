// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Checks of the kernel verbs of a vroce device, as a kernel consumer sees
 * them. Loading the module runs them against the device named by "dev"
 * and logs TAP lines ("vroce_ktest: ok N - ...", then "vroce_ktest:
 * 1..N"); loading fails with -ENODEV if the device is missing. Used by
 * tests/vm/97-kverbs.sh.
 *
 * A completion names its QP by number; numbers are reused. A kernel QP
 * destroyed with completions not yet polled must leave none behind, or
 * the next QP to take its number would be handed them in wc->qp.
 *
 * Fast registration (FRWR), between two RC QPs of the device connected
 * through its own IPv4 GID: an FRMR registered over two pages takes an
 * RDMA WRITE; invalidated and registered again, under a new key, over one
 * other page, it takes a WRITE into that page only, refuses one past its
 * new end, and refuses its old key.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev = "vroce0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "the RDMA device to check (vroce0)");

static unsigned int tap_n;

static bool tap(bool ok, const char *what, int a, int b)
{
	tap_n++;
	pr_info("vroce_ktest: %sok %u - %s (%d, %d)\n", ok ? "" : "not ",
		tap_n, what, a, b);
	return ok;
}

struct env {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
};

static struct ib_qp *qp_err(struct env *e)
{
	struct ib_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq,
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 1, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT, .port_num = 1 };
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct ib_qp *qp;

	qp = ib_create_qp(e->pd, &ia);
	if (IS_ERR(qp))
		return qp;
	if (ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			 IB_QP_PORT | IB_QP_ACCESS_FLAGS) ||
	    ib_modify_qp(qp, &err, IB_QP_STATE)) {
		ib_destroy_qp(qp);
		return ERR_PTR(-EINVAL);
	}
	return qp;
}

/* A receive on a QP in ERR: it completes flushed, later, on its own. */
static int post_flushed(struct ib_qp *qp, u64 id)
{
	struct ib_recv_wr wr = { .wr_id = id };
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, &wr, &bad);
}

/*
 * Waits, without polling, until @cq holds a completion (2 s at most),
 * then a little more for the flushes kicked with it; 0 or -ETIMEDOUT.
 */
static int cq_filled(struct ib_cq *cq)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				     IB_CQ_REPORT_MISSED_EVENTS) > 0) {
			msleep(100);
			return 0;
		}
		msleep(20);
	}
	return -ETIMEDOUT;
}

static void check_resolved(struct env *e)
{
	struct ib_qp *qp = qp_err(e);
	struct ib_wc wc;
	int n;

	if (!tap(!IS_ERR(qp), "RC QP created, moved to ERR", 0, 0))
		return;
	n = post_flushed(qp, 1) ? -1 : cq_filled(e->cq);
	n = n ? n : ib_poll_cq(e->cq, 1, &wc);
	tap(n == 1 && wc.wr_id == 1 && wc.status == IB_WC_WR_FLUSH_ERR &&
	    wc.qp == qp, "a flushed receive names its QP", n,
	    n == 1 ? wc.status : -1);
	ib_destroy_qp(qp);
}

/*
 * QP numbers are handed out round-robin: creates and destroys QPs until
 * one gets @num (at most a full turn of QP_MAX_TRIES), returns it.
 */
#define QP_MAX_TRIES	(1 << 17)

static struct ib_qp *new_qp_numbered(struct env *e, u32 num, int *tries)
{
	struct ib_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IB_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp *qp;

	for (*tries = 1; *tries <= QP_MAX_TRIES; ++*tries) {
		qp = ib_create_qp(e->pd, &ia);
		if (IS_ERR(qp))
			return qp;
		if (qp->qp_num + 1 == num) {
			ib_destroy_qp(qp);
			return qp_err(e);
		}
		ib_destroy_qp(qp);
		cond_resched();
	}
	return ERR_PTR(-ENOSPC);
}

static void check_purged(struct env *e)
{
	struct ib_qp *old, *other, *young;
	struct ib_wc wc[8];
	u32 old_num;
	int n, err, tries;

	old = qp_err(e);
	other = qp_err(e);
	if (!tap(!IS_ERR(old) && !IS_ERR(other), "two RC QPs in ERR", 0, 0))
		return;
	err = post_flushed(old, 10) || post_flushed(other, 11) ||
	      post_flushed(old, 12);
	err = err ? err : cq_filled(e->cq);
	tap(!err, "three flushed receives of two QPs wait in the CQ", err, 0);
	old_num = old->qp_num;
	ib_destroy_qp(old);
	young = new_qp_numbered(e, old_num, &tries);
	if (!tap(!IS_ERR(young), "new QPs created until one took the number",
		 tries, old_num))
		goto out;
	tap(young->qp_num == old_num, "the last one took the destroyed QP's number",
	    young->qp_num, old_num);
	n = ib_poll_cq(e->cq, 8, wc);
	tap(n == 1 && wc[0].wr_id == 11 && wc[0].qp == other,
	    "only the live QP's completion is left, naming it", n,
	    n > 0 ? (int)wc[0].wr_id : -1);
	tap(n < 1 || (wc[0].qp != young && (n < 2 || wc[1].qp != young)),
	    "no completion is handed to the new QP", n, 0);
	ib_destroy_qp(young);
out:
	ib_destroy_qp(other);
}

/* Two RC QPs of the device, connected to each other through its GID. */
struct rc_pair {
	struct ib_qp *qp[2];
};

/* The index of a RoCE v2 GID of port 1 that maps an IPv4 address. */
static int roce_v2_ipv4_gid(struct ib_device *ibdev)
{
	const struct ib_gid_attr *attr;
	int i, found = -1;

	for (i = 0; i < 16 && found < 0; i++) {
		attr = rdma_get_gid_attr(ibdev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw))
			found = i;
		rdma_put_gid_attr(attr);
	}
	return found;
}

/* RESET -> INIT -> RTR -> RTS of @qp towards QP @dqpn through GID @gidx. */
static int rc_connect(struct env *e, struct ib_qp *qp, u32 dqpn, int gidx)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};
	union ib_gid gid;
	int err;

	err = rdma_query_gid(e->ibdev, 1, gidx, &gid) ?:
	      ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.type = rdma_ah_find_type(e->ibdev, 1);
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &gid, 0, gidx, 64, 0);
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

static void rc_pair_destroy(struct rc_pair *p)
{
	int i;

	for (i = 0; i < 2; i++)
		if (!IS_ERR_OR_NULL(p->qp[i]))
			ib_destroy_qp(p->qp[i]);
}

static int rc_pair_create(struct env *e, struct rc_pair *p, int gidx)
{
	struct ib_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq,
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int i, err = 0;

	for (i = 0; i < 2; i++) {
		p->qp[i] = ib_create_qp(e->pd, &ia);
		if (IS_ERR(p->qp[i]))
			err = PTR_ERR(p->qp[i]);
	}
	for (i = 0; i < 2 && !err; i++)
		err = rc_connect(e, p->qp[i], p->qp[!i]->qp_num, gidx);
	if (err)
		rc_pair_destroy(p);
	return err;
}

/* Posts @wr on @qp and waits (2 s at most) for its completion's status. */
static int post_wait(struct env *e, struct ib_qp *qp, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;
	struct ib_wc wc;
	int i, n;

	wr->send_flags |= IB_SEND_SIGNALED;
	if (ib_post_send(qp, wr, &bad))
		return -EINVAL;
	for (i = 0; i < 100; i++) {
		n = ib_poll_cq(e->cq, 1, &wc);
		if (n > 0)
			return wc.wr_id == wr->wr_id ? wc.status : -EPROTO;
		msleep(20);
	}
	return -ETIMEDOUT;
}

/* Maps @len bytes at @buf into @mr and registers them under @mr's rkey. */
static int frmr_register(struct env *e, struct ib_qp *qp, struct ib_mr *mr,
			 void *buf, u32 len)
{
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 100, .opcode = IB_WR_REG_MR },
		.mr = mr, .key = mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	struct scatterlist sg;

	sg_init_one(&sg, buf, len);
	if (ib_dma_map_sg(e->ibdev, &sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -EIO;
	if (ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE) != 1)
		return -EIO;
	return post_wait(e, qp, &reg.wr);
}

static int frmr_invalidate(struct env *e, struct ib_qp *qp, u32 rkey)
{
	struct ib_send_wr wr = {
		.wr_id = 101, .opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = rkey,
	};

	return post_wait(e, qp, &wr);
}

/* An RDMA WRITE of @len bytes of @src to @rkey at @addr; its status. */
static int rdma_write(struct env *e, struct ib_qp *qp, const void *src,
		      u32 len, u64 addr, u32 rkey)
{
	struct ib_sge sge = {
		.addr = ib_dma_map_single(e->ibdev, (void *)src, len,
					  DMA_TO_DEVICE),
		.length = len, .lkey = e->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 102, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge, .num_sge = 1 },
		.remote_addr = addr, .rkey = rkey,
	};

	return post_wait(e, qp, &wr.wr);
}

/* Whether all @len bytes at @p are @c. */
static bool all_are(const u8 *p, u32 len, u8 c)
{
	return !memchr_inv(p, c, len);
}

struct frmr_bufs {
	u8 *a;		/* two pages: the first registration */
	u8 *b;		/* one page: the second */
	u8 *src;	/* two pages of what is written */
};

static void frmr_steps(struct env *e, struct frmr_bufs *f, int gidx)
{
	struct rc_pair p = {}, p2 = {};
	struct ib_mr *mr;
	u32 k1, k2;
	int st;

	mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, 4);
	if (!tap(!IS_ERR(mr), "FRMR of 4 pages allocated", 0, 0))
		return;
	st = rc_pair_create(e, &p, gidx);
	if (!tap(!st, "two RC QPs connected through the IPv4 GID", st, gidx))
		goto mr;
	st = frmr_register(e, p.qp[0], mr, f->a, 2 * PAGE_SIZE);
	tap(st == IB_WC_SUCCESS, "REG_MR over two pages", st, 0);
	k1 = mr->rkey;
	memset(f->src, 0x11, 2 * PAGE_SIZE);
	st = rdma_write(e, p.qp[1], f->src, 2 * PAGE_SIZE, mr->iova, k1);
	tap(st == IB_WC_SUCCESS && all_are(f->a, 2 * PAGE_SIZE, 0x11),
	    "an RDMA WRITE fills both pages", st, f->a[PAGE_SIZE]);
	st = frmr_invalidate(e, p.qp[0], k1);
	tap(st == IB_WC_SUCCESS, "LOCAL_INV", st, 0);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	k2 = mr->rkey;
	st = frmr_register(e, p.qp[0], mr, f->b, PAGE_SIZE);
	tap(st == IB_WC_SUCCESS && k2 != k1,
	    "REG_MR again, a new key, over one other page", st, 0);
	memset(f->src, 0x22, PAGE_SIZE);
	st = rdma_write(e, p.qp[1], f->src, PAGE_SIZE, mr->iova, k2);
	tap(st == IB_WC_SUCCESS && all_are(f->b, PAGE_SIZE, 0x22) &&
	    all_are(f->a, 2 * PAGE_SIZE, 0x11),
	    "a WRITE under the new key lands in the new page only", st,
	    f->a[0]);
	st = rdma_write(e, p.qp[1], f->src, 8, mr->iova + PAGE_SIZE, k2);
	tap(st == IB_WC_REM_ACCESS_ERR && all_are(f->a, 2 * PAGE_SIZE, 0x11),
	    "a WRITE past the new end is refused (remote access error)", st,
	    IB_WC_REM_ACCESS_ERR);
	st = rc_pair_create(e, &p2, gidx);
	if (!tap(!st, "two more RC QPs connected", st, 0))
		goto pair;
	st = rdma_write(e, p2.qp[1], f->src, 8, mr->iova, k1);
	tap(st == IB_WC_REM_ACCESS_ERR && all_are(f->a, 2 * PAGE_SIZE, 0x11),
	    "the old key is refused (remote access error)", st,
	    IB_WC_REM_ACCESS_ERR);
	rc_pair_destroy(&p2);
pair:
	/* Completions flushed from the pairs go with the CQ. */
	rc_pair_destroy(&p);
mr:
	ib_dereg_mr(mr);
}

static void check_frmr(struct env *e)
{
	struct frmr_bufs f = {
		.a = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO, 1),
		.b = (u8 *)get_zeroed_page(GFP_KERNEL),
		.src = (u8 *)__get_free_pages(GFP_KERNEL, 1),
	};
	int gidx = roce_v2_ipv4_gid(e->ibdev);

	if (tap(f.a && f.b && f.src && gidx >= 0,
		"buffers, and a RoCE v2 IPv4 GID", gidx, 0))
		frmr_steps(e, &f, gidx);
	free_pages((unsigned long)f.a, 1);
	free_page((unsigned long)f.b);
	free_pages((unsigned long)f.src, 1);
}

static int __init vroce_ktest_init(void)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	struct env e = {};

	e.ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!e.ibdev) {
		pr_err("vroce_ktest: no RDMA device %s\n", dev);
		return -ENODEV;
	}
	e.pd = ib_alloc_pd(e.ibdev, 0);
	e.cq = IS_ERR(e.pd) ? ERR_PTR(-EINVAL) :
	       ib_create_cq(e.ibdev, NULL, NULL, NULL, &ca);
	if (tap(!IS_ERR(e.pd) && !IS_ERR(e.cq), "kernel PD and CQ", 0, 0)) {
		check_resolved(&e);
		check_purged(&e);
		check_frmr(&e);
	}
	if (!IS_ERR_OR_NULL(e.cq))
		ib_destroy_cq(e.cq);
	if (!IS_ERR_OR_NULL(e.pd))
		ib_dealloc_pd(e.pd);
	ib_device_put(e.ibdev);
	pr_info("vroce_ktest: 1..%u\n", tap_n);
	return 0;
}

static void __exit vroce_ktest_exit(void)
{
}

module_init(vroce_ktest_init);
module_exit(vroce_ktest_exit);
MODULE_DESCRIPTION("kernel verbs checks of a vroce device");
MODULE_AUTHOR("the vroce developers");
MODULE_LICENSE("Dual BSD/GPL");
