# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The kernel's SCSI target (LIO) and SCSI initiators for the VM tests of
# SCSI over RDMA (89-srp-pair.sh, 89-iser-pair.sh), on top of lib.sh,
# _vroce.sh and _nvmeof.sh (source those first). LIO is set up in
# configfs directly: no targetcli.
#
#   lio_modules MODULE...    LIO, its block backend and the fabric
#                            MODULEs loaded, configfs mounted
#   lio_export FABRIC WWN IPORT
#                            /dev/ram0 as LUN 0 of FABRIC's target WWN,
#                            tpgt_1, for the initiator port IPORT only
#                            (not enabled: the fabric's own step)
#   lio_unexport FABRIC WWN IPORT
#                            all of lio_export undone, with the fabric's
#                            directory and the backstore; then nothing
#                            is left in configfs
#   lio_unload MODULE...     the MODULEs, then LIO with every backend it
#                            loaded (file, pscsi, user)
#   scsi_disk SECTORS        LUN 0 of the SCSI host in $work/host shows
#                            up as a disk SECTORS sectors big; its name
#                            goes into $work/ns
#   scsi_host_gone           the SCSI host in $work/host goes away
#   lio_target_cycle FAM     (B) one TAP line: /dev/ram0 holds what the
#                            initiator wrote in the cycle of IPv FAM;
#                            skipped with $no_tgt as the reason if set
#   scsi_host_cycle FAM LOGIN LOGOUT CMD... -- CMD...
#                            (A) the initiator's cycle of IPv FAM, 10 TAP
#                            lines: the first CMD logs in (described as
#                            LOGIN; it puts the new SCSI host into
#                            $work/host), the disk of LUN 0 is $sectors
#                            big, host_data on it, the second CMD logs
#                            out (LOGOUT), and B found the bytes; skipped
#                            with $no_mods as the reason if set
#   scsi_pair_finish [FILE]  (both) the end of an SCSI pair test: $dev's
#                            resources back, its counters, rdma link
#                            delete, the kernel log (FILE for
#                            lio_log_checks); 6 TAP lines, 8 on vroce
#   lio_log_checks [FILE]    two TAP lines: no oops/WARNING/BUG, no SCSI
#                            I/O errors, aborts, resets or failed logins
#                            but the kernel log lines listed in FILE

# shellcheck shell=bash
# Functions run by step in a child bash, not called directly here.
# shellcheck disable=SC2317

export tcfs=/sys/kernel/config/target

lio_modules() {
	local m
	for m in target_core_mod target_core_iblock "$@"; do
		modprobe "$m" || return 1
	done
	[ -d "$tcfs" ] || mount -t configfs none /sys/kernel/config || return 1
	[ -d "$tcfs/core" ] || { echo "no $tcfs/core"; return 1; }
}

lio_export() {
	local bs=$tcfs/core/iblock_0/ram0 tpg=$tcfs/$1/$2/tpgt_1
	mkdir -p "$bs" &&
		echo "udev_path=/dev/ram0" >"$bs/control" &&
		echo 1 >"$bs/enable" &&
		mkdir -p "$tpg" &&
		mkdir "$tpg/lun/lun_0" &&
		ln -s "$bs" "$tpg/lun/lun_0/ram0" &&
		mkdir "$tpg/acls/$3" &&
		mkdir "$tpg/acls/$3/lun_0" &&
		ln -s "$tpg/lun/lun_0" "$tpg/acls/$3/lun_0/lun_0"
}

lio_unexport() {
	local rc=0 tpg=$tcfs/$1/$2/tpgt_1 d
	if [ -d "$tpg" ]; then
		echo 0 >"$tpg/enable" || rc=1
		rm -f "$tpg/acls/$3/lun_0/lun_0" "$tpg/lun/lun_0/ram0" || rc=1
		for d in "$tpg/acls/$3/lun_0" "$tpg/acls/$3" "$tpg/lun/lun_0" \
			"$tpg"/np/*; do
			if [ -d "$d" ]; then rmdir "$d" || rc=1; fi
		done
		rmdir "$tpg" || rc=1
	fi
	for d in "$tcfs/$1/$2" "$tcfs/$1" "$tcfs/core/iblock_0/ram0" \
		"$tcfs/core/iblock_0"; do
		if [ -d "$d" ]; then rmdir "$d" || rc=1; fi
	done
	for d in "$tcfs"/core/*_* "$tcfs/$1"; do
		[ -e "$d" ] || continue
		echo "left in configfs: $d"
		rc=1
	done
	return "$rc"
}

lio_unload() {
	local m
	for m in "$@" target_core_iblock target_core_file target_core_pscsi \
		target_core_user target_core_mod; do
		[ -d "/sys/module/$m" ] || continue
		modprobe -r "$m" || { lsmod | grep -E "^target|$1"; return 1; }
	done
}

scsi_disk() {
	local h d n="" i
	h=$(cat "$work/host") || return 1
	for ((i = 0; i < 150; i++)); do
		for d in /sys/class/scsi_host/"$h"/device/target*/*:*:*:0/block/* \
			/sys/class/scsi_host/"$h"/device/session*/target*/*:*:*:0/block/*; do
			[ -b "/dev/${d##*/}" ] && n=${d##*/}
		done
		[ -n "$n" ] && break
		sleep 0.2
	done
	[ -n "$n" ] || { echo "no disk under $h"; return 1; }
	echo "$n" >"$work/ns"
	echo "# /dev/$n: $(cat "/sys/block/$n/size") sectors, model" \
		"$(cat "/sys/block/$n/device/model"), logical block" \
		"$(cat "/sys/block/$n/queue/logical_block_size")"
	[ "$(cat "/sys/block/$n/size")" = "$1" ] || { echo "not $1 sectors"; return 1; }
}

scsi_host_gone() {
	local h i
	h=$(cat "$work/host") || return 1
	for ((i = 0; i < 150; i++)); do
		[ -e "/sys/class/scsi_host/$h" ] || return 0
		sleep 0.2
	done
	echo "/sys/class/scsi_host/$h still there"
	return 1
}

lio_target_cycle() {
	local fam=$1 pre="IPv$1:" sum ram=skip
	vm_barrier "host$fam" 1200
	sum=$(vm_recv "sum$fam" 10)
	case $sum in
	none | "")
		tap_skip "$pre /dev/ram0 holds what the initiator wrote" \
			"the initiator wrote nothing"
		;;
	*)
		ram=fail
		step "$no_tgt" 60 "$pre /dev/ram0 holds what the initiator wrote" \
			ram_matches "$sum" && ram=ok
		;;
	esac
	vm_send "ram$fam" "$ram"
}

scsi_host_cycle() {
	local fam=$1 pre="IPv$1:" login=$2 logout=$3 no_host no_disk
	local -a in=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		in+=("$1")
		shift
	done
	shift
	rm -f "$work/host" "$work/ns"
	no_host=$no_mods
	step "$no_host" 120 "$pre $login" "${in[@]}" || no_host=${no_host:-"no login"}
	no_disk=$no_host
	step "$no_disk" 60 "$pre SCSI disk of LUN 0, size of B's /dev/ram0" \
		scsi_disk "$sectors" || no_disk=${no_disk:-"no disk"}
	host_data "$no_disk" "$pre" "at once"
	send_sum "$fam"
	step "$no_host" 90 "$pre $logout" "$@"
	peer_ram "$fam"
}

# ib_srpt and ib_isert log the receives a logout flushes (status 5,
# IB_WC_WR_FLUSH_ERR): no error.
lio_log_checks() {
	local bad known=${1:-/dev/null}
	kernel_oops_check
	bad=$(dmesg | grep -E 'I/O error|critical medium error|Buffer I/O|(srp|iser).*(abort|reset|timed out|[Ff]ailed)|(ib_srpt|isert).*([Ff]ailed|rejected)|ABORT_TASK|LUN_RESET|[Cc]onnection.*error' |
		grep -Ev 'ib_srpt receiving failed for ioctx [0-9a-f]+ with status 5$' |
		grep -vxFf "$known")
	[ -z "$bad" ]
	tap_result $? "kernel log: no SCSI I/O errors, aborts, resets or failed logins"
	[ -z "$bad" ] || printf '%s\n' "$bad" | head -n 40 | sed 's/^/#   /'
	tap_diag "dmesg of the SCSI target, initiator and $dev:"
	dmesg | grep -Ei "srp|iser|iscsi|scsi|sd[a-z]|target|$dev|brd" | tail -n 30 |
		sed 's/^/#   /'
}

scsi_pair_finish() {
	# Each cycle moved 48 MiB from A to B (the writes) and 80 MiB from B
	# to A (the reads).
	pair_finish
	lio_log_checks "$@"
}

export -f lio_modules lio_export lio_unexport lio_unload scsi_disk \
	scsi_host_gone
