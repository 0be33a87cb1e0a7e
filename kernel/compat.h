/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every kernel-version difference vroce cares about, in one place.
 * Supported: 6.1 LTS (Debian 12) and 6.12 LTS. Nothing the module uses so
 * far differs between the two; shims go here when something does, keyed
 * on LINUX_VERSION_CODE.
 *
 * Copyright (c) 2026 the vroce developers
 */
#ifndef VROCE_COMPAT_H
#define VROCE_COMPAT_H

#include <linux/version.h>

#endif /* VROCE_COMPAT_H */
