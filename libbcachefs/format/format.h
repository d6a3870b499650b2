/*
 * format.h - on-disk layout of bcachefs, superblock version 9 (May 2018).
 *
 * Everything in this file describes bytes on a device.  All multi-byte
 * integers on disk are little-endian; the le16/le32/le64 typedefs mark such
 * fields, and the leNN_to_cpu()/cpu_to_leNN() helpers convert them (they are
 * no-ops on little-endian hosts).
 *
 * Bit-fields inside LE words are never C bit-fields: each one gets a pair of
 * generated accessors, NAME(p) and SET_NAME(p, v), from LE16/32/64_BITMASK().
 * Bit ranges are written as [lo, hi) - bit lo included, bit hi excluded -
 * and numbered from the least significant bit of the decoded integer.
 *
 * Sections:
 *   1. byte order, bit-field accessor generator
 *   2. constants, magic numbers, enums
 *   3. superblock: layout, fixed part, variable fields, flag accessors
 *   4. keys: bpos, bversion, bkey, packed keys, bkey_format
 *   5. values: extents (entries, decoders), inodes, dirents, xattrs, alloc,
 *      quota, cookie
 *   6. btree nodes and bsets
 *   7. journal
 *   8. variable-size structure helpers
 *
 * Spec references: chapters 10 (superblock), 20 (keys, nodes),
 * 30 (journal, alloc, replicas), 40 (values), 60 (clarifications).
 */
#ifndef BCH_FORMAT_H
#define BCH_FORMAT_H

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

/* Superblock placement (ch. 10 §0, §2) */
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

/* Checksum types (ch. 10 §3.1, ch. 40 §40.2.1) */
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
 * 3. Superblock
 * ====================================================================== */

/* A UUID: 16 raw bytes in the order of the canonical text form. */
struct bch_uuid {
	uint8_t		b[16];
};
_Static_assert(sizeof(struct bch_uuid) == 16, "bch_uuid");

/* 128-bit checksum / MAC: bytes 0..7 = lo, 8..15 = hi */
struct bch_csum {
	le64		lo;
	le64		hi;
};
_Static_assert(sizeof(struct bch_csum) == 16, "bch_csum");

/* Layout: at sector 7 and embedded at superblock offset 240 (512 bytes) */
struct bch_sb_layout {
	struct bch_uuid	magic;			/*   0 */
	uint8_t		layout_type;		/*  16 */
	uint8_t		sb_max_size_bits;	/*  17: log2(sectors per copy) */
	uint8_t		nr_superblocks;		/*  18 */
	uint8_t		pad[5];			/*  19 */
	le64		sb_offset[BCH_SB_LAYOUT_MAX_SB]; /* 24: sectors */
};
_Static_assert(sizeof(struct bch_sb_layout) == 512, "bch_sb_layout");
_Static_assert(offsetof(struct bch_sb_layout, sb_offset) == 24, "layout");

/* Superblock: 752-byte fixed part, then u64s words of variable fields */
struct bch_sb {
	struct bch_csum	csum;			/*   0: over [16, end) */
	le64		version;		/*  16 */
	struct bch_uuid	magic;			/*  24 */
	struct bch_uuid	uuid;			/*  40: internal */
	struct bch_uuid	user_uuid;		/*  56: external */
	uint8_t		label[BCH_SB_LABEL_SIZE]; /* 72 */
	le64		offset;			/* 104: sector of this copy */
	le64		seq;			/* 112 */
	le16		block_size;		/* 120: sectors */
	uint8_t		dev_idx;		/* 122 */
	uint8_t		nr_devices;		/* 123 */
	le32		u64s;			/* 124: size of fields area */
	le64		time_base_lo;		/* 128: ns since epoch */
	le32		time_base_hi;		/* 136 */
	le32		time_precision;		/* 140: ns */
	le64		flags[8];		/* 144 */
	le64		features[2];		/* 208 */
	le64		compat[2];		/* 224 */
	struct bch_sb_layout layout;		/* 240 */
	le64		_data[];		/* 752: variable fields */
};
_Static_assert(sizeof(struct bch_sb) == BCH_SB_FIXED_BYTES, "bch_sb");
_Static_assert(offsetof(struct bch_sb, version) == 16, "sb.version");
_Static_assert(offsetof(struct bch_sb, uuid) == 40, "sb.uuid");
_Static_assert(offsetof(struct bch_sb, user_uuid) == 56, "sb.user_uuid");
_Static_assert(offsetof(struct bch_sb, label) == 72, "sb.label");
_Static_assert(offsetof(struct bch_sb, offset) == 104, "sb.offset");
_Static_assert(offsetof(struct bch_sb, block_size) == 120, "sb.block_size");
_Static_assert(offsetof(struct bch_sb, dev_idx) == 122, "sb.dev_idx");
_Static_assert(offsetof(struct bch_sb, u64s) == 124, "sb.u64s");
_Static_assert(offsetof(struct bch_sb, time_base_lo) == 128, "sb.time");
_Static_assert(offsetof(struct bch_sb, time_precision) == 140, "sb.prec");
_Static_assert(offsetof(struct bch_sb, flags) == 144, "sb.flags");
_Static_assert(offsetof(struct bch_sb, features) == 208, "sb.features");
_Static_assert(offsetof(struct bch_sb, compat) == 224, "sb.compat");
_Static_assert(offsetof(struct bch_sb, layout) == 240, "sb.layout");
_Static_assert(offsetof(struct bch_sb, _data) == 752, "sb._data");

/* block_size is a whole u16, exposed as a "bit-field" for symmetry */
LE16_BITMASK(BCH_SB_BLOCK_SIZE,		struct bch_sb, block_size, 0, 16);

/* flags[0] */
LE64_BITMASK(BCH_SB_INITIALIZED,	struct bch_sb, flags[0],  0,  1);
LE64_BITMASK(BCH_SB_CLEAN,		struct bch_sb, flags[0],  1,  2);
LE64_BITMASK(BCH_SB_CSUM_TYPE,		struct bch_sb, flags[0],  2,  8);
LE64_BITMASK(BCH_SB_ERROR_ACTION,	struct bch_sb, flags[0],  8, 12);
LE64_BITMASK(BCH_SB_BTREE_NODE_SIZE,	struct bch_sb, flags[0], 12, 28);
LE64_BITMASK(BCH_SB_GC_RESERVE,		struct bch_sb, flags[0], 28, 33);
LE64_BITMASK(BCH_SB_ROOT_RESERVE,	struct bch_sb, flags[0], 33, 40);
LE64_BITMASK(BCH_SB_META_CSUM_TYPE,	struct bch_sb, flags[0], 40, 44);
LE64_BITMASK(BCH_SB_DATA_CSUM_TYPE,	struct bch_sb, flags[0], 44, 48);
LE64_BITMASK(BCH_SB_META_REPLICAS_WANT,	struct bch_sb, flags[0], 48, 52);
LE64_BITMASK(BCH_SB_DATA_REPLICAS_WANT,	struct bch_sb, flags[0], 52, 56);
LE64_BITMASK(BCH_SB_POSIX_ACL,		struct bch_sb, flags[0], 56, 57);
LE64_BITMASK(BCH_SB_USRQUOTA,		struct bch_sb, flags[0], 57, 58);
LE64_BITMASK(BCH_SB_GRPQUOTA,		struct bch_sb, flags[0], 58, 59);
LE64_BITMASK(BCH_SB_PRJQUOTA,		struct bch_sb, flags[0], 59, 60);
/* flags[0] bits 60-63 unused */

/* flags[1] */
LE64_BITMASK(BCH_SB_STR_HASH_TYPE,	struct bch_sb, flags[1],  0,  4);
LE64_BITMASK(BCH_SB_COMPRESSION_TYPE,	struct bch_sb, flags[1],  4,  8);
LE64_BITMASK(BCH_SB_INODE_32BIT,	struct bch_sb, flags[1],  8,  9);
LE64_BITMASK(BCH_SB_128_BIT_MACS,	struct bch_sb, flags[1],  9, 10);
LE64_BITMASK(BCH_SB_ENCRYPTION_TYPE,	struct bch_sb, flags[1], 10, 14);
LE64_BITMASK(BCH_SB_ENCODED_EXTENT_MAX_BITS, struct bch_sb, flags[1], 14, 20);
LE64_BITMASK(BCH_SB_META_REPLICAS_REQ,	struct bch_sb, flags[1], 20, 24);
LE64_BITMASK(BCH_SB_DATA_REPLICAS_REQ,	struct bch_sb, flags[1], 24, 28);
LE64_BITMASK(BCH_SB_PROMOTE_TARGET,	struct bch_sb, flags[1], 28, 40);
LE64_BITMASK(BCH_SB_FOREGROUND_TARGET,	struct bch_sb, flags[1], 40, 52);
LE64_BITMASK(BCH_SB_BACKGROUND_TARGET,	struct bch_sb, flags[1], 52, 64);

/* flags[2] */
LE64_BITMASK(BCH_SB_BACKGROUND_COMPRESSION_TYPE, struct bch_sb, flags[2], 0, 4);
/* flags[2] bits 4-63 and flags[3..7] unused */

/* Header of each variable field; u64s counts the header too */
struct bch_sb_field {
	le32		u64s;			/* 0 */
	le32		type;			/* 4 */
};
_Static_assert(sizeof(struct bch_sb_field) == 8, "bch_sb_field");

/* type 0: journal buckets of this device, in ring order */
struct bch_sb_field_journal {
	struct bch_sb_field field;
	le64		buckets[];		/* 8: nr = u64s - 1 */
};
_Static_assert(sizeof(struct bch_sb_field_journal) == 8, "journal field");

/* type 1: one 56-byte record per device slot */
struct bch_member {
	struct bch_uuid	uuid;			/*  0: zero = empty slot */
	le64		nbuckets;		/* 16 */
	le16		first_bucket;		/* 24 */
	le16		bucket_size;		/* 26: sectors */
	le32		pad;			/* 28 */
	le64		last_mount;		/* 32: seconds */
	le64		flags[2];		/* 40 */
};
_Static_assert(sizeof(struct bch_member) == 56, "bch_member");
_Static_assert(offsetof(struct bch_member, nbuckets) == 16, "member");
_Static_assert(offsetof(struct bch_member, bucket_size) == 26, "member");
_Static_assert(offsetof(struct bch_member, last_mount) == 32, "member");
_Static_assert(offsetof(struct bch_member, flags) == 40, "member");

LE64_BITMASK(BCH_MEMBER_STATE,		struct bch_member, flags[0],  0,  4);
/* bits 4-9 unused (formerly tier / has-data) */
LE64_BITMASK(BCH_MEMBER_REPLACEMENT,	struct bch_member, flags[0], 10, 14);
LE64_BITMASK(BCH_MEMBER_DISCARD,	struct bch_member, flags[0], 14, 15);
LE64_BITMASK(BCH_MEMBER_DATA_ALLOWED,	struct bch_member, flags[0], 15, 20);
LE64_BITMASK(BCH_MEMBER_GROUP,		struct bch_member, flags[0], 20, 28);
LE64_BITMASK(BCH_MEMBER_DURABILITY,	struct bch_member, flags[0], 28, 30);

/* DURABILITY holds durability + 1; 0 means the default (1) */
static inline unsigned bch_member_durability(const struct bch_member *m)
{
	unsigned d = (unsigned)BCH_MEMBER_DURABILITY(m);

	return d ? d - 1 : 1;
}

static inline bool bch_member_exists(const struct bch_member *m)
{
	static const struct bch_uuid zero;

	return memcmp(&m->uuid, &zero, sizeof(zero)) != 0;
}

struct bch_sb_field_members {
	struct bch_sb_field field;
	struct bch_member members[];		/* 8 */
};
_Static_assert(sizeof(struct bch_sb_field_members) == 8, "members field");

/* type 2: crypt, exactly 64 bytes */
struct bch_key {
	le64		key[4];
};
_Static_assert(sizeof(struct bch_key) == 32, "bch_key");

struct bch_encrypted_key {
	le64		magic;			/* 0: BCH_KEY_MAGIC if clear */
	struct bch_key	key;			/* 8 */
};
_Static_assert(sizeof(struct bch_encrypted_key) == 40, "bch_encrypted_key");

struct bch_sb_field_crypt {
	struct bch_sb_field field;		/*  0 */
	le64		flags;			/*  8 */
	le64		kdf_flags;		/* 16 */
	struct bch_encrypted_key key;		/* 24 */
};
_Static_assert(sizeof(struct bch_sb_field_crypt) == 64, "crypt field");
_Static_assert(offsetof(struct bch_sb_field_crypt, key) == 24, "crypt");

LE64_BITMASK(BCH_CRYPT_KDF_TYPE, struct bch_sb_field_crypt, flags, 0, 4);
/* log2 of the scrypt parameters */
LE64_BITMASK(BCH_KDF_SCRYPT_N,	struct bch_sb_field_crypt, kdf_flags,  0, 16);
LE64_BITMASK(BCH_KDF_SCRYPT_R,	struct bch_sb_field_crypt, kdf_flags, 16, 32);
LE64_BITMASK(BCH_KDF_SCRYPT_P,	struct bch_sb_field_crypt, kdf_flags, 32, 48);

static inline bool bch_key_is_encrypted(const struct bch_encrypted_key *k)
{
	return le64_to_cpu(k->magic) != BCH_KEY_MAGIC;
}

/*
 * type 3: replicas.  Entries are byte-packed back to back after the header
 * (no alignment): data_type, nr, devs[nr].  The list ends at the end of
 * the field or at the first entry with data_type 0.
 */
struct bch_replicas_entry {
	uint8_t		data_type;		/* 0 */
	uint8_t		nr;			/* 1 */
	uint8_t		devs[];			/* 2 */
};
_Static_assert(sizeof(struct bch_replicas_entry) == 2, "replicas entry");

struct bch_sb_field_replicas {
	struct bch_sb_field field;
	uint8_t		entries[];		/* 8: bch_replicas_entry list */
};
_Static_assert(sizeof(struct bch_sb_field_replicas) == 8, "replicas field");

static inline size_t bch_replicas_entry_bytes(const struct bch_replicas_entry *e)
{
	return 2 + (size_t)e->nr;
}

/* type 4: quota limits, exactly 80 bytes */
struct bch_sb_quota_counter {
	le32		timelimit;
	le32		warnlimit;
};

struct bch_sb_quota_type {
	le64		flags;				/* 0: unused */
	struct bch_sb_quota_counter c[Q_COUNTERS];	/* 8 */
};
_Static_assert(sizeof(struct bch_sb_quota_type) == 24, "quota type");

struct bch_sb_field_quota {
	struct bch_sb_field field;
	struct bch_sb_quota_type q[QTYP_NR];	/* 8 + 24*q */
};
_Static_assert(sizeof(struct bch_sb_field_quota) == 80, "quota field");

/* type 5: disk groups, 48 bytes each */
struct bch_disk_group {
	uint8_t		label[BCH_SB_LABEL_SIZE];	/*  0 */
	le64		flags[2];			/* 32 */
};
_Static_assert(sizeof(struct bch_disk_group) == 48, "bch_disk_group");

LE64_BITMASK(BCH_GROUP_DELETED,		struct bch_disk_group, flags[0], 0,  1);
LE64_BITMASK(BCH_GROUP_DATA_ALLOWED,	struct bch_disk_group, flags[0], 1,  6);
LE64_BITMASK(BCH_GROUP_PARENT,		struct bch_disk_group, flags[0], 6, 24);

struct bch_sb_field_disk_groups {
	struct bch_sb_field field;
	struct bch_disk_group entries[];	/* 8 */
};
_Static_assert(sizeof(struct bch_sb_field_disk_groups) == 8, "groups field");

/* --- superblock size and field iteration ------------------------------ */

/* Total bytes of a superblock copy: 752 + 8 * u64s */
static inline size_t bch_sb_bytes(const struct bch_sb *sb)
{
	return BCH_SB_FIXED_BYTES + (size_t)le32_to_cpu(sb->u64s) * 8;
}

static inline size_t bch_sb_field_bytes(const struct bch_sb_field *f)
{
	return (size_t)le32_to_cpu(f->u64s) * 8;
}

static inline struct bch_sb_field *bch_sb_fields_start(const struct bch_sb *sb)
{
	return (struct bch_sb_field *)(uintptr_t)sb->_data;
}

static inline struct bch_sb_field *bch_sb_fields_end(const struct bch_sb *sb)
{
	return (struct bch_sb_field *)
		((uintptr_t)sb + bch_sb_bytes(sb));
}

static inline struct bch_sb_field *bch_sb_field_next(const struct bch_sb_field *f)
{
	return (struct bch_sb_field *)((uintptr_t)f + bch_sb_field_bytes(f));
}

/*
 * Iterate over the variable fields.  Stops at the end of the area, and
 * also at a zero-sized or overrunning field (callers that validate should
 * check for that separately).
 */
#define for_each_sb_field(_f, _sb)					\
	for ((_f) = bch_sb_fields_start(_sb);				\
	     (char *)(_f) + sizeof(struct bch_sb_field) <=		\
		(char *)bch_sb_fields_end(_sb) &&			\
	     le32_to_cpu((_f)->u64s) != 0 &&				\
	     (char *)bch_sb_field_next(_f) <=				\
		(char *)bch_sb_fields_end(_sb);				\
	     (_f) = bch_sb_field_next(_f))

/* First field of the given type, or NULL */
static inline struct bch_sb_field *bch_sb_field_get(const struct bch_sb *sb,
						    unsigned type)
{
	struct bch_sb_field *f;

	for_each_sb_field(f, sb)
		if (le32_to_cpu(f->type) == type)
			return f;
	return NULL;
}

static inline size_t bch_sb_journal_nr(const struct bch_sb_field_journal *j)
{
	uint32_t u = le32_to_cpu(j->field.u64s);

	return u ? u - 1 : 0;
}

static inline size_t bch_sb_members_nr(const struct bch_sb_field_members *m)
{
	size_t b = bch_sb_field_bytes(&m->field);

	return b > 8 ? (b - 8) / sizeof(struct bch_member) : 0;
}

static inline size_t bch_sb_disk_groups_nr(const struct bch_sb_field_disk_groups *g)
{
	size_t b = bch_sb_field_bytes(&g->field);

	return b > 8 ? (b - 8) / sizeof(struct bch_disk_group) : 0;
}

/* le64 of the first 8 bytes of the internal uuid, in CPU order */
static inline uint64_t bch_sb_magic_base(const struct bch_sb *sb)
{
	return get_le64_unaligned(sb->uuid.b);
}

/* Values stored (as le64) in jset.magic / btree_node.magic */
static inline uint64_t bch_jset_magic(const struct bch_sb *sb)
{
	return bch_sb_magic_base(sb) ^ BCH_JSET_MAGIC_XOR;
}

static inline uint64_t bch_bset_magic(const struct bch_sb *sb)
{
	return bch_sb_magic_base(sb) ^ BCH_BSET_MAGIC_XOR;
}

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

/* ptr (ch. 40 §40.1.2) */
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
 * Smallest crc entry kind that can hold c (ch. 40 §40.1.4), or -1 if none
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

#endif /* BCH_FORMAT_H */
