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
	const char	*summary;
};

static const struct bch_cmd commands[] = {
#define x(fn, name, summary) { name, cmd_##fn, summary },
	BCH_COMMANDS()
#undef x
};

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
	static char name[64];

	snprintf(name, sizeof(name), "bcachefs %s", c->name);
	bch_cmd_name = name;
	fflush(NULL);
	return c->fn(argc, argv);
}

/* bcachefs help CMD [SUBCMD]: that command's --help. */
static int help_command(int argc, char *argv[])
{
	char name[64];

	snprintf(name, sizeof(name), "%s%s%s", argv[0], argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name) ||
		    (!strchr(commands[i].name, ' ') && !strcmp(commands[i].name, argv[0]))) {
			char *help_argv[] = { argv[0], "--help", NULL };

			return run(&commands[i], 2, help_argv);
		}
	cmd_usage_error("", "help: unknown command '%s'", name);
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
		return help_command(argc - 2, argv + 2);
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
