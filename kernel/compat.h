/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every kernel-version difference vroce cares about, in one place.
 * Supported: 6.1 LTS (Debian 12) and 6.12 LTS. Shims are keyed on
 * LINUX_VERSION_CODE.
 *
 * Copyright (c) 2026 the vroce developers
 */
#ifndef VROCE_COMPAT_H
#define VROCE_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>
#include <net/gro.h>
#include <rdma/uverbs_ioctl.h>

/*
 * Since 6.11, create_cq gets the whole uverbs attribute bundle (NULL for
 * a kernel CQ) instead of its driver udata.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define vroce_create_cq_arg uverbs_attr_bundle
static inline struct ib_udata *
vroce_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define vroce_create_cq_arg ib_udata
static inline struct ib_udata *vroce_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/* Since 6.3, vm_flags is changed only through vm_flags_set(). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void vroce_vm_flags_set(struct vm_area_struct *vma,
				      unsigned long flags)
{
	vma->vm_flags |= flags;
}
#else
static inline void vroce_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
	vm_flags_set(vma, flags);
}
#endif

/*
 * Since 6.10, GRO keeps the offset of the (outer) IP header it found in
 * its control block instead of setting the skb's network header.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
static inline u32 vroce_gro_network_offset(const struct sk_buff *skb)
{
	return NAPI_GRO_CB(skb)->network_offsets[0];
}
#else
static inline u32 vroce_gro_network_offset(const struct sk_buff *skb)
{
	return skb_network_offset(skb);
}
#endif

/*
 * IBTA 1.5 RDMA Atomic Write: ib_core names its capability from 6.2 on;
 * 6.1's uverbs hands device_cap_flags to user space as they are, so the
 * same bit (IB_UVERBS_DEVICE_ATOMIC_WRITE of later kernels) says it.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define VROCE_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#else
#define VROCE_DEVICE_ATOMIC_WRITE	BIT_ULL(40)
#endif

/* Since 6.5, get_user_pages_remote() returns no VMAs. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
static inline long vroce_gup_remote(struct mm_struct *mm, unsigned long start,
				    unsigned long n, unsigned int flags,
				    struct page **pages)
{
	return get_user_pages_remote(mm, start, n, flags, pages, NULL);
}
#else
static inline long vroce_gup_remote(struct mm_struct *mm, unsigned long start,
				    unsigned long n, unsigned int flags,
				    struct page **pages)
{
	return get_user_pages_remote(mm, start, n, flags, pages, NULL, NULL);
}
#endif

#endif /* VROCE_COMPAT_H */
