# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# vroce helpers for VM tests, on top of lib.sh (source lib.sh first).
#
#   wait_for S CMD...        retry CMD every 0.2 s until it succeeds (0) or
#                            S seconds pass (1)
#   link_exists NAME         the RDMA device NAME exists
#   devinfo_field DEV FIELD  value of "FIELD:" in ibv_devinfo -v -d DEV
#   dmesg_has TEXT           the kernel log contains TEXT
#   rdma_add NAME NETDEV     rdma link add NAME type vroce netdev NETDEV,
#                            its error text (if any) in $rdma_err
#   vroce_up                 vroce0 on eth0 with its IPv4 RoCE v2 GID, or
#                            bail out
#   veth_ns NS [ADDR FAR]    network namespace NS behind a veth: veth0
#                            here with ADDR/24, veth1 there with FAR/24,
#                            both up (198.51.100.1 and .2 by default)
#   veth_vroce1 NS ADDR FAR  veth_ns NS ADDR FAR, then vroce1 on veth0 with
#                            its RoCE v2 GID of ADDR; two TAP results
#   hold_start DEV, hold_finish   a process holding DEV open (below)
#   want_kind VAR DEFAULT    $kind (rxe or vroce) from $VAR, else DEFAULT;
#                            bails out for any other
#   pair_kind VAR DEFAULT    want_kind VAR_A or VAR_B, by this side's role;
#                            bails out outside a pair
#   kind_dev KIND            the RDMA device of KIND on eth0, in $dev
#   dev_gid ADDR S           the index of $dev's RoCE v2 GID for ADDR, once
#                            there (waits up to S seconds)
#   counters FILE            $dev's port 1 hardware counters into FILE
#   counter FILE NAME        one counter's value from such a FILE
#   dev_counter DEV NAME     one port 1 hardware counter of DEV, now

wait_for() {
	_wf_end=$(($(date +%s) + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$_wf_end" ] && return 1
		sleep 0.2
	done
	return 0
}

veth_ns() {
	ip netns add "$1" &&
		ip link add veth0 type veth peer name veth1 netns "$1" &&
		ip addr add "${2:-198.51.100.1}/24" dev veth0 &&
		ip link set veth0 up &&
		ip -n "$1" addr add "${3:-198.51.100.2}/24" dev veth1 &&
		ip -n "$1" link set veth1 up
}

veth_vroce1() {
	veth_ns "$@"
	tap_result $? "a veth to a network namespace"
	rdma_add vroce1 veth0 && vm_wait_port_active vroce1 10 &&
		wait_for 10 vm_gid_index vroce1 "$2"
	tap_result $? "vroce1 on veth0 ($rdma_err)"
}

link_exists() {
	[ -d "/sys/class/infiniband/$1" ]
}

devinfo_field() {
	ibv_devinfo -v -d "$1" 2>/dev/null |
		awk -v f="$2:" '$1 == f { $1 = ""; sub(/^[ \t]+/, ""); print; exit }'
}

dmesg_has() {
	dmesg | grep -qF -- "$1"
}

rdma_add() {
	rdma_err=$(rdma link add "$1" type vroce netdev "$2" 2>&1)
}

# vroce_up: rdma_add vroce0 eth0, then wait up to 10 s for its RoCE v2
# GID of $VROCE_SELF_IP4; bails out if either fails.
vroce_up() {
	rdma_add vroce0 eth0 || tap_bail "rdma link add failed: $rdma_err"
	wait_for 10 vm_gid_index vroce0 "$VROCE_SELF_IP4" ||
		tap_bail "no RoCE v2 GID for $VROCE_SELF_IP4"
}

# hold_start DEV: a process opens DEV, allocates a PD and waits (see
# async_wait --hold); succeeds once it is ready. Call it directly, not
# through tap_check, which runs its command in a subshell.
# hold_finish: lets it check that DEV was disassociated (DEVICE_FATAL,
# verbs fail cleanly, close works); prints its TAP as diagnostics and
# returns its status.
hold_start() {
	_hold_log=/tmp/hold.$$.log
	_hold_go=/tmp/hold.$$.go
	"$VROCE_TOP/build/progs/async_wait" --hold "$1" "$_hold_go" \
		>"$_hold_log" 2>&1 &
	_hold_pid=$!
	wait_for 10 grep -q ready "$_hold_log"
}

hold_finish() {
	touch "$_hold_go"
	wait "$_hold_pid"
	_hold_rc=$?
	sed 's/^/#   /' "$_hold_log"
	return $_hold_rc
}

# kind_dev KIND: the RDMA device of KIND (rxe: rdma_rxe as rxe0, vroce:
# vroce0) on eth0, in $dev; 2 for an unknown KIND, 1 if it fails.
kind_dev() {
	case $1 in
	rxe) dev=rxe0 ;;
	vroce) dev=vroce0 ;;
	*) return 2 ;;
	esac
	modprobe "$([ "$1" = rxe ] && echo rdma_rxe || echo vroce)" &&
		rdma link add "$dev" type "$1" netdev eth0
}

# want_kind VAR DEFAULT: the device kind, rxe or vroce, from the variable
# VAR (DEFAULT if it is unset or empty) into $kind; bails out for any
# other, saying "want DEFAULT or" the other one.
# shellcheck disable=SC2154 # kind: set by the eval
want_kind() {
	eval "kind=\${$1:-\$2}"
	case $kind in
	rxe | vroce) ;;
	*)
		if [ "$2" = rxe ]; then
			tap_bail "$1=$kind: want rxe or vroce"
		else
			tap_bail "$1=$kind: want vroce or rxe"
		fi
		;;
	esac
}

# pair_kind VAR DEFAULT: want_kind for this side of a pair: VAR_A in A,
# VAR_B in B; bails out if this is no pair.
pair_kind() {
	case ${VROCE_ROLE:-} in
	a) want_kind "$1_A" "$2" ;;
	b) want_kind "$1_B" "$2" ;;
	*) tap_bail "needs a VM pair (vm: pair)" ;;
	esac
}

# dev_gid ADDR S: print the index of $dev's RoCE v2 GID for ADDR, waiting
# up to S seconds for it to appear; fails if it does not.
dev_gid() {
	wait_for "$2" vm_gid_index "$dev" "$1"
	vm_gid_index "$dev" "$1"
}

# counters FILE: "NAME VALUE" lines of the device's port 1 hardware
# counters (rdma statistic; sysfs if that says nothing).
counters() {
	rdma statistic show link "$dev/1" 2>/dev/null | awk '{
		for (i = 1; i <= NF; i++) {
			if ($i == "link") { i++; continue }
			if (i < NF && $(i + 1) ~ /^[0-9]+$/) {
				print $i, $(i + 1)
				i++
			}
		}
	}' >"$1"
	if [ ! -s "$1" ]; then
		local f
		for f in /sys/class/infiniband/"$dev"/ports/1/hw_counters/*; do
			[ -f "$f" ] && echo "${f##*/} $(cat "$f")"
		done >"$1"
	fi
}

# counter FILE NAME: its value, or nothing.
counter() {
	awk -v n="$2" '$1 == n { print $2; exit }' "$1"
}

# dev_counter DEV NAME: one port 1 hardware counter of DEV, now.
dev_counter() {
	rdma statistic show link "$1/1" | tr ' ' '\n' |
		grep -A1 -x "$2" | tail -n 1
}

# wire_clean: one TAP line each that $dev's retransmits and retry_timeouts
# are 0, as they must be after traffic on a clean wire.
# shellcheck disable=SC2154 # dev is kind_dev's
wire_clean() {
	local c v
	for c in retransmits retry_timeouts; do
		v=$(dev_counter "$dev" "$c")
		tap_check "$c is 0 (${v:-unreadable})" test "${v:-x}" = 0
	done
}
