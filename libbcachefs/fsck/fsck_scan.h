/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsck and the node scan (node_scan.h): where the pointers to btree nodes
 * are lost, the keys of the lost range come from the newest leaves found
 * on the devices. See fsck_scan.c.
 */
#ifndef BCH_FSCK_SCAN_H
#define BCH_FSCK_SCAN_H

#include <stdint.h>

#include "bkey/bkey.h"
#include "fsck/problems.h"
#include "fsck/node_scan.h"

struct bch_fs;
struct fsck_state;

/*
 * Before the other passes: the journal that gives no roots, the probe of
 * roots and interior nodes, --scan-nodes, btrees without a root. Returns 0
 * when the passes can run, > 0 when there is nothing they could check (no
 * roots, and they were not recovered).
 */
int bch_fsck_scan_start(struct bch_fs *c, struct fsck_state *s,
			fsck_progress_fn progress, void *priv);

/*
 * The keys of range [@min, @max] of btree @btree_id (the range of an
 * unreadable node at @level) from the scan, which runs now if it has not:
 * laid over the btree (bch_journal_keys_add()) and marked in use when the
 * update engine already runs (a range is filled once). Returns the
 * number of keys, -1 when the scan has nothing for the range (no leaf of
 * it found, or the devices could not be scanned). @u says what the scan
 * used.
 */
long bch_fsck_scan_fill(struct bch_fs *c, struct fsck_state *s, unsigned btree_id,
			unsigned level, struct bpos_h min, struct bpos_h max,
			struct node_scan_use *u);

/* Did the scan run (its results are used for every lost node)? */
bool bch_fsck_scan_ran(const struct fsck_state *s);
/* Ranges bch_fsck_scan_fill() gave keys to so far. */
unsigned long bch_fsck_scan_nr_filled(const struct fsck_state *s);

void bch_fsck_scan_exit(struct fsck_state *s);

#endif
