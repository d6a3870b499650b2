/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Durability: what a pointer to a member gives now, what an inode wants,
 * and the replicas table rebuilt from the live keys (durability.c).
 */
#ifndef BCH_DURABILITY_H
#define BCH_DURABILITY_H

#include <stdbool.h>
#include <stdint.h>

struct bch_fs;
struct printbuf;

/*
 * Durability a pointer to member @dev gives now: its durability when it is
 * present and read-write or read-only; 0 when missing, failed or spare.
 */
unsigned bch_dev_ptr_durability(struct bch_fs *c, unsigned dev);

/* The data replicas wanted for inode @inum: its option, or the filesystem's. */
struct bch_inode_want {
	uint64_t	inum;
	unsigned	want;
	bool		valid;
};
unsigned bch_inode_replicas_want(struct bch_fs *c, uint64_t inum, struct bch_inode_want *cache);

/* Replicas GC (doc/engine.md §16): a checkpoint, then the table rebuilt from every live key. */
int bch_fs_replicas_gc(struct bch_fs *c, struct printbuf *err);

#endif
