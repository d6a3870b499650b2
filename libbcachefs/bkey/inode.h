/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inode values (doc/format.md §5.5): a 14-byte fixed part (hash seed, flags,
 * mode) followed by NR_FIELDS variable-length big-endian fields.
 */
#ifndef BCH_INODE_H
#define BCH_INODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "format/format.h"

struct json;
struct printbuf;

#define BCH_INODE_FIELD_T_8	uint8_t
#define BCH_INODE_FIELD_T_16	uint16_t
#define BCH_INODE_FIELD_T_32	uint32_t
#define BCH_INODE_FIELD_T_64	uint64_t

/* Largest packed value: 14 + 19 fields * 13 bytes, rounded up to 8. */
#define BCH_INODE_VAL_BYTES_MAX	264

struct bch_inode_unpacked {
	uint64_t	bi_inum;	/* from the key position */
	uint64_t	bi_hash_seed;	/* the 8 stored bytes read as le64 */
	uint32_t	bi_flags;	/* as stored; NR_FIELDS rewritten by pack */
	uint16_t	bi_mode;
#define x(name, bits) BCH_INODE_FIELD_T_##bits name;
	BCH_INODE_FIELDS(x)
#undef x
};

/*
 * Decode a type-128 inode key. Every field is bounds-checked: a field
 * running past the value, a zero first byte or a value wider than its
 * field is an error. Fields beyond NR_FIELDS are 0; extra fields ignored.
 * Returns 0 or -BCH_ERR_key_invalid.
 */
int bch_inode_unpack(const struct bkey_ref *k, struct bch_inode_unpacked *out);
/* The same from raw value bytes. */
int bch_inode_unpack_val(const void *v, size_t bytes, struct bch_inode_unpacked *out);

/*
 * Encode @in's value into @out: trailing zero fields dropped, NR_FIELDS
 * set, zero padding to 8 bytes. Returns the value size in bytes (a
 * multiple of 8, at most BCH_INODE_VAL_BYTES_MAX); writes only those.
 */
size_t bch_inode_pack(const struct bch_inode_unpacked *in, void *out);

/* One variable-length field; returns its length (1..13), 0 if @out_size too small. */
unsigned bch_inode_varint_encode(uint64_t v, uint8_t *out, size_t out_size);
/* Decode one field: length, or -1 (zero first byte / past @end / more than 64 bits in @v). */
int bch_inode_varint_decode(const uint8_t *p, const uint8_t *end, uint64_t *v, unsigned *bits);

/* i_nlink from the stored bias (dirs: +2, others: +1). */
static inline uint64_t bch_inode_nlink_get(const struct bch_inode_unpacked *u)
{
	return (uint64_t)u->bi_nlink + (((u->bi_mode >> 12) & 15) == BCH_DT_DIR ? 2 : 1);
}

static inline unsigned bch_inode_str_hash(const struct bch_inode_unpacked *u)
{
	return (u->bi_flags >> 20) & 0xf;
}

/* Nanoseconds since the epoch of a stored time (60: signed count of precision units). */
static inline int64_t bch_inode_time_to_ns(uint64_t stored, uint64_t time_base_lo,
					   uint32_t time_precision)
{
	return (int64_t)((uint64_t)(int64_t)stored * time_precision + time_base_lo);
}

static inline uint64_t bch_inode_ns_to_time(int64_t ns, uint64_t time_base_lo,
					    uint32_t time_precision)
{
	int64_t d = (int64_t)((uint64_t)ns - time_base_lo);

	return (uint64_t)(time_precision ? d / (int64_t)time_precision : d);
}

/* bi_dev in glibc makedev() encoding (60). */
static inline unsigned bch_inode_dev_major(uint32_t d)
{
	return (d >> 8) & 0xfff;
}

static inline unsigned bch_inode_dev_minor(uint32_t d)
{
	return (d & 0xff) | ((d >> 12) & 0xfff00);
}

/*
 * The fields a new inode takes from its parent directory (doc/format.md §5.5.6):
 * data checksum, compression, project, background compression, data
 * replicas and the three targets.
 */
static inline void bch_inode_inherit(struct bch_inode_unpacked *u,
				     const struct bch_inode_unpacked *parent)
{
	u->bi_data_checksum		= parent->bi_data_checksum;
	u->bi_compression		= parent->bi_compression;
	u->bi_project			= parent->bi_project;
	u->bi_background_compression	= parent->bi_background_compression;
	u->bi_data_replicas		= parent->bi_data_replicas;
	u->bi_promote_target		= parent->bi_promote_target;
	u->bi_foreground_target		= parent->bi_foreground_target;
	u->bi_background_target		= parent->bi_background_target;
}

/* Key checks of doc/format.md §5.5.4 (all three inode key types). Reason or NULL. */
const char *bch_inode_invalid(const struct bkey_ref *k);

/* `list` value text: "bi_atime: N ... bi_background_target: N " or "(unpack error)". */
void bch_inode_to_text(struct printbuf *out, const struct bkey_ref *k);
void bch_inode_to_json(struct json *j, const struct bkey_ref *k);

#endif
