#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Device memory between two VMs (tests/progs/dm_wire.c): RDMA WRITE, READ,
# fetch and add and a SEND whose buffers are in the DMs of both ends,
# checked through ibv_memcpy_to_dm / ibv_memcpy_from_dm; an RDMA WRITE
# past the end of a DM MR fails with a remote access error and moves no
# byte; the client's own checks of sizes, alignments, ranges, access
# flags and EBUSY. vroce on both sides: rdma_rxe has no device memory.
# B runs the server, which leaves its DM and MR to process exit; A the
# client, whose TAP has both ends' checks. The wire must need no
# retransmission, and B's DM memory must be gone after its exit.
#
# vm: pair
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_progs.sh"

prog=$VROCE_TOP/build/progs/dm_wire
port=18820

kind=vroce
prog_dev "$prog"
gid4=$(dev_gid "$VROCE_SELF_IP4" 10)
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP4: index $gid4"
prog_pair dm "$prog" "$port"
wire_clean
vm_barrier "done" 60
tap_done
