# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Helpers for VM tests (tests/vm/*.sh), sourced by the test:
#
#   . "$(dirname "$0")/lib.sh"
#
# TAP output in the kselftest style (TAP version 13):
#   tap_plan N            print the header and the plan "1..N"
#   tap_ok DESC           "ok N DESC"
#   tap_fail DESC         "not ok N DESC"
#   tap_result RC DESC    ok if RC is 0, else not ok
#   tap_check DESC CMD... run CMD; ok if it succeeds, else not ok with its
#                         output as diagnostics
#   tap_skip DESC REASON  "ok N DESC # SKIP REASON"
#   tap_diag MSG...       "# MSG"
#   tap_relay NAME FILE   a program's TAP output in FILE as checks of this
#                         script, named "NAME: ..."; fails if it has no plan
#   tap_bail MSG          "Bail out! MSG" and exit 1
#   tap_done              print the plan if none was given, report a plan
#                         mismatch, exit 1 if anything failed, else 0
#
# VM helpers:
#   run_timeout S CMD...  run CMD with a time limit of S scaled (status 124
#                         on timeout)
#   vm_scaled S           S times the VM's time-limit factor (3 on the debug
#                         kernel): for a limit inside a test
#   vm_barrier NAME [S]   pair: wait until the peer reaches the barrier of
#                         the same name (default limit 120 s; S and the
#                         default are scaled, as vm_recv's); no-op alone
#   vm_send KEY VALUE     pair: publish VALUE under KEY for the peer
#   vm_recv KEY [S]       pair: print the peer's VALUE for KEY, waiting for it
#   vm_ib_nodes           create missing /dev/infiniband nodes
#   vm_gid_index DEV ADDR [PORT]
#                         print the index of the RoCE v2 GID of DEV for the
#                         IPv4 or IPv6 address ADDR
#   vm_wait_port_active DEV [S] [PORT]
#   wire_state LABEL      pair case failed: eth0, its queues and a ping of
#                         the peer, as diagnostics
#
# The harness (scripts/vm-init) exports VROCE_ROLE (single, a or b),
# VROCE_SELF_IP4/6, VROCE_PEER_IP4/6, VROCE_SHARED (pair: directory shared by
# both VMs), VROCE_OUT (results directory), VROCE_TOP (the repo).
#
# Written for bash and POSIX sh alike.

_tap_n=0
_tap_failed=0
_tap_plan=
_tap_header=

_tap_head() {
	if [ -z "$_tap_header" ]; then
		echo "TAP version 13"
		_tap_header=1
	fi
}

tap_plan() {
	_tap_head
	_tap_plan=$1
	echo "1..$1"
}

tap_diag() {
	_tap_head
	echo "# $*"
}

tap_ok() {
	_tap_head
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n $*"
}

tap_fail() {
	_tap_head
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n $*"
}

tap_result() { # RC DESC...
	_rc=$1
	shift
	if [ "$_rc" -eq 0 ]; then
		tap_ok "$@"
	else
		tap_fail "$@"
	fi
}

tap_skip() { # DESC REASON
	_tap_head
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n $1 # SKIP ${2:-}"
}

tap_check() { # DESC CMD...
	_desc=$1
	shift
	if _out=$("$@" 2>&1); then
		tap_ok "$_desc"
	else
		_rc=$?
		tap_fail "$_desc"
		tap_diag "command: $* (status $_rc)"
		printf '%s\n' "$_out" | sed 's/^/#   /'
	fi
}

# tap_relay NAME FILE: the "ok", "not ok" (and "Bail out!", as a failed
# check) lines of a program's TAP output as checks of this script, each
# named "NAME: DESC"; other lines as diagnostics. Fails if FILE has no
# plan line.
tap_relay() {
	_tr_plan=
	while IFS= read -r _tr_line; do
		case $_tr_line in
		"ok "[0-9]*" - # SKIP "*)
			tap_skip "$1: ${_tr_line#ok * - \# SKIP }" "" ;;
		"ok "[0-9]*) tap_ok "$1: ${_tr_line#ok * - }" ;;
		"not ok "[0-9]*) tap_fail "$1: ${_tr_line#not ok * - }" ;;
		"Bail out!"*) tap_fail "$1: ${_tr_line#Bail out! }" ;;
		1..[0-9]*) _tr_plan=${_tr_line#1..} ;;
		"#"*) echo "$_tr_line" ;;
		*) echo "# $_tr_line" ;;
		esac
	done <"$2"
	[ -n "$_tr_plan" ]
}

tap_bail() {
	_tap_head
	echo "Bail out! $*"
	exit 1
}

tap_done() {
	if [ -z "$_tap_plan" ]; then
		_tap_head
		echo "1..$_tap_n"
	elif [ "$_tap_plan" -ne "$_tap_n" ]; then
		tap_diag "planned $_tap_plan tests but ran $_tap_n"
		exit 1
	fi
	[ "$_tap_failed" -eq 0 ] || exit 1
	exit 0
}

# vm_scaled S: S seconds times the harness's time scale (scripts/vm passes
# VROCE_VM_TIMEOUT_SCALE as VROCE_TIME_SCALE; 1 on Debian's kernels).
vm_scaled() {
	echo $(($1 * ${VROCE_TIME_SCALE:-1}))
}

# wire_state LABEL: eth0 and the wire to the peer, as diagnostics, for a
# pair case that failed: a wire that stalled in one direction (a case that
# failed for no fault of either RDMA device) is told from a device that
# lost its packets. eth0's counters, its qdisc's backlog, the bytes its
# TX queues hold (BQL) and their TX timeouts, the virtio interrupts, and
# whether the peer answers pings, with eth0's counters after them, and
# QEMU's view of both VMs' virtio-net queues, which the host adds. Each
# step is bounded: a stalled wire or a held RTNL must not hang the case.
wire_state() {
	_ws=/sys/class/net/eth0
	tap_diag "$1: eth0 tx_packets $(cat $_ws/statistics/tx_packets) rx_packets $(cat $_ws/statistics/rx_packets) tx_dropped $(cat $_ws/statistics/tx_dropped) rx_dropped $(cat $_ws/statistics/rx_dropped)"
	timeout -k 2 5 tc -s qdisc show dev eth0 >/tmp/wire-qdisc.txt 2>&1
	sed -n '1,6p' /tmp/wire-qdisc.txt |
		while read -r _wq; do tap_diag "$1: qdisc: $_wq"; done
	# The qdisc counts a packet when it hands it on, virtio-net when the
	# device gave its buffer back: on a wire that flows the two agree
	# within a few packets; more is a TX ring the device stopped taking
	# from (QEMU's view below says whether the guest filled it).
	_wq=$(awk '$1 == "Sent" { print $4; exit }' /tmp/wire-qdisc.txt)
	[ -n "$_wq" ] && tap_diag "$1: the qdisc handed on $_wq packets, the NIC completed $(cat $_ws/statistics/tx_packets)"
	# BQL: 6.1's virtio-net has none (its inflight stays 0).
	for _wq in "$_ws"/queues/tx-*; do
		tap_diag "$1: ${_wq##*/}: BQL inflight $(cat "$_wq/byte_queue_limits/inflight" 2>/dev/null || echo ?) bytes, tx_timeout $(cat "$_wq/tx_timeout" 2>/dev/null || echo ?)"
	done
	grep -E 'virtio[0-9]+-(input|output)' /proc/interrupts 2>/dev/null |
		while read -r _wq; do tap_diag "$1: irq: $_wq"; done
	_wq=$(timeout -k 2 10 busybox ping -c 5 -W 1 -q "$VROCE_PEER_IP4" 2>&1 |
		grep -E 'packets transmitted')
	tap_diag "$1: ping $VROCE_PEER_IP4: ${_wq:-no answer}; eth0 now tx_packets $(cat $_ws/statistics/tx_packets) rx_packets $(cat $_ws/statistics/rx_packets)"
	# QEMU's view of both NICs, from the host (scripts/vm, state_watch).
	[ -n "${VROCE_OUT:-}" ] || return 0
	"$VROCE_TOP/scripts/vm-qemu-state" "$VROCE_OUT" 30 |
		while read -r _wq; do tap_diag "$1: ${_wq#vm: }"; done
}

# run_timeout S CMD...: like timeout(1) with S scaled, and says so when it
# hits.
run_timeout() {
	_s=$(vm_scaled "$1")
	shift
	timeout -k 5 "$_s" "$@"
	_rc=$?
	[ "$_rc" -eq 124 ] && tap_diag "timed out after $_s s: $*"
	return "$_rc"
}

_vm_sleep() {
	sleep 0.2 2>/dev/null || sleep 1
}

_vm_peer() {
	case ${VROCE_ROLE:-} in
	a) echo b ;;
	b) echo a ;;
	*) return 1 ;;
	esac
}

_vm_barrier_seq=0

# vm_barrier NAME [S]: rendezvous with the peer VM. Both sides must pass the
# same barriers in the same order (a sequence number is part of the file
# name, so a name may be reused). Fails (status 1) after S seconds or as
# soon as the peer's script has exited.
vm_barrier() {
	_name=$1
	_limit=$(vm_scaled "${2:-120}")
	_peer=$(_vm_peer) || return 0
	[ -n "${VROCE_SHARED:-}" ] || return 0
	_vm_barrier_seq=$((_vm_barrier_seq + 1))
	_f=$VROCE_SHARED/barrier.$_vm_barrier_seq.$_name
	: >"$_f.$VROCE_ROLE" || return 1
	_end=$(($(date +%s) + _limit))
	while [ ! -e "$_f.$_peer" ]; do
		if [ -e "$VROCE_SHARED/exited.$_peer" ]; then
			tap_diag "barrier $_name: peer $_peer has exited"
			return 1
		fi
		if [ "$(date +%s)" -ge "$_end" ]; then
			tap_diag "barrier $_name: peer $_peer did not arrive within $_limit s"
			return 1
		fi
		_vm_sleep
	done
	return 0
}

# vm_send KEY VALUE: make VALUE available to the peer's vm_recv KEY.
vm_send() {
	[ -n "${VROCE_SHARED:-}" ] || return 1
	printf '%s\n' "$2" >"$VROCE_SHARED/.kv.$1.$VROCE_ROLE.tmp" &&
		mv "$VROCE_SHARED/.kv.$1.$VROCE_ROLE.tmp" "$VROCE_SHARED/kv.$1.$VROCE_ROLE"
}

# vm_recv KEY [S]: print what the peer sent under KEY; waits up to S s.
vm_recv() {
	_peer=$(_vm_peer) || return 1
	[ -n "${VROCE_SHARED:-}" ] || return 1
	_end=$(($(date +%s) + $(vm_scaled "${2:-120}")))
	while [ ! -e "$VROCE_SHARED/kv.$1.$_peer" ]; do
		if [ -e "$VROCE_SHARED/exited.$_peer" ] ||
			[ "$(date +%s)" -ge "$_end" ]; then
			tap_diag "vm_recv $1: nothing from peer $_peer"
			return 1
		fi
		_vm_sleep
	done
	cat "$VROCE_SHARED/kv.$1.$_peer"
}

# vm_ib_nodes: devtmpfs normally creates /dev/infiniband/* when a device
# registers; make sure, without udev.
vm_ib_nodes() {
	for _d in /sys/class/infiniband_verbs/* /sys/class/infiniband_mad/* \
		/sys/class/misc/rdma_cm; do
		[ -f "$_d/dev" ] || continue
		_node=/dev/infiniband/${_d##*/}
		[ -e "$_node" ] && continue
		read -r _dev <"$_d/dev" || continue
		mkdir -p /dev/infiniband
		mknod -m 0666 "$_node" c "${_dev%%:*}" "${_dev##*:}"
	done
	return 0
}

# vm_gid_hex ADDR: the GID string the kernel shows for an IPv4 or IPv6
# address (IPv4 as ::ffff:a.b.c.d).
vm_gid_hex() {
	case $1 in
	*:*)
		# Expand "::" and pad every group to 4 hex digits.
		printf '%s\n' "$1" | awk '{
			n = split($0, half, "::")
			nl = (half[1] == "") ? 0 : split(half[1], l, ":")
			nr = (n < 2 || half[2] == "") ? 0 : split(half[2], r, ":")
			k = 0
			for (i = 1; i <= nl; i++) g[++k] = l[i]
			for (i = nl + nr; i < 8; i++) g[++k] = "0"
			for (i = 1; i <= nr; i++) g[++k] = r[i]
			s = ""
			for (i = 1; i <= 8; i++) {
				x = g[i]
				while (length(x) < 4) x = "0" x
				s = s (i > 1 ? ":" : "") tolower(x)
			}
			print s
		}'
		;;
	*)
		printf '%s\n' "$1" | awk -F. '{
			printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n", $1, $2, $3, $4
		}'
		;;
	esac
}

# vm_gid_index DEV ADDR [PORT]: index of DEV's RoCE v2 GID for ADDR.
vm_gid_index() {
	_want=$(vm_gid_hex "$2")
	_p=/sys/class/infiniband/$1/ports/${3:-1}
	# The table has hundreds of entries: read them without forking.
	for _g in "$_p"/gids/*; do
		_v=
		read -r _v <"$_g" 2>/dev/null
		[ "$_v" = "$_want" ] || continue
		_i=${_g##*/}
		_t=
		read -r _t <"$_p/gid_attrs/types/$_i" 2>/dev/null
		case $_t in
		*"v2"*) echo "$_i"; return 0 ;;
		esac
	done
	return 1
}

# vm_wait_port_active DEV [S] [PORT]
vm_wait_port_active() {
	_end=$(($(date +%s) + ${2:-20}))
	while :; do
		_st=
		read -r _st <"/sys/class/infiniband/$1/ports/${3:-1}/state" 2>/dev/null
		case $_st in
		*ACTIVE*) return 0 ;;
		esac
		[ "$(date +%s)" -ge "$_end" ] && return 1
		_vm_sleep
	done
}
