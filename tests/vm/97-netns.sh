#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Many hosts in one VM, as WireGuard's netns.sh builds them: eight network
# namespaces ns0..ns7, each with a veth whose peer is on one bridge in the
# VM's own namespace, 198.51.100.(I+1)/24 and 2001:db8:8::(I+1)/64 on
# ns I's veth, and a vroce device on each veth (vrocensI, made by
# "rdma link add" run inside the namespace). vroce opens its UDP port
# 4791 in each namespace that has a device, and sends in the netdev's
# namespace.
#
# Then every pair of hosts (28 of them) runs ibv_rc_pingpong -c (data
# checked) between its two namespaces, the out-of-band TCP exchange in
# the namespaces too (over IPv4): 7 rounds of 4 pairs at once (a round-robin
# tournament), the even rounds over the IPv4 GIDs, the odd ones over
# IPv6. Afterwards each device has sent and received, with no retransmit
# or timeout; deleting a namespace deletes its veth and so its vroce
# device, and the rest go with "rdma link delete"; the kernel log is
# clean.
#
# vm: timeout=600
# vm: install=1

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

nodes=8
work=/tmp/netns
mkdir -p "$work"
tap_plan $((1 + nodes + nodes * (nodes - 1) / 2 + nodes + 4))

ip4() { echo "198.51.100.$(($1 + 1))"; }
ip6() { echo "2001:db8:8::$(($1 + 1))"; }
in_ns() {
	local ns=$1
	shift
	ip netns exec "ns$ns" "$@"
}

# topology: the bridge, and for each node its namespace and veth pair
# (vethI in nsI, pI on the bridge), addresses without DAD.
topology() {
	local i
	ip link add br0 type bridge && ip link set br0 up || return 1
	for ((i = 0; i < nodes; i++)); do
		ip netns add "ns$i" &&
			ip link add "p$i" type veth peer name "veth$i" netns "ns$i" &&
			ip link set "p$i" master br0 &&
			ip link set "p$i" up &&
			in_ns "$i" ip link set lo up &&
			in_ns "$i" ip addr add "$(ip4 "$i")/24" dev "veth$i" &&
			in_ns "$i" ip -6 addr add "$(ip6 "$i")/64" dev "veth$i" nodad &&
			in_ns "$i" ip link set "veth$i" up || return 1
	done
}

# node_dev I: vrocensI on vethI, added from inside nsI; its port becomes
# active and gets the RoCE v2 GIDs of both addresses (indexes into
# gid4[I], gid6[I]).
declare -a gid4 gid6
node_dev() {
	local d=vrocens$1
	in_ns "$1" rdma link add "$d" type vroce netdev "veth$1" || return 1
	vm_wait_port_active "$d" 30 || { echo "$d: port not active"; return 1; }
	if ! wait_for 20 vm_gid_index "$d" "$(ip4 "$1")" ||
		! wait_for 20 vm_gid_index "$d" "$(ip6 "$1")"; then
		echo "$d: no GIDs of $(ip4 "$1"), $(ip6 "$1")"
		return 1
	fi
	gid4[$1]=$(vm_gid_index "$d" "$(ip4 "$1")")
	gid6[$1]=$(vm_gid_index "$d" "$(ip6 "$1")")
}

t0=$SECONDS
if ! topology >"$work/topo.log" 2>&1; then
	sed 's/^/#   /' "$work/topo.log"
	tap_bail "no topology"
fi
tap_ok "$nodes namespaces on one bridge, veths up with $(ip4 0)/24 ... and $(ip6 0)/64 ..."
for ((i = 0; i < nodes; i++)); do
	if ! node_dev "$i" >"$work/dev.log" 2>&1; then
		sed 's/^/#   /' "$work/dev.log"
		tap_bail "no device vrocens$i in ns$i"
	fi
	tap_ok "vrocens$i on veth$i in ns$i: port active, GIDs ${gid4[i]} (IPv4) and ${gid6[i]} (IPv6)"
done
tap_diag "setup: $((SECONDS - t0)) s"

# pingpong I J FAM PORT: server in nsJ, client in nsI, over the GIDs of
# family FAM; a TAP line when both are done. Output in $work/pp.I.J.
pingpong() {
	local i=$1 j=$2 fam=$3 port=$4 gi gj dst s c out=$work/pp.$1.$2
	# The out-of-band exchange goes over IPv4 either way: the server
	# listens on the first address getaddrinfo gives it, an IPv4 one.
	dst=$(ip4 "$j")
	if [ "$fam" = 4 ]; then
		gi=${gid4[i]} gj=${gid4[j]}
	else
		gi=${gid6[i]} gj=${gid6[j]}
	fi
	in_ns "$j" timeout "$(vm_scaled 60)" ibv_rc_pingpong -d "vrocens$j" -g "$gj" -c \
		-s 4096 -n 50 -p "$port" >"$out.s" 2>&1 &
	s=$!
	sleep 1
	in_ns "$i" timeout "$(vm_scaled 60)" ibv_rc_pingpong -d "vrocens$i" -g "$gi" -c \
		-s 4096 -n 50 -p "$port" "$dst" >"$out.c" 2>&1
	c=$?
	wait "$s"
	s=$?
	echo "$c $s" >"$out.rc"
}

# Round-robin tournament (the circle method): in round R node 7 meets R,
# and (R + K) meets (R - K) mod 7 for K = 1..3.
t0=$SECONDS
port=19000
for ((r = 0; r < nodes - 1; r++)); do
	fam=$((r % 2 ? 6 : 4))
	pairs=("$r $((nodes - 1))")
	for ((k = 1; k < nodes / 2; k++)); do
		pairs+=("$(((r + k) % (nodes - 1))) $(((r - k + nodes - 1) % (nodes - 1)))")
	done
	for p in "${pairs[@]}"; do
		read -r i j <<<"$p"
		port=$((port + 1))
		pingpong "$i" "$j" "$fam" "$port" &
	done
	wait
	for p in "${pairs[@]}"; do
		read -r i j <<<"$p"
		out=$work/pp.$i.$j
		read -r c s <"$out.rc"
		bytes=$(grep -h "bytes in" "$out.c" | head -n 1)
		[ "$c" = 0 ] && [ "$s" = 0 ] && [ -n "$bytes" ]
		rc=$?
		tap_result $rc "ns$i -> ns$j, IPv$fam: ibv_rc_pingpong -c, 50 x 4 KiB (${bytes:-no result})"
		if [ $rc -ne 0 ]; then
			tap_diag "client (status $c):"
			sed 's/^/#   /' "$out.c"
			tap_diag "server (status $s):"
			sed 's/^/#   /' "$out.s"
		fi
	done
done
tap_diag "28 pairs: $((SECONDS - t0)) s"

for ((i = 0; i < nodes; i++)); do
	dev=vrocens$i
	counters "$work/c.$i"
	tx=$(counter "$work/c.$i" tx_packets)
	rx=$(counter "$work/c.$i" rx_packets)
	rt=$(counter "$work/c.$i" retransmits)
	to=$(counter "$work/c.$i" retry_timeouts)
	[ "${tx:-0}" -ge 700 ] && [ "${rx:-0}" -ge 700 ] && [ "$rt" = 0 ] && [ "$to" = 0 ]
	tap_result $? "$dev: $tx packets sent, $rx received (700 or more), retransmits $rt, retry_timeouts $to"
done

# Each namespace with a device has vroce's port 4791, IPv4 and IPv6.
socks=0
for ((i = 0; i < nodes; i++)); do
	n=$(in_ns "$i" cat /proc/net/udp /proc/net/udp6 | awk '$2 ~ /:12B7$/' | wc -l)
	[ "$n" = 2 ] && socks=$((socks + 1))
done
[ "$socks" = "$nodes" ]
tap_result $? "UDP port 4791 open in $socks of $nodes namespaces, IPv4 and IPv6"

ip netns del ns7
wait_for 30 test ! -e /sys/class/infiniband/vrocens7
tap_result $? "ip netns del ns7: veth7 and vrocens7 gone"

rc=0
for ((i = 0; i < nodes - 1; i++)); do
	rdma link delete "vrocens$i" || rc=1
	ip netns del "ns$i" || rc=1
done
ip link del br0 || rc=1
tap_result $rc "rdma link delete vrocens0..6, namespaces and bridge removed"

bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection fault|Call Trace|refcount_t:|list_(add|del) corruption|UBSAN|KASAN|hung_task|blocked for more than|destroy waits|removal waits for|unregister_netdevice: waiting')
[ -z "$bad" ]
tap_result $? "kernel log: no WARNING, BUG, oops, hung task or netdev leak"
[ -z "$bad" ] || printf '%s\n' "$bad" | head -n 40 | sed 's/^/#   /'
tap_done
