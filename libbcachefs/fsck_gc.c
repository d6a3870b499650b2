// SPDX-License-Identifier: GPL-2.0
/*
 * fsck, allocation: mark and sweep as fsck runs it (spec 30 §5.5, §6, §7;
 * detection side).
 *
 * Runs after the node and key passes (fsck.c), which reported unreadable
 * nodes and invalid keys; extent keys that fail their checks (a pointer to
 * a device that is not a member, past the end of its device...) were
 * reported there and are skipped here. This pass checks:
 *
 *   - every pointer of every btree node pointer (roots and interior node
 *     keys) and of every live extent (journal laid over the nodes): its
 *     device is a member and the pointed range lies inside the device;
 *   - its gen against the bucket's gen from the alloc btree (and journal):
 *     a pointer newer than its bucket, or into a bucket with no alloc key,
 *     is an error (30 §6.2); an older pointer is stale: normal for a
 *     cached pointer (its bucket was reused, 30 §5.6: it is only skipped),
 *     an error for a dirty pointer or a btree node pointer (its data was
 *     overwritten);
 *   - the kind of data of each bucket (superblock, journal, btree, user;
 *     stale pointers do not count): two kinds in one bucket are an error;
 *   - the superblock replicas entries (30 §7.4): {btree or user, devices of
 *     the non-cached pointers} for every key, {cached, [dev]} for every
 *     cached pointer, {journal, devices} for every journal entry to
 *     replay. Not checked when the superblock has no replicas field (the
 *     table is then rebuilt) nor, for the journal, when a member is
 *     missing.
 *
 * Nothing is counted for usage: nothing about usage is persisted in this
 * version (30 §6.3). Leaves nothing for the filesystem passes.
 *
 * Memory: two bytes per bucket of each member (gen, state).
 */
#include "fsck_fs.h"

#include "alloc.h"
#include "bkey_types.h"
#include "btree.h"
#include "extents.h"
#include "format.h"
#include "fs.h"
#include "journal.h"
#include "problems.h"
#include "super.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define B_TYPE_MASK	0x07	/* enum bch_data_type marked in the bucket */
#define B_HAS_KEY	0x08	/* the alloc btree has a key for it */
#define B_TYPE_REPORTED	0x10	/* two kinds of data: reported */
#define B_GEN_REPORTED	0x20	/* gen problem: reported */

#define GC_MAX_BUCKETS	(1ULL << 34)	/* beyond: geometry not believed */

struct gc_dev {
	bool		present;	/* member with a believable geometry */
	uint64_t	nbuckets;
	unsigned	bucket_size;
	unsigned	first_bucket;
	uint8_t		*gen;
	uint8_t		*state;		/* B_* */
};

struct gc {
	struct bch_fs		*c;
	struct fsck_state	*s;
	struct gc_dev		devs[BCH_FS_MAX_DEVS];
	struct bkey_fs_ctx	ctx;

	bool			gens_ok;	/* the whole alloc btree was read */
	bool			check_replicas;
	struct bch_replicas_table have;		/* superblock entries */
	struct bch_replicas_table reported;	/* missing ones already reported */
	unsigned		last_type;		/* last entry found present */
	uint64_t		last_devs;

	struct printbuf		err;		/* node problems: the node pass reported them */
	struct printbuf		key;
	struct printbuf		msg;
};

static const char *data_type_str(unsigned t)
{
	return bch_data_type_name(t) ?: "unknown";
}

/* "extents key <text>" / "btree node pointer <text>" for messages. */
static const char *key_text(struct gc *gc, unsigned btree_id, unsigned level,
			    const struct bkey_ref *k)
{
	printbuf_reset(&gc->key);
	if (k) {
		pr_buf(&gc->key, "%s %s: ", bch_btree_id_str(btree_id),
		       level ? "btree node pointer" : "key");
		bch_bkey_to_text(&gc->key, btree_id, level, k, NULL);
	}
	return printbuf_str(&gc->key);
}

static void devs_to_text(struct printbuf *out, uint64_t devs)
{
	bool first = true;

	pr_char(out, '[');
	for (unsigned d = 0; d < 64; d++)
		if (devs & (1ULL << d)) {
			pr_buf(out, first ? "%u" : " %u", d);
			first = false;
		}
	pr_char(out, ']');
}

/* ---- buckets -------------------------------------------------------------- */

static int gc_devs_init(struct gc *gc)
{
	struct bch_fs *c = gc->c;

	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *ca = c->devs[i];
		struct gc_dev *d = &gc->devs[i];

		if (!ca || !ca->bucket_size || !ca->nbuckets || ca->nbuckets > GC_MAX_BUCKETS ||
		    ca->nbuckets > SIZE_MAX / 2)
			continue;
		d->present	= true;
		d->nbuckets	= ca->nbuckets;
		d->bucket_size	= ca->bucket_size;
		d->first_bucket	= ca->first_bucket;
		d->gen		= xcalloc(d->nbuckets, 1);
		d->state	= xcalloc(d->nbuckets, 1);
	}
	return 0;
}

/* Gens of the alloc btree with the journal laid over it. Invalid keys: key pass. */
static int gc_read_gens(struct gc *gc)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	bch_btree_iter_init(&iter, gc->c, BTREE_ID_ALLOC, POS_H_MIN, &gc->err);
	while (!(ret = bch_btree_iter_next(&iter, &k)) && k) {
		struct gc_dev *d = k->k.p.inode < BCH_FS_MAX_DEVS ? &gc->devs[k->k.p.inode] : NULL;
		struct bch_alloc_h a;

		if (k->k.type != BCH_ALLOC || !d || !d->present || k->k.p.offset >= d->nbuckets ||
		    bch_alloc_decode(k, &a))
			continue;
		d->gen[k->k.p.offset]	= a.gen;
		d->state[k->k.p.offset]	|= B_HAS_KEY;
	}
	gc->gens_ok = !ret && !iter.nr_errors;
	bch_btree_iter_exit(&iter);
	printbuf_reset(&gc->err);
	return ret;
}

/* Bucket @b of device @dev holds data of type @type (for the key @what). */
/* @what, or key @k formatted only when a problem is reported. */
static void mark_bucket(struct gc *gc, unsigned dev, uint64_t b, unsigned type,
			unsigned btree_id, unsigned level, const struct bkey_ref *k,
			const char *what)
{
	struct gc_dev *d = &gc->devs[dev];
	uint8_t *st = &d->state[b];
	unsigned old = *st & B_TYPE_MASK;

	if (old && old != type) {
		if (!what)
			what = k ? key_text(gc, btree_id, level, k) : "";
		if (!(*st & B_TYPE_REPORTED))
			/* TODO(repair): none in the reference; move the data out of the bucket (needs the write path). */
			fsck_fix(gc->s, PROB_bucket_data_type_mismatch,
				 "device %u bucket %" PRIu64 ": different types of data in same bucket: %s, %s%s%s",
				 dev, b, data_type_str(old), data_type_str(type),
				 *what ? "\n" : "", what);
		*st |= B_TYPE_REPORTED;
		return;
	}
	*st = (uint8_t)((*st & ~B_TYPE_MASK) | type);
}

static void mark_range(struct gc *gc, unsigned dev, uint64_t start, uint64_t end, unsigned type,
		       const char *what)
{
	struct gc_dev *d = &gc->devs[dev];

	for (uint64_t b = start / d->bucket_size; b < d->nbuckets && b * d->bucket_size < end; b++)
		mark_bucket(gc, dev, b, type, 0, 0, NULL, what);
}

/* Superblock copies (and the sectors before the first) and journal buckets (30 §5.5). */
static void gc_mark_sb_journal(struct gc *gc)
{
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *ca = gc->c->devs[i];
		struct gc_dev *d = &gc->devs[i];
		const struct bch_sb_layout *l;
		uint64_t size;
		size_t nr;

		if (!d->present || !ca || !ca->sb)
			continue;
		l = &ca->sb->layout;
		size = 1ULL << (l->sb_max_size_bits < 32 ? l->sb_max_size_bits : 31);
		for (unsigned j = 0; j < l->nr_superblocks && j < BCH_SB_LAYOUT_MAX_SB; j++) {
			uint64_t o = le64_to_cpu(l->sb_offset[j]);

			if (o == BCH_SB_SECTOR)
				mark_range(gc, i, 0, BCH_SB_SECTOR, BCH_DATA_SB, "");
			if (o <= UINT64_MAX - size)
				mark_range(gc, i, o, o + size, BCH_DATA_SB, "");
		}
		nr = bch_sb_journal_nr_buckets(ca->sb);
		for (size_t j = 0; j < nr; j++) {
			uint64_t b = bch_sb_journal_bucket(ca->sb, j);

			if (b < d->nbuckets)
				mark_bucket(gc, i, b, BCH_DATA_JOURNAL, 0, 0, NULL, "");
		}
	}
}

/* ---- replicas ---------------------------------------------------------------- */

/*
 * Is there a replicas entry for @type on @devs? The message names @what,
 * or key @k (formatted only when a problem is reported: formatting every
 * key dominated fsck's time).
 */
static void check_replicas(struct gc *gc, unsigned type, uint64_t devs,
			   unsigned btree_id, unsigned level, const struct bkey_ref *k,
			   const char *what)
{
	if (!gc->check_replicas || !devs)
		return;
	if (type == gc->last_type && devs == gc->last_devs)
		return;
	if (bch_replicas_has(&gc->have, type, devs)) {
		gc->last_type = type;
		gc->last_devs = devs;
		return;
	}
	if (!bch_replicas_add(&gc->reported, type, devs))
		return;		/* reported already */

	printbuf_reset(&gc->msg);
	devs_to_text(&gc->msg, devs);
	/* TODO(repair): add the entry to the superblock replicas field (bch_replicas_add + field build) and write the superblocks. */
	fsck_fix(gc->s, PROB_replicas_entry_missing,
		 "superblock not marked as containing replicas (type %u %s, devices %s), needed by\n%s",
		 type, data_type_str(type), printbuf_str(&gc->msg),
		 what ?: key_text(gc, btree_id, level, k));
}

/* ---- pointers ----------------------------------------------------------------- */

/* A pointer of a key with the sectors it covers on its device. */
struct gc_ptr {
	struct bch_extent_ptr_unpacked	ptr;
	uint64_t			sectors;
};

#define GC_KEY_MAX_PTRS	256	/* u64s is 8 bits: never more entries */

/*
 * The pointers of @k up to the end of its value or its first invalid
 * entry. Values of pointer entries only (no crc: the common case) are
 * decoded directly; others through the entry walker.
 */
static unsigned gc_key_ptrs(struct gc *gc, unsigned level, const struct bkey_ref *k,
			    struct gc_ptr *ptrs)
{
	unsigned i, nr = k->v ? k->v_bytes / 8 : 0;
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;

	for (i = 0; i < nr && !(k->v_bytes % 8); i++) {
		struct bch_extent_ptr w;

		memcpy(&w, (const uint8_t *)k->v + i * 8, 8);
		if (!(le64_to_cpu(w.w) & 1))
			break;
		ptrs[i].ptr	= bch_extent_ptr_unpack(&w);
		ptrs[i].sectors	= level ? gc->c->btree_node_size : k->k.size;
	}
	if (i == nr && !(k->v_bytes % 8))
		return nr;

	nr = 0;
	extent_ptr_iter_init(&it, k);
	while (nr < GC_KEY_MAX_PTRS && extent_ptr_iter_next(&it, &p) > 0) {
		ptrs[nr].ptr	 = p.ptr;
		ptrs[nr].sectors = level ? gc->c->btree_node_size
					 : (p.crc.compressed_size ?: k->k.size);
		nr++;
	}
	/* an invalid entry ends the walk: reported by the key pass */
	return nr;
}

/*
 * Check and mark the pointers of @k: a btree node pointer (@level > 0,
 * data BTREE) or an extent (level 0, data USER).
 */
static void gc_key(struct gc *gc, unsigned btree_id, unsigned level, const struct bkey_ref *k)
{
	unsigned type = level ? BCH_DATA_BTREE : BCH_DATA_USER;
	struct gc_ptr ptrs[GC_KEY_MAX_PTRS];
	unsigned i, nr = gc_key_ptrs(gc, level, k, ptrs);
	uint64_t devs = 0;
	const char *what = NULL;

#define WHAT()	(what ?: (what = key_text(gc, btree_id, level, k)))

	for (i = 0; i < nr; i++) {
		const struct gc_ptr p = ptrs[i];
		unsigned dev = p.ptr.dev;
		struct gc_dev *d = dev < BCH_FS_MAX_DEVS ? &gc->devs[dev] : NULL;
		uint64_t sectors = p.sectors;
		uint64_t b;
		uint8_t *st, bgen;

		if (dev >= BCH_FS_MAX_DEVS || dev >= gc->c->nr_devices || !gc->c->devs[dev]) {
			/* TODO(repair): drop the pointer (the key goes when it was the last one). */
			fsck_fix(gc->s, PROB_ptr_dev_missing, "pointer to device %u, which is not a member:\n%s",
				 dev, WHAT());
			continue;
		}
		if (!d->present)
			continue;	/* geometry unknown: nothing to judge against */
		if (p.ptr.offset < (uint64_t)d->first_bucket * d->bucket_size ||
		    p.ptr.offset >= d->nbuckets * d->bucket_size ||
		    sectors > d->nbuckets * d->bucket_size - p.ptr.offset) {
			/* TODO(repair): drop the pointer (the key goes when it was the last one). */
			fsck_fix(gc->s, PROB_ptr_past_end,
				 "pointer to device %u sector %" PRIu64 " (+%" PRIu64 ") outside buckets %u..%" PRIu64 ":\n%s",
				 dev, (uint64_t)p.ptr.offset, sectors, d->first_bucket, d->nbuckets, WHAT());
			continue;
		}

		if (p.ptr.cached && !level)
			check_replicas(gc, BCH_DATA_CACHED, 1ULL << dev, btree_id, level, k, what);
		else
			devs |= 1ULL << dev;

		b    = p.ptr.offset / d->bucket_size;
		st   = &d->state[b];
		bgen = d->gen[b];

		if (!gc->gens_ok) {
			/* alloc nodes unreadable (node pass): gens unknown, mark only */
		} else if (!(*st & B_HAS_KEY)) {
			if (!(*st & B_GEN_REPORTED))
				/* TODO(repair): write an alloc key for the bucket with the pointer's gen. */
				fsck_fix(gc->s, PROB_ptr_gen_missing,
					 "found ptr with missing gen in alloc btree: device %u bucket %" PRIu64
					 ", type %s gen %u:\n%s",
					 dev, b, level ? "btree" : "data", p.ptr.gen, WHAT());
			*st |= B_GEN_REPORTED;
		} else if (gen_after(p.ptr.gen, bgen)) {
			if (!(*st & B_GEN_REPORTED))
				/* TODO(repair): adopt the pointer's gen in the bucket's alloc key. */
				fsck_fix(gc->s, PROB_ptr_gen_newer,
					 "%s ptr gen in the future: %u > %u (device %u bucket %" PRIu64 "):\n%s",
					 level ? "btree" : "data", p.ptr.gen, bgen, dev, b, WHAT());
			*st |= B_GEN_REPORTED;
		} else if (gen_after(bgen, p.ptr.gen)) {
			/* Stale: the bucket was reused. Normal for cached data, which was given up. */
			if (!p.ptr.cached || level)
				/* TODO(repair): drop the pointer (its data is gone); the key goes when it was the last one. */
				fsck_fix(gc->s, PROB_ptr_gen_stale,
					 "%s pointer is stale: gen %u, device %u bucket %" PRIu64
					 " has gen %u (the bucket was reused):\n%s",
					 level ? "btree node" : "dirty data", p.ptr.gen, dev, b, bgen, WHAT());
			continue;	/* not marked */
		}
		mark_bucket(gc, dev, b, type, btree_id, level, k, what);
	}
	/* an invalid entry ended the pointers: reported by the key pass; those before it were checked */
	check_replicas(gc, type, devs, btree_id, level, k, what);
#undef WHAT
}

static int gc_visit_node(void *arg, const struct btree_node_visit *v)
{
	struct gc *gc = arg;

	if (v->ptr)
		gc_key(gc, v->btree_id, v->level + 1, v->ptr);
	return 0;
}

static int gc_btree_ptrs(struct gc *gc)
{
	for (unsigned id = 0; id < BCH_NR_BTREES && !gc->s->cancelled; id++) {
		int ret = bch_btree_walk_nodes(gc->c, id, gc_visit_node, gc, &gc->err);

		printbuf_reset(&gc->err);	/* node problems: node pass */
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int gc_extents(struct gc *gc)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	/*
	 * Keys the key pass found invalid are skipped; when it found none,
	 * checking each key again here would only cost time.
	 */
	bool recheck = gc->s->seen[PROB_btree_key_invalid] != 0;

	bch_btree_iter_init(&iter, gc->c, BTREE_ID_EXTENTS, POS_H_MIN, &gc->err);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k && !gc->s->cancelled) {
		if ((k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED) &&
		    (!recheck || !bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, k, &gc->ctx)))
			gc_key(gc, BTREE_ID_EXTENTS, 0, k);
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	printbuf_reset(&gc->err);
	return ret;
}

/* {journal, devices} of every entry still to replay, when every member is there. */
static void gc_journal_replicas(struct gc *gc)
{
	struct bch_fs *c = gc->c;
	const struct journal_state *j = &c->journal;

	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++) {
		const struct bch_member *m = bch_sb_member(c->sb, i);

		if (m && bch_member_exists(m) && (!c->devs[i] || !c->devs[i]->io))
			return;
	}
	for (size_t i = 0; i < j->nr_entries; i++) {
		const struct journal_entry_h *e = &j->entries[i];

		if (e->seq < j->last_seq)
			continue;
		printbuf_reset(&gc->key);
		pr_buf(&gc->key, "journal entry seq %" PRIu64, e->seq);
		check_replicas(gc, BCH_DATA_JOURNAL, e->dev_mask, 0, 0, NULL, printbuf_str(&gc->key));
	}
}

int bch_fsck_gc(struct bch_fs *c, struct fsck_state *s)
{
	struct gc *gc = xcalloc(1, sizeof(*gc));
	int ret;

	gc->c	= c;
	gc->s	= s;
	bch_fs_key_ctx(c, &gc->ctx);
	gc->ctx.bucket_gen = NULL;	/* gens are judged by this pass itself */
	gc->err = gc->key = gc->msg = PRINTBUF;
	gc->check_replicas = c->sb && bch_sb_field_find(c->sb, BCH_SB_FIELD_replicas);
	if (gc->check_replicas)
		bch_replicas_load(&gc->have, c->sb);

	ret = gc_devs_init(gc);
	if (!ret)
		gc_read_gens(gc);	/* failure: gens are not judged (gens_ok) */
	if (!ret) {
		gc_mark_sb_journal(gc);
		ret = gc_btree_ptrs(gc);
	}
	if (!ret)
		ret = gc_extents(gc);
	if (!ret)
		gc_journal_replicas(gc);
	/*
	 * A btree that cannot be walked was reported by the node and key
	 * passes; what GC could not see is not judged.
	 */
	ret = 0;

	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++) {
		free(gc->devs[i].gen);
		free(gc->devs[i].state);
	}
	bch_replicas_exit(&gc->have);
	bch_replicas_exit(&gc->reported);
	printbuf_exit(&gc->err);
	printbuf_exit(&gc->key);
	printbuf_exit(&gc->msg);
	free(gc);
	return ret;
}
