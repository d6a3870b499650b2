/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device I/O: one open member device (regular file or block device).
 * Every read is bounds-checked against the device size; short reads are
 * errors. Tests can make writes fail after the N-th one (fault injection)
 * by setting BCH_FAULT_WRITES=N in the environment.
 */
#ifndef BCH_DEV_H
#define BCH_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bch_devio {
	int		fd;
	char		*path;
	uint64_t	size;		/* bytes */
	unsigned	block_size;	/* logical block size in bytes */
	bool		rw;
	bool		is_blockdev;
};

enum dev_open_flags {
	DEV_RW		= 1 << 0,	/* open read-write (default read-only) */
	DEV_EXCL	= 1 << 1,	/* O_EXCL on block devices: refuse in-use devices */
};

int dev_open(const char *path, unsigned flags, struct bch_devio **ret);
void dev_close(struct bch_devio *d);
/*
 * A device already open as @fd (passed by another process: device add,
 * online); @path names it in messages. Takes @fd over on success. DEV_RW:
 * @fd must be open read-write (-EBADF).
 */
int dev_open_fd(int fd, const char *path, unsigned flags, struct bch_devio **ret);
/* The device's size again (it grew: device resize). */
int dev_refresh_size(struct bch_devio *d);
/* Read exactly @len bytes at byte @offset; -EIO / -ERANGE when not possible. */
int dev_pread(struct bch_devio *d, void *buf, size_t len, uint64_t offset);
int dev_pwrite(struct bch_devio *d, const void *buf, size_t len, uint64_t offset);
int dev_flush(struct bch_devio *d);

/* Number of writes performed so far (all devices), for fault-injection tests. */
extern unsigned long dev_nr_writes;
/* Make every write after the next @n fail with EIO (n < 0: never). */
void dev_fault_after(long n);

#endif
