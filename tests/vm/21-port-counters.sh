#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The standard IB port counters, /sys/class/infiniband/DEV/ports/1/
# counters/, which ib_core reads through vroce's process_mad (a local PMA
# Get, kernel/mad.c). The extended set is there; after RC traffic on one
# host (ibv_rc_pingpong on vroce0's IPv4 GID) the files agree with `rdma
# statistic`: packets one for one, data = bytes / 4, rounded down. rping
# over rdma_cm still works, its CM MADs passing through process_mad, and
# the counters still agree. Packets dropped on receive (garbage and a bad
# ICRC, sent from a network namespace over a veth to vroce1) count in
# port_rcv_errors and port_rcv_packets.
#
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_tools.sh"

tap_plan 40

ext_files="symbol_error link_error_recovery link_downed port_rcv_errors
port_rcv_remote_physical_errors port_rcv_switch_relay_errors
port_xmit_discards port_xmit_constraint_errors port_rcv_constraint_errors
local_link_integrity_errors excessive_buffer_overrun_errors VL15_dropped
port_xmit_data port_rcv_data port_xmit_packets port_rcv_packets
port_xmit_wait unicast_xmit_packets unicast_rcv_packets
multicast_xmit_packets multicast_rcv_packets"

declare -A st pc

# read_stats DEV: st[NAME] from "rdma statistic show link DEV/1".
read_stats() {
	local out w prev=
	out=$(rdma statistic show link "$1/1") || return 1
	st=()
	for w in $out; do
		[ -n "$prev" ] && [[ $w =~ ^[0-9]+$ ]] && st[$prev]=$w
		prev=$w
	done
	[ -n "${st[tx_packets]}" ]
}

# read_pma DEV: pc[NAME] from every file of DEV's counters/ (each read is
# a PMA Get through process_mad); fails on a missing or non-numeric one.
read_pma() {
	local f v
	pc=()
	for f in "/sys/class/infiniband/$1/ports/1/counters"/*; do
		v=
		read -r v <"$f" || return 1
		[[ $v =~ ^[0-9]+$ ]] || return 1
		pc[${f##*/}]=$v
	done
}

stats_key() {
	echo "${st[tx_packets]} ${st[tx_bytes]} ${st[rx_packets]} ${st[rx_bytes]} ${st[rx_dropped]}"
}

# snapshot DEV: st and pc read while no packet moved (rdma statistic is
# the same before and after the counters files were read).
snapshot() {
	local tries=0 before
	while [ "$tries" -lt 10 ]; do
		tries=$((tries + 1))
		read_stats "$1" || return 1
		before=$(stats_key)
		read_pma "$1" || return 1
		read_stats "$1" || return 1
		[ "$before" = "$(stats_key)" ] && return 0
		sleep 0.5
	done
	return 1
}

eq() { # DESC GOT WANT
	[[ $2 =~ ^[0-9]+$ ]] && [ "$2" = "$3" ]
	tap_result $? "$1: $2 (want $3)"
}

# agree WHEN: the counters files against rdma statistic (9 checks).
agree() {
	local w=$1 errs=${st[rx_errors]}
	[ "${errs:-0}" -gt 65535 ] && errs=65535
	eq "$w: port_xmit_packets = tx_packets" \
		"${pc[port_xmit_packets]}" "${st[tx_packets]}"
	eq "$w: port_rcv_packets = rx_packets + rx_dropped" \
		"${pc[port_rcv_packets]}" "$((st[rx_packets] + st[rx_dropped]))"
	eq "$w: port_xmit_data = tx_bytes / 4" \
		"${pc[port_xmit_data]}" "$((st[tx_bytes] / 4))"
	eq "$w: port_rcv_data = rx_bytes / 4" \
		"${pc[port_rcv_data]}" "$((st[rx_bytes] / 4))"
	eq "$w: unicast_xmit_packets = port_xmit_packets - mcast_tx_packets" \
		"${pc[unicast_xmit_packets]}" \
		"$((pc[port_xmit_packets] - st[mcast_tx_packets]))"
	eq "$w: unicast_rcv_packets = port_rcv_packets - mcast_rx_packets" \
		"${pc[unicast_rcv_packets]}" \
		"$((pc[port_rcv_packets] - st[mcast_rx_packets]))"
	eq "$w: multicast_xmit_packets = mcast_tx_packets" \
		"${pc[multicast_xmit_packets]}" "${st[mcast_tx_packets]}"
	eq "$w: multicast_rcv_packets = mcast_rx_packets" \
		"${pc[multicast_rcv_packets]}" "${st[mcast_rx_packets]}"
	eq "$w: port_rcv_errors = rx_errors (16 bits)" \
		"${pc[port_rcv_errors]}" "$errs"
}

modprobe rdma_ucm
rdma_add vroce0 eth0
tap_result $? "vroce0 on eth0 ($rdma_err)"
vm_ib_nodes
vm_wait_port_active vroce0 30 || tap_bail "vroce0 port not active"

dir=/sys/class/infiniband/vroce0/ports/1/counters
missing=
for f in $ext_files; do
	[ -f "$dir/$f" ] || missing="$missing $f"
done
[ -d "$dir" ] && [ -z "$missing" ]
tap_result $? "counters/ has the extended set${missing:+ (missing:$missing)}"
read_pma vroce0
tap_result $? "every counters/ file reads as a number (${#pc[@]} files)"

snapshot vroce0
tap_result $? "quiet snapshot before traffic"
tx0=${st[tx_packets]} rx0=${st[rx_packets]} drop0=${st[rx_dropped]}
ptx0=${pc[port_xmit_packets]} prx0=${pc[port_rcv_packets]}

# serve_drive NAME READY DESC SERVER... -- CLIENT...: the server in the
# background until READY succeeds, then the client; one TAP result DESC,
# the logs (/tmp/NAME.srv, /tmp/NAME.cli) as diagnostics if it failed.
serve_drive() {
	local name=$1 ready=$2 desc=$3 rc
	local -a srv=()
	shift 3
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	timeout -k 5 60 "${srv[@]}" >"/tmp/$name.srv" 2>&1 &
	tool_pid=$!
	# shellcheck disable=SC2086
	wait_for 20 $ready
	run_timeout 60 "$@" >"/tmp/$name.cli" 2>&1
	rc=$?
	tool_reap $rc || rc=1
	tap_result $rc "$desc"
	[ $rc -eq 0 ] || sed 's/^/#   /' "/tmp/$name.srv" "/tmp/$name.cli"
}

# RC traffic: 101 round trips of 4001 bytes (4 packets each way at MTU
# 1024; 808202 bytes in all, not a multiple of 4).
wait_for 10 vm_gid_index vroce0 "$VROCE_SELF_IP4"
gid=$(vm_gid_index vroce0 "$VROCE_SELF_IP4") ||
	tap_bail "no RoCE v2 GID of $VROCE_SELF_IP4"
pp=(ibv_rc_pingpong -d vroce0 -g "$gid" -p 18600 -m 1024 -s 4001 -n 101)
serve_drive pp "tcp_listening 18600" "ibv_rc_pingpong on vroce0, 101 x 4001 bytes" \
	"${pp[@]}" -- "${pp[@]}" "$VROCE_SELF_IP4"

snapshot vroce0
tap_result $? "quiet snapshot after traffic"
tap_diag "$(rdma statistic show link vroce0/1)"
dtx=$((st[tx_packets] - tx0))
drx=$((st[rx_packets] + st[rx_dropped] - rx0 - drop0))
[ "$dtx" -ge 808 ] && [ $((pc[port_xmit_packets] - ptx0)) -eq "$dtx" ]
tap_result $? "port_xmit_packets rose as tx_packets: $((pc[port_xmit_packets] - ptx0)) (want $dtx, at least 808)"
[ "$drx" -ge 808 ] && [ $((pc[port_rcv_packets] - prx0)) -eq "$drx" ]
tap_result $? "port_rcv_packets rose as rx_packets + rx_dropped: $((pc[port_rcv_packets] - prx0)) (want $drx, at least 808)"
agree "after ibv_rc_pingpong"

# rdma_cm: its CM MADs arrive on QP1 and pass through process_mad.
serve_drive rp "cm_listening 18700" "rping -V -C 3 over rdma_cm on vroce0" \
	rping -s -a "$VROCE_SELF_IP4" -p 18700 -V -C 3 -- \
	rping -c -a "$VROCE_SELF_IP4" -p 18700 -V -C 3
snapshot vroce0
tap_result $? "quiet snapshot after rping"
agree "after rping"

# Drops: vroce1 on a veth whose peer, in a network namespace, sends three
# datagrams too short for a BTH and two RC SEND packets with a bad ICRC.
veth_ns pc && rdma_add vroce1 veth0 &&
	vm_wait_port_active vroce1 10 &&
	ip netns exec pc python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
dst = (sys.argv[1], 4791)
for i in range(3):
    s.sendto(b"junk", dst)
# BTH: RC SEND Only, P_Key 0xffff, dest QP 0x11, PSN 0; 8 bytes; ICRC.
bth = bytes([0x04, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0, 0, 0, 0])
for i in range(2):
    s.sendto(bth + b"payload!" + b"\xde\xad\xbe\xef", dst)
' 198.51.100.1
tap_result $? "vroce1 on a veth, 5 bad packets sent to it"
# shellcheck disable=SC2317  # called through wait_for
drops_in() {
	read_stats vroce1 && [ "${st[rx_dropped]}" -ge 5 ]
}
wait_for 10 drops_in
read_stats vroce1
[ "${st[rx_dropped]}" = 5 ] && [ "${st[rx_icrc_errors]}" = 2 ] &&
	[ "${st[rx_errors]}" = 5 ] && [ "${st[rx_packets]}" = 0 ]
tap_result $? "vroce1: rx_dropped ${st[rx_dropped]} (want 5), rx_errors ${st[rx_errors]} (want 5), rx_icrc_errors ${st[rx_icrc_errors]} (want 2), rx_packets ${st[rx_packets]} (want 0)"
snapshot vroce1
tap_result $? "quiet snapshot of vroce1"
agree "vroce1 drops"
tap_done
