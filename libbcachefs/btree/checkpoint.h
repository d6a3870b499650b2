/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the update engine: the open journal entry and the checkpoint
 * (checkpoint.c). The public entries (bch_fs_checkpoint(),
 * bch_journal_flush(), ...) are in btree_update.h.
 */
#ifndef BCH_BTREE_CHECKPOINT_H
#define BCH_BTREE_CHECKPOINT_H

#include <stdbool.h>

struct bch_fs;
struct printbuf;

/*
 * Write the open journal entry (@flush: and flush the devices, so that
 * everything committed before is durable). Committed keys gather in it
 * until it is full, a flush is asked for (fsync) or it is old enough
 * (doc/engine.md §4.4).
 */
int bch_rw_entry_write(struct bch_fs *c, bool flush, struct printbuf *err);
/* Open a new entry (a checkpoint first when the journal is short of space). */
int bch_rw_entry_open(struct bch_fs *c, struct printbuf *err);

#endif
