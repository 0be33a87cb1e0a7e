# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Stock RDMA tools (rdma-core's ibv_rc_pingpong, rping and ucmatose;
# perftest) for VM tests, on top of lib.sh and _vroce.sh (source those
# first). Used by 83-rc-tools.sh (two VMs) and 84-rc-loopback.sh (one VM).
#
#   tools_dev KIND         modprobe rdma_ucm and create the RDMA device of
#                          KIND (rxe: rxe0, vroce: vroce0) on eth0; sets $dev
#   tool_setup TYPE GID PORT SRV_IP4 SRV_IP PEER_IP [ARGS...]
#                          describe one run of a tool on $dev (below)
#   tool_serve LOG         start the server of the run, its output in LOG;
#                          sets $tool_pid, succeeds once it listens
#   tool_wait_listen PID   wait until the server just started listens
#   tool_check SIDE FILE   the output of a run that exited 0 looks right
#   tool_reap CRC          wait for the server after its client exited with
#                          status CRC, stopping it if it runs on
#   tool_problems TEXT     what tool_check printed, as TAP diagnostics
#   tool_log FILE [N]      the last N (12) lines of a log as TAP diagnostics
#   tool_keep FILE...      copy logs to the results directory ($VROCE_OUT)
#   tool_state FILE PID    this side's state at a failed pair case (below)
#   tools_pair_setup       a pair's side: the device of $kind, its port,
#                          its GIDs in $gid4 and $gid6 (TAP lines)
#   tools_pair_ready       tools_pair_setup on both sides; bails out unless
#                          both succeeded
#   pair_run SERVER FAMILY TYPE [ARGS...]
#                          one run of a tool across the pair, both sides
#                          calling it alike (a TAP line each)
#
# tool_setup TYPE is one of
#   pp        ibv_rc_pingpong, ARGS are its options (-s, -n, -e)
#   ucpp      ibv_uc_pingpong, the same over UC
#   srqpp     ibv_srq_pingpong, the same over RC QPs sharing an SRQ
#   xsrqpp    ibv_xsrq_pingpong, XRC: each side's initiator QP sends into
#             the other's XRC SRQ through its target QP
#   perftest  ARGS are a perftest program and its options
#   rping     rping -V -C 10 (ARGS are added)
#   ucmatose  ucmatose, one connection, 10 messages (ARGS are added)
#   ucx       UCX's ucx_perftest on the UCT transport ARGS[0] (rc_verbs or
#             ud_verbs; ucp: a UCP test over the transports of UCX_TLS) of
#             $dev:1, test ARGS[1] (am_lat, put_bw, tag_bw, ...), the rest
#             its options; the server takes them from the client
#   fabric    libfabric's fi_pingpong with provider ARGS[0] (verbs, or
#             "verbs;ofi_rxm" for -e rdm) on domain $dev, the rest its
#             options; IPv6 runs add -6
# ucx and fabric run with the VAR=VALUE words of the array $tool_env (if
# set) in their environment.
# GID is the local GID index, PORT the port (TCP or rdma_cm) of this run,
# SRV_IP4 the server's IPv4 address, SRV_IP its address of the family
# under test, PEER_IP the address the other end's GID is made from. It
# sets srv and cli (the server's and client's command lines), tool_type,
# tool_port, tool_listen (tcp or cm), tool_peer_gid (the other end's GID
# as the tool prints it) and tool_desc (the run in words, e.g.
# "ibv_rc_pingpong -s 1 -n 20", "ib_read_lat -s 2 -n 200", "ucmatose").
#
# ibv_rc_pingpong and perftest exchange their QP data over a TCP side
# channel that ibv_rc_pingpong's server opens on IPv4 only (getaddrinfo
# gives 0.0.0.0 first), so both always connect it over IPv4; which GID the
# RDMA traffic uses is their -g / -x. rping and ucmatose use rdma_cm, which
# picks the GID from the address, so they get the address under test.

# shellcheck shell=bash

tools_dev() {
	modprobe rdma_ucm || return 1
	kind_dev "$1" || return
	vm_ib_nodes
}

# The GID of an IPv4 or IPv6 address as ibv_rc_pingpong prints it
# (inet_ntop), and as perftest does (16 bytes in decimal, %02d).
pp_gid() {
	case $1 in
	*:*) echo "$1" ;;
	*) echo "::ffff:$1" ;;
	esac
}

perftest_gid() {
	local hex g out=
	local -a groups
	hex=$(vm_gid_hex "$1") || return 1
	IFS=: read -ra groups <<<"$hex"
	for g in "${groups[@]}"; do
		printf -v out '%s:%02d:%02d' "$out" "$((16#${g:0:2}))" "$((16#${g:2:2}))"
	done
	echo "${out#:}"
}

# perftest_mgid ARGS...: the group of perftest's -M in ARGS (16 decimal
# bytes) as perftest prints it, two digits a byte; nothing without -M.
perftest_mgid() {
	local b out=
	local -a bytes
	while [ $# -gt 1 ] && [ "$1" != -M ]; do
		shift
	done
	[ "$1" = -M ] || return 0
	IFS=: read -ra bytes <<<"$2"
	for b in "${bytes[@]}"; do
		printf -v out '%s:%02d' "$out" "$b"
	done
	echo "${out#:}"
}

# shellcheck disable=SC2034 # srv, cli and tool_* are the caller's
tool_setup() {
	local gid=$2 port=$3 sip4=$4 sip=$5 peer=$6
	tool_type=$1
	tool_port=$port
	shift 6
	case $tool_type in
	pp | ucpp | srqpp | xsrqpp)
		local prog=ibv_rc_pingpong
		[ "$tool_type" = ucpp ] && prog=ibv_uc_pingpong
		[ "$tool_type" = srqpp ] && prog=ibv_srq_pingpong
		[ "$tool_type" = xsrqpp ] && prog=ibv_xsrq_pingpong
		srv=("$prog" -d "$dev" -g "$gid" -p "$port" -m 1024 "$@")
		cli=("${srv[@]}" "$sip4")
		tool_listen=tcp
		tool_peer_gid=$(pp_gid "$peer")
		tool_desc="$prog $*"
		;;
	perftest)
		srv=("$1" -d "$dev" -x "$gid" -p "$port" -F "${@:2}")
		cli=("${srv[@]}" "$sip4")
		tool_listen=tcp
		tool_peer_gid=$(perftest_gid "$peer")
		tool_mgid=$(perftest_mgid "$@")
		tool_desc="$*"
		;;
	rping)
		srv=(rping -s -a "$sip" -p "$port" -V -C 10 "$@")
		cli=(rping -c -a "$sip" -p "$port" -V -C 10 "$@")
		tool_listen=cm
		tool_peer_gid=
		tool_desc="rping -V -C 10 $*"
		;;
	ucmatose)
		srv=(ucmatose -b "$sip" -p "$port" "$@")
		cli=(ucmatose -s "$sip" -p "$port" "$@")
		tool_listen=cm
		tool_peer_gid=
		tool_desc="ucmatose $*"
		;;
	ucx)
		srv=(env UCX_NET_DEVICES="$dev:1" "${tool_env[@]}" ucx_perftest -p "$port")
		cli=(env UCX_NET_DEVICES="$dev:1" "${tool_env[@]}" ucx_perftest "$sip4" -p "$port")
		[ "$1" = ucp ] || cli+=(-d "$dev:1" -x "$1")
		cli+=(-t "$2" "${@:3}")
		tool_listen=tcp
		tool_peer_gid=
		tool_desc="ucx_perftest -x $*"
		;;
	fabric)
		local six=()
		case $sip in *:*) six=(-6) ;; esac
		# ofi_rxm sizes its CQs by the expected number of peers (256
		# by default): more entries than the device's max_cqe.
		srv=(env FI_UNIVERSE_SIZE=4 "${tool_env[@]}" fi_pingpong -p "$1"
			-d "$dev" -B "$port" "${six[@]}" "${@:2}")
		cli=(env FI_UNIVERSE_SIZE=4 "${tool_env[@]}" fi_pingpong -p "$1"
			-d "$dev" -P "$port" "${six[@]}" "${@:2}" "$sip")
		tool_listen=tcp
		tool_peer_gid=
		tool_desc="fi_pingpong -p $*"
		;;
	*) return 1 ;;
	esac
	tool_desc=${tool_desc% }
}

# tool_serve LOG: start the server ($srv) under a limit of 150 s, its
# output in LOG, its PID in $tool_pid; succeeds once it listens.
tool_serve() {
	timeout -k 5 150 "${srv[@]}" >"$1" 2>&1 &
	tool_pid=$!
	tool_wait_listen "$tool_pid"
}

# A TCP socket in state LISTEN on port $1 (/proc/net/tcp{,6}, no forks).
tcp_listening() {
	local want f _sl laddr _raddr st _rest
	printf -v want ':%04X' "$1"
	for f in /proc/net/tcp /proc/net/tcp6; do
		while read -r _sl laddr _raddr st _rest; do
			[ "$st" = 0A ] && [ "${laddr: -5}" = "$want" ] && return 0
		done <"$f"
	done
	return 1
}

# An rdma_cm ID listening on port $1 ("rdma resource show cm_id" prints
# "... state LISTEN ... src-addr ADDR:PORT ...", one line per ID).
cm_listening() {
	rdma resource show cm_id 2>/dev/null |
		grep -qE "state LISTEN .*src-addr [^ ]*:$1 "
}

# tool_wait_listen PID: succeeds once the server PID listens on $tool_port;
# fails if it exits first or takes over 20 s.
tool_wait_listen() {
	local end=$((SECONDS + 20))
	while :; do
		if [ "$tool_listen" = tcp ]; then
			tcp_listening "$tool_port" && return 0
		else
			cm_listening "$tool_port" && return 0
		fi
		kill -0 "$1" 2>/dev/null || return 1
		[ "$SECONDS" -ge "$end" ] && return 1
		_vm_sleep
	done
}

# perftest's result: a line of numbers after the "#bytes" header.
perftest_result() {
	awk 'f && $1 ~ /^[0-9]+$/ && NF >= 4 { ok = 1; exit }
		/#bytes/ { f = 1 }
		END { exit !ok }' "$1"
}

# tool_check client|server FILE: prints what is wrong, if anything.
tool_check() {
	case $tool_type in
	pp | ucpp | srqpp)
		grep -q " iters in " "$2" || echo "no \"iters in\" line"
		grep -qF "GID $tool_peer_gid" "$2" ||
			echo "the other end's GID is not $tool_peer_gid"
		# -P goes on without its prefetch if ibv_advise_mr fails.
		! grep -q "Couldn't prefetch" "$2" || echo "ibv_advise_mr failed"
		;;
	xsrqpp)
		grep -qx "success" "$2" || echo "no \"success\" line"
		grep -q "remote: .*GID $tool_peer_gid\$" "$2" ||
			echo "the other end's GID is not $tool_peer_gid"
		;;
	perftest)
		# A multicast client's other end is its group.
		if [ "$1" = client ] && [ -n "$tool_mgid" ]; then
			grep -qF "MGID: $tool_mgid" "$2" ||
				echo "the group is not $tool_mgid"
		else
			grep -qF "GID: $tool_peer_gid" "$2" ||
				echo "the other end's GID is not $tool_peer_gid"
		fi
		[ "$1" = server ] || perftest_result "$2" || echo "no result line"
		;;
	ucmatose)
		grep -q "^return status 0" "$2" || echo "no \"return status 0\""
		;;
	ucx)
		[ "$1" = server ] || grep -q "^Final: " "$2" ||
			echo "no \"Final:\" line"
		;;
	fabric)
		# "bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec",
		# then a line per size with as many acknowledged as sent.
		awk 'f && NF >= 8 && $3 == "=" $2 { ok = 1 }
			$1 == "bytes" && $2 == "#sent" { f = 1 }
			END { exit !ok }' "$2" || echo "no result line with every message acknowledged"
		;;
	esac
}

# tool_fin_race RC LOG: the fi_pingpong run that wrote LOG and exited with
# RC completed and checked every message, and failed only in its own
# teardown race. pp_finalize() sends "fin" with FI_TRANSMIT_COMPLETE and
# waits for that send's completion and for the peer's fin, then closes
# without a handshake: a peer that has both its completions closes its
# endpoint while this side may not have read its fin's completion yet.
# If ofi_rxm reads the peer's shutdown event first, it closes its verbs
# endpoint, which destroys the QP (the provider drops the QP's unread
# completions, as mlx5's does) and reports every send it has not seen
# complete as flushed (libfabric 1.17: prov/verbs vrb_ep_close(), rxm
# rxm_flush_msg_cq()): fi_pingpong exits with FI_ECANCELED (125) after
# its full result line. About one run in 60 of the RDM case under host
# load, either device serving. Only the RDM endpoints over ofi_rxm (the
# MSG endpoints' fi_pingpong reads no shutdown event while it waits, so
# nothing flushes there), only a log with nothing else in it, and only
# once per script: a device that lost the last ACK or completion every
# time would look the same, and fails the second time.
tool_fin_races=0
tool_fin_race() {
	[ "$tool_type" = fabric ] && [ "$1" = 125 ] || return 1
	case " ${srv[*]} " in
	*" -p verbs;ofi_rxm "*" -e rdm "*) ;;
	*) return 1 ;;
	esac
	[ "$tool_fin_races" -eq 0 ] || return 1
	awk '/^\[error\] [^ ]*: cq_readerr: Work Request Flushed Error$/ { e++; next }
		$1 == "bytes" && $2 == "#sent" { h++; next }
		NF >= 8 && $3 == "=" $2 { r++; next }
		NF { other++ }
		END { exit !(e == 1 && h == 1 && r >= 1 && !other) }' "$2" || return 1
	tool_fin_races=$((tool_fin_races + 1))
}

# tool_reap CRC: the exit status of the server $tool_pid, whose client
# exited with status CRC. A server that outlives its client by 30 s (5 s
# if the client failed) is stopped (timeout(1), which $tool_pid is,
# passes SIGTERM on).
tool_reap() {
	local s=5 end
	[ "$1" = 0 ] && s=30
	end=$((SECONDS + s))
	while kill -0 "$tool_pid" 2>/dev/null; do
		if [ "$SECONDS" -ge "$end" ]; then
			tap_diag "server still running $s s after its client: stopping it"
			kill "$tool_pid" 2>/dev/null
			break
		fi
		_vm_sleep
	done
	wait "$tool_pid"
}

tool_problems() {
	[ -z "$1" ] || printf '%s\n' "$1" | sed 's/^/# /'
}

tool_log() {
	tail -n "${2:-12}" "$1" | sed 's/^/#   /'
}

tool_keep() {
	[ -n "${VROCE_OUT:-}" ] && cp -- "$@" "$VROCE_OUT/" 2>/dev/null
	return 0
}

# tools_pair_setup: the device of $kind, its port and its two GIDs ($gid4,
# $gid6), each a TAP line; fails at the first miss.
tools_pair_setup() {
	local rc
	tools_dev "$kind"
	rc=$?
	tap_result $rc "$dev ($kind) on eth0, rdma_ucm loaded"
	[ $rc -eq 0 ] || return 1
	vm_wait_port_active "$dev" 30
	rc=$?
	tap_result $rc "$dev port active"
	[ $rc -eq 0 ] || return 1
	gid4=$(dev_gid "$VROCE_SELF_IP4" 10)
	rc=$?
	tap_result $rc "RoCE v2 GID of $VROCE_SELF_IP4: index $gid4"
	[ $rc -eq 0 ] || return 1
	gid6=$(dev_gid "$VROCE_SELF_IP6" 15)
	rc=$?
	tap_result $rc "RoCE v2 GID of $VROCE_SELF_IP6: index $gid6"
	[ $rc -eq 0 ]
}

# tools_pair_ready: tools_pair_setup here and on the peer; both must be
# ready, or neither runs anything (bails out).
tools_pair_ready() {
	local ready peer_ready
	tools_pair_setup
	ready=$?
	vm_send ready "$ready"
	peer_ready=$(vm_recv ready 120)
	[ "$ready" = 0 ] || tap_bail "setup failed on this side"
	[ "$peer_ready" = 0 ] || tap_bail "setup failed on the peer ($peer_ready)"
}

n=0
servers=0
clients=0
tool_env=()

# tool_state FILE PID: what this side looked like when a pair case failed,
# into FILE, then as TAP diagnostics: the RDMA device's counters and QPs,
# the kernel's last messages, eth0's and the softirqs' counters, the
# neighbour entries, the TCP sockets (rdma_cm's and the tools'
# out-of-band exchanges), and PID's process tree with each thread's wait
# channel and kernel stack (where a hung tool waits). Made for the rare
# hang that does not reproduce by hand: it shows which side, which layer.
# The rdma commands query the device's QPs, which may wait for a lock the
# hang holds: they run on their own, and what they printed within 5 s is
# shown.
tool_state() {
	local f=$1 p t st pids=("$2") i=0
	rm -f "$f.done"
	{
		echo "== rdma statistic $dev/1"
		rdma statistic show link "$dev/1"
		echo "== rdma resource qp"
		rdma resource show qp link "$dev/1"
		: >"$f.done"
	} >"$f.rdma" 2>&1 &
	disown $!
	while [ "$i" -lt "${#pids[@]}" ]; do
		# shellcheck disable=SC2207 # pids are words
		pids+=($(pgrep -P "${pids[$i]}"))
		i=$((i + 1))
	done
	for i in $(seq 25); do
		[ -e "$f.done" ] && break
		_vm_sleep
	done
	{
		cat "$f.rdma"
		[ -e "$f.done" ] || echo "(rdma did not finish in 5 s)"
		echo "== dmesg"
		dmesg | tail -n 15
		echo "== ip -s link show eth0"
		ip -s -s link show eth0
		echo "== softnet_stat"
		cat /proc/net/softnet_stat
		echo "== ip neigh"
		ip neigh show dev eth0
		echo "== ss -tanp"
		ss -tanp
		for p in "${pids[@]}"; do
			for t in /proc/"$p"/task/*; do
				st=$(cat "$t/stat" 2>/dev/null) || continue
				st=${st##*) }
				echo "== task ${t##*/} ($(cat "$t/comm")): ${st%% *} $(cat "$t/wchan")"
				sed -n '1,8p' "$t/stack"
			done
		done
	} >"$f" 2>&1
	tap_diag "state of this side ($VROCE_ROLE):"
	sed -n '1,150p' "$f" | sed 's/^/#   /'
	tool_keep "$f"
}

# _pair_client LOG STATE: run the client, its output in LOG; after 120 s
# (scaled) its state goes to STATE and it is stopped (status 124).
_pair_client() {
	local lim pid wd rc which
	lim=$(vm_scaled 120)
	"${cli[@]}" >"$1" 2>&1 &
	pid=$!
	sleep "$lim" &
	wd=$!
	wait -n -p which "$pid" "$wd"
	rc=$?
	if [ "$which" = "$pid" ]; then
		kill "$wd" 2>/dev/null
		wait "$wd" 2>/dev/null
		return "$rc"
	fi
	tap_diag "timed out after $lim s: ${cli[*]}"
	tool_state "$2" "$pid"
	kill "$pid" 2>/dev/null
	sleep 5 &
	wd=$!
	which=
	wait -n -p which "$pid" "$wd"
	if [ "$which" = "$pid" ]; then
		kill "$wd" 2>/dev/null
	else
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" "$wd" 2>/dev/null
	return 124
}

# _pair_fin_race LOG: tool_fin_race with this side's status $rc, said as a
# TAP diagnostic when it is that.
_pair_fin_race() {
	[ "$rc" != 0 ] && tool_fin_race "$rc" "$1" || return 1
	tap_diag "case $n: every message went through and was checked; fi_pingpong then lost its teardown race (its fin's send completion reported as flushed, status 125): not a failure of the device"
	tool_keep "$1"
}

# _pair_serve DESC: run the server of case $n, tell the client when it listens,
# wait for it to finish. A server that outlives its client by 30 s (5 s
# if the client failed) is stopped.
_pair_serve() {
	local log=/tmp/tools.$n.srv rc up=0 crc problems
	tool_serve "$log" || up=1
	vm_send "up.$n" "$up"
	crc=$(vm_recv "done.$n" 200)
	# The client failed while this server runs on: where does it wait?
	[ "$crc" != 0 ] && kill -0 "$tool_pid" 2>/dev/null &&
		tool_state "/tmp/tools.$n.srv.state" "$tool_pid"
	tool_reap "$crc"
	rc=$?
	_pair_fin_race "$log" && rc=0
	[ $rc -eq 0 ] && problems=$(tool_check server "$log")
	if [ $rc -eq 0 ] && [ -z "$problems" ]; then
		tap_ok "$1: server"
		return
	fi
	tap_fail "$1: server"
	[ $up -eq 0 ] || tap_diag "it never listened on port $tool_port"
	[ $rc -eq 124 ] && tap_diag "timed out"
	tap_diag "command: ${srv[*]} (status $rc)"
	tool_problems "$problems"
	tool_log "$log"
	tool_keep "$log"
}

# _pair_drive DESC: run the client of case $n once the server listens.
_pair_drive() {
	local log=/tmp/tools.$n.cli up rc t0 problems
	up=$(vm_recv "up.$n" 60)
	if [ "$up" != 0 ]; then
		vm_send "done.$n" 1
		tap_fail "$1: client (the server did not start)"
		return
	fi
	t0=$SECONDS
	_pair_client "$log" "/tmp/tools.$n.cli.state"
	rc=$?
	_pair_fin_race "$log" && rc=0
	vm_send "done.$n" "$rc"
	[ $rc -eq 0 ] && problems=$(tool_check client "$log")
	if [ $rc -eq 0 ] && [ -z "$problems" ]; then
		tap_ok "$1: client ($((SECONDS - t0)) s)"
		return
	fi
	tap_fail "$1: client ($((SECONDS - t0)) s)"
	tap_diag "command: ${cli[*]} (status $rc)"
	tool_problems "$problems"
	tool_log "$log"
	tool_keep "$log"
}

# pair_run SERVER FAMILY TYPE [ARGS...]: one run of a tool across a VM
# pair, SERVER (a or b) serving, over the GID of FAMILY (4 or 6) (after
# tools_pair_setup); case $n, counted in $servers or $clients. Both sides
# call it with the same arguments.
pair_run() {
	local server=$1 fam=$2 type=$3 gid sip4 sip peer desc
	shift 3
	n=$((n + 1))
	if [ "$fam" = 4 ]; then
		gid=$gid4
		peer=$VROCE_PEER_IP4
	else
		gid=$gid6
		peer=$VROCE_PEER_IP6
	fi
	if [ "$server" = "$VROCE_ROLE" ]; then
		sip4=$VROCE_SELF_IP4
		sip=$VROCE_SELF_IP4
		[ "$fam" = 6 ] && sip=$VROCE_SELF_IP6
	else
		sip4=$VROCE_PEER_IP4
		sip=$peer
	fi
	tool_setup "$type" "$gid" $((19000 + n)) "$sip4" "$sip" "$peer" "$@"
	desc="IPv$fam $tool_desc, ${server^^} serves"
	if [ "$server" = "$VROCE_ROLE" ]; then
		_pair_serve "$desc"
		servers=$((servers + 1))
	else
		_pair_drive "$desc"
		clients=$((clients + 1))
	fi
}
