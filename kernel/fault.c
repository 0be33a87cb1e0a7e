// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fault injection on the packet path, for kernels built with
 * CONFIG_FAULT_INJECTION_DEBUG_FS (the debug kernel of make check-debug;
 * Debian's kernels have none, and this file is not built for them).
 *
 * /sys/kernel/debug/vroce_fail_packet/ holds the standard knobs of a
 * fault attribute (probability, interval, times, space, verbose, ...; see
 * Documentation/fault-injection/fault-injection.rst). While it fires,
 * the module's packet-path allocations fail as they would when memory is
 * short, in whatever context they run: packet skbs (requests, READ
 * responses, ACKs, UD sends), batch records of tx_pace.c, and the private
 * copy of a received GRO chain. failslab and fail_page_alloc cannot aim
 * at these: they come from the kernel's shared caches, mostly in softirq.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/debugfs.h>
#include <linux/fault-inject.h>

#include "vroce.h"

static DECLARE_FAULT_ATTR(vroce_fail_packet_attr);
static struct dentry *vroce_fault_dir;

bool vroce_fail_packet(void)
{
	return should_fail(&vroce_fail_packet_attr, 1);
}

void vroce_fault_init(void)
{
	struct dentry *d;

	d = fault_create_debugfs_attr("vroce_fail_packet", NULL,
				      &vroce_fail_packet_attr);
	vroce_fault_dir = IS_ERR(d) ? NULL : d;
}

void vroce_fault_exit(void)
{
	debugfs_remove_recursive(vroce_fault_dir);
}
