// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of a FUSE read path on this machine: a server that does the
 * least any FUSE server reading from an image must do, and nothing else.
 * It serves one file, "big", whose bytes are [OFFSET, OFFSET + LENGTH) of
 * IMAGE: each read request is one pread() of the image into a buffer and
 * one reply from it. No btree, no checksum, no read-ahead. Mounted the way
 * `bcachefs mount` mounts (low-level API, one thread, direct I/O, 1 MiB
 * requests), so that bench/20-mount-read.sh can show how much of the gap to
 * a raw read is FUSE's own, in the same run.
 *
 * With a fifth argument "rw" it is the floor of a write path too (for
 * bench/50-rw.sh): "big" is writable, each write request is one pwrite()
 * of the request's bytes into the image (1 MiB requests, no cache), and
 * fsync is one fdatasync() of the image.
 *
 *   fuse_floor IMAGE OFFSET LENGTH MOUNTPOINT [rw]  (returns once mounted;
 *                                                    fusermount3 -u to stop)
 */
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FLOOR_MAX_READ	(1U << 20)
#define FLOOR_INO	2

static int image_fd;
static int writable;
static off_t image_offset, file_size;
static char *buf;

static void floor_stat(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | (writable ? 0644 : 0444);
		st->st_nlink = 1;
		st->st_size = file_size;
	}
}

static void floor_init(void *data, struct fuse_conn_info *conn)
{
	conn->max_read = FLOOR_MAX_READ;
	if (writable) {
		conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
		conn->max_write = FLOOR_MAX_READ;
	}
}

static void floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { .ino = FLOOR_INO, .attr_timeout = 3600, .entry_timeout = 3600 };

	if (parent != FUSE_ROOT_ID || strcmp(name, "big")) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	floor_stat(FLOOR_INO, &e.attr);
	fuse_reply_entry(req, &e);
}

static void floor_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	if (ino != FUSE_ROOT_ID && ino != FLOOR_INO) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	floor_stat(ino, &st);
	fuse_reply_attr(req, &st, 3600);
}

static void floor_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

static void floor_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	ssize_t n;

	if (off >= file_size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > FLOOR_MAX_READ)
		size = FLOOR_MAX_READ;
	if ((off_t)size > file_size - off)
		size = (size_t)(file_size - off);
	n = pread(image_fd, buf, size, image_offset + off);
	if (n < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

static void floor_write(fuse_req_t req, fuse_ino_t ino, const char *data, size_t size,
			off_t off, struct fuse_file_info *fi)
{
	ssize_t n = pwrite(image_fd, data, size, image_offset + off);

	if (n < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	if (off + n > file_size)
		file_size = off + n;
	fuse_reply_write(req, (size_t)n);
}

static void floor_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			  struct fuse_file_info *fi)
{
	struct stat st;

	if (to_set & FUSE_SET_ATTR_SIZE)
		file_size = attr->st_size;	/* O_TRUNC of dd: nothing else to do */
	floor_stat(ino, &st);
	fuse_reply_attr(req, &st, 3600);
}

static void floor_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	fuse_reply_err(req, fdatasync(image_fd) ? errno : 0);
}

static const struct fuse_lowlevel_ops floor_ops = {
	.write		= floor_write,
	.setattr	= floor_setattr,
	.fsync		= floor_fsync,
	.init		= floor_init,
	.lookup		= floor_lookup,
	.getattr	= floor_getattr,
	.open		= floor_open,
	.read		= floor_read,
};

int main(int argc, char **argv)
{
	char *fargv[] = { argv[0], "-o", "ro,max_read=1048576", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se;
	int ret;

	if (argc != 5 && !(argc == 6 && !strcmp(argv[5], "rw"))) {
		fprintf(stderr, "usage: %s IMAGE OFFSET LENGTH MOUNTPOINT [rw]\n", argv[0]);
		return 2;
	}
	writable = argc == 6;
	if (writable)
		fargv[2] = "rw,max_read=1048576";
	image_fd = open(argv[1], writable ? O_RDWR : O_RDONLY);
	image_offset = strtoll(argv[2], NULL, 0);
	file_size = strtoll(argv[3], NULL, 0);
	buf = aligned_alloc(1U << 21, FLOOR_MAX_READ);
	if (image_fd < 0 || !buf) {
		perror(argv[1]);
		return 1;
	}
	se = fuse_session_new(&args, &floor_ops, sizeof(floor_ops), NULL);
	if (!se || fuse_session_mount(se, argv[4])) {
		fprintf(stderr, "%s: cannot mount on %s\n", argv[0], argv[4]);
		return 1;
	}
	fuse_daemonize(0);
	ret = fuse_session_loop(se);
	fuse_session_unmount(se);
	fuse_session_destroy(se);
	return ret ? 1 : 0;
}
