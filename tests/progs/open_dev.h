/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * Open an RDMA device by name through the stock libibverbs.
 */
#ifndef VROCE_OPEN_DEV_H
#define VROCE_OPEN_DEV_H

#include <stdint.h>
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

/* Index of the first RoCE v2 GID of port 1 that maps an IPv4 address. */
static inline int roce_v2_ipv4_gid(struct ibv_context *ctx)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_gid_entry e[64];
	ssize_t i, n = ibv_query_gid_table(ctx, e, 64, 0);

	for (i = 0; i < n; i++)
		if (e[i].gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(e[i].gid.raw, v4mapped, sizeof(v4mapped)))
			return e[i].gid_index;
	return -1;
}

#endif /* VROCE_OPEN_DEV_H */
