// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for libbcachefs/io_read.c (doc/format.md §5.2.6-§5.2.7, §7-§9)
 * on synthetic devices: plain and trimmed extents, checksums, compression,
 * encryption (the real vector of §40.4.6), replicas and retries, stale and
 * missing copies, and hostile values; the read-ahead worker of the mount.
 * Also the ACL and xattr-name helpers of fsread.c.
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
#include <unistd.h>

#include "codec/checksum.h"
#include "codec/compress.h"
#include "codec/crypto.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fs/fsread.h"
#include "fs/io_read.h"
#include "util/util.h"

#define DEV_SECTORS	4096
#define NR_TEST_DEVS	2

struct tfs {
	struct bch_fs	*c;
	char		path[NR_TEST_DEVS][64];
};

static struct tfs *tfs_new(void)
{
	struct tfs *t = xcalloc(1, sizeof(*t));
	unsigned i;

	t->c = xcalloc(1, sizeof(*t->c));
	t->c->nr_devices = NR_TEST_DEVS;
	for (i = 0; i < NR_TEST_DEVS; i++) {
		struct bch_member_dev *ca = xcalloc(1, sizeof(*ca));
		int fd;

		snprintf(t->path[i], sizeof(t->path[i]), "/tmp/test_io_read.XXXXXX");
		fd = mkstemp(t->path[i]);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, DEV_SECTORS * 512), 0);
		close(fd);
		assert_int_equal(dev_open(t->path[i], DEV_RW, &ca->io), 0);
		ca->idx = i;
		ca->bucket_size = 128;
		ca->nbuckets = DEV_SECTORS / 128;
		t->c->devs[i] = ca;
	}
	return t;
}

static void tfs_free(struct tfs *t)
{
	unsigned i;

	for (i = 0; i < NR_TEST_DEVS; i++) {
		struct bch_member_dev *ca = t->c->devs[i];

		if (ca) {
			if (ca->io)
				dev_close(ca->io);
			free(ca->bucket_gens);
			free(ca);
		}
		unlink(t->path[i]);
	}
	free(t->c);
	free(t);
}

static void dev_write(struct tfs *t, unsigned dev, uint64_t sector, const void *buf, size_t len)
{
	assert_int_equal(dev_pwrite(t->c->devs[dev]->io, buf, len, sector * 512), 0);
}

/* A key being built: header + value entries. */
struct tkey {
	struct bkey_ref	k;
	uint64_t	v[BKEY_EXTENT_VAL_U64s_MAX];
	unsigned	u64s;
};

static void tkey_init(struct tkey *t, unsigned type, uint64_t inode, uint64_t end, uint32_t size)
{
	memset(t, 0, sizeof(*t));
	t->k.k.type = (uint8_t)type;
	t->k.k.p = POS_H(inode, end);
	t->k.k.size = size;
	t->k.v = t->v;
}

static void tkey_done(struct tkey *t)
{
	t->k.v_bytes = t->u64s * 8;
	t->k.k.u64s = (uint8_t)(BKEY_U64S_UNPACKED + t->u64s);
}

static void add_ptr(struct tkey *t, unsigned dev, uint64_t offset, uint8_t gen, bool cached)
{
	struct bch_extent_ptr_unpacked u = { .offset = offset, .dev = (uint8_t)dev,
					     .gen = gen, .cached = cached };
	struct bch_extent_ptr p = bch_extent_ptr_pack(&u);

	memcpy(&t->v[t->u64s++], &p, 8);
	tkey_done(t);
}

static void add_crc(struct tkey *t, const struct bch_extent_crc_unpacked *c)
{
	union bch_extent_entry e[3];
	int type = bch_extent_crc_pick_type(c);
	unsigned n;

	assert_true(type >= 0);
	memset(e, 0, sizeof(e));
	n = bch_extent_crc_pack(e, type, c);
	assert_true(n > 0);
	memcpy(&t->v[t->u64s], e, n * 8);
	t->u64s += n;
	tkey_done(t);
}

static void fill_text(uint8_t *buf, size_t len, unsigned seed)
{
	char rec[128];
	size_t i;

	for (i = 0; i < len; i += 64) {
		int n = snprintf(rec, sizeof(rec), "seed %u sector %zu golden text record ",
				 seed % 100000, (i / 512) % 100000);

		memset(rec + n, '.', sizeof(rec) - (size_t)n);
		rec[63] = '\n';
		memcpy(buf + i, rec, len - i < 64 ? len - i : 64);
	}
}

static void fill_random(uint8_t *buf, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		buf[i] = (uint8_t)(seed >> 16);
	}
}

static bool all_zero(const uint8_t *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

/* ---- plain extents ---- */

static void test_plain(void **state)
{
	struct tfs *t = tfs_new();
	uint8_t data[16 * 512], out[16 * 512];
	struct printbuf err = PRINTBUF;
	struct tkey k;

	fill_random(data, sizeof(data), 1);
	dev_write(t, 0, 1000, data, sizeof(data));

	/* file sectors 8..24 at device sector 1000 */
	tkey_init(&k, BCH_EXTENT, 4100, 24, 16);
	add_ptr(&k, 0, 1000, 0, false);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 16, out, NULL, &err), 0);
	assert_memory_equal(out, data, sizeof(data));
	assert_int_equal(bch_read_extent(t->c, &k.k, 5, 3, out, NULL, &err), 0);
	assert_memory_equal(out, data + 5 * 512, 3 * 512);

	/* front-cut unencoded extent: the pointer moved (doc/format.md §5.2.8) */
	tkey_init(&k, BCH_EXTENT, 4100, 24, 10);
	add_ptr(&k, 0, 1006, 0, false);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 10, out, NULL, &err), 0);
	assert_memory_equal(out, data + 6 * 512, 10 * 512);

	/* outside the key */
	assert_int_equal(bch_read_extent(t->c, &k.k, 8, 3, out, NULL, &err), -ERANGE);

	/* reservation, discard: zeroes; error key: EIO */
	tkey_init(&k, BCH_RESERVATION, 4100, 24, 16);
	memset(out, 0xaa, sizeof(out));
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 16, out, NULL, &err), 0);
	assert_true(all_zero(out, sizeof(out)));
	tkey_init(&k, KEY_TYPE_ERROR, 4100, 24, 16);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 16, out, NULL, &err), -EIO);

	printbuf_exit(&err);
	tfs_free(t);
}

/* ---- checksummed, trimmed ---- */

static void make_crc(struct bch_extent_crc_unpacked *c, unsigned csum_type,
		     unsigned comp, unsigned csize, unsigned usize, unsigned offset,
		     struct bch_csum_val csum)
{
	memset(c, 0, sizeof(*c));
	c->csum_type = (uint8_t)csum_type;
	c->compression_type = (uint8_t)comp;
	c->compressed_size = csize;
	c->uncompressed_size = usize;
	c->offset = offset;
	c->csum_lo = csum.lo;
	c->csum_hi = csum.hi;
}

static void test_csum_trimmed(void **state)
{
	static const unsigned types[] = { BCH_CHECKSUM_CRC32C, BCH_CHECKSUM_CRC64,
					  BCH_CHECKSUM_CRC32C_NONZERO, BCH_CHECKSUM_CRC64_NONZERO };
	struct tfs *t = tfs_new();
	uint8_t data[16 * 512], out[16 * 512];
	struct printbuf err = PRINTBUF;
	struct bch_read_cache rc = BCH_READ_CACHE_INIT;
	struct bch_extent_crc_unpacked crc;
	struct bch_csum_val cs;
	struct tkey k;
	unsigned i;

	fill_random(data, sizeof(data), 2);
	dev_write(t, 0, 2000, data, sizeof(data));

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		assert_int_equal(bch_checksum(types[i], bch_nonce_make(0, 0, 0, 0), NULL,
					      data, sizeof(data), &cs), 0);
		/* the back part of a split: live sectors 5..13 of the 16 written */
		make_crc(&crc, types[i], 0, 16, 16, 5, cs);
		tkey_init(&k, BCH_EXTENT, 4100, 100, 8);
		add_crc(&k, &crc);
		add_ptr(&k, 0, 2000, 0, false);

		memset(out, 0, sizeof(out));
		assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, &rc, &err), 0);
		assert_memory_equal(out, data + 5 * 512, 8 * 512);
		/* the same region again, another part: served from the cache */
		assert_int_equal(bch_read_extent(t->c, &k.k, 2, 3, out, &rc, &err), 0);
		assert_memory_equal(out, data + 7 * 512, 3 * 512);
	}
	assert_int_equal(rc.nr_decoded, ARRAY_SIZE(types));
	assert_int_equal(rc.nr_hits, ARRAY_SIZE(types));

	/* crc offset + size beyond the decoded data: refused, no crash */
	bch_checksum(BCH_CHECKSUM_CRC32C, bch_nonce_make(0, 0, 0, 0), NULL, data, sizeof(data), &cs);
	make_crc(&crc, BCH_CHECKSUM_CRC32C, 0, 16, 16, 12, cs);
	tkey_init(&k, BCH_EXTENT, 4100, 100, 8);
	add_crc(&k, &crc);
	add_ptr(&k, 0, 2000, 0, false);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, &rc, &err), -EIO);

	/* a region running past the end of the device */
	make_crc(&crc, BCH_CHECKSUM_CRC32C, 0, 128, 128, 0, cs);
	tkey_init(&k, BCH_EXTENT, 4100, 100, 100);
	add_crc(&k, &crc);
	add_ptr(&k, 0, DEV_SECTORS - 64, 0, false);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, &rc, &err), -EIO);

	bch_read_cache_exit(&rc);
	printbuf_exit(&err);
	tfs_free(t);
}

/* Damage: one replica -> EIO naming inode and offset; two -> the good one. */
static void test_damage_replicas(void **state)
{
	struct tfs *t = tfs_new();
	uint8_t data[8 * 512], bad[8 * 512], out[8 * 512];
	struct printbuf err = PRINTBUF;
	struct bch_read_cache rc = BCH_READ_CACHE_INIT;
	struct bch_extent_crc_unpacked crc;
	struct bch_csum_val cs;
	struct tkey k;
	int ret;

	fill_text(data, sizeof(data), 3);
	memcpy(bad, data, sizeof(bad));
	bad[1234] ^= 0x40;
	dev_write(t, 0, 300, bad, sizeof(bad));
	dev_write(t, 1, 700, data, sizeof(data));
	bch_checksum(BCH_CHECKSUM_CRC32C, bch_nonce_make(0, 0, 0, 0), NULL, data, sizeof(data), &cs);
	make_crc(&crc, BCH_CHECKSUM_CRC32C, 0, 8, 8, 0, cs);

	tkey_init(&k, BCH_EXTENT, 4321, 64, 8);
	add_crc(&k, &crc);
	add_ptr(&k, 0, 300, 0, false);
	memset(out, 0x55, sizeof(out));
	ret = bch_read_extent(t->c, &k.k, 0, 8, out, &rc, &err);
	assert_int_equal(ret, -BCH_ERR_csum_mismatch);
	assert_true(bch_err_matches(ret, EIO));
	assert_true(all_zero(out, sizeof(out)));
	assert_non_null(strstr(printbuf_str(&err), "inode 4321 offset 28672"));
	assert_non_null(strstr(printbuf_str(&err), "device 0 sector 300"));
	printbuf_reset(&err);

	/* second copy on device 1 is good */
	add_ptr(&k, 1, 700, 0, false);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, &rc, &err), 0);
	assert_memory_equal(out, data, sizeof(data));
	assert_int_equal(rc.nr_retries, 1);
	assert_non_null(strstr(printbuf_str(&err), "checksum"));
	printbuf_reset(&err);

	/* device 1 missing: only the bad copy is left */
	dev_close(t->c->devs[1]->io);
	t->c->devs[1]->io = NULL;
	rc.valid = false;
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, &rc, &err), -BCH_ERR_csum_mismatch);

	/* unencoded data on a missing device: EIO, cached extent: a hole */
	tkey_init(&k, BCH_EXTENT, 4321, 64, 8);
	add_ptr(&k, 1, 700, 0, false);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, &rc, &err), -EIO);
	assert_non_null(strstr(printbuf_str(&err), "missing"));
	k.k.k.type = BCH_EXTENT_CACHED;
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, &rc, &err), 0);
	assert_true(all_zero(out, sizeof(out)));

	bch_read_cache_exit(&rc);
	printbuf_exit(&err);
	tfs_free(t);
}

/*
 * Stale cached pointers are skipped; a cached copy whose gen is known to
 * be current is read before the dirty ones (it is on a fast device).
 */
static void test_stale_cached(void **state)
{
	struct tfs *t = tfs_new();
	uint8_t a[8 * 512], b[8 * 512], out[8 * 512];
	struct printbuf err = PRINTBUF;
	struct tkey k;

	fill_random(a, sizeof(a), 4);
	fill_random(b, sizeof(b), 5);
	dev_write(t, 0, 128, a, sizeof(a));	/* bucket 1 of dev 0 */
	dev_write(t, 1, 256, b, sizeof(b));	/* bucket 2 of dev 1 */
	t->c->devs[0]->bucket_gens = xcalloc(DEV_SECTORS / 128, 1);
	t->c->devs[0]->bucket_gens[1] = 3;

	/* dirty copy first in the value, current cached copy second: the cached one is read */
	tkey_init(&k, BCH_EXTENT, 4100, 8, 8);
	add_ptr(&k, 1, 256, 0, false);
	add_ptr(&k, 0, 128, 3, true);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, NULL, &err), 0);
	assert_memory_equal(out, a, sizeof(a));
	/* the cached copy stale (gen 2 < bucket gen 3): the dirty one is read */
	tkey_init(&k, BCH_EXTENT, 4100, 8, 8);
	add_ptr(&k, 0, 128, 2, true);
	add_ptr(&k, 1, 256, 0, false);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, NULL, &err), 0);
	assert_memory_equal(out, b, sizeof(b));

	/* a cached extent whose only copy is stale (gen 2 < bucket gen 3): a hole */
	tkey_init(&k, BCH_EXTENT_CACHED, 4100, 8, 8);
	add_ptr(&k, 0, 128, 2, true);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, NULL, &err), 0);
	assert_true(all_zero(out, sizeof(out)));
	assert_true(bch_extent_reads_as_hole(t->c, &k.k));
	k.k.k.type = BCH_EXTENT;	/* the same as a dirty extent: an error, not a hole */
	assert_false(bch_extent_reads_as_hole(t->c, &k.k));
	/* not stale (gen 3): read */
	tkey_init(&k, BCH_EXTENT_CACHED, 4100, 8, 8);
	add_ptr(&k, 0, 128, 3, true);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, NULL, &err), 0);
	assert_memory_equal(out, a, sizeof(a));
	assert_false(bch_extent_reads_as_hole(t->c, &k.k));
	/* gen wrap-around: 255 is behind 3 */
	tkey_init(&k, BCH_EXTENT, 4100, 8, 8);
	add_ptr(&k, 0, 128, 255, false);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, NULL, &err), -EIO);
	assert_non_null(strstr(printbuf_str(&err), "1 stale"));

	printbuf_exit(&err);
	tfs_free(t);
}

/* ---- compressed ---- */

static void test_compressed(void **state)
{
	static const unsigned types[] = { BCH_COMPRESSION_LZ4, BCH_COMPRESSION_GZIP,
					  BCH_COMPRESSION_ZSTD };
	struct tfs *t = tfs_new();
	size_t usize = 64 * 512;
	uint8_t *data = xmalloc(usize), *comp = xcalloc(1, usize), *out = xmalloc(usize);
	struct printbuf err = PRINTBUF;
	struct bch_read_cache rc = BCH_READ_CACHE_INIT;
	struct bch_extent_crc_unpacked crc;
	struct bch_csum_val cs;
	struct tkey k;
	unsigned i;

	fill_text(data, usize, 6);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		size_t n = usize, stored;

		memset(comp, 0, usize);
		assert_int_equal(bch_compress(types[i], data, usize, comp, &n, 0), 0);
		stored = round_up(n, 4096);
		dev_write(t, 0, 3000, comp, stored);
		bch_checksum(BCH_CHECKSUM_CRC32C, bch_nonce_make(0, 0, 0, 0), NULL, comp, stored, &cs);
		/* live part: decoded sectors 10..40 */
		make_crc(&crc, BCH_CHECKSUM_CRC32C, types[i], (unsigned)(stored / 512), 64, 10, cs);
		tkey_init(&k, BCH_EXTENT, 4200, 1030, 30);
		add_crc(&k, &crc);
		add_ptr(&k, 0, 3000, 0, false);

		assert_int_equal(bch_read_extent(t->c, &k.k, 0, 30, out, &rc, &err), 0);
		assert_memory_equal(out, data + 10 * 512, 30 * 512);
		assert_int_equal(bch_read_extent(t->c, &k.k, 29, 1, out, &rc, &err), 0);
		assert_memory_equal(out, data + 39 * 512, 512);

		/* a corrupt stream with a matching checksum: decompression error */
		comp[20] ^= 0xff;
		comp[21] ^= 0x5a;
		dev_write(t, 0, 3000, comp, stored);
		bch_checksum(BCH_CHECKSUM_CRC32C, bch_nonce_make(0, 0, 0, 0), NULL, comp, stored, &cs);
		make_crc(&crc, BCH_CHECKSUM_CRC32C, types[i], (unsigned)(stored / 512), 64, 10, cs);
		tkey_init(&k, BCH_EXTENT, 4200, 1030, 30);
		add_crc(&k, &crc);
		add_ptr(&k, 0, 3000, 0, false);
		rc.valid = false;
		{
			int ret = bch_read_extent(t->c, &k.k, 0, 30, out, &rc, &err);

			/* some corruptions still decode; then the data differs */
			if (ret)
				assert_int_equal(ret, -BCH_ERR_decompress);
			else
				assert_memory_not_equal(out, data + 10 * 512, 30 * 512);
		}
		rc.valid = false;
	}
	bch_read_cache_exit(&rc);
	printbuf_exit(&err);
	free(data);
	free(comp);
	free(out);
	tfs_free(t);
}

/* ---- encrypted ---- */

static void hex2bin(const char *h, uint8_t *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned v;

		assert_int_equal(sscanf(h + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

/*
 * Spec 40 §40.4.6 real vector: --encrypted --no_passphrase image, symlink
 * data "subdir/rand8k" + 4083 zero bytes, key 4102:8 size 8 version 65543.
 */
static void test_encrypted_vector(void **state)
{
	static const uint8_t value[24] = {
		0x3c, 0x70, 0x00, 0x00, 0x00, 0x03, 0x96, 0x81,
		0x44, 0x64, 0x07, 0x23, 0x80, 0x5a, 0x1a, 0x77,
		0x81, 0x30, 0x07, 0x00, 0x00, 0x00, 0x00, 0x01,
	};
	struct tfs *t = tfs_new();
	uint8_t plain[4096], ct[4096], want_ct[32], out[4096];
	struct printbuf err = PRINTBUF;
	struct bch_nonce nonce;
	struct tkey k;
	int ret;

	assert_int_equal(bch_crypto_init(), 0);
	hex2bin("feebc4c3d84bea4fa2c4d2e5e62913287b9d2d2f727d43622fb8cc074eb0f3b8",
		bch_key_bytes(&t->c->key), 32);
	t->c->have_key = true;
	t->c->encrypted = true;

	memset(plain, 0, sizeof(plain));
	memcpy(plain, "subdir/rand8k", 13);
	memcpy(ct, plain, sizeof(ct));
	nonce = bch_nonce_extent(65543, 0, 0, 8, 0);
	assert_int_equal(nonce.d[0], 0);
	assert_int_equal(nonce.d[1], 0x00010007);
	assert_int_equal(nonce.d[3], 0x10000000);
	bch_chacha20(&t->c->key, nonce, ct, sizeof(ct));
	hex2bin("f7b24b7cc863117cb2f6ed80ee88f90a93ba51b01119b9bf72358d4ba4949c9b", want_ct, 32);
	assert_memory_equal(ct, want_ct, 32);
	/* the device is 2 MiB: put the region at sector 1448 instead of 29448 */
	dev_write(t, 0, 1448, ct, sizeof(ct));

	tkey_init(&k, BCH_EXTENT, 4102, 8, 8);
	k.k.k.version_lo = 65543;
	memcpy(k.v, value, sizeof(value));
	k.u64s = 3;
	tkey_done(&k);
	/* ptr offset 29448 -> 1448 */
	{
		struct bch_extent_ptr_unpacked u = { .offset = 1448, .dev = 0, .gen = 1 };
		struct bch_extent_ptr p = bch_extent_ptr_pack(&u);

		memcpy(&k.v[2], &p, 8);
	}
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, NULL, &err), 0);
	assert_memory_equal(out, plain, sizeof(plain));
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 1, out, NULL, &err), 0);
	assert_memory_equal(out, "subdir/rand8k", 13);

	/* a flipped ciphertext byte: the MAC fails, no plaintext comes back */
	ct[100] ^= 1;
	dev_write(t, 0, 1448, ct, sizeof(ct));
	memset(out, 0x77, sizeof(out));
	ret = bch_read_extent(t->c, &k.k, 0, 8, out, NULL, &err);
	assert_int_equal(ret, -BCH_ERR_csum_mismatch);
	assert_true(all_zero(out, sizeof(out)));
	ct[100] ^= 1;
	dev_write(t, 0, 1448, ct, sizeof(ct));

	/* a wrong key: MAC fails as well */
	bch_key_bytes(&t->c->key)[0] ^= 1;
	ret = bch_read_extent(t->c, &k.k, 0, 8, out, NULL, &err);
	assert_int_equal(ret, -BCH_ERR_csum_mismatch);
	assert_true(all_zero(out, sizeof(out)));
	bch_key_bytes(&t->c->key)[0] ^= 1;

	/* a different version (nonce): MAC fails */
	k.k.k.version_lo = 65544;
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, NULL, &err), -BCH_ERR_csum_mismatch);
	k.k.k.version_lo = 65543;

	/* no key loaded */
	t->c->have_key = false;
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, NULL, &err), -BCH_ERR_no_key);
	assert_true(all_zero(out, sizeof(out)));

	printbuf_exit(&err);
	tfs_free(t);
}

/* Compressed + encrypted, 128-bit MAC, crc nonce != 0, trimmed. */
static void test_encrypted_compressed(void **state)
{
	struct tfs *t = tfs_new();
	size_t usize = 128 * 512, n = usize, stored;
	uint8_t *data = xmalloc(usize), *comp = xcalloc(1, usize), *out = xmalloc(usize);
	struct printbuf err = PRINTBUF;
	struct bch_extent_crc_unpacked crc;
	struct bch_csum_val cs;
	struct bch_nonce nonce;
	struct tkey k;
	unsigned csum_types[] = { BCH_CHECKSUM_CHACHA20_POLY1305_80,
				  BCH_CHECKSUM_CHACHA20_POLY1305_128 }, i;

	bch_crypto_init();
	for (i = 0; i < 32; i++)
		bch_key_bytes(&t->c->key)[i] = (uint8_t)(i * 7 + 1);
	t->c->have_key = true;
	fill_text(data, usize, 9);
	assert_int_equal(bch_compress(BCH_COMPRESSION_ZSTD, data, usize, comp, &n, 0), 0);
	stored = round_up(n, 4096);

	for (i = 0; i < 2; i++) {
		uint8_t *enc = xmalloc(stored);

		memcpy(enc, comp, stored);
		nonce = bch_nonce_extent(70000, 5, BCH_COMPRESSION_ZSTD, 128, 3);
		bch_chacha20(&t->c->key, nonce, enc, stored);
		assert_int_equal(bch_checksum(csum_types[i], nonce, &t->c->key, enc, stored, &cs), 0);
		dev_write(t, 1, 512, enc, stored);

		make_crc(&crc, csum_types[i], BCH_COMPRESSION_ZSTD, (unsigned)(stored / 512),
			 128, 20, cs);
		crc.nonce = 3;
		tkey_init(&k, BCH_EXTENT, 4300, 100, 100);
		k.k.k.version_lo = 70000;
		k.k.k.version_hi = 5;
		add_crc(&k, &crc);
		add_ptr(&k, 1, 512, 0, false);
		assert_int_equal(bch_read_extent(t->c, &k.k, 0, 100, out, NULL, &err), 0);
		assert_memory_equal(out, data + 20 * 512, 100 * 512);
		free(enc);
	}
	printbuf_exit(&err);
	free(data);
	free(comp);
	free(out);
	tfs_free(t);
}

/* ---- reading ahead (the mount's worker thread) ---- */

static void wait_done(struct bch_read_ahead *ra, unsigned long want)
{
	unsigned long done = 0, taken, served;
	int i;

	for (i = 0; i < 10000; i++) {
		bch_read_ahead_stats(ra, &done, &taken, &served);
		if (done >= want)
			return;
		usleep(1000);
	}
	fail_msg("read-ahead worker: %lu regions read, want %lu", done, want);
}

static void test_read_ahead(void **state)
{
	struct tfs *t = tfs_new();
	size_t bytes = 128 * 512, n = bytes, stored;
	uint8_t *data = xmalloc(bytes), *big = xmalloc(300 * 512), *text = xmalloc(bytes);
	uint8_t *comp = xcalloc(1, bytes), *enc, *out = xmalloc(bytes);
	struct printbuf err = PRINTBUF;
	struct bch_extent_crc_unpacked crc;
	struct bch_csum_val cs;
	struct bch_nonce nonce;
	struct bch_read_ahead *ra, *ra2;
	struct tkey a, b, c, d, e, f, h;
	unsigned long done, taken, served;
	const void *p = NULL;
	unsigned dev = 0;
	unsigned i;
	int r = 0;

	bch_crypto_init();
	for (i = 0; i < 32; i++)
		bch_key_bytes(&t->c->key)[i] = (uint8_t)(i * 5 + 3);
	t->c->have_key = true;

	/* a: crc32c, 128 sectors at 0:1000 */
	fill_random(data, bytes, 21);
	dev_write(t, 0, 1000, data, bytes);
	bch_checksum(BCH_CHECKSUM_CRC32C, bch_nonce_make(0, 0, 0, 0), NULL, data, bytes, &cs);
	make_crc(&crc, BCH_CHECKSUM_CRC32C, 0, 128, 128, 0, cs);
	tkey_init(&a, BCH_EXTENT, 4100, 128, 128);
	add_crc(&a, &crc);
	add_ptr(&a, 0, 1000, 0, false);
	/* b: the same checksum over a copy with one byte flipped, at 0:1200 */
	data[777] ^= 1;
	dev_write(t, 0, 1200, data, bytes);
	data[777] ^= 1;
	tkey_init(&b, BCH_EXTENT, 4101, 128, 128);
	add_crc(&b, &crc);
	add_ptr(&b, 0, 1200, 0, false);
	/* c: no checksum, 300 sectors at 0:2000: pieces of 128, 128, 44 */
	fill_random(big, 300 * 512, 22);
	dev_write(t, 0, 2000, big, 300 * 512);
	tkey_init(&c, BCH_EXTENT, 4102, 300, 300);
	add_ptr(&c, 0, 2000, 0, false);
	/* d: lz4, decoded sectors 10..110 live, at 1:100 */
	fill_text(text, bytes, 23);
	assert_int_equal(bch_compress(BCH_COMPRESSION_LZ4, text, bytes, comp, &n, 0), 0);
	stored = round_up(n, 4096);
	dev_write(t, 1, 100, comp, stored);
	bch_checksum(BCH_CHECKSUM_CRC32C, bch_nonce_make(0, 0, 0, 0), NULL, comp, stored, &cs);
	make_crc(&crc, BCH_CHECKSUM_CRC32C, BCH_COMPRESSION_LZ4, (unsigned)(stored / 512), 128, 10, cs);
	tkey_init(&d, BCH_EXTENT, 4103, 100, 100);
	add_crc(&d, &crc);
	add_ptr(&d, 1, 100, 0, false);
	/* e: the same, encrypted (ChaCha20/Poly1305), at 1:600 */
	enc = xmalloc(stored);
	memcpy(enc, comp, stored);
	nonce = bch_nonce_extent(9000, 2, BCH_COMPRESSION_LZ4, 128, 7);
	bch_chacha20(&t->c->key, nonce, enc, stored);
	assert_int_equal(bch_checksum(BCH_CHECKSUM_CHACHA20_POLY1305_128, nonce, &t->c->key,
				      enc, stored, &cs), 0);
	dev_write(t, 1, 600, enc, stored);
	make_crc(&crc, BCH_CHECKSUM_CHACHA20_POLY1305_128, BCH_COMPRESSION_LZ4,
		 (unsigned)(stored / 512), 128, 10, cs);
	crc.nonce = 7;
	tkey_init(&e, BCH_EXTENT, 4104, 100, 100);
	e.k.k.version_lo = 9000;
	e.k.k.version_hi = 2;
	add_crc(&e, &crc);
	add_ptr(&e, 1, 600, 0, false);

	ra = bch_read_ahead_new(t->c);
	assert_non_null(ra);
	/* nothing queued yet: nothing located */
	assert_int_equal(bch_read_extent_locate(t->c, &a.k, 0, 128, ra, &p, &dev), 0);
	assert_int_equal(bch_read_extent_ahead(t->c, &a.k, 0, 128, ra), 1);
	assert_int_equal(bch_read_extent_ahead(t->c, &b.k, 0, 128, ra), 1);
	assert_int_equal(bch_read_extent_ahead(t->c, &c.k, 0, 300, ra), 1);
	assert_int_equal(bch_read_extent_ahead(t->c, &d.k, 0, 100, ra), 1);
	assert_int_equal(bch_read_extent_ahead(t->c, &e.k, 0, 100, ra), 1);
	wait_done(ra, 7);

	/* the data, from the worker's buffers */
	assert_int_equal(bch_read_extent_locate(t->c, &a.k, 0, 128, ra, &p, &dev), 128);
	assert_int_equal(dev, 0);
	assert_memory_equal(p, data, bytes);
	assert_int_equal(bch_read_extent_locate(t->c, &a.k, 5, 3, ra, &p, &dev), 3);
	assert_memory_equal(p, data + 5 * 512, 3 * 512);
	/* the damaged copy is not handed out; bch_read_extent() reports it */
	assert_int_equal(bch_read_extent_locate(t->c, &b.k, 0, 128, ra, &p, &dev), 0);
	assert_int_equal(bch_read_extent(t->c, &b.k, 0, 128, out, NULL, &err),
			 -BCH_ERR_csum_mismatch);
	/* pieces: a range ends at its piece's end */
	assert_int_equal(bch_read_extent_locate(t->c, &c.k, 130, 170, ra, &p, &dev), 126);
	assert_memory_equal(p, big + 130 * 512, 126 * 512);
	assert_int_equal(bch_read_extent_locate(t->c, &c.k, 256, 44, ra, &p, &dev), 44);
	assert_memory_equal(p, big + 256 * 512, 44 * 512);
	/* decoded: decompressed, and decrypted after the MAC */
	assert_int_equal(bch_read_extent_locate(t->c, &d.k, 0, 100, ra, &p, &dev), 100);
	assert_memory_equal(p, text + 10 * 512, 100 * 512);
	assert_int_equal(bch_read_extent_locate(t->c, &e.k, 3, 97, ra, &p, &dev), 97);
	assert_memory_equal(p, text + 13 * 512, 97 * 512);
	/* outside the key */
	assert_int_equal(bch_read_extent_locate(t->c, &d.k, 90, 20, ra, &p, &dev), 0);

	/* queued again: nothing new (f, queued after, is the eighth region) */
	assert_int_equal(bch_read_extent_ahead(t->c, &a.k, 0, 128, ra), 1);
	tkey_init(&f, BCH_EXTENT, 4105, 64, 64);
	add_ptr(&f, 0, 2000, 0, false);
	f.k.k.version_lo = 1;
	assert_int_equal(bch_read_extent_ahead(t->c, &f.k, 0, 64, ra), 1);
	wait_done(ra, 8);
	usleep(50000);
	bch_read_ahead_stats(ra, &done, &taken, &served);
	assert_int_equal(done, 8);
	assert_int_equal(bch_read_extent_locate(t->c, &f.k, 0, 64, ra, &p, &dev), 64);
	assert_memory_equal(p, big, 64 * 512);

	/* hostile keys are not queued: a region larger than a buffer, one
	 * past the end of its device */
	make_crc(&crc, BCH_CHECKSUM_CRC64, 0, 256, 256, 0, (struct bch_csum_val){ 0 });
	tkey_init(&h, BCH_EXTENT, 4106, 256, 256);
	add_crc(&h, &crc);
	add_ptr(&h, 0, 0, 0, false);
	assert_int_equal(bch_read_extent_ahead(t->c, &h.k, 0, 256, ra), 0);
	assert_int_equal(bch_read_extent_locate(t->c, &h.k, 0, 128, ra, &p, &dev), 0);
	tkey_init(&h, BCH_EXTENT, 4107, 64, 64);
	add_ptr(&h, 0, DEV_SECTORS - 10, 0, false);
	assert_int_equal(bch_read_extent_ahead(t->c, &h.k, 0, 64, ra), 0);
	bch_read_ahead_stats(ra, &done, &taken, &served);
	assert_int_equal(done, 8);

	/* a full queue: -EAGAIN, before the buffers run out */
	bch_read_ahead_restart(ra);
	for (i = 0; i < 1000; i++) {
		f.k.k.version_lo = 2 + i;
		r = bch_read_extent_ahead(t->c, &f.k, 0, 64, ra);
		if (r != 1)
			break;
	}
	assert_int_equal(r, -EAGAIN);
	assert_true(i >= 16 && i <= 8 * 1024 / 64);
	bch_read_ahead_free(ra);

	/* without the key, encrypted data is left to bch_read_extent() */
	t->c->have_key = false;
	ra2 = bch_read_ahead_new(t->c);
	assert_non_null(ra2);
	assert_int_equal(bch_read_extent_ahead(t->c, &e.k, 0, 100, ra2), 0);
	assert_int_equal(bch_read_extent_ahead(t->c, &d.k, 0, 100, ra2), 1);
	bch_read_ahead_free(ra2);
	bch_read_ahead_free(NULL);

	printbuf_exit(&err);
	free(data);
	free(big);
	free(text);
	free(comp);
	free(enc);
	free(out);
	tfs_free(t);
}

/* Hostile values: invalid entries, huge sizes, garbage. Never crash. */
static void test_hostile(void **state)
{
	struct tfs *t = tfs_new();
	uint8_t *out = xmalloc(8192 * 512);
	struct printbuf err = PRINTBUF;
	struct tkey k;
	unsigned i, j;

	/* an invalid entry kind */
	tkey_init(&k, BCH_EXTENT, 4100, 8, 8);
	k.v[0] = cpu_to_le64(1ULL << 5);
	k.u64s = 1;
	tkey_done(&k);
	assert_int_equal(bch_read_extent(t->c, &k.k, 0, 8, out, NULL, &err), -EIO);

	/* random values: any result but no crash, no out-of-bounds access */
	for (i = 0; i < 2000; i++) {
		unsigned n = 1 + i % 6;
		uint32_t size = 1 + (i * 37) % 300;

		tkey_init(&k, i & 1 ? BCH_EXTENT : BCH_EXTENT_CACHED, 4100, 100000, size);
		fill_random((uint8_t *)k.v, n * 8, i);
		for (j = 0; j < n; j++)		/* point most pointers at device 0/1 */
			if (le64_to_cpu(k.v[j]) & 1)
				k.v[j] = cpu_to_le64((le64_to_cpu(k.v[j]) & ~(0xffULL << 48) &
						      ~(0xfffffffffffULL << 4)) |
						     ((uint64_t)(j & 1) << 48) |
						     ((uint64_t)(i % DEV_SECTORS) << 4));
		k.u64s = n;
		tkey_done(&k);
		bch_read_extent(t->c, &k.k, size / 3, size - size / 3, out, NULL, &err);
		printbuf_reset(&err);
	}
	printbuf_exit(&err);
	free(out);
	tfs_free(t);
}

/* ---- fsread helpers ---- */

static void test_acl(void **state)
{
	/* user::rw- user:1000:r-- group::r-- mask::r-- other::--- (doc/format.md §5.7) */
	static const uint8_t disk[] = {
		0x01, 0, 0, 0,  0x01, 0, 0x06, 0,  0x02, 0, 0x04, 0, 0xe8, 0x03, 0, 0,
		0x04, 0, 0x04, 0,  0x10, 0, 0x04, 0,  0x20, 0, 0, 0,
	};
	uint8_t out[64];
	ssize_t n;

	n = bch_acl_to_xattr(disk, sizeof(disk), NULL, 0);
	assert_int_equal(n, 4 + 5 * 8);
	assert_int_equal(bch_acl_to_xattr(disk, sizeof(disk), out, sizeof(out)), n);
	assert_int_equal(out[0], 2);
	/* user:1000 keeps its id, the short entries get -1 */
	assert_int_equal(out[4 + 8 + 0], 0x02);
	assert_int_equal(out[4 + 8 + 4], 0xe8);
	assert_int_equal(out[4 + 8 + 5], 0x03);
	assert_int_equal(out[4 + 4], 0xff);
	assert_int_equal(bch_acl_to_xattr(disk, sizeof(disk), out, 10), -ERANGE);
	assert_int_equal(bch_acl_to_xattr(disk, sizeof(disk) - 2, out, sizeof(out)), -EINVAL);
	assert_int_equal(bch_acl_to_xattr(disk, 3, out, sizeof(out)), -EINVAL);
}

static void test_xattr_names(void **state)
{
	char buf[64];
	const char *name;
	size_t len;
	unsigned type;

	assert_int_equal(bch_xattr_full_name(0, "abc", 3, buf, sizeof(buf)), 8);
	assert_string_equal(buf, "user.abc");
	assert_int_equal(bch_xattr_full_name(1, "", 0, buf, sizeof(buf)), 23);
	assert_string_equal(buf, "system.posix_acl_access");
	assert_int_equal(bch_xattr_full_name(9, "", 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(bch_xattr_full_name(3, "golden", 6, buf, 8), -ERANGE);

	assert_int_equal(bch_xattr_parse_name("trusted.golden", &type, &name, &len), 0);
	assert_int_equal(type, 3);
	assert_int_equal(len, 6);
	assert_int_equal(bch_xattr_parse_name("system.posix_acl_default", &type, &name, &len), 0);
	assert_int_equal(type, 2);
	assert_int_equal(len, 0);
	assert_int_equal(bch_xattr_parse_name("system.other", &type, &name, &len), -EOPNOTSUPP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_csum_trimmed),
		cmocka_unit_test(test_damage_replicas),
		cmocka_unit_test(test_stale_cached),
		cmocka_unit_test(test_compressed),
		cmocka_unit_test(test_encrypted_vector),
		cmocka_unit_test(test_encrypted_compressed),
		cmocka_unit_test(test_read_ahead),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_acl),
		cmocka_unit_test(test_xattr_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
