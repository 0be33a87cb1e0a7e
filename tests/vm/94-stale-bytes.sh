#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# No stale bytes in a packet: kernel/txbuf.c cuts the heads of outgoing
# skbs from pages it uses again without zeroing them, so every byte of a
# packet the module does not write would carry what an earlier packet
# left there. tests/progs/stale_bytes.c first sends 640 UD SENDs of 1 KiB
# of 0xa5 (more than twice the 256 KiB ring of pages of the VM's one
# CPU: one, so that the small packets come from the same ring), then UD
# SENDs of 1 to 3 bytes of 0x11, whose heads come from those pages, and
# on an RC QP small inline SENDs (heads built by packet.c); a raw socket
# in a network namespace behind a veth (_stale_bytes.py) checks each
# small SEND's ICRC, payload, pad bytes and reserved fields.
#
# vm: timeout=300
# vm: smp=1

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

prog=$VROCE_TOP/build/progs/stale_bytes
capture=$VROCE_TOP/tests/vm/_stale_bytes.py
log=/tmp/stale_bytes.log
cap=/tmp/stale_bytes.cap
stop=/tmp/stale_bytes.stop
me=198.51.100.1
peer=198.51.100.2

tap_plan 7

veth_vroce1 pk "$me" "$peer"
vm_ib_nodes

ip netns exec pk python3 "$capture" "$stop" 120 27 6 >"$cap" 2>&1 &
cpid=$!
wait_for 20 grep -q listening "$cap"
tap_result $? "the capture in the namespace listens"

"$prog" vroce1 "$peer" >"$log" 2>&1
tap_result $? "the traffic: $(grep -c '^ok' "$log") checks passed, $(grep -c '^not ok' "$log") failed"
sed 's/^/#   /' "$log"
touch "$stop"
wait "$cpid"
tap_result $? "every small SEND is clean: $(tr '\n' ';' <"$cap")"
tap_diag "vroce1: $(rdma statistic show link vroce1/1 | tr -s ' \n' ' ')"

rdma link del vroce1
tap_result $? "rdma link del vroce1"
rmmod vroce
tap_result $? "rmmod vroce"
tap_done
