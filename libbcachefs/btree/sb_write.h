/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the update engine: the superblock writes (sb_write.c), the one
 * place a running engine writes superblocks. The public entry is
 * bch_fs_rw_write_sb() (btree_update.h).
 */
#ifndef BCH_BTREE_SB_WRITE_H
#define BCH_BTREE_SB_WRITE_H

#include <stdbool.h>

struct bch_fs;
struct printbuf;

/*
 * Write the superblock of every present member: the filesystem's with seq
 * + 1, each device keeping its own index, layout and journal field, the
 * replicas table of the allocator, CLEAN = @clean.
 */
int bch_rw_sb_write_all(struct bch_fs *c, bool clean, struct printbuf *err);
/* Before the first journal write: the filesystem is not clean any more. */
int bch_rw_mark_unclean(struct bch_fs *c, struct printbuf *err);
/* New replicas entries on disk before what needs them (doc/engine.md §16). */
int bch_rw_replicas_sync(struct bch_fs *c, struct printbuf *err);

#endif
