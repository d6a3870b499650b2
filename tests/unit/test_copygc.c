// SPDX-License-Identifier: GPL-2.0
/*
 * The copying GC (fs/copygc.h):
 *   - bucket choice (bch_copygc_pick()): fewest live sectors first, ties
 *     by bucket; within the budget; stops once the gain wanted is there;
 *     nothing when emptying gains no bucket; full buckets never;
 *   - a pass on a filesystem opened in-process: files written until
 *     ENOSPC, every other one deleted, a pass empties buckets, every file
 *     left reads back as written, a refill takes (nearly) all the space the
 *     deletes freed (the writes call copygc when no bucket is free), and
 *     fsck -f -n finds nothing.
 *
 * Needs $BCACHEFS (the binary) for format and fsck; tests/run.sh sets it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btree/btree.h"
#include "btree/btree_update.h"
#include "bkey/inode.h"
#include "core/bch_fs.h"
#include "format/format.h"
#include "fs/copygc.h"
#include "fs/fs.h"
#include "fs/fsops.h"
#include "fs/fsread.h"
#include "util/errcode.h"
#include "util/util.h"
#include "testutil.h"

static char img[128];
static char tmpdir[64];

#define bin	test_bin
#define run	test_run

static void test_pick(void **state)
{
	struct bch_copygc_cand b[] = {
		{ .bucket = 7, .live = 100 }, { .bucket = 3, .live = 10 },
		{ .bucket = 9, .live = 128 }, { .bucket = 5, .live = 127 },
		{ .bucket = 1, .live = 20 },  { .bucket = 2, .live = 20 },
	};
	struct bch_copygc_cand one[] = { { .bucket = 1, .live = 64 } };
	struct bch_copygc_cand full[] = { { .bucket = 1, .live = 128 }, { .bucket = 2, .live = 200 } };
	size_t n = sizeof(b) / sizeof(b[0]);

	assert_int_equal(bch_copygc_pick(b, 0, 128, 1 << 20, 1), 0);
	assert_int_equal(bch_copygc_pick(b, n, 0, 1 << 20, 1), 0);
	/* a single bucket gains nothing: its copy takes a bucket */
	assert_int_equal(bch_copygc_pick(one, 1, 128, 1 << 20, 1), 0);
	assert_int_equal(bch_copygc_pick(full, 2, 128, 1 << 20, 1), 0);

	/* 10 + 20 fit one bucket: two emptied for one, the gain wanted */
	assert_int_equal(bch_copygc_pick(b, n, 128, 1 << 20, 1), 2);
	assert_int_equal(b[0].bucket, 3);
	assert_int_equal(b[0].live, 10);
	/* ties by bucket */
	assert_int_equal(b[1].bucket, 1);
	assert_int_equal(b[2].bucket, 2);
	assert_int_equal(b[3].live, 100);
	assert_int_equal(b[4].live, 127);
	assert_int_equal(b[5].live, 128);

	/*
	 * Want more than there is: every bucket that is not full (live 277,
	 * three buckets of copies, five emptied: gain 2), never the full one
	 */
	assert_int_equal(bch_copygc_pick(b, n, 128, 1 << 20, 100), 5);
	/* 10, 20, 20: gain 2 reached after three */
	assert_int_equal(bch_copygc_pick(b, n, 128, 1 << 20, 2), 3);
	/* the budget: 10 + 20 = 30 > 25, and one bucket alone gains nothing */
	assert_int_equal(bch_copygc_pick(b, n, 128, 25, 1), 0);
	/* 10 + 20 + 20 + 100 = 150 > 149: three */
	assert_int_equal(bch_copygc_pick(b, n, 128, 149, 100), 3);
}

static struct bch_fs *open_rw(const char *size)
{
	struct bch_fs_opts o = { 0 };
	struct printbuf err = PRINTBUF;
	char *devs[1] = { img };
	struct bch_fs *c = NULL;

	assert_int_equal(run("rm -f %s && truncate -s %s %s && %s format -q --force %s >/dev/null",
			     img, size, img, bin(), img), 0);
	assert_int_equal(bch_fs_open(devs, 1, &o, &c, &err), 0);
	assert_int_equal(bch_btree_read_bucket_gens(c, &err), 0);
	assert_int_equal(bch_fs_rw_start(c, &err), 0);
	bch_fs_rw_set_batch(c, true);
	printbuf_exit(&err);
	return c;
}

static const struct bch_creds root = { 0, 0, 022 };

#define FILE_BYTES	4096

static void fill(uint8_t *buf, unsigned n)
{
	for (unsigned i = 0; i < FILE_BYTES; i++)
		buf[i] = (uint8_t)(n * 131 + i * 7 + (i >> 8));
}

/* Files "N" from @first on until ENOSPC: how many were written. */
static unsigned write_until_full(struct bch_fs *c, unsigned first)
{
	struct printbuf err = PRINTBUF;
	uint8_t buf[FILE_BYTES];
	unsigned n = first;

	for (;; n++) {
		struct bch_inode_unpacked u;
		char name[32];
		ssize_t w;
		int ret;

		snprintf(name, sizeof(name), "%u", n);
		printbuf_reset(&err);
		ret = bch_fs_create(c, BCACHEFS_ROOT_INO, name, strlen(name), S_IFREG | 0644, 0,
				    NULL, &root, &u, &err);
		if (ret == -BCH_ERR_nospc || ret == -ENOSPC)
			break;
		assert_int_equal(ret, 0);
		fill(buf, n);
		w = bch_fs_write(c, u.bi_inum, 0, buf, FILE_BYTES, 0, NULL, &err);
		if (w != FILE_BYTES) {
			assert_true(w < 0 && bch_err_errno((int)w) == ENOSPC);
			assert_int_equal(bch_fs_unlink(c, BCACHEFS_ROOT_INO, name, strlen(name), false,
						       NULL, NULL, NULL, &err), 0);
			break;
		}
	}
	printbuf_exit(&err);
	return n - first;
}

static void check_file(struct bch_fs *c, unsigned n)
{
	uint8_t want[FILE_BYTES], got[FILE_BYTES];
	struct bch_inode_unpacked d;
	uint64_t inum;
	char name[32];

	snprintf(name, sizeof(name), "%u", n);
	assert_int_equal(bch_inode_get(c, BCACHEFS_ROOT_INO, &d, NULL), 0);
	assert_int_equal(bch_lookup(c, &d, name, strlen(name), 0, &inum, NULL, NULL), 0);
	fill(want, n);
	assert_int_equal(bch_read(c, inum, 0, got, FILE_BYTES, NULL), FILE_BYTES);
	assert_memory_equal(got, want, FILE_BYTES);
}

static void test_pass(void **state)
{
	struct bch_fs *c = open_rw("16M");
	struct printbuf err = PRINTBUF;
	unsigned nr, deleted = 0, refill;
	int emptied;

	nr = write_until_full(c, 0);
	assert_true(nr > 1000);
	/* every other file: each bucket is left half full */
	for (unsigned i = 0; i < nr; i += 2) {
		char name[32];

		snprintf(name, sizeof(name), "%u", i);
		assert_int_equal(bch_fs_unlink(c, BCACHEFS_ROOT_INO, name, strlen(name), false,
					       NULL, NULL, NULL, NULL), 0);
		deleted++;
	}
	assert_int_equal(bch_fs_fsync(c, NULL), 0);
	emptied = bch_copygc_run(c, true, &err);
	fprintf(stderr, "%u files, %u deleted; a pass emptied %d buckets, moved %" PRIu64
		" extents %s\n", nr, deleted, emptied, c->copygc.extents, printbuf_str(&err));
	assert_true(emptied > 0);
	assert_true(c->copygc.extents > 0);
	assert_int_equal(c->copygc.errors, 0);
	for (unsigned i = 1; i < nr; i += 2)
		check_file(c, i);

	/* the refill: the writes make room with copygc when no bucket is free */
	refill = write_until_full(c, nr);
	fprintf(stderr, "refill: %u files of %u deleted; copygc: %" PRIu64 " passes, %" PRIu64
		" buckets\n", refill, deleted, c->copygc.passes, c->copygc.buckets);
	assert_true(refill * 100 >= deleted * 85);
	for (unsigned i = 1; i < nr; i += 2)
		check_file(c, i);
	for (unsigned i = nr; i < nr + refill; i++)
		check_file(c, i);

	assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	printbuf_exit(&err);
	bch_fs_close(c);
	assert_int_equal(run("%s fsck -f -n %s > %s/fsck.out 2>&1 || { cat %s/fsck.out; false; }",
			     bin(), img, tmpdir, tmpdir), 0);
}

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/test_copygc.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(img, sizeof(img), "%s/img", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	run("rm -rf %s", tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_pass),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
