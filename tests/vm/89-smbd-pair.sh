#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# SMB Direct across the two-VM wire: B runs the kernel's SMB server
# (ksmbd, with ksmbd-tools' ksmbd.mountd) sharing a directory, A mounts
# it with cifs over RDMA (mount -t cifs -o rdma, SMB 3.1.1, cache=none so
# every read and write crosses the wire), writes 16 MiB of random data
# and reads it back, and has fio write 16 MiB more to a second file in
# random 4-128 KiB blocks, 16 in flight, each block's CRC32C verified. B
# checks that its files hold the bytes A wrote (A passes their SHA-256).
# A's cifs must say the session runs over SMB Direct. Then A unmounts, B
# stops ksmbd, both unload, each device's resources are back, its
# counters show the traffic with no retransmit or timeout, and the kernel
# log is clean.
#
# Debian's 6.1 and 6.12 kernels build cifs and ksmbd without RDMA
# (CONFIG_CIFS_SMB_DIRECT, CONFIG_SMB_SERVER_SMBDIRECT), so there the
# test is skipped; the debug kernel has both:
#   make check-debug DEBUG_TESTS=89-smbd-pair
#
# Which RDMA device each side uses comes from the environment, as in
# 89-nvmeof-pair.sh:
#   VROCE_SMB_A=vroce|rxe   (default vroce; the client)
#   VROCE_SMB_B=vroce|rxe   (default vroce; the server)
# e.g. against rdma_rxe as the server, on the debug kernel:
#   env $(scripts/debug-kernel --env) VROCE_VM_MEM_ADD=1024 \
#     VROCE_VM_TIMEOUT_SCALE=3 VROCE_VM_APPEND=no5lvl scripts/vm --pair \
#     --env VROCE_SMB_B=rxe tests/vm/89-smbd-pair.sh
#
# vm: pair
# vm: timeout=900
# vm: install=1

# Functions run by step in a child bash, not called directly here.
# shellcheck disable=SC2317

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_nvmeof.sh"

if ! modinfo -F depends cifs 2>/dev/null | grep -qw rdma_cm ||
	! modinfo -F depends ksmbd 2>/dev/null | grep -qw rdma_cm; then
	tap_skip "SMB Direct" "$(uname -r) builds cifs and ksmbd without RDMA (CONFIG_CIFS_SMB_DIRECT, CONFIG_SMB_SERVER_SMBDIRECT; make check-debug has them)"
	tap_done
fi

# ksmbd-tools before 3.5.2 send share configurations without payload_sz,
# and 6.1.y's ksmbd (since its share-config validation) rejects them:
# every tree connect then fails with STATUS_BAD_NETWORK_NAME, over TCP as
# over RDMA. Debian 12 has 3.4.7, so B runs ksmbd.mountd from the trixie
# root of scripts/abi-roots (3.5.3), chrooted, unless this system's is
# new enough.
ksmbd_root=${VROCE_ROOTS:-$VROCE_TOP/build/roots}/trixie
tools_at() {
	dpkg-query --admindir="$1/var/lib/dpkg" -W -f='${Version}' ksmbd-tools 2>/dev/null
}
if dpkg --compare-versions "$(tools_at /)" ge 3.5.2; then
	ksmbd_root=/
elif ! dpkg --compare-versions "$(tools_at "$ksmbd_root")" ge 3.5.2; then
	tap_skip "SMB Direct" "no ksmbd-tools 3.5.2 or later, here or in $ksmbd_root (scripts/abi-roots trixie)"
	tap_done
fi
export ksmbd_root

pair_kind VROCE_SMB vroce
[ "$kind" = vroce ] && clean=2 || clean=0

export share=/srv/smb mnt=/mnt/smb user=vroce pass=vroce-smbd

if [ "$VROCE_ROLE" = a ]; then
	tap_plan $((1 + 6 + 1 + 4 + clean))
else
	tap_plan $((1 + 3 + 4 + clean))
fi

pair_ready

# ---- server (B) ------------------------------------------------------

# in_ksmbd_root CMD...: CMD of ksmbd-tools, run in $ksmbd_root.
in_ksmbd_root() {
	chroot "$ksmbd_root" "$@"
}

# ksmbd_up: ksmbd loaded, a share at $share writable by $user, and
# ksmbd.mountd started (it detaches). The share, /proc and /sys (where
# ksmbd.control stops the server) are bound into $ksmbd_root.
ksmbd_up() {
	local conf=$ksmbd_root/etc/ksmbd
	modprobe ksmbd || return 1
	mkdir -p "$share" "$conf" "$ksmbd_root$share" "$ksmbd_root/run" ||
		return 1
	if [ "$ksmbd_root" != / ]; then
		mount --bind "$share" "$ksmbd_root$share" &&
			mount -t proc proc "$ksmbd_root/proc" &&
			mount --bind /sys "$ksmbd_root/sys" || return 1
	fi
	cat >"$conf/ksmbd.conf" <<-EOF || return 1
		[global]
		netbios name = VROCE-B
		[smb]
		path = $share
		read only = no
		force user = root
	EOF
	in_ksmbd_root ksmbd.adduser -a "$user" -p "$pass" >/dev/null || return 1
	in_ksmbd_root ksmbd.mountd || return 1
	wait_for 20 test -d /sys/class/ksmbd-control || {
		echo "no /sys/class/ksmbd-control"
		return 1
	}
	echo "# ksmbd.mountd $(pgrep -x ksmbd.mountd | head -n 1) ($(in_ksmbd_root ksmbd.mountd -V 2>&1 | head -n 1)) in $ksmbd_root, share smb at $share"
}

# files_match SUMS: the SHA-256 of $share/data and $share/fio.0.0 are
# these two ("DATA FIO").
files_match() {
	local d f
	read -r d f <<<"$1"
	echo "$d  $share/data" | sha256sum -c --quiet - &&
		echo "$f  $share/fio.0.0" | sha256sum -c --quiet -
}

ksmbd_down() {
	in_ksmbd_root ksmbd.control -s || return 1
	wait_for 30 bash -c '! pgrep -x ksmbd.mountd' || { echo "ksmbd.mountd lives"; return 1; }
	if [ "$ksmbd_root" != / ]; then
		umount "$ksmbd_root/sys" "$ksmbd_root/proc" "$ksmbd_root$share" ||
			return 1
	fi
	# Not modprobe -r: that also unloads ksmbd's dependencies, and fails
	# on crc32_pclmul, which vroce holds.
	rmmod ksmbd
}

# ---- client (A) ------------------------------------------------------

# smb_mount ADDR: $share of B over SMB Direct, at $mnt; DebugData must
# show an SMBDirect transport.
smb_mount() {
	modprobe cifs || return 1
	mkdir -p "$mnt" &&
		mount -t cifs "//$1/smb" "$mnt" \
			-o "rdma,vers=3.1.1,cache=none,username=$user,password=$pass" ||
		return 1
	if ! grep -qi "smbdirect" /proc/fs/cifs/DebugData; then
		echo "no SMBDirect in /proc/fs/cifs/DebugData:"
		cat /proc/fs/cifs/DebugData
		return 1
	fi
	grep -i -m 3 "smbdirect\|rdma" /proc/fs/cifs/DebugData | sed 's/^/# /'
}

smb_write() {
	dd if=/dev/urandom of="$work/src" bs=1M count=16 iflag=fullblock status=none &&
		dd_q write if="$work/src" of="$mnt/data" bs=1M conv=fsync
}

smb_read() {
	dd_q read if="$mnt/data" of="$work/rd" bs=1M && cmp "$work/src" "$work/rd"
}

# smb_fio: fio's verified writes in $mnt/fio.0.0, then its SHA-256 read
# back, as B must find it, into $work/fio.sum.
smb_fio() {
	local out rc
	out=$(cd "$mnt" && fio --name=fio --directory="$mnt" --size=16M \
		--ioengine=libaio --direct=1 --iodepth=16 --rw=randwrite \
		--bsrange=4k-128k --randrepeat=0 --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --verify_state_save=0 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] || ! grep -q "READ: bw=" <<<"$out"; then
		printf '%s\n' "$out"
		return 1
	fi
	grep -E "(READ|WRITE): bw=" <<<"$out" | sed 's/^ */# fio: /'
	sha256sum <"$mnt/fio.0.0" | cut -d' ' -f1 >"$work/fio.sum"
}

export -f in_ksmbd_root ksmbd_up files_match ksmbd_down smb_mount smb_write smb_read smb_fio

no_mods=
if [ "$VROCE_ROLE" = b ]; then
	step "" 60 "ksmbd loaded, share smb, ksmbd.mountd running" ksmbd_up ||
		no_mods="no ksmbd"
	vm_send server "${no_mods:-ok}"
	vm_barrier client 900
	sums=$(vm_recv sums 10)
	if [ -z "$sums" ] || [ "$sums" = none ]; then
		tap_skip "$share holds what the client wrote" "the client wrote nothing"
		vm_send files skip
	else
		if step "$no_mods" 60 "$share holds what the client wrote (SHA-256)" \
			files_match "$sums"; then
			vm_send files ok
		else
			vm_send files fail
		fi
	fi
	vm_barrier files 120
	step "$no_mods" 60 "ksmbd stopped (ksmbd.control -s) and unloaded" ksmbd_down
else
	server=$(vm_recv server 120)
	[ "$server" = ok ] || no_mods="no server on B (${server:-nothing})"
	no_mnt=$no_mods
	step "$no_mnt" 120 "cifs mounts //192.0.2.2/smb over SMB Direct (rdma, SMB 3.1.1)" \
		smb_mount 192.0.2.2 || no_mnt=${no_mnt:-"not mounted"}
	no_data=$no_mnt
	step "$no_data" 180 "write 16 MiB to data" smb_write ||
		no_data=${no_data:-"the write failed"}
	step "$no_data" 180 "read data back, same bytes" smb_read
	step "$no_mnt" 300 "fio: 16 MiB of random 4-128 KiB writes, 16 deep, read back and CRC32C-verified" \
		smb_fio || no_data=${no_data:-"fio failed"}
	if [ -z "$no_data" ]; then
		vm_send sums "$(sha256sum <"$work/src" | cut -d' ' -f1) $(cat "$work/fio.sum")"
	else
		vm_send sums none
	fi
	step "$no_mnt" 60 "umount" umount "$mnt"
	step "" 60 "cifs unloaded" modprobe -r cifs
	vm_barrier client 900
	vm_barrier files 120
	files=$(vm_recv files 10)
	case $files in
	ok) tap_ok "B's files hold what was written (B checked)" ;;
	skip) tap_skip "B's files hold what was written" "nothing written" ;;
	*) tap_fail "B's files hold what was written (B: ${files:-nothing})" ;;
	esac
fi
# 16 MiB written and read, fio's 16 MiB written and read back.
pair_finish
kernel_oops_check
tap_diag "dmesg of cifs, ksmbd and $dev:"
dmesg | grep -Ei "cifs|ksmbd|smb|$dev" | tail -n 30 | sed 's/^/#   /'
tap_done
