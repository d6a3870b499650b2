// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for libbcachefs/crypto.c: ChaCha20 and Poly1305 (RFC 8439 and
 * the spec's vectors: 20 §20.9.5, 30 §1.7, 40 §40.4.5-6), scrypt and master
 * key wrapping (doc/format.md §9.2, golden c1_encrypted), keyring and passphrase
 * input.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <keyutils.h>
#include <sodium.h>

#include "codec/checksum.h"
#include "codec/crypto.h"
#include "util/errcode.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ------------------------------------------------------------- */


static void hex_exact(const char *hex, uint8_t *out, size_t len)
{
	assert_int_equal(hex2bin(hex, out, len), len);
}

static void assert_hex(const void *got, const char *hex)
{
	uint8_t want[256];
	size_t n = hex2bin(hex, want, sizeof(want));

	assert_memory_equal(got, want, n);
}

static struct bch_key key_from_hex(const char *hex)
{
	struct bch_key k;

	hex_exact(hex, bch_key_bytes(&k), 32);
	return k;
}

static void fill_random(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = random();
}

/* ---- RFC 8439 ------------------------------------------------------------ */

static void test_rfc8439_chacha20(void **state)
{
	(void) state;
	static const char pt[] =
		"Ladies and Gentlemen of the class of '99: If I could offer you "
		"only one tip for the future, sunscreen would be it.";
	uint8_t buf[sizeof(pt) - 1], iv[16];
	struct bch_key key;

	for (unsigned i = 0; i < 32; i++)
		bch_key_bytes(&key)[i] = i;
	/* §2.4.2: counter 1, nonce 00 00 00 00 00 00 00 4a 00 00 00 00;
	 * the 16-byte IV is counter (LE32) ‖ nonce */
	hex_exact("01000000 00000000 0000004a 00000000", iv, 16);
	memcpy(buf, pt, sizeof(buf));
	bch_chacha20(&key, bch_nonce_from_bytes(iv), buf, sizeof(buf));
	assert_hex(buf,
		"6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
		"f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
		"07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
		"5af90bbf74a35be6b40b8eedf2785e42874d");
	/* and back */
	bch_chacha20(&key, bch_nonce_from_bytes(iv), buf, sizeof(buf));
	assert_memory_equal(buf, pt, sizeof(buf));
}

static void test_rfc8439_poly1305(void **state)
{
	(void) state;
	static const char msg[] = "Cryptographic Forum Research Group";
	uint8_t otk[32], tag[16];

	hex_exact("85d6be7857556d337f4452fe42d506a8"
		  "0103808afb0db2fd4abff6af4149f51b", otk, 32);
	bch_poly1305(otk, msg, sizeof(msg) - 1, tag);
	assert_hex(tag, "a8061dc1305136c6c22b8baf0c0127a9");
}

/* Our mapping equals IETF ChaCha20 with counter d[0], nonce = IV bytes 4..15. */
static void test_chacha20_matches_ietf(void **state)
{
	(void) state;
	uint8_t a[1000], b[1000], iv[16];
	struct bch_key key;

	for (unsigned i = 0; i < 20; i++) {
		size_t len = random() % sizeof(a);

		fill_random(bch_key_bytes(&key), 32);
		fill_random(iv, 16);
		iv[3] = 0;	/* keep the counter far from wrapping */
		fill_random(a, len);
		memcpy(b, a, len);

		struct bch_nonce n = bch_nonce_from_bytes(iv);

		bch_chacha20(&key, n, a, len);
		crypto_stream_chacha20_ietf_xor_ic(b, b, len, iv + 4, n.d[0],
						   bch_key_bytes(&key));
		assert_memory_equal(a, b, len);
	}
}

static void test_chacha20_round_trip_and_split(void **state)
{
	(void) state;
	size_t len = 10000;
	uint8_t *pt = malloc(len), *ct = malloc(len), *ct2 = malloc(len);
	struct bch_key key;
	struct bch_nonce n = bch_nonce_make(3, 0x1234, 0x5678, 0x20000000);

	assert_non_null(pt);
	assert_non_null(ct);
	assert_non_null(ct2);
	fill_random(bch_key_bytes(&key), 32);
	fill_random(pt, len);

	memcpy(ct, pt, len);
	bch_chacha20(&key, n, ct, len);
	assert_memory_not_equal(ct, pt, len);

	/* pieces at 64-byte multiples with bch_nonce_add() give the same */
	memcpy(ct2, pt, len);
	for (size_t off = 0; off < len;) {
		size_t piece = 64 * (1 + random() % 20);

		if (piece > len - off)
			piece = len - off;
		bch_chacha20(&key, bch_nonce_add(n, off), ct2 + off, piece);
		off += piece;
	}
	assert_memory_equal(ct, ct2, len);

	bch_chacha20(&key, n, ct, len);
	assert_memory_equal(ct, pt, len);

	/* bch_encrypt: only for the encryption types */
	memcpy(ct, pt, len);
	for (unsigned t = 0; t < BCH_CHECKSUM_NR; t++)
		if (!bch_csum_type_is_encryption(t))
			assert_int_equal(bch_encrypt(t, &key, n, ct, len), 0);
	assert_memory_equal(ct, pt, len);
	assert_int_equal(bch_encrypt(4, &key, n, ct, len), 0);
	memcpy(ct2, pt, len);
	bch_chacha20(&key, n, ct2, len);
	assert_memory_equal(ct, ct2, len);
	assert_int_equal(bch_encrypt(3, NULL, n, ct, len), -ENOKEY);
	assert_int_equal(bch_encrypt(7, &key, n, ct, len), -EINVAL);

	bch_chacha20(&key, n, ct, 0);	/* no-op */
	free(pt);
	free(ct);
	free(ct2);
}

/* ---- doc/format.md §7.4: synthetic data extent ---------------------------- */

static void test_extent_synthetic(void **state)
{
	(void) state;
	uint8_t *buf = calloc(1, 4096), otk[32];
	struct bch_key key;
	struct bch_nonce n = bch_nonce_extent(65538, 0, 0, 8, 0);
	struct bch_csum_val v;

	assert_non_null(buf);
	for (unsigned i = 0; i < 32; i++)
		bch_key_bytes(&key)[i] = i;

	bch_chacha20(&key, n, buf, 4096);
	assert_hex(buf, "c88743911855ba9f020c684fedc38c24"
			"3e45346d308713e8cbbe396115495ae9");
	assert_hex(buf + 4064, "b57be73c29d5658fb220b4e0bdb05c27"
			       "98d526258a760f002fdaad883f8d476c");

	bch_poly1305_key(&key, n, otk);
	assert_hex(otk, "5b9a4e45fb7fa49d81405713a8f1c147"
			"49697fdb3d37492d5b305ce0c9f6cddc");

	uint8_t tag[16];

	bch_poly1305(otk, buf, 4096, tag);
	assert_hex(tag, "427da9577512140a3e1b74b3019ba2c2");

	assert_int_equal(bch_checksum(4, n, &key, buf, 4096, &v), 0);
	bch_csum_to_bytes(v, tag);
	assert_hex(tag, "427da9577512140a3e1b74b3019ba2c2");

	assert_int_equal(bch_checksum(3, n, &key, buf, 4096, &v), 0);
	bch_csum_to_bytes(v, tag);
	assert_hex(tag, "427da9577512140a3e1b 000000000000");
	free(buf);
}

/* ---- doc/format.md §7.5: real encrypted extent (--no_passphrase image) ---- */

static void test_extent_real(void **state)
{
	(void) state;
	uint8_t *buf = calloc(1, 4096);
	struct bch_key key = key_from_hex(
		"feebc4c3d84bea4fa2c4d2e5e62913287b9d2d2f727d43622fb8cc074eb0f3b8");
	struct bch_nonce n = bch_nonce_extent(65543, 0, 0, 8, 0);
	struct bch_csum_val v;

	assert_non_null(buf);
	memcpy(buf, "subdir/rand8k", 13);
	bch_chacha20(&key, n, buf, 4096);
	assert_hex(buf, "f7b24b7cc863117cb2f6ed80ee88f90a"
			"93ba51b01119b9bf72358d4ba4949c9b");
	assert_hex(buf + 4064, "b60976832b47ca3b81e24580cb68f1a6"
			       "17d53d2347cd5125f1efac62c02afcf6");

	assert_int_equal(bch_checksum(3, n, &key, buf, 4096, &v), 0);
	assert_true(v.lo == 0x771a5a8023076444ULL);
	assert_true(v.hi == 0x8196);

	/* decrypting gives the plaintext back */
	bch_chacha20(&key, n, buf, 4096);
	assert_memory_equal(buf, "subdir/rand8k", 13);
	for (unsigned i = 13; i < 4096; i++)
		assert_int_equal(buf[i], 0);
	free(buf);
}

/* ---- spec 20 §20.9.5: encrypted btree node ---------------------------- */

static const char enc_node[] =
	"c4 f8 dd b7 23 27 8b 68 85 43 6e c5 e0 04 d8 3f"
	"1d a4 c8 e4 9d f9 5e e7 3c aa c6 82 95 91 ba 17"
	"c2 3c 0b de 1e 5a 9a ca 07 80 d3 22 7b 64 7f 78"
	"72 90 e4 ea 78 6f 31 65 70 76 bc 8e 87 06 5d e2"
	"8e 86 c2 0b f2 0b 8c 5d 5f bf b9 c0 fa 98 71 ce"
	"bf de e3 6c 36 41 15 7a 0f 07 16 fa a0 0c 4d fe"
	"bb a3 c7 ed 0d 69 4c 44 91 b5 f4 48 31 74 e8 11"
	"9f 19 ec b2 9c 19 df 1f 76 ba 34 a6 60 cc 2e 65"
	"d7 fb 1e 52 e2 a6 42 4b 58 6c bb 68 9a ac 12 df"
	"00 00 00 00 00 00 00 00 04 00 00 00 03 00 00 00";

static void test_btree_node_encrypted(void **state)
{
	(void) state;
	struct bch_key key = key_from_hex(
		"1eb3f2664766e178e5404b71134454749c91b33200e4ca1ae3701839e37d626a");
	uint8_t node[160], otk[32], want[160];
	struct bch_csum_val v;
	uint64_t seq = 0, jseq = 0;

	hex_exact(enc_node, node, sizeof(node));
	for (int i = 7; i >= 0; i--) {
		seq = seq << 8 | node[0x88 + i];
		jseq = jseq << 8 | node[0x90 + i];
	}

	struct bch_nonce n = bch_nonce_btree(0, seq, jseq);

	assert_int_equal(n.d[1], 0x68bb6c58);
	assert_int_equal(n.d[2], 0xdf12ac9a);
	assert_int_equal(n.d[3], 0x20000000);

	bch_poly1305_key(&key, n, otk);
	assert_hex(otk, "a2829d48264ba2db2234208021b4bd75"
			"4d9c31367db5dd94c581460055b537d6");

	/* MAC over bytes 16..end of keys (u64s 0: 160), as stored */
	assert_int_equal(bch_checksum(4, n, &key, node + 16, 160 - 16, &v), 0);
	assert_true(bch_csum_eq(v, bch_csum_from_bytes(node)));
	assert_true(bch_csum_eq(v, (struct bch_csum_val) {
		0x688b2723b7ddf8c4ULL, 0x3fd804e0c56e4385ULL }));

	/* header bytes 24..135 decrypt from counter 0 */
	memcpy(want, node, sizeof(want));
	memset(want + 24, 0, 112);
	hex_exact("01 00 00 00 01 00 00 00", want + 0x18, 8);
	memset(want + 0x38, 0xff, 16);
	hex_exact("01 70 06 00 00 00 00 01 01 06", want + 0x48, 10);
	bch_chacha20(&key, n, node + 24, 112);
	assert_memory_equal(node, want, sizeof(node));
	/* the keys (none here) would start at counter 2 */
	assert_int_equal(bch_nonce_add(n, 128).d[0], 2);

	/* second bset at 4096: first 16 key bytes decrypt at counter 4096 */
	uint8_t k[16];

	hex_exact("ff 05 a2 53 b4 94 b5 9f e0 bb 33 6f a6 f9 55 e6", k, 16);
	n = bch_nonce_btree(4096, seq, 2);
	assert_int_equal(n.d[0], 0x1000);
	assert_int_equal(n.d[3], 0x20000002);
	bch_chacha20(&key, n, k, 16);
	assert_hex(k, "0c 01 80 00 00 00 00 00 00 00 00 00 00 00 00 00");
}

/* ---- spec 30 §1.7 vector D: encrypted jset ----------------------------- */

static const char jset_d[] =
	"fac4be16 0c9364f6 215c263a 9596219f"
	"fb8cb5fa c2351a77 04000000 00000000"
	"02000000 04000000 0e000000 459ee73a"
	"5bdef44a 51643988 bf84dc91 f00efaaf"
	"a57daaf7 f427f71f b4a3b2d5 6263aa1f"
	"7c2a3ad2 84bc8f11 d1b8061b 2c97b952"
	"e2033e26 51346aae 051afe27 ae2f7359"
	"0d432f72 2efc87b1 df4a39e0 38f1d9fa"
	"50a241f4 3f013d58 29fb3820 d82d6517"
	"16a549f8 53030f03 903e4ad0 29fd893b"
	"39261011 42438df0";

static void test_jset_encrypted(void **state)
{
	(void) state;
	struct bch_key key = key_from_hex(
		"21a0584cd9cd6867834b3f8bb491699b"
		"a27fb05aaeef2b7ba17f86cb93d25961");
	uint8_t j[168], orig[168], otk[32], pt[124];
	struct bch_nonce n = bch_nonce_journal(4);
	struct bch_csum_val v;
	size_t o = 0;

	hex_exact(jset_d, j, sizeof(j));
	memcpy(orig, j, sizeof(j));

	bch_poly1305_key(&key, n, otk);
	assert_hex(otk, "5411e609f02161b983eb5d818433bf94"
			"948fc37050824212884e48a43c35249e");

	assert_int_equal(bch_checksum(4, n, &key, j + 16, 168 - 16, &v), 0);
	assert_true(bch_csum_eq(v, bch_csum_from_bytes(j)));

	/* plaintext of bytes 44..167 */
	memset(pt, 0, sizeof(pt));
	o += hex2bin("01000100 04000000 00000000 06000100 01000000 06018000",
		     pt + o, sizeof(pt) - o);
	o += 20;
	memset(pt + o, 0xff, 16);
	o += 16;
	o += hex2bin("01400300 00000001 06000400 01000000 06018000",
		     pt + o, sizeof(pt) - o);
	o += 20;
	memset(pt + o, 0xff, 16);
	o += 16;
	o += hex2bin("01c80000 00000001", pt + o, sizeof(pt) - o);
	assert_int_equal(o, sizeof(pt));

	assert_int_equal(bch_encrypt(4, &key, n, j + 44, 168 - 44), 0);
	assert_memory_equal(j + 44, pt, sizeof(pt));
	assert_memory_equal(j, orig, 44);

	/* the writer's order: encrypt, then MAC, gives the on-disk bytes */
	assert_int_equal(bch_encrypt(4, &key, n, j + 44, 168 - 44), 0);
	assert_int_equal(bch_checksum(4, n, &key, j + 16, 168 - 16, &v), 0);
	bch_csum_to_bytes(v, j);
	assert_memory_equal(j, orig, sizeof(j));

	/* a flipped bit is caught */
	j[100] ^= 1;
	assert_int_equal(bch_checksum(4, n, &key, j + 16, 168 - 16, &v), 0);
	assert_false(bch_csum_eq(v, bch_csum_from_bytes(orig)));
}

/* ---- kdf, scrypt, master key ------------------------------------------- */

static void test_kdf_flags(void **state)
{
	(void) state;
	uint64_t n;
	uint32_t r, p;
	uint8_t le[8];
	uint64_t f = bch_kdf_flags_encode(BCH_KDF_SCRYPT_LOG2_N,
					  BCH_KDF_SCRYPT_LOG2_R,
					  BCH_KDF_SCRYPT_LOG2_P);

	assert_true(f == 0x000000040003000EULL);
	for (unsigned i = 0; i < 8; i++)
		le[i] = f >> (8 * i);
	assert_hex(le, "0e 00 03 00 04 00 00 00");

	assert_int_equal(bch_kdf_flags_decode(f, &n, &r, &p), 0);
	assert_true(n == 16384);
	assert_int_equal(r, 8);
	assert_int_equal(p, 16);

	assert_int_equal(bch_kdf_flags_decode(0, &n, &r, &p), 0);
	assert_true(n == 1 && r == 1 && p == 1);
	assert_int_equal(bch_kdf_flags_decode(64, &n, &r, &p), -EINVAL);
	assert_int_equal(bch_kdf_flags_decode(32ULL << 16, &n, &r, &p), -EINVAL);
	assert_int_equal(bch_kdf_flags_decode(32ULL << 32, &n, &r, &p), -EINVAL);

	/* --no_passphrase params (all 0 -> N = 1): rejected like libscrypt */
	struct bch_key k;

	assert_int_equal(bch_derive_key("x", 1, 0, &k), -EINVAL);
	assert_int_equal(bch_scrypt("x", 1, 1000, 8, 1, &k), -EINVAL);
	assert_int_equal(bch_scrypt("x", 1, 1024, 0, 1, &k), -EINVAL);

	/* cheap parameters work, also for the empty passphrase */
	struct bch_key a, b;

	assert_int_equal(bch_scrypt("", 0, 16, 1, 1, &a), 0);
	assert_int_equal(bch_scrypt("x", 1, 16, 1, 1, &b), 0);
	assert_memory_not_equal(bch_key_bytes(&a), bch_key_bytes(&b), 32);
	assert_int_equal(bch_derive_key("x", 1, bch_kdf_flags_encode(4, 0, 0), &a), 0);
	assert_memory_equal(bch_key_bytes(&a), bch_key_bytes(&b), 32);
}

/* doc/format.md §9.2 (c3_passphrase_ops) */
static void test_master_key_c3(void **state)
{
	(void) state;
	uint8_t uuid[16], blob[40], out[40];
	struct bch_key wk, master, expect_master;

	hex_exact("b4a4d815263d440d919e828fc04220ea", uuid, 16);
	hex_exact("4d130a6f16b61021df0f67a16cc347716c0e7c8fe422f2d283591c29f883f3e4",
		  bch_key_bytes(&expect_master), 32);

	assert_int_equal(bch_derive_key("golden-pass", 11, 0x000000040003000EULL,
					&wk), 0);
	assert_hex(bch_key_bytes(&wk), "45fdd1c93eb3e77eb8b4803fe94e670e"
			   "28d2cea1be5b69b0ac7a30af099154bb");

	hex_exact("b766a600ae87338c 5d6e4da3c08f44c44a0b3463efd57e5b"
		  "5992f036bc2868acfddae029ebedca16", blob, 40);
	assert_true(bch_key_blob_is_encrypted(blob));
	assert_int_equal(bch_unwrap_master_key(blob, &wk, uuid, &master), 0);
	assert_memory_equal(bch_key_bytes(&master), bch_key_bytes(&expect_master), 32);

	bch_wrap_master_key(&master, &wk, uuid, out);
	assert_memory_equal(out, blob, 40);

	/* set-passphrase "new-pass" */
	assert_int_equal(bch_derive_key("new-pass", 8, 0x000000040003000EULL,
					&wk), 0);
	assert_hex(bch_key_bytes(&wk), "2027e5f5062fc2361400ba9d36155d8f"
			   "64a35c79c3f6c99ae9a46b1f9dba337f");
	bch_wrap_master_key(&master, &wk, uuid, out);
	assert_hex(out, "76beb9285aecb6c66a8fd2c33420f0be413884a02b5a0286"
			"5aab176562eb51f6935bcf85e534f4c3");

	/* the old blob does not open with the new key */
	assert_int_equal(bch_unwrap_master_key(blob, &wk, uuid, &master),
			 -EKEYREJECTED);
	for (unsigned i = 0; i < 32; i++)
		assert_int_equal(bch_key_bytes(&master)[i], 0);
	/* nor with the right key but the wrong (user) uuid */
	uuid[0] ^= 1;
	assert_int_equal(bch_unwrap_master_key(out, &wk, uuid, &master),
			 -EKEYREJECTED);
	uuid[0] ^= 1;
	assert_int_equal(bch_unwrap_master_key(out, &wk, uuid, &master), 0);

	/* remove-passphrase: clear */
	bch_store_master_key_clear(&master, out);
	assert_hex(out, "6263682a2a6b6579 4d130a6f16b61021df0f67a16cc34771"
			"6c0e7c8fe422f2d283591c29f883f3e4");
	assert_false(bch_key_blob_is_encrypted(out));
	memset(bch_key_bytes(&master), 0, 32);
	assert_int_equal(bch_master_key_from_clear(out, &master), 0);
	assert_memory_equal(bch_key_bytes(&master), bch_key_bytes(&expect_master), 32);
	assert_int_equal(bch_master_key_from_clear(blob, &master), -EINVAL);

	bch_key_wipe(&master);
	for (unsigned i = 0; i < 32; i++)
		assert_int_equal(bch_key_bytes(&master)[i], 0);
}

/* golden c1_encrypted: crypt field at superblock byte 0x330 */
static void test_master_key_golden_c1(void **state)
{
	(void) state;
	uint8_t uuid[16], field[64], blob[40];
	struct bch_key wk, master;
	uint64_t kdf_flags = 0;

	/* internal uuid (superblock bytes 40..55) */
	hex_exact("a1045ee9b42646ef96f28b7b01f80a0f", uuid, 16);
	hex_exact("08000000020000000000000000000000"
		  "0e00030004000000f4e6d0140ebb8948"
		  "ca8d50efc0d61e6735d925367797506b"
		  "6ad1742a2e3dbfa51f2eb42417b4c78d", field, 64);
	for (int i = 7; i >= 0; i--)
		kdf_flags = kdf_flags << 8 | field[16 + i];
	memcpy(blob, field + 24, 40);

	assert_true(bch_key_blob_is_encrypted(blob));
	assert_int_equal(bch_derive_key("golden-pass", 11, kdf_flags, &wk), 0);
	assert_int_equal(bch_unwrap_master_key(blob, &wk, uuid, &master), 0);

	/* a wrong passphrase is rejected */
	assert_int_equal(bch_derive_key("golden-pas", 10, kdf_flags, &wk), 0);
	assert_int_equal(bch_unwrap_master_key(blob, &wk, uuid, &master),
			 -EKEYREJECTED);
}

/* ---- keyring ------------------------------------------------------------- */

static void test_uuid_and_desc(void **state)
{
	(void) state;
	static const uint8_t uuid[16] = {
		0x0b, 0xad, 0xc0, 0xde, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1,
	};
	char s[37], desc[BCH_KEYRING_DESC_MAX];

	bch_uuid_to_str(uuid, s);
	assert_string_equal(s, "0badc0de-0000-4000-8000-000000000001");
	assert_int_equal(bch_keyring_desc(s, desc), 0);
	assert_string_equal(desc, "bcachefs:0badc0de-0000-4000-8000-000000000001");
	assert_int_equal(bch_keyring_desc("0BADC0DE-0000-4000-8000-00000000000A",
					  desc), 0);
	assert_string_equal(desc, "bcachefs:0badc0de-0000-4000-8000-00000000000a");

	assert_int_equal(bch_keyring_desc("0badc0de-0000-4000-8000-00000000001",
					  desc), -EINVAL);
	assert_int_equal(bch_keyring_desc("0badc0de00000-4000-8000-000000000001",
					  desc), -EINVAL);
	assert_int_equal(bch_keyring_desc("0badc0de-0000-4000-8000-00000000000g",
					  desc), -EINVAL);
	assert_int_equal(bch_keyring_desc(NULL, desc), -EINVAL);
}

static void test_keyring(void **state)
{
	(void) state;
	uint8_t uuid[16];
	char s[37];
	struct bch_key k, got;
	int ret;

	randombytes_buf(uuid, sizeof(uuid));
	bch_uuid_to_str(uuid, s);
	fill_random(bch_key_bytes(&k), 32);

	ret = bch_keyring_add(s, &k);
	if (ret == -ENOSYS || ret == -EPERM || ret == -EACCES ||
	    ret == -EDQUOT) {
		print_message("note: keyring not usable here (%s); skipped\n",
			      strerror(-ret));
		skip();
	}
	assert_int_equal(ret, 0);

	/* another uuid has no key */
	uint8_t other[16];
	char so[37];

	memcpy(other, uuid, 16);
	other[15] ^= 1;
	bch_uuid_to_str(other, so);
	assert_int_equal(bch_keyring_lookup(so, &got), -ENOKEY);

	assert_int_equal(bch_keyring_lookup(s, &got), 0);
	assert_memory_equal(bch_key_bytes(&got), bch_key_bytes(&k), 32);

	/* the logon key is there too */
	char desc[BCH_KEYRING_DESC_MAX];

	assert_int_equal(bch_keyring_desc(s, desc), 0);
	assert_true(keyctl_search(KEY_SPEC_USER_KEYRING, "logon", desc, 0) > 0);

	/* replacing */
	bch_key_bytes(&k)[0] ^= 0xff;
	assert_int_equal(bch_keyring_add(s, &k), 0);
	assert_int_equal(bch_keyring_lookup(s, &got), 0);
	assert_memory_equal(bch_key_bytes(&got), bch_key_bytes(&k), 32);

	assert_int_equal(bch_keyring_remove(s), 0);
	assert_int_equal(bch_keyring_lookup(s, &got), -ENOKEY);
	assert_true(keyctl_search(KEY_SPEC_USER_KEYRING, "logon", desc, 0) < 0);
	assert_int_equal(bch_keyring_remove(s), 0);

	/* a user key with a payload that is not 32 bytes */
	key_serial_t id = add_key("user", desc, "short", 5,
				  KEY_SPEC_USER_KEYRING);

	assert_true(id > 0);
	assert_int_equal(bch_keyring_lookup(s, &got), -EINVAL);
	assert_int_equal(bch_keyring_remove(s), 0);
}

/* ---- passphrases --------------------------------------------------------- */

static void write_all(int fd, const void *p, size_t len)
{
	assert_int_equal(write(fd, p, len), (ssize_t) len);
}

static void test_passphrase_fd(void **state)
{
	(void) state;
	int p[2];
	char *pass, rest[16];
	size_t len;

	assert_int_equal(pipe(p), 0);
	write_all(p[1], "golden-pass\nrest", 16);
	close(p[1]);
	assert_int_equal(bch_read_passphrase_fd(p[0], &pass, &len), 0);
	assert_int_equal(len, 11);
	assert_string_equal(pass, "golden-pass");
	bch_passphrase_free(pass, len);
	/* nothing after the newline was consumed */
	assert_int_equal(read(p[0], rest, sizeof(rest)), 4);
	assert_memory_equal(rest, "rest", 4);
	close(p[0]);

	/* no newline at EOF; only one newline stripped; empty; EOF */
	static const struct {
		const char *in;
		int ret;
		const char *out;
	} v[] = {
		{ "abc", 0, "abc" },
		{ "a b \r\n\n", 0, "a b \r" },
		{ "\n", 0, "" },
		{ "", -BCH_ERR_no_passphrase, NULL },
	};
	for (unsigned i = 0; i < ARRAY_SIZE(v); i++) {
		assert_int_equal(pipe(p), 0);
		write_all(p[1], v[i].in, strlen(v[i].in));
		close(p[1]);
		assert_int_equal(bch_read_passphrase(p[0], "unused", true,
						     &pass, &len), v[i].ret);
		if (v[i].out) {
			assert_int_equal(len, strlen(v[i].out));
			assert_string_equal(pass, v[i].out);
		} else {
			assert_null(pass);
		}
		bch_passphrase_free(pass, len);
		close(p[0]);
	}

	/* long lines grow the buffer */
	char big[5001];

	memset(big, 'x', 5000);
	big[5000] = '\n';
	assert_int_equal(pipe(p), 0);
	write_all(p[1], big, sizeof(big));
	close(p[1]);
	assert_int_equal(bch_read_passphrase_fd(p[0], &pass, &len), 0);
	assert_int_equal(len, 5000);
	assert_int_equal(strlen(pass), 5000);
	assert_memory_equal(pass, big, 5000);
	bch_passphrase_free(pass, len);
	close(p[0]);

	/* bad fd */
	assert_int_equal(bch_read_passphrase_fd(-1, &pass, &len), -EBADF);
}

static void test_passphrase_file(void **state)
{
	(void) state;
	char path[] = "/tmp/bch-test-pass.XXXXXX";
	int fd = mkstemp(path);
	char *pass;
	size_t len;

	assert_true(fd >= 0);
	write_all(fd, "from-file\nsecond line\n", 22);
	close(fd);
	assert_int_equal(bch_read_passphrase_file(path, &pass, &len), 0);
	assert_string_equal(pass, "from-file");
	assert_int_equal(len, 9);
	bch_passphrase_free(pass, len);
	unlink(path);
	assert_int_equal(bch_read_passphrase_file(path, &pass, &len), -ENOENT);
	assert_null(pass);
}

/* Terminal input through a pseudo-terminal. The "user" thread types each
 * line after the reader has printed its prompt (on stderr, redirected to a
 * pipe) and turned echo off (which flushes earlier input). */
struct typist {
	int		master, slave, errpipe;
	const char	*lines[2];
	unsigned	nr;
	char		prompts[256];
	size_t		prompts_len;
};

static bool echo_off(int fd)
{
	struct termios t;

	return !tcgetattr(fd, &t) && !(t.c_lflag & ECHO);
}

static void *typist_fn(void *arg)
{
	struct typist *t = arg;

	for (unsigned i = 0; i < t->nr; i++) {
		/* wait for prompt number i + 1 (each ends with ": ") */
		unsigned seen;

		do {
			struct pollfd pfd = { .fd = t->errpipe, .events = POLLIN };

			seen = 0;
			for (size_t j = 0; j + 1 < t->prompts_len; j++)
				seen += t->prompts[j] == ':' && t->prompts[j + 1] == ' ';
			if (seen > i)
				break;
			if (poll(&pfd, 1, 5000) <= 0)
				return NULL;
			ssize_t r = read(t->errpipe, t->prompts + t->prompts_len,
					 sizeof(t->prompts) - 1 - t->prompts_len);
			if (r <= 0)
				return NULL;
			t->prompts_len += r;
		} while (1);

		for (unsigned tries = 0; !echo_off(t->slave) && tries < 5000; tries++)
			usleep(1000);
		if (write(t->master, t->lines[i], strlen(t->lines[i])) < 0)
			return NULL;
	}
	return NULL;
}

static int tty_read(const char *l1, const char *l2, bool confirm,
		    char **pass, size_t *len, char *prompts, char *echoed)
{
	struct typist t = { .lines = { l1, l2 }, .nr = l2 ? 2 : 1 };
	int ep[2], saved_err, ret;
	pthread_t th;

	t.master = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(t.master >= 0);
	assert_int_equal(grantpt(t.master), 0);
	assert_int_equal(unlockpt(t.master), 0);
	t.slave = open(ptsname(t.master), O_RDWR | O_NOCTTY);
	assert_true(t.slave >= 0);
	assert_true(isatty(t.slave));

	assert_int_equal(pipe(ep), 0);
	t.errpipe = ep[0];
	fflush(stderr);
	saved_err = dup(STDERR_FILENO);
	dup2(ep[1], STDERR_FILENO);

	assert_int_equal(pthread_create(&th, NULL, typist_fn, &t), 0);
	ret = bch_read_passphrase(t.slave, "Enter passphrase: ", confirm,
				  pass, len);
	pthread_join(th, NULL);

	fflush(stderr);
	dup2(saved_err, STDERR_FILENO);
	close(saved_err);
	close(ep[1]);
	/* the rest of stderr (the final newline) */
	ssize_t r;

	while ((r = read(ep[0], t.prompts + t.prompts_len,
			 sizeof(t.prompts) - 1 - t.prompts_len)) > 0)
		t.prompts_len += r;
	close(ep[0]);
	t.prompts[t.prompts_len] = 0;
	strcpy(prompts, t.prompts);

	/* what the terminal echoed back */
	int fl = fcntl(t.master, F_GETFL);
	size_t n = 0;

	fcntl(t.master, F_SETFL, fl | O_NONBLOCK);
	while (n < 255 && (r = read(t.master, echoed + n, 255 - n)) > 0)
		n += r;
	echoed[n] = 0;

	close(t.slave);
	close(t.master);
	return ret;
}

static void test_passphrase_tty(void **state)
{
	(void) state;
	char *pass, prompts[256], echoed[256];
	size_t len;

	int m = posix_openpt(O_RDWR | O_NOCTTY);

	if (m < 0) {
		print_message("note: no pseudo-terminals here; skipped\n");
		skip();
	}
	close(m);

	assert_int_equal(tty_read("s3cret\n", NULL, false, &pass, &len,
				  prompts, echoed), 0);
	assert_string_equal(pass, "s3cret");
	assert_string_equal(prompts, "Enter passphrase: \n");
	assert_null(strstr(echoed, "s3cret"));
	bch_passphrase_free(pass, len);

	assert_int_equal(tty_read("same\n", "same\n", true, &pass, &len,
				  prompts, echoed), 0);
	assert_string_equal(pass, "same");
	assert_string_equal(prompts, "Enter passphrase: \n"
				     BCH_PASSPHRASE_CONFIRM_PROMPT "\n");
	assert_null(strstr(echoed, "same"));
	bch_passphrase_free(pass, len);

	assert_int_equal(tty_read("one\n", "two\n", true, &pass, &len,
				  prompts, echoed), -EINVAL);
	assert_null(pass);
	assert_int_equal(len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc8439_chacha20),
		cmocka_unit_test(test_rfc8439_poly1305),
		cmocka_unit_test(test_chacha20_matches_ietf),
		cmocka_unit_test(test_chacha20_round_trip_and_split),
		cmocka_unit_test(test_extent_synthetic),
		cmocka_unit_test(test_extent_real),
		cmocka_unit_test(test_btree_node_encrypted),
		cmocka_unit_test(test_jset_encrypted),
		cmocka_unit_test(test_kdf_flags),
		cmocka_unit_test(test_master_key_c3),
		cmocka_unit_test(test_master_key_golden_c1),
		cmocka_unit_test(test_uuid_and_desc),
		cmocka_unit_test(test_keyring),
		cmocka_unit_test(test_passphrase_fd),
		cmocka_unit_test(test_passphrase_file),
		cmocka_unit_test(test_passphrase_tty),
	};

	srandom(4321);
	if (bch_crypto_init())
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
