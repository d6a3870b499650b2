// SPDX-License-Identifier: GPL-2.0
/*
 * fsck passes, read side. Opening the filesystem (fs.c) already checked
 * the superblocks and read the journal; these passes then check:
 *
 *   1. btree nodes: every node of every btree is read (checksums, magic,
 *      header against its pointer, bsets, key order, keys inside the node's
 *      range, topology between parent and children);
 *   2. keys: every live key (with the journal laid over the nodes) passes
 *      its type's value checks and comes in strictly increasing order.
 *
 * Filesystem-level checks (inodes, dirents, link counts...) and repairs
 * build on these and come after them.
 */
#include "fsck.h"

#include "bkey_types.h"
#include "btree.h"
#include "btree_update.h"
#include "errcode.h"
#include "format.h"
#include "fs.h"
#include "fsck_fs.h"
#include "problems.h"
#include "util.h"

#include <string.h>

struct fsck_pass {
	const char	*name;
	int		(*fn)(struct bch_fs *c, struct fsck_state *s);
};

/* Which problem a node reader message describes. */
static enum bch_problem node_msg_problem(const char *msg)
{
	if (strstr(msg, "checksum"))
		return PROB_btree_node_bad_csum;
	if (strstr(msg, "magic"))
		return PROB_btree_node_bad_magic;
	if (strstr(msg, "out of order"))
		return PROB_btree_keys_out_of_order;
	if (strstr(msg, "format"))
		return PROB_btree_node_bad_format;
	if (strstr(msg, "before start") || strstr(msg, "past end of btree node"))
		return PROB_btree_key_outside_node;
	if (strstr(msg, "topology") || strstr(msg, "min_key") || strstr(msg, "max_key") ||
	    strstr(msg, "max key") || strstr(msg, "min key") || strstr(msg, "gap") ||
	    strstr(msg, "overlap"))
		return PROB_btree_topology;
	if (strstr(msg, "incorrect btree id") || strstr(msg, "incorrect level"))
		return PROB_btree_node_bad_header;
	if (strstr(msg, "invalid bkey") || strstr(msg, "invalid key"))
		return PROB_btree_key_invalid;
	return PROB_btree_node_bset_invalid;
}

/* Which problem a message of bch_fs_open() describes. */
static enum bch_problem open_msg_problem(const char *msg)
{
	if (strstr(msg, "using the backup"))
		return PROB_sb_primary_bad;
	if (!strncmp(msg, "journal", 7))
		return strstr(msg, "checksum") ? PROB_journal_entry_bad_csum
					       : PROB_journal_entry_invalid;
	if (strstr(msg, "missing"))
		return PROB_sb_member_missing;
	return PROB_open_warning;
}

/*
 * Each line of @msgs becomes one reported problem: @fallback when >= 0,
 * else what @classify says the line describes.
 */
static void report_lines_as(struct fsck_state *s, struct printbuf *msgs,
			    enum bch_problem (*classify)(const char *), int fallback)
{
	char *p = msgs->buf;

	while (p && *p) {
		char *nl = strchrnul(p, '\n');
		bool last = !*nl;

		*nl = 0;
		if (*p)
			fsck_fix(s, fallback >= 0 ? (enum bch_problem)fallback : classify(p),
				 "%s", p);
		if (last)
			break;
		p = nl + 1;
	}
	printbuf_reset(msgs);
}

static void report_lines(struct fsck_state *s, struct printbuf *msgs, int fallback)
{
	report_lines_as(s, msgs, node_msg_problem, fallback);
}

void bch_fsck_report_open(struct fsck_state *s, struct printbuf *msgs)
{
	report_lines_as(s, msgs, open_msg_problem, -1);
}

struct node_walk {
	struct fsck_state	*s;
	struct printbuf		*err;
	unsigned long		nr_nodes;
};

static int check_node(void *arg, const struct btree_node_visit *v)
{
	struct node_walk *w = arg;

	w->nr_nodes++;
	if (!v->n && !w->err->pos)
		pr_buf(w->err, "btree %s level %u: node cannot be read: %s\n",
		       bch_btree_id_str(v->btree_id), v->level, bch_err_str(v->read_err));
	report_lines(w->s, w->err, v->n ? -1 : (int)PROB_btree_node_unreadable);
	return 0;
}

static int pass_btree_nodes(struct bch_fs *c, struct fsck_state *s)
{
	struct printbuf err = PRINTBUF;
	struct node_walk w = { .s = s, .err = &err };
	int ret = 0;

	for (unsigned id = 0; id < BCH_NR_BTREES && !ret; id++) {
		ret = bch_btree_walk_nodes(c, id, check_node, &w, &err);
		report_lines(s, &err, ret ? (int)PROB_btree_root_unreadable : -1);
		if (ret > 0)
			ret = 0;
		if (ret < 0) {
			fsck_fix(s, PROB_btree_root_unreadable, "btree %s: cannot be walked: %s",
				 bch_btree_id_str(id), bch_err_str(ret));
			ret = 0;
		}
	}
	printbuf_exit(&err);
	return ret;
}

static int pass_keys(struct bch_fs *c, struct fsck_state *s)
{
	struct bkey_fs_ctx ctx;
	struct printbuf err = PRINTBUF, key = PRINTBUF;
	int ret = 0;

	bch_fs_key_ctx(c, &ctx);
	ctx.bucket_gen = NULL;		/* staleness is GC's business */

	for (unsigned id = 0; id < BCH_NR_BTREES; id++) {
		struct btree_iter iter;
		struct bkey_ref *k;
		struct bpos_h prev = POS_H_MIN;
		bool first = true;

		bch_btree_iter_init(&iter, c, id, POS_H_MIN, &err);
		while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
			if (!first && bpos_cmp(k->k.p, prev) <= 0) {
				printbuf_reset(&key);
				bch_bkey_to_text(&key, id, 0, k, NULL);
				fsck_fix(s, PROB_btree_keys_out_of_order,
					 "btree %s: key out of order after %llu:%llu: %s",
					 bch_btree_id_str(id), (unsigned long long)prev.inode,
					 (unsigned long long)prev.offset, printbuf_str(&key));
			}
			if (bch_bkey_validate_fs(id, 0, k, &ctx, &key)) {
				fsck_fix(s, PROB_btree_key_invalid, "%s",
					 printbuf_str(&key));
				printbuf_reset(&key);
			}
			prev = k->k.p;
			first = false;
			bch_btree_iter_advance(&iter);
		}
		bch_btree_iter_exit(&iter);
		/* node problems were reported by the node pass */
		printbuf_reset(&err);
		if (ret < 0) {
			fsck_fix(s, PROB_btree_root_unreadable, "btree %s: keys cannot be read: %s",
				 bch_btree_id_str(id), bch_err_str(ret));
			ret = 0;
		}
	}
	printbuf_exit(&key);
	printbuf_exit(&err);
	return ret;
}

static const struct fsck_pass fsck_passes[] = {
	{ "checking btree nodes",	pass_btree_nodes },
	{ "checking keys",		pass_keys },
	{ "checking allocation (mark and sweep)", bch_fsck_gc },
	{ "checking filesystem (extents, dirents, xattrs, root, lost+found, directory structure, nlinks)", bch_fsck_fs },
};

int fsck_commit(struct fsck_state *s, enum bch_problem p, struct btree_trans *t)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_trans_commit(t, &err);

	if (ret) {
		fsck_fix_failed(s, p, printbuf_str(&err));
		if (!bch_fs_rw(t->c))
			s->read_only = true;
	}
	printbuf_exit(&err);
	return ret;
}

int bch_fsck_run(struct bch_fs *c, struct fsck_state *s,
		 fsck_progress_fn progress, void *priv)
{
	int ret = 0;

	for (unsigned i = 0; i < ARRAY_SIZE(fsck_passes) && !ret && !s->cancelled; i++) {
		if (progress)
			progress(priv, fsck_passes[i].name);
		ret = fsck_passes[i].fn(c, s);
	}
	if (progress && !ret)
		progress(priv, "fsck done");
	return ret;
}
