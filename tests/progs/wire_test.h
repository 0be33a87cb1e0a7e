/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * What the two-host test programs (dm_wire, odp_wire, verbs_wire,
 * xrc_wire) share: an RC QP with its CQ, its connection to the peer's,
 * and waiting for the completion a step expects.
 */
#ifndef VROCE_WIRE_TEST_H
#define VROCE_WIRE_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "open_dev.h"
#include "rc_connect.h"
#include "xchg.h"

/* The text of an answer: in words 7 to 14 of a message. */
#define WIRE_WHY_WORD	7
#define WIRE_WHY_LEN	64

/*
 * Device @dev, a PD on it and GID @gid's value: 0, or -1 (errno says).
 */
static inline int wire_open(const char *dev, int gid, struct ibv_context **ctx,
			    struct ibv_pd **pd, union ibv_gid *my_gid)
{
	*ctx = open_by_name(dev);
	if (!*ctx)
		return -1;
	*pd = ibv_alloc_pd(*ctx);
	if (!*pd || ibv_query_gid(*ctx, 1, gid, my_gid))
		return -1;
	return 0;
}

/*
 * Sends question @m to the server on @fd and reads its answer into @m,
 * its text into @why (@len bytes): 0, or -1 if the server is gone (so
 * @why says).
 */
static inline int wire_ask(int fd, struct xchg_msg *m, char *why, size_t len)
{
	size_t n = len - 1 < WIRE_WHY_LEN ? len - 1 : WIRE_WHY_LEN;

	if (xchg_send(fd, m) || xchg_recv(fd, m, 60000)) {
		snprintf(why, len, "the server is gone");
		return -1;
	}
	memcpy(why, m->v + WIRE_WHY_WORD, n);
	why[n] = 0;
	return 0;
}

/*
 * The server's answer @m: status @st, its QP's number, text @why and GID
 * @gid; words 2 to 6 are the caller's.
 */
static inline void wire_answer(struct xchg_msg *m, int st,
			       const struct ibv_qp *qp, const char *why,
			       const union ibv_gid *gid)
{
	memset(m, 0, sizeof(*m));
	m->v[0] = st;
	m->v[1] = qp ? qp->qp_num : 0;
	memcpy(m->v + WIRE_WHY_WORD, why, strnlen(why, WIRE_WHY_LEN));
	memcpy(m->gid, gid->raw, sizeof(m->gid));
}

/* One completion of @cq within @ms ms into @wc: 0, or -1 if none came. */
static inline int wire_poll(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	long long end = xchg_now_ms() + ms;
	int r;

	do {
		r = ibv_poll_cq(cq, 1, wc);
		if (r)
			return r == 1 ? 0 : -1;
	} while (xchg_now_ms() < end);
	return -1;
}

/*
 * Whether the next completion of @cq, within @ms ms, is @status for
 * @id; if not, why not into @why (@len bytes), for step @what.
 */
static inline int wire_expect(struct ibv_cq *cq, int ms, uint64_t id,
			      enum ibv_wc_status status, const char *what,
			      char *why, size_t len)
{
	struct ibv_wc wc;

	if (wire_poll(cq, &wc, ms)) {
		snprintf(why, len, "%s: no completion", what);
		return 0;
	}
	if (wc.wr_id != id || wc.status != status) {
		snprintf(why, len, "%s: wr_id %llu %s (want %llu %s)", what,
			 (unsigned long long)wc.wr_id,
			 ibv_wc_status_str(wc.status), (unsigned long long)id,
			 ibv_wc_status_str(status));
		return 0;
	}
	return 1;
}

/* An RC QP of @pd whose send and receive CQ is a new one of @ctx. */
static inline int wire_rc_open(struct ibv_context *ctx, struct ibv_pd *pd,
			       struct ibv_cq **cq, struct ibv_qp **qp)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	*cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!*cq)
		return -1;
	qa.send_cq = *cq;
	qa.recv_cq = *cq;
	*qp = ibv_create_qp(pd, &qa);
	return *qp ? 0 : -1;
}

/*
 * @qp (RC or UC) to RTS towards the peer's QP @dqpn at GID @gid, from
 * our GID @sgid_idx: 4 READs or atomics each way, RNR retries forever.
 */
static inline int wire_connect(struct ibv_qp *qp, int sgid_idx, uint32_t dqpn,
			       const uint8_t *gid)
{
	union ibv_gid dgid;
	const struct rc_path p = {
		.dqpn = dqpn, .dgid = &dgid, .sgid_idx = sgid_idx,
		.dest_rd_atomic = 4, .rd_atomic = 4, .min_rnr_timer = 1,
		.timeout = 14, .rnr_retry = 7,
	};

	memcpy(dgid.raw, gid, sizeof(dgid.raw));
	return rc_connect(qp, &p);
}

#endif
