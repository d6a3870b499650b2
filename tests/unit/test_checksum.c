// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for libbcachefs/checksum.c: CRC-32C and CRC-64 (spec 10 §3.5,
 * doc/format.md §7), checksum types, nonces (doc/format.md §7.5, §6.4) and
 * the spec's node, journal and superblock vectors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/checksum.h"
#include "codec/crypto.h"

/* ---- helpers ------------------------------------------------------------- */


struct hexline {
	size_t		off;
	const char	*hex;
};

/* Zero @buf and fill in the given lines (a sparse dump). */
static void fill_sparse(uint8_t *buf, size_t size, const struct hexline *l,
			size_t nr)
{
	memset(buf, 0, size);
	for (size_t i = 0; i < nr; i++) {
		assert_true(l[i].off < size);
		hex2bin(l[i].hex, buf + l[i].off, size - l[i].off);
	}
}

static struct bch_csum_val csum(unsigned type, const void *p, size_t len)
{
	struct bch_csum_val v;
	struct bch_nonce n = { { 0 } };

	assert_int_equal(bch_checksum(type, n, NULL, p, len, &v), 0);
	return v;
}

static uint64_t rnd64(void)
{
	return (uint64_t) random() << 33 ^ (uint64_t) random() << 11 ^
		(uint64_t) random();
}

static void fill_random(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = random();
}

/* ---- CRC tables and check values -------------------------------------- */

static void test_tables(void **state)
{
	(void) state;
	uint8_t b;

	/* T[i] = raw CRC of the single byte i from 0 (doc/format.md §7.2) */
	b = 1;
	assert_int_equal(crc32c(0, &b, 1), 0xF26B8303);
	assert_int_equal(crc32c_sw(0, &b, 1), 0xF26B8303);
	b = 128;
	assert_int_equal(crc32c(0, &b, 1), 0x82F63B78);
	b = 1;
	assert_true(crc64(0, &b, 1) == 0x42F0E1EBA9EA3693ULL);
	b = 255;
	assert_true(crc64(0, &b, 1) == 0x9AFCE626CE85B507ULL);
}

/* spec 10 §3.5 table; doc/format.md §7.2 */
static void test_spec_check_values(void **state)
{
	(void) state;
	static const struct {
		const char	*in;
		size_t		len;
		uint32_t	t1, t5;
		uint64_t	t2, t6;
	} v[] = {
		{ "123456789", 9, 0xE3069283, 0x58E3FA20,
		  0x62EC59E3F1A4F00AULL, 0x6C40DF5F0B497347ULL },
		{ "bcachefs", 8, 0xEA51E86C, 0x66795AE6,
		  0x536E7689B561AA6EULL, 0x503D37CB13AFFC03ULL },
		{ NULL, 32, 0x8A9136AA, 0,
		  0x30CCAB3E861F5A93ULL, 0 },
		{ "", 0, 0, 0, 0, 0 },
	};
	uint8_t zeros[32] = { 0 };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const void *p = v[i].in ? (const void *) v[i].in : zeros;

		assert_true(csum(1, p, v[i].len).lo == v[i].t1);
		assert_true(csum(5, p, v[i].len).lo == v[i].t5);
		assert_true(csum(2, p, v[i].len).lo == v[i].t2);
		assert_true(csum(6, p, v[i].len).lo == v[i].t6);
		assert_true(csum(1, p, v[i].len).hi == 0);
		assert_true(csum(2, p, v[i].len).hi == 0);
		assert_true(csum(0, p, v[i].len).lo == 0);
		assert_true(csum(0, p, v[i].len).hi == 0);
	}

	/* the raw update convention */
	assert_int_equal(~crc32c(~0U, "123456789", 9), 0xE3069283);
	assert_int_equal(crc32c(0, "123456789", 9), 0x58E3FA20);
	assert_true(~crc64(~0ULL, "123456789", 9) == 0x62EC59E3F1A4F00AULL);
}

/* doc/format.md §7.2 (4096 zero bytes) and doc/format.md §7.6 (real extent) */
static void test_data_vectors(void **state)
{
	(void) state;
	uint8_t *buf = calloc(1, 4096);

	assert_non_null(buf);
	assert_true(csum(1, buf, 4096).lo == 0x98F94189);
	assert_true(csum(2, buf, 4096).lo == 0xA50F57A429CBCB64ULL);
	assert_true(csum(5, buf, 4096).lo == 0);
	assert_true(csum(6, buf, 4096).lo == 0);

	memcpy(buf, "subdir/rand8k", 13);
	assert_true(csum(5, buf, 4096).lo == 0x003FE1E2);
	assert_true(csum(6, buf, 4096).lo == 0x511BA6CFE4C56184ULL);
	assert_true(csum(1, buf, 4096).lo == 0x98C6A06B);
	assert_true(csum(2, buf, 4096).lo == 0xF414F16BCD0EAAE0ULL);
	free(buf);
}

/* ---- superblock vectors (spec 10 §3.5) -------------------------------- */

static const struct hexline sb_a[] = {
	{ 0x000, "82 1c 18 3e 00 00 00 00 00 00 00 00 00 00 00 00" },
	{ 0x010, "09 00 00 00 00 00 00 00 c6 85 73 f6 4e 1a 45 ca" },
	{ 0x020, "82 65 f5 7f 48 ba 6d 81 1a 36 2f fc af 12 47 5a" },
	{ 0x030, "b5 e8 7d ef 37 10 b8 e8 98 92 b2 eb 3d e6 40 63" },
	{ 0x040, "92 d4 7a 6c 9c 91 db ae 00 00 00 00 00 00 00 00" },
	{ 0x060, "00 00 00 00 00 00 00 00 08 00 00 00 00 00 00 00" },
	{ 0x070, "00 00 00 00 00 00 00 00 08 00 00 01 08 00 00 00" },
	{ 0x080, "5d ce 1e 4a 8c ac ed 18 00 00 00 00 01 00 00 00" },
	{ 0x090, "04 01 10 80 00 11 11 01 02 c0 11 01 00 00 00 00" },
	{ 0x0f0, "c6 85 73 f6 4e 1a 45 ca 82 65 f5 7f 48 ba 6d 81" },
	{ 0x100, "00 07 02 00 00 00 00 00 08 00 00 00 00 00 00 00" },
	{ 0x110, "88 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00" },
	{ 0x2f0, "08 00 00 00 01 00 00 00 27 0c 82 8a f0 6f 4f 3a" },
	{ 0x300, "91 c2 76 a1 94 4c b7 0c 00 20 00 00 00 00 00 00" },
	{ 0x310, "00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00" },
	{ 0x320, "00 00 0e 20 00 00 00 00 00 00 00 00 00 00 00 00" },
};

static const struct hexline sb_b[] = {
	{ 0x000, "7a 45 91 0a 33 c4 b1 86 00 00 00 00 00 00 00 00" },
	{ 0x010, "09 00 00 00 00 00 00 00 c6 85 73 f6 4e 1a 45 ca" },
	{ 0x020, "82 65 f5 7f 48 ba 6d 81 5d 67 86 75 5c c3 4c 90" },
	{ 0x030, "90 ac 87 67 f5 8d 68 d3 11 11 11 11 22 22 33 33" },
	{ 0x040, "44 44 55 55 55 55 55 55 74 65 73 74 00 00 00 00" },
	{ 0x060, "00 00 00 00 00 00 00 00 08 00 00 00 00 00 00 00" },
	{ 0x070, "00 00 00 00 00 00 00 00 08 00 00 01 08 00 00 00" },
	{ 0x080, "d2 80 21 19 f5 ac ed 18 00 00 00 00 01 00 00 00" },
	{ 0x090, "08 01 10 80 00 12 11 01 02 c0 11 01 00 00 00 00" },
	{ 0x0f0, "c6 85 73 f6 4e 1a 45 ca 82 65 f5 7f 48 ba 6d 81" },
	{ 0x100, "00 07 02 00 00 00 00 00 08 00 00 00 00 00 00 00" },
	{ 0x110, "88 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00" },
	{ 0x2f0, "08 00 00 00 01 00 00 00 d8 01 ca 55 26 0b 4b b4" },
	{ 0x300, "b6 0c dd 5b 69 56 04 8f 00 40 00 00 00 00 00 00" },
	{ 0x310, "00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00" },
	{ 0x320, "00 40 0e 30 00 00 00 00 00 00 00 00 00 00 00 00" },
};

/* golden c1_encrypted, superblock as written by format (sector 8, 880 B) */
static const struct hexline sb_c1[] = {
	{ 0x000, "c093426c000000000000000000000000" },
	{ 0x010, "0900000000000000c68573f64e1a45ca" },
	{ 0x020, "8265f57f48ba6d81a1045ee9b42646ef" },
	{ 0x030, "96f28b7b01f80a0fde76fc26bb5c4bed" },
	{ 0x040, "be0f94699a2b22350000000000000000" },
	{ 0x060, "00000000000000000800000000000000" },
	{ 0x070, "00000000000000000800000110000000" },
	{ 0x080, "22add045a7aded180000000001000000" },
	{ 0x090, "040110800011110102c4110100000000" },
	{ 0x0f0, "c68573f64e1a45ca8265f57f48ba6d81" },
	{ 0x100, "00070200000000000800000000000000" },
	{ 0x110, "88000000000000000000000000000000" },
	{ 0x2f0, "0800000001000000bfe6404bd1784416" },
	{ 0x300, "9e089f75c28d80440020000000000000" },
	{ 0x310, "00000001000000000000000000000000" },
	{ 0x320, "00000e20000000000000000000000000" },
	{ 0x330, "08000000020000000000000000000000" },
	{ 0x340, "0e00030004000000f4e6d0140ebb8948" },
	{ 0x350, "ca8d50efc0d61e6735d925367797506b" },
	{ 0x360, "6ad1742a2e3dbfa51f2eb42417b4c78d" },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_superblock_vectors(void **state)
{
	(void) state;
	uint8_t sb[880];
	struct bch_csum_val v;

	fill_sparse(sb, 816, sb_a, ARRAY_SIZE(sb_a));
	v = csum(1, sb + 16, 816 - 16);
	assert_true(v.lo == 0x3E181C82 && v.hi == 0);
	assert_true(bch_csum_eq(v, bch_csum_from_bytes(sb)));
	/* the backup copy: offset 136 */
	sb[0x68] = 0x88;
	assert_true(csum(1, sb + 16, 816 - 16).lo == 0x56D865C2);

	fill_sparse(sb, 816, sb_b, ARRAY_SIZE(sb_b));
	v = csum(2, sb + 16, 816 - 16);
	assert_true(v.lo == 0x86B1C4330A91457AULL && v.hi == 0);
	assert_true(bch_csum_eq(v, bch_csum_from_bytes(sb)));

	/* c1_encrypted: 752 + 8 * 16 u64s, crypt field included */
	fill_sparse(sb, 880, sb_c1, ARRAY_SIZE(sb_c1));
	v = csum(1, sb + 16, 880 - 16);
	assert_true(bch_csum_eq(v, bch_csum_from_bytes(sb)));
	assert_true(v.lo == 0x6c4293c0);
}

/* ---- btree node vectors (spec 20 §20.9.3, §20.9.4) --------------------- */

static const struct hexline node_crc32c_b0[] = {
	{ 0x000, "3d ed 4c 38 00 00 00 00 00 00 00 00 00 00 00 00" },
	{ 0x010, "93 90 50 53 78 c9 52 ee 01 00 00 00 01 00 00 00" },
	{ 0x030, "00 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff" },
	{ 0x040, "ff ff ff ff ff ff ff ff 01 40 0a 00 00 00 00 01" },
	{ 0x050, "01 06 00 00 00 00 00 00 00 00 00 00 00 00 00 00" },
	{ 0x088, "f1 8a 0e 00 c6 77 4e dd" },
	{ 0x090, "00 00 00 00 00 00 00 00 01 00 00 00 03 00 00 00" },
};

static const struct hexline node_crc32c_b1[] = {
	{ 0x000, "68 65 e1 2a 00 00 00 00 00 00 00 00 00 00 00 00" },
	{ 0x010, "f1 8a 0e 00 c6 77 4e dd 02 00 00 00 00 00 00 00" },
	{ 0x020, "01 00 00 00 03 00 0c 00" },
	{ 0x028, "0c 01 80 00 00 00 00 00 00 00 00 00 00 00 00 00" },
	{ 0x048, "00 10 00 00 00 00 00 00" },
	{ 0x050, "7b dc 31 4e e5 ef f5 3f 00 00 20 04 ed 41 02 00" },
	{ 0x060, "e7 12 56 1e 01 81 35 4c 02 00 e7 12 56 1e 01 81" },
	{ 0x070, "35 4c 02 00 e7 12 56 1e 01 81 35 4c 02 00 e7 12" },
	{ 0x080, "56 1e 01 81 35 4c 00 00" },
};

static const struct hexline node_crc64[] = {
	{ 0x000, "0a f2 e8 d2 b0 5c 83 e9 00 00 00 00 00 00 00 00" },
	{ 0x010, "46 e1 14 ed 13 3a 55 d0 01 00 00 00 01 00 00 00" },
	{ 0x038, "ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff" },
	{ 0x048, "01 70 06 00 00 00 00 01 01 06" },
	{ 0x088, "71 a3 73 39 dd 6b 1f 6b 00 00 00 00 00 00 00 00"
		 "02 00 00 00 03 00 00 00" },
};

static void test_node_vectors(void **state)
{
	(void) state;
	uint8_t node[160];
	struct bch_csum_val v;

	fill_sparse(node, 160, node_crc32c_b0, ARRAY_SIZE(node_crc32c_b0));
	v = csum(1, node + 16, 160 - 16);
	assert_true(v.lo == 0x384ced3d && v.hi == 0);
	assert_true(bch_csum_eq(v, bch_csum_from_bytes(node)));

	/* second bset at 4096: bytes 4112..4231 (40 + 12 * 8 = 136 bytes) */
	fill_sparse(node, 136, node_crc32c_b1, ARRAY_SIZE(node_crc32c_b1));
	v = csum(1, node + 16, 136 - 16);
	assert_true(v.lo == 0x2ae16568);
	assert_true(bch_csum_eq(v, bch_csum_from_bytes(node)));

	fill_sparse(node, 160, node_crc64, ARRAY_SIZE(node_crc64));
	v = csum(2, node + 16, 160 - 16);
	assert_true(v.lo == 0xe9835cb0d2e8f20aULL && v.hi == 0);
	assert_true(bch_csum_eq(v, bch_csum_from_bytes(node)));
}

/* ---- journal vector C (spec 30 §1.6) ---------------------------------- */

static const char jset_c[] =
	"479cf7f0 00000000 00000000 00000000"
	"4c982ef7 85b517d9 03000000 00000000"
	"02000000 01000000 0e000000 01000100"
	"03000000 00000000 06000100 01000000"
	"06018000 00000000 00000000 00000000"
	"00000000 00000000 ffffffff ffffffff"
	"ffffffff ffffffff 01400300 00000001"
	"06000400 01000000 06018000 00000000"
	"00000000 00000000 00000000 00000000"
	"ffffffff ffffffff ffffffff ffffffff"
	"01c80000 00000001";

static void test_journal_vector(void **state)
{
	(void) state;
	uint8_t j[168];
	struct bch_csum_val v;

	assert_int_equal(hex2bin(jset_c, j, sizeof(j)), 168);
	v = csum(1, j + 16, 168 - 16);
	assert_true(v.lo == 0xf0f79c47 && v.hi == 0);
	assert_true(bch_csum_eq(v, bch_csum_from_bytes(j)));
}

/* ---- implementations agree -------------------------------------------- */

static void test_crc32c_hw_vs_sw(void **state)
{
	(void) state;
	size_t max = 3 * 8192 * 2 + 4096;
	uint8_t *buf = malloc(max + 64);

	assert_non_null(buf);
	fill_random(buf, max + 64);

	if (!crc32c_hw_available())
		print_message("note: no SSE4.2; comparing the fallback with itself\n");

	/* every short length and alignment */
	for (size_t off = 0; off < 16; off++)
		for (size_t len = 0; len < 3 * 256 + 40; len++) {
			uint32_t init = (uint32_t) rnd64();
			uint32_t a = crc32c_sw(init, buf + off, len);

			assert_int_equal(crc32c_hw(init, buf + off, len), a);
			assert_int_equal(crc32c(init, buf + off, len), a);
		}

	/* random long ones, crossing the 3-way block sizes */
	for (unsigned i = 0; i < 300; i++) {
		size_t off = random() % 64;
		size_t len = i < 20 ? 3 * 8192 - 10 + i : (size_t) random() % max;
		uint32_t init = (uint32_t) rnd64();

		assert_int_equal(crc32c_hw(init, buf + off, len),
				 crc32c_sw(init, buf + off, len));
	}

	/* the folding path (runs of 1024 bytes and more, where the CPU has
	 * VPCLMULQDQ): every alignment, lengths across its 256 byte steps */
	for (size_t off = 0; off < 64; off++)
		for (size_t len = 1024 - 8; len < 1024 + 520; len += 7) {
			uint32_t init = (uint32_t) rnd64();

			assert_int_equal(crc32c_hw(init, buf + off, len),
					 crc32c_sw(init, buf + off, len));
		}
	assert_int_equal(crc32c_hw(0x12345678, buf, max), crc32c_sw(0x12345678, buf, max));

	/* forcing the fallback */
	crc_force_sw(true);
	assert_int_equal(crc32c(0, buf, 100000 < max ? 100000 : max),
			 crc32c_sw(0, buf, 100000 < max ? 100000 : max));
	assert_int_equal(~crc32c(~0U, "123456789", 9), 0xE3069283);
	crc_force_sw(false);
	free(buf);
}

static void test_crc64_impls(void **state)
{
	(void) state;
	size_t max = 70000;
	uint8_t *buf = malloc(max + 16);

	assert_non_null(buf);
	fill_random(buf, max + 16);
	if (!crc64_hw_available())
		print_message("note: no PCLMULQDQ; comparing the fallback with itself\n");

	/* every length up to past both interleaving thresholds of the table
	 * path (3 * 256, 3 * 1024) and the folding widths (16, 64) */
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len < 3 * 1024 + 300; len += off ? 7 : 1) {
			uint64_t init = rnd64();
			uint64_t want = crc64_bytewise(init, buf + off, len);

			assert_true(crc64_sw(init, buf + off, len) == want);
			assert_true(crc64_hw(init, buf + off, len) == want);
			assert_true(crc64(init, buf + off, len) == want);
		}
	for (unsigned i = 0; i < 100; i++) {
		size_t off = random() % 16, len = random() % max;
		uint64_t init = rnd64();
		uint64_t want = crc64_bytewise(init, buf + off, len);

		assert_true(crc64_sw(init, buf + off, len) == want);
		assert_true(crc64_hw(init, buf + off, len) == want);
	}

	crc_force_sw(true);
	assert_true(crc64(1, buf, max) == crc64_sw(1, buf, max));
	assert_true(~crc64(~0ULL, "123456789", 9) == 0x62EC59E3F1A4F00AULL);
	crc_force_sw(false);
	free(buf);
}

static void test_zeros_and_combine(void **state)
{
	(void) state;
	size_t max = 20000;
	uint8_t *buf = malloc(max);
	uint8_t *zeros = calloc(1, max);

	assert_non_null(buf);
	assert_non_null(zeros);
	fill_random(buf, max);

	for (unsigned i = 0; i < 100; i++) {
		size_t len = i < 10 ? i : (size_t) random() % max;
		uint32_t c32 = (uint32_t) rnd64();
		uint64_t c64 = rnd64();

		assert_int_equal(crc32c_zeros(c32, len), crc32c_sw(c32, zeros, len));
		assert_true(crc64_zeros(c64, len) == crc64(c64, zeros, len));

		size_t a = random() % (max + 1), b = random() % (max - a + 1);

		assert_int_equal(crc32c_combine(crc32c(c32, buf, a),
						crc32c(0, buf + a, b), b),
				 crc32c(c32, buf, a + b));
		assert_true(crc64_combine(crc64(c64, buf, a),
					  crc64(0, buf + a, b), b) ==
			    crc64(c64, buf, a + b));

		/* bch_checksum_merge for the mergeable types */
		for (unsigned t = 0; t < BCH_CHECKSUM_NR; t++) {
			struct bch_csum_val m, x = csum(t == 3 || t == 4 ? 0 : t, buf, a);
			struct bch_csum_val y = csum(t == 3 || t == 4 ? 0 : t, buf + a, b);
			int ret = bch_checksum_merge(t, x, y, b, &m);

			if (bch_csum_type_is_mergeable(t)) {
				assert_int_equal(ret, 0);
				assert_true(bch_csum_eq(m, csum(t, buf, a + b)));
			} else {
				assert_int_equal(ret, -EINVAL);
			}
		}
	}
	/* a large length (16 GiB of zeros) is computed in O(log n) */
	assert_int_equal(crc32c_zeros(0, 1ULL << 34), 0);
	assert_true(crc32c_zeros(1, 1ULL << 34) != 0);
	free(buf);
	free(zeros);
}

static void test_incremental(void **state)
{
	(void) state;
	struct bch_key key;
	uint8_t buf[3000];
	struct bch_nonce n = bch_nonce_make(7, 1, 2, 3);

	fill_random(buf, sizeof(buf));
	fill_random(bch_key_bytes(&key), 32);

	for (unsigned t = 0; t < BCH_CHECKSUM_NR; t++)
		for (unsigned i = 0; i < 20; i++) {
			struct bch_csum_state st;
			struct bch_csum_val one, inc;
			size_t len = random() % sizeof(buf);
			size_t a = random() % (len + 1), b = random() % (len - a + 1);

			assert_int_equal(bch_checksum(t, n, &key, buf, len, &one), 0);
			assert_int_equal(bch_csum_init(&st, t, n, &key), 0);
			bch_csum_update(&st, buf, a);
			bch_csum_update(&st, buf + a, b);
			bch_csum_update(&st, buf + a + b, len - a - b);
			inc = bch_csum_final(&st);
			assert_true(bch_csum_eq(one, inc));
			if (t == 3)	/* 80 bits: bytes 10..15 zero */
				assert_true((one.hi >> 16) == 0);
		}
}

/* ---- checksum types ----------------------------------------------------- */

static void test_types(void **state)
{
	(void) state;
	static const unsigned bytes[] = { 0, 4, 8, 10, 16, 4, 8 };
	static const char *names[] = {
		"none", "crc32c_nonzero", "crc64_nonzero",
		"chacha20_poly1305_80", "chacha20_poly1305_128",
		"crc32c", "crc64",
	};
	struct bch_csum_val v = { 1, 1 };
	struct bch_nonce n = { { 0 } };

	assert_int_equal(BCH_CHECKSUM_NR, 7);
	for (unsigned t = 0; t < 7; t++) {
		assert_true(bch_csum_type_valid(t));
		assert_int_equal(bch_csum_type_bytes(t), bytes[t]);
		assert_string_equal(bch_csum_type_name(t), names[t]);
		assert_int_equal(bch_csum_type_is_encryption(t), t == 3 || t == 4);
		assert_int_equal(bch_csum_type_is_mergeable(t),
				 t == 0 || t == 5 || t == 6);
	}
	for (unsigned t = 7; t < 20; t++) {
		assert_false(bch_csum_type_valid(t));
		assert_int_equal(bch_csum_type_bytes(t), 0);
		assert_null(bch_csum_type_name(t));
		assert_false(bch_csum_type_is_encryption(t));
		assert_int_equal(bch_checksum(t, n, NULL, "x", 1, &v), -EINVAL);
		assert_true(v.lo == 0 && v.hi == 0);
	}
	v.lo = v.hi = 1;
	assert_int_equal(bch_checksum(3, n, NULL, "x", 1, &v), -ENOKEY);
	assert_true(v.lo == 0 && v.hi == 0);
	assert_int_equal(bch_checksum(4, n, NULL, "x", 1, &v), -ENOKEY);

	uint8_t b[16];

	v.lo = 0x0706050403020100ULL;
	v.hi = 0x0f0e0d0c0b0a0908ULL;
	bch_csum_to_bytes(v, b);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(b[i], i);
	assert_true(bch_csum_eq(bch_csum_from_bytes(b), v));
}

/* ---- nonces --------------------------------------------------------------- */

static void assert_nonce_bytes(struct bch_nonce n, const char *hex)
{
	uint8_t want[16], got[16];

	assert_int_equal(hex2bin(hex, want, sizeof(want)), 16);
	bch_nonce_to_bytes(n, got);
	assert_memory_equal(got, want, 16);
	n = bch_nonce_from_bytes(want);
	bch_nonce_to_bytes(n, got);
	assert_memory_equal(got, want, 16);
}

static void test_nonces(void **state)
{
	(void) state;
	struct bch_nonce n;

	/* 40 §40.4.6 examples (IV bytes) */
	assert_nonce_bytes(bch_nonce_extent(65538, 0, 0, 8, 0),
			   "00000000 02000100 00000000 00000010");
	assert_nonce_bytes(bch_nonce_extent(65538, 0, 3, 128, 0),
			   "00000020 02000100 00000000 00000013");
	n = bch_nonce_extent(65538, 0, 4, 128, 0);	/* zstd */
	assert_int_equal(n.d[3], 0x14000000);
	assert_nonce_bytes(bch_nonce_extent(65538, 0, 0, 8, 5),
			   "28000000 02000100 00000000 00000010");
	assert_nonce_bytes(bch_nonce_extent(65543, 0, 0, 8, 0),
			   "00000000 07000100 00000000 00000010");
	/* version hi and lo high half */
	n = bch_nonce_extent(0x1122334455667788ULL, 0x00abcdef, 0, 8, 0);
	assert_int_equal(n.d[1], 0x55667788);
	assert_int_equal(n.d[2], 0x11223344);
	assert_int_equal(n.d[3], 0x00abcdef ^ 0x10000000);

	/* 20 §20.9.5: seq bytes 58 6c bb 68 9a ac 12 df */
	n = bch_nonce_btree(0, 0xdf12ac9a68bb6c58ULL, 0);
	assert_int_equal(n.d[0], 0);
	assert_int_equal(n.d[1], 0x68bb6c58);
	assert_int_equal(n.d[2], 0xdf12ac9a);
	assert_int_equal(n.d[3], 0x20000000);
	n = bch_nonce_btree(4096, 0xdf12ac9a68bb6c58ULL, 2);
	assert_int_equal(n.d[0], 0x1000);
	assert_int_equal(n.d[3], 0x20000002);
	n = bch_nonce_btree(0, 1, 0x123456789ULL);	/* journal_seq lo32 only */
	assert_int_equal(n.d[3], 0x23456789 ^ 0x20000000);

	/* 30 §1.7 vector D */
	assert_nonce_bytes(bch_nonce_journal(4),
			   "00000000 04000000 00000000 00000030");
	n = bch_nonce_journal(0x0000000500000006ULL);
	assert_int_equal(n.d[1], 6);
	assert_int_equal(n.d[2], 5);

	/* doc/format.md §9.2: IV = 8 zero bytes ‖ internal uuid bytes 0..7 */
	static const uint8_t uuid[16] = {
		0xb4, 0xa4, 0xd8, 0x15, 0x26, 0x3d, 0x44, 0x0d,
		0x91, 0x9e, 0x82, 0x8f, 0xc0, 0x42, 0x20, 0xea,
	};
	assert_nonce_bytes(bch_nonce_sb_key(uuid),
			   "00000000 00000000 b4a4d815 263d440d");

	/* poly flip and add */
	n = bch_nonce_poly(bch_nonce_extent(65538, 0, 0, 8, 0));
	assert_nonce_bytes(n, "00000000 02000100 00000000 00000090");
	n = bch_nonce_add(bch_nonce_make(5, 1, 2, 3), 128);
	assert_int_equal(n.d[0], 7);
	assert_int_equal(n.d[1], 1);
	n = bch_nonce_add(bch_nonce_make(0xffffffff, 1, 2, 3), 64);
	assert_int_equal(n.d[0], 0);		/* wraps, no carry */
	assert_int_equal(n.d[1], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_spec_check_values),
		cmocka_unit_test(test_data_vectors),
		cmocka_unit_test(test_superblock_vectors),
		cmocka_unit_test(test_node_vectors),
		cmocka_unit_test(test_journal_vector),
		cmocka_unit_test(test_crc32c_hw_vs_sw),
		cmocka_unit_test(test_crc64_impls),
		cmocka_unit_test(test_zeros_and_combine),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_nonces),
	};

	srandom(12345);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
