#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# UD multicast between rxe (A, the sender) and vroce (B, the receivers).
# The checks are those of 76-mcast.sh.
#
# vm: pair
# vm: install=1
# vm: timeout=300

export VROCE_MC_A=rxe
export VROCE_MC_B=vroce
. "$(dirname "$0")/76-mcast.sh"
