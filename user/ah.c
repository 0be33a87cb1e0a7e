// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: address handles.
 *
 * The kernel resolves and keeps the address (it accepts RoCE v2 AHs with
 * a GRH on port 1 only) and numbers the AH; a UD send WQE names the AH by
 * that number.  ibv_create_ah_from_wc() needs nothing more of the
 * provider than create_ah and query_port (for the link layer): libibverbs
 * reads the GID table itself, through the kernel or sysfs.
 */
#include <errno.h>
#include <stdlib.h>

#include "vroce.h"

struct ibv_ah *vroce_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct vroce_create_ah_cmd_resp resp = {};
	struct vroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_create_ah(ibpd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto err_free;

	/*
	 * The kernel numbers AHs from 1: a 0 means it sent no number, and
	 * every UD send through this AH would fail.
	 */
	if (!resp.drv.ah_num) {
		ibv_cmd_destroy_ah(&ah->ibv_ah);
		ret = EPROTO;
		goto err_free;
	}

	ah->ah_num = resp.drv.ah_num;
	return &ah->ibv_ah;

err_free:
	free(ah);
	errno = ret;
	return NULL;
}

int vroce_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;

	free(to_vah(ibah));
	return 0;
}
