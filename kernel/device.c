// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Life cycle of a vroce device: creation on an Ethernet netdev through
 * "rdma link add", registration with ib_core, port events that follow the
 * netdev, and removal (rdma link delete, netdev unregister, module unload).
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/if_arp.h>
#include <net/addrconf.h>
#include <rdma/ib_verbs.h>

#include "vroce.h"

/* Every vroce device that exists, registered or being registered. */
static LIST_HEAD(vroce_devices);
static DEFINE_MUTEX(vroce_lock);

static void vroce_dealloc_driver(struct ib_device *ibdev)
{
	struct vroce_dev *vdev = to_vdev(ibdev);
	struct net_device *ndev = vdev->ndev;

	vroce_mcast_destroy(vdev);
	/*
	 * The netdev goes back before the wait below: a hot-unplugged NIC
	 * may free the packets in its ring only once its unregistration,
	 * which waits for this reference, is over. The device stays on the
	 * list with no netdev that lookups can match.
	 */
	mutex_lock(&vroce_lock);
	WRITE_ONCE(vdev->ndev, NULL);
	mutex_unlock(&vroce_lock);
	netdev_put(ndev, &vdev->ndev_tracker);
	/*
	 * On the list still: module unload, which unregisters every device
	 * on it, waits for this removal, and so for the last packet's
	 * destructor.
	 */
	vroce_qp_refs_wait(vdev);
	mutex_lock(&vroce_lock);
	if (!list_empty(&vdev->node)) {
		list_del_rcu(&vdev->node);
		vroce_net_put(vdev);
	}
	mutex_unlock(&vroce_lock);

	xa_destroy(&vdev->ahs);
	xa_destroy(&vdev->qps);
	xa_destroy(&vdev->srqs);
	vroce_keys_destroy(vdev);
	ida_destroy(&vdev->qpn_ida);
	ida_destroy(&vdev->pd_ida);
}

static const struct ib_device_ops vroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = VROCE_ABI_VERSION,

	.alloc_hw_port_stats = vroce_alloc_hw_port_stats,
	.alloc_mr = vroce_alloc_mr,
	.advise_mr = vroce_advise_mr,
	.alloc_dm = vroce_alloc_dm,
	.alloc_mw = vroce_alloc_mw,
	.alloc_pd = vroce_alloc_pd,
	.alloc_xrcd = vroce_alloc_xrcd,
	.create_ah = vroce_create_ah,
	.create_cq = vroce_create_cq,
	.create_qp = vroce_create_qp,
	.create_srq = vroce_create_srq,
	.create_user_ah = vroce_create_ah,
	.alloc_ucontext = vroce_alloc_ucontext,
	.attach_mcast = vroce_attach_mcast,
	.dealloc_driver = vroce_dealloc_driver,
	.device_group = &vroce_obj_group,
	.dealloc_dm = vroce_dealloc_dm,
	.dealloc_mw = vroce_dealloc_mw,
	.dealloc_pd = vroce_dealloc_pd,
	.dealloc_xrcd = vroce_dealloc_xrcd,
	.dealloc_ucontext = vroce_dealloc_ucontext,
	.dereg_mr = vroce_dereg_mr,
	.destroy_ah = vroce_destroy_ah,
	.destroy_cq = vroce_destroy_cq,
	.detach_mcast = vroce_detach_mcast,
	.destroy_qp = vroce_destroy_qp,
	.destroy_srq = vroce_destroy_srq,
	.disassociate_ucontext = vroce_disassociate_ucontext,
	.fill_res_qp_entry = vroce_fill_res_qp_entry,
	.get_dev_fw_str = vroce_get_dev_fw_str,
	.get_dma_mr = vroce_get_dma_mr,
	.get_hw_stats = vroce_get_hw_stats,
	.get_link_layer = vroce_get_link_layer,
	.get_port_immutable = vroce_get_port_immutable,
	.map_mr_sg = vroce_map_mr_sg,
	.mmap = vroce_mmap,
	.mmap_free = vroce_mmap_free,
	.modify_qp = vroce_modify_qp,
	.modify_srq = vroce_modify_srq,
	.poll_cq = vroce_poll_cq,
	.process_mad = vroce_process_mad,
	.post_recv = vroce_post_recv,
	.post_srq_recv = vroce_post_srq_recv,
	.post_send = vroce_post_send,
	.query_device = vroce_query_device,
	.query_pkey = vroce_query_pkey,
	.query_port = vroce_query_port,
	.query_qp = vroce_query_qp,
	.query_srq = vroce_query_srq,
	.query_ucontext = vroce_query_ucontext,
	.reg_dm_mr = vroce_reg_dm_mr,
	.reg_user_mr = vroce_reg_user_mr,
	.req_notify_cq = vroce_req_notify_cq,
	.rereg_user_mr = vroce_rereg_user_mr,
	.resize_cq = vroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, vroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, vroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, vroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, vroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, vroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, vroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, vroce_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, vroce_xrcd, ibxrcd),
};

static struct vroce_dev *vroce_find_locked(struct net_device *ndev)
{
	struct vroce_dev *vdev;

	lockdep_assert_held(&vroce_lock);
	list_for_each_entry(vdev, &vroce_devices, node)
		if (vdev->ndev == ndev)
			return vdev;
	return NULL;
}

/* For the receive path: the device on @ndev, with a reference. */
struct vroce_dev *vroce_dev_get_by_netdev(struct net_device *ndev)
{
	struct vroce_dev *vdev, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(vdev, &vroce_devices, node)
		if (READ_ONCE(vdev->ndev) == ndev) {
			if (ib_device_try_get(&vdev->ibdev))
				found = vdev;
			break;
		}
	rcu_read_unlock();
	return found;
}

static int vroce_check_new_link(const char *name, struct net_device *ndev)
{
	struct ib_device *other;

	if (ndev->type != ARPHRD_ETHER) {
		pr_err("vroce: %s is not an Ethernet device\n", ndev->name);
		return -EOPNOTSUPP;
	}
	if (strncmp(name, VROCE_DEV_PREFIX, strlen(VROCE_DEV_PREFIX))) {
		pr_err("vroce: device name %s must start with \"%s\"\n",
		       name, VROCE_DEV_PREFIX);
		return -EINVAL;
	}
	other = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		ib_device_put(other);
		pr_err("vroce: RDMA device name %s is already in use\n", name);
		return -EEXIST;
	}
	return 0;
}

/* Adds vdev to the device list unless its netdev already carries one. */
static int vroce_list_add(struct vroce_dev *vdev)
{
	int err = 0;

	mutex_lock(&vroce_lock);
	if (vroce_find_locked(vdev->ndev))
		err = -EEXIST;
	else
		err = vroce_net_get(vdev);
	if (!err)
		list_add_tail_rcu(&vdev->node, &vroce_devices);
	mutex_unlock(&vroce_lock);

	if (err == -EEXIST)
		pr_err("vroce: %s already carries a vroce device\n",
		       vdev->ndev->name);
	return err;
}

static int vroce_register(struct vroce_dev *vdev, const char *name)
{
	struct ib_device *ibdev = &vdev->ibdev;
	struct net_device *ndev = vdev->ndev;
	int err;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	/* Lets tools find the netdev under /sys/class/infiniband/X/device. */
	ibdev->dev.parent = ndev->dev.parent;
	strscpy(ibdev->node_desc, "vroce", sizeof(ibdev->node_desc));
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);
	/* The SQ doorbell: POST_SEND with no work requests. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);

	err = ib_device_set_netdev(ibdev, ndev, VROCE_PORT);
	if (err)
		return err;
	return ib_register_device(ibdev, name, NULL);
}

static void vroce_port_event(struct vroce_dev *vdev)
{
	enum ib_port_state state = vroce_port_state(vdev);
	struct ib_event ev = {
		.device = &vdev->ibdev,
		.element.port_num = VROCE_PORT,
	};

	if (state == vdev->port_state)
		return;
	vdev->port_state = state;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
	dev_info(&vdev->ibdev.dev, "port %s\n",
		 state == IB_PORT_ACTIVE ? "active" : "down");
}

static void vroce_netdev_event(struct vroce_dev *vdev, unsigned long event)
{
	switch (event) {
	case NETDEV_UNREGISTER:
		ib_unregister_device_queued(&vdev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		vroce_port_event(vdev);
		break;
	case NETDEV_CHANGEMTU:
		/* query_port reads the MTU from the netdev on every call. */
		dev_info(&vdev->ibdev.dev, "%s mtu is now %u\n",
			 vdev->ndev->name, READ_ONCE(vdev->ndev->mtu));
		break;
	default:
		break;
	}
}

/* Caller holds RTNL and vroce_lock. */
static void vroce_netdev_event_locked(struct vroce_dev *vdev,
				      unsigned long event)
{
	/* A device not yet (or no longer) registered ignores events. */
	if (!ib_device_try_get(&vdev->ibdev))
		return;
	vroce_netdev_event(vdev, event);
	ib_device_put(&vdev->ibdev);
}

/*
 * Netdev events that arrived while the device was being registered were
 * ignored; apply the netdev's current state once, as the notifier would.
 * A netdev moved to another namespace meanwhile was unregistered from the
 * one whose sockets the device holds.
 */
static void vroce_catch_up_netdev(struct vroce_dev *vdev)
{
	bool gone;

	rtnl_lock();
	mutex_lock(&vroce_lock);
	/* One that is being removed already may have given its netdev back. */
	if (ib_device_try_get(&vdev->ibdev)) {
		gone = vdev->ndev->reg_state != NETREG_REGISTERED ||
		       vroce_net_moved(vdev);
		vroce_netdev_event(vdev, gone ? NETDEV_UNREGISTER :
						NETDEV_CHANGE);
		ib_device_put(&vdev->ibdev);
	}
	mutex_unlock(&vroce_lock);
	rtnl_unlock();
}

int vroce_dev_add(const char *name, struct net_device *ndev)
{
	struct vroce_dev *vdev;
	int err;

	err = vroce_check_new_link(name, ndev);
	if (err)
		return err;

	vdev = ib_alloc_device(vroce_dev, ibdev);
	if (!vdev)
		return -ENOMEM;
	/* From here on ib_dealloc_device() calls vroce_dealloc_driver(). */
	ib_set_device_ops(&vdev->ibdev, &vroce_dev_ops);
	vdev->ibdev.driver_def = vroce_uapi_defs;
	INIT_LIST_HEAD(&vdev->node);
	vroce_qp_refs_init(vdev);
	ida_init(&vdev->pd_ida);
	ida_init(&vdev->qpn_ida);
	/* ib_cm creates and destroys AHs with interrupts off. */
	xa_init_flags(&vdev->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&vdev->qps, XA_FLAGS_LOCK_BH);
	xa_init_flags(&vdev->srqs, XA_FLAGS_ALLOC1);
	vroce_mcast_init(vdev);
	vdev->ndev = ndev;
	netdev_hold(ndev, &vdev->ndev_tracker, GFP_KERNEL);
	vdev->port_state = vroce_port_state(vdev);

	err = vroce_keys_init(vdev);
	if (!err)
		err = vroce_list_add(vdev);
	if (err)
		goto dealloc;

	get_device(&vdev->ibdev.dev);
	err = vroce_register(vdev, name);
	if (!err) {
		dev_info(&vdev->ibdev.dev, "created on %s\n", ndev->name);
		vroce_catch_up_netdev(vdev);
	}
	put_device(&vdev->ibdev.dev);
	if (!err)
		return 0;
dealloc:
	/* ib_dealloc_device() calls vroce_dealloc_driver(). */
	ib_dealloc_device(&vdev->ibdev);
	return err;
}

void vroce_dev_remove_all(void)
{
	struct vroce_dev *vdev;

	for (;;) {
		mutex_lock(&vroce_lock);
		vdev = list_first_entry_or_null(&vroce_devices,
						struct vroce_dev, node);
		if (vdev)
			get_device(&vdev->ibdev.dev);
		mutex_unlock(&vroce_lock);
		if (!vdev)
			break;
		/*
		 * Waits for an unregistration already queued by the notifier;
		 * either way vroce_dealloc_driver() takes vdev off the list.
		 */
		ib_unregister_device(&vdev->ibdev);
		put_device(&vdev->ibdev.dev);
	}
}

/* Runs under RTNL, which also serialises every port_state update. */
static int vroce_netdev_notify(struct notifier_block *nb,
			       unsigned long event, void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct vroce_dev *vdev;

	mutex_lock(&vroce_lock);
	vdev = vroce_find_locked(ndev);
	if (vdev)
		vroce_netdev_event_locked(vdev, event);
	mutex_unlock(&vroce_lock);
	return NOTIFY_OK;
}

static struct notifier_block vroce_netdev_nb = {
	.notifier_call = vroce_netdev_notify,
};

int vroce_netdev_notifier_register(void)
{
	return register_netdevice_notifier(&vroce_netdev_nb);
}

void vroce_netdev_notifier_unregister(void)
{
	unregister_netdevice_notifier(&vroce_netdev_nb);
}
