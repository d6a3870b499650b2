// SPDX-License-Identifier: GPL-2.0
/*
 * The FUSE operations that read (mount/fuse_ops.h): lookup, getattr,
 * readdir, open, read, release, readlink, statfs. The read-only mount has
 * these (and the xattr reads of fuse_xattr.c); read-write adds
 * fuse_write.c's. Every operation reads what it needs from the btrees
 * (through the node cache) and keeps no per-inode state, so forget needs
 * nothing; mount/fuse_state.h has what little state there is.
 */
#include "mount/fuse_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "admin/admin.h"
#include "alloc/space.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fs/fsops.h"
#include "fs/fsread.h"
#include "bkey/inode.h"
#include "fs/io_read.h"
#include "util/util.h"

void bf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked dir, inode;
	struct fuse_entry_param e;
	uint64_t dir_inum = bch_fuse_ino_to_inum(parent), inum;
	int ret;

	if (!bf_get_inode(bf, req, dir_inum, "lookup", &dir))
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
		fuse_reply_err(req, bf_errno(ret));
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
	if (!bf_mode_ok(bf, inum, inode.bi_mode, "lookup")) {
		fuse_reply_err(req, EIO);
		goto out;
	}
	if (S_ISDIR(inode.bi_mode))
		bf_parent_set(bf, inum, dir_inum);

	memset(&e, 0, sizeof(e));
	e.ino		= bch_fuse_inum_to_ino(inum);
	e.generation	= inode.bi_generation;
	e.attr_timeout	= bf->timeout;
	e.entry_timeout	= bf->timeout;
	bf_fill_stat(bf, &inode, &e.attr);
	fuse_reply_entry(req, &e);
out:
	printbuf_exit(&err);
}

void bf_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct bch_inode_unpacked inode;
	struct stat st;

	if (!bf_get_inode(bf, req, bch_fuse_ino_to_inum(ino), "getattr", &inode))
		return;
	bf_fill_stat(bf, &inode, &st);
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

void bf_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi)
{
	struct bch_fuse *bf = bf_req_fs(req);
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
	if (off <= 1 && !readdir_add(&rd, "..", bf_parent_get(bf, inum), BCH_DT_DIR, 2))
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
			fuse_reply_err(req, bf_errno(ret));
			goto out;
		}
	}
reply:
	fuse_reply_buf(req, rd.buf, rd.pos);
out:
	free(rd.buf);
	printbuf_exit(&err);
}

void bf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct bch_inode_unpacked inode;

	if (!bf->opts.rw && ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (!bf_get_inode(bf, req, bch_fuse_ino_to_inum(ino), "open", &inode))
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
			bf_reply_ret(bf, req, ret, &err, "open O_TRUNC", inode.bi_inum);
			printbuf_exit(&err);
			return;
		}
		printbuf_exit(&err);
	}
	if (bf->opts.readahead_kb && bf->opts.mountpoint && !bf->readahead_done) {
		bf_mount_set_readahead(bf->opts.mountpoint, bf->opts.readahead_kb);
		bf->readahead_done = true;
	}
	bf_file_open_reply(bf, req, &inode, fi, NULL);
}

/*
 * The reply points at its pieces (the worker's buffers, where the data was
 * verified and decoded, and rbuf: holes, and data not read ahead), and
 * the kernel copies them once, into the reader's buffer.
 */
void bf_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi)
{
	struct bch_fuse *bf = bf_req_fs(req);
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

		if (!bf_get_inode(bf, req, f->inum, "read", &inode))
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
		       strerror(bf_errno((int)n)));
		fuse_reply_err(req, bf_errno((int)n));
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

void bf_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct bch_file *f = (struct bch_file *)(uintptr_t)fi->fh;

	if (f) {
		uint64_t inum = f->inum;

		bf_open_file_free(bf, f);
		bf_opens_dec(bf, inum);
	}
	fuse_reply_err(req, 0);
}

void bf_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked inode;
	char target[PATH_MAX];
	ssize_t n;

	if (!bf_get_inode(bf, req, bch_fuse_ino_to_inum(ino), "readlink", &inode))
		goto out;
	n = bch_readlink(bf->c, &inode, target, sizeof(target), &err);
	if (n < 0) {
		if (n != -EINVAL)
			bf_log(bf, &err, "readlink of inode %" PRIu64 " failed: %s",
			       inode.bi_inum, bch_err_str((int)n));
		fuse_reply_err(req, bf_errno((int)n));
		goto out;
	}
	/* a target with a NUL byte is cut there (a C string goes to FUSE) */
	fuse_reply_readlink(req, target);
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
void bf_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct bch_fuse *bf = bf_req_fs(req);
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
