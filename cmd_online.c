// SPDX-License-Identifier: GPL-2.0
/*
 * Shared by the online commands: see cmd_online.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd_online.h"
#include "cmds.h"
#include "libbcachefs/bkey/bkey_types.h"
#include "libbcachefs/admin/ctl_proto.h"
#include "libbcachefs/format/format.h"
#include "libbcachefs/dev/super.h"
#include "libbcachefs/format/ioctl.h"
#include "libbcachefs/util/util.h"

struct bch_handle *online_open(const char *arg, unsigned flags)
{
	struct printbuf err = PRINTBUF;
	struct bch_handle *h;

	if (bch_handle_open(arg, flags, &h, &err))
		online_die("%s", printbuf_str(&err));
	printbuf_exit(&err);
	return h;
}

struct bch_handle *online_open_dev(const char *dev, const char *fs_devs, unsigned flags,
				   unsigned *idx)
{
	struct printbuf err = PRINTBUF;
	struct bch_handle *h;

	if (bch_handle_open_dev(dev, fs_devs, flags, &h, idx, &err))
		online_die("%s", printbuf_str(&err));
	printbuf_exit(&err);
	return h;
}

void online_close(struct bch_handle *h)
{
	struct printbuf err = PRINTBUF;

	if (bch_handle_close(h, &err))
		online_die("writing the filesystem out failed: %s", printbuf_str(&err));
	printbuf_exit(&err);
}

bool online_verbose;

int online_opt_verbose(void *opts, const char *arg, struct printbuf *why)
{
	online_verbose = true;
	return 0;
}

noreturn void online_die(const char *fmt, ...)
{
	va_list args;

	fflush(stdout);
	fprintf(stderr, "%s: ", bch_cmd_name);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	exit(EXIT_FAIL);
}

void online_ioctl_err(struct bch_handle *h, const char *name, long ret)
{
	const char *why = printbuf_str(&h->msg);
	size_t n = strlen(why);

	while (n && why[n - 1] == '\n')
		n--;
	fflush(stdout);
	if (online_verbose)
		fprintf(stderr, "%s ioctl error: %s\n", name, strerror((int)-ret));
	if (n)
		fprintf(stderr, "%s: %.*s\n", bch_cmd_name, (int)n, why);
	else
		fprintf(stderr, "%s: %s\n", bch_cmd_name, strerror((int)-ret));
}

struct bch_sb *online_read_super(struct bch_handle *h)
{
	size_t size = 4096;

	for (;;) {
		void *buf = xcalloc(1, size);
		struct bch_ioctl_read_super rs = { .size = size, .sb = (uint64_t)(uintptr_t)buf };
		long ret = bch_ioctl(h, BCH_IOCTL_READ_SUPER, &rs);

		if (!ret && bch_sb_bytes(buf) <= size)
			return buf;
		free(buf);
		if (!ret)
			online_die("the superblock read back is malformed");
		if (ret != -ERANGE || size > (64U << 20)) {
			online_ioctl_err(h, "BCH_IOCTL_READ_SUPER", ret);
			exit(EXIT_FAIL);
		}
		size *= 2;
	}
}

/* ---- the progress loop ------------------------------------------------------ */

static volatile sig_atomic_t job_interrupted;

static void job_sigint(int sig)
{
	(void)sig;
	job_interrupted = 1;
}

static const char *phase_name(unsigned t)
{
	switch (t) {
	case BCH_DATA_JOURNAL:	return "journal";
	case BCH_DATA_BTREE:	return "btree";
	case BCH_DATA_USER:	return "data";
	default:		return "starting";
	}
}

/* "data extents 4097:128" / "btree" / "journal" */
static void pr_position(struct printbuf *out, const struct bch_ioctl_data_progress *p)
{
	pr_str(out, phase_name(p->data_type));
	if (p->data_type == BCH_DATA_BTREE || p->data_type == BCH_DATA_USER)
		pr_buf(out, " %s:%" PRIu64 ":%" PRIu64, bch_btree_id_str(p->btree_id),
		       le64_to_cpu(p->pos.inode), le64_to_cpu(p->pos.offset));
}

static unsigned pct(const struct bch_ioctl_data_progress *p)
{
	if (!p->sectors_total)
		return 0;
	return (unsigned)min_t(uint64_t, 100, p->sectors_done * 100 / p->sectors_total);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * What the job did, in its own units: a scrub verifies (and repairs
 * copies), the other jobs copy extents. A resumed job counts this run.
 */
static void job_summary(const struct bch_job_result *r, const char *what, double secs)
{
	struct printbuf size = PRINTBUF;
	bool scrub = strstr(what, "scrub") != NULL;
	uint64_t extents = scrub ? r->extents_seen : r->extents_moved;

	pr_human_sectors(&size, (int64_t)(scrub ? r->sectors_seen : r->sectors_moved));
	printf("%s: done in %.1f s", what, secs);
	if (r->resumed)
		printf(" (went on from a stopped run)");
	printf(": %" PRIu64 " extent%s (%s) %s", extents, extents == 1 ? "" : "s",
	       printbuf_str(&size), scrub ? "verified" : "copied");
	if (r->repaired)
		printf(", %" PRIu64 " repaired", r->repaired);
	if (r->errors)
		printf(", %" PRIu64 " problem%s not repaired", r->errors, r->errors == 1 ? "" : "s");
	printf("\n");
	printbuf_exit(&size);
}

int online_job_run(struct bch_handle *h, int fd, const char *what)
{
	struct sigaction sa = { .sa_handler = job_sigint }, old_int, old_term;
	struct bch_ioctl_data_event ev = { 0 }, last = { 0 };
	struct bch_job_result r = { 0 };
	struct printbuf line = PRINTBUF, report = PRINTBUF;
	bool tty = isatty(STDOUT_FILENO);
	double t0 = now_s(), t_last = t0, rate = 0;
	uint64_t done_last = 0;
	int next_tenth = 1, code = EXIT_OK;
	long n;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	job_interrupted = 0;

	for (;;) {
		struct timespec ts = { 0, tty ? 200 * 1000 * 1000 : 500 * 1000 * 1000 };
		double t;

		if (job_interrupted)
			break;
		n = bch_job_read(h, fd, &ev, sizeof(ev));
		if (n < 0) {
			if (n == -EINTR)
				continue;
			fprintf(stderr, "%s%s: lost the job (%s): the mount went away?\n",
				tty ? "\n" : "", bch_cmd_name, strerror((int)-n));
			code = EXIT_FAIL;
			goto out;
		}
		if (ev.type != BCH_DATA_EVENT_PROGRESS)
			continue;
		if (ev.p.data_type == BCH_DATA_PROGRESS_DONE)
			break;
		last = ev;
		t = now_s();
		if (t - t_last >= 1.0) {
			rate = (double)(ev.p.sectors_done - done_last) * 512 / (t - t_last);
			done_last = ev.p.sectors_done;
			t_last = t;
		}
		printbuf_reset(&line);
		pr_buf(&line, "%s: ", what);
		pr_position(&line, &ev.p);
		pr_buf(&line, "  %u%%", pct(&ev.p));
		if (rate > 0)
			pr_buf(&line, "  %.1f MiB/s", rate / (1 << 20));
		if (tty) {
			printf("\033[2K\r%s", printbuf_str(&line));
			fflush(stdout);
		} else if (ev.p.data_type == BCH_DATA_USER && (int)pct(&ev.p) >= next_tenth * 10) {
			printf("%s\n", printbuf_str(&line));
			next_tenth = (int)pct(&ev.p) / 10 + 1;
		}
		nanosleep(&ts, NULL);
	}
	if (tty)
		printf("\033[2K\r");
	if (job_interrupted) {
		printbuf_reset(&line);
		pr_position(&line, &last.p);
		close(fd);
		fd = -1;
		printf("%s: stopped at %s (%u%%); run it again to go on from there\n", what,
		       printbuf_str(&line), pct(&last.p));
		code = 130;
		goto out;
	}
	n = bch_job_result(h, fd, &r, &report);
	if (n == -EOPNOTSUPP) {
		printf("Done\n");
		goto out;
	}
	if (n < 0) {
		fprintf(stderr, "%s: cannot read the job's result: %s\n", bch_cmd_name,
			strerror((int)-n));
		code = EXIT_FAIL;
		goto out;
	}
	if (report.pos)
		fputs(printbuf_str(&report), r.ret || r.errors ? stderr : stdout);
	if (r.ret) {
		fprintf(stderr, "%s: %s failed: %s\n", bch_cmd_name, what, strerror(-r.ret));
		code = EXIT_FAIL;
	} else {
		job_summary(&r, what, now_s() - t0);
		if (r.errors)
			code = EXIT_FAIL;
	}
out:
	if (fd >= 0)
		close(fd);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	printbuf_exit(&line);
	printbuf_exit(&report);
	return code;
}
