#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Self-test of the VM harness: the VM has what every other VM test relies
# on, and stock rdma_rxe works in it. Does not touch vroce.
#
# vm: install=0
# vm: timeout=240

# The check functions below run through tap_check.
# shellcheck disable=SC2317
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

tap_plan 15

# 1: role and addresses passed in
tap_check "job environment (role, addresses)" test \
	"${VROCE_ROLE:-}" = single -a "${VROCE_SELF_IP4:-}" = 192.0.2.1 \
	-a "${VROCE_SELF_IP6:-}" = 2001:db8::1

# 2-3: eth0 up with the expected addresses
eth0_ok() {
	ip -o link show dev eth0 | grep -q 'state UP' &&
		[ "$(cat /sys/class/net/eth0/carrier)" = 1 ] &&
		ip -o -4 addr show dev eth0 | grep -q " $VROCE_SELF_IP4/24 "
}
tap_check "eth0 up, carrier, $VROCE_SELF_IP4/24" eth0_ok
tap_check "eth0 has $VROCE_SELF_IP6/64" \
	sh -c "ip -o -6 addr show dev eth0 | grep -q ' $VROCE_SELF_IP6/64 '"

# 4: the root is the writable overlay, the host stays untouched
overlay_ok() {
	grep -q '^overlay / overlay' /proc/mounts &&
		echo probe >/etc/vroce-harness-probe &&
		[ "$(cat /etc/vroce-harness-probe)" = probe ] &&
		rm /etc/vroce-harness-probe
}
tap_check "root is a writable overlay" overlay_ok

# 5: the results share reaches the host
out_ok() {
	[ -n "${VROCE_OUT:-}" ] && grep -q " $VROCE_OUT 9p " /proc/mounts &&
		echo "written in the VM" >"$VROCE_OUT/harness-probe.txt"
}
tap_check "results share is writable 9p" out_ok

# 6: the repo is where the host has it
tap_check "repo visible at $VROCE_TOP" test -f "$VROCE_TOP/scripts/vm-init"

# 7: modules of the running kernel
tap_check "/lib/modules/$(uname -r) exists" test -f "/lib/modules/$(uname -r)/modules.dep.bin"

# 8: pseudo file systems
mounts_ok() {
	for m in /proc /sys /dev /run /sys/kernel/debug /dev/pts; do
		awk -v m="$m" '$2 == m { f = 1 } END { exit !f }' /proc/mounts ||
			{ echo "$m not mounted"; return 1; }
	done
	# /tmp is a fresh tmpfs, or the overlay's when the repo is under /tmp.
	f=$(mktemp) && rm "$f"
}
tap_check "proc, sys, devtmpfs, run, debugfs, devpts mounted, /tmp writable" mounts_ok

# 9: the lib's own helpers
lib_ok() {
	[ "$(vm_gid_hex 192.0.2.1)" = 0000:0000:0000:0000:0000:ffff:c000:0201 ] &&
		[ "$(vm_gid_hex 2001:db8::1)" = 2001:0db8:0000:0000:0000:0000:0000:0001 ] &&
		{ run_timeout 1 sleep 5 >/dev/null; [ $? -eq 124 ]; } &&
		vm_barrier alone 1
}
tap_check "lib.sh helpers (gid_hex, run_timeout, barrier alone)" lib_ok

# 10: rdma_rxe
tap_check "modprobe rdma_rxe" modprobe rdma_rxe

# 11: an rxe device on eth0
tap_check "rdma link add rxe0 type rxe netdev eth0" \
	rdma link add rxe0 type rxe netdev eth0
vm_ib_nodes

# 12: libibverbs sees it (provider, /dev/infiniband nodes)
has_rxe0() {
	ibv_devices | awk '$1 == "rxe0" { f = 1 } END { exit !f }'
}
tap_check "ibv_devices lists rxe0" has_rxe0

# 13: port active
port_ok() {
	vm_wait_port_active rxe0 20 &&
		ibv_devinfo -d rxe0 | grep -q 'state:.*PORT_ACTIVE'
}
tap_check "ibv_devinfo -d rxe0 shows PORT_ACTIVE" port_ok

# 14: RoCE v2 GIDs for both addresses
gids_ok() {
	i4=$(vm_gid_index rxe0 "$VROCE_SELF_IP4") &&
		i6=$(vm_gid_index rxe0 "$VROCE_SELF_IP6") &&
		tap_diag "RoCE v2 GID index: IPv4 $i4, IPv6 $i6"
}
if gids_ok; then
	tap_ok "RoCE v2 GIDs for $VROCE_SELF_IP4 and $VROCE_SELF_IP6"
else
	tap_fail "RoCE v2 GIDs for $VROCE_SELF_IP4 and $VROCE_SELF_IP6"
	for g in /sys/class/infiniband/rxe0/ports/1/gids/*; do
		t=/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/${g##*/}
		tap_diag "gid ${g##*/}: $(cat "$g" 2>/dev/null) $(cat "$t" 2>/dev/null)"
	done
fi

# 15: and away again
del_ok() {
	rdma link delete rxe0 && ! has_rxe0
}
tap_check "rdma link delete rxe0" del_ok

tap_done
