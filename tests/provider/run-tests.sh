#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Runs the provider test suites, each printing its own TAP stream, and
# exits non-zero if any check failed or any suite did not finish.
#
#   run-tests.sh <absolute path of libvroce-rdmavN.so> <test build dir>
set -u

provider=${1:?usage: run-tests.sh <provider .so> <build dir>}
build=${2:?usage: run-tests.sh <provider .so> <build dir>}
here=$(cd "$(dirname "$0")" && pwd)
passed=0
failed=0

suite() {
	name=$1
	shift
	echo "# suite: provider/$name"
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | grep -c '^ok [0-9]')
	f=$(printf '%s\n' "$out" | grep -c '^not ok [0-9]')
	plan=$(printf '%s\n' "$out" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "# provider/$name exited with status $rc"
		f=1
	elif [ "$plan" != "$((p + f))" ]; then
		echo "# provider/$name: plan '$plan' but $((p + f)) results"
		f=$((f + 1))
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

# run-in-root.sh checks the symbols outside the root (no readelf there).
[ -n "${VROCE_SKIP_SYMBOLS:-}" ] ||
	suite check-symbols "$here/check-symbols.sh" "$provider"
suite abi_layout "$build/abi_layout"
suite load_test "$build/load_test" "$provider" \
	"$(cd "$build" && pwd)/libfake_uverbs.so"
suite rings_test "$build/rings_test" "$provider"
suite verbs_test "$build/verbs_test" "$provider"
suite qp_ex_test "$build/qp_ex_test" "$provider"
suite domain_test "$build/domain_test" "$provider"
suite xrc_test "$build/xrc_test" "$provider"
suite dm_test "$build/dm_test" "$provider"

echo "# provider tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
