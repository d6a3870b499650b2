// SPDX-License-Identifier: GPL-2.0
/* bcachefs version (also -V/--version of every command that has it). */
#include "cmd_opts.h"
#include "cmds.h"


static const struct cmd_opt version_opts[] = {
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def version_def = {
	.name		= "version",
	.about		= "Print the version of this tool.",
	.opts		= version_opts,
	.no_args	= true,
};

int cmd_version(int argc, char *argv[])
{
	cmd_parse(&version_def, NULL, argc, argv);
	cmd_print_version();
}
