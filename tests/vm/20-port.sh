#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The port follows its netdev: carrier gives ACTIVE/DOWN with async
# events, the netdev MTU gives the active MTU.
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

progs=$VROCE_TOP/build/progs
tap_plan 12

# veth: taking the peer down drops our carrier (NETDEV_CHANGE).
ip link add veth0 type veth peer name veth1 &&
	ip link set veth0 up && ip link set veth1 up
rdma_add vroce0 veth0
tap_result $? "vroce0 on veth0 ($rdma_err)"
tap_check "port ACTIVE with carrier" vm_wait_port_active vroce0 10

events=/tmp/events.log
"$progs/async_wait" vroce0 port_err port_active >"$events" 2>&1 &
watcher=$!
wait_for 10 grep -q ready "$events"

ip link set veth1 down
port_down() { grep -q DOWN /sys/class/infiniband/vroce0/ports/1/state; }
tap_check "carrier off: port DOWN" wait_for 10 port_down
state=$(devinfo_field vroce0 state)
case $state in PORT_DOWN*) true ;; *) false ;; esac
tap_result $? "ibv_devinfo: $state"
tap_check "rdma link show: state DOWN" \
	sh -c "rdma link show vroce0/1 | grep -q 'state DOWN'"

ip link set veth1 up
tap_check "carrier back: port ACTIVE" vm_wait_port_active vroce0 10
wait "$watcher"
rc=$?
tap_result $rc "async events PORT_ERR then PORT_ACTIVE delivered"
[ $rc -eq 0 ] || sed 's/^/#   /' "$events"

# MTU: 1500 gives 1024, jumbo 9000 gives 4096, 1100 gives 512, and a
# change is seen at once.
check_mtu() { # NETDEV_MTU WANT
	ip link set veth0 mtu "$1"
	got=$(devinfo_field vroce0 active_mtu)
	case $got in "$2 "*) true ;; *) false ;; esac
	tap_result $? "netdev mtu $1: active_mtu $got (want $2)"
}
check_mtu 1500 1024
check_mtu 9000 4096
check_mtu 1100 512
check_mtu 1500 1024
max=$(devinfo_field vroce0 max_mtu)
case $max in "4096 "*) true ;; *) false ;; esac
tap_result $? "max_mtu $max"
tap_done
