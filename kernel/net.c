// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 over UDP: the port 4791 sockets (IPv4 and IPv6) of each network
 * namespace, shared by the vroce devices whose netdevs are in it, opened
 * with the first such device and closed with the last or with the
 * namespace, and the transmit of one packet in the netdev's namespace:
 * UDP and IP headers, ICRC, then the IP stack, or straight to our own
 * receive path when the destination is a GID of this host (loopback).
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

/*
 * The port 4791 sockets of one network namespace, shared by the vroce
 * devices whose netdevs are in it. A namespace that goes away takes its
 * sockets with it (vroce_net_ns_exit()); its devices, removed when their
 * netdevs unregister, may outlive that by a moment and only send, which
 * needs no socket.
 */
struct vroce_udp {
	struct list_head node;	/* on vroce_udps while its namespace lives */
	const struct net *net;	/* compared, never followed */
	struct socket *sock4, *sock6;
	unsigned int users;	/* devices in vdev->udp */
};

static LIST_HEAD(vroce_udps);
static DEFINE_MUTEX(vroce_udp_lock);

static struct socket *vroce_udp_open(struct net *net, bool ipv6)
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
	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(net, sock, &tnl);
	vroce_gro_accept(sock->sk);
	return sock;
}

static void vroce_udp_close(struct vroce_udp *udp)
{
	if (udp->sock6)
		udp_tunnel_sock_release(udp->sock6);
	if (udp->sock4)
		udp_tunnel_sock_release(udp->sock4);
	udp->sock4 = NULL;
	udp->sock6 = NULL;
}

static struct vroce_udp *vroce_udp_new(struct net *net)
{
	struct vroce_udp *udp = kzalloc(sizeof(*udp), GFP_KERNEL);
	struct socket *sock;

	if (!udp)
		return ERR_PTR(-ENOMEM);
	udp->net = net;
	sock = vroce_udp_open(net, false);
	if (IS_ERR(sock))
		goto fail;
	udp->sock4 = sock;
	sock = vroce_udp_open(net, true);
	if (IS_ERR(sock))
		goto fail;
	udp->sock6 = sock;
	list_add(&udp->node, &vroce_udps);
	return udp;
fail:
	vroce_udp_close(udp);
	kfree(udp);
	pr_err("vroce: cannot open UDP port %d (%ld)%s\n", ROCE_V2_UDP_DPORT,
	       PTR_ERR(sock),
	       net_eq(net, &init_net) ? ": is rdma_rxe loaded?" : "");
	return ERR_CAST(sock);
}

/* Gives @vdev the sockets of its netdev's namespace, opening them first. */
int vroce_net_get(struct vroce_dev *vdev)
{
	struct net *net = dev_net(vdev->ndev);
	struct vroce_udp *udp;
	int err = 0;

	mutex_lock(&vroce_udp_lock);
	list_for_each_entry(udp, &vroce_udps, node)
		if (udp->net == net)
			goto found;
	udp = vroce_udp_new(net);
	if (IS_ERR(udp)) {
		err = PTR_ERR(udp);
		goto out;
	}
found:
	udp->users++;
	vdev->udp = udp;
out:
	mutex_unlock(&vroce_udp_lock);
	return err;
}

/*
 * Drops @vdev's hold on its namespace's sockets, closing them with the
 * last (outside the lock: each close waits for an RCU grace period).
 */
void vroce_net_put(struct vroce_dev *vdev)
{
	struct vroce_udp *udp = vdev->udp;
	bool last;

	vdev->udp = NULL;
	mutex_lock(&vroce_udp_lock);
	last = !--udp->users;
	/* Off the list already if its namespace has gone. */
	if (last)
		list_del_init(&udp->node);
	mutex_unlock(&vroce_udp_lock);
	if (last) {
		vroce_udp_close(udp);
		kfree(udp);
	}
}

/* Whether @vdev's netdev has left the namespace whose sockets it holds. */
bool vroce_net_moved(struct vroce_dev *vdev)
{
	return vdev->udp && !net_eq(dev_net(vdev->ndev), vdev->udp->net);
}

/*
 * A namespace goes: its sockets must close now. Our subsystem operations
 * run after the device ones, so its netdevs are gone already: a virtual
 * one was unregistered, which waited for our device's removal to give
 * the netdev back, but that removal may still wait for its last packets;
 * a physical one was moved to init_net, and the removal of its vroce
 * device is only queued. Either way an entry left here is taken off the
 * list, and waits for that device's put.
 */
static void vroce_net_ns_exit(struct net *net)
{
	struct vroce_udp *udp, *found = NULL;
	struct vroce_udp gone = { };

	mutex_lock(&vroce_udp_lock);
	list_for_each_entry(udp, &vroce_udps, node) {
		if (udp->net != net)
			continue;
		found = udp;
		gone.sock4 = udp->sock4;
		gone.sock6 = udp->sock6;
		udp->sock4 = NULL;
		udp->sock6 = NULL;
		list_del_init(&udp->node);
		break;
	}
	mutex_unlock(&vroce_udp_lock);
	if (found)
		vroce_udp_close(&gone);
}

static struct pernet_operations vroce_net_ops = {
	.exit = vroce_net_ns_exit,
};

int vroce_net_init(void)
{
	return register_pernet_subsys(&vroce_net_ops);
}

void vroce_net_exit(void)
{
	unregister_pernet_subsys(&vroce_net_ops);
}

static struct dst_entry *vroce_route4(struct net *net, struct net_device *ndev,
				      const struct vroce_path *p)
{
	struct flowi4 fl = {
		.flowi4_oif = ndev->ifindex,
		.saddr = p->sip4,
		.daddr = p->dip4,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt = ip_route_output_key(net, &fl);

	return IS_ERR(rt) ? NULL : &rt->dst;
}

static struct dst_entry *vroce_route6(struct net *net, struct net_device *ndev,
				      const struct vroce_path *p)
{
	struct flowi6 fl = {
		.flowi6_oif = ndev->ifindex,
		.saddr = p->sgid,
		.daddr = p->dgid,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst;

	dst = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl, NULL);
	if (IS_ERR(dst))
		return NULL;
	if (dst->error) {
		dst_release(dst);
		return NULL;
	}
	return dst;
}

/*
 * dst_cache_reset(), which stores the current jiffies: an entry stored in
 * that jiffy or before is stale. Two resets at once (an AV change and a
 * reader that saw it) could store their jiffies out of order and so make
 * a stale entry valid again; this one only moves the mark forward.
 */
static void vroce_routes_reset(struct vroce_routes *routes)
{
	unsigned long mark = READ_ONCE(routes->cache.reset_ts);
	unsigned long now = jiffies;

	do {
		if (!time_after(now, mark))
			return;
	} while (!try_cmpxchg(&routes->cache.reset_ts, &mark, now));
}

/*
 * @p, a connected QP's new path (modify_qp, before it is published), gets
 * @routes with a new generation. The generation moves first (a full
 * barrier), then the cache is reset, then the caller publishes @p (its
 * seqlock's write barrier orders the reset before the path): a reader
 * with a copy of the new path sees the reset, and one with a copy of the
 * old path no longer uses or fills the cache (vroce_route()).
 */
void vroce_path_new_route(struct vroce_routes *routes, struct vroce_path *p)
{
	p->routes = routes;
	p->gen = atomic_inc_return(&routes->gen);
	vroce_routes_reset(routes);
}

static struct dst_entry *vroce_route_lookup(struct net *net,
					    struct net_device *ndev,
					    const struct vroce_path *p)
{
	return p->ipv4 ? vroce_route4(net, ndev, p) :
			 vroce_route6(net, ndev, p);
}

/*
 * The route of @p, with a reference: from its QP's cache when it has one
 * (RC, UC, XRC: every packet goes the same way) and @p is of the current
 * generation, else looked up. A cached route that the stack has since
 * made obsolete (a route or address change) is looked up again. If the
 * generation moved while this one was being stored (an AV change on
 * another CPU), the cache is reset again: a route stored after
 * modify_qp's reset, in a later jiffy, would otherwise outlive it. The
 * cache is per CPU: BHs stay off while it is used, so no other user of
 * this CPU's entry comes in between. Caller holds the RCU read lock.
 */
static struct dst_entry *vroce_route(struct net *net, struct net_device *ndev,
				     const struct vroce_path *p)
{
	struct vroce_routes *routes = p->routes;
	struct dst_entry *dst;

	if (!routes)
		return vroce_route_lookup(net, ndev, p);
	/*
	 * BHs off before the generation is read: nothing on this CPU stores
	 * a route between that check and the use of the cache.
	 */
	local_bh_disable();
	if (atomic_read(&routes->gen) != p->gen) {
		local_bh_enable();
		return vroce_route_lookup(net, ndev, p);
	}
	dst = dst_cache_get(&routes->cache);
	/* Cannot be, with the generation; a wrong family would be worse. */
	if (dst && dst->ops->family != (p->ipv4 ? AF_INET : AF_INET6)) {
		dst_release(dst);
		dst = NULL;
	}
	if (!dst) {
		dst = vroce_route_lookup(net, ndev, p);
		if (dst && p->ipv4)
			dst_cache_set_ip4(&routes->cache, dst, p->sip4);
		else if (dst)
			dst_cache_set_ip6(&routes->cache, dst, &p->sgid);
		/* Pairs with the barrier of vroce_path_new_route(). */
		smp_mb();
		if (atomic_read(&routes->gen) != p->gen)
			vroce_routes_reset(routes);
	}
	local_bh_enable();
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
static void vroce_push_ip4(struct net *net, struct sk_buff *skb,
			   struct dst_entry *dst, const struct vroce_path *p,
			   int segs)
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
	__ip_select_ident(net, iph, segs);
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
 *
 * The netdev's namespace is read once, under RCU: a netdev being moved to
 * another namespace (which removes its vroce device, queued) may leave
 * the old one, and RCU keeps that one alive while we use it.
 */
int vroce_net_push(struct vroce_dev *vdev, struct sk_buff *skb,
		   const struct vroce_path *p, int segs)
{
	struct net_device *ndev = vdev->ndev;
	struct dst_entry *dst = NULL;
	struct net *net;

	rcu_read_lock();
	net = dev_net(ndev);
	if (!p->loopback) {
		dst = vroce_route(net, ndev, p);
		if (!dst) {
			rcu_read_unlock();
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
		vroce_push_ip4(net, skb, dst, p, segs);
	else
		vroce_push_ip6(skb, dst, p);
	rcu_read_unlock();
	return 0;
}

/*
 * Hands a packet with its headers and ICRC in place to the IP stack, in
 * the namespace of its netdev, read under RCU as vroce_net_push() does.
 */
int vroce_net_out(struct sk_buff *skb, const struct vroce_path *p)
{
	struct net *net;
	int err;

	rcu_read_lock();
	net = dev_net(skb->dev);
	if (p->ipv4)
		err = ip_local_out(net, NULL, skb);
	else
		err = ip6_local_out(net, NULL, skb);
	rcu_read_unlock();
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
