/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Btree nodes and bsets.
 * Part of the on-disk format; format/format.h includes every part.
 */
#ifndef BCH_FORMAT_NODE_H
#define BCH_FORMAT_NODE_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdbool.h>
#include "format/base.h"
#include "format/keys.h"

/* ======================================================================
 * 6. Btree nodes
 * ====================================================================== */

/* bset header, 24 bytes; keys (u64s words) follow directly */
struct bset {
	le64		seq;			/*  0 */
	le64		journal_seq;		/*  8 */
	le32		flags;			/* 16 */
	le16		version;		/* 20: BCH_BSET_VERSION */
	le16		u64s;			/* 22 */
};
_Static_assert(sizeof(struct bset) == 24, "bset");

LE32_BITMASK(BSET_CSUM_TYPE,		struct bset, flags, 0, 4);
LE32_BITMASK(BSET_BIG_ENDIAN,		struct bset, flags, 4, 5);
LE32_BITMASK(BSET_SEPARATE_WHITEOUTS,	struct bset, flags, 5, 6);

/* First bset of a node: 136-byte node header + bset header = 160 bytes */
struct btree_node {
	struct bch_csum	csum;			/*   0 */
	le64		magic;			/*  16: never encrypted */
	le64		flags;			/*  24: encrypted from here.. */
	struct bpos	min_key;		/*  32 */
	struct bpos	max_key;		/*  52 */
	struct bch_extent_ptr ptr;		/*  72 */
	struct bkey_format format;		/*  80 ..to 136 */
	struct bset	keys;			/* 136 */
};						/* 160: keys */
_Static_assert(sizeof(struct btree_node) == 160, "btree_node");
_Static_assert(offsetof(struct btree_node, magic) == 16, "btree_node");
_Static_assert(offsetof(struct btree_node, flags) == 24, "btree_node");
_Static_assert(offsetof(struct btree_node, min_key) == 32, "btree_node");
_Static_assert(offsetof(struct btree_node, max_key) == 52, "btree_node");
_Static_assert(offsetof(struct btree_node, ptr) == 72, "btree_node");
_Static_assert(offsetof(struct btree_node, format) == 80, "btree_node");
_Static_assert(offsetof(struct btree_node, keys) == 136, "btree_node");

LE64_BITMASK(BTREE_NODE_ID,	struct btree_node, flags,  0,  4);
LE64_BITMASK(BTREE_NODE_LEVEL,	struct btree_node, flags,  4,  8);
/* bits 8-31 unused */
LE64_BITMASK(BTREE_NODE_SEQ,	struct btree_node, flags, 32, 64);

/* Encrypted header region of the first bset: bytes [24, 136) */
#define BTREE_NODE_ENCRYPTED_START	offsetof(struct btree_node, flags)
#define BTREE_NODE_ENCRYPTED_END	offsetof(struct btree_node, keys)

/* Every later bset: csum + bset header = 40 bytes */
struct btree_node_entry {
	struct bch_csum	csum;			/*  0 */
	struct bset	keys;			/* 16 */
};						/* 40: keys */
_Static_assert(sizeof(struct btree_node_entry) == 40, "btree_node_entry");
_Static_assert(offsetof(struct btree_node_entry, keys) == 16, "bne");

/* Keys of a bset start right after its header */
static inline struct bkey_packed *bset_start(const struct bset *i)
{
	return (struct bkey_packed *)((uintptr_t)i + sizeof(struct bset));
}

static inline struct bkey_packed *bset_end(const struct bset *i)
{
	return (struct bkey_packed *)((uintptr_t)bset_start(i) +
				      (size_t)le16_to_cpu(i->u64s) * 8);
}

static inline size_t bset_bytes(const struct bset *i)
{
	return sizeof(struct bset) + (size_t)le16_to_cpu(i->u64s) * 8;
}

/* Unrounded on-disk size of the first / a later bset */
static inline size_t btree_node_bytes(const struct btree_node *bn)
{
	return sizeof(struct btree_node) + (size_t)le16_to_cpu(bn->keys.u64s) * 8;
}

static inline size_t btree_node_entry_bytes(const struct btree_node_entry *bne)
{
	return sizeof(struct btree_node_entry) +
		(size_t)le16_to_cpu(bne->keys.u64s) * 8;
}

#endif
