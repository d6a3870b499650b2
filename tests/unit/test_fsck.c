// SPDX-License-Identifier: GPL-2.0
/*
 * The fsck passes called in-process (fsck/fsck.h and the pass entry
 * points of fsck_sb.h, fsck_gc.h, fsck_fs.h, fsck_scan.h) on filesystems
 * made by our format, with problems planted through the update engine or
 * by flipping bytes on disk. What each pass finds is checked by problem
 * id (problems.h), exactly: no more, no less; then -y repairs and a
 * second check is clean. The tests/fsck corpus does the same per problem
 * through the binary; here the passes are taken one by one (each finds
 * its own class of problems and nothing of the others), and the state
 * the passes share is checked: modes, ask answers, read-only.
 *
 * Needs $BCACHEFS (the binary) for format; tests/run.sh sets it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc/alloc.h"
#include "bkey/dirent.h"
#include "bkey/extents.h"
#include "bkey/inode.h"
#include "bkey/xattr.h"
#include "btree/btree_update.h"
#include "btree/bulk.h"
#include "dev/super.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/fsread.h"
#include "fs/io_write.h"
#include "fsck/fsck.h"
#include "fsck/fsck_fs.h"
#include "fsck/fsck_gc.h"
#include "fsck/fsck_sb.h"
#include "fsck/fsck_scan.h"
#include "fsck/problems.h"
#include "util/util.h"
#include "testutil.h"

static char tmpdir[64], img[128];

static int setup(void **state)
{
	/* tmpfs when there is one: flushes cost nothing there */
	snprintf(tmpdir, sizeof(tmpdir), "/dev/shm/test_fsck.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_fsck.XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
	}
	snprintf(img, sizeof(img), "%s/a.img", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	test_run("rm -rf %s", tmpdir);
	return 0;
}

static void format_img(void)
{
	assert_int_equal(test_run("rm -f %s && truncate -s 32M %s && %s format -q --force "
				  "--bucket_size=32k --btree_node_size=16k %s",
				  img, img, test_bin(), img), 0);
}

/* Open @img for fsck in @mode (writable unless -n), as the command does. */
static struct bch_fs *open_fsck(struct fsck_state *s, enum fsck_mode mode,
				const struct fsck_ops *ops)
{
	struct bch_fs_opts o = { .read_only = mode == FSCK_NO, .fsck = s };
	struct printbuf err = PRINTBUF;
	char *devs[1] = { img };
	struct bch_fs *c = NULL;
	int ret;

	fsck_state_init(s, mode, ops);
	ret = bch_fs_open(devs, 1, &o, &c, &err);
	if (ret)
		fprintf(stderr, "open: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	bch_fsck_report_open(s, &err);
	s->read_only = true;
	if (mode != FSCK_NO && !bch_fs_rw_on_demand(c, &err))
		s->read_only = false;
	printbuf_exit(&err);
	return c;
}

static void close_fsck(struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;

	if (c->rw)
		assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	bch_fs_close(c);
	printbuf_exit(&err);
}

/* Problems seen, as "id:count id:count" in id order, for exact comparisons. */
static const char *seen_str(const struct fsck_state *s, bool fixed)
{
	static char buf[512];
	size_t n = 0;

	buf[0] = 0;
	for (unsigned p = 0; p < PROB_NR; p++) {
		unsigned long v = fixed ? s->fixed[p] : s->seen[p];

		if (v)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%u:%lu", n ? " " : "",
					      bch_problems[p].id, v);
	}
	return buf;
}

/* ---- planting through the engine ---- */

static struct bch_fs *open_rw(void)
{
	struct bch_fs_opts o = { 0 };
	struct printbuf err = PRINTBUF;
	char *devs[1] = { img };
	struct bch_fs *c = NULL;

	assert_int_equal(bch_fs_open(devs, 1, &o, &c, &err), 0);
	assert_int_equal(bch_fs_rw_start(c, &err), 0);
	printbuf_exit(&err);
	return c;
}

static void commit(struct btree_trans *t)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_trans_commit(t, &err);

	if (ret)
		fprintf(stderr, "commit: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	printbuf_exit(&err);
}

static void put_inode(struct btree_trans *t, uint64_t inum, unsigned mode, uint32_t nlink,
		      uint64_t size, uint64_t sectors, const struct bch_hash_info *hi)
{
	struct bch_inode_unpacked u = { 0 };
	uint8_t v[BCH_INODE_VAL_BYTES_MAX];
	struct bkey_h k = { .type = 128, .p = POS_H(inum, 0) };
	size_t bytes;

	u.bi_inum = inum;
	u.bi_mode = (uint16_t)mode;
	u.bi_nlink = nlink;
	u.bi_size = size;
	u.bi_sectors = sectors;
	u.bi_hash_seed = inum * 0x9e3779b97f4a7c15ULL;
	u.bi_flags = (uint32_t)hi->type << 20;
	bytes = bch_inode_pack(&u, v);
	bch_trans_update(t, BTREE_ID_INODES, &k, v, (unsigned)bytes);
}

static void put_dirent(struct btree_trans *t, const struct bch_hash_info *hi, uint64_t dir,
		       const char *name, uint64_t target, unsigned dt)
{
	uint8_t d[64];
	size_t bytes = bch_dirent_encode(target, dt, name, strlen(name), d, sizeof(d));
	struct bkey_h k = { .type = 128, .p = POS_H(dir, bch_dirent_hash(hi, name, strlen(name))) };

	assert_true(bytes > 0);
	bch_trans_update(t, BTREE_ID_DIRENTS, &k, d, (unsigned)bytes);
}

static void root_hash(struct bch_fs *c, struct bch_hash_info *hi)
{
	struct bch_inode_unpacked root;

	assert_int_equal(bch_inode_get(c, BCACHEFS_ROOT_INO, &root, NULL), 0);
	assert_int_equal(bch_hash_info_init(hi, bch_inode_str_hash(&root), root.bi_hash_seed), 0);
}

/*
 * Filesystem-level problems, one of each kind:
 *   "f" -> 5000, a file whose link count says 1 but has two names ("f", "g");
 *   "ghost" -> 99999, which does not exist;
 *   a reservation (extent) of inode 6000, which does not exist;
 *   an xattr of inode 7000, which does not exist.
 */
static void plant_fs_problems(void)
{
	struct bch_fs *c = open_rw();
	struct printbuf err = PRINTBUF;
	struct bch_hash_info hi;
	struct btree_trans t;

	root_hash(c, &hi);
	bch_trans_init(&t, c);
	put_inode(&t, 5000, S_IFREG | 0644, 0, 0, 0, &hi);
	put_dirent(&t, &hi, BCACHEFS_ROOT_INO, "f", 5000, BCH_DT_REG);
	put_dirent(&t, &hi, BCACHEFS_ROOT_INO, "g", 5000, BCH_DT_REG);
	put_dirent(&t, &hi, BCACHEFS_ROOT_INO, "ghost", 99999, BCH_DT_REG);
	{
		struct bch_reservation r = { .nr_replicas = 1 };
		struct bkey_h k = { .type = BCH_RESERVATION, .size = 8, .p = POS_H(6000, 8) };

		bch_trans_update(&t, BTREE_ID_EXTENTS, &k, &r, sizeof(r));
	}
	{
		uint8_t x[64];
		size_t bytes = bch_xattr_encode(BCH_XATTR_INDEX_USER, "a", 1, "v", 1, x, sizeof(x));
		struct bkey_h k = { .type = BCH_XATTR, .p = POS_H(7000, 1234) };

		assert_true(bytes > 0);
		bch_trans_update(&t, BTREE_ID_XATTRS, &k, x, (unsigned)bytes);
	}
	commit(&t);
	bch_trans_exit(&t);
	assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	bch_fs_close(c);
	printbuf_exit(&err);
}

static void test_clean(void **state)
{
	struct fsck_state s;
	struct bch_fs *c;

	format_img();
	c = open_fsck(&s, FSCK_NO, NULL);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_int_equal(s.nr_seen, 0);
	/* each pass alone: nothing */
	assert_int_equal(bch_fsck_sb(c, &s), 0);
	assert_int_equal(bch_fsck_gc(c, &s), 0);
	assert_int_equal(bch_fsck_fs(c, &s), 0);
	assert_int_equal(s.nr_seen, 0);
	assert_false(bch_fsck_scan_ran(&s));
	assert_int_equal(bch_fsck_scan_nr_filled(&s), 0);
	bch_fs_close(c);
}

static unsigned nr_progress;

static void count_progress(void *priv, const char *msg)
{
	nr_progress++;
	assert_ptr_equal(priv, &nr_progress);
	assert_true(strlen(msg) > 0);
}

static void test_fs_problems(void **state)
{
	struct fsck_state s;
	struct bch_fs *c;

	format_img();
	plant_fs_problems();

	/* the filesystem pass alone finds the four, and they are all it finds */
	c = open_fsck(&s, FSCK_NO, NULL);
	assert_int_equal(bch_fsck_fs(c, &s), 0);
	assert_string_equal(seen_str(&s, false), "501:1 512:1 516:1 524:1");
	assert_int_equal(s.nr_fixed, 0);
	/* the other passes see none of them */
	fsck_state_init(&s, FSCK_NO, NULL);
	assert_int_equal(bch_fsck_sb(c, &s), 0);
	assert_int_equal(bch_fsck_gc(c, &s), 0);
	assert_int_equal(s.nr_seen, 0);

	/*
	 * the whole run: the same, with progress lines: one per pass, the
	 * quick check and its verdict (it gives up: the passes follow), the end
	 */
	fsck_state_init(&s, FSCK_NO, NULL);
	nr_progress = 0;
	assert_int_equal(bch_fsck_run(c, &s, count_progress, &nr_progress), 0);
	assert_string_equal(seen_str(&s, false), "501:1 512:1 516:1 524:1");
	assert_int_equal(nr_progress, 8);
	assert_int_equal(fsck_nr_left(&s), 4);
	bch_fs_close(c);

	/* -p: the nlink is safe to fix, the rest needs -y */
	c = open_fsck(&s, FSCK_PREEN, NULL);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_string_equal(seen_str(&s, false), "501:1 512:1 516:1 524:1");
	assert_string_equal(seen_str(&s, true), "524:1");
	close_fsck(c);

	/* -y: everything; a second check is clean */
	c = open_fsck(&s, FSCK_YES, NULL);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_string_equal(seen_str(&s, false), "501:1 512:1 516:1");
	assert_string_equal(seen_str(&s, true), "501:1 512:1 516:1");
	assert_int_equal(fsck_nr_left(&s), 0);
	close_fsck(c);
	c = open_fsck(&s, FSCK_NO, NULL);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_int_equal(s.nr_seen, 0);
	/* what the repairs did: "ghost" gone, 5000 with its two links */
	{
		struct bch_inode_unpacked u;
		uint64_t inum;

		assert_int_equal(bch_lookup_path(c, "/ghost", &inum, NULL), -ENOENT);
		assert_int_equal(bch_lookup_path(c, "/g", &inum, NULL), 0);
		assert_int_equal(inum, 5000);
		assert_int_equal(bch_inode_get(c, 5000, &u, NULL), 0);
		assert_int_equal(bch_inode_nlink_get(&u), 2);
	}
	bch_fs_close(c);
}

/* ---- asking ---- */

static void flip_sb(uint64_t sector);
static uint64_t backup_sector(void);

struct ask_script {
	enum fsck_answer	answer[8];
	unsigned		nr_asked;
	unsigned		nr_reported;
};

static enum fsck_answer ask(void *priv, enum bch_problem p, const char *msg)
{
	struct ask_script *a = priv;

	assert_true(strlen(msg) > 0);
	return a->answer[a->nr_asked++];
}

static void report(void *priv, enum bch_problem p, const char *msg)
{
	((struct ask_script *)priv)->nr_reported++;
}

static void test_ask(void **state)
{
	struct ask_script a = { .answer = { FSCK_ANSWER_NO, FSCK_ANSWER_YES, FSCK_ANSWER_QUIT } };
	struct fsck_ops ops = { .report = report, .ask = ask, .priv = &a };
	struct fsck_state s;
	struct bch_fs *c;

	format_img();
	plant_fs_problems();
	/* no, yes, quit: one fixed, then nothing more is asked or fixed */
	c = open_fsck(&s, FSCK_ASK, &ops);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_int_equal(a.nr_asked, 3);
	assert_true(s.cancelled);
	assert_int_equal(s.nr_fixed, 1);
	assert_int_equal(a.nr_reported, s.nr_seen);
	close_fsck(c);

	/* three left; "all" for the first answers every later one of its kind */
	memset(&a, 0, sizeof(a));
	a.answer[0] = FSCK_ANSWER_ALL;
	a.answer[1] = FSCK_ANSWER_ALL;
	a.answer[2] = FSCK_ANSWER_ALL;
	c = open_fsck(&s, FSCK_ASK, &ops);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_false(s.cancelled);
	assert_int_equal(a.nr_asked, s.nr_seen);
	assert_int_equal(s.nr_fixed, s.nr_seen);
	assert_int_equal(s.nr_seen, 3);
	close_fsck(c);

	/* quit at a problem of the first pass: the later passes do not run */
	format_img();
	plant_fs_problems();
	flip_sb(backup_sector());
	memset(&a, 0, sizeof(a));
	a.answer[0] = FSCK_ANSWER_QUIT;
	c = open_fsck(&s, FSCK_ASK, &ops);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_int_equal(a.nr_asked, 1);
	assert_string_equal(seen_str(&s, false), "102:1");
	assert_int_equal(s.nr_fixed, 0);
	close_fsck(c);

	/* a writable open with fixes refused by read-only: nothing fixed, nothing asked */
	memset(&a, 0, sizeof(a));
	plant_fs_problems();
	c = open_fsck(&s, FSCK_ASK, &ops);
	s.read_only = true;
	a.answer[0] = FSCK_ANSWER_YES;
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_int_equal(a.nr_asked, 0);
	assert_int_equal(s.nr_fixed, 0);
	assert_true(s.nr_seen > 0);
	bch_fs_close(c);
}

/* ---- allocation: mark and sweep ---- */

static void test_gc(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bulk_keys keys = { 0 };
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	struct bch_io_opts o;
	struct btree_trans t;
	struct fsck_state s;
	struct bch_hash_info hi;
	struct bch_fs *c;
	uint8_t data[4096] = { 1 };

	format_img();
	/* a file with one block of data */
	c = open_rw();
	root_hash(c, &hi);
	bch_io_opts_get(c, NULL, &o);
	assert_int_equal(bch_write_extents(c, &o, 5000, 0, data, 8, &keys, &err), 8);
	bch_trans_init(&t, c);
	put_inode(&t, 5000, S_IFREG | 0644, 0, 4096, 8, &hi);
	put_dirent(&t, &hi, BCACHEFS_ROOT_INO, "f", 5000, BCH_DT_REG);
	bch_trans_update(&t, BTREE_ID_EXTENTS, &keys.k[0].k, keys.k[0].v, keys.k[0].v_bytes);
	commit(&t);
	extent_ptr_iter_init(&it, &keys.k[0]);
	assert_int_equal(extent_ptr_iter_next(&it, &p), 1);
	bulk_keys_exit(&keys);
	bch_trans_exit(&t);
	/* its bucket's gen moves on (its alloc key written at the stop): the pointer is stale */
	assert_true(bch_fs_rw_set_bucket_gen(c, p.ptr.dev, p.ptr.offset / 64,
					     (uint8_t)(p.ptr.gen + 1)));
	assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	bch_fs_close(c);

	/* the allocation pass alone finds it; the filesystem pass does not */
	c = open_fsck(&s, FSCK_NO, NULL);
	assert_int_equal(bch_fsck_gc(c, &s), 0);
	assert_string_equal(seen_str(&s, false), "401:1");
	fsck_state_init(&s, FSCK_NO, NULL);
	assert_int_equal(bch_fsck_fs(c, &s), 0);
	assert_int_equal(s.nr_seen, 0);
	bch_fs_close(c);

	/*
	 * -y: nothing else is in the bucket, so its gen was what went wrong:
	 * the bucket takes back the pointer's gen and the data stays
	 */
	c = open_fsck(&s, FSCK_YES, NULL);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_int_equal(s.seen[PROB_ptr_gen_stale], 1);
	assert_int_equal(s.fixed[PROB_ptr_gen_stale], 1);
	assert_int_equal(fsck_nr_left(&s), 0);
	close_fsck(c);
	c = open_fsck(&s, FSCK_NO, NULL);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_int_equal(s.nr_seen, 0);
	{
		struct bch_inode_unpacked u;
		struct bch_file *f;
		uint8_t buf[4096];

		assert_int_equal(bch_inode_get(c, 5000, &u, NULL), 0);
		assert_int_equal(u.bi_sectors, 8);
		f = xcalloc(1, sizeof(*f));
		bch_file_open(c, &u, f);
		assert_int_equal(bch_file_read(f, 0, buf, sizeof(buf), NULL, NULL), (ssize_t)sizeof(buf));
		assert_memory_equal(buf, data, sizeof(buf));
		bch_file_close(f);
		free(f);
	}
	bch_fs_close(c);
	printbuf_exit(&err);
}

/* ---- superblock copies ---- */

/* Flip a bit of the superblock copy at @sector (inside its checksummed body). */
static void flip_sb(uint64_t sector)
{
	uint8_t b;
	int fd = open(img, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, (off_t)(sector * 512 + 200)), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)(sector * 512 + 200)), 1);
	close(fd);
}

static uint64_t backup_sector(void)
{
	struct fsck_state s;
	struct bch_fs *c = open_fsck(&s, FSCK_NO, NULL);
	uint64_t backup;

	assert_true(c->sb->layout.nr_superblocks >= 2);
	backup = le64_to_cpu(c->sb->layout.sb_offset[1]);
	bch_fs_close(c);
	return backup;
}

static void test_sb(void **state)
{
	struct fsck_state s;
	struct bch_fs *c;

	format_img();
	/* one byte of the backup copy's body changed: its checksum fails */
	flip_sb(backup_sector());

	c = open_fsck(&s, FSCK_NO, NULL);
	assert_int_equal(s.nr_seen, 0);			/* the open used the primary */
	assert_int_equal(bch_fsck_sb(c, &s), 0);
	assert_string_equal(seen_str(&s, false), "102:1");
	fsck_state_init(&s, FSCK_NO, NULL);
	assert_int_equal(bch_fsck_gc(c, &s), 0);
	assert_int_equal(bch_fsck_fs(c, &s), 0);
	assert_int_equal(s.nr_seen, 0);
	bch_fs_close(c);

	/* -p rewrites it (at the checkpoint of the stop) */
	c = open_fsck(&s, FSCK_PREEN, NULL);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_string_equal(seen_str(&s, true), "102:1");
	close_fsck(c);
	c = open_fsck(&s, FSCK_NO, NULL);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_int_equal(s.nr_seen, 0);
	bch_fs_close(c);

	/* the primary broken: the open uses the backup and says so; fixed by -y */
	flip_sb(8);
	c = open_fsck(&s, FSCK_YES, NULL);
	assert_int_equal(s.seen[PROB_sb_primary_bad], 1);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_int_equal(s.fixed[PROB_sb_primary_bad], 1);
	close_fsck(c);
	c = open_fsck(&s, FSCK_NO, NULL);
	assert_int_equal(bch_fsck_run(c, &s, NULL, NULL), 0);
	assert_int_equal(s.nr_seen, 0);
	bch_fs_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_fs_problems),
		cmocka_unit_test(test_ask),
		cmocka_unit_test(test_gc),
		cmocka_unit_test(test_sb),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
