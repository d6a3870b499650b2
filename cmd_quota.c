// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs quota report / quota set (doc/engine.md §12, Quotas). FUSE has no
 * quotactl: the mount answers the extended attributes of its root
 * directory "bcachefs_quota.report" (get) and "bcachefs_quota.TYPE.ID"
 * (set), and these commands are their front end; `quota report` of an
 * unmounted filesystem counts from its inodes (libbcachefs/fs/quota.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/core/bch_fs.h"
#include "libbcachefs/fs/fs.h"
#include "libbcachefs/fs/quota.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/util/util.h"

#define QUOTA_XATTR_REPORT	"bcachefs_quota.report"
#define QUOTA_XATTR_BUF		(64U << 10)

/* ---- report ---- */

struct quota_report_opts {
	struct bch_fs_opts	fo;
};

static const struct cmd_opt quota_report_opts[] = {
	CMD_OPT_PASSPHRASE_FILE(struct quota_report_opts, fo),
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def quota_report_def = {
	.name		= "quota report",
	.args		= "MOUNTPOINT | DEVICE...",
	.about		= "Show the quota usage and limits of each user, group and project the\n"
			  "filesystem counts: one line each,\n"
			  "  TYPE ID space USED SOFT HARD inodes USED SOFT HARD\n"
			  "space in 512-byte sectors, 0 = no limit, * = over the soft limit. Of a\n"
			  "mounted filesystem, what the mount counts; of an unmounted one, counted\n"
			  "from its inodes, for the types its superblock enables.",
	.opts		= quota_report_opts,
	.min_args	= 1,
	.no_args_msg	= "no mount point or device given",
	.needs		= CMD_NEEDS_ANY,
};

static int report_mounted(const char *dir)
{
	char name[64], *buf = xmalloc(QUOTA_XATTR_BUF);
	unsigned long lines = 0;
	ssize_t n;

	/* a page of whole lines at a time (an xattr value is 64 KiB at most) */
	do {
		snprintf(name, sizeof(name), QUOTA_XATTR_REPORT ".%lu", lines);
		n = getxattr(dir, name, buf, QUOTA_XATTR_BUF);
		if (n < 0) {
			if (errno == EOPNOTSUPP || errno == ENODATA)
				fprintf(stderr, "bcachefs quota report: %s: no quotas counted (not a "
					"bcachefs mount, or neither format --usrquota/--grpquota/"
					"--prjquota nor mount -o usrquota/grpquota/prjquota)\n", dir);
			else
				fprintf(stderr, "bcachefs quota report: %s: %s\n", dir, strerror(errno));
			free(buf);
			return EXIT_FAIL;
		}
		fwrite(buf, 1, (size_t)n, stdout);
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	} while (n > 0);
	free(buf);
	return EXIT_OK;
}

int cmd_quota_report(int argc, char *argv[])
{
	struct quota_report_opts o = { .fo = { .read_only = true, .ask_passphrase = true } };
	struct printbuf err = PRINTBUF, out = PRINTBUF;
	struct bch_quota_table *q;
	struct bch_fs *c;
	struct stat st;
	int i, ret;

	i = cmd_parse(&quota_report_def, &o, argc, argv);
	if (argc - i == 1 && !stat(argv[i], &st) && S_ISDIR(st.st_mode))
		return report_mounted(argv[i]);

	ret = bch_fs_open(argv + i, (unsigned)(argc - i), &o.fo, &c, &err);
	if (ret) {
		cmd_open_failed(argv[i], ret, &err,
				cmd_missing_hint(argv + i, (unsigned)(argc - i), &o.fo, ret, &err));
		printbuf_exit(&err);
		return EXIT_FAIL;
	}
	printbuf_reset(&err);
	if (!bch_quota_sb_types(c)) {
		fprintf(stderr, "bcachefs quota report: %s: quotas are not enabled in the superblock "
			"(format --usrquota, --grpquota, --prjquota)\n", argv[i]);
		bch_fs_close(c);
		printbuf_exit(&err);
		return EXIT_FAIL;
	}
	ret = bch_quota_count(c, bch_quota_sb_types(c), &q, &err);
	if (ret) {
		fputs(printbuf_str(&err), stderr);
		fprintf(stderr, "bcachefs quota report: %s: %s\n", argv[i], bch_err_str(ret));
	} else {
		bch_quota_report(&out, q);
		fputs(printbuf_str(&out), stdout);
		bch_quota_free(q);
	}
	bch_fs_close(c);
	printbuf_exit(&out);
	printbuf_exit(&err);
	return ret ? EXIT_FAIL : EXIT_OK;
}

/* ---- set ---- */

struct quota_set_opts {
	const char	*space_hard, *space_soft, *inodes_hard, *inodes_soft;
};

static const struct cmd_opt quota_set_opts[] = {
	CMD_OPT_STR(0, "space-hard", "SIZE", "most space (bytes, k/M/G/T suffixes; 0 = no limit)",
		    struct quota_set_opts, space_hard),
	CMD_OPT_STR(0, "space-soft", "SIZE", "space over which the report marks it",
		    struct quota_set_opts, space_soft),
	CMD_OPT_STR(0, "inodes-hard", "N", "most inodes (0 = no limit)",
		    struct quota_set_opts, inodes_hard),
	CMD_OPT_STR(0, "inodes-soft", "N", "inodes over which the report marks it",
		    struct quota_set_opts, inodes_soft),
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def quota_set_def = {
	.name		= "quota set",
	.args		= "MOUNTPOINT user|group|project ID",
	.about		= "Set the quota limits of a user, group or project of a mounted filesystem\n"
			  "(root only); the limits not given stay as they are. A write, create or\n"
			  "chown that would go over a hard limit fails with EDQUOT.",
	.opts		= quota_set_opts,
	.min_args	= 3,
	.max_args	= 3,
	.no_args_msg	= "usage: quota set MOUNTPOINT user|group|project ID",
	.needs		= CMD_NEEDS_MOUNTED,
};

/* "name=VALUE," into @out: SIZE in bytes to sectors (rounded up) when @size. */
static void limit_arg(struct printbuf *out, const char *name, const char *v, bool size)
{
	uint64_t n;

	if (!v)
		return;
	if (size ? parse_size(v, &n) != 0 : parse_u64(v, &n))
		cmd_usage_error(quota_set_def.name, "--%s: bad %s '%s'", name,
				size ? "size" : "number", v);
	if (size)
		n = (n + 511) / 512;
	pr_buf(out, "%s%s=%" PRIu64, out->pos ? "," : "", name, n);
}

int cmd_quota_set(int argc, char *argv[])
{
	struct quota_set_opts o = { 0 };
	struct printbuf name = PRINTBUF, val = PRINTBUF;
	uint64_t id;
	int i, ret = EXIT_OK;

	i = cmd_parse(&quota_set_def, &o, argc, argv);
	if (bch_quota_type_lookup(argv[i + 1]) < 0)
		cmd_usage_error(quota_set_def.name, "'%s': not user, group or project", argv[i + 1]);
	if (parse_u64(argv[i + 2], &id) || id > UINT32_MAX)
		cmd_usage_error(quota_set_def.name, "'%s': not a user, group or project id", argv[i + 2]);
	limit_arg(&val, "space_hard", o.space_hard, true);
	limit_arg(&val, "space_soft", o.space_soft, true);
	limit_arg(&val, "inodes_hard", o.inodes_hard, false);
	limit_arg(&val, "inodes_soft", o.inodes_soft, false);
	if (!val.pos)
		cmd_usage_error(quota_set_def.name, "no limit given");
	pr_buf(&name, "bcachefs_quota.%s.%" PRIu64,
	       bch_quota_type_name((unsigned)bch_quota_type_lookup(argv[i + 1])), id);
	if (setxattr(argv[i], printbuf_str(&name), val.buf, val.pos, 0)) {
		fprintf(stderr, "bcachefs quota set: %s: %s\n", argv[i],
			errno == EOPNOTSUPP ? "no quotas counted there (not a bcachefs mount, or "
			"quotas not enabled: format --usrquota..., mount -o usrquota...)"
					    : strerror(errno));
		ret = EXIT_FAIL;
	}
	printbuf_exit(&name);
	printbuf_exit(&val);
	return ret;
}
