#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# `make install` with DESTDIR puts every file where the system expects it,
# and nothing outside DESTDIR. Runs on the host; prints TAP.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
# shellcheck source=tests/host/lib/tap.sh
. "$top/tests/host/lib/tap.sh"

kver=$(modinfo -F vermagic "$top/vroce.ko" | cut -d' ' -f1)
multiarch=$(gcc -print-multiarch)
out=$(DESTDIR=$dest "$top/scripts/install" 2>&1)
check "scripts/install with DESTDIR succeeds" test $? -eq 0
check "module in /lib/modules/$kver/updates" \
	test -f "$dest/lib/modules/$kver/updates/vroce.ko"
for n in 34 57 59 64 65; do
	check "provider of private ABI $n in libibverbs' directory" \
		test -x "$dest/usr/lib/$multiarch/libibverbs/libvroce-rdmav$n.so"
done
check "vroce.driver names the provider" \
	grep -qx "driver vroce" "$dest/etc/libibverbs.d/vroce.driver"
check "no module index written into the stage" \
	test ! -e "$dest/lib/modules/$kver/modules.dep"
check "says to run depmod" grep -q "depmod $kver" <<<"$out"
check "nothing else installed (module, 5 providers, .driver)" \
	test "$(find "$dest" -type f | wc -l)" -eq 7
tap_end
