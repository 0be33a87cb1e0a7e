// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Module entry: registers the "vroce" rdma link type and the netdev
 * notifier, and removes every device on unload.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "vroce.h"
#include "crc.h"

static int vroce_newlink(const char *name, struct net_device *ndev)
{
	return vroce_dev_add(name, ndev);
}

static struct rdma_link_ops vroce_link_ops = {
	.type = "vroce",
	.newlink = vroce_newlink,
};

static int __init vroce_init(void)
{
	int err;

	err = vroce_crc_init();
	if (err)
		return err;
	err = vroce_tx_init();
	if (err)
		goto err_crc;
	err = vroce_odp_wq_init();
	if (err)
		goto err_tx_wq;
	vroce_ack_init();
	err = vroce_net_init();
	if (err)
		goto err_tx;
	err = vroce_netdev_notifier_register();
	if (err)
		goto err_net;

	rdma_link_register(&vroce_link_ops);
	vroce_fault_init();
	pr_info("vroce: loaded, ABI version %u\n", VROCE_ABI_VERSION);
	return 0;

err_net:
	vroce_net_exit();
err_tx:
	vroce_ack_exit();
	vroce_odp_wq_exit();
err_tx_wq:
	vroce_tx_exit();
err_crc:
	vroce_crc_exit();
	return err;
}

static void __exit vroce_exit(void)
{
	/* No new links can be created once the link type is gone. */
	rdma_link_unregister(&vroce_link_ops);
	vroce_fault_exit();
	vroce_netdev_notifier_unregister();
	vroce_dev_remove_all();
	vroce_net_exit();
	vroce_ack_exit();
	vroce_odp_wq_exit();
	vroce_tx_exit();
	vroce_txbuf_exit();
	vroce_crc_exit();
	pr_info("vroce: unloaded\n");
}

module_init(vroce_init);
module_exit(vroce_exit);

MODULE_AUTHOR("the vroce developers");
MODULE_DESCRIPTION("vroce: software RoCEv2 RDMA device");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("vroce");
