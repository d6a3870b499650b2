/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Space reservations of the update engine (doc/engine.md §8.6): what a transaction
 * must find free before it commits, so that a returned ENOSPC means
 * nothing happened and a checkpoint always finds its nodes.
 *
 * Btree nodes. Every btree node is a bucket of its own (or one per copy),
 * and a checkpoint writes every changed node anew before the old ones go
 * back. bch_rw_ckpt_need() bounds, from above, the nodes a checkpoint of
 * the overlay (plus a transaction about to commit) may take; a
 * transaction commits only when that bound fits the free buckets
 * (bch_rw_node_cap(), the sectors promised to fallocate left out):
 *
 *   ordinary transactions     need + BCH_RESERVE_RECOVER <= cap
 *   ops that free space       need <= cap   (the engine's reserve mode:
 *                             unlink, rmdir, rename, truncate, setattr,
 *                             symlink, xattr removal; every writer
 *                             whose commits are not batched, such as
 *                             fsck's repairs)
 *
 * so the checkpoint of whatever was admitted always fits. Data writes
 * stop where the free buckets reach the static reserve of statfs
 * (bch_alloc_dev_reserve()) or where they would leave less than need +
 * BCH_RESERVE_RECOVER + BCH_RESERVE_METADATA nodes, whichever is more (a
 * symlink's block, in reserve mode: need + BCH_RESERVE_RECOVER).
 *
 * Data promised to fallocate (reservation keys, sectors x replicas) is
 * counted in a->reserved_sectors: statfs and fs usage leave it out of
 * what is available, btree nodes do not take it, and a data write over
 * reserved sectors may use what was promised (rw->write_credit).
 *
 * A checkpoint that still finds no bucket undoes itself
 * (bch_rw_ckpt_undo()): the nodes it wrote go back, the previous tree
 * stays, and the engine stays writable; transactions in reserve mode
 * still commit (what they free lets the next checkpoint through).
 *
 * These functions only compute and account; the retry (flush the
 * journal so emptied buckets come back, checkpoint, try again) is
 * trans.c's.
 */
#ifndef BCH_BTREE_RESERVE_H
#define BCH_BTREE_RESERVE_H

#include <stdbool.h>
#include <stdint.h>

struct bch_fs;
struct bch_allocator;
struct btree_ptr_h;
struct btree_trans;
struct bkey_ref;
struct printbuf;

/* Nodes kept beyond a checkpoint of the overlay for the ops that free space. */
#define BCH_RESERVE_RECOVER	16
/* Nodes data writes leave beyond that for ordinary metadata (creates, mkdir). */
#define BCH_RESERVE_METADATA	32

/*
 * Upper bound of the nodes a checkpoint needs for the overlay with the
 * keys of @t (NULL: none) added, the alloc btree rebuild included.
 */
uint64_t bch_rw_ckpt_need(struct bch_fs *c, const struct btree_trans *t);

/* A commit put the @inserted keys of @t in the overlay: their leaves are counted. */
void bch_rw_touched_commit(struct bch_fs *c, const struct btree_trans *t, size_t inserted);
/* The overlay was emptied by a checkpoint. */
void bch_rw_touched_reset(struct bch_fs *c);

/*
 * How many btree nodes (each with its copies) the free buckets can take,
 * counted up to @want; @take_dev (< 0: none) as if one bucket fewer; the
 * buckets promised to reservations are not counted.
 */
uint64_t bch_rw_node_cap(struct bch_fs *c, uint64_t want, int take_dev);

/* The static part of the data reserve (a->reserve_min), for statfs: see reserve.c. */
void bch_rw_reserve_init(struct bch_fs *c);

/*
 * May @t commit (see above)? 0, or -BCH_ERR_nospc with the reason in
 * @err. Counts reservation keys of @t against the space available.
 */
int bch_rw_trans_fits(struct bch_fs *c, const struct btree_trans *t, struct printbuf *err);

/* May a data write take one more bucket of @dev (see above)? */
bool bch_rw_data_bucket_fits(struct bch_fs *c, unsigned dev);

/*
 * May a move (copygc, rebalance, data jobs) take one more bucket of @dev,
 * leaving @keep free buckets, fallocate's promises, and the nodes of the
 * next checkpoint plus the recovery reserve (BCH_RESERVE_RECOVER)?
 */
bool bch_rw_move_bucket_fits(struct bch_fs *c, unsigned dev, uint64_t keep);

/* Is a checkpoint worth running now (its bound passes half the free nodes)? */
bool bch_rw_ckpt_due(struct bch_fs *c);

/* ---- the checkpoint's new nodes, to give back when it fails ---- */

void bch_rw_ckpt_track_begin(struct bch_fs *c);
/* Btree node copies @ptrs[0..@nr) were taken from allocator @a. */
void bch_rw_node_taken(struct bch_fs *c, const struct bch_allocator *a,
		       const struct btree_ptr_h *ptrs, unsigned nr);
/* The checkpoint failed for space: its new nodes' buckets are free again. */
void bch_rw_ckpt_undo(struct bch_fs *c);
void bch_rw_ckpt_track_end(struct bch_fs *c);

#endif
