// SPDX-License-Identifier: GPL-2.0
/*
 * fsck's filesystem pass, passes 4 to 7: the root directory, lost+found,
 * the directory structure (every directory reached once from the root),
 * link counts. See fsck_fs.c for what each finds and repairs.
 */
#include "core/bch_fs.h"
#include "format/format.h"
#include "fsck/fsck_dirs.h"
#include "fsck/fs_tables.h"


#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
int fsck_pass_root(struct fsck_fs *f)
{
	struct fsck_inode *root = fsck_inode_find(f, BCACHEFS_ROOT_INO);

	if (!root || (root->state & FI_VIRTUAL))
		return 0;	/* missing: reported (and created) before the other passes */
	if (mode_dt(root->mode) != BCH_DT_DIR) {
		if (fsck_fix(f->s, PROB_root_not_dir, "root inode not a directory (mode %o)", root->mode) &&
		    !fsck_inode_rewrite(f, PROB_root_not_dir, root->inum, set_dir_mode, NULL)) {
			root->mode = DIR_MODE;
			root->state &= (uint8_t)~FI_FORCE_DIR;
		}
	}
	return 0;
}

/* ---- pass 5: lost+found ------------------------------------------------------------- */

/*
 * Create lost+found (doc/fsck.md §11.5): a new directory inode (numbered by
 * fsck_inum_new(): above every inode number in use, below 2^32 with 32 bit
 * inodes), its dirent in the root (replacing one of
 * that name), the root's nlink + 1. An inode the old dirent pointed to
 * loses that link (the link count pass reattaches it if it has no other).
 */
static void create_lostfound(struct fsck_fs *f, enum bch_problem p)
{
	struct fsck_inode *root = fsck_inode_find(f, BCACHEFS_ROOT_INO), *old, *lf;
	struct bch_inode_unpacked ru, lu;
	struct btree_trans t;
	uint64_t inum, slot;
	int ret;

	if (!root || (root->state & FI_VIRTUAL) || mode_dt(root->mode) != BCH_DT_DIR) {
		fsck_repair_failed(f, p, "the root is missing or not a directory\n");
		return;
	}
	if (fsck_inode_read(f, BCACHEFS_ROOT_INO, &ru)) {
		fsck_repair_failed(f, p, "the root inode cannot be read back\n");
		return;
	}
	ret = fsck_inum_new(f, &inum);
	if (ret) {
		fsck_repair_failed(f, p, ret == -EIO ? "a btree cannot be read to find a free inode number\n" :
			      f->inum_end == 1ULL << 32 ?
			      "no free inode number below 2^32 (the filesystem has 32 bit inodes)\n" :
			      "no free inode number\n");
		return;
	}
	fsck_dir_inode_new(f, &lu, inum, &ru);
	ru.bi_nlink++;
	bch_trans_init(&t, f->c);
	fsck_inode_put(&t, &lu);
	fsck_inode_put(&t, &ru);
	ret = fsck_dirent_add(f, &t, root, "lost+found", inum, BCH_DT_DIR, true, &slot);
	if (ret) {
		bch_trans_exit(&t);
		fsck_repair_failed(f, p, "cannot add the dirent to the root\n");
		return;
	}
	ret = fsck_commit(f->s, p, &t);
	bch_trans_exit(&t);
	if (ret)
		return;

	fsck_seen_inum(f, inum);
	old = f->lf_dirent ? fsck_inode_find(f, f->lf_inum) : NULL;
	if (old && old->count && !fi_is_dir(old))
		old->count--;
	lf = fsck_table_add(f, &lu);
	root = fsck_inode_find(f, BCACHEFS_ROOT_INO);
	root->nlink++;
	lf->count = 1;
	inc_sat(&root->dir_count);
	fsck_add_edge(f, root, lf, slot);
	f->lf_dirent = true;
	f->lf_inum   = inum;
}

/*
 * Checks that the root holds a "lost+found" dirent to an existing
 * directory (the directory walk then checks it is linked once).
 * Leaves: the directory walk.
 */
int fsck_pass_lostfound(struct fsck_fs *f)
{
	struct fsck_inode *lf;

	if (!fsck_inode_find(f, BCACHEFS_ROOT_INO))
		return 0;	/* root missing and not created */
	if (!f->lf_dirent) {
		if (fsck_fix(f->s, PROB_lostfound_missing,
			     "lost+found missing (no such dirent in the root directory)"))
			create_lostfound(f, PROB_lostfound_missing);
		return 0;
	}
	lf = fsck_inode_find(f, f->lf_inum);
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
	if (!fsck_entry_remove(f, prob, BTREE_ID_DIRENTS, fsck_fi_hash_info(p, &h) ? &h : NULL,
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
int fsck_pass_dirs(struct fsck_fs *f)
{
	struct fsck_inode *root = fsck_inode_find(f, BCACHEFS_ROOT_INO);
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
			!fsck_reattach(f, PROB_dir_unreachable, d->inum);
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
			!fsck_reattach(f, PROB_dir_unreachable, f->inodes[x].inum);
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
 * by the dirents pass (doc/fsck.md §11.7: directories 2 + one per subdirectory,
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
int fsck_pass_nlinks(struct fsck_fs *f)
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

			fsck_extents_scan(f, fi->inum, &sum);
			if (sum.data_end > fsck_size_limit(f, fi->size)) {
				x.set_size = true;
				x.size = sum.data_end > UINT64_MAX / 512 ? UINT64_MAX : sum.data_end * 512;
			}
			if (!fsck_inode_rewrite(f, PROB_inode_i_size_dirty, fi->inum, apply_size_fix, &x)) {
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

			if (!fsck_inode_rewrite(f, PROB_inode_i_sectors_dirty, fi->inum, apply_size_fix, &x)) {
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
					fsck_reattach(f, PROB_inode_unreachable, fi->inum);
				continue;
			}
			expected = fi->count;
		}
		if (have != expected &&
		    fsck_fix(f->s, PROB_inode_nlink_wrong,
			     "%sinode %" PRIu64 " has wrong i_nlink (type %u i_nlink %" PRIu64 ", should be %" PRIu64 ")",
			     clean, fi->inum, fi_dt(fi), have, expected) &&
		    !fsck_inode_rewrite(f, PROB_inode_nlink_wrong, fi->inum, set_nlink, &expected))
			fi->nlink = (uint32_t)(expected - (fi_is_dir(fi) ? 2 : 1));
	}
	return 0;
}
