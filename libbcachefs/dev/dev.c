// SPDX-License-Identifier: GPL-2.0
#include "dev/dev.h"
#include "codec/checksum.h"
#include "util/errcode.h"
#include "format/format.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/file.h>
#include <signal.h>
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

/*
 * BCH_KILL_AT_WRITE=N (crash tests, tests/crash/killtest.sh --self-kill):
 * the process kills itself (SIGKILL) instead of making its N-th write, as
 * if the kill had come at that moment.
 */
static void kill_at_write(void)
{
	static long at = -2;

	if (at == -2) {
		const char *e = getenv("BCH_KILL_AT_WRITE");

		at = e && *e ? strtol(e, NULL, 10) : -1;
	}
	if (at >= 0 && dev_nr_writes >= (unsigned long)at)
		raise(SIGKILL);
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

/*
 * What this process holds, shared by every open of the same device: an
 * O_EXCL open of a block device (claim, keyed by device number) or an
 * flock on an inode (keyed by st_dev/st_ino), each through its own
 * descriptor, released when the last open using it is closed.
 */
struct dev_hold {
	struct dev_hold		*next;
	bool			claim;
	struct dev_ident	id;
	int			fd;
	bool			excl;
	unsigned		refs;
};

static struct dev_hold *holds;
static pthread_mutex_t holds_lock = PTHREAD_MUTEX_INITIALIZER;

static struct dev_hold *hold_find(bool claim, const struct dev_ident *id)
{
	for (struct dev_hold *h = holds; h; h = h->next)
		if (h->claim == claim && dev_ident_eq(&h->id, id))
			return h;
	return NULL;
}

static struct dev_hold *hold_new(bool claim, struct dev_ident id, int fd, bool excl)
{
	struct dev_hold *h = xcalloc(1, sizeof(*h));

	*h = (struct dev_hold) {
		.next = holds, .claim = claim, .id = id, .fd = fd, .excl = excl, .refs = 1,
	};
	holds = h;
	return h;
}

static void hold_put(struct dev_hold *h)
{
	struct dev_hold **p;

	if (--h->refs)
		return;
	for (p = &holds; *p != h; p = &(*p)->next)
		;
	*p = h->next;
	close(h->fd);
	free(h);
}

bool dev_claimed_here(dev_t rdev)
{
	struct dev_ident id = { .blk = true, .dev = rdev };
	bool ret;

	pthread_mutex_lock(&holds_lock);
	ret = hold_find(true, &id) != NULL;
	pthread_mutex_unlock(&holds_lock);
	return ret;
}

static void devio_add_hold(struct bch_devio *d, struct dev_hold *h)
{
	if (d->nr_holds < ARRAY_SIZE(d->holds))
		d->holds[d->nr_holds++] = h;
	else
		hold_put(h);
}

/*
 * Lock the inode open as @fd for @d: exclusively (a writer) or shared.
 * Returns 0 (held, or locks not supported there), or -BCH_ERR_dev_busy
 * when another process holds it and we want it exclusively; a shared
 * lock that cannot be had sets d->busy and is not an error.
 */
static int lock_inode(struct bch_devio *d, int fd, bool excl)
{
	struct dev_ident id;
	struct dev_hold *h;
	struct stat st;
	int lfd;

	if (fstat(fd, &st))
		return -errno;
	id = (struct dev_ident) { .dev = st.st_dev, .ino = st.st_ino };

	h = hold_find(false, &id);
	if (h) {
		if (excl && !h->excl) {
			/* conversion may drop the shared lock when it fails */
			if (flock(h->fd, LOCK_EX | LOCK_NB)) {
				flock(h->fd, LOCK_SH | LOCK_NB);
				return -BCH_ERR_dev_busy;
			}
			h->excl = true;
		}
		h->refs++;
		devio_add_hold(d, h);
		return 0;
	}

	lfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (lfd < 0)
		return -errno;
	if (flock(lfd, (excl ? LOCK_EX : LOCK_SH) | LOCK_NB)) {
		int err = errno;

		close(lfd);
		if (err != EWOULDBLOCK)
			return 0;	/* no locks on this filesystem: nothing to hold */
		if (excl)
			return -BCH_ERR_dev_busy;
		d->busy = true;
		return 0;
	}
	devio_add_hold(d, hold_new(false, id, lfd, excl));
	return 0;
}

/* Lock a layer below the device (backing file, device under dm) by its path. */
static int lock_layer(struct bch_devio *d, const struct dev_layer *l, bool excl)
{
	struct stat st;
	int fd, ret = 0;

	if (!l->path)
		return 0;
	fd = open(l->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (!fstat(fd, &st)) {
		struct dev_ident id = S_ISBLK(st.st_mode)
			? (struct dev_ident) { .blk = true, .dev = st.st_rdev }
			: (struct dev_ident) { .dev = st.st_dev, .ino = st.st_ino };

		if (dev_ident_eq(&id, &l->id))
			ret = lock_inode(d, fd, excl);
	}
	close(fd);
	return ret;
}

/* Open block device @path O_EXCL, or share this process's claim of it. */
static int open_claimed(struct bch_devio *d, const char *path, dev_t rdev, int oflags)
{
	struct dev_ident id = { .blk = true, .dev = rdev };
	struct dev_hold *h = hold_find(true, &id);
	int fd;

	if (h) {
		fd = fcntl(h->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		h->refs++;
		devio_add_hold(d, h);
		return fd;
	}
	fd = open(path, oflags | O_CLOEXEC | O_EXCL);
	if (fd < 0)
		return errno == EBUSY ? -BCH_ERR_dev_busy :
		       errno == EROFS ? -BCH_ERR_dev_read_only : -errno;
	h = hold_new(true, id, fcntl(fd, F_DUPFD_CLOEXEC, 0), true);
	if (h->fd < 0) {
		int err = -errno;

		hold_put(h);
		close(fd);
		return err;
	}
	devio_add_hold(d, h);
	return fd;
}

static int dev_open_locked(const char *path, unsigned flags, struct bch_devio *d)
{
	int oflags = (flags & DEV_RW) ? O_RDWR : O_RDONLY;
	bool rw = flags & DEV_RW;
	struct dev_stack s = { 0 };
	struct stat st;
	int ret;

	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		return -ENOTBLK;

	if (S_ISBLK(st.st_mode) && (flags & DEV_EXCL) && rw) {
		ret = open_claimed(d, path, st.st_rdev, oflags);
		if (ret < 0)
			return ret;
		d->fd = ret;
	} else {
		d->fd = open(path, oflags | O_CLOEXEC);
		if (d->fd < 0)
			return rw && errno == EROFS ? -BCH_ERR_dev_read_only : -errno;
	}
	if (rw && S_ISBLK(st.st_mode)) {
		/* a read-only block device opens read-write; its writes fail */
		int ro = 0;

		if (!ioctl(d->fd, BLKROGET, &ro) && ro)
			return -BCH_ERR_dev_read_only;
	}
	if (fstat(d->fd, &st))
		return -errno;

	/* hold every layer: the device itself, then what it is built on */
	ret = dev_stack_get(path, d->fd, &s);
	if (ret)
		return ret;
	ret = lock_inode(d, d->fd, rw);
	for (unsigned i = 1; i < s.nr && !ret; i++)
		if (!s.v[i].container)
			ret = lock_layer(d, &s.v[i], rw);
	dev_stack_exit(&s);
	if (ret)
		return ret;

	d->block_size = 512;
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes;
		int bs;

		d->is_blockdev = true;
		if (ioctl(d->fd, BLKGETSIZE64, &bytes) == 0)
			d->size = bytes;
		if (ioctl(d->fd, BLKSSZGET, &bs) == 0 && bs > 0)
			d->block_size = bs;
	} else if (S_ISREG(st.st_mode)) {
		d->size = st.st_size;
	} else {
		return -ENOTBLK;
	}
	return 0;
}

int dev_open(const char *path, unsigned flags, struct bch_devio **ret)
{
	struct bch_devio *d = xcalloc(1, sizeof(*d));
	int err;

	*ret = NULL;
	pthread_once(&wlog.once, wlog_init);
	if ((flags & DEV_RW) && wlog.open_err) {
		free(d);
		return wlog.open_err;
	}
	d->fd = -1;
	d->path = xstrdup(path);
	d->rw = flags & DEV_RW;

	pthread_mutex_lock(&holds_lock);
	err = dev_open_locked(path, flags, d);
	pthread_mutex_unlock(&holds_lock);
	if (!err && d->rw && wlog.fd >= 0 && (err = wlog_open(d)))
		d->rw = false;		/* no CLOSE record for it */
	if (err) {
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
	if (d->fd >= 0)
		close(d->fd);
	pthread_mutex_lock(&holds_lock);
	for (unsigned i = 0; i < d->nr_holds; i++)
		hold_put(d->holds[i]);
	pthread_mutex_unlock(&holds_lock);
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
	kill_at_write();
	if (fault >= 0 && dev_nr_writes >= (unsigned long)fault)
		return -EIO;
	dev_nr_writes++;
	atomic_store(&d->unflushed, true);
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
	/* cleared first: a write racing with the flush marks it again */
	atomic_store(&d->unflushed, false);
	if (wlog.fd < 0) {
		ret = fdatasync(d->fd) ? -errno : 0;
		if (ret)
			atomic_store(&d->unflushed, true);
		return ret;
	}

	pthread_mutex_lock(&wlog.lock);
	ret = fdatasync(d->fd) ? -errno : 0;
	if (ret)
		atomic_store(&d->unflushed, true);
	if (!ret)
		ret = wlog_append(DEV_LOG_FLUSH, d->log_dev, 0, NULL, 0);
	pthread_mutex_unlock(&wlog.lock);
	return ret;
}

/* Is [@offset, @offset + @len) of a file all written blocks (no hole, nothing unwritten)? */
static bool region_is_data(struct bch_devio *d, uint64_t offset, uint64_t len)
{
	off_t s = lseek(d->fd, (off_t)offset, SEEK_DATA), e;

	if (s < 0 || (uint64_t)s != offset)
		return false;
	e = lseek(d->fd, s, SEEK_HOLE);
	return e > 0 && (uint64_t)e >= offset + len;
}

void dev_prealloc(struct bch_devio *d, uint64_t offset, uint64_t len, bool zero)
{
	static const uint8_t zeros[65536];
	uint64_t end = offset + len;

	if (!d || !d->rw || d->is_blockdev || !len || end > d->size)
		return;
	if (!zero) {
		(void)fallocate(d->fd, FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)len);
		return;
	}
	if (region_is_data(d, offset, len))
		return;
	atomic_store(&d->unflushed, true);
	for (uint64_t o = offset; o < end;) {
		size_t n = (size_t)min_t(uint64_t, sizeof(zeros), end - o);
		long fault = fault_after_writes();
		ssize_t r;

		/* a write like any other for fault injection (it fails the same way) */
		kill_at_write();
		if (fault >= 0 && dev_nr_writes >= (unsigned long)fault)
			return;
		dev_nr_writes++;
		r = pwrite(d->fd, zeros, n, (off_t)o);
		if (r <= 0)
			return;
		/* the write log sees every byte that reaches the device */
		if (wlog.fd >= 0)
			wlog_write(d, zeros, (size_t)r, o);
		o += (uint64_t)r;
	}
}

bool dev_unflushed(struct bch_devio *d)
{
	return d->rw && atomic_load(&d->unflushed);
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
