// SPDX-License-Identifier: GPL-2.0
/*
 * Rebalance (spec 30 §8.3): see rebalance.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs/rebalance.h"
#include "fs/worker.h"
#include "alloc/alloc.h"
#include "bkey/bkey_types.h"
#include "bkey/extent_edit.h"
#include "bkey/extents.h"
#include "bkey/inode.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "core/bch_fs.h"
#include "format/format.h"
#include "fs/io_read.h"
#include "fs/io_write.h"
#include "fs/fsread.h"
#include "fs/move.h"
#include "util/errcode.h"
#include "util/util.h"

/* A chunk under one hold of the engine lock (the thread's), as copygc's. */
#define RB_CHUNK_KEYS		4096
#define RB_CHUNK_BYTES		(4U << 20)
#define RB_CHUNK_NS		(20ULL * 1000 * 1000)
#define RB_TRANS_KEYS		64
#define RB_DUTY			3

/*
 * Extents found not to compress (hashes of position, version and
 * checksum): not tried again while the mount lasts. The 2018 format has
 * no mark for them on disk.
 */
struct rb_seen {
	uint64_t		*h;
	size_t			size, nr;
};

static uint64_t rb_hash(const struct bkey_ref *k, const struct bch_extent_crc_unpacked *crc)
{
	uint64_t h = k->k.p.inode * 0x9e3779b97f4a7c15ULL ^ k->k.p.offset * 0xc2b2ae3d27d4eb4fULL ^
		     k->k.size * 0x165667b19e3779f9ULL ^ k->k.version_lo ^ crc->csum_lo;

	return h ?: 1;
}

static bool rb_seen_has(const struct rb_seen *s, uint64_t h)
{
	if (!s || !s->size)
		return false;
	for (size_t i = h & (s->size - 1);; i = (i + 1) & (s->size - 1)) {
		if (!s->h[i])
			return false;
		if (s->h[i] == h)
			return true;
	}
}

static void rb_seen_add(struct rb_seen *s, uint64_t h)
{
	if (!s || rb_seen_has(s, h))
		return;
	if (2 * (s->nr + 1) > s->size) {
		struct rb_seen n = { .size = s->size ? 2 * s->size : 1024 };

		/* bounded: past 4M entries it starts over */
		if (n.size > (4U << 20))
			n.size = 1024;
		n.h = xcalloc(n.size, sizeof(*n.h));
		for (size_t i = 0; n.size > s->size && i < s->size; i++)
			if (s->h[i]) {
				size_t j = s->h[i] & (n.size - 1);

				while (n.h[j])
					j = (j + 1) & (n.size - 1);
				n.h[j] = s->h[i];
				n.nr++;
			}
		free(s->h);
		*s = n;
	}
	for (size_t i = h & (s->size - 1);; i = (i + 1) & (s->size - 1))
		if (!s->h[i]) {
			s->h[i] = h;
			s->nr++;
			return;
		}
}

struct rb_pass {
	struct bch_fs		*c;
	struct bch_mover	m;
	struct rb_seen		*incompressible;	/* may be NULL */
	/* the options of the inode last looked at */
	uint64_t		inum;
	unsigned		target;
	unsigned		promote;	/* its promote target: moved copies there stay, cached */
	unsigned		compression;	/* on-disk type wanted in the background, 0 none */
	struct bch_inode_unpacked inode;
	bool			have_inode;
	bool			inum_valid;
	uint64_t		recompressed;
	uint64_t		extents, sectors;
	bool			full;		/* a target had no room: the pass ended */
	struct bch_move_errors	errs;
};

bool bch_rebalance_wanted(struct bch_fs *c)
{
	return BCH_SB_BACKGROUND_TARGET(c->sb) != 0 ||
	       BCH_SB_BACKGROUND_COMPRESSION_TYPE(c->sb) != 0;
}

/* The background target of inode @inum: its option, else the filesystem's. */
static unsigned rb_target(struct rb_pass *p, uint64_t inum)
{
	struct bch_inode_unpacked u;
	struct printbuf ignore = PRINTBUF;

	unsigned compr;

	if (p->inum_valid && p->inum == inum)
		return p->target;
	p->inum = inum;
	p->inum_valid = true;
	p->target = (unsigned)BCH_SB_BACKGROUND_TARGET(p->c->sb);
	p->promote = (unsigned)BCH_SB_PROMOTE_TARGET(p->c->sb);
	compr = (unsigned)BCH_SB_BACKGROUND_COMPRESSION_TYPE(p->c->sb);
	p->have_inode = !bch_inode_get(p->c, inum, &u, &ignore);
	if (p->have_inode) {
		p->inode = u;
		if (u.bi_background_target)
			p->target = u.bi_background_target - 1U;
		if (u.bi_promote_target)
			p->promote = u.bi_promote_target - 1U;
		if (u.bi_background_compression)
			compr = u.bi_background_compression - 1U;
	}
	p->compression = bch_compression_opt_to_type(compr);
	printbuf_exit(&ignore);
	return p->target;
}

/* An error of pass @p, counted in fs usage too (fs/move.h). */
#define rb_error(p, ...) bch_move_error(&(p)->errs, &(p)->c->rebalance.errors, __VA_ARGS__)

/*
 * Move the dirty pointers of @k outside its background target into it:
 * the copies written, the update added to @t. A pointer moved off a
 * device of the file's promote target stays as a cached copy (as the 2018
 * kernel did when the promote target was the foreground target): the
 * next reads are served from it until its bucket is reused. 0, or
 * -BCH_ERR_nospc (the target is full: the pass ends) or another error
 * that ends it.
 */
static int rb_key(struct rb_pass *p, struct btree_trans *t, const struct bkey_ref *k)
{
	struct bch_fs *c = p->c;
	struct bch_move_drop drop = { 0 };
	struct bch_extent_ptr_unpacked new[2 * BCH_REPLICAS_MAX];
	struct extent_ptr_decoded ptr, src, out[BCH_REPLICAS_MAX];
	struct extent_ptr_iter it;
	struct printbuf why = PRINTBUF;
	unsigned target, i = 0, nr_out = 0, nr_new = 0, nr_moved, sectors, out_idx[BCH_REPLICAS_MAX];
	uint64_t into = 0, new_devs = 0;
	int ret = 0;

	target = rb_target(p, k->k.p.inode);
	if (!target)
		return 0;
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &ptr) > 0) {
		unsigned idx = i++;

		if (ptr.ptr.cached || ptr.ptr.dev >= 64 || idx >= 64 || nr_out == BCH_REPLICAS_MAX ||
		    bch_move_ptr_stale(c, &ptr.ptr) || bch_dev_in_target(c, ptr.ptr.dev, target))
			continue;
		out[nr_out] = ptr;
		out_idx[nr_out++] = idx;
	}
	if (!nr_out)
		return 0;
	/* devices of the target that take data and hold no copy of it */
	for (unsigned d = 0; d < 64; d++)
		if (bch_move_dev_takes_data(c, d) && bch_dev_in_target(c, d, target) &&
		    !(bch_extent_key_devs(k) & (1ULL << d)))
			into |= 1ULL << d;
	if (!into)
		return 0;
	ret = bch_move_read_good(&p->m, k, 0, &src, &why);
	if (ret) {
		rb_error(p, "inode %" PRIu64 " at byte %" PRIu64 ": no good copy to move (%s)",
			 k->k.p.inode, (k->k.p.offset - k->k.size) << 9, printbuf_str(&why));
		ret = 0;
		goto out;
	}
	sectors = bch_move_region_sectors(k, &src);
	while (nr_new < nr_out) {
		ret = bch_move_write(&p->m, sectors, ~into | new_devs, &new[nr_new], &why);
		if (ret)
			break;
		new_devs |= 1ULL << new[nr_new].dev;
		/* as many pointers go as copies were written */
		drop.idxs |= 1ULL << out_idx[nr_new];
		nr_new++;
	}
	if (ret == -BCH_ERR_nospc) {
		p->full = true;
		if (!nr_new)
			goto out;
		ret = 0;
	}
	if (ret)
		goto out;
	/* the moved pointers on the promote target come back as cached copies */
	nr_moved = nr_new;
	for (unsigned j = 0; j < nr_moved && p->promote; j++)
		if (bch_dev_in_target(c, out[j].ptr.dev, p->promote) &&
		    extent_crc_same(&out[j].crc, &src.crc)) {
			new[nr_new] = out[j].ptr;
			new[nr_new++].cached = true;
		}
	ret = bch_move_update(&p->m, t, k, &drop, &src.crc, new, nr_new, &why);
	if (ret == -EAGAIN) {
		ret = 0;
		goto out;
	}
	if (ret) {
		rb_error(p, "inode %" PRIu64 " at byte %" PRIu64 ": %s", k->k.p.inode,
			 (k->k.p.offset - k->k.size) << 9, printbuf_str(&why));
		ret = ret == -E2BIG || ret == -EINVAL ? 0 : ret;
		goto out;
	}
	p->extents++;
	p->sectors += (uint64_t)sectors * nr_moved;
	c->rebalance.extents++;
	c->rebalance.sectors += (uint64_t)sectors * nr_moved;
out:
	printbuf_exit(&why);
	return ret;
}

/*
 * Extent @k, not compressed as its background compression says: its data
 * read and decoded, encoded anew (compressed, encrypted with a new
 * version, checksummed) and written with as many copies as it has dirty
 * ones, on their devices when they have room, then the key replaced (if
 * unchanged). Data that does not compress is left as it is (and not
 * tried again while the mount lasts). 0, or an error that ends the pass.
 */
static int rb_recompress(struct rb_pass *p, struct btree_trans *t, const struct bkey_ref *k)
{
	struct bch_fs *c = p->c;
	struct bch_extent_ptr_unpacked new[BCH_REPLICAS_MAX];
	struct extent_ptr_decoded ptr, first = { 0 };
	struct extent_ptr_iter it;
	struct printbuf why = PRINTBUF;
	struct bch_io_opts o;
	struct bch_encoded e;
	struct bkey_h nk = k->k;
	uint64_t v[BKEY_EXTENT_VAL_U64s_MAX], new_devs = 0;
	unsigned devs[BCH_REPLICAS_MAX], nr_dirty = 0, nr_new = 0, bytes;
	uint8_t *buf = NULL, *cbuf = NULL;
	int ret = 0;

	rb_target(p, k->k.p.inode);
	if (!p->compression)
		return 0;
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &ptr) > 0)
		if (!ptr.ptr.cached && !bch_move_ptr_stale(c, &ptr.ptr) && nr_dirty < BCH_REPLICAS_MAX) {
			if (!nr_dirty)
				first = ptr;
			devs[nr_dirty++] = ptr.ptr.dev;
		}
	if (!nr_dirty ||
	    (first.crc.entry_type >= 0 && first.crc.compression_type == p->compression) ||
	    rb_seen_has(p->incompressible, rb_hash(k, &first.crc)))
		return 0;
	bch_io_opts_get(c, p->have_inode ? &p->inode : NULL, &o);
	o.compression_type = p->compression;
	if (!k->k.size || k->k.size > o.extent_max || k->k.size > BCH_READ_ENCODED_MAX_SECTORS)
		return 0;
	buf = xmalloc((size_t)k->k.size << 9);
	cbuf = xmalloc(((size_t)k->k.size << 9) + (size_t)o.block_sectors * 512);
	ret = bch_read_extent(c, k, 0, k->k.size, buf, NULL, &why);
	if (ret) {
		rb_error(p, "inode %" PRIu64 " at byte %" PRIu64 ": cannot read it to compress (%s)",
			 k->k.p.inode, (k->k.p.offset - k->k.size) << 9, printbuf_str(&why));
		ret = 0;
		goto out;
	}
	ret = bch_extent_encode(c, &o, buf, k->k.size, k->k.size, cbuf,
				o.encrypted ? bch_fs_rw_key_version(c) : 0, &e, &why);
	if (ret)
		goto out;
	if (e.in != k->k.size || !e.crc.compression_type) {
		rb_seen_add(p->incompressible, rb_hash(k, &first.crc));
		goto out;
	}
	memcpy(bch_mover_buf(&p->m, e.out << 9), e.payload, e.out << 9);
	for (unsigned j = 0; j < nr_dirty; j++) {
		ret = bch_move_write(&p->m, (unsigned)e.out, ~(1ULL << devs[j]) | new_devs,
				     &new[nr_new], &why);
		if (ret == -BCH_ERR_nospc)
			ret = bch_move_write(&p->m, (unsigned)e.out, new_devs, &new[nr_new], &why);
		if (ret)
			break;
		new_devs |= 1ULL << new[nr_new].dev;
		nr_new++;
	}
	/* never fewer copies than it had: the copies written are left unreferenced */
	if (ret == -BCH_ERR_nospc) {
		p->full = true;
		goto out;
	}
	if (ret)
		goto out;
	if (e.version_lo) {
		/* encrypted anew: the nonce is made of the new version */
		nk.version_lo = e.version_lo;
		nk.version_hi = 0;
	}
	bytes = bch_extent_value(&e, new, nr_new, v);
	ret = bch_move_replace(&p->m, t, k, &nk, v, bytes, &why);
	if (ret == -EAGAIN) {
		ret = 0;
		goto out;
	}
	if (ret) {
		rb_error(p, "inode %" PRIu64 " at byte %" PRIu64 ": %s", k->k.p.inode,
			 (k->k.p.offset - k->k.size) << 9, printbuf_str(&why));
		ret = ret == -E2BIG || ret == -EINVAL ? 0 : ret;
		goto out;
	}
	p->recompressed++;
	p->extents++;
	p->sectors += e.out * nr_new;
	c->rebalance.extents++;
	c->rebalance.recompressed++;
	c->rebalance.sectors += e.out * nr_new;
out:
	free(buf);
	free(cbuf);
	printbuf_exit(&why);
	return ret;
}

/* One chunk of the walk from *@pos, engine lock held (see copygc.c). */
static int rb_chunk(struct rb_pass *p, struct bpos_h *pos, bool locked, bool *done)
{
	struct bch_fs *c = p->c;
	struct printbuf ignore = PRINTBUF, err = PRINTBUF;
	struct btree_iter iter;
	struct btree_trans t;
	uint64_t start = bch_now_ns(), sectors0 = p->sectors;
	unsigned n = 0;
	int ret = 0;

	bch_trans_init(&t, c);
	bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, *pos, &ignore);
	for (;;) {
		struct bkey_ref *k;

		if (n >= RB_CHUNK_KEYS ||
		    (!locked && ((p->sectors - sectors0) << 9 >= RB_CHUNK_BYTES ||
				 bch_now_ns() - start >= RB_CHUNK_NS)))
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
			size_t before = t.nr;

			ret = rb_key(p, &t, &copy);
			/* moved to its target, or else compressed as it should be */
			if (!ret && !p->full && t.nr == before)
				ret = rb_recompress(p, &t, &copy);
			if (ret || p->full)
				break;
			if (t.nr >= RB_TRANS_KEYS) {
				ret = bch_trans_commit(&t, &err);
				if (ret)
					break;
				bch_mover_release(&p->m);
			}
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	if (ret == -BCH_ERR_nospc || p->full) {
		p->full = true;
		*done = true;
		ret = 0;
	}
	if (!ret && t.nr)
		ret = bch_trans_commit(&t, &err);
	bch_mover_release(&p->m);
	if (ret)
		rb_error(p, "%s%s%s", bch_err_str(ret), err.pos ? ": " : "", printbuf_str(&err));
	bch_trans_exit(&t);
	printbuf_exit(&ignore);
	printbuf_exit(&err);
	return ret;
}

/* A pass (@locked: the caller holds the engine lock throughout). */
static int rb_pass_run(struct rb_pass *p, bool locked, atomic_bool *stop)
{
	struct bch_fs *c = p->c;
	struct bpos_h pos = POS_H(0, 0);
	unsigned long member_changes;
	bool done = false;
	int ret = 0;

	if (!locked)
		bch_fs_lock(c);
	bch_mover_init(&p->m, c);
	if (!bch_fs_rw(c) || !bch_fs_rw_alloc(c)) {
		ret = -EROFS;
		goto unlock;
	}
	member_changes = c->member_changes;
	c->rebalance.passes++;
	while (!done && !ret) {
		uint64_t t0 = bch_now_ns();

		ret = rb_chunk(p, &pos, locked, &done);
		if (done || ret || locked)
			continue;
		bch_fs_unlock(c);
		{
			uint64_t ns = (bch_now_ns() - t0) * RB_DUTY;
			struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };

			if (ns)
				nanosleep(&ts, NULL);
		}
		bch_fs_lock(c);
		if (stop && atomic_load(stop))
			done = true;
		else if (!bch_fs_rw(c) || c->member_changes != member_changes)
			ret = -EROFS;
	}
	bch_mover_close(&p->m);
unlock:
	bch_mover_exit(&p->m);
	if (!locked)
		bch_fs_unlock(c);
	return ret < 0 ? ret : (int)min_t(uint64_t, p->extents, INT32_MAX);
}

int bch_rebalance_run(struct bch_fs *c, struct printbuf *err)
{
	struct rb_pass p = { .c = c };
	int ret = rb_pass_run(&p, true, NULL);

	if (err && p.errs.first.pos)
		pr_buf(err, "rebalance: %s\n", printbuf_str(&p.errs.first));
	printbuf_exit(&p.errs.first);
	return ret;
}

/* ---- the mount's thread ------------------------------------------------------- */

struct bch_rebalance_thread {
	struct bch_worker	w;
	struct rb_seen		incompressible;
};

static void *rb_thread_fn(void *arg)
{
	struct bch_rebalance_thread *t = arg;
	struct bch_fs *c = t->w.c;
	uint64_t seen = UINT64_MAX;	/* commits when a pass last found nothing */

	while (!bch_worker_stopping(&t->w)) {
		struct rb_pass p = { .c = c, .incompressible = &t->incompressible };
		struct bch_rw_stats s = { 0 };
		uint64_t t0;
		bool wanted;
		int ret;

		bch_worker_wait(&t->w, 1000);
		if (bch_worker_stopping(&t->w))
			break;
		bch_fs_lock(c);
		wanted = bch_fs_rw(c) && bch_rebalance_wanted(c);
		bch_fs_rw_stats(c, &s);
		bch_fs_unlock(c);
		if (!wanted || s.commits == seen)
			continue;
		t0 = bch_now_ns();
		ret = rb_pass_run(&p, false, &t->w.stop);
		if (t->w.log && (p.extents || p.errs.nr || ret < 0)) {
			struct printbuf msg = PRINTBUF;

			pr_buf(&msg, "rebalance: rewrote %" PRIu64 " extents (", p.extents);
			pr_human_sectors(&msg, (int64_t)p.sectors);
			pr_buf(&msg, " written): %" PRIu64 " moved to their background target, %"
			       PRIu64 " compressed, %" PRIu64 " ms%s", p.extents - p.recompressed,
			       p.recompressed, (bch_now_ns() - t0) / 1000000,
			       p.full ? ", out of room" : "");
			if (p.errs.nr)
				pr_buf(&msg, "; %" PRIu64 " not moved: %s", p.errs.nr,
				       printbuf_str(&p.errs.first));
			if (ret < 0)
				pr_buf(&msg, "; stopped: %s", bch_err_str(ret));
			t->w.log(t->w.log_arg, printbuf_str(&msg));
			printbuf_exit(&msg);
		}
		/* nothing to move: wait for new commits (ours included) */
		if (!ret && !p.extents) {
			bch_fs_lock(c);
			bch_fs_rw_stats(c, &s);
			bch_fs_unlock(c);
			seen = s.commits;
		}
		printbuf_exit(&p.errs.first);
		if (ret < 0 || p.full)
			bch_worker_wait(&t->w, 5000);
	}
	return NULL;
}

struct bch_rebalance_thread *bch_rebalance_start(struct bch_fs *c,
						 void (*log)(void *arg, const char *msg),
						 void *log_arg)
{
	struct bch_rebalance_thread *t = xcalloc(1, sizeof(*t));

	if (!bch_worker_start(&t->w, c, "BCH_REBALANCE", &c->rebalance.thread, rb_thread_fn, t, log, log_arg)) {
		free(t);
		return NULL;
	}
	return t;
}

void bch_rebalance_stop(struct bch_rebalance_thread *t)
{
	if (!t)
		return;
	bch_worker_stop(&t->w);
	free(t->incompressible.h);
	free(t);
}

void bch_rebalance_text(struct bch_fs *c, struct printbuf *out)
{
	const struct bch_rebalance_stats *s = &c->rebalance;

	pr_buf(out, "rebalance_thread %u\nrebalance_passes %" PRIu64 "\nrebalance_extents %" PRIu64
	       "\nrebalance_recompressed %" PRIu64 "\nrebalance_sectors %" PRIu64
	       "\nrebalance_errors %" PRIu64 "\n", s->thread ? 1 : 0, s->passes, s->extents,
	       s->recompressed, s->sectors, s->errors);
}
