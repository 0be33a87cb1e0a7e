// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * rc_stress: many pipelined RC requests of mixed opcodes and sizes between
 * two nodes, every byte checked; meant to run over a lossy wire (netem) to
 * exercise retransmission, duplicate detection and, when the server lags
 * behind with its receives, RNR.
 *
 *   rc_stress -d DEV -g GIDIDX [-p PORT] -s [--deadline S]        server
 *   rc_stress -d DEV -g GIDIDX [-p PORT] [-n COUNT] [--timeout T]
 *             [--seed S] [--window W] [--max-size B] [--ops LIST]
 *             [--allow-atomic-no-result] [--deadline S] PEER_IP   client
 *
 * The client posts COUNT messages on one RC QP towards the server's, at
 * most W (default 16) messages in flight. Message number seq (0 based) is
 * a pure function of the seed and seq (plan_build()): its opcode, its size
 * (0 to 64 KiB by default, biased towards small sizes and the path MTU of
 * 1024 and its neighbours), where it goes in the server's buffer, the
 * atomic operands. The client sends the seed with its QP number, so the
 * server rebuilds the same plan and knows what each receive must hold.
 *
 *   SEND, SEND_WITH_IMM      into the server's posted receives; the server
 *                            checks opcode, imm (= seq), byte_len and the
 *                            payload, then posts the receive again
 *   RDMA_WRITE               into one of W write slots, followed by an
 *                            RDMA_READ of the same bytes (the read-back),
 *                            which the client checks; at the end the
 *                            server checks every slot holds its last write
 *   RDMA_WRITE_WITH_IMM      into one of 4W slots; the server checks the
 *                            bytes when the receive completes
 *   RDMA_READ                of a pattern the server wrote at the start;
 *                            the client checks the bytes
 *   ATOMIC_FETCH_AND_ADD,    on one 64-bit counter of the server; the
 *   ATOMIC_CMP_AND_SWP       client checks every returned old value (the
 *                            plan knows the sequence, CMP_AND_SWP compares
 *                            equal about half the time) and the server
 *                            the final value: an atomic executed twice (a
 *                            retransmission replayed instead of answered
 *                            from the responder's cache) shows
 *
 * --allow-atomic-no-result: an atomic that completes with IBV_WC_SUCCESS
 * but leaves its result buffer as it was (the client fills it with 0xa5
 * before posting) is counted and reported, not failed. rdma_rxe's
 * requester does that under loss (Linux 6.1): its responder answers a
 * duplicate SEND or WRITE with an ACK of the PSN of its most recent
 * request (duplicate_request(): ack_psn - 1, and only atomics, not READs,
 * move ack_psn), and its completer takes a plain ACK of an atomic's PSN
 * as that atomic's completion (COMPST_WRITE_SEND), where IBTA has it be
 * an implied NAK: retry. The values that do come back must still be
 * right, and the server's final counter still shows an atomic executed
 * twice.
 *
 * A payload of 8 bytes or more starts with seq and the length (32-bit
 * little-endian each), the rest is a stream derived from the seed and seq.
 * Every request is signaled; an RC send queue completes in order, so the
 * client also checks the order of its completions (and the server that of
 * its receives). Slots are reused only after the message that last used
 * them has completed (W write and client slots, 2W receives, 4W
 * WRITE_WITH_IMM slots: a WRITE_WITH_IMM may place its first packets
 * before the responder finds it has no receive for it, so its target must
 * not be one the server may still be checking).
 *
 * The client's send PSN starts within 1024 of 2^24, so any run of more
 * than a few hundred messages crosses the PSN wrap. QP attributes: path
 * MTU 1024, retry_cnt 7, rnr_retry 7, timeout --timeout (the IBTA
 * exponent, default 12: 16.8 ms), min RNR timer 0.64 ms; max_rd_atomic is
 * the smaller of both devices' limits and 16.
 *
 * The client prints TAP: one line per opcode class with its counts, "all N
 * messages completed with IBV_WC_SUCCESS" and "all bytes verified". It
 * gives up at the deadline (--deadline, default 600 s) and when no
 * completion comes for 60 s, saying what it waited for; the server at its
 * deadline or when the client goes away. An alarm a minute after the
 * deadline ends either if anything blocks regardless. The exit status is
 * 0 only if every check passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "tap.h"
#include "open_dev.h"
#include "rc_connect.h"
#include "xchg.h"

#define STRESS_PORT	18610
#define MTU		1024
#define COUNT_DEF	10000
#define COUNT_MAX	10000000u
#define WINDOW_DEF	16
#define WINDOW_MAX	64
#define MAX_LEN_DEF	65536
#define MAX_LEN_MAX	(1u << 20)
#define SLOT_PAD	64	/* slots are this much longer than a message */
#define CTR_OFF		0	/* the atomic counter in the server's buffer */
#define RD_ATOM_MAX	16
#define STALL_MS	60000
#define MAX_DIAG	10	/* diagnostics of each kind of error */
#define POLL_BATCH	32
#define HELLO_MAGIC	0x7263737472657373ull	/* "rcstress" */

enum op {
	OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_FADD,
	OP_CAS, OP_NUM
};

#define OPS_ALL		((1u << OP_NUM) - 1)
#define OPS_ATOMIC	((1u << OP_FADD) | (1u << OP_CAS))

static const char *const op_name[OP_NUM] = {
	"SEND", "SEND_WITH_IMM", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM",
	"RDMA_READ", "ATOMIC_FETCH_AND_ADD", "ATOMIC_CMP_AND_SWP",
};

/* Names for --ops. */
static const char *const op_key[OP_NUM] = {
	"send", "send_imm", "write", "write_imm", "read", "fadd", "cas",
};

enum cmd { C_HELLO = 1, C_DONE };

struct cfg {
	uint64_t seed;
	uint32_t count, window, max_len, ops;
	int timeout;
	int deadline;		/* seconds */
	bool allow_no_result;	/* client: --allow-atomic-no-result */
};

/* The server's buffer: the counter, then the areas, slot after slot. */
struct layout {
	uint64_t slot;			/* max_len + SLOT_PAD, 64-byte multiple */
	uint64_t rd_off, rd_len;	/* RDMA READ source, a fixed stream */
	uint64_t wr_off;		/* RDMA_WRITE slots */
	uint64_t imm_off;		/* RDMA_WRITE_WITH_IMM slots */
	uint64_t rv_off;		/* receive buffers */
	uint64_t size;
	uint32_t nwr, nimm, nrv;
};

/* One message of the plan. */
struct msg {
	uint64_t roff;		/* where in the server's buffer */
	uint64_t cmp, swp;	/* atomics: compare (or add) and swap */
	uint64_t old;		/* atomics: the value the counter must have */
	uint32_t len;
	uint32_t rn;		/* receive number, for the ops that take one */
	uint8_t op;
	uint8_t inl;		/* client: inline if it fits */
};

struct plan {
	struct msg *m;
	uint32_t *recv_seq;	/* receive number -> seq */
	uint32_t nrecv;
	uint64_t ctr_init, ctr_final;
	uint32_t nops[OP_NUM];
	uint64_t bytes[OP_NUM];
};

struct node {
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;	/* NULL: poll every millisecond */
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint64_t size;
	union ibv_gid gid;
	int gid_idx;
	uint32_t psn;
	uint32_t max_inline;
	int fd;				/* the TCP side channel */
};

static struct node nd = { .fd = -1 };
static struct cfg cf;
static struct layout lay;
static struct plan pl;
static long long deadline_ms;
static const char *prog = "rc_stress";

/* ---- numbers and byte streams ------------------------------------------ */

/* splitmix64's finaliser: a bijective mix of all 64 bits. */
static uint64_t h64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Random word @lane of message @seq of the run with seed @seed. */
static uint64_t rnd(uint64_t seed, uint64_t seq, unsigned int lane)
{
	return h64(h64(seed ^ (seq * 0xd6e8feb86659fd93ull)) + lane);
}

/*
 * A byte stream: byte i is byte (i % 8), little-endian, of word i / 8,
 * which is the header for word 0 if there is one, else derived from @key.
 */
struct stream {
	uint64_t key;
	uint64_t hdr;
	bool has_hdr;
};

static uint64_t stream_word(const struct stream *s, uint64_t w)
{
	if (w == 0 && s->has_hdr)
		return s->hdr;
	return h64(s->key ^ (w * 0xa0761d6478bd642full));
}

/* Bytes [@base, @base + @len) of the stream into @p. */
static void stream_fill(const struct stream *s, uint8_t *p, uint64_t len,
			uint64_t base)
{
	uint64_t j, i, x = 0;

	for (j = 0; j < len; j++) {
		i = base + j;
		if (j == 0 || !(i & 7))
			x = stream_word(s, i >> 3);
		p[j] = x >> ((i & 7) * 8);
	}
}

/* Index of the first byte of @p that differs from the stream, or -1. */
static int64_t stream_check(const struct stream *s, const uint8_t *p,
			    uint64_t len, uint64_t base, uint8_t *want)
{
	uint64_t j, i, x = 0;
	uint8_t w;

	for (j = 0; j < len; j++) {
		i = base + j;
		if (j == 0 || !(i & 7))
			x = stream_word(s, i >> 3);
		w = x >> ((i & 7) * 8);
		if (p[j] != w) {
			*want = w;
			return j;
		}
	}
	return -1;
}

/* The payload of message @seq: header (seq, len) if len >= 8, then data. */
static struct stream payload(uint32_t seq, uint32_t len)
{
	struct stream s = {
		.key = h64(cf.seed ^ 0x5041594c4f414400ull) ^ h64(seq),
		.hdr = seq | (uint64_t)len << 32,
		.has_hdr = len >= 8,
	};

	return s;
}

/* What the server's RDMA READ area holds. */
static struct stream read_area(void)
{
	struct stream s = { .key = h64(cf.seed ^ 0x5245414441524541ull) };

	return s;
}

static uint32_t le32_at(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Checks @len bytes at @p against the payload of @seq; says what differs
 * (as a diagnostic, through @say) unless @quiet.
 */
static bool check_payload(const char *who, const uint8_t *p, uint32_t seq,
			  uint32_t len, bool quiet,
			  void (*say)(const char *, ...))
{
	struct stream s = payload(seq, len);
	uint8_t want = 0;
	int64_t at = stream_check(&s, p, len, 0, &want);

	if (at < 0)
		return true;
	if (quiet)
		return false;
	if (len >= 8)
		say("%s: seq %u (%s, %u bytes): byte %lld is 0x%02x, want 0x%02x; the data starts with seq %u, length %u",
		    who, seq, op_name[pl.m[seq].op], len, (long long)at, p[at],
		    want, le32_at(p), le32_at(p + 4));
	else
		say("%s: seq %u (%s, %u bytes): byte %lld is 0x%02x, want 0x%02x",
		    who, seq, op_name[pl.m[seq].op], len, (long long)at, p[at],
		    want);
	return false;
}

/* ---- the plan ----------------------------------------------------------- */

static void layout_init(void)
{
	lay.slot = (cf.max_len + SLOT_PAD + 63) & ~63ull;
	lay.nwr = cf.window;
	lay.nimm = 4 * cf.window;
	lay.nrv = 2 * cf.window;
	lay.rd_off = 4096;
	lay.rd_len = 4ull * cf.max_len + 4096;
	lay.wr_off = lay.rd_off + ((lay.rd_len + 4095) & ~4095ull);
	lay.imm_off = lay.wr_off + lay.nwr * lay.slot;
	lay.rv_off = lay.imm_off + lay.nimm * lay.slot;
	lay.size = lay.rv_off + lay.nrv * lay.slot;
}

/*
 * A size: one in 16 is 0, 5 in 16 are 1-64 bytes, one in 16 is next to a
 * multiple of the MTU, 3 in 16 are up to 4 KiB, 4 in 16 up to 16 KiB and 2
 * in 16 up to @max.
 */
static uint32_t pick_len(uint64_t r, uint32_t max)
{
	static const uint32_t edge[] = {
		MTU - 1, MTU, MTU + 1, 2 * MTU, 2 * MTU + 1, 4 * MTU,
	};
	uint32_t x = r >> 8, len;
	unsigned int c = r & 15;

	if (c == 0)
		len = 0;
	else if (c <= 5)
		len = 1 + x % 64;
	else if (c == 6)
		len = edge[x % (sizeof(edge) / sizeof(edge[0]))];
	else if (c <= 9)
		len = 1 + x % 4096;
	else if (c <= 13)
		len = 1 + x % 16384;
	else
		len = 1 + x % max;
	return len > max ? max : len;
}

/* Builds the plan of cf.count messages over the opcodes in cf.ops. */
static int plan_build(void)
{
	uint32_t en[OP_NUM], nen = 0, seq, i;
	uint64_t ctr, r;

	for (i = 0; i < OP_NUM; i++)
		if (cf.ops & (1u << i))
			en[nen++] = i;
	if (!nen)
		return -1;
	memset(&pl, 0, sizeof(pl));
	pl.m = calloc(cf.count ? cf.count : 1, sizeof(*pl.m));
	pl.recv_seq = calloc(cf.count ? cf.count : 1, sizeof(*pl.recv_seq));
	if (!pl.m || !pl.recv_seq)
		return -1;
	ctr = pl.ctr_init = rnd(cf.seed, ~0ull, 0);
	for (seq = 0; seq < cf.count; seq++) {
		struct msg *m = &pl.m[seq];

		r = rnd(cf.seed, seq, 0);
		m->op = en[r % nen];
		m->inl = (r >> 40) & 1;
		m->len = pick_len(rnd(cf.seed, seq, 1), cf.max_len);
		r = rnd(cf.seed, seq, 2);
		switch (m->op) {
		case OP_SEND:
		case OP_SEND_IMM:
			m->rn = pl.nrecv;
			pl.recv_seq[pl.nrecv++] = seq;
			m->roff = lay.rv_off + (m->rn % lay.nrv) * lay.slot;
			break;
		case OP_WRITE_IMM:
			m->rn = pl.nrecv;
			pl.recv_seq[pl.nrecv++] = seq;
			m->roff = lay.imm_off + (m->rn % lay.nimm) * lay.slot +
				  r % SLOT_PAD;
			break;
		case OP_WRITE:
			m->roff = lay.wr_off + (seq % lay.nwr) * lay.slot +
				  r % SLOT_PAD;
			break;
		case OP_READ:
			m->roff = lay.rd_off + r % (lay.rd_len - m->len + 1);
			break;
		case OP_FADD:
			m->len = 8;
			m->roff = CTR_OFF;
			m->cmp = rnd(cf.seed, seq, 3);
			m->old = ctr;
			ctr += m->cmp;
			break;
		case OP_CAS:
			m->len = 8;
			m->roff = CTR_OFF;
			m->swp = rnd(cf.seed, seq, 3);
			m->old = ctr;
			if (r & 1) {
				m->cmp = ctr;
				ctr = m->swp;
			} else {
				m->cmp = ctr ^ (rnd(cf.seed, seq, 4) | 1);
			}
			break;
		}
		pl.nops[m->op]++;
		pl.bytes[m->op] += m->len;
	}
	pl.ctr_final = ctr;
	return 0;
}

/* Receives the first @done messages must have consumed. */
static uint32_t recvs_before(uint32_t done)
{
	uint32_t seq, k = 0;

	for (seq = 0; seq < done && seq < cf.count; seq++)
		if (pl.m[seq].op == OP_SEND || pl.m[seq].op == OP_SEND_IMM ||
		    pl.m[seq].op == OP_WRITE_IMM)
			k++;
	return k;
}

/* ---- device, QP, completions -------------------------------------------- */

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int dev_open(const char *dev, int gid_idx)
{
	nd.gid_idx = gid_idx;
	nd.ctx = open_by_name(dev);
	if (!nd.ctx) {
		fprintf(stderr, "%s: cannot open %s\n", prog, dev);
		return -1;
	}
	if (ibv_query_device(nd.ctx, &nd.dev) ||
	    ibv_query_gid(nd.ctx, 1, gid_idx, &nd.gid)) {
		fprintf(stderr, "%s: query %s: %s\n", prog, dev,
			strerror(errno));
		return -1;
	}
	nd.pd = ibv_alloc_pd(nd.ctx);
	if (!nd.pd) {
		fprintf(stderr, "%s: alloc_pd: %s\n", prog, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The buffer (@size bytes), its MR, a CQ of @cqe entries (with a
 * completion channel if the device gives one) and an RC QP.
 */
static int res_create(uint64_t size, int cqe, int send_wr, int recv_wr)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp_init_attr ia;

	nd.size = size;
	nd.buf = map(size);
	if (!nd.buf)
		return -1;
	nd.mr = ibv_reg_mr(nd.pd, nd.buf, size, acc);
	if (!nd.mr)
		return -1;
	nd.ch = ibv_create_comp_channel(nd.ctx);
	if (nd.ch &&
	    fcntl(nd.ch->fd, F_SETFL, fcntl(nd.ch->fd, F_GETFL) | O_NONBLOCK)) {
		ibv_destroy_comp_channel(nd.ch);
		nd.ch = NULL;
	}
	nd.cq = ibv_create_cq(nd.ctx, cqe, NULL, nd.ch, 0);
	if (!nd.cq)
		return -1;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = nd.cq;
	ia.recv_cq = nd.cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = send_wr;
	ia.cap.max_recv_wr = recv_wr;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = 64;
	nd.qp = ibv_create_qp(nd.pd, &ia);
	if (!nd.qp) {
		ia.cap.max_inline_data = 0;
		nd.qp = ibv_create_qp(nd.pd, &ia);
	}
	if (!nd.qp)
		return -1;
	nd.max_inline = ia.cap.max_inline_data;
	/* Within 1024 of the 24-bit wrap: every run crosses it. */
	nd.psn = 0xffffff - (lrand48() & 0x3ff);
	return 0;
}

static void res_destroy(void)
{
	if (nd.qp)
		ibv_destroy_qp(nd.qp);
	if (nd.cq)
		ibv_destroy_cq(nd.cq);
	if (nd.ch)
		ibv_destroy_comp_channel(nd.ch);
	if (nd.mr)
		ibv_dereg_mr(nd.mr);
	if (nd.pd)
		ibv_dealloc_pd(nd.pd);
	if (nd.ctx)
		ibv_close_device(nd.ctx);
	if (nd.fd >= 0)
		close(nd.fd);
}

static int clamp_rd(int v)
{
	return v < 1 ? 1 : v > RD_ATOM_MAX ? RD_ATOM_MAX : v;
}

/* INIT -> RTR -> RTS towards the peer's QP. */
static int qp_connect(uint32_t dqpn, uint32_t dpsn, const union ibv_gid *dgid,
		      int dest_rd_atom, int rd_atom)
{
	const struct rc_path p = {
		.dqpn = dqpn, .rq_psn = dpsn, .sq_psn = nd.psn, .dgid = dgid,
		.sgid_idx = nd.gid_idx, .dest_rd_atomic = dest_rd_atom,
		.rd_atomic = rd_atom,
		.min_rnr_timer = 12,	/* 0.64 ms */
		.timeout = cf.timeout, .rnr_retry = 7,
	};

	return rc_connect(nd.qp, &p);
}

/*
 * Up to @max completions, waiting at most @ms for the first. Returns
 * their number (0: none in time, or @xfd became readable first), or -1
 * when the verbs fail.
 */
static int cq_get(struct ibv_wc *wc, int max, int ms, int xfd)
{
	long long end = xchg_now_ms() + ms;
	struct pollfd p[2];
	struct ibv_cq *ecq;
	void *ectx;
	int r, left;

	for (;;) {
		r = ibv_poll_cq(nd.cq, max, wc);
		if (r)
			return r;
		if (nd.ch) {
			if (ibv_req_notify_cq(nd.cq, 0))
				return -1;
			r = ibv_poll_cq(nd.cq, max, wc);
			if (r)
				return r;
		}
		left = (int)(end - xchg_now_ms());
		if (left <= 0)
			return 0;
		p[0] = (struct pollfd){ .fd = nd.ch ? nd.ch->fd : -1,
					.events = POLLIN };
		p[1] = (struct pollfd){ .fd = xfd, .events = POLLIN };
		if (!nd.ch && left > 1)
			left = 1;
		r = poll(p, 2, left);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r > 0 && p[1].revents)
			return ibv_poll_cq(nd.cq, max, wc);
		if (r > 0 && p[0].revents &&
		    !ibv_get_cq_event(nd.ch, &ecq, &ectx))
			ibv_ack_cq_events(ecq, 1);
	}
}

static int ms_left(void)
{
	long long left = deadline_ms - xchg_now_ms();

	return left < 0 ? 0 : left > 1 << 30 ? 1 << 30 : (int)left;
}

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

static void on_alarm(int sig)
{
	static const char msg[] = "Bail out! rc_stress: hard deadline passed\n";

	ssize_t n;

	(void)sig;
	n = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	_exit(3);
}

static const char *wc_op_name(int op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "?";
	}
}

/* ---- server ------------------------------------------------------------- */

/* The server prints its diagnostics as "# ..." lines on its stdout. */
__attribute__((format(printf, 1, 2)))
static void srv_say(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static struct {
	uint32_t nrecv;		/* receive completions so far */
	uint32_t posted;	/* receives posted so far */
	uint32_t bad_wc;	/* error status, order, opcode, imm, byte_len */
	uint32_t bad_data;
	uint32_t ver[OP_NUM];
	uint64_t bytes;
	unsigned int diags;
} sv;

static int srv_post_recv(uint32_t rn)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(nd.buf + lay.rv_off +
				    (rn % lay.nrv) * lay.slot),
		.length = cf.max_len,
		.lkey = nd.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = rn, .sg_list = &sge, .num_sge = 1,
	}, *bad;

	return ibv_post_recv(nd.qp, &wr, &bad);
}

#define SRV_BAD(cond, ...)						\
	do {								\
		if (cond) {						\
			sv.bad_wc++;					\
			if (sv.diags++ < MAX_DIAG)			\
				srv_say(__VA_ARGS__);			\
			return;						\
		}							\
	} while (0)

/* A receive completion: the plan says what it must be. */
static void srv_on_wc(const struct ibv_wc *wc)
{
	uint32_t k = sv.nrecv++, seq;
	bool imm, ok;
	const struct msg *m;
	const uint8_t *p;
	int want_op;

	SRV_BAD(wc->status != IBV_WC_SUCCESS,
		"receive %u: %s (status %d, vendor_err 0x%x)", k,
		ibv_wc_status_str(wc->status), wc->status, wc->vendor_err);
	SRV_BAD(wc->wr_id != k, "receive completion %u carries wr_id %llu: out of order",
		k, (unsigned long long)wc->wr_id);
	SRV_BAD(k >= pl.nrecv, "receive %u: the plan has only %u", k,
		pl.nrecv);
	seq = pl.recv_seq[k];
	m = &pl.m[seq];
	imm = m->op != OP_SEND;
	want_op = m->op == OP_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM :
					  IBV_WC_RECV;
	SRV_BAD((int)wc->opcode != want_op,
		"receive %u (seq %u, %s): opcode %s (%d), want %s", k, seq,
		op_name[m->op], wc_op_name(wc->opcode), wc->opcode,
		wc_op_name(want_op));
	SRV_BAD(!!(wc->wc_flags & IBV_WC_WITH_IMM) != imm,
		"receive %u (seq %u, %s): IBV_WC_WITH_IMM is %s", k, seq,
		op_name[m->op], imm ? "clear" : "set");
	SRV_BAD(imm && be32toh(wc->imm_data) != seq,
		"receive %u (seq %u, %s): imm %u", k, seq, op_name[m->op],
		be32toh(wc->imm_data));
	SRV_BAD(wc->byte_len != m->len,
		"receive %u (seq %u, %s): byte_len %u, want %u", k, seq,
		op_name[m->op], wc->byte_len, m->len);
	p = nd.buf + m->roff;
	ok = check_payload("server", p, seq, m->len, sv.diags >= MAX_DIAG,
			   srv_say);
	if (ok) {
		sv.ver[m->op]++;
		sv.bytes += m->len;
	} else {
		sv.bad_data++;
		sv.diags++;
	}
	/* The slot is free again: its next receive. */
	if (sv.posted < pl.nrecv) {
		if (srv_post_recv(sv.posted))
			SRV_BAD(true, "ibv_post_recv %u: %s", sv.posted,
				strerror(errno));
		sv.posted++;
	}
}

/* Takes receive completions until @want have come or @ms pass. */
static void srv_drain(uint32_t want, int ms)
{
	struct ibv_wc wc[POLL_BATCH];
	long long end = xchg_now_ms() + ms;
	int r, i;

	while (sv.nrecv < want) {
		int left = (int)(end - xchg_now_ms());

		if (left <= 0)
			break;
		r = cq_get(wc, POLL_BATCH, left, -1);
		if (r < 0)
			break;
		for (i = 0; i < r; i++)
			srv_on_wc(&wc[i]);
	}
}

/* At the end: every RDMA_WRITE slot holds what its last write put there. */
static void srv_check_slots(uint64_t *checked, uint64_t *bad)
{
	uint32_t s, seq;

	for (s = 0; s < lay.nwr; s++) {
		const struct msg *m = NULL;

		for (seq = cf.count; seq-- > 0;)
			if (pl.m[seq].op == OP_WRITE &&
			    seq % lay.nwr == s) {
				m = &pl.m[seq];
				break;
			}
		if (!m)
			continue;
		(*checked)++;
		if (!check_payload("server, RDMA_WRITE slot at the end",
				   nd.buf + m->roff, seq, m->len,
				   sv.diags >= MAX_DIAG, srv_say)) {
			(*bad)++;
			sv.diags++;
		}
	}
}

static int srv_hello(struct xchg_msg *m)
{
	struct stream rd;
	union ibv_gid cgid;
	uint32_t ops;
	int dest_rd;

	if (m->v[0] != C_HELLO || m->v[15] != HELLO_MAGIC) {
		fprintf(stderr, "%s: not a hello\n", prog);
		return -1;
	}
	cf.seed = m->v[3];
	cf.count = m->v[4];
	cf.window = m->v[5];
	cf.max_len = m->v[6];
	ops = m->v[7];
	cf.timeout = m->v[8];
	if (cf.count > COUNT_MAX || !cf.window || cf.window > WINDOW_MAX ||
	    cf.max_len < 8 || cf.max_len > MAX_LEN_MAX || !(ops & OPS_ALL) ||
	    cf.timeout > 31) {
		fprintf(stderr, "%s: bad parameters in the hello\n", prog);
		return -1;
	}
	if (nd.dev.atomic_cap == IBV_ATOMIC_NONE)
		ops &= ~OPS_ATOMIC;
	cf.ops = ops & OPS_ALL;
	layout_init();
	if (!cf.ops || plan_build()) {
		fprintf(stderr, "%s: no plan\n", prog);
		return -1;
	}
	if (res_create(lay.size, 2 * lay.nrv + 8, 4, lay.nrv)) {
		fprintf(stderr, "%s: resources: %s\n", prog, strerror(errno));
		return -1;
	}
	rd = read_area();
	stream_fill(&rd, nd.buf + lay.rd_off, lay.rd_len, 0);
	memcpy(nd.buf + CTR_OFF, &pl.ctr_init, 8);
	memcpy(cgid.raw, m->gid, sizeof(cgid.raw));
	dest_rd = clamp_rd(nd.dev.max_qp_rd_atom);
	if (qp_connect(m->v[1], m->v[2], &cgid, dest_rd,
		       clamp_rd(nd.dev.max_qp_init_rd_atom))) {
		fprintf(stderr, "%s: connect the QP: %s\n", prog,
			strerror(errno));
		return -1;
	}
	/* The client sends nothing before it has our answer. */
	for (sv.posted = 0; sv.posted < lay.nrv && sv.posted < pl.nrecv;
	     sv.posted++)
		if (srv_post_recv(sv.posted)) {
			fprintf(stderr, "%s: post_recv: %s\n", prog,
				strerror(errno));
			return -1;
		}
	srv_say("server: QP 0x%x, %u messages planned (%u receives), seed %llu, window %u, buffer %llu bytes",
		nd.qp->qp_num, cf.count, pl.nrecv,
		(unsigned long long)cf.seed, cf.window,
		(unsigned long long)lay.size);
	memset(m, 0, sizeof(*m));
	m->v[1] = nd.qp->qp_num;
	m->v[2] = nd.psn;
	m->v[3] = (uintptr_t)nd.buf;
	m->v[4] = nd.mr->rkey;
	m->v[5] = cf.ops;
	m->v[6] = nd.dev.vendor_id;
	strncpy((char *)&m->v[7], ibv_get_device_name(nd.ctx->device), 16);
	m->v[9] = dest_rd;
	m->v[10] = nd.dev.atomic_cap;
	memcpy(m->gid, nd.gid.raw, sizeof(m->gid));
	return 0;
}

static int server(int port)
{
	struct ibv_wc wc[POLL_BATCH];
	struct xchg_msg m;
	uint64_t slots = 0, slots_bad = 0, ctr = 0;
	uint32_t done, want;
	bool full, ctr_ok = true;
	int r, i;

	nd.fd = xchg_serve(port, min_int(120000, ms_left()));
	if (nd.fd < 0) {
		fprintf(stderr, "%s: no client on port %d within 120 s: %s\n",
			prog, port, strerror(errno));
		return 1;
	}
	if (xchg_recv(nd.fd, &m, 30000) || srv_hello(&m)) {
		fprintf(stderr, "%s: no usable hello from the client\n", prog);
		return 1;
	}
	if (xchg_send(nd.fd, &m)) {
		fprintf(stderr, "%s: cannot answer the hello\n", prog);
		return 1;
	}
	/* Receive completions until the client says it is done. */
	for (;;) {
		if (!ms_left()) {
			srv_say("server: deadline passed waiting for the client (%u of %u receives completed)",
				sv.nrecv, pl.nrecv);
			return 1;
		}
		r = cq_get(wc, POLL_BATCH, min_int(1000, ms_left()), nd.fd);
		if (r < 0) {
			srv_say("server: polling the CQ failed: %s",
				strerror(errno));
			return 1;
		}
		for (i = 0; i < r; i++)
			srv_on_wc(&wc[i]);
		if (r == 0) {
			struct pollfd p = { .fd = nd.fd, .events = POLLIN };

			if (poll(&p, 1, 0) == 1)
				break;
		}
	}
	if (xchg_recv(nd.fd, &m, 10000) || m.v[0] != C_DONE) {
		srv_say("server: the client went away (%u of %u receives completed)",
			sv.nrecv, pl.nrecv);
		return 1;
	}
	done = m.v[1] > cf.count ? cf.count : m.v[1];
	full = done == cf.count && !m.v[2];
	want = recvs_before(done);
	srv_drain(want, 10000);
	if (sv.nrecv < want) {
		srv_say("server: %u receives completed, the %u messages the client completed need %u",
			sv.nrecv, done, want);
		sv.bad_wc += want - sv.nrecv;
	}
	if (full) {
		srv_check_slots(&slots, &slots_bad);
		memcpy(&ctr, nd.buf + CTR_OFF, 8);
		ctr_ok = ctr == pl.ctr_final;
		if (!ctr_ok)
			srv_say("server: the counter is 0x%016llx at the end, want 0x%016llx",
				(unsigned long long)ctr,
				(unsigned long long)pl.ctr_final);
	}
	srv_say("server: %u receives completed, %u bad completions, %u bad payloads, %llu write slots checked (%llu bad), %llu bytes verified",
		sv.nrecv, sv.bad_wc, sv.bad_data, (unsigned long long)slots,
		(unsigned long long)slots_bad, (unsigned long long)sv.bytes);
	memset(&m, 0, sizeof(m));
	m.v[1] = sv.nrecv;
	m.v[2] = want;
	m.v[3] = sv.bad_wc;
	m.v[4] = sv.bad_data;
	m.v[5] = sv.ver[OP_SEND];
	m.v[6] = sv.ver[OP_SEND_IMM];
	m.v[7] = sv.ver[OP_WRITE_IMM];
	m.v[8] = slots;
	m.v[9] = slots_bad;
	m.v[10] = ctr;
	m.v[11] = pl.ctr_final;
	m.v[12] = full;
	m.v[13] = sv.bytes;
	if (xchg_send(nd.fd, &m))
		srv_say("server: cannot send the result");
	res_destroy();
	printf("done\n");
	return sv.bad_wc || sv.bad_data || slots_bad || !ctr_ok;
}

/* ---- client ------------------------------------------------------------- */

static struct {
	uint64_t raddr;
	uint32_t rkey;
	uint32_t ops;		/* what the server agreed to */
	uint32_t atomic_cap;
	char dev[17];
} peer;

static struct {
	uint32_t posted;	/* messages posted */
	uint32_t done;		/* messages completed, in order */
	uint32_t part;		/* RDMA_WRITE: 1 once the write completed */
	uint64_t wr_posted, wr_done;
	uint32_t ok[OP_NUM];	/* completed with IBV_WC_SUCCESS */
	uint32_t ver[OP_NUM];	/* and checked by the client */
	uint32_t nores[OP_NUM];	/* atomics that returned nothing */
	uint32_t bad_wc, bad_data;
	uint64_t bytes;		/* checked by the client */
	bool failed;		/* stop posting */
	unsigned int diags;
} cl;

/* The client's slot of message @seq: source, then destination. */
static uint8_t *cl_src(uint32_t seq)
{
	return nd.buf + (uint64_t)(seq % cf.window) * 2 * lay.slot;
}

static uint8_t *cl_dst(uint32_t seq)
{
	return cl_src(seq) + lay.slot;
}

static int post_msg(uint32_t seq)
{
	const struct msg *m = &pl.m[seq];
	struct ibv_send_wr wr[2], *bad;
	struct ibv_sge sge[2];
	struct stream s;
	int r;

	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = (uint64_t)seq << 1;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].sg_list = &sge[0];
	wr[0].num_sge = m->len ? 1 : 0;
	wr[0].wr.rdma.remote_addr = peer.raddr + m->roff;
	wr[0].wr.rdma.rkey = peer.rkey;
	sge[0].lkey = nd.mr->lkey;
	sge[0].length = m->len;
	switch (m->op) {
	case OP_SEND:
	case OP_SEND_IMM:
	case OP_WRITE:
	case OP_WRITE_IMM:
		s = payload(seq, m->len);
		stream_fill(&s, cl_src(seq), m->len, 0);
		sge[0].addr = (uintptr_t)cl_src(seq);
		if (m->inl && m->len && m->len <= nd.max_inline)
			wr[0].send_flags |= IBV_SEND_INLINE;
		wr[0].opcode = m->op == OP_SEND ? IBV_WR_SEND :
			       m->op == OP_SEND_IMM ? IBV_WR_SEND_WITH_IMM :
			       m->op == OP_WRITE ? IBV_WR_RDMA_WRITE :
			       IBV_WR_RDMA_WRITE_WITH_IMM;
		wr[0].imm_data = htobe32(seq);
		break;
	case OP_READ:
		memset(cl_dst(seq), 0xa5, m->len);
		sge[0].addr = (uintptr_t)cl_dst(seq);
		wr[0].opcode = IBV_WR_RDMA_READ;
		break;
	case OP_FADD:
	case OP_CAS:
		memset(cl_dst(seq), 0xa5, 8);
		sge[0].addr = (uintptr_t)cl_dst(seq);
		wr[0].opcode = m->op == OP_FADD ? IBV_WR_ATOMIC_FETCH_AND_ADD :
						  IBV_WR_ATOMIC_CMP_AND_SWP;
		wr[0].wr.atomic.remote_addr = peer.raddr + m->roff;
		wr[0].wr.atomic.rkey = peer.rkey;
		wr[0].wr.atomic.compare_add = m->cmp;
		wr[0].wr.atomic.swap = m->swp;
		break;
	}
	if (m->op == OP_WRITE) {
		/* The read-back of what the write put there. */
		memset(cl_dst(seq), 0xa5, m->len);
		sge[1] = sge[0];
		sge[1].addr = (uintptr_t)cl_dst(seq);
		wr[1] = wr[0];
		wr[1].wr_id |= 1;
		wr[1].sg_list = &sge[1];
		wr[1].send_flags = IBV_SEND_SIGNALED;
		wr[1].opcode = IBV_WR_RDMA_READ;
		wr[0].next = &wr[1];
	}
	r = ibv_post_send(nd.qp, wr, &bad);
	if (r) {
		tap_diag("ibv_post_send of seq %u (%s, %u bytes): %s", seq,
			 op_name[m->op], m->len, strerror(abs(r)));
		return -1;
	}
	cl.wr_posted += m->op == OP_WRITE ? 2 : 1;
	return 0;
}

enum verdict { V_OK, V_BAD, V_NO_RESULT };

/* Checks what the client can of message @seq, which completed. */
static enum verdict cl_verify(uint32_t seq)
{
	static const uint8_t poison[8] = {
		0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5,
	};
	const struct msg *m = &pl.m[seq];
	bool quiet = cl.diags >= MAX_DIAG;
	struct stream s;
	uint8_t want = 0;
	uint64_t old;
	int64_t at;

	switch (m->op) {
	case OP_WRITE:
		return check_payload("client, read-back of RDMA_WRITE",
				     cl_dst(seq), seq, m->len, quiet,
				     tap_diag) ? V_OK : V_BAD;
	case OP_READ:
		s = read_area();
		at = stream_check(&s, cl_dst(seq), m->len,
				  m->roff - lay.rd_off, &want);
		if (at >= 0 && !quiet)
			tap_diag("client: seq %u (RDMA_READ of %u bytes at +%llu): byte %lld is 0x%02x, want 0x%02x",
				 seq, m->len,
				 (unsigned long long)(m->roff - lay.rd_off),
				 (long long)at, cl_dst(seq)[at], want);
		return at < 0 ? V_OK : V_BAD;
	case OP_FADD:
	case OP_CAS:
		memcpy(&old, cl_dst(seq), 8);
		if (old == m->old)
			return V_OK;
		if (cf.allow_no_result && !memcmp(cl_dst(seq), poison, 8)) {
			if (cl.nores[OP_FADD] + cl.nores[OP_CAS] < 3)
				tap_diag("client: seq %u (%s) completed with IBV_WC_SUCCESS but wrote no old value (tolerated: --allow-atomic-no-result)",
					 seq, op_name[m->op]);
			return V_NO_RESULT;
		}
		if (!quiet)
			tap_diag("client: seq %u (%s): returned 0x%016llx, want 0x%016llx",
				 seq, op_name[m->op],
				 (unsigned long long)old,
				 (unsigned long long)m->old);
		return V_BAD;
	default:
		return V_OK;	/* the server checks it */
	}
}

static void cl_on_wc(const struct ibv_wc *wc)
{
	uint32_t seq = wc->wr_id >> 1, part = wc->wr_id & 1;
	const struct msg *m;
	int want_op;

	cl.wr_done++;
	if (wc->status != IBV_WC_SUCCESS) {
		cl.bad_wc++;
		if (!cl.failed || wc->status != IBV_WC_WR_FLUSH_ERR) {
			if (seq < cf.count)
				tap_diag("seq %u%s (%s, %u bytes): %s (status %d, vendor_err 0x%x)",
					 seq, part ? " read-back" : "",
					 op_name[pl.m[seq].op],
					 pl.m[seq].len,
					 ibv_wc_status_str(wc->status),
					 wc->status, wc->vendor_err);
			else
				tap_diag("wr_id 0x%llx: %s",
					 (unsigned long long)wc->wr_id,
					 ibv_wc_status_str(wc->status));
		}
		cl.failed = true;
		return;
	}
	if (cl.failed)
		return;
	if (seq != cl.done || part != cl.part) {
		tap_diag("completion of seq %u%s while seq %u%s was due: out of order",
			 seq, part ? " read-back" : "", cl.done,
			 cl.part ? " read-back" : "");
		cl.bad_wc++;
		cl.failed = true;
		return;
	}
	m = &pl.m[seq];
	switch (m->op) {
	case OP_SEND:
	case OP_SEND_IMM:
		want_op = IBV_WC_SEND;
		break;
	case OP_WRITE:
		want_op = part ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE;
		break;
	case OP_WRITE_IMM:
		want_op = IBV_WC_RDMA_WRITE;
		break;
	case OP_READ:
		want_op = IBV_WC_RDMA_READ;
		break;
	case OP_FADD:
		want_op = IBV_WC_FETCH_ADD;
		break;
	default:
		want_op = IBV_WC_COMP_SWAP;
		break;
	}
	if ((int)wc->opcode != want_op) {
		tap_diag("seq %u%s (%s): completion opcode %s (%d), want %s",
			 seq, part ? " read-back" : "", op_name[m->op],
			 wc_op_name(wc->opcode), wc->opcode,
			 wc_op_name(want_op));
		cl.bad_wc++;
		cl.failed = true;
		return;
	}
	if (m->op == OP_WRITE && !part) {
		cl.part = 1;
		return;
	}
	cl.part = 0;
	cl.done++;
	cl.ok[m->op]++;
	switch (cl_verify(seq)) {
	case V_OK:
		cl.ver[m->op]++;
		if (m->op != OP_SEND && m->op != OP_SEND_IMM &&
		    m->op != OP_WRITE_IMM)
			cl.bytes += m->len;
		break;
	case V_NO_RESULT:
		cl.nores[m->op]++;
		break;
	default:
		cl.bad_data++;
		cl.diags++;
	}
}

/* What the oldest message in flight is, for a diagnostic. */
static const char *cl_due(void)
{
	static char b[128];
	const struct msg *m;

	if (cl.done >= cf.count)
		return "nothing";
	m = &pl.m[cl.done];
	snprintf(b, sizeof(b), "seq %u%s (%s, %u bytes)", cl.done,
		 cl.part ? " read-back" : "", op_name[m->op], m->len);
	return b;
}

/* Posts and completes the whole plan; false if it stopped early. */
static bool cl_run(void)
{
	struct ibv_wc wc[POLL_BATCH];
	long long last = xchg_now_ms(), t0 = last;
	uint32_t report = cf.count / 4;
	int r, i, wait;

	while (cl.done < cf.count && !cl.failed) {
		while (cl.posted < cf.count &&
		       cl.posted - cl.done < cf.window) {
			if (post_msg(cl.posted)) {
				cl.failed = true;
				break;
			}
			cl.posted++;
		}
		if (cl.failed)
			break;
		wait = min_int(STALL_MS - (int)(xchg_now_ms() - last),
			       ms_left());
		r = wait > 0 ? cq_get(wc, POLL_BATCH, wait, -1) : 0;
		if (r < 0) {
			tap_diag("polling the CQ failed: %s", strerror(errno));
			cl.failed = true;
			break;
		}
		if (r == 0 && !ms_left()) {
			tap_diag("the deadline (%d s) passed waiting for the completion of %s; %u messages in flight, %u completed",
				 cf.deadline, cl_due(), cl.posted - cl.done,
				 cl.done);
			return false;
		}
		if (r == 0 && xchg_now_ms() - last >= STALL_MS) {
			tap_diag("no completion for %d s, waiting for %s; %u messages in flight, %u completed",
				 STALL_MS / 1000, cl_due(),
				 cl.posted - cl.done, cl.done);
			return false;
		}
		if (r > 0)
			last = xchg_now_ms();
		for (i = 0; i < r; i++)
			cl_on_wc(&wc[i]);
		if (report && cl.done >= report && cl.done < cf.count) {
			tap_diag("%u of %u messages completed (%lld ms)",
				 cl.done, cf.count, xchg_now_ms() - t0);
			report += cf.count / 4;
		}
	}
	if (!cl.failed)
		return true;
	/* The QP is in error (or will not go on): take the flushed rest. */
	last = xchg_now_ms();
	while (cl.wr_done < cl.wr_posted &&
	       xchg_now_ms() - last < 5000 && ms_left()) {
		r = cq_get(wc, POLL_BATCH, min_int(1000, ms_left()), -1);
		if (r < 0)
			break;
		if (r > 0)
			last = xchg_now_ms();
		for (i = 0; i < r; i++)
			cl_on_wc(&wc[i]);
	}
	if (cl.wr_done < cl.wr_posted)
		tap_diag("%llu work requests never completed after the error",
			 (unsigned long long)(cl.wr_posted - cl.wr_done));
	return false;
}

/* Connects to the server and brings both QPs to RTS. */
static bool cl_connect(const char *host, int port)
{
	struct xchg_msg m;
	union ibv_gid sgid;
	uint32_t ops = cf.ops;
	int rd;

	nd.fd = xchg_connect(host, port, min_int(30000, ms_left()));
	if (!tap_ok(nd.fd >= 0, "connect to the server at %s port %d", host,
		    port))
		return false;
	if (nd.dev.atomic_cap == IBV_ATOMIC_NONE)
		ops &= ~OPS_ATOMIC;
	if (!ops) {
		tap_ok(false, "some opcode to run (atomics need atomic_cap)");
		return false;
	}
	layout_init();
	if (res_create(2 * lay.slot * cf.window, 4 * cf.window + 8,
		       2 * cf.window + 4, 1)) {
		tap_ok(false, "client buffer, CQ and QP (%s)", strerror(errno));
		return false;
	}
	memset(&m, 0, sizeof(m));
	m.v[0] = C_HELLO;
	m.v[1] = nd.qp->qp_num;
	m.v[2] = nd.psn;
	m.v[3] = cf.seed;
	m.v[4] = cf.count;
	m.v[5] = cf.window;
	m.v[6] = cf.max_len;
	m.v[7] = ops;
	m.v[8] = cf.timeout;
	m.v[15] = HELLO_MAGIC;
	memcpy(m.gid, nd.gid.raw, sizeof(m.gid));
	if (xchg_send(nd.fd, &m) || xchg_recv(nd.fd, &m, 60000) || m.v[0]) {
		tap_ok(false, "the server sets up its QP (see its log)");
		return false;
	}
	peer.raddr = m.v[3];
	peer.rkey = m.v[4];
	peer.ops = m.v[5];
	memcpy(peer.dev, &m.v[7], 16);
	peer.atomic_cap = m.v[10];
	memcpy(sgid.raw, m.gid, sizeof(sgid.raw));
	rd = clamp_rd(nd.dev.max_qp_init_rd_atom);
	if (rd > (int)m.v[9])
		rd = m.v[9];
	/* The server's plan has what it agreed to; ours must be the same. */
	cf.ops = peer.ops;
	if (plan_build()) {
		tap_ok(false, "plan of %u messages", cf.count);
		return false;
	}
	if (!tap_ok(!qp_connect(m.v[1], m.v[2], &sgid,
				clamp_rd(nd.dev.max_qp_rd_atom), rd),
		    "RC QP 0x%x connected to the server's 0x%x (%s on %s)",
		    nd.qp->qp_num, (unsigned int)m.v[1], peer.dev, host))
		return false;
	tap_diag("path MTU %d, timeout %d, retry_cnt 7, rnr_retry 7, max_rd_atomic %d, window %u, max_inline %u, sq_psn 0x%06x, %s",
		 MTU, cf.timeout, rd, cf.window, nd.max_inline, nd.psn,
		 nd.ch ? "completion channel" : "polling");
	return true;
}

static void fmt_bytes(char *b, size_t n, uint64_t v)
{
	if (v >= 10u << 20)
		snprintf(b, n, "%.1f MiB", v / 1048576.0);
	else
		snprintf(b, n, "%.1f KiB", v / 1024.0);
}

static int client(const char *host, int port)
{
	struct xchg_msg m;
	uint64_t total = 0, srv_ver[OP_NUM] = { 0 };
	long long t0;
	bool ran, got, all_ok, data_ok;
	char b[32], b2[32];
	unsigned int i;

	tap_diag("seed %llu, %u messages, up to %u bytes, window %u",
		 (unsigned long long)cf.seed, cf.count, cf.max_len,
		 cf.window);
	if (!cl_connect(host, port)) {
		res_destroy();
		return tap_done();
	}
	t0 = xchg_now_ms();
	ran = cl_run();
	t0 = xchg_now_ms() - t0;
	for (i = 0; i < OP_NUM; i++)
		total += pl.bytes[i];
	fmt_bytes(b, sizeof(b), total);
	tap_diag("%u of %u messages completed in %lld ms (%s planned)",
		 cl.done, cf.count, t0, b);

	memset(&m, 0, sizeof(m));
	m.v[0] = C_DONE;
	m.v[1] = cl.done;
	m.v[2] = !ran;
	got = !xchg_send(nd.fd, &m) && !xchg_recv(nd.fd, &m, 30000);
	if (!got) {
		tap_diag("no result from the server");
		memset(&m, 0, sizeof(m));
	} else {
		srv_ver[OP_SEND] = m.v[5];
		srv_ver[OP_SEND_IMM] = m.v[6];
		srv_ver[OP_WRITE_IMM] = m.v[7];
	}

	for (i = 0; i < OP_NUM; i++) {
		bool by_srv = i == OP_SEND || i == OP_SEND_IMM ||
			      i == OP_WRITE_IMM;
		uint64_t ver = by_srv ? srv_ver[i] : cl.ver[i];

		if (!(cf.ops & (1u << i))) {
			tap_skip("%s: not in this run%s", op_name[i],
				 (OPS_ATOMIC & (1u << i)) &&
				 (nd.dev.atomic_cap == IBV_ATOMIC_NONE ||
				  peer.atomic_cap == IBV_ATOMIC_NONE) ?
				 " (atomic_cap is IBV_ATOMIC_NONE)" : "");
			continue;
		}
		fmt_bytes(b, sizeof(b), pl.bytes[i]);
		if (cl.nores[i]) {
			tap_ok(cl.ok[i] == pl.nops[i] &&
			       ver + cl.nores[i] == pl.nops[i],
			       "%s: %u of %u completed, %llu verified by the client, %u without the old value (tolerated: --allow-atomic-no-result)",
			       op_name[i], cl.ok[i], pl.nops[i],
			       (unsigned long long)ver, cl.nores[i]);
			continue;
		}
		tap_ok(cl.ok[i] == pl.nops[i] && ver == pl.nops[i],
		       "%s: %u of %u completed, %llu verified by the %s (%s)",
		       op_name[i], cl.ok[i], pl.nops[i],
		       (unsigned long long)ver, by_srv ? "server" : "client",
		       b);
	}
	if (cl.nores[OP_FADD] + cl.nores[OP_CAS])
		tap_diag("%u atomics completed with IBV_WC_SUCCESS but returned no old value; the server's final counter still shows whether each ran once",
			 cl.nores[OP_FADD] + cl.nores[OP_CAS]);
	all_ok = ran && cl.done == cf.count && !cl.bad_wc && got &&
		 !m.v[3] && m.v[1] >= m.v[2];
	tap_ok(all_ok, "all %u messages completed with IBV_WC_SUCCESS",
	       cf.count);
	if (got)
		tap_diag("server: %llu receives completed (%llu expected), %llu bad; %llu payload mismatches; %llu write slots checked, %llu bad; counter 0x%016llx, want 0x%016llx%s",
			 (unsigned long long)m.v[1], (unsigned long long)m.v[2],
			 (unsigned long long)m.v[3], (unsigned long long)m.v[4],
			 (unsigned long long)m.v[8], (unsigned long long)m.v[9],
			 (unsigned long long)m.v[10],
			 (unsigned long long)m.v[11],
			 m.v[12] ? "" : " (not checked: the run was cut short)");
	data_ok = all_ok && !cl.bad_data && !m.v[4] && !m.v[9] &&
		  m.v[12] && m.v[10] == m.v[11];
	fmt_bytes(b, sizeof(b), cl.bytes);
	fmt_bytes(b2, sizeof(b2), m.v[13]);
	tap_ok(data_ok, "all bytes verified (%s by the client, %s by the server), the RDMA_WRITE slots and the atomic counter right at the end",
	       b, b2);
	res_destroy();
	return tap_done();
}

/* ---- main --------------------------------------------------------------- */

static int parse_ops(const char *s, uint32_t *ops)
{
	char *dup = strdup(s), *tok, *save = NULL;
	unsigned int i;
	int r = 0;

	*ops = 0;
	if (!dup)
		return -1;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			*ops |= OPS_ALL;
			continue;
		}
		for (i = 0; i < OP_NUM; i++)
			if (!strcmp(tok, op_key[i]))
				break;
		if (i == OP_NUM) {
			r = -1;
			break;
		}
		*ops |= 1u << i;
	}
	free(dup);
	return r || !*ops ? -1 : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rc_stress -d DEV -g GIDIDX [-p PORT] -s [--deadline S]\n"
		"       rc_stress -d DEV -g GIDIDX [-p PORT] [-n COUNT] [--timeout T]\n"
		"                 [--seed S] [--window W] [--max-size BYTES]\n"
		"                 [--ops LIST] [--allow-atomic-no-result]\n"
		"                 [--deadline S] PEER_IP\n"
		"  LIST: all or a comma-separated subset of\n"
		"        send,send_imm,write,write_imm,read,fadd,cas\n");
	exit(2);
}

static long num_arg(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	enum { O_TIMEOUT = 256, O_SEED, O_DEADLINE, O_WINDOW, O_MAXSIZE,
	       O_OPS, O_NORES };
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "gid", required_argument, NULL, 'g' },
		{ "port", required_argument, NULL, 'p' },
		{ "server", no_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "deadline", required_argument, NULL, O_DEADLINE },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "max-size", required_argument, NULL, O_MAXSIZE },
		{ "ops", required_argument, NULL, O_OPS },
		{ "allow-atomic-no-result", no_argument, NULL, O_NORES },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = NULL, *peer_ip = NULL;
	int gid = -1, port = STRESS_PORT, c;
	bool srv = false, seeded = false;
	char *end;

	cf.count = COUNT_DEF;
	cf.window = WINDOW_DEF;
	cf.max_len = MAX_LEN_DEF;
	cf.ops = OPS_ALL;
	cf.timeout = 12;
	cf.deadline = 600;
	while ((c = getopt_long(argc, argv, "d:g:p:sn:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gid = num_arg(optarg, 0, 65535);
			break;
		case 'p':
			port = num_arg(optarg, 1, 65535);
			break;
		case 's':
			srv = true;
			break;
		case 'n':
			cf.count = num_arg(optarg, 0, COUNT_MAX);
			break;
		case O_TIMEOUT:
			cf.timeout = num_arg(optarg, 0, 31);
			break;
		case O_SEED:
			errno = 0;
			cf.seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end)
				usage();
			seeded = true;
			break;
		case O_DEADLINE:
			cf.deadline = num_arg(optarg, 1, 86400);
			break;
		case O_WINDOW:
			cf.window = num_arg(optarg, 1, WINDOW_MAX);
			break;
		case O_MAXSIZE:
			cf.max_len = num_arg(optarg, 8, MAX_LEN_MAX);
			break;
		case O_OPS:
			if (parse_ops(optarg, &cf.ops))
				usage();
			break;
		case O_NORES:
			cf.allow_no_result = true;
			break;
		default:
			usage();
		}
	}
	if (optind < argc)
		peer_ip = argv[optind++];
	if (!dev || gid < 0 || optind < argc || (srv && peer_ip) ||
	    (!srv && !peer_ip))
		usage();
	srand48(getpid() ^ xchg_now_ms());
	if (!seeded)
		cf.seed = h64(getpid() ^ (uint64_t)xchg_now_ms() << 20);
	deadline_ms = xchg_now_ms() + cf.deadline * 1000LL;
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	alarm(cf.deadline + 60);
	if (srv)
		prog = "rc_stress server";
	if (dev_open(dev, gid)) {
		if (srv)
			return 1;
		tap_ok(false, "open %s", dev);
		return tap_done();
	}
	if (srv)
		return server(port);
	return client(peer_ip, port);
}
