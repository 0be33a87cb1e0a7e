#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# NVMe over Fabrics in one VM with the target on shared receive queues
# (nvmet-rdma use_srq=1): kernel SRQs, post_srq_recv and the receive path
# taking a kernel QP's receives from its SRQ. The checks are those of
# 89-nvmeof.sh, plus the target's SRQs on the device in each cycle.
#
# vm: timeout=900
# vm: install=1

export VROCE_NVME_SRQ=1
# shellcheck source=tests/vm/89-nvmeof.sh
. "$(dirname "$0")/89-nvmeof.sh"
