/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state of a FUSE session and the helpers its operations share
 * (fuse_state.c); private to mount/fuse*.c.
 *
 * The only state: one struct bch_file per open file handle (sequential
 * reads walk the extents once), a map of directory -> parent learned from
 * lookups (for the ".." entry of readdir; the kernel resolves ".."
 * itself), the open handles of each inode (read-write: a file unlinked
 * while open is deleted at its last close), and the statfs estimate of a
 * read-only mount (computed once: the filesystem does not change).
 *
 * A request is answered once: the helpers that take a fuse_req_t and
 * return false have replied to it with the error.
 */
#ifndef BCH_MOUNT_FUSE_STATE_H
#define BCH_MOUNT_FUSE_STATE_H

#define FUSE_USE_VERSION 34

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "alloc/space.h"
#include "fs/fsread.h"
#include "mount/fuse_opts.h"
#include "util/util.h"

struct bch_fs;
struct bch_inode_unpacked;
struct bch_read_ahead;
struct printbuf;
struct stat;

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

/* Node id <-> bcachefs inode number: FUSE's root (1) and ours (4096) swap. */
uint64_t bch_fuse_ino_to_inum(uint64_t ino);
uint64_t bch_fuse_inum_to_ino(uint64_t inum);

static inline struct bch_fuse *bf_req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* A library error as a positive errno for FUSE (never ENOSYS). */
int bf_errno(int ret);
/* One message to the log callback: @fmt, then @lib_err's lines joined (if any). */
__printf(3, 4) void bf_log(struct bch_fuse *bf, struct printbuf *lib_err, const char *fmt, ...);
/* Is @mode one the kernel accepts for @inum? Logs and returns false if not. */
bool bf_mode_ok(struct bch_fuse *bf, uint64_t inum, unsigned mode, const char *op);
/* Read inode @inum; on failure reply to @req and return false. */
bool bf_get_inode(struct bch_fuse *bf, fuse_req_t req, uint64_t inum,
		  const char *op, struct bch_inode_unpacked *inode);
void bf_fill_stat(struct bch_fuse *bf, const struct bch_inode_unpacked *inode, struct stat *st);

/* The "major:minor" of the mount on @mnt (the last one), from mountinfo. */
bool bf_mount_devnum(const char *mnt, char *devnum, size_t size);
/* The kernel's read-ahead for the mount on @mnt, in KiB (best effort). */
void bf_mount_set_readahead(const char *mnt, unsigned kb);

void bf_map_exit(struct u64map *m);
/* Directory -> parent, for the ".." of readdir (the directory itself if unknown). */
void bf_parent_set(struct bch_fuse *bf, uint64_t dir, uint64_t parent);
uint64_t bf_parent_get(const struct bch_fuse *bf, uint64_t dir);

/* Open handles of an inode (read-write); the last close of an orphan deletes it. */
void bf_opens_inc(struct bch_fuse *bf, uint64_t inum);
void bf_opens_dec(struct bch_fuse *bf, uint64_t inum);
/* Has @inum (@arg: the struct bch_fuse) open handles? For unlink and rename. */
bool bf_opens_in_use(void *arg, uint64_t inum);
/* Unlinked while open: deleted at the last close (0: nothing). */
void bf_orphan_mark(struct bch_fuse *bf, uint64_t inum);

/* A handle for @inode; reply to open (or create, with @e). */
void bf_file_open_reply(struct bch_fuse *bf, fuse_req_t req,
			const struct bch_inode_unpacked *inode, struct fuse_file_info *fi,
			const struct fuse_entry_param *e);
/* Off the list of open files, closed and freed. */
void bf_open_file_free(struct bch_fuse *bf, struct bch_file *f);

/* An engine error as the reply to @req (logged unless callers expect it). */
void bf_reply_ret(struct bch_fuse *bf, fuse_req_t req, int ret, struct printbuf *err,
		  const char *op, uint64_t inum);

#endif
