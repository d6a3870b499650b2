// SPDX-License-Identifier: GPL-2.0
/*
 * What every command shares (cmds.h): the usage error, --help, the one-line
 * errors (die), open failures and missing members said the same way.
 */
#include "cmds.h"
#include "libbcachefs/core/bch_fs.h"
#include "libbcachefs/dev/super.h"
#include "libbcachefs/fs/fs.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/util/util.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "bcachefs format", "mkfs.bcachefs": how messages name the running command */
const char *bch_cmd_name = "bcachefs";

noreturn void cmd_usage_error(const char *usage, const char *fmt, ...)
{
	char *msg = NULL;
	va_list args;
	size_t len;

	(void)usage;
	fflush(stdout);
	va_start(args, fmt);
	if (vasprintf(&msg, fmt, args) < 0)
		msg = NULL;
	va_end(args);
	/* one line: what is wrong, then where to look */
	len = msg ? strlen(msg) : 0;
	while (len && msg[len - 1] == '\n')
		msg[--len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (msg[i] == '\n')
			msg[i] = ' ';
	fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n",
		bch_cmd_name, msg ?: "usage error", bch_cmd_name);
	free(msg);
	exit(EXIT_USAGE);
}

void cmd_open_failed(const char *path, int ret, const struct printbuf *err, const char *tail)
{
	const char *p = err && err->pos ? err->buf : "";

	fflush(stdout);
	if (!*p) {
		fprintf(stderr, "%s: %s: cannot open: %s%s\n", bch_cmd_name, path,
			bch_err_str(ret), tail ?: "");
		return;
	}
	while (*p) {
		size_t len = strcspn(p, "\n");
		bool last = !p[len] || !p[len + 1];

		if (len)
			fprintf(stderr, "%s: %.*s%s\n", bch_cmd_name, (int)len, p,
				last && tail ? tail : "");
		p += len + !!p[len];
	}
}

unsigned cmd_note_missing(struct bch_fs *c)
{
	unsigned nr = 0;

	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct printbuf u = PRINTBUF;

		if (!c->devs[i] || c->devs[i]->io || !bch_sb_member_exists(c->sb, i))
			continue;
		pr_uuid(&u, bch_sb_member(c->sb, i)->uuid.b);
		fflush(stdout);
		fprintf(stderr, "%s: member %u (uuid %s) is missing: opened degraded, "
			"what is kept on it is not read\n", bch_cmd_name, i, printbuf_str(&u));
		printbuf_exit(&u);
		nr++;
	}
	return nr;
}

const char *cmd_missing_hint(char * const *devs, unsigned nr, const struct bch_fs_opts *opts,
			     int ret, struct printbuf *err)
{
	struct bch_fs_opts o = *opts;
	struct printbuf why = PRINTBUF;
	struct bch_fs *c;
	int r;

	if (ret != -BCH_ERR_dev_missing || opts->degraded)
		return NULL;
	/* would a degraded open do? (its superblock and replicas checks) */
	o.degraded = o.read_only = o.no_journal = true;
	o.ask_passphrase = false;
	o.passphrase_file = NULL;
	o.fsck = NULL;
	r = bch_fs_open(devs, nr, &o, &c, &why);
	if (!r)
		bch_fs_close(c);
	if (r == -BCH_ERR_dev_missing) {
		/* no: what cannot be read without them says more */
		printbuf_reset(err);
		pr_str(err, printbuf_str(&why));
	}
	printbuf_exit(&why);
	return r == -BCH_ERR_dev_missing ? NULL : " (--degraded opens it without them)";
}

noreturn void cmd_bad_option(const char *usage, int opt, char *argv[])
{
	const char *arg = optind > 0 ? argv[optind - 1] : NULL;

	if (arg && !strncmp(arg, "--", 2)) {
		int len = (int)strcspn(arg, "=");

		if (opt == ':')
			cmd_usage_error(usage, "option '%.*s' needs a value", len, arg);
		if (optopt && arg[len])
			cmd_usage_error(usage, "option '%.*s' takes no value", len, arg);
		cmd_usage_error(usage, "unknown or ambiguous option '%.*s'", len, arg);
	}
	if (opt == ':')
		cmd_usage_error(usage, "option '-%c' needs a value", optopt);
	cmd_usage_error(usage, "unknown option '-%c'", optopt);
}

noreturn void die(const char *fmt, ...)
{
	va_list args;

	fflush(stdout);
	fputs("bcachefs: ", stderr);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	exit(EXIT_FAIL);
}

#ifndef BCACHEFS_VERSION
#define BCACHEFS_VERSION "0.1"
#endif

noreturn void cmd_print_version(void)
{
	printf("bcachefs-tools %s (on-disk format: superblock version 9)\n", BCACHEFS_VERSION);
	exit(fflush(stdout) ? EXIT_FAIL : EXIT_OK);
}
