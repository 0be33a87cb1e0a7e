#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# strace shows that a post_recv/poll_cq loop makes no system call:
# tests/progs/ring_loop.c runs 1000 of each between two marker calls.
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

tap_plan 3
rdma_add vroce0 eth0
tap_result $? "vroce0 on eth0 ($rdma_err)"
log=/tmp/strace.log
strace -f -o "$log" "$VROCE_TOP/build/progs/ring_loop" vroce0 1000 >/tmp/loop.out 2>&1
tap_result $? "1000 post_recv and 1000 empty poll_cq ($(cat /tmp/loop.out))"
between=$(awk '/getpgrp\(/ { on = 0 } on { n++ } /getppid\(/ { on = 1 }
	END { print n + 0 }' "$log")
[ "$between" -eq 0 ]
tap_result $? "system calls between the markers: $between"
[ "$between" -eq 0 ] || sed -n '/getppid(/,/getpgrp(/p' "$log" | head -20 | sed 's/^/#   /'
tap_done
