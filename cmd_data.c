// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs data rereplicate|migrate|scrub (doc/ioctl.md §9.10; the seed's
 * BCH_DATA_OP_SCRUB): start a job in the mount (or in this process for an
 * unmounted filesystem) and follow its progress (cmd_online.c): a bar on a
 * terminal, a plain line at every tenth otherwise; Ctrl-C stops the job
 * after the extent it is on, and running the command again finishes it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_online.h"
#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/dev/dev.h"
#include "libbcachefs/format/format.h"
#include "libbcachefs/format/ioctl.h"
#include "libbcachefs/dev/super.h"
#include "libbcachefs/util/util.h"

static int run_job(const char *fs, uint32_t op, unsigned dev, const char *what)
{
	struct bch_handle *h = online_open(fs, BCH_OPEN_OFFLINE_RW);
	struct bch_ioctl_data d = { .op = op, .start = POS_MIN, .end = POS_MAX };
	long fd;
	int code;

	d.migrate.dev = dev;
	fd = bch_ioctl(h, BCH_IOCTL_DATA, &d);
	if (fd < 0) {
		online_ioctl_err(h, "BCH_IOCTL_DATA", fd);
		exit(EXIT_FAIL);
	}
	code = online_job_run(h, (int)fd, what);
	if (code == 130)
		exit(code);
	online_close(h);
	return code;
}

struct data_args {
	const char	*devs[64];
	unsigned	nr;
};

static int o_dev(void *p, const char *arg, struct printbuf *why)
{
	struct data_args *a = p;

	if (a->nr == ARRAY_SIZE(a->devs)) {
		pr_str(why, "too many devices");
		return -1;
	}
	a->devs[a->nr++] = arg;
	return 0;
}

static const struct cmd_opt plain_opts[] = {
	CMD_OPT_ONLINE_VERBOSE,
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_opt migrate_opts[] = {
	CMD_OPT_FN('d', "dev", "DEVICE", "a device to move data off (repeat for more)", o_dev),
	CMD_OPT_ONLINE_VERBOSE,
	CMD_OPT_HELP,
	CMD_OPT_END
};

#define JOB_DEF(_name, _about, _opts)					\
	{ .name = _name, .args = "FILESYSTEM", .about = _about "\n\n" FS_ARG_TEXT, \
	  .opts = _opts, .min_args = 1, .max_args = 1,			\
	  .no_args_msg = "Please supply a filesystem", .help_col = 27,	\
	  .needs = CMD_NEEDS_MOUNTED }

#define FS_ARG_TEXT							\
"FILESYSTEM is the mountpoint or any path inside it, the filesystem's UUID, or\n" \
"the devices DEV[:DEV...] of an unmounted filesystem (opened here)."

static const struct cmd_def rereplicate_def = JOB_DEF("data rereplicate",
	"Write more copies of data and metadata that have fewer than the replicas\n"
	"wanted (after a device failed, was removed, or the replicas option grew).\n"
	"Copies on failed or missing devices do not count.", plain_opts);

static const struct cmd_def migrate_def = JOB_DEF("data migrate",
	"Move every copy of data and metadata off the DEVICEs (member device paths or\n"
	"indexes) to the other devices. The devices stay as they are (new writes may\n"
	"still go to them: device evacuate sets a device read-only first).", migrate_opts);

static const struct cmd_def scrub_def = JOB_DEF("data scrub",
	"Read every btree node and every copy of every extent and verify their\n"
	"checksums. A bad copy is rewritten from a good one; what has no good copy\n"
	"is reported (the file's path and where) and the exit status is 1.", plain_opts);

/* A job on FILESYSTEM with no option but -v. */
static int plain_job(int argc, char *argv[], const struct cmd_def *def, const char *what,
		     unsigned op)
{
	int first = cmd_parse(def, NULL, argc, argv);

	return run_job(argv[first], op, 0, what);
}

int cmd_data_rereplicate(int argc, char *argv[])
{
	return plain_job(argc, argv, &rereplicate_def, "rereplicate", BCH_DATA_OP_REREPLICATE);
}

int cmd_data_migrate(int argc, char *argv[])
{
	struct data_args a = { .nr = 0 };
	int first = cmd_parse(&migrate_def, &a, argc, argv), code = EXIT_OK;
	const char *fs = argv[first];

	if (!a.nr)
		cmd_usage_error(NULL, "Please supply a device to migrate off (--dev)");
	for (unsigned i = 0; i < a.nr; i++) {
		uint64_t idx;

		if (parse_u64(a.devs[i], &idx)) {
			/* a device path: its index from its own superblock, in this filesystem */
			struct bch_handle *h = online_open(fs, BCH_OPEN_OFFLINE_RO);
			struct printbuf err = PRINTBUF;
			uint8_t uuid[16];
			unsigned di;

			if (bch_member_sb_read(a.devs[i], uuid, &di, &err))
				online_die("%s", printbuf_str(&err));
			if (memcmp(uuid, h->uuid, 16))
				online_die("%s is not a member of %s", a.devs[i], fs);
			bch_handle_close(h, NULL);
			printbuf_exit(&err);
			idx = di;
		}
		if (idx >= 64)
			cmd_usage_error(NULL, "bad device index %s", a.devs[i]);
		code = run_job(fs, BCH_DATA_OP_MIGRATE, (unsigned)idx, "migrate");
		if (code)
			break;
	}
	return code;
}

int cmd_data_scrub(int argc, char *argv[])
{
	return plain_job(argc, argv, &scrub_def, "scrub", BCH_DATA_OP_SCRUB);
}
