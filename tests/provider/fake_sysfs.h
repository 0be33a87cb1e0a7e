/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * A fake sysfs tree for running libibverbs against the fake uverbs device
 * of fake_uverbs.h.  It has two uverbs devices: vroce0, which must bind to
 * our provider, and mlx9_0, which must not.  libibverbs is pointed at it
 * with SYSFS_PATH, told to load our build of the provider with
 * RDMAV_DRIVERS=<dir>/libvroce (it appends "-rdmav34.so"), and asked to
 * report unbound devices with IBV_SHOW_WARNINGS.
 */
#ifndef VROCE_FAKE_SYSFS_H
#define VROCE_FAKE_SYSFS_H

#define FAKE_TMPDIR_LEN 512

/* The scratch directory (under $TMPDIR) holding the tree; "" if none. */
extern char fake_tmpdir[FAKE_TMPDIR_LEN];

/*
 * Build the tree and point libibverbs at it and at the provider, given
 * as the absolute path of its libvroce-rdmav34.so.  Returns 0 or -1, with
 * the reason printed as a TAP diagnostic.
 */
int fake_sysfs_setup(const char *so_path);

/* Remove the scratch directory. */
void fake_sysfs_cleanup(void);

#endif /* VROCE_FAKE_SYSFS_H */
