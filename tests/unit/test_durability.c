// SPDX-License-Identifier: GPL-2.0
/*
 * Durability (fs/durability.h) on a two-device filesystem made by our
 * format (device 1 with durability 2):
 *   - what a pointer to a member gives in each member state, for members
 *     that are missing and for indexes that are no member;
 *   - the data replicas an inode wants: its option (option + 1, 0 = the
 *     filesystem's, doc/format.md §5.5.2), the cache of the last answer;
 *   - replicas GC (doc/engine.md §16): after data moved off a device, the entries
 *     naming it go; those of live keys and the journal stay, in the
 *     superblocks on disk.
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
#include "bkey/extents.h"
#include "bkey/inode.h"
#include "btree/btree_update.h"
#include "btree/bulk.h"
#include "dev/super.h"
#include "format/format.h"
#include "fs/durability.h"
#include "fs/fs.h"
#include "fs/io_write.h"
#include "util/util.h"
#include "testutil.h"
#include "testfs.h"


static int setup(void **state)
{
	return testfs_setup("test_durability");
}

static int teardown(void **state)
{
	return testfs_teardown();
}

static struct bch_fs *open_imgs(unsigned nr, bool ro, bool degraded)
{
	struct bch_fs_opts o = { .read_only = ro, .degraded = degraded };

	return testfs_open(nr, &o);
}

/* Two devices, two data replicas; device 1 of durability @dur1. */
static void format2(unsigned dur1)
{
	assert_int_equal(test_run("rm -f %s %s && truncate -s 32M %s %s && %s format -q --force "
				  "--data_replicas=2 --bucket_size=32k --btree_node_size=16k "
				  "%s --durability=%u %s", img, img2, img, img2, test_bin(), img,
				  dur1, img2), 0);
}

static void set_state(struct bch_fs *c, unsigned dev, unsigned state)
{
	SET_BCH_MEMBER_STATE((struct bch_member *)bch_sb_member(c->sb, dev), state);
}

static void test_ptr_durability(void **state)
{
	struct bch_fs *c;

	format2(2);
	c = open_imgs(2, true, false);
	assert_int_equal(bch_dev_ptr_durability(c, 0), 1);
	assert_int_equal(bch_dev_ptr_durability(c, 1), 2);
	/* read-only members still hold their copies */
	set_state(c, 1, BCH_MEMBER_STATE_RO);
	assert_int_equal(bch_dev_ptr_durability(c, 1), 2);
	set_state(c, 1, BCH_MEMBER_STATE_FAILED);
	assert_int_equal(bch_dev_ptr_durability(c, 1), 0);
	set_state(c, 1, BCH_MEMBER_STATE_SPARE);
	assert_int_equal(bch_dev_ptr_durability(c, 1), 0);
	assert_int_equal(bch_dev_ptr_durability(c, 0), 1);
	/* no such member */
	assert_int_equal(bch_dev_ptr_durability(c, 2), 0);
	assert_int_equal(bch_dev_ptr_durability(c, 63), 0);
	assert_int_equal(bch_dev_ptr_durability(c, 255), 0);
	bch_fs_close(c);

	/* a missing member gives nothing (everything on both: readable without it) */
	assert_int_equal(test_run("rm -f %s %s && truncate -s 32M %s %s && %s format -q --force "
				  "--replicas=2 --bucket_size=32k --btree_node_size=16k %s %s",
				  img, img2, img, img2, test_bin(), img, img2), 0);
	c = open_imgs(1, true, true);
	assert_false(bch_dev_present(c, 1));
	assert_int_equal(bch_dev_ptr_durability(c, 0), 1);
	assert_int_equal(bch_dev_ptr_durability(c, 1), 0);
	bch_fs_close(c);
}

static void add_inode(struct btree_trans *t, uint64_t inum, unsigned replicas_opt)
{
	struct bch_inode_unpacked u = { 0 };
	uint8_t v[BCH_INODE_VAL_BYTES_MAX];
	struct bkey_h k = { .type = 128, .p = POS_H(inum, 0) };
	size_t bytes;

	u.bi_inum = inum;
	u.bi_mode = S_IFREG | 0644;
	u.bi_data_replicas = (uint8_t)replicas_opt;
	bytes = bch_inode_pack(&u, v);
	bch_trans_update(t, BTREE_ID_INODES, &k, v, (unsigned)bytes);
}

static void rw_start(struct bch_fs *c)
{
	testfs_rw_start(c);
}

static void test_inode_want(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_inode_want cache = { 0 };
	struct btree_trans t;
	struct bch_fs *c;

	format2(2);
	c = open_imgs(2, false, false);
	rw_start(c);
	bch_trans_init(&t, c);
	add_inode(&t, 5000, 0);		/* the filesystem's: 2 */
	add_inode(&t, 5001, 3 + 1);	/* 3 */
	add_inode(&t, 5002, 1 + 1);	/* 1 */
	add_inode(&t, 5003, 0 + 1);	/* 0 asked: at least 1 */
	assert_int_equal(bch_trans_commit(&t, &err), 0);
	bch_trans_exit(&t);

	assert_int_equal(bch_inode_replicas_want(c, 5000, &cache), 2);
	assert_true(cache.valid);
	assert_int_equal(cache.inum, 5000);
	assert_int_equal(bch_inode_replicas_want(c, 5001, &cache), 3);
	assert_int_equal(bch_inode_replicas_want(c, 5002, &cache), 1);
	assert_int_equal(bch_inode_replicas_want(c, 5003, &cache), 1);
	/* no such inode: the filesystem's */
	assert_int_equal(bch_inode_replicas_want(c, 9999, &cache), 2);
	/* the same inode again: the cached answer, not looked up */
	assert_int_equal(bch_inode_replicas_want(c, 5001, &cache), 3);
	cache.want = 7;
	assert_int_equal(bch_inode_replicas_want(c, 5001, &cache), 7);
	cache.valid = false;
	assert_int_equal(bch_inode_replicas_want(c, 5001, &cache), 3);
	assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	bch_fs_close(c);
	printbuf_exit(&err);
}

/* Write @sectors for @inum with @o, commit the keys; the devices of its first key. */
static uint64_t write_commit(struct bch_fs *c, const struct bch_io_opts *o, uint64_t inum,
			     uint64_t sectors)
{
	struct printbuf err = PRINTBUF;
	struct bulk_keys keys = { 0 };
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	struct btree_trans t;
	uint8_t *data = xcalloc(sectors, 512);
	uint64_t devs = 0;

	assert_int_equal(bch_write_extents(c, o, inum, 0, data, sectors, &keys, &err),
			 (int64_t)sectors);
	bch_trans_init(&t, c);
	for (size_t i = 0; i < keys.nr; i++)
		bch_trans_update(&t, BTREE_ID_EXTENTS, &keys.k[i].k, keys.k[i].v,
				 keys.k[i].v_bytes);
	assert_int_equal(bch_trans_commit(&t, &err), 0);
	bch_trans_exit(&t);
	extent_ptr_iter_init(&it, &keys.k[0]);
	while (extent_ptr_iter_next(&it, &p) > 0)
		devs |= 1ULL << p.ptr.dev;
	bulk_keys_exit(&keys);
	free(data);
	printbuf_exit(&err);
	return devs;
}

static void test_replicas_gc(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_replicas_table r;
	struct bch_io_opts o;
	struct btree_trans t;
	struct bch_fs *c;
	

	format2(1);
	c = open_imgs(2, false, false);
	rw_start(c);
	bch_io_opts_get(c, NULL, &o);
	/* one file on both devices */
	assert_int_equal(write_commit(c, &o, 5000, 16), 0x3);
	/*
	 * single copies: 5002 on device 0, 5003 on device 1 (the other one
	 * not writable for the write; the write point picks its devices again)
	 */
	o.nr_replicas = o.nr_replicas_req = 1;
	bch_fs_rw_alloc(c)->devs[1]->state = BCH_MEMBER_STATE_RO;
	c->member_changes++;
	assert_int_equal(write_commit(c, &o, 5002, 16), 0x1);
	bch_fs_rw_alloc(c)->devs[1]->state = BCH_MEMBER_STATE_RW;
	bch_fs_rw_alloc(c)->devs[0]->state = BCH_MEMBER_STATE_RO;
	c->member_changes++;
	assert_int_equal(write_commit(c, &o, 5003, 16), 0x2);
	bch_fs_rw_alloc(c)->devs[0]->state = BCH_MEMBER_STATE_RW;
	c->member_changes++;
	/* the entries are in the superblock before the keys that need them (doc/engine.md §16) */
	bch_replicas_load(&r, c->sb);
	assert_true(bch_replicas_has(&r, BCH_DATA_USER, 0x3));
	assert_true(bch_replicas_has(&r, BCH_DATA_USER, 0x1));
	assert_true(bch_replicas_has(&r, BCH_DATA_USER, 0x2));
	bch_replicas_exit(&r);
	/* entries nothing uses */
	assert_true(bch_fs_rw_replicas_add(c, BCH_DATA_CACHED, 2));
	assert_true(bch_fs_rw_replicas_add(c, BCH_DATA_CACHED, 1));

	/* file 5002 gone: its entry goes with GC; 5003's stays */
	bch_trans_init(&t, c);
	bch_trans_delete_extents(&t, 5002, 0, 16);
	assert_int_equal(bch_trans_commit(&t, &err), 0);
	bch_trans_exit(&t);

	assert_int_equal(bch_fs_replicas_gc(c, &err), 0);
	bch_replicas_load(&r, c->sb);
	assert_true(bch_replicas_has(&r, BCH_DATA_USER, 0x3));
	assert_true(bch_replicas_has(&r, BCH_DATA_USER, 0x2));
	assert_false(bch_replicas_has(&r, BCH_DATA_USER, 0x1));
	assert_false(bch_replicas_has(&r, BCH_DATA_CACHED, 0x2));
	assert_false(bch_replicas_has(&r, BCH_DATA_CACHED, 0x1));
	/* btree nodes and the journal, wherever they are */
	{
		bool btree = false, journal = false;

		for (size_t i = 0; i < r.nr; i++) {
			btree |= r.e[i].data_type == BCH_DATA_BTREE;
			journal |= r.e[i].data_type == BCH_DATA_JOURNAL;
		}
		assert_true(btree);
		assert_true(journal);
	}
	bch_replicas_exit(&r);
	assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	bch_fs_close(c);

	/* on disk too */
	c = open_imgs(2, true, false);
	bch_replicas_load(&r, c->sb);
	assert_false(bch_replicas_has(&r, BCH_DATA_USER, 0x1));
	assert_true(bch_replicas_has(&r, BCH_DATA_USER, 0x2));
	assert_true(bch_replicas_has(&r, BCH_DATA_USER, 0x3));
	bch_replicas_exit(&r);
	bch_fs_close(c);
	printbuf_exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ptr_durability),
		cmocka_unit_test(test_inode_want),
		cmocka_unit_test(test_replicas_gc),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
