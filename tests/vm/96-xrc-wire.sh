#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# XRC between two VMs (tests/progs/xrc_wire.c): SENDs into two XRC SRQs
# of one domain through one target QP, each completing on its SRQ's CQ;
# RDMA WRITE, READ and fetch and add checked against the server's memory;
# a SEND through ibv_wr_set_xrc_srqn; a SEND naming an SRQ of another
# domain, which must fail with a remote invalid request error. vroce on
# both sides: rdma_rxe has no XRC. B runs the server, A the client, whose
# TAP has both ends' checks. The wire must need no retransmission.
#
# vm: pair
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_progs.sh"

prog=$VROCE_TOP/build/progs/xrc_wire
port=18810

kind=vroce
prog_dev "$prog"
gid4=$(dev_gid "$VROCE_SELF_IP4" 10)
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP4: index $gid4"
prog_pair xrc "$prog" "$port"
wire_clean
vm_barrier "done" 60
tap_done
