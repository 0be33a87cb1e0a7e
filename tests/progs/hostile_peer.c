// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * hostile_peer: the victim of tests/vm/94-hostile-peer.sh, whose peer is a
 * script on the other VM that crafts packets (tests/vm/_hostile.py).
 *
 *   hostile_peer -d DEV -g GIDIDX -a PEER_IPV4 -q PEER_QPN -p PEER_PSN
 *
 * Registers MR1 (64 KiB, remote write, read and atomic, byte i holding
 * (i * 7 + 3) & 0xff) in one PD and MR2 (4 KiB, the same rights and
 * pattern) in another, and makes these QPs, all in MR1's PD, connected
 * QPs towards PEER_IPV4 (its IPv4-mapped GID), expecting PSN PEER_PSN:
 *   live     RC in RTS, peer QP PEER_QPN, 8 receives posted
 *   sac      SAC_N RC QPs in RTS, peer QPs PEER_QPN + 1 + i, to be
 *            sacrificed: each is sent one invalid request
 *   rtr      RC in RTR, peer QP PEER_QPN + SAC_N + 1
 *   init     RC in INIT
 *   reset    RC in RESET
 *   uc       UC in RTS, peer QP PEER_QPN + SAC_N + 2, remote write,
 *            8 receives
 *   ud       UD in RTS, Q_Key 0x11111111, 8 receives
 *   dead     an RC QP destroyed again: its number names no QP
 *   xtgt     an XRC target QP in RTR, peer QP PEER_QPN + SAC_N + 3, of
 *            an XRC domain with the XRC SRQ xsrq (in MR1's PD, 8
 *            receives); xsrq2 is an XRC SRQ of another domain (2
 *            receives); both complete on the one CQ
 * and prints one line: "live Q sac Q,Q,... rtr Q init Q reset Q uc Q ud Q
 * dead Q va V rkey R va2 V2 rkey2 R2 xtgt Q xsrq N xsrq2 N". Then it
 * answers commands from
 * standard input, one line each:
 *   states   "states live=S sac=S,S,... rtr=S init=S reset=S uc=S ud=S
 *            xtgt=S" (enum ibv_qp_state values)
 *   mr       "mr low=ok|bad mr2=ok|bad": whether the first 32 KiB of MR1
 *            and all of MR2 still hold their pattern (the crafted
 *            traffic that must work writes only MR1's upper half)
 *   reads N  posts N RDMA READs of 1 KiB on the live QP (max_rd_atomic
 *            1, so one at a time may be outstanding) from VA V_PEER (any;
 *            the peer is the crafter) and waits up to 20 s for their
 *            completions: "reads done=K ok=J" (J with IBV_WC_SUCCESS
 *            and the bytes (i * 11 + 1) & 0xff)
 *   recv     every receive completion within a second of quiet, one line
 *            each, "recv qp=Q status=S len=L fnv=H" (H: FNV-1a of the
 *            bytes received, after the GRH for UD), then "end"
 *   quit     exits
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "open_dev.h"
#include "xchg.h"

#define MR1_LEN		(64 << 10)
#define MR2_LEN		(4 << 10)
#define SAC_N		10
#define RECVS		8
#define SLOT		2048
#define GRH_LEN		40
#define QKEY		0x11111111u

struct victim {
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *cq;
	struct ibv_mr *mr, *mr2, *rmr;
	unsigned char *buf, *buf2, *rbuf;
	struct ibv_qp *live, *sac[SAC_N], *rtr, *init, *reset, *uc, *ud;
	struct ibv_xrcd *xrcd[2];
	struct ibv_srq *xsrq[2];
	struct ibv_qp *xtgt;
	uint32_t dead;
	int gid;
	union ibv_gid dgid;
	uint32_t dqpn, psn;
};

static void pattern(unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (i * 7 + 3) & 0xff;
}

static int pattern_ok(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != ((i * 7 + 3) & 0xff))
			return 0;
	return 1;
}

static uint32_t fnv1a(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--) {
		h ^= *p++;
		h *= 16777619u;
	}
	return h;
}

static struct ibv_qp *new_qp(struct victim *v, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = v->cq, .recv_cq = v->cq, .qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(v->pd, &ia);
}

/* RESET -> INIT -> RTR (-> RTS if @rts) of an RC or UC QP. */
static int connect_qp(struct victim *v, struct ibv_qp *qp, uint32_t dqpn,
		      int rts)
{
	const struct rc_path p = {
		.dqpn = dqpn, .rq_psn = v->psn, .sq_psn = 1, .dgid = &v->dgid,
		.sgid_idx = v->gid, .dest_rd_atomic = 4, .rd_atomic = 1,
		.min_rnr_timer = 12, .rnr_retry = 7,
		/* 1 s: the crafter answers READs after a pause, not later */
		.timeout = 18,
	};

	if (rc_connect_rtr(qp, &p))
		return -1;
	return rts ? rc_to_rts(qp, &p) : 0;
}

/*
 * @n receive WQEs on @qp or @srq, slots @first... of the receive area.
 */
static int post_recvs_n(struct victim *v, struct ibv_qp *qp,
			struct ibv_srq *srq, int first, int n)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	int i;

	for (i = 0; i < n; i++) {
		sge.addr = (uintptr_t)(v->rbuf + (first + i) * SLOT);
		sge.length = SLOT;
		sge.lkey = v->rmr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = first + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (srq ? ibv_post_srq_recv(srq, &wr, &bad) :
			  ibv_post_recv(qp, &wr, &bad))
			return -1;
	}
	return 0;
}

/* RECVS receive WQEs on @qp, slots @first... of the receive area. */
static int post_recvs(struct victim *v, struct ibv_qp *qp, int first)
{
	return post_recvs_n(v, qp, NULL, first, RECVS);
}

/* XRC: two domains, an XRC SRQ in each, a target QP of the first. */
static int setup_xrc(struct victim *v)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = RECVS, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC, .pd = v->pd, .cq = v->cq,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	int i;

	for (i = 0; i < 2; i++) {
		v->xrcd[i] = ibv_open_xrcd(v->ctx, &xa);
		if (!v->xrcd[i])
			return -1;
		sa.xrcd = v->xrcd[i];
		v->xsrq[i] = ibv_create_srq_ex(v->ctx, &sa);
		if (!v->xsrq[i])
			return -1;
	}
	qa.xrcd = v->xrcd[0];
	v->xtgt = ibv_create_qp_ex(v->ctx, &qa);
	if (!v->xtgt || connect_qp(v, v->xtgt, v->dqpn + SAC_N + 3, 0))
		return -1;
	return post_recvs_n(v, NULL, v->xsrq[0], 3 * RECVS, RECVS) ||
	       post_recvs_n(v, NULL, v->xsrq[1], 3 * RECVS, 2);
}

static int setup(struct victim *v)
{
	int i, ok = 1, rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp *dead;

	v->pd = ibv_alloc_pd(v->ctx);
	v->pd2 = ibv_alloc_pd(v->ctx);
	v->cq = ibv_create_cq(v->ctx, 64, NULL, NULL, 0);
	v->buf = aligned_alloc(4096, MR1_LEN);
	v->buf2 = aligned_alloc(4096, MR2_LEN);
	v->rbuf = aligned_alloc(4096, 4 * RECVS * SLOT);
	if (!v->pd || !v->pd2 || !v->cq || !v->buf || !v->buf2 || !v->rbuf)
		return -1;
	pattern(v->buf, MR1_LEN);
	pattern(v->buf2, MR2_LEN);
	v->mr = ibv_reg_mr(v->pd, v->buf, MR1_LEN, rw);
	v->mr2 = ibv_reg_mr(v->pd2, v->buf2, MR2_LEN, rw);
	v->rmr = ibv_reg_mr(v->pd, v->rbuf, 4 * RECVS * SLOT,
			    IBV_ACCESS_LOCAL_WRITE);
	if (!v->mr || !v->mr2 || !v->rmr)
		return -1;
	v->live = new_qp(v, IBV_QPT_RC);
	for (i = 0; i < SAC_N; i++) {
		v->sac[i] = new_qp(v, IBV_QPT_RC);
		ok = ok && v->sac[i] &&
		     !connect_qp(v, v->sac[i], v->dqpn + 1 + i, 1);
	}
	v->rtr = new_qp(v, IBV_QPT_RC);
	v->init = new_qp(v, IBV_QPT_RC);
	v->reset = new_qp(v, IBV_QPT_RC);
	v->uc = new_qp(v, IBV_QPT_UC);
	v->ud = new_qp(v, IBV_QPT_UD);
	dead = new_qp(v, IBV_QPT_RC);
	if (!ok || !v->live || !v->rtr || !v->init || !v->reset || !v->uc ||
	    !v->ud || !dead)
		return -1;
	v->dead = dead->qp_num;
	if (ibv_destroy_qp(dead))
		return -1;
	if (connect_qp(v, v->live, v->dqpn, 1) ||
	    connect_qp(v, v->rtr, v->dqpn + SAC_N + 1, 0) ||
	    qp_to_init(v->init, IBV_ACCESS_REMOTE_WRITE) ||
	    connect_qp(v, v->uc, v->dqpn + SAC_N + 2, 1) ||
	    ud_qp_rts(v->ud, QKEY))
		return -1;
	return post_recvs(v, v->live, 0) || post_recvs(v, v->uc, RECVS) ||
	       post_recvs(v, v->ud, 2 * RECVS) || setup_xrc(v);
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

static void print_states(struct victim *v)
{
	int i;

	printf("states live=%d sac=", qp_state(v->live));
	for (i = 0; i < SAC_N; i++)
		printf("%s%d", i ? "," : "", qp_state(v->sac[i]));
	printf(" rtr=%d init=%d reset=%d uc=%d ud=%d xtgt=%d\n",
	       qp_state(v->rtr), qp_state(v->init), qp_state(v->reset),
	       qp_state(v->uc), qp_state(v->ud), qp_state(v->xtgt));
}

/* Every completion until a second passes without one. */
static void print_recvs(struct victim *v)
{
	long long quiet = xchg_now_ms() + 1000;
	struct ibv_wc wc;
	unsigned char *p;
	uint32_t len;

	while (xchg_now_ms() < quiet) {
		if (ibv_poll_cq(v->cq, 1, &wc) != 1) {
			xchg_sleep_ms(10);
			continue;
		}
		quiet = xchg_now_ms() + 1000;
		p = v->rbuf + (wc.wr_id % (4 * RECVS)) * SLOT;
		len = wc.byte_len > SLOT ? SLOT : wc.byte_len;
		if (wc.qp_num == v->ud->qp_num && len >= GRH_LEN) {
			p += GRH_LEN;
			len -= GRH_LEN;
		}
		printf("recv qp=%u status=%d len=%u fnv=%08x\n", wc.qp_num,
		       wc.status, wc.byte_len,
		       wc.status == IBV_WC_SUCCESS ? fnv1a(p, len) : 0);
	}
	printf("end\n");
}

/* N READs of 1 KiB into MR1's last KiBs; their completions. */
static void do_reads(struct victim *v, int n)
{
	long long end = xchg_now_ms() + 20000;
	struct ibv_send_wr wr, *bad;
	int i, j, done = 0, ok = 0;
	struct ibv_sge sge;
	struct ibv_wc wc;
	unsigned char *p;

	for (i = 0; i < n && i < 4; i++) {
		p = v->buf + MR1_LEN - (i + 1) * 1024;
		memset(p, 0, 1024);
		sge.addr = (uintptr_t)p;
		sge.length = 1024;
		sge.lkey = v->mr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 1000 + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = 0x10000;
		wr.wr.rdma.rkey = 0x1234;
		if (ibv_post_send(v->live, &wr, &bad))
			break;
	}
	n = i;
	while (done < n && xchg_now_ms() < end) {
		if (ibv_poll_cq(v->cq, 1, &wc) != 1) {
			xchg_sleep_ms(5);
			continue;
		}
		if (wc.wr_id < 1000)
			continue;
		done++;
		p = v->buf + MR1_LEN - (wc.wr_id - 1000 + 1) * 1024;
		for (j = 0; j < 1024 && p[j] == ((j * 11 + 1) & 0xff); j++)
			;
		ok += wc.status == IBV_WC_SUCCESS && j == 1024;
	}
	printf("reads done=%d ok=%d\n", done, ok);
}

int main(int argc, char **argv)
{
	struct victim v = { .gid = -1 };
	const char *dev = NULL, *peer = NULL;
	char line[64];
	uint32_t xn[2];
	int c, i;

	while ((c = getopt(argc, argv, "d:g:a:q:p:")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			v.gid = atoi(optarg);
			break;
		case 'a':
			peer = optarg;
			break;
		case 'q':
			v.dqpn = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			v.psn = strtoul(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (!dev || v.gid < 0 || !peer) {
		fprintf(stderr, "usage: hostile_peer -d DEV -g GID -a PEER -q QPN -p PSN\n");
		return 2;
	}
	v.dgid.raw[10] = 0xff;
	v.dgid.raw[11] = 0xff;
	if (inet_pton(AF_INET, peer, &v.dgid.raw[12]) != 1) {
		fprintf(stderr, "hostile_peer: bad address %s\n", peer);
		return 2;
	}
	v.ctx = open_by_name(dev);
	if (!v.ctx || setup(&v)) {
		perror("hostile_peer: setup");
		return 1;
	}
	printf("live %u sac ", v.live->qp_num);
	for (i = 0; i < SAC_N; i++)
		printf("%s%u", i ? "," : "", v.sac[i]->qp_num);
	printf(" rtr %u init %u reset %u uc %u ud %u dead %u va %llu rkey %u va2 %llu rkey2 %u",
	       v.rtr->qp_num, v.init->qp_num, v.reset->qp_num, v.uc->qp_num,
	       v.ud->qp_num, v.dead, (unsigned long long)(uintptr_t)v.buf,
	       v.mr->rkey, (unsigned long long)(uintptr_t)v.buf2, v.mr2->rkey);
	if (ibv_get_srq_num(v.xsrq[0], &xn[0]) ||
	    ibv_get_srq_num(v.xsrq[1], &xn[1]))
		return 1;
	printf(" xtgt %u xsrq %u xsrq2 %u\n", v.xtgt->qp_num, xn[0], xn[1]);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "states", 6))
			print_states(&v);
		else if (!strncmp(line, "mr", 2))
			printf("mr low=%s mr2=%s\n",
			       pattern_ok(v.buf, MR1_LEN / 2) ? "ok" : "bad",
			       pattern_ok(v.buf2, MR2_LEN) ? "ok" : "bad");
		else if (!strncmp(line, "reads ", 6))
			do_reads(&v, atoi(line + 6));
		else if (!strncmp(line, "recv", 4))
			print_recvs(&v);
		else if (!strncmp(line, "quit", 4))
			break;
		else
			printf("unknown\n");
		fflush(stdout);
	}
	ibv_destroy_qp(v.live);
	for (i = 0; i < SAC_N; i++)
		ibv_destroy_qp(v.sac[i]);
	ibv_destroy_qp(v.rtr);
	ibv_destroy_qp(v.init);
	ibv_destroy_qp(v.reset);
	ibv_destroy_qp(v.uc);
	ibv_destroy_qp(v.ud);
	ibv_destroy_qp(v.xtgt);
	for (i = 0; i < 2; i++) {
		ibv_destroy_srq(v.xsrq[i]);
		ibv_close_xrcd(v.xrcd[i]);
	}
	ibv_dereg_mr(v.mr);
	ibv_dereg_mr(v.mr2);
	ibv_dereg_mr(v.rmr);
	ibv_destroy_cq(v.cq);
	ibv_dealloc_pd(v.pd);
	ibv_dealloc_pd(v.pd2);
	ibv_close_device(v.ctx);
	return 0;
}
