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

rdma_add vroce0 eth0 || tap_bail "rdma link add failed: $rdma_err"
wait_for 10 vm_gid_index vroce0 "$VROCE_SELF_IP4" ||
	tap_bail "no RoCE v2 GID for $VROCE_SELF_IP4"
# The program's TAP comes first; its plan is printed at its end, so ours
# continues the numbering in a second stream of diagnostics.
"$VROCE_TOP/build/progs/cq_qp" vroce0 10000
rc=$?
objs=/sys/class/infiniband/vroce0/objects
left=$(cat "$objs/pd" "$objs/cq" "$objs/qp" | tr "\n" " ")
echo "# module object counts afterwards (pd cq qp): $left"
[ "$left" = "0 0 0 " ] || rc=1
res=$(rdma resource show vroce0 2>&1)
echo "# rdma resource show vroce0: $res"
case $res in
*"pd 0 "*"cq 0 "*"qp 0 "*) ;;
*) echo "# resources left behind"; rc=1 ;;
esac
exit $rc
