// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * ibv_create_qp_ex() and the ibv_wr_* work request API of the provider
 * against the fake uverbs device, through the installed libibverbs:
 *
 *   qp_ex_test <absolute path of libvroce-rdmav34.so>
 *
 * Every builder must write the very WQE post_send writes for the same
 * work request (the test posts both and compares the slots), nothing may
 * reach the kernel's view of the ring (prod) before ibv_wr_complete(),
 * and a batch with an error posts none of its WRs.
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

#define ALL_RC_OPS \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | \
	 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV)

static uint32_t load(const uint32_t *idx)
{
	return __atomic_load_n(idx, __ATOMIC_ACQUIRE);
}

static void store(uint32_t *idx, uint32_t val)
{
	__atomic_store_n(idx, val, __ATOMIC_RELEASE);
}

static struct fake_ring *sq_of(struct ibv_qp *qp)
{
	return fake_qp_get(qp->handle)->sq;
}

static uint8_t *slot(const struct fake_ring *ring, uint32_t idx)
{
	return ring->ent + (size_t)(idx & (ring->entries - 1)) * ring->stride;
}

static int modify_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

static int to_rts(struct ibv_qp *qp)
{
	return modify_state(qp, IBV_QPS_INIT) ?:
	       modify_state(qp, IBV_QPS_RTR) ?:
	       modify_state(qp, IBV_QPS_RTS);
}

static struct ibv_qp *new_qpx(enum ibv_qp_type type, uint32_t mask,
			      uint64_t ops, struct ibv_qp_init_attr_ex *out)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = 8,
			.max_recv_wr = 4,
			.max_send_sge = 3,
			.max_recv_sge = 1,
			.max_inline_data = 40,
		},
		.qp_type = type,
		.comp_mask = mask,
		.pd = pd,
		.send_ops_flags = ops,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &attr);

	if (out)
		*out = attr;
	return qp;
}

#define PD_OPS	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

/* What ibv_create_qp_ex() must refuse, and with which errno. */
static const struct {
	enum ibv_qp_type type;
	uint32_t mask;
	uint64_t ops;
	int err;
	const char *what;
} refused[] = {
	{ IBV_QPT_UD, PD_OPS, IBV_QP_EX_WITH_RDMA_WRITE, EOPNOTSUPP,
	  "UD with RDMA_WRITE" },
	{ IBV_QPT_UC, PD_OPS, IBV_QP_EX_WITH_RDMA_READ, EOPNOTSUPP,
	  "UC with RDMA_READ" },
	{ IBV_QPT_UC, PD_OPS, IBV_QP_EX_WITH_SEND_WITH_INV, EOPNOTSUPP,
	  "UC with SEND_WITH_INV" },
	{ IBV_QPT_UD, PD_OPS, IBV_QP_EX_WITH_TSO, EOPNOTSUPP, "TSO" },
	{ IBV_QPT_UC, PD_OPS, IBV_QP_EX_WITH_ATOMIC_WRITE, EOPNOTSUPP,
	  "UC with ATOMIC_WRITE" },
	{ IBV_QPT_XRC_RECV, IBV_QP_INIT_ATTR_XRCD |
	  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, IBV_QP_EX_WITH_SEND, EOPNOTSUPP,
	  "an XRC TGT QP with SEND" },
	{ IBV_QPT_XRC_SEND, PD_OPS, IBV_QP_EX_WITH_TSO, EOPNOTSUPP,
	  "an XRC INI QP with TSO" },
	{ IBV_QPT_RC, PD_OPS | IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
	  IBV_QP_EX_WITH_SEND, EOPNOTSUPP, "an unknown comp_mask bit" },
	{ IBV_QPT_RC, IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, IBV_QP_EX_WITH_SEND,
	  EINVAL, "no PD" },
};

static void check_create(void)
{
	const uint32_t m = PD_OPS;
	struct ibv_qp_init_attr_ex got;
	struct ibv_qp_init_attr plain = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp;
	size_t i;

	qp = new_qpx(IBV_QPT_RC, m, ALL_RC_OPS, &got);
	tap_ok(qp && ibv_qp_to_qp_ex(qp) &&
	       ibv_qp_to_qp_ex(qp) == (struct ibv_qp_ex *)qp &&
	       got.cap.max_send_sge == to_vqp(qp)->sq.max_sge &&
	       got.cap.max_inline_data == to_vqp(qp)->max_inline &&
	       got.cap.max_send_sge == fake_qp_get(qp->handle)->cap.max_send_sge &&
	       got.cap.max_inline_data ==
	       fake_qp_get(qp->handle)->cap.max_inline_data,
	       "RC with every RC operation: an ibv_qp_ex, granted caps written back");
	if (qp)
		ibv_destroy_qp(qp);

	qp = new_qpx(IBV_QPT_RC, IBV_QP_INIT_ATTR_PD |
		     IBV_QP_INIT_ATTR_CREATE_FLAGS, 0, NULL);
	tap_ok(qp && !ibv_qp_to_qp_ex(qp),
	       "without send_ops_flags: a plain QP, ibv_qp_to_qp_ex() NULL");
	if (qp)
		ibv_destroy_qp(qp);
	qp = ibv_create_qp(pd, &plain);
	tap_ok(qp && !ibv_qp_to_qp_ex(qp),
	       "ibv_create_qp(): ibv_qp_to_qp_ex() NULL");
	if (qp)
		ibv_destroy_qp(qp);

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		errno = 0;
		tap_ok(!new_qpx(refused[i].type, refused[i].mask,
				refused[i].ops, NULL) &&
		       errno == refused[i].err, "%s: %s", refused[i].what,
		       refused[i].err == EINVAL ? "EINVAL" : "EOPNOTSUPP");
	}
}

/*
 * Posts @wr with post_send into slot @p, then lets @build make the same
 * WR into slot @p + 1 and compares the two WQEs.
 */
static bool same_as_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			      void (*build)(struct ibv_qp_ex *, void *),
			      void *arg)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	struct fake_ring *sq = sq_of(qp);
	struct ibv_send_wr *bad;
	uint32_t p = load(&sq->hdr->prod);
	bool unseen;
	int ret;

	memset(slot(sq, p), 0x5a, sq->stride);
	memset(slot(sq, p + 1), 0x5a, sq->stride);
	wr->next = NULL;
	if (ibv_post_send(qp, wr, &bad))
		return false;
	ibv_wr_start(x);
	x->wr_id = wr->wr_id;
	x->wr_flags = wr->send_flags & ~IBV_SEND_INLINE;
	build(x, arg);
	unseen = load(&sq->hdr->prod) == p + 1;
	ret = ibv_wr_complete(x);
	/* The consumer catches up, as the kernel would. */
	store(&sq->hdr->cons, p + 2);
	if (!unseen)
		tap_diag("prod moved before ibv_wr_complete()");
	return !ret && unseen && load(&sq->hdr->prod) == p + 2 &&
	       !memcmp(slot(sq, p), slot(sq, p + 1), sq->stride);
}

struct sges {
	const struct ibv_sge *list;
	size_t n;
};

static void b_send(struct ibv_qp_ex *x, void *a)
{
	struct sges *s = a;

	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, s->n, s->list);
}

static void b_send_imm(struct ibv_qp_ex *x, void *a)
{
	struct sges *s = a;

	ibv_wr_send_imm(x, htobe32(0x1234));
	ibv_wr_set_sge(x, s->list[0].lkey, s->list[0].addr,
		       s->list[0].length);
}

static void b_send_inv(struct ibv_qp_ex *x, void *a)
{
	(void)a;
	ibv_wr_send_inv(x, 0xabc);
	ibv_wr_set_sge_list(x, 0, NULL);
}

static void b_write(struct ibv_qp_ex *x, void *a)
{
	struct sges *s = a;

	ibv_wr_rdma_write(x, 0x99, 0x7000);
	ibv_wr_set_sge_list(x, s->n, s->list);
}

static void b_write_imm(struct ibv_qp_ex *x, void *a)
{
	struct sges *s = a;

	ibv_wr_rdma_write_imm(x, 0x99, 0x7000, htobe32(7));
	ibv_wr_set_sge_list(x, s->n, s->list);
}

static void b_read(struct ibv_qp_ex *x, void *a)
{
	struct sges *s = a;

	ibv_wr_rdma_read(x, 0x98, 0x8000);
	ibv_wr_set_sge_list(x, s->n, s->list);
}

static void b_cas(struct ibv_qp_ex *x, void *a)
{
	struct sges *s = a;

	ibv_wr_atomic_cmp_swp(x, 0x97, 0x9008, 11, 22);
	ibv_wr_set_sge_list(x, 1, s->list);
}

static void b_faa(struct ibv_qp_ex *x, void *a)
{
	struct sges *s = a;

	ibv_wr_atomic_fetch_add(x, 0x97, 0x9010, 33);
	ibv_wr_set_sge_list(x, 1, s->list);
}

static void b_local_inv(struct ibv_qp_ex *x, void *a)
{
	(void)a;
	ibv_wr_local_inv(x, 0x4242);
}

static void b_bind(struct ibv_qp_ex *x, void *a)
{
	struct ibv_mw_bind_info *info = a;

	ibv_wr_bind_mw(x, NULL, 0x5501, info);
}

static void b_inline(struct ibv_qp_ex *x, void *a)
{
	uint8_t buf[30];
	struct ibv_data_buf list[2] = {
		{ .addr = buf, .length = 10 },
		{ .addr = buf + 10, .length = 20 },
	};
	int i;

	(void)a;
	for (i = 0; i < 30; i++)
		buf[i] = 0x40 + i;
	ibv_wr_rdma_write(x, 0x99, 0x7000);
	ibv_wr_set_inline_data_list(x, 2, list);
	/* Copied by the setter: the buffer may change at once. */
	memset(buf, 0, sizeof(buf));
}

static void check_builders(struct ibv_qp *qp)
{
	uint8_t data[30];
	struct ibv_sge sge[3] = {
		{ .addr = 0x10000, .length = 64, .lkey = 0xa1 },
		{ .addr = 0x20000, .length = 128, .lkey = 0xa2 },
		{ .addr = 0x30000, .length = 8, .lkey = 0xa3 },
	};
	struct sges s3 = { sge, 3 };
	struct ibv_mr mr = { .lkey = 0x777 };
	struct ibv_mw_bind_info info = {
		.mr = &mr, .addr = 0x1000, .length = 0x2000,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_send_wr wr;
	int i;

	wr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = sge, .num_sge = 3,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED |
		IBV_SEND_SOLICITED | IBV_SEND_FENCE };
	tap_ok(same_as_post_send(qp, &wr, b_send, &s3),
	       "ibv_wr_send + set_sge_list (3, flags): post_send's WQE");
	wr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = sge, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htobe32(0x1234) };
	tap_ok(same_as_post_send(qp, &wr, b_send_imm, &s3),
	       "ibv_wr_send_imm + set_sge: post_send's WQE");
	wr = (struct ibv_send_wr){ .wr_id = 3, .opcode = IBV_WR_SEND_WITH_INV,
		.invalidate_rkey = 0xabc };
	tap_ok(same_as_post_send(qp, &wr, b_send_inv, NULL),
	       "ibv_wr_send_inv with no data: post_send's WQE");
	wr = (struct ibv_send_wr){ .wr_id = 4, .sg_list = sge, .num_sge = 3,
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = 0x7000, .rkey = 0x99 } };
	tap_ok(same_as_post_send(qp, &wr, b_write, &s3),
	       "ibv_wr_rdma_write: post_send's WQE");
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htobe32(7);
	tap_ok(same_as_post_send(qp, &wr, b_write_imm, &s3),
	       "ibv_wr_rdma_write_imm: post_send's WQE");
	wr = (struct ibv_send_wr){ .wr_id = 5, .sg_list = sge, .num_sge = 3,
		.opcode = IBV_WR_RDMA_READ,
		.wr.rdma = { .remote_addr = 0x8000, .rkey = 0x98 } };
	tap_ok(same_as_post_send(qp, &wr, b_read, &s3),
	       "ibv_wr_rdma_read: post_send's WQE");
	sge[0].length = 8;
	wr = (struct ibv_send_wr){ .wr_id = 6, .sg_list = sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
		.wr.atomic = { .remote_addr = 0x9008, .compare_add = 11,
			       .swap = 22, .rkey = 0x97 } };
	tap_ok(same_as_post_send(qp, &wr, b_cas, &s3),
	       "ibv_wr_atomic_cmp_swp: post_send's WQE");
	wr = (struct ibv_send_wr){ .wr_id = 7, .sg_list = sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.wr.atomic = { .remote_addr = 0x9010, .compare_add = 33,
			       .rkey = 0x97 } };
	tap_ok(same_as_post_send(qp, &wr, b_faa, &s3),
	       "ibv_wr_atomic_fetch_add: post_send's WQE");
	wr = (struct ibv_send_wr){ .wr_id = 8, .opcode = IBV_WR_LOCAL_INV,
		.invalidate_rkey = 0x4242 };
	tap_ok(same_as_post_send(qp, &wr, b_local_inv, NULL),
	       "ibv_wr_local_inv: post_send's WQE");
	wr = (struct ibv_send_wr){ .wr_id = 9, .opcode = IBV_WR_BIND_MW,
		.bind_mw = { .rkey = 0x5501, .bind_info = info } };
	tap_ok(same_as_post_send(qp, &wr, b_bind, &info),
	       "ibv_wr_bind_mw: post_send's WQE");
	for (i = 0; i < 30; i++)
		data[i] = 0x40 + i;
	sge[0] = (struct ibv_sge){ .addr = (uintptr_t)data, .length = 10 };
	sge[1] = (struct ibv_sge){ .addr = (uintptr_t)data + 10,
				   .length = 20 };
	wr = (struct ibv_send_wr){ .wr_id = 10, .sg_list = sge, .num_sge = 2,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_INLINE,
		.wr.rdma = { .remote_addr = 0x7000, .rkey = 0x99 } };
	tap_ok(same_as_post_send(qp, &wr, b_inline, NULL),
	       "ibv_wr_set_inline_data_list: copied at once, post_send's WQE");
}

/* A batch of @n SENDs, the last one given @last_sges SGEs. */
static int batch(struct ibv_qp *qp, int n, size_t last_sges)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	struct ibv_sge sge[64] = {};
	int i;

	ibv_wr_start(x);
	for (i = 0; i < n; i++) {
		x->wr_id = i;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(x);
		ibv_wr_set_sge_list(x, i == n - 1 ? last_sges : 1, sge);
	}
	return ibv_wr_complete(x);
}

static void check_batches(struct ibv_qp *qp)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	struct fake_qp *f = fake_qp_get(qp->handle);
	struct fake_ring *sq = f->sq;
	uint32_t p = load(&sq->hdr->prod);
	uint32_t max_sge = to_vqp(qp)->sq.max_sge;
	uint32_t max_inline = to_vqp(qp)->max_inline;
	uint8_t big[1024] = {};
	unsigned int doorbells;
	int ret;

	if (!tap_ok(max_sge >= 3 && max_sge < 64 && max_inline >= 40 &&
		    max_inline < sizeof(big), "granted %u SGEs, %u inline bytes",
		    max_sge, max_inline))
		return;

	ret = batch(qp, 3, 1);
	tap_ok(!ret && load(&sq->hdr->prod) == p + 3,
	       "three SENDs in one batch: prod moves by 3 at complete");
	p += 3;
	store(&sq->hdr->cons, p);

	ret = batch(qp, 3, max_sge + 1);
	tap_ok(ret == EINVAL && load(&sq->hdr->prod) == p,
	       "one SGE more than max_send_sge: EINVAL, none of the 3 posted");
	tap_ok(batch(qp, 1, 1) == 0 && load(&sq->hdr->prod) == p + 1,
	       "the next batch starts where the failed one did");
	p++;
	store(&sq->hdr->cons, p);

	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 2, 3);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 2, 3);
	ibv_wr_abort(x);
	tap_ok(load(&sq->hdr->prod) == p && batch(qp, 1, 1) == 0 &&
	       load(&sq->hdr->prod) == p + 1,
	       "ibv_wr_abort() leaves no trace");
	p++;
	store(&sq->hdr->cons, p);

	ibv_wr_start(x);
	ibv_wr_set_sge(x, 1, 2, 3);
	tap_ok(ibv_wr_complete(x) == EINVAL && load(&sq->hdr->prod) == p,
	       "a setter before any builder: EINVAL");
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, 1, 2);
	ibv_wr_set_inline_data(x, big, max_inline + 1);
	tap_ok(ibv_wr_complete(x) == EINVAL && load(&sq->hdr->prod) == p,
	       "one byte more than max_inline_data: EINVAL");
	ibv_wr_start(x);
	ibv_wr_rdma_read(x, 1, 2);
	ibv_wr_set_inline_data(x, big, 4);
	tap_ok(ibv_wr_complete(x) == EINVAL, "inline data on a READ: EINVAL");
	ibv_wr_start(x);
	ibv_wr_atomic_fetch_add(x, 1, 0x1004, 1);
	ibv_wr_set_sge(x, 1, 0x100, 8);
	tap_ok(ibv_wr_complete(x) == EINVAL,
	       "an atomic at an unaligned address: EINVAL");
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_IP_CSUM;
	ibv_wr_send(x);
	tap_ok(ibv_wr_complete(x) == EINVAL, "IBV_SEND_IP_CSUM: EINVAL");
	ibv_wr_start(x);
	x->wr_flags = 0;
	ibv_wr_send_tso(x, big, 4, 100);
	tap_ok(ibv_wr_complete(x) == EOPNOTSUPP, "ibv_wr_send_tso: EOPNOTSUPP");
	tap_ok(load(&sq->hdr->prod) == p, "no failed batch moved prod");

	ret = batch(qp, sq->entries + 1, 1);
	tap_ok(ret == ENOMEM && load(&sq->hdr->prod) == p,
	       "one WR more than the ring holds: ENOMEM, none posted");

	doorbells = f->doorbells;
	__atomic_store_n(&sq->hdr->notify, VROCE_SQ_NEEDS_WAKEUP,
			 __ATOMIC_RELEASE);
	tap_ok(batch(qp, 2, 1) == 0 && f->doorbells == doorbells + 1,
	       "a sleeping engine: one doorbell for the batch");
	__atomic_store_n(&sq->hdr->notify, 0, __ATOMIC_RELEASE);
	tap_ok(batch(qp, 2, 1) == 0 && f->doorbells == doorbells + 1,
	       "an awake engine: no doorbell");
	store(&sq->hdr->cons, load(&sq->hdr->prod));

	modify_state(qp, IBV_QPS_INIT);
	p = load(&sq->hdr->prod);
	tap_ok(batch(qp, 1, 1) == EINVAL && load(&sq->hdr->prod) == p,
	       "in INIT: EINVAL, as post_send");
}

static void check_ud(void)
{
	const uint32_t m = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct vroce_ah ours = {
		.ibv_ah = { .context = ctx, .pd = pd, .handle = 3 },
		.ah_num = 0x55,
	};
	struct ibv_qp *qp = new_qpx(IBV_QPT_UD, m, IBV_QP_EX_WITH_SEND |
				    IBV_QP_EX_WITH_SEND_WITH_IMM, NULL);
	struct ibv_qp_ex *x;
	struct vroce_send_wqe h;
	struct fake_ring *sq;

	if (!tap_ok(qp && !to_rts(qp) && ibv_qp_to_qp_ex(qp),
		    "a UD QP with SEND and SEND_WITH_IMM, in RTS"))
		return;
	x = ibv_qp_to_qp_ex(qp);
	sq = sq_of(qp);
	ibv_wr_start(x);
	x->wr_id = 0x77;
	x->wr_flags = 0;
	ibv_wr_send_imm(x, htobe32(1));
	ibv_wr_set_ud_addr(x, &ours.ibv_ah, 0xabcdef, 0x11111111);
	ibv_wr_set_sge(x, 5, 0x1000, 16);
	tap_ok(ibv_wr_complete(x) == 0 && load(&sq->hdr->prod) == 1,
	       "UD SEND_WITH_IMM posted");
	memcpy(&h, slot(sq, 0), sizeof(h));
	tap_ok(h.opcode == IB_UVERBS_WR_SEND_WITH_IMM && h.wr_id == 0x77 &&
	       h.imm_data == htobe32(1) && h.num_sge == 1 &&
	       h.u.ud.ah_num == 0x55 && h.u.ud.remote_qpn == 0xabcdef &&
	       h.u.ud.remote_qkey == 0x11111111,
	       "UD: ibv_wr_set_ud_addr names the AH, QPN and Q_Key");
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 5, 0x1000, 16);
	tap_ok(ibv_wr_complete(x) == EINVAL && load(&sq->hdr->prod) == 1,
	       "UD without ibv_wr_set_ud_addr: EINVAL");
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, 1, 2);
	ibv_wr_set_ud_addr(x, &ours.ibv_ah, 1, 1);
	tap_ok(ibv_wr_complete(x) == EINVAL, "UD RDMA_WRITE: EINVAL");
	tap_ok(ibv_destroy_qp(qp) == 0, "the UD QP is destroyed");
}

/*
 * ibv_wr_atomic_write(): a WQE of VROCE_WR_ATOMIC_WRITE carrying the 8
 * bytes in u.atomic.swap, no SGEs; only on a QP that asked for it.
 */
static void check_atomic_write(void)
{
	const uint32_t m = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 0xf8 };
	struct ibv_sge sge = { .addr = 0x1000, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr = { .opcode = IBV_WR_ATOMIC_WRITE,
				  .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_qp *qp = new_qpx(IBV_QPT_RC, m, IBV_QP_EX_WITH_SEND, NULL);
	struct vroce_send_wqe h;
	struct fake_ring *sq;
	struct ibv_qp_ex *x;
	uint8_t got[8];

	tap_ok(qp && ibv_qp_to_qp_ex(qp) &&
	       !ibv_qp_to_qp_ex(qp)->wr_atomic_write,
	       "a QP that did not ask for ATOMIC_WRITE has no wr_atomic_write");
	if (qp)
		ibv_destroy_qp(qp);
	qp = new_qpx(IBV_QPT_RC, m, IBV_QP_EX_WITH_ATOMIC_WRITE, NULL);
	if (!tap_ok(qp && !to_rts(qp) && ibv_qp_to_qp_ex(qp) &&
		    ibv_qp_to_qp_ex(qp)->wr_atomic_write,
		    "an RC QP with ATOMIC_WRITE, in RTS"))
		return;
	x = ibv_qp_to_qp_ex(qp);
	sq = sq_of(qp);
	ibv_wr_start(x);
	x->wr_id = 0x99;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, 0x1234, 0xa0008, data);
	tap_ok(ibv_wr_complete(x) == 0 && load(&sq->hdr->prod) == 1,
	       "ibv_wr_atomic_write posted");
	memcpy(&h, slot(sq, 0), sizeof(h));
	memcpy(got, &h.u.atomic.swap, sizeof(got));
	tap_ok(h.opcode == VROCE_WR_ATOMIC_WRITE && h.wr_id == 0x99 &&
	       h.flags == VROCE_WQE_SIGNALED && h.num_sge == 0 &&
	       h.inline_len == 0 && h.u.atomic.remote_addr == 0xa0008 &&
	       h.u.atomic.rkey == 0x1234 && !memcmp(got, data, sizeof(got)),
	       "its WQE: opcode %u, the address, R_Key and the 8 bytes as given",
	       VROCE_WR_ATOMIC_WRITE);
	ibv_wr_start(x);
	ibv_wr_atomic_write(x, 0x1234, 0xa0004, data);
	tap_ok(ibv_wr_complete(x) == EINVAL && load(&sq->hdr->prod) == 1,
	       "an address not 8-byte aligned: EINVAL, nothing posted");
	ibv_wr_start(x);
	ibv_wr_atomic_write(x, 0x1234, 0xa0008, NULL);
	tap_ok(ibv_wr_complete(x) == EINVAL && load(&sq->hdr->prod) == 1,
	       "no data: EINVAL, nothing posted");
	wr.wr.atomic.remote_addr = 0xa0008;
	tap_ok(ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr &&
	       load(&sq->hdr->prod) == 1,
	       "ibv_post_send with IBV_WR_ATOMIC_WRITE: EINVAL");
	tap_ok(ibv_destroy_qp(qp) == 0, "the QP is destroyed");
}

int main(int argc, char **argv)
{
	const uint32_t m = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct test_env t;
	int opened = !test_open(&t, argc, argv, 1);
	struct ibv_qp *qp;

	if (!opened)
		return test_close(&t, opened);
	ctx = t.ctx;
	pd = t.pd;
	cq = t.cq;
	check_create();
	qp = new_qpx(IBV_QPT_RC, m, ALL_RC_OPS, NULL);
	if (tap_ok(qp && !to_rts(qp), "an RC QP with every operation, in RTS")) {
		check_builders(qp);
		check_batches(qp);
		tap_ok(ibv_destroy_qp(qp) == 0, "the RC QP is destroyed");
	}
	check_ud();
	check_atomic_write();
	return test_close(&t, opened);
}
