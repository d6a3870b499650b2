/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device I/O: one open member device (regular file or block device).
 * Every read is bounds-checked against the device size; short reads are
 * errors. Tests can make writes fail after the N-th one (fault injection)
 * by setting BCH_FAULT_WRITES=N in the environment.
 *
 * Holding devices: for as long as a device is open, this process holds
 * an flock(2) on every layer of its stack (devstack.h): the image file,
 * the device node, a loop device's backing file, the devices under
 * device-mapper. A read-write open takes them exclusively (and opens a
 * block device O_EXCL) and fails with BCH_ERR_dev_busy when another
 * process holds any of them, even when no mount table shows it; a
 * read-only open shares them, and goes on without them when a writer
 * holds one (@busy says so). Opens within one process share the holds.
 */
#ifndef BCH_DEV_H
#define BCH_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "devstack.h"

struct bch_devio {
	int		fd;
	char		*path;
	uint64_t	size;		/* bytes */
	unsigned	block_size;	/* logical block size in bytes */
	bool		rw;
	bool		is_blockdev;
	bool		busy;		/* read-only: another process holds it for writing */
	unsigned	nr_holds;
	struct dev_hold	*holds[DEV_STACK_MAX + 1];	/* locks/claims shared with other opens */
};

enum dev_open_flags {
	DEV_RW		= 1 << 0,	/* open read-write (default read-only) */
	DEV_EXCL	= 1 << 1,	/* O_EXCL on block devices: refuse in-use devices */
};

int dev_open(const char *path, unsigned flags, struct bch_devio **ret);
void dev_close(struct bch_devio *d);
/* Does this process hold block device @rdev open O_EXCL? */
bool dev_claimed_here(dev_t rdev);
/* Read exactly @len bytes at byte @offset; -EIO / -ERANGE when not possible. */
int dev_pread(struct bch_devio *d, void *buf, size_t len, uint64_t offset);
int dev_pwrite(struct bch_devio *d, const void *buf, size_t len, uint64_t offset);
int dev_flush(struct bch_devio *d);

/* Number of writes performed so far (all devices), for fault-injection tests. */
extern unsigned long dev_nr_writes;
/* Make every write after the next @n fail with EIO (n < 0: never). */
void dev_fault_after(long n);

#endif
