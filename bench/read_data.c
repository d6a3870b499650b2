// SPDX-License-Identifier: GPL-2.0
/*
 * read_data: read every allocated byte of an image file once (SEEK_DATA /
 * SEEK_HOLE, 8 MiB reads into one buffer) and print "BYTES NS": the
 * floor the node scan is measured against (bench/50-node-scan.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK	(8U << 20)

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	uint64_t total = 0, sum = 0, ns;
	off_t off = 0, end;
	char *buf = malloc(CHUNK);
	int fd;

	if (argc != 2 || !buf || (fd = open(argv[1], O_RDONLY)) < 0) {
		fprintf(stderr, "usage: read_data IMAGE (%s)\n", strerror(errno));
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((off = lseek(fd, off, SEEK_DATA)) >= 0) {
		end = lseek(fd, off, SEEK_HOLE);
		while (off < end) {
			size_t n = end - off < (off_t)CHUNK ? (size_t)(end - off) : CHUNK;
			ssize_t r = pread(fd, buf, n, off);

			if (r <= 0) {
				perror("pread");
				return 1;
			}
			sum += (unsigned char)buf[r - 1];	/* touch the data */
			total += (uint64_t)r;
			off += r;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ULL + (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
	printf("%" PRIu64 " %" PRIu64 "\n", total, ns);
	if (sum == 1)		/* the data was looked at */
		fprintf(stderr, "%s", "");
	close(fd);
	free(buf);
	return 0;
}
