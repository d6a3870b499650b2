// SPDX-License-Identifier: GPL-2.0
/*
 * Integrity of what the running filesystem reads (core/integrity.c and the
 * verifying reader of btree/node.c):
 *   - the error action in force (the errors= option over the superblock's),
 *     what each does when a node has no good copy (the log line, the range
 *     remembered, writes refused there or everywhere, panic);
 *   - the queue of repairs on read;
 *   - on an image made by our format whose dirents leaf is damaged: the
 *     reader of fsck takes the leaf as it is (keys, problems counted), the
 *     verifying reader never does (EIO, sticky, for what it covers, the
 *     ranges before it still read), and skip_bad walks past it.
 *
 * The image part needs $BCACHEFS (format, list); tests/run.sh sets it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btree/btree.h"
#include "core/integrity.h"
#include "format/format.h"
#include "fs/fs.h"
#include "util/errcode.h"
#include "util/util.h"
#include "testutil.h"

static char lines[8][512];
static unsigned nr_lines;

static void log_fn(void *arg, const char *msg)
{
	if (nr_lines < 8)
		snprintf(lines[nr_lines], sizeof(lines[0]), "%s", msg);
	nr_lines++;
}

static struct bch_fs *fake_fs(unsigned errors)
{
	struct bch_fs *c = xcalloc(1, sizeof(*c));

	c->opts.errors = errors;
	bch_fs_integrity_init(c);
	c->integ.log = log_fn;
	nr_lines = 0;
	return c;
}

static void fake_free(struct bch_fs *c)
{
	bch_fs_integrity_exit(c);
	free(c);
}

static void test_action(void **state)
{
	struct bch_fs *c = fake_fs(0);

	/* no superblock: the safe default */
	assert_int_equal(c->integ.action, BCH_ON_ERROR_RO);
	fake_free(c);
	c = fake_fs(BCH_ON_ERROR_PANIC + 1);
	assert_int_equal(c->integ.action, BCH_ON_ERROR_PANIC);
	assert_string_equal(bch_fs_error_action_str(c->integ.action), "panic");
	fake_free(c);
}

static void test_continue(void **state)
{
	struct bch_fs *c = fake_fs(BCH_ON_ERROR_CONTINUE + 1);
	struct bkey_h k = { .p = POS_H(4100, 8), .size = 8 };
	struct printbuf err = PRINTBUF;

	assert_int_equal(bch_fs_node_bad(c, BTREE_ID_EXTENTS, 0, POS_H(4100, 0), POS_H(4200, 0),
					 "dev 0 sector 64: bad magic"),
			 -BCH_ERR_btree_node_unverified);
	assert_int_equal(nr_lines, 1);
	assert_non_null(strstr(lines[0], "btree extents level 0 range 4100:0 - 4200:0: no copy verifies "
				   "(dev 0 sector 64: bad magic): reads of that range fail with EIO"));
	assert_non_null(strstr(lines[0], "(errors=continue)"));
	assert_false(bch_fs_writes_stopped(c));
	assert_int_equal(c->integ.nodes_bad, 1);

	/* writes over the range are refused, elsewhere not */
	assert_int_equal(bch_fs_write_allowed(c, BTREE_ID_EXTENTS, &k, &err),
			 -BCH_ERR_btree_node_unverified);
	assert_non_null(strstr(printbuf_str(&err), "nothing is written over it"));
	k.p = POS_H(4200, 16);		/* sectors 8..16: starts after the range */
	assert_int_equal(bch_fs_write_allowed(c, BTREE_ID_EXTENTS, &k, &err), 0);
	k.p = POS_H(4200, 4);		/* 0..4 of 4200 would start before the range's end: refused */
	k.size = 4;
	assert_int_equal(bch_fs_write_allowed(c, BTREE_ID_EXTENTS, &k, &err),
			 -BCH_ERR_btree_node_unverified);
	k.p = POS_H(4150, 0);
	k.size = 0;
	assert_int_equal(bch_fs_write_allowed(c, BTREE_ID_INODES, &k, &err), 0);

	/* a leaf under it: one range */
	bch_fs_node_bad(c, BTREE_ID_EXTENTS, 0, POS_H(4150, 0), POS_H(4300, 0), "x");
	assert_int_equal(c->integ.nr_bad, 1);
	assert_true(bch_fs_range_bad(c, BTREE_ID_EXTENTS, POS_H(4250, 0), POS_H(4250, 0)));
	assert_false(bch_fs_range_bad(c, BTREE_ID_EXTENTS, POS_H(4301, 0), POS_H(4400, 0)));

	/* the alloc btree: nothing can be written past it */
	bch_fs_node_bad(c, BTREE_ID_ALLOC, 0, POS_H(0, 0), POS_H(0, 40), "x");
	assert_true(bch_fs_writes_stopped(c));
	assert_int_equal(bch_fs_write_allowed(c, BTREE_ID_INODES, &k, &err), -EROFS);
	printbuf_exit(&err);
	fake_free(c);
}

static void test_ro_panic(void **state)
{
	struct bch_fs *c = fake_fs(BCH_ON_ERROR_RO + 1);
	struct bkey_h k = { .p = POS_H(1, 1) };
	struct printbuf err = PRINTBUF;

	bch_fs_node_bad(c, BTREE_ID_DIRENTS, 1, POS_H(4096, 0), POS_H(4096, 99), "x");
	assert_true(c->integ.writes_stopped);
	assert_false(c->integ.panic);
	assert_non_null(strstr(lines[0], "read-only from now on (errors=remount-ro)"));
	assert_int_equal(bch_fs_write_allowed(c, BTREE_ID_XATTRS, &k, &err), -EROFS);
	fake_free(c);

	c = fake_fs(BCH_ON_ERROR_PANIC + 1);
	bch_fs_node_bad(c, BTREE_ID_INODES, 0, POS_H_MIN, POS_H_MAX, "x");
	assert_true(c->integ.panic);
	assert_true(bch_fs_writes_stopped(c));
	assert_non_null(strstr(lines[0], "0:0 - POS_MAX"));
	assert_non_null(strstr(lines[0], "the mount stops now"));
	printbuf_exit(&err);
	fake_free(c);
}

static void test_repair_queue(void **state)
{
	struct bch_fs *c = fake_fs(0);
	struct bch_repair_req r;

	bch_fs_repair_want(c, 4100, 0, 8);
	bch_fs_repair_want(c, 4100, 8, 16);	/* touches: merged */
	bch_fs_repair_want(c, 4101, 0, 8);
	assert_true(bch_fs_repair_take(c, &r));
	assert_int_equal(r.inode, 4100);
	assert_int_equal(r.start, 0);
	assert_int_equal(r.end, 16);
	assert_true(bch_fs_repair_take(c, &r));
	assert_int_equal(r.inode, 4101);
	assert_false(bch_fs_repair_take(c, &r));
	/* bounded */
	for (unsigned i = 0; i < 10000; i++)
		bch_fs_repair_want(c, i, 0, 1);
	assert_true(c->integ.nr_repairs <= 256);
	fake_free(c);
}

/* ---- on an image ---- */

static char tmpdir[64], img[128];

static int image_setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_integrity.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(img, sizeof(img), "%s/a.img", tmpdir);
	return test_run("mkdir %s/src && for i in $(seq 1 200); do echo $i > %s/src/file-$i; done && "
			"truncate -s 32M %s && %s format -q --btree_node_size=2k --block_size=512 "
			"--source=%s/src %s > /dev/null 2>&1", tmpdir, tmpdir, img, test_bin(), tmpdir, img);
}

static int image_teardown(void **state)
{
	test_run("rm -rf %s", tmpdir);
	return 0;
}

/* Flip 8 bytes of the second dirents leaf's keys; its range in *@min, *@max. */
static void damage_leaf(struct bpos_h *min, struct bpos_h *max)
{
	struct bch_fs_opts o = { .read_only = true };
	struct printbuf err = PRINTBUF;
	char *devs[1] = { img };
	struct bch_fs *c;
	struct btree_iter iter;
	struct bkey_ref *k;
	uint64_t sector;
	FILE *f;
	uint8_t b[8];

	assert_int_equal(bch_fs_open(devs, 1, &o, &c, &err), 0);
	bch_btree_iter_init(&iter, c, BTREE_ID_DIRENTS, POS_H_MIN, NULL);
	assert_int_equal(bch_btree_iter_peek(&iter, &k), 0);
	assert_non_null(k);
	/* the first leaf's end; the next leaf is the one damaged */
	*min = bpos_successor(BTREE_ID_DIRENTS, iter.leaf_max);
	bch_btree_iter_exit(&iter);
	bch_btree_iter_init(&iter, c, BTREE_ID_DIRENTS, *min, NULL);
	assert_int_equal(bch_btree_iter_peek(&iter, &k), 0);
	assert_non_null(k);
	assert_non_null(iter.leaf);
	sector = iter.leaf->sector;
	*max = iter.leaf_max;
	assert_true(bpos_cmp(*max, POS_H_MAX) < 0);	/* a leaf after it */
	bch_btree_iter_exit(&iter);
	bch_fs_close(c);
	printbuf_exit(&err);

	f = fopen(img, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)(sector * 512 + 200), SEEK_SET), 0);
	assert_int_equal(fread(b, 1, 8, f), 8);
	for (int i = 0; i < 8; i++)
		b[i] ^= 0x5a;
	assert_int_equal(fseek(f, (long)(sector * 512 + 200), SEEK_SET), 0);
	assert_int_equal(fwrite(b, 1, 8, f), 8);
	fclose(f);
}

/* Keys of the dirents btree from POS_H_MIN: *@nr, the error ending the walk. */
static int walk(struct bch_fs *c, bool skip_bad, size_t *nr, struct bpos_h *last)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	*nr = 0;
	bch_btree_iter_init(&iter, c, BTREE_ID_DIRENTS, POS_H_MIN, NULL);
	iter.skip_bad = skip_bad;
	while (!(ret = bch_btree_iter_next(&iter, &k)) && k) {
		(*nr)++;
		*last = k->k.p;
	}
	bch_btree_iter_exit(&iter);
	return ret;
}

static void test_image(void **state)
{
	struct printbuf err = PRINTBUF;
	char *devs[1] = { img };
	struct bch_fs *c;
	struct bpos_h min, max, last = POS_H_MIN;
	size_t nr_all, nr;
	int ret;

	/* every dirent, undamaged */
	{
		struct bch_fs_opts o = { .read_only = true, .verify = true };

		assert_int_equal(bch_fs_open(devs, 1, &o, &c, &err), 0);
		assert_int_equal(bch_btree_verify_interior(c), 0);
		assert_int_equal(walk(c, false, &nr_all, &last), 0);
		assert_int_equal(nr_all, 201);	/* and lost+found */
		assert_int_equal(c->integ.nodes_bad, 0);
		bch_fs_close(c);
	}
	damage_leaf(&min, &max);

	/* fsck's reader: the leaf as it is, a problem counted */
	{
		struct bch_fs_opts o = { .read_only = true };

		assert_int_equal(bch_fs_open(devs, 1, &o, &c, &err), 0);
		assert_int_equal(walk(c, false, &nr, &last), 0);
		assert_true(c->nr_errors > 0);
		bch_fs_close(c);
	}
	/* the mount's: EIO at the leaf, sticky; what is before it read */
	{
		struct bch_fs_opts o = { .read_only = true, .verify = true,
					 .errors = BCH_ON_ERROR_CONTINUE + 1 };

		assert_int_equal(bch_fs_open(devs, 1, &o, &c, &err), 0);
		c->integ.log = log_fn;
		nr_lines = 0;
		/* a leaf: the roots and interior nodes are fine */
		assert_int_equal(bch_btree_verify_interior(c), 0);
		ret = walk(c, false, &nr, &last);
		assert_int_equal(ret, -BCH_ERR_btree_node_unverified);
		assert_true(bch_err_matches(ret, EIO));
		assert_true(nr > 0 && nr < nr_all);
		assert_true(bpos_cmp(last, min) < 0);
		assert_int_equal(nr_lines, 1);
		assert_non_null(strstr(lines[0], "btree dirents level 0 range"));
		assert_non_null(strstr(lines[0], "invalid checksum"));
		assert_true(bch_fs_range_bad(c, BTREE_ID_DIRENTS, min, max));
		/* cached: read again, the same error and no second line */
		assert_int_equal(walk(c, false, &nr, &last), -BCH_ERR_btree_node_unverified);
		assert_int_equal(nr_lines, 1);
		/* past it: the others, never a key of the damaged leaf */
		assert_int_equal(walk(c, true, &nr, &last), 0);
		assert_true(nr > 0 && nr < nr_all);
		bch_fs_close(c);
	}
	printbuf_exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_action),
		cmocka_unit_test(test_continue),
		cmocka_unit_test(test_ro_panic),
		cmocka_unit_test(test_repair_queue),
		cmocka_unit_test_setup_teardown(test_image, image_setup, image_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
