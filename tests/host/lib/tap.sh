# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# TAP for the host tests (tests/host/*.sh): check DESC CMD... runs CMD and
# prints one result line; tap_end prints the plan and exits 1 if any
# check failed.
n=0
failed=0

check() {
	local desc=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		failed=1
	fi
}

tap_end() {
	echo "1..$n"
	exit $failed
}
