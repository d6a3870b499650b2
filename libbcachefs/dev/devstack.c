// SPDX-License-Identifier: GPL-2.0
/*
 * Device stacks (devstack.h): what a path is built on, read from sysfs
 * (/sys/dev/block/MAJ:MIN/{loop/backing_file,slaves/,partition}) and, for
 * an open loop device, from LOOP_GET_STATUS64.
 */
#include "dev/devstack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define DEV_STACK_DEPTH	8

bool dev_ident_eq(const struct dev_ident *a, const struct dev_ident *b)
{
	return a->blk == b->blk && a->dev == b->dev && a->ino == b->ino;
}

struct dev_ident dev_ident_of(const struct stat *st)
{
	if (S_ISBLK(st->st_mode))
		return (struct dev_ident) { .blk = true, .dev = st->st_rdev };
	return (struct dev_ident) { .dev = st->st_dev, .ino = st->st_ino };
}

/* First line of a sysfs file, without its newline; false if unreadable. */
static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

static bool read_devnum(const char *path, dev_t *dev)
{
	char buf[64];
	unsigned ma, mi;

	if (!read_line(path, buf, sizeof(buf)) || sscanf(buf, "%u:%u", &ma, &mi) != 2)
		return false;
	*dev = makedev(ma, mi);
	return true;
}

static bool exists(const char *path)
{
	return !access(path, F_OK);
}

/* /dev/NAME of block device @dev (from its uevent), checked by stat. */
static char *dev_node(dev_t dev)
{
	char p[PATH_MAX], line[256];
	struct stat st;
	char *ret = NULL;
	FILE *f;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/uevent", major(dev), minor(dev));
	f = fopen(p, "re");
	if (!f)
		return NULL;
	while (!ret && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "DEVNAME=", 8))
			continue;
		snprintf(p, sizeof(p), "/dev/%s", line + 8);
		if (!stat(p, &st) && S_ISBLK(st.st_mode) && st.st_rdev == dev)
			ret = strdup(p);
		break;
	}
	fclose(f);
	return ret;
}

/* Add a layer; false when it was there already (then nothing below is new). */
static bool add_layer(struct dev_stack *s, struct dev_ident id, bool container,
		      const char *path)
{
	for (unsigned i = 0; i < s->nr; i++)
		if (dev_ident_eq(&s->v[i].id, &id)) {
			if (!container && s->v[i].container) {
				s->v[i].container = false;
				return true;
			}
			return false;
		}
	if (s->nr >= DEV_STACK_MAX)
		return false;
	s->v[s->nr++] = (struct dev_layer) {
		.id		= id,
		.container	= container,
		.path		= path ? strdup(path) : NULL,
	};
	return true;
}

static void add_blk(struct dev_stack *s, dev_t dev, bool container, const char *path,
		    int fd, unsigned depth);

/* The backing file of loop device @dev (sysfs dir @sys). */
static void add_loop_backing(struct dev_stack *s, const char *sys, int fd,
			     bool container, unsigned depth)
{
	char p[PATH_MAX], file[PATH_MAX];
	struct loop_info64 info;
	bool have_info = false;
	struct stat st;

	snprintf(p, sizeof(p), "%s/loop/backing_file", sys);
	if (!read_line(p, file, sizeof(file)))
		file[0] = '\0';
	if (fd >= 0 && !ioctl(fd, LOOP_GET_STATUS64, &info))
		have_info = true;

	if (file[0] && !stat(file, &st) &&
	    (!have_info || (st.st_dev == (dev_t)info.lo_device &&
			    st.st_ino == (ino_t)info.lo_inode))) {
		if (S_ISBLK(st.st_mode))
			add_blk(s, st.st_rdev, container, file, -1, depth + 1);
		else
			add_layer(s, dev_ident_of(&st), container, file);
		return;
	}
	/* deleted or renamed since: the identity is still known */
	if (have_info)
		add_layer(s, (struct dev_ident) {
				.dev = (dev_t)info.lo_device,
				.ino = (ino_t)info.lo_inode,
			  }, container, NULL);
}

static void add_blk(struct dev_stack *s, dev_t dev, bool container, const char *path,
		    int fd, unsigned depth)
{
	char sys[64], p[PATH_MAX];
	char *node = NULL;
	dev_t lower;
	glob_t g;

	if (depth > DEV_STACK_DEPTH)
		return;
	if (!path)
		path = node = dev_node(dev);
	if (!add_layer(s, (struct dev_ident) { .blk = true, .dev = dev }, container, path)) {
		free(node);
		return;
	}
	free(node);

	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(dev), minor(dev));

	snprintf(p, sizeof(p), "%s/loop", sys);
	if (exists(p))
		add_loop_backing(s, sys, fd, container, depth);

	/* device-mapper, md: the devices under it */
	snprintf(p, sizeof(p), "%s/slaves/*/dev", sys);
	if (!glob(p, 0, NULL, &g)) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			if (read_devnum(g.gl_pathv[i], &lower))
				add_blk(s, lower, container, NULL, -1, depth + 1);
		globfree(&g);
	}

	/* a partition: its whole disk contains it */
	snprintf(p, sizeof(p), "%s/partition", sys);
	if (exists(p)) {
		snprintf(p, sizeof(p), "%s/../dev", sys);
		if (read_devnum(p, &lower) && lower != dev)
			add_blk(s, lower, true, NULL, -1, depth + 1);
	}
}

int dev_stack_get(const char *path, int fd, struct dev_stack *s)
{
	struct stat st;

	s->nr = 0;
	if (fd >= 0 ? fstat(fd, &st) : stat(path, &st))
		return -errno;
	if (S_ISBLK(st.st_mode))
		add_blk(s, st.st_rdev, false, path, fd, 0);
	else if (S_ISREG(st.st_mode))
		add_layer(s, dev_ident_of(&st), false, path);
	else
		return S_ISDIR(st.st_mode) ? -EISDIR : -ENOTBLK;
	return 0;
}

void dev_stack_exit(struct dev_stack *s)
{
	for (unsigned i = 0; i < s->nr; i++)
		free(s->v[i].path);
	s->nr = 0;
}

bool dev_stacks_overlap(const struct dev_stack *a, const struct dev_stack *b)
{
	for (unsigned i = 0; i < a->nr; i++)
		for (unsigned j = 0; j < b->nr; j++)
			if (dev_ident_eq(&a->v[i].id, &b->v[j].id) &&
			    !(a->v[i].container && b->v[j].container))
				return true;
	return false;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

int dev_for_each_loop_over(const struct dev_ident *id,
			   int (*fn)(void *, const char *), void *arg)
{
	DIR *d = opendir("/sys/block");
	char **names = NULL;
	size_t nr = 0, size = 0;
	struct dirent *e;
	int ret = 0;

	if (!d)
		return 0;
	/*
	 * Only loop devices bound to a file have loop/: one lookup per loop
	 * device, relative to the directory (glob() looked up each name and
	 * then its loop/ from /, for every loop device of the machine).
	 */
	while ((e = readdir(d))) {
		char p[sizeof(e->d_name) + 8];
		struct stat st;

		if (strncmp(e->d_name, "loop", 4))
			continue;
		snprintf(p, sizeof(p), "%s/loop", e->d_name);
		if (fstatat(dirfd(d), p, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (nr == size) {
			char **n = realloc(names, (size = size ? size * 2 : 16) * sizeof(*names));

			if (!n)
				break;
			names = n;
		}
		if (!(names[nr] = strdup(e->d_name)))
			break;
		nr++;
	}
	closedir(d);
	/* (in name order, as glob() gave them) */
	if (nr)
		qsort(names, nr, sizeof(*names), name_cmp);
	for (size_t n = 0; n < nr && !ret; n++) {
		char p[PATH_MAX];
		struct dev_stack s = { 0 };
		dev_t dev;

		snprintf(p, sizeof(p), "/sys/block/%s/dev", names[n]);
		if (!read_devnum(p, &dev))
			continue;
		add_blk(&s, dev, false, NULL, -1, 0);
		for (unsigned i = 1; i < s.nr && !ret; i++)
			if (!s.v[i].container && dev_ident_eq(&s.v[i].id, id) && s.v[0].path)
				ret = fn(arg, s.v[0].path);
		dev_stack_exit(&s);
	}
	for (size_t n = 0; n < nr; n++)
		free(names[n]);
	free(names);
	return ret;
}
