// SPDX-License-Identifier: GPL-2.0
/*
 * The space of a filesystem from its bucket state (see space.h). Bucket
 * granularity on purpose: a bucket holding one live sector is not free
 * (doc/engine.md §8.5), so what df calls used is what cannot be allocated.
 */
#include <string.h>

#include "alloc/space.h"

/* Does @d take user data now (read-write, user data allowed)? */
static bool takes_data(const struct bch_dev_alloc *d)
{
	return d->state == BCH_MEMBER_STATE_RW && (d->data_allowed & (1U << BCH_DATA_USER));
}

static void dev_totals(const struct bch_allocator *a, const struct bch_dev_alloc *d,
		       struct bch_space *s, struct bch_dev_space *ds)
{
	uint64_t nb = d->nbuckets > d->first_bucket ? d->nbuckets - d->first_bucket : 0;
	uint64_t nfree = d->nr_free < nb ? d->nr_free : nb;
	uint64_t btree = 0, nodata = 0;

	ds->present	= true;
	ds->capacity	= nb * d->bucket_size;
	ds->free	= nfree * d->bucket_size;
	ds->used	= ds->capacity - ds->free;
	if (takes_data(d)) {
		uint64_t r = bch_alloc_dev_reserve(a, d->idx);

		btree = (r < nfree ? r : nfree) * d->bucket_size;
	} else {
		nodata = ds->free;
	}
	ds->reserved	= btree + nodata;
	ds->available	= ds->free - ds->reserved;

	s->capacity	  += ds->capacity;
	s->used		  += ds->used;
	s->free		  += ds->free;
	s->reserve_btree  += btree;
	s->reserve_nodata += nodata;
}

static void finish(const struct bch_allocator *a, struct bch_space *s)
{
	uint64_t avail = s->free - s->reserve_btree - s->reserve_nodata;

	/* reservations are fs-wide: they come off what is left, never below 0 */
	s->reserve_promised = a->reserved_sectors < avail ? a->reserved_sectors : avail;
	s->reserved	= s->reserve_btree + s->reserve_nodata + s->reserve_promised;
	s->available	= s->free - s->reserved;
}

void bch_space_totals(const struct bch_allocator *a, struct bch_space *s)
{
	struct bch_dev_space ds;

	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < BCH_ALLOC_MAX_DEVS; i++)
		if (a->devs[i] && a->devs[i]->present) {
			memset(&ds, 0, sizeof(ds));
			dev_totals(a, a->devs[i], s, &ds);
		}
	finish(a, s);
}

static void dev_buckets(const struct bch_dev_alloc *d, struct bch_dev_space *ds)
{
	uint64_t b;

	for (b = d->first_bucket; b < d->nbuckets; b++) {
		const struct bucket_h *g;

		if (!d->chunk[b >> BUCKET_CHUNK_SHIFT]) {
			/* an untouched chunk is all free */
			uint64_t end = ((b >> BUCKET_CHUNK_SHIFT) + 1) << BUCKET_CHUNK_SHIFT;

			end = end < d->nbuckets ? end : d->nbuckets;
			ds->buckets[BCH_DATA_NONE] += end - b;
			b = end - 1;
			continue;
		}
		g = bch_bucket(d, b);
		if (g->data_type && g->data_type < BCH_DATA_NR)
			ds->buckets[g->data_type]++;
		else if (g->owned || g->pending || g->dirty_sectors)
			/* a write point's bucket before its first key, or emptied
			 * user data waiting for its journal entry */
			ds->buckets[BCH_DATA_USER]++;
		else
			ds->buckets[BCH_DATA_NONE]++;
	}
	/* the superblock area before first_bucket is not part of capacity */
}

void bch_space_read(const struct bch_allocator *a, struct bch_space *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < BCH_ALLOC_MAX_DEVS; i++) {
		const struct bch_dev_alloc *d = a->devs[i];

		if (!d || !d->present)
			continue;
		dev_totals(a, d, s, &s->dev[i]);
		dev_buckets(d, &s->dev[i]);
	}
	finish(a, s);
}
