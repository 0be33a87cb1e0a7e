// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * RoCEv2 ICRC.
 *
 * Truth comes from three places:
 *  - a CNP captured from a real NIC (Mellanox ConnectX-4 Lx), as published
 *    in the scapy project's RoCE tests, and scapy's own UC example packet;
 *  - packets built by hand here, whose ICRCs were computed separately
 *    (Python's zlib.crc32 over the masked bytes laid out by hand);
 *  - every tests/data/rxe-*.pcap: RoCEv2 traffic of the kernel's rdma_rxe
 *    captured with tcpdump. Skipped while there is none.
 *
 * vroce's own traffic, tests/data/vroce-*.pcap, goes through the same
 * checks as rxe's (test_vroce_captures), plus those of its UDP source
 * ports; test_capture_checks_fail shows that the checks reject bad packets.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "roce.h"
#include "pcap.h"
#include "util.h"

#ifndef VROCE_TEST_DATA_DIR
#define VROCE_TEST_DATA_DIR "tests/data"
#endif

#define MAX_PKT 10000

/*
 * A RoCEv2 CNP captured on a ConnectX-4 Lx, IPv4 header onwards. Note the
 * ECN bits in the TOS (0xc2) and the BECN bit in BTH byte 4 (0x40): both
 * are masked out of the ICRC.
 */
static const char cx4_cnp[] =
	"45 c2 00 3c 71 8c 40 00 40 11 91 61 0a 00 11 01 0a 00 12 01"
	"00 00 12 b7 00 28 00 00"
	"81 00 ff ff 40 00 01 18 00 00 00 00"
	"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	"82 fd 00 2a";

/* scapy's example UC SEND_ONLY (M bit, pad 2), ICRC as scapy computes it. */
static const char scapy_uc[] =
	"45 01 00 40 04 78 40 00 40 11 b4 d5 c0 a8 00 07 c0 a8 00 07"
	"c0 00 12 b7 00 2c ac a2"
	"24 60 ff ff 00 00 00 d3 00 cf 17 10"
	"46 30 81 8b e2 89 35 d9 0e 9a 95 50 54 01 be 88 5e 50 00 00"
	"78 f3 53 f3";

/*
 * Built by hand: IPv4 (TOS 0x02, ID 0x1234, DF, TTL 64, 10.0.0.1 ->
 * 10.0.0.2), UDP 0xc123 -> 4791, RC SEND_ONLY (SE, AckReq, DestQP 0x11,
 * PSN 0x123456), 16 bytes "vroce ICRC test\n". ICRC 0x44e25d6f.
 */
static const char hand_v4[] =
	"45 02 00 3c 12 34 40 00 40 11 14 79 0a 00 00 01 0a 00 00 02"
	"c1 23 12 b7 00 28 00 00"
	"04 80 ff ff 00 00 00 11 80 12 34 56"
	"76 72 6f 63 65 20 49 43 52 43 20 74 65 73 74 0a"
	"6f 5d e2 44";

/*
 * Built by hand: IPv6 (traffic class 0x1a, flow label 0x12345, hop limit
 * 64, 2001:db8::1 -> 2001:db8::2), UDP 0xd00d -> 4791 with checksum
 * 0xbeef, RC RDMA_WRITE_ONLY_WITH_IMMEDIATE (SE, pad 3, DestQP 0xabcd,
 * AckReq, PSN 0xfffffe), RETH (VA 0x7f0012345678, R_Key 0xdeadbeef,
 * length 5), ImmDt 0xcafef00d, "hello" + 3 pad bytes. ICRC 0xd6457a83.
 */
static const char hand_v6[] =
	"61 a1 23 45 00 34 11 40"
	"20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"
	"20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 02"
	"d0 0d 12 b7 00 34 be ef"
	"0b b0 ff ff 00 00 ab cd 80 ff ff fe"
	"00 00 7f 00 12 34 56 78 de ad be ef 00 00 00 05"
	"ca fe f0 0d"
	"68 65 6c 6c 6f 00 00 00"
	"83 7a 45 d6";

struct vec {
	const char *name;
	const char *hex;
	uint32_t icrc;
};

static const struct vec vecs[] = {
	{ "ConnectX-4 Lx CNP", cx4_cnp, 0x2a00fd82 },
	{ "scapy UC SEND_ONLY", scapy_uc, 0xf353f378 },
	{ "hand IPv4 SEND_ONLY", hand_v4, 0x44e25d6f },
	{ "hand IPv6 WRITE_ONLY_IMM", hand_v6, 0xd6457a83 },
};

#define NVECS (sizeof(vecs) / sizeof(vecs[0]))

static size_t load(const struct vec *v, uint8_t *p)
{
	return hex2bin(v->hex, p, MAX_PKT);
}

/*
 * The ICRC computed the slow, obvious way, independently of the core:
 * copy, mask, bitwise CRC-32. @len runs from the IP header to the end of
 * the ICRC.
 */
static uint32_t ref_icrc(const uint8_t *ip, size_t len)
{
	static uint8_t buf[8 + MAX_PKT];
	uint8_t *m = buf + 8;
	size_t l4;

	assert_true(len >= 4 && len <= MAX_PKT);
	memset(buf, 0xff, 8);
	memcpy(m, ip, len - 4);
	if (m[0] >> 4 == 4) {
		l4 = (m[0] & 0xf) * 4;
		m[1] = 0xff;			/* TOS */
		m[8] = 0xff;			/* TTL */
		m[10] = m[11] = 0xff;		/* checksum */
	} else {
		l4 = 40;
		m[0] |= 0x0f;			/* traffic class, */
		m[1] = m[2] = m[3] = 0xff;	/* flow label */
		m[7] = 0xff;			/* hop limit */
	}
	m[l4 + 6] = m[l4 + 7] = 0xff;		/* UDP checksum */
	m[l4 + 8 + 4] = 0xff;			/* BTH resv8a */
	return ref_crc32(buf, 8 + len - 4);
}

/* Is bit @bit of byte @i of the packet at @p masked out of the ICRC? */
static int is_masked(const uint8_t *p, size_t i, int bit)
{
	size_t l4;

	if (p[0] >> 4 == 4) {
		l4 = (p[0] & 0xf) * 4;
		if (i == 1 || i == 8 || i == 10 || i == 11)
			return 1;
	} else {
		l4 = 40;
		if (i == 0)
			return bit < 4;
		if (i == 1 || i == 2 || i == 3 || i == 7)
			return 1;
	}
	return i == l4 + 6 || i == l4 + 7 || i == l4 + 12;
}

static void test_crc32_contract(void **state)
{
	static const char check[] = "123456789";
	uint8_t data[1000];
	uint32_t c;
	size_t i, split;

	(void)state;
	assert_int_equal(~vroce_crc32(0xffffffff, check, 9), 0xcbf43926);
	assert_int_equal(vroce_crc32(0x12345678, data, 0), 0x12345678);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(~vroce_crc32(0xffffffff, data, sizeof(data)),
			 ref_crc32(data, sizeof(data)));
	for (split = 0; split <= sizeof(data); split += 37) {
		c = vroce_crc32(0xffffffff, data, split);
		c = vroce_crc32(c, data + split, sizeof(data) - split);
		assert_int_equal(~c, ref_crc32(data, sizeof(data)));
	}
}

/* rdma_rxe starts from this constant: the CRC register after the LRH. */
static void test_lrh_seed(void **state)
{
	static const uint8_t lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};

	(void)state;
	assert_int_equal(vroce_crc32(VROCE_ICRC_SEED, lrh, 8), 0xdebb20e3);
}

static void test_vectors(void **state)
{
	static uint8_t p[MAX_PKT];
	uint32_t icrc;
	size_t i, n;

	(void)state;
	for (i = 0; i < NVECS; i++) {
		n = load(&vecs[i], p);
		print_message("# %s: %zu bytes\n", vecs[i].name, n);
		assert_int_equal(vroce_icrc_verify(p, n), 0);
		assert_int_equal(vroce_icrc_compute(&icrc, p, n),
				 (int)n - 4);
		assert_int_equal(icrc, vecs[i].icrc);
		assert_int_equal(vroce_icrc_get(p + n - 4), vecs[i].icrc);
		assert_int_equal(ref_icrc(p, n), vecs[i].icrc);
	}
}

/* The ICRC goes on the wire least significant byte first. */
static void test_wire_order(void **state)
{
	uint8_t b[4];

	(void)state;
	vroce_icrc_put(b, 0x2a00fd82);
	assert_int_equal(b[0], 0x82);
	assert_int_equal(b[1], 0xfd);
	assert_int_equal(b[2], 0x00);
	assert_int_equal(b[3], 0x2a);
	assert_int_equal(vroce_icrc_get(b), 0x2a00fd82);
}

static void test_generate(void **state)
{
	static uint8_t p[MAX_PKT], q[MAX_PKT];
	size_t i, n;

	(void)state;
	for (i = 0; i < NVECS; i++) {
		n = load(&vecs[i], p);
		memcpy(q, p, n);
		memset(q + n - 4, 0, 4);
		assert_int_equal(vroce_icrc_verify(q, n), VROCE_EBADCRC);
		assert_int_equal(vroce_icrc_generate(q, n), (int)n - 4);
		assert_memory_equal(q, p, n);
	}
}

/*
 * Flip every bit of every packet, one at a time: a masked bit leaves the
 * packet valid, any other bit (headers, payload, pad, ICRC) breaks it.
 */
static void test_every_bit(void **state)
{
	static uint8_t p[MAX_PKT];
	size_t i, b, n;
	int bit, ret, masked;

	(void)state;
	for (i = 0; i < NVECS; i++) {
		n = load(&vecs[i], p);
		for (b = 0; b < n; b++) {
			for (bit = 0; bit < 8; bit++) {
				masked = is_masked(p, b, bit);
				p[b] ^= 1 << bit;
				ret = vroce_icrc_verify(p, n);
				if (masked != (ret == 0))
					print_error("%s: byte %zu bit %d: %d\n",
						    vecs[i].name, b, bit, ret);
				assert_int_equal(masked, ret == 0);
				p[b] ^= 1 << bit;
			}
		}
		assert_int_equal(vroce_icrc_verify(p, n), 0);
	}
}

/* Headers first, then the rest in two pieces split anywhere. */
static void test_streaming(void **state)
{
	static uint8_t p[MAX_PKT];
	size_t i, n, end, s;
	uint32_t crc, c2, want;
	int off;

	(void)state;
	for (i = 0; i < NVECS; i++) {
		n = load(&vecs[i], p);
		want = vecs[i].icrc;
		end = n - 4;

		/* only the headers up to the BTH need be readable */
		off = vroce_icrc_begin(&crc, p, n);
		assert_true(off > 0);
		assert_int_equal(vroce_icrc_begin(&c2, p, (size_t)off), off);
		assert_int_equal(c2, crc);
		assert_int_equal(vroce_icrc_begin(&c2, p, (size_t)off - 1),
				 VROCE_ESHORT);
		assert_int_equal(off, (p[0] >> 4 == 4 ? 20 : 40) + 8 + 12);

		for (s = (size_t)off; s <= end; s++) {
			c2 = vroce_icrc_update(crc, p + off, s - off);
			c2 = vroce_icrc_update(c2, p + s, end - s);
			assert_int_equal(vroce_icrc_final(c2), want);
		}
		/* byte by byte */
		c2 = crc;
		for (s = (size_t)off; s < end; s++)
			c2 = vroce_icrc_update(c2, p + s, 1);
		assert_int_equal(vroce_icrc_final(c2), want);
	}
}

static void test_errors(void **state)
{
	static uint8_t p[MAX_PKT];
	uint8_t *b;
	uint32_t crc = 0x5a5a5a5a, icrc;
	size_t n, l;

	(void)state;
	n = load(&vecs[2], p);		/* IPv4, 60 bytes */
	for (l = 0; l < n; l++) {
		b = tight_copy(p, l);
		assert_true(vroce_icrc_verify(b, l) < 0);
		assert_true(vroce_icrc_compute(&icrc, b, l) < 0);
		if (l < 40)
			assert_int_equal(vroce_icrc_begin(&crc, b, l),
					 VROCE_ESHORT);
		free(b);
	}
	assert_int_equal(crc, 0x5a5a5a5a);

	/* UDP payload too short to hold BTH + ICRC */
	p[3] = 0x2b;		/* IP total length 43 */
	p[25] = 0x17;		/* UDP length 23 */
	assert_int_equal(vroce_icrc_verify(p, n), VROCE_ESHORT);
	p[3] = 0x3c;
	p[25] = 0x28;
	assert_int_equal(vroce_icrc_verify(p, n), 0);

	p[9] = 6;		/* not UDP */
	assert_int_equal(vroce_icrc_verify(p, n), VROCE_EPROTO);
	assert_int_equal(vroce_icrc_begin(&crc, p, n), VROCE_EPROTO);
	p[9] = 17;
	p[0] = 0x75;		/* bad version */
	assert_int_equal(vroce_icrc_begin(&crc, p, n), VROCE_EINVAL);
	p[0] = 0x43;		/* bad IHL */
	assert_int_equal(vroce_icrc_begin(&crc, p, n), VROCE_EINVAL);
	p[0] = 0x45;

	n = load(&vecs[3], p);		/* IPv6 */
	p[6] = 0;		/* extension header */
	assert_int_equal(vroce_icrc_begin(&crc, p, n), VROCE_EPROTO);
	assert_int_equal(vroce_icrc_verify(p, n), VROCE_EPROTO);
}

/*
 * The UDP stack trims a packet to its UDP length and leaves the IP header
 * as it came, with an IP length that may count bytes past the UDP
 * datagram. The ICRC ends with the UDP datagram: the trimmed packet must
 * verify, at once as piece by piece (the module does either, by skb
 * layout). Found by tests/fuzz: vroce_icrc_verify() said VROCE_ESHORT.
 */
static void test_udp_trimmed(void **state)
{
	static uint8_t p[MAX_PKT];
	uint32_t crc;
	uint8_t *t;
	size_t i, n;
	int off;

	(void)state;
	for (i = 0; i < NVECS; i++) {
		n = load(&vecs[i], p);
		/* 4 bytes more in the IP datagram, after the UDP one */
		if (p[0] >> 4 == 4)
			vroce_put_be16(p + 2, vroce_get_be16(p + 2) + 4);
		else
			vroce_put_be16(p + 4, vroce_get_be16(p + 4) + 4);
		memset(p + n, 0xa5, 4);
		assert_int_equal(vroce_icrc_generate(p, n + 4), (int)n - 4);

		t = tight_copy(p, n);
		assert_int_equal(vroce_icrc_verify(t, n), 0);
		off = vroce_icrc_begin(&crc, t, n);
		assert_true(off > 0);
		crc = vroce_icrc_update(crc, t + off, n - 4 - (size_t)off);
		assert_int_equal(vroce_icrc_final(crc),
				 vroce_icrc_get(t + n - 4));
		free(t);
	}
}

/* Random packets: generate, then verify and compare with the reference. */
static void test_random(void **state)
{
	static uint8_t p[MAX_PKT];
	uint32_t r = 12345;
	size_t i, n, hl, body;
	int k;

	(void)state;
	for (k = 0; k < 500; k++) {
		int v6 = k & 1;

		hl = v6 ? 40 : 20 + 4 * (k % 3);
		body = 12 + 4 * ((k * 7) % 300) + 4;
		n = hl + 8 + body;
		for (i = 0; i < n; i++) {
			r = r * 1103515245 + 12345;
			p[i] = (uint8_t)(r >> 16);
		}
		if (v6) {
			p[0] = 0x60 | (p[0] & 0xf);
			p[4] = (uint8_t)((n - 40) >> 8);
			p[5] = (uint8_t)(n - 40);
			p[6] = 17;
		} else {
			p[0] = (uint8_t)(0x40 | hl / 4);
			p[2] = (uint8_t)(n >> 8);
			p[3] = (uint8_t)n;
			p[6] &= 0x40;	/* DF at most: not a fragment */
			p[7] = 0;
			p[9] = 17;
		}
		p[hl + 4] = (uint8_t)((n - hl) >> 8);
		p[hl + 5] = (uint8_t)(n - hl);
		assert_int_equal(vroce_icrc_generate(p, n), (int)n - 4);
		assert_int_equal(vroce_icrc_verify(p, n), 0);
		assert_int_equal(vroce_icrc_get(p + n - 4), ref_icrc(p, n));
	}
}

/* ---- captures: rdma_rxe's (the reference) and vroce's own ---- */

/*
 * tests/data/PREFIX-{rc,ud}-ipv{4,6}.pcap, made by scripts/capture --dev
 * PREFIX. Every capture goes through the same checks, whatever made it;
 * the table says only what else to expect of each source.
 */
struct cap_source {
	const char *prefix;
	int vroce;		/* UDP source ports are vroce_udp_sport() */
	int perftest;		/* RC also ran ib_{write,read,atomic}_bw */
};

static const struct cap_source cap_sources[] = {
	{ "rxe", 0, 0 },
	{ "vroce", 1, 1 },
};

/*
 * Opcodes an RC capture must hold: those of ibv_rc_pingpong (4096 bytes
 * at a 1024-byte MTU are segmented), then those of perftest.
 */
static const uint8_t rc_need[] = {
	VROCE_OP_RC_SEND_FIRST, VROCE_OP_RC_SEND_MIDDLE, VROCE_OP_RC_SEND_LAST,
	VROCE_OP_RC_SEND_ONLY, VROCE_OP_RC_ACK,
	VROCE_OP_RC_RDMA_WRITE_FIRST, VROCE_OP_RC_RDMA_WRITE_MIDDLE,
	VROCE_OP_RC_RDMA_WRITE_LAST, VROCE_OP_RC_RDMA_READ_REQ,
	VROCE_OP_RC_RDMA_READ_RESP_FIRST, VROCE_OP_RC_RDMA_READ_RESP_MIDDLE,
	VROCE_OP_RC_RDMA_READ_RESP_LAST, VROCE_OP_RC_CMP_SWAP,
	VROCE_OP_RC_FETCH_ADD, VROCE_OP_RC_ATOMIC_ACK,
};
#define RC_NEED_PINGPONG	5

static const uint8_t ud_need[] = { VROCE_OP_UD_SEND_ONLY };

/* What one capture file must be. */
struct cap_expect {
	int ipver;		/* 4 or 6 */
	uint8_t transport;	/* VROCE_TRANSPORT_RC or _UD */
	int vroce;		/* see struct cap_source */
	const uint8_t *need;	/* opcodes that must occur */
	size_t n_need;
};

/* Why a capture is not what it should be. */
enum cap_err {
	CAP_OK,
	CAP_TRUNCATED,
	CAP_NOT_IP,
	CAP_NOT_UDP,
	CAP_PORT,
	CAP_IPVER,
	CAP_ICRC,
	CAP_PARSE,
	CAP_TRANSPORT,
	CAP_BTH,
	CAP_SPORT,
	CAP_FLOW,
	CAP_CONST,
	CAP_ONE_PORT,
	CAP_MISSING,
};

static const char *const cap_err_text[] = {
	[CAP_OK] = "ok",
	[CAP_TRUNCATED] = "cut by the snap length",
	[CAP_NOT_IP] = "not an IPv4 or IPv6 frame",
	[CAP_NOT_UDP] = "not a whole UDP datagram",
	[CAP_PORT] = "UDP destination port is not 4791",
	[CAP_IPVER] = "IP version is not the capture's",
	[CAP_ICRC] = "ICRC on the wire is not the one computed",
	[CAP_PARSE] = "transport headers do not parse (opcode, TVer, lengths)",
	[CAP_TRANSPORT] = "opcode of another transport than the capture's",
	[CAP_BTH] = "BTH: P_Key is not 0xffff, or a reserved bit is set",
	[CAP_SPORT] = "UDP source port is not vroce_udp_sport(sending QP)",
	[CAP_FLOW] = "UDP source port changes within a flow",
	[CAP_CONST] = "UDP source port is the same for every QP",
	[CAP_ONE_PORT] = "RC capture with one UDP source port: no two QPs to compare",
	[CAP_MISSING] = "an opcode the capture must hold is absent",
};

/* One RoCEv2 packet of a capture, as the whole-file checks see it. */
struct cap_pkt {
	uint8_t src[16], dst[16];	/* IP addresses; IPv4 in src[0..3] */
	uint32_t dqpn;
	uint16_t sport;
	uint8_t opcode;
};

/* Where the RoCEv2 packet of a frame is. */
struct cap_view {
	const uint8_t *ip;	/* IP header */
	size_t len;		/* IP header to the end of the ICRC */
	size_t bth_off;		/* from ip */
	int ipver;
};

/*
 * Check one captured frame: a whole IPv4/IPv6 UDP datagram to port 4791
 * of the capture's IP version, its ICRC right, its transport headers
 * sound and of the capture's transport; for vroce, a UD packet's UDP
 * source port is that of its source QP (DETH). Fills @cp and @cv.
 */
static enum cap_err cap_classify(uint32_t linktype, const uint8_t *frame,
				 size_t caplen, size_t origlen,
				 const struct cap_expect *ex,
				 struct cap_pkt *cp, struct cap_view *cv)
{
	struct vroce_ipudp iu;
	struct vroce_pkt pkt;
	struct vroce_deth deth;
	const uint8_t *bth, *d;
	uint32_t icrc;
	uint16_t type;
	long l3;
	int ret;

	memset(cp, 0, sizeof(*cp));
	if (caplen < origlen)
		return CAP_TRUNCATED;
	l3 = pcap_l3(linktype, frame, caplen, &type);
	if (l3 < 0)
		return CAP_NOT_IP;
	ret = vroce_ipudp_parse(&iu, frame + l3, caplen - (size_t)l3);
	if (ret < 0)
		return CAP_NOT_UDP;
	if (iu.dport != VROCE_UDP_PORT)
		return CAP_PORT;
	if (iu.ipver != ex->ipver)
		return CAP_IPVER;

	cv->ip = frame + l3;
	cv->len = (size_t)iu.ip_hlen + iu.udp_len;
	cv->bth_off = (size_t)ret;
	cv->ipver = iu.ipver;
	bth = cv->ip + cv->bth_off;
	if (cv->len > MAX_PKT || cv->len < cv->bth_off + VROCE_BTH_LEN + 4)
		return CAP_PARSE;
	if (vroce_icrc_compute(&icrc, cv->ip, cv->len) != (int)cv->len - 4 ||
	    icrc != vroce_icrc_get(cv->ip + cv->len - 4))
		return CAP_ICRC;
	if (vroce_pkt_parse(&pkt, bth, cv->len - cv->bth_off))
		return CAP_PARSE;
	if (iu.ipver == 4) {
		memcpy(cp->src, cv->ip + 12, 4);
		memcpy(cp->dst, cv->ip + 16, 4);
	} else {
		memcpy(cp->src, cv->ip + 8, 16);
		memcpy(cp->dst, cv->ip + 24, 16);
	}
	cp->dqpn = pkt.bth.dqpn;
	cp->sport = iu.sport;
	cp->opcode = pkt.bth.opcode;

	if (pkt.op->transport != ex->transport)
		return CAP_TRANSPORT;
	/* reserved: BTH byte 4 but FECN/BECN, byte 8 but AckReq */
	if (pkt.bth.pkey != VROCE_DEFAULT_PKEY || bth[4] & 0x3f ||
	    bth[8] & 0x7f)
		return CAP_BTH;

	d = vroce_pkt_hdr(&pkt, bth, VROCE_HDR_DETH);
	if (ex->vroce && d) {
		assert_int_equal(vroce_deth_parse(&deth, d, VROCE_DETH_LEN),
				 VROCE_DETH_LEN);
		if (iu.sport != vroce_udp_sport(deth.sqpn))
			return CAP_SPORT;
	}
	return CAP_OK;
}

/* How many different UDP source ports the @n packets at @v have. */
static size_t count_ports(const struct cap_pkt *v, size_t n)
{
	size_t i, j, ports = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i && v[j].sport != v[i].sport; j++)
			;
		ports += j == i;
	}
	return ports;
}

static int same_way(const struct cap_pkt *a, const struct cap_pkt *b)
{
	return !memcmp(a->src, b->src, 16) && !memcmp(a->dst, b->dst, 16);
}

/*
 * Checks of a whole capture (@n packets at @v). A flow, packets from one
 * address to a DestQP at another, comes from one QP: its UDP source port
 * does not change; flows from one address to another (several QPs) do not
 * all have the same port, and an RC capture has more than one port, or
 * that would prove nothing. vroce's RC port is vroce_udp_sport() of the
 * sending QP, which is the DestQP of the packets that come back. Every
 * opcode of ex->need occurs. On failure *@bad is the index of the packet
 * at fault (@n for the file as a whole).
 */
static enum cap_err cap_file_check(const struct cap_pkt *v, size_t n,
				   const struct cap_expect *ex, size_t *bad)
{
	size_t i, j;
	int other_flow, other_port, found;

	for (i = 0; i < n; i++) {
		*bad = i;
		other_flow = 0;
		other_port = 0;
		for (j = 0; j < n; j++) {
			if (!same_way(&v[i], &v[j]))
				continue;
			if (v[i].dqpn != v[j].dqpn)
				other_flow = 1;
			else if (v[i].sport != v[j].sport && j < i)
				return CAP_FLOW;
			if (v[i].sport != v[j].sport)
				other_port = 1;
		}
		if (other_flow && !other_port)
			return CAP_CONST;
		if (!ex->vroce || ex->transport != VROCE_TRANSPORT_RC)
			continue;
		found = 0;
		for (j = 0; j < n && !found; j++)
			found = !memcmp(v[j].src, v[i].dst, 16) &&
				!memcmp(v[j].dst, v[i].src, 16) &&
				vroce_udp_sport(v[j].dqpn) == v[i].sport;
		if (!found)
			return CAP_SPORT;
	}
	*bad = n;
	if (ex->transport == VROCE_TRANSPORT_RC && count_ports(v, n) < 2)
		return CAP_ONE_PORT;
	for (i = 0; i < ex->n_need; i++) {
		for (j = 0; j < n && v[j].opcode != ex->need[i]; j++)
			;
		if (j == n) {
			print_message("# no %s\n", vroce_opcode_name(ex->need[i]));
			return CAP_MISSING;
		}
	}
	return CAP_OK;
}

/*
 * FILE must be PREFIX-(rc|ud)-ipv(4|6).pcap: what it holds follows.
 * Returns 0, or -1 for a name that says nothing.
 */
static int cap_expect_of(const char *file, const struct cap_source *src,
			 struct cap_expect *ex)
{
	size_t pl = strlen(src->prefix);
	const char *r = file + pl;

	if (strncmp(file, src->prefix, pl) || strlen(r) != strlen("-rc-ipv4.pcap") ||
	    strncmp(r + 3, "-ipv", 4) || strcmp(r + 8, ".pcap") ||
	    (r[7] != '4' && r[7] != '6'))
		return -1;
	memset(ex, 0, sizeof(*ex));
	ex->ipver = r[7] - '0';
	ex->vroce = src->vroce;
	if (!strncmp(r, "-rc", 3)) {
		ex->transport = VROCE_TRANSPORT_RC;
		ex->need = rc_need;
		ex->n_need = src->perftest ? sizeof(rc_need) : RC_NEED_PINGPONG;
	} else if (!strncmp(r, "-ud", 3)) {
		ex->transport = VROCE_TRANSPORT_UD;
		ex->need = ud_need;
		ex->n_need = sizeof(ud_need);
	} else {
		return -1;
	}
	return 0;
}

/*
 * What the ICRC code must make of a good captured packet: the streaming
 * interface agrees, the reference computation agrees, fields masked out
 * of the ICRC may change, others may not.
 */
static void exercise_captured(const char *file, int idx,
			      const struct cap_view *cv)
{
	static uint8_t p[MAX_PKT];
	struct vroce_pkt pkt;
	size_t len = cv->len, bth_off = cv->bth_off, end = len - 4, last;
	uint32_t wire, crc;
	int off;

	memcpy(p, cv->ip, len);
	wire = vroce_icrc_get(p + end);
	if (ref_icrc(p, len) != wire)
		print_error("%s: packet %d: the reference ICRC differs\n",
			    file, idx);
	assert_int_equal(ref_icrc(p, len), wire);
	assert_int_equal(vroce_icrc_verify(p, len), 0);
	assert_int_equal(vroce_pkt_parse(&pkt, p + bth_off, len - bth_off), 0);

	/* headers, then the rest in two pieces */
	off = vroce_icrc_begin(&crc, p, bth_off + VROCE_BTH_LEN);
	assert_int_equal(off, (int)(bth_off + VROCE_BTH_LEN));
	crc = vroce_icrc_update(crc, p + off, pkt.hdr_len - VROCE_BTH_LEN);
	crc = vroce_icrc_update(crc, p + bth_off + pkt.hdr_len,
				end - bth_off - pkt.hdr_len);
	assert_int_equal(vroce_icrc_final(crc), wire);

	/* masked fields may change in flight */
	p[cv->ipver == 4 ? 8 : 7] ^= 0x21;	/* TTL / hop limit */
	p[1] ^= 0x03;				/* ECN bits */
	p[bth_off + 4] ^= 0x40;			/* BECN */
	assert_int_equal(vroce_icrc_verify(p, len), 0);

	/* corruption is caught: last covered byte, DestQP, ICRC */
	last = end - 1;
	p[last] ^= 0x01;
	assert_int_equal(vroce_icrc_verify(p, len), VROCE_EBADCRC);
	p[last] ^= 0x01;
	p[bth_off + 7] ^= 0x80;
	assert_int_equal(vroce_icrc_verify(p, len), VROCE_EBADCRC);
	p[bth_off + 7] ^= 0x80;
	p[end + 2] ^= 0x10;
	assert_int_equal(vroce_icrc_verify(p, len), VROCE_EBADCRC);
	p[end + 2] ^= 0x10;
	assert_int_equal(vroce_icrc_verify(p, len), 0);
}

static void check_pcap(const char *path, const struct cap_source *src)
{
	struct pcap_file f;
	struct pcap_rec rec;
	struct cap_expect ex;
	struct cap_view cv;
	struct cap_pkt *v;
	enum cap_err e;
	char err[512];
	const char *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = 0, bad;
	int ret, idx = 0, op, v4 = 0, v6 = 0;
	int per_op[256] = { 0 };

	if (cap_expect_of(file, src, &ex)) {
		print_error("%s: not named %s-(rc|ud)-ipv(4|6).pcap\n", file,
			    src->prefix);
		fail();
	}
	if (pcap_open(&f, path, err, sizeof(err))) {
		print_error("%s\n", err);
		fail();
	}
	/* at most one packet a record, each at least 16 bytes long */
	v = calloc(f.len / 16 + 1, sizeof(*v));
	assert_non_null(v);
	e = CAP_OK;
	while ((ret = pcap_next(&f, &rec)) == 1) {
		idx++;
		e = cap_classify(f.linktype, rec.data, rec.caplen, rec.origlen,
				 &ex, &v[n], &cv);
		if (e != CAP_OK) {
			print_error("%s: record %d (%s): %s\n", file, idx,
				    e >= CAP_TRANSPORT ?
				    vroce_opcode_name(v[n].opcode) : "-",
				    cap_err_text[e]);
			break;
		}
		exercise_captured(file, idx, &cv);
		per_op[v[n].opcode]++;
		if (cv.ipver == 4)
			v4++;
		else
			v6++;
		n++;
	}
	if (ret < 0)
		print_error("%s: file ends inside a record\n", file);
	if (e == CAP_OK && ret == 0) {
		e = cap_file_check(v, n, &ex, &bad);
		if (e != CAP_OK && bad < n)
			print_error("%s: packet %zu (%s, UDP source port %u): %s\n",
				    file, bad + 1, vroce_opcode_name(v[bad].opcode),
				    v[bad].sport, cap_err_text[e]);
		else if (e != CAP_OK)
			print_error("%s: %s\n", file, cap_err_text[e]);
	}
	if (e == CAP_OK && ret == 0) {
		print_message("# %s: link type %u, %zu RoCEv2 packets (IPv4 %d, IPv6 %d), %zu UDP source ports\n",
			      file, f.linktype, n, v4, v6, count_ports(v, n));
		for (op = 0; op < 256; op++)
			if (per_op[op])
				print_message("#   %-36s %d\n",
					      vroce_opcode_name(op), per_op[op]);
	}
	free(v);
	pcap_close(&f);
	assert_int_equal(ret, 0);
	assert_int_equal(e, CAP_OK);
	/* cap_file_check() wants opcodes: an empty file cannot pass */
	assert_true(n > 0);
}

/* Every tests/data/PREFIX-*.pcap; skipped while there is none. */
static void check_captures(const struct cap_source *src)
{
	const char *dir = getenv("VROCE_TEST_DATA");
	char pattern[4096];
	glob_t g;
	size_t i;
	int ret;

	if (!dir || !*dir)
		dir = VROCE_TEST_DATA_DIR;
	snprintf(pattern, sizeof(pattern), "%s/%s-*.pcap", dir, src->prefix);
	ret = glob(pattern, 0, NULL, &g);
	if (ret == GLOB_NOMATCH || (ret == 0 && g.gl_pathc == 0)) {
		print_message("# SKIP: no %s capture matches %s yet\n",
			      src->prefix, pattern);
		if (ret == 0)
			globfree(&g);
		skip();
	}
	assert_int_equal(ret, 0);
	for (i = 0; i < g.gl_pathc; i++)
		check_pcap(g.gl_pathv[i], src);
	globfree(&g);
}

static void test_rxe_captures(void **state)
{
	(void)state;
	check_captures(&cap_sources[0]);
}

static void test_vroce_captures(void **state)
{
	(void)state;
	check_captures(&cap_sources[1]);
}

/*
 * A frame as a capture holds it: Ethernet, IPv@ipver from 192.0.2.1 /
 * 2001:db8::1 to .2 / ::2, UDP @sport -> 4791, BTH (@opcode, @dqpn), a
 * DETH from @sqpn if the opcode has one, other extension headers zero,
 * @paylen bytes of payload, pad and a good ICRC. Returns its length.
 */
static size_t build_frame(uint8_t *f, int ipver, uint16_t sport,
			  uint8_t opcode, uint32_t dqpn, uint32_t sqpn,
			  size_t paylen)
{
	const struct vroce_opcode_info *op = vroce_opcode_info(opcode);
	struct vroce_bth bth = { 0 };
	struct vroce_deth deth = { .qkey = 0x11111111, .sqpn = sqpn };
	size_t iphl = ipver == 4 ? 20 : 40, pad = vroce_pad_len(paylen);
	size_t udp_len, ip_len, i;
	unsigned int doff;
	uint8_t *ip = f + 14, *udp = ip + iphl, *t = udp + 8;

	assert_non_null(op);
	udp_len = 8 + op->hdr_len + paylen + pad + VROCE_ICRC_LEN;
	ip_len = iphl + udp_len;
	memset(f, 0, 14 + ip_len);
	f[0] = 0x02;		/* 02:00:00:00:00:02 <- 02:00:00:00:00:01 */
	f[5] = 0x02;
	f[6] = 0x02;
	f[11] = 0x01;
	if (ipver == 4) {
		f[12] = 0x08;
		ip[0] = 0x45;
		ip[2] = (uint8_t)(ip_len >> 8);
		ip[3] = (uint8_t)ip_len;
		ip[6] = 0x40;	/* DF */
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, "\xc0\x00\x02\x01\xc0\x00\x02\x02", 8);
	} else {
		f[12] = 0x86;
		f[13] = 0xdd;
		ip[0] = 0x60;
		ip[4] = (uint8_t)(udp_len >> 8);
		ip[5] = (uint8_t)udp_len;
		ip[6] = 17;
		ip[7] = 64;
		memcpy(ip + 8, "\x20\x01\x0d\xb8", 4);
		ip[23] = 1;
		memcpy(ip + 24, "\x20\x01\x0d\xb8", 4);
		ip[39] = 2;
	}
	udp[0] = (uint8_t)(sport >> 8);
	udp[1] = (uint8_t)sport;
	udp[2] = VROCE_UDP_PORT >> 8;
	udp[3] = VROCE_UDP_PORT & 0xff;
	udp[4] = (uint8_t)(udp_len >> 8);
	udp[5] = (uint8_t)udp_len;

	bth.opcode = opcode;
	bth.pad = (uint8_t)pad;
	bth.pkey = VROCE_DEFAULT_PKEY;
	bth.dqpn = dqpn;
	bth.psn = 0x123;
	assert_int_equal(vroce_bth_pack(&bth, t, VROCE_BTH_LEN), VROCE_BTH_LEN);
	doff = vroce_hdr_offset(op, VROCE_HDR_DETH);
	if (doff)
		assert_int_equal(vroce_deth_pack(&deth, t + doff, VROCE_DETH_LEN),
				 VROCE_DETH_LEN);
	for (i = 0; i < paylen; i++)
		t[op->hdr_len + i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(vroce_icrc_generate(ip, ip_len), (int)ip_len - 4);
	return 14 + ip_len;
}

/* The ICRC again after editing a frame of build_frame(). */
static void refresh(uint8_t *f, size_t len)
{
	assert_int_equal(vroce_icrc_generate(f + 14, len - 14), (int)len - 18);
}

static enum cap_err classify(const uint8_t *f, size_t len,
			     const struct cap_expect *ex)
{
	struct cap_pkt cp;
	struct cap_view cv;

	return cap_classify(PCAP_LINKTYPE_ETHERNET, f, len, len, ex, &cp, &cv);
}

/* The capture checks reject what is wrong, one fault at a time. */
static void test_capture_checks_fail(void **state)
{
	static uint8_t f[MAX_PKT];
	const struct cap_expect rc4 = { 4, VROCE_TRANSPORT_RC, 1, NULL, 0 };
	const struct cap_expect rc6 = { 6, VROCE_TRANSPORT_RC, 1, NULL, 0 };
	const struct cap_expect ud4 = { 4, VROCE_TRANSPORT_UD, 1, NULL, 0 };
	const struct cap_expect ud4_rxe = { 4, VROCE_TRANSPORT_UD, 0, NULL, 0 };
	struct cap_pkt cp;
	struct cap_view cv;
	size_t n, b;
	uint8_t *udp = f + 14 + 20, *bth = udp + 8;

	(void)state;
	n = build_frame(f, 4, 0xc123, VROCE_OP_RC_SEND_ONLY, 0x11, 0, 13);
	assert_int_equal(classify(f, n, &rc4), CAP_OK);
	assert_int_equal(cap_classify(PCAP_LINKTYPE_ETHERNET, f, n - 1, n,
				      &rc4, &cp, &cv), CAP_TRUNCATED);
	assert_int_equal(classify(f, n, &rc6), CAP_IPVER);
	assert_int_equal(classify(f, n, &ud4), CAP_TRANSPORT);

	/* every bit the ICRC covers, and the ICRC itself */
	for (b = 14 + 20 + 8 + VROCE_BTH_LEN; b < n; b++) {
		f[b] ^= 0x04;
		assert_int_equal(classify(f, n, &rc4), CAP_ICRC);
		f[b] ^= 0x04;
	}
	udp[1] ^= 0x01;		/* source port */
	assert_int_equal(classify(f, n, &rc4), CAP_ICRC);
	udp[1] ^= 0x01;

	f[12] = 0x08;		/* ARP */
	f[13] = 0x06;
	assert_int_equal(classify(f, n, &rc4), CAP_NOT_IP);
	f[13] = 0x00;
	f[14 + 9] = 6;		/* TCP */
	assert_int_equal(classify(f, n, &rc4), CAP_NOT_UDP);
	f[14 + 9] = 17;

	udp[3] ^= 0x01;		/* port 4790, even with a good ICRC */
	refresh(f, n);
	assert_int_equal(classify(f, n, &rc4), CAP_PORT);
	udp[3] ^= 0x01;
	refresh(f, n);
	assert_int_equal(classify(f, n, &rc4), CAP_OK);

	bth[0] = 0x15;		/* reserved opcode */
	refresh(f, n);
	assert_int_equal(classify(f, n, &rc4), CAP_PARSE);
	bth[0] = VROCE_OP_RC_ACK;	/* carries no payload */
	refresh(f, n);
	assert_int_equal(classify(f, n, &rc4), CAP_PARSE);
	bth[0] = VROCE_OP_RC_SEND_ONLY;
	bth[1] |= 0x01;		/* TVer 1 */
	refresh(f, n);
	assert_int_equal(classify(f, n, &rc4), CAP_PARSE);
	bth[1] &= ~0x01;
	bth[3] = 0xfe;		/* P_Key 0xfffe */
	refresh(f, n);
	assert_int_equal(classify(f, n, &rc4), CAP_BTH);
	bth[3] = 0xff;
	bth[8] |= 0x01;		/* reserved bit after AckReq */
	refresh(f, n);
	assert_int_equal(classify(f, n, &rc4), CAP_BTH);
	bth[8] &= ~0x01;
	refresh(f, n);
	bth[4] |= 0x02;		/* reserved: masked, but still wrong */
	assert_int_equal(classify(f, n, &rc4), CAP_BTH);
	bth[4] &= ~0x02;
	assert_int_equal(classify(f, n, &rc4), CAP_OK);

	n = build_frame(f, 6, 0xd00d, VROCE_OP_RC_RDMA_WRITE_ONLY, 0xabcd, 0, 5);
	assert_int_equal(classify(f, n, &rc6), CAP_OK);
	assert_int_equal(classify(f, n, &rc4), CAP_IPVER);
	f[14 + 8 + 15] ^= 0x01;	/* source address */
	assert_int_equal(classify(f, n, &rc6), CAP_ICRC);

	/* UD: vroce's source port is that of the source QP */
	n = build_frame(f, 4, vroce_udp_sport(0x42), VROCE_OP_UD_SEND_ONLY,
			0x43, 0x42, 100);
	assert_int_equal(classify(f, n, &ud4), CAP_OK);
	assert_int_equal(classify(f, n, &rc4), CAP_TRANSPORT);
	n = build_frame(f, 4, vroce_udp_sport(0x43), VROCE_OP_UD_SEND_ONLY,
			0x43, 0x42, 100);
	assert_int_equal(classify(f, n, &ud4), CAP_SPORT);
	assert_int_equal(classify(f, n, &ud4_rxe), CAP_OK);
}

/* The same for the checks of a whole capture. */
static void test_capture_file_checks_fail(void **state)
{
	static const uint8_t need[] = {
		VROCE_OP_RC_SEND_ONLY, VROCE_OP_RC_ACK,
	};
	const struct cap_expect vroce = { 4, VROCE_TRANSPORT_RC, 1, need, 2 };
	const struct cap_expect rxe = { 4, VROCE_TRANSPORT_RC, 0, need, 2 };
	const struct cap_expect ud = { 4, VROCE_TRANSPORT_UD, 1, ud_need, 1 };
	/* connections 0x11 (A) - 0x22 (B) and 0x33 (A) - 0x44 (B) */
	static const uint32_t dqpn[8] = {
		0x22, 0x22, 0x11, 0x11, 0x44, 0x44, 0x33, 0x33,
	};
	struct cap_pkt v[8], good[8];
	size_t i, bad;

	(void)state;
	memset(good, 0, sizeof(good));
	for (i = 0; i < 8; i++) {
		int a = (i / 2) % 2 == 0;	/* sent by A */

		good[i].src[0] = a ? 1 : 2;
		good[i].dst[0] = a ? 2 : 1;
		good[i].dqpn = dqpn[i];
		good[i].sport = vroce_udp_sport(dqpn[i ^ 2]);
		good[i].opcode = a ? VROCE_OP_RC_SEND_ONLY : VROCE_OP_RC_ACK;
	}
	memcpy(v, good, sizeof(v));
	assert_int_equal(cap_file_check(v, 8, &vroce, &bad), CAP_OK);
	assert_int_equal(cap_file_check(v, 8, &rxe, &bad), CAP_OK);

	v[5].sport ^= 0x100;	/* one packet of a flow */
	assert_int_equal(cap_file_check(v, 8, &rxe, &bad), CAP_FLOW);
	assert_int_equal(bad, 5);

	memcpy(v, good, sizeof(v));
	v[2].sport = v[3].sport = 0xc000;	/* a whole flow, not derived */
	assert_int_equal(cap_file_check(v, 8, &vroce, &bad), CAP_SPORT);
	assert_int_equal(bad, 2);
	assert_int_equal(cap_file_check(v, 8, &rxe, &bad), CAP_OK);

	/* rxe's way: one port for both directions of a connection */
	for (i = 0; i < 8; i++)
		v[i].sport = i < 4 ? 0xc100 : 0xc200;
	assert_int_equal(cap_file_check(v, 8, &rxe, &bad), CAP_OK);
	assert_int_equal(cap_file_check(v, 8, &vroce, &bad), CAP_SPORT);

	for (i = 0; i < 8; i++)
		v[i].sport = 0xc100;	/* one port for every QP */
	assert_int_equal(cap_file_check(v, 8, &rxe, &bad), CAP_CONST);
	assert_int_equal(bad, 0);
	/* one connection, rxe's way: one port, nothing to compare */
	assert_int_equal(cap_file_check(v, 4, &rxe, &bad), CAP_ONE_PORT);
	assert_int_equal(bad, 4);
	v[6].sport = v[7].sport = 0xc300;	/* one way it still is */
	assert_int_equal(cap_file_check(v, 8, &rxe, &bad), CAP_CONST);
	assert_int_equal(bad, 0);
	v[4].sport = v[5].sport = 0xc300;
	assert_int_equal(cap_file_check(v, 8, &rxe, &bad), CAP_OK);

	memcpy(v, good, sizeof(v));
	for (i = 0; i < 8; i++)
		if (v[i].opcode == VROCE_OP_RC_ACK)
			v[i].opcode = VROCE_OP_RC_SEND_LAST;
	assert_int_equal(cap_file_check(v, 8, &vroce, &bad), CAP_MISSING);
	assert_int_equal(cap_file_check(v, 0, &vroce, &bad), CAP_ONE_PORT);
	assert_int_equal(cap_file_check(v, 0, &ud, &bad), CAP_MISSING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32_contract),
		cmocka_unit_test(test_lrh_seed),
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_wire_order),
		cmocka_unit_test(test_generate),
		cmocka_unit_test(test_every_bit),
		cmocka_unit_test(test_streaming),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_udp_trimmed),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_capture_checks_fail),
		cmocka_unit_test(test_capture_file_checks_fail),
		cmocka_unit_test(test_rxe_captures),
		cmocka_unit_test(test_vroce_captures),
	};

	return cmocka_run_group_tests_name("icrc", tests, NULL, NULL);
}
