/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Moving extents (doc/engine.md §17): the primitive under the data jobs
 * (admin/data_job.c: rereplicate, migrate, scrub) and the copying GC
 * (fs/copygc.c).
 *
 * A move of one extent is: read a copy of its stored region and verify
 * its checksum or MAC as stored (the bytes are copied as they are: same
 * crc entry, same key version, so encrypted data stays valid), write the
 * new copy to a fresh bucket, then one update that replaces the key with
 * its changed pointer set, refused when the key is not exactly what the
 * mover read (bch_move_update()). The old copy's bucket is freed only
 * once the journal entry of that update is durable (alloc.h, pending
 * frees), so a crash at any point leaves the old or the new copy, never
 * neither.
 *
 *   struct bch_mover m;
 *   bch_mover_init(&m, c);
 *   bch_move_read_good(&m, k, 0, &src, &why);        m.buf holds the region
 *   bch_move_write(&m, sectors, exclude, &new, &why); a new copy of m.buf
 *   bch_move_commit(&m, k, &drop, &src.crc, &new, 1, &why);
 *   bch_mover_exit(&m);                               open buckets closed
 *
 * Everything here runs with the engine lock held.
 */
#ifndef BCH_FS_MOVE_H
#define BCH_FS_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/alloc.h"
#include "bkey/bkey.h"
#include "bkey/extents.h"
#include "util/util.h"

struct bch_fs;
struct btree_trans;
struct printbuf;

struct bch_mover {
	struct bch_fs		*c;
	/* the bucket each device's copies go to (filled before the next is taken) */
	struct {
		bool		open;
		uint64_t	bucket;
		uint8_t		gen;
		unsigned	used;
		unsigned	bucket_size;
	} ob[BCH_ALLOC_MAX_DEVS];
	uint64_t		full;		/* devices with no free bucket left */
	/*
	 * Buckets filled up, held until the updates that point into them
	 * are committed (bch_mover_release()): a bucket closed with none of
	 * its sectors counted yet would free at the next durable journal
	 * entry, and could be taken again under the copies.
	 */
	struct {
		unsigned	dev;
		uint64_t	bucket;
	}			*retired;
	size_t			nr_retired, size_retired;
	/*
	 * Copygc's mover: it may take free buckets down to half the metadata
	 * reserve (bch_move_floor()), because what it writes frees more.
	 */
	bool			gc;
	/*
	 * Promote's mover (fs/promote.c): its copies are cached, so devices
	 * of durability 0 (cache devices) take them too.
	 */
	bool			cached;
	uint8_t			*buf;		/* the region read */
	size_t			buf_size;
};

/* A background pass's errors: how many, and the first one's text (its log line). */
struct bch_move_errors {
	uint64_t	nr;
	struct printbuf	first;
};

/* One more error in @e and in the filesystem's count @total; its text kept if first. */
__printf(3, 4) void bch_move_error(struct bch_move_errors *e, uint64_t *total,
				   const char *fmt, ...);

void bch_mover_init(struct bch_mover *m, struct bch_fs *c);
/* The filled buckets go back to the allocator: call after each commit. */
void bch_mover_release(struct bch_mover *m);
/* Those and the open buckets go back (full or not), after the last commit. */
void bch_mover_close(struct bch_mover *m);
/* Close, and free the buffer. */
void bch_mover_exit(struct bch_mover *m);

/*
 * Free buckets of @dev a mover leaves alone: the metadata reserve, as for
 * any data write (bch_fs_rw_reserve()), or half of it for copygc (@gc).
 */
uint64_t bch_move_floor(struct bch_fs *c, unsigned dev, bool gc);

/* Sectors the stored region of pointer @p of @k takes (the whole encoded extent). */
unsigned bch_move_region_sectors(const struct bkey_ref *k, const struct extent_ptr_decoded *p);
/* Is pointer @p stale (its bucket has a newer gen), or on no member? */
bool bch_move_ptr_stale(struct bch_fs *c, const struct bch_extent_ptr_unpacked *p);
/* May the mover put a copy on @dev (present, read-write, durable, takes user data)? */
bool bch_move_dev_takes_data(struct bch_fs *c, unsigned dev);

/* May the mover put a cached copy on @dev (present, read-write, takes user data)? */
bool bch_move_dev_takes_cached(struct bch_fs *c, unsigned dev);

/* Devices any pointer of @k is on. */
uint64_t bch_extent_key_devs(const struct bkey_ref *k);
/* Devices of the dirty pointers of @k (its replicas entry), *@nr of them. */
uint64_t bch_extent_dirty_devs(const struct bkey_ref *k, unsigned *nr);
/* Durability of @k's dirty, fresh pointers on usable devices. */
unsigned bch_extent_durability(struct bch_fs *c, const struct bkey_ref *k);

/*
 * Read the stored region of pointer @p of @k into m->buf and verify its
 * checksum or MAC as stored. 0, or an error with what went wrong in @why.
 */
int bch_move_read_region(struct bch_mover *m, const struct bkey_ref *k,
			 const struct extent_ptr_decoded *p, struct printbuf *why);
/*
 * Read a good copy of @k into m->buf: the pointers in key order, those on
 * @avoid last, stale ones and those on absent members never; *@src the one
 * read. -EIO (reasons in @why) when none is good.
 */
int bch_move_read_good(struct bch_mover *m, const struct bkey_ref *k, uint64_t avoid,
		       struct extent_ptr_decoded *src, struct printbuf *why);
/*
 * Write m->buf (@sectors) to a device outside @exclude, the one with the
 * most free buckets: *@ptr is where (cached set for a cached mover).
 * -BCH_ERR_nospc when no device can take it (above its floor).
 */
int bch_move_write(struct bch_mover *m, unsigned sectors, uint64_t exclude,
		   struct bch_extent_ptr_unpacked *ptr, struct printbuf *err);

/* Pointers to drop from a key: every one on @devs, and those with index in @idxs. */
struct bch_move_drop {
	uint64_t	devs;
	uint64_t	idxs;
};

/*
 * Is @k (header and value) still exactly the key in the extents btree?
 * A mover that let the engine lock go since it read @k asks this.
 */
bool bch_move_key_unchanged(struct bch_fs *c, const struct bkey_ref *k);
/*
 * Add to @t the new version of extent @k: without the pointers @drop
 * says and without its stale cached pointers, plus @nr_new pointers @new
 * (data described by @crc); its replicas entries (user, and cached for
 * each new cached pointer) go to the superblock first. With no pointer left, an extent
 * becomes an error key and a cached extent goes. -EAGAIN when @k is not
 * the key in the btree any more (bch_move_key_unchanged()): nothing
 * added, the new copies are simply never referenced.
 */
int bch_move_update(struct bch_mover *m, struct btree_trans *t, const struct bkey_ref *k,
		    const struct bch_move_drop *drop, const struct bch_extent_crc_unpacked *crc,
		    const struct bch_extent_ptr_unpacked *new, unsigned nr_new,
		    struct printbuf *err);
/*
 * Add to @t key @nk with value @v (@bytes) in place of extent @k (a new
 * encoding of the same data: rebalance's recompression), its replicas
 * entry first. -EAGAIN when @k is not the key in the btree any more.
 */
int bch_move_replace(struct bch_mover *m, struct btree_trans *t, const struct bkey_ref *k,
		     const struct bkey_h *nk, const void *v, unsigned bytes,
		     struct printbuf *err);
/* m->buf, at least @bytes long (its contents are lost when it grows). */
uint8_t *bch_mover_buf(struct bch_mover *m, size_t bytes);

/* bch_move_update() as a transaction of its own, committed. */
int bch_move_commit(struct bch_mover *m, const struct bkey_ref *k,
		    const struct bch_move_drop *drop, const struct bch_extent_crc_unpacked *crc,
		    const struct bch_extent_ptr_unpacked *new, unsigned nr_new,
		    struct printbuf *err);

#endif
