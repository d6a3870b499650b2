/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading the data of one extent key (spec 40 §40.1.5, §40.1.6, §40.1.8,
 * §40.2, §40.3, §40.4.6).
 *
 * For sectors [s, s + n) of the file that lie inside extent key K:
 *
 *   - pick a pointer: devices that are present, not stale (bucket gens in
 *     c->devs[dev]->bucket_gens when known), dirty copies before cached ones;
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

#include "bkey.h"
#include "format.h"

struct bch_fs;
struct printbuf;

/* Largest encoded extent (crc128 sizes, 4 MiB). */
#define BCH_READ_ENCODED_MAX_SECTORS	8192U

/* A stored region whose checksum was verified in place (bch_read_extent_locate). */
struct bch_read_verified {
	bool		valid;
	uint8_t		dev;
	uint8_t		csum_type;
	uint32_t	size;		/* compressed_size, sectors */
	uint64_t	ptr_offset;
	uint64_t	version_lo;
	uint32_t	version_hi;
	uint64_t	csum_lo, csum_hi;
};

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

	/* the last regions verified in place, so that a region read in
	 * several pieces is verified once */
	struct bch_read_verified verified[4];
	unsigned	verified_next;

	/* statistics, for tests and -v */
	unsigned long	nr_decoded;	/* extents read from disk and decoded */
	unsigned long	nr_hits;	/* reads served from the cache */
	unsigned long	nr_retries;	/* copies that failed and were skipped */
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
 * Reads served in place: instead of copying data that is stored as is
 * (no compression, no encryption) the caller passes its place on the
 * device on (e.g. splices it from the device's file descriptor). The
 * checksum of such data is verified first, over a read-only memory
 * mapping of the device.
 */
struct bch_verify_ahead;

struct bch_read_maps {
	const uint8_t	*base[BCH_SB_MEMBERS_MAX];	/* NULL: not mapped */
	uint64_t	size[BCH_SB_MEMBERS_MAX];
	struct bch_verify_ahead *ahead;		/* NULL: not started */
};

/* Map every present member device (those that cannot be mapped are left out). */
void bch_read_maps_init(struct bch_fs *c, struct bch_read_maps *m);
/* Unmaps, and stops the worker thread of bch_read_ahead_start(). */
void bch_read_maps_exit(struct bch_read_maps *m);

/*
 * Verifying ahead of the reader: a worker thread checks the checksums of
 * regions queued with bch_read_extent_verify_ahead() over the mappings
 * (and touches nothing else: no btree, no bch_fs), so that
 * bch_read_extent_locate() finds them verified. Start it after any
 * fork() (e.g. daemonizing); it blocks every signal. false: no thread
 * (nothing mapped, or it could not be created): locate verifies itself.
 */
bool bch_read_ahead_start(struct bch_read_maps *m);

/*
 * The reader goes elsewhere: what is queued and not started is dropped,
 * and results not used yet may be overwritten by the next queued (the
 * queue keeps them otherwise, and is full when it holds nothing else).
 */
void bch_read_ahead_restart(struct bch_read_maps *m);

/*
 * Queue the stored region of extent @k that bch_read_extent_locate()
 * would verify (the first copy, stored as is, with a checksum) for the
 * worker. The thread calling this and bch_read_extent_locate() on @maps
 * must be one and the same (or serialised). Returns 1 queued (or queued
 * or verified before, in @rc, which may be NULL), 0 nothing to verify
 * ahead (no worker, encoded data, no checksum, not mapped), -EAGAIN the
 * queue is full (try again after the next reads).
 */
int bch_read_extent_verify_ahead(struct bch_fs *c, const struct bkey_ref *k,
				 struct bch_read_maps *maps,
				 const struct bch_read_cache *rc);

struct bch_read_loc {
	unsigned	dev;
	uint64_t	sector;		/* of sector_in_key on dev */
};

/*
 * Where sectors [@sector_in_key, + @nr) of extent @k can be read as they
 * are: the copy bch_read_extent() would try first, when it is stored as
 * is and its checksum (if any) verifies over @maps (or verified before,
 * remembered in @rc). Returns 1 with *@loc, or 0: read the data with
 * bch_read_extent() instead (encoded data, no mapping, a copy that does
 * not verify: bch_read_extent() then tries the others and reports).
 * The data is verified when this returns (by this call, or earlier by the
 * worker of bch_read_ahead_start(): a region it is verifying is waited
 * for, one it has not started is taken over); that it is still the same when
 * the caller reads it relies on the device not being written meanwhile.
 */
int bch_read_extent_locate(struct bch_fs *c, const struct bkey_ref *k,
			   uint64_t sector_in_key, unsigned nr,
			   const struct bch_read_maps *maps, struct bch_read_cache *rc,
			   struct bch_read_loc *loc);

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
