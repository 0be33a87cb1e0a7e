/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vroce: a software RoCEv2 HCA.
 *
 * Copyright (c) 2026 the vroce developers
 */
#ifndef VROCE_H
#define VROCE_H

#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/idr.h>
#include <rdma/ib_verbs.h>
#include <rdma/vroce-abi.h>

#include "compat.h"
#include "limits.h"

#define VROCE_PORT	1

/* One vroce device: an RDMA HCA bound to one Ethernet netdev. */
struct vroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head node;		/* on vroce_devices, under vroce_lock */
	enum ib_port_state port_state;	/* last state reported by an event */
	struct ida pd_ida;
};

struct vroce_ucontext {
	struct ib_ucontext ibuc;
};

struct vroce_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

static inline struct vroce_dev *to_vdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vroce_dev, ibdev);
}

static inline struct vroce_pd *to_vpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct vroce_pd, ibpd);
}

/* device.c: life cycle of a vroce device and its netdev binding */
int vroce_dev_add(const char *name, struct net_device *ndev);
void vroce_dev_remove_all(void);
int vroce_netdev_notifier_register(void);
void vroce_netdev_notifier_unregister(void);

/* port.c: device and port attributes */
int vroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int vroce_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int vroce_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
int vroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
enum rdma_link_layer vroce_get_link_layer(struct ib_device *ibdev, u32 port);
enum ib_port_state vroce_port_state(struct vroce_dev *vdev);
void vroce_get_dev_fw_str(struct ib_device *ibdev, char *str);

/* context.c: user contexts and protection domains */
int vroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void vroce_dealloc_ucontext(struct ib_ucontext *ibuc);
void vroce_disassociate_ucontext(struct ib_ucontext *ibuc);
int vroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int vroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* mmap.c: memory shared with user space through the uverbs fd */
int vroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void vroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
struct rdma_user_mmap_entry *
vroce_mmap_insert(struct ib_ucontext *ibuc, void *vaddr, size_t size,
		  u64 *offset);

#endif /* VROCE_H */
