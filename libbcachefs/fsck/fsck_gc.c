// SPDX-License-Identifier: GPL-2.0
/*
 * fsck, allocation: mark and sweep as fsck runs it (doc/engine.md §8.2, doc/fsck.md §10, doc/engine.md §16),
 * and its repairs through the update engine (btree_update.h).
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
 *     is an error (doc/fsck.md §10); an older pointer is stale: normal for a
 *     cached pointer (its bucket was reused, doc/engine.md §8.5: it is only skipped),
 *     an error for a dirty pointer or a btree node pointer (its data was
 *     overwritten);
 *   - the kind of data of each bucket (superblock, journal, btree, user;
 *     stale pointers do not count): two kinds in one bucket are an error;
 *   - the superblock replicas entries (doc/format.md §2.9): {btree or user, devices of
 *     the non-cached pointers} for every key, {cached, [dev]} for every
 *     cached pointer, {journal, devices} for every journal entry to
 *     replay. Not checked when the superblock has no replicas field (the
 *     table is then rebuilt) nor, for the journal, when a member is
 *     missing.
 *
 * Repairs (fsck -y; each says what it does):
 *   - an extent pointer on a device that is not a member, past the end of
 *     its device, stale (dirty; its bucket holds other live data: the data
 *     was overwritten), or into a bucket of superblock, journal or btree
 *     data (marked before any extent): dropped, the value re-encoded
 *     without it; the extent is deleted (a discard over its range) when it
 *     was its last pointer;
 *   - a stale dirty pointer into a bucket with nothing live in it: a dirty
 *     pointer is never left behind when a bucket is reused, so the alloc
 *     gen is what is wrong: the bucket takes back the pointer's gen;
 *   - a pointer newer than its bucket: the bucket takes the pointer's gen
 *     (doc/fsck.md §10), unless live data of the bucket's gen was seen in it: then
 *     the pointer takes the bucket's gen (no data goes stale either way);
 *     later pointers stale only by a gen given here take it too;
 *   - a bucket with no alloc key: it takes the pointer's gen;
 *   - a btree node pointer with any of these problems: the node is
 *     rewritten to new buckets at the checkpoint;
 *   - a missing replicas entry: added (written with the superblocks).
 * Gens set here are written by the checkpoint's rebuild of the alloc
 * btree (bch_fs_rw_set_bucket_gen()). Two kinds of metadata in one bucket
 * are only reported (bucket_metadata_overlap).
 *
 * Nothing is counted for usage: nothing about usage is persisted in this
 * version (doc/ioctl.md §9.2). Leaves nothing for the filesystem passes (which see
 * the repaired extents: i_sectors follows).
 *
 * Memory: two bytes per bucket of each member (gen, state), two more per
 * bucket of a member once a gen is repaired.
 */
#include "fsck/fsck_gc.h"

#include "alloc/alloc.h"
#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "bkey/extents.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fsck/problems.h"
#include "journal/journal.h"
#include "fsck/problems.h"
#include "dev/super.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define B_TYPE_MASK	0x07	/* enum bch_data_type marked in the bucket */
#define B_HAS_KEY	0x08	/* the alloc btree has a key for it */
#define B_TYPE_REPORTED	0x10	/* two kinds of data: reported */
#define B_GEN_REPORTED	0x20	/* gen problem: reported */
#define B_GEN_FIXED	0x40	/* gen repaired: further pointers are repaired too */
#define B_LIVE		0x80	/* a live pointer at the bucket's gen was seen */

#define GEN_ORIG_UNKNOWN 0x100	/* orig_gen: the bucket had no alloc key */

#define GC_MAX_BUCKETS	(1ULL << 34)	/* beyond: geometry not believed */

struct gc_dev {
	bool		present;	/* member with a believable geometry */
	uint64_t	nbuckets;
	unsigned	bucket_size;
	unsigned	first_bucket;
	uint8_t		*gen;
	uint8_t		*state;		/* B_* */
	uint16_t	*orig_gen;	/* gens before repairs (allocated at the first) */
};

struct gc_stale {
	unsigned	dev;
	uint8_t		gen;
	uint64_t	bucket;
	struct bpos_h	pos;		/* the extent's */
	uint32_t	size;
};

struct fsck_gc {
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

	/* stale dirty extent pointers into buckets with no live data (yet): judged at the end */
	struct gc_stale		*stale;
	size_t			nr_stale, size_stale;
};

static const char *data_type_str(unsigned t)
{
	return bch_data_type_name(t) ?: "unknown";
}

/* "extents key <text>" / "btree node pointer <text>" for messages. */
static const char *key_text(struct fsck_gc *gc, unsigned btree_id, unsigned level,
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

static int gc_devs_init(struct fsck_gc *gc)
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
		d->gen		= bch_big_zalloc(d->nbuckets);
		d->state	= bch_big_zalloc(d->nbuckets);
	}
	return 0;
}

/* The gen of alloc key @k (invalid keys: the key pass reports them). */
static void gc_gen_key(struct fsck_gc *gc, const struct bkey_ref *k)
{
	struct gc_dev *d = k->k.p.inode < BCH_FS_MAX_DEVS ? &gc->devs[k->k.p.inode] : NULL;
	struct bch_alloc_h a;

	if (k->k.type != BCH_ALLOC || !d || !d->present || k->k.p.offset >= d->nbuckets ||
	    bch_alloc_decode(k, &a))
		return;
	d->gen[k->k.p.offset]	= a.gen;
	d->state[k->k.p.offset]	|= B_HAS_KEY;
}

/* Gens of the alloc btree with the journal laid over it. */
static int gc_read_gens(struct fsck_gc *gc)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	bch_btree_iter_init(&iter, gc->c, BTREE_ID_ALLOC, POS_H_MIN, &gc->err);
	while (!(ret = bch_btree_iter_next(&iter, &k)) && k)
		gc_gen_key(gc, k);
	gc->gens_ok = !ret && !iter.nr_errors;
	bch_btree_iter_exit(&iter);
	printbuf_reset(&gc->err);
	return ret;
}

/*
 * Bucket @b of device @dev holds data of type @type (for the key @what,
 * or key @k formatted only when a problem is reported). Returns true when
 * the pointer of an extent (@type user) must be dropped: its bucket holds
 * a superblock, the journal or a btree node (marked before any extent),
 * which overwrote its data. Two kinds of metadata in one bucket cannot be
 * decided: reported only.
 */
static bool mark_bucket(struct fsck_gc *gc, unsigned dev, uint64_t b, unsigned type,
			unsigned btree_id, unsigned level, const struct bkey_ref *k,
			const char *what)
{
	struct gc_dev *d = &gc->devs[dev];
	uint8_t *st = &d->state[b];
	unsigned old = *st & B_TYPE_MASK;

	if (old && old != type) {
		bool drop = false;

		if (!what)
			what = k ? key_text(gc, btree_id, level, k) : "";
		if (type == BCH_DATA_USER && k && !level)
			drop = fsck_fix(gc->s, PROB_bucket_data_type_mismatch,
					"device %u bucket %" PRIu64 ": different types of data in same bucket: %s, %s%s%s\n"
					"(the %s in it overwrote the data of the pointer: %s)",
					dev, b, data_type_str(old), data_type_str(type),
					*what ? "\n" : "", what, data_type_str(old),
					extent_nr_ptrs(k) > 1 ? "dropping it" : "deleting the extent");
		else if (!(*st & B_TYPE_REPORTED))
			fsck_fix(gc->s, PROB_bucket_metadata_overlap,
				 "device %u bucket %" PRIu64 ": different types of data in same bucket: %s, %s%s%s",
				 dev, b, data_type_str(old), data_type_str(type),
				 *what ? "\n" : "", what);
		if (!drop)
			*st |= B_TYPE_REPORTED;
		return drop;
	}
	*st = (uint8_t)((*st & ~B_TYPE_MASK) | type);
	return false;
}

static void mark_range(struct fsck_gc *gc, unsigned dev, uint64_t start, uint64_t end, unsigned type,
		       const char *what)
{
	struct gc_dev *d = &gc->devs[dev];

	for (uint64_t b = start / d->bucket_size; b < d->nbuckets && b * d->bucket_size < end; b++)
		mark_bucket(gc, dev, b, type, 0, 0, NULL, what);
}

/* Superblock copies (and the sectors before the first) and journal buckets (doc/engine.md §8.2). */
static void gc_mark_sb_journal(struct fsck_gc *gc)
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
static void check_replicas(struct fsck_gc *gc, unsigned type, uint64_t devs,
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
	if (fsck_fix(gc->s, PROB_replicas_entry_missing,
		 "superblock not marked as containing replicas (type %u %s, devices %s), needed by\n%s",
		 type, data_type_str(type), printbuf_str(&gc->msg),
		 what ?: key_text(gc, btree_id, level, k)) &&
	    !bch_fs_rw_replicas_add(gc->c, type, devs))
		fsck_fix_failed(gc->s, PROB_replicas_entry_missing, "the filesystem is not writable");
}

/*
 * fsck -y: bucket @b of @dev takes gen @gen (written by the checkpoint's
 * alloc rebuild). Its gen as found is kept: pointers stale only by the
 * new gen keep their data (they take the new gen too).
 */
static bool gc_set_gen(struct fsck_gc *gc, unsigned dev, uint64_t b, uint8_t gen)
{
	struct gc_dev *d = &gc->devs[dev];

	if (!bch_fs_rw_set_bucket_gen(gc->c, dev, b, gen))
		return false;
	if (!d->orig_gen) {
		d->orig_gen = xmalloc(d->nbuckets * sizeof(*d->orig_gen));
		for (uint64_t i = 0; i < d->nbuckets; i++)
			d->orig_gen[i] = d->state[i] & B_HAS_KEY ? d->gen[i] : GEN_ORIG_UNKNOWN;
	}
	d->gen[b] = gen;
	d->state[b] |= B_GEN_FIXED | B_HAS_KEY;
	return true;
}

/* Was a pointer of gen @gen into bucket @b stale before any repair? */
static bool gc_was_stale(const struct gc_dev *d, uint64_t b, uint8_t gen)
{
	uint16_t o = d->orig_gen ? d->orig_gen[b] : d->gen[b];

	return o != GEN_ORIG_UNKNOWN && gen_after((uint8_t)o, gen);
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
static unsigned gc_key_ptrs(struct fsck_gc *gc, unsigned level, const struct bkey_ref *k,
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

#define PTR_KEEP	(-1)
#define PTR_DROP	(-2)

/*
 * Extent @k with its pointers changed as @fix says (indexed as the pointer
 * entries come): PTR_KEEP, PTR_DROP, or a new gen. A crc entry stays when
 * a pointer after it stays. Commits the new key, or a discard over its
 * range when no pointer is left (its data is gone: every copy was
 * overwritten or is on no device).
 */
static void gc_fix_ptrs(struct fsck_gc *gc, const struct bkey_ref *k, const int16_t *fix,
			enum bch_problem p)
{
	struct btree_trans t;
	struct extent_entry_iter it;
	struct extent_entry_h e;
	uint64_t *v = xcalloc(k->v_bytes / 8 + 1, 8);
	unsigned bytes = 0, idx = 0, nr_kept = 0;
	int crc_off = -1, crc_bytes = 0;

	extent_entry_iter_init(&it, k);
	while (extent_entry_iter_next(&it, &e) > 0) {
		struct bch_extent_ptr w;
		int16_t f;

		if (e.type != BCH_EXTENT_ENTRY_ptr) {
			crc_off = (int)e.offset;	/* applies to the pointers after it */
			crc_bytes = (int)e.u64s * 8;
			continue;
		}
		f = idx < GC_KEY_MAX_PTRS ? fix[idx] : PTR_KEEP;
		idx++;
		if (f == PTR_DROP)
			continue;
		if (crc_off >= 0) {
			memcpy((uint8_t *)v + bytes, (const uint8_t *)k->v + crc_off, (size_t)crc_bytes);
			bytes += (unsigned)crc_bytes;
			crc_off = -1;
		}
		memcpy(&w, (const uint8_t *)k->v + e.offset, 8);
		if (f >= 0) {
			struct bch_extent_ptr_unpacked u = bch_extent_ptr_unpack(&w);

			u.gen = (uint8_t)f;
			w = bch_extent_ptr_pack(&u);
		}
		memcpy((uint8_t *)v + bytes, &w, 8);
		bytes += 8;
		nr_kept++;
	}

	bch_trans_init(&t, gc->c);
	if (nr_kept)
		bch_trans_update(&t, BTREE_ID_EXTENTS, &k->k, v, bytes);
	else
		bch_trans_delete_extents(&t, k->k.p.inode, k->k.p.offset - k->k.size, k->k.p.offset);
	fsck_commit(gc->s, p, &t);
	bch_trans_exit(&t);
	free(v);
}

/* A btree node pointer is bad: the node goes to new buckets. */
static void gc_rewrite_node(struct fsck_gc *gc, unsigned btree_id, unsigned level,
			    const struct bkey_ref *k)
{
	bch_fs_rw_force_rewrite(gc->c, btree_id, level - 1, k->k.p);
}

/*
 * Check and mark the pointers of @k: a btree node pointer (@level > 0,
 * data BTREE) or an extent (level 0, data USER).
 *
 * Repairs (fsck -y): an extent pointer that is stale (dirty), on a device
 * that is not a member, past the end of its device or into a bucket of
 * metadata is dropped (the extent goes when it was its last pointer); a
 * btree node pointer with such a problem has its node rewritten to new
 * buckets; a bucket with no alloc key or an older gen than a pointer
 * takes the pointer's gen (written by the checkpoint's alloc rebuild);
 * missing replicas entries are added.
 */
/* One key being checked by gc_key(): what its repairs will do. */
struct gc_key_ctx {
	struct fsck_gc		*gc;
	unsigned		btree_id, level;
	const struct bkey_ref	*k;
	const char		*what;		/* the key's text, made when first needed */
	const char		*act;		/* what a repair does, for the messages */
	int16_t			fix[GC_KEY_MAX_PTRS];	/* per pointer: PTR_KEEP, PTR_DROP, a gen */
	enum bch_problem	drop_prob;	/* the first problem repaired (PROB_NR: none) */
	bool			rewrite;	/* a btree node pointer: rewrite the node */
	uint64_t		devs;		/* devices of the live dirty pointers */
};

static const char *gk_what(struct gc_key_ctx *x)
{
	return x->what ?: (x->what = key_text(x->gc, x->btree_id, x->level, x->k));
}

/* Pointer @i is dropped (PTR_DROP) or takes gen @v; a node pointer: the node is rewritten. */
static void gk_fix(struct gc_key_ctx *x, unsigned i, int16_t v, enum bch_problem p)
{
	if (x->level)
		x->rewrite = true;
	else
		x->fix[i] = v;
	if (x->drop_prob == PROB_NR)
		x->drop_prob = p;
}

enum gk_gen { GK_SKIP, GK_MARK, GK_LIVE };

/*
 * The gen of pointer @i against its bucket @b: GK_LIVE (marked live),
 * GK_MARK (marked, not live: a gen repair pending) or GK_SKIP (not marked:
 * stale, or decided later).
 */
static enum gk_gen gc_key_gen(struct gc_key_ctx *x, unsigned i, const struct gc_ptr *p,
			      struct gc_dev *d, uint64_t b)
{
	struct fsck_gc *gc = x->gc;
	unsigned dev = p->ptr.dev, level = x->level;
	uint8_t *st = &d->state[b], bgen = d->gen[b];

	if (!gc->gens_ok) {
		/*
		 * Alloc nodes unreadable (node pass): gens unknown, mark
		 * only; the rebuilt alloc btree takes the newest gen of
		 * the pointers (part of the alloc node's repair).
		 */
		uint8_t g;

		if (!gc->s->read_only && bch_fs_rw_bucket_gen(gc->c, dev, b, &g) &&
		    gen_after(p->ptr.gen, g))
			bch_fs_rw_set_bucket_gen(gc->c, dev, b, p->ptr.gen);
		return GK_LIVE;
	}
	if (!(*st & B_HAS_KEY)) {
		if (!(*st & B_GEN_REPORTED) &&
		    fsck_fix(gc->s, PROB_ptr_gen_missing,
			     "found ptr with missing gen in alloc btree: device %u bucket %" PRIu64
			     ", type %s gen %u:\n%s\n(the bucket takes gen %u)",
			     dev, b, level ? "btree" : "data", p->ptr.gen, gk_what(x), p->ptr.gen) &&
		    !gc_set_gen(gc, dev, b, p->ptr.gen))
			fsck_fix_failed(gc->s, PROB_ptr_gen_missing, "the filesystem is not writable");
		*st |= B_GEN_REPORTED;
		return *st & B_HAS_KEY ? GK_LIVE : GK_MARK;
	}
	if (gen_after(p->ptr.gen, bgen)) {
		/*
		 * Newer than its bucket: the bucket takes the pointer's
		 * gen, unless a live pointer of the bucket's gen was seen:
		 * then this pointer takes the bucket's (no data is lost
		 * either way; doc/fsck.md §10 adopts the pointer's gen).
		 */
		bool lower = *st & B_LIVE;

		if ((!(*st & B_GEN_REPORTED) || (*st & B_GEN_FIXED)) &&
		    fsck_fix(gc->s, PROB_ptr_gen_newer,
			     "%s ptr gen in the future: %u > %u (device %u bucket %" PRIu64 "):\n%s\n(%s %u)",
			     level ? "btree" : "data", p->ptr.gen, bgen, dev, b, gk_what(x),
			     !lower ? "the bucket takes gen"
			     : level ? "the bucket holds other live data: rewriting the node; it keeps gen"
			     : "the bucket holds other live data: the pointer takes its gen",
			     lower ? bgen : p->ptr.gen)) {
			if (lower) {
				gk_fix(x, i, bgen, PROB_ptr_gen_newer);
				*st |= B_GEN_FIXED;
			} else if (!gc_set_gen(gc, dev, b, p->ptr.gen)) {
				fsck_fix_failed(gc->s, PROB_ptr_gen_newer, "the filesystem is not writable");
			}
		}
		*st |= B_GEN_REPORTED;
		return *st & B_GEN_FIXED ? GK_LIVE : GK_MARK;
	}
	if (gen_after(bgen, p->ptr.gen) && (*st & B_GEN_FIXED) &&
	    !gc_was_stale(d, b, p->ptr.gen)) {
		/* stale only by a gen this run gave the bucket: it takes that gen too */
		gk_fix(x, i, bgen, PROB_ptr_gen_newer);
		return GK_LIVE;
	}
	if (!gen_after(bgen, p->ptr.gen))
		return GK_LIVE;

	/* Stale: the bucket was reused. Normal for cached data, which was given up. */
	if (!p->ptr.cached && !level && !(*st & (B_LIVE | B_TYPE_MASK))) {
		/*
		 * Nothing live in the bucket so far: decided when every
		 * pointer was seen (gc_stale_resolve()).
		 */
		if (gc->nr_stale == gc->size_stale) {
			gc->size_stale = gc->size_stale ? 2 * gc->size_stale : 16;
			gc->stale = xrealloc(gc->stale, gc->size_stale * sizeof(*gc->stale));
		}
		gc->stale[gc->nr_stale++] = (struct gc_stale) {
			.dev = dev, .bucket = b, .gen = p->ptr.gen, .pos = x->k->k.p,
			.size = x->k->k.size,
		};
		x->devs |= 1ULL << dev;
	} else if (!p->ptr.cached || level) {
		if (fsck_fix(gc->s, PROB_ptr_gen_stale,
			     "%s pointer is stale: gen %u, device %u bucket %" PRIu64
			     " has gen %u (the bucket was reused):\n%s%s",
			     level ? "btree node" : "dirty data", p->ptr.gen, dev, b, bgen,
			     gk_what(x), x->act))
			gk_fix(x, i, PTR_DROP, PROB_ptr_gen_stale);
		else if (!p->ptr.cached)
			x->devs |= 1ULL << dev;	/* as found */
	}
	return GK_SKIP;
}

/* Pointer @i of the key: its device and range, its gen, then its bucket marked. */
static void gc_key_ptr(struct gc_key_ctx *x, unsigned i, const struct gc_ptr *p)
{
	struct fsck_gc *gc = x->gc;
	unsigned dev = p->ptr.dev, type = x->level ? BCH_DATA_BTREE : BCH_DATA_USER;
	struct gc_dev *d = dev < BCH_FS_MAX_DEVS ? &gc->devs[dev] : NULL;
	uint64_t sectors = p->sectors, b;

	if (dev >= BCH_FS_MAX_DEVS || dev >= gc->c->nr_devices || !gc->c->devs[dev]) {
		if (fsck_fix(gc->s, PROB_ptr_dev_missing,
			     "pointer to device %u, which is not a member:\n%s%s",
			     dev, gk_what(x), x->act))
			gk_fix(x, i, PTR_DROP, PROB_ptr_dev_missing);
		return;
	}
	if (!d->present)
		return;	/* geometry unknown: nothing to judge against */
	if (p->ptr.offset < (uint64_t)d->first_bucket * d->bucket_size ||
	    p->ptr.offset >= d->nbuckets * d->bucket_size ||
	    sectors > d->nbuckets * d->bucket_size - p->ptr.offset) {
		if (fsck_fix(gc->s, PROB_ptr_past_end,
			     "pointer to device %u sector %" PRIu64 " (+%" PRIu64 ") outside buckets %u..%" PRIu64 ":\n%s%s",
			     dev, (uint64_t)p->ptr.offset, sectors, d->first_bucket, d->nbuckets,
			     gk_what(x), x->act))
			gk_fix(x, i, PTR_DROP, PROB_ptr_past_end);
		return;
	}

	b = p->ptr.offset / d->bucket_size;
	switch (gc_key_gen(x, i, p, d, b)) {
	case GK_SKIP:
		return;
	case GK_LIVE:
		d->state[b] |= B_LIVE;
		break;
	case GK_MARK:
		break;
	}
	if (mark_bucket(gc, dev, b, type, x->btree_id, x->level, x->k, x->what)) {
		gk_fix(x, i, PTR_DROP, PROB_bucket_data_type_mismatch);
		return;
	}
	if (p->ptr.cached && !x->level)
		check_replicas(gc, BCH_DATA_CACHED, 1ULL << dev, x->btree_id, x->level, x->k, x->what);
	else
		x->devs |= 1ULL << dev;
}

static void gc_key(struct fsck_gc *gc, unsigned btree_id, unsigned level, const struct bkey_ref *k)
{
	struct gc_ptr ptrs[GC_KEY_MAX_PTRS];
	unsigned i, nr = gc_key_ptrs(gc, level, k, ptrs);
	struct gc_key_ctx x;

	/*
	 * Each field set here, not by an initializer: that cleared the
	 * whole of fix[] (512 bytes) for every key, a third of the time of
	 * this function on a clean filesystem. The entries past the
	 * pointers are cleared only for a repair (below).
	 */
	x.gc		= gc;
	x.btree_id	= btree_id;
	x.level		= level;
	x.k		= k;
	x.what		= NULL;
	x.act		= level ? "\n(rewriting the node to new buckets)"
			: nr > 1 ? "\n(dropping the pointer)"
			: "\n(deleting the extent: it has no other pointer)";
	x.drop_prob	= PROB_NR;
	x.rewrite	= false;
	x.devs		= 0;
	for (i = 0; i < nr; i++)
		x.fix[i] = PTR_KEEP;
	for (i = 0; i < nr; i++)
		gc_key_ptr(&x, i, &ptrs[i]);
	/* an invalid entry ended the pointers: reported by the key pass; those before it were checked */
	check_replicas(gc, level ? BCH_DATA_BTREE : BCH_DATA_USER, x.devs, btree_id, level, k, x.what);
	if (x.drop_prob != PROB_NR) {
		if (x.rewrite) {
			gc_rewrite_node(gc, btree_id, level, k);
		} else {
			/* (gc_fix_ptrs() reads an entry for every pointer of the value) */
			memset(x.fix + nr, 0, (GC_KEY_MAX_PTRS - nr) * sizeof(x.fix[0]));
			gc_fix_ptrs(gc, k, x.fix, x.drop_prob);
		}
	}
}

static int gc_visit_node(void *arg, const struct btree_node_visit *v)
{
	struct fsck_gc *gc = arg;

	if (v->ptr)
		gc_key(gc, v->btree_id, v->level + 1, v->ptr);
	return 0;
}

static int gc_btree_ptrs(struct fsck_gc *gc)
{
	for (unsigned id = 0; id < BCH_NR_BTREES && !gc->s->cancelled; id++) {
		int ret = bch_btree_walk_nodes(gc->c, id, gc_visit_node, gc, &gc->err);

		printbuf_reset(&gc->err);	/* node problems: node pass */
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int gc_extents(struct fsck_gc *gc)
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
static void gc_journal_replicas(struct fsck_gc *gc)
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

/*
 * Stale dirty pointers into buckets that had nothing live when they were
 * seen. A dirty pointer is never left behind when its bucket is reused:
 * when the bucket still holds nothing else (no live pointer, no metadata),
 * its gen is what is wrong (a damaged alloc key): the bucket takes back
 * the newest gen of these pointers, and they stay. Otherwise the bucket
 * was reused and the data overwritten: the pointers are dropped (the
 * extent goes with its last pointer).
 */
static void gc_stale_resolve(struct fsck_gc *gc)
{
	for (size_t i = 0; i < gc->nr_stale && !gc->s->cancelled; i++) {
		struct gc_stale *e = &gc->stale[i];
		struct gc_dev *d = &gc->devs[e->dev];
		uint8_t *st = &d->state[e->bucket];
		uint8_t newest = e->gen;
		bool reused = *st & (B_LIVE | B_TYPE_MASK);
		struct btree_iter iter;
		struct bkey_ref *k;
		struct printbuf err = PRINTBUF;
		int16_t fix[GC_KEY_MAX_PTRS];
		struct gc_ptr ptrs[GC_KEY_MAX_PTRS];
		unsigned nr, nr_match = 0;

		for (size_t j = 0; j < gc->nr_stale; j++)
			if (gc->stale[j].dev == e->dev && gc->stale[j].bucket == e->bucket &&
			    gen_after(gc->stale[j].gen, newest))
				newest = gc->stale[j].gen;
		if (!reused && gen_after(newest, e->gen))
			reused = true;	/* an older use of the bucket */

		bch_btree_iter_init(&iter, gc->c, BTREE_ID_EXTENTS,
				    POS_H(e->pos.inode, e->pos.offset - e->size), &err);
		while (!bch_btree_iter_peek(&iter, &k) && k && bpos_cmp(k->k.p, e->pos) < 0)
			bch_btree_iter_advance(&iter);
		if (!k || bpos_cmp(k->k.p, e->pos) ||
		    (k->k.type != BCH_EXTENT && k->k.type != BCH_EXTENT_CACHED)) {
			bch_btree_iter_exit(&iter);
			printbuf_exit(&err);
			continue;
		}
		nr = gc_key_ptrs(gc, 0, k, ptrs);
		for (unsigned p = 0; p < nr; p++) {
			const struct bch_extent_ptr_unpacked *ptr = &ptrs[p].ptr;

			fix[p] = PTR_KEEP;
			if (ptr->dev == e->dev && !ptr->cached &&
			    ptr->offset / d->bucket_size == e->bucket && ptr->gen == e->gen) {
				fix[p] = PTR_DROP;
				nr_match++;
			}
		}
		if (!nr_match) {
			bch_btree_iter_exit(&iter);
			printbuf_exit(&err);
			continue;
		}
		if (reused) {
			if (fsck_fix(gc->s, PROB_ptr_gen_stale,
				     "dirty data pointer is stale: gen %u, device %u bucket %" PRIu64
				     " has gen %u (the bucket was reused):\n%s\n(%s)",
				     e->gen, e->dev, e->bucket, d->gen[e->bucket],
				     key_text(gc, BTREE_ID_EXTENTS, 0, k),
				     nr_match < nr ? "dropping the pointer"
						   : "deleting the extent: it has no other pointer"))
				gc_fix_ptrs(gc, k, fix, PROB_ptr_gen_stale);
		} else if (fsck_fix(gc->s, PROB_ptr_gen_stale,
				    "dirty data pointer is stale: gen %u, device %u bucket %" PRIu64
				    " has gen %u, but nothing else is in the bucket: its gen is wrong:\n%s\n"
				    "(the bucket takes back gen %u)",
				    e->gen, e->dev, e->bucket, d->gen[e->bucket],
				    key_text(gc, BTREE_ID_EXTENTS, 0, k), newest)) {
			if (gc_set_gen(gc, e->dev, e->bucket, newest))
				/* the engine took the bucket for free: the data is in use */
				bch_fs_rw_mark_in_use(gc->c, BTREE_ID_EXTENTS, k);
			else
				fsck_fix_failed(gc->s, PROB_ptr_gen_stale, "the filesystem is not writable");
		}
		bch_btree_iter_exit(&iter);
		printbuf_exit(&err);
	}
}

struct fsck_gc *bch_fsck_gc_start(struct bch_fs *c, struct fsck_state *s, bool read_gens)
{
	struct fsck_gc *gc = xcalloc(1, sizeof(*gc));

	gc->c	= c;
	gc->s	= s;
	bch_fs_key_ctx(c, &gc->ctx);
	gc->ctx.bucket_gen = NULL;	/* gens are judged by this pass itself */
	gc->err = gc->key = gc->msg = PRINTBUF;
	gc->check_replicas = c->sb && bch_sb_field_find(c->sb, BCH_SB_FIELD_replicas);
	if (gc->check_replicas)
		bch_replicas_load(&gc->have, c->sb);

	gc_devs_init(gc);
	if (read_gens)
		gc_read_gens(gc);	/* failure: gens are not judged (gens_ok) */
	gc_mark_sb_journal(gc);
	return gc;
}

void bch_fsck_gc_alloc_key(struct fsck_gc *gc, const struct bkey_ref *k)
{
	gc_gen_key(gc, k);
}

void bch_fsck_gc_gens_read(struct fsck_gc *gc, bool ok)
{
	gc->gens_ok = ok;
}

void bch_fsck_gc_key(struct fsck_gc *gc, unsigned btree_id, unsigned level, const struct bkey_ref *k)
{
	if (level || k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED)
		gc_key(gc, btree_id, level, k);
}

void bch_fsck_gc_finish(struct fsck_gc *gc, bool judge)
{
	if (judge) {
		gc_stale_resolve(gc);
		gc_journal_replicas(gc);
	}
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++) {
		bch_big_free(gc->devs[i].gen);
		bch_big_free(gc->devs[i].state);
		free(gc->devs[i].orig_gen);
	}
	bch_replicas_exit(&gc->have);
	bch_replicas_exit(&gc->reported);
	printbuf_exit(&gc->err);
	printbuf_exit(&gc->key);
	printbuf_exit(&gc->msg);
	free(gc->stale);
	free(gc);
}

int bch_fsck_gc(struct bch_fs *c, struct fsck_state *s)
{
	struct fsck_gc *gc = bch_fsck_gc_start(c, s, true);
	int ret = gc_btree_ptrs(gc);

	if (!ret)
		ret = gc_extents(gc);
	bch_fsck_gc_finish(gc, !ret);
	/*
	 * A btree that cannot be walked was reported by the node and key
	 * passes; what GC could not see is not judged.
	 */
	return 0;
}
