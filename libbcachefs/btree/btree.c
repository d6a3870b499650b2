// SPDX-License-Identifier: GPL-2.0
/*
 * Btree read side: node cache, key iterator with the journal overlay, and
 * a post-order walk over every node (doc/format.md §4.8, doc/engine.md §2.4).
 *
 * The iterator works one leaf range at a time: it descends from the root
 * to the leaf that holds the search position (checking each child's key
 * range against its parent and previous sibling), takes the leaf's live
 * keys, lays the journal keys of that range over them (journal keys are
 * newer than every node key; for extents per sector), and then moves to
 * the successor of the leaf's max key by descending again. The cache makes
 * the repeated descents cheap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "journal/journal.h"
#include "btree/node.h"
#include "util/util.h"

/* ---- node cache ---- */

struct cache_entry {
	struct cache_entry	*prev, *next;	/* LRU list, most recent first */
	unsigned		btree_id, level;
	unsigned		dev;
	uint64_t		offset;
	struct bpos_h		max_key;
	struct btree_node_h	*n;		/* NULL: read failed */
	int			err;
	unsigned		ref;
	bool			dead;		/* its space was rewritten: never found again */
};

struct btree_cache {
	struct cache_entry	*head, *tail;
	unsigned		nr;
	unsigned		max;		/* nodes kept when not held (0: BTREE_CACHE_MAX_NODES) */
};

static void lru_unlink(struct btree_cache *bc, struct cache_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		bc->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		bc->tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push(struct btree_cache *bc, struct cache_entry *e)
{
	e->prev = NULL;
	e->next = bc->head;
	if (bc->head)
		bc->head->prev = e;
	bc->head = e;
	if (!bc->tail)
		bc->tail = e;
}

static void cache_evict(struct btree_cache *bc)
{
	struct cache_entry *e = bc->tail;

	while (e) {
		struct cache_entry *prev = e->prev;

		if (!e->ref && (e->dead || bc->nr > (bc->max ?: BTREE_CACHE_MAX_NODES))) {
			lru_unlink(bc, e);
			btree_node_free(e->n);
			free(e);
			bc->nr--;
		}
		e = prev;
	}
}

static struct cache_entry *cache_find(struct btree_cache *bc, unsigned btree_id,
				      unsigned level, unsigned dev, uint64_t offset,
				      struct bpos_h max_key)
{
	struct cache_entry *e;

	for (e = bc->head; e; e = e->next)
		if (!e->dead && e->dev == dev && e->offset == offset && e->btree_id == btree_id &&
		    e->level == level && bpos_eq(e->max_key, max_key))
			return e;
	return NULL;
}

int bch_btree_node_get(struct bch_fs *c, const struct bkey_ref *ptr,
		       const struct btree_node_expect *exp,
		       struct btree_node_h **ret, struct printbuf *err)
{
	struct btree_cache *bc = c->btree_cache;
	struct btree_ptr_h p[BCH_REPLICAS_MAX];
	struct cache_entry *e;
	int nr;

	*ret = NULL;
	if (!bc)
		bc = c->btree_cache = xcalloc(1, sizeof(*bc));

	nr = btree_ptr_decode(ptr, p, ARRAY_SIZE(p));
	if (nr < 0) {
		if (err)
			pr_buf(err, "btree %u level %u: btree pointer with a bad value (%u bytes): node skipped\n",
			       exp->btree_id, exp->level, ptr->v_bytes);
		c->nr_errors++;
		return -BCH_ERR_btree_node_invalid;
	}

	e = cache_find(bc, exp->btree_id, exp->level, p[0].dev, p[0].offset, exp->max_key);
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->btree_id = exp->btree_id;
		e->level = exp->level;
		e->dev = p[0].dev;
		e->offset = p[0].offset;
		e->max_key = exp->max_key;
		e->err = btree_node_read(c, ptr, exp, &e->n, err);
		if (e->err)
			c->nr_errors++;
		else
			c->nr_errors += e->n->nr_errors;
		bc->nr++;
	} else {
		lru_unlink(bc, e);
	}
	lru_push(bc, e);
	if (e->err) {
		int r = e->err;

		cache_evict(bc);	/* (may free @e: nobody holds a failed read) */
		return r;
	}
	e->ref++;
	*ret = e->n;
	cache_evict(bc);
	return 0;
}

void bch_btree_node_put(struct bch_fs *c, struct btree_node_h *n)
{
	struct btree_cache *bc = c->btree_cache;
	struct cache_entry *e;

	if (!n || !bc)
		return;
	for (e = bc->head; e; e = e->next)
		if (e->n == n) {
			if (e->ref)
				e->ref--;
			break;
		}
	cache_evict(bc);
}

void bch_btree_cache_set_max(struct bch_fs *c, unsigned nr)
{
	if (!c->btree_cache)
		c->btree_cache = xcalloc(1, sizeof(struct btree_cache));
	c->btree_cache->max = nr;
	cache_evict(c->btree_cache);
}

void bch_btree_cache_trim(struct bch_fs *c)
{
	struct btree_cache *bc = c->btree_cache;
	struct cache_entry *e, *prev;

	if (!bc)
		return;
	for (e = bc->tail; e; e = prev) {
		prev = e->prev;
		if (!e->ref) {
			lru_unlink(bc, e);
			btree_node_free(e->n);
			free(e);
			bc->nr--;
		}
	}
}

void bch_btree_cache_invalidate(struct bch_fs *c, unsigned dev, uint64_t start,
				uint64_t end)
{
	struct btree_cache *bc = c->btree_cache;
	struct cache_entry *e;

	if (!bc)
		return;
	for (e = bc->head; e; e = e->next)
		if (e->dev == dev && e->offset >= start && e->offset < end)
			e->dead = true;
	cache_evict(bc);
}

void bch_btree_cache_exit(struct bch_fs *c)
{
	struct btree_cache *bc = c->btree_cache;
	struct cache_entry *e, *next;

	if (!bc)
		return;
	for (e = bc->head; e; e = next) {
		next = e->next;
		btree_node_free(e->n);
		free(e);
	}
	free(bc);
	c->btree_cache = NULL;
}

/* ---- positions ---- */

static bool is_extents(unsigned btree_id)
{
	return btree_id == BTREE_ID_EXTENTS;
}

/* Successor for node boundaries (doc/format.md §3.1); false if there is none. */
static bool pos_successor(unsigned btree_id, struct bpos_h p, struct bpos_h *ret)
{
	*ret = p;
	switch (btree_id) {
	case BTREE_ID_EXTENTS:
		return true;
	case BTREE_ID_INODES:
		if (p.inode == UINT64_MAX)
			return false;
		ret->inode++;
		ret->offset = 0;
		return true;
	default:
		if (++ret->offset)
			return true;
		if (p.inode == UINT64_MAX)
			return false;
		ret->inode++;
		return true;
	}
}

/* Is key position @kp at or after the search position (extents: strictly after)? */
static bool pos_reached(unsigned btree_id, struct bpos_h kp, struct bpos_h search)
{
	int c = bpos_cmp(kp, search);

	return is_extents(btree_id) ? c > 0 : c >= 0;
}

static void pr_pos(struct printbuf *out, struct bpos_h p)
{
	if (bpos_eq(p, POS_H_MAX))
		pr_str(out, "POS_MAX");
	else
		pr_buf(out, "%llu:%llu", (unsigned long long)p.inode,
		       (unsigned long long)p.offset);
}

/* ---- the overlay ---- */

/*
 * Overlay keys (overlay.h: sorted, one per position, extents without
 * overlap) of leaf range [min, max] of @btree_id, in order; extents cut
 * to the range. *@out is malloc'd (NULL when there are none).
 */
static size_t overlay_collect(struct bch_fs *c, unsigned btree_id,
			      struct bpos_h min, struct bpos_h max,
			      struct node_arena *arena, struct bkey_ref **out)
{
	const struct ov_key *o;
	struct ov_iter it;
	struct bkey_ref *v = NULL;
	size_t nr = 0, size = 0;

	bch_overlay_seek(&c->overlay, btree_id, min, &it);
	for (; (o = bch_overlay_peek(&it)); bch_overlay_next(&it)) {
		struct bkey_ref k = ov_key_ref(o);

		if (is_extents(btree_id)) {
			struct bpos_h start = bkey_start_pos(&k.k);
			uint64_t s = start.offset, e = k.k.p.offset;

			if (bpos_cmp(start, max) >= 0)
				break;
			if (bpos_cmp(start, min) < 0)
				s = min.offset;
			if (bpos_cmp(k.k.p, max) > 0)
				e = max.offset;
			if (s != start.offset || e != k.k.p.offset)
				k = bch_extent_piece(&k, s, e, arena);
		} else if (bpos_cmp(k.k.p, max) > 0) {
			break;
		}
		if (nr == size) {
			size = size ? 2 * size : 16;
			v = xrealloc(v, size * sizeof(*v));
		}
		v[nr++] = k;
	}
	*out = v;
	return nr;
}

bool bch_btree_journal_keys_in(struct bch_fs *c, unsigned btree_id,
			       struct bpos_h min, struct bpos_h max)
{
	const struct ov_key *o;
	struct ov_iter it;

	bch_overlay_seek(&c->overlay, btree_id, min, &it);
	o = bch_overlay_peek(&it);
	if (!o)
		return false;
	return is_extents(btree_id) ? bpos_cmp(bkey_start_pos(&o->k), max) < 0
				    : bpos_cmp(o->k.p, max) <= 0;
}

/*
 * Lay the overlay keys of [min, max] over the node keys @nk: the overlay
 * is newer than every node key (for extents, per sector).
 */
void bch_btree_overlay(struct bch_fs *c, unsigned btree_id, struct bpos_h min,
		       struct bpos_h max, const struct bkey_ref *nk, size_t nr,
		       struct node_arena *arena, struct bkey_ref **out, size_t *nr_out)
{
	bool extents = is_extents(btree_id);
	struct bkey_ref *ok;
	size_t nr_o = overlay_collect(c, btree_id, min, max, arena, &ok);

	if (!nr_o) {
		/* nothing from the overlay here: the node's keys as they are */
		*out = xmalloc((nr + 1) * sizeof(**out));
		if (nr)
			memcpy(*out, nk, nr * sizeof(*nk));
		*nr_out = nr;
	} else {
		struct key_run runs[2] = {
			{ .k = nk, .nr = nr },
			{ .k = ok, .nr = nr_o },
		};

		bch_keys_overlay(extents, runs, 2, arena, out, nr_out);
	}
	if (extents && nr_o) {
		struct btree_node_ctx ctx;

		btree_node_ctx_init(&ctx, c);
		*nr_out = bch_extents_merge(*out, *nr_out, ctx.bucket_size);
	}
	free(ok);
}

static void leaf_overlay(struct btree_iter *iter, struct bpos_h min, struct bpos_h max,
			 const struct bkey_ref *nk, size_t nr)
{
	free(iter->keys);
	iter->keys = NULL;
	bch_btree_overlay(iter->c, iter->btree_id, min, max,
			  nk, nr, iter->arena, &iter->keys, &iter->nr_keys);
}

/* ---- descending ---- */

static void iter_error(struct btree_iter *iter)
{
	iter->nr_errors++;
}

/*
 * Which child of interior node @n holds @search: sets *@idx, *@min (the
 * child's expected min key). False if no child does (the rest of the
 * node's range is empty).
 */
static bool child_find(struct btree_iter *iter, const struct btree_node_h *n,
		       struct bpos_h search, size_t *idx, struct bpos_h *min)
{
	size_t i;

	for (i = 0; i < n->nr_keys; i++)
		if (pos_reached(iter->btree_id, n->keys[i].k.p, search))
			break;
	if (i == n->nr_keys)
		return false;
	*idx = i;
	*min = n->min_key;
	if (i && !pos_successor(iter->btree_id, n->keys[i - 1].k.p, min))
		*min = n->keys[i - 1].k.p;
	return true;
}

int bch_btree_leaf_max(struct bch_fs *c, unsigned btree_id, struct bpos_h pos,
		       struct bpos_h *max)
{
	const struct btree_root_h *root = &c->roots[btree_id];
	struct btree_iter it = { .c = c, .btree_id = btree_id };
	struct printbuf ignore = PRINTBUF;
	struct btree_node_expect exp;
	struct btree_node_h *n, *parent = NULL;
	const struct bkey_ref *ptr;
	int ret = 0;

	*max = POS_H_MAX;
	if (!root->present || !root->level)
		return 0;
	if (root->level >= BTREE_ITER_MAX_DEPTH)
		return -BCH_ERR_btree_node_invalid;
	ptr = &root->key;
	exp = (struct btree_node_expect) {
		.btree_id = btree_id, .level = root->level,
		.min_key = POS_H_MIN, .max_key = root->key.k.p, .check_min = true,
	};
	for (;;) {
		size_t idx;
		struct bpos_h min;

		ret = bch_btree_node_get(c, ptr, &exp, &n, &ignore);
		if (parent)
			bch_btree_node_put(c, parent);
		parent = NULL;
		if (ret)
			break;
		if (!child_find(&it, n, pos, &idx, &min)) {
			*max = n->max_key;
			bch_btree_node_put(c, n);
			break;
		}
		if (n->level <= 1) {
			*max = n->keys[idx].k.p;
			bch_btree_node_put(c, n);
			break;
		}
		ptr = &n->keys[idx];
		exp = (struct btree_node_expect) {
			.btree_id = btree_id, .level = n->level - 1,
			.min_key = min, .max_key = ptr->k.p, .check_min = true,
		};
		parent = n;
	}
	printbuf_exit(&ignore);
	return ret;
}

/*
 * The keys of the leaf range [leaf_min, leaf_max] (node keys @nk) with the
 * overlay laid over them. A bounded iterator takes only the part of the
 * range from its position to its end (binary search in the node's sorted
 * keys): a lookup then costs what it returns, not a whole leaf.
 */
static void leaf_window(struct btree_iter *iter, const struct bkey_ref *nk, size_t nr)
{
	bool extents = is_extents(iter->btree_id);
	struct bpos_h min = iter->leaf_min, max = iter->leaf_max;
	size_t a, b, l, r;

	if (!iter->bounded) {
		leaf_overlay(iter, min, max, nk, nr);
		return;
	}
	if (bpos_cmp(iter->pos, min) > 0)
		min = iter->pos;
	if (bpos_cmp(iter->end, max) < 0)
		max = iter->end;
	if (bpos_cmp(min, max) > 0) {
		leaf_overlay(iter, min, min, NULL, 0);
		iter->nr_keys = 0;
		return;
	}
	/* first node key at or after min (extents: ending after it) */
	for (l = 0, r = nr; l < r;) {
		size_t m = l + (r - l) / 2;

		if (pos_reached(iter->btree_id, nk[m].k.p, min))
			r = m;
		else
			l = m + 1;
	}
	a = l;
	/* first node key past max (extents: starting at or after it) */
	for (r = nr; l < r;) {
		size_t m = l + (r - l) / 2;
		bool past = extents ? bpos_cmp(bkey_start_pos(&nk[m].k), max) >= 0
				    : bpos_cmp(nk[m].k.p, max) > 0;

		if (past)
			r = m;
		else
			l = m + 1;
	}
	b = l;
	leaf_overlay(iter, min, max, nk ? nk + a : NULL, b - a);
}

/* Load the leaf range that contains iter->pos into iter->keys. */
static int iter_load_leaf(struct btree_iter *iter)
{
	struct bch_fs *c = iter->c;
	const struct btree_root_h *root = &c->roots[iter->btree_id];
	struct btree_node_expect exp;
	struct btree_node_h *n = NULL, *parent = NULL;
	const struct bkey_ref *ptr;
	int ret;

	if (iter->leaf) {
		bch_btree_node_put(c, iter->leaf);
		iter->leaf = NULL;
	}
	iter->ov_clears = c->overlay.clears;
	iter->nr_keys = iter->idx = 0;
	iter->leaf_min = POS_H_MIN;
	iter->leaf_max = POS_H_MAX;

	if (!root->present) {
		leaf_window(iter, NULL, 0);
		return 0;
	}
	if (root->level >= BTREE_ITER_MAX_DEPTH) {
		if (iter->err)
			pr_buf(iter->err, "btree %u: root level %u is too deep: btree not read\n",
			       iter->btree_id, root->level);
		iter_error(iter);
		c->nr_errors++;
		return -BCH_ERR_btree_node_invalid;
	}

	ptr = &root->key;
	exp = (struct btree_node_expect) {
		.btree_id = iter->btree_id, .level = root->level,
		.min_key = POS_H_MIN, .max_key = root->key.k.p, .check_min = true,
	};

	while (1) {
		size_t idx;
		struct bpos_h min;

		ret = bch_btree_node_get(c, ptr, &exp, &n, iter->err);
		if (parent)
			bch_btree_node_put(c, parent);
		parent = NULL;
		iter->leaf_min = exp.min_key;
		iter->leaf_max = exp.max_key;
		if (ret) {
			iter_error(iter);
			n = NULL;
			/* the running filesystem: an error, never an empty range */
			if (c->opts.verify && !iter->skip_bad)
				return ret;
			break;			/* the range of the node is lost */
		}
		if (!n->level)
			break;

		if (!child_find(iter, n, iter->pos, &idx, &min)) {
			/* nothing after pos in this node's range */
			if (n->nr_keys && !bpos_eq(n->keys[n->nr_keys - 1].k.p, n->max_key)) {
				struct printbuf a = PRINTBUF, b = PRINTBUF;

				pr_pos(&a, n->keys[n->nr_keys - 1].k.p);
				pr_pos(&b, n->max_key);
				if (iter->err)
					pr_buf(iter->err, "btree node dev %u sector %llu (btree %u level %u): topology: last child ends at %s before the node's max key %s\n",
					       n->dev, (unsigned long long)n->sector,
					       n->btree_id, n->level, a.buf ? a.buf : "",
					       b.buf ? b.buf : "");
				printbuf_exit(&a);
				printbuf_exit(&b);
				iter_error(iter);
				c->nr_errors++;
			}
			iter->leaf_min = iter->pos;
			iter->leaf_max = n->max_key;
			bch_btree_node_put(c, n);
			n = NULL;
			break;
		}
		ptr = &n->keys[idx];
		exp = (struct btree_node_expect) {
			.btree_id = iter->btree_id, .level = n->level - 1,
			.min_key = min, .max_key = ptr->k.p, .check_min = true,
		};
		parent = n;
	}

	leaf_window(iter, n ? n->keys : NULL, n ? n->nr_keys : 0);
	/* the keys' values point into the node: keep it until the next leaf */
	iter->leaf = n;
	return 0;
}

void bch_btree_iter_init(struct btree_iter *iter, struct bch_fs *c,
			 unsigned btree_id, struct bpos_h pos, struct printbuf *err)
{
	memset(iter, 0, sizeof(*iter));
	iter->c = c;
	iter->btree_id = btree_id;
	iter->pos = pos;
	iter->end = POS_H_MAX;
	iter->err = err;
	iter->arena = node_arena_new();
	if (btree_id >= BCH_NR_BTREES)
		iter->ret = -EINVAL;
}

void bch_btree_iter_init_range(struct btree_iter *iter, struct bch_fs *c,
			       unsigned btree_id, struct bpos_h start, struct bpos_h end,
			       struct printbuf *err)
{
	bch_btree_iter_init(iter, c, btree_id, start, err);
	iter->end = end;
	iter->bounded = true;
}

/* Move to the next leaf range; false at the end of the btree. */
static bool iter_next_leaf(struct btree_iter *iter)
{
	struct bpos_h next;

	if (bpos_eq(iter->leaf_max, POS_H_MAX) ||
	    !pos_successor(iter->btree_id, iter->leaf_max, &next))
		return false;
	if (iter->bounded && bpos_cmp(iter->leaf_max, iter->end) >= 0)
		return false;
	if (!is_extents(iter->btree_id) && bpos_cmp(next, iter->leaf_max) <= 0)
		return false;
	iter->pos = next;
	return true;
}

int bch_btree_iter_peek(struct btree_iter *iter, struct bkey_ref **k)
{
	*k = NULL;
	if (iter->ret)
		return iter->ret;
	if (iter->at_end)
		return 0;

	/* the keys were laid over with an overlay since cleared: again from pos */
	if (iter->started && iter->ov_clears != iter->c->overlay.clears)
		iter->started = false;
	while (1) {
		if (!iter->started) {
			int ret = iter_load_leaf(iter);

			if (ret) {
				iter->ret = ret;
				return ret;
			}
			iter->started = true;
			/*
			 * A range that ends before pos (a root pointer whose
			 * position was damaged): the btree ends there, and the
			 * next leaf would be this one again, forever. Extents
			 * are searched after pos: a range ending at pos too.
			 */
			if (!pos_reached(iter->btree_id, iter->leaf_max, iter->pos)) {
				iter->at_end = true;
				return 0;
			}
		}
		while (iter->idx < iter->nr_keys &&
		       !pos_reached(iter->btree_id, iter->keys[iter->idx].k.p, iter->pos))
			iter->idx++;
		if (iter->idx < iter->nr_keys) {
			*k = &iter->keys[iter->idx];
			return 0;
		}
		if (!iter_next_leaf(iter)) {
			iter->at_end = true;
			return 0;
		}
		iter->started = false;
	}
}

void bch_btree_iter_advance(struct btree_iter *iter)
{
	if (!iter->started || iter->idx >= iter->nr_keys)
		return;
	/*
	 * Just after the key: extents search strictly after their end; other
	 * btrees use the next snapshot (keys all have snapshot 0).
	 */
	iter->pos = iter->keys[iter->idx].k.p;
	if (!is_extents(iter->btree_id) && iter->pos.snapshot < UINT32_MAX)
		iter->pos.snapshot++;
	iter->idx++;
}

int bch_btree_iter_next(struct btree_iter *iter, struct bkey_ref **k)
{
	int ret = bch_btree_iter_peek(iter, k);

	if (!ret && *k) {
		struct bkey_ref *cur = *k;

		bch_btree_iter_advance(iter);
		*k = cur;
	}
	return ret;
}

void bch_btree_iter_exit(struct btree_iter *iter)
{
	if (iter->leaf)
		bch_btree_node_put(iter->c, iter->leaf);
	free(iter->keys);
	node_arena_free(iter->arena);
	memset(iter, 0, sizeof(*iter));
}

/* ---- node walk ---- */

struct walk {
	struct bch_fs	*c;
	unsigned	btree_id;
	unsigned	root_level;
	int		(*fn)(void *arg, const struct btree_node_visit *v);
	void		*arg;
	struct printbuf	*err;
};

static int walk_node(struct walk *w, const struct bkey_ref *ptr,
		     const struct btree_node_expect *exp)
{
	struct btree_node_visit v = {
		.btree_id = w->btree_id, .level = exp->level,
		.root_level = w->root_level, .ptr = ptr,
	};
	struct btree_node_h *n = NULL, *salvaged = NULL;
	int ret;
	size_t i;

	v.read_err = bch_btree_node_get(w->c, ptr, exp, &n, w->err);
	if (v.read_err && w->c->opts.verify &&
	    btree_node_read_salvage(w->c, ptr, exp, &salvaged))
		salvaged = NULL;
	v.salvaged = salvaged;
	if (!v.read_err && n->level) {
		struct bpos_h min = n->min_key;

		for (i = 0; i < n->nr_keys; i++) {
			struct btree_node_expect cexp = {
				.btree_id = w->btree_id, .level = n->level - 1,
				.min_key = min, .max_key = n->keys[i].k.p,
				.check_min = true,
			};

			ret = walk_node(w, &n->keys[i], &cexp);
			if (ret) {
				bch_btree_node_put(w->c, n);
				btree_node_free(salvaged);
				return ret;
			}
			if (!pos_successor(w->btree_id, n->keys[i].k.p, &min))
				break;
		}
	}
	v.n = n;
	ret = w->fn(w->arg, &v);
	bch_btree_node_put(w->c, n);
	btree_node_free(salvaged);
	return ret;
}

int bch_btree_walk_nodes(struct bch_fs *c, unsigned btree_id,
			 int (*fn)(void *arg, const struct btree_node_visit *v),
			 void *arg, struct printbuf *err)
{
	const struct btree_root_h *root;
	struct btree_node_expect exp;
	struct walk w = { .c = c, .btree_id = btree_id, .fn = fn, .arg = arg, .err = err };

	if (btree_id >= BCH_NR_BTREES)
		return -EINVAL;
	root = &c->roots[btree_id];
	if (!root->present)
		return 0;
	if (root->level >= BTREE_ITER_MAX_DEPTH) {
		if (err)
			pr_buf(err, "btree %u: root level %u is too deep: btree not read\n",
			       btree_id, root->level);
		c->nr_errors++;
		return -BCH_ERR_btree_node_invalid;
	}
	w.root_level = root->level;
	exp = (struct btree_node_expect) {
		.btree_id = btree_id, .level = root->level,
		.min_key = POS_H_MIN, .max_key = root->key.k.p, .check_min = true,
	};
	return walk_node(&w, &root->key, &exp);
}

/* ---- the mount's check of the interior nodes ---- */

static int verify_interior(struct bch_fs *c, const struct bkey_ref *ptr,
			   const struct btree_node_expect *exp)
{
	struct btree_node_h *n;
	struct bpos_h min;
	int ret = bch_btree_node_get(c, ptr, exp, &n, NULL), r;

	if (ret || n->level < 2)
		goto out;
	min = n->min_key;
	for (size_t i = 0; i < n->nr_keys; i++) {
		struct btree_node_expect cexp = {
			.btree_id = exp->btree_id, .level = n->level - 1,
			.min_key = min, .max_key = n->keys[i].k.p, .check_min = true,
		};

		/* every bad node is said, the first error returned */
		r = verify_interior(c, &n->keys[i], &cexp);
		ret = ret ?: r;
		if (!pos_successor(exp->btree_id, n->keys[i].k.p, &min))
			break;
	}
out:
	bch_btree_node_put(c, n);	/* (NULL when the read failed) */
	return ret;
}

int bch_btree_verify_interior(struct bch_fs *c)
{
	int ret = 0;

	for (unsigned id = 0; id < BCH_NR_BTREES; id++) {
		const struct btree_root_h *root = &c->roots[id];
		struct btree_node_expect exp;
		int r;

		if (!root->present)
			continue;
		if (root->level >= BTREE_ITER_MAX_DEPTH) {
			char why[64];

			snprintf(why, sizeof(why), "its root's level %u is too deep", root->level);
			r = bch_fs_node_bad(c, id, root->level, POS_H_MIN, POS_H_MAX, why);
		} else {
			exp = (struct btree_node_expect) {
				.btree_id = id, .level = root->level,
				.min_key = POS_H_MIN, .max_key = root->key.k.p, .check_min = true,
			};
			r = verify_interior(c, &root->key, &exp);
		}
		ret = ret ?: r;
	}
	return ret;
}

/* ---- bucket gens from the alloc btree ---- */

int bch_btree_read_bucket_gens(struct bch_fs *c, struct printbuf *err)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	unsigned i;
	int ret;

	for (i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *d = c->devs[i];

		/*
		 * a missing member's bucket count is the superblock's word
		 * alone (a present one's is checked against the device's
		 * size): too many to hold leaves its gens unknown, as no
		 * array at all does, instead of ending the program
		 */
		if (d && !d->bucket_gens && d->nbuckets && d->nbuckets <= SIZE_MAX)
			d->bucket_gens = bch_big_zalloc_try(d->nbuckets);
	}

	bch_btree_iter_init(&iter, c, BTREE_ID_ALLOC, POS_H_MIN, err);
	/* a leaf with no good copy: its buckets' gens stay unknown (0) */
	iter.skip_bad = true;
	while (!(ret = bch_btree_iter_next(&iter, &k)) && k) {
		struct bch_member_dev *d = k->k.p.inode < BCH_FS_MAX_DEVS
			? c->devs[k->k.p.inode] : NULL;
		struct bch_alloc_h a;

		if (!d || !d->bucket_gens || k->k.p.offset >= d->nbuckets ||
		    bch_alloc_decode(k, &a))
			continue;	/* alloc key validation is fsck's job */
		d->bucket_gens[k->k.p.offset] = a.gen;
	}
	bch_btree_iter_exit(&iter);
	return ret;
}
