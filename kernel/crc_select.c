// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Choosing the CRC-32 for ICRC at module load. The module parameter
 * "icrc" (auto, shash or table; default auto) says what to use; in auto
 * mode the faster of crc32_le() and the crypto API's "crc32" shash by a
 * short measurement (crc_bench.c). The shash is used only if it exists
 * and gives the same CRCs as crc32_le(), else crc32_le() is. The choice
 * is logged and shown, read-only, in the parameter "icrc_impl":
 * "table crc32_le" or "shash DRIVER" (e.g. "shash crc32-pclmul").
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/err.h>
#include <linux/kmod.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "crc.h"

enum icrc_mode { ICRC_AUTO, ICRC_SHASH, ICRC_TABLE };

static const char * const icrc_modes[] = {
	[ICRC_AUTO] = "auto",
	[ICRC_SHASH] = "shash",
	[ICRC_TABLE] = "table",
};

static int icrc_mode;

static int icrc_mode_set(const char *val, const struct kernel_param *kp)
{
	int mode = sysfs_match_string(icrc_modes, val);

	if (mode < 0)
		return mode;
	icrc_mode = mode;
	return 0;
}

static int icrc_mode_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", icrc_modes[icrc_mode]);
}

static const struct kernel_param_ops icrc_mode_ops = {
	.set = icrc_mode_set,
	.get = icrc_mode_get,
};

module_param_cb(icrc, &icrc_mode_ops, NULL, 0444);
MODULE_PARM_DESC(icrc, "CRC-32 for ICRC: auto (measure at load), shash (crypto API crc32) or table (crc32_le)");

static int icrc_impl_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static int icrc_impl_get(char *buf, const struct kernel_param *kp)
{
	struct crypto_shash *tfm = READ_ONCE(vroce_crc_tfm);

	if (!tfm)
		return sysfs_emit(buf, "table crc32_le\n");
	return sysfs_emit(buf, "shash %s\n", crypto_shash_driver_name(tfm));
}

static const struct kernel_param_ops icrc_impl_ops = {
	.set = icrc_impl_set,
	.get = icrc_impl_get,
};

module_param_cb(icrc_impl, &icrc_impl_ops, NULL, 0444);
MODULE_PARM_DESC(icrc_impl, "CRC-32 in use for ICRC (read-only)");

/* Known CRCs of the test buffer: offset, length, ~crc from ~0. */
static const struct {
	unsigned int off, len;
	u32 crc;
} crc_vectors[] = {
	{ 0, VROCE_CRC_BUF_LEN, 0xa3f5519c },
	{ 3, 1021, 0x99b27a57 },
	{ 1, 200, 0x92f941c4 },
};

/* Byte i of the test and measurement buffer. */
static u8 crc_test_byte(unsigned int i)
{
	return (u8)(i * 131 + 7);
}

/*
 * Does @tfm (NULL: crc32_le) give the standard check value and the known
 * CRCs of the test buffer @buf, which are long enough for SIMD code?
 */
static bool crc_check(struct crypto_shash *tfm, const u8 *buf)
{
	static const char check[] = "123456789";
	unsigned int i;
	u32 crc;

	crc = tfm ? vroce_crc_shash(tfm, ~0u, check, 9) :
		    crc32_le(~0u, check, 9);
	if (~crc != 0xcbf43926)
		return false;
	for (i = 0; i < ARRAY_SIZE(crc_vectors); i++) {
		const u8 *p = buf + crc_vectors[i].off;
		unsigned int n = crc_vectors[i].len;

		crc = tfm ? vroce_crc_shash(tfm, ~0u, p, n) :
			    crc32_le(~0u, p, n);
		if (~crc != crc_vectors[i].crc)
			return false;
	}
	return true;
}

/*
 * The crypto API's crc32 shash, checked, or NULL. Every module with the
 * alias is asked for first: the API itself would load only one, and
 * only if no crc32 shash were registered yet (crc32-generic may be).
 */
static struct crypto_shash *crc_shash_get(const u8 *buf)
{
	struct crypto_shash *tfm;

	request_module("crypto-crc32");
	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm)) {
		pr_info("vroce: icrc: no crc32 shash (%ld)\n", PTR_ERR(tfm));
		return NULL;
	}
	if (crypto_shash_descsize(tfm) != sizeof(u32) ||
	    crypto_shash_digestsize(tfm) != sizeof(u32) ||
	    !crc_check(tfm, buf)) {
		pr_warn("vroce: icrc: shash %s gives wrong CRCs, not used\n",
			crypto_shash_driver_name(tfm));
		crypto_free_shash(tfm);
		return NULL;
	}
	return tfm;
}

/* Measure both, log, and say whether to keep the shash @tfm. */
static bool crc_shash_wins(struct crypto_shash *tfm, const u8 *buf)
{
	struct vroce_crc_times table, shash;

	vroce_crc_bench(NULL, buf, &table);
	vroce_crc_bench_log("table crc32_le", &table);
	if (!tfm)
		return false;
	vroce_crc_bench(tfm, buf, &shash);
	vroce_crc_bench_log(crypto_shash_driver_name(tfm), &shash);
	return vroce_crc_bench_total(&shash) < vroce_crc_bench_total(&table);
}

/* Whether to use the shash @tfm (may be NULL) in the mode asked for. */
static bool crc_use_shash(struct crypto_shash *tfm, const u8 *buf)
{
	bool faster = crc_shash_wins(tfm, buf);

	switch (icrc_mode) {
	case ICRC_TABLE:
		return false;
	case ICRC_SHASH:
		if (!tfm)
			pr_warn("vroce: icrc: icrc=shash but no usable shash\n");
		return tfm != NULL;
	default:
		return faster;
	}
}

int vroce_crc_init(void)
{
	struct crypto_shash *tfm;
	unsigned int i;
	u8 *buf;

	buf = kmalloc(VROCE_CRC_BUF_LEN + 16, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < VROCE_CRC_BUF_LEN + 16; i++)
		buf[i] = crc_test_byte(i);
	if (!crc_check(NULL, buf)) {
		pr_err("vroce: icrc: crc32_le gives wrong CRCs\n");
		kfree(buf);
		return -ELIBBAD;
	}
	tfm = crc_shash_get(buf);
	if (!crc_use_shash(tfm, buf)) {
		crypto_free_shash(tfm);
		tfm = NULL;
	}
	kfree(buf);
	WRITE_ONCE(vroce_crc_tfm, tfm);
	pr_info("vroce: icrc: icrc=%s, using %s %s\n", icrc_modes[icrc_mode],
		tfm ? "shash" : "table",
		tfm ? crypto_shash_driver_name(tfm) : "crc32_le");
	return 0;
}

void vroce_crc_exit(void)
{
	struct crypto_shash *tfm = vroce_crc_tfm;

	WRITE_ONCE(vroce_crc_tfm, NULL);
	crypto_free_shash(tfm);
}
