/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Quotas (doc/format.md §5.9, format.md §5.9). The 2018 format stores only the
 * limits, as keys of the quotas btree at (type, id): type 0 user (uid),
 * 1 group (gid), 2 project (bi_project); value: space hard and soft limit
 * in 512-byte sectors, inode hard and soft limit. Usage is not stored: as
 * the 2018 kernel did, it is counted from the inodes (bi_sectors and one
 * inode for each type-128 inode) when counting starts, then kept by a hook
 * on every inode key a transaction commits (core/bch_fs.h inode_hook), so
 * every write, truncate, unlink, chown and create counts without code of
 * its own. The same hook refuses a transaction (-EDQUOT) that would take a
 * user, group or project over a hard limit; soft limits are shown only.
 */
#ifndef BCH_QUOTA_H
#define BCH_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

#include "bkey/bkey_types.h"

struct bch_fs;
struct printbuf;
struct bch_quota_table;

#define BCH_QUOTA_NR_TYPES	3

/* "user", "group", "project"; NULL out of range. */
const char *bch_quota_type_name(unsigned type);
/* The type of @name ("user"/"usr", "group"/"grp", "project"/"prj"), or -1. */
int bch_quota_type_lookup(const char *name);

/* The types the superblock counts (USRQUOTA...: bit 0 user, 1 group, 2 project). */
unsigned bch_quota_sb_types(struct bch_fs *c);

/*
 * Count the quota types @types (bits as above) of @c from its inodes and
 * read the limits from the quotas btree. Returns the table in *@q.
 */
int bch_quota_count(struct bch_fs *c, unsigned types, struct bch_quota_table **q,
		    struct printbuf *err);
void bch_quota_free(struct bch_quota_table *q);

/*
 * The running filesystem: bch_quota_count(), then keep it up to date and
 * enforce the hard limits through c->inode_hook. @types 0: nothing.
 * bch_quota_stop() removes the hook and frees the table.
 */
int bch_quota_start(struct bch_fs *c, unsigned types, struct printbuf *err);
void bch_quota_stop(struct bch_fs *c);
/* The table of the running filesystem, NULL when it counts none. */
struct bch_quota_table *bch_quota_running(struct bch_fs *c);

/*
 * The report: one line per type and id that has usage or limits, ids in
 * increasing order:
 *   TYPE ID space USED SOFT HARD inodes USED SOFT HARD
 * space in 512-byte sectors, 0 = no limit; a "*" after a used figure that
 * is over its soft limit.
 */
void bch_quota_report(struct printbuf *out, const struct bch_quota_table *q);

/*
 * Parse limits "space_hard=N,space_soft=N,inodes_hard=N,inodes_soft=N"
 * (any subset; space in sectors) over *@lim. -EINVAL when malformed.
 */
int bch_quota_limits_parse(const char *s, struct bch_quota_h *lim);
/* The limits of (@type, @id) now (zero when none). */
void bch_quota_limits_get(const struct bch_quota_table *q, unsigned type, uint32_t id,
			  struct bch_quota_h *lim);

/*
 * Write the limits of (@type, @id): the quotas btree key (deleted when
 * every limit is 0), in one transaction, and the running table.
 */
int bch_quota_limits_set(struct bch_fs *c, unsigned type, uint32_t id,
			 const struct bch_quota_h *lim, struct printbuf *err);

#endif
