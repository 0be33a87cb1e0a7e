// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * The opcode table. Header lengths are written out by hand from the spec
 * (not summed from the masks) so that the unit tests can cross-check them.
 */

#include "opcode.h"
#include "hdr.h"

#define OP(nm, tr, ps, hd, len, fl)					\
	{ .name = nm, .transport = VROCE_TRANSPORT_##tr,		\
	  .pos = VROCE_POS_##ps, .hdrs = hd, .hdr_len = len, .flags = fl }

#define BTH		VROCE_BTH_LEN
#define RETH		VROCE_RETH_LEN
#define AETH		VROCE_AETH_LEN
#define ATMETH		VROCE_ATMETH_LEN
#define ATMACK		VROCE_ATMACK_LEN
#define IMMDT		VROCE_IMMDT_LEN
#define IETH		VROCE_IETH_LEN
#define DETH		VROCE_DETH_LEN

#define H_RETH		VROCE_HDR_RETH
#define H_AETH		VROCE_HDR_AETH
#define H_ATMETH	VROCE_HDR_ATMETH
#define H_ATMACK	VROCE_HDR_ATMACK
#define H_IMMDT		VROCE_HDR_IMMDT
#define H_IETH		VROCE_HDR_IETH
#define H_DETH		VROCE_HDR_DETH

/* Unreliable requests, then their reliable (acknowledged) versions. */
#define U_SEND		(VROCE_OPF_SEND | VROCE_OPF_REQ | VROCE_OPF_PAYLOAD)
#define U_SEND_END	(U_SEND | VROCE_OPF_SOLICIT)
#define U_SEND_IMM	(U_SEND_END | VROCE_OPF_IMM)
#define U_WRITE		(VROCE_OPF_WRITE | VROCE_OPF_REQ | VROCE_OPF_PAYLOAD)
#define U_WRITE_IMM	(U_WRITE | VROCE_OPF_IMM | VROCE_OPF_SOLICIT)

#define R_SEND		(U_SEND | VROCE_OPF_NEEDS_ACK)
#define R_SEND_END	(U_SEND_END | VROCE_OPF_NEEDS_ACK)
#define R_SEND_IMM	(U_SEND_IMM | VROCE_OPF_NEEDS_ACK)
#define R_SEND_INV	(R_SEND_END | VROCE_OPF_INV)
#define R_WRITE		(U_WRITE | VROCE_OPF_NEEDS_ACK)
#define R_WRITE_IMM	(U_WRITE_IMM | VROCE_OPF_NEEDS_ACK)
#define R_READ		(VROCE_OPF_READ | VROCE_OPF_REQ | VROCE_OPF_NEEDS_ACK)
#define R_ATOMIC	(VROCE_OPF_ATOMIC | VROCE_OPF_REQ | VROCE_OPF_NEEDS_ACK)
#define R_READ_RESP	(VROCE_OPF_READ_RESP | VROCE_OPF_RESP | \
			 VROCE_OPF_PAYLOAD)
#define R_ACK		(VROCE_OPF_ACK | VROCE_OPF_RESP)
#define R_ATOMIC_ACK	(VROCE_OPF_ATOMIC_ACK | VROCE_OPF_RESP)

static const struct vroce_opcode_info opcodes[256] = {
	/* RC */
	[VROCE_OP_RC_SEND_FIRST] =
		OP("RC_SEND_FIRST", RC, FIRST, 0, BTH, R_SEND),
	[VROCE_OP_RC_SEND_MIDDLE] =
		OP("RC_SEND_MIDDLE", RC, MIDDLE, 0, BTH, R_SEND),
	[VROCE_OP_RC_SEND_LAST] =
		OP("RC_SEND_LAST", RC, LAST, 0, BTH, R_SEND_END),
	[VROCE_OP_RC_SEND_LAST_IMM] =
		OP("RC_SEND_LAST_WITH_IMMEDIATE", RC, LAST,
		   H_IMMDT, BTH + IMMDT, R_SEND_IMM),
	[VROCE_OP_RC_SEND_ONLY] =
		OP("RC_SEND_ONLY", RC, ONLY, 0, BTH, R_SEND_END),
	[VROCE_OP_RC_SEND_ONLY_IMM] =
		OP("RC_SEND_ONLY_WITH_IMMEDIATE", RC, ONLY,
		   H_IMMDT, BTH + IMMDT, R_SEND_IMM),
	[VROCE_OP_RC_RDMA_WRITE_FIRST] =
		OP("RC_RDMA_WRITE_FIRST", RC, FIRST,
		   H_RETH, BTH + RETH, R_WRITE),
	[VROCE_OP_RC_RDMA_WRITE_MIDDLE] =
		OP("RC_RDMA_WRITE_MIDDLE", RC, MIDDLE, 0, BTH, R_WRITE),
	[VROCE_OP_RC_RDMA_WRITE_LAST] =
		OP("RC_RDMA_WRITE_LAST", RC, LAST, 0, BTH, R_WRITE),
	[VROCE_OP_RC_RDMA_WRITE_LAST_IMM] =
		OP("RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", RC, LAST,
		   H_IMMDT, BTH + IMMDT, R_WRITE_IMM),
	[VROCE_OP_RC_RDMA_WRITE_ONLY] =
		OP("RC_RDMA_WRITE_ONLY", RC, ONLY,
		   H_RETH, BTH + RETH, R_WRITE),
	[VROCE_OP_RC_RDMA_WRITE_ONLY_IMM] =
		OP("RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", RC, ONLY,
		   H_RETH | H_IMMDT, BTH + RETH + IMMDT, R_WRITE_IMM),
	[VROCE_OP_RC_RDMA_READ_REQ] =
		OP("RC_RDMA_READ_REQUEST", RC, ONLY,
		   H_RETH, BTH + RETH, R_READ),
	[VROCE_OP_RC_RDMA_READ_RESP_FIRST] =
		OP("RC_RDMA_READ_RESPONSE_FIRST", RC, FIRST,
		   H_AETH, BTH + AETH, R_READ_RESP),
	[VROCE_OP_RC_RDMA_READ_RESP_MIDDLE] =
		OP("RC_RDMA_READ_RESPONSE_MIDDLE", RC, MIDDLE,
		   0, BTH, R_READ_RESP),
	[VROCE_OP_RC_RDMA_READ_RESP_LAST] =
		OP("RC_RDMA_READ_RESPONSE_LAST", RC, LAST,
		   H_AETH, BTH + AETH, R_READ_RESP),
	[VROCE_OP_RC_RDMA_READ_RESP_ONLY] =
		OP("RC_RDMA_READ_RESPONSE_ONLY", RC, ONLY,
		   H_AETH, BTH + AETH, R_READ_RESP),
	[VROCE_OP_RC_ACK] =
		OP("RC_ACKNOWLEDGE", RC, ONLY, H_AETH, BTH + AETH, R_ACK),
	[VROCE_OP_RC_ATOMIC_ACK] =
		OP("RC_ATOMIC_ACKNOWLEDGE", RC, ONLY,
		   H_AETH | H_ATMACK, BTH + AETH + ATMACK, R_ATOMIC_ACK),
	[VROCE_OP_RC_CMP_SWAP] =
		OP("RC_COMPARE_SWAP", RC, ONLY,
		   H_ATMETH, BTH + ATMETH, R_ATOMIC),
	[VROCE_OP_RC_FETCH_ADD] =
		OP("RC_FETCH_ADD", RC, ONLY,
		   H_ATMETH, BTH + ATMETH, R_ATOMIC),
	[VROCE_OP_RC_SEND_LAST_INV] =
		OP("RC_SEND_LAST_WITH_INVALIDATE", RC, LAST,
		   H_IETH, BTH + IETH, R_SEND_INV),
	[VROCE_OP_RC_SEND_ONLY_INV] =
		OP("RC_SEND_ONLY_WITH_INVALIDATE", RC, ONLY,
		   H_IETH, BTH + IETH, R_SEND_INV),

	/* UC */
	[VROCE_OP_UC_SEND_FIRST] =
		OP("UC_SEND_FIRST", UC, FIRST, 0, BTH, U_SEND),
	[VROCE_OP_UC_SEND_MIDDLE] =
		OP("UC_SEND_MIDDLE", UC, MIDDLE, 0, BTH, U_SEND),
	[VROCE_OP_UC_SEND_LAST] =
		OP("UC_SEND_LAST", UC, LAST, 0, BTH, U_SEND_END),
	[VROCE_OP_UC_SEND_LAST_IMM] =
		OP("UC_SEND_LAST_WITH_IMMEDIATE", UC, LAST,
		   H_IMMDT, BTH + IMMDT, U_SEND_IMM),
	[VROCE_OP_UC_SEND_ONLY] =
		OP("UC_SEND_ONLY", UC, ONLY, 0, BTH, U_SEND_END),
	[VROCE_OP_UC_SEND_ONLY_IMM] =
		OP("UC_SEND_ONLY_WITH_IMMEDIATE", UC, ONLY,
		   H_IMMDT, BTH + IMMDT, U_SEND_IMM),
	[VROCE_OP_UC_RDMA_WRITE_FIRST] =
		OP("UC_RDMA_WRITE_FIRST", UC, FIRST,
		   H_RETH, BTH + RETH, U_WRITE),
	[VROCE_OP_UC_RDMA_WRITE_MIDDLE] =
		OP("UC_RDMA_WRITE_MIDDLE", UC, MIDDLE, 0, BTH, U_WRITE),
	[VROCE_OP_UC_RDMA_WRITE_LAST] =
		OP("UC_RDMA_WRITE_LAST", UC, LAST, 0, BTH, U_WRITE),
	[VROCE_OP_UC_RDMA_WRITE_LAST_IMM] =
		OP("UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", UC, LAST,
		   H_IMMDT, BTH + IMMDT, U_WRITE_IMM),
	[VROCE_OP_UC_RDMA_WRITE_ONLY] =
		OP("UC_RDMA_WRITE_ONLY", UC, ONLY,
		   H_RETH, BTH + RETH, U_WRITE),
	[VROCE_OP_UC_RDMA_WRITE_ONLY_IMM] =
		OP("UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", UC, ONLY,
		   H_RETH | H_IMMDT, BTH + RETH + IMMDT, U_WRITE_IMM),

	/* UD */
	[VROCE_OP_UD_SEND_ONLY] =
		OP("UD_SEND_ONLY", UD, ONLY,
		   H_DETH, BTH + DETH, U_SEND_END),
	[VROCE_OP_UD_SEND_ONLY_IMM] =
		OP("UD_SEND_ONLY_WITH_IMMEDIATE", UD, ONLY,
		   H_DETH | H_IMMDT, BTH + DETH + IMMDT, U_SEND_IMM),

	/* RoCEv2 congestion notification */
	[VROCE_OP_CNP] =
		OP("CNP", CNP, ONLY, VROCE_HDR_CNP_RSVD,
		   BTH + VROCE_CNP_RSVD_LEN, VROCE_OPF_CNP),
};

const struct vroce_opcode_info *vroce_opcode_info(vr_u8 opcode)
{
	const struct vroce_opcode_info *info = &opcodes[opcode];

	return info->name ? info : VR_NULL;
}

const char *vroce_opcode_name(vr_u8 opcode)
{
	const struct vroce_opcode_info *info = vroce_opcode_info(opcode);

	return info ? info->name : "UNKNOWN";
}

unsigned int vroce_hdr_size(unsigned int hdr)
{
	switch (hdr) {
	case VROCE_HDR_DETH:
		return VROCE_DETH_LEN;
	case VROCE_HDR_RETH:
		return VROCE_RETH_LEN;
	case VROCE_HDR_ATMETH:
		return VROCE_ATMETH_LEN;
	case VROCE_HDR_AETH:
		return VROCE_AETH_LEN;
	case VROCE_HDR_ATMACK:
		return VROCE_ATMACK_LEN;
	case VROCE_HDR_IMMDT:
		return VROCE_IMMDT_LEN;
	case VROCE_HDR_IETH:
		return VROCE_IETH_LEN;
	case VROCE_HDR_CNP_RSVD:
		return VROCE_CNP_RSVD_LEN;
	default:
		return 0;
	}
}

unsigned int vroce_hdrs_size(unsigned int hdrs)
{
	unsigned int bit, size = 0;

	for (bit = 1; bit <= VROCE_HDR_ALL; bit <<= 1)
		if (hdrs & bit)
			size += vroce_hdr_size(bit);
	return size;
}

unsigned int vroce_hdr_offset(const struct vroce_opcode_info *info,
			      unsigned int hdr)
{
	if (!(info->hdrs & hdr) || vroce_hdr_size(hdr) == 0)
		return 0;
	return VROCE_BTH_LEN + vroce_hdrs_size(info->hdrs & (hdr - 1));
}
