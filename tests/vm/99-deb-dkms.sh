#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The Debian packages of `make deb` on a root without vroce: dpkg -i of
# vroce-dkms and libvroce1 builds the module with DKMS for the running
# kernel; modprobe, autoload on "rdma link add ... type vroce" and
# ibv_devinfo through the packaged provider work. Then a second kernel
# arrives: its headers are hidden (an empty directory mounted over them)
# while vroce-dkms goes in, then they appear and their package's
# postinst runs (dpkg-reconfigure, as when the package is installed),
# whose DKMS hook must build vroce for that kernel too.
#
# The VM's root is the host's, read-only under a tmpfs overlay, so
# nothing here changes the host. DKMS compiles under emulation, about 7
# minutes a kernel: "slow" keeps the test out of make check's list (CI's
# time limit); make check-deb runs it.
#
# vm: slow
# vm: install=0
# vm: timeout=1800
# vm: mem=1536

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

top=${VROCE_TOP:-.}
kver=$(uname -r)
log=/tmp/deb-dkms.log
# dkms_ko KVER: the vroce.ko DKMS installed for KVER (compressed like the
# kernel's own modules: Debian's 6.12 has .ko.xz); fails if there is none.
dkms_ko() {
	local f
	for f in "/lib/modules/$1/updates/dkms/vroce.ko"{,.xz,.zst,.gz}; do
		[ -e "$f" ] && echo "$f" && return 0
	done
	echo "/lib/modules/$1/updates/dkms/vroce.ko"
	return 1
}

shopt -s nullglob
debs=("$top"/build/deb/vroce-dkms_*_all.deb "$top"/build/deb/libvroce1_*.deb)
[ ${#debs[@]} -eq 2 ] || tap_bail "no packages in build/deb: run make deb"
[ -e "/lib/modules/$kver/build" ] ||
	tap_bail "no headers for the running kernel $kver"
# The second kernel: the newest with headers, if newer than this one
# (DKMS builds for the running and the newest kernel when it is installed:
# an older one would not show that the headers' hook did the work).
second=$(for d in /lib/modules/*/build; do
	k=${d%/build}
	echo "${k#/lib/modules/}"
done | sort -V | tail -n 1)
newest=$(printf '%s\n' "$kver" "$second" | sort -V | tail -n 1)
[ "$second" != "$kver" ] && [ "$newest" = "$second" ] || second=
second_pkg=
second_src=
if [ -n "$second" ]; then
	second_src=$(readlink -f "/lib/modules/$second/build")
	second_pkg=$(dpkg -S "$second_src" 2>/dev/null | cut -d: -f1)
fi

tap_plan 16

# A root without vroce: no module, no provider, no package.
! modinfo vroce >/dev/null 2>&1 &&
	[ ! -e /etc/libibverbs.d/vroce.driver ] &&
	! dpkg -s vroce-dkms >/dev/null 2>&1
tap_result $? "clean root: no vroce module, provider or package"

if [ -n "$second_pkg" ]; then
	mkdir -p /tmp/no-headers &&
		mount --bind /tmp/no-headers "$second_src" &&
		[ ! -e "/lib/modules/$second/build/include" ]
	tap_result $? "second kernel $second: headers ($second_pkg) hidden"
else
	tap_skip "second kernel: headers hidden" "no newer kernel with packaged headers than $kver"
fi

t0=$SECONDS
run_timeout 1200 dpkg -i "${debs[@]}" >>"$log" 2>&1
rc=$?
tap_result $rc "dpkg -i ${debs[*]##*/} ($((SECONDS - t0)) s)"
[ $rc -eq 0 ] || tail -n 20 "$log" | sed 's/^/#   /'

dkms status vroce >>"$log" 2>/dev/null
tap_check "DKMS installed vroce for $kver" dkms_ko "$kver"
tap_check "modinfo vroce: vermagic $kver" \
	sh -c "modinfo -F vermagic vroce | grep -q '^$kver '"
tap_check "modprobe vroce" modprobe vroce
tap_check "modprobe -r vroce" modprobe -r vroce
tap_check "vroce is not loaded" sh -c "! grep -q '^vroce ' /proc/modules"

# "rdma link add ... type vroce" loads the module through its alias.
modprobe rdma_ucm
rdma_add vroce0 eth0
rc=$?
tap_result $rc "rdma link add vroce0 type vroce netdev eth0 (autoload)"
[ $rc -eq 0 ] || tap_diag "$rdma_err"
tap_check "vroce was loaded by the link type" grep -q '^vroce ' /proc/modules
vm_ib_nodes
vm_wait_port_active vroce0 30
out=$(ibv_devinfo -d vroce0 2>&1)
rc=$?
case $out in *"hca_id:	vroce0"*PORT_ACTIVE*) ;; *) rc=1 ;; esac
tap_result $rc "ibv_devinfo -d vroce0 through the packaged provider"
[ $rc -eq 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'
prov=$(LD_DEBUG=libs ibv_devinfo -l 2>&1 |
	sed -n 's|.*calling init: \(/.*/libvroce-rdmav34\.so\)$|\1|p' | head -n 1)
[ -n "$prov" ] && dpkg -S "$prov" 2>/dev/null | grep -q '^libvroce1:'
tap_result $? "libibverbs loaded the provider of libvroce1 (${prov:-none})"
rdma link delete vroce0

if [ -n "$second_pkg" ]; then
	dkms_ko "$second" >/dev/null
	built=$?
	umount "$second_src"
	shown=$?
	[ $built -ne 0 ] && [ $shown -eq 0 ]
	tap_result $? "second kernel: not built while hidden; its headers appear"
	t0=$SECONDS
	run_timeout 1200 dpkg-reconfigure "$second_pkg" >>"$log" 2>&1
	rc=$?
	tap_result $rc "second kernel: postinst of $second_pkg ($((SECONDS - t0)) s)"
	[ $rc -eq 0 ] || tail -n 20 "$log" | sed 's/^/#   /'
	tap_check "DKMS built vroce for $second in the headers' postinst" \
		dkms_ko "$second"
	tap_check "that vroce.ko is for $second" \
		sh -c "modinfo -F vermagic '$(dkms_ko "$second")' | grep -q '^$second '"
else
	for d in "second kernel: its headers appear" "second kernel: postinst" \
		"DKMS built vroce for it" "vroce.ko is for it"; do
		tap_skip "$d" "no newer kernel with packaged headers than $kver"
	done
fi
dkms status vroce 2>/dev/null | sed 's/^/# dkms: /'
cp "$log" "${VROCE_OUT:-/tmp}/" 2>/dev/null
tap_done
