#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A NIC unplugged with vroce's packets in its ring goes, and takes vroce0
# with it. A runs the server of tests/progs/rc_stress.c, B its client
# with RDMA WRITEs. Then A's eth0 is unbound from virtio_net: A's QEMU
# stops reading the wire. B sends UDP datagrams to A (whose MAC address
# it has as a permanent neighbour) until B's QEMU, whose socket buffer
# they fill, stops taking packets from B's TX ring. vroce's retries then
# stay in that ring.
# B's eth0 is then unbound too, as a hot unplug does. virtio-net frees
# the packets left in its ring only after unregister_netdev() has
# returned, and that waits for vroce's reference on the netdev: a vroce
# that waited for its packets before it gave the netdev back hung the
# unplug for good. On B:
#   - the wire stalls, and a retry of vroce's goes to eth0's ring;
#   - the unbind ends within 60 s, and vroce0 is gone;
#   - eth0 comes back when bound again, and vroce0 goes on it again with
#     its port active.
# The harness checks dmesg for oopses and warnings, "removal waits for N
# packets" among them.
#
# vm: pair
# vm: timeout=600

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

stress=$VROCE_TOP/build/progs/rc_stress
port=18691
drv=/sys/bus/virtio/drivers/virtio_net

# shellcheck disable=SC2317  # called through wait_for
gone() { ! kill -0 "$1" 2>/dev/null; }

# shellcheck disable=SC2317  # called through wait_for
no_vroce0() { ! rdma link show 2>/dev/null | grep -q 'vroce0/'; }

# vroce sent more than $1 packets.
# shellcheck disable=SC2317  # called through wait_for
vroce_sent_more() { [ "$(dev_counter vroce0 tx_packets)" -gt "$1" ]; }

# Packets in eth0's qdisc.
qdisc_backlog() {
	tc -s qdisc show dev eth0 | awk '/backlog/ { sub(/p$/, "", $3); n += $3 }
		END { print n + 0 }'
}

# 20 UDP datagrams of 1400 bytes to A, without blocking (those that
# stay in the ring hold the socket's buffer); then whether eth0 still
# completes packets. Datagrams fill the wire until B's QEMU stalls, but
# not B's ring, where vroce's retries must go.
# shellcheck disable=SC2317  # called through wait_for
wire_full() {
	local e0
	e0=$(cat /sys/class/net/eth0/statistics/tx_packets)
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setblocking(False)
for i in range(20):
    try:
        s.sendto(bytes(1400), (sys.argv[1], 9))
    except OSError:
        pass
' "$VROCE_PEER_IP4"
	sleep 0.5
	[ "$(cat /sys/class/net/eth0/statistics/tx_packets)" -lt $((e0 + 20)) ]
}

# eth0's virtio device: unbind and bind it again.
# shellcheck disable=SC2317  # called through tap_check
nic_unbind() { echo "$1" >"$drv/unbind"; }
# shellcheck disable=SC2317  # called through tap_check
nic_bind() { echo "$1" >"$drv/bind"; }

kind_dev vroce || tap_bail "cannot set up vroce on eth0"
vm_ib_nodes
tap_check "vroce0 port active" vm_wait_port_active vroce0 30
tap_check "rc_stress is built" test -x "$stress"
gid=$(dev_gid "$VROCE_SELF_IP4" 20)
vdev=$(basename "$(readlink -f /sys/class/net/eth0/device)")
tap_check "eth0 is $vdev, bound to virtio_net" test -e "$drv/$vdev"

if [ "$VROCE_ROLE" = a ]; then
	"$stress" -d vroce0 -g "$gid" -p "$port" -s --deadline "$(vm_scaled 200)" \
		>/tmp/unplug-server.log 2>&1 &
	pid=$!
	wait_for 15 grep -q listening /tmp/unplug-server.log
	vm_send up "$?"
	vm_send mac "$(cat /sys/class/net/eth0/address)"
	[ "$(vm_recv running 60)" = 0 ]
	tap_result $? "the client runs"
	tap_check "eth0 unbound: the wire to A is deaf" nic_unbind "$vdev"
	vm_send deaf 0
	vm_recv finished 200 >/dev/null
	kill -9 "$pid" 2>/dev/null
	{ wait "$pid"; } 2>/dev/null
	tap_check "eth0's device binds again" nic_bind "$vdev"
else
	[ "$(vm_recv up 60)" = 0 ]
	tap_result $? "the server listens"
	tap_check "A's MAC address is a permanent neighbour" \
		ip neigh replace "$VROCE_PEER_IP4" dev eth0 nud permanent \
		lladdr "$(vm_recv mac 10)"
	# Retries every 4 s; the client gives up after seven.
	"$stress" -d vroce0 -g "$gid" -p "$port" -n 1000000 --ops write \
		--max-size 16384 --timeout 20 --deadline "$(vm_scaled 150)" \
		"$VROCE_PEER_IP4" >/tmp/unplug-client.log 2>&1 &
	pid=$!
	sleep 3
	kill -0 "$pid" 2>/dev/null
	rc=$?
	tap_result $rc "WRITE traffic runs"
	vm_send running "$rc"
	vm_recv deaf 60 >/dev/null
	tap_check "UDP datagrams fill the deaf wire" wait_for 60 wire_full
	e1=$(cat /sys/class/net/eth0/statistics/tx_packets)
	v1=$(dev_counter vroce0 tx_packets)
	tap_check "vroce retries on the stalled wire" wait_for 40 vroce_sent_more "$v1"
	e2=$(cat /sys/class/net/eth0/statistics/tx_packets)
	q=$(qdisc_backlog)
	[ "$e2" = "$e1" ] && [ "$q" = 0 ]
	tap_result $? "the retry is in eth0's ring: eth0 completed $((e2 - e1)) packets since, its qdisc holds $q"
	t0=$(date +%s)
	nic_unbind "$vdev" &
	unb=$!
	wait_for 60 gone "$unb"
	rc=$?
	tap_result $rc "eth0's unbind ends, in $(($(date +%s) - t0)) s"
	if [ "$rc" -ne 0 ]; then
		for t in /proc/[0-9]*; do
			grep -q 'vroce\|netdev_wait\|unregister' "$t/stack" 2>/dev/null &&
				sed "s|^|#   ${t#/proc/}: |" "$t/stack"
		done
		dmesg | tail -20 | sed 's/^/#   /'
	fi
	tap_check "vroce0 is gone with eth0" wait_for 30 no_vroce0
	kill -9 "$pid" 2>/dev/null
	wait_for 10 gone "$pid"
	tap_result $? "the client is gone"
	{ wait "$pid"; } 2>/dev/null
	tap_check "eth0's device binds again" nic_bind "$vdev"
	tap_check "eth0 is back" wait_for 30 test -d /sys/class/net/eth0
	tap_check "eth0 up" ip link set eth0 up
	tap_check "vroce0 added again" rdma link add vroce0 type vroce netdev eth0
	vm_ib_nodes
	tap_check "vroce0 port active again" vm_wait_port_active vroce0 30
	vm_send finished 0
fi
tap_done
