// SPDX-License-Identifier: GPL-2.0
/*
 * Btree node reading on real nodes (embedded from golden images) and on
 * synthetic key runs: bset walk, checksums (crc32c and ChaCha20/Poly1305
 * with decryption), journal-seq blacklisting, header checks, the overlay
 * of bsets (newest wins, whiteouts, extents per sector), extent merging,
 * and a seeded mutation loop that must never crash (ASan in check-asan).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "bkey/bkey.h"
#include "codec/crypto.h"
#include "util/errcode.h"
#include "journal/journal.h"
#include "btree/node.h"
#include "util/util.h"

#include "golden_nodes.h"

static void *node_bytes(const struct node_line *l, size_t nr, size_t bytes)
{
	uint8_t *d = xcalloc(1, bytes);
	size_t i;

	for (i = 0; i < nr; i++)
		memcpy(d + l[i].off, l[i].b, 16);
	return d;
}

static struct btree_node_ctx a20_ctx(void)
{
	struct btree_node_ctx ctx = {
		.magic = A20_MAGIC, .block_sectors = 8, .node_sectors = 32,
	};

	ctx.bucket_size[0] = 32;
	return ctx;
}

static const struct btree_node_expect inodes_root = {
	.btree_id = 1, .level = 0, .min_key = POS_H_MIN, .max_key = POS_H_MAX,
	.check_min = true,
};

static int parse_a20(const struct btree_node_ctx *ctx, const struct btree_node_expect *exp,
		     uint8_t *d, struct btree_node_h **n, struct printbuf *err)
{
	return btree_node_parse(ctx, exp, d, 16384, "dev 0 sector 3520", n, err);
}

static void test_golden_crc32c(void **state)
{
	struct btree_node_ctx ctx = a20_ctx();
	struct printbuf err = PRINTBUF;
	struct btree_node_h *n;
	uint8_t *d = node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), 16384);

	assert_int_equal(parse_a20(&ctx, &inodes_root, d, &n, &err), 0);
	assert_int_equal(n->nr_errors, 0);
	assert_false(n->csum_errors);
	assert_int_equal(n->btree_id, 1);
	assert_int_equal(n->level, 0);
	assert_true(bpos_eq(n->max_key, POS_H_MAX));
	assert_int_equal(n->nr_bsets, 3);
	assert_int_equal(n->bsets[1].offset, 4096);
	assert_int_equal(n->bsets[2].offset, 8192);
	assert_int_equal(n->bsets[2].journal_seq, 7);
	assert_int_equal(n->written, 24);
	assert_int_equal(n->format.key_u64s, 1);
	assert_int_equal(n->nr_keys, 2);
	assert_int_equal(n->keys[0].k.p.inode, 4096);
	assert_int_equal(n->keys[0].k.u64s, 13);	/* the newer version, from 8192 */
	assert_int_equal(n->keys[0].k.type, 128);
	assert_int_equal(n->keys[0].v_bytes, 64);
	assert_int_equal(n->keys[1].k.p.inode, 4097);
	assert_int_equal(n->keys[1].k.u64s, 12);
	/* value points into the node's buffer */
	assert_true((const uint8_t *)n->keys[0].v >= (uint8_t *)n->data + 8192);
	btree_node_free(n);
	printbuf_exit(&err);
}

static void test_golden_blacklist(void **state)
{
	struct btree_node_ctx ctx = a20_ctx();
	struct journal_state j = { 0 };
	struct printbuf err = PRINTBUF;
	struct btree_node_h *n;
	uint8_t *d = node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), 16384);

	/* newest journal entry 2: the bset with journal_seq 7 never committed */
	j.nr_entries = 1;
	j.seq = 2;
	ctx.journal = &j;
	assert_int_equal(parse_a20(&ctx, &inodes_root, d, &n, &err), 0);
	assert_true(n->bsets[2].blacklisted);
	assert_false(n->bsets[2].used);
	assert_int_equal(n->nr_keys, 1);
	assert_int_equal(n->keys[0].k.p.inode, 4096);
	assert_int_equal(n->keys[0].k.u64s, 12);
	btree_node_free(n);
	printbuf_exit(&err);
}

static void test_golden_bad_csum(void **state)
{
	struct btree_node_ctx ctx = a20_ctx();
	struct printbuf err = PRINTBUF;
	struct btree_node_h *n;
	uint8_t *d = node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), 16384);

	d[8192 + 0x60] ^= 1;		/* inside an inode value of the 3rd bset */
	assert_int_equal(parse_a20(&ctx, &inodes_root, d, &n, &err), 0);
	assert_true(n->csum_errors);
	assert_false(n->bsets[2].csum_ok);
	assert_true(n->bsets[1].csum_ok);
	assert_true(n->nr_errors >= 1);
	assert_non_null(strstr(printbuf_str(&err), "invalid checksum"));
	assert_non_null(strstr(printbuf_str(&err), "dev 0 sector 3520"));
	assert_int_equal(n->nr_keys, 2);	/* data used anyway */
	btree_node_free(n);
	printbuf_exit(&err);
}

static void test_golden_header_errors(void **state)
{
	struct btree_node_ctx ctx = a20_ctx();
	struct btree_node_expect exp = inodes_root;
	struct printbuf err = PRINTBUF;
	struct btree_node_h *n;
	uint8_t *d;

	d = node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), 16384);
	ctx.magic ^= 1;
	assert_int_equal(parse_a20(&ctx, &exp, d, &n, &err), -BCH_ERR_btree_node_bad_magic);
	assert_null(n);
	ctx.magic ^= 1;

	d = node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), 16384);
	exp.level = 1;
	assert_int_equal(parse_a20(&ctx, &exp, d, &n, &err), -BCH_ERR_btree_node_invalid);
	assert_non_null(strstr(printbuf_str(&err), "incorrect level"));
	exp = inodes_root;

	d = node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), 16384);
	exp.btree_id = 2;
	assert_int_equal(parse_a20(&ctx, &exp, d, &n, &err), -BCH_ERR_btree_node_invalid);
	exp = inodes_root;

	d = node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), 16384);
	exp.max_key = POS_H(5000, 0);
	assert_int_equal(parse_a20(&ctx, &exp, d, &n, &err), -BCH_ERR_btree_node_invalid);
	exp = inodes_root;

	/* min key differs from what the parent says: reported, node used */
	d = node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), 16384);
	exp.min_key = POS_H(1, 0);
	assert_int_equal(parse_a20(&ctx, &exp, d, &n, &err), 0);
	assert_int_equal(n->nr_errors, 1);
	btree_node_free(n);
	exp = inodes_root;

	/* journal-less parse of a node whose 2nd bset has a later seq: end of node */
	d = node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), 16384);
	d[4096 + 16] ^= 0xff;
	assert_int_equal(parse_a20(&ctx, &exp, d, &n, &err), 0);
	assert_int_equal(n->nr_bsets, 1);
	assert_int_equal(n->nr_keys, 0);
	/* ... and the bset at 8192 is reported as a stray signature */
	assert_int_equal(n->nr_errors, 1);
	assert_non_null(strstr(printbuf_str(&err), "signature after last bset"));
	btree_node_free(n);

	/* bset seq 0 in the header */
	d = node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), 16384);
	memset(d + 136, 0, 8);
	assert_int_equal(parse_a20(&ctx, &exp, d, &n, &err), -BCH_ERR_btree_node_invalid);
	printbuf_exit(&err);
}

static void test_golden_encrypted(void **state)
{
	struct btree_node_ctx ctx = {
		.magic = C2_MAGIC, .block_sectors = 8, .node_sectors = 256,
	};
	struct bch_key key;
	struct printbuf err = PRINTBUF;
	struct btree_node_h *n;
	uint8_t *d;

	memcpy(&key, c2_master_key, sizeof(key));
	d = node_bytes(c2_inodes, ARRAY_SIZE(c2_inodes), 131072);
	/* no key: the node cannot be read */
	assert_int_equal(btree_node_parse(&ctx, &inodes_root, d, 131072, "c2", &n, &err),
			 -BCH_ERR_no_key);

	ctx.key = &key;
	printbuf_reset(&err);
	d = node_bytes(c2_inodes, ARRAY_SIZE(c2_inodes), 131072);
	assert_int_equal(btree_node_parse(&ctx, &inodes_root, d, 131072, "c2", &n, &err), 0);
	assert_int_equal(n->nr_errors, 0);
	assert_int_equal(n->bsets[0].csum_type, 4);
	assert_true(bpos_eq(n->max_key, POS_H_MAX));
	assert_int_equal(n->nr_keys, 2);
	assert_int_equal(n->keys[0].k.p.inode, 4096);
	assert_int_equal(n->keys[0].k.u64s, 13);
	assert_int_equal(n->keys[1].k.p.inode, 4097);
	btree_node_free(n);

	/* wrong key: every bset fails its MAC; reported */
	key.key[0] ^= 1;
	d = node_bytes(c2_inodes, ARRAY_SIZE(c2_inodes), 131072);
	if (!btree_node_parse(&ctx, &inodes_root, d, 131072, "c2", &n, &err)) {
		assert_true(n->csum_errors);
		btree_node_free(n);
	}
	printbuf_exit(&err);
}

/* Mutate single bytes of the real nodes: never crash, never leak. */
static void test_golden_mutations(void **state)
{
	struct btree_node_ctx ctx = a20_ctx();
	struct btree_node_ctx ctx2 = {
		.magic = C2_MAGIC, .block_sectors = 8, .node_sectors = 256,
	};
	struct bch_key key;
	unsigned seed = 12345, i;

	memcpy(&key, c2_master_key, sizeof(key));
	ctx2.key = &key;
	for (i = 0; i < 3000; i++) {
		struct printbuf err = PRINTBUF;
		struct btree_node_h *n = NULL;
		bool enc = i % 5 == 4;
		size_t bytes = enc ? 131072 : 16384;
		uint8_t *d = enc ? node_bytes(c2_inodes, ARRAY_SIZE(c2_inodes), bytes)
			: node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), bytes);
		unsigned nr = 1 + rand_r(&seed) % 3, j;

		for (j = 0; j < nr; j++) {
			/* mostly inside the written part (0x3000 / 0x2100 bytes) */
			size_t off = rand_r(&seed) % (enc ? 0x2100 : 0x3000);

			d[off] ^= 1 + rand_r(&seed) % 255;
		}
		if (!btree_node_parse(enc ? &ctx2 : &ctx, &inodes_root, d, bytes,
				      "mutant", &n, &err)) {
			size_t k;

			for (k = 0; k + 1 < n->nr_keys; k++)
				assert_true(bpos_cmp(n->keys[k].k.p, n->keys[k + 1].k.p) < 0);
			btree_node_free(n);
		}
		printbuf_exit(&err);
	}
}

/* ---- synthetic runs ---- */

static const uint8_t resv_val[8] = { 0, 0, 0, 0, 1, 0, 0, 0 };

static struct bkey_ref ext(uint64_t inode, uint64_t start, uint64_t end, unsigned type)
{
	struct bkey_ref r = { 0 };

	r.k.type = type;
	r.k.p = POS_H(inode, end);
	r.k.size = end - start;
	if (type == 130) {
		r.k.u64s = 6;
		r.v = resv_val;
		r.v_bytes = 8;
	} else {
		r.k.u64s = 5;
	}
	return r;
}

/* Spec 20 §20.9.8: overlap resolution, whiteouts, merging of reservations. */
static void test_overlay_extents(void **state)
{
	struct bkey_ref r1[] = {
		ext(5000, 0, 64, 130), ext(5000, 128, 192, 130),
		ext(5000, 256, 320, 130), ext(5000, 400, 410, 130),
	};
	struct bkey_ref r2[] = { ext(5000, 0, 40, 130) };
	struct bkey_ref r3[] = { ext(5000, 128, 130, 130), ext(5000, 130, 140, 1) };
	struct bkey_ref r4[] = { ext(5000, 256, 320, 1) };
	struct key_run runs[] = {
		{ r1, ARRAY_SIZE(r1) }, { r2, 1 }, { r3, 2 }, { r4, 1 },
	};
	struct node_arena *a = node_arena_new();
	uint16_t bucket_size[BTREE_NODE_MAX_DEVS] = { 0 };
	struct bkey_ref *out;
	size_t nr;

	assert_int_equal(bch_keys_overlay(true, runs, ARRAY_SIZE(runs), a, &out, &nr), 0);
	nr = bch_extents_merge(out, nr, bucket_size);
	assert_int_equal(nr, 4);
	assert_int_equal(out[0].k.p.offset, 64);
	assert_int_equal(out[0].k.size, 64);
	assert_int_equal(out[1].k.p.offset, 130);
	assert_int_equal(out[1].k.size, 2);
	assert_int_equal(out[2].k.p.offset, 192);
	assert_int_equal(out[2].k.size, 52);
	assert_int_equal(out[3].k.p.offset, 410);
	free(out);
	node_arena_free(a);
}

/* A newer key in the middle of an older extent splits it; pointers advance. */
static void test_overlay_extent_split(void **state)
{
	/* ptr: dev 0, offset 1024, gen 1: bit 0 | offset << 4 | gen << 56 */
	uint64_t v = 1 | (1024ULL << 4) | (1ULL << 56);
	uint64_t v2 = 1 | (5000ULL << 4) | (1ULL << 56);
	struct bkey_ref old = ext(4100, 0, 100, 128), mid = ext(4100, 20, 30, 128);
	struct key_run runs[2];
	struct node_arena *a = node_arena_new();
	uint16_t bucket_size[BTREE_NODE_MAX_DEVS] = { 256 };
	struct bkey_ref *out;
	uint64_t w;
	size_t nr;

	old.k.u64s = mid.k.u64s = 6;
	old.v = &v;
	mid.v = &v2;
	old.v_bytes = mid.v_bytes = 8;
	runs[0] = (struct key_run) { &old, 1 };
	runs[1] = (struct key_run) { &mid, 1 };
	assert_int_equal(bch_keys_overlay(true, runs, 2, a, &out, &nr), 0);
	assert_int_equal(nr, 3);
	assert_int_equal(out[0].k.p.offset, 20);
	assert_int_equal(out[0].k.size, 20);
	assert_ptr_equal(out[0].v, &v);
	assert_int_equal(out[1].k.p.offset, 30);
	assert_int_equal(out[2].k.p.offset, 100);
	assert_int_equal(out[2].k.size, 70);
	memcpy(&w, out[2].v, 8);
	assert_int_equal((w >> 4) & ((1ULL << 44) - 1), 1054);	/* advanced by 30 */
	assert_int_equal(v, 1 | (1024ULL << 4) | (1ULL << 56));	/* original untouched */

	/* the pieces are not adjacent on disk any more: no merge */
	assert_int_equal(bch_extents_merge(out, nr, bucket_size), 3);
	/* delete the middle again with a newer key at the same place + merge */
	out[1] = out[0];
	out[1].k.p.offset = 30;
	out[1].k.size = 10;
	w = 1 | (1044ULL << 4) | (1ULL << 56);
	out[1].v = &w;
	assert_int_equal(bch_extents_merge(out, nr, bucket_size), 1);
	assert_int_equal(out[0].k.size, 100);
	free(out);
	node_arena_free(a);
}

static struct bkey_ref key(uint64_t inode, uint64_t offset, unsigned type, unsigned tag)
{
	struct bkey_ref r = { 0 };

	r.k.type = type;
	r.k.u64s = 5;
	r.k.p = POS_H(inode, offset);
	r.k.version_lo = tag;
	return r;
}

static void test_overlay_keys(void **state)
{
	struct bkey_ref r1[] = {
		key(1, 1, 128, 1), key(1, 2, 128, 1), key(1, 3, 128, 1), key(2, 0, 128, 1),
	};
	/* equal positions inside one run: the later wins */
	struct bkey_ref r2[] = { key(1, 2, 0, 2), key(1, 3, 128, 2), key(1, 3, 128, 3),
				 key(1, 5, 0, 2) };
	struct key_run runs[] = { { r1, 4 }, { r2, 4 } };
	struct bkey_ref *out;
	size_t nr;

	assert_int_equal(bch_keys_overlay(false, runs, 2, NULL, &out, &nr), 0);
	assert_int_equal(nr, 3);
	assert_int_equal(out[0].k.p.offset, 1);
	assert_int_equal(out[1].k.p.offset, 3);
	assert_int_equal(out[1].k.version_lo, 3);
	assert_int_equal(out[2].k.p.inode, 2);
	free(out);
}

/* A seeded run of keys (at most @max): sorted; extents do not overlap (some empty). */
static size_t rand_run(struct bkey_ref *k, size_t max, bool extents, bool first, unsigned *seed)
{
	/* (a third of the later runs after every key of the first: appended bsets) */
	uint64_t pos = !first && rand_r(seed) % 3 == 0 ? 400 + rand_r(seed) % 8 : rand_r(seed) % 8;
	size_t nr = first ? (size_t)rand_r(seed) % max : (size_t)rand_r(seed) % 12, i;
	static uint64_t vals[4] = { 1 | (1024ULL << 4) | (1ULL << 56) };

	if (nr > max)
		nr = max;
	for (i = 0; i < nr; i++) {
		unsigned type = rand_r(seed) % 4 == 0 && !first ? rand_r(seed) % 2 : 128 + 2 * (rand_r(seed) % 2);

		if (extents) {
			uint64_t len = first || rand_r(seed) % 8 ? 1 + rand_r(seed) % 20 : 0;

			k[i] = ext(7, pos, pos + len, type);
			if (type == 128) {
				k[i].k.u64s = 6;
				k[i].v = vals;
				k[i].v_bytes = 8;
			}
			pos += len + rand_r(seed) % (first ? 6 : 40);
		} else {
			k[i] = key(7, pos, type, rand_r(seed));
			/* (equal positions inside a later run: the later key wins) */
			pos += first || rand_r(seed) % 4 ? 1 + (uint64_t)(rand_r(seed) % 5) : 0;
		}
	}
	return nr;
}

/*
 * bch_keys_overlay_in_place() and bch_keys_overlay_in_buffer() (what a
 * node of several bsets is parsed with) give exactly what
 * bch_keys_overlay_rounds() gives, key for key, on seeded random runs of
 * both kinds (later runs overlapping the first, or after it).
 */
static void test_overlay_in_place(void **state)
{
	unsigned seed = 12345;

	for (unsigned iter = 0; iter < 4000; iter++) {
		bool extents = iter & 1;
		struct bkey_ref first[64], later[3][12], *ref, *k;
		struct key_run runs[3];
		unsigned nr_runs = 1 + rand_r(&seed) % 3;
		struct node_arena *a = node_arena_new(), *b = node_arena_new();
		size_t nr_first = rand_run(first, 64, extents, true, &seed), nr_ref, nr, cap;
		struct keyvec cur = { .k = first, .nr = nr_first, .size = nr_first };

		for (unsigned r = 0; r < nr_runs; r++)
			runs[r] = (struct key_run) { later[r], rand_run(later[r], 12, extents, false, &seed) };
		bch_keys_overlay_rounds(extents, cur, false, runs, nr_runs, a, &ref, &nr_ref);

		cap = bch_keys_overlay_room(extents, nr_first, runs, nr_runs);
		k = xmalloc(cap * sizeof(*k));
		memcpy(k, first, nr_first * sizeof(*k));
		nr = bch_keys_overlay_in_place(extents, k, nr_first, cap, runs, nr_runs, b);
		assert_int_equal(nr, nr_ref);
		for (size_t i = 0; i < nr; i++) {
			assert_int_equal(k[i].k.p.offset, ref[i].k.p.offset);
			assert_int_equal(k[i].k.size, ref[i].k.size);
			assert_int_equal(k[i].k.type, ref[i].k.type);
			assert_int_equal(k[i].k.version_lo, ref[i].k.version_lo);
			assert_int_equal(k[i].v_bytes, ref[i].v_bytes);
			if (k[i].v_bytes)
				assert_memory_equal(k[i].v, ref[i].v, k[i].v_bytes);
		}
		free(k);

		/* non-extents: the runs where they were read, after the first */
		if (!extents) {
			struct key_run_at at[3];
			size_t pos = 64 + rand_r(&seed) % 4;

			k = xmalloc((pos + 3 * 12) * sizeof(*k));
			memcpy(k, first, nr_first * sizeof(*k));
			for (unsigned r = 0; r < nr_runs; r++) {
				at[r] = (struct key_run_at) { pos, runs[r].nr };
				memcpy(k + pos, runs[r].k, runs[r].nr * sizeof(*k));
				pos += runs[r].nr + rand_r(&seed) % 2;
			}
			nr = bch_keys_overlay_in_buffer(k, nr_first, at, nr_runs);
			assert_int_equal(nr, nr_ref);
			for (size_t i = 0; i < nr; i++) {
				assert_int_equal(k[i].k.p.offset, ref[i].k.p.offset);
				assert_int_equal(k[i].k.type, ref[i].k.type);
				assert_int_equal(k[i].k.version_lo, ref[i].k.version_lo);
			}
			free(k);
		}
		free(ref);
		node_arena_free(a);
		node_arena_free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_crc32c),
		cmocka_unit_test(test_golden_blacklist),
		cmocka_unit_test(test_golden_bad_csum),
		cmocka_unit_test(test_golden_header_errors),
		cmocka_unit_test(test_golden_encrypted),
		cmocka_unit_test(test_golden_mutations),
		cmocka_unit_test(test_overlay_extents),
		cmocka_unit_test(test_overlay_extent_split),
		cmocka_unit_test(test_overlay_keys),
		cmocka_unit_test(test_overlay_in_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
