// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: memory regions and memory windows.
 *
 * Both live in the kernel only: the provider sends no driver data and
 * gets none back, and keeps nothing beyond what libibverbs keeps.  The
 * kernel checks the access flags (ibv_reg_mr(3): EINVAL for remote write
 * or atomic access without local write), pins the memory (EFAULT if it
 * cannot) and refuses to deregister or re-register an MR a memory window
 * is bound to (EBUSY).
 *
 * On-demand paging MRs (IBV_ACCESS_ON_DEMAND) are the kernel's business
 * too: the access flags go to it as given, and ibv_advise_mr() is its
 * ADVISE_MR method once the arguments have been checked here.
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>

#include "vroce.h"

/*
 * The access flags reach the kernel unchanged, IBV_ACCESS_ON_DEMAND
 * included.  An implicit ODP MR, ibv_reg_mr(pd, NULL, SIZE_MAX,
 * access | IBV_ACCESS_ON_DEMAND), arrives here with addr NULL, length
 * SIZE_MAX and hca_va 0; ibv_cmd_reg_mr() sends start 0 and length
 * UINT64_MAX, which the kernel takes for the whole address space.
 */
struct ibv_mr *vroce_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			    uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibv_reg_mr cmd = {};
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * ibv_advise_mr(3): prefetch (part of) ODP MRs.  ibv_advise_mr() returns
 * what we return, so an error is a positive errno value (also left in
 * errno).  What the man page calls invalid is refused here, before any
 * system call: no SGE (num_sge 0 or no sg_list) or a flag it does not
 * list (EINVAL), and an advice it does not list (ENOTSUP, "the advise
 * operation isn't supported").  Whether the lkeys name ODP MRs of this PD
 * and the ranges lie within them is the kernel's to check (EFAULT).
 */
int vroce_advise_mr(struct ibv_pd *ibpd, enum ibv_advise_mr_advice advice,
		    uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
{
	int ret = EINVAL;

	switch (advice) {
	case IBV_ADVISE_MR_ADVICE_PREFETCH:
	case IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE:
	case IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		if (num_sge && sg_list &&
		    !(flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH))
			ret = ibv_cmd_advise_mr(ibpd, advice, flags, sg_list,
						num_sge);
		break;
	default:
		ret = EOPNOTSUPP;
		break;
	}
	if (ret)
		errno = ret;
	return ret;
}

/*
 * The kernel makes a new MR with new keys and puts it behind the same
 * handle; ibv_cmd_rereg_mr() stores the new keys and ibv_rereg_mr() the
 * new pd, addr and length.  The old MR is untouched if this fails.
 *
 * ibv_rereg_mr() returns IBV_REREG_MR_ERR_CMD for any non-zero value we
 * return and leaves errno as we set it, so an error sets errno to the
 * kernel's errno value (and returns it).
 */
int vroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *ibpd,
		   void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp = {};
	struct ibv_rereg_mr cmd = {};
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, ibpd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		errno = ret;
		return ret;
	}

	/* ibv_dereg_mr() looks at the access flags of the MR as it is. */
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		vmr->access = access;
	return 0;
}

int vroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	free(vmr);
	return 0;
}

/* Type 1 and type 2 windows; the kernel refuses any other type. */
struct ibv_mw *vroce_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_alloc_mw(ibpd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

int vroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;

	free(mw);
	return 0;
}

/*
 * Binding a type 1 window (ibv_bind_mw(3)) is a BIND_MW work request on
 * the send queue with the window's next rkey, like a type 2 bind; the
 * window takes that rkey once the request is posted.
 */
int vroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr, *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1 ||
	    vroce_pd_protection(mw->pd) != vroce_pd_protection(ibqp->pd)) {
		errno = EINVAL;
		return EINVAL;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = bind->bind_info;
	ret = vroce_post_send(ibqp, &wr, &bad);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

/*
 * ibv_import_mr(): the MR of @mr_handle, as the kernel describes it
 * (QUERY_MR checks the handle: lkey, rkey, length; its address is the
 * exporter's and stays NULL here).  ibv_unimport_mr() forgets it.
 */
struct ibv_mr *vroce_import_mr(struct ibv_pd *ibpd, uint32_t mr_handle)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int ret;

	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_query_mr(ibpd, vmr, mr_handle);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

void vroce_unimport_mr(struct ibv_mr *mr)
{
	free(vroce_container_of(mr, struct verbs_mr, ibv_mr));
}
