/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsck, filesystem level (doc/fsck.md §11) and allocation (doc/fsck.md §10)
 * checks. Both run after the node and key passes of fsck.c, over the
 * live keys (journal laid over the nodes); every finding goes through
 * fsck_fix() (problems.h), and the repairs are transactions of the update
 * engine (btree_update.h) committed with fsck_commit() (fsck.h).
 */
#ifndef BCH_FSCK_FS_H
#define BCH_FSCK_FS_H

struct bch_fs;
struct fsck_state;

/*
 * The filesystem passes (fsck_fs.c), in order: extents, dirents, xattrs,
 * root directory, lost+found, directory structure, link counts. They
 * share in-memory tables (one record per inode, subdirectory links), so
 * they run as one entry of the fsck pass table with their own table.
 */
int bch_fsck_fs(struct bch_fs *c, struct fsck_state *s);

#endif
