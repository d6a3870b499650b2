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
			.type	= KEY_TYPE_DISCARD,	/* extents: size 0 iff deleted (20 §20.1.7) */
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
 * its nodes might not fit the free buckets of a metadata device any more
 * (each overlay key may need a leaf of its own, each new node a bucket;
 * old nodes go back only after the checkpoint): on a nearly full
 * filesystem checkpoints come more often, and always find their space.
 */
static bool checkpoint_due(struct bch_fs *c)
{
	struct bch_allocator *a = &c->rw->a;
	uint64_t min_free = UINT64_MAX;

	if (c->overlay.bytes > BCH_OVERLAY_MAX_BYTES)
		return true;
	for (unsigned i = 0; i < BCH_ALLOC_MAX_DEVS; i++) {
		const struct bch_dev_alloc *d = a->devs[i];

		if (d && d->present && d->state == BCH_MEMBER_STATE_RW &&
		    (d->data_allowed & (1U << BCH_DATA_BTREE)) && d->nr_free < min_free)
			min_free = d->nr_free;
	}
	/* at worst every dirty leaf splits in two; interior nodes and the alloc btree */
	return min_free != UINT64_MAX &&
		2 * min_t(uint64_t, c->overlay.nr_keys, c->rw->nr_nodes) + 32 > min_free / 2;
}

int bch_trans_commit(struct btree_trans *t, struct printbuf *err)
{
	struct bch_fs *c = t->c;
	struct bch_fs_rw *rw = bch_rw_get(c);
	size_t i = 0;
	int ret;

	if (!rw || rw->failed || bch_fs_writes_stopped(c)) {
		pr_str(err, "filesystem is not writable\n");
		trans_reset(t);
		return -EROFS;
	}
	ret = trans_validate(t, err);
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
			bch_overlay_insert(&c->overlay, u->btree_id, &u->k);
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
	if (!ret && !rw->batch)
		ret = bch_rw_entry_write(c, true, err);
	if (ret) {
		if (i < t->nr && i)
			pr_buf(err, "transaction cut short: %zu of %zu keys committed\n", i, t->nr);
		if (ret != -EINVAL && ret != -BCH_ERR_btree_node_unverified)
			rw->failed = true;
	} else {
		rw->stats.commits++;
	}
	trans_reset(t);
	if (!ret && rw->batch && checkpoint_due(c))
		ret = bch_fs_checkpoint(c, err);
	return ret;
}

int bch_fs_rw_data_bucket(struct bch_fs *c, unsigned dev, uint64_t *bucket, uint8_t *gen,
			  struct printbuf *err)
{
	/* the metadata reserve: a checkpoint must always find its nodes */
	return bch_fs_rw_data_bucket_keep(c, dev, bch_fs_rw_reserve(c, dev), bucket, gen, err);
}

int bch_fs_rw_data_bucket_keep(struct bch_fs *c, unsigned dev, uint64_t keep,
			       uint64_t *bucket, uint8_t *gen, struct printbuf *err)
{
	struct bch_fs_rw *rw = bch_rw_get(c);
	struct btree_trans t;
	uint64_t v;
	int ret;

	if (!rw || rw->failed)
		return -EROFS;
	if (bch_alloc_dev_free(&rw->a, dev) <= keep)
		return -BCH_ERR_nospc;
	ret = bch_alloc_bucket(&rw->a, dev, BCH_DATA_USER, 0, bucket, gen, err);
	if (ret)
		return ret;
	/* the read side judges cached pointers by these gens */
	if (c->devs[dev] && c->devs[dev]->bucket_gens && *bucket < c->devs[dev]->nbuckets)
		c->devs[dev]->bucket_gens[*bucket] = *gen;
	/* its new gen is journalled before any pointer to it (30 §5.6) */
	v = cpu_to_le64((uint64_t)*gen << 8);
	bch_trans_init(&t, c);
	bch_trans_update(&t, BTREE_ID_ALLOC,
			 &(struct bkey_h) { .type = 128, .p = POS_H(dev, *bucket) }, &v, 8);
	ret = bch_trans_commit(&t, err);
	bch_trans_exit(&t);
	return ret;
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
