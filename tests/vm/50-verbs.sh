#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A C program opens vroce0 through the stock libibverbs: queries, PDs,
# and EOPNOTSUPP for every verb that is not implemented yet. Also checks
# that libibverbs binds our provider (no "no userspace device-specific
# driver" warning).
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

rdma_add vroce0 eth0 || tap_bail "rdma link add failed: $rdma_err"
warn=$(IBV_SHOW_WARNINGS=1 ibv_devices 2>&1 >/dev/null)
# The program's own TAP stream is this test's stream.
"$VROCE_TOP/build/progs/verbs_basic" vroce0
rc=$?
if [ -n "$warn" ]; then
	echo "# libibverbs warned: $warn"
	exit 1
fi
exit $rc
