// SPDX-License-Identifier: GPL-2.0
#include "dev.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

unsigned long dev_nr_writes;
static long fault_v = -2;

void dev_fault_after(long n)
{
	fault_v = n < 0 ? -1 : (long)dev_nr_writes + n;
}

static long fault_after_writes(void)
{
	long v = fault_v;

	if (v == -2) {
		const char *e = getenv("BCH_FAULT_WRITES");
		v = fault_v = e && *e ? strtol(e, NULL, 10) : -1;
	}
	return v;
}

int dev_open(const char *path, unsigned flags, struct bch_devio **ret)
{
	struct bch_devio *d;
	struct stat st;
	int oflags = (flags & DEV_RW) ? O_RDWR : O_RDONLY;
	int fd;

	*ret = NULL;
	fd = open(path, oflags | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int err = -errno;
		close(fd);
		return err;
	}
	if (S_ISBLK(st.st_mode) && (flags & DEV_EXCL)) {
		/* Reopen exclusively: fails with EBUSY when mounted or held. */
		int fd2 = open(path, oflags | O_CLOEXEC | O_EXCL);
		if (fd2 < 0) {
			int err = -errno;
			close(fd);
			return err;
		}
		close(fd);
		fd = fd2;
	}

	d = xcalloc(1, sizeof(*d));
	d->fd = fd;
	d->path = xstrdup(path);
	d->rw = flags & DEV_RW;
	d->block_size = 512;

	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes;
		int bs;

		d->is_blockdev = true;
		if (ioctl(fd, BLKGETSIZE64, &bytes) == 0)
			d->size = bytes;
		if (ioctl(fd, BLKSSZGET, &bs) == 0 && bs > 0)
			d->block_size = bs;
	} else if (S_ISREG(st.st_mode)) {
		d->size = st.st_size;
	} else {
		dev_close(d);
		return -ENOTBLK;
	}
	*ret = d;
	return 0;
}

void dev_close(struct bch_devio *d)
{
	if (!d)
		return;
	close(d->fd);
	free(d->path);
	free(d);
}

int dev_pread(struct bch_devio *d, void *buf, size_t len, uint64_t offset)
{
	char *p = buf;

	if (offset > d->size || len > d->size - offset)
		return -ERANGE;
	while (len) {
		ssize_t r = pread(d->fd, p, len, offset);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!r)
			return -EIO;
		p += r;
		len -= r;
		offset += r;
	}
	return 0;
}

int dev_pwrite(struct bch_devio *d, const void *buf, size_t len, uint64_t offset)
{
	const char *p = buf;
	long fault = fault_after_writes();

	if (!d->rw)
		return -EROFS;
	if (fault >= 0 && dev_nr_writes >= (unsigned long)fault)
		return -EIO;
	dev_nr_writes++;
	while (len) {
		ssize_t r = pwrite(d->fd, p, len, offset);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += r;
		len -= r;
		offset += r;
	}
	if (offset > d->size)
		d->size = offset;
	return 0;
}

int dev_flush(struct bch_devio *d)
{
	if (!d->rw)
		return 0;
	return fdatasync(d->fd) ? -errno : 0;
}

/* Read the size (and logical block size) of @d's file or block device again. */
static int dev_stat(struct bch_devio *d)
{
	struct stat st;

	if (fstat(d->fd, &st))
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes;
		int bs;

		d->is_blockdev = true;
		if (ioctl(d->fd, BLKGETSIZE64, &bytes))
			return -errno;
		d->size = bytes;
		if (ioctl(d->fd, BLKSSZGET, &bs) == 0 && bs > 0)
			d->block_size = bs;
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return -ENOTBLK;
	d->size = st.st_size;
	return 0;
}

int dev_open_fd(int fd, const char *path, unsigned flags, struct bch_devio **ret)
{
	struct bch_devio *d = xcalloc(1, sizeof(*d));
	int acc = fcntl(fd, F_GETFL), err;

	*ret = NULL;
	if (acc < 0 || ((flags & DEV_RW) && (acc & O_ACCMODE) != O_RDWR)) {
		free(d);
		return acc < 0 ? -errno : -EBADF;
	}
	d->fd = fd;
	d->path = xstrdup(path);
	d->rw = flags & DEV_RW;
	d->block_size = 512;
	err = dev_stat(d);
	if (err) {
		free(d->path);
		free(d);
		return err;
	}
	*ret = d;
	return 0;
}

int dev_refresh_size(struct bch_devio *d)
{
	return dev_stat(d);
}
