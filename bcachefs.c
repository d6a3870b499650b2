// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs: the command table and dispatch. Also answers to the names
 * mkfs.bcachefs (format), fsck.bcachefs (fsck) and mount.bcachefs (mount,
 * as mount(8) calls it: mount.bcachefs DEV DIR [-o OPTIONS] [-n] [-s] ...).
 */
#include "cmds.h"

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

noreturn void cmd_usage_error(const char *usage, const char *fmt, ...)
{
	va_list args;

	fputs("bcachefs: ", stderr);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	/* first line of the usage text says how to call it */
	const char *nl = strchr(usage, '\n');
	fprintf(stderr, "%.*s\nTry '--help' for more information.\n",
		nl ? (int)(nl - usage) : (int)strlen(usage), usage);
	exit(EXIT_USAGE);
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

static int run(const struct bch_cmd *c, int argc, char *argv[])
{
	fflush(NULL);
	return c->fn(argc, argv);
}

int main(int argc, char *argv[])
{
	char *prog = basename(argv[0]);

	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(prog, "mkfs.bcachefs"))
		return cmd_format(argc, argv);
	if (!strcmp(prog, "fsck.bcachefs"))
		return cmd_fsck(argc, argv);
	if (!strcmp(prog, "mount.bcachefs"))
		return cmd_mount(argc, argv);

	if (argc < 2) {
		fprintf(stderr, "bcachefs: missing command\n");
		usage(stderr);
		return EXIT_USAGE;
	}
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
			fprintf(stderr, "bcachefs: %s: %s\n", argv[1],
				argc < 3 ? "missing subcommand" : "unknown subcommand");
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	fprintf(stderr, "bcachefs: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
