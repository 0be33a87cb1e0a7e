/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The limits vroce reports in query_device and query_port, in one place.
 * Every object type is counted against its limit when it is created.
 *
 * Copyright (c) 2026 the vroce developers
 */
#ifndef VROCE_LIMITS_H
#define VROCE_LIMITS_H

#define VROCE_VENDOR_ID		0xffffff	/* no IEEE OUI of our own */
#define VROCE_VENDOR_PART_ID	0x7652		/* "vR" */
#define VROCE_HW_VER		1
#define VROCE_FW_VER_MAJOR	0
#define VROCE_FW_VER_MINOR	1

#define VROCE_MAX_PD		0x10000
#define VROCE_MAX_QP		0x4000
#define VROCE_MAX_QP_WR		0x4000
#define VROCE_MAX_SGE		16
#define VROCE_MAX_SGE_RD	16
#define VROCE_MAX_INLINE	256
#define VROCE_MAX_CQ		0x4000
#define VROCE_MAX_CQE		0xffff
#define VROCE_MAX_MR		0x10000
#define VROCE_MAX_MW		0x10000
#define VROCE_MAX_MR_SIZE	(1ULL << 40)
#define VROCE_MAX_FRMR_PAGES	512
/* Device memory (dm.c): kernel memory the process maps, per allocation */
#define VROCE_MAX_DM_SIZE	(4U << 20)
#define VROCE_MAX_DM		1024
#define VROCE_MAX_AH		0x10000
#define VROCE_MAX_SRQ		0x2000
#define VROCE_MAX_SRQ_WR	0x4000
#define VROCE_MAX_SRQ_SGE	16
#define VROCE_MAX_QP_RD_ATOM	128
#define VROCE_MAX_RES_RD_ATOM	(VROCE_MAX_QP * VROCE_MAX_QP_RD_ATOM)
/* Answers that may wait behind unsent READ responses, per QP. */
#define VROCE_RESP_LATER_MAX	(2 * VROCE_MAX_QP_RD_ATOM)
/* UD multicast groups, QPs per group, attachments of the device (mcast.c) */
#define VROCE_MAX_MCAST_GRP	1024
#define VROCE_MAX_MCAST_QP_ATTACH	64
#define VROCE_MAX_TOTAL_MCAST_QP_ATTACH	8192
#define VROCE_MAX_PKEYS		1
#define VROCE_GID_TBL_LEN	1024
#define VROCE_MAX_MSG_SZ	0x80000000U
/* The CQE timestamps' clock (hca_core_clock, in kHz): nanoseconds. */
#define VROCE_CLOCK_KHZ		1000000

#endif /* VROCE_LIMITS_H */
