/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The options of a FUSE session (bch_fuse_new(), mount/fuse.h), which
 * `bcachefs mount` fills in from its command line. Apart from fuse.h so
 * that the operations' state (mount/fuse_state.h) can hold them.
 */
#ifndef BCH_MOUNT_FUSE_OPTS_H
#define BCH_MOUNT_FUSE_OPTS_H

#include <stdbool.h>

struct bch_fuse_opts {
	/* attribute and name cache timeouts given to the kernel, seconds
	 * (0 = the default: a day; the filesystem cannot change under us) */
	double		timeout;
	/*
	 * false (-o direct_io, bcachefs mount's default): file data is not
	 * cached by the kernel (direct I/O): every read comes here and is
	 * answered from the worker's buffers or read from the device, whose
	 * own page cache holds the data once. Shared mmap of files then
	 * fails (ENODEV; private mappings, e.g. executables, work).
	 * true (-o kernel_cache): the kernel caches file data (read twice:
	 * repeated reads do not come here, but the data sits in memory twice;
	 * mmap works). A first sequential read is about half as fast: the
	 * kernel copies each reply into its cache, then to the reader.
	 */
	bool		kernel_cache;
	/*
	 * read-write, neither option given: files opened for writing use the
	 * kernel's cache (shared writable mmap works there, and writes are
	 * written through), files opened read-only direct I/O (the fast
	 * read path above)
	 */
	bool		cache_auto;
	/* the max_read mount option given to fuse_session_new(), if any
	 * (libfuse 3 wants init to ask for the same) */
	unsigned	max_read;
	/* with kernel_cache: the kernel's read-ahead for the mount on
	 * @mountpoint (0: its default, 128 KiB), set at the first open */
	unsigned	readahead_kb;
	const char	*mountpoint;
	/* no worker thread reading and verifying ahead of sequential reads
	 * (bch_read_ahead_new(); -o noread_ahead) */
	bool		no_read_ahead;
	/* read-write: the write operations, the journal timer (the engine
	 * must be started, with batched commits) */
	bool		rw;
	/* no atime updates on reads (-o noatime; default: relatime) */
	bool		noatime;
	/* one message per failed operation (no trailing newline); may be NULL */
	void		(*log)(void *arg, const char *msg);
	void		*log_arg;
};

#endif
