#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Verbs no other wire test reaches, between two VMs
# (tests/progs/verbs_wire.c): UC SEND and WRITE, IBV_SEND_FENCE after a
# READ, IBV_SEND_SOLICITED with a solicited-only CQ, a type 1 window
# bound with ibv_bind_mw, IBV_WR_LOCAL_INV of a type 2 window, RC over an
# SRQ. B runs the server, A the client, whose TAP has both ends' checks.
#
# Which RDMA device each side uses comes from the environment:
#   VROCE_VW_A=vroce|rxe   (default vroce)
#   VROCE_VW_B=vroce|rxe   (default vroce)
# The 96-verbs-wire-* scripts run vroce against rdma_rxe both ways.
#
# vm: pair
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_progs.sh"

prog=$VROCE_TOP/build/progs/verbs_wire
port=18800

pair_kind VROCE_VW vroce
prog_dev "$prog"
gid4=$(dev_gid "$VROCE_SELF_IP4" 10)
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP4: index $gid4"

prog_pair vw "$prog" "$port"
vm_barrier "done" 60
tap_done
