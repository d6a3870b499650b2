// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for libbcachefs/qcow2.c: images written from an in-memory
 * device are read back by a small independent qcow2 reader (header, L1/L2
 * lookup, refcounts of every cluster of the file): every cluster a range
 * touches maps to the device's bytes where the range copies and to zeros
 * elsewhere, nothing else is mapped, every cluster of the file counts 1
 * and no cluster is referenced twice.
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
#include <sys/stat.h>
#include <unistd.h>

#include "tools/qcow2.h"
#include "util/util.h"

static uint64_t be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

struct mem_dev {
	uint8_t		*b;
	uint64_t	size;
	unsigned	nr_reads;
	uint64_t	fail_at;	/* a read covering this byte fails (UINT64_MAX: none) */
};

static int mem_read(void *priv, void *buf, size_t len, uint64_t off)
{
	struct mem_dev *d = priv;

	assert_true(off + len <= d->size);
	d->nr_reads++;
	if (d->fail_at >= off && d->fail_at < off + len)
		return -EIO;
	memcpy(buf, d->b + off, len);
	return 0;
}

/* Written image of @d with @r; its bytes in *@img (malloc'd). */
static size_t write_image(struct mem_dev *d, unsigned cbits, const struct qcow2_ranges *r,
			  uint8_t **img, struct qcow2_stats *st, struct printbuf *err)
{
	FILE *f = tmpfile();
	struct stat s;
	int ret;

	assert_non_null(f);
	ret = qcow2_write(fileno(f), d->size, cbits, r, mem_read, d, st, err);
	assert_int_equal(ret, 0);
	assert_int_equal(fstat(fileno(f), &s), 0);
	assert_int_equal((uint64_t)s.st_size, st->file_bytes);
	*img = xmalloc((size_t)s.st_size);
	assert_int_equal(pread(fileno(f), *img, (size_t)s.st_size, 0), s.st_size);
	fclose(f);
	return (size_t)s.st_size;
}

/*
 * Check the image against @d and @r: the reader of this test, then the
 * expected content of every guest cluster.
 */
static void check_image(const uint8_t *img, size_t len, struct mem_dev *d, unsigned cbits,
			const struct qcow2_ranges *r)
{
	uint64_t cs = 1ULL << cbits, per_l2 = cs / 8, nr_clusters = len / cs;
	uint64_t l1_size, l1_off, rt_off, rt_clusters, nr_guest = DIV_ROUND_UP(d->size, cs);
	uint8_t *refs = xcalloc(nr_clusters, 1), *want = xcalloc(nr_guest, 1);
	uint8_t *expect = xcalloc(1, cs);

	assert_int_equal(len % cs, 0);
	assert_int_equal(be(img, 4), 0x514649fb);
	assert_int_equal(be(img + 4, 4), 2);
	assert_int_equal(be(img + 20, 4), cbits);
	assert_int_equal(be(img + 24, 8), d->size);
	assert_int_equal(be(img + 32, 4), 0);		/* no encryption */
	assert_int_equal(be(img + 60, 4), 0);		/* no snapshots */
	l1_size = be(img + 36, 4);
	l1_off = be(img + 40, 8);
	rt_off = be(img + 48, 8);
	rt_clusters = be(img + 56, 4);
	assert_int_equal(l1_size, DIV_ROUND_UP(d->size, cs * per_l2));
	refs[0]++;					/* the header */

	/* the clusters the ranges touch */
	for (size_t i = 0; i < r->nr; i++) {
		uint64_t s = r->r[i].start, e = s + r->r[i].len;

		if (s >= d->size)
			continue;
		if (e > d->size)
			e = d->size;
		for (uint64_t c = s / cs; c < DIV_ROUND_UP(e, cs); c++)
			want[c] = 1;
	}

	/* L1 and L2: every mapped guest cluster holds what it should */
	assert_int_equal(l1_off % cs, 0);
	for (uint64_t c = l1_off / cs; c < DIV_ROUND_UP(l1_off + l1_size * 8, cs); c++)
		refs[c]++;
	for (uint64_t i = 0; i < l1_size; i++) {
		uint64_t e = be(img + l1_off + 8 * i, 8), l2 = e & 0x00fffffffffffe00ULL;

		if (!e) {
			for (uint64_t c = i * per_l2; c < (i + 1) * per_l2 && c < nr_guest; c++)
				assert_int_equal(want[c], 0);
			continue;
		}
		assert_true(e >> 63);			/* COPIED: refcount 1 */
		assert_int_equal(l2 % cs, 0);
		assert_true(l2 / cs < nr_clusters);
		refs[l2 / cs]++;
		for (uint64_t j = 0; j < per_l2; j++) {
			uint64_t c = i * per_l2 + j, de = be(img + l2 + 8 * j, 8);
			uint64_t data = de & 0x00fffffffffffe00ULL;

			if (c >= nr_guest) {
				assert_int_equal(de, 0);
				continue;
			}
			assert_int_equal(!!de, want[c]);
			if (!de)
				continue;
			assert_true(de >> 63);
			assert_int_equal(data % cs, 0);
			assert_true(data / cs < nr_clusters);
			refs[data / cs]++;
			/* expected bytes: the copied ranges, zero elsewhere */
			memset(expect, 0, cs);
			for (size_t k = 0; k < r->nr; k++) {
				uint64_t a = r->r[k].start, b = a + r->r[k].len;

				if (!r->r[k].copy)
					continue;
				if (b > d->size)
					b = d->size;
				if (a < c * cs)
					a = c * cs;
				if (b > (c + 1) * cs)
					b = (c + 1) * cs;
				if (a < b && (d->fail_at < a || d->fail_at >= b))
					memcpy(expect + (a - c * cs), d->b + a, b - a);
			}
			if (c * cs + cs > d->size)	/* the tail past the device */
				assert_true(c == nr_guest - 1);
			assert_memory_equal(img + data, expect, cs);
		}
	}

	/* refcounts: table, blocks (16 bits), every cluster of the file counts 1 */
	assert_true(rt_off && rt_off % cs == 0 && rt_clusters);
	for (uint64_t c = rt_off / cs; c < rt_off / cs + rt_clusters; c++)
		refs[c]++;
	for (uint64_t t = 0; t < rt_clusters * cs / 8; t++) {
		uint64_t rb = be(img + rt_off + 8 * t, 8);

		if (!rb) {
			assert_true(t * (cs / 2) >= nr_clusters);
			continue;
		}
		assert_int_equal(rb % cs, 0);
		refs[rb / cs]++;
		for (uint64_t k = 0; k < cs / 2; k++) {
			uint64_t c = t * (cs / 2) + k;

			assert_int_equal(be(img + rb + 2 * k, 2), c < nr_clusters ? 1 : 0);
		}
	}
	for (uint64_t c = 0; c < nr_clusters; c++)
		if (refs[c] != 1)
			fail_msg("cluster %llu of the image is referenced %u times",
				 (unsigned long long)c, refs[c]);
	free(refs);
	free(want);
	free(expect);
}

static struct mem_dev mem_dev_new(uint64_t size)
{
	struct mem_dev d = { .b = xmalloc(size), .size = size, .fail_at = UINT64_MAX };

	for (uint64_t i = 0; i < size; i++)
		d.b[i] = (uint8_t)(i * 2654435761U >> 13) | 1;	/* never zero */
	return d;
}

static void roundtrip(struct mem_dev *d, unsigned cbits, const struct qcow2_ranges *r)
{
	struct printbuf err = PRINTBUF;
	struct qcow2_stats st;
	uint8_t *img;
	size_t len = write_image(d, cbits, r, &img, &st, &err);

	check_image(img, len, d, cbits, r);
	free(img);
	printbuf_exit(&err);
}

static void test_simple(void **state)
{
	struct mem_dev d = mem_dev_new(1 << 20);
	struct qcow2_ranges r = { 0 };

	qcow2_ranges_add(&r, 7 * 512, 512, true);		/* layout */
	qcow2_ranges_add(&r, 8 * 512, 1112, true);		/* superblock */
	qcow2_ranges_add(&r, 136 * 512, 1112, true);
	qcow2_ranges_add(&r, 256 * 1024, 64 * 1024, false);	/* journal bucket */
	qcow2_ranges_add(&r, 256 * 1024 + 4096, 3 * 512, true);	/* an entry in it */
	qcow2_ranges_add(&r, 700 * 1024 + 100, 5000, true);	/* unaligned */
	roundtrip(&d, 14, &r);
	roundtrip(&d, 9, &r);
	roundtrip(&d, 16, &r);
	qcow2_ranges_exit(&r);
	free(d.b);
}

/* overlaps, ranges past the end, an odd device size, L2 boundaries */
static void test_edges(void **state)
{
	struct mem_dev d = mem_dev_new((1 << 20) + 1234);
	struct qcow2_ranges r = { 0 };

	qcow2_ranges_add(&r, 0, 100, true);
	qcow2_ranges_add(&r, 50, 100, true);
	qcow2_ranges_add(&r, 60, 10, false);
	qcow2_ranges_add(&r, 32 * 1024 - 10, 20, true);		/* across an L2 table (2^9) */
	qcow2_ranges_add(&r, d.size - 100, 1000, true);		/* clipped at the end */
	qcow2_ranges_add(&r, d.size + 512, 512, true);		/* past it: nothing */
	qcow2_ranges_add(&r, 400000, 0, true);			/* empty: nothing */
	roundtrip(&d, 9, &r);
	roundtrip(&d, 12, &r);

	/* no range at all: header, L1 and refcounts only */
	qcow2_ranges_exit(&r);
	roundtrip(&d, 12, &r);
	free(d.b);
}

/* many clusters: several refcount blocks and a refcount table of several clusters */
static void test_many(void **state)
{
	struct mem_dev d = mem_dev_new(12 << 20);
	struct qcow2_ranges r = { 0 };

	for (uint64_t o = 0; o < d.size; o += 1024)
		qcow2_ranges_add(&r, o + 3, 700, (o / 1024) % 3 != 0);
	roundtrip(&d, 9, &r);		/* 24k clusters: refcount table of 2 clusters */
	qcow2_ranges_exit(&r);
	free(d.b);
}

/* a read error leaves zeros and a message, the image is still valid */
static void test_read_error(void **state)
{
	struct mem_dev d = mem_dev_new(1 << 20);
	struct qcow2_ranges r = { 0 };
	struct printbuf err = PRINTBUF;
	struct qcow2_stats st;
	uint8_t *img;
	size_t len;

	qcow2_ranges_add(&r, 4096, 4096, true);
	qcow2_ranges_add(&r, 65536, 4096, true);
	d.fail_at = 65536 + 10;
	len = write_image(&d, 12, &r, &img, &st, &err);
	assert_non_null(strstr(printbuf_str(&err), "left as zeros"));
	assert_int_equal(st.copied_bytes, 4096);
	check_image(img, len, &d, 12, &r);
	free(img);
	printbuf_exit(&err);
	qcow2_ranges_exit(&r);
	free(d.b);
}

static void test_bad_cluster_size(void **state)
{
	struct mem_dev d = mem_dev_new(4096);
	struct qcow2_ranges r = { 0 };
	struct printbuf err = PRINTBUF;
	struct qcow2_stats st;

	assert_int_equal(qcow2_write(-1, d.size, 8, &r, mem_read, &d, &st, &err), -EINVAL);
	assert_int_equal(qcow2_write(-1, d.size, 22, &r, mem_read, &d, &st, &err), -EINVAL);
	assert_int_equal(d.nr_reads, 0);
	printbuf_exit(&err);
	free(d.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_read_error),
		cmocka_unit_test(test_bad_cluster_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
