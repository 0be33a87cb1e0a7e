/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vroce: a software RoCEv2 HCA.
 *
 * Copyright (c) 2026 the vroce developers
 */
#ifndef VROCE_H
#define VROCE_H

#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/seqlock.h>
#include <linux/idr.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/vroce-abi.h>

#include "compat.h"
#include "limits.h"
#include "queue.h"
#include "rc.h"
#include "core/pkt.h"

#define VROCE_PORT	1

/* The port counters (counters.c). */
enum vroce_counter {
	VROCE_CNT_TX_PACKETS,
	VROCE_CNT_TX_BYTES,
	VROCE_CNT_RX_PACKETS,
	VROCE_CNT_RX_BYTES,
	VROCE_CNT_RX_ICRC_ERRORS,
	VROCE_CNT_RX_DROPPED,
	VROCE_CNT_DOORBELLS,
	VROCE_CNT_RETRANSMITS,
	VROCE_CNT_TIMEOUTS,
	VROCE_CNT_RNR_NAK_SENT,
	VROCE_CNT_RNR_NAK_RCVD,
	VROCE_CNT_SEQ_NAK_SENT,
	VROCE_CNT_SEQ_NAK_RCVD,
	VROCE_CNT_DUP_REQUESTS,
	VROCE_CNT_RD_ATOMIC_OVER,
	VROCE_CNT_TX_BATCHES,
	VROCE_CNT_TX_LOCAL,
	VROCE_CNT_RX_GRO_PACKETS,
	VROCE_CNT_RX_ERRORS,
	VROCE_CNT_TX_DROPPED,
	VROCE_CNT_TX_WAKEUPS,
	VROCE_CNT_MCAST_TX_PACKETS,
	VROCE_CNT_MCAST_RX_PACKETS,
	VROCE_CNT_ODP_FAULTS,
	VROCE_CNT_ODP_INVALIDATIONS,
	VROCE_CNT_MAX
};

/* Why a received packet was dropped (rx.c; the vroce_rx_drop event). */
enum vroce_drop {
	VROCE_DROP_NONE,
	VROCE_DROP_HEADERS,	/* cut short or malformed headers */
	VROCE_DROP_ICRC,
	VROCE_DROP_NO_QP,	/* no QP of that number */
	VROCE_DROP_PKEY,
	VROCE_DROP_TRANSPORT,	/* an opcode of another transport than the QP's */
	VROCE_DROP_PEER,	/* not from a connected QP's peer */
	VROCE_DROP_QKEY,
	VROCE_DROP_STATE,	/* UD: a state that does not receive */
	VROCE_DROP_NO_RECV,	/* UD: no receive WQE */
	VROCE_DROP_PROTOCOL,	/* RC/UC: not taken by the responder or completer */
	VROCE_DROP_NOMEM,	/* a GRO chain's packet could not be copied */
	VROCE_DROP_CHAIN,	/* a GRO chain that could not be taken apart */
};

/* One vroce device: an RDMA HCA bound to one Ethernet netdev. */
struct vroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head node;		/* on vroce_devices, under vroce_lock */
	struct vroce_udp *udp;		/* its namespace's sockets (net.c) */
	enum ib_port_state port_state;	/* last state reported by an event */
	struct ida pd_ida;
	struct ida qpn_ida;
	atomic_t next_qpn;		/* QP numbers are handed out cyclically */
	atomic_t n_pd;
	atomic_t n_cq;
	atomic_t n_qp;
	atomic_t n_mr;
	atomic_t n_mw;
	atomic_t n_dm;
	atomic_t n_ah;
	atomic_t n_srq;
	atomic_t tx_stack;		/* packets the stack holds (tx_pace.c) */
	refcount_t qp_refs;		/* 1 + its vroce_qp_refs (tx_pace.c) */
	struct completion qp_refs_gone;
	atomic_t next_cqn;
	atomic_t n_xrcd;
	struct xarray srqs;		/* srqn -> vroce_srq, RCU (xrc.c) */
	u32 next_srqn;			/* cyclic allocation of SRQ numbers */
	struct xarray keys;		/* key index -> vroce_mr or vroce_mw */
	u32 next_key;			/* cyclic allocation of key indices */
	u8 *key_bytes;			/* last key byte of each key index */
	struct xarray ahs;		/* ah_num -> vroce_ah_dest */
	struct xarray qps;		/* qpn -> vroce_qp */
	struct mutex mcast_lock;	/* changes of mcgs (mcast.c) */
	DECLARE_HASHTABLE(mcgs, 6);	/* multicast groups, RCU */
	u32 n_mcg;			/* groups, under mcast_lock */
	u32 n_mcast_attach;		/* QP attachments, under mcast_lock */
	atomic64_t counters[VROCE_CNT_MAX];
};

static inline void vroce_count(struct vroce_dev *vdev, int counter, s64 n)
{
	atomic64_add(n, &vdev->counters[counter]);
}

/*
 * A connected QP's route (net.c) and the generation of its path: each AV
 * change bumps @gen, and a path copy of another generation neither uses
 * nor fills the cache.
 */
struct vroce_routes {
	struct dst_cache cache;
	atomic_t gen;
};

/* Where a packet goes: addresses and header fields from an AV. */
struct vroce_path {
	bool ipv4;
	bool loopback;			/* a GID of this device */
	__be32 sip4;
	__be32 dip4;
	struct in6_addr sgid;
	struct in6_addr dgid;
	u32 flow_label;
	u16 sport;
	u8 tclass;
	u8 hop_limit;
	struct vroce_routes *routes;	/* RC, UC, XRC: the QP's; else NULL */
	int gen;			/* of @routes when this path was set */
};

/* Room in front of BTH for UDP, IP and the link layer. */
#define VROCE_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
			 sizeof(struct udphdr))

/* An outgoing packet before it is built: BTH fields and headers. */
struct vroce_txpkt {
	u8 opcode;
	bool se;
	bool ackreq;
	u32 dqpn;
	u32 psn;
	u32 paylen;
	struct vroce_deth deth;
	struct vroce_reth reth;
	struct vroce_atmeth atmeth;
	struct vroce_aeth aeth;
	struct vroce_atmack atmack;
	__be32 imm;			/* ImmDt as the WQE holds it */
	u32 ieth;			/* the R_Key to invalidate */
	u32 xrcsrq;			/* XRC: the SRQ the request is for */
	bool linear;			/* copy the payload: no fragments */
};

/* BTH and extension headers: the longest, an atomic request, is 40. */
#define VROCE_HDR_MAX		48
/* Payload pieces (SGE spans) a packet between local QPs may have. */
#define VROCE_LOCAL_PIECES	4

/*
 * A packet from one QP of this device to another that is never built
 * (local.c): its headers, and its payload as spans of the sender's MRs,
 * each MR held for as long as the packet is.
 */
struct vroce_local_pkt {
	u8 hdr[VROCE_HDR_MAX];
	u32 hdr_len;
	u32 paylen;
	u32 n;
	struct vroce_local_piece {
		struct vroce_mr *mr;
		u32 key;		/* the MR key the SGE named */
		u64 iova;
		u32 len;
	} piece[VROCE_LOCAL_PIECES];
};

/*
 * A received packet as the receive path hands it on: the parsed headers
 * (first: every vroce_pkt it passes is inside one) and where the payload
 * is, which may be in page fragments: it is copied once, from there. A
 * packet between local QPs has no skb: its payload is read straight from
 * the sender's MRs (@local).
 */
struct vroce_rxpkt {
	struct vroce_pkt pkt;
	const struct sk_buff *skb;
	u32 payoff;			/* offset of the payload from skb->data */
	const struct vroce_local_pkt *local;
};

static inline const struct vroce_rxpkt *
vroce_rxpkt(const struct vroce_pkt *pkt)
{
	return container_of(pkt, struct vroce_rxpkt, pkt);
}

/* What our packets carry in skb->cb until they are sent. */
struct vroce_skb_cb {
	u32 paylen;
	u32 after;	/* a responder's answer: sent once res_tail is here */
};

#define VROCE_SKB_PAYLEN(skb)	(((struct vroce_skb_cb *)(skb)->cb)->paylen)
#define VROCE_SKB_AFTER(skb)	(((struct vroce_skb_cb *)(skb)->cb)->after)

struct vroce_ucontext {
	struct ib_ucontext ibuc;
};

struct vroce_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

struct vroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* producer side of ring, resize */
	struct vroce_queue ring;
	u32 cqn;
	u32 notified_seq;		/* last arm sequence notified */
	bool broken;			/* overflowed or ring broken */
};

/*
 * Where an MR's bytes are, and who may reach them. Fixed for the life of
 * a user or DMA MR (in the MR itself); an FRMR gets a new one at each
 * registration (struct vroce_frmr_map), so that a packet reads one
 * registration whole, never fields of two.
 */
struct vroce_mr_xlate {
	u64 iova;
	u64 length;
	struct page **pages;		/* page map; NULL for a DMA MR */
	u32 npages;
	u32 page_offset;		/* of the first byte in pages[0] */
	u32 key;			/* its lkey and rkey */
	int access;
};

/* One registration of an FRMR: published with RCU, never changed. */
struct vroce_frmr_map {
	struct rcu_head rcu;
	struct vroce_mr_xlate x;
	struct page *pages[];
};

struct vroce_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;		/* NULL for a DMA MR */
	struct vroce_mr_xlate x;	/* user and DMA MRs */
	/* FRMR: the registration in force, NULL while not registered. */
	struct vroce_frmr_map __rcu *map;
	bool dma;
	bool frmr;			/* fast registration (kernel FRWR) */
	bool dm;			/* on device memory: holds its pages */
	struct vroce_odp *odp;		/* on-demand paging (odp.c), or NULL */
	u64 *stage;			/* FRMR: page addresses map_mr_sg set */
	u32 nstaged;
	u32 max_pages;
	atomic_t bound_mws;
	atomic_t copying;		/* FRMR: copies of its pages under way */
	bool replaced;			/* rereg gave its keys to a new MR */
	bool revoked;			/* deregistered: moves no more bytes */
	refcount_t ref;			/* lookups by the data path */
	struct rcu_head rcu;		/* lookups are lock-free */
};

/* Tags of the entries of vroce_dev.keys. */
#define VROCE_KEY_MR	1
#define VROCE_KEY_MW	2

/* Binding state is under the keys xarray's lock, like the lookups. */
struct vroce_mw {
	struct ib_mw ibmw;
	struct vroce_mr *mr;		/* bound to, or NULL */
	u32 mr_key;			/* the key of mr's registration then */
	u64 addr;			/* the window: [addr, addr + length) */
	u64 length;
	int access;			/* remote access it grants */
	struct vroce_qp *qp;		/* type 2: the QP it is bound on */
	struct list_head qp_node;	/* in that QP's bound_mws */
};

/*
 * Where an AH sends, resolved once at creation. The UD send path finds it
 * by number without a lock: ib_core frees the AH itself as soon as
 * destroy_ah returns (which may run in atomic context), so the part the
 * send path reads lives apart and goes after a grace period.
 */
struct vroce_ah_dest {
	struct rcu_head rcu;
	const struct ib_pd *pd;
	struct vroce_path path;
};

struct vroce_ah {
	struct ib_ah ibah;
	u32 num;			/* named by UD send WQEs */
	struct rdma_ah_attr attr;
	struct vroce_ah_dest *dest;
};

struct vroce_xrcd {
	struct ib_xrcd ibxrcd;
};

struct vroce_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;		/* kernel side of the ring, limit */
	struct vroce_queue rq;
	u32 srqn;
	u32 max_sge;
	u32 limit;			/* 0: not armed */
};

/* What modify_qp set, as query_qp returns it. */
struct vroce_qp_attrs {
	enum ib_qp_state state;
	enum ib_mtu path_mtu;
	enum ib_mig_state path_mig_state;
	u32 qkey;
	u32 rq_psn;
	u32 sq_psn;
	u32 dest_qp_num;
	int access_flags;
	u16 pkey_index;
	u8 en_sqd_async_notify;
	u8 sq_draining;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 min_rnr_timer;
	u8 port_num;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	struct rdma_ah_attr ah_attr;
};

/* A flow's packets the stack holds, and whether it waits (tx_pace.c). */
struct vroce_pace {
	atomic_t n;
	unsigned long flags;
};

/*
 * What outlives a QP. The QP table holds it: the receive path finds a QP
 * by number without a lock and takes a reference (count) here. ib_core
 * frees the QP as soon as destroy_qp returns, which waits for those
 * references, never for a grace period; this part goes a grace period
 * after its last holder (kfree_rcu). Its holders are the QP and the
 * QP's packets in the stack, which count against its flows here until
 * they are freed: a packet never pins the QP itself, so a NIC that keeps
 * packets (a stalled wire) cannot hold up destroy_qp; the device's
 * removal waits for them instead (tx_pace.c).
 */
struct vroce_qp_ref {
	struct rcu_head rcu;
	refcount_t count;		/* the QP's own one, and lookups' */
	refcount_t holders;		/* the QP, and its packets */
	struct vroce_qp *qp;		/* valid while count is not 0 */
	struct vroce_dev *vdev;
	struct vroce_pace req;		/* the requester's packets */
	struct vroce_pace resp;		/* READ responses */
};

struct vroce_qp {
	struct ib_qp ibqp;
	struct mutex state_lock;	/* modify, query, destroy */
	struct vroce_qp_attrs attrs;
	struct ib_qp_cap cap;
	bool sq_sig_all;
	spinlock_t sq_lock;		/* kernel side of the SQ */
	spinlock_t rq_lock;		/* kernel side of the RQ */
	struct vroce_queue sq;
	struct vroce_queue rq;
	struct vroce_qp_ref *ref;	/* lookups by the receive path */
	struct completion released;
	struct work_struct tx_work;	/* the send engine */
	struct sk_buff_head tx_batch;	/* its packets of one run; gso.c */
	u64 tx_linger;			/* local_clock(): awake until then */
	void *wqe_buf;			/* the engine's copy of one WQE */
	struct vroce_path path;		/* RC, UC, XRC: the peer, set at RTR */
	seqlock_t path_lock;		/* path changes; vroce_qp_path() */
	struct vroce_routes routes;	/* RC, UC, XRC: the path's route */
	struct vroce_req req;		/* RC, UC */
	struct vroce_resp resp;		/* RC, UC */
	bool err_pending;		/* the engine moves the QP to ERR */
	bool dying;			/* destroy: nothing may kick the engine */
	struct list_head bound_mws;	/* type 2 MWs bound on it; keys lock */
	int err_event;			/* enum ib_event_type to raise, or -1 */
};

/* The requester's WQE number @idx (see struct vroce_req): its state. */
static inline struct vroce_swqe *vroce_swqe(struct vroce_qp *qp, u32 idx)
{
	return &qp->req.swq[idx & (qp->sq.entries - 1)];
}

/* ... and the copy of the WQE itself. */
static inline struct vroce_send_wqe *vroce_swqe_wqe(struct vroce_qp *qp,
						    u32 idx)
{
	return qp->req.wqes +
	       (size_t)(idx & (qp->sq.entries - 1)) * qp->sq.stride;
}

/*
 * READs, atomics and atomic writes (IBTA 1.5 answers those with an RDMA
 * READ response of no data): answered by responses, limited by
 * max_rd_atomic.
 */
static inline bool vroce_wr_is_rd_atomic(u8 opcode)
{
	return opcode == IB_UVERBS_WR_RDMA_READ ||
	       opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD ||
	       opcode == VROCE_WR_ATOMIC_WRITE;
}

/* An XRC target: receives only, into the SRQ each request names. */
static inline bool vroce_qp_is_xrc_tgt(const struct vroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/* RC and both halves of XRC: requests are acknowledged. */
static inline bool vroce_qp_reliable(const struct vroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_INI || vroce_qp_is_xrc_tgt(qp);
}

/*
 * A consistent copy of a connected QP's path: modify_qp may change the
 * AV (SQD to SQD) while the responder or the receive path reads it.
 */
static inline void vroce_qp_path(const struct vroce_qp *qp,
				 struct vroce_path *p)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&qp->path_lock);
		*p = qp->path;
	} while (read_seqretry(&qp->path_lock, seq));
}

/* A receive queue of its own: not on an SRQ, and not XRC. */
static inline bool vroce_qp_has_rq(const struct vroce_qp *qp)
{
	return !qp->ibqp.srq && qp->ibqp.qp_type != IB_QPT_XRC_INI &&
	       !vroce_qp_is_xrc_tgt(qp);
}

/*
 * The PD receive and remote keys are checked in: an XRC target's is that
 * of the SRQ the request in hand names (resp.xsrq, under resp.lock).
 */
static inline struct ib_pd *vroce_qp_rx_pd(const struct vroce_qp *qp)
{
	return qp->resp.xsrq ? qp->resp.xsrq->ibsrq.pd : qp->ibqp.pd;
}

/* UD and the GSI QP (QP1) carry datagrams; RC and UC are connected. */
static inline bool vroce_qp_is_ud(const struct vroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

static inline struct vroce_dev *to_vdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vroce_dev, ibdev);
}

/*
 * Whether a connected QP's payloads must be copied into the packet: a
 * netdev without scatter-gather would linearize a fragmented skb, which
 * costs a second allocation and the same copy. A local peer takes
 * fragments.
 */
static inline bool vroce_qp_tx_linear(const struct vroce_qp *qp)
{
	const struct net_device *ndev = to_vdev(qp->ibqp.device)->ndev;

	/* The responder asks without the state lock: one field, either path. */
	return !READ_ONCE(qp->path.loopback) &&
	       !(READ_ONCE(ndev->features) & NETIF_F_SG);
}

static inline struct vroce_pd *to_vpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct vroce_pd, ibpd);
}

static inline struct vroce_cq *to_vcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct vroce_cq, ibcq);
}

static inline struct vroce_qp *to_vqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct vroce_qp, ibqp);
}

static inline struct vroce_mr *to_vmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct vroce_mr, ibmr);
}

static inline struct vroce_mw *to_vmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct vroce_mw, ibmw);
}

static inline struct vroce_ah *to_vah(struct ib_ah *ibah)
{
	return container_of(ibah, struct vroce_ah, ibah);
}

static inline struct vroce_srq *to_vsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct vroce_srq, ibsrq);
}

/* device.c: life cycle of a vroce device and its netdev binding */
int vroce_dev_add(const char *name, struct net_device *ndev);
void vroce_dev_remove_all(void);
int vroce_netdev_notifier_register(void);
struct vroce_dev *vroce_dev_get_by_netdev(struct net_device *ndev);
void vroce_netdev_notifier_unregister(void);

/* port.c: device and port attributes */
int vroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int vroce_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int vroce_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
int vroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
enum rdma_link_layer vroce_get_link_layer(struct ib_device *ibdev, u32 port);
enum ib_port_state vroce_port_state(struct vroce_dev *vdev);
int vroce_port_mtu(struct vroce_dev *vdev);
void vroce_get_dev_fw_str(struct ib_device *ibdev, char *str);

/* context.c: user contexts, protection domains, udata helpers */
bool vroce_udata_in_ok(struct ib_udata *udata, size_t known);
int vroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
int vroce_query_ucontext(struct ib_ucontext *ibuc,
			 struct uverbs_attr_bundle *attrs);
void vroce_dealloc_ucontext(struct ib_ucontext *ibuc);
void vroce_disassociate_ucontext(struct ib_ucontext *ibuc);
int vroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int vroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* cq.c: completion queues */
int vroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct vroce_create_cq_arg *arg);
int vroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int vroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
void vroce_cq_purge(struct vroce_cq *cq, u32 qpn);
int vroce_cq_add(struct vroce_cq *cq, const struct vroce_cqe *cqe,
		 bool solicited);

/* qp.c: queue pairs: create, query, destroy, doorbell */
int vroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int vroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int vroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int vroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int vroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);

/* qp_modify.c: the QP state machine and flushing */
int vroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
void vroce_qp_flush(struct vroce_qp *qp);
u8 vroce_wc_opcode(u8 wr_opcode);
void vroce_qp_error(struct vroce_qp *qp, int event);
void vroce_qp_error_move(struct vroce_qp *qp);
void vroce_qp_drained(struct vroce_qp *qp);

/* keys.c: the MR/MW key space */
int vroce_keys_init(struct vroce_dev *vdev);
void vroce_keys_destroy(struct vroce_dev *vdev);
int vroce_key_alloc(struct vroce_dev *vdev, void *obj, int tag, u32 *key);
void vroce_key_free(struct vroce_dev *vdev, u32 key);

/* mr.c: memory regions */
struct ib_mr *vroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *vroce_get_dma_mr(struct ib_pd *ibpd, int access);
int vroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int vroce_mr_publish(struct vroce_dev *vdev, struct vroce_mr *mr);
void vroce_mr_free(struct vroce_mr *mr);
void vroce_mr_kfree(struct vroce_mr *mr);
struct ib_mr *vroce_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs);

/* dm.c: device memory */
extern const struct uapi_definition vroce_uapi_defs[];
struct ib_dm *vroce_alloc_dm(struct ib_device *ibdev,
			     struct ib_ucontext *ibuc,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs);
int vroce_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
struct page *vroce_dm_get_page(struct ib_dm *ibdm, size_t index);

/* frmr.c: fast registration (FRWR) for kernel consumers */
struct ib_mr *vroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int vroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
/* Not an IB_WC status: a local operation waits for memory and goes again. */
#define VROCE_WC_NOMEM	0xff
u8 vroce_frmr_register(struct vroce_qp *qp, const struct vroce_send_wqe *w);
struct ib_mr *vroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata);

/* mw.c: memory windows */
int vroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int vroce_dealloc_mw(struct ib_mw *ibmw);
u8 vroce_mw_bind(struct vroce_qp *qp, const struct vroce_send_wqe *w);
int vroce_key_invalidate(struct vroce_qp *qp, u32 rkey, bool remote);
void vroce_mw_unbind_qp(struct vroce_qp *qp);

/* ah.c: address handles */
int vroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int vroce_destroy_ah(struct ib_ah *ibah, u32 flags);
int vroce_ah_dest_get(struct vroce_dev *vdev, u32 num, const struct ib_pd *pd,
		      struct vroce_path *p);

/* srq.c: shared receive queues */
int vroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int vroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int vroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int vroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);

/* xrc.c */
int vroce_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int vroce_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int vroce_srqn_alloc(struct vroce_srq *srq);
void vroce_srqn_free(struct vroce_srq *srq);
struct vroce_srq *vroce_xsrq_find(struct vroce_qp *qp, u32 srqn);
bool vroce_srq_check_limit(struct vroce_srq *srq);
void vroce_srq_limit_event(struct vroce_srq *srq);

/* mcast.c: UD multicast groups */
#define VROCE_MCAST_QPN		0xffffff
int vroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int vroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void vroce_mcast_detach_qp(struct vroce_qp *qp);
u32 vroce_mcast_qpns(struct vroce_dev *vdev, const struct in6_addr *gid,
		     u32 *qpns);
void vroce_mcast_init(struct vroce_dev *vdev);
void vroce_mcast_destroy(struct vroce_dev *vdev);

/* sgl.c: scatter/gather lists against MRs */
struct vroce_mr *vroce_mr_get(struct vroce_dev *vdev, u32 key,
			      struct ib_pd *pd);
struct vroce_mr *vroce_mr_get_remote(struct vroce_qp *qp, u32 rkey, u64 *va,
				     u64 len, int access, u32 *mr_key);
int vroce_mr_copy(struct vroce_mr *mr, u32 key, u64 iova, void *buf,
		  u32 len, bool to_mr);
int vroce_mr_atomic(struct vroce_mr *mr, u32 key, u64 iova, u8 opcode,
		    u64 swap_add, u64 compare, u64 *orig);
void vroce_mr_put(struct vroce_mr *mr);
bool vroce_mr_live(struct vroce_mr *mr, u32 key);
void vroce_mr_wait_copies(struct vroce_mr *mr);
const struct vroce_mr_xlate *vroce_mr_xlate(struct vroce_mr *mr);
bool vroce_sgl_odp_missing(const struct vroce_sgl *sgl, u32 skip, u32 len,
			   struct vroce_mr **mr, u64 *iova, u64 *n, u32 *at);
int vroce_sgl_odp_missed(const struct vroce_sgl *sgl, u32 skip, u32 len);
void vroce_sgl_put(struct vroce_mr **mrs, u32 n);
int vroce_sgl_prepare(struct vroce_qp *qp, struct vroce_sgl *sgl,
		      const struct vroce_sge *sge, u32 n, int access);
int vroce_sgl_write(struct vroce_sgl *sgl, u32 off, const void *buf,
		    u32 len);
int vroce_sgl_read(struct vroce_sgl *sgl, u32 off, void *buf, u32 len);
void vroce_sgl_release(struct vroce_sgl *sgl);
int vroce_sgl_write_pkt(struct vroce_sgl *sgl, u32 off,
			const struct vroce_pkt *pkt);
bool vroce_sgl_revoked(const struct vroce_sgl *sgl);
int vroce_pkt_read_pay(const struct vroce_pkt *pkt, void *buf, u32 n);
int vroce_mr_write_pkt(struct vroce_mr *mr, u32 key, u64 iova,
		       const struct vroce_pkt *pkt);
int vroce_mr_pages(struct vroce_mr *mr, u32 key, u64 iova, u32 len,
		   int (*fn)(void *ctx, struct page *page, u32 off, u32 n),
		   void *ctx);
int vroce_sgl_pages(struct vroce_sgl *sgl, u32 skip, u32 len,
		    int (*fn)(void *ctx, struct page *page, u32 off, u32 n),
		    void *ctx);
int vroce_sgl_hold_span(struct vroce_sgl *sgl, u32 skip, u32 len,
			struct vroce_local_pkt *lp);

/* odp.c: on-demand paging; a fault maps this much at most */
#define VROCE_ODP_FAULT_MAX	(4U << 20)
struct vroce_odp;
int vroce_odp_init(struct vroce_dev *vdev, struct vroce_mr *mr, u64 start,
		   u64 length, u64 iova, int access);
void vroce_odp_release(struct vroce_mr *mr);
void vroce_odp_free(struct vroce_odp *odp);
struct page *vroce_odp_page(const struct vroce_odp *odp, u64 off);
bool vroce_odp_missing(struct vroce_mr *mr, u64 iova, u64 len, u64 *first);
int vroce_odp_fault(struct vroce_mr *mr, u64 iova, u64 len);
int vroce_odp_ready(struct vroce_mr *mr, u64 iova, u64 len, u64 ahead,
		    struct vroce_qp *qp);
int vroce_odp_missed(struct vroce_mr *mr, u64 iova, u64 len, u64 ahead);
int vroce_odp_wq_init(void);
void vroce_odp_wq_exit(void);
int vroce_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);

/* txbuf.c: heads of outgoing skbs, cut from per-CPU pages used again */
struct sk_buff *vroce_skb_alloc(unsigned int size, gfp_t gfp);
void vroce_txbuf_exit(void);

/* packet.c: building packets, transmit of connected QPs */
u32 vroce_pkt_pack_hdr(const struct vroce_txpkt *t, u8 *buf);
struct sk_buff *vroce_pkt_build(const struct vroce_txpkt *t, u8 **payload,
				gfp_t gfp);
struct sk_buff *vroce_pkt_build_sgl(const struct vroce_txpkt *t,
				    struct vroce_sgl *sgl, u32 off);
struct sk_buff *vroce_pkt_build_mr(const struct vroce_txpkt *t,
				   struct vroce_mr *mr, u32 key, u64 iova);
int vroce_skb_icrc(struct sk_buff *skb);
void vroce_qp_count_tx(struct vroce_qp *qp, const struct sk_buff *skb);
void vroce_qp_xmit_queue(struct vroce_qp *qp, struct sk_buff_head *q);

/* gso.c: batched transmit of connected QPs */
void vroce_xmit_list(struct vroce_dev *vdev, struct sk_buff_head *q,
		     const struct vroce_path *p);
void vroce_qp_xmit_batch(struct vroce_qp *qp, struct sk_buff *skb);
struct vroce_qp_ref *vroce_qp_ref_new(struct vroce_qp *qp,
				      struct vroce_dev *vdev);
void vroce_qp_ref_put(struct vroce_qp_ref *ref);
void vroce_qp_refs_init(struct vroce_dev *vdev);
void vroce_qp_refs_wait(struct vroce_dev *vdev);
struct vroce_qp_ref *vroce_pace_take(struct sk_buff *skb);
void vroce_pace_batch(struct sk_buff *head, struct sk_buff *list);
void vroce_pace_own(struct vroce_qp *qp, struct sk_buff *skb);
void vroce_pace_hold(struct vroce_qp *qp, struct vroce_pace *p,
		     struct sk_buff *skb, void (*done)(struct sk_buff *skb));
int vroce_pace_freed(struct vroce_qp_ref *ref, struct vroce_pace *p,
		     bool *wake);
void vroce_pace_kick(struct vroce_qp_ref *ref);
bool vroce_pace_wait(struct vroce_qp *qp, struct vroce_pace *p);
bool vroce_pace_waiting(const struct vroce_pace *p);
void vroce_qp_xmit_flush(struct vroce_qp *qp);

/* local.c: packets between QPs of this device, never built */
bool vroce_local_wanted(const struct vroce_qp *qp, bool inline_data);
int vroce_local_prepare(struct vroce_local_pkt *lp,
			const struct vroce_txpkt *t, struct vroce_sgl *sgl,
			u32 off);
void vroce_local_xmit(struct vroce_qp *qp, struct vroce_local_pkt *lp);
void vroce_local_read(const struct vroce_local_pkt *lp, u32 pos, void *buf,
		      u32 len);

/* req.c: the requester of RC and UC QPs */
int vroce_req_init(struct vroce_qp *qp);
void vroce_req_destroy(struct vroce_qp *qp);
void vroce_req_start(struct vroce_qp *qp);
void vroce_req_reset(struct vroce_qp *qp);
void vroce_req_flush(struct vroce_qp *qp);
bool vroce_req_odp_fault(struct vroce_qp *qp);
int vroce_req_step(struct vroce_qp *qp);
void vroce_req_complete(struct vroce_qp *qp, u8 status);
void vroce_req_fail(struct vroce_qp *qp, u8 status);
void vroce_req_rewind(struct vroce_qp *qp);
bool vroce_req_idle(struct vroce_qp *qp);

/* comp.c: the completer of RC QPs and its timers */
void vroce_comp_init(struct vroce_qp *qp);
bool vroce_comp_rx(struct vroce_qp *qp, const struct vroce_pkt *pkt,
		   const u8 *bth);
void vroce_comp_arm(struct vroce_qp *qp, bool restart);
void vroce_comp_nomem(struct vroce_qp *qp);
void vroce_comp_stream(struct vroce_qp *qp, u64 left_ns);
void vroce_comp_stop(struct vroce_qp *qp);

/* resp.c: the responder of RC and UC QPs */
void vroce_resp_start(struct vroce_qp *qp);
void vroce_resp_reset(struct vroce_qp *qp);
void vroce_resp_flush(struct vroce_qp *qp);
bool vroce_resp_rx(struct vroce_qp *qp, const struct vroce_pkt *pkt,
		   const u8 *bth);

/* net.c: UDP sockets and transmit */
int vroce_net_init(void);
void vroce_net_exit(void);
int vroce_net_get(struct vroce_dev *vdev);
void vroce_net_put(struct vroce_dev *vdev);
bool vroce_net_moved(struct vroce_dev *vdev);
int vroce_path_from_attr(struct vroce_dev *vdev,
			 const struct rdma_ah_attr *attr,
			 struct vroce_path *p);
void vroce_path_new_route(struct vroce_routes *routes, struct vroce_path *p);
int vroce_net_push(struct vroce_dev *vdev, struct sk_buff *skb,
		   const struct vroce_path *p, int segs);
int vroce_net_out(struct sk_buff *skb, const struct vroce_path *p);
int vroce_net_xmit(struct vroce_dev *vdev, struct sk_buff *skb,
		   const struct vroce_path *p);

/* rx.c: the receive path */
int vroce_udp_recv(struct sock *sk, struct sk_buff *skb);

/* gro.c */
struct udp_tunnel_sock_cfg;
void vroce_gro_setup(struct udp_tunnel_sock_cfg *cfg);
void vroce_gro_accept(struct sock *sk);
struct sk_buff *vroce_gro_split(struct sk_buff *skb);
struct sk_buff *vroce_gro_next(struct vroce_dev *vdev, struct sk_buff **segs);
void vroce_rx_dropped(struct vroce_dev *vdev, u32 qpn, int opcode, u32 psn,
		      enum vroce_drop why, u32 n);
int vroce_rx_local(struct vroce_dev *vdev, struct sk_buff *skb);
void vroce_rx_local_pkt(struct vroce_dev *vdev, const struct vroce_path *from,
			const struct vroce_local_pkt *lp);
int vroce_take_recv(struct vroce_qp *qp, struct vroce_recv_wqe *wqe,
		    struct vroce_sge *sge);
void vroce_qp_hold(struct vroce_qp *qp);
void vroce_qp_put(struct vroce_qp *qp);

/* tx.c: the send engine; what one step of it found (enum vroce_tx_res) */
enum vroce_tx_res {
	VROCE_TX_SENT,		/* a packet went out: go on */
	VROCE_TX_IDLE,		/* nothing posted: sleep, need a doorbell */
	VROCE_TX_WAIT,		/* waits for the completer or a timer to kick */
	VROCE_TX_STOP,		/* not sending in this state: need a doorbell */
};

int vroce_tx_init(void);
void vroce_tx_exit(void);

/* fault.c: fault injection on the packet path (debug kernels only) */
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
bool vroce_fail_packet(void);
void vroce_fault_init(void);
void vroce_fault_exit(void);
#else
static inline bool vroce_fail_packet(void)
{
	return false;
}

static inline void vroce_fault_init(void)
{
}

static inline void vroce_fault_exit(void)
{
}
#endif

/* resp_ack.c: coalesced ACKs of the responder */
void vroce_ack_init(void);
void vroce_ack_exit(void);
void vroce_ack_queue(struct vroce_qp *qp);
void vroce_resp_send_pending_ack(struct vroce_qp *qp);
bool vroce_resp_tx(struct vroce_qp *qp);
void vroce_tx_kick(struct vroce_qp *qp);
void vroce_tx_work(struct work_struct *work);
void vroce_tx_doorbell(struct vroce_qp *qp);

/* kverbs.c: verbs of kernel consumers */
int vroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int vroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int vroce_kpost_send(struct vroce_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr);
int vroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
int vroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);

/* counters.c: hw_counters */
struct rdma_hw_stats *vroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int vroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);

/* mad.c: the PMA that sysfs' port counters query */
int vroce_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
		      const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		      const struct ib_mad *in, struct ib_mad *out,
		      size_t *out_mad_size, u16 *out_mad_pkey_index);

/* sysfs.c: object counts */
extern const struct attribute_group vroce_obj_group;

/* mmap.c: memory shared with user space through the uverbs fd */
int vroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void vroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
struct rdma_user_mmap_entry *
vroce_mmap_insert(struct ib_ucontext *ibuc, void *vaddr, size_t size,
		  u64 *offset);

#endif /* VROCE_H */
