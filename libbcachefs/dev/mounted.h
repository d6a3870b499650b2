/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BCH_MOUNTED_H
#define BCH_MOUNTED_H

/*
 * Is @path (a device or image file) mounted or in use by a writer, by any
 * way it can be reached (mounted.c): the mount table (our FUSE mounts
 * included) compared by device stack, so a loop device of a mounted
 * image counts and the other way round; O_EXCL holders of the block
 * device and of loop devices over it; write locks of other processes.
 * Returns 1 if mounted/in use, 0 if not, negative error if @path cannot
 * be examined.
 */
int dev_mounted_check(const char *path);

/*
 * The same, except that a device held only by a mount process of ours
 * that is no longer mounted (not even in its own mount namespace) is
 * waited for, up to @wait_ms, before it counts as in use: umount(8) of a
 * FUSE mount returns before the process has written everything out and
 * exited. Anything else in use is reported at once.
 */
#define DEV_UNMOUNT_WAIT_MS	10000
int dev_mounted_check_wait(const char *path, unsigned wait_ms);

#endif
