#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# UD traffic within one host: ibv_ud_pingpong between two processes on
# vroce0, over its IPv4 and IPv6 GIDs, checking the bytes (-c), polling
# and with completion events (-e).
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

tap_plan 7
rdma_add vroce0 eth0
tap_result $? "vroce0 on eth0 ($rdma_err)"

pingpong() { # DESC GID_ADDR ARGS...
	local desc=$1 addr=$2 idx rc
	shift 2
	idx=$(wait_for 10 vm_gid_index vroce0 "$addr" &&
		vm_gid_index vroce0 "$addr")
	run_timeout 60 ibv_ud_pingpong -d vroce0 -g "$idx" -c "$@" \
		>/tmp/srv.log 2>&1 &
	wait_for 10 sh -c "ss -Hltn 'sport = :18515' | grep -q ."
	run_timeout 60 ibv_ud_pingpong -d vroce0 -g "$idx" -c "$@" \
		"$VROCE_SELF_IP4" >/tmp/cli.log 2>&1
	rc=$?
	wait $! || rc=1
	tap_result $rc "$desc"
	[ $rc -eq 0 ] || sed 's/^/#   /' /tmp/srv.log /tmp/cli.log
}

pingpong "IPv4 GID, 100 x 512 bytes" "$VROCE_SELF_IP4" -s 512 -n 100
pingpong "IPv4 GID, 1024 bytes (the MTU)" "$VROCE_SELF_IP4" -s 1024 -n 20
pingpong "IPv4 GID, completion events" "$VROCE_SELF_IP4" -s 64 -n 50 -e
pingpong "IPv6 GID, 100 x 512 bytes" "$VROCE_SELF_IP6" -s 512 -n 100

# The port counters saw it: at least 2 x (100 + 20 + 50 + 100) packets.
stats=$(rdma statistic show link vroce0/1 2>&1)
tap_diag "$stats"
counter() { printf '%s\n' "$stats" | tr ' ' '\n' | grep -A1 -x "$1" | tail -n 1; }
tx=$(counter tx_packets)
rx=$(counter rx_packets)
[ "${tx:-0}" -ge 540 ] && [ "${rx:-0}" -ge 540 ]
tap_result $? "rdma statistic: tx_packets $tx, rx_packets $rx"
[ "$(counter rx_icrc_errors)" = 0 ]
tap_result $? "rdma statistic: no ICRC errors"
tap_done
