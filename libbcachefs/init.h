/* SPDX-License-Identifier: GPL-2.0 */
/*
 * First-mount initialisation of a new filesystem (spec 10 §5.10, 30 §4.3,
 * 40 §40.5.8): what the 2018 tools did on the first open after `format`
 * ("initializing new filesystem") and on the fsck after it ("creating
 * lost+found"), in one step:
 *
 *   journal buckets on every device (10 §5.10 count and order);
 *   root nodes of the inodes, dirents and alloc btrees, each an empty
 *   first bset plus one bset with the keys (as the reference writes a
 *   btree's first root, 20 §20.7.6): root directory 4096, lost+found 4097
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

struct bch_init_opts {
	bool		no_lost_found;	/* stop where the reference's first open did */
	int64_t		now_ns;		/* 0 = the real-time clock */
	uint64_t	root_hash_seed;	/* 0 = random */
	uint64_t	lf_hash_seed;	/* 0 = random */
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
