/* SPDX-License-Identifier: GPL-2.0 */
/* fsck pass: allocation, by mark and sweep (fsck_gc.c). */
#ifndef BCH_FSCK_GC_H
#define BCH_FSCK_GC_H

#include <stdbool.h>

struct bch_fs;
struct fsck_state;

/*
 * Mark and sweep (fsck_gc.c): every pointer of every btree node pointer
 * and extent against the devices, the bucket gens of the alloc btree, the
 * kind of data of each bucket and the superblock replicas entries.
 */
int bch_fsck_gc(struct bch_fs *c, struct fsck_state *s);

/*
 * The same, a key at a time, for a pass that reads the btrees itself
 * (fsck_quick.c): start marks the superblocks and the journal and, with
 * @read_gens, reads the gens of the alloc btree (else the caller gives
 * every leaf key of the alloc btree, journal laid over, to
 * bch_fsck_gc_alloc_key(), then says with bch_fsck_gc_gens_read() whether
 * the whole btree was read); then every btree pointer (@level > 0: the
 * root key at root level + 1, each key of an interior node at its level)
 * and every extent goes through bch_fsck_gc_key(), after the gens;
 * finish resolves the stale pointers and checks the journal's replicas
 * entries (@judge false: only frees, as when a btree could not be walked).
 */
struct fsck_gc;
struct bkey_ref;
struct fsck_gc *bch_fsck_gc_start(struct bch_fs *c, struct fsck_state *s, bool read_gens);
void bch_fsck_gc_alloc_key(struct fsck_gc *gc, const struct bkey_ref *k);
void bch_fsck_gc_gens_read(struct fsck_gc *gc, bool ok);
void bch_fsck_gc_key(struct fsck_gc *gc, unsigned btree_id, unsigned level, const struct bkey_ref *k);
void bch_fsck_gc_finish(struct fsck_gc *gc, bool judge);

#endif
