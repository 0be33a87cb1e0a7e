// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * The fake uverbs device described in fake_uverbs.h.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/vroce-abi.h>

#include "fake_uverbs.h"

#define CDEV_PREFIX	"/dev/infiniband/"
#define CDEV_TARGET	"/dev/null"
#define MAX_FDS		1024

struct fake_uverbs fake = {
	.abi_version = VROCE_ABI_VERSION,
	.send_driver_data = true,
};

static bool fake_fd[MAX_FDS];

static bool is_cdev_path(const char *path)
{
	return path && !strncmp(path, CDEV_PREFIX, strlen(CDEV_PREFIX));
}

static bool is_fake_fd(int fd)
{
	return fd >= 0 && fd < MAX_FDS && fake_fd[fd];
}

int socket(int domain, int type, int protocol)
{
	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return syscall(SYS_socket, domain, type, protocol);
}

int stat(const char *restrict path, struct stat *restrict buf)
{
	if (is_cdev_path(path))
		path = CDEV_TARGET;
	return fstatat(AT_FDCWD, path, buf, 0);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}

	if (!is_cdev_path(path))
		return openat(AT_FDCWD, path, flags, mode);

	fd = openat(AT_FDCWD, CDEV_TARGET, flags, mode);
	if (fd >= MAX_FDS) {
		syscall(SYS_close, fd);
		errno = EMFILE;
		return -1;
	}
	if (fd >= 0) {
		fake_fd[fd] = true;
		fake.open_fds++;
	}
	return fd;
}

int close(int fd)
{
	if (is_fake_fd(fd)) {
		fake_fd[fd] = false;
		fake.open_fds--;
	}
	return syscall(SYS_close, fd);
}

/* Copy at most out_len bytes of a response to the user's buffer. */
static void respond(uint64_t response, size_t out_len, const void *resp,
		    size_t len)
{
	memcpy((void *)(uintptr_t)response, resp, len < out_len ? len : out_len);
}

static int get_context(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_get_context *cmd = payload;
	struct {
		struct ib_uverbs_get_context_resp core;
		struct vroce_alloc_ucontext_resp drv;
	} resp = {};
	size_t len = sizeof(resp.core);
	int async_fd;

	fake.get_context++;
	fake.get_context_in = in_len - sizeof(*cmd);
	fake.get_context_out = out_len - sizeof(resp.core);

	async_fd = eventfd(0, EFD_CLOEXEC);
	if (async_fd < 0)
		return errno;

	resp.core.async_fd = async_fd;
	resp.core.num_comp_vectors = FAKE_COMP_VECS;
	if (fake.send_driver_data) {
		resp.drv.abi_version = fake.abi_version;
		resp.drv.page_size = FAKE_PAGE_SIZE;
		len = sizeof(resp);
	}
	respond(cmd->response, out_len, &resp, len);
	return 0;
}

static void fill_device_attr(struct ib_uverbs_query_device_resp *base)
{
	base->fw_ver = FAKE_FW_VER;
	base->node_guid = htobe64(0x0200aafffe000001ULL);
	base->sys_image_guid = base->node_guid;
	base->max_mr_size = ~0ULL;
	base->page_size_cap = ~(uint64_t)(FAKE_PAGE_SIZE - 1);
	base->vendor_id = 0x1234;
	base->max_qp = FAKE_MAX_QP;
	base->max_qp_wr = 4096;
	base->max_sge = 16;
	base->max_cq = 4096;
	base->max_cqe = 65535;
	base->max_mr = 4096;
	base->max_pd = 1024;
	base->max_pkeys = 1;
	base->phys_port_cnt = 1;
}

static int query_device(const void *payload, size_t out_len)
{
	const struct ib_uverbs_query_device *cmd = payload;
	struct ib_uverbs_query_device_resp resp = {};

	fake.query_device++;
	fill_device_attr(&resp);
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int query_device_ex(const struct ib_uverbs_ex_cmd_hdr *ex,
			   size_t out_len)
{
	struct ib_uverbs_ex_query_device_resp resp = {};

	fake.query_device_ex++;
	fake.query_device_ex_drv_out = ex->provider_out_words * 8;
	if (out_len < sizeof(resp.base))
		return ENOSPC;

	fill_device_attr(&resp.base);
	resp.response_length = out_len < sizeof(resp) ? out_len : sizeof(resp);
	respond(ex->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int query_port(const void *payload, size_t out_len)
{
	const struct ib_uverbs_query_port *cmd = payload;
	struct ib_uverbs_query_port_resp resp = {};

	fake.query_port++;
	if (cmd->port_num != 1)
		return EINVAL;

	resp.state = IBV_PORT_ACTIVE;
	resp.max_mtu = IBV_MTU_4096;
	resp.active_mtu = IBV_MTU_1024;
	resp.gid_tbl_len = FAKE_GID_TBL_LEN;
	resp.port_cap_flags = IBV_PORT_CM_SUP;
	resp.max_msg_sz = 1U << 31;
	resp.pkey_tbl_len = 1;
	resp.phys_state = 5;	/* LinkUp */
	resp.active_width = 1;
	resp.active_speed = 1;
	resp.link_layer = IBV_LINK_LAYER_ETHERNET;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int alloc_pd(const void *payload, size_t out_len)
{
	const struct ib_uverbs_alloc_pd *cmd = payload;
	struct {
		struct ib_uverbs_alloc_pd_resp core;
		struct vroce_alloc_pd_resp drv;
	} resp = {};

	fake.alloc_pd++;
	fake.alloc_pd_out = out_len - sizeof(resp.core);
	resp.core.pd_handle = FAKE_PD_HANDLE;
	resp.drv.pdn = FAKE_PDN;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int dealloc_pd(const void *payload)
{
	const struct ib_uverbs_dealloc_pd *cmd = payload;

	fake.dealloc_pd++;
	fake.dealloc_pd_handle = cmd->pd_handle;
	return 0;
}

static int legacy_cmd(const struct ib_uverbs_cmd_hdr *hdr, size_t len)
{
	const void *payload = hdr + 1;
	size_t in_len = hdr->in_words * 4;
	size_t out_len = hdr->out_words * 4;

	if (in_len != len || in_len < sizeof(*hdr))
		return EINVAL;
	in_len -= sizeof(*hdr);

	switch (hdr->command) {
	case IB_USER_VERBS_CMD_GET_CONTEXT:
		return get_context(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_QUERY_DEVICE:
		return query_device(payload, out_len);
	case IB_USER_VERBS_CMD_QUERY_PORT:
		return query_port(payload, out_len);
	case IB_USER_VERBS_CMD_ALLOC_PD:
		return alloc_pd(payload, out_len);
	case IB_USER_VERBS_CMD_DEALLOC_PD:
		return dealloc_pd(payload);
	default:
		fake.unexpected++;
		fake.last_unexpected = hdr->command;
		return EOPNOTSUPP;
	}
}

static int extended_cmd(const struct ib_uverbs_cmd_hdr *hdr, size_t len)
{
	const struct ib_uverbs_ex_cmd_hdr *ex = (const void *)(hdr + 1);
	uint32_t command = hdr->command & IB_USER_VERBS_CMD_COMMAND_MASK;

	if (len < sizeof(*hdr) + sizeof(*ex) ||
	    len != sizeof(*hdr) + sizeof(*ex) +
		   (hdr->in_words + ex->provider_in_words) * 8)
		return EINVAL;

	switch (command) {
	case IB_USER_VERBS_EX_CMD_QUERY_DEVICE:
		return query_device_ex(ex, hdr->out_words * 8);
	default:
		fake.unexpected++;
		fake.last_unexpected = hdr->command;
		return EOPNOTSUPP;
	}
}

static ssize_t fake_uverbs_write(const void *buf, size_t len)
{
	const struct ib_uverbs_cmd_hdr *hdr = buf;
	int ret;

	if (len < sizeof(*hdr)) {
		errno = EINVAL;
		return -1;
	}

	if (hdr->command & IB_USER_VERBS_CMD_FLAG_EXTENDED)
		ret = extended_cmd(hdr, len);
	else
		ret = legacy_cmd(hdr, len);
	if (ret) {
		errno = ret;
		return -1;
	}
	return len;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	if (is_fake_fd(fd))
		return fake_uverbs_write(buf, count);
	return syscall(SYS_write, fd, buf, count);
}
