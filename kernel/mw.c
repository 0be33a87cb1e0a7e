// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows, type 1 and type 2: allocation and deallocation, with
 * keys from the space MRs use. Binding is a work request of the data
 * path; an unbound window grants nothing.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include "vroce.h"

int vroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct vroce_dev *vdev = to_vdev(ibmw->device);
	u32 key;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (!vroce_udata_in_ok(udata, 0))
		return -EOPNOTSUPP;
	if (atomic_inc_return(&vdev->n_mw) > VROCE_MAX_MW) {
		err = -ENOMEM;
		goto dec;
	}
	err = vroce_key_alloc(vdev, to_vmw(ibmw), VROCE_KEY_MW, &key);
	if (err)
		goto dec;
	ibmw->rkey = key;
	return 0;
dec:
	atomic_dec(&vdev->n_mw);
	return err;
}

int vroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct vroce_dev *vdev = to_vdev(ibmw->device);
	struct vroce_mw *mw = to_vmw(ibmw);

	if (mw->mr)
		atomic_dec(&mw->mr->bound_mws);
	vroce_key_free(vdev, ibmw->rkey);
	atomic_dec(&vdev->n_mw);
	return 0;
}
