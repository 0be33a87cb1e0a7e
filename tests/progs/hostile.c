// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A hostile process: it scribbles garbage over every ring and index it
 * has mapped from the uverbs device, then drives the kernel to read them
 * (flush on ERR, doorbell, resize, completions). It must only ever see
 * errors on its own objects; the kernel must not oops, and the next
 * process must find the device working (the VM test checks that).
 *
 *   hostile [DEVICE [ROUNDS]]      (default vroce0, 20)
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"

static unsigned int seed = 1;

static unsigned int rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

/* Every writable mapping of a uverbs device in this process. */
static int scribble(int round)
{
	char line[512], path[256];
	unsigned long lo, hi;
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char perm[8];
		unsigned char *p;
		unsigned long i;

		path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi,
			   perm, path) < 3)
			continue;
		if (!strstr(path, "uverbs") || perm[1] != 'w')
			continue;
		p = (unsigned char *)lo;
		if (round % 4 == 3) {
			/* Sane indices, garbage entries: make them consumed. */
			for (i = 192; i < hi - lo; i++)
				p[i] = rnd();
			*(volatile unsigned int *)p =
				*(volatile unsigned int *)(p + 64) + 3;
			n++;
			continue;
		}
		for (i = 0; i < hi - lo; i++) {
			/* Indices get the worst values more often. */
			if (round % 3 == 0 && i % 64 < 4)
				p[i] = 0xff;
			else if (round % 3 == 1 && i % 64 < 4)
				p[i] = i & 4 ? 0x80 : 0;
			else
				p[i] = rnd();
		}
		n++;
	}
	fclose(f);
	return n;
}

/* A UD QP in RTS with an AH to itself, for the send engine to chew on. */
static struct ibv_qp *ud_qp(struct ibv_context *ctx, struct ibv_pd *pd,
			    struct ibv_cq *cq, int gid, struct ibv_ah **ah)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { 8, 8, 1, 1, 0 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x1234 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = gid } };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_QKEY))
		return qp;
	a.qp_state = IBV_QPS_RTR;
	ibv_modify_qp(qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	ibv_query_gid(ctx, 1, gid, &aa.grh.dgid);
	*ah = ibv_create_ah(pd, &aa);
	return qp;
}

static int round_trip(struct ibv_context *ctx, struct ibv_pd *pd, int gid,
		      int round)
{
	static char buf[64];
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { 8, 8, 1, 1, 0 },
	};
	struct ibv_qp *qp = cq ? ibv_create_qp(pd, &ia) : NULL;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8 };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *brwr;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *bswr;
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_ah *ah = NULL;
	struct ibv_qp *ud = cq ? ud_qp(ctx, pd, cq, gid, &ah) : NULL;
	struct ibv_wc wc[16];
	int i;

	if (!qp || !ud || !ah || loopback_rc_rts(ctx, qp, gid))
		return -1;
	for (i = 0; i < 4; i++) {
		ibv_post_recv(qp, &rwr, &brwr);
		ibv_post_send(qp, &swr, &bswr);
		ibv_post_recv(ud, &rwr, &brwr);
	}
	if (scribble(round) <= 0)
		return -1;
	/* Whatever these return, they must return. */
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = ud->qp_num;
	swr.wr.ud.remote_qkey = 0x1234;
	ibv_post_send(ud, &swr, &bswr);
	ibv_post_send(ud, &swr, &bswr);
	swr.wr.ud.ah = NULL;
	ibv_modify_qp(qp, &err, IBV_QP_STATE);
	ibv_post_send(qp, &swr, &bswr);
	ibv_poll_cq(cq, 16, wc);
	ibv_resize_cq(cq, 16);
	ibv_req_notify_cq(cq, 0);
	ibv_destroy_qp(ud);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	return 0;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "vroce0";
	int rounds = argc > 2 ? atoi(argv[2]) : 20;
	struct ibv_context *ctx = open_by_name(name);
	struct ibv_pd *pd;
	int r, bad = 0;

	if (!tap_ok(ctx != NULL, "open %s", name))
		return tap_done();
	pd = ibv_alloc_pd(ctx);
	for (r = 0; r < rounds; r++)
		if (round_trip(ctx, pd, roce_v2_ipv4_gid(ctx), r))
			bad++;
	tap_ok(!bad, "%d rounds of garbage in every mapped ring (%d set-ups failed)",
	       rounds, bad);
	ibv_dealloc_pd(pd);
	tap_ok(!ibv_close_device(ctx), "close");
	return tap_done();
}
