/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * BTH opcodes (IBTA vol 1, 9.2.1 table 38) and what each one implies.
 *
 * The top 3 bits of an opcode name the transport, the low 5 the operation.
 * We know every RC, UC and XRC opcode, UD SEND_ONLY[_WITH_IMMEDIATE] and
 * the RoCEv2 Congestion Notification Packet (CNP, 0x81). RD opcodes and
 * the reserved codes are unknown: vroce_opcode_info() returns VR_NULL for
 * them. An XRC opcode is its RC one with the XRC transport bits (0xa0 |
 * the operation); every XRC request carries an XRCETH after the BTH.
 */
#ifndef VROCE_CORE_OPCODE_H
#define VROCE_CORE_OPCODE_H

#include "types.h"

enum vroce_transport {
	VROCE_TRANSPORT_RC	= 0x00,
	VROCE_TRANSPORT_UC	= 0x20,
	VROCE_TRANSPORT_RD	= 0x40,
	VROCE_TRANSPORT_UD	= 0x60,
	VROCE_TRANSPORT_CNP	= 0x80,
	VROCE_TRANSPORT_XRC	= 0xa0,
};

#define VROCE_TRANSPORT_MASK	0xe0

enum vroce_opcode {
	VROCE_OP_RC_SEND_FIRST			= 0x00,
	VROCE_OP_RC_SEND_MIDDLE			= 0x01,
	VROCE_OP_RC_SEND_LAST			= 0x02,
	VROCE_OP_RC_SEND_LAST_IMM		= 0x03,
	VROCE_OP_RC_SEND_ONLY			= 0x04,
	VROCE_OP_RC_SEND_ONLY_IMM		= 0x05,
	VROCE_OP_RC_RDMA_WRITE_FIRST		= 0x06,
	VROCE_OP_RC_RDMA_WRITE_MIDDLE		= 0x07,
	VROCE_OP_RC_RDMA_WRITE_LAST		= 0x08,
	VROCE_OP_RC_RDMA_WRITE_LAST_IMM		= 0x09,
	VROCE_OP_RC_RDMA_WRITE_ONLY		= 0x0a,
	VROCE_OP_RC_RDMA_WRITE_ONLY_IMM		= 0x0b,
	VROCE_OP_RC_RDMA_READ_REQ		= 0x0c,
	VROCE_OP_RC_RDMA_READ_RESP_FIRST	= 0x0d,
	VROCE_OP_RC_RDMA_READ_RESP_MIDDLE	= 0x0e,
	VROCE_OP_RC_RDMA_READ_RESP_LAST		= 0x0f,
	VROCE_OP_RC_RDMA_READ_RESP_ONLY		= 0x10,
	VROCE_OP_RC_ACK				= 0x11,
	VROCE_OP_RC_ATOMIC_ACK			= 0x12,
	VROCE_OP_RC_CMP_SWAP			= 0x13,
	VROCE_OP_RC_FETCH_ADD			= 0x14,
	VROCE_OP_RC_SEND_LAST_INV		= 0x16,
	VROCE_OP_RC_SEND_ONLY_INV		= 0x17,
	VROCE_OP_RC_ATOMIC_WRITE		= 0x1d,	/* IBTA 1.5 */

	VROCE_OP_UC_SEND_FIRST			= 0x20,
	VROCE_OP_UC_SEND_MIDDLE			= 0x21,
	VROCE_OP_UC_SEND_LAST			= 0x22,
	VROCE_OP_UC_SEND_LAST_IMM		= 0x23,
	VROCE_OP_UC_SEND_ONLY			= 0x24,
	VROCE_OP_UC_SEND_ONLY_IMM		= 0x25,
	VROCE_OP_UC_RDMA_WRITE_FIRST		= 0x26,
	VROCE_OP_UC_RDMA_WRITE_MIDDLE		= 0x27,
	VROCE_OP_UC_RDMA_WRITE_LAST		= 0x28,
	VROCE_OP_UC_RDMA_WRITE_LAST_IMM		= 0x29,
	VROCE_OP_UC_RDMA_WRITE_ONLY		= 0x2a,
	VROCE_OP_UC_RDMA_WRITE_ONLY_IMM		= 0x2b,

	VROCE_OP_UD_SEND_ONLY			= 0x64,
	VROCE_OP_UD_SEND_ONLY_IMM		= 0x65,

	VROCE_OP_CNP				= 0x81,

	VROCE_OP_XRC_SEND_FIRST			= 0xa0,
	VROCE_OP_XRC_ATOMIC_WRITE		= 0xbd,	/* IBTA 1.5 */
};

/*
 * Extension headers that may follow the BTH. The bits are in wire order:
 * when several are present they appear in increasing bit order, so the
 * offset of one is the BTH plus the sizes of the present lower bits.
 */
enum vroce_hdr {
	VROCE_HDR_DETH		= 1 << 0,	/*  8 bytes */
	VROCE_HDR_XRCETH	= 1 << 1,	/*  4 */
	VROCE_HDR_RETH		= 1 << 2,	/* 16 */
	VROCE_HDR_ATMETH	= 1 << 3,	/* 28 */
	VROCE_HDR_AETH		= 1 << 4,	/*  4 */
	VROCE_HDR_ATMACK	= 1 << 5,	/*  8 */
	VROCE_HDR_IMMDT		= 1 << 6,	/*  4 */
	VROCE_HDR_IETH		= 1 << 7,	/*  4 */
	VROCE_HDR_CNP_RSVD	= 1 << 8,	/* 16 reserved bytes of a CNP */
};

#define VROCE_HDR_ALL		0x1ff

/*
 * Properties of an opcode.
 *
 * Exactly one "kind" flag is set: SEND, WRITE, READ (the request),
 * READ_RESP, ACK, ATOMIC (the request), ATOMIC_ACK, CNP or ATOMIC_WRITE
 * (IBTA 1.5: a RETH and 8 bytes of payload, stored in one piece, answered
 * by an ACK).
 *
 * REQ / RESP: sent by the requester / by the responder (a CNP is neither).
 * PAYLOAD:    may carry payload after the headers.
 * IMM, INV:   carries ImmDt / IETH.
 * SOLICIT:    the BTH SE bit is meaningful: last (or only) packet of a
 *             message that consumes a receive WQE (SEND LAST/ONLY, RDMA
 *             WRITE LAST/ONLY with immediate).
 * NEEDS_ACK:  an RC request the responder answers (with an ACK, a read
 *             response or an atomic ACK).
 */
enum vroce_opf {
	VROCE_OPF_SEND		= 1 << 0,
	VROCE_OPF_WRITE		= 1 << 1,
	VROCE_OPF_READ		= 1 << 2,
	VROCE_OPF_READ_RESP	= 1 << 3,
	VROCE_OPF_ACK		= 1 << 4,
	VROCE_OPF_ATOMIC	= 1 << 5,
	VROCE_OPF_ATOMIC_ACK	= 1 << 6,
	VROCE_OPF_CNP		= 1 << 7,
	VROCE_OPF_REQ		= 1 << 8,
	VROCE_OPF_RESP		= 1 << 9,
	VROCE_OPF_PAYLOAD	= 1 << 10,
	VROCE_OPF_IMM		= 1 << 11,
	VROCE_OPF_INV		= 1 << 12,
	VROCE_OPF_SOLICIT	= 1 << 13,
	VROCE_OPF_NEEDS_ACK	= 1 << 14,
	VROCE_OPF_ATOMIC_WRITE	= 1 << 15,
};

#define VROCE_OPF_KINDS	(VROCE_OPF_SEND | VROCE_OPF_WRITE | VROCE_OPF_READ | \
			 VROCE_OPF_READ_RESP | VROCE_OPF_ACK |		     \
			 VROCE_OPF_ATOMIC | VROCE_OPF_ATOMIC_ACK |	     \
			 VROCE_OPF_CNP | VROCE_OPF_ATOMIC_WRITE)

/* Position of a packet in its message. Single-packet operations: ONLY. */
enum vroce_op_pos {
	VROCE_POS_FIRST		= 1,
	VROCE_POS_MIDDLE	= 2,
	VROCE_POS_LAST		= 3,
	VROCE_POS_ONLY		= 4,
};

struct vroce_opcode_info {
	const char *name;	/* e.g. "RC_SEND_ONLY" */
	vr_u16 flags;		/* enum vroce_opf */
	vr_u16 hdrs;		/* enum vroce_hdr: extension headers */
	vr_u8 hdr_len;		/* BTH plus extension headers, bytes */
	vr_u8 transport;	/* enum vroce_transport */
	vr_u8 pos;		/* enum vroce_op_pos */
};

/* Info of @opcode, or VR_NULL if we do not know it. */
const struct vroce_opcode_info *vroce_opcode_info(vr_u8 opcode);

/* Name of @opcode, "UNKNOWN" if we do not know it. Never VR_NULL. */
const char *vroce_opcode_name(vr_u8 opcode);

/* Size in bytes of one extension header (a single enum vroce_hdr bit). */
unsigned int vroce_hdr_size(unsigned int hdr);

/* Total size in bytes of the extension headers in @hdrs. */
unsigned int vroce_hdrs_size(unsigned int hdrs);

/*
 * Offset from the start of the BTH of extension header @hdr in a packet
 * with opcode @info; 0 if that opcode does not carry @hdr.
 */
unsigned int vroce_hdr_offset(const struct vroce_opcode_info *info,
			      unsigned int hdr);

#endif /* VROCE_CORE_OPCODE_H */
