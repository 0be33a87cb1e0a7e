# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Helpers shared by the host-side VM scripts (scripts/vm, scripts/mkinitramfs,
# scripts/run-vm-tests, scripts/capture). Sourced, never executed.
#
# Sets: VM_TOP (repo top), VM_BUILD (build/vm), and defines vm_kver,
# vm_kernel, vm_moddir, vm_ko_dir, vm_die, vm_note.
#
# A guest kernel other than Debian's (the debug kernel of `make
# check-debug`, see scripts/debug-kernel) is selected with:
#   VROCE_VM_KERNEL   its image (bzImage, or an ELF vmlinux with PVH entry)
#   VROCE_VM_MODULES  the directory its modules were installed into with
#                     INSTALL_MOD_PATH (it holds lib/modules/<release>)
#   VROCE_VM_KO_DIR   where vroce.ko and tests/kmod/vroce_ktest.ko built
#                     for it are (laid out as in the repo; default: the repo)

# shellcheck shell=bash

VM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VM_BUILD=${VROCE_VM_BUILD:-$VM_TOP/build/vm}

vm_die() {
	echo "${VM_PROG:-vm}: $*" >&2
	exit 125
}

vm_note() {
	echo "${VM_PROG:-vm}: $*" >&2
}

# vm_kver: the guest kernel version. VROCE_VM_KVER wins; then the version
# the repo's vroce.ko was built for, if that kernel is installed; then the
# newest Debian amd64 kernel in /boot that has its modules in /lib/modules.
vm_kver() {
	local k v ko
	if [ -n "${VROCE_VM_KVER:-}" ]; then
		echo "$VROCE_VM_KVER"
		return 0
	fi
	# With VROCE_VM_MODULES: the release it holds (there must be one).
	if [ -n "${VROCE_VM_MODULES:-}" ]; then
		v=
		for k in "$VROCE_VM_MODULES"/lib/modules/*; do
			[ -d "$k" ] || continue
			[ -z "$v" ] || return 1
			v=${k##*/}
		done
		[ -n "$v" ] || return 1
		echo "$v"
		return 0
	fi
	ko=$(vm_ko_dir)/vroce.ko
	if [ -f "$ko" ]; then
		v=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
		if [ -n "$v" ] && [ -f "/boot/vmlinuz-$v" ] && [ -d "/lib/modules/$v" ]; then
			echo "$v"
			return 0
		fi
	fi
	v=
	for k in /boot/vmlinuz-*; do
		[ -f "$k" ] || continue
		k=${k#/boot/vmlinuz-}
		[ -d "/lib/modules/$k/kernel" ] || continue
		v="$v$k"$'\n'
	done
	v=$(printf '%s' "$v" | sort -V | tail -n 1)
	[ -n "$v" ] || return 1
	echo "$v"
}

# vm_moddir KVER: the guest's module directory for KVER, as seen on the
# host: /lib/modules/KVER, or under VROCE_VM_MODULES.
vm_moddir() {
	echo "${VROCE_VM_MODULES:-}/lib/modules/$1"
}

# vm_ko_dir: the directory holding the vroce.ko (and tests/kmod/
# vroce_ktest.ko) to install in the guest.
vm_ko_dir() {
	echo "${VROCE_VM_KO_DIR:-$VM_TOP}"
}

# vm_kernel KVER: path of the kernel to boot for KVER. The distribution's
# bzImage is xz-compressed and decompressing it under TCG takes seconds, so
# the ELF vmlinux is extracted once (cached in build/vm) and booted through
# its PVH entry point; if that is not possible, the bzImage itself.
# VROCE_VM_KERNEL overrides, VROCE_VM_PVH=0 disables the extraction.
vm_kernel() {
	local kver=$1 img out
	if [ -n "${VROCE_VM_KERNEL:-}" ]; then
		echo "$VROCE_VM_KERNEL"
		return 0
	fi
	img=/boot/vmlinuz-$kver
	[ -r "$img" ] || return 1
	if [ "${VROCE_VM_PVH:-1}" = 1 ] && out=$(vm_extract_vmlinux "$img" "$VM_BUILD/vmlinux-$kver"); then
		echo "$out"
	else
		echo "$img"
	fi
}

# vm_extract_vmlinux BZIMAGE OUT: decompress the kernel's payload to OUT if it
# is an ELF with a PVH entry note (Xen note type 0x12). Cached by the
# image's size and mtime.
vm_extract_vmlinux() {
	local img=$1 out=$2 key magic off dec
	key="$(stat -c '%n %s %Y' "$img")"
	command -v readelf >/dev/null || return 1
	mkdir -p "$(dirname "$out")" || return 1
	(
		flock 9
		[ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ] && exit 0
		rm -f "$out" "$out.key"
		for magic in 'xz:\xfd7zXZ\x00' 'zstd:\x28\xb5\x2f\xfd' 'gzip:\x1f\x8b\x08'; do
			dec=${magic%%:*}
			off=$(LC_ALL=C grep -obUaP "${magic#*:}" "$img" | head -n 1 | cut -d: -f1)
			[ -n "$off" ] || continue
			command -v "$dec" >/dev/null || continue
			case $dec in
			xz) tail -c +$((off + 1)) "$img" | xz -dcq --single-stream >"$out.tmp" 2>/dev/null ;;
			zstd) tail -c +$((off + 1)) "$img" | zstd -dcq >"$out.tmp" 2>/dev/null ;;
			gzip) tail -c +$((off + 1)) "$img" | gzip -dcq >"$out.tmp" 2>/dev/null ;;
			esac
			if readelf -n "$out.tmp" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; then
				mv "$out.tmp" "$out" && echo "$key" >"$out.key"
				exit 0
			fi
		done
		rm -f "$out.tmp"
		exit 1
	) 9>"$out.lock" || return 1
	echo "$out"
}

# vm_modindex KVER KO: run depmod on the host (fast) for the module tree of
# KVER plus KO installed as updates/vroce.ko, the way scripts/install lays
# it out, and print the directory holding the resulting modules.* index
# files. The VM copies them instead of running depmod itself, which takes
# minutes under TCG. Cached by the content of KO and of the tree's own
# module list and index (a rebuilt kernel may bring new modules).
vm_modindex() {
	local kver=$1 ko=$2 sum dir base mod f src
	src=$(vm_moddir "$kver")
	sum=$(cat "$ko" "$src/modules.order" "$src/modules.dep" 2>/dev/null |
		sha256sum | cut -c1-16) || return 1
	[ -f "$ko" ] || return 1
	base=$VM_BUILD/modindex
	dir=$base/$kver-$sum
	mkdir -p "$base" || return 1
	(
		flock 9
		if [ -f "$dir/done" ]; then
			touch "$dir/done"
			exit 0
		fi
		# Drop indexes nobody used for an hour.
		find "$base" -mindepth 1 -maxdepth 1 -type d -mmin +60 \
			-exec rm -rf {} + 2>/dev/null
		rm -rf "$dir" "$dir.tmp"
		mod=$dir.tmp/root/lib/modules/$kver
		mkdir -p "$mod/updates" || exit 1
		for f in "$src"/*; do
			case ${f##*/} in
			build | source | modules.*) ;;
			*) [ -d "$f" ] && { cp -rs "$f" "$mod/" || exit 1; } ;;
			esac
		done
		for f in modules.order modules.builtin modules.builtin.modinfo; do
			[ -f "$src/$f" ] && cp "$src/$f" "$mod/"
		done
		cp "$ko" "$mod/updates/vroce.ko" || exit 1
		depmod -b "$dir.tmp/root" "$kver" || exit 1
		mkdir -p "$dir.tmp/idx"
		mv "$mod"/modules.* "$dir.tmp/idx/" || exit 1
		rm -rf "$dir.tmp/root"
		mv "$dir.tmp/idx" "$dir" && rm -rf "$dir.tmp" && touch "$dir/done"
	) 9>"$base/.lock" || return 1
	echo "$dir"
}
