#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# RDMA middleware across the two-VM wire, unchanged, on the RDMA device of
# each side:
# - UCX (ucx-utils), with UCX_NET_DEVICES=DEV:1: ucx_perftest on the
#   rc_verbs transport (UCT): active messages (am_lat, bcopy), RDMA WRITE
#   (put_bw, zcopy), RDMA READ (get, zcopy) and atomics (fadd, cswap), once
#   more over the IPv6 GID (UCX_IB_GID_INDEX), where UCX puts more than
#   the IPv6 flow label's 20 bits into the address vector; on ud_verbs
#   (am_lat, am_bw; am_lat over the IPv6 GID too); then UCP over rc_verbs
#   (with ud_verbs for wire-up): tag matching (tag_lat, tag_bw, also over
#   IPv6), put and get, and UCP over ud_verbs alone;
# - libfabric (libfabric-bin): fi_info -p verbs lists the device, and
#   fi_pingpong with data checks (-c) over the verbs provider's MSG
#   endpoints (rdma_cm, IPv4 and IPv6) and its RDM endpoints (ofi_rxm on
#   verbs).
# Each run once with B serving and once with A. On vroce, every run must
# leave the retransmit and time-out counters where they were: the wire
# is clean. fi_pingpong's own teardown race (its fin's send completion
# reported as flushed when the peer closed first, after every message
# went through and was checked: tool_fin_race in _tools.sh) is said, not
# counted as a failure, once per run.
#
# UCX 1.13's ud_verbs drops every datagram whose receive completion has
# an SL that is not mlx5's packet type (it finds the destination GID in
# the GRH buffer by it). vroce reports it as mlx5 does, rdma_rxe reports
# 0: where a side is rdma_rxe, the UD runs turn UCX's check off
# (UCX_UD_VERBS_ETH_DGID_CHECK=n).
#
# Which device each side uses comes from VROCE_MW_A / VROCE_MW_B (rxe or
# vroce, default vroce); the -vroce-rxe / -rxe-vroce scripts set them.
#
# vm: pair
# vm: install=1
# vm: timeout=900

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_tools.sh"

pair_kind VROCE_MW vroce

tools_pair_ready

out=$(fi_info -p verbs 2>&1)
case $out in *"domain: $dev"*) rc=0 ;; *) rc=1 ;; esac
tap_result $rc "fi_info -p verbs lists domain $dev"
[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -n 8 | sed 's/^/#   /'

[ "$kind" = vroce ] && counters /tmp/mw.before
t_start=$SECONDS

# UCX's DGID check where a side is rdma_rxe (above).
ud_env=()
[ "${VROCE_MW_A:-vroce}${VROCE_MW_B:-vroce}" = vrocevroce ] ||
	ud_env=(UCX_UD_VERBS_ETH_DGID_CHECK=n)

# mw_run [VAR=VALUE...] -- SERVER FAMILY TYPE ARGS...: pair_run with the
# variables in the tool's environment.
mw_run() {
	tool_env=()
	while [ "$1" != -- ]; do
		tool_env+=("$1")
		shift
	done
	shift
	pair_run "$@"
	tool_env=()
}

# ucx_perftest's UCT tests (-d/-x) give the server the client's device
# name: they run only between two devices of one kind. UCP tests pick
# the device from UCX_NET_DEVICES on each side.
same=no
[ "${VROCE_MW_A:-vroce}" = "${VROCE_MW_B:-vroce}" ] && same=yes

uct_cases() { # SERVER
	local s=$1
	pair_run "$s" 4 ucx rc_verbs am_lat -D bcopy -s 4096 -n 1000
	pair_run "$s" 4 ucx rc_verbs put_bw -D zcopy -s 65536 -n 500
	pair_run "$s" 4 ucx rc_verbs get -D zcopy -s 65536 -n 200
	pair_run "$s" 4 ucx rc_verbs fadd -n 500
	pair_run "$s" 4 ucx rc_verbs cswap -n 500
	mw_run UCX_IB_GID_INDEX="$gid6" -- "$s" 6 ucx rc_verbs put_bw -D zcopy -s 65536 -n 200
	mw_run "${ud_env[@]}" -- "$s" 4 ucx ud_verbs am_lat -D bcopy -s 1000 -n 500
	mw_run "${ud_env[@]}" -- "$s" 4 ucx ud_verbs am_bw -D bcopy -s 1000 -n 1000
	mw_run UCX_IB_GID_INDEX="$gid6" "${ud_env[@]}" -- "$s" 6 ucx ud_verbs am_lat -D bcopy -s 1000 -n 500
}

cases() { # SERVER
	local s=$1 rc_ud=("UCX_TLS=rc_verbs,ud_verbs" "${ud_env[@]}")
	[ "$same" = yes ] && uct_cases "$s"
	mw_run "${rc_ud[@]}" -- "$s" 4 ucx ucp tag_lat -s 4096 -n 500
	mw_run "${rc_ud[@]}" -- "$s" 4 ucx ucp tag_bw -s 65536 -n 200
	mw_run "${rc_ud[@]}" -- "$s" 4 ucx ucp ucp_put_bw -s 65536 -n 200
	mw_run "${rc_ud[@]}" -- "$s" 4 ucx ucp ucp_get -s 65536 -n 200
	mw_run "${rc_ud[@]}" UCX_IB_GID_INDEX="$gid6" -- "$s" 6 ucx ucp tag_bw -s 65536 -n 200
	mw_run UCX_TLS=ud_verbs "${ud_env[@]}" -- "$s" 4 ucx ucp tag_lat -s 1000 -n 500
	pair_run "$s" 4 fabric verbs -e msg -c -I 200 -S 4096
	pair_run "$s" 6 fabric verbs -e msg -c -I 200 -S 65536
	pair_run "$s" 4 fabric "verbs;ofi_rxm" -e rdm -c -I 200 -S 4096
}

for server in b a; do
	t0=$SECONDS
	cases "$server"
	tap_diag "${server^^} serving: $((SECONDS - t0)) s"
done
tap_diag "$n runs in $((SECONDS - t_start)) s"

if [ "$kind" = vroce ]; then
	counters /tmp/mw.after
	for name in retransmits retry_timeouts; do
		before=$(counter /tmp/mw.before "$name")
		after=$(counter /tmp/mw.after "$name")
		[ -n "$before" ] && [ "$before" = "$after" ]
		tap_result $? "clean wire: vroce's $name did not move ($before -> $after)"
	done
	before=$(counter /tmp/mw.before rx_packets)
	after=$(counter /tmp/mw.after rx_packets)
	[ -n "$before" ] && [ $((after - before)) -gt 10000 ]
	tap_result $? "the runs went through vroce (rx_packets +$((after - before)))"
fi
vm_barrier "done" 120
tap_done
