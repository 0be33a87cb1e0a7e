/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * RESET -> INIT -> RTR -> RTS of an RC QP towards a peer's QP, for the
 * test programs that talk to a second node (rdma_ops, rc_stress).
 */
#ifndef VROCE_RC_CONNECT_H
#define VROCE_RC_CONNECT_H

#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

/* Both ends of the connection and the QP's transport parameters. */
struct rc_path {
	uint32_t dqpn;			/* the peer's QP */
	uint32_t rq_psn;		/* the peer's send PSN */
	uint32_t sq_psn;		/* ours */
	const union ibv_gid *dgid;	/* the peer's GID */
	int sgid_idx;			/* our GID index */
	int dest_rd_atomic;
	int rd_atomic;
	int min_rnr_timer;
	int timeout;
	int rnr_retry;
};

/* Remote write, read and atomic are let in; path MTU 1024, retry_cnt 7. */
static inline int rc_connect(struct ibv_qp *qp, const struct rc_path *p)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = p->dqpn;
	a.rq_psn = p->rq_psn;
	a.max_dest_rd_atomic = p->dest_rd_atomic;
	a.min_rnr_timer = p->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *p->dgid;
	a.ah_attr.grh.sgid_index = p->sgid_idx;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = p->sq_psn;
	a.timeout = p->timeout;
	a.retry_cnt = 7;
	a.rnr_retry = p->rnr_retry;
	a.max_rd_atomic = p->rd_atomic;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

#endif /* VROCE_RC_CONNECT_H */
