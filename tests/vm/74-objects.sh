#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# MRs, MWs, AHs and SRQs with legal and illegal parameters, and 10,000
# create/destroy cycles of a full set of objects (tests/progs/objects.c);
# afterwards the module's own counts and rdma resource show are back at
# zero.
#
# vm: timeout=900

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

vroce_up
# The kernel's own MAD layer holds a PD, a CQ, QP1 and a DMA MR on every
# device: the counts must come back to what they were before.
before=$(cat /sys/class/infiniband/vroce0/objects/* | tr -d '\n')
res_before=$(rdma resource show vroce0 2>&1)
echo "# module object counts before (ah cq mr mw pd qp srq): $before"
"$VROCE_TOP/build/progs/objects" vroce0 10000
rc=$?
left=$(cat /sys/class/infiniband/vroce0/objects/* | tr -d '\n')
echo "# module object counts afterwards: $left"
[ "$left" = "$before" ] || rc=1
res=$(rdma resource show vroce0 2>&1)
echo "# rdma resource show vroce0: $res_before, afterwards: $res"
[ "$res" = "$res_before" ] || { echo "# resources left behind"; rc=1; }

# While a process holds objects, rdma resource show lists each kind.
if hold_start vroce0; then
	for kind in pd cq qp mr; do
		if rdma resource show "$kind" |
			grep -E "(dev|link) vroce0\b" | grep -q "comm async_wait"; then
			echo "# rdma resource show $kind lists vroce0's"
		else
			echo "# rdma resource show $kind: nothing of vroce0"
			rc=1
		fi
	done
	rdma link delete vroce0
	hold_finish || rc=1
else
	echo "# the holder did not start"
	rc=1
fi
exit $rc
