// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * The CQ and QP verbs of the provider against the fake uverbs device,
 * through the installed libibverbs:
 *
 *   rings_test <absolute path of libvroce-rdmav34.so>
 *
 * The test plays the kernel: it reads the commands the provider sends
 * (fake_uverbs.c answers them and records what it saw) and works on the
 * rings from the kernel's side, through the fake kernel's own mapping of
 * each ring.  It writes CQEs and checks what poll_cq makes of them, checks
 * the exact WQE bytes post_send and post_recv write, the notify words of
 * req_notify_cq, the SQ doorbell, and the errors of every verb.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "fake_sysfs.h"
#include "fake_uverbs.h"
#include "tap.h"
#include "vroce.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

/* ---- helpers ---- */

static struct fake_cq *fcq(struct ibv_cq *cq)
{
	return fake_cq_get(cq->handle);
}

static struct fake_qp *fqp(struct ibv_qp *qp)
{
	return fake_qp_get(qp->handle);
}

static uint32_t load(const uint32_t *idx)
{
	return __atomic_load_n(idx, __ATOMIC_ACQUIRE);
}

static void store(uint32_t *idx, uint32_t val)
{
	__atomic_store_n(idx, val, __ATOMIC_RELEASE);
}

static void *slot(const struct fake_ring *ring, uint32_t idx)
{
	return ring->ent + (size_t)(idx & (ring->entries - 1)) * ring->stride;
}

static void fill_ring(struct fake_ring *ring, uint8_t byte)
{
	memset(ring->ent, byte, (size_t)ring->entries * ring->stride);
}

static bool all_bytes(const void *p, uint8_t byte, size_t len)
{
	const uint8_t *b = p;

	while (len--)
		if (*b++ != byte)
			return false;
	return true;
}

/* Compare, and show the first difference. */
static bool same_bytes(const void *got, const void *want, size_t len)
{
	const uint8_t *g = got, *w = want;
	size_t i;

	for (i = 0; i < len; i++)
		if (g[i] != w[i]) {
			tap_diag("byte %zu: got 0x%02x, want 0x%02x", i, g[i],
				 w[i]);
			return false;
		}
	return true;
}

static struct vroce_cqe cqe_of(uint64_t wr_id)
{
	return (struct vroce_cqe){
		.wr_id = wr_id,
		.opcode = IBV_WC_SEND,
		.byte_len = (uint32_t)wr_id * 3,
		.qp_num = FAKE_QPN_BASE,
	};
}

static void set_tweak(void (*fn)(uint32_t, void *, void *))
{
	fake.tweak = fn;
}

static void fail_next(uint32_t command, int err)
{
	fake.fail_cmd = command;
	fake.fail_errno = err;
}

static struct ibv_cq *new_cq(int cqe)
{
	return ibv_create_cq(ctx, cqe, NULL, NULL, 0);
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

static struct ibv_qp *new_qp(enum ibv_qp_type type, struct ibv_cq *cq,
			     int sq_sig_all, struct ibv_qp_init_attr *out)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = 10,
			.max_recv_wr = 5,
			.max_send_sge = 3,
			.max_recv_sge = 2,
			.max_inline_data = 40,
		},
		.qp_type = type,
		.sq_sig_all = sq_sig_all,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &attr);

	if (out)
		*out = attr;
	return qp;
}

/* ---- CQ creation ---- */

static void tweak_cq_entries(uint32_t cmd, void *core, void *drv)
{
	struct vroce_create_cq_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_CREATE_CQ)
		r->entries = 6;
}

static void tweak_cq_cqe(uint32_t cmd, void *core, void *drv)
{
	struct ib_uverbs_create_cq_resp *c = core;
	struct vroce_create_cq_resp *r = drv;

	if (cmd == IB_USER_VERBS_CMD_CREATE_CQ)
		c->cqe = r->entries + 1;
}

static void tweak_cq_size(uint32_t cmd, void *core, void *drv)
{
	struct vroce_create_cq_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_CREATE_CQ)
		r->ring_size -= sizeof(struct vroce_cqe);
}

static void tweak_cq_offset(uint32_t cmd, void *core, void *drv)
{
	struct vroce_create_cq_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_CREATE_CQ)
		r->ring_offset += 1ULL << 40;
}

/* A create whose response the provider must refuse: the CQ is undone. */
static void check_cq_refused(void (*tweak)(uint32_t, void *, void *),
			     int want, const char *what)
{
	unsigned int destroyed = fake.destroy_cq;
	unsigned int maps = fake_user_maps();
	struct ibv_cq *cq;

	set_tweak(tweak);
	errno = 0;
	cq = new_cq(8);
	set_tweak(NULL);
	tap_ok(!cq && errno == want,
	       "create_cq with %s fails with %s (errno %d)", what,
	       strerror(want), errno);
	tap_ok(fake.destroy_cq == destroyed + 1 && fake_user_maps() == maps,
	       "...destroys the kernel CQ and leaves nothing mapped");
	if (cq)
		ibv_destroy_cq(cq);
}

static struct ibv_cq *check_cq_create(void)
{
	unsigned int created = fake.create_cq;
	struct fake_cq *f;
	struct ibv_cq *cq;

	cq = ibv_create_cq(ctx, 5, (void *)0x1234, NULL, 2);
	if (!tap_ok(cq != NULL, "ibv_create_cq(5) succeeds"))
		return NULL;
	f = fcq(cq);
	tap_ok(f && fake.create_cq == created + 1 && f->comp_vector == 2 &&
	       f->comp_channel == -1,
	       "CREATE_CQ carries comp_vector, no channel");
	tap_ok(cq->cqe == 8 && f && f->cqe == 8,
	       "cqe is what the kernel reported (8), got %d", cq->cqe);
	tap_ok(cq->cq_context == (void *)0x1234 && cq->context == ctx,
	       "libibverbs fills in context and cq_context");
	tap_ok(f && to_vcq(cq)->cqn == f->cqn, "the CQ keeps the kernel's cqn");
	tap_ok(f && f->ring->user_maps == 1 &&
	       f->ring->user_len == f->ring->size,
	       "the CQ ring is mapped once, ring_size bytes");
	tap_ok(f && f->ring->offset == 0,
	       "...from mmap offset 0, the first ib_core hands out");
	tap_ok(load(&f->ring->hdr->notify) == 0 &&
	       load(&f->ring->hdr->cons) == 0,
	       "a new CQ is not armed and has consumed nothing");

	errno = 0;
	tap_ok(!new_cq(0) && errno == EINVAL,
	       "ibv_create_cq(0) fails with the kernel's EINVAL");
	errno = 0;
	tap_ok(!new_cq(FAKE_MAX_CQE + 1) && errno == EINVAL,
	       "ibv_create_cq(max + 1) fails with the kernel's EINVAL");

	check_cq_refused(tweak_cq_entries, EPROTO,
			 "a ring size that is not a power of two");
	check_cq_refused(tweak_cq_cqe, EPROTO, "cqe > ring entries");
	check_cq_refused(tweak_cq_size, EPROTO, "a ring map too small");
	check_cq_refused(tweak_cq_offset, EINVAL, "an offset mmap refuses");
	return cq;
}

/* ---- poll_cq ---- */

static void check_poll(struct ibv_cq *cq)
{
	struct fake_cq *f = fcq(cq);
	struct vroce_cqe in[3];
	struct ibv_wc wc[16];
	unsigned int commands;
	bool ok;
	int n, i;

	memset(wc, 0xff, sizeof(wc));
	commands = fake.commands;
	tap_ok(ibv_poll_cq(cq, 4, wc) == 0, "polling an empty CQ returns 0");
	tap_ok(ibv_poll_cq(cq, 0, wc) == 0, "polling for 0 entries returns 0");

	in[0] = (struct vroce_cqe){
		.wr_id = 0x1122334455667788ULL,
		.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV_RDMA_WITH_IMM,
		.flags = VROCE_CQE_GRH | VROCE_CQE_WITH_IMM | 0xf0,
		.sl = 3,
		.byte_len = 4096,
		.imm_data = 0x78563412,
		.qp_num = 0x123,
		.src_qp = 0x456,
		.pkey_index = 1,
		.network_hdr_type = 3,
	};
	in[1] = (struct vroce_cqe){
		.wr_id = 7,
		.status = IBV_WC_REM_ACCESS_ERR,
		.opcode = IBV_WC_RDMA_WRITE,
		.qp_num = 0x123,
	};
	in[2] = (struct vroce_cqe){
		.wr_id = 8,
		.opcode = IBV_WC_RECV,
		.flags = VROCE_CQE_WITH_INV | VROCE_CQE_IP_CSUM_OK,
		.imm_data = 0xabcd,
		.byte_len = 17,
	};
	ok = true;
	for (i = 0; i < 3; i++)
		ok &= fake_cq_push(f, &in[i]);
	tap_ok(ok, "the kernel adds 3 CQEs");

	n = ibv_poll_cq(cq, 2, wc);
	tap_ok(n == 2, "poll_cq(2) returns 2 of the 3 (got %d)", n);
	tap_ok(wc[0].wr_id == in[0].wr_id && wc[0].status == IBV_WC_SUCCESS &&
	       wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	       wc[0].byte_len == 4096 && wc[0].qp_num == 0x123 &&
	       wc[0].src_qp == 0x456 && wc[0].pkey_index == 1,
	       "the first WC has the CQE's wr_id, status, opcode, lengths, QPs and pkey");
	tap_ok(wc[0].sl == 0x9,
	       "a UD receive's sl is its packet type as mlx5 reports it: RoCE v2 over IPv6, 0x9 (got 0x%x)",
	       wc[0].sl);
	tap_ok(wc[0].imm_data == 0x78563412,
	       "imm_data is copied as it is (already big endian)");
	tap_ok(wc[0].wc_flags == (IBV_WC_GRH | IBV_WC_WITH_IMM),
	       "wc_flags are the CQE flags, unknown bits dropped (got 0x%x)",
	       wc[0].wc_flags);
	tap_ok(wc[0].vendor_err == 0 && wc[0].slid == 0 &&
	       wc[0].dlid_path_bits == 0,
	       "vendor_err, slid and dlid_path_bits are 0");
	tap_ok(wc[1].wr_id == 7 && wc[1].status == IBV_WC_REM_ACCESS_ERR &&
	       wc[1].opcode == IBV_WC_RDMA_WRITE && wc[1].wc_flags == 0,
	       "the second WC carries the error status");
	tap_ok(load(&f->ring->hdr->cons) == 2,
	       "the consumer index published to the kernel is 2");

	n = ibv_poll_cq(cq, 16, wc);
	tap_ok(n == 1 && wc[0].wr_id == 8 &&
	       wc[0].wc_flags == (IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK) &&
	       wc[0].invalidated_rkey == 0xabcd,
	       "the third WC: invalidated rkey and flags");
	tap_ok(load(&f->ring->hdr->cons) == 3, "cons is 3");
	tap_ok(fake.commands == commands, "polling made no system call");

	/* Many times round the 8-entry ring. */
	ok = true;
	for (i = 0; i < 40 && ok; i++) {
		struct vroce_cqe c = cqe_of(1000 + i);

		ok = fake_cq_push(f, &c) && ibv_poll_cq(cq, 4, wc) == 1 &&
		     wc[0].wr_id == 1000u + i && wc[0].byte_len == c.byte_len;
	}
	tap_ok(ok, "40 CQEs one at a time through the 8-entry ring");

	ok = true;
	for (i = 0; i < 8; i++) {
		struct vroce_cqe c = cqe_of(2000 + i);

		ok &= fake_cq_push(f, &c);
	}
	tap_ok(ok, "the kernel fills the ring (8 CQEs)");
	{
		struct vroce_cqe c = cqe_of(9999);

		tap_ok(!fake_cq_push(f, &c), "...and then it is full");
	}
	n = ibv_poll_cq(cq, 16, wc);
	ok = n == 8;
	for (i = 0; i < 8 && ok; i++)
		ok = wc[i].wr_id == 2000u + i;
	tap_ok(ok, "poll_cq returns all 8 of a full ring, in order (got %d)",
	       n);

	/* A kernel that publishes more than the ring holds. */
	store(&f->ring->hdr->prod, f->kprod + 9);
	errno = 0;
	n = ibv_poll_cq(cq, 16, wc);
	tap_ok(n < 0 && errno == EIO,
	       "a prod more than the ring size ahead fails with EIO (got %d)",
	       n);
	store(&f->ring->hdr->prod, f->kprod);
	tap_ok(ibv_poll_cq(cq, 16, wc) == 0, "...and polls again once fixed");
}

/* ---- req_notify_cq ---- */

static void check_notify(struct ibv_cq *cq)
{
	struct fake_cq *f = fcq(cq);
	unsigned int commands = fake.commands;
	uint32_t *notify = &f->ring->hdr->notify;
	int r1, r2, r3;

	r1 = ibv_req_notify_cq(cq, 0);
	tap_ok(!r1 && load(notify) == 2,
	       "req_notify_cq(all) writes sequence 1 (notify 0x%x)",
	       load(notify));
	r2 = ibv_req_notify_cq(cq, 1);
	tap_ok(!r2 && load(notify) == (2 << 1 | VROCE_CQ_ARM_SOLICITED),
	       "req_notify_cq(solicited) writes sequence 2 | SOLICITED (0x%x)",
	       load(notify));
	r3 = ibv_req_notify_cq(cq, 0);
	tap_ok(!r3 && load(notify) == 3 << 1,
	       "req_notify_cq(all) writes sequence 3 (0x%x)", load(notify));
	tap_ok(fake.commands == commands, "arming made no system call");
}

/* ---- resize_cq ---- */

static void tweak_resize_entries(uint32_t cmd, void *core, void *drv)
{
	struct vroce_resize_cq_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_RESIZE_CQ)
		r->entries = 3;
}

static void check_resize(struct ibv_cq *cq)
{
	struct fake_cq *f = fcq(cq);
	struct fake_ring *old = f->ring;
	struct ibv_wc wc[8];
	struct ibv_cq *cq2;
	uint32_t armed;
	bool ok = true;
	int i, n, ret;

	for (i = 0; i < 3; i++) {
		struct vroce_cqe c = cqe_of(300 + i);

		ok &= fake_cq_push(f, &c);
	}
	ok &= ibv_poll_cq(cq, 1, wc) == 1 && wc[0].wr_id == 300;
	ok &= !ibv_req_notify_cq(cq, 1);
	armed = load(&old->hdr->notify);
	tap_ok(ok, "3 CQEs added, 1 polled, CQ armed for solicited");

	ret = ibv_resize_cq(cq, 20);
	tap_ok(!ret, "ibv_resize_cq(20) succeeds (%d)", ret);
	tap_ok(fake.resize_cons_seen == load(&old->hdr->cons) &&
	       f->kprod == 2,
	       "the kernel saw our cons and copied the 2 unpolled CQEs");
	tap_ok(cq->cqe == 32, "cqe is the kernel's new size (32), got %d",
	       cq->cqe);
	tap_ok(f->ring != old && old->user_maps == 0 &&
	       f->ring->user_maps == 1,
	       "the old ring is unmapped, the new one mapped");
	tap_ok(load(&f->ring->hdr->notify) == armed,
	       "the arm word is carried over to the new ring");

	n = ibv_poll_cq(cq, 8, wc);
	tap_ok(n == 2 && wc[0].wr_id == 301 && wc[1].wr_id == 302,
	       "polling goes on with the copied CQEs, in order");
	tap_ok(load(&f->ring->hdr->cons) == 2,
	       "the new ring's cons counts from 0");

	ok = true;
	for (i = 0; i < 3; i++) {
		struct vroce_cqe c = cqe_of(400 + i);

		ok &= fake_cq_push(f, &c);
	}
	ret = ibv_resize_cq(cq, 2);
	tap_ok(ok && ret == EINVAL && cq->cqe == 32,
	       "resizing below the unpolled CQEs fails with the kernel's EINVAL");
	fail_next(IB_USER_VERBS_CMD_RESIZE_CQ, ENOMEM);
	ret = ibv_resize_cq(cq, 64);
	fail_next(0, 0);
	tap_ok(ret == ENOMEM, "a failed RESIZE_CQ returns its error");
	n = ibv_poll_cq(cq, 8, wc);
	tap_ok(n == 3 && wc[0].wr_id == 400 && wc[2].wr_id == 402 &&
	       f->ring->user_maps == 1,
	       "...and the CQ keeps polling its ring");

	cq2 = new_cq(4);
	if (!tap_ok(cq2 != NULL, "a second CQ"))
		return;
	set_tweak(tweak_resize_entries);
	ret = ibv_resize_cq(cq2, 16);
	set_tweak(NULL);
	tap_ok(ret == EPROTO,
	       "a resize response with a bad ring fails with EPROTO (%d)", ret);
	errno = 0;
	n = ibv_poll_cq(cq2, 8, wc);
	tap_ok(n < 0 && errno == EIO && ibv_req_notify_cq(cq2, 0) == EIO &&
	       ibv_resize_cq(cq2, 8) == EIO,
	       "...after which the CQ has no ring: poll, arm and resize fail with EIO");
	tap_ok(ibv_destroy_cq(cq2) == 0, "...and it can still be destroyed");
}

/* ---- extended CQs ---- */

/* The CQ lock is free (so the verb that returned dropped it). */
static bool unlocked(struct ibv_cq_ex *cq)
{
	pthread_spinlock_t *lock = &to_vcq_ex(cq)->lock;

	if (pthread_spin_trylock(lock))
		return false;
	pthread_spin_unlock(lock);
	return true;
}

static void check_cq_ex_refused(struct ibv_cq_init_attr_ex *attr,
				const char *what)
{
	unsigned int commands = fake.commands;

	errno = 0;
	tap_ok(!ibv_create_cq_ex(ctx, attr) && errno == EOPNOTSUPP &&
	       fake.commands == commands,
	       "ibv_create_cq_ex() with %s fails with EOPNOTSUPP, no command",
	       what);
}

static void check_cq_ex(void)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 4,
		.cq_context = (void *)0x5678,
		.comp_vector = 1,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct ibv_poll_cq_attr pattr = {};
	struct vroce_cqe c[3];
	struct ibv_cq_ex *cq;
	struct ibv_wc wc[4];
	struct fake_cq *f;
	bool ok;
	int ret, i;

	attr.wc_flags |= IBV_WC_EX_WITH_CVLAN;
	check_cq_ex_refused(&attr, "a VLAN");
	attr.wc_flags = IBV_WC_STANDARD_FLAGS;
	attr.flags |= IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	check_cq_ex_refused(&attr, "IGNORE_OVERRUN");
	attr.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	attr.comp_mask |= IBV_CQ_INIT_ATTR_MASK_PD;
	attr.parent_domain = pd;
	errno = 0;
	tap_ok(!ibv_create_cq_ex(ctx, &attr) && errno == EINVAL,
	       "ibv_create_cq_ex() with a PD that is no parent domain: EINVAL");
	attr.parent_domain = NULL;
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;

	cq = ibv_create_cq_ex(ctx, &attr);
	if (!tap_ok(cq != NULL, "ibv_create_cq_ex() with the standard wc_flags"))
		return;
	f = fcq(ibv_cq_ex_to_cq(cq));
	tap_ok(f && cq->cqe == 4 && f->comp_vector == 1 && cq->context == ctx &&
	       cq->cq_context == (void *)0x5678 && !cq->channel &&
	       f->ring->user_maps == 1,
	       "the extended CQ is initialised (context, cq_context) and mapped");
	if (!f)
		return;

	/* A lock left held would hang what follows: stop there. */
	ret = ibv_start_poll(cq, &pattr);
	if (!tap_ok(ret == ENOENT && unlocked(cq),
		    "start_poll on an empty CQ: ENOENT, lock dropped"))
		return;
	pattr.comp_mask = 1;
	ret = ibv_start_poll(cq, &pattr);
	if (!tap_ok(ret == EINVAL && unlocked(cq),
		    "start_poll with an unknown comp_mask: EINVAL"))
		return;
	pattr.comp_mask = 0;

	c[0] = (struct vroce_cqe){
		.wr_id = 10,
		.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV_RDMA_WITH_IMM,
		.flags = VROCE_CQE_WITH_IMM | VROCE_CQE_GRH | 0x80,
		.sl = 5,
		.byte_len = 99,
		.imm_data = 0x04030201,
		.qp_num = 0x21,
		.src_qp = 0x22,
		.network_hdr_type = 2,
	};
	c[1] = cqe_of(11);
	c[1].status = IBV_WC_WR_FLUSH_ERR;
	c[2] = cqe_of(12);
	ok = true;
	for (i = 0; i < 3; i++)
		ok &= fake_cq_push(f, &c[i]);
	tap_ok(ok, "the kernel adds 3 CQEs");

	ret = ibv_start_poll(cq, &pattr);
	tap_ok(!ret && cq->wr_id == 10 && cq->status == IBV_WC_SUCCESS &&
	       !unlocked(cq),
	       "start_poll: the first CQE, the lock held for the batch");
	tap_ok(ibv_wc_read_opcode(cq) == IBV_WC_RECV_RDMA_WITH_IMM &&
	       ibv_wc_read_byte_len(cq) == 99 &&
	       ibv_wc_read_imm_data(cq) == 0x04030201 &&
	       ibv_wc_read_qp_num(cq) == 0x21 &&
	       ibv_wc_read_src_qp(cq) == 0x22 &&
	       ibv_wc_read_wc_flags(cq) == (IBV_WC_WITH_IMM | IBV_WC_GRH) &&
	       ibv_wc_read_sl(cq) == 0xa && ibv_wc_read_slid(cq) == 0 &&
	       ibv_wc_read_dlid_path_bits(cq) == 0 &&
	       ibv_wc_read_vendor_err(cq) == 0,
	       "the read functions return the CQE's fields (sl: RoCE v2 over IPv4, 0xa)");
	ret = ibv_next_poll(cq);
	tap_ok(!ret && cq->wr_id == 11 && cq->status == IBV_WC_WR_FLUSH_ERR &&
	       ibv_wc_read_byte_len(cq) == 33,
	       "next_poll: the second CQE");
	ibv_end_poll(cq);
	if (!tap_ok(load(&f->ring->hdr->cons) == 2 && unlocked(cq),
		    "end_poll consumes the current CQE, publishes cons 2, unlocks"))
		return;

	ret = ibv_start_poll(cq, &pattr);
	tap_ok(!ret && cq->wr_id == 12, "the next batch starts at the third");
	ret = ibv_next_poll(cq);
	tap_ok(ret == ENOENT, "next_poll past the last: ENOENT");
	ibv_end_poll(cq);
	if (!tap_ok(load(&f->ring->hdr->cons) == 3 && unlocked(cq),
		    "...end_poll then publishes cons 3"))
		return;

	c[0] = cqe_of(13);
	ok = fake_cq_push(f, &c[0]);
	tap_ok(ok && ibv_poll_cq(ibv_cq_ex_to_cq(cq), 4, wc) == 1 &&
	       wc[0].wr_id == 13,
	       "ibv_poll_cq() works on an extended CQ too");
	tap_ok(!ibv_req_notify_cq(ibv_cq_ex_to_cq(cq), 0) &&
	       load(&f->ring->hdr->notify) == 2,
	       "so does ibv_req_notify_cq()");

	store(&f->ring->hdr->prod, f->kprod + 5);
	ret = ibv_start_poll(cq, &pattr);
	tap_ok(ret == EIO && unlocked(cq),
	       "start_poll on a broken ring: EIO, lock dropped");
	store(&f->ring->hdr->prod, f->kprod);

	tap_ok(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0,
	       "the extended CQ is destroyed");
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* The completion timestamps: the kernel's CLOCK_MONOTONIC ns, as written. */
static void check_cq_ex_ts(void)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 4,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_values_ex values = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_poll_cq_attr pattr = {};
	struct vroce_cqe c = cqe_of(21);
	uint64_t mono, real, ts, wall, raw;
	struct ibv_cq_ex *cq;
	struct fake_cq *f;

	cq = ibv_create_cq_ex(ctx, &attr);
	if (!tap_ok(cq != NULL, "ibv_create_cq_ex() with both timestamps"))
		return;
	f = fcq(ibv_cq_ex_to_cq(cq));
	mono = clock_ns(CLOCK_MONOTONIC);
	real = clock_ns(CLOCK_REALTIME);
	c.timestamp = mono - 5000000;	/* 5 ms ago */
	if (!tap_ok(f && fake_cq_push(f, &c) &&
		    ibv_start_poll(cq, &pattr) == 0, "a CQE with a timestamp"))
		return;
	ts = ibv_wc_read_completion_ts(cq);
	wall = ibv_wc_read_completion_wallclock_ns(cq);
	ibv_end_poll(cq);
	tap_ok(ts == mono - 5000000, "read_completion_ts: the CQE's timestamp");
	tap_ok(wall + 5000000 > real - 100000000 &&
	       wall + 5000000 < real + 100000000,
	       "read_completion_wallclock_ns: the same moment on CLOCK_REALTIME (%lld ns off)",
	       (long long)(wall + 5000000 - real));
	tap_ok(ibv_query_rt_values_ex(ctx, &values) == 0 &&
	       (raw = (uint64_t)values.raw_clock.tv_sec * 1000000000ULL +
		      values.raw_clock.tv_nsec) >= mono &&
	       raw <= clock_ns(CLOCK_MONOTONIC),
	       "ibv_query_rt_values_ex(): the raw clock is CLOCK_MONOTONIC");
	values.comp_mask = IBV_VALUES_MASK_RESERVED;
	tap_ok(ibv_query_rt_values_ex(ctx, &values) == EINVAL,
	       "ibv_query_rt_values_ex() with an unknown mask bit: EINVAL");
	tap_ok(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0,
	       "the timestamping CQ is destroyed");
}

/* ---- QP creation ---- */

static void tweak_no_rq(uint32_t cmd, void *core, void *drv)
{
	struct vroce_create_qp_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_CREATE_QP) {
		r->rq_offset = 0;
		r->rq_size = 0;
		r->rq_entries = 0;
		r->rq_wqe_size = 0;
	}
}

static void tweak_small_sq_wqe(uint32_t cmd, void *core, void *drv)
{
	struct vroce_create_qp_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_CREATE_QP)
		r->sq_wqe_size = 64;
}

static void tweak_few_sq_entries(uint32_t cmd, void *core, void *drv)
{
	struct vroce_create_qp_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_CREATE_QP)
		r->sq_entries = 8;
}

static void tweak_small_rq_map(uint32_t cmd, void *core, void *drv)
{
	struct vroce_create_qp_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_CREATE_QP)
		r->rq_size = VROCE_RING_ENTRIES_OFFSET;
}

static void check_qp_refused(struct ibv_cq *cq,
			     void (*tweak)(uint32_t, void *, void *),
			     const char *what)
{
	unsigned int destroyed = fake.destroy_qp;
	unsigned int maps = fake_user_maps();
	struct ibv_qp *qp;

	set_tweak(tweak);
	errno = 0;
	qp = new_qp(IBV_QPT_RC, cq, 0, NULL);
	set_tweak(NULL);
	tap_ok(!qp && errno == EPROTO, "create_qp with %s fails with EPROTO",
	       what);
	tap_ok(fake.destroy_qp == destroyed + 1 && fake_user_maps() == maps,
	       "...destroys the kernel QP and leaves nothing mapped");
	if (qp)
		ibv_destroy_qp(qp);
}

static struct ibv_qp *check_qp_create(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr attr;
	unsigned int maps = fake_user_maps();
	unsigned int commands;
	struct ibv_qp *qp;
	struct fake_qp *f;

	qp = new_qp(IBV_QPT_RC, cq, 0, &attr);
	if (!tap_ok(qp != NULL, "ibv_create_qp(RC) succeeds"))
		return NULL;
	f = fqp(qp);
	tap_ok(f && f->req.max_send_wr == 10 && f->req.max_recv_wr == 5 &&
	       f->req.max_send_sge == 3 && f->req.max_recv_sge == 2 &&
	       f->req.max_inline_data == 40 && f->qp_type == IBV_QPT_RC &&
	       !f->is_srq,
	       "CREATE_QP asks for the requested capabilities");
	tap_ok(attr.cap.max_send_wr == 16 && attr.cap.max_recv_wr == 8 &&
	       attr.cap.max_send_sge == 4 && attr.cap.max_recv_sge == 3 &&
	       attr.cap.max_inline_data == 64,
	       "attr->cap holds the rounded-up capabilities (%u %u %u %u %u)",
	       attr.cap.max_send_wr, attr.cap.max_recv_wr,
	       attr.cap.max_send_sge, attr.cap.max_recv_sge,
	       attr.cap.max_inline_data);
	tap_ok(f && qp->qp_num == f->qpn && to_vqp(qp)->qpn == f->qpn &&
	       qp->state == IBV_QPS_RESET && qp->pd == pd &&
	       qp->send_cq == cq && qp->recv_cq == cq,
	       "the QP has the kernel's qpn and starts in RESET");
	tap_ok(f && fake_user_maps() == maps + 2 && f->sq->user_maps == 1 &&
	       f->rq->user_maps == 1 && f->sq->user_len == f->sq->size &&
	       f->rq->user_len == f->rq->size,
	       "SQ and RQ rings are mapped once each, ring size bytes");
	tap_ok(f && f->sq->offset == 0,
	       "the SQ ring takes offset 0, freed by the CQ rings before it");
	tap_ok(ibv_qp_to_qp_ex(qp) == NULL,
	       "ibv_qp_to_qp_ex() sees a QP without ibv_qp_ex operations");

	commands = fake.commands;
	{
		struct ibv_qp_init_attr bad = {
			.send_cq = cq,
			.recv_cq = cq,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1 },
			.qp_type = IBV_QPT_RAW_PACKET,
		};

		errno = 0;
		tap_ok(!ibv_create_qp(pd, &bad) && errno == EOPNOTSUPP,
		       "a RAW_PACKET QP fails with EOPNOTSUPP");
		bad.qp_type = IBV_QPT_XRC_RECV;
		errno = 0;
		tap_ok(!ibv_create_qp(pd, &bad) && errno == EINVAL,
		       "an XRC_RECV QP (no XRC domain) fails with EINVAL");
		bad.qp_type = IBV_QPT_UD;
		bad.recv_cq = NULL;
		errno = 0;
		tap_ok(!ibv_create_qp(pd, &bad) && errno == EINVAL,
		       "a QP without a receive CQ fails with EINVAL");
	}
	tap_ok(fake.commands == commands,
	       "...all three without a command to the kernel");

	check_qp_refused(cq, tweak_no_rq, "no RQ but no SRQ either");
	check_qp_refused(cq, tweak_small_sq_wqe,
			 "an SQ stride too small for the SGEs");
	check_qp_refused(cq, tweak_few_sq_entries,
			 "fewer SQ entries than max_send_wr");
	check_qp_refused(cq, tweak_small_rq_map, "an RQ map too small");

	{
		struct ibv_qp_init_attr_ex ex = {
			.send_cq = cq,
			.recv_cq = cq,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = IBV_QPT_UC,
			.comp_mask = IBV_QP_INIT_ATTR_PD,
			.pd = pd,
		};
		struct ibv_qp *qp2 = ibv_create_qp_ex(ctx, &ex);

		tap_ok(qp2 && ex.cap.max_send_wr == 1 && ex.cap.max_inline_data,
		       "ibv_create_qp_ex() with just a PD creates a QP");
		tap_ok(qp2 && ibv_destroy_qp(qp2) == 0, "...and destroys it");
	}
	return qp;
}

/* An SRQ-backed QP has no RQ ring (rq_offset 0). */
static void check_srq_qp(struct ibv_cq *cq)
{
	struct ibv_srq srq = { .context = ctx, .pd = pd, .handle = 77 };
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = &srq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *bad = NULL;
	unsigned int maps = fake_user_maps();
	struct ibv_qp *qp;
	struct fake_qp *f;
	int ret;

	errno = 0;
	tap_ok(!ibv_create_qp(pd, &attr) && errno == EOPNOTSUPP,
	       "a QP with an SRQ fails with the kernel's EOPNOTSUPP");

	fake.allow_srq = true;
	qp = ibv_create_qp(pd, &attr);
	fake.allow_srq = false;
	if (!tap_ok(qp != NULL, "a kernel that takes the SRQ: QP created"))
		return;
	f = fqp(qp);
	tap_ok(f && f->is_srq && f->srq_handle == 77 && !f->rq &&
	       fake_user_maps() == maps + 1,
	       "CREATE_QP names the SRQ; only the SQ ring is mapped");
	modify_state(qp, IBV_QPS_INIT);
	ret = ibv_post_recv(qp, &rwr, &bad);
	tap_ok(ret == EINVAL && bad == &rwr,
	       "post_recv on an SRQ-backed QP fails with EINVAL, bad_wr set");
	tap_ok(ibv_destroy_qp(qp) == 0 && fake_user_maps() == maps,
	       "destroying it unmaps its SQ");
}

/* ---- modify_qp, query_qp ---- */

static void check_modify_query(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS;
	struct ibv_qp_init_attr init;
	struct fake_qp *f = fqp(qp);
	int ret;

	ret = ibv_modify_qp(qp, &attr, mask);
	tap_ok(!ret && f->state == IBV_QPS_INIT &&
	       f->last_modify_mask == (uint32_t)mask,
	       "modify_qp(INIT) reaches the kernel with its attribute mask");
	tap_ok(qp->state == IBV_QPS_INIT && to_vqp(qp)->state == IBV_QPS_INIT,
	       "...and the QP is in INIT");

	memset(&attr, 0, sizeof(attr));
	memset(&init, 0, sizeof(init));
	ret = ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &init);
	tap_ok(!ret && fake.query_qp && attr.qp_state == IBV_QPS_INIT &&
	       init.cap.max_send_wr == 16 && init.cap.max_inline_data == 64,
	       "query_qp returns the kernel's state and capabilities");

	fail_next(IB_USER_VERBS_CMD_MODIFY_QP, EINVAL);
	ret = modify_state(qp, IBV_QPS_RTR);
	fail_next(0, 0);
	tap_ok(ret == EINVAL && to_vqp(qp)->state == IBV_QPS_INIT,
	       "a modify_qp the kernel refuses leaves the QP in INIT");
}

/* ---- post_recv ---- */

static bool recv_wqe_is(const struct fake_ring *rq, uint32_t idx,
			const struct ibv_recv_wr *wr)
{
	uint8_t want[256] = {};
	struct vroce_recv_wqe *h = (void *)want;
	struct vroce_sge *s = (void *)(h + 1);
	int i;

	h->wr_id = wr->wr_id;
	h->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		s[i].addr = wr->sg_list[i].addr;
		s[i].length = wr->sg_list[i].length;
		s[i].lkey = wr->sg_list[i].lkey;
	}
	return same_bytes(slot(rq, idx), want,
			  sizeof(*h) + wr->num_sge * sizeof(*s));
}

static void check_post_recv(struct ibv_qp *qp)
{
	struct fake_qp *f = fqp(qp);
	struct fake_ring *rq = f->rq;
	struct ibv_sge sge[4] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x11 },
		{ .addr = 0x2000, .length = 200, .lkey = 0x22 },
		{ .addr = 0x3000, .length = 300, .lkey = 0x33 },
		{ .addr = 0x4000, .length = 400, .lkey = 0x44 },
	};
	struct ibv_recv_wr wr[8], *bad;
	unsigned int commands;
	bool ok;
	int ret, i;

	fill_ring(rq, 0xa5);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 8; i++) {
		wr[i].wr_id = 0x100 + i;
		wr[i].sg_list = sge;
		wr[i].num_sge = 1;
		wr[i].next = i < 7 ? &wr[i + 1] : NULL;
	}

	if (modify_state(qp, IBV_QPS_RESET))
		tap_diag("could not move the QP to RESET");
	bad = NULL;
	wr[0].next = NULL;
	ret = ibv_post_recv(qp, &wr[0], &bad);
	tap_ok(ret == EINVAL && bad == &wr[0] && load(&rq->hdr->prod) == 0,
	       "post_recv in RESET fails with EINVAL, bad_wr set, nothing posted");
	if (modify_state(qp, IBV_QPS_INIT))
		tap_diag("could not move the QP to INIT");

	commands = fake.commands;
	wr[0].num_sge = 2;
	wr[0].next = &wr[1];
	wr[1].num_sge = 0;
	wr[1].next = NULL;
	bad = NULL;
	ret = ibv_post_recv(qp, &wr[0], &bad);
	tap_ok(!ret && load(&rq->hdr->prod) == 2,
	       "post_recv of 2 WRs in INIT publishes prod 2");
	tap_ok(recv_wqe_is(rq, 0, &wr[0]) && recv_wqe_is(rq, 1, &wr[1]),
	       "...their WQEs are the wr_ids and SGEs, byte for byte");
	tap_ok(fake.commands == commands, "...with no system call");

	wr[1].num_sge = 4;
	wr[1].next = &wr[2];
	wr[2].next = NULL;
	ret = ibv_post_recv(qp, &wr[0], &bad);
	tap_ok(ret == EINVAL && bad == &wr[1] && load(&rq->hdr->prod) == 3,
	       "num_sge > max_recv_sge: EINVAL at that WR, the one before posted");
	tap_ok(all_bytes(slot(rq, 3), 0xa5, rq->stride),
	       "...and nothing written for the rejected WR");
	wr[1].num_sge = -1;
	ret = ibv_post_recv(qp, &wr[1], &bad);
	tap_ok(ret == EINVAL && bad == &wr[1], "num_sge < 0: EINVAL");

	/* prod 3 of 8: 5 more fit. */
	for (i = 1; i < 7; i++) {
		wr[i].num_sge = 1;
		wr[i].next = &wr[i + 1];
	}
	wr[6].next = NULL;
	ret = ibv_post_recv(qp, &wr[1], &bad);
	tap_ok(ret == ENOMEM && bad == &wr[6] && load(&rq->hdr->prod) == 8,
	       "a full RQ: ENOMEM at the 6th WR, 5 posted (prod %u)",
	       load(&rq->hdr->prod));

	store(&rq->hdr->cons, 4);
	wr[7].next = NULL;
	wr[7].num_sge = 3;
	ret = ibv_post_recv(qp, &wr[7], &bad);
	tap_ok(!ret && load(&rq->hdr->prod) == 9 && recv_wqe_is(rq, 8, &wr[7]),
	       "once the kernel consumed 4, a WR goes to slot 0 again");

	store(&rq->hdr->cons, load(&rq->hdr->prod) + 100);
	ret = ibv_post_recv(qp, &wr[7], &bad);
	tap_ok(ret == ENOMEM && bad == &wr[7],
	       "a cons beyond prod reads as a full ring");
	store(&rq->hdr->cons, load(&rq->hdr->prod));

	ok = true;
	for (i = 0; i < 20 && ok; i++) {
		wr[0].next = NULL;
		wr[0].wr_id = 5000 + i;
		wr[0].num_sge = i % 4;
		ok = !ibv_post_recv(qp, &wr[0], &bad) &&
		     recv_wqe_is(rq, load(&rq->hdr->prod) - 1, &wr[0]);
		store(&rq->hdr->cons, load(&rq->hdr->prod));
	}
	tap_ok(ok, "20 receives one at a time around the ring");
}

/* ---- post_send ---- */

/* The WQE header the provider should write for wr. */
static struct vroce_send_wqe send_hdr(const struct ibv_send_wr *wr,
				      uint8_t opcode, uint8_t flags)
{
	struct vroce_send_wqe h = {
		.wr_id = wr->wr_id,
		.opcode = opcode,
		.flags = flags,
	};

	return h;
}

static bool send_wqe_is(const struct fake_ring *sq, uint32_t idx,
			const struct vroce_send_wqe *h,
			const struct ibv_sge *sge, int num_sge)
{
	uint8_t want[1024] = {};
	struct vroce_sge *s = (void *)(want + sizeof(*h));
	int i;

	memcpy(want, h, sizeof(*h));
	for (i = 0; i < num_sge; i++) {
		s[i].addr = sge[i].addr;
		s[i].length = sge[i].length;
		s[i].lkey = sge[i].lkey;
	}
	return same_bytes(slot(sq, idx), want,
			  sizeof(*h) + num_sge * sizeof(*s));
}

static int post1(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;
	int ret;

	wr->next = NULL;
	ret = ibv_post_send(qp, wr, &bad);
	if (ret && bad != wr)
		tap_diag("bad_wr %p, want %p", (void *)bad, (void *)wr);
	return ret && bad != wr ? -1 : ret;
}

static void check_send_states(struct ibv_qp *qp)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND };
	struct fake_ring *sq = fqp(qp)->sq;
	static const enum ibv_qp_state refused[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR,
	};
	unsigned int i;

	for (i = 0; i < 3; i++) {
		modify_state(qp, refused[i]);
		tap_ok(post1(qp, &wr) == EINVAL && load(&sq->hdr->prod) == 0,
		       "post_send in state %d fails with EINVAL, bad_wr set",
		       refused[i]);
	}
	modify_state(qp, IBV_QPS_RTS);
	tap_ok(to_vqp(qp)->state == IBV_QPS_RTS, "the QP is in RTS");
}

static void check_send_wqes(struct ibv_qp *qp)
{
	struct fake_qp *f = fqp(qp);
	struct fake_ring *sq = f->sq;
	struct ibv_sge sge[5] = {
		{ .addr = 0x10000, .length = 64, .lkey = 0xa1 },
		{ .addr = 0x20000, .length = 128, .lkey = 0xa2 },
		{ .addr = 0x30000, .length = 256, .lkey = 0xa3 },
		{ .addr = 0x40000, .length = 512, .lkey = 0xa4 },
		{ .addr = 0x50000, .length = 1024, .lkey = 0xa5 },
	};
	struct ibv_send_wr wr[4], *bad;
	struct vroce_send_wqe h;
	struct ibv_mr mr = { .lkey = 0x777 };
	unsigned int commands, doorbells;
	uint32_t p;
	int ret;

	fill_ring(sq, 0xa5);
	commands = fake.commands;

	memset(wr, 0, sizeof(wr));
	wr[0] = (struct ibv_send_wr){
		.wr_id = 0xdeadbeef00000001ULL,
		.sg_list = sge,
		.num_sge = 2,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
			      IBV_SEND_FENCE,
	};
	ret = post1(qp, &wr[0]);
	h = send_hdr(&wr[0], IB_UVERBS_WR_SEND,
		     VROCE_WQE_SIGNALED | VROCE_WQE_SOLICITED |
		     VROCE_WQE_FENCE);
	h.num_sge = 2;
	tap_ok(!ret && load(&sq->hdr->prod) == 1,
	       "post_send(SEND) publishes prod 1");
	tap_ok(send_wqe_is(sq, 0, &h, sge, 2),
	       "...the WQE is the header and 2 SGEs, byte for byte");
	tap_ok(fake.commands == commands,
	       "...and with NEEDS_WAKEUP clear, no doorbell");

	/* The send engine sleeps: one doorbell for a batch. */
	store(&sq->hdr->notify, VROCE_SQ_NEEDS_WAKEUP);
	doorbells = f->doorbells;
	wr[0] = (struct ibv_send_wr){
		.wr_id = 2,
		.next = &wr[1],
		.sg_list = sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.imm_data = 0x78563412,
	};
	wr[1] = (struct ibv_send_wr){
		.wr_id = 3,
		.next = &wr[2],
		.sg_list = sge + 1,
		.num_sge = 4,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.imm_data = 0x01020304,
		.wr.rdma = { .remote_addr = 0x123456789aULL, .rkey = 0x5151 },
	};
	wr[2] = (struct ibv_send_wr){
		.wr_id = 4,
		.sg_list = sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_READ,
		.wr.rdma = { .remote_addr = 0xfeed0000ULL, .rkey = 0x6262 },
	};
	bad = NULL;
	ret = ibv_post_send(qp, &wr[0], &bad);
	tap_ok(!ret && load(&sq->hdr->prod) == 4,
	       "a batch of 3 is posted (prod 4)");
	tap_ok(f->doorbells == doorbells + 1 &&
	       fake.commands == commands + 1,
	       "...with exactly one doorbell system call");
	tap_ok(fake.last_post_send.qp_handle == qp->handle &&
	       fake.last_post_send.wr_count == 0 &&
	       fake.last_post_send.sge_count == 0 &&
	       fake.last_post_send.wqe_size ==
	       sizeof(struct ib_uverbs_send_wr) &&
	       fake.last_post_send_len == sizeof(struct ib_uverbs_post_send),
	       "the doorbell is POST_SEND for this QP with no WRs");
	h = send_hdr(&wr[0], IB_UVERBS_WR_SEND_WITH_IMM, 0);
	h.num_sge = 1;
	h.imm_data = 0x78563412;
	tap_ok(send_wqe_is(sq, 1, &h, sge, 1),
	       "SEND_WITH_IMM: imm_data copied as it is");
	h = send_hdr(&wr[1], IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, 0);
	h.num_sge = 4;
	h.imm_data = 0x01020304;
	h.u.rdma.remote_addr = 0x123456789aULL;
	h.u.rdma.rkey = 0x5151;
	tap_ok(send_wqe_is(sq, 2, &h, sge + 1, 4),
	       "RDMA_WRITE_WITH_IMM: remote address, rkey, imm, 4 SGEs");
	h = send_hdr(&wr[2], IB_UVERBS_WR_RDMA_READ, 0);
	h.num_sge = 1;
	h.u.rdma.remote_addr = 0xfeed0000ULL;
	h.u.rdma.rkey = 0x6262;
	tap_ok(send_wqe_is(sq, 3, &h, sge, 1),
	       "RDMA_READ: remote address, rkey");
	store(&sq->hdr->notify, 0);

	/* Atomics. */
	wr[0] = (struct ibv_send_wr){
		.wr_id = 5,
		.sg_list = sge,
		.num_sge = 1,
		.opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
		.wr.atomic = { .remote_addr = 0x8000, .compare_add = 11,
			       .swap = 22, .rkey = 0x33 },
	};
	ret = post1(qp, &wr[0]);
	h = send_hdr(&wr[0], IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, 0);
	h.num_sge = 1;
	h.u.atomic.remote_addr = 0x8000;
	h.u.atomic.compare_add = 11;
	h.u.atomic.swap = 22;
	h.u.atomic.rkey = 0x33;
	tap_ok(!ret && send_wqe_is(sq, 4, &h, sge, 1),
	       "ATOMIC_CMP_AND_SWP: address, operands, rkey");
	wr[0].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr[0].wr.atomic.remote_addr = 0x8008;
	ret = post1(qp, &wr[0]);
	h.opcode = IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
	h.u.atomic.remote_addr = 0x8008;
	tap_ok(!ret && send_wqe_is(sq, 5, &h, sge, 1),
	       "ATOMIC_FETCH_AND_ADD: address, operands, rkey");
	p = load(&sq->hdr->prod);
	wr[0].wr.atomic.remote_addr = 0x8004;
	tap_ok(post1(qp, &wr[0]) == EINVAL && load(&sq->hdr->prod) == p,
	       "an atomic at an address not 8-byte aligned: EINVAL");

	/* Invalidation and MW binding. */
	wr[0] = (struct ibv_send_wr){
		.wr_id = 6,
		.sg_list = sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV,
		.invalidate_rkey = 0xcafe,
	};
	ret = post1(qp, &wr[0]);
	h = send_hdr(&wr[0], IB_UVERBS_WR_SEND_WITH_INV, 0);
	h.num_sge = 1;
	h.imm_data = 0xcafe;
	tap_ok(!ret && send_wqe_is(sq, 6, &h, sge, 1),
	       "SEND_WITH_INV: the rkey to invalidate in imm_data");
	wr[0].opcode = IBV_WR_LOCAL_INV;
	wr[0].wr_id = 7;
	ret = post1(qp, &wr[0]);
	h = send_hdr(&wr[0], IB_UVERBS_WR_LOCAL_INV, 0);
	h.imm_data = 0xcafe;
	tap_ok(!ret && send_wqe_is(sq, 7, &h, NULL, 0),
	       "LOCAL_INV: the rkey, no SGEs");
	wr[0] = (struct ibv_send_wr){
		.wr_id = 8,
		.sg_list = sge,
		.num_sge = 1,
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = {
			.rkey = 0x4201,
			.bind_info = { .mr = &mr, .addr = 0x9000,
				       .length = 0x1000,
				       .mw_access_flags =
					IBV_ACCESS_REMOTE_READ },
		},
	};
	ret = post1(qp, &wr[0]);
	h = send_hdr(&wr[0], IB_UVERBS_WR_BIND_MW, 0);
	h.u.bind.addr = 0x9000;
	h.u.bind.length = 0x1000;
	h.u.bind.mr_lkey = 0x777;
	h.u.bind.new_rkey = 0x4201;
	h.u.bind.access = IBV_ACCESS_REMOTE_READ;
	tap_ok(!ret && send_wqe_is(sq, 8, &h, NULL, 0),
	       "BIND_MW: range, MR lkey, new rkey, access, no SGEs");
	tap_ok(fake.commands == commands + 1,
	       "no doorbell while NEEDS_WAKEUP is clear");
}

static void check_send_inline(struct ibv_qp *qp)
{
	struct fake_ring *sq = fqp(qp)->sq;
	uint8_t a[64], b[64], want[128];
	struct ibv_sge sge[3] = {
		{ .addr = (uintptr_t)a, .length = 20, .lkey = 0xbad },
		{ .addr = (uintptr_t)b, .length = 30, .lkey = 0xbad },
		{ .addr = (uintptr_t)b, .length = 15, .lkey = 0xbad },
	};
	struct ibv_send_wr wr = {
		.wr_id = 9,
		.sg_list = sge,
		.num_sge = 2,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_INLINE,
		.wr.rdma = { .remote_addr = 0x7000, .rkey = 0x99 },
	};
	struct vroce_send_wqe h;
	uint32_t p = load(&sq->hdr->prod);
	int ret, i;

	for (i = 0; i < 64; i++) {
		a[i] = i;
		b[i] = 0x80 + i;
	}
	ret = post1(qp, &wr);
	/* The caller may reuse its buffers at once. */
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	h = send_hdr(&wr, IB_UVERBS_WR_RDMA_WRITE, VROCE_WQE_INLINE);
	h.inline_len = 50;
	h.u.rdma.remote_addr = 0x7000;
	h.u.rdma.rkey = 0x99;
	memcpy(want, &h, sizeof(h));
	for (i = 0; i < 20; i++)
		want[sizeof(h) + i] = i;
	for (i = 0; i < 30; i++)
		want[sizeof(h) + 20 + i] = 0x80 + i;
	tap_ok(!ret && load(&sq->hdr->prod) == p + 1 &&
	       same_bytes(slot(sq, p), want, sizeof(h) + 50),
	       "inline RDMA_WRITE: header with inline_len 50, num_sge 0, then the 50 bytes");

	wr.num_sge = 3;
	tap_ok(post1(qp, &wr) == EINVAL && load(&sq->hdr->prod) == p + 1,
	       "65 inline bytes with max_inline_data 64: EINVAL");
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	tap_ok(post1(qp, &wr) == EINVAL, "inline RDMA_READ: EINVAL");
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	tap_ok(post1(qp, &wr) == EINVAL, "inline atomic: EINVAL");
}

static void check_send_errors(struct ibv_qp *qp)
{
	struct fake_qp *f = fqp(qp);
	struct fake_ring *sq = f->sq;
	struct ibv_sge sge = { .addr = 0x1000, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr[4], *bad;
	unsigned int doorbells;
	uint32_t p;
	int ret, i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 4; i++) {
		wr[i].wr_id = 0x500 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}

	p = load(&sq->hdr->prod);
	wr[0].send_flags = IBV_SEND_IP_CSUM;
	tap_ok(post1(qp, &wr[0]) == EINVAL,
	       "a send flag vroce does not know (IP_CSUM): EINVAL");
	wr[0].send_flags = 1 << 12;
	tap_ok(post1(qp, &wr[0]) == EINVAL, "an undefined send flag: EINVAL");
	wr[0].send_flags = 0;
	wr[0].opcode = IBV_WR_TSO;
	tap_ok(post1(qp, &wr[0]) == EINVAL, "TSO on RC: EINVAL");
	wr[0].opcode = IBV_WR_DRIVER1;
	tap_ok(post1(qp, &wr[0]) == EINVAL, "DRIVER1: EINVAL");
	wr[0].opcode = 99;
	tap_ok(post1(qp, &wr[0]) == EINVAL, "an undefined opcode: EINVAL");
	wr[0].opcode = IBV_WR_SEND;
	wr[0].num_sge = 5;
	tap_ok(post1(qp, &wr[0]) == EINVAL, "num_sge > max_send_sge: EINVAL");
	wr[0].num_sge = -1;
	tap_ok(post1(qp, &wr[0]) == EINVAL, "num_sge < 0: EINVAL");
	wr[0].num_sge = 1;
	tap_ok(load(&sq->hdr->prod) == p, "...none of them posted");

	/* A bad WR in the middle of a batch, the send engine asleep. */
	fill_ring(sq, 0xa5);
	store(&sq->hdr->notify, VROCE_SQ_NEEDS_WAKEUP);
	doorbells = f->doorbells;
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	wr[2].next = &wr[3];
	wr[2].opcode = IBV_WR_TSO;
	bad = NULL;
	ret = ibv_post_send(qp, &wr[0], &bad);
	tap_ok(ret == EINVAL && bad == &wr[2] && load(&sq->hdr->prod) == p + 2,
	       "a batch failing at its 3rd WR: EINVAL, bad_wr = 3rd, 2 posted");
	tap_ok(all_bytes(slot(sq, p + 2), 0xa5, sq->stride),
	       "...nothing written for the 3rd");
	tap_ok(f->doorbells == doorbells + 1,
	       "...and the doorbell rung for the 2 posted");
	wr[2].opcode = IBV_WR_SEND;

	/* A doorbell that fails. */
	fail_next(IB_USER_VERBS_CMD_POST_SEND, EIO);
	wr[0].next = &wr[1];
	wr[1].next = NULL;
	bad = NULL;
	ret = ibv_post_send(qp, &wr[0], &bad);
	fail_next(0, 0);
	tap_ok(ret == EIO && bad == &wr[0] && load(&sq->hdr->prod) == p + 4,
	       "a failed doorbell: its error, bad_wr = the first WR, the WQEs published");
	store(&sq->hdr->notify, 0);

	/* Fill the SQ (16 entries). */
	store(&sq->hdr->cons, load(&sq->hdr->prod));
	for (i = 0; i < 16; i++)
		if (post1(qp, &wr[3]))
			break;
	tap_ok(i == 16, "16 WRs fill the empty SQ (posted %d)", i);
	ret = post1(qp, &wr[3]);
	tap_ok(ret == ENOMEM, "the 17th fails with ENOMEM, bad_wr set");
	store(&sq->hdr->cons, load(&sq->hdr->cons) + 1);
	tap_ok(post1(qp, &wr[3]) == 0,
	       "once the kernel consumes one, posting works again");
}

/* Posting in ERR is allowed: the kernel flushes the WRs. */
static void check_post_in_err(struct ibv_qp *qp)
{
	struct fake_qp *f = fqp(qp);
	struct ibv_send_wr swr = { .wr_id = 1, .opcode = IBV_WR_SEND };
	struct ibv_recv_wr rwr = { .wr_id = 2 }, *bad;
	unsigned int doorbells;
	uint32_t sp, rp;

	/* The kernel moves a QP to ERR on its own and says so in the RQ. */
	store(&f->rq->hdr->cons, load(&f->rq->hdr->prod));
	doorbells = f->doorbells;
	tap_ok(ibv_post_recv(qp, &rwr, &bad) == 0 &&
	       f->doorbells == doorbells,
	       "post_recv with VROCE_RQ_FLUSH clear rings no doorbell");
	store(&f->rq->hdr->notify, VROCE_RQ_FLUSH);
	tap_ok(ibv_post_recv(qp, &rwr, &bad) == 0 &&
	       f->doorbells == doorbells + 1,
	       "...with it set (the kernel moved the QP to ERR), it does");
	store(&f->rq->hdr->notify, 0);

	store(&f->sq->hdr->cons, load(&f->sq->hdr->prod));
	store(&f->rq->hdr->cons, load(&f->rq->hdr->prod));
	sp = load(&f->sq->hdr->prod);
	rp = load(&f->rq->hdr->prod);
	modify_state(qp, IBV_QPS_ERR);
	tap_ok(post1(qp, &swr) == 0 && load(&f->sq->hdr->prod) == sp + 1,
	       "post_send in ERR is accepted");
	doorbells = f->doorbells;
	tap_ok(ibv_post_recv(qp, &rwr, &bad) == 0 &&
	       load(&f->rq->hdr->prod) == rp + 1,
	       "post_recv in ERR is accepted");
	tap_ok(f->doorbells == doorbells + 1,
	       "...and rings the doorbell, for the kernel to flush it");
}

/* UC with sq_sig_all: opcodes and the signalled flag. */
static void check_uc(struct ibv_cq *cq)
{
	struct ibv_sge sge = { .addr = 0x1000, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
	};
	struct vroce_send_wqe h;
	struct ibv_qp *qp;
	struct fake_ring *sq;

	qp = new_qp(IBV_QPT_UC, cq, 1, NULL);
	if (!tap_ok(qp && !to_rts(qp), "a UC QP with sq_sig_all, in RTS"))
		return;
	sq = fqp(qp)->sq;
	h = send_hdr(&wr, IB_UVERBS_WR_SEND, VROCE_WQE_SIGNALED);
	h.num_sge = 1;
	tap_ok(post1(qp, &wr) == 0 && send_wqe_is(sq, 0, &h, &sge, 1),
	       "sq_sig_all: an unsignalled SEND gets VROCE_WQE_SIGNALED");
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	tap_ok(post1(qp, &wr) == 0, "UC: RDMA_WRITE_WITH_IMM is accepted");
	wr.opcode = IBV_WR_LOCAL_INV;
	tap_ok(post1(qp, &wr) == 0, "UC: LOCAL_INV is accepted");
	wr.opcode = IBV_WR_RDMA_READ;
	tap_ok(post1(qp, &wr) == EINVAL, "UC: RDMA_READ fails with EINVAL");
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	tap_ok(post1(qp, &wr) == EINVAL, "UC: atomics fail with EINVAL");
	wr.opcode = IBV_WR_SEND_WITH_INV;
	tap_ok(post1(qp, &wr) == EINVAL, "UC: SEND_WITH_INV fails with EINVAL");
	tap_ok(load(&sq->hdr->prod) == 3, "...3 WQEs posted in all");
	tap_ok(ibv_destroy_qp(qp) == 0, "the UC QP is destroyed");
}

static void check_ud(struct ibv_cq *cq)
{
	struct ibv_context other = {};
	struct vroce_ah ours = {
		.ibv_ah = { .context = ctx, .pd = pd, .handle = 3 },
		.ah_num = 0x55,
	};
	struct ibv_ah foreign = { .context = &other };
	uint8_t data[16] = { 1, 2, 3, 4 };
	struct ibv_sge sge = { .addr = (uintptr_t)data, .length = 16 };
	struct ibv_send_wr wr = {
		.wr_id = 0x77,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.imm_data = 0x01000000,
		.wr.ud = { .ah = &ours.ibv_ah, .remote_qpn = 0xabcdef,
			   .remote_qkey = 0x11111111 },
	};
	struct vroce_send_wqe h;
	struct ibv_qp *qp;
	struct fake_ring *sq;

	qp = new_qp(IBV_QPT_UD, cq, 0, NULL);
	if (!tap_ok(qp && !to_rts(qp), "a UD QP in RTS"))
		return;
	sq = fqp(qp)->sq;
	h = send_hdr(&wr, IB_UVERBS_WR_SEND_WITH_IMM, 0);
	h.num_sge = 1;
	h.imm_data = 0x01000000;
	h.u.ud.ah_num = 0x55;
	h.u.ud.remote_qpn = 0xabcdef;
	h.u.ud.remote_qkey = 0x11111111;
	tap_ok(post1(qp, &wr) == 0 && send_wqe_is(sq, 0, &h, &sge, 1),
	       "UD SEND_WITH_IMM: the AH's ah_num, remote QPN and Q_Key");
	wr.wr.ud.ah = &foreign;
	h.u.ud.ah_num = 0;
	tap_ok(post1(qp, &wr) == 0 && send_wqe_is(sq, 1, &h, &sge, 1),
	       "an AH of another context is not ours: ah_num 0");
	wr.wr.ud.ah = NULL;
	tap_ok(post1(qp, &wr) == EINVAL, "UD without an AH: EINVAL");
	wr.wr.ud.ah = &ours.ibv_ah;
	wr.opcode = IBV_WR_RDMA_WRITE;
	tap_ok(post1(qp, &wr) == EINVAL, "UD: RDMA_WRITE fails with EINVAL");
	wr.opcode = IBV_WR_LOCAL_INV;
	tap_ok(post1(qp, &wr) == EINVAL, "UD: LOCAL_INV fails with EINVAL");
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_INLINE;
	h = send_hdr(&wr, IB_UVERBS_WR_SEND, VROCE_WQE_INLINE);
	h.inline_len = 16;
	h.u.ud.ah_num = 0x55;
	h.u.ud.remote_qpn = 0xabcdef;
	h.u.ud.remote_qkey = 0x11111111;
	tap_ok(post1(qp, &wr) == 0 && same_bytes(slot(sq, 2), &h, sizeof(h)) &&
	       same_bytes((uint8_t *)slot(sq, 2) + sizeof(h), data, 16),
	       "UD inline SEND: address and the 16 bytes");
	tap_ok(ibv_destroy_qp(qp) == 0, "the UD QP is destroyed");
}

/* ---- destroying a QP drops its unpolled completions ---- */

static bool push_for(struct ibv_cq *cq, uint32_t qpn, uint64_t wr_id)
{
	struct vroce_cqe c = cqe_of(wr_id);

	c.qp_num = qpn;
	return fake_cq_push(fcq(cq), &c);
}

/* Polls @cq dry: true if it returns exactly the wr_ids @want, in order. */
static bool polls(struct ibv_cq *cq, const uint64_t *want, int n)
{
	struct ibv_wc wc[16];
	int got, i;

	got = ibv_poll_cq(cq, 16, wc);
	if (got != n) {
		tap_diag("polled %d CQEs, want %d", got, n);
		return false;
	}
	for (i = 0; i < n; i++)
		if (wc[i].wr_id != want[i]) {
			tap_diag("CQE %d: wr_id %llu, want %llu", i,
				 (unsigned long long)wc[i].wr_id,
				 (unsigned long long)want[i]);
			return false;
		}
	return true;
}

/*
 * QP a's CQEs interleaved with b's on one CQ, across the ring's end, and
 * a's alone on its receive CQ: once a is destroyed, b's come out in order
 * and a's never do.
 */
static void check_cq_clean(void)
{
	static const uint64_t kept[] = { 2, 4, 6 }, none[] = { 0 };
	struct ibv_cq *cq = new_cq(8), *rcq = new_cq(8);
	struct ibv_qp_init_attr attr;
	struct ibv_qp *a, *b;
	uint32_t an, bn;
	bool ok = true;
	int i;

	if (!tap_ok(cq && rcq && fcq(cq)->ring->entries == 8,
		    "two CQs of 8 entries"))
		return;
	a = new_qp(IBV_QPT_RC, cq, 0, &attr);
	b = new_qp(IBV_QPT_RC, cq, 0, NULL);
	if (!tap_ok(a && b, "QPs a and b on one CQ"))
		return;
	bn = b->qp_num;
	/* a's receive completions go to rcq. */
	ibv_destroy_qp(a);
	attr.recv_cq = rcq;
	a = ibv_create_qp(pd, &attr);
	if (!tap_ok(a && a->qp_num != bn, "a again, receiving on a CQ of its own"))
		return;
	an = a->qp_num;
	for (i = 0; i < 6; i++)
		ok &= push_for(cq, bn, 100 + i);
	ok &= ibv_poll_cq(cq, 6, (struct ibv_wc[6]){}) == 6;
	for (i = 1; i <= 5; i++)
		ok &= push_for(cq, i % 2 ? an : bn, i);
	ok &= push_for(rcq, an, 6) && push_for(rcq, an, 7);
	tap_ok(ok, "5 CQEs of a and b across the ring's end, 2 of a on rcq");
	tap_ok(ibv_destroy_qp(a) == 0 && load(&fcq(cq)->ring->hdr->cons) == 9 &&
	       load(&fcq(rcq)->ring->hdr->cons) == 2,
	       "a is destroyed: its 3 and 2 CQEs are given back to the kernel");
	ok = push_for(cq, bn, 6);
	tap_ok(ok && polls(cq, kept, 3),
	       "the CQ gives b's 2 CQEs and a new one, in order, none of a's");
	tap_ok(polls(rcq, none, 0), "rcq gives none");
	ok = true;
	for (i = 0; i < 8; i++)
		ok &= push_for(cq, bn, 10 + i);
	tap_ok(ok && !push_for(cq, bn, 18),
	       "the CQ holds 8 new CQEs again, and no 9th");
	tap_ok(ibv_destroy_qp(b) == 0 && polls(cq, none, 0),
	       "destroying b drops its 8");
	tap_ok(ibv_destroy_cq(cq) == 0 && ibv_destroy_cq(rcq) == 0,
	       "both CQs are destroyed");
}

/* ---- two threads on the rings ---- */

#define STREAM_N 200000
#define STREAM_SECONDS 30

/* Both sides give up at the deadline rather than hang on a broken ring. */
static struct timespec deadline;

static void set_deadline(void)
{
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += STREAM_SECONDS;
}

static bool expired(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline.tv_sec ||
	       (now.tv_sec == deadline.tv_sec &&
		now.tv_nsec > deadline.tv_nsec);
}

static void *cq_producer(void *arg)
{
	struct fake_cq *f = arg;
	uint32_t i;

	for (i = 0; i < STREAM_N; i++) {
		struct vroce_cqe c = cqe_of(i);

		while (!fake_cq_push(f, &c))
			if (expired())
				return NULL;
	}
	return NULL;
}

struct sq_stream {
	struct ibv_qp *qp;
	bool ok;
};

static void *sq_poster(void *arg)
{
	struct sq_stream *s = arg;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND };
	uint32_t i;
	int ret;

	for (i = 0; i < STREAM_N && s->ok; i++) {
		wr.wr_id = i;
		do
			ret = post1(s->qp, &wr);
		while (ret == ENOMEM && !expired());
		s->ok = !ret;
	}
	return NULL;
}

static void check_threads(struct ibv_cq *cq)
{
	struct fake_cq *f = fcq(cq);
	struct sq_stream s = { .ok = true };
	struct ibv_wc wc[7];
	struct fake_ring *sq;
	pthread_t t;
	uint32_t next = 0, cons;
	bool ok = true;
	int n, i;

	set_deadline();
	if (pthread_create(&t, NULL, cq_producer, f)) {
		tap_ok(false, "start a CQ producer thread");
		return;
	}
	while (next < STREAM_N && ok && !expired()) {
		n = ibv_poll_cq(cq, 7, wc);
		ok = n >= 0;
		for (i = 0; i < n && ok; i++)
			ok = wc[i].wr_id == next++ &&
			     wc[i].byte_len == (uint32_t)wc[i].wr_id * 3;
	}
	pthread_join(t, NULL);
	tap_ok(ok && next == STREAM_N,
	       "%d CQEs from a kernel thread are polled in order", STREAM_N);

	s.qp = new_qp(IBV_QPT_RC, cq, 0, NULL);
	if (!tap_ok(s.qp && !to_rts(s.qp), "an RC QP in RTS for streaming"))
		return;
	sq = fqp(s.qp)->sq;
	set_deadline();
	if (pthread_create(&t, NULL, sq_poster, &s)) {
		tap_ok(false, "start a posting thread");
		return;
	}
	cons = 0;
	ok = true;
	while (cons < STREAM_N && ok && !expired()) {
		uint32_t prod = load(&sq->hdr->prod);

		ok = prod - cons <= sq->entries;
		for (; cons != prod && ok; cons++) {
			const struct vroce_send_wqe *w = slot(sq, cons);

			ok = w->wr_id == cons && w->opcode == IB_UVERBS_WR_SEND;
		}
		store(&sq->hdr->cons, cons);
	}
	s.ok &= ok;
	pthread_join(t, NULL);
	tap_ok(ok && s.ok && cons == STREAM_N,
	       "%d WQEs from a posting thread reach the kernel in order",
	       STREAM_N);
	tap_ok(ibv_destroy_qp(s.qp) == 0, "the streaming QP is destroyed");
}

/* ---- teardown ---- */

static void check_destroy(struct ibv_cq *cq, struct ibv_qp *qp)
{
	struct ibv_wc wc;
	int ret;

	ret = ibv_destroy_cq(cq);
	tap_ok(ret == EBUSY, "destroying a CQ a QP uses fails with EBUSY (%d)",
	       ret);
	tap_ok(fcq(cq) && ibv_poll_cq(cq, 1, &wc) == 0,
	       "...and the CQ still works");
	tap_ok(ibv_destroy_qp(qp) == 0 && fake.destroy_qp,
	       "ibv_destroy_qp() succeeds");
	tap_ok(ibv_destroy_cq(cq) == 0, "then ibv_destroy_cq() succeeds");
	tap_ok(fake_user_maps() == 0, "no ring is left mapped");
}

int main(int argc, char **argv)
{
	struct ibv_device **list = NULL;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int num = 0;

	if (argc != 2) {
		fprintf(stderr,
			"usage: %s <absolute path of libvroce-rdmav34.so>\n",
			argv[0]);
		return 2;
	}
	if (!tap_ok(fake_sysfs_setup(argv[1]) == 0, "fake sysfs with vroce0"))
		goto out;
	list = ibv_get_device_list(&num);
	if (!tap_ok(list && num == 1, "vroce0 is found"))
		goto out;
	ctx = ibv_open_device(list[0]);
	if (!tap_ok(ctx != NULL, "vroce0 opens"))
		goto out;
	pd = ibv_alloc_pd(ctx);
	if (!tap_ok(pd != NULL, "a PD"))
		goto out;

	cq = check_cq_create();
	if (!cq)
		goto out;
	check_poll(cq);
	check_notify(cq);
	check_resize(cq);
	check_cq_ex();
	check_cq_ex_ts();

	qp = check_qp_create(cq);
	if (qp) {
		check_srq_qp(cq);
		check_modify_query(qp);
		check_post_recv(qp);
		check_send_states(qp);
		check_send_wqes(qp);
		check_send_inline(qp);
		check_send_errors(qp);
		check_post_in_err(qp);
		check_uc(cq);
		check_ud(cq);
		check_cq_clean();
		check_threads(cq);
		check_destroy(cq, qp);
	}

	tap_ok(ibv_dealloc_pd(pd) == 0, "the PD is freed");
	tap_ok(ibv_close_device(ctx) == 0 && fake.open_fds == 0,
	       "the device closes");
	tap_ok(fake.unexpected == 0 && fake.bad_mmaps == 1,
	       "no command vroce does not implement, and only the one bad mmap");
	if (fake.unexpected)
		tap_diag("last unexpected command 0x%x", fake.last_unexpected);
out:
	if (list)
		ibv_free_device_list(list);
	fake_sysfs_cleanup();
	return tap_done();
}
