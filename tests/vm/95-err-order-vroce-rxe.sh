#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# 95-err-order-pair.sh with vroce as the client (A) and rdma_rxe as the
# server (B): vroce's requester puts the error completion first against
# rxe's NAKs too. rxe cannot re-register an MR (those cases skip) and
# reports a receive too short as an operational error.
#
# vm: pair
# vm: timeout=300

export VROCE_ERR_A=vroce
export VROCE_ERR_B=rxe
. "$(dirname "$0")/95-err-order-pair.sh"
