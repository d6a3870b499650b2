// SPDX-License-Identifier: GPL-2.0
#include "mounted.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool same_file(const char *a, const struct stat *st_b, const char *real_b)
{
	char real_a[PATH_MAX];
	struct stat st_a;

	if (realpath(a, real_a) && !strcmp(real_a, real_b))
		return true;
	if (stat(a, &st_a))
		return false;
	if (S_ISBLK(st_b->st_mode))
		return S_ISBLK(st_a.st_mode) && st_a.st_rdev == st_b->st_rdev;
	return st_a.st_dev == st_b->st_dev && st_a.st_ino == st_b->st_ino;
}

/* Sources of our FUSE mounts may list several devices joined by ':'. */
static bool source_matches(const char *src, const struct stat *st, const char *real)
{
	char *copy = strdup(src), *save = NULL;
	bool found = false;

	if (!copy)
		return false;
	for (char *tok = strtok_r(copy, ":", &save); tok && !found; tok = strtok_r(NULL, ":", &save))
		found = tok[0] == '/' && same_file(tok, st, real);
	free(copy);
	return found;
}

int dev_mounted_check(const char *path)
{
	char real[PATH_MAX];
	struct stat st;
	struct mntent *m;
	FILE *f;
	int ret = 0;

	if (stat(path, &st))
		return -errno;
	if (!realpath(path, real))
		return -errno;

	f = setmntent("/proc/self/mounts", "r");
	if (f) {
		while (!ret && (m = getmntent(f)))
			if (source_matches(m->mnt_fsname, &st, real))
				ret = 1;
		endmntent(f);
	}

	if (!ret && S_ISBLK(st.st_mode)) {
		int fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);

		if (fd < 0 && errno == EBUSY)
			ret = 1;
		if (fd >= 0)
			close(fd);
	}
	return ret;
}
