// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs show-super: print the superblock of one device (doc/tools.md §3).
 * Reads that device's superblock only (primary, else a backup), read-only;
 * no full validation and no filesystem open, so it works on damaged and
 * mounted devices.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/dev/dev.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/dev/super.h"
#include "libbcachefs/dev/sb_print.h"
#include "libbcachefs/util/util.h"

struct show_super_args {
	unsigned	flags;
	bool		json;
};

static int opt_fields(void *opts, const char *arg, struct printbuf *why)
{
	struct show_super_args *a = opts;
	char *s = xstrdup(arg), *save = NULL, *tok;
	unsigned flags = 0;
	int ret = 0;

	for (tok = strtok_r(s, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		int t;

		if (!strcmp(tok, "all")) {
			flags |= BCH_SB_PRINT_ALL_FIELDS;
			continue;
		}
		t = bch_sb_field_type_parse(tok);
		if (t < 0) {
			pr_buf(why, "bad superblock field '%s' (known: journal, members, crypt, replicas, quota, disk_groups, all)",
			       tok);
			ret = -1;
		} else {
			flags |= 1U << t;
		}
	}
	free(s);
	a->flags = (a->flags & BCH_SB_PRINT_LAYOUT) | flags;
	return ret;
}

static int opt_layout(void *opts, const char *arg, struct printbuf *why)
{
	((struct show_super_args *)opts)->flags |= BCH_SB_PRINT_LAYOUT;
	return 0;
}

static const struct cmd_opt show_super_opts[] = {
	CMD_OPT_FN('f', "fields", "LIST",
		   "superblock fields to print, comma separated, or 'all'\n"
		   "(journal, members, crypt, replicas, quota, disk_groups;\n"
		   "default: members)", opt_fields),
	CMD_OPT_FN('l', "layout", NULL, "also print the superblock layout", opt_layout),
	CMD_OPT_BOOL(0, "json", "print one JSON object instead of text",
		     struct show_super_args, json),
	CMD_OPT_HELP,
	CMD_OPT_END
};

const struct cmd_def cmd_show_super_def = {
	.name		= "show-super",
	.args		= "DEVICE",
	.about		= "Print the superblock of DEVICE.",
	.opts		= show_super_opts,
	.min_args	= 1,
	.max_args	= 1,
	.no_args_msg	= "no device given",
	.too_many_msg	= "too many arguments: one device only",
	.help_col	= 23,
};

int cmd_show_super(int argc, char *argv[])
{
	struct show_super_args a = { .flags = 1U << BCH_SB_FIELD_members };
	struct printbuf err = PRINTBUF, out = PRINTBUF;
	struct bch_sb_handle h = { 0 };
	const char *path = argv[cmd_parse(&cmd_show_super_def, &a, argc, argv)];
	struct bch_devio *io;
	int ret;

	ret = dev_open(path, 0, &io);
	if (ret) {
		cmd_open_failed(path, ret, NULL, NULL);
		return EXIT_FAIL;
	}

	ret = bch_sb_read(io, &h, &err);
	dev_close(io);
	/* the reasons; also (not an error) when a backup was used */
	if (ret || err.pos)
		cmd_open_failed(path, ret, &err, NULL);
	printbuf_exit(&err);
	if (ret)
		return EXIT_FAIL;

	if (a.json) {
		bch_sb_to_json(&out, h.sb, a.flags, true);
		pr_char(&out, '\n');
	} else {
		bch_sb_to_text(&out, h.sb, a.flags);
	}
	fputs(printbuf_str(&out), stdout);
	printbuf_exit(&out);
	bch_sb_handle_free(&h);
	return fflush(stdout) ? EXIT_FAIL : EXIT_OK;
}
