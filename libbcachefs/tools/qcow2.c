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

/* The writer: the image's geometry, where each part goes, and the output. */
struct qw {
	int		fd;
	uint64_t	cs;		/* cluster bytes */
	struct printbuf	*err;

	uint64_t	per_l2;		/* entries of an L2 table (and of a refcount table cluster) */
	uint64_t	per_rb;		/* refcounts of a refcount block */
	size_t		l1_size;	/* L1 entries */
	/* clusters: L1, refcount table, refcount blocks, L2 tables, data, the file */
	uint64_t	l1c, rtc, rbc, nr_l2, nr_data, total;
	uint64_t	l1_off, rt_off, rb_off, l2_off, data_off;
	uint8_t		*buf;		/* a cluster or CHUNK_BYTES, the larger */
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

/*
 * The clusters to allocate (*@cl) and the bytes to copy (*@cp) of @ranges,
 * clipped to the device, sorted and merged; the arrays are malloc'd.
 */
static void qw_intervals(const struct qw *w, const struct qcow2_ranges *ranges, uint64_t dev_bytes,
			 unsigned cluster_bits, struct ival **cl, size_t *nr_cl,
			 struct ival **cp, size_t *nr_cp)
{
	*cl = xcalloc(ranges->nr + 1, sizeof(**cl));
	*cp = xcalloc(ranges->nr + 1, sizeof(**cp));
	*nr_cl = *nr_cp = 0;
	for (size_t i = 0; i < ranges->nr; i++) {
		uint64_t s = ranges->r[i].start, e;

		if (s >= dev_bytes)
			continue;
		e = ranges->r[i].len > dev_bytes - s ? dev_bytes : s + ranges->r[i].len;
		(*cl)[(*nr_cl)++] = (struct ival) { s >> cluster_bits, (e + w->cs - 1) >> cluster_bits };
		if (ranges->r[i].copy)
			(*cp)[(*nr_cp)++] = (struct ival) { s, e };
	}
	*nr_cl = ival_merge(*cl, *nr_cl);
	*nr_cp = ival_merge(*cp, *nr_cp);
}

/* Where everything goes: sizes in clusters (the refcount blocks count themselves). */
static void qw_layout(struct qw *w, uint64_t dev_bytes, const struct ival *cl, size_t nr_cl)
{
	uint64_t cs = w->cs, last_g = UINT64_MAX;

	for (size_t i = 0; i < nr_cl; i++) {
		uint64_t g0 = cl[i].s / w->per_l2, g1 = (cl[i].e - 1) / w->per_l2;

		w->nr_data += cl[i].e - cl[i].s;
		w->nr_l2 += g1 - g0 + 1 - (g0 == last_g);
		last_g = g1;
	}
	w->l1_size = (size_t)DIV_ROUND_UP(dev_bytes, cs * w->per_l2);
	w->l1c = DIV_ROUND_UP((uint64_t)w->l1_size * 8, cs) ?: 1;
	for (;;) {
		uint64_t t = 1 + w->l1c + w->rtc + w->rbc + w->nr_l2 + w->nr_data;
		uint64_t rb = DIV_ROUND_UP(t, w->per_rb), rt = DIV_ROUND_UP(rb * 8, cs);

		if (rb == w->rbc && rt == w->rtc)
			break;
		w->rbc = rb;
		w->rtc = rt;
	}
	w->total = 1 + w->l1c + w->rtc + w->rbc + w->nr_l2 + w->nr_data;
	w->l1_off = cs;
	w->rt_off = w->l1_off + w->l1c * cs;
	w->rb_off = w->rt_off + w->rtc * cs;
	w->l2_off = w->rb_off + w->rbc * cs;
	w->data_off = w->l2_off + w->nr_l2 * cs;
}

static int qw_write_header(struct qw *w, unsigned cluster_bits, uint64_t dev_bytes)
{
	uint8_t *buf = w->buf;

	put_be32(buf + 0, QCOW2_MAGIC);
	put_be32(buf + 4, QCOW2_VERSION);
	put_be32(buf + 20, cluster_bits);
	put_be64(buf + 24, dev_bytes);
	put_be32(buf + 36, (uint32_t)w->l1_size);
	put_be64(buf + 40, w->l1_off);
	put_be64(buf + 48, w->rt_off);
	put_be32(buf + 56, (uint32_t)w->rtc);
	return write_at(w, buf, w->cs, 0);
}

/* L1: the L2 tables in guest order. */
static int qw_write_l1(struct qw *w, const struct ival *cl, size_t nr_cl)
{
	uint8_t *l1 = xcalloc(w->l1c, w->cs);
	uint64_t last_g = UINT64_MAX;
	int ret;

	for (size_t i = 0, n = 0; i < nr_cl; i++)
		for (uint64_t g = cl[i].s / w->per_l2; g <= (cl[i].e - 1) / w->per_l2; g++)
			if (g != last_g) {
				put_be64(l1 + 8 * g, (w->l2_off + n++ * w->cs) | QCOW2_COPIED);
				last_g = g;
			}
	ret = write_at(w, l1, w->l1c * w->cs, w->l1_off);
	free(l1);
	return ret;
}

/* The refcount table, then the blocks: every cluster of the file counts 1. */
static int qw_write_refcounts(struct qw *w)
{
	uint8_t *buf = w->buf;
	uint64_t cs = w->cs;
	int ret = 0;

	for (uint64_t t = 0; t < w->rtc && !ret; t++) {
		memset(buf, 0, cs);
		for (uint64_t i = 0; i < w->per_l2 && t * w->per_l2 + i < w->rbc; i++)
			put_be64(buf + 8 * i, w->rb_off + (t * w->per_l2 + i) * cs);
		ret = write_at(w, buf, cs, w->rt_off + t * cs);
	}
	for (uint64_t b = 0; b < w->rbc && !ret; b++) {
		memset(buf, 0, cs);
		for (uint64_t i = 0; i < w->per_rb && b * w->per_rb + i < w->total; i++)
			put_be16(buf + 2 * i, 1);
		ret = write_at(w, buf, cs, w->rb_off + b * cs);
	}
	return ret;
}

/*
 * Bytes [@s, @e) of the device into @buf: the parts @cp says to copy
 * (from *@cp_i on), the rest zero. A read that fails leaves zeros (a
 * damaged device), said in the error buffer.
 */
static void qw_read_chunk(struct qw *w, uint8_t *buf, uint64_t s, uint64_t e,
			  const struct ival *cp, size_t nr_cp, size_t *cp_i,
			  qcow2_read_fn read_fn, void *priv, struct qcow2_stats *stats)
{
	memset(buf, 0, (size_t)(e - s));
	while (*cp_i < nr_cp && cp[*cp_i].e <= s)
		(*cp_i)++;
	for (size_t j = *cp_i; j < nr_cp && cp[j].s < e; j++) {
		uint64_t a = cp[j].s > s ? cp[j].s : s;
		uint64_t b = cp[j].e < e ? cp[j].e : e;
		int r = read_fn(priv, buf + (a - s), (size_t)(b - a), a);

		if (r) {
			/* a damaged device: the region stays zero */
			pr_buf(w->err, "reading bytes %" PRIu64 "-%" PRIu64 " of the device: %s; "
			       "left as zeros in the image\n", a, b, strerror(-r));
			memset(buf + (a - s), 0, (size_t)(b - a));
			continue;
		}
		stats->copied_bytes += b - a;
	}
}

/* The data, a run of clusters at a time, and the L2 tables as they fill. */
static int qw_write_data(struct qw *w, const struct ival *cl, size_t nr_cl,
			 const struct ival *cp, size_t nr_cp,
			 qcow2_read_fn read_fn, void *priv, struct qcow2_stats *stats)
{
	uint8_t *buf = w->buf, *l2 = xcalloc(1, w->cs);
	uint64_t cs = w->cs, cur_g = UINT64_MAX, l2_idx = 0, data_idx = 0;
	size_t cp_i = 0;
	int ret = 0;

	for (size_t i = 0; i < nr_cl && !ret; i++) {
		uint64_t c = cl[i].s;

		while (c < cl[i].e && !ret) {
			uint64_t n = min_t(uint64_t, cl[i].e - c, CHUNK_BYTES / cs ?: 1);

			qw_read_chunk(w, buf, c * cs, (c + n) * cs, cp, nr_cp, &cp_i,
				      read_fn, priv, stats);
			ret = write_at(w, buf, n * cs, w->data_off + data_idx * cs);
			for (uint64_t k = 0; k < n && !ret; k++) {
				uint64_t g = (c + k) / w->per_l2;

				if (g != cur_g) {
					if (cur_g != UINT64_MAX)
						ret = write_at(w, l2, cs, w->l2_off + l2_idx++ * cs);
					memset(l2, 0, cs);
					cur_g = g;
				}
				put_be64(l2 + 8 * ((c + k) % w->per_l2),
					 (w->data_off + (data_idx + k) * cs) | QCOW2_COPIED);
			}
			data_idx += n;
			c += n;
		}
	}
	if (!ret && cur_g != UINT64_MAX)
		ret = write_at(w, l2, cs, w->l2_off + l2_idx++ * cs);
	if (!ret && (l2_idx != w->nr_l2 || data_idx != w->nr_data)) {
		pr_buf(w->err, "qcow2 writer: %" PRIu64 "/%" PRIu64 " L2 tables, %" PRIu64 "/%" PRIu64
		       " data clusters written (internal error)\n", l2_idx, w->nr_l2, data_idx, w->nr_data);
		ret = -EINVAL;
	}
	free(l2);
	return ret;
}

int qcow2_write(int fd, uint64_t dev_bytes, unsigned cluster_bits,
		const struct qcow2_ranges *ranges, qcow2_read_fn read_fn, void *priv,
		struct qcow2_stats *stats, struct printbuf *err)
{
	struct qw w = { .fd = fd, .err = err };
	struct ival *cl = NULL, *cp = NULL;
	size_t nr_cl, nr_cp;
	int ret;

	memset(stats, 0, sizeof(*stats));
	if (cluster_bits < 9 || cluster_bits > 21) {
		pr_buf(err, "qcow2 cluster size 2^%u bytes is not allowed (2^9 to 2^21)\n", cluster_bits);
		return -EINVAL;
	}
	w.cs = 1ULL << cluster_bits;
	w.per_l2 = w.cs / 8;
	w.per_rb = w.cs / 2;

	qw_intervals(&w, ranges, dev_bytes, cluster_bits, &cl, &nr_cl, &cp, &nr_cp);
	qw_layout(&w, dev_bytes, cl, nr_cl);
	w.buf = xcalloc(1, CHUNK_BYTES > w.cs ? CHUNK_BYTES : w.cs);

	ret = qw_write_header(&w, cluster_bits, dev_bytes) ?:
	      qw_write_l1(&w, cl, nr_cl) ?:
	      qw_write_refcounts(&w) ?:
	      qw_write_data(&w, cl, nr_cl, cp, nr_cp, read_fn, priv, stats);
	if (!ret) {
		stats->data_clusters = w.nr_data;
		stats->file_bytes = w.total * w.cs;
	}
	free(cl);
	free(cp);
	free(w.buf);
	return ret;
}
