# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Shared by the two benchmarks of scripts/bench: the rows, reading
# perftest's results, medians, vroce's counters and the table. Sourced by
# scripts/bench on the host (to count the rows) and inside the VMs.
#
#   bench_rows SET          the rows of SET (main or scaling), one a line:
#                           NAME UNIT COLUMN REQ TOOL ARGS... (below)
#   bench_select SET PAT    those whose NAME matches the extended regex PAT
#   bench_result FILE COL   column COL of perftest's result line in FILE
#   bench_stats             "MEDIAN MIN MAX" of the valid values on stdin
#   bench_counter DEV NAME  vroce's counter NAME of DEV port 1
#   bench_table RXE VROCE [CTR]
#                           print the table from two result files (lines
#                           "NAME UNIT MEDIAN MIN MAX" or "NAME UNIT n/a")
#                           and, for vroce, counter deltas (lines
#                           "NAME RETRANSMITS TIMEOUTS")
#   bench_ratio A B         B / A, two decimals
#   bench_cell MED MIN MAX  "MED (MIN-MAX)" with readable precision
#
# A row: NAME, UNIT (Gb/s, Mpps or usec), the COLUMN of perftest's result
# line that holds it (bandwidth in Gb/s is column 4 with --report_gbits,
# the message rate column 5, latency t_typical column 5), REQ (cli if only
# the client sends requests, both if the server does too: the ping-pong
# latency tests; srv: like cli, but the figure is the server's, what
# arrived, not what was sent), then the perftest program and its options.
#
# The UD bandwidth row runs for a time (-D) and takes the receiver's
# figure: UD has no retransmission, and with a count (-n) perftest's
# server waits for every message, so a single lost one kept it waiting
# until its 120 s watchdog, and the client's figure counted messages
# whether they arrived or not.

# shellcheck shell=bash

bench_rows() {
	case $1 in
	main)
		cat <<'ROWS'
ib_write_bw_64KiB Gb/s 4 cli ib_write_bw -s 65536 -n 200 --report_gbits
ib_write_bw_1MiB Gb/s 4 cli ib_write_bw -s 1048576 -n 40 --report_gbits
ib_read_bw_64KiB Gb/s 4 cli ib_read_bw -s 65536 -n 200 --report_gbits
ib_read_bw_1MiB Gb/s 4 cli ib_read_bw -s 1048576 -n 40 --report_gbits
ib_send_bw_64KiB Gb/s 4 cli ib_send_bw -s 65536 -n 200 --report_gbits
ib_send_bw_1MiB Gb/s 4 cli ib_send_bw -s 1048576 -n 40 --report_gbits
ib_write_bw_64B Mpps 5 cli ib_write_bw -s 64 -n 5000
ib_send_lat_2B usec 5 both ib_send_lat -s 2 -n 1000
ib_write_lat_2B usec 5 both ib_write_lat -s 2 -n 1000
ib_read_lat_2B usec 5 cli ib_read_lat -s 2 -n 1000
ib_send_bw_UD_1KiB Gb/s 4 srv ib_send_bw -c UD -s 1024 -D 4 --report_gbits
ib_send_lat_UD_2B usec 5 both ib_send_lat -c UD -s 2 -n 1000
ROWS
		;;
	scaling)
		local q
		for q in 1 2 4 8 16; do
			echo "ib_write_bw_64KiB_q$q Gb/s 4 cli ib_write_bw -q $q -s 65536 -n 200 --report_gbits"
		done
		cat <<'ROWS'
ib_write_bw_size_2B Gb/s 4 cli ib_write_bw -s 2 -n 5000 --report_gbits
ib_write_bw_size_64B Gb/s 4 cli ib_write_bw -s 64 -n 5000 --report_gbits
ib_write_bw_size_1KiB Gb/s 4 cli ib_write_bw -s 1024 -n 2000 --report_gbits
ib_write_bw_size_4KiB Gb/s 4 cli ib_write_bw -s 4096 -n 1000 --report_gbits
ib_write_bw_size_64KiB Gb/s 4 cli ib_write_bw -s 65536 -n 200 --report_gbits
ib_write_bw_size_1MiB Gb/s 4 cli ib_write_bw -s 1048576 -n 40 --report_gbits
ROWS
		;;
	*) return 1 ;;
	esac
}

bench_select() {
	bench_rows "$1" | grep -E -- "^[^ ]*($2)"
}

bench_result() {
	awk -v c="$2" 'f && NF >= c && $1 ~ /^[0-9]/ { print $c; exit }
		/#bytes/ { f = 1 }' "$1"
}

# perftest prints 0 or inf when its clock reads went wrong: such values
# are not valid. With an even count the median is the lower middle value.
bench_stats() {
	awk '$1 ~ /^[0-9.]+([eE][-+]?[0-9]+)?$/ && $1 + 0 > 0 { print $1 }' |
		sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)], v[1], v[NR] }'
}

bench_counter() {
	rdma statistic show link "$1/1" 2>/dev/null | tr ' ' '\n' |
		grep -A1 -x -- "$2" | tail -n 1
}

bench_ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }'
}

bench_cell() {
	awk -v m="$1" -v lo="${2:-$1}" -v hi="${3:-$1}" '
		function f(v) {
			if (v >= 100) return sprintf("%.0f", v)
			if (v >= 10) return sprintf("%.1f", v)
			if (v >= 1) return sprintf("%.2f", v)
			return sprintf("%.3g", v)
		}
		BEGIN {
			s = f(m)
			if (f(lo) != f(hi)) s = s " (" f(lo) "-" f(hi) ")"
			print s
		}'
}

# bench_table RXE VROCE [CTR]: rows in the order of RXE; the ratio is
# vroce / rdma_rxe, for latency rdma_rxe / vroce (above 1: vroce is
# better).
bench_table() {
	local rxe=$1 vroce=$2 ctr=${3:-} name unit a alo ahi b blo bhi ratio
	local ca cb retx tmo
	printf '%-24s %-5s %-26s %-26s %6s  %s\n' benchmark unit rdma_rxe vroce \
		ratio "vroce retransmits/timeouts"
	while read -r name unit a alo ahi; do
		read -r _ _ b blo bhi < <(grep -m1 "^$name " "$vroce")
		ratio=-
		ca=n/a
		cb=n/a
		if [ "$a" != n/a ] && [ -n "$a" ]; then
			ca=$(bench_cell "$a" "$alo" "$ahi")
		fi
		if [ "${b:-n/a}" != n/a ]; then
			cb=$(bench_cell "$b" "$blo" "$bhi")
		fi
		if [ "$ca" != n/a ] && [ "$cb" != n/a ]; then
			if [ "$unit" = usec ]; then
				ratio=$(bench_ratio "$b" "$a")
			else
				ratio=$(bench_ratio "$a" "$b")
			fi
		fi
		retx=-
		tmo=-
		if [ -n "$ctr" ]; then
			read -r _ retx tmo < <(grep -m1 "^$name " "$ctr")
		fi
		printf '%-24s %-5s %-26s %-26s %6s  %s\n' "$name" "$unit" "$ca" \
			"$cb" "$ratio" "${retx:--}/${tmo:--}"
	done <"$rxe"
}
