// SPDX-License-Identifier: GPL-2.0
/*
 * fsck, filesystem level (doc/fsck.md §11; detection side).
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
 *				the run probed past it (doc/format.md §5.6.3)
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
#include "fsck/fsck_dirs.h"
#include "core/bch_fs.h"
#include "format/format.h"
#include "fsck/fsck_fs.h"
#include "fsck/fs_tables.h"
#include "fsck/fsck_lost.h"

#include "fs/fsread.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

	fsck_extents_scan(f, fi->inum, &sum);
	if (fsck_inode_read(f, fi->inum, &u) || !sum.data_end)
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
	if (!len || len >= (uint64_t)r || len >= sizeof(buf) || sum.end > fsck_size_limit(f, len))
		return false;
	if (fsck_inode_rewrite(f, PROB_extent_past_isize, fi->inum, set_size, &len))
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

	fsck_extents_scan(f, inum, &sum);
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

	fsck_extents_scan(f, fi->inum, &before);
	bch_trans_init(&t, f->c);
	if (before.end > limit)
		bch_trans_delete_extents(&t, fi->inum, limit, before.end);
	ret = fsck_commit(f->s, PROB_extent_past_isize, &t);
	bch_trans_exit(&t);
	if (ret)
		return ret;
	fsck_extents_scan(f, fi->inum, &after);
	fi->sectors_found = after.sectors;
	if (!(fi->flags & BCH_INODE_I_SECTORS_DIRTY) && fi->sectors == before.sectors &&
	    after.sectors != before.sectors &&
	    !fsck_inode_rewrite(f, PROB_extent_past_isize, fi->inum, set_sectors, &after.sectors))
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
			fi	 = fsck_inode_find(f, cur);
			reported = false;
			fsck_seen_inum(f, cur);
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
				fsck_iter_restart(f, &iter, BTREE_ID_EXTENTS, POS_H(cur, UINT64_MAX));
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
				fsck_iter_restart(f, &iter, BTREE_ID_EXTENTS, POS_H(cur, UINT64_MAX));
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
				fsck_iter_restart(f, &iter, BTREE_ID_EXTENTS, POS_H(cur, UINT64_MAX));
				continue;
			}
		}
next:
		bch_btree_iter_advance(&iter);
	}
	fsck_iter_end(f, &iter, ret);
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
		    !fsck_inode_rewrite(f, PROB_inode_i_sectors_wrong, x->inum, set_sectors, &x->sectors_found))
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
 * (fsck_check_hash_pos(): a duplicate is hash-deleted, a key at the wrong
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
	fsck_moved_reset(f);
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
			w.owner	   = fsck_inode_find(f, w.cur);
			/* (not those of a stand-in root: its seed is unknown) */
			w.hash_ok  = w.owner && !(w.owner->state & FI_VIRTUAL) &&
				     fsck_fi_hash_info(w.owner, &w.hinfo);
			w.reported = false;
			w.fixing   = false;
			f->run.active = false;
			fsck_seen_inum(f, w.cur);
		}
		if (b->owner_bad(f, &w, k))
			goto next;
		fsck_run_step(&f->run, w.cur, pos.offset);
		if (!fsck_entry_decode(b->btree_id, w.hash_ok ? &w.hinfo : NULL, k, &e))
			goto next;	/* whiteouts only extend the run; invalid keys: key pass */
		fsck_seen_inum(f, e.d.d_inum);	/* a dirent's target number is in use too */

		if (w.hash_ok) {
			if (fsck_moved_has(f, pos)) {
				/* put here by a repair: checked and counted at its old place */
				fsck_run_seen(&f->run, e.hash, e.n.type, e.n.name, e.n.len);
				goto next;
			}
			hp = fsck_check_hash_pos(f, b->btree_id, k, &e);
			if (hp == HP_DUP_FIX)
				fsck_entry_remove(f, PROB_hash_duplicate, b->btree_id, &w.hinfo, pos);
			if (hp == HP_DUP || hp == HP_DUP_FIX)
				goto next;
		}

		w.rewrite = -1;
		w.v	  = k->v;
		w.v_bytes = k->v_bytes;
		if (b->entry && !b->entry(f, &w, k, &e))
			goto next;
		if (hp == HP_MOVE || w.rewrite >= 0) {
			int r = fsck_entry_fix(f, hp == HP_MOVE ? PROB_hash_wrong_offset : (enum bch_problem)w.rewrite,
					  hp == HP_MOVE ? w.rewrite : -1, b->btree_id,
					  w.hash_ok ? &w.hinfo : NULL, pos, e.hash, &e.n, w.v, w.v_bytes,
					  hp == HP_MOVE, &at);

			if (r == 1)
				goto next;	/* a duplicate of an entry on its probe sequence: deleted */
			if (!r && hp == HP_MOVE && at > pos.offset) {
				fsck_moved_add(f, POS_H(w.cur, at));
				restart = true;
			}
		}
		if (b->kept)
			b->kept(f, &w, &e, at);
		if (restart) {
			fsck_iter_restart(f, &iter, b->btree_id, POS_H(w.cur, pos.offset + 1));
			continue;
		}
next:
		bch_btree_iter_advance(&iter);
	}
	fsck_batch_flush(f);
	return fsck_iter_end(f, &iter, ret);
}

/* ---- pass 2: dirents ------------------------------------------------------------ */

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
			     fsck_key_text(f, BTREE_ID_DIRENTS, k)))
			fsck_batch_delete(f, PROB_dirent_missing_dir, BTREE_ID_DIRENTS, k->k.p, true);
		return true;
	}
	if (!fi_is_dir(dir)) {
		if (fsck_fix(f->s, PROB_dirent_in_non_dir, "dirent in non directory inode type %u:\n%s",
			     mode_dt(dir->mode), fsck_key_text(f, BTREE_ID_DIRENTS, k)))
			fsck_batch_delete(f, PROB_dirent_in_non_dir, BTREE_ID_DIRENTS, k->k.p, true);
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
	} else if (!(w->target = fsck_inode_find(f, d->d_inum))) {
		p   = PROB_dirent_missing_inode;
		bad = "dirent points to missing inode";
	}
	if (bad) {
		if (fsck_fix(f->s, p, "%s:\n%s", bad, fsck_key_text(f, BTREE_ID_DIRENTS, k)))
			fsck_entry_remove(f, p, BTREE_ID_DIRENTS, w->hash_ok ? &w->hinfo : NULL, k->k.p);
		return false;
	}

	if (d->d_type != fi_dt(w->target) &&
	    fsck_fix(f->s, PROB_dirent_bad_d_type, "incorrect d_type: should be %u:\n%s",
		     fi_dt(w->target), fsck_key_text(f, BTREE_ID_DIRENTS, k))) {
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
		fsck_add_edge(f, w->owner, w->target, at);
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
				     w->cur, fsck_key_text(f, BTREE_ID_XATTRS, k));
	if (w->fixing)
		fsck_batch_delete(f, PROB_xattr_missing_inode, BTREE_ID_XATTRS, k->k.p, !w->reported);
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

/* ---- the pass table ------------------------------------------------------------------------- */

static const struct {
	const char	*name;
	int		(*fn)(struct fsck_fs *f);
} fs_passes[] = {
	{ "extents",			pass_extents },
	{ "dirents",			pass_dirents },
	{ "xattrs",			pass_xattrs },
	{ "root directory",		fsck_pass_root },
	{ "lost+found",			fsck_pass_lostfound },
	{ "directory structure",	fsck_pass_dirs },
	{ "inode nlinks",		fsck_pass_nlinks },
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
	ret = fsck_load_inodes(&f);
	if (!ret && !f.stop)
		ret = fsck_pass_lost_inodes(&f);
	if (!ret && !f.stop)
		ret = fsck_check_root_missing(&f);
	for (size_t i = 0; i < ARRAY_SIZE(fs_passes) && !ret && !f.stop && !s->cancelled; i++)
		ret = fs_passes[i].fn(&f);

	fsck_batch_flush(&f);
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
