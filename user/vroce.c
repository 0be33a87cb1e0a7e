// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: registration, device and context.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "vroce.h"

static void vroce_free_context(struct ibv_context *ibctx);

/*
 * Verbs we implement.  Every op left NULL keeps libibverbs' default, which
 * fails with EOPNOTSUPP: the extended verbs other than ibv_create_cq_ex(),
 * ibv_create_qp_ex(), ibv_create_srq_ex(), those of XRC and those of
 * device memory (dm.c) but ibv_import_dm() (WQs, ...), flows, counters.
 * Multicast groups are the kernel's alone (its commands, with no data of
 * ours); thread and parent domains are ours alone (domain.c).  bind_mw
 * and post_srq_ops are set explicitly: their defaults leave errno or
 * *bad_op unset.
 */
static const struct verbs_context_ops vroce_ctx_ops = {
	.advise_mr = vroce_advise_mr,
	.alloc_dm = vroce_alloc_dm,
	.alloc_mw = vroce_alloc_mw,
	.alloc_parent_domain = vroce_alloc_parent_domain,
	.alloc_pd = vroce_alloc_pd,
	.alloc_td = vroce_alloc_td,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = vroce_bind_mw,
	.close_xrcd = vroce_close_xrcd,
	.create_ah = vroce_create_ah,
	.create_cq = vroce_create_cq,
	.create_cq_ex = vroce_create_cq_ex,
	.create_qp = vroce_create_qp,
	.create_qp_ex = vroce_create_qp_ex,
	.create_srq = vroce_create_srq,
	.create_srq_ex = vroce_create_srq_ex,
	.dealloc_mw = vroce_dealloc_mw,
	.dealloc_pd = vroce_dealloc_pd,
	.dealloc_td = vroce_dealloc_td,
	.dereg_mr = vroce_dereg_mr,
	.destroy_ah = vroce_destroy_ah,
	.destroy_cq = vroce_destroy_cq,
	.destroy_qp = vroce_destroy_qp,
	.destroy_srq = vroce_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = vroce_free_context,
	.free_dm = vroce_free_dm,
	.get_srq_num = vroce_get_srq_num,
	.import_mr = vroce_import_mr,
	.import_pd = vroce_import_pd,
	.modify_qp = vroce_modify_qp,
	.modify_srq = vroce_modify_srq,
	.open_qp = vroce_open_qp,
	.open_xrcd = vroce_open_xrcd,
	.poll_cq = vroce_poll_cq,
	.post_recv = vroce_post_recv,
	.post_send = vroce_post_send,
	.post_srq_ops = vroce_post_srq_ops,
	.post_srq_recv = vroce_post_srq_recv,
	.query_device_ex = vroce_query_device_ex,
	.query_port = vroce_query_port,
	.query_qp = vroce_query_qp,
	.query_rt_values = vroce_query_rt_values,
	.query_srq = vroce_query_srq,
	.reg_dm_mr = vroce_reg_dm_mr,
	.reg_mr = vroce_reg_mr,
	.req_notify_cq = vroce_req_notify_cq,
	.rereg_mr = vroce_rereg_mr,
	.resize_cq = vroce_resize_cq,
	.unimport_mr = vroce_unimport_mr,
	.unimport_pd = vroce_unimport_pd,
};

/*
 * The kernel reports its VROCE_ABI_VERSION in the GET_CONTEXT response.
 * A kernel too old to send driver data at all leaves it 0.
 */
static int vroce_check_abi(struct ibv_device *ibdev,
			   const struct vroce_alloc_ucontext_resp *drv)
{
	if (drv->abi_version == VROCE_ABI_VERSION)
		return 0;

	fprintf(stderr,
		"vroce: %s: kernel ABI version %u does not match provider ABI version %u; install matching vroce module and provider\n",
		ibdev->name, drv->abi_version, VROCE_ABI_VERSION);
	return EPROTO;
}

static void vroce_destroy_context(struct vroce_context *ctx)
{
	verbs_uninit_context(lib_vctx(ctx));
	free(ctx);
}

/*
 * A context whose verbs_context libibverbs set up, if its layout is the
 * one of the private ABI we were built for.  Two rdma-core layouts share
 * ABI 59 (v59 to v61, and v62 to v63): the size libibverbs writes into sz
 * tells them apart, and a wrong one is refused, not used.
 */
static struct vroce_context *vroce_context_new(struct ibv_device *ibdev,
					       int cmd_fd)
{
	struct vroce_context *ctx;

	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
		(struct verbs_context *)offsetof(struct vroce_context,
						 vctx_room),
		VROCE_DRIVER_ID);
	if (!ctx)
		return NULL;
	if (ctx->ibv_ctx.sz == VROCE_VCTX_SIZE)
		return ctx;
	/* sz is where our layout has it: its value means nothing then. */
	fprintf(stderr,
		"vroce: %s: this libibverbs' verbs_context is not the one of private ABI %d (%u bytes) that libvroce-rdmav%d.so was built for; see vroce(7)\n",
		ibdev->name, VROCE_PABI, (unsigned int)VROCE_VCTX_SIZE,
		VROCE_PABI);
	vroce_destroy_context(ctx);
	errno = EOPNOTSUPP;
	return NULL;
}

static struct verbs_context *vroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct vroce_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct vroce_context *ctx;
	int ret;

	(void)private_data;

	ctx = vroce_context_new(ibdev, cmd_fd);
	if (!ctx)
		return NULL;

	ret = vroce_cmd_get_context(lib_vctx(ctx), &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	if (!ret)
		ret = vroce_check_abi(ibdev, &resp.drv);
	if (ret) {
		vroce_destroy_context(ctx);
		errno = ret;
		return NULL;
	}

	ctx->page_size = resp.drv.page_size;
	ctx->mmap_caps = resp.drv.mmap_caps;
	verbs_set_ops(lib_vctx(ctx), &vroce_ctx_ops);

	return lib_vctx(ctx);
}

/* The uverbs ABI version of @ibdev's char device: vroce's own. */
static int vroce_sysfs_abi(struct ibv_device *ibdev, unsigned int *abi)
{
	char path[sizeof(ibdev->dev_path) + 16];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/abi_version", ibdev->dev_path);
	f = fopen(path, "re");
	if (!f)
		return errno;
	n = fscanf(f, "%u", abi);
	fclose(f);
	return n == 1 ? 0 : EPROTO;
}

/*
 * ibv_import_device(): a context over a command FD another context
 * opened (and the caller dup'd or received).  The kernel knows it
 * already; QUERY_CONTEXT checks that the FD is alive, and the ABI check
 * reads the version the kernel gave the char device.
 */
static struct verbs_context *vroce_import_context(struct ibv_device *ibdev,
						  int cmd_fd)
{
	struct vroce_alloc_ucontext_resp drv = {};
	struct vroce_context *ctx;
	unsigned int abi = 0;
	int ret;

	ctx = vroce_context_new(ibdev, cmd_fd);
	if (!ctx)
		return NULL;
	ret = ibv_cmd_query_context(&ctx->ibv_ctx.context, NULL);
	if (!ret)
		ret = vroce_sysfs_abi(ibdev, &abi);
	if (!ret) {
		drv.abi_version = abi;
		ret = vroce_check_abi(ibdev, &drv);
	}
	if (ret) {
		vroce_destroy_context(ctx);
		errno = ret;
		return NULL;
	}
	ctx->page_size = sysconf(_SC_PAGESIZE);
	ctx->mmap_caps = 0;
	verbs_set_ops(lib_vctx(ctx), &vroce_ctx_ops);
	return lib_vctx(ctx);
}

static void vroce_free_context(struct ibv_context *ibctx)
{
	vroce_destroy_context(to_vctx(ibctx));
}

static struct verbs_device *
vroce_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct vroce_device *dev;

	(void)sysfs_dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	return &dev->ibv_dev;
}

static void vroce_uninit_device(struct verbs_device *verbs_dev)
{
	free(to_vdev(&verbs_dev->device));
}

/*
 * No rdma_driver_id exists for vroce, so match on the device name.  Any
 * uverbs ABI version is accepted here; the real check is our own ABI
 * version in alloc_context, where a mismatch can be reported clearly
 * instead of the device silently getting no provider.
 */
static const struct verbs_match_ent vroce_match_table[] = {
	VERBS_NAME_MATCH(VROCE_DEV_PREFIX, NULL),
	{},
};

static const struct verbs_device_ops vroce_dev_ops = {
	.name = "vroce",
	.match_min_abi_version = 0,
	.match_max_abi_version = UINT32_MAX,
	.match_table = vroce_match_table,
	.alloc_device = vroce_alloc_device,
	.uninit_device = vroce_uninit_device,
	.alloc_context = vroce_alloc_context,
	.import_context = vroce_import_context,
};

PROVIDER_DRIVER(vroce, vroce_dev_ops);
