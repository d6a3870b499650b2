/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsck's filesystem pass, pass 0 (fsck_lost.c): inodes lost with a node of
 * the inodes btree are recreated from the keys that survive them.
 */
#ifndef BCH_FSCK_LOST_H
#define BCH_FSCK_LOST_H

struct fsck_fs;

/*
 * Only when the inodes btree lost a node in this run (s->lost_btrees):
 * every inode number that dirents, extents or xattrs still use (a
 * directory holding dirents, the target of a dirent, the owner of extents
 * or xattrs) and that has no inode gets one, so that the passes after it
 * keep those keys (reattaching what no dirent reaches to lost+found)
 * instead of deleting them as keys of a missing inode.
 */
int fsck_pass_lost_inodes(struct fsck_fs *f);

#endif
