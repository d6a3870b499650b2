// SPDX-License-Identifier: GPL-2.0
/*
 * First-mount initialisation (fs/init.h) of filesystems formatted with
 * --no_initialize:
 *   - the result: INITIALIZED and CLEAN set, journal entries 1 and 2
 *     (clean), 20 journal buckets, the root directory and lost+found with
 *     the given hash seeds and times, lost+found's dirent, replicas
 *     entries for btree and journal on every device (two devices, two
 *     metadata replicas), and our fsck -n passing;
 *   - the option without lost+found;
 *   - refusals: already initialised, opened read-only, a prepare callback
 *     that fails or leaves no space; the superblock on disk is then still
 *     uninitialised (nothing it refers to was written).
 *
 * Needs $BCACHEFS (the binary) for format and fsck; tests/run.sh sets it.
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
#include <sys/stat.h>

#include "alloc/alloc.h"
#include "bkey/inode.h"
#include "dev/super.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/fsread.h"
#include "fs/init.h"
#include "util/errcode.h"
#include "util/util.h"
#include "testutil.h"
#include "testfs.h"


static int setup(void **state)
{
	return testfs_setup("test_init");
}

static int teardown(void **state)
{
	return testfs_teardown();
}

static void format_uninit(unsigned nr)
{
	if (nr == 1)
		assert_int_equal(test_run("rm -f %s && truncate -s 32M %s && %s format -q --force "
					  "--no_initialize --bucket_size=32k --btree_node_size=16k %s",
					  img, img, test_bin(), img), 0);
	else
		assert_int_equal(test_run("rm -f %s %s && truncate -s 32M %s %s && %s format -q "
					  "--force --no_initialize --metadata_replicas=2 "
					  "--bucket_size=32k --btree_node_size=16k %s %s",
					  img, img2, img, img2, test_bin(), img, img2), 0);
}

static struct bch_fs *open_imgs(unsigned nr, bool ro)
{
	struct bch_fs_opts o = { .read_only = ro };

	return testfs_open(nr, &o);
}

#define NOW_NS	1500000000123456789LL	/* 2017-07-14 */

static void test_initialize(void **state)
{
	struct bch_init_opts o = { .now_ns = NOW_NS, .root_hash_seed = 0x1111222233334444ULL,
				   .lf_hash_seed = 0x5555666677778888ULL };
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked root, lf;
	struct bch_stat st;
	struct bch_fs *c;
	uint64_t inum;
	unsigned dt;
	int ret;

	format_uninit(1);
	c = open_imgs(1, false);
	assert_false(BCH_SB_INITIALIZED(c->sb));
	assert_int_equal(bch_inode_get(c, BCACHEFS_ROOT_INO, &root, NULL), -ENOENT);

	ret = bch_fs_initialize_opts(c, &o, &err);
	if (ret)
		fprintf(stderr, "init: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);

	/* the superblock in memory (and on disk, below) */
	assert_true(BCH_SB_INITIALIZED(c->sb));
	assert_true(BCH_SB_CLEAN(c->sb));
	assert_int_equal(bch_sb_journal_nr_buckets(c->devs[0]->sb),
			 bch_journal_buckets_wanted(1024, 64));
	/* journal: entries 1 and 2, the second with last_seq = seq (clean) */
	assert_int_equal(c->journal.seq, 2);
	assert_int_equal(c->journal.last_seq, 2);
	assert_int_equal(c->journal.nr_errors, 0);

	/* the root directory */
	assert_int_equal(bch_inode_get(c, BCACHEFS_ROOT_INO, &root, &err), 0);
	assert_true(S_ISDIR(root.bi_mode));
	assert_int_equal(root.bi_mode & 07777, 0755);
	assert_int_equal(root.bi_hash_seed, 0x1111222233334444ULL);
	assert_int_equal(bch_inode_nlink_get(&root), 3);	/* ".", its name, lost+found's ".." */
	bch_inode_stat(c, &root, &st);
	assert_int_equal(st.mtime.tv_sec, NOW_NS / 1000000000);
	assert_int_equal(st.otime.tv_sec, NOW_NS / 1000000000);
	assert_int_equal(st.ctime.tv_sec, NOW_NS / 1000000000);
	assert_int_equal(st.uid, 0);

	/* lost+found, named in the root */
	assert_int_equal(bch_lookup(c, &root, "lost+found", 10, 0, &inum, &dt, &err), 0);
	assert_int_equal(inum, 4097);
	assert_int_equal(dt, BCH_DT_DIR);
	assert_int_equal(bch_inode_get(c, 4097, &lf, &err), 0);
	assert_true(S_ISDIR(lf.bi_mode));
	assert_int_equal(lf.bi_hash_seed, 0x5555666677778888ULL);
	assert_int_equal(bch_inode_nlink_get(&lf), 2);
	assert_int_equal(bch_lookup(c, &root, "x", 1, 0, &inum, &dt, &err), -ENOENT);

	/* replicas: btree and journal on device 0 */
	{
		struct bch_replicas_table r;

		bch_replicas_load(&r, c->sb);
		assert_true(bch_replicas_has(&r, BCH_DATA_BTREE, 1));
		assert_true(bch_replicas_has(&r, BCH_DATA_JOURNAL, 1));
		assert_int_equal(r.nr, 2);
		bch_replicas_exit(&r);
	}

	/* twice: refused */
	printbuf_reset(&err);
	assert_int_equal(bch_fs_initialize(c, &err), -EINVAL);
	assert_non_null(strstr(printbuf_str(&err), "already initialized"));
	bch_fs_close(c);

	/* on disk: read back by another open and by our fsck */
	c = open_imgs(1, true);
	assert_true(BCH_SB_INITIALIZED(c->sb));
	assert_int_equal(bch_lookup_path(c, "/lost+found", &inum, &err), 0);
	assert_int_equal(inum, 4097);
	bch_fs_close(c);
	assert_int_equal(test_run("%s fsck -n %s >/dev/null 2>&1", test_bin(), img), 0);
	printbuf_exit(&err);
}

static void test_no_lost_found(void **state)
{
	struct bch_init_opts o = { .no_lost_found = true };
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked root;
	struct bch_fs *c;
	uint64_t inum;

	format_uninit(1);
	c = open_imgs(1, false);
	assert_int_equal(bch_fs_initialize_opts(c, &o, &err), 0);
	assert_int_equal(bch_inode_get(c, BCACHEFS_ROOT_INO, &root, &err), 0);
	assert_int_equal(bch_inode_nlink_get(&root), 2);
	assert_int_not_equal(root.bi_hash_seed, 0);	/* random */
	assert_int_equal(bch_lookup(c, &root, "lost+found", 10, 0, &inum, NULL, &err), -ENOENT);
	assert_int_equal(bch_inode_get(c, 4097, &root, NULL), -ENOENT);
	bch_fs_close(c);
	printbuf_exit(&err);
}

static void test_two_devices(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_replicas_table r;
	struct bch_fs *c;

	format_uninit(2);
	c = open_imgs(2, false);
	assert_int_equal(bch_fs_initialize(c, &err), 0);
	bch_replicas_load(&r, c->sb);
	assert_true(bch_replicas_has(&r, BCH_DATA_BTREE, 3));
	assert_true(bch_replicas_has(&r, BCH_DATA_JOURNAL, 3));
	bch_replicas_exit(&r);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(bch_sb_journal_nr_buckets(c->devs[i]->sb), 20);
		/* every member's own superblock says initialised too */
		assert_true(BCH_SB_INITIALIZED(c->devs[i]->sb));
	}
	bch_fs_close(c);
	assert_int_equal(test_run("%s fsck -n %s %s >/dev/null 2>&1", test_bin(), img, img2), 0);
	printbuf_exit(&err);
}

static int prepare_fail(struct bch_fs *c, struct bch_allocator *a, void *priv,
			struct printbuf *err)
{
	(*(unsigned *)priv)++;
	pr_str(err, "prepare says no\n");
	return -EIO;
}

/* Every free bucket taken: no room for the journal. */
static int prepare_take_all(struct bch_fs *c, struct bch_allocator *a, void *priv,
			    struct printbuf *err)
{
	struct bch_dev_alloc *d = a->devs[0];

	(*(unsigned *)priv)++;
	for (uint64_t b = 0; b < d->nbuckets; b++)
		if (bch_alloc_bucket_free(a, 0, b))
			bch_alloc_mark(a, 0, b, BCH_DATA_USER, 1, err);
	return 0;
}

static void test_refusals(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_init_opts o = { 0 };
	unsigned calls = 0;
	struct bch_fs *c;
	int ret;

	format_uninit(1);
	/* read-only */
	c = open_imgs(1, true);
	assert_int_equal(bch_fs_initialize(c, &err), -BCH_ERR_read_only);
	assert_non_null(strstr(printbuf_str(&err), "read-only"));
	bch_fs_close(c);

	/* the prepare callback's error is returned; nothing written */
	c = open_imgs(1, false);
	o.prepare = prepare_fail;
	o.populate_priv = &calls;
	printbuf_reset(&err);
	assert_int_equal(bch_fs_initialize_opts(c, &o, &err), -EIO);
	assert_int_equal(calls, 1);
	assert_non_null(strstr(printbuf_str(&err), "prepare says no"));
	assert_false(BCH_SB_INITIALIZED(c->sb));

	/* no free bucket left: no space, nothing written */
	o.prepare = prepare_take_all;
	printbuf_reset(&err);
	ret = bch_fs_initialize_opts(c, &o, &err);
	assert_true(bch_err_matches(ret, ENOSPC));
	assert_int_equal(calls, 2);
	assert_false(BCH_SB_INITIALIZED(c->sb));
	bch_fs_close(c);

	c = open_imgs(1, true);
	assert_false(BCH_SB_INITIALIZED(c->sb));
	assert_int_equal(bch_sb_journal_nr_buckets(c->devs[0]->sb), 0);
	bch_fs_close(c);

	/* and it can still be initialised */
	c = open_imgs(1, false);
	assert_int_equal(bch_fs_initialize(c, &err), 0);
	bch_fs_close(c);
	printbuf_exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_initialize),
		cmocka_unit_test(test_no_lost_found),
		cmocka_unit_test(test_two_devices),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
