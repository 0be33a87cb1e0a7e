#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A NIC that keeps vroce's packets does not keep a killed process in the
# kernel. B runs the server of tests/progs/rc_stress.c, A its client with
# RDMA READs only, so B's READ responses fill B's side of the wire. Then
# B's eth0 gets a plug qdisc, which holds every packet it is given and
# frees none until it goes: like a stalled NIC, with vroce's READ
# responses (and their destructors) in it. On B:
#   - the qdisc holds READ responses of the server's QP;
#   - kill -9 of the server ends it within 10 s (destroy_qp does not wait
#     for packets in the stack; before, it waited until the NIC freed
#     them, forever on a wire that stalled);
#   - rdma link delete waits while the qdisc still holds them (the device
#     must outlive its packets' destructors), and so does an rmmod started
#     meanwhile (the module's code must stay until that removal is over);
#     both end once the qdisc is deleted, which frees them: destructors
#     that run after their QP was destroyed (the debug kernel of make
#     check-debug watches those frees);
#   - vroce0 comes back and its port goes active.
# The harness checks dmesg for oopses and warnings.
#
# vm: pair
# vm: timeout=600

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

stress=$VROCE_TOP/build/progs/rc_stress
port=18690

# shellcheck disable=SC2317  # called through wait_for
gone() { ! kill -0 "$1" 2>/dev/null; }

# READ responses of vroce0's QPs below the netdev now.
read_in_stack() {
	rdma -dd resource show qp link vroce0/1 2>/dev/null | awk '
		{ for (i = 1; i < NF; i++)
			if ($i == "drv_read_resp_in_stack") n += $(i + 1) }
		END { print n + 0 }'
}

kind_dev vroce || tap_bail "cannot set up vroce on eth0"
vm_ib_nodes
tap_check "vroce0 port active" vm_wait_port_active vroce0 30
tap_check "rc_stress is built" test -x "$stress"
gid=$(dev_gid "$VROCE_SELF_IP4" 20)

if [ "$VROCE_ROLE" = b ]; then
	"$stress" -d vroce0 -g "$gid" -p "$port" -s --deadline "$(vm_scaled 200)" \
		>/tmp/stall-server.log 2>&1 &
	pid=$!
	wait_for 15 grep -q listening /tmp/stall-server.log
	vm_send up "$?"
	vm_recv go 60 >/dev/null
	tap_check "eth0 gets a plug qdisc, which holds every packet" \
		tc qdisc replace dev eth0 root plug limit 100000000
	held=0
	for _ in $(seq 1 100); do
		held=$(read_in_stack)
		[ "$held" -gt 0 ] && break
		sleep 0.2
	done
	[ "$held" -gt 0 ]
	tap_result $? "READ responses held below the netdev: $held"
	[ "$held" -gt 0 ] || rdma -dd resource show qp link vroce0/1 2>&1 | sed 's/^/#   /'
	tap_check "the server still runs" kill -0 "$pid"
	t0=$(date +%s)
	kill -9 "$pid"
	wait_for 10 gone "$pid"
	rc=$?
	tap_result $rc "the killed server is gone in $(($(date +%s) - t0)) s, its packets still held"
	if [ "$rc" -ne 0 ]; then
		sed 's/^/#   stack: /' "/proc/$pid/stack" 2>/dev/null
		tc qdisc del dev eth0 root
	fi
	{ wait "$pid"; } 2>/dev/null
	rdma link delete vroce0 &
	del=$!
	sleep 3
	kill -0 "$del" 2>/dev/null
	tap_result $? "rdma link delete waits while the qdisc holds the packets"
	# rmmod meanwhile waits for that removal: the module's code must stay
	# until the removal is over.
	rmmod vroce 2>/tmp/stall-rmmod.log &
	rmm=$!
	sleep 3
	kill -0 "$rmm" 2>/dev/null
	tap_result $? "rmmod vroce waits for the removal too"
	tc qdisc del dev eth0 root 2>/dev/null
	wait_for 30 gone "$del"
	tap_result $? "rdma link delete ends once the qdisc has freed them"
	wait "$del"
	tap_result $? "rdma link delete succeeds"
	wait_for 30 gone "$rmm"
	wait "$rmm"
	tap_result $? "rmmod vroce succeeds once it is over $(cat /tmp/stall-rmmod.log)"
	tap_check "vroce loaded again" modprobe vroce
	tap_check "vroce0 added again" rdma link add vroce0 type vroce netdev eth0
	vm_ib_nodes
	tap_check "vroce0 port active again" vm_wait_port_active vroce0 30
	vm_send finished 0
else
	[ "$(vm_recv up 60)" = 0 ]
	tap_result $? "the server listens"
	# A long retry timeout (17 s), so that the client, and with it the
	# server, does not give up while B holds its packets.
	"$stress" -d vroce0 -g "$gid" -p "$port" -n 1000000 --ops read \
		--max-size 16384 --timeout 22 --deadline "$(vm_scaled 150)" \
		"$VROCE_PEER_IP4" >/tmp/stall-client.log 2>&1 &
	pid=$!
	sleep 3
	kill -0 "$pid" 2>/dev/null
	tap_result $? "READ traffic runs"
	vm_send go 0
	vm_recv finished 200 >/dev/null
	kill -9 "$pid" 2>/dev/null
	{ wait "$pid"; } 2>/dev/null
fi
tap_done
