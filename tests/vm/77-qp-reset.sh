#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# RC QPs used again after RESET (tests/progs/qp_reset.c): two QPs of
# vroce0 connected to each other send more messages each way than their
# SQs hold, go to RESET and are connected again, three times over; then
# one goes to RESET with a full SQ of SENDs unacknowledged, and the pair,
# connected again, must carry the same traffic.
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

vroce_up
exec "$VROCE_TOP/build/progs/qp_reset" vroce0 3
