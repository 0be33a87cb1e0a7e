// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Traffic for 94-stale-bytes.sh: packets whose heads come from pages the
 * module used before for other packets (kernel/txbuf.c does not zero
 * them), so that a byte the module forgets to write would go out with
 * what an earlier packet left there. First many UD SENDs of 1024 bytes
 * of POISON, enough to go round the (one CPU's) ring of pages twice;
 * then small UD SENDs (1 to 3 bytes of SMALL, which need pad bytes) and,
 * on an RC QP towards a peer that never answers, small inline SENDs,
 * whose heads hold their payload and pad too (an RC payload from an MR
 * goes out in page fragments on a netdev with scatter-gather, its pad in
 * a fragment of its own). The script's capture checks each small
 * packet's payload, pad and reserved fields.
 *
 *   stale_bytes DEVICE PEER
 *
 * PEER is the peer's IPv4 address; the UD SENDs go to its QP 0x200, the
 * RC QP is connected to its QP 0x123. Prints "done" once all UD SENDs
 * completed and the RC ones were posted.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"
#include "rc_connect.h"

#define POISON		0xa5
#define SMALL		0x11
#define BIG_LEN		1024
#define BIG_SENDS	640		/* 640 KiB: the ring holds 256 KiB */
#define ROUNDS		9		/* of small SENDs of 1, 2 and 3 bytes */
#define UD_QKEY		0x11111111
#define UD_DQPN		0x200
#define BUF_SIZE	(64 * 1024)
#define SQ_DEPTH	64

/* Completes @n signaled sends on @cq within 10 s; 0 if all succeeded. */
static int reap(struct ibv_cq *cq, int n)
{
	struct ibv_wc wc[16];
	int got, i, bad = 0, spins = 0;

	while (n > 0 && spins++ < 10000000) {
		got = ibv_poll_cq(cq, 16, wc);
		if (got < 0)
			return -1;
		for (i = 0; i < got; i++)
			bad |= wc[i].status != IBV_WC_SUCCESS;
		n -= got;
	}
	return n || bad ? -1 : 0;
}

/* Posts a UD SEND of @len bytes at @addr to the peer; signaled. */
static int ud_send(struct ibv_qp *qp, struct ibv_ah *ah, struct ibv_mr *mr,
		   uint8_t *addr, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = UD_DQPN,
			   .remote_qkey = UD_QKEY },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* The UD part: the POISON flood, then the small SENDs; 0 if all went. */
static int ud_part(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_mr *mr,
		   uint8_t *buf, const union ibv_gid *dgid, int sgid_idx)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = sgid_idx,
			 .hop_limit = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	int i, err = 0;

	if (!tap_ok(qp && ah && !ud_qp_rts(qp, UD_QKEY),
		    "a UD QP in RTS and an AH to the peer"))
		return -1;
	for (i = 0; i < BIG_SENDS && !err; i++) {
		err = ud_send(qp, ah, mr, buf, BIG_LEN);
		if (!err && i % (SQ_DEPTH / 2) == SQ_DEPTH / 2 - 1)
			err = reap(cq, SQ_DEPTH / 2);
	}
	tap_ok(!err, "%d UD SENDs of %d bytes of 0x%02x", BIG_SENDS, BIG_LEN,
	       POISON);
	for (i = 0; i < 3 * ROUNDS && !err; i++)
		err = ud_send(qp, ah, mr, buf + BUF_SIZE / 2, 1 + i % 3);
	if (!err)
		err = reap(cq, 3 * ROUNDS);
	tap_ok(!err, "%d UD SENDs of 1 to 3 bytes of 0x%02x", 3 * ROUNDS,
	       SMALL);
	ibv_destroy_qp(qp);
	ibv_destroy_ah(ah);
	return err;
}

/*
 * The RC part: small inline SENDs towards a peer that never acknowledges
 * (each goes out once; the retry timer resends only the first); 0 if all
 * were posted.
 */
static int rc_part(struct ibv_pd *pd, struct ibv_cq *cq, uint8_t *buf,
		   union ibv_gid *dgid, int sgid_idx)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 16 },
	};
	struct rc_path path = {
		.dqpn = 0x123, .rq_psn = 0x1000, .sq_psn = 0x2000,
		.dgid = dgid, .sgid_idx = sgid_idx, .dest_rd_atomic = 1,
		.rd_atomic = 1, .min_rnr_timer = 1, .timeout = 14,
		.rnr_retry = 7,
	};
	struct ibv_sge sge = { .addr = (uintptr_t)buf + BUF_SIZE / 2 };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE,
	}, *bad;
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	int i, err = 0;

	if (!tap_ok(qp && !rc_connect(qp, &path),
		    "an RC QP in RTS towards QP 0x%x", path.dqpn))
		return -1;
	for (i = 0; i < 6 && !err; i++) {
		sge.length = 1 + i % 3;
		err = ibv_post_send(qp, &wr, &bad);
	}
	tap_ok(!err, "6 inline RC SENDs of 1 to 3 bytes of 0x%02x", SMALL);
	/* The QP stays until exit: its packets go out again meanwhile. */
	return err;
}

int main(int argc, char **argv)
{
	union ibv_gid dgid = { .raw = { [10] = 0xff, [11] = 0xff } };
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	int sgid_idx;

	if (argc != 3) {
		tap_ok(0, "usage: stale_bytes DEVICE PEER");
		return tap_done();
	}
	ctx = open_by_name(argv[1]);
	if (!tap_ok(ctx != NULL, "open %s", argv[1]))
		return tap_done();
	sgid_idx = roce_v2_ipv4_gid(ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2 * SQ_DEPTH, NULL, NULL, 0);
	buf = aligned_alloc(4096, BUF_SIZE);
	mr = pd && buf ? ibv_reg_mr(pd, buf, BUF_SIZE, 0) : NULL;
	if (!tap_ok(sgid_idx >= 0 && cq && mr &&
		    inet_pton(AF_INET, argv[2], &dgid.raw[12]) == 1,
		    "GID %d, a PD, a CQ, an MR, peer %s", sgid_idx, argv[2]))
		return tap_done();
	memset(buf, POISON, BUF_SIZE / 2);
	memset(buf + BUF_SIZE / 2, SMALL, BUF_SIZE / 2);
	if (!ud_part(pd, cq, mr, buf, &dgid, sgid_idx))
		rc_part(pd, cq, buf, &dgid, sgid_idx);
	printf("done\n");
	fflush(stdout);
	sleep(1);
	return tap_done();
}
