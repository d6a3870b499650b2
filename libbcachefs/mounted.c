// SPDX-License-Identifier: GPL-2.0
/*
 * Is a device in use? Every way it can be reached counts (devstack.h):
 * a mount of the image, of a loop device of it, of a partition of it or
 * of a device-mapper device over it (our FUSE mounts name their devices in
 * the source, joined by ':'); a loop device of the image held by the
 * kernel (mounted, or under device-mapper); the block device held O_EXCL;
 * or a write lock of another process on any layer (another command
 * writing it: dev.c takes those locks).
 */
#include "mounted.h"
#include "dev.h"
#include "devstack.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Does a source of the mount table (one or more paths joined by ':') overlap @s? */
static bool source_overlaps(const char *src, const struct dev_stack *s)
{
	char *copy = strdup(src), *save = NULL;
	bool found = false;

	if (!copy)
		return false;
	for (char *tok = strtok_r(copy, ":", &save); tok && !found; tok = strtok_r(NULL, ":", &save)) {
		struct dev_stack m;

		if (tok[0] != '/' || dev_stack_get(tok, -1, &m))
			continue;
		found = dev_stacks_overlap(s, &m);
		dev_stack_exit(&m);
	}
	free(copy);
	return found;
}

static bool in_mount_table(const struct dev_stack *s)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	bool ret = false;

	if (!f)
		return false;
	while (!ret && (m = getmntent(f)))
		ret = source_overlaps(m->mnt_fsname, s);
	endmntent(f);
	return ret;
}

/* Is block device @path held O_EXCL (mounted, under dm/md) by someone else? */
static bool excl_busy(const char *path, dev_t rdev)
{
	int fd;

	if (dev_claimed_here(rdev))
		return false;
	fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == EBUSY;
}

/* The inodes a lock on layer @l would be on (a block device: its node). */
static bool layer_inode(const struct dev_layer *l, dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (!l->id.blk) {
		*dev = l->id.dev;
		*ino = l->id.ino;
		return true;
	}
	if (!l->path || stat(l->path, &st) || !S_ISBLK(st.st_mode) || st.st_rdev != l->id.dev)
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

/* A write lock (flock, POSIX or OFD) of another process on a layer of @s. */
static bool write_locked_elsewhere(const struct dev_stack *s)
{
	FILE *f = fopen("/proc/locks", "re");
	char line[256];
	long self = getpid();
	bool ret = false;

	if (!f)
		return false;
	while (!ret && fgets(line, sizeof(line), f)) {
		char type[16], mode[16], rw[16];
		unsigned ma, mi;
		uint64_t ino;
		long pid;

		if (strstr(line, "->") ||
		    sscanf(line, "%*d: %15s %15s %15s %ld %x:%x:%" SCNu64,
			   type, mode, rw, &pid, &ma, &mi, &ino) != 7 ||
		    strcmp(rw, "WRITE") || pid == self)
			continue;
		for (unsigned i = 0; i < s->nr && !ret; i++) {
			dev_t d;
			ino_t n;

			if (!s->v[i].container && layer_inode(&s->v[i], &d, &n))
				ret = major(d) == ma && minor(d) == mi && n == ino;
		}
	}
	fclose(f);
	return ret;
}

static int loop_in_use(void *arg, const char *loop)
{
	struct stat st;

	(void)arg;
	if (stat(loop, &st) || !S_ISBLK(st.st_mode))
		return 0;
	if (excl_busy(loop, st.st_rdev))
		return 1;

	struct dev_stack s;
	int ret = 0;

	if (!dev_stack_get(loop, -1, &s)) {
		ret = write_locked_elsewhere(&s);
		dev_stack_exit(&s);
	}
	return ret;
}

int dev_mounted_check(const char *path)
{
	struct dev_stack s;
	int ret;

	ret = dev_stack_get(path, -1, &s);
	if (ret)
		return ret;

	ret = in_mount_table(&s) ||
		(s.v[0].id.blk && excl_busy(path, s.v[0].id.dev)) ||
		write_locked_elsewhere(&s);
	/* loop devices over any layer, held by the kernel or another process */
	for (unsigned i = 0; i < s.nr && !ret; i++)
		if (!s.v[i].container)
			ret = dev_for_each_loop_over(&s.v[i].id, loop_in_use, NULL) > 0;
	dev_stack_exit(&s);
	return ret;
}
