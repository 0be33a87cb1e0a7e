#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The IBTA QP state machine of RC, UC and UD QPs through the stock
# libibverbs (tests/progs/qp_state.c).
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

vroce_up
exec "$VROCE_TOP/build/progs/qp_state" vroce0
