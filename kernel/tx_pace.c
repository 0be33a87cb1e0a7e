// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * How many of a device's packets the IP stack holds (the netdev's qdisc,
 * and the driver until it frees them; a batch of gso.c counts each of its
 * packets until the stack frees its first), per flow and per device. A flow is
 * a QP's requester, or its responder's READ responses. A slow NIC's
 * qdisc holds 1000 skbs: sixteen QPs that each send a window of 128
 * packets (or 64 READ responses), many of them alone, overflow it, and
 * every packet it drops costs a go-back-N of the rest of a window. So a
 * flow that has VROCE_PACE_MIN packets in the stack sends more only while
 * the device's total is below a quarter of the netdev's tx_queue_len (at
 * least VROCE_PACE_DEV_MIN); otherwise it waits until the stack holds
 * half its MIN or less, and the destructor of the packet that brings it
 * there wakes its engine. Every flow keeps its MIN, so none starves, and
 * none needs another flow's packets to wake it. A netdev without a queue
 * of its own (veth, loopback) is not paced.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include "vroce.h"

#define VROCE_PACE_MIN		16
#define VROCE_PACE_DEV_MIN	64
#define VROCE_PACE_WAITING	0	/* bit of a flow's flags */

/*
 * A packet of a flow (its count @count, its flags @flags) of @qp was
 * freed: the flow's new count; *@wake if the flow waited for it.
 */
int vroce_pace_freed(struct vroce_qp *qp, atomic_t *count,
		     unsigned long *flags, bool *wake)
{
	int n;

	atomic_dec(&to_vdev(qp->ibqp.device)->tx_stack);
	/* The decrement orders before the read of the flag. */
	n = atomic_dec_return(count);
	*wake = n <= VROCE_PACE_MIN / 2 && test_bit(VROCE_PACE_WAITING, flags) &&
		test_and_clear_bit(VROCE_PACE_WAITING, flags);
	return n;
}

/* A packet of a flow of @qp, counted in @count, is handed to the stack. */
void vroce_pace_sent(struct vroce_qp *qp, atomic_t *count)
{
	atomic_inc(count);
	atomic_inc(&to_vdev(qp->ibqp.device)->tx_stack);
}

/*
 * The QP a paced packet counts for, taken from it: NULL the second time.
 * skb_segment_list(), which cuts up a batch of gso.c, runs the destructor
 * of each packet of the batch but the first and leaves it set on the
 * packet it sends on, so the driver's free would call it again (batches
 * carry their count on the first packet, vroce_pace_batch(); this is a
 * second guard).
 */
struct vroce_qp *vroce_pace_take(struct sk_buff *skb)
{
	return xchg(&skb_shinfo(skb)->destructor_arg, NULL);
}

/* The packets of a batch (gso.c), counted on its first. */
struct vroce_pace_batch {
	struct vroce_qp *qp;
	void (*done)(struct sk_buff *skb);	/* one packet's destructor */
	unsigned int n;
};

static void vroce_pace_batch_done(struct sk_buff *skb)
{
	struct vroce_pace_batch *b = xchg(&skb_shinfo(skb)->destructor_arg,
					  NULL);

	if (!b)
		return;
	while (b->n--) {
		skb_shinfo(skb)->destructor_arg = b->qp;
		b->done(skb);
	}
	kfree(b);
}

/*
 * Moves what the packets of @list count for their flow (each its
 * destructor and QP reference) onto the batch's first packet @head, so
 * that the batch counts until @head is freed and the others carry no
 * destructor: a veth or bridge may hand a batch whole to another network
 * namespace, where nothing would free them for long. Without the memory
 * for it, each packet keeps its own (vroce_pace_take() guards those).
 */
void vroce_pace_batch(struct sk_buff *head, struct sk_buff *list)
{
	struct vroce_qp *qp = skb_shinfo(head)->destructor_arg;
	struct vroce_pace_batch *b;
	struct sk_buff *skb;

	if (!head->destructor)
		return;
	b = vroce_fail_packet() ? NULL : kmalloc(sizeof(*b), GFP_ATOMIC);
	if (!b)
		return;
	b->qp = qp;
	b->done = head->destructor;
	b->n = 1;
	for (skb = list; skb; skb = skb->next) {
		if (skb->destructor != b->done ||
		    skb_shinfo(skb)->destructor_arg != qp)
			continue;
		skb->destructor = NULL;
		skb_shinfo(skb)->destructor_arg = NULL;
		b->n++;
	}
	skb_shinfo(head)->destructor_arg = b;
	head->destructor = vroce_pace_batch_done;
}

static void vroce_pace_skb_done(struct sk_buff *skb)
{
	struct vroce_qp *qp = vroce_pace_take(skb);
	bool wake;

	if (!qp)
		return;
	vroce_pace_freed(qp, &qp->req.stack, &qp->req.pace_flags, &wake);
	if (wake)
		vroce_tx_kick(qp);
	vroce_qp_put(qp);
}

/* Whether the packets of @vdev go to a netdev with a queue to spare. */
static bool vroce_pace_applies(const struct vroce_dev *vdev)
{
	return !(vdev->ndev->priv_flags & IFF_NO_QUEUE);
}

/*
 * @skb, a packet of @qp's requester, counts until the stack frees it.
 * Caller holds state_lock (a QP being destroyed takes no reference).
 */
void vroce_pace_own(struct vroce_qp *qp, struct sk_buff *skb)
{
	if (qp->closing || !vroce_pace_applies(to_vdev(qp->ibqp.device)) ||
	    !refcount_inc_not_zero(&qp->ref->count))
		return;
	vroce_pace_sent(qp, &qp->req.stack);
	skb_shinfo(skb)->destructor_arg = qp;
	skb->destructor = vroce_pace_skb_done;
}

/*
 * Whether a flow of @qp (@count, @flags) must let the stack free some of
 * its packets before it sends the next; if so, the stack's freeing of
 * them wakes the engine.
 */
bool vroce_pace_wait(struct vroce_qp *qp, atomic_t *count,
		     unsigned long *flags)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	int high = max_t(int, READ_ONCE(vdev->ndev->tx_queue_len) / 4,
			 VROCE_PACE_DEV_MIN);

	if (atomic_read(count) < VROCE_PACE_MIN ||
	    atomic_read(&vdev->tx_stack) < high || !vroce_pace_applies(vdev)) {
		/* Room again: a wait decided earlier is over. */
		if (test_bit(VROCE_PACE_WAITING, flags))
			clear_bit(VROCE_PACE_WAITING, flags);
		return false;
	}
	set_bit(VROCE_PACE_WAITING, flags);
	/* Against the destructor: its decrement, then its read of the flag. */
	smp_mb__after_atomic();
	if (atomic_read(count) > VROCE_PACE_MIN / 2)
		return true;
	clear_bit(VROCE_PACE_WAITING, flags);
	return false;
}

/* Whether a flow (@flags) waits for the stack. */
bool vroce_pace_waiting(const unsigned long *flags)
{
	return test_bit(VROCE_PACE_WAITING, flags);
}
