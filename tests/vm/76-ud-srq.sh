#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# UD receives through an SRQ on one host, and the SRQ limit event
# (tests/progs/ud_srq.c).
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

vroce_up
exec "$VROCE_TOP/build/progs/ud_srq" vroce0
