/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copy a directory tree into a new filesystem (format --source): walk the
 * tree (lstat, symlinks not followed, one filesystem object per inode,
 * hard links = one inode with nlink > 1), number inodes from 4096 (the
 * root directory = the source directory; lost+found 4097 unless the
 * source has one), write file data as extents into buckets from the
 * allocator (doc/format.md §5.2.10: at most encoded_extent_max sectors per key when
 * checksummed, never across a bucket; holes kept sparse; symlink targets
 * as data; one pointer per data replica on distinct devices), then build
 * the extents, inodes, dirents and xattrs btrees in bulk (bulk.h).
 *
 * Used as the populate callback of bch_fs_initialize_opts() (init.h).
 * Data is compressed with the filesystem's compression option (the
 * writer loop of doc/format.md §8.3) and encrypted when the filesystem is
 * (versions from 65538 on, doc/format.md §9.3). POSIX ACLs (system.posix_acl_*)
 * are stored as ACL xattrs (doc/format.md §5.7) when the filesystem has ACLs on
 * (an access ACL that only repeats the mode is not stored); other
 * system.* xattrs are not copied. The number skipped is reported in
 * struct bch_source_opts. An xattr too large for a key (more than
 * BCH_XATTR_NAME_VAL_MAX bytes of name and value) is left out with a
 * warning, the rest of the tree copied.
 *
 * migrate (struct bch_source_link): the tree is the mounted filesystem the
 * new one lives in, on the same device. Regular file data is not copied
 * but linked in place where FIEMAP allows (fiemap.h: extents pointing at
 * the sectors the data already has, no checksum), copied otherwise; every
 * entry must be on that filesystem (nested mounts are an error); the
 * reserved file is left out; and a file at the root keeps every other
 * sector of the device in use (the old filesystem's metadata and free
 * space), so the new filesystem never writes there.
 */
#ifndef BCH_SOURCE_H
#define BCH_SOURCE_H

#include <stdint.h>

struct bch_fs;
struct bch_allocator;
struct btree_write_ctx;
struct bulk_root;
struct printbuf;

/* A range of device sectors. */
struct bch_source_range {
	uint64_t	start;
	uint64_t	len;
};

struct bch_source_link {
	unsigned	dev;		/* member index of the device */
	uint64_t	st_dev;		/* the source filesystem's st_dev */
	uint64_t	skip_ino;	/* the reserved file (not copied) */
	/* the reserved file's extents, device sectors */
	const struct bch_source_range *reserved;
	size_t		nr_reserved;
	uint64_t	copy_below;	/* sectors: data that starts below is copied */
	const char	*old_fs_name;	/* the file at the root keeping the rest */

	/* results */
	uint64_t	nr_linked_extents, linked_sectors;
	uint64_t	nr_copied_extents, copied_sectors;
	uint64_t	old_fs_sectors;
};

struct bch_source_opts {
	const char	*dir;
	/* called now and then while copying (may be NULL) */
	void		(*progress)(void *priv, uint64_t files, uint64_t bytes, int done);
	void		*progress_priv;
	struct bch_source_link *link;	/* migrate; NULL: format --source */

	/* what could not be copied is said here, one line each (may be NULL) */
	struct printbuf	*warnings;

	/* results */
	uint64_t	nr_inodes;
	uint64_t	nr_bytes;		/* file data copied */
	uint64_t	nr_xattrs_skipped;	/* system.*, ACLs when off */
	uint64_t	nr_xattrs_too_big;	/* do not fit in a key: not copied, in @warnings */
};

/* The largest xattr a key holds: name and value bytes together. */
#define BCH_XATTR_NAME_VAL_MAX	((255 - 5) * 8 - 8)

/* bch_init_populate_fn with @priv = struct bch_source_opts. */
int bch_source_populate(struct bch_fs *c, struct bch_allocator *a,
			const struct btree_write_ctx *w, struct bulk_root *roots,
			void *priv, struct printbuf *err);

#endif
