// SPDX-License-Identifier: GPL-2.0
/*
 * Commands as data (cmd_opts.h): getopt_long() driven by a command's
 * option table, and the --help text made from the same table.
 */
#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/util/util.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPT_LONG_BASE	256	/* getopt values of long-only options: base + index */
#define OPTS_MAX	64

static char typed[80];

const char *cmd_opt_typed(void)
{
	return typed;
}

static bool is_opt(const struct cmd_opt *o)
{
	return o->type != OPT_SECTION;
}

static unsigned nr_opts(const struct cmd_opt *o)
{
	unsigned n = 0;

	while (o[n].short_name || o[n].name)
		n++;
	return n;
}

/* "  -b, --btree=BTREE" (the left column of --help) */
static void opt_spec(struct printbuf *out, const struct cmd_opt *o)
{
	if (o->short_name)
		pr_buf(out, "  -%c%s", o->short_name, o->name ? ", " : "");
	else
		pr_str(out, "      ");
	if (o->name)
		pr_buf(out, "--%s", o->name);
	if (o->arg)
		pr_buf(out, "%s%s", o->name ? "=" : " ", o->arg);
}

void cmd_usage_to_text(struct printbuf *out, const struct cmd_def *def)
{
	unsigned col = def->help_col ?: 25;
	bool first = true;

	pr_buf(out, "Usage: bcachefs %s [OPTION]...%s%s\n%s\n", def->name,
	       def->args ? " " : "", def->args ?: "", def->about);
	if (def->needs == CMD_NEEDS_UNMOUNTED)
		pr_str(out, "The filesystem must not be mounted.\n");
	pr_char(out, '\n');
	for (const struct cmd_opt *o = def->opts; o->short_name || o->name; o++) {
		struct printbuf spec = PRINTBUF;
		const char *h = o->help ?: "";

		if (o->hidden)
			continue;
		if (!is_opt(o)) {
			pr_buf(out, "%s%s\n", first ? "" : "\n", o->help);
			first = false;
			continue;
		}
		first = false;
		opt_spec(&spec, o);
		pr_str(out, printbuf_str(&spec));
		/* the help on the same line, at its column or two spaces after */
		for (size_t n = spec.pos; n < col; n++)
			pr_char(out, ' ');
		if (spec.pos + 2 > col)
			pr_str(out, "  ");
		printbuf_exit(&spec);
		while (*h) {
			size_t len = strcspn(h, "\n");

			pr_buf(out, "%.*s\n", (int)len, h);
			h += len + !!h[len];
			if (*h)
				for (unsigned n = 0; n < col; n++)
					pr_char(out, ' ');
		}
		if (!o->help || !*o->help)
			pr_char(out, '\n');
	}
	if (def->footer)
		pr_buf(out, "\n%s", def->footer);
}

static noreturn void print_help(const struct cmd_def *def)
{
	struct printbuf out = PRINTBUF;

	cmd_usage_to_text(&out, def);
	fputs(printbuf_str(&out), stdout);
	printbuf_exit(&out);
	exit(EXIT_OK);
}

static void take(const struct cmd_def *def, const struct cmd_opt *o, void *opts,
		 const char *arg)
{
	char *field = (char *)opts + o->off;
	struct printbuf why = PRINTBUF;

	switch (o->type) {
	case OPT_BOOL:
		*(bool *)field = true;
		break;
	case OPT_COUNT:
		(*(int *)field)++;
		break;
	case OPT_STR:
		*(const char **)field = arg;
		break;
	case OPT_FN:
		if (o->fn(opts, arg, &why))
			cmd_usage_error(NULL, "%s", why.pos ? printbuf_str(&why) : "bad option value");
		break;
	case OPT_PARSE:
		if (o->parse(typed, arg, (unsigned *)field, &why))
			cmd_usage_error(NULL, "%s", why.pos ? printbuf_str(&why) : "bad option value");
		break;
	case OPT_SECTION:
		break;
	case OPT_HELP:
		print_help(def);
	case OPT_VERSION:
		cmd_print_version();
	}
	printbuf_exit(&why);
}

static void arg_in_order(const struct cmd_def *def, void *opts, const char *arg)
{
	struct printbuf why = PRINTBUF;

	if (def->arg_fn(opts, arg, &why))
		cmd_usage_error(NULL, "%s", why.pos ? printbuf_str(&why) : "bad argument");
	printbuf_exit(&why);
}

int cmd_parse(const struct cmd_def *def, void *opts, int argc, char *argv[])
{
	unsigned n = nr_opts(def->opts), nr_args;
	struct option longopts[OPTS_MAX + 1];
	char shorts[3 * OPTS_MAX + 2], *s = shorts;
	unsigned nl = 0;
	int opt, longidx;

	if (n > OPTS_MAX)
		die("%s: too many options in its table", def->name);
	if (def->arg_fn)
		*s++ = '-';	/* arguments in order, as option 1 */
	*s++ = ':';	/* getopt says nothing: cmd_bad_option() does */
	for (unsigned i = 0; i < n; i++) {
		const struct cmd_opt *o = &def->opts[i];

		if (!is_opt(o))
			continue;
		if (o->short_name) {
			*s++ = o->short_name;
			if (o->arg)
				*s++ = ':';
		}
		if (o->name)
			longopts[nl++] = (struct option) {
				.name		= o->name,
				.has_arg	= o->arg ? required_argument : no_argument,
				.val		= o->short_name ?: OPT_LONG_BASE + (int)i,
			};
	}
	*s = '\0';
	longopts[nl] = (struct option) { 0 };

	opterr = 0;
	optind = 1;
	while (longidx = -1,
	       (opt = getopt_long(argc, argv, shorts, longopts, &longidx)) != -1) {
		const struct cmd_opt *o = NULL;

		if (opt == 1) {		/* an argument, in order (def->arg_fn) */
			arg_in_order(def, opts, optarg);
			continue;
		}
		if (longidx >= 0)
			snprintf(typed, sizeof(typed), "--%s", longopts[longidx].name);
		else
			snprintf(typed, sizeof(typed), "-%c", opt);
		if (opt >= OPT_LONG_BASE && opt < OPT_LONG_BASE + (int)n)
			o = &def->opts[opt - OPT_LONG_BASE];
		else if (opt != '?' && opt != ':')
			for (unsigned i = 0; i < n && !o; i++)
				if (def->opts[i].short_name == opt)
					o = &def->opts[i];
		if (!o)
			cmd_bad_option(NULL, opt, argv);
		take(def, o, opts, optarg);
	}

	if (def->arg_fn) {	/* words after "--" are arguments too */
		for (; optind < argc; optind++)
			arg_in_order(def, opts, argv[optind]);
		return optind;
	}
	nr_args = (unsigned)(argc - optind);
	if (def->no_args && nr_args)
		cmd_usage_error(NULL, "unexpected argument '%s'%s", argv[optind],
				def->too_many_msg ?: "");
	if (nr_args < def->min_args)
		cmd_usage_error(NULL, "%s", def->no_args_msg ?: "missing argument");
	if (def->max_args && nr_args > def->max_args)
		cmd_usage_error(NULL, "%s", def->too_many_msg ?: "too many arguments");
	return optind;
}
