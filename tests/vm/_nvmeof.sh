# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# NVMe over Fabrics (RDMA transport) for VM tests, on top of lib.sh and
# _vroce.sh (source those first). Used by 89-nvmeof.sh (target and host
# in one VM) and 89-nvmeof-pair.sh (target on B, host on A). No nvme-cli:
# the target is set up in configfs, the host connects through
# /dev/nvme-fabrics.
#
#   nvme_dev KIND            create the RDMA device of KIND on eth0 (vroce:
#                            vroce0, rxe: rxe0); sets and exports $dev, $kind
#   pair_ready               nvme_dev $kind on both VMs of a pair, port
#                            active with both addresses' GIDs: one TAP
#                            line; bails out unless both sides have it;
#                            then res_mark
#   step NEED S DESC CMD...  one TAP line for CMD (below)
#   host_data NEED PRE READERS
#                            the host's five data steps on the namespace
#                            (below); sets $no_data
#   send_sum FAM             (host) send B the SHA-256 of $work/exp as
#                            "sumFAM", or "none" if $no_data says the data
#                            was not written
#   peer_ram FAM             (host) one TAP line: B found those bytes in its
#                            RAM disk ("ramFAM"), after barrier "hostFAM"
#   failure_info             dmesg tail and the port counters, as diagnostics
#   res_mark                 remember what rdma resource show says of $dev
#   res_back                 $dev's PDs, QPs, cm_ids, MRs are back to what
#                            res_mark saw (CQs may stay in the CQ pool)
#   dev_packets              $tx and $rx: the packets $dev sent and received
#   pair_finish              resources back, counters, device deleted
#   kernel_oops_check        one TAP line: no oops/WARNING/BUG in dmesg
#   kernel_log_checks        two TAP lines: no oops/WARNING/BUG, no NVMe
#                            errors, timeouts or reconnects
# and, run through step: nvme_modules, ramdisk, target_up, target_down,
# connect, wait_ns, disconnect, write_big, write_4k, write_lb, read_back,
# read_parallel, fio_verify, ram_matches, nvme_unload, srqs_up.
#
# Files go to $work (/tmp/nvmeof): ctrl and ns (the controller and the
# namespace of the last connect), src (the 16 MiB written), exp (what the
# first 16 MiB of the namespace must hold after all the writes).

# shellcheck shell=bash
# Functions run by step in a child bash, not called directly here.
# shellcheck disable=SC2317

export cfs=/sys/kernel/config/nvmet
export work=/tmp/nvmeof
mkdir -p "$work"
steplog=$work/step.log

# nvme_dev KIND: kind_dev KIND, with $dev and $kind exported for the
# commands that step runs.
nvme_dev() {
	kind=$1
	export dev kind
	kind_dev "$1"
}

pair_ready() {
	local ready=1 peer
	if nvme_dev "$kind" >"$steplog" 2>&1 &&
		vm_wait_port_active "$dev" 30 &&
		wait_for 20 vm_gid_index "$dev" "$VROCE_SELF_IP4" &&
		wait_for 20 vm_gid_index "$dev" "$VROCE_SELF_IP6"; then
		ready=0
	fi
	tap_result $ready "$dev ($kind) on eth0, port active, RoCE v2 GIDs of $VROCE_SELF_IP4 and $VROCE_SELF_IP6"
	[ $ready -eq 0 ] || sed 's/^/#   /' "$steplog"
	vm_send ready "$ready"
	peer=$(vm_recv ready 120)
	[ $ready -eq 0 ] || tap_bail "setup failed on this side"
	[ "$peer" = 0 ] || tap_bail "setup failed on the peer (${peer:-nothing})"
	res_mark
}

# The tail of the kernel log and the device's counters, after a failure.
failure_info() {
	tap_diag "dmesg, last 40 lines:"
	dmesg | tail -n 40 | sed 's/^/#   /'
	tap_diag "rdma statistic show link $dev/1:"
	rdma statistic show link "$dev/1" 2>&1 | sed 's/^/#   /'
}

# step NEED S DESC CMD...: one TAP line for CMD, run in a child bash
# under a limit of S seconds (so functions it runs must be exported).
# Skipped, with NEED as the reason, if NEED is not empty. CMD's output
# becomes diagnostics: all of it when it fails (followed by failure_info),
# its "# " lines when it succeeds.
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

# nvme_modules MODULE...: load them; configfs for nvmet, /dev/nvme-fabrics
# for nvme-fabrics.
nvme_modules() {
	local m
	for m in "$@"; do
		modprobe "$m" || return 1
	done
	if [ -d /sys/module/nvmet ]; then
		[ -d "$cfs" ] || mount -t configfs none /sys/kernel/config ||
			return 1
		[ -d "$cfs/subsystems" ] || { echo "no $cfs/subsystems"; return 1; }
	fi
	if [ -d /sys/module/nvme_fabrics ] && [ ! -c /dev/nvme-fabrics ]; then
		echo "no /dev/nvme-fabrics"
		return 1
	fi
}

# nvme_unload MODULE...: modprobe -r them (with what only they used).
nvme_unload() {
	modprobe -r "$@"
}

ramdisk() {
	modprobe brd rd_nr=1 rd_size=65536 || return 1
	wait_for 10 test -b /dev/ram0 || { echo "no /dev/ram0"; return 1; }
	echo "# /dev/ram0: $(($(cat /sys/block/ram0/size) / 2048)) MiB"
}

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
	# nvmet-rdma: "enabling port P (ADDR:4420)", it listens on rdma_cm.
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

# ns_of CTRL: the namespace's block device: under the controller without
# native multipath, under its nvme-subsystem with it (nvmeXcYnZ being the
# hidden per-path disk).
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

# wait_ns SECTORS: the namespace of $work/ctrl shows up, SECTORS
# 512-byte sectors big; its name goes into $work/ns.
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
	[ "$(cat "/sys/block/$n/size")" = "$1" ] || {
		echo "not $1 sectors"
		return 1
	}
}

# disconnect: delete the controller of $work/ctrl; it goes away.
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

# ---- data: NS is the namespace's name (nvme0n1) ----------------------

# write_big NS: 16 MiB of fresh random data, 1 MiB direct writes.
write_big() {
	dd if=/dev/urandom of="$work/src" bs=1M count=16 iflag=fullblock status=none &&
		cp "$work/src" "$work/exp" &&
		dd_q write if="$work/src" of="/dev/$1" bs=1M count=16 oflag=direct conv=fsync
}

# write_4k NS: 64 direct 4 KiB writes at 4 KiB block 1000 (not 1 MiB
# aligned), read back at once.
write_4k() {
	dd if=/dev/urandom of="$work/small" bs=4k count=64 iflag=fullblock status=none &&
		dd if="$work/small" of="$work/exp" bs=4k seek=1000 conv=notrunc status=none &&
		dd_q write if="$work/small" of="/dev/$1" bs=4k seek=1000 oflag=direct conv=fsync &&
		dd_q read if="/dev/$1" of="$work/small.rd" bs=4k skip=1000 count=64 iflag=direct &&
		cmp "$work/small" "$work/small.rd"
}

# write_lb NS: 7 direct writes of one logical block each, at block 9.
write_lb() {
	local lbs
	lbs=$(cat "/sys/block/$1/queue/logical_block_size") || return 1
	dd if=/dev/urandom of="$work/tiny" bs="$lbs" count=7 iflag=fullblock status=none &&
		dd if="$work/tiny" of="$work/exp" bs="$lbs" seek=9 conv=notrunc status=none &&
		dd_q write if="$work/tiny" of="/dev/$1" bs="$lbs" seek=9 oflag=direct conv=fsync
}

# read_back NS: 16 MiB in 1 MiB direct reads, compared with $work/exp.
read_back() {
	rm -f "$work/rd"
	dd_q read if="/dev/$1" of="$work/rd" bs=1M count=16 iflag=direct &&
		cmp "$work/exp" "$work/rd"
}

# fio_verify NS: fio writes the 16 MiB at 32 MiB (which no other step
# touches) in random blocks of 4 to 128 KiB, 16 in flight (libaio,
# O_DIRECT), each block carrying a CRC32C and its own offset in a header;
# then it reads every block back and checks both. Its summary lines
# ("READ: bw=...", "WRITE: bw=...") become diagnostics; both must be
# there, the READ one being the verification's reads.
fio_verify() {
	local out rc
	command -v fio >/dev/null || { echo "no fio (scripts/deps installs it)"; return 1; }
	out=$(cd "$work" && fio --name=verify --filename="/dev/$1" \
		--ioengine=libaio --direct=1 --iodepth=16 --rw=randwrite \
		--bsrange=4k-128k --offset=32M --size=16M --randrepeat=0 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 \
		--verify_state_save=0 2>&1)
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q "READ: bw=" <<<"$out" ||
		! grep -q "WRITE: bw=" <<<"$out"; then
		printf '%s\n' "$out"
		return 1
	fi
	grep -E "(READ|WRITE): bw=" <<<"$out" | sed 's/^ */# fio: /'
}

# read_parallel NS: two readers at once, 8 MiB each in 256 KiB direct
# reads, each on its own CPU (so on its own I/O queue) if there are two.
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

# ram_matches SHA256: the first 16 MiB of the RAM disk (read direct: no
# stale page cache) have this SHA-256, or if none is given, are $work/exp.
ram_matches() {
	local sum
	rm -f "$work/ram"
	dd_q "read /dev/ram0" if=/dev/ram0 of="$work/ram" bs=1M count=16 \
		iflag=direct || return 1
	if [ -z "${1:-}" ]; then
		cmp "$work/exp" "$work/ram"
		return
	fi
	sum=$(sha256sum <"$work/ram") || return 1
	sum=${sum%% *}
	[ "$sum" = "$1" ] && return 0
	echo "sha256 $sum, the host wrote $1"
	return 1
}

# host_data NEED PRE READERS: the data steps of the host on the
# namespace of the last connect ($work/ns), 6 TAP lines named "PRE ...":
# the 16 MiB write, the 4 KiB and the logical block writes, the read back,
# the parallel read ("two readers READERS") and fio's verified writes.
# Skipped with NEED as the reason if it is not empty, and the last five if
# the 16 MiB write failed. Sets no_data (the caller's): empty if the data was written,
# else why not.
host_data() {
	local ns
	ns=$(cat "$work/ns" 2>/dev/null)
	no_data=$1
	step "$no_data" 180 "$2 write 16 MiB, 1 MiB O_DIRECT blocks" \
		write_big "$ns" || no_data=${no_data:-"the 16 MiB write failed"}
	step "$no_data" 120 "$2 write 64 x 4 KiB O_DIRECT at 4 KiB block 1000, read back" \
		write_4k "$ns"
	step "$no_data" 60 "$2 write 7 logical blocks O_DIRECT at block 9" \
		write_lb "$ns"
	step "$no_data" 180 "$2 read 16 MiB back (1 MiB O_DIRECT), same bytes" \
		read_back "$ns"
	step "$no_data" 180 "$2 two readers $3 (256 KiB O_DIRECT), same bytes" \
		read_parallel "$ns"
	step "$no_data" 300 "$2 fio: 16 MiB of random 4-128 KiB writes, 16 deep, read back and CRC32C-verified" \
		fio_verify "$ns"
}

send_sum() {
	local sum=none
	if [ -z "$no_data" ] && [ -f "$work/exp" ]; then
		sum=$(sha256sum <"$work/exp")
		sum=${sum%% *}
	fi
	vm_send "sum$1" "$sum"
}

peer_ram() {
	local pre="IPv$1:" ram
	vm_barrier "host$1" 1200
	ram=$(vm_recv "ram$1" 120)
	case $ram in
	ok) tap_ok "$pre B's /dev/ram0 holds what was written (B checked)" ;;
	skip) tap_skip "$pre B's /dev/ram0 holds what was written" "nothing written" ;;
	*) tap_fail "$pre B's /dev/ram0 holds what was written (B: ${ram:-nothing})" ;;
	esac
}

# ---- afterwards --------------------------------------------------------

# res_count KIND TEXT: the count of KIND in TEXT, what
# "rdma resource show DEV" says ("0: DEV: pd 1 cq 1 qp 1 cm_id 0 mr 0 ...").
res_count() {
	local -a w
	local i
	read -ra w <<<"$2"
	for ((i = 0; i < ${#w[@]} - 1; i++)); do
		[ "${w[i]}" = "$1" ] && { echo "${w[i + 1]}"; return 0; }
	done
	return 1
}

# srqs_up: $dev has more SRQs than in $res_before (nvmet-rdma's, with
# use_srq=1).
srqs_up() {
	local now n0 n1
	now=$(rdma resource show "$dev" 2>&1)
	if ! n0=$(res_count srq "$res_before") ||
		! n1=$(res_count srq "$now"); then
		echo "no srq count in: $now"
		return 1
	fi
	echo "# SRQs on $dev: $n0 before, $n1 now"
	[ "$n1" -gt "$n0" ]
}

res_mark() {
	res_before=$(rdma resource show "$dev" 2>&1)
	export res_before
	tap_diag "rdma resource show $dev: $res_before"
}

# The same PDs, QPs, cm_ids, MRs and SRQs as in $res_before. The CQ count
# may have grown: nvme-rdma and nvmet-rdma take their CQs from the
# device's CQ pool (ib_cq_pool_get), which keeps them until the device is
# removed.
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

# dev_packets: the packets $dev sent and received into $tx and $rx, from
# rdma statistic (vroce: tx_packets and rx_packets; rxe: sent_pkts and
# rcvd_pkts); the whole line as a diagnostic.
# shellcheck disable=SC2034 # tx and rx are the caller's
dev_packets() {
	local stats i
	local -a w
	tx=0
	rx=0
	stats=$(rdma statistic show link "$dev/1" 2>&1)
	tap_diag "rdma statistic show link $dev/1: $stats"
	read -ra w <<<"$stats"
	for ((i = 0; i < ${#w[@]} - 1; i++)); do
		case ${w[i]} in
		tx_packets | sent_pkts) tx=${w[i + 1]} ;;
		rx_packets | rcvd_pkts) rx=${w[i + 1]} ;;
		esac
	done
}

# pair_finish: the end both VMs of a storage pair test share: $dev's
# resources back to res_mark's, its counters show 8,192 packets or more
# each way (what every such test moves is more than 32 MiB, even at a
# 4096-byte MTU) and, on vroce, no retransmit or timeout; then, once the
# peer is there too, the device is deleted.
pair_finish() {
	step "" 40 "rdma resource show $dev: PDs, QPs, cm_ids, MRs back to the MAD layer's" \
		res_back
	dev_packets
	[ "$tx" -ge 8192 ] && [ "$rx" -ge 8192 ]
	tap_result $? "$dev counters: $tx packets sent, $rx received (8192 or more)"
	[ "$kind" = vroce ] && wire_clean
	vm_barrier end 300
	step "" 60 "rdma link delete $dev" rdma link delete "$dev"
}

# kernel_oops_check: one check that the whole kernel log holds no oops,
# BUG, WARNING, sanitizer report or hung task (what failure_info can say
# of the state follows a failure).
kernel_oops_check() {
	local bad
	bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection fault|Call Trace|refcount_t:|list_(add|del) corruption|UBSAN|KASAN|hung_task|blocked for more than|destroy waits|removal waits for')
	[ -z "$bad" ]
	tap_result $? "kernel log: no WARNING, BUG, oops or hung task"
	[ -z "$bad" ] || { printf '%s\n' "$bad" | head -n 40 | sed 's/^/#   /'; failure_info; }
}

# The whole kernel log: no oops, BUG or WARNING, no failed or stuck I/O,
# no error recovery or reconnect of a controller.
kernel_log_checks() {
	local bad
	kernel_oops_check

	# The keep-alive a deliberate disconnect aborts is no error: 6.12's
	# host logs it ("failed nvme_keep_alive_end_io") as it removes the
	# controller, so lines from "Removing ctrl" to the next controller's
	# creation are left out.
	bad=$(dmesg | awk '/Removing ctrl/ { skip = 1 } /creating .*controller|new ctrl/ { skip = 0 } !skip' |
		grep -E '(nvme|nvmet|nvmet_rdma|nvme_rdma).*([Tt]imeout|error recovery|[Rr]econnect|I/O error|[Ff]ailed|error)|I/O error|critical medium error|Buffer I/O')
	[ -z "$bad" ]
	tap_result $? "kernel log: no NVMe timeouts, errors, error recovery or reconnects"
	[ -z "$bad" ] || printf '%s\n' "$bad" | head -n 40 | sed 's/^/#   /'

	tap_diag "dmesg of nvme, nvmet and $dev:"
	dmesg | grep -E "nvme|nvmet|$dev|brd" | tail -n 30 | sed 's/^/#   /'
}

export -f wait_for vm_gid_index vm_gid_hex _vm_sleep dd_q nvme_modules \
	nvme_unload ramdisk target_up target_down connect ns_of wait_ns \
	disconnect write_big write_4k write_lb read_back read_parallel fio_verify \
	ram_matches res_count res_same res_back srqs_up
