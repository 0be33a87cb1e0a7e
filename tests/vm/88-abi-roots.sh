#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The provider under other rdma-core releases, between two VMs: in each
# Debian root of scripts/abi-roots (trixie: rdma-core 56.1, private ABI
# 34; sid: 65.0, ABI 65), chrooted, with that root's own libibverbs and
# tools loading the provider of its private ABI: ibv_devinfo, then
# ibv_rc_pingpong with its data checked (-c), also through the ibv_wr_*
# API (-N), and perftest's ib_write_bw and ib_send_bw. B serves, A drives.
# A root that was not made is skipped (make check makes them).
#
# vm: pair
# vm: timeout=900

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_tools.sh"

roots=${VROCE_ROOTS:-$VROCE_TOP/build/roots}
port=18830

kind_dev vroce
tap_result $? "$dev (vroce) on eth0"
vm_ib_nodes
tap_check "$dev port active" vm_wait_port_active "$dev" 30
gid=$(dev_gid "$VROCE_SELF_IP4" 10)
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP4: index $gid"

# in_root CMD...: CMD in $root, with the provider of its ABI.
in_root() {
	timeout -k 5 30 chroot "$root" env RDMAV_DRIVERS=/vroce/libvroce "$@"
}

# root_enter: the kernel's file systems in $root, the provider in
# $root/vroce; sets abi.
root_enter() {
	local lib
	lib=$(readlink -f "$root/usr/lib/x86_64-linux-gnu/libibverbs.so.1")
	abi=$(find "$root/usr/lib/x86_64-linux-gnu/libibverbs" -name 'lib*-rdmav*.so' |
		sed -n 's/.*-rdmav\([0-9]*\)\.so$/\1/p' | head -n 1)
	mount --bind /dev "$root/dev" && mount --bind /sys "$root/sys" &&
		mount -t proc proc "$root/proc" &&
		mkdir -p "$root/vroce" &&
		cp "$VROCE_TOP/build/user/libvroce-rdmav$abi.so" "$root/vroce/" &&
		tap_diag "$root: ${lib##*/}, private ABI $abi"
}

root_leave() {
	umount "$root/proc" "$root/sys" "$root/dev" 2>/dev/null
}

# serve NAME CMD...: B runs CMD in the root, tells A once it listens on
# $port and reports its exit status; A gets the same NAME from drive.
serve() {
	local name=$1 pid rc=1
	shift
	timeout -k 5 60 chroot "$root" env RDMAV_DRIVERS=/vroce/libvroce \
		"$@" >"/tmp/srv.$name.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		tcp_listening "$port" && rc=0 && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	vm_send "up-$name" "$rc"
	wait "$pid"
	rc=$?
	tap_result "$rc" "$name server"
	[ "$rc" -eq 0 ] || sed 's/^/#   /' "/tmp/srv.$name.log"
}

# drive NAME PATTERN CMD...: A runs CMD once B listens; CMD must succeed
# and print PATTERN.
drive() {
	local name=$1 pattern=$2 rc
	shift 2
	if [ "$(vm_recv "up-$name" 60)" != 0 ]; then
		tap_fail "$name: the server listens"
		return
	fi
	timeout -k 5 60 chroot "$root" env RDMAV_DRIVERS=/vroce/libvroce \
		"$@" "$VROCE_PEER_IP4" >"/tmp/cli.$name.log" 2>&1
	rc=$?
	grep -q "$pattern" "/tmp/cli.$name.log" || [ "$rc" -ne 0 ] || rc=1
	tap_result "$rc" "$name client"
	[ "$rc" -eq 0 ] || sed 's/^/#   /' "/tmp/cli.$name.log"
}

# pair NAME PATTERN CMD...: B serves CMD, A drives it.
pair() {
	local name=$1 pattern=$2
	shift 2
	if [ "$VROCE_ROLE" = b ]; then
		serve "$name" "$@"
	else
		drive "$name" "$pattern" "$@"
	fi
	vm_barrier "$name" 90
}

for suite in trixie sid; do
	root=$roots/$suite
	if [ ! -x "$root/usr/bin/ibv_devinfo" ]; then
		tap_skip "rdma-core of Debian $suite" "no root (scripts/abi-roots)"
		continue
	fi
	root_enter
	tap_result $? "Debian $suite root entered, provider of ABI $abi in it"
	out=$(in_root ibv_devinfo -d "$dev" 2>&1)
	tap_result $? "$suite: ibv_devinfo -d $dev"
	grep -q PORT_ACTIVE <<<"$out"
	tap_result $? "$suite: ibv_devinfo shows port 1 active"
	pp="ibv_rc_pingpong -d $dev -g $gid -p $port -n 500 -s 4096 -c"
	# shellcheck disable=SC2086 # $pp is a command line
	pair "$suite-pingpong" "500 iters" $pp
	# shellcheck disable=SC2086
	pair "$suite-pingpong-N" "500 iters" $pp -N
	for t in ib_write_bw ib_send_bw; do
		pair "$suite-$t" "^ *65536 *300" "$t" -d "$dev" -x "$gid" \
			-p "$port" -s 65536 -n 300 -F --report_gbits
	done
	root_leave
done
wire_clean
vm_barrier "done" 60
tap_done
