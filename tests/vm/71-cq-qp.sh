#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# CQs and QPs (tests/progs/cq_qp.c): limits and errnos, flushing on ERR,
# completion events, resize_cq, create/destroy cycles; afterwards no
# object is left, by the module's own counts and by rdma resource show.
#
# vm: timeout=600

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

vroce_up
# The program's TAP comes first; its plan is printed at its end, so ours
# continues the numbering in a second stream of diagnostics.
# The kernel's MAD layer holds a PD, a CQ and QP1 on every device: the
# counts must come back to what they were before.
objs=/sys/class/infiniband/vroce0/objects
before=$(cat "$objs/pd" "$objs/cq" "$objs/qp" | tr "\n" " ")
res_before=$(rdma resource show vroce0 2>&1)
"$VROCE_TOP/build/progs/cq_qp" vroce0 10000
rc=$?
left=$(cat "$objs/pd" "$objs/cq" "$objs/qp" | tr "\n" " ")
echo "# module object counts (pd cq qp) before: $before, afterwards: $left"
[ "$left" = "$before" ] || rc=1
res=$(rdma resource show vroce0 2>&1)
echo "# rdma resource show vroce0: $res_before, afterwards: $res"
[ "$res" = "$res_before" ] || { echo "# resources left behind"; rc=1; }
exit $rc
