// SPDX-License-Identifier: GPL-2.0
/*
 * fsck, pass 0 of the filesystem pass: inodes lost with a node of the
 * inodes btree (see fsck_lost.h).
 *
 * When a root, interior node or leaf of the inodes btree could not be read
 * and the node scan did not bring every inode of its range back (the leaf
 * itself is gone, or only an older copy of it was found), the dirents,
 * extents and xattrs of those inodes are still there. Judged as keys of
 * missing inodes, the passes after this one would delete them all: the
 * data, and every name of the tree below a lost directory. Here each such
 * inode number gets an inode again, built from what its keys say:
 *
 *   type	a directory if dirents are in it; else the d_type of a dirent
 *		pointing to it; else a regular file (extents or xattrs only);
 *   size	the end of its data (sector-granular: the exact size is lost),
 *		i_sectors the sum of its extents;
 *   nlink	the dirents pointing to it (a directory: its subdirectories);
 *   the rest	as a new inode gets it (permissions 0644, 0755 for a
 *		directory, 0777 for a symlink, owner root, times now, a new
 *		hash seed: the passes then move the dirents and xattrs of a
 *		recreated inode to where the new seed hashes them).
 *
 * The later passes check the recreated inodes like any: what no dirent
 * reaches is reattached under lost+found, link counts are counted again.
 * Without the inodes btree having lost a node nothing is done here, so a
 * key of a deleted inode is still judged as before.
 */
#include "fsck/fsck_lost.h"
#include "core/bch_fs.h"
#include "format/format.h"
#include "fsck/fs_tables.h"
#include "fs/fsread.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum lost_ref_kind {
	REF_DIRENT_IN,		/* a dirent in the directory (dt: the dirent's d_type) */
	REF_DIRENT_TO,		/* a dirent pointing to it (dt: its d_type) */
	REF_DATA,		/* an extent of it */
	REF_XATTR,		/* an xattr of it */
};

struct lost_ref {
	uint64_t	inum;
	uint8_t		kind;
	uint8_t		dt;
};

struct lost_refs {
	struct lost_ref	*v;
	size_t		nr, size;
};

static void ref_add(struct lost_refs *r, uint64_t inum, enum lost_ref_kind kind, unsigned dt)
{
	if (r->nr == r->size) {
		r->size = r->size ? r->size * 2 : 256;
		r->v = xrealloc(r->v, r->size * sizeof(*r->v));
	}
	r->v[r->nr++] = (struct lost_ref) { inum, (uint8_t)kind, (uint8_t)dt };
}

static int ref_cmp(const void *_a, const void *_b)
{
	const struct lost_ref *a = _a, *b = _b;

	return a->inum < b->inum ? -1 : a->inum > b->inum;
}

/* (a number the filesystem cannot have, past 2^32 with 32 bit inodes, is left to the passes) */
static bool inum_missing(struct fsck_fs *f, uint64_t inum)
{
	return inum >= BCACHEFS_ROOT_INO && inum < f->inum_end && !fsck_inode_find(f, inum);
}

/* One walk of @btree_id: what its keys say of inode numbers without an inode. */
static int collect(struct fsck_fs *f, unsigned btree_id, struct lost_refs *r)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	uint64_t cur = 0;
	bool have_cur = false, missing = false, noted = false;
	int ret;

	bch_btree_iter_init(&iter, f->c, btree_id, POS_H(BCACHEFS_ROOT_INO, 0), &f->err);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
		unsigned type = k->k.type;
		struct hash_entry e;

		if (k->k.p.inode < BCACHEFS_ROOT_INO)
			goto next;
		if (!have_cur || k->k.p.inode != cur) {
			have_cur = true;
			cur	 = k->k.p.inode;
			missing	 = inum_missing(f, cur);
			noted	 = false;
		}
		switch (btree_id) {
		case BTREE_ID_EXTENTS:
			if (missing && !noted &&
			    (type == BCH_EXTENT || type == BCH_EXTENT_CACHED || type == BCH_RESERVATION)) {
				ref_add(r, cur, REF_DATA, 0);
				noted = true;
			}
			break;
		case BTREE_ID_DIRENTS:
			if (!fsck_entry_decode(btree_id, NULL, k, &e))
				break;
			if (missing)
				ref_add(r, cur, REF_DIRENT_IN, e.d.d_type);
			if (e.d.d_inum != cur && inum_missing(f, e.d.d_inum))
				ref_add(r, e.d.d_inum, REF_DIRENT_TO, e.d.d_type);
			break;
		case BTREE_ID_XATTRS:
			if (missing && !noted && type == 128) {
				ref_add(r, cur, REF_XATTR, 0);
				noted = true;
			}
			break;
		}
next:
		bch_btree_iter_advance(&iter);
	}
	return fsck_iter_end(f, &iter, ret);
}

static bool dt_known(unsigned dt)
{
	switch (dt) {
	case BCH_DT_FIFO: case BCH_DT_CHR: case BCH_DT_DIR: case BCH_DT_BLK:
	case BCH_DT_REG: case BCH_DT_LNK: case BCH_DT_SOCK:
		return true;
	default:
		return false;
	}
}

static const char *dt_name(unsigned dt)
{
	switch (dt) {
	case BCH_DT_FIFO:	return "FIFO";
	case BCH_DT_CHR:	return "character device";
	case BCH_DT_DIR:	return "directory";
	case BCH_DT_BLK:	return "block device";
	case BCH_DT_LNK:	return "symlink";
	case BCH_DT_SOCK:	return "socket";
	default:		return "regular file";
	}
}

/* What the keys of one inode number say (a run of @r). */
struct lost_inode {
	uint32_t	dirents_in, subdirs, dirents_to;
	unsigned	dt_to;		/* the first known d_type of a dirent to it */
	bool		data, xattrs;
};

static void lost_sum(const struct lost_ref *v, size_t n, struct lost_inode *l)
{
	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < n; i++)
		switch (v[i].kind) {
		case REF_DIRENT_IN:
			inc_sat(&l->dirents_in);
			if (v[i].dt == BCH_DT_DIR)
				inc_sat(&l->subdirs);
			break;
		case REF_DIRENT_TO:
			inc_sat(&l->dirents_to);
			if (!l->dt_to && dt_known(v[i].dt))
				l->dt_to = v[i].dt;
			break;
		case REF_DATA:
			l->data = true;
			break;
		case REF_XATTR:
			l->xattrs = true;
			break;
		}
}

/*
 * A symlink's size is its target's length: its data holds the target,
 * NUL-terminated within the first 4 KiB. @u->bi_size (the end of the data)
 * is kept when that is not what the data holds.
 */
static void symlink_size(struct fsck_fs *f, struct bch_inode_unpacked *u)
{
	struct printbuf err = PRINTBUF;
	struct bch_file file;
	char buf[4096];
	uint64_t size = u->bi_size;
	ssize_t r;
	size_t len;

	u->bi_size = size < sizeof(buf) ? size : sizeof(buf);
	bch_file_open(f->c, u, &file);
	r = bch_file_read(&file, 0, buf, (size_t)u->bi_size, NULL, &err);
	bch_file_close(&file);
	printbuf_exit(&err);
	len = r > 0 ? strnlen(buf, (size_t)r) : 0;
	u->bi_size = len && len < (size_t)r ? len : size;
}

/* The inode @inum gets again, from @l. */
static void lost_build(struct fsck_fs *f, uint64_t inum, const struct lost_inode *l,
		       struct bch_inode_unpacked *u)
{
	unsigned dt = l->dirents_in ? BCH_DT_DIR : l->dt_to ?: BCH_DT_REG;

	fsck_dir_inode_new(f, u, inum, NULL);
	u->bi_mode = (uint16_t)(dt << 12 | (dt == BCH_DT_DIR ? 0755 : dt == BCH_DT_LNK ? 0777 : 0644));
	if (dt == BCH_DT_DIR) {
		u->bi_nlink = l->subdirs;
	} else {
		u->bi_nlink = l->dirents_to ? l->dirents_to - 1 : 0;
		if (l->data && (dt == BCH_DT_REG || dt == BCH_DT_LNK)) {
			struct extent_sum sum;

			fsck_extents_scan(f, inum, &sum);
			u->bi_size    = sum.data_end * 512;
			u->bi_sectors = sum.sectors;
			if (dt == BCH_DT_LNK)
				symlink_size(f, u);
		}
	}
}

static void lost_what(struct printbuf *out, const struct lost_inode *l)
{
	const char *sep = "";

	if (l->dirents_in) {
		pr_buf(out, "%u dirent%s in it", l->dirents_in, l->dirents_in == 1 ? "" : "s");
		sep = ", ";
	}
	if (l->dirents_to) {
		pr_buf(out, "%s%u dirent%s to it", sep, l->dirents_to, l->dirents_to == 1 ? "" : "s");
		sep = ", ";
	}
	if (l->data) {
		pr_buf(out, "%sits data", sep);
		sep = ", ";
	}
	if (l->xattrs)
		pr_buf(out, "%sits xattrs", sep);
}

/* Inodes recreated per transaction. */
#define LOST_BATCH	256

int fsck_pass_lost_inodes(struct fsck_fs *f)
{
	static const unsigned btrees[] = { BTREE_ID_DIRENTS, BTREE_ID_EXTENTS, BTREE_ID_XATTRS };
	struct lost_refs r = { 0 };
	struct bch_inode_unpacked *news = NULL;
	/* per new inode: 0 stands in (not recreated), 1 in the transaction, 2 recreated */
	uint8_t *st = NULL;
	struct printbuf what = PRINTBUF;
	struct btree_trans t;
	size_t nr_new = 0, size = 0, in_trans = 0, batch_start = 0;
	int ret = 0;

	if (!(f->s->lost_btrees & (1U << BTREE_ID_INODES)))
		return 0;
	for (unsigned i = 0; i < ARRAY_SIZE(btrees) && !ret && !f->stop; i++)
		ret = collect(f, btrees[i], &r);
	if (ret || f->stop || !r.nr) {
		free(r.v);
		return ret;
	}
	qsort(r.v, r.nr, sizeof(*r.v), ref_cmp);

	bch_trans_init(&t, f->c);
	for (size_t i = 0, j; i < r.nr; i = j) {
		struct lost_inode l;
		struct bch_inode_unpacked *u;

		for (j = i + 1; j < r.nr && r.v[j].inum == r.v[i].inum; j++)
			;
		if (nr_new == size) {
			size = size ? size * 2 : 64;
			news = xrealloc(news, size * sizeof(*news));
			st = xrealloc(st, size);
		}
		u = &news[nr_new];
		lost_sum(r.v + i, j - i, &l);
		lost_build(f, r.v[i].inum, &l, u);
		printbuf_reset(&what);
		lost_what(&what, &l);
		st[nr_new] = 0;
		if (fsck_fix(f->s, PROB_inode_lost,
			     "inode %" PRIu64 " lost with a node of the inodes btree, its keys survive "
			     "(%s): recreate it as a %s of %" PRIu64 " bytes",
			     u->bi_inum, printbuf_str(&what), dt_name((u->bi_mode >> 12) & 15),
			     u->bi_size)) {
			fsck_inode_put(&t, u);
			st[nr_new] = 1;
			in_trans++;
		}
		fsck_seen_inum(f, u->bi_inum);
		nr_new++;
		if (in_trans == LOST_BATCH || (j == r.nr && in_trans)) {
			uint8_t done = fsck_commit(f->s, PROB_inode_lost, &t) ? 0 : 2;

			/* not committed: they stand in, as in a run that does not repair */
			for (size_t n = batch_start; n < nr_new; n++)
				if (st[n] == 1)
					st[n] = done;
			in_trans = 0;
			batch_start = nr_new;
		}
	}
	bch_trans_exit(&t);
	for (size_t n = 0; n < nr_new; n++)
		st[n] = st[n] != 2;
	fsck_table_add_many(f, news, st, nr_new);
	printbuf_exit(&what);
	free(news);
	free(st);
	free(r.v);
	return 0;
}
