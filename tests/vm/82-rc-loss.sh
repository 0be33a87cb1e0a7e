#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# RC under loss: tests/progs/rc_stress.c between the two VMs, B the
# server, A the client (A's TAP carries its checks). Mixed opcodes (SEND,
# SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ, FETCH_AND_ADD,
# CMP_AND_SWP), 0 to 64 KiB, 16 messages in flight, every byte checked.
#   1. a clean wire, 2000 messages;
#   2. netem on both eth0s (loss 5%, reorder 10%, duplicate 1%, corrupt 1%,
#      delay 1 ms; a flipped bit is caught by the UDP checksum or the
#      ICRC), 10000 messages; the device's hardware counters before and
#      after are printed and those that prove retransmission must rise.
# Without sch_netem (or tc) in the VM the lossy phase is skipped. With
# rdma_rxe as A, atomics that complete without their old value are counted
# and tolerated (an rxe requester defect under loss, see rc_stress.c).
#
# Environment:
#   VROCE_STRESS_A=rxe|vroce   device of A (default rxe)
#   VROCE_STRESS_B=rxe|vroce   device of B (default rxe)
#   VROCE_STRESS_N             messages of the lossy phase (default 10000)
#   VROCE_STRESS_N_CLEAN       messages of the clean phase (default 2000)
#   VROCE_STRESS_SEED          seed of both runs (default: a fresh one,
#                              printed by the client)
#   VROCE_STRESS_TIMEOUT       IBTA QP timeout exponent (default 12)
#   VROCE_STRESS_DEADLINE      seconds the lossy client may take (default
#                              360 times the VM's time scale; scripts/soak
#                              raises it)
# "rxe" is rdma_rxe (rxe0 on eth0), "vroce" the repo's module (vroce0 on
# eth0). As committed this runs rdma_rxe on both sides, so vroce is not
# installed (install=0). To run vroce on a side, add --install (the 86-* scripts
# do this) and pass the choice, e.g.:
#   scripts/vm --pair --install --env VROCE_STRESS_A=vroce tests/vm/82-rc-loss.sh
#
# vm: pair
# vm: install=0
# vm: timeout=600

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_progs.sh"

stress=$VROCE_TOP/build/progs/rc_stress
port=18610
n_clean=${VROCE_STRESS_N_CLEAN:-2000}
n_lossy=${VROCE_STRESS_N:-10000}
netem=(loss 5% reorder 10% duplicate 1% corrupt 1% delay 1ms)
# Seconds each client may take; the server gets 30 more, the VM 600 in all
# (scripts/soak gives the VM more). Scaled as the VM's limit is: on the
# debug kernel rdma_rxe's lossy run alone needs more than 360 s.
deadline_clean=$(vm_scaled 90)
deadline_lossy=${VROCE_STRESS_DEADLINE:-$(vm_scaled 360)}

# Counters that must rise during the lossy run, per device kind and side:
# KIND ROLE NAME. A is the requester (it retransmits), B the responder (it
# sees the gaps and the repeats). A counter the device does not have is
# skipped with a diagnostic.
rise_checks='
rxe a completer_retry_err
rxe a rcvd_seq_err
rxe b out_of_seq_request
rxe b duplicate_request
vroce a retransmits
vroce a seq_err_nak_rcvd
vroce b seq_err_nak_sent
vroce b duplicate_requests
'

pair_kind VROCE_STRESS rxe
prog_dev "$stress"
gid=$(dev_gid "$VROCE_SELF_IP4" 10)
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP4: index $gid"

opts=(--timeout "${VROCE_STRESS_TIMEOUT:-12}")
[ -n "${VROCE_STRESS_SEED:-}" ] && opts+=(--seed "$VROCE_STRESS_SEED")
# rdma_rxe as the requester completes an atomic on a plain ACK of its PSN
# (which its responder sends for a duplicate SEND or WRITE) without the old
# value; see rc_stress.c. Counted and reported, not failed, for rxe only.
if [ "$VROCE_ROLE" = a ] && [ "$kind" = rxe ]; then
	opts+=(--allow-atomic-no-result)
	tap_diag "requester is rdma_rxe: atomics that return no old value are tolerated (--allow-atomic-no-result)"
fi

# counter_deltas BEFORE AFTER LABEL: the counters that moved, one
# diagnostic each, and the names of those that did not.
counter_deltas() {
	local name before after same=
	if [ ! -s "$2" ]; then
		tap_diag "$3: $dev has no hardware counters"
		return
	fi
	while read -r name after; do
		before=$(counter "$1" "$name")
		if [ "${before:-0}" = "$after" ]; then
			same="$same $name"
			continue
		fi
		tap_diag "$3: $name ${before:-?} -> $after (+$((after - ${before:-0})))"
	done <"$2"
	[ -z "$same" ] || tap_diag "$3: unchanged:$same"
}

# serve NAME DEADLINE: B's server, announced to A once it listens.
serve() {
	local w
	prog_serve "$1" $(($2 + 60)) "$1: server ran to the end, its checks passed" \
		"$stress" -d "$dev" -g "$gid" -p "$port" -s --deadline $(($2 + 30))
	sed 's/^#* */#   /' "/tmp/srv.$1.log"
	if ! w=$(vm_recv "wire-$1" 120); then
		tap_diag "$1: no word from A on how its client ended"
	elif [ "$w" != 0 ]; then
		wire_state "$1 failed, B"
	fi
}

# drive NAME COUNT DEADLINE: A's client, once B's server listens.
drive() {
	if ! prog_drive "$1" 120 $(($3 + 30)) "$stress" -d "$dev" -g "$gid" \
		-p "$port" -n "$2" --deadline "$3" "${opts[@]}" "$VROCE_PEER_IP4"; then
		tap_fail "$1: server is listening"
		vm_send "wire-$1" 1
		wire_state "$1 failed, A"
		return
	fi
	tap_result "$prog_plan" "$1: client printed a plan"
	tap_result "$prog_rc" "$1: client exit status $prog_rc, $2 messages in $prog_secs s"
	[ -s "/tmp/cli.$1.err" ] && sed 's/^/#   /' "/tmp/cli.$1.err"
	# A failed run: both sides say how their wire stands.
	vm_send "wire-$1" "$prog_rc"
	[ "$prog_rc" = 0 ] || wire_state "$1 failed, A"
}

# run_phase NAME COUNT DEADLINE
run_phase() {
	if [ "$VROCE_ROLE" = b ]; then
		serve "$1" "$3"
	else
		drive "$1" "$2" "$3"
	fi
}

counters /tmp/hw.0
run_phase clean "$n_clean" "$deadline_clean"
vm_barrier clean-done 120

counters /tmp/hw.1
counter_deltas /tmp/hw.0 /tmp/hw.1 "clean wire"

# netem on this side's eth0; both sides must have it for the lossy phase.
netem_err=
modprobe sch_netem 2>/dev/null
if ! command -v tc >/dev/null 2>&1; then
	netem_err="no tc (iproute2) in the VM"
elif ! out=$(tc qdisc add dev eth0 root netem "${netem[@]}" 2>&1); then
	if [ ! -d /sys/module/sch_netem ]; then
		netem_err="no sch_netem module for $(uname -r): $out"
	else
		netem_err="tc qdisc add netem failed: $out"
	fi
else
	tap_diag "eth0: $(tc qdisc show dev eth0 | head -n 1)"
fi
vm_send netem "${netem_err:-ok}"
peer_netem=$(vm_recv netem 60)
case $netem_err in
"") tap_ok "netem on eth0: ${netem[*]}" ;;
"no "*) tap_skip "netem on eth0" "$netem_err" ;;
*) tap_fail "netem on eth0: $netem_err" ;;
esac

if [ -n "$netem_err" ] || [ "$peer_netem" != ok ]; then
	tap_skip "lossy phase" "${netem_err:-peer: ${peer_netem:-no answer}}"
else
	run_phase lossy "$n_lossy" "$deadline_lossy"
	counters /tmp/hw.2
	tc qdisc del dev eth0 root 2>/dev/null
	counter_deltas /tmp/hw.1 /tmp/hw.2 "lossy wire"
	while read -r k r name; do
		if [ "$k" != "$kind" ] || [ "$r" != "$VROCE_ROLE" ]; then
			continue
		fi
		before=$(counter /tmp/hw.1 "$name")
		after=$(counter /tmp/hw.2 "$name")
		if [ -z "$before" ] || [ -z "$after" ]; then
			tap_diag "$dev has no counter $name: not checked"
			continue
		fi
		[ "$after" -gt "$before" ]
		tap_result $? "lossy wire: $dev counter $name rose ($before -> $after)"
	done <<<"$rise_checks"
fi
tc qdisc del dev eth0 root 2>/dev/null
vm_barrier end 60
tap_done
