// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * Loads the vroce provider through the installed libibverbs, the way an
 * application does, against a fake sysfs tree and the fake uverbs device of
 * fake_uverbs.c:
 *
 *   load_test <absolute path of libvroce-rdmavN.so> [<libfake_uverbs.so>]
 *
 * The fake sysfs (under $TMPDIR) has two uverbs devices: vroce0, which must
 * bind to our provider, and mlx9_0, which must not.  libibverbs is pointed
 * at it with SYSFS_PATH, told to load our build of the provider with
 * RDMAV_DRIVERS=<dir>/libvroce (it appends "-rdmavN.so", N its private ABI), and asked to
 * report unbound devices with IBV_SHOW_WARNINGS.
 *
 * Given libfake_uverbs.so, it finally runs ibv_devinfo on vroce0 with the
 * fake device preloaded, as an unmodified libibverbs application.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "fake_sysfs.h"
#include "fake_uverbs.h"
#include "tap.h"
#include "vroce.h"


/* ---- stderr capture ---- */

struct capture {
	int saved_fd;
	char path[PATH_MAX];
	char text[8192];
};

static int capture_begin(struct capture *cap)
{
	int fd;

	snprintf(cap->path, sizeof(cap->path), "%s/stderr.XXXXXX",
		 fake_tmpdir);
	fd = mkstemp(cap->path);
	if (fd < 0)
		return -1;
	fflush(stderr);
	cap->saved_fd = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	return 0;
}

static void capture_end(struct capture *cap)
{
	FILE *f;
	size_t n = 0;

	fflush(stderr);
	dup2(cap->saved_fd, STDERR_FILENO);
	close(cap->saved_fd);

	f = fopen(cap->path, "r");
	if (f) {
		n = fread(cap->text, 1, sizeof(cap->text) - 1, f);
		fclose(f);
	}
	cap->text[n] = 0;
	unlink(cap->path);
}

/* Show text as TAP diagnostics, one "# <what>: ..." line per line. */
static void diag_lines(const char *what, const char *text)
{
	while (*text) {
		const char *end = strchrnul(text, '\n');

		tap_diag("%s: %.*s", what, (int)(end - text), text);
		text = *end ? end + 1 : end;
	}
}

static unsigned int count_lines(const char *text)
{
	unsigned int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* ---- the tests ---- */

static const struct verbs_device_ops *provider_ops(const char *so_path)
{
	void *handle = dlopen(so_path, RTLD_NOW | RTLD_NOLOAD);
	const struct verbs_device_ops *ops;

	if (!handle)
		return NULL;
	ops = dlsym(handle, "verbs_provider_vroce");
	dlclose(handle);
	return ops;
}

static struct ibv_device *check_device_list(const char *so_path,
					    struct ibv_device ***list)
{
	const struct verbs_device_ops *ops;
	struct ibv_device *dev;
	struct capture cap;
	int num = -1;

	if (capture_begin(&cap))
		return NULL;
	*list = ibv_get_device_list(&num);
	capture_end(&cap);
	diag_lines("stderr", cap.text);

	tap_ok(*list != NULL, "ibv_get_device_list() succeeds");
	if (!*list)
		return NULL;
	tap_ok(num == 1, "exactly one device is bound (got %d)", num);
	dev = (*list)[0];
	if (!tap_ok(dev && !strcmp(dev->name, "vroce0"),
		    "the bound device is vroce0, mlx9_0 is not bound"))
		return NULL;

	ops = provider_ops(so_path);
	tap_ok(ops != NULL, "libibverbs loaded %s", so_path);
	tap_ok(vroce_container_of(dev, struct verbs_device, device)->ops == ops,
	       "vroce0 is bound to verbs_provider_vroce of our build");
	tap_ok(dev->node_type == IBV_NODE_CA &&
	       dev->transport_type == IBV_TRANSPORT_IB,
	       "vroce0 is a CA with IB transport (RoCE)");
	tap_ok(!strcmp(dev->dev_name, "uverbs0"), "vroce0 uses uverbs0");

	tap_ok(strstr(cap.text, "driver found for mlx9_0") != NULL,
	       "libibverbs reports mlx9_0 as having no provider");
	tap_ok(!strstr(cap.text, "driver found for vroce0"),
	       "no \"no userspace device-specific driver\" warning for vroce0");
	tap_ok(!strstr(cap.text, "Driver vroce does not support"),
	       "the uverbs ABI version of vroce0 is accepted");
	return dev;
}

static struct ibv_context *check_open(struct ibv_device *dev)
{
	struct ibv_context *ctx = ibv_open_device(dev);

	if (!tap_ok(ctx != NULL, "ibv_open_device(vroce0) succeeds"))
		return NULL;
	tap_ok(fake.get_context == 1 && fake.get_context_in == 0 &&
	       fake.get_context_out == sizeof(struct vroce_alloc_ucontext_resp),
	       "GET_CONTEXT asks for struct vroce_alloc_ucontext_resp");
	tap_ok(to_vctx(ctx)->page_size == FAKE_PAGE_SIZE,
	       "the context keeps the kernel's page size");
	tap_ok(ctx->num_comp_vectors == FAKE_COMP_VECS,
	       "num_comp_vectors comes from the kernel");
	return ctx;
}

static void check_queries(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr_ex;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	int ret;

	memset(&attr, 0xff, sizeof(attr));
	ret = ibv_query_device(ctx, &attr);
	tap_ok(!ret && fake.query_device == 1, "ibv_query_device() succeeds");
	tap_ok(!strcmp(attr.fw_ver, FAKE_FW_STR),
	       "ibv_query_device() fw_ver is \"%s\" (got \"%.64s\")",
	       FAKE_FW_STR, attr.fw_ver);
	tap_ok(attr.max_qp == FAKE_MAX_QP && attr.phys_port_cnt == 1,
	       "ibv_query_device() limits come from the kernel");

	memset(&attr_ex, 0xff, sizeof(attr_ex));
	ret = ibv_query_device_ex(ctx, NULL, &attr_ex);
	tap_ok(!ret && fake.query_device_ex == 1,
	       "ibv_query_device_ex() succeeds through the extended command");
	tap_ok(fake.query_device_ex_drv_out == 0,
	       "ibv_query_device_ex() asks for no driver data");
	tap_ok(!strcmp(attr_ex.orig_attr.fw_ver, FAKE_FW_STR),
	       "ibv_query_device_ex() fw_ver is \"%s\"", FAKE_FW_STR);
	tap_ok(attr_ex.orig_attr.max_qp == FAKE_MAX_QP &&
	       attr_ex.phys_port_cnt_ex == 1 &&
	       attr_ex.orig_attr.vendor_id == 0x1234,
	       "ibv_query_device_ex() attributes come from the kernel");

	ret = ibv_query_port(ctx, 1, &port);
	tap_ok(!ret && port.state == IBV_PORT_ACTIVE &&
	       port.active_mtu == IBV_MTU_1024 &&
	       port.link_layer == IBV_LINK_LAYER_ETHERNET &&
	       port.gid_tbl_len == FAKE_GID_TBL_LEN,
	       "ibv_query_port(1) returns the kernel's port attributes");
	ret = ibv_query_port(ctx, 2, &port);
	tap_ok(ret == EINVAL, "ibv_query_port(2) fails with the kernel's EINVAL");
}

#define FAILS_NULL(expr, what)						\
	do {								\
		void *_obj;						\
		errno = 0;						\
		_obj = (void *)(expr);					\
		tap_ok(!_obj && errno == EOPNOTSUPP,			\
		       what " fails with EOPNOTSUPP");			\
	} while (0)

/*
 * Raw packet QPs, WQs and flows are not implemented: vroce's create_qp_ex
 * and libibverbs' default ops fail them with EOPNOTSUPP.  (SRQs, MRs,
 * MWs, AHs, extended QPs, XRC, domains and device memory are, and
 * verbs_test, qp_ex_test, xrc_test, domain_test and dm_test check them.)
 */
static void check_unsupported(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_qp_init_attr_ex qp_attr_ex = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
	};
	unsigned int commands = fake.commands;

	FAILS_NULL(ibv_create_qp_ex(ctx, &qp_attr_ex),
		   "ibv_create_qp_ex() of a raw packet QP");
	FAILS_NULL(ibv_create_wq(ctx, &(struct ibv_wq_init_attr){}),
		   "ibv_create_wq()");
	tap_ok(fake.commands == commands,
	       "...all without a command to the kernel");
}

/*
 * No SRQ takes tag-matching ops; the op is reached through a bare object
 * that only carries the context.
 */
static void check_data_path(struct ibv_context *ctx)
{
	struct ibv_srq srq = { .context = ctx };
	struct ibv_ops_wr op = {}, *bad_op = NULL;
	int ret;

	ret = ibv_post_srq_ops(&srq, &op, &bad_op);
	tap_ok(ret == EOPNOTSUPP && bad_op == &op,
	       "ibv_post_srq_ops() fails with EOPNOTSUPP and sets bad_op");
}

static void check_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	if (!tap_ok(pd != NULL, "ibv_alloc_pd() succeeds"))
		return;
	tap_ok(pd->context == ctx && pd->handle == FAKE_PD_HANDLE,
	       "the PD has the kernel's handle");
	tap_ok(fake.alloc_pd_out == sizeof(struct vroce_alloc_pd_resp) &&
	       to_vpd(pd)->pdn == FAKE_PDN,
	       "ALLOC_PD returns struct vroce_alloc_pd_resp, pdn kept");

	check_unsupported(ctx, pd);

	tap_ok(ibv_dealloc_pd(pd) == 0 && fake.dealloc_pd == 1 &&
	       fake.dealloc_pd_handle == FAKE_PD_HANDLE,
	       "ibv_dealloc_pd() frees the kernel's PD");
}

static void check_abi_mismatch(struct ibv_device *dev, bool driver_data,
			       uint32_t abi)
{
	char want[128];
	struct ibv_context *ctx;
	struct capture cap;
	int err;

	fake.abi_version = abi;
	fake.send_driver_data = driver_data;
	if (capture_begin(&cap))
		return;
	errno = 0;
	ctx = ibv_open_device(dev);
	err = errno;
	capture_end(&cap);
	diag_lines("stderr", cap.text);

	snprintf(want, sizeof(want),
		 "vroce: vroce0: kernel ABI version %u does not match provider ABI version %u; install matching vroce module and provider\n",
		 driver_data ? abi : 0, VROCE_ABI_VERSION);
	tap_ok(!ctx && err == EPROTO,
	       "%s: ibv_open_device() fails with EPROTO",
	       driver_data ? "kernel ABI version mismatch" :
			     "kernel sends no vroce driver data");
	tap_ok(!strcmp(cap.text, want) && count_lines(cap.text) == 1,
	       "...and prints one line naming both ABI versions");
	tap_ok(fake.open_fds == 0, "...and closes the device");
	if (ctx)
		ibv_close_device(ctx);

	fake.abi_version = VROCE_ABI_VERSION;
	fake.send_driver_data = true;
}

/* Run ibv_devinfo -v -d vroce0 with the fake device preloaded. */
static int run_devinfo(const char *preload, char *out, size_t size)
{
	size_t len = 0;
	int status;
	int fds[2];
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		setenv("LD_PRELOAD", preload, 1);
		execlp("ibv_devinfo", "ibv_devinfo", "-v", "-d", "vroce0",
		       (char *)NULL);
		_exit(127);
	}

	close(fds[1]);
	while (len < size - 1 &&
	       (n = read(fds[0], out + len, size - 1 - len)) > 0)
		len += n;
	out[len] = 0;
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static bool has_line(const char *out, const char *key, const char *value)
{
	const char *line;

	for (line = out; (line = strstr(line, key)); line += strlen(key)) {
		const char *end = strchrnul(line, '\n');
		const char *val = strstr(line, value);

		if (val && val < end)
			return true;
	}
	return false;
}

static void check_devinfo(const char *preload)
{
	static char out[65536];
	bool ok;
	int rc;

	if (!preload)
		return;

	rc = run_devinfo(preload, out, sizeof(out));
	if (rc == 127) {
		tap_skip("ibv_devinfo is not installed");
		return;
	}
	if (!tap_ok(rc == 0, "ibv_devinfo -v -d vroce0 succeeds (status %d)",
		    rc)) {
		diag_lines("ibv_devinfo", out);
		return;
	}
	ok = tap_ok(has_line(out, "hca_id:", "vroce0") &&
		    has_line(out, "transport:", "InfiniBand") &&
		    has_line(out, "fw_ver:", FAKE_FW_STR) &&
		    has_line(out, "max_qp:", "1234") &&
		    has_line(out, "phys_port_cnt:", "1"),
		    "ibv_devinfo shows the device attributes");
	ok &= tap_ok(has_line(out, "state:", "PORT_ACTIVE") &&
		     has_line(out, "active_mtu:", "1024") &&
		     has_line(out, "link_layer:", "Ethernet") &&
		     has_line(out, "GID[  0]:",
			      "fe80::200:aaff:fe00:1, RoCE v2"),
		     "ibv_devinfo shows port 1 as an active RoCE v2 port");
	if (!ok)
		diag_lines("ibv_devinfo", out);
}

int main(int argc, char **argv)
{
	struct ibv_device **list = NULL;
	struct ibv_context *ctx;
	struct ibv_device *dev;

	if (argc != 2 && argc != 3) {
		fprintf(stderr,
			"usage: %s <absolute path of libvroce-rdmavN.so> [<libfake_uverbs.so>]\n",
			argv[0]);
		return 2;
	}

	if (!tap_ok(fake_sysfs_setup(argv[1]) == 0,
		    "fake sysfs with vroce0 and mlx9_0"))
		goto out;

	dev = check_device_list(argv[1], &list);
	if (!dev)
		goto out;

	ctx = check_open(dev);
	if (ctx) {
		check_queries(ctx);
		check_pd(ctx);
		check_data_path(ctx);
		tap_ok(ibv_close_device(ctx) == 0 && fake.open_fds == 0,
		       "ibv_close_device() closes the device");
	}

	check_abi_mismatch(dev, true, VROCE_ABI_VERSION + 1);
	check_abi_mismatch(dev, false, 0);

	tap_ok(fake.unexpected == 0,
	       "the provider sent no command it does not implement");
	if (fake.unexpected)
		tap_diag("last unexpected command 0x%x", fake.last_unexpected);

	check_devinfo(argc == 3 ? argv[2] : NULL);
out:
	if (list)
		ibv_free_device_list(list);
	fake_sysfs_cleanup();
	return tap_done();
}
