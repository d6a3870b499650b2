// SPDX-License-Identifier: GPL-2.0
/*
 * Reaching a filesystem to administer it (admin/handle.h) and the mount's
 * control endpoint (mount/ctl.h), in one process without FUSE: the
 * endpoint is started on an open filesystem with BCACHEFS_RUN_DIR in a
 * scratch folder, and a client handle finds it by UUID and by member
 * device; ioctls go through the socket (QUERY_UUID, USAGE, SET_STATE,
 * a refused request with its reason, a scrub job followed through its
 * descriptor to its result). Once the endpoint is stopped the socket is
 * gone and the filesystem is "not mounted"; then it is opened in-process
 * (read-only and read-write) through the same call. Member superblock
 * reads and refusals of things that are not bcachefs.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admin/admin.h"
#include "admin/ctl_proto.h"
#include "admin/handle.h"
#include "btree/btree_update.h"
#include "dev/super.h"
#include "format/format.h"
#include "format/ioctl.h"
#include "fs/fs.h"
#include "mount/ctl.h"
#include "util/util.h"
#include "testutil.h"

static char tmpdir[64], img[128], rundir[128], junk[128];

static int setup(void **state)
{
	/* tmpfs when there is one: flushes cost nothing there */
	snprintf(tmpdir, sizeof(tmpdir), "/dev/shm/test_handle.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_handle.XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
	}
	snprintf(img, sizeof(img), "%s/a.img", tmpdir);
	snprintf(rundir, sizeof(rundir), "%s/run", tmpdir);
	snprintf(junk, sizeof(junk), "%s/junk", tmpdir);
	assert_int_equal(mkdir(rundir, 0755), 0);
	assert_int_equal(setenv("BCACHEFS_RUN_DIR", rundir, 1), 0);
	assert_int_equal(test_run("head -c 1048576 /dev/zero > %s", junk), 0);
	assert_int_equal(test_run("truncate -s 32M %s && %s format -q --force --bucket_size=32k "
				  "--btree_node_size=16k %s", img, test_bin(), img), 0);
	return 0;
}

static int teardown(void **state)
{
	test_run("rm -rf %s", tmpdir);
	return 0;
}

static void uuid_str(const uint8_t u[16], char *out)
{
	struct printbuf p = PRINTBUF;

	pr_uuid(&p, u);
	strcpy(out, printbuf_str(&p));
	printbuf_exit(&p);
}

static void test_paths_and_sb(void **state)
{
	struct printbuf p = PRINTBUF, err = PRINTBUF;
	uint8_t u[16], zero[16] = { 0 };
	unsigned idx = 9;
	struct bch_handle *h = (void *)1;

	assert_string_equal(bch_run_dir(), rundir);
	bch_ctl_socket_path(zero, &p);
	{
		char want[256];

		snprintf(want, sizeof(want), "%s/00000000-0000-0000-0000-000000000000/ctl", rundir);
		assert_string_equal(printbuf_str(&p), want);
	}

	assert_int_equal(bch_member_sb_read(img, u, &idx, &err), 0);
	assert_int_equal(idx, 0);
	assert_false(uuid_is_zero(u));
	assert_int_equal(bch_member_sb_read(junk, u, &idx, &err), -ENOTTY);
	assert_true(bch_member_sb_read("/nonexistent/x", u, &idx, &err) < 0);

	/* not bcachefs; nothing there; not mounted and no in-process open allowed */
	printbuf_reset(&err);
	assert_int_equal(bch_handle_open(junk, BCH_OPEN_OFFLINE_RO, &h, &err), -ENOTTY);
	assert_null(h);
	assert_non_null(strstr(printbuf_str(&err), "not a bcachefs filesystem"));
	assert_int_equal(bch_handle_open("/nonexistent/x", 0, &h, &err), -ENOENT);
	printbuf_reset(&err);
	assert_int_equal(bch_handle_open(img, 0, &h, &err), -ENXIO);
	assert_null(h);
	printbuf_exit(&p);
	printbuf_exit(&err);
}

static void test_socket(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_fs_opts o = { 0 };
	char *devs[1] = { img }, us[40];
	struct bch_fs *c = NULL;
	struct bch_admin *a;
	struct bch_ctl *ctl;
	struct bch_handle *h;
	struct bch_ioctl_query_uuid q;
	struct stat st;
	unsigned idx;

	assert_int_equal(bch_fs_open(devs, 1, &o, &c, &err), 0);
	assert_int_equal(bch_fs_rw_start(c, &err), 0);
	a = bch_admin_new(c, true);
	assert_int_equal(bch_ctl_start(a, &ctl, &err), 0);
	{
		struct printbuf p = PRINTBUF;

		bch_ctl_socket_path(c->user_uuid, &p);
		assert_int_equal(stat(printbuf_str(&p), &st), 0);
		assert_true(S_ISSOCK(st.st_mode));
		printbuf_exit(&p);
	}

	/* by UUID: the socket */
	uuid_str(c->user_uuid, us);
	assert_int_equal(bch_handle_open(us, 0, &h, &err), 0);
	assert_int_equal(h->type, BCH_HANDLE_SOCKET);
	memset(&q, 0, sizeof(q));
	assert_int_equal(bch_ioctl(h, BCH_IOCTL_QUERY_UUID, &q), 0);
	assert_memory_equal(q.uuid.b, c->user_uuid, 16);

	/* USAGE through the socket */
	{
		size_t bytes = sizeof(struct bch_ioctl_usage) + sizeof(struct bch_ioctl_dev_usage);
		struct bch_ioctl_usage *u = xcalloc(1, bytes);

		u->nr_devices = 1;
		assert_int_equal(bch_ioctl(h, BCH_IOCTL_USAGE, u), 0);
		assert_int_equal(u->devs[0].nr_buckets, 1024);
		assert_int_equal(u->devs[0].buckets[BCH_DATA_JOURNAL], 20);
		free(u);
	}
	/* a refused request: -errno, and the mount's reason in h->msg */
	{
		struct bch_ioctl_disk_set_state s = { .flags = BCH_BY_INDEX, .new_state = 9 };

		assert_int_equal(bch_ioctl(h, BCH_IOCTL_DISK_SET_STATE, &s), -EINVAL);
		assert_non_null(strstr(printbuf_str(&h->msg), "no member state 9"));
		/* an unknown number */
		assert_int_equal(bch_ioctl(h, _IO(0xbc, 99), &s), -ENOTTY);
	}
	/* a scrub job through its descriptor */
	{
		struct bch_ioctl_data d = { .op = BCH_DATA_OP_SCRUB,
					    .end = { .inode = ~0ULL, .offset = ~0ULL,
						     .snapshot = ~0U } };
		struct bch_ioctl_data_event e;
		struct bch_job_result r;
		struct printbuf report = PRINTBUF;
		long fd = bch_ioctl(h, BCH_IOCTL_DATA, &d);
		unsigned n = 0;

		assert_true(fd >= 0);
		do {
			assert_int_equal(bch_job_read(h, (int)fd, &e, sizeof(e)), sizeof(e));
			assert_true(++n < 100000);
		} while (e.p.data_type != BCH_DATA_PROGRESS_DONE);
		assert_int_equal(bch_job_result(h, (int)fd, &r, &report), 0);
		assert_int_equal(r.done, 1);
		assert_int_equal(r.ret, 0);
		assert_int_equal(r.errors, 0);
		close((int)fd);
		printbuf_exit(&report);
	}
	assert_int_equal(bch_handle_close(h, &err), 0);

	/*
	 * a caller that is not root (peer credentials): queries yes, changes
	 * no (-EPERM) - in a child that drops to nobody
	 */
	if (!geteuid()) {
		pid_t pid;
		int status;

		assert_int_equal(chmod(tmpdir, 0755), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (!pid) {
			struct bch_ioctl_disk_set_state s = { .flags = BCH_BY_INDEX, .new_state = 1 };
			struct printbuf e2 = PRINTBUF;

			if (setgid(65534) || setuid(65534))
				_exit(10);
			if (bch_handle_open(us, 0, &h, &e2))
				_exit(11);
			if (bch_ioctl(h, BCH_IOCTL_QUERY_UUID, &q))
				_exit(12);
			if (bch_ioctl(h, BCH_IOCTL_DISK_SET_STATE, &s) != -EPERM)
				_exit(13);
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		assert_int_equal(BCH_MEMBER_STATE(bch_sb_member(c->sb, 0)), BCH_MEMBER_STATE_RW);
	}

	/* by member device: the same socket; its index */
	assert_int_equal(bch_handle_open_dev(img, NULL, 0, &h, &idx, &err), 0);
	assert_int_equal(h->type, BCH_HANDLE_SOCKET);
	assert_int_equal(idx, 0);
	assert_int_equal(bch_handle_close(h, &err), 0);

	/* stopped: the socket is gone, the filesystem not reachable by UUID */
	bch_ctl_stop(ctl);
	{
		struct printbuf p = PRINTBUF;

		bch_ctl_socket_path(c->user_uuid, &p);
		assert_int_not_equal(stat(printbuf_str(&p), &st), 0);
		printbuf_exit(&p);
	}
	assert_int_equal(bch_handle_open(us, 0, &h, &err), -ENXIO);
	bch_admin_free(a);
	assert_int_equal(bch_fs_rw_stop(c, &err), 0);
	bch_fs_close(c);
	printbuf_exit(&err);
}

static void test_local(void **state)
{
	struct printbuf err = PRINTBUF;
	struct bch_ioctl_query_uuid q;
	struct bch_handle *h;
	uint8_t u[16];
	unsigned idx;

	assert_int_equal(bch_member_sb_read(img, u, &idx, &err), 0);
	/* read-only in this process: queries work, changes are refused */
	assert_int_equal(bch_handle_open(img, BCH_OPEN_OFFLINE_RO, &h, &err), 0);
	assert_int_equal(h->type, BCH_HANDLE_LOCAL);
	assert_false(h->rw);
	assert_int_equal(bch_ioctl(h, BCH_IOCTL_QUERY_UUID, &q), 0);
	assert_memory_equal(q.uuid.b, u, 16);
	{
		struct bch_ioctl_disk_set_state s = { .flags = BCH_BY_INDEX, .new_state = 1 };

		assert_true(bch_ioctl(h, BCH_IOCTL_DISK_SET_STATE, &s) < 0);
	}
	assert_int_equal(bch_handle_close(h, &err), 0);

	/* read-write: a change is written out at close */
	assert_int_equal(bch_handle_open(img, BCH_OPEN_OFFLINE_RW, &h, &err), 0);
	assert_true(h->rw);
	{
		struct bch_ioctl_disk_resize r = { .flags = BCH_BY_INDEX, .nbuckets = 1536 };

		assert_int_equal(test_run("truncate -s 48M %s", img), 0);
		assert_int_equal(bch_ioctl(h, BCH_IOCTL_DISK_RESIZE, &r), 0);
	}
	assert_int_equal(bch_handle_close(h, &err), 0);
	{
		struct bch_fs_opts o = { .read_only = true };
		char *devs[1] = { img };
		struct bch_fs *c;

		assert_int_equal(bch_fs_open(devs, 1, &o, &c, &err), 0);
		assert_int_equal(le64_to_cpu(bch_sb_member(c->sb, 0)->nbuckets), 1536);
		assert_true(BCH_SB_CLEAN(c->sb));
		bch_fs_close(c);
	}
	printbuf_exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_and_sb),
		cmocka_unit_test(test_socket),
		cmocka_unit_test(test_local),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
