/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A simple allocator (doc/engine.md §8, §16): in-memory bucket state for each
 * member (what each bucket holds, its gen), marked from the superblock
 * layout, the journal field and anything the caller marks; free buckets
 * for metadata that are never ones in use; alloc keys for the buckets
 * whose gen changed; journal bucket choice for a new filesystem
 * (doc/engine.md §13, doc/format.md §6.1); and the superblock replicas table (doc/engine.md §16).
 *
 * Single-threaded and offline: there are no free lists or reserves, a
 * bucket is "available" when nothing is marked in it and it was not
 * handed out before (doc/engine.md §8.5 without the runtime machinery).
 */
#ifndef BCH_ALLOC_H
#define BCH_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "bkey/extents.h"

struct bch_fs;
struct bch_sb;
struct printbuf;

#define BCH_ALLOC_MAX_DEVS	64	/* = BCH_FS_MAX_DEVS */

struct bucket_h {
	uint8_t		gen;
	uint8_t		data_type;	/* enum bch_data_type of what is in it */
	bool		gen_valid;	/* gen known (alloc key or invalidated here) */
	bool		gen_dirty;	/* gen changed: its alloc key must be written */
	bool		owned;		/* handed out by bch_alloc_bucket() */
	bool		has_key;	/* the alloc btree has a key for it */
	bool		pending;	/* emptied: free once pending_seq is durable */
	/*
	 * Live cached pointers may point into it (doc/engine.md §8.5): they
	 * pin nothing, the bucket is free once no dirty data is left, but
	 * its next use must make its new gen durable before new data goes
	 * in (the cached pointers go stale by it), and free buckets without
	 * it are taken first. Cleared when the bucket is taken.
	 */
	bool		cached;
	uint32_t	dirty_sectors;
	uint32_t	pending_seq;	/* low 32 bits of the newest such seq */
};

struct bch_dev_alloc {
	bool		present;	/* member exists and its device is open */
	unsigned	idx;
	uint64_t	nbuckets;
	unsigned	first_bucket;
	unsigned	bucket_size;	/* sectors */
	unsigned	state;		/* BCH_MEMBER_STATE_* */
	unsigned	durability;
	unsigned	data_allowed;	/* bit t = data type t */
	/*
	 * Bucket state in chunks of BUCKET_CHUNK buckets, allocated when a
	 * bucket of the chunk is first changed: a NULL chunk is all zero
	 * (free, gen 0). A big empty device costs nothing (format time does
	 * not follow the device size).
	 */
	struct bucket_h	**chunk;
	uint64_t	nr_chunks;
	uint64_t	nr_free;	/* free buckets (bch_alloc_bucket_free) */
	uint64_t	nr_free_cached;	/* of which may hold cached data (cached set) */
	uint64_t	*journal;	/* journal buckets in ring order */
	unsigned	nr_journal;
	uint64_t	next;		/* allocation cursor (lowest free from here) */
	/*
	 * The readers' gens (c->devs[idx]->bucket_gens, nr_read_gens of
	 * them; NULL: none): a bucket taken gets its new gen there at once,
	 * so reads skip the cached pointers it made stale.
	 */
	uint8_t		*read_gens;
	uint64_t	nr_read_gens;
};

#define BUCKET_CHUNK_SHIFT	14
#define BUCKET_CHUNK		(1ULL << BUCKET_CHUNK_SHIFT)

_Static_assert(sizeof(struct bucket_h) == 16, "bucket_h");

/* Bucket @b (< nbuckets) of @d, to read: a shared zero bucket when untouched. */
static inline const struct bucket_h *bch_bucket(const struct bch_dev_alloc *d, uint64_t b)
{
	static const struct bucket_h zero;
	const struct bucket_h *c = d->chunk[b >> BUCKET_CHUNK_SHIFT];

	return c ? &c[b & (BUCKET_CHUNK - 1)] : &zero;
}

/*
 * Bucket @b of @d, to change. Changes that can make it free or in use go
 * through the allocator's functions (they keep nr_free).
 */
struct bucket_h *bch_bucket_mut(struct bch_dev_alloc *d, uint64_t b);

/* In-memory replicas table (doc/format.md §2.9): entries as device bitmasks. */
struct bch_replicas_h {
	uint8_t		data_type;
	uint64_t	devs;		/* bit d = device d */
};

struct bch_replicas_table {
	struct bch_replicas_h	*e;
	size_t			nr;
	bool			changed;	/* entries added since load */
};

/* A bucket that emptied: free once journal entry @seq is durable (doc/engine.md §8.5). */
struct bch_pending_free {
	unsigned	dev;
	uint64_t	bucket;
	uint64_t	seq;
};

struct bch_allocator {
	struct bch_dev_alloc	*devs[BCH_ALLOC_MAX_DEVS];
	unsigned		nr_devices;	/* superblock nr_devices */
	unsigned		block_size;	/* sectors */
	unsigned		btree_node_size;
	unsigned		meta_replicas;	/* wanted */
	unsigned		meta_replicas_req;
	/*
	 * Free buckets per device that user data never takes, at least
	 * (bch_alloc_dev_reserve()): set by the engine from what a
	 * checkpoint needs (btree/reserve.h); 0: the fraction alone.
	 */
	uint64_t		reserve_min;
	unsigned		rr;		/* round-robin cursor among equal devices */
	struct bch_replicas_table replicas;

	/*
	 * Sectors promised to reservations that no data holds yet: counted
	 * out of the space a data write may take (alloc/space.h: reserved).
	 */
	uint64_t		reserved_sectors;

	/*
	 * The last bch_alloc_bucket() took a bucket that held cached data:
	 * its new gen must be durable before data is written to it.
	 */
	bool			took_cached;
	/*
	 * Buckets with cached data invalidated since the start: each such
	 * reuse may leave stale cached pointers behind, which must be gone
	 * before the bucket's 8-bit gen comes round to theirs again (the
	 * promote thread sweeps them, fs/promote.h).
	 */
	uint64_t		cached_invalidated;

	/* emptied buckets waiting for their journal entry (bch_alloc_user_add) */
	struct bch_pending_free	*pending;
	size_t			nr_pending, size_pending;
};

/*
 * Bucket state of every present member of @c: superblock buckets, journal
 * buckets (from each device's own superblock), gens from ca->bucket_gens
 * when the alloc btree was read (else 0, not valid), replicas from c->sb.
 */
int bch_alloc_init(struct bch_allocator *a, struct bch_fs *c, struct printbuf *err);
void bch_alloc_exit(struct bch_allocator *a);

/*
 * Mark @sectors of bucket @bucket on @dev as holding @data_type. Two
 * different types in one bucket are an error (-EINVAL, message).
 */
int bch_alloc_mark(struct bch_allocator *a, unsigned dev, uint64_t bucket,
		   unsigned data_type, unsigned sectors, struct printbuf *err);

/* Mark what a btree pointer key references (btree_node_size per pointer). */
int bch_alloc_mark_btree_ptr(struct bch_allocator *a, const struct bkey_ref *k,
			     struct printbuf *err);

/*
 * A live cached pointer points into @bucket of @dev (the bucket's cached
 * flag): it stays free or in use as it was, and is taken after the free
 * buckets without cached data (doc/engine.md §8.5).
 */
void bch_alloc_mark_cached(struct bch_allocator *a, unsigned dev, uint64_t bucket);

/* Free buckets of @dev that may hold cached data (taken last). */
uint64_t bch_alloc_dev_free_cached(const struct bch_allocator *a, unsigned dev);

/* Is the bucket free (nothing marked, not handed out, >= first_bucket)? */
bool bch_alloc_bucket_free(const struct bch_allocator *a, unsigned dev, uint64_t bucket);

/*
 * Journal buckets for a device of @nbuckets buckets of @bucket_size
 * sectors (doc/engine.md §13, doc/format.md §6.1): clamp(nbuckets >> 8, 20, min(1024, 2^20 /
 * bucket_size)), the upper bound winning.
 */
unsigned bch_journal_buckets_wanted(uint64_t nbuckets, unsigned bucket_size);

/*
 * Give device @dev @nr journal buckets: the lowest free buckets b0 < b1 <
 * ... in ring order b1 .. b(nr-1), b0 (the reference's insertion order).
 * Marks them JOURNAL. -EEXIST if the device already has a journal,
 * -ENOSPC if there are not enough free buckets.
 */
int bch_alloc_journal_buckets(struct bch_allocator *a, unsigned dev, unsigned nr,
			      struct printbuf *err);

/*
 * Take the lowest free bucket of @dev for @data_type from the cursor on,
 * one without cached data when there is one: invalidate it (gen + 1,
 * alloc key dirty; a->took_cached says whether it held cached data), mark
 * @sectors of it. Never returns a bucket in use.
 */
int bch_alloc_bucket(struct bch_allocator *a, unsigned dev, unsigned data_type,
		     unsigned sectors, uint64_t *bucket, uint8_t *gen,
		     struct printbuf *err);

/*
 * Invalidate up to @max free buckets of @dev that may hold cached data,
 * from the cursor on: each gets a new gen (its cached pointers go stale,
 * its alloc key dirty) and stays free, without cached data. Their
 * numbers and gens go to @buckets and @gens; returns how many. The
 * caller makes the gens durable before any of them is written (one
 * journal flush for a batch, doc/engine.md §8.5).
 */
unsigned bch_alloc_invalidate_cached(struct bch_allocator *a, unsigned dev, unsigned max,
				     uint64_t *buckets, uint8_t *gens);

/*
 * Space for one btree node with metadata_replicas copies (durability
 * counted; devices that are RW, allow btree data and have durability >= 1),
 * each copy in its own fresh bucket. Fills @ptrs (offset = bucket start)
 * and *@nr. -ENOSPC / -EROFS (fewer than metadata_replicas_required).
 */
int bch_alloc_btree_node(struct bch_allocator *a, struct btree_ptr_h *ptrs, unsigned *nr,
			 struct printbuf *err);

/*
 * Alloc keys (btree 4, type 128, fields 0: value `00 gen 00..`, doc/format.md §5.8)
 * for every bucket whose gen changed, sorted by (dev, bucket). *@keys and
 * *@vals are malloc'd (free both); keys point into vals.
 */
int bch_alloc_dirty_keys(const struct bch_allocator *a, struct bkey_ref **keys,
			 uint64_t **vals, size_t *nr);

/*
 * The whole alloc btree as the allocator knows it: a key for every bucket
 * that had one, has a gen other than 0, or holds btree, user or cached
 * data, sorted by (dev, bucket). Those buckets are then marked has_key.
 * *@keys and *@vals are malloc'd (free both).
 */
int bch_alloc_all_keys(struct bch_allocator *a, struct bkey_ref **keys,
		       uint64_t **vals, size_t *nr);

/* The bucket holds nothing any more (its gen stays; the next use bumps it). */
void bch_alloc_release(struct bch_allocator *a, unsigned dev, uint64_t bucket);

/*
 * Set the gen of a bucket (fsck: a pointer's gen is newer than its
 * bucket's, or the bucket had no alloc key): the gen is then known and
 * its alloc key dirty. False when there is no such bucket.
 */
bool bch_alloc_set_gen(struct bch_allocator *a, unsigned dev, uint64_t bucket, uint8_t gen);

/*
 * ---- user data, at run time ----
 *
 * A user-data bucket counts the logical sectors of the live extents that
 * point into it (key sizes: a linear count, so that an overwrite subtracts
 * exactly what it covers, compressed or not). When the count reaches 0
 * the bucket is not free at once: its keys were overwritten by an update
 * in journal entry @seq, and until that entry is durable a crash would
 * bring them back. It is held (owned) until bch_alloc_release_durable()
 * is told that @seq is durable (held: pending). A bucket a write point is
 * filling (owned) waits for bch_alloc_wp_close(), which may come before
 * the keys of its data are committed: a held bucket that got data
 * meanwhile is simply in use when its entry is durable, and one emptied
 * again meanwhile waits for the later entry.
 */
void bch_alloc_user_add(struct bch_allocator *a, unsigned dev, uint64_t bucket,
			int64_t delta, uint64_t seq);
/* A write point is done with @bucket (full, or stopping): see above. */
void bch_alloc_wp_close(struct bch_allocator *a, unsigned dev, uint64_t bucket, uint64_t seq);
/* Buckets that emptied in entries up to @durable_seq become free. */
void bch_alloc_release_durable(struct bch_allocator *a, uint64_t durable_seq);
/* Free buckets of @dev. */
uint64_t bch_alloc_dev_free(const struct bch_allocator *a, unsigned dev);
/*
 * Free buckets of @dev that user data may not take: kept for btree nodes,
 * so that a checkpoint always finds its nodes (1/32 of the device, at
 * least 8 and at least a->reserve_min). Data writes stop there
 * (bch_fs_rw_data_bucket()); statfs and fs usage count them as reserved
 * (alloc/space.h).
 */
uint64_t bch_alloc_dev_reserve(const struct bch_allocator *a, unsigned dev);

/* Every gen change is in the alloc btree now. */
void bch_alloc_clear_dirty(struct bch_allocator *a);

/*
 * ---- members changing at run time (doc/engine.md §17) ----
 *
 * Bring the bucket state of device @dev in line with member @dev of c->sb
 * and c->devs[@dev]: a member that is gone loses its state (its alloc keys
 * are not written again); a new one starts with every bucket free but its
 * superblock area (gens from ca->bucket_gens when known); state,
 * durability and data types allowed follow the member; a member that
 * grew gets its new buckets free; one that comes (back) online has its
 * superblock and journal buckets (from ca->sb) marked. A member whose
 * device is missing keeps its gens (not present: nothing is allocated
 * there, its alloc keys are kept).
 */
int bch_alloc_dev_sync(struct bch_allocator *a, struct bch_fs *c, unsigned dev,
		       struct printbuf *err);

/* ---- replicas (doc/engine.md §16) ---- */

/* Load the table of superblock @sb (entries with devices >= 64 are skipped). */
void bch_replicas_load(struct bch_replicas_table *r, const struct bch_sb *sb);
void bch_replicas_exit(struct bch_replicas_table *r);
/* Add {data_type, devs} if missing; returns true when it was added. */
bool bch_replicas_add(struct bch_replicas_table *r, unsigned data_type, uint64_t devs);
bool bch_replicas_has(const struct bch_replicas_table *r, unsigned data_type, uint64_t devs);

/*
 * The replicas field body as the reference writes it (doc/format.md §2.9): sorted by
 * (data_type, device bitmap), stored in Eytzinger order, u64s =
 * ceil((16 + sum(2 + nr)) / 8) (header counted twice). @out receives the
 * whole field including its 8-byte header; returns its size in bytes, or
 * 0 when an entry has more than 3 devices (-EINVAL for the caller).
 */
size_t bch_replicas_field_build(const struct bch_replicas_table *r, uint8_t **out);

/*
 * Replace (or append) field @type of *@sb with @field (a whole field,
 * header included, @bytes a multiple of 8); *@sb is reallocated. A field
 * already present keeps its position (doc/format.md §2.14).
 */
void bch_sb_field_replace(struct bch_sb **sb, unsigned type, const void *field, size_t bytes);

#endif
