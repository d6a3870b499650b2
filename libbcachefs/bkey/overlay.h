/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-memory overlay: every key that is newer than the btree nodes on
 * disk (the journal keys read at open, then every committed transaction)
 * until a checkpoint writes them into the nodes (btree_update.h).
 *
 * It is kept normalized, so that a reader never has to order keys by age:
 * per btree one sorted sequence in which
 *   - every position holds at most one key (the newest): an insert at an
 *     existing position replaces it;
 *   - extents never overlap: an inserted extent cuts the parts of older
 *     overlay extents it covers (front and back cuts, a split in the
 *     middle, whole keys dropped; doc/format.md §5.2.8).
 * Whiteouts (types 0 and 1; for extents with a size) stay in the overlay:
 * they hide the node keys under them. Extent keys of size 0 cover nothing
 * and are not kept.
 *
 * Storage: per btree a list of sorted chunks of at most OV_CHUNK keys
 * (binary search over the chunks, then inside one), so an insert costs
 * O(log n + OV_CHUNK) whatever the size. Values are copied; the overlay
 * owns them.
 *
 * Not thread-safe: the engine lock (fs.h) covers it.
 */
#ifndef BCH_OVERLAY_H
#define BCH_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"

#define OV_NR_BTREES	6
#define OV_CHUNK	64

struct ov_key {
	struct bkey_h	k;
	void		*v;		/* owned (NULL when no value) */
	unsigned	v_bytes;
};

struct ov_chunk {
	unsigned	nr;
	struct ov_key	keys[OV_CHUNK];
};

struct ov_tree {
	struct ov_chunk	**c;
	size_t		nr, size;	/* chunks */
	size_t		nr_keys;
};

struct bch_overlay {
	struct ov_tree	t[OV_NR_BTREES];
	size_t		nr_keys;
	size_t		bytes;		/* memory held by keys and values (approximate) */
	uint64_t	changes;	/* bumped by every insert and clear */
	uint64_t	clears;		/* bumped by every clear: every value freed */
};

/* Drop every key (after a checkpoint, at close). */
void bch_overlay_clear(struct bch_overlay *ov);

/*
 * Lay key @k (value @k->v, @k->v_bytes) of btree @btree_id over the
 * overlay as the newest key (see above). Returns 0, or -EINVAL for an
 * unknown btree (nothing is changed).
 */
int bch_overlay_insert(struct bch_overlay *ov, unsigned btree_id, const struct bkey_ref *k);
/* @k as older than every overlay key: only where the overlay has none */
int bch_overlay_insert_under(struct bch_overlay *ov, unsigned btree_id, const struct bkey_ref *k);

/* A position in one btree's sequence. */
struct ov_iter {
	const struct ov_tree	*t;
	size_t			ci, i;
};

/*
 * The first key with p >= @pos (extents: p > @pos, the first extent that
 * ends after @pos).
 */
void bch_overlay_seek(const struct bch_overlay *ov, unsigned btree_id, struct bpos_h pos,
		      struct ov_iter *it);
/* The key at @it, or NULL at the end. */
const struct ov_key *bch_overlay_peek(const struct ov_iter *it);
void bch_overlay_next(struct ov_iter *it);

static inline struct bkey_ref ov_key_ref(const struct ov_key *k)
{
	return (struct bkey_ref) { .k = k->k, .v = k->v, .v_bytes = k->v_bytes };
}

/* Keys of @btree_id in the overlay. */
static inline size_t bch_overlay_nr(const struct bch_overlay *ov, unsigned btree_id)
{
	return btree_id < OV_NR_BTREES ? ov->t[btree_id].nr_keys : 0;
}

#endif
