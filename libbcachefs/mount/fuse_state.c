// SPDX-License-Identifier: GPL-2.0
/*
 * The helpers every FUSE operation uses (mount/fuse_state.h): node ids,
 * errors and the log, reading an inode for a request, stat, the mount's
 * device number and read-ahead, the maps of directory parents and of open
 * handles (files unlinked while open), open files, and the reply of an
 * engine error.
 */
#include "mount/fuse_state.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "util/errcode.h"
#include "format/format.h"
#include "fs/fsops.h"
#include "fs/fsread.h"
#include "bkey/inode.h"

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

/* A library error as a positive errno for FUSE (never ENOSYS: the kernel
 * would stop sending that operation). */
int bf_errno(int ret)
{
	int e = bch_err_errno(ret);

	if (e <= 0 || e == ENOSYS)
		e = EIO;
	return e;
}

void bf_log(struct bch_fuse *bf, struct printbuf *lib_err, const char *fmt, ...)
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
bool bf_mode_ok(struct bch_fuse *bf, uint64_t inum, unsigned mode, const char *op)
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
bool bf_get_inode(struct bch_fuse *bf, fuse_req_t req, uint64_t inum,
	       const char *op, struct bch_inode_unpacked *inode)
{
	struct printbuf err = PRINTBUF;
	int ret = bch_inode_get(bf->c, inum, inode, &err);

	if (ret) {
		if (ret != -ENOENT)
			bf_log(bf, &err, "%s: cannot read inode %" PRIu64 ": %s; returned %s",
			       op, inum, bch_err_str(ret), strerror(bf_errno(ret)));
		fuse_reply_err(req, ret == -ENOENT ? ENOENT : bf_errno(ret));
	} else if (!bf_mode_ok(bf, inum, inode->bi_mode, op)) {
		fuse_reply_err(req, EIO);
		ret = -EIO;
	}
	printbuf_exit(&err);
	return !ret;
}

static bool is_orphan(const struct bch_fuse *bf, uint64_t inum);

void bf_fill_stat(struct bch_fuse *bf, const struct bch_inode_unpacked *inode,
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
bool bf_mount_devnum(const char *mnt, char *devnum, size_t size)
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
void bf_mount_set_readahead(const char *mnt, unsigned kb)
{
	char devnum[32], path[96];
	FILE *f;

	if (!bf_mount_devnum(mnt, devnum, sizeof(devnum)))
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

void bf_map_exit(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

void bf_parent_set(struct bch_fuse *bf, uint64_t dir, uint64_t parent)
{
	map_set(&bf->parents, dir, parent);
}

uint64_t bf_parent_get(const struct bch_fuse *bf, uint64_t dir)
{
	uint64_t p;

	if (dir == BCACHEFS_ROOT_INO || !map_get(&bf->parents, dir, &p))
		return dir;
	return p;
}

/* One more open handle of @inum (read-write: tracked for unlinked open files). */
void bf_opens_inc(struct bch_fuse *bf, uint64_t inum)
{
	uint64_t v = 0;

	if (!bf->opts.rw)
		return;
	map_get(&bf->opens, inum, &v);
	map_set(&bf->opens, inum, v + 1);
}

/* One fewer; the last handle of an orphan deletes it. */
void bf_opens_dec(struct bch_fuse *bf, uint64_t inum)
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

bool bf_opens_in_use(void *arg, uint64_t inum)
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

void bf_orphan_mark(struct bch_fuse *bf, uint64_t inum)
{
	uint64_t v;

	if (inum && map_get(&bf->opens, inum, &v))
		map_set(&bf->opens, inum, v | OPEN_ORPHAN);
}

/* Off the list of open files, closed and freed. */
void bf_open_file_free(struct bch_fuse *bf, struct bch_file *f)
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
void bf_file_open_reply(struct bch_fuse *bf, fuse_req_t req,
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
	bf_opens_inc(bf, inode->bi_inum);
	if (e ? fuse_reply_create(req, e, fi) : fuse_reply_open(req, fi)) {
		/* the open was interrupted: no release will come */
		bf_opens_dec(bf, inode->bi_inum);
		bf_open_file_free(bf, f);
	}
}

/* ---- replies ---- */

/*
 * An engine error as the reply: the errno callers expect as it is, anything
 * else logged (with what the engine said) and mapped.
 */
void bf_reply_ret(struct bch_fuse *bf, fuse_req_t req, int ret, struct printbuf *err,
	       const char *op, uint64_t inum)
{
	int e = bf_errno(ret);

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
