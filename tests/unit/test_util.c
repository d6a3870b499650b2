// SPDX-License-Identifier: GPL-2.0
/*
 * The utility layer (util/util.h, util/errcode.h): the printbuf (growth
 * well past its first allocation, the number, uuid and human-size
 * printers with their edge values), the JSON writer (nesting,
 * commas, compact and pretty forms, string escaping), size and number
 * parsing with overflow at the exact bounds, and the error space
 * (messages, classes, matching).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/errcode.h"
#include "util/util.h"

static void test_printbuf(void **state)
{
	struct printbuf p = PRINTBUF;
	char big[5000];

	/* empty: "" not NULL, reset and exit harmless */
	assert_string_equal(printbuf_str(&p), "");
	printbuf_reset(&p);
	printbuf_exit(&p);
	assert_null(p.buf);

	pr_buf(&p, "%d-%s", 42, "x");
	pr_char(&p, '!');
	pr_bytes(&p, "abc\0def", 7);	/* bytes as given, a NUL included */
	assert_int_equal(p.pos, 4 + 1 + 7);
	assert_memory_equal(p.buf, "42-x!abc\0def", 13);	/* and the NUL after */
	printbuf_reset(&p);
	assert_int_equal(p.pos, 0);
	assert_string_equal(printbuf_str(&p), "");

	/* growth: many appends and one long one, the content intact */
	for (unsigned i = 0; i < 1000; i++)
		pr_u64(&p, i % 10);
	assert_int_equal(p.pos, 1000);
	assert_int_equal(p.buf[999], '9');
	assert_int_equal(p.buf[1000], 0);
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	pr_str(&p, big);
	assert_int_equal(p.pos, 1000 + sizeof(big) - 1);
	assert_int_equal(strlen(printbuf_str(&p)), p.pos);
	printbuf_reset(&p);

	/* pr_u64: both ends */
	pr_u64(&p, 0);
	pr_char(&p, ' ');
	pr_u64(&p, UINT64_MAX);
	assert_string_equal(printbuf_str(&p), "0 18446744073709551615");
	printbuf_reset(&p);

	/* uuid */
	{
		const uint8_t u[16] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
					0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe };
		const uint8_t z[16] = { 0 };

		pr_uuid(&p, u);
		assert_string_equal(printbuf_str(&p), "01234567-89ab-cdef-1032-547698badcfe");
		assert_true(uuid_is_zero(z));
		assert_false(uuid_is_zero(u));
		assert_false(uuid_is_zero((const uint8_t[16]) { [15] = 1 }));
	}
	printbuf_exit(&p);
}

static const char *human(int64_t sectors)
{
	static char s[64];
	struct printbuf p = PRINTBUF;

	pr_human_sectors(&p, sectors);
	snprintf(s, sizeof(s), "%s", printbuf_str(&p));
	printbuf_exit(&p);
	return s;
}

static void test_human_sectors(void **state)
{
	assert_string_equal(human(0), "0");
	assert_string_equal(human(1), "512");
	assert_string_equal(human(2), "1.0K");
	assert_string_equal(human(3), "1.5K");
	assert_string_equal(human(2047), "1023.5K");
	assert_string_equal(human(2048), "1.0M");
	assert_string_equal(human(2048 * 1024), "1.0G");
	assert_string_equal(human(3LL << 31), "3.0T");
	assert_string_equal(human(1LL << 41), "1.0P");
	assert_string_equal(human(1LL << 51), "1.0E");
	assert_string_equal(human(INT64_MAX), "4096.0E");	/* no unit past E */
	assert_string_equal(human(-1), "-512");
	assert_string_equal(human(-2048), "-1.0M");
	assert_string_equal(human(INT64_MIN), "-4096.0E");	/* no overflow */
}

static void test_json(void **state)
{
	struct printbuf p = PRINTBUF;
	struct json j;
	const uint8_t u[16] = { 0xff, [15] = 1 };

	json_init(&j, &p, false);
	json_obj_begin(&j, NULL);
	json_str(&j, "a", "x");
	json_u64(&j, "b", UINT64_MAX);
	json_bool(&j, "d", true);
	json_arr_begin(&j, "e");
	json_u64(&j, NULL, 1);
	json_obj_begin(&j, NULL);
	json_obj_end(&j);
	json_arr_begin(&j, NULL);
	json_arr_end(&j);
	json_bool(&j, NULL, false);
	json_arr_end(&j);
	json_strn(&j, "f", "xyz", 2);
	json_uuid(&j, "g", u);
	json_obj_end(&j);
	assert_string_equal(printbuf_str(&p),
			    "{\"a\":\"x\",\"b\":18446744073709551615,"
			    "\"d\":true,\"e\":[1,{},[],false],\"f\":\"xy\","
			    "\"g\":\"ff000000-0000-0000-0000-000000000001\"}");
	printbuf_reset(&p);

	/* pretty: two spaces per level, a newline at the end */
	json_init(&j, &p, true);
	json_obj_begin(&j, NULL);
	json_u64(&j, "a", 1);
	json_arr_begin(&j, "b");
	json_u64(&j, NULL, 2);
	json_arr_end(&j);
	json_obj_begin(&j, "c");
	json_obj_end(&j);
	json_obj_end(&j);
	assert_string_equal(printbuf_str(&p),
			    "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ],\n  \"c\": {}\n}\n");
	printbuf_reset(&p);

	/* escaping: quotes, backslashes, controls, DEL, bytes that are not UTF-8 */
	pr_json_string(&p, "q\"b\\n\nt\tr\r\x01\x1f\x7f\xff", 14);
	assert_string_equal(printbuf_str(&p),
			    "\"q\\\"b\\\\n\\nt\\tr\\r\\u0001\\u001f\\u007f\\u00ff\"");
	printbuf_reset(&p);
	pr_json_string(&p, "a\0b", 3);		/* a NUL inside: escaped, not the end */
	assert_string_equal(printbuf_str(&p), "\"a\\u0000b\"");
	printbuf_reset(&p);
	/* keys are escaped too */
	json_init(&j, &p, false);
	json_obj_begin(&j, NULL);
	json_u64(&j, "k\"", 0);
	json_obj_end(&j);
	assert_string_equal(printbuf_str(&p), "{\"k\\\"\":0}");
	printbuf_exit(&p);
}

static void test_parse(void **state)
{
	uint64_t v = 7;

	assert_int_equal(parse_size("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_size("512", &v), 0);
	assert_int_equal(v, 512);
	assert_int_equal(parse_size("4k", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("4K", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("3m", &v), 0);
	assert_int_equal(v, 3ULL << 20);
	assert_int_equal(parse_size("2g\n", &v), 0);	/* a trailing newline (sysfs) */
	assert_int_equal(v, 2ULL << 30);
	assert_int_equal(parse_size("1t", &v), 0);
	assert_int_equal(v, 1ULL << 40);
	assert_int_equal(parse_size("16383p", &v), 0);
	assert_int_equal(v, 16383ULL << 50);
	assert_int_equal(parse_size("15e", &v), 0);
	assert_int_equal(v, 15ULL << 60);
	assert_int_equal(parse_size("18446744073709551615", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	/* overflow, at the bounds */
	v = 7;
	assert_int_equal(parse_size("18446744073709551616", &v), -ERANGE);
	assert_int_equal(parse_size("16384p", &v), -ERANGE);
	assert_int_equal(parse_size("16e", &v), -ERANGE);
	assert_int_equal(parse_size("1z", &v), -ERANGE);
	assert_int_equal(parse_size("1y", &v), -ERANGE);
	/* syntax */
	assert_int_equal(parse_size("k", &v), -EINVAL);
	assert_int_equal(parse_size("4kb", &v), -EINVAL);
	assert_int_equal(parse_size("4x", &v), -EINVAL);
	assert_int_equal(parse_size("-4", &v), -EINVAL);
	assert_int_equal(parse_size(" 4", &v), -EINVAL);
	assert_int_equal(parse_size("4 ", &v), -EINVAL);
	assert_int_equal(parse_size("4\n\n", &v), -EINVAL);
	assert_int_equal(v, 7);			/* untouched on error */

	assert_int_equal(parse_u64("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_u64("18446744073709551615", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	v = 7;
	assert_int_equal(parse_u64("18446744073709551616", &v), -ERANGE);
	assert_int_equal(parse_u64("", &v), -EINVAL);
	assert_int_equal(parse_u64("+1", &v), -EINVAL);
	assert_int_equal(parse_u64("1k", &v), -EINVAL);
	assert_int_equal(parse_u64("1\n", &v), -EINVAL);
	assert_int_equal(v, 7);
}

static void test_memory(void **state)
{
	char *s = xstrdup("hello");
	uint8_t *z;
	uint64_t t0, t1;

	assert_string_equal(s, "hello");
	s = xrealloc(s, 4096);
	assert_string_equal(s, "hello");
	free(s);

	/* big zeroed arrays: zero, writable, freed */
	z = bch_big_zalloc(64 << 20);
	assert_non_null(z);
	assert_int_equal(z[0] | z[(64 << 20) - 1] | z[12345678], 0);
	z[(64 << 20) - 1] = 1;
	bch_big_free(z);
	bch_big_free(NULL);
	z = bch_big_zalloc(100);
	assert_non_null(z);
	assert_int_equal(z[99], 0);
	bch_big_free(z);

	t0 = bch_now_ns();
	t1 = bch_now_ns();
	assert_true(t0 > 0 && t1 >= t0);
}

static void test_errcode(void **state)
{
	/* ours: message and class, either sign */
	assert_string_equal(bch_err_str(-BCH_ERR_nospc), "no space left on device");
	assert_string_equal(bch_err_str(BCH_ERR_nospc), "no space left on device");
	assert_int_equal(bch_err_errno(-BCH_ERR_nospc), ENOSPC);
	assert_int_equal(bch_err_errno(-BCH_ERR_sb_bad_csum), EINVAL);
	assert_int_equal(bch_err_errno(-BCH_ERR_dev_missing), ENXIO);
	assert_true(bch_err_matches(-BCH_ERR_nospc, ENOSPC));
	assert_true(bch_err_matches(-BCH_ERR_nospc, -ENOSPC));
	assert_false(bch_err_matches(-BCH_ERR_nospc, EIO));
	/* the first and last of ours */
	assert_string_equal(bch_err_str(-BCH_ERR_not_bcachefs), "not a bcachefs superblock (bad magic)");
	assert_int_equal(BCH_ERR_not_bcachefs, BCH_ERR_START);
	assert_int_equal(BCH_ERR_MAX - 1, BCH_ERR_sb_removed);
	assert_int_equal(bch_err_errno(-(BCH_ERR_MAX - 1)), EINVAL);
	/* plain errno values */
	assert_string_equal(bch_err_str(-ENOENT), strerror(ENOENT));
	assert_int_equal(bch_err_errno(-EIO), EIO);
	assert_true(bch_err_matches(-EIO, EIO));
	/* 0 matches nothing; past our range: strerror's words */
	assert_false(bch_err_matches(0, 0));
	assert_false(bch_err_matches(0, EIO));
	assert_int_equal(bch_err_errno(-BCH_ERR_MAX), BCH_ERR_MAX);
	assert_non_null(bch_err_str(-BCH_ERR_MAX));
	assert_non_null(bch_err_str(-(BCH_ERR_START - 1)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printbuf),
		cmocka_unit_test(test_human_sectors),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_errcode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
