/*
 * Unit tests for libbcachefs/super.c and fs.c: validation rules (a valid
 * superblock built in memory, then one field broken at a time), copy checks
 * (magic, version, size, checksum), the writer (round trip, backups), and
 * bch_fs_open() on small files (membership, duplicates, missing devices,
 * degraded) and on golden images when tests/golden is reachable.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec/checksum.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "format/format.h"
#include "fs/fs.h"
#include "dev/super.h"
#include "dev/sb_print.h"
#include "util/util.h"

#define SB_MAX_BYTES	8192
#define DEV_BYTES	(64ULL << 20)	/* 64 MiB test devices */
#define BUCKET_SECTORS	64		/* 32 KiB buckets: 2048 of them */

static char tmpdir[64];

/* ---- building superblocks ----------------------------------------------- */

struct sbuf {
	_Alignas(8) uint8_t	b[SB_MAX_BYTES];
};

#define S(_s)	((struct bch_sb *)(void *)(_s)->b)

static const uint8_t magic[16] = BCH_SB_MAGIC_BYTES;

static void *sb_add_field(struct bch_sb *sb, unsigned type, unsigned u64s)
{
	struct bch_sb_field *f = (void *)((uint8_t *)sb + bch_sb_bytes(sb));

	assert_true(bch_sb_bytes(sb) + u64s * 8 <= SB_MAX_BYTES);
	memset(f, 0, u64s * 8);
	f->u64s = cpu_to_le32(u64s);
	f->type = cpu_to_le32(type);
	sb->u64s = cpu_to_le32(le32_to_cpu(sb->u64s) + u64s);
	return f;
}

static void sb_fix_csum(struct bch_sb *sb)
{
	struct bch_csum_val v;

	assert_int_equal(bch_sb_csum(sb, &v), 0);
	bch_csum_to_bytes(v, &sb->csum);
}

/* A valid version 9 superblock with @nr members (no journal/replicas). */
static void make_sb(struct sbuf *s, unsigned nr, uint8_t uuid_seed)
{
	struct bch_sb *sb = S(s);
	struct bch_sb_field_members *m;
	unsigned i;

	memset(s, 0, sizeof(*s));
	sb->version = cpu_to_le64(9);
	memcpy(sb->magic.b, magic, 16);
	memset(sb->uuid.b, uuid_seed, 16);
	memset(sb->user_uuid.b, uuid_seed + 1, 16);
	memcpy(sb->label, "test", 4);
	sb->offset = cpu_to_le64(8);
	sb->block_size = cpu_to_le16(8);
	sb->nr_devices = nr;
	sb->time_precision = cpu_to_le32(1);
	SET_BCH_SB_CSUM_TYPE(sb, 1);
	SET_BCH_SB_ERROR_ACTION(sb, 1);
	SET_BCH_SB_BTREE_NODE_SIZE(sb, 32);
	SET_BCH_SB_GC_RESERVE(sb, 8);
	SET_BCH_SB_META_CSUM_TYPE(sb, 1);
	SET_BCH_SB_DATA_CSUM_TYPE(sb, 1);
	SET_BCH_SB_META_REPLICAS_WANT(sb, 1);
	SET_BCH_SB_DATA_REPLICAS_WANT(sb, 1);
	SET_BCH_SB_META_REPLICAS_REQ(sb, 1);
	SET_BCH_SB_DATA_REPLICAS_REQ(sb, 1);
	SET_BCH_SB_STR_HASH_TYPE(sb, 2);
	SET_BCH_SB_ENCODED_EXTENT_MAX_BITS(sb, 7);
	memcpy(sb->layout.magic.b, magic, 16);
	sb->layout.sb_max_size_bits = 7;
	sb->layout.nr_superblocks = 2;
	sb->layout.sb_offset[0] = cpu_to_le64(8);
	sb->layout.sb_offset[1] = cpu_to_le64(136);

	m = sb_add_field(sb, BCH_SB_FIELD_members, 1 + 7 * nr);
	for (i = 0; i < nr; i++) {
		memset(m->members[i].uuid.b, 0x40 + i, 16);
		m->members[i].nbuckets = cpu_to_le64(DEV_BYTES / 512 / BUCKET_SECTORS);
		m->members[i].bucket_size = cpu_to_le16(BUCKET_SECTORS);
		SET_BCH_MEMBER_DATA_ALLOWED(&m->members[i], 0x1c);
		SET_BCH_MEMBER_DURABILITY(&m->members[i], 2);
	}
	sb_fix_csum(sb);
}

static struct bch_member *member(struct bch_sb *sb, unsigned i)
{
	return (struct bch_member *)bch_sb_member(sb, i);
}

/* Validate and expect @want with @substr in the message. */
static void expect_invalid(struct bch_sb *sb, int want, const char *substr)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_sb_validate(sb, &err);

	if (ret != want || !strstr(printbuf_str(&err), substr))
		fail_msg("want %d '%s', got %d '%s'", want, substr, ret, printbuf_str(&err));
	printbuf_exit(&err);
}

static void expect_valid(struct bch_sb *sb)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_sb_validate(sb, &err);

	if (ret)
		fail_msg("unexpected: %s", printbuf_str(&err));
	printbuf_exit(&err);
}

/* ---- validation: fixed part ---------------------------------------------- */

static void test_valid(void **state)
{
	struct sbuf s;

	make_sb(&s, 1, 0x11);
	expect_valid(S(&s));
	make_sb(&s, 3, 0x11);
	expect_valid(S(&s));
}

static void test_fixed_part(void **state)
{
	struct sbuf s;

#define BREAK(stmt, substr)				\
	do {						\
		make_sb(&s, 2, 0x11);			\
		stmt;					\
		expect_invalid(S(&s), -BCH_ERR_sb_invalid, substr); \
	} while (0)

	BREAK(S(&s)->version = cpu_to_le64(6), "unsupported version 6");
	BREAK(S(&s)->version = cpu_to_le64(10), "unsupported version 10");
	BREAK(S(&s)->block_size = cpu_to_le16(3), "block size 3");
	BREAK(S(&s)->block_size = cpu_to_le16(16), "block size 16");
	BREAK(S(&s)->block_size = 0, "block size 0");
	BREAK(memset(S(&s)->user_uuid.b, 0, 16), "external (user) UUID is zero");
	BREAK(memset(S(&s)->uuid.b, 0, 16), "internal UUID is zero");
	BREAK(S(&s)->nr_devices = 0, "nr_devices 0");
	BREAK(S(&s)->nr_devices = 65, "nr_devices 65");
	BREAK(S(&s)->dev_idx = 2, "dev_idx 2");
	BREAK(SET_BCH_SB_META_REPLICAS_WANT(S(&s), 0), "metadata_replicas is 0");
	BREAK(SET_BCH_SB_META_REPLICAS_WANT(S(&s), 4), "metadata_replicas is 4");
	BREAK(SET_BCH_SB_META_REPLICAS_REQ(S(&s), 0), "metadata_replicas_required is 0");
	BREAK(SET_BCH_SB_DATA_REPLICAS_WANT(S(&s), 5), "data_replicas is 5");
	BREAK(SET_BCH_SB_DATA_REPLICAS_REQ(S(&s), 0), "data_replicas_required is 0");
	BREAK(SET_BCH_SB_META_CSUM_TYPE(S(&s), 3), "metadata checksum type 3");
	BREAK(SET_BCH_SB_DATA_CSUM_TYPE(S(&s), 7), "data checksum type 7");
	BREAK(SET_BCH_SB_COMPRESSION_TYPE(S(&s), 4), "compression type 4");
	BREAK(SET_BCH_SB_BTREE_NODE_SIZE(S(&s), 0), "btree node size not set");
	BREAK(SET_BCH_SB_BTREE_NODE_SIZE(S(&s), 24), "not a power of two");
	BREAK(SET_BCH_SB_GC_RESERVE(S(&s), 4), "gc reserve 4%");
	BREAK(S(&s)->time_precision = 0, "time precision 0");
	BREAK(S(&s)->time_precision = cpu_to_le32(1000000001), "time precision 1000000001");
#undef BREAK
}

static void test_layout(void **state)
{
	struct sbuf s;

#define BREAK(stmt, substr)				\
	do {						\
		make_sb(&s, 1, 0x11);			\
		stmt;					\
		expect_invalid(S(&s), -BCH_ERR_sb_layout_invalid, substr); \
	} while (0)

	BREAK(S(&s)->layout.magic.b[3] ^= 1, "bad magic");
	BREAK(S(&s)->layout.layout_type = 1, "layout type 1");
	BREAK(S(&s)->layout.nr_superblocks = 0, "number of superblocks 0");
	BREAK(S(&s)->layout.nr_superblocks = 62, "number of superblocks 62");
	BREAK(S(&s)->layout.sb_offset[1] = cpu_to_le64(100), "overlap");
	BREAK(S(&s)->layout.sb_offset[1] = cpu_to_le64(4), "overlap");
	BREAK(S(&s)->layout.sb_max_size_bits = 200, "size bits 200");
#undef BREAK
}

/* ---- validation: fields -------------------------------------------------- */

static void test_field_list(void **state)
{
	struct sbuf s;
	struct bch_sb_field *f;

	make_sb(&s, 1, 0x11);
	f = sb_add_field(S(&s), 7, 2);
	expect_valid(S(&s));		/* unknown types are carried along */
	f->u64s = 0;
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "has size 0");
	f->u64s = cpu_to_le32(3);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "overrun the field area");
	f->u64s = cpu_to_le32(0x40000000);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "overrun the field area");
	assert_false(bch_sb_fields_ok(S(&s)));
	assert_null(bch_sb_field_find(S(&s), 7));
	assert_non_null(bch_sb_field_find(S(&s), BCH_SB_FIELD_members));
}

static void test_members(void **state)
{
	struct sbuf s;

	make_sb(&s, 2, 0x11);
	S(&s)->nr_devices = 3;
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "members field holds 2 entries, nr_devices is 3");

	make_sb(&s, 2, 0x11);
	bch_sb_fields_start(S(&s))->type = cpu_to_le32(9);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "members field missing");

	make_sb(&s, 2, 0x11);
	member(S(&s), 1)->nbuckets = cpu_to_le64(1023);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "device 1: not enough buckets: nbuckets 1023");

	make_sb(&s, 2, 0x11);
	member(S(&s), 0)->first_bucket = cpu_to_le16(1500);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "first_bucket 1500");

	make_sb(&s, 2, 0x11);
	member(S(&s), 0)->nbuckets = cpu_to_le64(1ULL << 63);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "too many buckets");

	make_sb(&s, 2, 0x11);
	member(S(&s), 0)->nbuckets = cpu_to_le64(1ULL << 60);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "overflows");

	make_sb(&s, 2, 0x11);
	member(S(&s), 1)->bucket_size = cpu_to_le16(4);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "bucket size 4 sectors smaller than block size 8");

	make_sb(&s, 2, 0x11);
	member(S(&s), 1)->bucket_size = cpu_to_le16(16);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "smaller than btree node size 32");

	/* a removed member (zero uuid) is not checked */
	make_sb(&s, 2, 0x11);
	memset(member(S(&s), 1)->uuid.b, 0, 16);
	member(S(&s), 1)->nbuckets = 0;
	expect_valid(S(&s));
	assert_int_equal(bch_sb_nr_live_members(S(&s)), 1);
	assert_false(bch_sb_member_exists(S(&s), 1));
	assert_false(bch_sb_member_exists(S(&s), 2));
	assert_null(bch_sb_member(S(&s), 5));
}

static struct bch_sb_field_journal *add_journal(struct sbuf *s, const uint64_t *b, unsigned nr)
{
	struct bch_sb_field_journal *j = sb_add_field(S(s), BCH_SB_FIELD_journal, 1 + nr);
	unsigned i;

	for (i = 0; i < nr; i++)
		j->buckets[i] = cpu_to_le64(b[i]);
	return j;
}

static void test_journal(void **state)
{
	static const uint64_t good[] = { 11, 9, 10, 2047 };
	uint64_t b[4];
	struct sbuf s;

	make_sb(&s, 1, 0x11);
	add_journal(&s, good, 4);
	expect_valid(S(&s));
	assert_int_equal(bch_sb_journal_nr_buckets(S(&s)), 4);
	assert_int_equal(bch_sb_journal_bucket(S(&s), 1), 9);
	assert_int_equal(bch_sb_journal_bucket(S(&s), 4), 0);

#define BREAK(v0, v1, substr)					\
	do {							\
		make_sb(&s, 1, 0x11);				\
		memcpy(b, good, sizeof(b));			\
		b[0] = v0; b[1] = v1;				\
		add_journal(&s, b, 4);				\
		expect_invalid(S(&s), -BCH_ERR_sb_invalid, substr); \
	} while (0)

	BREAK(0, 9, "bucket 0");
	BREAK(10, 9, "listed twice");
	BREAK(2048, 9, "bucket 2048 past the end of the device (2048 buckets)");
	/* bucket 3 = sectors 192-255: inside the backup superblock 136-263 */
	BREAK(3, 9, "bucket 3 (sectors 192-255) overlaps the superblock area");
#undef BREAK

	make_sb(&s, 1, 0x11);
	member(S(&s), 0)->first_bucket = cpu_to_le16(10);
	add_journal(&s, good, 4);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "bucket 9 before the first bucket 10");

	/* only this device's member is checked: dev_idx 1 */
	make_sb(&s, 2, 0x11);
	S(&s)->dev_idx = 1;
	member(S(&s), 1)->nbuckets = cpu_to_le64(2000);
	add_journal(&s, good, 4);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "past the end of the device (2000 buckets)");
}

static void test_crypt_quota(void **state)
{
	struct sbuf s;
	struct bch_sb_field_crypt *c;

	make_sb(&s, 1, 0x11);
	c = sb_add_field(S(&s), BCH_SB_FIELD_crypt, 8);
	expect_valid(S(&s));
	assert_non_null(bch_sb_crypt(S(&s)));
	SET_BCH_CRYPT_KDF_TYPE(c, 1);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "crypt: kdf type 1");

	make_sb(&s, 1, 0x11);
	sb_add_field(S(&s), BCH_SB_FIELD_crypt, 7);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "crypt: size 56 bytes (must be 64)");
	assert_null(bch_sb_crypt(S(&s)));

	make_sb(&s, 1, 0x11);
	sb_add_field(S(&s), BCH_SB_FIELD_quota, 10);
	expect_valid(S(&s));
	make_sb(&s, 1, 0x11);
	sb_add_field(S(&s), BCH_SB_FIELD_quota, 11);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "quota: size 88 bytes (must be 80)");

	/* v8 + crypt + initialized: incompatible extent nonces */
	make_sb(&s, 1, 0x11);
	sb_add_field(S(&s), BCH_SB_FIELD_crypt, 8);
	S(&s)->version = cpu_to_le64(8);
	SET_BCH_SB_INITIALIZED(S(&s), 1);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "incompatible extent nonces");
	SET_BCH_SB_INITIALIZED(S(&s), 0);
	expect_valid(S(&s));
	bch_sb_upgrade_in_memory(S(&s));
	assert_int_equal(le64_to_cpu(S(&s)->version), 9);
}

/* Replicas field from a byte string (entries only). */
static void add_replicas(struct sbuf *s, const uint8_t *e, size_t len)
{
	uint8_t *f = sb_add_field(S(s), BCH_SB_FIELD_replicas, 1 + DIV_ROUND_UP(len, 8));

	memcpy(f + 8, e, len);
}

static void test_replicas(void **state)
{
	struct sbuf s;
	struct bch_replicas_iter it;
	const struct bch_replicas_entry *e;

	static const uint8_t good[] = { 3, 1, 0,  2, 2, 0, 1,  4, 1, 1 };
	make_sb(&s, 2, 0x11);
	add_replicas(&s, good, sizeof(good));
	expect_valid(S(&s));
	bch_sb_replicas_iter_init(&it, S(&s));
	e = bch_sb_replicas_next(&it);
	assert_int_equal(e->data_type, 3);
	e = bch_sb_replicas_next(&it);
	assert_int_equal(e->nr, 2);
	e = bch_sb_replicas_next(&it);
	assert_int_equal(e->devs[0], 1);
	assert_null(bch_sb_replicas_next(&it));
	assert_int_equal(bch_sb_dev_has_data(S(&s), 0), (1 << 2) | (1 << 3));
	assert_int_equal(bch_sb_dev_has_data(S(&s), 1), (1 << 2) | (1 << 4));

#define BREAK(bytes, substr)					\
	do {							\
		static const uint8_t _b[] = bytes;		\
		make_sb(&s, 2, 0x11);				\
		add_replicas(&s, _b, sizeof(_b));		\
		expect_invalid(S(&s), -BCH_ERR_sb_invalid, substr); \
	} while (0)
#define B(...) { __VA_ARGS__ }

	BREAK(B(3, 1, 0, 6, 1, 0), "entry 1: invalid data type 6");
	BREAK(B(3, 0), "entry 0 (btree): no devices");
	BREAK(B(3, 4, 0, 1, 0, 1), "entry 0 (btree): 4 devices (at most 3)");
	BREAK(B(4, 2, 0, 2), "device 2 is not a member (nr_devices 2)");
	BREAK(B(3, 2, 0, 1, 3, 2, 1, 0), "duplicate entry (btree");
	/* an entry running past the end of the field */
	BREAK(B(3, 1, 0, 4, 1, 1, 4, 3), "entry 2 at byte 14 overruns the field");
#undef BREAK
#undef B

	/* replicas entry naming a removed member */
	make_sb(&s, 2, 0x11);
	memset(member(S(&s), 1)->uuid.b, 0, 16);
	add_replicas(&s, good, sizeof(good));
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "device 1 is not a member");
}

static struct bch_sb_field_disk_groups *add_groups(struct sbuf *s, unsigned nr)
{
	return sb_add_field(S(s), BCH_SB_FIELD_disk_groups, 1 + 6 * nr);
}

static void set_group(struct bch_disk_group *g, const char *label, unsigned parent)
{
	strncpy((char *)g->label, label, sizeof(g->label));
	SET_BCH_GROUP_PARENT(g, parent);
	SET_BCH_GROUP_DATA_ALLOWED(g, 0x1f);
}

static void test_disk_groups(void **state)
{
	struct sbuf s;
	struct bch_sb_field_disk_groups *g;
	struct printbuf out = PRINTBUF;
	char label[33];

	make_sb(&s, 2, 0x11);
	g = add_groups(&s, 4);
	set_group(&g->entries[0], "ssd", 0);
	set_group(&g->entries[1], "fast", 1);
	set_group(&g->entries[2], "hdd", 0);
	set_group(&g->entries[3], "slow", 1);
	SET_BCH_MEMBER_GROUP(member(S(&s), 0), 2);
	SET_BCH_MEMBER_GROUP(member(S(&s), 1), 4);
	expect_valid(S(&s));
	assert_int_equal(bch_sb_disk_group_label(S(&s), 3, label), 0);
	assert_string_equal(label, "slow");
	assert_int_equal(bch_sb_disk_group_label(S(&s), 4, label), -ENOENT);
	bch_sb_disk_group_path(&out, S(&s), 1);
	assert_string_equal(printbuf_str(&out), "ssd.fast");
	printbuf_reset(&out);
	SET_BCH_GROUP_PARENT(&g->entries[0], 2);	/* cycle */
	bch_sb_disk_group_path(&out, S(&s), 1);
	assert_string_equal(printbuf_str(&out), "invalid group 1");
	printbuf_exit(&out);

	SET_BCH_GROUP_PARENT(&g->entries[0], 0);
	SET_BCH_MEMBER_GROUP(member(S(&s), 1), 5);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "device 1 is in group 4, only 4 groups exist");

	SET_BCH_MEMBER_GROUP(member(S(&s), 1), 3);
	SET_BCH_GROUP_DELETED(&g->entries[2], 1);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "device 1 is in deleted group 2");

	SET_BCH_MEMBER_GROUP(member(S(&s), 1), 0);
	SET_BCH_GROUP_DELETED(&g->entries[2], 0);
	memset(g->entries[2].label, 0, 32);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "group 2 has an empty label");

	set_group(&g->entries[2], "fast", 1);
	expect_invalid(S(&s), -BCH_ERR_sb_invalid, "duplicate group 'fast' (parent 1)");
	SET_BCH_GROUP_DELETED(&g->entries[2], 1);
	expect_valid(S(&s));
}

/* ---- one copy: magic, version, size, checksum ------------------------------ */

static void expect_copy(struct bch_sb *sb, size_t len, int want, const char *substr)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_sb_check_copy(sb, len, &err);

	if (ret != want || !strstr(printbuf_str(&err), substr))
		fail_msg("want %d '%s', got %d '%s'", want, substr, ret, printbuf_str(&err));
	printbuf_exit(&err);
}

static void test_check_copy(void **state)
{
	struct sbuf s;

	make_sb(&s, 1, 0x11);
	expect_copy(S(&s), bch_sb_bytes(S(&s)), 0, "");
	expect_copy(S(&s), 100, -BCH_ERR_sb_invalid, "only 100 bytes");
	expect_copy(S(&s), bch_sb_bytes(S(&s)) - 8, -BCH_ERR_sb_invalid, "bytes long but only");

	S(&s)->label[0] ^= 1;
	expect_copy(S(&s), SB_MAX_BYTES, -BCH_ERR_sb_bad_csum, "bad checksum");

	make_sb(&s, 1, 0x11);
	S(&s)->magic.b[0] ^= 1;
	expect_copy(S(&s), SB_MAX_BYTES, -BCH_ERR_not_bcachefs, "bad magic");

	make_sb(&s, 1, 0x11);
	S(&s)->version = cpu_to_le64(12);
	expect_copy(S(&s), SB_MAX_BYTES, -BCH_ERR_sb_bad_version, "unsupported version 12");

	make_sb(&s, 1, 0x11);
	S(&s)->layout.sb_max_size_bits = 1;	/* 1 KiB per copy */
	S(&s)->u64s = cpu_to_le32(100);
	expect_copy(S(&s), SB_MAX_BYTES, -BCH_ERR_sb_too_big, "too big: 1552 bytes");

	/*
	 * a layout that reserves 1 GiB per copy (sb_max_size_bits 21) still
	 * allows no superblock over 4 MiB: the reader would allocate and
	 * read what u64s says (fuzz_image, regress/image/sb-1gib-layout-slow)
	 */
	make_sb(&s, 1, 0x11);
	S(&s)->layout.sb_max_size_bits = 21;
	S(&s)->u64s = cpu_to_le32((4U << 20) / 8);
	expect_copy(S(&s), SB_MAX_BYTES, -BCH_ERR_sb_too_big,
		    "too big: 4195056 bytes (u64s 524288), more than any superblock can be (4194304 bytes)");
	S(&s)->u64s = cpu_to_le32((4U << 20) / 8 - 94);	/* 4 MiB exactly: only short */
	expect_copy(S(&s), SB_MAX_BYTES, -BCH_ERR_sb_invalid, "bytes long but only");

	make_sb(&s, 1, 0x11);
	SET_BCH_SB_CSUM_TYPE(S(&s), 7);
	expect_copy(S(&s), SB_MAX_BYTES, -BCH_ERR_sb_bad_csum_type, "unknown checksum type 7");
	SET_BCH_SB_CSUM_TYPE(S(&s), 3);
	expect_copy(S(&s), SB_MAX_BYTES, -BCH_ERR_sb_bad_csum_type, "cannot be verified");

	/* the other CRC types verify */
	make_sb(&s, 1, 0x11);
	SET_BCH_SB_CSUM_TYPE(S(&s), 2);
	sb_fix_csum(S(&s));
	expect_copy(S(&s), SB_MAX_BYTES, 0, "");
	SET_BCH_SB_CSUM_TYPE(S(&s), 0);
	sb_fix_csum(S(&s));
	expect_copy(S(&s), SB_MAX_BYTES, 0, "");
	SET_BCH_SB_CSUM_TYPE(S(&s), 6);
	sb_fix_csum(S(&s));
	expect_copy(S(&s), SB_MAX_BYTES, 0, "");
}

/* Spec 10 §3.5 vector A: CRC-32C over [16, 816) of the default 1 GiB sb. */
static void test_csum_vector(void **state)
{
	static const uint8_t uuid[16] = { 0x1a, 0x36, 0x2f, 0xfc, 0xaf, 0x12, 0x47, 0x5a,
		0xb5, 0xe8, 0x7d, 0xef, 0x37, 0x10, 0xb8, 0xe8 };
	static const uint8_t user[16] = { 0x98, 0x92, 0xb2, 0xeb, 0x3d, 0xe6, 0x40, 0x63,
		0x92, 0xd4, 0x7a, 0x6c, 0x9c, 0x91, 0xdb, 0xae };
	static const uint8_t muuid[16] = { 0x27, 0x0c, 0x82, 0x8a, 0xf0, 0x6f, 0x4f, 0x3a,
		0x91, 0xc2, 0x76, 0xa1, 0x94, 0x4c, 0xb7, 0x0c };
	struct sbuf s;
	struct bch_sb *sb = S(&s);
	struct bch_csum_val v;

	make_sb(&s, 1, 0x11);
	memcpy(sb->uuid.b, uuid, 16);
	memcpy(sb->user_uuid.b, user, 16);
	memset(sb->label, 0, sizeof(sb->label));
	sb->time_base_lo = cpu_to_le64(0x18edac8c4a1ece5dULL);
	sb->flags[0] = cpu_to_le64(0x0111110080100104ULL);
	sb->flags[1] = cpu_to_le64(0x000000000111c002ULL);
	memcpy(member(sb, 0)->uuid.b, muuid, 16);
	member(sb, 0)->nbuckets = cpu_to_le64(8192);
	member(sb, 0)->bucket_size = cpu_to_le16(256);
	member(sb, 0)->flags[0] = cpu_to_le64(0x200e0000);
	assert_int_equal(bch_sb_bytes(sb), 816);
	assert_int_equal(bch_sb_csum(sb, &v), 0);
	assert_true(v.lo == 0x3e181c82 && v.hi == 0);
	sb->offset = cpu_to_le64(136);
	assert_int_equal(bch_sb_csum(sb, &v), 0);
	assert_true(v.lo == 0x56d865c2);
}

/* ---- reading and writing files ------------------------------------------- */

static char *tmpfile_path(const char *name)
{
	static char paths[8][128];
	static unsigned n;
	char *p = paths[n++ % 8];

	snprintf(p, 128, "%s/%s", tmpdir, name);
	return p;
}

static void make_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

static void write_sb_file(const char *path, struct bch_sb *sb)
{
	struct bch_devio *io;
	struct printbuf err = PRINTBUF;
	int ret;

	make_file(path, DEV_BYTES);
	assert_int_equal(dev_open(path, DEV_RW, &io), 0);
	ret = bch_sb_write(io, sb, &err);
	if (ret)
		fail_msg("write: %s", printbuf_str(&err));
	dev_close(io);
	printbuf_exit(&err);
}

static int read_sb_file(const char *path, struct bch_sb_handle *h, struct printbuf *err)
{
	struct bch_devio *io;
	int ret = dev_open(path, 0, &io);

	if (ret)
		return ret;
	ret = bch_sb_read(io, h, err);
	dev_close(io);
	return ret;
}

static void patch_file(const char *path, uint64_t off, uint8_t xor)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
	b ^= xor;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
	close(fd);
}

static void test_write_read(void **state)
{
	const char *p = tmpfile_path("wr.img");
	struct printbuf err = PRINTBUF;
	struct bch_sb_handle h;
	struct sbuf s;

	make_sb(&s, 1, 0x21);
	write_sb_file(p, S(&s));
	assert_int_equal(read_sb_file(p, &h, &err), 0);
	assert_string_equal(printbuf_str(&err), "");
	assert_int_equal(h.offset, 8);
	assert_false(h.from_backup);
	S(&s)->offset = cpu_to_le64(8);
	sb_fix_csum(S(&s));
	assert_memory_equal(h.sb, S(&s), bch_sb_bytes(S(&s)));
	bch_sb_handle_free(&h);

	/* primary broken: the backup at 136 is used, and the reason is given */
	patch_file(p, 8 * 512 + 80, 0xff);
	assert_int_equal(read_sb_file(p, &h, &err), 0);
	assert_true(h.from_backup);
	assert_int_equal(h.offset, 136);
	assert_non_null(strstr(printbuf_str(&err), "superblock at sector 8: bad checksum"));
	assert_non_null(strstr(printbuf_str(&err), "using the backup at sector 136"));
	assert_int_equal(le64_to_cpu(h.sb->offset), 136);
	bch_sb_handle_free(&h);
	printbuf_reset(&err);

	/* both broken */
	patch_file(p, 136 * 512 + 80, 0xff);
	assert_int_equal(read_sb_file(p, &h, &err), -BCH_ERR_sb_bad_csum);
	assert_null(h.sb);
	assert_non_null(strstr(printbuf_str(&err), "backup at sector 136: bad checksum"));
	assert_non_null(strstr(printbuf_str(&err), "no valid superblock"));
	printbuf_reset(&err);

	/* layout broken too */
	patch_file(p, 7 * 512, 0xff);
	assert_int_equal(read_sb_file(p, &h, &err), -BCH_ERR_sb_bad_csum);
	assert_non_null(strstr(printbuf_str(&err), "layout at sector 7: not a bcachefs superblock layout"));
	printbuf_exit(&err);
	unlink(p);
}

/*
 * device remove: every copy's magic zeroed, checksum computed again. The
 * readers say "removed from filesystem UUID"; a magic zeroed by anything
 * else (checksum over the magic) stays "not bcachefs".
 */
static void test_mark_removed(void **state)
{
	const char *p = tmpfile_path("removed.img");
	struct printbuf err = PRINTBUF;
	struct bch_sb_handle h;
	struct bch_devio *io;
	struct sbuf s;
	int i;

	make_sb(&s, 1, 0x31);
	write_sb_file(p, S(&s));
	assert_int_equal(dev_open(p, DEV_RW, &io), 0);
	/* twice: the second finds no magic and changes nothing */
	for (i = 0; i < 2; i++)
		assert_int_equal(bch_sb_mark_removed(io, &S(&s)->layout), 0);
	dev_close(io);
	assert_int_equal(read_sb_file(p, &h, &err), -BCH_ERR_sb_removed);
	assert_null(h.sb);
	assert_non_null(strstr(printbuf_str(&err),
		"removed from filesystem 32323232-3232-3232-3232-323232323232: not a member any more"));
	printbuf_reset(&err);

	/* the primary damaged: the copies the layout at sector 7 lists */
	patch_file(p, 8 * 512 + 80, 0xff);
	assert_int_equal(read_sb_file(p, &h, &err), -BCH_ERR_sb_removed);
	printbuf_reset(&err);

	/* the backup too: nothing says it was removed */
	patch_file(p, 136 * 512 + 80, 0xff);
	assert_int_equal(read_sb_file(p, &h, &err), -BCH_ERR_not_bcachefs);
	if (strstr(printbuf_str(&err), "removed from"))
		fail_msg("%s", printbuf_str(&err));
	printbuf_reset(&err);

	/* a live copy whose magic is zeroed by hand: its checksum covers the magic */
	write_sb_file(p, S(&s));
	assert_int_equal(dev_open(p, DEV_RW, &io), 0);
	assert_int_equal(dev_pwrite(io, (uint8_t[16]){ 0 }, 16, 8 * 512 + 24), 0);
	dev_close(io);
	assert_int_equal(read_sb_file(p, &h, &err), 0);
	assert_true(h.from_backup);
	bch_sb_handle_free(&h);
	printbuf_exit(&err);
	unlink(p);
}

static void test_read_small_files(void **state)
{
	const char *p = tmpfile_path("small.img");
	struct printbuf err = PRINTBUF;
	struct bch_sb_handle h;
	struct sbuf s;

	/* no room for a superblock: one short reason */
	make_file(p, 0);
	assert_int_equal(read_sb_file(p, &h, &err), -BCH_ERR_not_bcachefs);
	assert_non_null(strstr(printbuf_str(&err), "empty (0 bytes): not a bcachefs filesystem"));
	printbuf_reset(&err);
	make_file(p, 4096);
	assert_int_equal(read_sb_file(p, &h, &err), -BCH_ERR_not_bcachefs);
	assert_non_null(strstr(printbuf_str(&err), "too small to hold a superblock (4096 bytes)"));
	printbuf_reset(&err);

	/* a superblock cut short by the end of the device */
	make_sb(&s, 1, 0x21);
	write_sb_file(p, S(&s));
	assert_int_equal(truncate(p, 8 * 512 + 800), 0);
	assert_true(read_sb_file(p, &h, &err) < 0);
	assert_non_null(strstr(printbuf_str(&err), "past the end of the device"));
	printbuf_reset(&err);

	/*
	 * A primary claiming 32 GiB (u64s 0xffffffff, a layout reserving
	 * 2^40 sectors): refused before anything is allocated, and the backup
	 * is used (it aborted with "out of memory"; found by fuzz_image). It
	 * is bigger than any superblock can be, and past the end of the device.
	 */
	write_sb_file(p, S(&s));
	for (unsigned i = 0; i < 4; i++)
		patch_file(p, 8 * 512 + offsetof(struct bch_sb, u64s) + i, 0xff);
	patch_file(p, 8 * 512 + offsetof(struct bch_sb, layout) +
		   offsetof(struct bch_sb_layout, sb_max_size_bits), 7 ^ 40);
	assert_int_equal(read_sb_file(p, &h, &err), 0);
	assert_true(h.from_backup);
	assert_non_null(strstr(printbuf_str(&err), "superblock at sector 8: too big: "));
	bch_sb_handle_free(&h);
	printbuf_exit(&err);
	unlink(p);
}

static void test_write_refuses_invalid(void **state)
{
	const char *p = tmpfile_path("inv.img");
	struct printbuf err = PRINTBUF;
	struct bch_devio *io;
	struct sbuf s;

	make_sb(&s, 1, 0x21);
	S(&s)->block_size = cpu_to_le16(3);
	make_file(p, DEV_BYTES);
	assert_int_equal(dev_open(p, DEV_RW, &io), 0);
	assert_int_equal(bch_sb_write(io, S(&s), &err), -BCH_ERR_sb_invalid);
	assert_non_null(strstr(printbuf_str(&err), "not writing an invalid superblock"));
	dev_close(io);
	printbuf_exit(&err);
	unlink(p);
}

/* ---- printing ------------------------------------------------------------ */

static void test_to_text(void **state)
{
	static const uint8_t r[] = { 3, 1, 0, 2, 2, 0, 1 };
	struct printbuf out = PRINTBUF;
	struct sbuf s;
	const char *t;

	make_sb(&s, 2, 0x11);
	add_replicas(&s, r, sizeof(r));
	bch_sb_to_text(&out, S(&s), BCH_SB_PRINT_LAYOUT | BCH_SB_PRINT_ALL_FIELDS);
	t = printbuf_str(&out);
	assert_non_null(strstr(t, "Label:\t\t\t\ttest\n"));
	assert_non_null(strstr(t, "Devices:\t\t\t2 live, 2 total\n"));
	assert_non_null(strstr(t, "Sections:\t\t\tmembers,replicas\n"));
	assert_non_null(strstr(t, "  Offsets:\t\t\t8, 136\n"));
	assert_non_null(strstr(t, "  Device 1:\n"));
	assert_non_null(strstr(t, "    Size:\t\t\t64.0M\n"));
	assert_non_null(strstr(t, "    Has data:\t\t\tjournal\n"));
	assert_non_null(strstr(t, "  journal:                      [0 1]\n"));
	printbuf_reset(&out);
	bch_sb_to_json(&out, S(&s), BCH_SB_PRINT_ALL_FIELDS, false);
	t = printbuf_str(&out);
	assert_non_null(strstr(t, "\"devices_total\""));
	assert_non_null(strstr(t, "\"replicas\""));
	printbuf_exit(&out);
}

/* ---- bch_fs_open ------------------------------------------------------------ */

static struct bch_fs_opts ro_opts(void)
{
	struct bch_fs_opts o = { .read_only = true, .no_journal = true };

	return o;
}

/* Write member @idx of an @nr device filesystem @seed to file @name. */
static const char *make_member_file(const char *name, unsigned nr, unsigned idx, uint8_t seed)
{
	const char *p = tmpfile_path(name);
	struct sbuf s;

	make_sb(&s, nr, seed);
	S(&s)->dev_idx = idx;
	write_sb_file(p, S(&s));
	return p;
}

static int open_paths(const char **paths, unsigned nr, struct bch_fs_opts o,
		      struct bch_fs **c, struct printbuf *err)
{
	return bch_fs_open((char * const *)paths, nr, &o, c, err);
}

static void test_fs_open(void **state)
{
	const char *p[3];
	struct printbuf err = PRINTBUF;
	struct bch_fs *c;
	struct bch_fs_opts o = ro_opts();
	static const uint8_t r[] = { 3, 1, 1, 2, 2, 0, 1 };
	struct sbuf s;
	int ret;

	p[0] = make_member_file("m0.img", 2, 0, 0x31);
	p[1] = make_member_file("m1.img", 2, 1, 0x31);

	ret = open_paths((const char *[]){ p[1], p[0] }, 2, o, &c, &err);
	if (ret)
		fail_msg("%s", printbuf_str(&err));
	assert_int_equal(c->nr_devices, 2);
	assert_int_equal(c->block_size, 8);
	assert_int_equal(c->btree_node_size, 32);
	assert_int_equal(c->str_hash_type, 2);
	assert_non_null(c->devs[0]);
	assert_non_null(c->devs[1]);
	assert_int_equal(c->devs[1]->idx, 1);
	assert_int_equal(c->devs[1]->bucket_size, BUCKET_SECTORS);
	assert_int_equal(c->devs[0]->nbuckets, DEV_BYTES / 512 / BUCKET_SECTORS);
	assert_false(c->encrypted);
	assert_false(c->devs[0]->io->rw);
	bch_fs_close(c);

	/* one missing: refused, unless degraded */
	ret = open_paths(p, 1, o, &c, &err);
	assert_int_equal(ret, -BCH_ERR_dev_missing);
	assert_null(c);
	assert_non_null(strstr(printbuf_str(&err), "1 member device is missing: 1 (uuid 41414141-"));
	printbuf_reset(&err);
	o.degraded = true;
	ret = open_paths(p, 1, o, &c, &err);
	assert_int_equal(ret, 0);
	assert_non_null(c->devs[1]);
	assert_null(c->devs[1]->io);
	bch_fs_close(c);

	/* degraded, but some btree data only on the missing device */
	make_sb(&s, 2, 0x31);
	add_replicas(&s, r, sizeof(r));
	p[2] = tmpfile_path("m0r.img");
	write_sb_file(p[2], S(&s));
	ret = open_paths(&p[2], 1, o, &c, &err);
	assert_int_equal(ret, -BCH_ERR_dev_missing);
	assert_non_null(strstr(printbuf_str(&err), "btree (metadata) kept on device [1] cannot be read"));
	printbuf_reset(&err);
	o.degraded = false;

	/* same device twice */
	ret = open_paths((const char *[]){ p[0], p[0] }, 2, o, &c, &err);
	assert_int_equal(ret, -BCH_ERR_dev_duplicate);
	assert_non_null(strstr(printbuf_str(&err), "are the same member device (index 0)"));
	printbuf_reset(&err);

	/* another filesystem */
	p[2] = make_member_file("other.img", 2, 1, 0x51);
	ret = open_paths((const char *[]){ p[0], p[2] }, 2, o, &c, &err);
	assert_int_equal(ret, -BCH_ERR_fs_mismatch);
	assert_non_null(strstr(printbuf_str(&err), "belong to different filesystems: external uuid 32323232-"));
	printbuf_reset(&err);

	/* not a filesystem at all; missing file */
	make_file(tmpfile_path("zero.img"), DEV_BYTES);
	ret = open_paths((const char *[]){ tmpfile_path("zero.img") }, 1, o, &c, &err);
	assert_int_equal(ret, -BCH_ERR_not_bcachefs);
	assert_non_null(strstr(printbuf_str(&err), "no bcachefs superblock (no magic at sector 8, no layout at sector 7)"));
	printbuf_reset(&err);
	ret = open_paths((const char *[]){ tmpfile_path("nonexistent.img") }, 1, o, &c, &err);
	assert_int_equal(ret, -ENOENT);
	assert_non_null(strstr(printbuf_str(&err), "cannot open"));
	printbuf_reset(&err);

	/* a valid copy that fails full validation */
	make_sb(&s, 1, 0x61);
	SET_BCH_SB_GC_RESERVE(S(&s), 2);
	sb_fix_csum(S(&s));
	p[2] = tmpfile_path("inv.img");
	make_file(p[2], DEV_BYTES);
	{
		int fd = open(p[2], O_RDWR);

		assert_int_equal(pwrite(fd, S(&s), bch_sb_bytes(S(&s)), 8 * 512),
				 (ssize_t)bch_sb_bytes(S(&s)));
		close(fd);
	}
	ret = open_paths(&p[2], 1, o, &c, &err);
	assert_int_equal(ret, -BCH_ERR_sb_invalid);
	assert_non_null(strstr(printbuf_str(&err), "superblock at sector 8: invalid superblock: gc reserve 2%"));
	printbuf_exit(&err);
}

static void test_fs_open_newest_sb(void **state)
{
	const char *p0, *p1;
	struct printbuf err = PRINTBUF;
	struct bch_fs *c;
	struct sbuf s;

	make_sb(&s, 2, 0x71);
	p0 = tmpfile_path("n0.img");
	write_sb_file(p0, S(&s));
	make_sb(&s, 2, 0x71);
	S(&s)->dev_idx = 1;
	S(&s)->seq = cpu_to_le64(5);
	memcpy(S(&s)->label, "newer", 5);
	p1 = tmpfile_path("n1.img");
	write_sb_file(p1, S(&s));
	assert_int_equal(open_paths((const char *[]){ p0, p1 }, 2, ro_opts(), &c, &err), 0);
	assert_ptr_equal(c->sb, c->devs[1]->sb);
	assert_memory_equal(c->sb->label, "newer", 5);
	bch_fs_close(c);

	/* a device too small for its member entry */
	assert_int_equal(truncate(p1, DEV_BYTES / 2), 0);
	assert_int_equal(open_paths((const char *[]){ p0, p1 }, 2, ro_opts(), &c, &err),
			 -BCH_ERR_dev_too_small);
	assert_non_null(strstr(printbuf_str(&err), "device too small"));
	printbuf_exit(&err);
}

/* ---- golden images (skipped when tests/golden is not reachable) ------------- */

static const char *golden_dir(void)
{
	const char *g = getenv("GOLDEN");
	static const char *try[] = { "tests/golden", "../tests/golden", "../../tests/golden" };
	struct stat st;
	unsigned i;

	if (g && !stat(g, &st))
		return g;
	for (i = 0; i < ARRAY_SIZE(try); i++)
		if (!stat(try[i], &st))
			return try[i];
	return NULL;
}

/* Decompress golden image @rel into the temp dir; NULL if unavailable. */
static const char *golden_image(const char *rel, const char *name)
{
	const char *g = golden_dir();
	const char *out = tmpfile_path(name);
	char cmd[1024];

	if (!g)
		return NULL;
	snprintf(cmd, sizeof(cmd), "zstd -qdf --sparse '%s/%s' -o '%s' 2>/dev/null", g, rel, out);
	return system(cmd) ? NULL : out;
}

static void test_golden_roundtrip(void **state)
{
	const char *img = golden_image("a_default_20M/dev0.img.zst", "g20.img");
	const char *copy = tmpfile_path("g20copy.img");
	struct printbuf err = PRINTBUF;
	struct bch_sb_handle h, h2;
	struct bch_devio *io;
	uint8_t *orig;

	if (!img)
		skip();
	assert_int_equal(read_sb_file(img, &h, &err), 0);
	assert_int_equal(bch_sb_bytes(h.sb), 1008);
	assert_int_equal(bch_sb_validate(h.sb, &err), 0);
	orig = xmalloc(h.bytes);
	memcpy(orig, h.sb, h.bytes);

	make_file(copy, 20 << 20);
	assert_int_equal(dev_open(copy, DEV_RW, &io), 0);
	assert_int_equal(bch_sb_write(io, h.sb, &err), 0);
	dev_close(io);
	assert_int_equal(read_sb_file(copy, &h2, &err), 0);
	assert_int_equal(h2.bytes, h.bytes);
	assert_memory_equal(h2.sb, orig, h.bytes);	/* identical to the 2018 primary */
	bch_sb_handle_free(&h2);

	/* and the backup is identical to the 2018 backup */
	{
		int fa = open(img, O_RDONLY), fb = open(copy, O_RDONLY);
		uint8_t *a = xmalloc(h.bytes), *b = xmalloc(h.bytes);

		assert_int_equal(pread(fa, a, h.bytes, 136 * 512), (ssize_t)h.bytes);
		assert_int_equal(pread(fb, b, h.bytes, 136 * 512), (ssize_t)h.bytes);
		assert_memory_equal(a, b, h.bytes);
		assert_int_equal(pread(fa, a, 512, 7 * 512), 512);
		assert_int_equal(pread(fb, b, 512, 7 * 512), 512);
		assert_memory_equal(a, b, 512);
		close(fa);
		close(fb);
		free(a);
		free(b);
	}
	free(orig);
	bch_sb_handle_free(&h);
	printbuf_exit(&err);
	unlink(copy);
	unlink(img);
}

static void test_golden_encrypted(void **state)
{
	const char *img = golden_image("c1_encrypted/dev0.img.zst", "c1.img");
	const char *pass = tmpfile_path("pass");
	struct printbuf err = PRINTBUF;
	struct bch_fs_opts o = ro_opts();
	struct bch_fs *c;
	FILE *f;
	int ret;

	if (!img)
		skip();
	f = fopen(pass, "w");
	fputs("golden-pass\n", f);
	fclose(f);
	o.passphrase_file = pass;
	ret = bch_fs_open((char * const []){ (char *)img }, 1, &o, &c, &err);
	if (ret)
		fail_msg("%s", printbuf_str(&err));
	assert_true(c->encrypted);
	assert_true(c->have_key);
	bch_fs_close(c);

	f = fopen(pass, "w");
	fputs("wrong-pass\n", f);
	fclose(f);
	ret = bch_fs_open((char * const []){ (char *)img }, 1, &o, &c, &err);
	/* a key left in the keyring by someone's unlock would open it anyway */
	if (ret != 0) {
		assert_int_equal(ret, -BCH_ERR_bad_passphrase);
		assert_non_null(strstr(printbuf_str(&err), "wrong passphrase"));
	} else {
		bch_fs_close(c);
	}
	unlink(img);
	unlink(pass);

	img = golden_image("c2_encrypted_nopass/dev0.img.zst", "c2.img");
	assert_non_null(img);
	o.passphrase_file = NULL;
	ret = bch_fs_open((char * const []){ (char *)img }, 1, &o, &c, &err);
	if (ret)
		fail_msg("%s", printbuf_str(&err));
	assert_true(c->encrypted && c->have_key);
	bch_fs_close(c);
	unlink(img);
	printbuf_exit(&err);
}

static void test_golden_multi(void **state)
{
	const char *d0 = golden_image("e1_2dev/dev0.img.zst", "e0.img");
	const char *d1 = golden_image("e1_2dev/dev1.img.zst", "e1.img");
	struct printbuf err = PRINTBUF;
	struct bch_fs_opts o = ro_opts();
	struct bch_fs *c;
	int ret;

	if (!d0 || !d1)
		skip();
	ret = bch_fs_open((char * const []){ (char *)d1, (char *)d0 }, 2, &o, &c, &err);
	if (ret)
		fail_msg("%s", printbuf_str(&err));
	assert_int_equal(c->nr_devices, 2);
	assert_non_null(c->devs[0]->io);
	assert_non_null(c->devs[1]->io);
	assert_int_equal(bch_sb_journal_nr_buckets(c->devs[1]->sb), 32);
	bch_fs_close(c);

	/* only dev0: 2018 said "insufficient devices"; degraded: btree [1] lost */
	ret = bch_fs_open((char * const []){ (char *)d0 }, 1, &o, &c, &err);
	assert_int_equal(ret, -BCH_ERR_dev_missing);
	o.degraded = true;
	ret = bch_fs_open((char * const []){ (char *)d0 }, 1, &o, &c, &err);
	assert_int_equal(ret, -BCH_ERR_dev_missing);
	assert_non_null(strstr(printbuf_str(&err), "btree (metadata) kept on device [1] cannot be read"));
	unlink(d0);
	unlink(d1);
	printbuf_exit(&err);
}

/* Full opens with the journal: a plain image, and d1 found through its layout. */
static void test_golden_open_journal(void **state)
{
	const char *img = golden_image("a_default_20M/dev0.img.zst", "j20.img");
	struct printbuf err = PRINTBUF;
	struct bch_fs_opts o = { .read_only = true };
	struct bch_fs *c;
	int ret;

	if (!img)
		skip();
	ret = bch_fs_open((char * const []){ (char *)img }, 1, &o, &c, &err);
	if (ret)
		fail_msg("%s", printbuf_str(&err));
	assert_true(c->journal.read_done);
	assert_int_equal(c->journal.seq, 9);
	assert_false(c->devs[0]->io->rw);
	bch_fs_close(c);
	unlink(img);

	img = golden_image("d1_migrate_ext4_1G/migrated-layout7.img.zst", "d1.img");
	assert_non_null(img);
	ret = bch_fs_open((char * const []){ (char *)img }, 1, &o, &c, &err);
	if (ret)
		fail_msg("%s", printbuf_str(&err));
	/* a migrated layout's first copy is its primary: no fallback reported */
	assert_null(strstr(printbuf_str(&err), "backup"));
	assert_int_equal(c->devs[0]->sb_offset, 802816);
	assert_int_equal(le64_to_cpu(c->sb->offset), 802816);
	assert_int_equal(c->journal.seq, 14);
	bch_fs_close(c);
	unlink(img);
	printbuf_exit(&err);
}

/*
 * Every byte of the first 1024 of a golden primary flipped in turn: the
 * backup is used exactly when the byte is inside the checksummed copy.
 */
static void test_golden_flips(void **state)
{
	const char *img = golden_image("a_default_20M/dev0.img.zst", "flip.img");
	struct printbuf err = PRINTBUF;
	struct bch_sb_handle h;
	struct bch_devio *io;
	unsigned off, backups = 0;

	if (!img)
		skip();
	for (off = 0; off < 1024; off++) {
		patch_file(img, 4096 + off, 0xff);
		assert_int_equal(dev_open(img, 0, &io), 0);
		assert_int_equal(bch_sb_read(io, &h, &err), 0);
		dev_close(io);
		if (h.from_backup != (off < 1008))
			fail_msg("byte %u: from_backup %d: %s", off, h.from_backup, printbuf_str(&err));
		backups += h.from_backup;
		bch_sb_handle_free(&h);
		printbuf_reset(&err);
		patch_file(img, 4096 + off, 0xff);
	}
	assert_int_equal(backups, 1008);
	printbuf_exit(&err);
	unlink(img);
}

/* The checksum covers bch_sb_bytes(): only fix it when that fits in @len. */
static void fix_csum_if_fits(struct bch_sb *sb, size_t len)
{
	if (bch_sb_bytes(sb) <= len && BCH_SB_CSUM_TYPE(sb) < 7 &&
	    !bch_csum_type_is_encryption(BCH_SB_CSUM_TYPE(sb)))
		sb_fix_csum(sb);
}

/* Run everything that looks at a superblock over @sb; nothing may crash. */
static void exercise_sb(struct bch_sb *sb, size_t len, const char *path)
{
	struct printbuf out = PRINTBUF;
	struct bch_fs_opts o = ro_opts();
	struct bch_fs *c;
	int fd;

	if (bch_sb_check_copy(sb, len, &out))
		goto out;
	bch_sb_to_text(&out, sb, BCH_SB_PRINT_LAYOUT | BCH_SB_PRINT_ALL_FIELDS);
	bch_sb_to_json(&out, sb, BCH_SB_PRINT_LAYOUT | BCH_SB_PRINT_ALL_FIELDS, false);
	bch_sb_validate(sb, &out);
	bch_sb_dev_has_data(sb, 0);
	bch_sb_journal_nr_buckets(sb);
	bch_sb_disk_group_path(&out, sb, 0);

	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, sb, bch_sb_bytes(sb), 8 * 512), (ssize_t)bch_sb_bytes(sb));
	close(fd);
	o.degraded = true;
	if (!bch_fs_open((char * const []){ (char *)path }, 1, &o, &c, &out))
		bch_fs_close(c);
out:
	printbuf_exit(&out);
}

/*
 * Corrupt a golden superblock (with a journal, members and replicas) one
 * byte, then several bytes at a time, and fix the checksum up, so that the
 * damage reaches the field parsers and the printers.
 */
static void test_fuzz_fixed_csum(void **state)
{
	const char *img = golden_image("e1_2dev/dev1.img.zst", "fuzz.img");
	struct printbuf err = PRINTBUF;
	struct bch_sb_handle h;
	uint8_t *buf;
	size_t len, i, k;
	unsigned seed = 12345;

	if (!img)
		skip();
	assert_int_equal(read_sb_file(img, &h, &err), 0);
	len = h.bytes;
	buf = xmalloc(len);
	for (i = 16; i < len; i++) {
		memcpy(buf, h.sb, len);
		buf[i] ^= 0xff;
		fix_csum_if_fits((struct bch_sb *)(void *)buf, len);
		exercise_sb((struct bch_sb *)(void *)buf, len, img);
	}
	for (i = 0; i < 3000; i++) {
		memcpy(buf, h.sb, len);
		for (k = 0; k < 1 + i % 4; k++) {
			seed = seed * 1103515245 + 12345;
			buf[752 + (seed >> 8) % (len - 752)] = (uint8_t)(seed >> 20);
		}
		fix_csum_if_fits((struct bch_sb *)(void *)buf, len);
		exercise_sb((struct bch_sb *)(void *)buf, len, img);
	}
	free(buf);
	bch_sb_handle_free(&h);
	printbuf_exit(&err);
	unlink(img);
}

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/test_super.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_fixed_part),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_field_list),
		cmocka_unit_test(test_members),
		cmocka_unit_test(test_journal),
		cmocka_unit_test(test_crypt_quota),
		cmocka_unit_test(test_replicas),
		cmocka_unit_test(test_disk_groups),
		cmocka_unit_test(test_check_copy),
		cmocka_unit_test(test_csum_vector),
		cmocka_unit_test(test_write_read),
		cmocka_unit_test(test_mark_removed),
		cmocka_unit_test(test_read_small_files),
		cmocka_unit_test(test_write_refuses_invalid),
		cmocka_unit_test(test_to_text),
		cmocka_unit_test(test_fs_open),
		cmocka_unit_test(test_fs_open_newest_sb),
		cmocka_unit_test(test_golden_roundtrip),
		cmocka_unit_test(test_golden_encrypted),
		cmocka_unit_test(test_golden_multi),
		cmocka_unit_test(test_golden_open_journal),
		cmocka_unit_test(test_golden_flips),
		cmocka_unit_test(test_fuzz_fixed_csum),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
