// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the data of one extent (spec 40 §40.1.5): choose a copy, read
 * it, verify, decrypt, decompress, return the live part. See io_read.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
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

static void ahead_stop(struct bch_verify_ahead *a);

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

	if (m->ahead)
		ahead_stop(m->ahead);
	for (i = 0; i < BCH_FS_MAX_DEVS; i++)
		if (m->base[i])
			munmap((void *)m->base[i], (size_t)m->size[i]);
	memset(m, 0, sizeof(*m));
}

/* ---- regions verified ahead of the reader (a worker thread) ---- */

enum ahead_state {
	AHEAD_FREE,
	AHEAD_QUEUED,
	AHEAD_RUNNING,
	AHEAD_TAKEN,	/* the reader verified it itself */
	AHEAD_OK,
	AHEAD_BAD,
};

struct ahead_job {
	struct bch_read_verified id;
	uint64_t	idx;		/* in queue order */
	uint32_t	nonce;
	enum ahead_state state;
};

#define AHEAD_JOBS	64U

struct bch_verify_ahead {
	pthread_t	thread;
	pthread_mutex_t	lock;
	pthread_cond_t	work, done;
	bool		stop;
	const uint8_t	*base[BCH_SB_MEMBERS_MAX];
	/* jobs[i % AHEAD_JOBS], i in [run, tail): not run yet, in queue order */
	struct ahead_job jobs[AHEAD_JOBS];
	uint64_t	run, tail;
	/* the reader used the results up to this job: later ones are kept */
	uint64_t	seen;
	unsigned long	nr_done, nr_taken;
};

/* The copy bch_read_extent() tries first, when it is stored as is and lies
 * on a present device: *@p, its first sector of @sector_in_key, and the
 * bytes to verify (or read, without checksum) from its start. */
static bool locate_copy(struct bch_fs *c, const struct bkey_ref *k, uint64_t sector_in_key,
			unsigned nr, struct extent_ptr_decoded *p, uint64_t *first,
			uint64_t *stored_bytes)
{
	struct extent_ptr_decoded ptrs[READ_MAX_PTRS], order[READ_MAX_PTRS];
	const struct bch_extent_crc_unpacked *crc;
	struct extent_ptr_iter it;
	unsigned n = 0, nr_missing = 0, nr_stale = 0;
	int r = 0;

	if ((k->k.type != BCH_EXTENT && k->k.type != BCH_EXTENT_CACHED) || !nr ||
	    sector_in_key > k->k.size || nr > k->k.size - sector_in_key)
		return false;
	extent_ptr_iter_init(&it, k);
	while (n < READ_MAX_PTRS && (r = extent_ptr_iter_next(&it, &ptrs[n])) > 0)
		n++;
	if (n < READ_MAX_PTRS && r < 0)
		return false;
	if (!order_copies(c, k, ptrs, n, order, &nr_missing, &nr_stale))
		return false;

	*p = order[0];
	crc = &p->crc;
	if (crc_check(&k->k, crc) || crc->compression_type ||
	    bch_csum_type_is_encryption(crc->csum_type))
		return false;
	*first = p->ptr.offset + crc->offset + sector_in_key;
	*stored_bytes = (uint64_t)(crc->csum_type ? crc->compressed_size
				   : crc->offset + sector_in_key + nr) << BCH_SECTOR_SHIFT;
	if (p->ptr.offset > (UINT64_MAX >> BCH_SECTOR_SHIFT) - crc->compressed_size ||
	    (p->ptr.offset << BCH_SECTOR_SHIFT) + *stored_bytes > c->devs[p->ptr.dev]->io->size)
		return false;
	return true;
}

static void verified_id(struct bch_read_verified *v, const struct bkey_h *k,
			const struct extent_ptr_decoded *p)
{
	v->valid	= true;
	v->dev		= p->ptr.dev;
	v->ptr_offset	= p->ptr.offset;
	v->version_lo	= k->version_lo;
	v->version_hi	= k->version_hi;
	v->csum_type	= p->crc.csum_type;
	v->size		= p->crc.compressed_size;
	v->csum_lo	= p->crc.csum_lo;
	v->csum_hi	= p->crc.csum_hi;
}

static bool verified_match(const struct bch_read_verified *v, const struct bkey_h *k,
			   const struct extent_ptr_decoded *p)
{
	return v->valid && v->dev == p->ptr.dev && v->ptr_offset == p->ptr.offset &&
		v->version_lo == k->version_lo && v->version_hi == k->version_hi &&
		v->csum_type == p->crc.csum_type && v->size == p->crc.compressed_size &&
		v->csum_lo == p->crc.csum_lo && v->csum_hi == p->crc.csum_hi;
}

static bool job_match(const struct ahead_job *j, const struct bkey_h *k,
		      const struct extent_ptr_decoded *p)
{
	return j->state != AHEAD_FREE && verified_match(&j->id, k, p) &&
		j->nonce == p->crc.nonce;
}

/* Does the stored region of @id (uncompressed: nonce from the version) verify? */
static bool region_verifies(const uint8_t *base, const struct bch_read_verified *id,
			    uint32_t nonce)
{
	struct bch_csum_val want = { id->csum_lo, id->csum_hi }, got;

	return !bch_checksum(id->csum_type,
			     bch_nonce_extent(id->version_lo, id->version_hi, 0, id->size, nonce),
			     NULL, base + (id->ptr_offset << BCH_SECTOR_SHIFT),
			     (size_t)id->size << BCH_SECTOR_SHIFT, &got) &&
		bch_csum_eq(want, got);
}

static void *ahead_thread(void *arg)
{
	struct bch_verify_ahead *a = arg;

	pthread_mutex_lock(&a->lock);
	while (!a->stop) {
		struct ahead_job *j;
		struct bch_read_verified id;
		uint32_t nonce;
		bool ok;

		if (a->run == a->tail) {
			pthread_cond_wait(&a->work, &a->lock);
			continue;
		}
		j = &a->jobs[a->run % AHEAD_JOBS];
		if (j->state != AHEAD_QUEUED) {
			a->run++;	/* taken by the reader */
			continue;
		}
		j->state = AHEAD_RUNNING;
		id = j->id;
		nonce = j->nonce;
		pthread_mutex_unlock(&a->lock);

		ok = region_verifies(a->base[id.dev], &id, nonce);

		pthread_mutex_lock(&a->lock);
		j->state = ok ? AHEAD_OK : AHEAD_BAD;
		a->run++;	/* only now may the slot be reused */
		a->nr_done++;
		pthread_cond_broadcast(&a->done);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

bool bch_read_ahead_start(struct bch_read_maps *m)
{
	struct bch_verify_ahead *a;
	sigset_t all, old;
	bool any = false;
	unsigned i;
	int ret;

	if (m->ahead)
		return true;
	for (i = 0; i < BCH_SB_MEMBERS_MAX; i++)
		any |= m->base[i] != NULL;
	if (!any)
		return false;
	a = calloc(1, sizeof(*a));
	if (!a)
		return false;
	memcpy(a->base, m->base, sizeof(a->base));
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->work, NULL);
	pthread_cond_init(&a->done, NULL);
	/* signals (SIGTERM: unmount) stay with the caller's thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&a->thread, NULL, ahead_thread, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pthread_cond_destroy(&a->done);
		pthread_cond_destroy(&a->work);
		pthread_mutex_destroy(&a->lock);
		free(a);
		return false;
	}
	m->ahead = a;
	return true;
}

static void ahead_stop(struct bch_verify_ahead *a)
{
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->work);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->done);
	pthread_cond_destroy(&a->work);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

int bch_read_extent_verify_ahead(struct bch_fs *c, const struct bkey_ref *k,
				 struct bch_read_maps *maps, const struct bch_read_cache *rc)
{
	struct bch_verify_ahead *a = maps->ahead;
	struct extent_ptr_decoded p;
	struct ahead_job *j;
	uint64_t first, stored_bytes;
	unsigned i;

	if (!a || !locate_copy(c, k, 0, k->k.size, &p, &first, &stored_bytes) ||
	    !p.crc.csum_type || !maps->base[p.ptr.dev] ||
	    (p.ptr.offset << BCH_SECTOR_SHIFT) + stored_bytes > maps->size[p.ptr.dev])
		return 0;
	if (rc)
		for (i = 0; i < ARRAY_SIZE(rc->verified); i++)
			if (verified_match(&rc->verified[i], &k->k, &p))
				return 1;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AHEAD_JOBS; i++)
		if (job_match(&a->jobs[i], &k->k, &p)) {
			pthread_mutex_unlock(&a->lock);
			return 1;
		}
	if (a->tail - a->run >= AHEAD_JOBS || a->tail - a->seen >= AHEAD_JOBS - 1) {
		pthread_mutex_unlock(&a->lock);
		return -EAGAIN;
	}
	j = &a->jobs[a->tail % AHEAD_JOBS];
	j->idx = a->tail++;
	verified_id(&j->id, &k->k, &p);
	j->nonce = p.crc.nonce;
	j->state = AHEAD_QUEUED;
	pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->lock);
	return 1;
}

void bch_read_ahead_restart(struct bch_read_maps *m)
{
	struct bch_verify_ahead *a = m->ahead;
	unsigned i;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AHEAD_JOBS; i++)
		if (a->jobs[i].state == AHEAD_QUEUED)
			a->jobs[i].state = AHEAD_TAKEN;
	a->seen = a->tail;
	pthread_mutex_unlock(&a->lock);
}

/*
 * Is the region of @p verified by the worker? 1 yes, 0 no (it did not
 * verify), -1 not queued. A job not started yet is taken over (-1).
 */
static int ahead_result(struct bch_verify_ahead *a, const struct bkey_h *k,
			const struct extent_ptr_decoded *p)
{
	struct ahead_job *j = NULL;
	unsigned i;
	int ret = -1;

	if (!a)
		return -1;
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AHEAD_JOBS; i++)
		if (job_match(&a->jobs[i], k, p)) {
			j = &a->jobs[i];
			break;
		}
	if (j) {
		if (j->idx > a->seen)
			a->seen = j->idx;
		while (j->state == AHEAD_RUNNING)
			pthread_cond_wait(&a->done, &a->lock);
		if (j->state == AHEAD_QUEUED) {
			j->state = AHEAD_TAKEN;
			a->nr_taken++;
		} else if (job_match(j, k, p) && j->state != AHEAD_TAKEN) {
			ret = j->state == AHEAD_OK;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

int bch_read_extent_locate(struct bch_fs *c, const struct bkey_ref *k,
			   uint64_t sector_in_key, unsigned nr,
			   const struct bch_read_maps *maps, struct bch_read_cache *rc,
			   struct bch_read_loc *loc)
{
	struct extent_ptr_decoded p;
	uint64_t first, stored_bytes;
	unsigned i;

	if (!locate_copy(c, k, sector_in_key, nr, &p, &first, &stored_bytes))
		return 0;

	if (p.crc.csum_type) {
		struct bch_read_verified *v = NULL, id;
		const uint8_t *base = maps ? maps->base[p.ptr.dev] : NULL;
		int r;

		for (i = 0; i < ARRAY_SIZE(rc->verified); i++)
			if (verified_match(&rc->verified[i], &k->k, &p)) {
				v = &rc->verified[i];
				break;
			}
		if (!v) {
			if (!base || (p.ptr.offset << BCH_SECTOR_SHIFT) + stored_bytes >
			    maps->size[p.ptr.dev])
				return 0;
			verified_id(&id, &k->k, &p);
			r = ahead_result(maps->ahead, &k->k, &p);
			if (r < 0)
				r = region_verifies(base, &id, p.crc.nonce);
			if (!r)
				return 0;	/* bch_read_extent() retries and reports */
			rc->verified[rc->verified_next++ % ARRAY_SIZE(rc->verified)] = id;
		}
	}
	loc->dev	= p.ptr.dev;
	loc->sector	= first;
	return 1;
}
