/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a device path really is, and what it is built on: the same disk can
 * be reached as an image file, a loop device of that file, a partition of
 * a loop device, or a device-mapper device over any of these. Comparing
 * paths or inodes misses all of that; commands compare stacks instead.
 *
 * A stack lists layers: the device itself first, then what it is built on
 * (a loop device's backing file, the devices under device-mapper/md, read
 * from sysfs), recursively. A partition also lists its whole disk (and
 * what that is built on) as "container" layers: a partition overlaps its
 * disk, but two partitions of one disk do not overlap each other.
 */
#ifndef BCH_DEVSTACK_H
#define BCH_DEVSTACK_H

#include <stdbool.h>
#include <sys/types.h>

/* A block device by its device number, an image file by its inode. */
struct dev_ident {
	bool		blk;
	dev_t		dev;	/* blk: st_rdev; file: st_dev */
	ino_t		ino;	/* file: st_ino; blk: 0 */
};

struct dev_layer {
	struct dev_ident id;
	bool		container;	/* the whole disk of a partition below */
	char		*path;		/* a path that opens it (NULL: none known) */
};

#define DEV_STACK_MAX	16

struct dev_stack {
	unsigned	nr;
	struct dev_layer v[DEV_STACK_MAX];
};

/*
 * The stack of @path (followed through symlinks). @fd, if >= 0, is an open
 * descriptor of @path (a loop device's backing file is then asked with
 * LOOP_GET_STATUS64, which also names a deleted or renamed file).
 * Returns 0 or -errno (@path cannot be examined).
 */
int dev_stack_get(const char *path, int fd, struct dev_stack *s);
void dev_stack_exit(struct dev_stack *s);

bool dev_ident_eq(const struct dev_ident *a, const struct dev_ident *b);
struct stat;
/* What @st (of a path or an open descriptor) is: a block device or a file. */
struct dev_ident dev_ident_of(const struct stat *st);
/* Can a write through one reach the other? */
bool dev_stacks_overlap(const struct dev_stack *a, const struct dev_stack *b);

/*
 * Loop devices whose stack reaches @id (not as a container): calls @fn
 * with each one's path (/dev/loopN) until it returns non-zero, which is
 * returned.
 */
int dev_for_each_loop_over(const struct dev_ident *id,
			   int (*fn)(void *, const char *), void *arg);

#endif
