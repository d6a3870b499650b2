/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dump (doc/tools.md §5): the metadata of each member device as a sparse
 * qcow2 image (qcow2.h), for sending a broken filesystem to a developer
 * without its data.
 *
 * What a device's image holds:
 *   - sector 7 when it holds a valid superblock layout;
 *   - every superblock copy of the device's layout (each its own size);
 *   - every journal bucket in which an entry was found (valid, stale or
 *     corrupt): the bucket's clusters are in the image, as in 2018, but
 *     only the bytes of the entries are copied (the rest is zero);
 *   - every btree node the btrees reach (every level, every pointer on
 *     this device): the sectors written so far. A node that cannot be
 *     read but starts with this filesystem's btree node magic is taken
 *     whole (node size), so the same problem shows on the image; one
 *     without the magic is skipped (it may not be a node at all).
 * Never file data: extents are never followed.
 *
 * Damaged filesystems: every problem met while collecting (a journal that
 * does not read, a btree without a root, unreadable nodes) is a warning
 * in @err; whatever could be found is dumped. Encrypted filesystems: the
 * bytes are copied as they are on disk (still encrypted); the key is
 * needed to find the btree nodes.
 */
#ifndef BCH_DUMP_H
#define BCH_DUMP_H

#include <stdint.h>

#include "tools/qcow2.h"

struct bch_fs;
struct printbuf;

#define BCH_DUMP_MAX_DEVS	64	/* = BCH_FS_MAX_DEVS */

struct bch_dump {
	unsigned		cluster_bits;
	struct qcow2_ranges	ranges[BCH_DUMP_MAX_DEVS];
	/* what was found */
	uint64_t		nr_sb_copies;
	uint64_t		nr_journal_buckets;
	uint64_t		nr_jsets;
	uint64_t		nr_nodes;		/* node copies */
	uint64_t		nr_nodes_unreadable;	/* taken whole or skipped */
	unsigned		nr_btrees_without_root;
	bool			journal_unreadable;	/* no roots at all */
};

/*
 * Collect the ranges of every online member of @c (opened read-only,
 * with or without its journal read: bch_journal_read() is called here
 * when it was not). Warnings (see above) go to @err; 0 unless memory or
 * the superblocks themselves fail.
 */
int bch_dump_collect(struct bch_fs *c, struct bch_dump *d, struct printbuf *err);

/* Write the image of member @dev to @fd (an empty file). */
int bch_dump_write_dev(struct bch_fs *c, struct bch_dump *d, unsigned dev, int fd,
		       struct qcow2_stats *stats, struct printbuf *err);

void bch_dump_exit(struct bch_dump *d);

#endif
