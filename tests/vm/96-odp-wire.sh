#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# On-demand paging between two VMs (tests/progs/odp_wire.c): RDMA WRITE,
# READ, fetch and add and SEND between an explicit ODP MR on B and an
# implicit one on A, into pages nobody touched yet; after B drops pages
# (MADV_DONTNEED) a WRITE lands in the new ones and a READ brings the new
# bytes; a prefetch with ibv_advise_mr; a WRITE into a page B unmapped is
# a remote access error. vroce on both sides: rdma_rxe has no ODP on 6.1.
# B runs the server, A the client, whose TAP has both ends' checks.
#
# The counters show the paging worked as it should: B faulted pages in
# (odp_faults), answered while it did with RNR NAKs (rnr_nak_sent) and
# dropped pages when told to (odp_invalidations); A faulted in its own
# (the READ's destination); neither side waited for a retransmit timer
# (retry_timeouts 0): an RNR NAK asks for the resend.
#
# vm: pair
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_progs.sh"

prog=$VROCE_TOP/build/progs/odp_wire
port=18830

kind=vroce
prog_dev "$prog"
gid4=$(dev_gid "$VROCE_SELF_IP4" 10)
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP4: index $gid4"
prog_pair odp "$prog" "$port"

# counter_moved NAME: one TAP line that $dev's counter NAME is above 0.
counter_moved() {
	local v
	v=$(dev_counter "$dev" "$1")
	tap_check "$1 rose (${v:-unreadable})" test "${v:-0}" -gt 0
}

v=$(dev_counter "$dev" retry_timeouts)
tap_check "retry_timeouts is 0 (${v:-unreadable})" test "${v:-x}" = 0
counter_moved odp_faults
if [ "$VROCE_ROLE" = b ]; then
	counter_moved rnr_nak_sent
	counter_moved odp_invalidations
fi
vm_barrier "done" 60
tap_done
