// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * dup_read: the responder side of tests/vm/94-dup-read.sh, whose
 * requester is a script that crafts packets (tests/vm/_rdreq.py).
 *
 *   dup_read -d DEV -g GIDIDX -a PEER_IPV4 -q PEER_QPN -p PEER_PSN [-r N]
 *
 * Registers 1 MiB with remote read access, byte i holding (i * 7 + 3) &
 * 0xff, and connects an RC QP (path MTU 1024, remote read allowed,
 * max_dest_rd_atomic N, default 1) to QP PEER_QPN at PEER_IPV4 (its
 * IPv4-mapped GID), expecting PSN PEER_PSN. Prints "qpn Q va V rkey R",
 * then reads commands from standard input, one a line, and answers each
 * with one line:
 *   revoke   ibv_modify_qp(IBV_QP_ACCESS_FLAGS) without remote read:
 *            "revoked" (or "error ...")
 *   new      a fresh QP, connected the same way, replaces the QP:
 *            "qpn Q"
 *   state    the QP state: "state N"
 *   quit     exits
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "open_dev.h"

#define LEN	(1 << 20)

static int connect_qp(struct ibv_qp *qp, int gid, const char *peer,
		      uint32_t dqpn, uint32_t psn, int rd)
{
	union ibv_gid dgid = { .raw = { [10] = 0xff, [11] = 0xff } };
	const struct rc_path p = {
		.dqpn = dqpn, .rq_psn = psn, .sq_psn = 1, .dgid = &dgid,
		.sgid_idx = gid, .dest_rd_atomic = rd, .rd_atomic = 1,
		.min_rnr_timer = 12, .timeout = 14, .rnr_retry = 7,
		.access = IBV_ACCESS_REMOTE_READ,
	};

	if (inet_pton(AF_INET, peer, &dgid.raw[12]) != 1)
		return -1;
	return rc_connect(qp, &p);
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *peer = NULL;
	struct ibv_qp_init_attr ia, qia;
	struct ibv_qp_attr a;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	uint32_t dqpn = 0, psn = 0;
	int gid = -1, rd = 1, c, i;
	unsigned char *buf;
	char line[64];

	while ((c = getopt(argc, argv, "d:g:a:q:p:r:")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gid = atoi(optarg);
			break;
		case 'a':
			peer = optarg;
			break;
		case 'q':
			dqpn = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			psn = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rd = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (!dev || gid < 0 || !peer) {
		fprintf(stderr, "usage: dup_read -d DEV -g GID -a PEER -q QPN -p PSN\n");
		return 2;
	}
	ctx = open_by_name(dev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	buf = malloc(LEN);
	if (!cq || !buf) {
		perror("dup_read: setup");
		return 1;
	}
	for (i = 0; i < LEN; i++)
		buf[i] = (i * 7 + 3) & 0xff;
	mr = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = mr ? ibv_create_qp(pd, &ia) : NULL;
	if (!qp || connect_qp(qp, gid, peer, dqpn, psn, rd)) {
		perror("dup_read: QP");
		return 1;
	}
	printf("qpn %u va %llu rkey %u\n", qp->qp_num,
	       (unsigned long long)(uintptr_t)buf, mr->rkey);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "new", 3)) {
			ibv_destroy_qp(qp);
			qp = ibv_create_qp(pd, &ia);
			if (!qp || connect_qp(qp, gid, peer, dqpn, psn, rd)) {
				printf("error %m\n");
				return 1;
			}
			printf("qpn %u\n", qp->qp_num);
		} else if (!strncmp(line, "revoke", 6)) {
			memset(&a, 0, sizeof(a));
			a.qp_access_flags = 0;
			if (ibv_modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS))
				printf("error %m\n");
			else
				printf("revoked\n");
		} else if (!strncmp(line, "state", 5)) {
			if (ibv_query_qp(qp, &a, IBV_QP_STATE, &qia))
				printf("error %m\n");
			else
				printf("state %d\n", a.qp_state);
		} else if (!strncmp(line, "quit", 4)) {
			break;
		} else {
			printf("unknown\n");
		}
		fflush(stdout);
	}
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
