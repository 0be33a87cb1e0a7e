#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Disruptions in the middle of RC traffic between two vroce VMs:
# tests/progs/rc_stress.c runs, B the server, A the client, and after a
# few seconds of traffic one side is hit by:
#   1. kill -9 of the server (B)
#   2. kill -9 of the client (A)
#   3. rdma link delete vroce0 (B)
#   4. eth0 down for 10 s, then up (B)
#   5. removal of B's IPv4 address for 10 s
#   6. rmmod vroce with the server's context open (B)
#   7. rdma link delete vroce0 (A), with the client's requests in flight
#   8. rmmod vroce with the client's context open (A)
# Each disruption must end in bounded time: the command returns, the
# client ends with an error completion (transport retries exceeded, or a
# flush) when B was hit, both processes end when A was (a disassociated
# client sees no more completions and gives up), and once the
# processes are gone each side's RDMA resources (rdma resource show: pd,
# cq, qp, mr, ctx) are back where they started. At the end both sides
# delete the link and unload vroce. The kernel must not oops or warn (the
# harness checks dmesg).
#
# vm: pair
# vm: timeout=900

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

stress=$VROCE_TOP/build/progs/rc_stress
port=18620
kind=vroce
peer_ip=$VROCE_PEER_IP4
self_ip=$VROCE_SELF_IP4

# A side's RDMA resources of vroce0: "pd N cq N qp N mr N ctx N".
resources() {
	rdma resource show 2>/dev/null | awk '$2 == "vroce0:" {
		for (i = 3; i < NF; i += 2)
			if ($i ~ /^(pd|cq|qp|mr|ctx)$/) printf "%s %s ", $i, $(i + 1)
	}'
}

link_up() {
	if ! lsmod | grep -q '^vroce '; then
		modprobe vroce || return 1
	fi
	link_exists vroce0 || rdma link add vroce0 type vroce netdev eth0 ||
		return 1
	vm_ib_nodes
	wait_for 30 vm_gid_index vroce0 "$self_ip" || return 1
	vm_wait_port_active vroce0 30
}

# The GID index of this side's IPv4 address, once there.
gid_now() {
	dev=vroce0
	dev_gid "$self_ip" 20
}

kind_dev "$kind" || tap_bail "cannot set up $kind on eth0"
vm_ib_nodes
tap_check "vroce0 port active" vm_wait_port_active vroce0 30
tap_check "rc_stress is built" test -x "$stress"
base=$(resources)
tap_diag "resources at the start: $base"
slab0=$(awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo)

gone() { ! kill -0 "$1" 2>/dev/null; }

# stuck PID: whether PID, sent SIGKILL, is still there 10 s later.
stuck() {
	gone "$1" && return 1
	kill -9 "$1" 2>/dev/null
	! wait_for 10 gone "$1"
}

# round K WHO WHAT DESC: one disruption. WHO (a or b) does WHAT.
round() {
	local k=$1 who=$2 what=$3 desc=$4 gid pid t0 rc log secs up
	gid=$(gid_now) || {
		tap_fail "round $k ($desc): no GID"
		return
	}
	log=/tmp/ut.$k.log
	if [ "$VROCE_ROLE" = b ]; then
		"$stress" -d vroce0 -g "$gid" -p $((port + k)) -s --deadline "$(vm_scaled 150)" \
			>"$log" 2>&1 &
		pid=$!
		wait_for 15 grep -q listening "$log"
		vm_send "up-$k" "$?"
	else
		up=$(vm_recv "up-$k" 60)
		if [ "$up" != 0 ]; then
			tap_fail "round $k ($desc): the server listens"
			vm_send "go-$k" 1
			return
		fi
		"$stress" -d vroce0 -g "$gid" -p $((port + k)) -n 1000000 \
			--timeout 10 --max-size 16384 --deadline "$(vm_scaled 120)" "$peer_ip" \
			>"$log" 2>&1 &
		pid=$!
		sleep 4
		kill -0 "$pid" 2>/dev/null
		tap_result $? "round $k ($desc): traffic runs"
		vm_send "go-$k" 0
	fi
	[ "$VROCE_ROLE" = b ] && vm_recv "go-$k" 60 >/dev/null
	t0=$(date +%s)
	if [ "$VROCE_ROLE" = "$who" ]; then
		case $what in
		kill) kill -9 "$pid" ;;
		link) run_timeout 60 rdma link delete vroce0 ;;
		netdev)
			ip link set eth0 down && sleep 10 && ip link set eth0 up
			;;
		addr)
			ip addr del "$self_ip/24" dev eth0 && sleep 10 &&
				ip addr add "$self_ip/24" dev eth0
			;;
		rmmod)
			run_timeout 60 rdma link delete vroce0 &&
				run_timeout 60 rmmod vroce
			;;
		esac
		tap_result $? "round $k ($desc): done in $(($(date +%s) - t0)) s"
	fi
	# The processes end, in bounded time, and say why.
	rc=0
	for _ in $(seq 1 90); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid"
		rc=1
	fi
	if stuck "$pid"; then
		# kill -9 cannot end it: it sleeps in the kernel (a destroy
		# that waits). Say where, and how the wire stands, while the
		# peer still runs; waiting for it would hang the case.
		tap_fail "round $k ($desc): pid $pid outlives kill -9"
		sed 's/^/#   stack: /' "/proc/$pid/stack" 2>/dev/null
		dmesg | grep -E 'destroy waits|removal waits for' | tail -n 3 | sed 's/^/#   /'
		wire_state "round $k"
	else
		{ wait "$pid"; } 2>/dev/null
	fi
	secs=$(($(date +%s) - t0))
	if [ "$VROCE_ROLE" = a ] && [ "$who" = b ]; then
		grep -qE 'retry counter exceeded|flush' "$log"
		rc=$((rc | $?))
		tap_result $rc "round $k ($desc): the client ended in $secs s with $(grep -oE 'transport retry counter exceeded|RNR retry counter exceeded|Work Request Flushed Error|[a-z ]+error' "$log" | head -n 1)"
		[ "$rc" -eq 0 ] || sed 's/^/#   /' "$log" | tail -n 8
	else
		tap_result $rc "round $k ($desc): the $([ "$VROCE_ROLE" = a ] && echo client || echo server) ended in $secs s"
	fi
	vm_barrier "ended-$k" 120
	# Back to where it started.
	if [ "$VROCE_ROLE" = "$who" ]; then
		link_up
		tap_result $? "round $k ($desc): vroce0 up again"
	fi
	wait_for 20 test "$(resources)" = "$base"
	rc=$?
	tap_result $rc "round $k ($desc): resources back to the start ($(resources))"
	[ "$rc" -eq 0 ] || wire_state "round $k"
	vm_barrier "round-$k" 120
}

round 1 b kill "kill -9 of the server"
round 2 a kill "kill -9 of the client"
round 3 b link "rdma link delete on the server's side"
round 4 b netdev "the server's eth0 down for 10 s"
round 5 b addr "the server's IPv4 address removed for 10 s"
round 6 b rmmod "rmmod vroce under the server's open context"
round 7 a link "rdma link delete on the client's side"
round 8 a rmmod "rmmod vroce under the client's open context"

slab1=$(awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo)
tap_diag "unreclaimable slab: $slab0 kB at the start, $slab1 kB now"
tap_check "rdma link delete vroce0 at the end" run_timeout 60 rdma link delete vroce0
tap_check "rmmod vroce at the end" run_timeout 60 rmmod vroce
vm_barrier "done" 120
tap_done
