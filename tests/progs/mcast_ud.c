// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * mcast_ud: UD multicast with the verbs alone (no rdma_cm), for groups
 * rdma_cm cannot join on RoCE v2, such as IPv6 ones.
 *
 *   mcast_ud -d DEV -g GIDIDX -m MGID -r NQP [-n N] [-t SECONDS]
 *       NQP UD QPs attached to MGID (an IPv6 address, or ::ffff:a.b.c.d)
 *       with ibv_attach_mcast(), N receives each; prints "ready" once
 *       attached, then waits for N datagrams on each QP and checks each:
 *       its sequence number and payload, the GRH flag, the group as the
 *       GRH's destination. Prints "received N" per QP; exits 0 if all
 *       came right. Also attaches one QP twice and detaches it twice
 *       (ib_core counts attachments).
 *   mcast_ud -d DEV -g GIDIDX -m MGID -s [-n N]
 *       sends N datagrams of 64 bytes to the group (remote QPN 0xFFFFFF),
 *       one at a time, each completed before the next.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "open_dev.h"

#define QKEY		0x11112222u
#define MSG		64
#define GRH		40
#define MAX_QP		8
#define MAX_N		256

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static uint8_t *buf;
static struct ibv_mr *mr;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static struct ibv_qp *ud_qp(struct ibv_cq *cq, int depth)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (qp && ud_qp_rts(qp, QKEY)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static int post_recv(struct ibv_qp *qp, uint8_t *p, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)p, GRH + MSG, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static void fill(uint8_t *p, uint32_t seq)
{
	int i;

	for (i = 0; i < MSG; i++)
		p[i] = (uint8_t)(seq * 7 + i);
}

/* Whether the GRH area of a receive names @mgid as the destination. */
static int grh_to(const uint8_t *grh, const union ibv_gid *mgid)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	/* IPv4: the IP header is the area's last 20 bytes. */
	if (!memcmp(mgid->raw, v4mapped, sizeof(v4mapped)))
		return !memcmp(grh + 20 + 16, mgid->raw + 12, 4);
	return !memcmp(grh + 24, mgid->raw, 16);
}

static int receiver(const union ibv_gid *mgid, int nqp, int n, int secs)
{
	struct ibv_qp *qp[MAX_QP];
	struct ibv_cq *cq[MAX_QP];
	int got[MAX_QP] = { 0 }, bad = 0, i, j;
	uint8_t want[MSG], *p;
	struct ibv_wc wc;
	double end;

	for (i = 0; i < nqp; i++) {
		cq[i] = ibv_create_cq(ctx, n, NULL, NULL, 0);
		qp[i] = cq[i] ? ud_qp(cq[i], n) : NULL;
		if (!qp[i])
			return fprintf(stderr, "UD QP %d: %s\n", i,
				       strerror(errno)), 1;
		for (j = 0; j < n; j++)
			if (post_recv(qp[i], buf + (size_t)(i * n + j) *
				      (GRH + MSG), j))
				return fprintf(stderr, "post_recv\n"), 1;
		errno = ibv_attach_mcast(qp[i], mgid, 0);
		if (errno)
			return fprintf(stderr, "ibv_attach_mcast: %s\n",
				       strerror(errno)), 1;
	}
	/* Attached twice (another LID: uverbs passes it on), detached twice. */
	if (ibv_attach_mcast(qp[0], mgid, 1) ||
	    ibv_detach_mcast(qp[0], mgid, 1)) {
		fprintf(stderr, "second attach and detach of QP 0 failed\n");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	end = now() + secs;
	for (i = 0; i < nqp; i++) {
		while (got[i] < n && now() < end) {
			if (ibv_poll_cq(cq[i], 1, &wc) != 1) {
				usleep(1000);
				continue;
			}
			j = (int)wc.wr_id;
			p = buf + (size_t)(i * n + j) * (GRH + MSG);
			fill(want, got[i]);
			if (wc.status != IBV_WC_SUCCESS ||
			    wc.byte_len != GRH + MSG ||
			    !(wc.wc_flags & IBV_WC_GRH) || !grh_to(p, mgid) ||
			    memcmp(p + GRH, want, MSG)) {
				fprintf(stderr, "QP %d datagram %d: status %d, "
					"len %u, flags 0x%x, or bad data\n",
					i, got[i], wc.status, wc.byte_len,
					wc.wc_flags);
				bad++;
			}
			got[i]++;
		}
		printf("received %d\n", got[i]);
	}
	for (i = 0; i < nqp; i++) {
		if (ibv_detach_mcast(qp[i], mgid, 0))
			bad++;
		if (ibv_destroy_qp(qp[i]) || ibv_destroy_cq(cq[i]))
			bad++;
	}
	for (i = 0; i < nqp; i++)
		if (got[i] != n)
			bad++;
	fflush(stdout);
	return bad ? 1 : 0;
}

static int sender(const union ibv_gid *mgid, int gid, int n)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp = cq ? ud_qp(cq, 4) : NULL;
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *mgid, .sgid_index = gid, .hop_limit = 1 },
	};
	struct ibv_ah *ah = qp ? ibv_create_ah(pd, &aa) : NULL;
	struct ibv_sge sge = { (uintptr_t)buf, MSG, mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .remote_qpn = 0xffffff, .remote_qkey = QKEY },
	}, *bad;
	struct ibv_wc wc;
	double end;
	int i;

	if (!ah)
		return fprintf(stderr, "UD QP or AH: %s\n", strerror(errno)), 1;
	wr.wr.ud.ah = ah;
	for (i = 0; i < n; i++) {
		fill(buf, i);
		wr.wr_id = i;
		if (ibv_post_send(qp, &wr, &bad))
			return fprintf(stderr, "post_send %d\n", i), 1;
		end = now() + 10;
		while (ibv_poll_cq(cq, 1, &wc) != 1)
			if (now() > end)
				return fprintf(stderr, "no completion\n"), 1;
		if (wc.status != IBV_WC_SUCCESS)
			return fprintf(stderr, "send %d: status %d\n", i,
				       wc.status), 1;
		usleep(2000);	/* UD: no flow control; let receivers keep up */
	}
	printf("sent %d\n", n);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *group = NULL;
	int c, gid = -1, nqp = 0, n = 20, secs = 30, send = 0;
	union ibv_gid mgid;

	while ((c = getopt(argc, argv, "d:g:m:r:sn:t:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid = atoi(optarg); break;
		case 'm': group = optarg; break;
		case 'r': nqp = atoi(optarg); break;
		case 's': send = 1; break;
		case 'n': n = atoi(optarg); break;
		case 't': secs = atoi(optarg); break;
		default: return 2;
		}
	}
	if (!dev || gid < 0 || !group || send == !!nqp || nqp > MAX_QP ||
	    n < 1 || n > MAX_N ||
	    inet_pton(AF_INET6, group, mgid.raw) != 1) {
		fprintf(stderr, "usage: see the source\n");
		return 2;
	}
	ctx = open_by_name(dev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	buf = calloc((size_t)MAX_QP * MAX_N, GRH + MSG);
	mr = pd && buf ? ibv_reg_mr(pd, buf, (size_t)MAX_QP * MAX_N *
				    (GRH + MSG), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr) {
		fprintf(stderr, "%s: open, PD or MR failed\n", dev);
		return 1;
	}
	return send ? sender(&mgid, gid, n) : receiver(&mgid, nqp, n, secs);
}
