#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# RC under loss, reordering, duplication and corruption between two vroce VMs.
# The checks are those of 82-rc-loss.sh; this runs them with vroce.
#
# vm: pair
# vm: timeout=600
# vm: install=1

export VROCE_STRESS_A=vroce
export VROCE_STRESS_B=vroce
. "$(dirname "$0")/82-rc-loss.sh"
