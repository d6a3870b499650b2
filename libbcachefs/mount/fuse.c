// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE low-level operations over fsread.h (read-only).
 *
 * Every operation reads what it needs from the btrees (through the node
 * cache) and keeps no per-inode state, so forget needs nothing. The only
 * state: one struct bch_file per open file handle (sequential reads walk
 * the extents once), a map of directory -> parent learned from lookups
 * (for the ".." entry of readdir; the kernel resolves ".." itself), and
 * the statfs estimate (computed once: the filesystem does not change).
 *
 * The filesystem cannot change while mounted read-only, so the kernel is
 * told to cache attributes, names (also negative ones), data and symlink
 * targets for a long time.
 */
#define FUSE_USE_VERSION 34

#include "mount/fuse.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

#include "btree.h"
#include "dev.h"
#include "errcode.h"
#include "format.h"
#include "fs.h"
#include "fsread.h"
#include "inode.h"
#include "io_read.h"
#include "util.h"

#define BCH_FUSE_DEFAULT_TIMEOUT	86400.0
/* how far past a read the data is read and verified ahead (bytes; the
 * worker's buffers hold 8 MiB, io_read.c) */
#define BCH_FUSE_READ_AHEAD		(6ULL << 20)
/* pieces of a reply sent as they are (libfuse adds one for the header) */
#define BCH_FUSE_REPLY_IOV_MAX		256

struct bch_fuse {
	struct bch_fs		*c;
	struct bch_fuse_opts	opts;
	double			timeout;

	/* directory inum -> parent inum, from lookups (0 = empty slot) */
	uint64_t		*parent_keys, *parent_vals;
	size_t			parent_nr, parent_size;

	/* reads: the worker reading ahead (NULL: none), and the buffer and
	 * pieces of the reply (one request at a time) */
	struct bch_read_ahead	*ra;
	void			*rbuf;
	size_t			rbuf_size;
	struct bch_file_segs	segs;
	struct iovec		*iov;
	size_t			iov_nr;

	bool			readahead_done;
	bool			statfs_done;
	uint64_t		statfs_used_sectors;
	uint64_t		statfs_nr_inodes;
};

/* ---- helpers ---- */

uint64_t bch_fuse_ino_to_inum(uint64_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return BCACHEFS_ROOT_INO;
	if (ino == BCACHEFS_ROOT_INO)
		return FUSE_ROOT_ID;
	return ino;
}

uint64_t bch_fuse_inum_to_ino(uint64_t inum)
{
	/* the same swap, its own inverse */
	return bch_fuse_ino_to_inum(inum);
}

static struct bch_fuse *req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* A library error as a positive errno for FUSE (never ENOSYS: the kernel
 * would stop sending that operation). */
static int fuse_errno(int ret)
{
	int e = bch_err_errno(ret);

	if (e <= 0 || e == ENOSYS)
		e = EIO;
	return e;
}

__printf(3, 4) static void bf_log(struct bch_fuse *bf, struct printbuf *lib_err,
				  const char *fmt, ...)
{
	struct printbuf msg = PRINTBUF;
	va_list args;

	if (!bf->opts.log)
		return;
	va_start(args, fmt);
	pr_vbuf(&msg, fmt, args);
	va_end(args);
	if (lib_err && lib_err->pos) {
		/* the library's lines (what it found where), joined */
		const char *s = printbuf_str(lib_err);

		pr_str(&msg, " (");
		while (*s) {
			const char *nl = strchrnul(s, '\n');

			pr_bytes(&msg, s, (size_t)(nl - s));
			s = *nl ? nl + 1 : nl;
			if (*s)
				pr_str(&msg, "; ");
		}
		pr_char(&msg, ')');
	}
	bf->opts.log(bf->opts.log_arg, printbuf_str(&msg));
	printbuf_exit(&msg);
}

/*
 * A mode the kernel accepts for inode @inum: a known file type (the
 * kernel fails a reply without one, or a root that is not a directory,
 * with a silent EIO). Logs and returns false otherwise.
 */
static bool mode_ok(struct bch_fuse *bf, uint64_t inum, unsigned mode, const char *op)
{
	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFLNK: case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		if (inum != BCACHEFS_ROOT_INO)
			return true;
		break;
	case S_IFDIR:
		return true;
	}
	bf_log(bf, NULL, "%s: inode %" PRIu64 " has mode %#o, %s; returned EIO (run fsck)",
	       op, inum, mode, inum == BCACHEFS_ROOT_INO ? "the root is not a directory" :
	       "no valid file type");
	return false;
}

/* Read inode @inum; on failure reply to @req and return false. */
static bool get_inode(struct bch_fuse *bf, fuse_req_t req, uint64_t inum,
		      const char *op, struct bch_inode_unpacked *inode)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_inode_get(bf->c, inum, inode, &err);

	if (ret) {
		if (ret != -ENOENT)
			bf_log(bf, &err, "%s: cannot read inode %" PRIu64 ": %s; returned %s",
			       op, inum, bch_err_str(ret), strerror(fuse_errno(ret)));
		fuse_reply_err(req, ret == -ENOENT ? ENOENT : fuse_errno(ret));
	} else if (!mode_ok(bf, inum, inode->bi_mode, op)) {
		fuse_reply_err(req, EIO);
		ret = -EIO;
	}
	printbuf_exit(&err);
	return !ret;
}

static void fill_stat(struct bch_fuse *bf, const struct bch_inode_unpacked *inode,
		      struct stat *st)
{
	struct bch_stat s;

	bch_inode_stat(bf->c, inode, &s);
	memset(st, 0, sizeof(*st));
	st->st_ino	= s.ino;
	st->st_mode	= s.mode;
	st->st_nlink	= s.nlink;
	st->st_uid	= s.uid;
	st->st_gid	= s.gid;
	if (S_ISCHR(s.mode) || S_ISBLK(s.mode))
		st->st_rdev = makedev(s.rdev_major, s.rdev_minor);
	st->st_size	= s.size > INT64_MAX ? INT64_MAX : (off_t)s.size;
	st->st_blocks	= s.blocks > INT64_MAX ? INT64_MAX : (blkcnt_t)s.blocks;
	st->st_blksize	= (blksize_t)(max_t(unsigned, bf->c->block_size, 1) * 512);
	st->st_atim	= s.atime;
	st->st_mtim	= s.mtime;
	st->st_ctim	= s.ctime;
}

/* The "major:minor" of the mount on @mnt (the last one), from mountinfo. */
static bool mount_devnum(const char *mnt, char *devnum, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *line = NULL;
	size_t n = 0;
	bool found = false;

	if (!f)
		return false;
	while (getline(&line, &n, f) > 0) {
		char dev[32], path[PATH_MAX], un[PATH_MAX];
		size_t i, j;

		if (sscanf(line, "%*u %*u %31s %*s %4095s", dev, path) != 2)
			continue;
		/* octal escapes (\040 for a space, ...) */
		for (i = j = 0; path[i] && j + 1 < sizeof(un); j++) {
			if (path[i] == '\\' && path[i + 1] >= '0' && path[i + 1] <= '3' &&
			    path[i + 2] >= '0' && path[i + 2] <= '7' &&
			    path[i + 3] >= '0' && path[i + 3] <= '7') {
				un[j] = (char)((path[i + 1] - '0') * 64 + (path[i + 2] - '0') * 8 +
					       (path[i + 3] - '0'));
				i += 4;
			} else {
				un[j] = path[i++];
			}
		}
		un[j] = 0;
		if (!strcmp(un, mnt)) {
			snprintf(devnum, size, "%s", dev);
			found = true;
		}
	}
	free(line);
	fclose(f);
	return found;
}

/*
 * The kernel reads ahead 128 KiB at a time on a FUSE mount by default:
 * with the page cache on, a request of that size each. Ask for more
 * (the mount's own backing device info; best effort, needs root). Not
 * through the mountpoint: that would wait for this process to answer.
 * After init was answered: the kernel lowers it to what init said.
 */
static void mount_set_readahead(const char *mnt, unsigned kb)
{
	char devnum[32], path[96];
	FILE *f;

	if (!mount_devnum(mnt, devnum, sizeof(devnum)))
		return;
	snprintf(path, sizeof(path), "/sys/class/bdi/%s/read_ahead_kb", devnum);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "%u\n", kb);
	fclose(f);
}

/* ---- directory -> parent map ---- */

static size_t parent_slot(const struct bch_fuse *bf, uint64_t k)
{
	size_t i = (size_t)((k * 0x9e3779b97f4a7c15ULL) >> 17) & (bf->parent_size - 1);

	while (bf->parent_keys[i] && bf->parent_keys[i] != k)
		i = (i + 1) & (bf->parent_size - 1);
	return i;
}

static void parent_set(struct bch_fuse *bf, uint64_t dir, uint64_t parent)
{
	size_t i;

	if (!dir)
		return;
	if ((bf->parent_nr + 1) * 2 > bf->parent_size) {
		uint64_t *ok = bf->parent_keys, *ov = bf->parent_vals;
		size_t osize = bf->parent_size;

		bf->parent_size = osize ? osize * 2 : 256;
		bf->parent_keys = xcalloc(bf->parent_size, sizeof(uint64_t));
		bf->parent_vals = xcalloc(bf->parent_size, sizeof(uint64_t));
		for (i = 0; i < osize; i++)
			if (ok[i]) {
				size_t j = parent_slot(bf, ok[i]);

				bf->parent_keys[j] = ok[i];
				bf->parent_vals[j] = ov[i];
			}
		free(ok);
		free(ov);
	}
	i = parent_slot(bf, dir);
	if (!bf->parent_keys[i]) {
		bf->parent_keys[i] = dir;
		bf->parent_nr++;
	}
	bf->parent_vals[i] = parent;
}

static uint64_t parent_get(const struct bch_fuse *bf, uint64_t dir)
{
	size_t i;

	if (dir == BCACHEFS_ROOT_INO)
		return dir;
	if (!bf->parent_size)
		return dir;
	i = parent_slot(bf, dir);
	return bf->parent_keys[i] ? bf->parent_vals[i] : dir;
}

/* ---- operations ---- */

static void bf_init(void *userdata, struct fuse_conn_info *conn)
{
	struct bch_fuse *bf = userdata;

	if (bf->opts.max_read)
		conn->max_read = bf->opts.max_read;
	/* the kernel checks permissions and ACLs (getxattr gives it the ACLs) */
	if (conn->capable & FUSE_CAP_POSIX_ACL)
		conn->want |= FUSE_CAP_POSIX_ACL;
#ifdef FUSE_CAP_CACHE_SYMLINKS
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
#endif
	/* data read and verified ahead of the reads (after daemonizing: a thread) */
	if (!bf->opts.no_read_ahead && !bf->ra)
		bf->ra = bch_read_ahead_new(bf->c);
	/* nothing is ever written back */
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
}

static void bf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked dir, inode;
	struct fuse_entry_param e;
	uint64_t dir_inum = bch_fuse_ino_to_inum(parent), inum;
	int ret;

	if (!get_inode(bf, req, dir_inum, "lookup", &dir))
		goto out;

	/*
	 * The hash probe only: a scan of the whole directory on every miss
	 * would make negative lookups O(directory). Entries a damaged hash
	 * table hides are listed by readdir but not found (fsck repairs).
	 */
	ret = bch_lookup(bf->c, &dir, name, strlen(name), 0, &inum, NULL, &err);
	if (ret == -ENOENT) {
		memset(&e, 0, sizeof(e));	/* ino 0: a cached negative entry */
		e.entry_timeout = bf->timeout;
		fuse_reply_entry(req, &e);
		goto out;
	}
	if (ret) {
		if (!bch_err_matches(ret, ENOTDIR) && !bch_err_matches(ret, ENAMETOOLONG))
			bf_log(bf, &err, "lookup of \"%s\" in directory inode %" PRIu64 " failed: %s",
			       name, dir_inum, bch_err_str(ret));
		fuse_reply_err(req, fuse_errno(ret));
		goto out;
	}
	ret = bch_inode_get(bf->c, inum, &inode, &err);
	if (ret) {
		/* a dirent pointing at nothing: an error, not an absent name */
		bf_log(bf, &err, "lookup: entry \"%s\" of directory inode %" PRIu64
		       " points to inode %" PRIu64 ", which cannot be read: %s; returned EIO",
		       name, dir_inum, inum, bch_err_str(ret));
		fuse_reply_err(req, EIO);
		goto out;
	}
	if (!mode_ok(bf, inum, inode.bi_mode, "lookup")) {
		fuse_reply_err(req, EIO);
		goto out;
	}
	if (S_ISDIR(inode.bi_mode))
		parent_set(bf, inum, dir_inum);

	memset(&e, 0, sizeof(e));
	e.ino		= bch_fuse_inum_to_ino(inum);
	e.generation	= inode.bi_generation;
	e.attr_timeout	= bf->timeout;
	e.entry_timeout	= bf->timeout;
	fill_stat(bf, &inode, &e.attr);
	fuse_reply_entry(req, &e);
out:
	printbuf_exit(&err);
}

static void bf_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);
	struct bch_inode_unpacked inode;
	struct stat st;

	if (!get_inode(bf, req, bch_fuse_ino_to_inum(ino), "getattr", &inode))
		return;
	fill_stat(bf, &inode, &st);
	fuse_reply_attr(req, &st, bf->timeout);
}

struct readdir_buf {
	fuse_req_t	req;
	char		*buf;
	size_t		size, pos;
	off_t		start;
	bool		full;
};

static bool readdir_add(struct readdir_buf *rd, const char *name, uint64_t inum,
			unsigned d_type, uint64_t next)
{
	struct stat st = { .st_ino = inum, .st_mode = (mode_t)((d_type & 15) << 12) };
	size_t n = fuse_add_direntry(rd->req, rd->buf + rd->pos, rd->size - rd->pos,
				     name, &st, (off_t)next);

	if (n > rd->size - rd->pos) {
		rd->full = true;
		return false;
	}
	rd->pos += n;
	return true;
}

static int readdir_fn(void *arg, const char *name, size_t len, uint64_t inum,
		      unsigned d_type, uint64_t cookie)
{
	struct readdir_buf *rd = arg;
	char nm[BCH_NAME_MAX + 1];

	/*
	 * The cookie is where the next call starts. One that does not move
	 * past where this call started (hash offsets 0-1, or the last
	 * offset) would make the kernel ask for the same entries forever:
	 * such entries cannot be listed.
	 */
	if (cookie <= 2 || cookie > INT64_MAX || (off_t)cookie <= rd->start)
		return 0;
	if (!len || len > BCH_NAME_MAX)
		return 0;
	memcpy(nm, name, len);
	nm[len] = 0;
	if (strlen(nm) != len)
		return 0;
	return readdir_add(rd, nm, inum, d_type, cookie) ? 0 : 1;
}

static void bf_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	struct readdir_buf rd = { .req = req, .size = size, .start = off };
	unsigned long nr_bad = 0;
	int ret = 0;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	rd.buf = xmalloc(size ? size : 1);

	/* offsets: 0 = ".", 1 = "..", then the entries' cookies (>= 3) */
	if (off == 0 && !readdir_add(&rd, ".", inum, BCH_DT_DIR, 1))
		goto reply;
	if (off <= 1 && !readdir_add(&rd, "..", parent_get(bf, inum), BCH_DT_DIR, 2))
		goto reply;

	ret = bch_readdir(bf->c, inum, off < 2 ? 2 : (uint64_t)off, readdir_fn, &rd,
			  &nr_bad, &err);
	if (nr_bad)
		bf_log(bf, &err, "readdir of directory inode %" PRIu64 ": %lu entries could not be decoded and were skipped",
		       inum, nr_bad);
	if (ret < 0) {
		bf_log(bf, nr_bad ? NULL : &err, "readdir of directory inode %" PRIu64 " at offset %lld failed: %s",
		       inum, (long long)off, bch_err_str(ret));
		/* what was gathered goes out; the error comes with the next call */
		if (!rd.pos) {
			fuse_reply_err(req, fuse_errno(ret));
			goto out;
		}
	}
reply:
	fuse_reply_buf(req, rd.buf, rd.pos);
out:
	free(rd.buf);
	printbuf_exit(&err);
}

static void bf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);
	struct bch_inode_unpacked inode;
	struct bch_file *f;

	/* write support goes here (and then the mount stops being "ro") */
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (!get_inode(bf, req, bch_fuse_ino_to_inum(ino), "open", &inode))
		return;
	if (S_ISDIR(inode.bi_mode)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (!S_ISREG(inode.bi_mode)) {
		/* devices, fifos and sockets are opened by the kernel itself */
		fuse_reply_err(req, EACCES);
		return;
	}
	if (bf->opts.readahead_kb && bf->opts.mountpoint && !bf->readahead_done) {
		mount_set_readahead(bf->opts.mountpoint, bf->opts.readahead_kb);
		bf->readahead_done = true;
	}
	f = xmalloc(sizeof(*f));
	bch_file_open(bf->c, &inode, f);
	fi->fh = (uint64_t)(uintptr_t)f;
	if (bf->opts.kernel_cache)
		fi->keep_cache = 1;	/* the data cannot change */
	else
		fi->direct_io = 1;
	if (fuse_reply_open(req, fi)) {
		/* the open was interrupted: no release will come */
		bch_file_close(f);
		free(f);
	}
}

/*
 * The reply points at its pieces (the worker's buffers, where the data was
 * verified and decoded, and rbuf: holes, and data not read ahead), and
 * the kernel copies them once, into the reader's buffer.
 */
static void bf_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);
	struct bch_file *f = (struct bch_file *)(uintptr_t)fi->fh;
	struct printbuf err = PRINTBUF;
	uint64_t pos;
	ssize_t n;
	size_t i;

	if (!f || off < 0) {
		fuse_reply_err(req, f ? EINVAL : EBADF);
		return;
	}
	if (size > bf->rbuf_size) {
		free(bf->rbuf);
		bf->rbuf = xmalloc(size);
		bf->rbuf_size = size;
	}
	/* the worker reads what comes next while this is answered */
	bch_file_read_ahead(f, (uint64_t)off + size, BCH_FUSE_READ_AHEAD, bf->ra);
	n = bch_file_read_segs(f, (uint64_t)off, bf->rbuf, size, bf->ra, &bf->segs, &err);
	if (n < 0) {
		bf_log(bf, &err, "read of inode %" PRIu64 " at offset %lld (%zu bytes) failed: %s; returned %s",
		       f->inum, (long long)off, size, bch_err_str((int)n),
		       strerror(fuse_errno((int)n)));
		fuse_reply_err(req, fuse_errno((int)n));
		goto out;
	}
	if (bf->segs.nr > BCH_FUSE_REPLY_IOV_MAX) {
		/* many small pieces (writev takes at most IOV_MAX): one buffer */
		for (i = 0, pos = 0; i < bf->segs.nr; pos += bf->segs.v[i++].len)
			if (bf->segs.v[i].mem)
				memcpy((uint8_t *)bf->rbuf + pos, bf->segs.v[i].mem,
				       (size_t)bf->segs.v[i].len);
		bf->segs.nr = 0;
	}
	if (bf->segs.nr <= 1 && (!bf->segs.nr || !bf->segs.v[0].mem)) {
		fuse_reply_buf(req, bf->rbuf, (size_t)n);
		goto out;
	}
	if (bf->segs.nr > bf->iov_nr) {
		free(bf->iov);
		bf->iov = xmalloc(bf->segs.nr * sizeof(*bf->iov));
		bf->iov_nr = bf->segs.nr;
	}
	for (i = 0, pos = (uint64_t)off; i < bf->segs.nr; i++) {
		const struct bch_file_seg *sg = &bf->segs.v[i];

		bf->iov[i].iov_base = sg->mem ? (void *)sg->mem
					      : (uint8_t *)bf->rbuf + (pos - (uint64_t)off);
		bf->iov[i].iov_len = (size_t)sg->len;
		pos += sg->len;
	}
	fuse_reply_iov(req, bf->iov, (int)bf->segs.nr);
out:
	printbuf_exit(&err);
}

static void bf_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct bch_file *f = (struct bch_file *)(uintptr_t)fi->fh;

	if (f) {
		bch_file_close(f);
		free(f);
	}
	fuse_reply_err(req, 0);
}

static void bf_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked inode;
	char target[PATH_MAX];
	ssize_t n;

	if (!get_inode(bf, req, bch_fuse_ino_to_inum(ino), "readlink", &inode))
		goto out;
	n = bch_readlink(bf->c, &inode, target, sizeof(target), &err);
	if (n < 0) {
		if (n != -EINVAL)
			bf_log(bf, &err, "readlink of inode %" PRIu64 " failed: %s",
			       inode.bi_inum, bch_err_str((int)n));
		fuse_reply_err(req, fuse_errno((int)n));
		goto out;
	}
	/* a target with a NUL byte is cut there (a C string goes to FUSE) */
	fuse_reply_readlink(req, target);
out:
	printbuf_exit(&err);
}

static int listxattr_fn(void *arg, unsigned x_type, const char *name,
			size_t name_len, const void *val, size_t val_len)
{
	struct printbuf *names = arg;
	char full[300];
	int n = bch_xattr_full_name(x_type, name, name_len, full, sizeof(full));

	/* unknown types and names with a NUL cannot be asked for: not listed */
	if (n > 0 && strlen(full) == (size_t)n)
		pr_bytes(names, full, (size_t)n + 1);
	return 0;
}

static void bf_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF, names = PRINTBUF;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	unsigned long nr_bad = 0;
	int ret;

	ret = bch_xattr_list(bf->c, inum, listxattr_fn, &names, &nr_bad, &err);
	if (nr_bad)
		bf_log(bf, &err, "listxattr of inode %" PRIu64 ": %lu xattrs could not be decoded and were skipped",
		       inum, nr_bad);
	if (ret < 0) {
		bf_log(bf, nr_bad ? NULL : &err, "listxattr of inode %" PRIu64 " failed: %s",
		       inum, bch_err_str(ret));
		fuse_reply_err(req, fuse_errno(ret));
	} else if (!size) {
		fuse_reply_xattr(req, names.pos);
	} else if (names.pos > size) {
		fuse_reply_err(req, ERANGE);
	} else {
		fuse_reply_buf(req, names.buf, names.pos);
	}
	printbuf_exit(&names);
	printbuf_exit(&err);
}

static void bf_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked inode;
	void *buf = NULL;
	ssize_t n;

	if (!get_inode(bf, req, bch_fuse_ino_to_inum(ino), "getxattr", &inode))
		goto out;
	if (size)
		buf = xmalloc(size);
	n = bch_xattr_get(bf->c, &inode, name, buf, size, &err);
	if (n < 0) {
		if (n != -ENODATA && n != -ERANGE && n != -EOPNOTSUPP)
			bf_log(bf, &err, "getxattr %s of inode %" PRIu64 " failed: %s",
			       name, inode.bi_inum, bch_err_str((int)n));
		fuse_reply_err(req, n == -ENODATA || n == -ERANGE || n == -EOPNOTSUPP
			       ? (int)-n : fuse_errno((int)n));
	} else if (!size) {
		fuse_reply_xattr(req, (size_t)n);
	} else {
		fuse_reply_buf(req, buf, (size_t)n);
	}
	free(buf);
out:
	printbuf_exit(&err);
}

/*
 * Space used, estimated once: the sum of the inodes' bi_sectors. It
 * leaves out metadata (btree nodes, journal) and counts each extent once
 * whatever its replicas or compression, so free space is approximate.
 */
static void statfs_estimate(struct bch_fuse *bf)
{
	struct printbuf err = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	uint64_t used = 0, nr = 0;

	bch_btree_iter_init(&iter, bf->c, BTREE_ID_INODES, POS_H(0, 0), &err);
	while (!bch_btree_iter_peek(&iter, &k) && k) {
		struct bch_inode_unpacked u;

		if (k->k.type == BCH_INODE_FS && !bch_inode_unpack(k, &u)) {
			used += min_t(uint64_t, u.bi_sectors, UINT64_MAX - used);
			nr++;
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	if (iter.nr_errors)
		bf_log(bf, &err, "statfs: %lu problems reading the inodes btree; the used-space estimate may be low",
		       iter.nr_errors);
	printbuf_exit(&err);
	bf->statfs_used_sectors = used;
	bf->statfs_nr_inodes = nr;
	bf->statfs_done = true;
}

static void bf_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct bch_fuse *bf = req_fs(req);
	struct bch_fs *c = bf->c;
	struct statvfs sv;
	unsigned block_sectors = max_t(unsigned, c->block_size, 1);
	uint64_t capacity = 0, free_sectors;

	/* capacity: the buckets of every member, from its superblock entry */
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++) {
		const struct bch_member_dev *ca = c->devs[i];

		if (ca && ca->nbuckets > ca->first_bucket)
			capacity += (ca->nbuckets - ca->first_bucket) * ca->bucket_size;
	}
	if (!bf->statfs_done)
		statfs_estimate(bf);
	free_sectors = capacity > bf->statfs_used_sectors ? capacity - bf->statfs_used_sectors : 0;

	memset(&sv, 0, sizeof(sv));
	sv.f_bsize	= block_sectors * 512;
	sv.f_frsize	= block_sectors * 512;
	sv.f_blocks	= capacity / block_sectors;
	sv.f_bfree	= free_sectors / block_sectors;
	sv.f_bavail	= sv.f_bfree;
	/* inodes are not preallocated: as many free as free blocks */
	sv.f_files	= bf->statfs_nr_inodes + sv.f_bfree;
	sv.f_ffree	= sv.f_bfree;
	sv.f_favail	= sv.f_bfree;
	sv.f_namemax	= BCH_NAME_MAX;
	fuse_reply_statfs(req, &sv);
}

/*
 * The operations. Write operations (setattr, mknod, mkdir, unlink, rmdir,
 * symlink, rename, link, create, write, fsync, setxattr, removexattr,
 * fallocate) are left NULL: libfuse answers ENOSYS, and the read-only
 * mount means the kernel never sends them.
 */
static const struct fuse_lowlevel_ops bch_fuse_ops = {
	.init		= bf_init,
	.lookup		= bf_lookup,
	.getattr	= bf_getattr,
	.readlink	= bf_readlink,
	.open		= bf_open,
	.read		= bf_read,
	.release	= bf_release,
	.readdir	= bf_readdir,
	.statfs		= bf_statfs,
	.getxattr	= bf_getxattr,
	.listxattr	= bf_listxattr,
};

struct bch_fuse *bch_fuse_new(struct bch_fs *c, const struct bch_fuse_opts *opts)
{
	struct bch_fuse *bf = xcalloc(1, sizeof(*bf));

	bf->c = c;
	if (opts)
		bf->opts = *opts;
	bf->timeout = bf->opts.timeout > 0 ? bf->opts.timeout : BCH_FUSE_DEFAULT_TIMEOUT;
	return bf;
}

void bch_fuse_read_ahead_stats(const struct bch_fuse *bf, unsigned long *nr_done,
			       unsigned long *nr_taken, unsigned long *nr_served)
{
	bch_read_ahead_stats(bf->ra, nr_done, nr_taken, nr_served);
}

void bch_fuse_free(struct bch_fuse *bf)
{
	if (!bf)
		return;
	bch_read_ahead_free(bf->ra);
	free(bf->rbuf);
	free(bf->segs.v);
	free(bf->iov);
	free(bf->parent_keys);
	free(bf->parent_vals);
	free(bf);
}

struct fuse_session *bch_fuse_session_new(struct bch_fuse *bf, struct fuse_args *args)
{
	return fuse_session_new(args, &bch_fuse_ops, sizeof(bch_fuse_ops), bf);
}
