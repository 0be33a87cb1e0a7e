#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
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
# with what it wrote and with the RAM disk itself. Then it disconnects and
# the target is taken down through configfs. Over IPv4, then IPv6 (a
# fresh target and fresh data each time); no nvme-cli, configfs and
# /dev/nvme-fabrics only. At the end, with nvme-rdma and nvmet-rdma
# unloaded, the device's PDs, QPs, MRs and cm_ids are back where they
# started, its counters show the traffic, it can be deleted, and the
# kernel log has no WARNING, BUG, I/O error, timeout or reconnect.
#
# The device comes from the environment:
#   VROCE_NVME_DEV=vroce|rxe   (default vroce)
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
#
# vm: timeout=900
# vm: install=1

# Functions run by step in a child bash, not called directly here.
# shellcheck disable=SC2317
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

kind=${VROCE_NVME_DEV:-vroce}
case $kind in
vroce) dev=vroce0 ;;
rxe) dev=rxe0 ;;
*) tap_bail "VROCE_NVME_DEV=$kind: want vroce or rxe" ;;
esac

export cfs=/sys/kernel/config/nvmet
export work=/tmp/nvmeof
mkdir -p "$work"
steplog=$work/step.log

tap_plan $((4 + 2 * 12 + 6))

# What step runs in a child bash needs to be exported.
export -f wait_for vm_gid_index vm_gid_hex _vm_sleep

# The tail of the kernel log and the device's counters, after a failure.
failure_info() {
	tap_diag "dmesg, last 40 lines:"
	dmesg | tail -n 40 | sed 's/^/#   /'
	tap_diag "rdma statistic show link $dev/1:"
	rdma statistic show link "$dev/1" 2>&1 | sed 's/^/#   /'
}

# step NEED S DESC CMD...: one TAP line for CMD, run in a child bash
# under a limit of S seconds (functions are exported). Skipped, with NEED
# as the reason, if NEED is not empty. CMD's output becomes diagnostics:
# all of it when it fails, its "# " lines when it succeeds.
step() {
	local need=$1 limit=$2 desc=$3 rc t0=$SECONDS
	shift 3
	if [ -n "$need" ]; then
		tap_skip "$desc" "$need"
		return 1
	fi
	timeout -k 5 "$limit" bash -c '"$@"' _ "$@" >"$steplog" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		tap_ok "$desc ($((SECONDS - t0)) s)"
		grep '^# ' "$steplog"
		return 0
	fi
	tap_fail "$desc ($((SECONDS - t0)) s)"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		tap_diag "timed out after $limit s: $*"
	else
		tap_diag "command: $* (status $rc)"
	fi
	sed 's/^/#   /' "$steplog"
	failure_info
	return 1
}

# dd_q WHAT ARGS...: dd ARGS, its summary ("N bytes copied, T s, R MB/s")
# as a "# WHAT: " line; all of its output if it fails.
dd_q() {
	local what=$1 out line
	shift
	if ! out=$(dd "$@" 2>&1); then
		printf '%s\n' "$out"
		return 1
	fi
	while IFS= read -r line; do
		case $line in *" copied, "*) echo "# $what: $line" ;; esac
	done <<<"$out"
}

# ---- the device, the modules, the RAM disk --------------------------

dev_up() {
	if [ "$kind" = rxe ]; then
		modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0
	else
		rdma_add vroce0 eth0 || { echo "$rdma_err"; false; }
	fi
}
if dev_up >"$steplog" 2>&1; then
	tap_ok "$dev ($kind) on eth0"
else
	tap_fail "$dev ($kind) on eth0"
	sed 's/^/#   /' "$steplog"
	tap_bail "no RDMA device"
fi

gids_ok() {
	vm_wait_port_active "$dev" 30 &&
		wait_for 20 vm_gid_index "$dev" "$VROCE_SELF_IP4" &&
		wait_for 20 vm_gid_index "$dev" "$VROCE_SELF_IP6"
}
gids_ok
tap_result $? "$dev port active, RoCE v2 GIDs of $VROCE_SELF_IP4 and $VROCE_SELF_IP6"
# The MAD layer's objects (and nothing else): the count to come back to.
res_before=$(rdma resource show "$dev" 2>&1)
tap_diag "rdma resource show $dev: $res_before"

modules() {
	local m
	for m in nvmet nvmet-rdma nvme-fabrics nvme-rdma; do
		modprobe "$m" || return 1
	done
	[ -d "$cfs" ] || mount -t configfs none /sys/kernel/config || return 1
	if [ ! -d "$cfs/subsystems" ] || [ ! -c /dev/nvme-fabrics ]; then
		echo "no $cfs/subsystems or /dev/nvme-fabrics"
		return 1
	fi
}
export -f modules dd_q
no_mods=
step "" 60 "nvmet, nvmet-rdma, nvme-fabrics, nvme-rdma loaded, configfs" \
	modules || no_mods="modules not loaded"

ramdisk() {
	modprobe brd rd_nr=1 rd_size=65536 || return 1
	wait_for 10 test -b /dev/ram0 || { echo "no /dev/ram0"; return 1; }
	echo "# /dev/ram0: $(($(cat /sys/block/ram0/size) / 2048)) MiB"
}
export -f ramdisk
no_ram=
step "" 60 "RAM disk /dev/ram0 (brd, 64 MiB)" ramdisk || no_ram="no RAM disk"

# ---- target (configfs) ---------------------------------------------

# target_up FAM ADDR NQN PORT: subsystem NQN with namespace 1 on
# /dev/ram0, any host allowed, on nvmet port PORT: rdma, ADDR:4420.
target_up() {
	local fam=$1 addr=$2 nqn=$3 s=$cfs/subsystems/$3 p=$cfs/ports/$4
	mkdir "$s" &&
		echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" &&
		echo /dev/ram0 >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/enable" &&
		mkdir "$p" &&
		echo rdma >"$p/addr_trtype" &&
		echo "ipv$fam" >"$p/addr_adrfam" &&
		echo "$addr" >"$p/addr_traddr" &&
		echo 4420 >"$p/addr_trsvcid" &&
		ln -s "$s" "$p/subsystems/$nqn" || return 1
	# nvmet-rdma: "enabling port P (ADDR:4420)"; listening on rdma_cm.
	if ! dmesg | grep -q "nvmet_rdma: enabling port $4 "; then
		echo "no \"enabling port $4\" in the kernel log"
		return 1
	fi
	echo "# $(dmesg | grep "nvmet_rdma: enabling port $4 " | tail -n 1)"
}

# target_down NQN PORT: unlink the subsystem from the port, remove the
# port, disable and remove the namespace, remove the subsystem; then
# nothing is left in configfs. Goes as far as it can.
target_down() {
	local rc=0 s=$cfs/subsystems/$1 p=$cfs/ports/$2 d
	if [ -L "$p/subsystems/$1" ]; then rm "$p/subsystems/$1" || rc=1; fi
	if [ -d "$p" ]; then rmdir "$p" || rc=1; fi
	if [ -d "$s/namespaces/1" ]; then
		echo 0 >"$s/namespaces/1/enable" || rc=1
		rmdir "$s/namespaces/1" || rc=1
	fi
	if [ -d "$s" ]; then rmdir "$s" || rc=1; fi
	for d in "$cfs"/ports/* "$cfs"/subsystems/*; do
		[ -e "$d" ] || continue
		echo "left in configfs: $d"
		rc=1
	done
	return "$rc"
}

# ---- host ------------------------------------------------------------

# connect ADDR NQN: connect through /dev/nvme-fabrics; reading it back
# gives "instance=N,cntlid=M": nvmeN goes into $work/ctrl.
connect() {
	local opts="transport=rdma,traddr=$1,trsvcid=4420,nqn=$2"
	local line ctrl d
	# Give up on a lost controller after 30 s, not the default 600.
	opts+=",ctrl_loss_tmo=30,reconnect_delay=5"
	exec 3<>/dev/nvme-fabrics || return 1
	printf '%s' "$opts" >&3 || { echo "write \"$opts\" failed"; return 1; }
	read -r line <&3
	exec 3>&-
	case $line in
	instance=*) ;;
	*) echo "/dev/nvme-fabrics says \"$line\""; return 1 ;;
	esac
	ctrl=${line#instance=}
	ctrl=nvme${ctrl%%,*}
	echo "$ctrl" >"$work/ctrl"
	d=/sys/class/nvme/$ctrl
	echo "# $ctrl ($line): state $(cat "$d/state"), transport" \
		"$(cat "$d/transport"), $(cat "$d/address")," \
		"queues $(cat "$d/queue_count"), subsysnqn $(cat "$d/subsysnqn")"
	[ "$(cat "$d/transport")" = rdma ] && [ "$(cat "$d/subsysnqn")" = "$2" ]
}

# The namespace's block device: under the controller without native
# multipath, under its nvme-subsystem with it (nvmeXcYnZ being the hidden
# per-path disk).
ns_of() {
	local c=$1 d n
	for d in /sys/class/nvme/"$c"/nvme*n* /sys/class/nvme-subsystem/*/nvme*n*; do
		[ -d "$d" ] || continue
		n=${d##*/}
		case $n in nvme*c*n*) continue ;; esac
		case $d in
		/sys/class/nvme-subsystem/*) [ -e "${d%/*}/$c" ] || continue ;;
		esac
		[ -b "/dev/$n" ] || continue
		echo "$n"
		return 0
	done
	return 1
}

# wait_ns: the namespace of $work/ctrl shows up, as big as the RAM disk;
# its name goes into $work/ns.
wait_ns() {
	local c n i
	c=$(cat "$work/ctrl") || return 1
	for ((i = 0; i < 150; i++)); do
		n=$(ns_of "$c") && break
		sleep 0.2
	done
	[ -n "$n" ] || { echo "no namespace block device for $c"; return 1; }
	echo "$n" >"$work/ns"
	echo "# /dev/$n: $(cat "/sys/block/$n/size") sectors," \
		"logical block $(cat "/sys/block/$n/queue/logical_block_size")," \
		"max I/O $(cat "/sys/block/$n/queue/max_hw_sectors_kb") KiB"
	[ "$(cat "/sys/block/$n/size")" = "$(cat /sys/block/ram0/size)" ] || {
		echo "size differs from /dev/ram0's"
		return 1
	}
}

# disconnect: delete the controller; it goes away.
disconnect() {
	local c i
	c=$(cat "$work/ctrl") || return 1
	echo 1 >"/sys/class/nvme/$c/delete_controller" || return 1
	for ((i = 0; i < 150; i++)); do
		[ -e "/sys/class/nvme/$c" ] || return 0
		sleep 0.2
	done
	echo "/sys/class/nvme/$c still there"
	return 1
}

# ---- data ------------------------------------------------------------
# $work/src: 16 MiB of fresh random data; $work/exp: what the first
# 16 MiB of the namespace must hold after all the writes.

write_big() {
	dd if=/dev/urandom of="$work/src" bs=1M count=16 iflag=fullblock status=none &&
		cp "$work/src" "$work/exp" &&
		dd_q write if="$work/src" of="/dev/$1" bs=1M count=16 oflag=direct conv=fsync
}

# 64 direct 4 KiB writes at 4 KiB block 1000 (not 1 MiB aligned).
write_4k() {
	dd if=/dev/urandom of="$work/small" bs=4k count=64 iflag=fullblock status=none &&
		dd if="$work/small" of="$work/exp" bs=4k seek=1000 conv=notrunc status=none &&
		dd_q write if="$work/small" of="/dev/$1" bs=4k seek=1000 oflag=direct conv=fsync &&
		dd_q read if="/dev/$1" of="$work/small.rd" bs=4k skip=1000 count=64 iflag=direct &&
		cmp "$work/small" "$work/small.rd"
}

# 7 direct writes of one logical block each, at block 9.
write_lb() {
	local lbs
	lbs=$(cat "/sys/block/$1/queue/logical_block_size") || return 1
	dd if=/dev/urandom of="$work/tiny" bs="$lbs" count=7 iflag=fullblock status=none &&
		dd if="$work/tiny" of="$work/exp" bs="$lbs" seek=9 conv=notrunc status=none &&
		dd_q write if="$work/tiny" of="/dev/$1" bs="$lbs" seek=9 oflag=direct conv=fsync
}

read_back() {
	rm -f "$work/rd"
	dd_q read if="/dev/$1" of="$work/rd" bs=1M count=16 iflag=direct &&
		cmp "$work/exp" "$work/rd"
}

# Two readers at once, one on each CPU (one I/O queue each), 256 KiB
# blocks, 8 MiB each.
read_parallel() {
	local p0 p1 rc=0 pin0=() pin1=()
	if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
		pin0=(taskset -c 0)
		pin1=(taskset -c 1)
	fi
	rm -f "$work/p0" "$work/p1"
	"${pin0[@]}" dd if="/dev/$1" of="$work/p0" bs=256k count=32 \
		iflag=direct status=none &
	p0=$!
	"${pin1[@]}" dd if="/dev/$1" of="$work/p1" bs=256k count=32 skip=32 \
		iflag=direct status=none &
	p1=$!
	wait "$p0" || rc=1
	wait "$p1" || rc=1
	[ "$rc" -eq 0 ] || return 1
	cat "$work/p0" "$work/p1" | cmp - "$work/exp"
}

# What the target's RAM disk holds (direct: no stale page cache).
ram_matches() {
	rm -f "$work/ram"
	dd_q "read /dev/ram0" if=/dev/ram0 of="$work/ram" bs=1M count=16 iflag=direct &&
		cmp "$work/exp" "$work/ram"
}

export dev kind
export -f target_up target_down connect ns_of wait_ns disconnect \
	write_big write_4k write_lb read_back read_parallel ram_matches

# ---- one cycle -------------------------------------------------------

# cycle FAM ADDR PORT: 12 TAP lines.
cycle() {
	local fam=$1 addr=$2 port=$3 nqn="nqn.2024-01.org.vroce:nvmeof-ipv$1"
	local pre="IPv$fam:" no_tgt=${no_mods:-$no_ram} no_host no_ns no_data ns t0=$SECONDS
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
		wait_ns || no_ns=${no_ns:-"no namespace"}
	ns=$(cat "$work/ns" 2>/dev/null)
	no_data=$no_ns
	step "$no_data" 180 "$pre write 16 MiB, 1 MiB O_DIRECT blocks" \
		write_big "$ns" || no_data=${no_data:-"the 16 MiB write failed"}
	step "$no_data" 120 "$pre write 64 x 4 KiB O_DIRECT at 4 KiB block 1000, read back" \
		write_4k "$ns"
	step "$no_data" 60 "$pre write 7 logical blocks O_DIRECT at block 9" \
		write_lb "$ns"
	step "$no_data" 180 "$pre read 16 MiB back (1 MiB O_DIRECT), same bytes" \
		read_back "$ns"
	step "$no_data" 180 "$pre two readers on two CPUs (256 KiB O_DIRECT), same bytes" \
		read_parallel "$ns"
	step "$no_data" 60 "$pre /dev/ram0 holds the same bytes" ram_matches
	step "$no_host" 90 "$pre disconnect (delete_controller)" disconnect
	step "${no_mods:-$no_ram}" 90 "$pre target torn down (configfs empty)" \
		target_down "$nqn" "$port"
	tap_diag "IPv$fam: $((SECONDS - t0)) s"
}

t_start=$SECONDS
cycle 4 "$VROCE_SELF_IP4" 1
cycle 6 "$VROCE_SELF_IP6" 2

# ---- afterwards ------------------------------------------------------

unload() {
	modprobe -r nvme_rdma nvmet_rdma
}
export -f unload
step "" 90 "nvme-rdma and nvmet-rdma unloaded" unload

# "rdma resource show DEV": "0: DEV: pd 1 cq 1 qp 1 cm_id 0 mr 0 ..."
# res_count KIND [TEXT]: the count of KIND in TEXT, or in what it says now.
res_count() {
	local -a w
	read -ra w <<<"${2:-$(rdma resource show "$dev" 2>&1)}"
	local i
	for ((i = 0; i < ${#w[@]} - 1; i++)); do
		[ "${w[i]}" = "$1" ] && { echo "${w[i + 1]}"; return 0; }
	done
	return 1
}
# The same PDs, QPs, cm_ids, MRs and SRQs as before the NVMe runs. The
# CQ count may have grown: nvme-rdma and nvmet-rdma take their CQs from
# the device's CQ pool (ib_cq_pool_get), which keeps them until the device
# is removed.
res_same() {
	local now k
	now=$(rdma resource show "$dev" 2>&1)
	for k in pd qp cm_id mr srq; do
		[ "$(res_count "$k" "$now")" = "$(res_count "$k" "$res_before")" ] ||
			return 1
	done
	[ "$(res_count cq "$now")" -ge "$(res_count cq "$res_before")" ]
}
res_back() {
	if wait_for 20 res_same; then
		echo "# now: $(rdma resource show "$dev" 2>&1)"
		return 0
	fi
	echo "before: $res_before"
	echo "now:    $(rdma resource show "$dev" 2>&1)"
	rdma resource show qp 2>&1 | grep -E "(dev|link) $dev\b" | head -n 20
	rdma resource show cm_id 2>&1 | head -n 20
	return 1
}
export res_before
export -f res_count res_same res_back
step "" 40 "rdma resource show $dev: PDs, QPs, cm_ids, MRs back to the MAD layer's" res_back

# The traffic went through the device: the two cycles moved 96 MiB or
# more (16 MiB written, 16 MiB read back, 16 MiB read in parallel, each
# time), 24,576 packets even at a 4096-byte MTU. In loopback the device
# both sends and receives every packet.
stats=$(rdma statistic show link "$dev/1" 2>&1)
tap_diag "rdma statistic show link $dev/1: $stats"
counter() { # NAME: its value in $stats
	local -a w
	local i
	read -ra w <<<"$stats"
	for ((i = 0; i < ${#w[@]} - 1; i++)); do
		[ "${w[i]}" = "$1" ] && { echo "${w[i + 1]}"; return 0; }
	done
	echo 0
}
if [ "$kind" = rxe ]; then
	tx=$(counter sent_pkts) rx=$(counter rcvd_pkts)
else
	tx=$(counter tx_packets) rx=$(counter rx_packets)
fi
[ "$tx" -ge 24576 ] && [ "$rx" -ge 24576 ]
tap_result $? "$dev counters: $tx packets sent, $rx received (24576 or more)"

step "" 60 "rdma link delete $dev" rdma link delete "$dev"

# The whole kernel log: no oops, BUG or WARNING, no failed or stuck I/O,
# no error recovery or reconnect of a controller.
bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection fault|Call Trace|refcount_t:|list_(add|del) corruption|UBSAN|KASAN|hung_task|blocked for more than')
[ -z "$bad" ]
tap_result $? "kernel log: no WARNING, BUG, oops or hung task"
[ -z "$bad" ] || { printf '%s\n' "$bad" | head -n 40 | sed 's/^/#   /'; failure_info; }

nvme_bad=$(dmesg | grep -E '(nvme|nvmet|nvmet_rdma|nvme_rdma).*([Tt]imeout|error recovery|[Rr]econnect|I/O error|[Ff]ailed|error)|I/O error|critical medium error|Buffer I/O')
[ -z "$nvme_bad" ]
tap_result $? "kernel log: no NVMe timeouts, errors, error recovery or reconnects"
[ -z "$nvme_bad" ] || printf '%s\n' "$nvme_bad" | head -n 40 | sed 's/^/#   /'

tap_diag "dmesg of nvme, nvmet and $dev:"
dmesg | grep -E "nvme|nvmet|$dev|brd" | tail -n 30 | sed 's/^/#   /'
tap_diag "$kind: $((SECONDS - t_start)) s for both cycles and the teardown"
tap_done
