// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: verbs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vroce.h"

/*
 * The kernel packs the firmware version as major << 32 | minor << 16 | sub,
 * 16 bits each; show it as "major.minor.sub".
 */
void vroce_format_fw_ver(char *buf, size_t len, uint64_t fw_ver)
{
	unsigned int major = (fw_ver >> 32) & 0xffff;
	unsigned int minor = (fw_ver >> 16) & 0xffff;
	unsigned int sub = fw_ver & 0xffff;

	snprintf(buf, len, "%u.%u.%u", major, minor, sub);
}

/*
 * Backs both ibv_query_device() (attr_size is then the size of the legacy
 * struct ibv_device_attr) and ibv_query_device_ex().
 */
int vroce_query_device_ex(struct ibv_context *ibctx,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	vroce_format_fw_ver(attr->orig_attr.fw_ver,
			    sizeof(attr->orig_attr.fw_ver), resp.base.fw_ver);
	return 0;
}

/*
 * The device's clock now (IBV_VALUES_MASK_RAW_CLOCK): the clock of the
 * CQE timestamps, CLOCK_MONOTONIC, read here without a system call on
 * the vDSO.
 */
int vroce_query_rt_values(struct ibv_context *ibctx,
			  struct ibv_values_ex *values)
{
	(void)ibctx;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK &&
	    clock_gettime(CLOCK_MONOTONIC, &values->raw_clock))
		return errno;
	return 0;
}

int vroce_query_port(struct ibv_context *ibctx, uint8_t port_num,
		     struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port_num, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *vroce_alloc_pd(struct ibv_context *ibctx)
{
	struct vroce_alloc_pd_cmd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct vroce_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}

	pd->pdn = resp.drv.pdn;
	return &pd->ibv_pd;
}

/*
 * A PD still extended by a parent domain, or a parent domain still
 * holding QPs, SRQs or CQs, stays: EBUSY.
 */
int vroce_dealloc_pd(struct ibv_pd *ibpd)
{
	struct vroce_pd *pd = to_vpd(ibpd);
	int ret;

	if (pd->protection)
		return vroce_dealloc_parent_domain(pd);
	if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE))
		return EBUSY;
	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(to_vpd(ibpd));
	return 0;
}

/*
 * ibv_import_pd(): the PD of @pd_handle in this (imported) context.  The
 * handle is the kernel's; a wrong one fails the first command that names
 * it.  ibv_unimport_pd() forgets it without destroying it.
 */
struct ibv_pd *vroce_import_pd(struct ibv_context *ibctx, uint32_t pd_handle)
{
	struct vroce_pd *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibv_pd.context = ibctx;
	pd->ibv_pd.handle = pd_handle;
	return &pd->ibv_pd;
}

/*
 * A PD that parent domains still extend, or a parent domain handed in by
 * mistake, is left alone: freeing it would leave them pointing at
 * nothing.
 */
void vroce_unimport_pd(struct ibv_pd *ibpd)
{
	struct vroce_pd *pd = to_vpd(ibpd);

	if (pd->protection || __atomic_load_n(&pd->users, __ATOMIC_ACQUIRE))
		return;
	free(pd);
}

/*
 * ibv_open_xrcd(): the kernel's XRC domain of attr->fd (or a new one);
 * no driver data.  XRC SRQs and TGT QPs name it by its handle.
 */
struct ibv_xrcd *vroce_open_xrcd(struct ibv_context *ibctx,
				 struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd = calloc(1, sizeof(*xrcd));
	int ret;

	if (!xrcd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

/* EBUSY while an XRC SRQ or TGT QP of it exists: it then stays. */
int vroce_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = vroce_container_of(ibxrcd, struct verbs_xrcd,
						     xrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(xrcd);
	if (ret)
		return ret;
	free(xrcd);
	return 0;
}
