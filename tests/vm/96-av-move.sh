#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A connected QP that moves to another address of its peer (RTS -> SQD ->
# SQD with a new address vector -> RTS) sends along the new path and the
# new route, and takes its peer's packets from the new address.
# vroce1 is here on veth0 (QP a), vroce2 in namespace pr on veth1 (QP b),
# with two RoCE addresses, each reached from here through its own
# gateway, both pr's own addresses on veth1:
#   192.0.2.2 via 198.51.100.2, 192.0.2.3 via 198.51.100.4
#   (2001:db8:2::2 via 2001:db8:1::2, 2001:db8:2::3 via 2001:db8:1::4).
# tests/progs/av_move runs a round of WRITEs and READs over the first
# address, moves both QPs to the second, and then, before the second
# round, the first address leaves pr and the first gateway's neighbour
# entry here points at a MAC no one has. A QP that kept its old path, or
# a route cached for it (its neighbour is the first gateway), loses its
# packets and ends in retry exceeded; the right one loses nothing, and
# neither device retransmits. Once for IPv4, once for IPv6.
#
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

prog=$VROCE_TOP/build/progs/av_move
work=/tmp/av-move
mkdir -p "$work"

tap_plan 13

veth_vroce1 pr 198.51.100.1 198.51.100.2
ip netns exec pr ip link set lo up &&
	ip -n pr addr add 198.51.100.4/24 dev veth1 &&
	ip -n pr addr add 192.0.2.2/32 dev veth1 &&
	ip -n pr addr add 192.0.2.3/32 dev veth1 &&
	ip -6 addr add 2001:db8:1::1/64 dev veth0 nodad &&
	ip -n pr -6 addr add 2001:db8:1::2/64 dev veth1 nodad &&
	ip -n pr -6 addr add 2001:db8:1::4/64 dev veth1 nodad &&
	ip -n pr -6 addr add 2001:db8:2::2/128 dev veth1 nodad &&
	ip -n pr -6 addr add 2001:db8:2::3/128 dev veth1 nodad &&
	ip route add 192.0.2.2/32 via 198.51.100.2 dev veth0 &&
	ip route add 192.0.2.3/32 via 198.51.100.4 dev veth0 &&
	ip -6 route add 2001:db8:2::2/128 via 2001:db8:1::2 dev veth0 &&
	ip -6 route add 2001:db8:2::3/128 via 2001:db8:1::4 dev veth0 &&
	ip netns exec pr rdma link add vroce2 type vroce netdev veth1
tap_result $? "vroce2 in namespace pr, two addresses behind two gateways"
wait_for 20 vm_gid_index vroce2 192.0.2.3 &&
	wait_for 20 vm_gid_index vroce2 2001:db8:2::3 &&
	wait_for 20 vm_gid_index vroce1 2001:db8:1::1
tap_result $? "vroce1 and vroce2 have the GIDs of the addresses"
vm_ib_nodes

# run FAM SELF FIRST SECOND GW1 GW2: one av_move run; then FIRST leaves pr
# and GW1's neighbour entry here goes to a MAC no one has. GW2's entry is
# resolved first: a burst into an unresolved one may overflow its queue,
# which would be a loss, not a wrong route.
run() {
	local fam=$1 self=$2 first=$3 second=$4 gw1=$5 gw2=$6 ip=ip v
	local r1 r2 t1 t2 cmd
	[ "$fam" = 6 ] && ip="ip -6"
	busybox ping -"$fam" -c 1 -W 2 "$gw2" >/dev/null 2>&1
	r1=$(dev_counter vroce1 retransmits)
	r2=$(dev_counter vroce2 retransmits)
	t1=$(dev_counter vroce1 retry_timeouts)
	t2=$(dev_counter vroce2 retry_timeouts)
	cmd="$ip neigh replace $gw1 lladdr 02:00:5e:00:53:99 nud permanent dev veth0 &&"
	cmd="$cmd ip -n pr addr del $first/$([ "$fam" = 4 ] && echo 32 || echo 128) dev veth1"
	timeout 90 "$prog" -a vroce1 -g "$(vm_gid_index vroce1 "$self")" \
		-b vroce2 -1 "$(vm_gid_index vroce2 "$first")" \
		-2 "$(vm_gid_index vroce2 "$second")" -x "$cmd" \
		>"$work/run$fam.log" 2>&1
	v=$?
	sed 's/^/#   /' "$work/run$fam.log"
	[ "$v" = 0 ]
	tap_result $? "IPv$fam: both QPs move from $first to $second; the second round goes the new way, data checked"
	r1=$(($(dev_counter vroce1 retransmits) - r1))
	r2=$(($(dev_counter vroce2 retransmits) - r2))
	t1=$(($(dev_counter vroce1 retry_timeouts) - t1))
	t2=$(($(dev_counter vroce2 retry_timeouts) - t2))
	[ "$r1" = 0 ] && [ "$r2" = 0 ]
	tap_result $? "IPv$fam: no retransmit on either device ($r1 and $r2)"
	[ "$t1" = 0 ] && [ "$t2" = 0 ]
	tap_result $? "IPv$fam: no retry timeout on either device ($t1 and $t2)"
}

run 4 198.51.100.1 192.0.2.2 192.0.2.3 198.51.100.2 198.51.100.4
# The IPv6 run's first gateway is another address: IPv4's poisoned
# neighbour entry does not touch it.
run 6 2001:db8:1::1 2001:db8:2::2 2001:db8:2::3 2001:db8:1::2 2001:db8:1::4

ip netns exec pr rdma link del vroce2
tap_result $? "rdma link del vroce2"
rdma link del vroce1
tap_result $? "rdma link del vroce1"
rmmod vroce
tap_result $? "rmmod vroce"
tap_done
