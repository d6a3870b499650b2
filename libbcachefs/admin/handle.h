/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reaching a filesystem to administer it (doc/ioctl.md §2): one client call,
 * bch_ioctl(handle, nr, arg), with the kernel's semantics, whatever is
 * behind the handle:
 *
 *   - our mount: the control socket /run/bcachefs/UUID/ctl of the mount
 *     process (ctl_proto.h; BCACHEFS_RUN_DIR overrides /run/bcachefs);
 *   - a kernel control device /dev/bcachefsN-ctl (doc/ioctl.md §2): the
 *     real ioctl(2);
 *   - an unmounted filesystem opened in this process (the devices given):
 *     the same engine functions (admin.h), called directly.
 *
 * Finding the filesystem:
 *   - a UUID: the mount (or kernel filesystem) of that UUID;
 *   - a path inside a mount: BCH_IOCTL_QUERY_UUID on it (our FUSE mount
 *     answers it on any file or directory), then by UUID;
 *   - a member device (or image file): its superblock names the UUID and
 *     the member index (doc/ioctl.md §2); by UUID, or in-process when it is not
 *     mounted and the caller allows it (then every member device must be
 *     given: DEV[:DEV...]).
 *
 * No printing here: errors come back as -errno with a one-line reason in
 * @err (what, where, what to do); the mount's explanation of a failed
 * request is in h->msg.
 */
#ifndef BCH_HANDLE_H
#define BCH_HANDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

struct bch_fs;
struct bch_admin;
struct bch_job_result;

enum bch_handle_type {
	BCH_HANDLE_SOCKET,	/* our mount's control socket */
	BCH_HANDLE_KERNEL,	/* a kernel control device */
	BCH_HANDLE_LOCAL,	/* opened in this process */
};

struct bch_handle {
	enum bch_handle_type	type;
	int			fd;		/* socket or control device */
	uint8_t			uuid[16];	/* external uuid */
	struct bch_fs		*c;		/* LOCAL */
	struct bch_admin	*adm;		/* LOCAL */
	bool			rw;		/* LOCAL: opened read-write */
	struct printbuf		msg;		/* the last reply's message */
};

/* What the caller accepts when the filesystem is not mounted. */
enum {
	BCH_OPEN_OFFLINE_RO	= 1 << 0,	/* open it here, read-only */
	BCH_OPEN_OFFLINE_RW	= 1 << 1,	/* open it here, read-write */
};

/*
 * Open a handle on the filesystem named by @arg: a UUID, a path inside a
 * mount, or member device(s) DEV[:DEV...]. Errors (-errno, reason in
 * @err): -ENOENT no such path, -ENOTTY not a bcachefs filesystem, -ENXIO
 * not mounted (and no in-process open allowed), -EACCES...
 */
int bch_handle_open(const char *arg, unsigned flags, struct bch_handle **h,
		    struct printbuf *err);

/*
 * Open a handle from member device @dev (its superblock: uuid, index in
 * *@idx). When not mounted and @flags allow, it is opened in-process from
 * @fs_devs (DEV[:DEV...], every member) or, when NULL, @dev alone.
 */
int bch_handle_open_dev(const char *dev, const char *fs_devs, unsigned flags,
			struct bch_handle **h, unsigned *idx, struct printbuf *err);

/*
 * The filesystem (external uuid) and member index device @path's
 * superblock names. -ENOTTY when it is not a bcachefs device.
 */
int bch_member_sb_read(const char *path, uint8_t uuid[16], unsigned *idx,
		       struct printbuf *err);

/*
 * Is @path a member of @h's filesystem already? By its superblock (the
 * same external uuid, whatever path reaches it), and for an in-process
 * open also by being the very file or block device a member was opened
 * from (its superblock may be damaged). Returns 1 (member index in *@idx,
 * or -1 when only the file matched), 0 if not.
 */
int bch_handle_dev_is_member(struct bch_handle *h, const char *path, int *idx);

/*
 * Does @path (an existing file, or a loop device... built on one) live
 * inside a mount of filesystem @uuid? Opening it from that mount's own
 * process would wait on itself for ever. Asked with BCH_IOCTL_QUERY_UUID
 * on the directory holding the file (our FUSE mounts answer it on any
 * directory, the kernel's too). 1 yes, 0 no.
 */
int bch_path_in_fs(const uint8_t uuid[16], const char *path);

/*
 * Close: an in-process read-write open is written out and marked clean
 * (errors returned, reason in @err).
 */
int bch_handle_close(struct bch_handle *h, struct printbuf *err);

/* Where the mount of @uuid listens (BCACHEFS_RUN_DIR or /run/bcachefs). */
void bch_ctl_socket_path(const uint8_t uuid[16], struct printbuf *out);
const char *bch_run_dir(void);

/*
 * The ioctl @nr with argument @arg, as the kernel would run it (pointers
 * inside @arg are this process's memory). Returns >= 0 or -errno; the
 * mount's reason for a failure in h->msg.
 */
long bch_ioctl(struct bch_handle *h, unsigned long nr, void *arg);

/*
 * Read job descriptor @fd (BCH_IOCTL_DATA's result): the next progress
 * record into @buf (@len >= 128: the 128-byte event; >= 40: the bare
 * progress record of the seed's header). Returns the bytes read or
 * -errno (-EPIPE: the mount went away).
 */
long bch_job_read(struct bch_handle *h, int fd, void *buf, size_t len);

/*
 * The job's result once it ended (r->done), with its report in @report
 * (scrub: what was found). -EOPNOTSUPP on a kernel control device.
 */
int bch_job_result(struct bch_handle *h, int fd, struct bch_job_result *r,
		   struct printbuf *report);

#endif
