/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * The responder's READ responses, as a cursor. A READ is answered by
 * path-MTU sized responses with consecutive PSNs, which the responder
 * sends a few at a time (a budget per run, a bound on packets in flight)
 * rather than all at once; the cursor says what the next one is: its
 * PSN, the address it reads, its length and its place in the message
 * (first / middle / last / only, from opcode.h's VROCE_POS_*). A
 * duplicate READ restarts the cursor at the PSN it asks for; the
 * response sent first after a (re)start is a FIRST (or ONLY) one.
 *
 * The responder also holds at most max_dest_rd_atomic READs and atomics
 * whose answers are not all sent (vroce_rd_room()); a requester that
 * keeps to its max_rd_atomic never has more (it sends a new one only once
 * an older one is answered).
 */
#ifndef VROCE_CORE_RDRES_H
#define VROCE_CORE_RDRES_H

#include "types.h"
#include "psn.h"
#include "opcode.h"

struct vroce_rd_cursor {
	vr_u64 va;		/* what the next response reads */
	vr_u32 left;		/* bytes not sent yet */
	vr_u32 psn;		/* PSN of the next response */
	vr_bool active;		/* a response remains to be sent */
	vr_bool fresh;		/* nothing sent since the (re)start */
};

/* The responses a READ of @len bytes takes: one at least. */
static inline vr_u32 vroce_rd_npkts(vr_u32 len, vr_u32 mtu)
{
	vr_u32 n = len / mtu + (len % mtu != 0);

	return n ? n : 1;
}

/* (Re)starts @c: @len bytes at @va, the first response with PSN @psn. */
static inline void vroce_rd_start(struct vroce_rd_cursor *c, vr_u32 psn,
				  vr_u64 va, vr_u32 len)
{
	c->va = va;
	c->left = len;
	c->psn = psn & VROCE_PSN_MASK;
	c->active = 1;
	c->fresh = 1;
}

/*
 * The next response of @c: its PSN, address, length and position (the
 * return value, 0 if none remains); advances the cursor past it.
 */
static inline int vroce_rd_next(struct vroce_rd_cursor *c, vr_u32 mtu,
				vr_u32 *psn, vr_u64 *va, vr_u32 *len)
{
	vr_u32 n;
	int pos;

	if (!c->active || !mtu)
		return 0;
	n = c->left < mtu ? c->left : mtu;
	if (n == c->left)
		pos = c->fresh ? VROCE_POS_ONLY : VROCE_POS_LAST;
	else
		pos = c->fresh ? VROCE_POS_FIRST : VROCE_POS_MIDDLE;
	*psn = c->psn;
	*va = c->va;
	*len = n;
	c->va += n;
	c->left -= n;
	c->psn = vroce_psn_add(c->psn, 1);
	c->fresh = 0;
	c->active = c->left != 0;
	return pos;
}

/*
 * What a duplicate READ with PSN @psn asking for @len bytes gets, of the
 * READ that used the PSNs @first .. @last: -1 if @psn is none of them,
 * else @len cut to what the responses from @psn to @last can carry, so a
 * replay never uses a PSN past the READ's own.
 */
static inline long long vroce_rd_resume_len(vr_u32 first, vr_u32 last,
					    vr_u32 psn, vr_u32 len,
					    vr_u32 mtu)
{
	vr_s32 from = vroce_psn_diff(psn, first);
	vr_s32 to = vroce_psn_diff(last, psn);
	vr_u64 room;

	if (!mtu || from < 0 || to < 0)
		return -1;
	room = ((vr_u64)to + 1) * mtu;
	return len < room ? len : (long long)room;
}

/*
 * Whether one more READ or atomic may be taken while those numbered
 * @tail .. @head - 1 still have answers to send, with max_dest_rd_atomic
 * @max (0 counts as 1, as the requester counts max_rd_atomic).
 */
static inline vr_bool vroce_rd_room(vr_u32 head, vr_u32 tail, vr_u32 max)
{
	return head - tail < (max ? max : 1);
}

#endif /* VROCE_CORE_RDRES_H */
