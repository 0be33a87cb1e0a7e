// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Batched transmit of a connected QP's packets. The requester queues the
 * packets of one run of the send engine (all but the first, which tx.c
 * sends at once); at the end of the run, or at 32 packets, each
 * stretch of equally long packets (the last may be shorter) leaves as one
 * UDP GSO skb, which the stack cuts back into the same packets just
 * before the driver: one route lookup, one pass through IP, netfilter and the
 * qdisc, and one doorbell of the NIC for the stretch instead of one for
 * every packet.
 *
 * Every packet keeps its own BTH and ICRC. The ICRC covers the IP and UDP
 * headers, so each packet gets its own complete headers before the batch
 * is formed: its lengths and, for IPv4, its IP ID, which segmentation
 * numbers on from the first. The first packet is the GSO skb's head, the
 * others hang from its frag_list, each a linear skb with its headers in
 * front of its BTH. The batch is a frag_list GSO skb (SKB_GSO_FRAGLIST),
 * so the stack takes it apart along that list, puts the MAC header in
 * front of each packet and leaves the rest as it is: like every RoCE
 * packet vroce sends, each keeps a UDP checksum of 0 (the ICRC protects
 * it), so neither end spends a pass over the data on one. Packets with
 * page fragments, a local peer, and a stretch of one go out one by one as
 * before.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip6_checksum.h>
#include <net/checksum.h>

#include "vroce.h"
#include "core/roce.h"

/* At most this many packets, and bytes of IP payload, in one batch. */
#define VROCE_GSO_MAX_SEGS	32
#define VROCE_GSO_MAX_BYTES	60000

/*
 * Whether @skb, next on @q, may stand in a batch whose first packet is
 * @head. A shorter packet ends the batch, unless it starts a stretch of
 * its own (a FIRST with its RETH is longer than the MIDDLEs after it).
 */
static bool vroce_gso_joins(const struct sk_buff_head *q,
			    const struct sk_buff *head,
			    const struct sk_buff *skb, unsigned int n,
			    unsigned int bytes)
{
	const struct sk_buff *next;

	/* One flow's packets: all of them paced alike, or none. */
	if (skb_is_nonlinear(skb) || skb->len > head->len ||
	    skb->destructor != head->destructor ||
	    n >= VROCE_GSO_MAX_SEGS ||
	    bytes + skb->len + VROCE_ICRC_LEN > VROCE_GSO_MAX_BYTES)
		return false;
	next = skb_peek_next((struct sk_buff *)skb, q);
	return skb->len == head->len || !next || next->len != skb->len;
}

/*
 * Gives @skb (BTH onward, ICRC slot at the end) the headers of the @k-th
 * packet of a batch whose first packet @head has its headers in place,
 * and its ICRC. Its data stays at the BTH; its headers are in front.
 */
static int vroce_gso_member_headers(struct sk_buff *skb,
				    const struct sk_buff *head, bool ipv4,
				    unsigned int k)
{
	unsigned int nh = skb_transport_offset(head);
	unsigned int hlen = nh + sizeof(struct udphdr);
	struct udphdr *uh;
	int err;

	skb_put_zero(skb, VROCE_ICRC_LEN);
	if (skb_headroom(skb) < hlen + LL_RESERVED_SPACE(head->dev))
		return -EINVAL;
	memcpy(__skb_push(skb, hlen), head->data, hlen);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, nh);
	uh = udp_hdr(skb);
	uh->len = htons(skb->len - nh);
	if (ipv4) {
		struct iphdr *iph = ip_hdr(skb);

		iph->tot_len = htons(skb->len);
		iph->id = htons(ntohs(iph->id) + k);
		ip_send_check(iph);
	} else {
		ipv6_hdr(skb)->payload_len =
			htons(skb->len - sizeof(struct ipv6hdr));
	}
	err = vroce_icrc_generate(skb->data, skb->len);
	__skb_pull(skb, hlen);
	return err < 0 ? err : 0;
}

/* Makes @head, headers and ICRC in place, the GSO skb of the batch. */
static void vroce_gso_seal(struct sk_buff *head, struct sk_buff *list,
			   unsigned int n)
{
	unsigned int seg = head->len - skb_transport_offset(head) -
			   sizeof(struct udphdr);
	struct sk_buff *skb;

	skb_shinfo(head)->frag_list = list;
	for (skb = list; skb; skb = skb->next) {
		head->len += skb->len;
		head->data_len += skb->len;
		head->truesize += skb->truesize;
	}
	/*
	 * As in any UDP GSO skb, the UDP length of the head covers the whole
	 * batch, as IP's will (ip_local_out()): a receiver that gets the
	 * batch whole (a veth, loopback) would otherwise cut it to its first
	 * packet. Segmentation gives the first packet its own length back
	 * (8 + gso_size), the one its ICRC covers.
	 */
	udp_hdr(head)->len = htons(head->len - skb_transport_offset(head));
	/* The UDP checksum stays 0, in every packet of the batch. */
	head->ip_summed = CHECKSUM_UNNECESSARY;
	skb_shinfo(head)->gso_size = seg;
	skb_shinfo(head)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	skb_shinfo(head)->gso_segs = n;
}

/*
 * Sends @head and the @n - 1 packets of @rest (each BTH onward, none
 * longer than @head, all of them linear) along @p as one GSO skb.
 */
static void vroce_gso_xmit(struct vroce_dev *vdev, struct sk_buff *head,
			   struct sk_buff_head *rest, unsigned int n,
			   const struct vroce_path *p)
{
	struct sk_buff *skb, *list = NULL, **tail = &list;
	unsigned int k = 0;

	if (vroce_net_push(vdev, head, p, n)) {
		__skb_queue_purge(rest);
		return;
	}
	if (vroce_icrc_generate(head->data, head->len) < 0)
		goto drop;
	while ((skb = __skb_dequeue(rest))) {
		*tail = skb;
		tail = &skb->next;
		if (vroce_gso_member_headers(skb, head, p->ipv4, ++k))
			goto drop;
	}
	vroce_pace_batch(head, list);
	vroce_gso_seal(head, list, n);
	vroce_count(vdev, VROCE_CNT_TX_BATCHES, 1);
	vroce_net_out(head, p);
	return;
drop:
	kfree_skb_list(list);
	__skb_queue_purge(rest);
	kfree_skb(head);
}

/*
 * Sends the packets of @q (each BTH onward, counted) along @p, in order:
 * each stretch that may form a batch as one, the others one by one. @p
 * does not change meanwhile (the caller's copy from vroce_qp_path(), or
 * the QP's own under its state_lock): every decision for every packet
 * (local or not, IPv4 or IPv6, the route and the headers) comes from the
 * same path.
 */
void vroce_xmit_list(struct vroce_dev *vdev, struct sk_buff_head *q,
		     const struct vroce_path *p)
{
	struct sk_buff *head, *skb;
	struct sk_buff_head rest;
	unsigned int n, bytes;

	__skb_queue_head_init(&rest);
	while ((head = __skb_dequeue(q))) {
		n = 1;
		bytes = head->len + VROCE_ICRC_LEN;
		while (!p->loopback && !skb_is_nonlinear(head) &&
		       (skb = skb_peek(q)) &&
		       vroce_gso_joins(q, head, skb, n, bytes)) {
			__skb_unlink(skb, q);
			__skb_queue_tail(&rest, skb);
			n++;
			bytes += skb->len + VROCE_ICRC_LEN;
			if (skb->len < head->len)
				break;	/* only the last may be shorter */
		}
		if (n > 1)
			vroce_gso_xmit(vdev, head, &rest, n, p);
		else
			vroce_net_xmit(vdev, head, p);
	}
}

/* Queues a packet of @qp for vroce_qp_xmit_flush(); state_lock held. */
void vroce_qp_xmit_batch(struct vroce_qp *qp, struct sk_buff *skb)
{
	vroce_qp_count_tx(qp, skb);
	__skb_queue_tail(&qp->tx_batch, skb);
	/* A full batch need not wait for the end of the run. */
	if (skb_queue_len(&qp->tx_batch) >= VROCE_GSO_MAX_SEGS)
		vroce_qp_xmit_flush(qp);
}

/*
 * Sends what vroce_qp_xmit_batch() queued. The state_lock held keeps
 * modify_qp, the path's only writer, out: no copy of it is needed.
 */
void vroce_qp_xmit_flush(struct vroce_qp *qp)
{
	lockdep_assert_held(&qp->state_lock);
	if (!skb_queue_empty(&qp->tx_batch))
		vroce_xmit_list(to_vdev(qp->ibqp.device), &qp->tx_batch,
				&qp->path);
}
