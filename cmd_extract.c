// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs extract: copy files out of an unmounted filesystem (like
 * debugfs rdump). Opens read-only through the one engine path, walks the
 * tree with fsread.h and recreates it under DEST: data (sparse: holes in
 * the extents btree stay holes), modes, owners, atime/mtime, xattrs and
 * POSIX ACLs, symlinks, device nodes, fifos, sockets and hard links.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/btree/btree.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/format/format.h"
#include "libbcachefs/fs/fs.h"
#include "libbcachefs/fs/fsread.h"
#include "libbcachefs/util/util.h"

/* Deepest directory nesting followed (each level holds a descriptor). */
#define EXTRACT_MAX_DEPTH	400
#define EXTRACT_CHUNK		(1U << 20)

/* inode number -> path of its first copy (hard links), or a visited mark */
struct inum_map {
	uint64_t	*keys;		/* 0 = empty */
	char		**vals;
	size_t		nr, size;
};

static size_t map_slot(const struct inum_map *m, uint64_t k)
{
	size_t i = (size_t)((k * 0x9e3779b97f4a7c15ULL) >> 17) & (m->size - 1);

	while (m->keys[i] && m->keys[i] != k)
		i = (i + 1) & (m->size - 1);
	return i;
}

static char **map_get(struct inum_map *m, uint64_t k)
{
	size_t i;

	if (!m->size)
		return NULL;
	i = map_slot(m, k);
	return m->keys[i] ? &m->vals[i] : NULL;
}

static void map_set(struct inum_map *m, uint64_t k, char *v)
{
	size_t i;

	if ((m->nr + 1) * 2 > m->size) {
		struct inum_map n = { .size = m->size ? m->size * 2 : 256 };

		n.keys = xcalloc(n.size, sizeof(*n.keys));
		n.vals = xcalloc(n.size, sizeof(*n.vals));
		for (i = 0; i < m->size; i++)
			if (m->keys[i]) {
				size_t j = map_slot(&n, m->keys[i]);

				n.keys[j] = m->keys[i];
				n.vals[j] = m->vals[i];
				n.nr++;
			}
		free(m->keys);
		free(m->vals);
		*m = n;
	}
	i = map_slot(m, k);
	if (!m->keys[i]) {
		m->keys[i] = k;
		m->nr++;
	} else {
		free(m->vals[i]);
	}
	m->vals[i] = v;
}

static void map_free(struct inum_map *m)
{
	size_t i;

	for (i = 0; i < m->size; i++)
		free(m->vals[i]);
	free(m->keys);
	free(m->vals);
}

struct extract {
	struct bch_fs		*c;
	bool			ignore_errors;
	int			verbose;
	bool			root;		/* may chown, mknod devices */
	char			*dest;		/* DEST as given */
	struct printbuf		path;		/* current path inside the fs */
	size_t			path_base;	/* path + path_base = DEST-relative part */
	struct inum_map		links;		/* inum -> DEST-relative path of 1st copy */
	struct inum_map		dirs;		/* directories entered */
	unsigned long		nr_files, nr_failed;
	unsigned long		nr_repaired;	/* read from another replica */
	bool			stop;		/* an error without --ignore-errors */
	const char		*top_dest;	/* where PATH itself goes */
	bool			top_is_file;	/* PATH is not a directory */
};

/* Report a failure on the current path. */
__printf(2, 3) static void fail(struct extract *x, const char *fmt, ...)
{
	va_list args;

	fprintf(stderr, "bcachefs extract: %s: ", x->path.pos ? printbuf_str(&x->path) : "/");
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	x->nr_failed++;
	if (!x->ignore_errors)
		x->stop = true;
}

/*
 * A failure writing the destination: named by the destination path (where
 * the copy of the current path goes), with the path in the filesystem.
 */
__printf(2, 3) static void fail_dest(struct extract *x, const char *fmt, ...)
{
	const char *rel = printbuf_str(&x->path) + min_t(size_t, x->path_base, x->path.pos);
	va_list args;

	if (x->top_is_file || !*rel)
		fprintf(stderr, "bcachefs extract: %s: ", x->top_dest);
	else
		fprintf(stderr, "bcachefs extract: %s/%s: ", x->dest, rel);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fprintf(stderr, " (copying /%s)\n", printbuf_str(&x->path));
	x->nr_failed++;
	if (!x->ignore_errors)
		x->stop = true;
}

/* The library's lines (they say inode, offset, device, sector), on the path. */
static void print_err_lines(struct extract *x, struct printbuf *err)
{
	const char *s = printbuf_str(err);

	while (*s) {
		const char *nl = strchrnul(s, '\n');

		fprintf(stderr, "bcachefs extract: %s: %.*s\n",
			x->path.pos ? printbuf_str(&x->path) : "/", (int)(nl - s), s);
		s = *nl ? nl + 1 : nl;
	}
	printbuf_reset(err);
}

static void fail_err(struct extract *x, struct printbuf *err, const char *what, int ret)
{
	print_err_lines(x, err);
	fail(x, "%s: %s", what, bch_err_str(ret));
}

/* ---- attributes ---- */

struct xattr_ctx {
	struct extract	*x;
	int		fd;		/* or -1: use dirfd + name */
	int		dirfd;
	const char	*name;
	bool		symlink;
};

static int set_one_xattr(void *arg, unsigned x_type, const char *name,
			 size_t name_len, const void *val, size_t val_len)
{
	struct xattr_ctx *xc = arg;
	char full[300];
	void *conv = NULL;
	ssize_t n;
	int r;

	if (bch_xattr_full_name(x_type, name, name_len, full, sizeof(full)) < 0) {
		fail(xc->x, "xattr of unknown type %u skipped", x_type);
		return 0;
	}
	if (x_type == BCH_XATTR_INDEX_POSIX_ACL_ACCESS ||
	    x_type == BCH_XATTR_INDEX_POSIX_ACL_DEFAULT) {
		n = bch_acl_to_xattr(val, val_len, NULL, 0);
		if (n < 0) {
			fail(xc->x, "%s: malformed ACL", full);
			return 0;
		}
		conv = xmalloc((size_t)n);
		bch_acl_to_xattr(val, val_len, conv, (size_t)n);
		val = conv;
		val_len = (size_t)n;
	}

	if (xc->fd >= 0) {
		r = fsetxattr(xc->fd, full, val, val_len, 0);
	} else {
		/* symlinks and special files: by path, not following links */
		char p[32];

		snprintf(p, sizeof(p), "/proc/self/fd/%d", xc->dirfd);
		{
			struct printbuf pb = PRINTBUF;

			pr_buf(&pb, "%s/%s", p, xc->name);
			r = lsetxattr(printbuf_str(&pb), full, val, val_len, 0);
			printbuf_exit(&pb);
		}
	}
	if (r && !(xc->symlink && errno == EPERM))
		fail_dest(xc->x, "setting xattr %s: %s", full, strerror(errno));
	free(conv);
	return 0;
}

static void set_xattrs(struct extract *x, const struct bch_inode_unpacked *inode,
		       int fd, int dirfd, const char *name, bool symlink)
{
	struct xattr_ctx xc = { x, fd, dirfd, name, symlink };
	struct printbuf err = PRINTBUF;
	unsigned long bad = 0;
	int ret;

	ret = bch_xattr_list(x->c, inode->bi_inum, set_one_xattr, &xc, &bad, &err);
	if (ret < 0)
		fail_err(x, &err, "reading xattrs", ret);
	else if (bad)
		fail_err(x, &err, "some xattrs could not be read", -EIO);
	printbuf_exit(&err);
}

/* Owner, mode, times, in that order (chown clears set-id bits). */
static void set_attrs(struct extract *x, const struct bch_inode_unpacked *inode,
		      int fd, int dirfd, const char *name, bool symlink)
{
	struct bch_stat st;
	struct timespec ts[2];

	bch_inode_stat(x->c, inode, &st);
	if (x->root) {
		int r = fd >= 0 ? fchown(fd, st.uid, st.gid)
			: fchownat(dirfd, name, st.uid, st.gid, AT_SYMLINK_NOFOLLOW);
		if (r)
			fail_dest(x, "chown %u:%u: %s", st.uid, st.gid, strerror(errno));
	}
	if (!symlink) {
		int r = fd >= 0 ? fchmod(fd, st.mode & 07777)
			: fchmodat(dirfd, name, st.mode & 07777, 0);
		if (r)
			fail_dest(x, "chmod %o: %s", st.mode & 07777, strerror(errno));
	}
	ts[0] = st.atime;
	ts[1] = st.mtime;
	if (fd >= 0 ? futimens(fd, ts) : utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW))
		fail_dest(x, "setting times: %s", strerror(errno));
}

/* ---- one inode ---- */

static int extract_dir_contents(struct extract *x, uint64_t dir_inum, int fd, unsigned depth);
static void extract_inode(struct extract *x, int dirfd, const char *name,
			  uint64_t inum, unsigned depth);

struct write_ctx {
	int		fd;
	int		err;
};

static int write_chunk(void *arg, uint64_t offset, const void *buf, size_t len)
{
	struct write_ctx *w = arg;
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(w->fd, p, len, (off_t)offset);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			w->err = errno;
			return -1;
		}
		p += n;
		offset += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static void extract_reg(struct extract *x, int dirfd, const char *name,
			const struct bch_inode_unpacked *inode)
{
	struct printbuf err = PRINTBUF;
	struct write_ctx w = { .fd = -1 };
	struct bch_file f;
	bool partial = false;
	int ret;

	unlinkat(dirfd, name, 0);
	w.fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w.fd < 0) {
		fail_dest(x, "create: %s", strerror(errno));
		return;
	}
	bch_file_open(x->c, inode, &f);
	ret = bch_file_read_data(&f, 0, EXTRACT_CHUNK, write_chunk, &w,
				 x->ignore_errors ? &partial : NULL, &err);
	bch_file_close(&f);
	if (ret < 0 || w.err) {
		if (w.err)
			fail_dest(x, "write: %s", strerror(w.err));
		else
			fail_err(x, &err, "reading data", ret);
		if (!x->ignore_errors)
			goto out;
	} else if (partial) {
		fail_err(x, &err, "some data could not be read (written as zeroes)", -EIO);
	} else if (err.pos) {
		/* bad copies were skipped: every byte came from a good replica */
		print_err_lines(x, &err);
		fprintf(stderr, "bcachefs extract: %s: damaged copies skipped, "
			"the data was read from another replica and is correct\n",
			x->path.pos ? printbuf_str(&x->path) : "/");
		x->nr_repaired++;
	}
	if (ftruncate(w.fd, (off_t)inode->bi_size))
		fail_dest(x, "truncate to %" PRIu64 ": %s", inode->bi_size, strerror(errno));
	set_xattrs(x, inode, w.fd, dirfd, name, false);
	set_attrs(x, inode, w.fd, dirfd, name, false);
out:
	close(w.fd);
	printbuf_exit(&err);
}

static void extract_symlink(struct extract *x, int dirfd, const char *name,
			    const struct bch_inode_unpacked *inode)
{
	struct printbuf err = PRINTBUF;
	char target[PATH_MAX];
	ssize_t n = bch_readlink(x->c, inode, target, sizeof(target), &err);

	if (n < 0) {
		fail_err(x, &err, "reading symlink target", (int)n);
		goto out;
	}
	if (memchr(target, 0, (size_t)n))
		fail(x, "symlink target contains a NUL byte; cut there");
	unlinkat(dirfd, name, 0);
	if (symlinkat(target, dirfd, name)) {
		fail_dest(x, "symlink: %s", strerror(errno));
		goto out;
	}
	set_xattrs(x, inode, -1, dirfd, name, true);
	set_attrs(x, inode, -1, dirfd, name, true);
out:
	printbuf_exit(&err);
}

static void extract_special(struct extract *x, int dirfd, const char *name,
			    const struct bch_inode_unpacked *inode)
{
	unsigned type = inode->bi_mode & S_IFMT;
	dev_t rdev = 0;

	if (type == S_IFCHR || type == S_IFBLK) {
		if (!x->root) {
			fail(x, "device node not created (needs root)");
			return;
		}
		rdev = makedev(bch_inode_dev_major(inode->bi_dev),
			       bch_inode_dev_minor(inode->bi_dev));
	}
	unlinkat(dirfd, name, 0);
	if (mknodat(dirfd, name, type | 0600, rdev)) {
		fail_dest(x, "mknod: %s", strerror(errno));
		return;
	}
	set_xattrs(x, inode, -1, dirfd, name, false);
	set_attrs(x, inode, -1, dirfd, name, false);
}

static void extract_dir(struct extract *x, int dirfd, const char *name,
			const struct bch_inode_unpacked *inode, unsigned depth)
{
	struct stat st;
	int fd;

	if (map_get(&x->dirs, inode->bi_inum)) {
		fail(x, "directory inode %" PRIu64 " reached a second time (loop or directory hard link); skipped",
		     inode->bi_inum);
		return;
	}
	map_set(&x->dirs, inode->bi_inum, NULL);
	if (depth >= EXTRACT_MAX_DEPTH) {
		fail(x, "directories nested deeper than %u; skipped", EXTRACT_MAX_DEPTH);
		return;
	}
	if (mkdirat(dirfd, name, 0700) && errno != EEXIST) {
		fail_dest(x, "mkdir: %s", strerror(errno));
		return;
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		fail_dest(x, "open directory: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	/* so that we can create entries whatever the final mode */
	fchmod(fd, 0700);
	extract_dir_contents(x, inode->bi_inum, fd, depth + 1);
	set_xattrs(x, inode, fd, dirfd, name, false);
	set_attrs(x, inode, fd, dirfd, name, false);
	close(fd);
}

/* DEST-relative path of the current path, for link(). */
static char *dest_path(struct extract *x)
{
	struct printbuf p = PRINTBUF;

	pr_buf(&p, "%s", printbuf_str(&x->path) + min_t(size_t, x->path_base, x->path.pos));
	return p.buf ? p.buf : xstrdup("");
}

static void extract_inode(struct extract *x, int dirfd, const char *name,
			  uint64_t inum, unsigned depth)
{
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked inode;
	char **first;
	int ret;

	if (x->stop)
		return;
	ret = bch_inode_get(x->c, inum, &inode, &err);
	if (ret) {
		if (ret == -ENOENT)
			fail(x, "inode %" PRIu64 " is missing", inum);
		else
			fail_err(x, &err, "reading inode", ret);
		printbuf_exit(&err);
		return;
	}
	printbuf_exit(&err);

	if (x->verbose)
		printf("%s\n", x->path.pos ? printbuf_str(&x->path) : "/");
	x->nr_files++;

	if (!S_ISDIR(inode.bi_mode) && bch_inode_nlink_get(&inode) > 1) {
		first = map_get(&x->links, inum);
		if (first) {
			struct printbuf target = PRINTBUF;

			pr_buf(&target, "%s/%s", x->dest, *first);
			unlinkat(dirfd, name, 0);
			if (linkat(AT_FDCWD, printbuf_str(&target), dirfd, name, 0))
				fail_dest(x, "link to %s: %s", printbuf_str(&target), strerror(errno));
			printbuf_exit(&target);
			return;
		}
	}

	switch (inode.bi_mode & S_IFMT) {
	case S_IFDIR:
		extract_dir(x, dirfd, name, &inode, depth);
		return;
	case S_IFREG:
		extract_reg(x, dirfd, name, &inode);
		break;
	case S_IFLNK:
		extract_symlink(x, dirfd, name, &inode);
		break;
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		extract_special(x, dirfd, name, &inode);
		break;
	default:
		fail(x, "inode %" PRIu64 " has unknown file type (mode %o)", inum, inode.bi_mode);
		return;
	}
	if (bch_inode_nlink_get(&inode) > 1)
		map_set(&x->links, inum, dest_path(x));
}

struct dirent_list {
	struct dirent_ent {
		char		*name;
		uint64_t	inum;
	}		*v;
	size_t		nr, size;
};

static int collect_dirent(void *arg, const char *name, size_t len, uint64_t inum,
			  unsigned d_type, uint64_t cookie)
{
	struct dirent_list *l = arg;

	if (l->nr == l->size) {
		l->size = l->size ? l->size * 2 : 32;
		l->v = xrealloc(l->v, l->size * sizeof(*l->v));
	}
	l->v[l->nr].name = xstrdup(name);
	l->v[l->nr].inum = inum;
	l->nr++;
	return 0;
}

static int extract_dir_contents(struct extract *x, uint64_t dir_inum, int fd, unsigned depth)
{
	struct printbuf err = PRINTBUF;
	struct dirent_list l = { 0 };
	unsigned long bad = 0;
	size_t i, saved = x->path.pos;
	int ret;

	/* collect first: the iterator is not held across the recursion */
	ret = bch_readdir(x->c, dir_inum, 0, collect_dirent, &l, &bad, &err);
	if (ret < 0)
		fail_err(x, &err, "reading directory", ret);
	else if (bad)
		fail_err(x, &err, "some directory entries could not be read", -EIO);

	for (i = 0; i < l.nr && !x->stop; i++) {
		if (x->path.pos)
			pr_char(&x->path, '/');
		pr_str(&x->path, l.v[i].name);
		extract_inode(x, fd, l.v[i].name, l.v[i].inum, depth);
		x->path.pos = saved;
		if (x->path.buf)
			x->path.buf[saved] = 0;
	}
	for (i = 0; i < l.nr; i++)
		free(l.v[i].name);
	free(l.v);
	printbuf_exit(&err);
	return ret;
}

/* ---- command ---- */

struct extract_args {
	bool			ignore_errors;
	struct bch_fs_opts	fo;
};

static const struct cmd_opt extract_opts[] = {
	CMD_OPT_PASSPHRASE_FILE(struct extract_args, fo),
	CMD_OPT_DEGRADED("copy even when member devices are missing (each is\n"
			 "named; files only on them cannot be read)", struct extract_args, fo),
	CMD_OPT_BOOL(0, "ignore-errors", "copy what can be read, list what could not\n"
		     "(the exit status is still 1)", struct extract_args, ignore_errors),
	CMD_OPT_COUNT('v', "verbose", "print each path as it is copied", struct extract_args,
		      fo.verbose),
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def extract_def = {
	.name		= "extract",
	.args		= "DEVICE... PATH DEST",
	.about		= "Copy PATH (a file or directory; \"/\" for everything) out of an unmounted\n"
			  "filesystem to DEST, keeping modes, owners, times, xattrs, symlinks, device\n"
			  "nodes, hard links and holes.\n"
			  "\n"
			  "A directory PATH is copied into DEST (created if missing); a file PATH is\n"
			  "written to DEST, or into DEST if that is a directory.",
	.opts		= extract_opts,
	.min_args	= 3,
	.no_args_msg	= "need DEVICE..., PATH and DEST",
	.help_col	= 30,
};

int cmd_extract(int argc, char *argv[])
{
	struct extract_args a = { .fo = { .read_only = true, .ask_passphrase = true } };
	struct bch_fs_opts *fo = &a.fo;
	struct extract x = { .root = geteuid() == 0 };
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked inode;
	const char *src;
	char *dest_copy, *parent, *base, *top_dest;
	struct stat st;
	uint64_t inum;
	int ret, pfd, nr_devs;
	int first = cmd_parse(&extract_def, &a, argc, argv);

	x.ignore_errors = a.ignore_errors;
	x.verbose = fo->verbose;
	nr_devs = argc - first - 2;
	src = argv[argc - 2];
	x.dest = argv[argc - 1];

	ret = bch_fs_open(argv + first, (unsigned)nr_devs, fo, &x.c, &err);
	if (ret) {
		cmd_open_failed(argv[first], ret, &err, cmd_missing_hint(argv + first, nr_devs, fo, ret, &err));
		exit(EXIT_FAIL);
	}
	if (x.verbose)
		fputs(printbuf_str(&err), stderr);
	printbuf_reset(&err);
	cmd_note_missing(x.c);
	/* stale cached copies are judged by the alloc btree's bucket gens */
	ret = bch_btree_read_bucket_gens(x.c, &err);
	if (ret)
		fprintf(stderr, "bcachefs extract: cannot read bucket generations (%s); cached copies are trusted\n",
			bch_err_str(ret));
	printbuf_reset(&err);

	ret = bch_lookup_path(x.c, src, &inum, &err);
	if (!ret)
		ret = bch_inode_get(x.c, inum, &inode, &err);
	if (ret) {
		fputs(printbuf_str(&err), stderr);
		bch_fs_close(x.c);
		die("%s: %s", src, bch_err_str(ret));
	}

	/* where the copy goes: parent directory + name */
	if (!S_ISDIR(inode.bi_mode) && !stat(x.dest, &st) && S_ISDIR(st.st_mode)) {
		const char *b = strrchr(src, '/');
		struct printbuf d = PRINTBUF;

		b = b ? b + 1 : src;
		pr_buf(&d, "%s/%s", x.dest, *b ? b : "file");
		x.dest = d.buf;
	} else {
		x.dest = xstrdup(x.dest);
	}
	dest_copy = xstrdup(x.dest);
	parent = dirname(dest_copy);
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		/* the destination cannot be created: name it, not the source */
		fprintf(stderr, "%s: %s: %s (its directory %s cannot be opened)\n",
			bch_cmd_name, x.dest, strerror(errno), parent);
		exit(EXIT_FAIL);
	}
	free(dest_copy);
	dest_copy = xstrdup(x.dest);
	base = basename(dest_copy);
	if (!strcmp(base, "/") || !strcmp(base, ".") || !strcmp(base, "..")) {
		/* DEST "/", "." or "..": copy into it as it is */
		close(pfd);
		pfd = AT_FDCWD;
		base = x.dest;
	}
	/* messages name paths inside the filesystem, without the leading '/' */
	{
		const char *s = src;

		while (*s == '/')
			s++;
		pr_str(&x.path, s);
		while (x.path.pos && x.path.buf[x.path.pos - 1] == '/')
			x.path.buf[--x.path.pos] = 0;
	}
	x.top_dest = top_dest = xstrdup(x.dest);
	x.top_is_file = !S_ISDIR(inode.bi_mode);
	/* hard link targets are DEST-relative: make DEST the directory itself */
	if (S_ISDIR(inode.bi_mode)) {
		x.path_base = x.path.pos ? x.path.pos + 1 : 0;
		extract_inode(&x, pfd, base, inum, 0);
	} else {
		char *d2 = xstrdup(x.dest);

		free(x.dest);
		x.dest = xstrdup(dirname(d2));
		free(d2);
		extract_inode(&x, pfd, base, inum, 0);
	}
	if (pfd >= 0)
		close(pfd);
	free(dest_copy);

	if (x.nr_failed)
		fprintf(stderr, "bcachefs extract: %lu error(s) while copying %lu files%s\n",
			x.nr_failed, x.nr_files,
			x.ignore_errors ? "" : " (stopped at the first; --ignore-errors goes on)");
	else if (x.verbose)
		fprintf(stderr, "bcachefs extract: %lu files copied\n", x.nr_files);
	if (x.nr_repaired)
		fprintf(stderr, "bcachefs extract: %lu file%s had damaged copies; "
			"read from good replicas\n", x.nr_repaired, x.nr_repaired > 1 ? "s" : "");

	map_free(&x.links);
	map_free(&x.dirs);
	printbuf_exit(&x.path);
	printbuf_exit(&err);
	free(x.dest);
	free(top_dest);
	bch_fs_close(x.c);
	return x.nr_failed ? EXIT_FAIL : EXIT_OK;
}
