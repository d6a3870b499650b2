/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keys: bpos, bversion, bkey, packed keys, bkey_format.
 * Part of the on-disk format; format/format.h includes every part.
 */
#ifndef BCH_FORMAT_KEYS_H
#define BCH_FORMAT_KEYS_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdbool.h>
#include "format/base.h"

/* ======================================================================
 * 4. Keys
 * ====================================================================== */

/*
 * Position (20 bytes on disk): snapshot @0, offset @4, inode @12.  Read as
 * one 160-bit LE integer it equals inode:offset:snapshot, the sort order.
 */
struct bpos {
	le32		snapshot;		/*  0 */
	le64		offset;			/*  4 */
	le64		inode;			/* 12 */
} __attribute__((packed, aligned(4)));
_Static_assert(sizeof(struct bpos) == 20, "bpos");
_Static_assert(offsetof(struct bpos, offset) == 4, "bpos.offset");
_Static_assert(offsetof(struct bpos, inode) == 12, "bpos.inode");

#define KEY_INODE_MAX		UINT64_MAX
#define KEY_OFFSET_MAX		UINT64_MAX
#define KEY_SNAPSHOT_MAX	UINT32_MAX
#define KEY_SIZE_MAX		UINT32_MAX

static inline struct bpos POS(uint64_t inode, uint64_t offset)
{
	struct bpos p;

	p.snapshot = 0;
	p.offset = cpu_to_le64(offset);
	p.inode = cpu_to_le64(inode);
	return p;
}

#define POS_MIN		POS(0, 0)
#define POS_MAX		POS(KEY_INODE_MAX, KEY_OFFSET_MAX)	/* snapshot 0 */

static inline int bpos_disk_cmp(struct bpos l, struct bpos r)	/* bkey.h has bpos_cmp for bpos_h */
{
	uint64_t a, b;

	a = le64_to_cpu(l.inode);  b = le64_to_cpu(r.inode);
	if (a != b)
		return a < b ? -1 : 1;
	a = le64_to_cpu(l.offset); b = le64_to_cpu(r.offset);
	if (a != b)
		return a < b ? -1 : 1;
	a = le32_to_cpu(l.snapshot); b = le32_to_cpu(r.snapshot);
	if (a != b)
		return a < b ? -1 : 1;
	return 0;
}

static inline bool bpos_disk_eq(struct bpos l, struct bpos r)
{
	return bpos_disk_cmp(l, r) == 0;
}

/* 96-bit version: lo @0, hi @8 (12 bytes) */
struct bversion {
	le64		lo;			/* 0 */
	le32		hi;			/* 8 */
} __attribute__((packed, aligned(4)));
_Static_assert(sizeof(struct bversion) == 12, "bversion");

/* Byte 1 of every key header: format in bits 0-6, needs_whiteout bit 7 */
#define BKEY_FMT_MASK		0x7f
#define BKEY_FMT_NEEDS_WHITEOUT	0x80

#define KEY_FORMAT_LOCAL_BTREE	0	/* packed with the node's bkey_format */
#define KEY_FORMAT_CURRENT	1	/* unpacked 40-byte header */

/* Unpacked key header, 40 bytes; the value follows at byte 40 */
struct bkey {
	uint8_t		u64s;			/*  0: header + value, u64s */
	uint8_t		fmt;			/*  1: format | needs_whiteout */
	uint8_t		type;			/*  2 */
	uint8_t		pad;			/*  3 */
	struct bversion	version;		/*  4 */
	le32		size;			/* 16: extent sectors */
	struct bpos	p;			/* 20 */
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct bkey) == 40, "bkey");
_Static_assert(offsetof(struct bkey, version) == 4, "bkey.version");
_Static_assert(offsetof(struct bkey, size) == 16, "bkey.size");
_Static_assert(offsetof(struct bkey, p) == 20, "bkey.p");

#define BKEY_U64s		(sizeof(struct bkey) / sizeof(uint64_t))	/* 5 */
#define BKEY_U64s_MAX		255
#define BKEY_VAL_U64s_MAX	(BKEY_U64s_MAX - BKEY_U64s)
#define KEY_PACKED_BITS_START	24

/*
 * A key as found in a bset: only the first three bytes are fixed; with
 * format 0 the rest of the first key_u64s words hold the packed fields,
 * with format 1 it is a whole struct bkey.  A struct bkey pointer may be
 * used as a bkey_packed pointer.
 */
struct bkey_packed {
	uint8_t		u64s;			/* 0 */
	uint8_t		fmt;			/* 1 */
	uint8_t		type;			/* 2 */
	uint8_t		key_start[];		/* 3 */
};
_Static_assert(sizeof(struct bkey_packed) == 3, "bkey_packed");

static inline unsigned bkey_fmt(const struct bkey_packed *k)
{
	return k->fmt & BKEY_FMT_MASK;
}

static inline bool bkey_needs_whiteout(const struct bkey_packed *k)
{
	return (k->fmt & BKEY_FMT_NEEDS_WHITEOUT) != 0;
}

static inline void bkey_set_fmt(struct bkey_packed *k, unsigned fmt,
				bool needs_whiteout)
{
	k->fmt = (uint8_t)((fmt & BKEY_FMT_MASK) |
			   (needs_whiteout ? BKEY_FMT_NEEDS_WHITEOUT : 0));
}

static inline bool bkey_is_packed(const struct bkey_packed *k)
{
	return bkey_fmt(k) == KEY_FORMAT_LOCAL_BTREE;
}

static inline bool bkey_type_is_whiteout(unsigned type)
{
	return type == KEY_TYPE_DELETED || type == KEY_TYPE_DISCARD;
}

/* Packed-key format, 56 bytes, in each btree node header */
enum bch_bkey_field {
	BKEY_FIELD_INODE	= 0,
	BKEY_FIELD_OFFSET	= 1,
	BKEY_FIELD_SNAPSHOT	= 2,
	BKEY_FIELD_SIZE		= 3,
	BKEY_FIELD_VERSION_HI	= 4,
	BKEY_FIELD_VERSION_LO	= 5,
	BKEY_NR_FIELDS		= 6,
};

struct bkey_format {
	uint8_t		key_u64s;			/* 0 */
	uint8_t		nr_fields;			/* 1: must be 6 */
	uint8_t		bits_per_field[BKEY_NR_FIELDS];	/* 2 */
	le64		field_offset[BKEY_NR_FIELDS];	/* 8 */
};
_Static_assert(sizeof(struct bkey_format) == 56, "bkey_format");
_Static_assert(offsetof(struct bkey_format, field_offset) == 8, "bkey_format");

/* Width of each field in the unpacked key, indexed by enum bch_bkey_field */
#define BKEY_FIELD_WIDTHS	{ 64, 64, 32, 32, 32, 64 }

/* The identity format: packs to exactly the unpacked layout */
#define BKEY_FORMAT_CURRENT						\
	((struct bkey_format) {						\
		.key_u64s	= BKEY_U64s,				\
		.nr_fields	= BKEY_NR_FIELDS,			\
		.bits_per_field	= BKEY_FIELD_WIDTHS,			\
	})

static inline void bkey_init(struct bkey *k)
{
	memset(k, 0, sizeof(*k));
	k->u64s = BKEY_U64s;
	k->fmt = KEY_FORMAT_CURRENT;
}

/* Value of an unpacked key */
static inline void *bkey_val(const struct bkey *k)
{
	return (void *)((uintptr_t)k + sizeof(struct bkey));
}

static inline unsigned bkey_val_u64s(const struct bkey *k)
{
	return k->u64s > BKEY_U64s ? k->u64s - (unsigned)BKEY_U64s : 0;
}

static inline size_t bkey_val_bytes(const struct bkey *k)
{
	return (size_t)bkey_val_u64s(k) * 8;
}

/* Header size in u64s of a key in a node whose format is f */
static inline unsigned bkeyp_key_u64s(const struct bkey_format *f,
				      const struct bkey_packed *k)
{
	return bkey_is_packed(k) ? f->key_u64s : BKEY_U64s;
}

/* Value of a key that may be packed */
static inline void *bkeyp_val(const struct bkey_format *f,
			      const struct bkey_packed *k)
{
	return (void *)((uintptr_t)k + (size_t)bkeyp_key_u64s(f, k) * 8);
}

static inline unsigned bkeyp_val_u64s(const struct bkey_format *f,
				      const struct bkey_packed *k)
{
	unsigned h = bkeyp_key_u64s(f, k);

	return k->u64s > h ? k->u64s - h : 0;
}

/* Next key in a sequence of keys (bset or journal entry) */
static inline struct bkey_packed *bkey_next(const struct bkey_packed *k)
{
	return (struct bkey_packed *)((uintptr_t)k + (size_t)k->u64s * 8);
}

#endif
