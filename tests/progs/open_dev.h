/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * Helpers of the VM test programs: open a device by name, find a RoCE v2
 * GID, bring a loopback RC QP or a UD QP to RTS.
 */
#ifndef VROCE_OPEN_DEV_H
#define VROCE_OPEN_DEV_H

#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "rc_connect.h"

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

/* Moves an RC QP, connected to QP @dest through GID @gid, to RTR. */
static inline int loopback_rc_rtr(struct ibv_context *ctx, struct ibv_qp *qp,
				  int gid, uint32_t dest)
{
	union ibv_gid dgid;
	struct rc_path p = {
		.dqpn = dest, .dgid = &dgid, .sgid_idx = gid,
		.dest_rd_atomic = 1, .min_rnr_timer = 1,
		.access = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_query_gid(ctx, 1, gid, &dgid))
		return -1;
	return rc_connect_rtr(qp, &p);
}

/* Moves an RC QP, connected to itself through GID @gid, to RTS. */
static inline int loopback_rc_rts(struct ibv_context *ctx, struct ibv_qp *qp,
				  int gid)
{
	const struct rc_path p = {
		.rd_atomic = 1, .timeout = 14, .rnr_retry = 7,
	};

	if (loopback_rc_rtr(ctx, qp, gid, qp->qp_num))
		return -1;
	return rc_to_rts(qp, &p);
}

/* Moves a UD QP through INIT (Q_Key @qkey) and RTR to RTS. */
static inline int ud_qp_rts(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

#endif /* VROCE_OPEN_DEV_H */
