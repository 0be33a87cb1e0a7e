// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 over UDP: the port 4791 sockets (IPv4 and IPv6) shared by all
 * vroce devices, opened with the first device and closed with the last,
 * and the transmit of one packet: UDP and IP headers, ICRC, then the IP
 * stack, or straight to our own receive path when the destination is a
 * GID of this host (loopback).
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "vroce.h"
#include "core/roce.h"

static struct socket *vroce_sock4, *vroce_sock6;
static unsigned int vroce_net_users;	/* under vroce_lock */

static struct socket *vroce_udp_open(bool ipv6)
{
	struct udp_port_cfg cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.ipv6_v6only = ipv6,
		.local_udp_port = htons(ROCE_V2_UDP_DPORT),
	};
	struct udp_tunnel_sock_cfg tnl = {
		.encap_type = 1,
		.encap_rcv = vroce_udp_recv,
	};
	struct socket *sock;
	int err;

	vroce_gro_setup(&tnl);
	err = udp_sock_create(&init_net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(&init_net, sock, &tnl);
	vroce_gro_accept(sock->sk);
	return sock;
}

/* Caller holds vroce_lock. */
int vroce_net_get(void)
{
	struct socket *s4, *s6;

	if (vroce_net_users++)
		return 0;
	s4 = vroce_udp_open(false);
	if (IS_ERR(s4))
		goto fail4;
	s6 = vroce_udp_open(true);
	if (IS_ERR(s6))
		goto fail6;
	vroce_sock4 = s4;
	vroce_sock6 = s6;
	return 0;
fail6:
	udp_tunnel_sock_release(s4);
	s4 = s6;
fail4:
	vroce_net_users--;
	pr_err("vroce: cannot open UDP port %d (%ld): is rdma_rxe loaded?\n",
	       ROCE_V2_UDP_DPORT, PTR_ERR(s4));
	return PTR_ERR(s4);
}

/* Caller holds vroce_lock. */
void vroce_net_put(void)
{
	if (--vroce_net_users)
		return;
	udp_tunnel_sock_release(vroce_sock6);
	udp_tunnel_sock_release(vroce_sock4);
	vroce_sock4 = NULL;
	vroce_sock6 = NULL;
}

static struct dst_entry *vroce_route4(struct net_device *ndev, __be32 saddr,
				      __be32 daddr)
{
	struct flowi4 fl = {
		.flowi4_oif = ndev->ifindex,
		.saddr = saddr,
		.daddr = daddr,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt = ip_route_output_key(&init_net, &fl);

	return IS_ERR(rt) ? NULL : &rt->dst;
}

static struct dst_entry *vroce_route6(struct net_device *ndev,
				      const struct in6_addr *saddr,
				      const struct in6_addr *daddr)
{
	struct flowi6 fl = {
		.flowi6_oif = ndev->ifindex,
		.saddr = *saddr,
		.daddr = *daddr,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst;

	dst = ipv6_stub->ipv6_dst_lookup_flow(&init_net, vroce_sock6->sk,
					      &fl, NULL);
	if (IS_ERR(dst))
		return NULL;
	if (dst->error) {
		dst_release(dst);
		return NULL;
	}
	return dst;
}

static void vroce_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(ROCE_V2_UDP_DPORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

/* @segs: how many packets the skb will be cut into (IP IDs it takes). */
static void vroce_push_ip4(struct sk_buff *skb, struct dst_entry *dst,
			   const struct vroce_path *p, int segs)
{
	struct iphdr *iph;

	skb_dst_set(skb, dst);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = p->tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = p->hop_limit;
	iph->protocol = IPPROTO_UDP;
	iph->check = 0;
	iph->saddr = p->sip4;
	iph->daddr = p->dip4;
	__ip_select_ident(&init_net, iph, segs);
	skb->protocol = htons(ETH_P_IP);
}

static void vroce_push_ip6(struct sk_buff *skb, struct dst_entry *dst,
			   const struct vroce_path *p)
{
	struct ipv6hdr *ip6h;

	skb_dst_set(skb, dst);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, p->tclass, htonl(p->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = p->hop_limit;
	ip6h->saddr = p->sgid;
	ip6h->daddr = p->dgid;
	skb->protocol = htons(ETH_P_IPV6);
}

/*
 * Routes @skb along @p and puts the ICRC slot, the UDP and the IP headers
 * in front of its BTH (@segs: packets it stands for, see gso.c). Frees
 * @skb on failure. A local destination needs no route.
 */
int vroce_net_push(struct vroce_dev *vdev, struct sk_buff *skb,
		   const struct vroce_path *p, int segs)
{
	struct net_device *ndev = vdev->ndev;
	struct dst_entry *dst = NULL;

	if (!p->loopback) {
		dst = p->ipv4 ? vroce_route4(ndev, p->sip4, p->dip4) :
				vroce_route6(ndev, &p->sgid, &p->dgid);
		if (!dst) {
			kfree_skb(skb);
			return -EHOSTUNREACH;
		}
	}
	skb->dev = ndev;
	/* A packet with its payload in fragments has its ICRC slot there. */
	if (!skb_is_nonlinear(skb))
		skb_put_zero(skb, VROCE_ICRC_LEN);
	vroce_push_udp(skb, p->sport);
	if (p->ipv4)
		vroce_push_ip4(skb, dst, p, segs);
	else
		vroce_push_ip6(skb, dst, p);
	return 0;
}

/* Hands a packet with its headers and ICRC in place to the IP stack. */
int vroce_net_out(struct sk_buff *skb, const struct vroce_path *p)
{
	int err;

	if (p->ipv4)
		err = ip_local_out(&init_net, NULL, skb);
	else
		err = ip6_local_out(&init_net, NULL, skb);
	return net_xmit_eval(err);
}

/*
 * Sends @skb, which holds BTH, extension headers and payload (linear,
 * with headroom for UDP, IP and the link layer), along @p: adds the ICRC
 * slot, UDP and IP headers, computes the ICRC, and hands the packet to
 * the IP stack, or to our own receive path for a local destination
 * (without an ICRC). Consumes @skb.
 */
int vroce_net_xmit(struct vroce_dev *vdev, struct sk_buff *skb,
		   const struct vroce_path *p)
{
	int err = vroce_net_push(vdev, skb, p, 1);

	if (err)
		return err;
	/*
	 * A local destination gets the packet straight from memory, with no
	 * wire to corrupt it: no ICRC to compute (the slot stays zero) or to
	 * check.
	 */
	if (p->loopback) {
		skb_pull(skb, skb_transport_offset(skb));
		return vroce_rx_local(vdev, skb);
	}
	/* Every covered field is final now, only the IP checksum is not. */
	if ((skb_is_nonlinear(skb) ? vroce_skb_icrc(skb) :
	     vroce_icrc_generate(skb->data, skb->len)) < 0) {
		kfree_skb(skb);
		return -EINVAL;
	}
	return vroce_net_out(skb, p);
}

/*
 * Fills @p from address vector @attr, once, when the AV is set up; the
 * sender adds only its UDP source port (vroce_udp_sport()).
 */
int vroce_path_from_attr(struct vroce_dev *vdev,
			 const struct rdma_ah_attr *attr,
			 struct vroce_path *p)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	const struct ib_gid_attr *sgid = grh->sgid_attr;
	const struct ib_gid_attr *local;

	if (!sgid)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	memcpy(&p->sgid, sgid->gid.raw, sizeof(p->sgid));
	memcpy(&p->dgid, grh->dgid.raw, sizeof(p->dgid));
	p->ipv4 = ipv6_addr_v4mapped(&p->dgid);
	if (p->ipv4 != ipv6_addr_v4mapped(&p->sgid))
		return -EINVAL;
	p->sip4 = p->sgid.s6_addr32[3];
	p->dip4 = p->dgid.s6_addr32[3];
	p->tclass = grh->traffic_class;
	p->hop_limit = grh->hop_limit ?: 64;
	/* 20 bits on the wire: more would spill into IPv6's version. */
	p->flow_label = grh->flow_label & 0xfffff;
	local = rdma_find_gid_by_port(&vdev->ibdev, &grh->dgid,
				      IB_GID_TYPE_ROCE_UDP_ENCAP, VROCE_PORT,
				      NULL);
	if (!IS_ERR(local)) {
		p->loopback = true;
		rdma_put_gid_attr(local);
	}
	return 0;
}
