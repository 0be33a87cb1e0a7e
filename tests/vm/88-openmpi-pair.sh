#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Open MPI across the two-VM wire, over UCX on vroce. A runs mpirun with
# one rank on each VM (--host 192.0.2.1:1,192.0.2.2:1) of
# tests/progs/mpi/mpi_check: a ping-pong of 8 B to 1 MiB messages, every
# byte checked at both ends, then an MPI_Allreduce of 65,536 int64s
# checked against the closed form. The MPI messages go through the UCX
# PML (--mca pml ucx) with UCX_NET_DEVICES=vroce0:1, so over vroce's RC
# QPs, not TCP; mpirun's own control connections use TCP on eth0. There
# is no ssh: mpirun starts its daemon on B through _mpi_rsh, which hands
# the command over the pair's shared directory to the loop this script
# runs on B (rsh_serve). Each side's counters must show the 1 MiB
# messages and no retransmit or timeout, and the kernel log stays clean.
#
# vm: pair
# vm: timeout=600
# vm: install=1

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

tap_plan 6
prog=$VROCE_TOP/build/progs/mpi_check
rshd=$VROCE_SHARED/rsh

ready=1
if kind_dev vroce >/dev/null 2>&1 && vm_wait_port_active "$dev" 30 &&
	wait_for 20 vm_gid_index "$dev" "$VROCE_SELF_IP4"; then
	ready=0
fi
tap_result $ready "$dev on eth0, port active, RoCE v2 GID of $VROCE_SELF_IP4"
vm_send ready "$ready"
peer=$(vm_recv ready 120)
[ $ready -eq 0 ] || tap_bail "setup failed on this side"
[ "$peer" = 0 ] || tap_bail "setup failed on the peer (${peer:-nothing})"
[ -x "$prog" ] || tap_bail "no $prog (make progs builds it where mpicc is: libopenmpi-dev)"
command -v mpirun >/dev/null || tap_bail "no mpirun (openmpi-bin)"
counters "/tmp/mpi.c0"

# rsh_serve: run each command _mpi_rsh leaves in $rshd, in the
# background, until $rshd/stop appears.
rsh_serve() {
	local f id
	mkdir -p "$rshd"
	while [ ! -e "$rshd/stop" ]; do
		for f in "$rshd"/*.cmd; do
			[ -e "$f" ] || continue
			id=${f##*/}
			id=${id%.cmd}
			mv "$f" "$rshd/$id.run" || continue
			(
				bash -c "$(cat "$rshd/$id.run")" >"$rshd/$id.out" 2>&1 </dev/null
				echo $? >"$rshd/.$id.rc"
				mv "$rshd/.$id.rc" "$rshd/$id.rc"
			) &
		done
		sleep 0.2
	done
}

if [ "$VROCE_ROLE" = b ]; then
	rsh_serve &
	serve=$!
	vm_send serving 1
	vm_barrier mpi 600
	: >"$rshd/stop"
	wait "$serve"
	n=$(find "$rshd" -name '*.rc' | wc -l)
	[ "$n" -ge 1 ]
	tap_result $? "served $n command(s) from mpirun: $(cat "$rshd"/*.run 2>/dev/null | grep -o 'orted' | head -n 1)"
	mpi=$(vm_recv mpi 10)
	[ "$mpi" = ok ]
	tap_result $? "mpirun on A: ${mpi:-nothing}"
else
	vm_recv serving 60 >/dev/null
	t0=$SECONDS
	timeout -k 10 400 mpirun --allow-run-as-root -np 2 \
		--host "$VROCE_SELF_IP4:1,$VROCE_PEER_IP4:1" \
		--mca plm_rsh_agent "$VROCE_TOP/tests/vm/_mpi_rsh" \
		--mca oob_tcp_if_include eth0 \
		--mca pml ucx --mca btl self,vader --mca osc ^ucx \
		-x UCX_NET_DEVICES="$dev:1" -x UCX_WARN_UNUSED_ENV_VARS=n \
		"$prog" >/tmp/mpi.out 2>&1
	rc=$?
	tap_diag "mpirun: status $rc, $((SECONDS - t0)) s"
	sed 's/^/#   /' /tmp/mpi.out
	[ $rc -eq 0 ] && [ "$(grep -c '^mpi_check: rank . of 2 on ' /tmp/mpi.out)" = 2 ]
	tap_result $? "mpirun: 2 ranks, one on each VM, exit 0"
	[ "$(grep -c '^mpi_check: ping-pong .* checked' /tmp/mpi.out)" = 4 ] &&
		grep -q '^mpi_check: allreduce of 65536 int64 over 2 ranks checked' /tmp/mpi.out
	res=$?
	tap_result $res "ping-pong 8 B .. 1 MiB and allreduce, every byte checked"
	vm_send mpi "$([ $rc -eq 0 ] && [ $res -eq 0 ] && echo ok || echo "status $rc")"
	vm_barrier mpi 600
fi

# 20 round trips of 1 MiB alone are 40 MiB: 10,000 packets and more each
# way at a 4096-byte MTU.
counters "/tmp/mpi.c1"
rx=$(($(counter /tmp/mpi.c1 rx_packets) - $(counter /tmp/mpi.c0 rx_packets)))
tx=$(($(counter /tmp/mpi.c1 tx_packets) - $(counter /tmp/mpi.c0 tx_packets)))
[ "$rx" -ge 10000 ] && [ "$tx" -ge 10000 ]
tap_result $? "$dev carried the MPI traffic: $tx packets sent, $rx received (10000 or more)"
wire_clean
vm_barrier end 120
tap_done
