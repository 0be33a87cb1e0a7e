// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Helpers for VM tests that need a process holding a device open.
 *
 *   async_wait DEVICE EVENT... -- waits (10 s each) for the named async
 *       events in order and prints "event NAME"; EVENT is one of
 *       port_active, port_err, device_fatal, gid_change.
 *   async_wait --hold DEVICE GOFILE -- opens DEVICE, allocates a PD,
 *       and a CQ, a QP and an MR, prints "ready", waits for GOFILE to
 *       exist (60 s), then checks
 *       that the device was disassociated: DEVICE_FATAL is reported,
 *       new verbs fail cleanly and close still works. Prints TAP.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"

static const struct {
	const char *name;
	enum ibv_event_type type;
} events[] = {
	{ "port_active", IBV_EVENT_PORT_ACTIVE },
	{ "port_err", IBV_EVENT_PORT_ERR },
	{ "device_fatal", IBV_EVENT_DEVICE_FATAL },
	{ "gid_change", IBV_EVENT_GID_CHANGE },
};

static int event_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(events[i].name, name))
			return events[i].type;
	return -1;
}

/* Returns 1 when @want arrives within @ms, skipping other events. */
static int wait_event(struct ibv_context *ctx, int want, int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int type;

	for (;;) {
		if (poll(&pfd, 1, ms) <= 0)
			return 0;
		if (ibv_get_async_event(ctx, &ev))
			return 0;
		type = ev.event_type;
		ibv_ack_async_event(&ev);
		printf("# got async event %s\n", ibv_event_type_str(type));
		fflush(stdout);
		if (type == want)
			return 1;
	}
}

static int watch(int argc, char **argv)
{
	struct ibv_context *ctx = open_by_name(argv[1]);
	int i, type;

	if (!ctx) {
		fprintf(stderr, "async_wait: cannot open %s\n", argv[1]);
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	for (i = 2; i < argc; i++) {
		type = event_by_name(argv[i]);
		if (type < 0 || !wait_event(ctx, type, 10000)) {
			printf("missing event %s\n", argv[i]);
			return 1;
		}
		printf("event %s\n", argv[i]);
		fflush(stdout);
	}
	ibv_close_device(ctx);
	return 0;
}

static int hold(const char *name, const char *gofile)
{
	struct ibv_context *ctx = open_by_name(name);
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	static char buf[4096];
	struct ibv_port_attr pa;
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	int i;

	if (!tap_ok(ctx != NULL, "open %s", name))
		return tap_done();
	pd = ibv_alloc_pd(ctx);
	tap_ok(pd != NULL, "alloc a PD before removal");
	/* Objects of every tracked kind, for rdma resource show. */
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qp = pd && cq ? ibv_create_qp(pd, &ia) : NULL;
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) :
		  NULL;
	tap_ok(cq && qp && mr, "a CQ, a QP and an MR too");
	printf("ready\n");
	fflush(stdout);
	for (i = 0; i < 600 && access(gofile, F_OK); i++)
		usleep(100000);
	tap_ok(wait_event(ctx, IBV_EVENT_DEVICE_FATAL, 10000),
	       "DEVICE_FATAL reported after removal");
	errno = 0;
	pd2 = ibv_alloc_pd(ctx);
	tap_ok(!pd2 && errno, "alloc_pd after removal fails (errno %d)", errno);
	tap_ok(ibv_query_port(ctx, 1, &pa) != 0, "query_port after removal fails");
	if (mr)
		ibv_dereg_mr(mr);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	tap_ok(!ibv_close_device(ctx), "close after removal");
	return tap_done();
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--hold"))
		return hold(argv[2], argv[3]);
	if (argc >= 3)
		return watch(argc, argv);
	fprintf(stderr, "usage: async_wait DEVICE EVENT... | --hold DEVICE GOFILE\n");
	return 2;
}
