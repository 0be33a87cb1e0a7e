#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Memory windows bound with local rights in their access flags
# (tests/progs/mr_rights.c, issue 10 V1): type 1 and type 2 binds with
# IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE succeed, and an RDMA
# WRITE through each window lands where it should; a zero-based type 2
# window takes offsets, and refuses a WRITE past its end. ibv_rereg_mr
# (issue 10 V2) keeps the lkey and rkey, and a WRITE with the rkey taken
# before it works, for CHANGE_ACCESS (adding remote write),
# CHANGE_TRANSLATION (the WRITE lands in the new buffer) and CHANGE_PD.
# All on vroce0, an RC QP writing to itself through the device's IPv4
# GID.
#
# vm: timeout=300

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

vroce_up
exec "$VROCE_TOP/build/progs/mr_rights" vroce0
