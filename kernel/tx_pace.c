// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * How many of the requesters' packets the IP stack holds (its qdisc, and
 * the driver until it frees them), per QP and per device. A slow NIC's
 * qdisc holds 1000 packets: sixteen QPs that each send a window of 128
 * overflow it, and every packet it drops costs a go-back-N of the rest
 * of a window. So a QP that has VROCE_PACE_QP_MIN packets in the stack
 * sends more only while the device's total is below VROCE_PACE_DEV_HIGH;
 * otherwise it waits until the stack has freed half of its own, and the
 * destructor of that packet wakes it. Every QP keeps its MIN, so none
 * starves, and none needs another QP's packets to wake it.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include "vroce.h"

#define VROCE_PACE_QP_MIN	16
#define VROCE_PACE_DEV_HIGH	256

static void vroce_pace_skb_done(struct sk_buff *skb)
{
	struct vroce_qp *qp = skb_shinfo(skb)->destructor_arg;

	atomic_dec(&to_vdev(qp->ibqp.device)->tx_stack);
	/* The decrement orders before the read of stack_wait. */
	if (atomic_dec_return(&qp->req.stack) <= VROCE_PACE_QP_MIN / 2 &&
	    READ_ONCE(qp->req.stack_wait) && xchg(&qp->req.stack_wait, false))
		vroce_tx_kick(qp);
	vroce_qp_put(qp);
}

/* @skb, a packet of @qp's requester, counts until the stack frees it. */
void vroce_pace_own(struct vroce_qp *qp, struct sk_buff *skb)
{
	if (!refcount_inc_not_zero(&qp->ref->count))
		return;		/* being destroyed: nothing will wait */
	atomic_inc(&qp->req.stack);
	atomic_inc(&to_vdev(qp->ibqp.device)->tx_stack);
	skb_shinfo(skb)->destructor_arg = qp;
	skb->destructor = vroce_pace_skb_done;
}

/*
 * Whether @qp must let the stack free some of its packets before it
 * sends the next; if so, the stack's freeing of them wakes the engine.
 */
bool vroce_pace_wait(struct vroce_qp *qp)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);

	if (atomic_read(&qp->req.stack) < VROCE_PACE_QP_MIN ||
	    atomic_read(&vdev->tx_stack) < VROCE_PACE_DEV_HIGH)
		return false;
	WRITE_ONCE(qp->req.stack_wait, true);
	/* Against the destructor: its decrement, then its read of the flag. */
	smp_mb();
	if (atomic_read(&qp->req.stack) > VROCE_PACE_QP_MIN / 2)
		return true;
	WRITE_ONCE(qp->req.stack_wait, false);
	return false;
}
