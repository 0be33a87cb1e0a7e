#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A type 2 memory window belongs to the QP it was bound on, not to its
# number (tests/progs/mw_qp.c): only that QP reaches it, only a SEND with
# Invalidate arriving on that QP invalidates it, and destroying the QP
# unbinds it.
#
# vm: timeout=180

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

vroce_up
exec "$VROCE_TOP/build/progs/mw_qp" vroce0
