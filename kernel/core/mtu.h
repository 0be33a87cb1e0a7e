/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * Path MTU: the IB MTU enum (the values of enum ib_mtu) and how it maps to
 * bytes and to the MTU of the Ethernet device underneath.
 *
 * An IB MTU bounds the payload of one packet. On the wire a full packet
 * also carries, at most, VROCE_ROCE_OVERHEAD bytes of headers:
 *
 *   IPv6 40 + UDP 8 + BTH 12 + AtomicETH 28 (the largest extension header
 *   set we send) + ICRC 4 = 92
 *
 * so the active MTU for a netdev is the largest IB MTU m with
 * m + 92 <= netdev MTU:
 *
 *   netdev 1500 -> 1024,  1100 -> 512,  9000 -> 4096,
 *   anything below 256 + 92 = 348 -> 0 (no valid IB MTU).
 *
 * (The IB core's iboe_get_mtu() also reserves 4 bytes for an XRC ETH,
 * which we never send; the two differ only for netdev MTUs m + 92 .. m + 95.)
 */
#ifndef VROCE_CORE_MTU_H
#define VROCE_CORE_MTU_H

#include "types.h"

enum vroce_ib_mtu {
	VROCE_IB_MTU_256	= 1,
	VROCE_IB_MTU_512	= 2,
	VROCE_IB_MTU_1024	= 3,
	VROCE_IB_MTU_2048	= 4,
	VROCE_IB_MTU_4096	= 5,
};

#define VROCE_ROCE_OVERHEAD	(40 + 8 + 12 + 28 + 4)

/* Bytes of IB MTU @mtu; 0 if @mtu is not a valid enum vroce_ib_mtu. */
vr_u32 vroce_mtu_to_bytes(int mtu);

/* enum vroce_ib_mtu of exactly @bytes (256..4096); 0 if there is none. */
int vroce_mtu_from_bytes(vr_u32 bytes);

/* Largest IB MTU whose packets fit a netdev MTU of @ndev_mtu; 0 if none. */
int vroce_mtu_for_netdev(vr_u32 ndev_mtu);

#endif /* VROCE_CORE_MTU_H */
