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
#include <rdma/uverbs_ioctl.h>
#include <rdma/vroce-abi.h>

#include "compat.h"
#include "limits.h"
#include "queue.h"

#define VROCE_PORT	1

/* One vroce device: an RDMA HCA bound to one Ethernet netdev. */
struct vroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head node;		/* on vroce_devices, under vroce_lock */
	enum ib_port_state port_state;	/* last state reported by an event */
	struct ida pd_ida;
	struct ida qpn_ida;
	atomic_t n_pd;
	atomic_t n_cq;
	atomic_t n_qp;
	atomic_t next_cqn;
};

struct vroce_ucontext {
	struct ib_ucontext ibuc;
};

struct vroce_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

struct vroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* producer side of ring, resize */
	struct vroce_queue ring;
	u32 cqn;
	u32 notified_seq;		/* last arm sequence notified */
	bool broken;			/* overflowed or ring broken */
};

/* What modify_qp set, as query_qp returns it. */
struct vroce_qp_attrs {
	enum ib_qp_state state;
	enum ib_mtu path_mtu;
	enum ib_mig_state path_mig_state;
	u32 qkey;
	u32 rq_psn;
	u32 sq_psn;
	u32 dest_qp_num;
	int access_flags;
	u16 pkey_index;
	u8 en_sqd_async_notify;
	u8 sq_draining;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 min_rnr_timer;
	u8 port_num;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	struct rdma_ah_attr ah_attr;
};

struct vroce_qp {
	struct ib_qp ibqp;
	struct mutex state_lock;	/* modify, query, destroy */
	struct vroce_qp_attrs attrs;
	struct ib_qp_cap cap;
	bool sq_sig_all;
	spinlock_t sq_lock;		/* kernel side of the SQ */
	spinlock_t rq_lock;		/* kernel side of the RQ */
	struct vroce_queue sq;
	struct vroce_queue rq;
};

static inline struct vroce_dev *to_vdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vroce_dev, ibdev);
}

static inline struct vroce_pd *to_vpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct vroce_pd, ibpd);
}

static inline struct vroce_cq *to_vcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct vroce_cq, ibcq);
}

static inline struct vroce_qp *to_vqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct vroce_qp, ibqp);
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

/* context.c: user contexts, protection domains, udata helpers */
bool vroce_udata_in_ok(struct ib_udata *udata, size_t known);
int vroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void vroce_dealloc_ucontext(struct ib_ucontext *ibuc);
void vroce_disassociate_ucontext(struct ib_ucontext *ibuc);
int vroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int vroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* cq.c: completion queues */
int vroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int vroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int vroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int vroce_cq_add(struct vroce_cq *cq, const struct vroce_cqe *cqe,
		 bool solicited);

/* qp.c: queue pairs: create, query, destroy, doorbell */
int vroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int vroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int vroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int vroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);

/* qp_modify.c: the QP state machine and flushing */
int vroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
void vroce_qp_flush(struct vroce_qp *qp);

/* sysfs.c: object counts */
extern const struct attribute_group vroce_obj_group;

/* mmap.c: memory shared with user space through the uverbs fd */
int vroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void vroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
struct rdma_user_mmap_entry *
vroce_mmap_insert(struct ib_ucontext *ibuc, void *vaddr, size_t size,
		  u64 *offset);

#endif /* VROCE_H */
