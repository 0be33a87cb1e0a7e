#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Runs the provider tests against the libibverbs of another Debian root
# (scripts/abi-roots), with the provider of that libibverbs' private ABI:
#
#   run-in-root.sh <root> <build dir>
#
# The ABI is the N of the IBVERBS_PRIVATE_N the root's libibverbs.so.1
# defines; the provider is <build dir>/user/libvroce-rdmavN.so, and the
# tests, built for that ABI (they look into the provider's structs), are
# made in <build dir>/provider-abiN. check-symbols.sh runs here, against
# the root's library; the other suites run inside the root (chroot), on
# copies in <root>/vroce, with libibverbs loading the provider as it would
# once installed there.
set -u

root=${1:?usage: run-in-root.sh <root> <build dir>}
top_build=$(cd "${2:?usage: run-in-root.sh <root> <build dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
user=$top_build/user

lib=$(readlink -f "$root/usr/lib/x86_64-linux-gnu/libibverbs.so.1")
n=$(readelf -V -W "$lib" 2>/dev/null |
	sed -n 's/.*Name: IBVERBS_PRIVATE_\([0-9]*\).*/\1/p' | head -n 1)
if [ -z "$n" ] || [ ! -f "$user/libvroce-rdmav$n.so" ]; then
	echo "not ok 1 - a provider for the private ABI of $lib (${n:-none})"
	echo "1..1"
	exit 1
fi
echo "# $root: libibverbs $(basename "$lib"), private ABI $n"
build=$top_build/provider-abi$n
if ! out=$(make -s -C "$here" O="$build" USER_O="$user" PABI="$n" 2>&1); then
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "not ok 1 - provider tests for private ABI $n build"
	echo "1..1"
	exit 1
fi
"$here/check-symbols.sh" "$user/libvroce-rdmav$n.so" "$lib"
sym=$?

rm -rf "$root/vroce"
mkdir -p "$root/vroce"
cp "$user/libvroce-rdmav$n.so" "$here/run-tests.sh" "$root/vroce/" &&
	for t in "$build"/*; do
		[ -x "$t" ] && [ -f "$t" ] && cp "$t" "$root/vroce/"
	done
VROCE_SKIP_SYMBOLS=1 chroot "$root" /bin/sh /vroce/run-tests.sh \
	"/vroce/libvroce-rdmav$n.so" /vroce
rc=$?
[ "$sym" -eq 0 ] && [ "$rc" -eq 0 ]
