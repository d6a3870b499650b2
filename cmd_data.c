// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs data rereplicate|migrate|scrub (spec 50 §7.9; the seed's
 * BCH_DATA_OP_SCRUB): start a job in the mount (or in this process for an
 * unmounted filesystem) and follow its progress (cmd_online.c): a bar on a
 * terminal, a plain line at every tenth otherwise; Ctrl-C stops the job
 * after the extent it is on, and running the command again finishes it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_online.h"
#include "cmds.h"
#include "libbcachefs/dev/dev.h"
#include "libbcachefs/format/format.h"
#include "libbcachefs/format/ioctl.h"
#include "libbcachefs/dev/super.h"
#include "libbcachefs/util/util.h"

#define FS_ARG \
"FILESYSTEM is the mountpoint or any path inside it, the filesystem's UUID, or\n" \
"the devices DEV[:DEV...] of an unmounted filesystem (opened here).\n"

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

static void one_fs_arg(int argc, char *argv[], const char *usage)
{
	if (argc - optind < 1)
		cmd_usage_error(usage, "Please supply a filesystem");
	if (argc - optind > 1)
		cmd_usage_error(usage, "too many arguments");
}

/* A job on FILESYSTEM with no option but --help. */
static int plain_job(int argc, char *argv[], const char *usage, const char *what,
		     unsigned op)
{
	static const struct option longopts[] = {
		{ "verbose",	no_argument,	NULL, 'v' },
		{ "help",	no_argument,	NULL, 'h' },
		{ NULL }
	};
	int opt;

	while ((opt = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1)
		switch (opt) {
		case 'v':
			online_verbose = true;
			break;
		case 'h':
			cmd_help(usage);
		default:
			cmd_bad_option(usage, opt, argv);
		}
	one_fs_arg(argc, argv, usage);
	return run_job(argv[optind], op, 0, what);
}

const char cmd_data_rereplicate_usage[] =
"Usage: bcachefs data rereplicate [OPTION]... FILESYSTEM\n"
"Write more copies of data and metadata that have fewer than the replicas\n"
"wanted (after a device failed, was removed, or the replicas option grew).\n"
"Copies on failed or missing devices do not count.\n"
"\n"
FS_ARG
"\n"
"Options:\n"
"  -v, --verbose            a refusal also names the request and its errno\n"
"  -h, --help               display this help and exit\n";

int cmd_data_rereplicate(int argc, char *argv[])
{
	return plain_job(argc, argv, cmd_data_rereplicate_usage, "rereplicate",
			 BCH_DATA_OP_REREPLICATE);
}

const char cmd_data_migrate_usage[] =
"Usage: bcachefs data migrate --dev DEVICE... FILESYSTEM\n"
"Move every copy of data and metadata off the DEVICEs (member device paths or\n"
"indexes) to the other devices. The devices stay as they are (new writes may\n"
"still go to them: device evacuate sets a device read-only first).\n"
"\n"
FS_ARG
"\n"
"Options:\n"
"  -d, --dev DEVICE         a device to move data off (repeat for more)\n"
"  -v, --verbose            a refusal also names the request and its errno\n"
"  -h, --help               display this help and exit\n";

int cmd_data_migrate(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "dev",	required_argument,	NULL, 'd' },
		{ "verbose",	no_argument,		NULL, 'v' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL }
	};
	const char *devs[64];
	unsigned nr = 0;
	int opt, code = EXIT_OK;

	while ((opt = getopt_long(argc, argv, ":d:vh", longopts, NULL)) != -1)
		switch (opt) {
		case 'd':
			if (nr == ARRAY_SIZE(devs))
				cmd_usage_error(cmd_data_migrate_usage, "too many devices");
			devs[nr++] = optarg;
			break;
		case 'v':
			online_verbose = true;
			break;
		case 'h':
			cmd_help(cmd_data_migrate_usage);
		default:
			cmd_bad_option(cmd_data_migrate_usage, opt, argv);
		}
	one_fs_arg(argc, argv, cmd_data_migrate_usage);
	if (!nr)
		cmd_usage_error(cmd_data_migrate_usage, "Please supply a device to migrate off (--dev)");
	for (unsigned i = 0; i < nr; i++) {
		uint64_t idx;

		if (parse_u64(devs[i], &idx)) {
			/* a device path: its index from its own superblock, in this filesystem */
			struct bch_handle *fs = online_open(argv[optind], BCH_OPEN_OFFLINE_RO);
			struct printbuf err = PRINTBUF;
			uint8_t uuid[16];
			unsigned di;

			if (bch_member_sb_read(devs[i], uuid, &di, &err))
				online_die("%s", printbuf_str(&err));
			if (memcmp(uuid, fs->uuid, 16))
				online_die("%s is not a member of %s", devs[i], argv[optind]);
			bch_handle_close(fs, NULL);
			printbuf_exit(&err);
			idx = di;
		}
		if (idx >= 64)
			cmd_usage_error(cmd_data_migrate_usage, "bad device index %s", devs[i]);
		code = run_job(argv[optind], BCH_DATA_OP_MIGRATE, (unsigned)idx, "migrate");
		if (code)
			break;
	}
	return code;
}

const char cmd_data_scrub_usage[] =
"Usage: bcachefs data scrub [OPTION]... FILESYSTEM\n"
"Read every btree node and every copy of every extent and verify their\n"
"checksums. A bad copy is rewritten from a good one; what has no good copy\n"
"is reported (the file's path and where) and the exit status is 1.\n"
"\n"
FS_ARG
"\n"
"Options:\n"
"  -v, --verbose            a refusal also names the request and its errno\n"
"  -h, --help               display this help and exit\n";

int cmd_data_scrub(int argc, char *argv[])
{
	return plain_job(argc, argv, cmd_data_scrub_usage, "scrub", BCH_DATA_OP_SCRUB);
}
