#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Stock RC tools between vroce (A) and rdma_rxe (B), each side serving in turn.
# The checks are those of 83-rc-tools.sh; this runs them with vroce.
#
# vm: pair
# vm: timeout=600
# vm: install=1

export VROCE_TOOLS_A=vroce
export VROCE_TOOLS_B=rxe
. "$(dirname "$0")/83-rc-tools.sh"
