/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the unit tests (include after <cmocka.h>). */
#ifndef BCH_TESTUTIL_H
#define BCH_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse hex digits into @out (anything that is not a hex digit is skipped,
 * so spec dumps can be pasted with their spacing); returns the length.
 */
static inline size_t hex2bin(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	int hi = -1;

	for (; *s; s++) {
		int v;

		if (*s >= '0' && *s <= '9')
			v = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			v = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			v = *s - 'A' + 10;
		else
			continue;
		if (hi < 0) {
			hi = v;
		} else {
			assert_true(n < max);
			out[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	assert_int_equal(hi, -1);
	return n;
}

#endif
