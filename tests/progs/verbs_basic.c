// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Opens a vroce device through the stock libibverbs and checks the verbs
 * of the keystone issue: query_device(_ex), query_port, alloc/dealloc PD;
 * that device memory, which vroce does not implement, fails with
 * EOPNOTSUPP; and that an XRC domain and a thread domain open and close.
 *
 *   verbs_basic [DEVICE]        (default vroce0)
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"

static void check_queries(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex ax;
	struct ibv_port_attr pa;

	int ret;

	memset(&ax, 0, sizeof(ax));
	ret = ibv_query_device_ex(ctx, NULL, &ax);
	tap_ok(!ret && ax.orig_attr.max_pd > 0 && ax.orig_attr.max_qp > 0 &&
	       ax.orig_attr.phys_port_cnt == 1,
	       "query_device_ex: max_pd %d max_qp %d ports %d",
	       ax.orig_attr.max_pd, ax.orig_attr.max_qp,
	       ax.orig_attr.phys_port_cnt);
	tap_ok(ax.orig_attr.node_guid != 0, "node_guid is set");
	memset(&pa, 0, sizeof(pa));
	ret = ibv_query_port(ctx, 1, &pa);
	tap_ok(!ret && pa.link_layer == IBV_LINK_LAYER_ETHERNET &&
	       pa.state == IBV_PORT_ACTIVE && pa.active_mtu >= IBV_MTU_256,
	       "query_port 1: link layer Ethernet, state %s, mtu %d",
	       ibv_port_state_str(pa.state), 128 << pa.active_mtu);
	ret = ibv_query_port(ctx, 2, &pa);
	tap_ok(ret != 0, "query_port 2 fails (%d)", ret);
}

static void check_pds(struct ibv_context *ctx)
{
	struct ibv_pd *pd[64];
	int i, n = 0;

	for (i = 0; i < 64; i++) {
		pd[i] = ibv_alloc_pd(ctx);
		if (pd[i])
			n++;
	}
	tap_ok(n == 64, "alloc 64 PDs (%d)", n);
	for (i = 0, n = 0; i < 64; i++)
		if (pd[i] && !ibv_dealloc_pd(pd[i]))
			n++;
	tap_ok(n == 64, "dealloc 64 PDs (%d)", n);
}

static void check_unsupported(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_alloc_dm_attr dma = { .length = 4096 };
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .pd = pd };
	void *obj;

	if (!tap_ok(pd != NULL, "alloc a PD for the unsupported checks"))
		return;
	errno = 0;
	obj = ibv_alloc_dm(ctx, &dma);
	tap_ok(obj && !ibv_free_dm(obj),
	       "alloc_dm and free_dm: device memory (errno %d)", errno);
	errno = 0;
	obj = ibv_create_wq(ctx, &wa);
	tap_ok(!obj && errno == EOPNOTSUPP, "create_wq: EOPNOTSUPP (errno %d)",
	       errno);
	errno = 0;
	obj = ibv_open_xrcd(ctx, &xa);
	tap_ok(obj && !ibv_close_xrcd(obj),
	       "open_xrcd and close_xrcd: an XRC domain of no file (errno %d)",
	       errno);
	errno = 0;
	obj = ibv_alloc_td(ctx, &ta);
	tap_ok(obj && !ibv_dealloc_td(obj),
	       "alloc_td and dealloc_td: a thread domain (errno %d)", errno);
	tap_ok(!ibv_dealloc_pd(pd), "dealloc the PD");
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "vroce0";
	struct ibv_context *ctx;

	ctx = open_by_name(name);
	if (!tap_ok(ctx != NULL, "open %s", name))
		return tap_done();
	check_queries(ctx);
	check_pds(ctx);
	check_unsupported(ctx);
	tap_ok(!ibv_close_device(ctx), "close %s", name);
	return tap_done();
}
