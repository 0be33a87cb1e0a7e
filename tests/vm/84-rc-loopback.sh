#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The stock RC tools within one VM: server and client on the same RDMA
# device, the client going to the VM's own eth0 address, so the traffic
# loops back inside the device's stack. ibv_rc_pingpong (polling, -e,
# 1 MiB), perftest (ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw with
# both atomics, ib_write_lat) and rping -V and ucmatose over rdma_cm, and
# with vroce ibv_rc_pingpong -o -P and -O and ib_read_bw --odp (on-demand
# paging); over
# the IPv4 GID, then the IPv6 GID. One TAP line per run: server and client
# both exited 0 and their output looks right.
#
# The device comes from the environment:
#   VROCE_TOOLS_DEV=rxe|vroce   (default rxe)
# "rxe" is rdma_rxe (rxe0 on eth0), "vroce" the repo's module (vroce0 on
# eth0). As committed this is the self-test of the script with rdma_rxe,
# so vroce is not installed (install=0). To run vroce, add --install
# (the 88-* script does this; the VM then installs and loads vroce; this
# script adds the link) and run, e.g.:
#   scripts/vm --install --env VROCE_TOOLS_DEV=vroce tests/vm/84-rc-loopback.sh
#
# vm: install=0
# vm: timeout=400

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_tools.sh"

want_kind VROCE_TOOLS_DEV rxe

tools_dev "$kind" || tap_bail "cannot set up $kind on eth0"
tap_ok "$dev ($kind) on eth0, rdma_ucm loaded"
vm_wait_port_active "$dev" 30 || tap_bail "$dev port not active"
tap_ok "$dev port active"
gid4=$(dev_gid "$VROCE_SELF_IP4" 10) ||
	tap_bail "no RoCE v2 GID of $VROCE_SELF_IP4"
tap_ok "RoCE v2 GID of $VROCE_SELF_IP4: index $gid4"
gid6=$(dev_gid "$VROCE_SELF_IP6" 15) ||
	tap_bail "no RoCE v2 GID of $VROCE_SELF_IP6"
tap_ok "RoCE v2 GID of $VROCE_SELF_IP6: index $gid6"

n=0
t_start=$SECONDS

# run FAMILY TYPE [ARGS...]: server and client of one tool on $dev, over
# the GID of FAMILY (4 or 6).
run() {
	local fam=$1 type=$2 gid=$gid4 ip=$VROCE_SELF_IP4 desc
	local slog clog up=0 rc src t0 problems=
	shift 2
	n=$((n + 1))
	if [ "$fam" = 6 ]; then
		gid=$gid6
		ip=$VROCE_SELF_IP6
	fi
	tool_setup "$type" "$gid" $((19000 + n)) "$VROCE_SELF_IP4" "$ip" "$ip" "$@"
	desc="IPv$fam $tool_desc"
	slog=/tmp/tools.$n.srv
	clog=/tmp/tools.$n.cli
	t0=$SECONDS
	if tool_serve "$slog"; then
		run_timeout 120 "${cli[@]}" >"$clog" 2>&1
		rc=$?
	else
		up=1
		rc=1
	fi
	tool_reap "$rc"
	src=$?
	if [ $rc -eq 0 ] && [ $src -eq 0 ]; then
		problems=$(tool_check server "$slog"; tool_check client "$clog")
		if [ -z "$problems" ]; then
			tap_ok "$desc ($((SECONDS - t0)) s)"
			return
		fi
	fi
	tap_fail "$desc ($((SECONDS - t0)) s)"
	[ $src -eq 124 ] && tap_diag "the server timed out"
	tool_problems "$problems"
	tap_diag "server: ${srv[*]} (status $src)"
	tool_log "$slog"
	if [ $up -eq 0 ]; then
		tap_diag "client: ${cli[*]} (status $rc)"
		tool_log "$clog"
	else
		tap_diag "it never listened on port $tool_port: no client run"
	fi
	tool_keep "$slog" "$clog"
}

# counter NAME: vroce's port counter NAME.
counter() {
	rdma statistic show link "$dev/1" | tr ' ' '\n' |
		awk -v k="$1" 'p == k { print; exit } { p = $0 }'
}
if [ "$kind" = vroce ]; then
	local0=$(counter tx_local)
	timeouts0=$(counter retry_timeouts)
fi

for fam in 4 6; do
	t0=$SECONDS
	run "$fam" pp -s 4096 -n 20
	run "$fam" pp -e -s 4096 -n 20
	run "$fam" pp -s 1048576 -n 5
	run "$fam" perftest ib_write_bw -s 65536 -n 200 --report_gbits
	run "$fam" perftest ib_read_bw -s 65536 -n 200 --report_gbits
	run "$fam" perftest ib_send_bw -s 65536 -n 200 --report_gbits
	run "$fam" perftest ib_atomic_bw -A FETCH_AND_ADD -n 200 --report_gbits
	run "$fam" perftest ib_atomic_bw -A CMP_AND_SWAP -n 200 --report_gbits
	run "$fam" perftest ib_write_lat -s 2 -n 200
	run "$fam" rping
	run "$fam" ucmatose
	# On-demand paging: rdma_rxe has it from 6.15 on only.
	if [ "$kind" = vroce ]; then
		run "$fam" pp -o -P -c -s 4096 -n 20
		run "$fam" pp -O -c -s 65536 -n 20
		run "$fam" perftest ib_read_bw --odp -s 65536 -n 200 --report_gbits
	fi
	tap_diag "IPv$fam: $((SECONDS - t0)) s"
done
tap_diag "$n runs in $((SECONDS - t_start)) s"
if [ "$kind" = vroce ]; then
	local1=$(counter tx_local)
	timeouts1=$(counter retry_timeouts)
	[ "${local1:-0}" -gt "${local0:-0}" ]
	tap_result $? "RC data between local QPs went MR to MR (tx_local ${local0:-?} -> ${local1:-?})"
	[ -n "$timeouts1" ] && [ "$timeouts1" = "$timeouts0" ]
	tap_result $? "no retransmit time-out on the local path (retry_timeouts ${timeouts0:-?} -> ${timeouts1:-?})"
fi
tap_done
