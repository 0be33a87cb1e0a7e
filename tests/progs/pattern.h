/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * A byte pattern that differs with its seed and its offset, for the test
 * programs that check the data a peer sent.
 */
#ifndef VROCE_PATTERN_H
#define VROCE_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline uint8_t pattern_byte(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 7 + seed * 31 + (i >> 8));
}

static inline void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern_byte(i, seed);
}

/* 1 if the @len bytes at @p are the pattern of @seed. */
static inline int same(const uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern_byte(i, seed))
			return 0;
	return 1;
}

#endif /* VROCE_PATTERN_H */
