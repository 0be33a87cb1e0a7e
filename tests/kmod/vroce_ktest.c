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
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/delay.h>
#include <linux/module.h>
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
