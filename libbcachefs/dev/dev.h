/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device I/O: one open member device (regular file or block device).
 * Every read is bounds-checked against the device size; short reads are
 * errors. Tests can make writes fail after the N-th one (fault injection)
 * by setting BCH_FAULT_WRITES=N in the environment, or kill themselves
 * (SIGKILL) at the N-th write with BCH_KILL_AT_WRITE=N.
 *
 * The write log (crash-consistency tests, tests/crash/README.md): with
 * BCH_WRITE_LOG=PATH in the environment, every open for writing, every
 * write and every flush of every device is appended to the file PATH, in
 * the order they completed, so that tests/crash/replay can rebuild the
 * devices as a crash at any point (or a disk that reordered the writes
 * between two flushes) would have left them. Unset, it costs one branch
 * per write. BCH_TEST_SKIP_FLUSH=1 (tests only) makes dev_flush() a no-op
 * that is not logged: a writer that never flushes, which the crash tests
 * must catch.
 *
 * Log file format (ours; all integers little-endian). No file header: the
 * file is a sequence of records, and several processes may append to one
 * log (format, then fsck -y, with the workload's marks in between). Each
 * record is a 48-byte header followed by `len` payload bytes, written with
 * one write() on a file opened O_APPEND (records of concurrent writers
 * never interleave):
 *
 *    0 le32 magic      DEV_LOG_MAGIC
 *    4 le16 type       enum dev_log_type
 *    6 le16 hdr_bytes  48 (sizeof(struct dev_log_hdr))
 *    8 le32 pid        process that appended it
 *   12 le32 dev        device number in that process (its OPEN record
 *                      names it); DEV_LOG_NO_DEV for a MARK
 *   16 le64 offset     WRITE: byte offset on the device; OPEN: size of the
 *                      device in bytes when it was opened; else 0
 *   24 le64 len        payload bytes after the header
 *   32 le64 time_ns    CLOCK_REALTIME when appended, in ns (for humans,
 *                      and killtest.sh: when the writes happened)
 *   40 le32 data_csum  CRC-32C (standard: init and final xor ~0) of the payload
 *   44 le32 hdr_csum   CRC-32C of header bytes 0..43
 *
 * Payloads: OPEN the absolute path of the device (realpath(3), no NUL);
 * WRITE the bytes written; MARK a label (a workload's "fsync returned");
 * FLUSH and CLOSE none.
 *
 * Order: a WRITE is appended after its pwrite returned and before
 * dev_pwrite() returns; a FLUSH after fdatasync() returned, the log lock
 * held throughout, so a write that completes while a flush runs (another
 * thread) is logged after the flush: it is not covered by it. Whatever a
 * caller does after dev_pwrite() or dev_flush() returned is logged after
 * their records. A write that failed is not logged (a partial one: the
 * part that was written).
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
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "dev/devstack.h"

struct bch_devio {
	int		fd;
	char		*path;
	uint64_t	size;		/* bytes */
	unsigned	block_size;	/* logical block size in bytes */
	bool		rw;
	bool		is_blockdev;
	uint32_t	log_dev;	/* device number in the write log */
	bool		busy;		/* read-only: another process holds it for writing */
	/* written since its last flush (dev_unflushed()) */
	atomic_bool	unflushed;
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
/*
 * Written since the last flush? A flush of a device nothing was written to
 * costs as much as any (a journal commit of the filesystem under an image
 * file): the journal's preflush skips those.
 */
bool dev_unflushed(struct bch_devio *d);
/*
 * A region about to be written (a bucket just taken) of an image file:
 * written blocks for it now. Writing into a hole makes the host filesystem
 * allocate, and the next flush then waits for the host's journal (~10 ms
 * a flush instead of ~0.1 ms for an overwrite; into fallocated, unwritten
 * blocks ~2 ms): fsync-heavy applications pay that at every commit.
 * @zero: zeros written over it unless it is all written blocks already
 * (once per bucket of the image: later uses overwrite); otherwise only
 * fallocate. Nothing on a block device; failures are ignored (the write
 * itself reports a full host).
 */
void dev_prealloc(struct bch_devio *d, uint64_t offset, uint64_t len, bool zero);
/*
 * The first range of @d at or after byte @offset that may hold data:
 * [*@start, *@end). Holes of a sparse image file are skipped
 * (SEEK_DATA/SEEK_HOLE); a block device, or a filesystem that cannot
 * tell, is data to its end. -ENXIO when there is no data after @offset.
 */
int dev_next_data(struct bch_devio *d, uint64_t offset, uint64_t *start, uint64_t *end);

/* Number of writes performed so far (all devices), for fault-injection tests. */
extern unsigned long dev_nr_writes;
/* Make every write after the next @n fail with EIO (n < 0: never). */
void dev_fault_after(long n);

/* ---- the write log ---- */

#define DEV_LOG_MAGIC		0x474c5742U	/* "BWLG" */
#define DEV_LOG_HDR_BYTES	48
#define DEV_LOG_NO_DEV		0xffffffffU
#define DEV_LOG_MAX_PAYLOAD	(1ULL << 32)	/* sanity bound for readers */

enum dev_log_type {
	DEV_LOG_OPEN	= 1,
	DEV_LOG_WRITE	= 2,
	DEV_LOG_FLUSH	= 3,
	DEV_LOG_MARK	= 4,
	DEV_LOG_CLOSE	= 5,
};

/* A record header, decoded (host order). */
struct dev_log_hdr {
	unsigned	type;
	uint32_t	pid;
	uint32_t	dev;
	uint64_t	offset;
	uint64_t	len;
	uint64_t	time_ns;
	uint32_t	data_csum;
};

/* Is the write log on (BCH_WRITE_LOG set and opened)? */
bool dev_log_enabled(void);
/*
 * Append a MARK record with @label (e.g. "fsync /a/b" once the fsync
 * returned): the checker of a crash state knows which marks it has passed.
 * Nothing when the log is off. 0 or a negative error.
 */
int dev_log_mark(const char *label);
/*
 * Append a record of any type to the log file @fd (O_APPEND) with one
 * write: for tools that add marks to a log from outside (tests/crash/replay
 * mark). 0 or a negative error.
 */
int dev_log_append(int fd, unsigned type, uint32_t pid, uint32_t dev,
		   uint64_t offset, const void *payload, size_t len);
/*
 * Decode and check the 48 bytes at @buf: magic, header checksum, type,
 * header size, payload length below DEV_LOG_MAX_PAYLOAD. 0 or -EINVAL (a
 * one-line reason in @why, 80 bytes).
 */
int dev_log_hdr_decode(const void *buf, struct dev_log_hdr *h, char *why);
/* The checksum of the log format (standard CRC-32C). */
uint32_t dev_log_csum(const void *p, size_t len);

#endif
