#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Self-test of the two-VM wire: A and B reach each other over eth0, and
# stock rdma_rxe runs RC traffic across it (what interop tests rely on).
#
# vm: pair
# vm: install=0
# vm: timeout=240

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

tap_plan 5
tap_check "ping the peer over the wire" busybox ping -c 1 -W 5 "$VROCE_PEER_IP4"
modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0 && vm_ib_nodes
tap_result $? "rxe0 on eth0"
tap_check "rxe0 port active" vm_wait_port_active rxe0 30
idx=$(wait_for 10 vm_gid_index rxe0 "$VROCE_SELF_IP4" && vm_gid_index rxe0 "$VROCE_SELF_IP4")
tap_result $? "RoCE v2 GID index of $VROCE_SELF_IP4: $idx"

pingpong=(ibv_rc_pingpong -d rxe0 -g "$idx" -m 1024 -s 4096 -n 20)
if [ "$VROCE_ROLE" = b ]; then
	run_timeout 60 "${pingpong[@]}" >/tmp/pp.log 2>&1 &
	server=$!
	wait_for 10 sh -c "ss -Hltn 'sport = :18515' | grep -q ."
	vm_send server-up 1
	wait "$server"
else
	vm_recv server-up 60 >/dev/null &&
		run_timeout 60 "${pingpong[@]}" "$VROCE_PEER_IP4" >/tmp/pp.log 2>&1
fi
rc=$?
tap_result $rc "ibv_rc_pingpong over rdma_rxe, 20 x 4096 bytes"
[ $rc -eq 0 ] || sed 's/^/#   /' /tmp/pp.log
vm_barrier done 60
tap_done
