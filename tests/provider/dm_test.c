// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * Device memory in the provider against the fake uverbs device, through
 * the installed libibverbs:
 *
 *   dm_test <absolute path of libvroce-rdmav34.so>
 *
 * ibv_alloc_dm() (the DM_ALLOC ioctl, then the mapping of the kernel's
 * memory), ibv_memcpy_to_dm() and ibv_memcpy_from_dm() checked byte by
 * byte against the fake kernel's own view of that memory, ibv_reg_dm_mr()
 * and ibv_dereg_mr() of its MRs, ibv_free_dm() (refused while an MR is
 * on the DM), and every input each must refuse.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "fake_sysfs.h"
#include "fake_uverbs.h"
#include "tap.h"
#include "test_main.h"
#include "vroce.h"

#define DM_LEN		5000	/* not a whole number of pages */
#define ACCESS		(IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | \
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static struct ibv_dm *alloc_dm(size_t length, uint32_t log_align,
			       uint32_t comp_mask)
{
	struct ibv_alloc_dm_attr attr = {
		.length = length,
		.log_align_req = log_align,
		.comp_mask = comp_mask,
	};

	errno = 0;
	return ibv_alloc_dm(ctx, &attr);
}

/* A byte of pattern @seed at @i: no two neighbours or seeds alike. */
static uint8_t pattern(unsigned int seed, size_t i)
{
	return (uint8_t)(i * 7 + (i >> 8) + seed * 31 + 1);
}

/* Whether @n bytes at @p are pattern @seed from index @from. */
static bool is_pattern(const uint8_t *p, size_t n, unsigned int seed,
		       size_t from)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != pattern(seed, from + i)) {
			tap_diag("byte %zu is 0x%02x, not 0x%02x", from + i,
				 p[i], pattern(seed, from + i));
			return false;
		}
	return true;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void check_device_attr(void)
{
	struct ibv_device_attr_ex attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_device_ex(ctx, NULL, &attr);
	tap_ok(ret == 0 && attr.max_dm_size == FAKE_MAX_DM_SIZE,
	       "ibv_query_device_ex() reports max_dm_size %llu",
	       (unsigned long long)attr.max_dm_size);
}

/* ---- allocation ---- */

/* Whether no DM is alive in the fake kernel. */
static bool no_live_dm(void)
{
	int i;

	for (i = 0; i < FAKE_MAX_OBJS; i++)
		if (fake.dms[i].live)
			return false;
	return true;
}

static void check_alloc_refused(void)
{
	unsigned int allocs = fake.alloc_dm, frees, bad_mmaps;
	struct ibv_dm *dm;

	dm = alloc_dm(DM_LEN, 0, 1);
	tap_ok(!dm && errno == EINVAL && fake.alloc_dm == allocs,
	       "a comp_mask: EINVAL, nothing asked of the kernel");
	dm = alloc_dm(0, 0, 0);
	tap_ok(!dm && errno == EINVAL && fake.alloc_dm == allocs,
	       "length 0: EINVAL, nothing asked of the kernel");
	dm = alloc_dm(SIZE_MAX, 0, 0);
	tap_ok(!dm && errno == EINVAL && fake.alloc_dm == allocs,
	       "a length that wraps when rounded to pages: EINVAL");

	dm = alloc_dm(DM_LEN, FAKE_PAGE_SHIFT + 1, 0);
	tap_ok(!dm && errno == EINVAL && fake.alloc_dm == allocs + 1,
	       "an alignment beyond a page: the kernel's EINVAL");
	dm = alloc_dm(FAKE_MAX_DM_SIZE + 1, 0, 0);
	tap_ok(!dm && errno == EINVAL && fake.alloc_dm == allocs + 2,
	       "more than max_dm_size: the kernel's EINVAL");

	dm = alloc_dm(FAKE_MAX_DM_SIZE, FAKE_PAGE_SHIFT, 0);
	tap_ok(dm && ibv_free_dm(dm) == 0,
	       "max_dm_size bytes aligned to a page: allocated and freed");

	fake.no_dm = true;
	dm = alloc_dm(DM_LEN, 0, 0);
	fake.no_dm = false;
	tap_ok(!dm && errno == EOPNOTSUPP,
	       "a kernel without DM (EPROTONOSUPPORT): EOPNOTSUPP");

	/* The mapping fails: the DM must not outlive the call. */
	frees = fake.free_dm;
	bad_mmaps = fake.bad_mmaps;
	fake.dm_offset_bias = 64 * FAKE_PAGE_SIZE;
	dm = alloc_dm(DM_LEN, 0, 0);
	fake.dm_offset_bias = 0;
	tap_ok(!dm && errno == EINVAL && fake.bad_mmaps == bad_mmaps + 1 &&
	       fake.free_dm == frees + 1 && no_live_dm(),
	       "a failed mmap: mmap's errno, the DM is freed again");
}

static struct fake_dm *check_alloc(struct ibv_dm *dm)
{
	struct fake_dm *kdm = dm ? fake_dm_get(dm->handle) : NULL;

	tap_ok(dm != NULL, "a DM of %d bytes", DM_LEN);
	if (!kdm)
		return NULL;
	tap_ok(fake.last_object == UVERBS_OBJECT_DM &&
	       fake.last_method == UVERBS_METHOD_DM_ALLOC &&
	       fake.last_num_attrs == 4 && fake.optional_attrs == 0,
	       "DM_ALLOC with 4 attributes, all mandatory");
	tap_ok(kdm->length == DM_LEN && kdm->log_align == 3,
	       "the kernel got the length and the alignment");
	tap_ok(dm->context == ctx && dm->comp_mask == IBV_DM_MASK_HANDLE &&
	       dm->memcpy_to_dm && dm->memcpy_from_dm,
	       "struct ibv_dm: context, comp_mask, handle, copy functions");
	tap_ok(kdm->mem->user_maps == 1 &&
	       kdm->mem->user_len == 2 * FAKE_PAGE_SIZE,
	       "the provider maps all of it: %zu bytes",
	       kdm->mem->user_len);
	return kdm;
}

/* ---- copies ---- */

static void check_copies(struct ibv_dm *dm, struct fake_dm *kdm)
{
	static uint8_t buf[DM_LEN], back[DM_LEN];
	size_t i;

	memset(back, 0xaa, sizeof(back));
	tap_ok(ibv_memcpy_from_dm(back, dm, 0, DM_LEN) == 0 &&
	       all_zero(back, DM_LEN), "a new DM reads as zeroes");

	for (i = 0; i < DM_LEN; i++)
		buf[i] = pattern(1, i);
	tap_ok(ibv_memcpy_to_dm(dm, 0, buf, DM_LEN) == 0 &&
	       is_pattern(kdm->buf, DM_LEN, 1, 0),
	       "ibv_memcpy_to_dm(): every byte lands in the kernel's memory");

	for (i = 0; i < DM_LEN; i++)
		kdm->buf[i] = pattern(2, i);
	memset(back, 0, sizeof(back));
	tap_ok(ibv_memcpy_from_dm(back, dm, 0, DM_LEN) == 0 &&
	       is_pattern(back, DM_LEN, 2, 0),
	       "ibv_memcpy_from_dm(): every byte of the kernel's memory");

	for (i = 0; i < 100; i++)
		buf[i] = pattern(3, 1000 + i);
	tap_ok(ibv_memcpy_to_dm(dm, 1000, buf, 100) == 0 &&
	       is_pattern(kdm->buf, 1000, 2, 0) &&
	       is_pattern(kdm->buf + 1000, 100, 3, 1000) &&
	       is_pattern(kdm->buf + 1100, DM_LEN - 1100, 2, 1100),
	       "a copy at an offset changes those bytes only");
	memset(back, 0, sizeof(back));
	tap_ok(ibv_memcpy_from_dm(back, dm, DM_LEN - 7, 7) == 0 &&
	       is_pattern(back, 7, 2, DM_LEN - 7) && all_zero(back + 7, 7),
	       "a copy of the last bytes, and no more");
	tap_ok(ibv_memcpy_to_dm(dm, DM_LEN, buf, 0) == 0 &&
	       ibv_memcpy_from_dm(back, dm, DM_LEN, 0) == 0,
	       "nothing at the very end: 0");
}

static void check_copies_refused(struct ibv_dm *dm, struct fake_dm *kdm)
{
	static const struct {
		uint64_t offset;
		size_t length;
		const char *what;
	} bad[] = {
		{ DM_LEN - 1, 2, "one byte past the end" },
		{ DM_LEN + 1, 0, "an offset past the end" },
		{ UINT64_MAX, 2, "offset + length wraps" },
		{ 1, SIZE_MAX, "a length that wraps" },
		{ (uint64_t)1 << 63, 16, "a huge offset" },
	};
	static uint8_t before[DM_LEN], host[32];
	size_t i;

	memcpy(before, kdm->buf, DM_LEN);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = bad[i].length < sizeof(host) ?
			   bad[i].length : sizeof(host);
		int to, from, from_errno;

		memset(host, 0x5c, sizeof(host));
		errno = 0;
		from = ibv_memcpy_from_dm(host, dm, bad[i].offset,
					  bad[i].length);
		from_errno = errno;
		errno = 0;
		to = ibv_memcpy_to_dm(dm, bad[i].offset, host,
				      bad[i].length);
		tap_ok(to == EINVAL && errno == EINVAL && from == EINVAL &&
		       from_errno == EINVAL &&
		       !memcmp(before, kdm->buf, DM_LEN) &&
		       (!n || (host[0] == 0x5c && host[n - 1] == 0x5c)),
		       "%s: EINVAL both ways, nothing copied", bad[i].what);
	}
}

/* ---- MRs ---- */

static struct ibv_mr *reg(struct ibv_pd *p, struct ibv_dm *dm,
			  uint64_t offset, size_t length, unsigned int access)
{
	errno = 0;
	return ibv_reg_dm_mr(p, dm, offset, length, access);
}

static void check_mr_refused(struct ibv_dm *dm)
{
	unsigned int regs = fake.reg_dm_mr;
	struct ibv_mr *mr;

	mr = reg(pd, dm, 0, DM_LEN, ACCESS & ~IBV_ACCESS_ZERO_BASED);
	tap_ok(!mr && errno == EINVAL && fake.reg_dm_mr == regs,
	       "an MR not zero-based: EINVAL, nothing asked of the kernel");
	mr = reg(pd, dm, 4096, 1000, ACCESS);
	tap_ok(!mr && errno == EINVAL && fake.reg_dm_mr == regs + 1,
	       "an MR past the end of the DM: the kernel's EINVAL");
	mr = reg(pd, dm, DM_LEN + 1, 1, ACCESS);
	tap_ok(!mr && errno == EINVAL, "an MR from past the end: EINVAL");
	mr = reg(pd, dm, 0, 0, ACCESS);
	tap_ok(!mr && errno == EINVAL, "an MR of 0 bytes: EINVAL");
	mr = reg(pd, dm, UINT64_MAX - 10, 100, ACCESS);
	tap_ok(!mr && errno == EINVAL, "an MR whose end wraps: EINVAL");
	mr = reg(pd, dm, 0, DM_LEN,
		 IBV_ACCESS_ZERO_BASED | IBV_ACCESS_REMOTE_WRITE);
	tap_ok(!mr && errno == EINVAL,
	       "remote write without local write: EINVAL");
	tap_ok(fake_dm_get(dm->handle)->mrs == 0, "no MR is on the DM");
}

static struct ibv_mr *check_mr(struct ibv_dm *dm)
{
	struct ibv_mr *mr = reg(pd, dm, 1024, 2048, ACCESS);
	struct fake_mr *kmr = mr ? fake_mr_get(mr->handle) : NULL;

	tap_ok(mr != NULL, "a zero-based MR of 2048 bytes from offset 1024");
	if (!kmr)
		return mr;
	tap_ok(fake.last_object == UVERBS_OBJECT_MR &&
	       fake.last_method == UVERBS_METHOD_DM_MR_REG &&
	       fake.last_num_attrs == 8 && fake.optional_attrs == 0,
	       "DM_MR_REG with 8 attributes, all mandatory");
	tap_ok(kmr->dm == dm->handle && kmr->start == 1024 &&
	       kmr->length == 2048 && kmr->access == ACCESS &&
	       kmr->pd_handle == pd->handle,
	       "the kernel got the DM, the range, the access and the PD");
	tap_ok(mr->lkey == kmr->lkey && mr->rkey == kmr->rkey,
	       "its keys are the kernel's: 0x%x, 0x%x", mr->lkey, mr->rkey);
	tap_ok(mr->addr == NULL && mr->length == 2048 && mr->pd == pd &&
	       mr->context == ctx,
	       "zero-based: addr NULL, length 2048, its PD and context");
	tap_ok(fake_dm_get(dm->handle)->mrs == 1, "the MR holds the DM");
	return mr;
}

/* An MR through a parent domain names the parent's PD. */
static void check_parent_domain(struct ibv_dm *dm)
{
	struct ibv_parent_domain_init_attr attr = { .pd = pd };
	struct ibv_pd *parent = ibv_alloc_parent_domain(ctx, &attr);
	struct ibv_mr *mr = parent ? reg(parent, dm, 0, 64, ACCESS) : NULL;
	struct fake_mr *kmr = mr ? fake_mr_get(mr->handle) : NULL;

	tap_ok(kmr && kmr->pd_handle == pd->handle && mr->pd == parent,
	       "an MR through a parent domain: its PD's handle");
	tap_ok(mr && ibv_dereg_mr(mr) == 0 && ibv_dealloc_pd(parent) == 0,
	       "that MR and the parent domain are freed");
}

static void check_busy(struct ibv_dm *dm, struct fake_dm *kdm,
		       struct ibv_mr *mr)
{
	unsigned int deregs = fake.dereg_mr;
	uint8_t byte = 0x3c, back = 0;

	tap_ok(ibv_free_dm(dm) == EBUSY && kdm->live,
	       "ibv_free_dm() with an MR on the DM: EBUSY");
	tap_ok(kdm->mem->user_maps == 1 &&
	       ibv_memcpy_to_dm(dm, 4000, &byte, 1) == 0 &&
	       kdm->buf[4000] == 0x3c &&
	       ibv_memcpy_from_dm(&back, dm, 4000, 1) == 0 && back == 0x3c,
	       "the DM is still mapped and copies still work");
	tap_ok(mr && ibv_dereg_mr(mr) == 0 && fake.dereg_mr == deregs + 1 &&
	       kdm->mrs == 0,
	       "ibv_dereg_mr() of the DM MR: DEREG_MR, the DM is let go");
}

static void check_free(struct ibv_dm *dm, struct fake_dm *kdm,
		       unsigned int maps)
{
	unsigned int frees = fake.free_dm;

	tap_ok(ibv_free_dm(dm) == 0 && fake.free_dm == frees + 1 &&
	       !kdm->live && fake.last_method == UVERBS_METHOD_DM_FREE &&
	       fake.last_num_attrs == 1,
	       "ibv_free_dm(): DM_FREE, the DM is gone");
	tap_ok(kdm->mem->user_maps == 0 && fake_user_maps() == maps,
	       "its mapping is gone too, no other is left");
}

/* Two DMs at once: each its own memory. */
static void check_two(void)
{
	struct ibv_dm *a = alloc_dm(100, 0, 0), *b = alloc_dm(100, 0, 0);
	struct fake_dm *ka = a ? fake_dm_get(a->handle) : NULL;
	struct fake_dm *kb = b ? fake_dm_get(b->handle) : NULL;
	uint8_t x = 0x11, y = 0x22;

	tap_ok(ka && kb && ka->mem->offset != kb->mem->offset &&
	       ibv_memcpy_to_dm(a, 5, &x, 1) == 0 &&
	       ibv_memcpy_to_dm(b, 5, &y, 1) == 0 &&
	       ka->buf[5] == 0x11 && kb->buf[5] == 0x22,
	       "two DMs: two offsets, each copy in its own memory");
	tap_ok(a && b && ibv_free_dm(b) == 0 && ibv_free_dm(a) == 0,
	       "both are freed");
}

static void check_dm(void)
{
	unsigned int maps = fake_user_maps();
	struct fake_dm *kdm;
	struct ibv_dm *dm;
	struct ibv_mr *mr;

	check_device_attr();
	check_alloc_refused();
	tap_ok(no_live_dm() && fake_user_maps() == maps,
	       "nothing is left of the refused DMs");

	dm = alloc_dm(DM_LEN, 3, 0);
	kdm = check_alloc(dm);
	if (!kdm)
		return;
	check_copies(dm, kdm);
	check_copies_refused(dm, kdm);
	check_mr_refused(dm);
	mr = check_mr(dm);
	check_parent_domain(dm);
	check_busy(dm, kdm, mr);
	check_free(dm, kdm, maps);
	check_two();
	tap_ok(no_live_dm() && fake_user_maps() == maps,
	       "no DM and no mapping is left");
}

int main(int argc, char **argv)
{
	struct test_env t;
	int opened = !test_open(&t, argc, argv, 0);

	ctx = t.ctx;
	pd = t.pd;
	if (opened)
		check_dm();
	return test_close(&t, opened);
}
