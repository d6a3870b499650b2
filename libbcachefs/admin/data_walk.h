/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data jobs' shared parts (data_walk.c), private to data_job.c: the
 * job, its progress and report, the mover, the walk over extents and the
 * phases. The comments on each function are at its definition.
 */
#ifndef BCH_ADMIN_DATA_WALK_H
#define BCH_ADMIN_DATA_WALK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "format/ioctl.h"
#include "fs/durability.h"
#include "fs/move.h"
#include "util/util.h"

struct bch_admin;
struct bch_fs;
struct btree_node_visit;

/* Problems listed in a report; more are only counted. */
#define JOB_REPORT_MAX		100

struct bch_job {
	struct bch_admin	*a;
	struct bch_fs		*c;
	struct bch_ioctl_data	arg;
	int			fd;		/* our end of the job descriptor */
	pthread_t		worker, responder;
	bool			worker_live, responder_live;
	atomic_bool		stop;
	atomic_bool		finished;	/* the responder is done: reap it */

	pthread_mutex_t		lock;		/* what follows */
	struct bch_ioctl_data_progress p;
	bool			done;
	int			ret;
	struct printbuf		report;
	uint64_t		sectors_moved, extents_moved, errors, repaired;
	/* what the job looked at in this run (scrub: verified) */
	uint64_t		sectors_seen, extents_seen;
	unsigned		nr_reported;
	/* resumed: the walk starts at resume_pos with resume_done sectors done */
	bool			resumed;
	struct bpos_h		resume_pos;
	uint64_t		resume_done;

	struct bch_job		*next;
};

struct scrub_state;

/* The shared mover (fs/move.h) and what the job's steps need beside it. */
struct mover {
	struct bch_mover	m;
	struct bch_fs		*c;
	struct bch_job		*j;
	struct bch_inode_want	want;
	struct scrub_state	*scrub;
};

/*
 * What a job does to one extent, engine lock held: > 0 sectors written
 * (counts against the batch), 0 nothing, < 0 a fatal error for the job.
 */
typedef int (*extent_fn)(struct mover *mv, const struct bkey_ref *k, uint64_t *done);

struct node_walk {
	struct bch_fs	*c;
	struct bch_job	*j;
	struct mover	*mv;
	unsigned	want;		/* rereplicate: metadata replicas */
	uint64_t	nr;		/* nodes to rewrite */
	uint64_t	bad;		/* scrub: nodes with no good copy */
};

__printf(2, 3) void job_report(struct bch_job *j, const char *fmt, ...);
__printf(3, 4) void key_error(struct bch_job *j, const struct bkey_ref *k,
			      const char *fmt, ...);
void pr_where(struct printbuf *out, const struct bkey_ref *k);
void mover_init(struct mover *mv, struct bch_fs *c, struct bch_job *j);
int commit_extent(struct mover *mv, const struct bkey_ref *k, struct bch_move_drop *drop,
		  const struct bch_extent_crc_unpacked *crc,
		  const struct bch_extent_ptr_unpacked *new, unsigned nr_new,
		  struct printbuf *err);
void resume_take(struct bch_job *j);
int walk_extents(struct mover *mv, extent_fn fn, bool (*want)(struct mover *, const struct bkey_ref *));
int phase_journal(struct bch_job *j, struct printbuf *err);
int phase_btree(struct bch_job *j, struct node_walk *w,
		int (*fn)(void *, const struct btree_node_visit *), int avoid,
		struct printbuf *err);
int phase_gc(struct bch_job *j, struct mover *mv, struct printbuf *err);

#endif
