#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Allocations that fail, on a kernel with fault injection (the debug kernel
# of make check-debug; on Debian's kernel, which has none, everything is
# skipped). Two VMs:
#   1. setup, on A: tests/progs/objects (every kind of object, legal and
#      illegal parameters, create/destroy cycles) runs 20 times with
#      failslab and fail_page_alloc failing 10% of the allocations of its
#      own process (task-filter; it runs in a tmpfs root of its own and
#      marks itself once the device is open: failures inside 9p and
#      overlayfs, the VM's root, left its files unreadable), in its system
#      calls. Whatever fails must fail cleanly: afterwards
#      the module's object counts and rdma resource show are back where
#      they were, and objects passes with no faults;
#   2. traffic, both sides: vroce's own fault attribute
#      (/sys/kernel/debug/vroce_fail_packet, kernel/fault.c) fails 1% of
#      the packet-path allocations (requests, READ responses, ACKs, batch
#      records, received chains), in any context, while tests/progs/
#      rc_stress sends 2000 checksummed messages of every opcode: all must
#      complete with success and right bytes, and faults must have fired;
#   3. starvation, on A: every packet allocation fails for 2 s in the
#      middle of another rc_stress run (4000 messages; QP timeout 20, 4 s,
#      so no retry is spent). The send engine must wait for memory, not
#      spin on it: it tries again every 4 ms (kernel/comp.c), so the
#      attribute may fire some 500 times in those 2 s (plus the received
#      packets it drops), not the tens of thousands of a busy loop; and
#      the run completes;
#   4. the link is deleted and the module unloads on both sides.
# The harness fails the test on any WARNING, BUG, KASAN or lockdep report,
# and on kmemleak's leaks through vroce or the RDMA core.
#
# vm: pair
# vm: install=1
# vm: timeout=600

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_progs.sh"

dbg=/sys/kernel/debug
stress=$VROCE_TOP/build/progs/rc_stress
objects=$VROCE_TOP/build/progs/objects
port=18640
times=1000000

if [ ! -d $dbg/failslab ] || [ ! -d $dbg/vroce_fail_packet ]; then
	tap_skip "fault injection" "$(uname -r) has no failslab or vroce_fail_packet (CONFIG_FAULT_INJECTION_DEBUG_FS)"
	tap_done
fi

# arm ATTR PROBABILITY TASKFILTER: ATTR fires with PROBABILITY percent,
# at most $times times, only in marked tasks if TASKFILTER is Y.
arm() {
	echo 0 >"$dbg/$1/probability" &&
		echo 1 >"$dbg/$1/interval" &&
		echo $times >"$dbg/$1/times" &&
		echo 0 >"$dbg/$1/verbose" &&
		echo 0 >"$dbg/$1/space" &&
		echo "$3" >"$dbg/$1/task-filter" &&
		echo "$2" >"$dbg/$1/probability"
}

disarm() {
	echo 0 >"$dbg/$1/probability"
}

# fired ATTR: how many times ATTR fired since it was armed.
fired() {
	echo $((times - $(cat "$dbg/$1/times")))
}

# make_jail: a root of its own for objects, on tmpfs, with its libraries,
# the provider and /dev, /proc and /sys; prints its path. A task marked
# for fault injection must not walk the VM's root: when it did, a failure
# inside 9p or overlayfs left every later lookup of the host's files
# answering EINVAL ("overlayfs: failed to get metacopy (-22)"), in every
# process; that is the VM's root failing, not vroce.
make_jail() {
	local j=/run/fi f prov=/usr/lib/x86_64-linux-gnu/libibverbs
	mkdir -p $j/dev $j/proc $j/sys $j/etc &&
		mount -t tmpfs tmpfs $j/dev && cp -a /dev/infiniband /dev/null $j/dev/ &&
		mount --bind /proc $j/proc && mount --bind /sys $j/sys &&
		mkdir -p $j/etc/libibverbs.d && cp "$objects" $j/objects &&
		cp /etc/libibverbs.d/vroce.driver $j/etc/libibverbs.d/ || return 1
	# The libraries are ldd's lines that start with a tab; the others
	# name the file (ldd of several) or say that a provider of another
	# private ABI than libibverbs' would not load.
	for f in $(ldd "$objects" "$prov"/libvroce-rdmav*.so 2>/dev/null |
		grep '^[[:space:]]' | grep -o '/[^ ]*') "$prov"/libvroce-rdmav*.so; do
		cp --parents -L "$f" $j/ || return 1
	done
	echo $j
}

objs() {
	cat /sys/class/infiniband/"$dev"/objects/* | tr -d '\n'
}

# shellcheck disable=SC2317  # called through wait_for
counts_back() {
	[ "$(objs)" = "$before" ]
}

kind=vroce
prog_dev "$stress"
gid4=$(dev_gid "$VROCE_SELF_IP4" 10)
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP4: index $gid4"
before=$(objs)
res_before=$(rdma resource show "$dev" 2>&1)

if [ "$VROCE_ROLE" = a ]; then
	for f in failslab fail_page_alloc; do
		[ -e $dbg/$f/ignore-gfp-wait ] && echo N >$dbg/$f/ignore-gfp-wait
	done
	[ -e $dbg/fail_page_alloc/ignore-gfp-highmem ] &&
		echo N >$dbg/fail_page_alloc/ignore-gfp-highmem
	arm failslab 10 Y && arm fail_page_alloc 10 Y
	tap_result $? "failslab and fail_page_alloc: 10% in marked tasks"
	jail=$(make_jail)
	tap_result $? "objects and its libraries in a tmpfs root ($jail)"
	failed=0
	for i in $(seq 20); do
		VROCE_MAKE_IT_FAIL=1 run_timeout 120 chroot "$jail" /objects "$dev" 30 \
			>"/tmp/objects.$i.log" 2>&1
		rc=$?
		[ $rc = 0 ] || failed=$((failed + 1))
		[ $rc = 124 ] && tap_diag "run $i timed out"
	done
	slab=$(fired failslab)
	page=$(fired fail_page_alloc)
	disarm failslab
	disarm fail_page_alloc
	tap_diag "20 runs of objects: $failed ended in an error; failslab fired $slab times, fail_page_alloc $page"
	[ "$slab" -gt 0 ]
	tap_result $? "allocations failed in the runs ($slab slab, $page page)"
	grep -h "timed out" /tmp/objects.*.log | head -n 3 | sed 's/^/# /'
	wait_for 10 counts_back
	left=$(objs)
	[ "$left" = "$before" ]
	tap_result $? "object counts back where they were (ah cq mr mw pd qp srq: $before -> $left)"
	res=$(rdma resource show "$dev" 2>&1)
	[ "$res" = "$res_before" ]
	tap_result $? "rdma resource show as before ($res)"
	if run_timeout 120 "$objects" "$dev" 30 >/tmp/objects.clean.log 2>&1; then
		tap_ok "objects passes with no faults"
	else
		tap_fail "objects passes with no faults"
		grep -v "^ok" /tmp/objects.clean.log | head -n 20 | sed 's/^/#   /'
	fi
	[ -n "${VROCE_OUT:-}" ] && cp /tmp/objects.*.log "$VROCE_OUT"/
fi
vm_barrier setup-done 600

arm vroce_fail_packet 1 N
tap_result $? "vroce_fail_packet: 1% of packet-path allocations"
if [ "$VROCE_ROLE" = b ]; then
	prog_serve traffic 400 "rc_stress server ran to the end, its checks passed" \
		"$stress" -d "$dev" -g "$gid4" -p $port -s --deadline "$(vm_scaled 330)" ||
		sed 's/^/#   /' /tmp/srv.traffic.log
elif prog_drive traffic 120 330 "$stress" -d "$dev" -g "$gid4" -p $port \
	-n 2000 --deadline "$(vm_scaled 300)" "$VROCE_PEER_IP4"; then
	tap_result "$prog_rc" "rc_stress: 2000 messages, exit status $prog_rc, $prog_secs s"
	[ -s /tmp/cli.traffic.err ] && sed 's/^/#   /' /tmp/cli.traffic.err
else
	tap_fail "rc_stress server is listening"
fi
n=$(fired vroce_fail_packet)
disarm vroce_fail_packet
vm_send fired "$n"
peer_n=$(vm_recv fired 120)
tap_diag "vroce_fail_packet fired $n times here, ${peer_n:-?} on the peer"
[ $((n + ${peer_n:-0})) -gt 0 ]
tap_result $? "packet-path allocations failed during the traffic"
vm_barrier traffic-done 120

# starve AFTER: once AFTER seconds have passed, every packet allocation
# here fails for 2 s; then how many did goes to /tmp/starved.
starve() {
	sleep "$1"
	arm vroce_fail_packet 100 N
	sleep 2
	fired vroce_fail_packet >/tmp/starved
	disarm vroce_fail_packet
}

if [ "$VROCE_ROLE" = b ]; then
	prog_serve starve 400 "rc_stress server ran to the end (A starved for 2 s)" \
		"$stress" -d "$dev" -g "$gid4" -p $((port + 1)) -s --deadline "$(vm_scaled 330)" ||
		sed 's/^/#   /' /tmp/srv.starve.log
else
	rm -f /tmp/starved
	starve 6 &
	starver=$!
	if prog_drive starve 120 330 "$stress" -d "$dev" -g "$gid4" \
		-p $((port + 1)) -n 4000 --timeout 20 --deadline "$(vm_scaled 300)" \
		"$VROCE_PEER_IP4"; then
		tap_result "$prog_rc" "rc_stress through 2 s with no packet memory: 4000 messages, exit status $prog_rc, $prog_secs s"
	else
		tap_fail "rc_stress server is listening (starvation)"
	fi
	wait "$starver"
	n=$(cat /tmp/starved 2>/dev/null)
	tap_diag "vroce_fail_packet fired ${n:-?} times in the 2 s without memory"
	[ "${n:-0}" -gt 0 ] && [ "$n" -lt 2000 ]
	tap_result $? "the send engine waited for memory instead of spinning (${n:-?} failed allocations in 2 s, fewer than 2000)"
fi
vm_barrier starve-done 120
counters /tmp/hw
for c in retransmits retry_timeouts; do
	tap_diag "$c $(counter /tmp/hw $c)"
done

wait_for 10 counts_back
[ "$(objs)" = "$before" ]
tap_result $? "object counts back where they were after the traffic ($(objs))"
rdma link del "$dev"
tap_result $? "rdma link del $dev"
modprobe -r vroce
tap_result $? "the module unloads: no reference left"
tap_done
