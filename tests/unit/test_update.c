// SPDX-License-Identifier: GPL-2.0
/*
 * The update engine (btree_update.c) on real images made by our format:
 * many files committed (leaf splits, new roots, journal reclaim through
 * checkpoints), deletes (whiteouts), a punched extent (front cut of a
 * checksummed extent), replay of an unclean journal, refused keys, and
 * writes cut off at many points (fork per point: what a commit reported
 * as done is there after reopening, and the image passes our fsck -f -n).
 *
 * Needs $BCACHEFS (the binary) for format and fsck; tests/run.sh sets it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btree/btree.h"
#include "btree/btree_update.h"
#include "dev/dev.h"
#include "bkey/dirent.h"
#include "format/format.h"
#include "btree/node.h"
#include "fs/fs.h"
#include "fs/fsread.h"
#include "bkey/inode.h"
#include "util/util.h"
#include "testutil.h"
#include "testfs.h"

static unsigned nr_devs = 1;
static unsigned nr_files = 12000;

#define bin	test_bin
#define run	test_run

static void format_img(void)
{
	assert_int_equal(run("rm -f %s && truncate -s 256M %s && %s format --force %s >/dev/null",
			     img, img, bin(), img), 0);
}

static struct bch_fs *open_fs(bool ro)
{
	struct bch_fs_opts o = { .read_only = ro };

	return testfs_open(nr_devs, &o);
}

static struct bch_fs *open_rw(void)
{
	struct bch_fs *c = open_fs(false);

	testfs_rw_start(c);
	return c;
}

static void stop_close(struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_fs_rw_stop(c, &err);

	if (ret)
		fprintf(stderr, "rw_stop: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	printbuf_exit(&err);
	bch_fs_close(c);
}

static void root_hash(struct bch_fs *c, struct bch_hash_info *hi)
{
	struct bch_inode_unpacked root;

	assert_int_equal(bch_inode_get(c, BCACHEFS_ROOT_INO, &root, NULL), 0);
	assert_int_equal(bch_hash_info_init(hi, bch_inode_str_hash(&root), root.bi_hash_seed), 0);
}

/* A regular file @inum named "f<inum>" in the root directory. */
static void add_file(struct btree_trans *t, const struct bch_hash_info *hi, uint64_t inum)
{
	struct bch_inode_unpacked u = { 0 };
	uint8_t v[BCH_INODE_VAL_BYTES_MAX], d[64];
	char name[32];
	size_t bytes;
	struct bkey_h k = { .type = 128, .p = POS_H(inum, 0) };

	u.bi_inum = inum;
	u.bi_mode = S_IFREG | 0644;
	u.bi_hash_seed = inum * 0x9e3779b97f4a7c15ULL;
	u.bi_flags = (uint32_t)hi->type << 20;
	bytes = bch_inode_pack(&u, v);
	bch_trans_update(t, BTREE_ID_INODES, &k, v, (unsigned)bytes);

	snprintf(name, sizeof(name), "f%" PRIu64, inum);
	bytes = bch_dirent_encode(inum, BCH_DT_REG, name, strlen(name), d, sizeof(d));
	assert_true(bytes > 0);
	k.p = POS_H(BCACHEFS_ROOT_INO, bch_dirent_hash(hi, name, strlen(name)));
	bch_trans_update(t, BTREE_ID_DIRENTS, &k, d, (unsigned)bytes);
}

static void del_file(struct btree_trans *t, const struct bch_hash_info *hi, uint64_t inum)
{
	char name[32];

	snprintf(name, sizeof(name), "f%" PRIu64, inum);
	bch_trans_delete(t, BTREE_ID_INODES, POS_H(inum, 0));
	bch_trans_delete(t, BTREE_ID_DIRENTS,
			 POS_H(BCACHEFS_ROOT_INO, bch_dirent_hash(hi, name, strlen(name))));
}

static size_t count_keys(struct bch_fs *c, unsigned id)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	size_t n = 0;

	bch_btree_iter_init(&iter, c, id, POS_H_MIN, NULL);
	while (!bch_btree_iter_peek(&iter, &k) && k) {
		n++;
		bch_btree_iter_advance(&iter);
	}
	assert_int_equal(iter.nr_errors, 0);
	bch_btree_iter_exit(&iter);
	return n;
}

static bool file_exists(struct bch_fs *c, uint64_t inum)
{
	struct bch_inode_unpacked u;

	return !bch_inode_get(c, inum, &u, NULL);
}

static void commit_ok(struct btree_trans *t)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_trans_commit(t, &err);

	if (ret)
		fprintf(stderr, "commit: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	printbuf_exit(&err);
}

/* ---- many files, then deletes ---- */

static void test_many_files(void **state)
{
	struct bch_hash_info hi;
	struct btree_trans t;
	struct bch_rw_stats st;
	struct bch_fs *c;
	size_t inodes0, dirents0, expect;
	uint64_t i;

	format_img();
	c = open_fs(true);
	inodes0 = count_keys(c, BTREE_ID_INODES);
	dirents0 = count_keys(c, BTREE_ID_DIRENTS);
	bch_fs_close(c);

	c = open_rw();
	root_hash(c, &hi);
	bch_trans_init(&t, c);
	for (i = 0; i < nr_files; i++) {
		add_file(&t, &hi, 10000 + i);
		if (i % 40 == 39)
			commit_ok(&t);
		if (i == nr_files / 2) {
			struct printbuf err = PRINTBUF;

			commit_ok(&t);
			assert_int_equal(bch_fs_checkpoint(c, &err), 0);
			printbuf_exit(&err);
		}
	}
	commit_ok(&t);
	/* seen at once, before any checkpoint */
	assert_true(file_exists(c, 10000 + nr_files - 1));
	assert_int_equal(count_keys(c, BTREE_ID_INODES), inodes0 + nr_files);

	/* delete every third file */
	expect = nr_files;
	for (i = 0; i < nr_files; i += 3) {
		del_file(&t, &hi, 10000 + i);
		expect--;
		if (i % 60 == 0)
			commit_ok(&t);
	}
	commit_ok(&t);
	bch_trans_exit(&t);
	assert_false(file_exists(c, 10000));
	assert_true(file_exists(c, 10001));
	bch_fs_rw_stats(c, &st);
	assert_true(st.checkpoints >= 1);
	stop_close(c);

	c = open_fs(true);
	assert_true(BCH_SB_CLEAN(c->sb));
	assert_int_equal(c->overlay.nr_keys, 0);
	assert_int_equal(count_keys(c, BTREE_ID_INODES), inodes0 + expect);
	assert_int_equal(count_keys(c, BTREE_ID_DIRENTS), dirents0 + expect);
	assert_true(c->roots[BTREE_ID_INODES].level >= 1);	/* the root split */
	assert_false(file_exists(c, 10003));
	assert_true(file_exists(c, 10004));
	bch_fs_close(c);
	assert_int_equal(run("%s fsck -f -n %s >/dev/null", bin(), img), 0);
	if (getenv("KEEP_TMP"))
		run("cp --sparse=always %s %s/many.img", img, tmpdir);
}

/* ---- deleting most keys merges the leaves that shrank ---- */

static int count_leaf(void *arg, const struct btree_node_visit *v)
{
	if (!v->level)
		(*(size_t *)arg)++;
	return 0;
}

static size_t count_leaves(struct bch_fs *c, unsigned id)
{
	size_t n = 0;

	assert_int_equal(bch_btree_walk_nodes(c, id, count_leaf, &n, NULL), 0);
	return n;
}

static void test_merge(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_hash_info hi;
	struct btree_trans t;
	struct bch_fs *c;
	size_t full, after;
	uint64_t i, n = 36000;	/* several leaves of 256 KiB (packed), also in quick mode */

	format_img();
	c = open_rw();
	root_hash(c, &hi);
	bch_trans_init(&t, c);
	for (i = 0; i < n; i++) {
		add_file(&t, &hi, 60000 + i);
		if (i % 100 == 99)
			commit_ok(&t);
	}
	commit_ok(&t);
	assert_int_equal(bch_fs_checkpoint(c, &err), 0);
	full = count_leaves(c, BTREE_ID_INODES);
	assert_true(full >= 4);

	/* keep one file in 20 */
	for (i = 0; i < n; i++) {
		if (i % 20)
			del_file(&t, &hi, 60000 + i);
		if (i % 100 == 99)
			commit_ok(&t);
	}
	commit_ok(&t);
	bch_trans_exit(&t);
	assert_int_equal(bch_fs_checkpoint(c, &err), 0);
	after = count_leaves(c, BTREE_ID_INODES);
	assert_true(after * 4 <= full);
	assert_int_equal(count_keys(c, BTREE_ID_INODES), 2 + n / 20);
	stop_close(c);
	printbuf_exit(&err);
	assert_int_equal(run("%s fsck -f -n %s >/dev/null", bin(), img), 0);
}

/* ---- a journal that was not checkpointed is replayed, then flushed ---- */

static void test_unclean_replay(void **state)
{
	struct bch_hash_info hi;
	struct btree_trans t;
	struct bch_fs *c;

	format_img();
	c = open_rw();
	root_hash(c, &hi);
	bch_trans_init(&t, c);
	for (uint64_t i = 0; i < 100; i++)
		add_file(&t, &hi, 20000 + i);
	commit_ok(&t);
	bch_trans_exit(&t);
	bch_fs_close(c);		/* no stop: as if the process died */

	c = open_fs(true);
	assert_false(BCH_SB_CLEAN(c->sb));
	assert_true(c->overlay.nr_keys >= 200);
	assert_true(file_exists(c, 20099));
	bch_fs_close(c);
	assert_int_equal(run("%s fsck -f -n %s >/dev/null", bin(), img), 0);

	c = open_rw();			/* start + stop = recovery */
	stop_close(c);
	c = open_fs(true);
	assert_true(BCH_SB_CLEAN(c->sb));
	assert_int_equal(c->overlay.nr_keys, 0);
	assert_true(file_exists(c, 20099));
	bch_fs_close(c);
	assert_int_equal(run("%s fsck -f -n %s >/dev/null", bin(), img), 0);
}

/* ---- refused updates write nothing ---- */

static void test_refused(void **state)
{
	struct printbuf err = PRINTBUF;
	struct btree_trans t;
	struct bch_fs *c;
	struct bkey_h k = { .type = 128, .p = POS_H(30000, 0) };
	uint64_t junk[2] = { ~0ULL, ~0ULL };
	unsigned long writes;

	format_img();
	c = open_fs(true);
	assert_int_equal(bch_fs_rw_start(c, &err), -EROFS);
	bch_fs_close(c);

	c = open_rw();
	writes = dev_nr_writes;
	bch_trans_init(&t, c);
	bch_trans_update(&t, BTREE_ID_INODES, &k, junk, 4);	/* not a multiple of 8 */
	assert_int_equal(bch_trans_commit(&t, &err), -EINVAL);
	k.type = 200;						/* no such type */
	bch_trans_update(&t, BTREE_ID_DIRENTS, &k, junk, sizeof(junk));
	assert_int_equal(bch_trans_commit(&t, &err), -EINVAL);
	assert_int_equal(dev_nr_writes, writes);
	assert_true(bch_fs_rw(c));
	bch_trans_exit(&t);
	stop_close(c);
	assert_int_equal(dev_nr_writes, writes);	/* clean, nothing changed */
	printbuf_exit(&err);
}

/* ---- punching a hole in a checksummed extent ---- */

static void test_punch(void **state)
{
	struct btree_trans t;
	struct bch_fs *c;
	uint64_t inum;
	uint8_t *src = malloc(1 << 20), *got = malloc(1 << 20);
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/src", tmpdir);
	assert_int_equal(run("rm -rf %s && mkdir -p %s", path, path), 0);
	snprintf(path, sizeof(path), "%s/src/file", tmpdir);
	for (size_t i = 0; i < (1 << 20); i++)
		src[i] = (uint8_t)(i * 7 + i / 4096);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, src, 1 << 20), 1 << 20);
	close(fd);
	assert_int_equal(run("rm -f %s && truncate -s 256M %s && %s format --force --source %s/src %s >/dev/null",
			     img, img, bin(), tmpdir, img), 0);

	c = open_rw();
	assert_int_equal(bch_lookup_path(c, "/file", &inum, NULL), 0);
	bch_trans_init(&t, c);
	bch_trans_delete_extents(&t, inum, 256, 512);	/* bytes 128K..256K */
	commit_ok(&t);
	bch_trans_exit(&t);
	assert_int_equal(bch_read(c, inum, 0, got, 1 << 20, NULL), 1 << 20);
	memset(src + (128 << 10), 0, 128 << 10);
	assert_memory_equal(got, src, 1 << 20);
	stop_close(c);

	c = open_fs(true);
	memset(got, 0xaa, 1 << 20);
	assert_int_equal(bch_read(c, inum, 0, got, 1 << 20, NULL), 1 << 20);
	assert_memory_equal(got, src, 1 << 20);
	bch_fs_close(c);
	free(src);
	free(got);
}

/* ---- two devices, metadata on both, encrypted ---- */

static void test_replicas_encrypted(void **state)
{
	struct bch_hash_info hi;
	struct btree_trans t;
	struct bch_fs *c;
	unsigned n = nr_files / 4;

	assert_int_equal(run("rm -f %s %s && truncate -s 128M %s %s && "
			     "%s format --force --replicas=2 --encrypted --no_passphrase %s %s >/dev/null",
			     img, img2, img, img2, bin(), img, img2), 0);
	nr_devs = 2;
	c = open_rw();
	assert_true(c->encrypted && c->have_key);
	root_hash(c, &hi);
	bch_trans_init(&t, c);
	for (uint64_t i = 0; i < n; i++) {
		add_file(&t, &hi, 50000 + i);
		if (i % 50 == 49)
			commit_ok(&t);
	}
	commit_ok(&t);
	bch_trans_exit(&t);
	stop_close(c);

	c = open_fs(true);
	assert_true(BCH_SB_CLEAN(c->sb));
	assert_int_equal(count_keys(c, BTREE_ID_INODES), 2 + n);
	/* every node has a copy on each device */
	{
		struct btree_ptr_h p[4];

		assert_int_equal(btree_ptr_decode(&c->roots[BTREE_ID_INODES].key, p, 4), 2);
		assert_int_not_equal(p[0].dev, p[1].dev);
	}
	bch_fs_close(c);
	nr_devs = 1;
	assert_int_equal(run("%s fsck -f -n %s %s >/dev/null", bin(), img, img2), 0);
	/* one device alone is enough to read everything (degraded, on request) */
	assert_int_equal(run("%s list --degraded -b inodes %s 2>/dev/null | grep -c '^u64s' | grep -qx %u",
			     bin(), img, 2 + n), 0);
}

/* ---- writes cut off at many points ---- */

/* Child: commit files 40000.. in batches of 5, report each batch done on @fd. */
static void crash_child(long fault, int fd)
{
	struct printbuf err = PRINTBUF;
	struct bch_hash_info hi;
	struct btree_trans t;
	struct bch_fs *c = open_rw();
	unsigned long w0 = dev_nr_writes;

	root_hash(c, &hi);
	dev_fault_after(fault);
	bch_trans_init(&t, c);
	for (uint32_t b = 0; b < 60; b++) {
		for (uint64_t i = 0; i < 5; i++)
			add_file(&t, &hi, 40000 + 5 * b + i);
		if (bch_trans_commit(&t, &err))
			break;
		if (write(fd, &b, sizeof(b)) != sizeof(b))
			_exit(3);
		if (b == 30 && bch_fs_checkpoint(c, &err))
			break;
	}
	bch_fs_rw_stop(c, &err);
	bch_fs_close(c);
	if (fault < 0) {
		unsigned long n = dev_nr_writes - w0;

		if (write(fd, &(uint32_t){ 0xffffffff }, 4) != 4 || write(fd, &n, sizeof(n)) != sizeof(n))
			_exit(3);
	}
	_exit(0);
}

static long crash_run(long fault, uint32_t *done)
{
	int p[2];
	pid_t pid;
	uint32_t b;
	long total = -1;
	int st;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(p[0]);
		crash_child(fault, p[1]);
	}
	close(p[1]);
	*done = 0;
	while (read(p[0], &b, sizeof(b)) == sizeof(b)) {
		if (b == 0xffffffff) {
			unsigned long n;

			assert_int_equal(read(p[0], &n, sizeof(n)), sizeof(n));
			total = (long)n;
			break;
		}
		*done = b + 1;
	}
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return total;
}

static void test_crash_points(void **state)
{
	char clean[128];
	uint32_t done;
	long total;
	unsigned steps = getenv("TEST_QUICK") ? 6 : 24;

	format_img();
	snprintf(clean, sizeof(clean), "%s/clean.img", tmpdir);
	assert_int_equal(run("cp --sparse=always %s %s", img, clean), 0);
	total = crash_run(-1, &done);
	assert_int_equal(done, 60);
	assert_true(total > 60);

	for (unsigned s = 0; s < steps; s++) {
		long n = (long)((uint64_t)total * s / steps) + s % 3;
		struct bch_fs *c;
		uint32_t b;

		assert_int_equal(run("cp --sparse=always %s %s", clean, img), 0);
		crash_run(n, &done);
		c = open_fs(true);
		for (b = 0; b < 60; b++) {
			bool first = file_exists(c, 40000 + 5 * b);

			/* a batch is all there or not at all */
			for (uint64_t i = 1; i < 5; i++)
				assert_int_equal(file_exists(c, 40000 + 5 * b + i), first);
			/* what was reported done is there */
			if (b < done)
				assert_true(first);
		}
		bch_fs_close(c);
		if (run("%s fsck -f -n %s >/dev/null 2>&1", bin(), img)) {
			fprintf(stderr, "fsck -f -n failed after a cut at write %ld of %ld\n", n, total);
			fail();
		}
	}
}

static int setup(void **state)
{
	testfs_setup("test_update");
	if (getenv("TEST_QUICK"))
		nr_files = 9000;	/* still more than a leaf holds after the deletes */
	return 0;
}

static int teardown(void **state)
{
	if (getenv("KEEP_TMP")) {
		fprintf(stderr, "kept %s\n", tmpdir);
		return 0;
	}
	return testfs_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_files),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_unclean_replay),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_punch),
		cmocka_unit_test(test_replicas_encrypted),
		cmocka_unit_test(test_crash_points),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
