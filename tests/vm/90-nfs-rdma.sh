#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A second kernel ULP over vroce: NFS over RDMA (the kernel's NFS server,
# nfsd with svcrdma, and NFS client, xprtrdma), within one VM over
# vroce0's loopback. The server exports a tmpfs as the NFSv4 root and
# listens for RDMA on port 20049; the client mounts it with proto=rdma
# (IPv4, then proto=rdma6 over IPv6), writes 16 MiB of random data,
# drops its caches, reads it back and compares it with the source and
# with the server's copy. The client's transport statistics and vroce0's
# counters show that the bytes went over RDMA. Then the mount, the server
# and vroce0 go away, and the kernel log has no WARNING or BUG.
#
# vm: timeout=300
# vm: install=1

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

export_dir=/srv/vroce-nfs
mnt=/mnt/vroce-nfs
blob=/tmp/vroce-nfs.blob

tap_plan $((3 + 2 * 6 + 3))

command -v rpc.nfsd >/dev/null ||
	tap_bail "rpc.nfsd not found (Debian package nfs-kernel-server)"
vroce_up
tap_ok "vroce0 on eth0"
wait_for 20 vm_gid_index vroce0 "$VROCE_SELF_IP6"
tap_result $? "RoCE v2 GID of $VROCE_SELF_IP6"

# nfs_server: nfsd exporting a tmpfs as the NFSv4 root, RDMA on 20049.
# shellcheck disable=SC2317 # called through tap_check
nfs_server() {
	mkdir -p "$export_dir" "$mnt" /var/lib/nfs/v4recovery &&
		mount -t tmpfs tmpfs "$export_dir" &&
		modprobe nfsd && modprobe rpcrdma &&
		{ mountpoint -q /proc/fs/nfsd ||
			mount -t nfsd nfsd /proc/fs/nfsd; } &&
		exportfs -o rw,no_root_squash,fsid=0,insecure,no_subtree_check \
			"*:$export_dir" &&
		rpc.mountd -N 2 -N 3 &&
		echo 10 >/proc/fs/nfsd/nfsv4leasetime &&
		echo 10 >/proc/fs/nfsd/nfsv4gracetime &&
		rpc.nfsd -N 3 2 &&
		echo "rdma 20049" >/proc/fs/nfsd/portlist &&
		grep -qx "rdma 20049" /proc/fs/nfsd/portlist
}
tap_check "nfsd exports a tmpfs, listens for RDMA on port 20049" nfs_server

dd if=/dev/urandom of="$blob" bs=1M count=16 status=none

# rdma_bytes: vroce0's tx_bytes.
rdma_bytes() {
	rdma statistic show link vroce0/1 | tr ' ' '\n' |
		grep -A1 -x tx_bytes | tail -n 1
}

# cycle PROTO ADDR: 6 TAP lines.
cycle() {
	local proto=$1 addr=$2 b0 b1 name=blob-$1
	b0=$(rdma_bytes)
	tap_check "$proto: mount $addr:/ (NFSv4, proto=$proto, port 20049)" \
		run_timeout 90 mount -t nfs4 -o "proto=$proto,port=20049" \
		"$addr:/" "$mnt"
	grep -q " $mnt nfs4 .*proto=$proto" /proc/mounts
	tap_result $? "$proto: /proc/mounts shows proto=$proto"
	tap_check "$proto: 16 MiB written and synced" \
		run_timeout 90 dd if="$blob" of="$mnt/$name" bs=1M conv=fsync \
		status=none
	echo 3 >/proc/sys/vm/drop_caches
	tap_check "$proto: read back over NFS, same bytes" \
		run_timeout 90 cmp "$blob" "$mnt/$name"
	tap_check "$proto: the server's copy has the same bytes" \
		cmp "$blob" "$export_dir/$name"
	b1=$(rdma_bytes)
	tap_diag "$proto: $(grep -m1 'xprt:' /proc/self/mountstats)"
	# Both copies of 16 MiB crossed vroce0 (sent, and in loopback also
	# received, by it).
	[ $((b1 - b0)) -ge $((2 * 16 * 1024 * 1024)) ] &&
		grep -q "xprt:[[:space:]]*rdma" /proc/self/mountstats &&
		run_timeout 60 umount "$mnt"
	tap_result $? "$proto: vroce0 sent $((b1 - b0)) bytes (32 MiB or more); rdma transport; unmounted"
}

cycle rdma "$VROCE_SELF_IP4"
cycle rdma6 "[$VROCE_SELF_IP6]"

tap_check "nfsd stopped" run_timeout 60 rpc.nfsd 0
tap_check "rdma link delete vroce0" run_timeout 60 rdma link delete vroce0
! dmesg | grep -E "WARNING|BUG|Oops"
tap_result $? "kernel log has no WARNING, BUG or Oops"
tap_done
