#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Rings sized by the caller are charged to its memory cgroup
# (tests/progs/accounting.c, run alone in a cgroup v2 of its own).
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

vroce_up
cg=/sys/fs/cgroup
if [ ! -f "$cg/cgroup.controllers" ]; then
	mkdir -p "$cg"
	mount -t cgroup2 none "$cg" || tap_bail "cannot mount cgroup2"
fi
grep -qw memory "$cg/cgroup.controllers" ||
	tap_bail "no memory controller"
echo +memory >"$cg/cgroup.subtree_control" ||
	tap_bail "cannot enable the memory controller"
mkdir -p "$cg/vroce-acct" || tap_bail "cannot make a cgroup"
# The program runs in the new cgroup: the shell moves itself first.
exec sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" vroce0' sh \
	"$cg/vroce-acct" "$VROCE_TOP/build/progs/accounting"
