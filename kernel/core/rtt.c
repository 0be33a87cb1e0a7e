// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * Round-trip estimate of the RC retransmit timer (see rtt.h).
 */
#include "rtt.h"

void vroce_rtt_sample(struct vroce_rtt *r, vr_u32 us)
{
	vr_u32 dev;

	if (us > VROCE_RTT_MAX_US)
		us = VROCE_RTT_MAX_US;
	if (us == 0)
		us = 1;
	if (!r->srtt) {
		r->srtt = us;
		r->rttvar = us / 2;
		return;
	}
	dev = r->srtt > us ? r->srtt - us : us - r->srtt;
	r->rttvar = r->rttvar - r->rttvar / 4 + dev / 4;
	r->srtt = r->srtt - r->srtt / 8 + us / 8;
	if (!r->srtt)
		r->srtt = 1;
}

vr_u32 vroce_rtt_timeout(const struct vroce_rtt *r, vr_u32 floor_us)
{
	vr_u64 est = (vr_u64)r->srtt + 4 * (vr_u64)r->rttvar;

	if (est > VROCE_RTT_MAX_US)
		est = VROCE_RTT_MAX_US;
	return est > floor_us ? (vr_u32)est : floor_us;
}
