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
#include "journal/journal_write.h"

struct bch_fs;
struct printbuf;
struct trans_update;

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
	uint64_t		key_version;	/* 40 §40.4.7 */
	uint64_t		nr_nodes;	/* btree nodes of the tree on disk */

	/* fsck (issue #5): nodes to rewrite at the next checkpoint */
	struct rw_forced	*forced;
	size_t			nr_forced, size_forced;
	bool			force_checkpoint;	/* gens/replicas changed outside commits */
};

/* c->rw, started on demand when that was asked for; NULL: not writable. */
struct bch_fs_rw *bch_rw_get(struct bch_fs *c);
/* Drop the engine state without writing anything. */
void bch_rw_free(struct bch_fs *c);
/* Account the extent update @u committed in entry @seq (the allocator's sectors). */
void bch_rw_extent_trigger(struct bch_fs *c, const struct trans_update *u, uint64_t seq);

#endif
