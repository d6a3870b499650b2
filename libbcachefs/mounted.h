/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BCH_MOUNTED_H
#define BCH_MOUNTED_H

/*
 * Is @path (a device or image file) mounted or held open exclusively?
 * Looks for it (by real path, and by device number for block devices)
 * in /proc/self/mounts, including FUSE mounts of our own engine, and
 * tries an O_EXCL open on block devices.
 * Returns 1 if mounted/in use, 0 if not, negative error if @path cannot
 * be examined.
 */
int dev_mounted_check(const char *path);

#endif
