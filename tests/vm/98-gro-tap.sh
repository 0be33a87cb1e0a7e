#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A packet tap that holds the GRO chains vroce receives costs no memory.
# An AF_PACKET socket without a ring (here a Python reader on eth0, as
# tcpdump without -B or a raw socket would be) keeps a clone of each
# received skb, a GRO chain (kernel/gro.c) included, until it is read.
# vroce's receive path must cut the chain apart without touching the
# packets the tap's clone still links: when it did, the tap's free of the
# clone stopped after the first chained packet and every packet behind it
# leaked.
#
# B runs ib_write_bw -s 65536 -n 300 against A (A receives the data)
# while A's tap reads everything. A checks that the tap read chains
# (frames longer than the MTU; A itself sends only small ACKs) and every
# read worked, that vroce received packets in GRO chains
# (rx_gro_packets), and that once the tap is closed the skbuff_head_cache
# slab holds fewer than 2,000 more skbs than before (the run receives
# about 19,200 packets; the leak kept nearly all of them).
#
# vm: pair
# vm: timeout=600
# vm: install=1

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"
. "$(dirname "$0")/_tools.sh"

pair_kind VROCE_TAP vroce

tools_pair_ready

# skbs: skbuff_head_cache's active objects (the cache is never merged:
# it has a usercopy region).
skbs() {
	awk '$1 == "skbuff_head_cache" { print $2 }' /proc/slabinfo
}

# tap_start FILE: reads every frame of eth0 until SIGTERM, then writes
# "FRAMES LONG BAD" to FILE (LONG: frames longer than 1514 bytes, chains;
# BAD: reads that failed, as a read of a chain whose list was cut does).
tap_start() {
	python3 -c '
import signal, socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("eth0", 0))
n = long = bad = 0
def stop(*_):
    with open(sys.argv[1], "w") as f:
        f.write("%d %d %d\n" % (n, long, bad))
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
while True:
    try:
        d = s.recv(262144)
    except OSError:
        bad += 1
        continue
    n += 1
    if len(d) > 1514:
        long += 1
' "$1" &
	tap_pid=$!
}

if [ "$VROCE_ROLE" = a ]; then
	skb0=$(skbs)
	counters /tmp/tap.before
	tap_start /tmp/tap.count
	sleep 2
fi
pair_run a 4 perftest ib_write_bw -s 65536 -n 300
if [ "$VROCE_ROLE" = a ]; then
	kill -TERM "$tap_pid"
	wait "$tap_pid"
	counters /tmp/tap.after
	sleep 2
	skb1=$(skbs)
	read -r frames long bad </tmp/tap.count
	tap_check "the tap read chains (${frames:-?} frames, ${long:-?} longer than 1514 bytes)" \
		test "${long:-0}" -gt 0
	tap_check "every read of the tap worked (${bad:-?} failed)" \
		test "${bad:-x}" = 0
	before=$(counter /tmp/tap.before rx_gro_packets)
	after=$(counter /tmp/tap.after rx_gro_packets)
	tap_check "$dev received packets in GRO chains (rx_gro_packets ${before:-?} -> ${after:-?})" \
		test "${after:-0}" -gt "${before:-0}"
	tap_check "skbuff_head_cache: ${skb0:-?} -> ${skb1:-?} objects, fewer than 2000 more" \
		test -n "$skb0" -a -n "$skb1" -a "$((skb1 - skb0))" -lt 2000
fi
vm_barrier "done" 60
tap_done
