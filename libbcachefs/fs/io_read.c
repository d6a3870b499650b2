// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the data of one extent (doc/format.md §5.2.6): choose a copy, read
 * it, verify, decrypt, decompress, return the live part. See io_read.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>

#include "codec/checksum.h"
#include "codec/compress.h"
#include "codec/crypto.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "bkey/extents.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "fs/io_read.h"
#include "util/util.h"

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

/*
 * Which pass of order_copies() tries pointer @p: cached copies whose gen
 * is known to be current first (they are on the promote target, a cache
 * device or the foreground target: the fast devices, doc/engine.md §10),
 * then dirty ones, then cached ones whose bucket gen is not known.
 */
static unsigned copy_pass(struct bch_fs *c, const struct bkey_ref *k,
			  const struct extent_ptr_decoded *p)
{
	if (!p->ptr.cached && k->k.type != BCH_EXTENT_CACHED)
		return 1;
	return ptr_dev_present(c, p->ptr.dev) && c->devs[p->ptr.dev]->bucket_gens ? 0 : 2;
}

/* The usable copies of @k in the order to try them (copy_pass()). */
static unsigned order_copies(struct bch_fs *c, const struct bkey_ref *k,
			     const struct extent_ptr_decoded *ptrs, unsigned n,
			     struct extent_ptr_decoded *order,
			     unsigned *nr_missing, unsigned *nr_stale)
{
	unsigned nr_order = 0, i, pass;

	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < n; i++) {
			if (copy_pass(c, k, &ptrs[i]) != pass)
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
		if (!ret) {
			rc->last_dev = order[i].ptr.dev;
			/*
			 * The running filesystem has the copies that failed
			 * rewritten from a good one (core/integrity.h)
			 */
			if (i && c->opts.verify && !c->opts.read_only)
				bch_fs_repair_want(c, k->k.p.inode, bkey_start_pos(&k->k).offset,
						   k->k.p.offset);
			goto out;
		}
		if (ret == -ENOMEM || ret == -BCH_ERR_no_key)
			break;
		if (i + 1 < nr_order)
			rc->nr_retries++;
	}
	if (c->opts.verify && ret != -ENOMEM && ret != -BCH_ERR_no_key)
		c->integ.data_bad++;
	/* every copy failed: never leave partial or unverified data behind */
	memset(buf, 0, bytes);
out:
	bch_read_cache_exit(&local);
	printbuf_exit(&dummy);
	return ret;
}

/* ---- reading ahead of a sequential reader (a worker thread) ---- */

/* The buffers: this much, in slots of one size (a power of two between
 * the minimum and maximum, as large as the largest encoded extent the
 * superblock allows). Small enough that what the worker read is still in
 * the processor's cache when the reply copies it: 16 MiB was measured
 * about 15% slower than 8 MiB. */
#define AHEAD_ARENA_BYTES	(8U << 20)
#define AHEAD_SLOT_MIN		(64U << 10)
#define AHEAD_SLOT_MAX		(1U << 20)
#define AHEAD_JOBS_MAX		(AHEAD_ARENA_BYTES / AHEAD_SLOT_MIN)
/* regions are found through a table of hints: slot of the last job queued
 * for a hash of (device, sector); a stale or overwritten hint is a miss */
#define AHEAD_HINTS		(4 * AHEAD_JOBS_MAX)
/* the worker reads runs of queued regions that follow on, on disk and in
 * its buffers, with one read of at most this much (then verifies them
 * while they are in the processor's cache: 1 MiB was measured slower) */
#define AHEAD_READ_MAX		(256U << 10)

enum ahead_state {
	AHEAD_FREE,
	AHEAD_QUEUED,
	AHEAD_RUNNING,
	AHEAD_TAKEN,	/* the reader reads it itself */
	AHEAD_OK,
	AHEAD_BAD,
};

/* What a job reads: sectors [sector, + size) of device dev, what they
 * must verify against (the extent's checksum or MAC, nonce and version;
 * none for pieces of data without checksum), and how they decode (to
 * decoded sectors: decrypted, decompressed) into the job's buffer. */
struct ahead_region {
	uint8_t		dev;
	uint8_t		csum_type;
	uint8_t		compression_type;
	uint32_t	size;
	uint32_t	decoded;
	uint64_t	sector;
	uint64_t	version_lo;
	uint32_t	version_hi;
	uint32_t	nonce;
	uint64_t	csum_lo, csum_hi;
};

struct ahead_job {
	struct ahead_region r;
	uint64_t	idx;		/* in queue order: buffer idx % nr_jobs */
	enum ahead_state state;
};

struct bch_read_ahead {
	pthread_t	thread;
	pthread_mutex_t	lock;
	pthread_cond_t	work, done;
	bool		stop;
	struct bch_devio *io[BCH_FS_MAX_DEVS];	/* NULL: not present */
	bool		have_key;
	struct bch_key	key;		/* the master key (copy), wiped at the end */
	uint8_t		*scratch;	/* one slot: compressed data as read */
	uint8_t		*arena;
	size_t		arena_bytes;
	uint32_t	slot_sectors;
	unsigned	nr_jobs;
	/* jobs[i % nr_jobs], i in [run, tail): not read yet, in queue order */
	struct ahead_job jobs[AHEAD_JOBS_MAX];
	uint64_t	run, tail;
	/* the job the reader reached last: it and later ones are kept */
	uint64_t	seen;
	int16_t		hint[AHEAD_HINTS];	/* job slot + 1; 0: none */
	unsigned long	nr_done, nr_taken, nr_served;
};

static uint8_t *job_buf(const struct bch_read_ahead *a, const struct ahead_job *j)
{
	return a->arena + (size_t)(j->idx % a->nr_jobs) * ((size_t)a->slot_sectors << BCH_SECTOR_SHIFT);
}

/* The copy bch_read_extent() tries first, when it is usable (valid crc
 * entry) and its stored region lies on a present device: *@p. */
static bool ahead_copy(struct bch_fs *c, const struct bkey_ref *k,
		       struct extent_ptr_decoded *p)
{
	struct extent_ptr_decoded ptrs[READ_MAX_PTRS], order[READ_MAX_PTRS];
	struct extent_ptr_iter it;
	unsigned n = 0, nr_missing = 0, nr_stale = 0;
	int r = 0;

	if (k->k.type != BCH_EXTENT && k->k.type != BCH_EXTENT_CACHED)
		return false;
	extent_ptr_iter_init(&it, k);
	while (n < READ_MAX_PTRS && (r = extent_ptr_iter_next(&it, &ptrs[n])) > 0)
		n++;
	if (n < READ_MAX_PTRS && r < 0)
		return false;
	if (!order_copies(c, k, ptrs, n, order, &nr_missing, &nr_stale))
		return false;

	*p = order[0];
	return !crc_check(&k->k, &p->crc) &&
		p->ptr.offset <= (UINT64_MAX >> BCH_SECTOR_SHIFT) - p->crc.compressed_size &&
		(p->ptr.offset + p->crc.compressed_size) << BCH_SECTOR_SHIFT <=
		c->devs[p->ptr.dev]->io->size;
}

/*
 * The region of the worker that holds sector @sector_in_key of @k (copy
 * @p): the whole stored region of a checksummed or encoded extent (its
 * decoded data in the buffer), or the buffer-sized piece of data stored
 * as is without checksum; *@skip is the sectors before it in the decoded
 * region. false: none fits a buffer (or the data is encrypted and the key
 * not loaded: bch_read_extent() says so).
 */
static bool ahead_region_of(const struct bch_read_ahead *a, const struct bkey_h *k,
			    const struct extent_ptr_decoded *p, uint64_t sector_in_key,
			    struct ahead_region *r, uint64_t *skip)
{
	const struct bch_extent_crc_unpacked *crc = &p->crc;

	memset(r, 0, sizeof(*r));
	r->dev		= p->ptr.dev;
	r->version_lo	= k->version_lo;
	r->version_hi	= k->version_hi;
	if (crc->csum_type || crc->compression_type) {
		if (crc->compressed_size > a->slot_sectors ||
		    crc->uncompressed_size > a->slot_sectors ||
		    (bch_csum_type_is_encryption(crc->csum_type) && !a->have_key))
			return false;
		r->csum_type	= crc->csum_type;
		r->compression_type = crc->compression_type;
		r->sector	= p->ptr.offset;
		r->size		= crc->compressed_size;
		r->decoded	= crc->uncompressed_size;
		r->nonce	= crc->nonce;
		r->csum_lo	= crc->csum_lo;
		r->csum_hi	= crc->csum_hi;
		*skip = crc->offset + sector_in_key;
	} else {
		uint64_t piece = sector_in_key - sector_in_key % a->slot_sectors;

		r->sector	= p->ptr.offset + crc->offset + piece;
		r->size		= (uint32_t)min_t(uint64_t, a->slot_sectors, k->size - piece);
		r->decoded	= r->size;
		*skip = sector_in_key - piece;
	}
	return true;
}

static bool region_eq(const struct ahead_region *x, const struct ahead_region *y)
{
	return x->dev == y->dev && x->csum_type == y->csum_type &&
		x->compression_type == y->compression_type && x->size == y->size &&
		x->decoded == y->decoded &&
		x->sector == y->sector && x->version_lo == y->version_lo &&
		x->version_hi == y->version_hi && x->nonce == y->nonce &&
		x->csum_lo == y->csum_lo && x->csum_hi == y->csum_hi;
}

static unsigned hint_of(const struct ahead_region *r)
{
	return (unsigned)(((r->sector ^ ((uint64_t)r->dev << 56)) * 0x9e3779b97f4a7c15ULL) >> 40) %
		AHEAD_HINTS;
}

/* The live job for @r (under the lock), or NULL. */
static struct ahead_job *job_find(struct bch_read_ahead *a, const struct ahead_region *r)
{
	int slot = a->hint[hint_of(r)] - 1;
	struct ahead_job *j = slot >= 0 ? &a->jobs[slot] : NULL;

	return j && j->state != AHEAD_FREE && region_eq(&j->r, r) ? j : NULL;
}

/* Read sectors [@sector, + @bytes) of device @dev into @buf. */
static bool read_all(const struct bch_read_ahead *a, unsigned dev, uint8_t *buf,
		     size_t bytes, uint64_t sector)
{
	return !dev_pread(a->io[dev], buf, bytes, sector << BCH_SECTOR_SHIFT);
}

/*
 * Region @r as read into @stored: verify its checksum or MAC, decrypt it
 * in place, and decompress it into @dst (uncompressed: @stored is @dst).
 */
static bool region_decode(const struct bch_read_ahead *a, const struct ahead_region *r,
			  uint8_t *stored, uint8_t *dst)
{
	size_t bytes = (size_t)r->size << BCH_SECTOR_SHIFT;
	struct bch_csum_val want = { r->csum_lo, r->csum_hi }, got;
	bool encrypted = bch_csum_type_is_encryption(r->csum_type);
	struct bch_nonce nonce = bch_nonce_extent(r->version_lo, r->version_hi,
						  r->compression_type, r->decoded, r->nonce);

	if (r->csum_type &&
	    (bch_checksum(r->csum_type, nonce, encrypted ? &a->key : NULL, stored, bytes, &got) ||
	     !bch_csum_eq(want, got)))
		return false;
	/* verified: only now may the data be decrypted */
	if (encrypted && bch_encrypt(r->csum_type, &a->key, nonce, stored, bytes))
		return false;
	return !r->compression_type ||
		!bch_decompress(r->compression_type, stored, bytes, dst,
				(size_t)r->decoded << BCH_SECTOR_SHIFT);
}

/*
 * The next jobs to run (under the lock): the job at a->run and the queued
 * ones after it whose regions follow on, on the same device and in the
 * buffers (no wrap), up to AHEAD_READ_MAX: marked running, and copied to
 * @r. Returns how many (0: none queued at a->run, which is skipped).
 */
static unsigned jobs_take(struct bch_read_ahead *a, struct ahead_region *r)
{
	unsigned n = 0;
	uint64_t bytes = 0;

	while (a->run + n < a->tail) {
		struct ahead_job *j = &a->jobs[(a->run + n) % a->nr_jobs];

		if (j->state != AHEAD_QUEUED)
			break;
		/* compressed data is read on its own, into scratch */
		if (n && (j->r.compression_type || r[n - 1].compression_type ||
			  j->r.dev != r[n - 1].dev ||
			  j->r.sector != r[n - 1].sector + r[n - 1].size ||
			  r[n - 1].size != a->slot_sectors ||
			  (a->run + n) % a->nr_jobs == 0 ||
			  bytes + ((uint64_t)j->r.size << BCH_SECTOR_SHIFT) > AHEAD_READ_MAX))
			break;
		j->state = AHEAD_RUNNING;
		r[n] = j->r;
		bytes += (uint64_t)j->r.size << BCH_SECTOR_SHIFT;
		n++;
	}
	return n;
}

static void *ahead_thread(void *arg)
{
	struct bch_read_ahead *a = arg;
	struct ahead_region r[AHEAD_READ_MAX / AHEAD_SLOT_MIN];
	bool ok[AHEAD_READ_MAX / AHEAD_SLOT_MIN];
	size_t slot_bytes = (size_t)a->slot_sectors << BCH_SECTOR_SHIFT;

#ifdef MADV_POPULATE_WRITE
	/* the buffers' memory now, not on the first reads */
	madvise(a->arena, a->arena_bytes, MADV_POPULATE_WRITE);
#endif
	pthread_mutex_lock(&a->lock);
	while (!a->stop) {
		uint8_t *buf;
		uint64_t first = a->run;
		size_t bytes = 0;
		unsigned i, n;

		if (a->run == a->tail) {
			pthread_cond_wait(&a->work, &a->lock);
			continue;
		}
		n = jobs_take(a, r);
		if (!n) {
			a->run++;	/* taken by the reader */
			continue;
		}
		buf = job_buf(a, &a->jobs[first % a->nr_jobs]);
		pthread_mutex_unlock(&a->lock);

		/* one read for the run (each region again if that fails) */
		for (i = 0; i < n; i++)
			bytes += (size_t)r[i].size << BCH_SECTOR_SHIFT;
		if (r[0].compression_type) {
			ok[0] = read_all(a, r[0].dev, a->scratch, bytes, r[0].sector) &&
				region_decode(a, &r[0], a->scratch, buf);
		} else if (read_all(a, r[0].dev, buf, bytes, r[0].sector)) {
			for (i = 0; i < n; i++) {
				uint8_t *b = buf + (size_t)i * slot_bytes;

				ok[i] = region_decode(a, &r[i], b, b);
			}
		} else {
			for (i = 0; i < n; i++) {
				uint8_t *b = buf + (size_t)i * slot_bytes;

				ok[i] = read_all(a, r[i].dev, b, (size_t)r[i].size << BCH_SECTOR_SHIFT,
						 r[i].sector) &&
					region_decode(a, &r[i], b, b);
			}
		}

		pthread_mutex_lock(&a->lock);
		for (i = 0; i < n; i++)
			a->jobs[(first + i) % a->nr_jobs].state = ok[i] ? AHEAD_OK : AHEAD_BAD;
		a->run = first + n;	/* only now may the slots be reused */
		a->nr_done += n;
		pthread_cond_broadcast(&a->done);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* Free @a, whose thread is not running (never started, or joined). */
static void ahead_release(struct bch_read_ahead *a)
{
	pthread_cond_destroy(&a->done);
	pthread_cond_destroy(&a->work);
	pthread_mutex_destroy(&a->lock);
	if (a->arena)
		munmap(a->arena, a->arena_bytes);
	free(a->scratch);
	bch_key_wipe(&a->key);
	free(a);
}

struct bch_read_ahead *bch_read_ahead_new(struct bch_fs *c)
{
	struct bch_read_ahead *a;
	unsigned i, bits = c->sb ? (unsigned)BCH_SB_ENCODED_EXTENT_MAX_BITS(c->sb) : 0;
	uint64_t slot = bits < 32 ? (uint64_t)BCH_SECTOR_SIZE << bits : AHEAD_SLOT_MAX;
	sigset_t all, old;
	void *p;
	int ret;

	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->work, NULL);
	pthread_cond_init(&a->done, NULL);
	for (i = 0; i < BCH_FS_MAX_DEVS; i++)
		if (ptr_dev_present(c, i))
			a->io[i] = c->devs[i]->io;
	if (c->have_key) {
		a->key = c->key;
		a->have_key = true;
	}
	slot = min_t(uint64_t, max_t(uint64_t, slot, AHEAD_SLOT_MIN), AHEAD_SLOT_MAX);
	a->slot_sectors = (uint32_t)(slot >> BCH_SECTOR_SHIFT);
	a->nr_jobs = (unsigned)(AHEAD_ARENA_BYTES / slot);
	a->scratch = malloc(slot);
	/* whole huge pages where the system has them: fewer faults and TLB misses */
	a->arena_bytes = AHEAD_ARENA_BYTES;
	p = mmap(NULL, a->arena_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!a->scratch || p == MAP_FAILED) {
		ahead_release(a);
		return NULL;
	}
	madvise(p, a->arena_bytes, MADV_HUGEPAGE);
	a->arena = p;

	/* signals (SIGTERM: unmount) stay with the caller's thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&a->thread, NULL, ahead_thread, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		ahead_release(a);
		return NULL;
	}
	return a;
}

void bch_read_ahead_free(struct bch_read_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->work);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	ahead_release(a);
}

int bch_read_extent_ahead(struct bch_fs *c, const struct bkey_ref *k,
			  uint64_t sector_in_key, uint64_t nr, struct bch_read_ahead *a)
{
	struct extent_ptr_decoded p;
	uint64_t skip, end;
	int ret = 0;

	if (!a || !nr || sector_in_key >= k->k.size || !ahead_copy(c, k, &p) ||
	    p.ptr.dev >= BCH_FS_MAX_DEVS || !a->io[p.ptr.dev])
		return 0;
	end = min_t(uint64_t, k->k.size, sector_in_key + min_t(uint64_t, nr, k->k.size));

	pthread_mutex_lock(&a->lock);
	while (sector_in_key < end) {
		struct ahead_region r;
		struct ahead_job *j;

		if (!ahead_region_of(a, &k->k, &p, sector_in_key, &r, &skip))
			break;
		sector_in_key += r.decoded - skip;
		ret = 1;
		/* (one the reader gave up on when it went elsewhere is queued again) */
		j = job_find(a, &r);
		if (j && j->state != AHEAD_TAKEN)
			continue;
		if (a->tail - a->run >= a->nr_jobs || a->tail - a->seen >= a->nr_jobs - 1) {
			ret = -EAGAIN;
			break;
		}
		j = &a->jobs[a->tail % a->nr_jobs];
		j->idx = a->tail++;
		j->r = r;
		j->state = AHEAD_QUEUED;
		a->hint[hint_of(&r)] = (int16_t)(j - a->jobs + 1);
		pthread_cond_signal(&a->work);
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

void bch_read_ahead_restart(struct bch_read_ahead *a)
{
	unsigned i;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < a->nr_jobs; i++)
		if (a->jobs[i].state == AHEAD_QUEUED)
			a->jobs[i].state = AHEAD_TAKEN;
	a->seen = a->tail;
	pthread_mutex_unlock(&a->lock);
}

unsigned bch_read_extent_locate(struct bch_fs *c, const struct bkey_ref *k,
				uint64_t sector_in_key, unsigned nr,
				struct bch_read_ahead *a, const void **data, unsigned *dev)
{
	struct extent_ptr_decoded p;
	struct ahead_region r;
	struct ahead_job *j;
	uint64_t skip;
	unsigned ret = 0;

	if (!a || !nr || sector_in_key > k->k.size || nr > k->k.size - sector_in_key ||
	    !ahead_copy(c, k, &p) || !ahead_region_of(a, &k->k, &p, sector_in_key, &r, &skip) ||
	    skip >= r.decoded)
		return 0;

	pthread_mutex_lock(&a->lock);
	j = job_find(a, &r);
	if (j) {
		if (j->idx > a->seen)
			a->seen = j->idx;
		while (j->state == AHEAD_RUNNING)
			pthread_cond_wait(&a->done, &a->lock);
		if (j->state == AHEAD_QUEUED) {
			j->state = AHEAD_TAKEN;
			a->nr_taken++;
		} else if (j->state == AHEAD_OK && region_eq(&j->r, &r)) {
			*data = job_buf(a, j) + (skip << BCH_SECTOR_SHIFT);
			*dev = p.ptr.dev;
			ret = (unsigned)min_t(uint64_t, nr, r.decoded - skip);
			a->nr_served++;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

void bch_read_ahead_stats(struct bch_read_ahead *a, unsigned long *nr_done,
			  unsigned long *nr_taken, unsigned long *nr_served)
{
	*nr_done = *nr_taken = *nr_served = 0;
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	*nr_done = a->nr_done;
	*nr_taken = a->nr_taken;
	*nr_served = a->nr_served;
	pthread_mutex_unlock(&a->lock);
}
