// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs show-super: print the superblock of one device (spec 50 §3).
 * Reads that device's superblock only (primary, else a backup), read-only;
 * no full validation and no filesystem open, so it works on damaged and
 * mounted devices.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "libbcachefs/dev/dev.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/dev/super.h"
#include "libbcachefs/dev/sb_print.h"
#include "libbcachefs/util/util.h"

const char cmd_show_super_usage[] =
	"Usage: bcachefs show-super [OPTION]... DEVICE\n"
	"Print the superblock of DEVICE.\n"
	"\n"
	"Options:\n"
	"  -f, --fields=LIST    superblock fields to print, comma separated, or 'all'\n"
	"                       (journal, members, crypt, replicas, quota, disk_groups;\n"
	"                       default: members)\n"
	"  -l, --layout         also print the superblock layout\n"
	"      --json           print one JSON object instead of text\n"
	"  -h, --help           display this help and exit\n";

enum { OPT_JSON = 256 };

static unsigned parse_fields(const char *arg)
{
	char *s = xstrdup(arg), *save = NULL, *tok;
	unsigned flags = 0;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int t;

		if (!strcmp(tok, "all")) {
			flags |= BCH_SB_PRINT_ALL_FIELDS;
			continue;
		}
		t = bch_sb_field_type_parse(tok);
		if (t < 0)
			cmd_usage_error(cmd_show_super_usage,
					"bad superblock field '%s' (known: journal, members, crypt, replicas, quota, disk_groups, all)",
					tok);
		flags |= 1U << t;
	}
	free(s);
	return flags;
}

int cmd_show_super(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "fields",	required_argument,	NULL, 'f' },
		{ "layout",	no_argument,		NULL, 'l' },
		{ "json",	no_argument,		NULL, OPT_JSON },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL }
	};
	unsigned flags = 1U << BCH_SB_FIELD_members;
	struct printbuf err = PRINTBUF, out = PRINTBUF;
	struct bch_sb_handle h = { 0 };
	struct bch_devio *io;
	bool json = false;
	const char *path;
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":f:lh", longopts, NULL)) != -1)
		switch (opt) {
		case 'f':
			flags = (flags & BCH_SB_PRINT_LAYOUT) | parse_fields(optarg);
			break;
		case 'l':
			flags |= BCH_SB_PRINT_LAYOUT;
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'h':
			cmd_help(cmd_show_super_usage);
		default:
			cmd_bad_option(cmd_show_super_usage, opt, argv);
		}

	if (optind >= argc)
		cmd_usage_error(cmd_show_super_usage, "no device given");
	if (argc - optind > 1)
		cmd_usage_error(cmd_show_super_usage, "too many arguments: one device only");
	path = argv[optind];

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

	if (json) {
		bch_sb_to_json(&out, h.sb, flags, true);
		pr_char(&out, '\n');
	} else {
		bch_sb_to_text(&out, h.sb, flags);
	}
	fputs(printbuf_str(&out), stdout);
	printbuf_exit(&out);
	bch_sb_handle_free(&h);
	return fflush(stdout) ? EXIT_FAIL : EXIT_OK;
}
