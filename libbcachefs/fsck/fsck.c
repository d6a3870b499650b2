// SPDX-License-Identifier: GPL-2.0
/*
 * fsck passes, read side. Opening the filesystem (fs.c) already chose a
 * good superblock per device and read the journal; before the passes,
 * fsck_scan.c deals with lost pointers to nodes (a journal with no usable
 * entry, btrees without roots, roots and interior nodes that cannot be
 * read: the node scan then runs before anything is written). The passes
 * then check:
 *
 *   0. superblocks: every other copy of each device's layout reads,
 *      validates and matches the copy in use (fsck_sb.c);
 *   1. btree nodes: every node of every btree is read (checksums, magic,
 *      header against its pointer, bsets, key order, keys inside the node's
 *      range, topology between parent and children);
 *   2. keys: every live key (with the journal laid over the nodes) passes
 *      its type's value checks and comes in strictly increasing order.
 *
 * Repairs (fsck -y), through the update engine:
 *   - a node with problems (bad checksum, invalid keys dropped, bsets
 *     ignored, topology...) that could be read is rewritten at the
 *     checkpoint (bch_fs_rw_force_rewrite()) with the keys the reader
 *     kept; a leaf's keys are also re-inserted, so that keys outside the
 *     range its parent gives it go where they belong;
 *   - a node that cannot be read as its parent says (bad magic, header
 *     naming another btree, level or range): an interior node or root
 *     gets the keys of its range from the node scan (fsck_scan.c: the
 *     newest leaves found on the devices); a leaf is salvaged: read as
 *     its header says, else with the header patched to what the parent
 *     says, and its keys re-inserted and marked in use, else it gets its
 *     keys from the scan too (the pointer did not lead to it). Its range
 *     is then rebuilt. What neither finds is lost, and said so (the alloc
 *     btree is rebuilt from the recount anyway; the scan gives its gens);
 *   - key ranges that no leaf read covers after the walk (child pointers
 *     dropped from a damaged interior node, or positions changed so that
 *     ranges do not meet) get their keys from the node scan; a btree
 *     whose damaged interior node could be read (its pointers are not
 *     trusted) and whose leaves needed nothing is rebuilt whole from the
 *     scan; when the scan gave keys, a checkpoint after this pass puts
 *     them where the iterators of the later passes find them;
 *   - an invalid key (in this filesystem's context): an extent keeps the
 *     pointers inside the member devices when what is left is valid; else
 *     the key is deleted (whiteout; for an extent a discard over its own
 *     range, never reaching the key before it);
 *   - keys out of order at the iterator: re-inserted;
 *   - journal and superblock problems found at open, and superblock
 *     copies that are bad or differ: a checkpoint (the journal's keys go
 *     into the btrees, every superblock copy is written).
 *
 * Filesystem-level checks (inodes, dirents, link counts...) and repairs
 * build on these and come after them.
 */
#include "fsck/fsck.h"

#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "btree/node.h"
#include "util/errcode.h"
#include "bkey/extents.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "dev/super.h"
#include "fs/fs.h"
#include "journal/journal.h"
#include "fsck/fsck_fs.h"
#include "fsck/fsck_gc.h"
#include "fsck/fsck_quick.h"
#include "fsck/fsck_sb.h"
#include "fsck/fsck_scan.h"
#include "fsck/problems.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdlib.h>
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
	if (strstr(msg, "no valid journal entries"))
		return PROB_journal_empty;
	if (!strncmp(msg, "journal", 7))
		return strstr(msg, "checksum") ? PROB_journal_entry_bad_csum
					       : PROB_journal_entry_invalid;
	if (strstr(msg, "missing"))
		return PROB_sb_member_missing;
	return PROB_open_warning;
}

/*
 * Each line of @msgs becomes one reported problem: @fallback when >= 0,
 * else what @classify says the line describes. Returns the number of
 * lines fsck_fix() said to fix.
 */
static unsigned report_lines_as(struct fsck_state *s, struct printbuf *msgs,
				enum bch_problem (*classify)(const char *), int fallback)
{
	char *p = msgs->buf;
	unsigned nr_fix = 0;

	while (p && *p) {
		char *nl = strchrnul(p, '\n');
		bool last = !*nl;

		*nl = 0;
		if (*p && fsck_fix(s, fallback >= 0 ? (enum bch_problem)fallback : classify(p),
				   "%s", p))
			nr_fix++;
		if (last)
			break;
		p = nl + 1;
	}
	printbuf_reset(msgs);
	return nr_fix;
}

static unsigned report_lines(struct fsck_state *s, struct printbuf *msgs, int fallback)
{
	return report_lines_as(s, msgs, node_msg_problem, fallback);
}

/* A line saying what a repair does (not a problem: not counted). */
static void fsck_info(struct fsck_state *s, enum bch_problem p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fsck_info(struct fsck_state *s, enum bch_problem p, const char *fmt, ...)
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

void bch_fsck_report_open(struct fsck_state *s, struct printbuf *msgs)
{
	report_lines_as(s, msgs, open_msg_problem, -1);
}

struct node_walk {
	struct bch_fs		*c;
	struct fsck_state	*s;
	struct printbuf		*err;
	/* messages of an ancestor read before the node visited: said at its visit */
	struct printbuf		pending[BTREE_ITER_MAX_DEPTH];
	unsigned long		nr_nodes;
	/*
	 * Where the last node visited at each level (or above: it covers the
	 * levels below) ends: the walk goes in key order at every level, so
	 * the next node of a level starts after it.
	 */
	struct bpos_h		end[BTREE_ITER_MAX_DEPTH];
	bool			have_end[BTREE_ITER_MAX_DEPTH];
	/*
	 * The key ranges the walk found a home for: every leaf read (its own
	 * range), every node that could not be read (its range, whatever
	 * became of its keys). What is in none of them after the walk was in
	 * nodes whose pointers are lost (fill_gaps()).
	 */
	struct walk_range { struct bpos_h min, max; } *cov;
	size_t			nr_cov, size_cov;
	/* repaired nodes of the btree walked that could be read: interior, leaves (salvaged too) */
	unsigned long		nr_inner_repaired, nr_leaves_repaired;
};

static void cov_add(struct node_walk *w, struct bpos_h min, struct bpos_h max)
{
	if (w->nr_cov == w->size_cov) {
		w->size_cov = w->size_cov ? 2 * w->size_cov : 256;
		w->cov = xrealloc(w->cov, w->size_cov * sizeof(*w->cov));
	}
	w->cov[w->nr_cov++] = (struct walk_range) { min, max };
}

static size_t node_salvage(struct node_walk *w, const struct btree_node_visit *v,
			   struct bpos_h min, bool *partial);
static void salvage_keys(struct fsck_state *s, struct bch_fs *c, unsigned id,
			 const struct btree_node_h *n, struct btree_trans *t, unsigned depth);
static const char *key_repair(struct bch_fs *c, unsigned id, const struct bkey_ref *k,
			      struct bpos_h prev, bool have_prev, const struct bkey_fs_ctx *ctx,
			      struct btree_trans *t);

/*
 * A readable node that is rewritten: the rewrite keeps only the keys
 * inside the range its parent gives it, so a leaf's keys are re-inserted
 * through the overlay (those outside go where they belong). An interior
 * node whose last child pointer does not end at the node's end (pointers
 * after it were lost): that child's range grows to the end, so its keys
 * are re-inserted and it is rebuilt over the new range.
 */
static void node_keep_keys(struct node_walk *w, const struct btree_node_visit *v,
			   struct bpos_h max)
{
	struct bch_fs *c = w->c;
	const struct btree_node_h *n = v->n;
	struct btree_trans t;

	if (w->s->read_only || !bch_fs_rw(c) || !n->nr_keys)
		return;
	bch_trans_init(&t, c);
	if (!v->level) {
		salvage_keys(w->s, c, v->btree_id, n, &t, 0);
	} else if (bpos_cmp(n->keys[n->nr_keys - 1].k.p, max)) {
		const struct bkey_ref *last = &n->keys[n->nr_keys - 1];
		struct btree_node_expect exp = {
			.btree_id = v->btree_id, .level = v->level - 1,
			.min_key = n->nr_keys > 1 ? bpos_successor(v->btree_id, n->keys[n->nr_keys - 2].k.p)
						  : n->min_key,
			.max_key = last->k.p,
		};
		struct btree_node_h *child;
		struct printbuf scratch = PRINTBUF;

		if (!bch_btree_node_get(c, last, &exp, &child, &scratch)) {
			salvage_keys(w->s, c, v->btree_id, child, &t, 0);
			bch_btree_node_put(c, child);
		}
		printbuf_exit(&scratch);
		bch_fs_rw_force_rewrite(c, v->btree_id, v->level - 1, max);
	}
	if (t.nr)
		fsck_commit(w->s, PROB_btree_node_bset_invalid, &t);
	bch_trans_exit(&t);
}

/*
 * Repair of a node with problems: the node is rewritten at the checkpoint
 * (bch_fs_rw_force_rewrite()) with the keys the reader could use (it
 * dropped invalid keys and ignored what it could not parse; bsets with bad
 * checksums are used when no copy verifies). A node that cannot be read
 * as its parent says is salvaged if it can be (node_salvage()), else
 * rebuilt empty over its range: what it held is lost and said so (the
 * filesystem passes then see what is missing: unreachable inodes go to
 * lost+found...). The alloc btree is rebuilt from the allocation recount
 * at every checkpoint.
 */
/*
 * A node that cannot be read, at @level over [@min, @max]. Interior nodes
 * and roots: the keys of their range come from the node scan (the newest
 * leaves found on the devices), else from salvage. Leaves: salvage first
 * (the node at the pointer, read despite its header: the leaf itself,
 * damaged), then the scan (the pointer did not lead to it, or the leaf's
 * header says less than the pointer's range: under the salvaged keys). The alloc
 * btree is rebuilt from the allocation recount; the gens of its keys come
 * from the scan when it ran. The range is rebuilt at the checkpoint.
 */
static void node_lost_repair(struct node_walk *w, const struct btree_node_visit *v,
			     struct bpos_h min, struct bpos_h max)
{
	const char *btree = bch_btree_id_str(v->btree_id);
	bool root = v->level == v->root_level, alloc = v->btree_id == BTREE_ID_ALLOC;
	struct printbuf what = PRINTBUF, used = PRINTBUF;
	struct node_scan_use u;
	size_t salvaged = 0;
	bool partial = false;
	long got = -1;

	if (root)
		pr_buf(&what, "btree %s: root (level %u) unreadable", btree, v->level);
	else
		pr_buf(&what, "btree %s level %u node at %llu:%llu: unreadable", btree, v->level,
		       (unsigned long long)max.inode, (unsigned long long)max.offset);

	/* before the rewrite is asked for (it starts the engine): gens, marks */
	if (alloc ? bch_fsck_scan_ran(w->s) : v->level > 0)
		got = bch_fsck_scan_fill(w->c, w->s, v->btree_id, v->level, min, max, &u);
	if (got < 0 && !alloc)
		salvaged = node_salvage(w, v, min, &partial);
	/*
	 * a leaf not salvaged, or salvaged from a header that says a narrower
	 * range than its pointer (the pointer is what is damaged: the rest of
	 * the range held keys of its neighbours, which the rewrite of the range
	 * would drop): the keys of the range from the scan, laid under the
	 * salvaged ones
	 */
	if (got < 0 && !alloc && !v->level && (!salvaged || partial))
		got = bch_fsck_scan_fill(w->c, w->s, v->btree_id, v->level, min, max, &u);
	bch_fs_rw_force_rewrite(w->c, v->btree_id, v->level, max);
	if (got >= 0)
		bch_node_scan_use_to_text(&used, &u);

	if (alloc)
		fsck_info(w->s, PROB_btree_node_unreadable,
			  "%s: the alloc btree is rebuilt from the allocation recount%s%s%s",
			  printbuf_str(&what), got >= 0 ? "; bucket gens from the node scan: " : "",
			  printbuf_str(&used), "");
	else if (salvaged && ++w->nr_leaves_repaired)
		fsck_info(w->s, PROB_btree_node_unreadable,
			  "%s: salvaged (read despite its header): %zu keys re-inserted%s%s, its range rewritten",
			  printbuf_str(&what), salvaged,
			  got >= 0 ? "; under them, its range from the node scan: " : "",
			  printbuf_str(&used));
	else if (got > 0)
		fsck_info(w->s, PROB_btree_node_unreadable,
			  "%s: recovered from the node scan: %s; %s",
			  printbuf_str(&what), printbuf_str(&used),
			  root ? "the btree is rebuilt" : "its range is rebuilt");
	else if (got == 0 && u.unreadable)
		fsck_info(w->s, PROB_btree_node_unreadable,
			  "%s: the node scan found %lu lea%s of its range, but %s cannot be read either: its keys are lost, %s (plus the journal's keys)",
			  printbuf_str(&what), u.leaves, u.leaves == 1 ? "f" : "ves",
			  u.leaves == 1 ? "it" : "they", root ? "the btree is rebuilt empty" : "its range is rebuilt empty");
	else if (got == 0)
		fsck_info(w->s, PROB_btree_node_unreadable,
			  "%s: recovered from the node scan: its range is empty (%lu lea%s found); %s",
			  printbuf_str(&what), u.leaves, u.leaves == 1 ? "f" : "ves",
			  root ? "the btree is rebuilt" : "its range is rebuilt");
	else if (root)
		fsck_info(w->s, PROB_btree_root_unreadable,
			  "%s: every key of the btree is lost (the node scan found none), it is rebuilt empty (plus the journal's keys)",
			  printbuf_str(&what));
	else
		fsck_info(w->s, PROB_btree_node_unreadable,
			  "%s: its keys%s are lost (the node scan found none), its range is rebuilt empty (plus the journal's keys)",
			  printbuf_str(&what), v->level ? " and the nodes below it" : "");
	printbuf_exit(&what);
	printbuf_exit(&used);
}

/*
 * Repair of a node with problems: the node is rewritten at the checkpoint
 * (bch_fs_rw_force_rewrite()) with the keys the reader could use (it
 * dropped invalid keys and ignored what it could not parse; bsets with bad
 * checksums are used when no copy verifies). A node that cannot be read
 * as its parent says: node_lost_repair(). The filesystem passes then see
 * what is missing (unreachable inodes go to lost+found...).
 */
static void node_repair(struct node_walk *w, const struct btree_node_visit *v, struct bpos_h min)
{
	struct bpos_h max = v->level == v->root_level || !v->ptr ? POS_H_MAX : v->ptr->k.p;
	const char *btree = bch_btree_id_str(v->btree_id);

	if (!v->n) {
		node_lost_repair(w, v, v->level == v->root_level ? POS_H_MIN : min, max);
		return;
	}
	if (v->level)
		w->nr_inner_repaired++;
	else
		w->nr_leaves_repaired++;
	bch_fs_rw_force_rewrite(w->c, v->btree_id, v->level, max);
	if (v->level && !v->n->nr_keys)
		fsck_info(w->s, PROB_btree_node_bset_invalid,
			  "btree %s level %u node at %llu:%llu: no child pointer left: its range is rebuilt from what the node scan finds of it (below) and the journal's keys",
			  btree, v->level, (unsigned long long)max.inode, (unsigned long long)max.offset);
	else {
		node_keep_keys(w, v, max);
		fsck_info(w->s, PROB_btree_node_bset_invalid,
			  "btree %s level %u node at %llu:%llu: rewritten with the keys that could be used",
			  btree, v->level, (unsigned long long)max.inode, (unsigned long long)max.offset);
	}
}

static struct bpos_h hdr_bpos(const uint8_t *p)
{
	return (struct bpos_h) {
		.snapshot	= get_le32_unaligned(p),
		.offset		= get_le64_unaligned(p + 4),
		.inode		= get_le64_unaligned(p + 12),
	};
}

static void put_le64(uint8_t *p, uint64_t v)
{
	uint64_t le = cpu_to_le64(v);

	memcpy(p, &le, 8);
}

static void hdr_set_bpos(uint8_t *p, struct bpos_h pos)
{
	uint32_t snap = cpu_to_le32(pos.snapshot);

	memcpy(p, &snap, 4);
	put_le64(p + 4, pos.offset);
	put_le64(p + 12, pos.inode);
}

/*
 * Parse copy @p of node @v, whose range is [@min, @max]: as its header
 * says (a node of another range is not it: the pointer led elsewhere), or
 * (@patch) as its parent says.
 */
static struct btree_node_h *node_salvage_read(struct bch_fs *c, const struct btree_node_visit *v,
					      const struct btree_ptr_h *p, bool patch,
					      struct bpos_h min)
{
	size_t bytes = (size_t)c->btree_node_size * 512;
	uint8_t *d = xmalloc(bytes);
	struct btree_node_ctx ctx;
	struct btree_node_expect exp = { .btree_id = v->btree_id, .level = v->level };
	struct btree_node_h *n = NULL;
	struct printbuf scratch = PRINTBUF;
	uint64_t flags;

	if (bch_dev_read(c, p->dev, d, bytes, p->offset)) {
		free(d);
		return NULL;
	}
	flags = get_le64_unaligned(d + offsetof(struct btree_node, flags));
	exp.min_key = hdr_bpos(d + offsetof(struct btree_node, min_key));
	exp.max_key = hdr_bpos(d + offsetof(struct btree_node, max_key));
	if (patch) {
		/* BTREE_NODE_ID (bits 0-3), BTREE_NODE_LEVEL (4-7) */
		flags = (flags & ~0xffULL) | (v->btree_id & 0xf) | ((v->level & 0xf) << 4);
		put_le64(d + offsetof(struct btree_node, flags), flags);
		exp.max_key = v->ptr->k.p;
		exp.min_key = min;
		if (bpos_cmp(exp.min_key, exp.max_key) > 0)
			exp.min_key = POS_H_MIN;
		hdr_set_bpos(d + offsetof(struct btree_node, min_key), exp.min_key);
		hdr_set_bpos(d + offsetof(struct btree_node, max_key), exp.max_key);
	} else if ((flags & 0xf) != v->btree_id || ((flags >> 4) & 0xf) != v->level ||
		   bpos_cmp(exp.min_key, v->ptr->k.p) > 0 || bpos_cmp(exp.max_key, min) < 0) {
		free(d);
		return NULL;
	}
	btree_node_ctx_init(&ctx, c);
	if (patch)
		put_le64(d + offsetof(struct btree_node, magic), ctx.magic);
	if (btree_node_parse(&ctx, &exp, d, bytes, "salvage", &n, &scratch))	/* takes @d */
		n = NULL;
	printbuf_exit(&scratch);
	return n;
}

/*
 * The leaf keys of node @n (its subtree for an interior node: children
 * that cannot be read are lost) into @t.
 */
static void salvage_keys(struct fsck_state *s, struct bch_fs *c, unsigned id,
			 const struct btree_node_h *n, struct btree_trans *t, unsigned depth)
{
	struct bpos_h cmin = n->min_key;
	struct bkey_fs_ctx ctx;
	struct printbuf why = PRINTBUF;

	bch_fs_key_ctx(c, &ctx);
	ctx.bucket_gen = NULL;		/* staleness is GC's business */

	for (size_t k = 0; k < n->nr_keys; k++) {
		const struct bkey_ref *ck = &n->keys[k];

		if (!n->level) {
			if (bkey_is_whiteout(&ck->k))
				continue;
			printbuf_reset(&why);
			if (bch_bkey_validate_fs(id, 0, ck, &ctx, &why)) {
				/* a transaction takes only valid keys: the key's repair instead */
				struct btree_trans rt;
				const char *what;

				bch_trans_init(&rt, c);
				what = key_repair(c, id, ck, POS_H_MIN, false, &ctx, &rt);
				if (fsck_fix(s, PROB_btree_key_invalid, "%s (%s)", printbuf_str(&why), what))
					for (size_t i = 0; i < rt.nr; i++) {
						bch_fs_rw_mark_in_use(c, id, &rt.u[i].k);
						bch_trans_update(t, rt.u[i].btree_id, &rt.u[i].k.k,
								 rt.u[i].k.v, rt.u[i].k.v_bytes);
					}
				bch_trans_exit(&rt);
				continue;
			}
			/* its node may not have been readable at start: its space is in use */
			bch_fs_rw_mark_in_use(c, id, ck);
			bch_trans_update(t, id, &ck->k, ck->v, ck->v_bytes);
		} else if (depth < BTREE_ITER_MAX_DEPTH) {
			struct btree_node_expect exp = {
				.btree_id = id, .level = n->level - 1,
				.min_key = cmin, .max_key = ck->k.p,
			};
			struct btree_node_h *child;
			struct printbuf scratch = PRINTBUF;

			if (!bch_btree_node_get(c, ck, &exp, &child, &scratch)) {
				salvage_keys(s, c, id, child, t, depth + 1);
				bch_btree_node_put(c, child);
			}
			printbuf_exit(&scratch);
		}
		cmin = bpos_successor(id, ck->k.p);
	}
	printbuf_exit(&why);
}

/*
 * A node its parent's pointer cannot read (its header says another range
 * or btree): read it as its header says, else with its header patched to
 * what the parent says (btree id, magic, range; the bset checksums then
 * fail: the keys are used anyway, each one validated), and re-insert its keys through a
 * transaction, so the rewrite of its range keeps them (keys outside the
 * range go where they belong). Not for encrypted filesystems (the header
 * is encrypted). Returns the keys re-inserted; *@partial says whether the
 * node used covers less than [@min, the pointer's key].
 */
static size_t node_salvage(struct node_walk *w, const struct btree_node_visit *v,
			   struct bpos_h min, bool *partial)
{
	struct bch_fs *c = w->c;
	struct btree_ptr_h p[BCH_REPLICAS_MAX];
	int nr = v->ptr ? btree_ptr_decode(v->ptr, p, BCH_REPLICAS_MAX) : -1;
	size_t salvaged = 0;

	if (c->encrypted || w->s->read_only || !bch_fs_rw(c))
		return 0;
	for (unsigned patch = 0; patch < 2 && !salvaged; patch++)
		for (int i = 0; i < nr && !salvaged; i++) {
			struct btree_node_h *n;
			struct btree_trans t;

			if (p[i].dev >= BCH_FS_MAX_DEVS || !c->devs[p[i].dev] ||
			    !(n = node_salvage_read(c, v, &p[i], patch, min)))
				continue;
			bch_trans_init(&t, c);
			salvage_keys(w->s, c, v->btree_id, n, &t, 0);
			salvaged = t.nr;
			if (salvaged && fsck_commit(w->s, PROB_btree_node_unreadable, &t))
				salvaged = 0;
			*partial = bpos_cmp(n->min_key, min) > 0 ||
				bpos_cmp(n->max_key, v->ptr->k.p) < 0;
			bch_trans_exit(&t);
			btree_node_free(n);
		}
	return salvaged;
}

/* The level a node reader message names ("... level L, key ..."), or -1. */
static int msg_level(const char *line)
{
	const char *p = strstr(line, " level ");
	char *end;
	unsigned long l;

	if (!p)
		return -1;
	l = strtoul(p + 7, &end, 10);
	return end == p + 7 || l >= BTREE_ITER_MAX_DEPTH ? -1 : (int)l;
}

/*
 * Keep in @w->err the lines about the node visited at @level, with those
 * stashed for it before; lines about an ancestor (read before its
 * children, visited after them) are stashed for its visit.
 */
static void sort_node_msgs(struct node_walk *w, unsigned level)
{
	struct printbuf mine = PRINTBUF;
	char *p = w->err->buf;

	if (level < BTREE_ITER_MAX_DEPTH && w->pending[level].pos) {
		pr_str(&mine, printbuf_str(&w->pending[level]));
		printbuf_reset(&w->pending[level]);
	}
	while (p && *p) {
		char *nl = strchrnul(p, '\n');
		bool last = !*nl;
		int l;

		*nl = 0;
		l = msg_level(p);
		if (l > (int)level)
			pr_buf(&w->pending[l], "%s\n", p);
		else if (*p)
			pr_buf(&mine, "%s\n", p);
		if (last)
			break;
		p = nl + 1;
	}
	printbuf_reset(w->err);
	pr_str(w->err, printbuf_str(&mine));
	printbuf_exit(&mine);
}

static int check_node(void *arg, const struct btree_node_visit *v)
{
	struct node_walk *w = arg;
	int fallback = -1;
	struct bpos_h min = POS_H_MIN;

	w->nr_nodes++;
	if (v->level < BTREE_ITER_MAX_DEPTH) {
		if (w->have_end[v->level])
			min = bpos_successor(v->btree_id, w->end[v->level]);
		for (unsigned l = 0; l <= v->level; l++) {
			w->end[l] = v->ptr ? v->ptr->k.p : POS_H_MAX;
			w->have_end[l] = true;
		}
	}
	sort_node_msgs(w, v->level);
	if (!v->n && !w->err->pos)
		pr_buf(w->err, "btree %s level %u: node cannot be read: %s\n",
		       bch_btree_id_str(v->btree_id), v->level, bch_err_str(v->read_err));
	if (!v->n) {
		fallback = v->level == v->root_level ? (int)PROB_btree_root_unreadable
						     : (int)PROB_btree_node_unreadable;
		w->s->lost_btrees |= 1U << v->btree_id;
		/* its repair may need the scan (a leaf's salvage falls back to it too) */
		if (w->s->no_scan_nodes)
			w->s->scan_declined++;
	}
	if (!v->n)
		cov_add(w, v->level == v->root_level ? POS_H_MIN : min,
			v->level == v->root_level || !v->ptr ? POS_H_MAX : v->ptr->k.p);
	else if (!v->level)
		cov_add(w, v->n->min_key, v->n->max_key);
	if (report_lines(w->s, w->err, fallback))
		node_repair(w, v, min);
	return 0;
}

static int walk_range_cmp(const void *_a, const void *_b)
{
	const struct walk_range *a = _a, *b = _b;

	return bpos_cmp(a->min, b->min);
}

/* The position before @p in a btree other than extents (the inverse of bpos_successor()). */
static struct bpos_h bpos_before(struct bpos_h p)
{
	if (p.offset)
		p.offset--;
	else {
		p.inode--;
		p.offset = UINT64_MAX;
	}
	p.snapshot = 0;
	return p;
}

/*
 * After the walk of btree @id: key ranges that no leaf read and no lost
 * node covers were under child pointers that are gone (an interior node
 * that lost some, a pointer whose position was damaged, so that its
 * neighbour's range does not start where it should). Their keys are in
 * leaves the node scan finds; the checkpoint puts them into the leaves
 * whose ranges hold them now.
 */
static void fill_gaps(struct node_walk *w, unsigned id)
{
	struct bch_fs *c = w->c;
	bool extents = id == BTREE_ID_EXTENTS;
	struct bpos_h cur = POS_H_MIN;
	bool done = false;
	struct printbuf a = PRINTBUF, b = PRINTBUF, used = PRINTBUF;

	if (!c->roots[id].present || !w->nr_cov)
		return;
	qsort(w->cov, w->nr_cov, sizeof(*w->cov), walk_range_cmp);
	for (size_t i = 0; i <= w->nr_cov && !done; i++) {
		bool last = i == w->nr_cov;
		struct bpos_h next = last ? POS_H_MAX : w->cov[i].min;
		struct bpos_h gmax;
		struct node_scan_use u;
		long got;

		if (last ? bpos_eq(cur, POS_H_MAX) && i : bpos_cmp(next, cur) <= 0)
			goto next;
		/* [cur, next) is in no node (the last: [cur, POS_MAX]) */
		gmax = last || extents ? next : bpos_before(next);
		w->s->lost_btrees |= 1U << id;
		if (w->s->no_scan_nodes)
			w->s->scan_declined++;
		printbuf_reset(&a);
		printbuf_reset(&b);
		bch_bpos_to_text(&a, cur);
		bch_bpos_to_text(&b, gmax);
		if (!fsck_fix(w->s, PROB_btree_topology,
			      "btree %s: keys %s to %s are in no node (the pointers to the nodes that held them are lost)",
			      bch_btree_id_str(id), printbuf_str(&a), printbuf_str(&b)))
			goto next;
		got = id == BTREE_ID_ALLOC && !bch_fsck_scan_ran(w->s) ? -1
			: bch_fsck_scan_fill(c, w->s, id, 0, cur, gmax, &u);
		printbuf_reset(&used);
		if (got >= 0)
			bch_node_scan_use_to_text(&used, &u);
		if (id == BTREE_ID_ALLOC)
			fsck_info(w->s, PROB_btree_topology,
				  "btree alloc: keys %s to %s: the alloc btree is rebuilt from the allocation recount%s%s",
				  printbuf_str(&a), printbuf_str(&b),
				  got >= 0 ? "; bucket gens from the node scan: " : "", printbuf_str(&used));
		else if (got > 0)
			fsck_info(w->s, PROB_btree_topology,
				  "btree %s: keys %s to %s: recovered from the node scan: %s",
				  bch_btree_id_str(id), printbuf_str(&a), printbuf_str(&b), printbuf_str(&used));
		else
			fsck_info(w->s, PROB_btree_topology,
				  "btree %s: keys %s to %s: the node scan found none of them: the range stays empty",
				  bch_btree_id_str(id), printbuf_str(&a), printbuf_str(&b));
next:
		if (last)
			break;
		if (bpos_cmp(w->cov[i].max, cur) >= 0) {
			if (bpos_eq(w->cov[i].max, POS_H_MAX))
				done = true;
			else
				cur = bpos_successor(id, w->cov[i].max);
		}
	}
	printbuf_exit(&a);
	printbuf_exit(&b);
	printbuf_exit(&used);
}

/*
 * A btree with an interior node that was read but had to be repaired (its
 * child pointers are suspect: positions and offsets may be damaged, so
 * that a pointer leads to an older copy of a node, or ranges do not meet)
 * and whose leaves needed nothing: the leaves are the newest the node
 * scan finds, and rewriting the damaged tree in place would go through
 * those pointers again. The whole btree is rebuilt from the scan instead:
 * its keys laid over it, its root dropped, and the checkpoint after the
 * node pass builds it from the keys alone. (The old nodes are not
 * reachable any more; their buckets are free at the next open.)
 */
static void rebuild_whole(struct node_walk *w, unsigned id)
{
	struct bch_fs *c = w->c;
	struct printbuf used = PRINTBUF;
	struct node_scan_use u;
	long got;

	if (!w->nr_inner_repaired || w->nr_leaves_repaired || id == BTREE_ID_ALLOC ||
	    !c->roots[id].present || w->s->read_only || w->s->no_scan_nodes || !bch_fs_rw(c))
		return;
	got = bch_fsck_scan_fill(c, w->s, id, BTREE_ITER_MAX_DEPTH, POS_H_MIN, POS_H_MAX, &u);
	if (got <= 0)
		return;
	c->roots[id].present = false;
	bch_node_scan_use_to_text(&used, &u);
	fsck_info(w->s, PROB_btree_node_bset_invalid,
		  "btree %s: interior nodes damaged (their pointers are not trusted): the whole btree is rebuilt from the node scan: %s",
		  bch_btree_id_str(id), printbuf_str(&used));
	printbuf_exit(&used);
}

static int pass_btree_nodes(struct bch_fs *c, struct fsck_state *s)
{
	struct printbuf err = PRINTBUF;
	struct node_walk w = { .c = c, .s = s, .err = &err };
	unsigned long fixed = (unsigned long)-1;	/* s->nr_fixed at the last drop */
	int ret = 0;

	for (unsigned l = 0; l < BTREE_ITER_MAX_DEPTH; l++)
		w.pending[l] = PRINTBUF;

	for (unsigned id = 0; id < BCH_NR_BTREES && !ret; id++) {
		/*
		 * Nodes read by bch_fs_rw_start(), or by the commits of the
		 * repairs of the btrees before this one, are cached and their
		 * problems were said there (to no one): read them again so
		 * that they are reported.
		 */
		if (c->rw && fixed != s->nr_fixed)
			bch_btree_cache_exit(c);
		fixed = s->nr_fixed;
		memset(w.have_end, 0, sizeof(w.have_end));
		w.nr_cov = 0;
		w.nr_inner_repaired = w.nr_leaves_repaired = 0;
		ret = bch_btree_walk_nodes(c, id, check_node, &w, &err);
		/* stashed lines whose node was never visited */
		for (unsigned l = 0; l < BTREE_ITER_MAX_DEPTH; l++) {
			pr_str(&err, printbuf_str(&w.pending[l]));
			printbuf_reset(&w.pending[l]);
		}
		/* what the walk could not give a node for: the root */
		if (ret && s->no_scan_nodes)
			s->scan_declined++;
		if (report_lines(s, &err, ret ? (int)PROB_btree_root_unreadable : -1) &&
		    c->roots[id].present && c->roots[id].level < BTREE_ITER_MAX_DEPTH) {
			struct btree_node_visit v = {
				.btree_id = id, .level = c->roots[id].level,
				.root_level = c->roots[id].level,
			};

			node_repair(&w, &v, POS_H_MIN);
		}
		if (ret > 0)
			ret = 0;
		if (!ret) {
			fill_gaps(&w, id);
			rebuild_whole(&w, id);
		}
		if (ret < 0) {
			if (s->no_scan_nodes)
				s->scan_declined++;
			if (fsck_fix(s, PROB_btree_root_unreadable, "btree %s: cannot be walked: %s",
				     bch_btree_id_str(id), bch_err_str(ret)) &&
			    c->roots[id].present && c->roots[id].level < BTREE_ITER_MAX_DEPTH) {
				struct btree_node_visit v = {
					.btree_id = id, .level = c->roots[id].level,
					.root_level = c->roots[id].level,
				};

				node_repair(&w, &v, POS_H_MIN);
			}
			ret = 0;
		}
	}
	/*
	 * Keys from the node scan are laid over ranges whose nodes the
	 * iterators may not reach (a child pointer gone, a range that does
	 * not start where its parent says): the rebuilt btrees go to disk
	 * now, so that the passes that follow read the keys where they are.
	 */
	if (!ret && bch_fsck_scan_nr_filled(s) && !s->read_only && bch_fs_rw(c)) {
		printbuf_reset(&err);
		if (bch_fs_checkpoint(c, &err)) {
			fsck_fix_failed(s, PROB_btree_node_unreadable, printbuf_str(&err));
			s->read_only = true;
		}
	}
	for (unsigned l = 0; l < BTREE_ITER_MAX_DEPTH; l++)
		printbuf_exit(&w.pending[l]);
	free(w.cov);
	printbuf_exit(&err);
	return ret;
}

/*
 * Repair of key @k that fails its checks in this filesystem, into @t: an
 * extent keeps the pointers that are on a member device and inside it
 * (when what is left is valid), else the key is deleted: a whiteout at its
 * position, for an extent a discard over its own range, which starts no
 * earlier than the end of the key before it (@prev) so that no valid
 * neighbour is cut. Returns what is done, for the message.
 */
static const char *key_repair(struct bch_fs *c, unsigned id, const struct bkey_ref *k,
			      struct bpos_h prev, bool have_prev, const struct bkey_fs_ctx *ctx,
			      struct btree_trans *t)
{
	if (id == BTREE_ID_EXTENTS && (k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED) &&
	    k->v && k->v_bytes) {
		struct extent_entry_iter it;
		struct extent_entry_h e;
		uint64_t *v = xcalloc(k->v_bytes / 8 + 1, 8);
		unsigned bytes = 0, kept = 0, dropped = 0;
		int crc_off = -1, crc_bytes = 0, r;
		struct bkey_ref nk = *k;
		struct printbuf why = PRINTBUF;

		extent_entry_iter_init(&it, k);
		while ((r = extent_entry_iter_next(&it, &e)) > 0) {
			struct bch_dev_geom g;
			uint64_t sectors;

			if (e.type != BCH_EXTENT_ENTRY_ptr) {
				crc_off = (int)e.offset;
				crc_bytes = (int)e.u64s * 8;
				continue;
			}
			sectors = crc_off >= 0 && e.crc.compressed_size ? e.crc.compressed_size : k->k.size;
			if (!ctx->dev_geom || !ctx->dev_geom(ctx->priv, e.ptr.dev, &g) ||
			    e.ptr.offset < (uint64_t)g.first_bucket * g.bucket_size ||
			    e.ptr.offset >= g.nbuckets * g.bucket_size ||
			    sectors > g.nbuckets * g.bucket_size - e.ptr.offset) {
				dropped++;
				continue;
			}
			if (crc_off >= 0) {
				memcpy((uint8_t *)v + bytes, (const uint8_t *)k->v + crc_off, (size_t)crc_bytes);
				bytes += (unsigned)crc_bytes;
				crc_off = -1;
			}
			memcpy((uint8_t *)v + bytes, (const uint8_t *)k->v + e.offset, 8);
			bytes += 8;
			kept++;
		}
		nk.v = v;
		nk.v_bytes = bytes;
		nk.k.u64s = (uint8_t)(BKEY_U64S_UNPACKED + bytes / 8);
		if (!r && dropped && kept && !bch_bkey_validate_fs(id, 0, &nk, ctx, &why)) {
			bch_trans_update(t, id, &k->k, v, bytes);
			printbuf_exit(&why);
			free(v);
			return dropped > 1 ? "dropping the pointers outside the devices"
					   : "dropping the pointer outside the devices";
		}
		printbuf_exit(&why);
		free(v);
	}
	if (id == BTREE_ID_EXTENTS && k->k.size) {
		uint64_t start = k->k.p.offset - k->k.size;

		if (have_prev && prev.inode == k->k.p.inode && prev.offset > start)
			start = prev.offset;
		if (start < k->k.p.offset)
			bch_trans_delete_extents(t, k->k.p.inode, start, k->k.p.offset);
		return "deleting the extent";
	}
	bch_trans_delete(t, id, k->k.p);
	return "deleting the key";
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
				if (fsck_fix(s, PROB_btree_keys_out_of_order,
					     "btree %s: key out of order after %llu:%llu: %s (re-inserting it where it belongs)",
					     bch_btree_id_str(id), (unsigned long long)prev.inode,
					     (unsigned long long)prev.offset, printbuf_str(&key))) {
					struct btree_trans t;

					bch_trans_init(&t, c);
					bch_trans_update(&t, id, &k->k, k->v, k->v_bytes);
					fsck_commit(s, PROB_btree_keys_out_of_order, &t);
					bch_trans_exit(&t);
				}
			}
			if (bch_bkey_validate_fs(id, 0, k, &ctx, &key)) {
				struct btree_trans t;
				const char *what;

				bch_trans_init(&t, c);
				what = key_repair(c, id, k, prev, !first, &ctx, &t);
				if (fsck_fix(s, PROB_btree_key_invalid, "%s (%s)", printbuf_str(&key), what))
					fsck_commit(s, PROB_btree_key_invalid, &t);
				bch_trans_exit(&t);
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
	{ "checking superblocks",	bch_fsck_sb },
	{ "checking btree nodes",	pass_btree_nodes },
	{ "checking keys",		pass_keys },
	{ "checking allocation (mark and sweep)", bch_fsck_gc },
	{ "checking filesystem (extents, dirents, xattrs, root, lost+found, directory structure, nlinks)", bch_fsck_fs },
};

/*
 * Problems found at open and said to be fixed (bch_fsck_report_open() runs
 * before the engine starts): the repair is a checkpoint, which puts what
 * the journal said into the btrees, starts the journal afresh past the
 * bad entries, and writes every superblock copy (a bad primary or backup
 * is rewritten). Without a writable engine they are left.
 */
static void open_repairs(struct bch_fs *c, struct fsck_state *s)
{
	static const enum bch_problem open_probs[] = {
		PROB_journal_entry_bad_csum, PROB_journal_entry_invalid,
		PROB_journal_entries_missing, PROB_journal_key_invalid,
		PROB_sb_primary_bad, PROB_sb_backup_bad,
	};

	for (unsigned i = 0; i < ARRAY_SIZE(open_probs); i++) {
		enum bch_problem p = open_probs[i];

		if (!s->fixed[p])
			continue;
		/* a checkpoint would go through the lost nodes --no-scan-nodes leaves */
		if (s->scan_declined) {
			s->nr_fixed -= s->fixed[p];
			s->fixed[p] = 0;
			fsck_info(s, p, "%s (id %u): not repaired (--no-scan-nodes: nothing is repaired while nodes are lost)",
				  bch_problems[p].name, bch_problems[p].id);
			continue;
		}
		if (bch_fs_rw(c)) {
			bch_fs_rw_want_checkpoint(c);
			continue;
		}
		for (unsigned long n = s->fixed[p]; n; n--)
			fsck_fix_failed(s, p, "the filesystem cannot be written");
	}
}

bool bch_fsck_marked_clean(const struct bch_fs *c)
{
	const struct journal_state *j = &c->journal;

	if (!c->sb || !BCH_SB_INITIALIZED(c->sb) || !BCH_SB_CLEAN(c->sb) || c->nr_errors)
		return false;
	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
		if (bch_sb_member_exists(c->sb, i) && (!c->devs[i] || !c->devs[i]->io))
			return false;
	if (!j->read_done || j->lost || j->nr_errors || j->nr_keys ||
	    j->nr_entries != 1 || j->last_seq != j->seq || c->overlay.nr_keys)
		return false;
	for (unsigned i = 0; i < BCH_NR_BTREES; i++)
		if (c->roots[i].present && c->roots[i].level >= BTREE_ITER_MAX_DEPTH)
			return false;
	return true;
}

/*
 * After the superblocks: the quick check (fsck_quick.c), when nothing was
 * found so far and no node scan ran. True when it proved the filesystem
 * clean: the passes that follow would find nothing.
 */
static bool quick_check(struct bch_fs *c, struct fsck_state *s,
			fsck_progress_fn progress, void *priv)
{
	struct printbuf why = PRINTBUF;
	bool ok;

	if (s->nr_seen || s->scan_nodes || s->scan_declined || bch_fsck_scan_ran(s) ||
	    c->journal.lost || c->nr_errors)
		return false;
	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
		if (bch_sb_member_exists(c->sb, i) && (!c->devs[i] || !c->devs[i]->io))
			return false;	/* degraded: the passes say what they skip */
	if (progress)
		progress(priv, "quick check (each btree read once)");
	ok = bch_fsck_quick(c, &why);
	if (progress) {
		struct printbuf msg = PRINTBUF;

		if (ok)
			pr_str(&msg, "quick check: nothing to report, the passes are not needed");
		else
			pr_buf(&msg, "quick check: %s: the passes follow", printbuf_str(&why));
		progress(priv, printbuf_str(&msg));
		printbuf_exit(&msg);
	}
	printbuf_exit(&why);
	return ok;
}

int bch_fsck_run(struct bch_fs *c, struct fsck_state *s,
		 fsck_progress_fn progress, void *priv)
{
	int ret;

	/* lost pointers to nodes: before anything is written (fsck_scan.c) */
	ret = bch_fsck_scan_start(c, s, progress, priv);
	if (!ret)
		open_repairs(c, s);

	for (unsigned i = 0; i < ARRAY_SIZE(fsck_passes) && !ret && !s->cancelled; i++) {
		if (progress)
			progress(priv, fsck_passes[i].name);
		ret = fsck_passes[i].fn(c, s);
		if (!ret && fsck_passes[i].fn == bch_fsck_sb && quick_check(c, s, progress, priv))
			break;
		/*
		 * --no-scan-nodes left keys only the scan could recover: the
		 * passes that follow would take them for gone (dirents of
		 * missing inodes, unreachable files...) and report or delete
		 * what is still there
		 */
		if (!ret && fsck_passes[i].fn == pass_btree_nodes && s->scan_declined) {
			fsck_info(s, PROB_btree_node_unreadable,
				  "--no-scan-nodes: btree nodes or keys under lost pointers are left as they are (only the node scan can recover them): "
				  "the passes after the node pass are not run; run fsck without --no-scan-nodes to recover them");
			break;
		}
	}
	if (progress && !ret)
		progress(priv, "fsck done");
	bch_fsck_scan_exit(s);
	return ret < 0 ? ret : 0;
}
