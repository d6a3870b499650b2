/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Combining sorted runs of keys (key_merge.c): what a node's bsets and the
 * journal overlay of the iterators have in common.
 */
#ifndef BCH_KEY_MERGE_H
#define BCH_KEY_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"

/* Devices a node context knows bucket sizes for (extent merging). */
#define BTREE_NODE_MAX_DEVS	64

/*
 * Combine sorted runs of keys, oldest run first (exported for tests and
 * the iterator's journal overlay): each run must be sorted (extents: no
 * overlap inside a run). The newer key wins at equal positions (extents:
 * for the sectors it covers); whiteouts are dropped. @arena receives
 * copies of values that had to change (extent front cuts). The result is
 * a malloc'd array in *@out.
 */
struct key_run {
	const struct bkey_ref	*k;
	size_t			nr;
};

struct node_arena;
struct node_arena *node_arena_new(void);
void node_arena_free(struct node_arena *a);

int bch_keys_overlay(bool extents, const struct key_run *runs, unsigned nr_runs,
		     struct node_arena *arena, struct bkey_ref **out, size_t *nr_out);

/*
 * Piece [start, end) (offsets in @k's inode) of extent @k: size and end
 * set, value adjusted for a front cut (copied into @arena when it changes).
 */
struct bkey_ref bch_extent_piece(const struct bkey_ref *k, uint64_t start,
				 uint64_t end, struct node_arena *arena);

/*
 * Merge adjacent extents where the 2018 read path did (doc/format.md §4.6):
 * in place, returns the new count. @bucket_size per device (sectors).
 */
size_t bch_extents_merge(struct bkey_ref *k, size_t nr, const uint16_t *bucket_size);

/* A growable array of keys (views: the values stay where they are). */
struct keyvec {
	struct bkey_ref	*k;
	size_t		nr, size;
};

void keyvec_push(struct keyvec *v, const struct bkey_ref *k);
/* Room for @nr more keys (one allocation instead of doubling copies). */
void keyvec_reserve(struct keyvec *v, size_t nr);
/*
 * Lay @runs over @cur, oldest first. @cur is owned (its buffer is reused)
 * or borrowed (@owned false: a view of keys that stay where they are).
 */
void bch_keys_overlay_rounds(bool extents, struct keyvec cur, bool owned,
			     const struct key_run *runs, unsigned nr_runs,
			     struct node_arena *arena, struct bkey_ref **out, size_t *nr_out);

/*
 * Lay @runs (oldest first, outside @k) over the @nr keys at the front of
 * @k, inside @k itself: the same result as bch_keys_overlay_rounds(),
 * without a second list of @k's size. @cap: the keys @k has room for, at
 * least bch_keys_overlay_room(). Returns the number of keys now at the
 * front of @k.
 */
size_t bch_keys_overlay_room(bool extents, size_t nr, const struct key_run *runs,
			     unsigned nr_runs);
/*
 * Non-extents, the runs inside @k itself (a node's bsets as read): the
 * first run is the @nr keys at the front, each of @runs (at @start in @k,
 * in order, none before the end of the one before, the first at or after
 * @nr) is laid over what comes before it; no copy of more than one run
 * that overlaps the keys before it. The same result as
 * bch_keys_overlay_rounds(); returns the number of keys now at the front.
 */
struct key_run_at {
	size_t	start, nr;
};

size_t bch_keys_overlay_in_buffer(struct bkey_ref *k, size_t nr, const struct key_run_at *runs,
				  unsigned nr_runs);
size_t bch_keys_overlay_in_place(bool extents, struct bkey_ref *k, size_t nr, size_t cap,
				 const struct key_run *runs, unsigned nr_runs,
				 struct node_arena *arena);

#endif
