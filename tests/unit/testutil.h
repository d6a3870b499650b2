/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the unit tests (include after <cmocka.h>). */
#ifndef BCH_TESTUTIL_H
#define BCH_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

/* The bcachefs binary the image tests run ($BCACHEFS; tests/run.sh sets it). */
static inline const char *test_bin(void)
{
	const char *b = getenv("BCACHEFS");

	return b && *b ? b : "./bcachefs";
}

/* system() of a printf-formatted command: its exit code, -1 if it died. */
static inline __attribute__((format(printf, 1, 2))) int test_run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

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
