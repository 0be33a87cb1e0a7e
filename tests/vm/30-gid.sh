#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# ib_core fills the GID table from the netdev's addresses and follows
# changes: every IPv4 and IPv6 address is a RoCE v2 GID.
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

tap_plan 7

rdma_add vroce0 eth0
tap_result $? "vroce0 on eth0 ($rdma_err)"

tap_check "RoCE v2 GID ::ffff:$VROCE_SELF_IP4" \
	wait_for 10 vm_gid_index vroce0 "$VROCE_SELF_IP4"
tap_check "RoCE v2 GID $VROCE_SELF_IP6" \
	wait_for 10 vm_gid_index vroce0 "$VROCE_SELF_IP6"
gids=$(ibv_devinfo -v -d vroce0 | grep -c "RoCE v1")
[ "$gids" -eq 0 ]
tap_result $? "no RoCE v1 GIDs: vroce does not build RoCE v1 frames"

ip addr add 198.51.100.7/24 dev eth0
tap_check "address added later: GID ::ffff:198.51.100.7" \
	wait_for 10 vm_gid_index vroce0 198.51.100.7
gone() { ! vm_gid_index vroce0 198.51.100.7; }
ip addr del 198.51.100.7/24 dev eth0
tap_check "address removed: its GID goes away" wait_for 10 gone
ip addr add 2001:db8:1::7/64 dev eth0 nodad
tap_check "IPv6 address added later: GID 2001:db8:1::7" \
	wait_for 10 vm_gid_index vroce0 2001:db8:1::7
tap_done
