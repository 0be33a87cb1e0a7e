// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: completion queues.
 *
 * The kernel writes CQEs into a ring shared with the provider and
 * publishes them by advancing prod; poll_cq reads them and gives the
 * slots back by advancing cons, and req_notify_cq arms the CQ by writing
 * the ring's notify word.  Neither needs a system call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vroce.h"

/* The CQE flags are the ibv_wc_flags bits of the same name. */
#define VROCE_SAME_FLAG(a, b) static_assert((int)(a) == (int)(b), #a)
VROCE_SAME_FLAG(VROCE_CQE_GRH, IBV_WC_GRH);
VROCE_SAME_FLAG(VROCE_CQE_WITH_IMM, IBV_WC_WITH_IMM);
VROCE_SAME_FLAG(VROCE_CQE_IP_CSUM_OK, IBV_WC_IP_CSUM_OK);
VROCE_SAME_FLAG(VROCE_CQE_WITH_INV, IBV_WC_WITH_INV);

#define VROCE_CQE_FLAGS_KNOWN \
	(VROCE_CQE_GRH | VROCE_CQE_WITH_IMM | VROCE_CQE_IP_CSUM_OK | \
	 VROCE_CQE_WITH_INV)

/*
 * The kernel reports in the core response (ibv_cq.cqe, set by libibverbs)
 * how many CQEs the CQ holds, and in the driver response how many entries
 * the ring has.  With free-running indices a ring holds as many CQEs as it
 * has entries, so cqe may be anything from 1 to entries.
 */
static int vroce_cq_map(struct vroce_cq *cq, int cmd_fd, uint64_t offset,
			uint32_t size, uint32_t entries)
{
	if (cq->vcq.cq.cqe < 1 || (uint32_t)cq->vcq.cq.cqe > entries)
		return EPROTO;

	return vroce_ring_map(&cq->ring, cmd_fd, offset, size, entries,
			      sizeof(struct vroce_cqe));
}

/* Both create verbs: the kernel's CQ and its mapped ring, or NULL. */
static struct vroce_cq *vroce_cq_create(struct ibv_context *ibctx, int cqe,
					struct ibv_comp_channel *channel,
					int comp_vector, struct ibv_pd *parent)
{
	struct vroce_create_cq_cmd_resp resp = {};
	struct ibv_create_cq cmd = {};
	struct vroce_cq *cq;
	bool custom;
	int ret;

	/* A parent domain's CQ: its allocator, and no lock under a TD. */
	cq = vroce_pd_zalloc(parent, sizeof(*cq), VROCE_RES_TYPE_CQ, &custom);
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq->alloc_pd = parent;
	cq->custom = custom;
	cq->lockless = parent && vroce_pd_lockless(parent);

	ret = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_free;

	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto err_lock;

	ret = vroce_cq_map(cq, ibctx->cmd_fd, resp.drv.ring_offset,
			   resp.drv.ring_size, resp.drv.entries);
	if (ret)
		goto err_destroy;

	cq->cqn = resp.drv.cqn;
	vroce_pd_get(parent);
	return cq;

err_destroy:
	/*
	 * libibverbs has not initialised the CQ's mutex yet; zeroed memory
	 * is an unlocked mutex, and a CQ that never delivered an event needs
	 * no waiting in ibv_cmd_destroy_cq().
	 */
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_lock:
	pthread_spin_destroy(&cq->lock);
err_free:
	vroce_pd_free(parent, cq, VROCE_RES_TYPE_CQ, custom);
	errno = ret;
	return NULL;
}

struct ibv_cq *vroce_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct vroce_cq *cq;

	cq = vroce_cq_create(ibctx, cqe, channel, comp_vector, NULL);
	return cq ? &cq->vcq.cq : NULL;
}

/*
 * The SL of a completion. A RoCE packet has no SL; for a UD receive,
 * report its type instead, as mlx5's provider does: bit 3 for a UDP
 * header (RoCE v2), bits 2:0 for the L3 header, 1 IPv6 or 2 IPv4.
 * UCX's ud_verbs transport reads it to find the destination GID in the
 * receive buffer's first 40 bytes (an IPv4 header sits in their second
 * half), and drops every datagram when it reads 0.
 */
enum {
	VROCE_CQE_NET_IPV4 = 2,	/* network_hdr_type, as ib_core numbers it */
	VROCE_CQE_NET_IPV6 = 3,
	VROCE_SL_ROCE_V2 = 0x8,
	VROCE_SL_L3_IPV6 = 0x1,
	VROCE_SL_L3_IPV4 = 0x2,
};

static uint8_t vroce_cqe_sl(const struct vroce_cqe *cqe)
{
	switch (cqe->network_hdr_type) {
	case VROCE_CQE_NET_IPV4:
		return VROCE_SL_ROCE_V2 | VROCE_SL_L3_IPV4;
	case VROCE_CQE_NET_IPV6:
		return VROCE_SL_ROCE_V2 | VROCE_SL_L3_IPV6;
	}
	return cqe->sl;
}

static void vroce_cqe_to_wc(const struct vroce_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = 0;
	wc->byte_len = cqe->byte_len;
	/* Big endian already, or the invalidated rkey: copied as it is. */
	wc->imm_data = cqe->imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->flags & VROCE_CQE_FLAGS_KNOWN;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = 0;
	wc->sl = vroce_cqe_sl(cqe);
	wc->dlid_path_bits = 0;
}

/*
 * Returns the number of completions written to wc, or a negative errno
 * value (errno set too): -EIO if the CQ has no ring (a resize whose new
 * ring could not be mapped) or the kernel published more CQEs than the
 * ring holds.
 */
int vroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct vroce_cq *cq = to_vcq(ibcq);
	uint32_t avail, prod, i;
	int ret;

	if (num_entries <= 0)
		return 0;

	vroce_cq_lock(cq);
	if (!cq->ring.hdr) {
		ret = -EIO;
		goto out;
	}

	prod = vroce_ring_load_acquire(&cq->ring.hdr->prod);
	if (!vroce_ring_peer_prod_ok(cq->cons, prod, cq->ring.num)) {
		ret = -EIO;
		goto out;
	}
	avail = vroce_ring_used(prod, cq->cons);
	if (avail > (uint32_t)num_entries)
		avail = num_entries;

	for (i = 0; i < avail; i++)
		vroce_cqe_to_wc(vroce_ring_entry(&cq->ring, cq->cons + i),
				&wc[i]);

	if (avail) {
		cq->cons += avail;
		vroce_ring_store_release(&cq->ring.hdr->cons, cq->cons);
	}
	ret = avail;
out:
	vroce_cq_unlock(cq);
	if (ret < 0)
		errno = -ret;
	return ret;
}

/*
 * Drops the unpolled CQEs of QP @qpn, which the kernel has destroyed,
 * keeping the others in order: no later poll may return a completion
 * whose QP, and whose wr_id's buffer, the application already freed
 * (libfabric's verbs provider, for one, reposts such a buffer to the
 * QP it closed).  The kept CQEs slide towards prod and cons moves past
 * the dropped ones.  The kernel only writes slots at or past prod, so
 * those between cons and the prod read here stay ours until cons is
 * published.
 */
void vroce_cq_clean(struct vroce_cq *cq, uint32_t qpn)
{
	uint32_t prod, cons;

	vroce_cq_lock(cq);
	if (!cq->ring.hdr)
		goto out;
	prod = vroce_ring_load_acquire(&cq->ring.hdr->prod);
	if (!vroce_ring_peer_prod_ok(cq->cons, prod, cq->ring.num))
		goto out;		/* broken: poll_cq reports EIO */

	cons = vroce_ring_compact(cq->ring.entries, cq->ring.num,
				  cq->ring.stride, cq->cons, prod,
				  offsetof(struct vroce_cqe, qp_num), qpn);
	if (cons != cq->cons) {
		cq->cons = cons;
		vroce_ring_store_release(&cq->ring.hdr->cons, cq->cons);
	}
out:
	vroce_cq_unlock(cq);
}

/*
 * Arm: a new sequence number in the notify word tells the kernel to
 * signal the completion channel at the next (solicited) completion.
 */
int vroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct vroce_cq *cq = to_vcq(ibcq);
	uint32_t seq;
	int ret = 0;

	vroce_cq_lock(cq);
	if (cq->ring.hdr) {
		seq = (cq->notify >> VROCE_CQ_ARM_SEQ_SHIFT) + 1;
		cq->notify = (seq << VROCE_CQ_ARM_SEQ_SHIFT) |
			     (solicited_only ? VROCE_CQ_ARM_SOLICITED : 0);
		vroce_ring_store_release(&cq->ring.hdr->notify, cq->notify);
		/*
		 * Pairs with the kernel's barrier between adding a CQE and
		 * reading the arm: either it sees the arm, or the poll that
		 * follows arming sees the CQE.  Without it, the store could
		 * wait in this CPU's store buffer while that poll read prod
		 * before the CQE, and the event would be lost.
		 */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	} else {
		ret = EIO;
	}
	vroce_cq_unlock(cq);
	return ret;
}

/*
 * The kernel copies the CQEs we have not polled (from the cons we publish
 * first) to the start of a new ring and hands us that ring.  Its cons is
 * 0 and its prod the number of CQEs copied, so polling goes on from index
 * 0 of the new ring.
 */
int vroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct vroce_resize_cq_cmd_resp resp = {};
	struct vroce_cq *cq = to_vcq(ibcq);
	struct ibv_resize_cq cmd = {};
	struct vroce_ring old;
	int ret;

	vroce_cq_lock(cq);
	if (!cq->ring.hdr) {
		ret = EIO;
		goto out;
	}

	vroce_ring_store_release(&cq->ring.hdr->cons, cq->cons);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto out;

	/*
	 * The kernel now writes to the new ring only: if that cannot be
	 * mapped the CQ is left without a ring and every later poll fails.
	 */
	old = cq->ring;
	cq->ring = (struct vroce_ring){};
	ret = vroce_cq_map(cq, ibcq->context->cmd_fd, resp.drv.ring_offset,
			   resp.drv.ring_size, resp.drv.entries);
	vroce_ring_unmap(&old);
	cq->cons = 0;
	/*
	 * Carry the arm state over: the new ring's notify word must say what
	 * the old one said.
	 */
	if (!ret)
		vroce_ring_store_release(&cq->ring.hdr->notify, cq->notify);
out:
	vroce_cq_unlock(cq);
	return ret;
}

/*
 * Extended polling.  ibv_start_poll() takes the CQ lock and, if a CQE is
 * there, makes it the current one; ibv_next_poll() consumes the current
 * CQE and moves on; ibv_end_poll() consumes the current CQE, if any,
 * publishes cons and drops the lock.  When ibv_start_poll() fails
 * (ENOENT: no CQE, EIO: no ring or a broken one) the lock is already
 * dropped, as ibv_end_poll() is not called then.
 */

/* CLOCK_REALTIME minus CLOCK_MONOTONIC, in ns. */
static uint64_t vroce_wall_offset(void)
{
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	return (uint64_t)(real.tv_sec - mono.tv_sec) * 1000000000ULL +
	       (uint64_t)(real.tv_nsec - mono.tv_nsec);
}

/* Point cur at the CQE at cons: 0, ENOENT or EIO. */
static int vroce_cq_ex_load(struct vroce_cq *cq)
{
	uint32_t prod;

	cq->cur = NULL;
	if (!cq->ring.hdr)
		return EIO;
	prod = vroce_ring_load_acquire(&cq->ring.hdr->prod);
	if (!vroce_ring_peer_prod_ok(cq->cons, prod, cq->ring.num))
		return EIO;
	if (vroce_ring_empty(prod, cq->cons))
		return ENOENT;

	cq->cur = vroce_ring_entry(&cq->ring, cq->cons);
	cq->vcq.cq_ex.wr_id = cq->cur->wr_id;
	cq->vcq.cq_ex.status = cq->cur->status;
	return 0;
}

static int vroce_start_poll(struct ibv_cq_ex *ibcq,
			    struct ibv_poll_cq_attr *attr)
{
	struct vroce_cq *cq = to_vcq_ex(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;

	vroce_cq_lock(cq);
	ret = vroce_cq_ex_load(cq);
	if (ret)
		vroce_cq_unlock(cq);
	else if (cq->wall_clock)
		cq->wall_offset = vroce_wall_offset();
	return ret;
}

static int vroce_next_poll(struct ibv_cq_ex *ibcq)
{
	struct vroce_cq *cq = to_vcq_ex(ibcq);

	if (cq->cur)
		cq->cons++;
	return vroce_cq_ex_load(cq);
}

static void vroce_end_poll(struct ibv_cq_ex *ibcq)
{
	struct vroce_cq *cq = to_vcq_ex(ibcq);

	if (cq->cur)
		cq->cons++;
	cq->cur = NULL;
	if (cq->ring.hdr)
		vroce_ring_store_release(&cq->ring.hdr->cons, cq->cons);
	vroce_cq_unlock(cq);
}

static enum ibv_wc_opcode vroce_wc_read_opcode(struct ibv_cq_ex *ibcq)
{
	return to_vcq_ex(ibcq)->cur->opcode;
}

static uint32_t vroce_wc_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static uint32_t vroce_wc_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return to_vcq_ex(ibcq)->cur->byte_len;
}

static __be32 vroce_wc_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return to_vcq_ex(ibcq)->cur->imm_data;
}

static uint32_t vroce_wc_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_vcq_ex(ibcq)->cur->qp_num;
}

static uint32_t vroce_wc_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return to_vcq_ex(ibcq)->cur->src_qp;
}

static unsigned int vroce_wc_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return to_vcq_ex(ibcq)->cur->flags & VROCE_CQE_FLAGS_KNOWN;
}

/* RoCE has no LIDs. */
static uint32_t vroce_wc_read_slid(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static uint8_t vroce_wc_read_sl(struct ibv_cq_ex *ibcq)
{
	return vroce_cqe_sl(to_vcq_ex(ibcq)->cur);
}

static uint8_t vroce_wc_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

/*
 * The CQE's timestamp: CLOCK_MONOTONIC in ns when the kernel wrote it,
 * which is the device's clock (hca_core_clock 1 GHz).
 */
static uint64_t vroce_wc_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return to_vcq_ex(ibcq)->cur->timestamp;
}

/*
 * The same moment on CLOCK_REALTIME: the offset between the two clocks
 * is taken at ibv_start_poll(), so a clock step lands between polls.
 */
static uint64_t vroce_wc_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	struct vroce_cq *cq = to_vcq_ex(ibcq);

	return cq->cur->timestamp + cq->wall_offset;
}

/* What a CQE has: timestamps; no VLAN, flow tag or tag matching. */
#define VROCE_CQ_EX_WC_FLAGS	(IBV_WC_STANDARD_FLAGS | \
				 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
				 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define VROCE_CQ_EX_FLAGS	IBV_CREATE_CQ_ATTR_SINGLE_THREADED

/*
 * ibv_create_cq_ex(): the same CQ as ibv_create_cq() (the kernel is asked
 * with the same command), with the extended polling functions.  Fails
 * with EOPNOTSUPP for a wc_flags field a CQE does not carry or
 * IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN.  With a parent domain, its
 * allocator provides the CQ's memory and its thread domain makes the CQ
 * lockless; SINGLE_THREADED is only a hint: the CQ keeps its lock.
 */
struct ibv_cq_ex *vroce_create_cq_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr)
{
	const uint32_t known = IBV_CQ_INIT_ATTR_MASK_FLAGS |
			       IBV_CQ_INIT_ATTR_MASK_PD;
	struct ibv_pd *parent = NULL;
	struct ibv_cq_ex *ex;
	struct vroce_cq *cq;

	if ((attr->comp_mask & ~known) ||
	    (attr->wc_flags & ~(uint64_t)VROCE_CQ_EX_WC_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~VROCE_CQ_EX_FLAGS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* The PD of a CQ can only be a parent domain of this context. */
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		parent = attr->parent_domain;
		if (!parent || parent->context != ibctx ||
		    !to_vpd(parent)->protection) {
			errno = EINVAL;
			return NULL;
		}
	}

	/*
	 * libibverbs initialises what it owns in the CQ (context, channel,
	 * cq_context, events) once we return it, as for ibv_create_cq().
	 */
	cq = vroce_cq_create(ibctx, attr->cqe, attr->channel,
			     attr->comp_vector, parent);
	if (!cq)
		return NULL;

	ex = &cq->vcq.cq_ex;
	ex->comp_mask = 0;
	ex->start_poll = vroce_start_poll;
	ex->next_poll = vroce_next_poll;
	ex->end_poll = vroce_end_poll;
	ex->read_opcode = vroce_wc_read_opcode;
	ex->read_vendor_err = vroce_wc_read_vendor_err;
	ex->read_byte_len = vroce_wc_read_byte_len;
	ex->read_imm_data = vroce_wc_read_imm_data;
	ex->read_qp_num = vroce_wc_read_qp_num;
	ex->read_src_qp = vroce_wc_read_src_qp;
	ex->read_wc_flags = vroce_wc_read_wc_flags;
	ex->read_slid = vroce_wc_read_slid;
	ex->read_sl = vroce_wc_read_sl;
	ex->read_dlid_path_bits = vroce_wc_read_dlid_path_bits;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		ex->read_completion_ts = vroce_wc_read_completion_ts;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK) {
		cq->wall_clock = true;
		ex->read_completion_wallclock_ns =
			vroce_wc_read_completion_wallclock_ns;
	}
	return ex;
}

int vroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct vroce_cq *cq = to_vcq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	vroce_ring_unmap(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	vroce_pd_put(cq->alloc_pd);
	vroce_pd_free(cq->alloc_pd, cq, VROCE_RES_TYPE_CQ, cq->custom);
	return 0;
}
