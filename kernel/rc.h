/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * State of the reliable (RC) and unreliable (UC) connected transports of
 * a QP: the requester with its completer, and the responder.
 *
 * Copyright (c) 2026 the vroce developers
 */
#ifndef VROCE_RC_H
#define VROCE_RC_H

#include <linux/llist.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>

#include "limits.h"
#include "core/rtt.h"
#include "core/rdres.h"

/* A gather or scatter list, checked and holding its MRs. */
struct vroce_srq;

struct vroce_sgl {
	const struct vroce_sge *sge;
	u32 n;
	u32 len;
	bool odp;			/* an MR of it pages on demand */
	struct vroce_mr *mrs[VROCE_MAX_SGE];
};

/*
 * A send WQE the requester took from the SQ ring and has not completed:
 * the copy of the WQE (in vroce_req.wqes) and its progress.
 */
struct vroce_swqe {
	struct vroce_sgl sgl;		/* the checked local buffers */
	u32 first_psn;			/* valid once started */
	u32 npkts;			/* PSNs the message uses */
	u32 len;			/* message length */
	u32 read_off;			/* READ: bytes received */
	u32 odp_ok;			/* READ, atomic: ODP pages seen mapped */
	u8 status;			/* a local error found at take time */
	bool started;
};

/*
 * The requester. Indices count WQEs in the numbering of the SQ ring's
 * own index (it publishes the ring's cons from tail): tail is the oldest
 * one not completed, next the one being sent, head one past the last
 * taken from the ring. PSNs: una is the oldest not acknowledged,
 * next_psn the next one to send, psn_hi one past the highest ever sent.
 */
struct vroce_req {
	spinlock_t lock;		/* everything below */
	struct vroce_swqe *swq;		/* one per SQ ring entry */
	void *wqes;			/* their WQE copies, SQ stride each */
	u32 head;
	u32 next;
	u32 tail;
	u32 next_off;			/* bytes of next already sent */
	u32 next_psn;
	u32 una;
	u32 psn_hi;
	u32 rd_out;			/* READs and atomics in flight */
	u32 window;			/* PSNs that may be in flight (core/ack.h) */
	u32 since_ackreq;		/* packets sent since the last AckReq */
	u32 mtu;			/* path MTU in bytes */
	u32 resync_psn;			/* una when we last went back for it */
	u8 retries;			/* left for this una */
	u8 rnr_retries;
	u8 failed;			/* an IB_WC status: the requester stopped */
	bool rnr_wait;			/* an RNR NAK timer runs */
	bool nomem_wait;		/* no packet memory: backoff timer runs */
	bool odp_wait;			/* the engine faults ODP pages in first */
	struct vroce_mr *odp_mr;	/* which MR (held), from where, how far */
	u64 odp_iova;
	u64 odp_len;
	u32 odp_wqe;			/* the WQE that waits for them */
	bool blocked;			/* the engine waits for the completer */
	u64 stream_until;		/* local_clock(): a stream till then */
	struct timer_list stream_timer;	/* kicks the engine then (req.c) */
	bool stream_ended;		/* ... and no ACK completed anything since */
	u32 stream_end_tail;		/* tail when it did */
	bool resynced;
	bool probe;			/* timed out: only una goes out */
	bool timer_confirm;		/* the retry timer expired once */
	bool rtt_on;			/* rtt_psn is being timed */
	u32 rtt_psn;			/* a PSN sent once, awaiting its ACK */
	u64 rtt_start;			/* local_clock() when it went out */
	struct vroce_rtt rtt;		/* round trips measured so far */
	struct timer_list retry_timer;
	struct timer_list rnr_timer;
	struct timer_list nomem_timer;
};

/*
 * A READ or atomic the responder executed, kept to answer duplicates; a
 * READ also holds the responses it still has to send, and its MR while
 * it does.
 */
struct vroce_res {
	u16 kind;			/* 0, VROCE_OPF_READ, _ATOMIC, _ATOMIC_WRITE */
	u32 first_psn;
	u32 last_psn;
	u64 orig;			/* atomic: the value it returned */
	u32 idx;			/* its number (res_head when taken) */
	u32 msn;			/* the MSN its answers carry */
	struct vroce_rd_cursor rd;	/* READ: what remains to send */
	struct vroce_mr *mr;		/* READ: held while rd.active */
	u32 mr_key;			/* the key of its checked registration */
};

/* The responder: expected PSN, the message in progress, resources. */
struct vroce_resp {
	spinlock_t lock;		/* everything below */
	u32 epsn;
	u32 msn;
	u32 mtu;
	u16 cur;			/* kind of the message in progress, or 0 */
	bool nak_sent;			/* a sequence NAK went out for epsn */
	bool failed;
	/* SEND in progress: its receive WQE, scatter list and offset. */
	bool have_wqe;
	struct vroce_recv_wqe wqe;
	struct vroce_sge sge[VROCE_MAX_SGE];
	struct vroce_sgl sgl;
	u32 off;
	/*
	 * XRC target: the SRQ the request in hand names (only while it is
	 * handled), and the one have_wqe's WQE came from.
	 */
	struct vroce_srq *xsrq;
	u32 wqe_srqn;
	/* RDMA WRITE in progress. */
	struct vroce_mr *wmr;
	u32 wkey;			/* the key of wmr's checked registration */
	u64 wva;
	u32 wleft;
	u32 wlen;
	/*
	 * Executed READs and atomics, newest at res_head - 1; those from
	 * res_tail on have answers not sent yet (oldest first). Answers
	 * that come behind them in PSN order wait on "later".
	 */
	struct vroce_res res[VROCE_MAX_QP_RD_ATOM];
	u32 res_head;
	u32 res_tail;
	struct sk_buff_head later;
	bool tx_owner;			/* a context is sending answers */
	/* A READ response waits for ODP pages: on that MR's list (odp.c). */
	struct list_head odp_link;
	void *odp_on;
	u32 skbs_peak;			/* the most there were (restrack.c) */
	/* A coalesced ACK (resp_ack.c): what it acknowledges. */
	bool ack_pending;
	bool ack_queued;		/* on a CPU's list, holding a reference */
	u32 ack_psn;
	u32 ack_msn;
	struct llist_node ack_node;
};

#endif /* VROCE_RC_H */
