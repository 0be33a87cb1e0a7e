// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * One process's PD and MR used by another: the first (the exporter)
 * opens the device, allocates a PD, registers a buffer filled with a
 * pattern and passes its command FD over a UNIX socket (SCM_RIGHTS,
 * which gives the receiver a descriptor of its own), with the PD's and
 * MR's handles. The second (the
 * importer, a child forked before the device was opened) imports the
 * device, the PD and the MR, checks the MR's keys and length, registers
 * a buffer of its own in the imported PD, and with a loopback RC QP of
 * that PD RDMA READs the exporter's buffer through the imported rkey and
 * RDMA WRITEs its own pattern into the exporter's second half. The
 * exporter checks those bytes.
 *
 *   import_share DEVICE
 *
 * TAP on stdout (the exporter prints the importer's results too).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "open_dev.h"

#define LEN	4096
#define HALF	(LEN / 2)

struct share {
	uint32_t pd_handle, mr_handle;
	uint32_t lkey, rkey;
	uint64_t addr, length;
};

/* The importer's verdicts, one bit each, in this order. */
static const char *const checks[] = {
	"ibv_import_device() on the received command FD",
	"ibv_import_pd() and ibv_import_mr(): the exporter's lkey, rkey and length, addr NULL",
	"ibv_import_mr() of a handle that does not exist fails",
	"a CQ, a loopback RC QP and an MR of the importer in the imported PD",
	"RDMA READ of the exporter's first half through the imported rkey: the pattern",
	"RDMA WRITE into the exporter's second half through the imported rkey completes",
};
#define NCHECKS (sizeof(checks) / sizeof(checks[0]))

static uint8_t pattern(size_t i, int second)
{
	return second ? (uint8_t)(0xc3 ^ (i * 13)) : (uint8_t)(i * 7 + 3);
}

static int send_fd(int sock, int fd, const struct share *sh)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = (void *)sh, .iov_len = sizeof(*sh) };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == (ssize_t)sizeof(*sh) ? 0 : -1;
}

static int recv_fd(int sock, struct share *sh)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = sh, .iov_len = sizeof(*sh) };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &m, 0) != (ssize_t)sizeof(*sh))
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * One work request, and its completion: its status (0: success), 0xfe if
 * it could not be posted, 0xff if no completion came within 10 s.
 */
static int rdma_op(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
		   struct ibv_mr *mr, void *local, uint64_t raddr,
		   uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = HALF, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct timespec t0, t;
	struct ibv_wc wc;
	int n;

	if (ibv_post_send(qp, &wr, &bad))
		return 0xfe;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			break;
	}
	if (n != 1)
		return 0xff;
	return wc.status;	/* IBV_WC_SUCCESS is 0 */
}

/* The importer; returns its verdicts as bits (1: passed). */
static unsigned int importer(int sock)
{
	const struct rc_path base = {
		.dest_rd_atomic = 1, .rd_atomic = 1, .min_rnr_timer = 1,
		.timeout = 14, .rnr_retry = 7,
	};
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_mr *imr, *lmr = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_context *ctx;
	struct rc_path p = base;
	union ibv_gid gid;
	unsigned int ok = 0;
	struct ibv_pd *pd;
	struct share sh;
	uint8_t *buf;
	int fd, g, st, bad = 0;
	size_t i;

	fd = recv_fd(sock, &sh);
	errno = 0;
	ctx = fd >= 0 ? ibv_import_device(fd) : NULL;
	if (!ctx)
		return (fd < 0 ? 255u : (unsigned int)errno & 255) << 24;
	ok |= 1 << 0;
	pd = ibv_import_pd(ctx, sh.pd_handle);
	imr = pd ? ibv_import_mr(pd, sh.mr_handle) : NULL;
	if (imr && imr->lkey == sh.lkey && imr->rkey == sh.rkey &&
	    imr->length == sh.length && !imr->addr && imr->pd == pd)
		ok |= 1 << 1;
	errno = 0;
	if (pd && !ibv_import_mr(pd, sh.mr_handle + 1000) && errno)
		ok |= 1 << 2;

	buf = aligned_alloc(4096, LEN);
	g = roce_v2_ipv4_gid(ctx);
	if (pd && buf && g >= 0 && !ibv_query_gid(ctx, 1, g, &gid)) {
		memset(buf, 0, LEN);
		lmr = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE);
		cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
		qa.send_cq = qa.recv_cq = cq;
		qp = cq ? ibv_create_qp(pd, &qa) : NULL;
		p.dgid = &gid;
		p.sgid_idx = g;
		p.dqpn = qp ? qp->qp_num : 0;
		if (lmr && qp && !rc_connect(qp, &p))
			ok |= 1 << 3;
	}
	st = (ok & (1 << 3)) && imr ?
	     rdma_op(qp, cq, IBV_WR_RDMA_READ, lmr, buf, sh.addr, imr->rkey) :
	     0xfd;
	if (!st) {
		for (i = 0; i < HALF; i++)
			bad += buf[i] != pattern(i, 0);
		if (!bad)
			ok |= 1 << 4;
	}
	ok |= (unsigned int)st << 16;
	for (i = 0; i < HALF; i++)
		buf[HALF + i] = pattern(i, 1);
	st = (ok & (1 << 3)) && imr ?
	     rdma_op(qp, cq, IBV_WR_RDMA_WRITE, lmr, buf + HALF,
		     sh.addr + HALF, imr->rkey) : 0xfd;
	if (!st)
		ok |= 1 << 5;
	else if (!(ok >> 16))
		ok |= (unsigned int)st << 16;

	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (lmr)
		ibv_dereg_mr(lmr);
	if (imr)
		ibv_unimport_mr(imr);
	if (pd)
		ibv_unimport_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return ok;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	unsigned int verdict = 0;
	struct share sh = {};
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	int sv[2], status, bad = 0;
	uint8_t *buf;
	size_t i;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		verdict = importer(sv[1]);
		_exit(write(sv[1], &verdict, sizeof(verdict)) ==
		      sizeof(verdict) ? 0 : 1);
	}
	close(sv[1]);

	ctx = open_by_name(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	buf = aligned_alloc(4096, LEN);
	if (!tap_ok(pd && buf, "the exporter opens %s and allocates a PD",
		    argv[1]))
		return tap_done();
	for (i = 0; i < LEN; i++)
		buf[i] = pattern(i, 0);
	mr = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!tap_ok(mr != NULL, "the exporter registers %d bytes", LEN))
		return tap_done();
	sh = (struct share){
		.pd_handle = pd->handle, .mr_handle = mr->handle,
		.lkey = mr->lkey, .rkey = mr->rkey,
		.addr = (uintptr_t)buf, .length = LEN,
	};
	/* The receiver gets a descriptor of its own (SCM_RIGHTS dups it). */
	if (!tap_ok(!send_fd(sv[0], ctx->cmd_fd, &sh),
		    "the command FD goes over the UNIX socket"))
		shutdown(sv[0], SHUT_RDWR);	/* the importer gives up */
	if (read(sv[0], &verdict, sizeof(verdict)) != sizeof(verdict))
		verdict = 0;
	waitpid(pid, &status, 0);
	if (verdict >> 24)
		tap_diag("ibv_import_device: %s (%u)",
			 verdict >> 24 == 255 ? "no FD received" :
			 strerror(verdict >> 24), verdict >> 24);
	else if ((verdict >> 16) & 0xff)
		tap_diag("the first RDMA operation that failed: %s (%u)",
			 ibv_wc_status_str((verdict >> 16) & 0xff),
			 (verdict >> 16) & 0xff);
	for (i = 0; i < NCHECKS; i++)
		tap_ok(verdict & (1u << i), "importer: %s", checks[i]);
	for (i = 0; i < HALF; i++)
		bad += buf[HALF + i] != pattern(i, 1);
	tap_ok(!bad, "the exporter finds the importer's bytes in its second half (%d wrong)",
	       bad);
	tap_ok(!ibv_dereg_mr(mr) && !ibv_dealloc_pd(pd) &&
	       !ibv_close_device(ctx),
	       "the exporter's MR and PD are still its own to free");
	free(buf);
	return tap_done();
}
