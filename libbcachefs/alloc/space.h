/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Space of a filesystem from one allocator's bucket state: the one
 * accounting behind statfs (df) and `fs usage` (doc/ioctl.md §9.2).
 *
 *   capacity   sectors of the members' buckets (first_bucket on)
 *   used       sectors of the buckets that are not free (whatever they
 *              hold: superblock, journal, btree, user data, cached data,
 *              buckets a write point is filling, buckets emptied but not
 *              yet durable)
 *   free       capacity - used
 *   reserved   the part of free that data writes may not take: the
 *              buckets kept for btree nodes (bch_alloc_dev_reserve()), the
 *              free space of members that take no user data (read-only,
 *              failed, spare, or data_allowed without user data), and
 *              sectors promised to reservations (a->reserved_sectors)
 *   available  free - reserved: what a data write can really take
 *
 * so that used + reserved + available = capacity. Sizes in 512-byte
 * sectors; each device alike. bch_space_read() costs a pass over each
 * device's bucket chunks (fs usage); bch_space_totals() only the free
 * counters (statfs).
 */
#ifndef BCH_ALLOC_SPACE_H
#define BCH_ALLOC_SPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "alloc/alloc.h"
#include "format/format.h"

struct bch_dev_space {
	bool		present;
	uint64_t	capacity, used, free, reserved, available;
	/* buckets holding each data type (buckets[0]: free ones) */
	uint64_t	buckets[BCH_DATA_NR];
};

struct bch_space {
	uint64_t	capacity, used, free, reserved, available;
	/* what the reserve is made of, sectors (their sum is reserved) */
	uint64_t	reserve_btree;		/* kept for btree nodes */
	uint64_t	reserve_nodata;		/* free space of members not taking data */
	uint64_t	reserve_promised;	/* reservations (a->reserved_sectors) */
	struct bch_dev_space dev[BCH_ALLOC_MAX_DEVS];
};

/* Totals and per device, with bucket counts per data type. */
void bch_space_read(const struct bch_allocator *a, struct bch_space *s);
/* Totals only (dev[] left zero): O(devices), for statfs. */
void bch_space_totals(const struct bch_allocator *a, struct bch_space *s);

#endif
