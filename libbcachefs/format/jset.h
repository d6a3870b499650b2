/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The journal: jset and its entries.
 * Part of the on-disk format; format/format.h includes every part.
 */
#ifndef BCH_FORMAT_JSET_H
#define BCH_FORMAT_JSET_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdbool.h>
#include "format/base.h"
#include "format/keys.h"

/* ======================================================================
 * 7. Journal
 * ====================================================================== */

/* Journal entry header, 56 bytes; u64s words of jset_entry records follow */
struct jset {
	struct bch_csum	csum;			/*  0 */
	le64		magic;			/* 16 */
	le64		seq;			/* 24 */
	le32		version;		/* 32: BCH_JSET_VERSION */
	le32		flags;			/* 36 */
	le32		u64s;			/* 40 */
	le16		read_clock;		/* 44: encryption starts here */
	le16		write_clock;		/* 46 */
	le64		last_seq;		/* 48 */
};						/* 56: entries */
_Static_assert(sizeof(struct jset) == 56, "jset");
_Static_assert(offsetof(struct jset, u64s) == 40, "jset");
_Static_assert(offsetof(struct jset, read_clock) == 44, "jset");
_Static_assert(offsetof(struct jset, last_seq) == 48, "jset");

#define JSET_ENCRYPTED_START	offsetof(struct jset, read_clock)

LE32_BITMASK(JSET_CSUM_TYPE,	struct jset, flags, 0, 4);
LE32_BITMASK(JSET_BIG_ENDIAN,	struct jset, flags, 4, 5);

/* Journal record header, 8 bytes; u64s (payload only) words follow */
struct jset_entry {
	le16		u64s;			/* 0 */
	uint8_t		btree_id;		/* 2 */
	uint8_t		level;			/* 3 */
	uint8_t		type;			/* 4 */
	uint8_t		pad[3];			/* 5 */
};
_Static_assert(sizeof(struct jset_entry) == 8, "jset_entry");

#define JSET_KEYS_U64s	(sizeof(struct jset_entry) / sizeof(uint64_t))

struct jset_entry_blacklist {
	struct jset_entry entry;
	le64		seq;
};
_Static_assert(sizeof(struct jset_entry_blacklist) == 16, "blacklist");

struct jset_entry_blacklist_v2 {
	struct jset_entry entry;
	le64		start;			/* inclusive */
	le64		end;			/* inclusive */
};
_Static_assert(sizeof(struct jset_entry_blacklist_v2) == 24, "blacklist_v2");

static inline size_t jset_bytes(const struct jset *j)
{
	return sizeof(struct jset) + (size_t)le32_to_cpu(j->u64s) * 8;
}

static inline struct jset_entry *jset_entries_start(const struct jset *j)
{
	return (struct jset_entry *)((uintptr_t)j + sizeof(struct jset));
}

static inline struct jset_entry *jset_entries_end(const struct jset *j)
{
	return (struct jset_entry *)((uintptr_t)j + jset_bytes(j));
}

static inline struct jset_entry *jset_entry_next(const struct jset_entry *e)
{
	return (struct jset_entry *)((uintptr_t)e + sizeof(*e) +
				     (size_t)le16_to_cpu(e->u64s) * 8);
}

/* First key of a btree_keys / btree_root record (always unpacked) */
static inline struct bkey *jset_entry_keys_start(const struct jset_entry *e)
{
	return (struct bkey *)((uintptr_t)e + sizeof(*e));
}

static inline struct bkey *jset_entry_keys_end(const struct jset_entry *e)
{
	return (struct bkey *)jset_entry_next(e);
}

#endif
