// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MRs, MWs, AHs and SRQs through the stock libibverbs: legal and illegal
 * parameters with their documented errnos, key behaviour, and a loop of
 * create/destroy cycles of a full set of objects.
 *
 *   objects [DEVICE [CYCLES]]      (default vroce0, 10000)
 *
 * With VROCE_MAKE_IT_FAIL=1 in the environment it marks itself for the
 * kernel's task-filtered fault injection (/proc/self/make-it-fail) once
 * the device is open, so that failures hit its verbs and not the loading
 * of its program and libraries (tests/vm/93-fault-inject.sh).
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int gid;
static char buf[1 << 16];

static void check_mr(void)
{
	struct ibv_mr *mr, *mr2;
	void *hole;
	uint32_t prev = 0;
	int i, same = 0, seq = 0;

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	tap_ok(mr && mr->lkey == mr->rkey && mr->length == sizeof(buf),
	       "reg_mr: lkey %#x rkey %#x", mr ? mr->lkey : 0,
	       mr ? mr->rkey : 0);
	errno = 0;
	mr2 = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE);
	tap_ok(!mr2 && errno == EINVAL, "REMOTE_WRITE without LOCAL_WRITE: EINVAL");
	errno = 0;
	mr2 = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC);
	tap_ok(!mr2 && errno == EINVAL, "REMOTE_ATOMIC without LOCAL_WRITE: EINVAL");
	hole = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(hole, 8192);
	errno = 0;
	mr2 = ibv_reg_mr(pd, hole, 8192, IBV_ACCESS_LOCAL_WRITE);
	tap_ok(!mr2 && errno == EFAULT, "unmapped memory: EFAULT (%d)", errno);
	tap_ok(mr && !ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				   0, IBV_ACCESS_LOCAL_WRITE),
	       "rereg_mr: change access");
	tap_ok(mr && !ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				   buf + 4096, 4096, 0) &&
	       mr->addr == buf + 4096 && mr->length == 4096,
	       "rereg_mr: change translation");
	tap_ok(mr && !ibv_dereg_mr(mr), "dereg_mr");

	/* Reusing key indices: the key byte changes, keys are not a count. */
	for (i = 0; i < 300; i++) {
		mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
		if (!mr)
			break;
		if (mr->lkey == prev)
			same++;
		if (mr->lkey == prev + 1)
			seq++;
		prev = mr->lkey;
		ibv_dereg_mr(mr);
	}
	tap_ok(i == 300 && !same && seq < 10,
	       "300 reg/dereg: no key repeats, not sequential (%d, %d)",
	       same, seq);
}

static void check_mw(void)
{
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	tap_ok(mw1 && mw2 && mw1->rkey != mw2->rkey,
	       "alloc_mw type 1 and type 2, distinct rkeys");
	tap_ok(mw1 && !ibv_dealloc_mw(mw1) && mw2 && !ibv_dealloc_mw(mw2),
	       "dealloc_mw");
}

static void check_ah(void)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = gid, .hop_limit = 64,
			 .traffic_class = 0x20 },
	};
	struct ibv_ah *ah;
	struct ibv_grh grh;
	struct ibv_wc wc = { .wc_flags = IBV_WC_GRH, .qp_num = 1 };
	uint8_t *ip = (uint8_t *)&grh + 20;
	union ibv_gid g;

	ibv_query_gid(ctx, 1, gid, &g);
	aa.grh.dgid = g;
	ah = ibv_create_ah(pd, &aa);
	tap_ok(ah && !ibv_destroy_ah(ah), "create/destroy AH to a RoCE v2 GID");
	aa.is_global = 0;
	errno = 0;
	ah = ibv_create_ah(pd, &aa);
	tap_ok(!ah && errno, "AH without GRH fails (errno %d)", errno);

	/* A RoCE v2 IPv4 receive: the IP header sits in the GRH's last 20 bytes. */
	memset(&grh, 0, sizeof(grh));
	ip[0] = 0x45;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, g.raw + 12, 4);
	memcpy(ip + 16, g.raw + 12, 4);
	ah = ibv_create_ah_from_wc(pd, &wc, &grh, 1);
	tap_ok(ah != NULL, "create_ah_from_wc on an IPv4 RoCE v2 receive (errno %d)",
	       ah ? 0 : errno);
	if (ah)
		ibv_destroy_ah(ah);
}

static void check_srq(void)
{
	struct ibv_device_attr da;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 100, .max_sge = 2 } };
	struct ibv_srq_attr q;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { 4, 0, 1, 0, 0 } };
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int ret;

	ibv_query_device(ctx, &da);
	srq = ibv_create_srq(pd, &sa);
	tap_ok(srq && sa.attr.max_wr >= 100 && sa.attr.max_sge >= 2,
	       "create_srq: max_wr %u max_sge %u", sa.attr.max_wr,
	       sa.attr.max_sge);
	if (!srq)
		return;
	q.srq_limit = 10;
	tap_ok(!ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT), "arm srq_limit 10");
	q.srq_limit = 1 << 20;
	tap_ok(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT) == EINVAL,
	       "srq_limit above max_wr: EINVAL");
	q.max_wr = 1000;
	tap_ok(ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR) == EOPNOTSUPP,
	       "resizing an SRQ: EOPNOTSUPP");
	memset(&q, 0, sizeof(q));
	ret = ibv_query_srq(srq, &q);
	tap_ok(!ret && q.srq_limit == 10 && q.max_wr >= 100,
	       "query_srq: limit %u max_wr %u", q.srq_limit, q.max_wr);
	tap_ok(!ibv_post_srq_recv(srq, &wr, &bad), "post_srq_recv");
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.srq = srq;
	qp = ibv_create_qp(pd, &qa);
	tap_ok(qp != NULL, "QP on the SRQ");
	tap_ok(ibv_destroy_srq(srq) == EBUSY, "destroy SRQ in use: EBUSY");
	tap_ok(qp && !ibv_destroy_qp(qp) && !ibv_destroy_srq(srq) &&
	       !ibv_destroy_cq(cq), "destroy QP, SRQ, CQ");
	sa.attr.max_wr = da.max_srq_wr + 1;
	errno = 0;
	srq = ibv_create_srq(pd, &sa);
	tap_ok(!srq && errno == EINVAL, "max_wr over max_srq_wr: EINVAL");
}

/* One full set: PD, MR, CQ, SRQ, QP, AH, MW. */
static int cycle(void)
{
	struct ibv_pd *p = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = p ? ibv_reg_mr(p, buf, 4096,
					   IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = p ? ibv_create_srq(p, &sa) : NULL;
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq,
				       .srq = srq, .qp_type = IBV_QPT_UD,
				       .cap = { 4, 0, 1, 0, 0 } };
	struct ibv_qp *qp = p && cq && srq ? ibv_create_qp(p, &qa) : NULL;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = gid } };
	struct ibv_ah *ah;
	struct ibv_mw *mw = p ? ibv_alloc_mw(p, IBV_MW_TYPE_2) : NULL;
	int bad = !p || !mr || !cq || !srq || !qp || !mw;

	ibv_query_gid(ctx, 1, gid, &aa.grh.dgid);
	ah = p ? ibv_create_ah(p, &aa) : NULL;
	bad |= !ah;
	bad |= ah && ibv_destroy_ah(ah);
	bad |= mw && ibv_dealloc_mw(mw);
	bad |= qp && ibv_destroy_qp(qp);
	bad |= srq && ibv_destroy_srq(srq);
	bad |= cq && ibv_destroy_cq(cq);
	bad |= mr && ibv_dereg_mr(mr);
	bad |= p && ibv_dealloc_pd(p);
	return bad;
}

static int set_make_it_fail(const char *v)
{
	FILE *f = fopen("/proc/self/make-it-fail", "w");

	return !f || fputs(v, f) < 0 || fclose(f) ? -1 : 0;
}

static void unmark(void)
{
	set_make_it_fail("0");
}

/*
 * Only the verbs should meet injected failures, not the loading of the
 * program's pages or its exit: every page mapped now is read in first,
 * and the mark goes before exit.
 */
static void make_it_fail(void)
{
	if (mlockall(MCL_CURRENT) || atexit(unmark) || set_make_it_fail("1")) {
		perror("objects: marking for fault injection");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "vroce0";
	int cycles = argc > 2 ? atoi(argv[2]) : 10000;
	int i, fails = 0;

	ctx = open_by_name(name);
	if (!tap_ok(ctx != NULL, "open %s", name))
		return tap_done();
	if (getenv("VROCE_MAKE_IT_FAIL"))
		make_it_fail();
	gid = roce_v2_ipv4_gid(ctx);
	pd = ibv_alloc_pd(ctx);
	if (!tap_ok(gid >= 0 && pd, "gid %d, pd", gid))
		return tap_done();
	check_mr();
	check_mw();
	check_ah();
	check_srq();
	for (i = 0; i < cycles; i++)
		fails += cycle();
	tap_ok(!fails, "%d cycles of PD, MR, CQ, SRQ, QP, AH, MW (%d failed)",
	       cycles, fails);
	tap_ok(!ibv_dealloc_pd(pd) && !ibv_close_device(ctx), "cleanup");
	return tap_done();
}
