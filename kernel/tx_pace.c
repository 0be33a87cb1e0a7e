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
 * A packet holds the QP's vroce_qp_ref, where its flow's count is, not the
 * QP: destroy_qp does not wait for the NIC to free what it holds (a
 * stalled wire would keep a killed process in the kernel), and a packet
 * freed after it wakes nothing. The device's removal waits for its
 * vroce_qp_refs instead, so that no destructor finds the device gone and
 * the module stays until the last has run.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include "vroce.h"

#define VROCE_PACE_MIN		16
#define VROCE_PACE_DEV_MIN	64
#define VROCE_PACE_WAITING	0	/* bit of a flow's flags */

/* The lifetime part of @qp on @vdev (struct vroce_qp_ref); NULL if none. */
struct vroce_qp_ref *vroce_qp_ref_new(struct vroce_qp *qp,
				      struct vroce_dev *vdev)
{
	struct vroce_qp_ref *ref = kzalloc(sizeof(*ref), GFP_KERNEL_ACCOUNT);

	if (!ref)
		return NULL;
	refcount_set(&ref->count, 1);
	refcount_set(&ref->holders, 1);
	ref->qp = qp;
	ref->vdev = vdev;
	refcount_inc(&vdev->qp_refs);
	return ref;
}

/*
 * Drops a hold on @ref: the QP's, or a packet's when it is freed. A
 * destructor calls it under rcu_read_lock(): the last one lets the
 * device's removal, then the module's, go on, and the module is freed
 * only a grace period after that, so the destructor's code stays until
 * it has returned.
 */
void vroce_qp_ref_put(struct vroce_qp_ref *ref)
{
	struct vroce_dev *vdev = ref->vdev;

	if (!refcount_dec_and_test(&ref->holders))
		return;
	kfree_rcu(ref, rcu);
	if (refcount_dec_and_test(&vdev->qp_refs))
		complete(&vdev->qp_refs_gone);
}

void vroce_qp_refs_init(struct vroce_dev *vdev)
{
	refcount_set(&vdev->qp_refs, 1);
	init_completion(&vdev->qp_refs_gone);
}

/*
 * The device goes: waits until no packet of its QPs is left in the
 * stack. One that never is freed (a stalled wire) is reported every half
 * minute rather than waited for without a word.
 */
void vroce_qp_refs_wait(struct vroce_dev *vdev)
{
	if (refcount_dec_and_test(&vdev->qp_refs))
		return;
	while (!wait_for_completion_timeout(&vdev->qp_refs_gone, 30 * HZ))
		pr_warn_ratelimited("%s: removal waits for %d packets in the stack\n",
				    dev_name(&vdev->ibdev.dev),
				    atomic_read(&vdev->tx_stack));
}

/*
 * A packet of flow @p of @ref was freed: the flow's new count; *@wake if
 * the flow waited for it.
 */
int vroce_pace_freed(struct vroce_qp_ref *ref, struct vroce_pace *p,
		     bool *wake)
{
	int n;

	atomic_dec(&ref->vdev->tx_stack);
	/* The decrement orders before the read of the flag. */
	n = atomic_dec_return(&p->n);
	*wake = n <= VROCE_PACE_MIN / 2 &&
		test_bit(VROCE_PACE_WAITING, &p->flags) &&
		test_and_clear_bit(VROCE_PACE_WAITING, &p->flags);
	return n;
}

/* Wakes the send engine of @ref's QP, if it still has one. */
void vroce_pace_kick(struct vroce_qp_ref *ref)
{
	if (!refcount_inc_not_zero(&ref->count))
		return;		/* destroyed, or being destroyed */
	vroce_tx_kick(ref->qp);
	vroce_qp_put(ref->qp);
}

/*
 * @skb, a packet of flow @p of @qp, counts until the stack frees it,
 * when @done runs.
 */
void vroce_pace_hold(struct vroce_qp *qp, struct vroce_pace *p,
		     struct sk_buff *skb, void (*done)(struct sk_buff *skb))
{
	refcount_inc(&qp->ref->holders);
	atomic_inc(&p->n);
	atomic_inc(&to_vdev(qp->ibqp.device)->tx_stack);
	skb_shinfo(skb)->destructor_arg = qp->ref;
	skb->destructor = done;
}

/*
 * The vroce_qp_ref a paced packet counts for, taken from it: NULL the
 * second time. skb_segment_list(), which cuts up a batch of gso.c, runs
 * the destructor of each packet of the batch but the first and leaves it
 * set on the packet it sends on, so the driver's free would call it
 * again (batches carry their count on the first packet,
 * vroce_pace_batch(); this is a second guard).
 */
struct vroce_qp_ref *vroce_pace_take(struct sk_buff *skb)
{
	return xchg(&skb_shinfo(skb)->destructor_arg, NULL);
}

/* The packets of a batch (gso.c), counted on its first. */
struct vroce_pace_batch {
	struct vroce_qp_ref *ref;
	void (*done)(struct sk_buff *skb);	/* one packet's destructor */
	unsigned int n;
};

static void vroce_pace_batch_done(struct sk_buff *skb)
{
	struct vroce_pace_batch *b = xchg(&skb_shinfo(skb)->destructor_arg,
					  NULL);

	if (!b)
		return;
	rcu_read_lock();	/* vroce_qp_ref_put() */
	while (b->n--) {
		skb_shinfo(skb)->destructor_arg = b->ref;
		b->done(skb);
	}
	kfree(b);
	rcu_read_unlock();
}

/*
 * Moves what the packets of @list count for their flow (each its
 * destructor and hold on the vroce_qp_ref) onto the batch's first packet
 * @head, so that the batch counts until @head is freed and the others
 * carry no destructor: a veth or bridge may hand a batch whole to another
 * network namespace, where nothing would free them for long. Without the
 * memory for it, each packet keeps its own (vroce_pace_take() guards
 * those).
 */
void vroce_pace_batch(struct sk_buff *head, struct sk_buff *list)
{
	struct vroce_qp_ref *ref = skb_shinfo(head)->destructor_arg;
	struct vroce_pace_batch *b;
	struct sk_buff *skb;

	if (!head->destructor)
		return;
	b = vroce_fail_packet() ? NULL : kmalloc(sizeof(*b), GFP_ATOMIC);
	if (!b)
		return;
	b->ref = ref;
	b->done = head->destructor;
	b->n = 1;
	for (skb = list; skb; skb = skb->next) {
		if (skb->destructor != b->done ||
		    skb_shinfo(skb)->destructor_arg != ref)
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
	struct vroce_qp_ref *ref = vroce_pace_take(skb);
	bool wake;

	if (!ref)
		return;
	rcu_read_lock();	/* vroce_qp_ref_put() */
	vroce_pace_freed(ref, &ref->req, &wake);
	if (wake)
		vroce_pace_kick(ref);
	vroce_qp_ref_put(ref);
	rcu_read_unlock();
}

/* Whether the packets of @vdev go to a netdev with a queue to spare. */
static bool vroce_pace_applies(const struct vroce_dev *vdev)
{
	return !(vdev->ndev->priv_flags & IFF_NO_QUEUE);
}

/* @skb, a packet of @qp's requester, counts until the stack frees it. */
void vroce_pace_own(struct vroce_qp *qp, struct sk_buff *skb)
{
	if (vroce_pace_applies(to_vdev(qp->ibqp.device)))
		vroce_pace_hold(qp, &qp->ref->req, skb, vroce_pace_skb_done);
}

/*
 * Whether flow @p of @qp must let the stack free some of its packets
 * before it sends the next; if so, the stack's freeing of them wakes the
 * engine.
 */
bool vroce_pace_wait(struct vroce_qp *qp, struct vroce_pace *p)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	int high = max_t(int, READ_ONCE(vdev->ndev->tx_queue_len) / 4,
			 VROCE_PACE_DEV_MIN);

	if (atomic_read(&p->n) < VROCE_PACE_MIN ||
	    atomic_read(&vdev->tx_stack) < high || !vroce_pace_applies(vdev)) {
		/* Room again: a wait decided earlier is over. */
		if (test_bit(VROCE_PACE_WAITING, &p->flags))
			clear_bit(VROCE_PACE_WAITING, &p->flags);
		return false;
	}
	set_bit(VROCE_PACE_WAITING, &p->flags);
	/* Against the destructor: its decrement, then its read of the flag. */
	smp_mb__after_atomic();
	if (atomic_read(&p->n) > VROCE_PACE_MIN / 2)
		return true;
	clear_bit(VROCE_PACE_WAITING, &p->flags);
	return false;
}

/* Whether flow @p waits for the stack. */
bool vroce_pace_waiting(const struct vroce_pace *p)
{
	return test_bit(VROCE_PACE_WAITING, &p->flags);
}
