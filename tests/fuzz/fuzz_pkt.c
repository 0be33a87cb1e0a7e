// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * libFuzzer harness of the packet parser of the protocol core
 * (kernel/core): one input is one IP datagram, as a RoCEv2 packet reaches
 * the module's receive path (kernel/rx.c). Built with AddressSanitizer and
 * UBSan, so a read or write past a buffer, undefined arithmetic or a
 * broken invariant checked below stops the run with the input saved.
 *
 * Each input goes through, in the order of the module:
 *
 *   1. vroce_ipudp_parse(): IP and UDP headers (the kernel's IP/UDP stack
 *      stands there in the module; the core parse is what the host tests
 *      and the ICRC use). The datagram is then cut to what the IP and UDP
 *      lengths say, into a buffer of exactly that size: a read past the
 *      packet is a read past the allocation.
 *   2. the pull of vroce_rx_pull(): opcode lookup, BTH and extension
 *      headers present;
 *   3. the ICRC check both ways the module does it: contiguous
 *      (vroce_icrc_verify()) and split, begin over the headers then update
 *      over the payload in pieces (vroce_rx_icrc_ok() on a nonlinear
 *      skb); both must agree;
 *   4. vroce_pkt_parse() on the UDP payload, then every extension header
 *      its opcode carries through vroce_pkt_hdr() and the header parsers,
 *      the payload read as the receive path copies it, the AETH syndrome
 *      decoded.
 *
 * Round trips: every header that parsed is packed again and must give the
 * same bytes (reserved bits aside); the packet with its ICRC regenerated
 * must verify. And the builders: the input's bytes also serve as field
 * values for every pack function (out of range values included) and for a
 * whole packet built the way kernel/packet.c does, wrapped in IPv4 or
 * IPv6 and UDP, given an ICRC, then parsed back field by field.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce.h"

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

/* Every extension header bit, in wire order. */
static const unsigned int ext_hdrs[] = {
	VROCE_HDR_DETH, VROCE_HDR_XRCETH, VROCE_HDR_RETH, VROCE_HDR_ATMETH,
	VROCE_HDR_AETH,
	VROCE_HDR_ATMACK, VROCE_HDR_IMMDT, VROCE_HDR_IETH, VROCE_HDR_CNP_RSVD,
};

#define N_EXT	(sizeof(ext_hdrs) / sizeof(ext_hdrs[0]))

/* A heap copy of exactly @len bytes: ASan faults one byte past it. */
static uint8_t *tight_copy(const void *src, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	CHECK(p);
	if (len)
		memcpy(p, src, len);
	return p;
}

static int is_core_err(int ret)
{
	return ret == VROCE_ESHORT || ret == VROCE_EINVAL ||
	       ret == VROCE_ENOSPC || ret == VROCE_EPROTO ||
	       ret == VROCE_EBADCRC;
}

/* Reads the input as a stream of field values; zeros once it runs out. */
struct fields {
	const uint8_t *p;
	size_t len;
};

static uint64_t take(struct fields *f, unsigned int bytes)
{
	uint64_t v = 0;

	while (bytes--) {
		v <<= 8;
		if (f->len) {
			v |= *f->p++;
			f->len--;
		}
	}
	return v;
}

/* ---- step 1: IP and UDP ---- */

static int check_ipudp(const uint8_t *ip, size_t len, struct vroce_ipudp *iu)
{
	int off = vroce_ipudp_parse(iu, ip, len);

	if (off < 0) {
		CHECK(off == VROCE_ESHORT || off == VROCE_EINVAL ||
		      off == VROCE_EPROTO);
		return off;
	}
	CHECK(iu->ipver == ip[0] >> 4);
	if (iu->ipver == 4) {
		CHECK(iu->ip_hlen == (ip[0] & 0xf) * 4u);
		CHECK(iu->ip_hlen >= VROCE_IPV4_HDR_LEN);
	} else {
		CHECK(iu->ipver == 6 && iu->ip_hlen == VROCE_IPV6_HDR_LEN);
	}
	CHECK(off == iu->ip_hlen + VROCE_UDP_HDR_LEN);
	CHECK(iu->udp_len >= VROCE_UDP_HDR_LEN);
	CHECK((size_t)iu->ip_hlen + iu->udp_len <= len);
	CHECK(iu->sport == (ip[off - 8] << 8 | ip[off - 7]));
	CHECK(iu->dport == (ip[off - 6] << 8 | ip[off - 5]));
	return off;
}

/* ---- step 3: ICRC ---- */

/*
 * The ICRC as vroce_rx_icrc_ok() computes it on a nonlinear skb: begin
 * over the @head bytes from the IP header that are linear, then update
 * over the rest of the UDP payload in pieces of varying size. @ip holds
 * the IP header and a UDP datagram of @udp_len bytes. Returns 1 if the
 * ICRC matches, 0 if not, -1 where the module drops the packet first.
 */
static int split_icrc_ok(const uint8_t *ip, unsigned int ip_hlen,
			 unsigned int udp_len, unsigned int head)
{
	uint32_t crc, pos, end, n, step;
	int off;

	if (udp_len < VROCE_UDP_HDR_LEN + VROCE_BTH_LEN + VROCE_ICRC_LEN)
		return -1;
	off = vroce_icrc_begin(&crc, ip, head);
	if (off < 0)
		return -1;
	CHECK((unsigned int)off == ip_hlen + VROCE_UDP_HDR_LEN +
				   VROCE_BTH_LEN);
	pos = off - ip_hlen;
	end = udp_len - VROCE_ICRC_LEN;
	CHECK(pos <= end);
	step = 1;
	while (pos < end) {
		n = end - pos < step ? end - pos : step;
		crc = vroce_icrc_update(crc, ip + ip_hlen + pos, n);
		pos += n;
		step = step * 3 + 1;	/* 1, 4, 13, 40, ... bytes */
	}
	return vroce_icrc_get(ip + ip_hlen + end) == vroce_icrc_final(crc);
}

static void check_icrc(const uint8_t *in, size_t in_len, uint8_t *dg,
		       const struct vroce_ipudp *iu, unsigned int head)
{
	size_t dg_len = (size_t)iu->ip_hlen + iu->udp_len;
	int computed, verified, split;
	uint32_t icrc;

	computed = vroce_icrc_compute(&icrc, dg, dg_len);
	verified = vroce_icrc_verify(dg, dg_len);
	/* Trailing bytes after the datagram change nothing. */
	CHECK(vroce_icrc_verify(in, in_len) == verified);
	if (computed < 0) {
		CHECK(is_core_err(computed) && verified == computed);
		return;
	}
	CHECK((size_t)computed == dg_len - VROCE_ICRC_LEN);
	CHECK(verified == (vroce_icrc_get(dg + computed) == icrc ?
			   0 : VROCE_EBADCRC));

	split = split_icrc_ok(dg, iu->ip_hlen, iu->udp_len, head);
	CHECK(split == (verified == 0));

	/* Regenerated, the ICRC verifies; the slot is all it changes. */
	CHECK(vroce_icrc_generate(dg, dg_len) == computed);
	CHECK(vroce_icrc_verify(dg, dg_len) == 0);
	CHECK(vroce_icrc_get(dg + computed) == icrc);
	CHECK(memcmp(dg, in, (size_t)computed) == 0);
}

/* ---- step 4: the transport packet ---- */

/* Packs @hdr parsed from @h again and compares with the wire bytes. */
static void repack_ext(unsigned int hdr, const uint8_t *h, unsigned int size)
{
	uint8_t out[VROCE_ATMETH_LEN], want[VROCE_ATMETH_LEN];
	struct vroce_reth reth;
	struct vroce_aeth aeth;
	struct vroce_atmeth atmeth;
	struct vroce_atmack atmack;
	struct vroce_deth deth;
	uint32_t word;
	int ret;

	CHECK(size <= sizeof(out));
	memcpy(want, h, size);
	switch (hdr) {
	case VROCE_HDR_DETH:
		CHECK(vroce_deth_parse(&deth, h, size) == VROCE_DETH_LEN);
		ret = vroce_deth_pack(&deth, out, sizeof(out));
		want[4] = 0;	/* reserved */
		break;
	case VROCE_HDR_XRCETH:
		CHECK(vroce_xrceth_parse(&word, h, size) == VROCE_XRCETH_LEN);
		CHECK(word <= VROCE_QPN_MASK);
		ret = vroce_xrceth_pack(word, out, sizeof(out));
		want[0] = 0;	/* reserved */
		break;
	case VROCE_HDR_RETH:
		CHECK(vroce_reth_parse(&reth, h, size) == VROCE_RETH_LEN);
		ret = vroce_reth_pack(&reth, out, sizeof(out));
		break;
	case VROCE_HDR_ATMETH:
		CHECK(vroce_atmeth_parse(&atmeth, h, size) ==
		      VROCE_ATMETH_LEN);
		ret = vroce_atmeth_pack(&atmeth, out, sizeof(out));
		break;
	case VROCE_HDR_AETH:
		CHECK(vroce_aeth_parse(&aeth, h, size) == VROCE_AETH_LEN);
		CHECK(vroce_aeth_syn_type(aeth.syndrome) <= VROCE_AETH_NAK);
		CHECK(vroce_aeth_syn_value(aeth.syndrome) <=
		      VROCE_AETH_VALUE_MASK);
		/* The completer turns an RNR NAK's value into a delay. */
		CHECK(vroce_rnr_timer_usecs(vroce_aeth_syn_value(
			aeth.syndrome)) <= 655360);
		ret = vroce_aeth_pack(&aeth, out, sizeof(out));
		break;
	case VROCE_HDR_ATMACK:
		CHECK(vroce_atmack_parse(&atmack, h, size) ==
		      VROCE_ATMACK_LEN);
		ret = vroce_atmack_pack(&atmack, out, sizeof(out));
		break;
	case VROCE_HDR_IMMDT:
		CHECK(vroce_immdt_parse(&word, h, size) == VROCE_IMMDT_LEN);
		ret = vroce_immdt_pack(word, out, sizeof(out));
		break;
	case VROCE_HDR_IETH:
		CHECK(vroce_ieth_parse(&word, h, size) == VROCE_IETH_LEN);
		ret = vroce_ieth_pack(word, out, sizeof(out));
		break;
	default:
		return;		/* the CNP's reserved bytes: nothing to parse */
	}
	CHECK(ret == (int)size);
	CHECK(memcmp(out, want, size) == 0);
}

static void check_bth_repack(const struct vroce_bth *bth, const uint8_t *wire)
{
	uint8_t out[VROCE_BTH_LEN], want[VROCE_BTH_LEN];

	memcpy(want, wire, sizeof(want));
	want[4] &= 0xc0;	/* F, B; the rest is reserved */
	want[8] &= 0x80;	/* A; the rest is reserved */
	CHECK(vroce_bth_pack(bth, out, sizeof(out)) == VROCE_BTH_LEN);
	CHECK(memcmp(out, want, sizeof(out)) == 0);
}

/*
 * The UDP payload @bth of @len bytes, exactly allocated. @pulled: the
 * module's vroce_rx_pull() would keep it (known opcode, headers there).
 */
static void check_pkt(const uint8_t *bth, size_t len, int pulled)
{
	const struct vroce_opcode_info *op;
	struct vroce_pkt pkt;
	unsigned int i, off, size, seen = 0;
	const uint8_t *h;
	int ret;

	ret = vroce_pkt_parse(&pkt, bth, len);
	if (ret < 0) {
		CHECK(ret == VROCE_ESHORT || ret == VROCE_EPROTO ||
		      ret == VROCE_EINVAL);
		return;
	}
	/* What the pull drops, the parse refuses as well. */
	CHECK(pulled);
	op = vroce_opcode_info(bth[0]);
	CHECK(op && pkt.op == op);
	CHECK(strcmp(vroce_opcode_name(bth[0]), op->name) == 0);
	CHECK(pkt.bth.opcode == bth[0] && pkt.bth.tver == 0);
	CHECK(pkt.bth.pad <= 3 && pkt.bth.dqpn <= VROCE_QPN_MASK &&
	      pkt.bth.psn <= VROCE_QPN_MASK);
	CHECK(pkt.len == len && len % 4 == 0 && len <= 0xffff);
	CHECK(pkt.hdr_len == op->hdr_len);
	CHECK(pkt.hdr_len == VROCE_BTH_LEN + vroce_hdrs_size(op->hdrs));
	CHECK((size_t)pkt.hdr_len + pkt.paylen + pkt.bth.pad +
	      VROCE_ICRC_LEN == len);
	if (!(op->flags & VROCE_OPF_PAYLOAD))
		CHECK(pkt.paylen == 0 && pkt.bth.pad == 0);
	CHECK(__builtin_popcount(op->flags & VROCE_OPF_KINDS) == 1);
	check_bth_repack(&pkt.bth, bth);

	for (i = 0; i < N_EXT; i++) {
		h = vroce_pkt_hdr(&pkt, bth, ext_hdrs[i]);
		if (!(op->hdrs & ext_hdrs[i])) {
			CHECK(h == NULL);
			continue;
		}
		CHECK(h != NULL);
		off = (unsigned int)(h - bth);
		size = vroce_hdr_size(ext_hdrs[i]);
		/* In wire order, one after the other, inside the headers. */
		CHECK(off == VROCE_BTH_LEN + seen);
		CHECK(off + size <= pkt.hdr_len);
		seen += size;
		repack_ext(ext_hdrs[i], h, size);
	}
	CHECK(VROCE_BTH_LEN + seen == pkt.hdr_len);

	/* The payload, read as the receive path copies it out. */
	(void)vroce_crc32(0, bth + pkt.hdr_len, pkt.paylen);
}

static void fuzz_receive(const uint8_t *in, size_t in_len)
{
	const struct vroce_opcode_info *op;
	struct vroce_ipudp iu;
	unsigned int udp_len, head;
	int off, pulled;
	uint8_t *dg;

	off = check_ipudp(in, in_len, &iu);
	if (off < 0)
		return;
	/* What the IP/UDP stack hands on: the datagram, trimmed. */
	dg = tight_copy(in, (size_t)iu.ip_hlen + iu.udp_len);
	udp_len = iu.udp_len;

	/* vroce_rx_pull(): the BTH, then the headers of its opcode. */
	op = NULL;
	if (udp_len >= VROCE_UDP_HDR_LEN + VROCE_BTH_LEN)
		op = vroce_opcode_info(dg[off]);
	pulled = op && udp_len >= VROCE_UDP_HDR_LEN + op->hdr_len;

	/* Linear part as after the pull: up to the end of the headers. */
	head = iu.ip_hlen + VROCE_UDP_HDR_LEN +
	       (pulled ? op->hdr_len : VROCE_BTH_LEN);
	if (head > (unsigned int)iu.ip_hlen + udp_len)
		head = iu.ip_hlen + udp_len;
	check_icrc(in, in_len, dg, &iu, head);

	check_pkt(dg + off, udp_len - VROCE_UDP_HDR_LEN, pulled);
	free(dg);
}

/* ---- builders ---- */

/* A pack into one byte too few writes nothing and says so. */
#define CHECK_NOSPC(pack, h, size)					\
	do {								\
		uint8_t *small_ = malloc((size) - 1);			\
		CHECK(small_);						\
		CHECK(pack(h, small_, (size) - 1) == VROCE_ENOSPC);	\
		free(small_);						\
	} while (0)

static void build_bth(struct fields *f, uint8_t *buf)
{
	struct vroce_bth in = {}, out = {};
	uint64_t bits = take(f, 2);
	int ret;

	in.opcode = (uint8_t)take(f, 1);
	in.se = bits & 1;
	in.mig = bits & 2;
	in.fecn = bits & 4;
	in.becn = bits & 8;
	in.ackreq = bits & 16;
	in.pad = (bits >> 5) & 7;		/* 4..7 do not fit */
	in.tver = (bits >> 8) & 0x1f;		/* 16..31 do not fit */
	in.pkey = (uint16_t)take(f, 2);
	in.dqpn = (uint32_t)take(f, 4);		/* over 24 bits: no fit */
	in.psn = (uint32_t)take(f, 4);
	if (bits & 0x2000) {			/* mostly in range */
		in.dqpn &= VROCE_QPN_MASK;
		in.psn &= VROCE_QPN_MASK;
	}

	ret = vroce_bth_pack(&in, buf, VROCE_BTH_LEN);
	if (in.pad > 3 || in.tver > 15 || in.dqpn > VROCE_QPN_MASK ||
	    in.psn > VROCE_QPN_MASK) {
		CHECK(ret == VROCE_EINVAL);
		return;
	}
	CHECK(ret == VROCE_BTH_LEN);
	CHECK(vroce_bth_parse(&out, buf, VROCE_BTH_LEN) == VROCE_BTH_LEN);
	CHECK(memcmp(&in, &out, sizeof(in)) == 0);
	CHECK(vroce_bth_parse(&out, buf, VROCE_BTH_LEN - 1) == VROCE_ESHORT);
	CHECK_NOSPC(vroce_bth_pack, &in, VROCE_BTH_LEN);
}

/* Every extension header packed from the input and parsed back. */
static void build_exts(struct fields *f)
{
	struct vroce_reth reth = {}, reth2 = {};
	struct vroce_aeth aeth = {}, aeth2 = {};
	struct vroce_atmeth atm = {}, atm2 = {};
	struct vroce_atmack ack = {}, ack2 = {};
	struct vroce_deth deth = {}, deth2 = {};
	uint8_t *buf = malloc(VROCE_ATMETH_LEN);
	uint32_t w, w2;
	int ret;

	CHECK(buf);
	reth.va = take(f, 8);
	reth.rkey = (uint32_t)take(f, 4);
	reth.dma_len = (uint32_t)take(f, 4);
	CHECK(vroce_reth_pack(&reth, buf, VROCE_RETH_LEN) == VROCE_RETH_LEN);
	CHECK(vroce_reth_parse(&reth2, buf, VROCE_RETH_LEN) ==
	      VROCE_RETH_LEN);
	CHECK(memcmp(&reth, &reth2, sizeof(reth)) == 0);
	CHECK_NOSPC(vroce_reth_pack, &reth, VROCE_RETH_LEN);

	aeth.syndrome = (uint8_t)take(f, 1);
	aeth.msn = (uint32_t)take(f, 4);
	ret = vroce_aeth_pack(&aeth, buf, VROCE_AETH_LEN);
	if (aeth.msn > VROCE_MSN_MASK) {
		CHECK(ret == VROCE_EINVAL);
	} else {
		CHECK(ret == VROCE_AETH_LEN);
		CHECK(vroce_aeth_parse(&aeth2, buf, VROCE_AETH_LEN) ==
		      VROCE_AETH_LEN);
		CHECK(memcmp(&aeth, &aeth2, sizeof(aeth)) == 0);
		CHECK_NOSPC(vroce_aeth_pack, &aeth, VROCE_AETH_LEN);
	}

	atm.va = take(f, 8);
	atm.rkey = (uint32_t)take(f, 4);
	atm.swap_add = take(f, 8);
	atm.compare = take(f, 8);
	CHECK(vroce_atmeth_pack(&atm, buf, VROCE_ATMETH_LEN) ==
	      VROCE_ATMETH_LEN);
	CHECK(vroce_atmeth_parse(&atm2, buf, VROCE_ATMETH_LEN) ==
	      VROCE_ATMETH_LEN);
	CHECK(memcmp(&atm, &atm2, sizeof(atm)) == 0);
	CHECK_NOSPC(vroce_atmeth_pack, &atm, VROCE_ATMETH_LEN);

	ack.orig = take(f, 8);
	CHECK(vroce_atmack_pack(&ack, buf, VROCE_ATMACK_LEN) ==
	      VROCE_ATMACK_LEN);
	CHECK(vroce_atmack_parse(&ack2, buf, VROCE_ATMACK_LEN) ==
	      VROCE_ATMACK_LEN);
	CHECK(memcmp(&ack, &ack2, sizeof(ack)) == 0);
	CHECK_NOSPC(vroce_atmack_pack, &ack, VROCE_ATMACK_LEN);

	deth.qkey = (uint32_t)take(f, 4);
	deth.sqpn = (uint32_t)take(f, 4);
	ret = vroce_deth_pack(&deth, buf, VROCE_DETH_LEN);
	if (deth.sqpn > VROCE_QPN_MASK) {
		CHECK(ret == VROCE_EINVAL);
	} else {
		CHECK(ret == VROCE_DETH_LEN);
		CHECK(vroce_deth_parse(&deth2, buf, VROCE_DETH_LEN) ==
		      VROCE_DETH_LEN);
		CHECK(memcmp(&deth, &deth2, sizeof(deth)) == 0);
		CHECK_NOSPC(vroce_deth_pack, &deth, VROCE_DETH_LEN);
	}

	w = (uint32_t)take(f, 4);
	CHECK(vroce_immdt_pack(w, buf, VROCE_IMMDT_LEN) == VROCE_IMMDT_LEN);
	CHECK(vroce_immdt_parse(&w2, buf, VROCE_IMMDT_LEN) ==
	      VROCE_IMMDT_LEN && w2 == w);
	CHECK(vroce_ieth_pack(w, buf, VROCE_IETH_LEN) == VROCE_IETH_LEN);
	CHECK(vroce_ieth_parse(&w2, buf, VROCE_IETH_LEN) ==
	      VROCE_IETH_LEN && w2 == w);
	ret = vroce_xrceth_pack(w, buf, VROCE_XRCETH_LEN);
	if (w > VROCE_QPN_MASK) {
		CHECK(ret == VROCE_EINVAL);
	} else {
		CHECK(ret == VROCE_XRCETH_LEN);
		CHECK(vroce_xrceth_parse(&w2, buf, VROCE_XRCETH_LEN) ==
		      VROCE_XRCETH_LEN && w2 == w);
		CHECK_NOSPC(vroce_xrceth_pack, w, VROCE_XRCETH_LEN);
	}
	free(buf);
}

/* IPv4 or IPv6 and UDP headers for a UDP payload of @payload bytes. */
static unsigned int build_ipudp(struct fields *f, uint8_t *p, int v6,
				unsigned int opts, unsigned int payload)
{
	unsigned int hlen = v6 ? VROCE_IPV6_HDR_LEN :
				 VROCE_IPV4_HDR_LEN + opts * 4;
	unsigned int udp_len = VROCE_UDP_HDR_LEN + payload, i;
	uint8_t *udp = p + hlen;

	for (i = 0; i < hlen; i++)
		p[i] = (uint8_t)take(f, 1);
	if (v6) {
		p[0] = 0x60 | (p[0] & 0xf);
		p[4] = (uint8_t)(udp_len >> 8);
		p[5] = (uint8_t)udp_len;
		p[6] = VROCE_IPPROTO_UDP;
	} else {
		p[0] = (uint8_t)(0x40 | hlen / 4);
		p[2] = (uint8_t)((hlen + udp_len) >> 8);
		p[3] = (uint8_t)(hlen + udp_len);
		p[6] &= 0x40;	/* DF may be set; not a fragment */
		p[7] = 0;
		p[9] = VROCE_IPPROTO_UDP;
	}
	udp[0] = (uint8_t)take(f, 1);
	udp[1] = (uint8_t)take(f, 1);
	udp[2] = VROCE_UDP_PORT >> 8;
	udp[3] = VROCE_UDP_PORT & 0xff;
	udp[4] = (uint8_t)(udp_len >> 8);
	udp[5] = (uint8_t)udp_len;
	udp[6] = (uint8_t)take(f, 1);
	udp[7] = (uint8_t)take(f, 1);
	return hlen;
}

/*
 * A whole packet built as vroce_pkt_alloc() and vroce_pack_ext() build
 * one, in IP/UDP with its ICRC, then received as in fuzz_receive().
 */
static void build_packet(struct fields *f)
{
	const struct vroce_opcode_info *op;
	struct vroce_bth bth = {};
	struct vroce_ipudp iu;
	struct vroce_pkt pkt;
	unsigned int hlen, i, paylen, pad, len, v6, opts;
	uint8_t *ip, *t;

	bth.opcode = (uint8_t)take(f, 1);
	op = vroce_opcode_info(bth.opcode);
	if (!op)
		return;
	paylen = (unsigned int)take(f, 2) % 4097;
	if (!(op->flags & VROCE_OPF_PAYLOAD))
		paylen = 0;
	pad = vroce_pad_len(paylen);
	len = op->hdr_len + paylen + pad + VROCE_ICRC_LEN;
	v6 = take(f, 1) & 1;
	opts = (unsigned int)take(f, 1) % 11;	/* IPv4 options words */
	bth.se = take(f, 1) & 1;
	bth.ackreq = take(f, 1) & 1;
	bth.pad = (uint8_t)pad;
	bth.pkey = VROCE_DEFAULT_PKEY;
	bth.dqpn = (uint32_t)take(f, 3);
	bth.psn = (uint32_t)take(f, 3);

	ip = malloc(VROCE_IPV6_HDR_LEN + 40 + VROCE_UDP_HDR_LEN + len);
	CHECK(ip);
	hlen = build_ipudp(f, ip, v6, opts, len);
	t = ip + hlen + VROCE_UDP_HDR_LEN;
	CHECK(vroce_bth_pack(&bth, t, VROCE_BTH_LEN) == VROCE_BTH_LEN);
	for (i = VROCE_BTH_LEN; i < op->hdr_len; i++)
		t[i] = (uint8_t)take(f, 1);
	if (op->hdrs & VROCE_HDR_DETH)	/* reserved byte, sent as zero */
		t[vroce_hdr_offset(op, VROCE_HDR_DETH) + 4] = 0;
	if (op->hdrs & VROCE_HDR_XRCETH)	/* so is the XRCETH's */
		t[vroce_hdr_offset(op, VROCE_HDR_XRCETH)] = 0;
	for (i = 0; i < paylen; i++)
		t[op->hdr_len + i] = (uint8_t)take(f, 1);
	memset(t + op->hdr_len + paylen, 0, pad + VROCE_ICRC_LEN);

	CHECK(vroce_icrc_generate(ip, hlen + VROCE_UDP_HDR_LEN + len) ==
	      (int)(hlen + VROCE_UDP_HDR_LEN + len - VROCE_ICRC_LEN));
	CHECK(check_ipudp(ip, hlen + VROCE_UDP_HDR_LEN + len, &iu) ==
	      (int)(hlen + VROCE_UDP_HDR_LEN));
	CHECK(iu.udp_len == VROCE_UDP_HDR_LEN + len &&
	      iu.dport == VROCE_UDP_PORT);
	CHECK(vroce_icrc_verify(ip, hlen + VROCE_UDP_HDR_LEN + len) == 0);
	CHECK(split_icrc_ok(ip, hlen, iu.udp_len,
			    hlen + VROCE_UDP_HDR_LEN + op->hdr_len) == 1);

	CHECK(vroce_pkt_parse(&pkt, t, len) == 0);
	CHECK(pkt.op == op && pkt.paylen == paylen &&
	      pkt.hdr_len == op->hdr_len);
	CHECK(pkt.bth.se == bth.se && pkt.bth.ackreq == bth.ackreq &&
	      pkt.bth.dqpn == bth.dqpn && pkt.bth.psn == bth.psn &&
	      pkt.bth.pad == pad);
	/* Every header back in place; the full receive path on top. */
	check_pkt(t, len, 1);
	fuzz_receive(ip, hlen + VROCE_UDP_HDR_LEN + len);

	/* One bit flipped anywhere the ICRC covers: caught. */
	if (len > VROCE_BTH_LEN + VROCE_ICRC_LEN) {
		i = (unsigned int)take(f, 2) % (len - VROCE_ICRC_LEN);
		if (i != 4) {		/* BTH byte 4 is masked out */
			t[i] ^= 1u << (take(f, 1) & 7);
			CHECK(vroce_icrc_verify(ip, hlen +
						VROCE_UDP_HDR_LEN + len) ==
			      VROCE_EBADCRC);
		}
	}
	free(ip);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fields f = { .p = data, .len = size };
	uint8_t *bth = malloc(VROCE_BTH_LEN);

	fuzz_receive(data, size);

	CHECK(bth);
	build_bth(&f, bth);
	free(bth);
	build_exts(&f);
	build_packet(&f);
	return 0;
}
