/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The copying garbage collector (doc/engine.md §8.10).
 *
 * A bucket is reused only when nothing live is in it. Files deleted or
 * overwritten leave buckets partly live; copygc empties the most
 * fragmented of them (fewest live sectors first) by moving their live
 * extents elsewhere (fs/move.h: read and verify, write the new copy, one
 * update that swaps the pointer only if the extent is unchanged). The
 * buckets then free by the usual rule: once the journal entry that moved
 * their last data is durable (alloc.h, pending frees).
 *
 * Btree nodes are not moved: each copy of a node takes a bucket of its
 * own (alloc.h, bch_alloc_btree_node()) and never shares it with data, and
 * a node's bucket frees whole when a checkpoint replaces the node.
 *
 * When it runs:
 *   - the mount's copygc thread (bch_copygc_start()): a device whose free
 *     buckets fall below its metadata reserve plus gc_reserve_percent of
 *     its buckets, with buckets worth emptying (bch_copygc_pick()). It
 *     takes the engine lock a chunk at a time and sleeps three times as
 *     long as it held it, so foreground work keeps most of the time.
 *   - any data write that finds no free bucket (fs/io_write.c): it calls
 *     bch_copygc_make_room() before giving up with ENOSPC. That is also
 *     the step offline writers take.
 *
 * Copygc's copies may take free buckets down to half the metadata
 * reserve (fs/move.h, bch_move_floor()): a device at the point where data
 * writes stop can still be compacted, and what it takes comes back when
 * the buckets it empties free.
 */
#ifndef BCH_FS_COPYGC_H
#define BCH_FS_COPYGC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bch_fs;
struct printbuf;

/* A bucket copygc could empty. */
struct bch_copygc_cand {
	uint64_t	bucket;
	uint32_t	live;		/* sectors of live data in it (< bucket size) */
	uint8_t		gen;
};

/*
 * Which buckets of one device to empty: @b is sorted by live sectors
 * (fewest first, then by bucket) and the number of leading entries chosen
 * is returned: as many as fit, their live sectors together at most
 * @budget (the space their copies may take), stopping once emptying them
 * gains @want buckets (buckets emptied less the buckets their copies
 * fill, ceil(live / @bucket_size)). 0 when they would gain nothing.
 * Entries with @live >= @bucket_size (full) are never chosen.
 */
size_t bch_copygc_pick(struct bch_copygc_cand *b, size_t nr, unsigned bucket_size,
		       uint64_t budget, uint64_t want);

/*
 * A data write found no free bucket (engine lock held): buckets that
 * emptied wait for their journal entry (it is written now), else a
 * copygc pass on every device. True when buckets came free, so the write
 * can try again.
 */
bool bch_copygc_make_room(struct bch_fs *c, struct printbuf *err);

/*
 * One pass now, engine lock held throughout (a command, a test): on every
 * device below its threshold, or on every device with @all. Returns the
 * buckets emptied, or a negative error.
 */
int bch_copygc_run(struct bch_fs *c, bool all, struct printbuf *err);

/*
 * The mount's copygc thread. @log (may be NULL) gets a line per pass that
 * moved something (the mount's --verbose log). NULL when it could not
 * start, or BCH_COPYGC=0 is set (tests; BCH_COPYGC_THROTTLE_US=N slows it
 * down, copygc.c).
 */
struct bch_copygc_thread;
struct bch_copygc_thread *bch_copygc_start(struct bch_fs *c, void (*log)(void *arg, const char *msg),
					   void *log_arg);
/* Stop it (after its current chunk) and free it; NULL is fine. */
void bch_copygc_stop(struct bch_copygc_thread *t);

/* "copygc_NAME N" lines for fs usage (c->copygc). */
void bch_copygc_text(struct bch_fs *c, struct printbuf *out);

#endif
