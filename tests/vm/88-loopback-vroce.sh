#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Stock RC tools on one vroce device (local loopback).
# The checks are those of 84-rc-loopback.sh; this runs them with vroce.
#
# vm: timeout=400
# vm: install=1

export VROCE_TOOLS_DEV=vroce
. "$(dirname "$0")/84-rc-loopback.sh"
