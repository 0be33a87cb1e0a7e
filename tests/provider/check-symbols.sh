#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Checks the dynamic symbols of the provider against the installed
# libibverbs, printing TAP:
#
#   check-symbols.sh <libvroce-rdmavN.so> [<libibverbs.so.1>]
#
# Every symbol the provider takes from libibverbs must carry version
# IBVERBS_PRIVATE_N (N from the file name) or IBVERBS_1.x and be defined
# with that version by
# the libibverbs the dynamic linker would load (or the one given).  The
# provider must export verbs_provider_vroce and nothing else.
set -u

so=${1:?usage: check-symbols.sh <provider .so> [<libibverbs.so.1>]}
pabi=$(basename "$so" | sed -n 's/.*-rdmav\([0-9][0-9]*\)\.so$/\1/p')
n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

diag() {
	printf '%s\n' "$@" | sed 's/^/# /'
}

done_tap() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
	exit $?
}

[ -f "$so" ]
ok $? "$so exists"
[ -f "$so" ] || done_tap

lib=${2:-$(ldd "$so" 2>/dev/null | awk '$1 == "libibverbs.so.1" { print $3 }')}
[ -n "$lib" ] || lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null ||
	echo x86_64-linux-gnu)/libibverbs.so.1
lib=$(readlink -f "$lib")
[ -f "$lib" ]
ok $? "libibverbs.so.1 resolves to $lib"
[ -f "$lib" ] || done_tap

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vroce-syms.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

readelf -h "$so" | grep -q 'Type:[[:space:]]*DYN'
ok $? "provider is a shared object"

readelf -d "$so" | grep -q 'NEEDED.*\[libibverbs\.so\.1\]'
ok $? "provider needs libibverbs.so.1"

! readelf -d "$so" | grep -q TEXTREL
ok $? "provider has no text relocations"

# Version needs: "File: X" starts a file, "Name: V" lists one of its versions.
readelf -V -W "$so" | awk '
	/File:/ { for (i = 1; i < NF; i++) if ($i == "File:") file = $(i + 1) }
	/Name:/ { for (i = 1; i < NF; i++) if ($i == "Name:") print file, $(i + 1) }
' >"$tmp/needs"
awk '$1 == "libibverbs.so.1" { print $2 }' "$tmp/needs" >"$tmp/ibv-versions"
[ -s "$tmp/ibv-versions" ]
ok $? "provider binds to versioned libibverbs symbols"
bad=$(grep -Ev "^(IBVERBS_PRIVATE_${pabi:-none}|IBVERBS_1\.[0-9]+)\$" \
	"$tmp/ibv-versions")
[ -z "$bad" ]
ok $? "libibverbs versions needed are only IBVERBS_PRIVATE_${pabi:-?} and IBVERBS_1.x"
[ -z "$bad" ] || diag "unexpected: $bad"

# Dynamic symbols as "bind ndx name[@version]".
readelf -W --dyn-syms "$so" |
	awk '$1 ~ /^[0-9]+:$/ && NF >= 8 { print $5, $7, $8 }' >"$tmp/syms"
readelf -W --dyn-syms "$lib" |
	awk '$1 ~ /^[0-9]+:$/ && NF >= 8 && $7 != "UND" { sub("@@", "@", $8); print $8 }' \
	>"$tmp/lib-defs"

# Undefined symbols without a version must be weak (e.g. __gmon_start__).
unversioned=$(awk '$2 == "UND" && $3 != "" && $3 !~ /@/ && $1 != "WEAK" { print $3 }' \
	"$tmp/syms")
[ -z "$unversioned" ]
ok $? "every strong undefined symbol is versioned"
[ -z "$unversioned" ] || diag "unversioned: $unversioned"

versions=$(tr '\n' '|' <"$tmp/ibv-versions" | sed 's/|$//')
awk -v re="@($versions)\$" '$2 == "UND" && $3 ~ re { print $3 }' "$tmp/syms" |
	sort >"$tmp/ibv-imports"
[ -s "$tmp/ibv-imports" ]
ok $? "provider imports $(wc -l <"$tmp/ibv-imports") symbols from libibverbs"
while read -r sym; do
	grep -qxF "$sym" "$tmp/lib-defs"
	ok $? "$sym is defined by $(basename "$lib")"
done <"$tmp/ibv-imports"

# Register entry point of IBVERBS_PRIVATE_N providers.
reg=verbs_register_driver_$pabi@IBVERBS_PRIVATE_$pabi
grep -qxF "$reg" "$tmp/ibv-imports"
ok $? "provider registers through $reg"

exports=$(awk '$2 != "UND" && $1 != "LOCAL" { print $3 }' "$tmp/syms")
[ "$exports" = "verbs_provider_vroce" ]
ok $? "provider exports only verbs_provider_vroce"
[ "$exports" = "verbs_provider_vroce" ] || diag "exports: $exports"

readelf -W --dyn-syms "$so" |
	awk '$8 == "verbs_provider_vroce" && $4 == "OBJECT" && $3 == 72 { f = 1 }
	     END { exit !f }'
ok $? "verbs_provider_vroce is a 72-byte object (struct verbs_device_ops)"

done_tap
