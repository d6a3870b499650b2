/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing file data (doc/format.md §5.2.5, §5.2.10, §7, §8.3, §7.5,
 * doc/format.md §9.3): the data of a write is cut into extents, each encoded
 * (compressed, then encrypted, then checksummed, in that order), written
 * to one bucket per replica through the write point, and described by an
 * extent key: a crc entry when checksummed or compressed (the narrowest
 * that holds it), then one pointer per replica.
 *
 *   struct bch_io_opts o;
 *   bch_io_opts_get(c, &inode, &o);
 *   n = bch_write_extents(c, &o, inum, sector, data, sectors, &keys, err);
 *   ...the keys go into one transaction with the inode (fsops_data.c)...
 *
 * The write point (one per filesystem, for foreground writes) keeps an
 * open bucket per replica, on distinct devices, and fills it before it
 * takes the next: a sequential writer's extents are contiguous on disk.
 * Buckets come from the engine (bch_fs_rw_data_bucket: a new gen, its
 * alloc key committed before any pointer to it).
 *
 * Called with the engine lock held; single-threaded like the engine.
 */
#ifndef BCH_IO_WRITE_H
#define BCH_IO_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "format/format.h"

struct bch_fs;
struct bch_inode_unpacked;
struct bulk_keys;
struct printbuf;

/* What a write of one inode's data does (the filesystem's options, overridden by the inode's). */
struct bch_io_opts {
	unsigned	csum_type;		/* on-disk checksum type (BCH_CHECKSUM_*) */
	unsigned	compression_type;	/* on-disk compression type, 0 = none */
	unsigned	nr_replicas;		/* durability wanted */
	unsigned	nr_replicas_req;	/* durability required (fewer: -EROFS) */
	unsigned	foreground_target;	/* 0 none, 1..256 device + 1, >= 257 group + 257 */
	unsigned	extent_max;		/* encoded_extent_max, sectors */
	unsigned	block_sectors;
	bool		encrypted;
};

void bch_io_opts_get(struct bch_fs *c, const struct bch_inode_unpacked *inode,
		     struct bch_io_opts *o);

/*
 * Is member @dev in target @target (0: every device; 1..256: device + 1;
 * from 257: disk group + 257, its subgroups included)?
 */
bool bch_dev_in_target(struct bch_fs *c, unsigned dev, unsigned target);

/* One encoded piece of data (bch_extent_encode). */
struct bch_encoded {
	struct bch_extent_crc_unpacked crc;	/* entry_type -1: no crc entry */
	uint64_t	in;			/* sectors of input consumed */
	uint64_t	out;			/* sectors to write (payload) */
	const uint8_t	*payload;		/* the data itself or @cbuf */
	uint64_t	version_lo;		/* 0 unless encrypted */
};

/*
 * Encode the front of @data (@sectors of it, a whole number of blocks) into
 * at most @space sectors: compression per doc/format.md §8.3 into @cbuf (at least
 * min(sectors, extent_max) * 512 + one block bytes), encryption in place
 * (of @data or @cbuf) with @version_lo (> 0 when encrypted), the checksum
 * or MAC. Returns 0 or a negative error (-BCH_ERR_no_key, codec errors).
 */
int bch_extent_encode(struct bch_fs *c, const struct bch_io_opts *o, uint8_t *data,
		      uint64_t sectors, uint64_t space, uint8_t *cbuf, uint64_t version_lo,
		      struct bch_encoded *out, struct printbuf *err);

/*
 * The value of an extent key: the crc entry of @e (if any), then one
 * pointer per entry of @ptrs. Returns the value size in bytes.
 */
unsigned bch_extent_value(const struct bch_encoded *e, const struct bch_extent_ptr_unpacked *ptrs,
			  unsigned nr_ptrs, uint64_t *v);

/*
 * Write @sectors sectors of @data (a whole number of blocks; used as
 * scratch: it may be encrypted in place) as the extents of inode @inum
 * from file sector @start, and append their keys to @keys (not
 * committed). Returns the number of sectors written: all of them, or
 * fewer when space ran out after some were written; -ENOSPC when none
 * could be; other negative errors (I/O: nothing of this call should be
 * committed then).
 */
int64_t bch_write_extents(struct bch_fs *c, const struct bch_io_opts *o, uint64_t inum,
			  uint64_t start, uint8_t *data, uint64_t sectors,
			  struct bulk_keys *keys, struct printbuf *err);

/* The write point's state (owned by the engine; bch_write_point_free at stop). */
struct bch_write_point;
void bch_write_point_free(struct bch_fs *c, struct bch_write_point *wp);

#endif
