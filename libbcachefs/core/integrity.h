/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Integrity of what the running filesystem reads: a damaged
 * node or extent is an error, never silent wrong data.
 *
 * With c->opts.verify (the mount), the btree layer verifies every node
 * before it uses a key of it and reports one that has no good copy here:
 * one log line (device, sector, btree, range, why), its key range
 * remembered (reads of it fail with EIO, writes into it are refused) and
 * the error action of the superblock or the errors= option followed:
 *
 *   continue     EIO for what the node covers; nothing is written over it
 *   remount-ro   no write at all from now on (bch_fs_writes_stopped())
 *   panic        the mount stops at once: what was committed goes to the
 *                journal, nothing else is written
 *
 * The front door (mount/fuse.c) looks at c->integ.panic after every
 * operation. Reads served from another copy queue the range here; the
 * mount has the bad copies rewritten (bch_data_repair(), admin/data_job.h).
 */
#ifndef BCH_CORE_INTEGRITY_H
#define BCH_CORE_INTEGRITY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/bch_fs.h"
#include "util/util.h"

/* The action in force: the errors= option, else the superblock's. */
void bch_fs_integrity_init(struct bch_fs *c);
void bch_fs_integrity_exit(struct bch_fs *c);

/* "continue", "remount-ro", "panic" */
const char *bch_fs_error_action_str(unsigned action);

/* One line to the log (no newline needed). */
__printf(2, 3) void bch_fs_log(struct bch_fs *c, const char *fmt, ...);

/*
 * Btree @btree_id has no good copy of the node over [@min, @max]: @what
 * (device, sector, why) goes to the log with what happens now, the range
 * is remembered and the error action taken. Returns the error for the
 * reader (-BCH_ERR_btree_node_unverified).
 */
int bch_fs_node_bad(struct bch_fs *c, unsigned btree_id, unsigned level,
		    struct bpos_h min, struct bpos_h max, const char *what);

/*
 * Does [@start, @end] of @btree_id meet a range whose node has no good
 * copy? (Writes there are refused: they would be laid over what cannot
 * be read, and the checkpoint would rewrite the damaged node.)
 */
bool bch_fs_range_bad(const struct bch_fs *c, unsigned btree_id, struct bpos_h start,
		      struct bpos_h end);

/*
 * May key @k go into @btree_id? Not where a node has no good copy
 * (-BCH_ERR_btree_node_unverified, with why in @err), nor after the
 * writes stopped (-EROFS).
 */
int bch_fs_write_allowed(const struct bch_fs *c, unsigned btree_id, const struct bkey_h *k,
			 struct printbuf *err);

static inline bool bch_fs_writes_stopped(const struct bch_fs *c)
{
	return c->integ.writes_stopped || c->integ.panic;
}

/*
 * Sectors [@start, @end) of inode @inode were read from another copy
 * because one failed to verify: the bad copy is to be rewritten.
 */
void bch_fs_repair_want(struct bch_fs *c, uint64_t inode, uint64_t start, uint64_t end);
/* The oldest wanted repair into *@r; false when none is queued. */
bool bch_fs_repair_take(struct bch_fs *c, struct bch_repair_req *r);

#endif
