// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Batched receive: GRO for RoCE, the mirror of gso.c. The UDP tunnel GRO
 * hook of our port 4791 sockets chains the RC and UC packets of one flow
 * (same addresses and UDP ports) that arrive in one NAPI poll behind the
 * first: routing, netfilter, the UDP socket lookup and the call into
 * rx.c then run once per chain instead of once per packet. A packet is
 * never changed: each chained skb keeps its own IP and UDP headers in
 * front of its BTH, so rx.c cuts the chain apart again and checks every
 * packet as it came off the wire, ICRC included. Only the first packet's
 * IP and UDP length fields, which GRO rewrites to the chain's length, are
 * put back.
 *
 * The chain follows the rules of the kernel's own frag_list GRO: packets
 * of one length (the last may be shorter), plain IPv4 or IPv6 headers
 * with one TOS and TTL and, for IPv4, consecutive IDs, no UDP checksum;
 * a packet of the flow that cannot join flushes the chain before it, so
 * no packet overtakes another of its flow. Only packets for a local
 * address are chained, and a chain is a frag_list GSO skb like the
 * kernel's, so whatever else it reaches (a bridge, a redirect, another
 * socket) takes it apart into the same packets.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/gro.h>
#include <net/ip.h>
#include <net/ipv6_stubs.h>
#include <net/udp_tunnel.h>

#include "compat.h"
#include "vroce.h"
#include "core/opcode.h"
#include "core/roce.h"

/* At most this many packets in a chain. */
#define VROCE_GRO_MAX_SEGS	64

static bool vroce_gro_on = true;
module_param_named(gro, vroce_gro_on, bool, 0644);
MODULE_PARM_DESC(gro, "Chain received RC/UC packets of one flow in GRO (default 1)");

/* Where GRO found @skb's (outer) IP header: its offset from skb->data. */
static u32 vroce_gro_nhoff(const struct sk_buff *skb)
{
	return vroce_gro_network_offset(skb);
}

/*
 * The IP header at @ip (BTH at @bth bytes from it) is IPv4 without
 * options or IPv6 without extension headers, and carries UDP.
 */
static bool vroce_gro_plain_ip(const u8 *ip, u32 bth)
{
	if (ip[0] == 0x45)
		return bth == sizeof(struct iphdr) + sizeof(struct udphdr) &&
		       ip[offsetof(struct iphdr, protocol)] == IPPROTO_UDP;
	return (ip[0] >> 4) == 6 &&
	       bth == sizeof(struct ipv6hdr) + sizeof(struct udphdr) &&
	       ip[offsetof(struct ipv6hdr, nexthdr)] == IPPROTO_UDP;
}

/*
 * @skb, its IP header at @ip and BTH at @bth bytes from it, is a packet
 * a chain can take: RC or UC, plain IP, a UDP length that is the
 * packet's, no UDP checksum (a chain could not keep one).
 */
static bool vroce_gro_wanted(struct sk_buff *skb, const u8 *ip, u32 bth)
{
	const struct udphdr *uh = (const struct udphdr *)(ip + bth) - 1;
	const struct vroce_opcode_info *op = vroce_opcode_info(ip[bth]);

	if (!READ_ONCE(vroce_gro_on) || NAPI_GRO_CB(skb)->flush ||
	    skb->sk || skb->destructor || !op || uh->check ||
	    ntohs(uh->len) != skb_gro_len(skb) + sizeof(*uh) ||
	    !vroce_gro_plain_ip(ip, bth))
		return false;
	return op->transport == VROCE_TRANSPORT_RC ||
	       op->transport == VROCE_TRANSPORT_UC;
}

/*
 * @p, held by GRO but not of @skb's flow to GRO, has its addresses and
 * UDP ports all the same (IP header at @ip, BTH @bth bytes after it). GRO
 * tells packets with a UDP checksum from those without, so such a @p is
 * a packet of the same flow, which @skb must not overtake; it is only
 * ever completed early, never chained to.
 */
static bool vroce_gro_same_ports(struct sk_buff *p, struct sk_buff *skb,
				 const u8 *ip, u32 bth)
{
	u32 nh = vroce_gro_nhoff(p);
	const u8 *ip2 = p->data + nh;

	if (p->dev != skb->dev || p->protocol != skb->protocol ||
	    skb_vlan_tag_present(p) != skb_vlan_tag_present(skb) ||
	    p->vlan_proto != skb->vlan_proto || p->vlan_tci != skb->vlan_tci ||
	    skb_headlen(p) < nh + bth ||
	    !vroce_gro_plain_ip(ip2, bth))
		return false;
	if (ip2[0] != ip[0] ||
	    memcmp(ip2 + bth - sizeof(struct udphdr),
		   ip + bth - sizeof(struct udphdr), 4))
		return false;
	if (ip[0] == 0x45)
		return !memcmp(ip2 + offsetof(struct iphdr, saddr),
			       ip + offsetof(struct iphdr, saddr), 8);
	return !memcmp(ip2 + offsetof(struct ipv6hdr, saddr),
		       ip + offsetof(struct ipv6hdr, saddr), 32);
}

/* The packet is for an address of this host, not one we route. */
static bool vroce_gro_for_us(struct sk_buff *p)
{
	const u8 *ip = p->data + vroce_gro_nhoff(p);
	struct net *net = dev_net(p->dev);

	if (ip[0] == 0x45)
		return inet_addr_type_dev_table(net, p->dev,
						((const struct iphdr *)ip)->daddr) ==
		       RTN_LOCAL;
	if (!ipv6_stub->ipv6_dev_find)
		return false;
	return ipv6_stub->ipv6_dev_find(net,
					&((const struct ipv6hdr *)ip)->daddr,
					p->dev) != NULL;
}

/*
 * The IPv4 ID at @ip is the one after the last of chain @p (first header
 * @ip2): if the chain is ever cut up in software, the stack numbers the
 * packets on from the first, and the ICRC covers the ID.
 */
static bool vroce_gro_next_id(struct sk_buff *p, const u8 *ip, const u8 *ip2)
{
	u16 id = ntohs(((const struct iphdr *)ip)->id);
	u16 first = ntohs(((const struct iphdr *)ip2)->id);

	return id == (u16)(first + NAPI_GRO_CB(p)->count);
}

/*
 * @skb (IP header at @ip) may join the chain @p, of its flow to GRO: no
 * longer than its packets, the same TOS/traffic class and TTL/hop limit,
 * for IPv4 the next IP ID, and room left.
 */
static bool vroce_gro_fits(struct sk_buff *p, struct sk_buff *skb,
			   const u8 *ip)
{
	const u8 *ip2 = p->data + vroce_gro_nhoff(p);
	u32 len = skb_gro_len(skb);

	if (NAPI_GRO_CB(p)->flush || len > skb_shinfo(p)->gso_size)
		return false;
	if (NAPI_GRO_CB(p)->count >= VROCE_GRO_MAX_SEGS ||
	    p->len + len >= GRO_LEGACY_MAX_SIZE)
		return false;
	if (ip[0] == 0x45 ? ip[1] != ip2[1] || ip[8] != ip2[8] ||
			    !vroce_gro_next_id(p, ip, ip2) :
			    ip[0] != ip2[0] || ip[7] != ip2[7] ||
			    (ip[1] & 0xf0) != (ip2[1] & 0xf0))
		return false;
	return NAPI_GRO_CB(p)->count > 1 || vroce_gro_for_us(p);
}

/*
 * Chains @skb, its data from the BTH on, behind the packets of @p; its
 * network header stays on its own IP header.
 */
static void vroce_gro_chain(struct sk_buff *p, struct sk_buff *skb, u32 nh)
{
	struct sk_buff *last = NAPI_GRO_CB(p)->last;

	skb_set_network_header(skb, nh);
	__skb_pull(skb, skb_gro_offset(skb));
	if (last == p)
		skb_shinfo(p)->frag_list = skb;
	else
		last->next = skb;
	NAPI_GRO_CB(p)->last = skb;
	NAPI_GRO_CB(p)->count++;
	p->data_len += skb->len;
	p->len += skb->len;
	p->truesize += skb->truesize;
	NAPI_GRO_CB(skb)->same_flow = 1;
}

/*
 * The gro_receive of our sockets, called with skb's GRO offset at the
 * BTH. Returns the chain to complete now, if any; a NULL return with
 * same_flow unset lets GRO hold @skb as the start of a new chain.
 */
static struct sk_buff *vroce_gro_receive(struct sock *sk,
					 struct list_head *head,
					 struct sk_buff *skb)
{
	u32 off = skb_gro_offset(skb), nh = vroce_gro_nhoff(skb), bth;
	struct sk_buff *p, *flow = NULL;
	const u8 *h, *ip;
	bool same = false;

	h = skb_gro_header(skb, off + VROCE_BTH_LEN, 0);
	if (!h || nh >= off)
		goto flush;
	ip = h + nh;
	bth = off - nh;
	list_for_each_entry(p, head, list) {
		same = NAPI_GRO_CB(p)->same_flow;
		if (same || vroce_gro_same_ports(p, skb, ip, bth)) {
			flow = p;
			break;
		}
	}
	if (!vroce_gro_wanted(skb, ip, bth))
		goto flush;
	if (!flow)
		return NULL;
	if (!same || !vroce_gro_fits(flow, skb, ip))
		return flow;
	if (!pskb_may_pull(skb, off))
		goto flush;
	vroce_gro_chain(flow, skb, nh);
	/* A shorter packet ends a chain. */
	if (skb->len < skb_shinfo(flow)->gso_size)
		return flow;
	return NULL;
flush:
	NAPI_GRO_CB(skb)->flush = 1;
	return flow;
}

/*
 * Makes a chain a frag_list GSO skb whose packets each keep their own
 * headers (UDP_L4 | FRAGLIST), as the kernel's own frag_list GRO does, so
 * that anything else it reaches (a bridge, a redirect, another socket)
 * takes it apart into the same packets; UDP_TUNNEL lets our socket, an
 * encap socket that accepts such skbs (vroce_gro_setup()), take it whole.
 */
static int vroce_gro_complete(struct sock *sk, struct sk_buff *skb, int nhoff)
{
	skb_shinfo(skb)->gso_type |= SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	skb_shinfo(skb)->gso_segs = NAPI_GRO_CB(skb)->count;
	skb->encapsulation = 0;
	/* No UDP checksum in any of its packets. */
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	skb->csum_level = 0;
	return 0;
}

void vroce_gro_setup(struct udp_tunnel_sock_cfg *cfg)
{
	cfg->gro_receive = vroce_gro_receive;
	cfg->gro_complete = vroce_gro_complete;
}

/* Our socket takes chains whole (vroce_gro_complete()). */
void vroce_gro_accept(struct sock *sk)
{
	udp_allow_gso(sk);
}

/* @skb, data at its UDP header, is a chain vroce_gro_complete() made. */
static bool vroce_gro_is_chain(struct sk_buff *skb)
{
	u32 type = SKB_GSO_UDP_TUNNEL | SKB_GSO_FRAGLIST;

	return skb_has_frag_list(skb) && skb_is_gso(skb) &&
	       (skb_shinfo(skb)->gso_type & type) == type;
}

/* Gives the first packet of a chain its own IP and UDP lengths back. */
static void vroce_gro_fix_lengths(struct sk_buff *skb)
{
	u32 hdr = skb->data - skb_network_header(skb);
	struct iphdr *iph = ip_hdr(skb);
	__be16 len;

	udp_hdr(skb)->len = htons(skb->len);
	if (iph->version == 4) {
		len = htons(skb->len + hdr);
		csum_replace2(&iph->check, iph->tot_len, len);
		iph->tot_len = len;
	} else {
		ipv6_hdr(skb)->payload_len =
			htons(skb->len + hdr - sizeof(struct ipv6hdr));
	}
}

/*
 * Cuts a chain apart: @skb is left as its first packet, and the others
 * are returned as a list linked by ->next, each with data at its own UDP
 * header. Anything else is returned as is, with an empty list. On error
 * (no memory) @skb is freed and ERR_PTR(-ENOMEM) returned.
 */
struct sk_buff *vroce_gro_split(struct sk_buff *skb)
{
	struct sk_buff *segs, *seg;
	u32 rest = 0, truesize = 0;

	if (!vroce_gro_is_chain(skb))
		return NULL;
	/* Someone (a packet tap) shares it: make ours private. */
	if (vroce_fail_packet() || skb_unclone(skb, GFP_ATOMIC)) {
		kfree_skb(skb);
		return ERR_PTR(-ENOMEM);
	}
	segs = skb_shinfo(skb)->frag_list;
	for (seg = segs; seg; seg = seg->next) {
		rest += seg->len;
		truesize += seg->truesize;
	}
	if (rest > skb->data_len || skb->len - rest < sizeof(struct udphdr))
		return NULL;	/* not ours after all: rx.c drops it */
	skb_shinfo(skb)->frag_list = NULL;
	skb->len -= rest;
	skb->data_len -= rest;
	skb->truesize -= min(truesize, skb->truesize);
	skb_gso_reset(skb);
	skb->encapsulation = 0;
	vroce_gro_fix_lengths(skb);
	return segs;
}

/*
 * The next packet of a list vroce_gro_split() returned, with its data at
 * its UDP header, or NULL at the end. *@segs moves on.
 */
struct sk_buff *vroce_gro_next(struct vroce_dev *vdev, struct sk_buff **segs)
{
	struct sk_buff *seg;

	while ((seg = *segs)) {
		*segs = seg->next;
		/*
		 * Shared with a packet tap, whose copy of the chain links it by
		 * the same ->next: leave that alone and read from a clone of
		 * our own. Cutting the tap's list would leak every packet after
		 * this one when the tap frees it. Only one we hold alone is
		 * unlinked.
		 */
		seg = skb_share_check(seg, GFP_ATOMIC);
		if (!seg) {
			vroce_rx_dropped(vdev, U32_MAX, -1, 0, VROCE_DROP_NOMEM,
					 1);
			continue;
		}
		seg->next = NULL;
		__skb_push(seg, sizeof(struct udphdr));
		return seg;
	}
	return NULL;
}
