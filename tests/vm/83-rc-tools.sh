#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Acceptance over the two-VM wire with the stock tools, RC (and UC):
# ibv_rc_pingpong (polling and -e, 1 B to 1 MiB; with -N, the ibv_wr_*
# API of an extended QP, and -c, which checks the data; with -t, completion
# timestamps, and with -o (-P) and -O, on-demand paging, vroce on both
# sides only), ibv_uc_pingpong and
# ibv_srq_pingpong (4 QPs on an SRQ) with -c, ibv_xsrq_pingpong and
# perftest's ib_write_bw, ib_send_bw and ib_read_bw over XRC (-c XRC;
# vroce on both sides only: rdma_rxe has no XRC) and with --odp (vroce on
# both sides only: rdma_rxe has ODP from 6.15 on), perftest (ib_write_bw
# with 64 KiB and 64 B, ib_read_bw, ib_send_bw (RC, UC with -c UC, and
# UD to a multicast group with -c UD -g, received by vroce only),
# ib_atomic_bw with
# FETCH_AND_ADD and CMP_AND_SWAP, ib_write_lat, ib_read_lat, ib_send_lat)
# without rdma_cm, and rping -V and ucmatose over rdma_cm; each over the
# IPv4 GID and the IPv6 GID, once with B as the server and A the client,
# then the other way round (with the same kind on both sides, B serves
# over IPv4 and A over IPv6). Both sides print TAP: one line per run each,
# the server's and the client's (with the client's run time). The log of
# a failed run is kept in that VM's log directory (tools.N.srv or .cli).
#
# Which RDMA device each side uses comes from the environment:
#   VROCE_TOOLS_A=rxe|vroce   (default rxe)
#   VROCE_TOOLS_B=rxe|vroce   (default rxe)
# "rxe" is rdma_rxe (rxe0 on eth0), "vroce" the repo's module (vroce0 on
# eth0). As committed this is the self-test of the script with rdma_rxe on
# both sides, so vroce is not installed (install=0). To run vroce on a
# side, add --install (the VM then installs and loads vroce; this script
# adds the link; the 87-* scripts do this) and pass the choice,
# e.g.:
#   scripts/vm --pair --install --env VROCE_TOOLS_A=vroce tests/vm/83-rc-tools.sh
#
# vm: pair
# vm: install=0
# vm: timeout=600

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_tools.sh"

pair_kind VROCE_TOOLS rxe

# Both sides must be ready, or neither runs anything.
tools_pair_ready

t_start=$SECONDS

# mgid FAMILY: a multicast group for perftest's -g (-M, 16 bytes in
# decimal): 239.1.1.77 for IPv4 (perftest wants the MGID of the GID's
# family), ff12::77 for IPv6 (its own default, ff01::, is interface-local:
# no host sends it on the wire).
mgid() {
	if [ "$1" = 6 ]; then
		echo 255:18:0:0:0:0:0:0:0:0:0:0:0:0:0:119
	else
		echo 0:0:0:0:0:0:0:0:0:0:255:255:239:1:1:77
	fi
}

# server_kind SERVER: rxe or vroce, what VM SERVER (a or b) runs.
server_kind() {
	if [ "$1" = a ]; then
		echo "${VROCE_TOOLS_A:-rxe}"
	else
		echo "${VROCE_TOOLS_B:-rxe}"
	fi
}

# cases SERVER FAMILY: every tool once.
cases() {
	local size iters
	for size in 1 4096 65536 1048576; do
		iters=20
		[ "$size" -gt 65536 ] && iters=5
		pair_run "$1" "$2" pp -s "$size" -n "$iters"
		pair_run "$1" "$2" pp -e -s "$size" -n "$iters"
	done
	pair_run "$1" "$2" pp -N -c -s 4096 -n 20
	pair_run "$1" "$2" pp -N -c -e -s 65536 -n 20
	pair_run "$1" "$2" ucpp -c -s 4096 -n 20
	pair_run "$1" "$2" srqpp -c -q 4 -s 4096 -n 20
	# Completion timestamps (rdma_rxe on 6.1 has none) and XRC (nor
	# has it that).
	if [ "${VROCE_TOOLS_A:-rxe}${VROCE_TOOLS_B:-rxe}" = vrocevroce ]; then
		pair_run "$1" "$2" pp -t -s 4096 -n 20
		pair_run "$1" "$2" xsrqpp -s 4096 -n 20
		pair_run "$1" "$2" perftest ib_write_bw -c XRC -s 65536 -n 200 --report_gbits
		pair_run "$1" "$2" perftest ib_send_bw -c XRC -s 65536 -n 200 --report_gbits
		pair_run "$1" "$2" perftest ib_read_bw -c XRC -s 65536 -n 200 --report_gbits
		# On-demand paging (rdma_rxe has it from 6.15 on only).
		pair_run "$1" "$2" pp -o -P -c -s 4096 -n 20
		pair_run "$1" "$2" pp -O -c -s 4096 -n 20
		pair_run "$1" "$2" pp -o -c -s 65536 -n 20
		pair_run "$1" "$2" perftest ib_write_bw --odp -s 65536 -n 200 --report_gbits
		pair_run "$1" "$2" perftest ib_read_bw --odp -s 65536 -n 200 --report_gbits
		pair_run "$1" "$2" perftest ib_send_bw --odp -s 65536 -n 200 --report_gbits
	fi
	pair_run "$1" "$2" perftest ib_write_bw -s 65536 -n 200 --report_gbits
	pair_run "$1" "$2" perftest ib_write_bw -s 64 -n 200 --report_gbits
	pair_run "$1" "$2" perftest ib_read_bw -s 65536 -n 200 --report_gbits
	pair_run "$1" "$2" perftest ib_send_bw -s 65536 -n 200 --report_gbits
	pair_run "$1" "$2" perftest ib_send_bw -c UC -s 65536 -n 200 --report_gbits
	# The server receives: rdma_rxe joins no IP multicast group on
	# ibv_attach_mcast (vroce does; rdma_rxe only through rdma_cm, for
	# IPv4), so its IP layer drops the group's datagrams.
	if [ "$(server_kind "$1")" = vroce ]; then
		pair_run "$1" "$2" perftest ib_send_bw -c UD -g -M "$(mgid "$2")" -s 512 -n 200 --report_gbits
	fi
	pair_run "$1" "$2" perftest ib_atomic_bw -A FETCH_AND_ADD -n 200 --report_gbits
	pair_run "$1" "$2" perftest ib_atomic_bw -A CMP_AND_SWAP -n 200 --report_gbits
	pair_run "$1" "$2" perftest ib_write_lat -s 2 -n 200
	pair_run "$1" "$2" perftest ib_read_lat -s 2 -n 200
	pair_run "$1" "$2" perftest ib_send_lat -s 2 -n 200
	pair_run "$1" "$2" rping
	pair_run "$1" "$2" ucmatose
}

# With the same kind on both sides the two roles are symmetric: each
# family runs once, B serving over IPv4 and A over IPv6, so each VM is
# server once and client once. Mixed pairs run every combination.
same=no
[ "${VROCE_TOOLS_A:-rxe}" = "${VROCE_TOOLS_B:-rxe}" ] && same=yes
for server in b a; do
	for fam in 4 6; do
		if [ "$same" = yes ] && [ "$server$fam" != b4 ] &&
			[ "$server$fam" != a6 ]; then
			continue
		fi
		t0=$SECONDS
		cases "$server" "$fam"
		tap_diag "IPv$fam, ${server^^} serving: $((SECONDS - t0)) s"
	done
done
tap_diag "$n runs ($servers as the server, $clients as the client) in $((SECONDS - t_start)) s"
vm_barrier "done" 60
tap_done
