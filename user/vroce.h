/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: the provider's own objects, each wrapping the
 * libibverbs object it extends, and the user/kernel buffers it exchanges.
 */
#ifndef VROCE_H
#define VROCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/vroce-abi.h>

#include "ibverbs_private.h"
#include "ring.h"

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

/*
 * libibverbs' verbs_context is at vctx_room: from ABI 59 on it is bigger
 * than the one of our <infiniband/verbs.h>, with its extra members first
 * (ibverbs_private.h, VROCE_VCTX_SIZE).  lib_vctx() is its address, the
 * one every libibverbs call that takes a struct verbs_context gets.
 */
struct vroce_context {
	uint8_t vctx_room[VROCE_VCTX_GROWTH];
	struct verbs_context ibv_ctx;
	/* From the GET_CONTEXT response (struct vroce_alloc_ucontext_resp). */
	uint32_t page_size;
	uint64_t mmap_caps;
	/*
	 * Room for a libibverbs of a bigger layout, which writes all of its
	 * verbs_context before vroce_context_new() can refuse it.
	 */
	uint8_t vctx_slack[1024];
};

static inline struct verbs_context *lib_vctx(struct vroce_context *ctx)
{
	return (struct verbs_context *)ctx->vctx_room;
}

/* A thread domain: objects made under it take no locks (domain.c). */
struct vroce_td {
	struct ibv_td ibv_td;
	unsigned int users;		/* parent domains holding it */
};

/*
 * A PD, or a parent domain (protection set): the PD it extends (whose
 * handle it carries), a thread domain and the application's allocator.
 */
struct vroce_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	unsigned int users;		/* parent domains over this PD; of a
					 * parent domain, its QPs and SRQs */
	struct vroce_pd *protection;	/* NULL for a PD */
	struct vroce_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
};

/*
 * A CQ: the kernel produces CQEs into ring, the provider consumes them.
 * lock serialises poll_cq, req_notify_cq and resize_cq.
 */
struct vroce_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;
	struct vroce_ring ring;		/* hdr NULL: lost in a failed resize */
	uint32_t cons;			/* our consumer index */
	uint32_t notify;		/* the last arm word we wrote */
	uint32_t cqn;
	/*
	 * Extended polling (ibv_start_poll() to ibv_end_poll(), under lock):
	 * the CQE at cons the iterator is on, or NULL.
	 */
	const struct vroce_cqe *cur;
	/* WITH_COMPLETION_TIMESTAMP_WALLCLOCK: CLOCK_REALTIME - MONOTONIC. */
	bool wall_clock;
	uint64_t wall_offset;
	struct ibv_pd *alloc_pd;	/* a parent domain, or NULL */
	bool custom;			/* its allocator's memory */
	bool lockless;			/* under a thread domain */
};

/* One work queue of a QP (SQ or RQ): the provider produces into ring. */
struct vroce_wq {
	pthread_spinlock_t lock;
	bool lockless;			/* made under a thread domain */
	struct vroce_ring ring;		/* hdr NULL: no RQ (the QP has an SRQ) */
	uint32_t prod;			/* our producer index */
	uint32_t max_sge;		/* from the granted capabilities */
};

/*
 * The ibv_wr_* state of a QP created with send_ops_flags (qp_ex.c).  From
 * ibv_wr_start() to ibv_wr_complete() or ibv_wr_abort() the SQ lock is
 * held; each WR builder closes the WR before it into the ring (past the
 * published prod, so unseen by the kernel) and opens a new one in wr,
 * which the setters then complete.
 */
struct vroce_qpx {
	struct ibv_send_wr wr;		/* the open WR */
	struct ibv_sge *sge;		/* its SGEs: max_send_sge of them */
	uint8_t *inl;			/* its inline data: max_inline_data */
	uint32_t inl_len;
	uint32_t start;			/* sq.prod at ibv_wr_start() */
	uint32_t cons;			/* the SQ's cons, as last read */
	int err;			/* the first error since then */
	bool open;			/* a builder opened wr */
};

struct vroce_qp {
	struct verbs_qp vqp;
	/*
	 * Zeroes behind vqp: ibv_qp_to_qp_ex() reads verbs_qp.comp_mask at
	 * an offset that follows the size of the public struct ibv_qp_ex,
	 * which grows with rdma-core releases (comp_mask at 344 in v39, 352
	 * in v44, 360 in v56.1).  ibv_cmd_create_qp_ex() and
	 * ibv_cmd_open_qp() write comp_mask (0, or VERBS_QP_XRCD for an XRC
	 * TGT QP) and xrcd at the offsets of whatever libibverbs we run
	 * with, within vqp and this slack, so for a QP without ibv_wr_*
	 * operations it reads back what it wrote.  Creation learns that
	 * offset (comp_mask_at, qp.c), and a QP with ibv_wr_* operations
	 * (qp_ex.c, never an XRC TGT QP) has VERBS_QP_EX written there.
	 */
	uint8_t vqp_slack[64];
	/*
	 * Where the libibverbs we run with keeps comp_mask, from vqp's
	 * start: learnt at creation (vroce_qp_comp_mask_find()), 0 if not.
	 */
	uint16_t comp_mask_at;
	struct vroce_wq sq;		/* ring.hdr NULL: no SQ (XRC TGT) */
	struct vroce_wq rq;
	uint32_t max_inline;
	/*
	 * enum ibv_qp_state after the last successful modify_qp that set
	 * IBV_QP_STATE; read by the post verbs without a lock.
	 */
	int state;
	bool sq_sig_all;
	uint32_t qpn;
	struct vroce_qpx *x;		/* NULL: no ibv_qp_ex operations */
	struct ibv_pd *alloc_pd;	/* whose memory this is (domain.c);
					 * NULL for an XRC TGT QP */
	bool custom, x_custom;
};

/*
 * An address handle created by this provider; ah_num is the kernel's
 * number for it (struct vroce_create_ah_resp), what UD send WQEs name.
 */
struct vroce_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_num;
};

/*
 * A shared receive queue, basic or XRC: the provider produces receive
 * WQEs into ring (stride wqe_size, as a QP's RQ), the kernel consumes
 * them.  lock serialises post_srq_recv.
 */
struct vroce_srq {
	struct verbs_srq vsrq;
	struct vroce_wq wq;		/* max_sge as the kernel granted it */
	uint32_t srqn;			/* ibv_get_srq_num() */
	struct ibv_pd *alloc_pd;	/* whose memory this is (domain.c) */
	bool custom;
};

/*
 * Device memory (ibv_alloc_dm(3)): kernel memory we map whole, map_len
 * bytes (length rounded up to the kernel's page size) at addr.
 */
struct vroce_dm {
	struct ibv_dm ibv_dm;
	uint8_t *addr;
	size_t length;			/* as allocated: the copies' bound */
	size_t map_len;
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

struct vroce_create_cq_cmd_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct vroce_create_cq_resp drv;
};

struct vroce_resize_cq_cmd_resp {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct vroce_resize_cq_resp drv;
};

struct vroce_create_qp_cmd_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct vroce_create_qp_resp drv;
};

struct vroce_create_srq_cmd_resp {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct vroce_create_srq_resp drv;
};

struct vroce_create_ah_cmd_resp {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct vroce_create_ah_resp drv;
};

static_assert(offsetof(struct vroce_create_srq_cmd_resp, drv) ==
	      sizeof(struct ib_uverbs_create_srq_resp),
	      "padding between core and driver CREATE_SRQ response");
static_assert(offsetof(struct vroce_create_ah_cmd_resp, drv) ==
	      sizeof(struct ib_uverbs_create_ah_resp),
	      "padding between core and driver CREATE_AH response");
static_assert(sizeof(struct vroce_create_ah_cmd_resp) % 4 == 0,
	      "CREATE_AH response not a multiple of 4 bytes");
static_assert(offsetof(struct vroce_create_cq_cmd_resp, drv) ==
	      sizeof(struct ib_uverbs_create_cq_resp),
	      "padding between core and driver CREATE_CQ response");
static_assert(offsetof(struct vroce_resize_cq_cmd_resp, drv) ==
	      sizeof(struct ib_uverbs_resize_cq_resp),
	      "padding between core and driver RESIZE_CQ response");
static_assert(offsetof(struct vroce_create_qp_cmd_resp, drv) ==
	      sizeof(struct ib_uverbs_create_qp_resp),
	      "padding between core and driver CREATE_QP response");

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

static inline struct vroce_td *to_vtd(struct ibv_td *ibtd)
{
	return vroce_container_of(ibtd, struct vroce_td, ibv_td);
}

/* The protection domain of @ibpd, a PD or a parent domain (or NULL). */
static inline struct ibv_pd *vroce_pd_protection(struct ibv_pd *ibpd)
{
	struct vroce_pd *pd = ibpd ? to_vpd(ibpd) : NULL;

	return pd && pd->protection ? &pd->protection->ibv_pd : ibpd;
}

/*
 * Whether objects made with @ibpd take no locks (a thread domain); an
 * object made without a PD (an XRC TGT QP) takes them.
 */
static inline bool vroce_pd_lockless(struct ibv_pd *ibpd)
{
	return ibpd && to_vpd(ibpd)->td != NULL;
}

static inline void vroce_wq_lock(struct vroce_wq *wq)
{
	if (!wq->lockless)
		pthread_spin_lock(&wq->lock);
}

static inline void vroce_wq_unlock(struct vroce_wq *wq)
{
	if (!wq->lockless)
		pthread_spin_unlock(&wq->lock);
}

static inline void vroce_cq_lock(struct vroce_cq *cq)
{
	if (!cq->lockless)
		pthread_spin_lock(&cq->lock);
}

static inline void vroce_cq_unlock(struct vroce_cq *cq)
{
	if (!cq->lockless)
		pthread_spin_unlock(&cq->lock);
}

static inline struct vroce_cq *to_vcq(struct ibv_cq *ibcq)
{
	return vroce_container_of(ibcq, struct vroce_cq, vcq.cq);
}

static inline struct vroce_cq *to_vcq_ex(struct ibv_cq_ex *ibcq)
{
	return vroce_container_of(ibcq, struct vroce_cq, vcq.cq_ex);
}

static inline struct vroce_qp *to_vqp(struct ibv_qp *ibqp)
{
	return vroce_container_of(ibqp, struct vroce_qp, vqp.qp);
}

static inline struct vroce_qp *to_vqp_ex(struct ibv_qp_ex *ibqpx)
{
	return vroce_container_of(ibqpx, struct vroce_qp, vqp.qp_ex);
}

static inline int vroce_qp_state(struct vroce_qp *qp)
{
	return __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
}

static inline struct vroce_ah *to_vah(struct ibv_ah *ibah)
{
	return vroce_container_of(ibah, struct vroce_ah, ibv_ah);
}

static inline struct vroce_srq *to_vsrq(struct ibv_srq *ibsrq)
{
	return vroce_container_of(ibsrq, struct vroce_srq, vsrq.srq);
}

static inline struct vroce_dm *to_vdm(struct ibv_dm *ibdm)
{
	return vroce_container_of(ibdm, struct vroce_dm, ibv_dm);
}

/* verbs.c */
void vroce_format_fw_ver(char *buf, size_t len, uint64_t fw_ver);
int vroce_query_device_ex(struct ibv_context *ibctx,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int vroce_query_rt_values(struct ibv_context *ibctx,
			  struct ibv_values_ex *values);
int vroce_query_port(struct ibv_context *ibctx, uint8_t port_num,
		     struct ibv_port_attr *attr);
struct ibv_pd *vroce_alloc_pd(struct ibv_context *ibctx);
int vroce_dealloc_pd(struct ibv_pd *ibpd);
struct ibv_pd *vroce_import_pd(struct ibv_context *ibctx, uint32_t pd_handle);
void vroce_unimport_pd(struct ibv_pd *ibpd);
struct ibv_xrcd *vroce_open_xrcd(struct ibv_context *ibctx,
				 struct ibv_xrcd_init_attr *attr);
int vroce_close_xrcd(struct ibv_xrcd *ibxrcd);

/* domain.c */
struct ibv_td *vroce_alloc_td(struct ibv_context *ibctx,
			      struct ibv_td_init_attr *attr);
int vroce_dealloc_td(struct ibv_td *ibtd);
struct ibv_pd *vroce_alloc_parent_domain(struct ibv_context *ibctx,
					 struct ibv_parent_domain_init_attr *attr);
int vroce_dealloc_parent_domain(struct vroce_pd *pd);
void vroce_pd_get(struct ibv_pd *ibpd);
void vroce_pd_put(struct ibv_pd *ibpd);
void *vroce_pd_zalloc(struct ibv_pd *ibpd, size_t size, uint64_t type,
		      bool *custom);
void vroce_pd_free(struct ibv_pd *ibpd, void *p, uint64_t type, bool custom);

/* mr.c */
struct ibv_mr *vroce_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			    uint64_t hca_va, int access);
int vroce_advise_mr(struct ibv_pd *ibpd, enum ibv_advise_mr_advice advice,
		    uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
int vroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *ibpd,
		   void *addr, size_t length, int access);
int vroce_dereg_mr(struct verbs_mr *vmr);
struct ibv_mr *vroce_import_mr(struct ibv_pd *ibpd, uint32_t mr_handle);
void vroce_unimport_mr(struct ibv_mr *mr);
struct ibv_mw *vroce_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type);
int vroce_dealloc_mw(struct ibv_mw *ibmw);
int vroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *ibmw,
		  struct ibv_mw_bind *bind);

/* dm.c */
struct ibv_dm *vroce_alloc_dm(struct ibv_context *ibctx,
			      struct ibv_alloc_dm_attr *attr);
int vroce_free_dm(struct ibv_dm *ibdm);
struct ibv_mr *vroce_reg_dm_mr(struct ibv_pd *ibpd, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length,
			       unsigned int access);

/* ah.c */
struct ibv_ah *vroce_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr);
int vroce_destroy_ah(struct ibv_ah *ibah);

/* srq.c */
struct ibv_srq *vroce_create_srq(struct ibv_pd *ibpd,
				 struct ibv_srq_init_attr *attr);
struct ibv_srq *vroce_create_srq_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr);
int vroce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
int vroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask);
int vroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int vroce_destroy_srq(struct ibv_srq *ibsrq);
int vroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
int vroce_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *op,
		       struct ibv_ops_wr **bad_op);

/* cq.c */
struct ibv_cq *vroce_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
struct ibv_cq_ex *vroce_create_cq_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr);
int vroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int vroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int vroce_resize_cq(struct ibv_cq *ibcq, int cqe);
int vroce_destroy_cq(struct ibv_cq *ibcq);
void vroce_cq_clean(struct vroce_cq *cq, uint32_t qpn);

/* qp.c */
struct vroce_qp *vroce_qp_new(struct ibv_context *ibctx,
			      struct ibv_qp_init_attr_ex *attr);
void vroce_qp_free(struct vroce_qp *qp);
struct ibv_qp *vroce_create_qp(struct ibv_pd *ibpd,
			       struct ibv_qp_init_attr *attr);
struct ibv_qp *vroce_open_qp(struct ibv_context *ibctx,
			     struct ibv_qp_open_attr *attr);
int vroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask);
int vroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr);
int vroce_destroy_qp(struct ibv_qp *ibqp);
int vroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int vroce_send_wqe_hdr(struct vroce_qp *qp, const struct ibv_send_wr *wr,
		       struct vroce_send_wqe *hdr, bool *sges);
void vroce_wqe_put_sges(void *slot, struct vroce_send_wqe *hdr,
			const struct ibv_sge *sg, int n);
bool vroce_wq_full(struct vroce_wq *wq, uint32_t *cons);
bool vroce_sq_accepts(struct vroce_qp *qp);
bool vroce_sq_publish(struct vroce_qp *qp);
int vroce_sq_doorbell(struct vroce_qp *qp);
int vroce_wq_post_recv(struct vroce_wq *wq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr, bool *posted);
int vroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);

/* qp_ex.c */
struct ibv_qp *vroce_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr);
void vroce_qpx_free(struct vroce_qp *qp);

#endif /* VROCE_H */
