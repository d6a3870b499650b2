/* SPDX-License-Identifier: GPL-2.0 */
/*
 * First-mount initialisation of a new filesystem (doc/engine.md §13,
 * doc/format.md §5.5.6): what the 2018 tools did on the first open after `format`
 * ("initializing new filesystem") and on the fsck after it ("creating
 * lost+found"), in one step:
 *
 *   journal buckets on every device (doc/engine.md §13 count and order);
 *   root nodes of the inodes, dirents and alloc btrees, each an empty
 *   first bset plus one bset with the keys (as the reference writes a
 *   btree's first root, doc/engine.md §13): root directory 4096, lost+found 4097
 *   and its dirent, alloc keys for the buckets the nodes use;
 *   journal entry 1 with those keys and the roots, entry 2 with the roots
 *   only (last_seq = seq: clean);
 *   replicas {btree, ...} and {journal, ...}; INITIALIZED, CLEAN, member
 *   last_mount; the superblocks last.
 *
 * Crash safety: nothing the superblock of an uninitialised filesystem
 * refers to is touched before the final superblock writes, and every
 * device is flushed before them; a crash leaves either INITIALIZED = 0
 * (still a valid new filesystem) or the complete result. (With several
 * devices the superblocks are written one device after the other.)
 */
#ifndef BCH_INIT_H
#define BCH_INIT_H

#include <stdbool.h>
#include <stdint.h>

struct bch_fs;
struct printbuf;

struct bch_allocator;
struct btree_write_ctx;
struct bulk_root;

/*
 * Filling a new filesystem in bulk (format --source): called once the
 * journal buckets are taken, with the allocator and the node writer
 * context; builds btrees with bulk.h and returns their roots in
 * @roots[btree id] (BCH_NR_BTREES entries, zeroed). The root directory and
 * lost+found are then the callback's: initialisation adds no inode or
 * dirent of its own, only the alloc btree (alloc keys for every bucket
 * used, in one node), the journal with every root, replicas and the
 * superblocks.
 */
typedef int (*bch_init_populate_fn)(struct bch_fs *c, struct bch_allocator *a,
				    const struct btree_write_ctx *w,
				    struct bulk_root *roots, void *priv,
				    struct printbuf *err);

/*
 * Called once the allocator knows the superblock and journal buckets of
 * every device, before anything is allocated (journal buckets included):
 * to take buckets out of use (migrate: everything outside the space
 * reserved for the new filesystem). @priv is populate_priv.
 */
typedef int (*bch_init_prepare_fn)(struct bch_fs *c, struct bch_allocator *a,
				   void *priv, struct printbuf *err);

struct bch_init_opts {
	bool		no_lost_found;	/* stop where the reference's first open did */
	int64_t		now_ns;		/* 0 = the real-time clock */
	uint64_t	root_hash_seed;	/* 0 = random */
	uint64_t	lf_hash_seed;	/* 0 = random */
	bch_init_populate_fn populate;	/* NULL: root directory and lost+found only */
	bch_init_prepare_fn prepare;	/* NULL: every free bucket may be used */
	bool		no_reread;	/* the caller closes @c next: the journal is not read back */
	void		*populate_priv;
};

/*
 * Initialise @c, opened read-write with every member present (and the key
 * loaded when encrypted), whose superblock has INITIALIZED = 0. On success
 * the superblocks are updated on disk and in @c, and @c's journal and
 * roots are (re)read from what was written. Errors: -EINVAL (already
 * initialised, or not opened read-write / a member missing), -ENOSPC,
 * I/O errors; the message is in @err.
 */
int bch_fs_initialize(struct bch_fs *c, struct printbuf *err);
int bch_fs_initialize_opts(struct bch_fs *c, const struct bch_init_opts *opts,
			   struct printbuf *err);

#endif
