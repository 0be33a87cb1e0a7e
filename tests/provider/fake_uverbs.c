// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * The fake uverbs device described in fake_uverbs.h.
 */
#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
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
	resp.max_dm_size = FAKE_MAX_DM_SIZE;
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

/* ---- rings ---- */

static uint32_t next_handle = 1;

static size_t page_align(size_t len)
{
	return (len + FAKE_PAGE_SIZE - 1) & ~(size_t)(FAKE_PAGE_SIZE - 1);
}

static uint32_t pow2_at_least(uint32_t x)
{
	uint32_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

static void *real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/*
 * A ring keeps its mmap offset while its object has it or the provider
 * still maps it, as an rdma_user_mmap_entry does.
 */
static bool holds_offset(const struct fake_ring *ring)
{
	return ring->used && (!ring->retired || ring->user_maps);
}

/*
 * The lowest free range of page offsets, as ib_core's
 * rdma_user_mmap_entry_insert() picks it: 0 first, reused when freed.
 */
static uint64_t free_offset(size_t len)
{
	uint64_t off = 0;
	bool moved = true;
	int i;

	while (moved) {
		moved = false;
		for (i = 0; i < FAKE_MAX_RINGS; i++) {
			const struct fake_ring *r = &fake.rings[i];
			uint64_t end = r->offset + page_align(r->size);

			if (holds_offset(r) && off < end &&
			    r->offset < off + len) {
				off = end;
				moved = true;
			}
		}
	}
	return off;
}

/*
 * @size bytes, zeroed, in a memfd the fake kernel maps for itself, with
 * an mmap offset of their own.
 */
static struct fake_ring *mem_new(size_t size)
{
	struct fake_ring *ring = NULL;
	void *addr;
	int fd;
	int i;

	for (i = 0; i < FAKE_MAX_RINGS && !ring; i++)
		if (!fake.rings[i].used)
			ring = &fake.rings[i];
	if (!ring)
		return NULL;

	fd = memfd_create("vroce-fake-ring", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, page_align(size))) {
		syscall(SYS_close, fd);
		return NULL;
	}
	addr = real_mmap(NULL, page_align(size), PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED) {
		syscall(SYS_close, fd);
		return NULL;
	}

	*ring = (struct fake_ring){
		.used = true,
		.memfd = fd,
		.offset = free_offset(page_align(size)),
		.size = size,
		.hdr = addr,
	};
	return ring;
}

/* A ring of entries * stride bytes behind the header. */
static struct fake_ring *ring_new(uint32_t entries, uint32_t stride)
{
	struct fake_ring *ring;

	ring = mem_new(VROCE_RING_ENTRIES_OFFSET + (size_t)entries * stride);
	if (ring) {
		ring->entries = entries;
		ring->stride = stride;
		ring->ent = (uint8_t *)ring->hdr + VROCE_RING_ENTRIES_OFFSET;
	}
	return ring;
}

static struct fake_ring *ring_at(uint64_t offset)
{
	int i;

	for (i = 0; i < FAKE_MAX_RINGS; i++)
		if (fake.rings[i].used && !fake.rings[i].retired &&
		    fake.rings[i].offset == offset)
			return &fake.rings[i];
	return NULL;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct fake_ring *ring;
	void *p;

	if (!is_fake_fd(fd))
		return real_mmap(addr, len, prot, flags, fd, off);

	ring = ring_at(off);
	if (!ring || !len || len > page_align(ring->size) ||
	    (ring->whole && len != page_align(ring->size)) ||
	    (flags & MAP_TYPE) != MAP_SHARED ||
	    (prot & ~(PROT_READ | PROT_WRITE))) {
		fake.bad_mmaps++;
		errno = EINVAL;
		return MAP_FAILED;
	}

	p = real_mmap(addr, len, prot, flags, ring->memfd, 0);
	if (p != MAP_FAILED) {
		ring->user_maps++;
		ring->user_addr = p;
		ring->user_len = len;
	}
	return p;
}

int munmap(void *addr, size_t len)
{
	int i;

	for (i = 0; i < FAKE_MAX_RINGS; i++) {
		struct fake_ring *ring = &fake.rings[i];

		if (ring->used && ring->user_maps && ring->user_addr == addr) {
			ring->user_maps--;
			ring->user_addr = NULL;
		}
	}
	return syscall(SYS_munmap, addr, len);
}

unsigned int fake_user_maps(void)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < FAKE_MAX_RINGS; i++)
		n += fake.rings[i].user_maps;
	return n;
}

/* ---- CQs ---- */

struct fake_cq *fake_cq_get(uint32_t handle)
{
	int i;

	for (i = 0; i < FAKE_MAX_OBJS; i++)
		if (fake.cqs[i].live && fake.cqs[i].handle == handle)
			return &fake.cqs[i];
	return NULL;
}

bool fake_cq_push(struct fake_cq *cq, const struct vroce_cqe *cqe)
{
	struct fake_ring *ring = cq->ring;
	uint32_t cons = __atomic_load_n(&ring->hdr->cons, __ATOMIC_ACQUIRE);

	if (cq->kprod - cons >= ring->entries)
		return false;
	memcpy(ring->ent + (cq->kprod & (ring->entries - 1)) * ring->stride,
	       cqe, sizeof(*cqe));
	cq->kprod++;
	__atomic_store_n(&ring->hdr->prod, cq->kprod, __ATOMIC_RELEASE);
	return true;
}

static int create_cq(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_create_cq *cmd = payload;
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct vroce_create_cq_resp drv;
	} resp = {};
	struct fake_cq *cq = NULL;
	uint32_t entries;
	int i;

	fake.create_cq++;
	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	if (cmd->cqe < 1 || cmd->cqe > FAKE_MAX_CQE)
		return EINVAL;
	for (i = 0; i < FAKE_MAX_OBJS && !cq; i++)
		if (!fake.cqs[i].live)
			cq = &fake.cqs[i];
	if (!cq)
		return ENOMEM;

	entries = pow2_at_least(cmd->cqe);
	*cq = (struct fake_cq){
		.live = true,
		.handle = next_handle++,
		.cqn = FAKE_CQN_BASE + (uint32_t)(cq - fake.cqs),
		.cqe = entries,
		.comp_vector = cmd->comp_vector,
		.comp_channel = cmd->comp_channel,
		.ring = ring_new(entries, sizeof(struct vroce_cqe)),
	};
	if (!cq->ring) {
		cq->live = false;
		return ENOMEM;
	}

	resp.core.cq_handle = cq->handle;
	resp.core.cqe = cq->cqe;
	resp.drv.ring_offset = cq->ring->offset;
	resp.drv.ring_size = cq->ring->size;
	resp.drv.entries = entries;
	resp.drv.cqn = cq->cqn;
	if (fake.tweak)
		fake.tweak(IB_USER_VERBS_CMD_CREATE_CQ, &resp.core, &resp.drv);
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

/*
 * As the kernel will: copy the CQEs the provider has not consumed (from
 * the cons it published) to the start of a new ring.
 */
static int resize_cq(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_resize_cq *cmd = payload;
	struct {
		struct ib_uverbs_resize_cq_resp core;
		struct vroce_resize_cq_resp drv;
	} resp = {};
	struct fake_cq *cq = fake_cq_get(cmd->cq_handle);
	struct fake_ring *old, *ring;
	uint32_t cons, count, entries, i;

	fake.resize_cq++;
	if (!cq || in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;

	old = cq->ring;
	cons = __atomic_load_n(&old->hdr->cons, __ATOMIC_ACQUIRE);
	fake.resize_cons_seen = cons;
	count = cq->kprod - cons;
	if (count > old->entries || cmd->cqe < 1 || cmd->cqe > FAKE_MAX_CQE ||
	    cmd->cqe < count)
		return EINVAL;

	entries = pow2_at_least(cmd->cqe);
	ring = ring_new(entries, sizeof(struct vroce_cqe));
	if (!ring)
		return ENOMEM;
	for (i = 0; i < count; i++)
		memcpy(ring->ent + i * ring->stride,
		       old->ent + ((cons + i) & (old->entries - 1)) *
				  old->stride,
		       ring->stride);
	__atomic_store_n(&ring->hdr->prod, count, __ATOMIC_RELEASE);
	old->retired = true;
	cq->ring = ring;
	cq->kprod = count;
	cq->cqe = entries;

	resp.core.cqe = entries;
	resp.drv.ring_offset = ring->offset;
	resp.drv.ring_size = ring->size;
	resp.drv.entries = entries;
	if (fake.tweak)
		fake.tweak(IB_USER_VERBS_CMD_RESIZE_CQ, &resp.core, &resp.drv);
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int destroy_cq(const void *payload, size_t out_len)
{
	const struct ib_uverbs_destroy_cq *cmd = payload;
	struct ib_uverbs_destroy_cq_resp resp = {};
	struct fake_cq *cq = fake_cq_get(cmd->cq_handle);
	int i;

	fake.destroy_cq++;
	if (!cq)
		return EINVAL;
	for (i = 0; i < FAKE_MAX_OBJS; i++)
		if (fake.qps[i].live && (fake.qps[i].send_cq == cq->handle ||
					 fake.qps[i].recv_cq == cq->handle))
			return EBUSY;

	cq->live = false;
	cq->ring->retired = true;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

/* ---- QPs ---- */

struct fake_qp *fake_qp_get(uint32_t handle)
{
	int i;

	for (i = 0; i < FAKE_MAX_OBJS; i++)
		if (fake.qps[i].live && fake.qps[i].handle == handle)
			return &fake.qps[i];
	return NULL;
}

/*
 * Round a work queue up the way the kernel will: a power-of-two number
 * of entries, a power-of-two stride holding the header and the SGEs (or
 * inline data), and as many SGEs and inline bytes as that stride holds.
 */
static struct fake_ring *wq_new(uint32_t *wr, uint32_t *sge, uint32_t *inl,
				uint32_t hdr_size)
{
	uint32_t data = *sge * sizeof(struct vroce_sge);
	uint32_t stride;

	if (inl && *inl > data)
		data = *inl;
	stride = pow2_at_least(hdr_size + data);
	*wr = pow2_at_least(*wr ? *wr : 1);
	*sge = (stride - hdr_size) / sizeof(struct vroce_sge);
	if (*sge > 16)
		*sge = 16;
	if (inl)
		*inl = stride - hdr_size;
	return ring_new(*wr, stride);
}

/*
 * Whether CREATE_QP names what a QP of its type needs: a PD and both CQs;
 * for XRC INI a PD and a send CQ only; for XRC TGT an XRC domain (in
 * pd_handle) and nothing else.
 */
static int qp_cmd_check(const struct ib_uverbs_create_qp *cmd)
{
	bool pd = cmd->pd_handle == FAKE_PD_HANDLE;
	bool scq = fake_cq_get(cmd->send_cq_handle);
	bool rcq = fake_cq_get(cmd->recv_cq_handle);

	switch (cmd->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		if (!pd || !scq || !rcq)
			return EINVAL;
		break;
	case IBV_QPT_XRC_SEND:
		if (!pd || !scq || cmd->recv_cq_handle || cmd->is_srq)
			return EINVAL;
		break;
	case IBV_QPT_XRC_RECV:
		if (!fake_xrcd_get(cmd->pd_handle) || cmd->send_cq_handle ||
		    cmd->recv_cq_handle || cmd->is_srq)
			return EINVAL;
		return 0;
	default:
		return pd && scq && rcq ? EOPNOTSUPP : EINVAL;
	}
	if (cmd->is_srq && !fake.allow_srq && !fake_srq_get(cmd->srq_handle))
		return EOPNOTSUPP;
	if (cmd->max_send_wr > FAKE_MAX_WR || cmd->max_recv_wr > FAKE_MAX_WR ||
	    cmd->max_send_sge > 16 || cmd->max_recv_sge > 16 ||
	    cmd->max_inline_data > 512)
		return EINVAL;
	return 0;
}

/*
 * The rings of @qp, sized from @cap, which is set to what they hold: an
 * SQ but for XRC TGT, an RQ but with an SRQ or for XRC.  false: no memory.
 */
static bool qp_rings(struct fake_qp *qp, struct fake_qp_cap *cap)
{
	if (qp->qp_type == IBV_QPT_XRC_RECV) {
		*cap = (struct fake_qp_cap){ 0 };
		return true;
	}
	qp->sq = wq_new(&cap->max_send_wr, &cap->max_send_sge,
			&cap->max_inline_data, sizeof(struct vroce_send_wqe));
	if (qp->is_srq || qp->qp_type == IBV_QPT_XRC_SEND) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return qp->sq;
	}
	qp->rq = wq_new(&cap->max_recv_wr, &cap->max_recv_sge, NULL,
			sizeof(struct vroce_recv_wqe));
	return qp->sq && qp->rq;
}

/* The driver response: the rings the QP has, zeroes for those it has not. */
static void qp_drv_resp(const struct fake_qp *qp,
			struct vroce_create_qp_resp *drv)
{
	if (qp->sq) {
		drv->sq_offset = qp->sq->offset;
		drv->sq_size = qp->sq->size;
		drv->sq_entries = qp->sq->entries;
		drv->sq_wqe_size = qp->sq->stride;
	}
	if (qp->rq) {
		drv->rq_offset = qp->rq->offset;
		drv->rq_size = qp->rq->size;
		drv->rq_entries = qp->rq->entries;
		drv->rq_wqe_size = qp->rq->stride;
	}
	drv->qpn = qp->qpn;
}

static int create_qp(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_create_qp *cmd = payload;
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct vroce_create_qp_resp drv;
	} resp = {};
	struct fake_qp *qp = NULL;
	struct fake_qp_cap cap;
	int i, ret;

	fake.create_qp++;
	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	ret = qp_cmd_check(cmd);
	if (ret)
		return ret;
	for (i = 0; i < FAKE_MAX_OBJS && !qp; i++)
		if (!fake.qps[i].live)
			qp = &fake.qps[i];
	if (!qp)
		return ENOMEM;

	cap = (struct fake_qp_cap){
		.max_send_wr = cmd->max_send_wr,
		.max_recv_wr = cmd->max_recv_wr,
		.max_send_sge = cmd->max_send_sge,
		.max_recv_sge = cmd->max_recv_sge,
		.max_inline_data = cmd->max_inline_data,
	};
	*qp = (struct fake_qp){
		.live = true,
		.handle = next_handle++,
		.qpn = FAKE_QPN_BASE + (uint32_t)(qp - fake.qps),
		.qp_type = cmd->qp_type,
		.sq_sig_all = cmd->sq_sig_all,
		.is_srq = cmd->is_srq,
		.srq_handle = cmd->srq_handle,
		.send_cq = cmd->send_cq_handle,
		.recv_cq = cmd->recv_cq_handle,
		.req = cap,
		.state = IBV_QPS_RESET,
	};
	if (cmd->qp_type == IBV_QPT_XRC_RECV)
		qp->xrcd = cmd->pd_handle;
	if (!qp_rings(qp, &cap)) {
		qp->live = false;
		return ENOMEM;
	}
	qp->cap = cap;

	resp.core.qp_handle = qp->handle;
	resp.core.qpn = qp->qpn;
	resp.core.max_send_wr = cap.max_send_wr;
	resp.core.max_recv_wr = cap.max_recv_wr;
	resp.core.max_send_sge = cap.max_send_sge;
	resp.core.max_recv_sge = cap.max_recv_sge;
	resp.core.max_inline_data = cap.max_inline_data;
	qp_drv_resp(qp, &resp.drv);
	if (fake.tweak)
		fake.tweak(IB_USER_VERBS_CMD_CREATE_QP, &resp.core, &resp.drv);
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int modify_qp(const void *payload, size_t in_len)
{
	const struct ib_uverbs_modify_qp *cmd = payload;
	struct fake_qp *qp = fake_qp_get(cmd->qp_handle);

	fake.modify_qp++;
	if (!qp || in_len != sizeof(*cmd))
		return EINVAL;
	qp->last_modify_mask = cmd->attr_mask;
	if (cmd->attr_mask & IBV_QP_STATE)
		qp->state = cmd->qp_state;
	return 0;
}

static int query_qp(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_query_qp *cmd = payload;
	struct ib_uverbs_query_qp_resp resp = {};
	struct fake_qp *qp = fake_qp_get(cmd->qp_handle);

	fake.query_qp++;
	if (!qp || in_len != sizeof(*cmd))
		return EINVAL;
	resp.qp_state = qp->state;
	resp.cur_qp_state = qp->state;
	resp.port_num = 1;
	resp.max_send_wr = qp->cap.max_send_wr;
	resp.max_recv_wr = qp->cap.max_recv_wr;
	resp.max_send_sge = qp->cap.max_send_sge;
	resp.max_recv_sge = qp->cap.max_recv_sge;
	resp.max_inline_data = qp->cap.max_inline_data;
	resp.sq_sig_all = qp->sq_sig_all;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int destroy_qp(const void *payload, size_t out_len)
{
	const struct ib_uverbs_destroy_qp *cmd = payload;
	struct ib_uverbs_destroy_qp_resp resp = {};
	struct fake_qp *qp = fake_qp_get(cmd->qp_handle);

	fake.destroy_qp++;
	if (!qp)
		return EINVAL;
	qp->live = false;
	if (qp->sq)
		qp->sq->retired = true;
	if (qp->rq)
		qp->rq->retired = true;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

/* The SQ doorbell: a POST_SEND with no work requests. */
static int post_send(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_post_send *cmd = payload;
	struct ib_uverbs_post_send_resp resp = {};
	struct fake_qp *qp = fake_qp_get(cmd->qp_handle);

	fake.doorbells++;
	fake.last_post_send = *cmd;
	fake.last_post_send_len = in_len;
	if (!qp || in_len != sizeof(*cmd) || cmd->wr_count || cmd->sge_count ||
	    cmd->wqe_size < sizeof(struct ib_uverbs_send_wr) ||
	    out_len < sizeof(resp))
		return EINVAL;
	qp->doorbells++;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

/* ---- MRs and MWs ---- */

static uint32_t next_key = 0x1100;

#define FIND_LIVE(type, arr)						\
	struct fake_##type *fake_##type##_get(uint32_t handle)		\
	{								\
		int i;							\
									\
		for (i = 0; i < FAKE_MAX_OBJS; i++)			\
			if (fake.arr[i].live &&				\
			    fake.arr[i].handle == handle)		\
				return &fake.arr[i];			\
		return NULL;						\
	}

FIND_LIVE(mr, mrs)
FIND_LIVE(mw, mws)
FIND_LIVE(ah, ahs)
FIND_LIVE(srq, srqs)
FIND_LIVE(xrcd, xrcds)
FIND_LIVE(dm, dms)

#define FREE_SLOT(arr, out)						\
	do {								\
		int _i;							\
									\
		(out) = NULL;						\
		for (_i = 0; _i < FAKE_MAX_OBJS && !(out); _i++)	\
			if (!fake.arr[_i].live)				\
				(out) = &fake.arr[_i];			\
	} while (0)

/* ibv_reg_mr(3): remote write or atomic access needs local write. */
static int mr_access_ok(uint32_t access)
{
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

/* A new pair of keys, as the kernel makes for a new MR. */
static void new_keys(uint32_t *lkey, uint32_t *rkey)
{
	*lkey = next_key;
	*rkey = next_key | 0x80;
	next_key += 0x100;
}

/*
 * An implicit on-demand paging MR: the whole address space (start 0,
 * length UINT64_MAX), nothing pinned.
 */
static bool implicit_odp(uint64_t start, uint64_t length, uint32_t access)
{
	return (access & IBV_ACCESS_ON_DEMAND) && !start &&
	       length == UINT64_MAX;
}

static int reg_mr(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_reg_mr *cmd = payload;
	struct ib_uverbs_reg_mr_resp resp = {};
	struct fake_mr *mr;
	int ret;

	fake.reg_mr++;
	if (in_len != sizeof(*cmd) || out_len != sizeof(resp) ||
	    cmd->pd_handle != FAKE_PD_HANDLE)
		return EINVAL;
	ret = mr_access_ok(cmd->access_flags);
	if (ret)
		return ret;
	if ((!cmd->start || !cmd->length) &&
	    !implicit_odp(cmd->start, cmd->length, cmd->access_flags))
		return EFAULT;	/* nothing to pin */
	FREE_SLOT(mrs, mr);
	if (!mr)
		return ENOMEM;

	*mr = (struct fake_mr){
		.live = true,
		.handle = next_handle++,
		.pd_handle = cmd->pd_handle,
		.start = cmd->start,
		.length = cmd->length,
		.hca_va = cmd->hca_va,
		.access = cmd->access_flags,
	};
	new_keys(&mr->lkey, &mr->rkey);
	resp.mr_handle = mr->handle;
	resp.lkey = mr->lkey;
	resp.rkey = mr->rkey;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

/* As the kernel: a new MR (new keys) behind the same handle. */
static int rereg_mr(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_rereg_mr *cmd = payload;
	struct ib_uverbs_rereg_mr_resp resp = {};
	struct fake_mr *mr = fake_mr_get(cmd->mr_handle);
	struct fake_mr next;
	int ret;

	fake.rereg_mr++;
	if (!mr || in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	if (cmd->flags & ~(uint32_t)IBV_REREG_MR_FLAGS_SUPPORTED)
		return EOPNOTSUPP;
	if (mr->bound_mws)
		return EBUSY;
	next = *mr;
	if (cmd->flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		if (!cmd->start || !cmd->length)
			return EFAULT;
		next.start = cmd->start;
		next.length = cmd->length;
		next.hca_va = cmd->hca_va;
	}
	if (cmd->flags & IBV_REREG_MR_CHANGE_ACCESS)
		next.access = cmd->access_flags;
	if (cmd->flags & IBV_REREG_MR_CHANGE_PD) {
		if (cmd->pd_handle != FAKE_PD_HANDLE)
			return EINVAL;
		next.pd_handle = cmd->pd_handle;
	}
	ret = mr_access_ok(next.access);
	if (ret)
		return ret;
	new_keys(&next.lkey, &next.rkey);
	*mr = next;
	resp.lkey = mr->lkey;
	resp.rkey = mr->rkey;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int dereg_mr(const void *payload, size_t in_len)
{
	const struct ib_uverbs_dereg_mr *cmd = payload;
	struct fake_mr *mr = fake_mr_get(cmd->mr_handle);

	fake.dereg_mr++;
	if (!mr || in_len != sizeof(*cmd))
		return EINVAL;
	if (mr->bound_mws)
		return EBUSY;
	mr->live = false;
	if (mr->dm)
		fake_dm_get(mr->dm)->mrs--;
	return 0;
}

static int alloc_mw(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_alloc_mw *cmd = payload;
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct fake_mw *mw;
	uint32_t lkey;

	fake.alloc_mw++;
	if (in_len != sizeof(*cmd) || out_len != sizeof(resp) ||
	    cmd->pd_handle != FAKE_PD_HANDLE)
		return EINVAL;
	if (cmd->mw_type != IBV_MW_TYPE_1 && cmd->mw_type != IBV_MW_TYPE_2)
		return EINVAL;
	FREE_SLOT(mws, mw);
	if (!mw)
		return ENOMEM;
	*mw = (struct fake_mw){
		.live = true,
		.handle = next_handle++,
		.type = cmd->mw_type,
	};
	new_keys(&lkey, &mw->rkey);
	resp.mw_handle = mw->handle;
	resp.rkey = mw->rkey;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int dealloc_mw(const void *payload, size_t in_len)
{
	const struct ib_uverbs_dealloc_mw *cmd = payload;
	struct fake_mw *mw = fake_mw_get(cmd->mw_handle);

	fake.dealloc_mw++;
	if (!mw || in_len != sizeof(*cmd))
		return EINVAL;
	mw->live = false;
	return 0;
}

/* ---- AHs ---- */

/* As the kernel: RoCE v2 with a GRH on port 1, numbered from 1. */
static int create_ah(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_create_ah *cmd = payload;
	struct {
		struct ib_uverbs_create_ah_resp core;
		struct vroce_create_ah_resp drv;
	} resp = {};
	struct fake_ah *ah;

	fake.create_ah++;
	if (in_len != sizeof(*cmd) || out_len != sizeof(resp) ||
	    cmd->pd_handle != FAKE_PD_HANDLE)
		return EINVAL;
	if (!cmd->attr.is_global || cmd->attr.port_num != 1 ||
	    cmd->attr.grh.sgid_index >= FAKE_GID_TBL_LEN)
		return EINVAL;
	FREE_SLOT(ahs, ah);
	if (!ah)
		return ENOMEM;
	*ah = (struct fake_ah){
		.live = true,
		.handle = next_handle++,
		.ah_num = FAKE_AH_NUM_BASE + 1 + (uint32_t)(ah - fake.ahs),
		.attr = cmd->attr,
	};
	resp.core.ah_handle = ah->handle;
	resp.drv.ah_num = ah->ah_num;
	if (fake.tweak)
		fake.tweak(IB_USER_VERBS_CMD_CREATE_AH, &resp.core, &resp.drv);
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int destroy_ah(const void *payload, size_t in_len)
{
	const struct ib_uverbs_destroy_ah *cmd = payload;
	struct fake_ah *ah = fake_ah_get(cmd->ah_handle);

	fake.destroy_ah++;
	if (!ah || in_len != sizeof(*cmd))
		return EINVAL;
	ah->live = false;
	return 0;
}

/* ATTACH_MCAST, DETACH_MCAST: the payload is in last_payload. */
static int mcast(const void *payload, size_t in_len, bool attach)
{
	const struct ib_uverbs_attach_mcast *cmd = payload;

	if (attach)
		fake.attach_mcast++;
	else
		fake.detach_mcast++;
	if (in_len < sizeof(*cmd) || !fake_qp_get(cmd->qp_handle))
		return EINVAL;
	return 0;
}

/* ---- SRQs ---- */

/* The core and driver response of CREATE_SRQ and CREATE_XSRQ. */
struct srq_resp {
	struct ib_uverbs_create_srq_resp core;
	struct vroce_create_srq_resp drv;
};

/*
 * A new SRQ of the PD, as CREATE_SRQ and CREATE_XSRQ make it: a ring of
 * at least max_wr WQEs of max_sge SGEs (at least 1), its numbers in @resp.
 */
static int srq_new(uint32_t pd_handle, uint32_t max_wr, uint32_t max_sge,
		   uint32_t limit, struct fake_srq **out,
		   struct srq_resp *resp)
{
	struct fake_srq *srq;

	if (pd_handle != FAKE_PD_HANDLE || max_wr > FAKE_MAX_WR ||
	    max_sge > 16)
		return EINVAL;
	FREE_SLOT(srqs, srq);
	if (!srq)
		return ENOMEM;
	if (!max_sge)
		max_sge = 1;
	*srq = (struct fake_srq){
		.live = true,
		.handle = next_handle++,
		.srqn = FAKE_SRQN_BASE + (uint32_t)(srq - fake.srqs),
		.limit = limit,
	};
	srq->ring = wq_new(&max_wr, &max_sge, NULL,
			   sizeof(struct vroce_recv_wqe));
	if (!srq->ring) {
		srq->live = false;
		return ENOMEM;
	}
	srq->max_wr = max_wr;
	srq->max_sge = max_sge;

	resp->core.srq_handle = srq->handle;
	resp->core.max_wr = max_wr;
	resp->core.max_sge = max_sge;
	resp->drv.ring_offset = srq->ring->offset;
	resp->drv.ring_size = srq->ring->size;
	resp->drv.entries = srq->ring->entries;
	resp->drv.wqe_size = srq->ring->stride;
	resp->drv.srqn = srq->srqn;
	*out = srq;
	return 0;
}

static int create_srq(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_create_srq *cmd = payload;
	struct srq_resp resp = {};
	struct fake_srq *srq;
	int ret;

	fake.create_srq++;
	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	ret = srq_new(cmd->pd_handle, cmd->max_wr, cmd->max_sge,
		      cmd->srq_limit, &srq, &resp);
	if (ret)
		return ret;
	if (fake.tweak)
		fake.tweak(IB_USER_VERBS_CMD_CREATE_SRQ, &resp.core, &resp.drv);
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

/* As the kernel will: XRC SRQs only; the core response has the srqn. */
static int create_xsrq(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_create_xsrq *cmd = payload;
	struct srq_resp resp = {};
	struct fake_srq *srq;
	int ret;

	fake.create_xsrq++;
	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	if (cmd->srq_type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	if (!fake_xrcd_get(cmd->xrcd_handle) || !fake_cq_get(cmd->cq_handle))
		return EINVAL;
	ret = srq_new(cmd->pd_handle, cmd->max_wr, cmd->max_sge,
		      cmd->srq_limit, &srq, &resp);
	if (ret)
		return ret;
	srq->srq_type = cmd->srq_type;
	srq->xrcd = cmd->xrcd_handle;
	srq->cq = cmd->cq_handle;
	resp.core.srqn = srq->srqn;
	if (fake.tweak)
		fake.tweak(IB_USER_VERBS_CMD_CREATE_XSRQ, &resp.core,
			   &resp.drv);
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int modify_srq(const void *payload, size_t in_len)
{
	const struct ib_uverbs_modify_srq *cmd = payload;
	struct fake_srq *srq = fake_srq_get(cmd->srq_handle);

	fake.modify_srq++;
	if (!srq || in_len != sizeof(*cmd))
		return EINVAL;
	if (cmd->attr_mask & ~(uint32_t)(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (cmd->attr_mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;
	if (cmd->attr_mask & IBV_SRQ_LIMIT) {
		if (cmd->srq_limit > srq->ring->entries)
			return EINVAL;
		srq->limit = cmd->srq_limit;
	}
	return 0;
}

static int query_srq(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_query_srq *cmd = payload;
	struct ib_uverbs_query_srq_resp resp = {};
	struct fake_srq *srq = fake_srq_get(cmd->srq_handle);

	fake.query_srq++;
	if (!srq || in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	resp.max_wr = srq->max_wr;
	resp.max_sge = srq->max_sge;
	resp.srq_limit = srq->limit;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

static int destroy_srq(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_destroy_srq *cmd = payload;
	struct ib_uverbs_destroy_srq_resp resp = {};
	struct fake_srq *srq = fake_srq_get(cmd->srq_handle);
	int i;

	fake.destroy_srq++;
	if (!srq || in_len != sizeof(*cmd))
		return EINVAL;
	for (i = 0; i < FAKE_MAX_OBJS; i++)
		if (fake.qps[i].live && fake.qps[i].is_srq &&
		    fake.qps[i].srq_handle == srq->handle)
			return EBUSY;
	srq->live = false;
	srq->ring->retired = true;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

/* ---- XRC domains and opened QPs ---- */

/*
 * As ib_uverbs: fd -1 makes a new domain (O_CREAT needed); the one fd
 * the fake knows (FAKE_XRCD_FD) names an inode's, shared and made on
 * first use unless O_EXCL.
 */
static int open_xrcd(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_open_xrcd *cmd = payload;
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct fake_xrcd *xrcd;

	fake.open_xrcd++;
	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	if ((int32_t)cmd->fd != -1 && (int32_t)cmd->fd != FAKE_XRCD_FD)
		return EBADF;
	if ((int32_t)cmd->fd == -1 && !(cmd->oflags & O_CREAT))
		return EINVAL;
	FREE_SLOT(xrcds, xrcd);
	if (!xrcd)
		return ENOMEM;
	*xrcd = (struct fake_xrcd){
		.live = true,
		.handle = next_handle++,
		.fd = cmd->fd,
		.oflags = cmd->oflags,
	};
	resp.xrcd_handle = xrcd->handle;
	respond(cmd->response, out_len, &resp, sizeof(resp));
	return 0;
}

/* Whether an SRQ or a QP of the XRC domain is alive. */
static bool xrcd_busy(uint32_t handle)
{
	int i;

	for (i = 0; i < FAKE_MAX_OBJS; i++)
		if ((fake.srqs[i].live && fake.srqs[i].xrcd == handle) ||
		    (fake.qps[i].live && fake.qps[i].xrcd == handle))
			return true;
	return false;
}

static int close_xrcd(const void *payload, size_t in_len)
{
	const struct ib_uverbs_close_xrcd *cmd = payload;
	struct fake_xrcd *xrcd = fake_xrcd_get(cmd->xrcd_handle);

	fake.close_xrcd++;
	if (!xrcd || in_len != sizeof(*cmd))
		return EINVAL;
	if (xrcd_busy(xrcd->handle))
		return EBUSY;
	xrcd->live = false;
	return 0;
}

/* The live XRC TGT QP @qpn of XRC domain @xrcd, or NULL. */
static struct fake_qp *tgt_qp(uint32_t xrcd, uint32_t qpn)
{
	int i;

	for (i = 0; i < FAKE_MAX_OBJS; i++)
		if (fake.qps[i].live && !fake.qps[i].opened &&
		    fake.qps[i].qp_type == IBV_QPT_XRC_RECV &&
		    fake.qps[i].xrcd == xrcd && fake.qps[i].qpn == qpn)
			return &fake.qps[i];
	return NULL;
}

/* A new handle to an XRC TGT QP: a QP entry of its own, without rings. */
static int open_qp(const void *payload, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_open_qp *cmd = payload;
	struct ib_uverbs_create_qp_resp resp = {};
	struct fake_qp *tgt, *qp;

	fake.open_qp++;
	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	if (cmd->qp_type != IBV_QPT_XRC_RECV)
		return EINVAL;
	tgt = tgt_qp(cmd->pd_handle, cmd->qpn);
	if (!tgt)
		return EINVAL;
	FREE_SLOT(qps, qp);
	if (!qp)
		return ENOMEM;
	*qp = (struct fake_qp){
		.live = true,
		.opened = true,
		.handle = next_handle++,
		.qpn = tgt->qpn,
		.xrcd = tgt->xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
		.state = tgt->state,
	};
	resp.qp_handle = qp->handle;
	resp.qpn = qp->qpn;
	respond(cmd->response, out_len, &resp, sizeof(resp));
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

	fake.last_cmd = hdr->command;
	fake.last_in = in_len;
	fake.last_out = out_len;
	memset(fake.last_payload, 0, sizeof(fake.last_payload));
	memcpy(fake.last_payload, payload,
	       in_len < sizeof(fake.last_payload) ?
	       in_len : sizeof(fake.last_payload));

	if (fake.fail_errno && hdr->command == fake.fail_cmd)
		return fake.fail_errno;

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
	case IB_USER_VERBS_CMD_CREATE_CQ:
		return create_cq(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_RESIZE_CQ:
		return resize_cq(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_DESTROY_CQ:
		return destroy_cq(payload, out_len);
	case IB_USER_VERBS_CMD_CREATE_QP:
		return create_qp(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_MODIFY_QP:
		return modify_qp(payload, in_len);
	case IB_USER_VERBS_CMD_QUERY_QP:
		return query_qp(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_DESTROY_QP:
		return destroy_qp(payload, out_len);
	case IB_USER_VERBS_CMD_POST_SEND:
		return post_send(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_REG_MR:
		return reg_mr(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_REREG_MR:
		return rereg_mr(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_DEREG_MR:
		return dereg_mr(payload, in_len);
	case IB_USER_VERBS_CMD_ALLOC_MW:
		return alloc_mw(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_DEALLOC_MW:
		return dealloc_mw(payload, in_len);
	case IB_USER_VERBS_CMD_CREATE_AH:
		return create_ah(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_DESTROY_AH:
		return destroy_ah(payload, in_len);
	case IB_USER_VERBS_CMD_ATTACH_MCAST:
		return mcast(payload, in_len, true);
	case IB_USER_VERBS_CMD_DETACH_MCAST:
		return mcast(payload, in_len, false);
	case IB_USER_VERBS_CMD_CREATE_SRQ:
		return create_srq(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_MODIFY_SRQ:
		return modify_srq(payload, in_len);
	case IB_USER_VERBS_CMD_QUERY_SRQ:
		return query_srq(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_DESTROY_SRQ:
		return destroy_srq(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_CREATE_XSRQ:
		return create_xsrq(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_OPEN_XRCD:
		return open_xrcd(payload, in_len, out_len);
	case IB_USER_VERBS_CMD_CLOSE_XRCD:
		return close_xrcd(payload, in_len);
	case IB_USER_VERBS_CMD_OPEN_QP:
		return open_qp(payload, in_len, out_len);
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
	fake.commands++;

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

/*
 * ---- the ioctl methods: device memory, ADVISE_MR ----
 *
 * Only the three methods of DM, which the provider builds itself, and
 * ADVISE_MR, which libibverbs builds for it, take this path.  The fake
 * checks them as ib_uverbs_ioctl() does: the header, then each attribute
 * against the method's specification, then the method's own checks.
 */

enum attr_kind { ATTR_IDR, ATTR_IN, ATTR_OUT };

/* An attribute a method knows: the lengths it takes, if it needs it. */
struct attr_spec {
	uint16_t id;
	enum attr_kind kind;
	uint16_t min_len, max_len;	/* 0 for an IDR */
	bool mandatory;
};

#define METHOD_MAX_ATTRS 8

struct method_spec {
	uint16_t object, method;
	const struct attr_spec *attrs;
	unsigned int num;
	/* attrs[i] as sent (in the caller's array), or NULL if not sent */
	int (*run)(struct ib_uverbs_attr **attrs);
};

/* An inline input of @size bytes (the spec checked its length). */
static void attr_in(const struct ib_uverbs_attr *attr, void *to, size_t size)
{
	memset(to, 0, size);
	memcpy(to, &attr->data, attr->len < size ? attr->len : size);
}

/* As uverbs_copy_to(): at most len bytes, then mark the output valid. */
static void attr_out(struct ib_uverbs_attr *attr, const void *from,
		     size_t size)
{
	memcpy((void *)(uintptr_t)attr->data, from,
	       size < attr->len ? size : attr->len);
	attr->flags |= UVERBS_ATTR_F_VALID_OUTPUT;
}

/*
 * As uverbs_get_flags32(): absent means none; 4 or 8 bytes; no bit
 * outside @supported.
 */
static int attr_flags32(const struct ib_uverbs_attr *attr, uint64_t supported,
			uint32_t *out)
{
	uint64_t flags = 0;

	*out = 0;
	if (!attr)
		return 0;
	if (attr->len == 4) {
		uint32_t f;

		attr_in(attr, &f, sizeof(f));
		flags = f;
	} else if (attr->len == 8) {
		attr_in(attr, &flags, sizeof(flags));
	} else {
		return EINVAL;
	}
	if (flags & ~supported)
		return EINVAL;
	*out = flags;
	return 0;
}

/*
 * Access flags: those the kernel knows (IB_ACCESS_SUPPORTED: bits 0-7
 * and the optional range, bits 20-29).
 */
static int attr_access(const struct ib_uverbs_attr *attr, uint32_t *access)
{
	return attr_flags32(attr, 0xffULL | 0x3ff00000ULL, access);
}

/* The live DM an IDR attribute names, or NULL (the kernel: ENOENT). */
static struct fake_dm *attr_dm(const struct ib_uverbs_attr *attr)
{
	return attr->data > UINT32_MAX ? NULL : fake_dm_get(attr->data);
}

enum { ALLOC_HANDLE, ALLOC_LENGTH, ALLOC_ALIGN, ALLOC_OFFSET, ALLOC_NUM };

static const struct attr_spec alloc_dm_attrs[ALLOC_NUM] = {
	[ALLOC_HANDLE] = { UVERBS_ATTR_ALLOC_DM_HANDLE, ATTR_IDR, 0, 0, true },
	[ALLOC_LENGTH] = { UVERBS_ATTR_ALLOC_DM_LENGTH, ATTR_IN, 8, 8, true },
	[ALLOC_ALIGN] = { UVERBS_ATTR_ALLOC_DM_ALIGNMENT, ATTR_IN, 4, 4, true },
	[ALLOC_OFFSET] = { VROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, ATTR_OUT,
			   8, 8, true },
};

/*
 * As the kernel: at most FAKE_MAX_DM_SIZE bytes aligned to at most a
 * page, zeroed, mapped from the offset returned.
 */
static int dm_alloc(struct ib_uverbs_attr **attrs)
{
	struct fake_ring *mem;
	struct fake_dm *dm;
	uint64_t length, offset;
	uint32_t log_align;

	fake.alloc_dm++;
	attr_in(attrs[ALLOC_LENGTH], &length, sizeof(length));
	attr_in(attrs[ALLOC_ALIGN], &log_align, sizeof(log_align));
	if (!length || length > FAKE_MAX_DM_SIZE ||
	    log_align > FAKE_PAGE_SHIFT)
		return EINVAL;
	FREE_SLOT(dms, dm);
	if (!dm)
		return ENOMEM;
	mem = mem_new(length);
	if (!mem)
		return ENOMEM;
	mem->whole = true;
	*dm = (struct fake_dm){
		.live = true,
		.handle = next_handle++,
		.length = length,
		.log_align = log_align,
		.mem = mem,
		.buf = (uint8_t *)mem->hdr,
	};
	offset = mem->offset + fake.dm_offset_bias;
	attrs[ALLOC_HANDLE]->data = dm->handle;
	attr_out(attrs[ALLOC_OFFSET], &offset, sizeof(offset));
	return 0;
}

static const struct attr_spec free_dm_attrs[] = {
	{ UVERBS_ATTR_FREE_DM_HANDLE, ATTR_IDR, 0, 0, true },
};

/* The memory stays mapped where the provider still maps it. */
static int dm_free(struct ib_uverbs_attr **attrs)
{
	struct fake_dm *dm = attr_dm(attrs[0]);

	fake.free_dm++;
	if (!dm)
		return ENOENT;
	if (dm->mrs)
		return EBUSY;
	dm->live = false;
	dm->mem->retired = true;
	return 0;
}

enum {
	REG_HANDLE, REG_OFFSET, REG_LENGTH, REG_PD, REG_ACCESS, REG_DM,
	REG_LKEY, REG_RKEY, REG_NUM
};

static const struct attr_spec reg_dm_mr_attrs[REG_NUM] = {
	[REG_HANDLE] = { UVERBS_ATTR_REG_DM_MR_HANDLE, ATTR_IDR, 0, 0, true },
	[REG_OFFSET] = { UVERBS_ATTR_REG_DM_MR_OFFSET, ATTR_IN, 8, 8, true },
	[REG_LENGTH] = { UVERBS_ATTR_REG_DM_MR_LENGTH, ATTR_IN, 8, 8, true },
	[REG_PD] = { UVERBS_ATTR_REG_DM_MR_PD_HANDLE, ATTR_IDR, 0, 0, true },
	/* a flags attribute: optional, 4 or 8 bytes */
	[REG_ACCESS] = { UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS, ATTR_IN, 4, 8,
			 false },
	[REG_DM] = { UVERBS_ATTR_REG_DM_MR_DM_HANDLE, ATTR_IDR, 0, 0, true },
	[REG_LKEY] = { UVERBS_ATTR_REG_DM_MR_RESP_LKEY, ATTR_OUT, 4, 4, true },
	[REG_RKEY] = { UVERBS_ATTR_REG_DM_MR_RESP_RKEY, ATTR_OUT, 4, 4, true },
};

/*
 * As ib_core's DM_MR_REG: zero-based only, within the DM, no on-demand
 * paging; and as vroce's reg_dm_mr, not empty.  The MR holds the DM
 * (DM_FREE fails with EBUSY) until it is deregistered.
 */
static int dm_mr_reg(struct ib_uverbs_attr **attrs)
{
	uint64_t offset, length;
	struct fake_dm *dm;
	struct fake_mr *mr;
	uint32_t access;
	int ret;

	fake.reg_dm_mr++;
	dm = attr_dm(attrs[REG_DM]);
	if (attrs[REG_PD]->data != FAKE_PD_HANDLE || !dm)
		return ENOENT;
	attr_in(attrs[REG_OFFSET], &offset, sizeof(offset));
	attr_in(attrs[REG_LENGTH], &length, sizeof(length));
	ret = attr_access(attrs[REG_ACCESS], &access);
	if (ret)
		return ret;
	if (!(access & IBV_ACCESS_ZERO_BASED) ||
	    (access & IBV_ACCESS_ON_DEMAND))
		return EINVAL;
	ret = mr_access_ok(access);
	if (ret)
		return ret;
	if (offset > dm->length || length > dm->length ||
	    length > dm->length - offset || !length)
		return EINVAL;
	FREE_SLOT(mrs, mr);
	if (!mr)
		return ENOMEM;

	*mr = (struct fake_mr){
		.live = true,
		.handle = next_handle++,
		.pd_handle = FAKE_PD_HANDLE,
		.dm = dm->handle,
		.start = offset,
		.length = length,
		.access = access,
	};
	new_keys(&mr->lkey, &mr->rkey);
	dm->mrs++;
	attrs[REG_HANDLE]->data = mr->handle;
	attr_out(attrs[REG_LKEY], &mr->lkey, sizeof(mr->lkey));
	attr_out(attrs[REG_RKEY], &mr->rkey, sizeof(mr->rkey));
	return 0;
}

enum { ADV_PD, ADV_ADVICE, ADV_FLAGS, ADV_SGES, ADV_NUM };

/*
 * As ib_core: the advice a constant (8 bytes), the flags a flags
 * attribute, the SGEs an array of struct ib_uverbs_sge, at least one.
 */
static const struct attr_spec advise_mr_attrs[ADV_NUM] = {
	[ADV_PD] = { UVERBS_ATTR_ADVISE_MR_PD_HANDLE, ATTR_IDR, 0, 0, true },
	[ADV_ADVICE] = { UVERBS_ATTR_ADVISE_MR_ADVICE, ATTR_IN, 8, 8, true },
	[ADV_FLAGS] = { UVERBS_ATTR_ADVISE_MR_FLAGS, ATTR_IN, 4, 8, true },
	[ADV_SGES] = { UVERBS_ATTR_ADVISE_MR_SGE_LIST, ATTR_IN,
		       sizeof(struct ib_uverbs_sge), UINT16_MAX, true },
};

/*
 * Whether @sge lies within a live ODP MR of the PD its lkey names; 0 or
 * the errno value ibv_advise_mr(3) lists: EFAULT for an lkey that names
 * no such MR, a range outside it, or PREFETCH_WRITE to an MR without
 * local write access.
 */
static int advise_sge_ok(const struct ib_uverbs_sge *sge, uint32_t advice)
{
	const struct fake_mr *mr = NULL;
	int i;

	for (i = 0; i < FAKE_MAX_OBJS && !mr; i++)
		if (fake.mrs[i].live && !fake.mrs[i].dm &&
		    fake.mrs[i].lkey == sge->lkey)
			mr = &fake.mrs[i];
	if (!mr || !(mr->access & IBV_ACCESS_ON_DEMAND) ||
	    mr->pd_handle != FAKE_PD_HANDLE)
		return EFAULT;
	if (sge->addr < mr->hca_va || sge->length > mr->length ||
	    sge->addr - mr->hca_va > mr->length - sge->length)
		return EFAULT;
	if (advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return EFAULT;
	return 0;
}

/*
 * ADVISE_MR: recorded in fake.last_advise as it came, then checked as
 * uverbs does (the PD when it parses the attributes, ENOENT; then the
 * advice, the flags and the size of the array, EINVAL), then as a driver
 * would: advice it does not know is not supported (EOPNOTSUPP, as
 * mlx5), every SGE must lie in an ODP MR.  Prefetching itself is a no-op.
 */
static int mr_advise(struct ib_uverbs_attr **attrs)
{
	const struct ib_uverbs_attr *sges = attrs[ADV_SGES];
	const uint8_t *user = (const void *)(uintptr_t)sges->data;
	struct ib_uverbs_sge sge;
	uint64_t advice, raw_flags;
	uint32_t flags, i, n;
	int ret;

	fake.advise_mr++;
	attr_in(attrs[ADV_ADVICE], &advice, sizeof(advice));
	attr_in(attrs[ADV_FLAGS], &raw_flags, sizeof(raw_flags));
	n = sges->len / sizeof(sge);
	fake.last_advise.pd_handle = attrs[ADV_PD]->data;
	fake.last_advise.advice = advice;
	fake.last_advise.flags = raw_flags;
	fake.last_advise.flags_len = attrs[ADV_FLAGS]->len;
	fake.last_advise.num_sge = n;
	memset(fake.last_advise.sge, 0, sizeof(fake.last_advise.sge));
	memcpy(fake.last_advise.sge, user,
	       (n < FAKE_ADVISE_SGES ? n : FAKE_ADVISE_SGES) * sizeof(sge));

	if (attrs[ADV_PD]->data != FAKE_PD_HANDLE)
		return ENOENT;
	if (advice > UINT32_MAX)
		return EINVAL;
	ret = attr_flags32(attrs[ADV_FLAGS], IB_UVERBS_ADVISE_MR_FLAG_FLUSH,
			   &flags);
	if (ret)
		return ret;
	if (sges->len % sizeof(sge))
		return EINVAL;
	if (fake.advise_errno)
		return fake.advise_errno;
	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	for (i = 0; i < n; i++) {
		memcpy(&sge, user + (size_t)i * sizeof(sge), sizeof(sge));
		ret = advise_sge_ok(&sge, advice);
		if (ret)
			return ret;
	}
	return 0;
}

static_assert(ALLOC_NUM <= METHOD_MAX_ATTRS && REG_NUM <= METHOD_MAX_ATTRS &&
	      ADV_NUM <= METHOD_MAX_ATTRS,
	      "a method with more attributes than parse_attrs() holds");

#define METHOD(obj, meth, specs, fn) \
	{ obj, meth, specs, sizeof(specs) / sizeof(specs[0]), fn }

static const struct method_spec methods[] = {
	METHOD(UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC, alloc_dm_attrs,
	       dm_alloc),
	METHOD(UVERBS_OBJECT_DM, UVERBS_METHOD_DM_FREE, free_dm_attrs,
	       dm_free),
	METHOD(UVERBS_OBJECT_MR, UVERBS_METHOD_DM_MR_REG, reg_dm_mr_attrs,
	       dm_mr_reg),
	METHOD(UVERBS_OBJECT_MR, UVERBS_METHOD_ADVISE_MR, advise_mr_attrs,
	       mr_advise),
};

/*
 * Whether the fake answers this ioctl: every method of the DM object
 * (unknown ones with EPROTONOSUPPORT, as the kernel), DM_MR_REG and
 * ADVISE_MR.
 */
static bool fake_answers(const struct ib_uverbs_ioctl_hdr *hdr)
{
	return hdr->object_id == UVERBS_OBJECT_DM ||
	       (hdr->object_id == UVERBS_OBJECT_MR &&
		(hdr->method_id == UVERBS_METHOD_DM_MR_REG ||
		 hdr->method_id == UVERBS_METHOD_ADVISE_MR));
}

/* no_dm hides the methods of device memory, not ADVISE_MR. */
static const struct method_spec *find_method(uint16_t object,
					     uint16_t method)
{
	size_t i;

	if (fake.no_dm && (object == UVERBS_OBJECT_DM ||
			   (object == UVERBS_OBJECT_MR &&
			    method == UVERBS_METHOD_DM_MR_REG)))
		return NULL;
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (methods[i].object == object && methods[i].method == method)
			return &methods[i];
	return NULL;
}

/*
 * As uverbs_set_attr(): an attribute the method does not know fails the
 * command only if the caller made it mandatory; one it knows must come
 * once, with its length; every one the method needs must come.
 */
static int parse_attrs(struct ib_uverbs_ioctl_hdr *hdr,
		       const struct method_spec *m,
		       struct ib_uverbs_attr **found)
{
	unsigned int i, k;

	for (i = 0; i < hdr->num_attrs; i++) {
		struct ib_uverbs_attr *attr = &hdr->attrs[i];
		const struct attr_spec *spec;

		if (!(attr->flags & UVERBS_ATTR_F_MANDATORY))
			fake.optional_attrs++;
		for (k = 0; k < m->num && m->attrs[k].id != attr->attr_id; k++)
			;
		if (k == m->num) {
			if (attr->flags & UVERBS_ATTR_F_MANDATORY)
				return EPROTONOSUPPORT;
			continue;
		}
		spec = &m->attrs[k];
		if (found[k] || attr->attr_data.reserved)
			return EINVAL;
		if (spec->kind == ATTR_IDR ? attr->len != 0 :
		    attr->len < spec->min_len || attr->len > spec->max_len)
			return EINVAL;
		found[k] = attr;
	}
	for (k = 0; k < m->num; k++)
		if (m->attrs[k].mandatory && !found[k])
			return EINVAL;
	return 0;
}

/* As ib_uverbs_ioctl(): 0 or an errno value. */
static int verbs_ioctl(struct ib_uverbs_ioctl_hdr *hdr)
{
	struct ib_uverbs_attr *found[METHOD_MAX_ATTRS] = { 0 };
	const struct method_spec *m;
	int ret;

	fake.ioctls++;
	fake.last_object = hdr->object_id;
	fake.last_method = hdr->method_id;
	fake.last_num_attrs = hdr->num_attrs;
	if (hdr->length > FAKE_PAGE_SIZE ||
	    hdr->length != sizeof(*hdr) +
			   (size_t)hdr->num_attrs * sizeof(hdr->attrs[0]))
		return EINVAL;
	if (hdr->reserved1 || hdr->reserved2)
		return EPROTONOSUPPORT;
	if (hdr->driver_id != RDMA_DRIVER_UNKNOWN)
		return EINVAL;
	m = find_method(hdr->object_id, hdr->method_id);
	if (!m)
		return EPROTONOSUPPORT;
	ret = parse_attrs(hdr, m, found);
	if (ret)
		return ret;
	return m->run(found);
}

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);

	if (is_fake_fd(fd) && request == RDMA_VERBS_IOCTL && arg &&
	    fake_answers(arg)) {
		ret = verbs_ioctl(arg);
		if (ret) {
			errno = ret;
			return -1;
		}
		return 0;
	}
	return syscall(SYS_ioctl, fd, request, arg);
}
