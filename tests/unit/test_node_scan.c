// SPDX-License-Identifier: GPL-2.0
/*
 * The node scan (node_scan.c) on an image with a history: inode keys
 * written, changed and deleted over several checkpoints (with 2 KiB nodes,
 * so that the btree has many leaves and the free buckets keep older copies
 * of many of them). The scan must find at least every node of the tree
 * (and more: the older copies), and the keys it gives for the whole btree
 * and for ranges of it must be exactly what the btree holds now: nothing
 * lost, nothing older back.
 *
 * Needs $BCACHEFS (the binary) for format; tests/run.sh sets it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "btree/btree.h"
#include "btree/btree_update.h"
#include "btree/bulk.h"
#include "format/format.h"
#include "fs/fs.h"
#include "bkey/inode.h"
#include "fsck/node_scan.h"
#include "util/util.h"

static char img[128];
static char tmpdir[64];

static const char *bin(void)
{
	const char *b = getenv("BCACHEFS");

	return b && *b ? b : "./bcachefs";
}

static int run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static struct bch_fs *open_fs(bool ro)
{
	struct bch_fs_opts o = { .read_only = ro };
	struct printbuf err = PRINTBUF;
	char *devs[1] = { img };
	struct bch_fs *c = NULL;
	int ret = bch_fs_open(devs, 1, &o, &c, &err);

	if (ret)
		fprintf(stderr, "open: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	if (!ro) {
		ret = bch_fs_rw_start(c, &err);
		if (ret)
			fprintf(stderr, "rw_start: %s\n", printbuf_str(&err));
		assert_int_equal(ret, 0);
	}
	printbuf_exit(&err);
	return c;
}

static void stop_close(struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_fs_rw_stop(c, &err);

	if (ret)
		fprintf(stderr, "rw_stop: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	printbuf_exit(&err);
	bch_fs_close(c);
}

/* Inode @inum, a regular file whose uid says in which round it was written. */
static void put_inode(struct btree_trans *t, uint64_t inum, unsigned uid)
{
	struct bch_inode_unpacked u = { 0 };
	uint8_t v[BCH_INODE_VAL_BYTES_MAX];
	struct bkey_h k = { .type = 128, .p = POS_H(inum, 0) };
	size_t bytes;

	u.bi_inum = inum;
	u.bi_mode = S_IFREG | 0644;
	u.bi_uid = uid;
	u.bi_hash_seed = inum * 0x9e3779b97f4a7c15ULL;
	bytes = bch_inode_pack(&u, v);
	bch_trans_update(t, BTREE_ID_INODES, &k, v, (unsigned)bytes);
}

static void commit_ok(struct btree_trans *t)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_trans_commit(t, &err);

	if (ret)
		fprintf(stderr, "commit: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	printbuf_exit(&err);
}

/* The keys of @id in [@min, @max] as the btree has them now. */
static void tree_keys(struct bch_fs *c, unsigned id, struct bpos_h min, struct bpos_h max,
		      struct bulk_keys *out)
{
	struct btree_iter iter;
	struct bkey_ref *k;

	bch_btree_iter_init(&iter, c, id, min, NULL);
	while (!bch_btree_iter_peek(&iter, &k) && k && bpos_cmp(k->k.p, max) <= 0) {
		bulk_keys_add(out, &k->k, k->v, k->v_bytes);
		bch_btree_iter_advance(&iter);
	}
	assert_int_equal(iter.nr_errors, 0);
	bch_btree_iter_exit(&iter);
}

static void same_keys(const struct bulk_keys *a, const struct bulk_keys *b)
{
	assert_int_equal(a->nr, b->nr);
	for (size_t i = 0; i < a->nr; i++) {
		assert_true(bpos_eq(a->k[i].k.p, b->k[i].k.p));
		assert_int_equal(a->k[i].k.type, b->k[i].k.type);
		assert_int_equal(a->k[i].v_bytes, b->k[i].v_bytes);
		assert_memory_equal(a->k[i].v, b->k[i].v, a->k[i].v_bytes);
	}
}

static int count_node(void *arg, const struct btree_node_visit *v)
{
	(*(size_t *)arg)++;
	return 0;
}

#define INUM0	100000
#define NR	3000

static void test_history(void **state)
{
	struct bch_node_scan s = { 0 };
	struct printbuf err = PRINTBUF;
	struct node_scan_use u;
	struct btree_trans t;
	struct bch_fs *c;
	size_t tree_nodes = 0;
	unsigned round;

	assert_int_equal(run("rm -f %s && truncate -s 64M %s && %s format -q --force --block_size=512 "
			     "--btree_node_size=2k --bucket_size=4k %s >/dev/null", img, img, bin(), img), 0);

	/* round 0: every inode; 1-3: every (round+2)-th changed, every (round+6)-th deleted */
	for (round = 0; round < 4; round++) {
		c = open_fs(false);
		bch_trans_init(&t, c);
		for (uint64_t i = 0; i < NR; i++) {
			if (!round)
				put_inode(&t, INUM0 + i, 0);
			else if (i % (round + 6) == 0)
				bch_trans_delete(&t, BTREE_ID_INODES, POS_H(INUM0 + i, 0));
			else if (i % (round + 2) == 0)
				put_inode(&t, INUM0 + i, round);
			if (t.nr >= 64)
				commit_ok(&t);
		}
		commit_ok(&t);
		bch_trans_exit(&t);
		stop_close(c);
	}

	c = open_fs(true);
	assert_int_equal(bch_btree_walk_nodes(c, BTREE_ID_INODES, count_node, &tree_nodes, NULL), 0);
	assert_int_equal(bch_node_scan(c, &s, &err), 0);
	assert_true(s.done);
	assert_int_equal(s.nr_bad, 0);
	/* every node of the tree, and older copies of some */
	assert_true(bch_node_scan_nr(&s, BTREE_ID_INODES) > tree_nodes);

	/* the whole btree, then ranges of it (one inside a leaf, others across many) */
	struct { uint64_t a, b; } ranges[] = {
		{ 0, UINT64_MAX }, { INUM0 + 10, INUM0 + 12 }, { INUM0 + 100, INUM0 + 1900 },
		{ INUM0 + 1234, INUM0 + NR + 50 }, { 0, INUM0 + 7 },
	};
	for (size_t r = 0; r < ARRAY_SIZE(ranges); r++) {
		struct bpos_h min = POS_H(ranges[r].a, 0);
		struct bpos_h max = ranges[r].b == UINT64_MAX ? POS_H_MAX : POS_H(ranges[r].b, 0);
		struct bulk_keys want = { 0 }, got = { 0 };

		tree_keys(c, BTREE_ID_INODES, min, max, &want);
		assert_int_equal(bch_node_scan_keys(c, &s, BTREE_ID_INODES, min, max, &got, &u, &err), 0);
		same_keys(&want, &got);
		assert_int_equal(u.keys, got.nr);
		assert_int_equal(u.unreadable, 0);
		if (!r)
			assert_true(u.older > 0);	/* the older copies gave nothing */
		bulk_keys_exit(&want);
		bulk_keys_exit(&got);
	}
	bch_node_scan_exit(&s);
	bch_fs_close(c);
	printbuf_exit(&err);
}

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/test_node_scan.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(img, sizeof(img), "%s/fs.img", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	if (getenv("KEEP_TMP"))
		fprintf(stderr, "kept %s\n", tmpdir);
	else
		run("rm -rf %s", tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_history),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
