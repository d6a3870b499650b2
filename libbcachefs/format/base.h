/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Byte order and the bit-field accessor generator, constants and enums,
 * and the helpers of variable-size structures.
 * Part of the on-disk format; format/format.h includes every part.
 */
#ifndef BCH_FORMAT_BASE_H
#define BCH_FORMAT_BASE_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdbool.h>

/* ======================================================================
 * 1. Byte order
 * ====================================================================== */

typedef uint16_t le16;
typedef uint32_t le32;
typedef uint64_t le64;

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
	__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BCH_HOST_BIG_ENDIAN 1
#else
#define BCH_HOST_BIG_ENDIAN 0
#endif

static inline uint16_t le16_to_cpu(le16 v)
{
#if BCH_HOST_BIG_ENDIAN
	return __builtin_bswap16(v);
#else
	return v;
#endif
}

static inline uint32_t le32_to_cpu(le32 v)
{
#if BCH_HOST_BIG_ENDIAN
	return __builtin_bswap32(v);
#else
	return v;
#endif
}

static inline uint64_t le64_to_cpu(le64 v)
{
#if BCH_HOST_BIG_ENDIAN
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

static inline le16 cpu_to_le16(uint16_t v) { return le16_to_cpu(v); }
static inline le32 cpu_to_le32(uint32_t v) { return le32_to_cpu(v); }
static inline le64 cpu_to_le64(uint64_t v) { return le64_to_cpu(v); }

/* Read/write an LE integer at an arbitrary (possibly unaligned) address. */
static inline uint64_t get_le64_unaligned(const void *p)
{
	le64 v;
	memcpy(&v, p, sizeof(v));
	return le64_to_cpu(v);
}

static inline void put_le64_unaligned(void *p, uint64_t v)
{
	le64 w = cpu_to_le64(v);
	memcpy(p, &w, sizeof(w));
}

static inline uint32_t get_le32_unaligned(const void *p)
{
	le32 v;
	memcpy(&v, p, sizeof(v));
	return le32_to_cpu(v);
}

static inline uint16_t get_le16_unaligned(const void *p)
{
	le16 v;
	memcpy(&v, p, sizeof(v));
	return le16_to_cpu(v);
}

/* A mask of the low w bits, 1 <= w <= 64. */
#define BCH_LOW_BITS(w)		(~(uint64_t)0 >> (64 - (w)))

/*
 * LE_BITMASK generator.  For a bit range [lo, hi) of the LE word p->field:
 *
 *   uint64_t NAME(const T *p)          - extract the value
 *   void     SET_NAME(T *p, uint64_t)  - store it; excess bits are dropped
 *                                         silently (as the original does)
 *   NAME_OFFSET, NAME_BITS             - enum constants (lo, hi - lo)
 *
 * Use as a declaration followed by a semicolon.
 */
#define BCH_LE_BITMASK_(sz, name, type, field, lo, hi)			\
enum { name##_OFFSET = (lo), name##_BITS = (hi) - (lo) };		\
static inline uint64_t name(const type *p)				\
{									\
	return ((uint64_t)le##sz##_to_cpu(p->field) >> (lo)) &		\
		BCH_LOW_BITS((hi) - (lo));				\
}									\
static inline void SET_##name(type *p, uint64_t v)			\
{									\
	uint64_t w = le##sz##_to_cpu(p->field);				\
	uint64_t m = BCH_LOW_BITS((hi) - (lo)) << (lo);			\
									\
	w = (w & ~m) | ((v << (lo)) & m);				\
	p->field = cpu_to_le##sz((uint##sz##_t)w);			\
}									\
_Static_assert((lo) < (hi) && (hi) <= (sz), #name ": bad bit range")

#define LE16_BITMASK(name, type, field, lo, hi) \
	BCH_LE_BITMASK_(16, name, type, field, lo, hi)
#define LE32_BITMASK(name, type, field, lo, hi) \
	BCH_LE_BITMASK_(32, name, type, field, lo, hi)
#define LE64_BITMASK(name, type, field, lo, hi) \
	BCH_LE_BITMASK_(64, name, type, field, lo, hi)

/* Largest value a generated bit-field can hold. */
#define BCH_BITMASK_MAX(name)	BCH_LOW_BITS(name##_BITS)

/* ======================================================================
 * 2. Constants and enums
 * ====================================================================== */

#define BCH_SECTOR_SHIFT	9
#define BCH_SECTOR_SIZE		512

/* Superblock placement (doc/format.md §1, §2) */
#define BCH_SB_LAYOUT_SECTOR	7	/* copy of bch_sb_layout */
#define BCH_SB_SECTOR		8	/* default primary superblock */
#define BCH_SB_LAYOUT_MAX_SB	61	/* entries in layout.sb_offset[] */
#define BCH_SB_LAYOUT_TYPE	0	/* the only valid layout_type */
#define BCH_SB_FIXED_BYTES	752	/* sizeof(struct bch_sb) */
/*
 * No superblock is larger: the 2018 kernel kept one in a single run of
 * pages, 4 MiB at most (order 10), so it could neither read nor write a
 * bigger one (ours are under 64 KiB). The layout's sb_max_size_bits alone
 * would let one damaged copy make a reader allocate and read gigabytes.
 */
#define BCH_SB_BYTES_MAX	(4U << 20)
#define BCH_SB_LABEL_SIZE	32
#define BCH_SB_MEMBERS_MAX	64
#define BCH_MIN_NR_NBUCKETS	1024	/* nbuckets - first_bucket minimum */
#define BCH_JOURNAL_BUCKETS_MIN	20
#define BCH_REPLICAS_MAX	4
#define BCH_REPLICAS_ENTRY_DEVS_MAX 3	/* replicas entry nr must be < 4 */
#define BCH_BLOCK_SIZE_MAX	128	/* sectors, exclusive (option range) */

/* Superblock versions */
#define BCH_SB_VERSION_MIN		7
#define BCH_SB_VERSION_EXTENT_MAX	8	/* ENCODED_EXTENT_MAX, DATA_ALLOWED */
#define BCH_SB_VERSION_EXTENT_NONCE_V1	9	/* new extent nonce derivation */
#define BCH_SB_VERSION_MAX		9
#define BCH_SB_VERSION_CURRENT		9

/* Other structure versions */
#define BCH_JSET_VERSION	2	/* jset.version */
#define BCH_BSET_VERSION	3	/* bset.version */

/* Inodes */
#define BCACHEFS_ROOT_INO	4096
#define BLOCKDEV_INODE_MAX	4096	/* inodes below this are blockdev range */

#define BTREE_MAX_DEPTH		4

/*
 * Superblock magic: 16 bytes in disk order, text form
 * c68573f6-4e1a-45ca-8265-f57f48ba6d81.  Use as an initializer.
 */
#define BCH_SB_MAGIC_BYTES						\
	{ 0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca,		\
	  0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81 }

#define BCACHEFS_STATFS_MAGIC	0xca451a4eU

/* XORed with le64(first 8 bytes of the internal uuid) */
#define BCH_JSET_MAGIC_XOR	0x245235c1a3625032ULL
#define BCH_BSET_MAGIC_XOR	0x90135c78b99e07f5ULL

/* crypt field: plaintext key magic, ASCII "bch**key" read as LE u64 */
#define BCH_KEY_MAGIC		0x79656b2a2a686362ULL

/* Nonce domains (ChaCha20 IV word 3) */
#define BCH_NONCE_EXTENT	0x10000000U
#define BCH_NONCE_BTREE		0x20000000U
#define BCH_NONCE_JOURNAL	0x30000000U
#define BCH_NONCE_PRIO		0x40000000U	/* reserved, unused */
#define BCH_NONCE_POLY		0x80000000U	/* Poly1305 key derivation */

/* Superblock variable field types */
#define BCH_SB_FIELDS(x)	\
	x(journal,	0)	\
	x(members,	1)	\
	x(crypt,	2)	\
	x(replicas,	3)	\
	x(quota,	4)	\
	x(disk_groups,	5)

enum bch_sb_field_type {
#define x(n, v) BCH_SB_FIELD_##n = v,
	BCH_SB_FIELDS(x)
#undef x
	BCH_SB_FIELD_NR = 6
};

/* Checksum types (doc/format.md §7.1) */
enum bch_csum_type {
	BCH_CSUM_NONE			= 0,
	BCH_CSUM_CRC32C_NONZERO		= 1,
	BCH_CSUM_CRC64_NONZERO		= 2,
	BCH_CSUM_CHACHA20_POLY1305_80	= 3,
	BCH_CSUM_CHACHA20_POLY1305_128	= 4,
	BCH_CSUM_CRC32C			= 5,
	BCH_CSUM_CRC64			= 6,
	BCH_CSUM_NR			= 7,
};

/* Bytes of checksum output each type produces (0 for unknown types). */
static inline unsigned bch_csum_type_bytes(unsigned type)
{
	switch (type) {
	case BCH_CSUM_CRC32C_NONZERO:		return 4;
	case BCH_CSUM_CRC64_NONZERO:		return 8;
	case BCH_CSUM_CHACHA20_POLY1305_80:	return 10;
	case BCH_CSUM_CHACHA20_POLY1305_128:	return 16;
	case BCH_CSUM_CRC32C:			return 4;
	case BCH_CSUM_CRC64:			return 8;
	default:				return 0;
	}
}

static inline bool bch_csum_type_is_encryption(unsigned type)
{
	return type == BCH_CSUM_CHACHA20_POLY1305_80 ||
	       type == BCH_CSUM_CHACHA20_POLY1305_128;
}

/* Checksum *options* (META_CSUM_TYPE / DATA_CSUM_TYPE, bi_data_checksum-1) */
enum bch_csum_opt {
	BCH_CSUM_OPT_NONE	= 0,
	BCH_CSUM_OPT_CRC32C	= 1,
	BCH_CSUM_OPT_CRC64	= 2,
	BCH_CSUM_OPT_NR		= 3,
};

/* Compression types as stored in extent crc entries */
enum bch_compression_type {
	BCH_COMPRESSION_NONE	= 0,
	BCH_COMPRESSION_LZ4_OLD	= 1,	/* legacy, read only */
	BCH_COMPRESSION_GZIP	= 2,
	BCH_COMPRESSION_LZ4	= 3,
	BCH_COMPRESSION_ZSTD	= 4,
	BCH_COMPRESSION_NR	= 5,
};

/* Compression *options* (superblock flags, bi_compression - 1) */
#define BCH_COMPRESSION_OPTS(x)	\
	x(none,	0)		\
	x(lz4,	1)		\
	x(gzip,	2)		\
	x(zstd,	3)

enum bch_compression_opt {
#define x(n, v) BCH_COMPRESSION_OPT_##n = v,
	BCH_COMPRESSION_OPTS(x)
#undef x
	BCH_COMPRESSION_OPT_NR = 4
};

/* option -> extent compression type: none 0, lz4 3, gzip 2, zstd 4 */
static inline unsigned bch_compression_opt_to_type(unsigned opt)
{
	switch (opt) {
	case BCH_COMPRESSION_OPT_lz4:	return BCH_COMPRESSION_LZ4;
	case BCH_COMPRESSION_OPT_gzip:	return BCH_COMPRESSION_GZIP;
	case BCH_COMPRESSION_OPT_zstd:	return BCH_COMPRESSION_ZSTD;
	default:			return BCH_COMPRESSION_NONE;
	}
}

/* Incompatible feature bits, features[0] */
enum bch_sb_feature {
	BCH_FEATURE_LZ4		= 0,
	BCH_FEATURE_GZIP	= 1,
	BCH_FEATURE_ZSTD	= 2,
	BCH_FEATURE_NR		= 3,
};

/* Data types (replicas entries, member DATA_ALLOWED bits, usage arrays) */
#define BCH_DATA_TYPES(x)	\
	x(NONE,		0, "none")	\
	x(SB,		1, "sb")	\
	x(JOURNAL,	2, "journal")	\
	x(BTREE,	3, "btree")	\
	x(USER,		4, "data")	\
	x(CACHED,	5, "cached")

enum bch_data_type {
#define x(n, v, s) BCH_DATA_##n = v,
	BCH_DATA_TYPES(x)
#undef x
	BCH_DATA_NR = 6
};

/* Member states */
#define BCH_MEMBER_STATES(x)		\
	x(RW,		0, "readwrite")	\
	x(RO,		1, "readonly")	\
	x(FAILED,	2, "failed")	\
	x(SPARE,	3, "spare")

enum bch_member_state {
#define x(n, v, s) BCH_MEMBER_STATE_##n = v,
	BCH_MEMBER_STATES(x)
#undef x
	BCH_MEMBER_STATE_NR = 4
};

/* Member cache replacement policy */
enum bch_cache_replacement {
	CACHE_REPLACEMENT_LRU		= 0,
	CACHE_REPLACEMENT_FIFO		= 1,
	CACHE_REPLACEMENT_RANDOM	= 2,
	CACHE_REPLACEMENT_NR		= 3,
};

/* ERROR_ACTION */
enum bch_error_action {
	BCH_ON_ERROR_CONTINUE	= 0,	/* "continue" */
	BCH_ON_ERROR_RO		= 1,	/* "remount-ro" */
	BCH_ON_ERROR_PANIC	= 2,	/* "panic" */
	BCH_ON_ERROR_NR		= 3,
};

/* STR_HASH_TYPE (superblock option, inode INODE_STR_HASH) */
enum bch_str_hash_type {
	BCH_STR_HASH_CRC32C	= 0,
	BCH_STR_HASH_CRC64	= 1,
	BCH_STR_HASH_SIPHASH	= 2,
	BCH_STR_HASH_NR		= 3,
};

/* ENCRYPTION_TYPE */
enum bch_encryption_type {
	BCH_ENCRYPTION_NONE		= 0,
	BCH_ENCRYPTION_CHACHA20_POLY1305 = 1,
};

/* crypt KDF types */
enum bch_kdf_type {
	BCH_KDF_SCRYPT	= 0,
	BCH_KDF_NR	= 1,
};

/* Target encoding (superblock 12-bit targets; inodes store target + 1) */
#define BCH_TARGET_NONE		0
#define BCH_TARGET_DEV_START	1	/* 1..256: device index + 1 */
#define BCH_TARGET_GROUP_START	257	/* >= 257: disk group index + 257 */

/* Btree ids */
#define BCH_BTREE_IDS(x)		\
	x(EXTENTS,	0, "extents")	\
	x(INODES,	1, "inodes")	\
	x(DIRENTS,	2, "dirents")	\
	x(XATTRS,	3, "xattrs")	\
	x(ALLOC,	4, "alloc")	\
	x(QUOTAS,	5, "quotas")

enum btree_id {
#define x(n, v, s) BTREE_ID_##n = v,
	BCH_BTREE_IDS(x)
#undef x
	BTREE_ID_NR = 6
};

/*
 * Key-type namespace used for validation: a btree id for leaf keys, or
 * BKEY_TYPE_BTREE (6) for keys in interior nodes / btree_root entries.
 */
#define BKEY_TYPE_BTREE		BTREE_ID_NR

/* Generic key types, valid in every btree */
#define KEY_TYPE_DELETED		0	/* whiteout */
#define KEY_TYPE_DISCARD		1	/* whiteout / extent deletion */
#define KEY_TYPE_ERROR			2	/* data lost; empty value */
#define KEY_TYPE_COOKIE			3	/* 8-byte value */
#define KEY_TYPE_PERSISTENT_DISCARD	4	/* defined, rejected as invalid */
#define KEY_TYPE_GENERIC_NR		128	/* first per-btree type */

/* Per-btree value types */
enum {
	BCH_EXTENT		= 128,	/* extents btree */
	BCH_EXTENT_CACHED	= 129,
	BCH_RESERVATION		= 130,
};
#define BCH_BTREE_PTR		128	/* interior-node / root pointer keys */
enum {
	BCH_INODE_FS		= 128,	/* inodes btree */
	BCH_INODE_BLOCKDEV	= 129,
	BCH_INODE_GENERATION	= 130,
};
enum {
	BCH_DIRENT		= 128,	/* dirents btree */
	BCH_DIRENT_WHITEOUT	= 129,
};
enum {
	BCH_XATTR		= 128,	/* xattrs btree */
	BCH_XATTR_WHITEOUT	= 129,
};
enum {
	BCH_ALLOC		= 128,	/* alloc btree */
};
enum {
	BCH_QUOTA		= 128,	/* quotas btree */
};

/* Journal entry (jset_entry.type) types */
#define BCH_JSET_ENTRY_TYPES(x)	\
	x(btree_keys,	0)	\
	x(btree_root,	1)	\
	x(prio_ptrs,	2)	\
	x(blacklist,	3)	\
	x(blacklist_v2,	4)

enum bch_jset_entry_type {
#define x(n, v) BCH_JSET_ENTRY_##n = v,
	BCH_JSET_ENTRY_TYPES(x)
#undef x
	BCH_JSET_ENTRY_NR = 5
};

/* Quotas */
enum bch_quota_type {
	QTYP_USR	= 0,
	QTYP_GRP	= 1,
	QTYP_PRJ	= 2,
	QTYP_NR		= 3,
};

enum bch_quota_counter_idx {
	Q_SPC		= 0,	/* space, in sectors */
	Q_INO		= 1,	/* inode count */
	Q_COUNTERS	= 2,
};

/* Xattr namespaces (bch_xattr.x_type) */
#define BCH_XATTR_INDEX_USER			0
#define BCH_XATTR_INDEX_POSIX_ACL_ACCESS	1
#define BCH_XATTR_INDEX_POSIX_ACL_DEFAULT	2
#define BCH_XATTR_INDEX_TRUSTED			3
#define BCH_XATTR_INDEX_SECURITY		4
#define BCH_XATTR_INDEX_NR			5

/* Dirent d_type values: (mode >> 12) & 15, same numbers as <dirent.h> */
#define BCH_DT_UNKNOWN	0
#define BCH_DT_FIFO	1
#define BCH_DT_CHR	2
#define BCH_DT_DIR	4
#define BCH_DT_BLK	6
#define BCH_DT_REG	8
#define BCH_DT_LNK	10
#define BCH_DT_SOCK	12
#define BCH_DT_WHT	14

#define BCH_NAME_MAX	255	/* dirent name length limit */

/* ======================================================================
 * 8. Generic variable-size structure helpers
 *
 * For structures whose header is followed by u64s words of payload, where
 * u64s does NOT count the header: struct bch_sb, struct jset, struct bset,
 * struct jset_entry.  (bch_sb_field and bkeys count their header in u64s;
 * use bch_sb_field_bytes() / bkey_next() for those.)
 * ====================================================================== */

#define bch_le_to_cpu(x)			\
	_Generic((x),				\
		 uint8_t:  (uint64_t)(x),	\
		 uint16_t: le16_to_cpu((uint16_t)(x)),	\
		 uint32_t: le32_to_cpu((uint32_t)(x)),	\
		 uint64_t: le64_to_cpu((uint64_t)(x)))

#define vstruct_bytes(_s)						\
	(sizeof(*(_s)) + (size_t)bch_le_to_cpu((_s)->u64s) * sizeof(uint64_t))

#define vstruct_data(_s)	((void *)((_s) + 1))
#define vstruct_end(_s)		((void *)((char *)(_s) + vstruct_bytes(_s)))

/* Bytes rounded up to a block of `block_bytes` (a power of two or not) */
#define vstruct_bytes_rounded(_s, _block_bytes)				\
	((vstruct_bytes(_s) + (_block_bytes) - 1) / (_block_bytes) * (_block_bytes))

#endif
