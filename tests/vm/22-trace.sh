#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Tracepoints and driver details. With every event of events/vroce on,
# tests/progs/rc_stress runs 1500 checked messages from A to B over a
# lossy wire (netem: loss 5%, delay 1 ms, both sides), then A sends B two
# bad packets (5 bytes of UDP; a BTH whose ICRC is wrong). On each side:
#   - the QPs' RESET -> INIT -> RTR -> RTS changes are traced;
#   - each event that a counter also counts agrees with it exactly:
#     vroce_retransmit with retransmits, vroce_timeout with
#     retry_timeouts, vroce_nak_rcvd with seq_err_nak_rcvd +
#     rnr_nak_rcvd, vroce_nak_sent with seq_err_nak_sent + rnr_nak_sent,
#     and the counts of vroce_rx_drop with rx_dropped (the trace buffer
#     must not have overrun);
#   - A retransmitted, B sent NAKs, and B's drops name the reasons
#     "headers" and "icrc".
# And `rdma -dd resource show qp` shows an RC QP's PSNs (a waiting
# ibv_rc_pingpong server's QP).
#
# vm: pair
# vm: install=1
# vm: timeout=600

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_progs.sh"

stress=$VROCE_TOP/build/progs/rc_stress
port=18620
n_msgs=1500
tr=/sys/kernel/tracing

pair_kind VROCE_TRACE vroce
prog_dev "$stress"
gid=$(dev_gid "$VROCE_SELF_IP4" 10)
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP4: index $gid"

# Driver details of an RC QP, here one of a waiting pingpong server.
ibv_rc_pingpong -d "$dev" -g "$gid" -p $((port + 1)) >/dev/null 2>&1 &
pp=$!
wait_for 10 sh -c "rdma -dd resource show qp | grep -q 'type RC'"
details=$(rdma -dd resource show qp 2>&1 | grep 'type RC')
kill "$pp" 2>/dev/null
wait "$pp" 2>/dev/null
tap_diag "rdma -dd resource show qp: $details"
grep -q 'drv_sq_psn [0-9]' <<<"$details" && grep -q 'drv_rq_psn [0-9]' <<<"$details" &&
	grep -q 'drv_retries_left [0-9]' <<<"$details"
tap_result $? "rdma -dd resource show qp shows sq_psn, rq_psn and retries_left"

[ -d $tr/events ] || mount -t tracefs nodev $tr 2>/dev/null
events="vroce_qp_state vroce_retransmit vroce_timeout vroce_nak_sent vroce_nak_rcvd vroce_rx_drop"
missing=
for e in $events; do
	[ -d "$tr/events/vroce/$e" ] || missing="$missing $e"
done
tap_result "$([ -z "$missing" ] && echo 0 || echo 1)" \
	"tracefs has events/vroce: $events${missing:+ (missing:$missing)}"

echo 16384 >$tr/buffer_size_kb
echo >$tr/trace
echo 1 >$tr/events/vroce/enable
counters /tmp/c.0

modprobe sch_netem 2>/dev/null
tc qdisc add dev eth0 root netem loss 5% delay 1ms
tap_result $? "netem on eth0: loss 5%, delay 1 ms"
vm_barrier armed 120

if [ "$VROCE_ROLE" = b ]; then
	prog_serve lossy 300 "rc_stress server ran to the end, its checks passed" \
		"$stress" -d "$dev" -g "$gid" -p "$port" -s --deadline "$(vm_scaled 270)"
elif prog_drive lossy 120 300 "$stress" -d "$dev" -g "$gid" -p "$port" \
	-n "$n_msgs" --deadline "$(vm_scaled 240)" --timeout 12 "$VROCE_PEER_IP4"; then
	tap_result "$prog_plan" "rc_stress client printed a plan"
	tap_result "$prog_rc" "rc_stress client: $n_msgs messages in $prog_secs s"
else
	tap_fail "rc_stress server is listening"
fi
vm_barrier traffic-done 120
tc qdisc del dev eth0 root 2>/dev/null
sleep 1

# Two bad packets from A to B's port 4791: 5 bytes (no room for a BTH),
# and an RC SEND Only to QP 0x11 whose ICRC is zeroes.
if [ "$VROCE_ROLE" = a ]; then
	python3 - "$VROCE_PEER_IP4" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"\x00" * 5, (sys.argv[1], 4791))
bth = bytes([0x04, 0x00, 0xff, 0xff, 0, 0, 0, 0x11, 0, 0, 0, 1])
s.sendto(bth + b"\xab" * 8 + b"\x00" * 4, (sys.argv[1], 4791))
PY
	tap_result $? "two bad packets sent to B"
fi
vm_barrier junk-sent 60
sleep 1
counters /tmp/c.1
echo 0 >$tr/events/vroce/enable
cp $tr/trace /tmp/trace.txt
overrun=$(awk '/^overrun:/ { n += $2 } END { print n + 0 }' $tr/per_cpu/cpu*/stats)
tap_result "$([ "$overrun" = 0 ] && echo 0 || echo 1)" \
	"trace buffer: $(grep -c ' vroce_' /tmp/trace.txt) events, $overrun lost"

# delta NAME: how far counter NAME moved.
delta() {
	echo $(($(counter /tmp/c.1 "$1") - $(counter /tmp/c.0 "$1")))
}
# events NAME: how many NAME events were traced.
events() {
	grep -c " $1: " /tmp/trace.txt
}
# agree DESC EVENTS COUNTERS: one TAP line, DESC, that they are equal.
agree() {
	[ "$2" -eq "$3" ]
	tap_result $? "$1: $2 events, counters $3"
}

for t in "RESET -> INIT" "INIT -> RTR" "RTR -> RTS"; do
	grep -q "vroce_qp_state: $dev qpn [0-9]* $t\$" /tmp/trace.txt
	tap_result $? "vroce_qp_state traced $t"
done
agree "vroce_retransmit, retransmits" "$(events vroce_retransmit)" \
	"$(delta retransmits)"
agree "vroce_timeout, retry_timeouts" "$(events vroce_timeout)" \
	"$(delta retry_timeouts)"
agree "vroce_nak_rcvd, seq_err_nak_rcvd + rnr_nak_rcvd" \
	"$(events vroce_nak_rcvd)" \
	$(($(delta seq_err_nak_rcvd) + $(delta rnr_nak_rcvd)))
agree "vroce_nak_sent, seq_err_nak_sent + rnr_nak_sent" \
	"$(events vroce_nak_sent)" \
	$(($(delta seq_err_nak_sent) + $(delta rnr_nak_sent)))
agree "vroce_rx_drop counts, rx_dropped" \
	"$(awk '/ vroce_rx_drop: / { n += $NF } END { print n + 0 }' /tmp/trace.txt)" \
	"$(delta rx_dropped)"
tap_diag "drop reasons: $(grep -o 'reason [a-z_]*' /tmp/trace.txt | sort | uniq -c | tr -s ' \n' ' ')"
if [ "$VROCE_ROLE" = a ]; then
	[ "$(delta retransmits)" -gt 0 ]
	tap_result $? "A retransmitted ($(delta retransmits))"
else
	[ "$(events vroce_nak_sent)" -gt 0 ]
	tap_result $? "B sent NAKs ($(events vroce_nak_sent))"
	for r in headers icrc; do
		grep -q " vroce_rx_drop: $dev .* reason $r count 1\$" /tmp/trace.txt
		tap_result $? "B traced a drop for reason $r"
	done
fi
vm_barrier end 60
tap_done
