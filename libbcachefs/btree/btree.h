/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The btrees, read side: a bounded cache of parsed nodes and iterators
 * that return the live keys of a btree in order, with the journal keys
 * not yet replayed laid over them (doc/format.md §4.8, doc/engine.md §2.4).
 *
 *   struct btree_iter iter;
 *   struct bkey_ref *k;
 *
 *   bch_btree_iter_init(&iter, c, BTREE_ID_INODES, POS_H_MIN, &err);
 *   while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
 *           ...use k (valid until the next call)...
 *           bch_btree_iter_advance(&iter);
 *   }
 *   bch_btree_iter_exit(&iter);
 *
 * Problems found in nodes (bad checksums, topology errors) are written to
 * the printbuf given at init and counted in iter.nr_errors (also added to
 * c->nr_errors); a node that cannot be read at all makes its key range
 * empty, is counted, and iteration goes on with the next node. With
 * c->opts.verify (the mount: core/integrity.h) such a node is an error
 * of the iterator instead (EIO), unless it sets skip_bad.
 */
#ifndef BCH_BTREE_H
#define BCH_BTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "btree/node.h"

struct bch_fs;
struct printbuf;

#define BTREE_CACHE_MAX_NODES	256
#define BTREE_ITER_MAX_DEPTH	4

/* ---- node cache ---- */

/*
 * The parsed node that pointer key @ptr (in the parent, or the root key)
 * references, from the cache or read from disk. The node stays valid until
 * bch_btree_node_put(). Node problems are reported into @err the first
 * time the node is read.
 */
int bch_btree_node_get(struct bch_fs *c, const struct bkey_ref *ptr,
		       const struct btree_node_expect *exp,
		       struct btree_node_h **ret, struct printbuf *err);
void bch_btree_node_put(struct bch_fs *c, struct btree_node_h *n);
/*
 * Keep at most @nr nodes that nobody holds (0: BTREE_CACHE_MAX_NODES, the
 * default): a pass that reads each node once needs only its paths.
 */
void bch_btree_cache_set_max(struct bch_fs *c, unsigned nr);
/* Free the cached nodes that nobody holds (held nodes stay). */
void bch_btree_cache_trim(struct bch_fs *c);
/*
 * Forget cached nodes whose first copy lies in sectors [@start, @end) of
 * @dev (the space is being reused); held nodes stay valid until put.
 */
void bch_btree_cache_invalidate(struct bch_fs *c, unsigned dev, uint64_t start,
				uint64_t end);
/* Free the cache (bch_fs_close() calls this). */
void bch_btree_cache_exit(struct bch_fs *c);

/* ---- key iterator ---- */

struct btree_iter {
	struct bch_fs		*c;
	unsigned		btree_id;
	struct bpos_h		pos;		/* search position */
	struct bpos_h		end;		/* bch_btree_iter_init_range() */
	bool			bounded;
	struct printbuf		*err;
	int			ret;		/* sticky fatal error */
	bool			started;
	bool			at_end;

	/* keys of the current leaf range with the journal laid over them */
	struct bpos_h		leaf_min, leaf_max;
	struct bkey_ref		*keys;
	size_t			nr_keys, idx;
	struct node_arena	*arena;
	/*
	 * c->overlay.clears when the leaf was loaded: a checkpoint (a commit
	 * may run one) frees the overlay's values keys[] points to, and the
	 * next peek loads the leaf again at pos
	 */
	uint64_t		ov_clears;
	/* the leaf whose buffer keys[] points into: held until the next leaf */
	struct btree_node_h	*leaf;
	/*
	 * With c->opts.verify a node with no good copy is an error
	 * (-BCH_ERR_btree_node_unverified, sticky) for every reader but the
	 * ones that set this before the first peek: its range is then empty
	 * and counted, as for fsck (marking what is in use, bucket gens).
	 */
	bool			skip_bad;

	unsigned long		nr_errors;
};

/*
 * Start at @pos: the first key returned is the first with p >= pos
 * (extents: p > pos, i.e. the first extent ending after pos).
 */
void bch_btree_iter_init(struct btree_iter *iter, struct bch_fs *c,
			 unsigned btree_id, struct bpos_h pos, struct printbuf *err);
/*
 * Current key in *@k, or *@k = NULL at the end. Returns 0, or a negative
 * error when the btree cannot be walked at all (no key loaded, ...).
 */
/*
 * An iterator over [@start, @end] only: non-extent keys with start <= p <=
 * end; extents overlapping sectors [start, end) (those starting before
 * @start may be cut at it). Each leaf is read only over that window, so a
 * point lookup costs O(log n) instead of a whole leaf.
 */
void bch_btree_iter_init_range(struct btree_iter *iter, struct bch_fs *c,
			       unsigned btree_id, struct bpos_h start, struct bpos_h end,
			       struct printbuf *err);
int bch_btree_iter_peek(struct btree_iter *iter, struct bkey_ref **k);
void bch_btree_iter_advance(struct btree_iter *iter);
/* peek, then advance past the returned key. */
int bch_btree_iter_next(struct btree_iter *iter, struct bkey_ref **k);
void bch_btree_iter_exit(struct btree_iter *iter);

/* ---- the journal overlay, for the update engine ---- */

struct node_arena;
/*
 * The live keys of leaf range [@min, @max] of @btree_id: node keys @nk
 * (sorted, live) with the journal keys of the range laid over them, as
 * the iterator returns them. *@out is malloc'd; changed values go to
 * @arena.
 */
void bch_btree_overlay(struct bch_fs *c, unsigned btree_id, struct bpos_h min,
		       struct bpos_h max, const struct bkey_ref *nk, size_t nr,
		       struct node_arena *arena, struct bkey_ref **out, size_t *nr_out);
/* Does any journal key touch leaf range [@min, @max] of @btree_id? */
bool bch_btree_journal_keys_in(struct bch_fs *c, unsigned btree_id,
			       struct bpos_h min, struct bpos_h max);

/*
 * The max key of the leaf of @btree_id whose range holds @pos, found
 * through the interior nodes only (the leaf is not read): POS_H_MAX when
 * the root is a leaf or there is none. For the update engine's count of
 * the leaves a checkpoint rewrites (btree/reserve.h).
 */
int bch_btree_leaf_max(struct bch_fs *c, unsigned btree_id, struct bpos_h pos,
		       struct bpos_h *max);

/* ---- node walk (list -m formats/nodes, fsck) ---- */

struct btree_node_visit {
	unsigned		btree_id;
	unsigned		level;
	unsigned		root_level;
	const struct bkey_ref	*ptr;		/* key that points at the node */
	const struct btree_node_h *n;		/* NULL if the node could not be read */
	int			read_err;
	/*
	 * n NULL with c->opts.verify: the node as fsck's reader takes it, if
	 * any copy parses (btree_node_read_salvage(): not to be trusted; for
	 * the buckets it may reference)
	 */
	const struct btree_node_h *salvaged;
};

/*
 * Visit every node of btree @btree_id, children before their parent (the
 * root last). @fn returns 0 to go on, > 0 to stop early (returned), < 0 on
 * error (returned). Unreadable nodes are visited with n = NULL.
 * A btree with no root visits nothing.
 */
int bch_btree_walk_nodes(struct bch_fs *c, unsigned btree_id,
			 int (*fn)(void *arg, const struct btree_node_visit *v),
			 void *arg, struct printbuf *err);

/*
 * The mount's check before it serves anything (core/integrity.h): with
 * c->opts.verify, read the root and every interior node of every btree
 * (not the leaves). 0, or the error of the first node with no good copy
 * (each one is reported through bch_fs_node_bad(), core/integrity.h).
 */
int bch_btree_verify_interior(struct bch_fs *c);

/*
 * Fill c->devs[]->bucket_gens (allocated here when NULL; buckets without
 * an alloc key get gen 0) from the alloc btree with the journal overlay,
 * so pointers can be judged stale (doc/format.md §5.2.7, doc/tools.md §4).
 */
int bch_btree_read_bucket_gens(struct bch_fs *c, struct printbuf *err);

#endif
