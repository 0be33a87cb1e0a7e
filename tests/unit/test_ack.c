// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * The requester's acknowledgement rules (core/ack.h): AckReq placement,
 * the window, and a lossless run of a requester against a responder that
 * answers AckReqs only, which must never stall.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "roce.h"

static void test_interval(void **state)
{
	(void)state;
	assert_int_equal(vroce_ack_interval(VROCE_WINDOW_MAX), VROCE_ACK_EVERY);
	assert_int_equal(vroce_ack_interval(512), VROCE_ACK_EVERY);
	assert_int_equal(vroce_ack_interval(VROCE_WINDOW_MIN), 16);
	assert_int_equal(vroce_ack_interval(33), 16);
	assert_int_equal(vroce_ack_interval(2), 1);
	assert_int_equal(vroce_ack_interval(1), 1);
	assert_int_equal(vroce_ack_interval(0), 1);
}

static void test_window_open(void **state)
{
	(void)state;
	assert_true(vroce_window_open(10, 10, 1));
	assert_false(vroce_window_open(11, 10, 1));
	assert_true(vroce_window_open(10 + 127, 10, 128));
	assert_false(vroce_window_open(10 + 128, 10, 128));
	/* across the PSN wrap */
	assert_true(vroce_window_open(0x00003f, 0xffffc0, 128));
	assert_false(vroce_window_open(0x000040, 0xffffc0, 128));
	/* a PSN before una (a rewind) is always inside */
	assert_true(vroce_window_open(5, 6, 32));
}

static void test_unblocked(void **state)
{
	(void)state;
	/* a READ of 64 PSNs waits for the one before it to come back */
	assert_false(vroce_req_unblocked(0, 0, 1000 + 192, 1000 + 1, 128));
	assert_false(vroce_req_unblocked(0, 0, 1000 + 192, 1000 + 64, 128));
	assert_true(vroce_req_unblocked(0, 0, 1000 + 192, 1000 + 65, 128));
	/* a completion or a probe's answer always wakes it */
	assert_true(vroce_req_unblocked(1, 0, 1000 + 192, 1000 + 1, 128));
	assert_true(vroce_req_unblocked(0, 1, 1000 + 192, 1000 + 1, 128));
	/* a streaming SQ with room in the window */
	assert_true(vroce_req_unblocked(0, 0, 50, 40, 128));
	/* across the PSN wrap */
	assert_false(vroce_req_unblocked(0, 0, 0x00007f, 0xffffff, 128));
	assert_true(vroce_req_unblocked(0, 0, 0x00007f, 0x000000, 128));
}

static void test_window_adapt(void **state)
{
	vr_u32 w = VROCE_WINDOW_MAX;
	int i;

	(void)state;
	w = vroce_window_shrink(w);
	assert_int_equal(w, VROCE_WINDOW_MAX / 2);
	for (i = 0; i < 10; i++)
		w = vroce_window_shrink(w);
	assert_int_equal(w, VROCE_WINDOW_MIN);
	for (i = 0; i < 1000; i++)
		w = vroce_window_grow(w);
	assert_int_equal(w, VROCE_WINDOW_MAX);
	assert_int_equal(vroce_window_grow(VROCE_WINDOW_MAX + 5),
			 VROCE_WINDOW_MAX);
}

static void test_ackreq_rules(void **state)
{
	struct vroce_ackreq_in in = {
		.psn = 100, .una = 100, .window = 128, .since = 0,
	};

	(void)state;
	assert_false(vroce_ackreq_wanted(&in));
	in.last = 1;
	assert_true(vroce_ackreq_wanted(&in));
	in.last = 0;
	in.probe = 1;
	assert_true(vroce_ackreq_wanted(&in));
	in.probe = 0;
	/* the packet that fills the window asks */
	in.psn = 100 + 127;
	assert_true(vroce_ackreq_wanted(&in));
	in.psn = 100 + 126;
	assert_false(vroce_ackreq_wanted(&in));
	/* every half window (64 at most) */
	in.since = 63;
	assert_true(vroce_ackreq_wanted(&in));
	in.since = 62;
	assert_false(vroce_ackreq_wanted(&in));
	in.window = 32;
	in.psn = 100;
	in.since = 15;
	assert_true(vroce_ackreq_wanted(&in));
	in.since = 14;
	assert_false(vroce_ackreq_wanted(&in));
	/* the window filled across the PSN wrap */
	in.una = 0xfffff0;
	in.psn = 0x00000f;
	in.since = 0;
	assert_true(vroce_ackreq_wanted(&in));
}

/*
 * A requester sends @nmsg messages of @len packets each with a window of
 * @window PSNs, starting at PSN @start. The responder answers each AckReq
 * once everything before it arrived, and only those. Whenever the window
 * is full, an answer must be on its way; returns the number of AckReqs,
 * or -1 on a stall (the requester would wait for its retransmit timer).
 */
static long run_lossless(vr_u32 start, vr_u32 window, vr_u32 len,
			 vr_u32 nmsg)
{
	vr_u32 psn = start, una = start, since = 0, sent = 0;
	vr_u32 total = len * nmsg;
	vr_u32 answer = start;	/* one past the newest AckReq sent */
	long reqs = 0;
	struct vroce_ackreq_in in;

	while (vroce_psn_before(una, vroce_psn_add(start, total))) {
		if (sent < total && vroce_window_open(psn, una, window)) {
			in.psn = psn;
			in.una = una;
			in.window = window;
			in.since = since;
			in.last = (sent + 1) % len == 0;
			in.probe = 0;
			if (vroce_ackreq_wanted(&in)) {
				reqs++;
				since = 0;
				answer = vroce_psn_add(psn, 1);
			} else {
				since++;
			}
			psn = vroce_psn_add(psn, 1);
			sent++;
			continue;
		}
		/* Blocked (or done sending): the answers come back. */
		if (answer == una)
			return -1;
		una = answer;
	}
	return reqs;
}

static void test_never_stalls(void **state)
{
	static const vr_u32 windows[] = { 1, 2, 3, 31, 32, 33, 47, 63, 64, 65,
					  100, 127, 128 };
	static const vr_u32 lens[] = { 1, 2, 15, 16, 17, 63, 64, 65, 100,
				       128, 129, 1024 };
	vr_u32 i, j;
	long r;

	(void)state;
	for (i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			r = run_lossless(0xffff00, windows[i], lens[j], 7);
			if (r < 0)
				fail_msg("stall: window %u, message %u packets",
					 windows[i], lens[j]);
		}
	}
}

/* AckReqs stay few: one per message, or per ACK interval for long ones. */
static void test_few_requests(void **state)
{
	(void)state;
	/* 64-packet messages, full window: only their last packets ask */
	assert_int_equal(run_lossless(0, 128, 64, 10), 10);
	/* one-packet messages: each asks (each completes) */
	assert_int_equal(run_lossless(0, 128, 1, 10), 10);
	/* 1024-packet message, full window: every 64th packet */
	assert_int_equal(run_lossless(0, 128, 1024, 1), 1024 / 64);
	/* window 32: every 16th */
	assert_int_equal(run_lossless(0, 32, 64, 1), 64 / 16);
}

/* The stream rule: who waits for an ACK instead of ringing a doorbell. */
static void test_stream(void **state)
{
	const vr_u64 us = 1000;
	vr_u64 until = 0;

	(void)state;
	/* Nothing in flight: nothing to wait for. */
	assert_false(vroce_stream_waits(0, 5 * us, 100, &until));
	/* A few in flight, never a stream: each post rings the doorbell. */
	assert_false(vroce_stream_waits(1, 5 * us, 100, &until));
	assert_false(vroce_stream_waits(VROCE_STREAM_DEPTH - 1, 6 * us, 100,
					&until));
	assert_true(until == 0);
	/* The depth starts a stream, held for 4 round trips of 100 us. */
	assert_true(vroce_stream_waits(VROCE_STREAM_DEPTH, 10 * us, 100,
				       &until));
	assert_true(until == 10 * us + 400 * us);
	/* It dips to one in flight: still a stream, to the end of the hold. */
	assert_true(vroce_stream_waits(1, 200 * us, 100, &until));
	assert_true(vroce_stream_waits(1, 410 * us, 100, &until));
	assert_false(vroce_stream_waits(1, 411 * us, 100, &until));
	/* Even within the hold, nothing in flight is no stream. */
	assert_true(vroce_stream_waits(VROCE_STREAM_DEPTH, 500 * us, 100,
				       &until));
	assert_false(vroce_stream_waits(0, 501 * us, 100, &until));
	/* No round trip measured, or a short one: the minimum hold. */
	until = 0;
	assert_true(vroce_stream_waits(64, 1000 * us, 0, &until));
	assert_true(until == 1000 * us + VROCE_STREAM_MIN_US * us);
	assert_true(vroce_stream_waits(64, 1000 * us, 10, &until));
	assert_true(until == 1000 * us + VROCE_STREAM_MIN_US * us);
	/* A longer round trip holds longer, up to the maximum. */
	assert_true(vroce_stream_waits(64, 1000 * us, 1000, &until));
	assert_true(until == 1000 * us + 4000 * us);
	assert_true(vroce_stream_waits(64, 1000 * us, 5000, &until));
	assert_true(until == 1000 * us + VROCE_STREAM_MAX_US * us);
	assert_true(vroce_stream_waits(64, 1000 * us, 0xffffffff, &until));
	assert_true(until == 1000 * us + VROCE_STREAM_MAX_US * us);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_window_open),
		cmocka_unit_test(test_window_adapt),
		cmocka_unit_test(test_unblocked),
		cmocka_unit_test(test_ackreq_rules),
		cmocka_unit_test(test_never_stalls),
		cmocka_unit_test(test_few_requests),
		cmocka_unit_test(test_stream),
	};

	return cmocka_run_group_tests_name("ack", tests, NULL, NULL);
}
