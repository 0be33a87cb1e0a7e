#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# scripts/vm's boot watch: a VM that stays silent before its init starts
# is taken to have hung in boot, booted once more, and then failed with
# no result, well before the run's time limit. The VM's init is replaced
# by tests/host/data/hang-init, which never starts the job. A kernel that
# panics before its init starts (here: told to run an init that is not
# there) is booted once more too, then failed as a panic. Runs on the
# host, boots a VM (about a minute under TCG); prints TAP. Skipped by
# `scripts/check --host-only`, which boots no VM.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${VROCE_CHECK_VM:-yes}" = no ]; then
	echo "1..0 # SKIP boots a VM (scripts/check --host-only)"
	exit 0
fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# shellcheck source=tests/host/lib/tap.sh
. "$top/tests/host/lib/tap.sh"

start=$SECONDS
out=$(VROCE_VM_LOGS=$logs VROCE_VM_BOOT_STALL=20 VROCE_VM_BOOT_TRIES=2 \
	"$top/scripts/vm" --timeout 400 --name watch --no-install \
	--append "vroce_vm.init=$top/tests/host/data/hang-init" \
	"$top/tests/vm/00-harness.sh" 2>&1)
rc=$?
secs=$((SECONDS - start))
check "scripts/vm exits 125, no result (exit status $rc)" test "$rc" -eq 125
check "it says the first boot hung" grep -q "hung in boot .*boot 1 of 2" <<<"$out"
check "it says the second boot hung" grep -q "hung in boot .*boot 2 of 2" <<<"$out"
check "the first boot's console is kept" test -s "$logs/watch/console.boot1.log"
check "the result says noresult" grep -qx "reason=noresult" "$logs/watch/result"
check "it stopped long before the 400 s limit ($secs s)" test "$secs" -lt 300
[ "$failed" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /'

failed_before=$failed
out=$(VROCE_VM_LOGS=$logs VROCE_VM_BOOT_TRIES=2 "$top/scripts/vm" \
	--timeout 200 --name panic --no-install \
	--append "rdinit=/nonexistent" "$top/tests/vm/00-harness.sh" 2>&1)
rc=$?
check "a boot that panics: exit status 125 ($rc)" test "$rc" -eq 125
check "it says the first boot panicked" \
	grep -q "panicked in boot, before its init started (boot 1 of 2)" <<<"$out"
check "it says the second boot panicked" grep -q "(boot 2 of 2)" <<<"$out"
check "it shows the panic's line" \
	grep -q "|.*Kernel panic - not syncing: VFS" <<<"$out"
check "the first boot's console is kept" test -s "$logs/panic/console.boot1.log"
check "the result says panic" grep -qx "reason=panic" "$logs/panic/result"
[ "$failed" -eq "$failed_before" ] || printf '%s\n' "$out" | sed 's/^/# /'
tap_end
