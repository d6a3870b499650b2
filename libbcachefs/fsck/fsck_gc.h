/* SPDX-License-Identifier: GPL-2.0 */
/* fsck pass: allocation, by mark and sweep (fsck_gc.c). */
#ifndef BCH_FSCK_GC_H
#define BCH_FSCK_GC_H

struct bch_fs;
struct fsck_state;

/*
 * Mark and sweep (fsck_gc.c): every pointer of every btree node pointer
 * and extent against the devices, the bucket gens of the alloc btree, the
 * kind of data of each bucket and the superblock replicas entries.
 */
int bch_fsck_gc(struct bch_fs *c, struct fsck_state *s);

#endif
