/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * RESET -> INIT -> RTR -> RTS of a connected (RC or UC) QP towards a
 * peer's QP, or towards itself (and RESET -> INIT -> RTR of an XRC target), for the test programs; each step on its
 * own for the tests that stop on the way.
 */
#ifndef VROCE_RC_CONNECT_H
#define VROCE_RC_CONNECT_H

#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

/*
 * Both ends of the connection and the QP's transport parameters; UC
 * takes only the PSNs, the QPN and the GIDs.
 */
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
	/* Remote rights; 0: RC write, read and atomic, UC write. */
	unsigned int access;
};

static inline int qp_is_rc(const struct ibv_qp *qp)
{
	return qp->qp_type == IBV_QPT_RC;
}

/* RC and XRC targets answer requests: they take the responder's attributes. */
static inline int qp_responds(const struct ibv_qp *qp)
{
	return qp_is_rc(qp) || qp->qp_type == IBV_QPT_XRC_RECV;
}

/* RESET -> INIT on port 1, P_Key index 0, with remote rights @access. */
static inline int qp_to_init(struct ibv_qp *qp, unsigned int access)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* INIT -> RTR towards @p; path MTU 1024. */
static inline int rc_to_rtr(struct ibv_qp *qp, const struct rc_path *p)
{
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = p->dqpn;
	a.rq_psn = p->rq_psn;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *p->dgid;
	a.ah_attr.grh.sgid_index = p->sgid_idx;
	a.ah_attr.grh.hop_limit = 64;
	if (qp_responds(qp)) {
		a.max_dest_rd_atomic = p->dest_rd_atomic;
		a.min_rnr_timer = p->min_rnr_timer;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return ibv_modify_qp(qp, &a, mask);
}

/* RTR -> RTS; RC with retry_cnt 7. */
static inline int rc_to_rts(struct ibv_qp *qp, const struct rc_path *p)
{
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = p->sq_psn;
	if (qp_is_rc(qp)) {
		a.timeout = p->timeout;
		a.retry_cnt = 7;
		a.rnr_retry = p->rnr_retry;
		a.max_rd_atomic = p->rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qp, &a, mask);
}

/* The remote rights @p gives a QP of @qp's transport. */
static inline unsigned int rc_path_access(const struct ibv_qp *qp,
					  const struct rc_path *p)
{
	if (p->access)
		return p->access;
	if (!qp_responds(qp))
		return IBV_ACCESS_REMOTE_WRITE;
	return IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	       IBV_ACCESS_REMOTE_ATOMIC;
}

/* RESET -> INIT -> RTR. */
static inline int rc_connect_rtr(struct ibv_qp *qp, const struct rc_path *p)
{
	if (qp_to_init(qp, rc_path_access(qp, p)))
		return -1;
	return rc_to_rtr(qp, p);
}

/* RESET -> INIT -> RTR -> RTS. */
static inline int rc_connect(struct ibv_qp *qp, const struct rc_path *p)
{
	if (rc_connect_rtr(qp, p))
		return -1;
	return rc_to_rts(qp, p);
}

#endif /* VROCE_RC_CONNECT_H */
