// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * XRC in the provider against the fake uverbs device, through the
 * installed libibverbs:
 *
 *   xrc_test <absolute path of libvroce-rdmav34.so>
 *
 * XRC domains, XRC SRQs (ibv_create_srq_ex(), ibv_get_srq_num(), their
 * ring), XRC INI QPs (a send ring only, every WQE naming the remote XRC
 * SRQ, from ibv_post_send() and from ibv_wr_set_xrc_srqn()), XRC TGT QPs
 * (no ring at all, no post verbs) and ibv_open_qp(), and the inputs each
 * must refuse.
 */
#include <errno.h>
#include <fcntl.h>
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

/* The payload of the last command if it was @command, else NULL. */
static const void *last_cmd(uint32_t command)
{
	return fake.last_cmd == command ? fake.last_payload : NULL;
}

/* The send WQE header in slot @idx of the QP's SQ, as the kernel sees it. */
static struct vroce_send_wqe sq_wqe(struct ibv_qp *qp, uint32_t idx)
{
	const struct fake_ring *ring = fake_qp_get(qp->handle)->sq;
	struct vroce_send_wqe h;

	memcpy(&h, ring->ent + (size_t)(idx & (ring->entries - 1)) *
				   ring->stride, sizeof(h));
	return h;
}

static uint32_t sq_prod(struct ibv_qp *qp)
{
	return __atomic_load_n(&fake_qp_get(qp->handle)->sq->hdr->prod,
			       __ATOMIC_ACQUIRE);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

/* RESET to @last through INIT, RTR, RTS: 0 if every step worked. */
static int walk_to(struct ibv_qp *qp, enum ibv_qp_state last)
{
	enum ibv_qp_state s;
	int ret = 0;

	for (s = IBV_QPS_INIT; s <= last && !ret; s++)
		ret = to_state(qp, s);
	return ret;
}

/* ---- XRC domains ---- */

static struct ibv_xrcd *open_xrcd(int fd, int oflags, uint32_t mask)
{
	struct ibv_xrcd_init_attr attr = {
		.comp_mask = mask,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &attr);
}

static struct ibv_xrcd *check_open_xrcd(void)
{
	const uint32_t m = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	const struct ib_uverbs_open_xrcd *cmd;
	struct ibv_xrcd *xrcd, *shared;
	unsigned int commands;

	xrcd = open_xrcd(-1, O_CREAT, m);
	cmd = last_cmd(IB_USER_VERBS_CMD_OPEN_XRCD);
	tap_ok(xrcd && xrcd->context == ctx && cmd && (int32_t)cmd->fd == -1 &&
	       cmd->oflags == O_CREAT && fake.last_in == sizeof(*cmd) &&
	       fake.last_out == sizeof(struct ib_uverbs_open_xrcd_resp),
	       "ibv_open_xrcd(): OPEN_XRCD with fd and oflags, no driver data");
	shared = open_xrcd(FAKE_XRCD_FD, O_CREAT, m);
	tap_ok(shared && ibv_close_xrcd(shared) == 0 &&
	       fake.last_cmd == IB_USER_VERBS_CMD_CLOSE_XRCD,
	       "the XRC domain of a file opens, ibv_close_xrcd() closes it");
	errno = 0;
	tap_ok(!open_xrcd(-1, 0, m) && errno == EINVAL,
	       "no file and no O_CREAT: the kernel's EINVAL");
	commands = fake.commands;
	errno = 0;
	tap_ok(!open_xrcd(-1, O_CREAT, IBV_XRCD_INIT_ATTR_OFLAGS) &&
	       errno == EINVAL && fake.commands == commands,
	       "without IBV_XRCD_INIT_ATTR_FD: EINVAL, no command");
	return xrcd;
}

/* ---- XRC SRQs ---- */

static struct ibv_srq *new_srq_ex(uint32_t mask, enum ibv_srq_type type,
				  struct ibv_xrcd *xrcd,
				  struct ibv_srq_init_attr_ex *out)
{
	struct ibv_srq_init_attr_ex attr = {
		.srq_context = &attr,
		.attr = { .max_wr = 5, .max_sge = 2 },
		.comp_mask = mask,
		.srq_type = type,
		.pd = pd,
		.xrcd = xrcd,
		.cq = cq,
		.tm_cap = { .max_num_tags = 4, .max_ops = 4 },
	};
	struct ibv_srq *srq = ibv_create_srq_ex(ctx, &attr);

	if (out)
		*out = attr;
	return srq;
}

#define XSRQ_MASK \
	(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | \
	 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)

static struct ibv_srq *check_create_xsrq(struct ibv_xrcd *xrcd)
{
	const struct ib_uverbs_create_xsrq *cmd;
	unsigned int maps = fake_user_maps();
	struct ibv_srq_init_attr_ex attr;
	struct ibv_srq *srq;
	struct fake_srq *f;
	uint32_t num = 0;

	srq = new_srq_ex(XSRQ_MASK, IBV_SRQT_XRC, xrcd, &attr);
	cmd = last_cmd(IB_USER_VERBS_CMD_CREATE_XSRQ);
	if (!tap_ok(srq && cmd, "ibv_create_srq_ex(XRC): CREATE_XSRQ"))
		return NULL;
	f = fake_srq_get(srq->handle);
	tap_ok(cmd->srq_type == IBV_SRQT_XRC &&
	       cmd->pd_handle == FAKE_PD_HANDLE &&
	       cmd->xrcd_handle == f->xrcd && cmd->cq_handle == cq->handle &&
	       cmd->max_wr == 5 && cmd->max_sge == 2 &&
	       fake.last_in == sizeof(*cmd) &&
	       fake.last_out == sizeof(struct vroce_create_srq_cmd_resp),
	       "it names PD, XRC domain, CQ, sizes; room for the driver response");
	tap_ok(attr.attr.max_wr == f->max_wr &&
	       attr.attr.max_sge == f->max_sge &&
	       fake_user_maps() == maps + 1 && f->ring->user_maps == 1 &&
	       srq->context == ctx && srq->pd == pd &&
	       srq->srq_context == attr.srq_context,
	       "granted sizes written back, the ring mapped, context and PD set");
	tap_ok(ibv_get_srq_num(srq, &num) == 0 && num == f->srqn,
	       "ibv_get_srq_num() is the kernel's SRQ number (0x%x)", f->srqn);
	return srq;
}

static void check_post_xsrq(struct ibv_srq *srq)
{
	const struct fake_ring *ring = fake_srq_get(srq->handle)->ring;
	struct ibv_sge sg = { .addr = 0x5000, .length = 64, .lkey = 0x77 };
	struct ibv_recv_wr wr[2] = {
		{ .wr_id = 0x31, .next = &wr[1], .sg_list = &sg, .num_sge = 1 },
		{ .wr_id = 0x32, .sg_list = &sg, .num_sge = 4 },
	}, *bad = NULL;
	struct vroce_recv_wqe w;
	struct vroce_sge s;

	tap_ok(ibv_post_srq_recv(srq, wr, &bad) == EINVAL && bad == &wr[1] &&
	       ring->hdr->prod == 1,
	       "ibv_post_srq_recv(): one WR posted, the next (4 SGEs) EINVAL");
	memcpy(&w, ring->ent, sizeof(w));
	memcpy(&s, ring->ent + sizeof(w), sizeof(s));
	tap_ok(w.wr_id == 0x31 && w.num_sge == 1 && s.addr == 0x5000 &&
	       s.length == 64 && s.lkey == 0x77,
	       "its WQE is in the XRC SRQ's ring");
}

static void tweak_srqn(uint32_t command, void *core, void *drv)
{
	struct ib_uverbs_create_srq_resp *c = core;

	(void)drv;
	if (command == IB_USER_VERBS_CMD_CREATE_XSRQ)
		c->srqn += 1;
}

static void check_srq_ex_errors(struct ibv_xrcd *xrcd)
{
	unsigned int destroyed = fake.destroy_srq, maps = fake_user_maps();
	unsigned int commands;
	struct ibv_srq *srq;
	uint32_t num = 0;

	srq = new_srq_ex(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ,
			 IBV_SRQT_XRC, NULL, NULL);
	tap_ok(srq && last_cmd(IB_USER_VERBS_CMD_CREATE_SRQ) &&
	       ibv_get_srq_num(srq, &num) == 0 &&
	       num == fake_srq_get(srq->handle)->srqn &&
	       ibv_destroy_srq(srq) == 0,
	       "no IBV_SRQ_INIT_ATTR_TYPE: a basic SRQ (CREATE_SRQ), its number");
	commands = fake.commands;
	errno = 0;
	tap_ok(!new_srq_ex(XSRQ_MASK | IBV_SRQ_INIT_ATTR_TM, IBV_SRQT_TM,
			   NULL, NULL) && errno == EOPNOTSUPP,
	       "a tag-matching SRQ: EOPNOTSUPP");
	errno = 0;
	tap_ok(!new_srq_ex(XSRQ_MASK, IBV_SRQT_XRC, NULL, NULL) &&
	       errno == EINVAL, "an XRC SRQ without an XRC domain: EINVAL");
	errno = 0;
	tap_ok(!new_srq_ex(XSRQ_MASK & ~IBV_SRQ_INIT_ATTR_CQ, IBV_SRQT_XRC,
			   xrcd, NULL) && errno == EINVAL,
	       "an XRC SRQ without a CQ: EINVAL");
	errno = 0;
	tap_ok(!new_srq_ex(XSRQ_MASK & ~IBV_SRQ_INIT_ATTR_PD, IBV_SRQT_XRC,
			   xrcd, NULL) && errno == EINVAL &&
	       fake.commands == commands,
	       "an XRC SRQ without a PD: EINVAL; none of these sent a command");

	fake.tweak = tweak_srqn;
	errno = 0;
	srq = new_srq_ex(XSRQ_MASK, IBV_SRQT_XRC, xrcd, NULL);
	fake.tweak = NULL;
	tap_ok(!srq && errno == EPROTO && fake.destroy_srq == destroyed + 2 &&
	       fake_user_maps() == maps,
	       "core and driver SRQ numbers differ: EPROTO, SRQ destroyed");
}

/* ---- XRC INI QPs ---- */

static struct ibv_qp *new_qp(enum ibv_qp_type type, uint32_t mask,
			     void *domain, struct ibv_qp_init_attr_ex *out)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 16 },
		.qp_type = type,
		.comp_mask = mask,
		.pd = type == IBV_QPT_XRC_RECV ? NULL : domain,
		.xrcd = type == IBV_QPT_XRC_RECV ? domain : NULL,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &attr);

	if (out)
		*out = attr;
	return qp;
}

static struct ibv_qp *check_create_ini(void)
{
	unsigned int maps = fake_user_maps();
	struct ibv_qp_init_attr_ex attr;
	const struct ib_uverbs_create_qp *cmd;
	struct ibv_qp *qp;
	struct fake_qp *f;

	qp = new_qp(IBV_QPT_XRC_SEND, IBV_QP_INIT_ATTR_PD, pd, &attr);
	cmd = last_cmd(IB_USER_VERBS_CMD_CREATE_QP);
	if (!tap_ok(qp && cmd, "ibv_create_qp_ex(XRC_SEND) with a PD"))
		return NULL;
	f = fake_qp_get(qp->handle);
	tap_ok(cmd->qp_type == IBV_QPT_XRC_SEND &&
	       cmd->pd_handle == FAKE_PD_HANDLE &&
	       cmd->send_cq_handle == cq->handle && !cmd->recv_cq_handle &&
	       !cmd->max_recv_wr && !cmd->max_recv_sge && !cmd->is_srq &&
	       fake.last_out == sizeof(struct vroce_create_qp_cmd_resp),
	       "CREATE_QP: PD and send CQ, no receive side");
	tap_ok(f->sq && !f->rq && fake_user_maps() == maps + 1 &&
	       f->sq->user_maps == 1 && !to_vqp(qp)->rq.ring.hdr &&
	       attr.cap.max_send_wr == f->cap.max_send_wr &&
	       !attr.cap.max_recv_wr && !attr.cap.max_recv_sge,
	       "only the SQ ring is mapped; caps written back, no RQ");
	tap_ok(qp->qp_type == IBV_QPT_XRC_SEND && qp->pd == pd &&
	       qp->send_cq == cq && !qp->recv_cq && !qp->srq &&
	       qp->state == IBV_QPS_RESET && qp->qp_num == f->qpn,
	       "the QP: type, PD, send CQ only, RESET, the kernel's QPN");
	return qp;
}

static void check_post_ini(struct ibv_qp *qp, uint32_t srqn)
{
	struct ibv_sge sge = { .addr = 0x9000, .length = 8, .lkey = 5 };
	struct ibv_send_wr wr[2] = {
		{ .wr_id = 1, .next = &wr[1], .sg_list = &sge, .num_sge = 1,
		  .opcode = IBV_WR_SEND },
		{ .wr_id = 2, .sg_list = &sge, .num_sge = 1,
		  .opcode = IBV_WR_RDMA_WRITE,
		  .wr.rdma = { .remote_addr = 0xa000, .rkey = 9 } },
	}, *bad = NULL;
	struct ibv_recv_wr rwr = { .wr_id = 3 }, *rbad = NULL;
	struct vroce_send_wqe h0, h1;

	wr[0].qp_type.xrc.remote_srqn = srqn;
	wr[1].qp_type.xrc.remote_srqn = 0x123456;
	tap_ok(ibv_post_send(qp, wr, &bad) == 0 && sq_prod(qp) == 2,
	       "ibv_post_send(): SEND and RDMA_WRITE posted");
	h0 = sq_wqe(qp, 0);
	h1 = sq_wqe(qp, 1);
	tap_ok(h0.opcode == IB_UVERBS_WR_SEND && h0.wr_id == 1 &&
	       h0.xrc_srqn == srqn && h0.num_sge == 1 &&
	       h1.opcode == IB_UVERBS_WR_RDMA_WRITE && h1.wr_id == 2 &&
	       h1.xrc_srqn == 0x123456 && h1.u.rdma.rkey == 9,
	       "each WQE carries its WR's remote_srqn in xrc_srqn");
	tap_ok(ibv_post_recv(qp, &rwr, &rbad) == EINVAL && rbad == &rwr,
	       "ibv_post_recv() on an XRC INI QP: EINVAL");
}

/* ibv_wr_set_xrc_srqn(): the SRQ of the open WR, and only on XRC INI. */
static void check_wr_ini(uint32_t srqn)
{
	const uint32_t m = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct ibv_qp *qp = new_qp(IBV_QPT_XRC_SEND, m, pd, NULL);
	struct ibv_qp_ex *x = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	struct vroce_send_wqe h;

	if (!tap_ok(x && !walk_to(qp, IBV_QPS_RTS),
		    "an XRC INI QP with ibv_wr_* operations, in RTS")) {
		if (qp)
			ibv_destroy_qp(qp);
		return;
	}
	ibv_wr_start(x);
	x->wr_id = 0x44;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_xrc_srqn(x, srqn);
	ibv_wr_set_sge(x, 5, 0x9000, 8);
	ibv_wr_rdma_write(x, 9, 0xa000);
	ibv_wr_set_sge(x, 5, 0x9000, 8);
	tap_ok(ibv_wr_complete(x) == 0 && sq_prod(qp) == 2,
	       "two WRs posted, the second without ibv_wr_set_xrc_srqn()");
	h = sq_wqe(qp, 0);
	tap_ok(h.opcode == IB_UVERBS_WR_SEND && h.wr_id == 0x44 &&
	       h.xrc_srqn == srqn && h.flags == VROCE_WQE_SIGNALED,
	       "ibv_wr_set_xrc_srqn() sets xrc_srqn of its WR's WQE");
	h = sq_wqe(qp, 1);
	tap_ok(h.opcode == IB_UVERBS_WR_RDMA_WRITE && h.xrc_srqn == 0,
	       "and only of that WR");
	ibv_wr_start(x);
	ibv_wr_set_xrc_srqn(x, srqn);
	tap_ok(ibv_wr_complete(x) == EINVAL && sq_prod(qp) == 2,
	       "ibv_wr_set_xrc_srqn() before any builder: EINVAL");
	tap_ok(ibv_destroy_qp(qp) == 0, "that QP is destroyed");
}

/* Other QP types: no XRC SRQ in their WQEs, nor through ibv_wr_*. */
static void check_rc_no_srqn(void)
{
	const uint32_t m = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct ibv_sge sge = { .addr = 0x9000, .length = 8, .lkey = 5 };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad = NULL;
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, m, pd, NULL);
	struct ibv_qp_ex *x = qp ? ibv_qp_to_qp_ex(qp) : NULL;

	if (!tap_ok(x && !walk_to(qp, IBV_QPS_RTS), "an RC QP in RTS")) {
		if (qp)
			ibv_destroy_qp(qp);
		return;
	}
	wr.qp_type.xrc.remote_srqn = 0x99;
	tap_ok(ibv_post_send(qp, &wr, &bad) == 0 &&
	       sq_wqe(qp, 0).xrc_srqn == 0,
	       "RC: a WR's remote_srqn is not used, xrc_srqn 0");
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_xrc_srqn(x, 0x99);
	ibv_wr_set_sge(x, 5, 0x9000, 8);
	tap_ok(ibv_wr_complete(x) == EOPNOTSUPP && sq_prod(qp) == 1,
	       "RC: ibv_wr_set_xrc_srqn() fails the batch with EOPNOTSUPP");
	tap_ok(ibv_destroy_qp(qp) == 0, "the RC QP is destroyed");
}

static void check_ini_errors(struct ibv_srq *srq)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	unsigned int commands = fake.commands;

	errno = 0;
	tap_ok(!ibv_create_qp_ex(ctx, &attr) && errno == EINVAL,
	       "an XRC INI QP with an SRQ: EINVAL");
	attr.srq = NULL;
	attr.send_cq = NULL;
	errno = 0;
	tap_ok(!ibv_create_qp_ex(ctx, &attr) && errno == EINVAL,
	       "an XRC INI QP without a send CQ: EINVAL");
	attr.send_cq = cq;
	attr.comp_mask = IBV_QP_INIT_ATTR_CREATE_FLAGS;
	errno = 0;
	tap_ok(!ibv_create_qp_ex(ctx, &attr) && errno == EINVAL &&
	       fake.commands == commands,
	       "an XRC INI QP without a PD: EINVAL; no command for any");
}

/* ---- XRC TGT QPs ---- */

static struct ibv_qp *check_create_tgt(struct ibv_xrcd *xrcd)
{
	unsigned int maps = fake_user_maps();
	struct ibv_qp_init_attr_ex attr;
	const struct ib_uverbs_create_qp *cmd;
	struct ibv_qp *qp;
	struct fake_qp *f;

	qp = new_qp(IBV_QPT_XRC_RECV, IBV_QP_INIT_ATTR_XRCD, xrcd, &attr);
	cmd = last_cmd(IB_USER_VERBS_CMD_CREATE_QP);
	if (!tap_ok(qp && cmd, "ibv_create_qp_ex(XRC_RECV) with an XRC domain"))
		return NULL;
	f = fake_qp_get(qp->handle);
	tap_ok(cmd->qp_type == IBV_QPT_XRC_RECV && cmd->pd_handle == f->xrcd &&
	       fake_xrcd_get(f->xrcd) && !cmd->send_cq_handle &&
	       !cmd->recv_cq_handle && !cmd->is_srq && !cmd->max_send_wr &&
	       !cmd->max_recv_wr,
	       "CREATE_QP: the XRC domain's handle, no CQ, no queue");
	tap_ok(!f->sq && !f->rq && fake_user_maps() == maps &&
	       !to_vqp(qp)->sq.ring.hdr && !to_vqp(qp)->rq.ring.hdr &&
	       !attr.cap.max_send_wr && !attr.cap.max_recv_wr,
	       "no ring is mapped; caps written back, all 0");
	tap_ok(qp->qp_type == IBV_QPT_XRC_RECV && !qp->pd && !qp->send_cq &&
	       !qp->recv_cq && qp->qp_num == f->qpn &&
	       !ibv_qp_to_qp_ex(qp),
	       "the QP: type, no PD, no CQ, the kernel's QPN, no ibv_qp_ex");
	return qp;
}

/* Neither post verb takes anything on a QP without rings. */
static void check_no_post(struct ibv_qp *qp, const char *what)
{
	struct ibv_send_wr swr = { .wr_id = 1, .opcode = IBV_WR_SEND }, *sb;
	struct ibv_recv_wr rwr = { .wr_id = 2 }, *rb;

	sb = NULL;
	rb = NULL;
	tap_ok(ibv_post_send(qp, &swr, &sb) == EINVAL && sb == &swr &&
	       ibv_post_recv(qp, &rwr, &rb) == EINVAL && rb == &rwr,
	       "%s: post_send and post_recv EINVAL", what);
}

static void check_tgt_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	tap_ok(!walk_to(qp, IBV_QPS_RTR) && qp->state == IBV_QPS_RTR &&
	       fake_qp_get(qp->handle)->state == IBV_QPS_RTR,
	       "the TGT QP goes RESET, INIT, RTR");
	tap_ok(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) == 0 &&
	       attr.qp_state == IBV_QPS_RTR, "ibv_query_qp() says RTR");
	check_no_post(qp, "TGT QP in RTR");
	tap_ok(to_state(qp, IBV_QPS_ERR) == 0, "the TGT QP goes to ERR");
	check_no_post(qp, "TGT QP in ERR");
}

static struct ibv_qp *open_qp(struct ibv_xrcd *xrcd, uint32_t mask,
			      uint32_t qpn, enum ibv_qp_type type)
{
	struct ibv_qp_open_attr attr = {
		.comp_mask = mask,
		.qp_num = qpn,
		.xrcd = xrcd,
		.qp_context = &attr,
		.qp_type = type,
	};

	return ibv_open_qp(ctx, &attr);
}

#define OPEN_MASK \
	(IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_TYPE)

static void check_open_qp(struct ibv_xrcd *xrcd, struct ibv_qp *tgt)
{
	const struct ib_uverbs_open_qp *cmd;
	unsigned int maps = fake_user_maps();
	struct ibv_qp *qp;
	uint32_t handle;

	qp = open_qp(xrcd, OPEN_MASK, tgt->qp_num, IBV_QPT_XRC_RECV);
	cmd = last_cmd(IB_USER_VERBS_CMD_OPEN_QP);
	if (!tap_ok(qp && cmd, "ibv_open_qp() of the TGT QP"))
		return;
	handle = qp->handle;
	tap_ok(cmd->qpn == tgt->qp_num && cmd->qp_type == IBV_QPT_XRC_RECV &&
	       cmd->pd_handle == fake_qp_get(tgt->handle)->xrcd &&
	       cmd->user_handle == (uintptr_t)qp,
	       "OPEN_QP: the QPN, type and XRC domain");
	tap_ok(handle != tgt->handle && qp->qp_num == tgt->qp_num &&
	       qp->qp_type == IBV_QPT_XRC_RECV && qp->context == ctx &&
	       fake_user_maps() == maps && !ibv_qp_to_qp_ex(qp),
	       "a handle of its own to the same QPN, no ring mapped");
	tap_ok(to_state(qp, IBV_QPS_ERR) == 0 &&
	       fake_qp_get(handle)->state == IBV_QPS_ERR,
	       "the opened QP is modified through its handle");
	check_no_post(qp, "opened QP in ERR");
	tap_ok(ibv_destroy_qp(qp) == 0 && !fake_qp_get(handle) &&
	       fake_qp_get(tgt->handle),
	       "ibv_destroy_qp() closes it; the TGT QP stays");

	errno = 0;
	tap_ok(!open_qp(xrcd, OPEN_MASK, tgt->qp_num + 1, IBV_QPT_XRC_RECV) &&
	       errno == EINVAL, "a QPN the XRC domain has not: EINVAL");
	errno = 0;
	tap_ok(!open_qp(xrcd, OPEN_MASK & ~IBV_QP_OPEN_ATTR_XRCD, tgt->qp_num,
			IBV_QPT_XRC_RECV) && errno == EINVAL,
	       "without IBV_QP_OPEN_ATTR_XRCD: EINVAL");
	errno = 0;
	tap_ok(!open_qp(xrcd, OPEN_MASK, tgt->qp_num, IBV_QPT_RC) &&
	       errno == EINVAL, "a QP type other than XRC_RECV: EINVAL");
}

static void check_tgt_errors(void)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	unsigned int commands = fake.commands;

	errno = 0;
	tap_ok(!ibv_create_qp_ex(ctx, &attr) && errno == EINVAL,
	       "XRC_RECV with a PD, without IBV_QP_INIT_ATTR_XRCD: EINVAL");
	errno = 0;
	tap_ok(!new_qp(IBV_QPT_XRC_RECV, IBV_QP_INIT_ATTR_XRCD, NULL, NULL) &&
	       errno == EINVAL && fake.commands == commands,
	       "XRC_RECV with a NULL XRC domain: EINVAL; no command for either");
}

static void check_xrc(void)
{
	struct ibv_xrcd *xrcd = check_open_xrcd();
	struct ibv_srq *srq = xrcd ? check_create_xsrq(xrcd) : NULL;
	uint32_t srqn = 0, handle;
	struct ibv_qp *qp;

	if (!srq)
		return;
	check_post_xsrq(srq);
	check_srq_ex_errors(xrcd);
	ibv_get_srq_num(srq, &srqn);
	qp = check_create_ini();
	if (qp && tap_ok(!walk_to(qp, IBV_QPS_RTS), "the INI QP goes to RTS"))
		check_post_ini(qp, srqn);
	tap_ok(qp && ibv_destroy_qp(qp) == 0, "the INI QP is destroyed");
	check_wr_ini(srqn);
	check_rc_no_srqn();
	check_ini_errors(srq);

	qp = check_create_tgt(xrcd);
	if (qp) {
		check_tgt_state(qp);
		check_open_qp(xrcd, qp);
	}
	check_tgt_errors();
	tap_ok(ibv_close_xrcd(xrcd) == EBUSY,
	       "ibv_close_xrcd() while its SRQ and QP live: EBUSY");
	tap_ok(qp && ibv_destroy_qp(qp) == 0 && ibv_destroy_srq(srq) == 0,
	       "the TGT QP and the XRC SRQ are destroyed");
	handle = vroce_container_of(xrcd, struct verbs_xrcd, xrcd)->handle;
	tap_ok(fake_xrcd_get(handle) && ibv_close_xrcd(xrcd) == 0 &&
	       !fake_xrcd_get(handle), "then the XRC domain closes");
}

int main(int argc, char **argv)
{
	struct test_env t;
	int opened = !test_open(&t, argc, argv, 1);

	ctx = t.ctx;
	pd = t.pd;
	cq = t.cq;
	if (opened)
		check_xrc();
	return test_close(&t, opened);
}
