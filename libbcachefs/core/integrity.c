// SPDX-License-Identifier: GPL-2.0
/*
 * Integrity of what the running filesystem reads: see integrity.h.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bkey/bkey_types.h"
#include "core/integrity.h"
#include "format/format.h"
#include "util/errcode.h"

/* A damaged filesystem may have many bad nodes: past this many, ranges merge. */
#define BAD_RANGES_MAX		1024
#define REPAIRS_MAX		256

void bch_fs_integrity_init(struct bch_fs *c)
{
	unsigned a = c->opts.errors ? c->opts.errors - 1
				    : (c->sb ? (unsigned)BCH_SB_ERROR_ACTION(c->sb) : BCH_ON_ERROR_RO);

	/* an action this tool does not know is taken as the safe one */
	c->integ.action = a < BCH_ON_ERROR_NR ? a : BCH_ON_ERROR_RO;
}

void bch_fs_integrity_exit(struct bch_fs *c)
{
	free(c->integ.bad);
	free(c->integ.repairs);
	c->integ.bad = NULL;
	c->integ.repairs = NULL;
	c->integ.nr_bad = c->integ.nr_repairs = 0;
}

const char *bch_fs_error_action_str(unsigned action)
{
	switch (action) {
	case BCH_ON_ERROR_CONTINUE:	return "continue";
	case BCH_ON_ERROR_RO:		return "remount-ro";
	case BCH_ON_ERROR_PANIC:	return "panic";
	default:			return "unknown";
	}
}

void bch_fs_log(struct bch_fs *c, const char *fmt, ...)
{
	struct printbuf msg = PRINTBUF;
	va_list args;

	if (!c->integ.log)
		return;
	va_start(args, fmt);
	pr_vbuf(&msg, fmt, args);
	va_end(args);
	/* one line: the parts a caller joined stay on it */
	for (size_t i = 0; i < msg.pos; i++)
		if (msg.buf[i] == '\n')
			msg.buf[i] = ' ';
	c->integ.log(c->integ.log_arg, printbuf_str(&msg));
	printbuf_exit(&msg);
}

static void bad_range_add(struct bch_fs *c, unsigned btree_id, struct bpos_h min,
			  struct bpos_h max)
{
	struct bch_fs_integrity *in = &c->integ;

	for (size_t i = 0; i < in->nr_bad; i++) {
		struct bch_bad_range *r = &in->bad[i];

		if (r->btree_id != btree_id)
			continue;
		if (bpos_cmp(min, r->max) <= 0 && bpos_cmp(max, r->min) >= 0) {
			/* overlaps (an interior node and a leaf under it): one range */
			if (bpos_cmp(min, r->min) < 0)
				r->min = min;
			if (bpos_cmp(max, r->max) > 0)
				r->max = max;
			return;
		}
	}
	if (in->nr_bad == BAD_RANGES_MAX) {
		/* the whole btree, rather than forgetting a range */
		in->bad[0] = (struct bch_bad_range) { btree_id, POS_H_MIN, POS_H_MAX };
		return;
	}
	in->bad = xrealloc(in->bad, (in->nr_bad + 1) * sizeof(*in->bad));
	in->bad[in->nr_bad++] = (struct bch_bad_range) { btree_id, min, max };
}

bool bch_fs_range_bad(const struct bch_fs *c, unsigned btree_id, struct bpos_h start,
		      struct bpos_h end)
{
	for (size_t i = 0; i < c->integ.nr_bad; i++) {
		const struct bch_bad_range *r = &c->integ.bad[i];

		if (r->btree_id == btree_id && bpos_cmp(start, r->max) <= 0 &&
		    bpos_cmp(end, r->min) >= 0)
			return true;
	}
	return false;
}

int bch_fs_write_allowed(const struct bch_fs *c, unsigned btree_id, const struct bkey_h *k,
			 struct printbuf *err)
{
	struct bpos_h start = btree_id == BTREE_ID_EXTENTS ? bkey_start_pos(k) : k->p;

	if (bch_fs_writes_stopped(c)) {
		pr_str(err, "filesystem is read-only since damage was found\n");
		return -EROFS;
	}
	if (!c->integ.nr_bad || !bch_fs_range_bad(c, btree_id, start, k->p))
		return 0;
	pr_buf(err, "btree %s at %llu:%llu: the node there has no copy that verifies: "
	       "nothing is written over it (run bcachefs fsck)\n", bch_btree_id_str(btree_id),
	       (unsigned long long)k->p.inode, (unsigned long long)k->p.offset);
	return -BCH_ERR_btree_node_unverified;
}

int bch_fs_node_bad(struct bch_fs *c, unsigned btree_id, unsigned level,
		    struct bpos_h min, struct bpos_h max, const char *what)
{
	struct printbuf r = PRINTBUF;
	const char *then;

	c->integ.nodes_bad++;
	bad_range_add(c, btree_id, min, max);
	bch_bpos_to_text(&r, min);
	pr_str(&r, " - ");
	bch_bpos_to_text(&r, max);

	switch (c->integ.action) {
	case BCH_ON_ERROR_CONTINUE:
		then = "reads of that range fail with EIO, nothing is written over it";
		/* every checkpoint rebuilds the alloc btree whole: no writing past it */
		if (btree_id == BTREE_ID_ALLOC && !c->integ.writes_stopped) {
			then = "the bucket state is unknown: the filesystem is read-only from now on";
			c->integ.writes_stopped = true;
		}
		break;
	case BCH_ON_ERROR_PANIC:
		then = "the mount stops now, the journal kept (what was committed is written to it, nothing else)";
		c->integ.panic = true;
		break;
	default:
		then = "the filesystem is read-only from now on";
		c->integ.writes_stopped = true;
		break;
	}
	bch_fs_log(c, "btree %s level %u range %s: no copy verifies (%s): %s (errors=%s); "
		   "run bcachefs fsck -f", bch_btree_id_str(btree_id), level, printbuf_str(&r),
		   what, then, bch_fs_error_action_str(c->integ.action));
	printbuf_exit(&r);
	return -BCH_ERR_btree_node_unverified;
}

void bch_fs_repair_want(struct bch_fs *c, uint64_t inode, uint64_t start, uint64_t end)
{
	struct bch_fs_integrity *in = &c->integ;

	for (size_t i = 0; i < in->nr_repairs; i++) {
		struct bch_repair_req *r = &in->repairs[i];

		if (r->inode == inode && start <= r->end && end >= r->start) {
			r->start = min_t(uint64_t, r->start, start);
			r->end = max_t(uint64_t, r->end, end);
			return;
		}
	}
	/* more than this between two operations: the rest waits for the next read or scrub */
	if (in->nr_repairs == REPAIRS_MAX)
		return;
	in->repairs = xrealloc(in->repairs, (in->nr_repairs + 1) * sizeof(*in->repairs));
	in->repairs[in->nr_repairs++] = (struct bch_repair_req) { inode, start, end };
}

bool bch_fs_repair_take(struct bch_fs *c, struct bch_repair_req *r)
{
	struct bch_fs_integrity *in = &c->integ;

	if (!in->nr_repairs)
		return false;
	*r = in->repairs[0];
	memmove(in->repairs, in->repairs + 1, --in->nr_repairs * sizeof(*in->repairs));
	return true;
}
