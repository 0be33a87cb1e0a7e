// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory sized by a caller's capabilities is charged to the caller's
 * memory cgroup: a CQ of 65535 entries (a 2 MiB ring) and an RC QP of
 * 16384 send WQEs (its SQ ring and the requester's copies of the WQEs)
 * each raise the memory.current of the cgroup this program runs in by
 * at least three quarters of their rings' size. Run it alone in its own
 * cgroup (v2, memory controller on).
 *
 *   accounting [DEVICE]        (default vroce0)
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"

#define CQE		65535
#define SQ_WR		16384
#define CQE_SIZE	40		/* struct vroce_cqe */
#define MIN_SEND_WQE	64		/* the smallest SQ stride */

static char memcg_file[512];

/* This process's cgroup v2 memory.current, or -1. */
static int find_memcg(void)
{
	char line[400];
	FILE *f = fopen("/proc/self/cgroup", "r");
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(memcg_file, sizeof(memcg_file),
			 "/sys/fs/cgroup%s/memory.current", line + 3);
		ret = 0;
	}
	fclose(f);
	return ret;
}

static long long memcg_bytes(void)
{
	FILE *f = fopen(memcg_file, "r");
	long long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static void check(const char *what, long long before, long long after,
		  long long want)
{
	tap_ok(before >= 0 && after - before >= want * 3 / 4,
	       "%s: memory.current %+lld bytes (want at least %lld)", what,
	       after - before, want * 3 / 4);
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "vroce0";
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SQ_WR, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *ctx;
	struct ibv_cq *cq, *small;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	long long a, b;

	ctx = open_by_name(dev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	small = ctx ? ibv_create_cq(ctx, 1, NULL, NULL, 0) : NULL;
	if (!tap_ok(!find_memcg() && memcg_bytes() > 0 && pd && small,
		    "%s opened; %s", dev, memcg_file))
		return tap_done();

	a = memcg_bytes();
	cq = ibv_create_cq(ctx, CQE, NULL, NULL, 0);
	b = memcg_bytes();
	if (tap_ok(cq != NULL, "CQ of %d entries", CQE))
		check("CQ", a, b, (long long)CQE * CQE_SIZE);

	ia.send_cq = small;
	ia.recv_cq = small;
	a = memcg_bytes();
	qp = ibv_create_qp(pd, &ia);
	b = memcg_bytes();
	if (tap_ok(qp != NULL, "RC QP of %d send WRs", SQ_WR))
		check("QP", a, b, 2LL * SQ_WR * MIN_SEND_WQE);

	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	ibv_destroy_cq(small);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
