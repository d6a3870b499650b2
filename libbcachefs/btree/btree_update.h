/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The update engine (doc/format.md §4.9, doc/engine.md §7-§8): every write to an
 * initialised filesystem goes through a transaction, and the journal
 * comes first.
 *
 *   bch_fs_rw_start(c)              allocator state from a mark of every
 *                                   pointer; journal writer after the read
 *   bch_trans_update()/_delete()    collect keys (copies)
 *   bch_trans_commit()              the keys go into the open journal
 *                                   entry (written with every root and
 *                                   flushed at once, or batched, see
 *                                   below); they join the in-memory
 *                                   overlay, so iterators see them at once
 *   bch_fs_checkpoint()             the overlay written into the btrees:
 *                                   copy-on-write of every node on the path
 *                                   of a changed key (splits as needed, a
 *                                   run of changed leaves under one parent
 *                                   rebuilt together so shrunken leaves
 *                                   merge, new roots), the alloc btree
 *                                   rebuilt from the allocator, then a
 *                                   journal entry with the new roots and
 *                                   last_seq = seq (runs by itself when the
 *                                   journal runs short of buckets)
 *   bch_fs_rw_stop(c)               checkpoint, CLEAN, superblocks
 *
 * Crash safety: a committed transaction is durable (its journal entry is
 * flushed) and replayed by any reader until a checkpoint has put it in the
 * btree. A checkpoint never changes a node that is reachable: new nodes go
 * to free buckets, are flushed, and only then does one journal entry make
 * them the tree; old nodes' buckets are reused only after that entry is
 * durable. An interrupted checkpoint leaves the previous tree and the
 * journal as they were. The filesystem is marked not clean before the
 * first journal write and clean again only after the last checkpoint.
 *
 * A transaction is atomic when its keys fit one journal entry (a quarter
 * of the smallest journal bucket); larger ones are split into several
 * entries, each atomic, in order.
 *
 * The code: engine.c (start, start on demand, the state fsck may change,
 * the data write path's glue, members changing), trans.c (transactions,
 * commit), checkpoint.c (the open journal entry, checkpoints, stop),
 * sb_write.c (the superblock writes); engine.h holds the state they share.
 * Opening and closing is fs/fs.c's (bch_fs_rw_stop() there closes the data
 * write point, then calls bch_btree_rw_stop()).
 *
 * Nodes are never appended to in place: every changed node is replaced
 * (doc/format.md §4.9 allows either). Single-threaded; iterators may stay open
 * across commits (they see the
 * new keys from their next leaf on) and checkpoints (held nodes stay
 * valid).
 */
#ifndef BCH_BTREE_UPDATE_H
#define BCH_BTREE_UPDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"

struct bch_fs;
struct printbuf;

/*
 * Make @c writable: it must be opened read-write, initialised, with every
 * member present and the key loaded when encrypted. Reads bucket gens,
 * marks every bucket in use (superblocks, journal, btree nodes, live
 * extent pointers) and prepares the journal writer. Writes nothing.
 * Errors: -EROFS (opened read-only, member missing), -BCH_ERR_no_key,
 * -EINVAL (not initialised), I/O errors.
 */
int bch_fs_rw_start(struct bch_fs *c, struct printbuf *err);

/*
 * Write everything out and mark the filesystem clean: a checkpoint when
 * anything is in the overlay (also journal keys read at open: a stop
 * after a start replays an unclean journal into the btrees), then CLEAN
 * and the superblocks. Nothing is written when nothing changed and the
 * filesystem was clean. Frees the engine state even on error (the
 * filesystem is then left as the last durable journal entry says).
 * Callers stop the engine with bch_fs_rw_stop() (fs/fs.h), which first
 * closes the data write point's buckets.
 */
int bch_btree_rw_stop(struct bch_fs *c, struct printbuf *err);

/* Drop the engine state without writing anything (bch_fs_close()). */
void bch_btree_rw_free(struct bch_fs *c);

/*
 * Let the engine start at the first write instead (a check that repairs
 * nothing never pays for marking every bucket): only the cheap conditions
 * are checked now (-EROFS, -EINVAL, -BCH_ERR_no_key with the reason in
 * @err). A later start that fails leaves its reason in c->rw_start_err,
 * and the writes then fail with -EROFS.
 */
int bch_fs_rw_on_demand(struct bch_fs *c, struct printbuf *err);

/*
 * Is @c writable (the engine started, or starts now on demand, and nothing
 * failed since)?
 */
bool bch_fs_rw(struct bch_fs *c);

/* ---- transactions ---- */

struct trans_update {
	unsigned		btree_id;
	struct bkey_ref		k;		/* value owned by the transaction */
};

struct btree_trans {
	struct bch_fs		*c;
	struct trans_update	*u;
	size_t			nr, size;
	bool			bad_value;	/* an update was refused: commit fails */
	/*
	 * Keys as they are, no bucket accounting (test tools planting
	 * damage): the allocator does not learn what the keys reference.
	 */
	bool			raw;
};

void bch_trans_init(struct btree_trans *t, struct bch_fs *c);
void bch_trans_exit(struct btree_trans *t);

/*
 * Insert or overwrite key @k (header; u64s is set from @v_bytes) with
 * value @v in btree @btree_id. For extents the key replaces every sector
 * it covers. Keys of one transaction apply in the order given.
 */
void bch_trans_update(struct btree_trans *t, unsigned btree_id, const struct bkey_h *k,
		      const void *v, unsigned v_bytes);
/* Delete the key at @pos (a whiteout: type deleted, no value). */
void bch_trans_delete(struct btree_trans *t, unsigned btree_id, struct bpos_h pos);
/*
 * Delete sectors [@start, @end) of inode @inode in the extents btree
 * (discard keys with a size, cut at KEY_SIZE_MAX).
 */
void bch_trans_delete_extents(struct btree_trans *t, uint64_t inode, uint64_t start,
			      uint64_t end);

/*
 * Validate the keys (a bad key fails the whole transaction: -EINVAL and a
 * message), journal them, flush, and lay them over the btrees in memory.
 * The transaction is emptied (it can be reused). A checkpoint runs first
 * when the journal is short of space. -EROFS when the engine is not
 * started or failed earlier.
 */
int bch_trans_commit(struct btree_trans *t, struct printbuf *err);

/* Write the overlay into the btrees now (see above). */
int bch_fs_checkpoint(struct bch_fs *c, struct printbuf *err);

/*
 * ---- the running filesystem (the mount) ----
 *
 * Batched commits: bch_trans_commit() puts the keys in the open journal
 * entry and returns; the entry is written when it is full, by
 * bch_journal_flush() (fsync: everything committed before is durable when
 * it returns) or by bch_journal_flush_old() (a timer: at the latest every
 * journal write delay). A crash loses the transactions of the entries not
 * written, each whole: nothing half-done is visible after replay. A
 * checkpoint also runs when the overlay holds more than
 * BCH_OVERLAY_MAX_BYTES (so memory stays bounded).
 */
#define BCH_OVERLAY_MAX_BYTES	(64ULL << 20)
/* How old the open journal entry may get (doc/engine.md §4.4: 1000 ms). */
#define BCH_JOURNAL_WRITE_DELAY_NS	(1000ULL * 1000 * 1000)

void bch_fs_rw_set_batch(struct bch_fs *c, bool batch);
int bch_journal_flush(struct bch_fs *c, struct printbuf *err);
/* Write the open entry if it was opened more than @age_ns ago. */
int bch_journal_flush_old(struct bch_fs *c, uint64_t age_ns, struct printbuf *err);
/* Seq of the newest journal entry known to be durable. */
uint64_t bch_journal_seq_durable(const struct bch_fs *c);

/*
 * ---- for fsck's repairs (doc/engine.md §6.6) ----
 *
 * Rewrite the node of btree @btree_id at @level whose pointer key is at
 * @max (a root: its level and POS_H_MAX) at the next checkpoint, even when
 * the overlay has no key in its range: its keys as read (the reader has
 * dropped what it could not use) with the overlay laid over them go to
 * new nodes. A node that cannot be read is rebuilt from the overlay keys
 * alone (re-insert what can be salvaged first), at the same level over
 * the same range; its buckets are not released (what they hold is not
 * known). bch_fs_rw_stop() runs a checkpoint when a rewrite is pending.
 */
void bch_fs_rw_force_rewrite(struct bch_fs *c, unsigned btree_id, unsigned level,
			     struct bpos_h max);
/*
 * Set the gen of bucket @bucket of @dev in the allocator: the next
 * checkpoint writes its alloc key (bch_fs_rw_stop() then runs one).
 * False when the engine is not started or there is no such bucket.
 */
bool bch_fs_rw_set_bucket_gen(struct bch_fs *c, unsigned dev, uint64_t bucket, uint8_t gen);
/* The allocator's gen of a bucket; false when unknown. */
bool bch_fs_rw_bucket_gen(struct bch_fs *c, unsigned dev, uint64_t bucket, uint8_t *gen);
/*
 * Add replicas entry {@data_type, @devs} (bit d = device d): the
 * superblocks carry it from the next checkpoint (bch_fs_rw_stop() then
 * runs one).
 */
bool bch_fs_rw_replicas_add(struct bch_fs *c, unsigned data_type, uint64_t devs);
/*
 * The space key @k of btree @btree_id points to is in use (extents: their
 * live pointers' buckets): keys salvaged from a node that could not be
 * read at start, so that nothing is allocated over their data.
 */
void bch_fs_rw_mark_in_use(struct bch_fs *c, unsigned btree_id, const struct bkey_ref *k);
/*
 * Have bch_fs_rw_stop() run a checkpoint even with nothing changed: the
 * btrees then hold what the journal said and new journal entries
 * supersede the old ones (bad journal entries found at open).
 */
void bch_fs_rw_want_checkpoint(struct bch_fs *c);
/*
 * A node with no good copy was found (core/integrity.h): the filesystem is
 * marked not clean now (its superblocks written once, also after the
 * writes stopped, which is not writing over anything damaged), and
 * bch_fs_rw_stop() leaves it so: the next fsck -n or -p checks it. No-op
 * when the engine is not started or a write failed.
 */
int bch_fs_rw_mark_damaged(struct bch_fs *c, struct printbuf *err);

/*
 * ---- space reservations (btree/reserve.h, doc/engine.md §8.6) ----
 *
 * Every transaction commits only when a checkpoint of the overlay with its
 * keys would still find its btree nodes (and the sectors its reservation
 * keys promise are free); otherwise it first has the journal flushed (so
 * emptied buckets come back) and a checkpoint run, and then fails with
 * -BCH_ERR_nospc having changed nothing. Operations that free space run
 * in reserve mode: they may take the last nodes (returns the previous
 * mode, to restore).
 */
bool bch_fs_rw_use_reserve(struct bch_fs *c, bool on);
/*
 * The next data writes cover @sectors that fallocate promised (sectors x
 * replicas): their buckets may come out of the promised space. 0 after.
 */
void bch_fs_rw_write_credit(struct bch_fs *c, uint64_t sectors);

/* ---- for the data write path (io_write.c) ---- */

struct bch_allocator;
struct bch_allocator *bch_fs_rw_alloc(struct bch_fs *c);
/* A fresh version for an encrypted extent (doc/format.md §9.3: ++counter + 1). */
uint64_t bch_fs_rw_key_version(struct bch_fs *c);
/* Buckets of @dev kept free for btree nodes (data writes stop there). */
uint64_t bch_fs_rw_reserve(const struct bch_fs *c, unsigned dev);
/*
 * A free bucket of @dev for user data: a new gen, whose alloc key is
 * committed here (before any pointer to it, doc/engine.md §8.5). -BCH_ERR_nospc
 * when only the metadata reserve is left.
 */
int bch_fs_rw_data_bucket(struct bch_fs *c, unsigned dev, uint64_t *bucket, uint8_t *gen,
			  struct printbuf *err);
/*
 * The same for a move, leaving @keep free buckets of @dev instead of the
 * btree reserve and fallocate's promises (copygc goes below the metadata
 * reserve: what it writes frees more than it takes).
 */
int bch_fs_rw_data_bucket_keep(struct bch_fs *c, unsigned dev, uint64_t keep,
			       uint64_t *bucket, uint8_t *gen, struct printbuf *err);
/* The write point is done with @bucket. */
void bch_fs_rw_data_bucket_close(struct bch_fs *c, unsigned dev, uint64_t bucket);
/* Replicas entry {@data_type, @devs} in the superblocks now, if new (doc/engine.md §16). */
int bch_fs_rw_replicas_mark(struct bch_fs *c, unsigned data_type, uint64_t devs,
			    struct printbuf *err);

/*
 * ---- members changing at run time (online administration: doc/engine.md §17) ----
 *
 * Member @dev changed in c->sb and c->devs[] (added, removed, online,
 * offline, state, durability, size): the allocator (bch_alloc_dev_sync)
 * and the journal writer follow it (a new member's journal, from its
 * ca->sb, starts empty; a member that is not read-write or not present
 * takes no journal writes), key checks see the new member count, and the
 * write point's open buckets close. No-op when the engine is not started.
 */
int bch_fs_rw_member_update(struct bch_fs *c, unsigned dev, struct printbuf *err);
/* Write every present member's superblock from c->sb now (members changed). */
int bch_fs_rw_write_sb(struct bch_fs *c, struct printbuf *err);
/*
 * Replicas GC (doc/engine.md §16): a checkpoint (the journal then needs only its
 * newest entry), then the table becomes what @walk puts in @t (btree,
 * user and cached entries of every live key) plus {journal, devices of
 * that newest entry}; written to the superblocks.
 */
struct bch_replicas_table;
int bch_fs_rw_replicas_gc(struct bch_fs *c,
			  int (*walk)(struct bch_fs *c, struct bch_replicas_table *t, void *arg),
			  void *arg, struct printbuf *err);

/* Counters, for tests and -v output. */
struct bch_rw_stats {
	uint64_t	commits;
	uint64_t	keys;
	uint64_t	journal_entries;
	uint64_t	checkpoints;
	uint64_t	nodes_written;
	uint64_t	nodes_freed;
};
void bch_fs_rw_stats(const struct bch_fs *c, struct bch_rw_stats *s);

#endif
