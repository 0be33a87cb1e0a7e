#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# UD receives through an SRQ on one host, and the SRQ limit event
# (tests/progs/ud_srq.c).
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

rdma_add vroce0 eth0 || tap_bail "rdma link add failed: $rdma_err"
wait_for 10 vm_gid_index vroce0 "$VROCE_SELF_IP4" ||
	tap_bail "no RoCE v2 GID for $VROCE_SELF_IP4"
exec "$VROCE_TOP/build/progs/ud_srq" vroce0
