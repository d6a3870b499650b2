// SPDX-License-Identifier: GPL-2.0
/*
 * Journal entry checks on real jsets: one from a golden image (crc32c) and
 * the encrypted test vector of spec 30 §1.7; then every repair of
 * bch_jset_validate_entries(), and a seeded mutation loop that must never
 * read outside the jset (run under ASan by make check-asan).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "codec/checksum.h"
#include "codec/crypto.h"
#include "util/errcode.h"
#include "journal/journal.h"
#include "util/util.h"

/* a_default_1G final image: jset seq 2 at dev 0 sector 784 (crc32c), 272 bytes */
static const uint8_t jset_seq2[272] = {
  0xc9, 0x67, 0x09, 0x8e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0xd7, 0x3a, 0xa2, 0xf4, 0x42, 0x98, 0x1e, 0x72,
  0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
  0x01, 0x00, 0x00, 0x00, 0x1b, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
  0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x01, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x0c, 0x01, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xcb, 0x7b, 0x45, 0x05,
  0xfa, 0x4f, 0xdd, 0x99, 0x00, 0x00, 0x20, 0x04, 0xed, 0x41, 0x02, 0x00,
  0xe7, 0x12, 0x56, 0x1d, 0x92, 0x3c, 0x4a, 0x77, 0x02, 0x00, 0xe7, 0x12,
  0x56, 0x1d, 0x92, 0x3c, 0x4a, 0x77, 0x02, 0x00, 0xe7, 0x12, 0x56, 0x1d,
  0x92, 0x3c, 0x4a, 0x77, 0x02, 0x00, 0xe7, 0x12, 0x56, 0x1d, 0x92, 0x3c,
  0x4a, 0x77, 0x00, 0x00, 0x06, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
  0x06, 0x01, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
  0xff, 0xff, 0xff, 0xff, 0x01, 0x40, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x01,
  0x06, 0x00, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x01, 0x80, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
  0x01, 0x40, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01
};
/* spec 30 §1.7 test vector D: encrypted jset seq 4, 168 bytes */
static const uint8_t jset_enc[168] = {
  0xfa, 0xc4, 0xbe, 0x16, 0x0c, 0x93, 0x64, 0xf6, 0x21, 0x5c, 0x26, 0x3a,
  0x95, 0x96, 0x21, 0x9f, 0xfb, 0x8c, 0xb5, 0xfa, 0xc2, 0x35, 0x1a, 0x77,
  0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
  0x04, 0x00, 0x00, 0x00, 0x0e, 0x00, 0x00, 0x00, 0x45, 0x9e, 0xe7, 0x3a,
  0x5b, 0xde, 0xf4, 0x4a, 0x51, 0x64, 0x39, 0x88, 0xbf, 0x84, 0xdc, 0x91,
  0xf0, 0x0e, 0xfa, 0xaf, 0xa5, 0x7d, 0xaa, 0xf7, 0xf4, 0x27, 0xf7, 0x1f,
  0xb4, 0xa3, 0xb2, 0xd5, 0x62, 0x63, 0xaa, 0x1f, 0x7c, 0x2a, 0x3a, 0xd2,
  0x84, 0xbc, 0x8f, 0x11, 0xd1, 0xb8, 0x06, 0x1b, 0x2c, 0x97, 0xb9, 0x52,
  0xe2, 0x03, 0x3e, 0x26, 0x51, 0x34, 0x6a, 0xae, 0x05, 0x1a, 0xfe, 0x27,
  0xae, 0x2f, 0x73, 0x59, 0x0d, 0x43, 0x2f, 0x72, 0x2e, 0xfc, 0x87, 0xb1,
  0xdf, 0x4a, 0x39, 0xe0, 0x38, 0xf1, 0xd9, 0xfa, 0x50, 0xa2, 0x41, 0xf4,
  0x3f, 0x01, 0x3d, 0x58, 0x29, 0xfb, 0x38, 0x20, 0xd8, 0x2d, 0x65, 0x17,
  0x16, 0xa5, 0x49, 0xf8, 0x53, 0x03, 0x0f, 0x03, 0x90, 0x3e, 0x4a, 0xd0,
  0x29, 0xfd, 0x89, 0x3b, 0x39, 0x26, 0x10, 0x11, 0x42, 0x43, 0x8d, 0xf0,
};

#define MAGIC_A		0x721e9842f4a23ad7ULL	/* a_default_1G */
#define MAGIC_D		0x771a35c2fab58cfbULL	/* test vector D */

static const uint8_t key_d[32] = {
	0x21, 0xa0, 0x58, 0x4c, 0xd9, 0xcd, 0x68, 0x67, 0x83, 0x4b, 0x3f, 0x8b,
	0xb4, 0x91, 0x69, 0x9b, 0xa2, 0x7f, 0xb0, 0x5a, 0xae, 0xef, 0x2b, 0x7b,
	0xa1, 0x7f, 0x86, 0xcb, 0x93, 0xd2, 0x59, 0x61,
};

static const struct jset_loc loc = { 0, 3, 784 };

/* An 8-aligned, writable copy with room to spare. */
static struct jset *copy_jset(const uint8_t *src, size_t len, size_t room)
{
	void *p = aligned_alloc(8, round_up(room, 8));

	assert_non_null(p);
	memset(p, 0, room);
	memcpy(p, src, len);
	return p;
}

static void rechecksum(struct jset *j)
{
	struct bch_csum_val v;

	assert_int_equal(bch_checksum(JSET_CSUM_TYPE(j), bch_nonce_journal(le64_to_cpu(j->seq)),
				      NULL, (uint8_t *)j + 16, jset_bytes(j) - 16, &v), 0);
	bch_csum_to_bytes(v, &j->csum);
}

static unsigned count_records(struct jset *j, unsigned type, unsigned *keys)
{
	struct jset_entry *e;
	struct bkey *k;
	unsigned n = 0;

	*keys = 0;
	for_each_jset_entry(e, j) {
		if (e->type != type)
			continue;
		if (le16_to_cpu(e->u64s))
			n++;
		if (type == BCH_JSET_ENTRY_btree_keys)
			for_each_jset_entry_key(k, e)
				(*keys)++;
	}
	return n;
}

static void test_header_ok(void **state)
{
	struct printbuf err = PRINTBUF;
	size_t bytes;

	assert_int_equal(bch_jset_check_header((const void *)jset_seq2, 4096, MAGIC_A,
					       false, loc, &err, &bytes), JSET_OK);
	assert_int_equal(bytes, 272);
	assert_int_equal(err.pos, 0);
	printbuf_exit(&err);
}

static void test_header_none_and_bad(void **state)
{
	struct jset *j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	struct printbuf err = PRINTBUF;
	size_t bytes;

	/* another filesystem's magic: silently not a jset */
	assert_int_equal(bch_jset_check_header(j, 4096, MAGIC_D, false, loc, &err, &bytes),
			 JSET_NONE);
	assert_int_equal(err.pos, 0);

	/* only 256 bytes left in the bucket: too big */
	assert_int_equal(bch_jset_check_header(j, 256, MAGIC_A, false, loc, &err, &bytes),
			 JSET_BAD);
	assert_non_null(strstr(printbuf_str(&err), "too big (272 bytes"));
	assert_non_null(strstr(printbuf_str(&err), "dev 0 bucket 3 sector 784"));
	printbuf_reset(&err);

	/* csum type 7 */
	SET_JSET_CSUM_TYPE(j, 7);
	assert_int_equal(bch_jset_check_header(j, 4096, MAGIC_A, false, loc, &err, &bytes),
			 JSET_BAD);
	assert_non_null(strstr(printbuf_str(&err), "unknown checksum type 7"));
	printbuf_reset(&err);

	/* encrypted but no key */
	SET_JSET_CSUM_TYPE(j, BCH_CSUM_CHACHA20_POLY1305_128);
	assert_int_equal(bch_jset_check_header(j, 4096, MAGIC_A, false, loc, &err, &bytes),
			 JSET_BAD);
	assert_non_null(strstr(printbuf_str(&err), "no key"));

	printbuf_exit(&err);
	free(j);
}

static void test_verify_crc32c(void **state)
{
	struct jset *j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	struct printbuf err = PRINTBUF;

	assert_int_equal(bch_jset_verify(j, 272, NULL, loc, &err), JSET_OK);
	assert_int_equal(err.pos, 0);
	assert_int_equal(le64_to_cpu(j->seq), 2);
	assert_int_equal(le64_to_cpu(j->last_seq), 1);

	/* any flipped byte of the checksummed region is caught */
	for (size_t i = 16; i < 272; i++) {
		memcpy(j, jset_seq2, sizeof(jset_seq2));
		((uint8_t *)j)[i] ^= 0x55;
		assert_int_equal(bch_jset_verify(j, 272, NULL, loc, &err), JSET_BAD);
	}
	assert_non_null(strstr(printbuf_str(&err), "checksum bad"));
	printbuf_exit(&err);
	free(j);
}

static void test_verify_version(void **state)
{
	struct jset *j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	struct printbuf err = PRINTBUF;

	/* an intact entry of another version stops the read */
	j->version = cpu_to_le32(3);
	rechecksum(j);
	assert_int_equal(bch_jset_verify(j, 272, NULL, loc, &err), -BCH_ERR_journal_invalid);
	assert_non_null(strstr(printbuf_str(&err), "unknown journal entry version 3"));

	/* last_seq > seq is repaired */
	memcpy(j, jset_seq2, sizeof(jset_seq2));
	j->last_seq = cpu_to_le64(9);
	rechecksum(j);
	printbuf_reset(&err);
	assert_int_equal(bch_jset_verify(j, 272, NULL, loc, &err), JSET_OK);
	assert_int_equal(le64_to_cpu(j->last_seq), 2);
	assert_non_null(strstr(printbuf_str(&err), "last_seq 9 > seq"));
	printbuf_exit(&err);
	free(j);
}

static void test_verify_encrypted(void **state)
{
	struct jset *j = copy_jset(jset_enc, sizeof(jset_enc), 512);
	struct printbuf err = PRINTBUF;
	struct bch_key key, bad;
	size_t bytes;
	unsigned keys;

	memcpy(&key, key_d, sizeof(key));
	memcpy(&bad, key_d, sizeof(bad));
	((uint8_t *)&bad)[0] ^= 1;

	assert_int_equal(bch_jset_check_header(j, 4096, MAGIC_D, true, loc, &err, &bytes),
			 JSET_OK);
	assert_int_equal(bytes, 168);

	assert_int_equal(bch_jset_verify(j, 168, &bad, loc, &err), JSET_BAD);
	assert_int_equal(bch_jset_verify(j, 168, &key, loc, &err), JSET_OK);
	assert_int_equal(le64_to_cpu(j->last_seq), 4);
	assert_int_equal(le16_to_cpu(j->read_clock), 1);
	assert_int_equal(le16_to_cpu(j->write_clock), 1);

	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 0);
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_btree_root, &keys), 2);
	printbuf_exit(&err);
	free(j);
}

static void test_validate_good(void **state)
{
	struct jset *j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	struct printbuf err = PRINTBUF;
	struct jset_entry *e;
	unsigned keys;

	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 0);
	assert_int_equal(err.pos, 0);
	assert_memory_equal(j, jset_seq2, sizeof(jset_seq2));
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_btree_keys, &keys), 1);
	assert_int_equal(keys, 1);
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_btree_root, &keys), 2);

	/* the inode key: 4096:0, type 128, 12 u64s */
	e = jset_entries_start(j);
	{
		struct bkey_ref r = journal_bkey_ref(jset_entry_keys_start(e));

		assert_int_equal(e->btree_id, BTREE_ID_INODES);
		assert_int_equal(r.k.u64s, 12);
		assert_int_equal(r.k.type, 128);
		assert_int_equal(r.k.p.inode, 4096);
		assert_int_equal(r.k.p.offset, 0);
		assert_int_equal(r.v_bytes, 56);
	}
	printbuf_exit(&err);
	free(j);
}

/* Record offsets in jset_seq2 (u64 index from the start of the entries). */
#define REC_KEYS	0	/* btree_keys inodes, u64s 12 */
#define REC_ROOT1	13	/* btree_root inodes, u64s 6 */
#define REC_ROOT2	20	/* btree_root alloc, u64s 6 */

static struct jset_entry *rec(struct jset *j, unsigned idx)
{
	return (struct jset_entry *)((uint64_t *)(j + 1) + idx);
}

static void test_validate_repairs(void **state)
{
	struct printbuf err = PRINTBUF;
	struct jset *j;
	unsigned keys;

	/* unknown record type: ignored */
	j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	rec(j, REC_ROOT2)->type = 9;
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 1);
	assert_non_null(strstr(printbuf_str(&err), "invalid journal entry type 9"));
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_btree_root, &keys), 1);
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_btree_keys, &keys), 1);
	free(j);

	/* record past the end of the jset: jset cut */
	j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	rec(j, REC_ROOT2)->u64s = cpu_to_le16(7);
	printbuf_reset(&err);
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 1);
	assert_non_null(strstr(printbuf_str(&err), "extends past end of jset"));
	assert_int_equal(le32_to_cpu(j->u64s), REC_ROOT2);
	free(j);

	/* key with u64s 0: record cut there, rest empty */
	j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	((struct bkey *)jset_entry_keys_start(rec(j, REC_KEYS)))->u64s = 0;
	printbuf_reset(&err);
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 1);
	assert_non_null(strstr(printbuf_str(&err), "k->u64s 0"));
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_btree_keys, &keys), 0);
	assert_int_equal(keys, 0);
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_btree_root, &keys), 2);
	free(j);

	/* key running past its record */
	j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	((struct bkey *)jset_entry_keys_start(rec(j, REC_KEYS)))->u64s = 13;
	printbuf_reset(&err);
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 1);
	assert_non_null(strstr(printbuf_str(&err), "extends past end of journal entry"));
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_btree_root, &keys), 2);
	free(j);

	/* packed key: dropped */
	j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	((struct bkey *)jset_entry_keys_start(rec(j, REC_KEYS)))->fmt = 0;
	printbuf_reset(&err);
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 1);
	assert_non_null(strstr(printbuf_str(&err), "bad format"));
	count_records(j, BCH_JSET_ENTRY_btree_keys, &keys);
	assert_int_equal(keys, 0);
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_btree_root, &keys), 2);
	free(j);

	/* btree root of the wrong size: root dropped, header kept with u64s 0 */
	j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	((struct bkey *)jset_entry_keys_start(rec(j, REC_ROOT1)))->u64s = 5;
	printbuf_reset(&err);
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 1);
	assert_non_null(strstr(printbuf_str(&err), "wrong number of keys"));
	assert_int_equal(rec(j, REC_ROOT1)->type, BCH_JSET_ENTRY_btree_root);
	assert_int_equal(le16_to_cpu(rec(j, REC_ROOT1)->u64s), 0);
	free(j);

	/* btree root of an unknown btree */
	j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	rec(j, REC_ROOT1)->btree_id = 6;
	printbuf_reset(&err);
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 1);
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_btree_root, &keys), 1);
	free(j);

	printbuf_exit(&err);
}

static void test_validate_blacklist(void **state)
{
	struct printbuf err = PRINTBUF;
	struct jset *j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	struct jset_entry_blacklist_v2 *bl = (void *)rec(j, REC_ROOT2);
	unsigned keys;

	/* rewrite the alloc root record as blacklist_v2 10..12 + 3 empty records */
	memset(bl, 0, 7 * 8);
	bl->entry.type = BCH_JSET_ENTRY_blacklist_v2;
	bl->entry.u64s = cpu_to_le16(2);
	bl->start = cpu_to_le64(10);
	bl->end = cpu_to_le64(12);
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 0);
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_blacklist_v2, &keys), 1);

	bl->start = cpu_to_le64(13);
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 1);
	assert_non_null(strstr(printbuf_str(&err), "start > end"));
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_blacklist_v2, &keys), 0);

	/* v1 with a bad size */
	printbuf_reset(&err);
	bl->entry.type = BCH_JSET_ENTRY_blacklist;
	bl->entry.u64s = cpu_to_le16(2);
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 1);
	assert_non_null(strstr(printbuf_str(&err), "bad size"));
	printbuf_exit(&err);
	free(j);
}

/* After validation every record and key must lie inside the jset. */
static void check_invariants(struct jset *j, size_t bytes)
{
	uint8_t *end = (uint8_t *)j + bytes;
	struct jset_entry *e;
	struct bkey *k;

	assert_true(jset_bytes(j) <= bytes);
	for_each_jset_entry(e, j) {
		assert_true((uint8_t *)jset_entry_next(e) <= (uint8_t *)jset_entries_end(j));
		assert_true((uint8_t *)jset_entry_next(e) <= end);
		if (e->type == BCH_JSET_ENTRY_btree_keys ||
		    (e->type == BCH_JSET_ENTRY_btree_root && e->u64s)) {
			assert_true(e->btree_id < BTREE_ID_NR);
			for_each_jset_entry_key(k, e) {
				assert_true(k->u64s >= BKEY_U64s);
				assert_true((uint8_t *)bkey_next((void *)k) <=
					    (uint8_t *)jset_entry_keys_end(e));
				(void)journal_bkey_ref(k);
			}
		}
	}
}

static void test_validate_mutations(void **state)
{
	struct printbuf err = PRINTBUF;
	uint32_t rnd = 12345;
	unsigned iter;

	for (iter = 0; iter < 20000; iter++) {
		struct jset *j = copy_jset(jset_seq2, sizeof(jset_seq2), sizeof(jset_seq2));
		unsigned flips = 1 + iter % 6, f;

		for (f = 0; f < flips; f++) {
			rnd = rnd * 1103515245 + 12345;
			/* header words 40..55 minus u64s (the caller checks it), then entries */
			size_t at = 44 + (rnd >> 8) % (sizeof(jset_seq2) - 44);

			rnd = rnd * 1103515245 + 12345;
			((uint8_t *)j)[at] = (uint8_t)(rnd >> 16);
		}
		bch_jset_validate_entries(j, loc, &err);
		check_invariants(j, sizeof(jset_seq2));
		printbuf_reset(&err);
		free(j);
	}
	printbuf_exit(&err);
}

static void test_validate_key_type(void **state)
{
	struct printbuf err = PRINTBUF;
	struct jset *j = copy_jset(jset_seq2, sizeof(jset_seq2), 512);
	unsigned keys;

	/* a type the inodes btree does not have: the key is dropped */
	((struct bkey *)jset_entry_keys_start(rec(j, REC_KEYS)))->type = 200;
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 1);
	assert_non_null(strstr(printbuf_str(&err), "key skipped (a repair deletes it)"));
	count_records(j, BCH_JSET_ENTRY_btree_keys, &keys);
	assert_int_equal(keys, 0);
	/* the roots behind it are untouched */
	assert_int_equal(count_records(j, BCH_JSET_ENTRY_btree_root, &keys), 2);
	assert_memory_equal(rec(j, REC_ROOT1), jset_seq2 + 56 + REC_ROOT1 * 8, 14 * 8);
	printbuf_exit(&err);
	free(j);
}

static void test_blacklisted(void **state)
{
	struct journal_state js;
	struct printbuf out = PRINTBUF;

	memset(&js, 0, sizeof(js));
	js.blacklist = calloc(2, sizeof(*js.blacklist));
	js.blacklist[0].start = 10;
	js.blacklist[0].end = 12;
	js.blacklist[1].start = 20;
	js.blacklist[1].end = 20;
	js.nr_blacklist = 2;
	assert_false(bch_journal_seq_blacklisted(&js, 9));
	assert_true(bch_journal_seq_blacklisted(&js, 10));
	assert_true(bch_journal_seq_blacklisted(&js, 12));
	assert_false(bch_journal_seq_blacklisted(&js, 13));
	assert_true(bch_journal_seq_blacklisted(&js, 20));

	js.seq = 15;
	bch_journal_read_done_to_text(&out, &js);
	assert_string_equal(printbuf_str(&out), "journal read done, 0 keys in 0 entries, seq 15");
	bch_journal_free(&js);
	assert_int_equal(js.nr_blacklist, 0);
	assert_null(js.blacklist);
	printbuf_exit(&out);
}

static void test_names(void **state)
{
	assert_string_equal(jset_entry_type_str(0), "btree_keys");
	assert_string_equal(jset_entry_type_str(4), "blacklist_v2");
	assert_null(jset_entry_type_str(5));
	assert_string_equal(jset_status_str(JSET_STALE), "stale");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_ok),
		cmocka_unit_test(test_header_none_and_bad),
		cmocka_unit_test(test_verify_crc32c),
		cmocka_unit_test(test_verify_version),
		cmocka_unit_test(test_verify_encrypted),
		cmocka_unit_test(test_validate_good),
		cmocka_unit_test(test_validate_repairs),
		cmocka_unit_test(test_validate_blacklist),
		cmocka_unit_test(test_validate_mutations),
		cmocka_unit_test(test_validate_key_type),
		cmocka_unit_test(test_blacklisted),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
