// SPDX-License-Identifier: GPL-2.0
/*
 * Editing the pointers of an extent value: see extent_edit.h.
 */
#include <string.h>

#include "bkey/extent_edit.h"
#include "bkey/extents.h"

#define VAL_MAX_BYTES	(BKEY_EXTENT_VAL_U64s_MAX * 8)

bool extent_crc_same(const struct bch_extent_crc_unpacked *a,
		     const struct bch_extent_crc_unpacked *b)
{
	bool none_a = a->entry_type < 0, none_b = b->entry_type < 0;

	if (none_a || none_b)
		return none_a == none_b;
	return a->csum_type == b->csum_type && a->compression_type == b->compression_type &&
	       a->compressed_size == b->compressed_size &&
	       a->uncompressed_size == b->uncompressed_size && a->offset == b->offset &&
	       a->nonce == b->nonce && a->csum_lo == b->csum_lo && a->csum_hi == b->csum_hi;
}

unsigned extent_drop_ptrs(const struct bkey_ref *k,
			  bool (*drop)(const struct extent_ptr_decoded *p, unsigned i, void *arg),
			  void *arg, uint64_t *out, unsigned *nr_left)
{
	struct {
		unsigned	offset, bytes;
		bool		crc;
	} ent[BKEY_EXTENT_VAL_U64s_MAX];
	struct extent_entry_iter it;
	struct extent_entry_h e;
	struct bch_extent_crc_unpacked crc = bch_extent_crc_none(k->k.size);
	unsigned nr = 0, i, ptr_idx = 0, pos = 0;
	int ret;

	*nr_left = 0;
	extent_entry_iter_init(&it, k);
	while ((ret = extent_entry_iter_next(&it, &e)) > 0) {
		if (nr == BKEY_EXTENT_VAL_U64s_MAX)
			goto invalid;
		if (e.type == BCH_EXTENT_ENTRY_ptr) {
			struct extent_ptr_decoded p = { .ptr = e.ptr, .crc = crc, .offset = e.offset };

			if (drop(&p, ptr_idx++, arg))
				continue;
			(*nr_left)++;
		} else {
			crc = e.crc;
		}
		ent[nr].offset	= e.offset;
		ent[nr].bytes	= e.u64s * 8;
		ent[nr].crc	= e.type != BCH_EXTENT_ENTRY_ptr;
		nr++;
	}
	if (ret < 0)
		goto invalid;
	if (!*nr_left)
		return 0;
	/* a crc entry must be followed by a pointer it describes */
	for (i = 0; i < nr; i++) {
		if (ent[i].crc && (i + 1 == nr || ent[i + 1].crc))
			continue;
		if (pos + ent[i].bytes > VAL_MAX_BYTES)
			goto invalid;
		memcpy((uint8_t *)out + pos, (const uint8_t *)k->v + ent[i].offset, ent[i].bytes);
		pos += ent[i].bytes;
	}
	return pos;
invalid:
	*nr_left = UINT32_MAX;
	return 0;
}

unsigned extent_append_ptr(const void *v, unsigned bytes, uint32_t key_size,
			   const struct bch_extent_crc_unpacked *crc,
			   const struct bch_extent_ptr_unpacked *p, uint64_t *out)
{
	struct bkey_ref k = { .k = { .type = BCH_EXTENT, .size = key_size }, .v = v, .v_bytes = bytes };
	struct bch_extent_crc_unpacked last = bch_extent_crc_none(key_size), want = *crc;
	struct extent_entry_iter it;
	struct extent_entry_h e;
	struct bch_extent_ptr ptr;
	union bch_extent_entry ent;
	unsigned pos = bytes, n = 0;
	int ret;

	if (bytes > VAL_MAX_BYTES)
		return 0;
	extent_entry_iter_init(&it, &k);
	while ((ret = extent_entry_iter_next(&it, &e)) > 0)
		if (e.type != BCH_EXTENT_ENTRY_ptr)
			last = e.crc;
	if (ret < 0)
		return 0;
	if (!extent_crc_same(&last, &want)) {
		int t;

		if (want.entry_type < 0) {
			/* "no crc" after a crc entry: one that says so */
			want = (struct bch_extent_crc_unpacked) {
				.compressed_size = key_size, .uncompressed_size = key_size,
			};
		}
		t = bch_extent_crc_pick_type(&want);
		n = t < 0 ? 0 : bch_extent_crc_pack(&ent, t, &want);
		if (!n)
			return 0;
	}
	if (pos + n * 8 + 8 > VAL_MAX_BYTES)
		return 0;
	memcpy(out, v, bytes);
	if (n) {
		memcpy((uint8_t *)out + pos, &ent, n * 8);
		pos += n * 8;
	}
	ptr = bch_extent_ptr_pack(p);
	memcpy((uint8_t *)out + pos, &ptr, 8);
	return pos + 8;
}
