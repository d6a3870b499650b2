// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs: the command table and dispatch. Also answers to the names
 * mkfs.bcachefs (format), fsck.bcachefs (fsck) and mount.bcachefs (mount,
 * as mount(8) calls it: mount.bcachefs DEV DIR [-o OPTIONS] [-n] [-s] ...).
 */
#include "cmds.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/fs/fs.h"
#include "libbcachefs/dev/super.h"
#include "libbcachefs/util/util.h"

#include <getopt.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bch_cmd {
	const char	*name;		/* "format", "device add" */
	int		(*fn)(int, char *[]);
	const char	*usage;
	const char	*summary;
};

static const struct bch_cmd commands[] = {
#define x(fn, name, summary) { name, cmd_##fn, cmd_##fn##_usage, summary },
	BCH_COMMANDS()
#undef x
};

/*
 * Commands not yet built into this binary: a weak default that says so.
 * A cmd_*.c that defines the command replaces it at link time.
 */
#define x(fn, name, summary)						\
	__attribute__((weak)) const char cmd_##fn##_usage[] =		\
		"Usage: bcachefs " name "\n(not available in this build)\n"; \
	__attribute__((weak)) int cmd_##fn(int argc, char *argv[])	\
	{								\
		(void)argc; (void)argv;					\
		fprintf(stderr, "bcachefs: %s is not available in this build\n", name); \
		return 1;						\
	}
BCH_COMMANDS()
#undef x

noreturn void cmd_help(const char *usage)
{
	fputs(usage, stdout);
	exit(EXIT_OK);
}

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

noreturn void die_code(int code, const char *fmt, ...)
{
	va_list args;

	fflush(stdout);
	fputs("bcachefs: ", stderr);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	exit(code);
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

static void usage(FILE *f)
{
	fputs("Usage: bcachefs <command> [<options>] [<args>]\n\n"
	      "bcachefs userspace tools (on-disk format of May 2018, superblock version 9)\n\n"
	      "Commands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-20s %s\n", commands[i].name, commands[i].summary);
	fputs("\nRun 'bcachefs <command> --help' for the options of a command.\n", f);
}

/* bcachefs help CMD [SUBCMD]: that command's --help. */
static noreturn void help_command(int argc, char *argv[])
{
	char name[64];

	snprintf(name, sizeof(name), "%s%s%s", argv[0], argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name) ||
		    (!strchr(commands[i].name, ' ') && !strcmp(commands[i].name, argv[0])))
			cmd_help(commands[i].usage);
	cmd_usage_error("", "help: unknown command '%s'", name);
}

static int run(const struct bch_cmd *c, int argc, char *argv[])
{
	static char name[64];

	snprintf(name, sizeof(name), "bcachefs %s", c->name);
	bch_cmd_name = name;
	fflush(NULL);
	return c->fn(argc, argv);
}

int main(int argc, char *argv[])
{
	char *prog = basename(argv[0]);

	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(prog, "mkfs.bcachefs") || !strcmp(prog, "fsck.bcachefs") ||
	    !strcmp(prog, "mount.bcachefs")) {
		bch_cmd_name = prog;
		return prog[0] == 'm' && prog[1] == 'k' ? cmd_format(argc, argv) :
		       prog[0] == 'f' ? cmd_fsck(argc, argv) : cmd_mount(argc, argv);
	}

	if (argc < 2) {
		fprintf(stderr, "bcachefs: missing command\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help") && argc > 2)
		help_command(argc - 2, argv + 2);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return cmd_version(argc - 1, argv + 1);

	/* two-word commands ("device add") first, then one-word ones */
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const struct bch_cmd *c = &commands[i];
		const char *sp = strchr(c->name, ' ');

		if (sp) {
			size_t l = sp - c->name;
			if (argc >= 3 && strlen(argv[1]) == l &&
			    !strncmp(argv[1], c->name, l) && !strcmp(argv[2], sp + 1))
				return run(c, argc - 2, argv + 2);
		} else if (!strcmp(argv[1], c->name)) {
			return run(c, argc - 1, argv + 1);
		}
	}

	/* "device" alone, or an unknown subcommand of it */
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const char *sp = strchr(commands[i].name, ' ');
		if (sp && strlen(argv[1]) == (size_t)(sp - commands[i].name) &&
		    !strncmp(argv[1], commands[i].name, sp - commands[i].name)) {
			if (argc < 3)
				cmd_usage_error("", "%s: missing subcommand", argv[1]);
			cmd_usage_error("", "unknown command '%s %s'", argv[1], argv[2]);
		}
	}
	cmd_usage_error("", "unknown command '%s'", argv[1]);
}
