/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Filesystem-level reads on top of the btree iterators: inodes, path and
 * name lookup, readdir, file data, symlinks and xattrs. Used by `extract`
 * and the FUSE mount; everything is read-only.
 *
 *   struct bch_inode_unpacked inode;
 *   uint64_t inum;
 *   bch_lookup_path(c, "/dir/file", &inum, err);
 *   bch_inode_get(c, inum, &inode, err);
 *
 *   struct bch_file f;
 *   bch_file_open(c, &inode, &f);
 *   while ((n = bch_file_read(&f, off, buf, len, err)) > 0) off += n;
 *   bch_file_close(&f);
 *
 * Conventions: functions return 0 (or a byte count) / a negative error
 * (errcode.h) and append a description of what went wrong to @err (may be
 * NULL); they print nothing. -ENOENT = no such name / inode.
 *
 * Thread safety: no hidden global state. Each struct bch_file (iterator
 * position, decoded-extent cache) belongs to one thread at a time; the
 * other calls keep their state on the stack. Concurrent readers still
 * share c's btree node cache, which must then be safe for that (btree.c).
 */
#ifndef BCH_FSREAD_H
#define BCH_FSREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "btree/btree.h"
#include "core/bch_fs.h"
#include "bkey/inode.h"
#include "fs/io_read.h"

struct bch_fs;
struct printbuf;

/* ---- inodes ---- */

/* The inode @inum (a type-128 key). -ENOENT if there is none. */
int bch_inode_get(struct bch_fs *c, uint64_t inum, struct bch_inode_unpacked *inode,
		  struct printbuf *err);

/* What stat(2) would say. */
struct bch_stat {
	uint64_t	ino;
	uint32_t	mode;		/* type and permission bits */
	uint64_t	nlink;		/* with the bias added back */
	uint32_t	uid, gid;
	unsigned	rdev_major, rdev_minor;	/* char/block devices */
	uint64_t	size;		/* bytes */
	uint64_t	blocks;		/* 512-byte sectors (bi_sectors) */
	struct timespec	atime, mtime, ctime, otime;
	uint32_t	flags;		/* bi_flags bits 0-4: sync immutable append nodump noatime */
};

void bch_inode_stat(const struct bch_fs *c, const struct bch_inode_unpacked *inode,
		    struct bch_stat *st);

/* Stored inode time -> timespec (60: signed count of time_precision ns + time_base_lo). */
struct timespec bch_time_to_timespec(const struct bch_fs *c, uint64_t stored);

/* ---- names ---- */

enum bch_lookup_flags {
	/* when the hash probe does not find the name, scan the whole
	 * directory (damaged hash tables; costs O(directory) per miss) */
	BCH_LOOKUP_SCAN		= 1 << 0,
};

/*
 * Look up @name (@len bytes, no '/') in directory @dir (doc/format.md §5.6.3:
 * start at hash(name), probe forward over live entries and whiteouts,
 * stop at an empty slot). "." and ".." are not stored and not found here.
 * Returns 0 with *@inum (and *@d_type if not NULL), -ENOENT, -ENOTDIR if
 * @dir is not a directory, -ENAMETOOLONG, or an error.
 */
int bch_lookup(struct bch_fs *c, const struct bch_inode_unpacked *dir,
	       const char *name, size_t len, unsigned flags,
	       uint64_t *inum, unsigned *d_type, struct printbuf *err);

/*
 * Resolve @path from the root ("/" or "" = the root; leading, repeated and
 * trailing '/' ignored; "." components skipped; ".." is not supported and
 * gives -EINVAL). Symlinks inside the path are not followed (-ENOTDIR if
 * one is used as a directory). Uses BCH_LOOKUP_SCAN as a fallback.
 */
int bch_lookup_path(struct bch_fs *c, const char *path, uint64_t *inum,
		    struct printbuf *err);

/*
 * One directory entry. @cookie is where to continue after it (the
 * entry's hash offset + 1; doc/format.md §5.6.3).
 * Return 0 to go on, > 0 to stop (bch_readdir returns it), < 0 to fail.
 */
typedef int (*bch_readdir_fn)(void *arg, const char *name, size_t len,
			      uint64_t inum, unsigned d_type, uint64_t cookie);

/*
 * The stored entries of directory @dir_inum in hash order, starting at
 * @cookie (0, 1 and 2 all start at the beginning; 0 and 1 are the readdir
 * positions of "." and "..", which are not stored and not returned).
 * Entries whose value cannot be decoded are skipped and counted in
 * *@nr_bad (may be NULL), with a note in @err.
 */
int bch_readdir(struct bch_fs *c, uint64_t dir_inum, uint64_t cookie,
		bch_readdir_fn fn, void *arg, unsigned long *nr_bad,
		struct printbuf *err);

/* ---- file data ---- */

/*
 * An open regular file or symlink: keeps an extents iterator positioned
 * after the last read and the last decoded extent, so a sequential read
 * walks the extents once and decodes each of them once.
 */
struct bch_file {
	struct bch_fs		*c;
	uint64_t		inum;
	uint64_t		size;		/* i_size at open */

	bool			iter_live;
	struct btree_iter	iter;
	uint64_t		iter_sector;	/* iter is at the first key ending after this */
	struct printbuf		*iter_err;	/* node problems of iter (owned) */

	struct bch_read_cache	rc;
	uint64_t		ov_changes;	/* c->overlay.changes when positioned */
	unsigned		promote_target;	/* at open (fs/promote.h): 0 none */
	bool			atime_done;	/* the mount updated the atime once */

	/* bch_file_read_ahead(): its own iterator, queued up to ahead_sector */
	bool			ahead_live;
	struct btree_iter	ahead_iter;
	uint64_t		ahead_sector;
	struct printbuf		*ahead_err;
};

void bch_file_open(struct bch_fs *c, const struct bch_inode_unpacked *inode,
		   struct bch_file *f);
void bch_file_close(struct bch_file *f);
/*
 * The filesystem changed (c->overlay.changes moved on since the file was
 * opened or last reset): its iterators are dropped, so the next read
 * sees the btrees as they are now, and its size becomes @size.
 */
void bch_file_reset(struct bch_file *f, uint64_t size);
static inline bool bch_file_stale(const struct bch_file *f)
{
	return f->ov_changes != f->c->overlay.changes;
}

/*
 * Read up to @len bytes at byte @offset: holes read as zeroes; the result
 * is clamped to i_size (0 at or after the end). Returns the number of
 * bytes read, or a negative error with the failing inode and offset in
 * @err. With @partial not NULL, a read error does not stop the read: the
 * unreadable sectors read as zeroes, *@partial is set to true and the
 * error noted in @err; the return is then the full length.
 */
ssize_t bch_file_read(struct bch_file *f, uint64_t offset, void *buf, size_t len,
		      bool *partial, struct printbuf *err);

/*
 * A read for a reply made without copying (FUSE): like bch_file_read(),
 * but data that the worker of @ra read, verified and decoded ahead
 * (bch_read_extent_locate()) is not copied into @buf; *@segs describes the
 * result in file order: pieces in @buf (mem NULL: at file offset -
 * @offset, as bch_file_read() would put them; holes, and data not read
 * ahead) and pieces in the worker's buffers (valid until the
 * next bch_file_read_ahead()). Adjacent pieces are merged. @segs->v is
 * grown as needed (free() it). @ra may be NULL: everything is in @buf.
 */
struct bch_file_seg {
	const void	*mem;		/* NULL: in the caller's buffer */
	uint64_t	len;		/* bytes */
};

struct bch_file_segs {
	struct bch_file_seg	*v;
	size_t			nr, size;
};

ssize_t bch_file_read_segs(struct bch_file *f, uint64_t offset, void *buf, size_t len,
			   struct bch_read_ahead *ra, struct bch_file_segs *segs,
			   struct printbuf *err);

/*
 * Queue the data extents of the file over bytes [@offset, @offset + @len)
 * (clamped to i_size) that were not queued before for the worker of @ra
 * (bch_read_extent_ahead(); nothing when @ra is NULL), so that the next
 * bch_file_read_segs() of them find them read and verified. Sequential
 * calls continue where the last one stopped (a full queue stops it
 * early). Problems reading the btree are left to the read.
 */
void bch_file_read_ahead(struct bch_file *f, uint64_t offset, uint64_t len,
			 struct bch_read_ahead *ra);

/*
 * The data of the file from byte @offset to i_size, skipping holes: @fn
 * gets each run of data (adjacent keys that carry data: extents and cached
 * extents) in pieces of at most @max_chunk bytes, in file order. Gaps
 * between keys, reservations, discards and cached extents whose copies
 * are all stale or missing are holes and are not passed on (a sparse copy seeks over them). @fn returns 0 to go on, non-zero to
 * stop (returned). @partial as for bch_file_read().
 */
typedef int (*bch_file_data_fn)(void *arg, uint64_t offset, const void *buf, size_t len);

int bch_file_read_data(struct bch_file *f, uint64_t offset, size_t max_chunk,
		       bch_file_data_fn fn, void *arg, bool *partial,
		       struct printbuf *err);

/* Whole-call convenience: open, read, close. */
ssize_t bch_read(struct bch_fs *c, uint64_t inum, uint64_t offset, void *buf,
		 size_t len, struct printbuf *err);

/*
 * Symlink target of @inode (its file data, i_size bytes, at most
 * PATH_MAX - 1 = 4095 bytes) into @buf (@size bytes), NUL-terminated.
 * Returns the target length, -EINVAL if @inode is not a symlink,
 * -ENAMETOOLONG if it does not fit, or a read error.
 */
ssize_t bch_readlink(struct bch_fs *c, const struct bch_inode_unpacked *inode,
		     char *buf, size_t size, struct printbuf *err);

/* ---- xattrs ---- */

/*
 * Full name of an xattr as the VFS knows it: "user.x", "trusted.x",
 * "security.x", "system.posix_acl_access" / "system.posix_acl_default"
 * (types 1 / 2, whose stored name is empty). Returns the length written
 * (NUL-terminated, @size >= 1), -ERANGE if it does not fit, or -EINVAL for
 * an unknown type.
 */
int bch_xattr_full_name(unsigned x_type, const void *name, size_t name_len,
			char *buf, size_t size);

/* Parse a full name into (type, stored name); -EOPNOTSUPP for unknown prefixes. */
int bch_xattr_parse_name(const char *full, unsigned *x_type, const char **name,
			 size_t *name_len);

/*
 * One xattr of an inode: its type, stored name (without prefix) and value
 * as stored. Return 0 to go on, > 0 to stop, < 0 to fail.
 */
typedef int (*bch_xattr_fn)(void *arg, unsigned x_type, const char *name,
			    size_t name_len, const void *val, size_t val_len);

/* Every xattr of @inum in hash order; undecodable ones are skipped (noted in @err, counted). */
int bch_xattr_list(struct bch_fs *c, uint64_t inum, bch_xattr_fn fn, void *arg,
		   unsigned long *nr_bad, struct printbuf *err);

/*
 * Value of xattr @full_name of @inode (hash lookup with probing, then a
 * scan of the inode's xattrs as a fallback) into @buf: returns the value
 * size; with @size 0 just the size; -ERANGE if @size is too small;
 * -ENODATA if there is no such xattr. POSIX ACLs are returned in the VFS
 * xattr format (bch_acl_to_xattr). "bcachefs.NAME" is the inode option
 * NAME as text (bch_inode_opt_xattr_get()).
 */
ssize_t bch_xattr_get(struct bch_fs *c, const struct bch_inode_unpacked *inode,
		      const char *full_name, void *buf, size_t size,
		      struct printbuf *err);

/*
 * Convert a stored POSIX ACL (doc/format.md §5.7: version 1, short entries for
 * USER_OBJ/GROUP_OBJ/MASK/OTHER) to the VFS xattr format (version 2, all
 * entries 8 bytes, id -1 for the short ones). @out may be NULL to get the
 * size. Returns the size, -EINVAL for a malformed ACL, -ERANGE if
 * @out_size is too small.
 */
ssize_t bch_acl_to_xattr(const void *val, size_t len, void *out, size_t out_size);

/*
 * A POSIX ACL as Linux hands it out (system.posix_acl_*: le32 version 2,
 * then 8-byte entries) in the on-disk form of doc/format.md §5.7 (le32 version 1,
 * short entries for the owner, group, mask and other, long ones for named
 * users and groups) of xattr type @type. The bytes written, 0 when nothing
 * is to be stored (an empty ACL, or an access ACL that only repeats the
 * mode), -EINVAL, or -E2BIG when @out_size is too small.
 */
ssize_t bch_acl_from_xattr(const uint8_t *v, size_t len, unsigned type,
			   uint8_t *out, size_t out_size);

#endif
