// SPDX-License-Identifier: GPL-2.0
#include "cmds.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef BCACHEFS_VERSION
#define BCACHEFS_VERSION "0.1"
#endif

const char cmd_version_usage[] =
	"Usage: bcachefs version\n"
	"Print the version of this tool.\n"
	"\n"
	"  -h, --help             display this help and exit\n";

noreturn void cmd_print_version(void)
{
	printf("bcachefs-tools %s (on-disk format: superblock version 9)\n", BCACHEFS_VERSION);
	exit(fflush(stdout) ? EXIT_FAIL : EXIT_OK);
}

int cmd_version(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help",	no_argument,	NULL, 'h' },
		{ NULL }
	};
	int opt;

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (opt == 'h')
			cmd_help(cmd_version_usage);
		cmd_bad_option(cmd_version_usage, opt, argv);
	}
	if (optind < argc)
		cmd_usage_error(cmd_version_usage, "unexpected argument '%s'", argv[optind]);
	cmd_print_version();
}
