#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# rdma link add/delete of vroce devices, and the links it must refuse.
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

tap_plan 16

tap_check "modprobe vroce" modprobe vroce
rdma_add vroce0 eth0
tap_result $? "rdma link add vroce0 type vroce netdev eth0"
tap_check "ibv_devices lists vroce0" sh -c "ibv_devices | grep -qw vroce0"
tap_check "rdma link show: vroce0 ACTIVE on eth0" \
	sh -c "rdma link show vroce0/1 | grep -q 'state ACTIVE .*netdev eth0'"
tap_check "/sys/class/infiniband/vroce0/device/net/ names eth0" \
	test -d /sys/class/infiniband/vroce0/device/net/eth0
# EUI-64 from the MAC: flip the U/L bit, insert ff:fe in the middle.
guid_from_mac() {
	IFS=: read -r m0 m1 m2 m3 m4 m5 </sys/class/net/eth0/address
	printf '%02x%s:%sff:fe%s:%s%s\n' $((0x$m0 ^ 2)) "$m1" "$m2" "$m3" \
		"$m4" "$m5"
}
want=$(guid_from_mac)
got=$(cat /sys/class/infiniband/vroce0/node_guid)
[ "$got" = "$want" ]
tap_result $? "node GUID $got derived from the MAC (want $want)"

# Refusals: each with a clear errno and a one-line kernel message.
rdma_add vroce1 eth0
rc=$?
[ $rc -ne 0 ] && case $rdma_err in *"File exists"*) true ;; *) false ;; esac
tap_result $? "second device on eth0 refused with EEXIST ($rdma_err)"
tap_check "kernel says eth0 already carries a device" \
	dmesg_has "vroce: eth0 already carries a vroce device"

rdma_add vroce1 lo
[ $? -ne 0 ] && case $rdma_err in *"not supported"*) true ;; *) false ;; esac
tap_result $? "non-Ethernet netdev lo refused with EOPNOTSUPP ($rdma_err)"
tap_check "kernel says lo is not Ethernet" \
	dmesg_has "vroce: lo is not an Ethernet device"

rdma_add vroce1 nosuchdev0
[ $? -ne 0 ] && case $rdma_err in *"No such device"*) true ;; *) false ;; esac
tap_result $? "unknown netdev refused with ENODEV ($rdma_err)"

ip link add dummy0 type dummy && ip link set dummy0 up
rdma_add vroce0 dummy0
[ $? -ne 0 ] && case $rdma_err in *"File exists"*) true ;; *) false ;; esac
tap_result $? "name vroce0 already in use refused with EEXIST ($rdma_err)"

rdma_add foo0 dummy0
[ $? -ne 0 ] && ! link_exists foo0
tap_result $? "name without the vroce prefix refused ($rdma_err)"

tap_check "rdma link delete vroce0" rdma link delete vroce0
tap_check "vroce0 is gone" sh -c "! test -e /sys/class/infiniband/vroce0"
rdma_add vroce0 eth0 && rdma link delete vroce0
tap_result $? "vroce0 can be created and deleted again"
tap_done
