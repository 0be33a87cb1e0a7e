/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * An in-process stand-in for the kernel side of vroce, for loading the
 * provider through libibverbs on a host without RDMA.
 *
 * The load test defines socket(), stat(), open(), write() and close() in
 * its executable and exports them (-rdynamic), so the copies libibverbs
 * and libnl call are ours:
 *
 *  - socket(AF_NETLINK, *, NETLINK_RDMA) fails, so libibverbs falls back to
 *    reading the sysfs tree named by $SYSFS_PATH, whatever the host has.
 *  - stat() and open() of /dev/infiniband/<name> go to /dev/null, a real
 *    character device; the fake sysfs gives its major:minor as the uverbs
 *    "dev", so libibverbs' checks on the cdev pass.
 *  - /dev/null does not know RDMA_VERBS_IOCTL (ENOTTY), so libibverbs
 *    uses the write() command interface, which fake_uverbs_write() answers
 *    the way ib_uverbs would for a vroce device.
 *
 * The same file is also built as libfake_uverbs.so, to run unmodified
 * programs such as ibv_devinfo against the fake device with LD_PRELOAD.
 */
#ifndef VROCE_FAKE_UVERBS_H
#define VROCE_FAKE_UVERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FAKE_FW_VER	((1ULL << 32) | (2ULL << 16) | 3ULL)
#define FAKE_FW_STR	"1.2.3"
#define FAKE_MAX_QP	1234
#define FAKE_PAGE_SIZE	4096
#define FAKE_COMP_VECS	3
#define FAKE_GID_TBL_LEN 2
#define FAKE_PD_HANDLE	7
#define FAKE_PDN	42

struct fake_uverbs {
	/* What the fake kernel answers. */
	uint32_t abi_version;		/* in the GET_CONTEXT driver data */
	bool send_driver_data;		/* false: behave like a foreign kernel */

	/* What it saw. */
	unsigned int open_fds;		/* fake cmd fds currently open */
	unsigned int get_context;
	size_t get_context_in;		/* driver data bytes sent */
	size_t get_context_out;		/* driver data bytes asked for */
	unsigned int query_device;
	unsigned int query_device_ex;
	size_t query_device_ex_drv_out;	/* driver data bytes asked for */
	unsigned int query_port;
	unsigned int alloc_pd;
	size_t alloc_pd_out;		/* driver data bytes asked for */
	unsigned int dealloc_pd;
	uint32_t dealloc_pd_handle;
	unsigned int unexpected;	/* commands vroce does not implement */
	uint32_t last_unexpected;
};

extern struct fake_uverbs fake;

#endif /* VROCE_FAKE_UVERBS_H */
