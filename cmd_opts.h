/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Commands as data: a command declares its options once, in a table of
 * struct cmd_opt (name, argument, help, what it sets), and its shape in a
 * struct cmd_def (arguments, what the filesystem must be). From that one
 * table come the option parsing (cmd_parse()), the --help text
 * (cmd_usage_to_text()) and, through --help, the man page's option lists
 * (tests/cli/test_man_options.sh checks that every option of --help is in
 * the command's section of man/bcachefs.8 and the other way round).
 *
 *	struct show_super_args { bool json; unsigned fields; };
 *	static const struct cmd_opt opts[] = {
 *		CMD_OPT_BOOL(0, "json", "print one JSON object instead of text",
 *			     struct show_super_args, json),
 *		...
 *		CMD_OPT_HELP,
 *		CMD_OPT_END
 *	};
 *	const struct cmd_def cmd_show_super_def = { "show-super", "DEVICE", ... };
 *
 *	int i = cmd_parse(&cmd_show_super_def, &args, argc, argv);
 *	// argv[i..argc) are the arguments, their number already checked
 */
#ifndef BCH_CMD_OPTS_H
#define BCH_CMD_OPTS_H

#include <stdbool.h>
#include <stddef.h>

struct printbuf;

enum cmd_opt_type {
	OPT_BOOL,	/* bool at @off: true */
	OPT_COUNT,	/* int at @off: one more each time (-v -v) */
	OPT_STR,	/* const char * at @off: the value */
	OPT_FN,		/* @fn parses the value (or is called with NULL for a flag) */
	OPT_PARSE,	/* @parse(typed name, value, unsigned at @off) */
	OPT_SECTION,	/* not an option: a heading of --help (@help) */
	OPT_HELP,	/* print --help, exit 0 */
	OPT_VERSION,	/* print the version, exit 0 */
};

struct cmd_opt {
	char		short_name;	/* 'n', or 0: long name only */
	const char	*name;		/* "degraded", or NULL: short name only */
	const char	*arg;		/* "FILE": takes a value; NULL: a flag */
	/* one line per '\n', shown under the others' help column */
	const char	*help;
	enum cmd_opt_type type;
	size_t		off;		/* OPT_BOOL/COUNT/STR: offset in the command's options */
	/*
	 * OPT_FN: take @arg (NULL for a flag) into @opts; non-zero: a usage
	 * error, the reason in @why ("bad btree 'x'").
	 */
	int		(*fn)(void *opts, const char *arg, struct printbuf *why);
	/* OPT_PARSE: the library's parser of this kind of value (mkfs.h's) */
	int		(*parse)(const char *opt, const char *arg, unsigned *ret,
				 struct printbuf *why);
	bool		hidden;		/* accepted (another spelling), not listed by --help */
};

/* Table entries (designated, so that -Wextra sees every field set). */
#define CMD_OPT_BOOL(_s, _l, _help, _T, _f)				\
	{ .short_name = _s, .name = _l, .help = _help, .type = OPT_BOOL,	\
	  .off = offsetof(_T, _f) }
#define CMD_OPT_COUNT(_s, _l, _help, _T, _f)				\
	{ .short_name = _s, .name = _l, .help = _help, .type = OPT_COUNT,	\
	  .off = offsetof(_T, _f) }
#define CMD_OPT_STR(_s, _l, _arg, _help, _T, _f)			\
	{ .short_name = _s, .name = _l, .arg = _arg, .help = _help,	\
	  .type = OPT_STR, .off = offsetof(_T, _f) }
#define CMD_OPT_FN(_s, _l, _arg, _help, _fn)				\
	{ .short_name = _s, .name = _l, .arg = _arg, .help = _help,	\
	  .type = OPT_FN, .fn = _fn }
#define CMD_OPT_PARSE(_s, _l, _arg, _help, _parse, _T, _f)		\
	{ .short_name = _s, .name = _l, .arg = _arg, .help = _help,	\
	  .type = OPT_PARSE, .parse = _parse, .off = offsetof(_T, _f) }
#define CMD_OPT_SECTION(_heading)					\
	{ .name = "", .help = _heading, .type = OPT_SECTION }
#define CMD_OPT_HELP							\
	{ .short_name = 'h', .name = "help",				\
	  .help = "display this help and exit", .type = OPT_HELP }
#define CMD_OPT_VERSION							\
	{ .short_name = 'V', .name = "version",				\
	  .help = "display the version and exit", .type = OPT_VERSION }
#define CMD_OPT_END	{ .short_name = 0 }

/* Options many commands share, setting a struct bch_fs_opts member @_fo of _T. */
#define CMD_OPT_DEGRADED(_what, _T, _fo)				\
	CMD_OPT_BOOL(0, "degraded", _what, _T, _fo.degraded)
#define CMD_OPT_PASSPHRASE_FILE(_T, _fo)				\
	CMD_OPT_STR(0, "passphrase-file", "FILE",			\
		    "read the passphrase of an encrypted filesystem\n"	\
		    "from FILE (- for standard input)", _T, _fo.passphrase_file), \
	{ .name = "passphrase_file", .arg = "FILE", .type = OPT_STR,	\
	  .off = offsetof(_T, _fo.passphrase_file), .hidden = true }

/* What the filesystem must be for the command (said by --help, checked by the command). */
enum cmd_needs {
	CMD_NEEDS_ANY,		/* read-only use of a device, mounted or not */
	CMD_NEEDS_UNMOUNTED,	/* the devices must not be mounted or in use */
	CMD_NEEDS_MOUNTED,	/* a mounted filesystem (or --fs DEV:DEV offline) */
};

struct cmd_def {
	const char		*name;		/* "list", "device add" */
	const char		*args;		/* "DEVICE...", shown after [OPTION]... */
	const char		*about;		/* what it does, one or more lines */
	const struct cmd_opt	*opts;		/* ends with { 0 } */
	const char		*footer;	/* after the options, or NULL */
	unsigned		min_args;	/* arguments after the options */
	unsigned		max_args;	/* 0: no limit (unless no_args) */
	bool			no_args;	/* none at all: "unexpected argument 'X'" + too_many_msg */
	const char		*no_args_msg;	/* usage error when fewer (default "missing argument") */
	const char		*too_many_msg;	/* usage error when more (default "too many arguments") */
	enum cmd_needs		needs;
	/*
	 * Arguments handed over in order, between the options (format: device
	 * options apply to the devices after them), instead of left at the end.
	 */
	int			(*arg_fn)(void *opts, const char *arg, struct printbuf *why);
	unsigned		help_col;	/* column of the help text (default 25) */
};

/*
 * Parse the options of @argv by @def's table into @opts; -h/--help and
 * -V/--version (when the table has them) print and exit 0; a bad option,
 * a bad value or a wrong number of arguments is a usage error (exit 16).
 * Returns the index of the first argument.
 */
int cmd_parse(const struct cmd_def *def, void *opts, int argc, char *argv[]);

/* The option being parsed as the user typed it ("--block_size", "-b"), for messages. */
const char *cmd_opt_typed(void);

/* The --help text of @def. */
void cmd_usage_to_text(struct printbuf *out, const struct cmd_def *def);

#endif
