// SPDX-License-Identifier: GPL-2.0
/*
 * Journal writing (journal/journal_write.h):
 *   - the jset builder: btree_keys records merged while they are of the
 *     same btree and level (doc/engine.md §4.3), roots and blacklist records, the
 *     record bytes, refused keys;
 *   - sealing: every checksum type and ChaCha20/Poly1305 read back by the
 *     journal reader's own checks (jset.h), padding to the block, and the
 *     refusals (seq 0, last_seq > seq, bad type, no key);
 *   - the writer on a real image: where entries land (ring order, doc/format.md §6.1;
 *     an exact fit moves to the next bucket, doc/format.md §6.8), reclaim by last_seq
 *     (doc/format.md §6.8) until the ring is full, last_seq never going back, two
 *     devices with two metadata replicas, and the entries and keys found
 *     again by the journal read of the next open.
 *
 * Needs $BCACHEFS (the binary) for format; tests/run.sh sets it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/checksum.h"
#include "codec/crypto.h"
#include "dev/dev.h"
#include "dev/super.h"
#include "format/format.h"
#include "fs/fs.h"
#include "journal/journal_write.h"
#include "journal/jset.h"
#include "util/errcode.h"
#include "util/util.h"
#include "testutil.h"
#include "testfs.h"

static const struct jset_loc loc = { .dev = 0, .bucket = 1, .sector = 64 };

static int setup(void **state)
{
	return testfs_setup("test_journal_write");
}

static int teardown(void **state)
{
	return testfs_teardown();
}

/*
 * A key at @inode with @words u64s of value (filled with @fill): a cookie
 * (valid in every btree) for one word, else a type no btree has (the
 * builder does not look at types).
 */
static struct bkey_ref mkkey(uint64_t inode, unsigned words, uint64_t *v, uint64_t fill)
{
	for (unsigned i = 0; i < words; i++)
		v[i] = fill + i;
	return (struct bkey_ref) {
		.k = { .u64s = (uint8_t)(BKEY_U64S_UNPACKED + words),
		       .type = words == 1 ? KEY_TYPE_COOKIE : 8,
		       .p = POS_H(inode, 0), .needs_whiteout = true },
		.v = v, .v_bytes = words * 8,
	};
}

static void test_builder(void **state)
{
	struct jset_builder b;
	struct bkey_ref k[3];
	uint64_t v[3][4];
	const struct jset_entry *e;

	jset_builder_init(&b);
	k[0] = mkkey(4096, 2, v[0], 100);
	k[1] = mkkey(4097, 0, v[1], 0);
	k[2] = mkkey(4098, 4, v[2], 200);

	/* nothing for an empty list */
	assert_int_equal(jset_add_keys(&b, BTREE_ID_INODES, 0, k, 0), 0);
	assert_int_equal(b.u64s, 0);
	/* two calls of the same btree and level: one record */
	assert_int_equal(jset_add_keys(&b, BTREE_ID_INODES, 0, k, 2), 0);
	assert_int_equal(jset_add_keys(&b, BTREE_ID_INODES, 0, k + 2, 1), 0);
	assert_int_equal(b.u64s, 1 + 7 + 5 + 9);
	e = (const struct jset_entry *)b.buf;
	assert_int_equal(e->type, BCH_JSET_ENTRY_btree_keys);
	assert_int_equal(e->btree_id, BTREE_ID_INODES);
	assert_int_equal(e->level, 0);
	assert_int_equal(le16_to_cpu(e->u64s), 21);
	/* the keys as unpacked on-disk keys, needs_whiteout cleared, values after */
	{
		struct bkey_ref r = journal_bkey_ref((const struct bkey *)(b.buf + 1));

		assert_int_equal(r.k.p.inode, 4096);
		assert_int_equal(r.k.u64s, 7);
		assert_false(r.k.needs_whiteout);
		assert_int_equal(r.v_bytes, 16);
		assert_int_equal(le64_to_cpu(((const uint64_t *)r.v)[1]), 101);
		r = journal_bkey_ref((const struct bkey *)(b.buf + 1 + 7 + 5));
		assert_int_equal(r.k.p.inode, 4098);
		assert_int_equal(le64_to_cpu(((const uint64_t *)r.v)[3]), 203);
	}
	/* another level, another btree: new records; a root: its own record */
	assert_int_equal(jset_add_keys(&b, BTREE_ID_INODES, 1, k, 1), 0);
	assert_int_equal(jset_add_keys(&b, BTREE_ID_DIRENTS, 1, k, 1), 0);
	assert_int_equal(jset_add_root(&b, BTREE_ID_DIRENTS, 1, &k[1]), 0);
	assert_int_equal(jset_add_keys(&b, BTREE_ID_DIRENTS, 1, k + 1, 1), 0);
	assert_int_equal(b.u64s, 22 + 8 + 8 + 6 + 6);
	e = (const struct jset_entry *)(b.buf + 22 + 8 + 8);
	assert_int_equal(e->type, BCH_JSET_ENTRY_btree_root);
	assert_int_equal(e->btree_id, BTREE_ID_DIRENTS);
	assert_int_equal(e->level, 1);
	assert_int_equal(le16_to_cpu(e->u64s), 5);
	/* the keys after a root go into a new btree_keys record */
	e = (const struct jset_entry *)(b.buf + 22 + 8 + 8 + 6);
	assert_int_equal(e->type, BCH_JSET_ENTRY_btree_keys);

	/* refusals: nothing added */
	{
		size_t u = b.u64s;
		struct bkey_ref bad = k[0];

		assert_int_equal(jset_add_keys(&b, BTREE_ID_NR, 0, k, 1), -EINVAL);
		assert_int_equal(jset_add_keys(&b, 0, BTREE_MAX_DEPTH, k, 1), -EINVAL);
		bad.k.u64s = 6;		/* does not match the value */
		assert_int_equal(jset_add_keys(&b, BTREE_ID_INODES, 0, &bad, 1), -EINVAL);
		bad = k[0];
		bad.v_bytes = 12;	/* not whole words */
		bad.k.u64s = 6;
		assert_int_equal(jset_add_keys(&b, BTREE_ID_INODES, 0, &bad, 1), -EINVAL);
		bad = k[0];
		bad.v = NULL;
		/* a good key first: the list is refused whole */
		{
			struct bkey_ref two[2] = { k[0], bad };

			assert_int_equal(jset_add_keys(&b, BTREE_ID_INODES, 0, two, 2), -EINVAL);
		}
		assert_int_equal(jset_add_root(&b, BTREE_ID_NR, 0, &k[0]), -EINVAL);
		assert_int_equal(jset_add_blacklist_v2(&b, 10, 9), -EINVAL);
		assert_int_equal(b.u64s, u);
	}
	jset_builder_exit(&b);
	assert_null(b.buf);

	/* blacklist_v2: start and end, inclusive */
	jset_builder_init(&b);
	assert_int_equal(jset_add_blacklist_v2(&b, 7, 7), 0);
	assert_int_equal(b.u64s, 3);
	e = (const struct jset_entry *)b.buf;
	assert_int_equal(e->type, BCH_JSET_ENTRY_blacklist_v2);
	assert_int_equal(le16_to_cpu(e->u64s), 2);
	assert_int_equal(le64_to_cpu(b.buf[1]), 7);
	assert_int_equal(le64_to_cpu(b.buf[2]), 7);
	jset_builder_exit(&b);
}

/* A record merged up to 65535 u64s, then a new one. */
static void test_builder_record_limit(void **state)
{
	struct jset_builder b;
	static uint64_t v[250];
	struct bkey_ref k = mkkey(1, 250, v, 0);	/* 255 u64s */
	const struct jset_entry *e;

	jset_builder_init(&b);
	for (unsigned i = 0; i < 258; i++)
		assert_int_equal(jset_add_keys(&b, BTREE_ID_XATTRS, 0, &k, 1), 0);
	/* 257 keys = 65535 u64s fit one record; the 258th starts another */
	e = (const struct jset_entry *)b.buf;
	assert_int_equal(le16_to_cpu(e->u64s), 257 * 255);
	e = (const struct jset_entry *)(b.buf + 1 + 257 * 255);
	assert_int_equal(e->type, BCH_JSET_ENTRY_btree_keys);
	assert_int_equal(le16_to_cpu(e->u64s), 255);
	assert_int_equal(b.u64s, 2 + 258 * 255);
	jset_builder_exit(&b);
}

static void seal_and_read_back(unsigned csum_type, const struct bch_key *key)
{
	const uint64_t magic = 0x1234567890abcdefULL;
	struct jset_header_h h = {
		.magic = magic, .seq = 42, .last_seq = 40, .read_clock = 3, .write_clock = 5,
		.csum_type = csum_type, .key = key,
	};
	struct printbuf err = PRINTBUF;
	struct jset_builder b;
	struct bkey_ref k;
	uint64_t v[2];
	size_t bytes, hbytes;
	struct jset *j;
	void *out;

	jset_builder_init(&b);
	k = mkkey(4096, 1, v, 77);
	assert_int_equal(jset_add_keys(&b, BTREE_ID_INODES, 0, &k, 1), 0);
	assert_int_equal(jset_seal(&b, &h, 4096, &out, &bytes, &err), 0);
	assert_int_equal(bytes, 4096);
	j = out;
	/* padded with zeros */
	for (size_t i = sizeof(*j) + 7 * 8; i < bytes; i++)
		assert_int_equal(((uint8_t *)out)[i], 0);
	assert_int_equal(le64_to_cpu(j->seq), 42);
	assert_int_equal(le32_to_cpu(j->u64s), 7);
	assert_int_equal(JSET_CSUM_TYPE(j), csum_type);
	assert_int_equal(le32_to_cpu(j->version), BCH_JSET_VERSION);

	/* the reader's own checks accept it, and decrypt it back */
	assert_int_equal(bch_jset_check_header(j, 8192, magic, key != NULL, loc, &err, &hbytes),
			 JSET_OK);
	assert_int_equal(hbytes, sizeof(*j) + 56);
	assert_int_equal(bch_jset_verify(j, hbytes, key, loc, &err), JSET_OK);
	assert_int_equal(bch_jset_validate_entries(j, loc, &err), 0);
	assert_int_equal(le64_to_cpu(j->last_seq), 40);
	assert_int_equal(le16_to_cpu(j->read_clock), 3);
	assert_int_equal(le16_to_cpu(j->write_clock), 5);
	assert_memory_equal(j + 1, b.buf, 56);
	free(out);

	/* one byte changed after sealing: the checksum or MAC says so */
	if (csum_type != BCH_CSUM_NONE) {
		assert_int_equal(jset_seal(&b, &h, 4096, &out, &bytes, &err), 0);
		((uint8_t *)out)[sizeof(*j) + 30] ^= 1;
		assert_int_equal(bch_jset_verify(out, hbytes, key, loc, &err), JSET_BAD);
		free(out);
	}
	printbuf_exit(&err);
	jset_builder_exit(&b);
}

static void test_seal(void **state)
{
	struct bch_key key;
	struct jset_builder b;
	struct printbuf err = PRINTBUF;
	struct jset_header_h h = { .magic = 1, .seq = 1, .csum_type = BCH_CSUM_CRC32C_NONZERO };
	size_t bytes;
	void *out;

	memset(&key, 0x5a, sizeof(key));
	seal_and_read_back(BCH_CSUM_NONE, NULL);
	seal_and_read_back(BCH_CSUM_CRC32C_NONZERO, NULL);
	seal_and_read_back(BCH_CSUM_CRC64_NONZERO, NULL);
	seal_and_read_back(BCH_CSUM_CHACHA20_POLY1305_128, &key);

	/* an empty jset: the header, padded to the block */
	jset_builder_init(&b);
	assert_int_equal(jset_seal(&b, &h, 512, &out, &bytes, &err), 0);
	assert_int_equal(bytes, 512);
	assert_int_equal(le32_to_cpu(((struct jset *)out)->u64s), 0);
	free(out);

	/* refusals: nothing returned, a message */
	h.seq = 0;
	assert_int_equal(jset_seal(&b, &h, 512, &out, &bytes, &err), -EINVAL);
	assert_null(out);
	assert_int_equal(bytes, 0);
	assert_non_null(strstr(printbuf_str(&err), "bad journal entry header"));
	h.seq = 5;
	h.last_seq = 6;
	assert_int_equal(jset_seal(&b, &h, 512, &out, &bytes, &err), -EINVAL);
	h.last_seq = 5;		/* equal is fine */
	assert_int_equal(jset_seal(&b, &h, 512, &out, &bytes, &err), 0);
	free(out);
	assert_int_equal(jset_seal(&b, &h, 0, &out, &bytes, &err), -EINVAL);
	h.csum_type = 9;
	assert_int_equal(jset_seal(&b, &h, 512, &out, &bytes, &err), -EINVAL);
	h.csum_type = BCH_CSUM_CHACHA20_POLY1305_128;
	printbuf_reset(&err);
	assert_int_equal(jset_seal(&b, &h, 512, &out, &bytes, &err), -ENOKEY);
	assert_null(out);
	assert_non_null(strstr(printbuf_str(&err), "without the key"));
	jset_builder_exit(&b);
	printbuf_exit(&err);
}

/* ---- the writer on an image ---- */

/* 32 MiB, 32 KiB buckets (64 sectors), 4 KiB blocks; 20 journal buckets */
#define BUCKET_SECTORS	64
#define JOURNAL_NR	20

static struct bch_fs *open_imgs(unsigned nr, bool ro)
{
	struct bch_fs_opts o = { .read_only = ro };

	return testfs_open(nr, &o);
}

static void writer_init(struct bch_journal_writer *w, struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_journal_writer_init(w, c, &err);

	if (ret)
		fprintf(stderr, "writer_init: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	printbuf_exit(&err);
}

/* A builder of cookie keys that seals to exactly @sectors sectors (4 KiB blocks). */
static void fill(struct jset_builder *b, unsigned sectors, uint64_t inode)
{
	uint64_t v;
	struct bkey_ref k = mkkey(inode, 1, &v, inode);
	size_t words = (size_t)sectors * 64 - 7;	/* the jset header */

	jset_builder_init(b);
	while (1 + b->u64s + 6 <= words) {
		assert_int_equal(jset_add_keys(b, BTREE_ID_XATTRS, 0, &k, 1), 0);
		k.k.p.offset++;
	}
}

static void test_writer_ring(void **state)
{
	struct bch_journal_writer w;
	struct printbuf err = PRINTBUF;
	struct jset_builder b;
	struct bch_fs *c;
	uint64_t seq0, first, buckets[JOURNAL_NR];
	struct journal_wdev *d;
	unsigned n, i;

	assert_int_equal(test_run("rm -f %s && truncate -s 32M %s && %s format -q --force "
				  "--bucket_size=32k --btree_node_size=16k %s",
				  img, img, test_bin(), img), 0);
	c = open_imgs(1, false);
	writer_init(&w, c);
	d = &w.devs[0];
	seq0 = w.seq;
	assert_true(seq0 >= 1);			/* format wrote the first entries */
	assert_int_equal(w.block_bytes, 4096);
	assert_int_equal(w.csum_type, BCH_CSUM_CRC32C_NONZERO);
	assert_true(d->active);
	assert_int_equal(d->nr, JOURNAL_NR);
	assert_int_equal(d->bucket_size, BUCKET_SECTORS);
	for (i = 0; i < JOURNAL_NR; i++)
		buckets[i] = d->buckets[i];

	/* 24-sector entries (6 blocks): two per 64-sector bucket, the third moves on */
	fill(&b, 24, 4096);
	assert_int_equal(bch_journal_write(&w, &b, 0, true, &err), 0);
	first = w.seq;
	assert_int_equal(first, seq0 + 1);
	assert_int_equal(w.last_seq_ondisk, first);
	assert_int_equal(w.last_devs, 1);
	{
		unsigned idx = d->cur_idx;
		uint64_t start = buckets[idx] * BUCKET_SECTORS;

		assert_int_equal(d->cursor, start + 24);
		assert_int_equal(d->sectors_free, BUCKET_SECTORS - 24);
		assert_int_equal(d->bucket_seq[idx], first);
		/* all older buckets reclaimed: the whole ring but the open one */
		assert_int_equal(bch_journal_writer_buckets_free(&w), JOURNAL_NR - 1);

		assert_int_equal(bch_journal_write(&w, &b, first, false, &err), 0);
		assert_int_equal(d->cur_idx, idx);
		assert_int_equal(d->cursor, start + 48);
		assert_int_equal(bch_journal_write(&w, &b, first, false, &err), 0);
		assert_int_equal(d->cur_idx, (idx + 1) % JOURNAL_NR);
		assert_int_equal(d->cursor, buckets[(idx + 1) % JOURNAL_NR] * BUCKET_SECTORS + 24);
		assert_int_equal(bch_journal_writer_buckets_free(&w), JOURNAL_NR - 2);
	}

	/*
	 * last_seq pinned at @first + 1, the newest entry of the first
	 * bucket: that bucket is still needed; the ring fills, then the
	 * writer refuses
	 */
	for (n = 0; n < 100; n++) {
		printbuf_reset(&err);
		if (bch_journal_write(&w, &b, first + 1, false, &err))
			break;
	}
	/* 20 buckets, two entries each, from the first bucket on */
	assert_int_equal(w.seq - first + 1, 2 * JOURNAL_NR);
	assert_int_equal(bch_journal_writer_buckets_free(&w), 0);
	assert_non_null(strstr(printbuf_str(&err), "sufficient devices (0 of 1 replicas)"));
	/* last_seq may not go back */
	printbuf_reset(&err);
	assert_int_equal(bch_journal_write(&w, &b, first - 1, false, &err), -EINVAL);
	assert_non_null(strstr(printbuf_str(&err), "would go back"));

	/* everything up to now in the btree: the ring is free again */
	n = (unsigned)w.seq;
	assert_int_equal(bch_journal_write(&w, &b, w.seq, true, &err), -EROFS);
	assert_int_equal(w.seq, n);		/* nothing written */
	w.last_seq_ondisk = w.seq;		/* as if a checkpoint had written the btree */
	assert_int_equal(bch_journal_writer_buckets_free(&w), JOURNAL_NR - 1);
	assert_int_equal(bch_journal_write(&w, &b, 0, true, &err), 0);
	jset_builder_exit(&b);

	/* 32-sector entries: an exact fit of the rest of a bucket moves on (doc/format.md §6.8) */
	fill(&b, 32, 4096);
	assert_int_equal(bch_journal_write(&w, &b, 0, true, &err), 0);	/* 40 free: fits */
	assert_int_equal(d->sectors_free, 8);
	assert_int_equal(bch_journal_write(&w, &b, 0, true, &err), 0);	/* a new bucket */
	i = d->cur_idx;
	assert_int_equal(d->sectors_free, 32);
	assert_int_equal(bch_journal_write(&w, &b, 0, true, &err), 0);
	assert_int_equal(d->cur_idx, (i + 1) % JOURNAL_NR);
	assert_int_equal(d->cursor, buckets[d->cur_idx] * BUCKET_SECTORS + 32);
	jset_builder_exit(&b);
	/*
	 * entry s1 with everything before it in the btree, then five that
	 * still need s1 (keys of inodes 5000..5005, one inode per entry)
	 */
	{
		uint64_t s1 = 0, cidx;
		unsigned nfree;

		for (unsigned e = 0; e < 6; e++) {
			fill(&b, 24, 5000 + e);
			assert_int_equal(bch_journal_write(&w, &b, s1, e == 5, &err), 0);
			if (!e)
				s1 = w.seq;
			jset_builder_exit(&b);
		}
		/*
		 * in use: the buckets from the open one back to the one
		 * holding s1 (six 24-sector entries, two a bucket: 3 or 4)
		 */
		{
			unsigned used = 0, idx = d->cur_idx;

			while (d->bucket_seq[idx] >= s1) {
				used++;
				idx = (idx + JOURNAL_NR - 1) % JOURNAL_NR;
			}
			assert_true(used == 3 || used == 4);
			nfree = bch_journal_writer_buckets_free(&w);
			assert_int_equal(nfree, JOURNAL_NR - used);
		}
		cidx = d->cur_idx;

		/* set_dev refusals */
		assert_int_equal(bch_journal_writer_set_dev(&w, 64, buckets, 2, &err), -ENXIO);
		assert_int_equal(bch_journal_writer_set_dev(&w, 5, buckets, 2, &err), -ENXIO);
		n = (unsigned)w.seq;
		bch_journal_writer_exit(&w);
		bch_fs_close(c);

		/* the next open reads entries s1..n and their keys, nothing older */
		c = open_imgs(1, false);
		assert_int_equal(c->journal.seq, n);
		assert_int_equal(c->journal.last_seq, s1);
		{
			size_t found[6] = { 0 }, old = 0;

			for (size_t k = 0; k < c->journal.nr_keys; k++) {
				const struct journal_key *jk = &c->journal.keys[k];

				if (jk->btree_id != BTREE_ID_XATTRS)
					continue;
				if (jk->k.k.p.inode >= 5000 && jk->k.k.p.inode < 5006)
					found[jk->k.k.p.inode - 5000]++;
				else
					old++;
			}
			for (unsigned e = 0; e < 6; e++)
				assert_int_equal(found[e], 254);	/* (1536 - 8) / 6 */
			assert_int_equal(old, 0);
		}
		/* a writer made after it goes on from the same ring position and reclaim */
		writer_init(&w, c);
		assert_int_equal(w.seq, n);
		assert_int_equal(w.last_seq_ondisk, s1);
		assert_int_equal(w.devs[0].cur_idx, cidx);
		assert_int_equal(bch_journal_writer_buckets_free(&w), nfree);
		bch_journal_writer_exit(&w);
		bch_fs_close(c);
	}
	printbuf_exit(&err);
}

static void test_writer_two_devices(void **state)
{
	struct bch_journal_writer w;
	struct printbuf err = PRINTBUF;
	struct jset_builder b;
	struct bch_fs *c;

	assert_int_equal(test_run("rm -f %s %s && truncate -s 32M %s %s && %s format -q --force "
				  "--metadata_replicas=2 --bucket_size=32k --btree_node_size=16k "
				  "%s %s", img, img2, img, img2, test_bin(), img, img2), 0);
	c = open_imgs(2, false);
	writer_init(&w, c);
	assert_int_equal(w.meta_replicas, 2);
	fill(&b, 8, 4096);
	assert_int_equal(bch_journal_write(&w, &b, 0, true, &err), 0);
	assert_int_equal(w.last_devs, 3);
	/* the same bytes on both devices */
	{
		uint8_t x[4096], y[4096];

		assert_int_equal(dev_pread(c->devs[0]->io, x, sizeof(x),
					   (w.devs[0].cursor - 8) << 9), 0);
		assert_int_equal(dev_pread(c->devs[1]->io, y, sizeof(y),
					   (w.devs[1].cursor - 8) << 9), 0);
		assert_memory_equal(x, y, sizeof(x));
		assert_int_equal(le64_to_cpu(((struct jset *)x)->seq), w.seq);
	}
	/* one device stops taking journal writes: one copy is enough (1 required) */
	w.devs[1].active = false;
	assert_int_equal(bch_journal_write(&w, &b, 0, true, &err), 0);
	assert_int_equal(w.last_devs, 1);
	/* two required: refused */
	w.meta_replicas_req = 2;
	printbuf_reset(&err);
	assert_int_equal(bch_journal_write(&w, &b, 0, true, &err), -EROFS);
	assert_non_null(strstr(printbuf_str(&err), "(1 of 2 replicas)"));
	/* none at all: 0 free buckets reported */
	w.devs[0].active = false;
	assert_int_equal(bch_journal_writer_buckets_free(&w), 0);
	jset_builder_exit(&b);
	bch_journal_writer_exit(&w);
	bch_fs_close(c);
	printbuf_exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builder),
		cmocka_unit_test(test_builder_record_limit),
		cmocka_unit_test(test_seal),
		cmocka_unit_test(test_writer_ring),
		cmocka_unit_test(test_writer_two_devices),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
