/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The FUSE side of `bcachefs mount`: libfuse3 low-level operations over
 * an open filesystem: reads through fsread.h, writes through the engine
 * (fsops.h) when the filesystem is mounted read-write.
 *
 *   struct bch_fuse *bf = bch_fuse_new(c, &opts);
 *   struct fuse_session *se = bch_fuse_session_new(bf, &args);
 *   fuse_session_mount(se, mountpoint); ... fuse_session_loop(se);
 *   fuse_session_unmount(se); fuse_session_destroy(se);
 *   bch_fuse_free(bf);
 *
 * Inode numbers: FUSE's root node id is 1, ours is BCACHEFS_ROOT_INO
 * (4096); node ids 1 and 4096 are swapped, every other node id is the
 * bcachefs inode number. stat() shows the bcachefs inode number.
 *
 * Errors go to FUSE as -errno (the library's error codes mapped to their
 * errno class); the library's description of what went wrong (inode,
 * offset, device, sector) goes to the optional log callback. Nothing is
 * printed here.
 *
 * Threads: the btree node cache is not thread-safe, so the session must
 * be run with the single-threaded fuse_session_loop(). init starts one
 * more thread (bch_read_ahead_new()) that reads the data ahead of
 * sequential reads into buffers of its own and verifies it there: the
 * replies point into those buffers.
 */
#ifndef BCH_MOUNT_FUSE_H
#define BCH_MOUNT_FUSE_H

#include <stdbool.h>
#include <stdint.h>

#include "mount/fuse_opts.h"

struct bch_fs;
struct fuse_args;
struct fuse_session;

struct bch_fuse;

/* State for the session over @c (which stays owned by the caller). */
struct bch_fuse *bch_fuse_new(struct bch_fs *c, const struct bch_fuse_opts *opts);
void bch_fuse_free(struct bch_fuse *bf);
/*
 * After the session loop: stop the journal timer and delete the files
 * unlinked while open (read-write). The caller then stops the engine.
 */
struct printbuf;
int bch_fuse_stop(struct bch_fuse *bf, struct printbuf *err);

/*
 * fuse_session_new() with our operations. @args are libfuse's
 * (argv[0] and -o options). NULL on error (libfuse prints why).
 */
struct fuse_session *bch_fuse_session_new(struct bch_fuse *bf, struct fuse_args *args);

/* What the worker reading ahead did (bch_read_ahead_stats(); zeroes
 * without one). */
void bch_fuse_read_ahead_stats(const struct bch_fuse *bf, unsigned long *nr_done,
			       unsigned long *nr_taken, unsigned long *nr_served);

/*
 * The device number (st_dev of its files) of the FUSE mount on @mnt, from
 * /proc/self/mountinfo: no request to the mount itself. False if none.
 */
#include <sys/types.h>
bool bch_fuse_mount_dev(const char *mnt, dev_t *dev);

#endif
