// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fsck/problems.h"
#include "util/util.h"

static void test_ids_unique_and_named(void **state)
{
	for (unsigned i = 0; i < PROB_NR; i++) {
		assert_non_null(bch_problems[i].name);
		assert_true(bch_problems[i].id > 0);
		for (unsigned j = i + 1; j < PROB_NR; j++)
			assert_int_not_equal(bch_problems[i].id, bch_problems[j].id);
	}
}

struct capture {
	struct printbuf		out;
	enum fsck_answer	answer;
	unsigned		asked;
};

static void cap_report(void *priv, enum bch_problem p, const char *msg)
{
	struct capture *c = priv;

	pr_buf(&c->out, "%s\n", msg);
}

static enum fsck_answer cap_ask(void *priv, enum bch_problem p, const char *msg)
{
	struct capture *c = priv;

	c->asked++;
	return c->answer;
}

static void test_modes(void **state)
{
	struct capture cap = { .out = PRINTBUF };
	struct fsck_ops ops = { cap_report, cap_ask, &cap };
	struct fsck_state s;

	fsck_state_init(&s, FSCK_NO, &ops);
	assert_false(fsck_fix(&s, PROB_root_missing, "root directory missing"));
	assert_string_equal(printbuf_str(&cap.out), "root directory missing, not fixing\n");
	assert_int_equal(fsck_nr_left(&s), 1);

	printbuf_reset(&cap.out);
	fsck_state_init(&s, FSCK_PREEN, &ops);
	assert_true(fsck_fix(&s, PROB_root_missing, "x"));		/* PREEN */
	assert_false(fsck_fix(&s, PROB_dir_unreachable, "y"));		/* not PREEN */
	assert_int_equal(s.nr_fixed, 1);
	assert_int_equal(fsck_nr_left(&s), 1);

	fsck_state_init(&s, FSCK_YES, &ops);
	assert_true(fsck_fix(&s, PROB_dir_unreachable, "y"));
	assert_false(fsck_fix(&s, PROB_sb_field_invalid, "not fixable"));

	fsck_state_init(&s, FSCK_ASK, &ops);
	cap.answer = FSCK_ANSWER_ALL;
	assert_true(fsck_fix(&s, PROB_inode_nlink_wrong, "a"));
	cap.answer = FSCK_ANSWER_NO;
	assert_true(fsck_fix(&s, PROB_inode_nlink_wrong, "b"));	/* yes to all */
	assert_int_equal(cap.asked, 1);
	cap.answer = FSCK_ANSWER_QUIT;
	assert_false(fsck_fix(&s, PROB_dirent_self, "c"));
	assert_true(s.cancelled);
	assert_false(fsck_fix(&s, PROB_dirent_dot, "d"));
	assert_int_equal(cap.asked, 2);
	printbuf_exit(&cap.out);
}

static void test_ratelimit(void **state)
{
	struct capture cap = { .out = PRINTBUF };
	struct fsck_ops ops = { cap_report, cap_ask, &cap };
	struct fsck_state s;
	struct printbuf sum = PRINTBUF;
	unsigned lines = 0;

	fsck_state_init(&s, FSCK_NO, &ops);
	for (unsigned i = 0; i < 25; i++)
		fsck_fix(&s, PROB_dirent_missing_inode, "dirent %u", i);
	for (const char *p = printbuf_str(&cap.out); *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, FSCK_RATELIMIT + 1);
	fsck_summary_to_text(&sum, &s);
	assert_non_null(strstr(printbuf_str(&sum), "Saw 25 problems like"));
	printbuf_exit(&sum);
	printbuf_exit(&cap.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_unique_and_named),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_ratelimit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
