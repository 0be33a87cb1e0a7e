#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Deleting the netdev removes the vroce device on it, also while a
# process has the device open.
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

tap_plan 8

gone() { ! link_exists "$1"; }

ip link add dummy0 type dummy && ip link set dummy0 up
rdma_add vroce1 dummy0
tap_result $? "vroce1 on dummy0 ($rdma_err)"
ip link del dummy0
tap_check "ip link del dummy0 removes vroce1" wait_for 10 gone vroce1

ip link add veth0 type veth peer name veth1 && ip link set veth0 up
rdma_add vroce2 veth0
tap_result $? "vroce2 on veth0 ($rdma_err)"
hold_start vroce2
tap_result $? "a process holds vroce2 open"
ip link del veth1
tap_check "deleting the veth pair removes vroce2 despite the open context" \
	wait_for 20 gone vroce2
hold_finish
tap_result $? "the holder saw DEVICE_FATAL and failed cleanly"
tap_check "no vroce device is left" \
	sh -c "! ls /sys/class/infiniband | grep -q vroce"
tap_check "rdma resource show lists no vroce pd" \
	sh -c "! rdma resource show pd 2>/dev/null | grep -q vroce"
tap_done
