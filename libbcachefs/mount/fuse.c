// SPDX-License-Identifier: GPL-2.0
/*
 * The FUSE session of a mount (mount/fuse.h): init, the journal timer
 * (read-write), what damage found during an operation asks for, every
 * operation under the engine lock, the ioctls, the operation tables
 * (read-only, read-write), and the state's life. The operations are in
 * fuse_read.c, fuse_xattr.c and fuse_write.c, the helpers they share in
 * fuse_state.c.
 *
 * The filesystem cannot change while mounted read-only, so the kernel is
 * told to cache attributes, names (also negative ones), data and symlink
 * targets for a long time.
 */
#include "mount/fuse_ops.h"
#include "mount/fuse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <pthread.h>
#include <signal.h>
#include <linux/fs.h>
#include <time.h>
#include <unistd.h>

#include "admin/admin.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "util/errcode.h"
#include "format/format.h"
#include "admin/data_job.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "fs/fsops.h"
#include "fs/fsread.h"
#include "bkey/inode.h"
#include "fs/io_read.h"
#include "format/ioctl.h"
#include "util/util.h"

bool bch_fuse_mount_dev(const char *mnt, dev_t *dev)
{
	char devnum[32];
	unsigned maj, min;

	if (!bf_mount_devnum(mnt, devnum, sizeof(devnum)) ||
	    sscanf(devnum, "%u:%u", &maj, &min) != 2)
		return false;
	*dev = makedev(maj, min);
	return true;
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

/* ---- init ---- */

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

/* ---- the operations, each under the engine lock ---- */

#define LOCKED(fn, params, args)					\
static void fn##_locked params						\
{									\
	struct bch_fuse *bf = bf_req_fs(req);				\
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
 * ioctl: BCH_IOCTL_QUERY_UUID on any file or directory of the
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

	if (!bf_get_inode(bf, req, inum, "fsxattr ioctl", &inode))
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
			bf_reply_ret(bf, req, ret, &err, "set project", inum);
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

	if (!bf_get_inode(bf, req, bch_fuse_ino_to_inum(ino), "flags ioctl", &inode))
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
	struct bch_fuse *bf = bf_req_fs(req);
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
		bf_open_file_free(bf, &bf->open_files->f);
	bch_read_ahead_free(bf->ra);
	free(bf->rbuf);
	free(bf->segs.v);
	free(bf->iov);
	bf_map_exit(&bf->parents);
	bf_map_exit(&bf->opens);
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
	bf_map_exit(&bf->opens);
	bch_fs_unlock(bf->c);
	return ret;
}
