// SPDX-License-Identifier: GPL-2.0
/* Key packing, unpacking, comparison and formats (doc/format.md §3.1-§3.4, spec 20 §20.9). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "format/format.h"
#include "bkey/bkey.h"
#include "util/errcode.h"
#include "util/util.h"

static struct bkey_format_h fmt(unsigned b0, unsigned b1, unsigned b2, unsigned b3,
				unsigned b4, unsigned b5, uint64_t o0, uint64_t o1,
				uint64_t o5)
{
	struct bkey_format_h f = {
		.nr_fields = 6,
		.bits = { b0, b1, b2, b3, b4, b5 },
		.offset = { o0, o1, 0, 0, 0, o5 },
	};

	f.key_u64s = DIV_ROUND_UP(24 + b0 + b1 + b2 + b3 + b4 + b5, 64);
	return f;
}

static struct bkey_h key(uint64_t inode, uint64_t offset, uint32_t size, uint8_t type,
			 unsigned val_u64s)
{
	struct bkey_h k = {
		.u64s = BKEY_U64s + val_u64s, .type = type, .size = size,
		.p = POS_H(inode, offset),
	};
	return k;
}

static void check_pack(const struct bkey_format_h *f, const struct bkey_h *k,
		       unsigned val_u64s, const uint8_t *want, size_t len)
{
	uint8_t buf[64] = { 0 };
	struct bkey_ref r;

	assert_true(bkey_format_valid(f, NULL));
	assert_true(bkey_pack(f, k, val_u64s, buf));
	assert_int_equal(len, f->key_u64s * 8);
	assert_memory_equal(buf, want, len);

	/* round trip */
	assert_int_equal(bkey_unpack(f, buf, sizeof(buf), &r, NULL), 0);
	assert_int_equal(r.k.u64s, BKEY_U64s + val_u64s);
	assert_int_equal(r.k.type, k->type);
	assert_true(bpos_eq(r.k.p, k->p));
	assert_int_equal(r.k.size, k->size);
	assert_int_equal(r.k.version_hi, k->version_hi);
	assert_true(r.k.version_lo == k->version_lo);
	assert_ptr_equal(r.v, buf + f->key_u64s * 8);
	assert_int_equal(r.v_bytes, val_u64s * 8);
}

/* 20.9.1: an unpacked btree root pointer */
static void test_unpacked_root_ptr(void **state)
{
	static const uint8_t k[48] = {
		0x06, 0x01, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x01, 0x40, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x01,
	};
	struct bkey_ref r;
	uint8_t out[40];

	assert_int_equal(bkey_unpack(NULL, k, sizeof(k), &r, NULL), 0);
	assert_int_equal(r.k.u64s, 6);
	assert_int_equal(r.k.type, 128);
	assert_true(bpos_eq(r.k.p, POS_H_MAX));
	assert_int_equal(r.k.size, 0);
	assert_int_equal(r.v_bytes, 8);
	assert_true(get_le64_unaligned(r.v) == 0x01000000000a4001ULL);

	bkey_h_to_disk(&r.k, out);
	assert_memory_equal(out, k, 40);
}

/* 20.9.2 (a) */
static void test_pack_a(void **state)
{
	struct bkey_format_h f = fmt(8, 16, 0, 16, 0, 0, 4096, 0, 0);
	struct bkey_h k1 = key(4100, 1000, 16, 128, 2);
	struct bkey_h k2 = key(4096, 8, 8, 128, 1);
	struct bkey_h k3 = key(4096, 136, 128, 128, 1);
	static const uint8_t w1[] = { 0x03, 0x00, 0x80, 0x10, 0x00, 0xe8, 0x03, 0x04 };
	static const uint8_t w2[] = { 0x02, 0x00, 0x80, 0x08, 0x00, 0x08, 0x00, 0x00 };
	static const uint8_t w3[] = { 0x02, 0x00, 0x80, 0x80, 0x00, 0x88, 0x00, 0x00 };
	static const uint8_t raw[56] = { 0x01, 0x06, 0x08, 0x10, 0x00, 0x10, 0x00, 0x00,
					 0x00, 0x10 };
	struct bkey_format_h d;
	uint8_t enc[56];

	assert_int_equal(f.key_u64s, 1);
	check_pack(&f, &k1, 2, w1, 8);
	check_pack(&f, &k2, 1, w2, 8);
	check_pack(&f, &k3, 1, w3, 8);

	assert_int_equal(bkey_format_decode(raw, &d, NULL), 0);
	assert_memory_equal(&d, &f, sizeof(d));
	bkey_format_encode(&f, enc);
	assert_memory_equal(enc, raw, 56);
}

/* 20.9.2 (b): the start-offset rule */
static void test_pack_b(void **state)
{
	struct bkey_format_h f = fmt(8, 16, 0, 16, 0, 0, 0, 100, 0);
	struct bkey_h k1 = key(7, 170, 60, 128, 1);
	struct bkey_h k2 = key(7, 150, 60, 128, 1);
	struct bkey_h k3 = key(300, 170, 60, 128, 1);
	static const uint8_t w1[] = { 0x02, 0x00, 0x80, 0x3c, 0x00, 0x46, 0x00, 0x07 };
	uint8_t buf[8];

	check_pack(&f, &k1, 1, w1, 8);
	assert_false(bkey_pack(&f, &k2, 1, buf));
	assert_false(bkey_pack(&f, &k3, 1, buf));
}

/* 20.9.2 (c): a field spanning two words */
static void test_pack_c(void **state)
{
	struct bkey_format_h f = fmt(48, 48, 0, 0, 0, 0, 0, 0, 0);
	struct bkey_h k = key(0xffffffffffffULL, 0x123456789abcULL, 0, 128, 1);
	static const uint8_t w[] = { 0x03, 0x00, 0x80, 0x00, 0xbc, 0x9a, 0x78, 0x56,
				     0x34, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	assert_int_equal(f.key_u64s, 2);
	check_pack(&f, &k, 1, w, 16);
}

/* 20.9.2 (d): versions */
static void test_pack_d(void **state)
{
	struct bkey_format_h f = fmt(0, 16, 0, 0, 1, 17, 1, 0, 5);
	struct bkey_h k1 = key(1, 300, 0, 128, 0);
	struct bkey_h k2 = key(1, 2, 0, 128, 0);
	static const uint8_t w1[] = { 0x01, 0x00, 0x80, 0xc0, 0x5a, 0xc4, 0x2c, 0x01 };
	static const uint8_t w2[] = { 0x01, 0x00, 0x80, 0x00, 0x00, 0x00, 0x02, 0x00 };

	k1.version_hi = 1;
	k1.version_lo = 70000;
	k2.version_lo = 5;
	check_pack(&f, &k1, 0, w1, 8);
	check_pack(&f, &k2, 0, w2, 8);
}

/* 20.9.2 (e) */
static void test_pack_e(void **state)
{
	struct bkey_format_h f = fmt(13, 64, 0, 0, 0, 0, 0, 0, 0);
	struct bkey_h k = key(4134, 1250629070527416633ULL, 0, 0, 0);
	static const uint8_t w[] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc8, 0x49,
				     0x82, 0xb4, 0x1b, 0x04, 0xd9, 0x8a, 0x30, 0x81 };

	assert_int_equal(f.key_u64s, 2);
	check_pack(&f, &k, 0, w, 16);
}

/* 20.9.2 (f): the identity format */
static void test_pack_identity(void **state)
{
	static const uint8_t w[40] = {
		0x05, 0x00, 0x80, 0x00, 0x58, 0x57, 0x56, 0x55, 0x54, 0x53, 0x52, 0x51,
		0x44, 0x43, 0x42, 0x41, 0x24, 0x23, 0x22, 0x21, 0x34, 0x33, 0x32, 0x31,
		0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11,
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
	};
	struct bkey_h k = key(0x0102030405060708ULL, 0x1112131415161718ULL,
			      0x21222324, 128, 0);
	uint8_t unpacked[40];
	struct bkey_ref r;

	k.p.snapshot = 0x31323334;
	k.version_hi = 0x41424344;
	k.version_lo = 0x5152535455565758ULL;
	check_pack(&bkey_format_identity, &k, 0, w, 40);

	bkey_h_to_disk(&k, unpacked);
	assert_int_equal(unpacked[1], 1);
	unpacked[1] = 0;
	assert_memory_equal(unpacked, w, 40);

	/* the unpacked form parses without a format */
	unpacked[1] = 1;
	assert_int_equal(bkey_unpack(NULL, unpacked, 40, &r, NULL), 0);
	assert_true(r.k.version_lo == k.version_lo);
	assert_int_equal(r.k.p.snapshot, 0x31323334);
}

/* 20.9.2 (g): a real leaf key */
static void test_pack_g(void **state)
{
	static const uint8_t raw[56] = { 0x01, 0x06, 0x10, 0, 0, 0, 0, 0,
					 0xff, 0x43 };
	uint8_t k[72] = { 0x09, 0x00, 0x80, 0x00, 0x00, 0x00, 0x06, 0x00 };
	struct bkey_format_h f;
	struct bkey_ref r;

	assert_int_equal(bkey_format_decode(raw, &f, NULL), 0);
	assert_int_equal(bkey_unpack(&f, k, sizeof(k), &r, NULL), 0);
	assert_int_equal(r.k.u64s, 13);		/* unpacked size: 5 + 8 */
	assert_int_equal(r.k.type, 128);
	assert_true(r.k.p.inode == 17413);
	assert_true(r.k.p.offset == 0);
	assert_int_equal(r.v_bytes, 64);
	assert_int_equal(bkey_packed_bytes(k, sizeof(k)), 72);
}

static void test_format_invalid(void **state)
{
	struct bkey_format_h f = fmt(8, 16, 0, 16, 0, 0, 4096, 0, 0);
	struct printbuf err = PRINTBUF;
	uint8_t raw[56];

	f.nr_fields = 5;
	assert_false(bkey_format_valid(&f, &err));
	assert_non_null(strstr(printbuf_str(&err), "incorrect number of fields"));

	f = fmt(8, 16, 0, 16, 0, 0, 4096, 0, 0);
	f.bits[1] = 65;
	printbuf_reset(&err);
	assert_false(bkey_format_valid(&f, &err));
	assert_non_null(strstr(printbuf_str(&err), "field too large"));

	f = fmt(64, 0, 0, 0, 0, 0, 1, 0, 0);
	printbuf_reset(&err);
	assert_false(bkey_format_valid(&f, &err));
	assert_non_null(strstr(printbuf_str(&err), "offset + bits overflow"));

	f = fmt(8, 0, 0, 0, 0, 0, UINT64_MAX - 254, 0, 0);
	printbuf_reset(&err);
	assert_false(bkey_format_valid(&f, &err));
	assert_non_null(strstr(printbuf_str(&err), "offset + bits overflow"));
	f.offset[0] = UINT64_MAX - 255;
	assert_true(bkey_format_valid(&f, NULL));

	f = fmt(8, 16, 0, 16, 0, 0, 4096, 0, 0);
	f.key_u64s = 2;		/* a spare u64 is not allowed */
	printbuf_reset(&err);
	assert_false(bkey_format_valid(&f, &err));
	assert_non_null(strstr(printbuf_str(&err), "incorrect key_u64s"));
	bkey_format_encode(&f, raw);
	assert_int_equal(bkey_format_decode(raw, &f, NULL), -BCH_ERR_btree_node_invalid);

	assert_true(bkey_format_valid(&bkey_format_identity, NULL));
	printbuf_exit(&err);
}

static void test_unpack_malformed(void **state)
{
	struct bkey_format_h f = fmt(8, 16, 0, 16, 0, 0, 4096, 0, 0);
	struct bkey_format_h f2 = fmt(48, 48, 0, 0, 0, 0, 0, 0, 0);
	struct printbuf err = PRINTBUF;
	uint8_t k[48] = { 0 };
	struct bkey_ref r;
	unsigned fmtb;

	/* u64s 0 */
	assert_int_equal(bkey_unpack(&f, k, sizeof(k), &r, &err), -BCH_ERR_key_invalid);

	/* unpacked key with u64s < 5 */
	k[0] = 4; k[1] = 1;
	printbuf_reset(&err);
	assert_int_equal(bkey_unpack(&f, k, sizeof(k), &r, &err), -BCH_ERR_key_invalid);
	assert_non_null(strstr(printbuf_str(&err), "u64s too small"));

	/* packed key shorter than the format's key_u64s */
	k[0] = 1; k[1] = 0;
	printbuf_reset(&err);
	assert_int_equal(bkey_unpack(&f2, k, sizeof(k), &r, &err), -BCH_ERR_key_invalid);
	assert_non_null(strstr(printbuf_str(&err), "u64s too small"));

	/* format byte 2..127 (needs_whiteout bit ignored) */
	for (fmtb = 2; fmtb < 128; fmtb++) {
		k[0] = 6; k[1] = fmtb;
		assert_int_equal(bkey_unpack(&f, k, sizeof(k), &r, NULL), -BCH_ERR_key_invalid);
		k[1] = fmtb | 0x80;
		assert_int_equal(bkey_unpack(&f, k, sizeof(k), &r, NULL), -BCH_ERR_key_invalid);
	}

	/* key longer than the bytes available */
	k[0] = 6; k[1] = 1;
	assert_int_equal(bkey_unpack(&f, k, 47, &r, NULL), -BCH_ERR_key_invalid);
	assert_int_equal(bkey_unpack(&f, k, 48, &r, NULL), 0);
	assert_int_equal(bkey_unpack(&f, k, 7, &r, NULL), -BCH_ERR_key_invalid);
	assert_int_equal(bkey_unpack(&f, k, 0, &r, NULL), -BCH_ERR_key_invalid);
	assert_int_equal(bkey_packed_bytes(k, 0), 0);

	/* packed key but no usable format */
	k[0] = 1; k[1] = 0;
	assert_int_equal(bkey_unpack(NULL, k, 8, &r, NULL), -BCH_ERR_key_invalid);

	/* a 255-u64 packed key would unpack to more than 255 u64s */
	{
		static uint8_t big[255 * 8];

		big[0] = 255; big[1] = 0;
		assert_int_equal(bkey_unpack(&f, big, sizeof(big), &r, NULL), -BCH_ERR_key_invalid);
		assert_int_equal(bkey_unpack(&bkey_format_identity, big, sizeof(big), &r, NULL), 0);
		assert_int_equal(r.k.u64s, 255);
	}

	/* needs_whiteout is decoded */
	k[0] = 5; k[1] = 0x81;
	assert_int_equal(bkey_unpack(&f, k, 40, &r, NULL), 0);
	assert_true(r.k.needs_whiteout);

	/* a packed field too wide for its unpacked width (snapshot, 33 bits) */
	{
		struct bkey_format_h w = fmt(0, 0, 33, 0, 0, 0, 0, 0, 0);
		uint8_t kk[8] = { 1, 0, 0, 0, 0, 0, 0, 0x80 };

		assert_true(bkey_format_valid(&w, NULL));
		assert_int_equal(bkey_unpack(&w, kk, 8, &r, NULL), -BCH_ERR_key_invalid);
	}
	printbuf_exit(&err);
}

static void test_successor(void **state)
{
	struct bpos_h p = POS_H(5, UINT64_MAX), s;

	s = bpos_successor(BTREE_ID_EXTENTS, p);
	assert_true(bpos_eq(s, p));
	s = bpos_successor(BTREE_ID_INODES, POS_H(17406, 0));
	assert_true(bpos_eq(s, POS_H(17407, 0)));
	s = bpos_successor(BTREE_ID_DIRENTS, p);
	assert_true(bpos_eq(s, POS_H(6, 0)));
	s = bpos_successor(BTREE_ID_ALLOC, POS_H(0, 34));
	assert_true(bpos_eq(s, POS_H(0, 35)));
}

/* ---- random round trips ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static uint64_t mask(unsigned bits)
{
	return bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
}

static struct bkey_format_h random_format(void)
{
	static const unsigned width[6] = { 64, 64, 32, 32, 32, 64 };
	struct bkey_format_h f = { .nr_fields = 6 };
	unsigned i, total = 24;

	for (i = 0; i < 6; i++) {
		unsigned b = rnd() % 4 ? rnd() % (width[i] + 1) : 0;
		uint64_t room = mask(width[i]) - mask(b);	/* max offset */

		f.bits[i] = b;
		f.offset[i] = b == 64 || !room || rnd() % 2 ? 0 :
			room == UINT64_MAX ? rnd() : rnd() % (room + 1);
		total += b;
	}
	f.key_u64s = DIV_ROUND_UP(total, 64);
	return f;
}

static uint64_t field_val(const struct bkey_format_h *f, unsigned i)
{
	uint64_t m = mask(f->bits[i]);
	uint64_t v = rnd() & m;

	/* bias towards the edges of the range */
	switch (rnd() % 8) {
	case 0: v = 0; break;
	case 1: v = m; break;
	}
	return f->offset[i] + v;
}

static struct bkey_h random_key(const struct bkey_format_h *f)
{
	struct bkey_h k = { .type = rnd() & 0xff };

	k.p.inode	= field_val(f, 0);
	k.p.offset	= field_val(f, 1);
	k.p.snapshot	= (uint32_t)field_val(f, 2);
	k.size		= (uint32_t)field_val(f, 3);
	k.version_hi	= (uint32_t)field_val(f, 4);
	k.version_lo	= field_val(f, 5);
	return k;
}

static void test_random_round_trip(void **state)
{
	unsigned i, nr_packed = 0;
	uint8_t prev[64] = { 0 }, buf[64];
	struct bkey_h prev_k = { 0 };
	struct bkey_format_h f = random_format();

	for (i = 0; i < 200000; i++) {
		struct bkey_h k;
		unsigned val_u64s;
		bool can, ok;
		struct bkey_ref r;

		if (!(i % 64)) {
			f = random_format();
			assert_true(bkey_format_valid(&f, NULL));
			memset(prev, 0, sizeof(prev));
			prev_k = (struct bkey_h) { 0 };
			prev_k.p = POS_H(f.offset[0], f.offset[1]);
			prev_k.p.snapshot = f.offset[2];
			prev_k.size = f.offset[3];
			prev_k.version_hi = f.offset[4];
			prev_k.version_lo = f.offset[5];
			assert_true(bkey_pack(&f, &prev_k, 0, prev) ==
				    (prev_k.p.offset - prev_k.size >= f.offset[1]));
		}
		k = random_key(&f);
		val_u64s = rnd() % 4;
		can = k.p.offset - k.size >= f.offset[1];

		memset(buf, 0xaa, sizeof(buf));
		ok = bkey_pack(&f, &k, val_u64s, buf);
		assert_int_equal(ok, can);
		if (!ok)
			continue;
		nr_packed++;

		assert_int_equal(buf[0], f.key_u64s + val_u64s);
		assert_int_equal(buf[1], 0);
		assert_int_equal(buf[2], k.type);
		assert_int_equal(bkey_unpack(&f, buf, f.key_u64s * 8 + val_u64s * 8, &r, NULL), 0);
		assert_int_equal(r.k.u64s, 5 + val_u64s);
		assert_int_equal(r.k.type, k.type);
		assert_true(r.k.p.inode == k.p.inode);
		assert_true(r.k.p.offset == k.p.offset);
		assert_int_equal(r.k.p.snapshot, k.p.snapshot);
		assert_int_equal(r.k.size, k.size);
		assert_int_equal(r.k.version_hi, k.version_hi);
		assert_true(r.k.version_lo == k.version_lo);

		/* packed comparison agrees with position comparison */
		if (prev[0]) {
			int c1 = bkey_packed_cmp(&f, prev, buf);
			int c2 = bpos_cmp(prev_k.p, k.p);

			assert_int_equal(c1, c2);
			assert_int_equal(bkey_packed_cmp(&f, buf, prev), -c2);
		}
		assert_int_equal(bkey_packed_cmp(&f, buf, buf), 0);
		memcpy(prev, buf, sizeof(buf));
		prev_k = k;
	}
	assert_true(nr_packed > 100000);
}

/* Keys that differ only in non-position fields compare equal when packed. */
static void test_packed_cmp_position_only(void **state)
{
	struct bkey_format_h f = fmt(16, 16, 0, 16, 0, 17, 0, 0, 0);
	struct bkey_h a = key(7, 100, 5, 128, 0), b = key(7, 100, 9, 3, 0);
	uint8_t pa[40], pb[40];

	assert_int_equal(f.key_u64s, 2);

	b.version_lo = 99999;
	assert_true(bkey_pack(&f, &a, 0, pa));
	assert_true(bkey_pack(&f, &b, 0, pb));
	assert_int_equal(bkey_packed_cmp(&f, pa, pb), 0);
	b.p.offset = 101;
	assert_true(bkey_pack(&f, &b, 0, pb));
	assert_int_equal(bkey_packed_cmp(&f, pa, pb), -1);

	/* zero-width positions: all equal */
	f = fmt(0, 0, 0, 8, 0, 0, 0, 0, 0);
	a = key(0, 0, 5, 128, 0);
	b = key(0, 0, 6, 128, 0);
	assert_true(bkey_pack(&f, &a, 0, pa));	/* start 0 - 5 wraps: only the lower bound counts */
	assert_true(bkey_pack(&f, &b, 0, pb));
	assert_int_equal(bkey_packed_cmp(&f, pa, pb), 0);
	a.p.offset = 1;
	assert_false(bkey_pack(&f, &a, 0, pa));	/* offset needs a bit */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unpacked_root_ptr),
		cmocka_unit_test(test_pack_a),
		cmocka_unit_test(test_pack_b),
		cmocka_unit_test(test_pack_c),
		cmocka_unit_test(test_pack_d),
		cmocka_unit_test(test_pack_e),
		cmocka_unit_test(test_pack_identity),
		cmocka_unit_test(test_pack_g),
		cmocka_unit_test(test_format_invalid),
		cmocka_unit_test(test_unpack_malformed),
		cmocka_unit_test(test_successor),
		cmocka_unit_test(test_random_round_trip),
		cmocka_unit_test(test_packed_cmp_position_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
