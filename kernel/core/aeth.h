/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * AETH syndromes (IBTA vol 1, 9.7.5.2.4).
 *
 * The syndrome byte is R:1 Type:2 Value:5. The reserved top bit is sent as
 * zero and ignored on receive.
 *
 *   type 0  ACK       value = credit count (0x1f: invalid, i.e. none)
 *   type 1  RNR NAK   value = RNR timer code (see vroce_rnr_timer_usecs)
 *   type 2  reserved
 *   type 3  NAK       value = NAK code below (5..31 reserved)
 */
#ifndef VROCE_CORE_AETH_H
#define VROCE_CORE_AETH_H

#include "types.h"

enum vroce_aeth_type {
	VROCE_AETH_ACK		= 0,
	VROCE_AETH_RNR_NAK	= 1,
	VROCE_AETH_RSVD		= 2,
	VROCE_AETH_NAK		= 3,
};

enum vroce_nak_code {
	VROCE_NAK_PSN_SEQ_ERR		= 0,
	VROCE_NAK_INVALID_REQ		= 1,
	VROCE_NAK_REMOTE_ACCESS_ERR	= 2,
	VROCE_NAK_REMOTE_OP_ERR		= 3,
	VROCE_NAK_INVALID_RD_REQ	= 4,
};

#define VROCE_AETH_VALUE_MASK		0x1f
#define VROCE_AETH_TYPE_SHIFT		5
#define VROCE_AETH_CREDIT_INVALID	0x1f
#define VROCE_RNR_TIMER_MAX		0x1f

/* Syndrome of an ACK with @credit (0..31); VROCE_EINVAL if out of range. */
static inline int vroce_aeth_syn_ack(unsigned int credit)
{
	if (credit > VROCE_AETH_VALUE_MASK)
		return VROCE_EINVAL;
	return VROCE_AETH_ACK << VROCE_AETH_TYPE_SHIFT | credit;
}

/* Syndrome of an RNR NAK with the 5-bit @timer code. */
static inline int vroce_aeth_syn_rnr_nak(unsigned int timer)
{
	if (timer > VROCE_RNR_TIMER_MAX)
		return VROCE_EINVAL;
	return VROCE_AETH_RNR_NAK << VROCE_AETH_TYPE_SHIFT | timer;
}

/* Syndrome of a NAK with @code (enum vroce_nak_code). */
static inline int vroce_aeth_syn_nak(unsigned int code)
{
	if (code > VROCE_NAK_INVALID_RD_REQ)
		return VROCE_EINVAL;
	return VROCE_AETH_NAK << VROCE_AETH_TYPE_SHIFT | code;
}

/* Decode: enum vroce_aeth_type of a syndrome. */
static inline enum vroce_aeth_type vroce_aeth_syn_type(vr_u8 syn)
{
	return (enum vroce_aeth_type)((syn >> VROCE_AETH_TYPE_SHIFT) & 0x3);
}

/* Decode: the 5-bit value (credit, timer or NAK code) of a syndrome. */
static inline unsigned int vroce_aeth_syn_value(vr_u8 syn)
{
	return syn & VROCE_AETH_VALUE_MASK;
}

/*
 * RNR NAK timer codes (IBTA table 45): the minimum time the requester waits
 * before retrying. Code 0 is the longest, 655.36 ms; codes 1..31 grow from
 * 0.01 ms to 491.52 ms.
 *
 * vroce_rnr_timer_usecs() gives the delay of a code in microseconds (0 for
 * a code above 31). vroce_rnr_timer_from_usecs() gives the code of the
 * shortest delay that is at least @usecs (0, the longest, when none is).
 */
vr_u32 vroce_rnr_timer_usecs(unsigned int timer);
unsigned int vroce_rnr_timer_from_usecs(vr_u32 usecs);

#endif /* VROCE_CORE_AETH_H */
