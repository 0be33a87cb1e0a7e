#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A second process uses the first one's PD and MR (issue 11, item 8):
# tests/progs/import_share.c passes a dup of the command FD over a UNIX
# socket; the receiver imports the device, the PD and the MR
# (ibv_import_device, ibv_import_pd, ibv_import_mr), READs and WRITEs the
# sender's buffer through the imported rkey from a loopback RC QP of the
# imported PD, and the sender checks the bytes. Afterwards the module's
# object counts are back where they were.
#
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

vroce_up
objs=/sys/class/infiniband/vroce0/objects
before=$(cat "$objs"/* | tr '\n' ' ')
"$VROCE_TOP/build/progs/import_share" vroce0
rc=$?
left=$(cat "$objs"/* | tr '\n' ' ')
echo "# module object counts (ah cq mr mw pd qp srq) before: $before, afterwards: $left"
[ "$left" = "$before" ] || rc=1
exit $rc
