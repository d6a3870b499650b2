/*
 * Unit tests for libbcachefs/format.h: bit-field accessors and the
 * decoders, checked against the worked examples of the spec
 * (spec 10 §1.4, §3.5, doc/format.md §4.2, spec 20 §20.9, doc/format.md §1.4, §6.4;
 * doc/format.md §5.2.8, §7.5, §5.5.3, §5.6).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "format/ioctl.h"


/* Place a 16-byte hex line at byte offset off of buf */
static void put_line(uint8_t *buf, size_t off, const char *hex)
{
	uint8_t tmp[64];
	size_t n = hex2bin(hex, tmp, sizeof(tmp));

	memcpy(buf + off, tmp, n);
}

/* ---------------------------------------------------------------------- */
/* superblock flag accessors                                              */

struct sb_flag_desc {
	const char	*name;
	uint64_t	(*get)(const struct bch_sb *);
	void		(*set)(struct bch_sb *, uint64_t);
	unsigned	word, lo, hi;
};

#define F(n, w, l, h) { #n, n, SET_##n, w, l, h }

static const struct sb_flag_desc sb_flags[] = {
	F(BCH_SB_INITIALIZED,			0,  0,  1),
	F(BCH_SB_CLEAN,				0,  1,  2),
	F(BCH_SB_CSUM_TYPE,			0,  2,  8),
	F(BCH_SB_ERROR_ACTION,			0,  8, 12),
	F(BCH_SB_BTREE_NODE_SIZE,		0, 12, 28),
	F(BCH_SB_GC_RESERVE,			0, 28, 33),
	F(BCH_SB_ROOT_RESERVE,			0, 33, 40),
	F(BCH_SB_META_CSUM_TYPE,		0, 40, 44),
	F(BCH_SB_DATA_CSUM_TYPE,		0, 44, 48),
	F(BCH_SB_META_REPLICAS_WANT,		0, 48, 52),
	F(BCH_SB_DATA_REPLICAS_WANT,		0, 52, 56),
	F(BCH_SB_POSIX_ACL,			0, 56, 57),
	F(BCH_SB_USRQUOTA,			0, 57, 58),
	F(BCH_SB_GRPQUOTA,			0, 58, 59),
	F(BCH_SB_PRJQUOTA,			0, 59, 60),
	F(BCH_SB_STR_HASH_TYPE,			1,  0,  4),
	F(BCH_SB_COMPRESSION_TYPE,		1,  4,  8),
	F(BCH_SB_INODE_32BIT,			1,  8,  9),
	F(BCH_SB_128_BIT_MACS,			1,  9, 10),
	F(BCH_SB_ENCRYPTION_TYPE,		1, 10, 14),
	F(BCH_SB_ENCODED_EXTENT_MAX_BITS,	1, 14, 20),
	F(BCH_SB_META_REPLICAS_REQ,		1, 20, 24),
	F(BCH_SB_DATA_REPLICAS_REQ,		1, 24, 28),
	F(BCH_SB_PROMOTE_TARGET,		1, 28, 40),
	F(BCH_SB_FOREGROUND_TARGET,		1, 40, 52),
	F(BCH_SB_BACKGROUND_TARGET,		1, 52, 64),
	F(BCH_SB_BACKGROUND_COMPRESSION_TYPE,	2,  0,  4),
};

static uint64_t mask_of(unsigned lo, unsigned hi)
{
	return (hi - lo == 64 ? ~0ULL : ((1ULL << (hi - lo)) - 1)) << lo;
}

static void test_sb_flag_roundtrip(void **state)
{
	static const uint64_t patterns[] = {
		0, ~0ULL, 0x5555555555555555ULL, 0xa5c3f00f1e2d3c4bULL,
	};
	(void)state;

	for (size_t i = 0; i < sizeof(sb_flags) / sizeof(sb_flags[0]); i++) {
		const struct sb_flag_desc *d = &sb_flags[i];
		uint64_t m = mask_of(d->lo, d->hi);
		uint64_t fmax = m >> d->lo;

		for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++) {
			struct bch_sb sb;
			uint64_t before[8];
			const uint64_t vals[] = { 0, 1, fmax, fmax >> 1, 0x123456789abcdefULL & fmax };

			memset(&sb, 0, sizeof(sb));
			for (unsigned w = 0; w < 8; w++)
				sb.flags[w] = cpu_to_le64(patterns[p] ^ (w * 0x0101010101010101ULL));
			sb.block_size = cpu_to_le16(0xbeef);

			for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); v++) {
				memcpy(before, sb.flags, sizeof(before));

				d->set(&sb, vals[v]);
				if (d->get(&sb) != vals[v])
					fail_msg("%s: set %llu got %llu", d->name,
						 (unsigned long long)vals[v],
						 (unsigned long long)d->get(&sb));

				for (unsigned w = 0; w < 8; w++) {
					uint64_t keep = w == d->word ? ~m : ~0ULL;

					if ((le64_to_cpu(sb.flags[w]) & keep) !=
					    (le64_to_cpu(before[w]) & keep))
						fail_msg("%s: clobbered flags[%u]",
							 d->name, w);
				}
				assert_int_equal(le16_to_cpu(sb.block_size), 0xbeef);
			}

			/* values too large are truncated silently */
			if (d->hi - d->lo < 64) {
				d->set(&sb, fmax + 1);
				assert_int_equal(d->get(&sb), 0);
				d->set(&sb, (fmax + 1) | 3);
				assert_int_equal(d->get(&sb), 3 & fmax);
			}
		}
	}

	/* the _OFFSET / _BITS constants */
	assert_int_equal(BCH_SB_BTREE_NODE_SIZE_OFFSET, 12);
	assert_int_equal(BCH_SB_BTREE_NODE_SIZE_BITS, 16);
	assert_int_equal(BCH_BITMASK_MAX(BCH_SB_GC_RESERVE), 31);
	assert_int_equal(BCH_BITMASK_MAX(BCH_SB_BACKGROUND_TARGET), 4095);
}

/* ch. 10 §1.4: default 1 GiB format */
static void test_sb_flags_decode(void **state)
{
	struct bch_sb sb;
	(void)state;

	memset(&sb, 0, sizeof(sb));
	sb.flags[0] = cpu_to_le64(0x0111110080100104ULL);
	sb.flags[1] = cpu_to_le64(0x000000000111c002ULL);

	assert_int_equal(BCH_SB_INITIALIZED(&sb), 0);
	assert_int_equal(BCH_SB_CLEAN(&sb), 0);
	assert_int_equal(BCH_SB_CSUM_TYPE(&sb), BCH_CSUM_CRC32C_NONZERO);
	assert_int_equal(BCH_SB_ERROR_ACTION(&sb), BCH_ON_ERROR_RO);
	assert_int_equal(BCH_SB_BTREE_NODE_SIZE(&sb), 256);
	assert_int_equal(BCH_SB_GC_RESERVE(&sb), 8);
	assert_int_equal(BCH_SB_ROOT_RESERVE(&sb), 0);
	assert_int_equal(BCH_SB_META_CSUM_TYPE(&sb), BCH_CSUM_OPT_CRC32C);
	assert_int_equal(BCH_SB_DATA_CSUM_TYPE(&sb), BCH_CSUM_OPT_CRC32C);
	assert_int_equal(BCH_SB_META_REPLICAS_WANT(&sb), 1);
	assert_int_equal(BCH_SB_DATA_REPLICAS_WANT(&sb), 1);
	assert_int_equal(BCH_SB_POSIX_ACL(&sb), 1);
	assert_int_equal(BCH_SB_USRQUOTA(&sb), 0);

	assert_int_equal(BCH_SB_STR_HASH_TYPE(&sb), BCH_STR_HASH_SIPHASH);
	assert_int_equal(BCH_SB_COMPRESSION_TYPE(&sb), 0);
	assert_int_equal(BCH_SB_INODE_32BIT(&sb), 0);
	assert_int_equal(BCH_SB_128_BIT_MACS(&sb), 0);
	assert_int_equal(BCH_SB_ENCRYPTION_TYPE(&sb), 0);
	assert_int_equal(BCH_SB_ENCODED_EXTENT_MAX_BITS(&sb), 7);
	assert_int_equal(BCH_SB_META_REPLICAS_REQ(&sb), 1);
	assert_int_equal(BCH_SB_DATA_REPLICAS_REQ(&sb), 1);
	assert_int_equal(BCH_SB_PROMOTE_TARGET(&sb), 0);

	/* multi-device example */
	sb.flags[0] = cpu_to_le64(0x0122020080100208ULL);
	sb.flags[1] = cpu_to_le64(0x103101001111c012ULL);
	sb.flags[2] = cpu_to_le64(3);
	assert_int_equal(BCH_SB_CSUM_TYPE(&sb), 2);
	assert_int_equal(BCH_SB_ERROR_ACTION(&sb), BCH_ON_ERROR_PANIC);
	assert_int_equal(BCH_SB_META_CSUM_TYPE(&sb), 2);
	assert_int_equal(BCH_SB_DATA_CSUM_TYPE(&sb), 0);
	assert_int_equal(BCH_SB_META_REPLICAS_WANT(&sb), 2);
	assert_int_equal(BCH_SB_DATA_REPLICAS_WANT(&sb), 2);
	assert_int_equal(BCH_SB_COMPRESSION_TYPE(&sb), BCH_COMPRESSION_OPT_lz4);
	assert_int_equal(BCH_SB_PROMOTE_TARGET(&sb), 1);
	assert_int_equal(BCH_SB_FOREGROUND_TARGET(&sb), BCH_TARGET_GROUP_START + 0);
	assert_int_equal(BCH_SB_BACKGROUND_TARGET(&sb), BCH_TARGET_GROUP_START + 2);
	assert_int_equal(BCH_SB_META_REPLICAS_REQ(&sb), 1);
	assert_int_equal(BCH_SB_DATA_REPLICAS_REQ(&sb), 1);
	assert_int_equal(BCH_SB_ENCODED_EXTENT_MAX_BITS(&sb), 7);
	assert_int_equal(BCH_SB_BACKGROUND_COMPRESSION_TYPE(&sb), BCH_COMPRESSION_OPT_zstd);
	assert_int_equal(bch_compression_opt_to_type(BCH_COMPRESSION_OPT_zstd),
			 BCH_COMPRESSION_ZSTD);
	assert_int_equal(bch_compression_opt_to_type(BCH_COMPRESSION_OPT_lz4),
			 BCH_COMPRESSION_LZ4);
}

static void test_member_and_group_flags(void **state)
{
	struct bch_member m;
	struct bch_disk_group g;
	(void)state;

	memset(&m, 0, sizeof(m));
	m.flags[0] = cpu_to_le64(0x200e0000ULL);
	assert_int_equal(BCH_MEMBER_STATE(&m), BCH_MEMBER_STATE_RW);
	assert_int_equal(BCH_MEMBER_REPLACEMENT(&m), CACHE_REPLACEMENT_LRU);
	assert_int_equal(BCH_MEMBER_DISCARD(&m), 0);
	assert_int_equal(BCH_MEMBER_DATA_ALLOWED(&m),
			 (1 << BCH_DATA_JOURNAL) | (1 << BCH_DATA_BTREE) |
			 (1 << BCH_DATA_USER));
	assert_int_equal(BCH_MEMBER_GROUP(&m), 0);
	assert_int_equal(BCH_MEMBER_DURABILITY(&m), 2);
	assert_int_equal(bch_member_durability(&m), 1);

	/* vector B: --discard --durability=2 */
	m.flags[0] = cpu_to_le64(0x300e4000ULL);
	assert_int_equal(BCH_MEMBER_DISCARD(&m), 1);
	assert_int_equal(bch_member_durability(&m), 2);

	/* durability 4 -> field (4+1)&3 = 1 -> durability 0 */
	SET_BCH_MEMBER_DURABILITY(&m, 4 + 1);
	assert_int_equal(bch_member_durability(&m), 0);
	SET_BCH_MEMBER_DURABILITY(&m, 0);
	assert_int_equal(bch_member_durability(&m), 1);
	/* data_allowed=cached (bit 5) does not fit */
	SET_BCH_MEMBER_DATA_ALLOWED(&m, 1 << BCH_DATA_CACHED);
	assert_int_equal(BCH_MEMBER_DATA_ALLOWED(&m), 0);
	assert_int_equal(BCH_MEMBER_DISCARD(&m), 1);

	/* disk groups: ssd (0x3e) and ssd.fast (0x7e) */
	memset(&g, 0, sizeof(g));
	g.flags[0] = cpu_to_le64(0x7e);
	assert_int_equal(BCH_GROUP_DELETED(&g), 0);
	assert_int_equal(BCH_GROUP_DATA_ALLOWED(&g), 0x1f);
	assert_int_equal(BCH_GROUP_PARENT(&g), 1);
	SET_BCH_GROUP_PARENT(&g, 0);
	assert_int_equal(le64_to_cpu(g.flags[0]), 0x3e);
}

static void test_crypt_flags(void **state)
{
	struct bch_sb_field_crypt c;
	(void)state;

	memset(&c, 0, sizeof(c));
	SET_BCH_KDF_SCRYPT_N(&c, 14);
	SET_BCH_KDF_SCRYPT_R(&c, 3);
	SET_BCH_KDF_SCRYPT_P(&c, 4);
	assert_int_equal(le64_to_cpu(c.kdf_flags), 0x000000040003000EULL);
	assert_int_equal(BCH_CRYPT_KDF_TYPE(&c), BCH_KDF_SCRYPT);

	c.key.magic = cpu_to_le64(BCH_KEY_MAGIC);
	assert_memory_equal(&c.key.magic, "bch**key", 8);
	assert_false(bch_key_is_encrypted(&c.key));
}

/* ---------------------------------------------------------------------- */
/* full superblock, vector A (ch. 10 §3.5)                                */

static void test_sb_vector_a(void **state)
{
	uint64_t storage[1024 / 8];
	uint8_t *buf = (uint8_t *)storage;
	struct bch_sb *sb = (struct bch_sb *)storage;
	struct bch_sb_field *f;
	struct bch_sb_field_members *mf;
	const struct bch_member *m;
	static const uint8_t magic[16] = BCH_SB_MAGIC_BYTES;
	unsigned nfields = 0;
	(void)state;

	memset(storage, 0, sizeof(storage));
	put_line(buf, 0x000, "82 1c 18 3e 00 00 00 00 00 00 00 00 00 00 00 00");
	put_line(buf, 0x010, "09 00 00 00 00 00 00 00 c6 85 73 f6 4e 1a 45 ca");
	put_line(buf, 0x020, "82 65 f5 7f 48 ba 6d 81 1a 36 2f fc af 12 47 5a");
	put_line(buf, 0x030, "b5 e8 7d ef 37 10 b8 e8 98 92 b2 eb 3d e6 40 63");
	put_line(buf, 0x040, "92 d4 7a 6c 9c 91 db ae 00 00 00 00 00 00 00 00");
	put_line(buf, 0x060, "00 00 00 00 00 00 00 00 08 00 00 00 00 00 00 00");
	put_line(buf, 0x070, "00 00 00 00 00 00 00 00 08 00 00 01 08 00 00 00");
	put_line(buf, 0x080, "5d ce 1e 4a 8c ac ed 18 00 00 00 00 01 00 00 00");
	put_line(buf, 0x090, "04 01 10 80 00 11 11 01 02 c0 11 01 00 00 00 00");
	put_line(buf, 0x0f0, "c6 85 73 f6 4e 1a 45 ca 82 65 f5 7f 48 ba 6d 81");
	put_line(buf, 0x100, "00 07 02 00 00 00 00 00 08 00 00 00 00 00 00 00");
	put_line(buf, 0x110, "88 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	put_line(buf, 0x2f0, "08 00 00 00 01 00 00 00 27 0c 82 8a f0 6f 4f 3a");
	put_line(buf, 0x300, "91 c2 76 a1 94 4c b7 0c 00 20 00 00 00 00 00 00");
	put_line(buf, 0x310, "00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00");
	put_line(buf, 0x320, "00 00 0e 20 00 00 00 00 00 00 00 00 00 00 00 00");

	assert_int_equal(le64_to_cpu(sb->csum.lo), 0x3e181c82);
	assert_int_equal(le64_to_cpu(sb->version), BCH_SB_VERSION_CURRENT);
	assert_memory_equal(sb->magic.b, magic, 16);
	assert_memory_equal(sb->layout.magic.b, magic, 16);
	assert_int_equal(le64_to_cpu(sb->offset), BCH_SB_SECTOR);
	assert_int_equal(BCH_SB_BLOCK_SIZE(sb), 8);
	assert_int_equal(sb->dev_idx, 0);
	assert_int_equal(sb->nr_devices, 1);
	assert_int_equal(le32_to_cpu(sb->time_precision), 1);
	assert_int_equal(bch_sb_bytes(sb), 816);
	assert_int_equal(vstruct_bytes(sb), 816);
	assert_ptr_equal(vstruct_end(sb), buf + 816);
	assert_int_equal(BCH_SB_BTREE_NODE_SIZE(sb), 256);

	assert_int_equal(sb->layout.layout_type, 0);
	assert_int_equal(sb->layout.sb_max_size_bits, 7);
	assert_int_equal(sb->layout.nr_superblocks, 2);
	assert_int_equal(le64_to_cpu(sb->layout.sb_offset[0]), 8);
	assert_int_equal(le64_to_cpu(sb->layout.sb_offset[1]), 136);

	for_each_sb_field(f, sb)
		nfields++;
	assert_int_equal(nfields, 1);

	assert_null(bch_sb_field_get(sb, BCH_SB_FIELD_journal));
	f = bch_sb_field_get(sb, BCH_SB_FIELD_members);
	assert_non_null(f);
	assert_ptr_equal(f, buf + 752);
	mf = (struct bch_sb_field_members *)f;
	assert_int_equal(bch_sb_members_nr(mf), 1);

	m = &mf->members[0];
	assert_true(bch_member_exists(m));
	assert_int_equal(m->uuid.b[0], 0x27);
	assert_int_equal(le64_to_cpu(m->nbuckets), 8192);
	assert_int_equal(le16_to_cpu(m->first_bucket), 0);
	assert_int_equal(le16_to_cpu(m->bucket_size), 256);
	assert_int_equal(le64_to_cpu(m->last_mount), 0);
	assert_int_equal(le64_to_cpu(m->flags[0]), 0x200e0000);
}

/* magic derivations: doc/format.md §4.2, §1.4 */
static void test_magic(void **state)
{
	struct bch_sb sb;
	(void)state;

	memset(&sb, 0, sizeof(sb));
	hex2bin("66 97 ce ea 00 95 41 7e 90 54 bd b9 30 a6 d6 60", sb.uuid.b, 16);
	assert_int_equal(bch_bset_magic(&sb), 0xee52c97853509093ULL);

	hex2bin("7e c8 4c 54 44 80 45 fd 89 01 00 00 00 00 00 00", sb.uuid.b, 16);
	assert_int_equal(bch_jset_magic(&sb), 0xd917b585f72e984cULL);

	hex2bin("c9 dc d7 59 03 00 48 53 00 00 00 00 00 00 00 00", sb.uuid.b, 16);
	assert_int_equal(bch_jset_magic(&sb), 0x771a35c2fab58cfbULL);
}

/* ---------------------------------------------------------------------- */
/* extents                                                                */

static void test_extent_ptr(void **state)
{
	union bch_extent_entry e;
	struct bch_extent_ptr_unpacked u;
	struct bch_extent_ptr p;
	(void)state;

	/* doc/format.md §5.4: 01 40 0a 00 00 00 00 01 */
	hex2bin("01 40 0a 00 00 00 00 01", (uint8_t *)&e, 8);
	assert_int_equal(bch_extent_entry_type(&e), BCH_EXTENT_ENTRY_ptr);
	u = bch_extent_ptr_unpack(&e.ptr);
	assert_int_equal(u.offset, 41984);
	assert_int_equal(u.dev, 0);
	assert_int_equal(u.gen, 1);
	assert_false(u.cached);
	p = bch_extent_ptr_pack(&u);
	assert_memory_equal(&p, &e, 8);

	/* doc/format.md §7.5: 81 30 07 00 00 00 00 01 -> offset 29448 */
	hex2bin("81 30 07 00 00 00 00 01", (uint8_t *)&e, 8);
	u = bch_extent_ptr_unpack(&e.ptr);
	assert_int_equal(u.offset, 29448);
	assert_int_equal(u.gen, 1);

	/* doc/format.md §6.3: 21 00 05 00 .. -> offset 20482, gen 0 */
	hex2bin("21 00 05 00 00 00 00 00", (uint8_t *)&e, 8);
	u = bch_extent_ptr_unpack(&e.ptr);
	assert_int_equal(u.offset, 20482);
	assert_int_equal(u.gen, 0);

	/* cached bit, top of offset, dev */
	u.cached = true;
	u.offset = (1ULL << 44) - 1;
	u.dev = 0xab;
	u.gen = 0xcd;
	p = bch_extent_ptr_pack(&u);
	assert_int_equal(le64_to_cpu(p.w), 0xcdabfffffffffff3ULL);
	u = bch_extent_ptr_unpack(&p);
	assert_true(u.cached);
	assert_int_equal(u.offset, (1ULL << 44) - 1);
	assert_int_equal(u.dev, 0xab);

	/* invalid kinds */
	e.first_word = 0;
	assert_int_equal(bch_extent_entry_type(&e), -1);
	e.first_word = cpu_to_le64(0x10);
	assert_int_equal(bch_extent_entry_type(&e), -1);
}

static void test_extent_crc32(void **state)
{
	union bch_extent_entry e, e2;
	struct bch_extent_crc_unpacked c;
	(void)state;

	/* doc/format.md §5.2.8: front part */
	hex2bin("fe ff 00 05 df 82 4f ca", (uint8_t *)&e, 8);
	assert_int_equal(bch_extent_entry_type(&e), BCH_EXTENT_ENTRY_crc32);
	assert_int_equal(bch_extent_entry_u64s_of(BCH_EXTENT_ENTRY_crc32), 1);
	assert_true(bch_extent_crc_unpack(&e, &c));
	assert_int_equal(c.entry_type, BCH_EXTENT_ENTRY_crc32);
	assert_int_equal(c.compressed_size, 128);
	assert_int_equal(c.uncompressed_size, 128);
	assert_int_equal(c.offset, 0);
	assert_int_equal(c.nonce, 0);
	assert_int_equal(c.csum_type, BCH_CSUM_CRC32C);
	assert_int_equal(c.compression_type, BCH_COMPRESSION_NONE);
	assert_int_equal(c.csum_lo, 0xca4f82df);
	assert_int_equal(c.csum_hi, 0);
	assert_int_equal(bch_extent_crc_pick_type(&c), BCH_EXTENT_ENTRY_crc32);
	memset(&e2, 0xff, sizeof(e2));
	assert_int_equal(bch_extent_crc_pack(&e2, BCH_EXTENT_ENTRY_crc32, &c), 1);
	assert_memory_equal(&e2, &e, 8);

	/* back part: offset 40 */
	hex2bin("fe ff 28 05 df 82 4f ca", (uint8_t *)&e, 8);
	assert_true(bch_extent_crc_unpack(&e, &c));
	assert_int_equal(c.offset, 40);
	assert_int_equal(c.compressed_size, 128);

	/* new part: 1e 0e 00 05 dd 56 eb e3 -> sizes 8, csum e3eb56dd */
	hex2bin("1e 0e 00 05 dd 56 eb e3", (uint8_t *)&e, 8);
	assert_true(bch_extent_crc_unpack(&e, &c));
	assert_int_equal(c.compressed_size, 8);
	assert_int_equal(c.uncompressed_size, 8);
	assert_int_equal(c.csum_lo, 0xe3eb56dd);
	assert_int_equal(bch_extent_crc_pack(&e2, BCH_EXTENT_ENTRY_crc32, &c), 1);
	assert_memory_equal(&e2, &e, 8);

	/* does not fit: size 129 */
	c.uncompressed_size = 129;
	assert_int_equal(bch_extent_crc_pack(&e2, BCH_EXTENT_ENTRY_crc32, &c), 0);
	assert_int_equal(bch_extent_crc_pick_type(&c), BCH_EXTENT_ENTRY_crc64);
}

static void test_extent_crc64(void **state)
{
	uint8_t buf[24];
	union bch_extent_entry e = { 0 }, e2;
	struct bch_extent_crc_unpacked c;
	(void)state;

	/* doc/format.md §7.5: encrypted extent, 80-bit MAC */
	hex2bin("3c 70 00 00 00 03 96 81 44 64 07 23 80 5a 1a 77", buf, 16);
	memcpy(&e, buf, 16);
	assert_int_equal(bch_extent_entry_type(&e), BCH_EXTENT_ENTRY_crc64);
	assert_true(bch_extent_crc_unpack(&e, &c));
	assert_int_equal(c.compressed_size, 8);
	assert_int_equal(c.uncompressed_size, 8);
	assert_int_equal(c.offset, 0);
	assert_int_equal(c.nonce, 0);
	assert_int_equal(c.csum_type, BCH_CSUM_CHACHA20_POLY1305_80);
	assert_true(bch_csum_type_is_encryption(c.csum_type));
	assert_int_equal(c.compression_type, 0);
	assert_int_equal(c.csum_hi, 0x8196);
	assert_int_equal(c.csum_lo, 0x771a5a8023076444ULL);
	assert_int_equal(bch_extent_crc_pick_type(&c), BCH_EXTENT_ENTRY_crc64);

	memset(&e2, 0xff, sizeof(e2));
	assert_int_equal(bch_extent_crc_pack(&e2, BCH_EXTENT_ENTRY_crc64, &c), 2);
	assert_memory_equal(&e2, buf, 16);

	/* field round trip with every field at its maximum */
	c.compressed_size = 512;
	c.uncompressed_size = 512;
	c.offset = 511;
	c.nonce = 1023;
	c.csum_type = 15;
	c.compression_type = 15;
	c.csum_hi = 0xffff;
	c.csum_lo = ~0ULL;
	assert_int_equal(bch_extent_crc_pack(&e2, BCH_EXTENT_ENTRY_crc64, &c), 2);
	assert_int_equal(le64_to_cpu(e2.crc64.w), 0xfffffffffffffffcULL);
	c.nonce = 1024;
	assert_int_equal(bch_extent_crc_pack(&e2, BCH_EXTENT_ENTRY_crc64, &c), 0);
}

static void test_extent_crc128(void **state)
{
	uint8_t buf[24];
	union bch_extent_entry e, e2;
	struct bch_extent_crc_unpacked c, c2;
	(void)state;

	/* doc/format.md §7.5: wide MAC word 0 */
	memset(buf, 0, sizeof(buf));
	hex2bin("f8 07 fe 00 00 00 00 04", buf, 8);
	for (unsigned i = 0; i < 16; i++)
		buf[8 + i] = (uint8_t)(0x10 + i);
	memcpy(&e, buf, 24);
	assert_int_equal(bch_extent_entry_type(&e), BCH_EXTENT_ENTRY_crc128);
	assert_int_equal(bch_extent_entry_u64s_of(BCH_EXTENT_ENTRY_crc128), 3);
	assert_true(bch_extent_crc_unpack(&e, &c));
	assert_int_equal(c.compressed_size, 128);
	assert_int_equal(c.uncompressed_size, 128);
	assert_int_equal(c.offset, 0);
	assert_int_equal(c.nonce, 0);
	assert_int_equal(c.csum_type, BCH_CSUM_CHACHA20_POLY1305_128);
	assert_int_equal(c.compression_type, 0);
	assert_int_equal(c.csum_lo, 0x1716151413121110ULL);
	assert_int_equal(c.csum_hi, 0x1f1e1d1c1b1a1918ULL);
	assert_int_equal(bch_extent_crc_pick_type(&c), BCH_EXTENT_ENTRY_crc128);
	assert_int_equal(bch_extent_crc_pack(&e2, BCH_EXTENT_ENTRY_crc128, &c), 3);
	assert_memory_equal(&e2, buf, 24);

	/* maxima */
	c.compressed_size = 8192;
	c.uncompressed_size = 1;
	c.offset = 8191;
	c.nonce = 8191;
	c.csum_type = 6;
	c.compression_type = 4;
	assert_int_equal(bch_extent_crc_pack(&e2, BCH_EXTENT_ENTRY_crc128, &c), 3);
	assert_true(bch_extent_crc_unpack(&e2, &c2));
	assert_int_equal(c2.compressed_size, 8192);
	assert_int_equal(c2.uncompressed_size, 1);
	assert_int_equal(c2.offset, 8191);
	assert_int_equal(c2.nonce, 8191);
	assert_int_equal(c2.csum_type, 6);
	assert_int_equal(c2.compression_type, 4);

	/* no crc entry */
	c = bch_extent_crc_none(24);
	assert_int_equal(c.entry_type, -1);
	assert_int_equal(c.compressed_size, 24);
	assert_int_equal(c.uncompressed_size, 24);
	assert_int_equal(c.csum_type, 0);
}

/* ---------------------------------------------------------------------- */
/* keys, nodes, journal                                                    */

/* ch. 20 §20.9.1: jset btree_root entry with one unpacked key */
static void test_btree_root_entry(void **state)
{
	uint64_t storage[7];
	uint8_t *buf = (uint8_t *)storage;
	struct jset_entry *je = (struct jset_entry *)storage;
	struct bkey *k;
	struct bch_extent_ptr_unpacked u;
	(void)state;

	hex2bin("06 00 01 00 01 00 00 00"
		"06 01 80 00 00 00 00 00 00 00 00 00 00 00 00 00"
		"00 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff"
		"ff ff ff ff ff ff ff ff 01 40 0a 00 00 00 00 01",
		buf, sizeof(storage));

	assert_int_equal(le16_to_cpu(je->u64s), 6);
	assert_int_equal(je->btree_id, BTREE_ID_INODES);
	assert_int_equal(je->level, 0);
	assert_int_equal(je->type, BCH_JSET_ENTRY_btree_root);
	assert_int_equal(vstruct_bytes(je), 56);

	k = jset_entry_keys_start(je);
	assert_int_equal(k->u64s, 6);
	assert_int_equal(bkey_fmt((struct bkey_packed *)k), KEY_FORMAT_CURRENT);
	assert_false(bkey_needs_whiteout((struct bkey_packed *)k));
	assert_int_equal(k->type, BCH_BTREE_PTR);
	assert_true(bpos_disk_eq(k->p, POS_MAX));
	assert_int_equal(le32_to_cpu(k->size), 0);
	assert_int_equal(bkey_val_u64s(k), 1);
	assert_ptr_equal(bkey_next((struct bkey_packed *)k), jset_entry_keys_end(je));

	u = bch_extent_ptr_unpack(bkey_val(k));
	assert_int_equal(u.offset, 41984);
	assert_int_equal(u.gen, 1);

	assert_true(bpos_disk_cmp(POS(1, 0), POS(0, 5)) > 0);
	assert_true(bpos_disk_cmp(POS(1, 5), POS(1, 6)) < 0);
	assert_true(bpos_disk_cmp(POS_MIN, POS(0, 0)) == 0);
}

/* ch. 20 §20.9.3: first 160 bytes of a fresh inodes root */
static void test_btree_node_header(void **state)
{
	uint64_t storage[160 / 8];
	uint8_t *buf = (uint8_t *)storage;
	struct btree_node *bn = (struct btree_node *)storage;
	struct bch_extent_ptr_unpacked u;
	(void)state;

	memset(storage, 0, sizeof(storage));
	put_line(buf, 0x00, "3d ed 4c 38 00 00 00 00 00 00 00 00 00 00 00 00");
	put_line(buf, 0x10, "93 90 50 53 78 c9 52 ee 01 00 00 00 01 00 00 00");
	put_line(buf, 0x30, "00 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff");
	put_line(buf, 0x40, "ff ff ff ff ff ff ff ff 01 40 0a 00 00 00 00 01");
	put_line(buf, 0x50, "01 06 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	put_line(buf, 0x88, "f1 8a 0e 00 c6 77 4e dd");
	put_line(buf, 0x90, "00 00 00 00 00 00 00 00 01 00 00 00 03 00 00 00");

	assert_int_equal(le64_to_cpu(bn->csum.lo), 0x384ced3d);
	assert_int_equal(le64_to_cpu(bn->magic), 0xee52c97853509093ULL);
	assert_int_equal(BTREE_NODE_ID(bn), BTREE_ID_INODES);
	assert_int_equal(BTREE_NODE_LEVEL(bn), 0);
	assert_int_equal(BTREE_NODE_SEQ(bn), 1);
	assert_true(bpos_disk_eq(bn->min_key, POS_MIN));
	assert_true(bpos_disk_eq(bn->max_key, POS_MAX));
	u = bch_extent_ptr_unpack(&bn->ptr);
	assert_int_equal(u.offset, 41984);
	assert_int_equal(bn->format.key_u64s, 1);
	assert_int_equal(bn->format.nr_fields, BKEY_NR_FIELDS);
	assert_int_equal(le64_to_cpu(bn->keys.seq), 0xdd4e77c6000e8af1ULL);
	assert_int_equal(le64_to_cpu(bn->keys.journal_seq), 0);
	assert_int_equal(BSET_CSUM_TYPE(&bn->keys), BCH_CSUM_CRC32C_NONZERO);
	assert_int_equal(BSET_BIG_ENDIAN(&bn->keys), 0);
	assert_int_equal(BSET_SEPARATE_WHITEOUTS(&bn->keys), 0);
	assert_int_equal(le16_to_cpu(bn->keys.version), BCH_BSET_VERSION);
	assert_int_equal(le16_to_cpu(bn->keys.u64s), 0);
	assert_int_equal(btree_node_bytes(bn), 160);
	assert_ptr_equal(bset_start(&bn->keys), buf + 160);
	assert_ptr_equal(bset_end(&bn->keys), buf + 160);

	/* extents leaf bset flags 0x21: crc32c + separate whiteouts */
	bn->keys.flags = cpu_to_le32(0x21);
	assert_int_equal(BSET_CSUM_TYPE(&bn->keys), 1);
	assert_int_equal(BSET_SEPARATE_WHITEOUTS(&bn->keys), 1);

	/* node flags of an interior root: 11 00 .. = id 1, level 1 */
	bn->flags = cpu_to_le64(0x11);
	assert_int_equal(BTREE_NODE_ID(bn), 1);
	assert_int_equal(BTREE_NODE_LEVEL(bn), 1);
	SET_BTREE_NODE_SEQ(bn, 0xffffffffULL);
	assert_int_equal(le64_to_cpu(bn->flags), 0xffffffff00000011ULL);
}

/* ch. 20 §20.9.2 (a), (g): packed key headers */
static void test_packed_key(void **state)
{
	uint64_t storage[8];
	struct bkey_packed *k = (struct bkey_packed *)storage;
	struct bkey_format f;
	(void)state;

	hex2bin("01 06 08 10 00 10 00 00 00 10 00 00 00 00 00 00",
		(uint8_t *)&f, 16);
	memset((uint8_t *)&f + 16, 0, sizeof(f) - 16);
	assert_int_equal(f.key_u64s, 1);
	assert_int_equal(f.bits_per_field[BKEY_FIELD_INODE], 8);
	assert_int_equal(f.bits_per_field[BKEY_FIELD_OFFSET], 16);
	assert_int_equal(f.bits_per_field[BKEY_FIELD_SIZE], 16);
	assert_int_equal(le64_to_cpu(f.field_offset[BKEY_FIELD_INODE]), 4096);

	memset(storage, 0, sizeof(storage));
	hex2bin("03 00 80 10 00 e8 03 04", (uint8_t *)storage, 8);
	assert_int_equal(k->u64s, 3);
	assert_true(bkey_is_packed(k));
	assert_int_equal(k->type, BCH_EXTENT);
	assert_int_equal(bkeyp_key_u64s(&f, k), 1);
	assert_int_equal(bkeyp_val_u64s(&f, k), 2);
	assert_ptr_equal(bkeyp_val(&f, k), &storage[1]);
	assert_ptr_equal(bkey_next(k), &storage[3]);
	/* packed bits: inode 4100-4096 in the top byte */
	assert_int_equal(le64_to_cpu(storage[0]) >> 56, 4);
	assert_int_equal((le64_to_cpu(storage[0]) >> 40) & 0xffff, 1000);

	bkey_set_fmt(k, KEY_FORMAT_CURRENT, true);
	assert_int_equal(k->fmt, 0x81);
	assert_int_equal(bkey_fmt(k), KEY_FORMAT_CURRENT);
	assert_true(bkey_needs_whiteout(k));

	f = BKEY_FORMAT_CURRENT;
	assert_int_equal(f.key_u64s, 5);
	assert_int_equal(f.nr_fields, 6);
	assert_int_equal(f.bits_per_field[BKEY_FIELD_VERSION_HI], 32);
	assert_int_equal(f.bits_per_field[BKEY_FIELD_VERSION_LO], 64);
	assert_int_equal(BKEY_U64s, 5);
	assert_int_equal(BKEY_EXTENT_VAL_U64s_MAX, 20);
	assert_int_equal(BKEY_BTREE_PTR_U64s_MAX, 9);
}

/* ch. 30 §1.6 vector C: jset header */
static void test_jset_header(void **state)
{
	uint64_t storage[168 / 8];
	uint8_t *buf = (uint8_t *)storage;
	struct jset *j = (struct jset *)storage;
	struct jset_entry *e;
	unsigned n = 0;
	(void)state;

	memset(storage, 0, sizeof(storage));
	hex2bin("479cf7f0 00000000 00000000 00000000"
		"4c982ef7 85b517d9 03000000 00000000"
		"02000000 01000000 0e000000 01000100"
		"03000000 00000000 06000100 01000000"
		"06018000 00000000 00000000 00000000"
		"00000000 00000000 ffffffff ffffffff"
		"ffffffff ffffffff 01400300 00000001"
		"06000400 01000000 06018000 00000000"
		"00000000 00000000 00000000 00000000"
		"ffffffff ffffffff ffffffff ffffffff"
		"01c80000 00000001", buf, sizeof(storage));

	assert_int_equal(le64_to_cpu(j->csum.lo), 0xf0f79c47);
	assert_int_equal(le64_to_cpu(j->magic), 0xd917b585f72e984cULL);
	assert_int_equal(le64_to_cpu(j->seq), 3);
	assert_int_equal(le32_to_cpu(j->version), BCH_JSET_VERSION);
	assert_int_equal(JSET_CSUM_TYPE(j), BCH_CSUM_CRC32C_NONZERO);
	assert_int_equal(JSET_BIG_ENDIAN(j), 0);
	assert_int_equal(le32_to_cpu(j->u64s), 14);
	assert_int_equal(le16_to_cpu(j->read_clock), 1);
	assert_int_equal(le16_to_cpu(j->write_clock), 1);
	assert_int_equal(le64_to_cpu(j->last_seq), 3);
	assert_int_equal(jset_bytes(j), 168);
	assert_int_equal(vstruct_bytes(j), 168);
	assert_int_equal(vstruct_bytes_rounded(j, 4096), 4096);

	for (e = jset_entries_start(j); e < jset_entries_end(j); e = jset_entry_next(e)) {
		struct bkey *k = jset_entry_keys_start(e);

		assert_int_equal(e->type, BCH_JSET_ENTRY_btree_root);
		assert_int_equal(k->u64s, le16_to_cpu(e->u64s));
		assert_int_equal(k->type, BCH_BTREE_PTR);
		n++;
	}
	assert_int_equal(n, 2);
	assert_ptr_equal(e, buf + 168);
}

/* ---------------------------------------------------------------------- */
/* values                                                                  */

static void test_inode_value(void **state)
{
	uint64_t storage[8];
	struct bch_inode *bi = (struct bch_inode *)storage;
	(void)state;

	/* doc/format.md §5.5.3: root directory */
	memset(storage, 0, sizeof(storage));
	hex2bin("b0 1e 14 96 06 b6 d2 f2 00 00 20 09 ed 41"
		"02 00 e7 12 56 1d 4c 85 9d eb", (uint8_t *)storage, sizeof(storage));
	assert_int_equal(INODE_NR_FIELDS(bi), 9);
	assert_int_equal(INODE_STR_HASH(bi), BCH_STR_HASH_SIPHASH);
	assert_int_equal(le32_to_cpu(bi->bi_flags) & 0xff, 0);
	assert_int_equal(le16_to_cpu(bi->bi_mode), 040755);
	assert_int_equal(bi->fields[0], 0x02);
	assert_int_equal(bch_inode_varint_bytes(bi->fields[0]), 10);

	assert_int_equal(bch_inode_varint_bytes(0x80), 1);
	assert_int_equal(bch_inode_varint_bytes(0xbf), 1);
	assert_int_equal(bch_inode_varint_bytes(0x40), 2);
	assert_int_equal(bch_inode_varint_bytes(0x20), 3);
	assert_int_equal(bch_inode_varint_bytes(0x10), 4);
	assert_int_equal(bch_inode_varint_bytes(0x08), 6);
	assert_int_equal(bch_inode_varint_bytes(0x04), 8);
	assert_int_equal(bch_inode_varint_bytes(0x02), 10);
	assert_int_equal(bch_inode_varint_bytes(0x01), 13);
	assert_int_equal(bch_inode_varint_bytes(0x00), 0);

	SET_INODE_NR_FIELDS(bi, BCH_INODE_NR_FIELDS);
	assert_int_equal(INODE_NR_FIELDS(bi), 19);
	assert_int_equal(INODE_STR_HASH(bi), BCH_STR_HASH_SIPHASH);
	assert_int_equal(BCH_INODE_FIELD_bi_nlink, 8);
	assert_int_equal(BCH_INODE_FIELD_bi_background_target, 18);

	/* field widths through the X-macro */
	{
		static const unsigned widths[] = {
#define x(n, b) b,
			BCH_INODE_FIELDS(x)
#undef x
		};
		assert_int_equal(sizeof(widths) / sizeof(widths[0]), 19);
		assert_int_equal(widths[BCH_INODE_FIELD_bi_dev], 32);
		assert_int_equal(widths[BCH_INODE_FIELD_bi_compression], 8);
		assert_int_equal(widths[BCH_INODE_FIELD_bi_promote_target], 16);
	}
}

static void test_dirent_xattr(void **state)
{
	uint64_t storage[4];
	struct bch_dirent *d = (struct bch_dirent *)storage;
	struct bch_xattr *x = (struct bch_xattr *)storage;
	(void)state;

	/* doc/format.md §5.6.1: subdir -> 4097 */
	memset(storage, 0, sizeof(storage));
	hex2bin("01 10 00 00 00 00 00 00 04 73 75 62 64 69 72",
		(uint8_t *)storage, sizeof(storage));
	assert_int_equal(le64_to_cpu(d->d_inum), 4097);
	assert_int_equal(d->d_type, BCH_DT_DIR);
	assert_int_equal(bch_dirent_val_u64s(6), 3);
	assert_int_equal(bch_dirent_name_len(d, 24), 6);
	assert_memory_equal(d->d_name, "subdir", 6);

	/* doc/format.md §5.7: user.abcdefghij = "ten" */
	memset(storage, 0, sizeof(storage));
	hex2bin("00 0a 03 00 61 62 63 64 65 66 67 68 69 6a 74 65 6e",
		(uint8_t *)storage, sizeof(storage));
	assert_int_equal(x->x_type, BCH_XATTR_INDEX_USER);
	assert_int_equal(x->x_name_len, 10);
	assert_int_equal(le16_to_cpu(x->x_val_len), 3);
	assert_memory_equal(bch_xattr_val(x), "ten", 3);
	assert_int_equal(bch_xattr_val_u64s(10, 3), 3);
}

static void test_alloc_replicas(void **state)
{
	uint64_t storage[3];
	uint8_t *buf = (uint8_t *)storage;
	struct bch_sb_field_replicas *r = (struct bch_sb_field_replicas *)storage;
	struct bch_replicas_entry *e;
	struct bch_alloc a = { 0, 1 };
	(void)state;

	assert_int_equal(bch_alloc_val_u64s(&a), 1);
	a.fields = 3;
	assert_int_equal(bch_alloc_val_u64s(&a), 1);

	/* doc/format.md §2.9 */
	hex2bin("03 00 00 00 03 00 00 00 03 01 00 02 01 00 00 00"
		"00 00 00 00 00 00 00 00", buf, sizeof(storage));
	assert_int_equal(le32_to_cpu(r->field.type), BCH_SB_FIELD_replicas);
	assert_int_equal(bch_sb_field_bytes(&r->field), 24);
	e = (struct bch_replicas_entry *)r->entries;
	assert_int_equal(e->data_type, BCH_DATA_BTREE);
	assert_int_equal(e->nr, 1);
	assert_int_equal(e->devs[0], 0);
	e = (struct bch_replicas_entry *)((uint8_t *)e + bch_replicas_entry_bytes(e));
	assert_int_equal(e->data_type, BCH_DATA_JOURNAL);
	assert_int_equal(e->nr, 1);
	e = (struct bch_replicas_entry *)((uint8_t *)e + bch_replicas_entry_bytes(e));
	assert_int_equal(e->data_type, BCH_DATA_NONE);
}

static void test_misc_constants(void **state)
{
	(void)state;

	assert_int_equal(bch_csum_type_bytes(BCH_CSUM_NONE), 0);
	assert_int_equal(bch_csum_type_bytes(BCH_CSUM_CRC32C_NONZERO), 4);
	assert_int_equal(bch_csum_type_bytes(BCH_CSUM_CRC64_NONZERO), 8);
	assert_int_equal(bch_csum_type_bytes(BCH_CSUM_CHACHA20_POLY1305_80), 10);
	assert_int_equal(bch_csum_type_bytes(BCH_CSUM_CHACHA20_POLY1305_128), 16);
	assert_int_equal(bch_csum_type_bytes(BCH_CSUM_CRC32C), 4);
	assert_int_equal(bch_csum_type_bytes(BCH_CSUM_CRC64), 8);
	assert_int_equal(bch_csum_type_bytes(BCH_CSUM_NR), 0);

	assert_int_equal(BCH_SB_FIELD_disk_groups, 5);
	assert_int_equal(BTREE_ID_QUOTAS, 5);
	assert_int_equal(BKEY_TYPE_BTREE, 6);
	assert_int_equal(BCH_JSET_ENTRY_blacklist_v2, 4);
	assert_int_equal(BCH_DATA_CACHED, 5);
	assert_int_equal(BCH_MEMBER_STATE_SPARE, 3);
	assert_int_equal(le16_to_cpu(cpu_to_le16(0x1234)), 0x1234);
	assert_int_equal(get_le64_unaligned("\x01\x02\x03\x04\x05\x06\x07\x08"),
			 0x0807060504030201ULL);
}

static void test_ioctl(void **state)
{
	struct bch_ioctl_data_v2 d2;
	struct bch_ioctl_data d1;
	(void)state;

	/* the two DATA layouts share their first 56 bytes */
	memset(&d2, 0, sizeof(d2));
	d2.op = BCH_DATA_OP_MIGRATE;
	d2.start = POS_MIN;
	d2.end = POS_MAX;
	d2.migrate.dev = 3;
	memcpy(&d1, &d2, sizeof(d1));
	assert_int_equal(d1.op, BCH_DATA_OP_MIGRATE);
	assert_int_equal(d1.migrate.dev, 3);
	assert_true(bpos_disk_eq(d1.end, POS_MAX));
	assert_int_not_equal(BCH_IOCTL_DATA, BCH_IOCTL_DATA_V2);
	assert_int_equal(_IOC_NR(BCH_IOCTL_DATA), _IOC_NR(BCH_IOCTL_DATA_V2));
	assert_int_not_equal(BCH_IOCTL_DISK_GET_IDX, BCH_IOCTL_DISK_RESIZE);
	assert_int_equal(BCH_FORCE_IF_DEGRADED, 0x0c);

	/* glibc makedev(7, 200) and makedev(1, 3) */
	assert_int_equal(bch_huge_encode_dev(7, 200), 1992);
	assert_int_equal(bch_huge_encode_dev(1, 3), 0x103);
	assert_int_equal(bch_huge_encode_dev(8, 0x12345), 0x12300845);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sb_flag_roundtrip),
		cmocka_unit_test(test_sb_flags_decode),
		cmocka_unit_test(test_member_and_group_flags),
		cmocka_unit_test(test_crypt_flags),
		cmocka_unit_test(test_sb_vector_a),
		cmocka_unit_test(test_magic),
		cmocka_unit_test(test_extent_ptr),
		cmocka_unit_test(test_extent_crc32),
		cmocka_unit_test(test_extent_crc64),
		cmocka_unit_test(test_extent_crc128),
		cmocka_unit_test(test_btree_root_entry),
		cmocka_unit_test(test_btree_node_header),
		cmocka_unit_test(test_packed_key),
		cmocka_unit_test(test_jset_header),
		cmocka_unit_test(test_inode_value),
		cmocka_unit_test(test_dirent_xattr),
		cmocka_unit_test(test_alloc_replicas),
		cmocka_unit_test(test_misc_constants),
		cmocka_unit_test(test_ioctl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
