// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * IPv4/IPv6 + UDP parsing and the UDP source port.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "roce.h"
#include "util.h"

static int parse(struct vroce_ipudp *iu, const uint8_t *buf, size_t len)
{
	uint8_t *b = tight_copy(buf, len);
	int ret = vroce_ipudp_parse(iu, b, len);

	free(b);
	return ret;
}

/* IPv4, total length 48: 20 IP + 8 UDP + 20 (BTH + 4 + ICRC). */
static const char v4[] =
	"45 02 00 30 12 34 40 00 40 11 00 00 0a 00 00 01 0a 00 00 02"
	"c0 01 12 b7 00 1c 00 00"
	"11 00 ff ff 00 00 00 01 00 00 00 01 00 00 00 01 00 00 00 00";

/* IPv6, payload length 28: 8 UDP + 20. */
static const char v6[] =
	"61 a1 23 45 00 1c 11 40"
	"20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"
	"20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 02"
	"d0 0d 12 b7 00 1c be ef"
	"11 00 ff ff 00 00 00 01 00 00 00 01 00 00 00 01 00 00 00 00";

static void test_ipv4(void **state)
{
	uint8_t p[128];
	size_t n = hex2bin(v4, p, sizeof(p)), l;
	struct vroce_ipudp iu;

	(void)state;
	assert_int_equal(n, 48);
	assert_int_equal(parse(&iu, p, n), 28);
	assert_int_equal(iu.ipver, 4);
	assert_int_equal(iu.tclass, 0x02);
	assert_int_equal(iu.ip_hlen, 20);
	assert_int_equal(iu.sport, 0xc001);
	assert_int_equal(iu.dport, VROCE_UDP_PORT);
	assert_int_equal(iu.udp_len, 28);

	/* trailing bytes (Ethernet padding) are fine */
	memset(p + n, 0, 12);
	assert_int_equal(parse(&iu, p, n + 12), 28);

	/* any truncation fails */
	for (l = 0; l < n; l++)
		assert_int_equal(parse(&iu, p, l), VROCE_ESHORT);
}

static void test_ipv4_options(void **state)
{
	uint8_t p[128], q[128];
	size_t n = hex2bin(v4, p, sizeof(p));
	struct vroce_ipudp iu;

	(void)state;
	/* insert 8 bytes of options (NOPs): IHL 7, total length 56 */
	memcpy(q, p, 20);
	memset(q + 20, 1, 8);
	memcpy(q + 28, p + 20, n - 20);
	q[0] = 0x47;
	q[3] = 56;
	assert_int_equal(parse(&iu, q, n + 8), 36);
	assert_int_equal(iu.ip_hlen, 28);
	assert_int_equal(iu.udp_len, 28);
}

static void test_ipv4_bad(void **state)
{
	uint8_t p[128];
	size_t n = hex2bin(v4, p, sizeof(p));
	struct vroce_ipudp iu;

	(void)state;
	p[0] = 0x44;		/* IHL 4 */
	assert_int_equal(parse(&iu, p, n), VROCE_EINVAL);
	p[0] = 0x45;

	p[9] = 6;		/* TCP */
	assert_int_equal(parse(&iu, p, n), VROCE_EPROTO);
	p[9] = 17;

	p[6] = 0x20;		/* MF: a fragment */
	assert_int_equal(parse(&iu, p, n), VROCE_EPROTO);
	p[6] = 0x00;
	p[7] = 0x10;		/* fragment offset */
	assert_int_equal(parse(&iu, p, n), VROCE_EPROTO);
	p[6] = 0x40;
	p[7] = 0x00;

	/*
	 * The IP datagram beyond the buffer, the UDP one within: what the
	 * UDP stack leaves after trimming a packet to its UDP length.
	 * Found by tests/fuzz: this used to fail, and so did the ICRC.
	 */
	p[3] = 0x31;
	assert_int_equal(parse(&iu, p, n), 28);
	assert_int_equal(iu.udp_len, 28);
	p[25] = 0x1d;		/* the UDP datagram beyond the buffer too */
	assert_int_equal(parse(&iu, p, n), VROCE_ESHORT);
	p[25] = 0x1c;
	p[3] = 0x1a;		/* no room for the UDP header */
	assert_int_equal(parse(&iu, p, n), VROCE_EINVAL);
	p[3] = 0x30;

	p[25] = 0x1d;		/* UDP length beyond the datagram */
	assert_int_equal(parse(&iu, p, n), VROCE_EINVAL);
	p[25] = 0x07;		/* UDP length below its header */
	assert_int_equal(parse(&iu, p, n), VROCE_EINVAL);
	p[25] = 0x1c;

	p[0] = 0x55;		/* IP version 5 */
	assert_int_equal(parse(&iu, p, n), VROCE_EINVAL);
	p[0] = 0x45;
	assert_int_equal(parse(&iu, p, n), 28);
}

static void test_ipv6(void **state)
{
	uint8_t p[128];
	size_t n = hex2bin(v6, p, sizeof(p)), l;
	struct vroce_ipudp iu;

	(void)state;
	assert_int_equal(n, 68);
	assert_int_equal(parse(&iu, p, n), 48);
	assert_int_equal(iu.ipver, 6);
	assert_int_equal(iu.tclass, 0x1a);
	assert_int_equal(iu.ip_hlen, 40);
	assert_int_equal(iu.sport, 0xd00d);
	assert_int_equal(iu.dport, 4791);
	assert_int_equal(iu.udp_len, 28);
	for (l = 0; l < n; l++)
		assert_int_equal(parse(&iu, p, l), VROCE_ESHORT);

	p[6] = 0;		/* hop-by-hop extension header */
	assert_int_equal(parse(&iu, p, n), VROCE_EPROTO);
	p[6] = 17;
	p[5] = 0x04;		/* payload too short for UDP */
	assert_int_equal(parse(&iu, p, n), VROCE_EINVAL);
	p[5] = 0x1c;
	p[45] = 0x1d;		/* UDP length beyond the payload */
	assert_int_equal(parse(&iu, p, n), VROCE_EINVAL);

	p[5] = 0x1d;		/* the UDP datagram beyond the buffer */
	assert_int_equal(parse(&iu, p, n), VROCE_ESHORT);
	p[45] = 0x1c;		/* IP payload beyond the buffer, UDP within */
	assert_int_equal(parse(&iu, p, n), 48);
	assert_int_equal(iu.udp_len, 28);
}

static void test_sport(void **state)
{
	uint32_t qpn;
	int seen[16384] = { 0 };
	int distinct = 0;
	uint16_t s;

	(void)state;
	for (qpn = 0; qpn < 0x1000000; qpn += 97) {
		s = vroce_udp_sport(qpn);
		assert_true(s >= 0xc000);
		assert_int_equal(s, vroce_udp_sport(qpn));
	}
	/* Neighbouring QPNs land far apart and cover the range. */
	for (qpn = 0; qpn < 16384; qpn++) {
		s = vroce_udp_sport(qpn + 17);
		if (!seen[s - 0xc000]++)
			distinct++;
	}
	assert_true(distinct > 16384 / 2);
	assert_int_not_equal(vroce_udp_sport(1), vroce_udp_sport(2));
	/* Only the 24 QPN bits count. */
	assert_int_equal(vroce_udp_sport(0x1000005), vroce_udp_sport(5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_ipv4_bad),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_sport),
	};

	return cmocka_run_group_tests_name("ipudp", tests, NULL, NULL);
}
