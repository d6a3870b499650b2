// SPDX-License-Identifier: GPL-2.0
/*
 * Key types: printing in the 2018 `list` format, validation, JSON, extent
 * entries, the merge rule, and the dirent/xattr string hash (spec 40, doc/tools.md §4).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "bkey/bkey_types.h"
#include "bkey/dirent.h"
#include "util/errcode.h"
#include "bkey/extents.h"
#include "bkey/inode.h"
#include "util/util.h"
#include "bkey/xattr.h"

static struct bkey_ref mk(uint8_t type, uint64_t inode, uint64_t offset, uint32_t size,
			  const void *v, unsigned bytes)
{
	struct bkey_ref r = {
		.k = { .u64s = 5 + bytes / 8, .type = type, .size = size,
		       .p = POS_H(inode, offset) },
		.v = v, .v_bytes = bytes,
	};
	return r;
}

static const char *line(struct printbuf *out, unsigned btree, unsigned level,
			const struct bkey_ref *k, const struct bkey_print_ctx *ctx)
{
	printbuf_reset(out);
	bch_bkey_to_text(out, btree, level, k, ctx);
	return printbuf_str(out);
}

/* ---- a fake filesystem: one device, 128-sector buckets, 8192 buckets ---- */

static uint8_t fake_gen = 1;

static bool fake_geom(void *priv, unsigned dev, struct bch_dev_geom *g)
{
	if (dev != 0)
		return false;
	g->nbuckets = 8192;
	g->bucket_size = 128;
	g->first_bucket = 1;
	return true;
}

static bool fake_gen_fn(void *priv, unsigned dev, uint64_t bucket, uint8_t *gen)
{
	*gen = fake_gen;
	return true;
}

static const struct bkey_fs_ctx fake_fs = {
	.nr_devices = 1, .dev_geom = fake_geom, .bucket_gen = fake_gen_fn,
	.have_key = false, .btree_node_size = 128,
};

/* 40 §40.1.6 worked example */
static const uint8_t ext_front[16] = { 0xfe, 0xff, 0x00, 0x05, 0xdf, 0x82, 0x4f, 0xca,
				       0x01, 0xf0, 0x06, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t ext_back[16] = { 0xfe, 0xff, 0x28, 0x05, 0xdf, 0x82, 0x4f, 0xca,
				      0x01, 0xf0, 0x06, 0x00, 0x00, 0x00, 0x00, 0x01 };

static void test_extent_lines(void **state)
{
	struct printbuf out = PRINTBUF;
	struct bkey_ref k = mk(128, 4100, 160, 32, ext_front, 16);
	struct bkey_print_ctx ctx = { .fs = &fake_fs };

	assert_string_equal(line(&out, BTREE_ID_EXTENTS, 0, &k, NULL),
		"u64s 7 type 128 4100:160 snap 0 len 32 ver 0: crc: c_size 128 size 128 "
		"offset 0 nonce 0 csum 5 compress 0 ptr: 0:28416 gen 1");
	assert_null(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, &fake_fs));

	k = mk(128, 4100, 256, 88, ext_back, 16);
	assert_string_equal(line(&out, BTREE_ID_EXTENTS, 0, &k, &ctx),
		"u64s 7 type 128 4100:256 snap 0 len 88 ver 0: crc: c_size 128 size 128 "
		"offset 40 nonce 0 csum 5 compress 0 ptr: 0:28416 gen 1");

	/* offset 40 + 96 sectors > 128 */
	k.k.size = 96;
	k.k.p.offset = 264;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, NULL),
			    "checksum offset + key size > uncompressed size");
	assert_non_null(strstr(line(&out, BTREE_ID_EXTENTS, 0, &k, NULL),
			       "gen 1 invalid: checksum offset + key size > uncompressed size"));
	printbuf_exit(&out);
}

static void test_extent_cached_stale(void **state)
{
	struct printbuf out = PRINTBUF;
	uint8_t v[8];
	struct bch_extent_ptr_unpacked p = { .offset = 31232, .dev = 0, .gen = 1, .cached = true };
	struct bch_extent_ptr ptr = bch_extent_ptr_pack(&p);
	struct bkey_print_ctx ctx = { .fs = &fake_fs };
	struct bkey_ref k;

	memcpy(v, &ptr, 8);
	k = mk(129, 4100, 128, 128, v, 8);
	fake_gen = 2;
	assert_string_equal(line(&out, BTREE_ID_EXTENTS, 0, &k, &ctx),
		"u64s 6 type 129 4100:128 snap 0 len 128 ver 0: ptr: 0:31232 gen 1 cached stale cached");
	fake_gen = 1;
	assert_string_equal(line(&out, BTREE_ID_EXTENTS, 0, &k, &ctx),
		"u64s 6 type 129 4100:128 snap 0 len 128 ver 0: ptr: 0:31232 gen 1 cached cached");
	/* gens wrap: 0 is after 255 */
	fake_gen = 0;
	p.gen = 255;
	assert_true(extent_ptr_stale(&fake_fs, &p));
	fake_gen = 1;
	printbuf_exit(&out);
}

static void test_extent_invalid(void **state)
{
	struct bch_extent_ptr_unpacked p = { .offset = 28416, .dev = 0, .gen = 1 };
	struct bch_extent_ptr ptr;
	uint64_t v[8];
	struct bkey_ref k;
	struct printbuf out = PRINTBUF;

	ptr = bch_extent_ptr_pack(&p);
	memcpy(&v[0], &ptr, 8);
	k = mk(128, 4100, 128, 8, v, 8);
	assert_null(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, &fake_fs));

	k.k.size = 0;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, NULL), "zero key size");
	k.k.size = 8;

	p.offset = 28416 + 124;		/* 124 + 8 > 128 */
	ptr = bch_extent_ptr_pack(&p);
	memcpy(&v[0], &ptr, 8);
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, &fake_fs),
			    "spans multiple buckets");
	assert_null(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, NULL));

	p.offset = 8;
	ptr = bch_extent_ptr_pack(&p);
	memcpy(&v[0], &ptr, 8);
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, &fake_fs),
			    "offset before first bucket");

	p.offset = 8192ULL * 128;
	ptr = bch_extent_ptr_pack(&p);
	memcpy(&v[0], &ptr, 8);
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, &fake_fs),
			    "offset past end of device");

	p.offset = 28416;
	p.dev = 1;
	ptr = bch_extent_ptr_pack(&p);
	memcpy(&v[0], &ptr, 8);
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, &fake_fs),
			    "pointer to invalid device");

	p.dev = 0;
	ptr = bch_extent_ptr_pack(&p);
	memcpy(&v[0], &ptr, 8);
	memcpy(&v[1], &ptr, 8);
	k = mk(128, 4100, 128, 8, v, 16);
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, NULL),
			    "multiple pointers to same device");

	/* an entry with its lowest set bit at 4 */
	v[1] = 0x10;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, NULL),
			    "invalid extent entry type");
	assert_string_equal(line(&out, BTREE_ID_EXTENTS, 0, &k, NULL),
		"u64s 7 type 128 4100:128 snap 0 len 8 ver 0: ptr: 0:28416 gen 1 "
		"(invalid extent entry 0000000000000010) invalid: invalid extent entry type");
	/* a crc128 entry cut off by the end of the value */
	v[1] = 0x8;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, NULL),
			    "extent entry extends past end of value");

	/* too big */
	memset(v, 0, sizeof(v));
	k = mk(128, 4100, 128, 8, v, 21 * 8);
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, NULL), "value too big");

	/* reservations */
	{
		uint8_t r[8] = { 0, 0, 0, 0, 1, 0, 0, 0 };

		k = mk(130, 5000, 64, 64, r, 8);
		assert_null(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, NULL));
		assert_string_equal(line(&out, BTREE_ID_EXTENTS, 0, &k, NULL),
			"u64s 6 type 130 5000:64 snap 0 len 64 ver 0: ");
		r[4] = 5;
		assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, NULL),
				    "invalid nr_replicas");
		k.v_bytes = 16;
		k.v = v;
		assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, NULL),
				    "incorrect value size");
	}
	k.k.type = 131;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 0, &k, NULL),
			    "invalid value type");
	printbuf_exit(&out);
}

static void test_btree_ptr(void **state)
{
	struct printbuf out = PRINTBUF;
	uint8_t v[16] = { 0x01, 0x40, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x01 };
	struct bkey_ref k = mk(128, UINT64_MAX, UINT64_MAX, 0, v, 8);
	struct bkey_print_ctx leaf = { .interior_as_leaf = true };

	assert_string_equal(line(&out, BTREE_ID_INODES, 1, &k, NULL),
		"u64s 6 type 128 POS_MAX snap 0 len 0 ver 0: ptr: 0:41984 gen 1");
	assert_string_equal(line(&out, BTREE_ID_EXTENTS, 1, &k, &leaf),
		"u64s 6 type 128 POS_MAX snap 0 len 0 ver 0: ptr: 0:41984 gen 1 invalid: zero key size");
	assert_int_equal(bch_bkey_validate(BTREE_ID_INODES, 1, &k, NULL), 0);
	assert_null(bch_bkey_val_invalid(BTREE_ID_EXTENTS, 2, &k, &fake_fs));

	k.k.type = 129;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_INODES, 1, &k, NULL), "cached");
	k.k.type = 128;
	v[8] = 0x02;	/* a crc32 entry */
	k.v_bytes = 16;
	k.k.u64s = 7;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_INODES, 1, &k, NULL), "has crc field");
	k.v_bytes = 0;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_INODES, 1, &k, NULL), "no pointers");
	printbuf_exit(&out);
}

static void test_inode_line(void **state)
{
	static const uint8_t root_val[56] = {
		0x7b, 0xdc, 0x31, 0x4e, 0xe5, 0xef, 0xf5, 0x3f, 0x00, 0x00, 0x20, 0x04, 0xed, 0x41,
		0x02, 0x00, 0xe7, 0x12, 0x56, 0x1e, 0x01, 0x81, 0x35, 0x4c,
		0x02, 0x00, 0xe7, 0x12, 0x56, 0x1e, 0x01, 0x81, 0x35, 0x4c,
		0x02, 0x00, 0xe7, 0x12, 0x56, 0x1e, 0x01, 0x81, 0x35, 0x4c,
		0x02, 0x00, 0xe7, 0x12, 0x56, 0x1e, 0x01, 0x81, 0x35, 0x4c,
		0x00, 0x00,
	};
	struct printbuf out = PRINTBUF;
	struct bkey_ref k = mk(128, 4096, 0, 0, root_val, 56);
	uint8_t bad[56];

	assert_string_equal(line(&out, BTREE_ID_INODES, 0, &k, NULL),
		"u64s 12 type 128 4096:0 snap 0 len 0 ver 0: "
		"bi_atime: 16650465459216397644 bi_ctime: 16650465459216397644 "
		"bi_mtime: 16650465459216397644 bi_otime: 16650465459216397644 "
		"bi_size: 0 bi_sectors: 0 bi_uid: 0 bi_gid: 0 bi_nlink: 0 bi_generation: 0 "
		"bi_dev: 0 bi_data_checksum: 0 bi_compression: 0 bi_project: 0 "
		"bi_background_compression: 0 bi_data_replicas: 0 bi_promote_target: 0 "
		"bi_foreground_target: 0 bi_background_target: 0 ");
	assert_int_equal(bch_bkey_validate(BTREE_ID_INODES, 0, &k, NULL), 0);

	memcpy(bad, root_val, 56);
	bad[11] = 9;	/* more fields than the value holds */
	k.v = bad;
	assert_string_equal(line(&out, BTREE_ID_INODES, 0, &k, NULL),
		"u64s 12 type 128 4096:0 snap 0 len 0 ver 0: (unpack error)");
	assert_int_equal(bch_bkey_validate(BTREE_ID_INODES, 0, &k, &out), -BCH_ERR_key_invalid);

	{
		uint8_t g[8] = { 1 };

		k = mk(130, 4099, 0, 0, g, 8);
		assert_string_equal(line(&out, BTREE_ID_INODES, 0, &k, NULL),
			"u64s 6 type 130 4099:0 snap 0 len 0 ver 0: ");
	}
	printbuf_exit(&out);
}

static void test_dirent_xattr_lines(void **state)
{
	struct printbuf out = PRINTBUF;
	uint8_t d[32], x[64];
	struct bkey_ref k;
	size_t n;

	n = bch_dirent_encode(4097, BCH_DT_DIR, "subdir", 6, d, sizeof(d));
	assert_int_equal(n, 24);
	k = mk(128, 4096, 1447031294012390040ULL, 0, d, 24);
	assert_string_equal(line(&out, BTREE_ID_DIRENTS, 0, &k, NULL),
		"u64s 8 type 128 4096:1447031294012390040 snap 0 len 0 ver 0: subdir -> 4097");
	assert_null(bch_bkey_val_invalid(BTREE_ID_DIRENTS, 0, &k, NULL));

	/* stale bytes after the name window are not part of the name */
	d[17] = 'e';
	d[18] = 'y';
	assert_string_equal(line(&out, BTREE_ID_DIRENTS, 0, &k, NULL),
		"u64s 8 type 128 4096:1447031294012390040 snap 0 len 0 ver 0: subdir -> 4097");
	d[15] = '/';
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_DIRENTS, 0, &k, NULL),
			    "dirent name has invalid characters");
	memset(d + 9, 0, 15);
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_DIRENTS, 0, &k, NULL), "empty name");
	k.v_bytes = 8;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_DIRENTS, 0, &k, NULL), "value too small");
	memset(d, 0, sizeof(d));
	n = bch_dirent_encode(4097, BCH_DT_DIR, "ab", 2, d, sizeof(d));
	assert_int_equal(n, 24);
	k = mk(128, 4096, 77, 0, d, 24);
	assert_null(bch_bkey_val_invalid(BTREE_ID_DIRENTS, 0, &k, NULL));
	k = mk(128, 4096, 77, 0, d, 32);
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_DIRENTS, 0, &k, NULL), "value too big");

	k = mk(129, 4096, 78, 0, NULL, 0);
	assert_string_equal(line(&out, BTREE_ID_DIRENTS, 0, &k, NULL),
		"u64s 5 type 129 4096:78 snap 0 len 0 ver 0: whiteout");

	/* xattrs: the line ends at the first NUL of the value */
	n = bch_xattr_encode(BCH_XATTR_INDEX_TRUSTED, "golden", 6, "tr\0ue", 5, x, sizeof(x));
	assert_int_equal(n, 24);
	k = mk(128, 4121, 5151333838237006506ULL, 0, x, 24);
	assert_string_equal(line(&out, BTREE_ID_XATTRS, 0, &k, NULL),
		"u64s 8 type 128 4121:5151333838237006506 snap 0 len 0 ver 0: trusted.golden:tr");
	assert_null(bch_bkey_val_invalid(BTREE_ID_XATTRS, 0, &k, NULL));

	n = bch_xattr_encode(BCH_XATTR_INDEX_USER, "empty", 5, "", 0, x, sizeof(x));
	k = mk(128, 4098, 7647686268916235007ULL, 0, x, n);
	assert_string_equal(line(&out, BTREE_ID_XATTRS, 0, &k, NULL),
		"u64s 7 type 128 4098:7647686268916235007 snap 0 len 0 ver 0: user.empty:");

	n = bch_xattr_encode(BCH_XATTR_INDEX_POSIX_ACL_ACCESS, "", 0, "\x01\0\0\0", 4, x, sizeof(x));
	k = mk(128, 4098, 5, 0, x, n);
	assert_string_equal(line(&out, BTREE_ID_XATTRS, 0, &k, NULL),
		"u64s 7 type 128 4098:5 snap 0 len 0 ver 0: (type 1):\x01");
	x[0] = 7;
	assert_string_equal(line(&out, BTREE_ID_XATTRS, 0, &k, NULL),
		"u64s 7 type 128 4098:5 snap 0 len 0 ver 0: (unknown type 7):\x01");
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_XATTRS, 0, &k, NULL), "invalid type");

	/* lengths that run past the value */
	x[0] = 0;
	x[1] = 200;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_XATTRS, 0, &k, NULL), "value too small");
	assert_string_equal(line(&out, BTREE_ID_XATTRS, 0, &k, NULL),
		"u64s 7 type 128 4098:5 snap 0 len 0 ver 0: ");
	x[1] = 0;
	k.v_bytes = 24;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_XATTRS, 0, &k, NULL), "value too big");

	n = bch_xattr_encode(BCH_XATTR_INDEX_USER, "a\0b", 3, "v", 1, x, sizeof(x));
	k = mk(128, 4098, 5, 0, x, n);
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_XATTRS, 0, &k, NULL),
			    "xattr name has invalid characters");
	printbuf_exit(&out);
}

static void test_other_lines(void **state)
{
	struct printbuf out = PRINTBUF;
	uint8_t a[8] = { 0, 1 }, q[32] = { 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
					   3, 0, 0, 0, 0, 0, 0, 0, 4 };
	struct bkey_ref k = mk(128, 0, 34, 0, a, 8);
	struct bkey_print_ctx ctx = { .max_len = 20 };
	struct bch_alloc_h ah;

	assert_string_equal(line(&out, BTREE_ID_ALLOC, 0, &k, NULL),
		"u64s 6 type 128 0:34 snap 0 len 0 ver 0: ");
	assert_null(bch_bkey_val_invalid(BTREE_ID_ALLOC, 0, &k, &fake_fs));
	assert_int_equal(bch_alloc_decode(&k, &ah), 0);
	assert_int_equal(ah.gen, 1);
	k.k.p.inode = 1;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_ALLOC, 0, &k, &fake_fs), "invalid device");
	k.k.p.inode = 0;
	a[0] = 3;		/* both io times: still one u64 */
	assert_null(bch_bkey_val_invalid(BTREE_ID_ALLOC, 0, &k, NULL));
	k.v_bytes = 16;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_ALLOC, 0, &k, NULL), "incorrect value size");

	k = mk(128, 1, 1000, 0, q, 32);
	assert_string_equal(line(&out, BTREE_ID_QUOTAS, 0, &k, NULL),
		"u64s 9 type 128 1:1000 snap 0 len 0 ver 0: "
		"space hardlimit 1 softlimit 2inodes hardlimit 3 softlimit 4");
	assert_null(bch_bkey_val_invalid(BTREE_ID_QUOTAS, 0, &k, NULL));
	k.k.p.inode = 3;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_QUOTAS, 0, &k, NULL), "invalid quota type");

	k = mk(KEY_TYPE_DISCARD, 5000, 960, 64, NULL, 0);
	assert_string_equal(line(&out, BTREE_ID_EXTENTS, 0, &k, NULL),
		"u64s 5 type 1 5000:960 snap 0 len 64 ver 0:  discard");
	assert_string_equal(line(&out, BTREE_ID_EXTENTS, 0, &k, &ctx), "u64s 5 type 1 5000:9");
	k.k.type = KEY_TYPE_COOKIE;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_DIRENTS, 0, &k, NULL),
			    "incorrect value size");
	k.k.type = KEY_TYPE_PERSISTENT_DISCARD;
	assert_string_equal(bch_bkey_val_invalid(BTREE_ID_DIRENTS, 0, &k, NULL), "invalid type");
	k.k.type = KEY_TYPE_ERROR;
	assert_null(bch_bkey_val_invalid(BTREE_ID_DIRENTS, 0, &k, NULL));
	printbuf_exit(&out);
}

static void test_header_checks(void **state)
{
	struct bkey_h k = { .u64s = 5, .type = 128, .size = 8, .p = POS_H(4100, 16) };
	struct printbuf err = PRINTBUF;
	struct bkey_ref r = { .k = k };

	assert_null(bch_bkey_header_invalid(BTREE_ID_EXTENTS, 0, &k));
	assert_string_equal(bch_bkey_header_invalid(BTREE_ID_INODES, 0, &k), "nonzero size field");
	assert_string_equal(bch_bkey_header_invalid(BTREE_ID_EXTENTS, 1, &k), "nonzero size field");
	k.size = 0;
	assert_string_equal(bch_bkey_header_invalid(BTREE_ID_EXTENTS, 0, &k), "bad size field");
	k.type = 0;
	assert_null(bch_bkey_header_invalid(BTREE_ID_EXTENTS, 0, &k));
	k.p.snapshot = 1;
	assert_string_equal(bch_bkey_header_invalid(BTREE_ID_DIRENTS, 0, &k), "nonzero snapshot");
	k.p = POS_H_MAX;
	assert_string_equal(bch_bkey_header_invalid(BTREE_ID_DIRENTS, 0, &k), "POS_MAX key");
	assert_null(bch_bkey_header_invalid(BTREE_ID_DIRENTS, 1, &k));

	r.k.size = 0;
	r.k.p = POS_H(4100, 16);
	r.k.p.snapshot = 3;
	assert_int_equal(bch_bkey_validate(BTREE_ID_XATTRS, 0, &r, &err), -BCH_ERR_key_invalid);
	assert_string_equal(printbuf_str(&err),
			    "xattrs key 4100:16 (type 128, u64s 5): nonzero snapshot");
	printbuf_exit(&err);
}

static void test_names(void **state)
{
	assert_string_equal(bch_btree_id_str(0), "extents");
	assert_string_equal(bch_btree_id_str(5), "quotas");
	assert_string_equal(bch_btree_id_str(6), "(unknown btree)");
	assert_int_equal(bch_btree_id_parse("xattrs"), 3);
	assert_int_equal(bch_btree_id_parse("alloc"), 4);
	assert_true(bch_btree_id_parse("nope") < 0);
	assert_string_equal(bch_bkey_type_str(1, 0, 130), "inode_generation");
	assert_string_equal(bch_bkey_type_str(0, 1, 128), "btree_ptr");
	assert_string_equal(bch_bkey_type_str(2, 0, 1), "discard");
	assert_null(bch_bkey_type_str(4, 0, 129));
}

static void test_json(void **state)
{
	struct printbuf out = PRINTBUF;
	struct json j;
	uint8_t d[24];
	struct bkey_ref k;

	bch_dirent_encode(4097, BCH_DT_DIR, "sub\"dir", 7, d, sizeof(d));
	k = mk(128, 4096, 99, 0, d, 24);
	json_init(&j, &out, false);
	bch_bkey_to_json(&j, BTREE_ID_DIRENTS, 0, &k, NULL);
	assert_non_null(strstr(printbuf_str(&out), "\"type_name\":\"dirent\""));
	assert_non_null(strstr(printbuf_str(&out), "\"name\":\"sub\\\"dir\""));
	assert_non_null(strstr(printbuf_str(&out), "\"d_inum\":4097"));
	assert_null(strstr(printbuf_str(&out), "invalid"));

	printbuf_reset(&out);
	k = mk(128, 4100, 160, 32, ext_front, 16);
	json_init(&j, &out, false);
	bch_bkey_to_json(&j, BTREE_ID_EXTENTS, 0, &k, NULL);
	assert_non_null(strstr(printbuf_str(&out), "\"kind\":\"crc32\""));
	assert_non_null(strstr(printbuf_str(&out), "\"offset\":28416"));
	printbuf_exit(&out);
}

/* ---- merge and front cut ---- */

static void test_merge(void **state)
{
	uint16_t bs[1] = { 128 };
	struct bch_extent_ptr_unpacked p = { .offset = 28416, .dev = 0, .gen = 1 };
	struct bch_extent_ptr a = bch_extent_ptr_pack(&p), b;
	struct bkey_ref l, r;
	uint8_t ra[8] = { 0, 0, 0, 0, 1 }, rb[8] = { 0, 0, 0, 0, 1 };

	p.offset += 8;
	b = bch_extent_ptr_pack(&p);
	l = mk(128, 4100, 8, 8, &a, 8);
	r = mk(128, 4100, 16, 8, &b, 8);
	assert_true(extent_can_merge(&l, &r, bs, 1));
	assert_false(extent_can_merge(&l, &r, NULL, 0));	/* bucket size unknown */
	r.k.version_lo = 1;
	assert_false(extent_can_merge(&l, &r, bs, 1));
	r.k.version_lo = 0;

	/* different buckets: 28416 = bucket 222 exactly; 28408 + 8 crosses */
	p.offset = 28408;
	a = bch_extent_ptr_pack(&p);
	p.offset = 28416;
	b = bch_extent_ptr_pack(&p);
	assert_false(extent_can_merge(&l, &r, bs, 1));

	/* cached bit must match */
	p.offset = 28400;
	a = bch_extent_ptr_pack(&p);
	p.offset = 28408;
	p.cached = true;
	b = bch_extent_ptr_pack(&p);
	assert_false(extent_can_merge(&l, &r, bs, 1));

	/* crc entries prevent merging */
	l = mk(128, 4100, 160, 32, ext_front, 16);
	r = mk(128, 4100, 256, 96, ext_back, 16);
	assert_false(extent_can_merge(&l, &r, bs, 1));

	l = mk(130, 5000, 40, 40, ra, 8);
	r = mk(130, 5000, 64, 24, rb, 8);
	assert_true(extent_can_merge(&l, &r, bs, 1));
	rb[4] = 2;
	assert_false(extent_can_merge(&l, &r, bs, 1));
	r.k.p.offset = 65;
	rb[4] = 1;
	assert_false(extent_can_merge(&l, &r, bs, 1));	/* not adjacent */

	l = mk(1, 5000, 40, 40, NULL, 0);
	r = mk(1, 5000, 64, 24, NULL, 0);
	assert_true(extent_can_merge(&l, &r, bs, 1));
	l.k.size = UINT32_MAX;
	l.k.p.offset = (uint64_t)UINT32_MAX + 100;
	r.k.p.offset = l.k.p.offset + 24;
	assert_false(extent_can_merge(&l, &r, bs, 1));
}

static void test_cut_front(void **state)
{
	uint8_t v[16];
	struct bkey_ref k;
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	uint64_t w[2];

	memcpy(v, ext_front, 16);
	assert_int_equal(extent_cut_front(v, 16, 40), 0);
	assert_memory_equal(v, ext_back, 16);	/* crc offset 0 -> 40, pointer unchanged */

	/* plain pointer: advances */
	w[0] = 0x010000000006f001ULL;	/* ptr 0:28416 gen 1 */
	assert_int_equal(extent_cut_front(w, 8, 40), 0);
	k = mk(128, 4100, 384, 216, w, 8);
	extent_ptr_iter_init(&it, &k);
	assert_int_equal(extent_ptr_iter_next(&it, &p), 1);
	assert_true(p.ptr.offset == 28456);
	assert_int_equal(p.crc.compressed_size, 216);
	assert_int_equal(extent_ptr_iter_next(&it, &p), 0);
	assert_int_equal(extent_nr_ptrs(&k), 1);

	/* a cut past the crc's uncompressed size is refused */
	memcpy(v, ext_back, 16);
	assert_int_equal(extent_cut_front(v, 16, 100), -BCH_ERR_key_invalid);
}

/* ---- string hash (doc/format.md §5.6.2) ---- */

static void test_hash_vectors(void **state)
{
	struct bch_hash_info h;
	const uint64_t seed = 0x0706050403020100ULL;

	assert_int_equal(bch_hash_info_init(&h, 0, seed), 0);
	assert_true(bch_dirent_hash(&h, "a", 1) == 2546955001ULL);
	assert_true(bch_dirent_hash(&h, "lost+found", 10) == 3204184583ULL);
	assert_true(bch_xattr_hash(&h, 0, "a", 1) == 2346243803ULL);
	assert_true(bch_xattr_hash(&h, 0, "abcdefghij", 10) == 1109944076ULL);
	assert_true(bch_xattr_hash(&h, 1, "", 0) == 4127842715ULL);

	assert_int_equal(bch_hash_info_init(&h, 1, seed), 0);
	assert_true(bch_dirent_hash(&h, "a", 1) == 1741964002413174642ULL);
	assert_true(bch_dirent_hash(&h, "lost+found", 10) == 310791663930638107ULL);
	assert_true(bch_xattr_hash(&h, 0, "a", 1) == 7988194423131680422ULL);
	assert_true(bch_xattr_hash(&h, 0, "abcdefghij", 10) == 8024781509129902029ULL);
	assert_true(bch_xattr_hash(&h, 1, "", 0) == 1374524716710971914ULL);

	assert_int_equal(bch_hash_info_init(&h, 2, seed), 0);
	assert_true(bch_dirent_hash(&h, "a", 1) == 797670859205348146ULL);
	assert_true(bch_dirent_hash(&h, "lost+found", 10) == 4650005046689332853ULL);
	assert_true(bch_dirent_hash(&h, ".", 1) == 2068536111213727340ULL);
	assert_true(bch_xattr_hash(&h, 0, "a", 1) == 5786988919905601155ULL);
	assert_true(bch_xattr_hash(&h, 0, "abcdefghij", 10) == 2116366022931798396ULL);
	assert_true(bch_xattr_hash(&h, 1, "", 0) == 2066746128460213345ULL);

	assert_int_equal(bch_hash_info_init(&h, 3, seed), -EINVAL);
}

static void test_hash_on_disk(void **state)
{
	struct bch_hash_info h;

	/* seeds as stored bytes ba 7a 80 2d 9f 90 40 d0 / 49 a9 37 9d 13 c2 6c d6 */
	bch_hash_info_init(&h, 2, 0xd040909f2d807abaULL);
	assert_true(bch_dirent_hash(&h, "subdir", 6) == 1447031294012390040ULL);
	assert_true(bch_dirent_hash(&h, "link", 4) == 4442491862029501957ULL);
	assert_true(bch_dirent_hash(&h, "text64k", 7) == 5488238351337137705ULL);
	assert_true(bch_dirent_hash(&h, "xattrs", 6) == 7327190859251957949ULL);

	bch_hash_info_init(&h, 2, 0xd66cc2139d37a949ULL);
	assert_true(bch_xattr_hash(&h, 0, "a", 1) == 4439786221679284907ULL);
	assert_true(bch_xattr_hash(&h, 1, "", 0) == 5018151941361748979ULL);
	assert_true(bch_xattr_hash(&h, 3, "overlay.opaque", 14) == 6920823413743284796ULL);
	assert_true(bch_xattr_hash(&h, 0, "abcdefg", 7) == 7478594763845028443ULL);
	assert_true(bch_xattr_hash(&h, 4, "selinux", 7) == 8293176814083566058ULL);
	assert_true(bch_xattr_hash(&h, 0, "abcdefghij", 10) == 8529623607086787797ULL);
}

/* Garbage values of every type in every btree: never a crash or an overread (ASan). */
static void test_garbage(void **state)
{
	uint64_t rng = 0x243f6a8885a308d3ULL;
	struct printbuf out = PRINTBUF;
	struct bkey_print_ctx ctx = { .fs = &fake_fs, .max_len = 511 };
	unsigned i;

	for (i = 0; i < 30000; i++) {
		unsigned btree, level, type, bytes, j;
		uint8_t *v;
		struct bkey_ref k;
		struct json js;

		rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
		btree = rng % 7;
		level = (rng >> 8) % 3 == 0;
		type = (rng >> 16) % 4 ? 128 + (rng >> 20) % 4 : (rng >> 20) % 6;
		bytes = ((rng >> 24) % 12) * 8;
		v = bytes ? malloc(bytes) : NULL;
		for (j = 0; j < bytes; j++) {
			rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
			v[j] = (uint8_t)(rng % 5 ? rng : 0);
		}
		k = mk(type, rng >> 50, (rng >> 40) & 0xff, (rng >> 32) & 0xff, v, bytes);
		printbuf_reset(&out);
		bch_bkey_to_text(&out, btree, level, &k, &ctx);
		assert_true(out.pos <= 511);
		json_init(&js, &out, false);
		bch_bkey_to_json(&js, btree, level, &k, &ctx);
		bch_bkey_validate_fs(btree, level, &k, &fake_fs, &out);
		if (btree == BTREE_ID_EXTENTS && bytes) {
			extent_cut_front(v, bytes, 3);
			extent_can_merge(&k, &k, NULL, 0);
		}
		free(v);
	}
	printbuf_exit(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extent_lines),
		cmocka_unit_test(test_extent_cached_stale),
		cmocka_unit_test(test_extent_invalid),
		cmocka_unit_test(test_btree_ptr),
		cmocka_unit_test(test_inode_line),
		cmocka_unit_test(test_dirent_xattr_lines),
		cmocka_unit_test(test_other_lines),
		cmocka_unit_test(test_header_checks),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_cut_front),
		cmocka_unit_test(test_hash_vectors),
		cmocka_unit_test(test_hash_on_disk),
		cmocka_unit_test(test_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
