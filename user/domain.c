// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * vroce libibverbs provider: thread domains and parent domains.
 *
 * Neither exists in the kernel.  A parent domain is a struct vroce_pd
 * that carries its protection domain's handle, so every command made
 * with it names that PD, plus what it adds: a thread domain, under which
 * the work queues of QPs and SRQs, and CQs, take no lock, and the
 * application's allocator, which then provides the memory of the
 * provider's QP, SRQ and CQ objects (the rings themselves are the
 * kernel's, mapped).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vroce.h"

struct ibv_td *vroce_alloc_td(struct ibv_context *ibctx,
			      struct ibv_td_init_attr *attr)
{
	struct vroce_td *td;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td) {
		errno = ENOMEM;
		return NULL;
	}
	td->ibv_td.context = ibctx;
	return &td->ibv_td;
}

/* EBUSY while a parent domain holds the thread domain. */
int vroce_dealloc_td(struct ibv_td *ibtd)
{
	struct vroce_td *td = to_vtd(ibtd);

	if (__atomic_load_n(&td->users, __ATOMIC_ACQUIRE))
		return EBUSY;
	free(td);
	return 0;
}

struct ibv_pd *vroce_alloc_parent_domain(struct ibv_context *ibctx,
					 struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	bool allocators = attr->comp_mask &
			  IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	struct vroce_pd *pd, *prot;

	if (attr->comp_mask & ~known) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* A parent domain extends a PD of this context, not another one. */
	if (!attr->pd || attr->pd->context != ibctx ||
	    to_vpd(attr->pd)->protection ||
	    (attr->td && attr->td->context != ibctx) ||
	    (allocators && (!attr->alloc || !attr->free))) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	prot = to_vpd(attr->pd);
	pd->ibv_pd.context = ibctx;
	pd->ibv_pd.handle = prot->ibv_pd.handle;
	pd->pdn = prot->pdn;
	pd->protection = prot;
	if (attr->td) {
		pd->td = to_vtd(attr->td);
		__atomic_add_fetch(&pd->td->users, 1, __ATOMIC_ACQ_REL);
	}
	if (allocators) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	__atomic_add_fetch(&prot->users, 1, __ATOMIC_ACQ_REL);
	return &pd->ibv_pd;
}

/*
 * ibv_dealloc_pd() of a parent domain: nothing of it is in the kernel.
 * EBUSY while a QP or SRQ made with it exists.
 */
int vroce_dealloc_parent_domain(struct vroce_pd *pd)
{
	if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE))
		return EBUSY;
	if (pd->td)
		__atomic_sub_fetch(&pd->td->users, 1, __ATOMIC_ACQ_REL);
	__atomic_sub_fetch(&pd->protection->users, 1, __ATOMIC_ACQ_REL);
	free(pd);
	return 0;
}

/*
 * Zeroed memory of @size for an object of resource @type made with
 * @ibpd (NULL for none, as a CQ's): from the parent domain's allocator if
 * it has one that does not defer to the default (*@custom then true),
 * else from calloc().
 */
void *vroce_pd_zalloc(struct ibv_pd *ibpd, size_t size, uint64_t type,
		      bool *custom)
{
	struct vroce_pd *pd = ibpd ? to_vpd(ibpd) : NULL;
	void *p;

	*custom = false;
	if (pd && pd->alloc) {
		p = pd->alloc(ibpd, pd->pd_context, size,
			      _Alignof(max_align_t), type);
		if (p != IBV_ALLOCATOR_USE_DEFAULT) {
			/* Zeroing is the callback's duty; not trusted to it. */
			if (p)
				memset(p, 0, size);
			*custom = true;
			return p;
		}
	}
	return calloc(1, size);
}

/*
 * A QP, SRQ or CQ made with parent domain @ibpd holds it (vroce_pd_put()),
 * so that ibv_dealloc_pd() of the parent domain says EBUSY meanwhile.
 */
void vroce_pd_get(struct ibv_pd *ibpd)
{
	struct vroce_pd *pd = ibpd ? to_vpd(ibpd) : NULL;

	if (pd && pd->protection)
		__atomic_add_fetch(&pd->users, 1, __ATOMIC_ACQ_REL);
}

void vroce_pd_put(struct ibv_pd *ibpd)
{
	struct vroce_pd *pd = ibpd ? to_vpd(ibpd) : NULL;

	if (pd && pd->protection)
		__atomic_sub_fetch(&pd->users, 1, __ATOMIC_ACQ_REL);
}

/* Gives back what vroce_pd_zalloc() returned. */
void vroce_pd_free(struct ibv_pd *ibpd, void *p, uint64_t type, bool custom)
{
	if (custom)
		to_vpd(ibpd)->free(ibpd, to_vpd(ibpd)->pd_context, p, type);
	else
		free(p);
}
