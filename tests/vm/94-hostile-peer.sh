#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A hostile peer on the wire. A runs tests/progs/hostile_peer.c on vroce0:
# RC QPs in RTS, RTR, INIT and RESET, UC and UD QPs in RTS, an XRC target
# QP in RTR with an XRC SRQ and an SRQ of another XRC domain, a destroyed
# QP's number, an MR in its PD and one in another. B loads no RDMA device;
# tests/vm/_hostile.py there crafts RoCEv2 packets from a second address
# of B (192.0.2.3, the peer A's connected QPs name) and from a spoofed one:
#   1. malformed, misdirected or spoofed packets: a bad ICRC, a datagram
#      shorter than a BTH, a cut RETH, reserved opcodes, unknown and
#      destroyed QPs, QPs in RESET and INIT, a foreign P_Key, a spoofed
#      source, each transport at the others' QPs (XRC too), a wrong
#      Q_Key, XRC requests out of sequence naming a bad SRQ (the target
#      lives): no answer, and every one counted in rx_dropped;
#   2. PSN chaos at the live RC QP: PSNs ahead get one sequence NAK, a
#      duplicate WRITE is acknowledged and not executed, a duplicate READ
#      nobody asked for gets nothing, responses with no request out are
#      dropped;
#   3. one invalid request at each of ten sacrificial RC QPs (forged and
#      other-PD R_Keys, a READ past the MR and one of 4 GiB - 1, a
#      misaligned atomic, a WRITE Middle out of sequence, a WRITE shorter
#      than its DMA length, an ATOMIC_WRITE misaligned, of 4 bytes or
#      with a forged R_Key): the right NAK, and the QP goes to ERR;
#   4. then the live QPs carry checked traffic: RC WRITE, READ back, SEND,
#      FETCH_ADD, ATOMIC_WRITE and READ back, a UD SEND and a UC SEND; an
#      RTR QP answers a READ; the XRC target takes a SEND, WRITE and READ
#      through its SRQ, then gets an Invalid Request NAK (and goes to
#      ERR) for another domain's SRQ at the PSN expected;
#   5. the victim posts four RDMA READs on the live QP (max_rd_atomic 1)
#      and the crafter answers each only after a pause: at no time may
#      more than one be outstanding (IBTA; the requester side of
#      max_rd_atomic), and all four complete with the right bytes.
# A then checks that every counter moved by exactly what the packets
# explain, that neither MR changed where nothing may write, the QP states
# and the receives, and that the module unloads (no reference held).
#
# vm: pair
# vm: install=1
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

prog=$VROCE_TOP/build/progs/hostile_peer
crafter=$VROCE_TOP/tests/vm/_hostile.py
peer_ip=192.0.2.3
spoof=192.0.2.77
peer_qpn=0x500
psn=4000
dev=vroce0

if [ "$VROCE_ROLE" = b ]; then
	tap_plan 4
	ip addr add $peer_ip/24 dev eth0
	tap_result $? "second address $peer_ip on eth0"
	vm_send peer-addr up
	line=$(vm_recv victim 120)
	[ -n "$line" ]
	tap_result $? "the victim's QPs: $line"
	python3 "$crafter" $peer_ip "$VROCE_PEER_IP4" $spoof $peer_qpn $psn \
		"$line" >/tmp/crafter.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/crafter.out
	vm_send crafted "$(grep -E '^(expect|want) ' /tmp/crafter.out | tr '\n' ';')"
	tap_result $rc "the crafter's checks of the answers passed"
	live=$(echo "$line" | awk '{ print $2 }')
	python3 "$crafter" reads $peer_ip "$VROCE_PEER_IP4" "$live" 4 \
		>/tmp/reads.out 2>&1 &
	pid=$!
	wait_for 60 grep -q listening /tmp/reads.out
	vm_send reads-ready 1
	wait $pid
	tap_result $? "READs from a QP with max_rd_atomic 1 came one at a time: $(grep -v listening /tmp/reads.out | tr "\n" " ")"
	vm_barrier end 120
	tap_done
fi

tap_plan 14
vroce_up
gid=$(dev_gid "$VROCE_SELF_IP4" 10)
# The victim's QPs resolve $peer_ip when they connect: B must have it.
# (On the debug kernel B comes up that much later than A.)
vm_recv peer-addr 300 >/dev/null
coproc HP { "$prog" -d $dev -g "$gid" -a $peer_ip -q $peer_qpn -p $psn 2>&1; }
# Bash unsets HP_PID once it reaps the coprocess: keep the PID for wait.
# shellcheck disable=SC2153 # coproc sets HP_PID
hp_pid=$HP_PID
read -r -t 20 -u "${HP[0]}" line
case $line in
live*) tap_ok "hostile_peer: $line" ;;
*) tap_bail "hostile_peer did not start: $line" ;;
esac

counters /tmp/hw.0
vm_send victim "$line"
crafted=$(vm_recv crafted 120)
[ -n "$crafted" ]
tap_result $? "the crafter finished: $crafted"
counters /tmp/hw.1

# ask CMD: the victim's one-line answer to CMD in $ans.
ask() {
	echo "$1" >&"${HP[1]}"
	read -r -t 20 -u "${HP[0]}" ans
}

# The counters: each one the crafter names moved by what it says, and
# nothing else but the packet counters that follow from it.
expect=$(printf '%s\n' "$crafted" | tr ';' '\n' | sed -n 's/^expect //p')
bad=
for kv in $expect rnr_nak_sent=0 retransmits=0 retry_timeouts=0 \
	rd_atomic_exceeded=0; do
	name=${kv%%=*}
	want=${kv#*=}
	got=$(($(counter /tmp/hw.1 "$name") - $(counter /tmp/hw.0 "$name")))
	tap_diag "$name +$got (want +$want)"
	[ "$got" = "$want" ] || bad="$bad $name:+$got"
done
[ -z "$bad" ] && [ -n "$expect" ]
tap_result $? "every packet accounted for in the counters${bad:+ (wrong:$bad)}"

ask mr
[ "$ans" = "mr low=ok mr2=ok" ]
tap_result $? "no byte of either MR changed where nothing may write ($ans)"

ask states
want="states live=3 sac=6,6,6,6,6,6,6,6,6,6 rtr=2 init=1 reset=0 uc=3 ud=3 xtgt=6"
[ "$ans" = "$want" ]
tap_result $? "QP states: sacrificed ones in ERR, the others as they were ($ans)"

echo recv >&"${HP[1]}"
recvs=
while read -r -t 20 -u "${HP[0]}" ans && [ "$ans" != end ]; do
	tap_diag "$ans"
	recvs="$recvs $ans"
done
want=$(printf '%s\n' "$crafted" | tr ';' '\n' | sed -n 's/^want //p')
[ -n "$want" ]
tap_result $? "the crafter says what must have been received: $want"
n=0
for w in $want; do
	q=${w%%=*}
	len=${w#*=}
	len=${len%%:*}
	fnv=${w##*:}
	case $recvs in
	*"recv qp=$q status=0 len=$len fnv=$fnv"*) n=$((n + 1)) ;;
	*) tap_diag "no receive of $len bytes (FNV $fnv) on QP $q" ;;
	esac
done
[ "$n" = 4 ]
tap_result $? "UD, UC, RC and XRC receives: right lengths and bytes ($n of 4)"
count=$(printf '%s\n' "$recvs" | grep -o "recv qp=" | wc -l)
[ "$count" = 4 ]
tap_result $? "no other receive completed ($count in all)"

vm_recv reads-ready 60 >/dev/null
echo "reads 4" >&"${HP[1]}"
read -r -t 40 -u "${HP[0]}" ans
[ "$ans" = "reads done=4 ok=4" ]
tap_result $? "four RDMA READs, one outstanding at a time: all right ($ans)"
counters /tmp/hw.2
rt=$(($(counter /tmp/hw.2 retransmits) - $(counter /tmp/hw.1 retransmits)))
to=$(($(counter /tmp/hw.2 retry_timeouts) - $(counter /tmp/hw.1 retry_timeouts)))
[ "$rt" = 0 ] && [ "$to" = 0 ]
tap_result $? "the READs waited for their answers, not for a timer (retransmits +$rt, retry_timeouts +$to)"

ask quit
wait "$hp_pid"
tap_result $? "hostile_peer exits cleanly"
vm_barrier end 120
rdma link del $dev
tap_result $? "rdma link del $dev"
modprobe -r vroce
tap_result $? "the module unloads: no QP, MR or packet reference left"
if dmesg | grep -q "WARNING\|BUG\|Oops"; then
	tap_fail "no kernel warning"
else
	tap_ok "no kernel warning"
fi
tap_done
