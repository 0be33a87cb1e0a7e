// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: device memory (ibv_alloc_dm(3)).
 *
 * A DM is zeroed kernel memory.  The DM_ALLOC ioctl returns, in our
 * driver attribute VROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, where on the
 * command fd it can be mapped; we map all of it at once (the kernel maps
 * nothing less) and ibv_memcpy_to_dm()/ibv_memcpy_from_dm() are plain
 * copies into and out of that mapping.  Remote peers reach it through a
 * zero-based MR (ibv_reg_dm_mr()), which ibv_dereg_mr() deregisters like
 * any other.
 *
 * The three commands exist only as ioctls.  They are built here from the
 * kernel's uAPI (rdma_user_ioctl_cmds.h, ib_user_ioctl_cmds.h) rather
 * than with libibverbs' ibv_cmd_alloc_dm() and friends: their command
 * buffers, which a provider must link its driver attributes into, are
 * private to each rdma-core release.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <rdma/rdma_user_ioctl_cmds.h>

#include "vroce.h"

/* The most attributes we send: those of DM_MR_REG. */
#define VROCE_IOCTL_MAX_ATTRS	8

/*
 * An RDMA_VERBS_IOCTL command: the header with room behind it for its
 * attributes (hdr.attrs[], a flexible array member).
 */
union vroce_ioctl {
	struct ib_uverbs_ioctl_hdr hdr;
	uint8_t buf[sizeof(struct ib_uverbs_ioctl_hdr) +
		    VROCE_IOCTL_MAX_ATTRS * sizeof(struct ib_uverbs_attr)];
};

static void ioctl_init(union vroce_ioctl *cmd, uint16_t object,
		       uint16_t method)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->hdr.object_id = object;
	cmd->hdr.method_id = method;
	cmd->hdr.driver_id = VROCE_DRIVER_ID;
}

/*
 * The next attribute, mandatory: a kernel that does not know one of
 * ours must refuse the command (EPROTONOSUPPORT), not ignore it.
 */
static struct ib_uverbs_attr *ioctl_attr(union vroce_ioctl *cmd,
					 uint16_t id)
{
	struct ib_uverbs_attr *attr;

	assert(cmd->hdr.num_attrs < VROCE_IOCTL_MAX_ATTRS);
	attr = &cmd->hdr.attrs[cmd->hdr.num_attrs++];
	attr->attr_id = id;
	attr->flags = UVERBS_ATTR_F_MANDATORY;
	return attr;
}

/*
 * An input of at most 8 bytes, inline: the kernel reads its first @len
 * bytes of data, so copy them rather than assign (which would put a u32
 * in the wrong half on a big-endian host).
 */
static void ioctl_in(union vroce_ioctl *cmd, uint16_t id, const void *val,
		     uint16_t len)
{
	struct ib_uverbs_attr *attr = ioctl_attr(cmd, id);

	attr->len = len;
	memcpy(&attr->data, val, len);
}

static void ioctl_in_u64(union vroce_ioctl *cmd, uint16_t id, uint64_t val)
{
	ioctl_in(cmd, id, &val, sizeof(val));
}

static void ioctl_in_u32(union vroce_ioctl *cmd, uint16_t id, uint32_t val)
{
	ioctl_in(cmd, id, &val, sizeof(val));
}

/* An output: the kernel writes up to @len bytes at @ptr. */
static void ioctl_out(union vroce_ioctl *cmd, uint16_t id, void *ptr,
		      uint16_t len)
{
	struct ib_uverbs_attr *attr = ioctl_attr(cmd, id);

	attr->len = len;
	attr->data = (uintptr_t)ptr;
}

/*
 * An object by handle.  For a new object send 0 and read the handle back
 * from the attribute afterwards: the kernel writes it into our array.
 */
static struct ib_uverbs_attr *ioctl_obj(union vroce_ioctl *cmd, uint16_t id,
					uint32_t handle)
{
	struct ib_uverbs_attr *attr = ioctl_attr(cmd, id);

	attr->data = handle;
	return attr;
}

/* 0, or the kernel's errno value. */
static int ioctl_run(struct ibv_context *ibctx, union vroce_ioctl *cmd)
{
	cmd->hdr.length = sizeof(cmd->hdr) +
			  cmd->hdr.num_attrs * sizeof(cmd->hdr.attrs[0]);
	if (ioctl(ibctx->cmd_fd, RDMA_VERBS_IOCTL, cmd))
		return errno;
	return 0;
}

/*
 * A kernel without DM has no such method (EPROTONOSUPPORT);
 * ibv_alloc_dm(3) calls that EOPNOTSUPP.
 */
static int dm_errno(int ret)
{
	return ret == EPROTONOSUPPORT ? EOPNOTSUPP : ret;
}

static int dm_alloc_cmd(struct ibv_context *ibctx,
			const struct ibv_alloc_dm_attr *attr,
			uint32_t *handle, uint64_t *offset)
{
	struct ib_uverbs_attr *h;
	union vroce_ioctl cmd;
	int ret;

	ioctl_init(&cmd, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC);
	h = ioctl_obj(&cmd, UVERBS_ATTR_ALLOC_DM_HANDLE, 0);
	ioctl_in_u64(&cmd, UVERBS_ATTR_ALLOC_DM_LENGTH, attr->length);
	ioctl_in_u32(&cmd, UVERBS_ATTR_ALLOC_DM_ALIGNMENT, attr->log_align_req);
	ioctl_out(&cmd, VROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, offset,
		  sizeof(*offset));
	ret = ioctl_run(ibctx, &cmd);
	if (ret)
		return dm_errno(ret);
	*handle = h->data;
	return 0;
}

/*
 * After the device went away the kernel answers EIO; with
 * RDMAV_ALLOW_DISASSOC_DESTROY set, libibverbs' own destroy commands
 * count that as done (the kernel freed the DM with the context), and so
 * does this one.
 */
static int dm_free_cmd(struct ibv_context *ibctx, uint32_t handle)
{
	union vroce_ioctl cmd;
	int ret;

	ioctl_init(&cmd, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_FREE);
	ioctl_obj(&cmd, UVERBS_ATTR_FREE_DM_HANDLE, handle);
	ret = ioctl_run(ibctx, &cmd);
	if (ret == EIO && getenv("RDMAV_ALLOW_DISASSOC_DESTROY"))
		return 0;
	return ret;
}

/* Whether [offset, offset + length) lies in the DM; overflow-safe. */
static bool dm_range_ok(const struct vroce_dm *dm, uint64_t offset,
			size_t length)
{
	return offset <= dm->length && length <= dm->length - offset;
}

/* ibv_memcpy_to_dm(3): 0, or an errno value (which errno holds too). */
static int vroce_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			      const void *host_addr, size_t length)
{
	struct vroce_dm *dm = to_vdm(ibdm);

	if (!dm_range_ok(dm, dm_offset, length)) {
		errno = EINVAL;
		return EINVAL;
	}
	memcpy(dm->addr + dm_offset, host_addr, length);
	return 0;
}

static int vroce_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
				uint64_t dm_offset, size_t length)
{
	struct vroce_dm *dm = to_vdm(ibdm);

	if (!dm_range_ok(dm, dm_offset, length)) {
		errno = EINVAL;
		return EINVAL;
	}
	memcpy(host_addr, dm->addr + dm_offset, length);
	return 0;
}

/*
 * The kernel checks the length (at most max_dm_size of
 * ibv_query_device_ex(3)) and the alignment (at most a page); we check
 * what it never sees, and that rounding the length up to whole pages
 * cannot wrap.
 */
struct ibv_dm *vroce_alloc_dm(struct ibv_context *ibctx,
			      struct ibv_alloc_dm_attr *attr)
{
	size_t page = to_vctx(ibctx)->page_size;
	struct vroce_dm *dm;
	uint64_t offset = 0;
	uint32_t handle;
	void *addr;
	int ret;

	if (attr->comp_mask || !attr->length ||
	    attr->length > SIZE_MAX - (page - 1)) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}

	ret = dm_alloc_cmd(ibctx, attr, &handle, &offset);
	if (ret)
		goto err_free;

	dm->length = attr->length;
	dm->map_len = (attr->length + page - 1) & ~(page - 1);
	addr = mmap(NULL, dm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    ibctx->cmd_fd, (off_t)offset);
	if (addr == MAP_FAILED) {
		ret = errno;
		dm_free_cmd(ibctx, handle);
		goto err_free;
	}

	dm->addr = addr;
	dm->ibv_dm.context = ibctx;
	dm->ibv_dm.memcpy_to_dm = vroce_memcpy_to_dm;
	dm->ibv_dm.memcpy_from_dm = vroce_memcpy_from_dm;
	dm->ibv_dm.comp_mask = IBV_DM_MASK_HANDLE;
	dm->ibv_dm.handle = handle;
	return &dm->ibv_dm;

err_free:
	free(dm);
	errno = ret;
	return NULL;
}

/*
 * The kernel refuses to free a DM while an MR is registered on it
 * (EBUSY): it then stays mapped and usable, so unmap only once it is
 * gone.
 */
int vroce_free_dm(struct ibv_dm *ibdm)
{
	struct vroce_dm *dm = to_vdm(ibdm);
	int ret;

	ret = dm_free_cmd(ibdm->context, ibdm->handle);
	if (ret)
		return ret;

	munmap(dm->addr, dm->map_len);
	free(dm);
	return 0;
}

/*
 * A zero-based MR of @length bytes from @dm_offset of the DM.  It is
 * filled as ibv_reg_mr() fills a verbs_mr (addr NULL: the MR starts at
 * 0), so that ibv_dereg_mr() (vroce_dereg_mr()) frees it.  The kernel
 * checks the range and the access flags; ZERO_BASED is checked here too,
 * as libibverbs does, without a system call.
 */
struct ibv_mr *vroce_reg_dm_mr(struct ibv_pd *ibpd, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length,
			       unsigned int access)
{
	struct ib_uverbs_attr *h;
	union vroce_ioctl cmd;
	struct verbs_mr *vmr;
	uint32_t lkey = 0, rkey = 0;
	int ret;

	if (!(access & IBV_ACCESS_ZERO_BASED)) {
		errno = EINVAL;
		return NULL;
	}
	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}

	ioctl_init(&cmd, UVERBS_OBJECT_MR, UVERBS_METHOD_DM_MR_REG);
	h = ioctl_obj(&cmd, UVERBS_ATTR_REG_DM_MR_HANDLE, 0);
	ioctl_in_u64(&cmd, UVERBS_ATTR_REG_DM_MR_OFFSET, dm_offset);
	ioctl_in_u64(&cmd, UVERBS_ATTR_REG_DM_MR_LENGTH, length);
	ioctl_obj(&cmd, UVERBS_ATTR_REG_DM_MR_PD_HANDLE, ibpd->handle);
	ioctl_in_u32(&cmd, UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS, access);
	ioctl_obj(&cmd, UVERBS_ATTR_REG_DM_MR_DM_HANDLE, ibdm->handle);
	ioctl_out(&cmd, UVERBS_ATTR_REG_DM_MR_RESP_LKEY, &lkey, sizeof(lkey));
	ioctl_out(&cmd, UVERBS_ATTR_REG_DM_MR_RESP_RKEY, &rkey, sizeof(rkey));
	ret = ioctl_run(ibpd->context, &cmd);
	if (ret) {
		free(vmr);
		errno = dm_errno(ret);
		return NULL;
	}

	vmr->ibv_mr.context = ibpd->context;
	vmr->ibv_mr.pd = ibpd;
	vmr->ibv_mr.addr = NULL;
	vmr->ibv_mr.length = length;
	vmr->ibv_mr.handle = h->data;
	vmr->ibv_mr.lkey = lkey;
	vmr->ibv_mr.rkey = rkey;
	vmr->mr_type = IBV_MR_TYPE_MR;
	vmr->access = access;
	return &vmr->ibv_mr;
}
