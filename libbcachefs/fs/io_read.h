/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading the data of one extent key (doc/format.md §5.2.6, §5.2.8, §5.2.7,
 * doc/format.md §7, §8, §7.5).
 *
 * For sectors [s, s + n) of the file that lie inside extent key K:
 *
 *   - pick a pointer: devices that are present, not stale (bucket gens in
 *     c->devs[dev]->bucket_gens when known), cached copies whose gens are
 *     known first (they are on the fast devices), then dirty ones;
 *   - unencoded data (no checksum, no compression): read just the needed
 *     sectors at ptr.offset + crc.offset + (s - start(K));
 *   - encoded data: read the whole compressed_size region at ptr.offset,
 *     verify the checksum or MAC of it as stored, then decrypt, decompress
 *     to uncompressed_size, and copy the live part starting at
 *     crc.offset + (s - start(K));
 *   - a read error, checksum/MAC mismatch or decode failure moves on to the
 *     next pointer; when no copy is good the read fails (the last error,
 *     e.g. -BCH_ERR_csum_mismatch) and every failed copy is described in
 *     @err: inode:offset, device and sector, what was expected and found.
 *
 * Nothing from disk is trusted: sizes of encoded extents are capped at the
 * crc128 maximum (8192 sectors), the live part must lie inside the decoded
 * data, and decryption only ever happens after the MAC verified, so a
 * wrong MAC never yields plaintext.
 *
 * Key types: 128 extent / 129 cached extent are read as above; with no
 * usable pointer a cached extent reads as zeroes, an extent fails with
 * -EIO. 130 reservation, 1 discard, 0 deleted read as zeroes; 2 (error)
 * fails with -EIO.
 *
 * Thread safety: no global state. A struct bch_read_cache belongs to one
 * reader at a time; bch_fs device reads are pread()s.
 */
#ifndef BCH_IO_READ_H
#define BCH_IO_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "format/format.h"

struct bch_fs;
struct printbuf;

/* Largest encoded extent (crc128 sizes, 4 MiB). */
#define BCH_READ_ENCODED_MAX_SECTORS	8192U

/*
 * The decoded (decrypted, decompressed) data of the last encoded extent
 * read, so that sequential reads of one extent in small pieces decode it
 * once. Identified by the stored region and its descriptor, not by the
 * key: the front and back parts of a split extent share it.
 * Zero-initialise (or BCH_READ_CACHE_INIT); free with bch_read_cache_exit().
 */
struct bch_read_cache {
	bool		valid;
	uint8_t		dev;
	uint8_t		gen;
	uint64_t	ptr_offset;
	uint64_t	version_lo;
	uint32_t	version_hi;
	struct bch_extent_crc_unpacked crc;	/* offset field zeroed */
	void		*data;		/* uncompressed_size * 512 bytes */
	size_t		data_bytes;

	/* scratch for the stored region */
	void		*buf;
	size_t		buf_size;

	/* statistics, for tests and -v */
	unsigned long	nr_decoded;	/* extents read from disk and decoded */
	unsigned long	nr_hits;	/* reads served from the cache */
	unsigned long	nr_retries;	/* copies that failed and were skipped */
	/* the device the last successful bch_read_extent() read from */
	uint8_t		last_dev;
};

#define BCH_READ_CACHE_INIT	((struct bch_read_cache) { 0 })

void bch_read_cache_exit(struct bch_read_cache *rc);

/*
 * Read @nr sectors starting @sector_in_key sectors after the start of
 * extent @k into @buf (@nr * 512 bytes). @rc may be NULL (no cache).
 * Returns 0 or a negative error with the details appended to @err (may be
 * NULL): -EIO (error key, no usable pointer, invalid value, device read
 * error), -BCH_ERR_csum_mismatch, -BCH_ERR_decompress, -BCH_ERR_no_key
 * (encrypted data without the key), -ERANGE (range outside the key).
 * On error @buf holds zeroes for the range, never unverified data.
 */
int bch_read_extent(struct bch_fs *c, const struct bkey_ref *k,
		    uint64_t sector_in_key, unsigned nr, void *buf,
		    struct bch_read_cache *rc, struct printbuf *err);

/*
 * Reading ahead of a sequential reader (the FUSE mount): a worker thread
 * reads the stored regions of the extents queued with
 * bch_read_extent_ahead() into buffers of its own and verifies (and
 * decodes) them there, so that bch_read_extent_locate() finds the data of
 * the next reads read and verified, in memory: the reply is made from those
 * buffers, with no copy by the reader. The data handed out is the data
 * that was verified.
 *
 * What is read ahead is the copy bch_read_extent() would try first, on a
 * present device: a checksummed, compressed or encrypted extent whole
 * (its stored region, verified, decrypted and decompressed, when the
 * decoded data fits a buffer; encrypted data only with the key loaded),
 * data stored as is without checksum in buffer-sized pieces. Anything
 * else, and a region that failed to read, verify or decode, is left to
 * bch_read_extent() (which tries the other copies and reports).
 *
 * The worker touches no btree and no bch_fs state: it preads the device
 * files, checksums, decrypts (with its own copy of the key, wiped at the
 * end) and decompresses. Everything else is called by one reader thread.
 */
struct bch_read_ahead;

/*
 * Start the worker for @c (after any fork(), e.g. daemonizing; the
 * thread blocks every signal). Its buffers take 8 MiB. NULL when
 * it cannot start (no memory, no thread): the reads then read themselves.
 */
struct bch_read_ahead *bch_read_ahead_new(struct bch_fs *c);
void bch_read_ahead_free(struct bch_read_ahead *ra);

/*
 * Queue what holds sectors [@sector_in_key, + @nr) of extent @k (see
 * above: a whole region, or the pieces over that range). Returns 1 queued
 * (or queued before), 0 nothing for the worker, -EAGAIN the queue is
 * full: call again for this key after the next reads. The queue holds
 * what the reader has not reached yet plus the region it reached last;
 * older buffers are reused by this call.
 */
int bch_read_extent_ahead(struct bch_fs *c, const struct bkey_ref *k,
			  uint64_t sector_in_key, uint64_t nr, struct bch_read_ahead *ra);

/*
 * The reader goes elsewhere: what is queued and not started is dropped,
 * and buffers not used yet may be reused by the next queued.
 */
void bch_read_ahead_restart(struct bch_read_ahead *ra);

/*
 * Sectors [@sector_in_key, + @nr) of extent @k, read and verified by the
 * worker: returns how many of them from the first on (> 0) lie in one of
 * its buffers, at *@data, or 0: read them with bch_read_extent() instead
 * (not queued, a region the worker found bad, or one it had not started:
 * that one is taken from it). A region being read is waited for. *@data
 * stays valid until the next bch_read_extent_ahead() or
 * bch_read_ahead_restart() on @ra; *@dev is the device they were read from.
 */
unsigned bch_read_extent_locate(struct bch_fs *c, const struct bkey_ref *k,
				uint64_t sector_in_key, unsigned nr,
				struct bch_read_ahead *ra, const void **data, unsigned *dev);

/* Worker statistics, for tests: regions read and verified, taken over,
 * and served from its buffers. */
void bch_read_ahead_stats(struct bch_read_ahead *ra, unsigned long *nr_done,
			  unsigned long *nr_taken, unsigned long *nr_served);

/* Does @k carry data to read (types 128/129), as opposed to zeroes? */
static inline bool bch_extent_has_data(const struct bkey_h *k)
{
	return k->type == BCH_EXTENT || k->type == BCH_EXTENT_CACHED;
}

/*
 * Does @k read as a hole: no data type, or a cached extent (129) none of
 * whose copies is usable (missing device or stale)? Sparse copies skip it.
 */
bool bch_extent_reads_as_hole(struct bch_fs *c, const struct bkey_ref *k);

#endif
