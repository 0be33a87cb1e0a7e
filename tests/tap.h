/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * Minimal TAP producer for the provider tests: one "ok N - ..." or
 * "not ok N - ..." line per check, diagnostics as "# ..." lines, and the
 * plan "1..N" at the end.
 */
#ifndef VROCE_TAP_H
#define VROCE_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static unsigned int tap_count;
static unsigned int tap_failures;

__attribute__((format(printf, 2, 3)))
static bool tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	if (!cond)
		tap_failures++;
	printf("%sok %u - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 1, 2)))
static __attribute__((unused)) void tap_skip(const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	printf("ok %u - # SKIP ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

__attribute__((format(printf, 1, 2)))
static __attribute__((unused)) void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Print the plan; the process exit status is 0 only if every check passed. */
static int tap_done(void)
{
	printf("1..%u\n", tap_count);
	fflush(stdout);
	return tap_failures ? 1 : 0;
}

#endif /* VROCE_TAP_H */
