// SPDX-License-Identifier: GPL-2.0
/*
 * The qcow2 image writer of dump (doc/tools.md §5, with a refcount table).
 * See qcow2.h for the layout.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/qcow2.h"
#include "util/util.h"

#define QCOW2_MAGIC		0x514649fbU	/* "QFI\xfb" */
#define QCOW2_VERSION		2
#define QCOW2_HEADER_BYTES	72
#define QCOW2_COPIED		(1ULL << 63)	/* refcount is exactly 1 */
#define CHUNK_BYTES		(1U << 20)	/* data written per pwrite, at most */

void qcow2_ranges_add(struct qcow2_ranges *l, uint64_t start, uint64_t len, bool copy)
{
	if (!len)
		return;
	if (l->nr == l->size) {
		l->size = l->size ? 2 * l->size : 64;
		l->r = xrealloc(l->r, l->size * sizeof(*l->r));
	}
	l->r[l->nr++] = (struct qcow2_range) { start, len, copy };
}

void qcow2_ranges_exit(struct qcow2_ranges *l)
{
	free(l->r);
	*l = (struct qcow2_ranges) { 0 };
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* [s, e): clusters or bytes */
struct ival {
	uint64_t	s, e;
};

static int ival_cmp(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* Sort and merge overlapping or touching intervals in place; the new count. */
static size_t ival_merge(struct ival *v, size_t nr)
{
	size_t n = 0;

	if (!nr)
		return 0;
	qsort(v, nr, sizeof(*v), ival_cmp);
	for (size_t i = 1; i < nr; i++) {
		if (v[i].s <= v[n].e) {
			if (v[i].e > v[n].e)
				v[n].e = v[i].e;
		} else
			v[++n] = v[i];
	}
	return n + 1;
}

struct qw {
	int		fd;
	uint64_t	cs;		/* cluster bytes */
	struct printbuf	*err;
};

static int write_at(struct qw *w, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t r = pwrite(w->fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int ret = r < 0 ? -errno : -EIO;

			pr_buf(w->err, "writing the image at byte %" PRIu64 ": %s\n", off, strerror(-ret));
			return ret;
		}
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

int qcow2_write(int fd, uint64_t dev_bytes, unsigned cluster_bits,
		const struct qcow2_ranges *ranges, qcow2_read_fn read_fn, void *priv,
		struct qcow2_stats *stats, struct printbuf *err)
{
	struct qw w = { .fd = fd, .err = err };
	struct ival *cl = NULL, *cp = NULL;
	size_t nr_cl = 0, nr_cp = 0, l1_size, cp_i = 0;
	uint64_t cs, per_l2, per_rb, nr_data = 0, nr_l2 = 0, l1c, rtc = 0, rbc = 0, total;
	uint64_t l1_off, rt_off, rb_off, l2_off, data_off, last_g = UINT64_MAX;
	uint8_t *buf = NULL, *l1 = NULL, *l2 = NULL;
	uint64_t cur_g = UINT64_MAX, l2_idx = 0, data_idx = 0;
	int ret = 0;

	memset(stats, 0, sizeof(*stats));
	if (cluster_bits < 9 || cluster_bits > 21) {
		pr_buf(err, "qcow2 cluster size 2^%u bytes is not allowed (2^9 to 2^21)\n", cluster_bits);
		return -EINVAL;
	}
	cs = w.cs = 1ULL << cluster_bits;
	per_l2 = cs / 8;
	per_rb = cs / 2;

	/* clusters to allocate, bytes to copy (clipped to the device) */
	cl = xcalloc(ranges->nr + 1, sizeof(*cl));
	cp = xcalloc(ranges->nr + 1, sizeof(*cp));
	for (size_t i = 0; i < ranges->nr; i++) {
		uint64_t s = ranges->r[i].start, e;

		if (s >= dev_bytes)
			continue;
		e = ranges->r[i].len > dev_bytes - s ? dev_bytes : s + ranges->r[i].len;
		cl[nr_cl++] = (struct ival) { s >> cluster_bits, (e + cs - 1) >> cluster_bits };
		if (ranges->r[i].copy)
			cp[nr_cp++] = (struct ival) { s, e };
	}
	nr_cl = ival_merge(cl, nr_cl);
	nr_cp = ival_merge(cp, nr_cp);
	for (size_t i = 0; i < nr_cl; i++) {
		uint64_t g0 = cl[i].s / per_l2, g1 = (cl[i].e - 1) / per_l2;

		nr_data += cl[i].e - cl[i].s;
		nr_l2 += g1 - g0 + 1 - (g0 == last_g);
		last_g = g1;
	}

	/* sizes in clusters; the refcount blocks count themselves */
	l1_size = (size_t)DIV_ROUND_UP(dev_bytes, cs * per_l2);
	l1c = DIV_ROUND_UP((uint64_t)l1_size * 8, cs) ?: 1;
	for (;;) {
		uint64_t t = 1 + l1c + rtc + rbc + nr_l2 + nr_data;
		uint64_t rb = DIV_ROUND_UP(t, per_rb), rt = DIV_ROUND_UP(rb * 8, cs);

		if (rb == rbc && rt == rtc)
			break;
		rbc = rb;
		rtc = rt;
	}
	total = 1 + l1c + rtc + rbc + nr_l2 + nr_data;
	l1_off = cs;
	rt_off = l1_off + l1c * cs;
	rb_off = rt_off + rtc * cs;
	l2_off = rb_off + rbc * cs;
	data_off = l2_off + nr_l2 * cs;

	buf = xcalloc(1, CHUNK_BYTES > cs ? CHUNK_BYTES : cs);
	l2 = xcalloc(1, cs);

	/* header */
	put_be32(buf + 0, QCOW2_MAGIC);
	put_be32(buf + 4, QCOW2_VERSION);
	put_be32(buf + 20, cluster_bits);
	put_be64(buf + 24, dev_bytes);
	put_be32(buf + 36, (uint32_t)l1_size);
	put_be64(buf + 40, l1_off);
	put_be64(buf + 48, rt_off);
	put_be32(buf + 56, (uint32_t)rtc);
	ret = write_at(&w, buf, cs, 0);
	if (ret)
		goto out;

	/* L1: the L2 tables in guest order */
	l1 = xcalloc(l1c, cs);
	last_g = UINT64_MAX;
	for (size_t i = 0, n = 0; i < nr_cl; i++)
		for (uint64_t g = cl[i].s / per_l2; g <= (cl[i].e - 1) / per_l2; g++)
			if (g != last_g) {
				put_be64(l1 + 8 * g, (l2_off + n++ * cs) | QCOW2_COPIED);
				last_g = g;
			}
	ret = write_at(&w, l1, l1c * cs, l1_off);
	if (ret)
		goto out;

	/* refcount table, then blocks: every cluster of the file counts 1 */
	for (uint64_t t = 0; t < rtc && !ret; t++) {
		memset(buf, 0, cs);
		for (uint64_t i = 0; i < per_l2 && t * per_l2 + i < rbc; i++)
			put_be64(buf + 8 * i, rb_off + (t * per_l2 + i) * cs);
		ret = write_at(&w, buf, cs, rt_off + t * cs);
	}
	for (uint64_t b = 0; b < rbc && !ret; b++) {
		memset(buf, 0, cs);
		for (uint64_t i = 0; i < per_rb && b * per_rb + i < total; i++)
			put_be16(buf + 2 * i, 1);
		ret = write_at(&w, buf, cs, rb_off + b * cs);
	}
	if (ret)
		goto out;

	/* data, a run of clusters at a time, and the L2 tables as they fill */
	for (size_t i = 0; i < nr_cl && !ret; i++) {
		uint64_t c = cl[i].s;

		while (c < cl[i].e && !ret) {
			uint64_t n = min_t(uint64_t, cl[i].e - c, CHUNK_BYTES / cs ?: 1);
			uint64_t s = c * cs, e = (c + n) * cs;

			memset(buf, 0, n * cs);
			while (cp_i < nr_cp && cp[cp_i].e <= s)
				cp_i++;
			for (size_t j = cp_i; j < nr_cp && cp[j].s < e; j++) {
				uint64_t a = cp[j].s > s ? cp[j].s : s;
				uint64_t b = cp[j].e < e ? cp[j].e : e;
				int r = read_fn(priv, buf + (a - s), (size_t)(b - a), a);

				if (r) {
					/* a damaged device: the region stays zero */
					pr_buf(err, "reading bytes %" PRIu64 "-%" PRIu64 " of the device: %s; "
					       "left as zeros in the image\n", a, b, strerror(-r));
					memset(buf + (a - s), 0, (size_t)(b - a));
					continue;
				}
				stats->copied_bytes += b - a;
			}
			ret = write_at(&w, buf, n * cs, data_off + data_idx * cs);
			for (uint64_t k = 0; k < n && !ret; k++) {
				uint64_t g = (c + k) / per_l2;

				if (g != cur_g) {
					if (cur_g != UINT64_MAX)
						ret = write_at(&w, l2, cs, l2_off + l2_idx++ * cs);
					memset(l2, 0, cs);
					cur_g = g;
				}
				put_be64(l2 + 8 * ((c + k) % per_l2),
					 (data_off + (data_idx + k) * cs) | QCOW2_COPIED);
			}
			data_idx += n;
			c += n;
		}
	}
	if (!ret && cur_g != UINT64_MAX)
		ret = write_at(&w, l2, cs, l2_off + l2_idx++ * cs);
	if (!ret && (l2_idx != nr_l2 || data_idx != nr_data)) {
		pr_buf(err, "qcow2 writer: %" PRIu64 "/%" PRIu64 " L2 tables, %" PRIu64 "/%" PRIu64
		       " data clusters written (internal error)\n", l2_idx, nr_l2, data_idx, nr_data);
		ret = -EINVAL;
	}
	if (!ret) {
		stats->data_clusters = nr_data;
		stats->file_bytes = total * cs;
	}
out:
	free(cl);
	free(cp);
	free(buf);
	free(l1);
	free(l2);
	return ret;
}
