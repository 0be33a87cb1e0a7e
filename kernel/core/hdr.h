/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * InfiniBand transport headers as carried by RoCEv2 (IBTA vol 1, ch. 9
 * and annex A17): the Base Transport Header and every extension header a
 * RC, UC or UD packet can carry.
 *
 * Each header has a decoded form (host-order fields in a struct) and a
 * pair of functions:
 *
 *   vroce_X_pack(h, buf, len)  writes the header to buf; returns its length
 *                              in bytes, VROCE_ENOSPC when len is too small
 *                              or VROCE_EINVAL when a field does not fit.
 *   vroce_X_parse(h, buf, len) reads the header from buf; returns its
 *                              length, or VROCE_ESHORT (and leaves h
 *                              untouched) when len is too small.
 *
 * Neither ever touches a byte past buf + len. Reserved bits are written
 * as zero and ignored on parse.
 */
#ifndef VROCE_CORE_HDR_H
#define VROCE_CORE_HDR_H

#include "types.h"

/* Header sizes in bytes. */
#define VROCE_BTH_LEN		12
#define VROCE_RETH_LEN		16
#define VROCE_AETH_LEN		4
#define VROCE_ATMETH_LEN	28
#define VROCE_ATMACK_LEN	8
#define VROCE_IMMDT_LEN		4
#define VROCE_IETH_LEN		4
#define VROCE_DETH_LEN		8
#define VROCE_XRCETH_LEN	4
#define VROCE_CNP_RSVD_LEN	16	/* reserved bytes after a CNP's BTH */
#define VROCE_ICRC_LEN		4

#define VROCE_QPN_MASK		0xffffffu	/* QP numbers are 24 bits */
#define VROCE_MSN_MASK		0xffffffu	/* so are MSNs */
#define VROCE_DEFAULT_PKEY	0xffffu

/*
 * Base Transport Header, 12 bytes:
 *
 *   byte 0      OpCode
 *   byte 1      SE:1 M:1 PadCnt:2 TVer:4
 *   bytes 2-3   P_Key
 *   byte 4      F:1 B:1 reserved:6    (FECN/BECN; reserved in RoCEv2
 *                                      except B, set in a CNP; the whole
 *                                      byte is masked out of the ICRC)
 *   bytes 5-7   DestQP
 *   byte 8      A:1 reserved:7
 *   bytes 9-11  PSN
 */
struct vroce_bth {
	vr_u8 opcode;
	vr_bool se;		/* solicited event */
	vr_bool mig;		/* migration state */
	vr_u8 pad;		/* pad count, 0..3 */
	vr_u8 tver;		/* transport version, 0..15 (must be 0) */
	vr_u16 pkey;
	vr_bool fecn;
	vr_bool becn;
	vr_u32 dqpn;		/* 24 bits */
	vr_bool ackreq;
	vr_u32 psn;		/* 24 bits */
};

/* RDMA Extended Transport Header, 16 bytes: VA, R_Key, DMA length. */
struct vroce_reth {
	vr_u64 va;
	vr_u32 rkey;
	vr_u32 dma_len;
};

/*
 * ACK Extended Transport Header, 4 bytes: syndrome, then a 24-bit MSN.
 * aeth.h builds and decodes syndromes.
 */
struct vroce_aeth {
	vr_u8 syndrome;
	vr_u32 msn;		/* 24 bits */
};

/* Atomic Extended Transport Header, 28 bytes. */
struct vroce_atmeth {
	vr_u64 va;
	vr_u32 rkey;
	vr_u64 swap_add;	/* swap value (CmpSwap) or addend (FetchAdd) */
	vr_u64 compare;		/* compare value (CmpSwap only) */
};

/* Atomic Acknowledge Extended Transport Header, 8 bytes. */
struct vroce_atmack {
	vr_u64 orig;		/* original remote data */
};

/* Datagram Extended Transport Header (UD), 8 bytes. */
struct vroce_deth {
	vr_u32 qkey;
	vr_u32 sqpn;		/* source QP, 24 bits */
};

int vroce_bth_pack(const struct vroce_bth *h, void *buf, vr_size len);
int vroce_bth_parse(struct vroce_bth *h, const void *buf, vr_size len);

int vroce_reth_pack(const struct vroce_reth *h, void *buf, vr_size len);
int vroce_reth_parse(struct vroce_reth *h, const void *buf, vr_size len);

int vroce_aeth_pack(const struct vroce_aeth *h, void *buf, vr_size len);
int vroce_aeth_parse(struct vroce_aeth *h, const void *buf, vr_size len);

int vroce_atmeth_pack(const struct vroce_atmeth *h, void *buf, vr_size len);
int vroce_atmeth_parse(struct vroce_atmeth *h, const void *buf,
		       vr_size len);

int vroce_atmack_pack(const struct vroce_atmack *h, void *buf, vr_size len);
int vroce_atmack_parse(struct vroce_atmack *h, const void *buf,
		       vr_size len);

int vroce_deth_pack(const struct vroce_deth *h, void *buf, vr_size len);
int vroce_deth_parse(struct vroce_deth *h, const void *buf, vr_size len);

/*
 * Immediate Data (ImmDt) and Invalidate ETH (IETH, an R_Key) are a single
 * big-endian 32-bit word each. The value is that word as a number: a verbs
 * __be32 imm_data is cpu_to_be32() of it.
 */
int vroce_immdt_pack(vr_u32 imm, void *buf, vr_size len);
int vroce_immdt_parse(vr_u32 *imm, const void *buf, vr_size len);

int vroce_ieth_pack(vr_u32 rkey, void *buf, vr_size len);
int vroce_ieth_parse(vr_u32 *rkey, const void *buf, vr_size len);

/*
 * XRC Extended Transport Header, 4 bytes: 8 reserved bits, then the
 * 24-bit number of the XRC SRQ the request is for.
 */
int vroce_xrceth_pack(vr_u32 srqn, void *buf, vr_size len);
int vroce_xrceth_parse(vr_u32 *srqn, const void *buf, vr_size len);

#endif /* VROCE_CORE_HDR_H */
