// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Scatter/gather lists against MRs. Every SGE is checked (key, PD,
 * access, bounds) before a byte moves; then bytes go to or from the MR's
 * pages through its page map.
 *
 * A reference keeps an MR's struct, not its pages: dereg_mr unpins at
 * once an MR nobody holds (its count goes from 1 to 0, so no lookup can
 * take it after); one that is held it revokes, waits one RCU grace period
 * and unpins, however long a peer holds a reference. So every copy into
 * or out of an MR looks at the revoked flag first, in the same RCU
 * read-side section as the copy: a revoked MR moves no more bytes
 * (-EACCES), and once the grace period is over no copy can still be
 * running. An FRMR's translation changes with each registration: a copy
 * takes it once (vroce_mr_xlate()) in its RCU section and checks its range
 * against that, so it never mixes two registrations.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/highmem.h>

#include "vroce.h"
#include "core/roce.h"

/*
 * The translation of @mr in force: under rcu_read_lock() or the key
 * table's lock; NULL for an FRMR that is not registered.
 */
const struct vroce_mr_xlate *vroce_mr_xlate(struct vroce_mr *mr)
{
	struct vroce_frmr_map *map;

	if (!mr->frmr)
		return &mr->x;
	map = rcu_dereference_check(mr->map,
				    lockdep_is_held(&to_vdev(mr->ibmr.device)->keys.xa_lock));
	return map ? &map->x : NULL;
}

/* Looks up the MR of @key in @pd; takes a reference. */
struct vroce_mr *vroce_mr_get(struct vroce_dev *vdev, u32 key,
			      struct ib_pd *pd)
{
	const struct vroce_mr_xlate *x;
	struct vroce_mr *mr;
	void *entry;

	/* Lock-free: MRs are freed after a grace period (vroce_mr_free()). */
	rcu_read_lock();
	entry = xa_load(&vdev->keys, vroce_key_index(key));
	mr = xa_pointer_tag(entry) == VROCE_KEY_MR ? xa_untag_pointer(entry) :
						    NULL;
	x = mr ? vroce_mr_xlate(mr) : NULL;
	if (!x || x->key != key || mr->ibmr.pd != pd)
		mr = NULL;
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/* The last reference frees the struct (its pages went at dereg_mr). */
void vroce_mr_put(struct vroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		vroce_mr_kfree(mr);
}

/*
 * Whether @mr still moves bytes for a holder that found it under MR key
 * @key (a check that may turn stale at once). An FRMR no longer
 * registered under @key (invalidated, maybe registered anew) moves none
 * either: a READ still being answered from it must not read pages its
 * ULP has let go, nor those of its next registration.
 */
bool vroce_mr_live(struct vroce_mr *mr, u32 key)
{
	const struct vroce_mr_xlate *x;
	bool live;

	rcu_read_lock();
	x = vroce_mr_xlate(mr);
	live = x && x->key == key && !READ_ONCE(mr->revoked);
	rcu_read_unlock();
	return live;
}

/* The offset of @iova in the page map of @x (within it). */
static u64 vroce_xlate_off(const struct vroce_mr_xlate *x, u64 iova)
{
	return iova - x->iova + x->page_offset;
}

/*
 * The page at offset @off of the page map of @x, translation of @mr; NULL
 * for a page of an ODP MR that is not mapped now (odp.c).
 */
static struct page *vroce_xlate_page(const struct vroce_mr *mr,
				     const struct vroce_mr_xlate *x, u64 off)
{
	if (mr->odp)
		return vroce_odp_page(mr->odp, off);
	return x->pages[off >> PAGE_SHIFT];
}

/* vroce_mr_span() without the count of copies. */
static const struct vroce_mr_xlate *vroce_mr_span_check(struct vroce_mr *mr,
							u32 key, u64 iova,
							u64 len)
{
	const struct vroce_mr_xlate *x = vroce_mr_xlate(mr);
	u64 off;

	if (!x || x->key != key || READ_ONCE(mr->revoked))
		return NULL;
	if (mr->dma)
		return x;
	if (!vroce_range_ok(x->iova, x->length, iova, len))
		return NULL;
	if (mr->odp)
		return x;	/* its pages are looked up one by one */
	off = vroce_xlate_off(x, iova);
	if (len > (u64)x->npages * PAGE_SIZE ||
	    off > (u64)x->npages * PAGE_SIZE - len)
		return NULL;
	return x;
}

/*
 * The translation of @mr in the copy's RCU section, if @mr moves bytes
 * for a holder that found it under MR key @key and [@iova, @iova + @len)
 * is within it: an FRMR registered again since the range was checked is
 * another registration (another key), and may map less; never index past
 * its page map. A copy from an FRMR counts until vroce_mr_span_end(), so
 * that an invalidation completes only after it (vroce_mr_wait_copies()):
 * its ULP may free the pages then. It runs with bottom halves off, so no
 * invalidation on its CPU (in softirq, or in a send engine that holds a
 * _bh lock) can interrupt it and then wait for it.
 */
static const struct vroce_mr_xlate *vroce_mr_span(struct vroce_mr *mr,
						  u32 key, u64 iova, u64 len)
{
	const struct vroce_mr_xlate *x;

	if (!mr->frmr && !mr->odp)
		return vroce_mr_span_check(mr, key, iova, len);
	local_bh_disable();
	atomic_inc(&mr->copying);
	/* Against vroce_mr_wait_copies(): count, then read the map. */
	smp_mb__after_atomic();
	x = vroce_mr_span_check(mr, key, iova, len);
	if (!x) {
		atomic_dec(&mr->copying);
		local_bh_enable();
	}
	return x;
}

/* The end of a copy that vroce_mr_span() let start (@x not NULL). */
static void vroce_mr_span_end(struct vroce_mr *mr,
			      const struct vroce_mr_xlate *x)
{
	if (x && (mr->frmr || mr->odp)) {
		/* The copy's accesses happen before the count drops. */
		smp_mb__before_atomic();
		atomic_dec(&mr->copying);
		local_bh_enable();
	}
}

/*
 * After an FRMR's registration was unpublished: waits for the copies
 * that took it to end. Caller has bottom halves off, like the copies, so
 * none of them is held up on this CPU, and each is at most a packet.
 */
void vroce_mr_wait_copies(struct vroce_mr *mr)
{
	/* Against vroce_mr_span(): unpublish, then read the count. */
	smp_mb();
	while (atomic_read_acquire(&mr->copying))
		cpu_relax();
}

/*
 * Whether MR or MW @obj (tag @tag) grants remote @access to [*@va, *@va +
 * @len); the MR if so. The address of a zero-based window is an offset
 * from its start: *@va becomes the MR address it names.
 */
static struct vroce_mr *vroce_remote_ok(struct vroce_qp *qp, void *obj,
					int tag, u32 rkey, u64 *va, u64 len,
					int access, u32 *mr_key)
{
	const struct vroce_mr_xlate *x;
	struct vroce_mr *mr = obj;
	struct vroce_mw *mw = obj;
	bool zb;

	if (tag == VROCE_KEY_MR) {
		x = vroce_mr_xlate(mr);
		if (!x || x->key != rkey || mr->ibmr.pd != vroce_qp_rx_pd(qp) ||
		    mr->dma || (x->access & access) != access ||
		    !vroce_range_ok(x->iova, x->length, *va, len))
			return NULL;
		*mr_key = x->key;
		return mr;
	}
	/* A type 2 window serves the QP it was bound on only. */
	if (tag != VROCE_KEY_MW || !mw->mr || mw->ibmw.rkey != rkey ||
	    mw->ibmw.pd != vroce_qp_rx_pd(qp) ||
	    (mw->ibmw.type == IB_MW_TYPE_2 && mw->qp != qp) ||
	    (mw->access & access) != access)
		return NULL;
	zb = mw->access & IB_ZERO_BASED;
	if (!vroce_range_ok(zb ? 0 : mw->addr, mw->length, *va, len))
		return NULL;
	if (zb)
		*va += mw->addr;
	/* The registration it was bound to: copies fail after another. */
	*mr_key = mw->mr_key;
	return mw->mr;
}

/*
 * The MR that R_Key @rkey (of an MR or a bound MW) lets @qp reach for
 * @access to [*@va, *@va + @len), with a reference; NULL if it does not.
 * *@va is then the address in the MR (a zero-based window's offset is
 * rebased to the window's start), and *@mr_key the key of the MR's
 * registration that was checked, which every copy names.
 */
struct vroce_mr *vroce_mr_get_remote(struct vroce_qp *qp, u32 rkey, u64 *va,
				     u64 len, int access, u32 *mr_key)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	struct vroce_mr *mr;
	void *entry;

	/* An MR's key is checked lock-free; a window's binding under the lock. */
	rcu_read_lock();
	entry = xa_load(&vdev->keys, vroce_key_index(rkey));
	if (xa_pointer_tag(entry) == VROCE_KEY_MR) {
		mr = vroce_remote_ok(qp, xa_untag_pointer(entry), VROCE_KEY_MR,
				     rkey, va, len, access, mr_key);
		if (mr && !refcount_inc_not_zero(&mr->ref))
			mr = NULL;
		rcu_read_unlock();
		return mr;
	}
	rcu_read_unlock();

	xa_lock_bh(&vdev->keys);
	entry = xa_load(&vdev->keys, vroce_key_index(rkey));
	mr = entry ? vroce_remote_ok(qp, xa_untag_pointer(entry),
				     xa_pointer_tag(entry), rkey, va, len,
				     access, mr_key) : NULL;
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	xa_unlock_bh(&vdev->keys);
	return mr;
}

/*
 * An atomic on the 8 bytes at @iova of @mr (checked already, under MR key
 * @key), as the BTH @opcode says: compare and swap, fetch and add, or an
 * atomic write of @swap_add (its bytes as they lie in memory), with the
 * CPU's own atomics, so it is atomic against every other access too; a
 * write leaves *@orig alone. -EINVAL if the bytes are not 8-byte aligned
 * in memory (or @opcode is none of these), -EACCES if @mr is revoked,
 * -EAGAIN if the page of an ODP MR is not mapped.
 */
int vroce_mr_atomic(struct vroce_mr *mr, u32 key, u64 iova, u8 opcode,
		    u64 swap_add, u64 compare, u64 *orig)
{
	const struct vroce_mr_xlate *x;
	struct page *page;
	int err = -EACCES;
	u64 off;
	u8 *va;
	u64 *p;

	rcu_read_lock();
	x = vroce_mr_span(mr, key, iova, 8);
	off = x ? vroce_xlate_off(x, iova) : 0;
	page = x ? vroce_xlate_page(mr, x, off) : NULL;
	if (x && (off & 7)) {
		err = -EINVAL;
	} else if (x && !page) {
		err = -EAGAIN;
	} else if (x) {
		err = 0;
		va = kmap_local_page(page);
		p = (u64 *)(va + (off & ~PAGE_MASK));
		if (opcode == VROCE_OP_RC_CMP_SWAP)
			*orig = cmpxchg64(p, compare, swap_add);
		else if (opcode == VROCE_OP_RC_FETCH_ADD)
			*orig = atomic64_fetch_add(swap_add, (atomic64_t *)p);
		else if (opcode == VROCE_OP_RC_ATOMIC_WRITE)
			/* After every store of the requests before it. */
			atomic64_set_release((atomic64_t *)p, swap_add);
		else
			err = -EINVAL;
		kunmap_local(va);
	}
	vroce_mr_span_end(mr, x);
	rcu_read_unlock();
	return err;
}

/*
 * Copies @len bytes between @buf and @mr, of translation @x, at @iova
 * (checked already); -EAGAIN if a page of an ODP MR is not mapped (the
 * bytes before it are copied).
 */
static int vroce_mr_copy_live(struct vroce_mr *mr,
			      const struct vroce_mr_xlate *x, u64 iova,
			      void *buf, u32 len, bool to_mr)
{
	u64 off = vroce_xlate_off(x, iova);

	/* The DMA addresses of this device are kernel virtual addresses. */
	if (mr->dma) {
		if (to_mr)
			memcpy((void *)(uintptr_t)iova, buf, len);
		else
			memcpy(buf, (void *)(uintptr_t)iova, len);
		return 0;
	}
	while (len) {
		struct page *page = vroce_xlate_page(mr, x, off);
		u32 in_page = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - in_page);
		u8 *va;

		if (!page)
			return -EAGAIN;
		va = kmap_local_page(page);

		if (to_mr)
			memcpy(va + in_page, buf, n);
		else
			memcpy(buf, va + in_page, n);
		kunmap_local(va);
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * vroce_mr_copy_live() unless @mr is revoked, or no longer registered
 * under MR key @key: then -EACCES. A buffer that was to be filled from
 * it is zeroed on any error, so it carries nothing stale.
 */
int vroce_mr_copy(struct vroce_mr *mr, u32 key, u64 iova, void *buf,
		  u32 len, bool to_mr)
{
	const struct vroce_mr_xlate *x;
	int err = -EACCES;

	rcu_read_lock();
	x = vroce_mr_span(mr, key, iova, len);
	if (x)
		err = vroce_mr_copy_live(mr, x, iova, buf, len, to_mr);
	vroce_mr_span_end(mr, x);
	rcu_read_unlock();
	if (err && !to_mr)
		memset(buf, 0, len);
	return err;
}

/*
 * Whether @mr, under @key, grants local @access to [@addr, @addr + @len)
 * now; a copy checks again (an FRMR may be registered anew).
 */
static bool vroce_mr_local_ok(struct vroce_mr *mr, u32 key, int access,
			      u64 addr, u64 len)
{
	const struct vroce_mr_xlate *x;
	bool ok;

	rcu_read_lock();
	x = vroce_mr_xlate(mr);
	ok = x && x->key == key && (x->access & access) == access &&
	     vroce_range_ok(x->iova, x->length, addr, len) &&
	     !READ_ONCE(mr->revoked);
	rcu_read_unlock();
	return ok;
}

/*
 * Checks every SGE of @sge[0..@n) for @access in the QP's PD and returns
 * their total length, holding their MRs; or a negative IB_WC status,
 * holding nothing.
 */
static int vroce_sgl_check(struct vroce_qp *qp, const struct vroce_sge *sge,
			   u32 n, int access, struct vroce_mr **mrs)
{
	struct vroce_dev *vdev = to_vdev(qp->ibqp.device);
	u64 total = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		mrs[i] = NULL;
		if (!sge[i].length)
			continue;
		mrs[i] = vroce_mr_get(vdev, sge[i].lkey, vroce_qp_rx_pd(qp));
		/* A DMA MR (kernel PDs only) serves kernel QPs only. */
		if (!mrs[i] || (mrs[i]->dma && qp->ibqp.uobject) ||
		    !vroce_mr_local_ok(mrs[i], sge[i].lkey, access,
				       sge[i].addr, sge[i].length)) {
			vroce_sgl_put(mrs, i + 1);
			return -IB_WC_LOC_PROT_ERR;
		}
		total += sge[i].length;
	}
	/* VROCE_MAX_MSG_SZ is 2^31: a valid total still fits an int. */
	if (total >= VROCE_MAX_MSG_SZ) {
		vroce_sgl_put(mrs, n);
		return -IB_WC_LOC_LEN_ERR;
	}
	return total;
}

void vroce_sgl_put(struct vroce_mr **mrs, u32 n)
{
	while (n--)
		if (mrs[n])
			vroce_mr_put(mrs[n]);
}

/*
 * Calls @fn(@ctx, i, addr, m) for each piece of bytes [@skip, @skip +
 * @len) of @sgl, in order: SGE i, from address addr in it, m bytes. Stops
 * at the first nonzero return of @fn and returns it; -EFAULT if @sgl ends
 * before byte @skip + @len (callers check lengths first: a short walk
 * must not leave a buffer's tail unwritten unnoticed).
 */
static int vroce_sgl_walk(const struct vroce_sgl *sgl, u32 skip, u32 len,
			  int (*fn)(void *ctx, u32 i, u64 addr, u32 m),
			  void *ctx)
{
	const struct vroce_sge *sge = sgl->sge;
	u32 i, m;
	int err;

	for (i = 0; i < sgl->n && len; i++) {
		if (skip >= sge[i].length) {
			skip -= sge[i].length;
			continue;
		}
		m = min(len, sge[i].length - skip);
		err = fn(ctx, i, sge[i].addr + skip, m);
		if (err)
			return err;
		len -= m;
		skip = 0;
	}
	/* A caller that checked the length first never gets here. */
	if (WARN_ON_ONCE(len))
		return -EFAULT;
	return 0;
}

/* A copy between a buffer and an SGL: where it is, how it went. */
struct vroce_sgl_xfer {
	const struct vroce_sgl *sgl;
	u8 *buf;
	bool to_mr;
	int err;
};

/* Keeps the worst error of a walk: -EACCES over -EAGAIN. */
static void vroce_keep_err(int *acc, int err)
{
	if (err && *acc != -EACCES)
		*acc = err;
}

static int vroce_sgl_copy_piece(void *ctx, u32 i, u64 addr, u32 m)
{
	struct vroce_sgl_xfer *c = ctx;

	vroce_keep_err(&c->err, vroce_mr_copy(c->sgl->mrs[i],
					      c->sgl->sge[i].lkey, addr,
					      c->buf, m, c->to_mr));
	c->buf += m;
	return 0;
}

/*
 * Moves @len bytes between @buf and @sgl from byte @skip on; -EFAULT if
 * @sgl is shorter (bytes of @buf it did not reach are zeroes), else
 * -EACCES if an MR of it was revoked, else -EAGAIN if a page of an ODP MR
 * was not mapped (what it held is skipped, and bytes that were to come
 * from it are zeroes in @buf).
 */
static int vroce_sgl_copy(struct vroce_sgl *sgl, u32 skip, void *buf,
			  u32 len, bool to_mr)
{
	struct vroce_sgl_xfer c = {
		.sgl = sgl, .buf = buf, .to_mr = to_mr,
	};
	int err = vroce_sgl_walk(sgl, skip, len, vroce_sgl_copy_piece, &c);

	if (err && !to_mr)
		memset(c.buf, 0, (u8 *)buf + len - c.buf);
	return err ?: c.err;
}

/*
 * Calls @fn for each page piece of [@iova, @iova + @len) of @mr (checked
 * already, under MR key @key), in order, in one RCU read-side section (@fn must not sleep);
 * stops at the first nonzero return of @fn and returns it. A DMA MR has
 * no pages: -EOPNOTSUPP; a revoked MR: -EACCES; a page of an ODP MR that
 * is not mapped: -EAGAIN.
 */
int vroce_mr_pages(struct vroce_mr *mr, u32 key, u64 iova, u32 len,
		   int (*fn)(void *ctx, struct page *page, u32 off, u32 n),
		   void *ctx)
{
	const struct vroce_mr_xlate *x;
	u32 in_page, n;
	int err = 0;
	u64 off = 0;

	if (mr->dma)
		return -EOPNOTSUPP;
	rcu_read_lock();
	x = vroce_mr_span(mr, key, iova, len);
	if (x)
		off = vroce_xlate_off(x, iova);
	else
		err = -EACCES;
	while (!err && len) {
		struct page *page = vroce_xlate_page(mr, x, off);

		in_page = off & ~PAGE_MASK;
		n = min_t(u32, len, PAGE_SIZE - in_page);
		err = page ? fn(ctx, page, in_page, n) : -EAGAIN;
		off += n;
		len -= n;
	}
	vroce_mr_span_end(mr, x);
	rcu_read_unlock();
	return err;
}

/* The page walk of vroce_sgl_pages(): the function and its context. */
struct vroce_sgl_pages {
	const struct vroce_sgl *sgl;
	int (*fn)(void *ctx, struct page *page, u32 off, u32 n);
	void *ctx;
};

static int vroce_sgl_pages_piece(void *ctx, u32 i, u64 addr, u32 m)
{
	struct vroce_sgl_pages *w = ctx;

	return vroce_mr_pages(w->sgl->mrs[i], w->sgl->sge[i].lkey, addr, m,
			      w->fn, w->ctx);
}

/* vroce_mr_pages() over bytes [@skip, @skip + @len) of a checked SGL. */
int vroce_sgl_pages(struct vroce_sgl *sgl, u32 skip, u32 len,
		    int (*fn)(void *ctx, struct page *page, u32 off, u32 n),
		    void *ctx)
{
	struct vroce_sgl_pages w = { .sgl = sgl, .fn = fn, .ctx = ctx };

	return vroce_sgl_walk(sgl, skip, len, vroce_sgl_pages_piece, &w);
}

/* The spans of a local packet being taken: the SGL's MRs, the packet. */
struct vroce_sgl_hold {
	const struct vroce_sgl *sgl;
	struct vroce_local_pkt *lp;
};

static int vroce_sgl_hold_piece(void *ctx, u32 i, u64 addr, u32 m)
{
	struct vroce_sgl_hold *h = ctx;
	struct vroce_mr *mr = h->sgl->mrs[i];
	u32 key = h->sgl->sge[i].lkey;
	struct vroce_local_piece *pc;

	if (h->lp->n == VROCE_LOCAL_PIECES || mr->frmr || mr->odp)
		return -E2BIG;
	if (!vroce_mr_live(mr, key))
		return -EACCES;
	pc = &h->lp->piece[h->lp->n++];
	/* The SGL holds one already: this one is the packet's. */
	refcount_inc(&mr->ref);
	pc->mr = mr;
	pc->key = key;
	pc->iova = addr;
	pc->len = m;
	return 0;
}

/*
 * Takes a reference on each MR under bytes [@skip, @skip + @len) of a
 * checked SGL and notes its spans in @lp (local.c): the number of spans,
 * -EFAULT if the SGL is shorter (a caller's bug: it checks lengths),
 * -EACCES if one of the MRs no longer moves bytes, or -E2BIG if there are
 * more than VROCE_LOCAL_PIECES or one is an FRMR or ODP MR (then nothing
 * is held). An FRMR's pages belong to its kernel ULP, which may free them
 * as soon as it is invalidated, with no grace period, and an ODP MR's go
 * with the MMU notifier: its payload goes in an skb, which holds the
 * pages.
 */
int vroce_sgl_hold_span(struct vroce_sgl *sgl, u32 skip, u32 len,
			struct vroce_local_pkt *lp)
{
	struct vroce_sgl_hold h = { .sgl = sgl, .lp = lp };
	int err;

	lp->n = 0;
	err = vroce_sgl_walk(sgl, skip, len, vroce_sgl_hold_piece, &h);
	if (!err)
		return lp->n;
	while (lp->n)
		vroce_mr_put(lp->piece[--lp->n].mr);
	return err;
}

/*
 * A position in the payload of a received packet, advanced as bytes are
 * copied out: in its skb, or in the sender's MRs for a packet between
 * local QPs.
 */
struct vroce_pay_pos {
	const struct vroce_rxpkt *rx;
	u32 off;
};

static void vroce_pay_pos_init(struct vroce_pay_pos *pos,
			       const struct vroce_pkt *pkt)
{
	pos->rx = vroce_rxpkt(pkt);
	pos->off = pos->rx->local ? 0 : pos->rx->payoff;
}

/* The next @n bytes of the payload into @buf; 0 or -EFAULT. */
static int vroce_pay_read(struct vroce_pay_pos *pos, void *buf, u32 n)
{
	int err = 0;

	if (pos->rx->local)
		vroce_local_read(pos->rx->local, pos->off, buf, n);
	else
		err = skb_copy_bits(pos->rx->skb, pos->off, buf, n);
	pos->off += n;
	return err;
}

static int vroce_copy_piece(void *ctx, struct page *page, u32 off, u32 n)
{
	u8 *va = kmap_local_page(page);
	int err;

	err = vroce_pay_read(ctx, va + off, n);
	kunmap_local(va);
	return err;
}

/*
 * Copies the next @len bytes of a received payload, from @pos on, into
 * @mr (found under MR key @key) at @iova; -EAGAIN if a page of an ODP MR
 * is not mapped, -EACCES if @mr is revoked (or the payload is short).
 * @pos moves on by @len either way.
 */
static int vroce_mr_write_pay(struct vroce_mr *mr, u32 key, u64 iova,
			      struct vroce_pay_pos *pos, u32 len)
{
	u32 end = pos->off + len;
	int err = -EACCES;

	if (mr->dma) {
		rcu_read_lock();
		if (vroce_mr_live(mr, key))
			err = vroce_pay_read(pos, (void *)(uintptr_t)iova, len);
		rcu_read_unlock();
	} else {
		err = vroce_mr_pages(mr, key, iova, len, vroce_copy_piece, pos);
	}
	pos->off = end;
	return err && err != -EAGAIN ? -EACCES : err;
}

/*
 * The payload of @pkt into @mr at @iova (checked already, under MR key
 * @key); 0, -EAGAIN (a page of an ODP MR not mapped) or -EACCES.
 */
int vroce_mr_write_pkt(struct vroce_mr *mr, u32 key, u64 iova,
		       const struct vroce_pkt *pkt)
{
	struct vroce_pay_pos pos;

	vroce_pay_pos_init(&pos, pkt);
	return vroce_mr_write_pay(mr, key, iova, &pos, pkt->paylen);
}

/* The first @n bytes of @pkt's payload (@n at most its length) into @buf. */
int vroce_pkt_read_pay(const struct vroce_pkt *pkt, void *buf, u32 n)
{
	struct vroce_pay_pos pos;

	vroce_pay_pos_init(&pos, pkt);
	return vroce_pay_read(&pos, buf, n);
}

/* A received payload going into an SGL: where it is, how it went. */
struct vroce_sgl_pay {
	const struct vroce_sgl *sgl;
	struct vroce_pay_pos pos;
	int err;
};

static int vroce_sgl_pay_piece(void *ctx, u32 i, u64 addr, u32 m)
{
	struct vroce_sgl_pay *w = ctx;

	vroce_keep_err(&w->err, vroce_mr_write_pay(w->sgl->mrs[i],
						   w->sgl->sge[i].lkey, addr,
						   &w->pos, m));
	return 0;
}

/*
 * The payload of @pkt into the SGL, from byte @skip of it on; -EFAULT if
 * the SGL is shorter, else -EACCES if an MR of it was revoked (its part
 * is skipped), else -EAGAIN if a page of an ODP MR was not mapped.
 */
int vroce_sgl_write_pkt(struct vroce_sgl *sgl, u32 skip,
			const struct vroce_pkt *pkt)
{
	struct vroce_sgl_pay w = { .sgl = sgl };
	int err;

	vroce_pay_pos_init(&w.pos, pkt);
	err = vroce_sgl_walk(sgl, skip, pkt->paylen, vroce_sgl_pay_piece, &w);
	return err ?: w.err;
}

/*
 * Whether an MR of the checked SGL @sgl moves no more bytes for it since
 * the check: deregistered, or an FRMR invalidated (and perhaps registered
 * anew, under another key or over another range).
 */
bool vroce_sgl_revoked(const struct vroce_sgl *sgl)
{
	const struct vroce_sge *sge = sgl->sge;
	u32 i;

	for (i = 0; i < sgl->n; i++)
		if (sgl->mrs[i] &&
		    !vroce_mr_local_ok(sgl->mrs[i], sge[i].lkey, 0,
				       sge[i].addr, sge[i].length))
			return true;
	return false;
}

int vroce_sgl_prepare(struct vroce_qp *qp, struct vroce_sgl *sgl,
		      const struct vroce_sge *sge, u32 n, int access)
{
	int len;
	u32 i;

	sgl->sge = sge;
	sgl->n = n;
	sgl->odp = false;
	len = vroce_sgl_check(qp, sge, n, access, sgl->mrs);
	if (len < 0)
		return len;
	sgl->len = len;
	for (i = 0; i < n; i++)
		if (sgl->mrs[i] && sgl->mrs[i]->odp)
			sgl->odp = true;
	return len;
}

int vroce_sgl_write(struct vroce_sgl *sgl, u32 off, const void *buf,
		    u32 len)
{
	return vroce_sgl_copy(sgl, off, (void *)buf, len, true);
}

int vroce_sgl_read(struct vroce_sgl *sgl, u32 off, void *buf, u32 len)
{
	return vroce_sgl_copy(sgl, off, buf, len, false);
}

void vroce_sgl_release(struct vroce_sgl *sgl)
{
	vroce_sgl_put(sgl->mrs, sgl->n);
}

/* The first unmapped page under an SGL's ODP MRs: which, where, how far. */
struct vroce_sgl_odp {
	const struct vroce_sgl *sgl;
	struct vroce_mr *mr;
	u64 iova;
	u64 n;
	u32 pos;		/* bytes of the walk before the piece */
};

static int vroce_sgl_odp_piece(void *ctx, u32 i, u64 addr, u32 m)
{
	struct vroce_sgl_odp *o = ctx;
	const struct vroce_sge *sge = &o->sgl->sge[i];
	struct vroce_mr *mr = o->sgl->mrs[i];
	u64 first;

	if (!mr || !vroce_odp_missing(mr, addr, m, &first)) {
		o->pos += m;
		return 0;
	}
	o->pos += first - addr;
	o->mr = mr;
	o->iova = first;
	/* Faults ahead: the rest of the SGE, which the message uses. */
	o->n = sge->addr + sge->length - first;
	return 1;
}

/*
 * Whether a page of an ODP MR under bytes [@skip, @skip + @len) of the
 * checked SGL @sgl is not mapped; if so, the first one's MR (with a
 * reference, for vroce_odp_fault()), its MR address, the bytes from
 * there to the end of its SGE and (if @at) its byte in the SGL.
 */
bool vroce_sgl_odp_missing(const struct vroce_sgl *sgl, u32 skip, u32 len,
			   struct vroce_mr **mr, u64 *iova, u64 *n, u32 *at)
{
	struct vroce_sgl_odp o = { .sgl = sgl, .pos = skip };

	if (!sgl->odp || vroce_sgl_walk(sgl, skip, len, vroce_sgl_odp_piece,
					&o) != 1)
		return false;
	refcount_inc(&o.mr->ref);
	*mr = o.mr;
	*iova = o.iova;
	*n = o.n;
	if (at)
		*at = o.pos;
	return true;
}

/*
 * For the receive path, after a copy into bytes [@skip, @skip + @len) of
 * @sgl found an ODP page not mapped: vroce_odp_missed() of the first one
 * (if the fault mapped it meanwhile, -EAGAIN all the same), to the end of
 * its SGE.
 */
int vroce_sgl_odp_missed(const struct vroce_sgl *sgl, u32 skip, u32 len)
{
	struct vroce_sgl_odp o = { .sgl = sgl };

	if (!sgl->odp || vroce_sgl_walk(sgl, skip, len, vroce_sgl_odp_piece,
					&o) != 1)
		return -EAGAIN;
	return vroce_odp_missed(o.mr, o.iova, o.n, o.n);
}
