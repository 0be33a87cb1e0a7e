#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# P_Key check on receive (IBTA 10.9.3): a packet reaches a QP only if its
# BTH P_Key matches the port's P_Key (0xffff, the default partition, full
# member): same partition, at least one side a full member. UD SENDs
# crafted by tests/vm/_icrc.py (right ICRC and Q_Key) go from a network
# namespace to QP1 of vroce1: with P_Key 0xffff and 0x7fff (a limited
# member of the default partition) they are received (rx_packets), with
# another partition (0x1234, full 0x9234), 0xfffe or the invalid 0x0000
# they are dropped before any QP sees them (rx_dropped, not rx_packets).
#
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

icrc_py=$VROCE_TOP/tests/vm/_icrc.py
count=6
gsi_qkey=0x80010000

tap_plan 8

veth_ns pk
tap_result $? "a veth to a network namespace"
rdma_add vroce1 veth0 && vm_wait_port_active vroce1 10
tap_result $? "vroce1 on veth0 ($rdma_err)"

# inject PKEY WANT: COUNT UD SENDs with P_Key PKEY to QP1; WANT is
# "received" or "dropped".
inject() {
	local pkey=$1 want=$2 rx0 drop0 rx drop
	rx0=$(dev_counter vroce1 rx_packets)
	drop0=$(dev_counter vroce1 rx_dropped)
	ip netns exec pk python3 "$icrc_py" ud 198.51.100.2 198.51.100.1 \
		1 "$gsi_qkey" "$pkey" "$count"
	# shellcheck disable=SC2317  # called through wait_for
	arrived() {
		[ $(($(dev_counter vroce1 rx_packets) - rx0 +
			$(dev_counter vroce1 rx_dropped) - drop0)) -ge "$count" ]
	}
	wait_for 10 arrived
	rx=$(($(dev_counter vroce1 rx_packets) - rx0))
	drop=$(($(dev_counter vroce1 rx_dropped) - drop0))
	if [ "$want" = received ]; then
		[ "$rx" = "$count" ] && [ "$drop" = 0 ]
	else
		[ "$rx" = 0 ] && [ "$drop" = "$count" ]
	fi
	tap_result $? "P_Key $pkey: $count packets $want (rx_packets +$rx, rx_dropped +$drop)"
}

inject 0xffff received
inject 0x7fff received
inject 0x1234 dropped
inject 0x9234 dropped
inject 0xfffe dropped
inject 0x0000 dropped
rdma link del vroce1
tap_done
