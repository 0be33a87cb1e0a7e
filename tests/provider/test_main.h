/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * The start and the end every provider test program shares: the fake
 * sysfs with vroce0, the device opened, a PD and a CQ, each a TAP line;
 * then everything closed again and checked.  Include after tap.h and the
 * fake headers.
 */
#ifndef VROCE_TEST_MAIN_H
#define VROCE_TEST_MAIN_H

#include <stdio.h>

#include <infiniband/verbs.h>

/* What test_open() opened. */
struct test_env {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

/*
 * argv[1] is the provider to load; with @want_cq a CQ of 16 too.  0 when
 * all is there; otherwise test_close() cleans up.
 */
static inline int test_open(struct test_env *t, int argc, char **argv,
			    int want_cq)
{
	int num = 0;

	*t = (struct test_env){ 0 };
	if (argc != 2) {
		fprintf(stderr,
			"usage: %s <absolute path of libvroce-rdmav34.so>\n",
			argv[0]);
		return -1;
	}
	if (!tap_ok(fake_sysfs_setup(argv[1]) == 0, "fake sysfs with vroce0"))
		return -1;
	t->list = ibv_get_device_list(&num);
	if (!tap_ok(t->list && num == 1, "vroce0 is found"))
		return -1;
	t->ctx = ibv_open_device(t->list[0]);
	if (!tap_ok(t->ctx != NULL, "vroce0 opens"))
		return -1;
	t->pd = ibv_alloc_pd(t->ctx);
	if (want_cq)
		t->cq = ibv_create_cq(t->ctx, 16, NULL, NULL, 0);
	if (!tap_ok(t->pd && (t->cq || !want_cq), "a PD%s",
		    want_cq ? " and a CQ" : ""))
		return -1;
	return 0;
}

/*
 * After a test that got its env (@opened): frees the CQ and the PD,
 * closes the device and checks that nothing was left; always removes
 * the fake sysfs.  The TAP exit status.
 */
static inline int test_close(struct test_env *t, int opened)
{
	if (opened) {
		tap_ok((!t->cq || ibv_destroy_cq(t->cq) == 0) &&
		       ibv_dealloc_pd(t->pd) == 0, "the CQ and PD are freed");
		tap_ok(ibv_close_device(t->ctx) == 0 && fake.open_fds == 0,
		       "the device closes");
		tap_ok(fake_user_maps() == 0, "no ring is left mapped");
		tap_ok(fake.unexpected == 0,
		       "no command vroce does not implement");
		if (fake.unexpected)
			tap_diag("last unexpected command 0x%x",
				 fake.last_unexpected);
	}
	if (t->list)
		ibv_free_device_list(t->list);
	fake_sysfs_cleanup();
	return tap_done();
}

#endif /* VROCE_TEST_MAIN_H */
