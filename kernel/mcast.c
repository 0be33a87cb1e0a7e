// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD multicast: the groups the QPs of a device are attached to
 * (attach_mcast, detach_mcast), and the netdev's IP memberships that make
 * a switch forward a group's traffic to it: IGMP for a group whose GID is
 * an IPv4-mapped address, MLD for an IPv6 one. The receive path (rx.c)
 * delivers a datagram for QP 0xFFFFFF to every QP attached to the group
 * its destination address names.
 *
 * A group's QP numbers are an array that is never changed in place: an
 * attach or detach puts a new copy in the table, under mcast_lock, and the
 * old one goes after a grace period, so the receive path reads a group
 * under RCU alone.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/jhash.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>

#include "vroce.h"

/*
 * A QP attached to a group, and how many times: ib_core counts every
 * successful attach (uverbs passes one per distinct LID, which RoCE does
 * not use) and refuses to destroy the QP until as many detaches succeeded.
 */
struct vroce_mca {
	u32 qpn;
	u32 refs;
};

struct vroce_mcg {
	struct hlist_node node;		/* in vdev->mcgs */
	struct rcu_head rcu;
	struct in6_addr gid;
	u32 n_qps;
	struct vroce_mca qps[VROCE_MAX_MCAST_QP_ATTACH];
};

static u32 vroce_mcg_hash(const struct in6_addr *gid)
{
	return jhash(gid, sizeof(*gid), 0);
}

/* The group of @gid; caller holds mcast_lock or the RCU read lock. */
static struct vroce_mcg *vroce_mcg_find(struct vroce_dev *vdev,
					const struct in6_addr *gid)
{
	struct vroce_mcg *g;

	hash_for_each_possible_rcu(vdev->mcgs, g, node, vroce_mcg_hash(gid),
				   lockdep_is_held(&vdev->mcast_lock))
		if (ipv6_addr_equal(&g->gid, gid))
			return g;
	return NULL;
}

/* Joins (@join) or leaves the IP group @gid names, on the netdev. */
static int vroce_mcg_ip(struct vroce_dev *vdev, const struct in6_addr *gid,
			bool join)
{
	struct in_device *in_dev;
	int err = 0;

	rtnl_lock();
	if (ipv6_addr_v4mapped(gid)) {
		in_dev = __in_dev_get_rtnl(vdev->ndev);
		if (!in_dev)
			err = -ENODEV;
		else if (join)
			ip_mc_inc_group(in_dev, gid->s6_addr32[3]);
		else
			ip_mc_dec_group(in_dev, gid->s6_addr32[3]);
	} else if (join) {
		err = ipv6_dev_mc_inc(vdev->ndev, gid);
	} else {
		err = ipv6_dev_mc_dec(vdev->ndev, gid);
	}
	rtnl_unlock();
	return err;
}

/* Whether @g has QP @qpn; its index in *@i. */
static bool vroce_mcg_has(const struct vroce_mcg *g, u32 qpn, u32 *i)
{
	for (*i = 0; *i < g->n_qps; (*i)++)
		if (g->qps[*i].qpn == qpn)
			return true;
	return false;
}

/* @new takes @old's place in the table; @old goes after a grace period. */
static void vroce_mcg_replace(struct vroce_mcg *old, struct vroce_mcg *new)
{
	hlist_replace_rcu(&old->node, &new->node);
	kfree_rcu(old, rcu);
}

static int vroce_mcast_attach_locked(struct vroce_dev *vdev,
				     const struct in6_addr *gid, u32 qpn)
{
	struct vroce_mcg *g = vroce_mcg_find(vdev, gid), *new;
	u32 i;
	int err;

	if (g && vroce_mcg_has(g, qpn, &i)) {
		if (g->qps[i].refs == U32_MAX)
			return -ENOMEM;
		g->qps[i].refs++;	/* readers only read qpn */
		return 0;
	}
	if ((g && g->n_qps >= VROCE_MAX_MCAST_QP_ATTACH) ||
	    (!g && vdev->n_mcg >= VROCE_MAX_MCAST_GRP) ||
	    vdev->n_mcast_attach >= VROCE_MAX_TOTAL_MCAST_QP_ATTACH)
		return -ENOMEM;
	new = kmalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return -ENOMEM;
	if (g) {
		*new = *g;
	} else {
		err = vroce_mcg_ip(vdev, gid, true);
		if (err) {
			kfree(new);
			return err;
		}
		memset(new, 0, sizeof(*new));
		new->gid = *gid;
	}
	new->qps[new->n_qps++] = (struct vroce_mca){ .qpn = qpn, .refs = 1 };
	if (g) {
		vroce_mcg_replace(g, new);
	} else {
		hash_add_rcu(vdev->mcgs, &new->node, vroce_mcg_hash(gid));
		vdev->n_mcg++;
	}
	vdev->n_mcast_attach++;
	return 0;
}

/* -EINVAL if QP @qpn is not attached to @gid. */
static int vroce_mcast_detach_locked(struct vroce_dev *vdev,
				     const struct in6_addr *gid, u32 qpn)
{
	struct vroce_mcg *g = vroce_mcg_find(vdev, gid), *new;
	u32 i;

	if (!g || !vroce_mcg_has(g, qpn, &i))
		return -EINVAL;
	if (--g->qps[i].refs)
		return 0;
	vdev->n_mcast_attach--;
	if (g->n_qps == 1) {
		hash_del_rcu(&g->node);
		vdev->n_mcg--;
		vroce_mcg_ip(vdev, gid, false);
		kfree_rcu(g, rcu);
		return 0;
	}
	/* A destroyed QP must leave: this small copy may not fail. */
	new = kmalloc(sizeof(*new), GFP_KERNEL_ACCOUNT | __GFP_NOFAIL);
	*new = *g;
	new->qps[i] = new->qps[--new->n_qps];
	vroce_mcg_replace(g, new);
	return 0;
}

int vroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct vroce_dev *vdev = to_vdev(ibqp->device);
	int err;

	mutex_lock(&vdev->mcast_lock);
	err = vroce_mcast_attach_locked(vdev, (struct in6_addr *)gid->raw,
					ibqp->qp_num);
	mutex_unlock(&vdev->mcast_lock);
	return err;
}

int vroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct vroce_dev *vdev = to_vdev(ibqp->device);
	int err;

	mutex_lock(&vdev->mcast_lock);
	err = vroce_mcast_detach_locked(vdev, (struct in6_addr *)gid->raw,
					ibqp->qp_num);
	mutex_unlock(&vdev->mcast_lock);
	return err;
}

/*
 * A QP being destroyed leaves every group it is still attached to. ib_core
 * destroys no QP with attachments, so this is a safety net: none is left.
 */
void vroce_mcast_detach_qp(struct vroce_qp *qp)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	struct hlist_node *tmp;
	struct vroce_mcg *g;
	int bkt;
	u32 i;

	mutex_lock(&vdev->mcast_lock);
	hash_for_each_safe(vdev->mcgs, bkt, tmp, g, node) {
		if (!vroce_mcg_has(g, qp->ibqp.qp_num, &i))
			continue;
		g->qps[i].refs = 1;
		vroce_mcast_detach_locked(vdev, &g->gid, qp->ibqp.qp_num);
	}
	mutex_unlock(&vdev->mcast_lock);
}

/*
 * The QP numbers attached to the group of @gid, into @qpns (room for
 * VROCE_MAX_MCAST_QP_ATTACH); how many.
 */
u32 vroce_mcast_qpns(struct vroce_dev *vdev, const struct in6_addr *gid,
		     u32 *qpns)
{
	struct vroce_mcg *g;
	u32 i, n = 0;

	rcu_read_lock();
	g = vroce_mcg_find(vdev, gid);
	if (g) {
		n = min_t(u32, g->n_qps, VROCE_MAX_MCAST_QP_ATTACH);
		for (i = 0; i < n; i++)
			qpns[i] = g->qps[i].qpn;
	}
	rcu_read_unlock();
	return n;
}

void vroce_mcast_init(struct vroce_dev *vdev)
{
	mutex_init(&vdev->mcast_lock);
	hash_init(vdev->mcgs);
}

/*
 * The device goes: any group left goes too (a safety net, as above; its
 * QPs are gone).
 */
void vroce_mcast_destroy(struct vroce_dev *vdev)
{
	struct hlist_node *tmp;
	struct vroce_mcg *g;
	int bkt;

	mutex_lock(&vdev->mcast_lock);
	hash_for_each_safe(vdev->mcgs, bkt, tmp, g, node) {
		hash_del_rcu(&g->node);
		vroce_mcg_ip(vdev, &g->gid, false);
		kfree_rcu(g, rcu);
	}
	vdev->n_mcg = 0;
	vdev->n_mcast_attach = 0;
	mutex_unlock(&vdev->mcast_lock);
}
