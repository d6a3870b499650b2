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

#endif
