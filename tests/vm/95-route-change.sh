#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# An RC QP follows a route that changes under its traffic, and packets
# between two vroce devices on one host (a veth pair, as between
# containers) all arrive. vroce1 is here on veth0, vroce2 in namespace pr
# on veth1; the server's RoCE address is 192.0.2.2 (or 2001:db8:2::2) on
# veth1, reached from here by a route through a gateway.
# tests/progs/rc_stress runs its client here against a server in pr, and in
# the middle of its traffic the route is replaced:
#   1. via 198.51.100.2 (pr's own address: it works): traffic flows;
#   2. via 198.51.100.3, which no host answers: nothing reaches vroce2
#      any more, and the requester retransmits;
#   3. back via 198.51.100.2: the retransmitted requests get through
#      again, and the client ends with every message checked (a route
#      kept from before, the dead one, would end in retry exceeded).
# No UDP datagram may be dropped in pr (UdpInErrors): a batch of packets
# (kernel/gso.c) crosses a veth whole, and a wrong UDP length would have
# its receiver cut it to its first packet. Once for IPv4, once for IPv6.
#
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

stress=$VROCE_TOP/build/progs/rc_stress
work=/tmp/route-change
mkdir -p "$work"

tap_plan 17

veth_vroce1 pr 198.51.100.1 198.51.100.2
ip netns exec pr ip link set lo up &&
	ip -n pr addr add 192.0.2.2/32 dev veth1 &&
	ip -6 addr add 2001:db8:1::1/64 dev veth0 nodad &&
	ip -n pr -6 addr add 2001:db8:1::2/64 dev veth1 nodad &&
	ip -n pr -6 addr add 2001:db8:2::2/128 dev veth1 nodad &&
	ip netns exec pr rdma link add vroce2 type vroce netdev veth1
tap_result $? "vroce2 in namespace pr, the server's addresses on veth1"
wait_for 20 vm_gid_index vroce2 192.0.2.2 &&
	wait_for 20 vm_gid_index vroce2 2001:db8:2::2 &&
	wait_for 20 vm_gid_index vroce1 2001:db8:1::1
tap_result $? "vroce1 and vroce2 have the GIDs of the addresses"
vm_ib_nodes

# route_via GW: the route to the server's address of family $fam, via GW.
route_via() {
	if [ "$fam" = 4 ]; then
		ip route replace 192.0.2.2/32 via "$1" dev veth0
	else
		ip -6 route replace 2001:db8:2::2/128 via "$1" dev veth0
	fi
}

# above NAME N: vroce1's counter NAME is above N.
# shellcheck disable=SC2317  # called through wait_for
above() {
	[ "$(dev_counter vroce1 "$1")" -gt "$2" ]
}

# run FAM SELF SERVER GOOD DEAD: one client run with the route changes.
run() {
	local self=$2 server=$3 good=$4 dead=$5 port=$((18700 + $1))
	local spid cpid r0="" r1="" n0="" n1="" t0 b0 batches errs moved=0 ok=0
	fam=$1
	b0=$(dev_counter vroce1 tx_batches)
	route_via "$good"
	# The way back to vroce1 is veth1's own subnet.
	ip netns exec pr "$stress" -d vroce2 -g "$(vm_gid_index vroce2 "$server")" \
		-p "$port" -s --deadline 60 >"$work/server$fam.log" 2>&1 &
	spid=$!
	sleep 1
	# 2^18 * 4.096 us = 1.07 s a try, 8 tries: the dead route must last
	# less than about 8 s.
	"$stress" -d vroce1 -g "$(vm_gid_index vroce1 "$self")" -p "$port" \
		-n 30000 --timeout 18 --max-size 4096 --deadline 60 \
		198.51.100.2 >"$work/client$fam.log" 2>&1 &
	cpid=$!
	# 1: traffic flows along the working route.
	t0=$(dev_counter vroce1 tx_packets)
	wait_for 30 above tx_packets $((t0 + 2000))
	tap_result $? "IPv$fam: traffic flows via $good"
	# 2: the dead route, while the client still runs: nothing reaches
	# vroce2 any more, and the requester retransmits.
	if kill -0 "$cpid" 2>/dev/null && route_via "$dead"; then
		sleep 0.5
		r0=$(dev_counter vroce1 retransmits)
		n0=$(dev_counter vroce2 rx_packets)
		wait_for 8 above retransmits "$r0" && sleep 1 &&
			[ "$(dev_counter vroce2 rx_packets)" = "$n0" ] && moved=1
		r1=$(dev_counter vroce1 retransmits)
		n1=$(dev_counter vroce2 rx_packets)
	fi
	[ "$moved" = 1 ]
	tap_result $? "IPv$fam: via $dead vroce1 retransmits ($r0 -> $r1) and vroce2 receives nothing ($n0 -> $n1)"
	# 3: the working route again; the client must finish.
	route_via "$good"
	wait "$cpid" && ok=1
	[ "$ok" = 1 ]
	tap_result $? "IPv$fam: via $good again, the client ends with every message checked"
	sed 's/^/#   /' "$work/client$fam.log" | grep -E 'not ok|Bail|completed|retry' | head -n 5
	wait "$spid"
	tap_result $? "IPv$fam: the server ends with every message checked"
	errs=$(ip netns exec pr nstat -saz UdpInErrors Udp6InErrors |
		awk '$1 ~ /InErrors$/ { s += $2 } END { print s + 0 }')
	batches=$(($(dev_counter vroce1 tx_batches) - b0))
	[ "$errs" = 0 ] && [ "$batches" -gt 0 ]
	tap_result $? "IPv$fam: no UDP datagram dropped in pr ($errs UDP receive errors; vroce1 sent $batches batches)"
	sed 's/^/#   /' "$work/server$fam.log" | grep -E 'not ok|Bail|deadline' | head -n 5
	tap_diag "vroce2: $(rdma statistic show link vroce2/1 | tr -s ' \n' ' ')"
	tap_diag "vroce1: $(rdma statistic show link vroce1/1 | tr -s ' \n' ' ')"
}

run 4 198.51.100.1 192.0.2.2 198.51.100.2 198.51.100.3
run 6 2001:db8:1::1 2001:db8:2::2 2001:db8:1::2 2001:db8:1::3

ip netns exec pr rdma link del vroce2
tap_result $? "rdma link del vroce2"
rdma link del vroce1
tap_result $? "rdma link del vroce1"
rmmod vroce
tap_result $? "rmmod vroce"
tap_done
