/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Values of every key type: extents (entries, decoders), inodes, dirents,
 * xattrs, alloc, quota, cookie.
 * Part of the on-disk format; format/format.h includes every part.
 */
#ifndef BCH_FORMAT_VALUES_H
#define BCH_FORMAT_VALUES_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdbool.h>
#include "format/base.h"
#include "format/keys.h"

/* ======================================================================
 * 5. Values
 * ====================================================================== */

/* --- cookie (generic type 3) ------------------------------------------ */
struct bch_cookie {
	le64		cookie;
};
_Static_assert(sizeof(struct bch_cookie) == 8, "bch_cookie");

/* --- extents (btree 0) ------------------------------------------------- */

/*
 * An extent value is a list of entries of 1, 2 or 3 u64s.  The entry kind
 * is the index of the lowest set bit of its first LE word:
 *   bit 0 -> ptr (1 u64), bit 1 -> crc32 (1), bit 2 -> crc64 (2),
 *   bit 3 -> crc128 (3); zero word or higher bit -> invalid.
 * A crc entry applies to the ptr entries following it.
 * Sizes in crc entries are stored minus one.
 */
enum bch_extent_entry_type {
	BCH_EXTENT_ENTRY_ptr	= 0,
	BCH_EXTENT_ENTRY_crc32	= 1,
	BCH_EXTENT_ENTRY_crc64	= 2,
	BCH_EXTENT_ENTRY_crc128	= 3,
};
#define BCH_EXTENT_ENTRY_MAX	4

struct bch_extent_ptr {
	le64		w;
};

struct bch_extent_crc32 {
	le64		w;
};

struct bch_extent_crc64 {
	le64		w;		/* fields, csum bits 64..79 in 48-63 */
	le64		csum_lo;
};

struct bch_extent_crc128 {
	le64		w;
	le64		csum_lo;
	le64		csum_hi;
};

_Static_assert(sizeof(struct bch_extent_ptr) == 8, "extent ptr");
_Static_assert(sizeof(struct bch_extent_crc32) == 8, "crc32");
_Static_assert(sizeof(struct bch_extent_crc64) == 16, "crc64");
_Static_assert(sizeof(struct bch_extent_crc128) == 24, "crc128");

union bch_extent_entry {
	le64			first_word;
	struct bch_extent_ptr	ptr;
	struct bch_extent_crc32	crc32;
	struct bch_extent_crc64	crc64;
	struct bch_extent_crc128 crc128;
};

/* ptr (doc/format.md §5.2.2) */
LE64_BITMASK(EXTENT_PTR_TYPE,		struct bch_extent_ptr, w,  0,  1);
LE64_BITMASK(EXTENT_PTR_CACHED,		struct bch_extent_ptr, w,  1,  2);
LE64_BITMASK(EXTENT_PTR_ERASURE_CODED,	struct bch_extent_ptr, w,  2,  3);
LE64_BITMASK(EXTENT_PTR_RESERVATION,	struct bch_extent_ptr, w,  3,  4);
LE64_BITMASK(EXTENT_PTR_OFFSET,		struct bch_extent_ptr, w,  4, 48);
LE64_BITMASK(EXTENT_PTR_DEV,		struct bch_extent_ptr, w, 48, 56);
LE64_BITMASK(EXTENT_PTR_GEN,		struct bch_extent_ptr, w, 56, 64);

/* crc32 */
LE64_BITMASK(CRC32_TYPE,		struct bch_extent_crc32, w,  0,  2);
LE64_BITMASK(CRC32_COMPRESSED_SIZE_M1,	struct bch_extent_crc32, w,  2,  9);
LE64_BITMASK(CRC32_UNCOMPRESSED_SIZE_M1, struct bch_extent_crc32, w, 9, 16);
LE64_BITMASK(CRC32_OFFSET,		struct bch_extent_crc32, w, 16, 23);
LE64_BITMASK(CRC32_CSUM_TYPE,		struct bch_extent_crc32, w, 24, 28);
LE64_BITMASK(CRC32_COMPRESSION_TYPE,	struct bch_extent_crc32, w, 28, 32);
LE64_BITMASK(CRC32_CSUM,		struct bch_extent_crc32, w, 32, 64);

/* crc64 (word 0) */
LE64_BITMASK(CRC64_TYPE,		struct bch_extent_crc64, w,  0,  3);
LE64_BITMASK(CRC64_COMPRESSED_SIZE_M1,	struct bch_extent_crc64, w,  3, 12);
LE64_BITMASK(CRC64_UNCOMPRESSED_SIZE_M1, struct bch_extent_crc64, w, 12, 21);
LE64_BITMASK(CRC64_OFFSET,		struct bch_extent_crc64, w, 21, 30);
LE64_BITMASK(CRC64_NONCE,		struct bch_extent_crc64, w, 30, 40);
LE64_BITMASK(CRC64_CSUM_TYPE,		struct bch_extent_crc64, w, 40, 44);
LE64_BITMASK(CRC64_COMPRESSION_TYPE,	struct bch_extent_crc64, w, 44, 48);
LE64_BITMASK(CRC64_CSUM_HI,		struct bch_extent_crc64, w, 48, 64);

/* crc128 (word 0) */
LE64_BITMASK(CRC128_TYPE,		struct bch_extent_crc128, w,  0,  4);
LE64_BITMASK(CRC128_COMPRESSED_SIZE_M1,	struct bch_extent_crc128, w,  4, 17);
LE64_BITMASK(CRC128_UNCOMPRESSED_SIZE_M1, struct bch_extent_crc128, w, 17, 30);
LE64_BITMASK(CRC128_OFFSET,		struct bch_extent_crc128, w, 30, 43);
LE64_BITMASK(CRC128_NONCE,		struct bch_extent_crc128, w, 43, 56);
LE64_BITMASK(CRC128_CSUM_TYPE,		struct bch_extent_crc128, w, 56, 60);
LE64_BITMASK(CRC128_COMPRESSION_TYPE,	struct bch_extent_crc128, w, 60, 64);

#define CRC32_SIZE_MAX		128U
#define CRC32_NONCE_MAX		0U
#define CRC32_CSUM_BYTES_MAX	4U
#define CRC64_SIZE_MAX		512U
#define CRC64_NONCE_MAX		1023U
#define CRC64_CSUM_BYTES_MAX	10U
#define CRC128_SIZE_MAX		8192U
#define CRC128_NONCE_MAX	8191U
#define CRC128_CSUM_BYTES_MAX	16U

/* Size limits of keys (u64s) */
#define BKEY_EXTENT_PTR_U64s_MAX	4	/* crc128 + ptr */
#define BKEY_EXTENT_VAL_U64s_MAX	(BKEY_EXTENT_PTR_U64s_MAX * (BCH_REPLICAS_MAX + 1)) /* 20 */
#define BKEY_EXTENT_U64s_MAX		(BKEY_U64s + BKEY_EXTENT_VAL_U64s_MAX)	/* 25 */
#define BKEY_BTREE_PTR_VAL_U64s_MAX	BCH_REPLICAS_MAX			/* 4 */
#define BKEY_BTREE_PTR_U64s_MAX		(BKEY_U64s + BKEY_BTREE_PTR_VAL_U64s_MAX) /* 9 */

/*
 * Kind of the entry at e (enum bch_extent_entry_type), or -1 if its first
 * word is zero or its lowest set bit is >= 4.
 */
static inline int bch_extent_entry_type(const union bch_extent_entry *e)
{
	uint64_t w = le64_to_cpu(e->first_word);
	int t;

	if (!w)
		return -1;
	t = __builtin_ctzll(w);
	return t < BCH_EXTENT_ENTRY_MAX ? t : -1;
}

/* u64s taken by an entry of the given kind (0 for invalid kinds) */
static inline unsigned bch_extent_entry_u64s_of(int type)
{
	switch (type) {
	case BCH_EXTENT_ENTRY_ptr:	return 1;
	case BCH_EXTENT_ENTRY_crc32:	return 1;
	case BCH_EXTENT_ENTRY_crc64:	return 2;
	case BCH_EXTENT_ENTRY_crc128:	return 3;
	default:			return 0;
	}
}

static inline bool bch_extent_entry_is_crc(int type)
{
	return type >= BCH_EXTENT_ENTRY_crc32 && type <= BCH_EXTENT_ENTRY_crc128;
}

/* A decoded pointer */
struct bch_extent_ptr_unpacked {
	uint64_t	offset;		/* device sector, 44 bits */
	uint8_t		dev;
	uint8_t		gen;
	bool		cached;
	bool		erasure_coded;
	bool		reservation;
};

static inline struct bch_extent_ptr_unpacked
bch_extent_ptr_unpack(const struct bch_extent_ptr *p)
{
	struct bch_extent_ptr_unpacked u;

	u.offset	= EXTENT_PTR_OFFSET(p);
	u.dev		= (uint8_t)EXTENT_PTR_DEV(p);
	u.gen		= (uint8_t)EXTENT_PTR_GEN(p);
	u.cached	= EXTENT_PTR_CACHED(p);
	u.erasure_coded	= EXTENT_PTR_ERASURE_CODED(p);
	u.reservation	= EXTENT_PTR_RESERVATION(p);
	return u;
}

static inline struct bch_extent_ptr
bch_extent_ptr_pack(const struct bch_extent_ptr_unpacked *u)
{
	struct bch_extent_ptr p = { 0 };

	SET_EXTENT_PTR_TYPE(&p, 1);
	SET_EXTENT_PTR_CACHED(&p, u->cached);
	SET_EXTENT_PTR_ERASURE_CODED(&p, u->erasure_coded);
	SET_EXTENT_PTR_RESERVATION(&p, u->reservation);
	SET_EXTENT_PTR_OFFSET(&p, u->offset);
	SET_EXTENT_PTR_DEV(&p, u->dev);
	SET_EXTENT_PTR_GEN(&p, u->gen);
	return p;
}

/*
 * A decoded crc entry ("descriptor").  Sizes are real sizes (bias removed).
 * csum_lo/csum_hi: checksum bytes 0..7 / 8..15 as LE integers:
 *   crc32:  lo = 32-bit csum, hi = 0
 *   crc64:  lo = word 1, hi = 16 bits from word 0
 *   crc128: lo = word 1, hi = word 2
 */
struct bch_extent_crc_unpacked {
	int		entry_type;	/* BCH_EXTENT_ENTRY_crc*, or -1 = none */
	uint8_t		csum_type;
	uint8_t		compression_type;
	uint32_t	compressed_size;
	uint32_t	uncompressed_size;
	uint32_t	offset;
	uint32_t	nonce;
	uint64_t	csum_lo;
	uint64_t	csum_hi;
};

/* Descriptor of a pointer with no crc entry in front of it */
static inline struct bch_extent_crc_unpacked bch_extent_crc_none(uint32_t key_size)
{
	struct bch_extent_crc_unpacked c;

	memset(&c, 0, sizeof(c));
	c.entry_type		= -1;
	c.compressed_size	= key_size;
	c.uncompressed_size	= key_size;
	return c;
}

/* Decode a crc entry; returns false if e is not a crc entry */
static inline bool bch_extent_crc_unpack(const union bch_extent_entry *e,
					 struct bch_extent_crc_unpacked *c)
{
	int t = bch_extent_entry_type(e);

	memset(c, 0, sizeof(*c));
	c->entry_type = t;

	switch (t) {
	case BCH_EXTENT_ENTRY_crc32:
		c->compressed_size   = (uint32_t)CRC32_COMPRESSED_SIZE_M1(&e->crc32) + 1;
		c->uncompressed_size = (uint32_t)CRC32_UNCOMPRESSED_SIZE_M1(&e->crc32) + 1;
		c->offset	     = (uint32_t)CRC32_OFFSET(&e->crc32);
		c->nonce	     = 0;
		c->csum_type	     = (uint8_t)CRC32_CSUM_TYPE(&e->crc32);
		c->compression_type  = (uint8_t)CRC32_COMPRESSION_TYPE(&e->crc32);
		c->csum_lo	     = CRC32_CSUM(&e->crc32);
		c->csum_hi	     = 0;
		return true;
	case BCH_EXTENT_ENTRY_crc64:
		c->compressed_size   = (uint32_t)CRC64_COMPRESSED_SIZE_M1(&e->crc64) + 1;
		c->uncompressed_size = (uint32_t)CRC64_UNCOMPRESSED_SIZE_M1(&e->crc64) + 1;
		c->offset	     = (uint32_t)CRC64_OFFSET(&e->crc64);
		c->nonce	     = (uint32_t)CRC64_NONCE(&e->crc64);
		c->csum_type	     = (uint8_t)CRC64_CSUM_TYPE(&e->crc64);
		c->compression_type  = (uint8_t)CRC64_COMPRESSION_TYPE(&e->crc64);
		c->csum_lo	     = le64_to_cpu(e->crc64.csum_lo);
		c->csum_hi	     = CRC64_CSUM_HI(&e->crc64);
		return true;
	case BCH_EXTENT_ENTRY_crc128:
		c->compressed_size   = (uint32_t)CRC128_COMPRESSED_SIZE_M1(&e->crc128) + 1;
		c->uncompressed_size = (uint32_t)CRC128_UNCOMPRESSED_SIZE_M1(&e->crc128) + 1;
		c->offset	     = (uint32_t)CRC128_OFFSET(&e->crc128);
		c->nonce	     = (uint32_t)CRC128_NONCE(&e->crc128);
		c->csum_type	     = (uint8_t)CRC128_CSUM_TYPE(&e->crc128);
		c->compression_type  = (uint8_t)CRC128_COMPRESSION_TYPE(&e->crc128);
		c->csum_lo	     = le64_to_cpu(e->crc128.csum_lo);
		c->csum_hi	     = le64_to_cpu(e->crc128.csum_hi);
		return true;
	default:
		return false;
	}
}

/*
 * Smallest crc entry kind that can hold c (doc/format.md §5.2.5), or -1 if none
 * can.  Uses the real checksum widths of bch_csum_type_bytes().
 */
static inline int bch_extent_crc_pick_type(const struct bch_extent_crc_unpacked *c)
{
	unsigned bytes = bch_csum_type_bytes(c->csum_type);

	if (bytes <= CRC32_CSUM_BYTES_MAX &&
	    c->uncompressed_size <= CRC32_SIZE_MAX &&
	    c->compressed_size <= CRC32_SIZE_MAX &&
	    c->offset < CRC32_SIZE_MAX &&
	    c->nonce <= CRC32_NONCE_MAX)
		return BCH_EXTENT_ENTRY_crc32;
	if (bytes <= CRC64_CSUM_BYTES_MAX &&
	    c->uncompressed_size <= CRC64_SIZE_MAX &&
	    c->compressed_size <= CRC64_SIZE_MAX &&
	    c->offset < CRC64_SIZE_MAX &&
	    c->nonce <= CRC64_NONCE_MAX)
		return BCH_EXTENT_ENTRY_crc64;
	if (bytes <= CRC128_CSUM_BYTES_MAX &&
	    c->uncompressed_size <= CRC128_SIZE_MAX &&
	    c->compressed_size <= CRC128_SIZE_MAX &&
	    c->offset < CRC128_SIZE_MAX &&
	    c->nonce <= CRC128_NONCE_MAX)
		return BCH_EXTENT_ENTRY_crc128;
	return -1;
}

/*
 * Encode c as an entry of kind `type` at e.  Returns the u64s written, or 0
 * if a value does not fit (sizes must be >= 1).  For crc32 only the low 32
 * bits of csum_lo are kept; for crc64 only 16 bits of csum_hi.
 */
static inline unsigned bch_extent_crc_pack(union bch_extent_entry *e, int type,
					   const struct bch_extent_crc_unpacked *c)
{
	if (!c->compressed_size || !c->uncompressed_size)
		return 0;

	switch (type) {
	case BCH_EXTENT_ENTRY_crc32:
		if (c->compressed_size > CRC32_SIZE_MAX ||
		    c->uncompressed_size > CRC32_SIZE_MAX ||
		    c->offset >= CRC32_SIZE_MAX || c->nonce ||
		    c->csum_lo > UINT32_MAX || c->csum_hi)
			return 0;
		e->crc32.w = 0;
		SET_CRC32_TYPE(&e->crc32, 1U << BCH_EXTENT_ENTRY_crc32);
		SET_CRC32_COMPRESSED_SIZE_M1(&e->crc32, c->compressed_size - 1);
		SET_CRC32_UNCOMPRESSED_SIZE_M1(&e->crc32, c->uncompressed_size - 1);
		SET_CRC32_OFFSET(&e->crc32, c->offset);
		SET_CRC32_CSUM_TYPE(&e->crc32, c->csum_type);
		SET_CRC32_COMPRESSION_TYPE(&e->crc32, c->compression_type);
		SET_CRC32_CSUM(&e->crc32, c->csum_lo);
		return 1;
	case BCH_EXTENT_ENTRY_crc64:
		if (c->compressed_size > CRC64_SIZE_MAX ||
		    c->uncompressed_size > CRC64_SIZE_MAX ||
		    c->offset >= CRC64_SIZE_MAX || c->nonce > CRC64_NONCE_MAX ||
		    c->csum_hi > 0xffff)
			return 0;
		e->crc64.w = 0;
		SET_CRC64_TYPE(&e->crc64, 1U << BCH_EXTENT_ENTRY_crc64);
		SET_CRC64_COMPRESSED_SIZE_M1(&e->crc64, c->compressed_size - 1);
		SET_CRC64_UNCOMPRESSED_SIZE_M1(&e->crc64, c->uncompressed_size - 1);
		SET_CRC64_OFFSET(&e->crc64, c->offset);
		SET_CRC64_NONCE(&e->crc64, c->nonce);
		SET_CRC64_CSUM_TYPE(&e->crc64, c->csum_type);
		SET_CRC64_COMPRESSION_TYPE(&e->crc64, c->compression_type);
		SET_CRC64_CSUM_HI(&e->crc64, c->csum_hi);
		e->crc64.csum_lo = cpu_to_le64(c->csum_lo);
		return 2;
	case BCH_EXTENT_ENTRY_crc128:
		if (c->compressed_size > CRC128_SIZE_MAX ||
		    c->uncompressed_size > CRC128_SIZE_MAX ||
		    c->offset >= CRC128_SIZE_MAX || c->nonce > CRC128_NONCE_MAX)
			return 0;
		e->crc128.w = 0;
		SET_CRC128_TYPE(&e->crc128, 1U << BCH_EXTENT_ENTRY_crc128);
		SET_CRC128_COMPRESSED_SIZE_M1(&e->crc128, c->compressed_size - 1);
		SET_CRC128_UNCOMPRESSED_SIZE_M1(&e->crc128, c->uncompressed_size - 1);
		SET_CRC128_OFFSET(&e->crc128, c->offset);
		SET_CRC128_NONCE(&e->crc128, c->nonce);
		SET_CRC128_CSUM_TYPE(&e->crc128, c->csum_type);
		SET_CRC128_COMPRESSION_TYPE(&e->crc128, c->compression_type);
		e->crc128.csum_lo = cpu_to_le64(c->csum_lo);
		e->crc128.csum_hi = cpu_to_le64(c->csum_hi);
		return 3;
	default:
		return 0;
	}
}

/* Reservation (type 130), exactly 8 bytes */
struct bch_reservation {
	le32		generation;		/* 0 */
	uint8_t		nr_replicas;		/* 4: 1..4 */
	uint8_t		pad[3];			/* 5 */
};
_Static_assert(sizeof(struct bch_reservation) == 8, "bch_reservation");

/*
 * Btree pointer (type 128 in interior nodes and btree_root entries): the
 * value is 1..BCH_REPLICAS_MAX struct bch_extent_ptr, no crc entries.
 */

/* --- inodes (btree 1) -------------------------------------------------- */

/*
 * Filesystem inode (type 128).  The fixed part is 14 bytes; the varint
 * fields start at byte 14.  sizeof() is 16 (rounded to 8), which is also
 * the minimum valid value size.
 */
struct bch_inode {
	le64		bi_hash_seed;		/*  0: raw random bytes */
	le32		bi_flags;		/*  8 */
	le16		bi_mode;		/* 12 */
	uint8_t		fields[];		/* 14 */
} __attribute__((aligned(8)));
_Static_assert(offsetof(struct bch_inode, fields) == 14, "bch_inode");
_Static_assert(sizeof(struct bch_inode) == 16, "bch_inode");

#define BCH_INODE_FIELDS_OFFSET	14

/* bi_flags bits */
enum {
	__BCH_INODE_SYNC		= 0,
	__BCH_INODE_IMMUTABLE		= 1,
	__BCH_INODE_APPEND		= 2,
	__BCH_INODE_NODUMP		= 3,
	__BCH_INODE_NOATIME		= 4,
	__BCH_INODE_I_SIZE_DIRTY	= 5,
	__BCH_INODE_I_SECTORS_DIRTY	= 6,
	__BCH_INODE_HAS_XATTRS		= 7,	/* defined, never set */
};

#define BCH_INODE_SYNC			(1U << __BCH_INODE_SYNC)
#define BCH_INODE_IMMUTABLE		(1U << __BCH_INODE_IMMUTABLE)
#define BCH_INODE_APPEND		(1U << __BCH_INODE_APPEND)
#define BCH_INODE_NODUMP		(1U << __BCH_INODE_NODUMP)
#define BCH_INODE_NOATIME		(1U << __BCH_INODE_NOATIME)
#define BCH_INODE_I_SIZE_DIRTY		(1U << __BCH_INODE_I_SIZE_DIRTY)
#define BCH_INODE_I_SECTORS_DIRTY	(1U << __BCH_INODE_I_SECTORS_DIRTY)
#define BCH_INODE_HAS_XATTRS		(1U << __BCH_INODE_HAS_XATTRS)

LE32_BITMASK(INODE_STR_HASH,	struct bch_inode, bi_flags, 20, 24);
LE32_BITMASK(INODE_NR_FIELDS,	struct bch_inode, bi_flags, 24, 32);

/*
 * The varint fields, in on-disk order, with their width in bits.
 * x(name, bits).  Option fields (checksum .. background_target) hold
 * option + 1, 0 meaning "inherit".
 */
#define BCH_INODE_FIELDS(x)			\
	x(bi_atime,			64)	\
	x(bi_ctime,			64)	\
	x(bi_mtime,			64)	\
	x(bi_otime,			64)	\
	x(bi_size,			64)	\
	x(bi_sectors,			64)	\
	x(bi_uid,			32)	\
	x(bi_gid,			32)	\
	x(bi_nlink,			32)	\
	x(bi_generation,		32)	\
	x(bi_dev,			32)	\
	x(bi_data_checksum,		8)	\
	x(bi_compression,		8)	\
	x(bi_project,			32)	\
	x(bi_background_compression,	8)	\
	x(bi_data_replicas,		8)	\
	x(bi_promote_target,		16)	\
	x(bi_foreground_target,		16)	\
	x(bi_background_target,		16)

/* Fields a new inode copies from its parent directory */
#define BCH_INODE_FIELDS_INHERIT(x)		\
	x(bi_data_checksum)			\
	x(bi_compression)			\
	x(bi_project)				\
	x(bi_background_compression)		\
	x(bi_data_replicas)			\
	x(bi_promote_target)			\
	x(bi_foreground_target)			\
	x(bi_background_target)

enum bch_inode_field {
#define x(n, b) BCH_INODE_FIELD_##n,
	BCH_INODE_FIELDS(x)
#undef x
	BCH_INODE_NR_FIELDS	/* 19 */
};

/*
 * Varint length from its first byte: the highest set bit is a marker whose
 * position selects 1, 2, 3, 4, 6, 8, 10 or 13 bytes.  0 for a zero byte.
 */
static inline unsigned bch_inode_varint_bytes(uint8_t first)
{
	static const uint8_t len[8] = { 13, 10, 8, 6, 4, 3, 2, 1 };

	if (!first)
		return 0;
	return len[31 - __builtin_clz(first)];
}

/* Inode generation (type 130), 8 bytes */
struct bch_inode_generation {
	le32		bi_generation;
	le32		pad;
};
_Static_assert(sizeof(struct bch_inode_generation) == 8, "inode generation");

/* Blockdev inode (type 129), 80 bytes; format only */
struct bch_inode_blockdev {
	le64		i_size;			/*  0 */
	le64		i_flags;		/*  8 */
	le64		i_ctime;		/* 16: seconds */
	le64		i_mtime;		/* 24 */
	struct bch_uuid	i_uuid;			/* 32 */
	uint8_t		i_label[32];		/* 48 */
};
_Static_assert(sizeof(struct bch_inode_blockdev) == 80, "blockdev inode");

LE64_BITMASK(CACHED_DEV, struct bch_inode_blockdev, i_flags, 0, 1);

/* --- dirents (btree 2) ------------------------------------------------- */

/*
 * Dirent (type 128).  The name starts at byte 9 but value sizes are
 * computed from sizeof() == 16: u64s = DIV_ROUND_UP(16 + name_len, 8).
 * Type 129 (hash whiteout) has an empty value.
 */
struct bch_dirent {
	le64		d_inum;			/* 0 */
	uint8_t		d_type;			/* 8 */
	uint8_t		d_name[];		/* 9 */
} __attribute__((aligned(8)));
_Static_assert(offsetof(struct bch_dirent, d_name) == 9, "bch_dirent");
_Static_assert(sizeof(struct bch_dirent) == 16, "bch_dirent");

static inline unsigned bch_dirent_val_u64s(size_t name_len)
{
	return (unsigned)((sizeof(struct bch_dirent) + name_len + 7) / 8);
}

/*
 * Name length of a dirent value of val_bytes bytes: the window
 * [0, val_bytes - 16) of d_name with trailing NULs stripped.
 */
static inline size_t bch_dirent_name_len(const struct bch_dirent *d,
					 size_t val_bytes)
{
	size_t n;

	if (val_bytes < sizeof(struct bch_dirent))
		return 0;
	n = val_bytes - sizeof(struct bch_dirent);
	while (n && !d->d_name[n - 1])
		n--;
	return n;
}

/* --- xattrs (btree 3) -------------------------------------------------- */

/*
 * Xattr (type 128): name then value, starting at byte 4.  Value sizes use
 * sizeof() == 8: u64s = DIV_ROUND_UP(8 + name_len + val_len, 8).
 */
struct bch_xattr {
	uint8_t		x_type;			/* 0: BCH_XATTR_INDEX_* */
	uint8_t		x_name_len;		/* 1 */
	le16		x_val_len;		/* 2 */
	uint8_t		x_name[];		/* 4: name, then value */
} __attribute__((aligned(8)));
_Static_assert(offsetof(struct bch_xattr, x_name) == 4, "bch_xattr");
_Static_assert(sizeof(struct bch_xattr) == 8, "bch_xattr");

static inline unsigned bch_xattr_val_u64s(size_t name_len, size_t val_len)
{
	return (unsigned)((sizeof(struct bch_xattr) + name_len + val_len + 7) / 8);
}

static inline const uint8_t *bch_xattr_val(const struct bch_xattr *x)
{
	return x->x_name + x->x_name_len;
}

/* --- alloc (btree 4) --------------------------------------------------- */

/*
 * Alloc (type 128): fields bitmap, gen, then each present field as a
 * 2-byte LE value in bit order.  Key: inode = device, offset = bucket.
 */
enum {
	BCH_ALLOC_FIELD_READ_TIME	= 0,
	BCH_ALLOC_FIELD_WRITE_TIME	= 1,
	BCH_ALLOC_FIELD_NR		= 2,
};
#define BCH_ALLOC_FIELD_BYTES	2

struct bch_alloc {
	uint8_t		fields;			/* 0 */
	uint8_t		gen;			/* 1 */
	uint8_t		data[];			/* 2 */
};
_Static_assert(sizeof(struct bch_alloc) == 2, "bch_alloc");

static inline unsigned bch_alloc_val_u64s(const struct bch_alloc *a)
{
	unsigned n = (unsigned)__builtin_popcount(a->fields);

	return (2 + BCH_ALLOC_FIELD_BYTES * n + 7) / 8;
}

/* --- quotas (btree 5) -------------------------------------------------- */

struct bch_quota_counter {
	le64		hardlimit;
	le64		softlimit;
};

/* Quota (type 128), 32 bytes; key: inode = quota type, offset = id */
struct bch_quota {
	struct bch_quota_counter c[Q_COUNTERS];
};
_Static_assert(sizeof(struct bch_quota) == 32, "bch_quota");

#endif
