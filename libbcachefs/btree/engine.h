/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the update engine (btree_update.h is its interface): the state of
 * a writable filesystem, c->rw, shared by engine.c (start, stop, state),
 * sb_write.c (superblocks), checkpoint.c (journal entries, checkpoints)
 * and trans.c (transactions). Nothing outside btree/ includes this.
 */
#ifndef BCH_BTREE_ENGINE_H
#define BCH_BTREE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/alloc.h"
#include "btree/btree_update.h"
#include "btree/node_write.h"
#include "core/bch_fs.h"
#include "journal/journal_write.h"

struct bch_fs;
struct printbuf;
struct trans_update;

/* A leaf a checkpoint will rewrite: its btree and max key (btree/reserve.c). */
struct touched_leaf {
	bool		used;
	uint8_t		btree_id;
	struct bpos_h	max;
};

struct freed_bucket {
	unsigned	dev;
	uint64_t	bucket;
};

/* A node to rewrite at the next checkpoint (bch_fs_rw_force_rewrite()). */
struct rw_forced {
	unsigned	btree_id;
	unsigned	level;
	struct bpos_h	max;		/* the node's pointer key position */
};

struct bch_fs_rw {
	struct bch_allocator	a;
	struct bch_journal_writer jw;
	struct btree_write_ctx	wctx;
	struct bkey_fs_ctx	kctx;
	bool			failed;		/* a write failed: no more writes */
	bool			unclean;	/* CLEAN cleared on disk */
	uint64_t		last_seq;	/* for the next entry */
	size_t			entry_u64s;	/* key space per journal entry */

	/* buckets of replaced nodes, free once the new tree is durable */
	struct freed_bucket	*freed;
	size_t			nr_freed, size_freed;

	struct bch_rw_stats	stats;

	/* the open journal entry (entry_open/entry_write) */
	struct jset_builder	open;
	bool			open_live;
	size_t			open_u64s;	/* key space used in it */
	uint64_t		open_since;	/* when it was opened (ns) */
	uint64_t		durable_seq;	/* newest entry known to be durable */
	bool			batch;		/* commits do not wait for their entry */

	/* data writes (io_write.c) */
	uint64_t		key_version;	/* doc/format.md §9.3 */
	uint64_t		nr_nodes;	/* btree nodes of the tree on disk */

	/* fsck: nodes to rewrite at the next checkpoint */
	struct rw_forced	*forced;
	size_t			nr_forced, size_forced;
	bool			force_checkpoint;	/* gens/replicas changed outside commits */

	/* space reservations (btree/reserve.h) */
	bool			use_reserve;	/* ops that free space: the recovery reserve */
	uint64_t		write_credit;	/* sectors of promised space a data write may use */
	bool			ckpt_nospc;	/* the last checkpoint found no space */
	uint64_t		ckpt_nospc_free; /* free buckets then */
	bool			ck_tracking;	/* a checkpoint is taking nodes */
	struct freed_bucket	*ck_new;	/* the buckets it took */
	size_t			nr_ck_new, size_ck_new;
	/*
	 * The leaves holding overlay keys (a hash set), counted per btree;
	 * exact while every overlay change came through a commit since the
	 * last checkpoint (ov_changes follows c->overlay.changes)
	 */
	struct touched_leaf	*touched;
	size_t			touched_size;
	uint64_t		nr_touched[BCH_NR_BTREES];
	bool			touched_exact;
	uint64_t		ov_changes;

	/*
	 * Buckets a write point is done with, whose data keys may not be
	 * committed yet: closed at the end of the next commit (the keys are
	 * then in the entry the close waits for), never before a journal
	 * flush could free them with their data unreferenced
	 */
	struct freed_bucket	*wp_closing;
	size_t			nr_wp_closing, size_wp_closing;
	bool			in_data_bucket;	/* committing a data bucket's alloc key */
};

/* c->rw, started on demand when that was asked for; NULL: not writable. */
struct bch_fs_rw *bch_rw_get(struct bch_fs *c);
/* Drop the engine state without writing anything. */
void bch_rw_free(struct bch_fs *c);
/* The write point's closed buckets (wp_closing) go to the allocator now. */
void bch_rw_wp_close_deferred(struct bch_fs *c);
/* Account the extent update @u committed in entry @seq (the allocator's sectors). */
void bch_rw_extent_trigger(struct bch_fs *c, const struct trans_update *u, uint64_t seq);

/*
 * fallocate's promises (btree/reserve.h): sectors x replicas that
 * reservation key @k holds over @sectors of it (0 for other keys). The
 * extent trigger keeps a->reserved_sectors in step with the keys.
 */
uint64_t bch_rw_reservation_sectors(const struct bkey_ref *k, uint64_t sectors);

#endif
