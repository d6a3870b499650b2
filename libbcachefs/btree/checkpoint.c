// SPDX-License-Identifier: GPL-2.0
/*
 * Journal entries and checkpoints of the update engine (btree_update.h):
 * the open journal entry (opened, filled by commits, written when full,
 * on fsync or by the timer), and the checkpoint that writes the overlay
 * into the btrees copy-on-write, then a journal entry with the new roots.
 * The two call each other (an entry that finds the journal full runs a
 * checkpoint; a checkpoint ends with an entry), so they live together.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "btree/bulk.h"
#include "btree/checkpoint.h"
#include "btree/engine.h"
#include "btree/reserve.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "btree/sb_write.h"

/* Every root, the blacklists still needed (doc/engine.md §4.3, doc/format.md §6.7). */
static int jset_add_roots(struct bch_fs *c, struct jset_builder *b)
{
	int ret = 0;

	for (unsigned id = 0; id < BCH_NR_BTREES && !ret; id++)
		if (c->roots[id].present)
			ret = jset_add_root(b, id, c->roots[id].level, &c->roots[id].key);
	return ret;
}

static int jset_start(struct bch_fs *c, struct jset_builder *b)
{
	const struct journal_state *j = &c->journal;
	int ret = 0;

	jset_builder_init(b);
	for (size_t i = 0; i < j->nr_blacklist && !ret; i++)
		ret = jset_add_blacklist_v2(b, j->blacklist[i].start, j->blacklist[i].end);
	return ret;
}

/* Write @b as the next entry and keep the replicas table up to date. */
static int journal_write(struct bch_fs *c, struct jset_builder *b, uint64_t last_seq,
			 bool flush, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	int ret = bch_journal_write(&rw->jw, b, last_seq, flush, err);

	if (ret)
		return ret;
	rw->stats.journal_entries++;
	c->journal.seq = rw->jw.seq;
	c->journal.last_seq = last_seq ?: rw->jw.seq;
	/* the preflush made every earlier entry durable; a flush this one */
	rw->durable_seq = flush ? rw->jw.seq : rw->jw.seq - 1;
	bch_alloc_release_durable(&rw->a, rw->durable_seq);
	bch_replicas_add(&rw->a.replicas, BCH_DATA_JOURNAL, rw->jw.last_devs);
	return bch_rw_replicas_sync(c, err);
}

/* Free ring slots: the fewest on any device the journal writes to. */
static unsigned journal_space(struct bch_fs *c)
{
	return bch_journal_writer_buckets_free(&c->rw->jw);
}

/* See checkpoint.h. */
int bch_rw_entry_write(struct bch_fs *c, bool flush, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	int ret;

	if (!rw->open_live) {
		/* nothing new: the entries written without a flush become durable */
		if (flush && rw->durable_seq < rw->jw.seq) {
			for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
				if (c->devs[i] && c->devs[i]->io && dev_unflushed(c->devs[i]->io)) {
					ret = dev_flush(c->devs[i]->io);
					if (ret) {
						pr_buf(err, "%s: flush failed: %s\n",
						       c->devs[i]->io->path, bch_err_str(ret));
						return ret;
					}
				}
			rw->durable_seq = rw->jw.seq;
			bch_alloc_release_durable(&rw->a, rw->durable_seq);
		}
		return 0;
	}
	ret = jset_add_roots(c, &rw->open);
	if (!ret)
		ret = journal_write(c, &rw->open, rw->last_seq, flush, err);
	jset_builder_exit(&rw->open);
	rw->open_live = false;
	rw->open_u64s = 0;
	return ret;
}

/* See checkpoint.h. */
int bch_rw_entry_open(struct bch_fs *c, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	int ret;

	if (rw->open_live)
		return 0;
	if (journal_space(c) < 3) {
		ret = bch_fs_checkpoint(c, err);
		if (ret)
			return ret;
	}
	ret = jset_start(c, &rw->open);
	if (ret) {
		jset_builder_exit(&rw->open);
		return ret;
	}
	rw->open_live = true;
	rw->open_u64s = 0;
	rw->open_since = bch_now_ns();
	return 0;
}

int bch_journal_flush(struct bch_fs *c, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	int ret;

	if (!rw)
		return 0;
	if (rw->failed) {
		pr_str(err, "filesystem is not writable\n");
		return -EROFS;
	}
	ret = bch_rw_entry_write(c, true, err);
	if (ret)
		rw->failed = true;
	return ret;
}

int bch_journal_flush_old(struct bch_fs *c, uint64_t age_ns, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;

	if (!rw || rw->failed || !rw->open_live || bch_now_ns() - rw->open_since < age_ns)
		return 0;
	return bch_journal_flush(c, err);
}

void bch_fs_rw_set_batch(struct bch_fs *c, bool batch)
{
	if (bch_rw_get(c)) {
		c->rw->batch = batch;
		/* the running filesystem: statfs shows what data may take (btree/reserve.h) */
		if (batch)
			bch_rw_reserve_init(c);
	}
}

uint64_t bch_journal_seq_durable(const struct bch_fs *c)
{
	return c->rw ? c->rw->durable_seq : 0;
}

static void free_node_space(struct bch_fs *c, const struct bkey_ref *ptr)
{
	struct bch_fs_rw *rw = c->rw;
	struct btree_ptr_h p[BCH_REPLICAS_MAX];
	int nr = btree_ptr_decode(ptr, p, BCH_REPLICAS_MAX);

	for (int i = 0; i < nr; i++) {
		struct bch_dev_alloc *d = p[i].dev < BCH_ALLOC_MAX_DEVS ? rw->a.devs[p[i].dev] : NULL;

		if (!d || !d->bucket_size)
			continue;
		if (rw->nr_freed == rw->size_freed) {
			rw->size_freed = rw->size_freed ? 2 * rw->size_freed : 64;
			rw->freed = xrealloc(rw->freed, rw->size_freed * sizeof(*rw->freed));
		}
		rw->freed[rw->nr_freed++] = (struct freed_bucket) {
			.dev = p[i].dev, .bucket = p[i].offset / d->bucket_size,
		};
		bch_btree_cache_invalidate(c, p[i].dev, p[i].offset,
					   p[i].offset + c->btree_node_size);
	}
	rw->stats.nodes_freed++;
}

/* Is a node forced at a level <= @level with its position in [@min, @max]? */
static bool forced_in(struct bch_fs *c, unsigned id, unsigned level, struct bpos_h min,
		      struct bpos_h max)
{
	struct bch_fs_rw *rw = c->rw;

	for (size_t i = 0; i < rw->nr_forced; i++)
		if (rw->forced[i].btree_id == id && rw->forced[i].level <= level &&
		    bpos_cmp(rw->forced[i].max, min) >= 0 && bpos_cmp(rw->forced[i].max, max) <= 0)
			return true;
	return false;
}

static bool forced_is(struct bch_fs *c, unsigned id, unsigned level, struct bpos_h max)
{
	struct bch_fs_rw *rw = c->rw;

	for (size_t i = 0; i < rw->nr_forced; i++)
		if (rw->forced[i].btree_id == id && rw->forced[i].level == level &&
		    !bpos_cmp(rw->forced[i].max, max))
			return true;
	return false;
}

/*
 * A forced node that cannot be read: nodes at @level covering [@min, @max]
 * from the overlay keys only. Its buckets are not released: what they
 * hold is not known.
 */
static int rebuild_lost_node(struct bch_fs *c, unsigned id, unsigned level,
			     struct bpos_h min, struct bpos_h max,
			     struct bulk_keys *out, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	struct node_arena *arena = node_arena_new();
	struct bulk_keys cur = { 0 };
	struct bkey_ref *keys = NULL;
	size_t nr = 0;
	int ret;

	bch_btree_overlay(c, id, min, max, NULL, 0, arena, &keys, &nr);
	ret = bch_bulk_build_range(c, &rw->wctx, &rw->a, id, 0, min, max, keys, nr, 0, &cur, err);
	for (unsigned l = 1; !ret && l <= level; l++) {
		struct bulk_keys up = { 0 };

		rw->stats.nodes_written += cur.nr;
		ret = bch_bulk_build_range(c, &rw->wctx, &rw->a, id, l, min, max,
					   cur.k, cur.nr, 0, &up, err);
		bulk_keys_exit(&cur);
		cur = up;
	}
	if (!ret) {
		rw->stats.nodes_written += cur.nr;
		for (size_t i = 0; i < cur.nr; i++)
			bulk_keys_add(out, &cur.k[i].k, cur.k[i].v, cur.k[i].v_bytes);
	}
	bulk_keys_exit(&cur);
	free(keys);
	node_arena_free(arena);
	return ret;
}

static int rewrite_node(struct bch_fs *c, unsigned id, const struct bkey_ref *ptr,
			unsigned level, struct bpos_h min, struct bpos_h max,
			struct bulk_keys *out, struct printbuf *err);

/*
 * Leaves @ptrs[0..@nr) (consecutive children of one node, covering [@min,
 * @max]) all have overlay keys: their keys with the overlay go into one
 * run of new leaves, so leaves that shrank merge (doc/format.md §4.9). When one of
 * them cannot be read, each is rewritten on its own instead.
 *
 * Trials, where nothing is written and 1 is returned: with @probe, the
 * number of leaves the new keys need is put there (0 when a leaf cannot
 * be read), and nothing is written when their leaves would have room for
 * a third of a leaf more; with @max_leaves, when they would need more (or
 * a leaf cannot be read). See rewrite_leaf_run().
 */
static int rewrite_leaves(struct bch_fs *c, unsigned id, const struct bkey_ref *ptrs,
			  size_t nr, struct bpos_h min, struct bpos_h max,
			  size_t max_leaves, size_t *probe, struct bulk_keys *out,
			  struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	struct btree_node_h **leaf = xcalloc(nr, sizeof(*leaf));
	struct node_arena *arena = node_arena_new();
	struct bkey_ref *all = NULL;
	size_t nr_all = 0, i, got = 0, before = out->nr;
	struct bpos_h cmin = min;
	size_t err_pos = err->pos;
	int ret = 0;

	for (i = 0; i < nr; i++) {
		struct bpos_h cmax = i + 1 == nr ? max : ptrs[i].k.p;
		struct btree_node_expect exp = {
			.btree_id = id, .level = 0, .min_key = cmin, .max_key = cmax,
			.check_min = true,
		};
		struct bkey_ref *merged;
		size_t nr_merged;

		if (bch_btree_node_get(c, &ptrs[i], &exp, &leaf[i], err))
			break;
		got++;
		bch_btree_overlay(c, id, cmin, cmax, leaf[i]->keys, leaf[i]->nr_keys, arena,
				  &merged, &nr_merged);
		all = xrealloc(all, (nr_all + nr_merged + 1) * sizeof(*all));
		if (nr_merged)
			memcpy(all + nr_all, merged, nr_merged * sizeof(*merged));
		nr_all += nr_merged;
		free(merged);
		cmin = bpos_successor(id, ptrs[i].k.p);
	}
	if (max_leaves || probe) {
		/* a leaf that cannot be read: not here (the caller's last try handles it) */
		struct bulk_size sz;
		size_t need = 0;
		bool no;

		if (got == nr) {
			bch_bulk_measure(min, all, nr_all, &sz);
			need = bch_bulk_leaves(&rw->wctx, &sz);
		}
		if (probe)
			*probe = need;
		/*
		 * with a neighbour, a key's worth of margin: the leaves are cut
		 * key by key, so the run may not take more leaves than alone
		 * (the checkpoint's reserve counts on it: btree/reserve.c)
		 */
		no = !need || (probe ? bch_bulk_fits(&rw->wctx, &sz, need, 3)
				     : !bch_bulk_fits(&rw->wctx, &sz, max_leaves, 0));
		if (no) {
			ret = 1;
			/* what the read said is said again by the last try */
			if (err->buf && err->pos > err_pos) {
				err->pos = err_pos;
				err->buf[err_pos] = '\0';
			}
		}
	}
	if (got == nr && !ret) {
		ret = bch_bulk_build_range(c, &rw->wctx, &rw->a, id, 0, min, max,
					   all, nr_all, 0, out, err);
		if (!ret) {
			rw->stats.nodes_written += out->nr - before;
			for (i = 0; i < nr; i++)
				free_node_space(c, &ptrs[i]);
		}
	}
	for (i = 0; i < got; i++)
		bch_btree_node_put(c, leaf[i]);
	free(leaf);
	free(all);
	node_arena_free(arena);

	if (got < nr && !ret) {
		/* one by one: an unreadable leaf gets the unreadable-node treatment */
		cmin = min;
		for (i = 0; i < nr && !ret; i++) {
			struct bpos_h cmax = i + 1 == nr ? max : ptrs[i].k.p;

			ret = rewrite_node(c, id, &ptrs[i], 0, cmin, cmax, out, err);
			cmin = bpos_successor(id, ptrs[i].k.p);
		}
	}
	return ret;
}

/* The leaves after a run of children that may join it (doc/engine.md §6.2). */
#define RUN_NEIGHBOURS_MAX	3

/*
 * A run of changed leaves, children [*@i, *@j) of @parent (range [*@cmin,
 * @gmax]; @pmax: the parent's max), rewritten as one (rewrite_leaves()).
 * When the last of its new leaves would have room for another third of a
 * leaf, unchanged neighbours join it if that saves a leaf: the k leaves
 * after it (k up to RUN_NEIGHBOURS_MAX) when the run and they fit in k - 1
 * leaves more than the run alone, or else the one before (@prev_min: that
 * one's min when it is the child just kept, its pointer the last of
 * @out; POS_H_MAX: none) when they fit as many leaves as the run alone.
 * Leaves emptied by deletions then merge instead of each keeping a node
 * (a bucket) for a few keys: two neighbours at half a leaf do not fit in
 * one, three fit in two (random deletes left every leaf half full, for
 * good); and a leaf that overflows shares its keys with a neighbour
 * instead of splitting into two half-empty ones (random inserts, as into
 * dirents, left leaves half full). No more new leaves than the
 * checkpoint's reserve counts for the run (two a changed leaf:
 * btree/reserve.c). *@i, *@j and *@cmin say what the run became.
 */
static int rewrite_leaf_run(struct bch_fs *c, unsigned id, const struct btree_node_h *parent,
			    struct bpos_h pmax, size_t *i, size_t *j, struct bpos_h *cmin,
			    struct bpos_h gmax, struct bpos_h prev_min, struct bulk_keys *out,
			    struct printbuf *err)
{
	const struct bkey_ref *ptrs = parent->keys;
	size_t leaves, k, next = 0, run = *j - *i;
	bool prev = bpos_cmp(prev_min, POS_H_MAX) != 0;
	int ret;

	/* the unchanged leaves after the run that may join it */
	while (next < RUN_NEIGHBOURS_MAX && *j + next < parent->nr_keys) {
		struct bpos_h nmin = bpos_successor(id, ptrs[*j + next - 1].k.p);
		struct bpos_h nmax = *j + next + 1 == parent->nr_keys ? pmax : ptrs[*j + next].k.p;

		if (forced_in(c, id, 0, nmin, nmax))
			break;
		next++;
	}
	if (!next && !prev)
		goto plain;
	ret = rewrite_leaves(c, id, ptrs + *i, run, *cmin, gmax, 0, &leaves, out, err);
	if (ret != 1)
		return ret;	/* written: it left too little room for a neighbour */
	if (!leaves)
		goto plain;
	for (k = 1; k <= next; k++) {
		struct bpos_h nmax = *j + k == parent->nr_keys ? pmax : ptrs[*j + k - 1].k.p;
		size_t most = min_t(size_t, leaves + k - 1, max_t(size_t, leaves, 2 * run));

		ret = rewrite_leaves(c, id, ptrs + *i, run + k, *cmin, nmax, most, NULL,
				     out, err);
		if (ret != 1) {
			*j += k;
			return ret;
		}
	}
	if (prev) {
		/* the kept pointer to the one before goes: it is rewritten with the run */
		struct bkey_ref last = out->k[out->nr - 1];

		out->nr--;
		ret = rewrite_leaves(c, id, ptrs + *i - 1, run + 1, prev_min, gmax, leaves, NULL,
				     out, err);
		if (ret != 1) {
			free((void *)last.v);
			(*i)--;
			*cmin = prev_min;
			return ret;
		}
		out->nr++;
	}
plain:
	return rewrite_leaves(c, id, ptrs + *i, run, *cmin, gmax, 0, NULL, out, err);
}

/*
 * Replace the node @ptr points to (btree @id, @level, range [@min, @max])
 * by new nodes holding its keys with the overlay laid over them; append
 * their pointer keys to @out. Children without overlay keys are kept.
 */
static int rewrite_node(struct bch_fs *c, unsigned id, const struct bkey_ref *ptr,
			unsigned level, struct bpos_h min, struct bpos_h max,
			struct bulk_keys *out, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	struct btree_node_expect exp = {
		.btree_id = id, .level = level, .min_key = min, .max_key = max,
		.check_min = true,
	};
	struct btree_node_h *n;
	struct bulk_keys keys = { 0 };
	struct node_arena *arena = NULL;
	struct bkey_ref *merged = NULL;
	size_t nr_merged = 0, before = out->nr;
	int ret;

	ret = bch_btree_node_get(c, ptr, &exp, &n, err);
	if (ret && c->opts.verify && !bch_btree_journal_keys_in(c, id, min, max)) {
		/*
		 * The running filesystem (core/integrity.h): a node with no good
		 * copy that a data job asked to rewrite stays as it is, for fsck:
		 * never rebuilt from less, never rewritten as if valid
		 */
		bulk_keys_add(out, &ptr->k, ptr->v, ptr->v_bytes);
		return 0;
	}
	if (ret && forced_is(c, id, level, max) && !c->opts.verify) {
		printbuf_reset(err);	/* fsck reported it */
		return rebuild_lost_node(c, id, level, min, max, out, err);
	}
	if (ret) {
		pr_buf(err, "btree %s level %u: node unreadable, cannot update it\n",
		       bch_btree_id_str(id), level);
		return ret;
	}

	if (level && !n->nr_keys) {
		/* fsck: an interior node that lost every child pointer */
		bch_btree_node_put(c, n);
		ret = rebuild_lost_node(c, id, level, min, max, out, err);
		if (!ret)
			free_node_space(c, ptr);
		return ret;
	}
	if (!level) {
		const struct bkey_ref *nk = n->keys;
		size_t nr_nk = n->nr_keys;

		/*
		 * fsck: a damaged node may hold keys outside the range
		 * its parent gives it; they cannot be written into it (fsck
		 * re-inserted them through the overlay, which puts them where
		 * they belong). Extents are cut at the range by the overlay.
		 */
		if (forced_in(c, id, level, min, max) ||
		    bpos_cmp(n->min_key, min) || bpos_cmp(n->max_key, max)) {
			while (nr_nk && bpos_cmp(nk->k.p, min) < 0)
				nk++, nr_nk--;
			while (nr_nk && bpos_cmp(nk[nr_nk - 1].k.p, max) > 0)
				nr_nk--;
		}
		arena = node_arena_new();
		bch_btree_overlay(c, id, min, max, nk, nr_nk, arena, &merged, &nr_merged);
		ret = bch_bulk_build_range(c, &rw->wctx, &rw->a, id, 0, min, max,
					   merged, nr_merged, 0, out, err);
	} else {
		struct bpos_h cmin = min, kept_min = min;
		size_t i = 0, kept = SIZE_MAX;
		/*
		 * A node fsck rewrites may have lost child pointers: the ranges
		 * of its children follow from the keys left, so every child is
		 * rewritten to match them (doc/format.md §4.8).
		 */
		bool all = forced_is(c, id, level, max);

		while (i < n->nr_keys && !ret) {
			const struct bkey_ref *ck = &n->keys[i];
			struct bpos_h cmax = i + 1 == n->nr_keys ? max : ck->k.p;
			size_t j = i + 1;

			if (all) {
				ret = rewrite_node(c, id, ck, level - 1, cmin, cmax, &keys, err);
			} else if (!bch_btree_journal_keys_in(c, id, cmin, cmax) &&
			    !forced_in(c, id, level - 1, cmin, cmax)) {
				bulk_keys_add(&keys, &ck->k, ck->v, ck->v_bytes);
				kept = i;
				kept_min = cmin;
			} else if (level == 1 && !forced_in(c, id, 0, cmin, cmax)) {
				/* a run of changed leaves is rebuilt as one: merges */
				struct bpos_h gmax = cmax;

				while (j < n->nr_keys) {
					struct bpos_h nmin = bpos_successor(id, n->keys[j - 1].k.p);
					struct bpos_h nmax = j + 1 == n->nr_keys ? max : n->keys[j].k.p;

					if (!bch_btree_journal_keys_in(c, id, nmin, nmax) ||
					    forced_in(c, id, 0, nmin, nmax))
						break;
					gmax = nmax;
					j++;
				}
				ret = rewrite_leaf_run(c, id, n, max, &i, &j, &cmin, gmax,
						       kept != SIZE_MAX && kept + 1 == i ? kept_min : POS_H_MAX,
						       &keys, err);
			} else {
				ret = rewrite_node(c, id, ck, level - 1, cmin, cmax, &keys, err);
			}
			cmin = bpos_successor(id, n->keys[j - 1].k.p);
			i = j;
		}
		if (!ret)
			ret = bch_bulk_build_range(c, &rw->wctx, &rw->a, id, level, min, max,
						   keys.k, keys.nr, 0, out, err);
	}
	if (!ret) {
		rw->stats.nodes_written += out->nr - before;
		free_node_space(c, ptr);
	}
	bch_btree_node_put(c, n);
	free(merged);
	if (arena)
		node_arena_free(arena);
	bulk_keys_exit(&keys);
	return ret;
}

/* New root from the pointer keys of the nodes covering the whole btree. */
static int set_root(struct bch_fs *c, unsigned id, unsigned level, struct bulk_keys *ptrs,
		    struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	struct btree_root_h *r = &c->roots[id];
	int ret = 0;

	while (!ret && ptrs->nr > 1) {
		struct bulk_keys up = { 0 };

		level++;
		ret = bch_bulk_build_range(c, &rw->wctx, &rw->a, id, level, POS_H_MIN, POS_H_MAX,
					   ptrs->k, ptrs->nr, 0, &up, err);
		rw->stats.nodes_written += up.nr;
		bulk_keys_exit(ptrs);
		*ptrs = up;
	}
	if (ret)
		return ret;
	if (level >= BTREE_ITER_MAX_DEPTH) {
		pr_buf(err, "btree %s would grow to depth %u\n", bch_btree_id_str(id), level + 1);
		return -ENOSPC;
	}
	r->present = true;
	r->level = level;
	r->key = ptrs->k[0];
	memcpy(r->buf, ptrs->k[0].v, ptrs->k[0].v_bytes);
	r->key.v = r->buf;
	return 0;
}

static int rewrite_btree(struct bch_fs *c, unsigned id, struct printbuf *err)
{
	struct btree_root_h *r = &c->roots[id];
	struct bulk_keys ptrs = { 0 };
	int ret;

	if (!bch_btree_journal_keys_in(c, id, POS_H_MIN, POS_H_MAX) &&
	    !forced_in(c, id, UINT32_MAX, POS_H_MIN, POS_H_MAX))
		return 0;
	if (r->present) {
		struct bkey_ref root = r->key;

		ret = rewrite_node(c, id, &root, r->level, POS_H_MIN, POS_H_MAX, &ptrs, err);
		if (!ret)
			ret = set_root(c, id, r->level, &ptrs, err);
	} else {
		struct node_arena *arena = node_arena_new();
		struct bkey_ref *keys;
		size_t nr;

		bch_btree_overlay(c, id, POS_H_MIN, POS_H_MAX, NULL, 0, arena, &keys, &nr);
		ret = !nr ? 0 : bch_bulk_build_range(c, &c->rw->wctx, &c->rw->a, id, 0,
						      POS_H_MIN, POS_H_MAX, keys, nr, 0, &ptrs, err);
		if (!ret && nr) {
			c->rw->stats.nodes_written += ptrs.nr;
			ret = set_root(c, id, 0, &ptrs, err);
		}
		free(keys);
		node_arena_free(arena);
	}
	bulk_keys_exit(&ptrs);
	return ret;
}

static int collect_alloc_node(void *arg, const struct btree_node_visit *v)
{
	struct bch_fs *c = arg;

	if (v->ptr)
		free_node_space(c, v->ptr);
	return 0;
}

/*
 * The alloc btree, rebuilt from the allocator: a key for every bucket that
 * had one, holds data or has a gen. Its own nodes take buckets (new gens),
 * so nodes are taken first until they are enough for every key.
 */
static int rebuild_alloc(struct bch_fs *c, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	struct bch_allocator *a = &rw->a;
	struct bulk_pool pool = { 0 };
	struct bulk_root root;
	struct bkey_ref *keys = NULL;
	uint64_t *vals = NULL;
	size_t nr = 0, size = 0;
	int ret;

	ret = bch_btree_walk_nodes(c, BTREE_ID_ALLOC, collect_alloc_node, c, err);
	if (ret < 0)
		return ret;
	for (;;) {
		free(keys);
		free(vals);
		ret = bch_alloc_all_keys(a, &keys, &vals, &nr);
		if (ret)
			goto out;
		if (!nr || (pool.nr && bch_bulk_nodes_for(&rw->wctx, 0, nr, BKEY_U64S_UNPACKED + 1,
							  5 + pool.nr_ptrs[0]) <= pool.nr))
			break;
		if (pool.nr == size) {
			size = size ? 2 * size : 4;
			pool.ptrs = xrealloc(pool.ptrs, size * sizeof(*pool.ptrs));
			pool.nr_ptrs = xrealloc(pool.nr_ptrs, size * sizeof(*pool.nr_ptrs));
		}
		ret = bch_alloc_btree_node(a, pool.ptrs[pool.nr], &pool.nr_ptrs[pool.nr], err);
		if (ret)
			goto out;
		bch_rw_node_taken(c, a, pool.ptrs[pool.nr], pool.nr_ptrs[pool.nr]);
		pool.nr++;
	}
	ret = bch_bulk_build_pool(c, &rw->wctx, a, BTREE_ID_ALLOC, keys, nr, 0, &pool, &root, err);
	if (ret)
		goto out;
	rw->stats.nodes_written += root.nr_nodes;
	/* unused reserved nodes: their buckets go back */
	for (size_t i = pool.used; i < pool.nr; i++)
		for (unsigned p = 0; p < pool.nr_ptrs[i]; p++)
			bch_alloc_release(a, pool.ptrs[i][p].dev,
					  pool.ptrs[i][p].offset / a->devs[pool.ptrs[i][p].dev]->bucket_size);
	if (root.present) {
		c->roots[BTREE_ID_ALLOC].present = true;
		c->roots[BTREE_ID_ALLOC].level = root.level;
		c->roots[BTREE_ID_ALLOC].key = root.key;
		memcpy(c->roots[BTREE_ID_ALLOC].buf, root.key_val, root.key.v_bytes);
		c->roots[BTREE_ID_ALLOC].key.v = c->roots[BTREE_ID_ALLOC].buf;
	} else {
		c->roots[BTREE_ID_ALLOC].present = false;
	}
out:
	free(keys);
	free(vals);
	free(pool.ptrs);
	free(pool.nr_ptrs);
	return ret;
}

/* After the new tree is durable: the overlay is in it. */
static void overlay_clear(struct bch_fs *c)
{
	free(c->journal.keys);
	c->journal.keys = NULL;
	c->journal.nr_keys = 0;
	bch_overlay_clear(&c->overlay);
}

int bch_fs_checkpoint(struct bch_fs *c, struct printbuf *err)
{
	struct bch_fs_rw *rw = bch_rw_get(c);
	struct btree_root_h saved[BCH_NR_BTREES];
	struct jset_builder b;
	unsigned id;
	int ret = 0;

	if (!rw || rw->failed || bch_fs_writes_stopped(c)) {
		pr_str(err, "filesystem is not writable\n");
		return -EROFS;
	}
	uint64_t written = rw->stats.nodes_written, freed = rw->stats.nodes_freed;

	memcpy(saved, c->roots, sizeof(saved));
	bch_rw_ckpt_track_begin(c);
	ret = bch_rw_mark_unclean(c, err);
	/* what was committed goes out first: the checkpoint's entry follows it */
	if (!ret)
		ret = bch_rw_entry_write(c, false, err);
	for (id = 0; id < BCH_NR_BTREES && !ret; id++)
		if (id != BTREE_ID_ALLOC)
			ret = rewrite_btree(c, id, err);
	if (!ret)
		ret = rebuild_alloc(c, err);
	/* the replicas of the new nodes, then one entry makes them the tree */
	if (!ret)
		ret = bch_rw_replicas_sync(c, err);
	if (!ret)
		ret = jset_start(c, &b);
	if (!ret) {
		ret = jset_add_roots(c, &b);
		if (!ret)
			ret = journal_write(c, &b, 0, true, err);
		jset_builder_exit(&b);
	}
	if (ret) {
		/* the previous tree is still the one on disk */
		memcpy(c->roots, saved, sizeof(saved));
		if (ret == -BCH_ERR_nospc || ret == -ENOSPC) {
			/*
			 * No space for the new nodes: nothing of this attempt is
			 * reachable, its nodes go back and the engine stays
			 * writable; the journal keeps replaying the overlay
			 */
			bch_rw_ckpt_undo(c);
			pr_str(err, "checkpoint found no space: kept in the journal, "
			       "operations that free space go on\n");
			return -BCH_ERR_nospc;
		}
		bch_rw_ckpt_track_end(c);
		rw->failed = true;
		pr_str(err, "checkpoint failed: the filesystem stays as its journal says\n");
		return ret;
	}
	bch_rw_ckpt_track_end(c);
	rw->ckpt_nospc = false;
	rw->last_seq = rw->jw.seq;
	rw->nr_forced = 0;
	rw->force_checkpoint = false;
	overlay_clear(c);
	bch_rw_touched_reset(c);
	for (size_t i = 0; i < rw->nr_freed; i++)
		bch_alloc_release(&rw->a, rw->freed[i].dev, rw->freed[i].bucket);
	rw->nr_freed = 0;
	bch_alloc_clear_dirty(&rw->a);
	rw->stats.checkpoints++;
	rw->nr_nodes += rw->stats.nodes_written - written;
	rw->nr_nodes -= min_t(uint64_t, rw->nr_nodes, rw->stats.nodes_freed - freed);
	return 0;
}

int bch_btree_rw_stop(struct bch_fs *c, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	int ret = 0;

	if (!rw)
		return 0;
	if (rw->failed) {
		bch_rw_free(c);
		pr_str(err, "filesystem left as its journal says (an earlier write failed)\n");
		return -EIO;
	}
	if (bch_fs_writes_stopped(c)) {
		bch_rw_free(c);
		pr_str(err, "filesystem left as its journal says (read-only since damage was found)\n");
		return -EROFS;
	}
	bch_rw_wp_close_deferred(c);
	if (c->overlay.nr_keys || rw->unclean || rw->nr_forced || rw->force_checkpoint ||
	    rw->open_live)
		ret = bch_fs_checkpoint(c, err);
	/* damage found: not clean, for the next fsck (bch_fs_rw_mark_damaged()) */
	if (!ret && rw->unclean && !c->integ.nodes_bad)
		ret = bch_rw_sb_write_all(c, true, err);
	bch_rw_free(c);
	return ret;
}

int bch_fs_rw_replicas_gc(struct bch_fs *c,
			  int (*walk)(struct bch_fs *c, struct bch_replicas_table *t, void *arg),
			  void *arg, struct printbuf *err)
{
	struct bch_replicas_table t = { 0 };
	struct bch_fs_rw *rw;
	int ret = bch_fs_checkpoint(c, err);

	if (ret)
		return ret;
	rw = c->rw;
	ret = walk(c, &t, arg);
	if (ret) {
		bch_replicas_exit(&t);
		return ret;
	}
	/* the checkpoint's entry is the only one a replay needs now */
	bch_replicas_add(&t, BCH_DATA_JOURNAL, rw->jw.last_devs);
	bch_replicas_exit(&rw->a.replicas);
	rw->a.replicas = t;
	rw->a.replicas.changed = true;
	return bch_rw_sb_write_all(c, !rw->unclean, err);
}
