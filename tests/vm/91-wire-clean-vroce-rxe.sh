#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The clean-wire checks of 91-wire-clean.sh with vroce on A and rdma_rxe
# on B: vroce as requester and as responder against rxe.
#
# vm: pair
# vm: timeout=900
# vm: install=1

export VROCE_WIRE_A=vroce
export VROCE_WIRE_B=rxe
. "$(dirname "$0")/91-wire-clean.sh"
