// SPDX-License-Identifier: GPL-2.0
/*
 * The attribute operations of the running filesystem (fsops.h): setattr
 * (mode and its ACL, owner, times, size), xattr set and remove (POSIX
 * ACLs, the inode's options as "bcachefs.NAME"), and the atime of a read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "alloc/alloc.h"
#include "alloc/space.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "btree/bulk.h"
#include "bkey/dirent.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fs/fsops.h"
#include "fs/fsops_int.h"
#include "fs/fsread.h"
#include "fs/inode_opts.h"
#include "bkey/inode.h"
#include "fs/io_read.h"
#include "fs/io_write.h"
#include "btree/node_write.h"
#include "dev/super.h"
#include "util/util.h"
#include "bkey/xattr.h"

/* ---- setattr ---------------------------------------------------------------------- */

static int fs_setattr(struct bch_fs *c, uint64_t inum, const struct bch_setattr *sa,
		   struct bch_inode_unpacked *out, struct printbuf *err)
{
	struct bch_inode_unpacked u;
	struct btree_trans t;
	uint64_t now;
	int ret = inode_read(c, inum, &u, err);

	if (ret)
		return ret;
	if (sa->valid & BCH_SET_SIZE) {
		if (is_dir(&u))
			return -EISDIR;
		if (!S_ISREG(u.bi_mode))
			return -EINVAL;
		if (sa->size > (uint64_t)INT64_MAX)
			return -EFBIG;
	}
	now = bch_fs_now(c);
	bch_trans_init(&t, c);
	if (sa->valid & BCH_SET_SIZE && sa->size != u.bi_size) {
		ret = truncate_updates(c, &t, &u, sa->size, err);
		if (ret)
			goto out;
		u.bi_mtime = now;
	}
	if (sa->valid & BCH_SET_MODE) {
		uint8_t acl[ACL_VFS_MAX];
		ssize_t n;

		u.bi_mode = (uint16_t)((u.bi_mode & S_IFMT) | (sa->mode & 07777));
		/* an access ACL follows the mode */
		n = S_ISLNK(u.bi_mode) ? 0
			: acl_get(c, &u, BCH_XATTR_INDEX_POSIX_ACL_ACCESS, acl, sizeof(acl));
		if (n > 0) {
			acl_chmod(acl, (size_t)n, u.bi_mode);
			ret = acl_put(c, &t, &u, BCH_XATTR_INDEX_POSIX_ACL_ACCESS, acl, (size_t)n, err);
			if (ret)
				goto out;
		}
	}
	if (sa->valid & BCH_SET_UID)
		u.bi_uid = sa->uid;
	if (sa->valid & BCH_SET_GID)
		u.bi_gid = sa->gid;
	if (sa->valid & BCH_SET_PROJECT)
		u.bi_project = sa->project;
	if (sa->valid & BCH_SET_ATIME_NOW)
		u.bi_atime = now;
	else if (sa->valid & BCH_SET_ATIME)
		u.bi_atime = bch_fs_time(c, &sa->atime);
	if (sa->valid & BCH_SET_MTIME_NOW)
		u.bi_mtime = now;
	else if (sa->valid & BCH_SET_MTIME)
		u.bi_mtime = bch_fs_time(c, &sa->mtime);
	u.bi_ctime = sa->valid & BCH_SET_CTIME ? bch_fs_time(c, &sa->ctime) : now;
	trans_inode(&t, &u);
	ret = bch_trans_commit(&t, err);
	if (!ret && out)
		*out = u;
out:
	bch_trans_exit(&t);
	return ret;
}

/* ---- xattrs ------------------------------------------------------------------------ */

static int xattr_prepare(struct bch_fs *c, uint64_t inum, const char *full_name,
			 struct bch_inode_unpacked *u, struct hash_desc *h, unsigned *type,
			 const char **name, size_t *len, struct printbuf *err)
{
	int ret = bch_xattr_parse_name(full_name, type, name, len);

	if (ret)
		return ret;
	if (*len > 255)
		return -ERANGE;
	if ((*type == BCH_XATTR_INDEX_POSIX_ACL_ACCESS ||
	     *type == BCH_XATTR_INDEX_POSIX_ACL_DEFAULT) && !BCH_SB_POSIX_ACL(c->sb))
		return -EOPNOTSUPP;
	ret = inode_read(c, inum, u, err);
	if (!ret)
		ret = hash_desc_init(h, BTREE_ID_XATTRS, u, err);
	return ret;
}

/*
 * The mode bits a POSIX access ACL in the VFS form implies (what the
 * kernel's posix_acl_update_mode does for local filesystems): owner from
 * USER_OBJ, group from MASK (or GROUP_OBJ without one), other from OTHER.
 * -EINVAL for a malformed ACL.
 */
static int acl_mode(const uint8_t *v, size_t len, unsigned *mode)
{
	unsigned user = 0, group = 0, mask = 0, other = 0;
	bool have_mask = false;

	if (len < 4 || get_le32_unaligned(v) != 2 || (len - 4) % 8)
		return -EINVAL;
	for (size_t i = 4; i < len; i += 8) {
		unsigned tag = get_le16_unaligned(v + i), perm = get_le16_unaligned(v + i + 2) & 7;

		switch (tag) {
		case 0x01: user = perm; break;
		case 0x04: group = perm; break;
		case 0x10: mask = perm; have_mask = true; break;
		case 0x20: other = perm; break;
		case 0x02: case 0x08: break;
		default: return -EINVAL;
		}
	}
	*mode = user << 6 | (have_mask ? mask : group) << 3 | other;
	return 0;
}

/*
 * A compression option set at run time sets the superblock's feature bit
 * of that compression (features[0] bit 0 lz4, 1 gzip, 2 zstd), as the 2018
 * kernel did (doc/format.md §8): @stored is the option + 1 (0 unset, 1 none).
 */
static int compression_feature_set(struct bch_fs *c, uint64_t stored, struct printbuf *err)
{
	uint64_t bit, f;

	if (stored < 2 || stored > 4)
		return 0;
	bit = 1ULL << (stored - 2);
	f = le64_to_cpu(c->sb->features[0]);
	if (f & bit)
		return 0;
	c->sb->features[0] = cpu_to_le64(f | bit);
	return bch_fs_rw_write_sb(c, err);
}

/*
 * "bcachefs.NAME": option NAME of the inode, stored in its option field
 * (value + 1), never as an xattr key (doc/format.md §5.7). @val NULL removes it.
 */
static int inode_opt_xattr_set(struct bch_fs *c, uint64_t inum, const char *full_name,
			       const void *val, size_t size, unsigned flags,
			       struct printbuf *err)
{
	int id = bch_inode_opt_lookup(full_name + strlen(BCH_INODE_OPT_XATTR_PREFIX));
	struct bch_inode_unpacked u;
	struct btree_trans t;
	uint64_t stored = 0;
	int ret;

	if (id < 0)
		return -EINVAL;
	if (val && (ret = bch_inode_opt_parse(c, (unsigned)id, val, size, &stored, err)))
		return ret;
	ret = inode_read(c, inum, &u, err);
	if (ret)
		return ret;
	if (bch_inode_opt_get(&u, (unsigned)id) ? (flags & BCH_XATTR_CREATE) != 0
						: (flags & BCH_XATTR_REPLACE) || !val)
		return bch_inode_opt_get(&u, (unsigned)id) ? -EEXIST : -ENODATA;
	bch_inode_opt_set(&u, (unsigned)id, stored);
	u.bi_ctime = bch_fs_now(c);
	bch_trans_init(&t, c);
	trans_inode(&t, &u);
	ret = bch_trans_commit(&t, err);
	bch_trans_exit(&t);
	if (!ret && (id == BCH_INODE_OPT_compression || id == BCH_INODE_OPT_background_compression))
		ret = compression_feature_set(c, stored, err);
	return ret;
}

int bch_fs_xattr_set(struct bch_fs *c, uint64_t inum, const char *full_name,
		     const void *val, size_t size, unsigned flags, struct printbuf *err)
{
	if (!strncmp(full_name, BCH_INODE_OPT_XATTR_PREFIX, strlen(BCH_INODE_OPT_XATTR_PREFIX)))
		return inode_opt_xattr_set(c, inum, full_name, val, size, flags, err);

	uint8_t acl[SLOT_VAL_MAX];
	struct bch_inode_unpacked u;
	struct hash_desc h;
	struct btree_trans t;
	struct slot *s;
	const char *name;
	size_t len;
	uint64_t off;
	unsigned type, mode;
	bool found, remove = false;
	int ret;

	ret = xattr_prepare(c, inum, full_name, &u, &h, &type, &name, &len, err);
	if (ret)
		return ret;
	if (type == BCH_XATTR_INDEX_POSIX_ACL_ACCESS || type == BCH_XATTR_INDEX_POSIX_ACL_DEFAULT) {
		ssize_t n = bch_acl_from_xattr(val, size, type, acl, sizeof(acl));

		if (n == -E2BIG)
			return -E2BIG;
		if (n < 0)
			return -EINVAL;
		if (type == BCH_XATTR_INDEX_POSIX_ACL_DEFAULT && !is_dir(&u))
			return n ? -EACCES : 0;
		if (type == BCH_XATTR_INDEX_POSIX_ACL_ACCESS) {
			/* the mode follows the ACL (posix_acl_update_mode) */
			if (acl_mode(val, size, &mode))
				return -EINVAL;
			u.bi_mode = (uint16_t)((u.bi_mode & ~0777U) | mode);
		}
		/* nothing to store: an ACL the mode says, or an empty one */
		remove = !n;
		val = acl;
		size = (size_t)n;
	}

	s = xmalloc(sizeof(*s));
	bch_trans_init(&t, c);
	ret = hash_find(c, &t, &h, bch_xattr_hash(&h.info, type, name, len), type, name, len,
			&off, s);
	found = !ret;
	if (ret && ret != -ENOENT)
		goto out;
	ret = 0;
	if (found && (flags & BCH_XATTR_CREATE))
		ret = -EEXIST;
	else if (!found && (flags & BCH_XATTR_REPLACE) && !remove)
		ret = -ENODATA;
	else if (remove)
		ret = found ? hash_delete(c, &t, &h, off) : 0;
	else
		ret = xattr_put(c, &t, &u, type, name, len, val, size, NULL, err);
	if (!ret) {
		u.bi_ctime = bch_fs_now(c);
		trans_inode(&t, &u);
		ret = bch_trans_commit(&t, err);
	}
out:
	bch_trans_exit(&t);
	free(s);
	return ret;
}

static int fs_xattr_remove(struct bch_fs *c, uint64_t inum, const char *full_name,
			struct printbuf *err)
{
	struct bch_inode_unpacked u;
	struct hash_desc h;
	struct btree_trans t;
	const char *name;
	size_t len;
	unsigned type;
	bool found;
	int ret;

	if (!strncmp(full_name, BCH_INODE_OPT_XATTR_PREFIX, strlen(BCH_INODE_OPT_XATTR_PREFIX)))
		return inode_opt_xattr_set(c, inum, full_name, NULL, 0, 0, err);
	ret = xattr_prepare(c, inum, full_name, &u, &h, &type, &name, &len, err);
	if (ret == -ERANGE)
		return -ENODATA;
	if (ret)
		return ret;
	bch_trans_init(&t, c);
	ret = xattr_del(c, &t, &u, type, name, len, &found, err);
	if (!ret && !found)
		ret = -ENODATA;
	if (!ret) {
		u.bi_ctime = bch_fs_now(c);
		trans_inode(&t, &u);
		ret = bch_trans_commit(&t, err);
	}
	bch_trans_exit(&t);
	return ret;
}

/* ---- atime ------------------------------------------------------------------------ */

int bch_fs_read_atime(struct bch_fs *c, uint64_t inum, struct printbuf *err)
{
	struct bch_inode_unpacked u;
	struct btree_trans t;
	int64_t now, at, tp = le32_to_cpu(c->sb->time_precision) ?: 1;
	int ret = inode_read(c, inum, &u, err);

	if (ret)
		return ret;
	now = (int64_t)bch_fs_now(c);
	at = (int64_t)u.bi_atime;
	/* relatime: older than the last change, or a day old */
	if (at > (int64_t)u.bi_mtime && at > (int64_t)u.bi_ctime &&
	    now - at < (int64_t)(86400LL * 1000000000LL / tp))
		return 0;
	u.bi_atime = (uint64_t)now;
	bch_trans_init(&t, c);
	trans_inode(&t, &u);
	ret = bch_trans_commit(&t, err);
	bch_trans_exit(&t);
	return ret;
}

/*
 * ---- operations that free space: the recovery reserve (doc/engine.md §8.6) ----
 */

int bch_fs_setattr(struct bch_fs *c, uint64_t inum, const struct bch_setattr *sa,
		   struct bch_inode_unpacked *out, struct printbuf *err)
{
	bool old = bch_fs_rw_use_reserve(c, true);
	int ret = fs_setattr(c, inum, sa, out, err);

	bch_fs_rw_use_reserve(c, old);
	return ret;
}

int bch_fs_xattr_remove(struct bch_fs *c, uint64_t inum, const char *full_name,
			struct printbuf *err)
{
	bool old = bch_fs_rw_use_reserve(c, true);
	int ret = fs_xattr_remove(c, inum, full_name, err);

	bch_fs_rw_use_reserve(c, old);
	return ret;
}
