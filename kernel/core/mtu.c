// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * IB MTU conversions; see mtu.h.
 */

#include "mtu.h"

vr_u32 vroce_mtu_to_bytes(int mtu)
{
	if (mtu < VROCE_IB_MTU_256 || mtu > VROCE_IB_MTU_4096)
		return 0;
	return 128u << mtu;
}

int vroce_mtu_from_bytes(vr_u32 bytes)
{
	int mtu;

	for (mtu = VROCE_IB_MTU_256; mtu <= VROCE_IB_MTU_4096; mtu++)
		if (vroce_mtu_to_bytes(mtu) == bytes)
			return mtu;
	return 0;
}

int vroce_mtu_for_netdev(vr_u32 ndev_mtu)
{
	int mtu;

	for (mtu = VROCE_IB_MTU_4096; mtu >= VROCE_IB_MTU_256; mtu--)
		if (vroce_mtu_to_bytes(mtu) + VROCE_ROCE_OVERHEAD <= ndev_mtu)
			return mtu;
	return 0;
}
