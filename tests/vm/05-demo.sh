#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# What `make demo` shows must hold: scripts/demo's ibv_devinfo output has
# vroce0, PORT_ACTIVE, Ethernet, MTU 1024 and the IPv4 RoCE v2 GID, and
# libibverbs binds our provider without a warning; then ibv_rc_pingpong
# and ib_write_bw run from A to B.
#
# vm: pair
# vm: timeout=300

. "$(dirname "$0")/lib.sh"

out=$(IBV_SHOW_WARNINGS=1 "$VROCE_TOP/scripts/demo" eth0 2>&1)
tap_result $? "scripts/demo runs"
if [ "$VROCE_ROLE" = b ]; then
	tap_done
fi
has() { printf '%s\n' "$out" | grep -qE -- "$1"; }
tap_check "hca_id vroce0" has '^hca_id:[[:space:]]+vroce0$'
tap_check "PORT_ACTIVE" has 'state:[[:space:]]+PORT_ACTIVE'
tap_check "link_layer Ethernet" has 'link_layer:[[:space:]]+Ethernet'
tap_check "active_mtu 1024" has 'active_mtu:[[:space:]]+1024 '
tap_check "RoCE v2 GID ::ffff:$VROCE_SELF_IP4" \
	has "GID\[ *[0-9]+\]:[[:space:]]+::ffff:$VROCE_SELF_IP4, RoCE v2"
! has 'no userspace device-specific driver'
tap_result $? "no 'no userspace device-specific driver' warning"
tap_check "ibv_rc_pingpong: 1000 iterations" has '^1000 iters in '
tap_check "ib_write_bw: a result line" has '^ 65536 +1000 '
[ "$_tap_failed" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'
tap_done
