#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# dereg_mr while a peer holds the MR (issue 10 R3). The victim
# (tests/progs/mr_dereg.c) has an RC QP on vroce1 over a veth to a network
# namespace, connected to a peer there that is no RDMA device at all:
# tests/vm/_roce_write.py crafts its packets. The peer sends an RDMA WRITE
# First (1024 of 4096 bytes) to the victim's MR and then nothing, so the
# WRITE holds the MR. Then:
#   - the victim's ibv_dereg_mr returns within 5 s (it used to sleep in D
#     state for as long as the peer wished, and so did process exit,
#     device removal and rmmod);
#   - the WRITE Middle that follows gets a remote access error NAK, and
#     its bytes do not land in the buffer;
#   - a SEND of the victim from a second MR that the peer never
#     acknowledges fails with IBV_WC_LOC_PROT_ERR once that MR is
#     deregistered (it cannot be resent from it), and that dereg returns
#     at once too;
#   - a SEND of the peer that has begun to fill a receive of the victim
#     (SEND First) and ends after the victim deregistered the receive's
#     MR (SEND Last) gets a remote operational error NAK, and the receive
#     completes with IBV_WC_LOC_PROT_ERR, not success;
#   - a READ of the peer's being answered (slowly: tbf limits the rate
#     of the victim's side of the veth) when the victim deregisters its
#     MR ends with a remote access error NAK, and the QP that answered it
#     goes to the error state;
#   - the victim exits cleanly, the link goes, and rmmod works.
#
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

prog=$VROCE_TOP/build/progs/mr_dereg
craft=$VROCE_TOP/tests/vm/_roce_write.py
log=/tmp/mr_dereg.log
go=/tmp/mr_dereg.go
me=198.51.100.1
peer=198.51.100.2

tap_plan 15

veth_vroce1 pk "$me" "$peer"
vm_ib_nodes

mkdir -p "$go"
"$prog" vroce1 "$peer" "$go" >"$log" 2>&1 &
pid=$!
wait_for 15 grep -q ready "$log"
tap_result $? "the victim is ready"
read -r qpn psn rkey va < <(sed -n 's/^target qpn=\([0-9]*\) psn=\([0-9]*\) rkey=\([0-9]*\) va=\([0-9]*\)$/\1 \2 \3 \4/p' "$log")
rqpn=$(sed -n 's/^recv qpn=\([0-9]*\)$/\1/p' "$log")
read -r dqpn drkey dva < <(sed -n 's/^read qpn=\([0-9]*\) rkey=\([0-9]*\) va=\([0-9]*\)$/\1 \2 \3/p' "$log")
tap_diag "victim: QP $qpn, PSN $psn, rkey $rkey, va $va; receiving QP $rqpn; READ QP $dqpn, rkey $drkey, va $dva"

ip netns exec pk python3 "$craft" first "$peer" "$me" "$qpn" "$psn" \
	"$rkey" "$va" 4096
tap_result $? "the peer sends a WRITE First (1024 of 4096 bytes)"
sleep 1
touch "$go/1"

wait_for 10 grep -q "dereg returned" "$log"
tap_result $? "ibv_dereg_mr returns within 10 s: $(grep "dereg returned" "$log")"

ip netns exec pk python3 "$craft" middle "$peer" "$me" "$qpn" \
	$((psn + 1)) 5 >/tmp/mr_dereg.nak 2>&1
tap_result $? "the WRITE Middle gets a remote access error NAK: $(tr '\n' ';' </tmp/mr_dereg.nak)"
touch "$go/2"

wait_for 10 grep -q "recv phase" "$log" &&
	ip netns exec pk python3 "$craft" send-first "$peer" "$me" "$rqpn" \
		"$psn"
tap_result $? "the peer sends a SEND First (1024 bytes) to the receiving QP"
touch "$go/3"
wait_for 10 grep -q "dereg3 returned" "$log"
tap_result $? "the receive's MR is deregistered: $(grep "dereg3 returned" "$log")"
ip netns exec pk python3 "$craft" send-last "$peer" "$me" "$rqpn" \
	$((psn + 1)) 5 >/tmp/mr_dereg.nak2 2>&1
tap_result $? "the SEND Last gets a remote operational error NAK: $(tr '\n' ';' </tmp/mr_dereg.nak2)"
touch "$go/4"

wait_for 10 grep -q "read phase" "$log" &&
	tc qdisc add dev veth0 root tbf rate 8mbit burst 16kb latency 10s
tap_result $? "the victim's side of the veth sends 8 Mbit/s"
ip netns exec pk python3 "$craft" read "$peer" "$me" "$dqpn" "$psn" \
	"$drkey" "$dva" $((4 << 20)) 30 >/tmp/mr_dereg.read 2>&1 &
reader=$!
# Only once the READ is being answered: a python slow to start under
# load would otherwise send its READ after the MR is gone.
wait_for 30 sh -c "grep -q 'first response' /tmp/mr_dereg.read ||
	! kill -0 $reader"
touch "$go/5"
wait "$reader"
tap_result $? "the READ of 4 MiB ends with a remote access error NAK once its MR is deregistered: $(tr '\n' ';' </tmp/mr_dereg.read) $(grep "dereg4 returned" "$log")"
tap_diag "vroce1: $(rdma statistic show link vroce1/1 | tr -s ' \n' ' ')"
tap_diag "veth0: $(tc -s qdisc show dev veth0 | tr -s ' \n' ' ')"
tc qdisc del dev veth0 root
touch "$go/6"

wait_for 10 sh -c "! kill -0 $pid"
tap_result $? "the victim exits within 10 s"
if kill -0 "$pid" 2>/dev/null; then
	tap_fail "the victim's checks (it is stuck: $(cat "/proc/$pid/wchan" 2>/dev/null))"
else
	wait "$pid"
	tap_result $? "the victim's checks"
fi
sed 's/^/#   /' "$log"

rdma link del vroce1 &
del=$!
wait_for 10 sh -c "! kill -0 $del"
tap_result $? "rdma link del vroce1 within 10 s"
rmmod vroce &
rm_pid=$!
wait_for 20 sh -c "! kill -0 $rm_pid" && wait "$rm_pid" &&
	! grep -q '^vroce ' /proc/modules
tap_result $? "rmmod vroce within 20 s"
tap_done
