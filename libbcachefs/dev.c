// SPDX-License-Identifier: GPL-2.0
#include "dev.h"
#include "errcode.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sys/file.h>
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
	d->fd = -1;
	d->path = xstrdup(path);
	d->rw = flags & DEV_RW;

	pthread_mutex_lock(&holds_lock);
	err = dev_open_locked(path, flags, d);
	pthread_mutex_unlock(&holds_lock);
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
