#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Acceptance over the two-VM wire with the stock tools, RC only:
# ibv_rc_pingpong (polling and -e, 1 B to 1 MiB), perftest (ib_write_bw
# with 64 KiB and 64 B, ib_read_bw, ib_send_bw, ib_atomic_bw with
# FETCH_AND_ADD and CMP_AND_SWAP, ib_write_lat, ib_read_lat, ib_send_lat)
# without rdma_cm, and rping -V and ucmatose over rdma_cm; each over the
# IPv4 GID and the IPv6 GID, once with B as the server and A the client,
# then the other way round. Both sides print TAP: one line per run each,
# the server's and the client's (with the client's run time). The log of
# a failed run is kept in that VM's log directory (tools.N.srv or .cli).
#
# Which RDMA device each side uses comes from the environment:
#   VROCE_TOOLS_A=rxe|vroce   (default rxe)
#   VROCE_TOOLS_B=rxe|vroce   (default rxe)
# "rxe" is rdma_rxe (rxe0 on eth0), "vroce" the repo's module (vroce0 on
# eth0). As committed this is the self-test of the script with rdma_rxe on
# both sides, so vroce is not installed (install=0). To run vroce on a
# side, add --install (the VM then installs and loads vroce; this script
# adds the link; the 87-* scripts do this) and pass the choice,
# e.g.:
#   scripts/vm --pair --install --env VROCE_TOOLS_A=vroce tests/vm/83-rc-tools.sh
#
# vm: pair
# vm: install=0
# vm: timeout=600

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_tools.sh"

pair_kind VROCE_TOOLS rxe

# setup: the device, its port and its two GIDs; fails at the first miss.
setup() {
	local rc
	tools_dev "$kind"
	rc=$?
	tap_result $rc "$dev ($kind) on eth0, rdma_ucm loaded"
	[ $rc -eq 0 ] || return 1
	vm_wait_port_active "$dev" 30
	rc=$?
	tap_result $rc "$dev port active"
	[ $rc -eq 0 ] || return 1
	gid4=$(dev_gid "$VROCE_SELF_IP4" 10)
	rc=$?
	tap_result $rc "RoCE v2 GID of $VROCE_SELF_IP4: index $gid4"
	[ $rc -eq 0 ] || return 1
	gid6=$(dev_gid "$VROCE_SELF_IP6" 15)
	rc=$?
	tap_result $rc "RoCE v2 GID of $VROCE_SELF_IP6: index $gid6"
	[ $rc -eq 0 ]
}

# Both sides must be ready, or neither runs anything.
setup
ready=$?
vm_send ready "$ready"
peer_ready=$(vm_recv ready 120)
[ "$ready" = 0 ] || tap_bail "setup failed on this side"
[ "$peer_ready" = 0 ] || tap_bail "setup failed on the peer ($peer_ready)"

n=0
servers=0
clients=0
t_start=$SECONDS

# serve DESC: run the server of case $n, tell the client when it listens,
# wait for it to finish. A server that outlives its client by 30 s (5 s
# if the client failed) is stopped.
serve() {
	local log=/tmp/tools.$n.srv rc up=0 crc problems
	tool_serve "$log" || up=1
	vm_send "up.$n" "$up"
	crc=$(vm_recv "done.$n" 200)
	tool_reap "$crc"
	rc=$?
	[ $rc -eq 0 ] && problems=$(tool_check server "$log")
	if [ $rc -eq 0 ] && [ -z "$problems" ]; then
		tap_ok "$1: server"
		return
	fi
	tap_fail "$1: server"
	[ $up -eq 0 ] || tap_diag "it never listened on port $tool_port"
	[ $rc -eq 124 ] && tap_diag "timed out"
	tap_diag "command: ${srv[*]} (status $rc)"
	tool_problems "$problems"
	tool_log "$log"
	tool_keep "$log"
}

# drive DESC: run the client of case $n once the server listens.
drive() {
	local log=/tmp/tools.$n.cli up rc t0 problems
	up=$(vm_recv "up.$n" 60)
	if [ "$up" != 0 ]; then
		vm_send "done.$n" 1
		tap_fail "$1: client (the server did not start)"
		return
	fi
	t0=$SECONDS
	run_timeout 120 "${cli[@]}" >"$log" 2>&1
	rc=$?
	vm_send "done.$n" "$rc"
	[ $rc -eq 0 ] && problems=$(tool_check client "$log")
	if [ $rc -eq 0 ] && [ -z "$problems" ]; then
		tap_ok "$1: client ($((SECONDS - t0)) s)"
		return
	fi
	tap_fail "$1: client ($((SECONDS - t0)) s)"
	tap_diag "command: ${cli[*]} (status $rc)"
	tool_problems "$problems"
	tool_log "$log"
	tool_keep "$log"
}

# run SERVER FAMILY TYPE [ARGS...]: one run of a tool, SERVER (a or b)
# serving, over the GID of FAMILY (4 or 6).
run() {
	local server=$1 fam=$2 type=$3 gid sip4 sip peer desc
	shift 3
	n=$((n + 1))
	if [ "$fam" = 4 ]; then
		gid=$gid4
		peer=$VROCE_PEER_IP4
	else
		gid=$gid6
		peer=$VROCE_PEER_IP6
	fi
	if [ "$server" = "$VROCE_ROLE" ]; then
		sip4=$VROCE_SELF_IP4
		sip=$VROCE_SELF_IP4
		[ "$fam" = 6 ] && sip=$VROCE_SELF_IP6
	else
		sip4=$VROCE_PEER_IP4
		sip=$peer
	fi
	tool_setup "$type" "$gid" $((19000 + n)) "$sip4" "$sip" "$peer" "$@"
	desc="IPv$fam $tool_desc, ${server^^} serves"
	if [ "$server" = "$VROCE_ROLE" ]; then
		serve "$desc"
		servers=$((servers + 1))
	else
		drive "$desc"
		clients=$((clients + 1))
	fi
}

# cases SERVER FAMILY: every tool once.
cases() {
	local size iters
	for size in 1 4096 65536 1048576; do
		iters=20
		[ "$size" -gt 65536 ] && iters=5
		run "$1" "$2" pp -s "$size" -n "$iters"
		run "$1" "$2" pp -e -s "$size" -n "$iters"
	done
	run "$1" "$2" perftest ib_write_bw -s 65536 -n 200 --report_gbits
	run "$1" "$2" perftest ib_write_bw -s 64 -n 200 --report_gbits
	run "$1" "$2" perftest ib_read_bw -s 65536 -n 200 --report_gbits
	run "$1" "$2" perftest ib_send_bw -s 65536 -n 200 --report_gbits
	run "$1" "$2" perftest ib_atomic_bw -A FETCH_AND_ADD -n 200 --report_gbits
	run "$1" "$2" perftest ib_atomic_bw -A CMP_AND_SWAP -n 200 --report_gbits
	run "$1" "$2" perftest ib_write_lat -s 2 -n 200
	run "$1" "$2" perftest ib_read_lat -s 2 -n 200
	run "$1" "$2" perftest ib_send_lat -s 2 -n 200
	run "$1" "$2" rping
	run "$1" "$2" ucmatose
}

for server in b a; do
	for fam in 4 6; do
		t0=$SECONDS
		cases "$server" "$fam"
		tap_diag "IPv$fam, ${server^^} serving: $((SECONDS - t0)) s"
	done
done
tap_diag "$n runs ($servers as the server, $clients as the client) in $((SECONDS - t_start)) s"
vm_barrier "done" 60
tap_done
