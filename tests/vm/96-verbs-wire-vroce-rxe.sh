#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# 96-verbs-wire.sh with vroce as the client (A) and rxe as the server (B).
#
# vm: pair
# vm: timeout=300

export VROCE_VW_A=vroce
export VROCE_VW_B=rxe
. "$(dirname "$0")/96-verbs-wire.sh"
