// SPDX-License-Identifier: GPL-2.0
/*
 * The update engine: see btree_update.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "btree/bulk.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "bkey/extents.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "journal/journal.h"
#include "journal/journal_write.h"
#include "btree/node.h"
#include "btree/node_write.h"
#include "dev/super.h"
#include "util/util.h"

struct freed_bucket {
	unsigned	dev;
	uint64_t	bucket;
};

/* A node to rewrite at the next checkpoint (bch_fs_rw_force_rewrite()). */
struct rw_forced {
	unsigned	btree_id;
	unsigned	level;
	struct bpos_h	max;		/* the node's pointer key position */
};

struct bch_fs_rw {
	struct bch_allocator	a;
	struct bch_journal_writer jw;
	struct btree_write_ctx	wctx;
	struct bkey_fs_ctx	kctx;
	bool			failed;		/* a write failed: no more writes */
	bool			unclean;	/* CLEAN cleared on disk */
	uint64_t		last_seq;	/* for the next entry */
	size_t			entry_u64s;	/* key space per journal entry */

	/* buckets of replaced nodes, free once the new tree is durable */
	struct freed_bucket	*freed;
	size_t			nr_freed, size_freed;

	struct bch_rw_stats	stats;

	/* the open journal entry (entry_open/entry_write) */
	struct jset_builder	open;
	bool			open_live;
	size_t			open_u64s;	/* key space used in it */
	uint64_t		open_since;	/* when it was opened (ns) */
	uint64_t		durable_seq;	/* newest entry known to be durable */
	bool			batch;		/* commits do not wait for their entry */

	/* data writes (io_write.c) */
	uint64_t		key_version;	/* 40 §40.4.7 */
	uint64_t		nr_nodes;	/* btree nodes of the tree on disk */

	/* fsck (issue #5): nodes to rewrite at the next checkpoint */
	struct rw_forced	*forced;
	size_t			nr_forced, size_forced;
	bool			force_checkpoint;	/* gens/replicas changed outside commits */
};

static struct bch_fs_rw *rw_get(struct bch_fs *c);

bool bch_fs_rw(struct bch_fs *c)
{
	struct bch_fs_rw *rw = rw_get(c);

	return rw && !rw->failed;
}

void bch_fs_rw_stats(const struct bch_fs *c, struct bch_rw_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (c->rw)
		*s = c->rw->stats;
}

/* ---- superblocks -------------------------------------------------------- */

/*
 * Write the superblock of every present member: the filesystem's with seq
 * + 1, each device keeping its own index, layout and journal field, the
 * replicas table of the allocator, CLEAN = @clean.
 */
static int sb_write_all(struct bch_fs *c, bool clean, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	struct bch_sb *sbs[BCH_FS_MAX_DEVS] = { NULL };
	uint8_t *replicas = NULL;
	size_t replicas_bytes = bch_replicas_field_build(&rw->a.replicas, &replicas);
	uint64_t seq = le64_to_cpu(c->sb->seq) + 1;
	unsigned i;
	int ret = 0;

	if (!replicas_bytes) {
		pr_str(err, "superblock: a replicas entry has more than 3 devices\n");
		return -EINVAL;
	}
	for (i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *ca = c->devs[i];
		const struct bch_sb_field *jf;
		struct bch_sb *sb;

		if (!ca || !ca->io || !ca->sb)
			continue;
		sb = xmalloc(bch_sb_bytes(c->sb));
		memcpy(sb, c->sb, bch_sb_bytes(c->sb));
		sb->seq = cpu_to_le64(seq);
		SET_BCH_SB_CLEAN(sb, clean);
		sb->dev_idx = ca->sb->dev_idx;
		memcpy(&sb->layout, &ca->sb->layout, sizeof(sb->layout));
		sb->offset = ca->sb->offset;
		jf = bch_sb_field_find(ca->sb, BCH_SB_FIELD_journal);
		if (jf)
			bch_sb_field_replace(&sb, BCH_SB_FIELD_journal, jf, bch_sb_field_bytes(jf));
		else
			bch_sb_field_replace(&sb, BCH_SB_FIELD_journal, NULL, 0);
		bch_sb_field_replace(&sb, BCH_SB_FIELD_replicas, replicas, replicas_bytes);
		sbs[i] = sb;
	}
	ret = bch_fs_sb_write_all(c, sbs, err);
	if (!ret)
		rw->a.replicas.changed = false;
	free(replicas);
	return ret;
}

/* Before the first journal write: the filesystem is not clean any more. */
static int mark_unclean(struct bch_fs *c, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	int ret;

	if (rw->unclean)
		return 0;
	ret = sb_write_all(c, false, err);
	if (!ret)
		rw->unclean = true;
	return ret;
}

/* New replicas entries must be on disk before what needs them (30 §7.3). */
static int replicas_sync(struct bch_fs *c, struct printbuf *err)
{
	return c->rw->a.replicas.changed ? sb_write_all(c, !c->rw->unclean, err) : 0;
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
 * Cached pointers mark their buckets as cached data (never freed here).
 */
static void account_extent(struct bch_fs_rw *rw, const struct bkey_ref *k, uint64_t sectors,
			   int sign, uint64_t seq)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;

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
			if (sign > 0) {
				struct printbuf ignore = PRINTBUF;

				bch_alloc_mark(&rw->a, p.ptr.dev, b, BCH_DATA_CACHED,
					       p.crc.compressed_size ?: k->k.size, &ignore);
				printbuf_exit(&ignore);
			}
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
static void extent_trigger(struct bch_fs *c, const struct trans_update *u, uint64_t seq)
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
			if (k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED)
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

static void rw_free(struct bch_fs *c)
{
	struct bch_fs_rw *rw = c->rw;

	if (!rw)
		return;
	if (rw->open_live)
		jset_builder_exit(&rw->open);
	free(rw->freed);
	free(rw->forced);
	bch_journal_writer_exit(&rw->jw);
	bch_alloc_exit(&rw->a);
	free(rw);
	c->rw = NULL;
}

void bch_btree_rw_free(struct bch_fs *c)
{
	rw_free(c);
}

/*
 * May member @i be missing from a writable filesystem (issue 12)? When
 * opened degraded (the open checked that every replicas entry keeps a
 * copy, 30 §7.6), or when it holds nothing to write to (failed, spare).
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
static struct bch_fs_rw *rw_get(struct bch_fs *c)
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
		rw_free(c);
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
		rw_free(c);
		return -EROFS;
	}
	/* a quarter of a bucket, less the roots and blacklists (30 §3.4) */
	rw->entry_u64s = (size_t)min_bucket * 64 / 4;
	rw->entry_u64s = rw->entry_u64s > 1024 ? rw->entry_u64s - 512 : rw->entry_u64s / 2;
	return 0;
}

/* ---- transactions ------------------------------------------------------- */

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

/* Every root, the blacklists still needed (30 §3.2, §3.9). */
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
	return replicas_sync(c, err);
}

/* Free ring slots: the fewest on any device the journal writes to. */
static unsigned journal_space(struct bch_fs *c)
{
	return bch_journal_writer_buckets_free(&c->rw->jw);
}

/*
 * The open journal entry: committed keys gather in it until it is full,
 * a flush is asked for (fsync), or it is old enough; then it is written
 * as one entry (30 §3.7). Transactions never straddle two entries unless
 * one alone is larger than an entry.
 */
static int entry_write(struct bch_fs *c, bool flush, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	int ret;

	if (!rw->open_live) {
		/* nothing new: the entries written without a flush become durable */
		if (flush && rw->durable_seq < rw->jw.seq) {
			for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
				if (c->devs[i] && c->devs[i]->io && c->devs[i]->io->rw) {
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

/* Open a new entry (a checkpoint first when the journal is short of space). */
static int entry_open(struct bch_fs *c, struct printbuf *err)
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
	struct bch_fs_rw *rw = rw_get(c);
	size_t i = 0;
	int ret;

	if (!rw || rw->failed || bch_fs_writes_stopped(c)) {
		pr_str(err, "filesystem is not writable\n");
		trans_reset(t);
		return -EROFS;
	}
	ret = trans_validate(t, err);
	if (!ret)
		ret = mark_unclean(c, err);

	/* a transaction that fits an entry goes into one: close a fuller one */
	if (!ret && rw->open_live && rw->open_u64s &&
	    rw->open_u64s + trans_u64s(t, 0) > rw->entry_u64s)
		ret = entry_write(c, false, err);

	while (!ret && i < t->nr) {
		size_t j = i;

		ret = entry_open(c, err);
		while (!ret && j < t->nr &&
		       (!rw->open_u64s || rw->open_u64s + 1 + t->u[j].k.k.u64s <= rw->entry_u64s)) {
			const struct trans_update *u = &t->u[j];

			rw->open_u64s += 1 + u->k.k.u64s;
			ret = jset_add_keys(&rw->open, u->btree_id, 0, &u->k, 1);
			if (ret)
				break;
			if (u->btree_id == BTREE_ID_EXTENTS && !t->raw)
				extent_trigger(c, u, rw->jw.seq + 1);
			bch_overlay_insert(&c->overlay, u->btree_id, &u->k);
			j++;
		}
		if (ret)
			break;
		rw->stats.keys += j - i;
		i = j;
		/* a transaction larger than an entry: each full entry goes out */
		if (i < t->nr)
			ret = entry_write(c, false, err);
	}
	if (!ret && !rw->batch)
		ret = entry_write(c, true, err);
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
	ret = entry_write(c, true, err);
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
	if (rw_get(c))
		c->rw->batch = batch;
}

uint64_t bch_journal_seq_durable(const struct bch_fs *c)
{
	return c->rw ? c->rw->durable_seq : 0;
}

/* ---- checkpoint ----------------------------------------------------------- */

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

/* ---- forced rewrites (fsck, issue #5) ------------------------------------ */

void bch_fs_rw_force_rewrite(struct bch_fs *c, unsigned btree_id, unsigned level,
			     struct bpos_h max)
{
	struct bch_fs_rw *rw = rw_get(c);

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
	struct bch_fs_rw *rw = rw_get(c);

	if (!rw || !bch_alloc_set_gen(&rw->a, dev, bucket, gen))
		return false;
	rw->force_checkpoint = true;
	return true;
}

bool bch_fs_rw_bucket_gen(struct bch_fs *c, unsigned dev, uint64_t bucket, uint8_t *gen)
{
	const struct bch_dev_alloc *d;

	if (!rw_get(c) || dev >= BCH_ALLOC_MAX_DEVS || !(d = c->rw->a.devs[dev]) ||
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
	if (rw_get(c))
		c->rw->force_checkpoint = true;
}

bool bch_fs_rw_replicas_add(struct bch_fs *c, unsigned data_type, uint64_t devs)
{
	struct bch_fs_rw *rw = rw_get(c);

	if (!rw)
		return false;
	bch_replicas_add(&rw->a.replicas, data_type, devs);
	rw->force_checkpoint = true;
	return true;
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
 * run of new leaves, so leaves that shrank merge (20 §20.7.4). When one of
 * them cannot be read, each is rewritten on its own instead.
 */
static int rewrite_leaves(struct bch_fs *c, unsigned id, const struct bkey_ref *ptrs,
			  size_t nr, struct bpos_h min, struct bpos_h max,
			  struct bulk_keys *out, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	struct btree_node_h **leaf = xcalloc(nr, sizeof(*leaf));
	struct node_arena *arena = node_arena_new();
	struct bkey_ref *all = NULL;
	size_t nr_all = 0, i, got = 0, before = out->nr;
	struct bpos_h cmin = min;
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
	if (got == nr) {
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

	if (got < nr) {
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
	if (ret && forced_is(c, id, level, max)) {
		printbuf_reset(err);	/* fsck reported it */
		return rebuild_lost_node(c, id, level, min, max, out, err);
	}
	if (ret) {
		pr_buf(err, "btree %s level %u: node unreadable, cannot update it\n",
		       bch_btree_id_str(id), level);
		return ret;
	}

	if (level && !n->nr_keys) {
		/* fsck (issue #5): an interior node that lost every child pointer */
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
		 * fsck (issue #5): a damaged node may hold keys outside the range
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
		struct bpos_h cmin = min;
		size_t i = 0;
		/*
		 * A node fsck rewrites may have lost child pointers: the ranges
		 * of its children follow from the keys left, so every child is
		 * rewritten to match them (20 §20.6.3).
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
				ret = rewrite_leaves(c, id, n->keys + i, j - i, cmin, gmax, &keys, err);
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
	struct bch_fs_rw *rw = rw_get(c);
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
	ret = mark_unclean(c, err);
	/* what was committed goes out first: the checkpoint's entry follows it */
	if (!ret)
		ret = entry_write(c, false, err);
	for (id = 0; id < BCH_NR_BTREES && !ret; id++)
		if (id != BTREE_ID_ALLOC)
			ret = rewrite_btree(c, id, err);
	if (!ret)
		ret = rebuild_alloc(c, err);
	/* the replicas of the new nodes, then one entry makes them the tree */
	if (!ret)
		ret = replicas_sync(c, err);
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
		rw->failed = true;
		pr_str(err, "checkpoint failed: the filesystem stays as its journal says\n");
		return ret;
	}
	rw->last_seq = rw->jw.seq;
	rw->nr_forced = 0;
	rw->force_checkpoint = false;
	overlay_clear(c);
	for (size_t i = 0; i < rw->nr_freed; i++)
		bch_alloc_release(&rw->a, rw->freed[i].dev, rw->freed[i].bucket);
	rw->nr_freed = 0;
	bch_alloc_clear_dirty(&rw->a);
	rw->stats.checkpoints++;
	rw->nr_nodes += rw->stats.nodes_written - written;
	rw->nr_nodes -= min_t(uint64_t, rw->nr_nodes, rw->stats.nodes_freed - freed);
	return 0;
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
	const struct bch_dev_alloc *d = dev < BCH_ALLOC_MAX_DEVS && c->rw ? c->rw->a.devs[dev] : NULL;
	uint64_t n;

	if (!d)
		return 0;
	n = (d->nbuckets - d->first_bucket) >> 5;
	return n < 8 ? 8 : n;
}

int bch_fs_rw_data_bucket(struct bch_fs *c, unsigned dev, uint64_t *bucket, uint8_t *gen,
			  struct printbuf *err)
{
	struct bch_fs_rw *rw = rw_get(c);
	struct btree_trans t;
	uint64_t v;
	int ret;

	if (!rw || rw->failed)
		return -EROFS;
	/* the metadata reserve: a checkpoint must always find its nodes */
	if (bch_alloc_dev_free(&rw->a, dev) <= bch_fs_rw_reserve(c, dev))
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

void bch_fs_rw_data_bucket_close(struct bch_fs *c, unsigned dev, uint64_t bucket)
{
	if (c->rw)
		bch_alloc_wp_close(&c->rw->a, dev, bucket, c->rw->jw.seq + 1);
}

int bch_fs_rw_replicas_mark(struct bch_fs *c, unsigned data_type, uint64_t devs,
			    struct printbuf *err)
{
	struct bch_fs_rw *rw = rw_get(c);

	if (!rw)
		return -EROFS;
	if (!bch_replicas_add(&rw->a.replicas, data_type, devs))
		return 0;
	return replicas_sync(c, err);
}

int bch_btree_rw_stop(struct bch_fs *c, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	int ret = 0;

	if (!rw)
		return 0;
	if (rw->failed) {
		rw_free(c);
		pr_str(err, "filesystem left as its journal says (an earlier write failed)\n");
		return -EIO;
	}
	if (bch_fs_writes_stopped(c)) {
		rw_free(c);
		pr_str(err, "filesystem left as its journal says (read-only since damage was found)\n");
		return -EROFS;
	}
	if (c->overlay.nr_keys || rw->unclean || rw->nr_forced || rw->force_checkpoint ||
	    rw->open_live)
		ret = bch_fs_checkpoint(c, err);
	if (!ret && rw->unclean)
		ret = sb_write_all(c, true, err);
	rw_free(c);
	return ret;
}

/* ---- members changing at run time (issue 12) ------------------------------- */

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

int bch_fs_rw_write_sb(struct bch_fs *c, struct printbuf *err)
{
	if (!c->rw || c->rw->failed) {
		pr_str(err, "filesystem is not writable\n");
		return -EROFS;
	}
	return sb_write_all(c, !c->rw->unclean, err);
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
	return sb_write_all(c, !rw->unclean, err);
}
