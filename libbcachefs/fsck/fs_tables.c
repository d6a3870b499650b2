// SPDX-License-Identifier: GPL-2.0
/*
 * fsck's filesystem pass: the in-memory tables and the reads and repairs
 * its checks share (fs_tables.h). What the checks are is said in fsck_fs.c.
 */
#include "fsck/fs_tables.h"

#include "bkey/bkey_types.h"
#include "core/bch_fs.h"
#include "btree/node_write.h"
#include "bkey/xattr.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fsck_inode *fsck_inode_find(struct fsck_fs *f, uint64_t inum)
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


const char *fsck_key_text(struct fsck_fs *f, unsigned btree_id, const struct bkey_ref *k)
{
	printbuf_reset(&f->key);
	bch_bkey_to_text(&f->key, btree_id, 0, k, NULL);
	return printbuf_str(&f->key);
}

/* End an iteration: node problems were the node pass's; a walk error stops the checks. */
int fsck_iter_end(struct fsck_fs *f, struct btree_iter *iter, int ret)
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


/* Restart @iter at @pos: the keys committed since it read its leaf become visible. */
void fsck_iter_restart(struct fsck_fs *f, struct btree_iter *iter, unsigned btree_id,
			 struct bpos_h pos)
{
	bch_btree_iter_exit(iter);
	printbuf_reset(&f->err);
	bch_btree_iter_init(iter, f->c, btree_id, pos, &f->err);
}

void fsck_seen_inum(struct fsck_fs *f, uint64_t inum)
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
int fsck_inum_new(struct fsck_fs *f, uint64_t *inum)
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

int fsck_inode_read(struct fsck_fs *f, uint64_t inum, struct bch_inode_unpacked *u)
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

void fsck_inode_put(struct btree_trans *t, const struct bch_inode_unpacked *u)
{
	uint8_t val[BCH_INODE_VAL_BYTES_MAX];
	size_t bytes = bch_inode_pack(u, val);
	struct bkey_h k = { .type = BCH_INODE_FS, .p = POS_H(u->bi_inum, 0) };

	bch_trans_update(t, BTREE_ID_INODES, &k, val, (unsigned)bytes);
}

/* A problem whose repair could not even be attempted. */
void fsck_repair_failed(struct fsck_fs *f, enum bch_problem p, const char *why)
{
	fsck_fix_failed(f->s, p, why);
}

/*
 * Read inode @inum, let the caller change it (@fn), write it back as the
 * repair of @p. Returns 0 when committed.
 */
int fsck_inode_rewrite(struct fsck_fs *f, enum bch_problem p, uint64_t inum,
			 void (*fn)(struct bch_inode_unpacked *u, const void *arg), const void *arg)
{
	struct bch_inode_unpacked u;
	struct btree_trans t;
	int ret;

	if (fsck_inode_read(f, inum, &u)) {
		fsck_repair_failed(f, p, "the inode cannot be read back\n");
		return -ENOENT;
	}
	fn(&u, arg);
	bch_trans_init(&t, f->c);
	fsck_inode_put(&t, &u);
	ret = fsck_commit(f->s, p, &t);
	bch_trans_exit(&t);
	return ret;
}

void fsck_extents_scan(struct fsck_fs *f, uint64_t inum, struct extent_sum *sum)
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

/* ---- hash tables: delete and insert (doc/format.md §5.6.3) ---- */

/* Decode a live entry, hashed with @h when not NULL; false if it does not decode. */
bool fsck_entry_decode(unsigned btree_id, const struct bch_hash_info *h,
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

			if (fsck_entry_decode(btree_id, h, k, &e) && e.hash <= pos.offset) {
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
		} else if (fsck_entry_decode(btree_id, h, k, &e) && e.n.type == n->type &&
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
bool fsck_fi_hash_info(const struct fsck_inode *fi, struct bch_hash_info *h)
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
struct fsck_inode *fsck_table_add(struct fsck_fs *f, const struct bch_inode_unpacked *u)
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

static int fi_cmp(const void *_a, const void *_b)
{
	const struct fsck_inode *a = _a, *b = _b;

	return a->inum < b->inum ? -1 : a->inum > b->inum;
}

void fsck_table_add_many(struct fsck_fs *f, const struct bch_inode_unpacked *u,
			 const uint8_t *virtual, size_t nr)
{
	if (f->nr_edges) {
		/* indexes are in use: one at a time (the table shifts them) */
		for (size_t i = 0; i < nr; i++) {
			struct fsck_inode *fi = fsck_table_add(f, &u[i]);

			if (virtual[i])
				fi->state |= FI_VIRTUAL;
		}
		return;
	}
	if (f->nr_inodes + nr > f->inodes_size) {
		f->inodes_size = f->nr_inodes + nr;
		f->inodes = xrealloc(f->inodes, f->inodes_size * sizeof(*f->inodes));
	}
	for (size_t i = 0; i < nr; i++) {
		struct fsck_inode *fi = &f->inodes[f->nr_inodes++];

		fi_init(fi, &u[i]);
		if (virtual[i])
			fi->state |= FI_VIRTUAL;
	}
	qsort(f->inodes, f->nr_inodes, sizeof(*f->inodes), fi_cmp);
}

/* A new directory inode as doc/format.md §5.5.6 makes it (options from @parent if any). */
void fsck_dir_inode_new(struct fsck_fs *f, struct bch_inode_unpacked *u, uint64_t inum,
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
int fsck_dirent_add(struct fsck_fs *f, struct btree_trans *t, const struct fsck_inode *dir,
		      const char *name, uint64_t target, unsigned d_type, bool replace,
		      uint64_t *at)
{
	struct bch_hash_info h;
	struct hash_name n = { 0, (const uint8_t *)name, (unsigned)strlen(name) };
	uint8_t val[512];
	uint64_t hash, slot;
	size_t bytes;
	int ret;

	if (!fsck_fi_hash_info(dir, &h))
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
	struct fsck_inode *lf = f->lf_dirent ? fsck_inode_find(f, f->lf_inum) : NULL;

	return lf && mode_dt(lf->mode) == BCH_DT_DIR && !(lf->state & FI_VIRTUAL) ? lf : NULL;
}

/*
 * Reattach @fi under lost+found, named after its inode number (a suffix
 * when that name is taken): the dirent, and for a directory lost+found's
 * nlink + 1; for another inode its nlink set to the one link. Returns 0
 * when committed; the table then counts the new dirent.
 */
int fsck_reattach(struct fsck_fs *f, enum bch_problem p, uint64_t inum)
{
	struct fsck_inode *lf = lostfound(f), *fi;
	struct bch_inode_unpacked lu, u;
	struct btree_trans t;
	char name[64];
	uint64_t slot;
	bool dir;
	int ret = -EEXIST;

	if (!lf) {
		fsck_repair_failed(f, p, "no lost+found directory to reattach to\n");
		return -ENOENT;
	}
	fi = fsck_inode_find(f, inum);
	dir = fi_is_dir(fi);
	if (fsck_inode_read(f, lf->inum, &lu) || fsck_inode_read(f, inum, &u)) {
		fsck_repair_failed(f, p, "the inode cannot be read back\n");
		return -ENOENT;
	}
	bch_trans_init(&t, f->c);
	for (unsigned i = 0; i < 100 && ret == -EEXIST; i++) {
		if (i)
			snprintf(name, sizeof(name), "%" PRIu64 ".%u", inum, i);
		else
			snprintf(name, sizeof(name), "%" PRIu64, inum);
		ret = fsck_dirent_add(f, &t, lf, name, inum, fi_dt(fi), false, &slot);
	}
	if (ret) {
		bch_trans_exit(&t);
		fsck_repair_failed(f, p, "cannot add a dirent to lost+found\n");
		return ret;
	}
	if (dir) {
		lu.bi_nlink++;
		fsck_inode_put(&t, &lu);
	} else if (u.bi_nlink != 0) {
		u.bi_nlink = 0;		/* one link */
		fsck_inode_put(&t, &u);
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

void fsck_batch_flush(struct fsck_fs *f)
{
	if (!f->batch.nr)
		return;
	if (fsck_commit(f->s, f->batch_p, &f->batch))
		for (unsigned long i = 1; i < f->batch_fixes; i++)
			fsck_fix_failed(f->s, f->batch_p, "the commit failed\n");
	f->batch_fixes = 0;
}

/* Delete the key at @pos (its owner is missing: no hash rule) as a repair of @p. */
void fsck_batch_delete(struct fsck_fs *f, enum bch_problem p, unsigned btree_id,
			 struct bpos_h pos, bool counted)
{
	if (f->batch.nr && (p != f->batch_p || f->batch.nr >= 1024))
		fsck_batch_flush(f);
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

void fsck_moved_add(struct fsck_fs *f, struct bpos_h pos)
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

bool fsck_moved_has(const struct fsck_fs *f, struct bpos_h pos)
{
	return f->nr_moved && f->moved[moved_slot(f, pos)].inode;
}

void fsck_moved_reset(struct fsck_fs *f)
{
	if (f->nr_moved)
		memset(f->moved, 0, f->moved_size * sizeof(*f->moved));
	f->nr_moved = 0;
}

/* Hash-delete the entry at @pos as the repair of @p. */
int fsck_entry_remove(struct fsck_fs *f, enum bch_problem p, unsigned btree_id,
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
int fsck_entry_fix(struct fsck_fs *f, enum bch_problem p, int also, unsigned btree_id,
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
			fsck_repair_failed(f, p, "no free slot in the hash table\n");
			if (also >= 0)
				fsck_repair_failed(f, (enum bch_problem)also, "no free slot in the hash table\n");
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

/* ---- hash runs (doc/format.md §5.6.3) ----------------------------------------- */

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
void fsck_run_step(struct hash_run *r, uint64_t inum, uint64_t offset)
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
bool fsck_run_seen(struct hash_run *r, uint64_t hash, unsigned type,
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
 * Check the live entry @e at @k's offset in the current run: its hash
 * must lie inside the run, at or before that offset, and no earlier entry
 * of the run may have the same name (the later copy goes; the first one
 * stays).
 */
enum hash_pos fsck_check_hash_pos(struct fsck_fs *f, unsigned btree_id, const struct bkey_ref *k,
				    const struct hash_entry *e)
{
	struct hash_run *r = &f->run;
	bool move = false;

	if (e->hash < r->start || e->hash > k->k.p.offset)
		move = fsck_fix(f->s, PROB_hash_wrong_offset,
				"hash table key at wrong offset: %" PRIu64 ", hashed to %" PRIu64
				" chain starts at %" PRIu64 "\n%s",
				k->k.p.offset, e->hash, r->start, fsck_key_text(f, btree_id, k));
	if (fsck_run_seen(r, e->hash, e->n.type, e->n.name, e->n.len))
		return fsck_fix(f->s, PROB_hash_duplicate,
				"duplicate hash table keys (an earlier entry of the chain has the same name):\n%s",
				fsck_key_text(f, btree_id, k)) ? HP_DUP_FIX : HP_DUP;
	return move ? HP_MOVE : HP_OK;
}

/* ---- loading the inodes ------------------------------------------------------ */

/*
 * Every inode key of type 128 that unpacks (the key pass reported the
 * others: they count as missing here). Blockdev and generation keys are
 * not filesystem inodes.
 */
int fsck_load_inodes(struct fsck_fs *f)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	bch_btree_iter_init(&iter, f->c, BTREE_ID_INODES, POS_H_MIN, &f->err);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
		struct bch_inode_unpacked u;
		struct fsck_inode *fi;

		fsck_seen_inum(f, k->k.p.inode);
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
	return fsck_iter_end(f, &iter, ret);
}

/* ---- the root, first ---------------------------------------------------------------- */

/*
 * A missing root (inode 4096) is found before the passes: recreated there
 * (doc/format.md §5.5.6: an empty directory, stored nlink 0, a new hash seed), its
 * dirents are kept: the dirents pass moves each to where the new seed
 * hashes it (reported as keys at the wrong offset). Not recreated, a
 * stand-in directory takes its place so that its dirents are judged as
 * they will be (kept), with no hash check (the seed is unknown).
 */
int fsck_check_root_missing(struct fsck_fs *f)
{
	struct bch_inode_unpacked u;
	struct fsck_inode *root;
	struct btree_trans t;

	if (fsck_inode_find(f, BCACHEFS_ROOT_INO))
		return 0;
	fsck_dir_inode_new(f, &u, BCACHEFS_ROOT_INO, NULL);
	if (fsck_fix(f->s, PROB_root_missing, "root directory missing")) {
		bch_trans_init(&t, f->c);
		fsck_inode_put(&t, &u);
		if (!fsck_commit(f->s, PROB_root_missing, &t)) {
			bch_trans_exit(&t);
			fsck_table_add(f, &u);
			return 0;
		}
		bch_trans_exit(&t);
	}
	root = fsck_table_add(f, &u);
	root->state |= FI_VIRTUAL;
	return 0;
}

/* The sector no extent may end after: i_size rounded up to 4 KiB (or the block). */
uint64_t fsck_size_limit(const struct fsck_fs *f, uint64_t size)
{
	uint64_t round = f->block_bytes > 4096 ? f->block_bytes : 4096;

	return size > UINT64_MAX - round ? UINT64_MAX / 512 : (size + round - 1) / round * round / 512;
}

void fsck_add_edge(struct fsck_fs *f, struct fsck_inode *dir, struct fsck_inode *sub,
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
