// SPDX-License-Identifier: GPL-2.0
/*
 * Data jobs (doc/ioctl.md §9 DATA, doc/ioctl.md §7, doc/engine.md §17): see data_job.h.
 *
 * A job is two threads: the worker, which takes the engine lock for a
 * batch of extents at a time (so the mount keeps serving files), and the
 * responder, which answers the job descriptor (a SOCK_SEQPACKET socket:
 * progress records, the result) and stops the worker when the descriptor
 * is closed.
 *
 * Every extent the worker changes is one transaction: the new copies are
 * written first (the stored bytes as they are, with the same crc entry and
 * the same key version: doc/engine.md §17), then the key with the changed pointer
 * set is committed. The old copy's bucket is freed only once the journal
 * entry of that commit is durable (the engine's pending frees, alloc.h),
 * so a job killed at any point loses nothing; running it again picks up
 * what is left (every step looks at the keys as they are).
 *
 * Phases (the data_type of the progress records): journal (a checkpoint:
 * nothing older in the journal is needed), btree (nodes to move or to
 * rewrite with more copies are rewritten whole at a checkpoint), data (the
 * extents, in key order), then replicas GC.
 *
 * The job itself, its progress and reports, the mover, the resumable walk
 * over extents and the journal, btree and GC phases are in data_walk.c;
 * here: what each job does to an extent or node, scrub's report, the
 * worker and the job descriptor.
 */
#include <errno.h>
#include <poll.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "admin/call.h"
#include "admin/admin_dev.h"
#include "fs/durability.h"
#include "alloc/alloc.h"
#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "codec/checksum.h"
#include "admin/ctl_proto.h"
#include "admin/data_job.h"
#include "admin/data_walk.h"
#include "dev/dev.h"
#include "bkey/dirent.h"
#include "util/errcode.h"
#include "bkey/extent_edit.h"
#include "bkey/extents.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "fs/io_read.h"
#include "fs/move.h"
#include "dev/super.h"

/* ---- rereplicate ---------------------------------------------------------------- */

static bool want_all(struct mover *mv, const struct bkey_ref *k)
{
	return k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED;
}

static int rereplicate_extent(struct mover *mv, const struct bkey_ref *k, uint64_t *done)
{
	struct bch_fs *c = mv->c;
	struct bch_job *j = mv->j;
	struct printbuf why = PRINTBUF;
	struct extent_ptr_decoded src;
	struct bch_extent_ptr_unpacked new[BCH_REPLICAS_MAX];
	struct bch_move_drop drop = { 0 };
	unsigned dur, want, nr_new = 0, sectors, nr_dirty, written = 0;
	uint64_t exclude;
	int ret;

	*done += k->k.size;
	if (k->k.type != BCH_EXTENT)
		return 0;
	dur = bch_extent_durability(c, k);
	want = bch_inode_replicas_want(c, k->k.p.inode, &mv->want);
	if (dur >= want)
		return 0;
	if (!dur) {
		key_error(j, k, "no copy on a working device: cannot be replicated");
		return 0;
	}
	ret = bch_move_read_good(&mv->m, k, 0, &src, &why);
	if (ret) {
		key_error(j, k, "no good copy to replicate (%s)", printbuf_str(&why));
		printbuf_exit(&why);
		return 0;
	}
	sectors = bch_move_region_sectors(k, &src);
	exclude = bch_extent_key_devs(k);
	/* a key has at most 3 dirty copies: those that give nothing go first */
	bch_extent_dirty_devs(k, &nr_dirty);
	{
		struct extent_ptr_iter it;
		struct extent_ptr_decoded p;

		extent_ptr_iter_init(&it, k);
		while (extent_ptr_iter_next(&it, &p) > 0)
			if (!p.ptr.cached && !bch_dev_ptr_durability(c, p.ptr.dev) && p.ptr.dev < 64 &&
			    nr_dirty + (want - dur) > BCH_REPLICAS_ENTRY_DEVS_MAX) {
				drop.devs |= 1ULL << p.ptr.dev;
				nr_dirty--;
			}
	}
	while (dur < want && nr_new < BCH_REPLICAS_MAX &&
	       nr_dirty + nr_new < BCH_REPLICAS_ENTRY_DEVS_MAX) {
		ret = bch_move_write(&mv->m, sectors, exclude, &new[nr_new], &why);
		if (ret == -BCH_ERR_nospc)
			break;
		if (ret)
			goto err;
		exclude |= 1ULL << new[nr_new].dev;
		dur += bch_dev_ptr_durability(c, new[nr_new].dev);
		nr_new++;
		written += sectors;
	}
	if (!nr_new) {
		key_error(j, k, "no device can take another copy");
		printbuf_exit(&why);
		return 0;
	}
	ret = commit_extent(mv, k, &drop, &src.crc, new, nr_new, &why);
	if (ret)
		goto err;
	pthread_mutex_lock(&j->lock);
	j->extents_moved++;
	j->sectors_moved += written;
	pthread_mutex_unlock(&j->lock);
	printbuf_exit(&why);
	return (int)written;
err:
	job_report(j, "rereplicate: %s", printbuf_str(&why));
	printbuf_exit(&why);
	return ret;
}

/* ---- migrate ------------------------------------------------------------------------- */

/* Durability of @k's dirty, fresh copies that are not on @dev. */
static unsigned copies_left(struct mover *mv, const struct bkey_ref *k, unsigned dev)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	unsigned n = 0;

	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0)
		if (p.ptr.dev != dev && !p.ptr.cached && !bch_move_ptr_stale(mv->c, &p.ptr))
			n += bch_dev_ptr_durability(mv->c, p.ptr.dev);
	return n;
}

static bool want_on_dev(struct mover *mv, const struct bkey_ref *k)
{
	unsigned dev = mv->j->arg.migrate.dev;

	return (k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED) &&
	       dev < 64 && (bch_extent_key_devs(k) & (1ULL << dev));
}

static int migrate_extent(struct mover *mv, const struct bkey_ref *k, uint64_t *done)
{
	struct bch_job *j = mv->j;
	unsigned dev = j->arg.migrate.dev;
	struct bch_move_drop drop = { .devs = 1ULL << dev };
	struct printbuf why = PRINTBUF;
	struct extent_ptr_decoded src;
	struct bch_extent_ptr_unpacked new;
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	bool dirty_on_dev = false;
	unsigned sectors;
	int ret;

	*done += k->k.size;
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0)
		if (p.ptr.dev == dev && !p.ptr.cached && k->k.type == BCH_EXTENT)
			dirty_on_dev = true;
	if (!dirty_on_dev || copies_left(mv, k, dev) >= bch_inode_replicas_want(mv->c, k->k.p.inode,
										 &mv->want)) {
		/* only cached copies there, or enough copies elsewhere: they just go */
		ret = commit_extent(mv, k, &drop, NULL, NULL, 0, &why);
		goto out;
	}
	ret = bch_move_read_good(&mv->m, k, 1ULL << dev, &src, &why);
	if (ret) {
		key_error(j, k, "no good copy to move (%s)", printbuf_str(&why));
		printbuf_exit(&why);
		return 0;
	}
	sectors = bch_move_region_sectors(k, &src);
	ret = bch_move_write(&mv->m, sectors, bch_extent_key_devs(k), &new, &why);
	if (ret == -BCH_ERR_nospc) {
		pr_buf(&why, "no other device can take the data of ");
		pr_where(&why, k);
		pr_str(&why, " (out of space, or no device left for another copy)");
		ret = -ENOSPC;
	}
	if (!ret)
		ret = commit_extent(mv, k, &drop, &src.crc, &new, 1, &why);
	if (!ret) {
		pthread_mutex_lock(&j->lock);
		j->extents_moved++;
		j->sectors_moved += sectors;
		pthread_mutex_unlock(&j->lock);
		ret = (int)sectors;
	}
out:
	if (ret < 0)
		job_report(j, "migrate: %s", printbuf_str(&why));
	printbuf_exit(&why);
	return ret;
}

/* ---- scrub ------------------------------------------------------------------------- */

struct scrub_bad {
	uint64_t	inum;
	uint64_t	offset;		/* bytes */
	char		what[160];
};

struct scrub_state {
	struct scrub_bad	*bad;
	size_t			nr_bad;
	uint64_t		unverifiable;
};

static int scrub_extent(struct mover *mv, const struct bkey_ref *k, uint64_t *done)
{
	struct bch_fs *c = mv->c;
	struct bch_job *j = mv->j;
	struct printbuf why = PRINTBUF, w = PRINTBUF;
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p, good = { 0 };
	struct bch_move_drop drop = { 0 };
	struct bch_extent_ptr_unpacked new[BCH_REPLICAS_MAX];
	uint64_t bad_dirty = 0, exclude;
	unsigned i = 0, nr_bad = 0, nr_new = 0, written = 0, sectors = 0;
	bool have_good = false, any_csum = false;
	int ret = 0;

	*done += k->k.size;
	pthread_mutex_lock(&j->lock);
	j->extents_seen++;
	j->sectors_seen += k->k.size;
	pthread_mutex_unlock(&j->lock);
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0) {
		unsigned idx = i++;

		if (p.crc.entry_type >= 0 && p.crc.csum_type)
			any_csum = true;
		if (bch_move_ptr_stale(c, &p.ptr) || !(p.ptr.dev < BCH_FS_MAX_DEVS && c->devs[p.ptr.dev] &&
					       c->devs[p.ptr.dev]->io))
			continue;
		printbuf_reset(&why);
		if (!bch_move_read_region(&mv->m, k, &p, &why)) {
			if (!have_good) {
				good = p;
				have_good = true;
			}
			continue;
		}
		/* a bad copy */
		nr_bad++;
		pr_where(&w, k);
		job_report(j, "%s: %s", printbuf_str(&w), printbuf_str(&why));
		printbuf_reset(&w);
		if (p.ptr.cached || k->k.type == BCH_EXTENT_CACHED) {
			drop.idxs |= idx < 64 ? 1ULL << idx : 0;
		} else if (p.ptr.dev < 64) {
			bad_dirty |= 1ULL << p.ptr.dev;
		}
	}
	if (!any_csum) {
		mv->scrub->unverifiable += k->k.size;
		goto out;
	}
	if (!nr_bad)
		goto out;
	if (!have_good) {
		struct scrub_state *s = mv->scrub;

		s->bad = xrealloc(s->bad, (s->nr_bad + 1) * sizeof(*s->bad));
		s->bad[s->nr_bad].inum = k->k.p.inode;
		s->bad[s->nr_bad].offset = (k->k.p.offset - k->k.size) << 9;
		snprintf(s->bad[s->nr_bad].what, sizeof(s->bad[0].what),
			 "%" PRIu64 " bytes, no good copy", (uint64_t)k->k.size << 9);
		s->nr_bad++;
		pthread_mutex_lock(&j->lock);
		j->errors++;
		pthread_mutex_unlock(&j->lock);
		goto out;
	}
	/* rewrite each bad copy from the good one (on its own device when it can) */
	if (!bch_move_read_region(&mv->m, k, &good, &why)) {
		sectors = bch_move_region_sectors(k, &good);
		drop.devs = bad_dirty;
		exclude = bch_extent_key_devs(k) & ~bad_dirty;
		for (unsigned d = 0; d < 64 && !ret; d++) {
			if (!(bad_dirty & (1ULL << d)))
				continue;
			/* the device of the bad copy first: the key already has the others */
			ret = bch_move_write(&mv->m, sectors, exclude | ~(1ULL << d), &new[nr_new], &why);
			if (ret == -BCH_ERR_nospc)
				ret = bch_move_write(&mv->m, sectors, exclude, &new[nr_new], &why);
			if (ret)
				break;
			exclude |= 1ULL << new[nr_new].dev;
			nr_new++;
			written += sectors;
		}
		if (!ret || ret == -BCH_ERR_nospc)
			ret = commit_extent(mv, k, &drop, &good.crc, new, nr_new, &why);
		if (!ret) {
			pthread_mutex_lock(&j->lock);
			j->repaired += nr_bad;
			j->extents_moved++;
			j->sectors_moved += written;
			pthread_mutex_unlock(&j->lock);
			pr_where(&w, k);
			job_report(j, "%s: repaired from device %u", printbuf_str(&w), good.ptr.dev);
		} else {
			key_error(j, k, "repair failed: %s", printbuf_str(&why));
			ret = 0;
		}
	}
out:
	printbuf_exit(&why);
	printbuf_exit(&w);
	return ret < 0 ? ret : (int)written;
}

/*
 * Repair on read (core/integrity.h): the extents of @r->inode over
 * sectors [@r->start, @r->end), one of whose copies failed while the
 * mount read them, go through scrub's check and repair, one transaction
 * each. The caller holds the engine lock. Returns the copies rewritten;
 * what was done (or why not) is in @log, a line each.
 */
int bch_data_repair(struct bch_fs *c, const struct bch_repair_req *r, struct printbuf *log)
{
	struct bch_job j = { .c = c };
	struct mover mv;
	struct scrub_state s = { 0 };
	struct printbuf ignore = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k, *keys = NULL;
	size_t nr = 0;
	uint64_t done = 0;
	int ret = 0;

	pthread_mutex_init(&j.lock, NULL);
	mover_init(&mv, c, &j);
	mv.scrub = &s;
	/* copies first: each repair commits, and the iterator sees commits later */
	bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, POS_H(r->inode, r->start), &ignore);
	while (!bch_btree_iter_peek(&iter, &k) && k && k->k.p.inode == r->inode &&
	       bkey_start_pos(&k->k).offset < r->end) {
		keys = xrealloc(keys, (nr + 1) * sizeof(*keys));
		keys[nr] = *k;
		keys[nr].v = xmalloc(k->v_bytes ?: 1);
		memcpy((void *)keys[nr].v, k->v, k->v_bytes);
		nr++;
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	for (size_t i = 0; i < nr && ret >= 0; i++)
		ret = scrub_extent(&mv, &keys[i], &done);
	bch_mover_close(&mv.m);
	bch_mover_exit(&mv.m);
	pr_str(log, printbuf_str(&j.report));
	for (size_t i = 0; i < s.nr_bad; i++)
		pr_buf(log, "inode %" PRIu64 " at byte %" PRIu64 ": %s\n", s.bad[i].inum,
		       s.bad[i].offset, s.bad[i].what);
	c->integ.data_copies_repaired += j.repaired;
	for (size_t i = 0; i < nr; i++)
		free((void *)keys[i].v);
	free(keys);
	free(s.bad);
	printbuf_exit(&j.report);
	printbuf_exit(&ignore);
	pthread_mutex_destroy(&j.lock);
	return ret < 0 ? ret : (int)j.repaired;
}

/* ---- btree phases ------------------------------------------------------------------- */

static int node_few_copies(void *arg, const struct btree_node_visit *v)
{
	struct node_walk *w = arg;
	struct btree_ptr_h p[BCH_REPLICAS_MAX];
	unsigned dur = 0;
	int nr;

	if (!v->ptr || (nr = btree_ptr_decode(v->ptr, p, BCH_REPLICAS_MAX)) <= 0)
		return 0;
	for (int i = 0; i < nr; i++)
		dur += bch_dev_ptr_durability(w->c, p[i].dev);
	if (dur < w->want) {
		bch_fs_rw_force_rewrite(w->c, v->btree_id, v->level, v->ptr->k.p);
		w->nr++;
	}
	return 0;
}

/* Read every copy of a node, verify it: bad copies make the node rewritten. */
static int node_scrub(void *arg, const struct btree_node_visit *v)
{
	struct node_walk *w = arg;
	struct bch_fs *c = w->c;
	struct btree_ptr_h p[BCH_REPLICAS_MAX];
	struct btree_node_ctx ctx;
	unsigned good = 0, bad = 0;
	int nr;

	if (!v->ptr || (nr = btree_ptr_decode(v->ptr, p, BCH_REPLICAS_MAX)) <= 0)
		return 0;
	btree_node_ctx_init(&ctx, c);
	for (int i = 0; i < nr; i++) {
		struct btree_node_expect exp = {
			.btree_id = v->btree_id, .level = v->level, .max_key = v->ptr->k.p,
		};
		struct printbuf why = PRINTBUF;
		struct btree_node_h *n = NULL;
		size_t bytes = (size_t)c->btree_node_size << 9;
		char where[64];
		void *data;
		int ret;

		if (p[i].dev >= BCH_FS_MAX_DEVS || !c->devs[p[i].dev] || !c->devs[p[i].dev]->io)
			continue;
		data = xmalloc(bytes);
		ret = bch_dev_read(c, p[i].dev, data, bytes, p[i].offset);
		snprintf(where, sizeof(where), "dev %u sector %" PRIu64, p[i].dev, p[i].offset);
		if (ret)
			free(data);
		else
			ret = btree_node_parse(&ctx, &exp, data, bytes, where, &n, &why);
		if (!ret && n->csum_errors)
			ret = -BCH_ERR_btree_node_bad_csum;
		if (ret) {
			bad++;
			job_report(w->j, "btree %s level %u node ending at %" PRIu64 ":%" PRIu64
				   ": copy on device %u sector %" PRIu64 " is bad (%s)",
				   bch_btree_id_str(v->btree_id), v->level, v->ptr->k.p.inode,
				   v->ptr->k.p.offset, p[i].dev, p[i].offset, bch_err_str(ret));
		} else {
			good++;
		}
		btree_node_free(n);
		printbuf_exit(&why);
	}
	if (bad && good) {
		bch_fs_rw_force_rewrite(c, v->btree_id, v->level, v->ptr->k.p);
		w->nr++;
		pthread_mutex_lock(&w->j->lock);
		w->j->repaired += bad;
		pthread_mutex_unlock(&w->j->lock);
	} else if (bad) {
		w->bad++;
		pthread_mutex_lock(&w->j->lock);
		w->j->errors++;
		pthread_mutex_unlock(&w->j->lock);
	}
	return 0;
}

/* ---- paths of damaged files (scrub's report) ------------------------------------- */

struct dent {
	uint64_t	inum;		/* target */
	uint64_t	dir;
	char		*name;
};

static int dent_cmp(const void *a, const void *b)
{
	const struct dent *x = a, *y = b;

	return (x->inum > y->inum) - (x->inum < y->inum);
}

static bool inum_wanted(const struct scrub_state *s, uint64_t inum)
{
	for (size_t i = 0; i < s->nr_bad; i++)
		if (s->bad[i].inum == inum)
			return true;
	return false;
}

/* The path of @inum from the dirents collected in @d (sorted), or "?" parts. */
static void pr_path(struct printbuf *out, const struct dent *d, size_t nr, uint64_t inum)
{
	const char *parts[256];
	unsigned n = 0;

	while (inum != BCACHEFS_ROOT_INO && n < ARRAY_SIZE(parts)) {
		struct dent key = { .inum = inum };
		const struct dent *e = bsearch(&key, d, nr, sizeof(*d), dent_cmp);

		if (!e) {
			parts[n++] = NULL;
			break;
		}
		parts[n++] = e->name;
		inum = e->dir;
	}
	if (!n)
		pr_char(out, '/');
	while (n--) {
		pr_char(out, '/');
		pr_str(out, parts[n] ?: "(unreachable)");
	}
}

/* One line per extent with no good copy: the file's path, where, what. */
static void scrub_report_paths(struct bch_job *j, struct scrub_state *s)
{
	struct bch_fs *c = j->c;
	struct printbuf ignore = PRINTBUF, line = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	struct dent *d = NULL;
	size_t nr = 0, size = 0;

	if (!s->nr_bad)
		return;
	bch_fs_lock(c);
	bch_btree_iter_init(&iter, c, BTREE_ID_DIRENTS, POS_H_MIN, &ignore);
	while (!bch_btree_iter_peek(&iter, &k) && k) {
		struct bch_dirent_h de;

		if (k->k.type == 128 && !bch_dirent_decode(k, &de) &&
		    (de.d_type == 4 /* DT_DIR */ || inum_wanted(s, de.d_inum))) {
			if (nr == size) {
				size = size ? 2 * size : 64;
				d = xrealloc(d, size * sizeof(*d));
			}
			d[nr].inum = de.d_inum;
			d[nr].dir = k->k.p.inode;
			d[nr].name = strndup((const char *)de.name, de.name_len);
			nr++;
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	bch_fs_unlock(c);
	qsort(d, nr, sizeof(*d), dent_cmp);

	for (size_t i = 0; i < s->nr_bad; i++) {
		printbuf_reset(&line);
		pr_str(&line, "not repaired: ");
		pr_path(&line, d, nr, s->bad[i].inum);
		pr_buf(&line, " (inode %" PRIu64 ") at byte %" PRIu64 ": %s", s->bad[i].inum,
		       s->bad[i].offset, s->bad[i].what);
		job_report(j, "%s", printbuf_str(&line));
	}
	for (size_t i = 0; i < nr; i++)
		free(d[i].name);
	free(d);
	printbuf_exit(&line);
	printbuf_exit(&ignore);
}

/* ---- the phases ---------------------------------------------------------------------- */

static int run_rereplicate(struct bch_job *j, struct mover *mv, struct printbuf *err)
{
	struct node_walk w = { .c = j->c, .j = j, .mv = mv };
	int ret;

	w.want = (unsigned)BCH_SB_META_REPLICAS_WANT(j->c->sb) ?: 1;
	if (!j->resumed)
		ret = phase_journal(j, err) ?: phase_btree(j, &w, node_few_copies, -1, err);
	else
		ret = 0;
	if (!ret)
		ret = walk_extents(mv, rereplicate_extent, want_all);
	return ret;
}

static int node_on_dev_w(void *arg, const struct btree_node_visit *v)
{
	struct node_walk *w = arg;
	struct btree_ptr_h p[BCH_REPLICAS_MAX];
	int nr;

	if (!v->ptr || (nr = btree_ptr_decode(v->ptr, p, BCH_REPLICAS_MAX)) <= 0)
		return 0;
	for (int i = 0; i < nr; i++)
		if (p[i].dev == w->j->arg.migrate.dev) {
			bch_fs_rw_force_rewrite(w->c, v->btree_id, v->level, v->ptr->k.p);
			w->nr++;
			break;
		}
	return 0;
}

static int run_migrate(struct bch_job *j, struct mover *mv, struct printbuf *err)
{
	struct node_walk w = { .c = j->c, .j = j, .mv = mv };
	unsigned dev = j->arg.migrate.dev;
	int ret;

	if (!j->resumed)
		ret = phase_journal(j, err) ?: phase_btree(j, &w, node_on_dev_w, (int)dev, err);
	else
		ret = 0;
	if (!ret)
		ret = walk_extents(mv, migrate_extent, want_on_dev);
	return ret;
}

static int run_scrub(struct bch_job *j, struct mover *mv, struct printbuf *err)
{
	struct node_walk w = { .c = j->c, .j = j, .mv = mv };
	struct scrub_state s = { 0 };
	int ret;

	mv->scrub = &s;
	ret = j->resumed ? 0 : phase_btree(j, &w, node_scrub, -1, err);
	if (!ret)
		ret = walk_extents(mv, scrub_extent, want_all);
	if (!ret && w.bad)
		job_report(j, "not repaired: %" PRIu64 " btree nodes with no good copy", w.bad);
	scrub_report_paths(j, &s);
	if (s.unverifiable)
		job_report(j, "%" PRIu64 " bytes of data have no checksum: not verified",
			   s.unverifiable << 9);
	free(s.bad);
	mv->scrub = NULL;
	return ret;
}

static void *worker_fn(void *arg)
{
	struct bch_job *j = arg;
	struct mover mv;
	struct printbuf err = PRINTBUF;
	int ret;

	mover_init(&mv, j->c, j);
	switch (j->arg.op) {
	case BCH_DATA_OP_REREPLICATE:
		ret = run_rereplicate(j, &mv, &err);
		break;
	case BCH_DATA_OP_MIGRATE:
		ret = run_migrate(j, &mv, &err);
		break;
	default:
		ret = run_scrub(j, &mv, &err);
		break;
	}
	/* what changed, in the replicas table (also after a stop: it is short) */
	if (j->arg.op != BCH_DATA_OP_SCRUB || j->repaired) {
		struct printbuf gc = PRINTBUF;
		int r = phase_gc(j, &mv, &gc);

		if (r && !ret) {
			ret = r;
			pr_buf(&err, "replicas GC: %s", printbuf_str(&gc));
		}
		printbuf_exit(&gc);
	} else {
		bch_fs_lock(j->c);
		bch_mover_close(&mv.m);
		bch_fs_unlock(j->c);
	}
	if (ret && err.pos)
		job_report(j, "%s", printbuf_str(&err));
	bch_mover_exit(&mv.m);
	printbuf_exit(&err);

	pthread_mutex_lock(&j->lock);
	if (j->nr_reported > JOB_REPORT_MAX)
		pr_buf(&j->report, "... and %u more\n", j->nr_reported - JOB_REPORT_MAX);
	j->ret = ret < 0 ? -bch_err_errno(ret) : 0;
	j->done = true;
	j->p.data_type = BCH_DATA_PROGRESS_DONE;
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

/* ---- the job descriptor --------------------------------------------------------- */

static void reply_progress(struct bch_job *j)
{
	struct bch_ioctl_data_event ev = { .type = BCH_DATA_EVENT_PROGRESS };

	pthread_mutex_lock(&j->lock);
	ev.p = j->p;
	pthread_mutex_unlock(&j->lock);
	send(j->fd, &ev, sizeof(ev), MSG_NOSIGNAL);
}

static void reply_result(struct bch_job *j)
{
	struct bch_job_result r = { .magic = BCH_CTL_JOB_MAGIC };
	struct iovec iov[2];
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	size_t msg;

	pthread_mutex_lock(&j->lock);
	r.done		= j->done;
	r.ret		= j->ret;
	r.sectors_moved	= j->sectors_moved;
	r.extents_moved	= j->extents_moved;
	r.errors	= j->errors;
	r.repaired	= j->repaired;
	r.sectors_seen	= j->sectors_seen;
	r.extents_seen	= j->extents_seen;
	r.resumed_done	= j->resumed ? j->resume_done : 0;
	r.resumed	= j->resumed;
	msg = j->done ? min_t(size_t, j->report.pos, BCH_CTL_TEXT_MAX) : 0;
	r.msg_bytes	= (uint32_t)msg;
	iov[0] = (struct iovec) { &r, sizeof(r) };
	iov[1] = (struct iovec) { j->report.buf, msg };
	sendmsg(j->fd, &mh, MSG_NOSIGNAL);
	pthread_mutex_unlock(&j->lock);
}

static void *responder_fn(void *arg)
{
	struct bch_job *j = arg;

	for (;;) {
		struct bch_job_req req;
		ssize_t n = recv(j->fd, &req, sizeof(req), MSG_TRUNC);

		if (n < 0 && errno == EINTR)
			continue;
		/* closed, or a request we do not know: the job stops */
		if (n != sizeof(req) || req.magic != BCH_CTL_JOB_MAGIC)
			break;
		if (req.type == BCH_JOB_REQ_PROGRESS)
			reply_progress(j);
		else if (req.type == BCH_JOB_REQ_RESULT)
			reply_result(j);
		else
			break;
	}
	atomic_store(&j->stop, true);
	pthread_join(j->worker, NULL);
	j->worker_live = false;
	atomic_store(&j->finished, true);
	return NULL;
}

static void job_free(struct bch_job *j)
{
	close(j->fd);
	pthread_mutex_destroy(&j->lock);
	printbuf_exit(&j->report);
	free(j);
}

void bch_jobs_reap(struct bch_admin *a, bool wait)
{
	struct bch_job **p, *j;

	pthread_mutex_lock(&a->lock);
	for (p = &a->jobs; (j = *p);) {
		if (!wait && !atomic_load(&j->finished)) {
			p = &j->next;
			continue;
		}
		*p = j->next;
		pthread_mutex_unlock(&a->lock);
		pthread_join(j->responder, NULL);
		job_free(j);
		pthread_mutex_lock(&a->lock);
	}
	pthread_mutex_unlock(&a->lock);
}

void bch_jobs_stop_all(struct bch_admin *a)
{
	pthread_mutex_lock(&a->lock);
	for (struct bch_job *j = a->jobs; j; j = j->next) {
		atomic_store(&j->stop, true);
		/* the responder's recv() returns: it joins the worker */
		shutdown(j->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&a->lock);
	bch_jobs_reap(a, true);
}

/*
 * A job of the same op and range whose command went away (Ctrl-C closes the
 * descriptor) is still stopping: it keeps its position when its batch
 * ends. Wait for that, so that the new job goes on from there.
 */
static void wait_stopping(struct bch_admin *a, const struct bch_ioctl_data *arg)
{
	for (unsigned tries = 0; tries < 3000; tries++) {
		bool stopping = false;

		pthread_mutex_lock(&a->lock);
		for (struct bch_job *j = a->jobs; j && !stopping; j = j->next) {
			struct pollfd pfd = { .fd = j->fd, .events = POLLRDHUP };

			if (atomic_load(&j->finished) || j->arg.op != arg->op ||
			    memcmp(&j->arg.start, &arg->start, sizeof(arg->start)) ||
			    memcmp(&j->arg.end, &arg->end, sizeof(arg->end)))
				continue;
			stopping = atomic_load(&j->stop) ||
				(poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLRDHUP)));
		}
		pthread_mutex_unlock(&a->lock);
		if (!stopping)
			return;
		usleep(10000);
	}
}

int bch_fs_data(struct bch_admin *a, const struct bch_ioctl_data *arg, int *fd,
		struct printbuf *msg)
{
	struct bch_fs *c = a->c;
	struct bch_job *j;
	sigset_t all, old;
	int sv[2], ret;

	*fd = -1;
	bch_jobs_reap(a, false);
	if (arg->op >= BCH_DATA_OP_NR || arg->flags) {
		pr_buf(msg, "DATA: unknown op %u or flags %#x", arg->op, arg->flags);
		return -EINVAL;
	}
	bch_fs_lock(c);
	ret = bch_fs_rw(c) ? 0 : -EROFS;
	if (ret)
		pr_str(msg, c->opts.read_only ? "the filesystem is mounted read-only"
					      : "the filesystem is not writable");
	if (!ret && arg->op == BCH_DATA_OP_MIGRATE &&
	    (arg->migrate.dev >= c->nr_devices || !bch_sb_member_exists(c->sb, arg->migrate.dev))) {
		pr_buf(msg, "MIGRATE: no member device %u", arg->migrate.dev);
		ret = -EINVAL;
	}
	bch_fs_unlock(c);
	if (ret)
		return ret;
	wait_stopping(a, arg);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ret = -errno;
		pr_buf(msg, "socketpair: %s", strerror(errno));
		return ret;
	}
	j = xcalloc(1, sizeof(*j));
	j->a = a;
	j->c = c;
	j->arg = *arg;
	j->fd = sv[1];
	j->report = PRINTBUF;
	pthread_mutex_init(&j->lock, NULL);
	j->p.data_type = 0;
	resume_take(j);

	/* the threads take no signal (the mount's SIGTERM is the FUSE loop's) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&j->worker, NULL, worker_fn, j);
	if (!ret) {
		j->worker_live = true;
		ret = -pthread_create(&j->responder, NULL, responder_fn, j);
		if (ret) {
			atomic_store(&j->stop, true);
			pthread_join(j->worker, NULL);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pr_buf(msg, "cannot start the job: %s", strerror(-ret));
		close(sv[0]);
		job_free(j);
		return ret;
	}
	pthread_mutex_lock(&a->lock);
	j->next = a->jobs;
	a->jobs = j;
	pthread_mutex_unlock(&a->lock);
	*fd = sv[0];
	return 0;
}
