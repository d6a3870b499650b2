// SPDX-License-Identifier: GPL-2.0
/*
 * Reaching a filesystem to administer it: see handle.h.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "admin/admin.h"
#include "btree/btree_update.h"
#include "codec/crypto.h"
#include "admin/ctl_proto.h"
#include "dev/dev.h"
#include "dev/devstack.h"
#include "util/errcode.h"
#include "fs/fs.h"
#include "admin/handle.h"
#include "dev/mounted.h"
#include "dev/super.h"

const char *bch_run_dir(void)
{
	const char *d = getenv("BCACHEFS_RUN_DIR");

	return d && *d ? d : "/run/bcachefs";
}

void bch_ctl_socket_path(const uint8_t uuid[16], struct printbuf *out)
{
	pr_str(out, bch_run_dir());
	pr_char(out, '/');
	pr_uuid(out, uuid);
	pr_str(out, "/ctl");
}

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (either case) */
static bool parse_uuid(const char *s, uint8_t out[16])
{
	static const unsigned dash[] = { 8, 13, 18, 23 };
	unsigned i, j = 0, d = 0;

	if (strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++) {
		if (d < 4 && i == dash[d]) {
			if (s[i] != '-')
				return false;
			d++;
			continue;
		}
		if (!isxdigit((unsigned char)s[i]))
			return false;
	}
	for (i = 0; i < 36; i += 2) {
		char hex[3];

		if (s[i] == '-')
			i++;
		hex[0] = s[i];
		hex[1] = s[i + 1];
		hex[2] = 0;
		out[j++] = (uint8_t)strtoul(hex, NULL, 16);
	}
	return j == 16;
}

static struct bch_handle *handle_new(enum bch_handle_type type, const uint8_t uuid[16])
{
	struct bch_handle *h = xcalloc(1, sizeof(*h));

	h->type = type;
	h->fd = -1;
	memcpy(h->uuid, uuid, 16);
	return h;
}

/* ---- by uuid ------------------------------------------------------------ */

static int connect_socket(const uint8_t uuid[16], int *fd, struct printbuf *err)
{
	struct printbuf path = PRINTBUF;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s, ret = 0;

	bch_ctl_socket_path(uuid, &path);
	if (path.pos >= sizeof(sa.sun_path)) {
		pr_buf(err, "control socket path %s is too long", printbuf_str(&path));
		printbuf_exit(&path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path.buf, path.pos + 1);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0) {
		ret = -errno;
		pr_buf(err, "cannot create a socket: %s", strerror(errno));
	} else if (connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		if (ret != -ENOENT && ret != -ECONNREFUSED)
			pr_buf(err, "%s: %s", printbuf_str(&path), strerror(errno));
		close(s);
	} else {
		*fd = s;
	}
	printbuf_exit(&path);
	return ret;
}

/* A kernel's control device for @uuid (doc/ioctl.md §2), or -ENOENT. */
static int open_kernel_ctl(const uint8_t uuid[16], int *fd, struct printbuf *err)
{
	char uu[37], path[PATH_MAX], buf[32];
	unsigned long minor;
	ssize_t n;
	int f;

	bch_uuid_to_str(uuid, uu);
	snprintf(path, sizeof(path), "/sys/fs/bcachefs/%s/minor", uu);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -ENOENT;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -ENOENT;
	buf[n] = 0;
	minor = strtoul(buf, NULL, 10);
	snprintf(path, sizeof(path), "/dev/bcachefs%lu-ctl", minor);
	f = open(path, O_RDWR | O_CLOEXEC);
	if (f < 0) {
		int ret = -errno;

		pr_buf(err, "cannot open %s: %s", path, strerror(errno));
		return ret;
	}
	*fd = f;
	return 0;
}

/* Open the unmounted filesystem of devices @devs (DEV[:DEV...]) here. */
static int open_local(const uint8_t uuid[16], const char *devs, bool rw,
		      struct bch_handle **ret, struct printbuf *err)
{
	struct bch_fs_opts fo = { .read_only = !rw, .ask_passphrase = true };
	char *list = xstrdup(devs), *save = NULL, *tok, **v = NULL;
	struct printbuf why = PRINTBUF;
	struct bch_handle *h;
	struct bch_fs *c = NULL;
	unsigned nr = 0;
	int r = 0;

	for (tok = strtok_r(list, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		if (nr >= BCH_FS_MAX_DEVS) {
			pr_buf(err, "more than %u devices given", BCH_FS_MAX_DEVS);
			r = -EINVAL;
			goto out;
		}
		if (dev_mounted_check(tok) == 1) {
			pr_buf(err, "%s is in use (mounted, but its control socket in %s does not answer)",
			       tok, bch_run_dir());
			r = -EBUSY;
			goto out;
		}
		v = xrealloc(v, (nr + 1) * sizeof(*v));
		v[nr++] = tok;
	}
	r = bch_fs_open(v, nr, &fo, &c, &why);
	if (!r && memcmp(c->user_uuid, uuid, 16)) {
		pr_str(&why, "the devices given are not that filesystem\n");
		r = -EINVAL;
	}
	if (!r && rw) {
		r = bch_fs_rw_start(c, &why);
		if (!r)
			bch_fs_rw_set_batch(c, true);
	}
	if (r) {
		/* the library's reasons, one per line: the last line is enough here */
		const char *s = printbuf_str(&why);
		size_t n = strlen(s);

		while (n && s[n - 1] == '\n')
			n--;
		pr_buf(err, "cannot open %s: %.*s", devs, (int)n, s);
		bch_fs_close(c);
		goto out;
	}
	h = handle_new(BCH_HANDLE_LOCAL, uuid);
	h->c = c;
	h->rw = rw;
	h->adm = bch_admin_new(c, false);
	*ret = h;
out:
	printbuf_exit(&why);
	free(v);
	free(list);
	return r;
}

static int open_uuid(const uint8_t uuid[16], const char *devs, unsigned flags,
		     struct bch_handle **h, struct printbuf *err)
{
	char uu[37];
	int fd = -1, ret;

	ret = connect_socket(uuid, &fd, err);
	if (!ret) {
		*h = handle_new(BCH_HANDLE_SOCKET, uuid);
		(*h)->fd = fd;
		return 0;
	}
	if (ret != -ENOENT && ret != -ECONNREFUSED)
		return ret;
	ret = open_kernel_ctl(uuid, &fd, err);
	if (!ret) {
		*h = handle_new(BCH_HANDLE_KERNEL, uuid);
		(*h)->fd = fd;
		return 0;
	}
	if (ret != -ENOENT)
		return ret;

	bch_uuid_to_str(uuid, uu);
	if (!(flags & (BCH_OPEN_OFFLINE_RO | BCH_OPEN_OFFLINE_RW))) {
		pr_buf(err, "filesystem %s is not mounted", uu);
		return -ENXIO;
	}
	if (!devs) {
		pr_buf(err, "filesystem %s is not mounted; give its devices (DEV[:DEV...]) to work on it unmounted", uu);
		return -ENXIO;
	}
	return open_local(uuid, devs, flags & BCH_OPEN_OFFLINE_RW, h, err);
}

/* The superblock of @path: external uuid and member index. -ENOTTY if none. */
int bch_member_sb_read(const char *path, uint8_t uuid[16], unsigned *idx,
		       struct printbuf *err)
{
	struct bch_devio *io;
	struct bch_sb_handle sb = { 0 };
	struct printbuf why = PRINTBUF;
	int ret = dev_open(path, 0, &io);

	if (ret) {
		pr_buf(err, "cannot open %s: %s", path, bch_err_str(ret));
		return ret;
	}
	ret = bch_sb_read(io, &sb, &why);
	if (!ret) {
		memcpy(uuid, sb.sb->user_uuid.b, 16);
		*idx = sb.sb->dev_idx;
	} else if (ret == -BCH_ERR_not_bcachefs) {
		pr_buf(err, "%s is not a bcachefs device", path);
		ret = -ENOTTY;
	} else if (ret == -BCH_ERR_sb_removed) {
		/* the reader's one line: "PATH: removed from filesystem UUID: ..." */
		while (why.pos && why.buf[why.pos - 1] == '\n')
			why.buf[--why.pos] = 0;
		pr_str(err, printbuf_str(&why));
	} else {
		pr_buf(err, "%s: cannot read its superblock: %s", path, bch_err_str(ret));
	}
	bch_sb_handle_free(&sb);
	printbuf_exit(&why);
	dev_close(io);
	return ret;
}

int bch_handle_dev_is_member(struct bch_handle *h, const char *path, int *idx)
{
	struct printbuf err = PRINTBUF;
	uint8_t uuid[16];
	unsigned i;
	struct stat st;

	*idx = -1;
	if (!bch_member_sb_read(path, uuid, &i, &err) && !memcmp(uuid, h->uuid, 16)) {
		printbuf_exit(&err);
		*idx = (int)i;
		return 1;
	}
	printbuf_exit(&err);
	if (h->type != BCH_HANDLE_LOCAL || !h->c || stat(path, &st))
		return 0;
	for (i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct stat s;

		if (!h->c->devs[i] || !h->c->devs[i]->io || fstat(h->c->devs[i]->io->fd, &s))
			continue;
		if (S_ISBLK(st.st_mode) ? S_ISBLK(s.st_mode) && s.st_rdev == st.st_rdev
					: s.st_dev == st.st_dev && s.st_ino == st.st_ino) {
			*idx = (int)i;
			return 1;
		}
	}
	return 0;
}

/* bch_path_in_fs() of one file or directory (not what it is built on) */
static int file_in_fs(const uint8_t uuid[16], const char *path)
{
	struct bch_ioctl_query_uuid u;
	char real[PATH_MAX], *slash;
	struct stat st;
	int fd, ret;

	if (!realpath(path, real) || stat(real, &st))
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		slash = strrchr(real, '/');
		if (!slash)
			return 0;
		if (slash == real)
			slash[1] = 0;
		else
			*slash = 0;
	}
	fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ret = ioctl(fd, BCH_IOCTL_QUERY_UUID, &u);
	close(fd);
	return !ret && !memcmp(u.uuid.b, uuid, 16);
}

int bch_path_in_fs(const uint8_t uuid[16], const char *path)
{
	struct dev_stack ds;
	int ret = 0;

	if (dev_stack_get(path, -1, &ds))
		return file_in_fs(uuid, path);
	/* a loop device (or more) over an image file: where the file is */
	for (unsigned i = 0; i < ds.nr && !ret; i++)
		if (!ds.v[i].id.blk && ds.v[i].path)
			ret = file_in_fs(uuid, ds.v[i].path);
	dev_stack_exit(&ds);
	return ret;
}

int bch_handle_open(const char *arg, unsigned flags, struct bch_handle **h,
		    struct printbuf *err)
{
	struct bch_ioctl_query_uuid u;
	uint8_t uuid[16];
	struct stat st;
	unsigned idx;
	int fd, ret;

	*h = NULL;
	if (parse_uuid(arg, uuid))
		return open_uuid(uuid, NULL, flags & ~(BCH_OPEN_OFFLINE_RO | BCH_OPEN_OFFLINE_RW),
				 h, err);
	if (stat(arg, &st)) {
		char *first, *colon;

		ret = -errno;
		/* DEV:DEV... of an unmounted filesystem */
		if (ret == -ENOENT && (colon = strchr(arg, ':'))) {
			first = strndup(arg, (size_t)(colon - arg));
			ret = bch_member_sb_read(first, uuid, &idx, err);
			free(first);
			return ret ?: open_uuid(uuid, arg, flags, h, err);
		}
		pr_buf(err, "cannot open %s: %s", arg, strerror(errno));
		return ret;
	}
	if (!S_ISBLK(st.st_mode)) {
		fd = open(arg, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0) {
			ret = -errno;
			pr_buf(err, "cannot open %s: %s", arg, strerror(errno));
			return ret;
		}
		ret = ioctl(fd, BCH_IOCTL_QUERY_UUID, &u);
		close(fd);
		if (!ret)
			return open_uuid(u.uuid.b, NULL, 0, h, err);
		if (!S_ISREG(st.st_mode)) {
			pr_buf(err, "error opening %s: not a bcachefs filesystem", arg);
			return -ENOTTY;
		}
	}
	/* a member device or image file */
	ret = bch_member_sb_read(arg, uuid, &idx, err);
	if (ret == -ENOTTY) {
		printbuf_reset(err);
		pr_buf(err, "error opening %s: not a bcachefs filesystem", arg);
	}
	return ret ?: open_uuid(uuid, arg, flags, h, err);
}

int bch_handle_open_dev(const char *dev, const char *fs_devs, unsigned flags,
			struct bch_handle **h, unsigned *idx, struct printbuf *err)
{
	uint8_t uuid[16];
	struct stat st;
	int ret;

	*h = NULL;
	if (stat(dev, &st)) {
		ret = -errno;
		pr_buf(err, "cannot open %s: %s", dev, strerror(errno));
		return ret;
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		pr_buf(err, "%s is not a block device or image file", dev);
		return -ENOTBLK;
	}
	ret = bch_member_sb_read(dev, uuid, idx, err);
	return ret ?: open_uuid(uuid, fs_devs ?: dev, flags, h, err);
}

int bch_handle_close(struct bch_handle *h, struct printbuf *err)
{
	int ret = 0;

	if (!h)
		return 0;
	if (h->fd >= 0)
		close(h->fd);
	if (h->type == BCH_HANDLE_LOCAL) {
		bch_admin_free(h->adm);
		if (h->c->rw)
			ret = bch_fs_rw_stop(h->c, err);
		bch_fs_close(h->c);
	}
	printbuf_exit(&h->msg);
	free(h);
	return ret;
}

/* ---- bch_ioctl ------------------------------------------------------------ */

/* The path a request carries: the `dev` pointer of a lookup without BY_INDEX. */
static const char *call_path(unsigned long nr, const void *arg)
{
	switch (nr) {
	case BCH_IOCTL_DISK_ADD:
	case BCH_IOCTL_DISK_ONLINE:
		return (const char *)(uintptr_t)((const struct bch_ioctl_disk *)arg)->dev;
	case BCH_IOCTL_DISK_REMOVE:
	case BCH_IOCTL_DISK_OFFLINE: {
		const struct bch_ioctl_disk *d = arg;

		return d->flags & BCH_BY_INDEX ? NULL : (const char *)(uintptr_t)d->dev;
	}
	case BCH_IOCTL_DISK_SET_STATE: {
		const struct bch_ioctl_disk_set_state *d = arg;

		return d->flags & BCH_BY_INDEX ? NULL : (const char *)(uintptr_t)d->dev;
	}
	case BCH_IOCTL_DISK_RESIZE: {
		const struct bch_ioctl_disk_resize *d = arg;

		return d->flags & BCH_BY_INDEX ? NULL : (const char *)(uintptr_t)d->dev;
	}
	case BCH_IOCTL_READ_SUPER: {
		const struct bch_ioctl_read_super *d = arg;

		return (d->flags & BCH_READ_DEV) && !(d->flags & BCH_BY_INDEX)
			? (const char *)(uintptr_t)d->dev : NULL;
	}
	default:
		return NULL;
	}
}

static size_t call_arg_size(unsigned long nr, const void *arg)
{
	if (nr == BCH_IOCTL_USAGE)
		return sizeof(struct bch_ioctl_usage) +
		       (size_t)((const struct bch_ioctl_usage *)arg)->nr_devices *
		       sizeof(struct bch_ioctl_dev_usage);
	return bch_ctl_arg_size((uint32_t)nr);
}

/* The device of DISK_ADD / DISK_ONLINE, opened as the kernel would (read-write, exclusive). */
static int open_device(const char *path, struct printbuf *msg)
{
	struct stat st;
	int fd;

	if (stat(path, &st)) {
		int ret = -errno;

		pr_buf(msg, "%s: %s", path, strerror(errno));
		return ret;
	}
	fd = open(path, O_RDWR | O_CLOEXEC | (S_ISBLK(st.st_mode) ? O_EXCL : 0));
	if (fd < 0) {
		int ret = -errno;

		pr_buf(msg, "%s: %s", path, strerror(errno));
		return ret;
	}
	return fd;
}

/* Write what the ioctl returns into the caller's memory. */
static long copy_out(unsigned long nr, void *arg, const void *data, size_t bytes,
		     struct printbuf *msg)
{
	switch (nr) {
	case BCH_IOCTL_QUERY_UUID:
	case BCH_IOCTL_USAGE:
		if (bytes != call_arg_size(nr, arg)) {
			pr_buf(msg, "reply of %zu bytes for a %zu-byte argument", bytes,
			       call_arg_size(nr, arg));
			return -EPROTO;
		}
		memcpy(arg, data, bytes);
		return 0;
	case BCH_IOCTL_READ_SUPER: {
		struct bch_ioctl_read_super *rs = arg;

		if (bytes > rs->size) {
			pr_buf(msg, "superblock of %zu bytes for a %" PRIu64 "-byte buffer", bytes,
			       rs->size);
			return -EPROTO;
		}
		memcpy((void *)(uintptr_t)rs->sb, data, bytes);
		return 0;
	}
	default:
		return 0;
	}
}

static long ioctl_local(struct bch_handle *h, unsigned long nr, void *arg)
{
	size_t bytes = call_arg_size(nr, arg);
	const char *path = call_path(nr, arg);
	struct bch_admin_out out = BCH_ADMIN_OUT_INIT;
	struct bch_admin_call call = {
		.nr = (uint32_t)nr, .arg_bytes = bytes, .fd = -1, .privileged = true,
	};
	char real[PATH_MAX];
	long ret;

	if (!bch_ctl_known((uint32_t)nr))
		return -ENOTTY;
	call.arg = xcalloc(1, bytes ?: 8);
	if (bytes)
		memcpy(call.arg, arg, bytes);
	if (path) {
		call.path = realpath(path, real) ? real : path;
		if (nr == BCH_IOCTL_DISK_ADD || nr == BCH_IOCTL_DISK_ONLINE) {
			int fd = open_device(path, &h->msg);

			if (fd < 0) {
				free(call.arg);
				return fd;
			}
			call.fd = fd;
		}
	}
	ret = bch_admin_ioctl(h->adm, &call, &out);
	if (ret >= 0)
		ret = copy_out(nr, arg, out.data, out.bytes, &h->msg) ?: ret;
	if (ret >= 0 && out.job_fd >= 0) {
		ret = out.job_fd;
		out.job_fd = -1;
	}
	pr_str(&h->msg, printbuf_str(&out.msg));
	bch_admin_out_exit(&out);
	free(call.arg);
	return ret;
}

static long ioctl_socket(struct bch_handle *h, unsigned long nr, void *arg)
{
	size_t bytes = call_arg_size(nr, arg), plen;
	const char *path = call_path(nr, arg);
	struct bch_ctl_req_hdr hdr = { .magic = BCH_CTL_REQ_MAGIC, .nr = (uint32_t)nr };
	struct bch_ctl_reply_hdr rh;
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } cbuf;
	struct msghdr mh = { 0 };
	struct iovec iov[3];
	struct cmsghdr *cm;
	char real[PATH_MAX];
	uint8_t *reply = NULL;
	ssize_t n;
	int dev_fd = -1, got_fd = -1;
	long ret;

	if (!bch_ctl_known((uint32_t)nr))
		return -ENOTTY;
	if (path) {
		if (realpath(path, real))
			path = real;
		plen = strlen(path);
		if (plen > BCH_CTL_PATH_MAX) {
			pr_buf(&h->msg, "path %.40s... is too long", path);
			return -ENAMETOOLONG;
		}
		if (nr == BCH_IOCTL_DISK_ADD || nr == BCH_IOCTL_DISK_ONLINE) {
			dev_fd = open_device(path, &h->msg);
			if (dev_fd < 0)
				return dev_fd;
		}
	} else {
		plen = 0;
	}
	hdr.arg_bytes = (uint32_t)bytes;
	hdr.str_bytes = (uint32_t)plen;
	iov[0] = (struct iovec) { &hdr, sizeof(hdr) };
	iov[1] = (struct iovec) { arg, bytes };
	iov[2] = (struct iovec) { (void *)path, plen };
	mh.msg_iov = iov;
	mh.msg_iovlen = 3;
	if (dev_fd >= 0) {
		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = sizeof(cbuf.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &dev_fd, sizeof(int));
	}
	n = sendmsg(h->fd, &mh, MSG_NOSIGNAL);
	if (dev_fd >= 0)
		close(dev_fd);
	if (n < 0) {
		ret = -errno;
		pr_buf(&h->msg, "sending the request to the mount: %s", strerror(errno));
		return ret;
	}

	reply = xmalloc(sizeof(rh) + BCH_CTL_MSG_MAX);
	iov[0] = (struct iovec) { reply, sizeof(rh) + BCH_CTL_MSG_MAX };
	memset(&mh, 0, sizeof(mh));
	memset(&cbuf, 0, sizeof(cbuf));
	mh.msg_iov = iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf.buf;
	mh.msg_controllen = sizeof(cbuf.buf);
	n = recvmsg(h->fd, &mh, MSG_CMSG_CLOEXEC);
	for (cm = CMSG_FIRSTHDR(&mh); n >= 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&got_fd, CMSG_DATA(cm), sizeof(int));
	if (n < 0) {
		ret = -errno;
		pr_buf(&h->msg, "reading the mount's reply: %s", strerror(errno));
		goto out;
	}
	if (!n) {
		pr_str(&h->msg, "the mount closed its control socket (unmounted?)");
		ret = -EPIPE;
		goto out;
	}
	memcpy(&rh, reply, min_t(size_t, (size_t)n, sizeof(rh)));
	if ((size_t)n < sizeof(rh) || rh.magic != BCH_CTL_REPLY_MAGIC ||
	    (mh.msg_flags & MSG_TRUNC) ||
	    sizeof(rh) + (size_t)rh.out_bytes + rh.msg_bytes != (size_t)n) {
		pr_str(&h->msg, "malformed reply from the mount");
		ret = -EPROTO;
		goto out;
	}
	pr_bytes(&h->msg, reply + sizeof(rh) + rh.out_bytes, rh.msg_bytes);
	ret = rh.ret;
	if (ret >= 0)
		ret = copy_out(nr, arg, reply + sizeof(rh), rh.out_bytes, &h->msg) ?: ret;
	if (ret >= 0 && (nr == BCH_IOCTL_DATA || nr == BCH_IOCTL_DATA_V2)) {
		if (got_fd < 0) {
			pr_str(&h->msg, "the mount started a job but sent no descriptor for it");
			ret = -EPROTO;
		} else {
			ret = got_fd;
			got_fd = -1;
		}
	}
out:
	if (got_fd >= 0)
		close(got_fd);
	free(reply);
	return ret;
}

long bch_ioctl(struct bch_handle *h, unsigned long nr, void *arg)
{
	printbuf_reset(&h->msg);
	switch (h->type) {
	case BCH_HANDLE_KERNEL:
		if ((nr >> 8 & 0xff) != BCH_IOCTL_TYPE)
			return -ENOTTY;
		return ioctl(h->fd, nr, arg) < 0 ? -errno : 0;
	case BCH_HANDLE_LOCAL:
		return ioctl_local(h, nr, arg);
	default:
		return ioctl_socket(h, nr, arg);
	}
}

/* ---- job descriptors ------------------------------------------------------- */

/* One request on the job socket, its reply into @buf (at most @size bytes). */
static long job_call(int fd, uint32_t type, void *buf, size_t size)
{
	struct bch_job_req req = { .magic = BCH_CTL_JOB_MAGIC, .type = type };
	ssize_t n;

	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) != sizeof(req))
		return errno == EPIPE || errno == ECONNRESET ? -EPIPE : -errno;
	do {
		n = recv(fd, buf, size, MSG_TRUNC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == ECONNRESET ? -EPIPE : -errno;
	if (!n)
		return -EPIPE;
	return (size_t)n > size ? -EPROTO : n;
}

long bch_job_read(struct bch_handle *h, int fd, void *buf, size_t len)
{
	struct bch_ioctl_data_event ev;
	long n;

	if (len < sizeof(struct bch_ioctl_data_progress))
		return -EINVAL;
	if (h->type == BCH_HANDLE_KERNEL) {
		n = read(fd, len >= sizeof(ev) ? buf : (void *)&ev, sizeof(ev));
		if (n < 0)
			return -errno;
		if (len < sizeof(ev)) {
			memcpy(buf, &ev.p, sizeof(ev.p));
			return sizeof(ev.p);
		}
		return n;
	}
	n = job_call(fd, BCH_JOB_REQ_PROGRESS, &ev, sizeof(ev));
	if (n < 0)
		return n;
	if (n != sizeof(ev))
		return -EPROTO;
	if (len >= sizeof(ev)) {
		memcpy(buf, &ev, sizeof(ev));
		return sizeof(ev);
	}
	memcpy(buf, &ev.p, sizeof(ev.p));
	return sizeof(ev.p);
}

int bch_job_result(struct bch_handle *h, int fd, struct bch_job_result *r,
		   struct printbuf *report)
{
	size_t size = sizeof(*r) + BCH_CTL_TEXT_MAX;
	uint8_t *buf;
	long n;

	if (h->type == BCH_HANDLE_KERNEL)
		return -EOPNOTSUPP;
	buf = xmalloc(size);
	n = job_call(fd, BCH_JOB_REQ_RESULT, buf, size);
	if (n >= 0) {
		memcpy(r, buf, min_t(size_t, (size_t)n, sizeof(*r)));
		if ((size_t)n < sizeof(*r) || r->magic != BCH_CTL_JOB_MAGIC ||
		    sizeof(*r) + (size_t)r->msg_bytes != (size_t)n)
			n = -EPROTO;
		else if (report)
			pr_bytes(report, buf + sizeof(*r), r->msg_bytes);
	}
	free(buf);
	return n < 0 ? (int)n : 0;
}
