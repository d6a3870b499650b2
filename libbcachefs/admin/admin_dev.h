/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Member devices of a running filesystem (spec 50 §8.4): add, remove,
 * online, offline, set-state, resize. Each request is one engine function;
 * bch_admin_dev_ioctl() picks it (engine lock held).
 */
#ifndef BCH_ADMIN_DEV_H
#define BCH_ADMIN_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "format/ioctl.h"

struct bch_admin;
struct bch_admin_call;
struct bch_admin_out;
struct bch_fs;
struct printbuf;

int bch_admin_dev_ioctl(struct bch_admin *a, const struct bch_admin_call *call,
			struct bch_admin_out *out);

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

/* Replicas GC (30 §7.5): a checkpoint, then the table rebuilt from every live key. */
int bch_fs_replicas_gc(struct bch_fs *c, struct printbuf *err);

/*
 * Have every btree node with a copy on @dev rewritten elsewhere at the
 * next checkpoint (*@nr: how many). -EINVAL when some node has no other
 * copy to read and @dev is missing.
 */
int bch_fs_rewrite_nodes_on(struct bch_fs *c, unsigned dev, uint64_t *nr, struct printbuf *msg);

#endif
