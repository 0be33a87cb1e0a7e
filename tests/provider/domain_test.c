// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * Thread domains and parent domains of the provider against the fake
 * uverbs device, through the installed libibverbs:
 *
 *   domain_test <absolute path of libvroce-rdmav34.so>
 *
 * Neither reaches the kernel: a parent domain must work wherever its PD
 * does (the commands name the PD), give its allocator the provider's QP
 * and SRQ memory, and make the work queues of objects under a thread
 * domain lockless.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "fake_sysfs.h"
#include "fake_uverbs.h"
#include "tap.h"
#include "test_main.h"
#include "vroce.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

/* What the test allocator saw. */
static struct {
	unsigned int calls, allocs, frees;
	struct ibv_pd *pd;
	void *pd_context;
	size_t size, alignment;
	uint64_t type;
	void *last;
	void *freed;		/* what the last free was given */
	uint64_t freed_type;
	int mode;		/* 0 calloc, 1 USE_DEFAULT, 2 NULL, 3 dirty */
} al;

static void *test_alloc(struct ibv_pd *ibpd, void *pd_context, size_t size,
			size_t alignment, uint64_t type)
{
	al.calls++;
	al.pd = ibpd;
	al.pd_context = pd_context;
	al.size = size;
	al.alignment = alignment;
	al.type = type;
	if (al.mode == 1)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (al.mode == 2)
		return NULL;
	al.allocs++;
	al.last = calloc(1, size);
	/* Not zeroed, against the man page: the provider must cope. */
	if (al.mode == 3 && al.last)
		memset(al.last, 0xa5, size);
	return al.last;
}

static void test_free(struct ibv_pd *ibpd, void *pd_context, void *ptr,
		      uint64_t type)
{
	(void)ibpd;
	(void)pd_context;
	al.frees++;
	al.freed = ptr;
	al.freed_type = type;
	free(ptr);
}

static struct ibv_qp *new_qp(struct ibv_pd *qpd)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(qpd, &attr);
}

static void check_td(void)
{
	struct ibv_td_init_attr attr = { .comp_mask = 1 };
	struct ibv_td *td;

	errno = 0;
	tap_ok(!ibv_alloc_td(ctx, &attr) && errno == EINVAL,
	       "ibv_alloc_td() with an unknown comp_mask: EINVAL");
	attr.comp_mask = 0;
	td = ibv_alloc_td(ctx, &attr);
	tap_ok(td && td->context == ctx && ibv_dealloc_td(td) == 0,
	       "ibv_alloc_td() and ibv_dealloc_td()");
}

static void check_refused(void)
{
	struct ibv_parent_domain_init_attr attr = { .pd = pd };
	struct ibv_pd *parent;

	attr.comp_mask = 1 << 7;
	errno = 0;
	tap_ok(!ibv_alloc_parent_domain(ctx, &attr) && errno == EOPNOTSUPP,
	       "a parent domain with an unknown comp_mask: EOPNOTSUPP");
	attr.comp_mask = 0;
	attr.pd = NULL;
	errno = 0;
	tap_ok(!ibv_alloc_parent_domain(ctx, &attr) && errno == EINVAL,
	       "a parent domain without a PD: EINVAL");
	attr.pd = pd;
	attr.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	attr.alloc = test_alloc;
	errno = 0;
	tap_ok(!ibv_alloc_parent_domain(ctx, &attr) && errno == EINVAL,
	       "allocators without a free function: EINVAL");
	attr.comp_mask = 0;
	parent = ibv_alloc_parent_domain(ctx, &attr);
	attr.pd = parent;
	errno = 0;
	tap_ok(parent && !ibv_alloc_parent_domain(ctx, &attr) &&
	       errno == EINVAL, "a parent domain of a parent domain: EINVAL");
	tap_ok(parent && ibv_dealloc_pd(parent) == 0,
	       "the plain parent domain is freed");
}

/* An extended QP: its ibv_wr_* state is a second allocation. */
static void check_qp_ex(struct ibv_pd *parent)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = parent,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	unsigned int allocs = al.allocs, frees = al.frees;
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &attr);
	void *x = qp ? (void *)to_vqp(qp)->x : NULL;

	tap_ok(qp && ibv_qp_to_qp_ex(qp) && al.allocs == allocs + 2 &&
	       al.last == x && al.type == VROCE_RES_TYPE_QP_EX,
	       "an extended QP of the parent domain: QP and QP_EX memory");
	tap_ok(qp && ibv_destroy_qp(qp) == 0 && al.frees == frees + 2,
	       "...both given back");
	al.mode = 2;
	errno = 0;
	tap_ok(!ibv_create_qp_ex(ctx, &attr) && errno == ENOMEM,
	       "an allocator that returns NULL: ibv_create_qp_ex ENOMEM");
	al.mode = 0;
}

static int modify_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

/* A type 1 window of the PD binds through a QP of its parent domain. */
static void check_bind(struct ibv_pd *parent)
{
	char buf[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf),
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_qp *qp = new_qp(parent);
	struct ibv_mw_bind bind = {
		.wr_id = 1,
		.bind_info = { .mr = mr, .addr = (uintptr_t)buf,
			       .length = sizeof(buf),
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};

	tap_ok(mr && mw && qp && !modify_state(qp, IBV_QPS_INIT) &&
	       !modify_state(qp, IBV_QPS_RTR) &&
	       !modify_state(qp, IBV_QPS_RTS) && !ibv_bind_mw(qp, mw, &bind),
	       "ibv_bind_mw() of the PD's window on a QP of its parent domain");
	if (qp)
		ibv_destroy_qp(qp);
	if (mw)
		ibv_dealloc_mw(mw);
	if (mr)
		ibv_dereg_mr(mr);
}

/* A CQ of the parent domain: its allocator, lockless under its TD. */
static void check_cq(struct ibv_pd *parent)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 4,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = parent,
	};
	unsigned int allocs = al.allocs, frees = al.frees;
	struct ibv_poll_cq_attr pattr = {};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &attr);
	void *mem = cq ? (void *)to_vcq_ex(cq) : NULL;

	tap_ok(cq && al.allocs == allocs + 1 && al.last == mem &&
	       al.type == VROCE_RES_TYPE_CQ && to_vcq_ex(cq)->lockless,
	       "a CQ of the parent domain: allocator (CQ type), lockless");
	tap_ok(cq && ibv_dealloc_pd(parent) == EBUSY,
	       "the parent domain cannot go while its CQ exists: EBUSY");
	tap_ok(cq && ibv_start_poll(cq, &pattr) == ENOENT,
	       "start_poll on the empty lockless CQ: ENOENT");
	tap_ok(cq && ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0 &&
	       al.frees == frees + 1 && al.freed == mem &&
	       al.freed_type == VROCE_RES_TYPE_CQ,
	       "destroying it gives its memory back");
}

static void check_parent(void)
{
	struct ibv_td_init_attr tattr = {};
	struct ibv_td *td = ibv_alloc_td(ctx, &tattr);
	struct ibv_parent_domain_init_attr attr = {
		.pd = pd,
		.td = td,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = test_alloc,
		.free = test_free,
		.pd_context = (void *)0x1234,
	};
	struct ibv_srq_init_attr sattr = {
		.attr = { .max_wr = 4, .max_sge = 1 },
	};
	unsigned int commands = fake.commands, calls, allocs, frees;
	struct ibv_pd *parent;
	struct ibv_qp *qp, *plain;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	char buf[64];

	parent = ibv_alloc_parent_domain(ctx, &attr);
	if (!tap_ok(td && parent && parent->context == ctx &&
		    parent->handle == pd->handle &&
		    fake.commands == commands,
		    "a parent domain with a TD and allocators, no command")) {
		if (td)
			ibv_dealloc_td(td);
		return;
	}
	tap_ok(ibv_dealloc_td(td) == EBUSY,
	       "its TD cannot go while it holds it: EBUSY");
	tap_ok(ibv_dealloc_pd(pd) == EBUSY && fake.commands == commands,
	       "nor its PD: EBUSY, no command");

	al.mode = 3;
	qp = new_qp(parent);
	al.mode = 0;
	tap_ok(qp && qp->pd == parent && al.allocs == 1 &&
	       al.last == to_vqp(qp) && al.pd == parent &&
	       al.pd_context == (void *)0x1234 &&
	       al.size == sizeof(struct vroce_qp) &&
	       al.alignment >= _Alignof(struct vroce_qp) &&
	       al.type == VROCE_RES_TYPE_QP,
	       "a QP of the parent domain: its memory from the allocator (QP type, aligned)");
	tap_ok(qp && !to_vqp(qp)->x && !ibv_qp_to_qp_ex(qp),
	       "...zeroed by the provider although the allocator did not");
	tap_ok(ibv_dealloc_pd(parent) == EBUSY,
	       "the parent domain cannot go while its QP exists: EBUSY");
	tap_ok(qp && to_vqp(qp)->sq.lockless && to_vqp(qp)->rq.lockless,
	       "...and, under its TD, lockless work queues");
	plain = new_qp(pd);
	tap_ok(plain && !to_vqp(plain)->sq.lockless && al.allocs == 1,
	       "a QP of the PD itself: locked, allocator not used");
	mr = ibv_reg_mr(parent, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	tap_ok(mr != NULL, "an MR of the parent domain");
	srq = ibv_create_srq(parent, &sattr);
	tap_ok(srq && al.allocs == 2 && al.type == VROCE_RES_TYPE_SRQ &&
	       to_vsrq(srq)->wq.lockless,
	       "an SRQ of the parent domain: allocator (SRQ type), lockless");
	void *qmem = qp ? (void *)to_vqp(qp) : NULL;
	tap_ok(qp && ibv_destroy_qp(qp) == 0 && al.frees == 1 &&
	       al.freed == qmem && al.freed_type == VROCE_RES_TYPE_QP,
	       "destroying the QP gives its memory back to the free function");
	void *smem = srq ? (void *)to_vsrq(srq) : NULL;
	tap_ok(srq && ibv_destroy_srq(srq) == 0 && al.frees == 2 &&
	       al.freed == smem && al.freed_type == VROCE_RES_TYPE_SRQ,
	       "so does destroying the SRQ");
	if (mr)
		ibv_dereg_mr(mr);
	if (plain)
		ibv_destroy_qp(plain);

	check_qp_ex(parent);
	check_cq(parent);
	check_bind(parent);

	al.mode = 1;
	calls = al.calls;
	allocs = al.allocs;
	frees = al.frees;
	qp = new_qp(parent);
	tap_ok(qp && al.calls == calls + 1 && al.allocs == allocs &&
	       ibv_destroy_qp(qp) == 0 && al.frees == frees,
	       "IBV_ALLOCATOR_USE_DEFAULT: the provider's own memory");
	al.mode = 2;
	errno = 0;
	tap_ok(!new_qp(parent) && errno == ENOMEM,
	       "an allocator that returns NULL: ENOMEM");
	al.mode = 0;

	tap_ok(ibv_dealloc_pd(parent) == 0 && ibv_dealloc_td(td) == 0,
	       "the parent domain, then its TD, are freed");
}

int main(int argc, char **argv)
{
	struct test_env t;
	int opened = !test_open(&t, argc, argv, 1);

	if (opened) {
		ctx = t.ctx;
		pd = t.pd;
		cq = t.cq;
		check_td();
		check_refused();
		check_parent();
	}
	return test_close(&t, opened);
}
