#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# NVMe over Fabrics (RDMA transport) across the two-VM wire: the checks of
# 89-nvmeof.sh with the target on B and the host on A. B exports its RAM
# disk (brd, 64 MiB) on its eth0 address, port 4420; A connects, writes
# 16 MiB of random data with O_DIRECT (1 MiB blocks, then 64 x 4 KiB and
# 7 logical blocks inside it), reads it back (1 MiB blocks, and two
# readers at once) and compares, and has fio write 16 MiB more (random
# 4-128 KiB blocks, 16 in flight) and verify each block's CRC32C; B checks that its RAM disk holds the
# bytes A wrote (A passes their SHA-256). A disconnects, then B takes the
# target down in configfs. Over IPv4, then IPv6. Afterwards each side
# unloads its NVMe module, and its device's PDs, QPs, MRs and cm_ids are
# back where they started, its counters show the traffic, it can be
# deleted, and the kernel log is clean.
#
# Which RDMA device each side uses comes from the environment:
#   VROCE_NVME_A=vroce|rxe   (default vroce; the host)
#   VROCE_NVME_B=vroce|rxe   (default vroce; the target)
# "vroce" is the repo's module (vroce0 on eth0), "rxe" rdma_rxe (rxe0 on
# eth0); both sides load vroce, a side with rxe gives it no link. E.g.
# the self-test of the script, rxe on both sides:
#   scripts/vm --pair --env VROCE_NVME_A=rxe --env VROCE_NVME_B=rxe \
#     tests/vm/89-nvmeof-pair.sh
#
# vm: pair
# vm: timeout=900
# vm: install=1

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_nvmeof.sh"

pair_kind VROCE_NVME vroce

if [ "$VROCE_ROLE" = a ]; then
	tap_plan $((2 + 2 * 10 + 6))
else
	tap_plan $((3 + 2 * 3 + 6))
fi

# Both sides set up their device, or neither goes on.
pair_ready

no_mods=
if [ "$VROCE_ROLE" = b ]; then
	step "" 60 "nvmet, nvmet-rdma loaded, configfs" \
		nvme_modules nvmet nvmet-rdma || no_mods="modules not loaded"
	step "" 60 "RAM disk /dev/ram0 (brd, 64 MiB)" ramdisk ||
		no_mods=${no_mods:-"no RAM disk"}
	vm_send sectors "$(cat /sys/block/ram0/size 2>/dev/null)"
else
	step "" 60 "nvme-fabrics, nvme-rdma loaded" \
		nvme_modules nvme-fabrics nvme-rdma || no_mods="modules not loaded"
	sectors=$(vm_recv sectors 120)
fi

# target_cycle FAM ADDR PORT NQN (B): 3 TAP lines.
target_cycle() {
	local fam=$1 addr=$2 port=$3 nqn=$4 pre="IPv$1:" no_tgt=$no_mods sum
	local ram=skip
	step "$no_tgt" 60 "$pre target: $nqn on rdma $addr:4420 (/dev/ram0)" \
		target_up "$fam" "$addr" "$nqn" "$port" || no_tgt=${no_tgt:-"no target"}
	vm_send "target$fam" "${no_tgt:-ok}"
	# The host connects, does its I/O and disconnects.
	vm_barrier "host$fam" 1200
	sum=$(vm_recv "sum$fam" 10)
	case $sum in
	none | "")
		tap_skip "$pre /dev/ram0 holds what the host wrote" \
			"the host wrote nothing"
		;;
	*)
		ram=fail
		step "$no_tgt" 60 "$pre /dev/ram0 holds what the host wrote" \
			ram_matches "$sum" && ram=ok
		;;
	esac
	vm_send "ram$fam" "$ram"
	step "$no_mods" 90 "$pre target torn down (configfs empty)" \
		target_down "$nqn" "$port"
}

# host_cycle FAM ADDR NQN (A): 10 TAP lines.
host_cycle() {
	local fam=$1 addr=$2 nqn=$3 pre="IPv$1:" target no_host no_ns no_data
	rm -f "$work/ctrl" "$work/ns"
	target=$(vm_recv "target$fam" 120)
	no_host=$no_mods
	[ "$target" = ok ] || no_host=${no_host:-"no target on B (${target:-nothing})"}
	step "$no_host" 120 "$pre host connects to $addr over RDMA" \
		connect "$addr" "$nqn" || no_host=${no_host:-"not connected"}
	no_ns=$no_host
	step "$no_ns" 60 "$pre namespace block device, size of B's /dev/ram0" \
		wait_ns "$sectors" || no_ns=${no_ns:-"no namespace"}
	host_data "$no_ns" "$pre" "at once"
	send_sum "$fam"
	step "$no_host" 90 "$pre disconnect (delete_controller)" disconnect
	peer_ram "$fam"
}

t_start=$SECONDS
for fam in 4 6; do
	t0=$SECONDS
	if [ "$fam" = 4 ]; then
		addr=192.0.2.2
	else
		addr=2001:db8::2
	fi
	nqn="nqn.2024-01.org.vroce:nvmeof-pair-ipv$fam"
	if [ "$VROCE_ROLE" = b ]; then
		target_cycle "$fam" "$addr" "$fam" "$nqn"
	else
		host_cycle "$fam" "$addr" "$nqn"
	fi
	tap_diag "IPv$fam: $((SECONDS - t0)) s"
done

if [ "$VROCE_ROLE" = b ]; then
	step "" 90 "nvmet-rdma unloaded" nvme_unload nvmet_rdma
else
	step "" 90 "nvme-rdma unloaded" nvme_unload nvme_rdma
fi
step "" 40 "rdma resource show $dev: PDs, QPs, cm_ids, MRs back to the MAD layer's" \
	res_back

# The two cycles moved 32 MiB from A to B (the writes) and 64 MiB from B
# to A (the reads): 8,192 packets or more each way even at a 4096-byte
# MTU.
dev_packets
[ "$tx" -ge 8192 ] && [ "$rx" -ge 8192 ]
tap_result $? "$dev counters: $tx packets sent, $rx received (8192 or more)"

# Neither side removes its device while the other may still use it.
vm_barrier end 300
step "" 60 "rdma link delete $dev" rdma link delete "$dev"
kernel_log_checks
tap_diag "$kind ($VROCE_ROLE): $((SECONDS - t_start)) s for both cycles and the teardown"
tap_done
