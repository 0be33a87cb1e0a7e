/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: the provider's own objects, each wrapping the
 * libibverbs object it extends, and the user/kernel buffers it exchanges.
 */
#ifndef VROCE_H
#define VROCE_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/vroce-abi.h>

#include "ibverbs_private34.h"

/*
 * vroce is out of tree and has no enum rdma_driver_id value of its own: the
 * kernel side leaves ib_device_ops.driver_id unset (RDMA_DRIVER_UNKNOWN),
 * libibverbs then matches the device by name, and ioctl commands carry the
 * same id back.
 */
#define VROCE_DRIVER_ID		RDMA_DRIVER_UNKNOWN

#define vroce_container_of(ptr, type, member) \
	((type *)((uint8_t *)(ptr) - offsetof(type, member)))

struct vroce_device {
	struct verbs_device ibv_dev;
};

struct vroce_context {
	struct verbs_context ibv_ctx;
	/* From the GET_CONTEXT response (struct vroce_alloc_ucontext_resp). */
	uint32_t page_size;
	uint64_t mmap_caps;
};

struct vroce_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

/*
 * Responses as the kernel writes them: the uverbs core response, then our
 * driver data (udata) directly behind it.
 */
struct vroce_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct vroce_alloc_ucontext_resp drv;
};

struct vroce_alloc_pd_cmd_resp {
	struct ib_uverbs_alloc_pd_resp ibv_resp;
	struct vroce_alloc_pd_resp drv;
};

static_assert(offsetof(struct vroce_get_context_resp, drv) ==
	      sizeof(struct ib_uverbs_get_context_resp),
	      "padding between core and driver GET_CONTEXT response");
static_assert(sizeof(struct vroce_get_context_resp) % 8 == 0,
	      "GET_CONTEXT response not a multiple of 8 bytes");
static_assert(offsetof(struct vroce_alloc_pd_cmd_resp, drv) ==
	      sizeof(struct ib_uverbs_alloc_pd_resp),
	      "padding between core and driver ALLOC_PD response");
static_assert(sizeof(struct vroce_alloc_pd_cmd_resp) % 4 == 0,
	      "ALLOC_PD response not a multiple of 4 bytes");

static inline struct vroce_device *to_vdev(struct ibv_device *ibdev)
{
	return vroce_container_of(ibdev, struct vroce_device, ibv_dev.device);
}

static inline struct vroce_context *to_vctx(struct ibv_context *ibctx)
{
	return vroce_container_of(ibctx, struct vroce_context,
				  ibv_ctx.context);
}

static inline struct vroce_pd *to_vpd(struct ibv_pd *ibpd)
{
	return vroce_container_of(ibpd, struct vroce_pd, ibv_pd);
}

/* verbs.c */
void vroce_format_fw_ver(char *buf, size_t len, uint64_t fw_ver);
int vroce_query_device_ex(struct ibv_context *ibctx,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int vroce_query_port(struct ibv_context *ibctx, uint8_t port_num,
		     struct ibv_port_attr *attr);
struct ibv_pd *vroce_alloc_pd(struct ibv_context *ibctx);
int vroce_dealloc_pd(struct ibv_pd *ibpd);
int vroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int vroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int vroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
int vroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
int vroce_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *op,
		       struct ibv_ops_wr **bad_op);

#endif /* VROCE_H */
