#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The middleware runs of 88-middleware.sh with vroce on A and rxe on B.
#
# vm: pair
# vm: timeout=900
# vm: install=1

export VROCE_MW_A=vroce
export VROCE_MW_B=rxe
. "$(dirname "$0")/88-middleware.sh"
