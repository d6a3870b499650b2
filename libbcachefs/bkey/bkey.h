/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keys in host order. On disk a key is either unpacked (40-byte header,
 * doc/format.md §3.2) or packed with its node's format (doc/format.md §3.4); the core
 * works on the host-order form below and keeps values as their on-disk
 * bytes (decoded with the accessors of format.h by each value's module).
 */
#ifndef BCH_BKEY_H
#define BCH_BKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct printbuf;

#define BKEY_U64S_UNPACKED	5	/* header u64s of an unpacked key */
#define BKEY_NR_FIELDS_H	6	/* inode, offset, snapshot, size, version_hi, version_lo */

/*
 * A position: compares as the 160-bit integer inode:offset:snapshot.
 * 20 bytes, 4-aligned: no tail padding, so that a key (struct bkey_h) packs
 * into 40 bytes (a node's key list is a reader's memory: btree/bulk.c).
 */
struct bpos_h {
	uint64_t	inode;
	uint64_t	offset;
	uint32_t	snapshot;
} __attribute__((packed, aligned(4)));

#define POS_H(i, o)	((struct bpos_h) { .inode = (i), .offset = (o), .snapshot = 0 })
#define POS_H_MIN	POS_H(0, 0)
#define POS_H_MAX	POS_H(UINT64_MAX, UINT64_MAX)

/* Unpacked key header, host order (fields ordered for no padding: 40 bytes). */
struct bkey_h {
	struct bpos_h	p;
	uint32_t	size;		/* extents: length in sectors */
	uint64_t	version_lo;
	uint32_t	version_hi;
	uint8_t		u64s;		/* unpacked: 5 + value u64s */
	uint8_t		type;
	bool		needs_whiteout;
};

/* A key with its value (the value bytes stay in the node/journal buffer). */
struct bkey_ref {
	struct bkey_h	k;
	const void	*v;		/* value, little-endian on-disk bytes */
	unsigned	v_bytes;	/* (u64s - 5) * 8 */
};

_Static_assert(sizeof(struct bkey_h) == 40, "struct bkey_h has no padding");

/* A node's packing format, host order (on disk: 56 bytes, doc/format.md §3.4). */
struct bkey_format_h {
	uint8_t		key_u64s;
	uint8_t		nr_fields;
	uint8_t		bits[BKEY_NR_FIELDS_H];
	uint64_t	offset[BKEY_NR_FIELDS_H];
};

static inline int bpos_cmp(struct bpos_h a, struct bpos_h b)
{
	if (a.inode != b.inode)
		return a.inode < b.inode ? -1 : 1;
	if (a.offset != b.offset)
		return a.offset < b.offset ? -1 : 1;
	if (a.snapshot != b.snapshot)
		return a.snapshot < b.snapshot ? -1 : 1;
	return 0;
}

static inline bool bpos_eq(struct bpos_h a, struct bpos_h b)
{
	return !bpos_cmp(a, b);
}

/* Start of a key: (inode, offset - size); equal to p for non-extent keys. */
static inline struct bpos_h bkey_start_pos(const struct bkey_h *k)
{
	struct bpos_h p = k->p;

	p.offset -= k->size;
	return p;
}

/* Whiteouts (types 0 and 1) hide older keys and are never returned to users. */
static inline bool bkey_is_whiteout(const struct bkey_h *k)
{
	return k->type <= 1;
}

/* Successor of a position as used for node boundaries (doc/format.md §3.1). */
struct bpos_h bpos_successor(unsigned btree_id, struct bpos_h p);

/*
 * Decode and validate a 56-byte on-disk format. Returns 0, or
 * -BCH_ERR_btree_node_invalid with the reason in @err (may be NULL).
 */
int bkey_format_decode(const void *disk, struct bkey_format_h *f, struct printbuf *err);
void bkey_format_encode(const struct bkey_format_h *f, void *disk);
bool bkey_format_valid(const struct bkey_format_h *f, struct printbuf *err);
extern const struct bkey_format_h bkey_format_identity;

/*
 * Decode the key at @p (packed with @f when its format byte is 0, or
 * unpacked when 1), never reading more than @avail bytes. Checks that the
 * key's u64s fits in @avail, is at least its header size, and that the
 * format byte is 0 or 1. The value pointer points into @p.
 * Returns 0 or -BCH_ERR_key_invalid (reason in @err, may be NULL).
 */
int bkey_unpack(const struct bkey_format_h *f, const void *p, size_t avail,
		struct bkey_ref *out, struct printbuf *err);

/*
 * A format prepared once for unpacking many keys (a node's keys): where
 * each field sits in the packed words, its mask, offset and limit.
 */
struct bkey_unpacker {
	const struct bkey_format_h *f;
	bool		usable;		/* packed keys can be decoded with f */
	uint8_t		key_u64s;
	struct {
		uint8_t		idx, sh;	/* first word, shift in it */
		bool		two;		/* continues in word idx + 1 */
		uint64_t	mask, offset, max;
	} field[BKEY_NR_FIELDS_H];
};

void bkey_unpacker_init(struct bkey_unpacker *u, const struct bkey_format_h *f);
/* bkey_unpack() with @u's format (the same results and messages). */
int bkey_unpack_prepared(const struct bkey_unpacker *u, const void *p, size_t avail,
			 struct bkey_ref *out, struct printbuf *err);

/* Size in bytes of the key at @p as stored (its u64s * 8), or 0 if avail < 1. */
size_t bkey_packed_bytes(const void *p, size_t avail);

/*
 * Pack @k's header with @f into @out (key_u64s words, the value is not
 * copied). Returns false when the key cannot be packed (doc/format.md §3.5).
 */
bool bkey_pack(const struct bkey_format_h *f, const struct bkey_h *k,
	       unsigned val_u64s, void *out);

/* Encode/decode the 40-byte unpacked on-disk header. */
void bkey_h_to_disk(const struct bkey_h *k, void *out40);
void bkey_h_from_disk(const void *in40, struct bkey_h *k);

/* Compare the positions of two keys packed with the same format. */
int bkey_packed_cmp(const struct bkey_format_h *f, const void *a, const void *b);

/* Geometry of one member device, for pointer checks. */
struct bch_dev_geom {
	uint64_t	nbuckets;
	uint32_t	bucket_size;	/* sectors */
	uint32_t	first_bucket;
};

/*
 * What key checks and printing may know about the filesystem. Every part
 * is optional: without dev_geom the device checks are skipped, without
 * bucket_gen no pointer is ever "stale".
 */
struct bkey_fs_ctx {
	unsigned	nr_devices;
	/* Geometry of member @dev; false if there is no such member. */
	bool		(*dev_geom)(void *priv, unsigned dev, struct bch_dev_geom *g);
	/* Current gen of @bucket on @dev; false if unknown. */
	bool		(*bucket_gen)(void *priv, unsigned dev, uint64_t bucket, uint8_t *gen);
	void		*priv;
	bool		have_key;	/* encryption key loaded (false: encrypted crcs invalid) */
	bool		key_unknown;	/* don't judge encrypted crcs at all */
	unsigned	btree_node_size;/* sectors, for btree pointer checks (0 = skip) */
};

#endif
