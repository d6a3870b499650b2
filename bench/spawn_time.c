// SPDX-License-Identifier: GPL-2.0
/*
 * spawn_time RUNS CMD [ARG...]: runs CMD RUNS times (standard output and
 * error to /dev/null) and prints the best and the median wall time of a
 * run in microseconds, "best median", from just before fork() to just
 * after waitpid(). For commands of a few milliseconds: timing them from
 * the shell with date(1) adds the shell's fork and date's own start to
 * every run (about 0.8 ms on the machines here), which pulls every ratio
 * towards 1. Exit 1 if a run could not start or did not exit with 0-7
 * (fsck's codes; the others are errors of the command).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int runs = argc > 2 ? atoi(argv[1]) : 0;
	long long *t;

	if (runs < 1) {
		fprintf(stderr, "usage: spawn_time RUNS CMD [ARG...]\n");
		return 2;
	}
	t = calloc((size_t)runs, sizeof(*t));
	if (!t)
		return 1;
	for (int i = 0; i < runs; i++) {
		long long t0 = now_ns();
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (!pid) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0) {
			perror("waitpid");
			return 1;
		}
		t[i] = now_ns() - t0;
		if (!WIFEXITED(status) || WEXITSTATUS(status) > 7) {
			fprintf(stderr, "spawn_time: %s: exit status %d\n", argv[2], status);
			return 1;
		}
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp_ll);
	printf("%lld %lld\n", t[0] / 1000, t[runs / 2] / 1000);
	free(t);
	return 0;
}
