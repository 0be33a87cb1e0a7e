/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * Small helpers shared by the unit tests.
 */
#ifndef VROCE_TEST_UTIL_H
#define VROCE_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse @hex (pairs of hex digits; spaces, newlines and ':' ignored) into
 * @out. Returns the number of bytes; aborts the test on bad input or if
 * more than @max bytes would be written.
 */
size_t hex2bin(const char *hex, uint8_t *out, size_t max);

/*
 * A heap copy of @len bytes of @src placed so that its last byte is the
 * last byte of the allocation: with AddressSanitizer (make SAN=1) any read
 * past the end faults. Free with free().
 */
uint8_t *tight_copy(const void *src, size_t len);

/* Bitwise reference CRC-32 (standard: seeded with ~0, inverted result). */
uint32_t ref_crc32(const void *buf, size_t len);

#endif /* VROCE_TEST_UTIL_H */
