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

/* ---- rdma_rxe captures ---- */

struct cap_stats {
	int roce, v4, v6, truncated;
	int per_op[256];
};

static void check_captured(const char *file, int idx, const uint8_t *ip,
			   size_t len, int ipver, size_t bth_off,
			   struct cap_stats *st)
{
	static uint8_t p[MAX_PKT];
	struct vroce_pkt pkt;
	uint32_t wire, icrc, crc;
	size_t end = len - 4, last;
	int ret, off;

	assert_true(len <= MAX_PKT);
	memcpy(p, ip, len);
	wire = vroce_icrc_get(p + end);

	ret = vroce_icrc_compute(&icrc, p, len);
	if (ret != (int)end || icrc != wire)
		print_error("%s: packet %d (%s, IPv%d): ICRC on the wire %08x, computed %08x (ret %d)\n",
			    file, idx, vroce_opcode_name(p[bth_off]), ipver,
			    wire, icrc, ret);
	assert_int_equal(ret, (int)end);
	assert_int_equal(icrc, wire);
	assert_int_equal(vroce_icrc_verify(p, len), 0);
	assert_int_equal(ref_icrc(p, len), wire);

	/* rxe's packets parse, with an opcode we know */
	ret = vroce_pkt_parse(&pkt, p + bth_off, len - bth_off);
	if (ret)
		print_error("%s: packet %d: opcode 0x%02x: parse error %d\n",
			    file, idx, p[bth_off], ret);
	assert_int_equal(ret, 0);
	st->per_op[p[bth_off]]++;

	/* headers, then the rest in two pieces */
	off = vroce_icrc_begin(&crc, p, bth_off + VROCE_BTH_LEN);
	assert_int_equal(off, (int)(bth_off + VROCE_BTH_LEN));
	crc = vroce_icrc_update(crc, p + off, pkt.hdr_len - VROCE_BTH_LEN);
	crc = vroce_icrc_update(crc, p + bth_off + pkt.hdr_len,
				end - bth_off - pkt.hdr_len);
	assert_int_equal(vroce_icrc_final(crc), wire);

	/* masked fields may change in flight */
	p[ipver == 4 ? 8 : 7] ^= 0x21;		/* TTL / hop limit */
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

	st->roce++;
	if (ipver == 4)
		st->v4++;
	else
		st->v6++;
}

static void check_pcap(const char *path)
{
	struct pcap_file f;
	struct pcap_rec rec;
	struct vroce_ipudp iu;
	struct cap_stats *st;
	char err[512];
	const char *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	uint16_t type;
	long l3;
	int ret, idx = 0, op;

	if (pcap_open(&f, path, err, sizeof(err))) {
		print_error("%s\n", err);
		fail();
	}
	st = calloc(1, sizeof(*st));
	assert_non_null(st);
	while ((ret = pcap_next(&f, &rec)) == 1) {
		idx++;
		if (rec.caplen < rec.origlen) {
			st->truncated++;
			continue;
		}
		l3 = pcap_l3(f.linktype, rec.data, rec.caplen, &type);
		if (l3 < 0)
			continue;
		ret = vroce_ipudp_parse(&iu, rec.data + l3, rec.caplen - l3);
		if (ret < 0 || iu.dport != VROCE_UDP_PORT)
			continue;
		check_captured(file, idx, rec.data + l3,
			       (size_t)iu.ip_hlen + iu.udp_len, iu.ipver,
			       (size_t)ret, st);
	}
	if (ret < 0)
		print_error("%s: file ends inside a record\n", file);
	assert_int_equal(ret, 0);

	print_message("# %s: link type %u, %d records, %d RoCEv2 packets (IPv4 %d, IPv6 %d), %d cut by snaplen\n",
		      file, f.linktype, idx, st->roce, st->v4, st->v6,
		      st->truncated);
	for (op = 0; op < 256; op++)
		if (st->per_op[op])
			print_message("#   %-36s %d\n", vroce_opcode_name(op),
				      st->per_op[op]);
	if (!st->roce)
		print_error("%s: no complete RoCEv2 packet (UDP port 4791) in the capture\n",
			    file);
	assert_true(st->roce > 0);
	free(st);
	pcap_close(&f);
}

static void test_rxe_captures(void **state)
{
	const char *dir = getenv("VROCE_TEST_DATA");
	char pattern[4096];
	glob_t g;
	size_t i;
	int ret;

	(void)state;
	if (!dir || !*dir)
		dir = VROCE_TEST_DATA_DIR;
	snprintf(pattern, sizeof(pattern), "%s/rxe-*.pcap", dir);
	ret = glob(pattern, 0, NULL, &g);
	if (ret == GLOB_NOMATCH || (ret == 0 && g.gl_pathc == 0)) {
		print_message("# SKIP: no rdma_rxe capture matches %s yet\n",
			      pattern);
		if (ret == 0)
			globfree(&g);
		skip();
	}
	assert_int_equal(ret, 0);
	for (i = 0; i < g.gl_pathc; i++)
		check_pcap(g.gl_pathv[i]);
	globfree(&g);
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
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_rxe_captures),
	};

	return cmocka_run_group_tests_name("icrc", tests, NULL, NULL);
}
