// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User contexts and protection domains.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <rdma/ib_verbs.h>

#include "vroce.h"

/* Driver data a request carries beyond what we understand must be zero. */
bool vroce_udata_in_ok(struct ib_udata *udata, size_t known)
{
	if (!udata || udata->inlen <= known)
		return true;
	return ib_is_udata_cleared(udata, known, udata->inlen - known);
}

static int vroce_udata_out(struct ib_udata *udata, void *resp,
			   size_t len)
{
	if (!udata || !udata->outlen)
		return 0;
	return ib_copy_to_udata(udata, resp, min(len, udata->outlen));
}

int vroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct vroce_alloc_ucontext_resp resp = {
		.abi_version = VROCE_ABI_VERSION,
		.page_size = PAGE_SIZE,
	};

	if (!vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;
	return vroce_udata_out(udata, &resp, sizeof(resp));
}

/*
 * QUERY_CONTEXT, which ibv_import_device() sends over a command FD that
 * another process opened; ib_core refuses it (EOPNOTSUPP) to a driver
 * without this. The method carries no driver data (no UHW attribute),
 * so ib_core's answer (completion vectors, core support) is all of it.
 */
int vroce_query_ucontext(struct ib_ucontext *ibuc,
			 struct uverbs_attr_bundle *attrs)
{
	return 0;
}

void vroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Called when the device goes away while user space still holds the
 * context. ib_core destroys every object and zaps the mmaps we made with
 * rdma_user_mmap_*; nothing else of ours is tied to the process.
 */
void vroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

int vroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibpd->device);
	struct vroce_pd *pd = to_vpd(ibpd);
	struct vroce_alloc_pd_resp resp = {};
	int id;

	if (!vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;

	id = ida_alloc_range(&vdev->pd_ida, 1, VROCE_MAX_PD, GFP_KERNEL);
	if (id < 0)
		return id == -ENOSPC ? -ENOMEM : id;
	pd->pdn = id;
	resp.pdn = id;

	if (vroce_udata_out(udata, &resp, sizeof(resp))) {
		ida_free(&vdev->pd_ida, id);
		return -EFAULT;
	}
	atomic_inc(&vdev->n_pd);
	return 0;
}

int vroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibpd->device);

	ida_free(&vdev->pd_ida, to_vpd(ibpd)->pdn);
	atomic_dec(&vdev->n_pd);
	return 0;
}
