// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send engine of a QP: the doorbell system call sends a first batch of
 * WQEs itself, and a work item drains the rest of the SQ ring. It runs
 * while WQEs keep coming and lingers VROCE_TX_LINGER_US after the last
 * one; when it finds the ring empty after that it sets
 * VROCE_SQ_NEEDS_WAKEUP, looks once more, and only then stops, so the
 * provider needs a doorbell system call only to restart a stopped engine
 * (see vroce-abi.h). Each WQE is copied once and only the copy is
 * validated and used. A UD WQE is one packet and completes when sent;
 * RC and UC WQEs go packet by packet through the requester (req.c). An
 * RC engine that waits for acknowledgements (also a stream's, which
 * emptied the SQ with many WQEs in flight) stops without need-wakeup:
 * the completer kicks it. Of the packets of an RC or UC run, the first
 * leaves at once and the others in batches (gso.c). The work item also
 * carries out a move to ERR that the receive path or a timer asked for.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <rdma/ib_cache.h>

#include "vroce.h"
#include "core/roce.h"

/* WQEs one run of the engine sends before it lets others run. */
#define VROCE_TX_BUDGET		64
/* Runs one execution of the work item makes before it queues itself. */
#define VROCE_TX_RUNS		8
/* How long an idle engine keeps looking for WQEs before it sleeps. */
#define VROCE_TX_LINGER_US	200

static struct workqueue_struct *vroce_wq;

int vroce_tx_init(void)
{
	/*
	 * High priority: the engine does the work the application asked
	 * for, and must not queue behind the application's own busy polling
	 * (on a small machine, both ends of a benchmark spin on their CQs).
	 * It never polls on a CPU that has something else to run.
	 */
	vroce_wq = alloc_workqueue("vroce_tx",
				   WQ_UNBOUND | WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	return vroce_wq ? 0 : -ENOMEM;
}

void vroce_tx_exit(void)
{
	destroy_workqueue(vroce_wq);
}

/* Schedules the engine; true if it was not scheduled already. */
static bool vroce_tx_queue(struct vroce_qp *qp)
{
	return !READ_ONCE(qp->dying) && queue_work(vroce_wq, &qp->tx_work);
}

/*
 * Wakes the engine from outside it (a doorbell, the completer, a timer,
 * freed responses): the tx_wakeups counter counts these, not the runs
 * the engine schedules itself to go on with what it left.
 */
void vroce_tx_kick(struct vroce_qp *qp)
{
	if (vroce_tx_queue(qp))
		vroce_count(to_vdev(qp->ibqp.device), VROCE_CNT_TX_WAKEUPS, 1);
}

/* The UD destination of AH @num of the QP's PD, from this QP's port. */
static int vroce_ud_path(struct vroce_qp *qp, u32 num, struct vroce_path *p)
{
	int err = vroce_ah_dest_get(to_vdev(qp->ibqp.device), num,
				    qp->ibqp.pd, p);

	if (!err)
		p->sport = vroce_udp_sport(qp->ibqp.qp_num);
	return err;
}

/* byte_len of a send completion is undefined (IBTA): it stays 0. */
static void vroce_send_cqe(struct vroce_qp *qp, const struct vroce_send_wqe *w,
			   u8 status)
{
	struct vroce_cqe cqe = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = IB_UVERBS_WC_SEND,
		.qp_num = qp->ibqp.qp_num,
	};

	if (status == IB_WC_SUCCESS && !(w->flags & VROCE_WQE_SIGNALED) &&
	    !qp->sq_sig_all)
		return;
	vroce_cq_add(to_vcq(qp->ibqp.send_cq), &cqe, false);
}

/*
 * Builds the UD packet of @w (header @hdr, SGEs or inline data follow);
 * ERR_PTR(-EACCES) if an MR of @sgl was deregistered since its check.
 */
static struct sk_buff *vroce_ud_skb(struct vroce_qp *qp,
				    const struct vroce_send_wqe *w,
				    struct vroce_sgl *sgl, u32 len)
{
	bool imm = w->opcode == IB_UVERBS_WR_SEND_WITH_IMM;
	u32 hdr = VROCE_BTH_LEN + VROCE_DETH_LEN + (imm ? VROCE_IMMDT_LEN : 0);
	u32 pad = vroce_pad_len(len);
	struct vroce_bth bth = {
		.opcode = imm ? VROCE_OP_UD_SEND_ONLY_IMM :
				VROCE_OP_UD_SEND_ONLY,
		.se = !!(w->flags & VROCE_WQE_SOLICITED),
		.pad = pad,
		.pkey = VROCE_DEFAULT_PKEY,
		.dqpn = w->u.ud.remote_qpn & VROCE_QPN_MASK,
		.psn = qp->attrs.sq_psn,
	};
	struct vroce_deth deth = {
		/* A Q_Key with the high bit set means: use the QP's. */
		.qkey = (int)w->u.ud.remote_qkey < 0 ? qp->attrs.qkey :
						       w->u.ud.remote_qkey,
		.sqpn = qp->ibqp.qp_num,
	};
	struct sk_buff *skb;
	u8 *p;

	skb = vroce_fail_packet() ? NULL :
	      vroce_skb_alloc(VROCE_HEADROOM + hdr + len + pad +
			      VROCE_ICRC_LEN, GFP_KERNEL);
	if (!skb)
		return ERR_PTR(-ENOMEM);
	skb_reserve(skb, VROCE_HEADROOM);
	p = skb_put(skb, hdr + len + pad);
	memset(p, 0, hdr);	/* the head is not zeroed (txbuf.c) */
	vroce_bth_pack(&bth, p, VROCE_BTH_LEN);
	vroce_deth_pack(&deth, p + VROCE_BTH_LEN, VROCE_DETH_LEN);
	if (imm)
		memcpy(p + VROCE_BTH_LEN + VROCE_DETH_LEN, &w->imm_data, 4);
	if (w->flags & VROCE_WQE_INLINE) {
		memcpy(p + hdr, (const u8 *)(w + 1), len);
	} else if (vroce_sgl_read(sgl, 0, p + hdr, len)) {
		kfree_skb(skb);		/* an MR deregistered meanwhile */
		return ERR_PTR(-EACCES);
	}
	memset(p + hdr + len, 0, pad);
	qp->attrs.sq_psn = vroce_psn_add(qp->attrs.sq_psn, 1);
	return skb;
}

/*
 * Faults in the ODP pages under the first @len bytes of @sgl (odp.c); the
 * engine may sleep here. A few rounds at most: pages an invalidation
 * takes again meanwhile fail the copy, and so the WQE.
 */
static int vroce_ud_odp_fault(struct vroce_sgl *sgl, u32 len)
{
	struct vroce_mr *mr;
	int err = 0, rounds;
	u64 iova, n;

	for (rounds = 0; rounds < 2 * VROCE_MAX_SGE && !err; rounds++) {
		if (!vroce_sgl_odp_missing(sgl, 0, len, &mr, &iova, &n, NULL))
			break;
		err = vroce_odp_fault(mr, iova, min_t(u64, n, len));
		vroce_mr_put(mr);
	}
	return err;
}

/* Sends one UD WQE; returns the IB_WC status of its completion. */
static u8 vroce_send_ud(struct vroce_qp *qp, const struct vroce_send_wqe *w)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	const struct vroce_sge *sge = (const void *)(w + 1);
	struct vroce_path path;
	struct vroce_sgl sgl = { .n = 0 };
	struct sk_buff *skb;
	int len;

	if (w->opcode != IB_UVERBS_WR_SEND &&
	    w->opcode != IB_UVERBS_WR_SEND_WITH_IMM)
		return IB_WC_LOC_QP_OP_ERR;
	if (w->flags & VROCE_WQE_INLINE) {
		if (w->inline_len > qp->cap.max_inline_data)
			return IB_WC_LOC_LEN_ERR;
		len = w->inline_len;
	} else {
		if (w->num_sge > qp->cap.max_send_sge)
			return IB_WC_LOC_LEN_ERR;
		len = vroce_sgl_prepare(qp, &sgl, sge, w->num_sge, 0);
		if (len < 0)
			return -len;
	}
	if (len > vroce_mtu_to_bytes(vroce_port_mtu(vdev))) {
		vroce_sgl_release(&sgl);
		return IB_WC_LOC_LEN_ERR;	/* UD messages fit one packet */
	}
	if (vroce_ud_path(qp, w->u.ud.ah_num, &path)) {
		vroce_sgl_release(&sgl);
		return IB_WC_LOC_QP_OP_ERR;
	}
	if (vroce_ud_odp_fault(&sgl, len)) {
		vroce_sgl_release(&sgl);
		return IB_WC_LOC_PROT_ERR;
	}
	skb = vroce_ud_skb(qp, w, &sgl, len);
	vroce_sgl_release(&sgl);
	if (IS_ERR(skb))
		return PTR_ERR(skb) == -EACCES ? IB_WC_LOC_PROT_ERR :
						 IB_WC_GENERAL_ERR;
	/* UD is unreliable: a packet lost on the way still completes. */
	vroce_count(vdev, VROCE_CNT_TX_PACKETS, 1);
	vroce_count(vdev, VROCE_CNT_TX_BYTES, len);
	if ((w->u.ud.remote_qpn & VROCE_QPN_MASK) == VROCE_MCAST_QPN)
		vroce_count(vdev, VROCE_CNT_MCAST_TX_PACKETS, 1);
	vroce_net_xmit(vdev, skb, &path);
	return IB_WC_SUCCESS;
}

/* Copies the next WQE into qp->wqe_buf; false if the SQ is empty. */
static bool vroce_take_send(struct vroce_qp *qp)
{
	bool got = false;

	spin_lock_bh(&qp->sq_lock);
	if (vroce_queue_produced(&qp->sq) > 0) {
		memcpy(qp->wqe_buf, vroce_queue_slot(&qp->sq, qp->sq.own),
		       qp->sq.stride);
		qp->sq.own++;
		vroce_queue_publish_cons(&qp->sq);
		got = true;
	}
	spin_unlock_bh(&qp->sq_lock);
	return got;
}

/* One step of the engine of a UD QP: one WQE sent and completed. */
static int vroce_ud_step(struct vroce_qp *qp)
{
	const struct vroce_send_wqe *w = qp->wqe_buf;

	if (qp->attrs.state != IB_QPS_RTS)
		return VROCE_TX_STOP;
	if (!vroce_take_send(qp))
		return VROCE_TX_IDLE;
	vroce_send_cqe(qp, w, vroce_send_ud(qp, w));
	return VROCE_TX_SENT;
}

/* The engine goes to sleep only after a last look at an empty SQ. */
static bool vroce_tx_sleep(struct vroce_qp *qp)
{
	WRITE_ONCE(qp->sq.hdr->notify, VROCE_SQ_NEEDS_WAKEUP);
	/* Pairs with the provider's barrier between prod and notify. */
	smp_mb();
	if (vroce_queue_produced(&qp->sq) > 0) {
		WRITE_ONCE(qp->sq.hdr->notify, 0);
		return false;
	}
	return true;
}

/*
 * Whether an engine that found the SQ empty stays awake for what comes
 * next under load: for VROCE_TX_LINGER_US after it last sent, and only on
 * a CPU that has nothing else to run, so that polling never takes time
 * from the application (on a small machine, from the peer of a ping-pong
 * spinning on its completion queue). The doorbell system call does not
 * linger itself; it hands over to the work item. local_clock(), not
 * ktime_get(): where the clocksource is a device (HPET in a VM), reading
 * it costs more than a packet.
 */
static bool vroce_tx_linger(struct vroce_qp *qp, bool worker)
{
	if (!qp->tx_linger)
		return false;
	if (local_clock() < qp->tx_linger &&
	    (!worker || single_task_running()))
		return true;
	qp->tx_linger = 0;
	return false;
}

/*
 * Runs up to @budget steps (@worker: in the engine's work item, not in
 * the doorbell system call); caller holds the QP's state_lock. Returns
 * true if the engine may stop: it sleeps (need-wakeup set), or waits for
 * the completer or a timer to kick it; false if work remains.
 */
static bool vroce_tx_run(struct vroce_qp *qp, unsigned int budget,
			 bool worker)
{
	unsigned int sent = 0;
	int res;

	/*
	 * Only an engine in RTS takes what is posted. In ERR every post
	 * rings the doorbell, which flushes it; from RESET on, the first
	 * post after RTS must wake the engine (an engine that runs before,
	 * for the responder's READ responses, leaves the flag alone).
	 */
	if (qp->attrs.state == IB_QPS_RTS)
		WRITE_ONCE(qp->sq.hdr->notify, 0);
	while (budget--) {
		res = vroce_qp_is_ud(qp) ? vroce_ud_step(qp) :
					   vroce_req_step(qp);
		switch (res) {
		case VROCE_TX_SENT:
			/*
			 * The first packet of a run leaves at once, the rest
			 * in batches (gso.c): a ping-pong's lone packet must
			 * not wait for the end of the run (measured: on the
			 * wire, ib_send_lat 1.5x slower when it did).
			 */
			if (!sent)
				vroce_qp_xmit_flush(qp);
			/*
			 * Streams (more than one packet per run) keep the
			 * engine awake; a lone request-response packet does
			 * not, so ping-pong latency does not pay for waking
			 * the work item.
			 */
			if (++sent > 1)
				qp->tx_linger = local_clock() +
					VROCE_TX_LINGER_US * NSEC_PER_USEC;
			break;
		case VROCE_TX_WAIT:
			return true;
		case VROCE_TX_STOP:
			WRITE_ONCE(qp->sq.hdr->notify, VROCE_SQ_NEEDS_WAKEUP);
			return true;
		default:
			if (vroce_tx_linger(qp, worker))
				return false;
			if (vroce_tx_sleep(qp))
				return true;
			break;
		}
	}
	return false;
}

/* One run of the engine; what it left in the batch goes at the end. */
static bool vroce_tx_drain(struct vroce_qp *qp, unsigned int budget,
			   bool worker)
{
	bool stop = vroce_tx_run(qp, budget, worker);

	vroce_qp_xmit_flush(qp);
	return stop;
}

/* One run of the work item; true if work remains. */
static bool vroce_tx_work_run(struct vroce_qp *qp)
{
	bool drained, more = false;

	mutex_lock(&qp->state_lock);
	if (READ_ONCE(qp->err_pending))
		vroce_qp_error_move(qp);
	/* Kernel consumers post to a QP in ERR to drain it (ib_drain_qp). */
	if (!qp->ibqp.uobject && qp->attrs.state == IB_QPS_ERR)
		vroce_qp_flush(qp);
	/* The responder's READ responses, a budget per run (resp.c). */
	if (vroce_qp_reliable(qp))
		more = vroce_resp_tx(qp);
	drained = vroce_tx_drain(qp, VROCE_TX_BUDGET, true);
	/* A WQE waits for ODP pages: fault them in, then go on. */
	if (vroce_req_odp_fault(qp))
		more = true;
	mutex_unlock(&qp->state_lock);
	return !drained || more;
}

/*
 * The work item goes on with what remains for up to VROCE_TX_RUNS runs,
 * letting others have the CPU between them, before it queues itself
 * again: the pool of an unbound workqueue wakes an idle worker for every
 * queueing, and for a work item that is still running that worker only
 * finds it busy and sleeps again (measured on the wire: nearly two
 * context switches per 64 KiB message when it queued itself after every
 * run).
 */
void vroce_tx_work(struct work_struct *work)
{
	struct vroce_qp *qp = container_of(work, struct vroce_qp, tx_work);
	unsigned int runs = VROCE_TX_RUNS;

	while (vroce_tx_work_run(qp)) {
		if (!--runs) {
			vroce_tx_queue(qp);
			return;
		}
		cond_resched();
		/* Destroy waits for this work item: a dying QP runs no more. */
		if (READ_ONCE(qp->dying))
			return;
	}
}

/*
 * The doorbell: the caller's system call sends a first batch itself,
 * which spares a context switch on the latency path; whatever remains
 * goes on in the engine's work item while the caller returns.
 */
void vroce_tx_doorbell(struct vroce_qp *qp)
{
	lockdep_assert_held(&qp->state_lock);
	/* ODP pages are faulted in by the work item (vroce_tx_work()). */
	if (!vroce_tx_drain(qp, VROCE_TX_BUDGET, false) ||
	    READ_ONCE(qp->req.odp_wait))
		vroce_tx_kick(qp);
}
