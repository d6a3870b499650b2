/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The superblock: layout, fixed part, variable fields, flag accessors.
 * Part of the on-disk format; format/format.h includes every part.
 */
#ifndef BCH_FORMAT_SB_H
#define BCH_FORMAT_SB_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdbool.h>
#include "format/base.h"
#include "format/keys.h"

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

#endif
