/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * The libibverbs provider private ABIs: IBVERBS_PRIVATE_34, _57, _59, _64
 * and _65, one provider build each (IBVERBS_PABI_VERSION, set by
 * user/Makefile; lib<name>-rdmavN.so).
 *
 * rdma-core does not install the headers a provider is built against
 * (driver.h, kern-abi.h), so this file declares the part of that ABI the
 * vroce provider uses, and nothing else.  Every layout here must be
 * byte-for-byte the one libibverbs was compiled with: libibverbs reads
 * verbs_device_ops and verbs_context_ops out of our .so, embeds our
 * verbs_device in its device list and hands the cmd structs straight to
 * the kernel.
 *
 * IBVERBS_PRIVATE_34 covers rdma-core v39.0 through v56.4; the layouts
 * below are the same in all of them, but for struct verbs_qp (see there).
 * _57 covers v57 and v58, _59 v62 and v63 (v59 to v61 also say 59 but
 * have another verbs_context_ops: vroce refuses them, see
 * VROCE_VCTX_SIZE), _64 v64 and _65 v65.  What the later ABIs change is
 * confined to this file: members inserted into verbs_context_ops, a
 * bigger public struct verbs_context (it grows at its top, before the
 * members <infiniband/verbs.h> of rdma-core 44 declares), a bigger
 * struct ibv_qp_ex, and a new parameter of ibv_cmd_get_context().
 * tests/provider/abi_layout.c checks every size and offset against values
 * measured from the headers of v44 (and of v57, v62, v64 and v65 for the
 * later ABIs); `make -C tests/provider xcheck RDMA_CORE=<rdma-core git
 * dir>` compiles this file, for each release's ABI, against the headers
 * of v39.0, v44.0, v56.1, v57.0, v58.0, v62.0, v63.1 and v64.0 and also
 * compares member and prototype types.
 *
 * Public types (struct ibv_context, struct verbs_context, ...) come from
 * <infiniband/verbs.h>; kernel command and response payloads come from
 * the kernel uapi header <rdma/ib_user_verbs.h>.
 */
#ifndef VROCE_IBVERBS_PRIVATE_H
#define VROCE_IBVERBS_PRIVATE_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

/* The N in IBVERBS_PRIVATE_N and in lib<name>-rdmavN.so. */
#ifndef IBVERBS_PABI_VERSION
#define IBVERBS_PABI_VERSION 34
#endif
#define VROCE_PABI IBVERBS_PABI_VERSION

#if VROCE_PABI != 34 && VROCE_PABI != 57 && VROCE_PABI != 59 && \
	VROCE_PABI != 64 && VROCE_PABI != 65
#error "unknown libibverbs private ABI"
#endif

/*
 * sizeof(struct verbs_context) in the libibverbs of this ABI, which
 * stores it in the context's sz.  The members it has beyond those of our
 * <infiniband/verbs.h> come first, so they sit in the VROCE_VCTX_GROWTH
 * bytes before our struct verbs_context (struct vroce_context keeps room
 * for them) and every member we know is at the address we expect.
 */
#if VROCE_PABI >= 64
#define VROCE_VCTX_SIZE 696
#elif VROCE_PABI == 59
#define VROCE_VCTX_SIZE 680
#else
#define VROCE_VCTX_SIZE 648
#endif
#define VROCE_VCTX_GROWTH (VROCE_VCTX_SIZE - sizeof(struct verbs_context))

/*
 * The public headers built against: those of rdma-core v44 to v56 (and
 * the installed libibverbs, which the ABI 34 provider links against, of
 * one of those releases).  v44 brought wr_atomic_write; every release up
 * to v58 has this verbs_context.
 */
static_assert(sizeof(struct verbs_context) == 648,
	      "build against the headers of rdma-core v44 to v56");

/* Where verbs_qp.comp_mask is: after this ABI's struct ibv_qp_ex. */
#if VROCE_PABI >= 57
#define VROCE_QP_EX_SIZE 360
#else
#define VROCE_QP_EX_SIZE sizeof(struct ibv_qp_ex)
#endif

/*
 * libibverbs passes these to the provider only by pointer; the provider
 * never looks inside, so they stay incomplete here.
 */
struct verbs_sysfs_dev;

/* Declared below, behind the operations that take it. */
struct verbs_mr;

/* Types of operations of later ABIs, which vroce leaves to libibverbs. */
struct ibv_dmah;
struct ibv_dmah_init_attr;
struct ibv_mr_init_attr;
struct ibv_buf;
struct ibv_comp_cntr;
struct ibv_comp_cntr_init_attr;
struct ibv_qp_attach_comp_cntr_attr;
struct ibv_comp_cntr_caps;
struct ibv_fd_arr;

/* Same layout as ccan's struct list_node, which libibverbs uses. */
struct verbs_list_node {
	struct verbs_list_node *next;
	struct verbs_list_node *prev;
};

/* verbs_match_ent.kind */
enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

/* One entry of a provider's match table; the table ends with a zeroed one. */
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/*
 * Match on the ib device name: libibverbs builds the string
 * "rdma_device:N<ibdev name>" and fnmatch()es it against the pattern.
 */
#define VERBS_NAME_MATCH(_name_prefix, _data)				\
	{								\
		.driver_data = (_data),					\
		.u.modalias = "rdma_device:*N" _name_prefix "*",	\
		.kind = VERBS_MATCH_MODALIAS,				\
	}

struct verbs_device;

/* What a provider registers with verbs_register_driver_34(). */
struct verbs_device_ops {
	const char *name;

	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;

	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd,
					       void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/*
 * Allocated by the provider's alloc_device (embedded first in its own
 * device struct), filled in and owned by libibverbs afterwards.
 */
struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/*
 * Every operation a provider can implement, in the (alphabetical) order
 * libibverbs declares them.  verbs_set_ops() copies each non-NULL member;
 * libibverbs' own defaults stay in place for the NULL ones.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
#if VROCE_PABI >= 64
	void *(*alloc_buf)(struct ibv_pd *pd, size_t size, struct ibv_buf **buf);
#endif
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
#if VROCE_PABI >= 59
	struct ibv_dmah *(*alloc_dmah)(struct ibv_context *context,
				       struct ibv_dmah_init_attr *attr);
#endif
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
				    struct ibv_ah_attr *attr);
#if VROCE_PABI >= 65
	struct ibv_comp_cntr *(*create_comp_cntr)(
		struct ibv_context *context,
		struct ibv_comp_cntr_init_attr *attr);
#endif
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(
		struct ibv_context *context,
		struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(
		struct ibv_context *context,
		struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(
		struct ibv_context *context,
		struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
#if VROCE_PABI >= 59
	int (*dealloc_dmah)(struct ibv_dmah *dmah);
#endif
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
#if VROCE_PABI >= 65
	int (*destroy_comp_cntr)(struct ibv_comp_cntr *comp_cntr);
#endif
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
#if VROCE_PABI >= 59
	int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);
#endif
#if VROCE_PABI >= 64
	void (*free_buf)(struct ibv_buf *buf);
#endif
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
#if VROCE_PABI >= 65
	int (*inc_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t amount);
	int (*inc_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				 uint64_t amount);
#endif
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(
		struct ibv_context *context,
		struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
#if VROCE_PABI >= 65
	int (*qp_attach_comp_cntr)(struct ibv_qp *qp,
				   struct ibv_comp_cntr *comp_cntr,
				   struct ibv_qp_attach_comp_cntr_attr *attr);
	int (*query_comp_cntr_caps)(struct ibv_context *context,
				    struct ibv_comp_cntr_caps *caps,
				    size_t caps_size);
#endif
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
#if VROCE_PABI >= 59
	int (*query_port_speed)(struct ibv_context *context, uint32_t port_num,
				uint64_t *speed);
#endif
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp,
				      enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
#if VROCE_PABI >= 65
	int (*read_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t *value);
#endif
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
#if VROCE_PABI >= 65
	int (*read_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				  uint64_t *value);
#endif
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
#if VROCE_PABI >= 59
	struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *pd,
				    struct ibv_mr_init_attr *mr_init_attr);
#endif
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
#if VROCE_PABI >= 65
	int (*set_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t value);
#endif
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
#if VROCE_PABI >= 65
	int (*set_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				 uint64_t value);
#endif
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/*
 * A provider CQ that can be created by ibv_create_cq_ex() starts with
 * this: libibverbs converts between the two views with plain casts.
 */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/*
 * libibverbs' view of a QP beyond struct ibv_qp: ibv_qp_to_qp_ex() reads
 * comp_mask of any QP, so every provider QP starts with this.  A comp_mask
 * of 0 says the QP has no struct ibv_qp_ex operations and no XRC domain.
 *
 * Unlike the rest of this file, this layout is not the same in every
 * release: struct ibv_qp_ex is public and grows, so comp_mask moves (344
 * bytes in v39.0, 352 in v44.0, 360 in v56.1 and in every release of
 * the later ABIs, VROCE_QP_EX_SIZE).  struct vroce_qp keeps zeroes behind
 * it for that reason, and its creation learns where comp_mask is.
 */
/*
 * An XRC domain: ibv_cmd_open_xrcd() sets xrcd.context and, given a
 * vxrcd_size that covers it, the kernel's handle (comp_mask
 * VERBS_XRCD_HANDLE), which XRC SRQs and TGT QPs then name.
 */
struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

/*
 * A provider SRQ that can be created by ibv_create_srq_ex() starts with
 * this.  ibv_cmd_create_srq_ex() fills in srq_type, and for an XRC SRQ
 * xrcd, cq and srq_num, the number the kernel gave it.
 */
struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* verbs_qp.comp_mask */
enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,	/* qp_ex holds the ibv_wr_* operations */
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
		/* This ABI's struct ibv_qp_ex (its later members NULL). */
		uint8_t qp_ex_size[VROCE_QP_EX_SIZE];
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/* verbs_mr.mr_type */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

/*
 * A provider MR starts with this: ibv_dereg_mr() and ibv_rereg_mr() read
 * mr_type and access of any MR.  ibv_cmd_reg_mr() fills in all three.
 */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

/*
 * Write-path command buffers (kern-abi.h): the uverbs command header
 * followed by the kernel's request payload.  A provider that sends driver
 * data embeds one of these first in a bigger struct and passes the full
 * size as cmd_size.
 */
struct ibv_get_context {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context core_payload;
};

struct ibv_query_port {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_port core_payload;
};

struct ibv_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_pd core_payload;
};

struct ibv_create_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_cq core_payload;
};

struct ibv_resize_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_resize_cq core_payload;
};

struct ibv_create_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_qp core_payload;
};

struct ibv_modify_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_qp core_payload;
};

struct ibv_query_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_qp core_payload;
};

struct ibv_reg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_reg_mr core_payload;
};

struct ibv_rereg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_rereg_mr core_payload;
};

struct ibv_alloc_mw {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_mw core_payload;
};

struct ibv_create_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_srq core_payload;
};

struct ibv_modify_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_srq core_payload;
};

struct ibv_query_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_srq core_payload;
};

struct ibv_open_xrcd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_open_xrcd core_payload;
};

struct ibv_create_xsrq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_xsrq core_payload;
};

struct ibv_open_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_open_qp core_payload;
};

/*
 * Not passed to libibverbs: the provider writes this one to cmd_fd itself
 * (a POST_SEND with no work requests, the vroce send queue doorbell).  It
 * is declared here because it is the same kern-abi.h layout.
 */
struct ibv_post_send {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_post_send core_payload;
};

/*
 * ibv_cmd_query_device_any() tells the kernel the response buffer is as
 * big as libibverbs' own struct ib_uverbs_ex_query_device_resp (304 bytes
 * in v39.0 to v56.1), so ours must not be smaller.
 */
static_assert(sizeof(struct ib_uverbs_ex_query_device_resp) >= 304,
	      "ib_uverbs_ex_query_device_resp smaller than libibverbs' own");

/* Registration: called from the provider's ELF constructor. */
/* verbs_register_driver_N, N this ABI. */
#define VROCE_PASTE(a, b) a##b
#define VROCE_REGISTER(n) VROCE_PASTE(verbs_register_driver_, n)
#define verbs_register_driver VROCE_REGISTER(VROCE_PABI)
void verbs_register_driver(const struct verbs_device_ops *ops);

/*
 * Publish drv_struct as verbs_provider_<name> and register it with
 * libibverbs when the .so is loaded.
 */
#define PROVIDER_DRIVER(provider_name, drv_struct)				\
	extern const struct verbs_device_ops					\
		verbs_provider_##provider_name					\
		__attribute__((alias(#drv_struct),				\
			       visibility("default")));				\
	static __attribute__((constructor)) void				\
	provider_name##_register_driver(void)					\
	{									\
		verbs_register_driver(&drv_struct);				\
	}

/*
 * Allocate alloc_size zeroed bytes and initialise the verbs_context found
 * context_offset bytes into them.  On failure cmd_fd is closed.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/* Undo verbs_init_context(): closes cmd_fd and async_fd, drops the device. */
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/*
 * The ibv_cmd_* helpers return 0 or a positive errno value.  resp points at
 * the kernel's core response; resp_size covers it plus any driver data
 * that follows it.
 */
#if VROCE_PABI >= 57
/* From ABI 57 on, file descriptors to pass along; NULL passes none. */
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ibv_fd_arr *fd_arr,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
#define vroce_cmd_get_context(ctx, cmd, cmd_size, resp, resp_size) \
	ibv_cmd_get_context(ctx, cmd, cmd_size, NULL, resp, resp_size)
#else
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
#define vroce_cmd_get_context ibv_cmd_get_context
#endif
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
/*
 * ibv_import_device() and friends.  The command buffer of driver
 * attributes is libibverbs' own type; vroce passes none (NULL).
 * ibv_cmd_query_mr() fills lkey, rkey, length, handle, context and pd of
 * vmr->ibv_mr (addr NULL) and sets mr_type IBV_MR_TYPE_IMPORTED_MR.
 */
struct ibv_command_buffer;
int ibv_cmd_query_context(struct ibv_context *ctx,
			  struct ibv_command_buffer *driver);
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr,
		     uint32_t mr_handle);

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

/* XRC domains: the kernel's commands, no driver data. */
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);

/*
 * CQ and QP commands.  These fill in the libibverbs object they are given
 * (handle, cqe, qp_num, ...); ibv_cmd_create_qp() also writes the
 * capabilities the kernel granted back into attr->cap.
 */
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size);
/*
 * ibv_cmd_create_qp_ex() is ibv_cmd_create_qp() for any QP type, XRC
 * included: attr_ex->comp_mask may hold IBV_QP_INIT_ATTR_PD,
 * IBV_QP_INIT_ATTR_XRCD and IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, nothing else.
 * It fills in qp->qp as ibv_create_qp() would and sets comp_mask and xrcd
 * of its own struct verbs_qp.  ibv_cmd_open_qp() opens the XRC TGT QP
 * attr->qp_num of attr->xrcd; vqp_sz tells how much room the provider
 * has for libibverbs' struct verbs_qp.
 */
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);

/*
 * MR and MW commands.  ibv_cmd_reg_mr() sets handle, lkey, rkey and
 * context of vmr->ibv_mr and its mr_type and access; ibv_cmd_rereg_mr()
 * sets the new lkey and rkey (the handle stays); ibv_cmd_alloc_mw() sets
 * context, pd, rkey, handle and type of mw.
 */
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

/*
 * ADVISE_MR, an ioctl-only method (UVERBS_METHOD_ADVISE_MR of
 * UVERBS_OBJECT_MR): the PD's handle, advice, flags and the sg_list array
 * as they are.  0 or the kernel's errno value; EINVAL, without a system
 * call, if the array does not fit in an ioctl attribute.  The same
 * prototype in every private ABI vroce builds for.
 */
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);

/*
 * AH commands.  ibv_cmd_create_ah() sends no driver data of its own; the
 * driver response follows the core one within resp_size.  It sets handle
 * and context of ah.
 */
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

/* Multicast: the kernel attaches and detaches; no driver data. */
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

/*
 * SRQ commands.  ibv_cmd_create_srq() sets context and handle of srq and
 * writes the max_wr and max_sge the kernel granted back to attr->attr;
 * ibv_cmd_create_srq_ex() does the same for any SRQ type (an XRC SRQ goes
 * to the kernel as CREATE_XSRQ) and also fills in the verbs_srq.
 */
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);

#endif /* VROCE_IBVERBS_PRIVATE_H */
