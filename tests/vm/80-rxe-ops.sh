#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Data correctness of RC and UD traffic across the two-VM wire
# (tests/progs/rdma_ops.c): every RC opcode, sizes around the path MTU up
# to 1 MiB, scatter-gather, inline, unsignaled requests, remote error
# statuses, RNR, UD; over the IPv4 GID, then a subset over the IPv6 GID.
# B runs the servers, A the clients; A's TAP carries the checks.
#
# Which RDMA device each side uses comes from the environment:
#   VROCE_OPS_A=rxe|vroce   (default rxe)
#   VROCE_OPS_B=rxe|vroce   (default rxe)
# "rxe" is rdma_rxe (rxe0 on eth0), "vroce" the repo's module (vroce0 on
# eth0). As committed this is the self-test of the test program with
# rdma_rxe on both sides, so vroce is not installed (install=0). To run
# vroce on a side, add --install (the VM then installs and loads vroce;
# this script adds the link; the 85-* scripts do this) and pass
# the choice, e.g.:
#   scripts/vm --pair --install --env VROCE_OPS_A=vroce tests/vm/80-rxe-ops.sh
#
# vm: pair
# vm: install=0
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

ops=$VROCE_TOP/build/progs/rdma_ops
port=18600

case $VROCE_ROLE in
a) kind=${VROCE_OPS_A:-rxe} ;;
b) kind=${VROCE_OPS_B:-rxe} ;;
*) tap_bail "needs a VM pair (vm: pair)" ;;
esac

kind_dev "$kind"
case $? in
2) tap_bail "VROCE_OPS_${VROCE_ROLE^^}=$kind: want rxe or vroce" ;;
*) tap_result $? "$dev ($kind) on eth0" ;;
esac
vm_ib_nodes
tap_check "rdma_ops is built" test -x "$ops"
tap_check "$dev port active" vm_wait_port_active "$dev" 30
wait_for 10 vm_gid_index "$dev" "$VROCE_SELF_IP4"
gid4=$(vm_gid_index "$dev" "$VROCE_SELF_IP4")
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP4: index $gid4"
wait_for 15 vm_gid_index "$dev" "$VROCE_SELF_IP6"
gid6=$(vm_gid_index "$dev" "$VROCE_SELF_IP6")
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP6: index $gid6"

# fold_tap NAME FILE: the program's TAP as checks of this script.
fold_tap() {
	local line plan=
	while IFS= read -r line; do
		case $line in
		"ok "[0-9]*" - # SKIP "*)
			tap_skip "$1: ${line#ok * - \# SKIP }" "" ;;
		"ok "[0-9]*) tap_ok "$1: ${line#ok * - }" ;;
		"not ok "[0-9]*) tap_fail "$1: ${line#not ok * - }" ;;
		1..[0-9]*) plan=${line#1..} ;;
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done <"$2"
	[ -n "$plan" ]
}

# serve NAME GID: one server run, announced to A once it listens.
serve() {
	local pid rc
	run_timeout 240 "$ops" -d "$dev" -g "$2" -p "$port" -s \
		>"/tmp/srv.$1.log" 2>&1 &
	pid=$!
	wait_for 15 grep -q listening "/tmp/srv.$1.log"
	vm_send "up-$1" "$?"
	wait "$pid"
	rc=$?
	tap_result $rc "$1 server ran to the end"
	[ $rc -eq 0 ] || sed 's/^/#   /' "/tmp/srv.$1.log"
}

# drive NAME GID PEER [ARGS]: one client run once B's server listens.
drive() {
	local up t0 rc planned
	up=$(vm_recv "up-$1" 150)
	if [ "$up" != 0 ]; then
		tap_fail "$1 server is listening"
		return
	fi
	t0=$(date +%s)
	run_timeout 240 "$ops" -d "$dev" -g "$2" -p "$port" "${@:4}" "$3" \
		>"/tmp/cli.$1.log" 2>"/tmp/cli.$1.err"
	rc=$?
	fold_tap "$1" "/tmp/cli.$1.log"
	planned=$?
	tap_result $planned "$1 client printed a plan"
	tap_result $rc "$1 client exit status $rc ($(($(date +%s) - t0)) s)"
	[ $rc -eq 0 ] || sed 's/^/#   /' "/tmp/cli.$1.err"
}

if [ "$VROCE_ROLE" = b ]; then
	serve ipv4 "$gid4"
	serve ipv6 "$gid6"
else
	drive ipv4 "$gid4" "$VROCE_PEER_IP4"
	drive ipv6 "$gid6" "$VROCE_PEER_IP6" --ipv6
fi
vm_barrier done 60
tap_done
