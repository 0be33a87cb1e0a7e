#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The middleware runs of 88-middleware.sh with rxe on A and vroce on B.
#
# vm: pair
# vm: timeout=900
# vm: install=1

export VROCE_MW_A=rxe
export VROCE_MW_B=vroce
. "$(dirname "$0")/88-middleware.sh"
