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

progs=$VROCE_TOP/build/progs
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
hold=/tmp/hold.log
go=/tmp/hold.go
"$progs/async_wait" --hold vroce2 "$go" >"$hold" 2>&1 &
holder=$!
tap_check "a process holds vroce2 open" wait_for 10 grep -q ready "$hold"
ip link del veth1
tap_check "deleting the veth pair removes vroce2 despite the open context" \
	wait_for 20 gone vroce2
touch "$go"
wait "$holder"
rc=$?
tap_result $rc "the holder saw DEVICE_FATAL and failed cleanly"
sed 's/^/#   /' "$hold"
tap_check "no vroce device is left" \
	sh -c "! ls /sys/class/infiniband | grep -q vroce"
tap_check "rdma resource show lists no vroce pd" \
	sh -c "! rdma resource show pd 2>/dev/null | grep -q vroce"
tap_done
