#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# UD interop on the wire: vroce in VM A, stock rdma_rxe in VM B.
# ibv_ud_pingpong with byte checks (-c), over IPv4 and IPv6 GIDs, with
# either side as the server.
#
# vm: pair
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

tap_plan 6
if [ "$VROCE_ROLE" = a ]; then
	dev=vroce0
	rdma_add vroce0 eth0
else
	dev=rxe0
	rmmod vroce 2>/dev/null
	modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0 &&
		vm_ib_nodes
fi
tap_result $? "$dev on eth0"

round() { # FAMILY SERVER_ROLE
	local addr idx rc tag=$1-$2
	[ "$1" = 4 ] && addr=$VROCE_SELF_IP4 || addr=$VROCE_SELF_IP6
	idx=$(wait_for 10 vm_gid_index $dev "$addr" &&
		vm_gid_index $dev "$addr")
	local pp=(ibv_ud_pingpong -d $dev -g "$idx" -c -s 1000 -n 50)
	if [ "$VROCE_ROLE" = "$2" ]; then
		run_timeout 90 "${pp[@]}" >/tmp/pp.log 2>&1 &
		wait_for 10 sh -c "ss -Hltn 'sport = :18515' | grep -q ."
		vm_send "up-$tag" 1
		wait $!
	else
		vm_recv "up-$tag" 60 >/dev/null &&
			run_timeout 90 "${pp[@]}" "$VROCE_PEER_IP4" >/tmp/pp.log 2>&1
	fi
	rc=$?
	tap_result $rc "IPv$1, server in VM $2 ($dev here)"
	[ $rc -eq 0 ] || sed 's/^/#   /' /tmp/pp.log
	vm_barrier "done-$tag" 120
}

round 4 b
round 4 a
round 6 b
round 6 a

# B sends 10 UDP datagrams to port 4791 with no valid ICRC: A drops and
# counts each of them.
icrc_errors() {
	rdma statistic show link vroce0/1 | tr ' ' '\n' |
		grep -A1 -x rx_icrc_errors | tail -n 1
}
if [ "$VROCE_ROLE" = a ]; then
	before=$(icrc_errors)
	vm_send icrc-ready 1
	vm_recv icrc-sent 60 >/dev/null
	wait_for 10 sh -c "[ \$(rdma statistic show link vroce0/1 | tr ' ' '\n' |
		grep -A1 -x rx_icrc_errors | tail -n 1) -ge $((before + 10)) ]"
	tap_result $? "10 packets with a bad ICRC dropped and counted ($before -> $(icrc_errors))"
else
	vm_recv icrc-ready 60 >/dev/null
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(10):
    s.sendto(bytes([0x04, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0, 0, 0, i]) +
             bytes(20), (sys.argv[1], 4791))' "$VROCE_PEER_IP4"
	tap_result $? "sent 10 packets with a bad ICRC to vroce"
	vm_send icrc-sent 1
fi
tap_done
