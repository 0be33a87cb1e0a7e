#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The error completion comes before the flushes (tests/progs/err_order.c):
# two RC QPs of one device; the server's receive WQE is made invalid
# (MR deregistered, moved to another PD, given another translation), or
# the client writes with an unknown rkey. The client's first completion
# must be its failed request's remote error, then the flushes; the
# server's first its receive's local error, then the flushes.
#
# The device comes from the environment: VROCE_ERR_DEV=vroce|rxe
# (default vroce). rdma_rxe behaves the same way, e.g.:
#   scripts/vm --env VROCE_ERR_DEV=rxe tests/vm/95-err-order.sh
#
# vm: timeout=240

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

want_kind VROCE_ERR_DEV vroce
kind_dev "$kind" || tap_bail "cannot set up $kind on eth0"
wait_for 10 vm_gid_index "$dev" "$VROCE_SELF_IP4" ||
	tap_bail "no RoCE v2 GID for $VROCE_SELF_IP4"
exec "$VROCE_TOP/build/progs/err_order" -d "$dev"
