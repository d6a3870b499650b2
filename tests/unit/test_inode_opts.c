// SPDX-License-Identifier: GPL-2.0
/*
 * Per-file options and quota limits as text (fs/inode_opts.h, fs/quota.h):
 * every option's names and stored values (option + 1), the bounds of
 * data_replicas, values with NUL bytes or too long, the inode fields they
 * land in, the xattr get of an unset and an unknown option, the listing;
 * the quota limit parser's names, numbers and refusals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "bkey/inode.h"
#include "fs/inode_opts.h"
#include "fs/quota.h"
#include "util/util.h"

/* Parse @val of option @name (no targets: no filesystem needed). */
static int parse(const char *name, const char *val, uint64_t *stored)
{
	struct printbuf err = PRINTBUF;
	int id = bch_inode_opt_lookup(name), ret;

	assert_true(id >= 0);
	ret = bch_inode_opt_parse(NULL, (unsigned)id, val, strlen(val), stored, &err);
	/* a refusal says why */
	assert_true(!ret || err.pos);
	printbuf_exit(&err);
	return ret;
}

static void test_choices(void **state)
{
	uint64_t v;

	assert_int_equal(parse("compression", "none", &v), 0);
	assert_int_equal(v, 1);			/* "none" is stored: it overrides */
	assert_int_equal(parse("compression", "lz4", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(parse("background_compression", "zstd", &v), 0);
	assert_int_equal(v, 4);
	assert_int_equal(parse("data_checksum", "crc64", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(parse("compression", "bzip2", &v), -EINVAL);
	assert_int_equal(parse("compression", "", &v), -EINVAL);
	assert_int_equal(parse("data_checksum", "CRC32C", &v), -EINVAL);
	assert_int_equal(parse("data_checksum", "crc128", &v), -EINVAL);
}

static void test_replicas(void **state)
{
	struct printbuf err = PRINTBUF;
	char big[300];
	uint64_t v = 99;

	assert_int_equal(parse("data_replicas", "1", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(parse("data_replicas", "3", &v), 0);
	assert_int_equal(v, 4);
	assert_int_equal(parse("data_replicas", "0", &v), -EINVAL);
	assert_int_equal(parse("data_replicas", "4", &v), -EINVAL);
	assert_int_equal(parse("data_replicas", "2x", &v), -EINVAL);
	assert_int_equal(parse("data_replicas", "", &v), -EINVAL);
	assert_int_equal(parse("data_replicas", "-1", &v), -EINVAL);
	assert_int_equal(parse("data_replicas", "18446744073709551618", &v), -EINVAL);
	/* a NUL inside, or a value too long: refused before anything */
	assert_int_equal(bch_inode_opt_parse(NULL, BCH_INODE_OPT_data_replicas, "2\0", 2, &v, &err),
			 -EINVAL);
	memset(big, '1', sizeof(big));
	assert_int_equal(bch_inode_opt_parse(NULL, BCH_INODE_OPT_compression, big, sizeof(big), &v,
					     &err), -EINVAL);
	assert_int_equal(bch_inode_opt_parse(NULL, BCH_INODE_OPT_NR, "1", 1, &v, &err), -EINVAL);
	printbuf_exit(&err);
}

static void test_fields(void **state)
{
	struct bch_inode_unpacked u;
	struct printbuf out = PRINTBUF;
	char buf[32];

	memset(&u, 0, sizeof(u));
	assert_int_equal(bch_inode_opt_lookup("project"), -1);	/* not an option xattr */
	assert_int_equal(bch_inode_opt_lookup("nosuch"), -1);
	for (unsigned i = 0; i < BCH_INODE_OPT_NR; i++) {
		assert_int_equal(bch_inode_opt_lookup(bch_inode_opt_name(i)), (int)i);
		bch_inode_opt_set(&u, i, 100 + i);
		assert_int_equal(bch_inode_opt_get(&u, i), 100 + i);
	}
	assert_null(bch_inode_opt_name(BCH_INODE_OPT_NR));
	/* each option its own field */
	assert_int_equal(u.bi_data_checksum, 100);
	assert_int_equal(u.bi_compression, 101);
	assert_int_equal(u.bi_background_compression, 102);
	assert_int_equal(u.bi_data_replicas, 103);
	assert_int_equal(u.bi_promote_target, 104);
	assert_int_equal(u.bi_foreground_target, 105);
	assert_int_equal(u.bi_background_target, 106);
	assert_int_equal(u.bi_project, 0);

	memset(&u, 0, sizeof(u));
	u.bi_compression = 4;
	u.bi_data_replicas = 3;
	assert_int_equal(bch_inode_opt_xattr_get(NULL, &u, "bcachefs.compression", buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "zstd", 4);
	assert_int_equal(bch_inode_opt_xattr_get(NULL, &u, "bcachefs.compression", NULL, 0), 4);
	assert_int_equal(bch_inode_opt_xattr_get(NULL, &u, "bcachefs.compression", buf, 2), -ERANGE);
	assert_int_equal(bch_inode_opt_xattr_get(NULL, &u, "bcachefs.data_replicas", buf, sizeof(buf)), 1);
	assert_memory_equal(buf, "2", 1);
	assert_int_equal(bch_inode_opt_xattr_get(NULL, &u, "bcachefs.data_checksum", buf, sizeof(buf)),
			 -ENODATA);
	assert_int_equal(bch_inode_opt_xattr_get(NULL, &u, "bcachefs.nosuch", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(bch_inode_opt_xattr_get(NULL, &u, "bcach", buf, sizeof(buf)), -EINVAL);
	/* an out-of-range stored value prints as such, never past the names */
	u.bi_compression = 9;
	bch_inode_opt_to_text(&out, NULL, BCH_INODE_OPT_compression, u.bi_compression);
	assert_string_equal(printbuf_str(&out), "invalid 8");
	printbuf_reset(&out);

	u.bi_compression = 4;
	bch_inode_opts_xattr_list(&out, &u);
	assert_int_equal(out.pos, sizeof("bcachefs.compression") + sizeof("bcachefs.data_replicas"));
	assert_memory_equal(out.buf, "bcachefs.compression\0bcachefs.data_replicas\0", out.pos);
	printbuf_exit(&out);
}

static void test_quota_limits(void **state)
{
	struct bch_quota_h lim = { 1, 2, 3, 4 };

	assert_int_equal(bch_quota_limits_parse("space_hard=100,inodes_soft=7", &lim), 0);
	assert_int_equal(lim.space_hardlimit, 100);
	assert_int_equal(lim.space_softlimit, 2);	/* not given: as it was */
	assert_int_equal(lim.inodes_hardlimit, 3);
	assert_int_equal(lim.inodes_softlimit, 7);
	assert_int_equal(bch_quota_limits_parse("space_soft=0,inodes_hard=18446744073709551615", &lim), 0);
	assert_int_equal(lim.space_softlimit, 0);
	assert_true(lim.inodes_hardlimit == UINT64_MAX);
	assert_int_equal(bch_quota_limits_parse("space=1", &lim), -EINVAL);
	assert_int_equal(bch_quota_limits_parse("space_hard", &lim), -EINVAL);
	assert_int_equal(bch_quota_limits_parse("space_hard=", &lim), -EINVAL);
	assert_int_equal(bch_quota_limits_parse("space_hard=-1", &lim), -EINVAL);
	assert_int_equal(bch_quota_limits_parse("space_hard=1k", &lim), -EINVAL);
	assert_int_equal(bch_quota_limits_parse("space_hard=18446744073709551616", &lim), -EINVAL);
	assert_int_equal(bch_quota_type_lookup("usr"), 0);
	assert_int_equal(bch_quota_type_lookup("group"), 1);
	assert_int_equal(bch_quota_type_lookup("prj"), 2);
	assert_int_equal(bch_quota_type_lookup("other"), -1);
	assert_string_equal(bch_quota_type_name(2), "project");
	assert_null(bch_quota_type_name(3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choices),
		cmocka_unit_test(test_replicas),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_quota_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
