#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# RC/UD data correctness: rdma_rxe (A) against vroce's responder (B).
# The checks are those of 80-rxe-ops.sh; this runs them with vroce.
#
# vm: pair
# vm: timeout=300
# vm: install=1

export VROCE_OPS_A=rxe
export VROCE_OPS_B=vroce
. "$(dirname "$0")/80-rxe-ops.sh"
