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

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_progs.sh"

ops=$VROCE_TOP/build/progs/rdma_ops
port=18600

pair_kind VROCE_OPS rxe
prog_dev "$ops"
gid4=$(dev_gid "$VROCE_SELF_IP4" 10)
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP4: index $gid4"
gid6=$(dev_gid "$VROCE_SELF_IP6" 15)
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP6: index $gid6"

# serve NAME GID: one server run, announced to A once it listens.
serve() {
	prog_serve "$1" 240 "$1 server ran to the end" \
		"$ops" -d "$dev" -g "$2" -p "$port" -s ||
		sed 's/^/#   /' "/tmp/srv.$1.log"
}

# drive NAME GID PEER [ARGS]: one client run once B's server listens.
drive() {
	if ! prog_drive "$1" 150 240 \
		"$ops" -d "$dev" -g "$2" -p "$port" "${@:4}" "$3"; then
		tap_fail "$1 server is listening"
		return
	fi
	tap_result "$prog_plan" "$1 client printed a plan"
	tap_result "$prog_rc" "$1 client exit status $prog_rc ($prog_secs s)"
	[ "$prog_rc" -eq 0 ] || sed 's/^/#   /' "/tmp/cli.$1.err"
}

# IBTA 1.5 RDMA Atomic Write, where both sides have it: vroce does, and
# rdma_rxe from Linux 6.2 on (both VMs boot the same kernel).
rxe_has_aw() {
	local v major minor
	v=$(uname -r)
	major=${v%%.*}
	v=${v#*.}
	minor=${v%%.*}
	[ "$major" -gt 6 ] || { [ "$major" -eq 6 ] && [ "$minor" -ge 2 ]; }
}
aw=()
{ [ "${VROCE_OPS_A:-rxe}" = vroce ] || rxe_has_aw; } &&
	{ [ "${VROCE_OPS_B:-rxe}" = vroce ] || rxe_has_aw; } &&
	aw=(--atomic-write)

if [ "$VROCE_ROLE" = b ]; then
	serve ipv4 "$gid4"
	serve ipv6 "$gid6"
else
	drive ipv4 "$gid4" "$VROCE_PEER_IP4" "${aw[@]}"
	drive ipv6 "$gid6" "$VROCE_PEER_IP6" --ipv6
fi
vm_barrier "done" 60
tap_done
