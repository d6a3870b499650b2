/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Editing the pointers of an extent value (doc/engine.md §17): what data moves
 * and device removal do to a key. Entries that are not touched keep their
 * bytes and their order; a crc entry left with no pointer after it is
 * dropped; a new pointer goes at the end, after its crc entry unless the
 * last crc entry already is that one.
 *
 * Values are little-endian entry lists of at most BKEY_EXTENT_VAL_U64s_MAX
 * u64s; every function returns the new value's size in bytes, or 0 when
 * the value would be invalid (an entry that does not parse, too big).
 */
#ifndef BCH_EXTENT_EDIT_H
#define BCH_EXTENT_EDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "bkey/extents.h"
#include "format/format.h"

/*
 * @k's value without the pointers that @drop says to drop (called with
 * each pointer and its index), into @out (BKEY_EXTENT_VAL_U64s_MAX u64s).
 * *@nr_left: pointers kept. Returns the bytes (0 with *@nr_left = 0 when
 * none is left, or on an invalid value: *@nr_left = UINT32_MAX).
 */
unsigned extent_drop_ptrs(const struct bkey_ref *k,
			  bool (*drop)(const struct extent_ptr_decoded *p, unsigned i, void *arg),
			  void *arg, uint64_t *out, unsigned *nr_left);

/*
 * Append pointer @p, whose data is described by @crc (entry_type -1: no
 * crc), to the value @v of @bytes bytes of an extent of @key_size
 * sectors, into @out. Returns the new size, or 0 if it does not fit.
 */
unsigned extent_append_ptr(const void *v, unsigned bytes, uint32_t key_size,
			   const struct bch_extent_crc_unpacked *crc,
			   const struct bch_extent_ptr_unpacked *p, uint64_t *out);

/* Same descriptor (every field but the entry kind)? */
bool extent_crc_same(const struct bch_extent_crc_unpacked *a,
		     const struct bch_extent_crc_unpacked *b);

#endif
