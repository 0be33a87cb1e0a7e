#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A duplicate RDMA READ is checked as a first one is: the QP's access
# flags, the R_Key, its bounds. The requester is tests/vm/_rdreq.py, which
# crafts READ requests in a network namespace behind a veth; the responder
# is tests/progs/dup_read.c on vroce1 (on the veth), an RC QP with remote
# read connected to the script's made-up QP. A READ of 4 KiB gets its 4
# responses; the same READ again (a duplicate) gets them again, and so
# does a duplicate from its third PSN on (2 responses, the first a
# FIRST). Then dup_read takes remote read away from the QP
# (ibv_modify_qp(IBV_QP_ACCESS_FLAGS)), and the duplicate that got data
# before gets none but an Invalid Request NAK, as a first READ would, and
# the QP goes to the error state. On fresh QPs, after a first READ, a
# duplicate with a wrong R_Key or reaching past the MR's end gets a Remote
# Access NAK and no data. Last, a READ sent while the responses of the one
# before are still going out, past max_dest_rd_atomic (1), gets an
# Invalid Request NAK, counted in rd_atomic_exceeded, and the QP goes to
# the error state.
#
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

rdreq=$VROCE_TOP/tests/vm/_rdreq.py
prog=$VROCE_TOP/build/progs/dup_read
src=198.51.100.2
dst=198.51.100.1
peer_qpn=0x123
psn=1000

tap_plan 19

veth_ns rr $dst $src
tap_result $? "a veth to a network namespace"
rdma_add vroce1 veth0 && vm_wait_port_active vroce1 10
tap_result $? "vroce1 on veth0 ($rdma_err)"
vm_ib_nodes
gid=$(dev=vroce1 dev_gid $dst 10)
tap_result $? "RoCE v2 GID of $dst: index $gid"

coproc DR { "$prog" -d vroce1 -g "$gid" -a $src -q $peer_qpn -p $psn 2>&1; }
read -r -t 20 -u "${DR[0]}" w1 qpn w2 base w3 rkey
[ "$w1 $w2 $w3" = "qpn va rkey" ]
tap_result $? "dup_read: QP $qpn, 1 MiB at $base, rkey $rkey"

# req DESC WANT PSN:OFF:LEN...: READ requests from the namespace; the
# summary of what came back must match the pattern WANT.
req() {
	local desc=$1 want=$2 out
	shift 2
	out=$(ip netns exec rr python3 "$rdreq" read $src $dst "$qpn" 3 \
		"$base" "$rkey" "$@")
	# shellcheck disable=SC2254 # WANT is a pattern
	case $out in
	$want) tap_ok "$desc: $out" ;;
	*) tap_fail "$desc: $out (want $want)" ;;
	esac
}

req "READ of 4 KiB: 4 responses, data right" \
	"resp=4 bytes=4096 data=ok first=0x0d@$psn naks=-" $psn:0:4096
req "the same READ again (duplicate): 4 responses again" \
	"resp=4 bytes=4096 data=ok first=0x0d@$psn naks=-" $psn:0:4096
req "duplicate from its third PSN: 2 responses, the first a FIRST" \
	"resp=2 bytes=2048 data=ok first=0x0d@$((psn + 2)) naks=-" \
	$((psn + 2)):2048:2048

# ask CMD: one command to dup_read, its one-line answer in $ans.
ask() {
	echo "$1" >&"${DR[1]}"
	read -r -t 20 -u "${DR[0]}" ans
}

# qp_err: whether dup_read's QP reaches the error state (6) within 5 s.
qp_err() {
	local _
	for _ in $(seq 25); do
		ask state
		[ "$ans" = "state 6" ] && return 0
		sleep 0.2
	done
	return 1
}

ask revoke
[ "$ans" = revoked ]
tap_result $? "ibv_modify_qp(IBV_QP_ACCESS_FLAGS) takes remote read away: $ans"
req "then the duplicate READ gets no data, an Invalid Request NAK" \
	"resp=0 bytes=0 data=ok first=- naks=$psn:0x61" $psn:0:4096
qp_err
tap_result $? "and the QP goes to the error state ($ans)"

# fresh DESC OFF: a fresh QP, a READ of 4 KiB, then a duplicate of it
# with offset OFF and R_Key $rkey_dup that must get a Remote Access NAK.
fresh() {
	local desc=$1 off=$2 saved=$rkey
	ask new
	qpn=${ans#qpn }
	req "fresh QP $qpn: READ of 4 KiB" \
		"resp=4 bytes=4096 data=ok first=0x0d@$psn naks=-" $psn:0:4096
	rkey=$rkey_dup
	req "$desc: no data, a Remote Access NAK" \
		"resp=0 bytes=0 data=ok first=- naks=$psn:0x62" $psn:"$off":4096
	rkey=$saved
}

rkey_dup=$((rkey ^ 0x5a))
fresh "duplicate with a wrong R_Key" 0
rkey_dup=$rkey
fresh "duplicate past the MR's end" $(((1 << 20) - 2048))

# max_dest_rd_atomic (1 in dup_read): a READ while the responses of one
# are still being sent gets an Invalid Request NAK, counted.
ask new
qpn=${ans#qpn }
over0=$(dev_counter vroce1 rd_atomic_exceeded)
req "two READs at once (max_dest_rd_atomic 1): the second gets an Invalid Request NAK" \
	"resp=* data=ok first=0x0d@$psn naks=$((psn + 1024)):0x61" \
	$psn:0:$((1 << 20)) $((psn + 1024)):0:1024
over1=$(dev_counter vroce1 rd_atomic_exceeded)
[ $((${over1:-0} - ${over0:-0})) -eq 1 ]
tap_result $? "rd_atomic_exceeded counted it (${over0:-?} -> ${over1:-?})"
qp_err
tap_result $? "and the QP goes to the error state ($ans)"
echo quit >&"${DR[1]}"
wait "$DR_PID"
tap_result $? "dup_read exits cleanly"
if dmesg | grep -q "WARNING\|BUG"; then
	tap_fail "no kernel warning"
else
	tap_ok "no kernel warning"
fi
rdma link del vroce1
tap_done
