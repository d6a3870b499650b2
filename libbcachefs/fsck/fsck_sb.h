/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsck pass: every superblock copy of every member device against the
 * copy in use (fsck_sb.c).
 */
#ifndef BCH_FSCK_SB_H
#define BCH_FSCK_SB_H

struct bch_fs;
struct fsck_state;

/* Check the copies; bad ones (sb_backup_bad) are rewritten at the checkpoint. */
int bch_fsck_sb(struct bch_fs *c, struct fsck_state *s);

#endif
