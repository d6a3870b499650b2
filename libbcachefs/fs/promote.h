/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Promote (doc/engine.md §10, §17): a read of file data served from a
 * device outside the file's promote target (the inode's promote_target,
 * else the filesystem's) asks for a cached copy of the extent on the
 * target; the next reads are served from it (fs/io_read.c tries current
 * cached copies first).
 *
 * The read only queues the extent (bch_promote_read(), under the engine
 * lock, a few comparisons): it is never delayed nor failed by it. The
 * mount's promote thread then, one extent per hold of the engine lock:
 * finds the extent again (it must be the same key), reads and verifies a
 * copy (fs/move.h), writes it as it is stored to the device of the target
 * with the most free buckets (durability 0 cache devices included), and
 * commits the extent with one more pointer, its cached bit set, in an
 * update refused when the extent changed meanwhile (bch_move_update();
 * stale cached pointers go in the same update). The replicas table gets
 * a cached entry for the device first.
 *
 * A cached copy pins nothing: its bucket is free for reuse once it holds
 * no dirty data (alloc/alloc.h, bucket_h.cached), buckets without cached
 * data are taken first, and reusing one bumps its gen, which makes every
 * cached pointer into it stale (skipped by reads, dropped when the extent
 * is next rewritten). So the cache never runs out of room for writes.
 * Since a bucket's gen is 8 bits, the thread also drops stale cached
 * pointers in a background walk over the extents once as many buckets
 * with cached data were reused as half the filesystem's buckets, long
 * before any bucket's gen can come round to a stale pointer's again.
 */
#ifndef BCH_FS_PROMOTE_H
#define BCH_FS_PROMOTE_H

#include <stdbool.h>
#include <stdint.h>

#include "bkey/bkey.h"

struct bch_fs;
struct bch_mover;
struct printbuf;

/*
 * Does extent @k, just read from device @dev (UINT32_MAX: not known),
 * want a cached copy on @target? A plain extent (type 128) read from
 * outside the target, with no current copy (cached or dirty) on a device
 * of the target.
 */
bool bch_promote_wanted(struct bch_fs *c, unsigned target, const struct bkey_ref *k,
			unsigned dev);

/*
 * @sectors of extent @k of a file with promote target @target were read
 * from device @dev: the extent is queued for the promote thread when it
 * wants a copy. Engine lock held. The file reads call it through
 * c->promote.read_hook while the thread runs (fs/fsread.c counts the
 * sectors read per device itself).
 */
void bch_promote_read(struct bch_fs *c, unsigned target, const struct bkey_ref *k,
		      unsigned dev, uint64_t sectors);

/*
 * Write a cached copy of extent @k on @target with mover @m (m->cached)
 * and commit it. Engine lock held. 0 done (or nothing to do), -EAGAIN the
 * extent changed, -BCH_ERR_nospc no room on the target, or an error with
 * why in @err.
 */
int bch_promote_extent(struct bch_mover *m, unsigned target, const struct bkey_ref *k,
		       struct printbuf *err);

/*
 * The mount's promote thread: @log (may be NULL) gets a line per error.
 * NULL when it could not start or BCH_PROMOTE=0 is set (tests): reads
 * then queue nothing.
 */
struct bch_promote_thread;
struct bch_promote_thread *bch_promote_start(struct bch_fs *c,
					     void (*log)(void *arg, const char *msg),
					     void *log_arg);
void bch_promote_stop(struct bch_promote_thread *t);

/* "promote_NAME N" and "read_sectors_dev IDX N" lines for fs usage. */
void bch_promote_text(struct bch_fs *c, struct printbuf *out);

#endif
