#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The CRC-32 behind the ICRC, chosen at module load (kernel/crc_select.c).
# The kernel log has the load-time measurement and the choice, and the
# read-only parameter icrc_impl names it. Then for each of icrc=auto (as
# loaded), icrc=shash and icrc=table (reloading vroce):
#   - icrc and icrc_impl say what was asked for (shash: the crypto API's
#     crc32, which this kernel has);
#   - ibv_rc_pingpong on vroce0 over eth0 (local loopback, which carries
#     no ICRC) passes, with no ICRC error;
#   - packets sent from a network namespace to vroce1 (on a veth) with
#     ICRCs computed by tests/vm/_icrc.py (zlib, not the kernel) pass the
#     ICRC check, and one with a wrong ICRC does not;
#   - the CM packets vroce1 sends to the namespace (rping to an address
#     where nothing listens) carry ICRCs that _icrc.py finds right.
# Then: the shash's module is held while vroce uses it and let go on
# unload; with no crc32 module loadable, vroce still loads, on crc32_le,
# and checks ICRCs right; icrc=bogus is refused.
#
# vm: timeout=400

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_tools.sh"

icrc_py=$VROCE_TOP/tests/vm/_icrc.py
params=/sys/module/vroce/parameters
dev=vroce0
good=8

tap_plan 26


# The last choice logged, e.g. "shash crc32-pclmul".
logged_choice() {
	dmesg | sed -n 's/.*vroce: icrc: icrc=[a-z]*, using //p' | tail -n 1
}

lines=$(dmesg | grep -F "vroce: icrc: ")
printf '%s\n' "$lines" | sed 's/^/# /'
printf '%s\n' "$lines" | grep -q "table crc32_le: 64 B [0-9]* MB/s" &&
	printf '%s\n' "$lines" | grep -q "using "
tap_result $? "the load-time measurement and the choice are logged"

veth_ns ic && modprobe rdma_ucm
tap_result $? "a veth to a network namespace"

# unload: both links gone, then rmmod vroce.
unload() {
	rdma link del vroce0 2>/dev/null
	rdma link del vroce1 2>/dev/null
	rmmod vroce
}

# reload MODE: vroce again with icrc=MODE.
reload() {
	unload && modprobe vroce icrc="$1"
}

# want_impl MODE IMPL: the parameters and the log agree with MODE.
want_impl() {
	local mode=$1 impl=$2 ok=1
	[ "$(cat $params/icrc)" = "$mode" ] || ok=0
	[ "$impl" = "$(logged_choice)" ] || ok=0
	case $mode:$impl in
	auto:"table crc32_le" | auto:"shash "?* | table:"table crc32_le") ;;
	shash:"shash "?*) ;;
	*) ok=0 ;;
	esac
	[ $ok = 1 ]
}

# loopback: ibv_rc_pingpong on vroce0, 20 x 4001 bytes.
loopback() {
	local gid rc
	rdma_add vroce0 eth0 && vm_ib_nodes &&
		gid=$(dev_gid "$VROCE_SELF_IP4" 10) || return 1
	tool_setup pp "$gid" 18610 "$VROCE_SELF_IP4" "$VROCE_SELF_IP4" \
		"$VROCE_SELF_IP4" -s 4001 -n 20
	tool_serve /tmp/icrc.srv || return 1
	run_timeout 60 "${cli[@]}" >/tmp/icrc.cli 2>&1
	rc=$?
	tool_reap "$rc" && [ $rc = 0 ] &&
		[ -z "$(tool_check server /tmp/icrc.srv; tool_check client /tmp/icrc.cli)" ]
}

# injected: good + 1 packets with _icrc.py's ICRCs into vroce1.
injected() {
	local drop0 err0
	rdma_add vroce1 veth0 && vm_wait_port_active vroce1 10 || return 1
	drop0=$(dev_counter vroce1 rx_dropped)
	err0=$(dev_counter vroce1 rx_icrc_errors)
	ip netns exec ic python3 "$icrc_py" send 198.51.100.2 198.51.100.1 \
		"$good" 1 || return 1
	# shellcheck disable=SC2317  # called through wait_for
	arrived() { [ "$(dev_counter vroce1 rx_dropped)" -ge $((drop0 + good + 1)) ]; }
	wait_for 10 arrived
	inj_drop=$(($(dev_counter vroce1 rx_dropped) - drop0))
	inj_err=$(($(dev_counter vroce1 rx_icrc_errors) - err0))
	[ "$inj_drop" = $((good + 1)) ] && [ "$inj_err" = 1 ]
}

# sent: rping from vroce1 to the namespace; its CM REQs checked there.
sent() {
	ip netns exec ic python3 "$icrc_py" capture 1 20 >/tmp/icrc.cap 2>&1 &
	local cap=$!
	sleep 1
	timeout -k 2 10 rping -c -a 198.51.100.2 -p 18620 -C 1 >/dev/null 2>&1
	wait "$cap"
}

run_mode() { # MODE
	local mode=$1 impl
	if [ "$mode" != auto ]; then
		reload "$mode"
		tap_result $? "icrc=$mode: rmmod, modprobe vroce icrc=$mode"
		dmesg | grep -F "vroce: icrc: " | tail -n 3 | sed 's/^/# /'
	fi
	impl=$(cat $params/icrc_impl)
	want_impl "$mode" "$impl"
	tap_result $? "icrc=$mode: icrc_impl \"$impl\", logged \"$(logged_choice)\""
	loopback
	tap_result $? "icrc=$mode: ibv_rc_pingpong on vroce0, 20 x 4001 bytes"
	[ "$(dev_counter vroce0 rx_icrc_errors)" = 0 ] &&
		[ "$(dev_counter vroce0 rx_packets)" -ge 160 ]
	tap_result $? "icrc=$mode: vroce0 rx_packets $(dev_counter vroce0 rx_packets), rx_icrc_errors $(dev_counter vroce0 rx_icrc_errors)"
	injected
	tap_result $? "icrc=$mode: $good right ICRCs from _icrc.py pass and 1 wrong one is caught (dropped $inj_drop, ICRC errors $inj_err)"
	sent
	tap_result $? "icrc=$mode: ICRCs vroce1 sends are right: $(tail -n 1 /tmp/icrc.cap)"
	[ "$(dev_counter vroce0 rx_icrc_errors)" = 0 ]
	tap_result $? "icrc=$mode: still no ICRC error on vroce0"
}

for mode in auto shash table; do
	run_mode "$mode"
done

# The shash's module is held while vroce uses it, and let go on unload.
reload shash
impl=$(cat $params/icrc_impl)
mod=${impl#shash }
mod=${mod//-/_}
held=$(cat "/sys/module/$mod/refcnt" 2>/dev/null)
unload
[ "${held:-0}" -ge 1 ] && [ "$(cat "/sys/module/$mod/refcnt")" = 0 ] &&
	modprobe -r crc32_pclmul crc32_generic &&
	[ ! -d /sys/module/crc32_pclmul ] && [ ! -d /sys/module/crc32_generic ]
tap_result $? "icrc=shash holds $mod (refcnt $held), rmmod vroce lets it go"

# No crc32 shash to be had: vroce loads all the same, on crc32_le.
printf 'install %s /bin/false\n' crc32_pclmul crc32_generic \
	>/etc/modprobe.d/no-crc32.conf
modprobe vroce icrc=shash && impl=$(cat $params/icrc_impl) &&
	[ "$impl" = "table crc32_le" ] && dmesg_has "vroce: icrc: no crc32 shash"
tap_result $? "no crc32 module: icrc=shash loads on \"$impl\""
injected
tap_result $? "no crc32 module: $good right ICRCs from _icrc.py pass and 1 wrong one is caught (dropped $inj_drop, ICRC errors $inj_err)"
rm -f /etc/modprobe.d/no-crc32.conf

unload
! modprobe vroce icrc=bogus 2>/dev/null && modprobe vroce icrc=table &&
	[ "$(cat $params/icrc_impl)" = "table crc32_le" ]
tap_result $? "icrc=bogus is refused, icrc=table then loads"
tap_done
