// SPDX-License-Identifier: GPL-2.0
/*
 * Bulk btree building: see bulk.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "btree/bulk.h"
#include "btree/reserve.h"
#include "core/bch_fs.h"
#include "btree/node_write.h"
#include "util/util.h"

void bulk_keys_add(struct bulk_keys *l, const struct bkey_h *k, const void *v, unsigned v_bytes)
{
	struct bkey_ref *r;
	void *copy = NULL;

	if (l->nr == l->size) {
		l->size = l->size ? 2 * l->size : 256;
		l->k = xrealloc(l->k, l->size * sizeof(*l->k));
	}
	if (v_bytes) {
		copy = xmalloc(v_bytes);
		memcpy(copy, v, v_bytes);
	}
	r = &l->k[l->nr++];
	r->k = *k;
	r->k.u64s = (uint8_t)(BKEY_U64S_UNPACKED + v_bytes / 8);
	r->v = copy;
	r->v_bytes = v_bytes;
}

void bulk_keys_exit(struct bulk_keys *l)
{
	for (size_t i = 0; i < l->nr; i++)
		free((void *)l->k[i].v);
	free(l->k);
	memset(l, 0, sizeof(*l));
}

static int key_cmp(const void *a, const void *b)
{
	return bpos_cmp(((const struct bkey_ref *)a)->k.p, ((const struct bkey_ref *)b)->k.p);
}

void bulk_keys_sort(struct bulk_keys *l)
{
	if (l->nr)
		qsort(l->k, l->nr, sizeof(*l->k), key_cmp);
}

static uint64_t ptrs_devs(const struct btree_ptr_h *p, unsigned nr)
{
	uint64_t m = 0;

	for (unsigned i = 0; i < nr; i++)
		m |= 1ULL << p[i].dev;
	return m;
}

/* What a reader holds per key of a node (the node's key list). */
#define KEY_MEM	sizeof(struct bkey_ref)

static size_t node_budget(const struct btree_write_ctx *w, unsigned fill);
static size_t node_room(const struct btree_write_ctx *w);
static size_t node_mem(const struct btree_write_ctx *w);

/*
 * The bytes @k takes in a node of format @f: packed (the format was chosen
 * over it), a whiteout unpacked (the format is not chosen over whiteouts:
 * it may not pack).
 */
static size_t key_bytes(const struct bkey_format_h *f, const struct bkey_h *k)
{
	if (bkey_is_whiteout(k) || k->u64s < BKEY_U64S_UNPACKED)
		return (size_t)k->u64s * 8;
	return (size_t)(f->key_u64s + k->u64s - BKEY_U64S_UNPACKED) * 8;
}

/*
 * How many of @keys, from the first, go into a node starting at @min
 * within @budget bytes as they will be written: packed with the format
 * bch_btree_node_build() will choose for exactly those keys (and @min),
 * grown key by key, and within @mem bytes of key list (KEY_MEM a key:
 * what a reader holds of the node besides its bytes; fsck's memory
 * follows it). At least one when there is one. @as_unpacked: counted
 * unpacked instead (a build into nodes reserved by bch_bulk_nodes_for(),
 * which counts so, must use every one of them: bch_bulk_build_pool()).
 */
static size_t node_take(struct bpos_h min, const struct bkey_ref *keys, size_t nr,
			size_t budget, size_t mem, bool as_unpacked)
{
	struct bkey_format_state st, next;
	struct bkey_format_h f;
	size_t j, packed = 0, vals = 0, unpacked = 0, in_mem = 0;

	if (as_unpacked) {
		for (j = 0; j < nr && (!j || unpacked + (size_t)keys[j].k.u64s * 8 <= budget); j++)
			unpacked += (size_t)keys[j].k.u64s * 8;
		return j;
	}
	bkey_format_state_init(&st);
	bkey_format_state_add_pos(&st, min);
	for (j = 0; j < nr; j++) {
		const struct bkey_h *k = &keys[j].k;
		bool packs = !bkey_is_whiteout(k) && k->u64s >= BKEY_U64S_UNPACKED;
		size_t bytes;

		next = st;
		if (packs)
			bkey_format_state_add_key(&next, k);
		bkey_format_state_done(&next, &f);
		/* the packed keys so far and this one, at the grown format's width */
		bytes = (packed + packs) * f.key_u64s * 8 + vals + unpacked +
			(packs ? (size_t)(k->u64s - BKEY_U64S_UNPACKED) * 8 : (size_t)k->u64s * 8);
		if (j && (bytes > budget || in_mem + KEY_MEM > mem))
			break;
		in_mem += KEY_MEM;
		st = next;
		if (packs) {
			packed++;
			vals += (size_t)(k->u64s - BKEY_U64S_UNPACKED) * 8;
		} else {
			unpacked += (size_t)k->u64s * 8;
		}
	}
	return j;
}

/*
 * One level over [@min, @max]: cut @keys into nodes, write them, append
 * their pointer keys to @parent. No keys: one empty node for the range.
 */
static int build_level(struct bch_fs *c, const struct btree_write_ctx *w,
		       struct bch_allocator *a, unsigned btree_id, unsigned level,
		       struct bpos_h min, struct bpos_h max,
		       const struct bkey_ref *keys, size_t nr, size_t budget,
		       struct bulk_pool *pool, struct bulk_keys *parent,
		       struct bulk_root *root, struct printbuf *err)
{
	/*
	 * Every node carries the newest journal seq when it was written: the
	 * leaves as their bset's journal_seq (it holds no update newer than
	 * that entry, which is durable: doc/format.md §4.9), every node as
	 * BTREE_NODE_SEQ. A replacement of a node is written at a later
	 * checkpoint, after at least one more journal entry, so it carries a
	 * higher seq than what it replaces: the node scan (node_scan.h)
	 * tells the newest copy of a key range by it. A new filesystem
	 * (nothing journalled yet) writes 0.
	 */
	uint64_t stamp = c ? c->journal.seq : 0;
	size_t i = 0, mem = node_mem(w);
	struct bulk_size rem = { 0 };
	struct bkey_format_h fall;
	int ret;

	if (!pool) {
		bch_bulk_measure(min, keys, nr, &rem);
		bch_bkey_format_choose(min, keys, nr, &fall);
	}
	do {
		struct btree_ptr_h ptrs[BCH_REPLICAS_MAX];
		struct btree_node_buf nb = { 0 };
		struct bkey_ref pk;
		uint64_t pv[BKEY_BTREE_PTR_VAL_U64s_MAX];
		size_t j, b = budget, m = mem;
		unsigned nr_ptrs;
		bool last;

		/*
		 * Nodes filled to the budget from the left, the last two even
		 * when the last would hold less than a third: keys added at
		 * the end (new inodes, a file growing) leave full nodes behind
		 * them, and a node that grew by a few keys becomes two of half
		 * its size rather than a full one and one of the few (a run of
		 * those would bloat the tree, every node taking a bucket, until
		 * a nearly full filesystem has no room for it). Sizes to come
		 * (rem) are counted packed with the format of all the keys (no
		 * node packs them wider), and by a reader's key list (mem).
		 */
		if (!pool && (rem.packed > budget || rem.mem > mem) &&
		    3 * rem.packed < 4 * budget && 3 * rem.mem < 4 * mem) {
			b = min_t(size_t, budget, rem.packed / 2 + rem.big_packed);
			m = min_t(size_t, mem, rem.mem / 2 + KEY_MEM);
		}
		j = i + node_take(min, keys + i, nr - i, b, m, pool != NULL);
		for (size_t k = i; !pool && k < j; k++) {
			rem.packed -= min_t(size_t, rem.packed, key_bytes(&fall, &keys[k].k));
			rem.mem -= min_t(size_t, rem.mem, KEY_MEM);
		}
		last = j == nr;

		struct btree_node_new n = {
			.btree_id	= btree_id,
			.level		= level,
			.min_key	= min,
			.max_key	= last ? max : keys[j - 1].k.p,
			.node_seq	= (uint32_t)stamp,
		};

		if (pool) {
			if (pool->used == pool->nr) {
				pr_buf(err, "btree %u: more nodes needed than reserved (%zu)\n",
				       btree_id, pool->nr);
				return -ENOSPC;
			}
			nr_ptrs = pool->nr_ptrs[pool->used];
			memcpy(ptrs, pool->ptrs[pool->used], sizeof(ptrs));
			pool->used++;
		} else {
			ret = bch_alloc_btree_node(a, ptrs, &nr_ptrs, err);
			if (ret)
				return ret;
			bch_rw_node_taken(c, a, ptrs, nr_ptrs);
		}
		n.ptr = ptrs[0];
		bch_replicas_add(&a->replicas, BCH_DATA_BTREE, ptrs_devs(ptrs, nr_ptrs));
		ret = bch_btree_node_build(w, &n, level ? 0 : stamp, keys + i, j - i, &nb, err);
		if (!ret)
			ret = bch_btree_node_write(c, &nb, 0, ptrs, nr_ptrs, err);
		bch_btree_node_buf_exit(&nb);
		if (ret) {
			pr_buf(err, "building a node of btree %u (level %u)\n", btree_id, level);
			return ret;
		}
		root->nr_nodes++;

		bch_btree_ptr_key(&pk, pv, n.max_key, ptrs, nr_ptrs);
		bulk_keys_add(parent, &pk.k, pk.v, pk.v_bytes);
		if (i == 0 && last)
			root->devs = ptrs_devs(ptrs, nr_ptrs);
		if (!last)
			min = bpos_successor(btree_id, n.max_key);
		i = j;
	} while (i < nr);
	return 0;
}

void bch_bulk_measure(struct bpos_h min, const struct bkey_ref *keys, size_t nr,
		      struct bulk_size *sz)
{
	struct bkey_format_h f;

	memset(sz, 0, sizeof(*sz));
	bch_bkey_format_choose(min, keys, nr, &f);
	for (size_t i = 0; i < nr; i++) {
		size_t p = key_bytes(&f, &keys[i].k);

		sz->packed += p;
		sz->mem += KEY_MEM;
		sz->big_packed = max_t(size_t, sz->big_packed, p);
	}
}

size_t bch_bulk_leaves(const struct btree_write_ctx *w, const struct bulk_size *sz)
{
	size_t budget = node_budget(w, 0), mem = node_mem(w);

	if (!budget || !mem)
		return 1;
	return max_t(size_t, 1, max_t(size_t, DIV_ROUND_UP(sz->packed, budget),
				      DIV_ROUND_UP(sz->mem, mem)));
}

bool bch_bulk_fits(const struct btree_write_ctx *w, const struct bulk_size *sz,
		   size_t nodes, size_t spare_div)
{
	size_t budget = node_budget(w, 0), mem = node_mem(w);
	size_t sp = spare_div ? budget / spare_div : sz->big_packed;
	size_t su = spare_div ? mem / spare_div : KEY_MEM;

	return sz->packed + sp <= nodes * budget && sz->mem + su <= nodes * mem;
}

int bch_bulk_build_range(struct bch_fs *c, const struct btree_write_ctx *w,
			 struct bch_allocator *a, unsigned btree_id, unsigned level,
			 struct bpos_h min, struct bpos_h max,
			 const struct bkey_ref *keys, size_t nr, unsigned fill,
			 struct bulk_keys *ptrs, struct printbuf *err)
{
	struct bulk_root stats = { 0 };

	return build_level(c, w, a, btree_id, level, min, max, keys, nr,
			   node_budget(w, fill), NULL, ptrs, &stats, err);
}

/* A node's bytes less room for its header and block padding. */
static size_t node_room(const struct btree_write_ctx *w)
{
	size_t node_bytes = (size_t)w->node_sectors * 512;

	return node_bytes > 1024 ? node_bytes - 1024 : node_bytes / 2;
}

/*
 * The bytes of a node's key list (KEY_MEM a key) a reader holds besides
 * the node's own bytes: no more than the node itself. fsck's peak RSS
 * follows it: nodes of small keys (extents) filled by their packed size
 * alone took it over e2fsck's on 100,000 files (bench/30-fsck-100k.sh).
 */
static size_t node_mem(const struct btree_write_ctx *w)
{
	return node_room(w);
}

/* Bytes of keys per node, as written (packed). */
static size_t node_budget(const struct btree_write_ctx *w, unsigned fill)
{
	size_t budget = (size_t)w->node_sectors * 512 * (fill ? fill : 90) / 100;

	return min_t(size_t, budget, node_room(w));
}

size_t bch_bulk_nodes_for(const struct btree_write_ctx *w, unsigned fill, size_t nr,
			  unsigned key_u64s, unsigned ptr_u64s)
{
	size_t budget = node_budget(w, fill), per, total = 0, n;

	if (!nr)
		return 0;
	per = budget / (key_u64s * 8) ?: 1;
	n = (nr + per - 1) / per;
	total = n;
	per = budget / (ptr_u64s * 8) ?: 1;
	while (n > 1) {
		n = (n + per - 1) / per;
		total += n;
	}
	return total;
}

int bch_bulk_build(struct bch_fs *c, const struct btree_write_ctx *w,
		   struct bch_allocator *a, unsigned btree_id,
		   const struct bkey_ref *keys, size_t nr, unsigned fill,
		   struct bulk_root *root, struct printbuf *err)
{
	return bch_bulk_build_pool(c, w, a, btree_id, keys, nr, fill, NULL, root, err);
}

int bch_bulk_build_pool(struct bch_fs *c, const struct btree_write_ctx *w,
			struct bch_allocator *a, unsigned btree_id,
			const struct bkey_ref *keys, size_t nr, unsigned fill,
			struct bulk_pool *pool, struct bulk_root *root,
			struct printbuf *err)
{
	size_t budget = node_budget(w, fill);
	struct bulk_keys cur = { 0 }, next = { 0 };
	unsigned level = 0;
	int ret = 0;

	memset(root, 0, sizeof(*root));
	root->btree_id = btree_id;
	if (!nr)
		return 0;
	for (size_t i = 1; i < nr; i++)
		if (bpos_cmp(keys[i - 1].k.p, keys[i].k.p) >= 0) {
			pr_buf(err, "btree %u: keys not sorted or duplicated\n", btree_id);
			return -EINVAL;
		}

	ret = build_level(c, w, a, btree_id, 0, POS_H_MIN, POS_H_MAX, keys, nr, budget,
			  pool, &next, root, err);
	while (!ret && next.nr > 1) {
		bulk_keys_exit(&cur);
		cur = next;
		memset(&next, 0, sizeof(next));
		level++;
		ret = build_level(c, w, a, btree_id, level, POS_H_MIN, POS_H_MAX,
				  cur.k, cur.nr, budget, pool, &next, root, err);
	}
	if (!ret) {
		/* the one pointer left is the root's, at POS_MAX already */
		root->present = true;
		root->level = level;
		root->key = next.k[0];
		memcpy(root->key_val, next.k[0].v, next.k[0].v_bytes);
		root->key.v = root->key_val;
	}
	bulk_keys_exit(&cur);
	bulk_keys_exit(&next);
	return ret;
}
