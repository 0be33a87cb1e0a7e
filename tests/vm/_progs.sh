# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A test program of tests/progs run between the two VMs, its server in B
# and its client in A, for VM tests, on top of lib.sh and _vroce.sh
# (source those first). Used by 80-rxe-ops.sh (rdma_ops), 95-err-order-pair.sh
# (err_order), 96-verbs-wire.sh (verbs_wire) and
# 82-rc-loss.sh (rc_stress).
#
#   prog_dev PROG            the device of $kind on eth0 (kind_dev), the
#                            /dev/infiniband nodes, PROG built, the port
#                            active: 3 TAP lines
#   prog_serve NAME S DESC CMD...
#                            B: the server CMD of run NAME (below)
#   prog_drive NAME WAIT S CMD...
#                            A: the client CMD of run NAME (below)
#   prog_pair NAME PROG PORT B: the server "PROG -d $dev -g $gid4 -p PORT
#                            -s", A: its client of B's IPv4 address, whose
#                            TAP has both ends' checks (limit 200 s each)
#
# A run NAME keeps the server's output in /tmp/srv.NAME.log, the client's
# in /tmp/cli.NAME.log (its standard error in /tmp/cli.NAME.err); the
# server tells the client that it listens through vm_send up-NAME.

# shellcheck shell=bash

# shellcheck disable=SC2154 # kind is the test's, dev kind_dev's
prog_dev() {
	kind_dev "$kind"
	tap_result $? "$dev ($kind) on eth0"
	vm_ib_nodes
	tap_check "${1##*/} is built" test -x "$1"
	tap_check "$dev port active" vm_wait_port_active "$dev" 30
}

# prog_serve NAME S DESC CMD...: runs the server CMD with a limit of S
# seconds; tells A whether it printed "listening" within 15 s; one TAP
# line, DESC, for its exit status, which it returns.
prog_serve() {
	local name=$1 limit=$2 desc=$3 pid rc
	shift 3
	run_timeout "$limit" "$@" >"/tmp/srv.$name.log" 2>&1 &
	pid=$!
	wait_for 15 grep -q listening "/tmp/srv.$name.log"
	vm_send "up-$name" "$?"
	wait "$pid"
	rc=$?
	tap_result $rc "$desc"
	return $rc
}

# prog_drive NAME WAIT S CMD...: fails (1) if B's server does not say
# within WAIT seconds that it listens; else runs the client CMD with a
# limit of S seconds and relays its TAP (tap_relay NAME). Sets prog_rc
# (CMD's exit status), prog_plan (0 if CMD printed a plan, else 1) and
# prog_secs (the seconds it took).
# shellcheck disable=SC2034 # prog_* are the caller's
prog_drive() {
	local name=$1 up_s=$2 limit=$3 up t0
	shift 3
	up=$(vm_recv "up-$name" "$up_s")
	[ "$up" = 0 ] || return 1
	t0=$(date +%s)
	run_timeout "$limit" "$@" >"/tmp/cli.$name.log" 2>"/tmp/cli.$name.err"
	prog_rc=$?
	tap_relay "$name" "/tmp/cli.$name.log"
	prog_plan=$?
	prog_secs=$(($(date +%s) - t0))
	return 0
}

# prog_pair NAME PROG PORT: B serves, A drives PROG over the IPv4 GID
# ($gid4) of $dev; the TAP lines of the run on each side.
# shellcheck disable=SC2154 # dev is kind_dev's, gid4 the caller's
prog_pair() {
	local name=$1 prog=$2 port=$3 what=${2##*/}

	if [ "$VROCE_ROLE" = b ]; then
		prog_serve "$name" 200 "$what server ran to the end" \
			"$prog" -d "$dev" -g "$gid4" -p "$port" -s ||
			sed 's/^/#   /' "/tmp/srv.$name.log"
	elif prog_drive "$name" 150 200 \
		"$prog" -d "$dev" -g "$gid4" -p "$port" "$VROCE_PEER_IP4"; then
		tap_result "$prog_plan" "$what client printed a plan"
		tap_result "$prog_rc" "$what client exit status $prog_rc ($prog_secs s)"
	else
		tap_fail "$what server is listening"
	fi
}
