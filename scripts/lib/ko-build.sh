# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# ko_build TOP DEST KDIR JOBS: build vroce.ko and tests/kmod/vroce_ktest.ko
# against the kernel build directory KDIR in DEST, a copy of TOP's
# Kbuild and the .c and .h files of kernel/, uapi/ and tests/kmod/ (tar
# keeps their mtimes, so make rebuilds only what changed; sources gone from
# TOP go from the copy too, since kernel/core/*.c is a wildcard). The
# repo's own vroce.ko is left alone. Compiles run under nice -n 19 with
# JOBS jobs; make's output goes to stderr. Returns non-zero if either
# module does not build.

# shellcheck shell=bash

ko_build() {
	local top=$1 dest=$2 kdir=$3 jobs=$4 f
	mkdir -p "$dest" || return 1
	(
		cd "$top" &&
			find kernel uapi tests/kmod \( -name '*.c' -o -name '*.h' \
				-o -name Kbuild \) -type f -print0 |
			tar --null -T - -cf - Kbuild
	) | tar -C "$dest" -xf - || return 1
	# Not the *.mod.c that modpost made: it writes one only when it runs,
	# and it does not run again while the modules' symbols stay the same.
	while IFS= read -r -d '' f; do
		[ -f "$top/${f#"$dest"/}" ] || rm -f "$f" "${f%.c}.o"
	done < <(find "$dest/kernel" "$dest/uapi" "$dest/tests/kmod" \
		\( -name '*.c' -o -name '*.h' \) ! -name '*.mod.c' -type f -print0)
	nice -n 19 make -s -C "$kdir" -j"$jobs" M="$dest" modules >&2 ||
		return 1
	nice -n 19 make -s -C "$kdir" -j"$jobs" M="$dest/tests/kmod" \
		KBUILD_EXTRA_SYMBOLS="$dest/Module.symvers" modules >&2
}
