/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside fsck's filesystem pass (fsck_fs.c: the extents and hashed btrees;
 * fsck_dirs.c: root, lost+found, directory structure, link counts): the
 * in-memory tables of inodes and directory links, and the reads and
 * repairs the checks share (fs_tables.c). Nothing outside fsck/ includes
 * this.
 */
#ifndef BCH_FSCK_FS_TABLES_H
#define BCH_FSCK_FS_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "bkey/dirent.h"
#include "bkey/inode.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "fsck/problems.h"
#include "util/util.h"

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


/* What the extents btree holds for one inode. */
struct extent_sum {
	uint64_t	sectors;	/* extent, cached extent, reservation sizes */
	uint64_t	end;		/* end of the last key (any type) */
	uint64_t	data_end;	/* end of the last extent / cached extent */
};

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

#define DIR_MODE	0040755

static inline uint32_t fi_idx(const struct fsck_fs *f, const struct fsck_inode *fi)
{
	return (uint32_t)(fi - f->inodes);
}

/* What fsck_check_hash_pos() found. */
enum hash_pos {
	HP_OK,
	HP_MOVE,	/* at a wrong offset, being fixed: move it */
	HP_DUP,		/* duplicate, not fixed: judged as removed */
	HP_DUP_FIX,	/* duplicate, being fixed: hash-delete it */
};

/* ---- shared by the checks (fs_tables.c) ---- */

void fsck_batch_delete(struct fsck_fs *f, enum bch_problem p, unsigned btree_id,
			 struct bpos_h pos, bool counted);
void fsck_batch_flush(struct fsck_fs *f);
enum hash_pos fsck_check_hash_pos(struct fsck_fs *f, unsigned btree_id, const struct bkey_ref *k,
				    const struct hash_entry *e);
int fsck_check_root_missing(struct fsck_fs *f);
void fsck_dir_inode_new(struct fsck_fs *f, struct bch_inode_unpacked *u, uint64_t inum,
			  const struct bch_inode_unpacked *parent);
int fsck_dirent_add(struct fsck_fs *f, struct btree_trans *t, const struct fsck_inode *dir,
		      const char *name, uint64_t target, unsigned d_type, bool replace,
		      uint64_t *at);
bool fsck_entry_decode(unsigned btree_id, const struct bch_hash_info *h,
			 const struct bkey_ref *k, struct hash_entry *e);
int fsck_entry_fix(struct fsck_fs *f, enum bch_problem p, int also, unsigned btree_id,
		     const struct bch_hash_info *h, struct bpos_h pos, uint64_t hash,
		     const struct hash_name *n, const void *v, unsigned v_bytes, bool move,
		     uint64_t *at);
int fsck_entry_remove(struct fsck_fs *f, enum bch_problem p, unsigned btree_id,
			const struct bch_hash_info *h, struct bpos_h pos);
void fsck_extents_scan(struct fsck_fs *f, uint64_t inum, struct extent_sum *sum);
bool fsck_fi_hash_info(const struct fsck_inode *fi, struct bch_hash_info *h);
struct fsck_inode *fsck_inode_find(struct fsck_fs *f, uint64_t inum);
void fsck_inode_put(struct btree_trans *t, const struct bch_inode_unpacked *u);
int fsck_inode_read(struct fsck_fs *f, uint64_t inum, struct bch_inode_unpacked *u);
int fsck_inode_rewrite(struct fsck_fs *f, enum bch_problem p, uint64_t inum,
			 void (*fn)(struct bch_inode_unpacked *u, const void *arg), const void *arg);
int fsck_inum_new(struct fsck_fs *f, uint64_t *inum);
int fsck_iter_end(struct fsck_fs *f, struct btree_iter *iter, int ret);
void fsck_iter_restart(struct fsck_fs *f, struct btree_iter *iter, unsigned btree_id,
			 struct bpos_h pos);
const char *fsck_key_text(struct fsck_fs *f, unsigned btree_id, const struct bkey_ref *k);
int fsck_load_inodes(struct fsck_fs *f);
void fsck_moved_add(struct fsck_fs *f, struct bpos_h pos);
bool fsck_moved_has(const struct fsck_fs *f, struct bpos_h pos);
void fsck_moved_reset(struct fsck_fs *f);
int fsck_reattach(struct fsck_fs *f, enum bch_problem p, uint64_t inum);
void fsck_repair_failed(struct fsck_fs *f, enum bch_problem p, const char *why);
bool fsck_run_seen(struct hash_run *r, uint64_t hash, unsigned type,
		     const uint8_t *name, unsigned len);
void fsck_run_step(struct hash_run *r, uint64_t inum, uint64_t offset);
void fsck_seen_inum(struct fsck_fs *f, uint64_t inum);
struct fsck_inode *fsck_table_add(struct fsck_fs *f, const struct bch_inode_unpacked *u);
/*
 * Records for @nr new inodes at once, before any directory link is noted
 * (no edges yet); those with @virtual[i] set only stand in (FI_VIRTUAL).
 */
void fsck_table_add_many(struct fsck_fs *f, const struct bch_inode_unpacked *u,
			 const uint8_t *virtual, size_t nr);

uint64_t fsck_size_limit(const struct fsck_fs *f, uint64_t size);
void fsck_add_edge(struct fsck_fs *f, struct fsck_inode *dir, struct fsck_inode *sub,
		     uint64_t offset);

#endif
