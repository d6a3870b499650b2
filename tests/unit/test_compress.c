// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for libbcachefs/compress.c (doc/format.md §8): type table, round
 * trips for every type at many sizes, real extents from the golden images,
 * the reference writer's sizing loop (doc/format.md §8.3), and hostile input (truncated,
 * corrupted, garbage) which must fail cleanly and never write out of bounds
 * (run under ASan by `make check-asan`).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <sodium.h>
#include <zlib.h>

#include "codec/compress.h"
#include "util/errcode.h"
#include "util/util.h"

/* ---- golden extents ------------------------------------------------------- */

/*
 * tests/golden/g4_compressed_encrypted_data, inode 4101 (d/mixed), key
 * 4101:384 size 64: "crc: c_size 8 size 64 offset 0 nonce 0 csum 5 compress
 * 3|4 ptr: 0:35072 gen 1" in lz4.img / zstd.img - the 8 KiB overwrite, a
 * 32 KiB piece compressed into one 4 KiB block. The hex is the region up to
 * its last non-zero byte; the rest of the 4096 bytes is zero padding.
 *
 * The plaintext (MANIFEST-g.md, g4: "each 512-byte sector is a 64-byte text
 * record ... repeated (seed per write)") is gen_golden(5, 320, 64): sectors
 * 320..383 of seed 5. Its sha256 below; all 47 compressed extents of each
 * image decode, and text1m (16 extents) rebuilds to the manifest's sha256
 * 60e2cf02...285a, so the generator is the one the images were made with.
 */
#define GOLDEN_C_BYTES		4096
#define GOLDEN_U_BYTES		32768
static const char golden_sha256[] =
	"30b08afcb1e74751ff35f8f8bbb720c6d9a4b3bdf0bec15da477426914e6c408";

/* lz4.img sector 35072: LZ4 block, 626 bytes + 3470 zero bytes */
static const char golden_lz4_hex[] =
	"ff0c73656564203520736563746f722033323020676f6c64656e32202e010011"
	"1f0a4000ffbe1f3100022c0f4000ffae1f3200022c0f4000ffae1f3300022c0f"
	"4000ffae1f3400022c0f4000ffae1f3500022c0f4000ffae1f3600022c0f4000"
	"ffae1f3700022c0f4000ffae1f3800022c0f4000ffae1f3900022c0f4000ffad"
	"1f3300142c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c"
	"0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf"
	"0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffae1f3400142c"
	"0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf"
	"0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f"
	"4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffae1f3500142c0f4000ffaf"
	"0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f"
	"4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0f"
	"c0132c0f4000ffaf0fc0132c0f4000ffae1f3600142c0f4000ffaf0fc0132c0f"
	"4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0f"
	"c0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f40"
	"00ffaf0fc0132c0f4000ffae1f3700142c0f4000ffaf0fc0132c0f4000ffaf0f"
	"c0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f40"
	"00ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f4000ffaf0fc0"
	"132c0f4000ffae1f3800142c0f4000ffaf0fc0132c0f4000ffaf0fc0132c0f40"
	"00ffaf0fc0132c0f4000ff9a502e2e2e2e0a";

/* zstd.img sector 35072: le32 177, a 177-byte zstd frame, 3915 zero bytes */
static const char golden_zstd_hex[] =
	"b100000028b52ffd60007f3d05001206121490277946f9ee0b6966be85144992"
	"3baf59330301374d6ae259dd34a8896775d39c269ed54d639a7856374d69e259"
	"dd34d7c4b3ba09101017761088818c2f06e220d8424cc66e1141a811a05fff37"
	"e0770312f8ffff0681bf3fecfcfce6dfc7cfcfcfcfcfcf8fbffcfbf9f9f9f9f9"
	"f1f3e727ff7e7e7e7e7e7e7efefce4dfcfcfcfcf8f1f3f7f7ef2efe7e7e7e7e7"
	"e7e7cf4ffefdfcfcfcfcfcf8f9f38be641593e5d55";

/*
 * No gzip image is in the corpus: this is zlib 1.2.13 raw deflate of the same
 * plaintext with the reference's parameters (doc/format.md §8.2: level 6, window bits
 * -15, memLevel 8, default strategy, Z_FINISH), made with Python's zlib
 * module. It checks that we pass those parameters; a different zlib version
 * may legitimately produce other bytes (the test then only checks decoding).
 */
static const char gzip_ref_hex[] =
	"edd8c14dc35000c0d03b53fc0950499ab6cc43232ea89508fb8b15907c32dfbe"
	"bf057cecfb7d6ce3d83f7e9edf635d4ee3f3f975df1fcb78fd4b2f47fe5ff9b7"
	"fcd47ec94fedd7fcd4fe9c9fda6ff9a9fd253fb5bfe6a7f6b7fcd4fe3d3fb35f"
	"e13fcacb3dfc4779b987ff282ff7f01fe5e51efea3bcdcc37f94977bf88ff272"
	"0fff515eeee13fcacb3dfd4779b53fc37f94977bf88ff2720fff515eeee13fca"
	"cb3dfc4779b987ff282ff7f01fe5e51efea3bcdcc37f94977bfa8ff26abfc17f"
	"94977bf88ff2720fff515eeee13fcacb3dfc4779b987ff282ff7f01fe5e51efe"
	"a3bcdcc37f94977bfa8ff26a7f81ff282ff7f01fe5e51efea3bcdcc37f94977b"
	"f88ff2720fff515eeee13fcacb3dfc4779b987ff282ff7f41fe5d5fe0aff515e"
	"eee13fcacb3dfc4779b987ff282ff7f01fe5e51efea3bcdcc37f94977bf88ff2"
	"720fff515eeee93fcaabfd0dfea3bcdcc37f94977bf88ff2720fff515ee67f01";

/* ---- helpers ---------------------------------------------------------------- */

static const unsigned writable_types[] = {
	BCH_COMPRESSION_GZIP, BCH_COMPRESSION_LZ4, BCH_COMPRESSION_ZSTD,
};


static void sha256_hex(const void *p, size_t len, char out[65])
{
	uint8_t h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, p, len);
	for (unsigned i = 0; i < sizeof(h); i++)
		sprintf(out + 2 * i, "%02x", h[i]);
}

/* The g4 driver's data: per sector, 8 x a 64-byte record. */
static void gen_golden(uint8_t *buf, unsigned seed, unsigned first_sector,
		       unsigned sectors)
{
	for (unsigned s = 0; s < sectors; s++) {
		char rec[65];
		int n = snprintf(rec, sizeof(rec), "seed %u sector %u golden2 ",
				 seed, first_sector + s);

		memset(rec + n, '.', 63 - n);
		rec[63] = '\n';
		for (unsigned i = 0; i < 8; i++)
			memcpy(buf + s * 512 + i * 64, rec, 64);
	}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static void fill_random(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = rng() >> 56;
}

/* Text-like: words from a small vocabulary, spaces, newlines, numbers. */
static void fill_text(uint8_t *buf, size_t len, uint64_t seed)
{
	static const char * const words[] = {
		"the", "extent", "btree", "of", "inode", "journal", "and",
		"bucket", "to", "a", "checksum", "data", "is", "compressed",
		"sector", "superblock", "key", "node", "in", "with", "device",
		"allocation", "for", "read", "write", "filesystem", "replica",
	};
	uint64_t saved = rng_state;
	size_t i = 0, col = 0;

	rng_state = seed | 1;
	while (i < len) {
		uint64_t r = rng();
		char tmp[32];
		const char *w = tmp;
		size_t n;

		if ((r & 15) == 0)
			snprintf(tmp, sizeof(tmp), "%u", (unsigned) (r >> 40) % 100000);
		else
			w = words[(r >> 8) % (sizeof(words) / sizeof(words[0]))];
		n = strlen(w);
		for (size_t j = 0; j < n && i < len; j++, col++)
			buf[i++] = w[j];
		if (i < len) {
			buf[i++] = col > 70 ? '\n' : ' ';
			col = col > 70 ? 0 : col + 1;
		}
	}
	rng_state = saved;
}

/* Exact-size heap copy, so that ASan sees any access past the end. */
static uint8_t *dup_exact(const void *p, size_t len)
{
	uint8_t *q = malloc(len ? len : 1);

	assert_non_null(q);
	memcpy(q, p, len);
	return q;
}

/* Compress with bch_compress(); returns the framed length, or 0 for -E2BIG. */
static size_t compress_ok(unsigned type, const uint8_t *src, size_t len,
			  uint8_t *dst, size_t cap, unsigned level)
{
	size_t n = cap;
	int ret = bch_compress(type, src, len, dst, &n, level);

	if (ret == -E2BIG)
		return 0;
	assert_int_equal(ret, 0);
	assert_true(n > 0);
	assert_true(n <= cap);
	/* Padding to the sector is zeroed. */
	for (size_t i = n; i % 512; i++)
		assert_int_equal(dst[i], 0);
	return n;
}

/* Decompress @region (an exact-size heap copy) into an exact-size buffer. */
static int decompress_exact(unsigned type, const uint8_t *src, size_t src_len,
			    size_t dst_len, uint8_t **out)
{
	uint8_t *s = dup_exact(src, src_len);
	uint8_t *d = malloc(dst_len ? dst_len : 1);
	int ret;

	assert_non_null(d);
	ret = bch_decompress(type, s, src_len, d, dst_len);
	free(s);
	if (out)
		*out = d;
	else
		free(d);
	return ret;
}

/* ---- the type table ----------------------------------------------------------- */

static void test_types(void **state)
{
	static const char * const names[] = { "none", "lz4_old", "gzip", "lz4", "zstd" };
	uint8_t buf[2048] = { 0 }, out[2048];
	size_t n;

	(void) state;
	for (unsigned t = 0; t < 5; t++) {
		assert_true(bch_compression_type_valid(t));
		assert_string_equal(bch_compression_type_name(t), names[t]);
	}
	for (unsigned t = 5; t < 20; t++) {
		assert_false(bch_compression_type_valid(t));
		assert_null(bch_compression_type_name(t));
		assert_false(bch_compression_type_writable(t));
	}
	assert_false(bch_compression_type_writable(BCH_COMPRESSION_NONE));
	assert_false(bch_compression_type_writable(BCH_COMPRESSION_LZ4_OLD));
	assert_true(bch_compression_type_writable(BCH_COMPRESSION_GZIP));
	assert_true(bch_compression_type_writable(BCH_COMPRESSION_LZ4));
	assert_true(bch_compression_type_writable(BCH_COMPRESSION_ZSTD));

	/* The on-disk numbers (doc/format.md §8.1) and the option mapping. */
	assert_int_equal(BCH_COMPRESSION_LZ4_OLD, 1);
	assert_int_equal(BCH_COMPRESSION_GZIP, 2);
	assert_int_equal(BCH_COMPRESSION_LZ4, 3);
	assert_int_equal(BCH_COMPRESSION_ZSTD, 4);
	assert_int_equal(bch_compression_opt_to_type(0), 0);
	assert_int_equal(bch_compression_opt_to_type(1), 3);
	assert_int_equal(bch_compression_opt_to_type(2), 2);
	assert_int_equal(bch_compression_opt_to_type(3), 4);

	/* Types that cannot be written, bad levels. */
	for (unsigned t = 0; t < 8; t++) {
		if (bch_compression_type_writable(t))
			continue;
		n = sizeof(out);
		assert_int_equal(bch_compress(t, buf, sizeof(buf), out, &n, 0), -EINVAL);
	}
	n = sizeof(out);
	assert_int_equal(bch_compress(BCH_COMPRESSION_GZIP, buf, sizeof(buf), out, &n, 10), -EINVAL);
	n = sizeof(out);
	assert_int_equal(bch_compress(BCH_COMPRESSION_ZSTD, buf, sizeof(buf), out, &n, 1000), -EINVAL);
	n = sizeof(out);
	assert_int_equal(bch_compress(BCH_COMPRESSION_ZSTD, buf, sizeof(buf), out, &n, ~0U), -EINVAL);
}

/*
 * Decoding to a smaller size than the data holds: an error for zstd (exact
 * content size) and gzip (the stream must end); LZ4 has no end marker, and
 * the reference's partial decoder stops at the target size, so it yields
 * the prefix (doc/format.md §8.2).
 */
static void check_smaller_output(unsigned type, const uint8_t *region,
				 size_t region_len, const uint8_t *plain,
				 size_t len)
{
	for (size_t d = 0; d < len; d += d < 1100 ? 1 : 4093) {
		uint8_t *out;
		int ret = decompress_exact(type, region, region_len, d, &out);

		if (type == BCH_COMPRESSION_LZ4 && d) {
			assert_int_equal(ret, 0);
			assert_memory_equal(out, plain, d);
		} else {
			assert_int_equal(ret, -BCH_ERR_decompress);
		}
		free(out);
	}
}

/*
 * Decoding to a larger size than the data holds is an error, with or
 * without padding. (For LZ4 this relies on the offset check of
 * compress.c: liblz4 alone takes zero padding as offset-0 matches.) The
 * output buffer is pre-filled with a byte the plaintext does not contain.
 */
static void check_larger_output(unsigned type, const uint8_t *region,
				size_t framed_len, size_t region_len, size_t len)
{
	for (size_t extra = 1; extra <= 4096; extra *= 8) {
		uint8_t *out = malloc(len + extra);

		assert_non_null(out);
		memset(out, 0xaa, len + extra);
		assert_int_equal(bch_decompress(type, region, framed_len,
						out, len + extra),
				 -BCH_ERR_decompress);
		assert_int_equal(bch_decompress(type, region, region_len,
						out, len + extra),
				 -BCH_ERR_decompress);
		free(out);
	}
}

/* ---- real extents ------------------------------------------------------------- */

static void check_golden(unsigned type, const char *hex, size_t framed_len)
{
	uint8_t *region = calloc(1, GOLDEN_C_BYTES);
	uint8_t *plain = malloc(GOLDEN_U_BYTES);
	uint8_t *out, *re = malloc(GOLDEN_U_BYTES);
	char sha[65];
	size_t n, src_used, dst_used;

	assert_non_null(region);
	assert_non_null(plain);
	assert_non_null(re);
	assert_int_equal(hex2bin(hex, region, GOLDEN_C_BYTES), framed_len);
	gen_golden(plain, 5, 320, 64);
	sha256_hex(plain, GOLDEN_U_BYTES, sha);
	assert_string_equal(sha, golden_sha256);

	/* The stored region (padding included) decodes to the plaintext. */
	assert_int_equal(decompress_exact(type, region, GOLDEN_C_BYTES,
					  GOLDEN_U_BYTES, &out), 0);
	sha256_hex(out, GOLDEN_U_BYTES, sha);
	assert_string_equal(sha, golden_sha256);
	assert_memory_equal(out, plain, GOLDEN_U_BYTES);
	free(out);

	/* So does the bare framed data, without padding. */
	assert_int_equal(decompress_exact(type, region, framed_len,
					  GOLDEN_U_BYTES, NULL), 0);

	check_larger_output(type, region, framed_len, GOLDEN_C_BYTES,
			    GOLDEN_U_BYTES);
	check_smaller_output(type, region, GOLDEN_C_BYTES, plain, GOLDEN_U_BYTES);

	/* The writer reproduces the extent byte for byte (4K blocks, 64K max). */
	assert_int_equal(bch_compress_extent(type, 0, plain, GOLDEN_U_BYTES,
					     re, GOLDEN_U_BYTES, 4096, 65536,
					     &src_used, &dst_used), 0);
	assert_int_equal(src_used, GOLDEN_U_BYTES);
	assert_int_equal(dst_used, GOLDEN_C_BYTES);
	assert_memory_equal(re, region, GOLDEN_C_BYTES);

	n = GOLDEN_U_BYTES;
	assert_int_equal(bch_compress(type, plain, GOLDEN_U_BYTES, re, &n, 0), 0);
	assert_int_equal(n, framed_len);
	assert_memory_equal(re, region, framed_len);

	free(region);
	free(plain);
	free(re);
}

static void test_golden_lz4(void **state)
{
	(void) state;
	check_golden(BCH_COMPRESSION_LZ4, golden_lz4_hex, 626);
}

static void test_golden_zstd(void **state)
{
	/* le32 length 177, the frame magic, a single-segment frame header with
	 * a 2-byte content size: 0x7f00 + 256 = 32768 (doc/format.md §8.2). */
	static const uint8_t hdr[] = {
		0xb1, 0x00, 0x00, 0x00, 0x28, 0xb5, 0x2f, 0xfd, 0x60, 0x00, 0x7f,
	};
	uint8_t buf[256];

	(void) state;
	assert_int_equal(hex2bin(golden_zstd_hex, buf, sizeof(buf)), 181);
	assert_memory_equal(buf, hdr, sizeof(hdr));
	check_golden(BCH_COMPRESSION_ZSTD, golden_zstd_hex, 181);
}

static void test_gzip_reference_params(void **state)
{
	uint8_t ref[512], *region = calloc(1, GOLDEN_C_BYTES);
	uint8_t *plain = malloc(GOLDEN_U_BYTES), *out;
	size_t ref_len, n, src_used, dst_used;

	(void) state;
	assert_non_null(region);
	assert_non_null(plain);
	ref_len = hex2bin(gzip_ref_hex, ref, sizeof(ref));
	assert_int_equal(ref_len, 352);
	gen_golden(plain, 5, 320, 64);

	/* Raw deflate: the reference bytes, padded, decode to the plaintext. */
	memcpy(region, ref, ref_len);
	assert_int_equal(decompress_exact(BCH_COMPRESSION_GZIP, region,
					  GOLDEN_C_BYTES, GOLDEN_U_BYTES, &out), 0);
	assert_memory_equal(out, plain, GOLDEN_U_BYTES);
	free(out);

	/* A zlib-wrapped stream (header 78 9c) is not what is on disk. */
	{
		uint8_t z[4096] = { 0x78, 0x9c };

		memcpy(z + 2, ref, ref_len);
		assert_int_equal(decompress_exact(BCH_COMPRESSION_GZIP, z, sizeof(z),
						  GOLDEN_U_BYTES, NULL),
				 -BCH_ERR_decompress);
	}

	n = GOLDEN_U_BYTES;
	assert_int_equal(bch_compress(BCH_COMPRESSION_GZIP, plain, GOLDEN_U_BYTES,
				      region, &n, 0), 0);
	assert_int_equal(bch_compress_extent(BCH_COMPRESSION_GZIP, 0, plain,
					     GOLDEN_U_BYTES, region, GOLDEN_U_BYTES,
					     4096, 65536, &src_used, &dst_used), 0);
	assert_int_equal(src_used, GOLDEN_U_BYTES);
	assert_int_equal(dst_used, 4096);
	if (!strcmp(zlibVersion(), "1.2.13")) {
		assert_int_equal(n, ref_len);
		assert_memory_equal(region, ref, ref_len);
	} else {
		print_message("zlib %s: byte comparison with 1.2.13 output skipped\n",
			      zlibVersion());
	}
	free(region);
	free(plain);
}

/* ---- round trips ------------------------------------------------------------- */

static const size_t rt_sizes[] = {
	513, 1000, 1024, 1536, 4096, 4097, 8192, 12288, 32768, 65536 - 512,
	65536, 65536 + 512, 131072, 262144, 1 << 20, 4 << 20,
};

/* Compress @len bytes at @src with @type/@level (capacity @len) and check
 * the round trip. Returns false if bch_compress said "not smaller". */
static bool round_trip(unsigned type, unsigned level, const uint8_t *src,
		       size_t len)
{
	uint8_t *c = malloc(len), *out;
	size_t n = compress_ok(type, src, len, c, len, level);

	assert_non_null(c);
	if (!n) {
		free(c);
		return false;
	}
	assert_true(round_up(n, 512) < len);
	/* As stored: the framed data and its zeroed padding to a sector. */
	assert_int_equal(decompress_exact(type, c, round_up(n, 512), len, &out), 0);
	assert_memory_equal(out, src, len);
	free(out);
	/* Padding further out, to a 4K block, is fine as well. */
	if (round_up(n, 4096) <= len) {
		memset(c + n, 0, round_up(n, 4096) - n);
		assert_int_equal(decompress_exact(type, c, round_up(n, 4096), len, NULL), 0);
	}
	free(c);
	return true;
}

static void test_round_trip(void **state)
{
	size_t max = 4 << 20;
	uint8_t *text = malloc(max), *rnd = malloc(max), *zero = calloc(1, max);
	unsigned count = 0;

	(void) state;
	assert_non_null(text);
	assert_non_null(rnd);
	assert_non_null(zero);
	fill_text(text, max, 42);
	fill_random(rnd, max);

	for (unsigned i = 0; i < ARRAY_SIZE(writable_types); i++) {
		unsigned type = writable_types[i];

		for (unsigned j = 0; j < ARRAY_SIZE(rt_sizes); j++) {
			size_t len = rt_sizes[j];
			bool ok = round_trip(type, 0, text, len);

			/* Text compresses well enough from one block on. */
			if (len >= 4096)
				assert_true(ok);
			assert_true(round_trip(type, 0, zero, len));
			/* Random data never gets smaller. */
			assert_false(round_trip(type, 0, rnd, len));
			count += 3;
		}
	}

	/* Other levels, up to the largest extent (8192 sectors). */
	for (unsigned j = 0; j < ARRAY_SIZE(rt_sizes); j++) {
		size_t len = rt_sizes[j];

		if (len < 4096 || len > 8192 * 512)
			continue;
		assert_true(round_trip(BCH_COMPRESSION_GZIP, 1, text, len));
		assert_true(round_trip(BCH_COMPRESSION_GZIP, 9, text, len));
		assert_true(round_trip(BCH_COMPRESSION_ZSTD, 1, text, len));
		assert_true(round_trip(BCH_COMPRESSION_ZSTD, 12, text, len));
		assert_true(round_trip(BCH_COMPRESSION_LZ4, 1, text, len));
		assert_true(round_trip(BCH_COMPRESSION_LZ4, 8, text, len));
		count += 6;
	}
	/* Mixed text and random, at every 512-byte size up to 64K. */
	for (size_t len = 1024; len <= 65536; len += 512) {
		uint8_t *mix = malloc(len);

		assert_non_null(mix);
		memcpy(mix, text, len);
		memcpy(mix + len / 2, rnd, len / 4);
		for (unsigned i = 0; i < ARRAY_SIZE(writable_types); i++) {
			round_trip(writable_types[i], 0, mix, len);
			count++;
		}
		free(mix);
	}
	print_message("%u round trips\n", count);
	free(text);
	free(rnd);
	free(zero);
}

static void test_none_and_lz4_old(void **state)
{
	uint8_t src[4096], c[4096], *out;
	size_t n;

	(void) state;
	fill_text(src, sizeof(src), 7);
	assert_int_equal(decompress_exact(BCH_COMPRESSION_NONE, src, sizeof(src),
					  sizeof(src), &out), 0);
	assert_memory_equal(out, src, sizeof(src));
	free(out);
	assert_int_equal(decompress_exact(BCH_COMPRESSION_NONE, src, sizeof(src),
					  sizeof(src) - 512, NULL),
			 -BCH_ERR_decompress);

	/* LZ4_OLD is read as a raw LZ4 block (the legacy framing is
	 * UNVERIFIED, doc/format.md §8.1). */
	n = compress_ok(BCH_COMPRESSION_LZ4, src, sizeof(src), c, sizeof(c), 0);
	assert_true(n > 0);
	assert_int_equal(decompress_exact(BCH_COMPRESSION_LZ4_OLD, c,
					  round_up(n, 512), sizeof(src), &out), 0);
	assert_memory_equal(out, src, sizeof(src));
	free(out);
}

/*
 * The LZ4 sequence check (compress.c): offsets 0 and offsets reaching before
 * the start are rejected; liblz4 alone accepts offset 0. Blocks from
 * liblz4 with long literal runs and long matches (extension bytes) pass.
 */
static void test_lz4_offsets(void **state)
{
	/* 4 literals "abcd", match offset 1 length 4, then 5 literals. */
	uint8_t blk[] = { 0x40, 'a', 'b', 'c', 'd', 0x01, 0x00,
			  0x50, 'e', 'f', 'g', 'h', 'i' };
	size_t big = 1 << 20;
	uint8_t out[13], *src = malloc(big), *c = malloc(LZ4_compressBound(big));
	int n;

	(void) state;
	assert_non_null(src);
	assert_non_null(c);
	assert_int_equal(bch_decompress(BCH_COMPRESSION_LZ4, blk, sizeof(blk),
					out, sizeof(out)), 0);
	assert_memory_equal(out, "abcdddddefghi", 13);

	blk[5] = 0;			/* offset 0 */
	assert_int_equal(LZ4_decompress_safe_partial((char *) blk, (char *) out,
						     sizeof(blk), 13, 13), 13);
	assert_int_equal(bch_decompress(BCH_COMPRESSION_LZ4, blk, sizeof(blk),
					out, sizeof(out)), -BCH_ERR_decompress);
	blk[5] = 5;			/* before the start */
	assert_int_equal(bch_decompress(BCH_COMPRESSION_LZ4, blk, sizeof(blk),
					out, sizeof(out)), -BCH_ERR_decompress);
	blk[5] = 4;			/* the very start: fine */
	assert_int_equal(bch_decompress(BCH_COMPRESSION_LZ4, blk, sizeof(blk),
					out, sizeof(out)), 0);
	assert_memory_equal(out, "abcdabcdefghi", 13);
	blk[0] = 0x00;			/* no literals before the first match */
	assert_int_equal(bch_decompress(BCH_COMPRESSION_LZ4, blk, sizeof(blk),
					out, sizeof(out)), -BCH_ERR_decompress);

	/* Long literal runs (random data), long matches (zeros), mixtures. */
	for (unsigned kind = 0; kind < 4; kind++) {
		uint8_t *d;

		switch (kind) {
		case 0: fill_random(src, big); break;
		case 1: memset(src, 0, big); break;
		case 2: fill_text(src, big, 77); break;
		default:
			for (size_t i = 0; i < big; i += 8192) {
				memset(src + i, 0, 4096);
				fill_random(src + i + 4096, 4096);
			}
		}
		n = LZ4_compress_default((char *) src, (char *) c, big,
					 LZ4_compressBound(big));
		assert_true(n > 0);
		assert_int_equal(decompress_exact(BCH_COMPRESSION_LZ4, c, n, big, &d), 0);
		assert_memory_equal(d, src, big);
		free(d);
	}
	free(src);
	free(c);
}

/* A small capacity: -E2BIG, and nothing written past the capacity. */
static void test_capacity(void **state)
{
	size_t len = 65536;
	uint8_t *src = malloc(len);

	(void) state;
	assert_non_null(src);
	fill_text(src, len, 3);
	for (unsigned i = 0; i < ARRAY_SIZE(writable_types); i++) {
		unsigned type = writable_types[i];
		static const size_t caps[] = { 0, 1, 4, 5, 511, 512, 1000, 4096, 8191 };

		for (unsigned j = 0; j < ARRAY_SIZE(caps); j++) {
			uint8_t *dst = malloc(caps[j] ? caps[j] : 1);
			size_t n = caps[j];

			assert_non_null(dst);
			assert_int_equal(bch_compress(type, src, len, dst, &n, 0), -E2BIG);
			free(dst);
		}
		/* Enough room: succeeds, and the padding stays inside. */
		{
			size_t cap = 61440, n = cap;
			uint8_t *dst = malloc(cap);

			assert_non_null(dst);
			assert_int_equal(bch_compress(type, src, len, dst, &n, 0), 0);
			assert_true(round_up(n, 512) <= cap);
			free(dst);
		}
		/* Not smaller by a sector: 512-byte input, or a capacity that
		 * leaves no saving. */
		{
			uint8_t z[512] = { 0 }, d[1024];
			size_t n = sizeof(d);

			assert_int_equal(bch_compress(type, z, sizeof(z), d, &n, 0), -E2BIG);
		}
	}
	free(src);
}

/* ---- hostile input ----------------------------------------------------------- */

/* A stored region of 64K of text: framed length in *@framed. */
static uint8_t *make_region(unsigned type, size_t len, size_t *framed,
			    size_t *region_len, uint8_t **plain)
{
	uint8_t *src = malloc(len), *c = calloc(1, len);
	size_t n;

	assert_non_null(src);
	assert_non_null(c);
	fill_text(src, len, 11);
	/* A bit of randomness so the data is not trivially repetitive. */
	fill_random(src + len / 3, len / 16);
	n = compress_ok(type, src, len, c, len, 0);
	assert_true(n > 0);
	*framed = n;
	*region_len = round_up(n, 4096);
	*plain = src;
	return c;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static void test_truncated(void **state)
{
	size_t len = 65536;

	(void) state;
	for (unsigned i = 0; i < ARRAY_SIZE(writable_types); i++) {
		unsigned type = writable_types[i];
		size_t n, region_len, step;
		uint8_t *plain, *c = make_region(type, len, &n, &region_len, &plain);
		unsigned tried = 0;

		/* Every length short of the framed data fails. */
		step = n > 4096 ? 7 : 1;
		for (size_t k = 0; k < n; k += (k + 64 >= n ? 1 : step)) {
			assert_int_equal(decompress_exact(type, c, k, len, NULL),
					 -BCH_ERR_decompress);
			tried++;
		}
		/* The framed data exactly, and with padding, succeed. */
		assert_int_equal(decompress_exact(type, c, n, len, NULL), 0);
		assert_int_equal(decompress_exact(type, c, region_len, len, NULL), 0);
		/* A smaller output buffer is never overflowed. */
		check_smaller_output(type, c, region_len, plain, len);
		check_larger_output(type, c, n, region_len, len);
		/*
		 * Truncated inside a zero-padded region (a short write): the
		 * stream runs into zeros. (Cutting only the last few bytes of
		 * an LZ4 block cannot be seen: they are literals, and the
		 * zeros serve as literals as well.)
		 */
		for (size_t cut = 4; cut < n - 8; cut += (n - 8) / 61 + 1) {
			uint8_t *z = calloc(1, region_len);

			assert_non_null(z);
			memcpy(z, c, cut);
			if (type == BCH_COMPRESSION_ZSTD)
				put_le32(z, cut - 4);
			assert_int_equal(decompress_exact(type, z, region_len, len, NULL),
					 -BCH_ERR_decompress);
			free(z);
		}
		print_message("%s: %u truncations of %zu bytes rejected\n",
			      bch_compression_type_name(type), tried, n);
		free(c);
		free(plain);
	}
}

/* The zstd length prefix. */
static void test_zstd_length(void **state)
{
	size_t len = 65536, n, region_len;
	uint8_t *plain, *c = make_region(BCH_COMPRESSION_ZSTD, len, &n, &region_len, &plain);
	static const uint32_t bad[] = {
		0, 1, 3, 4, 8, 100, 0x7fffffff, 0x80000000, 0xffffffff,
	};

	(void) state;
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		put_le32(c, bad[i]);
		assert_int_equal(decompress_exact(BCH_COMPRESSION_ZSTD, c, region_len,
						  len, NULL), -BCH_ERR_decompress);
	}
	/* One short, one past the frame (into the padding), past the region. */
	put_le32(c, n - 4 - 1);
	assert_int_equal(decompress_exact(BCH_COMPRESSION_ZSTD, c, region_len, len, NULL),
			 -BCH_ERR_decompress);
	put_le32(c, n - 4 + 1);
	assert_int_equal(decompress_exact(BCH_COMPRESSION_ZSTD, c, region_len, len, NULL),
			 -BCH_ERR_decompress);
	put_le32(c, region_len - 3);
	assert_int_equal(decompress_exact(BCH_COMPRESSION_ZSTD, c, region_len, len, NULL),
			 -BCH_ERR_decompress);
	put_le32(c, n - 4);
	assert_int_equal(decompress_exact(BCH_COMPRESSION_ZSTD, c, region_len, len, NULL), 0);
	/* A frame without the prefix is not the on-disk format. */
	assert_int_equal(decompress_exact(BCH_COMPRESSION_ZSTD, c + 4, region_len - 4,
					  len, NULL), -BCH_ERR_decompress);
	free(c);
	free(plain);
}

static void test_corrupted(void **state)
{
	size_t len = 65536;

	(void) state;
	for (unsigned i = 0; i < ARRAY_SIZE(writable_types); i++) {
		unsigned type = writable_types[i];
		size_t n, region_len;
		uint8_t *plain, *c = make_region(type, len, &n, &region_len, &plain);
		uint8_t *bad = malloc(region_len);
		unsigned rejected = 0, wrong = 0, iters = 3000;

		assert_non_null(bad);
		for (unsigned it = 0; it < iters; it++) {
			uint8_t *out;
			unsigned flips = 1 + rng() % 8;
			int ret;

			memcpy(bad, c, region_len);
			for (unsigned f = 0; f < flips; f++) {
				/* Mostly in the framed data, sometimes the padding. */
				size_t at = rng() % (it % 8 ? n : region_len);

				if (it % 2)
					bad[at] ^= 1 << (rng() % 8);
				else
					bad[at] = rng();
			}
			ret = decompress_exact(type, bad, region_len, len, &out);
			assert_true(ret == 0 || ret == -BCH_ERR_decompress);
			if (ret)
				rejected++;
			else if (memcmp(out, plain, len))
				wrong++;	/* undetected: the checksum's job */
			free(out);
		}
		print_message("%s: %u corruptions: %u rejected, %u decoded wrong\n",
			      bch_compression_type_name(type), iters, rejected, wrong);
		assert_true(rejected > 0);
		free(bad);
		free(c);
		free(plain);
	}
}

static void test_garbage(void **state)
{
	static const size_t src_sizes[] = { 0, 1, 3, 4, 5, 512, 4096, 65536 };
	static const size_t dst_sizes[] = { 0, 1, 512, 4096, 65536, 1 << 20 };
	uint8_t *buf = malloc(65536);
	unsigned rejected = 0, total = 0;

	(void) state;
	assert_non_null(buf);
	for (unsigned fill = 0; fill < 6; fill++) {
		switch (fill) {
		case 0: memset(buf, 0, 65536); break;
		case 1: memset(buf, 0xff, 65536); break;
		case 2: fill_text(buf, 65536, 5); break;
		default: fill_random(buf, 65536); break;
		}
		/* Random data behind a plausible zstd prefix and magic. */
		if (fill == 5) {
			put_le32(buf, 60000);
			buf[4] = 0x28; buf[5] = 0xb5; buf[6] = 0x2f; buf[7] = 0xfd;
		}
		for (unsigned t = 1; t < 16; t++)
			for (unsigned s = 0; s < ARRAY_SIZE(src_sizes); s++)
				for (unsigned d = 0; d < ARRAY_SIZE(dst_sizes); d++) {
					int ret = decompress_exact(t, buf, src_sizes[s],
								   dst_sizes[d], NULL);

					total++;
					if (ret == -BCH_ERR_decompress) {
						rejected++;
						continue;
					}
					/* Garbage that happens to decode is not a
					 * crash; it cannot happen for invalid types,
					 * empty sizes or all-zero/all-ones input. */
					assert_int_equal(ret, 0);
					assert_true(t < BCH_COMPRESSION_NR);
					assert_true(src_sizes[s] && dst_sizes[d]);
					assert_true(fill > 1);
				}
	}
	print_message("%u garbage decodes, %u rejected\n", total, rejected);
	free(buf);
}

/* ---- the writer (doc/format.md §8.3) ---------------------------------------------------- */

/* Run bch_compress_extent() and check what it promises. */
static int extent(unsigned type, const uint8_t *src, size_t src_len,
		  size_t dst_space, unsigned block, size_t max,
		  size_t *src_used, size_t *dst_used)
{
	size_t cap = max_t(size_t, dst_space, 1);
	uint8_t *dst = malloc(cap), *out;
	int ret;

	assert_non_null(dst);
	ret = bch_compress_extent(type, 0, src, src_len, dst, dst_space, block, max,
				  src_used, dst_used);
	if (!ret) {
		assert_true(*src_used > 0);
		assert_int_equal(*src_used % block, 0);
		assert_true(*src_used <= src_len);
		assert_true(*src_used <= max);
		assert_true(*dst_used > 0);
		assert_int_equal(*dst_used % block, 0);
		assert_true(*dst_used <= dst_space);
		assert_true(*dst_used < *src_used);
		assert_int_equal(decompress_exact(type, dst, *dst_used, *src_used, &out), 0);
		assert_memory_equal(out, src, *src_used);
		free(out);
	} else {
		assert_int_equal(ret, -E2BIG);
		assert_int_equal(*src_used, 0);
		assert_int_equal(*dst_used, 0);
	}
	free(dst);
	return ret;
}

static void test_writer(void **state)
{
	size_t len = 1 << 20, su, du;
	uint8_t *text = malloc(len), *rnd = malloc(len), *golden = malloc(len);
	uint8_t *mix = malloc(len);

	(void) state;
	assert_non_null(text);
	assert_non_null(rnd);
	assert_non_null(golden);
	assert_non_null(mix);
	fill_text(text, len, 99);
	fill_random(rnd, len);
	gen_golden(golden, 1, 0, len / 512);

	for (unsigned i = 0; i < ARRAY_SIZE(writable_types); i++) {
		unsigned type = writable_types[i];

		/* At most one block: never compressed. */
		assert_int_equal(extent(type, golden, 4096, 4096, 4096, 65536, &su, &du), -E2BIG);
		assert_int_equal(extent(type, golden, 512, 512, 512, 65536, &su, &du), -E2BIG);
		/* Incompressible. */
		assert_int_equal(extent(type, rnd, len, len, 4096, 65536, &su, &du), -E2BIG);

		/* Text: the whole encoded_extent_max, as in g4 (64K -> 8 sectors). */
		assert_int_equal(extent(type, golden, len, len, 4096, 65536, &su, &du), 0);
		assert_int_equal(su, 65536);
		assert_int_equal(du, 4096);
		assert_int_equal(extent(type, text, len, len, 4096, 65536, &su, &du), 0);
		assert_int_equal(su, 65536);
		/* Larger encoded_extent_max (crc128 allows 8192 sectors). */
		assert_int_equal(extent(type, text, len, len, 4096, 8192 * 512, &su, &du), 0);
		assert_int_equal(su, len);
		/* Less input than the maximum. */
		assert_int_equal(extent(type, text, 12288, 12288, 4096, 65536, &su, &du), 0);
		assert_int_equal(su, 12288);

		/* 512-byte blocks: a 4K write of 13 bytes of text and zeros
		 * becomes one sector (doc/format.md §8.3). */
		memset(mix, 0, 4096);
		memcpy(mix, "subdir/rand8k", 13);
		assert_int_equal(extent(type, mix, 4096, 4096, 512, 65536, &su, &du), 0);
		assert_int_equal(su, 4096);
		assert_int_equal(du, 512);

		/* Must save a whole block: 4K random + 4K zeros does not (8K ->
		 * 8K); 4K random + 8K zeros does (12K -> 8K). */
		memcpy(mix, rnd, 4096);
		memset(mix + 4096, 0, 8192);
		assert_int_equal(extent(type, mix, 8192, 8192, 4096, 65536, &su, &du), -E2BIG);
		assert_int_equal(extent(type, mix, 12288, 12288, 4096, 65536, &su, &du), 0);
		assert_int_equal(su, 12288);
		assert_int_equal(du, 8192);
		/* ... and with 512-byte blocks the first one saves sectors. */
		assert_int_equal(extent(type, mix, 8192, 8192, 512, 65536, &su, &du), 0);
		assert_int_equal(su, 8192);
		assert_true(du <= 4608);

		/* Little room (end of a bucket): the input is cut down until
		 * the output fits. 32K text then random. */
		memcpy(mix, text, 32768);
		memcpy(mix + 32768, rnd, len - 32768);
		assert_int_equal(extent(type, mix, len, 16384, 4096, 65536, &su, &du), 0);
		assert_true(su < 65536);
		assert_true(du <= 16384);
		if (type != BCH_COMPRESSION_LZ4)	/* 64K -> 40K -> 28K */
			assert_int_equal(su, 28672);
		print_message("%s: 16K of room: %zu -> %zu bytes\n",
			      bch_compression_type_name(type), su, du);
		/* Room for one block: the input shrinks until its output fits. */
		assert_int_equal(extent(type, mix, len, 4096, 4096, 65536, &su, &du), 0);
		assert_int_equal(du, 4096);
		assert_true(su >= 8192);
		/* No room for a block: nothing can be saved. */
		assert_int_equal(extent(type, golden, len, 4095, 4096, 65536, &su, &du), -E2BIG);
		assert_int_equal(extent(type, rnd, len, 4096, 4096, 65536, &su, &du), -E2BIG);
		/* Odd room (not a block multiple) is rounded down. */
		assert_int_equal(extent(type, golden, len, 6000, 4096, 65536, &su, &du), 0);
		assert_int_equal(du, 4096);
	}

	/* Bad parameters. */
	assert_int_equal(bch_compress_extent(BCH_COMPRESSION_NONE, 0, text, 65536,
					     mix, 65536, 4096, 65536, &su, &du), -EINVAL);
	assert_int_equal(bch_compress_extent(BCH_COMPRESSION_LZ4_OLD, 0, text, 65536,
					     mix, 65536, 4096, 65536, &su, &du), -EINVAL);
	assert_int_equal(bch_compress_extent(BCH_COMPRESSION_LZ4, 0, text, 65536,
					     mix, 65536, 0, 65536, &su, &du), -EINVAL);
	assert_int_equal(bch_compress_extent(BCH_COMPRESSION_LZ4, 0, text, 65536,
					     mix, 65536, 1000, 65536, &su, &du), -EINVAL);
	assert_int_equal(bch_compress_extent(BCH_COMPRESSION_LZ4, 0, text, 65536,
					     mix, 65536, 3072, 65536, &su, &du), -EINVAL);
	free(text);
	free(rnd);
	free(golden);
	free(mix);
}

/* ---- threads ------------------------------------------------------------------ */

struct thread_arg {
	unsigned	id;
	unsigned	failures;
};

static void *thread_fn(void *p)
{
	struct thread_arg *a = p;
	size_t len = 65536;
	uint8_t *src = malloc(len), *c = malloc(len), *out = malloc(len);

	if (!src || !c || !out) {
		a->failures++;
		goto out;
	}
	for (unsigned it = 0; it < 60; it++) {
		unsigned type = writable_types[(it + a->id) % 3];
		size_t n = len;

		fill_text(src, len, a->id * 1000 + it);
		if (bch_compress(type, src, len, c, &n, it % 2 ? 0 : 1) ||
		    bch_decompress(type, c, round_up(n, 512), out, len) ||
		    memcmp(src, out, len))
			a->failures++;
	}
	/* Half the threads free their work areas, the others leave it to
	 * the thread-exit destructor. */
	if (a->id % 2)
		bch_compress_thread_exit();
out:
	free(src);
	free(c);
	free(out);
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t th[6];
	struct thread_arg args[6];

	(void) state;
	for (unsigned i = 0; i < 6; i++) {
		args[i] = (struct thread_arg) { .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, thread_fn, &args[i]), 0);
	}
	for (unsigned i = 0; i < 6; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(args[i].failures, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_golden_lz4),
		cmocka_unit_test(test_golden_zstd),
		cmocka_unit_test(test_gzip_reference_params),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_none_and_lz4_old),
		cmocka_unit_test(test_lz4_offsets),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_zstd_length),
		cmocka_unit_test(test_corrupted),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_writer),
		cmocka_unit_test(test_threads),
	};
	int ret;

	if (sodium_init() < 0)
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	bch_compress_thread_exit();
	return ret;
}
