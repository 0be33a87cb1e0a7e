/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * Open an RDMA device by name through the stock libibverbs.
 */
#ifndef VROCE_OPEN_DEV_H
#define VROCE_OPEN_DEV_H

#include <string.h>
#include <infiniband/verbs.h>

static inline struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		return NULL;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

#endif /* VROCE_OPEN_DEV_H */
