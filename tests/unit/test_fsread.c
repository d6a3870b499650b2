// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a filesystem (fs/fsread.h) made by our format --source from a
 * small tree built here: a directory of many names read back by readdir
 * (every name once, d_types, resuming at a cookie, stopping early), a
 * sparse file (holes read as zeros; reads past the end, across the end
 * and at odd offsets), a symlink (readlink: length, too small a buffer,
 * not a symlink), xattrs (list, get with size probing, -ERANGE,
 * -ENODATA), hard links (one inode, nlink 2), stat (size, blocks, mode,
 * times with the source's nanoseconds), and path lookups. test_io_read
 * covers the extent reads underneath; here it is the file level.
 *
 * Needs $BCACHEFS (the binary) for format; tests/run.sh sets it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "bkey/inode.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/fsread.h"
#include "util/util.h"
#include "testutil.h"

#define NR_NAMES	300

static char tmpdir[64], img[128], src[128];
static struct bch_fs *c;
static bool have_xattrs;
static struct stat st_sparse;

static void write_at(const char *path, off_t off, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, p, len, off), (ssize_t)len);
	close(fd);
}

static int setup(void **state)
{
	struct bch_fs_opts o = { .read_only = true };
	struct printbuf err = PRINTBUF;
	char path[256], *devs[1];
	uint8_t block[4096];

	snprintf(tmpdir, sizeof(tmpdir), "/dev/shm/test_fsread.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_fsread.XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
	}
	snprintf(img, sizeof(img), "%s/a.img", tmpdir);
	snprintf(src, sizeof(src), "%s/src", tmpdir);
	assert_int_equal(mkdir(src, 0755), 0);

	snprintf(path, sizeof(path), "%s/dir", src);
	assert_int_equal(mkdir(path, 0750), 0);
	for (unsigned i = 0; i < NR_NAMES; i++) {
		snprintf(path, sizeof(path), "%s/dir/n%u", src, i);
		if (i % 3)
			write_at(path, 0, "x", 1);
		else
			assert_int_equal(mkdir(path, 0755), 0);
	}
	/* sparse: 4 KiB at 0, a hole, 4 KiB at 1 MiB, then 10 bytes at 3 MiB + 5 */
	snprintf(path, sizeof(path), "%s/sparse", src);
	for (unsigned i = 0; i < sizeof(block); i++)
		block[i] = (uint8_t)(i * 7 + 1);
	write_at(path, 0, block, sizeof(block));
	write_at(path, 1 << 20, block, sizeof(block));
	write_at(path, (3 << 20) + 5, "0123456789", 10);
	{
		struct timespec ts[2] = { { 1500000000, 123456789 }, { 1600000000, 987654321 } };

		assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
		assert_int_equal(stat(path, &st_sparse), 0);
	}
	snprintf(path, sizeof(path), "%s/link", src);
	assert_int_equal(symlink("dir/n1", path), 0);
	snprintf(path, sizeof(path), "%s/hard1", src);
	write_at(path, 0, "hard", 4);
	{
		char p2[256];

		snprintf(p2, sizeof(p2), "%s/hard2", src);
		assert_int_equal(link(path, p2), 0);
	}
	snprintf(path, sizeof(path), "%s/x", src);
	write_at(path, 0, "", 0);
	have_xattrs = !setxattr(path, "user.small", "v1", 2, 0) &&
		      !setxattr(path, "user.empty", "", 0, 0) &&
		      !setxattr(path, "trusted.t", "tt", 2, 0);

	assert_int_equal(test_run("truncate -s 64M %s && %s format -q --force --source=%s %s "
				  ">/dev/null", img, test_bin(), src, img), 0);
	devs[0] = img;
	assert_int_equal(bch_fs_open(devs, 1, &o, &c, &err), 0);
	printbuf_exit(&err);
	return 0;
}

static int teardown(void **state)
{
	if (c)
		bch_fs_close(c);
	test_run("rm -rf %s", tmpdir);
	return 0;
}

static uint64_t ino(const char *path)
{
	uint64_t inum = 0;

	assert_int_equal(bch_lookup_path(c, path, &inum, NULL), 0);
	return inum;
}

struct rd {
	unsigned	seen[NR_NAMES];
	unsigned	nr, stop_after;
	uint64_t	last_cookie;
	unsigned	nr_dirs;
};

static int rd_fn(void *arg, const char *name, size_t len, uint64_t inum, unsigned d_type,
		 uint64_t cookie)
{
	struct rd *r = arg;
	unsigned i;

	assert_true(len >= 2 && name[0] == 'n');
	i = (unsigned)strtoul(name + 1, NULL, 10);
	assert_true(i < NR_NAMES);
	r->seen[i]++;
	assert_int_equal(d_type, i % 3 ? BCH_DT_REG : BCH_DT_DIR);
	r->nr_dirs += d_type == BCH_DT_DIR;
	assert_true(cookie > r->last_cookie);		/* hash order */
	r->last_cookie = cookie;
	return ++r->nr == r->stop_after ? 1 : 0;
}

static void test_readdir(void **state)
{
	uint64_t dir = ino("/dir");
	unsigned long nr_bad = 0;
	struct rd r = { .nr = 0 };
	struct rd r2 = { .nr = 0 };

	assert_int_equal(bch_readdir(c, dir, 0, rd_fn, &r, &nr_bad, NULL), 0);
	assert_int_equal(nr_bad, 0);
	assert_int_equal(r.nr, NR_NAMES);
	assert_int_equal(r.nr_dirs, NR_NAMES / 3);
	for (unsigned i = 0; i < NR_NAMES; i++)
		assert_int_equal(r.seen[i], 1);

	/* stop after 100: the callback's value comes back; go on from its cookie */
	r.stop_after = 100;
	memset(r.seen, 0, sizeof(r.seen));
	r.nr = 0;
	r.last_cookie = 0;
	assert_int_equal(bch_readdir(c, dir, 0, rd_fn, &r, NULL, NULL), 1);
	assert_int_equal(r.nr, 100);
	r2.last_cookie = r.last_cookie;
	assert_int_equal(bch_readdir(c, dir, r.last_cookie, rd_fn, &r2, NULL, NULL), 0);
	assert_int_equal(r2.nr, NR_NAMES - 100);
	for (unsigned i = 0; i < NR_NAMES; i++)
		assert_int_equal(r.seen[i] + r2.seen[i], 1);

	/* cookies 0, 1 and 2 all start at the beginning */
	memset(&r2, 0, sizeof(r2));
	assert_int_equal(bch_readdir(c, dir, 2, rd_fn, &r2, NULL, NULL), 0);
	assert_int_equal(r2.nr, NR_NAMES);
	/* past every entry: nothing */
	memset(&r2, 0, sizeof(r2));
	assert_int_equal(bch_readdir(c, dir, UINT64_MAX, rd_fn, &r2, NULL, NULL), 0);
	assert_int_equal(r2.nr, 0);
}

static void test_sparse_read(void **state)
{
	struct bch_inode_unpacked u;
	struct bch_stat st;
	uint8_t *buf = xmalloc(2 << 20), block[4096];
	uint64_t size = (3 << 20) + 15;
	struct bch_file *f = xcalloc(1, sizeof(*f));

	for (unsigned i = 0; i < sizeof(block); i++)
		block[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(bch_inode_get(c, ino("/sparse"), &u, NULL), 0);
	bch_inode_stat(c, &u, &st);
	assert_int_equal(st.size, size);
	assert_int_equal(st.blocks, 8 + 8 + 8);		/* three 4 KiB blocks, not the holes */
	assert_true(S_ISREG(st.mode));
	assert_int_equal(st.mode & 07777, 0644);
	assert_int_equal(st.nlink, 1);
	/* times with their nanoseconds, through the stored precision */
	assert_int_equal(st.mtime.tv_sec, st_sparse.st_mtim.tv_sec);
	assert_int_equal(st.mtime.tv_nsec, st_sparse.st_mtim.tv_nsec);
	assert_int_equal(st.atime.tv_sec, st_sparse.st_atim.tv_sec);

	bch_file_open(c, &u, f);
	/* data, hole, data, in one read across them */
	assert_int_equal(bch_file_read(f, 0, buf, (1 << 20) + 4096, NULL, NULL), (1 << 20) + 4096);
	assert_memory_equal(buf, block, 4096);
	for (size_t i = 4096; i < (1 << 20); i++)
		if (buf[i])
			fail_msg("hole byte %zu is %u", i, buf[i]);
	assert_memory_equal(buf + (1 << 20), block, 4096);
	/* odd offset and length inside a block */
	assert_int_equal(bch_file_read(f, 1001, buf, 7, NULL, NULL), 7);
	assert_memory_equal(buf, block + 1001, 7);
	/* across the end: clamped; at and past it: 0 */
	assert_int_equal(bch_file_read(f, size - 10, buf, 100, NULL, NULL), 10);
	assert_memory_equal(buf, "0123456789", 10);
	assert_int_equal(bch_file_read(f, size, buf, 100, NULL, NULL), 0);
	assert_int_equal(bch_file_read(f, size + 5000, buf, 100, NULL, NULL), 0);
	/* backwards after forwards: the iterator goes back */
	assert_int_equal(bch_file_read(f, 0, buf, 16, NULL, NULL), 16);
	assert_memory_equal(buf, block, 16);
	bch_file_close(f);
	free(f);

	/* the one-call form */
	assert_int_equal(bch_read(c, ino("/sparse"), (1 << 20) + 4000, buf, 200, NULL), 200);
	assert_memory_equal(buf, block + 4000, 96);
	assert_int_equal(buf[96], 0);
	free(buf);
}

static void test_links(void **state)
{
	struct bch_inode_unpacked u;
	struct bch_stat st;
	char buf[64];

	/* a symlink: its target, with and without room */
	assert_int_equal(bch_inode_get(c, ino("/link"), &u, NULL), 0);
	assert_int_equal(bch_readlink(c, &u, buf, sizeof(buf), NULL), 6);
	assert_string_equal(buf, "dir/n1");
	assert_int_equal(bch_readlink(c, &u, buf, 7, NULL), 6);
	assert_int_equal(bch_readlink(c, &u, buf, 6, NULL), -ENAMETOOLONG);
	/* not a symlink */
	assert_int_equal(bch_inode_get(c, ino("/hard1"), &u, NULL), 0);
	assert_int_equal(bch_readlink(c, &u, buf, sizeof(buf), NULL), -EINVAL);
	/* symlinks are not followed inside a path */
	{
		struct printbuf err = PRINTBUF;
		uint64_t inum, n4 = ino("/dir/n4");

		assert_int_equal(bch_lookup_path(c, "/link/x", &inum, &err), -ENOTDIR);
		assert_int_equal(bch_lookup_path(c, "//dir//n4/", &inum, &err), 0);
		assert_int_equal(inum, n4);
		assert_int_equal(bch_lookup_path(c, "/dir/./n4", &inum, &err), 0);
		assert_int_equal(inum, n4);
		assert_int_equal(bch_lookup_path(c, "/dir/../x", &inum, &err), -EINVAL);
		assert_int_equal(bch_lookup_path(c, "/dir/none", &inum, &err), -ENOENT);
		assert_int_equal(bch_lookup_path(c, "/dir/n1/y", &inum, &err), -ENOTDIR);
		assert_int_equal(bch_lookup_path(c, "/", &inum, &err), 0);
		assert_int_equal(inum, BCACHEFS_ROOT_INO);
		assert_int_equal(bch_lookup_path(c, "", &inum, &err), 0);
		assert_int_equal(inum, BCACHEFS_ROOT_INO);
		printbuf_exit(&err);
	}
	/* hard links: one inode, two links */
	assert_int_equal(ino("/hard1"), ino("/hard2"));
	bch_inode_stat(c, &u, &st);
	assert_int_equal(st.nlink, 2);
	assert_int_equal(st.size, 4);
	assert_int_equal(bch_read(c, ino("/hard2"), 0, buf, sizeof(buf), NULL), 4);
	assert_memory_equal(buf, "hard", 4);
}

struct xl {
	unsigned	nr;
	char		names[8][32];
};

static int xl_fn(void *arg, unsigned x_type, const char *name, size_t name_len,
		 const void *val, size_t val_len)
{
	struct xl *x = arg;

	int n;

	assert_true(x->nr < 8);
	n = bch_xattr_full_name(x_type, name, name_len, x->names[x->nr], 32);
	assert_int_equal(n, (int)strlen(x->names[x->nr]));
	if (!strcmp(x->names[x->nr], "user.small")) {
		assert_int_equal(val_len, 2);
		assert_memory_equal(val, "v1", 2);
	}
	x->nr++;
	return 0;
}

static void test_xattrs(void **state)
{
	struct bch_inode_unpacked u;
	struct xl x = { 0 };
	unsigned long nr_bad = 0;
	char buf[16];
	bool small = false, empty = false, trusted = false;

	if (!have_xattrs) {
		print_message("(no user/trusted xattrs on %s: skipped)\n", tmpdir);
		skip();
	}
	assert_int_equal(bch_inode_get(c, ino("/x"), &u, NULL), 0);
	assert_int_equal(bch_xattr_list(c, u.bi_inum, xl_fn, &x, &nr_bad, NULL), 0);
	assert_int_equal(nr_bad, 0);
	assert_int_equal(x.nr, 3);
	for (unsigned i = 0; i < x.nr; i++) {
		small |= !strcmp(x.names[i], "user.small");
		empty |= !strcmp(x.names[i], "user.empty");
		trusted |= !strcmp(x.names[i], "trusted.t");
	}
	assert_true(small && empty && trusted);

	/* the size alone, then the value; too small; empty; missing */
	assert_int_equal(bch_xattr_get(c, &u, "user.small", NULL, 0, NULL), 2);
	assert_int_equal(bch_xattr_get(c, &u, "user.small", buf, sizeof(buf), NULL), 2);
	assert_memory_equal(buf, "v1", 2);
	assert_int_equal(bch_xattr_get(c, &u, "user.small", buf, 1, NULL), -ERANGE);
	assert_int_equal(bch_xattr_get(c, &u, "user.empty", buf, sizeof(buf), NULL), 0);
	assert_int_equal(bch_xattr_get(c, &u, "trusted.t", buf, sizeof(buf), NULL), 2);
	assert_int_equal(bch_xattr_get(c, &u, "user.none", buf, sizeof(buf), NULL), -ENODATA);
	assert_int_equal(bch_xattr_get(c, &u, "trusted.small", buf, sizeof(buf), NULL), -ENODATA);
	/* another inode has none */
	memset(&x, 0, sizeof(x));
	assert_int_equal(bch_xattr_list(c, ino("/hard1"), xl_fn, &x, NULL, NULL), 0);
	assert_int_equal(x.nr, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readdir),
		cmocka_unit_test(test_sparse_read),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_xattrs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
