// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * RNR NAK timer codes.
 */

#include "aeth.h"

/* Delay of each RNR timer code, in microseconds. */
static const vr_u32 rnr_timer_us[VROCE_RNR_TIMER_MAX + 1] = {
	655360,						/* 0 */
	10, 20, 30, 40, 60, 80, 120, 160,		/* 1..8 */
	240, 320, 480, 640, 960, 1280, 1920, 2560,	/* 9..16 */
	3840, 5120, 7680, 10240, 15360, 20480, 30720,	/* 17..23 */
	40960, 61440, 81920, 122880, 163840,		/* 24..28 */
	245760, 327680, 491520,				/* 29..31 */
};

vr_u32 vroce_rnr_timer_usecs(unsigned int timer)
{
	if (timer > VROCE_RNR_TIMER_MAX)
		return 0;
	return rnr_timer_us[timer];
}

unsigned int vroce_rnr_timer_from_usecs(vr_u32 usecs)
{
	unsigned int t;

	/* Codes 1..31 are in increasing order. */
	for (t = 1; t <= VROCE_RNR_TIMER_MAX; t++)
		if (vroce_rnr_timer_usecs(t) >= usecs)
			return t;
	return 0;
}
