// SPDX-License-Identifier: GPL-2.0
/*
 * The one accounting of statfs and fs usage (alloc/space.c):
 * used + reserved + available = capacity on every device and in total;
 * the buckets of each data type add up to used; the btree reserve never
 * exceeds what is free; a member that takes no user data reserves all
 * its free space; reservations (a->reserved_sectors) come off available
 * and never below zero; the totals alone (statfs) agree with the full
 * read (fs usage).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/space.h"
#include "format/format.h"
#include "util/util.h"

/* A member of @nb buckets of @bs sectors, every bucket free. */
static struct bch_dev_alloc *dev_new(struct bch_allocator *a, unsigned idx, uint64_t nb,
				     unsigned bs, unsigned state, unsigned allowed)
{
	struct bch_dev_alloc *d = calloc(1, sizeof(*d));

	d->present	= true;
	d->idx		= idx;
	d->nbuckets	= nb;
	d->first_bucket	= 1;
	d->bucket_size	= bs;
	d->state	= state;
	d->durability	= 1;
	d->data_allowed	= allowed;
	d->nr_chunks	= (nb + BUCKET_CHUNK - 1) / BUCKET_CHUNK;
	d->chunk	= calloc(d->nr_chunks, sizeof(*d->chunk));
	d->nr_free	= nb - 1;
	a->devs[idx]	= d;
	return d;
}

/* Bucket @b holds @type (it was free). */
static void use(struct bch_dev_alloc *d, uint64_t b, unsigned type, unsigned sectors)
{
	struct bucket_h *g = bch_bucket_mut(d, b);

	g->data_type = (uint8_t)type;
	g->dirty_sectors = sectors;
	d->nr_free--;
}

static void free_all(struct bch_allocator *a)
{
	for (unsigned i = 0; i < BCH_ALLOC_MAX_DEVS; i++) {
		struct bch_dev_alloc *d = a->devs[i];

		if (!d)
			continue;
		for (uint64_t c = 0; c < d->nr_chunks; c++)
			free(d->chunk[c]);
		free(d->chunk);
		free(d);
	}
}

static void check_adds_up(const struct bch_space *s)
{
	uint64_t cap = 0, used = 0;

	assert_int_equal(s->used + s->reserved + s->available, s->capacity);
	assert_int_equal(s->reserved, s->reserve_btree + s->reserve_nodata + s->reserve_promised);
	for (unsigned i = 0; i < BCH_ALLOC_MAX_DEVS; i++) {
		const struct bch_dev_space *d = &s->dev[i];
		uint64_t inuse = 0;

		if (!d->present)
			continue;
		assert_int_equal(d->used + d->reserved + d->available, d->capacity);
		cap += d->capacity;
		used += d->used;
		for (unsigned t = 1; t < BCH_DATA_NR; t++)
			inuse += d->buckets[t];
		assert_int_equal(inuse * (d->capacity / (inuse + d->buckets[0])), d->used);
	}
	assert_int_equal(cap, s->capacity);
	assert_int_equal(used, s->used);
}

static void test_two_members(void **state)
{
	struct bch_allocator a = { 0 };
	struct bch_space *s = calloc(1, sizeof(*s)), *t = calloc(1, sizeof(*t));
	struct bch_dev_alloc *d0 = dev_new(&a, 0, 1025, 256, BCH_MEMBER_STATE_RW, ~0U);
	struct bch_dev_alloc *d1 = dev_new(&a, 1, 40001, 128, BCH_MEMBER_STATE_RW, ~0U);

	use(d0, 1, BCH_DATA_SB, 8);
	use(d0, 2, BCH_DATA_JOURNAL, 256);
	use(d0, 3, BCH_DATA_BTREE, 256);
	for (uint64_t b = 4; b < 20; b++)
		use(d0, b, BCH_DATA_USER, 100);
	/* a write point's bucket before its first key */
	bch_bucket_mut(d0, 20)->owned = true;
	d0->nr_free--;
	/* in a later chunk */
	use(d1, 30000, BCH_DATA_CACHED, 50);

	bch_space_read(&a, s);
	check_adds_up(s);
	assert_int_equal(s->capacity, 1024 * 256 + 40000 * 128);
	assert_int_equal(s->dev[0].buckets[BCH_DATA_USER], 17);
	assert_int_equal(s->dev[0].buckets[BCH_DATA_SB], 1);
	assert_int_equal(s->dev[1].buckets[BCH_DATA_CACHED], 1);
	assert_int_equal(s->dev[1].buckets[BCH_DATA_NONE], 39999);
	/* the btree reserve: 1/32 of each member, at least 8 buckets */
	assert_int_equal(s->reserve_btree, 32 * 256 + 1250 * 128);
	assert_int_equal(s->reserve_nodata, 0);

	bch_space_totals(&a, t);
	assert_int_equal(t->capacity, s->capacity);
	assert_int_equal(t->used, s->used);
	assert_int_equal(t->reserved, s->reserved);
	assert_int_equal(t->available, s->available);

	/* reservations come off available, never below zero */
	a.reserved_sectors = 1000;
	bch_space_read(&a, s);
	check_adds_up(s);
	assert_int_equal(s->reserve_promised, 1000);
	a.reserved_sectors = UINT64_MAX / 2;
	bch_space_read(&a, s);
	check_adds_up(s);
	assert_int_equal(s->available, 0);
	free_all(&a);
	free(s);
	free(t);
}

static void test_readonly_and_full(void **state)
{
	struct bch_allocator a = { 0 };
	struct bch_space *s = calloc(1, sizeof(*s));
	struct bch_dev_alloc *ro = dev_new(&a, 0, 2049, 64, BCH_MEMBER_STATE_RO, ~0U);
	struct bch_dev_alloc *meta = dev_new(&a, 1, 2049, 64, BCH_MEMBER_STATE_RW,
					     1U << BCH_DATA_BTREE | 1U << BCH_DATA_JOURNAL);
	struct bch_dev_alloc *full = dev_new(&a, 2, 1025, 64, BCH_MEMBER_STATE_RW, ~0U);

	use(ro, 5, BCH_DATA_USER, 64);
	for (uint64_t b = 1; b < 1020; b++)
		use(full, b, BCH_DATA_USER, 64);
	(void)meta;
	bch_space_read(&a, s);
	check_adds_up(s);
	/* members that take no user data: all their free space reserved */
	assert_int_equal(s->dev[0].available, 0);
	assert_int_equal(s->dev[1].available, 0);
	assert_int_equal(s->reserve_nodata, (2047 + 2048) * 64);
	/* 5 free buckets, 8 kept for btree nodes: nothing available, never negative */
	assert_int_equal(s->dev[2].reserved, 5 * 64);
	assert_int_equal(s->dev[2].available, 0);
	free_all(&a);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_members),
		cmocka_unit_test(test_readonly_and_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
