/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bulk-build a btree from sorted keys (doc/format.md §4.8, §4.9): for a new
 * filesystem, where nothing else is in the btree, the keys are cut into
 * leaves (each filled to about 9/10 of a node with its keys packed as
 * written, format chosen per node, and a key list no bigger than a node),
 * then interior levels of pointer keys up to a single root. Leaves
 * partition the key space: the first starts at POS_MIN, each next one at
 * the successor of its left neighbour's max_key, the last (and every
 * rightmost node) ends at POS_MAX. Leaves get journal_seq = c->journal.seq
 * (the newest entry written: they hold nothing newer; 0 on a new
 * filesystem), interior nodes 0; every node gets BTREE_NODE_SEQ = the low
 * 32 bits of the same seq, so a replacement is told from what it replaced
 * (node_scan.h). Every node is written before its parent is built; the
 * caller makes the root reachable (journal entry) after a flush.
 */
#ifndef BCH_BULK_H
#define BCH_BULK_H

#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "format/format.h"
#include "btree/node.h"

struct bch_fs;
struct bch_allocator;
struct btree_write_ctx;
struct printbuf;

/* A growable list of keys that own copies of their values. */
struct bulk_keys {
	struct bkey_ref		*k;
	size_t			nr, size;
};

/* Append a copy of @k (header and value); u64s is set from @v_bytes. */
void bulk_keys_add(struct bulk_keys *l, const struct bkey_h *k, const void *v, unsigned v_bytes);
void bulk_keys_exit(struct bulk_keys *l);
/* Sort by position (the btree order, doc/format.md §4.7). */
void bulk_keys_sort(struct bulk_keys *l);

/* The root of a built btree. */
struct bulk_root {
	bool			present;	/* false: no keys, no root */
	unsigned		btree_id;
	unsigned		level;
	struct bkey_ref		key;		/* pointer key at POS_MAX */
	uint64_t		key_val[BKEY_BTREE_PTR_VAL_U64s_MAX];
	uint64_t		devs;		/* devices of the root's copies */
	size_t			nr_nodes;
};

/*
 * Build btree @btree_id of @c from @keys (sorted, unique positions),
 * allocating every node from @a (replicas {btree, devs} added there).
 * @fill: percentage of a node filled by leaves (0 = 90), counted packed.
 */
int bch_bulk_build(struct bch_fs *c, const struct btree_write_ctx *w,
		   struct bch_allocator *a, unsigned btree_id,
		   const struct bkey_ref *keys, size_t nr, unsigned fill,
		   struct bulk_root *root, struct printbuf *err);

/*
 * One level of nodes at @level covering exactly [@min, @max] (copy-on-write
 * replacement of a node, doc/format.md §4.9): @keys (sorted, inside the range) are
 * cut into nodes as above, the first starting at @min and the last ending
 * at @max; with no keys, one empty node. Their pointer keys are appended
 * to @ptrs. Seqs as above.
 */
int bch_bulk_build_range(struct bch_fs *c, const struct btree_write_ctx *w,
			 struct bch_allocator *a, unsigned btree_id, unsigned level,
			 struct bpos_h min, struct bpos_h max,
			 const struct bkey_ref *keys, size_t nr, unsigned fill,
			 struct bulk_keys *ptrs, struct printbuf *err);

/*
 * Space for nodes taken in advance: the alloc btree must hold the alloc
 * keys of the buckets its own nodes use, so those are allocated first
 * (bch_bulk_nodes_for() says how many) and handed to the builder.
 */
struct bulk_pool {
	struct btree_ptr_h	(*ptrs)[BCH_REPLICAS_MAX];
	unsigned		*nr_ptrs;
	size_t			nr, used;
};

/*
 * bch_bulk_build() taking every node from @pool (-ENOSPC when it runs
 * out); the keys counted unpacked, as bch_bulk_nodes_for() counts them.
 */
int bch_bulk_build_pool(struct bch_fs *c, const struct btree_write_ctx *w,
			struct bch_allocator *a, unsigned btree_id,
			const struct bkey_ref *keys, size_t nr, unsigned fill,
			struct bulk_pool *pool, struct bulk_root *root,
			struct printbuf *err);

/*
 * What keys take in nodes: packed with the format of all of them (no node
 * of a build packs them wider; and the biggest key's), and in a reader's
 * key list (what fsck holds in memory for a node besides its bytes).
 */
struct bulk_size {
	size_t	packed, big_packed, mem;
};

void bch_bulk_measure(struct bpos_h min, const struct bkey_ref *keys, size_t nr,
		      struct bulk_size *sz);
/* The leaves a build cuts keys of size @sz into (at least one). */
size_t bch_bulk_leaves(const struct btree_write_ctx *w, const struct bulk_size *sz);
/*
 * Do keys of size @sz fit @nodes nodes of a build with a spare of
 * 1/@spare_div of a node in both measures (0: a key's worth)?
 */
bool bch_bulk_fits(const struct btree_write_ctx *w, const struct bulk_size *sz,
		   size_t nodes, size_t spare_div);

/*
 * The most nodes bch_bulk_build_pool() writes for @nr keys of @key_u64s
 * each, with pointer keys of @ptr_u64s (5 + replicas), counted unpacked
 * as it counts them (the other builds fill nodes by packed size and key
 * list: another count).
 */
size_t bch_bulk_nodes_for(const struct btree_write_ctx *w, unsigned fill, size_t nr,
			  unsigned key_u64s, unsigned ptr_u64s);

#endif
