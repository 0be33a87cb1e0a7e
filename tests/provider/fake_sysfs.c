// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * The fake sysfs tree of fake_sysfs.h.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fake_sysfs.h"
#include "fake_uverbs.h"

/*
 * The length of "-rdmavN.so" at the end of @path, N any private ABI
 * number, or 0 if there is none.
 */
static size_t abi_suffix_len(const char *path)
{
	const char *s = strrchr(path, '-');
	size_t digits;

	if (!s || strncmp(s, "-rdmav", 6))
		return 0;
	digits = strspn(s + 6, "0123456789");
	if (!digits || strcmp(s + 6 + digits, ".so"))
		return 0;
	return strlen(s);
}

/* A TAP diagnostic line. */
__attribute__((format(printf, 1, 2)))
static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Kept short so every path built under it fits in PATH_MAX. */
char fake_tmpdir[FAKE_TMPDIR_LEN];

/* ---- fake sysfs ---- */

static int put_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int make_dir(const char *fmt, const char *arg)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), fmt, fake_tmpdir, arg);
	return mkdir(path, 0755);
}

/*
 * sys/class/infiniband_verbs/{abi_version,uverbsN/{ibdev,abi_version,dev}}
 * and sys/class/infiniband/<ibdev>/node_type: what libibverbs' sysfs
 * fallback reads to list devices.
 */
static int add_uverbs(const char *uverbs, const char *ibdev,
		      const char *abi, const char *cdev)
{
	char dir[PATH_MAX];

	if (make_dir("%s/sys/class/infiniband_verbs/%s", uverbs) ||
	    make_dir("%s/sys/class/infiniband/%s", ibdev))
		return -1;

	snprintf(dir, sizeof(dir), "%s/sys/class/infiniband_verbs/%s",
		 fake_tmpdir, uverbs);
	if (put_file(dir, "ibdev", ibdev) || put_file(dir, "abi_version", abi) ||
	    put_file(dir, "dev", cdev))
		return -1;

	snprintf(dir, sizeof(dir), "%s/sys/class/infiniband/%s", fake_tmpdir,
		 ibdev);
	return put_file(dir, "node_type", "1: CA\n");
}

/* What ibv_query_gid() and ibv_devinfo read for vroce0's port 1. */
static int add_port(const char *ibdev)
{
	static const char *const gids[FAKE_GID_TBL_LEN] = {
		"fe80:0000:0000:0000:0200:aaff:fe00:0001\n",
		"0000:0000:0000:0000:0000:0000:0000:0000\n",
	};
	char dir[PATH_MAX];
	char name[16];
	int i;

	if (make_dir("%s/sys/class/infiniband/%s/ports", ibdev) ||
	    make_dir("%s/sys/class/infiniband/%s/ports/1", ibdev) ||
	    make_dir("%s/sys/class/infiniband/%s/ports/1/gids", ibdev) ||
	    make_dir("%s/sys/class/infiniband/%s/ports/1/gid_attrs", ibdev) ||
	    make_dir("%s/sys/class/infiniband/%s/ports/1/gid_attrs/types",
		     ibdev))
		return -1;

	for (i = 0; i < FAKE_GID_TBL_LEN; i++) {
		snprintf(name, sizeof(name), "%d", i);
		snprintf(dir, sizeof(dir),
			 "%s/sys/class/infiniband/%s/ports/1/gids", fake_tmpdir,
			 ibdev);
		if (put_file(dir, name, gids[i]))
			return -1;
		snprintf(dir, sizeof(dir),
			 "%s/sys/class/infiniband/%s/ports/1/gid_attrs/types",
			 fake_tmpdir, ibdev);
		if (put_file(dir, name, "RoCE v2\n"))
			return -1;
	}

	snprintf(dir, sizeof(dir), "%s/sys/class/infiniband/%s", fake_tmpdir,
		 ibdev);
	return put_file(dir, "node_guid", "0200:aaff:fe00:0001\n");
}

static int make_sysfs(void)
{
	char dir[PATH_MAX];
	char cdev[32];
	struct stat st;

	if (stat("/dev/null", &st))
		return -1;
	snprintf(cdev, sizeof(cdev), "%u:%u\n", major(st.st_rdev),
		 minor(st.st_rdev));

	if (make_dir("%s/sys%s", "") ||
	    make_dir("%s/sys/%s", "class") ||
	    make_dir("%s/sys/class/%s", "infiniband") ||
	    make_dir("%s/sys/class/%s", "infiniband_verbs"))
		return -1;
	snprintf(dir, sizeof(dir), "%s/sys/class/infiniband_verbs",
		 fake_tmpdir);
	if (put_file(dir, "abi_version", "6\n"))
		return -1;

	/*
	 * vroce0's uverbs ABI differs from VROCE_ABI_VERSION on purpose: the
	 * provider must bind whatever the device reports there.
	 */
	if (add_uverbs("uverbs0", "vroce0", "7\n", cdev) || add_port("vroce0"))
		return -1;
	return add_uverbs("uverbs1", "mlx9_0", "1\n", cdev);
}

static int remove_entry(const char *path, const struct stat *st, int type,
			struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void remove_tree(const char *path)
{
	if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS))
		diag("could not remove %s", path);
}

int fake_sysfs_setup(const char *so_path)
{
	char drivers[PATH_MAX];
	char sysfs[PATH_MAX];
	const char *base = getenv("TMPDIR");
	size_t len = strlen(so_path);
	size_t suffix = abi_suffix_len(so_path);

	if (so_path[0] != '/' || !suffix || len <= suffix) {
		diag("need the absolute path of lib<name>-rdmavN.so");
		return -1;
	}
	if (access(so_path, R_OK)) {
		diag("%s: %s", so_path, strerror(errno));
		return -1;
	}

	if (!base || !*base)
		base = "/tmp";
	if (strlen(base) > 400) {
		diag("TMPDIR too long");
		return -1;
	}
	snprintf(fake_tmpdir, sizeof(fake_tmpdir), "%s/vroce-load.XXXXXX",
		 base);
	if (!mkdtemp(fake_tmpdir)) {
		fake_tmpdir[0] = 0;
		return -1;
	}
	if (make_sysfs())
		return -1;

	snprintf(sysfs, sizeof(sysfs), "%s/sys", fake_tmpdir);
	snprintf(drivers, sizeof(drivers), "%.*s", (int)(len - suffix),
		 so_path);
	setenv("SYSFS_PATH", sysfs, 1);
	setenv("RDMAV_DRIVERS", drivers, 1);
	setenv("IBV_SHOW_WARNINGS", "1", 1);
	unsetenv("IBV_DRIVERS");
	diag("SYSFS_PATH=%s RDMAV_DRIVERS=%s IBV_SHOW_WARNINGS=1", sysfs,
		 drivers);
	return 0;
}

void fake_sysfs_cleanup(void)
{
	if (fake_tmpdir[0])
		remove_tree(fake_tmpdir);
	fake_tmpdir[0] = 0;
}
