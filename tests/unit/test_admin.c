// SPDX-License-Identifier: GPL-2.0
/*
 * Administration in-process (admin/admin.h, admin_dev.h, data_job.h,
 * call.h): the dispatcher's refusals (unknown number, argument size,
 * privilege), QUERY_UUID, USAGE counted exactly on a filesystem with known
 * data (doc/engine.md §8.2-§8.6), READ_SUPER, per-replicas usage lines, member lookup,
 * SET_STATE, RESIZE, a scrub job read through its descriptor to its end,
 * and a migrate job followed by DISK_REMOVE of the emptied device. The
 * same calls through the mount's control socket are the shell tests of
 * tests/online; here they are the engine functions, without a mount.
 *
 * Needs $BCACHEFS (the binary) for format; tests/run.sh sets it.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin/admin.h"
#include "admin/admin_dev.h"
#include "admin/call.h"
#include "admin/ctl_proto.h"
#include "admin/data_job.h"
#include "alloc/alloc.h"
#include "bkey/dirent.h"
#include "bkey/extents.h"
#include "bkey/inode.h"
#include "btree/btree_update.h"
#include "btree/bulk.h"
#include "dev/super.h"
#include "format/format.h"
#include "format/ioctl.h"
#include "fs/fs.h"
#include "fs/fsread.h"
#include "fs/io_write.h"
#include "util/util.h"
#include "testutil.h"

static char tmpdir[64], img[128], img2[128];

static int setup(void **state)
{
	/* tmpfs when there is one: flushes cost nothing there */
	snprintf(tmpdir, sizeof(tmpdir), "/dev/shm/test_admin.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_admin.XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
	}
	snprintf(img, sizeof(img), "%s/a.img", tmpdir);
	snprintf(img2, sizeof(img2), "%s/b.img", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	test_run("rm -rf %s", tmpdir);
	return 0;
}

/* Regular file @inum named "f" in the root, of @sectors (its extents are the caller's). */
static void add_file(struct bch_fs *c, struct btree_trans *t, uint64_t inum, uint64_t sectors)
{
	struct bch_inode_unpacked root, u = { 0 };
	struct bch_hash_info hi;
	uint8_t v[BCH_INODE_VAL_BYTES_MAX], d[64];
	struct bkey_h k = { .type = 128, .p = POS_H(inum, 0) };
	size_t bytes;

	assert_int_equal(bch_inode_get(c, BCACHEFS_ROOT_INO, &root, NULL), 0);
	assert_int_equal(bch_hash_info_init(&hi, bch_inode_str_hash(&root), root.bi_hash_seed), 0);
	u.bi_inum = inum;
	u.bi_mode = S_IFREG | 0644;
	u.bi_size = sectors * 512;
	u.bi_sectors = sectors;
	u.bi_hash_seed = 12345;
	u.bi_flags = (uint32_t)hi.type << 20;
	bytes = bch_inode_pack(&u, v);
	bch_trans_update(t, BTREE_ID_INODES, &k, v, (unsigned)bytes);
	bytes = bch_dirent_encode(inum, BCH_DT_REG, "f", 1, d, sizeof(d));
	k.p = POS_H(BCACHEFS_ROOT_INO, bch_dirent_hash(&hi, "f", 1));
	bch_trans_update(t, BTREE_ID_DIRENTS, &k, d, (unsigned)bytes);
}

/* Two 32 MiB devices of 32 KiB buckets; the engine started; @sectors of data for inode 5000. */
static struct bch_fs *fs_with_data(uint64_t sectors)
{
	struct bch_fs_opts o = { 0 };
	struct printbuf err = PRINTBUF;
	char *devs[2] = { img, img2 };
	struct bulk_keys keys = { 0 };
	struct bch_io_opts io;
	struct btree_trans t;
	struct bch_fs *c = NULL;
	uint8_t *data = xcalloc(sectors ?: 1, 512);

	assert_int_equal(test_run("rm -f %s %s && truncate -s 32M %s %s && %s format -q --force "
				  "--bucket_size=32k --btree_node_size=16k %s %s",
				  img, img2, img, img2, test_bin(), img, img2), 0);
	assert_int_equal(bch_fs_open(devs, 2, &o, &c, &err), 0);
	assert_int_equal(bch_fs_rw_start(c, &err), 0);
	if (sectors) {
		bch_io_opts_get(c, NULL, &io);
		io.foreground_target = 1;	/* device 0 */
		memset(data, 0x5a, sectors * 512);
		assert_int_equal(bch_write_extents(c, &io, 5000, 0, data, sectors, &keys, &err),
				 (int64_t)sectors);
		bch_trans_init(&t, c);
		add_file(c, &t, 5000, sectors);
		for (size_t i = 0; i < keys.nr; i++)
			bch_trans_update(&t, BTREE_ID_EXTENTS, &keys.k[i].k, keys.k[i].v,
					 keys.k[i].v_bytes);
		assert_int_equal(bch_trans_commit(&t, &err), 0);
		bch_trans_exit(&t);
		bulk_keys_exit(&keys);
	}
	free(data);
	printbuf_exit(&err);
	return c;
}

static void stop_close(struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;

	assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	bch_fs_close(c);
	printbuf_exit(&err);
}

/* One call; its result. The message is kept in @out (reset first). */
static int call(struct bch_admin *a, uint32_t nr, void *arg, size_t bytes, bool priv,
		const char *path, struct bch_admin_out *out)
{
	struct bch_admin_call c = {
		.nr = nr, .arg = arg, .arg_bytes = bytes, .path = path, .fd = -1,
		.privileged = priv,
	};

	bch_admin_out_exit(out);
	*out = BCH_ADMIN_OUT_INIT;
	return bch_admin_ioctl(a, &c, out);
}

static void test_refusals_and_queries(void **state)
{
	struct bch_fs *c = fs_with_data(0);
	struct bch_admin *a = bch_admin_new(c, false);
	struct bch_admin_out out = BCH_ADMIN_OUT_INIT;
	struct bch_ioctl_query_uuid q;
	struct bch_ioctl_disk_set_state st = { .flags = BCH_BY_INDEX, .new_state = 1, .dev = 1 };
	uint64_t junk[4] = { 0 };

	/* unknown number; an argument of the wrong size; not privileged */
	assert_int_equal(call(a, 0xdeadbeef, junk, 8, true, NULL, &out), -ENOTTY);
	assert_int_equal(call(a, BCH_IOCTL_QUERY_UUID, junk, 8, true, NULL, &out), -EINVAL);
	assert_non_null(strstr(printbuf_str(&out.msg), "wrong size"));
	assert_int_equal(call(a, BCH_IOCTL_DISK_SET_STATE, &st, sizeof(st), false, NULL, &out),
			 -EPERM);
	assert_non_null(strstr(printbuf_str(&out.msg), "only root"));
	assert_int_equal(BCH_MEMBER_STATE(bch_sb_member(c->sb, 1)), BCH_MEMBER_STATE_RW);

	/* QUERY_UUID: the external uuid, written back */
	memset(&q, 0, sizeof(q));
	assert_int_equal(call(a, BCH_IOCTL_QUERY_UUID, &q, sizeof(q), false, NULL, &out), 0);
	assert_int_equal(out.bytes, 16);
	assert_memory_equal(out.data, c->user_uuid, 16);

	/* READ_SUPER: the superblock in use; a buffer too small */
	{
		struct bch_ioctl_read_super rs = { .size = 64 };

		assert_int_equal(call(a, BCH_IOCTL_READ_SUPER, &rs, sizeof(rs), true, NULL, &out),
				 -ERANGE);
		rs.size = 1 << 20;
		assert_int_equal(call(a, BCH_IOCTL_READ_SUPER, &rs, sizeof(rs), true, NULL, &out), 0);
		assert_int_equal(out.bytes, bch_sb_bytes(c->sb));
		assert_memory_equal(out.data, c->sb, out.bytes);
		rs.flags = 1U << 30;
		assert_int_equal(call(a, BCH_IOCTL_READ_SUPER, &rs, sizeof(rs), true, NULL, &out),
				 -EINVAL);
	}

	/* member lookup: by index, by path */
	{
		struct printbuf msg = PRINTBUF;
		unsigned idx = 99;

		assert_int_equal(bch_fs_member_lookup(c, BCH_BY_INDEX, 1, NULL, &idx, &msg), 0);
		assert_int_equal(idx, 1);
		assert_int_equal(bch_fs_member_lookup(c, 0, 0, img2, &idx, &msg), 0);
		assert_int_equal(idx, 1);
		assert_int_equal(bch_fs_member_lookup(c, BCH_BY_INDEX, 5, NULL, &idx, &msg), -EINVAL);
		assert_non_null(strstr(printbuf_str(&msg), "no member device with index 5"));
		printbuf_reset(&msg);
		assert_int_equal(bch_fs_member_lookup(c, 0, 0, "/nonexistent/x", &idx, &msg), -ENOENT);
		printbuf_exit(&msg);
	}
	bch_admin_out_exit(&out);
	assert_null(out.data);
	bch_admin_free(a);
	stop_close(c);
}

static void test_usage(void **state)
{
	struct bch_fs *c = fs_with_data(64);
	struct bch_admin *a = bch_admin_new(c, false);
	struct bch_admin_out out = BCH_ADMIN_OUT_INIT;
	size_t bytes = sizeof(struct bch_ioctl_usage) + 2 * sizeof(struct bch_ioctl_dev_usage);
	struct bch_ioctl_usage *u = xcalloc(1, bytes);
	const struct bch_ioctl_usage *r;
	uint64_t user = 0, btree = 0;

	/* one device slot for two members: -ERANGE */
	u->nr_devices = 1;
	assert_int_equal(call(a, BCH_IOCTL_USAGE, u, sizeof(*u) + sizeof(u->devs[0]), false, NULL,
			      &out), -ERANGE);
	u->nr_devices = 2;
	assert_int_equal(call(a, BCH_IOCTL_USAGE, u, bytes, false, NULL, &out), 0);
	assert_int_equal(out.bytes, bytes);
	r = out.data;
	for (unsigned i = 0; i < 2; i++) {
		const struct bch_ioctl_dev_usage *d = &r->devs[i];

		assert_int_equal(d->state, BCH_MEMBER_STATE_RW);
		assert_int_equal(d->alive, 1);
		assert_int_equal(d->bucket_size, 64);
		assert_int_equal(d->nr_buckets, 1024);
		assert_int_equal(d->buckets[BCH_DATA_SB], 5);
		assert_int_equal(d->buckets[BCH_DATA_JOURNAL], 20);
		assert_int_equal(d->sectors[BCH_DATA_JOURNAL], 20 * 64);
		user += d->sectors[BCH_DATA_USER];
		btree += d->sectors[BCH_DATA_BTREE];
	}
	/* the 64 sectors written, one copy, on device 0 (the target) */
	assert_int_equal(r->devs[0].sectors[BCH_DATA_USER], 64);
	assert_int_equal(r->devs[0].buckets[BCH_DATA_USER], 1);
	assert_int_equal(user, 64);
	assert_int_equal(r->fs.sectors[BCH_DATA_USER][0], 64);
	assert_int_equal(r->fs.sectors[BCH_DATA_USER][1], 0);
	assert_int_equal(r->fs.sectors[BCH_DATA_BTREE][0], btree);
	assert_true(btree > 0 && btree % 32 == 0);		/* whole 16 KiB nodes */
	/* the raw capacity of the two devices (no gc reserve taken off) */
	assert_true(r->fs.capacity > 0 && r->fs.capacity <= 2 * 1024 * 64);
	assert_true(r->fs.used >= 64 + btree);

	/* the replicas lines: our entry with its 64 sectors */
	{
		struct printbuf rl = PRINTBUF;

		assert_int_equal(bch_fs_usage_replicas(c, &rl), 0);
		/* user data, device 0: 64 sectors on disk, 64 uncompressed */
		assert_non_null(strstr(printbuf_str(&rl), "\n4 1 64 64\n"));
		assert_null(strstr(printbuf_str(&rl), "unmarked"));
		printbuf_exit(&rl);
	}
	free(u);
	/* the answer freed and emptied (call.h): usable again */
	assert_non_null(out.data);
	bch_admin_out_exit(&out);
	assert_null(out.data);
	assert_int_equal(out.bytes, 0);
	assert_int_equal(out.job_fd, -1);
	assert_int_equal(out.msg.pos, 0);
	bch_admin_free(a);
	stop_close(c);
}

static void test_set_state_resize(void **state)
{
	struct bch_fs *c = fs_with_data(0);
	struct bch_admin *a = bch_admin_new(c, false);
	struct bch_admin_out out = BCH_ADMIN_OUT_INIT;
	struct bch_ioctl_disk_set_state st = { .flags = BCH_BY_INDEX, .new_state = 1, .dev = 1 };
	struct bch_ioctl_disk_resize rs = { .flags = BCH_BY_INDEX, .dev = 1, .nbuckets = 1536 };
	uint64_t free0;

	assert_int_equal(call(a, BCH_IOCTL_DISK_SET_STATE, &st, sizeof(st), true, NULL, &out), 0);
	assert_int_equal(BCH_MEMBER_STATE(bch_sb_member(c->sb, 1)), BCH_MEMBER_STATE_RO);
	/* the other one cannot go read-only too */
	st.dev = 0;
	assert_int_equal(call(a, BCH_IOCTL_DISK_SET_STATE, &st, sizeof(st), true, NULL, &out),
			 -EINVAL);
	assert_non_null(strstr(printbuf_str(&out.msg), "cannot go read-only"));
	/* no state 9; padding must be 0 */
	st.dev = 1;
	st.new_state = 9;
	assert_int_equal(call(a, BCH_IOCTL_DISK_SET_STATE, &st, sizeof(st), true, NULL, &out),
			 -EINVAL);
	st.new_state = 0;
	st.pad[1] = 1;
	assert_int_equal(call(a, BCH_IOCTL_DISK_SET_STATE, &st, sizeof(st), true, NULL, &out),
			 -EINVAL);
	st.pad[1] = 0;
	assert_int_equal(call(a, BCH_IOCTL_DISK_SET_STATE, &st, sizeof(st), true, NULL, &out), 0);
	assert_int_equal(BCH_MEMBER_STATE(bch_sb_member(c->sb, 1)), BCH_MEMBER_STATE_RW);

	/* resize: not past the device's end; then grown after the file grew */
	free0 = bch_alloc_dev_free(bch_fs_rw_alloc(c), 1);
	assert_int_equal(call(a, BCH_IOCTL_DISK_RESIZE, &rs, sizeof(rs), true, NULL, &out), -EINVAL);
	assert_non_null(strstr(printbuf_str(&out.msg), "holds 1024 buckets"));
	assert_int_equal(test_run("truncate -s 48M %s", img2), 0);
	assert_int_equal(call(a, BCH_IOCTL_DISK_RESIZE, &rs, sizeof(rs), true, NULL, &out), 0);
	assert_int_equal(le64_to_cpu(bch_sb_member(c->sb, 1)->nbuckets), 1536);
	assert_int_equal(bch_alloc_dev_free(bch_fs_rw_alloc(c), 1), free0 + 512);
	/* shrinking is refused, by one bucket too */
	rs.nbuckets = 1535;
	assert_int_equal(call(a, BCH_IOCTL_DISK_RESIZE, &rs, sizeof(rs), true, NULL, &out), -EINVAL);
	assert_non_null(strstr(printbuf_str(&out.msg), "cannot shrink"));
	bch_admin_out_exit(&out);
	bch_admin_free(a);
	stop_close(c);

	/* on disk */
	{
		struct bch_fs_opts o = { .read_only = true };
		struct printbuf err = PRINTBUF;
		char *devs[2] = { img, img2 };

		assert_int_equal(bch_fs_open(devs, 2, &o, &c, &err), 0);
		assert_int_equal(le64_to_cpu(bch_sb_member(c->sb, 1)->nbuckets), 1536);
		bch_fs_close(c);
		printbuf_exit(&err);
	}
}

/*
 * Follow a job through its descriptor (ctl_proto.h: one request, one
 * reply) to its end: the last progress record and the result.
 */
static struct bch_ioctl_data_progress job_wait(int fd, struct bch_job_result *res)
{
	struct bch_job_req req = { .magic = BCH_CTL_JOB_MAGIC, .type = BCH_JOB_REQ_PROGRESS };
	struct bch_ioctl_data_event e;
	struct bch_ioctl_data_progress last = { 0 };
	uint8_t buf[sizeof(*res) + 4096];
	unsigned n = 0;

	for (;;) {
		assert_int_equal(send(fd, &req, sizeof(req), 0), sizeof(req));
		assert_int_equal(recv(fd, &e, sizeof(e), 0), sizeof(e));
		assert_int_equal(e.type, BCH_DATA_EVENT_PROGRESS);
		last = e.p;
		if (e.p.data_type == BCH_DATA_PROGRESS_DONE)
			break;
		assert_true(e.p.sectors_done <= e.p.sectors_total);
		assert_true(++n < 100000);
		usleep(1000);
	}
	req.type = BCH_JOB_REQ_RESULT;
	assert_int_equal(send(fd, &req, sizeof(req), 0), sizeof(req));
	assert_true(recv(fd, buf, sizeof(buf), 0) >= (ssize_t)sizeof(*res));
	memcpy(res, buf, sizeof(*res));
	assert_int_equal(res->magic, BCH_CTL_JOB_MAGIC);
	assert_int_equal(res->done, 1);
	close(fd);
	return last;
}

static void test_jobs(void **state)
{
	struct bch_fs *c = fs_with_data(256);
	struct bch_admin *a = bch_admin_new(c, false);
	struct bch_admin_out out = BCH_ADMIN_OUT_INIT;
	struct bch_ioctl_data d = { .op = BCH_DATA_OP_SCRUB, .end = { .inode = ~0ULL,
								     .offset = ~0ULL,
								     .snapshot = ~0U } };
	struct bch_ioctl_disk rm = { .flags = BCH_BY_INDEX, .dev = 0 };
	struct bch_ioctl_data_progress p;
	struct bch_job_result res;

	/* scrub: every sector read and verified, nothing wrong */
	assert_int_equal(call(a, BCH_IOCTL_DATA, &d, sizeof(d), true, NULL, &out), 0);
	assert_true(out.job_fd >= 0);
	p = job_wait(out.job_fd, &res);
	out.job_fd = -1;
	assert_int_equal(p.data_type, BCH_DATA_PROGRESS_DONE);
	assert_int_equal(p.sectors_done, p.sectors_total);
	assert_true(p.sectors_done >= 256);
	assert_int_equal(res.ret, 0);
	assert_int_equal(res.errors, 0);
	assert_int_equal(res.repaired, 0);
	assert_int_equal(res.sectors_moved, 0);
	bch_jobs_reap(a, true);

	/* an unknown op; flags must be 0 */
	d.op = 7;
	assert_true(call(a, BCH_IOCTL_DATA, &d, sizeof(d), true, NULL, &out) < 0);
	assert_int_equal(out.job_fd, -1);
	d.op = BCH_DATA_OP_SCRUB;
	d.flags = 1;
	assert_true(call(a, BCH_IOCTL_DATA, &d, sizeof(d), true, NULL, &out) < 0);
	d.flags = 0;

	/* device 0 holds the only copy: removing it is refused */
	assert_int_equal(call(a, BCH_IOCTL_DISK_REMOVE, &rm, sizeof(rm), true, NULL, &out), -EINVAL);
	assert_non_null(strstr(printbuf_str(&out.msg), "Cannot remove without losing data"));
	assert_true(bch_sb_member_exists(c->sb, 0));

	/* migrate it off device 0 (read-only first, as `device evacuate` does), then remove */
	{
		struct bch_ioctl_disk_set_state st = { .flags = BCH_BY_INDEX, .new_state = 1,
						       .dev = 0 };

		assert_int_equal(call(a, BCH_IOCTL_DISK_SET_STATE, &st, sizeof(st), true, NULL,
				      &out), 0);
	}
	d.op = BCH_DATA_OP_MIGRATE;
	d.migrate.dev = 0;
	assert_int_equal(call(a, BCH_IOCTL_DATA, &d, sizeof(d), true, NULL, &out), 0);
	p = job_wait(out.job_fd, &res);
	out.job_fd = -1;
	assert_int_equal(p.data_type, BCH_DATA_PROGRESS_DONE);
	assert_int_equal(res.ret, 0);
	assert_int_equal(res.sectors_moved, 256);	/* the data, now on device 1 */
	assert_true(res.extents_moved >= 2);
	bch_jobs_reap(a, true);
	assert_int_equal(call(a, BCH_IOCTL_DISK_REMOVE, &rm, sizeof(rm), true, NULL, &out), 0);
	assert_false(bch_sb_member_exists(c->sb, 0));
	assert_int_equal(bch_sb_nr_live_members(c->sb), 1);
	bch_admin_out_exit(&out);
	bch_admin_free(a);
	stop_close(c);

	/* device 1 alone is the filesystem now, data and all: our fsck says so */
	assert_int_equal(test_run("%s fsck -n %s >/dev/null 2>&1", test_bin(), img2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals_and_queries),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_set_state_resize),
		cmocka_unit_test(test_jobs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
