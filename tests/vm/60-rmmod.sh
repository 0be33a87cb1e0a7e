#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# rmmod while a process holds an open context: the process is
# disassociated (DEVICE_FATAL, its next verb fails cleanly), rmmod
# completes, nothing hangs, and the module loads and works again.
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

progs=$VROCE_TOP/build/progs
tap_plan 9

rdma_add vroce0 eth0
tap_result $? "vroce0 on eth0 ($rdma_err)"
ip link add dummy0 type dummy && ip link set dummy0 up
rdma_add vroce1 dummy0
tap_result $? "vroce1 on dummy0 ($rdma_err)"

hold_start vroce0
tap_result $? "a process holds vroce0 open with a PD"

run_timeout 60 rmmod vroce
tap_result $? "rmmod vroce completes with the context open"
tap_check "no vroce device is left" \
	sh -c "! ls /sys/class/infiniband | grep -q vroce"
hold_finish
tap_result $? "the holder saw DEVICE_FATAL, failed cleanly, closed"

tap_check "modprobe vroce again" modprobe vroce
rdma_add vroce0 eth0
tap_result $? "vroce0 again ($rdma_err)"
tap_check "PDs work after the reload" "$progs/verbs_basic" vroce0
tap_done
