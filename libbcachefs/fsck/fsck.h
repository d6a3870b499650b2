/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsck: the passes, in order, over an open filesystem. Each pass says
 * what it checks and what it leaves for the next; every problem goes
 * through fsck_fix() (problems.h).
 */
#ifndef BCH_FSCK_H
#define BCH_FSCK_H

#include "fsck/problems.h"

struct bch_fs;
struct fsck_state;

/*
 * Run every pass. Returns 0 when the passes ran (problems are counted in
 * @s), or a negative error when checking could not go on.
 */
int bch_fsck_run(struct bch_fs *c, struct fsck_state *s,
		 fsck_progress_fn progress, void *priv);

/*
 * Was @c unmounted cleanly, as far as can be told without reading a btree
 * node: every member present, the superblock initialised and marked
 * clean, the journal read without a problem and holding nothing to replay
 * (one entry, no keys), nothing else found at open. This is the test of
 * e2fsck's "clean" fast path: `fsck -n` and `fsck -p` stop there unless
 * -f is given; it says nothing about damage in the nodes themselves.
 */
bool bch_fsck_marked_clean(const struct bch_fs *c);

struct printbuf;
/* Report each line @msgs (what bch_fs_open() said) as a problem; empties @msgs. */
void bch_fsck_report_open(struct fsck_state *s, struct printbuf *msgs);

#endif
