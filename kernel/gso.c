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
 * headers, so it is computed before the batch is formed, over the headers
 * each segment will carry: its lengths and, for IPv4, its IP ID, which
 * segmentation numbers on from the first. The first packet is the GSO
 * skb's head, the others hang from its frag_list; each is a linear skb
 * with room in front of its BTH, which its segment reuses for its headers
 * without a copy (the skb gives up its header with
 * __skb_header_release()). Packets with page fragments, a local peer, and
 * a stretch of one go out one by one as before.
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

	if (skb_is_nonlinear(skb) || skb->len > head->len ||
	    n >= VROCE_GSO_MAX_SEGS ||
	    bytes + skb->len + VROCE_ICRC_LEN > VROCE_GSO_MAX_BYTES)
		return false;
	next = skb_peek_next((struct sk_buff *)skb, q);
	return skb->len == head->len || !next || next->len != skb->len;
}

/*
 * Computes the ICRC of @skb (BTH onward, ICRC slot at the end) as the
 * @k-th segment of a batch whose head @head has its headers in place.
 */
static int vroce_gso_member_icrc(struct sk_buff *skb,
				 const struct sk_buff *head, bool ipv4,
				 unsigned int k)
{
	unsigned int nh = skb_transport_offset(head);
	unsigned int hlen = nh + sizeof(struct udphdr);
	struct udphdr *uh;
	int err;

	skb_put_zero(skb, VROCE_ICRC_LEN);
	if (skb_headroom(skb) < hlen)
		return -EINVAL;
	memcpy(__skb_push(skb, hlen), head->data, hlen);
	uh = (struct udphdr *)(skb->data + nh);
	uh->len = htons(skb->len - nh);
	if (ipv4) {
		struct iphdr *iph = (struct iphdr *)skb->data;

		iph->tot_len = htons(skb->len);
		iph->id = htons(ntohs(iph->id) + k);
	} else {
		((struct ipv6hdr *)skb->data)->payload_len =
			htons(skb->len - sizeof(struct ipv6hdr));
	}
	err = vroce_icrc_generate(skb->data, skb->len);
	__skb_pull(skb, hlen);
	return err < 0 ? err : 0;
}

/* Makes @head, headers and ICRC in place, the GSO skb of the batch. */
static void vroce_gso_seal(struct sk_buff *head, struct sk_buff *list,
			   unsigned int n, const struct vroce_path *p)
{
	unsigned int seg = head->len - skb_transport_offset(head) -
			   sizeof(struct udphdr);
	struct sk_buff *skb;
	struct udphdr *uh;
	u32 ulen;

	skb_shinfo(head)->frag_list = list;
	for (skb = list; skb; skb = skb->next) {
		head->len += skb->len;
		head->data_len += skb->len;
		head->truesize += skb->truesize;
	}
	uh = udp_hdr(head);
	ulen = head->len - skb_transport_offset(head);
	uh->len = htons(ulen);
	/* As UDP's own GSO: the checksum is the stack's to finish. */
	if (p->ipv4)
		uh->check = ~csum_tcpudp_magic(p->sip4, p->dip4, ulen,
					       IPPROTO_UDP, 0);
	else
		uh->check = ~csum_ipv6_magic(&p->sgid, &p->dgid, ulen,
					     IPPROTO_UDP, 0);
	head->ip_summed = CHECKSUM_PARTIAL;
	head->csum_start = skb_transport_header(head) - head->head;
	head->csum_offset = offsetof(struct udphdr, check);
	skb_shinfo(head)->gso_size = seg;
	/*
	 * DODGY: only a device that has GSO_ROBUST besides UDP GSO and
	 * frag_list support may take the batch whole; for every other the
	 * stack cuts it in software before it reaches the driver. A NIC
	 * that cut it itself might number the IPv4 IDs otherwise than the
	 * ICRCs assume, and a virtual device (veth, lo) would carry it
	 * whole into another namespace, where a READ response's destructor
	 * on a member would wait for the whole batch to be freed.
	 */
	skb_shinfo(head)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_DODGY;
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
		if (vroce_gso_member_icrc(skb, head, p->ipv4, ++k))
			goto drop;
		__skb_header_release(skb);
	}
	vroce_gso_seal(head, list, n, p);
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
 * each stretch that may form a batch as one, the others one by one.
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

/* Sends what vroce_qp_xmit_batch() queued; state_lock held. */
void vroce_qp_xmit_flush(struct vroce_qp *qp)
{
	vroce_xmit_list(to_vdev(qp->ibqp.device), &qp->tx_batch, &qp->path);
}
