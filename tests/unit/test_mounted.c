// SPDX-License-Identifier: GPL-2.0
/*
 * In-use checks (dev/mounted.h) on image files: a file nobody holds is
 * free; a write lock of another process (flock, POSIX, OFD) makes it in
 * use, by whatever name it is reached (hard link, symlink); read locks
 * and our own locks do not; the lock's end frees it again. Mounts and
 * loop devices need privileges and devices this test may not have: the
 * shell tests (tests/mount, tests/cli) cover those.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dev/mounted.h"
#include "testutil.h"

static char tmpdir[64], file[128], hard[128], sym[128];

static int setup(void **state)
{
	int fd;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_mounted.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(file, sizeof(file), "%s/a.img", tmpdir);
	snprintf(hard, sizeof(hard), "%s/hard.img", tmpdir);
	snprintf(sym, sizeof(sym), "%s/sym.img", tmpdir);
	fd = open(file, O_CREAT | O_RDWR, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	close(fd);
	assert_int_equal(link(file, hard), 0);
	assert_int_equal(symlink(file, sym), 0);
	return 0;
}

static int teardown(void **state)
{
	test_run("rm -rf %s", tmpdir);
	return 0;
}

enum lock_kind { FLOCK_EX, FLOCK_SH, POSIX_WR, POSIX_RD, OFD_WR };

/* A child that takes lock @kind on @file and waits; its pid (kill it to release). */
static pid_t locker(enum lock_kind kind)
{
	int p[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int fd = open(file, kind == POSIX_RD || kind == FLOCK_SH ? O_RDONLY : O_RDWR);
		struct flock fl = { .l_whence = SEEK_SET };
		int r = -1;

		switch (kind) {
		case FLOCK_EX:
			r = flock(fd, LOCK_EX);
			break;
		case FLOCK_SH:
			r = flock(fd, LOCK_SH);
			break;
		case POSIX_WR:
			fl.l_type = F_WRLCK;
			r = fcntl(fd, F_SETLK, &fl);
			break;
		case POSIX_RD:
			fl.l_type = F_RDLCK;
			r = fcntl(fd, F_SETLK, &fl);
			break;
		case OFD_WR:
			fl.l_type = F_WRLCK;
			r = fcntl(fd, F_OFD_SETLK, &fl);
			break;
		}
		c = r ? 'n' : 'y';
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	assert_int_equal(c, 'y');
	return pid;
}

static void unlock(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_not_in_use(void **state)
{
	assert_int_equal(dev_mounted_check(file), 0);
	assert_int_equal(dev_mounted_check(hard), 0);
	assert_int_equal(dev_mounted_check(sym), 0);
	assert_int_equal(dev_mounted_check_wait(file, 0), 0);
	/* what cannot be examined: an error, not "free" */
	assert_true(dev_mounted_check("/nonexistent/x.img") < 0);
}

static void test_write_locks(void **state)
{
	static const enum lock_kind kinds[] = { FLOCK_EX, POSIX_WR, OFD_WR };

	for (unsigned i = 0; i < 3; i++) {
		pid_t pid = locker(kinds[i]);

		assert_int_equal(dev_mounted_check(file), 1);
		assert_int_equal(dev_mounted_check(hard), 1);
		assert_int_equal(dev_mounted_check(sym), 1);
		/* not one of our mounts finishing: in use at once, no wait */
		assert_int_equal(dev_mounted_check_wait(file, 5000), 1);
		unlock(pid);
		assert_int_equal(dev_mounted_check(file), 0);
	}
}

static void test_read_and_own_locks(void **state)
{
	pid_t pid;
	int fd;

	pid = locker(POSIX_RD);
	assert_int_equal(dev_mounted_check(file), 0);
	unlock(pid);
	pid = locker(FLOCK_SH);
	assert_int_equal(dev_mounted_check(file), 0);
	unlock(pid);

	/* our own write lock is not another writer */
	fd = open(file, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	assert_int_equal(dev_mounted_check(file), 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_in_use),
		cmocka_unit_test(test_write_locks),
		cmocka_unit_test(test_read_and_own_locks),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
