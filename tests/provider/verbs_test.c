// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * The MR (on-demand paging and ibv_advise_mr() included), MW, AH and SRQ
 * verbs of the provider against the fake uverbs device, through the
 * installed libibverbs:
 *
 *   verbs_test <absolute path of libvroce-rdmav34.so>
 *
 * Checks the exact commands the provider sends, how the responses end up
 * in the ibv objects, the SRQ's WQE bytes and ring discipline, and the
 * errors of every verb.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>

#include "fake_sysfs.h"
#include "fake_uverbs.h"
#include "tap.h"
#include "test_main.h"
#include "vroce.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static uint8_t buf[8192];

static const void *last_cmd(uint32_t command, size_t in, size_t out)
{
	if (fake.last_cmd != command || fake.last_in != in ||
	    fake.last_out != out) {
		tap_diag("last command %u in %zu out %zu, want %u in %zu out %zu",
			 fake.last_cmd, fake.last_in, fake.last_out, command,
			 in, out);
		return NULL;
	}
	return fake.last_payload;
}

static void set_tweak(void (*fn)(uint32_t, void *, void *))
{
	fake.tweak = fn;
}

/* ---- MRs ---- */

static struct ibv_mr *check_reg_mr(void)
{
	const struct ib_uverbs_reg_mr *cmd;
	struct ibv_mr *mr;
	struct fake_mr *f;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;

	mr = ibv_reg_mr(pd, buf, 4096, access);
	if (!tap_ok(mr != NULL, "ibv_reg_mr() succeeds"))
		return NULL;
	cmd = last_cmd(IB_USER_VERBS_CMD_REG_MR, sizeof(*cmd),
		       sizeof(struct ib_uverbs_reg_mr_resp));
	tap_ok(cmd && cmd->start == (uintptr_t)buf && cmd->length == 4096 &&
	       cmd->hca_va == (uintptr_t)buf &&
	       cmd->pd_handle == FAKE_PD_HANDLE &&
	       cmd->access_flags == (uint32_t)access && !cmd->driver_data[0],
	       "REG_MR: start, length, iova, PD, access; no driver data");
	f = fake_mr_get(mr->handle);
	tap_ok(f && mr->lkey == f->lkey && mr->rkey == f->rkey &&
	       mr->lkey != mr->rkey && mr->context == ctx && mr->pd == pd &&
	       mr->addr == buf && mr->length == 4096,
	       "the MR has the kernel's handle and keys, addr, length, PD");
	return mr;
}

static unsigned int live_mrs(void)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < FAKE_MAX_OBJS; i++)
		n += fake.mrs[i].live;
	return n;
}

static void check_reg_mr_errors(void)
{
	unsigned int live = live_mrs();

	errno = 0;
	tap_ok(!ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_WRITE) &&
	       errno == EINVAL,
	       "REMOTE_WRITE without LOCAL_WRITE: the kernel's EINVAL");
	errno = 0;
	tap_ok(!ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_ATOMIC) &&
	       errno == EINVAL,
	       "REMOTE_ATOMIC without LOCAL_WRITE: the kernel's EINVAL");
	errno = 0;
	tap_ok(!ibv_reg_mr(pd, NULL, 4096, 0) && errno == EFAULT,
	       "memory the kernel cannot pin: EFAULT");
	tap_ok(live_mrs() == live, "...and no MR is left behind");
}

static void check_rereg_mr(struct ibv_mr *mr)
{
	const struct ib_uverbs_rereg_mr *cmd;
	uint32_t handle = mr->handle, lkey = mr->lkey, rkey = mr->rkey;
	struct fake_mr *f = fake_mr_get(handle);
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	int ret;

	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   access);
	cmd = last_cmd(IB_USER_VERBS_CMD_REREG_MR, sizeof(*cmd),
		       sizeof(struct ib_uverbs_rereg_mr_resp));
	tap_ok(ret == 0 && cmd && cmd->mr_handle == handle &&
	       cmd->flags == IBV_REREG_MR_CHANGE_ACCESS &&
	       cmd->access_flags == (uint32_t)access && !cmd->pd_handle,
	       "REREG_MR (access): handle, flags, access, no PD");
	tap_ok(mr->handle == handle && mr->lkey == f->lkey &&
	       mr->rkey == f->rkey && mr->lkey != lkey && mr->rkey != rkey &&
	       f->access == (uint32_t)access &&
	       ((struct verbs_mr *)mr)->access == access,
	       "the new MR's keys replace the old ones, same handle");

	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			   IBV_REREG_MR_CHANGE_PD, pd, buf + 4096, 2048, 0);
	cmd = last_cmd(IB_USER_VERBS_CMD_REREG_MR, sizeof(*cmd),
		       sizeof(struct ib_uverbs_rereg_mr_resp));
	tap_ok(ret == 0 && cmd &&
	       cmd->start == (uintptr_t)(buf + 4096) && cmd->length == 2048 &&
	       cmd->hca_va == (uintptr_t)(buf + 4096) &&
	       cmd->pd_handle == FAKE_PD_HANDLE &&
	       mr->addr == buf + 4096 && mr->length == 2048 && mr->pd == pd &&
	       mr->lkey == f->lkey && f->start == (uintptr_t)(buf + 4096),
	       "REREG_MR (translation, PD): new range and keys in the MR");

	lkey = mr->lkey;
	f->bound_mws = 1;
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE);
	tap_ok(ret == IBV_REREG_MR_ERR_CMD && errno == EBUSY &&
	       mr->lkey == lkey && mr->addr == buf + 4096,
	       "rereg with a bound MW: IBV_REREG_MR_ERR_CMD, errno EBUSY, MR kept (%d, %d)",
	       ret, errno);
	f->bound_mws = 0;
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_ATOMIC);
	tap_ok(ret == IBV_REREG_MR_ERR_CMD && errno == EINVAL,
	       "rereg to REMOTE_ATOMIC alone: IBV_REREG_MR_ERR_CMD, errno EINVAL");
}

static void check_dereg_mr(struct ibv_mr *mr)
{
	const struct ib_uverbs_dereg_mr *cmd;
	struct fake_mr *f = fake_mr_get(mr->handle);
	uint32_t handle = mr->handle;
	int ret;

	f->bound_mws = 1;
	ret = ibv_dereg_mr(mr);
	tap_ok(ret == EBUSY && f->live,
	       "dereg with a bound MW fails with EBUSY (%d)", ret);
	f->bound_mws = 0;
	ret = ibv_dereg_mr(mr);
	cmd = last_cmd(IB_USER_VERBS_CMD_DEREG_MR, sizeof(*cmd), 0);
	tap_ok(ret == 0 && cmd && cmd->mr_handle == handle &&
	       !fake_mr_get(handle),
	       "then ibv_dereg_mr() frees the kernel's MR");
}

/* ---- on-demand paging MRs ---- */

/*
 * An ODP MR of @len bytes at @addr; REG_MR must carry the access flags,
 * IBV_ACCESS_ON_DEMAND included, and start, length and iova.
 */
static struct ibv_mr *odp_reg_mr(void *addr, size_t len, uint64_t start,
				 uint64_t length, const char *what)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND;
	const struct ib_uverbs_reg_mr *cmd;
	struct ibv_mr *mr;
	struct fake_mr *f;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, access);
	if (!tap_ok(mr != NULL, "%s: ibv_reg_mr() succeeds (%s)", what,
		    mr ? "" : strerror(errno)))
		return NULL;
	cmd = last_cmd(IB_USER_VERBS_CMD_REG_MR, sizeof(*cmd),
		       sizeof(struct ib_uverbs_reg_mr_resp));
	tap_ok(cmd && cmd->start == start && cmd->length == length &&
	       cmd->hca_va == start && cmd->pd_handle == FAKE_PD_HANDLE &&
	       cmd->access_flags == (uint32_t)access,
	       "%s: REG_MR has start 0x%llx, length 0x%llx, iova, access with ON_DEMAND",
	       what, (unsigned long long)start, (unsigned long long)length);
	f = fake_mr_get(mr->handle);
	tap_ok(f && (f->access & IBV_ACCESS_ON_DEMAND) && mr->lkey == f->lkey &&
	       mr->addr == addr && mr->length == len &&
	       ((struct verbs_mr *)mr)->access == access,
	       "%s: the MR has the kernel's keys, addr, length and access",
	       what);
	return mr;
}

/*
 * Whether the last ADVISE_MR the fake kernel got is @advice, @flags and
 * the @n SGEs of @sg on our PD.
 */
static bool advise_got(uint32_t advice, uint32_t flags,
		       const struct ibv_sge *sg, uint32_t n)
{
	uint32_t i;

	if (fake.last_object != UVERBS_OBJECT_MR ||
	    fake.last_method != UVERBS_METHOD_ADVISE_MR ||
	    fake.last_num_attrs != 4 || fake.optional_attrs ||
	    fake.last_advise.pd_handle != FAKE_PD_HANDLE ||
	    fake.last_advise.advice != advice ||
	    fake.last_advise.flags != flags ||
	    fake.last_advise.num_sge != n) {
		tap_diag("ADVISE_MR: object %u method %u attrs %u (%u optional), pd %u advice %u flags 0x%x num_sge %u",
			 fake.last_object, fake.last_method,
			 fake.last_num_attrs, fake.optional_attrs,
			 fake.last_advise.pd_handle, fake.last_advise.advice,
			 fake.last_advise.flags, fake.last_advise.num_sge);
		return false;
	}
	for (i = 0; i < n && i < FAKE_ADVISE_SGES; i++)
		if (fake.last_advise.sge[i].addr != sg[i].addr ||
		    fake.last_advise.sge[i].length != sg[i].length ||
		    fake.last_advise.sge[i].lkey != sg[i].lkey) {
			tap_diag("SGE %u: 0x%llx %u 0x%x", i,
				 (unsigned long long)fake.last_advise.sge[i].addr,
				 fake.last_advise.sge[i].length,
				 fake.last_advise.sge[i].lkey);
			return false;
		}
	return true;
}

/* ibv_advise_mr() with arguments ibv_advise_mr(3) calls invalid. */
static void check_advise_refused(struct ibv_mr *mr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64,
			       .lkey = mr->lkey };
	unsigned int ioctls = fake.ioctls;
	int ret;

	errno = 0;
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 0);
	tap_ok(ret == EINVAL && errno == EINVAL,
	       "ibv_advise_mr() with num_sge 0: EINVAL (%d)", ret);
	errno = 0;
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, NULL, 1);
	tap_ok(ret == EINVAL && errno == EINVAL,
	       "ibv_advise_mr() without an sg_list: EINVAL (%d)", ret);
	errno = 0;
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			    IBV_ADVISE_MR_FLAG_FLUSH << 1, &sge, 1);
	tap_ok(ret == EINVAL && errno == EINVAL,
	       "ibv_advise_mr() with a flag it does not know: EINVAL (%d)",
	       ret);
	errno = 0;
	ret = ibv_advise_mr(pd, (enum ibv_advise_mr_advice)3, 0, &sge, 1);
	tap_ok(ret == EOPNOTSUPP && errno == EOPNOTSUPP,
	       "ibv_advise_mr() with an advice it does not know: EOPNOTSUPP (%d)",
	       ret);
	tap_ok(fake.ioctls == ioctls,
	       "...all refused before any system call");
}

static void check_odp(void)
{
	struct ibv_mr *mr, *imr;
	struct ibv_sge sg[2];
	unsigned int advised;
	int ret;

	mr = odp_reg_mr(buf, 4096, (uintptr_t)buf, 4096, "ODP MR");
	if (!mr)
		return;

	sg[0] = (struct ibv_sge){ .addr = (uintptr_t)buf + 64, .length = 128,
				  .lkey = mr->lkey };
	advised = fake.advise_mr;
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, sg, 1);
	tap_ok(ret == 0 && fake.advise_mr == advised + 1,
	       "ibv_advise_mr(PREFETCH_WRITE, FLUSH) succeeds (%d)", ret);
	tap_ok(advise_got(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			  IB_UVERBS_ADVISE_MR_FLAG_FLUSH, sg, 1),
	       "ADVISE_MR of the MR object: PD handle, advice, flags, SGE addr, length, lkey");

	sg[1] = (struct ibv_sge){ .addr = (uintptr_t)buf + 2048,
				  .length = 2048, .lkey = mr->lkey };
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0, sg,
			    2);
	tap_ok(ret == 0 &&
	       advise_got(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0, sg,
			  2),
	       "PREFETCH_NO_FAULT, no flags, two SGEs: all of them reach the kernel");

	check_advise_refused(mr);

	/* What the kernel refuses comes back as ibv_advise_mr()'s value. */
	sg[1].length = 2049;
	errno = 0;
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 2);
	tap_ok(ret == EFAULT && errno == EFAULT && advise_got(
		       IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 2),
	       "an SGE beyond the MR: the kernel's EFAULT (%d)", ret);
	fake.advise_errno = EOPNOTSUPP;
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 1);
	fake.advise_errno = 0;
	tap_ok(ret == EOPNOTSUPP,
	       "a kernel that cannot prefetch: its EOPNOTSUPP (%d)", ret);

	/* The whole address space: start 0, length UINT64_MAX, iova 0. */
	imr = odp_reg_mr(NULL, SIZE_MAX, 0, UINT64_MAX, "implicit ODP MR");
	if (imr) {
		sg[0] = (struct ibv_sge){ .addr = (uintptr_t)&ret,
					  .length = sizeof(ret),
					  .lkey = imr->lkey };
		ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				    IBV_ADVISE_MR_FLAG_FLUSH, sg, 1);
		tap_ok(ret == 0 &&
		       advise_got(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				  IB_UVERBS_ADVISE_MR_FLAG_FLUSH, sg, 1),
		       "prefetching any address through the implicit MR (%d)",
		       ret);
		tap_ok(ibv_dereg_mr(imr) == 0, "the implicit ODP MR is freed");
	}
	tap_ok(ibv_dereg_mr(mr) == 0, "the ODP MR is freed");
}

/* ---- MWs ---- */

static void check_mw(void)
{
	const struct ib_uverbs_alloc_mw *cmd;
	struct ibv_mw *mw1, *mw2;
	struct ibv_mw_bind bind = {};
	struct ibv_qp other = {};	/* only its PD is looked at */
	struct ibv_qp *qp = &other;
	uint32_t handle;
	int ret;

	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	cmd = last_cmd(IB_USER_VERBS_CMD_ALLOC_MW, sizeof(*cmd),
		       sizeof(struct ib_uverbs_alloc_mw_resp));
	if (!tap_ok(mw1 && cmd && cmd->pd_handle == FAKE_PD_HANDLE &&
		    cmd->mw_type == IBV_MW_TYPE_1,
		    "ALLOC_MW type 1: PD and type"))
		return;
	tap_ok(fake_mw_get(mw1->handle) &&
	       mw1->rkey == fake_mw_get(mw1->handle)->rkey &&
	       mw1->type == IBV_MW_TYPE_1 && mw1->pd == pd &&
	       mw1->context == ctx,
	       "the MW has the kernel's handle and rkey");
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	tap_ok(mw2 && mw2->type == IBV_MW_TYPE_2 && mw2->rkey != mw1->rkey,
	       "a type 2 MW, with its own rkey");
	errno = 0;
	tap_ok(!ibv_alloc_mw(pd, (enum ibv_mw_type)3) && errno == EINVAL,
	       "MW type 3: the kernel's EINVAL");

	/*
	 * ibv_bind_mw() posts a BIND_MW work request (rings_test checks the
	 * WQE); what is refused before posting: a QP of another PD (by us),
	 * and a type 2 window (by libibverbs: those are bound by a work
	 * request of their own).
	 */
	errno = 0;
	ret = ibv_bind_mw(qp, mw1, &bind);
	tap_ok(ret == EINVAL && errno == EINVAL,
	       "ibv_bind_mw() on a QP of another PD: EINVAL, errno set (%d)",
	       ret);
	qp->pd = pd;
	ret = mw2 ? ibv_bind_mw(qp, mw2, &bind) : -1;
	tap_ok(ret == EINVAL, "ibv_bind_mw() of a type 2 MW: EINVAL (%d)", ret);

	handle = mw1->handle;
	ret = ibv_dealloc_mw(mw1);
	cmd = last_cmd(IB_USER_VERBS_CMD_DEALLOC_MW,
		       sizeof(struct ib_uverbs_dealloc_mw), 0);
	tap_ok(ret == 0 && cmd &&
	       ((const struct ib_uverbs_dealloc_mw *)(const void *)cmd)->mw_handle ==
	       handle && !fake_mw_get(handle),
	       "ibv_dealloc_mw() frees the kernel's MW");
	tap_ok(mw2 && ibv_dealloc_mw(mw2) == 0, "and the type 2 one");
}

/* ---- AHs ---- */

static struct ibv_ah_attr ah_attr(void)
{
	struct ibv_ah_attr attr = {
		.grh = {
			.dgid.raw = { 0xfe, 0x80, [8] = 0x02, 0x00, 0xbb, 0xff,
				      0xfe, 0x00, 0x00, 0x02 },
			.flow_label = 0x12345,
			.sgid_index = 0,
			.hop_limit = 64,
			.traffic_class = 0x20,
		},
		.sl = 3,
		.is_global = 1,
		.port_num = 1,
	};

	return attr;
}

static void tweak_ah_num0(uint32_t cmd, void *core, void *drv)
{
	struct vroce_create_ah_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_CREATE_AH)
		r->ah_num = 0;
}

static bool ah_cmd_is(const struct ibv_ah_attr *want)
{
	const struct ib_uverbs_create_ah *cmd;

	cmd = last_cmd(IB_USER_VERBS_CMD_CREATE_AH, sizeof(*cmd),
		       sizeof(struct vroce_create_ah_cmd_resp));
	return cmd && cmd->pd_handle == FAKE_PD_HANDLE &&
	       cmd->attr.is_global == want->is_global &&
	       cmd->attr.port_num == want->port_num &&
	       cmd->attr.sl == want->sl &&
	       cmd->attr.dlid == want->dlid &&
	       cmd->attr.grh.sgid_index == want->grh.sgid_index &&
	       cmd->attr.grh.hop_limit == want->grh.hop_limit &&
	       cmd->attr.grh.traffic_class == want->grh.traffic_class &&
	       cmd->attr.grh.flow_label == want->grh.flow_label &&
	       !memcmp(cmd->attr.grh.dgid, want->grh.dgid.raw, 16);
}

static struct ibv_ah *check_create_ah(void)
{
	struct ibv_ah_attr attr = ah_attr();
	unsigned int destroyed;
	struct ibv_ah *ah;

	ah = ibv_create_ah(pd, &attr);
	if (!tap_ok(ah != NULL, "ibv_create_ah() succeeds"))
		return NULL;
	tap_ok(ah_cmd_is(&attr),
	       "CREATE_AH: the attributes, room for vroce_create_ah_resp");
	tap_ok(fake_ah_get(ah->handle) &&
	       to_vah(ah)->ah_num == fake_ah_get(ah->handle)->ah_num &&
	       ah->context == ctx && ah->pd == pd,
	       "the AH keeps the kernel's handle and ah_num (%u)",
	       to_vah(ah)->ah_num);

	attr.is_global = 0;
	errno = 0;
	tap_ok(!ibv_create_ah(pd, &attr) && errno == EINVAL,
	       "an AH without GRH: the kernel's EINVAL");

	destroyed = fake.destroy_ah;
	set_tweak(tweak_ah_num0);
	attr = ah_attr();
	errno = 0;
	tap_ok(!ibv_create_ah(pd, &attr) && errno == EPROTO &&
	       fake.destroy_ah == destroyed + 1,
	       "a response with ah_num 0 is refused (EPROTO), the AH destroyed");
	set_tweak(NULL);
	return ah;
}

static void check_ah_from_wc(void)
{
	/* Sent to our GID 0 from fe80::200:bbff:fe00:2, RoCE v2 over IPv6. */
	struct ibv_grh grh = {
		.version_tclass_flow = htobe32(6U << 28 | 0x20U << 20 | 0x12345),
		.next_hdr = 17,
		.hop_limit = 64,
		.sgid.raw = { 0xfe, 0x80, [8] = 0x02, 0x00, 0xbb, 0xff, 0xfe,
			      0x00, 0x00, 0x02 },
		.dgid.raw = { 0xfe, 0x80, [8] = 0x02, 0x00, 0xaa, 0xff, 0xfe,
			      0x00, 0x00, 0x01 },
	};
	struct ibv_wc wc = { .wc_flags = IBV_WC_GRH, .sl = 3 };
	struct ibv_ah_attr want = ah_attr();
	struct ibv_ah *ah;

	ah = ibv_create_ah_from_wc(pd, &wc, &grh, 1);
	if (!tap_ok(ah != NULL, "ibv_create_ah_from_wc() succeeds (%s)",
		    ah ? "" : strerror(errno)))
		return;
	tap_ok(ah_cmd_is(&want),
	       "it sends the sender's GID, our GID index 0, hop limit, class, flow");
	tap_ok(to_vah(ah)->ah_num == fake_ah_get(ah->handle)->ah_num,
	       "and keeps the ah_num");
	tap_ok(ibv_destroy_ah(ah) == 0, "that AH is destroyed");
}

/* ibv_attach_mcast(), ibv_detach_mcast(): the kernel's commands. */
static void check_mcast(struct ibv_qp *qp)
{
	const struct ib_uverbs_attach_mcast *cmd =
		(const void *)fake.last_payload;
	union ibv_gid gid = { .raw = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				       0xff, 0xff, 239, 1, 2, 3 } };

	tap_ok(ibv_attach_mcast(qp, &gid, 0) == 0 && fake.attach_mcast == 1 &&
	       cmd->qp_handle == qp->handle && cmd->mlid == 0 &&
	       !memcmp(cmd->gid, gid.raw, sizeof(gid.raw)),
	       "ibv_attach_mcast() sends the GID and QP to the kernel");
	tap_ok(ibv_detach_mcast(qp, &gid, 0) == 0 && fake.detach_mcast == 1 &&
	       cmd->qp_handle == qp->handle &&
	       !memcmp(cmd->gid, gid.raw, sizeof(gid.raw)),
	       "ibv_detach_mcast() sends the GID and QP to the kernel");
}

static void check_ud_send(struct ibv_ah *ah)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 2, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_attr mod = {};
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8 };
	struct ibv_send_wr wr = {
		.wr_id = 9,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.wr.ud = { .ah = ah, .remote_qpn = 0x99, .remote_qkey = 0x42 },
	}, *bad = NULL;
	const struct vroce_send_wqe *wqe;
	struct ibv_qp *qp;

	qp = ibv_create_qp(pd, &attr);
	if (!tap_ok(qp != NULL, "a UD QP"))
		return;
	mod.qp_state = IBV_QPS_INIT;
	ibv_modify_qp(qp, &mod, IBV_QP_STATE);
	mod.qp_state = IBV_QPS_RTR;
	ibv_modify_qp(qp, &mod, IBV_QP_STATE);
	mod.qp_state = IBV_QPS_RTS;
	ibv_modify_qp(qp, &mod, IBV_QP_STATE);
	wqe = (const void *)fake_qp_get(qp->handle)->sq->ent;
	tap_ok(ibv_post_send(qp, &wr, &bad) == 0 &&
	       wqe->u.ud.ah_num == to_vah(ah)->ah_num &&
	       wqe->u.ud.ah_num == fake_ah_get(ah->handle)->ah_num &&
	       wqe->u.ud.remote_qpn == 0x99 && wqe->u.ud.remote_qkey == 0x42,
	       "a UD send through the AH names its ah_num in the WQE");
	check_mcast(qp);
	tap_ok(ibv_destroy_qp(qp) == 0, "the UD QP is destroyed");
}

static void check_destroy_ah(struct ibv_ah *ah)
{
	const struct ib_uverbs_destroy_ah *cmd;
	uint32_t handle = ah->handle;

	tap_ok(ibv_destroy_ah(ah) == 0 &&
	       (cmd = last_cmd(IB_USER_VERBS_CMD_DESTROY_AH, sizeof(*cmd),
			       0)) && cmd->ah_handle == handle &&
	       !fake_ah_get(handle),
	       "ibv_destroy_ah() frees the kernel's AH");
}

/* ---- SRQs ---- */

static struct ibv_srq *new_srq(uint32_t max_wr, uint32_t max_sge,
			       struct ibv_srq_init_attr *out)
{
	struct ibv_srq_init_attr attr = {
		.srq_context = &attr,
		.attr = { .max_wr = max_wr, .max_sge = max_sge,
			  .srq_limit = 0 },
	};
	struct ibv_srq *srq = ibv_create_srq(pd, &attr);

	if (out)
		*out = attr;
	return srq;
}

static struct ibv_srq *check_create_srq(void)
{
	const struct ib_uverbs_create_srq *cmd;
	struct ibv_srq_init_attr attr;
	unsigned int maps = fake_user_maps();
	struct ibv_srq *srq;
	struct fake_srq *f;

	srq = new_srq(5, 3, &attr);
	if (!tap_ok(srq != NULL, "ibv_create_srq() succeeds"))
		return NULL;
	f = fake_srq_get(srq->handle);
	cmd = last_cmd(IB_USER_VERBS_CMD_CREATE_SRQ, sizeof(*cmd),
		       sizeof(struct vroce_create_srq_cmd_resp));
	tap_ok(cmd && cmd->pd_handle == FAKE_PD_HANDLE && cmd->max_wr == 5 &&
	       cmd->max_sge == 3 && cmd->srq_limit == 0 &&
	       cmd->user_handle == (uintptr_t)srq,
	       "CREATE_SRQ: PD, max_wr, max_sge, limit; room for the driver response");
	tap_ok(f && attr.attr.max_wr == 8 && attr.attr.max_sge == 3 &&
	       f->max_wr == 8 && f->max_sge == 3,
	       "attr reports the kernel's max_wr %u and max_sge %u",
	       attr.attr.max_wr, attr.attr.max_sge);
	tap_ok(f && fake_user_maps() == maps + 1 && f->ring->user_maps == 1 &&
	       to_vsrq(srq)->srqn == f->srqn && srq->context == ctx &&
	       srq->pd == pd,
	       "the SRQ ring is mapped, srqn kept");
	return srq;
}

static bool srq_wqe_is(const struct fake_ring *ring, uint32_t idx,
		       uint64_t wr_id, const struct ibv_sge *sg, int n)
{
	const uint8_t *slot = ring->ent +
			      (size_t)(idx & (ring->entries - 1)) * ring->stride;
	struct vroce_recv_wqe want = { .wr_id = wr_id, .num_sge = n };
	struct vroce_sge s;
	int i;

	if (memcmp(slot, &want, sizeof(want)))
		return false;
	for (i = 0; i < n; i++) {
		s = (struct vroce_sge){ .addr = sg[i].addr,
					.length = sg[i].length,
					.lkey = sg[i].lkey };
		if (memcmp(slot + sizeof(want) + i * sizeof(s), &s, sizeof(s)))
			return false;
	}
	return true;
}

static void check_post_srq_recv(struct ibv_srq *srq)
{
	struct fake_ring *ring = fake_srq_get(srq->handle)->ring;
	struct ibv_sge sg[4] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x11 },
		{ .addr = 0x2000, .length = 200, .lkey = 0x22 },
		{ .addr = 0x3000, .length = 300, .lkey = 0x33 },
		{ .addr = 0x4000, .length = 400, .lkey = 0x44 },
	};
	struct ibv_recv_wr wr[9], *bad = NULL;
	unsigned int commands = fake.commands;
	int i, ret;

	memset(ring->ent, 0xee, (size_t)ring->entries * ring->stride);
	for (i = 0; i < 9; i++)
		wr[i] = (struct ibv_recv_wr){
			.wr_id = 0x100 + i,
			.next = i < 8 ? &wr[i + 1] : NULL,
			.sg_list = sg,
			.num_sge = i % 4,
		};
	wr[2].next = NULL;
	ret = ibv_post_srq_recv(srq, wr, &bad);
	tap_ok(ret == 0 && ring->hdr->prod == 3 &&
	       srq_wqe_is(ring, 0, 0x100, sg, 0) &&
	       srq_wqe_is(ring, 1, 0x101, sg, 1) &&
	       srq_wqe_is(ring, 2, 0x102, sg, 2),
	       "three WRs: WQE bytes (header and SGEs) at stride %u, prod 3",
	       ring->stride);
	wr[2].next = &wr[3];

	/* 3 SGEs is the SRQ's max_sge; 4 is not. */
	wr[3].num_sge = 4;
	bad = NULL;
	ret = ibv_post_srq_recv(srq, wr, &bad);
	tap_ok(ret == EINVAL && bad == &wr[3] && ring->hdr->prod == 6 &&
	       srq_wqe_is(ring, 5, 0x102, sg, 2),
	       "num_sge > max_sge: EINVAL, bad_wr names it, those before posted");
	wr[3].num_sge = 3;

	/* 8 entries, 6 used: two more fit. */
	bad = NULL;
	ret = ibv_post_srq_recv(srq, &wr[3], &bad);
	tap_ok(ret == ENOMEM && bad == &wr[5] && ring->hdr->prod == 8 &&
	       srq_wqe_is(ring, 6, 0x103, sg, 3) &&
	       srq_wqe_is(ring, 7, 0x104, sg, 0),
	       "a full ring: ENOMEM, bad_wr names the first WR not posted");
	bad = NULL;
	tap_ok(ibv_post_srq_recv(srq, &wr[8], &bad) == ENOMEM &&
	       bad == &wr[8] && ring->hdr->prod == 8,
	       "still full: nothing posted");

	__atomic_store_n(&ring->hdr->cons, 5, __ATOMIC_RELEASE);
	wr[8].next = NULL;
	bad = NULL;
	tap_ok(ibv_post_srq_recv(srq, &wr[8], &bad) == 0 &&
	       ring->hdr->prod == 9 && srq_wqe_is(ring, 8, 0x108, sg, 0),
	       "once the kernel consumes, the ring wraps to slot 0");
	tap_ok(fake.commands == commands, "post_srq_recv makes no system call");
}

static void check_modify_query_srq(struct ibv_srq *srq)
{
	const struct ib_uverbs_modify_srq *cmd;
	struct ibv_srq_attr attr = { .srq_limit = 4 };
	int ret;

	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
	cmd = last_cmd(IB_USER_VERBS_CMD_MODIFY_SRQ, sizeof(*cmd), 0);
	tap_ok(ret == 0 && cmd && cmd->srq_handle == srq->handle &&
	       cmd->attr_mask == IBV_SRQ_LIMIT && cmd->srq_limit == 4,
	       "MODIFY_SRQ: handle, mask, limit");
	attr.srq_limit = 9;
	tap_ok(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT) == EINVAL,
	       "a limit above the SRQ size: EINVAL");
	attr.max_wr = 16;
	tap_ok(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) == EOPNOTSUPP,
	       "IBV_SRQ_MAX_WR: EOPNOTSUPP");

	memset(&attr, 0xff, sizeof(attr));
	ret = ibv_query_srq(srq, &attr);
	tap_ok(ret == 0 && attr.max_wr == 8 && attr.max_sge == 3 &&
	       attr.srq_limit == 4,
	       "ibv_query_srq(): max_wr 8, max_sge 3, limit 4");
}

static void check_srq_destroy(struct ibv_srq *srq)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = 2, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	unsigned int maps = fake_user_maps();
	uint32_t handle = srq->handle;
	struct ibv_qp *qp;
	int ret;

	qp = ibv_create_qp(pd, &attr);
	if (!tap_ok(qp && fake_qp_get(qp->handle)->srq_handle == handle,
		    "a QP on the SRQ"))
		return;
	ret = ibv_destroy_srq(srq);
	tap_ok(ret == EBUSY && fake_srq_get(handle) &&
	       fake_user_maps() == maps + 1,
	       "destroying an SRQ a QP uses: EBUSY, ring still mapped (%d)",
	       ret);
	tap_ok(ibv_destroy_qp(qp) == 0, "the QP is destroyed");
	ret = ibv_destroy_srq(srq);
	tap_ok(ret == 0 && !fake_srq_get(handle) &&
	       fake_user_maps() == maps - 1,
	       "then ibv_destroy_srq() frees it and unmaps the ring");
}

static void tweak_srq_entries(uint32_t cmd, void *core, void *drv)
{
	struct vroce_create_srq_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_CREATE_SRQ)
		r->entries /= 2;
}

static void tweak_srq_max_sge(uint32_t cmd, void *core, void *drv)
{
	struct ib_uverbs_create_srq_resp *c = core;

	(void)drv;
	if (cmd == IB_USER_VERBS_CMD_CREATE_SRQ)
		c->max_sge += 1;
}

static void tweak_srq_size(uint32_t cmd, void *core, void *drv)
{
	struct vroce_create_srq_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_CREATE_SRQ)
		r->ring_size -= r->wqe_size;
}

static void tweak_srq_pow2(uint32_t cmd, void *core, void *drv)
{
	struct ib_uverbs_create_srq_resp *c = core;
	struct vroce_create_srq_resp *r = drv;

	if (cmd == IB_USER_VERBS_CMD_CREATE_SRQ) {
		r->entries -= 1;
		c->max_wr = r->entries;
	}
}

static void tweak_srq_offset(uint32_t cmd, void *core, void *drv)
{
	struct vroce_create_srq_resp *r = drv;

	(void)core;
	if (cmd == IB_USER_VERBS_CMD_CREATE_SRQ)
		r->ring_offset += 1ULL << 40;
}

static void check_srq_refused(void (*tweak)(uint32_t, void *, void *),
			      int want, const char *what)
{
	unsigned int destroyed = fake.destroy_srq;
	unsigned int maps = fake_user_maps();
	struct ibv_srq *srq;

	set_tweak(tweak);
	errno = 0;
	srq = new_srq(8, 2, NULL);
	set_tweak(NULL);
	tap_ok(!srq && errno == want && fake.destroy_srq == destroyed + 1 &&
	       fake_user_maps() == maps,
	       "%s: refused (%s), SRQ destroyed, nothing mapped", what,
	       strerror(want));
}

static void check_srq_errors(void)
{
	errno = 0;
	tap_ok(!new_srq(FAKE_MAX_WR + 1, 1, NULL) && errno == EINVAL,
	       "an SRQ larger than the kernel allows: EINVAL");
	check_srq_refused(tweak_srq_entries, EPROTO,
			  "fewer ring entries than max_wr");
	check_srq_refused(tweak_srq_max_sge, EPROTO,
			  "a WQE stride too small for max_sge");
	check_srq_refused(tweak_srq_size, EPROTO,
			  "a ring map too small for its entries");
	check_srq_refused(tweak_srq_pow2, EPROTO,
			  "a ring size not a power of two");
	check_srq_refused(tweak_srq_offset, EINVAL,
			  "an mmap offset the kernel does not have");
}

int main(int argc, char **argv)
{
	struct test_env t;
	int opened = !test_open(&t, argc, argv, 1);
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	struct ibv_ah *ah;

	if (!opened)
		return test_close(&t, opened);
	ctx = t.ctx;
	pd = t.pd;
	cq = t.cq;

	mr = check_reg_mr();
	check_reg_mr_errors();
	if (mr) {
		check_rereg_mr(mr);
		check_dereg_mr(mr);
	}
	check_odp();
	check_mw();

	ah = check_create_ah();
	check_ah_from_wc();
	if (ah) {
		check_ud_send(ah);
		check_destroy_ah(ah);
	}

	srq = check_create_srq();
	if (srq) {
		check_post_srq_recv(srq);
		check_modify_query_srq(srq);
		check_srq_destroy(srq);
	}
	check_srq_errors();
	return test_close(&t, opened);
}
