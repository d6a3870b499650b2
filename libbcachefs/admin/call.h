/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One administrative request as the engine functions see it: the
 * filesystem's admin state (jobs, devices taken out), the call (ioctl
 * number, argument, device path or descriptor, privilege) and the answer
 * (bytes written back, message, job descriptor). The dispatcher is in
 * admin.h.
 */
#ifndef BCH_ADMIN_CALL_H
#define BCH_ADMIN_CALL_H

#include <pthread.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/keys.h"
#include "util/util.h"

struct bch_fs;
struct bch_devio;
struct bch_job;

struct bch_admin {
	struct bch_fs		*c;
	bool			mounted;	/* the mount's endpoint, not an in-process open */
	/*
	 * st_dev of the files of our own mount (0: not known). A device to
	 * add or bring online that is one of them is refused: reading it
	 * would be a request to this process, made with the engine locked.
	 */
	dev_t			mount_dev;

	pthread_mutex_t		lock;		/* jobs, retired */
	struct bch_job		*jobs;		/* running or finished, not yet closed */
	/*
	 * Devices taken out of the filesystem (offline, removed): closed only
	 * at bch_admin_free(), because the mount's read-ahead worker may still
	 * hold them (io_read.h).
	 */
	struct bch_devio	**retired;
	size_t			nr_retired;
	/*
	 * Where a data job that was stopped left its walk of the extents
	 * (data_job.c): the next job of the same op and range starts there
	 * (skipping the phases before the walk) and counts the sectors done
	 * before as done. Kept while the filesystem is open; a job that
	 * finishes clears it.
	 */
	struct bch_job_resume {
		bool			valid;
		uint32_t		op;
		uint32_t		dev;		/* MIGRATE */
		struct bpos		start, end;	/* the request's range */
		struct bpos		pos;		/* the walk's position */
		uint64_t		done;		/* sectors done before */
	}			resume;
};


struct bch_admin_call {
	uint32_t	nr;		/* full ioctl number (or BCH_CTL_DEV_NAMES) */
	void		*arg;		/* the argument, arg_bytes (8-byte aligned copy) */
	size_t		arg_bytes;
	/*
	 * The device path of DISK_ADD / DISK_ONLINE and of lookups without
	 * BY_INDEX (the ioctl's `dev` pointer, already read), NULL if none.
	 */
	const char	*path;
	/* DISK_ADD / DISK_ONLINE: the device opened read-write by the caller
	 * (taken over), or -1 to open @path here */
	int		fd;
	/* the caller may administer (root / CAP_SYS_ADMIN) */
	bool		privileged;
};

struct bch_admin_out {
	void		*data;		/* malloc'd: the bytes the ioctl writes back */
	size_t		bytes;
	struct printbuf	msg;		/* why it failed; DEV_NAMES: the names */
	int		job_fd;		/* BCH_IOCTL_DATA: the job's descriptor, or -1 */
};

#define BCH_ADMIN_OUT_INIT	((struct bch_admin_out) { .msg = PRINTBUF, .job_fd = -1 })

void bch_admin_out_exit(struct bch_admin_out *out);

#endif
