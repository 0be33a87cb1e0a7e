#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# vm: timeout=900
# vm: install=1
#
# A kernel ULP over the RDMA device: NVMe over Fabrics, RDMA transport,
# within one VM. The target (nvmet, nvmet-rdma) exports a RAM disk
# (brd, /dev/ram0, 64 MiB) on the VM's eth0 address, port 4420; the host
# (nvme-rdma) connects to it through /dev/nvme-fabrics, so every command
# and every byte goes through the device's loopback: rdma_cm over QP1,
# RC SENDs with inline data, FRWR registrations (IB_WR_REG_MR, LOCAL_INV,
# SEND_WITH_INV) and RDMA READs and WRITEs of the target. With O_DIRECT
# the host writes 16 MiB of random data (1 MiB blocks), then 64 x 4 KiB
# and 7 logical blocks inside it, reads it all back (1 MiB blocks, and
# 256 KiB blocks from both CPUs at once: both I/O queues), and compares
# with what it wrote and with the RAM disk itself; fio then writes 16 MiB
# more (random 4-128 KiB blocks, 16 in flight) and verifies each block's
# CRC32C. Then it disconnects and
# the target is taken down through configfs. Over IPv4, then IPv6 (a
# fresh target and fresh data each time); no nvme-cli, configfs and
# /dev/nvme-fabrics only. At the end, with nvme-rdma and nvmet-rdma
# unloaded, the device's PDs, QPs, MRs and cm_ids are back where they
# started, its counters show the traffic, it can be deleted, and the
# kernel log has no WARNING, BUG, I/O error, timeout or reconnect.
# 89-nvmeof-pair.sh does the same across two VMs.
#
# The device comes from the environment:
#   VROCE_NVME_DEV=vroce|rxe   (default vroce)
# and with VROCE_NVME_SRQ=1 the target takes its receives from shared
# receive queues (nvmet-rdma use_srq=1), which each cycle checks it
# created on the device (89-nvmeof-srq.sh).
# "vroce" is the repo's module (vroce0 on eth0), "rxe" rdma_rxe (rxe0 on
# eth0), the self-test of this script:
#   scripts/vm --env VROCE_NVME_DEV=rxe tests/vm/89-nvmeof.sh
# vroce is loaded in both cases; with rxe it gets no link, so it leaves
# UDP port 4791 to rxe.
#
# Nothing waits without a limit: each step runs under timeout(1), and the
# host gives up on a lost controller after ctrl_loss_tmo. A failed step
# prints the tail of the kernel log and the port counters; the steps
# that need it are then skipped, the teardown is always attempted.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_nvmeof.sh"

want_kind VROCE_NVME_DEV vroce
srq=${VROCE_NVME_SRQ:-0}

tap_plan $((4 + 2 * (13 + srq) + 6))

if nvme_dev "$kind" >"$steplog" 2>&1; then
	tap_ok "$dev ($kind) on eth0"
else
	tap_fail "$dev ($kind) on eth0"
	sed 's/^/#   /' "$steplog"
	tap_bail "no RDMA device"
fi

vm_wait_port_active "$dev" 30 &&
	wait_for 20 vm_gid_index "$dev" "$VROCE_SELF_IP4" &&
	wait_for 20 vm_gid_index "$dev" "$VROCE_SELF_IP6"
tap_result $? "$dev port active, RoCE v2 GIDs of $VROCE_SELF_IP4 and $VROCE_SELF_IP6"
# The MAD layer's objects (and nothing else): what to come back to.
res_mark

no_mods=
[ "$srq" = 1 ] && modprobe nvmet-rdma use_srq=1
step "" 60 "nvmet, nvmet-rdma, nvme-fabrics, nvme-rdma loaded, configfs" \
	nvme_modules nvmet nvmet-rdma nvme-fabrics nvme-rdma ||
	no_mods="modules not loaded"
step "" 60 "RAM disk /dev/ram0 (brd, 64 MiB)" ramdisk ||
	no_mods=${no_mods:-"no RAM disk"}

# cycle FAM ADDR PORT: 12 TAP lines.
cycle() {
	local fam=$1 addr=$2 port=$3 nqn="nqn.2024-01.org.vroce:nvmeof-ipv$1"
	local pre="IPv$fam:" no_tgt=$no_mods no_host no_ns no_data t0=$SECONDS
	rm -f "$work/ctrl" "$work/ns"

	step "" 30 "$pre RoCE v2 GID of $addr on $dev" \
		wait_for 20 vm_gid_index "$dev" "$addr"
	step "$no_tgt" 60 "$pre target: $nqn on rdma $addr:4420 (/dev/ram0)" \
		target_up "$fam" "$addr" "$nqn" "$port" || no_tgt=${no_tgt:-"no target"}
	no_host=$no_tgt
	step "$no_host" 120 "$pre host connects over RDMA" \
		connect "$addr" "$nqn" || no_host=${no_host:-"not connected"}
	no_ns=$no_host
	step "$no_ns" 60 "$pre namespace block device, size of /dev/ram0" \
		wait_ns "$(cat /sys/block/ram0/size)" || no_ns=${no_ns:-"no namespace"}
	[ "$srq" = 1 ] && step "$no_host" 30 "$pre the target's SRQs on $dev" \
		srqs_up
	host_data "$no_ns" "$pre" "on two CPUs"
	step "$no_data" 60 "$pre /dev/ram0 holds the same bytes" ram_matches
	step "$no_host" 90 "$pre disconnect (delete_controller)" disconnect
	step "$no_mods" 90 "$pre target torn down (configfs empty)" \
		target_down "$nqn" "$port"
	tap_diag "IPv$fam: $((SECONDS - t0)) s"
}

t_start=$SECONDS
cycle 4 "$VROCE_SELF_IP4" 1
cycle 6 "$VROCE_SELF_IP6" 2

step "" 90 "nvme-rdma and nvmet-rdma unloaded" nvme_unload nvme_rdma nvmet_rdma
step "" 40 "rdma resource show $dev: PDs, QPs, cm_ids, MRs back to the MAD layer's" \
	res_back

# The traffic went through the device: the two cycles moved 96 MiB or
# more (16 MiB written, 16 MiB read back, 16 MiB read in parallel, each
# time), 24,576 packets even at a 4096-byte MTU. In loopback the device
# both sends and receives every packet.
dev_packets
[ "$tx" -ge 24576 ] && [ "$rx" -ge 24576 ]
tap_result $? "$dev counters: $tx packets sent, $rx received (24576 or more)"

step "" 60 "rdma link delete $dev" rdma link delete "$dev"
kernel_log_checks
tap_diag "$kind: $((SECONDS - t_start)) s for both cycles and the teardown"
tap_done
