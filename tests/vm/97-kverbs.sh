#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Kernel verbs as a kernel consumer sees them (tests/kmod/vroce_ktest.c):
# loading the checker module runs its checks against vroce0 and logs TAP
# lines, relayed here. A flushed completion names its QP in wc->qp; a
# kernel QP destroyed with completions not yet polled leaves none behind,
# and the QP that takes its number next is handed none of them. Fast
# registration between two RC QPs of vroce0: an FRMR takes a WRITE; after
# LOCAL_INV and a new REG_MR (new key, one other page) a WRITE lands in the
# new page only, and one past the new end and one under the old key are
# refused.
#
# vm: timeout=120

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

ko=${VROCE_KTEST_KO:-$VROCE_TOP/tests/kmod/vroce_ktest.ko}
vroce_up
tap_check "vroce_ktest.ko is built" test -f "$ko"
tap_check "vroce_ktest loads and runs its checks" insmod "$ko" dev=vroce0
dmesg | sed -n 's/.*vroce_ktest: \(\(not \)\{0,1\}ok [0-9]* - .*\)/\1/p' >/tmp/ktest.tap
plan=$(dmesg | sed -n 's/.*vroce_ktest: 1\.\.\([0-9]*\)$/\1/p')
tap_check "the checker printed its plan" test -n "$plan"
tap_check "the checker printed $plan results" \
	test "$(wc -l </tmp/ktest.tap)" = "${plan:-x}"
while read -r line; do
	case $line in
	ok*) tap_ok "ktest: ${line#ok [0-9]* - }" ;;
	*) tap_fail "ktest: ${line#not ok [0-9]* - }" ;;
	esac
done </tmp/ktest.tap
tap_check "vroce_ktest unloads" rmmod vroce_ktest
tap_done
