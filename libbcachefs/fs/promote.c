// SPDX-License-Identifier: GPL-2.0
/*
 * Promote: cached copies of what is read, on the promote target. See
 * promote.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs/promote.h"
#include "alloc/alloc.h"
#include "bkey/extents.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "format/format.h"
#include "fs/io_write.h"
#include "fs/move.h"
#include "fs/worker.h"
#include "util/errcode.h"
#include "util/util.h"

/* Extents waiting for the thread; more than this between two of its turns are not promoted. */
#define PROMOTE_QUEUE		256
/* Errors logged (each is counted). */
#define PROMOTE_LOG_MAX		16

struct promote_req {
	uint64_t	inum;
	uint64_t	end;		/* the key's position */
	uint32_t	size;
	uint64_t	version_lo;
	unsigned	target;
};

/* The sweep of stale cached pointers: a chunk under one hold of the engine lock. */
#define SWEEP_CHUNK_KEYS	4096
#define SWEEP_CHUNK_NS		(20ULL * 1000 * 1000)
#define SWEEP_TRANS_KEYS	64
#define SWEEP_DUTY		3

struct bch_promote_thread {
	struct bch_worker	w;
	/* the queue, under w.lock */
	struct promote_req	q[PROMOTE_QUEUE];
	unsigned		head, nr;
	unsigned		logged;
	uint64_t		swept_at;	/* a->cached_invalidated when the last sweep began */
};

bool bch_promote_wanted(struct bch_fs *c, unsigned target, const struct bkey_ref *k,
			unsigned dev)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;

	if (!target || k->k.type != BCH_EXTENT ||
	    (dev != UINT32_MAX && bch_dev_in_target(c, dev, target)))
		return false;
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0)
		if (bch_dev_in_target(c, p.ptr.dev, target) && bch_dev_present(c, p.ptr.dev) &&
		    !bch_move_ptr_stale(c, &p.ptr))
			return false;
	return true;
}

void bch_promote_read(struct bch_fs *c, unsigned target, const struct bkey_ref *k,
		      unsigned dev, uint64_t sectors)
{
	struct bch_promote_thread *t = c->promote.t;
	struct promote_req r;

	if (!t || !bch_promote_wanted(c, target, k, dev))
		return;
	r = (struct promote_req) {
		.inum = k->k.p.inode, .end = k->k.p.offset, .size = k->k.size,
		.version_lo = k->k.version_lo, .target = target,
	};
	pthread_mutex_lock(&t->w.lock);
	for (unsigned i = 0; i < t->nr; i++) {
		const struct promote_req *o = &t->q[(t->head + i) % PROMOTE_QUEUE];

		if (o->inum == r.inum && o->end == r.end && o->size == r.size)
			goto out;	/* asked for already */
	}
	if (t->nr < PROMOTE_QUEUE) {
		t->q[(t->head + t->nr++) % PROMOTE_QUEUE] = r;
		c->promote.queued++;
		pthread_cond_signal(&t->w.cond);
	}
out:
	pthread_mutex_unlock(&t->w.lock);
}

int bch_promote_extent(struct bch_mover *m, unsigned target, const struct bkey_ref *k,
		       struct printbuf *err)
{
	struct bch_fs *c = m->c;
	struct bch_move_drop drop = { 0 };
	struct bch_extent_ptr_unpacked new;
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p, src;
	uint64_t into = 0, fresh = 0;
	unsigned sectors;
	int ret;

	if (!bch_promote_wanted(c, target, k, UINT32_MAX))
		return 0;
	/* devices holding a current copy take no other (stale cached ones go in the update) */
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0)
		if (p.ptr.dev < 64 && !bch_move_ptr_stale(c, &p.ptr))
			fresh |= 1ULL << p.ptr.dev;
	for (unsigned d = 0; d < 64; d++)
		if (!(fresh & (1ULL << d)) && bch_dev_in_target(c, d, target) &&
		    bch_move_dev_takes_cached(c, d))
			into |= 1ULL << d;
	if (!into)
		return -BCH_ERR_nospc;
	ret = bch_move_read_good(m, k, 0, &src, err);
	if (ret)
		return ret;
	sectors = bch_move_region_sectors(k, &src);
	ret = bch_move_write(m, sectors, ~into, &new, err);
	if (ret)
		return ret;
	ret = bch_move_commit(m, k, &drop, &src.crc, &new, 1, err);
	if (!ret) {
		c->promote.extents++;
		c->promote.sectors += sectors;
	}
	return ret;
}

/* ---- the mount's thread ------------------------------------------------------- */

/* Extent @r again, if it is still the key the read saw: copied to *@k / @v. */
static bool promote_find(struct bch_fs *c, const struct promote_req *r, struct bkey_ref *k,
			 uint64_t *v)
{
	struct printbuf ignore = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *cur;
	bool found;

	if (r->size > r->end)
		return false;
	bch_btree_iter_init_range(&iter, c, BTREE_ID_EXTENTS, POS_H(r->inum, r->end - r->size),
				  POS_H(r->inum, r->end), &ignore);
	found = !bch_btree_iter_peek(&iter, &cur) && cur && cur->k.p.inode == r->inum &&
		cur->k.p.offset == r->end && cur->k.size == r->size &&
		cur->k.version_lo == r->version_lo && cur->k.type == BCH_EXTENT &&
		cur->v_bytes <= BKEY_EXTENT_VAL_U64s_MAX * 8;
	if (found) {
		*k = *cur;
		memcpy(v, cur->v, cur->v_bytes);
		k->v = v;
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&ignore);
	return found;
}

static void promote_one(struct bch_promote_thread *t, struct bch_mover *m,
			const struct promote_req *r)
{
	struct bch_fs *c = t->w.c;
	struct printbuf err = PRINTBUF;
	uint64_t v[BKEY_EXTENT_VAL_U64s_MAX];
	struct bkey_ref k;
	int ret;

	if (!bch_fs_rw(c) || bch_fs_writes_stopped(c) || !bch_fs_rw_alloc(c))
		return;
	if (!promote_find(c, r, &k, v)) {
		c->promote.raced++;
		return;
	}
	ret = bch_promote_extent(m, r->target, &k, &err);
	if (ret == -EAGAIN) {
		c->promote.raced++;
	} else if (ret == -BCH_ERR_nospc) {
		c->promote.full++;
	} else if (ret) {
		c->promote.errors++;
		if (t->w.log && t->logged < PROMOTE_LOG_MAX) {
			struct printbuf msg = PRINTBUF;

			t->logged++;
			pr_buf(&msg, "promote: inode %" PRIu64 " at byte %" PRIu64 ": %s%s%s",
			       r->inum, (r->end - r->size) << 9, bch_err_str(ret),
			       err.pos ? ": " : "", printbuf_str(&err));
			t->w.log(t->w.log_arg, printbuf_str(&msg));
			printbuf_exit(&msg);
		}
	}
	printbuf_exit(&err);
}

/* Does @k have a cached pointer made stale by the reuse of its bucket? */
static bool stale_cached(struct bch_fs *c, const struct bkey_ref *k)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;

	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0)
		if ((p.ptr.cached || k->k.type == BCH_EXTENT_CACHED) && bch_move_ptr_stale(c, &p.ptr))
			return true;
	return false;
}

/*
 * One chunk of the sweep from *@pos, engine lock held: each extent with
 * stale cached pointers is rewritten without them (bch_move_update(),
 * refused when it changed meanwhile). *@done at the end of the extents.
 */
static int sweep_chunk(struct bch_promote_thread *t, struct bch_mover *m, struct bpos_h *pos,
		       bool *done)
{
	struct bch_fs *c = t->w.c;
	struct printbuf ignore = PRINTBUF, err = PRINTBUF;
	struct bch_move_drop nodrop = { 0 };
	struct btree_iter iter;
	struct btree_trans tr;
	uint64_t start = bch_now_ns();
	unsigned n = 0;
	int ret = 0;

	bch_trans_init(&tr, c);
	bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, *pos, &ignore);
	iter.skip_bad = true;
	while (n++ < SWEEP_CHUNK_KEYS && bch_now_ns() - start < SWEEP_CHUNK_NS) {
		struct bkey_ref *k;

		ret = bch_btree_iter_peek(&iter, &k);
		if (ret || !k) {
			*done = true;
			break;
		}
		*pos = k->k.p;
		if ((k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED) &&
		    k->v_bytes <= BKEY_EXTENT_VAL_U64s_MAX * 8 && stale_cached(c, k)) {
			uint64_t v[BKEY_EXTENT_VAL_U64s_MAX];
			struct bkey_ref copy = *k;

			memcpy(v, k->v, k->v_bytes);
			copy.v = v;
			if (!bch_move_update(m, &tr, &copy, &nodrop, NULL, NULL, 0, &err))
				c->promote.swept++;
			printbuf_reset(&err);
			if (tr.nr >= SWEEP_TRANS_KEYS) {
				ret = bch_trans_commit(&tr, &err);
				bch_trans_exit(&tr);
				bch_trans_init(&tr, c);
				if (ret)
					break;
			}
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	if (!ret && tr.nr)
		ret = bch_trans_commit(&tr, &err);
	bch_trans_exit(&tr);
	printbuf_exit(&ignore);
	printbuf_exit(&err);
	return ret;
}

/*
 * A bucket's gen is 8 bits: a stale cached pointer into a bucket reused
 * 128 times more would look current again. So once as many buckets with
 * cached data were reused as half the buckets of the filesystem (each
 * bucket taken at most about once meanwhile: the cursor goes round), a
 * walk over the extents drops the stale cached pointers, a chunk at a time
 * with pauses three times as long (as copygc and rebalance).
 */
static void sweep(struct bch_promote_thread *t, struct bch_mover *m)
{
	struct bch_fs *c = t->w.c;
	struct bpos_h pos = POS_H(0, 0);
	const struct bch_allocator *a;
	uint64_t buckets = 0;
	bool done = false;

	bch_fs_lock(c);
	a = bch_fs_rw(c) && !bch_fs_writes_stopped(c) ? bch_fs_rw_alloc(c) : NULL;
	for (unsigned d = 0; a && d < BCH_ALLOC_MAX_DEVS; d++)
		if (a->devs[d])
			buckets += a->devs[d]->nbuckets;
	if (!a || a->cached_invalidated - t->swept_at < max_t(uint64_t, buckets / 2, 1)) {
		bch_fs_unlock(c);
		return;
	}
	t->swept_at = a->cached_invalidated;
	c->promote.sweeps++;
	while (!done) {
		uint64_t t0 = bch_now_ns(), ns;
		struct timespec ts;

		if (sweep_chunk(t, m, &pos, &done))
			break;
		bch_fs_unlock(c);
		ns = (bch_now_ns() - t0) * SWEEP_DUTY;
		ts = (struct timespec) { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };
		nanosleep(&ts, NULL);
		bch_fs_lock(c);
		if (atomic_load(&t->w.stop) || !bch_fs_rw(c) || bch_fs_writes_stopped(c))
			break;
	}
	bch_fs_unlock(c);
}

static void *promote_thread_fn(void *arg)
{
	struct bch_promote_thread *t = arg;
	struct bch_fs *c = t->w.c;
	struct bch_mover m;
	unsigned long member_changes;

	bch_fs_lock(c);
	bch_mover_init(&m, c);
	m.cached = true;
	member_changes = c->member_changes;
	bch_fs_unlock(c);
	for (;;) {
		struct promote_req r;
		bool more;

		pthread_mutex_lock(&t->w.lock);
		while (!t->nr && !atomic_load(&t->w.stop)) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec++;
			if (pthread_cond_timedwait(&t->w.cond, &t->w.lock, &ts) == ETIMEDOUT) {
				/* idle: stale cached pointers go when they must */
				pthread_mutex_unlock(&t->w.lock);
				sweep(t, &m);
				pthread_mutex_lock(&t->w.lock);
			}
		}
		if (atomic_load(&t->w.stop)) {
			pthread_mutex_unlock(&t->w.lock);
			break;
		}
		r = t->q[t->head];
		t->head = (t->head + 1) % PROMOTE_QUEUE;
		t->nr--;
		pthread_mutex_unlock(&t->w.lock);

		bch_fs_lock(c);
		if (c->member_changes != member_changes) {
			/* its open buckets may be on a member that changed */
			bch_mover_close(&m);
			member_changes = c->member_changes;
		}
		promote_one(t, &m, &r);
		pthread_mutex_lock(&t->w.lock);
		more = t->nr != 0;
		pthread_mutex_unlock(&t->w.lock);
		/* nothing more asked for: the partly filled bucket goes back */
		if (!more)
			bch_mover_close(&m);
		bch_fs_unlock(c);
	}
	bch_fs_lock(c);
	bch_mover_exit(&m);
	bch_fs_unlock(c);
	return NULL;
}

struct bch_promote_thread *bch_promote_start(struct bch_fs *c,
					     void (*log)(void *arg, const char *msg),
					     void *log_arg)
{
	struct bch_promote_thread *t = xcalloc(1, sizeof(*t));

	if (!bch_worker_start(&t->w, c, "BCH_PROMOTE", &c->promote.thread, promote_thread_fn, t,
			      log, log_arg)) {
		free(t);
		return NULL;
	}
	bch_fs_lock(c);
	c->promote.t = t;
	c->promote.read_hook = bch_promote_read;
	bch_fs_unlock(c);
	return t;
}

void bch_promote_stop(struct bch_promote_thread *t)
{
	struct bch_fs *c;

	if (!t)
		return;
	c = t->w.c;
	/* no read queues anything from now on */
	bch_fs_lock(c);
	c->promote.read_hook = NULL;
	c->promote.t = NULL;
	bch_fs_unlock(c);
	bch_worker_stop(&t->w);
	free(t);
}

void bch_promote_text(struct bch_fs *c, struct printbuf *out)
{
	const struct bch_promote_stats *s = &c->promote;

	pr_buf(out, "promote_thread %u\npromote_queued %" PRIu64 "\npromote_extents %" PRIu64
	       "\npromote_sectors %" PRIu64 "\npromote_raced %" PRIu64 "\npromote_full %" PRIu64
	       "\npromote_errors %" PRIu64 "\npromote_sweeps %" PRIu64 "\npromote_swept %" PRIu64
	       "\n", s->thread ? 1 : 0, s->queued, s->extents, s->sectors, s->raced, s->full,
	       s->errors, s->sweeps, s->swept);
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++)
		if (c->devs[i])
			pr_buf(out, "read_sectors_dev %u %" PRIu64 "\n", i,
			       __atomic_load_n(&s->read_sectors[i], __ATOMIC_RELAXED));
}
