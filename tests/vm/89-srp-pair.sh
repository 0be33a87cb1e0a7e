#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# SCSI RDMA Protocol across the two-VM wire, over rdma_cm. B runs the
# kernel's SRP target (ib_srpt in LIO, set up in configfs: no targetcli):
# its RAM disk (brd, 64 MiB) is LUN 0 of the target port named after B's
# GID 0, open to A's initiator port ID only, and ib_srpt listens on
# rdma_cm port 5555. A's initiator (ib_srp) logs in by writing
# "id_ext=...,ioc_guid=...,dest=ADDR:5555" to add_target (no srptools),
# and does on the SCSI disk that appears what 89-nvmeof-pair does on its
# namespace: 16 MiB of random data with O_DIRECT (1 MiB blocks, then
# 64 x 4 KiB and 7 logical blocks inside it), read back (1 MiB blocks,
# and two readers at once) and compared, then fio's 16 MiB of random
# 4-128 KiB writes, 16 in flight, each block's CRC32C verified. B checks
# that its RAM disk holds the bytes A wrote (A passes their SHA-256), and
# A deletes the remote port. Over IPv4, then IPv6, to the same target.
# Afterwards B takes the target down, both unload their SRP modules, each
# device's PDs, QPs, MRs and cm_ids are back where they started, its
# counters show the traffic and no retransmit or timeout (vroce), it can
# be deleted, and the kernel log is clean.
#
# Which RDMA device each side uses comes from the environment, as in
# 89-nvmeof-pair.sh:
#   VROCE_SRP_A=vroce|rxe   (default vroce; the initiator)
#   VROCE_SRP_B=vroce|rxe   (default vroce; the target)
# e.g. the script's self-test, rdma_rxe on both sides:
#   scripts/vm --pair --env VROCE_SRP_A=rxe --env VROCE_SRP_B=rxe \
#     tests/vm/89-srp-pair.sh
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
. "$(dirname "$0")/_lio.sh"

pair_kind VROCE_SRP vroce
[ "$kind" = vroce ] && clean=2 || clean=0

export srp_port=5555

if [ "$VROCE_ROLE" = a ]; then
	tap_plan $((2 + 2 * 10 + 6 + clean))
else
	tap_plan $((4 + 2 * 1 + 7 + clean))
fi

pair_ready

# gid0_hex: $dev's GID 0 as 32 hex digits. Both ends name ports after it:
# ib_srpt its target port, ib_srp the low half of its initiator port ID.
gid0_hex() {
	local g
	g=$(cat "/sys/class/infiniband/$dev/ports/1/gids/0") || return 1
	g=${g//:/}
	[ ${#g} -eq 32 ] || return 1
	echo "$g"
}

# ---- target (B) --------------------------------------------------------

srpt_modules() {
	lio_modules ib_srpt || return 1
	echo "# srpt_service_guid $(cat /sys/module/ib_srpt/parameters/srpt_service_guid)"
}

# srpt_up WWN IPORT: /dev/ram0 as LUN 0 of target port WWN for the
# initiator port IPORT only; enabled, and rdma_cm listening.
srpt_up() {
	lio_export srpt "$1" "$2" &&
		echo 1 >"$tcfs/srpt/$1/tpgt_1/enable" &&
		echo "$srp_port" >"$tcfs/srpt/discovery_auth/rdma_cm_port" ||
		return 1
	echo "# $tcfs/srpt/$1: LUN 0 /dev/ram0, ACL $2," \
		"rdma_cm port $(cat "$tcfs/srpt/discovery_auth/rdma_cm_port")"
}

# srpt_down WWN IPORT: all of srpt_up undone.
srpt_down() {
	local rc=0
	echo 0 >"$tcfs/srpt/discovery_auth/rdma_cm_port" || rc=1
	lio_unexport srpt "$1" "$2" || rc=1
	return "$rc"
}

# ---- initiator (A) ------------------------------------------------------

srp_host() {
	echo "/sys/class/infiniband_srp/srp-$dev-1"
}

# srp_modules: the initiator and the SCSI disk driver (no udev loads it).
srp_modules() {
	modprobe ib_srp && modprobe sd_mod && test -e "$(srp_host)/add_target"
}

# srp_login ADDR GUID: add_target, then the new SCSI host of ib_srp goes
# into $work/host.
srp_login() {
	local before h n=""
	before=$(ls /sys/class/srp_remote_ports 2>/dev/null)
	echo "id_ext=$2,ioc_guid=$2,dest=$1:$srp_port" >"$(srp_host)/add_target" ||
		return 1
	for h in /sys/class/srp_remote_ports/*; do
		[ -e "$h" ] || continue
		grep -qx "${h##*/}" <<<"$before" && continue
		n=${h##*/}
	done
	[ -n "$n" ] || { echo "no new SRP remote port"; return 1; }
	# port-H:1: SCSI host H.
	n=${n#port-}
	echo "host${n%%:*}" >"$work/host"
	echo "# ${h##*/}: SCSI host${n%%:*}, $(cat "/sys/class/scsi_host/host${n%%:*}/proc_name")," \
		"state $(cat "$h/state" 2>/dev/null)"
}

# srp_logout: delete the remote port of $work/host; its SCSI host goes.
srp_logout() {
	local h
	h=$(cat "$work/host") || return 1
	echo 1 >"/sys/class/srp_remote_ports/port-${h#host}:1/delete" &&
		scsi_host_gone
}

export -f gid0_hex srpt_modules srpt_up srpt_down srp_host srp_modules \
	srp_login srp_logout

t_start=$SECONDS
no_mods=
if [ "$VROCE_ROLE" = b ]; then
	step "" 60 "target_core_mod, target_core_iblock, ib_srpt loaded, configfs" \
		srpt_modules || no_mods="modules not loaded"
	step "" 60 "RAM disk /dev/ram0 (brd, 64 MiB)" ramdisk ||
		no_mods=${no_mods:-"no RAM disk"}
	wwn=0x$(gid0_hex)
	vm_send sectors "$(cat /sys/block/ram0/size 2>/dev/null)"
	vm_send guid "$(cat /sys/module/ib_srpt/parameters/srpt_service_guid 2>/dev/null)"
	iport=0x0000000000000000$(vm_recv iid 120)
	no_tgt=$no_mods
	step "$no_tgt" 60 "target port $wwn: LUN 0 on /dev/ram0, ACL $iport, rdma_cm port $srp_port" \
		srpt_up "$wwn" "$iport" || no_tgt=${no_tgt:-"no target"}
	vm_send target "${no_tgt:-ok}"
	for fam in 4 6; do
		lio_target_cycle "$fam"
	done
	step "$no_mods" 90 "target torn down (configfs empty)" srpt_down "$wwn" "$iport"
	step "" 90 "ib_srpt and LIO (target_core_*) unloaded" lio_unload ib_srpt
else
	step "" 60 "ib_srp, sd_mod loaded, $(srp_host)/add_target there" \
		srp_modules || no_mods="modules not loaded"
	sectors=$(vm_recv sectors 120)
	guid=$(vm_recv guid 120)
	iid=$(gid0_hex)
	vm_send iid "${iid:16}"
	target=$(vm_recv target 120)
	[ "$target" = ok ] || no_mods=${no_mods:-"no target on B (${target:-nothing})"}
	for fam in 4 6; do
		t0=$SECONDS
		if [ "$fam" = 4 ]; then
			addr=192.0.2.2
		else
			addr="[2001:db8::2]"
		fi
		scsi_host_cycle "$fam" "ib_srp logs in to $addr:$srp_port over rdma_cm" \
			"remote port deleted, its SCSI host gone" srp_login "$addr" "$guid" \
			-- srp_logout
		tap_diag "IPv$fam: $((SECONDS - t0)) s"
	done
	step "" 90 "ib_srp unloaded" nvme_unload ib_srp
fi
scsi_pair_finish
tap_diag "$kind ($VROCE_ROLE): $((SECONDS - t_start)) s"
tap_done
