// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * read_big: one big RDMA READ between two nodes, its data checked.
 *
 *   read_big -d DEV -g GIDIDX -s [-p PORT] [-m MIB] [-w FILE] server
 *   read_big -d DEV -g GIDIDX [-p PORT] [-m MIB] PEER_IP     client
 *
 * The server (the responder) registers MIB MiB (default 1024) with remote
 * read access, fills it with a pattern (each 64-bit word is its own index
 * mixed with a seed), connects a fresh RC QP to the client's and waits
 * until the client says it is done. The client registers as much with
 * local write, posts a single RDMA READ of all of it, waits for its
 * completion (10 minutes at most) and checks every word. The client
 * prints TAP; both print the time the READ took. With -w the server,
 * once done, keeps its QP until FILE exists (60 s at most), for the test
 * to read the QP's details. The path MTU is 1024 and
 * the QP timeout 20 (about 4 s), so a slow emulated wire does not time
 * out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "xchg.h"
#include "open_dev.h"
#include "rc_connect.h"

#define SEED	0x9e3779b97f4a7c15ULL
#define WAIT_MS	600000

static uint64_t word(uint64_t i)
{
	return (i * SEED) ^ (i >> 7) ^ 0x5a5a5a5a00000000ULL;
}

struct node {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint64_t *buf;
	size_t len;
	union ibv_gid gid;
	int gid_idx;
	uint32_t psn;
};

static int setup(struct node *n, const char *dev, size_t len, int access)
{
	struct ibv_qp_init_attr ia;

	n->ctx = open_by_name(dev);
	if (!n->ctx)
		return -1;
	if (ibv_query_gid(n->ctx, 1, n->gid_idx, &n->gid))
		return -1;
	n->pd = ibv_alloc_pd(n->ctx);
	n->cq = n->pd ? ibv_create_cq(n->ctx, 4, NULL, NULL, 0) : NULL;
	if (!n->cq)
		return -1;
	n->buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (n->buf == MAP_FAILED)
		return -1;
	n->len = len;
	n->mr = ibv_reg_mr(n->pd, n->buf, len, access);
	if (!n->mr)
		return -1;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = n->cq;
	ia.recv_cq = n->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	n->qp = ibv_create_qp(n->pd, &ia);
	if (!n->qp)
		return -1;
	n->psn = lrand48() & 0xffffff;
	return 0;
}

static int connect_qp(struct node *n, const struct xchg_msg *peer)
{
	union ibv_gid g;
	struct rc_path p = {
		.dqpn = peer->v[1], .rq_psn = peer->v[2], .sq_psn = n->psn,
		.dgid = &g, .sgid_idx = n->gid_idx, .dest_rd_atomic = 1,
		.rd_atomic = 1, .min_rnr_timer = 12, .timeout = 20,
		.rnr_retry = 7,
	};

	memcpy(g.raw, peer->gid, sizeof(g.raw));
	return rc_connect(n->qp, &p);
}

static void hello(struct node *n, struct xchg_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->v[1] = n->qp->qp_num;
	m->v[2] = n->psn;
	m->v[3] = (uintptr_t)n->buf;
	m->v[4] = n->mr->rkey;
	memcpy(m->gid, n->gid.raw, sizeof(m->gid));
}

/* Waits until @path exists, 60 s at most. */
static void hold_until(const char *path)
{
	int i;

	for (i = 0; i < 600 && access(path, F_OK); i++)
		usleep(100000);
}

static int server(struct node *n, const char *dev, size_t len, int port,
		  const char *hold)
{
	struct xchg_msg m;
	size_t i;
	int fd;

	if (setup(n, dev, len, IBV_ACCESS_LOCAL_WRITE |
		  IBV_ACCESS_REMOTE_READ)) {
		perror("read_big: setup");
		return 1;
	}
	for (i = 0; i < len / 8; i++)
		n->buf[i] = word(i);
	fd = xchg_serve(port, 120000);
	if (fd < 0 || xchg_recv(fd, &m, 60000))
		return 1;
	if (connect_qp(n, &m)) {
		perror("read_big: connect");
		return 1;
	}
	hello(n, &m);
	if (xchg_send(fd, &m) || xchg_recv(fd, &m, WAIT_MS + 60000))
		return 1;
	printf("done: client says %llu\n", (unsigned long long)m.v[0]);
	fflush(stdout);
	if (hold)
		hold_until(hold);
	close(fd);
	return m.v[0] ? 1 : 0;
}

static int client(struct node *n, const char *dev, size_t len, int port,
		  const char *peer)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	struct xchg_msg m;
	long long t0, end, ms;
	size_t i, bad_at = 0, nbad = 0;
	int fd, got = 0;

	if (setup(n, dev, len, IBV_ACCESS_LOCAL_WRITE)) {
		perror("read_big: setup");
		return 1;
	}
	memset(n->buf, 0, len);
	fd = xchg_connect(peer, port, 15000);
	if (fd < 0)
		return 1;
	hello(n, &m);
	if (xchg_send(fd, &m) || xchg_recv(fd, &m, 60000))
		return 1;
	tap_ok(connect_qp(n, &m) == 0, "RC QP connected");
	memset(&sge, 0, sizeof(sge));
	sge.addr = (uintptr_t)n->buf;
	sge.length = len;
	sge.lkey = n->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 42;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = m.v[3];
	wr.wr.rdma.rkey = m.v[4];
	t0 = xchg_now_ms();
	tap_ok(ibv_post_send(n->qp, &wr, &bad) == 0, "READ of %zu MiB posted",
	       len >> 20);
	end = t0 + WAIT_MS;
	while (xchg_now_ms() < end) {
		got = ibv_poll_cq(n->cq, 1, &wc);
		if (got)
			break;
		usleep(1000);
	}
	ms = xchg_now_ms() - t0;
	tap_ok(got == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 42,
	       "READ completed: %s after %lld ms (%.1f MB/s)",
	       got == 1 ? ibv_wc_status_str(wc.status) : "nothing", ms,
	       ms ? (double)len / 1000.0 / ms : 0.0);
	for (i = 0; i < len / 8; i++) {
		if (n->buf[i] != word(i)) {
			if (!nbad++)
				bad_at = i * 8;
		}
	}
	tap_ok(nbad == 0, "every byte read is right (%zu bad words, first at %zu)",
	       nbad, bad_at);
	m.v[0] = nbad || got != 1;
	xchg_send(fd, &m);
	close(fd);
	return tap_done();
}

int main(int argc, char **argv)
{
	struct node n = { .gid_idx = -1 };
	const char *dev = NULL;
	size_t mib = 1024;
	int port = 18700, c;
	const char *hold = NULL;
	bool srv = false;

	while ((c = getopt(argc, argv, "d:g:sp:m:w:")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			n.gid_idx = atoi(optarg);
			break;
		case 's':
			srv = true;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'm':
			mib = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			hold = optarg;
			break;
		default:
			return 2;
		}
	}
	if (!dev || n.gid_idx < 0 || !mib || (!srv && optind >= argc)) {
		fprintf(stderr, "usage: read_big -d DEV -g GID [-s | PEER]\n");
		return 2;
	}
	srand48(getpid() ^ xchg_now_ms());
	if (srv)
		return server(&n, dev, mib << 20, port, hold);
	return client(&n, dev, mib << 20, port, argv[optind]);
}
