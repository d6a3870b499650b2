// SPDX-License-Identifier: GPL-2.0
/*
 * Key headers: the 56-byte packing format, packed and unpacked key headers,
 * packed comparison (doc/format.md §3.1-§3.4).
 *
 * A packed header is key_u64s little-endian words read as one integer N.
 * Bits 0..23 of N are the three header bytes (u64s, format, type); the six
 * fields sit at the top of N, field 0 highest, each storing
 * (value - field_offset).
 */
#include "bkey/bkey.h"

#include <string.h>

#include "util/errcode.h"
#include "format/format.h"
#include "util/util.h"

#define BKEY_PACKED_WORDS_MAX	BKEY_U64s	/* 24 + 288 bits fit in 5 words */

static const unsigned field_width[BKEY_NR_FIELDS_H] = BKEY_FIELD_WIDTHS;

const struct bkey_format_h bkey_format_identity = {
	.key_u64s	= BKEY_U64s,
	.nr_fields	= BKEY_NR_FIELDS_H,
	.bits		= BKEY_FIELD_WIDTHS,
};

static uint64_t low_bits(unsigned bits)
{
	return bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
}

/* ---- successor ---- */

struct bpos_h bpos_successor(unsigned btree_id, struct bpos_h p)
{
	switch (btree_id) {
	case BTREE_ID_EXTENTS:
		return p;
	case BTREE_ID_INODES:
		p.inode++;
		p.offset = 0;
		return p;
	default:
		if (!++p.offset)
			p.inode++;
		return p;
	}
}

/* ---- formats ---- */

static unsigned format_total_bits(const struct bkey_format_h *f)
{
	unsigned i, bits = KEY_PACKED_BITS_START;

	for (i = 0; i < BKEY_NR_FIELDS_H; i++)
		bits += f->bits[i];
	return bits;
}

bool bkey_format_valid(const struct bkey_format_h *f, struct printbuf *err)
{
	unsigned i;

	if (f->nr_fields != BKEY_NR_FIELDS_H) {
		if (err)
			pr_buf(err, "invalid bkey format: incorrect number of fields (%u, want %u)",
			       f->nr_fields, BKEY_NR_FIELDS_H);
		return false;
	}

	for (i = 0; i < BKEY_NR_FIELDS_H; i++) {
		if (f->bits[i] > 64) {
			if (err)
				pr_buf(err, "invalid bkey format: field too large (field %u: %u bits)",
				       i, f->bits[i]);
			return false;
		}
		if (f->offset[i] &&
		    (f->bits[i] == 64 ||
		     f->offset[i] + low_bits(f->bits[i]) < f->offset[i])) {
			if (err)
				pr_buf(err, "invalid bkey format: offset + bits overflow (field %u: offset %llu, %u bits)",
				       i, (unsigned long long)f->offset[i], f->bits[i]);
			return false;
		}
	}

	if (f->key_u64s != DIV_ROUND_UP(format_total_bits(f), 64)) {
		if (err)
			pr_buf(err, "invalid bkey format: incorrect key_u64s (%u, fields need %u)",
			       f->key_u64s, DIV_ROUND_UP(format_total_bits(f), 64));
		return false;
	}
	return true;
}

int bkey_format_decode(const void *disk, struct bkey_format_h *f, struct printbuf *err)
{
	const struct bkey_format *d = disk;
	unsigned i;

	memset(f, 0, sizeof(*f));
	f->key_u64s	= d->key_u64s;
	f->nr_fields	= d->nr_fields;
	for (i = 0; i < BKEY_NR_FIELDS_H; i++) {
		f->bits[i]	= d->bits_per_field[i];
		f->offset[i]	= le64_to_cpu(d->field_offset[i]);
	}

	return bkey_format_valid(f, err) ? 0 : -BCH_ERR_btree_node_invalid;
}

void bkey_format_encode(const struct bkey_format_h *f, void *disk)
{
	struct bkey_format d;
	unsigned i;

	memset(&d, 0, sizeof(d));
	d.key_u64s	= f->key_u64s;
	d.nr_fields	= f->nr_fields;
	for (i = 0; i < BKEY_NR_FIELDS_H; i++) {
		d.bits_per_field[i] = f->bits[i];
		d.field_offset[i]   = cpu_to_le64(f->offset[i]);
	}
	memcpy(disk, &d, sizeof(d));
}

/* ---- bit access inside the packed words ---- */

/* Bits [pos, pos + bits) of the integer formed by words w[] (LSB first). */
static uint64_t get_bits(const uint64_t *w, unsigned pos, unsigned bits)
{
	unsigned idx = pos / 64, sh = pos % 64;
	uint64_t v;

	if (!bits)
		return 0;
	v = w[idx] >> sh;
	if (sh + bits > 64)
		v |= w[idx + 1] << (64 - sh);
	return v & low_bits(bits);
}

static void set_bits(uint64_t *w, unsigned pos, unsigned bits, uint64_t v)
{
	unsigned idx = pos / 64, sh = pos % 64;

	if (!bits)
		return;
	v &= low_bits(bits);
	w[idx] |= v << sh;
	if (sh + bits > 64)
		w[idx + 1] |= v >> (64 - sh);
}

static void words_load(uint64_t *w, const void *p, unsigned nr)
{
	unsigned i;

	for (i = 0; i < nr; i++)
		w[i] = get_le64_unaligned((const uint8_t *)p + i * 8);
}

static void words_store(void *p, const uint64_t *w, unsigned nr)
{
	unsigned i;

	for (i = 0; i < nr; i++)
		put_le64_unaligned((uint8_t *)p + i * 8, w[i]);
}

static void bkey_h_get_fields(const struct bkey_h *k, uint64_t v[BKEY_NR_FIELDS_H])
{
	v[BKEY_FIELD_INODE]	 = k->p.inode;
	v[BKEY_FIELD_OFFSET]	 = k->p.offset;
	v[BKEY_FIELD_SNAPSHOT]	 = k->p.snapshot;
	v[BKEY_FIELD_SIZE]	 = k->size;
	v[BKEY_FIELD_VERSION_HI] = k->version_hi;
	v[BKEY_FIELD_VERSION_LO] = k->version_lo;
}

static void bkey_h_set_fields(struct bkey_h *k, const uint64_t v[BKEY_NR_FIELDS_H])
{
	k->p.inode	= v[BKEY_FIELD_INODE];
	k->p.offset	= v[BKEY_FIELD_OFFSET];
	k->p.snapshot	= (uint32_t)v[BKEY_FIELD_SNAPSHOT];
	k->size		= (uint32_t)v[BKEY_FIELD_SIZE];
	k->version_hi	= (uint32_t)v[BKEY_FIELD_VERSION_HI];
	k->version_lo	= v[BKEY_FIELD_VERSION_LO];
}

/* ---- unpacked 40-byte header ---- */

void bkey_h_to_disk(const struct bkey_h *k, void *out40)
{
	struct bkey d;

	memset(&d, 0, sizeof(d));
	d.u64s		= k->u64s;
	d.fmt		= KEY_FORMAT_CURRENT | (k->needs_whiteout ? BKEY_FMT_NEEDS_WHITEOUT : 0);
	d.type		= k->type;
	d.version.lo	= cpu_to_le64(k->version_lo);
	d.version.hi	= cpu_to_le32(k->version_hi);
	d.size		= cpu_to_le32(k->size);
	d.p.snapshot	= cpu_to_le32(k->p.snapshot);
	d.p.offset	= cpu_to_le64(k->p.offset);
	d.p.inode	= cpu_to_le64(k->p.inode);
	memcpy(out40, &d, sizeof(d));
}

void bkey_h_from_disk(const void *in40, struct bkey_h *k)
{
	struct bkey d;

	memcpy(&d, in40, sizeof(d));
	memset(k, 0, sizeof(*k));
	k->u64s		  = d.u64s;
	k->needs_whiteout = (d.fmt & BKEY_FMT_NEEDS_WHITEOUT) != 0;
	k->type		  = d.type;
	k->version_lo	  = le64_to_cpu(d.version.lo);
	k->version_hi	  = le32_to_cpu(d.version.hi);
	k->size		  = le32_to_cpu(d.size);
	k->p.snapshot	  = le32_to_cpu(d.p.snapshot);
	k->p.offset	  = le64_to_cpu(d.p.offset);
	k->p.inode	  = le64_to_cpu(d.p.inode);
}

/* ---- packed keys ---- */

size_t bkey_packed_bytes(const void *p, size_t avail)
{
	return avail < 1 ? 0 : (size_t)((const uint8_t *)p)[0] * 8;
}

/* Decode the fields of a packed header; false if one overflows its width. */
static bool unpack_fields(const struct bkey_format_h *f, const uint64_t *w,
			  uint64_t v[BKEY_NR_FIELDS_H], unsigned *bad_field)
{
	unsigned i, pos = f->key_u64s * 64;

	for (i = 0; i < BKEY_NR_FIELDS_H; i++) {
		pos -= f->bits[i];
		v[i] = get_bits(w, pos, f->bits[i]) + f->offset[i];
		if (field_width[i] < 64 && v[i] > low_bits(field_width[i])) {
			*bad_field = i;
			return false;
		}
	}
	return true;
}

static int unpack_packed(const struct bkey_format_h *f, const uint8_t *p,
			 struct bkey_ref *out, struct printbuf *err)
{
	uint64_t w[BKEY_PACKED_WORDS_MAX], v[BKEY_NR_FIELDS_H];
	unsigned u64s = p[0], bad;

	if (!f || f->key_u64s < 1 || f->key_u64s > BKEY_PACKED_WORDS_MAX ||
	    format_total_bits(f) > f->key_u64s * 64u) {
		if (err)
			pr_str(err, "packed key but the node has no usable format");
		return -BCH_ERR_key_invalid;
	}
	if (u64s < f->key_u64s) {
		if (err)
			pr_buf(err, "u64s too small (packed key of %u u64s, format needs %u)",
			       u64s, f->key_u64s);
		return -BCH_ERR_key_invalid;
	}
	if (BKEY_U64s + u64s - f->key_u64s > BKEY_U64s_MAX) {
		if (err)
			pr_buf(err, "packed key of %u u64s too big to unpack", u64s);
		return -BCH_ERR_key_invalid;
	}

	memset(w, 0, sizeof(w));
	words_load(w, p, f->key_u64s);
	if (!unpack_fields(f, w, v, &bad)) {
		if (err)
			pr_buf(err, "packed field %u (value %llu) too wide for an unpacked key",
			       bad, (unsigned long long)v[bad]);
		return -BCH_ERR_key_invalid;
	}

	bkey_h_set_fields(&out->k, v);
	out->k.u64s	= (uint8_t)(BKEY_U64s + u64s - f->key_u64s);
	out->v		= p + f->key_u64s * 8;
	out->v_bytes	= (u64s - f->key_u64s) * 8;
	return 0;
}

int bkey_unpack(const struct bkey_format_h *f, const void *p, size_t avail,
		struct bkey_ref *out, struct printbuf *err)
{
	const uint8_t *b = p;
	unsigned u64s, fmt;
	int ret;

	memset(out, 0, sizeof(*out));
	if (avail < 8) {
		if (err)
			pr_buf(err, "key extends past end of bset (%zu bytes left)", avail);
		return -BCH_ERR_key_invalid;
	}
	u64s = b[0];
	fmt  = b[1] & BKEY_FMT_MASK;
	if (!u64s) {
		if (err)
			pr_str(err, "key with u64s 0");
		return -BCH_ERR_key_invalid;
	}
	if ((size_t)u64s * 8 > avail) {
		if (err)
			pr_buf(err, "key extends past end of bset (u64s %u, %zu bytes left)",
			       u64s, avail);
		return -BCH_ERR_key_invalid;
	}
	if (fmt > KEY_FORMAT_CURRENT) {
		if (err)
			pr_buf(err, "invalid bkey format %u", fmt);
		return -BCH_ERR_key_invalid;
	}

	if (fmt == KEY_FORMAT_CURRENT) {
		if (u64s < BKEY_U64s) {
			if (err)
				pr_buf(err, "u64s too small (unpacked key of %u u64s)", u64s);
			return -BCH_ERR_key_invalid;
		}
		bkey_h_from_disk(b, &out->k);
		out->v	     = b + BKEY_U64s * 8;
		out->v_bytes = (u64s - BKEY_U64s) * 8;
	} else {
		ret = unpack_packed(f, b, out, err);
		if (ret)
			return ret;
	}

	out->k.type	      = b[2];
	out->k.needs_whiteout = (b[1] & BKEY_FMT_NEEDS_WHITEOUT) != 0;
	return 0;
}

void bkey_unpacker_init(struct bkey_unpacker *u, const struct bkey_format_h *f)
{
	unsigned i, pos;

	memset(u, 0, sizeof(*u));
	u->f = f;
	if (!f || f->key_u64s < 1 || f->key_u64s > BKEY_PACKED_WORDS_MAX ||
	    format_total_bits(f) > f->key_u64s * 64u)
		return;
	for (i = 0; i < BKEY_NR_FIELDS_H; i++)
		if (f->bits[i] > 64)
			return;

	u->usable   = true;
	u->key_u64s = f->key_u64s;
	pos = f->key_u64s * 64;
	for (i = 0; i < BKEY_NR_FIELDS_H; i++) {
		pos -= f->bits[i];
		u->field[i].idx	   = (uint8_t)(pos / 64);
		u->field[i].sh	   = (uint8_t)(pos % 64);
		u->field[i].two	   = f->bits[i] && pos % 64 + f->bits[i] > 64;
		u->field[i].mask   = f->bits[i] ? low_bits(f->bits[i]) : 0;
		u->field[i].offset = f->offset[i];
		u->field[i].max	   = field_width[i] < 64 ? low_bits(field_width[i]) : ~0ULL;
	}
}

int bkey_unpack_prepared(const struct bkey_unpacker *u, const void *p, size_t avail,
			 struct bkey_ref *out, struct printbuf *err)
{
	const uint8_t *b = p;
	unsigned u64s, fmt, i;

	if (avail < 8)
		goto slow;
	u64s = b[0];
	fmt  = b[1] & BKEY_FMT_MASK;
	if (!u64s || (size_t)u64s * 8 > avail || fmt > KEY_FORMAT_CURRENT)
		goto slow;

	memset(out, 0, sizeof(*out));
	if (fmt == KEY_FORMAT_CURRENT) {
		if (u64s < BKEY_U64s)
			goto slow;
		bkey_h_from_disk(b, &out->k);
		out->v	     = b + BKEY_U64s * 8;
		out->v_bytes = (u64s - BKEY_U64s) * 8;
	} else {
		uint64_t w[BKEY_PACKED_WORDS_MAX + 2], v[BKEY_NR_FIELDS_H];

		if (!u->usable || u64s < u->key_u64s ||
		    BKEY_U64s + u64s - u->key_u64s > BKEY_U64s_MAX)
			goto slow;
		for (i = 0; i < u->key_u64s; i++)
			w[i] = get_le64_unaligned(b + i * 8);
		w[u->key_u64s] = w[u->key_u64s + 1] = 0;
		for (i = 0; i < BKEY_NR_FIELDS_H; i++) {
			uint64_t x = w[u->field[i].idx] >> u->field[i].sh;

			if (u->field[i].two)
				x |= w[u->field[i].idx + 1] << (64 - u->field[i].sh);
			v[i] = (x & u->field[i].mask) + u->field[i].offset;
		}
		/* the 64-bit fields (max ~0) cannot overflow */
		if (v[BKEY_FIELD_SNAPSHOT] > u->field[BKEY_FIELD_SNAPSHOT].max ||
		    v[BKEY_FIELD_SIZE] > u->field[BKEY_FIELD_SIZE].max ||
		    v[BKEY_FIELD_VERSION_HI] > u->field[BKEY_FIELD_VERSION_HI].max)
			goto slow;
		bkey_h_set_fields(&out->k, v);
		out->k.u64s  = (uint8_t)(BKEY_U64s + u64s - u->key_u64s);
		out->v	     = b + u->key_u64s * 8;
		out->v_bytes = (u64s - u->key_u64s) * 8;
	}
	out->k.type	      = b[2];
	out->k.needs_whiteout = (b[1] & BKEY_FMT_NEEDS_WHITEOUT) != 0;
	return 0;
slow:
	return bkey_unpack(u->f, p, avail, out, err);
}

bool bkey_pack(const struct bkey_format_h *f, const struct bkey_h *k,
	       unsigned val_u64s, void *out)
{
	uint64_t w[BKEY_PACKED_WORDS_MAX], v[BKEY_NR_FIELDS_H];
	unsigned i, pos;

	if (f->key_u64s < 1 || f->key_u64s > BKEY_PACKED_WORDS_MAX ||
	    format_total_bits(f) > f->key_u64s * 64u ||
	    f->key_u64s + val_u64s > BKEY_U64s_MAX)
		return false;

	bkey_h_get_fields(k, v);
	for (i = 0; i < BKEY_NR_FIELDS_H; i++) {
		if (v[i] < f->offset[i])
			return false;
		if (f->bits[i] > 64 ||
		    (f->bits[i] < 64 && v[i] - f->offset[i] > low_bits(f->bits[i])))
			return false;
	}
	/* the start offset must stay representable when the front is cut */
	if (k->p.offset - k->size < f->offset[BKEY_FIELD_OFFSET])
		return false;

	memset(w, 0, sizeof(w));
	pos = f->key_u64s * 64;
	for (i = 0; i < BKEY_NR_FIELDS_H; i++) {
		pos -= f->bits[i];
		set_bits(w, pos, f->bits[i], v[i] - f->offset[i]);
	}
	w[0] |= (uint64_t)(f->key_u64s + val_u64s);
	w[0] |= (uint64_t)(KEY_FORMAT_LOCAL_BTREE |
			   (k->needs_whiteout ? BKEY_FMT_NEEDS_WHITEOUT : 0)) << 8;
	w[0] |= (uint64_t)k->type << 16;
	words_store(out, w, f->key_u64s);
	return true;
}

int bkey_packed_cmp(const struct bkey_format_h *f, const void *a, const void *b)
{
	uint64_t wa[BKEY_PACKED_WORDS_MAX], wb[BKEY_PACKED_WORDS_MAX];
	unsigned nr = f->key_u64s, left, idx;

	if (nr < 1 || nr > BKEY_PACKED_WORDS_MAX)
		return 0;
	left = f->bits[0] + f->bits[1] + f->bits[2];
	if (left > nr * 64u - KEY_PACKED_BITS_START)
		left = nr * 64u - KEY_PACKED_BITS_START;

	words_load(wa, a, nr);
	words_load(wb, b, nr);
	for (idx = nr; left && idx--; ) {
		unsigned take = left < 64 ? left : 64;
		uint64_t x = take == 64 ? wa[idx] : wa[idx] >> (64 - take);
		uint64_t y = take == 64 ? wb[idx] : wb[idx] >> (64 - take);

		if (x != y)
			return x < y ? -1 : 1;
		left -= take;
	}
	return 0;
}
