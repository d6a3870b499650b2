/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-place migration of a mounted ext2/3/4 or xfs filesystem to bcachefs
 * (doc/tools.md §6), without copying file data:
 *
 *   bch_migrate_prepare()  find the device, check everything that can be
 *                          checked (mount root, no nested mounts, block
 *                          sizes, free space, sector 7 unused), create and
 *                          map the reserved file <root>/bcachefs (device
 *                          size / 5) and place the superblock in it; with
 *                          dry_run, instead walk the tree and count what
 *                          would be linked and copied: nothing is written.
 *   bch_migrate_run()      write the superblocks (in the reserved file) and
 *                          the layout at sector 7, then build the new
 *                          filesystem in one go (init.h + source.h in link
 *                          mode): every bucket outside the reserved file is
 *                          kept out of use, file data is linked in place,
 *                          and /old_migrated_filesystem keeps every other
 *                          sector of the device (the old filesystem) in use.
 *
 * Beyond the 2018 tool: the old filesystem stays valid (only space it
 * reserved for the new one, and sector 7, which ext4 with 4 KiB blocks
 * and xfs with 512-byte sectors leave unused, are written; other
 * filesystems, or those geometries, are refused); the new filesystem's
 * first buckets, which the superblock at sector 8 will take, are left out
 * of it (member first_bucket; data there is copied, not linked), so
 * bch_migrate_superblock() never lands on data, even with
 * old_migrated_filesystem still present.
 *
 * The filesystem must not be written to between migrate and the mount of
 * the new filesystem: both share the data blocks.
 */
#ifndef BCH_MIGRATE_H
#define BCH_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/source.h"

struct printbuf;

#define BCH_MIGRATE_RESERVED_NAME	"bcachefs"
#define BCH_MIGRATE_OLD_FS_NAME		"old_migrated_filesystem"

/* What a dry run found (bytes). */
struct bch_migrate_counts {
	uint64_t	nr_files, nr_dirs, nr_symlinks, nr_special, nr_hardlinks;
	uint64_t	nr_linked_extents, linked_bytes;
	uint64_t	nr_copied_extents, copied_bytes;	/* symlink targets too */
	uint64_t	nr_unaligned;		/* extents migrate would refuse */
	uint64_t	nr_unplaced, unplaced_bytes;	/* not placed yet (written out first) */
	uint64_t	hole_bytes;		/* unwritten (preallocated) */
};

struct bch_migrate {
	/* inputs */
	const char	*fs_root;
	bool		force;		/* reuse an existing reserved file */
	bool		dry_run;
	bool		encrypted;
	const char	*passphrase;	/* with encrypted; NULL: key stored in clear */
	size_t		passphrase_len;
	void		(*progress)(void *priv, uint64_t files, uint64_t bytes, int done);
	void		*progress_priv;

	/* bch_migrate_prepare() */
	char		*root;		/* real path of the mount point */
	char		*dev_path;	/* the block device */
	char		*fs_type;	/* "ext4", "xfs" ... */
	uint64_t	st_dev;
	uint64_t	dev_sectors;
	unsigned	block_sectors;	/* the device's physical block size */
	unsigned	bucket_sectors;
	uint64_t	nbuckets;
	unsigned	first_bucket;
	uint64_t	reserve_bytes;	/* size of the reserved file */
	char		*reserved_path;
	uint64_t	reserved_ino;
	struct bch_source_range *reserved;	/* its extents, device sectors, sorted */
	size_t		nr_reserved;
	uint64_t	sb_offset;	/* sector of the first superblock copy */
	struct bch_migrate_counts counts;	/* dry run */

	/* bch_migrate_run() */
	struct bch_source_link link;
	uint64_t	nr_inodes;
	uint8_t		user_uuid[16];
	struct printbuf	*warnings;	/* may be NULL: lines that do not stop it */
};

int bch_migrate_prepare(struct bch_migrate *m, struct printbuf *err);
int bch_migrate_run(struct bch_migrate *m, struct printbuf *err);
void bch_migrate_exit(struct bch_migrate *m);

/*
 * migrate-superblock (doc/tools.md §6): add a superblock at sector 8 to the
 * filesystem whose superblock is at @offset of @dev (unmounted): inserted
 * first in the layout, every copy rewritten, the layout at sector 7, and
 * sectors 0-6 zeroed (the old filesystem's signatures: it is gone once
 * sector 8 is written). Refused when sectors 0 to 8 + the superblock size
 * could hold anything of the filesystem (below first_bucket they cannot;
 * otherwise the filesystem is opened and its extents, nodes and journal
 * checked).
 */
int bch_migrate_superblock(const char *dev, uint64_t offset, struct printbuf *err);

#endif
