# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The wire benchmark of scripts/bench --pair, run inside both VMs of a
# pair (sourced by scripts/bench after lib.sh, _vroce.sh, _tools.sh and
# bench.sh). VM A (192.0.2.1) runs every server, VM B (192.0.2.2) every
# client; B writes the tables to $VROCE_OUT/table.txt.
#
# For each MTU of $mtus: both sides set eth0's MTU, then run the rows with
# rdma_rxe on both sides, then with vroce on both sides, then (main set
# only) iperf3 TCP and qperf udp_lat and tcp_lat, each $repeat times.
#
# Both sides walk the same list of runs in the same order and number them
# ($n); the run's number keys the messages they exchange (vm_send and
# vm_recv): up.N (0: the server listens), done.N (the client's exit
# status), ctr.N (the server's counter deltas and CPU time).
#
# CPU cost: each side reads the kernel's share of its CPU time (system,
# irq and softirq ticks of /proc/stat) before and after each run of a
# bandwidth row and of iperf3; B divides the sum of both sides by the
# bytes the run moved, into "CPU seconds per GB". User time is left out:
# perftest's clients (and SEND servers) spin on their CQ at 100% of a
# CPU whatever the stack, while the stack's own work (copies, checksums,
# packets, for rdma_rxe and TCP also the system calls) is kernel time.

# shellcheck shell=bash
# shellcheck disable=SC2154 # top, out, set, pattern, repeat, mtus, profile,
# dev, srv, cli, tool_pid: set by scripts/bench or by _tools.sh

srv_ip4=192.0.2.1
n=0

# The RDMA path MTU perftest asks for (-m) on an Ethernet MTU: the
# largest IB MTU that leaves room for IPv6, UDP, BTH, RETH and ICRC.
path_mtu() {
	local m
	for m in 4096 2048 1024 512 256; do
		[ $((m + 80)) -le "$1" ] && { echo "$m"; return; }
	done
	echo 256
}

# counters: "RETRANSMITS TIMEOUTS" of $dev (vroce only; "0 0" otherwise).
counters() {
	local r t
	if [ "$kind" = vroce ]; then
		r=$(bench_counter "$dev" retransmits)
		t=$(bench_counter "$dev" retry_timeouts)
	fi
	echo "${r:-0} ${t:-0}"
}

# kcpu: the kernel's CPU time so far on this VM, in ticks (USER_HZ):
# system, irq and softirq of all CPUs.
kcpu() {
	awk '$1 == "cpu" { print $4 + $7 + $8; exit }' /proc/stat
}

# cost_per_gb TICKS BYTES: CPU seconds per GB, or nothing.
cost_per_gb() {
	awk -v t="$1" -v b="$2" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { if (b > 0) printf "%.3g\n", t / hz / (b / 1e9) }'
}

# counter_delta "R0 T0" "R1 T1": "R T"
counter_delta() {
	local r0 t0 r1 t1
	read -r r0 t0 <<<"$1"
	read -r r1 t1 <<<"$2"
	echo "$((r1 - r0)) $((t1 - t0))"
}

# prof_start NAME / prof_stop: perf record of the whole VM (both sides
# profile the same run), its top entries in $VROCE_OUT/profile-NAME.txt.
prof_start() {
	prof_name=$1
	perf record -e cpu-clock -a -o "/tmp/perf-$1.data" >/dev/null 2>&1 &
	prof_pid=$!
	# perf writes its file's header once its events are open: under TCG
	# that takes seconds.
	wait_for 60 test -s "/tmp/perf-$1.data"
	sleep 1
}

prof_stop() {
	kill -INT "$prof_pid" 2>/dev/null
	wait "$prof_pid"
	{
		echo "# perf record -e cpu-clock -a on VM $VROCE_ROLE during $prof_name"
		perf report -i "/tmp/perf-$prof_name.data" --stdio 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 60
	} >"${VROCE_OUT:-/tmp}/profile-$prof_name.txt"
}

# timed S ARGS...: ARGS in $targv, with their count (-n N) replaced by a
# time (-D S). The profiled run is timed: a count that takes a fraction
# of a second gives a profile of mostly the harness around it.
timed() {
	local s=$1
	shift
	targv=()
	while [ $# -gt 0 ]; do
		case $1 in
		-n | -D) shift ;;
		*) targv+=("$1") ;;
		esac
		shift
	done
	targv+=(-D "$s")
}

# serve_run COL REQ ARGS...: the server of run $n (VM A). For a row whose
# figure is the server's (REQ srv), ctr.N also carries that figure
# (column COL of its result).
serve_run() {
	local log=/tmp/run.$n.srv up=0 crc c0 c1 k0 k1 col=$1 req=$2 res=
	shift 2
	tool_setup perftest "$gid" $((20000 + n)) "$srv_ip4" "$srv_ip4" \
		"$VROCE_PEER_IP4" "$@"
	[ -n "${prof:-}" ] && prof_start "$prof"
	c0=$(counters)
	k0=$(kcpu)
	tool_serve "$log" || up=1
	vm_send "up.$n" "$up"
	idle_wait "done.$n" 200 "$tool_pid"
	k1=$(kcpu)
	crc=$(vm_recv "done.$n" 200)
	tool_reap "${crc:-1}" >/dev/null
	c1=$(counters)
	[ -n "${prof:-}" ] && prof_stop
	[ "$req" = srv ] && [ "$crc" = 0 ] &&
		res=$(bench_result "$log" "$col")
	vm_send "ctr.$n" "$(counter_delta "$c0" "$c1") $((k1 - k0)) $res"
}

# drive_run COLUMN REQ ARGS...: the client of run $n (VM B); prints the
# result (for REQ srv the server's), then "ctr RETRANSMITS TIMEOUTS" for
# this side and the server's, then "cpu TICKS BYTES": the kernel CPU time
# of both sides during the run, and the bytes it moved (bandwidth runs of
# a count only: a timed run (-D, the srv rows) reports the bytes of its
# middle, without perftest's margins at either end, and the CPU time
# covers all of it).
drive_run() {
	local col=$1 req=$2 log=/tmp/run.$n.cli up rc=1 c0 c1 k0 k1 pk pv
	local bytes=
	shift 2
	tool_setup perftest "$gid" $((20000 + n)) "$srv_ip4" "$srv_ip4" \
		"$VROCE_PEER_IP4" "$@"
	[ -n "${prof:-}" ] && prof_start "$prof"
	c0=$(counters)
	up=$(vm_recv "up.$n" 60)
	if [ "$up" = 0 ]; then
		k0=$(kcpu)
		timeout -k 5 120 "${cli[@]}" >"$log" 2>&1
		rc=$?
		k1=$(kcpu)
	fi
	vm_send "done.$n" "$rc"
	c1=$(counters)
	[ -n "${prof:-}" ] && prof_stop
	read -r _ _ pk pv < <(vm_recv "ctr.$n" 60 | tee /tmp/ctr.peer)
	if [ "$req" = srv ]; then
		[ "$rc" = 0 ] && [ -n "$pv" ] && echo "$pv"
	else
		[ "$rc" = 0 ] && bench_result "$log" "$col"
		# The result line: #bytes #iterations ...
		bytes=$(awk '/#bytes/ { f = 1; next }
			f && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print $1 * $2; exit }' "$log")
	fi
	echo "ctr $(counter_delta "$c0" "$c1") $(cat /tmp/ctr.peer)"
	[ "$rc" = 0 ] && [ -n "$bytes" ] && [ -n "$pk" ] &&
		echo "cpu $((k1 - k0 + pk)) $bytes"
	if [ "$rc" != 0 ]; then
		echo "run $n failed ($rc): ${cli[*]} (log: fail-$n.cli)" >&2
		cp "$log" "${VROCE_OUT:-/tmp}/fail-$n.cli"
	fi
}

# idle_wait KEY S [PID]: wait up to S s until the peer (B) has sent KEY,
# or PID has exited, like vm_recv but without starting a program while it
# waits (a builtin read with a time-out on a fifo nobody writes to). VM A
# waits so while its servers serve B's measurements: vm_recv polls with
# two programs a fifth of a second, which on one emulated vCPU would take
# time from the run it measures. It looks for the file vm_send writes
# ($VROCE_SHARED/kv.KEY.b, see lib.sh).
idle_wait() {
	local f=$VROCE_SHARED/kv.$1.b end=$((SECONDS + $2))
	[ -p /tmp/bench.idle ] || mkfifo /tmp/bench.idle
	exec 9<>/tmp/bench.idle
	while [ ! -e "$f" ] && [ ! -e "$VROCE_SHARED/exited.b" ] &&
		[ "$SECONDS" -lt "$end" ]; do
		[ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && break
		read -r -t 0.5 -u 9 _
	done
	exec 9<&-
}

# stack_up KIND: the device of KIND on eth0 on this side, its port active
# and its IPv4 GID index in $gid; both sides learn whether both succeeded.
stack_up() {
	local ok=1 peer
	if tools_dev "$1" && vm_wait_port_active "$dev" 30 &&
		gid=$(dev_gid "$VROCE_SELF_IP4" 15); then
		ok=0
	fi
	n=$((n + 1))
	vm_send "stack.$n" "$ok"
	peer=$(vm_recv "stack.$n" 120)
	[ "$ok" = 0 ] && [ "$peer" = 0 ]
}

stack_down() {
	rdma link delete "$dev" 2>/dev/null
	if [ "$1" = rxe ]; then
		rmmod rdma_rxe 2>/dev/null
	else
		rmmod vroce 2>/dev/null
	fi
}

# bench_stack KIND MTU: every selected row, $repeat times, with KIND on
# both sides. On B the results go to $out/KIND.MTU ("NAME UNIT MEDIAN
# MIN MAX" or "NAME UNIT n/a"), for bandwidth rows the CPU cost to
# $out/cpu.KIND.MTU ("NAME MEDIAN MIN MAX") and, for vroce, the requester
# side's counter deltas summed over the row's runs to $out/ctr.MTU.
bench_stack() {
	local k=$1 mtu=$2 pm name unit col req tool args ok=0 i v r t sr st psr pst
	local -a argv targv
	kind=$k
	pm=$(path_mtu "$mtu")
	stack_up "$k" || ok=1
	[ "$VROCE_ROLE" = b ] && [ $ok -ne 0 ] &&
		echo "$k: device setup failed on a side; its rows are n/a" >&2
	: >"$out/$k.$mtu"
	[ "$k" = vroce ] && : >"$out/ctr.$mtu"
	: >"$out/cpu.$k.$mtu"
	while read -r name unit col req tool args; do
		read -ra argv <<<"$args"
		argv=("$tool" "${argv[@]}" -m "$pm")
		: >"$out/vals"
		: >"$out/cvals"
		r=0
		t=0
		for i in $(seq $((repeat + 1))); do
			prof=
			if [ "$i" -gt "$repeat" ]; then
				# One more run under perf, not counted, for the first
				# row of each stack at the first MTU.
				if [ -z "$profile" ] || [ "$mtu" != "${mtus%% *}" ] ||
					[ -e "$out/profiled.$k" ]; then
					break
				fi
				prof=$k-$name-mtu$mtu
				: >"$out/profiled.$k"
				timed 10 "${argv[@]}"
				argv=("${targv[@]}")
			fi
			[ $ok -eq 0 ] || continue
			n=$((n + 1))
			if [ "$VROCE_ROLE" = a ]; then
				serve_run "$col" "$req" "${argv[@]}"
				continue
			fi
			drive_run "$col" "$req" "${argv[@]}" >"$out/run"
			[ -n "$prof" ] && continue
			v=$(grep -v -e '^ctr ' -e '^cpu ' "$out/run")
			echo "${v:-fail}" >>"$out/vals"
			[ "$unit" = usec ] || awk '$1 == "cpu" { print $2, $3 }' \
				"$out/run" | { read -r c b && cost_per_gb "$c" "$b"; } \
				>>"$out/cvals"
			# "ctr R T PR PT PK": this side's deltas, then the
			# server's (and its kernel CPU time).
			read -r _ sr st psr pst _ < <(grep '^ctr ' "$out/run")
			r=$((r + sr))
			t=$((t + st))
			if [ "$req" = both ]; then
				r=$((r + ${psr:-0}))
				t=$((t + ${pst:-0}))
			fi
		done
		[ "$VROCE_ROLE" = b ] || continue
		v=$(bench_stats <"$out/vals")
		echo "$k $name mtu $mtu: $(tr '\n' ' ' <"$out/vals")" >&2
		echo "$name $unit ${v:-n/a}" >>"$out/$k.$mtu"
		v=$(bench_stats <"$out/cvals")
		[ -n "$v" ] && echo "$name $v" >>"$out/cpu.$k.$mtu"
		[ "$k" = vroce ] && echo "$name $r $t" >>"$out/ctr.$mtu"
	done < <(bench_select "$set" "$pattern")
	stack_down "$k"
}

# tcp_bench MTU: iperf3 (5 s) $repeat times, then qperf udp_lat and
# tcp_lat $repeat times; on B the results to $out/tcp.MTU, and iperf3's
# CPU cost to $out/cpu.tcp.MTU.
tcp_bench() {
	local mtu=$1 i rc pid v k0 k1 pk
	: >"$out/iperf"
	: >"$out/tcpcpu"
	: >"$out/udp"
	: >"$out/tcpl"
	for i in $(seq "$repeat"); do
		n=$((n + 1))
		if [ "$VROCE_ROLE" = a ]; then
			timeout -k 5 120 iperf3 -s -1 -B "$srv_ip4" >/dev/null 2>&1 &
			pid=$!
			tool_port=5201 tool_listen=tcp tool_wait_listen "$pid"
			rc=$?
			k0=$(kcpu)
			vm_send "up.$n" $rc
			wait "$pid"
			vm_send "kcpu.$n" $(($(kcpu) - k0))
			vm_recv "done.$n" 200 >/dev/null
			continue
		fi
		rc=1
		k0=$(kcpu)
		[ "$(vm_recv "up.$n" 60)" = 0 ] &&
			timeout -k 5 120 iperf3 -c "$srv_ip4" -t 5 -J >"$out/iperf.json" 2>/dev/null
		rc=$?
		k1=$(kcpu)
		vm_send "done.$n" "$rc"
		pk=$(vm_recv "kcpu.$n" 60)
		awk -F'[:,]' '/"sum_received"/ { f = 1 }
			f && /"bits_per_second"/ { printf "%.4f\n", $2 / 1e9; exit }' \
			"$out/iperf.json" >>"$out/iperf"
		[ "$rc" = 0 ] && [ -n "$pk" ] && cost_per_gb $((k1 - k0 + pk)) \
			"$(awk -F'[:,]' '/"sum_received"/ { f = 1 }
				f && /"bytes"/ { print $2 + 0; exit }' "$out/iperf.json")" \
			>>"$out/tcpcpu"
	done
	n=$((n + 1))
	if [ "$VROCE_ROLE" = a ]; then
		timeout -k 5 $((60 * repeat + 120)) qperf >/dev/null 2>&1 &
		pid=$!
		tool_port=19765 tool_listen=tcp tool_wait_listen "$pid"
		vm_send "up.$n" $?
		idle_wait "done.$n" $((60 * repeat + 60))
		kill "$pid" 2>/dev/null
		wait "$pid"
		return
	fi
	if [ "$(vm_recv "up.$n" 60)" = 0 ]; then
		for i in $(seq "$repeat"); do
			# -uu: every result in one unit (ns for latency).
			timeout -k 5 60 qperf -uu -t 3 "$srv_ip4" udp_lat tcp_lat |
				awk '/^[a-z_]+:$/ { t = $1 }
					$1 == "latency" {
						v = $3
						if ($4 == "ns") v /= 1000
						else if ($4 == "ms") v *= 1000
						else if ($4 == "sec" || $4 == "s") v *= 1e6
						print t, v
					}' >"$out/qperf"
			awk '$1 == "udp_lat:" { print $2 }' "$out/qperf" >>"$out/udp"
			awk '$1 == "tcp_lat:" { print $2 }' "$out/qperf" >>"$out/tcpl"
		done
	fi
	vm_send "done.$n" 0
	{
		v=$(bench_stats <"$out/iperf")
		echo "iperf3_TCP Gb/s ${v:-n/a}"
		v=$(bench_stats <"$out/tcpcpu")
		[ -n "$v" ] && echo "iperf3_TCP $v" >"$out/cpu.tcp.$mtu"
		v=$(bench_stats <"$out/udp")
		echo "qperf_udp_lat usec ${v:-n/a}"
		v=$(bench_stats <"$out/tcpl")
		echo "qperf_tcp_lat usec ${v:-n/a}"
	} >"$out/tcp.$mtu"
	echo "TCP mtu $mtu: $(tr '\n' ' ' <"$out/tcp.$mtu")" >&2
}

# cpu_table MTU: the kernel CPU seconds per GB of each bandwidth row, both
# VMs together, for each stack (B).
cpu_table() {
	local mtu=$1 name m lo hi a b
	[ -s "$out/cpu.rxe.$mtu" ] || [ -s "$out/cpu.vroce.$mtu" ] ||
		[ -s "$out/cpu.tcp.$mtu" ] || return 0
	echo "Kernel CPU seconds per GB moved (system+irq+softirq, both VMs): median (min-max)"
	printf '%-24s %-22s %-22s\n' benchmark rdma_rxe vroce
	{
		cat "$out/cpu.rxe.$mtu" "$out/cpu.vroce.$mtu" 2>/dev/null |
			awk '!s[$1]++ { print $1 }'
	} | while read -r name; do
		a=n/a
		b=n/a
		read -r _ m lo hi < <(grep -m1 "^$name " "$out/cpu.rxe.$mtu")
		[ -n "$m" ] && a=$(bench_cell "$m" "$lo" "$hi")
		m=
		read -r _ m lo hi < <(grep -m1 "^$name " "$out/cpu.vroce.$mtu")
		[ -n "$m" ] && b=$(bench_cell "$m" "$lo" "$hi")
		m=
		printf '%-24s %-22s %-22s\n' "$name" "$a" "$b"
	done
	if read -r name m lo hi 2>/dev/null <"$out/cpu.tcp.$mtu"; then
		printf '%-24s %-22s\n' "$name" "$(bench_cell "$m" "$lo" "$hi")"
	fi
}

# table MTU: the table of one MTU (B).
table() {
	local mtu=$1 name unit m lo hi v d tcp
	echo
	echo "Two VMs on one wire, MTU $mtu (RDMA path MTU $(path_mtu "$mtu")), $repeat run(s) a row: median (min-max)"
	bench_table "$out/rxe.$mtu" "$out/vroce.$mtu" "$out/ctr.$mtu"
	[ -s "$out/tcp.$mtu" ] || return 0
	while read -r name unit m lo hi; do
		v=n/a
		[ "$m" = n/a ] || v=$(bench_cell "$m" "$lo" "$hi")
		printf '%-24s %-5s %-22s\n' "$name" "$unit" "$v"
	done <"$out/tcp.$mtu"
	# vroce against TCP: bandwidth vroce / TCP, latency TCP / vroce
	# (above 1: vroce is better).
	tcp=$(awk '$1 == "iperf3_TCP" { print $3 }' "$out/tcp.$mtu")
	for name in ib_write_bw_64KiB ib_read_bw_64KiB; do
		v=$(awk -v r="$name" '$1 == r { print $3 }' "$out/vroce.$mtu")
		if [ -z "$v" ] || [ -z "$tcp" ] || [ "$v" = n/a ] || [ "$tcp" = n/a ]; then
			continue
		fi
		echo "vroce $name / iperf3 TCP: $(bench_ratio "$tcp" "$v")"
	done
	d=$(awk '$1 == "qperf_udp_lat" { print $3 }' "$out/tcp.$mtu")
	v=$(awk '$1 == "ib_send_lat_2B" { print $3 }' "$out/vroce.$mtu")
	if [ -n "$v" ] && [ -n "$d" ] && [ "$v" != n/a ] && [ "$d" != n/a ]; then
		echo "qperf udp_lat / vroce ib_send_lat_2B: $(bench_ratio "$v" "$d") (above 1: vroce is faster)"
	fi
	return 0
}

rmmod vroce 2>/dev/null
for mtu in $mtus; do
	ip link set eth0 mtu "$mtu" || echo "cannot set eth0 mtu $mtu" >&2
	vm_barrier "mtu$mtu" 300 || exit 1
	bench_stack rxe "$mtu"
	bench_stack vroce "$mtu"
	[ "$set" = main ] && printf '%s\n' iperf3_TCP qperf_udp_lat qperf_tcp_lat |
		grep -qE -- "^[^ ]*($pattern)" && tcp_bench "$mtu"
	vm_barrier "end$mtu" 300 || exit 1
done
[ "$VROCE_ROLE" = b ] || exit 0
{
	for mtu in $mtus; do
		table "$mtu"
		echo
		cpu_table "$mtu"
	done
	echo
	echo "VMs: A and B, $(nproc) vCPU and $(free -m | awk '/Mem:/ { print $2 }') MiB each, kernel $(uname -r), QEMU TCG (software emulation); A runs the servers, B the clients"
} >"$VROCE_OUT/table.txt"
