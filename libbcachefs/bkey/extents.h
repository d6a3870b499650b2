/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Extent values (doc/format.md §5.2): a list of ptr / crc32 / crc64 / crc128
 * entries; a crc entry applies to the pointers after it. Also btree
 * pointer values (interior nodes, roots: ptr entries only).
 */
#ifndef BCH_EXTENTS_H
#define BCH_EXTENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "format/format.h"

struct bkey_fs_ctx;
struct json;
struct printbuf;

/* One decoded entry. */
struct extent_entry_h {
	int		type;		/* BCH_EXTENT_ENTRY_*, or -1 invalid */
	unsigned	offset;		/* byte offset in the value */
	unsigned	u64s;
	uint64_t	raw;		/* first word, host order */
	bool		truncated;	/* invalid: runs past the value */
	struct bch_extent_ptr_unpacked	ptr;	/* type ptr */
	struct bch_extent_crc_unpacked	crc;	/* crc types */
};

struct extent_entry_iter {
	const uint8_t	*v;
	unsigned	bytes;
	unsigned	pos;
};

void extent_entry_iter_init(struct extent_entry_iter *it, const struct bkey_ref *k);
/*
 * Next entry: 1 with @e filled (type, offset, u64s, raw; ptr only for a
 * pointer entry, crc only for a crc entry: the other is left as it was),
 * 0 at the end, or -BCH_ERR_key_invalid for
 * an invalid entry kind or one running past the value (@e->type = -1,
 * @e->raw = its first word if readable); the walk stops there.
 */
int extent_entry_iter_next(struct extent_entry_iter *it, struct extent_entry_h *e);

/* A pointer with the crc that applies to it. */
struct extent_ptr_decoded {
	struct bch_extent_ptr_unpacked	ptr;
	struct bch_extent_crc_unpacked	crc;	/* bch_extent_crc_none(size) if none */
	unsigned			offset;	/* byte offset of the ptr entry */
};

struct extent_ptr_iter {
	struct extent_entry_iter	e;
	struct bch_extent_crc_unpacked	crc;
};

void extent_ptr_iter_init(struct extent_ptr_iter *it, const struct bkey_ref *k);
/* 1 = next pointer in @p, 0 = end, <0 = invalid entry (walk stops). */
int extent_ptr_iter_next(struct extent_ptr_iter *it, struct extent_ptr_decoded *p);

/* Number of pointers (stops at an invalid entry). */
unsigned extent_nr_ptrs(const struct bkey_ref *k);

/* Pointer staleness: (int8)(bucket_gen - ptr_gen) > 0. */
static inline bool gen_after(uint8_t a, uint8_t b)
{
	return (int8_t)(a - b) > 0;
}

/* Is @p stale by @fs (never without a bucket_gen callback)? */
bool extent_ptr_stale(const struct bkey_fs_ctx *fs, const struct bch_extent_ptr_unpacked *p);

/*
 * Checks of doc/format.md §5.2.9 for keys of the extents btree (types 128-130) and
 * of doc/format.md §5.4 for btree pointers. Reason or NULL. @fs may be NULL.
 */
const char *extent_invalid(const struct bkey_ref *k, const struct bkey_fs_ctx *fs);
const char *btree_ptr_invalid(const struct bkey_ref *k, const struct bkey_fs_ctx *fs);

/* Value text: "crc: ... ptr: dev:offset gen G[ cached][ stale]"..., " cached" for type 129. */
void extent_entries_to_text(struct printbuf *out, const struct bkey_ref *k,
			    const struct bkey_fs_ctx *fs);
void extent_entries_to_json(struct json *j, const struct bkey_ref *k,
			    const struct bkey_fs_ctx *fs);

/*
 * May adjacent extents @l, @r (l before r) be merged into one (doc/format.md
 * §4.6)? Same u64s, type and version, l.p == start(r); for
 * 128/129 only ptr entries, pairwise equal flags/dev/gen, r's offset =
 * l's + l.size, both in the same bucket (@bucket_size indexed by device,
 * @nr_devs entries; 0 or out of range = unknown = no merge); 130 equal
 * generation and nr_replicas; 0/1/2 always. False if the sum of sizes
 * would not fit in 32 bits.
 */
bool extent_can_merge(const struct bkey_ref *l, const struct bkey_ref *r,
		      const uint16_t *bucket_size, unsigned nr_devs);

/*
 * Cut @d sectors off the front of extent value @v (a writable copy,
 * @bytes long): ptrs before the first crc and every crc offset advance by
 * @d (doc/format.md §5.2.8). The caller adjusts the key's size. Returns 0, or
 * -BCH_ERR_key_invalid if an entry is invalid or a crc offset overflows.
 */
int extent_cut_front(void *v, unsigned bytes, uint64_t d);

/* ---- btree pointer values (interior nodes, roots) ---- */

struct btree_ptr_h {
	unsigned		dev;
	uint64_t		offset;
	uint8_t			gen;
	bool			cached;
};

/* Decode the pointers of a btree pointer value; returns the number or -EINVAL. */
int btree_ptr_decode(const struct bkey_ref *k, struct btree_ptr_h *ptrs, unsigned max);

#endif
