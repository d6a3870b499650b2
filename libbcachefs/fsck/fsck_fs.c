// SPDX-License-Identifier: GPL-2.0
/*
 * fsck, filesystem level (spec 40 §40.8; detection side).
 *
 * Runs after the node and key passes (fsck.c) and the mark and sweep
 * (fsck_gc.c): keys that fail their type's checks were reported there and
 * are skipped here. The passes share one in-memory table, built first:
 *
 *   inodes	one record per inode key of type 128 (inum, type, stored nlink,
 *		size, sectors, flags, hash seed) in inum order, found by binary
 *		search; plus what the passes count into it (sectors of extents,
 *		dirents pointing to it, subdirectory dirents in it);
 *   edges	(directory, subdirectory) for every dirent that will stay and
 *		points to a directory, for the directory walk.
 *
 * Passes, in order (each function opens with what it checks and what it
 * leaves for the next):
 *
 *   1. extents		extents of missing / non-file inodes, past i_size,
 *			i_sectors recount;
 *   2. dirents		owner missing or not a directory, hash positions,
 *			duplicates, empty / "." / ".." names, dirents to their
 *			own directory or to missing inodes, d_type;
 *   3. xattrs		owner missing, hash positions, duplicates;
 *   4. root		inode 4096 present and a directory;
 *   5. lost+found	present in the root and a directory;
 *   6. directory structure  every directory reachable from the root,
 *			exactly one dirent to each directory;
 *   7. link counts	stored nlink against the dirents found, orphaned
 *			inodes, I_SIZE_DIRTY / I_SECTORS_DIRTY.
 *
 * Every finding goes through fsck_fix(); when it says to fix, the repair
 * is one transaction of the update engine (btree_update.h) committed with
 * fsck_commit(), and the table is updated only once it is committed. The
 * passes judge the filesystem as it will be once repaired (a dirent that
 * will be removed is not counted, a root directory whose mode was damaged
 * is treated as a directory...), so one problem is reported once and not
 * again through its consequences; under -n the same judgement is made
 * without writing.
 *
 * The repairs (a missing root is found before pass 1):
 *   root missing		an empty root with a new hash seed; its dirents
 *				stay, moved to where the new seed hashes them
 *   extents of a missing or non-file inode	deleted
 *   extent past i_size		the extents from round_up(i_size) on deleted
 *				(the straddling one cut), bi_sectors recounted;
 *				a symlink whose data holds a target gets i_size
 *				= the target's length instead
 *   i_sectors wrong / I_SECTORS_DIRTY	bi_sectors = the recount
 *   I_SIZE_DIRTY		flag cleared, i_size raised to cover the data of
 *				the extents (nothing discarded)
 *   dirent / xattr of a missing owner, dirent in a non-directory	deleted
 *   bad dirent (empty, ".", "..", to itself, to a missing inode) and
 *   duplicates			hash-deleted: a whiteout when a later entry of
 *				the run probed past it (40 §40.6.3)
 *   key at the wrong hash offset	hash-deleted and inserted again at the
 *				first free slot from its hash (a duplicate of an
 *				entry met there is only deleted)
 *   d_type			rewritten
 *   root not a directory	mode S_IFDIR | 0755, everything else kept
 *   lost+found missing / not a directory	a new one (inode above every
 *				number in use, or the first free one when that
 *				is past the limit: 2^32 with 32 bit inodes),
 *				its dirent in the root, root nlink + 1
 *   directory with several dirents	the first reached from the root stays
 *   unreachable directory / orphan inode	reattached under lost+found,
 *				named after its number (lost+found nlink + 1 for
 *				a directory; the dirent closing a loop goes);
 *				files are never deleted
 *   link count			stored as counted (bias of inode.h)
 *
 * Memory: one fixed-size record per inode and one pair per subdirectory
 * link, grown geometrically; no per-inode allocation, no quadratic step.
 */
#include "fsck/fsck_fs.h"

#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "bkey/dirent.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fsck/problems.h"
#include "fs/fsread.h"
#include "bkey/inode.h"
#include "btree/node_write.h"
#include "fsck/problems.h"
#include "util/util.h"
#include "bkey/xattr.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- in-memory tables ---------------------------------------------------- */

#define FI_REACHED	(1U << 0)	/* directory walk reached it */
#define FI_WALK		(1U << 1)	/* on the parent chain being followed */
#define FI_FORCE_DIR	(1U << 2)	/* the root: treated as the directory it must be */
#define FI_FIX_LINKS	(1U << 3)	/* remove its extra dirents (multiple links being fixed) */
#define FI_VIRTUAL	(1U << 4)	/* the missing root, not recreated: stands in for it */

#define IDX_NONE	UINT32_MAX

struct fsck_inode {
	uint64_t	inum;
	uint64_t	size;
	uint64_t	sectors;	/* stored bi_sectors */
	uint64_t	sectors_found;	/* recount from the extents */
	uint64_t	hash_seed;
	uint32_t	flags;		/* bi_flags */
	uint32_t	nlink;		/* stored bi_nlink (without the bias) */
	uint32_t	count;		/* dirents pointing to it */
	uint32_t	dir_count;	/* dirents in it pointing to directories */
	uint32_t	first_edge;	/* its subdirectory links: edges[first_edge..+nr_edges) */
	uint32_t	nr_edges;
	uint32_t	parent;		/* index of a directory holding a dirent to it */
	uint16_t	mode;
	uint8_t		state;		/* FI_* */
};

struct fsck_edge {
	uint32_t	parent;		/* inode indexes */
	uint32_t	child;
	uint64_t	offset;		/* of the dirent in the parent */
};

/* Names of the live entries of one probe run, to find duplicates. */
struct run_slot {
	uint64_t	hash;
	uint32_t	gen;		/* == run gen: in use */
	uint32_t	name_off;
	uint32_t	name_len;
	uint8_t		type;
};

struct hash_run {
	uint64_t	inum;
	uint64_t	start;		/* offset of the first key of the run */
	uint64_t	last;		/* offset of the last key seen */
	bool		active;
	uint32_t	gen;
	struct run_slot	*slots;
	size_t		nr_slots;	/* power of two */
	size_t		used;
	uint8_t		*names;
	size_t		names_len, names_size;
};

struct fsck_fs {
	struct bch_fs		*c;
	struct fsck_state	*s;
	bool			stop;		/* a btree could not be read: checks would mislead */
	bool			clean;		/* superblock CLEAN flag */
	unsigned		block_bytes;

	struct fsck_inode	*inodes;
	size_t			nr_inodes, inodes_size;

	struct fsck_edge	*edges;
	size_t			nr_edges, edges_size;

	bool			lf_dirent;	/* a "lost+found" dirent in the root */
	uint64_t		lf_inum;
	uint64_t		next_inum;	/* above every inode number met below inum_end */
	uint64_t		inum_end;	/* new inode numbers are below it (2^32: inodes_32bit) */

	/* hashed keys moved ahead of the iterator (already checked and counted) */
	struct bpos_h		*moved;
	size_t			nr_moved, moved_size;

	/* deletions of keys whose owner is missing, committed together */
	struct btree_trans	batch;
	enum bch_problem	batch_p;
	unsigned long		batch_fixes;

	struct hash_run		run;
	struct printbuf		err;		/* node problems: already reported by the node pass */
	struct printbuf		key;		/* key text for messages */
};

static inline unsigned mode_dt(uint16_t mode)
{
	return (mode >> 12) & 15;
}

static inline bool fi_is_dir(const struct fsck_inode *fi)
{
	return mode_dt(fi->mode) == BCH_DT_DIR || (fi->state & FI_FORCE_DIR);
}

static inline unsigned fi_dt(const struct fsck_inode *fi)
{
	return fi_is_dir(fi) ? BCH_DT_DIR : mode_dt(fi->mode);
}

/* i_nlink as the inode will be read once its type is right. */
static inline uint64_t fi_nlink(const struct fsck_inode *fi)
{
	return (uint64_t)fi->nlink + (fi_is_dir(fi) ? 2 : 1);
}

static inline void inc_sat(uint32_t *v)
{
	if (*v != UINT32_MAX)
		(*v)++;
}

static struct fsck_inode *inode_find(struct fsck_fs *f, uint64_t inum)
{
	size_t l = 0, r = f->nr_inodes;

	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (f->inodes[m].inum < inum)
			l = m + 1;
		else
			r = m;
	}
	return l < f->nr_inodes && f->inodes[l].inum == inum ? &f->inodes[l] : NULL;
}

static inline uint32_t fi_idx(const struct fsck_fs *f, const struct fsck_inode *fi)
{
	return (uint32_t)(fi - f->inodes);
}

static const char *key_text(struct fsck_fs *f, unsigned btree_id, const struct bkey_ref *k)
{
	printbuf_reset(&f->key);
	bch_bkey_to_text(&f->key, btree_id, 0, k, NULL);
	return printbuf_str(&f->key);
}

/* End an iteration: node problems were the node pass's; a walk error stops the checks. */
static int iter_end(struct fsck_fs *f, struct btree_iter *iter, int ret)
{
	bch_btree_iter_exit(iter);
	printbuf_reset(&f->err);
	if (ret < 0)
		f->stop = true;		/* reported by the key pass */
	return 0;
}

/* ---- repairs (through the update engine, btree_update.h) --------------------- */

/*
 * Every repair reads what it changes from the btrees (the journal and the
 * overlay of earlier commits laid over them), builds one transaction and
 * commits it with fsck_commit(), which counts the problem as not fixed when
 * the commit fails. The in-memory table is updated only after a commit
 * succeeded, so the later passes judge the filesystem as it now is.
 */

#define DIR_MODE	0040755

/* Restart @iter at @pos: the keys committed since it read its leaf become visible. */
static void iter_restart(struct fsck_fs *f, struct btree_iter *iter, unsigned btree_id,
			 struct bpos_h pos)
{
	bch_btree_iter_exit(iter);
	printbuf_reset(&f->err);
	bch_btree_iter_init(iter, f->c, btree_id, pos, &f->err);
}

static void seen_inum(struct fsck_fs *f, uint64_t inum)
{
	if (inum >= f->next_inum && inum < f->inum_end)
		f->next_inum = inum + 1;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A number for a new inode, below inum_end: above every number met
 * (next_inum) when there is one, else the first from 4097 on that no key
 * of the inodes, extents, dirents or xattrs btree has and no dirent points
 * to. -ENOSPC when every number is taken, -EIO when a btree cannot be read.
 */
static int inum_new(struct fsck_fs *f, uint64_t *inum)
{
	static const unsigned btrees[] = {
		BTREE_ID_INODES, BTREE_ID_EXTENTS, BTREE_ID_DIRENTS, BTREE_ID_XATTRS,
	};
	uint64_t *used = NULL, want = BCACHEFS_ROOT_INO + 1;
	size_t nr = 0, size = 0;
	int ret = 0;

	if (f->next_inum < f->inum_end) {
		*inum = f->next_inum;
		return 0;
	}
	for (unsigned i = 0; i < ARRAY_SIZE(btrees) && !ret; i++) {
		struct btree_iter iter;
		struct bkey_ref *k;

		bch_btree_iter_init(&iter, f->c, btrees[i], POS_H_MIN, &f->err);
		while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
			struct bch_dirent_h d;
			uint64_t n[2] = { k->k.p.inode, UINT64_MAX };

			if (btrees[i] == BTREE_ID_DIRENTS && k->k.type == BCH_DIRENT &&
			    !bch_dirent_decode(k, &d))
				n[1] = d.d_inum;
			for (unsigned j = 0; j < 2; j++) {
				if (n[j] >= f->inum_end || (nr && used[nr - 1] == n[j]))
					continue;
				if (nr == size) {
					size = size ? size * 2 : 1024;
					used = xrealloc(used, size * sizeof(*used));
				}
				used[nr++] = n[j];
			}
			bch_btree_iter_advance(&iter);
		}
		bch_btree_iter_exit(&iter);
		printbuf_reset(&f->err);
	}
	if (!ret) {
		if (nr)
			qsort(used, nr, sizeof(*used), u64_cmp);
		for (size_t i = 0; i < nr && used[i] <= want; i++)
			if (used[i] == want)
				want++;
		ret = want < f->inum_end ? 0 : -ENOSPC;
		if (!ret)
			*inum = want;
	} else {
		ret = -EIO;
	}
	free(used);
	return ret;
}

static int inode_read(struct fsck_fs *f, uint64_t inum, struct bch_inode_unpacked *u)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	bch_btree_iter_init(&iter, f->c, BTREE_ID_INODES, POS_H(inum, 0), &f->err);
	ret = bch_btree_iter_peek(&iter, &k);
	if (!ret)
		ret = k && k->k.p.inode == inum && k->k.type == BCH_INODE_FS &&
			!bch_inode_unpack(k, u) ? 0 : -ENOENT;
	bch_btree_iter_exit(&iter);
	printbuf_reset(&f->err);
	return ret;
}

static void inode_put(struct btree_trans *t, const struct bch_inode_unpacked *u)
{
	uint8_t val[BCH_INODE_VAL_BYTES_MAX];
	size_t bytes = bch_inode_pack(u, val);
	struct bkey_h k = { .type = BCH_INODE_FS, .p = POS_H(u->bi_inum, 0) };

	bch_trans_update(t, BTREE_ID_INODES, &k, val, (unsigned)bytes);
}

/* A problem whose repair could not even be attempted. */
static void repair_failed(struct fsck_fs *f, enum bch_problem p, const char *why)
{
	fsck_fix_failed(f->s, p, why);
}

/*
 * Read inode @inum, let the caller change it (@fn), write it back as the
 * repair of @p. Returns 0 when committed.
 */
static int inode_rewrite(struct fsck_fs *f, enum bch_problem p, uint64_t inum,
			 void (*fn)(struct bch_inode_unpacked *u, const void *arg), const void *arg)
{
	struct bch_inode_unpacked u;
	struct btree_trans t;
	int ret;

	if (inode_read(f, inum, &u)) {
		repair_failed(f, p, "the inode cannot be read back\n");
		return -ENOENT;
	}
	fn(&u, arg);
	bch_trans_init(&t, f->c);
	inode_put(&t, &u);
	ret = fsck_commit(f->s, p, &t);
	bch_trans_exit(&t);
	return ret;
}

/* What the extents btree holds for one inode. */
struct extent_sum {
	uint64_t	sectors;	/* extent, cached extent, reservation sizes */
	uint64_t	end;		/* end of the last key (any type) */
	uint64_t	data_end;	/* end of the last extent / cached extent */
};

static void extents_scan(struct fsck_fs *f, uint64_t inum, struct extent_sum *sum)
{
	struct btree_iter iter;
	struct bkey_ref *k;

	memset(sum, 0, sizeof(*sum));
	bch_btree_iter_init(&iter, f->c, BTREE_ID_EXTENTS, POS_H(inum, 0), &f->err);
	while (!bch_btree_iter_peek(&iter, &k) && k && k->k.p.inode == inum) {
		unsigned type = k->k.type;

		if (type == BCH_EXTENT || type == BCH_EXTENT_CACHED || type == BCH_RESERVATION)
			sum->sectors += k->k.size;
		if (type != KEY_TYPE_DISCARD && k->k.size)
			sum->end = k->k.p.offset;
		if (type == BCH_EXTENT || type == BCH_EXTENT_CACHED)
			sum->data_end = k->k.p.offset;
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	printbuf_reset(&f->err);
}

/* ---- hash tables: delete and insert (40 §40.6.3) ---- */

struct hash_name {
	unsigned	type;		/* xattrs: x_type; dirents: 0 */
	const uint8_t	*name;
	unsigned	len;
};

/* A live entry of a hashed btree, decoded. */
struct hash_entry {
	struct hash_name	n;
	uint64_t		hash;	/* 0 when the hash parameters are not known */
	struct bch_dirent_h	d;	/* dirents: target and d_type (xattrs: zero) */
};

/* Decode a live entry, hashed with @h when not NULL; false if it does not decode. */
static bool entry_decode(unsigned btree_id, const struct bch_hash_info *h,
			 const struct bkey_ref *k, struct hash_entry *e)
{
	if (k->k.type != 128)
		return false;
	if (btree_id == BTREE_ID_DIRENTS) {
		if (bch_dirent_decode(k, &e->d))
			return false;
		e->n = (struct hash_name) { 0, e->d.name, e->d.name_len };
		e->hash = h ? bch_dirent_hash(h, e->d.name, e->d.name_len) : 0;
	} else {
		struct bch_xattr_h x;

		if (bch_xattr_decode(k, &x))
			return false;
		e->d = (struct bch_dirent_h) { 0 };
		e->n = (struct hash_name) { x.x_type, x.name, x.name_len };
		e->hash = h ? bch_xattr_hash(h, x.x_type, x.name, x.name_len) : 0;
	}
	return true;
}

/*
 * Remove the entry at @pos: a whiteout when a live entry further along
 * the run of occupied slots hashes at or before @pos (its probe went
 * through @pos), else a plain deletion.
 */
static void hash_delete(struct fsck_fs *f, struct btree_trans *t, unsigned btree_id,
			const struct bch_hash_info *h, struct bpos_h pos)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	uint64_t want = pos.offset + 1;
	bool whiteout = !h;	/* unknown hash: keep every probe going */

	if (h && pos.offset != UINT64_MAX) {
		bch_btree_iter_init(&iter, f->c, btree_id, POS_H(pos.inode, want), &f->err);
		while (!bch_btree_iter_peek(&iter, &k) && k &&
		       k->k.p.inode == pos.inode && k->k.p.offset == want) {
			struct hash_entry e;

			if (entry_decode(btree_id, h, k, &e) && e.hash <= pos.offset) {
				whiteout = true;
				break;
			}
			if (k->k.type != 128 && k->k.type != 129)
				break;
			if (++want == 0)
				break;
			bch_btree_iter_advance(&iter);
		}
		bch_btree_iter_exit(&iter);
		printbuf_reset(&f->err);
	}
	if (whiteout) {
		struct bkey_h w = { .type = 129, .p = pos };

		bch_trans_update(t, btree_id, &w, NULL, 0);
	} else {
		bch_trans_delete(t, btree_id, pos);
	}
}

/*
 * Where to insert @n (hashed to @hash) in the table of inode @inum: a live
 * entry with the same name when there is one (-EEXIST unless @replace), else
 * the first slot from @hash that holds no live entry. The slot @vacated
 * (when not UINT64_MAX: the entry being moved) counts as free.
 */
static int hash_slot(struct fsck_fs *f, unsigned btree_id, const struct bch_hash_info *h,
		     uint64_t inum, uint64_t hash, const struct hash_name *n,
		     uint64_t vacated, bool replace, uint64_t *slot)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	uint64_t o = hash;
	bool have_free = false;
	int ret = 0;

	bch_btree_iter_init(&iter, f->c, btree_id, POS_H(inum, hash), &f->err);
	while (1) {
		struct hash_entry e;

		if (bch_btree_iter_peek(&iter, &k) || !k ||
		    k->k.p.inode != inum || k->k.p.offset != o)
			break;				/* empty slot: end of the probe */
		if (o == vacated || k->k.type != 128) {
			if (!have_free) {
				*slot = o;
				have_free = true;
			}
		} else if (entry_decode(btree_id, h, k, &e) && e.n.type == n->type &&
			   e.n.len == n->len && !memcmp(e.n.name, n->name, n->len)) {
			*slot = o;
			ret = replace ? 0 : -EEXIST;
			goto out;
		}
		if (o == UINT64_MAX) {
			ret = have_free ? 0 : -ENOSPC;
			goto out;
		}
		o++;
		bch_btree_iter_advance(&iter);
	}
	if (!have_free)
		*slot = o;
out:
	bch_btree_iter_exit(&iter);
	printbuf_reset(&f->err);
	return ret;
}

static void hash_key_put(struct btree_trans *t, unsigned btree_id, struct bpos_h pos,
			 const void *v, unsigned v_bytes)
{
	struct bkey_h k = { .type = 128, .p = pos };

	bch_trans_update(t, btree_id, &k, v, v_bytes);
}

/* Hash parameters of an inode of the table. */
static bool fi_hash_info(const struct fsck_inode *fi, struct bch_hash_info *h)
{
	return !bch_hash_info_init(h, (fi->flags >> 20) & 0xf, fi->hash_seed);
}

/* ---- the inode table: adding inodes ---- */

/* The record of inode @u, nothing counted yet. */
static void fi_init(struct fsck_inode *fi, const struct bch_inode_unpacked *u)
{
	*fi = (struct fsck_inode) {
		.inum = u->bi_inum, .size = u->bi_size, .sectors = u->bi_sectors,
		.hash_seed = u->bi_hash_seed, .flags = u->bi_flags, .nlink = u->bi_nlink,
		.mode = u->bi_mode, .parent = IDX_NONE,
	};
}

/* Insert a record for a new inode in inum order (indexes after it shift). */
static struct fsck_inode *table_add(struct fsck_fs *f, const struct bch_inode_unpacked *u)
{
	size_t pos = 0, l = 0, r = f->nr_inodes;
	struct fsck_inode *fi;

	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (f->inodes[m].inum < u->bi_inum)
			l = m + 1;
		else
			r = m;
	}
	pos = l;
	if (f->nr_inodes == f->inodes_size) {
		f->inodes_size = f->inodes_size ? f->inodes_size * 2 : 1024;
		f->inodes = xrealloc(f->inodes, f->inodes_size * sizeof(*f->inodes));
	}
	if (pos < f->nr_inodes) {
		memmove(&f->inodes[pos + 1], &f->inodes[pos],
			(f->nr_inodes - pos) * sizeof(*f->inodes));
		for (size_t i = 0; i < f->nr_edges; i++) {
			if (f->edges[i].parent >= pos)
				f->edges[i].parent++;
			if (f->edges[i].child >= pos)
				f->edges[i].child++;
		}
		for (size_t i = 0; i <= f->nr_inodes; i++)
			if (i != pos && f->inodes[i].parent != IDX_NONE && f->inodes[i].parent >= pos)
				f->inodes[i].parent++;
	}
	f->nr_inodes++;
	fi = &f->inodes[pos];
	fi_init(fi, u);
	return fi;
}

/* A new directory inode as 40 §40.5.8 makes it (options from @parent if any). */
static void dir_inode_new(struct fsck_fs *f, struct bch_inode_unpacked *u, uint64_t inum,
			  const struct bch_inode_unpacked *parent)
{
	struct timespec ts;
	uint64_t t;

	clock_gettime(CLOCK_REALTIME, &ts);
	t = bch_inode_ns_to_time((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec,
				 le64_to_cpu(f->c->sb->time_base_lo),
				 le32_to_cpu(f->c->sb->time_precision));
	memset(u, 0, sizeof(*u));
	u->bi_inum	= inum;
	u->bi_hash_seed	= bch_random_u64();
	u->bi_flags	= (uint32_t)(f->c->str_hash_type & 0xf) << 20;
	u->bi_mode	= DIR_MODE;
	u->bi_atime = u->bi_ctime = u->bi_mtime = u->bi_otime = t;
	if (parent)
		bch_inode_inherit(u, parent);
}

/*
 * Add a dirent @name -> @target (type @d_type) to directory @dir in @t,
 * after the updates already in @t (whose keys are not visible yet).
 * With @replace an entry of that name is overwritten; without, -EEXIST.
 */
static int dirent_add(struct fsck_fs *f, struct btree_trans *t, const struct fsck_inode *dir,
		      const char *name, uint64_t target, unsigned d_type, bool replace,
		      uint64_t *at)
{
	struct bch_hash_info h;
	struct hash_name n = { 0, (const uint8_t *)name, (unsigned)strlen(name) };
	uint8_t val[512];
	uint64_t hash, slot;
	size_t bytes;
	int ret;

	if (!fi_hash_info(dir, &h))
		return -EINVAL;
	hash = bch_dirent_hash(&h, name, n.len);
	ret = hash_slot(f, BTREE_ID_DIRENTS, &h, dir->inum, hash, &n, UINT64_MAX, replace, &slot);
	if (ret)
		return ret;
	bytes = bch_dirent_encode(target, d_type, name, n.len, val, sizeof(val));
	if (!bytes)
		return -EINVAL;
	hash_key_put(t, BTREE_ID_DIRENTS, POS_H(dir->inum, slot), val, (unsigned)bytes);
	*at = slot;
	return 0;
}

/* The lost+found directory, when there is one to reattach to. */
static struct fsck_inode *lostfound(struct fsck_fs *f)
{
	struct fsck_inode *lf = f->lf_dirent ? inode_find(f, f->lf_inum) : NULL;

	return lf && mode_dt(lf->mode) == BCH_DT_DIR && !(lf->state & FI_VIRTUAL) ? lf : NULL;
}

/*
 * Reattach @fi under lost+found, named after its inode number (a suffix
 * when that name is taken): the dirent, and for a directory lost+found's
 * nlink + 1; for another inode its nlink set to the one link. Returns 0
 * when committed; the table then counts the new dirent.
 */
static int reattach(struct fsck_fs *f, enum bch_problem p, uint64_t inum)
{
	struct fsck_inode *lf = lostfound(f), *fi;
	struct bch_inode_unpacked lu, u;
	struct btree_trans t;
	char name[64];
	uint64_t slot;
	bool dir;
	int ret = -EEXIST;

	if (!lf) {
		repair_failed(f, p, "no lost+found directory to reattach to\n");
		return -ENOENT;
	}
	fi = inode_find(f, inum);
	dir = fi_is_dir(fi);
	if (inode_read(f, lf->inum, &lu) || inode_read(f, inum, &u)) {
		repair_failed(f, p, "the inode cannot be read back\n");
		return -ENOENT;
	}
	bch_trans_init(&t, f->c);
	for (unsigned i = 0; i < 100 && ret == -EEXIST; i++) {
		if (i)
			snprintf(name, sizeof(name), "%" PRIu64 ".%u", inum, i);
		else
			snprintf(name, sizeof(name), "%" PRIu64, inum);
		ret = dirent_add(f, &t, lf, name, inum, fi_dt(fi), false, &slot);
	}
	if (ret) {
		bch_trans_exit(&t);
		repair_failed(f, p, "cannot add a dirent to lost+found\n");
		return ret;
	}
	if (dir) {
		lu.bi_nlink++;
		inode_put(&t, &lu);
	} else if (u.bi_nlink != 0) {
		u.bi_nlink = 0;		/* one link */
		inode_put(&t, &u);
	}
	ret = fsck_commit(f->s, p, &t);
	bch_trans_exit(&t);
	if (ret)
		return ret;
	inc_sat(&fi->count);
	if (dir) {
		lf->nlink++;
		inc_sat(&lf->dir_count);
	} else {
		fi->nlink = 0;
	}
	return 0;
}

/* ---- deletions batched per problem, moved keys ---- */

static void batch_flush(struct fsck_fs *f)
{
	if (!f->batch.nr)
		return;
	if (fsck_commit(f->s, f->batch_p, &f->batch))
		for (unsigned long i = 1; i < f->batch_fixes; i++)
			fsck_fix_failed(f->s, f->batch_p, "the commit failed\n");
	f->batch_fixes = 0;
}

/* Delete the key at @pos (its owner is missing: no hash rule) as a repair of @p. */
static void batch_delete(struct fsck_fs *f, enum bch_problem p, unsigned btree_id,
			 struct bpos_h pos, bool counted)
{
	if (f->batch.nr && (p != f->batch_p || f->batch.nr >= 1024))
		batch_flush(f);
	f->batch_p = p;
	bch_trans_delete(&f->batch, btree_id, pos);
	if (counted)
		f->batch_fixes++;
}

/* An open-addressed set of positions (all of one btree, offsets of inodes >= 4096). */
static size_t moved_slot(const struct fsck_fs *f, struct bpos_h pos)
{
	uint64_t h = (pos.inode * 0x9e3779b97f4a7c15ULL) ^ (pos.offset * 0xc2b2ae3d27d4eb4fULL);
	size_t i = (size_t)(h ^ (h >> 29)) & (f->moved_size - 1);

	while (f->moved[i].inode && bpos_cmp(f->moved[i], pos))
		i = (i + 1) & (f->moved_size - 1);
	return i;
}

static void moved_add(struct fsck_fs *f, struct bpos_h pos)
{
	if ((f->nr_moved + 1) * 2 > f->moved_size) {
		struct bpos_h *old = f->moved;
		size_t old_size = f->moved_size;

		f->moved_size = old_size ? old_size * 2 : 64;
		f->moved = xcalloc(f->moved_size, sizeof(*f->moved));
		for (size_t i = 0; i < old_size; i++)
			if (old[i].inode)
				f->moved[moved_slot(f, old[i])] = old[i];
		free(old);
	}
	size_t i = moved_slot(f, pos);

	if (!f->moved[i].inode) {
		f->moved[i] = pos;
		f->nr_moved++;
	}
}

static bool moved_has(const struct fsck_fs *f, struct bpos_h pos)
{
	return f->nr_moved && f->moved[moved_slot(f, pos)].inode;
}

static void moved_reset(struct fsck_fs *f)
{
	if (f->nr_moved)
		memset(f->moved, 0, f->moved_size * sizeof(*f->moved));
	f->nr_moved = 0;
}

/* Hash-delete the entry at @pos as the repair of @p. */
static int entry_remove(struct fsck_fs *f, enum bch_problem p, unsigned btree_id,
			const struct bch_hash_info *h, struct bpos_h pos)
{
	struct btree_trans t;
	int ret;

	bch_trans_init(&t, f->c);
	hash_delete(f, &t, btree_id, h, pos);
	ret = fsck_commit(f->s, p, &t);
	bch_trans_exit(&t);
	return ret;
}

/*
 * Rewrite the entry at @pos with value @v: in place, or with @move at the
 * first free slot of its probe sequence from @hash (the old slot hash-
 * deleted). When a live entry of the same name is on that sequence, the
 * entry is a duplicate and only deleted (returns 1). *@at: where it is now.
 * @also: a second problem fixed by the same commit (counted failed with it).
 */
static int entry_fix(struct fsck_fs *f, enum bch_problem p, int also, unsigned btree_id,
		     const struct bch_hash_info *h, struct bpos_h pos, uint64_t hash,
		     const struct hash_name *n, const void *v, unsigned v_bytes, bool move,
		     uint64_t *at)
{
	struct btree_trans t;
	uint64_t slot = pos.offset;
	bool dup = false;
	int ret = 0;

	bch_trans_init(&t, f->c);
	if (move) {
		ret = hash_slot(f, btree_id, h, pos.inode, hash, n, pos.offset, false, &slot);
		if (ret && ret != -EEXIST) {
			bch_trans_exit(&t);
			repair_failed(f, p, "no free slot in the hash table\n");
			if (also >= 0)
				repair_failed(f, (enum bch_problem)also, "no free slot in the hash table\n");
			return ret;
		}
		dup = ret == -EEXIST;
		hash_delete(f, &t, btree_id, h, pos);
	}
	if (!dup)
		hash_key_put(&t, btree_id, POS_H(pos.inode, slot), v, v_bytes);
	ret = fsck_commit(f->s, p, &t);
	if (ret && also >= 0)
		fsck_fix_failed(f->s, (enum bch_problem)also, "the commit failed\n");
	bch_trans_exit(&t);
	*at = slot;
	return ret ?: dup;
}

/* ---- hash runs (40 §40.6.3-§40.6.4) ----------------------------------------- */

static void run_reset(struct hash_run *r, uint64_t inum, uint64_t start)
{
	r->inum		= inum;
	r->start	= start;
	r->last		= start;
	r->active	= true;
	r->used		= 0;
	r->names_len	= 0;
	if (++r->gen == 0) {		/* wrapped: clear for real */
		if (r->slots)
			memset(r->slots, 0, r->nr_slots * sizeof(*r->slots));
		r->gen = 1;
	}
}

/* Next key at @offset of inode @inum: start a new run unless it continues this one. */
static void run_step(struct hash_run *r, uint64_t inum, uint64_t offset)
{
	if (!r->active || r->inum != inum || r->last == UINT64_MAX || offset != r->last + 1)
		run_reset(r, inum, offset);
	else
		r->last = offset;
}

static void run_grow(struct hash_run *r)
{
	size_t n = r->nr_slots ? r->nr_slots * 2 : 64, i;
	struct run_slot *old = r->slots, *s = xcalloc(n, sizeof(*s));

	for (i = 0; i < r->nr_slots; i++) {
		size_t j;

		if (old[i].gen != r->gen)
			continue;
		for (j = old[i].hash & (n - 1); s[j].gen == r->gen; j = (j + 1) & (n - 1))
			;
		s[j] = old[i];
	}
	free(old);
	r->slots = s;
	r->nr_slots = n;
}

/*
 * Is (@type, @name) already a live entry of the run (same hash)? If not,
 * remember it. Entries with equal names have equal hashes, so only those
 * are compared.
 */
static bool run_seen(struct hash_run *r, uint64_t hash, unsigned type,
		     const uint8_t *name, unsigned len)
{
	size_t j;

	if ((r->used + 1) * 2 > r->nr_slots)
		run_grow(r);
	for (j = hash & (r->nr_slots - 1); r->slots[j].gen == r->gen; j = (j + 1) & (r->nr_slots - 1)) {
		const struct run_slot *s = &r->slots[j];

		if (s->hash == hash && s->type == type && s->name_len == len &&
		    !memcmp(r->names + s->name_off, name, len))
			return true;
	}
	if (r->names_len + len > r->names_size) {
		r->names_size = (r->names_len + len) * 2 + 256;
		r->names = xrealloc(r->names, r->names_size);
	}
	memcpy(r->names + r->names_len, name, len);
	r->slots[j] = (struct run_slot) {
		.hash = hash, .gen = r->gen, .name_off = (uint32_t)r->names_len,
		.name_len = len, .type = (uint8_t)type,
	};
	r->names_len += len;
	r->used++;
	return false;
}

/* What check_hash_pos() found. */
enum hash_pos {
	HP_OK,
	HP_MOVE,	/* at a wrong offset, being fixed: move it */
	HP_DUP,		/* duplicate, not fixed: judged as removed */
	HP_DUP_FIX,	/* duplicate, being fixed: hash-delete it */
};

/*
 * Check the live entry @e at @k's offset in the current run: its hash
 * must lie inside the run, at or before that offset, and no earlier entry
 * of the run may have the same name (the later copy goes; the first one
 * stays).
 */
static enum hash_pos check_hash_pos(struct fsck_fs *f, unsigned btree_id, const struct bkey_ref *k,
				    const struct hash_entry *e)
{
	struct hash_run *r = &f->run;
	bool move = false;

	if (e->hash < r->start || e->hash > k->k.p.offset)
		move = fsck_fix(f->s, PROB_hash_wrong_offset,
				"hash table key at wrong offset: %" PRIu64 ", hashed to %" PRIu64
				" chain starts at %" PRIu64 "\n%s",
				k->k.p.offset, e->hash, r->start, key_text(f, btree_id, k));
	if (run_seen(r, e->hash, e->n.type, e->n.name, e->n.len))
		return fsck_fix(f->s, PROB_hash_duplicate,
				"duplicate hash table keys (an earlier entry of the chain has the same name):\n%s",
				key_text(f, btree_id, k)) ? HP_DUP_FIX : HP_DUP;
	return move ? HP_MOVE : HP_OK;
}

/* ---- loading the inodes ------------------------------------------------------ */

/*
 * Every inode key of type 128 that unpacks (the key pass reported the
 * others: they count as missing here). Blockdev and generation keys are
 * not filesystem inodes.
 */
static int load_inodes(struct fsck_fs *f)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	bch_btree_iter_init(&iter, f->c, BTREE_ID_INODES, POS_H_MIN, &f->err);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
		struct bch_inode_unpacked u;
		struct fsck_inode *fi;

		seen_inum(f, k->k.p.inode);
		if (k->k.type != BCH_INODE_FS || bch_inode_unpack(k, &u) ||
		    (f->nr_inodes && f->inodes[f->nr_inodes - 1].inum >= k->k.p.inode) ||
		    f->nr_inodes >= IDX_NONE - 1)
			goto next;

		if (f->nr_inodes == f->inodes_size) {
			f->inodes_size = f->inodes_size ? f->inodes_size * 2 : 1024;
			f->inodes = xrealloc(f->inodes, f->inodes_size * sizeof(*f->inodes));
		}
		fi = &f->inodes[f->nr_inodes++];
		fi_init(fi, &u);
		/*
		 * The root must be a directory: if its mode says otherwise the
		 * root pass reports it, and the other passes judge it as the
		 * directory it will be again (its dirents stay).
		 */
		if (fi->inum == BCACHEFS_ROOT_INO && mode_dt(fi->mode) != BCH_DT_DIR)
			fi->state |= FI_FORCE_DIR;
next:
		bch_btree_iter_advance(&iter);
	}
	return iter_end(f, &iter, ret);
}

/* ---- the root, first ---------------------------------------------------------------- */

/*
 * A missing root (inode 4096) is found before the passes: recreated there
 * (40 §40.5.8: an empty directory, stored nlink 0, a new hash seed), its
 * dirents are kept: the dirents pass moves each to where the new seed
 * hashes it (reported as keys at the wrong offset). Not recreated, a
 * stand-in directory takes its place so that its dirents are judged as
 * they will be (kept), with no hash check (the seed is unknown).
 */
static int check_root_missing(struct fsck_fs *f)
{
	struct bch_inode_unpacked u;
	struct fsck_inode *root;
	struct btree_trans t;

	if (inode_find(f, BCACHEFS_ROOT_INO))
		return 0;
	dir_inode_new(f, &u, BCACHEFS_ROOT_INO, NULL);
	if (fsck_fix(f->s, PROB_root_missing, "root directory missing")) {
		bch_trans_init(&t, f->c);
		inode_put(&t, &u);
		if (!fsck_commit(f->s, PROB_root_missing, &t)) {
			bch_trans_exit(&t);
			table_add(f, &u);
			return 0;
		}
		bch_trans_exit(&t);
	}
	root = table_add(f, &u);
	root->state |= FI_VIRTUAL;
	return 0;
}

/* ---- pass 1: extents ----------------------------------------------------------- */

/*
 * Checks every extents-btree key of inode 4096 and up: its inode exists
 * and is a regular file or symlink (else the repair deletes all extents of
 * that inode number, reported once per inode), no extent (reservations
 * excepted) ends past i_size rounded up to 4 KiB (or the block size)
 * unless I_SIZE_DIRTY is set, and bi_sectors equals the sum of the sizes
 * of its extent, cached-extent and reservation keys unless
 * I_SECTORS_DIRTY is set (checked for every inode, extents or not).
 * Leaves: the I_SIZE_DIRTY / I_SECTORS_DIRTY flags themselves to the link
 * count pass.
 */
/* The sector no extent may end after: i_size rounded up to 4 KiB (or the block). */
static uint64_t size_limit(const struct fsck_fs *f, uint64_t size)
{
	uint64_t round = f->block_bytes > 4096 ? f->block_bytes : 4096;

	return size > UINT64_MAX - round ? UINT64_MAX / 512 : (size + round - 1) / round * round / 512;
}

static void set_size(struct bch_inode_unpacked *u, const void *arg)
{
	u->bi_size = *(const uint64_t *)arg;
}

/*
 * A symlink whose data goes past i_size: its i_size is what is wrong when
 * the data holds a target (NUL-terminated within the first 4 KiB) that
 * covers the extents. Sets i_size to the target's length; false when
 * that is not the case (the extents are then trimmed).
 */
static bool symlink_size_fix(struct fsck_fs *f, struct fsck_inode *fi)
{
	struct bch_inode_unpacked u;
	struct extent_sum sum;
	struct printbuf err = PRINTBUF;
	struct bch_file file;
	char buf[4096];
	uint64_t len;
	ssize_t r;

	extents_scan(f, fi->inum, &sum);
	if (inode_read(f, fi->inum, &u) || !sum.data_end)
		return false;
	/* read with i_size covering the data (a read is clamped to i_size) */
	u.bi_size = sum.data_end * 512 < sizeof(buf) ? sum.data_end * 512 : sizeof(buf);
	bch_file_open(f->c, &u, &file);
	r = bch_file_read(&file, 0, buf, (size_t)u.bi_size, NULL, &err);
	bch_file_close(&file);
	printbuf_exit(&err);
	if (r <= 0)
		return false;
	len = strnlen(buf, (size_t)r);
	if (!len || len >= (uint64_t)r || len >= sizeof(buf) || sum.end > size_limit(f, len))
		return false;
	if (inode_rewrite(f, PROB_extent_past_isize, fi->inum, set_size, &len))
		return true;	/* counted as not fixed */
	fi->size = len;
	return true;
}

static void set_sectors(struct bch_inode_unpacked *u, const void *arg)
{
	u->bi_sectors = *(const uint64_t *)arg;
}

/* Delete every extent of inode @inum (its inode is missing or not a file). */
static int extents_delete_all(struct fsck_fs *f, enum bch_problem p, uint64_t inum)
{
	struct extent_sum sum;
	struct btree_trans t;
	int ret;

	extents_scan(f, inum, &sum);
	bch_trans_init(&t, f->c);
	bch_trans_delete_extents(&t, inum, 0, sum.end);
	ret = fsck_commit(f->s, p, &t);
	bch_trans_exit(&t);
	return ret;
}

/*
 * Delete the extents of @fi from sector @limit on (cutting the one that
 * straddles it) and recount its sectors; bi_sectors follows when it was
 * right before.
 */
static int extents_trim(struct fsck_fs *f, struct fsck_inode *fi, uint64_t limit)
{
	struct extent_sum before, after;
	struct btree_trans t;
	int ret;

	extents_scan(f, fi->inum, &before);
	bch_trans_init(&t, f->c);
	if (before.end > limit)
		bch_trans_delete_extents(&t, fi->inum, limit, before.end);
	ret = fsck_commit(f->s, PROB_extent_past_isize, &t);
	bch_trans_exit(&t);
	if (ret)
		return ret;
	extents_scan(f, fi->inum, &after);
	fi->sectors_found = after.sectors;
	if (!(fi->flags & BCH_INODE_I_SECTORS_DIRTY) && fi->sectors == before.sectors &&
	    after.sectors != before.sectors &&
	    !inode_rewrite(f, PROB_extent_past_isize, fi->inum, set_sectors, &after.sectors))
		fi->sectors = after.sectors;
	return 0;
}

static int pass_extents(struct fsck_fs *f)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	struct fsck_inode *fi = NULL;
	uint64_t cur = 0, limit = 0;
	bool have_cur = false, reported = false;
	int ret;

	bch_btree_iter_init(&iter, f->c, BTREE_ID_EXTENTS, POS_H(BCACHEFS_ROOT_INO, 0), &f->err);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
		unsigned type = k->k.type;

		if (k->k.p.inode < BCACHEFS_ROOT_INO || type == KEY_TYPE_DISCARD)
			goto next;
		if (!have_cur || k->k.p.inode != cur) {
			uint64_t round = f->block_bytes > 4096 ? f->block_bytes : 4096;

			have_cur = true;
			cur	 = k->k.p.inode;
			fi	 = inode_find(f, cur);
			reported = false;
			seen_inum(f, cur);
			if (fi)
				limit = fi->size > UINT64_MAX - round
					? UINT64_MAX / 512
					: (fi->size + round - 1) / round * round / 512;
		}
		if (!fi) {
			if (!reported &&
			    fsck_fix(f->s, PROB_extent_missing_inode,
				     "extent type %u for missing inode %" PRIu64,
				     type, cur) &&
			    !extents_delete_all(f, PROB_extent_missing_inode, cur)) {
				iter_restart(f, &iter, BTREE_ID_EXTENTS, POS_H(cur, UINT64_MAX));
				continue;
			}
			reported = true;
			goto next;
		}
		if (fi_dt(fi) != BCH_DT_REG && fi_dt(fi) != BCH_DT_LNK) {
			if (!reported &&
			    fsck_fix(f->s, PROB_extent_non_regular,
				     "extent type %u for non regular file, inode %" PRIu64 " mode %o",
				     type, cur, fi->mode) &&
			    !extents_delete_all(f, PROB_extent_non_regular, cur)) {
				iter_restart(f, &iter, BTREE_ID_EXTENTS, POS_H(cur, UINT64_MAX));
				continue;
			}
			reported = true;
			goto next;
		}
		if (type == BCH_EXTENT || type == BCH_EXTENT_CACHED || type == BCH_RESERVATION)
			fi->sectors_found += k->k.size;
		if (!(fi->flags & BCH_INODE_I_SIZE_DIRTY) && type != BCH_RESERVATION &&
		    k->k.p.offset > limit && !reported) {
			reported = true;
			if (fsck_fix(f->s, PROB_extent_past_isize,
				     "extent type %u offset %" PRIu64 " past end of inode %" PRIu64
				     ", i_size %" PRIu64, type, k->k.p.offset, cur, fi->size) &&
			    !(fi_dt(fi) == BCH_DT_LNK && symlink_size_fix(f, fi)) &&
			    !extents_trim(f, fi, limit)) {
				/* trimmed and recounted: the rest of this inode is done */
				iter_restart(f, &iter, BTREE_ID_EXTENTS, POS_H(cur, UINT64_MAX));
				continue;
			}
		}
next:
		bch_btree_iter_advance(&iter);
	}
	iter_end(f, &iter, ret);
	if (f->stop)
		return 0;

	for (size_t i = 0; i < f->nr_inodes; i++) {
		struct fsck_inode *x = &f->inodes[i];

		if (x->flags & BCH_INODE_I_SECTORS_DIRTY)
			continue;	/* the link count pass reports the flag; recount then */
		if (x->sectors != x->sectors_found &&
		    fsck_fix(f->s, PROB_inode_i_sectors_wrong,
			     "inode %" PRIu64 ": i_sectors wrong: got %" PRIu64 ", should be %" PRIu64,
			     x->inum, x->sectors, x->sectors_found) &&
		    !inode_rewrite(f, PROB_inode_i_sectors_wrong, x->inum, set_sectors, &x->sectors_found))
			x->sectors = x->sectors_found;
	}
	return 0;
}

/* ---- passes 2 and 3: the hashed btrees ------------------------------------------- */

/* Where the walk of a hashed btree is, for the checks of the btree. */
struct hash_walk {
	uint64_t		cur;		/* inode number of the keys */
	struct fsck_inode	*owner;		/* its record; NULL if missing */
	struct bch_hash_info	hinfo;
	bool			hash_ok;	/* hinfo known: hash positions are checked */
	bool			reported;	/* a problem of the owner reported (once an inode) */
	bool			fixing;		/* ... and being fixed */
	/* set by ->entry: the value rewritten as the repair of @rewrite (-1: kept as it is) */
	int			rewrite;
	const void		*v;
	unsigned		v_bytes;
	uint8_t			val[2048];
	struct fsck_inode	*target;	/* dirents: what the entry points to */
};

/* What differs between the dirents and the xattrs pass. */
struct hashed_btree {
	unsigned	btree_id;
	/*
	 * Check the owner of key @k (w->owner) and report a problem with it;
	 * true when the key is dealt with (it is not a member of a run).
	 */
	bool		(*owner_bad)(struct fsck_fs *f, struct hash_walk *w,
				     const struct bkey_ref *k);
	/*
	 * Check live entry @e that passed the hash checks (NULL: nothing
	 * more to check); false when it goes (removed, or judged so). May set
	 * w->rewrite and the new value.
	 */
	bool		(*entry)(struct fsck_fs *f, struct hash_walk *w,
				 const struct bkey_ref *k, const struct hash_entry *e);
	/* Entry @e stays, at offset @at (NULL: nothing to count). */
	void		(*kept)(struct fsck_fs *f, struct hash_walk *w,
				const struct hash_entry *e, uint64_t at);
};

/*
 * Walk the keys of @b from inode 4096 on (hash whiteouts included, as
 * members of probe runs): the owner check of @b, then for each live entry
 * of an owner with known hash parameters its place in its run
 * (check_hash_pos(): a duplicate is hash-deleted, a key at the wrong
 * offset is moved to the first free slot from its hash), then the checks
 * of @b. A key moved ahead of the iterator is remembered (checked and
 * counted at its old place) and the walk restarts after the old place,
 * so that the key is not met as new.
 */
static int pass_hashed(struct fsck_fs *f, const struct hashed_btree *b)
{
	struct hash_walk w = { .cur = 0 };
	struct btree_iter iter;
	struct bkey_ref *k;
	bool have_cur = false;
	int ret;

	f->run.active = false;
	moved_reset(f);
	bch_btree_iter_init(&iter, f->c, b->btree_id, POS_H(BCACHEFS_ROOT_INO, 0), &f->err);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
		struct bpos_h pos = k->k.p;
		struct hash_entry e;
		enum hash_pos hp = HP_OK;
		uint64_t at = pos.offset;
		bool restart = false;

		if (pos.inode < BCACHEFS_ROOT_INO)
			goto next;
		if (!have_cur || pos.inode != w.cur) {
			have_cur   = true;
			w.cur	   = pos.inode;
			w.owner	   = inode_find(f, w.cur);
			/* (not those of a stand-in root: its seed is unknown) */
			w.hash_ok  = w.owner && !(w.owner->state & FI_VIRTUAL) &&
				     fi_hash_info(w.owner, &w.hinfo);
			w.reported = false;
			w.fixing   = false;
			f->run.active = false;
			seen_inum(f, w.cur);
		}
		if (b->owner_bad(f, &w, k))
			goto next;
		run_step(&f->run, w.cur, pos.offset);
		if (!entry_decode(b->btree_id, w.hash_ok ? &w.hinfo : NULL, k, &e))
			goto next;	/* whiteouts only extend the run; invalid keys: key pass */
		seen_inum(f, e.d.d_inum);	/* a dirent's target number is in use too */

		if (w.hash_ok) {
			if (moved_has(f, pos)) {
				/* put here by a repair: checked and counted at its old place */
				run_seen(&f->run, e.hash, e.n.type, e.n.name, e.n.len);
				goto next;
			}
			hp = check_hash_pos(f, b->btree_id, k, &e);
			if (hp == HP_DUP_FIX)
				entry_remove(f, PROB_hash_duplicate, b->btree_id, &w.hinfo, pos);
			if (hp == HP_DUP || hp == HP_DUP_FIX)
				goto next;
		}

		w.rewrite = -1;
		w.v	  = k->v;
		w.v_bytes = k->v_bytes;
		if (b->entry && !b->entry(f, &w, k, &e))
			goto next;
		if (hp == HP_MOVE || w.rewrite >= 0) {
			int r = entry_fix(f, hp == HP_MOVE ? PROB_hash_wrong_offset : (enum bch_problem)w.rewrite,
					  hp == HP_MOVE ? w.rewrite : -1, b->btree_id,
					  w.hash_ok ? &w.hinfo : NULL, pos, e.hash, &e.n, w.v, w.v_bytes,
					  hp == HP_MOVE, &at);

			if (r == 1)
				goto next;	/* a duplicate of an entry on its probe sequence: deleted */
			if (!r && hp == HP_MOVE && at > pos.offset) {
				moved_add(f, POS_H(w.cur, at));
				restart = true;
			}
		}
		if (b->kept)
			b->kept(f, &w, &e, at);
		if (restart) {
			iter_restart(f, &iter, b->btree_id, POS_H(w.cur, pos.offset + 1));
			continue;
		}
next:
		bch_btree_iter_advance(&iter);
	}
	batch_flush(f);
	return iter_end(f, &iter, ret);
}

/* ---- pass 2: dirents ------------------------------------------------------------ */

static void add_edge(struct fsck_fs *f, struct fsck_inode *dir, struct fsck_inode *sub,
		     uint64_t offset)
{
	if (f->nr_edges == f->edges_size) {
		f->edges_size = f->edges_size ? f->edges_size * 2 : 256;
		f->edges = xrealloc(f->edges, f->edges_size * sizeof(*f->edges));
	}
	f->edges[f->nr_edges++] = (struct fsck_edge) { fi_idx(f, dir), fi_idx(f, sub), offset };
	if (sub->parent == IDX_NONE)
		sub->parent = fi_idx(f, dir);
}

static bool name_is(const struct bch_dirent_h *d, const char *s)
{
	size_t n = strlen(s);

	return d->name_len == n && !memcmp(d->name, s, n);
}

/* The directory must exist and be a directory: each key of another goes. */
static bool dirent_owner_bad(struct fsck_fs *f, struct hash_walk *w, const struct bkey_ref *k)
{
	const struct fsck_inode *dir = w->owner;

	if (!dir) {
		if (fsck_fix(f->s, PROB_dirent_missing_dir, "dirent in nonexisting directory:\n%s",
			     key_text(f, BTREE_ID_DIRENTS, k)))
			batch_delete(f, PROB_dirent_missing_dir, BTREE_ID_DIRENTS, k->k.p, true);
		return true;
	}
	if (!fi_is_dir(dir)) {
		if (fsck_fix(f->s, PROB_dirent_in_non_dir, "dirent in non directory inode type %u:\n%s",
			     mode_dt(dir->mode), key_text(f, BTREE_ID_DIRENTS, k)))
			batch_delete(f, PROB_dirent_in_non_dir, BTREE_ID_DIRENTS, k->k.p, true);
		return true;
	}
	return false;
}

/*
 * The name is not empty, "." or ".."; the dirent does not point to its
 * own directory or to a missing inode (else it goes); d_type is the
 * target's type (else rewritten). Notes the root's "lost+found" dirent.
 */
static bool dirent_entry(struct fsck_fs *f, struct hash_walk *w, const struct bkey_ref *k,
			 const struct hash_entry *e)
{
	const struct bch_dirent_h *d = &e->d;
	enum bch_problem p = PROB_dirent_empty_name;
	const char *bad = NULL;

	if (w->cur == BCACHEFS_ROOT_INO && name_is(d, "lost+found")) {
		f->lf_dirent = true;
		f->lf_inum   = d->d_inum;
	}

	if (!d->name_len) {
		bad = "empty dirent";
	} else if (name_is(d, ".") || name_is(d, "..")) {
		p   = PROB_dirent_dot;
		bad = d->name_len == 1 ? ". dirent" : ".. dirent";
	} else if (d->d_inum == w->cur) {
		p   = PROB_dirent_self;
		bad = "dirent points to own directory";
	} else if (!(w->target = inode_find(f, d->d_inum))) {
		p   = PROB_dirent_missing_inode;
		bad = "dirent points to missing inode";
	}
	if (bad) {
		if (fsck_fix(f->s, p, "%s:\n%s", bad, key_text(f, BTREE_ID_DIRENTS, k)))
			entry_remove(f, p, BTREE_ID_DIRENTS, w->hash_ok ? &w->hinfo : NULL, k->k.p);
		return false;
	}

	if (d->d_type != fi_dt(w->target) &&
	    fsck_fix(f->s, PROB_dirent_bad_d_type, "incorrect d_type: should be %u:\n%s",
		     fi_dt(w->target), key_text(f, BTREE_ID_DIRENTS, k))) {
		w->v_bytes = (unsigned)bch_dirent_encode(d->d_inum, fi_dt(w->target), d->name,
							 d->name_len, w->val, sizeof(w->val));
		w->v	   = w->val;
		w->rewrite = PROB_dirent_bad_d_type;
	}
	return true;
}

/* Count the dirent (now at @at) for its target, a subdirectory link for the walk. */
static void dirent_kept(struct fsck_fs *f, struct hash_walk *w, const struct hash_entry *e,
			uint64_t at)
{
	inc_sat(&w->target->count);
	if (fi_is_dir(w->target)) {
		inc_sat(&w->owner->dir_count);
		add_edge(f, w->owner, w->target, at);
	}
}

static const struct hashed_btree dirents_btree = {
	.btree_id	= BTREE_ID_DIRENTS,
	.owner_bad	= dirent_owner_bad,
	.entry		= dirent_entry,
	.kept		= dirent_kept,
};

/*
 * Checks every dirents-btree key of inode 4096 and up (hash whiteouts
 * included, as members of probe runs): the directory exists and is a
 * directory (else the key goes); each live entry sits where linear probing
 * from its hash finds it and repeats no earlier name of its run; its name
 * is not empty, "." or ".."; it does not point to its own directory or to
 * a missing inode; its d_type is the target's type.
 * Leaves: counts, for the entries that stay, the dirents to each inode and
 * the subdirectory dirents of each directory, the subdirectory links for
 * the directory walk, and where the root's "lost+found" dirent points.
 */
static int pass_dirents(struct fsck_fs *f)
{
	return pass_hashed(f, &dirents_btree);
}

/* ---- pass 3: xattrs --------------------------------------------------------------- */

/* The inode must exist: reported once, then every key of that inode number goes. */
static bool xattr_owner_bad(struct fsck_fs *f, struct hash_walk *w, const struct bkey_ref *k)
{
	if (w->owner)
		return false;
	if (!w->reported)
		w->fixing = fsck_fix(f->s, PROB_xattr_missing_inode,
				     "xattr for missing inode %" PRIu64 ":\n%s",
				     w->cur, key_text(f, BTREE_ID_XATTRS, k));
	if (w->fixing)
		batch_delete(f, PROB_xattr_missing_inode, BTREE_ID_XATTRS, k->k.p, !w->reported);
	w->reported = true;
	return true;
}

static const struct hashed_btree xattrs_btree = {
	.btree_id	= BTREE_ID_XATTRS,
	.owner_bad	= xattr_owner_bad,
};

/*
 * Checks every xattrs-btree key of inode 4096 and up: its inode exists
 * (else the key goes), and each live entry sits where linear probing from
 * its hash finds it and repeats no earlier (type, name) of its run.
 * Leaves nothing for later passes.
 */
static int pass_xattrs(struct fsck_fs *f)
{
	return pass_hashed(f, &xattrs_btree);
}

/* ---- pass 4: root directory ------------------------------------------------------- */

static void set_dir_mode(struct bch_inode_unpacked *u, const void *arg)
{
	(void)arg;
	u->bi_mode = DIR_MODE;
}


/*
 * Checks that inode 4096 exists and is a directory. A root whose mode
 * says otherwise was already treated as a directory by the passes before:
 * the repair restores the directory mode (S_IFDIR | 0755), keeping its
 * dirents, hash seed and the rest. A missing root is created empty (its
 * dirents went with the dirents pass: what they pointed to is reattached
 * to lost+found).
 * Leaves: the lost+found dirent to the next pass.
 */
static int pass_root(struct fsck_fs *f)
{
	struct fsck_inode *root = inode_find(f, BCACHEFS_ROOT_INO);

	if (!root || (root->state & FI_VIRTUAL))
		return 0;	/* missing: reported (and created) before the other passes */
	if (mode_dt(root->mode) != BCH_DT_DIR) {
		if (fsck_fix(f->s, PROB_root_not_dir, "root inode not a directory (mode %o)", root->mode) &&
		    !inode_rewrite(f, PROB_root_not_dir, root->inum, set_dir_mode, NULL)) {
			root->mode = DIR_MODE;
			root->state &= (uint8_t)~FI_FORCE_DIR;
		}
	}
	return 0;
}

/* ---- pass 5: lost+found ------------------------------------------------------------- */

/*
 * Create lost+found (40 §40.8.6): a new directory inode (numbered by
 * inum_new(): above every inode number in use, below 2^32 with 32 bit
 * inodes), its dirent in the root (replacing one of
 * that name), the root's nlink + 1. An inode the old dirent pointed to
 * loses that link (the link count pass reattaches it if it has no other).
 */
static void create_lostfound(struct fsck_fs *f, enum bch_problem p)
{
	struct fsck_inode *root = inode_find(f, BCACHEFS_ROOT_INO), *old, *lf;
	struct bch_inode_unpacked ru, lu;
	struct btree_trans t;
	uint64_t inum, slot;
	int ret;

	if (!root || (root->state & FI_VIRTUAL) || mode_dt(root->mode) != BCH_DT_DIR) {
		repair_failed(f, p, "the root is missing or not a directory\n");
		return;
	}
	if (inode_read(f, BCACHEFS_ROOT_INO, &ru)) {
		repair_failed(f, p, "the root inode cannot be read back\n");
		return;
	}
	ret = inum_new(f, &inum);
	if (ret) {
		repair_failed(f, p, ret == -EIO ? "a btree cannot be read to find a free inode number\n" :
			      f->inum_end == 1ULL << 32 ?
			      "no free inode number below 2^32 (the filesystem has 32 bit inodes)\n" :
			      "no free inode number\n");
		return;
	}
	dir_inode_new(f, &lu, inum, &ru);
	ru.bi_nlink++;
	bch_trans_init(&t, f->c);
	inode_put(&t, &lu);
	inode_put(&t, &ru);
	ret = dirent_add(f, &t, root, "lost+found", inum, BCH_DT_DIR, true, &slot);
	if (ret) {
		bch_trans_exit(&t);
		repair_failed(f, p, "cannot add the dirent to the root\n");
		return;
	}
	ret = fsck_commit(f->s, p, &t);
	bch_trans_exit(&t);
	if (ret)
		return;

	seen_inum(f, inum);
	old = f->lf_dirent ? inode_find(f, f->lf_inum) : NULL;
	if (old && old->count && !fi_is_dir(old))
		old->count--;
	lf = table_add(f, &lu);
	root = inode_find(f, BCACHEFS_ROOT_INO);
	root->nlink++;
	lf->count = 1;
	inc_sat(&root->dir_count);
	add_edge(f, root, lf, slot);
	f->lf_dirent = true;
	f->lf_inum   = inum;
}

/*
 * Checks that the root holds a "lost+found" dirent to an existing
 * directory (the directory walk then checks it is linked once).
 * Leaves: the directory walk.
 */
static int pass_lostfound(struct fsck_fs *f)
{
	struct fsck_inode *lf;

	if (!inode_find(f, BCACHEFS_ROOT_INO))
		return 0;	/* root missing and not created */
	if (!f->lf_dirent) {
		if (fsck_fix(f->s, PROB_lostfound_missing,
			     "lost+found missing (no such dirent in the root directory)"))
			create_lostfound(f, PROB_lostfound_missing);
		return 0;
	}
	lf = inode_find(f, f->lf_inum);
	if (!lf) {
		if (fsck_fix(f->s, PROB_lostfound_missing,
			     "lost+found missing (its dirent points to missing inode %" PRIu64 ")",
			     f->lf_inum))
			create_lostfound(f, PROB_lostfound_missing);
	} else if (!fi_is_dir(lf)) {
		/* the old inode stays reachable: under its number in the new lost+found */
		if (fsck_fix(f->s, PROB_lostfound_not_dir, "lost+found inode %" PRIu64 " not a directory (mode %o)",
			     lf->inum, lf->mode))
			create_lostfound(f, PROB_lostfound_not_dir);
	}
	return 0;
}

/* ---- pass 6: directory structure ------------------------------------------------------ */

static int edge_cmp(const void *a, const void *b)
{
	const struct fsck_edge *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->child != y->child)
		return x->child < y->child ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;	/* the first dirent is kept */
}

/*
 * A dirent to directory @e->child met when the child was already reached:
 * the child keeps the link it was reached by (or, for the top of a walk,
 * its new one in lost+found) and this dirent goes, when that is being
 * fixed: its multiple links, or its reattachment (@top: the loop it
 * closes).
 */
static void extra_link(struct fsck_fs *f, const struct fsck_edge *e, uint32_t top)
{
	struct fsck_inode *c = &f->inodes[e->child], *p = &f->inodes[e->parent];
	struct bch_hash_info h;
	enum bch_problem prob;

	if (c->state & FI_FIX_LINKS)
		prob = PROB_dir_multiple_links;
	else if (e->child == top)
		prob = PROB_dir_unreachable;
	else
		return;
	if (!entry_remove(f, prob, BTREE_ID_DIRENTS, fi_hash_info(p, &h) ? &h : NULL,
			  POS_H(p->inum, e->offset))) {
		c->count--;
		p->dir_count--;
	}
}

/*
 * Mark everything below @start reached (depth first, explicit stack); the
 * dirents to directories already reached are extra links (extra_link()).
 * @top: @start when it was just reattached, else IDX_NONE.
 */
static void walk_from(struct fsck_fs *f, uint32_t start, uint32_t top,
		      uint32_t **stack, size_t *stack_size)
{
	size_t sp = 0;

	if (f->inodes[start].state & FI_REACHED)
		return;
	f->inodes[start].state |= FI_REACHED;
	(*stack)[sp++] = start;
	while (sp) {
		struct fsck_inode *d = &f->inodes[(*stack)[--sp]];

		for (uint32_t e = d->first_edge; e < d->first_edge + d->nr_edges; e++) {
			uint32_t c = f->edges[e].child;

			if (f->inodes[c].state & FI_REACHED) {
				extra_link(f, &f->edges[e], top);
				continue;
			}
			f->inodes[c].state |= FI_REACHED;
			if (sp == *stack_size) {
				*stack_size *= 2;
				*stack = xrealloc(*stack, *stack_size * sizeof(**stack));
			}
			(*stack)[sp++] = c;
		}
	}
}

/*
 * Walks the directory tree from the root following the dirents kept by
 * the dirents pass, and checks that every directory is reached and that
 * no directory has more than one dirent (the root none). An unreachable
 * directory is reported at the top of what is cut off: one with no dirent
 * at all, or a directory of a loop that no path from the root enters;
 * reattaching it to lost+found makes what is below it reachable too, so
 * that is not reported again.
 * Repairs: a directory keeps the dirent it is first reached by, the
 * others go; an unreachable top gets a dirent in lost+found named after
 * its number (lost+found's nlink + 1), and the dirent closing its loop,
 * if any, goes.
 * Leaves: non-directory inodes with no dirent (orphans) to the link count
 * pass; it judges every directory as having one link once repaired.
 */
static int pass_dirs(struct fsck_fs *f)
{
	struct fsck_inode *root = inode_find(f, BCACHEFS_ROOT_INO);
	size_t stack_size = 256;
	uint32_t *stack;
	size_t i, e;

	if (!root)
		return 0;	/* root missing and not created: nothing to walk from */

	if (f->nr_edges)
		qsort(f->edges, f->nr_edges, sizeof(*f->edges), edge_cmp);
	for (e = 0; e < f->nr_edges; e++) {
		struct fsck_inode *p = &f->inodes[f->edges[e].parent];

		if (!p->nr_edges)
			p->first_edge = (uint32_t)e;
		p->nr_edges++;
	}

	for (i = 0; i < f->nr_inodes; i++) {
		struct fsck_inode *d = &f->inodes[i];
		bool fix = false;

		if (!fi_is_dir(d))
			continue;
		if (d == root && d->count)
			fix = fsck_fix(f->s, PROB_dir_multiple_links,
				       "root directory has %u dirents pointing to it (it must have none)",
				       d->count);
		else if (d != root && d->count > 1)
			fix = fsck_fix(f->s, PROB_dir_multiple_links,
				       "directory %" PRIu64 " has multiple hardlinks: %u dirents point to it",
				       d->inum, d->count);
		if (fix)
			d->state |= FI_FIX_LINKS;
	}

	stack = xmalloc(stack_size * sizeof(*stack));
	walk_from(f, fi_idx(f, root), IDX_NONE, &stack, &stack_size);

	/* Tops with no dirent. */
	for (i = 0; i < f->nr_inodes; i++) {
		struct fsck_inode *d = &f->inodes[i];
		bool fixed;

		if (!fi_is_dir(d) || (d->state & FI_REACHED) || d->count)
			continue;
		fixed = fsck_fix(f->s, PROB_dir_unreachable,
				 "unreachable directory found (inum %" PRIu64 "): no dirent points to it", d->inum) &&
			!reattach(f, PROB_dir_unreachable, d->inum);
		walk_from(f, (uint32_t)i, fixed ? (uint32_t)i : IDX_NONE, &stack, &stack_size);
	}
	/* Loops: follow parents up to a directory met twice, which is on the loop. */
	for (i = 0; i < f->nr_inodes; i++) {
		struct fsck_inode *d = &f->inodes[i];
		uint32_t x = (uint32_t)i, y;
		bool fixed;

		if (!fi_is_dir(d) || (d->state & FI_REACHED))
			continue;
		while (x != IDX_NONE && !(f->inodes[x].state & (FI_WALK | FI_REACHED))) {
			f->inodes[x].state |= FI_WALK;
			x = f->inodes[x].parent;
		}
		for (y = (uint32_t)i; y != IDX_NONE && (f->inodes[y].state & FI_WALK); y = f->inodes[y].parent)
			f->inodes[y].state &= (uint8_t)~FI_WALK;
		if (x == IDX_NONE || (f->inodes[x].state & FI_REACHED))
			x = (uint32_t)i;	/* cannot happen: the walks above would have reached it */
		fixed = fsck_fix(f->s, PROB_dir_unreachable,
				 "unreachable directory found (inum %" PRIu64 "): in a loop of directories not connected to the root",
				 f->inodes[x].inum) &&
			!reattach(f, PROB_dir_unreachable, f->inodes[x].inum);
		walk_from(f, x, fixed ? x : IDX_NONE, &stack, &stack_size);
	}
	free(stack);
	return 0;
}

/* ---- pass 7: link counts ----------------------------------------------------------------- */

static void set_nlink(struct bch_inode_unpacked *u, const void *arg)
{
	uint64_t want = *(const uint64_t *)arg, bias = mode_dt(u->bi_mode) == BCH_DT_DIR ? 2 : 1;

	u->bi_nlink = (uint32_t)(want > bias ? want - bias : 0);
}

struct size_fix {
	uint64_t	size;
	uint64_t	sectors;
	uint32_t	clear;		/* flags to clear */
	bool		set_size, set_sectors;
};

static void apply_size_fix(struct bch_inode_unpacked *u, const void *arg)
{
	const struct size_fix *x = arg;

	if (x->set_size)
		u->bi_size = x->size;
	if (x->set_sectors)
		u->bi_sectors = x->sectors;
	u->bi_flags &= ~x->clear;
}

/*
 * Checks, for every inode, its stored link count against the dirents kept
 * by the dirents pass (40 §40.8.8: directories 2 + one per subdirectory,
 * as the walk leaves each directory with one dirent; other inodes one per
 * dirent); that non-directories have at least one dirent (orphans); and
 * that I_SIZE_DIRTY and I_SECTORS_DIRTY are clear (they are left set only
 * by an interrupted truncate or fallocate).
 * Repairs: I_SIZE_DIRTY: i_size raised to cover the data of its extents
 * (nothing is discarded), flag cleared; I_SECTORS_DIRTY: bi_sectors set
 * to the recount, flag cleared; orphans reattached to lost+found (never
 * deleted); nlink stored as counted.
 * Last pass: leaves nothing.
 */
static int pass_nlinks(struct fsck_fs *f)
{
	const char *clean = f->clean ? "filesystem marked clean, but " : "";

	for (size_t i = 0; i < f->nr_inodes; i++) {
		struct fsck_inode *fi = &f->inodes[i];
		uint64_t expected, have = fi_nlink(fi);

		if (fi->state & FI_VIRTUAL)
			continue;	/* the missing root: reported */

		if ((fi->flags & BCH_INODE_I_SIZE_DIRTY) &&
		    fsck_fix(f->s, PROB_inode_i_size_dirty, "%sinode %" PRIu64 " has i_size dirty (i_size %" PRIu64 ")",
			     clean, fi->inum, fi->size)) {
			struct extent_sum sum;
			struct size_fix x = { .clear = BCH_INODE_I_SIZE_DIRTY };

			extents_scan(f, fi->inum, &sum);
			if (sum.data_end > size_limit(f, fi->size)) {
				x.set_size = true;
				x.size = sum.data_end > UINT64_MAX / 512 ? UINT64_MAX : sum.data_end * 512;
			}
			if (!inode_rewrite(f, PROB_inode_i_size_dirty, fi->inum, apply_size_fix, &x)) {
				fi->flags &= ~(uint32_t)BCH_INODE_I_SIZE_DIRTY;
				if (x.set_size)
					fi->size = x.size;
			}
		}
		if ((fi->flags & BCH_INODE_I_SECTORS_DIRTY) &&
		    fsck_fix(f->s, PROB_inode_i_sectors_dirty,
			     "%sinode %" PRIu64 " has i_sectors dirty (i_sectors %" PRIu64 ", counted %" PRIu64 ")",
			     clean, fi->inum, fi->sectors, fi->sectors_found)) {
			struct size_fix x = {
				.clear = BCH_INODE_I_SECTORS_DIRTY,
				.set_sectors = true, .sectors = fi->sectors_found,
			};

			if (!inode_rewrite(f, PROB_inode_i_sectors_dirty, fi->inum, apply_size_fix, &x)) {
				fi->flags &= ~(uint32_t)BCH_INODE_I_SECTORS_DIRTY;
				fi->sectors = fi->sectors_found;
			}
		}

		if (fi_is_dir(fi)) {
			if (fi->count > 1)
				continue;	/* multiple links reported, not fixed */
			expected = 2 + (uint64_t)fi->dir_count;
		} else {
			if (!fi->count) {
				/* reattached, not deleted: its data may matter (the link count is set with it) */
				if (fsck_fix(f->s, PROB_inode_unreachable,
					     "%sfound orphaned inode %" PRIu64 " (type %u, i_nlink %" PRIu64 ", no dirent points to it)",
					     clean, fi->inum, fi_dt(fi), have))
					reattach(f, PROB_inode_unreachable, fi->inum);
				continue;
			}
			expected = fi->count;
		}
		if (have != expected &&
		    fsck_fix(f->s, PROB_inode_nlink_wrong,
			     "%sinode %" PRIu64 " has wrong i_nlink (type %u i_nlink %" PRIu64 ", should be %" PRIu64 ")",
			     clean, fi->inum, fi_dt(fi), have, expected) &&
		    !inode_rewrite(f, PROB_inode_nlink_wrong, fi->inum, set_nlink, &expected))
			fi->nlink = (uint32_t)(expected - (fi_is_dir(fi) ? 2 : 1));
	}
	return 0;
}

/* ---- the pass table ------------------------------------------------------------------------- */

static const struct {
	const char	*name;
	int		(*fn)(struct fsck_fs *f);
} fs_passes[] = {
	{ "extents",			pass_extents },
	{ "dirents",			pass_dirents },
	{ "xattrs",			pass_xattrs },
	{ "root directory",		pass_root },
	{ "lost+found",			pass_lostfound },
	{ "directory structure",	pass_dirs },
	{ "inode nlinks",		pass_nlinks },
};

int bch_fsck_fs(struct bch_fs *c, struct fsck_state *s)
{
	struct fsck_fs f = {
		.c		= c,
		.s		= s,
		.clean		= c->sb && BCH_SB_CLEAN(c->sb),
		.block_bytes	= c->block_size * 512,
		.next_inum	= BCACHEFS_ROOT_INO + 1,
		.inum_end	= c->sb && BCH_SB_INODE_32BIT(c->sb) ? 1ULL << 32 : UINT64_MAX,
		.err		= PRINTBUF,
		.key		= PRINTBUF,
	};
	int ret;

	bch_trans_init(&f.batch, c);
	ret = load_inodes(&f);
	if (!ret && !f.stop)
		ret = check_root_missing(&f);
	for (size_t i = 0; i < ARRAY_SIZE(fs_passes) && !ret && !f.stop && !s->cancelled; i++)
		ret = fs_passes[i].fn(&f);

	batch_flush(&f);
	bch_trans_exit(&f.batch);
	free(f.moved);
	free(f.inodes);
	free(f.edges);
	free(f.run.slots);
	free(f.run.names);
	printbuf_exit(&f.err);
	printbuf_exit(&f.key);
	return ret;
}
