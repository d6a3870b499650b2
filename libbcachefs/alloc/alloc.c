// SPDX-License-Identifier: GPL-2.0
/*
 * The simple allocator: bucket marking (doc/engine.md §8.2), journal bucket choice
 * (doc/engine.md §13), metadata buckets with replicas (doc/format.md §6.8, doc/engine.md §8.5), alloc keys
 * (doc/format.md §5.8) and the superblock replicas table (doc/format.md §2.9).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "dev/super.h"
#include "util/util.h"

/* ---- marking ------------------------------------------------------------ */

static struct bch_dev_alloc *dev_get(const struct bch_allocator *a, unsigned dev)
{
	return dev < BCH_ALLOC_MAX_DEVS ? a->devs[dev] : NULL;
}

struct bucket_h *bch_bucket_mut(struct bch_dev_alloc *d, uint64_t b)
{
	struct bucket_h **c = &d->chunk[b >> BUCKET_CHUNK_SHIFT];

	if (!*c)
		*c = xcalloc(BUCKET_CHUNK, sizeof(**c));
	return &(*c)[b & (BUCKET_CHUNK - 1)];
}

static bool bucket_is_free(const struct bch_dev_alloc *d, uint64_t b)
{
	const struct bucket_h *g = bch_bucket(d, b);

	return b >= d->first_bucket && !g->owned && !g->pending && !g->data_type &&
		!g->dirty_sectors;
}

/*
 * After bucket @b changed: it was free before (@was_free); keep nr_free
 * right, and nr_free_cached (a free bucket's cached flag only changes
 * when it is taken or marked: bch_alloc_bucket(), bch_alloc_mark_cached()).
 */
static void free_account(struct bch_dev_alloc *d, uint64_t b, bool was_free)
{
	bool now = bucket_is_free(d, b), cached = bch_bucket(d, b)->cached;

	if (was_free && !now) {
		d->nr_free--;
		if (cached)
			d->nr_free_cached--;
	} else if (!was_free && now) {
		d->nr_free++;
		if (cached)
			d->nr_free_cached++;
	}
}

/* Each bucket of @d that was ever changed: @fn(bucket, state). */
#define for_each_touched_bucket(_d, _b, _g)					\
	for (uint64_t _c = 0; _c < (_d)->nr_chunks; _c++)			\
		if ((_d)->chunk[_c])						\
			for (uint64_t _i = 0; _i < BUCKET_CHUNK &&		\
			     (_b = _c * BUCKET_CHUNK + _i) < (_d)->nbuckets; _i++)	\
				if ((_g = &(_d)->chunk[_c][_i]), true)

int bch_alloc_mark(struct bch_allocator *a, unsigned dev, uint64_t bucket,
		   unsigned data_type, unsigned sectors, struct printbuf *err)
{
	struct bch_dev_alloc *d = dev_get(a, dev);
	struct bucket_h *g;
	bool was_free;

	if (!d || bucket >= d->nbuckets) {
		pr_buf(err, "cannot mark bucket %" PRIu64 " of device %u: no such bucket\n",
		       bucket, dev);
		return -EINVAL;
	}
	if (bch_bucket(d, bucket)->data_type && data_type &&
	    bch_bucket(d, bucket)->data_type != data_type) {
		pr_buf(err, "device %u bucket %" PRIu64 ": different types of data in same bucket: %u, %u\n",
		       dev, bucket, bch_bucket(d, bucket)->data_type, data_type);
		return -EINVAL;
	}
	if (!data_type && !sectors)
		return 0;
	was_free = bucket_is_free(d, bucket);
	g = bch_bucket_mut(d, bucket);
	if (data_type)
		g->data_type = (uint8_t)data_type;
	g->dirty_sectors = g->dirty_sectors + sectors > d->bucket_size
		? d->bucket_size : g->dirty_sectors + sectors;
	free_account(d, bucket, was_free);
	return 0;
}

/* Mark sectors [start, end) of device @d as superblock. */
static int mark_sb_range(struct bch_allocator *a, struct bch_dev_alloc *d,
			 uint64_t start, uint64_t end, struct printbuf *err)
{
	while (start < end) {
		uint64_t b = start / d->bucket_size;
		uint64_t bend = (b + 1) * d->bucket_size;
		uint64_t n = (end < bend ? end : bend) - start;
		int ret;

		if (b >= d->nbuckets)
			break;
		ret = bch_alloc_mark(a, d->idx, b, BCH_DATA_SB, (unsigned)n, err);
		if (ret)
			return ret;
		start += n;
	}
	return 0;
}

static int mark_sb(struct bch_allocator *a, struct bch_dev_alloc *d, const struct bch_sb *sb,
		   struct printbuf *err)
{
	const struct bch_sb_layout *l = &sb->layout;
	uint64_t size = 1ULL << (l->sb_max_size_bits < 32 ? l->sb_max_size_bits : 31);
	unsigned i;
	int ret;

	for (i = 0; i < l->nr_superblocks && i < BCH_SB_LAYOUT_MAX_SB; i++) {
		uint64_t o = le64_to_cpu(l->sb_offset[i]);

		if (o == BCH_SB_SECTOR) {
			ret = mark_sb_range(a, d, 0, BCH_SB_SECTOR, err);
			if (ret)
				return ret;
		}
		ret = mark_sb_range(a, d, o, o + size, err);
		if (ret)
			return ret;
	}
	return 0;
}

int bch_alloc_mark_btree_ptr(struct bch_allocator *a, const struct bkey_ref *k,
			     struct printbuf *err)
{
	struct btree_ptr_h p[BCH_REPLICAS_MAX];
	int nr = btree_ptr_decode(k, p, BCH_REPLICAS_MAX), i, ret;

	if (nr < 0) {
		pr_str(err, "cannot mark an invalid btree pointer\n");
		return -EINVAL;
	}
	for (i = 0; i < nr; i++) {
		struct bch_dev_alloc *d = dev_get(a, p[i].dev);

		if (!d || !d->bucket_size)
			continue;
		ret = bch_alloc_mark(a, p[i].dev, p[i].offset / d->bucket_size,
				     BCH_DATA_BTREE, a->btree_node_size, err);
		if (ret)
			return ret;
	}
	return 0;
}

void bch_alloc_mark_cached(struct bch_allocator *a, unsigned dev, uint64_t bucket)
{
	struct bch_dev_alloc *d = dev_get(a, dev);
	struct bucket_h *g;

	if (!d || bucket >= d->nbuckets || bch_bucket(d, bucket)->cached)
		return;
	g = bch_bucket_mut(d, bucket);
	g->cached = true;
	if (bucket_is_free(d, bucket))
		d->nr_free_cached++;
}

uint64_t bch_alloc_dev_free_cached(const struct bch_allocator *a, unsigned dev)
{
	const struct bch_dev_alloc *d = dev_get(a, dev);

	return d ? d->nr_free_cached : 0;
}

bool bch_alloc_bucket_free(const struct bch_allocator *a, unsigned dev, uint64_t bucket)
{
	const struct bch_dev_alloc *d = dev_get(a, dev);

	return d && bucket < d->nbuckets && bucket_is_free(d, bucket);
}

/* ---- init / exit -------------------------------------------------------- */

void bch_alloc_exit(struct bch_allocator *a)
{
	unsigned i;

	for (i = 0; i < BCH_ALLOC_MAX_DEVS; i++) {
		if (!a->devs[i])
			continue;
		for (uint64_t c = 0; c < a->devs[i]->nr_chunks; c++)
			free(a->devs[i]->chunk[c]);
		free(a->devs[i]->chunk);
		free(a->devs[i]->journal);
		free(a->devs[i]);
	}
	free(a->pending);
	bch_replicas_exit(&a->replicas);
	memset(a, 0, sizeof(*a));
}

int bch_alloc_init(struct bch_allocator *a, struct bch_fs *c, struct printbuf *err)
{
	unsigned i;
	int ret = 0;

	memset(a, 0, sizeof(*a));
	a->nr_devices		= c->nr_devices;
	a->block_size		= c->block_size;
	a->btree_node_size	= c->btree_node_size;
	a->meta_replicas	= (unsigned)BCH_SB_META_REPLICAS_WANT(c->sb) ?: 1;
	a->meta_replicas_req	= (unsigned)BCH_SB_META_REPLICAS_REQ(c->sb) ?: 1;

	for (i = 0; i < c->nr_devices && i < BCH_ALLOC_MAX_DEVS && !ret; i++) {
		struct bch_member_dev *ca = c->devs[i];
		const struct bch_member *m = bch_sb_member(c->sb, i);
		struct bch_dev_alloc *d;
		size_t j, nr;

		if (!ca || !m || !bch_member_exists(m))
			continue;
		/* a missing member (degraded): its gens and alloc keys are kept */
		if (!ca->io || !ca->sb) {
			ret = bch_alloc_dev_sync(a, c, i, err);
			continue;
		}
		if (!ca->nbuckets || !ca->bucket_size || ca->nbuckets > (1ULL << 40)) {
			pr_buf(err, "device %u: bad geometry (%" PRIu64 " buckets of %u sectors)\n",
			       i, ca->nbuckets, ca->bucket_size);
			ret = -EINVAL;
			break;
		}
		d = xcalloc(1, sizeof(*d));
		a->devs[i]	= d;
		d->present	= true;
		d->idx		= i;
		d->nbuckets	= ca->nbuckets;
		d->first_bucket	= ca->first_bucket;
		d->bucket_size	= ca->bucket_size;
		d->state	= (unsigned)BCH_MEMBER_STATE(m);
		d->durability	= bch_member_durability(m);
		d->data_allowed	= (unsigned)BCH_MEMBER_DATA_ALLOWED(m);
		d->next		= d->first_bucket;
		d->nr_chunks	= (d->nbuckets + BUCKET_CHUNK - 1) >> BUCKET_CHUNK_SHIFT;
		d->chunk	= xcalloc(d->nr_chunks, sizeof(*d->chunk));
		d->nr_free	= d->nbuckets > d->first_bucket ? d->nbuckets - d->first_bucket : 0;
		d->read_gens	= ca->bucket_gens;
		d->nr_read_gens	= ca->bucket_gens ? ca->nbuckets : 0;
		if (ca->bucket_gens)
			for (j = 0; j < d->nbuckets; j++)
				if (ca->bucket_gens[j]) {
					bch_bucket_mut(d, j)->gen = ca->bucket_gens[j];
					bch_bucket_mut(d, j)->gen_valid = true;
				}

		ret = mark_sb(a, d, ca->sb, err);
		nr = bch_sb_journal_nr_buckets(ca->sb);
		if (!ret && nr) {
			d->journal = xcalloc(nr, sizeof(uint64_t));
			d->nr_journal = (unsigned)nr;
			for (j = 0; j < nr && !ret; j++) {
				d->journal[j] = bch_sb_journal_bucket(ca->sb, j);
				ret = bch_alloc_mark(a, i, d->journal[j], BCH_DATA_JOURNAL,
						     d->bucket_size, err);
			}
		}
	}
	if (!ret)
		bch_replicas_load(&a->replicas, c->sb);
	if (ret)
		bch_alloc_exit(a);
	return ret;
}

/* ---- journal buckets ---------------------------------------------------- */

unsigned bch_journal_buckets_wanted(uint64_t nbuckets, unsigned bucket_size)
{
	uint64_t nr = nbuckets >> 8, hi;

	hi = bucket_size ? (1ULL << 20) / bucket_size : 1024;
	if (hi > 1024)
		hi = 1024;
	if (nr < BCH_JOURNAL_BUCKETS_MIN)
		nr = BCH_JOURNAL_BUCKETS_MIN;
	if (nr > hi)
		nr = hi;
	return (unsigned)nr;
}

int bch_alloc_journal_buckets(struct bch_allocator *a, unsigned dev, unsigned nr,
			      struct printbuf *err)
{
	struct bch_dev_alloc *d = dev_get(a, dev);
	uint64_t *got, b;
	unsigned n = 0, i;
	int ret;

	if (!d) {
		pr_buf(err, "device %u is not present\n", dev);
		return -ENXIO;
	}
	if (d->nr_journal) {
		pr_buf(err, "device %u already has %u journal buckets\n", dev, d->nr_journal);
		return -EEXIST;
	}
	if (!nr)
		return 0;
	got = xcalloc(nr, sizeof(*got));
	for (b = d->first_bucket; b < d->nbuckets && n < nr; b++)
		if (bch_alloc_bucket_free(a, dev, b))
			got[n++] = b;
	if (n < nr) {
		pr_buf(err, "device %u: only %u free buckets for %u journal buckets\n", dev, n, nr);
		free(got);
		return -ENOSPC;
	}
	/* ring order b1 .. b(nr-1), b0 */
	d->journal = xcalloc(nr, sizeof(uint64_t));
	for (i = 1; i < nr; i++)
		d->journal[i - 1] = got[i];
	d->journal[nr - 1] = got[0];
	d->nr_journal = nr;
	free(got);
	for (i = 0; i < nr; i++) {
		ret = bch_alloc_mark(a, dev, d->journal[i], BCH_DATA_JOURNAL, d->bucket_size, err);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- buckets for metadata ----------------------------------------------- */

static uint64_t dev_nr_free(const struct bch_allocator *a, const struct bch_dev_alloc *d)
{
	return d->nr_free;
}

/*
 * The lowest free bucket in [from, to) of @d, or @to; with @clean one
 * without cached data. Untouched chunks are free and clean.
 */
static uint64_t find_free(const struct bch_dev_alloc *d, uint64_t from, uint64_t to, bool clean)
{
	uint64_t b = from > d->first_bucket ? from : d->first_bucket;

	for (; b < to; b++)
		if (!d->chunk[b >> BUCKET_CHUNK_SHIFT] ||
		    (bucket_is_free(d, b) && !(clean && bch_bucket(d, b)->cached)))
			return b;
	return to;
}

int bch_alloc_bucket(struct bch_allocator *a, unsigned dev, unsigned data_type,
		     unsigned sectors, uint64_t *bucket, uint8_t *gen,
		     struct printbuf *err)
{
	struct bch_dev_alloc *d = dev_get(a, dev);
	struct bucket_h *g;
	uint64_t b;
	bool clean;

	if (!d) {
		pr_buf(err, "device %u is not present\n", dev);
		return -ENXIO;
	}
	if (sectors > d->bucket_size) {
		pr_buf(err, "device %u: %u sectors do not fit a bucket of %u\n", dev, sectors,
		       d->bucket_size);
		return -EINVAL;
	}
	if (d->next < d->first_bucket)
		d->next = d->first_bucket;
	/* buckets without cached data first: cached data lives while there are some */
	clean = d->nr_free > d->nr_free_cached;
	b = d->nr_free ? find_free(d, d->next, d->nbuckets, clean) : d->nbuckets;
	if (b >= d->nbuckets && d->nr_free)
		b = find_free(d, d->first_bucket, d->next < d->nbuckets ? d->next : d->nbuckets,
			      clean);
	if (b >= d->nbuckets || !bucket_is_free(d, b)) {
		pr_buf(err, "device %u: no free bucket\n", dev);
		return -BCH_ERR_nospc;
	}
	/* invalidate: a new gen, so no old pointer can see the new data */
	g = bch_bucket_mut(d, b);
	a->took_cached = g->cached;
	if (g->cached) {
		d->nr_free_cached--;
		a->cached_invalidated++;
	}
	g->cached = false;
	g->gen++;
	g->gen_valid = true;
	g->gen_dirty = true;
	g->owned = true;
	d->nr_free--;
	d->next = b + 1;
	if (b < d->nr_read_gens)
		d->read_gens[b] = g->gen;
	*bucket = b;
	*gen = g->gen;
	return bch_alloc_mark(a, dev, b, data_type, sectors, err);
}

unsigned bch_alloc_invalidate_cached(struct bch_allocator *a, unsigned dev, unsigned max,
				     uint64_t *buckets, uint8_t *gens)
{
	struct bch_dev_alloc *d = dev_get(a, dev);
	unsigned n = 0;

	if (!d)
		return 0;
	for (uint64_t i = 0; i < d->nbuckets && n < max && d->nr_free_cached; i++) {
		uint64_t b = d->next + i < d->nbuckets ? d->next + i : d->next + i - d->nbuckets;
		struct bucket_h *g;

		if (b < d->first_bucket || !d->chunk[b >> BUCKET_CHUNK_SHIFT] ||
		    !bucket_is_free(d, b) || !bch_bucket(d, b)->cached)
			continue;
		g = bch_bucket_mut(d, b);
		g->cached = false;
		d->nr_free_cached--;
		a->cached_invalidated++;
		g->gen++;
		g->gen_valid = true;
		g->gen_dirty = true;
		if (b < d->nr_read_gens)
			d->read_gens[b] = g->gen;
		buckets[n] = b;
		gens[n] = g->gen;
		n++;
	}
	return n;
}

int bch_alloc_btree_node(struct bch_allocator *a, struct btree_ptr_h *ptrs, unsigned *nr,
			 struct printbuf *err)
{
	struct { unsigned dev; uint64_t nclean, nfree; } cand[BCH_ALLOC_MAX_DEVS];
	unsigned nr_cand = 0, i, j, durability = 0, have = 0;
	int ret;

	*nr = 0;
	for (i = 0; i < BCH_ALLOC_MAX_DEVS; i++) {
		unsigned dev = (a->rr + i) % BCH_ALLOC_MAX_DEVS;
		struct bch_dev_alloc *d = a->devs[dev];

		if (!d || !d->present || d->state != BCH_MEMBER_STATE_RW || !d->durability ||
		    !(d->data_allowed & (1U << BCH_DATA_BTREE)) ||
		    d->bucket_size < a->btree_node_size)
			continue;
		cand[nr_cand].dev = dev;
		cand[nr_cand].nfree = dev_nr_free(a, d);
		cand[nr_cand].nclean = cand[nr_cand].nfree - d->nr_free_cached;
		if (cand[nr_cand].nfree)
			nr_cand++;
	}
	/*
	 * Most free buckets without cached data first (then most free; equal
	 * devices in round-robin order, stable): a node's bucket gets its new
	 * gen only with the checkpoint that makes the node reachable, and
	 * until then cached pointers into a reused bucket would look current
	 * (doc/engine.md §8.5); bch_alloc_bucket() takes a clean one when the
	 * device has one.
	 */
	for (i = 1; i < nr_cand; i++)
		for (j = i; j && (cand[j].nclean > cand[j - 1].nclean ||
				  (cand[j].nclean == cand[j - 1].nclean &&
				   cand[j].nfree > cand[j - 1].nfree)); j--) {
			typeof(cand[0]) t = cand[j];

			cand[j] = cand[j - 1];
			cand[j - 1] = t;
		}
	for (i = 0; i < nr_cand && durability < a->meta_replicas &&
	     have < BCH_REPLICAS_MAX; i++) {
		uint64_t bucket;
		uint8_t gen;

		ret = bch_alloc_bucket(a, cand[i].dev, BCH_DATA_BTREE, a->btree_node_size,
				       &bucket, &gen, err);
		if (ret)
			return ret;
		ptrs[have].dev = cand[i].dev;
		ptrs[have].offset = bucket * a->devs[cand[i].dev]->bucket_size;
		ptrs[have].gen = gen;
		ptrs[have].cached = false;
		have++;
		durability += a->devs[cand[i].dev]->durability;
	}
	if (!have || durability < a->meta_replicas_req) {
		pr_buf(err, "cannot allocate a btree node: %u replicas possible, %u required\n",
		       durability, a->meta_replicas_req);
		return have ? -EROFS : -BCH_ERR_nospc;
	}
	/* sort the pointers by device, like a replicas entry */
	for (i = 1; i < have; i++)
		for (j = i; j && ptrs[j].dev < ptrs[j - 1].dev; j--) {
			struct btree_ptr_h t = ptrs[j];

			ptrs[j] = ptrs[j - 1];
			ptrs[j - 1] = t;
		}
	a->rr = (cand[0].dev + 1) % BCH_ALLOC_MAX_DEVS;
	*nr = have;
	return 0;
}

/* Alloc keys (fields 0: value `00 gen 00..`, doc/format.md §5.8) of the buckets @want selects. */
static void alloc_keys(struct bch_allocator *a, bool (*want)(struct bucket_h *),
		       struct bkey_ref **keys, uint64_t **vals, size_t *nr)
{
	size_t n = 0, i = 0;
	unsigned dev;
	uint64_t b;

	struct bucket_h *g;

	for (dev = 0; dev < BCH_ALLOC_MAX_DEVS; dev++)
		if (a->devs[dev])
			for_each_touched_bucket(a->devs[dev], b, g)
				n += want(g);
	*keys = xcalloc(n ?: 1, sizeof(**keys));
	*vals = xcalloc(n ?: 1, sizeof(**vals));
	for (dev = 0; dev < BCH_ALLOC_MAX_DEVS; dev++) {
		struct bch_dev_alloc *d = a->devs[dev];

		if (!d)
			continue;
		for_each_touched_bucket(d, b, g) {
			struct bkey_ref *k;

			if (!want(g))
				continue;
			k = &(*keys)[i];
			(*vals)[i] = cpu_to_le64((uint64_t)g->gen << 8);
			k->k.u64s = BKEY_U64S_UNPACKED + 1;
			k->k.type = 128;
			k->k.p = POS_H(dev, b);
			k->v = &(*vals)[i];
			k->v_bytes = 8;
			i++;
		}
	}
	*nr = n;
}

static bool bucket_gen_dirty(struct bucket_h *g)
{
	return g->gen_dirty;
}

int bch_alloc_dirty_keys(const struct bch_allocator *a, struct bkey_ref **keys,
			 uint64_t **vals, size_t *nr)
{
	alloc_keys((struct bch_allocator *)a, bucket_gen_dirty, keys, vals, nr);
	return 0;
}

/* Had a key, has a gen, or holds btree, user or cached data: it keeps a key. */
static bool bucket_needs_key(struct bucket_h *g)
{
	if (g->has_key || g->gen || g->data_type == BCH_DATA_BTREE ||
	    g->data_type == BCH_DATA_USER || g->data_type == BCH_DATA_CACHED || g->cached)
		return g->has_key = true;
	return false;
}

int bch_alloc_all_keys(struct bch_allocator *a, struct bkey_ref **keys,
		       uint64_t **vals, size_t *nr)
{
	alloc_keys(a, bucket_needs_key, keys, vals, nr);
	return 0;
}

void bch_alloc_release(struct bch_allocator *a, unsigned dev, uint64_t bucket)
{
	struct bch_dev_alloc *d = dev_get(a, dev);

	struct bucket_h *g;
	bool was_free;

	if (!d || bucket >= d->nbuckets)
		return;
	was_free = bucket_is_free(d, bucket);
	g = bch_bucket_mut(d, bucket);
	g->data_type = 0;
	g->dirty_sectors = 0;
	g->owned = false;
	free_account(d, bucket, was_free);
}

/* ---- user data at run time ---------------------------------------------- */

static void pending_add(struct bch_allocator *a, unsigned dev, uint64_t bucket, uint64_t seq)
{
	if (a->nr_pending == a->size_pending) {
		a->size_pending = a->size_pending ? 2 * a->size_pending : 64;
		a->pending = xrealloc(a->pending, a->size_pending * sizeof(*a->pending));
	}
	a->pending[a->nr_pending++] = (struct bch_pending_free) {
		.dev = dev, .bucket = bucket, .seq = seq,
	};
}

/* @g (of @d, bucket @b) holds nothing now: it waits for entry @seq. */
static void user_bucket_empty(struct bch_allocator *a, struct bch_dev_alloc *d, uint64_t b,
			      struct bucket_h *g, uint64_t seq)
{
	g->data_type = 0;
	g->pending = true;
	g->pending_seq = (uint32_t)seq;
	pending_add(a, d->idx, b, seq);
}

void bch_alloc_user_add(struct bch_allocator *a, unsigned dev, uint64_t bucket,
			int64_t delta, uint64_t seq)
{
	struct bch_dev_alloc *d = dev_get(a, dev);
	struct bucket_h *g;
	bool was_free;

	if (!d || bucket >= d->nbuckets || !delta)
		return;
	g = bch_bucket_mut(d, bucket);
	/* another kind of data here is fsck's business: left alone */
	if (g->data_type && g->data_type != BCH_DATA_USER)
		return;
	was_free = bucket_is_free(d, bucket);
	if (delta > 0) {
		g->data_type = BCH_DATA_USER;
		g->dirty_sectors = (uint64_t)g->dirty_sectors + (uint64_t)delta > UINT32_MAX
			? UINT32_MAX : g->dirty_sectors + (uint32_t)delta;
	} else {
		g->dirty_sectors = (uint64_t)-delta >= g->dirty_sectors
			? 0 : g->dirty_sectors - (uint32_t)-delta;
		if (!g->dirty_sectors && g->data_type == BCH_DATA_USER && !g->owned)
			user_bucket_empty(a, d, bucket, g, seq);
	}
	free_account(d, bucket, was_free);
}

void bch_alloc_wp_close(struct bch_allocator *a, unsigned dev, uint64_t bucket, uint64_t seq)
{
	struct bch_dev_alloc *d = dev_get(a, dev);
	struct bucket_h *g;
	bool was_free;

	if (!d || bucket >= d->nbuckets)
		return;
	was_free = bucket_is_free(d, bucket);
	g = bch_bucket_mut(d, bucket);
	g->owned = false;
	if (!g->dirty_sectors && (!g->data_type || g->data_type == BCH_DATA_USER))
		user_bucket_empty(a, d, bucket, g, seq);
	free_account(d, bucket, was_free);
}

void bch_alloc_release_durable(struct bch_allocator *a, uint64_t durable_seq)
{
	size_t i, o = 0;

	for (i = 0; i < a->nr_pending; i++) {
		struct bch_pending_free *p = &a->pending[i];
		struct bch_dev_alloc *d = dev_get(a, p->dev);
		struct bucket_h *g;
		bool was_free;

		if (p->seq > durable_seq) {
			a->pending[o++] = *p;
			continue;
		}
		if (!d)
			continue;
		was_free = bucket_is_free(d, p->bucket);
		g = bch_bucket_mut(d, p->bucket);
		/* a later emptying waits for its own entry */
		if (g->pending && g->pending_seq == (uint32_t)p->seq) {
			/*
			 * free now, or in use: a write point closes a bucket
			 * before the keys of its data are committed (they go in
			 * the same entry)
			 */
			g->pending = false;
			if (!g->dirty_sectors && g->data_type == BCH_DATA_USER)
				g->data_type = 0;
		}
		free_account(d, p->bucket, was_free);
	}
	a->nr_pending = o;
}

uint64_t bch_alloc_dev_free(const struct bch_allocator *a, unsigned dev)
{
	const struct bch_dev_alloc *d = dev_get(a, dev);

	return d ? d->nr_free : 0;
}

uint64_t bch_alloc_dev_reserve(const struct bch_allocator *a, unsigned dev)
{
	const struct bch_dev_alloc *d = dev_get(a, dev);
	uint64_t n;

	if (!d || d->nbuckets <= d->first_bucket)
		return 0;
	n = (d->nbuckets - d->first_bucket) >> 5;
	n = n > a->reserve_min ? n : a->reserve_min;
	return n < 8 ? 8 : n;
}

void bch_alloc_clear_dirty(struct bch_allocator *a)
{
	struct bucket_h *g;
	uint64_t b;

	for (unsigned dev = 0; dev < BCH_ALLOC_MAX_DEVS; dev++)
		if (a->devs[dev])
			for_each_touched_bucket(a->devs[dev], b, g)
				g->gen_dirty = false;
}

/* ---- replicas ----------------------------------------------------------- */

void bch_replicas_exit(struct bch_replicas_table *r)
{
	free(r->e);
	memset(r, 0, sizeof(*r));
}

bool bch_replicas_has(const struct bch_replicas_table *r, unsigned data_type, uint64_t devs)
{
	size_t i;

	for (i = 0; i < r->nr; i++)
		if (r->e[i].data_type == data_type && r->e[i].devs == devs)
			return true;
	return false;
}

bool bch_replicas_add(struct bch_replicas_table *r, unsigned data_type, uint64_t devs)
{
	if (!devs || bch_replicas_has(r, data_type, devs))
		return false;
	r->e = xrealloc(r->e, (r->nr + 1) * sizeof(*r->e));
	r->e[r->nr].data_type = (uint8_t)data_type;
	r->e[r->nr].devs = devs;
	r->nr++;
	r->changed = true;
	return true;
}

void bch_replicas_load(struct bch_replicas_table *r, const struct bch_sb *sb)
{
	struct bch_replicas_iter it;
	const struct bch_replicas_entry *e;

	memset(r, 0, sizeof(*r));
	bch_sb_replicas_iter_init(&it, sb);
	while ((e = bch_sb_replicas_next(&it))) {
		uint64_t devs = 0;
		unsigned i;

		for (i = 0; i < e->nr; i++)
			if (e->devs[i] < 64)
				devs |= 1ULL << e->devs[i];
		bch_replicas_add(r, e->data_type, devs);
	}
	r->changed = false;
}

static unsigned bitmap_bytes;	/* of the table being sorted */

static int replicas_cmp(const void *pa, const void *pb)
{
	const struct bch_replicas_h *a = pa, *b = pb;
	unsigned i;

	if (a->data_type != b->data_type)
		return a->data_type < b->data_type ? -1 : 1;
	for (i = 0; i < bitmap_bytes; i++) {
		unsigned x = (a->devs >> (8 * i)) & 0xff, y = (b->devs >> (8 * i)) & 0xff;

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* In-order walk of the implicit tree: slot i gets the next sorted element. */
static void eytzinger_fill(const struct bch_replicas_h *sorted, size_t *next,
			   struct bch_replicas_h *out, size_t slot, size_t n)
{
	if (slot >= n)
		return;
	eytzinger_fill(sorted, next, out, 2 * slot + 1, n);
	out[slot] = sorted[(*next)++];
	eytzinger_fill(sorted, next, out, 2 * slot + 2, n);
}

size_t bch_replicas_field_build(const struct bch_replicas_table *r, uint8_t **out)
{
	struct bch_replicas_h *sorted, *slots;
	unsigned max_dev = 0, i;
	size_t next = 0, body = 0, bytes, pos = 8;
	uint8_t *f;

	*out = NULL;
	for (i = 0; i < r->nr; i++) {
		unsigned n = (unsigned)__builtin_popcountll(r->e[i].devs);

		if (!n || n > BCH_REPLICAS_ENTRY_DEVS_MAX)
			return 0;
		max_dev = max_t(unsigned, max_dev, 63 - (unsigned)__builtin_clzll(r->e[i].devs));
		body += 2 + n;
	}
	bytes = round_up(16 + body, 8);
	f = xcalloc(1, bytes);
	put_le64_unaligned(f, 0);
	f[0] = (uint8_t)(bytes / 8);
	f[4] = BCH_SB_FIELD_replicas;

	sorted = xcalloc(r->nr ?: 1, sizeof(*sorted));
	slots = xcalloc(r->nr ?: 1, sizeof(*slots));
	if (r->nr)	/* an empty table has no array (memcpy from NULL is undefined) */
		memcpy(sorted, r->e, r->nr * sizeof(*sorted));
	bitmap_bytes = (max_dev + 8) / 8;
	qsort(sorted, r->nr, sizeof(*sorted), replicas_cmp);
	eytzinger_fill(sorted, &next, slots, 0, r->nr);

	for (i = 0; i < r->nr; i++) {
		unsigned d;

		f[pos++] = slots[i].data_type;
		f[pos++] = (uint8_t)__builtin_popcountll(slots[i].devs);
		for (d = 0; d < 64; d++)
			if (slots[i].devs & (1ULL << d))
				f[pos++] = (uint8_t)d;
	}
	free(sorted);
	free(slots);
	*out = f;
	return bytes;
}

void bch_sb_field_replace(struct bch_sb **sbp, unsigned type, const void *field, size_t bytes)
{
	struct bch_sb *sb = *sbp;
	size_t total = bch_sb_bytes(sb), off, old = 0;
	struct bch_sb_field *f = (struct bch_sb_field *)bch_sb_field_find(sb, type);
	uint8_t *base;

	if (f) {
		off = (size_t)((uint8_t *)f - (uint8_t *)sb);
		old = bch_sb_field_bytes(f);
	} else {
		off = total;
	}
	if (bytes > old)
		sb = xrealloc(sb, total + bytes - old);
	base = (uint8_t *)sb;
	memmove(base + off + bytes, base + off + old, total - off - old);
	if (bytes)	/* @field may be NULL: the field removed */
		memcpy(base + off, field, bytes);
	sb->u64s = cpu_to_le32((uint32_t)((total + bytes - old - sizeof(struct bch_sb)) / 8));
	*sbp = sb;
}

/* fsck repairs (doc/fsck.md) */
bool bch_alloc_set_gen(struct bch_allocator *a, unsigned dev, uint64_t bucket, uint8_t gen)
{
	struct bch_dev_alloc *d = dev < BCH_ALLOC_MAX_DEVS ? a->devs[dev] : NULL;

	struct bucket_h *g;

	if (!d || bucket >= d->nbuckets)
		return false;
	g = bch_bucket_mut(d, bucket);
	g->gen		= gen;
	g->gen_valid	= true;
	g->gen_dirty	= true;
	return true;
}

/* ---- members changing at run time (doc/engine.md §17) --------------------- */

static void dev_free(struct bch_allocator *a, unsigned dev)
{
	struct bch_dev_alloc *d = a->devs[dev];
	size_t i, o = 0;

	if (!d)
		return;
	for (uint64_t c = 0; c < d->nr_chunks; c++)
		free(d->chunk[c]);
	free(d->chunk);
	free(d->journal);
	free(d);
	a->devs[dev] = NULL;
	for (i = 0; i < a->nr_pending; i++)
		if (a->pending[i].dev != dev)
			a->pending[o++] = a->pending[i];
	a->nr_pending = o;
}

int bch_alloc_dev_sync(struct bch_allocator *a, struct bch_fs *c, unsigned dev,
		       struct printbuf *err)
{
	struct bch_member_dev *ca = dev < BCH_FS_MAX_DEVS ? c->devs[dev] : NULL;
	const struct bch_member *m = bch_sb_member(c->sb, dev);
	struct bch_dev_alloc *d;
	int ret = 0;

	if (dev >= BCH_ALLOC_MAX_DEVS)
		return -EINVAL;
	a->nr_devices = c->nr_devices;
	if (!ca || !m || !bch_member_exists(m)) {
		dev_free(a, dev);
		return 0;
	}
	if (!ca->nbuckets || !ca->bucket_size || ca->nbuckets > (1ULL << 40)) {
		pr_buf(err, "device %u: bad geometry (%" PRIu64 " buckets of %u sectors)\n",
		       dev, ca->nbuckets, ca->bucket_size);
		return -EINVAL;
	}
	d = a->devs[dev];
	if (!d) {
		d = xcalloc(1, sizeof(*d));
		a->devs[dev]	= d;
		d->idx		= dev;
		d->nbuckets	= ca->nbuckets;
		d->first_bucket	= ca->first_bucket;
		d->bucket_size	= ca->bucket_size;
		d->next		= d->first_bucket;
		d->nr_chunks	= (d->nbuckets + BUCKET_CHUNK - 1) >> BUCKET_CHUNK_SHIFT;
		d->chunk	= xcalloc(d->nr_chunks, sizeof(*d->chunk));
		d->nr_free	= d->nbuckets > d->first_bucket ? d->nbuckets - d->first_bucket : 0;
		if (ca->bucket_gens)
			for (uint64_t j = 0; j < d->nbuckets; j++)
				if (ca->bucket_gens[j]) {
					bch_bucket_mut(d, j)->gen = ca->bucket_gens[j];
					bch_bucket_mut(d, j)->gen_valid = true;
				}
	}
	if (ca->nbuckets > d->nbuckets) {
		uint64_t nr_chunks = (ca->nbuckets + BUCKET_CHUNK - 1) >> BUCKET_CHUNK_SHIFT;

		d->chunk = xrealloc(d->chunk, nr_chunks * sizeof(*d->chunk));
		memset(d->chunk + d->nr_chunks, 0, (nr_chunks - d->nr_chunks) * sizeof(*d->chunk));
		d->nr_chunks = nr_chunks;
		d->nr_free += ca->nbuckets - d->nbuckets;
		d->nbuckets = ca->nbuckets;
	}
	d->state	= (unsigned)BCH_MEMBER_STATE(m);
	d->durability	= bch_member_durability(m);
	d->data_allowed	= (unsigned)BCH_MEMBER_DATA_ALLOWED(m);
	d->read_gens	= ca->bucket_gens;
	d->nr_read_gens	= ca->bucket_gens ? ca->nbuckets : 0;
	if (ca->io && ca->sb && !d->present) {
		/* (back) online: its superblock and journal buckets are in use */
		size_t nr = bch_sb_journal_nr_buckets(ca->sb);

		ret = mark_sb(a, d, ca->sb, err);
		if (!ret && nr && !d->nr_journal) {
			d->journal = xcalloc(nr, sizeof(uint64_t));
			d->nr_journal = (unsigned)nr;
			for (size_t j = 0; j < nr && !ret; j++) {
				d->journal[j] = bch_sb_journal_bucket(ca->sb, j);
				ret = bch_alloc_mark(a, dev, d->journal[j], BCH_DATA_JOURNAL,
						     d->bucket_size, err);
			}
		}
	}
	d->present = ca->io != NULL;
	return ret;
}
