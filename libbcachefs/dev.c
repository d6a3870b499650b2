// SPDX-License-Identifier: GPL-2.0
#include "dev.h"
#include "checksum.h"
#include "format.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
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

/* ---- the write log (format in dev.h) ---- */

static struct {
	pthread_once_t	once;
	pthread_mutex_t	lock;
	int		fd;		/* -1: off */
	int		open_err;	/* opening BCH_WRITE_LOG failed */
	bool		skip_flush;	/* BCH_TEST_SKIP_FLUSH */
	uint32_t	next_dev;
} wlog = {
	.once	= PTHREAD_ONCE_INIT,
	.lock	= PTHREAD_MUTEX_INITIALIZER,
	.fd	= -1,
};

static void wlog_init(void)
{
	const char *path = getenv("BCH_WRITE_LOG");
	const char *skip = getenv("BCH_TEST_SKIP_FLUSH");

	wlog.skip_flush = skip && *skip && strcmp(skip, "0");
	if (!path || !*path)
		return;
	wlog.fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (wlog.fd < 0) {
		wlog.open_err = -errno;
		fprintf(stderr, "BCH_WRITE_LOG: cannot open %s: %s\n", path, strerror(errno));
	}
}

bool dev_log_enabled(void)
{
	pthread_once(&wlog.once, wlog_init);
	return wlog.fd >= 0;
}

uint32_t dev_log_csum(const void *p, size_t len)
{
	return ~crc32c(~0U, p, len);
}

static void put_le16(uint8_t *p, uint16_t v) { le16 w = cpu_to_le16(v); memcpy(p, &w, 2); }
static void put_le32(uint8_t *p, uint32_t v) { le32 w = cpu_to_le32(v); memcpy(p, &w, 4); }

int dev_log_append(int fd, unsigned type, uint32_t pid, uint32_t dev,
		   uint64_t offset, const void *payload, size_t len)
{
	uint8_t h[DEV_LOG_HDR_BYTES];
	struct timespec ts;
	struct iovec iov[2] = {
		{ h, sizeof(h) },
		{ (void *)payload, len },
	};
	size_t total = sizeof(h) + len, done = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	memset(h, 0, sizeof(h));
	put_le32(h + 0, DEV_LOG_MAGIC);
	put_le16(h + 4, type);
	put_le16(h + 6, DEV_LOG_HDR_BYTES);
	put_le32(h + 8, pid);
	put_le32(h + 12, dev);
	put_le64_unaligned(h + 16, offset);
	put_le64_unaligned(h + 24, len);
	put_le64_unaligned(h + 32, (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
	put_le32(h + 40, dev_log_csum(payload, len));
	put_le32(h + 44, dev_log_csum(h, 44));

	/* one writev: O_APPEND keeps the record in one piece among appenders */
	while (done < total) {
		ssize_t r = writev(fd, iov, 2);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		done += r;
		for (unsigned i = 0; i < 2 && r; i++) {
			size_t n = (size_t)r < iov[i].iov_len ? (size_t)r : iov[i].iov_len;

			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= n;
			r -= n;
		}
	}
	return 0;
}

int dev_log_hdr_decode(const void *buf, struct dev_log_hdr *h, char *why)
{
	const uint8_t *p = buf;
	unsigned hdr_bytes;

	if (get_le32_unaligned(p) != DEV_LOG_MAGIC) {
		snprintf(why, 80, "bad magic 0x%08x", get_le32_unaligned(p));
		return -EINVAL;
	}
	if (get_le32_unaligned(p + 44) != dev_log_csum(p, 44)) {
		snprintf(why, 80, "bad header checksum");
		return -EINVAL;
	}
	h->type		= get_le16_unaligned(p + 4);
	hdr_bytes	= get_le16_unaligned(p + 6);
	h->pid		= get_le32_unaligned(p + 8);
	h->dev		= get_le32_unaligned(p + 12);
	h->offset	= get_le64_unaligned(p + 16);
	h->len		= get_le64_unaligned(p + 24);
	h->time_ns	= get_le64_unaligned(p + 32);
	h->data_csum	= get_le32_unaligned(p + 40);
	if (hdr_bytes != DEV_LOG_HDR_BYTES) {
		snprintf(why, 80, "header size %u, expected %u", hdr_bytes, DEV_LOG_HDR_BYTES);
		return -EINVAL;
	}
	if (h->type < DEV_LOG_OPEN || h->type > DEV_LOG_CLOSE) {
		snprintf(why, 80, "unknown record type %u", h->type);
		return -EINVAL;
	}
	if (h->len >= DEV_LOG_MAX_PAYLOAD) {
		snprintf(why, 80, "payload length %" PRIu64 " too big", h->len);
		return -EINVAL;
	}
	return 0;
}

/* Append a record; the caller holds wlog.lock. A failure is reported once. */
static int wlog_append(unsigned type, uint32_t dev, uint64_t offset,
		       const void *payload, size_t len)
{
	static bool warned;
	int ret = dev_log_append(wlog.fd, type, (uint32_t)getpid(), dev, offset, payload, len);

	if (ret && !warned) {
		warned = true;
		fprintf(stderr, "BCH_WRITE_LOG: appending to the write log failed: %s "
			"(the device write is failed too)\n", strerror(-ret));
	}
	return ret ? -EIO : 0;
}

int dev_log_mark(const char *label)
{
	int ret;

	if (!dev_log_enabled())
		return 0;
	pthread_mutex_lock(&wlog.lock);
	ret = wlog_append(DEV_LOG_MARK, DEV_LOG_NO_DEV, 0, label, strlen(label));
	pthread_mutex_unlock(&wlog.lock);
	return ret;
}

static int wlog_open(struct bch_devio *d)
{
	char *abs = realpath(d->path, NULL);
	const char *name = abs ? abs : d->path;
	int ret;

	pthread_mutex_lock(&wlog.lock);
	d->log_dev = wlog.next_dev++;
	ret = wlog_append(DEV_LOG_OPEN, d->log_dev, d->size, name, strlen(name));
	pthread_mutex_unlock(&wlog.lock);
	free(abs);
	return ret;
}

static int wlog_write(struct bch_devio *d, const void *buf, size_t len, uint64_t offset)
{
	int ret;

	pthread_mutex_lock(&wlog.lock);
	ret = wlog_append(DEV_LOG_WRITE, d->log_dev, offset, buf, len);
	pthread_mutex_unlock(&wlog.lock);
	return ret;
}

/* ---- devices ---- */

int dev_open(const char *path, unsigned flags, struct bch_devio **ret)
{
	struct bch_devio *d;
	struct stat st;
	int oflags = (flags & DEV_RW) ? O_RDWR : O_RDONLY;
	int fd, err;

	*ret = NULL;
	pthread_once(&wlog.once, wlog_init);
	if ((flags & DEV_RW) && wlog.open_err)
		return wlog.open_err;
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
	if (d->rw && wlog.fd >= 0 && (err = wlog_open(d))) {
		d->rw = false;		/* no CLOSE record for it */
		dev_close(d);
		return err;
	}
	*ret = d;
	return 0;
}

void dev_close(struct bch_devio *d)
{
	if (!d)
		return;
	if (d->rw && wlog.fd >= 0) {
		pthread_mutex_lock(&wlog.lock);
		wlog_append(DEV_LOG_CLOSE, d->log_dev, 0, NULL, 0);
		pthread_mutex_unlock(&wlog.lock);
	}
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
	uint64_t start = offset;
	long fault = fault_after_writes();
	int ret = 0;

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
			ret = -errno;
			break;
		}
		p += r;
		len -= r;
		offset += r;
	}
	if (offset > d->size)
		d->size = offset;
	/* what reached the device, also the part of a failed write */
	if (wlog.fd >= 0 && offset > start) {
		int r = wlog_write(d, buf, offset - start, start);

		if (!ret)
			ret = r;
	}
	return ret;
}

int dev_flush(struct bch_devio *d)
{
	int ret;

	if (!d->rw || wlog.skip_flush)
		return 0;
	if (wlog.fd < 0)
		return fdatasync(d->fd) ? -errno : 0;

	pthread_mutex_lock(&wlog.lock);
	ret = fdatasync(d->fd) ? -errno : 0;
	if (!ret)
		ret = wlog_append(DEV_LOG_FLUSH, d->log_dev, 0, NULL, 0);
	pthread_mutex_unlock(&wlog.lock);
	return ret;
}

int dev_next_data(struct bch_devio *d, uint64_t offset, uint64_t *start, uint64_t *end)
{
	off_t s, e;

	if (offset >= d->size)
		return -ENXIO;
	*start = offset;
	*end = d->size;
	if (d->is_blockdev)
		return 0;
	s = lseek(d->fd, (off_t)offset, SEEK_DATA);
	if (s < 0)
		return errno == ENXIO ? -ENXIO : 0;	/* no more data / cannot tell */
	e = lseek(d->fd, s, SEEK_HOLE);
	if (e < 0 || e <= s)
		e = (off_t)d->size;
	*start = (uint64_t)s;
	*end = (uint64_t)e < d->size ? (uint64_t)e : d->size;
	return *start < *end ? 0 : -ENXIO;
}
