/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * The round-trip estimate behind the RC retransmit timer.
 *
 * IBTA gives the local ACK timeout as a lower bound (4.096 us *
 * 2^timeout, "at least"). A requester that retransmits at exactly that
 * bound resends on any path whose round trip, queueing included, grows
 * past it: a slow or busy host, a long window of large packets. So the
 * requester measures how long acknowledgements take, and its timer waits
 * for the larger of the QP's timeout and srtt + 4 * rttvar, the
 * smoothed round trip and its mean deviation (the estimator of TCP's
 * retransmit timer, RFC 6298: gains 1/8 and 1/4). Only packets sent once
 * give samples; a retransmit drops the sample in progress.
 *
 * Times are in microseconds.
 */
#ifndef VROCE_CORE_RTT_H
#define VROCE_CORE_RTT_H

#include "types.h"

/* The estimate never stretches the timer beyond this (2 s). */
#define VROCE_RTT_MAX_US	2000000u

struct vroce_rtt {
	vr_u32 srtt;		/* smoothed round trip; 0: no sample yet */
	vr_u32 rttvar;		/* its mean deviation */
};

/* Takes a round-trip sample of @us microseconds into @r. */
void vroce_rtt_sample(struct vroce_rtt *r, vr_u32 us);

/*
 * The retransmit timeout in microseconds: @floor_us (the QP's own
 * timeout) or the estimate, whichever is larger; the estimate counts up
 * to VROCE_RTT_MAX_US.
 */
vr_u32 vroce_rtt_timeout(const struct vroce_rtt *r, vr_u32 floor_us);

#endif /* VROCE_CORE_RTT_H */
