/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Opening and closing a filesystem. Every command goes through
 * bch_fs_open() (doc/engine.md §2.1: devices -> superblocks -> key -> journal ->
 * btree roots) and bch_fs_close(). A read-only open never writes. The
 * object itself is in core/bch_fs.h.
 */
#ifndef BCH_FS_H
#define BCH_FS_H

#include "core/bch_fs.h"

int bch_fs_open(char * const *devs, unsigned nr, const struct bch_fs_opts *opts,
		struct bch_fs **ret, struct printbuf *err);

void bch_fs_close(struct bch_fs *c);

/*
 * Write everything out and mark the filesystem clean (the engine started
 * by bch_fs_rw_start(), btree/btree_update.h): the data write point's
 * buckets close, then bch_btree_rw_stop().
 */
int bch_fs_rw_stop(struct bch_fs *c, struct printbuf *err);

#endif
