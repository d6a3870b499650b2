// SPDX-License-Identifier: GPL-2.0
/*
 * The update engine's state (engine.h): start (a mark of everything in
 * use, the journal writer after the read), start on demand, free, what
 * fsck may change outside transactions, the allocator glue of the data
 * write path and members changing at run time. See btree_update.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "btree/btree.h"
#include "btree/engine.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "dev/super.h"

bool bch_fs_rw(struct bch_fs *c)
{
	struct bch_fs_rw *rw = bch_rw_get(c);

	return rw && !rw->failed;
}

void bch_fs_rw_stats(const struct bch_fs *c, struct bch_rw_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (c->rw)
		*s = c->rw->stats;
}

/* ---- fallocate's promises (btree/reserve.h) ---------------------------- */

uint64_t bch_rw_reservation_sectors(const struct bkey_ref *k, uint64_t sectors)
{
	struct bch_reservation r;

	if (k->k.type != BCH_RESERVATION || k->v_bytes < sizeof(r))
		return 0;
	memcpy(&r, k->v, sizeof(r));
	return sectors * (r.nr_replicas ? r.nr_replicas : 1);
}

/* ---- start: what is in use ---------------------------------------------- */

static void account_extent(struct bch_fs_rw *rw, const struct bkey_ref *k, uint64_t sectors,
			   int sign, uint64_t seq);

static int mark_node(void *arg, const struct btree_node_visit *v)
{
	struct bch_fs_rw *rw = arg;
	struct printbuf ignore = PRINTBUF;

	/* two kinds of data in a bucket is fsck's business: it stays in use */
	if (v->ptr)
		bch_alloc_mark_btree_ptr(&rw->a, v->ptr, &ignore);
	printbuf_exit(&ignore);
	/* a leaf that fails verification: what it may reference stays in use */
	if (v->salvaged && v->btree_id == BTREE_ID_EXTENTS && !v->level)
		for (size_t i = 0; i < v->salvaged->nr_keys; i++)
			account_extent(rw, &v->salvaged->keys[i], v->salvaged->keys[i].k.size, 1, 0);
	rw->nr_nodes++;
	return 0;
}

/*
 * @sectors of extent @k are live (@sign 1) or not any more (-1): the
 * buckets of its dirty, non-stale pointers count them (alloc.h: logical
 * sectors, linear, so an overwrite subtracts exactly what it covers).
 * Cached pointers only flag their buckets (bch_alloc_mark_cached()): a
 * bucket with no dirty data left is free, cached data or not (§8.5).
 */
static void account_extent(struct bch_fs_rw *rw, const struct bkey_ref *k, uint64_t sectors,
			   int sign, uint64_t seq)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;

	if (k->k.type == BCH_RESERVATION) {
		/* fallocate's promise: space no data holds yet (btree/reserve.h) */
		uint64_t r = bch_rw_reservation_sectors(k, sectors);

		if (sign > 0)
			rw->a.reserved_sectors += r;
		else
			rw->a.reserved_sectors -= min_t(uint64_t, r, rw->a.reserved_sectors);
		return;
	}
	if (k->k.type != BCH_EXTENT && k->k.type != BCH_EXTENT_CACHED)
		return;
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0) {
		struct bch_dev_alloc *d = p.ptr.dev < BCH_ALLOC_MAX_DEVS ? rw->a.devs[p.ptr.dev] : NULL;
		uint64_t b;

		if (!d || !d->bucket_size)
			continue;
		b = p.ptr.offset / d->bucket_size;
		if (b >= d->nbuckets || gen_after(bch_bucket(d, b)->gen, (uint8_t)p.ptr.gen))
			continue;	/* outside, or stale: the space is not in use */
		if (p.ptr.cached || k->k.type == BCH_EXTENT_CACHED) {
			/* pins nothing: the bucket's next use makes its gen durable first */
			if (sign > 0)
				bch_alloc_mark_cached(&rw->a, p.ptr.dev, b);
			continue;
		}
		bch_alloc_user_add(&rw->a, p.ptr.dev, b, sign * (int64_t)sectors, seq);
	}
}

static void mark_extent(struct bch_fs_rw *rw, const struct bkey_ref *k)
{
	if (k->k.version_lo > rw->key_version)
		rw->key_version = k->k.version_lo;
	account_extent(rw, k, k->k.size, 1, 0);
}

/*
 * Extent update @u replaces what was at its sectors: the buckets of the
 * keys it covers lose those sectors (their bucket empties with journal
 * entry @seq), its own gain them.
 */
void bch_rw_extent_trigger(struct bch_fs *c, const struct trans_update *u, uint64_t seq)
{
	struct bch_fs_rw *rw = c->rw;
	struct bpos_h s = bkey_start_pos(&u->k.k), e = u->k.k.p;
	struct printbuf ignore = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;

	if (!u->k.k.size)
		return;
	bch_btree_iter_init_range(&iter, c, BTREE_ID_EXTENTS, s, e, &ignore);
	while (!bch_btree_iter_peek(&iter, &k) && k) {
		uint64_t ks = bkey_start_pos(&k->k).offset, ke = k->k.p.offset;

		if (k->k.p.inode != s.inode || ks >= e.offset)
			break;
		if (ks < s.offset)
			ks = s.offset;
		if (ke > e.offset)
			ke = e.offset;
		if (ke > ks)
			account_extent(rw, k, ke - ks, -1, seq);
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&ignore);
	account_extent(rw, &u->k, u->k.k.size, 1, seq);
}

static int mark_in_use(struct bch_fs *c, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	struct printbuf scratch = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	unsigned id;
	int ret = 0;

	/* buckets that have an alloc key keep one */
	bch_btree_iter_init(&iter, c, BTREE_ID_ALLOC, POS_H_MIN, &scratch);
	iter.skip_bad = true;	/* (nodes with no good copy: core/integrity.h) */
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
		struct bch_dev_alloc *d = k->k.p.inode < BCH_ALLOC_MAX_DEVS
			? rw->a.devs[k->k.p.inode] : NULL;

		if (d && k->k.p.offset < d->nbuckets && k->k.type == 128)
			bch_bucket_mut(d, k->k.p.offset)->has_key = true;
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);

	for (id = 0; id < BCH_NR_BTREES && !ret; id++)
		ret = bch_btree_walk_nodes(c, id, mark_node, rw, &scratch);

	if (!ret) {
		bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, POS_H_MIN, &scratch);
		iter.skip_bad = true;
		while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
			if (k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED ||
			    k->k.type == BCH_RESERVATION)
				mark_extent(rw, k);
			bch_btree_iter_advance(&iter);
		}
		bch_btree_iter_exit(&iter);
	}
	if (ret)
		pr_buf(err, "cannot mark the buckets in use: %s", printbuf_str(&scratch));
	printbuf_exit(&scratch);
	return ret;
}

void bch_rw_free(struct bch_fs *c)
{
	struct bch_fs_rw *rw = c->rw;

	if (!rw)
		return;
	if (rw->open_live)
		jset_builder_exit(&rw->open);
	free(rw->freed);
	free(rw->forced);
	free(rw->ck_new);
	free(rw->touched);
	free(rw->wp_closing);
	bch_journal_writer_exit(&rw->jw);
	bch_alloc_exit(&rw->a);
	free(rw);
	c->rw = NULL;
}

void bch_btree_rw_free(struct bch_fs *c)
{
	bch_rw_free(c);
}

/*
 * May member @i be missing from a writable filesystem? When
 * opened degraded (the open checked that every replicas entry keeps a
 * copy, doc/engine.md §2.2), or when it holds nothing to write to (failed, spare).
 * Its bucket gens and alloc keys are kept (bch_alloc_dev_sync()).
 */
static bool member_may_be_missing(struct bch_fs *c, unsigned i)
{
	const struct bch_member *m = bch_sb_member(c->sb, i);
	unsigned state = m ? (unsigned)BCH_MEMBER_STATE(m) : 0;

	return c->opts.degraded || state == BCH_MEMBER_STATE_FAILED ||
	       state == BCH_MEMBER_STATE_SPARE;
}

/* What writing needs, cheap to check: the open mode, initialised, every member. */
static int rw_can_start(struct bch_fs *c, struct printbuf *err)
{
	if (c->opts.read_only) {
		pr_str(err, "filesystem opened read-only: cannot write\n");
		return -EROFS;
	}
	if (!BCH_SB_INITIALIZED(c->sb) || !c->journal.read_done || !c->journal.nr_entries) {
		pr_str(err, "filesystem not initialized (or its journal not read): cannot write\n");
		return -EINVAL;
	}
	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
		if (bch_sb_member_exists(c->sb, i) && (!c->devs[i] || !c->devs[i]->io) &&
		    !member_may_be_missing(c, i)) {
			pr_buf(err, "member %u is missing: cannot write a degraded filesystem "
			       "(mount -o degraded)\n", i);
			return -EROFS;
		}
	if (c->encrypted && !c->have_key) {
		pr_str(err, "the filesystem is encrypted and its key is not loaded: cannot write\n");
		return -BCH_ERR_no_key;
	}
	return 0;
}

int bch_fs_rw_on_demand(struct bch_fs *c, struct printbuf *err)
{
	int ret = c->rw ? 0 : rw_can_start(c, err);

	if (!ret)
		c->rw_on_demand = true;
	return ret;
}

/*
 * The engine, started now if it may be started on demand and was not yet
 * (what failed is kept in c->rw_start_err); NULL when there is none.
 */
struct bch_fs_rw *bch_rw_get(struct bch_fs *c)
{
	if (!c->rw && c->rw_on_demand) {
		c->rw_on_demand = false;
		printbuf_reset(&c->rw_start_err);
		bch_fs_rw_start(c, &c->rw_start_err);
	}
	return c->rw;
}

int bch_fs_rw_start(struct bch_fs *c, struct printbuf *err)
{
	struct bch_fs_rw *rw;
	unsigned i, min_bucket = UINT32_MAX;
	int ret;

	if (c->rw)
		return 0;
	ret = rw_can_start(c, err);
	if (ret)
		return ret;

	ret = bch_btree_read_bucket_gens(c, err);
	if (ret)
		return ret;

	rw = c->rw = xcalloc(1, sizeof(*rw));
	ret = btree_write_ctx_init(&rw->wctx, c, err);
	if (!ret)
		ret = bch_alloc_init(&rw->a, c, err);
	if (!ret)
		ret = mark_in_use(c, err);
	/* versions that writes lost in a crash may have used are skipped */
	if (c->encrypted)
		rw->key_version += 65536;
	if (!ret)
		ret = bch_journal_writer_init(&rw->jw, c, err);
	if (ret) {
		bch_rw_free(c);
		return ret;
	}
	bch_fs_key_ctx(c, &rw->kctx);
	rw->unclean = !BCH_SB_CLEAN(c->sb);
	rw->last_seq = c->journal.last_seq;
	rw->durable_seq = rw->jw.seq;

	for (i = 0; i < BCH_FS_MAX_DEVS; i++)
		if (rw->jw.devs[i].active && rw->jw.devs[i].nr &&
		    rw->jw.devs[i].bucket_size < min_bucket)
			min_bucket = rw->jw.devs[i].bucket_size;
	if (min_bucket == UINT32_MAX) {
		pr_str(err, "no device can take journal writes\n");
		bch_rw_free(c);
		return -EROFS;
	}
	/* a quarter of a bucket, less the roots and blacklists (doc/engine.md §4.3) */
	rw->entry_u64s = (size_t)min_bucket * 64 / 4;
	rw->entry_u64s = rw->entry_u64s > 1024 ? rw->entry_u64s - 512 : rw->entry_u64s / 2;
	return 0;
}

/* ---- forced rewrites (fsck, doc/engine.md §6.6) ------------------------- */

void bch_fs_rw_force_rewrite(struct bch_fs *c, unsigned btree_id, unsigned level,
			     struct bpos_h max)
{
	struct bch_fs_rw *rw = bch_rw_get(c);

	if (!rw)
		return;
	for (size_t i = 0; i < rw->nr_forced; i++)
		if (rw->forced[i].btree_id == btree_id && rw->forced[i].level == level &&
		    !bpos_cmp(rw->forced[i].max, max))
			return;
	if (rw->nr_forced == rw->size_forced) {
		rw->size_forced = rw->size_forced ? 2 * rw->size_forced : 8;
		rw->forced = xrealloc(rw->forced, rw->size_forced * sizeof(*rw->forced));
	}
	rw->forced[rw->nr_forced++] = (struct rw_forced) {
		.btree_id = btree_id, .level = level, .max = max,
	};
}

bool bch_fs_rw_set_bucket_gen(struct bch_fs *c, unsigned dev, uint64_t bucket, uint8_t gen)
{
	struct bch_fs_rw *rw = bch_rw_get(c);

	if (!rw || !bch_alloc_set_gen(&rw->a, dev, bucket, gen))
		return false;
	rw->force_checkpoint = true;
	return true;
}

bool bch_fs_rw_bucket_gen(struct bch_fs *c, unsigned dev, uint64_t bucket, uint8_t *gen)
{
	const struct bch_dev_alloc *d;

	if (!bch_rw_get(c) || dev >= BCH_ALLOC_MAX_DEVS || !(d = c->rw->a.devs[dev]) ||
	    bucket >= d->nbuckets)
		return false;
	*gen = bch_bucket(d, bucket)->gen;
	return true;
}

void bch_fs_rw_mark_in_use(struct bch_fs *c, unsigned btree_id, const struct bkey_ref *k)
{
	if (c->rw && btree_id == BTREE_ID_EXTENTS &&
	    (k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED))
		mark_extent(c->rw, k);
}

void bch_fs_rw_want_checkpoint(struct bch_fs *c)
{
	if (bch_rw_get(c))
		c->rw->force_checkpoint = true;
}

bool bch_fs_rw_replicas_add(struct bch_fs *c, unsigned data_type, uint64_t devs)
{
	struct bch_fs_rw *rw = bch_rw_get(c);

	if (!rw)
		return false;
	bch_replicas_add(&rw->a.replicas, data_type, devs);
	rw->force_checkpoint = true;
	return true;
}

/* ---- for the data write path (io_write.c) ---------------------------------- */

struct bch_allocator *bch_fs_rw_alloc(struct bch_fs *c)
{
	return c->rw ? &c->rw->a : NULL;
}

uint64_t bch_fs_rw_key_version(struct bch_fs *c)
{
	return ++c->rw->key_version + 1;
}

uint64_t bch_fs_rw_reserve(const struct bch_fs *c, unsigned dev)
{
	return c->rw ? bch_alloc_dev_reserve(&c->rw->a, dev) : 0;
}

void bch_fs_rw_data_bucket_close(struct bch_fs *c, unsigned dev, uint64_t bucket)
{
	struct bch_fs_rw *rw = c->rw;

	if (!rw)
		return;
	/*
	 * The keys of its data are committed after this (bch_fs_write()
	 * writes, then commits): until then no journal flush may free it
	 */
	if (rw->nr_wp_closing == rw->size_wp_closing) {
		rw->size_wp_closing = rw->size_wp_closing ? 2 * rw->size_wp_closing : 8;
		rw->wp_closing = xrealloc(rw->wp_closing,
					  rw->size_wp_closing * sizeof(*rw->wp_closing));
	}
	rw->wp_closing[rw->nr_wp_closing++] = (struct freed_bucket) { .dev = dev, .bucket = bucket };
}

void bch_rw_wp_close_deferred(struct bch_fs *c)
{
	struct bch_fs_rw *rw = c->rw;

	/* the entry the keys of their data are in: the open one, else the last written */
	uint64_t seq = rw->open_live ? rw->jw.seq + 1 : rw->jw.seq;

	if (!rw->nr_wp_closing)
		return;
	for (size_t i = 0; i < rw->nr_wp_closing; i++)
		bch_alloc_wp_close(&rw->a, rw->wp_closing[i].dev, rw->wp_closing[i].bucket, seq);
	rw->nr_wp_closing = 0;
	bch_alloc_release_durable(&rw->a, rw->durable_seq);
}

/* ---- members changing at run time (doc/engine.md §17) ---------------------- */

int bch_fs_rw_member_update(struct bch_fs *c, unsigned dev, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	const struct bch_member *m = bch_sb_member(c->sb, dev);
	struct bch_member_dev *ca;
	struct journal_wdev *jd;
	int ret;

	if (!rw)
		return 0;
	if (dev >= BCH_FS_MAX_DEVS)
		return -EINVAL;
	ret = bch_alloc_dev_sync(&rw->a, c, dev, err);
	if (ret)
		return ret;
	ca = c->devs[dev];
	jd = &rw->jw.devs[dev];
	if (!ca || !m || !bch_member_exists(m)) {
		free(jd->buckets);
		free(jd->bucket_seq);
		memset(jd, 0, sizeof(*jd));
	} else {
		size_t nr = ca->sb ? bch_sb_journal_nr_buckets(ca->sb) : 0;

		if (!jd->nr && nr) {
			/* a new member: its journal has no entry yet */
			uint64_t *b = xcalloc(nr, sizeof(uint64_t));

			for (size_t i = 0; i < nr; i++)
				b[i] = bch_sb_journal_bucket(ca->sb, i);
			ret = bch_journal_writer_set_dev(&rw->jw, dev, b, (unsigned)nr, err);
			free(b);
			if (ret)
				return ret;
		}
		jd->durability = bch_member_durability(m);
		jd->active = jd->nr && ca->io && ca->io->rw &&
			     BCH_MEMBER_STATE(m) == BCH_MEMBER_STATE_RW;
	}
	if (!jd->active)
		jd->have_cursor = false;
	bch_fs_key_ctx(c, &rw->kctx);
	/* the write point's buckets close: the next write picks its devices again */
	c->member_changes++;
	return 0;
}
