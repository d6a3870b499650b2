// SPDX-License-Identifier: GPL-2.0
/*
 * The FUSE operations that change the filesystem (mount/fuse_ops.h), only
 * in a read-write mount: create (mknod, mkdir, symlink, create), link,
 * unlink, rmdir, rename, setattr, write, flush, fsync, fallocate, lseek,
 * and opendir / releasedir (open directories are counted like files).
 * Each is one engine call (fs/fsops.h), one transaction.
 */
#include "mount/fuse_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "util/errcode.h"
#include "format/format.h"
#include "fs/fsops.h"
#include "fs/fsread.h"
#include "bkey/inode.h"
#include "util/util.h"

static void entry_fill(struct bch_fuse *bf, const struct bch_inode_unpacked *u,
		       struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino		= bch_fuse_inum_to_ino(u->bi_inum);
	e->generation	= u->bi_generation;
	e->attr_timeout	= bf->timeout;
	e->entry_timeout = bf->timeout;
	bf_fill_stat(bf, u, &e->attr);
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
	struct bch_fuse *bf = bf_req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked u;
	struct fuse_entry_param e;
	struct bch_creds cr;
	uint64_t dir = bch_fuse_ino_to_inum(parent);
	int ret;

	creds(req, &cr);
	ret = bch_fs_create(bf->c, dir, name, strlen(name), mode, rdev, symlink, &cr, &u, &err);
	if (ret) {
		bf_reply_ret(bf, req, ret, &err, "create in directory", dir);
		goto out;
	}
	if (S_ISDIR(u.bi_mode))
		bf_parent_set(bf, u.bi_inum, dir);
	entry_fill(bf, &u, &e);
	if (fi)
		bf_file_open_reply(bf, req, &u, fi, &e);
	else
		fuse_reply_entry(req, &e);
out:
	printbuf_exit(&err);
}

void bf_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	      dev_t rdev)
{
	do_create(req, parent, name, mode, rdev, NULL, NULL);
}

void bf_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	do_create(req, parent, name, (mode & 07777) | S_IFDIR, 0, NULL, NULL);
}

void bf_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	do_create(req, parent, name, S_IFLNK | 0777, 0, link, NULL);
}

void bf_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       struct fuse_file_info *fi)
{
	do_create(req, parent, name, (mode & 07777) | S_IFREG, 0, NULL, fi);
}

void bf_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked u;
	struct fuse_entry_param e;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	int ret;

	ret = bch_fs_link(bf->c, inum, bch_fuse_ino_to_inum(newparent), newname,
			  strlen(newname), &u, &err);
	if (ret) {
		bf_reply_ret(bf, req, ret, &err, "link", inum);
	} else {
		entry_fill(bf, &u, &e);
		fuse_reply_entry(req, &e);
	}
	printbuf_exit(&err);
}

static void do_unlink(fuse_req_t req, fuse_ino_t parent, const char *name, bool rmdir)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t dir = bch_fuse_ino_to_inum(parent), orphan = 0;
	int ret;

	ret = bch_fs_unlink(bf->c, dir, name, strlen(name), rmdir, bf_opens_in_use, bf,
			    &orphan, &err);
	if (ret) {
		bf_reply_ret(bf, req, ret, &err, rmdir ? "rmdir in directory" : "unlink in directory", dir);
	} else {
		bf_orphan_mark(bf, orphan);
		fuse_reply_err(req, 0);
	}
	printbuf_exit(&err);
}

void bf_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	do_unlink(req, parent, name, false);
}

void bf_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	do_unlink(req, parent, name, true);
}

void bf_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
	       fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct bch_fuse *bf = bf_req_fs(req);
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
			    bf_opens_in_use, bf, &orphan, &err);
	if (ret) {
		bf_reply_ret(bf, req, ret, &err, "rename in directory", odir);
	} else {
		uint64_t inum;
		struct bch_inode_unpacked d;

		bf_orphan_mark(bf, orphan);
		/* ".." of a directory that moved */
		if (odir != ndir && !bch_inode_get(bf->c, ndir, &d, NULL) &&
		    !bch_lookup(bf->c, &d, newname, strlen(newname), 0, &inum, NULL, NULL))
			bf_parent_set(bf, inum, ndir);
		fuse_reply_err(req, 0);
	}
	printbuf_exit(&err);
}

void bf_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		struct fuse_file_info *fi)
{
	struct bch_fuse *bf = bf_req_fs(req);
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
		bf_reply_ret(bf, req, ret, &err, "setattr", inum);
	} else {
		bf_fill_stat(bf, &u, &st);
		fuse_reply_attr(req, &st, bf->timeout);
	}
	printbuf_exit(&err);
}

void bf_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
	      struct fuse_file_info *fi)
{
	struct bch_fuse *bf = bf_req_fs(req);
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
		bf_reply_ret(bf, req, (int)n, &err, "write", inum);
	else
		fuse_reply_write(req, (size_t)n);
	printbuf_exit(&err);
}

void bf_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

void bf_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct printbuf err = PRINTBUF;
	int ret = bch_fs_fsync(bf->c, &err);

	if (ret)
		bf_reply_ret(bf, req, ret, &err, "fsync", bch_fuse_ino_to_inum(ino));
	else
		fuse_reply_err(req, 0);
	printbuf_exit(&err);
}

void bf_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		  struct fuse_file_info *fi)
{
	struct bch_fuse *bf = bf_req_fs(req);
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
		bf_reply_ret(bf, req, ret, &err, "fallocate", inum);
	else
		fuse_reply_err(req, 0);
	printbuf_exit(&err);
}

void bf_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
	      struct fuse_file_info *fi)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	int64_t ret;

	if ((whence != SEEK_DATA && whence != SEEK_HOLE) || off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	ret = bch_fs_seek(bf->c, inum, (uint64_t)off, whence == SEEK_DATA, &err);
	if (ret < 0)
		bf_reply_ret(bf, req, (int)ret, &err, "lseek", inum);
	else
		fuse_reply_lseek(req, (off_t)ret);
	printbuf_exit(&err);
}

void bf_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct bch_fuse *bf = bf_req_fs(req);

	/* counted like files: a directory removed while open stays until closed */
	bf_opens_inc(bf, bch_fuse_ino_to_inum(ino));
	if (fuse_reply_open(req, fi))
		bf_opens_dec(bf, bch_fuse_ino_to_inum(ino));
}

void bf_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	bf_opens_dec(bf_req_fs(req), bch_fuse_ino_to_inum(ino));
	fuse_reply_err(req, 0);
}
