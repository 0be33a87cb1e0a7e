/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * vroce user/kernel ABI.
 *
 * This header is shared, unchanged, by the kernel module (kernel/) and the
 * libibverbs provider (user/). Every struct here crosses the uverbs udata
 * boundary, so each one has a fixed size, explicit padding and 64-bit
 * alignment for 64-bit members.
 *
 * VROCE_ABI_VERSION changes whenever a layout below changes. The kernel
 * reports it as the device's uverbs ABI version and again in the
 * alloc_ucontext response; the provider refuses to open a device whose
 * version differs from its own.
 */
#ifndef VROCE_ABI_USER_H
#define VROCE_ABI_USER_H

#include <linux/types.h>

#define VROCE_ABI_VERSION	1

/* Device names always start with this prefix: libibverbs matches on it. */
#define VROCE_DEV_PREFIX	"vroce"

/*
 * Response to IB_USER_VERBS_CMD_GET_CONTEXT.
 *
 * abi_version: VROCE_ABI_VERSION of the kernel.
 * page_size:   page size the kernel uses for every mmap'd ring.
 * mmap_caps:   reserved for ring capabilities, 0 for now.
 */
struct vroce_alloc_ucontext_resp {
	__u32 abi_version;
	__u32 page_size;
	__aligned_u64 mmap_caps;
};

/* Response to IB_USER_VERBS_CMD_ALLOC_PD: the PD number. */
struct vroce_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

#endif /* VROCE_ABI_USER_H */
