/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The quick check of fsck (fsck_quick.c): one read of each btree, in key
 * order, that proves a filesystem has none of the problems the passes of
 * fsck.c, fsck_gc.c and fsck_fs.c report. When it cannot prove that, the
 * passes run as they always did (and say what they find): the quick check
 * never reports, repairs or changes anything itself.
 */
#ifndef BCH_FSCK_QUICK_H
#define BCH_FSCK_QUICK_H

#include <stdbool.h>

struct bch_fs;
struct printbuf;

/*
 * True when nothing is wrong (every node, key, pointer, inode, dirent and
 * link count as the passes would judge them). False otherwise, with the
 * first thing that made it give up in @why (for -v; may be NULL).
 */
bool bch_fsck_quick(struct bch_fs *c, struct printbuf *why);

#endif
