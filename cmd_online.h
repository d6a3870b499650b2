/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the online commands (cmd_fs.c, cmd_device.c, cmd_data.c) share:
 * opening a handle with the error printed, the ioctl error message, the
 * superblock through READ_SUPER, and the progress loop of a data job.
 */
#ifndef BCH_CMD_ONLINE_H
#define BCH_CMD_ONLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd_opts.h"
#include "libbcachefs/admin/handle.h"

struct bch_sb;

/* bch_handle_open() or die (exit 1) with the reason. */
struct bch_handle *online_open(const char *arg, unsigned flags);
/* bch_handle_open_dev() or die. */
struct bch_handle *online_open_dev(const char *dev, const char *fs_devs, unsigned flags,
				   unsigned *idx);
/* Close (an in-process open is written out); die when that fails. */
void online_close(struct bch_handle *h);

/* -v: the ioctl's name and errno too (online_ioctl_err()). */
extern bool online_verbose;

struct printbuf;
/* The -v of the online commands' option tables: sets online_verbose. */
int online_opt_verbose(void *opts, const char *arg, struct printbuf *why);
#define CMD_OPT_ONLINE_VERBOSE						\
	CMD_OPT_FN('v', "verbose", NULL,				\
		   "a refusal also names the request and its errno", online_opt_verbose)

/*
 * A refused or failed request, one line on stderr: "<command>: <the
 * mount's reason>" (or the errno's text when it gave none). With -v first
 * "<NAME> ioctl error: <strerror>" (spec 50 §7's form).
 */
void online_ioctl_err(struct bch_handle *h, const char *name, long ret);

/* "<command>: <message>" on stderr, exit 1. */
#include <stdnoreturn.h>
noreturn void online_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The filesystem's superblock (BCH_IOCTL_READ_SUPER, growing the buffer), or die. */
struct bch_sb *online_read_super(struct bch_handle *h);

/*
 * Follow job @fd until it ends: a progress bar on a tty (phase, btree,
 * position, percent, rate), otherwise a plain line at every tenth; the
 * job's report at the end. Ctrl-C (SIGINT, SIGTERM) closes the job, which
 * stops after its current extent. Returns the exit code: 0 done, 1 the job
 * failed or reported problems, 130 interrupted.
 */
int online_job_run(struct bch_handle *h, int fd, const char *what);

#endif
