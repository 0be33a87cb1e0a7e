#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The packages of `make deb` (build/deb): each holds what it should and
# nothing built in the tree, and the module source of vroce-dkms builds
# with its dkms.conf's MAKE line for every kernel whose headers are
# installed (6.1 and 6.12 in CI), as DKMS would run it. Runs on the host;
# prints TAP. The VM test 99-deb-dkms installs them (make check-deb).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/host/lib/tap.sh
. "$top/tests/host/lib/tap.sh"

ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
dkms_deb=$build/deb/vroce-dkms_${ver}_all.deb
prov_deb=$build/deb/libvroce1_${ver}_$(dpkg --print-architecture).deb
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
src=$tmp/d/usr/src/vroce-$ver

check "make deb built vroce-dkms $ver" test -f "$dkms_deb"
check "make deb built libvroce1 $ver" test -f "$prov_deb"
dpkg-deb -x "$dkms_deb" "$tmp/d" 2>/dev/null
dpkg-deb -x "$prov_deb" "$tmp/p" 2>/dev/null

check "vroce-dkms: Kbuild, kernel/, kernel/core/, uapi/ in /usr/src/vroce-$ver" \
	test -f "$src/Kbuild" -a -f "$src/kernel/main.c" -a \
	-f "$src/kernel/core/aeth.c" -a -f "$src/uapi/rdma/vroce-abi.h"
check "vroce-dkms: every kernel source file of the tree, nothing else" \
	diff <(cd "$top" && git ls-files Kbuild kernel uapi | sort) \
	<(cd "$src" && find Kbuild kernel uapi -type f | sort)
check "vroce-dkms: dkms.conf with the package's version" \
	grep -qx "PACKAGE_VERSION=\"$ver\"" "$src/dkms.conf"
check "vroce-dkms: depends on dkms" \
	sh -c "dpkg-deb -f '$dkms_deb' Depends | grep -q 'dkms'"
check "vroce-dkms: vroce(7)" test -f "$tmp/d/usr/share/man/man7/vroce.7.gz"
dynsyms() { objdump -T "$1" | awk '/IBVERBS/ { print $(NF - 1), $NF }' | sort; }
for n in 34 57 59 64 65; do
	so=libvroce-rdmav$n.so
	check "libvroce1: the provider of private ABI $n in libibverbs' directory" \
		test -f "$tmp/p/usr/lib/$multiarch/libibverbs/$so"
	check "libvroce1: $so binds to libibverbs as the tree's build does" \
		diff <(dynsyms "$tmp/p/usr/lib/$multiarch/libibverbs/$so") \
		<(dynsyms "$build/user/$so")
done
check "libvroce1: vroce.driver names the provider" \
	grep -qx "driver vroce" "$tmp/p/etc/libibverbs.d/vroce.driver"
check "libvroce1: needs a libibverbs1 it has a provider for (>= 39, << 66)" \
	sh -c "dpkg-deb -f '$prov_deb' Depends | grep -q 'libibverbs1 (<< 66~)'"

# dkms.conf's MAKE line, with DKMS's variables, for each kernel.
mk=$(sed -n 's/^MAKE\[0\]="\(.*\)"$/\1/p' "$src/dkms.conf")
# shellcheck disable=SC2034 # used by the eval of dkms.conf's MAKE line
PACKAGE_NAME=vroce PACKAGE_VERSION=$ver dkms_tree=$tmp/tree
mkdir -p "$tmp/tree/vroce/$ver"
kernels=0
for kdir in /lib/modules/*/build; do
	[ -d "$kdir/include" ] || continue
	k=${kdir%/build}
	k=${k#/lib/modules/}
	rm -rf "$tmp/tree/vroce/$ver/build"
	cp -a "$src" "$tmp/tree/vroce/$ver/build"
	# shellcheck disable=SC2034
	kernel_source_dir=$kdir
	eval "$mk" >"$tmp/build-$k.log" 2>&1
	rc=$?
	ko=$tmp/tree/vroce/$ver/build/vroce.ko
	check "dkms.conf's MAKE builds vroce.ko for $k" \
		test $rc -eq 0 -a -f "$ko"
	[ $rc -eq 0 ] || tail -n 15 "$tmp/build-$k.log" | sed 's/^/#   /'
	check "that vroce.ko is for $k" \
		sh -c "modinfo -F vermagic '$ko' | grep -q '^$k '"
	kernels=$((kernels + 1))
done
check "built for at least one kernel with headers ($kernels)" test "$kernels" -gt 0
tap_end
