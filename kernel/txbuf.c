// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The heads of outgoing skbs, carved from pages that are used again.
 *
 * Debian's kernels zero every allocation (init_on_alloc): a kmalloc'ed
 * head for a full-MTU packet is zeroed (2 KiB) before its headers and
 * payload overwrite it, which cost the sender more than copying the
 * payload. So each CPU keeps a ring of pages and cuts heads from them in
 * turn; each head holds a reference on its page, dropped when the stack
 * frees the skb (a head fragment, as a NIC's receive buffers are). When
 * the ring comes round to a page again and only the ring's reference is
 * left, the page is used again without being zeroed; a page whose skbs
 * are still out is left to them and a new one takes its place. Every byte
 * we send is written (headers, payload, pad): nothing stale goes out.
 * A ring holds 256 KiB per CPU that sends, until the module goes; when no
 * page can be had without sleeping, it waits a tick before it tries
 * again, and heads come from alloc_skb() meanwhile.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>

#include "vroce.h"

#define VROCE_TXBUF_ORDER	2
#define VROCE_TXBUF_SIZE	(PAGE_SIZE << VROCE_TXBUF_ORDER)
#define VROCE_TXBUF_PAGES	16

struct vroce_txbuf {
	struct page *ring[VROCE_TXBUF_PAGES];
	unsigned int cur;	/* the page heads are cut from */
	unsigned int off;	/* the next head's offset in it */
	unsigned long retry;	/* no new page before, after a failure */
};

static DEFINE_PER_CPU(struct vroce_txbuf, vroce_txbuf);

/* Moves to the next page of the ring: reused if its skbs are all freed. */
static struct page *vroce_txbuf_next(struct vroce_txbuf *b)
{
	struct page *page;

	b->cur = (b->cur + 1) % VROCE_TXBUF_PAGES;
	b->off = 0;
	page = b->ring[b->cur];
	if (page && page_ref_count(page) == 1) {
		/* The stack's last reads of the page came before its put. */
		smp_acquire__after_ctrl_dep();
		return page;
	}
	if (page)
		put_page(page);
	b->ring[b->cur] = NULL;
	if (time_before(jiffies, b->retry))
		return NULL;
	/* Never the emergency reserves: the page would be kept for good. */
	page = alloc_pages(GFP_NOWAIT | __GFP_NOWARN | __GFP_NOMEMALLOC |
			   __GFP_COMP, VROCE_TXBUF_ORDER);
	if (!page)
		b->retry = jiffies + 1;
	b->ring[b->cur] = page;
	return page;
}

/* A head of @fragsz bytes with a page reference of its own, or NULL. */
static void *vroce_txbuf_get(unsigned int fragsz)
{
	struct vroce_txbuf *b;
	struct page *page;
	void *data = NULL;

	if (fragsz > VROCE_TXBUF_SIZE || in_hardirq() || irqs_disabled())
		return NULL;
	local_bh_disable();
	b = this_cpu_ptr(&vroce_txbuf);
	page = b->ring[b->cur];
	if (!page || b->off + fragsz > VROCE_TXBUF_SIZE)
		page = vroce_txbuf_next(b);
	if (page) {
		page_ref_inc(page);
		data = page_address(page) + b->off;
		b->off += fragsz;
	}
	local_bh_enable();
	return data;
}

/*
 * An skb with @size bytes of linear space, its head from this CPU's ring,
 * or from alloc_skb() where the ring has no page (memory pressure, or a
 * caller that cannot take the softirq lock).
 */
struct sk_buff *vroce_skb_alloc(unsigned int size, gfp_t gfp)
{
	unsigned int fragsz = SKB_DATA_ALIGN(size) +
			      SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *data;

	data = vroce_txbuf_get(fragsz);
	if (data) {
		skb = build_skb(data, fragsz);
		if (skb)
			return skb;
		skb_free_frag(data);
	}
	return alloc_skb(size, gfp);
}

/*
 * Drops the rings' references, once nothing sends any more; pages still
 * held by skbs in the stack go when those are freed.
 */
void vroce_txbuf_exit(void)
{
	unsigned int cpu, i;

	for_each_possible_cpu(cpu) {
		struct vroce_txbuf *b = per_cpu_ptr(&vroce_txbuf, cpu);

		for (i = 0; i < VROCE_TXBUF_PAGES; i++) {
			if (b->ring[i])
				put_page(b->ring[i]);
			b->ring[i] = NULL;
		}
	}
}
