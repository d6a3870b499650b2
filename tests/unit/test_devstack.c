// SPDX-License-Identifier: GPL-2.0
/*
 * Device stacks (devstack.h): which stacks overlap. Built by hand for the
 * layouts this machine may not have (partitions, device-mapper), and read
 * from real files for paths, hard links and symlinks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dev/devstack.h"

#define BLK(ma, mi)	((struct dev_ident) { .blk = true, .dev = makedev(ma, mi) })
#define FILE_ID(d, i)	((struct dev_ident) { .dev = (d), .ino = (i) })

static void push(struct dev_stack *s, struct dev_ident id, bool container)
{
	s->v[s->nr++] = (struct dev_layer) { .id = id, .container = container };
}

static void test_overlap_rules(void **state)
{
	struct dev_stack img = { 0 }, loop0 = { 0 }, loop1 = { 0 }, p1 = { 0 }, p2 = { 0 },
			 disk = { 0 }, dm = { 0 }, other = { 0 }, lp1 = { 0 };
	struct dev_ident f = FILE_ID(0xfe00, 1234);

	push(&img, f, false);
	push(&loop0, BLK(7, 0), false);			/* loop0 over img */
	push(&loop0, f, false);
	push(&loop1, BLK(7, 1), false);			/* loop1 over img too */
	push(&loop1, f, false);
	push(&disk, BLK(8, 0), false);			/* sda */
	push(&p1, BLK(8, 1), false);			/* sda1: its disk contains it */
	push(&p1, BLK(8, 0), true);
	push(&p2, BLK(8, 2), false);			/* sda2 */
	push(&p2, BLK(8, 0), true);
	push(&dm, BLK(253, 0), false);			/* dm-0 over sda1 */
	push(&dm, BLK(8, 1), false);
	push(&dm, BLK(8, 0), true);
	push(&lp1, BLK(259, 0), false);			/* loop0p1: loop0 and img contain it */
	push(&lp1, BLK(7, 0), true);
	push(&lp1, f, true);
	push(&other, FILE_ID(0xfe00, 99), false);

	assert_true(dev_stacks_overlap(&img, &loop0));
	assert_true(dev_stacks_overlap(&loop0, &img));
	assert_true(dev_stacks_overlap(&loop0, &loop1));	/* same backing file */
	assert_true(dev_stacks_overlap(&disk, &p1));
	assert_true(dev_stacks_overlap(&p1, &disk));
	assert_false(dev_stacks_overlap(&p1, &p2));		/* partitions of one disk */
	assert_true(dev_stacks_overlap(&dm, &p1));
	assert_true(dev_stacks_overlap(&dm, &disk));
	assert_false(dev_stacks_overlap(&dm, &p2));
	assert_true(dev_stacks_overlap(&lp1, &img));
	assert_true(dev_stacks_overlap(&lp1, &loop0));
	assert_true(dev_stacks_overlap(&lp1, &loop1));	/* loop1 reaches img too */
	assert_false(dev_stacks_overlap(&img, &other));
	assert_false(dev_stacks_overlap(&loop0, &disk));
}

static void test_files(void **state)
{
	char dir[] = "/tmp/devstack.XXXXXX", a[64], b[64], hl[64], sl[64], rel[80];
	struct dev_stack sa, sb, sh, ss, sr;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.img", dir);
	snprintf(b, sizeof(b), "%s/b.img", dir);
	snprintf(hl, sizeof(hl), "%s/hard.img", dir);
	snprintf(sl, sizeof(sl), "%s/soft.img", dir);
	snprintf(rel, sizeof(rel), "%s/../%s/a.img", dir, strrchr(dir, '/') + 1);
	assert_non_null(f = fopen(a, "w"));
	fclose(f);
	assert_non_null(f = fopen(b, "w"));
	fclose(f);
	assert_int_equal(link(a, hl), 0);
	assert_int_equal(symlink(a, sl), 0);

	assert_int_equal(dev_stack_get(a, -1, &sa), 0);
	assert_int_equal(dev_stack_get(b, -1, &sb), 0);
	assert_int_equal(dev_stack_get(hl, -1, &sh), 0);
	assert_int_equal(dev_stack_get(sl, -1, &ss), 0);
	assert_int_equal(dev_stack_get(rel, -1, &sr), 0);
	assert_int_equal(sa.nr, 1);
	assert_false(dev_stacks_overlap(&sa, &sb));
	assert_true(dev_stacks_overlap(&sa, &sh));
	assert_true(dev_stacks_overlap(&sa, &ss));
	assert_true(dev_stacks_overlap(&sa, &sr));
	dev_stack_exit(&sb);
	assert_int_equal(dev_stack_get(dir, -1, &sb), -EISDIR);
	assert_int_equal(dev_stack_get("/nonexistent/x", -1, &sb), -ENOENT);

	dev_stack_exit(&sa);
	dev_stack_exit(&sh);
	dev_stack_exit(&ss);
	dev_stack_exit(&sr);
	unlink(a);
	unlink(b);
	unlink(hl);
	unlink(sl);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overlap_rules),
		cmocka_unit_test(test_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
