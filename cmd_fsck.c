// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs fsck: check a filesystem and (with -y/-p) repair it.
 * Exit status follows fsck(8): 0 clean, 1 errors corrected, 4 errors left
 * uncorrected, 8 operational error, 16 usage error, 32 cancelled.
 */
#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/btree/btree_update.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/fs/fs.h"
#include "libbcachefs/format/format.h"
#include "libbcachefs/fsck/fsck.h"
#include "libbcachefs/fs/init.h"
#include "libbcachefs/fsck/problems.h"
#include "libbcachefs/util/util.h"
#include "libbcachefs/dev/mounted.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

enum {
	FSCK_EXIT_OK		= 0,
	FSCK_EXIT_FIXED		= 1,
	FSCK_EXIT_LEFT		= 4,
	FSCK_EXIT_ERROR		= 8,
	FSCK_EXIT_USAGE		= 16,
	FSCK_EXIT_CANCELLED	= 32,
};

struct fsck_cli {
	bool	json;
	bool	verbose;
	char	*asked;		/* the question asked last: its report is not repeated */
};

static void fsck_report(void *priv, enum bch_problem p, const char *msg)
{
	struct fsck_cli *cli = priv;

	/* the question just asked said it already, and the answer */
	if (cli->asked && !strncmp(msg, cli->asked, strlen(cli->asked))) {
		free(cli->asked);
		cli->asked = NULL;
		return;
	}
	/* with --json stdout carries the summary only */
	fprintf(cli->json ? stderr : stdout, "%s\n", msg);
}

/* The terminal's settings while a key is read (restored on Ctrl-C). */
static struct termios tty_saved;
static volatile sig_atomic_t tty_raw;

/* Ctrl-C, at a question or not: cancelled, as fsck(8) says (32, not 130). */
static void fsck_sigint(int sig)
{
	static const char msg[] = "\nbcachefs fsck: cancelled\n";

	(void)sig;
	if (tty_raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &tty_saved);
	/* nothing to do if this fails: we are leaving */
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(FSCK_EXIT_CANCELLED);
}

/*
 * One answer key: on a terminal without waiting for Enter (Enter itself is
 * '\n'); otherwise the first character of a line. -1: end of input (Ctrl-D).
 */
static int read_key(void)
{
	struct termios raw;
	unsigned char c;
	ssize_t r;

	if (!tcgetattr(STDIN_FILENO, &tty_saved)) {
		raw = tty_saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		tty_raw = 1;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
		do
			r = read(STDIN_FILENO, &c, 1);
		while (r < 0 && errno == EINTR);
		tcsetattr(STDIN_FILENO, TCSANOW, &tty_saved);
		tty_raw = 0;
		/* without ICANON, Ctrl-D is a byte */
		return r == 1 && c != 4 ? c : -1;
	}

	int ch = getchar(), first = ch;

	while (ch != EOF && ch != '\n')
		ch = getchar();
	return first == EOF ? -1 : first;
}

static enum fsck_answer fsck_ask(void *priv, enum bch_problem p, const char *msg)
{
	struct fsck_cli *cli = priv;

	free(cli->asked);
	cli->asked = xstrdup(msg);
	for (;;) {
		int c;

		printf("%s: fix? (y)es, (n)o, (a)ll of this kind, (q)uit <y> ", msg);
		fflush(stdout);
		c = read_key();
		switch (c) {
		case -1:
			printf("end of input: quit\n");
			return FSCK_ANSWER_QUIT;
		case '\n': case '\r': case 'y': case 'Y':
			printf("yes\n");
			return FSCK_ANSWER_YES;
		case 'n': case 'N':
			printf("no\n");
			return FSCK_ANSWER_NO;
		case 'a': case 'A':
			printf("yes to all\n");
			return FSCK_ANSWER_ALL;
		case 'q': case 'Q':
			printf("quit\n");
			return FSCK_ANSWER_QUIT;
		default:
			printf("%c\nplease answer y, n, a or q (Enter: y)\n", isprint(c) ? c : '?');
		}
	}
}

static void fsck_progress(void *priv, const char *msg)
{
	struct fsck_cli *cli = priv;

	if (cli->verbose)
		fprintf(cli->json ? stderr : stdout, "%s\n", msg);
}

static int fsck_exit_code(const struct fsck_state *s)
{
	int ret = 0;

	if (s->nr_fixed)
		ret |= FSCK_EXIT_FIXED;
	if (fsck_nr_left(s))
		ret |= FSCK_EXIT_LEFT;
	if (s->cancelled)
		ret |= FSCK_EXIT_CANCELLED;
	return ret;
}

/*
 * A filesystem whose superblock says it was never initialised (format
 * --no_initialize, or the 2018 format): problem sb_not_initialized. When
 * it is to be fixed, reopen read-write and run the first-mount
 * initialisation (doc/engine.md §13). Returns 0 when @c is initialised (the
 * passes can run), 1 when it is left uninitialised, or an error (then @c
 * is closed and NULL, the message printed).
 */
static int fsck_initialize(char **devs, int nr, struct bch_fs_opts *opts,
			   struct fsck_state *s, struct bch_fs **c)
{
	struct printbuf err = PRINTBUF;
	int ret;

	if (BCH_SB_INITIALIZED((*c)->sb))
		return 0;
	if (!fsck_fix(s, PROB_sb_not_initialized,
		      "%s: filesystem was never initialized (formatted with --no_initialize?)",
		      devs[0]))
		return 1;

	bch_fs_close(*c);
	*c = NULL;
	opts->read_only = false;
	opts->degraded = false;		/* initialisation needs every member */
	ret = bch_fs_open(devs, (unsigned)nr, opts, c, &err);
	if (!ret)
		ret = bch_fs_initialize(*c, &err);
	if (ret) {
		fprintf(stderr, "bcachefs fsck: initializing the filesystem failed: %s\n%s",
			bch_err_str(ret), printbuf_str(&err));
		if (*c)
			bch_fs_close(*c);
		*c = NULL;
		/* it was counted as fixed: it is not */
		s->fixed[PROB_sb_not_initialized]--;
		s->nr_fixed--;
	}
	printbuf_exit(&err);
	return ret;
}

/* The start of the JSON summary: the device, the exit code, members missing. */
static void fsck_json_begin(struct json *j, struct printbuf *out, const char *dev, int code,
			    unsigned nr_missing)
{
	json_init(j, out, true);
	json_obj_begin(j, NULL);
	json_str(j, "device", dev);
	json_u64(j, "exit_code", code);
	json_u64(j, "members_missing", nr_missing);
}

/* What the fast path prints: clean, and that the nodes were not read. */
static int fsck_clean_skipped(const char *dev, bool json)
{
	struct printbuf out = PRINTBUF;

	if (json) {
		struct json j;

		fsck_json_begin(&j, &out, dev, FSCK_EXIT_OK, 0);
		json_bool(&j, "checked", false);
		json_str(&j, "reason", "unmounted cleanly (-f forces a check)");
		json_arr_begin(&j, "problems");
		json_arr_end(&j);
		json_u64(&j, "found", 0);
		json_u64(&j, "fixed", 0);
		json_u64(&j, "left", 0);
		json_obj_end(&j);
	} else {
		pr_buf(&out, "%s: clean (unmounted cleanly: not checked, -f forces a check)\n", dev);
	}
	fputs(printbuf_str(&out), stdout);
	printbuf_exit(&out);
	return FSCK_EXIT_OK;
}

/* What the command line says. */
struct fsck_args {
	enum fsck_mode		mode;
	char			mode_opt;	/* the option that set @mode: 'n', 'p', 'a', 'y' or 0 */
	bool			force;
	bool			json;
	bool			scan_nodes;
	bool			no_scan_nodes;
	struct bch_fs_opts	fs;
};

/*
 * -n, -p (-a) and -y: one of them at most, as in e2fsck (the last one
 * winning let `fsck -n -y` repair).
 */
static int opt_mode(void *opts, const char *arg, struct printbuf *why)
{
	struct fsck_args *a = opts;
	char opt = cmd_opt_typed()[1];
	enum fsck_mode m = opt == 'n' ? FSCK_NO : opt == 'y' ? FSCK_YES : FSCK_PREEN;

	(void)arg;
	if (a->mode_opt && m != a->mode) {
		pr_buf(why, "-%c and -%c exclude each other: give one of -n, -p and -y",
		       a->mode_opt, opt);
		return -1;
	}
	a->mode_opt = opt;
	a->mode = m;
	return 0;
}

static int opt_verbose(void *opts, const char *arg, struct printbuf *why)
{
	(void)arg; (void)why;
	((struct fsck_args *)opts)->fs.verbose++;
	return 0;
}

static const struct cmd_opt fsck_opts[] = {
	CMD_OPT_FN('n', NULL, NULL, "check only: open the devices read-only, change nothing", opt_mode),
	CMD_OPT_FN('p', NULL, NULL, "repair what is safe to repair without asking (for boot)", opt_mode),
	CMD_OPT_FN('a', NULL, NULL, "the same as -p", opt_mode),
	CMD_OPT_FN('y', NULL, NULL, "repair everything that can be repaired", opt_mode),
	CMD_OPT_BOOL('f', NULL, "force a full check: without it, -n and -p stop at a\n"
		     "filesystem that was unmounted cleanly (superblock\n"
		     "marked clean, nothing in the journal to replay)", struct fsck_args, force),
	CMD_OPT_FN('v', NULL, NULL, "verbose: say what each pass does", opt_verbose),
	CMD_OPT_DEGRADED("check even when member devices are missing (each is\n"
			 "named; what is kept on it is not checked)", struct fsck_args, fs),
	CMD_OPT_BOOL(0, "json", "print a JSON summary of the problems found on stdout",
		     struct fsck_args, json),
	CMD_OPT_BOOL(0, "scan-nodes", "scan the devices for btree nodes and say what was found\n"
		     "(done anyway when a root or interior node is lost, or the\n"
		     "journal gives no roots: lost nodes are rebuilt from the\n"
		     "newest leaves found)", struct fsck_args, scan_nodes),
	CMD_OPT_BOOL(0, "no-scan-nodes", "never scan: a node that cannot be read, keys under lost\n"
		     "pointers and a btree without a root are reported and left\n"
		     "as they are, nothing more is repaired and the later passes\n"
		     "are not run (exit 4)", struct fsck_args, no_scan_nodes),
	CMD_OPT_PASSPHRASE_FILE(struct fsck_args, fs),
	CMD_OPT_VERSION,
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def cmd_fsck_def = {
	.name		= "fsck",
	.args		= "DEVICE...",
	.about		= "Check a bcachefs filesystem (all its member devices), and repair it.",
	.opts		= fsck_opts,
	.footer		= "Without -n, -p or -y, fsck asks before each repair, one key on a terminal:\n"
			  "y (or Enter) = yes, n = no, a = yes to all problems of this kind, q = quit.\n"
			  "Ctrl-C cancels (exit status 32).\n"
			  "\n"
			  "Exit status (fsck(8)): 0 no errors, 1 errors corrected, 4 errors left\n"
			  "uncorrected, 8 operational error, 16 usage error, 32 cancelled.\n",
	.min_args	= 1,
	.no_args_msg	= "no device given",
};

/*
 * Each device not mounted or in use (waited for when it was just
 * unmounted, its mount process still writing): false, said why, when one
 * is and @mode would repair; with -n a warning only.
 */
static bool fsck_devs_not_mounted(char *devs[], int nr, enum fsck_mode mode)
{
	for (int i = 0; i < nr; i++) {
		int ret = dev_mounted_check_wait(devs[i], DEV_UNMOUNT_WAIT_MS);

		if (ret > 0 && mode != FSCK_NO) {
			fprintf(stderr, "bcachefs fsck: %s is mounted or in use: refusing to repair it "
				"(unmount it first, or check only with -n)\n", devs[i]);
			return false;
		}
		if (ret > 0)
			fprintf(stderr, "bcachefs fsck: warning: %s is mounted or in use: "
				"results may be inconsistent\n", devs[i]);
	}
	return true;
}

/*
 * The check of the open filesystem @c, repairs allowed unless @mode is -n
 * (the engine starts at the first repair: a clean check costs no more
 * than -n), then the repairs written out; a failed write sets
 * *@code_extra. The result of bch_fsck_run().
 */
static int fsck_run(struct bch_fs *c, struct fsck_state *s, enum fsck_mode mode,
		    struct fsck_cli *cli, int *code_extra, struct printbuf *err)
{
	int ret;

	s->read_only = true;
	if (mode != FSCK_NO) {
		int r = bch_fs_rw_on_demand(c, err);

		if (r)
			fprintf(stderr, "bcachefs fsck: cannot write the filesystem (%s): checking only\n%s",
				bch_err_str(r), printbuf_str(err));
		else
			s->read_only = false;
		printbuf_reset(err);
	}
	ret = bch_fsck_run(c, s, fsck_progress, cli);
	/* (a start that worked may have said things there too) */
	if (c->rw_start_err.pos && !c->rw)
		fprintf(stderr, "bcachefs fsck: the repairs could not start: %s",
			printbuf_str(&c->rw_start_err));
	/* the repairs go into the btrees, then the filesystem is marked clean */
	if (c->rw && bch_fs_rw_stop(c, err)) {
		fprintf(stderr, "bcachefs fsck: writing the repairs failed: %s", printbuf_str(err));
		if (s->nr_fixed)
			fprintf(stderr, "bcachefs fsck: the repairs committed so far are in the journal\n");
		*code_extra = FSCK_EXIT_ERROR;
	}
	return ret;
}

/* The summary on stdout: the problems by kind, then a line (or JSON). */
static void fsck_summary_print(struct fsck_state *s, const char *dev, int code,
			       unsigned nr_missing, bool json)
{
	struct printbuf out = PRINTBUF;

	if (json) {
		struct json j;

		fsck_json_begin(&j, &out, dev, code, nr_missing);
		fsck_summary_to_json(&j, s);
		json_obj_end(&j);
	} else {
		fsck_summary_to_text(&out, s);
		if (!s->nr_seen)
			pr_buf(&out, "%s: clean", dev);
		else
			pr_buf(&out, "%s: %lu problem%s found, %lu fixed, %lu left", dev,
			       s->nr_seen, s->nr_seen == 1 ? "" : "s", s->nr_fixed, fsck_nr_left(s));
		if (nr_missing)
			pr_buf(&out, " (degraded: %u member%s missing, not checked)",
			       nr_missing, nr_missing == 1 ? "" : "s");
		pr_char(&out, '\n');
	}
	fputs(printbuf_str(&out), stdout);
	printbuf_exit(&out);
}

int cmd_fsck(int argc, char *argv[])
{
	struct fsck_args a = { .mode = FSCK_ASK };
	struct fsck_cli cli = { 0 };
	struct bch_fs_opts *opts = &a.fs;
	enum fsck_mode mode;
	struct fsck_state s;
	struct printbuf err = PRINTBUF;
	struct bch_fs *c = NULL;
	int ret, code, code_extra = 0;
	unsigned nr_missing = 0;

	/*
	 * Node buffers and key arrays come and go at every node: from the
	 * heap, reused once freed, instead of a fresh mapping (page faults)
	 * each. Not bch_heap_tune(): its huge pages cost a check more to
	 * clear than they save, and 2 MiB at once.
	 */
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 8 << 20);
	mallopt(M_ARENA_MAX, 1);	/* the read-ahead thread shares the heap (fsck_quick.c) */
	{
		int i = cmd_parse(&cmd_fsck_def, &a, argc, argv);

		argc -= i;
		argv += i;
	}
	if (a.scan_nodes && a.no_scan_nodes)
		cmd_usage_error(NULL, "--scan-nodes and --no-scan-nodes exclude each other");
	mode = a.mode;
	cli.json = a.json;
	cli.verbose = opts->verbose > 0;

	if (mode == FSCK_ASK && !isatty(STDIN_FILENO)) {
		/* nobody to ask: behave like -n, and say so */
		fprintf(stderr, "bcachefs fsck: standard input is not a terminal: checking only (use -p or -y to repair)\n");
		mode = FSCK_NO;
	}

	if (!fsck_devs_not_mounted(argv, argc, mode))
		return FSCK_EXIT_ERROR;

	signal(SIGINT, fsck_sigint);
	fsck_state_init(&s, mode, &(struct fsck_ops) { fsck_report, fsck_ask, &cli });
	s.scan_nodes = a.scan_nodes;
	s.no_scan_nodes = a.no_scan_nodes;
	opts->fsck = &s;
	opts->ask_passphrase = isatty(STDIN_FILENO) && !opts->passphrase_file;
	/* -n opens the devices read-only; every other mode may repair */
	opts->read_only = mode == FSCK_NO;

	ret = bch_fs_open(argv, argc, opts, &c, &err);
	if (ret) {
		cmd_open_failed(argv[0], ret, &err,
				ret == -BCH_ERR_dev_read_only ? " (fsck -n checks it without writing)"
							      : cmd_missing_hint(argv, argc, opts, ret, &err));
		printbuf_exit(&err);
		return FSCK_EXIT_ERROR;
	}
	nr_missing = cmd_note_missing(c);
	/* what the open found (backup superblock used, bad journal entries) */
	bch_fsck_report_open(&s, &err);

	/*
	 * e2fsck's fast path: -n and -p (the boot check) do not walk a
	 * filesystem that was unmounted cleanly, unless -f is given; -y and
	 * the questions always check.
	 */
	if (!a.force && !a.scan_nodes && (a.mode_opt == 'n' || a.mode_opt == 'p' || a.mode_opt == 'a') &&
	    !s.nr_seen && !nr_missing && bch_fsck_marked_clean(c)) {
		bch_fs_close(c);
		printbuf_exit(&err);
		return fsck_clean_skipped(argv[0], cli.json);
	}

	ret = fsck_initialize(argv, argc, opts, &s, &c);
	if (ret > 0) {
		ret = 0;		/* uninitialised and left so: nothing to check */
	} else if (!ret) {
		ret = fsck_run(c, &s, mode, &cli, &code_extra, &err);
	}
	if (c)
		bch_fs_close(c);

	code = fsck_exit_code(&s) | code_extra;
	if (s.nr_repair_failed)
		code |= FSCK_EXIT_ERROR;
	if (ret < 0) {
		fprintf(stderr, "bcachefs fsck: check stopped: %s\n", bch_err_str(ret));
		code |= FSCK_EXIT_ERROR;
	}

	fsck_summary_print(&s, argv[0], code, nr_missing, cli.json);
	printbuf_exit(&err);
	free(cli.asked);
	return code;
}
