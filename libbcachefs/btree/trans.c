// SPDX-License-Identifier: GPL-2.0
/*
 * Transactions of the update engine (btree_update.h): collect keys,
 * validate them, account what they reference, put them in the open
 * journal entry and the overlay; and the data write path's bucket glue,
 * which commits the alloc key of a new data bucket.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bkey/bkey_types.h"
#include "btree/checkpoint.h"
#include "btree/engine.h"
#include "btree/reserve.h"
#include "btree/sb_write.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "util/errcode.h"

void bch_trans_init(struct btree_trans *t, struct bch_fs *c)
{
	memset(t, 0, sizeof(*t));
	t->c = c;
}

static void trans_reset(struct btree_trans *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free((void *)t->u[i].k.v);
	t->nr = 0;
	t->bad_value = false;
}

void bch_trans_exit(struct btree_trans *t)
{
	trans_reset(t);
	free(t->u);
	t->u = NULL;
	t->size = 0;
}

void bch_trans_update(struct btree_trans *t, unsigned btree_id, const struct bkey_h *k,
		      const void *v, unsigned v_bytes)
{
	struct trans_update *u;
	void *copy = NULL;

	if (v_bytes % 8 || v_bytes > 8 * (BKEY_MAX_U64S - 1 - BKEY_U64S_UNPACKED)) {
		t->bad_value = true;
		return;
	}
	if (t->nr == t->size) {
		t->size = t->size ? 2 * t->size : 8;
		t->u = xrealloc(t->u, t->size * sizeof(*t->u));
	}
	if (v_bytes) {
		copy = xmalloc(v_bytes);
		memcpy(copy, v, v_bytes);
	}
	u = &t->u[t->nr++];
	u->btree_id = btree_id;
	u->k.k = *k;
	u->k.k.u64s = (uint8_t)(BKEY_U64S_UNPACKED + v_bytes / 8);
	u->k.k.needs_whiteout = false;
	u->k.v = copy;
	u->k.v_bytes = v_bytes;
}

void bch_trans_delete(struct btree_trans *t, unsigned btree_id, struct bpos_h pos)
{
	struct bkey_h k = { .type = KEY_TYPE_DELETED, .p = pos };

	bch_trans_update(t, btree_id, &k, NULL, 0);
}

void bch_trans_delete_extents(struct btree_trans *t, uint64_t inode, uint64_t start,
			      uint64_t end)
{
	while (start < end) {
		uint64_t n = end - start > KEY_SIZE_MAX ? KEY_SIZE_MAX : end - start;
		struct bkey_h k = {
			.type	= KEY_TYPE_DISCARD,	/* extents: size 0 iff deleted (doc/format.md §3.3) */
			.size	= (uint32_t)n,
			.p	= POS_H(inode, start + n),
		};

		bch_trans_update(t, BTREE_ID_EXTENTS, &k, NULL, 0);
		start += n;
	}
}

static int trans_validate(struct btree_trans *t, struct printbuf *err)
{
	struct bch_fs_rw *rw = t->c->rw;

	if (t->bad_value) {
		pr_str(err, "transaction refused: a key value is too big or not a multiple of 8 bytes\n");
		return -EINVAL;
	}
	for (size_t i = 0; i < t->nr; i++) {
		const struct trans_update *u = &t->u[i];
		int ret;

		if (u->btree_id >= BCH_NR_BTREES) {
			pr_buf(err, "update of unknown btree %u\n", u->btree_id);
			return -EINVAL;
		}
		if (bkey_is_whiteout(&u->k.k))
			ret = bch_bkey_header_invalid(u->btree_id, 0, &u->k.k) ? -EINVAL : 0;
		else
			ret = bch_bkey_validate_fs(u->btree_id, 0, &u->k, &rw->kctx, err);
		if (ret) {
			pr_buf(err, "transaction refused: invalid %s key at %" PRIu64 ":%" PRIu64 "\n",
			       bch_btree_id_str(u->btree_id), u->k.k.p.inode, u->k.k.p.offset);
			return -EINVAL;
		}
		ret = bch_fs_write_allowed(t->c, u->btree_id, &u->k.k, err);
		if (ret)
			return ret;
		if (u->btree_id == BTREE_ID_INODES && t->c->inode_hook && !t->raw &&
		    (ret = t->c->inode_hook(t->c, t->c->inode_hook_arg, &u->k, false)))
			return ret;
	}
	return 0;
}

static size_t trans_u64s(const struct btree_trans *t, size_t from)
{
	size_t u64s = 0;

	for (size_t i = from; i < t->nr; i++)
		u64s += 1 + t->u[i].k.k.u64s;
	return u64s;
}

/*
 * A checkpoint now: the overlay holds more than BCH_OVERLAY_MAX_BYTES, or
 * the nodes its checkpoint may need pass half of what the free buckets
 * can take (btree/reserve.h): on a nearly full filesystem checkpoints come
 * more often, and always find their space.
 */
static bool checkpoint_due(struct bch_fs *c)
{
	return c->overlay.bytes > BCH_OVERLAY_MAX_BYTES || bch_rw_ckpt_due(c);
}

/* Free buckets of every device (a failed checkpoint is retried when they grow). */
static uint64_t free_buckets(const struct bch_fs_rw *rw)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < BCH_ALLOC_MAX_DEVS; i++)
		if (rw->a.devs[i])
			n += rw->a.devs[i]->nr_free;
	return n;
}

/*
 * Make room for what is about to be taken (@fits says whether it fits):
 * the open entry written and flushed, so that buckets emptied by it come
 * back, then a checkpoint (the overlay's nodes are then the tree: its
 * bound drops). A checkpoint that found no space is tried again only once
 * more buckets are free. 0 when it fits; -BCH_ERR_nospc with the reason
 * in @err; other errors from the journal or the checkpoint.
 */
static int make_room(struct bch_fs *c, bool (*fits)(struct bch_fs *c, void *arg), void *arg,
		     struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	struct printbuf why = PRINTBUF;
	int ret;

	if (fits(c, arg))
		return 0;
	if (rw->a.nr_pending) {
		ret = bch_rw_entry_write(c, true, err);
		if (ret) {
			rw->failed = true;
			return ret;
		}
		if (fits(c, arg))
			return 0;
	}
	if (c->overlay.nr_keys &&
	    (!rw->ckpt_nospc || free_buckets(rw) > rw->ckpt_nospc_free)) {
		ret = bch_fs_checkpoint(c, &why);
		if (ret == -BCH_ERR_nospc)
			rw->ckpt_nospc_free = free_buckets(rw);
		else if (ret) {
			pr_buf(err, "%s", printbuf_str(&why));
			printbuf_exit(&why);
			return ret;
		}
		if (fits(c, arg)) {
			printbuf_exit(&why);
			return 0;
		}
	}
	printbuf_exit(&why);
	return -BCH_ERR_nospc;
}

static bool trans_fits(struct bch_fs *c, void *arg)
{
	struct printbuf ignore = PRINTBUF;
	bool ok = !bch_rw_trans_fits(c, arg, &ignore);

	printbuf_exit(&ignore);
	return ok;
}

/* The transaction's reservation (btree/reserve.h), before anything of it is written. */
static int trans_reserve(struct bch_fs *c, struct btree_trans *t, struct printbuf *err)
{
	int ret;

	if (t->raw)
		return 0;
	ret = make_room(c, trans_fits, t, err);
	if (ret == -BCH_ERR_nospc)
		bch_rw_trans_fits(c, t, err);	/* says why */
	return ret;
}

int bch_trans_commit(struct btree_trans *t, struct printbuf *err)
{
	struct bch_fs *c = t->c;
	struct bch_fs_rw *rw = bch_rw_get(c);
	size_t i = 0, inserted = 0;
	int ret;

	if (!rw || rw->failed || bch_fs_writes_stopped(c)) {
		pr_str(err, "filesystem is not writable\n");
		trans_reset(t);
		return -EROFS;
	}
	ret = trans_validate(t, err);
	if (!ret)
		ret = trans_reserve(c, t, err);
	if (ret == -BCH_ERR_nospc) {
		/* nothing of it was written: the engine goes on */
		trans_reset(t);
		if (!rw->in_data_bucket)
			bch_rw_wp_close_deferred(c);
		return ret;
	}
	if (!ret)
		ret = bch_rw_mark_unclean(c, err);

	/* a transaction that fits an entry goes into one: close a fuller one */
	if (!ret && rw->open_live && rw->open_u64s &&
	    rw->open_u64s + trans_u64s(t, 0) > rw->entry_u64s)
		ret = bch_rw_entry_write(c, false, err);

	while (!ret && i < t->nr) {
		size_t j = i;

		ret = bch_rw_entry_open(c, err);
		while (!ret && j < t->nr &&
		       (!rw->open_u64s || rw->open_u64s + 1 + t->u[j].k.k.u64s <= rw->entry_u64s)) {
			const struct trans_update *u = &t->u[j];

			rw->open_u64s += 1 + u->k.k.u64s;
			ret = jset_add_keys(&rw->open, u->btree_id, 0, &u->k, 1);
			if (ret)
				break;
			if (u->btree_id == BTREE_ID_EXTENTS && !t->raw)
				bch_rw_extent_trigger(c, u, rw->jw.seq + 1);
			if (u->btree_id == BTREE_ID_INODES && c->inode_hook && !t->raw)
				c->inode_hook(c, c->inode_hook_arg, &u->k, true);
			bch_overlay_insert(&c->overlay, u->btree_id, &u->k);
			inserted++;
			j++;
		}
		if (ret)
			break;
		rw->stats.keys += j - i;
		i = j;
		/* a transaction larger than an entry: each full entry goes out */
		if (i < t->nr)
			ret = bch_rw_entry_write(c, false, err);
	}
	/* the leaves a checkpoint will rewrite (btree/reserve.h) */
	if (!t->raw)
		bch_rw_touched_commit(c, t, inserted);
	if (!ret && !rw->batch)
		ret = bch_rw_entry_write(c, true, err);
	if (ret) {
		if (i < t->nr && i)
			pr_buf(err, "transaction cut short: %zu of %zu keys committed\n", i, t->nr);
		/*
		 * Refused before anything was applied (a bad key, a quota
		 * limit, an unverified node; a journal short of space whose
		 * checkpoint found none, before any key of it went in):
		 * nothing happened, the engine goes on
		 */
		if (ret != -EINVAL && ret != -EDQUOT && ret != -BCH_ERR_btree_node_unverified &&
		    !(ret == -BCH_ERR_nospc && !inserted))
			rw->failed = true;
	} else {
		rw->stats.commits++;
	}
	trans_reset(t);
	/* the data those buckets hold is referenced now (or never will be) */
	if (!rw->in_data_bucket)
		bch_rw_wp_close_deferred(c);
	if (!ret && rw->batch && !rw->in_data_bucket && checkpoint_due(c)) {
		struct printbuf why = PRINTBUF;
		int r = bch_fs_checkpoint(c, &why);

		/*
		 * The transaction is committed whatever happens here: a
		 * checkpoint that finds no space leaves the overlay in the
		 * journal (the next one runs when space comes back); any other
		 * failure stops the engine and is said
		 */
		if (r && r != -BCH_ERR_nospc) {
			pr_buf(err, "%s", printbuf_str(&why));
			ret = r;
		}
		printbuf_exit(&why);
	}
	return ret;
}

static bool data_bucket_fits(struct bch_fs *c, void *arg)
{
	return bch_rw_data_bucket_fits(c, *(unsigned *)arg);
}

bool bch_fs_rw_use_reserve(struct bch_fs *c, bool on)
{
	struct bch_fs_rw *rw = bch_rw_get(c);
	bool old;

	if (!rw)
		return false;
	old = rw->use_reserve;
	rw->use_reserve = on;
	return old;
}

void bch_fs_rw_write_credit(struct bch_fs *c, uint64_t sectors)
{
	if (c->rw)
		c->rw->write_credit = sectors;
}

/* Free buckets with cached data invalidated together when the cache is full. */
#define DATA_BUCKET_INVALIDATE	64

/*
 * A data bucket of @dev: with @keep NULL an ordinary data write, which
 * leaves the btree reserve and fallocate's promises (btree/reserve.h);
 * else a move that may go down to *@keep free buckets.
 */
static int data_bucket(struct bch_fs *c, unsigned dev, const uint64_t *keep,
		       uint64_t *bucket, uint8_t *gen, struct printbuf *err)
{
	struct bch_fs_rw *rw = bch_rw_get(c);
	struct btree_trans t;
	uint64_t v;
	int ret;

	if (!rw || rw->failed)
		return -EROFS;
	if (!keep) {
		ret = make_room(c, data_bucket_fits, &dev, err);
		if (ret)
			return ret;
	} else if (!bch_rw_move_bucket_fits(c, dev, *keep)) {
		return -BCH_ERR_nospc;
	}
	ret = bch_alloc_bucket(&rw->a, dev, BCH_DATA_USER, 0, bucket, gen, err);
	if (ret)
		return ret;
	/* its new gen is journalled before any pointer to it (doc/engine.md §8.5) */
	v = cpu_to_le64((uint64_t)*gen << 8);
	bch_trans_init(&t, c);
	bch_trans_update(&t, BTREE_ID_ALLOC,
			 &(struct bkey_h) { .type = 128, .p = POS_H(dev, *bucket) }, &v, 8);
	if (rw->a.took_cached) {
		/*
		 * The cache is full: the next free buckets with cached data
		 * get their new gens in the same entry, so that one flush
		 * (below) serves a batch of them
		 */
		uint64_t b[DATA_BUCKET_INVALIDATE];
		uint8_t g[DATA_BUCKET_INVALIDATE];
		unsigned n = bch_alloc_invalidate_cached(&rw->a, dev, DATA_BUCKET_INVALIDATE, b, g);

		for (unsigned i = 0; i < n; i++) {
			uint64_t gv = cpu_to_le64((uint64_t)g[i] << 8);

			bch_trans_update(&t, BTREE_ID_ALLOC,
					 &(struct bkey_h) { .type = 128, .p = POS_H(dev, b[i]) }, &gv, 8);
		}
	}
	/* in the middle of a write: the closed buckets wait for its keys */
	rw->in_data_bucket = true;
	ret = bch_trans_commit(&t, err);
	/*
	 * Live cached pointers may point into it: they go stale only by the
	 * new gen, which must be durable before new data is written there
	 * (a crash would otherwise leave them pointing at other data,
	 * doc/engine.md §8.5). Free buckets without cached data come first,
	 * so this is paid only when the cache is full.
	 */
	if (!ret && rw->a.took_cached)
		ret = bch_journal_flush(c, err);
	rw->in_data_bucket = false;
	bch_trans_exit(&t);
	return ret;
}

int bch_fs_rw_data_bucket(struct bch_fs *c, unsigned dev, uint64_t *bucket, uint8_t *gen,
			  struct printbuf *err)
{
	return data_bucket(c, dev, NULL, bucket, gen, err);
}

int bch_fs_rw_data_bucket_keep(struct bch_fs *c, unsigned dev, uint64_t keep,
			       uint64_t *bucket, uint8_t *gen, struct printbuf *err)
{
	return data_bucket(c, dev, &keep, bucket, gen, err);
}

int bch_fs_rw_replicas_mark(struct bch_fs *c, unsigned data_type, uint64_t devs,
			    struct printbuf *err)
{
	struct bch_fs_rw *rw = bch_rw_get(c);

	if (!rw)
		return -EROFS;
	if (!bch_replicas_add(&rw->a.replicas, data_type, devs))
		return 0;
	return bch_rw_replicas_sync(c, err);
}
