/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unit tests that format images and open them with the engine: one
 * scratch folder per test binary with two image paths (img, img2), and
 * the open and read-write start that fail the test with the engine's
 * message. Include after <cmocka.h> and testutil.h.
 */
#ifndef BCH_TESTFS_H
#define BCH_TESTFS_H

#include <stdio.h>
#include <stdlib.h>

#include "btree/btree_update.h"
#include "fs/fs.h"
#include "util/util.h"

static char tmpdir[64], img[128], img2[128];

/* The scratch folder of test @name: on a tmpfs when there is one (flushes cost nothing there). */
static inline int testfs_setup(const char *name)
{
	snprintf(tmpdir, sizeof(tmpdir), "/dev/shm/%s.XXXXXX", name);
	if (!mkdtemp(tmpdir)) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/%s.XXXXXX", name);
		assert_non_null(mkdtemp(tmpdir));
	}
	snprintf(img, sizeof(img), "%s/a.img", tmpdir);
	snprintf(img2, sizeof(img2), "%s/b.img", tmpdir);
	return 0;
}

static inline int testfs_teardown(void)
{
	test_run("rm -rf %s", tmpdir);
	return 0;
}

/* bch_fs_open() of img (and img2 when @nr is 2) with @o: the filesystem, or the test fails. */
static inline struct bch_fs *testfs_open(unsigned nr, const struct bch_fs_opts *o)
{
	struct printbuf err = PRINTBUF;
	char *devs[2] = { img, img2 };
	struct bch_fs *c = NULL;
	int ret = bch_fs_open(devs, nr, o, &c, &err);

	if (ret)
		fprintf(stderr, "open: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	printbuf_exit(&err);
	return c;
}

static inline void testfs_rw_start(struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_fs_rw_start(c, &err);

	if (ret)
		fprintf(stderr, "rw_start: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	printbuf_exit(&err);
}

#endif
