// SPDX-License-Identifier: GPL-2.0
/*
 * Inode values: the variable-length field codec (doc/format.md §5.5.3), pack,
 * unpack, checks and printing.
 *
 * A field is 1..13 bytes; the position of the highest set bit of the first
 * byte selects the length and is cleared; the rest is the value, big-endian.
 */
#include "bkey/inode.h"

#include <string.h>

#include "util/errcode.h"
#include "util/util.h"

static const struct {
	uint8_t	bytes;
	uint8_t	bits;	/* an encoder uses the row for values of fewer bits */
} varint_rows[] = {
	{ 1, 7 }, { 2, 14 }, { 3, 21 }, { 4, 28 },
	{ 6, 43 }, { 8, 58 }, { 10, 73 }, { 13, 96 },
};

static unsigned bit_length(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

unsigned bch_inode_varint_encode(uint64_t v, uint8_t *out, size_t out_size)
{
	unsigned row, n, i, b = bit_length(v);

	for (row = 0; b >= varint_rows[row].bits; row++)
		;
	n = varint_rows[row].bytes;
	if (n > out_size)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned shift = (n - 1 - i) * 8;

		out[i] = shift < 64 ? (uint8_t)(v >> shift) : 0;
	}
	out[0] |= 0x80 >> row;
	return n;
}

/* Field length by the position of the highest set bit of its first byte. */
static const uint8_t varint_len[8] = { 13, 10, 8, 6, 4, 3, 2, 1 };

static inline uint64_t load_be64(const uint8_t *p)
{
	return __builtin_bswap64(get_le64_unaligned(p));
}

/*
 * Decode one field of at most @width bits at @p: its length, or -1 for a
 * zero first byte, a field running past @end or a value wider than @width
 * (the rejects of bch_inode_varint_decode() + the width check). Reads
 * 8 bytes at once when they are inside the value.
 */
static inline int field_decode(const uint8_t *p, const uint8_t *end, unsigned width,
			       uint64_t *v)
{
	unsigned first, hb, n, i;
	uint64_t lo, hi = 0;

	if (p >= end || !(first = *p))
		return -1;
	hb = 31 - __builtin_clz(first);
	n  = varint_len[hb];
	if ((size_t)(end - p) < n)
		return -1;
	if (n <= 8) {
		if (end - p >= 8) {
			lo = load_be64(p) >> (64 - 8 * n);
		} else {
			lo = 0;
			for (i = 0; i < n; i++)
				lo = (lo << 8) | p[i];
		}
		lo &= ((uint64_t)1 << (8 * (n - 1) + hb)) - 1;
	} else {
		lo = load_be64(p + n - 8);
		/* bits above the low 64: the marker byte's low bit + 1 byte, or 4 bytes */
		hi = n == 10 ? ((uint64_t)(p[0] & 1) << 8) | p[1]
			     : ((uint64_t)p[1] << 24) | ((uint64_t)p[2] << 16) |
			       ((uint64_t)p[3] << 8) | p[4];
	}
	if (hi || (width < 64 && lo >> width))
		return -1;
	*v = lo;
	return (int)n;
}

int bch_inode_varint_decode(const uint8_t *p, const uint8_t *end, uint64_t *v,
			    unsigned *bits)
{
	unsigned n, i, hi_bits = 0;
	uint64_t hi = 0, lo = 0;

	if (p >= end || !*p)
		return -1;
	n = bch_inode_varint_bytes(*p);
	if ((size_t)(end - p) < n)
		return -1;

	for (i = 0; i < n; i++) {
		uint8_t b = p[i];

		if (!i)
			b &= (uint8_t)~(1U << (31 - __builtin_clz(p[0])));

		hi = (hi << 8) | (lo >> 56);
		lo = (lo << 8) | b;
	}
	if (hi)
		hi_bits = bit_length(hi);
	*v = lo;
	*bits = hi ? 64 + hi_bits : bit_length(lo);
	return (int)n;
}

int bch_inode_unpack_val(const void *raw, size_t bytes, struct bch_inode_unpacked *out)
{
	const uint8_t *v = raw, *p, *end = v + bytes;
	unsigned nr, fieldnr = 0;
	uint64_t val;
	int n;

	memset(out, 0, sizeof(*out));
	if (bytes < sizeof(struct bch_inode))
		return -BCH_ERR_key_invalid;

	out->bi_hash_seed = get_le64_unaligned(v);
	out->bi_flags	  = get_le32_unaligned(v + 8);
	out->bi_mode	  = get_le16_unaligned(v + 12);
	nr = out->bi_flags >> 24;
	p = v + BCH_INODE_FIELDS_OFFSET;

#define x(name, width)							\
	if (fieldnr++ < nr) {						\
		n = field_decode(p, end, (width), &val);		\
		if (n < 0)						\
			return -BCH_ERR_key_invalid;			\
		out->name = (BCH_INODE_FIELD_T_##width)val;		\
		p += n;							\
	}
	BCH_INODE_FIELDS(x)
#undef x
	return 0;
}

/* Longest field that always fits in a field of @width bits (58/28/14/7 value bits). */
#define FIT_BYTES_64	8
#define FIT_BYTES_32	4
#define FIT_BYTES_16	2
#define FIT_BYTES_8	1

/*
 * What bch_inode_unpack_val() rejects, without storing every field: a
 * field is only decoded when its length allows a value wider than the
 * field. Returns 0 with the two option fields checked by the inode key
 * check in *@csum, *@compr, or -BCH_ERR_key_invalid.
 */
enum inode_field_nr {
#define x(name, width) INODE_FIELD_##name,
	BCH_INODE_FIELDS(x)
#undef x
};

static int inode_val_check(const uint8_t *v, size_t bytes, uint64_t *csum, uint64_t *compr)
{
	const uint8_t *p = v + BCH_INODE_FIELDS_OFFSET, *end = v + bytes;
	unsigned nr = get_le32_unaligned(v + 8) >> 24, fieldnr = 0, n;
	uint64_t val;

	*csum = *compr = 0;
#define x(name, width)							\
	if (fieldnr++ < nr) {						\
		if (p >= end || !*p)					\
			return -BCH_ERR_key_invalid;			\
		n = varint_len[31 - __builtin_clz(*p)];			\
		if ((size_t)(end - p) < n)				\
			return -BCH_ERR_key_invalid;			\
		if (n > FIT_BYTES_##width ||				\
		    INODE_FIELD_##name == INODE_FIELD_bi_data_checksum ||\
		    INODE_FIELD_##name == INODE_FIELD_bi_compression) {	\
			if (field_decode(p, end, (width), &val) < 0)	\
				return -BCH_ERR_key_invalid;		\
			if (INODE_FIELD_##name == INODE_FIELD_bi_data_checksum)\
				*csum = val;				\
			if (INODE_FIELD_##name == INODE_FIELD_bi_compression)\
				*compr = val;				\
		}							\
		p += n;							\
	}
	BCH_INODE_FIELDS(x)
#undef x
	return 0;
}

int bch_inode_unpack(const struct bkey_ref *k, struct bch_inode_unpacked *out)
{
	int ret = bch_inode_unpack_val(k->v, k->v ? k->v_bytes : 0, out);

	out->bi_inum = k->k.p.inode;
	return ret;
}

size_t bch_inode_pack(const struct bch_inode_unpacked *in, void *out)
{
	uint8_t tmp[BCH_INODE_VAL_BYTES_MAX];
	uint8_t *p = tmp + BCH_INODE_FIELDS_OFFSET, *last_end = p;
	uint8_t *end = tmp + sizeof(tmp);
	unsigned fieldnr = 0, nr = 0;
	uint32_t flags;
	size_t bytes;

	memset(tmp, 0, sizeof(tmp));
#define x(name, width)							\
	fieldnr++;							\
	p += bch_inode_varint_encode(in->name, p, end - p);		\
	if (in->name) {							\
		nr = fieldnr;						\
		last_end = p;						\
	}
	BCH_INODE_FIELDS(x)
#undef x
	/* drop trailing zero fields */
	memset(last_end, 0, end - last_end);

	flags = (in->bi_flags & 0x00ffffffU) | (nr << 24);
	put_le64_unaligned(tmp, in->bi_hash_seed);
	tmp[8]	= (uint8_t)flags;
	tmp[9]	= (uint8_t)(flags >> 8);
	tmp[10] = (uint8_t)(flags >> 16);
	tmp[11] = (uint8_t)(flags >> 24);
	tmp[12] = (uint8_t)in->bi_mode;
	tmp[13] = (uint8_t)(in->bi_mode >> 8);

	bytes = round_up((size_t)(last_end - tmp), 8);
	memcpy(out, tmp, bytes);
	return bytes;
}

/* ---- checks and printing ---- */

const char *bch_inode_invalid(const struct bkey_ref *k)
{
	uint64_t csum, compr;

	if (k->k.p.offset)
		return "nonzero offset";

	switch (k->k.type) {
	case BCH_INODE_FS:
		if (k->v_bytes < sizeof(struct bch_inode))
			return "incorrect value size";
		if (k->k.p.inode < BLOCKDEV_INODE_MAX)
			return "fs inode in blockdev range";
		if (((get_le32_unaligned((const uint8_t *)k->v + 8) >> 20) & 0xf) >= BCH_STR_HASH_NR)
			return "invalid str hash type";
		if (inode_val_check(k->v, k->v_bytes, &csum, &compr))
			return "invalid variable length fields";
		if (csum > BCH_CSUM_OPT_NR)
			return "invalid data checksum type";
		if (compr > BCH_COMPRESSION_OPT_NR)
			return "invalid data checksum type";	/* sic, 2018 */
		return NULL;
	case BCH_INODE_BLOCKDEV:
		if (k->v_bytes != sizeof(struct bch_inode_blockdev))
			return "incorrect value size";
		if (k->k.p.inode >= BLOCKDEV_INODE_MAX)
			return "blockdev inode in fs range";
		return NULL;
	case BCH_INODE_GENERATION:
		if (k->v_bytes != sizeof(struct bch_inode_generation))
			return "incorrect value size";
		return NULL;
	default:
		return "invalid type";
	}
}

void bch_inode_to_text(struct printbuf *out, const struct bkey_ref *k)
{
	struct bch_inode_unpacked u;

	if (k->k.type != BCH_INODE_FS)
		return;
	if (bch_inode_unpack(k, &u)) {
		pr_str(out, "(unpack error)");
		return;
	}
#define x(name, width)	pr_buf(out, #name ": %llu ", (unsigned long long)u.name);
	BCH_INODE_FIELDS(x)
#undef x
}

void bch_inode_to_json(struct json *j, const struct bkey_ref *k)
{
	struct bch_inode_unpacked u;

	if (k->k.type == BCH_INODE_GENERATION && k->v_bytes >= 4) {
		json_u64(j, "bi_generation", get_le32_unaligned(k->v));
		return;
	}
	if (k->k.type != BCH_INODE_FS)
		return;
	if (bch_inode_unpack(k, &u)) {
		json_str(j, "error", "unpack error");
		return;
	}
	json_u64(j, "bi_hash_seed", u.bi_hash_seed);
	json_u64(j, "bi_flags", u.bi_flags);
	json_u64(j, "bi_mode", u.bi_mode);
	json_u64(j, "bi_str_hash", bch_inode_str_hash(&u));
#define x(name, width)	json_u64(j, #name, u.name);
	BCH_INODE_FIELDS(x)
#undef x
}
