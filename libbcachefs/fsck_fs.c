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
 * Every finding goes through fsck_fix(). The repairs need the
 * transactional write engine: each fsck_fix() site has a TODO saying what
 * the repair is, and the passes after it already judge the filesystem as
 * it will be once repaired (a dirent that will be removed is not counted,
 * a root directory whose mode was damaged is treated as a directory...),
 * so one problem is reported once and not again through its consequences.
 *
 * Memory: one fixed-size record per inode and one pair per subdirectory
 * link, grown geometrically; no per-inode allocation, no quadratic step.
 */
#include "fsck_fs.h"

#include "bkey_types.h"
#include "btree.h"
#include "dirent.h"
#include "format.h"
#include "fs.h"
#include "inode.h"
#include "problems.h"
#include "util.h"
#include "xattr.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- in-memory tables ---------------------------------------------------- */

#define FI_REACHED	(1U << 0)	/* directory walk reached it */
#define FI_WALK		(1U << 1)	/* on the parent chain being followed */
#define FI_FORCE_DIR	(1U << 2)	/* the root: treated as the directory it must be */

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

/*
 * Check the live entry at offset @o of the current run, hashed to @h:
 * the hash must lie inside the run, at or before @o, and no earlier entry
 * of the run may have the same name. Returns false for a duplicate (the
 * entry will go).
 */
static bool check_hash_pos(struct fsck_fs *f, unsigned btree_id, const struct bkey_ref *k,
			   uint64_t h, unsigned type, const uint8_t *name, unsigned len)
{
	struct hash_run *r = &f->run;

	if (h < r->start || h > k->k.p.offset) {
		/* TODO(repair): delete the key and insert it again from its hash (first slot that is not a live entry). */
		fsck_fix(f->s, PROB_hash_wrong_offset,
			 "hash table key at wrong offset: %" PRIu64 ", hashed to %" PRIu64
			 " chain starts at %" PRIu64 "\n%s",
			 k->k.p.offset, h, r->start, key_text(f, btree_id, k));
	}
	if (run_seen(r, h, type, name, len)) {
		/* TODO(repair): hash-delete this later copy (whiteout rule of 40 §40.6.3); the first one stays. */
		fsck_fix(f->s, PROB_hash_duplicate,
			 "duplicate hash table keys (an earlier entry of the chain has the same name):\n%s",
			 key_text(f, btree_id, k));
		return false;
	}
	return true;
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

		if (k->k.type != BCH_INODE_FS || bch_inode_unpack(k, &u) ||
		    (f->nr_inodes && f->inodes[f->nr_inodes - 1].inum >= k->k.p.inode) ||
		    f->nr_inodes >= IDX_NONE - 1)
			goto next;

		if (f->nr_inodes == f->inodes_size) {
			f->inodes_size = f->inodes_size ? f->inodes_size * 2 : 1024;
			f->inodes = xrealloc(f->inodes, f->inodes_size * sizeof(*f->inodes));
		}
		fi = &f->inodes[f->nr_inodes++];
		memset(fi, 0, sizeof(*fi));
		fi->inum	= k->k.p.inode;
		fi->size	= u.bi_size;
		fi->sectors	= u.bi_sectors;
		fi->hash_seed	= u.bi_hash_seed;
		fi->flags	= u.bi_flags;
		fi->nlink	= u.bi_nlink;
		fi->mode	= u.bi_mode;
		fi->parent	= IDX_NONE;
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
			if (fi)
				limit = fi->size > UINT64_MAX - round
					? UINT64_MAX / 512
					: (fi->size + round - 1) / round * round / 512;
		}
		if (!fi) {
			if (!reported)
				/* TODO(repair): delete every extent of this inode number. */
				fsck_fix(f->s, PROB_extent_missing_inode,
					 "extent type %u for missing inode %" PRIu64, type, cur);
			reported = true;
			goto next;
		}
		if (mode_dt(fi->mode) != BCH_DT_REG && mode_dt(fi->mode) != BCH_DT_LNK) {
			if (!reported)
				/* TODO(repair): delete every extent of this inode. */
				fsck_fix(f->s, PROB_extent_non_regular,
					 "extent type %u for non regular file, inode %" PRIu64 " mode %o",
					 type, cur, fi->mode);
			reported = true;
			goto next;
		}
		if (type == BCH_EXTENT || type == BCH_EXTENT_CACHED || type == BCH_RESERVATION)
			fi->sectors_found += k->k.size;
		if (!(fi->flags & BCH_INODE_I_SIZE_DIRTY) && type != BCH_RESERVATION &&
		    k->k.p.offset > limit && !reported) {
			/*
			 * TODO(repair): delete the extents from sector @limit on
			 * (cutting the one that straddles it), then recount
			 * bi_sectors.
			 */
			fsck_fix(f->s, PROB_extent_past_isize,
				 "extent type %u offset %" PRIu64 " past end of inode %" PRIu64
				 ", i_size %" PRIu64, type, k->k.p.offset, cur, fi->size);
			reported = true;
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
		if (x->sectors != x->sectors_found)
			/* TODO(repair): set bi_sectors to the recount and rewrite the inode. */
			fsck_fix(f->s, PROB_inode_i_sectors_wrong,
				 "inode %" PRIu64 ": i_sectors wrong: got %" PRIu64 ", should be %" PRIu64,
				 x->inum, x->sectors, x->sectors_found);
	}
	return 0;
}

/* ---- pass 2: dirents ------------------------------------------------------------ */

static void add_edge(struct fsck_fs *f, struct fsck_inode *dir, struct fsck_inode *sub)
{
	if (f->nr_edges == f->edges_size) {
		f->edges_size = f->edges_size ? f->edges_size * 2 : 256;
		f->edges = xrealloc(f->edges, f->edges_size * sizeof(*f->edges));
	}
	f->edges[f->nr_edges++] = (struct fsck_edge) { fi_idx(f, dir), fi_idx(f, sub) };
	if (sub->parent == IDX_NONE)
		sub->parent = fi_idx(f, dir);
}

static bool name_is(const struct bch_dirent_h *d, const char *s)
{
	size_t n = strlen(s);

	return d->name_len == n && !memcmp(d->name, s, n);
}

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
	struct btree_iter iter;
	struct bkey_ref *k;
	struct fsck_inode *dir = NULL;
	struct bch_hash_info hinfo;
	uint64_t cur = 0;
	bool have_cur = false, hash_ok = false;
	int ret;

	f->run.active = false;
	bch_btree_iter_init(&iter, f->c, BTREE_ID_DIRENTS, POS_H(BCACHEFS_ROOT_INO, 0), &f->err);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
		struct bch_dirent_h d;
		struct fsck_inode *target;

		if (k->k.p.inode < BCACHEFS_ROOT_INO)
			goto next;
		if (!have_cur || k->k.p.inode != cur) {
			have_cur = true;
			cur	 = k->k.p.inode;
			dir	 = inode_find(f, cur);
			hash_ok	 = dir && !bch_hash_info_init(&hinfo, (dir->flags >> 20) & 0xf,
							      dir->hash_seed);
			f->run.active = false;
		}
		if (!dir) {
			/* TODO(repair): delete the key. */
			fsck_fix(f->s, PROB_dirent_missing_dir, "dirent in nonexisting directory:\n%s",
				 key_text(f, BTREE_ID_DIRENTS, k));
			goto next;
		}
		if (!fi_is_dir(dir)) {
			/* TODO(repair): delete the key. */
			fsck_fix(f->s, PROB_dirent_in_non_dir, "dirent in non directory inode type %u:\n%s",
				 mode_dt(dir->mode), key_text(f, BTREE_ID_DIRENTS, k));
			goto next;
		}
		run_step(&f->run, cur, k->k.p.offset);
		if (k->k.type != BCH_DIRENT || bch_dirent_decode(k, &d))
			goto next;	/* whiteouts only extend the run; invalid keys: key pass */

		if (hash_ok &&
		    !check_hash_pos(f, BTREE_ID_DIRENTS, k, bch_dirent_hash(&hinfo, d.name, d.name_len),
				    0, d.name, d.name_len))
			goto next;

		if (cur == BCACHEFS_ROOT_INO && name_is(&d, "lost+found")) {
			f->lf_dirent = true;
			f->lf_inum   = d.d_inum;
		}

		if (!d.name_len) {
			/* TODO(repair): hash-delete the dirent. */
			fsck_fix(f->s, PROB_dirent_empty_name, "empty dirent:\n%s",
				 key_text(f, BTREE_ID_DIRENTS, k));
			goto next;
		}
		if (name_is(&d, ".") || name_is(&d, "..")) {
			/* TODO(repair): hash-delete the dirent. */
			fsck_fix(f->s, PROB_dirent_dot, "%s dirent:\n%s",
				 d.name_len == 1 ? "." : "..", key_text(f, BTREE_ID_DIRENTS, k));
			goto next;
		}
		if (d.d_inum == cur) {
			/* TODO(repair): hash-delete the dirent. */
			fsck_fix(f->s, PROB_dirent_self, "dirent points to own directory:\n%s",
				 key_text(f, BTREE_ID_DIRENTS, k));
			goto next;
		}
		target = inode_find(f, d.d_inum);
		if (!target) {
			/* TODO(repair): hash-delete the dirent. */
			fsck_fix(f->s, PROB_dirent_missing_inode, "dirent points to missing inode:\n%s",
				 key_text(f, BTREE_ID_DIRENTS, k));
			goto next;
		}
		if (d.d_type != fi_dt(target))
			/* TODO(repair): rewrite the dirent with the right d_type. */
			fsck_fix(f->s, PROB_dirent_bad_d_type, "incorrect d_type: should be %u:\n%s",
				 fi_dt(target), key_text(f, BTREE_ID_DIRENTS, k));

		inc_sat(&target->count);
		if (fi_is_dir(target)) {
			inc_sat(&dir->dir_count);
			add_edge(f, dir, target);
		}
next:
		bch_btree_iter_advance(&iter);
	}
	return iter_end(f, &iter, ret);
}

/* ---- pass 3: xattrs --------------------------------------------------------------- */

/*
 * Checks every xattrs-btree key of inode 4096 and up: its inode exists
 * (else the key goes), and each live entry sits where linear probing from
 * its hash finds it and repeats no earlier (type, name) of its run.
 * Leaves nothing for later passes.
 */
static int pass_xattrs(struct fsck_fs *f)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	struct fsck_inode *fi = NULL;
	struct bch_hash_info hinfo;
	uint64_t cur = 0;
	bool have_cur = false, hash_ok = false, reported = false;
	int ret;

	f->run.active = false;
	bch_btree_iter_init(&iter, f->c, BTREE_ID_XATTRS, POS_H(BCACHEFS_ROOT_INO, 0), &f->err);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
		struct bch_xattr_h x;

		if (k->k.p.inode < BCACHEFS_ROOT_INO)
			goto next;
		if (!have_cur || k->k.p.inode != cur) {
			have_cur = true;
			cur	 = k->k.p.inode;
			fi	 = inode_find(f, cur);
			hash_ok	 = fi && !bch_hash_info_init(&hinfo, (fi->flags >> 20) & 0xf,
							     fi->hash_seed);
			reported = false;
			f->run.active = false;
		}
		if (!fi) {
			if (!reported)
				/* TODO(repair): delete every xattr key of this inode number. */
				fsck_fix(f->s, PROB_xattr_missing_inode,
					 "xattr for missing inode %" PRIu64 ":\n%s",
					 cur, key_text(f, BTREE_ID_XATTRS, k));
			reported = true;
			goto next;
		}
		run_step(&f->run, cur, k->k.p.offset);
		if (k->k.type != BCH_XATTR || bch_xattr_decode(k, &x) || !hash_ok)
			goto next;
		check_hash_pos(f, BTREE_ID_XATTRS, k,
			       bch_xattr_hash(&hinfo, x.x_type, x.name, x.name_len),
			       x.x_type, x.name, x.name_len);
next:
		bch_btree_iter_advance(&iter);
	}
	return iter_end(f, &iter, ret);
}

/* ---- pass 4: root directory ------------------------------------------------------- */

/*
 * Checks that inode 4096 exists and is a directory. A root whose mode
 * says otherwise was already treated as a directory by the passes before
 * (its repair restores the directory mode, keeping its dirents).
 * Leaves: the lost+found dirent to the next pass.
 */
static int pass_root(struct fsck_fs *f)
{
	struct fsck_inode *root = inode_find(f, BCACHEFS_ROOT_INO);

	if (!root)
		/* TODO(repair): create the root directory (40 §40.5.8). */
		fsck_fix(f->s, PROB_root_missing, "root directory missing");
	else if (mode_dt(root->mode) != BCH_DT_DIR)
		/* TODO(repair): set the root's mode to a directory (S_IFDIR | 0755), keeping its dirents. */
		fsck_fix(f->s, PROB_root_not_dir, "root inode not a directory (mode %o)", root->mode);
	return 0;
}

/* ---- pass 5: lost+found ------------------------------------------------------------- */

/*
 * Checks that the root holds a "lost+found" dirent to an existing
 * directory (the directory walk then checks it is linked once).
 * Leaves: the directory walk.
 */
static int pass_lostfound(struct fsck_fs *f)
{
	struct fsck_inode *lf;

	if (!inode_find(f, BCACHEFS_ROOT_INO))
		return 0;	/* created with the root */
	if (!f->lf_dirent) {
		/* TODO(repair): create lost+found (40 §40.8.6): new directory, dirent in the root, root nlink + 1. */
		fsck_fix(f->s, PROB_lostfound_missing, "lost+found missing (no such dirent in the root directory)");
		return 0;
	}
	lf = inode_find(f, f->lf_inum);
	if (!lf)
		/* TODO(repair): create a new lost+found; its dirent replaces the dangling one. */
		fsck_fix(f->s, PROB_lostfound_missing, "lost+found missing (its dirent points to missing inode %" PRIu64 ")",
			 f->lf_inum);
	else if (!fi_is_dir(lf))
		/* TODO(repair): create a new lost+found directory; the old inode stays reachable under another name. */
		fsck_fix(f->s, PROB_lostfound_not_dir, "lost+found inode %" PRIu64 " not a directory (mode %o)",
			 lf->inum, lf->mode);
	return 0;
}

/* ---- pass 6: directory structure ------------------------------------------------------ */

static int edge_cmp(const void *a, const void *b)
{
	const struct fsck_edge *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->child < y->child ? -1 : x->child > y->child;
}

/* Mark everything below @start reached (depth first, explicit stack). */
static void walk_from(struct fsck_fs *f, uint32_t start, uint32_t **stack, size_t *stack_size)
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

			if (f->inodes[c].state & FI_REACHED)
				continue;
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
		return 0;	/* everything is below the root that the repair creates */

	qsort(f->edges, f->nr_edges, sizeof(*f->edges), edge_cmp);
	for (e = 0; e < f->nr_edges; e++) {
		struct fsck_inode *p = &f->inodes[f->edges[e].parent];

		if (!p->nr_edges)
			p->first_edge = (uint32_t)e;
		p->nr_edges++;
	}

	for (i = 0; i < f->nr_inodes; i++) {
		struct fsck_inode *d = &f->inodes[i];

		if (!fi_is_dir(d))
			continue;
		if (d == root && d->count)
			/* TODO(repair): remove the dirents that point to the root. */
			fsck_fix(f->s, PROB_dir_multiple_links,
				 "root directory has %u dirents pointing to it (it must have none)",
				 d->count);
		else if (d != root && d->count > 1)
			/* TODO(repair): keep the first dirent reached from the root, remove the others. */
			fsck_fix(f->s, PROB_dir_multiple_links,
				 "directory %" PRIu64 " has multiple hardlinks: %u dirents point to it",
				 d->inum, d->count);
	}

	stack = xmalloc(stack_size * sizeof(*stack));
	walk_from(f, fi_idx(f, root), &stack, &stack_size);

	/* Tops with no dirent. */
	for (i = 0; i < f->nr_inodes; i++) {
		struct fsck_inode *d = &f->inodes[i];

		if (!fi_is_dir(d) || (d->state & FI_REACHED) || d->count)
			continue;
		/* TODO(repair): reattach to lost+found (dirent named after the inum, lost+found nlink + 1). */
		fsck_fix(f->s, PROB_dir_unreachable,
			 "unreachable directory found (inum %" PRIu64 "): no dirent points to it", d->inum);
		walk_from(f, (uint32_t)i, &stack, &stack_size);
	}
	/* Loops: follow parents up to a directory met twice, which is on the loop. */
	for (i = 0; i < f->nr_inodes; i++) {
		struct fsck_inode *d = &f->inodes[i];
		uint32_t x = (uint32_t)i, y;

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
		/* TODO(repair): reattach to lost+found, removing the dirent that closes the loop. */
		fsck_fix(f->s, PROB_dir_unreachable,
			 "unreachable directory found (inum %" PRIu64 "): in a loop of directories not connected to the root",
			 f->inodes[x].inum);
		walk_from(f, x, &stack, &stack_size);
	}
	free(stack);
	return 0;
}

/* ---- pass 7: link counts ----------------------------------------------------------------- */

/*
 * Checks, for every inode, its stored link count against the dirents kept
 * by the dirents pass (40 §40.8.8: directories 2 + one per subdirectory,
 * as the walk leaves each directory with one dirent; other inodes one per
 * dirent); that non-directories have at least one dirent (orphans); and
 * that I_SIZE_DIRTY and I_SECTORS_DIRTY are clear (they are left set only
 * by an interrupted truncate or fallocate).
 * Last pass: leaves nothing.
 */
static int pass_nlinks(struct fsck_fs *f)
{
	const char *clean = f->clean ? "filesystem marked clean, but " : "";

	for (size_t i = 0; i < f->nr_inodes; i++) {
		struct fsck_inode *fi = &f->inodes[i];
		uint64_t expected, have = fi_nlink(fi);

		if (fi->flags & BCH_INODE_I_SIZE_DIRTY)
			/* TODO(repair): truncate the extents past round_up(i_size, 4096), recount bi_sectors, clear the flag. */
			fsck_fix(f->s, PROB_inode_i_size_dirty, "%sinode %" PRIu64 " has i_size dirty (i_size %" PRIu64 ")",
				 clean, fi->inum, fi->size);
		if (fi->flags & BCH_INODE_I_SECTORS_DIRTY)
			/* TODO(repair): set bi_sectors to the recount, clear the flag. */
			fsck_fix(f->s, PROB_inode_i_sectors_dirty,
				 "%sinode %" PRIu64 " has i_sectors dirty (i_sectors %" PRIu64 ", counted %" PRIu64 ")",
				 clean, fi->inum, fi->sectors, fi->sectors_found);

		if (fi_is_dir(fi)) {
			if (fi->count > 1)
				continue;	/* multiple links reported; recount after the repair */
			expected = 2 + (uint64_t)fi->dir_count;
		} else {
			if (!fi->count) {
				/* TODO(repair): reattach to lost+found if it holds data, else delete the inode (40 §40.5.10). */
				fsck_fix(f->s, PROB_inode_unreachable,
					 "%sfound orphaned inode %" PRIu64 " (type %u, i_nlink %" PRIu64 ", no dirent points to it)",
					 clean, fi->inum, fi_dt(fi), have);
				continue;
			}
			expected = fi->count;
		}
		if (have != expected)
			/* TODO(repair): store nlink = expected - bias and rewrite the inode. */
			fsck_fix(f->s, PROB_inode_nlink_wrong,
				 "%sinode %" PRIu64 " has wrong i_nlink (type %u i_nlink %" PRIu64 ", should be %" PRIu64 ")",
				 clean, fi->inum, fi_dt(fi), have, expected);
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
		.err		= PRINTBUF,
		.key		= PRINTBUF,
	};
	int ret;

	ret = load_inodes(&f);
	for (size_t i = 0; i < ARRAY_SIZE(fs_passes) && !ret && !f.stop && !s->cancelled; i++)
		ret = fs_passes[i].fn(&f);

	free(f.inodes);
	free(f.edges);
	free(f.run.slots);
	free(f.run.names);
	printbuf_exit(&f.err);
	printbuf_exit(&f.key);
	return ret;
}
