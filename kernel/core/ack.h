/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * The acknowledgement rules of the RC transport, requester side.
 *
 * The responder acknowledges a SEND or RDMA WRITE packet only when the
 * packet asks for it (the BTH AckReq bit), and then acknowledges every
 * PSN up to that one at once (IBTA 9.7.5.1.1 lets it coalesce so). The
 * requester keeps at most a window of PSNs unacknowledged and stops when
 * the window is full, waiting for an acknowledgement to open it. So the
 * requester must never let the window fill without an AckReq in flight:
 * a window that closes on packets none of which asked for an answer gets
 * no answer, and only the retransmit timer moves it on again.
 *
 * A packet therefore asks for an acknowledgement when
 *   - it is the last (or only) packet of its message: the message can
 *     then complete;
 *   - it is a probe after a retransmit timeout;
 *   - it fills the window: the requester stops after it;
 *   - vroce_ack_interval() packets went out since the last request: half
 *     a window (VROCE_ACK_EVERY at most), so that the window reopens
 *     while the rest of it is still being sent.
 *
 * The window itself adapts (vroce_window_shrink(), vroce_window_grow()):
 * recovery is go-back-N, so each loss halves what may be in flight (down
 * to VROCE_WINDOW_MIN), and each acknowledgement that makes progress
 * grows it by one again (up to VROCE_WINDOW_MAX).
 */
#ifndef VROCE_CORE_ACK_H
#define VROCE_CORE_ACK_H

#include "types.h"
#include "psn.h"

#define VROCE_WINDOW_MAX	128	/* PSNs unacknowledged at most */
#define VROCE_WINDOW_MIN	32	/* ... and at least, after losses */
#define VROCE_ACK_EVERY		64	/* packets between AckReqs at most */

/* What the requester knows about the packet it is about to send. */
struct vroce_ackreq_in {
	vr_u32 psn;		/* the packet's PSN */
	vr_u32 una;		/* oldest unacknowledged PSN */
	vr_u32 window;		/* PSNs that may be unacknowledged */
	vr_u32 since;		/* packets sent since the last AckReq */
	vr_bool last;		/* last or only packet of its message */
	vr_bool probe;		/* a probe after a retransmit timeout */
};

/* Packets between two AckReqs in a window of @window PSNs. */
static inline vr_u32 vroce_ack_interval(vr_u32 window)
{
	vr_u32 n = window / 2;

	if (n > VROCE_ACK_EVERY)
		n = VROCE_ACK_EVERY;
	return n ? n : 1;
}

/*
 * Whether the window is open for a packet with PSN @psn: fewer than
 * @window PSNs from @una (the oldest unacknowledged) up to it.
 */
static inline vr_bool vroce_window_open(vr_u32 psn, vr_u32 una,
					vr_u32 window)
{
	return vroce_psn_diff(psn, una) < (vr_s32)window;
}

/*
 * Whether an acknowledgement that made progress should wake a requester
 * that stopped (blocked) for lack of it: a WQE completed (@completed:
 * that frees what the READ and atomic limit, a fence and a local
 * operation wait for, and makes room on a streaming SQ), the packets in
 * flight were a probe after a time-out (@probe), or the window now
 * admits @next, the next packet to send. Each READ response moves @una
 * by one PSN while the next READ request stays outside the window until
 * a whole response has come back: waking the engine for each would cost
 * a context switch per packet, for nothing.
 */
static inline vr_bool vroce_req_unblocked(vr_bool completed, vr_bool probe,
					  vr_u32 next, vr_u32 una,
					  vr_u32 window)
{
	return completed || probe || vroce_window_open(next, una, window);
}

/* Whether the packet described by @in sets AckReq. */
static inline vr_bool vroce_ackreq_wanted(const struct vroce_ackreq_in *in)
{
	if (in->last || in->probe)
		return 1;
	/* The window closes behind this packet. */
	if (!vroce_window_open(vroce_psn_add(in->psn, 1), in->una, in->window))
		return 1;
	return in->since + 1 >= vroce_ack_interval(in->window);
}

/*
 * The stream rule. A requester that finds its SQ empty while WQEs it sent
 * still wait for their acknowledgement either sleeps (the application's
 * next post rings the doorbell, and the WQE leaves at once) or waits for
 * the acknowledgement (the posts made meanwhile need no doorbell and
 * leave together when it comes). It waits only in a stream: at least
 * VROCE_STREAM_DEPTH WQEs in flight now, or at some time in the last
 * VROCE_STREAM_RTTS round trips (VROCE_STREAM_MIN_US at least,
 * VROCE_STREAM_MAX_US at most: one slow round trip must not make every
 * later dip wait), since one acknowledgement often completes everything
 * in flight and a stream then dips to a few WQEs before it fills again.
 *
 * @inflight WQEs are sent and not completed, @now_ns is the time,
 * @srtt_us the smoothed round trip (0: none measured), and *@until_ns
 * the end of the current stream, moved on here while the depth is
 * reached. True if the requester waits. Nothing in flight: nothing to
 * wait for, it sleeps.
 */
#define VROCE_STREAM_DEPTH	8
#define VROCE_STREAM_RTTS	4
#define VROCE_STREAM_MIN_US	200
#define VROCE_STREAM_MAX_US	5000

static inline vr_bool vroce_stream_waits(vr_u32 inflight, vr_u64 now_ns,
					 vr_u32 srtt_us, vr_u64 *until_ns)
{
	vr_u64 hold_us = (vr_u64)VROCE_STREAM_RTTS * srtt_us;

	if (!inflight)
		return 0;
	if (inflight >= VROCE_STREAM_DEPTH) {
		if (hold_us < VROCE_STREAM_MIN_US)
			hold_us = VROCE_STREAM_MIN_US;
		if (hold_us > VROCE_STREAM_MAX_US)
			hold_us = VROCE_STREAM_MAX_US;
		*until_ns = now_ns + hold_us * 1000;
	}
	return now_ns <= *until_ns;
}

/* The window after a loss. */
static inline vr_u32 vroce_window_shrink(vr_u32 window)
{
	window /= 2;
	return window < VROCE_WINDOW_MIN ? VROCE_WINDOW_MIN : window;
}

/* The window after an acknowledgement that made progress. */
static inline vr_u32 vroce_window_grow(vr_u32 window)
{
	return window < VROCE_WINDOW_MAX ? window + 1 : VROCE_WINDOW_MAX;
}

#endif /* VROCE_CORE_ACK_H */
