// SPDX-License-Identifier: GPL-2.0
/*
 * Space reservations of the update engine: see reserve.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/space.h"
#include "bkey/overlay.h"
#include "btree/btree.h"
#include "btree/engine.h"
#include "btree/reserve.h"
#include "core/bch_fs.h"
#include "util/errcode.h"
#include "util/util.h"

/* An alloc key as the rebuild writes it: header unpacked, one u64 of value. */
#define ALLOC_KEY_BYTES		((BKEY_U64S_UNPACKED + 1) * 8)

/*
 * The alloc btree is rebuilt whole at every checkpoint: at most a key per
 * bucket, nodes filled to 3/4, and its pool's rounding.
 */
static uint64_t alloc_nodes(struct bch_fs *c, uint64_t nb)
{
	const struct bch_allocator *a = &c->rw->a;
	uint64_t buckets = 0;

	for (unsigned i = 0; i < BCH_ALLOC_MAX_DEVS; i++)
		if (a->devs[i])
			buckets += a->devs[i]->nbuckets;
	return DIV_ROUND_UP(buckets * ALLOC_KEY_BYTES * 4, 3 * nb) + 2;
}

/* ---- the leaves a checkpoint rewrites ------------------------------------------ */

static size_t touched_hash(unsigned id, struct bpos_h p, size_t size)
{
	uint64_t h = (p.inode * 0x9e3779b97f4a7c15ULL) ^ (p.offset * 0xc2b2ae3d27d4eb4fULL) ^
		     ((uint64_t)p.snapshot << 8) ^ id;

	h ^= h >> 29;
	return (size_t)(h & (size - 1));
}

static bool touched_has(const struct bch_fs_rw *rw, unsigned id, struct bpos_h max)
{
	if (!rw->touched_size)
		return false;
	for (size_t i = touched_hash(id, max, rw->touched_size);; i = (i + 1) & (rw->touched_size - 1)) {
		const struct touched_leaf *l = &rw->touched[i];

		if (!l->used)
			return false;
		if (l->btree_id == id && bpos_eq(l->max, max))
			return true;
	}
}

static void touched_insert(struct touched_leaf *tab, size_t size, unsigned id, struct bpos_h max)
{
	size_t i = touched_hash(id, max, size);

	while (tab[i].used)
		i = (i + 1) & (size - 1);
	tab[i] = (struct touched_leaf) { .used = true, .btree_id = (uint8_t)id, .max = max };
}

static void touched_add(struct bch_fs_rw *rw, unsigned id, struct bpos_h max)
{
	uint64_t nr = 0;

	if (touched_has(rw, id, max))
		return;
	for (unsigned i = 0; i < BCH_NR_BTREES; i++)
		nr += rw->nr_touched[i];
	/* at most half full */
	if (2 * (nr + 1) > rw->touched_size) {
		size_t size = rw->touched_size ? 2 * rw->touched_size : 256;
		struct touched_leaf *tab = xcalloc(size, sizeof(*tab));

		for (size_t i = 0; i < rw->touched_size; i++)
			if (rw->touched[i].used)
				touched_insert(tab, size, rw->touched[i].btree_id, rw->touched[i].max);
		free(rw->touched);
		rw->touched = tab;
		rw->touched_size = size;
	}
	touched_insert(rw->touched, rw->touched_size, id, max);
	rw->nr_touched[id]++;
}

/* Forget every leaf: the overlay is empty (a checkpoint made it the tree). */
void bch_rw_touched_reset(struct bch_fs *c)
{
	struct bch_fs_rw *rw = c->rw;

	if (rw->touched_size)
		memset(rw->touched, 0, rw->touched_size * sizeof(*rw->touched));
	memset(rw->nr_touched, 0, sizeof(rw->nr_touched));
	rw->touched_exact = true;
	rw->ov_changes = c->overlay.changes;
}

/* Is the set the overlay's (nothing changed it outside a commit)? */
static bool touched_exact(struct bch_fs *c)
{
	struct bch_fs_rw *rw = c->rw;

	if (!rw->touched_exact && !c->overlay.nr_keys)
		bch_rw_touched_reset(c);
	return rw->touched_exact && rw->ov_changes == c->overlay.changes;
}

/*
 * The leaves (max keys) update @u lands in, into @out[0..2): the one
 * holding its position; for an extent also the one holding its start. An
 * extent spanning more leaves covers the ones in between whole: their
 * keys are gone after the checkpoint, which rebuilds the run of changed
 * leaves together, so only the two at the ends keep keys of theirs (what
 * the extent brings is in the overlay's bytes). Returns how many, or -1
 * when the tree could not be read.
 */
static int update_leaves(struct bch_fs *c, const struct trans_update *u, struct bpos_h *out)
{
	if (bch_btree_leaf_max(c, u->btree_id, u->k.k.p, &out[0]))
		return -1;
	if (u->btree_id != BTREE_ID_EXTENTS || !u->k.k.size)
		return 1;
	if (bch_btree_leaf_max(c, u->btree_id, bkey_start_pos(&u->k.k), &out[1]))
		return -1;
	return bpos_eq(out[0], out[1]) ? 1 : 2;
}

/*
 * Leaves @t would touch that the overlay does not yet, per btree, in
 * @extra (with @add: and remember them). False when one could not be
 * counted: the caller falls back to the bound without the set.
 */
static bool trans_leaves(struct bch_fs *c, const struct btree_trans *t, uint64_t *extra, bool add)
{
	struct bch_fs_rw *rw = c->rw;
	struct bpos_h leaves[2];
	struct bpos_h *seen = NULL;
	uint8_t *seen_id = NULL;
	size_t nr_seen = 0;
	bool ok = true;

	for (size_t i = 0; i < t->nr && ok; i++) {
		const struct trans_update *u = &t->u[i];
		int n;

		if (u->btree_id == BTREE_ID_ALLOC || u->btree_id >= BCH_NR_BTREES)
			continue;
		n = update_leaves(c, u, leaves);
		if (n < 0) {
			ok = false;
			break;
		}
		for (int j = 0; j < n; j++) {
			bool dup = false;

			if (add) {
				touched_add(rw, u->btree_id, leaves[j]);
				continue;
			}
			if (touched_has(rw, u->btree_id, leaves[j]))
				continue;
			/* a transaction has few keys: a linear look at its own */
			for (size_t s = 0; s < nr_seen && !dup; s++)
				dup = seen_id[s] == u->btree_id && bpos_eq(seen[s], leaves[j]);
			if (dup)
				continue;
			seen = xrealloc(seen, (nr_seen + 1) * sizeof(*seen));
			seen_id = xrealloc(seen_id, nr_seen + 1);
			seen[nr_seen] = leaves[j];
			seen_id[nr_seen++] = (uint8_t)u->btree_id;
			extra[u->btree_id]++;
		}
	}
	free(seen);
	free(seen_id);
	return ok;
}

void bch_rw_touched_commit(struct bch_fs *c, const struct btree_trans *t, size_t inserted)
{
	struct bch_fs_rw *rw = c->rw;

	/*
	 * The overlay counted the keys just inserted: the set is still the
	 * overlay's when nothing else changed it since (compare after adding
	 * them, else no commit ever adds its leaves and an empty set passes
	 * for exact)
	 */
	rw->ov_changes += inserted;
	if (!touched_exact(c)) {
		rw->touched_exact = false;
		return;
	}
	if (!trans_leaves(c, t, NULL, true))
		rw->touched_exact = false;
}

/*
 * A checkpoint rewrites every leaf holding an overlay key: T leaves per
 * btree (counted exactly through the set above, else bounded by min(keys,
 * nodes)), each (at most a full node of keys, cut evenly at 3/4) into at
 * most 2 nodes; the overlay's own bytes into more leaves at 3/4 each; at
 * each interior level at most T nodes rewritten the same way (never more
 * than the tree has); and a root split adds up to 2 levels. Overlay bytes
 * count the memory of its keys, more than their size on disk.
 */
uint64_t bch_rw_ckpt_need(struct bch_fs *c, const struct btree_trans *t)
{
	struct bch_fs_rw *rw = c->rw;
	uint64_t nb = (uint64_t)c->btree_node_size * 512;
	uint64_t nodes = rw->nr_nodes ? rw->nr_nodes : 1;
	uint64_t keys[BCH_NR_BTREES] = { 0 }, extra[BCH_NR_BTREES] = { 0 };
	uint64_t bytes = c->overlay.bytes, need = 0;
	bool exact = touched_exact(c);

	if (!nb)
		nb = 512;
	for (unsigned id = 0; id < BCH_NR_BTREES; id++)
		keys[id] = bch_overlay_nr(&c->overlay, id);
	for (size_t i = 0; t && i < t->nr; i++) {
		if (t->u[i].btree_id < BCH_NR_BTREES)
			keys[t->u[i].btree_id]++;
		bytes += sizeof(struct ov_key) + t->u[i].k.v_bytes;
	}
	if (exact && t && !trans_leaves(c, t, extra, false))
		exact = false;
	for (unsigned id = 0; id < BCH_NR_BTREES; id++) {
		/* (without the set: an extent may touch the leaves at both its ends) */
		uint64_t touched = min_t(uint64_t, keys[id] * (id == BTREE_ID_EXTENTS ? 2 : 1), nodes);
		unsigned level = c->roots[id].present ? c->roots[id].level : 0;

		if (id == BTREE_ID_ALLOC || !keys[id])
			continue;
		if (exact)
			touched = min_t(uint64_t, touched, rw->nr_touched[id] + extra[id]);
		need += 2 * touched + 2 * min_t(uint64_t, touched * level, nodes) + 2;
	}
	need += DIV_ROUND_UP(4 * bytes, 3 * nb);
	return need + alloc_nodes(c, nb);
}

/*
 * Ops that free space, and every writer but the mount and the in-process
 * online commands (fsck's repairs and the like: they commit one by one
 * and must finish), take the recovery reserve.
 */
static bool reserve_mode(const struct bch_fs_rw *rw)
{
	return rw->use_reserve || !rw->batch;
}

/*
 * What data leaves free on every device, at least (statfs shows it as
 * reserved): the nodes of a checkpoint of a small overlay (the alloc
 * btree, a leaf and its parents in each of the btrees a create or an
 * unlink touches), the recovery reserve and the metadata headroom. A
 * bigger overlay is checkpointed first (bch_rw_data_bucket_fits()).
 */
void bch_rw_reserve_init(struct bch_fs *c)
{
	uint64_t nb = (uint64_t)c->btree_node_size * 512;

	c->rw->a.reserve_min = alloc_nodes(c, nb ? nb : 512) + 4 * 6 +
		BCH_RESERVE_RECOVER + BCH_RESERVE_METADATA;
}

/* Buckets of a device of @bucket_size sectors that the promised sectors hold. */
static uint64_t promised_buckets(const struct bch_fs_rw *rw, unsigned bucket_size)
{
	uint64_t p = rw->a.reserved_sectors;

	p = p > rw->write_credit ? p - rw->write_credit : 0;
	return bucket_size ? DIV_ROUND_UP(p, bucket_size) : 0;
}

struct cap_dev {
	uint64_t	free;
	unsigned	durability;
};

uint64_t bch_rw_node_cap(struct bch_fs *c, uint64_t want, int take_dev)
{
	const struct bch_allocator *a = &c->rw->a;
	struct cap_dev dev[BCH_ALLOC_MAX_DEVS];
	unsigned nr = 0, need = a->meta_replicas ? a->meta_replicas : 1;
	unsigned req = a->meta_replicas_req ? a->meta_replicas_req : 1;
	uint64_t min_free = UINT64_MAX, n;

	for (unsigned i = 0; i < BCH_ALLOC_MAX_DEVS; i++) {
		const struct bch_dev_alloc *d = a->devs[i];
		uint64_t f, p;

		/* the devices bch_alloc_btree_node() takes */
		if (!d || !d->present || d->state != BCH_MEMBER_STATE_RW || !d->durability ||
		    !(d->data_allowed & (1U << BCH_DATA_BTREE)) ||
		    d->bucket_size < a->btree_node_size)
			continue;
		f = d->nr_free;
		if ((int)i == take_dev && f)
			f--;
		/* what fallocate promised is not for btree nodes (any device may hold it) */
		p = promised_buckets(c->rw, d->bucket_size);
		f = f > p ? f - p : 0;
		dev[nr].free = f;
		dev[nr].durability = d->durability;
		min_free = min_t(uint64_t, min_free, f);
		nr++;
	}
	if (!nr)
		return 0;
	/* each node takes at most one bucket per device */
	if (min_free >= want)
		return want;
	for (n = 0; n < want; n++) {
		unsigned dur = 0, taken = 0;
		bool used[BCH_ALLOC_MAX_DEVS] = { false };

		/* as the allocator does: most free first, until the durability wanted */
		while (dur < need && taken < nr) {
			unsigned best = nr;

			for (unsigned i = 0; i < nr; i++)
				if (!used[i] && dev[i].free &&
				    (best == nr || dev[i].free > dev[best].free))
					best = i;
			if (best == nr)
				break;
			used[best] = true;
			dev[best].free--;
			dur += dev[best].durability;
			taken++;
		}
		if (!taken || dur < req)
			break;
	}
	return n;
}

/* The largest bucket of a device taking user data (the promises' margin). */
static uint64_t data_bucket_max(const struct bch_allocator *a)
{
	uint64_t m = 0;

	for (unsigned i = 0; i < BCH_ALLOC_MAX_DEVS; i++) {
		const struct bch_dev_alloc *d = a->devs[i];

		if (d && d->present && d->state == BCH_MEMBER_STATE_RW &&
		    (d->data_allowed & (1U << BCH_DATA_USER)) && d->bucket_size > m)
			m = d->bucket_size;
	}
	return m;
}

/*
 * Reservation keys of @t: the sectors they promise must be free now,
 * beside the btree reserve and what was promised before, with a bucket
 * to spare (a write point's partial bucket).
 */
static int promise_fits(struct bch_fs *c, const struct btree_trans *t, struct printbuf *err)
{
	struct bch_allocator *a = &c->rw->a;
	struct bch_space s;
	uint64_t want = 0, room;

	for (size_t i = 0; i < t->nr; i++)
		if (t->u[i].btree_id == BTREE_ID_EXTENTS)
			want += bch_rw_reservation_sectors(&t->u[i].k, t->u[i].k.k.size);
	if (!want)
		return 0;
	bch_space_totals(a, &s);
	room = s.free - s.reserve_btree - s.reserve_nodata;
	room = room > a->reserved_sectors ? room - a->reserved_sectors : 0;
	room = room > data_bucket_max(a) ? room - data_bucket_max(a) : 0;
	if (want > room) {
		pr_buf(err, "cannot reserve %" PRIu64 " sectors: %" PRIu64 " can be promised\n",
		       want, room);
		return -BCH_ERR_nospc;
	}
	return 0;
}

int bch_rw_trans_fits(struct bch_fs *c, const struct btree_trans *t, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	uint64_t need, cap;
	int ret;

	if (t->raw)
		return 0;
	ret = promise_fits(c, t, err);
	if (ret)
		return ret;
	/*
	 * After a checkpoint found no space the overlay cannot shrink yet:
	 * what frees space still commits (the journal permitting)
	 */
	if (rw->ckpt_nospc && reserve_mode(rw))
		return 0;
	need = bch_rw_ckpt_need(c, t) + (reserve_mode(rw) ? 0 : BCH_RESERVE_RECOVER);
	cap = bch_rw_node_cap(c, need, -1);
	if (cap < need || rw->ckpt_nospc) {
		pr_buf(err, "no space for btree nodes: %" PRIu64 " needed, %" PRIu64 " free%s\n",
		       need, cap, rw->ckpt_nospc ? " (the last checkpoint found no space)" : "");
		return -BCH_ERR_nospc;
	}
	return 0;
}

bool bch_rw_data_bucket_fits(struct bch_fs *c, unsigned dev)
{
	struct bch_fs_rw *rw = c->rw;
	const struct bch_dev_alloc *d = dev < BCH_ALLOC_MAX_DEVS ? rw->a.devs[dev] : NULL;
	uint64_t promised, after, need;

	if (!d || !d->nr_free)
		return false;
	/* the last checkpoint found no space: only what frees space goes on */
	if (rw->ckpt_nospc && !reserve_mode(rw))
		return false;
	promised = promised_buckets(rw, d->bucket_size);
	after = d->nr_free - 1;
	if (reserve_mode(rw)) {
		/* a symlink's block: below the static reserve, never below the promises */
		if (after < promised)
			return false;
	} else if (after + (rw->write_credit ? 1 : 0) < bch_alloc_dev_reserve(&rw->a, dev) + promised) {
		/* a write into reserved sectors may use the bucket of slack fallocate left */
		return false;
	}
	/* ordinary metadata keeps room to grow beside data (mkdir on a full filesystem) */
	need = bch_rw_ckpt_need(c, NULL) + BCH_RESERVE_RECOVER +
	       (reserve_mode(rw) ? 0 : BCH_RESERVE_METADATA);
	return bch_rw_node_cap(c, need, (int)dev) >= need;
}

bool bch_rw_move_bucket_fits(struct bch_fs *c, unsigned dev, uint64_t keep)
{
	struct bch_fs_rw *rw = c->rw;
	const struct bch_dev_alloc *d = dev < BCH_ALLOC_MAX_DEVS ? rw->a.devs[dev] : NULL;
	uint64_t need;

	if (!d || d->nr_free <= keep || d->nr_free - 1 < promised_buckets(rw, d->bucket_size))
		return false;
	/* the last nodes stay for what frees space (a move's own commit needs no more) */
	need = bch_rw_ckpt_need(c, NULL) + BCH_RESERVE_RECOVER;
	return bch_rw_node_cap(c, need, (int)dev) >= need;
}

bool bch_rw_ckpt_due(struct bch_fs *c)
{
	uint64_t need = bch_rw_ckpt_need(c, NULL);

	return bch_rw_node_cap(c, 2 * need, -1) < 2 * need;
}

/* ---- the checkpoint's new nodes ---------------------------------------------- */

void bch_rw_ckpt_track_begin(struct bch_fs *c)
{
	c->rw->ck_tracking = true;
	c->rw->nr_ck_new = 0;
}

void bch_rw_ckpt_track_end(struct bch_fs *c)
{
	c->rw->ck_tracking = false;
	c->rw->nr_ck_new = 0;
}

void bch_rw_node_taken(struct bch_fs *c, const struct bch_allocator *a,
		       const struct btree_ptr_h *ptrs, unsigned nr)
{
	struct bch_fs_rw *rw = c->rw;

	if (!rw || !rw->ck_tracking || a != &rw->a)
		return;
	for (unsigned i = 0; i < nr; i++) {
		const struct bch_dev_alloc *d = ptrs[i].dev < BCH_ALLOC_MAX_DEVS
			? rw->a.devs[ptrs[i].dev] : NULL;

		if (!d || !d->bucket_size)
			continue;
		if (rw->nr_ck_new == rw->size_ck_new) {
			rw->size_ck_new = rw->size_ck_new ? 2 * rw->size_ck_new : 64;
			rw->ck_new = xrealloc(rw->ck_new, rw->size_ck_new * sizeof(*rw->ck_new));
		}
		rw->ck_new[rw->nr_ck_new++] = (struct freed_bucket) {
			.dev = ptrs[i].dev, .bucket = ptrs[i].offset / d->bucket_size,
		};
	}
}

void bch_rw_ckpt_undo(struct bch_fs *c)
{
	struct bch_fs_rw *rw = c->rw;

	for (size_t i = 0; i < rw->nr_ck_new; i++) {
		const struct freed_bucket *f = &rw->ck_new[i];
		const struct bch_dev_alloc *d = rw->a.devs[f->dev];

		if (!d)
			continue;
		/* written, but never reachable: no entry made it the tree */
		bch_btree_cache_invalidate(c, f->dev, f->bucket * d->bucket_size,
					   (f->bucket + 1) * d->bucket_size);
		bch_alloc_release(&rw->a, f->dev, f->bucket);
	}
	/* the replaced nodes are the tree still */
	rw->nr_freed = 0;
	rw->ckpt_nospc = true;
	bch_rw_ckpt_track_end(c);
}
