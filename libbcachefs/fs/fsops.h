/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filesystem operations of the running filesystem (the read-write
 * mount), each one transaction of the update engine (btree_update.h):
 * create (files, directories, device nodes, fifos, sockets, symlinks),
 * link, unlink, rmdir, rename (with RENAME_NOREPLACE / RENAME_EXCHANGE),
 * setattr (mode, owner, times, truncate), write, fallocate (allocate,
 * punch hole, zero range), xattrs, fsync and statfs.
 *
 * They follow the format exactly (spec 40): inode numbers from the hint
 * upwards (inodes_32bit respected, generation keys reused, doc/format.md §5.5.1,
 * doc/format.md §5.5.6), new inodes inheriting the parent's option fields, directory
 * link counts (doc/fsck.md §11.7), dirents and xattrs placed by linear probing and
 * deleted with whiteouts where a probe run needs them (doc/format.md §5.6.3),
 * i_size and bi_sectors updated in the transaction of the extents
 * (doc/format.md §5.5.7), deleted inodes replaced by generation keys (doc/format.md §5.5.6).
 *
 * Reads go through fsread.h. Checks the kernel does itself for a FUSE
 * mount with default_permissions (permissions, a directory renamed into
 * itself) are not repeated here.
 *
 * Conventions: 0 (or a count) or a negative error (errcode.h), with a
 * description of what went wrong in @err for anything but the plain
 * errno answers a caller expects (ENOENT, EEXIST, ENOTEMPTY, ...).
 * The caller holds the engine lock; the engine must be started
 * (bch_fs_rw_start) with batched commits for speed (bch_fs_rw_set_batch).
 */
#ifndef BCH_FSOPS_H
#define BCH_FSOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "bkey/inode.h"

struct bch_fs;
struct printbuf;

/*
 * Who creates: owner and group of new inodes, and the umask (applied here,
 * unless the parent directory has a default POSIX ACL, which then decides
 * the new inode's ACL and mode as POSIX says).
 */
struct bch_creds {
	uint32_t	uid;
	uint32_t	gid;
	uint32_t	umask;
};

/*
 * Create @name (@len bytes) in directory @dir: a regular file, directory,
 * device node, fifo or socket by @mode (and @rdev), or a symlink to
 * @symlink (mode S_IFLNK | 0777). *@out is the new inode. In a setgid
 * directory the group is the directory's (and a new directory is setgid
 * too); a default ACL of the directory becomes the new inode's access
 * ACL, masked by the mode asked for (and a new directory's default ACL).
 * -EEXIST, -ENOTDIR, -ENAMETOOLONG, -ENOSPC.
 */
int bch_fs_create(struct bch_fs *c, uint64_t dir, const char *name, size_t len,
		  unsigned mode, dev_t rdev, const char *symlink,
		  const struct bch_creds *cr, struct bch_inode_unpacked *out,
		  struct printbuf *err);

/* A new name @name in @dir for inode @inum. -EPERM for directories, -EEXIST, -EMLINK. */
int bch_fs_link(struct bch_fs *c, uint64_t inum, uint64_t dir, const char *name,
		size_t len, struct bch_inode_unpacked *out, struct printbuf *err);

/*
 * Remove @name from @dir (@rmdir: it must be an empty directory, else it
 * must not be a directory). When the last link goes and @in_use says the
 * inode is still open (it may be NULL), the inode and its data stay until
 * bch_fs_inode_rm() (*@orphan is set to its number; else 0).
 * -ENOENT, -ENOTDIR, -EISDIR, -ENOTEMPTY.
 */
int bch_fs_unlink(struct bch_fs *c, uint64_t dir, const char *name, size_t len,
		  bool rmdir, bool (*in_use)(void *arg, uint64_t inum), void *arg,
		  uint64_t *orphan, struct printbuf *err);

/* Delete inode @inum and everything of it (its data, xattrs, dirents). */
int bch_fs_inode_rm(struct bch_fs *c, uint64_t inum, struct printbuf *err);

#define BCH_RENAME_NOREPLACE	(1U << 0)
#define BCH_RENAME_EXCHANGE	(1U << 1)

/*
 * Rename @oname in @odir to @nname in @ndir (replacing it unless
 * BCH_RENAME_NOREPLACE; swapping the two with BCH_RENAME_EXCHANGE). A
 * replaced inode that loses its last link is handled as by unlink
 * (@in_use, *@orphan). -ENOENT, -EEXIST, -ENOTDIR, -EISDIR, -ENOTEMPTY,
 * -EINVAL (bad flags).
 */
int bch_fs_rename(struct bch_fs *c, uint64_t odir, const char *oname, size_t olen,
		  uint64_t ndir, const char *nname, size_t nlen, unsigned flags,
		  bool (*in_use)(void *arg, uint64_t inum), void *arg,
		  uint64_t *orphan, struct printbuf *err);

/* setattr: what to change */
#define BCH_SET_MODE		(1U << 0)
#define BCH_SET_UID		(1U << 1)
#define BCH_SET_GID		(1U << 2)
#define BCH_SET_SIZE		(1U << 3)
#define BCH_SET_ATIME		(1U << 4)
#define BCH_SET_MTIME		(1U << 5)
#define BCH_SET_ATIME_NOW	(1U << 6)
#define BCH_SET_MTIME_NOW	(1U << 7)
#define BCH_SET_CTIME		(1U << 8)
#define BCH_SET_PROJECT		(1U << 9)	/* bi_project (project quotas) */

struct bch_setattr {
	unsigned	valid;
	unsigned	mode;		/* permission bits (the type stays) */
	uint32_t	uid, gid;
	uint32_t	project;
	uint64_t	size;
	struct timespec	atime, mtime, ctime;
};

/*
 * Change what @sa says of inode @inum; ctime becomes now (unless given).
 * A size change truncates (the tail of a partial last block zeroed, the
 * extents past it deleted) or extends with a hole. -EISDIR for a size
 * change of a directory, -EINVAL for other non-regular files.
 */
int bch_fs_setattr(struct bch_fs *c, uint64_t inum, const struct bch_setattr *sa,
		   struct bch_inode_unpacked *out, struct printbuf *err);

#define BCH_WRITE_APPEND	(1U << 0)	/* at the end of the file (O_APPEND) */
#define BCH_WRITE_KILL_SUID	(1U << 1)	/* by someone else: setuid (and setgid
						   with group execute) go */

/*
 * Write @len bytes of @buf at byte @offset of regular file @inum (@flags
 * above). Returns the bytes written (fewer than @len when space ran out
 * after some) or a negative error (-ENOSPC, -EFBIG, I/O errors). *@out
 * (may be NULL) is the inode after the write.
 */
ssize_t bch_fs_write(struct bch_fs *c, uint64_t inum, uint64_t offset, const void *buf,
		     size_t len, unsigned flags, struct bch_inode_unpacked *out,
		     struct printbuf *err);

/*
 * The file was read: its atime moves to now when it is older than its
 * mtime or ctime, or a day old (relatime).
 */
int bch_fs_read_atime(struct bch_fs *c, uint64_t inum, struct printbuf *err);

/* fallocate(2) modes */
#define BCH_FALLOC_KEEP_SIZE	0x01
#define BCH_FALLOC_PUNCH_HOLE	0x02
#define BCH_FALLOC_ZERO_RANGE	0x10

/*
 * fallocate(2) on regular file @inum: mode 0 / KEEP_SIZE reserve the holes
 * of the range (reservation keys: they read as zeroes), PUNCH_HOLE |
 * KEEP_SIZE makes the range a hole, ZERO_RANGE makes it read as zeroes
 * (reserved). Partial blocks at the edges are zeroed in place.
 * -EOPNOTSUPP for other modes.
 */
int bch_fs_fallocate(struct bch_fs *c, uint64_t inum, unsigned mode, uint64_t offset,
		     uint64_t len, struct printbuf *err);

/*
 * SEEK_DATA (@data) / SEEK_HOLE from @offset of @inum: the offset found,
 * -ENXIO at or past the end.
 */
int64_t bch_fs_seek(struct bch_fs *c, uint64_t inum, uint64_t offset, bool data,
		    struct printbuf *err);

/* xattr flags (setxattr(2)) */
#define BCH_XATTR_CREATE	0x1
#define BCH_XATTR_REPLACE	0x2

/*
 * Set xattr @full_name ("user.x", "system.posix_acl_access", ...) of
 * @inum. -EEXIST / -ENODATA for CREATE / REPLACE, -EOPNOTSUPP for an
 * unknown namespace, -ERANGE for a name over 255 bytes, -E2BIG for a
 * value that does not fit a key, -EINVAL for a malformed ACL.
 * "bcachefs.NAME" sets inode option NAME (fs/inode_opts.h) in the inode:
 * -EINVAL for an unknown option or a bad value.
 */
int bch_fs_xattr_set(struct bch_fs *c, uint64_t inum, const char *full_name,
		     const void *val, size_t size, unsigned flags, struct printbuf *err);
/* Remove it: -ENODATA when there is none. */
int bch_fs_xattr_remove(struct bch_fs *c, uint64_t inum, const char *full_name,
			struct printbuf *err);

/* Everything committed so far is durable when this returns. */
int bch_fs_fsync(struct bch_fs *c, struct printbuf *err);

/*
 * statfs of the running filesystem (engine started), from the running
 * allocator (alloc/space.h: the same accounting as `fs usage`): capacity,
 * free (capacity - used) and avail (free - reserved). Zeroes with the
 * engine stopped.
 */
struct bch_statfs {
	uint64_t	capacity;	/* sectors */
	uint64_t	free;		/* sectors */
	uint64_t	avail;		/* sectors, the reserve left out */
	uint64_t	nr_inodes;
};

void bch_fs_statfs(struct bch_fs *c, struct bch_statfs *st);
/* Inodes in use: counted at the first call, then kept as they come and go. */
uint64_t bch_fs_nr_inodes(struct bch_fs *c);

/* The stored form of a time (doc/format.md §5.5.5) and of now. */
uint64_t bch_fs_time(const struct bch_fs *c, const struct timespec *ts);
uint64_t bch_fs_now(const struct bch_fs *c);

#endif
