/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rebalance (spec 30 §8.3, doc/engine.md §17): data outside its background
 * target is moved there, and data not compressed as its background
 * compression says is compressed, in the background.
 *
 * The options are the inode's (bi_background_target,
 * bi_background_compression, stored + 1) or else the filesystem's. A pass
 * walks the extents btree; for each extent:
 *   - with a dirty pointer on a device outside the target: a copy is
 *     written to a device of the target that holds no copy of it yet and
 *     the pointer swapped (fs/move.h: read and verify, write, one update
 *     refused when the extent changed); as many pointers move as copies
 *     could be written, so an extent never loses durability; a target
 *     with no room ends the pass; a pointer moved off a device of the
 *     file's promote target stays as a cached pointer (its bucket is
 *     reused when room is needed, alloc/alloc.h);
 *   - else, compressed otherwise than its background compression: its
 *     data is read and decoded, encoded anew (compressed, encrypted with a
 *     new version, checksummed), written with as many copies as it has
 *     dirty ones, and the key replaced if unchanged (bch_move_replace());
 *     data that does not compress is left alone and not tried again while
 *     the mount lasts (the 2018 format has no mark for it).
 * Cached pointers are not moved (a recompressed extent drops them); stale
 * ones go with any update of the extent (bch_move_update()).
 *
 * The mount's rebalance thread runs a pass when the filesystem has a
 * background target and something was committed since the last pass
 * that moved nothing (looked at every second), a chunk at a time under
 * the engine lock with sleeps three times as long between (as copygc).
 */
#ifndef BCH_FS_REBALANCE_H
#define BCH_FS_REBALANCE_H

#include <stdbool.h>

struct bch_fs;
struct printbuf;

/* Does @c have a background target or compression (the filesystem options)? */
bool bch_rebalance_wanted(struct bch_fs *c);
/* One pass now, engine lock held throughout: extents moved, or an error. */
int bch_rebalance_run(struct bch_fs *c, struct printbuf *err);

/*
 * The mount's rebalance thread: @log (may be NULL) gets a line per pass
 * that moved something. NULL when it could not start or BCH_REBALANCE=0
 * is set (tests).
 */
struct bch_rebalance_thread;
struct bch_rebalance_thread *bch_rebalance_start(struct bch_fs *c,
						 void (*log)(void *arg, const char *msg),
						 void *log_arg);
void bch_rebalance_stop(struct bch_rebalance_thread *t);

/* "rebalance_NAME N" lines for fs usage (c->rebalance). */
void bch_rebalance_text(struct bch_fs *c, struct printbuf *out);

#endif
