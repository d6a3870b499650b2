// SPDX-License-Identifier: GPL-2.0
/*
 * Building btrees in bulk (btree/bulk.h), as format --source does: from
 * the populate callback of first-mount initialisation (fs/init.h), an
 * inodes btree of thousands of keys and the dirents naming them, in
 * hash order after bulk_keys_sort(). The result: the node count that
 * bch_bulk_nodes_for() predicts (leaves and interior levels), a root
 * above level 0, every key back in order through the iterator, the fill
 * factor honoured, and our fsck -n finding nothing. An empty key list
 * gives no root; a pool too small runs out (-ENOSPC).
 *
 * Needs $BCACHEFS (the binary) for format and fsck; tests/run.sh sets it.
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
#include <sys/stat.h>

#include "alloc/alloc.h"
#include "bkey/dirent.h"
#include "bkey/inode.h"
#include "btree/btree.h"
#include "btree/bulk.h"
#include "btree/node_write.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/fsread.h"
#include "fs/init.h"
#include "util/util.h"
#include "testutil.h"

static char tmpdir[64], img[128];

static int setup(void **state)
{
	/* tmpfs when there is one: flushes cost nothing there */
	snprintf(tmpdir, sizeof(tmpdir), "/dev/shm/test_bulk.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_bulk.XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
	}
	snprintf(img, sizeof(img), "%s/a.img", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	test_run("rm -rf %s", tmpdir);
	return 0;
}

struct populate {
	size_t		nr_files;
	unsigned	fill;
	size_t		nodes_predicted;
	size_t		inode_nodes, dirent_nodes;
	unsigned	inode_level;
	bool		empty_extents_root;
	int		pool_ret;
};

static void add_inode(struct bulk_keys *l, uint64_t inum, unsigned mode, uint32_t nlink,
		      unsigned str_hash, size_t *u64s)
{
	struct bch_inode_unpacked u = { 0 };
	uint8_t v[BCH_INODE_VAL_BYTES_MAX];
	struct bkey_h k = { .type = 128, .p = POS_H(inum, 0) };
	size_t bytes;

	u.bi_inum = inum;
	u.bi_mode = (uint16_t)mode;
	u.bi_nlink = nlink;
	u.bi_hash_seed = 0x0123456789abcdefULL;	/* every value the same size */
	u.bi_flags = (uint32_t)str_hash << 20;
	bytes = bch_inode_pack(&u, v);
	bulk_keys_add(l, &k, v, (unsigned)bytes);
	if (u64s)
		*u64s = BKEY_U64S_UNPACKED + bytes / 8;
}

static void add_dirent(struct bulk_keys *l, const struct bch_hash_info *hi, const char *name,
		       uint64_t target, unsigned dt)
{
	uint8_t d[64];
	size_t bytes = bch_dirent_encode(target, dt, name, strlen(name), d, sizeof(d));
	struct bkey_h k = { .type = 128,
			    .p = POS_H(BCACHEFS_ROOT_INO, bch_dirent_hash(hi, name, strlen(name))) };

	assert_true(bytes > 0);
	bulk_keys_add(l, &k, d, (unsigned)bytes);
}

static int populate(struct bch_fs *c, struct bch_allocator *a, const struct btree_write_ctx *w,
		    struct bulk_root *roots, void *priv, struct printbuf *err)
{
	struct populate *p = priv;
	struct bulk_keys inodes = { 0 }, dirents = { 0 };
	struct bch_hash_info hi;
	size_t u64s = 0;
	int ret;

	assert_int_equal(bch_hash_info_init(&hi, c->str_hash_type, 0x0123456789abcdefULL), 0);
	add_inode(&inodes, BCACHEFS_ROOT_INO, S_IFDIR | 0755, 1, c->str_hash_type, NULL);
	add_inode(&inodes, 4097, S_IFDIR | 0700, 0, c->str_hash_type, NULL);
	add_dirent(&dirents, &hi, "lost+found", 4097, BCH_DT_DIR);
	for (size_t i = 0; i < p->nr_files; i++) {
		char name[32];

		add_inode(&inodes, 5000 + i, S_IFREG | 0644, 0, c->str_hash_type, &u64s);
		snprintf(name, sizeof(name), "file%zu", i);
		add_dirent(&dirents, &hi, name, 5000 + i, BCH_DT_REG);
	}
	/* added in inode order; the dirents by hash only after sorting */
	bulk_keys_sort(&dirents);
	for (size_t i = 1; i < dirents.nr; i++)
		assert_true(bpos_cmp(dirents.k[i - 1].k.p, dirents.k[i].k.p) < 0);

	p->nodes_predicted = bch_bulk_nodes_for(w, p->fill, inodes.nr, (unsigned)u64s,
						BKEY_U64S_UNPACKED + 1);
	ret = bch_bulk_build(c, w, a, BTREE_ID_INODES, inodes.k, inodes.nr, p->fill,
			     &roots[BTREE_ID_INODES], err);
	if (!ret)
		ret = bch_bulk_build(c, w, a, BTREE_ID_DIRENTS, dirents.k, dirents.nr, p->fill,
				     &roots[BTREE_ID_DIRENTS], err);
	/* no keys: no root */
	if (!ret)
		ret = bch_bulk_build(c, w, a, BTREE_ID_EXTENTS, NULL, 0, 0,
				     &roots[BTREE_ID_EXTENTS], err);
	p->empty_extents_root = !roots[BTREE_ID_EXTENTS].present;
	p->inode_nodes = roots[BTREE_ID_INODES].nr_nodes;
	p->inode_level = roots[BTREE_ID_INODES].level;
	p->dirent_nodes = roots[BTREE_ID_DIRENTS].nr_nodes;

	/* a pool of one node for many: runs out */
	if (!ret) {
		struct btree_ptr_h ptrs[1][BCH_REPLICAS_MAX];
		unsigned nr_ptrs[1];
		struct bulk_pool pool = { .ptrs = ptrs, .nr_ptrs = nr_ptrs, .nr = 1 };
		struct bulk_root r = { 0 };
		struct printbuf e2 = PRINTBUF;

		assert_int_equal(bch_alloc_btree_node(a, ptrs[0], &nr_ptrs[0], &e2), 0);
		p->pool_ret = bch_bulk_build_pool(c, w, a, BTREE_ID_XATTRS, inodes.k, inodes.nr,
						  p->fill, &pool, &r, &e2);
		printbuf_exit(&e2);
	}
	bulk_keys_exit(&inodes);
	bulk_keys_exit(&dirents);
	return ret;
}

static struct bch_fs *make(struct populate *p)
{
	struct bch_init_opts o = { .populate = populate, .populate_priv = p };
	struct bch_fs_opts fo = { 0 };
	struct printbuf err = PRINTBUF;
	char *devs[1] = { img };
	struct bch_fs *c = NULL;
	int ret;

	assert_int_equal(test_run("rm -f %s && truncate -s 64M %s && %s format -q --force "
				  "--no_initialize --bucket_size=64k --btree_node_size=4k %s",
				  img, img, test_bin(), img), 0);
	assert_int_equal(bch_fs_open(devs, 1, &fo, &c, &err), 0);
	ret = bch_fs_initialize_opts(c, &o, &err);
	if (ret)
		fprintf(stderr, "init: %s\n", printbuf_str(&err));
	assert_int_equal(ret, 0);
	printbuf_exit(&err);
	return c;
}

static size_t count_keys(struct bch_fs *c, unsigned id, uint64_t *first, uint64_t *last)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	struct bpos_h prev = POS_H_MIN;
	size_t n = 0;

	bch_btree_iter_init(&iter, c, id, POS_H_MIN, NULL);
	while (!bch_btree_iter_peek(&iter, &k) && k) {
		if (n)
			assert_true(bpos_cmp(prev, k->k.p) < 0);
		else if (first)
			*first = k->k.p.inode;
		prev = k->k.p;
		n++;
		bch_btree_iter_advance(&iter);
	}
	assert_int_equal(iter.nr_errors, 0);
	bch_btree_iter_exit(&iter);
	if (last)
		*last = prev.inode;
	return n;
}

static void test_build(void **state)
{
	struct populate p = { .nr_files = 4000 };
	struct bch_fs *c = make(&p);
	uint64_t first, last, inum;

	/*
	 * 4 KiB nodes: many leaves, an interior level; each leaf holds no
	 * more keys than a node's worth of key list (3 KiB after the header)
	 */
	assert_true(p.inode_nodes > 20);
	assert_true(p.inode_nodes >= 4002 * sizeof(struct bkey_ref) / 3072);
	assert_true(p.inode_level >= 1);
	assert_true(p.dirent_nodes > 20);
	assert_true(p.empty_extents_root);
	assert_int_equal(p.pool_ret, -ENOSPC);
	assert_int_equal(c->roots[BTREE_ID_INODES].level, p.inode_level);

	assert_int_equal(count_keys(c, BTREE_ID_INODES, &first, &last), 4002);
	assert_int_equal(first, BCACHEFS_ROOT_INO);
	assert_int_equal(last, 5000 + 3999);
	assert_int_equal(count_keys(c, BTREE_ID_DIRENTS, NULL, NULL), 4001);
	assert_int_equal(count_keys(c, BTREE_ID_EXTENTS, NULL, NULL), 0);
	assert_int_equal(bch_lookup_path(c, "/file3999", &inum, NULL), 0);
	assert_int_equal(inum, 8999);
	assert_int_equal(bch_lookup_path(c, "/file0", &inum, NULL), 0);
	assert_int_equal(inum, 5000);
	bch_fs_close(c);
	assert_int_equal(test_run("%s fsck -n %s >/dev/null 2>&1", test_bin(), img), 0);
}

/*
 * The fill factor (of the keys' packed size): 15% gives more nodes than
 * the default (these inodes then fill a node unpacked at about 35%
 * packed); above what a 4 KiB node can take after its header (3 KiB),
 * 100% is the same as the default.
 */
static void test_fill(void **state)
{
	struct populate pd = { .nr_files = 2000 }, p15 = { .nr_files = 2000, .fill = 15 };
	struct populate p100 = { .nr_files = 2000, .fill = 100 };
	struct bch_fs *c;

	c = make(&pd);
	bch_fs_close(c);
	c = make(&p100);
	bch_fs_close(c);
	assert_int_equal(p100.inode_nodes, pd.inode_nodes);
	c = make(&p15);
	assert_true(p15.inode_nodes <= p15.nodes_predicted);
	assert_true(p15.inode_nodes > pd.inode_nodes * 3 / 2);
	assert_int_equal(count_keys(c, BTREE_ID_INODES, NULL, NULL), 2002);
	bch_fs_close(c);
	assert_int_equal(test_run("%s fsck -n %s >/dev/null 2>&1", test_bin(), img), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_fill),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
