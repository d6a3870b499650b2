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
#include <pthread.h>
#include <signal.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include <unistd.h>

#include "admin/admin.h"
#include "alloc/space.h"
#include "btree/btree.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "format/format.h"
#include "btree/btree_update.h"
#include "admin/data_job.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "fs/fsops.h"
#include "fs/fsread.h"
#include "fs/inode_opts.h"
#include "fs/quota.h"
#include "bkey/inode.h"
#include "fs/io_read.h"
#include "format/ioctl.h"
#include "util/util.h"

#define BCH_FUSE_DEFAULT_TIMEOUT	86400.0
/* how far past a read the data is read and verified ahead (bytes; the
 * worker's buffers hold 8 MiB, io_read.c) */
#define BCH_FUSE_READ_AHEAD		(6ULL << 20)
/* pieces of a reply sent as they are (libfuse adds one for the header) */
#define BCH_FUSE_REPLY_IOV_MAX		256

/* A map of u64 keys (never 0) to u64 values: open addressing, linear probing. */
struct u64map {
	uint64_t		*keys, *vals;
	size_t			nr, size;
};

#define OPEN_ORPHAN		(1ULL << 63)

/* An open file: the reader's state, on the list of files still open. */
struct open_file {
	struct bch_file		f;		/* first: fi->fh points here */
	struct open_file	*prev, *next;
};

struct bch_fuse {
	/* files opened and not released (freed at the end if the kernel never said) */
	struct open_file	*open_files;
	struct bch_fs		*c;
	struct bch_fuse_opts	opts;
	double			timeout;

	/* directory inum -> parent inum, from lookups */
	struct u64map		parents;

	/* reads: the worker reading ahead (NULL: none), and the buffer and
	 * pieces of the reply (one request at a time) */
	struct bch_read_ahead	*ra;
	void			*rbuf;
	size_t			rbuf_size;
	struct bch_file_segs	segs;
	struct iovec		*iov;
	size_t			iov_nr;

	/* read-write: open handles per inode, and orphans (unlinked while open) */
	struct u64map		opens;		/* inum -> open handles | ORPHAN */
	pthread_t		timer;
	bool			timer_live;
	bool			timer_stop;
	pthread_mutex_t		timer_lock;
	pthread_cond_t		timer_cond;

	bool			readahead_done;
	bool			statfs_done;
	/* damage found (core/integrity.h): the journal written, the session ended */
	bool			damage_marked, stop_done, panic_done;
	struct bch_space	statfs_space;	/* read-only: computed once */
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

static bool is_orphan(const struct bch_fuse *bf, uint64_t inum);

static void fill_stat(struct bch_fuse *bf, const struct bch_inode_unpacked *inode,
		      struct stat *st)
{
	struct bch_stat s;

	bch_inode_stat(bf->c, inode, &s);
	memset(st, 0, sizeof(*st));
	st->st_ino	= s.ino;
	st->st_mode	= s.mode;
	st->st_nlink	= is_orphan(bf, s.ino) ? 0 : s.nlink;
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

bool bch_fuse_mount_dev(const char *mnt, dev_t *dev)
{
	char devnum[32];
	unsigned maj, min;

	if (!mount_devnum(mnt, devnum, sizeof(devnum)) ||
	    sscanf(devnum, "%u:%u", &maj, &min) != 2)
		return false;
	*dev = makedev(maj, min);
	return true;
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

/* ---- u64 maps: directory -> parent, inode -> open handles ---- */

static size_t map_slot(const struct u64map *m, uint64_t k)
{
	size_t i = (size_t)((k * 0x9e3779b97f4a7c15ULL) >> 17) & (m->size - 1);

	while (m->keys[i] && m->keys[i] != k)
		i = (i + 1) & (m->size - 1);
	return i;
}

static void map_set(struct u64map *m, uint64_t k, uint64_t v)
{
	size_t i;

	if (!k)
		return;
	if ((m->nr + 1) * 2 > m->size) {
		uint64_t *ok = m->keys, *ov = m->vals;
		size_t osize = m->size;

		m->size = osize ? osize * 2 : 256;
		m->keys = xcalloc(m->size, sizeof(uint64_t));
		m->vals = xcalloc(m->size, sizeof(uint64_t));
		for (i = 0; i < osize; i++)
			if (ok[i]) {
				size_t j = map_slot(m, ok[i]);

				m->keys[j] = ok[i];
				m->vals[j] = ov[i];
			}
		free(ok);
		free(ov);
	}
	i = map_slot(m, k);
	if (!m->keys[i]) {
		m->keys[i] = k;
		m->nr++;
	}
	m->vals[i] = v;
}

static bool map_get(const struct u64map *m, uint64_t k, uint64_t *v)
{
	size_t i;

	if (!m->size || !k)
		return false;
	i = map_slot(m, k);
	if (!m->keys[i])
		return false;
	*v = m->vals[i];
	return true;
}

/* Remove @k (backward-shift deletion keeps every probe run whole). */
static void map_del(struct u64map *m, uint64_t k)
{
	size_t i, j;

	if (!m->size || !k)
		return;
	i = map_slot(m, k);
	if (!m->keys[i])
		return;
	m->keys[i] = 0;
	m->nr--;
	for (j = (i + 1) & (m->size - 1); m->keys[j]; j = (j + 1) & (m->size - 1)) {
		size_t home = (size_t)((m->keys[j] * 0x9e3779b97f4a7c15ULL) >> 17) & (m->size - 1);

		/* does j's home lie cyclically in (i, j]? then it stays */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		m->keys[j] = 0;
		i = j;
	}
}

static void map_exit(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static void parent_set(struct bch_fuse *bf, uint64_t dir, uint64_t parent)
{
	map_set(&bf->parents, dir, parent);
}

static uint64_t parent_get(const struct bch_fuse *bf, uint64_t dir)
{
	uint64_t p;

	if (dir == BCACHEFS_ROOT_INO || !map_get(&bf->parents, dir, &p))
		return dir;
	return p;
}

/* ---- operations ---- */

static void *timer_fn(void *arg);
static void reply_ret(struct bch_fuse *bf, fuse_req_t req, int ret, struct printbuf *err,
		      const char *op, uint64_t inum);

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
	/* no write-back cache: every write comes here as it is made */
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
	if (bf->opts.rw) {
		/* writes of up to 1 MiB: one extent batch per request */
		conn->max_write = 1U << 20;
		/* the umask is applied here, where default ACLs are known */
		if (conn->capable & FUSE_CAP_DONT_MASK)
			conn->want |= FUSE_CAP_DONT_MASK;
		if (!bf->timer_live && !pthread_create(&bf->timer, NULL, timer_fn, bf))
			bf->timer_live = true;
	}
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

/* One more open handle of @inum (read-write: tracked for unlinked open files). */
static void opens_inc(struct bch_fuse *bf, uint64_t inum)
{
	uint64_t v = 0;

	if (!bf->opts.rw)
		return;
	map_get(&bf->opens, inum, &v);
	map_set(&bf->opens, inum, v + 1);
}

/* One fewer; the last handle of an orphan deletes it. */
static void opens_dec(struct bch_fuse *bf, uint64_t inum)
{
	struct printbuf err = PRINTBUF;
	uint64_t v;
	int ret;

	if (!bf->opts.rw || !map_get(&bf->opens, inum, &v))
		return;
	if ((v & ~OPEN_ORPHAN) > 1) {
		map_set(&bf->opens, inum, v - 1);
		return;
	}
	map_del(&bf->opens, inum);
	if (!(v & OPEN_ORPHAN))
		return;
	ret = bch_fs_inode_rm(bf->c, inum, &err);
	if (ret)
		bf_log(bf, &err, "deleting unlinked inode %" PRIu64 " at its last close failed: %s",
		       inum, bch_err_str(ret));
	printbuf_exit(&err);
}

static bool opens_in_use(void *arg, uint64_t inum)
{
	struct bch_fuse *bf = arg;
	uint64_t v;

	return map_get(&bf->opens, inum, &v) && (v & ~OPEN_ORPHAN);
}

/* Unlinked while open: stat says no link. */
static bool is_orphan(const struct bch_fuse *bf, uint64_t inum)
{
	uint64_t v;

	return bf->opts.rw && map_get(&bf->opens, inum, &v) && (v & OPEN_ORPHAN);
}

static void orphan_mark(struct bch_fuse *bf, uint64_t inum)
{
	uint64_t v;

	if (inum && map_get(&bf->opens, inum, &v))
		map_set(&bf->opens, inum, v | OPEN_ORPHAN);
}

/* Off the list of open files, closed and freed. */
static void open_file_free(struct bch_fuse *bf, struct bch_file *f)
{
	struct open_file *o = (struct open_file *)f;

	if (o->prev)
		o->prev->next = o->next;
	else
		bf->open_files = o->next;
	if (o->next)
		o->next->prev = o->prev;
	bch_file_close(f);
	free(o);
}

/* A handle for @inode; reply to open (or create, with @e). */
static void file_open_reply(struct bch_fuse *bf, fuse_req_t req,
			    const struct bch_inode_unpacked *inode, struct fuse_file_info *fi,
			    const struct fuse_entry_param *e)
{
	struct open_file *o = xcalloc(1, sizeof(*o));
	struct bch_file *f = &o->f;

	o->next = bf->open_files;
	if (o->next)
		o->next->prev = o;
	bf->open_files = o;
	bch_file_open(bf->c, inode, f);
	fi->fh = (uint64_t)(uintptr_t)f;
	if (bf->opts.kernel_cache ||
	    (bf->opts.rw && bf->opts.cache_auto && (fi->flags & O_ACCMODE) != O_RDONLY))
		fi->keep_cache = !bf->opts.rw;	/* read-only: the data cannot change */
	else
		fi->direct_io = 1;
	opens_inc(bf, inode->bi_inum);
	if (e ? fuse_reply_create(req, e, fi) : fuse_reply_open(req, fi)) {
		/* the open was interrupted: no release will come */
		opens_dec(bf, inode->bi_inum);
		open_file_free(bf, f);
	}
}

static void bf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);
	struct bch_inode_unpacked inode;

	if (!bf->opts.rw && ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))) {
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
	if (bf->opts.rw && (fi->flags & O_TRUNC)) {
		/* FUSE_CAP_ATOMIC_O_TRUNC (libfuse's default): the truncate is ours */
		struct bch_setattr sa = { .valid = BCH_SET_SIZE | BCH_SET_MTIME_NOW };
		struct printbuf err = PRINTBUF;
		int ret = bch_fs_setattr(bf->c, inode.bi_inum, &sa, &inode, &err);

		if (ret) {
			reply_ret(bf, req, ret, &err, "open O_TRUNC", inode.bi_inum);
			printbuf_exit(&err);
			return;
		}
		printbuf_exit(&err);
	}
	if (bf->opts.readahead_kb && bf->opts.mountpoint && !bf->readahead_done) {
		mount_set_readahead(bf->opts.mountpoint, bf->opts.readahead_kb);
		bf->readahead_done = true;
	}
	file_open_reply(bf, req, &inode, fi, NULL);
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
	if (bch_file_stale(f)) {
		/* written since: the iterators start afresh, the size is the new one */
		struct bch_inode_unpacked inode;

		if (!get_inode(bf, req, f->inum, "read", &inode))
			goto out;
		bch_file_reset(f, inode.bi_size);
		if (bf->ra)
			bch_read_ahead_restart(bf->ra);
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
	if (err.pos)
		/* a copy was bad and another served the read: say which */
		bf_log(bf, &err, "read of inode %" PRIu64 " at offset %lld: served from another copy",
		       f->inum, (long long)off);
	if (bf->opts.rw && !bf->opts.noatime && !f->atime_done) {
		/* relatime: once per open file at most */
		struct printbuf aerr = PRINTBUF;

		f->atime_done = true;
		if (bch_fs_read_atime(bf->c, f->inum, &aerr))
			bf_log(bf, &aerr, "updating the atime of inode %" PRIu64 " failed", f->inum);
		printbuf_exit(&aerr);
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
	struct bch_fuse *bf = req_fs(req);
	struct bch_file *f = (struct bch_file *)(uintptr_t)fi->fh;

	if (f) {
		uint64_t inum = f->inum;

		open_file_free(bf, f);
		opens_dec(bf, inum);
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
	struct bch_inode_unpacked inode;
	unsigned long nr_bad = 0;
	int ret;

	if (!get_inode(bf, req, inum, "listxattr", &inode))
		goto out;
	/* the inode's options first, as "bcachefs.NAME" (fs/inode_opts.h) */
	bch_inode_opts_xattr_list(&names, &inode);
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
out:
	printbuf_exit(&names);
	printbuf_exit(&err);
}

/*
 * Quotas through the root directory (FUSE has no quotactl; fs/quota.h):
 * getxattr "bcachefs_quota.report" is the report of every counted type,
 * its first 60 KiB of whole lines; "bcachefs_quota.report.N" the lines
 * from line N on (a page; empty at the end);
 * setxattr "bcachefs_quota.TYPE.ID" (TYPE user, group or project) with
 * "space_hard=SECTORS,space_soft=...,inodes_hard=N,inodes_soft=N" sets
 * limits (root only). What `bcachefs quota` uses. Returns false when
 * @name is not one of these (an ordinary xattr).
 */
#define QUOTA_XATTR_PREFIX	"bcachefs_quota."
#define QUOTA_XATTR_PAGE	(60U << 10)

static bool quota_xattr(struct bch_fuse *bf, fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, bool set)
{
	struct bch_quota_table *q = bch_quota_running(bf->c);
	struct printbuf out = PRINTBUF;
	const char *what;

	if (strncmp(name, QUOTA_XATTR_PREFIX, strlen(QUOTA_XATTR_PREFIX)) ||
	    bch_fuse_ino_to_inum(ino) != BCACHEFS_ROOT_INO)
		return false;
	what = name + strlen(QUOTA_XATTR_PREFIX);
	if (!q) {
		fuse_reply_err(req, EOPNOTSUPP);
	} else if (!set) {
		unsigned long long from = 0;
		char *e = NULL;

		if (!strncmp(what, "report.", 7)) {
			errno = 0;
			from = strtoull(what + 7, &e, 10);
		}
		if (strcmp(what, "report") && (!e || errno || e == what + 7 || *e)) {
			fuse_reply_err(req, ENODATA);
		} else {
			/*
			 * The lines from line @from on, as many as fit an xattr
			 * value (the kernel takes 64 KiB at most): the command
			 * asks for the next page from the next line.
			 */
			const char *p, *start, *end;

			bch_quota_report(&out, q);
			p = printbuf_str(&out);
			for (; from && *p; from--)
				p = strchr(p, '\n') + 1;
			start = end = p;
			while (*p && (size_t)(strchr(p, '\n') + 1 - start) <= QUOTA_XATTR_PAGE) {
				p = strchr(p, '\n') + 1;
				end = p;
			}
			if (!size)
				fuse_reply_xattr(req, (size_t)(end - start));
			else if ((size_t)(end - start) > size)
				fuse_reply_err(req, ERANGE);
			else
				fuse_reply_buf(req, start, (size_t)(end - start));
		}
	} else {
		char type_name[16], val[256], *e;
		const char *dot = strchr(what, '.');
		struct bch_quota_h lim;
		unsigned long long id;
		int type = -1, ret;

		if (dot && (size_t)(dot - what) < sizeof(type_name)) {
			memcpy(type_name, what, (size_t)(dot - what));
			type_name[dot - what] = '\0';
			type = bch_quota_type_lookup(type_name);
		}
		errno = 0;
		id = dot ? strtoull(dot + 1, &e, 10) : 0;
		if (type < 0 || errno || e == dot + 1 || *e || id > UINT32_MAX ||
		    size >= sizeof(val) || memchr(value, 0, size)) {
			fuse_reply_err(req, EINVAL);
			goto out;
		}
		if (fuse_req_ctx(req)->uid) {
			fuse_reply_err(req, EPERM);
			goto out;
		}
		memcpy(val, value, size);
		val[size] = '\0';
		bch_quota_limits_get(q, (unsigned)type, (uint32_t)id, &lim);
		ret = bch_quota_limits_parse(val, &lim);
		if (!ret)
			ret = bch_quota_limits_set(bf->c, (unsigned)type, (uint32_t)id, &lim, &out);
		if (ret)
			reply_ret(bf, req, ret, &out, "set quota limits", BCACHEFS_ROOT_INO);
		else
			fuse_reply_err(req, 0);
	}
out:
	printbuf_exit(&out);
	return true;
}

static void bf_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked inode;
	void *buf = NULL;
	ssize_t n;

	if (quota_xattr(bf, req, ino, name, NULL, size, false))
		goto out;
	if (!get_inode(bf, req, bch_fuse_ino_to_inum(ino), "getxattr", &inode))
		goto out;
	if (size)
		buf = xmalloc(size);
	n = bch_xattr_get(bf->c, &inode, name, buf, size, &err);
	if (n < 0) {
		/* a user's asking wrongly is not worth a log line; EINVAL: "bcachefs.BAD" */
		bool asked = n == -ENODATA || n == -ERANGE || n == -EOPNOTSUPP || n == -EINVAL;

		if (!asked)
			bf_log(bf, &err, "getxattr %s of inode %" PRIu64 " failed: %s",
			       name, inode.bi_inum, bch_err_str((int)n));
		fuse_reply_err(req, asked ? (int)-n : fuse_errno((int)n));
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
 * statfs: the space accounting `fs usage` prints (alloc/space.h): blocks
 * are the members' buckets, free what is not in use, available what a
 * data write can take (the reserve left out). Read-write: from the running
 * allocator, each time. Read-only: from one walk of the btrees (nothing
 * changes). Inodes are not preallocated: f_files is the inodes in use plus
 * as many free as available blocks, so that df -i shows the real count
 * used (bch_fs_nr_inodes(): kept as inodes come and go, not walked).
 */
static void bf_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct bch_fuse *bf = req_fs(req);
	struct bch_fs *c = bf->c;
	struct statvfs sv;
	unsigned block_sectors = max_t(unsigned, c->block_size, 1);
	uint64_t capacity, free_sectors, avail;

	if (bf->opts.rw) {
		struct bch_statfs st;

		bch_fs_statfs(c, &st);
		capacity	= st.capacity;
		free_sectors	= st.free;
		avail		= st.avail;
	} else {
		if (!bf->statfs_done) {
			struct printbuf err = PRINTBUF;
			struct bch_space *s = xcalloc(1, sizeof(*s));

			if (bch_fs_space_walk(c, s, &err))
				bf_log(bf, &err, "statfs: %s", printbuf_str(&err));
			bf->statfs_space = *s;
			free(s);
			printbuf_exit(&err);
			bf->statfs_done = true;
		}
		capacity	= bf->statfs_space.capacity;
		free_sectors	= bf->statfs_space.free;
		avail		= bf->statfs_space.available;
	}

	memset(&sv, 0, sizeof(sv));
	sv.f_bsize	= block_sectors * 512;
	sv.f_frsize	= block_sectors * 512;
	sv.f_blocks	= capacity / block_sectors;
	sv.f_bfree	= free_sectors / block_sectors;
	sv.f_bavail	= avail / block_sectors;
	sv.f_ffree	= sv.f_bavail;
	sv.f_favail	= sv.f_bavail;
	sv.f_files	= bch_fs_nr_inodes(c) + sv.f_ffree;
	sv.f_namemax	= BCH_NAME_MAX;
	fuse_reply_statfs(req, &sv);
}

/* ---- writing ---- */

/*
 * An engine error as the reply: the errno callers expect as it is, anything
 * else logged (with what the engine said) and mapped.
 */
static void reply_ret(struct bch_fuse *bf, fuse_req_t req, int ret, struct printbuf *err,
		      const char *op, uint64_t inum)
{
	int e = fuse_errno(ret);

	switch (e) {
	case EINVAL:
		/* a refused transaction says why; a bad argument does not */
		if (err && err->pos)
			bf_log(bf, err, "%s of inode %" PRIu64 " refused", op, inum);
		break;
	case ENOENT: case EEXIST: case ENOTDIR: case EISDIR: case ENOTEMPTY:
	case ENAMETOOLONG: case EPERM: case EMLINK: case ENODATA:
	case ERANGE: case E2BIG: case EOPNOTSUPP: case ENXIO: case EFBIG: case EACCES:
	case ENODEV: case EDQUOT:
		break;
	case ENOSPC:
		if (err && err->pos)
			bf_log(bf, err, "%s of inode %" PRIu64 ": no space left", op, inum);
		break;
	default:
		bf_log(bf, err, "%s of inode %" PRIu64 " failed: %s; returned %s", op, inum,
		       bch_err_str(ret), strerror(e));
	}
	fuse_reply_err(req, e);
}

static void entry_fill(struct bch_fuse *bf, const struct bch_inode_unpacked *u,
		       struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino		= bch_fuse_inum_to_ino(u->bi_inum);
	e->generation	= u->bi_generation;
	e->attr_timeout	= bf->timeout;
	e->entry_timeout = bf->timeout;
	fill_stat(bf, u, &e->attr);
}

static void creds(fuse_req_t req, struct bch_creds *cr)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	cr->uid = ctx ? ctx->uid : 0;
	cr->gid = ctx ? ctx->gid : 0;
	/* FUSE_CAP_DONT_MASK: the umask is ours to apply (not with a default ACL) */
	cr->umask = ctx ? ctx->umask : 022;
}

/* Create @name in @parent and reply with its entry (or open it: @fi). */
static void do_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      dev_t rdev, const char *symlink, struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked u;
	struct fuse_entry_param e;
	struct bch_creds cr;
	uint64_t dir = bch_fuse_ino_to_inum(parent);
	int ret;

	creds(req, &cr);
	ret = bch_fs_create(bf->c, dir, name, strlen(name), mode, rdev, symlink, &cr, &u, &err);
	if (ret) {
		reply_ret(bf, req, ret, &err, "create in directory", dir);
		goto out;
	}
	if (S_ISDIR(u.bi_mode))
		parent_set(bf, u.bi_inum, dir);
	entry_fill(bf, &u, &e);
	if (fi)
		file_open_reply(bf, req, &u, fi, &e);
	else
		fuse_reply_entry(req, &e);
out:
	printbuf_exit(&err);
}

static void bf_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	do_create(req, parent, name, mode, rdev, NULL, NULL);
}

static void bf_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	do_create(req, parent, name, (mode & 07777) | S_IFDIR, 0, NULL, NULL);
}

static void bf_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	do_create(req, parent, name, S_IFLNK | 0777, 0, link, NULL);
}

static void bf_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	do_create(req, parent, name, (mode & 07777) | S_IFREG, 0, NULL, fi);
}

static void bf_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked u;
	struct fuse_entry_param e;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	int ret;

	ret = bch_fs_link(bf->c, inum, bch_fuse_ino_to_inum(newparent), newname,
			  strlen(newname), &u, &err);
	if (ret) {
		reply_ret(bf, req, ret, &err, "link", inum);
	} else {
		entry_fill(bf, &u, &e);
		fuse_reply_entry(req, &e);
	}
	printbuf_exit(&err);
}

static void do_unlink(fuse_req_t req, fuse_ino_t parent, const char *name, bool rmdir)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t dir = bch_fuse_ino_to_inum(parent), orphan = 0;
	int ret;

	ret = bch_fs_unlink(bf->c, dir, name, strlen(name), rmdir, opens_in_use, bf,
			    &orphan, &err);
	if (ret) {
		reply_ret(bf, req, ret, &err, rmdir ? "rmdir in directory" : "unlink in directory", dir);
	} else {
		orphan_mark(bf, orphan);
		fuse_reply_err(req, 0);
	}
	printbuf_exit(&err);
}

static void bf_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	do_unlink(req, parent, name, false);
}

static void bf_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	do_unlink(req, parent, name, true);
}

static void bf_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t odir = bch_fuse_ino_to_inum(parent), ndir = bch_fuse_ino_to_inum(newparent);
	uint64_t orphan = 0;
	unsigned f = 0;
	int ret;

	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (flags & RENAME_NOREPLACE)
		f |= BCH_RENAME_NOREPLACE;
	if (flags & RENAME_EXCHANGE)
		f |= BCH_RENAME_EXCHANGE;
	ret = bch_fs_rename(bf->c, odir, name, strlen(name), ndir, newname, strlen(newname), f,
			    opens_in_use, bf, &orphan, &err);
	if (ret) {
		reply_ret(bf, req, ret, &err, "rename in directory", odir);
	} else {
		uint64_t inum;
		struct bch_inode_unpacked d;

		orphan_mark(bf, orphan);
		/* ".." of a directory that moved */
		if (odir != ndir && !bch_inode_get(bf->c, ndir, &d, NULL) &&
		    !bch_lookup(bf->c, &d, newname, strlen(newname), 0, &inum, NULL, NULL))
			parent_set(bf, inum, ndir);
		fuse_reply_err(req, 0);
	}
	printbuf_exit(&err);
}

static void bf_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked u;
	struct bch_setattr sa = { 0 };
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	struct stat st;
	int ret;

	if (to_set & FUSE_SET_ATTR_MODE) {
		sa.valid |= BCH_SET_MODE;
		sa.mode = attr->st_mode;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		sa.valid |= BCH_SET_UID;
		sa.uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		sa.valid |= BCH_SET_GID;
		sa.gid = attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (attr->st_size < 0) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		sa.valid |= BCH_SET_SIZE;
		sa.size = (uint64_t)attr->st_size;
	}
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		sa.valid |= BCH_SET_ATIME_NOW;
	else if (to_set & FUSE_SET_ATTR_ATIME) {
		sa.valid |= BCH_SET_ATIME;
		sa.atime = attr->st_atim;
	}
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		sa.valid |= BCH_SET_MTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_MTIME) {
		sa.valid |= BCH_SET_MTIME;
		sa.mtime = attr->st_mtim;
	}
	if (to_set & FUSE_SET_ATTR_CTIME) {
		sa.valid |= BCH_SET_CTIME;
		sa.ctime = attr->st_ctim;
	}
	ret = bch_fs_setattr(bf->c, inum, &sa, &u, &err);
	if (ret) {
		reply_ret(bf, req, ret, &err, "setattr", inum);
	} else {
		fill_stat(bf, &u, &st);
		fuse_reply_attr(req, &st, bf->timeout);
	}
	printbuf_exit(&err);
}

static void bf_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	ssize_t n;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	{
		const struct fuse_ctx *ctx = fuse_req_ctx(req);
		unsigned flags = fi->flags & O_APPEND ? BCH_WRITE_APPEND : 0;

		/* a write by anyone but root takes setuid away (the kernel's
		 * file_remove_privs, which direct I/O does not do for us) */
		if (ctx && ctx->uid)
			flags |= BCH_WRITE_KILL_SUID;
		n = bch_fs_write(bf->c, inum, (uint64_t)off, buf, size, flags, NULL, &err);
	}
	if (n < 0)
		reply_ret(bf, req, (int)n, &err, "write", inum);
	else
		fuse_reply_write(req, (size_t)n);
	printbuf_exit(&err);
}

static void bf_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void bf_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	int ret = bch_fs_fsync(bf->c, &err);

	if (ret)
		reply_ret(bf, req, ret, &err, "fsync", bch_fuse_ino_to_inum(ino));
	else
		fuse_reply_err(req, 0);
	printbuf_exit(&err);
}

static void bf_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	int ret;

	if (quota_xattr(bf, req, ino, name, value, size, true))
		goto out;
	ret = bch_fs_xattr_set(bf->c, inum, name, value, size,
			       (flags & XATTR_CREATE ? BCH_XATTR_CREATE : 0) |
			       (flags & XATTR_REPLACE ? BCH_XATTR_REPLACE : 0), &err);
	if (ret)
		reply_ret(bf, req, ret, &err, "setxattr", inum);
	else
		fuse_reply_err(req, 0);
out:
	printbuf_exit(&err);
}

static void bf_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	int ret = bch_fs_xattr_remove(bf->c, inum, name, &err);

	if (ret)
		reply_ret(bf, req, ret, &err, "removexattr", inum);
	else
		fuse_reply_err(req, 0);
	printbuf_exit(&err);
}

static void bf_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			 struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	unsigned m = 0;
	int ret;

	if (offset < 0 || length <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (mode & FALLOC_FL_KEEP_SIZE)
		m |= BCH_FALLOC_KEEP_SIZE;
	if (mode & FALLOC_FL_PUNCH_HOLE)
		m |= BCH_FALLOC_PUNCH_HOLE;
	if (mode & FALLOC_FL_ZERO_RANGE)
		m |= BCH_FALLOC_ZERO_RANGE;
	ret = bch_fs_fallocate(bf->c, inum, m, (uint64_t)offset, (uint64_t)length, &err);
	if (ret)
		reply_ret(bf, req, ret, &err, "fallocate", inum);
	else
		fuse_reply_err(req, 0);
	printbuf_exit(&err);
}

static void bf_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	int64_t ret;

	if ((whence != SEEK_DATA && whence != SEEK_HOLE) || off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	ret = bch_fs_seek(bf->c, inum, (uint64_t)off, whence == SEEK_DATA, &err);
	if (ret < 0)
		reply_ret(bf, req, (int)ret, &err, "lseek", inum);
	else
		fuse_reply_lseek(req, (off_t)ret);
	printbuf_exit(&err);
}

static void bf_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct bch_fuse *bf = req_fs(req);

	/* counted like files: a directory removed while open stays until closed */
	opens_inc(bf, bch_fuse_ino_to_inum(ino));
	if (fuse_reply_open(req, fi))
		opens_dec(bf, bch_fuse_ino_to_inum(ino));
}

static void bf_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	opens_dec(req_fs(req), bch_fuse_ino_to_inum(ino));
	fuse_reply_err(req, 0);
}

/* ---- the journal timer (read-write) ---- */

/*
 * Every 100 ms: the open journal entry is written once it is a second
 * old (doc/engine.md §4.4), so that at most the last second of work that nobody
 * fsync'd is lost in a crash.
 */
/*
 * How old the open journal entry may get (spec 30: write_delay, 1000 ms).
 * BCH_TEST_JOURNAL_DELAY_MS (tests only) sets it, so that a test can tell
 * what an explicit flush wrote from what the timer would have.
 */
static uint64_t journal_delay_ns(void)
{
	static uint64_t v;

	if (!v) {
		const char *e = getenv("BCH_TEST_JOURNAL_DELAY_MS");
		unsigned long ms = e && *e ? strtoul(e, NULL, 10) : 0;

		v = ms ? ms * 1000ULL * 1000 : BCH_JOURNAL_WRITE_DELAY_NS;
	}
	return v;
}

static void *timer_fn(void *arg)
{
	struct bch_fuse *bf = arg;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&bf->timer_lock);
	while (!bf->timer_stop) {
		struct timespec ts;
		struct printbuf err = PRINTBUF;
		int ret;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&bf->timer_cond, &bf->timer_lock, &ts);
		if (bf->timer_stop)
			break;
		pthread_mutex_unlock(&bf->timer_lock);
		bch_fs_lock(bf->c);
		ret = bch_journal_flush_old(bf->c, journal_delay_ns(), &err);
		bch_fs_unlock(bf->c);
		if (ret)
			bf_log(bf, &err, "writing the journal failed: %s; the filesystem is read-only now",
			       bch_err_str(ret));
		printbuf_exit(&err);
		pthread_mutex_lock(&bf->timer_lock);
	}
	pthread_mutex_unlock(&bf->timer_lock);
	return NULL;
}

static void timer_stop(struct bch_fuse *bf)
{
	if (!bf->timer_live)
		return;
	pthread_mutex_lock(&bf->timer_lock);
	bf->timer_stop = true;
	pthread_cond_signal(&bf->timer_cond);
	pthread_mutex_unlock(&bf->timer_lock);
	pthread_join(bf->timer, NULL);
	bf->timer_live = false;
}

/*
 * After each operation, what damage found during it asks for (core/
 * integrity.h): when the writes stopped (errors=remount-ro) or the mount
 * must end (errors=panic), what was committed goes to the journal once
 * (over no node); a panic ends the session as SIGTERM does (cmd_mount
 * then writes nothing more); copies that failed to verify while files
 * were read are rewritten from good ones (as scrub does), after the
 * reply went out.
 */
static void bf_integrity(struct bch_fuse *bf)
{
	struct bch_fs *c = bf->c;
	struct bch_repair_req r;

	if (c->integ.nodes_bad && c->rw && !bf->damage_marked) {
		struct printbuf err = PRINTBUF;

		bf->damage_marked = true;
		if (bch_fs_rw_mark_damaged(c, &err))
			bf_log(bf, &err, "marking the filesystem not clean after damage was found failed");
		printbuf_exit(&err);
	}
	if (bch_fs_writes_stopped(c) && !bf->stop_done) {
		struct printbuf err = PRINTBUF;

		bf->stop_done = true;
		if (c->rw && bch_journal_flush(c, &err))
			bf_log(bf, &err, "writing the journal after damage was found failed");
		printbuf_exit(&err);
		c->integ.nr_repairs = 0;
	}
	if (c->integ.panic && !bf->panic_done) {
		bf->panic_done = true;
		kill(getpid(), SIGTERM);
	}
	while (!bch_fs_writes_stopped(c) && bch_fs_rw(c) && bch_fs_repair_take(c, &r)) {
		struct printbuf log = PRINTBUF;
		int ret = bch_data_repair(c, &r, &log);
		const char *p = printbuf_str(&log);

		while (*p) {
			const char *nl = strchrnul(p, '\n');

			bf_log(bf, NULL, "repair on read: %.*s", (int)(nl - p), p);
			p = *nl ? nl + 1 : nl;
		}
		if (ret < 0)
			bf_log(bf, NULL, "repair on read of inode %" PRIu64 " failed: %s", r.inode,
			       bch_err_str(ret));
		printbuf_exit(&log);
	}
}

/* ---- the operations, each under the engine lock ---- */

#define LOCKED(fn, params, args)					\
static void fn##_locked params						\
{									\
	struct bch_fuse *bf = req_fs(req);				\
									\
	bch_fs_lock(bf->c);						\
	fn args;							\
	bf_integrity(bf);						\
	bch_fs_unlock(bf->c);						\
}

LOCKED(bf_lookup, (fuse_req_t req, fuse_ino_t parent, const char *name), (req, parent, name))
LOCKED(bf_getattr, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
LOCKED(bf_setattr, (fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		    struct fuse_file_info *fi), (req, ino, attr, to_set, fi))
LOCKED(bf_readlink, (fuse_req_t req, fuse_ino_t ino), (req, ino))
LOCKED(bf_mknod, (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev),
       (req, parent, name, mode, rdev))
LOCKED(bf_mkdir, (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode),
       (req, parent, name, mode))
LOCKED(bf_unlink, (fuse_req_t req, fuse_ino_t parent, const char *name), (req, parent, name))
LOCKED(bf_rmdir, (fuse_req_t req, fuse_ino_t parent, const char *name), (req, parent, name))
LOCKED(bf_symlink, (fuse_req_t req, const char *link, fuse_ino_t parent, const char *name),
       (req, link, parent, name))
LOCKED(bf_rename, (fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		   const char *newname, unsigned int flags),
       (req, parent, name, newparent, newname, flags))
LOCKED(bf_link, (fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname),
       (req, ino, newparent, newname))
LOCKED(bf_open, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
LOCKED(bf_read, (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi), (req, ino, size, off, fi))
LOCKED(bf_write, (fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		  struct fuse_file_info *fi), (req, ino, buf, size, off, fi))
LOCKED(bf_release, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
LOCKED(bf_fsync, (fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi),
       (req, ino, datasync, fi))
LOCKED(bf_readdir, (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi), (req, ino, size, off, fi))
LOCKED(bf_statfs, (fuse_req_t req, fuse_ino_t ino), (req, ino))
LOCKED(bf_setxattr, (fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		     size_t size, int flags), (req, ino, name, value, size, flags))
LOCKED(bf_getxattr, (fuse_req_t req, fuse_ino_t ino, const char *name, size_t size),
       (req, ino, name, size))
LOCKED(bf_listxattr, (fuse_req_t req, fuse_ino_t ino, size_t size), (req, ino, size))
LOCKED(bf_removexattr, (fuse_req_t req, fuse_ino_t ino, const char *name), (req, ino, name))
LOCKED(bf_create, (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   struct fuse_file_info *fi), (req, parent, name, mode, fi))
LOCKED(bf_fallocate, (fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		      struct fuse_file_info *fi), (req, ino, mode, offset, length, fi))
LOCKED(bf_lseek, (fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		  struct fuse_file_info *fi), (req, ino, off, whence, fi))
LOCKED(bf_opendir, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
LOCKED(bf_releasedir, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi),
       (req, ino, fi))

/*
 * ioctl (issue 12): BCH_IOCTL_QUERY_UUID on any file or directory of the
 * mount answers the filesystem's external uuid, which is how a command
 * finds the filesystem behind a path (doc/ioctl.md §2) and then its control
 * socket (mount/ctl.h). Everything else: ENOTTY. No engine state is
 * touched (the uuid never changes), so no lock.
 */
/* bi_flags bits 0-4 (sync immutable append nodump noatime) as FS_XFLAG_* */
static const unsigned xflag_of_bit[] = {
	FS_XFLAG_SYNC, FS_XFLAG_IMMUTABLE, FS_XFLAG_APPEND, FS_XFLAG_NODUMP, FS_XFLAG_NOATIME,
};

/*
 * FS_IOC_FSGETXATTR / FS_IOC_FSSETXATTR (the kernel's fileattr calls come
 * as these): the project id of an inode, which project quotas count, as
 * the 2018 kernel set it (chattr -p, xfs_io chproj); new inodes take their
 * directory's. The flags are shown; a set that would change them is
 * refused (EOPNOTSUPP), only the project id changes.
 */
static void fsxattr_ioctl(struct bch_fuse *bf, fuse_req_t req, fuse_ino_t ino, unsigned cmd,
			  const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked inode;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	struct fsxattr fa = { 0 };
	unsigned xflags = 0;
	int ret;

	if (!get_inode(bf, req, inum, "fsxattr ioctl", &inode))
		goto out;
	for (unsigned i = 0; i < ARRAY_SIZE(xflag_of_bit); i++)
		if (inode.bi_flags & (1U << i))
			xflags |= xflag_of_bit[i];
	if (cmd == FS_IOC_FSGETXATTR) {
		if (out_bufsz < sizeof(fa)) {
			fuse_reply_err(req, EINVAL);
			goto out;
		}
		fa.fsx_xflags = xflags;
		fa.fsx_projid = inode.bi_project;
		fuse_reply_ioctl(req, 0, &fa, sizeof(fa));
		goto out;
	}
	if (!bf->opts.rw) {
		fuse_reply_err(req, EROFS);
		goto out;
	}
	if (in_bufsz < sizeof(fa)) {
		fuse_reply_err(req, EINVAL);
		goto out;
	}
	memcpy(&fa, in_buf, sizeof(fa));
	if (fa.fsx_xflags != xflags) {
		fuse_reply_err(req, EOPNOTSUPP);
		goto out;
	}
	if (fa.fsx_projid != inode.bi_project) {
		struct bch_setattr sa = { .valid = BCH_SET_PROJECT, .project = fa.fsx_projid };

		ret = bch_fs_setattr(bf->c, inum, &sa, NULL, &err);
		if (ret) {
			reply_ret(bf, req, ret, &err, "set project", inum);
			goto out;
		}
	}
	fuse_reply_ioctl(req, 0, NULL, 0);
out:
	printbuf_exit(&err);
}

/*
 * FS_IOC_GETFLAGS / SETFLAGS (lsattr, chattr): bi_flags bits 0-4 shown;
 * setting the flags they have already passes (chattr -p sets them back
 * as they were), changing them is EOPNOTSUPP (nothing here enforces them).
 */
static void flags_ioctl(struct bch_fuse *bf, fuse_req_t req, fuse_ino_t ino, bool set,
			const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	static const unsigned fl_of_bit[] = {
		FS_SYNC_FL, FS_IMMUTABLE_FL, FS_APPEND_FL, FS_NODUMP_FL, FS_NOATIME_FL,
	};
	struct bch_inode_unpacked inode;
	unsigned flags = 0, want;

	if (!get_inode(bf, req, bch_fuse_ino_to_inum(ino), "flags ioctl", &inode))
		return;
	for (unsigned i = 0; i < ARRAY_SIZE(fl_of_bit); i++)
		if (inode.bi_flags & (1U << i))
			flags |= fl_of_bit[i];
	if (!set) {
		if (out_bufsz < sizeof(flags))
			fuse_reply_err(req, EINVAL);
		else
			fuse_reply_ioctl(req, 0, &flags, sizeof(flags));
		return;
	}
	if (in_bufsz < sizeof(want)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&want, in_buf, sizeof(want));
	if (want != flags)
		fuse_reply_err(req, EOPNOTSUPP);
	else
		fuse_reply_ioctl(req, 0, NULL, 0);
}

static void bf_ioctl(fuse_req_t req, fuse_ino_t ino, int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		     size_t in_bufsz, size_t out_bufsz)
{
	struct bch_fuse *bf = req_fs(req);
	struct bch_ioctl_query_uuid u;

	if ((unsigned)cmd == FS_IOC_GETFLAGS || (unsigned)cmd == FS_IOC_SETFLAGS) {
		flags_ioctl(bf, req, ino, (unsigned)cmd == FS_IOC_SETFLAGS, in_buf, in_bufsz,
			    out_bufsz);
		return;
	}
	if ((unsigned)cmd == FS_IOC_FSGETXATTR || (unsigned)cmd == FS_IOC_FSSETXATTR) {
		fsxattr_ioctl(bf, req, ino, (unsigned)cmd, in_buf, in_bufsz, out_bufsz);
		return;
	}
	if ((unsigned)cmd != BCH_IOCTL_QUERY_UUID) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (out_bufsz < sizeof(u)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(u.uuid.b, bf->c->user_uuid, sizeof(u.uuid.b));
	fuse_reply_ioctl(req, 0, &u, sizeof(u));
}

LOCKED(bf_ioctl, (fuse_req_t req, fuse_ino_t ino, int cmd, void *arg, struct fuse_file_info *fi,
		 unsigned flags, const void *in_buf, size_t in_bufsz, size_t out_bufsz),
       (req, ino, cmd, arg, fi, flags, in_buf, in_bufsz, out_bufsz))

/* read-only: the write operations are left NULL (libfuse answers ENOSYS; a
 * read-only mount never gets them) */
static const struct fuse_lowlevel_ops bch_fuse_ops_ro = {
	.init		= bf_init,
	.lookup		= bf_lookup_locked,
	.getattr	= bf_getattr_locked,
	.readlink	= bf_readlink_locked,
	.open		= bf_open_locked,
	.read		= bf_read_locked,
	.release	= bf_release_locked,
	.readdir	= bf_readdir_locked,
	.statfs		= bf_statfs_locked,
	.getxattr	= bf_getxattr_locked,
	.listxattr	= bf_listxattr_locked,
	.ioctl		= bf_ioctl_locked,
};

static const struct fuse_lowlevel_ops bch_fuse_ops_rw = {
	.init		= bf_init,
	.lookup		= bf_lookup_locked,
	.getattr	= bf_getattr_locked,
	.setattr	= bf_setattr_locked,
	.readlink	= bf_readlink_locked,
	.mknod		= bf_mknod_locked,
	.mkdir		= bf_mkdir_locked,
	.unlink		= bf_unlink_locked,
	.rmdir		= bf_rmdir_locked,
	.symlink	= bf_symlink_locked,
	.rename		= bf_rename_locked,
	.link		= bf_link_locked,
	.open		= bf_open_locked,
	.read		= bf_read_locked,
	.write		= bf_write_locked,
	.flush		= bf_flush,
	.release	= bf_release_locked,
	.fsync		= bf_fsync_locked,
	.opendir	= bf_opendir_locked,
	.readdir	= bf_readdir_locked,
	.releasedir	= bf_releasedir_locked,
	.fsyncdir	= bf_fsync_locked,
	.statfs		= bf_statfs_locked,
	.setxattr	= bf_setxattr_locked,
	.getxattr	= bf_getxattr_locked,
	.listxattr	= bf_listxattr_locked,
	.removexattr	= bf_removexattr_locked,
	.create		= bf_create_locked,
	.fallocate	= bf_fallocate_locked,
	.lseek		= bf_lseek_locked,
	.ioctl		= bf_ioctl_locked,
};

struct bch_fuse *bch_fuse_new(struct bch_fs *c, const struct bch_fuse_opts *opts)
{
	struct bch_fuse *bf = xcalloc(1, sizeof(*bf));

	bf->c = c;
	if (opts)
		bf->opts = *opts;
	bf->timeout = bf->opts.timeout > 0 ? bf->opts.timeout : BCH_FUSE_DEFAULT_TIMEOUT;
	pthread_mutex_init(&bf->timer_lock, NULL);
	pthread_cond_init(&bf->timer_cond, NULL);
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
	timer_stop(bf);
	/* released by no one: the session ended first (an unmount racing a close) */
	while (bf->open_files)
		open_file_free(bf, &bf->open_files->f);
	bch_read_ahead_free(bf->ra);
	free(bf->rbuf);
	free(bf->segs.v);
	free(bf->iov);
	map_exit(&bf->parents);
	map_exit(&bf->opens);
	pthread_mutex_destroy(&bf->timer_lock);
	pthread_cond_destroy(&bf->timer_cond);
	free(bf);
}

struct fuse_session *bch_fuse_session_new(struct bch_fuse *bf, struct fuse_args *args)
{
	const struct fuse_lowlevel_ops *ops = bf->opts.rw ? &bch_fuse_ops_rw : &bch_fuse_ops_ro;

	return fuse_session_new(args, ops, sizeof(*ops), bf);
}

int bch_fuse_stop(struct bch_fuse *bf, struct printbuf *err)
{
	int ret = 0;

	if (!bf)
		return 0;
	timer_stop(bf);
	if (!bf->opts.rw)
		return 0;
	bch_fs_lock(bf->c);
	/* files unlinked while open, still open at the unmount */
	for (size_t i = 0; i < bf->opens.size; i++)
		if (bf->opens.keys[i] && (bf->opens.vals[i] & OPEN_ORPHAN)) {
			int r = bch_fs_inode_rm(bf->c, bf->opens.keys[i], err);

			if (r && !ret)
				ret = r;
		}
	map_exit(&bf->opens);
	bch_fs_unlock(bf->c);
	return ret;
}
