#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# RC/UD data correctness: vroce's requester (A) against rdma_rxe (B).
# The checks are those of 80-rxe-ops.sh; this runs them with vroce.
#
# vm: pair
# vm: timeout=300
# vm: install=1

export VROCE_OPS_A=vroce
export VROCE_OPS_B=rxe
. "$(dirname "$0")/80-rxe-ops.sh"
