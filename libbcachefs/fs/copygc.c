// SPDX-License-Identifier: GPL-2.0
/*
 * The copying garbage collector (doc/engine.md §8.6): see copygc.h.
 *
 * A pass: choose buckets on each device that needs room (fewest live
 * sectors first, as many as the copies can take), then walk the extents
 * btree once and move every extent with a dirty pointer into a chosen
 * bucket (with the gen it had when chosen: a bucket that freed and was
 * reused meanwhile holds other data). There are no backpointers in this
 * format, so the walk is the only way to find a bucket's extents; it
 * stops early once the chosen buckets hold nothing. The moves of a chunk
 * are committed together (each key swapped only if unchanged); then the
 * journal is written so the emptied buckets free at once.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs/copygc.h"
#include "fs/worker.h"
#include "alloc/alloc.h"
#include "bkey/bkey_types.h"
#include "bkey/extents.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "btree/reserve.h"
#include "core/bch_fs.h"
#include "format/format.h"
#include "fs/move.h"
#include "util/errcode.h"
#include "util/util.h"

/* A chunk (what is done under one hold of the engine lock by the thread). */
#define GC_CHUNK_KEYS		4096
#define GC_CHUNK_BYTES		(4U << 20)
#define GC_CHUNK_NS		(20ULL * 1000 * 1000)
/* Moves per transaction (each key still swapped on its own terms). */
#define GC_TRANS_KEYS		64
/* The thread sleeps this many times as long as it held the lock. */
#define GC_DUTY			3
/* gc_reserve_percent when the superblock says 0 (the format's default). */
#define GC_RESERVE_DEFAULT	8

/*
 * Tests: BCH_COPYGC=0 starts no thread (a filesystem prepared with
 * fragmented buckets stays so until a later mount); BCH_COPYGC_THROTTLE_US=N
 * makes the thread move at most 16 extents per chunk and sleep N
 * microseconds per extent after it, so that it can be caught in the middle.
 */
static unsigned long gc_throttle_us(void)
{
	const char *e = getenv("BCH_COPYGC_THROTTLE_US");

	return e && *e ? strtoul(e, NULL, 10) : 0;
}

/* ---- choosing buckets ----------------------------------------------------- */

static int cand_cmp(const void *pa, const void *pb)
{
	const struct bch_copygc_cand *a = pa, *b = pb;

	if (a->live != b->live)
		return a->live < b->live ? -1 : 1;
	return a->bucket < b->bucket ? -1 : a->bucket > b->bucket;
}

size_t bch_copygc_pick(struct bch_copygc_cand *b, size_t nr, unsigned bucket_size,
		       uint64_t budget, uint64_t want)
{
	uint64_t live = 0, gain = 0;
	size_t n = 0;

	if (!nr || !bucket_size)
		return 0;
	qsort(b, nr, sizeof(*b), cand_cmp);
	while (n < nr && b[n].live < bucket_size && live + b[n].live <= budget) {
		live += b[n].live;
		n++;
		/* emptied buckets less the buckets their copies fill */
		gain = n - (live + bucket_size - 1) / bucket_size;
		if (gain >= want)
			break;
	}
	return gain ? n : 0;
}

/* A chosen bucket. */
struct gc_sel {
	unsigned	dev;
	uint64_t	bucket;
	uint8_t		gen;
};

static int sel_cmp(const void *pa, const void *pb)
{
	const struct gc_sel *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->bucket < b->bucket ? -1 : a->bucket > b->bucket;
}

/*
 * Free buckets below which a device wants copygc: its reserve plus
 * gc_reserve_percent; and while the engine refuses data buckets of the
 * device (the btree reserve, btree/reserve.h, may stop data writes above
 * that), gc_reserve_percent more than it has.
 */
static uint64_t gc_threshold(struct bch_fs *c, const struct bch_dev_alloc *d)
{
	unsigned pct = (unsigned)BCH_SB_GC_RESERVE(c->sb) ?: GC_RESERVE_DEFAULT;
	uint64_t n = d->nbuckets > d->first_bucket ? d->nbuckets - d->first_bucket : 0;
	uint64_t thr = bch_fs_rw_reserve(c, d->idx) + n * pct / 100;

	if (!bch_rw_data_bucket_fits(c, d->idx))
		thr = max_t(uint64_t, thr, d->nr_free + n * pct / 100);
	return thr;
}

static const struct bch_dev_alloc *gc_dev(struct bch_fs *c, unsigned dev)
{
	const struct bch_allocator *a = bch_fs_rw_alloc(c);

	return a && bch_move_dev_takes_data(c, dev) ? a->devs[dev] : NULL;
}

/* Does a device need copygc (below its threshold)? */
static bool gc_wanted(struct bch_fs *c)
{
	for (unsigned dev = 0; dev < BCH_ALLOC_MAX_DEVS; dev++) {
		const struct bch_dev_alloc *d = gc_dev(c, dev);

		if (d && d->nr_free < gc_threshold(c, d))
			return true;
	}
	return false;
}

struct gc_pass {
	struct bch_fs		*c;
	struct gc_sel		*sel;
	size_t			nr_sel;
	uint64_t		live;		/* of the chosen buckets when chosen */
	uint64_t		cap;		/* their size */
	struct bch_mover	m;
	unsigned long		member_changes;
	/* what it did */
	uint64_t		sectors, extents, raced, buckets;
	uint64_t		held_ns;
	bool			nospc;		/* the copies found no room: the pass ended */
	unsigned long		throttle_us;	/* BCH_COPYGC_THROTTLE_US */
	struct bch_move_errors	errs;
};

/* Choose the buckets of every device below its threshold (or every device: @all). */
static void gc_select(struct gc_pass *p, bool all)
{
	struct bch_fs *c = p->c;
	struct bch_copygc_cand *cand = NULL;
	size_t size = 0;

	for (unsigned dev = 0; dev < BCH_ALLOC_MAX_DEVS; dev++) {
		const struct bch_dev_alloc *d = gc_dev(c, dev);
		uint64_t thr, floor, nr_free, n = 0, k;

		if (!d)
			continue;
		thr = gc_threshold(c, d);
		floor = bch_move_floor(c, dev, true);
		nr_free = d->nr_free;
		if ((!all && nr_free >= thr) || nr_free <= floor + 1)
			continue;
		for (uint64_t ch = 0; ch < d->nr_chunks; ch++) {
			const struct bucket_h *g = d->chunk[ch];

			if (!g)
				continue;
			for (uint64_t i = 0; i < BUCKET_CHUNK; i++) {
				uint64_t b = ch * BUCKET_CHUNK + i;

				if (b >= d->nbuckets)
					break;
				if (b < d->first_bucket || g[i].data_type != BCH_DATA_USER ||
				    g[i].owned || g[i].pending || !g[i].dirty_sectors ||
				    g[i].dirty_sectors >= d->bucket_size)
					continue;
				if (n == size) {
					size = size ? 2 * size : 1024;
					cand = xrealloc(cand, size * sizeof(*cand));
				}
				cand[n++] = (struct bch_copygc_cand) {
					.bucket = b, .live = g[i].dirty_sectors, .gen = g[i].gen,
				};
			}
		}
		/* one bucket of the budget is left for the copies' partly filled last bucket */
		k = bch_copygc_pick(cand, n, d->bucket_size,
				    (nr_free - floor - 1) * d->bucket_size,
				    thr > nr_free ? thr - nr_free : 1);
		if (!k)
			continue;
		p->sel = xrealloc(p->sel, (p->nr_sel + k) * sizeof(*p->sel));
		for (uint64_t i = 0; i < k; i++) {
			p->sel[p->nr_sel++] = (struct gc_sel) {
				.dev = dev, .bucket = cand[i].bucket, .gen = cand[i].gen,
			};
			p->live += cand[i].live;
			p->cap += d->bucket_size;
		}
	}
	free(cand);
	if (p->nr_sel)
		qsort(p->sel, p->nr_sel, sizeof(*p->sel), sel_cmp);
}

static bool sel_has(const struct gc_pass *p, unsigned dev, uint64_t bucket, uint8_t gen)
{
	struct gc_sel key = { .dev = dev, .bucket = bucket };
	const struct gc_sel *s = bsearch(&key, p->sel, p->nr_sel, sizeof(key), sel_cmp);

	return s && s->gen == gen;
}

/* The state of chosen bucket @i now, or NULL (its device gone or shrunk). */
static const struct bucket_h *sel_bucket(const struct bch_allocator *a, const struct gc_pass *p,
					 size_t i)
{
	const struct bch_dev_alloc *d = a->devs[p->sel[i].dev];

	return d && p->sel[i].bucket < d->nbuckets ? bch_bucket(d, p->sel[i].bucket) : NULL;
}

/* Live sectors left in the chosen buckets (those still holding what they held). */
static uint64_t sel_live(const struct gc_pass *p)
{
	const struct bch_allocator *a = bch_fs_rw_alloc(p->c);
	uint64_t live = 0;

	for (size_t i = 0; a && i < p->nr_sel; i++) {
		const struct bucket_h *g = sel_bucket(a, p, i);

		if (g && g->gen == p->sel[i].gen && g->data_type == BCH_DATA_USER)
			live += g->dirty_sectors;
	}
	return live;
}

/* Chosen buckets that hold nothing of what they held now. */
static uint64_t sel_emptied(const struct gc_pass *p)
{
	const struct bch_allocator *a = bch_fs_rw_alloc(p->c);
	uint64_t n = 0;

	for (size_t i = 0; a && i < p->nr_sel; i++) {
		const struct bucket_h *g = sel_bucket(a, p, i);

		if (g)
			n += g->gen != p->sel[i].gen || !g->dirty_sectors;
	}
	return n;
}

/* An error of pass @p, counted in fs usage too (fs/move.h). */
#define gc_error(p, ...) bch_move_error(&(p)->errs, &(p)->c->copygc.errors, __VA_ARGS__)

/*
 * Move the pointers of @k that point into chosen buckets: the new copies
 * written, the update added to @t. 0 (moved, or left alone), or an error
 * that ends the pass (-BCH_ERR_nospc: no room for the copies).
 */
static int gc_key(struct gc_pass *p, struct btree_trans *t, const struct bkey_ref *k)
{
	struct bch_fs *c = p->c;
	struct bch_move_drop drop = { 0 };
	struct bch_extent_ptr_unpacked new[BCH_REPLICAS_MAX];
	struct extent_ptr_decoded ptr, src;
	struct extent_ptr_iter it;
	struct printbuf why = PRINTBUF;
	unsigned i = 0, nr_new = 0, sectors, drop_dev[BCH_REPLICAS_MAX], nr_drop = 0;
	uint64_t drop_devs = 0, new_devs = 0;
	int ret = 0;

	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &ptr) > 0) {
		unsigned idx = i++;
		struct bch_member_dev *ca = ptr.ptr.dev < BCH_FS_MAX_DEVS ? c->devs[ptr.ptr.dev] : NULL;

		if (ptr.ptr.cached || ptr.ptr.dev >= 64 || idx >= 64 || !ca || !ca->bucket_size ||
		    nr_drop == BCH_REPLICAS_MAX ||
		    !sel_has(p, ptr.ptr.dev, ptr.ptr.offset / ca->bucket_size, ptr.ptr.gen))
			continue;
		drop.idxs |= 1ULL << idx;
		drop_devs |= 1ULL << ptr.ptr.dev;
		drop_dev[nr_drop++] = ptr.ptr.dev;
	}
	if (!nr_drop)
		return 0;
	ret = bch_move_read_good(&p->m, k, 0, &src, &why);
	if (ret) {
		gc_error(p, "inode %" PRIu64 " at byte %" PRIu64 ": no good copy to move (%s)",
			 k->k.p.inode, (k->k.p.offset - k->k.size) << 9, printbuf_str(&why));
		ret = 0;
		goto out;
	}
	sectors = bch_move_region_sectors(k, &src);
	for (unsigned j = 0; j < nr_drop; j++) {
		/* on the same device when it has room, else where the key has no copy */
		ret = bch_move_write(&p->m, sectors, ~(1ULL << drop_dev[j]) | new_devs,
				     &new[nr_new], &why);
		if (ret == -BCH_ERR_nospc)
			ret = bch_move_write(&p->m, sectors,
					     (bch_extent_key_devs(k) & ~drop_devs) | new_devs,
					     &new[nr_new], &why);
		if (ret)
			goto out;
		new_devs |= 1ULL << new[nr_new].dev;
		nr_new++;
	}
	ret = bch_move_update(&p->m, t, k, &drop, &src.crc, new, nr_new, &why);
	if (ret == -EAGAIN) {
		p->raced++;
		c->copygc.raced++;
		ret = 0;
		goto out;
	}
	if (ret) {
		gc_error(p, "inode %" PRIu64 " at byte %" PRIu64 ": %s", k->k.p.inode,
			 (k->k.p.offset - k->k.size) << 9, printbuf_str(&why));
		ret = ret == -E2BIG || ret == -EINVAL ? 0 : ret;
		goto out;
	}
	p->extents++;
	p->sectors += (uint64_t)sectors * nr_new;
	/* fs usage sees them as they happen (a pass can take a while) */
	c->copygc.extents++;
	c->copygc.sectors += (uint64_t)sectors * nr_new;
out:
	printbuf_exit(&why);
	return ret;
}

/*
 * A commit of moves: it empties the chosen buckets, an operation that
 * frees space, so it takes the recovery reserve (btree/reserve.h) like an
 * unlink. The copies' buckets were taken only while the next checkpoint's
 * nodes and that reserve fitted (bch_rw_move_bucket_fits()); outside of
 * it the commit would find those buckets gone and drop moves already
 * written.
 */
static int gc_commit(struct btree_trans *t, struct printbuf *err)
{
	bool old = bch_fs_rw_use_reserve(t->c, true);
	int ret = bch_trans_commit(t, err);

	bch_fs_rw_use_reserve(t->c, old);
	return ret;
}

/*
 * Does the next checkpoint's bound with the moves of @t added leave less
 * than the recovery reserve? Then they commit now: each move may bring
 * new leaves into the bound (several nodes each), and the copies of the
 * next ones take buckets; committed before that, the bound of @t always
 * fits the commit's reserve mode.
 */
static bool gc_trans_full(const struct btree_trans *t)
{
	struct printbuf ignore = PRINTBUF;
	bool full = bch_rw_trans_fits(t->c, t, &ignore) != 0;

	printbuf_exit(&ignore);
	return full;
}

/*
 * One chunk of the walk from *@pos (engine lock held): at most
 * GC_CHUNK_KEYS keys (and GC_CHUNK_BYTES moved, GC_CHUNK_NS spent unless
 * @locked: a caller that holds the lock for the whole pass has nobody to
 * make room for). *@done at the end of the btree.
 */
static int gc_chunk(struct gc_pass *p, struct bpos_h *pos, bool locked, bool *done)
{
	struct bch_fs *c = p->c;
	struct printbuf ignore = PRINTBUF, err = PRINTBUF;
	struct btree_iter iter;
	struct btree_trans t;
	uint64_t start = bch_now_ns(), sectors0 = p->sectors, extents0 = p->extents;
	unsigned n = 0;
	int ret = 0;

	bch_trans_init(&t, c);
	bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, *pos, &ignore);
	for (;;) {
		struct bkey_ref *k;

		if (n >= GC_CHUNK_KEYS ||
		    (!locked && ((p->sectors - sectors0) << 9 >= GC_CHUNK_BYTES ||
				 bch_now_ns() - start >= GC_CHUNK_NS ||
				 (p->throttle_us && p->extents - extents0 >= 16))))
			break;
		ret = bch_btree_iter_peek(&iter, &k);
		if (ret || !k) {
			*done = true;
			break;
		}
		*pos = k->k.p;
		n++;
		if (k->k.type == BCH_EXTENT && k->v_bytes <= BKEY_EXTENT_VAL_U64s_MAX * 8) {
			uint64_t val[BKEY_EXTENT_VAL_U64s_MAX];
			struct bkey_ref copy = *k;

			memcpy(val, k->v, k->v_bytes);
			copy.v = val;
			ret = gc_key(p, &t, &copy);
			if (ret)
				break;
			if (t.nr >= GC_TRANS_KEYS || (t.nr && gc_trans_full(&t))) {
				ret = gc_commit(&t, &err);
				if (ret)
					break;
				bch_mover_release(&p->m);
			}
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	if (ret == -BCH_ERR_nospc) {
		p->nospc = true;
		*done = true;
		ret = 0;
	}
	if (!ret && t.nr)
		ret = gc_commit(&t, &err);
	/* the copies' buckets now count what the committed keys put there */
	bch_mover_release(&p->m);
	if (ret)
		gc_error(p, "%s%s%s", bch_err_str(ret), err.pos ? ": " : "", printbuf_str(&err));
	bch_trans_exit(&t);
	printbuf_exit(&ignore);
	printbuf_exit(&err);
	p->held_ns += bch_now_ns() - start;
	return ret;
}

/*
 * A pass. @locked: the caller holds the engine lock throughout; else it is
 * taken a chunk at a time, with sleeps between (GC_DUTY), and @stop is
 * looked at between chunks. Returns the buckets emptied or an error.
 */
static int gc_pass(struct gc_pass *p, bool all, bool locked, atomic_bool *stop)
{
	struct bch_fs *c = p->c;
	struct bpos_h pos = POS_H(0, 0);
	bool done = false;
	int ret = 0;

	if (!locked)
		bch_fs_lock(c);
	if (!bch_fs_rw(c) || !bch_fs_rw_alloc(c)) {
		ret = -EROFS;
		goto unlock;
	}
	bch_mover_init(&p->m, c);
	p->m.gc = true;
	p->member_changes = c->member_changes;
	gc_select(p, all);
	if (!p->nr_sel)
		goto unlock;
	c->copygc.passes++;
	while (!done && !ret) {
		uint64_t t0 = bch_now_ns(), e0 = p->extents;

		ret = gc_chunk(p, &pos, locked, &done);
		if (!ret && !sel_live(p))
			done = true;
		if (done || ret || locked)
			continue;
		bch_fs_unlock(c);
		{
			uint64_t ns = (bch_now_ns() - t0) * GC_DUTY +
				      (p->extents - e0) * p->throttle_us * 1000;
			struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };

			if (ns)
				nanosleep(&ts, NULL);
		}
		bch_fs_lock(c);
		if (stop && atomic_load(stop))
			done = true;
		else if (!bch_fs_rw(c) || c->member_changes != p->member_changes)
			ret = -EROFS;
	}
	bch_mover_close(&p->m);
	/* the emptied buckets free once the moves are durable: now */
	if (bch_fs_rw(c)) {
		struct printbuf err = PRINTBUF;
		int r = bch_journal_flush(c, &err);

		if (r && !ret) {
			ret = r;
			gc_error(p, "writing the journal: %s", printbuf_str(&err));
		}
		printbuf_exit(&err);
	}
	p->buckets = sel_emptied(p);
	c->copygc.buckets += p->buckets;
unlock:
	bch_mover_exit(&p->m);
	if (!locked)
		bch_fs_unlock(c);
	return ret < 0 ? ret : (int)min_t(uint64_t, p->buckets, INT32_MAX);
}

static void gc_pass_exit(struct gc_pass *p)
{
	free(p->sel);
	printbuf_exit(&p->errs.first);
}

int bch_copygc_run(struct bch_fs *c, bool all, struct printbuf *err)
{
	struct gc_pass p = { .c = c };
	int ret = gc_pass(&p, all, true, NULL);

	if (err && p.errs.first.pos)
		pr_buf(err, "copygc: %s\n", printbuf_str(&p.errs.first));
	gc_pass_exit(&p);
	return ret;
}

bool bch_copygc_make_room(struct bch_fs *c, struct printbuf *err)
{
	const struct bch_allocator *a = bch_fs_rw_alloc(c);
	struct printbuf ignore = PRINTBUF;
	int ret;

	if (!a || !bch_fs_rw(c))
		return false;
	if (a->nr_pending) {
		/* buckets that emptied wait for their journal entry: write it */
		size_t before = a->nr_pending;

		ret = bch_journal_flush(c, &ignore);
		printbuf_exit(&ignore);
		if (ret)
			return false;
		if (a->nr_pending < before)
			return true;
	}
	ret = bch_copygc_run(c, true, err);
	return ret > 0;
}

/* ---- the mount's thread ------------------------------------------------------- */

struct bch_copygc_thread {
	struct bch_worker	w;
};

static void gc_log_pass(struct bch_copygc_thread *t, struct gc_pass *p, int ret,
			uint64_t ns)
{
	struct printbuf msg = PRINTBUF;

	if (!t->w.log || (!p->extents && !p->errs.nr && ret >= 0))
		return;
	pr_buf(&msg, "copygc: %zu buckets chosen (%" PRIu64 "%% live), moved ", p->nr_sel,
	       p->cap ? p->live * 100 / p->cap : 0);
	pr_human_sectors(&msg, (int64_t)p->sectors);
	pr_buf(&msg, " in %" PRIu64 " extents, %" PRIu64 " buckets emptied, %" PRIu64
	       " ms (engine lock %" PRIu64 " ms)", p->extents, p->buckets, ns / 1000000,
	       p->held_ns / 1000000);
	if (p->raced)
		pr_buf(&msg, ", %" PRIu64 " changed meanwhile", p->raced);
	if (p->nospc)
		pr_str(&msg, ", out of room for the copies");
	if (p->errs.nr)
		pr_buf(&msg, "; %" PRIu64 " not moved: %s", p->errs.nr, printbuf_str(&p->errs.first));
	if (ret < 0)
		pr_buf(&msg, "; stopped: %s", bch_err_str(ret));
	t->w.log(t->w.log_arg, printbuf_str(&msg));
	printbuf_exit(&msg);
}

static void *gc_thread_fn(void *arg)
{
	struct bch_copygc_thread *t = arg;
	struct bch_fs *c = t->w.c;
	unsigned idle_ms = 100;

	while (!bch_worker_stopping(&t->w)) {
		struct gc_pass p = { .c = c };
		uint64_t t0;
		bool wanted;
		int ret;

		bch_worker_wait(&t->w, idle_ms);
		if (bch_worker_stopping(&t->w))
			break;
		bch_fs_lock(c);
		wanted = bch_fs_rw(c) && gc_wanted(c);
		bch_fs_unlock(c);
		if (!wanted) {
			idle_ms = 100;
			continue;
		}
		t0 = bch_now_ns();
		p.throttle_us = gc_throttle_us();
		ret = gc_pass(&p, false, false, &t->w.stop);
		gc_log_pass(t, &p, ret, bch_now_ns() - t0);
		/* nothing gained: the fragmented space is not worth moving yet; wait longer */
		if (ret > 0)
			idle_ms = 10;
		else
			idle_ms = ret < 0 ? 5000 : min_t(unsigned, idle_ms * 2, 2000);
		gc_pass_exit(&p);
	}
	return NULL;
}

struct bch_copygc_thread *bch_copygc_start(struct bch_fs *c, void (*log)(void *arg, const char *msg),
					   void *log_arg)
{
	struct bch_copygc_thread *t = xcalloc(1, sizeof(*t));

	if (!bch_worker_start(&t->w, c, "BCH_COPYGC", &c->copygc.thread, gc_thread_fn, t, log, log_arg)) {
		free(t);
		return NULL;
	}
	return t;
}

void bch_copygc_stop(struct bch_copygc_thread *t)
{
	if (!t)
		return;
	bch_worker_stop(&t->w);
	free(t);
}

void bch_copygc_text(struct bch_fs *c, struct printbuf *out)
{
	const struct bch_copygc_stats *s = &c->copygc;

	pr_buf(out, "copygc_thread %u\ncopygc_passes %" PRIu64 "\ncopygc_buckets %" PRIu64
	       "\ncopygc_sectors %" PRIu64 "\ncopygc_extents %" PRIu64 "\ncopygc_raced %" PRIu64
	       "\ncopygc_errors %" PRIu64 "\n", s->thread ? 1 : 0, s->passes, s->buckets,
	       s->sectors, s->extents, s->raced, s->errors);
}
