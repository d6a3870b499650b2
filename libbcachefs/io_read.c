// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the data of one extent (spec 40 §40.1.5): choose a copy, read
 * it, verify, decrypt, decompress, return the live part. See io_read.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "checksum.h"
#include "compress.h"
#include "crypto.h"
#include "dev.h"
#include "errcode.h"
#include "extents.h"
#include "format.h"
#include "fs.h"
#include "io_read.h"
#include "util.h"

/* At most this many pointers fit in a value of 20 u64s. */
#define READ_MAX_PTRS	(BKEY_EXTENT_VAL_U64s_MAX)

void bch_read_cache_exit(struct bch_read_cache *rc)
{
	if (!rc)
		return;
	free(rc->data);
	free(rc->buf);
	memset(rc, 0, sizeof(*rc));
}

/* "inode 4100 offset 81920" (bytes) of a sector inside key @k. */
static void pr_where(struct printbuf *err, const struct bkey_h *k, uint64_t sector_in_key)
{
	uint64_t s = k->p.offset - k->size + sector_in_key;

	pr_buf(err, "inode %" PRIu64 " offset %" PRIu64, k->p.inode, s << BCH_SECTOR_SHIFT);
}

static bool ptr_dev_present(struct bch_fs *c, unsigned dev)
{
	return dev < BCH_FS_MAX_DEVS && c->devs[dev] && c->devs[dev]->io;
}

/* Stale by the bucket gens we know (never when they are unknown). */
static bool ptr_stale(struct bch_fs *c, const struct bch_extent_ptr_unpacked *p)
{
	struct bch_member_dev *ca = c->devs[p->dev];
	uint64_t b;

	if (!ca->bucket_gens || !ca->bucket_size)
		return false;
	b = p->offset / ca->bucket_size;
	if (b >= ca->nbuckets)
		return false;
	return gen_after(ca->bucket_gens[b], p->gen);
}

static int grow(void **p, size_t *size, size_t want)
{
	void *n;

	if (*size >= want)
		return 0;
	n = realloc(*p, want);
	if (!n)
		return -ENOMEM;
	*p = n;
	*size = want;
	return 0;
}

static bool cache_match(const struct bch_read_cache *rc, const struct bkey_h *k,
			const struct extent_ptr_decoded *p)
{
	const struct bch_extent_crc_unpacked *a = &rc->crc, *b = &p->crc;

	return rc->valid &&
		rc->dev == p->ptr.dev &&
		rc->gen == p->ptr.gen &&
		rc->ptr_offset == p->ptr.offset &&
		rc->version_lo == k->version_lo &&
		rc->version_hi == k->version_hi &&
		a->csum_type == b->csum_type &&
		a->compression_type == b->compression_type &&
		a->compressed_size == b->compressed_size &&
		a->uncompressed_size == b->uncompressed_size &&
		a->nonce == b->nonce &&
		a->csum_lo == b->csum_lo &&
		a->csum_hi == b->csum_hi;
}

/*
 * Check the descriptor of pointer @p against key @k before any read.
 * Returns NULL or the reason it cannot be read.
 */
static const char *crc_check(const struct bkey_h *k, const struct bch_extent_crc_unpacked *crc)
{
	if (!bch_csum_type_valid(crc->csum_type))
		return "invalid checksum type";
	if (crc->compression_type >= BCH_COMPRESSION_NR)
		return "invalid compression type";
	if (!crc->compressed_size || !crc->uncompressed_size)
		return "zero crc size";
	if ((uint64_t)crc->offset + k->size > crc->uncompressed_size)
		return "crc offset + key size > uncompressed size";
	if (crc->csum_type || crc->compression_type) {
		if (crc->compressed_size > BCH_READ_ENCODED_MAX_SECTORS ||
		    crc->uncompressed_size > BCH_READ_ENCODED_MAX_SECTORS)
			return "encoded extent too big";
		if (!crc->compression_type &&
		    crc->compressed_size != crc->uncompressed_size)
			return "uncompressed data with compressed size != uncompressed size";
	} else if ((uint64_t)crc->offset + k->size > crc->compressed_size) {
		return "crc offset + key size > stored size";
	}
	return NULL;
}

/*
 * Read the whole stored region of pointer @p into @dst (compressed_size
 * sectors), verify its checksum or MAC, and decrypt it in place. Returns
 * 0, or an error with a description in @err (@dst then holds data that
 * must not be used).
 */
static int read_verified(struct bch_fs *c, const struct bkey_h *k,
			 const struct extent_ptr_decoded *p, uint64_t sector_in_key,
			 void *dst, struct printbuf *err)
{
	const struct bch_extent_crc_unpacked *crc = &p->crc;
	size_t stored = (size_t)crc->compressed_size << BCH_SECTOR_SHIFT;
	struct bch_csum_val want = { crc->csum_lo, crc->csum_hi }, got;
	struct bch_nonce nonce;
	bool encrypted = bch_csum_type_is_encryption(crc->csum_type);
	int ret;

	if (encrypted && !c->have_key) {
		pr_where(err, k, sector_in_key);
		pr_str(err, ": data is encrypted and the key is not loaded\n");
		return -BCH_ERR_no_key;
	}

	ret = bch_dev_read(c, p->ptr.dev, dst, stored, p->ptr.offset);
	if (ret) {
		pr_where(err, k, sector_in_key);
		pr_buf(err, ": read error on device %u sector %" PRIu64 " (%u sectors): %s\n",
		       p->ptr.dev, (uint64_t)p->ptr.offset, crc->compressed_size,
		       bch_err_str(ret));
		return ret == -ERANGE ? -EIO : ret;
	}

	nonce = bch_nonce_extent(k->version_lo, k->version_hi, crc->compression_type,
				 crc->uncompressed_size, crc->nonce);
	if (crc->csum_type) {
		ret = bch_checksum(crc->csum_type, nonce, encrypted ? &c->key : NULL,
				   dst, stored, &got);
		if (ret)
			return ret;
		if (!bch_csum_eq(want, got)) {
			pr_where(err, k, sector_in_key);
			pr_buf(err, ": data checksum error on device %u sector %" PRIu64
			       ": expected %" PRIx64 ":%" PRIx64 " got %" PRIx64 ":%" PRIx64
			       " (type %u)\n", p->ptr.dev, (uint64_t)p->ptr.offset,
			       want.hi, want.lo, got.hi, got.lo, crc->csum_type);
			return -BCH_ERR_csum_mismatch;
		}
	}

	/* verified: only now may the data be decrypted */
	return bch_encrypt(crc->csum_type, &c->key, nonce, dst, stored);
}

/*
 * Read and decode the whole stored region of pointer @p into rc->data.
 * Returns 0, or an error with a description in @err.
 */
static int read_encoded(struct bch_fs *c, const struct bkey_h *k,
			const struct extent_ptr_decoded *p, uint64_t sector_in_key,
			struct bch_read_cache *rc, struct printbuf *err)
{
	const struct bch_extent_crc_unpacked *crc = &p->crc;
	size_t stored = (size_t)crc->compressed_size << BCH_SECTOR_SHIFT;
	size_t decoded = (size_t)crc->uncompressed_size << BCH_SECTOR_SHIFT;
	int ret;

	rc->valid = false;
	if (grow(&rc->buf, &rc->buf_size, stored) ||
	    grow(&rc->data, &rc->data_bytes, decoded))
		return -ENOMEM;

	ret = read_verified(c, k, p, sector_in_key, rc->buf, err);
	if (ret)
		return ret;

	if (crc->compression_type) {
		ret = bch_decompress(crc->compression_type, rc->buf, stored,
				     rc->data, decoded);
		if (ret) {
			pr_where(err, k, sector_in_key);
			pr_buf(err, ": decompression error (%s, %u -> %u sectors) on device %u sector %" PRIu64 ": %s\n",
			       bch_compression_type_name(crc->compression_type) ?: "?",
			       crc->compressed_size, crc->uncompressed_size,
			       p->ptr.dev, (uint64_t)p->ptr.offset, bch_err_str(ret));
			return ret == -ENOMEM ? ret : -BCH_ERR_decompress;
		}
	} else {
		/* stored == decoded (crc_check); swap instead of copying */
		void *t = rc->data;
		size_t ts = rc->data_bytes;

		rc->data = rc->buf;
		rc->data_bytes = rc->buf_size;
		rc->buf = t;
		rc->buf_size = ts;
	}

	rc->valid	= true;
	rc->dev		= p->ptr.dev;
	rc->gen		= p->ptr.gen;
	rc->ptr_offset	= p->ptr.offset;
	rc->version_lo	= k->version_lo;
	rc->version_hi	= k->version_hi;
	rc->crc		= *crc;
	rc->crc.offset	= 0;
	rc->nr_decoded++;
	return 0;
}

/* Read from one copy. */
static int read_ptr(struct bch_fs *c, const struct bkey_h *k,
		    const struct extent_ptr_decoded *p,
		    uint64_t sector_in_key, unsigned nr, void *buf,
		    struct bch_read_cache *rc, struct printbuf *err)
{
	const struct bch_extent_crc_unpacked *crc = &p->crc;
	const char *why = crc_check(k, crc);
	uint64_t start;
	int ret;

	if (why) {
		pr_where(err, k, sector_in_key);
		pr_buf(err, ": pointer to device %u sector %" PRIu64 " unusable: %s\n",
		       p->ptr.dev, (uint64_t)p->ptr.offset, why);
		return -EIO;
	}

	start = crc->offset + sector_in_key;	/* in the decoded data */

	if (!crc->csum_type && !crc->compression_type) {
		ret = bch_dev_read(c, p->ptr.dev, buf, (size_t)nr << BCH_SECTOR_SHIFT,
				   p->ptr.offset + start);
		if (ret) {
			pr_where(err, k, sector_in_key);
			pr_buf(err, ": read error on device %u sector %" PRIu64 ": %s\n",
			       p->ptr.dev, (uint64_t)(p->ptr.offset + start), bch_err_str(ret));
			return ret == -ERANGE ? -EIO : ret;
		}
		return 0;
	}

	if (cache_match(rc, k, p)) {
		rc->nr_hits++;
	} else if (!crc->compression_type && !start && nr == crc->compressed_size) {
		/*
		 * The whole of an uncompressed region: verified (and
		 * decrypted) in the caller's buffer, without the copy.
		 */
		return read_verified(c, k, p, sector_in_key, buf, err);
	} else {
		ret = read_encoded(c, k, p, sector_in_key, rc, err);
		if (ret)
			return ret;
	}
	/* crc_check: start + nr <= offset + size <= uncompressed_size */
	memcpy(buf, (uint8_t *)rc->data + (start << BCH_SECTOR_SHIFT),
	       (size_t)nr << BCH_SECTOR_SHIFT);
	return 0;
}

bool bch_extent_reads_as_hole(struct bch_fs *c, const struct bkey_ref *k)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;

	if (k->k.type == KEY_TYPE_ERROR || k->k.type == BCH_EXTENT)
		return false;
	if (k->k.type != BCH_EXTENT_CACHED)
		return true;
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0)
		if (ptr_dev_present(c, p.ptr.dev) && !ptr_stale(c, &p.ptr))
			return false;
	return true;
}

/* The usable copies of @k in the order to try them: dirty first, then cached. */
static unsigned order_copies(struct bch_fs *c, const struct bkey_ref *k,
			     const struct extent_ptr_decoded *ptrs, unsigned n,
			     struct extent_ptr_decoded *order,
			     unsigned *nr_missing, unsigned *nr_stale)
{
	unsigned nr_order = 0, i, pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			bool cached = ptrs[i].ptr.cached || k->k.type == BCH_EXTENT_CACHED;

			if (cached != (pass == 1))
				continue;
			if (!ptr_dev_present(c, ptrs[i].ptr.dev)) {
				(*nr_missing)++;
				continue;
			}
			if (ptr_stale(c, &ptrs[i].ptr)) {
				(*nr_stale)++;
				continue;
			}
			order[nr_order++] = ptrs[i];
		}
	return nr_order;
}

int bch_read_extent(struct bch_fs *c, const struct bkey_ref *k,
		    uint64_t sector_in_key, unsigned nr, void *buf,
		    struct bch_read_cache *rc, struct printbuf *err)
{
	struct extent_ptr_decoded ptrs[READ_MAX_PTRS], order[READ_MAX_PTRS];
	struct bch_read_cache local = BCH_READ_CACHE_INIT;
	struct extent_ptr_iter it;
	struct printbuf dummy = PRINTBUF;
	size_t bytes = (size_t)nr << BCH_SECTOR_SHIFT;
	unsigned n = 0, nr_order = 0, nr_missing = 0, nr_stale = 0, i;
	int ret = 0, r;

	if (!err)
		err = &dummy;
	if (!nr)
		return 0;
	if (sector_in_key > k->k.size || nr > k->k.size - sector_in_key) {
		pr_where(err, &k->k, 0);
		pr_buf(err, ": read of sectors %" PRIu64 "+%u outside the extent (size %u)\n",
		       sector_in_key, nr, k->k.size);
		memset(buf, 0, bytes);
		ret = -ERANGE;
		goto out;
	}

	switch (k->k.type) {
	case BCH_EXTENT:
	case BCH_EXTENT_CACHED:
		break;
	case KEY_TYPE_ERROR:
		pr_where(err, &k->k, sector_in_key);
		pr_str(err, ": data lost (error key)\n");
		memset(buf, 0, bytes);
		ret = -EIO;
		goto out;
	default:
		/* deleted, discard, reservation, unknown: no data */
		memset(buf, 0, bytes);
		goto out;
	}

	extent_ptr_iter_init(&it, k);
	while (n < READ_MAX_PTRS && (r = extent_ptr_iter_next(&it, &ptrs[n])) > 0)
		n++;
	if (n < READ_MAX_PTRS && r < 0) {
		pr_where(err, &k->k, sector_in_key);
		pr_str(err, ": invalid extent value\n");
		memset(buf, 0, bytes);
		ret = -EIO;
		goto out;
	}

	nr_order = order_copies(c, k, ptrs, n, order, &nr_missing, &nr_stale);

	if (!nr_order) {
		memset(buf, 0, bytes);
		if (k->k.type == BCH_EXTENT_CACHED)
			goto out;	/* cache-only data that is gone: a hole */
		pr_where(err, &k->k, sector_in_key);
		pr_buf(err, ": no readable copy (%u pointers: %u on missing devices, %u stale)\n",
		       n, nr_missing, nr_stale);
		ret = -EIO;
		goto out;
	}

	if (!rc)
		rc = &local;
	for (i = 0; i < nr_order; i++) {
		ret = read_ptr(c, &k->k, &order[i], sector_in_key, nr, buf, rc, err);
		if (!ret)
			goto out;
		if (ret == -ENOMEM || ret == -BCH_ERR_no_key)
			break;
		if (i + 1 < nr_order)
			rc->nr_retries++;
	}
	/* every copy failed: never leave partial or unverified data behind */
	memset(buf, 0, bytes);
out:
	bch_read_cache_exit(&local);
	printbuf_exit(&dummy);
	return ret;
}

/* ---- reads served in place (splice) ---- */

void bch_read_maps_init(struct bch_fs *c, struct bch_read_maps *m)
{
	unsigned i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *ca = c->devs[i];
		void *p;

		if (!ca || !ca->io || !ca->io->size || ca->io->size > SIZE_MAX)
			continue;
		p = mmap(NULL, (size_t)ca->io->size, PROT_READ, MAP_SHARED, ca->io->fd, 0);
		if (p == MAP_FAILED)
			continue;
		m->base[i] = p;
		m->size[i] = ca->io->size;
	}
}

void bch_read_maps_exit(struct bch_read_maps *m)
{
	unsigned i;

	for (i = 0; i < BCH_FS_MAX_DEVS; i++)
		if (m->base[i])
			munmap((void *)m->base[i], (size_t)m->size[i]);
	memset(m, 0, sizeof(*m));
}

static bool verified_match(const struct bch_read_verified *v, const struct bkey_h *k,
			   const struct extent_ptr_decoded *p)
{
	return v->valid && v->dev == p->ptr.dev && v->ptr_offset == p->ptr.offset &&
		v->version_lo == k->version_lo && v->version_hi == k->version_hi &&
		v->csum_type == p->crc.csum_type && v->size == p->crc.compressed_size &&
		v->csum_lo == p->crc.csum_lo && v->csum_hi == p->crc.csum_hi;
}

int bch_read_extent_locate(struct bch_fs *c, const struct bkey_ref *k,
			   uint64_t sector_in_key, unsigned nr,
			   const struct bch_read_maps *maps, struct bch_read_cache *rc,
			   struct bch_read_loc *loc)
{
	struct extent_ptr_decoded ptrs[READ_MAX_PTRS], order[READ_MAX_PTRS], *p;
	const struct bch_extent_crc_unpacked *crc;
	struct extent_ptr_iter it;
	unsigned n = 0, nr_missing = 0, nr_stale = 0, i;
	uint64_t first, stored_bytes;
	int r;

	if ((k->k.type != BCH_EXTENT && k->k.type != BCH_EXTENT_CACHED) || !nr ||
	    sector_in_key > k->k.size || nr > k->k.size - sector_in_key)
		return 0;
	extent_ptr_iter_init(&it, k);
	while (n < READ_MAX_PTRS && (r = extent_ptr_iter_next(&it, &ptrs[n])) > 0)
		n++;
	if (n < READ_MAX_PTRS && r < 0)
		return 0;
	if (!order_copies(c, k, ptrs, n, order, &nr_missing, &nr_stale))
		return 0;

	/* the copy bch_read_extent() would try first, if stored as is */
	p = &order[0];
	crc = &p->crc;
	if (crc_check(&k->k, crc) || crc->compression_type ||
	    bch_csum_type_is_encryption(crc->csum_type))
		return 0;
	first = p->ptr.offset + crc->offset + sector_in_key;
	stored_bytes = (uint64_t)(crc->csum_type ? crc->compressed_size
				  : crc->offset + sector_in_key + nr) << BCH_SECTOR_SHIFT;
	if (p->ptr.offset > (UINT64_MAX >> BCH_SECTOR_SHIFT) - crc->compressed_size ||
	    (p->ptr.offset << BCH_SECTOR_SHIFT) + stored_bytes > c->devs[p->ptr.dev]->io->size)
		return 0;

	if (crc->csum_type) {
		struct bch_csum_val want = { crc->csum_lo, crc->csum_hi }, got;
		struct bch_read_verified *v = NULL;
		const uint8_t *base = maps ? maps->base[p->ptr.dev] : NULL;

		for (i = 0; i < ARRAY_SIZE(rc->verified); i++)
			if (verified_match(&rc->verified[i], &k->k, p)) {
				v = &rc->verified[i];
				break;
			}
		if (!v) {
			if (!base || (p->ptr.offset << BCH_SECTOR_SHIFT) + stored_bytes >
			    maps->size[p->ptr.dev])
				return 0;
			if (bch_checksum(crc->csum_type,
					 bch_nonce_extent(k->k.version_lo, k->k.version_hi,
							  crc->compression_type,
							  crc->uncompressed_size, crc->nonce),
					 NULL, base + (p->ptr.offset << BCH_SECTOR_SHIFT),
					 (size_t)stored_bytes, &got) ||
			    !bch_csum_eq(want, got))
				return 0;	/* bch_read_extent() retries and reports */
			v = &rc->verified[rc->verified_next++ % ARRAY_SIZE(rc->verified)];
			v->valid	= true;
			v->dev		= p->ptr.dev;
			v->ptr_offset	= p->ptr.offset;
			v->version_lo	= k->k.version_lo;
			v->version_hi	= k->k.version_hi;
			v->csum_type	= crc->csum_type;
			v->size		= crc->compressed_size;
			v->csum_lo	= crc->csum_lo;
			v->csum_hi	= crc->csum_hi;
		}
	}
	loc->dev	= p->ptr.dev;
	loc->sector	= first;
	return 1;
}
