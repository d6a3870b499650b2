// SPDX-License-Identifier: GPL-2.0
/*
 * Btree node writing: the format choice of doc/format.md §3.6 (the spec's table),
 * byte-for-byte reproduction of nodes written by the 2018 tools (a crc32c
 * node of a_default_20M and a ChaCha20/Poly1305 node of c2_encrypted_nopass,
 * rebuilt from their decoded contents), random nodes read back with
 * btree_node_parse(), and the writer's refusals (order, range, space).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "bkey/bkey.h"
#include "codec/checksum.h"
#include "codec/crypto.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "btree/node.h"
#include "btree/node_write.h"
#include "util/util.h"

/* The device read path is not used here; fs.c provides the real one. */
__attribute__((weak)) int bch_dev_read(struct bch_fs *c, unsigned dev, void *buf,
				       size_t bytes, uint64_t sector)
{
	return -EIO;
}

#include "golden_nodes.h"

static uint8_t *node_bytes(const struct node_line *l, size_t nr, size_t bytes)
{
	uint8_t *d = xcalloc(1, bytes);
	size_t i;

	for (i = 0; i < nr; i++)
		memcpy(d + l[i].off, l[i].b, 16);
	return d;
}

static struct bpos_h pos_from_disk(const uint8_t *p)
{
	struct bpos_h r;

	r.snapshot = get_le32_unaligned(p);
	r.offset = get_le64_unaligned(p + 4);
	r.inode = get_le64_unaligned(p + 12);
	return r;
}

#define MAX_KEYS 64

/*
 * Decode the bsets at @offs of node @raw (decrypting a copy), rebuild the
 * node with the writer from what was decoded, and compare every byte.
 */
static void rebuild_and_compare(const uint8_t *raw, size_t bytes,
				const struct btree_write_ctx *ctx,
				const unsigned *offs, unsigned nr_bsets,
				bool choose_format)
{
	uint8_t *d = xmalloc(bytes);
	uint64_t seq = get_le64_unaligned(raw + 136), flags, ptrw;
	struct bkey_ref keys[8][MAX_KEYS];
	size_t nr_keys[8] = { 0 };
	uint64_t jseq[8];
	struct bkey_format_h f;
	struct btree_node_new n = { 0 };
	struct btree_node_buf nb;
	struct printbuf err = PRINTBUF;
	unsigned b;

	memcpy(d, raw, bytes);
	assert_true(nr_bsets <= 8);
	for (b = 0; b < nr_bsets; b++) {
		unsigned o = offs[b];
		unsigned hdr = o ? o + 16 : 136;
		unsigned kstart = o ? o + 40 : 160;
		unsigned u64s = get_le16_unaligned(d + hdr + 22);
		struct bch_nonce nonce;

		jseq[b] = get_le64_unaligned(d + hdr + 8);
		nonce = bch_nonce_btree(o, seq, jseq[b]);
		if (bch_csum_type_is_encryption(ctx->csum_type)) {
			if (!o) {
				bch_chacha20(ctx->key, nonce, d + 24, 112);
				bch_chacha20(ctx->key, bch_nonce_add(nonce, 128), d + 160, u64s * 8);
			} else {
				bch_chacha20(ctx->key, nonce, d + kstart, u64s * 8);
			}
		}
		if (!o)
			assert_int_equal(bkey_format_decode(d + 80, &f, NULL), 0);
		{
			size_t pos = kstart, end = kstart + (size_t)u64s * 8;

			while (pos < end) {
				assert_true(nr_keys[b] < MAX_KEYS);
				assert_int_equal(bkey_unpack(&f, d + pos, end - pos,
							     &keys[b][nr_keys[b]], NULL), 0);
				pos += bkey_packed_bytes(d + pos, end - pos);
				nr_keys[b]++;
			}
		}
	}
	flags = get_le64_unaligned(d + 24);
	ptrw = get_le64_unaligned(d + 72);
	n.btree_id = flags & 15;
	n.level = (flags >> 4) & 15;
	n.node_seq = (uint32_t)(flags >> 32);
	n.min_key = pos_from_disk(d + 32);
	n.max_key = pos_from_disk(d + 52);
	n.seq = seq;
	n.ptr.offset = (ptrw >> 4) & ((1ULL << 44) - 1);
	n.ptr.dev = (ptrw >> 48) & 0xff;
	n.ptr.gen = (uint8_t)(ptrw >> 56);
	n.format = choose_format ? NULL : &f;

	assert_int_equal(bch_btree_node_build(ctx, &n, jseq[0], keys[0], nr_keys[0], &nb, &err), 0);
	for (b = 1; b < nr_bsets; b++) {
		assert_int_equal(nb.written * 512, offs[b]);
		assert_int_equal(bch_btree_node_append(ctx, &nb, jseq[b], keys[b], nr_keys[b], &err), 0);
		assert_int_equal(nb.last_start * 512, offs[b]);
	}
	if (printbuf_str(&err)[0])
		print_message("%s", printbuf_str(&err));
	assert_memory_equal(nb.data, raw, nb.written * 512);
	bch_btree_node_buf_exit(&nb);
	printbuf_exit(&err);
	free(d);
}

static void test_golden_crc32c_rebuild(void **state)
{
	struct btree_write_ctx ctx = {
		.magic = A20_MAGIC, .block_sectors = 8, .node_sectors = 32,
		.csum_type = BCH_CHECKSUM_CRC32C_NONZERO,
	};
	static const unsigned offs[] = { 0, 4096, 8192 };
	uint8_t *raw = node_bytes(a20_inodes, ARRAY_SIZE(a20_inodes), 16384);

	rebuild_and_compare(raw, 16384, &ctx, offs, 3, false);
	/* the first bset was empty: the reference's format is the chosen one */
	rebuild_and_compare(raw, 16384, &ctx, offs, 3, true);
	free(raw);
}

static void test_golden_encrypted_rebuild(void **state)
{
	struct bch_key key;
	struct btree_write_ctx ctx = {
		.magic = C2_MAGIC, .block_sectors = 8, .node_sectors = 256,
		.csum_type = BCH_CHECKSUM_CHACHA20_POLY1305_128, .key = &key,
	};
	static const unsigned offs[] = { 0, 4096, 8192 };
	uint8_t *raw = node_bytes(c2_inodes, ARRAY_SIZE(c2_inodes), 131072);

	assert_int_equal(bch_crypto_init(), 0);
	memcpy(&key, c2_master_key, 32);
	rebuild_and_compare(raw, 131072, &ctx, offs, 3, true);
	free(raw);
}

/* ---- format choice: the table of doc/format.md §3.6 ---- */

static struct bkey_ref mk(uint64_t inode, uint64_t offset, uint32_t size,
			  uint32_t vhi, uint64_t vlo)
{
	struct bkey_ref r;

	memset(&r, 0, sizeof(r));
	r.k.u64s = 5;
	r.k.type = 128;
	r.k.p = POS_H(inode, offset);
	r.k.size = size;
	r.k.version_hi = vhi;
	r.k.version_lo = vlo;
	return r;
}

static void check_fmt(const struct bkey_format_h *f, unsigned ku64s,
		      const unsigned bits[6], const uint64_t offs[6])
{
	unsigned i;

	assert_int_equal(f->key_u64s, ku64s);
	assert_int_equal(f->nr_fields, 6);
	for (i = 0; i < 6; i++) {
		assert_int_equal(f->bits[i], bits[i]);
		assert_int_equal(f->offset[i], offs[i]);
	}
	assert_true(bkey_format_valid(f, NULL));
}

static void test_format_choice_table(void **state)
{
	struct bkey_format_h f;
	struct bkey_ref k[4];
	static const uint64_t zero[6];

	bch_bkey_format_choose(POS_H_MIN, NULL, 0, &f);
	check_fmt(&f, 1, (unsigned[]){ 0, 0, 0, 0, 0, 0 }, zero);

	k[0] = mk(4096, 0, 0, 0, 0); k[1] = mk(4099, 0, 0, 0, 0); k[2] = mk(4102, 0, 0, 0, 0);
	bch_bkey_format_choose(POS_H_MIN, k, 3, &f);
	check_fmt(&f, 1, (unsigned[]){ 16, 0, 0, 0, 0, 0 }, zero);

	k[0] = mk(4096, 8, 8, 0, 0); k[1] = mk(4096, 136, 128, 0, 0); k[2] = mk(4100, 1000, 16, 0, 0);
	bch_bkey_format_choose(POS_H(4096, 0), k, 3, &f);
	check_fmt(&f, 1, (unsigned[]){ 8, 16, 0, 16, 0, 0 },
		  (uint64_t[]){ 4096, 0, 0, 0, 0, 0 });

	k[0] = mk(1, 2, 0, 0, 5); k[1] = mk(1, 300, 0, 1, 70000);
	bch_bkey_format_choose(POS_H(1, 0), k, 2, &f);
	check_fmt(&f, 1, (unsigned[]){ 0, 16, 0, 0, 1, 17 },
		  (uint64_t[]){ 1, 0, 0, 0, 0, 5 });

	k[0] = mk(0, 0, 0, 0, 0); k[1] = mk(0xffffffffffffULL, 0x123456789abcULL, 0, 0, 0);
	bch_bkey_format_choose(POS_H_MIN, k, 2, &f);
	check_fmt(&f, 2, (unsigned[]){ 48, 48, 0, 0, 0, 0 }, zero);

	k[0] = mk(0, 34, 0, 0, 0); k[1] = mk(0, 134, 0, 0, 0);
	k[2] = mk(0, 234, 0, 0, 0); k[3] = mk(0, 334, 0, 0, 0);
	bch_bkey_format_choose(POS_H_MIN, k, 4, &f);
	check_fmt(&f, 1, (unsigned[]){ 0, 16, 0, 0, 0, 0 }, zero);

	/* whiteouts are not inputs */
	k[0] = mk(4096, 0, 0, 0, 0); k[1] = mk(900000, 0, 0, 0, 0);
	k[1].k.type = KEY_TYPE_DELETED;
	bch_bkey_format_choose(POS_H(4096, 0), k, 2, &f);
	check_fmt(&f, 1, (unsigned[]){ 0, 0, 0, 0, 0, 0 },
		  (uint64_t[]){ 4096, 0, 0, 0, 0, 0 });
}

/* Packing vector 20 §20.9.2 (a), through the node writer. */
static void test_packed_vector(void **state)
{
	struct btree_write_ctx ctx = {
		.magic = 1, .block_sectors = 8, .node_sectors = 32,
		.csum_type = BCH_CHECKSUM_NONE,
	};
	struct bkey_format_h f = {
		.key_u64s = 1, .nr_fields = 6, .bits = { 8, 16, 0, 16, 0, 0 },
		.offset = { 4096, 0, 0, 0, 0, 0 },
	};
	struct btree_node_new n = {
		.btree_id = 0, .level = 0, .min_key = POS_H(4096, 0),
		.max_key = POS_H(5000, 0), .seq = 7, .format = &f,
	};
	uint64_t val[2] = { 0x1111, 0x2222 };
	struct bkey_ref k[2];
	struct btree_node_buf nb;
	struct printbuf err = PRINTBUF;
	static const uint8_t want[8] = { 0x03, 0x00, 0x80, 0x10, 0x00, 0xe8, 0x03, 0x04 };

	k[0] = mk(4100, 1000, 16, 0, 0);
	k[0].k.u64s = 7; k[0].v = val; k[0].v_bytes = 16;
	k[1] = mk(4900, 2000, 16, 0, 0);	/* inode does not fit 8 bits: unpacked */
	assert_int_equal(bch_btree_node_build(&ctx, &n, 0, k, 2, &nb, &err), 0);
	assert_memory_equal(nb.data + 160, want, 8);
	assert_memory_equal(nb.data + 168, val, 16);
	assert_int_equal(nb.data[160 + 24 + 1], 1);	/* second key unpacked */
	assert_int_equal(nb.nr_packed, 1);
	assert_int_equal(nb.nr_unpacked, 1);
	assert_int_equal(get_le16_unaligned(nb.data + 158), 3 + 5);
	/* extents leaf: SEPARATE_WHITEOUTS, csum type 0 */
	assert_int_equal(get_le32_unaligned(nb.data + 152), 0x20);
	bch_btree_node_buf_exit(&nb);
	printbuf_exit(&err);
}

/* ---- random nodes read back ---- */

static uint64_t rnd_state = 0x123456789abcdefULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

struct keyset {
	struct bkey_ref	k[400];
	uint64_t	vals[400][4];
	size_t		nr;
};

/* Sorted random keys of @btree, every other one to bset A or B. */
static void random_keys(unsigned btree, struct keyset *a, struct keyset *b,
			uint64_t base_inode, unsigned nr)
{
	uint64_t inode = base_inode, off = rnd() % 1000;
	unsigned i, j;

	a->nr = b->nr = 0;
	for (i = 0; i < nr; i++) {
		struct keyset *s = rnd() & 1 ? a : b;
		struct bkey_ref *k = &s->k[s->nr];
		unsigned vu64s = 1;	/* cookies: exactly one u64, valid in every btree */

		if (rnd() % 5 == 0) {
			inode += 1 + rnd() % 3;
			off = rnd() % 1000;
		}
		*k = mk(inode, 0, 0, 0, 0);
		if (btree == BTREE_ID_EXTENTS) {
			uint32_t size = 1 + rnd() % 64;

			off += rnd() % 16 + size;
			k->k.size = size;
			k->k.p.offset = off;
		} else {
			off += 1 + rnd() % 100;
			k->k.p.offset = off;
		}
		if (rnd() % 3 == 0)
			k->k.version_lo = rnd() % 100000;
		for (j = 0; j < vu64s; j++)
			s->vals[s->nr][j] = rnd();
		k->k.type = KEY_TYPE_COOKIE;
		k->k.u64s = 5 + vu64s;
		k->v = s->vals[s->nr];
		k->v_bytes = vu64s * 8;
		s->nr++;
	}
}

static void random_roundtrip(unsigned csum_type, unsigned btree, unsigned block_sectors)
{
	struct bch_key key;
	struct btree_write_ctx ctx = {
		.magic = 0x1234567890abcdefULL, .block_sectors = block_sectors,
		.node_sectors = 128, .csum_type = csum_type,
		.key = bch_csum_type_is_encryption(csum_type) ? &key : NULL,
	};
	struct btree_node_ctx rctx = {
		.magic = ctx.magic, .block_sectors = block_sectors, .node_sectors = 128,
		.key = ctx.key,
	};
	struct btree_node_expect exp = {
		.btree_id = btree, .level = 0, .min_key = POS_H_MIN, .max_key = POS_H_MAX,
		.check_min = true,
	};
	struct btree_node_new n = {
		.btree_id = btree, .level = 0, .min_key = POS_H_MIN, .max_key = POS_H_MAX,
		.node_seq = 1, .ptr = { .dev = 0, .offset = 4096, .gen = 1 },
	};
	static struct keyset a, b;
	struct btree_node_buf nb;
	struct btree_node_h *rn;
	struct printbuf err = PRINTBUF;
	size_t i, ia = 0, ib = 0;

	memset(&key, 0x5a, sizeof(key));
	rctx.bucket_size[0] = 1024;
	random_keys(btree, &a, &b, 4096 + rnd() % 100000, 200);
	assert_int_equal(bch_btree_node_build(&ctx, &n, 0, a.k, a.nr, &nb, &err), 0);
	if (b.nr)
		assert_int_equal(bch_btree_node_append(&ctx, &nb, 0, b.k, b.nr, &err), 0);
	assert_true(nb.nr_packed > 0);

	{
		void *copy = xmalloc(nb.bytes);

		memcpy(copy, nb.data, nb.bytes);
		assert_int_equal(btree_node_parse(&rctx, &exp, copy, nb.bytes, "test", &rn, &err), 0);
	}
	if (rn->nr_errors)
		print_message("%s", printbuf_str(&err));
	assert_int_equal(rn->nr_errors, 0);
	assert_int_equal(rn->written, nb.written);
	/* merge of a and b by position; extents pieces could merge only when adjacent */
	if (btree != BTREE_ID_EXTENTS)
		assert_int_equal(rn->nr_keys, a.nr + b.nr);
	for (i = 0; i < rn->nr_keys && btree != BTREE_ID_EXTENTS; i++) {
		const struct bkey_ref *want;

		if (ib >= b.nr || (ia < a.nr && bpos_cmp(a.k[ia].k.p, b.k[ib].k.p) < 0))
			want = &a.k[ia++];
		else
			want = &b.k[ib++];
		assert_true(bpos_eq(rn->keys[i].k.p, want->k.p));
		assert_int_equal(rn->keys[i].k.u64s, want->k.u64s);
		assert_int_equal(rn->keys[i].k.version_lo, want->k.version_lo);
		assert_int_equal(rn->keys[i].v_bytes, want->v_bytes);
		if (want->v_bytes)
			assert_memory_equal(rn->keys[i].v, want->v, want->v_bytes);
	}
	if (btree == BTREE_ID_EXTENTS) {
		uint64_t sa = 0, sr = 0;

		for (i = 0; i < a.nr; i++)
			sa += a.k[i].k.size;
		for (i = 0; i < b.nr; i++)
			sa += b.k[i].k.size;
		for (i = 0; i < rn->nr_keys; i++)
			sr += rn->keys[i].k.size;
		assert_int_equal(sa, sr);
	}
	btree_node_free(rn);
	bch_btree_node_buf_exit(&nb);
	printbuf_exit(&err);
}

static void test_random_roundtrip(void **state)
{
	static const unsigned types[] = {
		BCH_CHECKSUM_NONE, BCH_CHECKSUM_CRC32C_NONZERO, BCH_CHECKSUM_CRC64_NONZERO,
		BCH_CHECKSUM_CHACHA20_POLY1305_128,
	};
	unsigned i, t;

	assert_int_equal(bch_crypto_init(), 0);
	for (i = 0; i < 40; i++)
		for (t = 0; t < ARRAY_SIZE(types); t++) {
			random_roundtrip(types[t], BTREE_ID_INODES + (i % 5), i & 1 ? 1 : 8);
			random_roundtrip(types[t], BTREE_ID_EXTENTS, i & 1 ? 1 : 8);
		}
}

/* ---- refusals ---- */

static void test_refusals(void **state)
{
	struct btree_write_ctx ctx = {
		.magic = 1, .block_sectors = 8, .node_sectors = 16,
		.csum_type = BCH_CHECKSUM_CRC32C_NONZERO,
	};
	struct btree_node_new n = {
		.btree_id = BTREE_ID_INODES, .min_key = POS_H(4096, 0), .max_key = POS_H(8000, 0),
	};
	static uint64_t big[200];
	struct bkey_ref k[3];
	struct btree_node_buf nb;
	struct printbuf err = PRINTBUF;

	k[0] = mk(5000, 0, 0, 0, 0);
	k[1] = mk(4097, 0, 0, 0, 0);
	assert_int_equal(bch_btree_node_build(&ctx, &n, 0, k, 2, &nb, &err), -EINVAL);
	assert_non_null(strstr(printbuf_str(&err), "out of order"));

	k[1] = mk(5000, 0, 0, 0, 0);		/* equal positions */
	assert_int_equal(bch_btree_node_build(&ctx, &n, 0, k, 2, &nb, &err), -EINVAL);

	k[1] = mk(9000, 0, 0, 0, 0);		/* past max_key */
	assert_int_equal(bch_btree_node_build(&ctx, &n, 0, k, 2, &nb, &err), -EINVAL);

	k[1] = mk(6000, 0, 0, 0, 0);
	k[1].k.u64s = 7;			/* value missing */
	assert_int_equal(bch_btree_node_build(&ctx, &n, 0, k, 2, &nb, &err), -EINVAL);

	ctx.csum_type = BCH_CHECKSUM_CHACHA20_POLY1305_128;	/* no key */
	assert_int_equal(bch_btree_node_build(&ctx, &n, 0, k, 1, &nb, &err), -ENOKEY);
	ctx.csum_type = BCH_CHECKSUM_CRC32C_NONZERO;

	/* fill the node: 8 KiB node, 4 KiB blocks */
	assert_int_equal(bch_btree_node_build(&ctx, &n, 0, NULL, 0, &nb, &err), 0);
	assert_int_equal(nb.written, 8);
	assert_int_equal(bch_btree_node_append(&ctx, &nb, 0, NULL, 0, &err), -EINVAL);
	k[0].v = big; k[0].v_bytes = 8 * 200; k[0].k.u64s = 205;
	assert_int_equal(bch_btree_node_append(&ctx, &nb, 3, k, 1, &err), 0);
	assert_int_equal(nb.written, 16);
	assert_int_equal(bch_btree_node_append(&ctx, &nb, 4, k, 1, &err), -ENOSPC);
	assert_int_equal(nb.written, 16);
	bch_btree_node_buf_exit(&nb);
	printbuf_exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_choice_table),
		cmocka_unit_test(test_packed_vector),
		cmocka_unit_test(test_golden_crc32c_rebuild),
		cmocka_unit_test(test_golden_encrypted_rebuild),
		cmocka_unit_test(test_random_roundtrip),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
