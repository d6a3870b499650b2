// SPDX-License-Identifier: GPL-2.0
/*
 * The in-memory key overlay (bkey/overlay.h) against simple models:
 *   - point btrees: newest key per position, replacement, whiteouts kept,
 *     insert_under only fills empty positions, seek = first key >= pos,
 *     thousands of keys in random order (chunk splits and merges);
 *   - the extents btree: a sector map says which insert owns each sector;
 *     after every insert the overlay must hold non-overlapping extents,
 *     in order, covering exactly the owned sectors, each piece's pointer
 *     offset moved by its front cut (doc/format.md §5.2.8);
 *   - bounds: unknown btree ids refused without a change, size-0 extents
 *     ignored, clear frees everything and counts as a change.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bkey/bkey.h"
#include "bkey/extents.h"
#include "bkey/overlay.h"
#include "format/format.h"

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static struct bkey_ref point_key(uint64_t inode, uint64_t offset, uint8_t type,
				 const uint64_t *v, unsigned v_bytes)
{
	return (struct bkey_ref) {
		.k = { .type = type, .p = POS_H(inode, offset), .u64s = (uint8_t)(5 + v_bytes / 8) },
		.v = v, .v_bytes = v_bytes,
	};
}

/* Every key of @id in order, checked to be strictly increasing. */
static size_t walk(const struct bch_overlay *ov, unsigned id, const struct ov_key **out, size_t max)
{
	struct ov_iter it;
	const struct ov_key *k, *prev = NULL;
	size_t n = 0;

	bch_overlay_seek(ov, id, POS_H_MIN, &it);
	while ((k = bch_overlay_peek(&it))) {
		if (prev)
			assert_true(bpos_cmp(prev->k.p, k->k.p) < 0);
		assert_true(n < max);
		out[n++] = k;
		prev = k;
		bch_overlay_next(&it);
	}
	assert_int_equal(n, bch_overlay_nr(ov, id));
	return n;
}

static void test_empty_and_bounds(void **state)
{
	struct bch_overlay ov;
	struct ov_iter it;
	uint64_t v = 42;
	struct bkey_ref k = point_key(5, 0, 8, &v, 8);
	(void)state;

	memset(&ov, 0, sizeof(ov));	/* a zeroed overlay is empty */
	for (unsigned id = 0; id < OV_NR_BTREES; id++) {
		bch_overlay_seek(&ov, id, POS_H_MIN, &it);
		assert_null(bch_overlay_peek(&it));
		bch_overlay_next(&it);		/* at the end: stays there */
		assert_null(bch_overlay_peek(&it));
	}
	/* unknown btrees: refused, nothing changed, seek gives an empty walk */
	assert_int_equal(bch_overlay_insert(&ov, OV_NR_BTREES, &k), -EINVAL);
	assert_int_equal(bch_overlay_insert_under(&ov, 255, &k), -EINVAL);
	assert_int_equal(ov.nr_keys, 0);
	assert_int_equal(ov.changes, 0);
	assert_int_equal(ov.bytes, 0);
	assert_int_equal(bch_overlay_nr(&ov, OV_NR_BTREES), 0);
	bch_overlay_seek(&ov, 99, POS_H_MIN, &it);
	assert_null(bch_overlay_peek(&it));

	/* an extent of size 0 covers nothing and is not kept, but counts as a change */
	k.k.type = BCH_RESERVATION;
	k.k.size = 0;
	assert_int_equal(bch_overlay_insert(&ov, BTREE_ID_EXTENTS, &k), 0);
	assert_int_equal(bch_overlay_insert_under(&ov, BTREE_ID_EXTENTS, &k), 0);
	assert_int_equal(bch_overlay_nr(&ov, BTREE_ID_EXTENTS), 0);

	/* a key, then clear: empty again, bytes 0, one more change */
	k = point_key(5, 0, 8, &v, 8);
	assert_int_equal(bch_overlay_insert(&ov, BTREE_ID_INODES, &k), 0);
	assert_int_equal(ov.nr_keys, 1);
	assert_true(ov.bytes >= 8);
	{
		uint64_t ch = ov.changes;

		bch_overlay_clear(&ov);
		assert_int_equal(ov.changes, ch + 1);
	}
	assert_int_equal(ov.nr_keys, 0);
	assert_int_equal(ov.bytes, 0);
	bch_overlay_seek(&ov, BTREE_ID_INODES, POS_H_MIN, &it);
	assert_null(bch_overlay_peek(&it));
	/* usable after clear */
	assert_int_equal(bch_overlay_insert(&ov, BTREE_ID_INODES, &k), 0);
	assert_int_equal(bch_overlay_nr(&ov, BTREE_ID_INODES), 1);
	bch_overlay_clear(&ov);
}

static void test_point_replace_and_under(void **state)
{
	struct bch_overlay ov;
	struct ov_iter it;
	const struct ov_key *got;
	uint64_t v1[2] = { 1, 11 }, v2 = 2, v3 = 3;
	struct bkey_ref k;
	size_t bytes1;
	(void)state;

	memset(&ov, 0, sizeof(ov));	/* a zeroed overlay is empty */
	k = point_key(4096, 0, 8, v1, 16);
	assert_int_equal(bch_overlay_insert(&ov, BTREE_ID_INODES, &k), 0);
	bytes1 = ov.bytes;
	v1[0] = 99;			/* the overlay holds a copy */

	/* same position: replaced, still one key, bytes follow the value size */
	k = point_key(4096, 0, 8, &v2, 8);
	assert_int_equal(bch_overlay_insert(&ov, BTREE_ID_INODES, &k), 0);
	assert_int_equal(bch_overlay_nr(&ov, BTREE_ID_INODES), 1);
	assert_int_equal(ov.bytes, bytes1 - 8);
	bch_overlay_seek(&ov, BTREE_ID_INODES, POS_H(4096, 0), &it);
	got = bch_overlay_peek(&it);
	assert_non_null(got);
	assert_int_equal(got->v_bytes, 8);
	assert_int_equal(*(uint64_t *)got->v, 2);

	/* under an existing key: ignored */
	k = point_key(4096, 0, 8, &v3, 8);
	assert_int_equal(bch_overlay_insert_under(&ov, BTREE_ID_INODES, &k), 0);
	bch_overlay_seek(&ov, BTREE_ID_INODES, POS_H(4096, 0), &it);
	assert_int_equal(*(uint64_t *)bch_overlay_peek(&it)->v, 2);

	/* a whiteout replaces it and stays (it hides the node key under it) */
	k = point_key(4096, 0, KEY_TYPE_DELETED, NULL, 0);
	assert_int_equal(bch_overlay_insert(&ov, BTREE_ID_INODES, &k), 0);
	bch_overlay_seek(&ov, BTREE_ID_INODES, POS_H(4096, 0), &it);
	got = bch_overlay_peek(&it);
	assert_non_null(got);
	assert_int_equal(got->k.type, KEY_TYPE_DELETED);
	assert_null(got->v);
	assert_int_equal(bch_overlay_nr(&ov, BTREE_ID_INODES), 1);

	/* under at a free position: inserted; other btrees unaffected */
	k = point_key(4097, 0, 8, &v3, 8);
	assert_int_equal(bch_overlay_insert_under(&ov, BTREE_ID_INODES, &k), 0);
	assert_int_equal(bch_overlay_nr(&ov, BTREE_ID_INODES), 2);
	assert_int_equal(bch_overlay_nr(&ov, BTREE_ID_DIRENTS), 0);
	assert_int_equal(ov.nr_keys, 2);

	/* seek: the first key >= pos; past the last: end */
	bch_overlay_seek(&ov, BTREE_ID_INODES, POS_H(4096, 1), &it);
	assert_int_equal(bch_overlay_peek(&it)->k.p.inode, 4097);
	bch_overlay_seek(&ov, BTREE_ID_INODES, POS_H(4097, 1), &it);
	assert_null(bch_overlay_peek(&it));
	/* snapshot field counts in the order */
	bch_overlay_seek(&ov, BTREE_ID_INODES,
			 (struct bpos_h) { .inode = 4096, .offset = 0, .snapshot = 1 }, &it);
	assert_int_equal(bch_overlay_peek(&it)->k.p.inode, 4097);
	bch_overlay_clear(&ov);
}

/* Many point keys in random order against an array model. */
#define NPOS	3000

static void test_point_model(void **state)
{
	static const struct ov_key *keys[NPOS];
	static uint64_t model[NPOS];	/* 0 = absent, else value (1 << 63 = whiteout) */
	struct bch_overlay ov;
	size_t n, live;
	(void)state;

	memset(&ov, 0, sizeof(ov));	/* a zeroed overlay is empty */
	memset(model, 0, sizeof(model));
	for (unsigned round = 0; round < 20000; round++) {
		uint64_t pos = rnd(NPOS), v = round + 1;
		unsigned op = (unsigned)rnd(10);
		struct bkey_ref k;

		if (op < 6) {
			k = point_key(pos / 7, pos % 7, 8, &v, 8);
			bch_overlay_insert(&ov, BTREE_ID_DIRENTS, &k);
			model[pos] = v;
		} else if (op < 8) {
			k = point_key(pos / 7, pos % 7, KEY_TYPE_DELETED, NULL, 0);
			bch_overlay_insert(&ov, BTREE_ID_DIRENTS, &k);
			model[pos] = 1ULL << 63;
		} else {
			k = point_key(pos / 7, pos % 7, 8, &v, 8);
			bch_overlay_insert_under(&ov, BTREE_ID_DIRENTS, &k);
			if (!model[pos])
				model[pos] = v;
		}
	}
	n = walk(&ov, BTREE_ID_DIRENTS, keys, NPOS);
	live = 0;
	for (size_t p = 0, i = 0; p < NPOS; p++) {
		if (!model[p])
			continue;
		live++;
		assert_true(i < n);
		assert_int_equal(keys[i]->k.p.inode, p / 7);
		assert_int_equal(keys[i]->k.p.offset, p % 7);
		if (model[p] >> 63) {
			assert_int_equal(keys[i]->k.type, KEY_TYPE_DELETED);
		} else {
			assert_int_equal(keys[i]->v_bytes, 8);
			assert_int_equal(*(uint64_t *)keys[i]->v, model[p]);
		}
		i++;
	}
	assert_int_equal(n, live);
	assert_true(n > 5 * OV_CHUNK);		/* many chunks were made */
	assert_int_equal(ov.nr_keys, n);
	/* bytes: every key's header, plus 8 for each one that has a value */
	{
		size_t whiteouts = 0;

		for (size_t p = 0; p < NPOS; p++)
			whiteouts += model[p] >> 63;
		assert_int_equal(ov.bytes, n * sizeof(struct ov_key) + 8 * (n - whiteouts));
	}

	/* seek from every position lands on the next model position */
	for (size_t p = 0; p < NPOS; p += 13) {
		struct ov_iter it;
		const struct ov_key *k;
		size_t q = p;

		while (q < NPOS && !model[q])
			q++;
		bch_overlay_seek(&ov, BTREE_ID_DIRENTS, POS_H(p / 7, p % 7), &it);
		k = bch_overlay_peek(&it);
		if (q == NPOS) {
			assert_null(k);
		} else {
			assert_non_null(k);
			assert_int_equal(k->k.p.inode * 7 + k->k.p.offset, q);
		}
	}

	/* ascending and descending runs: splits at both ends */
	bch_overlay_clear(&ov);
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t v = i;
		struct bkey_ref k = point_key(1000 - i, 0, 8, &v, 8);

		bch_overlay_insert(&ov, BTREE_ID_XATTRS, &k);
		k = point_key(i, 0, 8, &v, 8);
		bch_overlay_insert(&ov, BTREE_ID_QUOTAS, &k);
	}
	assert_int_equal(walk(&ov, BTREE_ID_XATTRS, keys, NPOS), 1000);
	assert_int_equal(walk(&ov, BTREE_ID_QUOTAS, keys, NPOS), 1000);
	assert_int_equal(keys[999]->k.p.inode, 999);
	bch_overlay_clear(&ov);
}

/* ---- extents -------------------------------------------------------------- */

#define EXT_INODES	3
#define EXT_SECTORS	400
#define PTR_BASE(tag)	((uint64_t)(tag) * 100000)

/* owner tag per sector (0 = none); tag's type: BCH_EXTENT or discard */
static unsigned owner[EXT_INODES][EXT_SECTORS];
static uint8_t tag_type[100000];

static void ext_insert(struct bch_overlay *ov, unsigned tag, uint64_t inode, uint64_t start,
		       uint32_t size, bool whiteout, bool under)
{
	uint64_t v[1];
	struct bch_extent_ptr_unpacked p = { .offset = PTR_BASE(tag) + start, .dev = 0, .gen = 1 };
	struct bch_extent_ptr e = bch_extent_ptr_pack(&p);
	struct bkey_ref k = {
		.k = { .type = whiteout ? KEY_TYPE_DISCARD : BCH_EXTENT, .size = size,
		       .p = POS_H(inode, start + size), .version_lo = tag },
	};

	if (!whiteout) {
		memcpy(v, &e, 8);
		k.v = v;
		k.v_bytes = 8;
		k.k.u64s = 6;
	} else {
		k.k.u64s = 5;
	}
	tag_type[tag] = k.k.type;
	if (under)
		assert_int_equal(bch_overlay_insert_under(ov, BTREE_ID_EXTENTS, &k), 0);
	else
		assert_int_equal(bch_overlay_insert(ov, BTREE_ID_EXTENTS, &k), 0);
	for (uint64_t s = start; s < start + size; s++)
		if (!under || !owner[inode][s])
			owner[inode][s] = tag;
}

static void ext_check(const struct bch_overlay *ov)
{
	static unsigned seen[EXT_INODES][EXT_SECTORS];
	struct ov_iter it;
	const struct ov_key *k, *prev = NULL;
	size_t n = 0;

	memset(seen, 0, sizeof(seen));
	bch_overlay_seek(ov, BTREE_ID_EXTENTS, POS_H_MIN, &it);
	for (; (k = bch_overlay_peek(&it)); bch_overlay_next(&it), n++) {
		struct bpos_h s = bkey_start_pos(&k->k);
		unsigned tag = (unsigned)k->k.version_lo;

		assert_true(k->k.size > 0);
		assert_true(k->k.p.inode < EXT_INODES && k->k.p.offset <= EXT_SECTORS);
		if (prev)	/* ordered, no overlap */
			assert_true(bpos_cmp(bkey_start_pos(&k->k), prev->k.p) >= 0);
		assert_int_equal(k->k.type, tag_type[tag]);
		if (k->k.type == BCH_EXTENT) {
			struct extent_ptr_iter pi;
			struct extent_ptr_decoded d;
			struct bkey_ref r = ov_key_ref(k);

			assert_int_equal(k->v_bytes, 8);
			extent_ptr_iter_init(&pi, &r);
			assert_int_equal(extent_ptr_iter_next(&pi, &d), 1);
			/* the pointer follows the front cuts */
			assert_int_equal(d.ptr.offset, PTR_BASE(tag) + s.offset);
		} else {
			assert_int_equal(k->v_bytes, 0);
		}
		for (uint64_t x = s.offset; x < k->k.p.offset; x++) {
			assert_int_equal(owner[s.inode][x], tag);
			seen[s.inode][x] = tag;
		}
		prev = k;
	}
	assert_int_equal(n, bch_overlay_nr(ov, BTREE_ID_EXTENTS));
	assert_memory_equal(seen, owner, sizeof(seen));
}

static void test_extent_cuts(void **state)
{
	struct bch_overlay ov;
	struct ov_iter it;
	(void)state;

	memset(owner, 0, sizeof(owner));
	memset(&ov, 0, sizeof(ov));	/* a zeroed overlay is empty */
	ext_insert(&ov, 1, 1, 100, 100, false, false);		/* [100,200) */
	ext_insert(&ov, 2, 1, 140, 20, false, false);		/* middle: split */
	ext_check(&ov);
	assert_int_equal(bch_overlay_nr(&ov, BTREE_ID_EXTENTS), 3);
	ext_insert(&ov, 3, 1, 90, 20, false, false);		/* front cut of tag 1 */
	ext_insert(&ov, 4, 1, 190, 30, true, false);		/* back cut by a whiteout */
	ext_check(&ov);
	ext_insert(&ov, 5, 1, 110, 50, false, false);		/* swallows tag 2 */
	ext_check(&ov);
	assert_int_equal(bch_overlay_nr(&ov, BTREE_ID_EXTENTS), 4);
	/* exactly adjacent keys: no cut */
	ext_insert(&ov, 6, 1, 220, 10, false, false);
	ext_insert(&ov, 7, 1, 80, 10, false, false);
	ext_check(&ov);
	assert_int_equal(bch_overlay_nr(&ov, BTREE_ID_EXTENTS), 6);

	/* seek: the first extent ending after pos */
	bch_overlay_seek(&ov, BTREE_ID_EXTENTS, POS_H(1, 110), &it);
	assert_int_equal(bch_overlay_peek(&it)->k.version_lo, 5);	/* [110,160) */
	bch_overlay_seek(&ov, BTREE_ID_EXTENTS, POS_H(1, 109), &it);
	assert_int_equal(bch_overlay_peek(&it)->k.version_lo, 3);	/* [90,110) */
	bch_overlay_seek(&ov, BTREE_ID_EXTENTS, POS_H(1, 230), &it);
	assert_null(bch_overlay_peek(&it));

	/* under: only the gaps [0,80) [230,260) of [0,260) */
	ext_insert(&ov, 8, 1, 0, 260, false, true);
	ext_check(&ov);
	bch_overlay_seek(&ov, BTREE_ID_EXTENTS, POS_H(1, 0), &it);
	assert_int_equal(bch_overlay_peek(&it)->k.size, 80);
	/* another inode is independent */
	ext_insert(&ov, 9, 2, 0, 10, false, true);
	ext_insert(&ov, 10, 0, 390, 10, false, false);
	ext_check(&ov);
	bch_overlay_clear(&ov);
}

static void test_extent_model(void **state)
{
	struct bch_overlay ov;
	(void)state;

	memset(owner, 0, sizeof(owner));
	memset(&ov, 0, sizeof(ov));	/* a zeroed overlay is empty */
	for (unsigned tag = 1; tag < 6000; tag++) {
		uint64_t inode = rnd(EXT_INODES);
		uint32_t size = (uint32_t)(1 + rnd(rnd(4) ? 12 : 120));
		uint64_t start = rnd(EXT_SECTORS - size + 1);

		ext_insert(&ov, tag, inode, start, size, rnd(5) == 0, rnd(4) == 0);
		if (tag % 97 == 0 || tag < 200)
			ext_check(&ov);
	}
	ext_check(&ov);
	bch_overlay_clear(&ov);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_and_bounds),
		cmocka_unit_test(test_point_replace_and_under),
		cmocka_unit_test(test_point_model),
		cmocka_unit_test(test_extent_cuts),
		cmocka_unit_test(test_extent_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
