// SPDX-License-Identifier: GPL-2.0
/*
 * The FUSE xattr operations (mount/fuse_ops.h): list, get, set and remove,
 * the inode's options as "bcachefs.NAME" xattrs (fs/inode_opts.h), and the
 * quota report and limits through xattrs of the root directory (FUSE has
 * no quotactl).
 */
#include "mount/fuse_ops.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "util/errcode.h"
#include "format/format.h"
#include "fs/fsops.h"
#include "fs/fsread.h"
#include "fs/inode_opts.h"
#include "fs/quota.h"
#include "bkey/inode.h"
#include "util/util.h"

static int listxattr_fn(void *arg, unsigned x_type, const char *name,
			size_t name_len, const void *val, size_t val_len)
{
	struct printbuf *names = arg;
	char full[300];
	int n = bch_xattr_full_name(x_type, name, name_len, full, sizeof(full));

	/* unknown types and names with a NUL cannot be asked for: not listed */
	if (n > 0 && strlen(full) == (size_t)n)
		pr_bytes(names, full, (size_t)n + 1);
	return 0;
}

void bf_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct printbuf err = PRINTBUF, names = PRINTBUF;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	struct bch_inode_unpacked inode;
	unsigned long nr_bad = 0;
	int ret;

	if (!bf_get_inode(bf, req, inum, "listxattr", &inode))
		goto out;
	/* the inode's options first, as "bcachefs.NAME" (fs/inode_opts.h) */
	bch_inode_opts_xattr_list(&names, &inode);
	ret = bch_xattr_list(bf->c, inum, listxattr_fn, &names, &nr_bad, &err);
	if (nr_bad)
		bf_log(bf, &err, "listxattr of inode %" PRIu64 ": %lu xattrs could not be decoded and were skipped",
		       inum, nr_bad);
	if (ret < 0) {
		bf_log(bf, nr_bad ? NULL : &err, "listxattr of inode %" PRIu64 " failed: %s",
		       inum, bch_err_str(ret));
		fuse_reply_err(req, bf_errno(ret));
	} else if (!size) {
		fuse_reply_xattr(req, names.pos);
	} else if (names.pos > size) {
		fuse_reply_err(req, ERANGE);
	} else {
		fuse_reply_buf(req, names.buf, names.pos);
	}
out:
	printbuf_exit(&names);
	printbuf_exit(&err);
}

/*
 * Quotas through the root directory (FUSE has no quotactl; fs/quota.h):
 * getxattr "bcachefs_quota.report" is the report of every counted type,
 * its first 60 KiB of whole lines; "bcachefs_quota.report.N" the lines
 * from line N on (a page; empty at the end);
 * setxattr "bcachefs_quota.TYPE.ID" (TYPE user, group or project) with
 * "space_hard=SECTORS,space_soft=...,inodes_hard=N,inodes_soft=N" sets
 * limits (root only). What `bcachefs quota` uses. Returns false when
 * @name is not one of these (an ordinary xattr).
 */
#define QUOTA_XATTR_PREFIX	"bcachefs_quota."
#define QUOTA_XATTR_PAGE	(60U << 10)

static bool quota_xattr(struct bch_fuse *bf, fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, bool set)
{
	struct bch_quota_table *q = bch_quota_running(bf->c);
	struct printbuf out = PRINTBUF;
	const char *what;

	if (strncmp(name, QUOTA_XATTR_PREFIX, strlen(QUOTA_XATTR_PREFIX)) ||
	    bch_fuse_ino_to_inum(ino) != BCACHEFS_ROOT_INO)
		return false;
	what = name + strlen(QUOTA_XATTR_PREFIX);
	if (!q) {
		fuse_reply_err(req, EOPNOTSUPP);
	} else if (!set) {
		unsigned long long from = 0;
		char *e = NULL;

		if (!strncmp(what, "report.", 7)) {
			errno = 0;
			from = strtoull(what + 7, &e, 10);
		}
		if (strcmp(what, "report") && (!e || errno || e == what + 7 || *e)) {
			fuse_reply_err(req, ENODATA);
		} else {
			/*
			 * The lines from line @from on, as many as fit an xattr
			 * value (the kernel takes 64 KiB at most): the command
			 * asks for the next page from the next line.
			 */
			const char *p, *start, *end;

			bch_quota_report(&out, q);
			p = printbuf_str(&out);
			for (; from && *p; from--)
				p = strchr(p, '\n') + 1;
			start = end = p;
			while (*p && (size_t)(strchr(p, '\n') + 1 - start) <= QUOTA_XATTR_PAGE) {
				p = strchr(p, '\n') + 1;
				end = p;
			}
			if (!size)
				fuse_reply_xattr(req, (size_t)(end - start));
			else if ((size_t)(end - start) > size)
				fuse_reply_err(req, ERANGE);
			else
				fuse_reply_buf(req, start, (size_t)(end - start));
		}
	} else {
		char type_name[16], val[256], *e;
		const char *dot = strchr(what, '.');
		struct bch_quota_h lim;
		unsigned long long id;
		int type = -1, ret;

		if (dot && (size_t)(dot - what) < sizeof(type_name)) {
			memcpy(type_name, what, (size_t)(dot - what));
			type_name[dot - what] = '\0';
			type = bch_quota_type_lookup(type_name);
		}
		errno = 0;
		id = dot ? strtoull(dot + 1, &e, 10) : 0;
		if (type < 0 || errno || e == dot + 1 || *e || id > UINT32_MAX ||
		    size >= sizeof(val) || memchr(value, 0, size)) {
			fuse_reply_err(req, EINVAL);
			goto out;
		}
		if (fuse_req_ctx(req)->uid) {
			fuse_reply_err(req, EPERM);
			goto out;
		}
		memcpy(val, value, size);
		val[size] = '\0';
		bch_quota_limits_get(q, (unsigned)type, (uint32_t)id, &lim);
		ret = bch_quota_limits_parse(val, &lim);
		if (!ret)
			ret = bch_quota_limits_set(bf->c, (unsigned)type, (uint32_t)id, &lim, &out);
		if (ret)
			bf_reply_ret(bf, req, ret, &out, "set quota limits", BCACHEFS_ROOT_INO);
		else
			fuse_reply_err(req, 0);
	}
out:
	printbuf_exit(&out);
	return true;
}

void bf_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct printbuf err = PRINTBUF;
	struct bch_inode_unpacked inode;
	void *buf = NULL;
	ssize_t n;

	if (quota_xattr(bf, req, ino, name, NULL, size, false))
		goto out;
	if (!bf_get_inode(bf, req, bch_fuse_ino_to_inum(ino), "getxattr", &inode))
		goto out;
	if (size)
		buf = xmalloc(size);
	n = bch_xattr_get(bf->c, &inode, name, buf, size, &err);
	if (n < 0) {
		/* a user's asking wrongly is not worth a log line; EINVAL: "bcachefs.BAD" */
		bool asked = n == -ENODATA || n == -ERANGE || n == -EOPNOTSUPP || n == -EINVAL;

		if (!asked)
			bf_log(bf, &err, "getxattr %s of inode %" PRIu64 " failed: %s",
			       name, inode.bi_inum, bch_err_str((int)n));
		fuse_reply_err(req, asked ? (int)-n : bf_errno((int)n));
	} else if (!size) {
		fuse_reply_xattr(req, (size_t)n);
	} else {
		fuse_reply_buf(req, buf, (size_t)n);
	}
	free(buf);
out:
	printbuf_exit(&err);
}

void bf_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		 size_t size, int flags)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	int ret;

	if (quota_xattr(bf, req, ino, name, value, size, true))
		goto out;
	ret = bch_fs_xattr_set(bf->c, inum, name, value, size,
			       (flags & XATTR_CREATE ? BCH_XATTR_CREATE : 0) |
			       (flags & XATTR_REPLACE ? BCH_XATTR_REPLACE : 0), &err);
	if (ret)
		bf_reply_ret(bf, req, ret, &err, "setxattr", inum);
	else
		fuse_reply_err(req, 0);
out:
	printbuf_exit(&err);
}

void bf_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct bch_fuse *bf = bf_req_fs(req);
	struct printbuf err = PRINTBUF;
	uint64_t inum = bch_fuse_ino_to_inum(ino);
	int ret = bch_fs_xattr_remove(bf->c, inum, name, &err);

	if (ret)
		bf_reply_ret(bf, req, ret, &err, "removexattr", inum);
	else
		fuse_reply_err(req, 0);
	printbuf_exit(&err);
}
