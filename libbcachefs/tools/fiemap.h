/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a file's data lies on its device (FS_IOC_FIEMAP), for migrate
 * (doc/tools.md §6): the extents of the reserved metadata file, and of
 * every file whose data is linked in place.
 */
#ifndef BCH_FIEMAP_H
#define BCH_FIEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One extent, in bytes (FIEMAP's units). */
struct fiemap_ext {
	uint64_t	logical;
	uint64_t	physical;
	uint64_t	length;
	uint32_t	flags;		/* FIEMAP_EXTENT_* */
};

/*
 * Every extent of the open file @fd, in file order. @sync: the kernel
 * writes the file's dirty data first (FIEMAP_FLAG_SYNC), so delayed
 * allocations get their place. *@ret is malloc'd (NULL when the file has
 * no extent). Returns 0, -EOPNOTSUPP when the filesystem has no FIEMAP,
 * or -errno.
 */
int bch_fiemap(int fd, bool sync, struct fiemap_ext **ret, size_t *nr);

/* What migrate does with an extent. */
enum fiemap_use {
	FIEMAP_USE_LINK,	/* point at its sectors */
	FIEMAP_USE_COPY,	/* read it through the file and write it */
	FIEMAP_USE_HOLE,	/* unwritten (preallocated): reads as zeros */
};

/*
 * Unknown or delayed places, encoded, encrypted, inline, tail-packed,
 * not-aligned and shared extents are copied (so are those whose start lies
 * below @copy_below bytes of the device, the future default superblock
 * area); unwritten ones are holes; the rest is linked.
 */
enum fiemap_use bch_fiemap_use(const struct fiemap_ext *e, uint64_t copy_below);

#endif
