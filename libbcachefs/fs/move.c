// SPDX-License-Identifier: GPL-2.0
/*
 * Moving extents (doc/engine.md §17): see move.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fs/move.h"
#include "alloc/alloc.h"
#include "bkey/extent_edit.h"
#include "bkey/extents.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "codec/checksum.h"
#include "core/bch_fs.h"
#include "dev/dev.h"
#include "format/format.h"
#include "fs/durability.h"
#include "fs/io_read.h"
#include "util/errcode.h"
#include "util/util.h"

void bch_mover_init(struct bch_mover *m, struct bch_fs *c)
{
	memset(m, 0, sizeof(*m));
	m->c = c;
}

void bch_mover_release(struct bch_mover *m)
{
	for (size_t i = 0; i < m->nr_retired; i++)
		bch_fs_rw_data_bucket_close(m->c, m->retired[i].dev, m->retired[i].bucket);
	m->nr_retired = 0;
}

/* @dev's open bucket is full: held until the next bch_mover_release(). */
static void mover_retire(struct bch_mover *m, unsigned dev)
{
	if (m->nr_retired == m->size_retired) {
		m->size_retired = m->size_retired ? 2 * m->size_retired : 16;
		m->retired = xrealloc(m->retired, m->size_retired * sizeof(*m->retired));
	}
	m->retired[m->nr_retired].dev = dev;
	m->retired[m->nr_retired].bucket = m->ob[dev].bucket;
	m->nr_retired++;
	m->ob[dev].open = false;
}

void bch_mover_close(struct bch_mover *m)
{
	bch_mover_release(m);
	for (unsigned d = 0; d < BCH_ALLOC_MAX_DEVS; d++)
		if (m->ob[d].open) {
			bch_fs_rw_data_bucket_close(m->c, d, m->ob[d].bucket);
			m->ob[d].open = false;
		}
	m->full = 0;
}

void bch_mover_exit(struct bch_mover *m)
{
	bch_mover_close(m);
	free(m->buf);
	free(m->retired);
	m->buf = NULL;
	m->buf_size = 0;
	m->retired = NULL;
	m->size_retired = 0;
}

uint64_t bch_move_floor(struct bch_fs *c, unsigned dev, bool gc)
{
	uint64_t r = bch_fs_rw_reserve(c, dev);

	return gc ? r / 2 : r;
}

unsigned bch_move_region_sectors(const struct bkey_ref *k, const struct extent_ptr_decoded *p)
{
	return p->crc.entry_type >= 0 ? p->crc.compressed_size : k->k.size;
}

bool bch_move_ptr_stale(struct bch_fs *c, const struct bch_extent_ptr_unpacked *p)
{
	struct bch_member_dev *ca = p->dev < BCH_FS_MAX_DEVS ? c->devs[p->dev] : NULL;
	uint8_t gen;

	if (!ca || !ca->bucket_size)
		return true;
	return bch_fs_rw_bucket_gen(c, p->dev, p->offset / ca->bucket_size, &gen) &&
	       gen_after(gen, p->gen);
}

bool bch_move_dev_takes_data(struct bch_fs *c, unsigned dev)
{
	const struct bch_allocator *a = bch_fs_rw_alloc(c);
	const struct bch_dev_alloc *d = a && dev < BCH_ALLOC_MAX_DEVS ? a->devs[dev] : NULL;

	return d && d->present && d->state == BCH_MEMBER_STATE_RW && d->durability &&
	       (d->data_allowed & (1U << BCH_DATA_USER));
}

bool bch_move_dev_takes_cached(struct bch_fs *c, unsigned dev)
{
	const struct bch_allocator *a = bch_fs_rw_alloc(c);
	const struct bch_dev_alloc *d = a && dev < BCH_ALLOC_MAX_DEVS ? a->devs[dev] : NULL;

	return d && d->present && d->state == BCH_MEMBER_STATE_RW &&
	       (d->data_allowed & (1U << BCH_DATA_USER));
}

uint64_t bch_extent_key_devs(const struct bkey_ref *k)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	uint64_t devs = 0;

	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0)
		if (p.ptr.dev < 64)
			devs |= 1ULL << p.ptr.dev;
	return devs;
}

uint64_t bch_extent_dirty_devs(const struct bkey_ref *k, unsigned *nr)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	uint64_t devs = 0;

	*nr = 0;
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0)
		if (!p.ptr.cached && k->k.type == BCH_EXTENT && p.ptr.dev < 64) {
			devs |= 1ULL << p.ptr.dev;
			(*nr)++;
		}
	return devs;
}

unsigned bch_extent_durability(struct bch_fs *c, const struct bkey_ref *k)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	unsigned n = 0;

	if (k->k.type != BCH_EXTENT)
		return 0;
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0)
		if (!p.ptr.cached && !bch_move_ptr_stale(c, &p.ptr))
			n += bch_dev_ptr_durability(c, p.ptr.dev);
	return n;
}

int bch_move_read_region(struct bch_mover *m, const struct bkey_ref *k,
			 const struct extent_ptr_decoded *p, struct printbuf *why)
{
	struct bch_fs *c = m->c;
	const struct bch_extent_crc_unpacked *crc = &p->crc;
	size_t bytes = (size_t)bch_move_region_sectors(k, p) << 9;
	struct bch_csum_val want = { crc->csum_lo, crc->csum_hi }, got;
	int ret;

	if (!bytes || bytes > (size_t)BCH_READ_ENCODED_MAX_SECTORS << 9) {
		pr_buf(why, "bad stored size %zu", bytes >> 9);
		return -EIO;
	}
	if (m->buf_size < bytes) {
		free(m->buf);
		m->buf = xmalloc(bytes);
		m->buf_size = bytes;
	}
	ret = bch_dev_read(c, p->ptr.dev, m->buf, bytes, p->ptr.offset);
	if (ret) {
		pr_buf(why, "read error on device %u sector %" PRIu64 ": %s", p->ptr.dev,
		       (uint64_t)p->ptr.offset, bch_err_str(ret));
		return -EIO;
	}
	if (crc->entry_type < 0 || !crc->csum_type)
		return 0;
	if (bch_csum_type_is_encryption(crc->csum_type) && !c->have_key) {
		pr_str(why, "encrypted and the key is not loaded");
		return -BCH_ERR_no_key;
	}
	ret = bch_checksum(crc->csum_type,
			   bch_nonce_extent(k->k.version_lo, k->k.version_hi, crc->compression_type,
					    crc->uncompressed_size, crc->nonce),
			   bch_csum_type_is_encryption(crc->csum_type) ? &c->key : NULL,
			   m->buf, bytes, &got);
	if (ret)
		return ret;
	if (!bch_csum_eq(want, got)) {
		pr_buf(why, "checksum error on device %u sector %" PRIu64, p->ptr.dev,
		       (uint64_t)p->ptr.offset);
		return -BCH_ERR_csum_mismatch;
	}
	return 0;
}

int bch_move_read_good(struct bch_mover *m, const struct bkey_ref *k, uint64_t avoid,
		       struct extent_ptr_decoded *src, struct printbuf *why)
{
	for (int pass = 0; pass < 2; pass++) {
		struct extent_ptr_iter it;
		struct extent_ptr_decoded p;

		extent_ptr_iter_init(&it, k);
		while (extent_ptr_iter_next(&it, &p) > 0) {
			bool late = p.ptr.dev < 64 && (avoid & (1ULL << p.ptr.dev));

			if (late != (pass == 1) || bch_move_ptr_stale(m->c, &p.ptr) ||
			    !bch_dev_present(m->c, p.ptr.dev))
				continue;
			if (why->pos)
				pr_str(why, "; ");
			if (!bch_move_read_region(m, k, &p, why)) {
				*src = p;
				return 0;
			}
		}
	}
	if (!why->pos)
		pr_str(why, "no copy on a device that is present");
	return -EIO;
}

int bch_move_write(struct bch_mover *m, unsigned sectors, uint64_t exclude,
		   struct bch_extent_ptr_unpacked *ptr, struct printbuf *err)
{
	struct bch_fs *c = m->c;
	const struct bch_allocator *a = bch_fs_rw_alloc(c);
	int ret;

	if (!a)
		return -EROFS;
	for (;;) {
		unsigned dev = UINT32_MAX;
		uint64_t best = 0;

		for (unsigned d = 0; d < BCH_ALLOC_MAX_DEVS; d++) {
			uint64_t f;

			if ((exclude | m->full) & (1ULL << d) ||
			    !(m->cached ? bch_move_dev_takes_cached(c, d) : bch_move_dev_takes_data(c, d)) ||
			    a->devs[d]->bucket_size < sectors)
				continue;
			f = bch_alloc_dev_free(a, d) + (m->ob[d].open ? 1 : 0);
			if (dev == UINT32_MAX || f > best) {
				dev = d;
				best = f;
			}
		}
		if (dev == UINT32_MAX)
			return -BCH_ERR_nospc;
		if (m->ob[dev].open && m->ob[dev].bucket_size - m->ob[dev].used < sectors)
			mover_retire(m, dev);
		if (!m->ob[dev].open) {
			ret = bch_fs_rw_data_bucket_keep(c, dev, bch_move_floor(c, dev, m->gc),
							 &m->ob[dev].bucket, &m->ob[dev].gen, err);
			if (ret == -BCH_ERR_nospc) {
				m->full |= 1ULL << dev;
				continue;
			}
			if (ret)
				return ret;
			m->ob[dev].open = true;
			m->ob[dev].used = 0;
			m->ob[dev].bucket_size = a->devs[dev]->bucket_size;
		}
		*ptr = (struct bch_extent_ptr_unpacked) {
			.offset = m->ob[dev].bucket * m->ob[dev].bucket_size + m->ob[dev].used,
			.dev = (uint8_t)dev,
			.gen = m->ob[dev].gen,
			.cached = m->cached,
		};
		ret = dev_pwrite(c->devs[dev]->io, m->buf, (size_t)sectors << 9, ptr->offset << 9);
		if (ret) {
			pr_buf(err, "%s: writing a copy at sector %" PRIu64 ": %s", c->devs[dev]->io->path,
			       (uint64_t)ptr->offset, bch_err_str(ret));
			return ret;
		}
		m->ob[dev].used += sectors;
		return 0;
	}
}

bool bch_move_key_unchanged(struct bch_fs *c, const struct bkey_ref *k)
{
	struct printbuf ignore = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *cur;
	bool same;

	if (k->k.size > k->k.p.offset)
		return false;
	bch_btree_iter_init_range(&iter, c, BTREE_ID_EXTENTS,
				  POS_H(k->k.p.inode, k->k.p.offset - k->k.size), k->k.p, &ignore);
	same = !bch_btree_iter_peek(&iter, &cur) && cur &&
	       !bpos_cmp(cur->k.p, k->k.p) && cur->k.size == k->k.size &&
	       cur->k.type == k->k.type && cur->k.version_lo == k->k.version_lo &&
	       cur->k.version_hi == k->k.version_hi && cur->v_bytes == k->v_bytes &&
	       (!k->v_bytes || !memcmp(cur->v, k->v, k->v_bytes));
	bch_btree_iter_exit(&iter);
	printbuf_exit(&ignore);
	return same;
}

struct drop_arg {
	struct bch_fs			*c;
	const struct bch_move_drop	*d;
};

/* What @drop says, and stale cached pointers: an extent rewritten sheds them. */
static bool drop_fn(const struct extent_ptr_decoded *p, unsigned i, void *arg)
{
	const struct drop_arg *a = arg;
	const struct bch_move_drop *d = a->d;

	return (p->ptr.dev < 64 && (d->devs & (1ULL << p->ptr.dev))) ||
	       (i < 64 && (d->idxs & (1ULL << i))) ||
	       (p->ptr.cached && bch_move_ptr_stale(a->c, &p->ptr));
}

int bch_move_update(struct bch_mover *m, struct btree_trans *t, const struct bkey_ref *k,
		    const struct bch_move_drop *drop, const struct bch_extent_crc_unpacked *crc,
		    const struct bch_extent_ptr_unpacked *new, unsigned nr_new,
		    struct printbuf *err)
{
	struct bch_fs *c = m->c;
	uint64_t v[BKEY_EXTENT_VAL_U64s_MAX], v2[BKEY_EXTENT_VAL_U64s_MAX];
	struct bkey_ref nk = { .k = k->k };
	unsigned bytes, left, nr;
	uint64_t devs;
	int ret;

	struct drop_arg da = { .c = c, .d = drop };

	bytes = extent_drop_ptrs(k, drop_fn, &da, v, &left);
	if (left == UINT32_MAX) {
		pr_str(err, "invalid extent value");
		return -EINVAL;
	}
	for (unsigned i = 0; i < nr_new; i++) {
		bytes = extent_append_ptr(v, bytes, k->k.size, crc, &new[i], v2);
		if (!bytes) {
			pr_str(err, "the extent has no room for another pointer");
			return -E2BIG;
		}
		memcpy(v, v2, bytes);
		left++;
	}
	/* only if the extent is what the copies were made from */
	if (!bch_move_key_unchanged(c, k))
		return -EAGAIN;
	if (!left) {
		if (k->k.type == BCH_EXTENT) {
			struct bkey_h e = k->k;

			e.type = KEY_TYPE_ERROR;
			bch_trans_update(t, BTREE_ID_EXTENTS, &e, NULL, 0);
		} else {
			bch_trans_delete_extents(t, k->k.p.inode, k->k.p.offset - k->k.size,
						 k->k.p.offset);
		}
		return 0;
	}
	nk.v = v;
	nk.v_bytes = bytes;
	devs = bch_extent_dirty_devs(&nk, &nr);
	if (nr > BCH_REPLICAS_ENTRY_DEVS_MAX) {
		pr_buf(err, "the extent would have %u copies (at most %u)", nr,
		       BCH_REPLICAS_ENTRY_DEVS_MAX);
		return -E2BIG;
	}
	ret = bch_fs_rw_replicas_mark(c, BCH_DATA_USER, devs, err);
	for (unsigned i = 0; i < nr_new && !ret; i++)
		if (new[i].cached)
			ret = bch_fs_rw_replicas_mark(c, BCH_DATA_CACHED, 1ULL << new[i].dev, err);
	if (ret)
		return ret;
	bch_trans_update(t, BTREE_ID_EXTENTS, &k->k, v, bytes);
	return 0;
}

int bch_move_replace(struct bch_mover *m, struct btree_trans *t, const struct bkey_ref *k,
		     const struct bkey_h *nk, const void *v, unsigned bytes,
		     struct printbuf *err)
{
	struct bkey_ref r = { .k = *nk, .v = v, .v_bytes = bytes };
	uint64_t devs;
	unsigned nr;
	int ret;

	if (!bch_move_key_unchanged(m->c, k))
		return -EAGAIN;
	devs = bch_extent_dirty_devs(&r, &nr);
	if (!nr || nr > BCH_REPLICAS_ENTRY_DEVS_MAX) {
		pr_buf(err, "the new extent would have %u copies", nr);
		return -E2BIG;
	}
	ret = bch_fs_rw_replicas_mark(m->c, BCH_DATA_USER, devs, err);
	if (ret)
		return ret;
	bch_trans_update(t, BTREE_ID_EXTENTS, nk, v, bytes);
	return 0;
}

uint8_t *bch_mover_buf(struct bch_mover *m, size_t bytes)
{
	if (m->buf_size < bytes) {
		free(m->buf);
		m->buf = xmalloc(bytes);
		m->buf_size = bytes;
	}
	return m->buf;
}

int bch_move_commit(struct bch_mover *m, const struct bkey_ref *k,
		    const struct bch_move_drop *drop, const struct bch_extent_crc_unpacked *crc,
		    const struct bch_extent_ptr_unpacked *new, unsigned nr_new,
		    struct printbuf *err)
{
	struct btree_trans t;
	int ret;

	bch_trans_init(&t, m->c);
	ret = bch_move_update(m, &t, k, drop, crc, new, nr_new, err);
	if (!ret)
		ret = bch_trans_commit(&t, err);
	bch_trans_exit(&t);
	bch_mover_release(m);
	return ret;
}

void bch_move_error(struct bch_move_errors *e, uint64_t *total, const char *fmt, ...)
{
	va_list args;

	e->nr++;
	(*total)++;
	if (e->first.pos)
		return;
	va_start(args, fmt);
	pr_vbuf(&e->first, fmt, args);
	va_end(args);
}
