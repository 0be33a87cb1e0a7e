// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * On-demand paging (IB_ACCESS_ON_DEMAND): an MR that pins nothing at
 * registration. Its page map is an xarray from user page number to
 * struct page, each entry holding a page reference, filled by faults
 * and emptied by the MMU notifier. An implicit MR (address 0, length
 * U64_MAX) covers the whole address space the same way.
 *
 * Faults sleep (get_user_pages_remote()), so they never run in softirq:
 * the send engine faults in its work item before it builds a packet
 * (vroce_odp_fault()), and the receive path asks this file's work item
 * for a fault (vroce_odp_ready()) and meanwhile answers with an RNR NAK,
 * so that the requester sends the packet again.
 *
 * Copies from and into an ODP MR count themselves in mr->copying, with
 * bottom halves off, as copies of an FRMR do (sgl.c). An invalidation
 * marks its entries (a tag on the pointer: lookups see no page), waits
 * for the copies in flight, then drops the entries and their pages: no
 * byte moves to or from a page after the notifier returned.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "vroce.h"
#include "compat.h"
#include "core/roce.h"

/* Pages one fault brings in at most: one call, one chunk of the stack. */
#define VROCE_ODP_FAULT_PAGES	(VROCE_ODP_FAULT_MAX >> PAGE_SHIFT)
#define VROCE_ODP_CHUNK		32
/* Faults the receive path may have waiting per MR. */
#define VROCE_ODP_WANT		16
/* Entries a walk of the page map looks at per hold of its lock. */
#define VROCE_ODP_BATCH		256
/* The tag of an entry being invalidated. */
#define VROCE_ODP_GOING		1
/* The entry of a page whose last fault failed (tagged, no page). */
#define VROCE_ODP_BAD		xa_mk_value(0)

/* A fault the receive path asked for. */
struct vroce_odp_range {
	u64 va;
	u64 len;
};

struct vroce_odp {
	struct mmu_interval_notifier notif;
	struct xarray pages;		/* page number -> held page */
	struct vroce_mr *mr;
	struct vroce_dev *vdev;		/* for its counters */
	struct mm_struct *mm;		/* grabbed */
	u64 start;			/* the user address of mr->x.iova */
	unsigned long base;		/* start's page number */
	bool write;			/* faults ask for writable pages */
	struct mutex fault_lock;	/* one fault at a time; against release */
	spinlock_t want_lock;		/* the fields below */
	bool dead;			/* released: no more faults */
	u32 nwant;
	struct vroce_odp_range want[VROCE_ODP_WANT];
	/* QPs (held) whose READ responses wait: kicked after each fault. */
	struct list_head waiters;
	struct work_struct work;
	struct rcu_head rcu;
};

static struct workqueue_struct *vroce_odp_wq;

int vroce_odp_wq_init(void)
{
	/* Its own: faults may block long, and must not hold up others'. */
	vroce_odp_wq = alloc_workqueue("vroce_odp", WQ_UNBOUND, 0);
	return vroce_odp_wq ? 0 : -ENOMEM;
}

void vroce_odp_wq_exit(void)
{
	destroy_workqueue(vroce_odp_wq);
}

/* The page an entry holds: NULL for a failed page's. */
static struct page *vroce_odp_held(void *entry)
{
	return entry == VROCE_ODP_BAD ? NULL : xa_untag_pointer(entry);
}

/* The user address of MR address @iova (within the MR). */
static u64 vroce_odp_va(const struct vroce_mr *mr, u64 iova)
{
	return mr->odp->start + (iova - mr->x.iova);
}

/*
 * The page at offset @off of the MR's page map (vroce_xlate_off()), or
 * NULL if it is not mapped now. Under rcu_read_lock().
 */
struct page *vroce_odp_page(const struct vroce_odp *odp, u64 off)
{
	void *entry = xa_load((struct xarray *)&odp->pages,
			      odp->base + (off >> PAGE_SHIFT));

	if (!entry || xa_pointer_tag(entry))
		return NULL;
	return entry;
}

/* Whether every page of user range [@va, @va + @len) is mapped. */
static bool vroce_odp_present(struct vroce_odp *odp, u64 va, u64 len,
			      u64 *missing)
{
	unsigned long pfn = va >> PAGE_SHIFT;
	unsigned long last = (va + len - 1) >> PAGE_SHIFT;
	void *entry;

	rcu_read_lock();
	for (; pfn <= last; pfn++) {
		entry = xa_load(&odp->pages, pfn);
		if (!entry || xa_pointer_tag(entry))
			break;
	}
	rcu_read_unlock();
	if (pfn <= last) {
		*missing = max_t(u64, va, (u64)pfn << PAGE_SHIFT);
		return false;
	}
	return true;
}

/*
 * The first MR address of [@iova, @iova + @len) of @mr whose page is not
 * mapped, in *@first; false if all are (or @mr is no ODP MR).
 */
bool vroce_odp_missing(struct vroce_mr *mr, u64 iova, u64 len, u64 *first)
{
	u64 va;

	if (!mr->odp || !len)
		return false;
	if (vroce_odp_present(mr->odp, vroce_odp_va(mr, iova), len, &va))
		return false;
	*first = iova + (va - vroce_odp_va(mr, iova));
	return true;
}

/*
 * Calls @fn on every entry of pages [@first, @last] of @odp, under the
 * lock, VROCE_ODP_BATCH at a time: bottom halves get their turn between
 * batches. @fn may erase the entry or store into its slot.
 */
static void vroce_odp_walk(struct vroce_odp *odp, unsigned long first,
			   unsigned long last,
			   void (*fn)(struct vroce_odp *odp, unsigned long idx,
				      void *entry, unsigned long *n),
			   unsigned long *n)
{
	unsigned long idx = first;
	void *entry = NULL;
	u32 k;

	do {
		xa_lock_bh(&odp->pages);
		for (k = 0; k < VROCE_ODP_BATCH; k++) {
			entry = xa_find(&odp->pages, &idx, last, XA_PRESENT);
			if (!entry)
				break;
			fn(odp, idx, entry, n);
			if (idx++ == last)
				break;
		}
		xa_unlock_bh(&odp->pages);
	} while (entry && idx <= last && idx > first);
}

/*
 * Invalidation, first pass: no lookup finds the mapped pages any more.
 * Counts those a copy may still use (also those an invalidation under
 * way tagged), and forgets failed faults: the mapping changes.
 */
static void vroce_odp_tag(struct vroce_odp *odp, unsigned long idx,
			  void *entry, unsigned long *going)
{
	if (entry == VROCE_ODP_BAD) {
		__xa_erase(&odp->pages, idx);
		return;
	}
	if (!xa_pointer_tag(entry))
		__xa_store(&odp->pages, idx,
			   xa_tag_pointer(entry, VROCE_ODP_GOING), GFP_ATOMIC);
	(*going)++;
}

/* Invalidation, second pass: the tagged pages go. */
static void vroce_odp_drop(struct vroce_odp *odp, unsigned long idx,
			   void *entry, unsigned long *n)
{
	if (entry == VROCE_ODP_BAD || !xa_pointer_tag(entry))
		return;
	__xa_erase(&odp->pages, idx);
	put_page(xa_untag_pointer(entry));
	(*n)++;
}

/* Release: every entry goes. */
static void vroce_odp_clear(struct vroce_odp *odp, unsigned long idx,
			    void *entry, unsigned long *n)
{
	struct page *page = vroce_odp_held(entry);

	__xa_erase(&odp->pages, idx);
	if (page)
		put_page(page);
}

static bool vroce_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct vroce_odp *odp = container_of(mni, struct vroce_odp, notif);
	unsigned long first = range->start >> PAGE_SHIFT;
	unsigned long last = (range->end - 1) >> PAGE_SHIFT;
	unsigned long going = 0, n = 0;

	/* No fault publishes pages from now on (mmu_interval_read_retry). */
	xa_lock_bh(&odp->pages);
	mmu_interval_set_seq(mni, cur_seq);
	xa_unlock_bh(&odp->pages);
	/* First no lookup finds them, then no copy still uses them. */
	vroce_odp_walk(odp, first, last, vroce_odp_tag, &going);
	if (!going)
		return true;
	local_bh_disable();
	vroce_mr_wait_copies(odp->mr);
	local_bh_enable();
	vroce_odp_walk(odp, first, last, vroce_odp_drop, &n);
	if (n)
		vroce_count(odp->vdev, VROCE_CNT_ODP_INVALIDATIONS, n);
	return true;
}

static const struct mmu_interval_notifier_ops vroce_odp_ops = {
	.invalidate = vroce_odp_invalidate,
};

/*
 * Publishes the @n pages got at page @pfn (their slots reserved), unless
 * an invalidation ran since @seq: then -EAGAIN, and they are put back.
 */
static int vroce_odp_store(struct vroce_odp *odp, unsigned long pfn,
			   struct page **pages, long n, unsigned long seq)
{
	long i, mapped = 0;
	struct page *held;
	void *old;
	int err = 0;

	xa_lock_bh(&odp->pages);
	if (mmu_interval_read_retry(&odp->notif, seq)) {
		xa_unlock_bh(&odp->pages);
		for (i = 0; i < n; i++)
			put_page(pages[i]);
		return -EAGAIN;
	}
	for (i = 0; i < n; i++) {
		old = __xa_store(&odp->pages, pfn + i, pages[i], GFP_ATOMIC);
		if (xa_is_err(old)) {
			put_page(pages[i]);
			err = -ENOMEM;
			continue;
		}
		/* No invalidation runs: a plain or failed entry, replaced. */
		held = old ? vroce_odp_held(old) : NULL;
		if (held)
			put_page(held);
		else
			mapped++;
	}
	xa_unlock_bh(&odp->pages);
	vroce_count(odp->vdev, VROCE_CNT_ODP_FAULTS, mapped);
	return err;
}

/* Reserves the slots of pages [@pfn, @pfn + @n), so a store needs none. */
static int vroce_odp_reserve(struct vroce_odp *odp, unsigned long pfn,
			     unsigned long n)
{
	unsigned long i;
	int err;

	for (i = 0; i < n; i++) {
		err = xa_reserve_bh(&odp->pages, pfn + i, GFP_KERNEL);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Maps user pages [@pfn, @pfn + @n) of @odp, @n at most VROCE_ODP_CHUNK;
 * the number mapped (from @pfn on), or an error. Caller holds fault_lock
 * and a user of the mm.
 */
static long vroce_odp_fault_chunk(struct vroce_odp *odp, unsigned long pfn,
				  unsigned long n)
{
	struct page *pages[VROCE_ODP_CHUNK];
	unsigned long seq;
	long got;
	int err;

	do {
		seq = mmu_interval_read_begin(&odp->notif);
		/* After any invalidation's drop pass: it may erase slots. */
		err = vroce_odp_reserve(odp, pfn, n);
		if (err)
			return err;
		mmap_read_lock(odp->mm);
		got = vroce_gup_remote(odp->mm, pfn << PAGE_SHIFT, n,
				       odp->write ? FOLL_WRITE : 0, pages);
		mmap_read_unlock(odp->mm);
		if (got <= 0)
			return got ? got : -EFAULT;
		err = vroce_odp_store(odp, pfn, pages, got, seq);
	} while (err == -EAGAIN);
	return err ? err : got;
}

/*
 * Maps user range [@va, @va + @len) of @odp, VROCE_ODP_FAULT_PAGES pages
 * at most; sleeps. On failure *@bad is the page that failed.
 */
static int vroce_odp_fault_va(struct vroce_odp *odp, u64 va, u64 len,
			      unsigned long *bad)
{
	unsigned long pfn = va >> PAGE_SHIFT;
	unsigned long last = (va + len - 1) >> PAGE_SHIFT;
	unsigned long n;
	u64 missing;
	long got;
	int err = 0;

	*bad = pfn;
	/* An implicit MR covers user addresses only. */
	if (va >= odp->mm->task_size || len > odp->mm->task_size - va)
		return -EFAULT;
	last = min(last, pfn + VROCE_ODP_FAULT_PAGES - 1);
	mutex_lock(&odp->fault_lock);
	if (READ_ONCE(odp->dead) || !mmget_not_zero(odp->mm)) {
		mutex_unlock(&odp->fault_lock);
		return -EFAULT;
	}
	while (pfn <= last) {
		n = min_t(unsigned long, last - pfn + 1, VROCE_ODP_CHUNK);
		if (vroce_odp_present(odp, (u64)pfn << PAGE_SHIFT,
				      (u64)n << PAGE_SHIFT, &missing)) {
			pfn += n;
			continue;
		}
		pfn = missing >> PAGE_SHIFT;
		n = min_t(unsigned long, last - pfn + 1, VROCE_ODP_CHUNK);
		got = vroce_odp_fault_chunk(odp, pfn, n);
		if (got < 0) {
			*bad = pfn;
			err = got;
			break;
		}
		pfn += got;
	}
	mmput(odp->mm);
	mutex_unlock(&odp->fault_lock);
	return err;
}

/*
 * Maps the pages of [@iova, @iova + @len) of ODP MR @mr (within it);
 * sleeps. 0, or -EFAULT if one cannot be (no mapping there, or not
 * writable for a writable MR), -ENOMEM, or -EINTR for a fatal signal.
 */
int vroce_odp_fault(struct vroce_mr *mr, u64 iova, u64 len)
{
	u64 step = (u64)VROCE_ODP_FAULT_PAGES << PAGE_SHIFT;
	unsigned long bad;
	u64 va, n;
	int err = 0;

	if (!mr->odp)
		return 0;
	va = vroce_odp_va(mr, iova);
	while (len && !err) {
		n = min(len, step - offset_in_page(va));
		err = vroce_odp_fault_va(mr->odp, va, n, &bad);
		va += n;
		len -= n;
		if (!err && len && fatal_signal_pending(current))
			err = -EINTR;
		cond_resched();
	}
	return err;
}

/* Notes that page @pfn failed to fault: the next access to it fails. */
static void vroce_odp_mark_bad(struct vroce_odp *odp, unsigned long pfn)
{
	if (xa_reserve_bh(&odp->pages, pfn, GFP_KERNEL))
		return;
	xa_lock_bh(&odp->pages);
	if (!xa_load(&odp->pages, pfn))
		__xa_store(&odp->pages, pfn, VROCE_ODP_BAD, GFP_ATOMIC);
	xa_unlock_bh(&odp->pages);
}

/*
 * After a fault (or at release): every QP whose READ responses waited
 * builds them again, and waits again if it must.
 */
static void vroce_odp_kick_waiters(struct vroce_odp *odp)
{
	struct vroce_qp *qp, *tmp;
	LIST_HEAD(kick);

	spin_lock_bh(&odp->want_lock);
	list_splice_init(&odp->waiters, &kick);
	spin_unlock_bh(&odp->want_lock);
	list_for_each_entry_safe(qp, tmp, &kick, resp.odp_link) {
		list_del_init(&qp->resp.odp_link);
		/* Off every list now: another MR's may take it again. */
		smp_store_release(&qp->resp.odp_on, NULL);
		vroce_tx_kick(qp);
		vroce_qp_put(qp);
	}
}

static void vroce_odp_work(struct work_struct *work)
{
	struct vroce_odp *odp = container_of(work, struct vroce_odp, work);
	struct vroce_odp_range r;
	unsigned long bad;

	for (;;) {
		spin_lock_bh(&odp->want_lock);
		if (odp->dead || !odp->nwant) {
			spin_unlock_bh(&odp->want_lock);
			return;
		}
		r = odp->want[0];
		odp->nwant--;
		memmove(odp->want, odp->want + 1, odp->nwant * sizeof(r));
		spin_unlock_bh(&odp->want_lock);
		/* Any failure (no mapping, no memory) fails the access. */
		if (vroce_odp_fault_va(odp, r.va, r.len, &bad))
			vroce_odp_mark_bad(odp, bad);
		vroce_odp_kick_waiters(odp);
	}
}

/*
 * Queues a fault of user range @r (dropped if the queue is full: the
 * next access asks again) and puts @qp, if not NULL, on the list of QPs
 * to kick after it, holding it. False if @odp is released.
 */
static bool vroce_odp_want(struct vroce_odp *odp, struct vroce_odp_range r,
			   struct vroce_qp *qp)
{
	u32 i;

	spin_lock_bh(&odp->want_lock);
	if (odp->dead) {
		spin_unlock_bh(&odp->want_lock);
		return false;
	}
	for (i = 0; i < odp->nwant; i++)
		if (odp->want[i].va == r.va)
			break;
	if (i == odp->nwant && i < VROCE_ODP_WANT)
		odp->want[odp->nwant++] = r;
	/*
	 * A QP waits for one READ at a time, so on one list at a time; one
	 * that still is on another MR's is kicked from there, and comes back.
	 */
	if (qp && !smp_load_acquire(&qp->resp.odp_on) &&
	    refcount_inc_not_zero(&qp->ref->count)) {
		WRITE_ONCE(qp->resp.odp_on, odp);
		list_add_tail(&qp->resp.odp_link, &odp->waiters);
	}
	queue_work(vroce_odp_wq, &odp->work);
	spin_unlock_bh(&odp->want_lock);
	return true;
}

/* Whether the last fault of user page @pfn failed; forgets it if so. */
static bool vroce_odp_failed(struct vroce_odp *odp, unsigned long pfn)
{
	bool bad;

	xa_lock_bh(&odp->pages);
	bad = xa_load(&odp->pages, pfn) == VROCE_ODP_BAD;
	if (bad)
		__xa_erase(&odp->pages, pfn);
	xa_unlock_bh(&odp->pages);
	return bad;
}

/*
 * For the receive path (no sleeping): 0 if every page of [@iova, @iova +
 * @len) of @mr is mapped (or @mr is no ODP MR). Else a fault of the pages
 * from the first one missing to @iova + @ahead (VROCE_ODP_FAULT_PAGES at
 * most) is queued, after which @qp (if not NULL) is kicked, and -EAGAIN
 * returned; or -EACCES if the last fault of that page failed, or the MR
 * is deregistered.
 */
int vroce_odp_ready(struct vroce_mr *mr, u64 iova, u64 len, u64 ahead,
		    struct vroce_qp *qp)
{
	struct vroce_odp_range r;
	u64 first;

	if (!vroce_odp_missing(mr, iova, len, &first))
		return 0;
	r.va = vroce_odp_va(mr, first);
	if (vroce_odp_failed(mr->odp, r.va >> PAGE_SHIFT))
		return -EACCES;
	r.len = min_t(u64, iova + max(len, ahead) - first,
		      (u64)VROCE_ODP_FAULT_PAGES << PAGE_SHIFT);
	return vroce_odp_want(mr->odp, r, qp) ? -EAGAIN : -EACCES;
}

/*
 * After a copy into @mr at [@iova, @iova + @len) found a page not mapped
 * (-EAGAIN): vroce_odp_ready() queues its fault, with what follows up to
 * @iova + @ahead. -EAGAIN (the responder answers with an RNR NAK, and the
 * request comes again), or -EACCES if the last fault of that page failed
 * or the MR is deregistered.
 */
int vroce_odp_missed(struct vroce_mr *mr, u64 iova, u64 len, u64 ahead)
{
	return vroce_odp_ready(mr, iova, len, ahead, NULL) == -EACCES ?
	       -EACCES : -EAGAIN;
}

/*
 * Makes @mr, of [@start, + @length) at MR address @iova, an ODP MR of
 * the calling process; implicit if @start is 0 and @length U64_MAX.
 */
int vroce_odp_init(struct vroce_dev *vdev, struct vroce_mr *mr, u64 start,
		   u64 length, u64 iova, int access)
{
	bool implicit = !start && length == U64_MAX;
	struct vroce_odp *odp;
	int err;

	if (implicit ? iova : (!length || length > TASK_SIZE ||
			       start > TASK_SIZE - length))
		return -EINVAL;
	odp = kzalloc(sizeof(*odp), GFP_KERNEL_ACCOUNT);
	if (!odp)
		return -ENOMEM;
	xa_init_flags(&odp->pages, XA_FLAGS_LOCK_BH | XA_FLAGS_ACCOUNT);
	mutex_init(&odp->fault_lock);
	spin_lock_init(&odp->want_lock);
	INIT_LIST_HEAD(&odp->waiters);
	INIT_WORK(&odp->work, vroce_odp_work);
	odp->mr = mr;
	odp->vdev = vdev;
	odp->start = start;
	odp->base = start >> PAGE_SHIFT;
	odp->write = access & (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_ATOMIC);
	odp->mm = current->mm;
	mmgrab(odp->mm);
	err = mmu_interval_notifier_insert(&odp->notif, odp->mm, start,
					   implicit ? TASK_SIZE : length,
					   &vroce_odp_ops);
	if (err) {
		mmdrop(odp->mm);
		kfree(odp);
		return err;
	}
	mr->odp = odp;
	mr->x.iova = iova;
	mr->x.length = length;
	mr->x.page_offset = offset_in_page(start);
	mr->x.access = access;
	return 0;
}

/*
 * Once no copy uses @mr any more (dereg_mr): no more faults, no more
 * notifier, every page let go. The struct stays until the MR's.
 */
void vroce_odp_release(struct vroce_mr *mr)
{
	struct vroce_odp *odp = mr->odp;
	unsigned long n = 0;

	if (!odp || !odp->mm)
		return;
	spin_lock_bh(&odp->want_lock);
	odp->dead = true;
	spin_unlock_bh(&odp->want_lock);
	cancel_work_sync(&odp->work);
	/* No fault comes: the QPs that waited find the MR gone. */
	odp->nwant = 0;
	vroce_odp_kick_waiters(odp);
	/* A fault under way ends; none starts after it. */
	mutex_lock(&odp->fault_lock);
	mutex_unlock(&odp->fault_lock);
	mmu_interval_notifier_remove(&odp->notif);
	vroce_odp_walk(odp, 0, ULONG_MAX, vroce_odp_clear, &n);
	xa_destroy(&odp->pages);
	mmdrop(odp->mm);
	odp->mm = NULL;
}

/* The last reference of the MR went: after the grace period of its own. */
void vroce_odp_free(struct vroce_odp *odp)
{
	if (odp)
		kfree_rcu(odp, rcu);
}

/*
 * ibv_advise_mr(3): prefetch faults the SGEs' pages in now (whatever the
 * flags: it is always synchronous here); PREFETCH_NO_FAULT would only map
 * pages already present, which a later access does as cheaply: nothing.
 */
int vroce_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	struct vroce_dev *vdev = to_vdev(ibpd->device);
	int access = IB_ACCESS_LOCAL_WRITE;
	struct vroce_mr *mr;
	int err = 0;
	u32 i;

	switch (advice) {
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH:
		access = 0;
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE:
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		return 0;
	default:
		return -EOPNOTSUPP;
	}
	/* ibv_advise_mr(3): EFAULT for a bad lkey, access or range. */
	for (i = 0; i < num_sge && !err; i++) {
		mr = vroce_mr_get(vdev, sg_list[i].lkey, ibpd);
		if (!mr)
			return -EFAULT;
		if (!mr->odp || (mr->x.access & access) != access ||
		    !vroce_range_ok(mr->x.iova, mr->x.length, sg_list[i].addr,
				    sg_list[i].length))
			err = -EFAULT;
		else
			err = vroce_odp_fault(mr, sg_list[i].addr,
					      sg_list[i].length);
		vroce_mr_put(mr);
	}
	return err;
}
