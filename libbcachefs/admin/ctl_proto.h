/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control socket of a running filesystem: the wire format between a
 * command (handle.c) and the mount process (mount/ctl.c). One request, one
 * reply, over a SOCK_SEQPACKET unix socket (/run/bcachefs/UUID/ctl):
 *
 *   request  = header, the ioctl argument (arg_bytes), a path (str_bytes,
 *              no NUL: the device of DISK_ADD/DISK_ONLINE, or of a lookup
 *              by path), and for DISK_ADD/DISK_ONLINE the device's file
 *              descriptor in SCM_RIGHTS (the caller proves it may open it);
 *   reply    = header, the bytes the ioctl writes back (out_bytes: the
 *              argument of an _IOR/_IOWR ioctl, or READ_SUPER's buffer),
 *              then a message (msg_bytes: why it failed, as the kernel would
 *              log it; or the device names of BCH_CTL_DEV_NAMES), and for
 *              BCH_IOCTL_DATA the job's file descriptor in SCM_RIGHTS.
 *
 * The job descriptor is a second SOCK_SEQPACKET socket: each request
 * (struct bch_job_req) gets one reply: the 128-byte progress event, or the
 * job's result (struct bch_job_result + message) once it has ended.
 * Closing it stops the job (doc/ioctl.md §7).
 *
 * Everything is host byte order (the ioctl ABI is x86-64 little-endian).
 * The decoders are the trust boundary of the mount process: every length,
 * count and string is checked (bch_ctl_req_decode()).
 */
#ifndef BCH_CTL_PROTO_H
#define BCH_CTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/ioctl.h"

struct printbuf;

#define BCH_CTL_REQ_MAGIC	0x4c544342U	/* "BCTL" */
#define BCH_CTL_REPLY_MAGIC	0x52544342U	/* "BCTR" */
#define BCH_CTL_JOB_MAGIC	0x424a4342U	/* "BCJB" */

/* Largest request and reply: a USAGE of 64 devices, a path, a superblock. */
#define BCH_CTL_MSG_MAX		(256U << 10)
#define BCH_CTL_PATH_MAX	4096U
#define BCH_CTL_TEXT_MAX	(32U << 10)	/* reply messages are cut there */
/* USAGE: device slots a request may ask for */
#define BCH_CTL_USAGE_DEVS_MAX	256U

/*
 * Requests of our own transport (not ioctls: type 0xbd, never sent to a
 * kernel): the path of each online member, as "IDX PATH\n" lines in the
 * reply message.
 */
#define BCH_CTL_DEV_NAMES	_IO(0xbd, 1)
/* Sectors per replicas entry: lines of bch_fs_usage_replicas() (admin.h). */
#define BCH_CTL_REPLICAS_USAGE	_IO(0xbd, 2)
/*
 * Write the open journal entry and flush it (as fsync does): what is on
 * the devices is then a consistent point that holds every commit made
 * before (dump of a mounted filesystem). Root only.
 */
#define BCH_CTL_JOURNAL_FLUSH	_IO(0xbd, 3)
/* The space accounting: lines of bch_fs_usage_space() (admin.h). */
#define BCH_CTL_SPACE		_IO(0xbd, 8)
/*
 * What the running filesystem found and did about damage since it was
 * mounted (core/integrity.h): "NAME VALUE\n" lines of bch_fs_integrity_text()
 * (admin.h) in the reply message.
 */
#define BCH_CTL_INTEGRITY	_IO(0xbd, 9)

struct bch_ctl_req_hdr {
	uint32_t	magic;
	uint32_t	nr;		/* the full 32-bit ioctl number */
	uint32_t	arg_bytes;
	uint32_t	str_bytes;
};
_Static_assert(sizeof(struct bch_ctl_req_hdr) == 16, "ctl_req_hdr");

struct bch_ctl_reply_hdr {
	uint32_t	magic;
	int32_t		ret;		/* >= 0, or -errno */
	uint32_t	out_bytes;
	uint32_t	msg_bytes;
};
_Static_assert(sizeof(struct bch_ctl_reply_hdr) == 16, "ctl_reply_hdr");

/* A decoded request: pointers into the message buffer. */
struct bch_ctl_req {
	uint32_t	nr;
	const void	*arg;
	size_t		arg_bytes;
	char		path[BCH_CTL_PATH_MAX + 1];	/* "" when none */
	bool		has_path;
};

/*
 * The argument size request @nr must carry, or 0 for an unknown number.
 * USAGE: the 256-byte header (the device slots follow, see below).
 */
size_t bch_ctl_arg_size(uint32_t nr);
/* Is @nr a request we serve (an ioctl, or one of our BCH_CTL_*)? */
bool bch_ctl_known(uint32_t nr);

/*
 * Check and decode request @buf (@len bytes as received): magic, lengths
 * that add up, a known number with the argument size it needs (USAGE:
 * exactly 256 + 120 x nr_devices, nr_devices <= BCH_CTL_USAGE_DEVS_MAX),
 * a path without NUL bytes of at most BCH_CTL_PATH_MAX bytes.
 * Returns 0, -EPROTO (malformed), -ENOTTY (unknown number), -EINVAL (bad
 * argument size) with the reason in @why.
 */
int bch_ctl_req_decode(const void *buf, size_t len, struct bch_ctl_req *req,
		       struct printbuf *why);

/* ---- the job descriptor ---- */

enum bch_job_req_type {
	BCH_JOB_REQ_PROGRESS	= 0,	/* reply: struct bch_ioctl_data_event */
	BCH_JOB_REQ_RESULT	= 1,	/* reply: struct bch_job_result + message */
};

struct bch_job_req {
	uint32_t	magic;
	uint32_t	type;
};
_Static_assert(sizeof(struct bch_job_req) == 8, "job_req");

struct bch_job_result {
	uint32_t	magic;
	uint32_t	done;		/* 0: still running (ret meaningless) */
	int32_t		ret;		/* 0 or -errno */
	uint32_t	msg_bytes;	/* the report that follows */
	uint64_t	sectors_moved;	/* sectors written by the job */
	uint64_t	extents_moved;
	uint64_t	errors;		/* problems reported (scrub: not repaired) */
	uint64_t	repaired;	/* scrub: copies rewritten from a good one */
	uint64_t	sectors_seen;	/* scrub: sectors verified in this run */
	uint64_t	extents_seen;
	uint64_t	resumed_done;	/* resumed: the sectors a stopped job had done */
	uint32_t	resumed;	/* this run resumed a stopped job */
	uint32_t	pad;
};
_Static_assert(sizeof(struct bch_job_result) == 80, "job_result");

#endif
