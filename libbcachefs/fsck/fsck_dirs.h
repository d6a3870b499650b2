/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsck's filesystem pass, passes 4 to 7 (fsck_dirs.c), run in this order
 * by bch_fsck_fs() after the extents, dirents and xattrs.
 */
#ifndef BCH_FSCK_DIRS_H
#define BCH_FSCK_DIRS_H

struct fsck_fs;

/* The root directory: there, and a directory. */
int fsck_pass_root(struct fsck_fs *f);
/* lost+found: there, and a directory, in the root. */
int fsck_pass_lostfound(struct fsck_fs *f);
/* Every directory reached once from the root; the rest reattached. */
int fsck_pass_dirs(struct fsck_fs *f);
/* Link counts as counted. */
int fsck_pass_nlinks(struct fsck_fs *f);

#endif
