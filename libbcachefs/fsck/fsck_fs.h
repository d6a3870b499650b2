/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsck, filesystem level (spec 40 §40.8) and allocation (spec 30 §6)
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
 * Mark and sweep (fsck_gc.c): every pointer of every btree node pointer
 * and extent against the devices, the bucket gens of the alloc btree, the
 * kind of data of each bucket and the superblock replicas entries.
 */
int bch_fsck_gc(struct bch_fs *c, struct fsck_state *s);

/*
 * The filesystem passes (fsck_fs.c), in order: extents, dirents, xattrs,
 * root directory, lost+found, directory structure, link counts. They
 * share in-memory tables (one record per inode, subdirectory links), so
 * they run as one entry of the fsck pass table with their own table.
 */
int bch_fsck_fs(struct bch_fs *c, struct fsck_state *s);

#endif
