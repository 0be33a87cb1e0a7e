/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * An in-process stand-in for the kernel side of vroce, for loading the
 * provider through libibverbs on a host without RDMA.
 *
 * The load test defines socket(), stat(), open(), write(), ioctl(), mmap(),
 * munmap() and close() in its executable and exports them (-rdynamic),
 * so the copies libibverbs, libnl and the provider call are ours:
 *
 *  - socket(AF_NETLINK, *, NETLINK_RDMA) fails, so libibverbs falls back to
 *    reading the sysfs tree named by $SYSFS_PATH, whatever the host has.
 *  - stat() and open() of /dev/infiniband/<name> go to /dev/null, a real
 *    character device; the fake sysfs gives its major:minor as the uverbs
 *    "dev", so libibverbs' checks on the cdev pass.
 *  - /dev/null does not know RDMA_VERBS_IOCTL (ENOTTY), so libibverbs
 *    uses the write() command interface, which fake_uverbs_write() answers
 *    the way ib_uverbs would for a vroce device.
 *  - ioctl() of a fake cmd fd answers the ioctl-only methods of device
 *    memory (UVERBS_OBJECT_DM, and DM_MR_REG of UVERBS_OBJECT_MR), which
 *    the provider issues itself, and ADVISE_MR of UVERBS_OBJECT_MR, which
 *    libibverbs' ibv_cmd_advise_mr() issues; every other ioctl still goes
 *    to /dev/null, so libibverbs sees ENOTTY and keeps to write() as
 *    before.
 *  - mmap() and munmap() of a fake cmd fd map the rings of the CQs and QPs
 *    it created, and the memory of its DMs.  Each ring is a memfd the
 *    fake "kernel" keeps mapped for itself (struct fake_ring.hdr), so a
 *    test sees the ring at another address than the provider, as the
 *    kernel would, and keeps seeing it after the provider has unmapped it.
 *
 * The same file is also built as libfake_uverbs.so, to run unmodified
 * programs such as ibv_devinfo against the fake device with LD_PRELOAD.
 */
#ifndef VROCE_FAKE_UVERBS_H
#define VROCE_FAKE_UVERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/vroce-abi.h>

#define FAKE_FW_VER	((1ULL << 32) | (2ULL << 16) | 3ULL)
#define FAKE_FW_STR	"1.2.3"
#define FAKE_MAX_QP	1234
#define FAKE_PAGE_SIZE	4096
#define FAKE_PAGE_SHIFT	12
#define FAKE_COMP_VECS	3
#define FAKE_GID_TBL_LEN 2
#define FAKE_PD_HANDLE	7
#define FAKE_PDN	42
#define FAKE_MAX_CQE	65535
#define FAKE_MAX_WR	4096
#define FAKE_MAX_RINGS	128
#define FAKE_MAX_OBJS	16
#define FAKE_QPN_BASE	0x100
#define FAKE_CQN_BASE	0x10
#define FAKE_SRQN_BASE	0x200
#define FAKE_AH_NUM_BASE 0x30
#define FAKE_XRCD_FD	77		/* the file of the inode XRCD */
#define FAKE_MAX_DM_SIZE (1U << 20)	/* max_dm_size */
#define FAKE_ADVISE_SGES 8		/* SGEs of ADVISE_MR recorded */

/*
 * One ring buffer as the fake kernel sees it; also the memory of a DM
 * (entries and stride 0, hdr its first byte).
 */
struct fake_ring {
	bool used;
	int memfd;
	uint64_t offset;		/* mmap offset on the cmd fd */
	size_t size;			/* ring_size of the create response */
	uint32_t entries;
	uint32_t stride;
	bool retired;			/* its CQ/QP is gone or resized */
	bool whole;			/* mmap()s must map all of it */
	struct vroce_ring_hdr *hdr;	/* the kernel's own mapping */
	uint8_t *ent;			/* its entries */
	unsigned int user_maps;		/* provider mappings alive */
	void *user_addr;		/* the last one made */
	size_t user_len;
};

struct fake_cq {
	bool live;
	uint32_t handle;
	uint32_t cqn;
	uint32_t cqe;			/* reported to the provider */
	uint32_t comp_vector;
	int32_t comp_channel;
	uint32_t kprod;			/* the kernel's producer index */
	struct fake_ring *ring;
};

struct fake_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct fake_qp {
	bool live;
	bool opened;			/* by OPEN_QP: a handle to another's QP */
	uint32_t handle;
	uint32_t qpn;
	uint32_t xrcd;			/* handle, of an XRC TGT QP */
	uint8_t qp_type;
	uint8_t sq_sig_all;
	uint8_t is_srq;
	uint32_t srq_handle;
	uint32_t send_cq;		/* handles */
	uint32_t recv_cq;
	struct fake_qp_cap req;		/* asked for */
	struct fake_qp_cap cap;		/* granted */
	uint32_t state;			/* enum ibv_qp_state */
	uint32_t last_modify_mask;
	unsigned int doorbells;
	struct fake_ring *sq;		/* NULL for XRC TGT */
	struct fake_ring *rq;		/* NULL with an SRQ, for XRC */
};

struct fake_mr {
	bool live;
	uint32_t handle;
	uint32_t pd_handle;
	uint32_t dm;			/* handle of its DM; 0: not a DM MR */
	uint32_t lkey, rkey;
	uint64_t start, length, hca_va;	/* of a DM MR: start is its offset */
	uint32_t access;
	unsigned int bound_mws;		/* set by a test: EBUSY */
};

struct fake_mw {
	bool live;
	uint32_t handle;
	uint32_t rkey;
	uint32_t type;
};

struct fake_ah {
	bool live;
	uint32_t handle;
	uint32_t ah_num;
	struct ib_uverbs_ah_attr attr;
};

struct fake_srq {
	bool live;
	uint32_t handle;
	uint32_t srqn;
	uint32_t srq_type;		/* enum ibv_srq_type */
	uint32_t xrcd, cq;		/* handles, of an XRC SRQ */
	uint32_t max_wr;		/* granted */
	uint32_t max_sge;
	uint32_t limit;
	struct fake_ring *ring;
};

/* Device memory: length bytes of mem, zeroed when allocated. */
struct fake_dm {
	bool live;
	uint32_t handle;
	uint64_t length;
	uint32_t log_align;
	unsigned int mrs;		/* DM MRs on it: DM_FREE fails, EBUSY */
	struct fake_ring *mem;		/* mapped like a ring */
	uint8_t *buf;			/* the kernel's own mapping of it */
};

struct fake_xrcd {
	bool live;
	uint32_t handle;
	int32_t fd;
	uint32_t oflags;
};

struct fake_uverbs {
	/* What the fake kernel answers. */
	uint32_t abi_version;		/* in the GET_CONTEXT driver data */
	bool send_driver_data;		/* false: behave like a foreign kernel */

	/* What it saw. */
	unsigned int open_fds;		/* fake cmd fds currently open */
	unsigned int get_context;
	size_t get_context_in;		/* driver data bytes sent */
	size_t get_context_out;		/* driver data bytes asked for */
	unsigned int query_device;
	unsigned int query_device_ex;
	size_t query_device_ex_drv_out;	/* driver data bytes asked for */
	unsigned int query_port;
	unsigned int alloc_pd;
	size_t alloc_pd_out;		/* driver data bytes asked for */
	unsigned int dealloc_pd;
	uint32_t dealloc_pd_handle;
	unsigned int unexpected;	/* commands vroce does not implement */
	uint32_t last_unexpected;

	unsigned int commands;		/* every command written */
	unsigned int create_cq, resize_cq, destroy_cq;
	unsigned int create_qp, modify_qp, query_qp, destroy_qp;
	unsigned int doorbells;		/* POST_SEND commands */
	struct ib_uverbs_post_send last_post_send;
	size_t last_post_send_len;	/* bytes written */
	uint32_t resize_cons_seen;	/* CQ ring cons at the last resize */
	unsigned int bad_mmaps;		/* mmap()s of the fd that failed */

	unsigned int reg_mr, rereg_mr, dereg_mr, alloc_mw, dealloc_mw;
	unsigned int create_ah, destroy_ah;
	unsigned int attach_mcast, detach_mcast;
	unsigned int create_srq, modify_srq, query_srq, destroy_srq;
	unsigned int open_xrcd, close_xrcd, create_xsrq, open_qp;
	/*
	 * RDMA_VERBS_IOCTLs the fake answered (those of DM and ADVISE_MR),
	 * by method; the attributes sent without UVERBS_ATTR_F_MANDATORY;
	 * the last one.
	 */
	unsigned int ioctls, alloc_dm, free_dm, reg_dm_mr, advise_mr;
	unsigned int optional_attrs;
	uint16_t last_object, last_method, last_num_attrs;
	/*
	 * The last ADVISE_MR whose attributes were well formed, as the
	 * kernel got it: its first FAKE_ADVISE_SGES SGEs, and how many
	 * there were.
	 */
	struct {
		uint32_t pd_handle;
		uint32_t advice;
		uint32_t flags;
		uint16_t flags_len;	/* bytes of the flags attribute */
		uint32_t num_sge;
		struct ib_uverbs_sge sge[FAKE_ADVISE_SGES];
	} last_advise;
	/* The last command: number, payload (after the header), lengths. */
	uint32_t last_cmd;
	uint8_t last_payload[256];
	size_t last_in;			/* payload bytes */
	size_t last_out;		/* response bytes asked for */

	/* Knobs. */
	bool allow_srq;			/* else CREATE_QP with an SRQ fails */
	uint32_t fail_cmd;		/* with fail_errno != 0: fail it */
	int fail_errno;
	bool no_dm;			/* a kernel without DM methods */
	int advise_errno;		/* != 0: ADVISE_MR fails with it */
	uint64_t dm_offset_bias;	/* added to DM_ALLOC's mmap offset */
	/*
	 * Called with the core and driver response of CREATE_CQ,
	 * RESIZE_CQ, CREATE_QP, CREATE_SRQ, CREATE_XSRQ and CREATE_AH just
	 * before they are written back.
	 */
	void (*tweak)(uint32_t command, void *core, void *drv);

	struct fake_ring rings[FAKE_MAX_RINGS];
	struct fake_cq cqs[FAKE_MAX_OBJS];
	struct fake_qp qps[FAKE_MAX_OBJS];
	struct fake_mr mrs[FAKE_MAX_OBJS];
	struct fake_mw mws[FAKE_MAX_OBJS];
	struct fake_ah ahs[FAKE_MAX_OBJS];
	struct fake_srq srqs[FAKE_MAX_OBJS];
	struct fake_xrcd xrcds[FAKE_MAX_OBJS];
	struct fake_dm dms[FAKE_MAX_OBJS];
};

extern struct fake_uverbs fake;

/* The live CQ or QP of that handle, or NULL. */
struct fake_cq *fake_cq_get(uint32_t handle);
struct fake_qp *fake_qp_get(uint32_t handle);

/* The live MR, MW, AH, SRQ, XRCD or DM of that handle, or NULL. */
struct fake_mr *fake_mr_get(uint32_t handle);
struct fake_mw *fake_mw_get(uint32_t handle);
struct fake_ah *fake_ah_get(uint32_t handle);
struct fake_srq *fake_srq_get(uint32_t handle);
struct fake_xrcd *fake_xrcd_get(uint32_t handle);
struct fake_dm *fake_dm_get(uint32_t handle);

/*
 * Add a CQE to the CQ as the kernel does: write it at the kernel's
 * producer index and publish it.  Fails (false) if the ring is full.
 */
bool fake_cq_push(struct fake_cq *cq, const struct vroce_cqe *cqe);

/* Provider mappings of rings (and DMs) still alive. */
unsigned int fake_user_maps(void);

#endif /* VROCE_FAKE_UVERBS_H */
