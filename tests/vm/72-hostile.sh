#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A hostile provider scribbles garbage into its own mapped rings and
# indices (tests/progs/hostile.c). It gets errors on its own objects at
# most; the kernel does not oops (the harness fails the test on any oops,
# BUG or WARNING), and the next process finds the module working.
#
# vm: timeout=600

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

progs=$VROCE_TOP/build/progs
tap_plan 4
rdma_add vroce0 eth0 && wait_for 10 vm_gid_index vroce0 "$VROCE_SELF_IP4"
tap_result $? "vroce0 on eth0 ($rdma_err)"
# The kernel's MAD layer holds a CQ, an MR, a PD and QP1 of its own.
objs=/sys/class/infiniband/vroce0/objects
before=$(cat "$objs"/* | tr -d '\n')
run_timeout 300 "$progs/hostile" vroce0 30 >/tmp/hostile.log 2>&1
tap_result $? "the hostile process ran to its end"
sed 's/^/#   /' /tmp/hostile.log
left=$(cat "$objs"/* | tr -d '\n')
[ "$left" = "$before" ]
tap_result $? "nothing left behind (object counts: $left, before: $before)"
run_timeout 300 "$progs/qp_state" vroce0 >/tmp/next.log 2>&1
tap_result $? "the next process works (qp_state)"
grep -q "^not ok" /tmp/next.log && sed 's/^/#   /' /tmp/next.log
tap_done
