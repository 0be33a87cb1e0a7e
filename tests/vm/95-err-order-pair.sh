#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# 95-err-order.sh across the two-VM wire: B runs the server end of
# tests/progs/err_order.c, A the client end, which prints both ends'
# checks.
#
# Which RDMA device each side uses comes from the environment:
#   VROCE_ERR_A=vroce|rxe   (default vroce)
#   VROCE_ERR_B=vroce|rxe   (default vroce)
# e.g. rdma_rxe as the server:
#   scripts/vm --pair --env VROCE_ERR_B=rxe tests/vm/95-err-order-pair.sh
#
# vm: pair
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_progs.sh"

prog=$VROCE_TOP/build/progs/err_order
port=18700

pair_kind VROCE_ERR vroce
prog_dev "$prog"
gid4=$(dev_gid "$VROCE_SELF_IP4" 10)
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP4: index $gid4"

prog_pair err "$prog" "$port"
vm_barrier "done" 60
tap_done
