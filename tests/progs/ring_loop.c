// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * post_recv and poll_cq in a loop, between two marker system calls
 * (getppid before, getpgrp after), for strace to count what happens in
 * between: nothing, if the fast path is really in user space.
 *
 *   ring_loop [DEVICE [N]]      (default vroce0, 1000)
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "open_dev.h"

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "vroce0";
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	struct ibv_context *ctx = open_by_name(name);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = n,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = pd && cq ? ibv_create_qp(pd, &ia) : NULL;
	static char buf[64];
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;
	int i, posted = 0, polled = 0;

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		fprintf(stderr, "ring_loop: setup failed\n");
		return 2;
	}
	getppid();
	for (i = 0; i < n; i++) {
		wr.wr_id = i;
		posted += !ibv_post_recv(qp, &wr, &bad);
		polled += ibv_poll_cq(cq, 1, &wc);
	}
	getpgrp();
	printf("posted %d, polled %d\n", posted, polled);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return posted == n && polled == 0 ? 0 : 1;
}
