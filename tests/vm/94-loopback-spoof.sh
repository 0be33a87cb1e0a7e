#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A QP whose peer is on the same device takes packets only from that
# device, never off the wire. Two ibv_rc_pingpong processes connect over
# vroce1 on a veth (both QPs name the veth's own address: a loopback
# pair), and are stopped. From a network namespace at the veth's far end,
# tests/vm/_roce_write.py sends the server's QP a SEND First whose IPv4
# source is the veth's own address, with a good ICRC; the IP stack lets
# it in (accept_local=1, rp_filter=0). vroce must drop it as not from the
# QP's peer (vroce_rx_drop, reason peer): it came off the wire, where the
# QP's peer is not.
#
# vm: timeout=240

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

craft=$VROCE_TOP/tests/vm/_roce_write.py
tr=/sys/kernel/tracing
me=198.51.100.1
far=198.51.100.2
port=18710

tap_plan 7

veth_ns pk "$me" "$far" &&
	sysctl -qw net.ipv4.conf.veth0.accept_local=1 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.veth0.rp_filter=0
tap_result $? "a veth to a network namespace; veth0 accepts its own address as a source"
rdma_add vroce1 veth0 && vm_wait_port_active vroce1 10 &&
	gid=$(wait_for 10 vm_gid_index vroce1 "$me" && vm_gid_index vroce1 "$me")
tap_result $? "vroce1 on veth0, GID index ${gid:-none} ($rdma_err)"
vm_ib_nodes

stdbuf -oL ibv_rc_pingpong -d vroce1 -g "$gid" -p $port -s 64 -n 100000000 \
	>/tmp/srv.log 2>&1 &
srv=$!
wait_for 10 grep -q "local address" /tmp/srv.log
stdbuf -oL ibv_rc_pingpong -d vroce1 -g "$gid" -p $port -s 64 -n 100000000 \
	127.0.0.1 >/tmp/cli.log 2>&1 &
cli=$!
wait_for 20 grep -q "remote address" /tmp/srv.log &&
	wait_for 20 grep -q "remote address" /tmp/cli.log &&
	sleep 1 && kill -STOP "$srv" "$cli"
tap_result $? "a loopback pair of ibv_rc_pingpong on vroce1, connected and stopped"
qpn=$(sed -n 's/.*local address: .*QPN \(0x[0-9a-fA-F]*\),.*/\1/p' /tmp/srv.log)
tap_diag "server: $(tr -s ' \n' ' ' </tmp/srv.log | cut -c1-400)"
tap_diag "client: $(tr -s ' \n' ' ' </tmp/cli.log | cut -c1-400)"

# trace_drops 0|1: stop or start tracing vroce_rx_drop (starting clears).
trace_drops() {
	[ "$1" = 0 ] || echo >$tr/trace || return
	echo "$1" >$tr/events/vroce/vroce_rx_drop/enable
}

[ -d $tr/events ] || mount -t tracefs nodev $tr 2>/dev/null
trace_drops 1
tap_result $? "tracing vroce_rx_drop"

[ -n "$qpn" ] &&
	ip netns exec pk python3 "$craft" send-first "$me" "$me" "$qpn" 0
tap_result $? "the far end sends QP ${qpn:-?} a SEND First from $me, off the wire"
want=" vroce_rx_drop: vroce1 qpn $((qpn)) opcode 0 psn 0 reason peer count 1\$"
wait_for 10 grep -q "$want" $tr/trace
tap_result $? "vroce drops it: not from the QP's peer"
grep ' vroce_rx_drop: ' $tr/trace | tail -n 5 | sed 's/^/#   /'
trace_drops 0

kill -KILL "$srv" "$cli" 2>/dev/null
wait "$srv" "$cli" 2>/dev/null
rdma link del vroce1 && ip netns del pk
tap_result $? "the pingpongs are gone, and so are vroce1 and the namespace"
tap_done
