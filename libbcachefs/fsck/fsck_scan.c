// SPDX-License-Identifier: GPL-2.0
/*
 * fsck and the node scan (node_scan.h): where the pointers to btree nodes
 * are lost, the keys of the lost range come from the newest leaves found
 * on the devices.
 *
 * Before the other passes (bch_fsck_scan_start()):
 *   - a journal with no usable entry (journal_empty, said at open): no
 *     btree has a root. Fixed: every btree is recovered from the scan, a
 *     new journal starts after every journal seq seen, and a checkpoint
 *     writes the btrees; the passes then check them like any. Not fixed:
 *     there is nothing to check, the passes do not run.
 *   - when fsck may repair: the roots and interior nodes are read (not
 *     the leaves). When one cannot be read, or the inodes, dirents or
 *     alloc btree has no root (an initialised filesystem has them all),
 *     the devices are scanned now, before any repair allocates (a new
 *     node could take the bucket of a lost leaf), and the keys of the
 *     ranges of the unreadable nodes are read at once. --scan-nodes scans
 *     whatever happens and says what was found.
 *   - a btree without a root: btree_root_missing for the inodes, dirents
 *     and alloc btrees, and for any btree of which the scan found nodes
 *     (a root, once written, is never removed). Fixed: its keys are
 *     recovered, and the checkpoint builds it.
 *
 * In the node pass (fsck.c), a node that cannot be read gets the keys of
 * its range from the scan (bch_fsck_scan_fill(), which scans then if that
 * was not done): they are laid over the btree like journal keys, so the
 * later passes check them like any key, and the checkpoint that rebuilds
 * the node writes them.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "btree/bulk.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fsck/fsck_scan.h"
#include "journal/journal.h"
#include "fsck/node_scan.h"
#include "fsck/problems.h"
#include "util/util.h"

/* A range of a btree whose node is lost. */
struct scan_range {
	unsigned		btree_id;
	unsigned		level;
	struct bpos_h		min, max;
	struct bulk_keys	keys;
	struct node_scan_use	use;
	bool			have_keys;	/* read (the probe reads them early) */
	bool			filled;		/* laid over the btree */
};

struct fsck_scan {
	struct bch_node_scan	ns;
	int			ret;		/* of the scan */
	fsck_progress_fn	progress;
	void			*priv;
	struct scan_range	*r;
	size_t			nr;
	unsigned long		nr_filled;	/* ranges that gave keys to the btrees */
};

static void info(struct fsck_state *s, enum bch_problem p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void info(struct fsck_state *s, enum bch_problem p, const char *fmt, ...)
{
	struct printbuf buf = PRINTBUF;
	va_list args;

	va_start(args, fmt);
	pr_vbuf(&buf, fmt, args);
	va_end(args);
	if (s->ops.report)
		s->ops.report(s->ops.priv, p, printbuf_str(&buf));
	printbuf_exit(&buf);
}

static struct fsck_scan *scan_state(struct fsck_state *s)
{
	if (!s->scan)
		s->scan = xcalloc(1, sizeof(*s->scan));
	return s->scan;
}

bool bch_fsck_scan_ran(const struct fsck_state *s)
{
	return s->scan && s->scan->ns.done;
}

unsigned long bch_fsck_scan_nr_filled(const struct fsck_state *s)
{
	return s->scan ? s->scan->nr_filled : 0;
}

void bch_fsck_scan_exit(struct fsck_state *s)
{
	struct fsck_scan *fs = s->scan;

	if (!fs)
		return;
	for (size_t i = 0; i < fs->nr; i++)
		bulk_keys_exit(&fs->r[i].keys);
	free(fs->r);
	bch_node_scan_exit(&fs->ns);
	free(fs);
	s->scan = NULL;
}

static struct scan_range *range_get(struct fsck_scan *fs, unsigned id, unsigned level,
				    struct bpos_h min, struct bpos_h max)
{
	struct scan_range *r;

	for (size_t i = 0; i < fs->nr; i++)
		if (fs->r[i].btree_id == id && fs->r[i].level == level &&
		    bpos_eq(fs->r[i].min, min) && bpos_eq(fs->r[i].max, max))
			return &fs->r[i];
	fs->r = xrealloc(fs->r, (fs->nr + 1) * sizeof(*fs->r));
	r = &fs->r[fs->nr++];
	memset(r, 0, sizeof(*r));
	r->btree_id = id;
	r->level = level;
	r->min = min;
	r->max = max;
	return r;
}

/* Scan the devices once; said per btree. Returns the scan's result. */
static int scan_run(struct bch_fs *c, struct fsck_state *s)
{
	struct fsck_scan *fs = scan_state(s);
	struct printbuf err = PRINTBUF, t = PRINTBUF;
	struct bch_rw_stats st;

	if (fs->ns.done)
		return fs->ret;
	if (fs->progress)
		fs->progress(fs->priv, "scanning the devices for btree nodes");
	bch_fs_rw_stats(c, &st);
	/* the node pass may be walking: the node cache is left as it is */
	fs->ret = bch_node_scan(c, &fs->ns, &err);
	if (fs->ret)
		info(s, PROB_btree_node_unreadable, "%s", printbuf_str(&err));
	for (unsigned id = 0; id < BCH_NR_BTREES; id++) {
		unsigned long nr = bch_node_scan_nr(&fs->ns, id);

		if (nr)
			info(s, PROB_btree_node_unreadable,
			     "node scan: btree %s: %lu node%s found (%lu lea%s)",
			     bch_btree_id_str(id), nr, nr == 1 ? "" : "s",
			     fs->ns.found[id][0], fs->ns.found[id][0] == 1 ? "f" : "ves");
	}
	info(s, PROB_btree_node_unreadable, "node scan: %zu btree node%s found on %u device%s%s",
	     fs->ns.nr, fs->ns.nr == 1 ? "" : "s", fs->ns.nr_devs, fs->ns.nr_devs == 1 ? "" : "s",
	     fs->ns.nr_bad ? " (more with this filesystem's magic did not verify)" : "");
	if (st.checkpoints)
		info(s, PROB_btree_node_unreadable,
		     "node scan: %" PRIu64 " checkpoint%s ran before it: a lost node may have been overwritten by then",
		     st.checkpoints, st.checkpoints == 1 ? "" : "s");
	if (fs->progress) {
		bch_node_scan_to_text(&t, &fs->ns);
		printbuf_reset(&err);
		pr_buf(&err, "node scan: %s", printbuf_str(&t));
		fs->progress(fs->priv, printbuf_str(&err));
	}
	printbuf_exit(&t);
	printbuf_exit(&err);
	return fs->ret;
}

static void range_read(struct bch_fs *c, struct fsck_scan *fs, struct scan_range *r)
{
	struct printbuf err = PRINTBUF;

	if (r->have_keys)
		return;
	bch_node_scan_keys(c, &fs->ns, r->btree_id, r->min, r->max, &r->keys, &r->use, &err);
	r->have_keys = true;
	printbuf_exit(&err);
}

/*
 * Lay the keys of @r over the btree. What the update engine marked at its
 * start did not include them: their space is marked now, and the gens of
 * recovered alloc keys are the allocator's.
 */
static void range_inject(struct bch_fs *c, struct scan_range *r)
{
	bch_journal_keys_add(&c->journal, r->btree_id, r->keys.k, r->keys.nr);
	/* older than what the journal and the repairs so far put there */
	for (size_t i = 0; i < r->keys.nr; i++)
		bch_overlay_insert_under(&c->overlay, r->btree_id, &r->keys.k[i]);
	if (c->rw)
		for (size_t i = 0; i < r->keys.nr; i++) {
			const struct bkey_ref *k = &r->keys.k[i];
			struct bch_alloc_h a;

			if (r->btree_id == BTREE_ID_EXTENTS)
				bch_fs_rw_mark_in_use(c, r->btree_id, k);
			else if (r->btree_id == BTREE_ID_ALLOC && !bch_alloc_decode(k, &a))
				bch_fs_rw_set_bucket_gen(c, (unsigned)k->k.p.inode, k->k.p.offset, a.gen);
		}
	r->filled = true;
	bulk_keys_exit(&r->keys);
}

long bch_fsck_scan_fill(struct bch_fs *c, struct fsck_state *s, unsigned btree_id,
			unsigned level, struct bpos_h min, struct bpos_h max,
			struct node_scan_use *u)
{
	struct fsck_scan *fs;
	struct scan_range *r;
	long nr;

	memset(u, 0, sizeof(*u));
	/* the callers decline first; never a scan behind the user's back */
	if (s->no_scan_nodes) {
		s->scan_declined++;
		return -1;
	}
	if (scan_run(c, s) && !s->scan->ns.nr)
		return -1;
	fs = s->scan;
	r = range_get(fs, btree_id, level, min, max);
	if (r->filled) {
		*u = r->use;
		return (long)r->use.keys;
	}
	range_read(c, fs, r);
	*u = r->use;
	if (!r->use.leaves)
		return -1;
	nr = (long)r->keys.nr;
	range_inject(c, r);
	if (nr)
		fs->nr_filled++;
	return nr;
}

/* ---- before the passes ---- */

/* Read @ptr's node and, down to level 1, its children: lost ones are ranges. */
static void probe_node(struct bch_fs *c, struct fsck_scan *fs, unsigned id,
		       const struct bkey_ref *ptr, const struct btree_node_expect *exp)
{
	struct printbuf scratch = PRINTBUF;
	struct btree_node_h *n;
	int ret = bch_btree_node_get(c, ptr, exp, &n, &scratch);

	printbuf_exit(&scratch);
	if (ret) {
		range_get(fs, id, exp->level, exp->min_key, exp->max_key);
		return;
	}
	if (n->level >= 2) {
		struct bpos_h min = n->min_key;

		for (size_t i = 0; i < n->nr_keys; i++) {
			struct btree_node_expect cexp = {
				.btree_id = id, .level = n->level - 1,
				.min_key = min, .max_key = n->keys[i].k.p, .check_min = true,
			};

			probe_node(c, fs, id, &n->keys[i], &cexp);
			min = bpos_successor(id, n->keys[i].k.p);
		}
	}
	bch_btree_node_put(c, n);
}

static bool root_required(unsigned id)
{
	return id == BTREE_ID_INODES || id == BTREE_ID_DIRENTS || id == BTREE_ID_ALLOC;
}

static void said_recovered(struct fsck_state *s, enum bch_problem p, const char *what,
			   const struct node_scan_use *u)
{
	struct printbuf t = PRINTBUF;

	bch_node_scan_use_to_text(&t, u);
	info(s, p, "%s: %s", what, printbuf_str(&t));
	printbuf_exit(&t);
}

/* No usable journal entry: every btree from the scan, a new journal. */
static int start_lost(struct bch_fs *c, struct fsck_state *s)
{
	struct fsck_scan *fs = scan_state(s);
	struct journal_state *j = &c->journal;
	struct printbuf err = PRINTBUF, what = PRINTBUF;
	uint64_t seq;
	int ret;

	if (s->no_scan_nodes) {
		s->scan_declined++;
		/* said "fixing" at open: left after all, not a failed repair */
		s->nr_fixed -= s->fixed[PROB_journal_empty];
		s->fixed[PROB_journal_empty] = 0;
		info(s, PROB_journal_empty,
		     "no btree has a root: not repaired, there is nothing to check (only the node scan can recover the btrees: run fsck without --no-scan-nodes)");
		return 1;
	}
	if (!s->fixed[PROB_journal_empty]) {
		if (s->scan_nodes)
			scan_run(c, s);
		info(s, PROB_journal_empty,
		     "no btree has a root: there is nothing to check (fsck -y recovers the btrees by scanning the devices)");
		return 1;
	}
	if (s->read_only) {
		fsck_fix_failed(s, PROB_journal_empty, "the filesystem cannot be written");
		return 1;
	}
	if (scan_run(c, s) || !fs->ns.nr) {
		fsck_fix_failed(s, PROB_journal_empty,
				"no btree node of this filesystem found on its devices: nothing to rebuild the btrees from");
		return 1;
	}
	/* after every seq seen: no bset of a node found is taken for a newer one */
	seq = max_t(uint64_t, j->max_seq_seen, fs->ns.max_journal_seq);
	bch_journal_start_fresh(j, seq);

	s->lost_btrees = (1U << BCH_NR_BTREES) - 1;
	for (unsigned id = 0; id < BCH_NR_BTREES; id++) {
		struct scan_range *r = range_get(fs, id, BTREE_ITER_MAX_DEPTH, POS_H_MIN, POS_H_MAX);

		range_read(c, fs, r);
		if (!r->use.leaves)
			continue;
		printbuf_reset(&what);
		pr_buf(&what, "btree %s: rebuilt from the node scan", bch_btree_id_str(id));
		said_recovered(s, PROB_journal_empty, printbuf_str(&what), &r->use);
		range_inject(c, r);
	}
	/* the btrees and a new journal, now: the passes check what they hold */
	ret = bch_fs_checkpoint(c, &err);
	if (ret) {
		fsck_fix_failed(s, PROB_journal_empty, printbuf_str(&err));
		printbuf_exit(&err);
		printbuf_exit(&what);
		s->read_only = true;
		return 1;
	}
	j->lost = false;
	info(s, PROB_journal_empty, "journal: a new journal starts after seq %" PRIu64, seq);
	printbuf_exit(&err);
	printbuf_exit(&what);
	return 0;
}

int bch_fsck_scan_start(struct bch_fs *c, struct fsck_state *s,
			fsck_progress_fn progress, void *priv)
{
	struct fsck_scan *fs = scan_state(s);
	bool want = s->scan_nodes, missing = false;
	struct printbuf pb = PRINTBUF;

	fs->progress = progress;
	fs->priv = priv;
	if (c->journal.lost)
		return start_lost(c, s);

	for (unsigned id = 0; id < BCH_NR_BTREES; id++) {
		const struct btree_root_h *root = &c->roots[id];
		struct btree_node_expect exp = {
			.btree_id = id, .level = root->level,
			.min_key = POS_H_MIN, .max_key = root->key.k.p, .check_min = true,
		};

		if (!root->present) {
			missing |= root_required(id);
			continue;
		}
		if (!s->read_only && root->level < BTREE_ITER_MAX_DEPTH)
			probe_node(c, fs, id, &root->key, &exp);
	}
	/* the node pass reads them again, and says what it finds */
	bch_btree_cache_exit(c);
	if (s->no_scan_nodes && (fs->nr || missing)) {
		/* before any repair: the run only reports (the node pass says what is lost) */
		s->scan_declined++;
		info(s, PROB_btree_node_unreadable,
		     "--no-scan-nodes: %zu root or interior node%s cannot be read%s: nothing is repaired in this run "
		     "(only the node scan can recover what %s; run fsck without --no-scan-nodes)",
		     fs->nr, fs->nr == 1 ? "" : "s", missing ? ", a btree has no root" : "",
		     fs->nr + missing == 1 ? "it held" : "they held");
	} else if (fs->nr || (missing && !s->read_only)) {
		want = true;
	}
	if (want) {
		scan_run(c, s);
		/* the lost ranges' keys, before any repair writes anything */
		if (!s->read_only)
			for (size_t i = 0; i < fs->nr; i++)
				range_read(c, fs, &fs->r[i]);
	}

	for (unsigned id = 0; id < BCH_NR_BTREES; id++) {
		unsigned long found = fs->ns.done ? bch_node_scan_nr(&fs->ns, id) : 0;
		struct node_scan_use u;
		long nr;

		if (c->roots[id].present || (!root_required(id) && !found))
			continue;
		s->lost_btrees |= 1U << id;
		printbuf_reset(&pb);
		if (fs->ns.done)
			pr_buf(&pb, " (%lu node%s of it found by the node scan)", found, found == 1 ? "" : "s");
		if (!fsck_fix(s, PROB_btree_root_missing, "btree %s: no root in the journal%s",
			      bch_btree_id_str(id), printbuf_str(&pb)))
			continue;
		nr = bch_fsck_scan_fill(c, s, id, BTREE_ITER_MAX_DEPTH, POS_H_MIN, POS_H_MAX, &u);
		printbuf_reset(&pb);
		pr_buf(&pb, "btree %s: rebuilt from the node scan", bch_btree_id_str(id));
		if (nr > 0) {
			said_recovered(s, PROB_btree_root_missing, printbuf_str(&pb), &u);
			/* nothing else may start the engine: its checkpoint writes them */
			bch_fs_rw_want_checkpoint(c);
		} else {
			info(s, PROB_btree_root_missing, "btree %s: no key of it found by the node scan: it stays empty",
			     bch_btree_id_str(id));
		}
	}
	printbuf_exit(&pb);
	return 0;
}
