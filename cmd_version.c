// SPDX-License-Identifier: GPL-2.0
#include "cmds.h"

#include <stdio.h>

#ifndef BCACHEFS_VERSION
#define BCACHEFS_VERSION "0.1"
#endif

const char cmd_version_usage[] =
	"Usage: bcachefs version\n"
	"Print the version of this tool.\n";

int cmd_version(int argc, char *argv[])
{
	(void)argc; (void)argv;
	printf("bcachefs-tools %s (on-disk format: superblock version 9)\n", BCACHEFS_VERSION);
	return 0;
}
