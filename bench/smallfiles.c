/*
 * smallfiles DIR NDIRS NFILES: create NFILES small files (0-4095 bytes,
 * 2 KiB on average) spread over NDIRS new folders in DIR, the way an
 * unpacker would: mkdir, then open/write/close per file. For bench/50-rw.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	static char data[4096];
	char p[4096];
	unsigned ndirs, nfiles;

	if (argc != 4 || !(ndirs = atoi(argv[2])) || !(nfiles = atoi(argv[3]))) {
		fprintf(stderr, "usage: smallfiles DIR NDIRS NFILES\n");
		return 2;
	}
	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = 'a' + (i * 7) % 26;
	for (unsigned d = 0; d < ndirs; d++) {
		snprintf(p, sizeof(p), "%s/d%u", argv[1], d);
		if (mkdir(p, 0755)) {
			fprintf(stderr, "smallfiles: mkdir %s: %s\n", p, strerror(errno));
			return 1;
		}
	}
	for (unsigned i = 0; i < nfiles; i++) {
		size_t len = (i * 7919u) % 4096;
		int fd;

		snprintf(p, sizeof(p), "%s/d%u/file-%u", argv[1], i % ndirs, i);
		fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd)) {
			fprintf(stderr, "smallfiles: %s: %s\n", p, strerror(errno));
			return 1;
		}
	}
	return 0;
}
