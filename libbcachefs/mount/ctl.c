// SPDX-License-Identifier: GPL-2.0
/*
 * The control endpoint of a mount: see ctl.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "admin/admin.h"
#include "admin/ctl_proto.h"
#include "core/bch_fs.h"
#include "admin/handle.h"
#include "mount/ctl.h"
#include "util/util.h"

#define CTL_MAX_CLIENTS		64
#define CAP_SYS_ADMIN_BIT	21

struct ctl_client {
	int		fd;
	bool		privileged;
};

struct bch_ctl {
	struct bch_admin	*a;
	int			listen_fd;
	int			stop_pipe[2];
	pthread_t		thread;
	struct printbuf		dir, path;
	struct ctl_client	clients[CTL_MAX_CLIENTS];
	unsigned		nr_clients;
	uint8_t			*buf;		/* one request */
};

/* Root, or a process whose effective capabilities include CAP_SYS_ADMIN. */
static bool peer_privileged(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char path[64], line[256];
	bool ok = false;
	FILE *f;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || len != sizeof(cr))
		return false;
	if (cr.uid == 0)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)cr.pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7)) {
			unsigned long long caps = strtoull(line + 7, NULL, 16);

			ok = (caps >> CAP_SYS_ADMIN_BIT) & 1;
			break;
		}
	fclose(f);
	return ok;
}

/* Send one reply; a client that does not read is dropped (no blocking). */
static int send_reply(int fd, int ret, const void *out, size_t out_bytes,
		      const struct printbuf *msg, int pass_fd)
{
	size_t msg_bytes = min_t(size_t, msg->pos, BCH_CTL_TEXT_MAX);
	struct bch_ctl_reply_hdr h = {
		.magic = BCH_CTL_REPLY_MAGIC, .ret = ret,
		.out_bytes = (uint32_t)out_bytes, .msg_bytes = (uint32_t)msg_bytes,
	};
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } cbuf;
	struct iovec iov[3] = {
		{ &h, sizeof(h) }, { (void *)out, out_bytes }, { msg->buf, msg_bytes },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 3 };

	if (pass_fd >= 0) {
		struct cmsghdr *cm;

		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = sizeof(cbuf.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
	}
	return sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ? -errno : 0;
}

/*
 * One request from client @cl. Returns false when the client is to be
 * dropped (closed, or it sent something we cannot reply to).
 */
static bool serve_one(struct bch_ctl *ctl, struct ctl_client *cl)
{
	union { char buf[CMSG_SPACE(sizeof(int) * 4)]; struct cmsghdr align; } cbuf;
	struct iovec iov = { ctl->buf, BCH_CTL_MSG_MAX + sizeof(struct bch_ctl_req_hdr) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf),
	};
	struct bch_admin_out out = BCH_ADMIN_OUT_INIT;
	struct bch_ctl_req *req = xmalloc(sizeof(*req));
	struct cmsghdr *cm;
	uint64_t *arg = NULL;
	int fds[4], nr_fds = 0, ret;
	ssize_t n;
	bool keep = true;

	memset(&cbuf, 0, sizeof(cbuf));
	n = recvmsg(cl->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		free(req);
		return true;
	}
	for (cm = CMSG_FIRSTHDR(&mh); n >= 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k && nr_fds < 4; i++)
				memcpy(&fds[nr_fds++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
		}
	if (n <= 0) {
		keep = false;
		goto out;
	}
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || nr_fds > 1) {
		pr_str(&out.msg, "request too big, or more than one descriptor");
		ret = -EPROTO;
	} else {
		ret = bch_ctl_req_decode(ctl->buf, (size_t)n, req, &out.msg);
	}
	if (!ret && nr_fds && req->nr != BCH_IOCTL_DISK_ADD && req->nr != BCH_IOCTL_DISK_ONLINE) {
		pr_str(&out.msg, "a descriptor came with a request that takes none");
		ret = -EPROTO;
	}
	if (!ret) {
		struct bch_admin_call call = {
			.nr		= req->nr,
			.arg_bytes	= req->arg_bytes,
			.path		= req->has_path ? req->path : NULL,
			.fd		= nr_fds ? fds[0] : -1,
			.privileged	= cl->privileged,
		};

		/* an aligned copy: the structs are read and written in place */
		arg = xcalloc(1, req->arg_bytes + 8);
		memcpy(arg, req->arg, req->arg_bytes);
		call.arg = arg;
		nr_fds = 0;	/* bch_admin_ioctl() took it */
		ret = bch_admin_ioctl(ctl->a, &call, &out);
	}
	if (send_reply(cl->fd, ret, ret >= 0 ? out.data : NULL, ret >= 0 ? out.bytes : 0,
		       &out.msg, ret >= 0 ? out.job_fd : -1))
		keep = false;	/* the job (if any) stops when its descriptor closes */
out:
	for (int i = 0; i < nr_fds; i++)
		close(fds[i]);
	bch_admin_out_exit(&out);
	free(arg);
	free(req);
	return keep;
}

static void *ctl_thread(void *arg)
{
	struct bch_ctl *ctl = arg;
	struct pollfd pfd[CTL_MAX_CLIENTS + 2];
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		unsigned i, nr = 0;

		pfd[nr++] = (struct pollfd) { .fd = ctl->stop_pipe[0], .events = POLLIN };
		pfd[nr++] = (struct pollfd) { .fd = ctl->listen_fd, .events = POLLIN };
		for (i = 0; i < ctl->nr_clients; i++)
			pfd[nr++] = (struct pollfd) { .fd = ctl->clients[i].fd, .events = POLLIN };
		if (poll(pfd, nr, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents)
			break;
		/* clients first (their slots shift when one goes) */
		for (i = ctl->nr_clients; i-- > 0;) {
			short re = pfd[2 + i].revents;

			if (!re)
				continue;
			if ((re & POLLIN) && serve_one(ctl, &ctl->clients[i]))
				continue;
			/* hung up, failed, or dropped */
			close(ctl->clients[i].fd);
			ctl->clients[i] = ctl->clients[--ctl->nr_clients];
		}
		if (pfd[1].revents & POLLIN) {
			int fd = accept4(ctl->listen_fd, NULL, NULL, SOCK_CLOEXEC);

			if (fd < 0)
				continue;
			if (ctl->nr_clients == CTL_MAX_CLIENTS) {
				close(fd);
				continue;
			}
			ctl->clients[ctl->nr_clients++] = (struct ctl_client) {
				.fd = fd, .privileged = peer_privileged(fd),
			};
		}
	}
	return NULL;
}

/* mkdir -p of the run directory, then its UUID directory. */
static int make_dirs(struct bch_ctl *ctl, struct printbuf *err)
{
	char *p = xstrdup(printbuf_str(&ctl->dir));
	int ret = 0;

	for (char *s = p + 1; ; s++) {
		bool end = !*s;

		if (*s == '/' || end) {
			*s = 0;
			if (mkdir(p, 0755) && errno != EEXIST) {
				ret = -errno;
				pr_buf(err, "cannot create %s: %s", p, strerror(errno));
				break;
			}
			if (end)
				break;
			*s = '/';
		}
	}
	free(p);
	return ret;
}

int bch_ctl_start(struct bch_admin *a, struct bch_ctl **ret, struct printbuf *err)
{
	struct bch_ctl *ctl = xcalloc(1, sizeof(*ctl));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	sigset_t all, old;
	int r, probe;

	ctl->a = a;
	ctl->listen_fd = -1;
	ctl->stop_pipe[0] = ctl->stop_pipe[1] = -1;
	pr_str(&ctl->dir, bch_run_dir());
	pr_char(&ctl->dir, '/');
	pr_uuid(&ctl->dir, a->c->user_uuid);
	bch_ctl_socket_path(a->c->user_uuid, &ctl->path);
	if (ctl->path.pos >= sizeof(sa.sun_path)) {
		pr_buf(err, "control socket path %s is too long", printbuf_str(&ctl->path));
		r = -ENAMETOOLONG;
		goto err;
	}
	memcpy(sa.sun_path, ctl->path.buf, ctl->path.pos + 1);
	r = make_dirs(ctl, err);
	if (r)
		goto err;

	/* a socket left by a mount that was killed is replaced; a live one is not */
	probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe >= 0 && !connect(probe, (struct sockaddr *)&sa, sizeof(sa))) {
		close(probe);
		pr_buf(err, "%s: another mount of this filesystem is running", sa.sun_path);
		r = -EBUSY;
		goto err;
	}
	if (probe >= 0)
		close(probe);
	unlink(sa.sun_path);

	ctl->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (ctl->listen_fd < 0 || bind(ctl->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(sa.sun_path, 0666) || listen(ctl->listen_fd, 16) ||
	    pipe2(ctl->stop_pipe, O_CLOEXEC)) {
		r = -errno;
		pr_buf(err, "cannot listen on %s: %s", sa.sun_path, strerror(errno));
		goto err;
	}
	ctl->buf = xmalloc(BCH_CTL_MSG_MAX + sizeof(struct bch_ctl_req_hdr));

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&ctl->thread, NULL, ctl_thread, ctl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		pr_buf(err, "cannot start the control thread: %s", strerror(-r));
		unlink(sa.sun_path);
		goto err;
	}
	*ret = ctl;
	return 0;
err:
	if (ctl->listen_fd >= 0)
		close(ctl->listen_fd);
	if (ctl->stop_pipe[0] >= 0) {
		close(ctl->stop_pipe[0]);
		close(ctl->stop_pipe[1]);
	}
	printbuf_exit(&ctl->dir);
	printbuf_exit(&ctl->path);
	free(ctl->buf);
	free(ctl);
	*ret = NULL;
	return r;
}

void bch_ctl_stop(struct bch_ctl *ctl)
{
	if (!ctl)
		return;
	/* no new requests: the socket goes first, then the thread */
	unlink(printbuf_str(&ctl->path));
	rmdir(printbuf_str(&ctl->dir));
	if (write(ctl->stop_pipe[1], "x", 1) != 1)
		pthread_cancel(ctl->thread);
	pthread_join(ctl->thread, NULL);
	for (unsigned i = 0; i < ctl->nr_clients; i++)
		close(ctl->clients[i].fd);
	close(ctl->listen_fd);
	close(ctl->stop_pipe[0]);
	close(ctl->stop_pipe[1]);
	bch_admin_stop_jobs(ctl->a);
	printbuf_exit(&ctl->dir);
	printbuf_exit(&ctl->path);
	free(ctl->buf);
	free(ctl);
}
