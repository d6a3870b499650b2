// SPDX-License-Identifier: GPL-2.0
/*
 * What every data job (data_job.c) is built on (data_walk.h): its
 * progress and report, the mover that commits an extent's new pointers,
 * the walk over the extents in batches under the engine lock (resumed
 * where a stopped job of the same op and range left off), and the
 * journal, btree and replicas-GC phases.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin/call.h"
#include "admin/data_walk.h"
#include "alloc/alloc.h"
#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "util/errcode.h"
#include "bkey/extents.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fs/durability.h"
#include "fs/move.h"

/* How long the worker keeps the engine lock: a batch of extents or bytes. */
#define JOB_BATCH_EXTENTS	256
#define JOB_BATCH_BYTES		(8U << 20)

/* ---- progress and reports ------------------------------------------------ */

static void job_phase(struct bch_job *j, unsigned data_type, unsigned btree_id)
{
	pthread_mutex_lock(&j->lock);
	j->p.data_type = (uint8_t)data_type;
	j->p.btree_id = (uint8_t)btree_id;
	pthread_mutex_unlock(&j->lock);
}

static void job_pos(struct bch_job *j, struct bpos_h pos, uint64_t done)
{
	pthread_mutex_lock(&j->lock);
	j->p.pos.inode = cpu_to_le64(pos.inode);
	j->p.pos.offset = cpu_to_le64(pos.offset);
	j->p.pos.snapshot = cpu_to_le32(pos.snapshot);
	j->p.sectors_done = done;
	pthread_mutex_unlock(&j->lock);
}

__printf(2, 3) void job_report(struct bch_job *j, const char *fmt, ...)
{
	va_list args;

	pthread_mutex_lock(&j->lock);
	if (j->nr_reported++ < JOB_REPORT_MAX) {
		va_start(args, fmt);
		pr_vbuf(&j->report, fmt, args);
		va_end(args);
		pr_char(&j->report, '\n');
	}
	pthread_mutex_unlock(&j->lock);
}

/* ---- the mover: encoded copies of extents ---------------------------------------- */

void mover_init(struct mover *mv, struct bch_fs *c, struct bch_job *j)
{
	memset(mv, 0, sizeof(*mv));
	bch_mover_init(&mv->m, c);
	mv->c = c;
	mv->j = j;
}

/*
 * The new version of extent @k (bch_move_commit()). The job holds the
 * engine lock from reading @k to here, so @k is the key in the btree.
 */
int commit_extent(struct mover *mv, const struct bkey_ref *k, struct bch_move_drop *drop,
		  const struct bch_extent_crc_unpacked *crc,
		  const struct bch_extent_ptr_unpacked *new, unsigned nr_new,
		  struct printbuf *err)
{
	return bch_move_commit(&mv->m, k, drop, crc, new, nr_new, err);
}

/* "inode 4100 at byte 8192" */
void pr_where(struct printbuf *out, const struct bkey_ref *k)
{
	pr_buf(out, "inode %" PRIu64 " at byte %" PRIu64, k->k.p.inode,
	       (k->k.p.offset - k->k.size) << 9);
}

/* Key @k could not be handled: said in the job's report, counted as an error. */
__printf(3, 4) void key_error(struct bch_job *j, const struct bkey_ref *k,
			      const char *fmt, ...)
{
	struct printbuf w = PRINTBUF;
	va_list args;

	pr_where(&w, k);
	pr_str(&w, ": ");
	va_start(args, fmt);
	pr_vbuf(&w, fmt, args);
	va_end(args);
	job_report(j, "%s", printbuf_str(&w));
	printbuf_exit(&w);
	pthread_mutex_lock(&j->lock);
	j->errors++;
	pthread_mutex_unlock(&j->lock);
}

/* ---- the walk over extents ------------------------------------------------------ */

/*
 * Tests: BCH_JOB_THROTTLE_US=N makes a job sleep N microseconds per extent
 * it looks at (between batches), so that it can be caught in the middle.
 */
static unsigned long job_throttle_us(void)
{
	const char *e = getenv("BCH_JOB_THROTTLE_US");

	return e && *e ? strtoul(e, NULL, 10) : 0;
}

static bool job_stopped(struct bch_job *j)
{
	return atomic_load(&j->stop);
}

/* ---- resuming a stopped job ----------------------------------------------------- */

static bool resume_matches(const struct bch_job_resume *r, const struct bch_ioctl_data *arg)
{
	return r->valid && r->op == arg->op &&
	       (arg->op != BCH_DATA_OP_MIGRATE || r->dev == arg->migrate.dev) &&
	       !memcmp(&r->start, &arg->start, sizeof(r->start)) &&
	       !memcmp(&r->end, &arg->end, sizeof(r->end));
}

/* A new job: the same op and range as one stopped before resumes it. */
void resume_take(struct bch_job *j)
{
	struct bch_job_resume *r = &j->a->resume;

	pthread_mutex_lock(&j->a->lock);
	if (resume_matches(r, &j->arg)) {
		j->resumed = true;
		j->resume_pos = (struct bpos_h) { .inode = le64_to_cpu(r->pos.inode),
						  .offset = le64_to_cpu(r->pos.offset) };
		j->resume_done = r->done;
	}
	pthread_mutex_unlock(&j->a->lock);
}

/* The walk stopped at @pos (@done sectors done), or finished: keep or clear it. */
static void resume_keep(struct bch_job *j, struct bpos_h pos, uint64_t done, bool finished)
{
	struct bch_job_resume *r = &j->a->resume;

	pthread_mutex_lock(&j->a->lock);
	if (finished) {
		if (resume_matches(r, &j->arg))
			r->valid = false;
	} else {
		r->valid = true;
		r->op	 = j->arg.op;
		r->dev	 = j->arg.op == BCH_DATA_OP_MIGRATE ? j->arg.migrate.dev : 0;
		r->start = j->arg.start;
		r->end	 = j->arg.end;
		r->pos	 = (struct bpos) { .inode = cpu_to_le64(pos.inode),
					   .offset = cpu_to_le64(pos.offset) };
		r->done	 = done;
	}
	pthread_mutex_unlock(&j->a->lock);
}

int walk_extents(struct mover *mv, extent_fn fn, bool (*want)(struct mover *, const struct bkey_ref *))
{
	struct bch_job *j = mv->j;
	struct bch_fs *c = mv->c;
	struct bpos_h pos = { .inode = le64_to_cpu(j->arg.start.inode),
			      .offset = le64_to_cpu(j->arg.start.offset) };
	struct bpos_h end = { .inode = le64_to_cpu(j->arg.end.inode),
			      .offset = le64_to_cpu(j->arg.end.offset) };
	struct printbuf ignore = PRINTBUF;
	uint64_t total = 0, done = 0;
	bool finished = false;
	int ret = 0;

	/* the total, for the percentage (in batches too: the mount keeps going) */
	job_phase(j, BCH_DATA_USER, BTREE_ID_EXTENTS);
	for (struct bpos_h p = pos; !ret && !job_stopped(j);) {
		struct btree_iter iter;
		struct bkey_ref *k;
		unsigned n = 0;
		bool at_end = false;

		bch_fs_lock(c);
		bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, p, &ignore);
		while (n++ < 4096) {
			ret = bch_btree_iter_peek(&iter, &k);
			if (ret || !k || bpos_cmp(k->k.p, end) >= 0) {
				at_end = true;
				break;
			}
			if (want(mv, k))
				total += k->k.size;
			p = k->k.p;
			bch_btree_iter_advance(&iter);
		}
		bch_btree_iter_exit(&iter);
		bch_fs_unlock(c);
		if (at_end)
			break;
	}
	/* resumed: from where the stopped job was, its work counted as done */
	if (j->resumed) {
		pos = j->resume_pos;
		done = min_t(uint64_t, j->resume_done, total);
	}
	pthread_mutex_lock(&j->lock);
	j->p.sectors_total = total;
	pthread_mutex_unlock(&j->lock);
	job_pos(j, pos, done);

	while (!ret && !job_stopped(j)) {
		struct btree_iter iter;
		struct bkey_ref *k;
		unsigned n = 0;
		uint64_t bytes = 0;
		bool at_end = false;
		unsigned long throttle = job_throttle_us();

		bch_fs_lock(c);
		if (!bch_fs_rw(c)) {
			bch_fs_unlock(c);
			job_report(j, "the filesystem is not writable any more");
			ret = -EROFS;
			break;
		}
		bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, pos, &ignore);
		for (;;) {
			int r;

			if (n >= JOB_BATCH_EXTENTS || bytes >= JOB_BATCH_BYTES || job_stopped(j))
				break;
			ret = bch_btree_iter_peek(&iter, &k);
			if (ret || !k || bpos_cmp(k->k.p, end) >= 0) {
				at_end = true;
				break;
			}
			pos = k->k.p;
			n++;
			if (want(mv, k)) {
				struct bkey_ref copy = *k;
				uint64_t val[BKEY_EXTENT_VAL_U64s_MAX];

				/* the key may change under the iterator when we commit */
				if (k->v_bytes > sizeof(val)) {
					bch_btree_iter_advance(&iter);
					continue;
				}
				memcpy(val, k->v, k->v_bytes);
				copy.v = val;
				r = fn(mv, &copy, &done);
				if (r < 0) {
					ret = r;
					break;
				}
				bytes += (uint64_t)r << 9;
			}
			bch_btree_iter_advance(&iter);
		}
		bch_btree_iter_exit(&iter);
		bch_fs_unlock(c);
		job_pos(j, pos, done);
		if (at_end) {
			finished = !ret;
			break;
		}
		if (throttle)
			usleep((useconds_t)min_t(unsigned long, throttle * n, 1000000));
		sched_yield();
	}
	if (finished || job_stopped(j))
		resume_keep(j, pos, done, finished);
	printbuf_exit(&ignore);
	return ret;
}

/* ---- the phases ---------------------------------------------------------------------- */

/* A checkpoint (journal phase): nothing before it in the journal is needed any more. */
int phase_journal(struct bch_job *j, struct printbuf *err)
{
	int ret;

	job_phase(j, BCH_DATA_JOURNAL, 0);
	bch_fs_lock(j->c);
	ret = bch_fs_checkpoint(j->c, err);
	bch_fs_unlock(j->c);
	return ret;
}

/*
 * Btree phase: @fn marks the nodes to rewrite; a checkpoint rewrites them
 * (with @avoid read-only for the allocator meanwhile: no new node there).
 */
int phase_btree(struct bch_job *j, struct node_walk *w,
		int (*fn)(void *, const struct btree_node_visit *), int avoid,
		struct printbuf *err)
{
	struct bch_fs *c = j->c;
	struct printbuf ignore = PRINTBUF;
	int ret = 0;

	job_phase(j, BCH_DATA_BTREE, 0);
	bch_fs_lock(c);
	for (unsigned id = 0; id < BCH_NR_BTREES && !ret && !job_stopped(j); id++) {
		job_phase(j, BCH_DATA_BTREE, id);
		ret = bch_btree_walk_nodes(c, id, fn, w, &ignore);
	}
	if (!ret && w->nr) {
		struct bch_allocator *a = bch_fs_rw_alloc(c);
		struct bch_dev_alloc *d = a && avoid >= 0 ? a->devs[avoid] : NULL;
		unsigned state = d ? d->state : 0;

		if (d)
			d->state = BCH_MEMBER_STATE_RO;
		ret = bch_fs_checkpoint(c, err);
		if (d && a->devs[avoid] == d)
			d->state = state;
	}
	bch_fs_unlock(c);
	printbuf_exit(&ignore);
	return ret;
}

int phase_gc(struct bch_job *j, struct mover *mv, struct printbuf *err)
{
	int ret;

	bch_fs_lock(j->c);
	bch_mover_close(&mv->m);
	ret = bch_fs_replicas_gc(j->c, err);
	bch_fs_unlock(j->c);
	return ret;
}
