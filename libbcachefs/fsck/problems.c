// SPDX-License-Identifier: GPL-2.0
#include "btree/btree_update.h"
#include "core/bch_fs.h"
#include "fsck/problems.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

const struct bch_problem_info bch_problems[PROB_NR] = {
#define x(_name, _id, _flags, _summary)					\
	[PROB_##_name] = { .name = #_name, .id = _id, .flags = _flags, .summary = _summary },
	BCH_PROBLEMS()
#undef x
};

/* Ids must be unique: checked once at start-up in debug builds and by the unit test. */

void fsck_state_init(struct fsck_state *s, enum fsck_mode mode, const struct fsck_ops *ops)
{
	memset(s, 0, sizeof(*s));
	s->mode = mode;
	if (ops)
		s->ops = *ops;
}

static void report(struct fsck_state *s, enum bch_problem p, const char *msg)
{
	if (s->ops.report)
		s->ops.report(s->ops.priv, p, msg);
}

static bool decide(struct fsck_state *s, enum bch_problem p, const char *msg)
{
	unsigned flags = bch_problems[p].flags;

	if (!(flags & PROB_FIXABLE) || s->cancelled || s->read_only || s->scan_declined)
		return false;

	switch (s->mode) {
	case FSCK_REPORT:
	case FSCK_NO:
		return false;
	case FSCK_PREEN:
		if (flags & PROB_HALTS_PREEN)
			s->preen_halted = true;
		return (flags & PROB_PREEN) && !s->preen_halted;
	case FSCK_YES:
		return true;
	case FSCK_ASK:
		if (s->yes_all[p])
			return true;
		if (!s->ops.ask)
			return false;
		switch (s->ops.ask(s->ops.priv, p, msg)) {
		case FSCK_ANSWER_YES:
			return true;
		case FSCK_ANSWER_ALL:
			s->yes_all[p] = true;
			return true;
		case FSCK_ANSWER_QUIT:
			s->cancelled = true;
			return false;
		case FSCK_ANSWER_NO:
			return false;
		}
	}
	return false;
}

bool fsck_fix(struct fsck_state *s, enum bch_problem p, const char *fmt, ...)
{
	struct printbuf msg = PRINTBUF;
	va_list args;
	bool fix;

	va_start(args, fmt);
	pr_vbuf(&msg, fmt, args);
	va_end(args);

	s->seen[p]++;
	s->nr_seen++;

	fix = decide(s, p, printbuf_str(&msg));
	if (fix) {
		s->fixed[p]++;
		s->nr_fixed++;
	}

	if (s->seen[p] <= FSCK_RATELIMIT) {
		const char *what;

		if (fix)
			what = ", fixing";
		else if (!(bch_problems[p].flags & PROB_FIXABLE))
			what = " (no repair available)";
		else if (s->mode == FSCK_PREEN && (bch_problems[p].flags & PROB_PREEN) && s->preen_halted)
			what = " (not fixed: -p stops repairing after a damaged btree node: run fsck -y)";
		else if (s->mode == FSCK_PREEN)
			what = " (not safe to fix automatically: run fsck -y)";
		else if (s->mode == FSCK_REPORT)
			what = " (run fsck to repair)";
		else if (s->read_only && s->mode != FSCK_NO)
			what = ", not fixing (the filesystem cannot be written)";
		else if (s->scan_declined && s->mode != FSCK_NO)
			what = ", not fixing (--no-scan-nodes: what only the node scan can recover is left as it is)";
		else
			what = ", not fixing";
		pr_str(&msg, what);
		if (s->seen[p] == FSCK_RATELIMIT)
			pr_str(&msg, "\n(further problems of this kind are counted, not printed)");
		report(s, p, printbuf_str(&msg));
	}
	printbuf_exit(&msg);
	return fix;
}

void fsck_fix_failed(struct fsck_state *s, enum bch_problem p, const char *why)
{
	struct printbuf msg = PRINTBUF;

	if (s->fixed[p]) {
		s->fixed[p]--;
		s->nr_fixed--;
	}
	s->nr_repair_failed++;
	pr_buf(&msg, "repair of %s (id %u) failed: %s", bch_problems[p].name,
	       bch_problems[p].id, why);
	report(s, p, printbuf_str(&msg));
	printbuf_exit(&msg);
}

unsigned long fsck_nr_left(const struct fsck_state *s)
{
	return s->nr_seen - s->nr_fixed;
}

void fsck_summary_to_text(struct printbuf *out, const struct fsck_state *s)
{
	for (unsigned p = 0; p < PROB_NR; p++)
		if (s->seen[p] > FSCK_RATELIMIT)
			pr_buf(out, "Saw %lu problems like: %s (%s, id %u), %lu fixed\n",
			       s->seen[p], bch_problems[p].summary, bch_problems[p].name,
			       bch_problems[p].id, s->fixed[p]);
}

void fsck_summary_to_json(struct json *j, const struct fsck_state *s)
{
	json_arr_begin(j, "problems");
	for (unsigned p = 0; p < PROB_NR; p++) {
		if (!s->seen[p])
			continue;
		json_obj_begin(j, NULL);
		json_u64(j, "id", bch_problems[p].id);
		json_str(j, "name", bch_problems[p].name);
		json_str(j, "summary", bch_problems[p].summary);
		json_u64(j, "found", s->seen[p]);
		json_u64(j, "fixed", s->fixed[p]);
		json_u64(j, "left", s->seen[p] - s->fixed[p]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_u64(j, "found", s->nr_seen);
	json_u64(j, "fixed", s->nr_fixed);
	json_u64(j, "left", fsck_nr_left(s));
}

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
