// SPDX-License-Identifier: GPL-2.0
/* Inode values: varint fields, pack/unpack, checks (doc/format.md §5.5, spec 20 §20.9.3). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "format/format.h"
#include "util/errcode.h"
#include "bkey/inode.h"
#include "util/util.h"

static const struct {
	uint64_t	v;
	unsigned	len;
	uint8_t		b[10];
} varints[] = {
	{ 0,			1, { 0x80 } },
	{ 1,			1, { 0x81 } },
	{ 63,			1, { 0xbf } },
	{ 64,			2, { 0x40, 0x40 } },
	{ 100,			2, { 0x40, 0x64 } },
	{ 128,			2, { 0x40, 0x80 } },
	{ 1000,			2, { 0x43, 0xe8 } },
	{ 8191,			2, { 0x5f, 0xff } },
	{ 8192,			3, { 0x20, 0x20, 0x00 } },
	{ 65536,		3, { 0x21, 0x00, 0x00 } },
	{ 1ULL << 27,		6, { 0x08, 0x00, 0x08, 0x00, 0x00, 0x00 } },
	{ 1ULL << 42,		8, { 0x04, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00 } },
	{ 1ULL << 57,		10, { 0x02, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0 } },
	{ UINT64_MAX,		10, { 0x02, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
};

static void test_varint_vectors(void **state)
{
	unsigned i, bits;
	uint8_t buf[16];
	uint64_t v;

	for (i = 0; i < ARRAY_SIZE(varints); i++) {
		memset(buf, 0xcc, sizeof(buf));
		assert_int_equal(bch_inode_varint_encode(varints[i].v, buf, sizeof(buf)),
				 varints[i].len);
		assert_memory_equal(buf, varints[i].b, varints[i].len);
		assert_int_equal(bch_inode_varint_decode(buf, buf + varints[i].len, &v, &bits),
				 varints[i].len);
		assert_true(v == varints[i].v);
		/* one byte short */
		assert_int_equal(bch_inode_varint_decode(buf, buf + varints[i].len - 1, &v, &bits), -1);
	}

	/* non-minimal encodings are accepted */
	buf[0] = 0xe4;
	assert_int_equal(bch_inode_varint_decode(buf, buf + 1, &v, &bits), 1);
	assert_int_equal(v, 100);
	buf[0] = 0x04; buf[1] = 0; buf[2] = 0; buf[3] = 0; buf[4] = 0; buf[5] = 0;
	buf[6] = 0; buf[7] = 5;
	assert_int_equal(bch_inode_varint_decode(buf, buf + 8, &v, &bits), 8);
	assert_int_equal(v, 5);

	/* zero first byte */
	buf[0] = 0;
	assert_int_equal(bch_inode_varint_decode(buf, buf + 8, &v, &bits), -1);

	/* 13-byte form carrying more than 64 bits */
	memset(buf, 0, 13);
	buf[0] = 0x01;
	buf[4] = 0x01;		/* bit 64 */
	assert_int_equal(bch_inode_varint_decode(buf, buf + 13, &v, &bits), 13);
	assert_int_equal(bits, 65);

	/* too small an output buffer */
	assert_int_equal(bch_inode_varint_encode(UINT64_MAX, buf, 9), 0);
}

/* The root inode value of 20 §20.9.3 (7 u64s). */
static const uint8_t root_val[56] = {
	0x7b, 0xdc, 0x31, 0x4e, 0xe5, 0xef, 0xf5, 0x3f, 0x00, 0x00, 0x20, 0x04, 0xed, 0x41,
	0x02, 0x00, 0xe7, 0x12, 0x56, 0x1e, 0x01, 0x81, 0x35, 0x4c,
	0x02, 0x00, 0xe7, 0x12, 0x56, 0x1e, 0x01, 0x81, 0x35, 0x4c,
	0x02, 0x00, 0xe7, 0x12, 0x56, 0x1e, 0x01, 0x81, 0x35, 0x4c,
	0x02, 0x00, 0xe7, 0x12, 0x56, 0x1e, 0x01, 0x81, 0x35, 0x4c,
	0x00, 0x00,
};

static struct bkey_ref ref(uint64_t inum, const void *v, unsigned bytes)
{
	struct bkey_ref r = {
		.k = { .u64s = 5 + bytes / 8, .type = BCH_INODE_FS, .p = POS_H(inum, 0) },
		.v = v, .v_bytes = bytes,
	};
	return r;
}

static void test_root_inode(void **state)
{
	struct bkey_ref k = ref(4096, root_val, sizeof(root_val));
	struct bch_inode_unpacked u;
	uint8_t out[BCH_INODE_VAL_BYTES_MAX];

	assert_int_equal(bch_inode_unpack(&k, &u), 0);
	assert_true(u.bi_inum == 4096);
	assert_true(u.bi_hash_seed == 0x3ff5efe54e31dc7bULL);
	assert_int_equal(u.bi_mode, 040755);
	assert_int_equal(bch_inode_str_hash(&u), 2);
	assert_true(u.bi_atime == 0xe712561e0181354cULL);
	assert_true(u.bi_otime == 0xe712561e0181354cULL);
	assert_int_equal(u.bi_size, 0);
	assert_int_equal(u.bi_nlink, 0);
	assert_int_equal(bch_inode_nlink_get(&u), 2);

	assert_int_equal(bch_inode_pack(&u, out), sizeof(root_val));
	assert_memory_equal(out, root_val, sizeof(root_val));
	assert_null(bch_inode_invalid(&k));
}

/* The worked example of 40 §40.5.3: 59 bytes padded to 64, NR_FIELDS 9. */
static void test_worked_example(void **state)
{
	static const uint8_t want[64] = {
		0xb0, 0x1e, 0x14, 0x96, 0x06, 0xb6, 0xd2, 0xf2, 0x00, 0x00, 0x20, 0x09, 0xed, 0x41,
		0x02, 0x00, 0xe7, 0x12, 0x56, 0x1d, 0x4c, 0x85, 0x9d, 0xeb,
		0x02, 0x00, 0xe7, 0x12, 0x56, 0x1d, 0x4c, 0x85, 0x9d, 0xeb,
		0x02, 0x00, 0xe7, 0x12, 0x56, 0x1d, 0x4c, 0x85, 0x9d, 0xeb,
		0x02, 0x00, 0xe7, 0x12, 0x56, 0x1d, 0x4c, 0x85, 0x9d, 0xeb,
		0x80, 0x80, 0x80, 0x80, 0x81, 0, 0, 0, 0, 0,
	};
	struct bch_inode_unpacked u, v;
	uint8_t out[BCH_INODE_VAL_BYTES_MAX];
	struct bkey_ref k;

	memset(&u, 0, sizeof(u));
	u.bi_hash_seed	= 0xf2d2b60696141eb0ULL;
	u.bi_flags	= 2U << 20;
	u.bi_mode	= 040755;
	u.bi_atime = u.bi_ctime = u.bi_mtime = u.bi_otime = 0xe712561d4c859debULL;
	u.bi_nlink	= 1;
	assert_int_equal(bch_inode_pack(&u, out), 64);
	assert_memory_equal(out, want, 64);
	assert_int_equal(out[11], 9);		/* NR_FIELDS */

	k = ref(4096, want, 64);
	assert_int_equal(bch_inode_unpack(&k, &v), 0);
	assert_int_equal(bch_inode_nlink_get(&v), 3);

	/* a regular file: size 65536, sectors 128, uid 1000, gid 100 */
	memset(&u, 0, sizeof(u));
	u.bi_mode = 0100644;
	u.bi_size = 65536;
	u.bi_sectors = 128;
	u.bi_uid = 1000;
	u.bi_gid = 100;
	u.bi_nlink = 1;
	assert_int_equal(bch_inode_pack(&u, out), 32);
	{
		static const uint8_t tail[] = { 0x80, 0x80, 0x80, 0x80, 0x21, 0x00, 0x00,
						0x40, 0x80, 0x43, 0xe8, 0x40, 0x64, 0x81 };
		assert_memory_equal(out + 14, tail, sizeof(tail));
	}
	assert_int_equal(out[11], 9);

	/* a symlink: size 13, 8 sectors -> 6 fields */
	memset(&u, 0, sizeof(u));
	u.bi_mode = 0120777;
	u.bi_size = 13;
	u.bi_sectors = 8;
	assert_int_equal(bch_inode_pack(&u, out), 24);
	assert_int_equal(out[11], 6);
	assert_int_equal(out[18], 0x8d);
	assert_int_equal(out[19], 0x88);

	/* all zero: no fields at all */
	memset(&u, 0, sizeof(u));
	assert_int_equal(bch_inode_pack(&u, out), 16);
	assert_int_equal(out[11], 0);
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t rnd_bits(unsigned width)
{
	unsigned b = rnd() % (width + 1);

	if (rnd() % 3 == 0)
		return 0;
	return b ? rnd() >> (64 - b) : 0;
}

static void test_random_round_trip(void **state)
{
	unsigned i;

	for (i = 0; i < 20000; i++) {
		struct bch_inode_unpacked u, v;
		uint8_t out[BCH_INODE_VAL_BYTES_MAX];
		struct bkey_ref k;
		size_t n;

		memset(&u, 0, sizeof(u));
		u.bi_inum	= 4096 + rnd() % 100000;
		u.bi_hash_seed	= rnd();
		u.bi_flags	= (uint32_t)(rnd() & 0x00f0007f) & ~(0xcU << 20);
		u.bi_mode	= (uint16_t)rnd();
#define x(name, bits)	u.name = (BCH_INODE_FIELD_T_##bits)rnd_bits(bits);
		BCH_INODE_FIELDS(x)
#undef x
		n = bch_inode_pack(&u, out);
		assert_int_equal(n % 8, 0);
		assert_true(n >= 16 && n <= BCH_INODE_VAL_BYTES_MAX);
		k = ref(u.bi_inum, out, n);
		assert_int_equal(bch_inode_unpack(&k, &v), 0);
		u.bi_flags = (u.bi_flags & 0x00ffffff) | (out[11] << 24);
		assert_memory_equal(&u, &v, sizeof(u));
	}
}

static void test_unpack_errors(void **state)
{
	uint8_t v[32];
	struct bch_inode_unpacked u;
	struct bkey_ref k;

	/* value shorter than 16 bytes */
	memcpy(v, root_val, 16);
	k = ref(4096, v, 8);
	assert_int_equal(bch_inode_unpack(&k, &u), -BCH_ERR_key_invalid);
	assert_string_equal(bch_inode_invalid(&k), "incorrect value size");

	/* a field running past the value: NR_FIELDS 4 but only 2 fields fit */
	memcpy(v, root_val, 32);
	k = ref(4096, v, 32);
	assert_int_equal(bch_inode_unpack(&k, &u), -BCH_ERR_key_invalid);
	assert_string_equal(bch_inode_invalid(&k), "invalid variable length fields");

	/* zero first byte */
	memcpy(v, root_val, 32);
	v[11] = 3;
	v[24] = 0;
	assert_int_equal(bch_inode_unpack(&k, &u), -BCH_ERR_key_invalid);

	/* value wider than its field: uid (field 6) of 33 bits */
	memset(v, 0, sizeof(v));
	v[11] = 7;
	memset(v + 14, 0x80, 6);
	v[20] = 0x04; v[21] = 0x00; v[22] = 0x00; v[23] = 0x01;	/* 8 bytes: 2^32 */
	memset(v + 24, 0, 4);
	v[24] = 0x00;
	k = ref(4096, v, 32);
	assert_int_equal(bch_inode_unpack(&k, &u), -BCH_ERR_key_invalid);
	v[23] = 0x00; v[27] = 0xff;	/* 255: fits */
	assert_int_equal(bch_inode_unpack(&k, &u), 0);
	assert_int_equal(u.bi_uid, 255);

	/* more fields than defined: extra ones are ignored */
	{
		struct bch_inode_unpacked w;
		uint8_t big[BCH_INODE_VAL_BYTES_MAX + 8];
		size_t n;

		memset(&w, 0, sizeof(w));
		w.bi_background_target = 7;
		n = bch_inode_pack(&w, big);
		big[11] = 20;
		big[n] = 0x85;
		k = ref(4096, big, n + 8);
		assert_int_equal(bch_inode_unpack(&k, &u), 0);
		assert_int_equal(u.bi_background_target, 7);
	}
}

static void test_invalid(void **state)
{
	uint8_t v[64];
	struct bch_inode_unpacked u;
	struct bkey_ref k;
	size_t n;

	memset(&u, 0, sizeof(u));
	u.bi_flags = 2U << 20;
	n = bch_inode_pack(&u, v);
	k = ref(4096, v, n);
	assert_null(bch_inode_invalid(&k));

	k.k.p.offset = 1;
	assert_string_equal(bch_inode_invalid(&k), "nonzero offset");
	k.k.p.offset = 0;
	k.k.p.inode = 4095;
	assert_string_equal(bch_inode_invalid(&k), "fs inode in blockdev range");
	k.k.p.inode = 4096;

	u.bi_flags = 3U << 20;
	n = bch_inode_pack(&u, v);
	assert_string_equal(bch_inode_invalid(&k), "invalid str hash type");

	u.bi_flags = 0;
	u.bi_data_checksum = 4;
	n = bch_inode_pack(&u, v);
	k = ref(4096, v, n);
	assert_string_equal(bch_inode_invalid(&k), "invalid data checksum type");
	u.bi_data_checksum = 3;
	u.bi_compression = 5;
	n = bch_inode_pack(&u, v);
	k = ref(4096, v, n);
	assert_string_equal(bch_inode_invalid(&k), "invalid data checksum type");
	u.bi_compression = 4;
	n = bch_inode_pack(&u, v);
	k = ref(4096, v, n);
	assert_null(bch_inode_invalid(&k));

	memset(v, 0, sizeof(v));
	k = ref(10, v, 80);
	k.k.type = BCH_INODE_BLOCKDEV;
	assert_null(bch_inode_invalid(&k));
	k.k.p.inode = 4096;
	assert_string_equal(bch_inode_invalid(&k), "blockdev inode in fs range");
	k.v_bytes = 72;
	assert_string_equal(bch_inode_invalid(&k), "incorrect value size");

	k = ref(4099, v, 8);
	k.k.type = BCH_INODE_GENERATION;
	assert_null(bch_inode_invalid(&k));
	k.v_bytes = 16;
	assert_string_equal(bch_inode_invalid(&k), "incorrect value size");
	k.k.type = 131;
	assert_string_equal(bch_inode_invalid(&k), "invalid type");
}

static void test_times_and_dev(void **state)
{
	/* stored -1 at precision 1 is one ns before the base */
	assert_true(bch_inode_time_to_ns(UINT64_MAX, 1000, 1) == 999);
	assert_true(bch_inode_ns_to_time(999, 1000, 1) == UINT64_MAX);
	assert_true(bch_inode_time_to_ns(5, 100, 10) == 150);
	/* blk 7,200 and chr 1,3 in glibc makedev encoding */
	assert_int_equal(bch_inode_dev_major(0x7c8), 7);
	assert_int_equal(bch_inode_dev_minor(0x7c8), 200);
	assert_int_equal(bch_inode_dev_major(259), 1);
	assert_int_equal(bch_inode_dev_minor(259), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint_vectors),
		cmocka_unit_test(test_root_inode),
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_random_round_trip),
		cmocka_unit_test(test_unpack_errors),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_times_and_dev),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
