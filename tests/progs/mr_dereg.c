// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The victim of a peer that starts an RDMA WRITE and never finishes it
 * (issue 10 R3): ibv_dereg_mr() of the target MR must return, soon,
 * though the peer's WRITE holds the MR.
 *
 * An RC QP of DEVICE over its IPv4 RoCE v2 GID, connected to QP 0x123 at
 * PEER (an IPv4 address; nothing there needs to be RDMA), receive PSN
 * 0x1000, and an MR of 64 KiB with remote write, filled with 0x5a. It
 * prints the QP number, the PSN, the rkey and the address for a packet
 * crafter (tests/vm/_roce_write.py) as
 *
 *   target qpn=N psn=N rkey=N va=N
 *
 * then "ready", and waits for the file GODIR/1: by then a WRITE First of
 * 1024 bytes (0x00, 0x01, ... mod 251) has come. It checks those bytes,
 * deregisters the MR and says how long that took, then waits for GODIR/2 (by
 * then the peer sent the WRITE Middle) and checks that the Middle's bytes
 * did not land. Last, the local side: a second QP to the same peer SENDs
 * 8 KiB from a second MR, which the peer never acknowledges, and that MR
 * is deregistered meanwhile: dereg returns at once, and the SEND, which
 * cannot be resent from it, completes with IBV_WC_LOC_PROT_ERR.
 *
 * Last, a receive: a third QP, towards QP 0x125 at PEER, has a receive
 * WQE of 4 KiB posted in a third MR, and says
 *
 *   recv qpn=N
 *
 * By GODIR/3 the peer sent it a SEND First of 1024 bytes; the MR is
 * deregistered (at once, though the SEND holds it), and by GODIR/4 the
 * SEND Last came: the receive completes with IBV_WC_LOC_PROT_ERR, not
 * success, and the Last's bytes did not land.
 *
 * Then a READ: a fourth QP, towards QP 0x126 at PEER, with an MR of
 * 4 MiB with remote read, says
 *
 *   read qpn=N rkey=N va=N
 *
 * and by GODIR/5 the peer's READ of the 4 MiB is being answered (slowly:
 * the wire is rate-limited): the MR is deregistered. By GODIR/6 the peer
 * got a remote access error NAK instead of the rest of the responses, and
 * the QP must be in the error state. Then it destroys everything and
 * exits.
 *
 *   mr_dereg DEVICE PEER GODIR
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"
#include "rc_connect.h"

#define BUF_SIZE	(64 * 1024)
#define FIRST		1024		/* the WRITE First's payload */
#define FILL		0x5a
#define RECV_ID		77
#define READ_SIZE	(4 << 20)

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Waits up to 60 s for the file @dir/@n to exist. */
static int wait_file(const char *dir, int n)
{
	long long end = now_ms() + 60000;
	char path[4096];

	snprintf(path, sizeof(path), "%s/%d", dir, n);
	while (access(path, F_OK)) {
		if (now_ms() > end)
			return -1;
		usleep(100000);
	}
	return 0;
}

/*
 * Deregisters @mr, prints "@tag returned R after N ms" for the script,
 * and checks that it returned 0 within 5 s.
 */
static void dereg_quickly(struct ibv_mr *mr, const char *tag,
			  const char *what)
{
	long long t0 = now_ms(), ms;
	int ret = ibv_dereg_mr(mr);

	ms = now_ms() - t0;
	printf("%s returned %d after %lld ms\n", tag, ret, ms);
	fflush(stdout);
	tap_ok(ret == 0 && ms < 5000, "%s returns %d in %lld ms (< 5000)",
	       what, ret, ms);
}

/* Whether @p[@from..@to) holds the peer's payload (0, 1, ... mod 251). */
static int has_payload(const uint8_t *p, int from, int to)
{
	int ok = 1;

	for (; from < to; from++)
		ok &= p[from] == (uint8_t)(from % 251);
	return ok;
}

/* Whether @p[@from..@to) still holds FILL. */
static int untouched(const uint8_t *p, int from, int to)
{
	int ok = 1;

	for (; from < to; from++)
		ok &= p[from] == FILL;
	return ok;
}

/* Polls @cq for up to 10 s: 1 with a completion in @wc, else 0 or < 0. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	long long t0 = now_ms();
	int ret;

	do {
		ret = ibv_poll_cq(cq, 1, wc);
	} while (ret == 0 && now_ms() - t0 < 10000);
	return ret;
}

int main(int argc, char **argv)
{
	union ibv_gid dgid = { .raw = { [10] = 0xff, [11] = 0xff } };
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rc_path path = {
		.dqpn = 0x123, .rq_psn = 0x1000, .sq_psn = 0x2000,
		.dgid = &dgid, .dest_rd_atomic = 1, .rd_atomic = 1,
		.min_rnr_timer = 1, .timeout = 14, .rnr_retry = 7,
	};
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp, *qp2, *qp3, *qp4;
	struct ibv_mr *mr, *mr2, *mr3, *mr4;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_sge sge, rsge;
	struct ibv_recv_wr rwr = {
		.wr_id = RECV_ID, .sg_list = &rsge, .num_sge = 1,
	}, *rbad;
	struct ibv_send_wr wr = {
		.wr_id = 42, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	long long t0, ms;
	uint8_t *buf, *rbuf, *big;
	int ret;

	if (argc != 4) {
		tap_ok(0, "usage: mr_dereg DEVICE PEER GODIR");
		return tap_done();
	}
	ctx = open_by_name(argv[1]);
	if (!tap_ok(ctx != NULL, "open %s", argv[1]))
		return tap_done();
	path.sgid_idx = roce_v2_ipv4_gid(ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	buf = aligned_alloc(4096, BUF_SIZE);
	rbuf = aligned_alloc(4096, 4096);
	big = aligned_alloc(4096, READ_SIZE);
	if (!tap_ok(path.sgid_idx >= 0 && pd && cq && buf && rbuf && big &&
		    inet_pton(AF_INET, argv[2], &dgid.raw[12]) == 1,
		    "GID %d, a PD, a CQ, a buffer, peer %s", path.sgid_idx,
		    argv[2]))
		return tap_done();
	memset(buf, FILL, BUF_SIZE);
	memset(rbuf, FILL, 4096);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qp = ibv_create_qp(pd, &ia);
	qp2 = ibv_create_qp(pd, &ia);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	mr2 = ibv_reg_mr(pd, buf + BUF_SIZE / 2, BUF_SIZE / 2, 0);
	if (!tap_ok(qp && qp2 && mr && mr2 && !rc_connect(qp, &path),
		    "an RC QP in RTS towards QP 0x%x at %s, an MR with remote write",
		    path.dqpn, argv[2]))
		return tap_done();
	path.dqpn++;
	if (!tap_ok(!rc_connect(qp2, &path),
		    "a second RC QP towards QP 0x%x", path.dqpn))
		return tap_done();
	path.dqpn++;
	qp3 = ibv_create_qp(pd, &ia);
	mr3 = ibv_reg_mr(pd, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	rsge.addr = (uintptr_t)rbuf;
	rsge.length = 4096;
	rsge.lkey = mr3 ? mr3->lkey : 0;
	if (!tap_ok(qp3 && mr3 && !rc_connect(qp3, &path) &&
		    !ibv_post_recv(qp3, &rwr, &rbad),
		    "a third RC QP towards QP 0x%x, a receive of 4 KiB posted",
		    path.dqpn))
		return tap_done();
	path.dqpn++;
	qp4 = ibv_create_qp(pd, &ia);
	memset(big, FILL, READ_SIZE);
	mr4 = ibv_reg_mr(pd, big, READ_SIZE, IBV_ACCESS_REMOTE_READ);
	if (!tap_ok(qp4 && mr4 && !rc_connect(qp4, &path),
		    "a fourth RC QP towards QP 0x%x, an MR of 4 MiB with remote read",
		    path.dqpn))
		return tap_done();
	printf("target qpn=%u psn=%u rkey=%u va=%llu\nrecv qpn=%u\n",
	       qp->qp_num, path.rq_psn, mr->rkey,
	       (unsigned long long)(uintptr_t)buf, qp3->qp_num);
	printf("read qpn=%u rkey=%u va=%llu\nready\n", qp4->qp_num, mr4->rkey,
	       (unsigned long long)(uintptr_t)big);
	fflush(stdout);

	if (!tap_ok(!wait_file(argv[3], 1), "the peer sent its WRITE First"))
		return tap_done();
	tap_ok(has_payload(buf, 0, FIRST), "the WRITE First's %d bytes landed",
	       FIRST);

	dereg_quickly(mr, "dereg", "ibv_dereg_mr with the WRITE in progress");

	if (!tap_ok(!wait_file(argv[3], 2), "the peer sent its WRITE Middle"))
		return tap_done();
	tap_ok(untouched(buf, FIRST, BUF_SIZE),
	       "nothing after the WRITE First landed in the buffer");

	sge.addr = (uintptr_t)(buf + BUF_SIZE / 2);
	sge.length = 8192;
	sge.lkey = mr2->lkey;
	ret = ibv_post_send(qp2, &wr, &bad);
	usleep(300000);
	t0 = now_ms();
	ret |= ibv_dereg_mr(mr2);
	ms = now_ms() - t0;
	tap_ok(ret == 0 && ms < 5000,
	       "a SEND from a second MR, never acknowledged; its MR's dereg returns %d in %lld ms",
	       ret, ms);
	t0 = now_ms();
	ret = poll_one(cq, &wc);
	tap_ok(ret == 1 && wc.wr_id == 42 && wc.status == IBV_WC_LOC_PROT_ERR,
	       "the SEND completes with IBV_WC_LOC_PROT_ERR (%d): got %d, status %d after %lld ms",
	       IBV_WC_LOC_PROT_ERR, ret, ret == 1 ? (int)wc.status : -1,
	       now_ms() - t0);
	printf("recv phase\n");
	fflush(stdout);

	if (!tap_ok(!wait_file(argv[3], 3), "the peer sent its SEND First"))
		return tap_done();
	tap_ok(has_payload(rbuf, 0, FIRST), "the SEND First's %d bytes landed",
	       FIRST);
	dereg_quickly(mr3, "dereg3",
		      "ibv_dereg_mr of the receive's MR, the SEND in progress,");
	if (!tap_ok(!wait_file(argv[3], 4), "the peer sent its SEND Last"))
		return tap_done();
	ret = poll_one(cq, &wc);
	tap_ok(ret == 1 && wc.wr_id == RECV_ID &&
	       wc.status == IBV_WC_LOC_PROT_ERR,
	       "the receive completes with IBV_WC_LOC_PROT_ERR (%d): got %d, wr_id %llu, status %d",
	       IBV_WC_LOC_PROT_ERR, ret,
	       ret == 1 ? (unsigned long long)wc.wr_id : 0ULL,
	       ret == 1 ? (int)wc.status : -1);
	tap_ok(untouched(rbuf, FIRST, 4096),
	       "nothing of the SEND Last landed in the buffer");
	printf("read phase\n");
	fflush(stdout);

	if (!tap_ok(!wait_file(argv[3], 5), "the peer's READ is being answered"))
		return tap_done();
	dereg_quickly(mr4, "dereg4",
		      "ibv_dereg_mr of the MR a READ is answered from");
	if (!tap_ok(!wait_file(argv[3], 6), "the peer saw the READ end"))
		return tap_done();
	ret = ibv_query_qp(qp4, &attr, IBV_QP_STATE, &init);
	tap_ok(ret == 0 && attr.qp_state == IBV_QPS_ERR,
	       "the QP that answered the READ is in the error state (%d): %d, state %d",
	       IBV_QPS_ERR, ret, ret ? -1 : (int)attr.qp_state);
	ret = ibv_destroy_qp(qp);
	ret |= ibv_destroy_qp(qp2);
	ret |= ibv_destroy_qp(qp3);
	ret |= ibv_destroy_qp(qp4);
	ret |= ibv_destroy_cq(cq);
	ret |= ibv_dealloc_pd(pd);
	ret |= ibv_close_device(ctx);
	tap_ok(ret == 0, "QP, CQ, PD and context go");
	free(buf);
	free(rbuf);
	free(big);
	return tap_done();
}
