// SPDX-License-Identifier: GPL-2.0
/*
 * Writing file data (fs/io_write.h) on filesystems made by our format:
 *   - options: the filesystem's, each overridden by the inode's
 *     (option + 1, doc/format.md §5.5.2), required replicas never above wanted;
 *   - encoding one extent: cut at encoded_extent_max when checksummed,
 *     at the space given, never when stored plain; the checksum over the
 *     payload; compression (and the fallback to none for incompressible
 *     data, doc/format.md §8.3); encryption without the key refused;
 *   - the extent value: the narrowest crc entry, then one pointer each;
 *   - whole writes read back by the read path (io_read.h) byte for byte:
 *     checksummed, compressed, two replicas on two devices; a sequential
 *     writer's extents contiguous on disk; full filesystem (a short
 *     write, then no space); not writable; replicas that cannot be had.
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

#include "bkey/extents.h"
#include "bkey/inode.h"
#include "btree/btree_update.h"
#include "btree/bulk.h"
#include "codec/checksum.h"
#include "codec/compress.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/io_read.h"
#include "fs/io_write.h"
#include "util/errcode.h"
#include "util/util.h"
#include "testutil.h"
#include "testfs.h"


static int setup(void **state)
{
	return testfs_setup("test_io_write");
}

static int teardown(void **state)
{
	return testfs_teardown();
}

static struct bch_fs *open_imgs(unsigned nr, bool ro)
{
	struct bch_fs_opts o = { .read_only = ro };

	return testfs_open(nr, &o);
}

static struct bch_fs *format_open(const char *opts, unsigned nr, bool ro)
{
	if (nr == 1)
		assert_int_equal(test_run("rm -f %s && truncate -s 32M %s && %s format -q --force "
					  "--bucket_size=32k --btree_node_size=16k %s %s",
					  img, img, test_bin(), opts, img), 0);
	else
		assert_int_equal(test_run("rm -f %s %s && truncate -s 32M %s %s && %s format -q "
					  "--force --bucket_size=32k --btree_node_size=16k %s %s %s",
					  img, img2, img, img2, test_bin(), opts, img, img2), 0);
	return open_imgs(nr, ro);
}

static void rw_start(struct bch_fs *c)
{
	testfs_rw_start(c);
}

static void stop_close(struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;

	assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	printbuf_exit(&err);
	bch_fs_close(c);
}

static void pattern(uint8_t *p, size_t bytes, uint64_t seed)
{
	for (size_t i = 0; i < bytes; i += 8) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		memcpy(p + i, &seed, 8);
	}
}

static void test_opts(void **state)
{
	struct bch_fs *c = format_open("--data_checksum_type=crc64 --compression_type=lz4", 1, true);
	struct bch_inode_unpacked u = { 0 };
	struct bch_io_opts o;

	bch_io_opts_get(c, NULL, &o);
	assert_int_equal(o.csum_type, BCH_CHECKSUM_CRC64);
	assert_int_equal(o.compression_type, BCH_COMPRESSION_LZ4);
	assert_int_equal(o.nr_replicas, 1);
	assert_int_equal(o.nr_replicas_req, 1);
	assert_int_equal(o.foreground_target, 0);
	assert_int_equal(o.extent_max, 128);	/* 64 KiB, the format's default */
	assert_int_equal(o.block_sectors, 8);
	assert_false(o.encrypted);

	/* an inode with zero option fields: the filesystem's */
	bch_io_opts_get(c, &u, &o);
	assert_int_equal(o.csum_type, BCH_CHECKSUM_CRC64);
	assert_int_equal(o.compression_type, BCH_COMPRESSION_LZ4);

	/* the inode's options are option + 1 */
	u.bi_data_checksum = BCH_CSUM_OPT_NONE + 1;
	u.bi_compression = BCH_COMPRESSION_OPT_zstd + 1;
	u.bi_data_replicas = 3 + 1;
	u.bi_foreground_target = 7 + 1;
	bch_io_opts_get(c, &u, &o);
	assert_int_equal(o.csum_type, BCH_CHECKSUM_NONE);
	assert_int_equal(o.compression_type, BCH_COMPRESSION_ZSTD);
	assert_int_equal(o.nr_replicas, 3);
	assert_int_equal(o.nr_replicas_req, 1);
	assert_int_equal(o.foreground_target, 7);
	u.bi_data_checksum = BCH_CSUM_OPT_CRC32C + 1;
	u.bi_compression = BCH_COMPRESSION_OPT_none + 1;
	bch_io_opts_get(c, &u, &o);
	assert_int_equal(o.csum_type, BCH_CHECKSUM_CRC32C);
	assert_int_equal(o.compression_type, BCH_COMPRESSION_NONE);
	bch_fs_close(c);

	/* required replicas above wanted: clamped to wanted */
	c = format_open("--data_replicas=2 --data_replicas_required=2", 2, true);
	u = (struct bch_inode_unpacked) { .bi_data_replicas = 1 + 1 };
	bch_io_opts_get(c, NULL, &o);
	assert_int_equal(o.nr_replicas, 2);
	assert_int_equal(o.nr_replicas_req, 2);
	bch_io_opts_get(c, &u, &o);
	assert_int_equal(o.nr_replicas, 1);
	assert_int_equal(o.nr_replicas_req, 1);
	bch_fs_close(c);
}

static void test_encode(void **state)
{
	struct bch_fs *c = format_open("", 1, true);
	struct printbuf err = PRINTBUF;
	struct bch_io_opts o;
	struct bch_encoded e;
	struct bch_csum_val want;
	size_t bytes = 512 * 512;
	uint8_t *data = xmalloc(bytes), *copy = xmalloc(bytes), *cbuf = xmalloc(bytes + 4096);
	uint8_t *out = xmalloc(bytes);

	pattern(data, bytes, 1);
	memcpy(copy, data, bytes);
	bch_io_opts_get(c, NULL, &o);
	assert_int_equal(o.csum_type, BCH_CHECKSUM_CRC32C);

	/* checksummed: cut at extent_max (128), the crc over the payload */
	assert_int_equal(bch_extent_encode(c, &o, data, 512, 1000, cbuf, 0, &e, &err), 0);
	assert_int_equal(e.in, 128);
	assert_int_equal(e.out, 128);
	assert_ptr_equal(e.payload, data);
	assert_int_equal(e.crc.entry_type, 0);
	assert_int_equal(e.crc.csum_type, BCH_CHECKSUM_CRC32C);
	assert_int_equal(e.crc.compression_type, 0);
	assert_int_equal(e.crc.compressed_size, 128);
	assert_int_equal(e.crc.uncompressed_size, 128);
	assert_int_equal(e.version_lo, 0);
	assert_int_equal(bch_checksum(BCH_CHECKSUM_CRC32C, bch_nonce_make(0, 0, 0, 0), NULL,
				      copy, 128 * 512, &want), 0);
	assert_int_equal(e.crc.csum_lo, want.lo);
	assert_memory_equal(data, copy, bytes);		/* not encrypted: untouched */
	/* cut at the space given */
	assert_int_equal(bch_extent_encode(c, &o, data, 512, 24, cbuf, 0, &e, &err), 0);
	assert_int_equal(e.in, 24);
	assert_int_equal(e.crc.uncompressed_size, 24);

	/* plain: no crc entry, not cut at extent_max */
	o.csum_type = BCH_CHECKSUM_NONE;
	assert_int_equal(bch_extent_encode(c, &o, data, 512, 1000, cbuf, 0, &e, &err), 0);
	assert_int_equal(e.in, 512);
	assert_int_equal(e.out, 512);
	assert_int_equal(e.crc.entry_type, -1);
	assert_int_equal(bch_extent_encode(c, &o, data, 512, 40, cbuf, 0, &e, &err), 0);
	assert_int_equal(e.in, 40);

	/* compressible data: lz4 into cbuf, the crc covers the compressed bytes */
	o.csum_type = BCH_CHECKSUM_CRC32C;
	o.compression_type = BCH_COMPRESSION_LZ4;
	memset(data, 'a', bytes);
	assert_int_equal(bch_extent_encode(c, &o, data, 512, 1000, cbuf, 0, &e, &err), 0);
	assert_ptr_equal(e.payload, cbuf);
	assert_int_equal(e.crc.compression_type, BCH_COMPRESSION_LZ4);
	assert_int_equal(e.in, 128);
	assert_true(e.out >= 8 && e.out < 128);
	assert_int_equal(e.out % 8, 0);			/* whole blocks */
	assert_int_equal(e.crc.compressed_size, e.out);
	assert_int_equal(e.crc.uncompressed_size, e.in);
	assert_int_equal(bch_checksum(BCH_CHECKSUM_CRC32C, bch_nonce_make(0, 0, 0, 0), NULL,
				      cbuf, e.out * 512, &want), 0);
	assert_int_equal(e.crc.csum_lo, want.lo);
	assert_int_equal(bch_decompress(BCH_COMPRESSION_LZ4, cbuf, e.out * 512, out,
					e.in * 512), 0);
	assert_memory_equal(out, data, e.in * 512);

	/* incompressible: stored as is, no compression in the crc */
	pattern(data, bytes, 2);
	assert_int_equal(bch_extent_encode(c, &o, data, 512, 1000, cbuf, 0, &e, &err), 0);
	assert_ptr_equal(e.payload, data);
	assert_int_equal(e.crc.compression_type, 0);
	assert_int_equal(e.in, 128);
	assert_int_equal(e.out, 128);

	/* encrypted without the key: refused */
	o.encrypted = true;
	o.csum_type = BCH_CHECKSUM_CHACHA20_POLY1305_80;
	o.compression_type = 0;
	assert_int_equal(bch_extent_encode(c, &o, data, 8, 8, cbuf, 1, &e, &err), -BCH_ERR_no_key);
	assert_non_null(strstr(printbuf_str(&err), "key is not loaded"));

	free(data);
	free(copy);
	free(cbuf);
	free(out);
	printbuf_exit(&err);
	bch_fs_close(c);
}

static void test_extent_value(void **state)
{
	struct bch_encoded e = { .crc = { .entry_type = -1 } };
	struct bch_extent_ptr_unpacked ptrs[2] = {
		{ .offset = 12345, .dev = 0, .gen = 7 },
		{ .offset = 999, .dev = 1, .gen = 255 },
	};
	uint64_t v[BKEY_EXTENT_VAL_U64s_MAX];
	struct bkey_ref k = { .k = { .type = BCH_EXTENT, .size = 8 }, .v = v };
	struct extent_ptr_iter it;
	struct extent_ptr_decoded d;

	/* no crc: one word per pointer */
	k.v_bytes = bch_extent_value(&e, ptrs, 2, v);
	assert_int_equal(k.v_bytes, 16);
	extent_ptr_iter_init(&it, &k);
	assert_int_equal(extent_ptr_iter_next(&it, &d), 1);
	assert_int_equal(d.ptr.offset, 12345);
	assert_int_equal(d.ptr.gen, 7);
	assert_int_equal(d.ptr.dev, 0);
	assert_false(d.ptr.cached);
	assert_int_equal(extent_ptr_iter_next(&it, &d), 1);
	assert_int_equal(d.ptr.offset, 999);
	assert_int_equal(d.ptr.dev, 1);
	assert_int_equal(d.ptr.gen, 255);
	assert_int_equal(extent_ptr_iter_next(&it, &d), 0);
	assert_null(extent_invalid(&k, NULL));

	/* a crc32 fits crc32: one word, then the pointers */
	e.crc = (struct bch_extent_crc_unpacked) {
		.entry_type = 0, .csum_type = BCH_CHECKSUM_CRC32C, .compressed_size = 8,
		.uncompressed_size = 8, .csum_lo = 0xdeadbeef,
	};
	k.v_bytes = bch_extent_value(&e, ptrs, 2, v);
	assert_int_equal(k.v_bytes, 24);
	extent_ptr_iter_init(&it, &k);
	assert_int_equal(extent_ptr_iter_next(&it, &d), 1);
	assert_int_equal(d.crc.csum_lo, 0xdeadbeef);
	assert_int_equal(d.crc.uncompressed_size, 8);
	assert_int_equal(d.ptr.offset, 12345);
	assert_int_equal(extent_ptr_iter_next(&it, &d), 1);
	assert_int_equal(d.crc.csum_lo, 0xdeadbeef);	/* the crc applies to both */
	assert_null(extent_invalid(&k, NULL));

	/* a crc64 needs the two-word entry; an 80-bit MAC the three-word one */
	e.crc.csum_type = BCH_CHECKSUM_CRC64;
	e.crc.csum_lo = 0x0123456789abcdefULL;
	k.v_bytes = bch_extent_value(&e, ptrs, 1, v);
	assert_int_equal(k.v_bytes, 24);
	extent_ptr_iter_init(&it, &k);
	assert_int_equal(extent_ptr_iter_next(&it, &d), 1);
	assert_int_equal(d.crc.csum_lo, 0x0123456789abcdefULL);
	e.crc.csum_type = BCH_CHECKSUM_CHACHA20_POLY1305_80;
	e.crc.csum_hi = 0xffff;
	k.v_bytes = bch_extent_value(&e, ptrs, 1, v);
	assert_int_equal(k.v_bytes, 24);
	e.crc.csum_type = BCH_CHECKSUM_CHACHA20_POLY1305_128;
	e.crc.csum_hi = 0x1122334455667788ULL;
	k.v_bytes = bch_extent_value(&e, ptrs, 1, v);
	assert_int_equal(k.v_bytes, 32);
	extent_ptr_iter_init(&it, &k);
	assert_int_equal(extent_ptr_iter_next(&it, &d), 1);
	assert_int_equal(d.crc.csum_hi, 0x1122334455667788ULL);
}

/* Commit the keys of a write (the allocator counts their sectors at commit). */
static void commit(struct bch_fs *c, const struct bulk_keys *keys)
{
	struct printbuf err = PRINTBUF;
	struct btree_trans t;

	bch_trans_init(&t, c);
	for (size_t i = 0; i < keys->nr; i++)
		bch_trans_update(&t, BTREE_ID_EXTENTS, &keys->k[i].k, keys->k[i].v,
				 keys->k[i].v_bytes);
	assert_int_equal(bch_trans_commit(&t, &err), 0);
	bch_trans_exit(&t);
	printbuf_exit(&err);
}

/* Read every key of @keys back and compare with @data (file sectors from @start). */
static void read_back(struct bch_fs *c, const struct bulk_keys *keys, const uint8_t *data,
		      uint64_t start, uint64_t sectors)
{
	struct printbuf err = PRINTBUF;
	uint64_t next = start;
	uint8_t *buf = xmalloc(8192 * 512);

	for (size_t i = 0; i < keys->nr; i++) {
		const struct bkey_ref *k = &keys->k[i];
		int ret;

		assert_int_equal(bkey_start_pos(&k->k).offset, next);	/* in order, no gap */
		assert_null(extent_invalid(k, NULL));
		ret = bch_read_extent(c, k, 0, k->k.size, buf, NULL, &err);
		if (ret)
			fprintf(stderr, "read: %s\n", printbuf_str(&err));
		assert_int_equal(ret, 0);
		assert_memory_equal(buf, data + (next - start) * 512, (size_t)k->k.size * 512);
		next = k->k.p.offset;
	}
	assert_int_equal(next, start + sectors);
	free(buf);
	printbuf_exit(&err);
}

static void test_write_read_back(void **state)
{
	struct bch_fs *c;
	struct printbuf err = PRINTBUF;
	struct bulk_keys keys = { 0 };
	struct bch_io_opts o;
	size_t bytes = 300 * 512;
	uint8_t *data = xmalloc(bytes), *copy = xmalloc(bytes);
	struct extent_ptr_iter it;
	struct extent_ptr_decoded d, d0;

	/* 128 KiB buckets (256 sectors): room for two extents of extent_max */
	assert_int_equal(test_run("rm -f %s && truncate -s 128M %s && %s format -q --force "
				  "--bucket_size=128k %s", img, img, test_bin(), img), 0);
	c = open_imgs(1, false);

	/* not writable yet */
	bch_io_opts_get(c, NULL, &o);
	assert_int_equal(bch_write_extents(c, &o, 5000, 0, data, 8, &keys, &err), -EROFS);
	rw_start(c);

	pattern(data, bytes, 3);
	memcpy(copy, data, bytes);
	assert_int_equal(bch_write_extents(c, &o, 5000, 16, data, 300, &keys, &err), 300);
	/* 128 + 128 + 44: extent_max pieces, one pointer each */
	assert_int_equal(keys.nr, 3);
	assert_int_equal(keys.k[0].k.size, 128);
	assert_int_equal(keys.k[0].k.p.offset, 16 + 128);
	assert_int_equal(keys.k[0].k.p.inode, 5000);
	assert_int_equal(keys.k[1].k.size, 128);
	assert_int_equal(keys.k[2].k.size, 44);
	assert_int_equal(keys.k[0].k.type, BCH_EXTENT);
	for (size_t i = 0; i < keys.nr; i++)
		assert_int_equal(extent_nr_ptrs(&keys.k[i]), 1);
	/* the first two fill one bucket, one after the other */
	extent_ptr_iter_init(&it, &keys.k[0]);
	assert_int_equal(extent_ptr_iter_next(&it, &d0), 1);
	assert_int_equal(d0.crc.csum_type, BCH_CHECKSUM_CRC32C);
	assert_int_equal(d0.ptr.offset % 256, 0);
	extent_ptr_iter_init(&it, &keys.k[1]);
	assert_int_equal(extent_ptr_iter_next(&it, &d), 1);
	assert_int_equal(d.ptr.offset, d0.ptr.offset + 128);
	assert_int_equal(d.ptr.dev, d0.ptr.dev);
	read_back(c, &keys, copy, 16, 300);
	commit(c, &keys);

	/* the next write goes on after the last one, in its bucket */
	extent_ptr_iter_init(&it, &keys.k[2]);
	assert_int_equal(extent_ptr_iter_next(&it, &d), 1);
	bulk_keys_exit(&keys);
	assert_int_equal(bch_write_extents(c, &o, 5001, 0, data, 8, &keys, &err), 8);
	extent_ptr_iter_init(&it, &keys.k[0]);
	assert_int_equal(extent_ptr_iter_next(&it, &d0), 1);
	assert_int_equal(d0.ptr.offset, d.ptr.offset + 44);
	commit(c, &keys);
	bulk_keys_exit(&keys);

	/* compressed: fewer sectors on disk, read back the same */
	o.compression_type = BCH_COMPRESSION_ZSTD;
	memset(data, 0, bytes);
	memcpy(data + 4096, "some bytes", 10);
	memcpy(copy, data, bytes);
	assert_int_equal(bch_write_extents(c, &o, 5002, 0, data, 256, &keys, &err), 256);
	assert_int_equal(keys.nr, 2);
	extent_ptr_iter_init(&it, &keys.k[0]);
	assert_int_equal(extent_ptr_iter_next(&it, &d), 1);
	assert_int_equal(d.crc.compression_type, BCH_COMPRESSION_ZSTD);
	assert_true(d.crc.compressed_size < 128);
	read_back(c, &keys, copy, 0, 256);
	commit(c, &keys);
	/* what follows in the bucket starts after the compressed sectors */
	extent_ptr_iter_init(&it, &keys.k[1]);
	assert_int_equal(extent_ptr_iter_next(&it, &d0), 1);
	bulk_keys_exit(&keys);
	o.compression_type = 0;
	assert_int_equal(bch_write_extents(c, &o, 5003, 0, data, 8, &keys, &err), 8);
	extent_ptr_iter_init(&it, &keys.k[0]);
	assert_int_equal(extent_ptr_iter_next(&it, &d), 1);
	assert_int_equal(d.ptr.offset, d0.ptr.offset + d0.crc.compressed_size);
	commit(c, &keys);
	bulk_keys_exit(&keys);

	free(data);
	free(copy);
	printbuf_exit(&err);
	stop_close(c);
}

static void test_two_replicas(void **state)
{
	struct bch_fs *c = format_open("--data_replicas=2", 2, false);
	struct printbuf err = PRINTBUF;
	struct bulk_keys keys = { 0 };
	struct bch_io_opts o;
	size_t bytes = 64 * 512;
	uint8_t *data = xmalloc(bytes), *copy = xmalloc(bytes);
	struct extent_ptr_iter it;
	struct extent_ptr_decoded d[2];

	rw_start(c);
	bch_io_opts_get(c, NULL, &o);
	assert_int_equal(o.nr_replicas, 2);
	pattern(data, bytes, 4);
	memcpy(copy, data, bytes);
	assert_int_equal(bch_write_extents(c, &o, 5000, 0, data, 64, &keys, &err), 64);
	assert_int_equal(keys.nr, 1);
	assert_int_equal(extent_nr_ptrs(&keys.k[0]), 2);
	extent_ptr_iter_init(&it, &keys.k[0]);
	assert_int_equal(extent_ptr_iter_next(&it, &d[0]), 1);
	assert_int_equal(extent_ptr_iter_next(&it, &d[1]), 1);
	assert_int_not_equal(d[0].ptr.dev, d[1].ptr.dev);
	read_back(c, &keys, copy, 0, 64);
	commit(c, &keys);
	/* each copy holds the data: read the second with the first device's copy gone */
	{
		uint8_t *buf = xmalloc(bytes);

		assert_int_equal(bch_dev_read(c, d[1].ptr.dev, buf, bytes, d[1].ptr.offset), 0);
		assert_memory_equal(buf, copy, bytes);
		assert_int_equal(bch_dev_read(c, d[0].ptr.dev, buf, bytes, d[0].ptr.offset), 0);
		assert_memory_equal(buf, copy, bytes);
		free(buf);
	}
	bulk_keys_exit(&keys);

	/* three replicas wanted, three required, two devices: refused */
	o.nr_replicas = o.nr_replicas_req = 3;
	assert_int_equal(bch_write_extents(c, &o, 5001, 0, data, 8, &keys, &err), -EROFS);
	assert_non_null(strstr(printbuf_str(&err), "cannot write 3 replicas of the data (2 possible)"));
	assert_int_equal(keys.nr, 0);
	/* three wanted, one required: two copies */
	o.nr_replicas_req = 1;
	assert_int_equal(bch_write_extents(c, &o, 5001, 0, data, 8, &keys, &err), 8);
	assert_int_equal(extent_nr_ptrs(&keys.k[0]), 2);
	commit(c, &keys);
	bulk_keys_exit(&keys);
	free(data);
	free(copy);
	printbuf_exit(&err);
	stop_close(c);
}

/*
 * Writing until the filesystem is full, 256 KiB a call, each committed
 * (as the mount does): a short write, then no space at all.
 */
static void test_full(void **state)
{
	struct bch_fs *c;
	struct printbuf err = PRINTBUF;
	struct bulk_keys keys = { 0 };
	struct bch_io_opts o;
	const uint64_t chunk = 512;
	uint8_t *data = xcalloc(chunk, 512);
	uint64_t total = 0, calls = 0;
	int64_t n = 0;

	/* 16 MiB of 16 KiB buckets (32 sectors) */
	assert_int_equal(test_run("rm -f %s && truncate -s 16M %s && %s format -q --force "
				  "--bucket_size=16k --btree_node_size=16k %s",
				  img, img, test_bin(), img), 0);
	c = open_imgs(1, false);
	rw_start(c);
	bch_io_opts_get(c, NULL, &o);
	o.csum_type = BCH_CHECKSUM_NONE;
	/* 8 sectors first: from then on every call ends 8 sectors into a bucket */
	assert_int_equal(bch_write_extents(c, &o, 5000, 0, data, 8, &keys, &err), 8);
	commit(c, &keys);
	bulk_keys_exit(&keys);
	total = 8;
	while (calls++ < 100) {
		n = bch_write_extents(c, &o, 5000, total, data, chunk, &keys, &err);
		if (n < 0)
			break;
		commit(c, &keys);
		bulk_keys_exit(&keys);
		total += (uint64_t)n;
		if ((uint64_t)n < chunk)
			break;
	}
	/* the last call was short: what fit, up to the end of a bucket */
	assert_true(n > 0 && (uint64_t)n < chunk);
	assert_int_equal(total % 32, 0);
	assert_true(total > 12 << 11);		/* most of the 16 MiB */
	assert_true(total < 16 << 11);
	/* then nothing at all */
	printbuf_reset(&err);
	assert_int_equal(bch_write_extents(c, &o, 5001, 0, data, 8, &keys, &err), -BCH_ERR_nospc);
	assert_int_equal(keys.nr, 0);
	assert_non_null(strstr(printbuf_str(&err), "no space"));
	free(data);
	printbuf_exit(&err);
	bch_fs_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_extent_value),
		cmocka_unit_test(test_write_read_back),
		cmocka_unit_test(test_two_replicas),
		cmocka_unit_test(test_full),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
