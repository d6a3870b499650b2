/*
 * Unit tests for extent_edit.c: dropping pointers (and the crc entries
 * they leave without a pointer) and appending a pointer with its crc
 * entry (doc/engine.md §17), on values decoded back with the extent iterator.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "codec/checksum.h"
#include "bkey/extent_edit.h"
#include "bkey/extents.h"
#include "format/format.h"

static unsigned put_crc(uint64_t *v, unsigned n, uint32_t csum, uint32_t size)
{
	struct bch_extent_crc_unpacked c = {
		.csum_type = BCH_CHECKSUM_CRC32C, .compressed_size = size,
		.uncompressed_size = size, .csum_lo = csum,
	};
	union bch_extent_entry e;
	unsigned u = bch_extent_crc_pack(&e, BCH_EXTENT_ENTRY_crc32, &c);

	memcpy(&v[n], &e, u * 8);
	return n + u;
}

static unsigned put_ptr(uint64_t *v, unsigned n, unsigned dev, uint64_t offset, bool cached)
{
	struct bch_extent_ptr_unpacked p = { .offset = offset, .dev = (uint8_t)dev, .gen = 3,
					     .cached = cached };
	struct bch_extent_ptr e = bch_extent_ptr_pack(&p);

	memcpy(&v[n], &e, 8);
	return n + 1;
}

/* "c<csum> p<dev>" for each entry */
static void describe(const uint64_t *v, unsigned bytes, uint32_t size, char *out)
{
	struct bkey_ref k = { .k = { .type = BCH_EXTENT, .size = size }, .v = v, .v_bytes = bytes };
	struct extent_entry_iter it;
	struct extent_entry_h e;

	*out = 0;
	extent_entry_iter_init(&it, &k);
	while (extent_entry_iter_next(&it, &e) > 0) {
		char s[32];

		if (e.type == BCH_EXTENT_ENTRY_ptr)
			snprintf(s, sizeof(s), "p%u%s ", e.ptr.dev, e.ptr.cached ? "c" : "");
		else
			snprintf(s, sizeof(s), "c%x ", (unsigned)e.crc.csum_lo);
		strcat(out, s);
	}
}

static bool drop_devs(const struct extent_ptr_decoded *p, unsigned i, void *arg)
{
	return (*(uint64_t *)arg >> p->ptr.dev) & 1;
}

static void test_drop(void **state)
{
	uint64_t v[20], out[20], mask;
	unsigned n = 0, bytes, left;
	struct bkey_ref k = { .k = { .type = BCH_EXTENT, .size = 8 }, .v = v };
	char d[256];
	(void)state;

	n = put_crc(v, n, 0xa, 8);
	n = put_ptr(v, n, 0, 100, false);
	n = put_crc(v, n, 0xb, 8);
	n = put_ptr(v, n, 1, 200, false);
	n = put_ptr(v, n, 2, 300, true);
	k.v_bytes = n * 8;

	mask = 1ULL << 1;	/* the crc of dev 1's pointer stays for dev 2's */
	bytes = extent_drop_ptrs(&k, drop_devs, &mask, out, &left);
	describe(out, bytes, 8, d);
	assert_string_equal(d, "ca p0 cb p2c ");
	assert_int_equal(left, 2);

	mask = (1ULL << 1) | (1ULL << 2);	/* crc b has no pointer left */
	bytes = extent_drop_ptrs(&k, drop_devs, &mask, out, &left);
	describe(out, bytes, 8, d);
	assert_string_equal(d, "ca p0 ");

	mask = 1ULL << 0;	/* crc a goes, crc b starts the value */
	bytes = extent_drop_ptrs(&k, drop_devs, &mask, out, &left);
	describe(out, bytes, 8, d);
	assert_string_equal(d, "cb p1 p2c ");

	mask = 7;
	bytes = extent_drop_ptrs(&k, drop_devs, &mask, out, &left);
	assert_int_equal(bytes, 0);
	assert_int_equal(left, 0);

	/* an entry that does not parse: refused */
	v[n] = 0;
	k.v_bytes = (n + 1) * 8;
	mask = 0;
	extent_drop_ptrs(&k, drop_devs, &mask, out, &left);
	assert_int_equal(left, UINT32_MAX);
}

static void test_append(void **state)
{
	uint64_t v[20], out[20];
	struct bch_extent_crc_unpacked ca = {
		.entry_type = BCH_EXTENT_ENTRY_crc32, .csum_type = BCH_CHECKSUM_CRC32C,
		.compressed_size = 8, .uncompressed_size = 8, .csum_lo = 0xa,
	}, cz = ca, none = bch_extent_crc_none(8);
	struct bch_extent_ptr_unpacked p = { .offset = 500, .dev = 3, .gen = 1 };
	unsigned n = 0, bytes;
	char d[256];
	(void)state;

	cz.csum_lo = 0xc;
	n = put_crc(v, n, 0xa, 8);
	n = put_ptr(v, n, 0, 100, false);
	/* the same crc as the last one: the pointer alone */
	bytes = extent_append_ptr(v, n * 8, 8, &ca, &p, out);
	describe(out, bytes, 8, d);
	assert_string_equal(d, "ca p0 p3 ");
	/* another crc: it comes first */
	bytes = extent_append_ptr(v, n * 8, 8, &cz, &p, out);
	describe(out, bytes, 8, d);
	assert_string_equal(d, "ca p0 cc p3 ");
	/* no crc after a crc: one that says "none" (csum 0) */
	bytes = extent_append_ptr(v, n * 8, 8, &none, &p, out);
	describe(out, bytes, 8, d);
	assert_string_equal(d, "ca p0 c0 p3 ");
	/* no crc on a value without crc: the pointer alone */
	n = put_ptr(v, 0, 0, 100, false);
	bytes = extent_append_ptr(v, n * 8, 8, &none, &p, out);
	describe(out, bytes, 8, d);
	assert_string_equal(d, "p0 p3 ");
	/* full: refused */
	n = 0;
	for (unsigned i = 0; i < 20; i++)
		n = put_ptr(v, n, i, 100 + i, false);
	assert_int_equal(extent_append_ptr(v, n * 8, 8, &ca, &p, out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop),
		cmocka_unit_test(test_append),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
