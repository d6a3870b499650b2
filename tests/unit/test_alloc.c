// SPDX-License-Identifier: GPL-2.0
/*
 * The allocator (alloc/alloc.h) on filesystems made by our format:
 *   - journal bucket count (doc/engine.md §13): the clamp and its bounds;
 *   - bucket state at init: superblock and journal buckets in use, the
 *     rest free; marking (two data types in a bucket refused, sectors
 *     capped, no such bucket);
 *   - bucket allocation: lowest free from the cursor, gen bumped and its
 *     alloc key dirty (doc/format.md §5.8 value), wrap-around, full device, refusals;
 *   - journal buckets for a device (ring order b1..b(n-1), b0);
 *   - btree nodes with two metadata replicas on two devices;
 *   - user data at run time: an emptied bucket comes back only once the
 *     journal entry that emptied it is durable (doc/engine.md §8.5), and one a write
 *     point holds only after it is closed;
 *   - the replicas table and its superblock field (doc/format.md §2.9: sorted,
 *     Eytzinger order, size) and superblock field replacement.
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
#include <unistd.h>

#include "alloc/alloc.h"
#include "dev/super.h"
#include "format/format.h"
#include "fs/fs.h"
#include "util/errcode.h"
#include "util/util.h"
#include "testutil.h"
#include "testfs.h"


/* 32 MiB, 32 KiB buckets: 1024 buckets; superblocks in 0-4, journal in 5-24 */
#define NBUCKETS	1024
#define BUCKET_SECTORS	64
#define SB_BUCKETS	5
#define JOURNAL_NR	20

static int setup(void **state)
{
	return testfs_setup("test_alloc");
}

static int teardown(void **state)
{
	return testfs_teardown();
}

static struct bch_fs *open_imgs(unsigned nr)
{
	struct bch_fs_opts o = { .read_only = true };

	return testfs_open(nr, &o);
}

static struct bch_fs *format_open(void)
{
	assert_int_equal(test_run("rm -f %s && truncate -s 32M %s && %s format -q --force "
				  "--bucket_size=32k --btree_node_size=16k %s",
				  img, img, test_bin(), img), 0);
	return open_imgs(1);
}

static void alloc_init(struct bch_allocator *a, struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_alloc_init(a, c, &err);

	if (ret)
		fprintf(stderr, "alloc_init: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	printbuf_exit(&err);
}

static void test_journal_buckets_wanted(void **state)
{
	/* nbuckets >> 8, at least 20 ... */
	assert_int_equal(bch_journal_buckets_wanted(0, 1024), BCH_JOURNAL_BUCKETS_MIN);
	assert_int_equal(bch_journal_buckets_wanted(1024, 64), 20);
	assert_int_equal(bch_journal_buckets_wanted(20 << 8, 64), 20);
	assert_int_equal(bch_journal_buckets_wanted((21 << 8) - 1, 64), 20);
	assert_int_equal(bch_journal_buckets_wanted(21 << 8, 64), 21);
	assert_int_equal(bch_journal_buckets_wanted(1000ULL << 8, 64), 1000);
	/* ... at most 1024 ... */
	assert_int_equal(bch_journal_buckets_wanted(1ULL << 40, 64), 1024);
	assert_int_equal(bch_journal_buckets_wanted(1ULL << 40, 1024), 1024);
	/* ... and at most 2^20 sectors of journal (512 MiB) */
	assert_int_equal(bch_journal_buckets_wanted(1ULL << 40, 2048), 512);
	assert_int_equal(bch_journal_buckets_wanted(1ULL << 40, 1U << 16), 16);
	/* the upper bound wins over the lower one */
	assert_int_equal(bch_journal_buckets_wanted(1024, 1U << 16), 16);
	assert_int_equal(bch_journal_buckets_wanted(1024, 1U << 21), 0);
	/* no bucket size: the 1024 bound only */
	assert_int_equal(bch_journal_buckets_wanted(1ULL << 40, 0), 1024);
}

static void test_init_and_mark(void **state)
{
	struct bch_fs *c = format_open();
	struct bch_allocator a;
	struct printbuf err = PRINTBUF;
	const struct bch_dev_alloc *d;

	alloc_init(&a, c);
	d = a.devs[0];
	assert_non_null(d);
	assert_null(a.devs[1]);
	assert_true(d->present);
	assert_int_equal(d->nbuckets, NBUCKETS);
	assert_int_equal(d->bucket_size, BUCKET_SECTORS);
	assert_int_equal(a.btree_node_size, 32);
	assert_int_equal(a.meta_replicas, 1);

	/* superblock area, then the journal in the order of the superblock */
	for (uint64_t b = 0; b < SB_BUCKETS; b++) {
		assert_int_equal(bch_bucket(d, b)->data_type, BCH_DATA_SB);
		assert_false(bch_alloc_bucket_free(&a, 0, b));
	}
	assert_int_equal(d->nr_journal, JOURNAL_NR);
	for (unsigned i = 0; i < d->nr_journal; i++) {
		assert_int_equal(d->journal[i], bch_sb_journal_bucket(c->devs[0]->sb, i));
		assert_int_equal(bch_bucket(d, d->journal[i])->data_type, BCH_DATA_JOURNAL);
		assert_int_equal(bch_bucket(d, d->journal[i])->dirty_sectors, BUCKET_SECTORS);
	}
	assert_int_equal(d->journal[JOURNAL_NR - 1], SB_BUCKETS);
	assert_true(bch_alloc_bucket_free(&a, 0, SB_BUCKETS + JOURNAL_NR));
	assert_true(bch_alloc_bucket_free(&a, 0, NBUCKETS - 1));
	assert_int_equal(bch_alloc_dev_free(&a, 0), NBUCKETS - SB_BUCKETS - JOURNAL_NR);
	/* no such bucket or device */
	assert_false(bch_alloc_bucket_free(&a, 0, NBUCKETS));
	assert_false(bch_alloc_bucket_free(&a, 1, 100));
	assert_false(bch_alloc_bucket_free(&a, 1000, 100));
	assert_int_equal(bch_alloc_dev_free(&a, 1), 0);

	/* the formatted filesystem's replicas entries were loaded */
	assert_true(bch_replicas_has(&a.replicas, BCH_DATA_BTREE, 1));
	assert_true(bch_replicas_has(&a.replicas, BCH_DATA_JOURNAL, 1));
	assert_false(bch_replicas_has(&a.replicas, BCH_DATA_USER, 1));
	assert_false(a.replicas.changed);

	/* marking: sectors add up to the bucket size, no more */
	assert_int_equal(bch_alloc_mark(&a, 0, 100, BCH_DATA_BTREE, 40, &err), 0);
	assert_false(bch_alloc_bucket_free(&a, 0, 100));
	assert_int_equal(bch_alloc_dev_free(&a, 0), NBUCKETS - SB_BUCKETS - JOURNAL_NR - 1);
	assert_int_equal(bch_alloc_mark(&a, 0, 100, BCH_DATA_BTREE, 40, &err), 0);
	assert_int_equal(bch_bucket(d, 100)->dirty_sectors, BUCKET_SECTORS);
	assert_int_equal(bch_alloc_dev_free(&a, 0), NBUCKETS - SB_BUCKETS - JOURNAL_NR - 1);
	/* nothing to mark: no change */
	assert_int_equal(bch_alloc_mark(&a, 0, 101, 0, 0, &err), 0);
	assert_true(bch_alloc_bucket_free(&a, 0, 101));
	/* another data type in the same bucket: refused, said why */
	assert_int_equal(bch_alloc_mark(&a, 0, 100, BCH_DATA_USER, 8, &err), -EINVAL);
	assert_non_null(strstr(printbuf_str(&err), "different types of data"));
	assert_int_equal(bch_bucket(d, 100)->data_type, BCH_DATA_BTREE);
	printbuf_reset(&err);
	assert_int_equal(bch_alloc_mark(&a, 0, NBUCKETS, BCH_DATA_USER, 8, &err), -EINVAL);
	assert_non_null(strstr(printbuf_str(&err), "no such bucket"));
	assert_int_equal(bch_alloc_mark(&a, 7, 0, BCH_DATA_USER, 8, &err), -EINVAL);

	/* release: free again, gen kept */
	bch_alloc_release(&a, 0, 100);
	assert_true(bch_alloc_bucket_free(&a, 0, 100));
	assert_int_equal(bch_alloc_dev_free(&a, 0), NBUCKETS - SB_BUCKETS - JOURNAL_NR);
	bch_alloc_release(&a, 0, NBUCKETS);		/* out of range: ignored */
	bch_alloc_release(&a, 9, 0);

	/* a device with a journal refuses another */
	printbuf_reset(&err);
	assert_int_equal(bch_alloc_journal_buckets(&a, 0, 4, &err), -EEXIST);
	assert_int_equal(bch_alloc_journal_buckets(&a, 3, 4, &err), -ENXIO);
	printbuf_exit(&err);
	bch_alloc_exit(&a);
	assert_null(a.devs[0]);
	bch_fs_close(c);
}

static void test_bucket_alloc(void **state)
{
	struct bch_fs *c = format_open();
	struct bch_allocator a;
	struct printbuf err = PRINTBUF;
	struct bkey_ref *keys;
	uint64_t *vals, b, first = SB_BUCKETS + JOURNAL_NR, nfree;
	size_t nr;
	uint8_t gen;

	alloc_init(&a, c);
	nfree = bch_alloc_dev_free(&a, 0);

	/* nothing dirty yet */
	assert_int_equal(bch_alloc_dirty_keys(&a, &keys, &vals, &nr), 0);
	assert_int_equal(nr, 0);
	free(keys);
	free(vals);

	assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_BTREE, 32, &b, &gen, &err), 0);
	assert_int_equal(b, first);
	assert_int_equal(gen, 1);
	assert_int_equal(bch_bucket(a.devs[0], b)->dirty_sectors, 32);
	assert_int_equal(bch_bucket(a.devs[0], b)->data_type, BCH_DATA_BTREE);
	assert_false(bch_alloc_bucket_free(&a, 0, b));
	assert_int_equal(bch_alloc_dev_free(&a, 0), nfree - 1);
	/* the next free one, never one in use (first + 1 marked behind its back) */
	assert_int_equal(bch_alloc_mark(&a, 0, first + 1, BCH_DATA_USER, 8, &err), 0);
	assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, 0, &b, &gen, &err), 0);
	assert_int_equal(b, first + 2);
	assert_int_equal(gen, 1);

	/* alloc keys of the two new gens, sorted, value 00 gen 00.. (doc/format.md §5.8) */
	assert_int_equal(bch_alloc_dirty_keys(&a, &keys, &vals, &nr), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(keys[0].k.p.inode, 0);
	assert_int_equal(keys[0].k.p.offset, first);
	assert_int_equal(keys[1].k.p.offset, first + 2);
	assert_int_equal(keys[0].k.type, 128);
	assert_int_equal(keys[0].k.u64s, 6);
	assert_int_equal(keys[0].v_bytes, 8);
	assert_int_equal(((const uint8_t *)keys[0].v)[0], 0);
	assert_int_equal(((const uint8_t *)keys[0].v)[1], 1);
	assert_int_equal(le64_to_cpu(*(const uint64_t *)keys[1].v), 0x100);
	free(keys);
	free(vals);

	/* every key: those two, and the btree/user bucket first + 1 (gen 0) */
	assert_int_equal(bch_alloc_all_keys(&a, &keys, &vals, &nr), 0);
	assert_int_equal(nr, 3);
	assert_int_equal(keys[1].k.p.offset, first + 1);
	assert_int_equal(le64_to_cpu(*(const uint64_t *)keys[1].v), 0);
	free(keys);
	free(vals);
	bch_alloc_clear_dirty(&a);
	assert_int_equal(bch_alloc_dirty_keys(&a, &keys, &vals, &nr), 0);
	assert_int_equal(nr, 0);
	free(keys);
	free(vals);

	/* refusals: too many sectors for a bucket, no such device */
	assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, BUCKET_SECTORS + 1, &b, &gen, &err),
			 -EINVAL);
	assert_int_equal(bch_alloc_bucket(&a, 1, BCH_DATA_USER, 8, &b, &gen, &err), -ENXIO);

	/* a released bucket behind the cursor is found after the wrap; its gen moves on */
	bch_alloc_release(&a, 0, first);
	for (uint64_t i = first + 3; i < NBUCKETS; i++) {
		assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, 8, &b, &gen, &err), 0);
		assert_int_equal(b, i);
	}
	assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, 8, &b, &gen, &err), 0);
	assert_int_equal(b, first);
	assert_int_equal(gen, 2);
	/* full */
	assert_int_equal(bch_alloc_dev_free(&a, 0), 0);
	printbuf_reset(&err);
	assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, 8, &b, &gen, &err),
			 -BCH_ERR_nospc);
	assert_non_null(strstr(printbuf_str(&err), "no free bucket"));
	{
		struct btree_ptr_h ptrs[4];
		unsigned n = 9;

		assert_int_equal(bch_alloc_btree_node(&a, ptrs, &n, &err), -BCH_ERR_nospc);
		assert_int_equal(n, 0);
	}

	/* set_gen: known and dirty; out of range refused */
	assert_true(bch_alloc_set_gen(&a, 0, 7, 200));
	assert_false(bch_alloc_set_gen(&a, 0, NBUCKETS, 1));
	assert_false(bch_alloc_set_gen(&a, 64, 0, 1));
	assert_int_equal(bch_alloc_dirty_keys(&a, &keys, &vals, &nr), 0);
	assert_true(nr > 0);
	assert_int_equal(keys[0].k.p.offset, 7);
	assert_int_equal(((const uint8_t *)keys[0].v)[1], 200);
	free(keys);
	free(vals);

	printbuf_exit(&err);
	bch_alloc_exit(&a);
	bch_fs_close(c);
}

static void test_user_data_durable(void **state)
{
	struct bch_fs *c = format_open();
	struct bch_allocator a;
	struct printbuf err = PRINTBUF;
	uint64_t nfree, b;
	uint8_t gen;
	const uint64_t x = 500;

	alloc_init(&a, c);
	nfree = bch_alloc_dev_free(&a, 0);

	/* data lands in a bucket nobody handed out (replay): in use */
	bch_alloc_user_add(&a, 0, x, 16, 3);
	assert_false(bch_alloc_bucket_free(&a, 0, x));
	assert_int_equal(bch_bucket(a.devs[0], x)->data_type, BCH_DATA_USER);
	assert_int_equal(bch_alloc_dev_free(&a, 0), nfree - 1);
	bch_alloc_user_add(&a, 0, x, -8, 4);
	assert_int_equal(bch_bucket(a.devs[0], x)->dirty_sectors, 8);
	/* emptied in entry 5: held until entry 5 is durable */
	bch_alloc_user_add(&a, 0, x, -100, 5);
	assert_int_equal(bch_bucket(a.devs[0], x)->dirty_sectors, 0);
	assert_false(bch_alloc_bucket_free(&a, 0, x));
	assert_int_equal(a.nr_pending, 1);
	bch_alloc_release_durable(&a, 4);
	assert_false(bch_alloc_bucket_free(&a, 0, x));
	bch_alloc_release_durable(&a, 5);
	assert_true(bch_alloc_bucket_free(&a, 0, x));
	assert_int_equal(a.nr_pending, 0);
	assert_int_equal(bch_alloc_dev_free(&a, 0), nfree);

	/* emptied in 6, refilled in 7, emptied again in 8: entry 6 does not free it */
	bch_alloc_user_add(&a, 0, x, 8, 6);
	bch_alloc_user_add(&a, 0, x, -8, 6);
	bch_alloc_user_add(&a, 0, x, 8, 7);
	bch_alloc_user_add(&a, 0, x, -8, 8);
	assert_int_equal(a.nr_pending, 2);
	bch_alloc_release_durable(&a, 6);
	assert_false(bch_alloc_bucket_free(&a, 0, x));
	assert_int_equal(a.nr_pending, 1);
	bch_alloc_release_durable(&a, 7);
	assert_false(bch_alloc_bucket_free(&a, 0, x));
	bch_alloc_release_durable(&a, 8);
	assert_true(bch_alloc_bucket_free(&a, 0, x));
	assert_int_equal(bch_alloc_dev_free(&a, 0), nfree);

	/* a bucket a write point holds: emptying does not free it, closing does (after its entry) */
	assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, 0, &b, &gen, &err), 0);
	bch_alloc_user_add(&a, 0, b, 8, 10);
	bch_alloc_user_add(&a, 0, b, -8, 11);
	assert_int_equal(a.nr_pending, 0);
	bch_alloc_release_durable(&a, 100);
	assert_false(bch_alloc_bucket_free(&a, 0, b));
	bch_alloc_wp_close(&a, 0, b, 12);
	assert_false(bch_alloc_bucket_free(&a, 0, b));
	bch_alloc_release_durable(&a, 11);
	assert_false(bch_alloc_bucket_free(&a, 0, b));
	bch_alloc_release_durable(&a, 12);
	assert_true(bch_alloc_bucket_free(&a, 0, b));
	assert_int_equal(bch_alloc_dev_free(&a, 0), nfree);

	/* closed with data in it: simply in use */
	assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, 0, &b, &gen, &err), 0);
	bch_alloc_user_add(&a, 0, b, 8, 13);
	bch_alloc_wp_close(&a, 0, b, 13);
	bch_alloc_release_durable(&a, 13);
	assert_false(bch_alloc_bucket_free(&a, 0, b));
	assert_int_equal(bch_alloc_dev_free(&a, 0), nfree - 1);

	/* other data types are not touched by user accounting; bad args ignored */
	bch_alloc_user_add(&a, 0, 0, -64, 14);
	assert_int_equal(bch_bucket(a.devs[0], 0)->data_type, BCH_DATA_SB);
	bch_alloc_user_add(&a, 0, NBUCKETS, 8, 14);
	bch_alloc_user_add(&a, 5, 1, 8, 14);
	bch_alloc_wp_close(&a, 0, NBUCKETS, 14);
	assert_int_equal(a.nr_pending, 0);
	printbuf_exit(&err);
	bch_alloc_exit(&a);
	bch_fs_close(c);
}

/*
 * Cached data pins nothing (doc/engine.md §8.5): a bucket with only cached
 * data is free, counted in nr_free_cached, taken after the clean free
 * buckets; taking it (or invalidating it in a batch) bumps its gen, in
 * the readers' gens too, and says so (took_cached).
 */
static void test_cached_buckets(void **state)
{
	struct bch_fs *c = format_open();
	struct bch_allocator a;
	struct printbuf err = PRINTBUF;
	uint64_t nfree, b, x, y, bk[4];
	uint8_t gen, g0, gens[4], rg[NBUCKETS] = { 0 };

	alloc_init(&a, c);
	a.devs[0]->read_gens = rg;
	a.devs[0]->nr_read_gens = NBUCKETS;
	nfree = bch_alloc_dev_free(&a, 0);

	/* x: written, emptied of its dirty data, cached copies left in it */
	assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, 0, &x, &gen, &err), 0);
	assert_false(a.took_cached);
	assert_int_equal(rg[x], gen);
	bch_alloc_mark_cached(&a, 0, x);
	assert_false(bch_alloc_bucket_free(&a, 0, x));
	assert_int_equal(bch_alloc_dev_free_cached(&a, 0), 0);
	bch_alloc_wp_close(&a, 0, x, 1);
	bch_alloc_release_durable(&a, 1);
	assert_true(bch_alloc_bucket_free(&a, 0, x));
	assert_int_equal(bch_alloc_dev_free(&a, 0), nfree);
	assert_int_equal(bch_alloc_dev_free_cached(&a, 0), 1);
	/* marked again (another cached pointer): counted once */
	bch_alloc_mark_cached(&a, 0, x);
	assert_int_equal(bch_alloc_dev_free_cached(&a, 0), 1);

	/* the cursor wraps to x, but clean buckets come first */
	a.devs[0]->next = x;
	assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, 0, &b, &gen, &err), 0);
	assert_int_not_equal(b, x);
	assert_false(a.took_cached);
	assert_int_equal(bch_alloc_dev_free_cached(&a, 0), 1);

	/* only cached buckets left free: x is taken, with a new gen everywhere */
	while (bch_alloc_dev_free(&a, 0) > bch_alloc_dev_free_cached(&a, 0))
		assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, 0, &b, &gen, &err), 0);
	g0 = bch_bucket(a.devs[0], x)->gen;
	assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, 0, &b, &gen, &err), 0);
	assert_int_equal(b, x);
	assert_true(a.took_cached);
	assert_int_equal(gen, (uint8_t)(g0 + 1));
	assert_int_equal(rg[x], gen);
	assert_false(bch_bucket(a.devs[0], x)->cached);
	assert_int_equal(bch_alloc_dev_free(&a, 0), 0);
	assert_int_equal(bch_alloc_dev_free_cached(&a, 0), 0);

	/* a batch: two free cached buckets (x and another) get new gens and stay free, clean */
	bch_alloc_mark_cached(&a, 0, x);
	bch_alloc_wp_close(&a, 0, x, 2);
	bch_alloc_release_durable(&a, 2);
	assert_int_equal(bch_alloc_dev_free_cached(&a, 0), 1);
	y = 0;
	for (b = 1; b < NBUCKETS && !y; b++)
		if (!bch_alloc_bucket_free(&a, 0, b) && bch_bucket(a.devs[0], b)->owned)
			y = b;
	assert_true(y != 0);
	bch_alloc_mark_cached(&a, 0, y);
	bch_alloc_wp_close(&a, 0, y, 3);
	bch_alloc_release_durable(&a, 3);
	assert_int_equal(bch_alloc_dev_free_cached(&a, 0), 2);
	g0 = bch_bucket(a.devs[0], y)->gen;
	assert_int_equal(bch_alloc_invalidate_cached(&a, 0, 4, bk, gens), 2);
	assert_int_equal(bch_alloc_dev_free_cached(&a, 0), 0);
	assert_int_equal(bch_alloc_dev_free(&a, 0), 2);
	assert_true(bch_alloc_bucket_free(&a, 0, y));
	assert_int_equal(bch_bucket(a.devs[0], y)->gen, (uint8_t)(g0 + 1));
	assert_int_equal(rg[y], (uint8_t)(g0 + 1));
	assert_true(bch_bucket(a.devs[0], y)->gen_dirty);
	assert_int_equal(bch_alloc_invalidate_cached(&a, 0, 4, bk, gens), 0);
	/* taken now: no flush needed */
	assert_int_equal(bch_alloc_bucket(&a, 0, BCH_DATA_USER, 0, &b, &gen, &err), 0);
	assert_false(a.took_cached);

	a.devs[0]->read_gens = NULL;
	a.devs[0]->nr_read_gens = 0;
	printbuf_exit(&err);
	bch_alloc_exit(&a);
	bch_fs_close(c);
}

static void test_two_devices(void **state)
{
	struct bch_allocator a;
	struct printbuf err = PRINTBUF;
	struct btree_ptr_h ptrs[4];
	struct bch_fs *c;
	unsigned nr;

	assert_int_equal(test_run("rm -f %s %s && truncate -s 32M %s && truncate -s 48M %s && "
				  "%s format -q --force --metadata_replicas=2 --bucket_size=32k "
				  "--btree_node_size=16k %s %s",
				  img, img2, img, img2, test_bin(), img, img2), 0);
	c = open_imgs(2);
	alloc_init(&a, c);
	assert_int_equal(a.meta_replicas, 2);
	assert_non_null(a.devs[1]);
	assert_int_equal(a.devs[1]->nbuckets, 1536);
	assert_int_equal(bch_journal_buckets_wanted(1536, 64), 20);

	/* two copies, one per device, sorted by device, at bucket starts */
	assert_int_equal(bch_alloc_btree_node(&a, ptrs, &nr, &err), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(ptrs[0].dev, 0);
	assert_int_equal(ptrs[1].dev, 1);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(ptrs[i].offset % BUCKET_SECTORS, 0);
		assert_int_equal(ptrs[i].gen, 1);
		assert_false(ptrs[i].cached);
		assert_int_equal(bch_bucket(a.devs[i], ptrs[i].offset / BUCKET_SECTORS)->data_type,
				 BCH_DATA_BTREE);
		assert_int_equal(bch_bucket(a.devs[i], ptrs[i].offset / BUCKET_SECTORS)->dirty_sectors,
				 32);
	}

	/* one device read-only: one copy, fewer than wanted but the 1 required */
	a.devs[1]->state = BCH_MEMBER_STATE_RO;
	assert_int_equal(bch_alloc_btree_node(&a, ptrs, &nr, &err), 0);
	assert_int_equal(nr, 1);
	assert_int_equal(ptrs[0].dev, 0);
	/* 2 required: refused as read-only */
	a.meta_replicas_req = 2;
	printbuf_reset(&err);
	assert_int_equal(bch_alloc_btree_node(&a, ptrs, &nr, &err), -EROFS);
	assert_non_null(strstr(printbuf_str(&err), "1 replicas possible, 2 required"));
	/* a device of durability 2 alone gives both */
	a.devs[0]->durability = 2;
	assert_int_equal(bch_alloc_btree_node(&a, ptrs, &nr, &err), 0);
	assert_int_equal(nr, 1);

	/* mark the btree pointer the allocator gave: its bucket gets a node's sectors more */
	{
		uint64_t v[2];
		struct bch_extent_ptr_unpacked p = { .offset = ptrs[0].offset, .dev = 0,
						     .gen = ptrs[0].gen };
		struct bch_extent_ptr e = bch_extent_ptr_pack(&p);
		struct bkey_ref k = { .k = { .type = BCH_EXTENT, .u64s = 6 }, .v = v, .v_bytes = 8 };
		uint64_t bk = ptrs[0].offset / BUCKET_SECTORS;

		memcpy(v, &e, 8);
		assert_int_equal(bch_alloc_mark_btree_ptr(&a, &k, &err), 0);
		assert_int_equal(bch_bucket(a.devs[0], bk)->dirty_sectors, 64);
		v[0] = 0;	/* no entry type bit: invalid */
		assert_int_equal(bch_alloc_mark_btree_ptr(&a, &k, &err), -EINVAL);
	}
	printbuf_exit(&err);
	bch_alloc_exit(&a);
	bch_fs_close(c);
}

/* A device with no journal gets the lowest free buckets, in ring order b1..b(n-1), b0. */
static void test_journal_alloc(void **state)
{
	struct bch_fs *c = format_open();
	struct bch_allocator a;
	struct printbuf err = PRINTBUF;
	struct bch_dev_alloc *d;

	alloc_init(&a, c);
	d = a.devs[0];
	/* forget the journal: give its buckets back */
	for (unsigned i = 0; i < d->nr_journal; i++)
		bch_alloc_release(&a, 0, d->journal[i]);
	free(d->journal);
	d->journal = NULL;
	d->nr_journal = 0;
	assert_int_equal(bch_alloc_mark(&a, 0, SB_BUCKETS + 1, BCH_DATA_BTREE, 8, &err), 0);

	assert_int_equal(bch_alloc_journal_buckets(&a, 0, 0, &err), 0);
	assert_int_equal(d->nr_journal, 0);
	assert_int_equal(bch_alloc_journal_buckets(&a, 0, 4, &err), 0);
	assert_int_equal(d->nr_journal, 4);
	assert_int_equal(d->journal[0], SB_BUCKETS + 2);
	assert_int_equal(d->journal[1], SB_BUCKETS + 3);
	assert_int_equal(d->journal[2], SB_BUCKETS + 4);
	assert_int_equal(d->journal[3], SB_BUCKETS);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(bch_bucket(d, d->journal[i])->data_type, BCH_DATA_JOURNAL);

	/* not enough free buckets */
	free(d->journal);
	d->journal = NULL;
	d->nr_journal = 0;
	printbuf_reset(&err);
	assert_int_equal(bch_alloc_journal_buckets(&a, 0, NBUCKETS, &err), -ENOSPC);
	assert_non_null(strstr(printbuf_str(&err), "free buckets"));
	assert_int_equal(d->nr_journal, 0);
	printbuf_exit(&err);
	bch_alloc_exit(&a);
	bch_fs_close(c);
}

static void test_replicas(void **state)
{
	struct bch_replicas_table r = { 0 };
	uint8_t *f;
	size_t bytes;

	assert_false(bch_replicas_add(&r, BCH_DATA_USER, 0));	/* no device */
	assert_true(bch_replicas_add(&r, BCH_DATA_USER, 0x3));
	assert_false(bch_replicas_add(&r, BCH_DATA_USER, 0x3));
	assert_true(r.changed);
	assert_true(bch_replicas_add(&r, BCH_DATA_USER, 0x1));
	assert_true(bch_replicas_add(&r, BCH_DATA_BTREE, 0x1));
	assert_true(bch_replicas_add(&r, BCH_DATA_JOURNAL, 0x102));
	assert_int_equal(r.nr, 4);
	assert_true(bch_replicas_has(&r, BCH_DATA_USER, 0x3));
	assert_false(bch_replicas_has(&r, BCH_DATA_USER, 0x2));
	assert_false(bch_replicas_has(&r, BCH_DATA_CACHED, 0x3));

	/*
	 * sorted (journal {1,8}) (btree {0}) (user {0}) (user {0,1}): the
	 * bitmaps compare byte by byte from device 0 (2 bytes for device 8);
	 * Eytzinger order of 4: slots 0..3 = sorted[2], [1], [3], [0].
	 * Size: 16 + (2+2) + (2+1) + (2+1) + (2+2) = 30 -> 32.
	 */
	bytes = bch_replicas_field_build(&r, &f);
	assert_int_equal(bytes, 32);
	{
		static const uint8_t want[32] = {
			4, 0, 0, 0, BCH_SB_FIELD_replicas, 0, 0, 0,
			BCH_DATA_USER, 1, 0,
			BCH_DATA_BTREE, 1, 0,
			BCH_DATA_USER, 2, 0, 1,
			BCH_DATA_JOURNAL, 2, 1, 8,
		};

		assert_memory_equal(f, want, 32);
	}
	free(f);

	/*
	 * bitmaps equal in their first byte: the second decides, {0,8}
	 * before {0,9} whatever the order they were added in; Eytzinger
	 * order of 2: sorted[1], sorted[0]
	 */
	{
		struct bch_replicas_table r2 = { 0 };
		static const uint8_t want2[24] = {
			3, 0, 0, 0, BCH_SB_FIELD_replicas, 0, 0, 0,
			BCH_DATA_USER, 2, 0, 9,
			BCH_DATA_USER, 2, 0, 8,
		};

		bch_replicas_add(&r2, BCH_DATA_USER, 0x201);
		bch_replicas_add(&r2, BCH_DATA_USER, 0x101);
		assert_int_equal(bch_replicas_field_build(&r2, &f), 24);
		assert_memory_equal(f, want2, 24);
		free(f);
		bch_replicas_exit(&r2);
	}

	/* more than 3 devices: no field */
	assert_true(bch_replicas_add(&r, BCH_DATA_USER, 0xf));
	assert_int_equal(bch_replicas_field_build(&r, &f), 0);
	assert_null(f);
	bch_replicas_exit(&r);
	assert_int_equal(r.nr, 0);

	/* empty table: the header only */
	assert_int_equal(bch_replicas_field_build(&r, &f), 16);
	assert_int_equal(f[0], 2);
	free(f);
}

static void test_sb_field_replace(void **state)
{
	struct bch_fs *c = format_open();
	struct bch_replicas_table r = { 0 };
	struct bch_replicas_iter it;
	const struct bch_replicas_entry *e;
	const struct bch_sb_field *jf, *rf;
	size_t bytes0 = bch_sb_bytes(c->sb), jbytes, roff;
	struct bch_sb *sb = xmalloc(bytes0);
	uint8_t *f, junk[24] = { 3, 0, 0, 0, 0x55, 0, 0, 0, 1, 2, 3 };
	size_t fbytes;
	unsigned n;

	memcpy(sb, c->sb, bytes0);
	jf = bch_sb_field_find(sb, BCH_SB_FIELD_journal);
	rf = bch_sb_field_find(sb, BCH_SB_FIELD_replicas);
	assert_non_null(jf);
	assert_non_null(rf);
	jbytes = bch_sb_field_bytes(jf);
	roff = (size_t)((const uint8_t *)rf - (const uint8_t *)sb);

	/* the replicas field of the superblock, one entry more: same place, longer */
	bch_replicas_load(&r, sb);
	assert_int_equal(r.nr, 2);
	assert_false(r.changed);
	bch_replicas_add(&r, BCH_DATA_USER, 1);
	fbytes = bch_replicas_field_build(&r, &f);
	assert_true(fbytes > bch_sb_field_bytes(rf));
	bch_sb_field_replace(&sb, BCH_SB_FIELD_replicas, f, fbytes);
	free(f);
	rf = bch_sb_field_find(sb, BCH_SB_FIELD_replicas);
	assert_int_equal((size_t)((const uint8_t *)rf - (const uint8_t *)sb), roff);
	assert_int_equal(bch_sb_bytes(sb), bytes0 - 24 + fbytes);
	assert_int_equal(bch_sb_field_bytes(bch_sb_field_find(sb, BCH_SB_FIELD_journal)), jbytes);
	n = 0;
	bch_sb_replicas_iter_init(&it, sb);
	while ((e = bch_sb_replicas_next(&it)))
		n++;
	assert_int_equal(n, 3);
	bch_replicas_exit(&r);
	bch_replicas_load(&r, sb);
	assert_true(bch_replicas_has(&r, BCH_DATA_USER, 1));
	bch_replicas_exit(&r);

	/* a new field type: appended at the end */
	bch_sb_field_replace(&sb, 0x55, junk, sizeof(junk));
	assert_int_equal(bch_sb_bytes(sb), bytes0 - 24 + fbytes + 24);
	assert_memory_equal((uint8_t *)sb + bch_sb_bytes(sb) - 24, junk, 24);
	/* removed again (NULL, 0): the others unchanged */
	bch_sb_field_replace(&sb, 0x55, NULL, 0);
	assert_null(bch_sb_field_find(sb, 0x55));
	assert_int_equal(bch_sb_bytes(sb), bytes0 - 24 + fbytes);
	bch_sb_field_replace(&sb, BCH_SB_FIELD_replicas, NULL, 0);
	assert_null(bch_sb_field_find(sb, BCH_SB_FIELD_replicas));
	assert_int_equal(bch_sb_field_bytes(bch_sb_field_find(sb, BCH_SB_FIELD_journal)), jbytes);
	assert_int_equal(bch_sb_bytes(sb), bytes0 - 24);
	free(sb);
	bch_fs_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal_buckets_wanted),
		cmocka_unit_test(test_init_and_mark),
		cmocka_unit_test(test_bucket_alloc),
		cmocka_unit_test(test_user_data_durable),
		cmocka_unit_test(test_cached_buckets),
		cmocka_unit_test(test_two_devices),
		cmocka_unit_test(test_journal_alloc),
		cmocka_unit_test(test_replicas),
		cmocka_unit_test(test_sb_field_replace),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
