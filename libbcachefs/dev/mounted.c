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
#include "dev/mounted.h"
#include "dev/dev.h"
#include "dev/devstack.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

/* Does the mount table at @table (a /proc/PID/mounts) list @s? */
static bool in_mount_table(const char *table, const struct dev_stack *s)
{
	FILE *f = setmntent(table, "r");
	char buf[16384];
	struct mntent *m;
	bool ret = false;

	if (!f)
		return false;
	/* the table in one read (stdio reads /proc files 1 KiB at a time) */
	setvbuf(f, buf, _IOFBF, sizeof(buf));
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

/*
 * No write lock at all, of anyone, on layer @l (false: there may be one).
 * Asked through a descriptor of our own: a shared flock conflicts with
 * every exclusive flock of the inode, and an OFD read-lock query with
 * every POSIX or OFD write lock. The shared flock is held for a moment,
 * as any reader of the device holds one. An open that would break a
 * lease, a path that now names another inode: no answer.
 */
static bool layer_unlocked(const struct dev_layer *l)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
	struct stat st;
	dev_t dev;
	ino_t ino;
	bool ret;
	int fd;

	if (!layer_inode(l, &dev, &ino))
		return true;	/* (no inode: /proc/locks would not match it either) */
	fd = open(l->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ret = !fstat(fd, &st) && st.st_dev == dev && st.st_ino == ino &&
	      !flock(fd, LOCK_SH | LOCK_NB) &&
	      !fcntl(fd, F_OFD_GETLK, &fl) && fl.l_type == F_UNLCK;
	close(fd);
	return ret;
}

/* A write lock (flock, POSIX or OFD) of another process on a layer of @s. */
static bool write_locked_elsewhere(const struct dev_stack *s)
{
	FILE *f;
	char line[256];
	long self = getpid();
	bool ret = false;
	unsigned i;

	/*
	 * Reading /proc/locks makes the kernel wait for an RCU grace period
	 * (it takes the file lock rwsem for writing): 10-15 ms, more than a
	 * whole check of a small clean filesystem. When no layer has a write
	 * lock at all (the usual case), it would list none: not read.
	 */
	for (i = 0; i < s->nr; i++)
		if (!s->v[i].container && !layer_unlocked(&s->v[i]))
			break;
	if (i == s->nr)
		return false;

	f = fopen("/proc/locks", "re");
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

/* Is process /proc/@pid ours (a bcachefs command, or mount.bcachefs)? */
static bool pid_is_ours(const char *proc)
{
	char path[PATH_MAX], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/comm", proc);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	return !strcmp(comm, "bcachefs") || !strcmp(comm, "mount.bcachefs");
}

/* Has process /proc/@pid a layer of @s open? */
static bool pid_has_open(const char *proc, const struct dev_stack *s)
{
	char pattern[PATH_MAX];
	bool ret = false;
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/fd/*", proc);
	if (glob(pattern, GLOB_NOSORT, NULL, &g))
		return false;
	for (size_t j = 0; j < g.gl_pathc && !ret; j++) {
		struct dev_ident id;
		struct stat st;

		if (stat(g.gl_pathv[j], &st))
			continue;
		id = dev_ident_of(&st);
		for (unsigned i = 0; i < s->nr && !ret; i++)
			ret = !s->v[i].container && dev_ident_eq(&s->v[i].id, &id);
	}
	globfree(&g);
	return ret;
}

/*
 * Is @s held by a mount process of ours that is no longer mounted, not
 * even in its own mount namespace (it is finishing after an unmount), and
 * by no mount of ours that is still mounted? The pids of /proc/locks do
 * not say: the mount takes its locks before it goes to the background.
 */
static bool held_by_finishing_mount(const struct dev_stack *s)
{
	char self[32], path[PATH_MAX];
	bool finishing = false, mounted = false;
	glob_t g;

	if (glob("/proc/[1-9]*", GLOB_NOSORT, NULL, &g))
		return false;
	snprintf(self, sizeof(self), "/proc/%ld", (long)getpid());
	for (size_t j = 0; j < g.gl_pathc && !mounted; j++) {
		const char *proc = g.gl_pathv[j];

		if (!strcmp(proc, self) || !pid_is_ours(proc) || !pid_has_open(proc, s))
			continue;
		snprintf(path, sizeof(path), "%s/mounts", proc);
		if (in_mount_table(path, s))
			mounted = true;
		else
			finishing = true;
	}
	globfree(&g);
	return finishing && !mounted;
}

/* Is @s (@path) held by another: O_EXCL on the block device, or a write lock? */
static bool held_elsewhere(const char *path, const struct dev_stack *s)
{
	return (s->v[0].id.blk && excl_busy(path, s->v[0].id.dev)) ||
		write_locked_elsewhere(s);
}

/* dev_mounted_check(); *@finishing: in use only by a mount process finishing */
static int mounted_check(const char *path, bool *finishing)
{
	struct dev_stack s;
	int ret;

	*finishing = false;
	ret = dev_stack_get(path, -1, &s);
	if (ret)
		return ret;

	if (in_mount_table("/proc/self/mounts", &s)) {
		ret = 1;
	} else if (held_elsewhere(path, &s)) {
		*finishing = held_by_finishing_mount(&s);
		/* a mount process may have exited while we looked for it */
		ret = *finishing || held_elsewhere(path, &s);
	}
	/* loop devices over any layer, held by the kernel or another process */
	for (unsigned i = 0; i < s.nr && !ret; i++)
		if (!s.v[i].container)
			ret = dev_for_each_loop_over(&s.v[i].id, loop_in_use, NULL) > 0;
	dev_stack_exit(&s);
	return ret;
}

int dev_mounted_check(const char *path)
{
	bool finishing;

	return mounted_check(path, &finishing);
}

int dev_mounted_check_wait(const char *path, unsigned wait_ms)
{
	bool finishing;
	int ret = mounted_check(path, &finishing);

	for (unsigned waited = 0; ret == 1 && finishing && waited < wait_ms; waited += 100) {
		usleep(100 * 1000);
		ret = mounted_check(path, &finishing);
	}
	return ret;
}
