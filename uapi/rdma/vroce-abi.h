/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * vroce user/kernel ABI.
 *
 * This header is shared, unchanged, by the kernel module (kernel/) and the
 * libibverbs provider (user/). Every struct here crosses the uverbs udata
 * boundary, so each one has a fixed size, explicit padding and 64-bit
 * alignment for 64-bit members.
 *
 * VROCE_ABI_VERSION changes whenever a layout below changes. The kernel
 * reports it as the device's uverbs ABI version and again in the
 * alloc_ucontext response; the provider refuses to open a device whose
 * version differs from its own.
 */
#ifndef VROCE_ABI_USER_H
#define VROCE_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

#define VROCE_ABI_VERSION	3

/* Device names always start with this prefix: libibverbs matches on it. */
#define VROCE_DEV_PREFIX	"vroce"

/*
 * The resource_type the provider passes to a parent domain's allocator
 * (ibv_alloc_parent_domain(3)): the upper 32 bits are the rdma_driver_id
 * (RDMA_DRIVER_UNKNOWN, 0, for vroce), the lower the object whose memory
 * it is: the provider's own state of a QP, an SRQ or a CQ, or the ibv_wr_*
 * state of an extended QP (their rings are the kernel's and are mapped,
 * not allocated).
 */
#define VROCE_RES_TYPE_QP	1ULL
#define VROCE_RES_TYPE_SRQ	2ULL
#define VROCE_RES_TYPE_QP_EX	3ULL
#define VROCE_RES_TYPE_CQ	4ULL

/*
 * Response to IB_USER_VERBS_CMD_GET_CONTEXT.
 *
 * abi_version: VROCE_ABI_VERSION of the kernel.
 * page_size:   page size the kernel uses for every mmap'd ring.
 * mmap_caps:   reserved for ring capabilities, 0 for now.
 */
struct vroce_alloc_ucontext_resp {
	__u32 abi_version;
	__u32 page_size;
	__aligned_u64 mmap_caps;
};

/* Response to IB_USER_VERBS_CMD_ALLOC_PD: the PD number. */
struct vroce_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

/*
 * ---------------------------------------------------------------------
 * Shared rings
 *
 * Every queue (SQ, RQ, SRQ, CQ) is one ring: a power-of-two number of
 * fixed-size entries behind a struct vroce_ring_hdr, in one buffer the
 * kernel allocates and the provider maps with mmap() on the uverbs fd at
 * the offset the create response gives (length: the response's
 * ring map size). Indices are free-running 32-bit counters; an entry's
 * slot is index & (entries - 1).
 *
 * One side produces, the other consumes:
 *
 *   ring  producer (writes entries, then prod)  consumer (reads, then cons)
 *   SQ    provider (post_send)                  kernel (send engine, flush)
 *   RQ    provider (post_recv)                  kernel (receive, flush)
 *   SRQ   provider (post_srq_recv)              kernel (receive)
 *   CQ    kernel (completions)                  provider (poll_cq)
 *
 * The producer writes entries, then publishes them with a release store
 * of prod; the consumer reads prod with an acquire load, reads entries,
 * then releases them with a release store of cons.
 *
 * The kernel trusts nothing in a ring. It keeps its own copy of the index
 * it owns and never reads it back from shared memory. It reads the other
 * side's index once per batch and accepts it only if it lies within
 * [own - entries, own + entries] as the ring discipline allows; anything
 * else is a broken ring and moves the QP (or CQ) to its error state. It
 * copies each entry into kernel memory exactly once and validates only
 * the copy. What it writes for the provider (CQEs, its own index) never
 * contains uninitialised kernel memory.
 *
 * prod and cons sit on separate cache lines; so does the notify word.
 *
 * A ring of N entries holds N items: prod - cons runs from 0 (empty) to N
 * (full), with no spare slot. Indices keep counting for the ring's whole
 * life; they are never reset, not even when the QP goes to RESET (the
 * kernel then discards what is posted by moving cons up to prod).
 *
 * mmap offsets are whatever the kernel hands out, 0 included: a ring's
 * presence is never signalled by its offset.
 */
#define VROCE_RING_ALIGN	64

struct vroce_ring_hdr {
	__u32 prod;			/* written by the producer only */
	__u32 rsvd0[15];
	__u32 cons;			/* written by the consumer only */
	__u32 rsvd1[15];
	/*
	 * SQ: VROCE_SQ_NEEDS_WAKEUP, set by the kernel while its send
	 * engine sleeps and while the QP is in ERR, RESET, INIT or RTR; the
	 * provider then rings the doorbell with a system call (see post_send
	 * below).
	 * CQ: arm word written by the provider (VROCE_CQ_ARM_*), read by the
	 * kernel when it adds a completion.
	 * RQ: VROCE_RQ_FLUSH, set by the kernel while the QP is in ERR.
	 * SRQ: unused (0).
	 */
	__u32 notify;
	__u32 rsvd2[15];
};

/* The entries start at this offset from the start of the ring map. */
#define VROCE_RING_ENTRIES_OFFSET	sizeof(struct vroce_ring_hdr)

/*
 * post_send doorbell. The provider writes WQEs, publishes prod, then reads
 * notify (after a full barrier): if VROCE_SQ_NEEDS_WAKEUP is set, it makes
 * one system call (the uverbs POST_SEND command with no WRs) to wake the
 * send engine. A send engine that is running drains the SQ until it finds
 * it empty, sets VROCE_SQ_NEEDS_WAKEUP, re-checks prod (after a full
 * barrier) and only then sleeps, so a WQE is never left behind and, under
 * load, posting needs no system call. A new QP starts with the flag set,
 * and so does a QP that goes to RESET.
 *
 * The same doorbell also makes the kernel flush a QP in ERR: the provider
 * rings it after posting (send or receive) to a QP it moved to ERR, and
 * the kernel completes everything posted with IBV_WC_WR_FLUSH_ERR. The
 * kernel may move a QP to ERR on its own (a remote error, retries run
 * out), which the provider does not see in its state. For that case the
 * kernel sets VROCE_SQ_NEEDS_WAKEUP in the SQ's notify word and
 * VROCE_RQ_FLUSH in the RQ's, issues a full barrier and only then flushes
 * both rings. The SQ's flag stays set through RESET, INIT and RTR (the
 * first post after RTS wakes the engine), the RQ's until RESET. After
 * publishing prod of either ring the provider reads that ring's notify
 * word (after a full barrier) and rings the doorbell if its flag is set,
 * so no WQE posted to a QP in ERR is left unflushed.
 */
#define VROCE_SQ_NEEDS_WAKEUP	(1U << 0)
#define VROCE_RQ_FLUSH		(1U << 0)

/*
 * CQ arming without a system call. The provider arms with
 * notify = ((sequence + 1) << 1) | solicited_only, where sequence is the
 * upper bits of its previous value. The kernel remembers the last
 * sequence it has notified; a CQ whose notify sequence differs is armed.
 * When the kernel adds a completion to an armed CQ (for a
 * solicited-only arm: a solicited or error completion) it records the
 * sequence and signals the completion channel once. resize_cq carries the
 * notify word over into the new ring. Both sides issue a full barrier
 * between their write and their read (the provider between arming and
 * any later poll, the kernel between publishing prod and reading the
 * arm), so that a completion added while the consumer arms is either
 * seen by its next poll or signalled.
 */
#define VROCE_CQ_ARM_SOLICITED	(1U << 0)
#define VROCE_CQ_ARM_SEQ_SHIFT	1

struct vroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* Send WQE flags (the low bits match enum ibv_send_flags). */
enum vroce_wqe_flags {
	VROCE_WQE_FENCE		= 1 << 0,
	VROCE_WQE_SIGNALED	= 1 << 1,
	VROCE_WQE_SOLICITED	= 1 << 2,
	VROCE_WQE_INLINE	= 1 << 3,
};

/*
 * Send WQE opcodes beyond those of enum ib_uverbs_wr_opcode of the oldest
 * kernel vroce supports, with the values newer kernels give them.
 * VROCE_WR_ATOMIC_WRITE is IBTA 1.5's RDMA Atomic Write (RC only): the 8
 * bytes of u.atomic.swap, as they lie in memory, are stored at
 * u.atomic.remote_addr (8-byte aligned) of u.atomic.rkey in one 64-bit
 * store; the WQE carries no SGEs and no inline data. It completes with
 * VROCE_WC_ATOMIC_WRITE.
 */
#define VROCE_WR_ATOMIC_WRITE	15
#define VROCE_WC_ATOMIC_WRITE	9

/*
 * Send WQE: 64 bytes of header, then num_sge struct vroce_sge or, with
 * VROCE_WQE_INLINE, inline_len bytes of data (and num_sge 0). Its stride
 * in the SQ is the create response's sq_wqe_size (a power of two, at
 * least 64). LOCAL_INV, BIND_MW and ATOMIC_WRITE carry no SGEs; a BIND_MW
 * names the window by the index part of u.bind.new_rkey.
 */
struct vroce_send_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;			/* ib_uverbs_wr_opcode, VROCE_WR_* */
	__u8 flags;			/* enum vroce_wqe_flags */
	__u8 num_sge;
	__u8 rsvd0;
	__u32 imm_data;			/* big endian, or invalidate rkey */
	__u32 inline_len;
	__u32 xrc_srqn;			/* XRC INI: the remote XRC SRQ, else 0 */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 rsvd;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 rsvd;
		} atomic;
		struct {
			__u32 ah_num;	/* from struct vroce_create_ah_resp */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 rsvd;
		} ud;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 new_rkey;
			__u32 access;
			__u32 rsvd;
		} bind;
		__u8 rsvd2[40];
	} u;
};

/* Receive WQE (RQ and SRQ): 16 bytes of header, then num_sge SGEs. */
struct vroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 rsvd;
};

/* CQE flags (match enum ibv_wc_flags). */
enum vroce_cqe_flags {
	VROCE_CQE_GRH		= 1 << 0,
	VROCE_CQE_WITH_IMM	= 1 << 1,
	VROCE_CQE_IP_CSUM_OK	= 1 << 2,
	VROCE_CQE_WITH_INV	= 1 << 3,
};

/*
 * Completion queue entry, 40 bytes. status uses the numbering of enum
 * ibv_wc_status (the kernel's enum ib_wc_status has the same values);
 * opcode is enum ib_uverbs_wc_opcode, or 128 + n for receives as in
 * enum ibv_wc_opcode. timestamp is CLOCK_MONOTONIC in nanoseconds when
 * the kernel wrote the entry: the device's clock (hca_core_clock 1 GHz).
 */
struct vroce_cqe {
	__aligned_u64 wr_id;
	__u8 status;
	__u8 opcode;
	__u8 flags;			/* enum vroce_cqe_flags */
	__u8 sl;
	__u32 byte_len;
	__u32 imm_data;			/* big endian, or invalidated rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u16 pkey_index;
	__u8 network_hdr_type;	/* for ibv_create_ah_from_wc: 2 v4, 3 v6 */
	__u8 rsvd;
	__aligned_u64 timestamp;
};

/* ---------------------------------------------------------------------
 * udata of the create/resize commands
 */
struct vroce_create_cq_resp {
	__aligned_u64 ring_offset;	/* mmap offset of the CQ ring */
	__u32 ring_size;		/* bytes to map */
	__u32 entries;			/* power of two */
	__u32 cqn;
	__u32 rsvd;
};

struct vroce_resize_cq_resp {
	__aligned_u64 ring_offset;	/* the new ring, as in create */
	__u32 ring_size;
	__u32 entries;
};

struct vroce_create_qp_resp {
	__aligned_u64 sq_offset;
	__aligned_u64 rq_offset;	/* rq_*: meaningless with an SRQ */
	__u32 sq_size;			/* bytes to map */
	__u32 rq_size;
	__u32 sq_entries;		/* power of two */
	__u32 rq_entries;
	__u32 sq_wqe_size;		/* stride, power of two */
	__u32 rq_wqe_size;
	__u32 qpn;
	__u32 rsvd;
};

struct vroce_create_srq_resp {
	__aligned_u64 ring_offset;
	__u32 ring_size;
	__u32 entries;
	__u32 wqe_size;
	__u32 srqn;
};

struct vroce_create_ah_resp {
	__u32 ah_num;			/* what a UD send WQE names */
	__u32 rsvd;
};

/*
 * ---------------------------------------------------------------------
 * Device memory (ibv_alloc_dm(3))
 *
 * Zeroed kernel memory that the process maps and remote peers reach
 * through a zero-based MR (ibv_reg_dm_mr(3)). The UVERBS_METHOD_DM_ALLOC
 * ioctl takes one driver attribute, mandatory: a __u64 output, the mmap
 * offset of the memory on the uverbs fd. The provider maps
 * PAGE_ALIGN(length) bytes from that offset, whole, at once.
 * The largest allocation is max_dm_size of ibv_query_device_ex(3);
 * log_align_req may be at most the page shift.
 */
enum vroce_dm_alloc_attrs {
	VROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET = (1U << UVERBS_ID_NS_SHIFT),
};

#endif /* VROCE_ABI_USER_H */
