/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every kernel-version difference vroce cares about, in one place.
 * Supported: 6.1 LTS (Debian 12) and 6.12 LTS.
 *
 * Copyright (c) 2026 the vroce developers
 */
#ifndef VROCE_COMPAT_H
#define VROCE_COMPAT_H

#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "vroce needs Linux 6.1 or newer"
#endif

#endif /* VROCE_COMPAT_H */
