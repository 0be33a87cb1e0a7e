#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# UD multicast across the two-VM wire, A sending, B receiving:
#   - an IPv4 group with rdma_cm (librdmacm's mckey, which joins with
#     rdma_join_multicast() and attaches its QPs with ibv_attach_mcast());
#   - an IPv6 group with the verbs alone (tests/progs/mcast_ud.c: rdma_cm
#     joins no IPv6 group on RoCE v2), where B is vroce (rdma_rxe makes
#     the netdev join no IPv6 group, so the IP stack drops its datagrams);
# and in each:
#   - B receives with two QPs attached to the group, each of which must
#     get every datagram A sends, right;
#   - where A is vroce, a receiver on A itself gets them too (the IP
#     stack loops a group's datagrams back to a member host);
#   - the groups show up in the netdevs' IGMP and MLD memberships while
#     joined, and are gone after;
#   - vroce counts each datagram once, however many QPs take it:
#     mcast_tx_packets on A, mcast_rx_packets on B (and on A, looped).
# Which RDMA device each side uses comes from VROCE_MC_A and VROCE_MC_B
# (vroce or rxe, default vroce); 76-mcast-*.sh set them.
#
# vm: pair
# vm: install=1
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

mcud=$VROCE_TOP/build/progs/mcast_ud
group4=239.1.2.3
group6=ff0e::1:2:3
count=20

pair_kind VROCE_MC vroce
peer_kind=${VROCE_MC_A:-vroce}
[ "$VROCE_ROLE" = a ] && peer_kind=${VROCE_MC_B:-vroce}
modprobe rdma_ucm
kind_dev "$kind" || tap_bail "cannot create the $kind device"
vm_ib_nodes
vm_wait_port_active "$dev" 30 || tap_bail "$dev did not come up"
dev_gid "$VROCE_SELF_IP4" 10 >/dev/null || tap_bail "no IPv4 GID on $dev"
gid6=$(dev_gid "$VROCE_SELF_IP6" 15) || tap_bail "no IPv6 GID on $dev"

# receive NAME FAMILY GROUP N: N QPs join GROUP and wait for $count
# datagrams each, in the background ($rpid); succeeds once every QP has
# joined and waits. Line-buffered: mckey prints its progress to a file.
receive() {
	if [ "$2" = ipv4 ]; then
		stdbuf -oL mckey -m "$3" -b "$VROCE_SELF_IP4" -c "$4" -C $count \
			>"/tmp/mc.$1.log" 2>&1 &
		rpid=$!
		wait_for 60 grep -q "receiving data transfers" "/tmp/mc.$1.log"
	else
		"$mcud" -d "$dev" -g "$gid6" -m "$3" -r "$4" -n $count -t 60 \
			>"/tmp/mc.$1.log" 2>&1 &
		rpid=$!
		wait_for 60 grep -q "^ready" "/tmp/mc.$1.log"
	fi
}

# send FAMILY GROUP: $count datagrams to GROUP.
send() {
	if [ "$1" = ipv4 ]; then
		mckey -m "$2" -b "$VROCE_SELF_IP4" -s -C $count
	else
		"$mcud" -d "$dev" -g "$gid6" -m "$2" -s -n $count
	fi >"/tmp/mc.s$1.log" 2>&1 || { sed 's/^/#   /' "/tmp/mc.s$1.log"; return 1; }
}

# received NAME: the receiver got every datagram and exited 0.
received() {
	local rc=0
	wait_for 90 sh -c "! kill -0 $rpid 2>/dev/null" || {
		kill "$rpid" 2>/dev/null
		rc=1
	}
	wait "$rpid" || rc=1
	[ "$rc" -eq 0 ] || sed 's/^/#   /' "/tmp/mc.$1.log"
	return $rc
}

# joined GROUP: the netdev is a member of GROUP (IGMP or MLD).
joined() {
	ip maddr show dev eth0 |
		awk -v g="$1" '$1 ~ /^inet/ && $2 == g { f = 1 } END { exit !f }'
}

# moved NAME: by how much counter NAME moved since the run began.
moved() {
	echo $(($(counter /tmp/mc.c1 "$1") - $(counter /tmp/mc.c0 "$1")))
}

# one FAMILY GROUP: one run over GROUP (5 TAP lines on B, 3 on A; with
# vroce 1 more on B, 3 more on A).
one() {
	local fam=$1 group=$2 tx rx
	[ "$kind" = vroce ] && counters /tmp/mc.c0
	if [ "$VROCE_ROLE" = b ]; then
		receive "b$fam" "$fam" "$group" 2
		tap_result $? "$fam: two QPs of $dev joined $group"
		joined "$group"
		tap_result $? "$fam: eth0 is a member of $group"
		vm_send "ready$fam" 1
		received "b$fam"
		tap_result $? "$fam: each QP received the $count datagrams A sent"
	else
		if [ "$kind" = vroce ]; then
			receive "a$fam" "$fam" "$group" 1
			tap_result $? "$fam: a QP of $dev on A joined $group"
		fi
		vm_recv "ready$fam" 120 >/dev/null
		tap_result $? "$fam: B's receivers are ready"
		send "$fam" "$group"
		tap_result $? "$fam: sent $count datagrams to $group"
		if [ "$kind" = vroce ]; then
			received "a$fam"
			tap_result $? "$fam: the receiver on A got them too (loopback)"
		fi
	fi
	vm_barrier "done$fam" 120
	! joined "$group"
	tap_result $? "$fam: after leaving, eth0 is no member of $group"
	[ "$kind" = vroce ] || return 0
	counters /tmp/mc.c1
	tx=$(moved mcast_tx_packets)
	rx=$(moved mcast_rx_packets)
	if [ "$VROCE_ROLE" = b ]; then
		[ "$tx" = 0 ] && [ "$rx" = $count ]
	else
		[ "$tx" = $count ] && [ "$rx" = $count ]
	fi
	tap_result $? "$fam: mcast_tx_packets +$tx, mcast_rx_packets +$rx"
}

# B's side decides whether the IPv6 run happens: B must be vroce.
ipv6=yes
{ [ "$VROCE_ROLE" = b ] && [ "$kind" != vroce ]; } && ipv6=no
{ [ "$VROCE_ROLE" = a ] && [ "$peer_kind" != vroce ]; } && ipv6=no
per=4
[ "$VROCE_ROLE" = a ] && per=3
[ "$kind" = vroce ] && per=$((per + 1))
[ "$kind$VROCE_ROLE" = vroce"a" ] && per=$((per + 2))
if [ $ipv6 = yes ]; then
	tap_plan $((2 * per))
else
	tap_plan $((per + 1))
fi
tap_diag "$VROCE_ROLE: $dev ($kind), peer $peer_kind"
one ipv4 $group4
if [ $ipv6 = yes ]; then
	one ipv6 $group6
else
	tap_skip "ipv6: multicast" "B is rdma_rxe, which joins no IPv6 group"
fi
vm_barrier end 60
tap_done
