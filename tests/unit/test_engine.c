// SPDX-License-Identifier: GPL-2.0
/*
 * The update engine's life cycle and its running-filesystem interface
 * (btree/btree_update.h: engine.c, checkpoint.c, sb_write.c; the
 * superblock writer and key context of core/bch_fs.h), where
 * test_update.c covers what commits and checkpoints put in the btrees:
 *   - start: refused read-only (-EROFS) and uninitialised (-EINVAL);
 *     on demand: nothing happens until the first write, a failed start
 *     says why;
 *   - the superblocks: CLEAN cleared on disk before the first journal
 *     write (crash: the next open replays), set again by the stop; seq
 *     + 1 on every member, each keeping its own index; a write that
 *     would be invalid leaves the disk alone;
 *   - batched commits: nothing durable until bch_journal_flush() (or
 *     the age limit of flush_old), seq_durable follows; unbatched:
 *     every commit durable;
 *   - a full filesystem: data stops short of the btree
 *     reserve; a commit that finds no room fails with ENOSPC and changes
 *     nothing (overlay, journal, btree); reserve mode still commits; the
 *     checkpoint of what was committed always fits;
 *   - the counters, bucket gens, the metadata reserve, key versions,
 *     replicas entries, a forced rewrite of a root, and the key context
 *     (geometry, gens) and member reads of core/bch_fs.h.
 *
 * Needs $BCACHEFS (the binary) for format; tests/run.sh sets it.
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
#include "bkey/bkey_types.h"
#include "bkey/inode.h"
#include "btree/btree_update.h"
#include "btree/reserve.h"
#include "core/bch_fs.h"
#include "dev/super.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/fsread.h"
#include "util/errcode.h"
#include "util/util.h"
#include "testutil.h"
#include "testfs.h"


static int setup(void **state)
{
	return testfs_setup("test_engine");
}

static int teardown(void **state)
{
	return testfs_teardown();
}

static void format(unsigned nr, const char *opts)
{
	if (nr == 1)
		assert_int_equal(test_run("rm -f %s && truncate -s 32M %s && %s format -q --force "
					  "--bucket_size=32k --btree_node_size=16k %s %s",
					  img, img, test_bin(), opts, img), 0);
	else
		assert_int_equal(test_run("rm -f %s %s && truncate -s 32M %s %s && %s format -q "
					  "--force --bucket_size=32k --btree_node_size=16k %s %s %s",
					  img, img2, img, img2, test_bin(), opts, img, img2), 0);
}

static struct bch_fs *open_imgs(unsigned nr, bool ro)
{
	struct bch_fs_opts o = { .read_only = ro };

	return testfs_open(nr, &o);
}

static void rw_start(struct bch_fs *c)
{
	testfs_rw_start(c);
}

static void stop_close(struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;

	assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	bch_fs_close(c);
	printbuf_exit(&err);
}

/* An inode key (a regular file, no name: fsck is not run here). */
static void put_inode(struct btree_trans *t, uint64_t inum, uint64_t size)
{
	struct bch_inode_unpacked u = { 0 };
	uint8_t v[BCH_INODE_VAL_BYTES_MAX];
	struct bkey_h k = { .type = 128, .p = POS_H(inum, 0) };
	size_t bytes;

	u.bi_inum = inum;
	u.bi_mode = S_IFREG | 0644;
	u.bi_size = size;
	bytes = bch_inode_pack(&u, v);
	bch_trans_update(t, BTREE_ID_INODES, &k, v, (unsigned)bytes);
}

static int commit_inode(struct bch_fs *c, uint64_t inum, uint64_t size)
{
	struct printbuf err = PRINTBUF;
	struct btree_trans t;
	int ret;

	bch_trans_init(&t, c);
	put_inode(&t, inum, size);
	ret = bch_trans_commit(&t, &err);
	bch_trans_exit(&t);
	printbuf_exit(&err);
	return ret;
}

/* The CLEAN flag and seq of the superblock on disk (a fresh read-only open). */
static bool disk_clean(uint64_t *seq)
{
	struct bch_fs *c = open_imgs(1, true);
	bool clean = BCH_SB_CLEAN(c->sb);

	if (seq)
		*seq = le64_to_cpu(c->sb->seq);
	bch_fs_close(c);
	return clean;
}

static void test_start_refusals(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_fs *c;

	format(1, "");
	/* read-only open */
	c = open_imgs(1, true);
	assert_false(bch_fs_rw(c));
	assert_int_equal(bch_fs_rw_start(c, &err), -EROFS);
	assert_true(strlen(printbuf_str(&err)) > 0);
	assert_int_equal(bch_fs_rw_on_demand(c, &err), -EROFS);
	assert_false(bch_fs_rw(c));
	/* nothing to report, nothing written */
	{
		struct bch_rw_stats s;

		bch_fs_rw_stats(c, &s);
		assert_int_equal(s.commits, 0);
	}
	assert_false(bch_fs_rw_set_bucket_gen(c, 0, 100, 1));
	assert_false(bch_fs_rw_replicas_add(c, BCH_DATA_USER, 1));
	assert_int_equal(bch_fs_rw_write_sb(c, &err), -EROFS);
	bch_fs_close(c);

	/* not initialised */
	assert_int_equal(test_run("rm -f %s && truncate -s 32M %s && %s format -q --force "
				  "--no_initialize --bucket_size=32k --btree_node_size=16k %s",
				  img, img, test_bin(), img), 0);
	c = open_imgs(1, false);
	printbuf_reset(&err);
	assert_int_equal(bch_fs_rw_start(c, &err), -EINVAL);
	assert_int_equal(bch_fs_rw_on_demand(c, &err), -EINVAL);
	bch_fs_close(c);
	printbuf_exit(&err);
}

static void test_on_demand_and_clean(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_rw_stats s;
	struct bch_fs *c;
	uint64_t seq0, seq1, seq2;

	format(1, "");
	assert_true(disk_clean(&seq0));

	/* on demand: nothing is started nor written until the first write */
	c = open_imgs(1, false);
	assert_int_equal(bch_fs_rw_on_demand(c, &err), 0);
	assert_true(c->rw_on_demand);
	assert_null(c->rw);
	assert_true(disk_clean(&seq1));
	assert_int_equal(seq1, seq0);

	/* the first commit starts it; the disk says unclean before the entry is written */
	assert_int_equal(commit_inode(c, 5000, 1), 0);
	assert_non_null(c->rw);
	assert_true(bch_fs_rw(c));
	assert_false(disk_clean(&seq1));
	assert_true(seq1 > seq0);
	bch_fs_rw_stats(c, &s);
	assert_int_equal(s.commits, 1);
	assert_int_equal(s.keys, 1);
	assert_true(s.journal_entries >= 1);

	/* the stop: a checkpoint, clean again, seq moved on */
	assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	assert_null(c->rw);
	bch_fs_close(c);
	assert_true(disk_clean(&seq2));
	assert_true(seq2 > seq1);

	/* a start that stops again with nothing changed writes nothing */
	c = open_imgs(1, false);
	rw_start(c);
	stop_close(c);
	assert_true(disk_clean(&seq1));
	assert_int_equal(seq1, seq2);

	/* the inode is in the btree */
	c = open_imgs(1, true);
	{
		struct bch_inode_unpacked u;

		assert_int_equal(bch_inode_get(c, 5000, &u, NULL), 0);
		assert_int_equal(u.bi_size, 1);
	}
	bch_fs_close(c);
	printbuf_exit(&err);
}

/* A commit that is not flushed: the next open (a crash) does not see it. */
static void test_batch_flush(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_fs *c, *r;
	uint64_t d0, d1;

	format(1, "");
	c = open_imgs(1, false);
	rw_start(c);
	/* unbatched: every commit durable when it returns */
	d0 = bch_journal_seq_durable(c);
	assert_int_equal(commit_inode(c, 5000, 1), 0);
	d1 = bch_journal_seq_durable(c);
	assert_true(d1 > d0);

	bch_fs_rw_set_batch(c, true);
	assert_int_equal(commit_inode(c, 5001, 2), 0);
	assert_int_equal(commit_inode(c, 5002, 3), 0);
	assert_int_equal(bch_journal_seq_durable(c), d1);
	/* not old enough for the timer */
	assert_int_equal(bch_journal_flush_old(c, 3600ULL * 1000000000ULL, &err), 0);
	assert_int_equal(bch_journal_seq_durable(c), d1);
	/* what a crash now would leave: 5000, not 5001 */
	r = open_imgs(1, true);
	{
		struct bch_inode_unpacked u;

		assert_int_equal(bch_inode_get(r, 5000, &u, NULL), 0);
		assert_int_equal(bch_inode_get(r, 5001, &u, NULL), -ENOENT);
	}
	bch_fs_close(r);

	/* old enough (age 0): written; both batched commits durable together */
	assert_int_equal(bch_journal_flush_old(c, 0, &err), 0);
	assert_true(bch_journal_seq_durable(c) > d1);
	d1 = bch_journal_seq_durable(c);
	r = open_imgs(1, true);
	{
		struct bch_inode_unpacked u;

		assert_int_equal(bch_inode_get(r, 5001, &u, NULL), 0);
		assert_int_equal(bch_inode_get(r, 5002, &u, NULL), 0);
		assert_int_equal(u.bi_size, 3);
	}
	bch_fs_close(r);

	/* fsync: the same */
	assert_int_equal(commit_inode(c, 5003, 4), 0);
	assert_int_equal(bch_journal_seq_durable(c), d1);
	assert_int_equal(bch_journal_flush(c, &err), 0);
	assert_true(bch_journal_seq_durable(c) > d1);
	/* nothing open: a flush writes nothing more */
	d1 = bch_journal_seq_durable(c);
	assert_int_equal(bch_journal_flush(c, &err), 0);
	assert_int_equal(bch_journal_seq_durable(c), d1);
	stop_close(c);
	printbuf_exit(&err);
}

static void test_allocator_hooks(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_rw_stats s0, s1;
	struct bch_fs *c;
	uint64_t b, v0;
	uint8_t gen, g;

	format(1, "");
	c = open_imgs(1, false);
	rw_start(c);
	assert_non_null(bch_fs_rw_alloc(c));
	assert_true(bch_fs_rw_reserve(c, 0) > 0);
	assert_true(bch_fs_rw_reserve(c, 0) < 1024);
	assert_int_equal(bch_fs_rw_reserve(c, 5), 0);

	/* key versions: strictly increasing, never 0 */
	v0 = bch_fs_rw_key_version(c);
	assert_true(v0 > 0);
	assert_true(bch_fs_rw_key_version(c) > v0);

	/* a data bucket: a new gen, known to the engine; closed, it comes back after its entry */
	assert_int_equal(bch_fs_rw_data_bucket(c, 0, &b, &gen, &err), 0);
	assert_true(bch_fs_rw_bucket_gen(c, 0, b, &g));
	assert_int_equal(g, gen);
	assert_false(bch_alloc_bucket_free(bch_fs_rw_alloc(c), 0, b));
	bch_fs_rw_data_bucket_close(c, 0, b);
	assert_int_equal(bch_journal_flush(c, &err), 0);
	assert_int_equal(commit_inode(c, 5000, 1), 0);	/* a durable entry after the close */
	assert_true(bch_alloc_bucket_free(bch_fs_rw_alloc(c), 0, b));
	assert_int_equal(bch_fs_rw_data_bucket(c, 5, &b, &gen, &err) < 0, 1);

	/* set a gen: the stop writes its alloc key (a checkpoint) */
	bch_fs_rw_stats(c, &s0);
	assert_true(bch_fs_rw_set_bucket_gen(c, 0, 900, 77));
	assert_false(bch_fs_rw_set_bucket_gen(c, 0, 5000, 1));
	assert_false(bch_fs_rw_bucket_gen(c, 3, 0, &g));
	assert_true(bch_fs_rw_bucket_gen(c, 0, 900, &g));
	assert_int_equal(g, 77);
	/* a replicas entry: in the superblocks from the next checkpoint */
	assert_true(bch_fs_rw_replicas_add(c, BCH_DATA_USER, 1));
	{
		struct bch_replicas_table r;

		bch_replicas_load(&r, c->sb);
		assert_false(bch_replicas_has(&r, BCH_DATA_USER, 1));
		bch_replicas_exit(&r);
	}
	assert_int_equal(bch_fs_rw_replicas_mark(c, BCH_DATA_CACHED, 1, &err), 0);
	{	/* marked: in the superblock now */
		struct bch_replicas_table r;

		bch_replicas_load(&r, c->sb);
		assert_true(bch_replicas_has(&r, BCH_DATA_CACHED, 1));
		bch_replicas_exit(&r);
	}
	assert_int_equal(bch_fs_checkpoint(c, &err), 0);
	bch_fs_rw_stats(c, &s1);
	assert_int_equal(s1.checkpoints, s0.checkpoints + 1);
	assert_true(s1.nodes_written > s0.nodes_written);
	stop_close(c);

	/* the next start reads the gen back from the alloc btree */
	c = open_imgs(1, false);
	rw_start(c);
	assert_true(bch_fs_rw_bucket_gen(c, 0, 900, &g));
	assert_int_equal(g, 77);
	assert_non_null(c->devs[0]->bucket_gens);
	assert_int_equal(c->devs[0]->bucket_gens[900], 77);
	{
		struct bch_replicas_table r;

		bch_replicas_load(&r, c->sb);
		assert_true(bch_replicas_has(&r, BCH_DATA_USER, 1));
		bch_replicas_exit(&r);
	}
	/* the key context sees the gens and the geometry */
	{
		struct bkey_fs_ctx ctx;
		struct bch_dev_geom geom;

		bch_fs_key_ctx(c, &ctx);
		assert_int_equal(ctx.nr_devices, 1);
		assert_int_equal(ctx.btree_node_size, 32);
		assert_true(ctx.dev_geom(ctx.priv, 0, &geom));
		assert_int_equal(geom.bucket_size, 64);
		assert_int_equal(geom.nbuckets, 1024);
		assert_false(ctx.dev_geom(ctx.priv, 1, &geom));
		assert_true(ctx.bucket_gen(ctx.priv, 0, 900, &g));
		assert_int_equal(g, 77);
		assert_false(ctx.bucket_gen(ctx.priv, 0, 1024, &g));
		assert_false(ctx.bucket_gen(ctx.priv, 1, 0, &g));
	}
	stop_close(c);
	printbuf_exit(&err);
}

/* What must reach the disk makes the stop run a checkpoint, even with no commit. */
static void test_stop_checkpoints(void **state)
{
	struct bch_replicas_table r;
	struct bch_fs *c;
	uint8_t g;

	format(1, "");
	c = open_imgs(1, false);
	rw_start(c);
	assert_true(bch_fs_rw_replicas_add(c, BCH_DATA_CACHED, 1));
	stop_close(c);
	c = open_imgs(1, true);
	bch_replicas_load(&r, c->sb);
	assert_true(bch_replicas_has(&r, BCH_DATA_CACHED, 1));
	bch_replicas_exit(&r);
	bch_fs_close(c);

	c = open_imgs(1, false);
	rw_start(c);
	assert_true(bch_fs_rw_set_bucket_gen(c, 0, 901, 9));
	stop_close(c);
	c = open_imgs(1, false);
	rw_start(c);
	assert_true(bch_fs_rw_bucket_gen(c, 0, 901, &g));
	assert_int_equal(g, 9);
	stop_close(c);
}

/* A forced rewrite of a root with nothing changed: a new node, the same keys. */
static void test_force_rewrite(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_rw_stats s0, s1;
	struct bch_fs *c;
	uint64_t old_ptr;

	format(1, "");
	c = open_imgs(1, false);
	rw_start(c);
	assert_true(c->roots[BTREE_ID_INODES].present);
	memcpy(&old_ptr, c->roots[BTREE_ID_INODES].key.v, 8);
	bch_fs_rw_stats(c, &s0);
	bch_fs_rw_force_rewrite(c, BTREE_ID_INODES, c->roots[BTREE_ID_INODES].level, POS_H_MAX);
	assert_int_equal(bch_fs_rw_stop(c, &err), 0);	/* runs the checkpoint */
	bch_fs_close(c);

	c = open_imgs(1, true);
	assert_memory_not_equal(c->roots[BTREE_ID_INODES].key.v, &old_ptr, 8);
	{
		struct bch_inode_unpacked u;

		assert_int_equal(bch_inode_get(c, BCACHEFS_ROOT_INO, &u, NULL), 0);
		assert_int_equal(bch_inode_get(c, 4097, &u, NULL), 0);
	}
	bch_fs_close(c);
	(void)s1;
	printbuf_exit(&err);
}

static void test_sb_write(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_sb *sbs[BCH_FS_MAX_DEVS] = { NULL };
	struct bch_fs *c;
	uint64_t seq;

	format(2, "");
	c = open_imgs(2, false);
	rw_start(c);
	seq = le64_to_cpu(c->sb->seq);
	/* the engine's write: seq + 1 on both, each its own index */
	assert_int_equal(bch_fs_rw_write_sb(c, &err), 0);
	assert_int_equal(le64_to_cpu(c->sb->seq), seq + 1);
	assert_int_equal(c->devs[0]->sb->dev_idx, 0);
	assert_int_equal(c->devs[1]->sb->dev_idx, 1);
	assert_int_equal(le64_to_cpu(c->devs[1]->sb->seq), seq + 1);
	/* each keeps its own journal buckets */
	assert_int_equal(bch_sb_journal_nr_buckets(c->devs[0]->sb), 20);
	assert_int_equal(bch_sb_journal_nr_buckets(c->devs[1]->sb), 20);

	/* core: an invalid image for one member: nothing written, the images freed */
	sbs[0] = xmalloc(bch_sb_bytes(c->devs[0]->sb));
	memcpy(sbs[0], c->devs[0]->sb, bch_sb_bytes(c->devs[0]->sb));
	sbs[0]->seq = cpu_to_le64(seq + 2);
	sbs[1] = xmalloc(bch_sb_bytes(c->devs[1]->sb));
	memcpy(sbs[1], c->devs[1]->sb, bch_sb_bytes(c->devs[1]->sb));
	sbs[1]->block_size = cpu_to_le16(3);	/* not a power of two */
	assert_true(bch_fs_sb_write_all(c, sbs, &err) < 0);
	assert_null(sbs[0]);
	assert_null(sbs[1]);
	assert_int_equal(le64_to_cpu(c->devs[0]->sb->seq), seq + 1);
	stop_close(c);
	c = open_imgs(2, true);
	assert_true(le64_to_cpu(c->sb->seq) >= seq + 1);
	assert_int_not_equal(le16_to_cpu(c->sb->block_size), 3);

	/* bch_dev_read: inside the device; past its end refused */
	{
		uint8_t buf[4096];

		assert_int_equal(bch_dev_read(c, 1, buf, sizeof(buf), 8), 0);
		assert_int_equal(le64_to_cpu(((struct bch_sb *)buf)->offset), 8);
		assert_true(bch_dev_read(c, 1, buf, sizeof(buf), 32 << 11) < 0);
		assert_true(bch_dev_read(c, 7, buf, sizeof(buf), 0) < 0);
	}
	bch_fs_close(c);
	printbuf_exit(&err);
}

/* Full: every error is true, and a checkpoint always fits. */
static void test_full_reserve(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked u;
	struct btree_trans t;
	struct bch_fs *c;
	uint64_t b, data = 0, inum, keys, changes, seq;
	uint8_t gen;
	int ret = 0;

	format(1, "");
	c = open_imgs(1, false);
	rw_start(c);
	bch_fs_rw_set_batch(c, true);
	/* data: buckets until ENOSPC, the btree reserve left */
	while (!(ret = bch_fs_rw_data_bucket(c, 0, &b, &gen, &err)))
		data++;
	assert_int_equal(ret, -BCH_ERR_nospc);
	assert_true(data > 500);
	/* (btree nodes may have taken some of the reserve since) */
	assert_true(bch_alloc_dev_free(bch_fs_rw_alloc(c), 0) >= bch_fs_rw_reserve(c, 0) / 2);
	/* metadata: inodes until ENOSPC */
	for (inum = 5000; inum < 200000; inum++) {
		keys = c->overlay.nr_keys;
		changes = c->overlay.changes;
		seq = c->journal.seq;
		printbuf_reset(&err);
		ret = commit_inode(c, inum, 1);
		if (ret)
			break;
	}
	assert_int_equal(ret, -BCH_ERR_nospc);
	assert_true(inum > 5100);
	/*
	 * the refused commit changed nothing: no key of it anywhere (a
	 * checkpoint it ran first may have emptied the overlay)
	 */
	if (c->overlay.changes == changes) {
		assert_int_equal(c->overlay.nr_keys, keys);
		assert_int_equal(c->journal.seq, seq);
	}
	assert_int_equal(bch_inode_get(c, inum, &u, &err), -ENOENT);
	assert_true(bch_fs_rw(c));
	/* what frees space still commits */
	bch_fs_rw_use_reserve(c, true);
	bch_trans_init(&t, c);
	bch_trans_delete(&t, BTREE_ID_INODES, POS_H(5000, 0));
	assert_int_equal(bch_trans_commit(&t, &err), 0);
	bch_trans_exit(&t);
	bch_fs_rw_use_reserve(c, false);
	assert_int_equal(bch_inode_get(c, 5000, &u, &err), -ENOENT);
	/* and whatever was committed, its checkpoint fits */
	assert_int_equal(bch_fs_checkpoint(c, &err), 0);
	assert_int_equal(bch_inode_get(c, inum - 1, &u, &err), 0);
	printbuf_exit(&err);
	stop_close(c);

	/* the next start is writable at once */
	c = open_imgs(1, false);
	rw_start(c);
	assert_int_equal(bch_inode_get(c, inum - 1, &u, NULL), 0);
	assert_int_equal(bch_inode_get(c, inum, &u, NULL), -ENOENT);
	assert_int_equal(commit_inode(c, inum, 1), 0);
	stop_close(c);
}

/*
 * The bound of the next checkpoint (btree/reserve.c) counts the leaves
 * the committed keys landed in: keys spread over many leaves, one commit
 * each, and the checkpoint writes no more nodes than the bound said
 * (before, the set of leaves stayed empty: every commit compared the
 * overlay's change count before adding its own keys).
 */
static void test_ckpt_need_leaves(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_rw_stats s0, s1;
	struct btree_trans t;
	struct bch_fs *c;
	uint64_t need0, need;

	format(1, "");
	c = open_imgs(1, false);
	rw_start(c);
	bch_fs_rw_set_batch(c, true);
	bch_trans_init(&t, c);
	for (uint64_t inum = 5000; inum < 9000; inum++) {
		put_inode(&t, inum, 1);
		if (t.nr == 64 || inum == 8999)
			assert_int_equal(bch_trans_commit(&t, &err), 0);
	}
	bch_trans_exit(&t);
	assert_int_equal(bch_fs_checkpoint(c, &err), 0);
	need0 = bch_rw_ckpt_need(c, NULL);
	/* one key every 400 inodes: a different leaf each */
	for (uint64_t inum = 5000; inum < 9000; inum += 400)
		assert_int_equal(commit_inode(c, inum, 2), 0);
	need = bch_rw_ckpt_need(c, NULL);
	/* ten leaves, each into at most two nodes */
	assert_true(need >= need0 + 2 * 8);
	bch_fs_rw_stats(c, &s0);
	assert_int_equal(bch_fs_checkpoint(c, &err), 0);
	bch_fs_rw_stats(c, &s1);
	assert_true(s1.nodes_written - s0.nodes_written <= need);
	assert_true(s1.nodes_written - s0.nodes_written >= 10);
	printbuf_exit(&err);
	stop_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_refusals),
		cmocka_unit_test(test_on_demand_and_clean),
		cmocka_unit_test(test_batch_flush),
		cmocka_unit_test(test_allocator_hooks),
		cmocka_unit_test(test_full_reserve),
		cmocka_unit_test(test_ckpt_need_leaves),
		cmocka_unit_test(test_stop_checkpoints),
		cmocka_unit_test(test_force_rewrite),
		cmocka_unit_test(test_sb_write),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
