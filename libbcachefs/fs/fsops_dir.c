// SPDX-License-Identifier: GPL-2.0
/*
 * The namespace operations of the running filesystem (fsops.h): create
 * (files, directories, device nodes, fifos, sockets, symlinks; inode
 * numbers, default ACLs), link, unlink and rmdir, the removal of an inode
 * (its extents, dirents and xattrs), and rename. The helpers they share
 * with the other operations are in fsops.c (fsops_int.h).
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

/* ---- inodes --------------------------------------------------------------- */

static unsigned mode_to_dt(unsigned mode)
{
	return (mode >> 12) & 15;
}

static bool nlink_dec(struct bch_inode_unpacked *u)
{
	if (!u->bi_nlink)
		return false;
	u->bi_nlink--;
	return true;
}

/* At most this many freed inode numbers are kept for reuse (8 MiB). */
#define INUM_FREE_MAX	(1U << 20)

/* Keep @inum, whose inode is being deleted, for inode_alloc(). */
static void inum_free_push(struct bch_fs *c, uint64_t inum)
{
	uint64_t *h;
	size_t i;

	if (c->nr_inum_free >= INUM_FREE_MAX)
		return;
	if (c->nr_inum_free == c->inum_free_size) {
		c->inum_free_size = c->inum_free_size ? 2 * c->inum_free_size : 64;
		c->inum_free = xrealloc(c->inum_free, c->inum_free_size * sizeof(*c->inum_free));
	}
	h = c->inum_free;
	for (i = c->nr_inum_free++; i && h[(i - 1) / 2] > inum; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = inum;
}

/* The smallest kept number (there is one). */
static uint64_t inum_free_pop(struct bch_fs *c)
{
	uint64_t *h = c->inum_free, top = h[0], last = h[--c->nr_inum_free];
	size_t i = 0, n = c->nr_inum_free;

	while (2 * i + 1 < n) {
		size_t m = 2 * i + 1;

		if (m + 1 < n && h[m + 1] < h[m])
			m++;
		if (h[m] >= last)
			break;
		h[i] = h[m];
		i = m;
	}
	if (n)
		h[i] = last;
	return top;
}

/* The generation a new inode in @k's slot takes (@k not an inode key). */
static uint32_t slot_gen(const struct bkey_ref *k)
{
	struct bch_inode_generation g;

	if (k->k.type != BCH_INODE_GENERATION || k->v_bytes < sizeof(g))
		return 0;
	memcpy(&g, k->v, sizeof(g));
	return le32_to_cpu(g.bi_generation);
}

/*
 * Is the slot of inode number @inum free (no inode key: a generation key,
 * whose generation goes to *@gen, or nothing)? 1 free, 0 used, or an error.
 */
static int inode_slot_free(struct bch_fs *c, uint64_t inum, uint32_t *gen,
			   struct printbuf *ierr)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	bch_btree_iter_init_range(&iter, c, BTREE_ID_INODES, POS_H(inum, 0), POS_H(inum, 0), ierr);
	ret = bch_btree_iter_peek(&iter, &k);
	if (!ret) {
		*gen = 0;
		ret = 1;
		if (k && k->k.p.inode == inum) {
			if (k->k.type == BCH_INODE_FS || k->k.type == BCH_INODE_BLOCKDEV)
				ret = 0;
			else
				*gen = slot_gen(k);
		}
	}
	bch_btree_iter_exit(&iter);
	return ret;
}

/*
 * A free inode number (doc/format.md §5.5.6). First the numbers freed since
 * the open, smallest first: their slots hold generation keys, which exist
 * for this (the new inode takes the next generation, *@gen), and a tree
 * that deletes and creates files then does not fill with them. Else from
 * max(hint, 4096) up, wrapping once to 4096, the first without an inode key
 * (a generation key's slot is free: *@gen is its generation). Below 2^32
 * with inodes_32bit.
 */
static int inode_alloc(struct bch_fs *c, uint64_t *inum, uint32_t *gen, struct printbuf *err)
{
	uint64_t max = BCH_SB_INODE_32BIT(c->sb) ? UINT32_MAX : UINT64_MAX;
	uint64_t start = c->inode_hint > BCACHEFS_ROOT_INO ? c->inode_hint : BCACHEFS_ROOT_INO;
	struct printbuf ierr = PRINTBUF;
	int ret = -BCH_ERR_nospc;

	while (c->nr_inum_free) {
		uint64_t n = inum_free_pop(c);

		if (n <= BCACHEFS_ROOT_INO || n > max)
			continue;
		ret = inode_slot_free(c, n, gen, &ierr);
		if (ret < 0) {
			pr_buf(err, "cannot read the inodes btree: %s", printbuf_str(&ierr));
			printbuf_exit(&ierr);
			return ret;
		}
		if (ret) {
			*inum = n;
			printbuf_exit(&ierr);
			return 0;
		}
	}
	ret = -BCH_ERR_nospc;
	if (start > max)
		start = BCACHEFS_ROOT_INO;
	for (int pass = 0; pass < 2 && ret == -BCH_ERR_nospc; pass++) {
		uint64_t want = pass ? BCACHEFS_ROOT_INO : start;
		uint64_t end = pass ? start : max;
		struct btree_iter iter;
		struct bkey_ref *k;

		bch_btree_iter_init_range(&iter, c, BTREE_ID_INODES, POS_H(want, 0),
					  POS_H(end, 0), &ierr);
		while (want <= end) {
			int r = bch_btree_iter_peek(&iter, &k);

			if (r) {
				ret = r;
				break;
			}
			if (!k || k->k.p.inode > want) {
				*gen = 0;
				ret = 0;
				break;
			}
			if (k->k.type != BCH_INODE_FS && k->k.type != BCH_INODE_BLOCKDEV) {
				*gen = slot_gen(k);
				ret = 0;
				break;
			}
			if (want == end)
				break;
			want = k->k.p.inode + 1;
			bch_btree_iter_advance(&iter);
		}
		bch_btree_iter_exit(&iter);
		if (!ret)
			*inum = want;
	}
	if (ret == -BCH_ERR_nospc)
		pr_str(err, "no free inode number\n");
	else if (ret)
		pr_buf(err, "cannot read the inodes btree: %s", printbuf_str(&ierr));
	else
		c->inode_hint = *inum + 1;
	printbuf_exit(&ierr);
	return ret;
}

/* ---- dirents ---------------------------------------------------------------- */

static bool name_valid(const char *name, size_t len)
{
	return len && !memchr(name, '/', len) && !memchr(name, 0, len) &&
		!(name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')));
}

/* The entry @name of @dir in the transaction's view: 0 with *@off, *@d_inum, *@d_type. */
static int dirent_find(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
		       const char *name, size_t len, uint64_t *off, uint64_t *d_inum,
		       unsigned *d_type)
{
	struct slot *s = xmalloc(sizeof(*s));
	int ret = hash_find(c, t, h, dirent_hash(&h->info, name, len), 0, name, len, off, s);

	if (!ret) {
		struct bkey_ref k = { .k = s->k, .v = s->v, .v_bytes = s->v_bytes };
		struct bch_dirent_h d;

		bch_dirent_decode(&k, &d);
		*d_inum = d.d_inum;
		if (d_type)
			*d_type = d.d_type;
	}
	free(s);
	return ret;
}

static void dirent_put(struct btree_trans *t, const struct hash_desc *h, uint64_t off,
		       const char *name, size_t len, uint64_t inum, unsigned d_type)
{
	uint64_t v[(16 + BCH_NAME_MAX + 8) / 8];
	size_t bytes = bch_dirent_encode(inum, d_type, name, len, v, sizeof(v));
	struct bkey_h k = { .type = BCH_DIRENT, .p = POS_H(h->inum, off) };

	bch_trans_update(t, BTREE_ID_DIRENTS, &k, v, (unsigned)bytes);
}

/* A new entry @name -> @inum: -EEXIST when the name is there. */
static int dirent_create(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
			 const char *name, size_t len, uint64_t inum, unsigned d_type)
{
	uint64_t hash = dirent_hash(&h->info, name, len), off, old;
	int ret = dirent_find(c, t, h, name, len, &off, &old, NULL);

	if (!ret)
		return -EEXIST;
	if (ret != -ENOENT)
		return ret;
	ret = hash_free_slot(c, t, h, hash, &off);
	if (!ret)
		dirent_put(t, h, off, name, len, inum, d_type);
	return ret;
}

/* Is directory @inum empty (no live entry)? */
static int dir_empty(struct bch_fs *c, uint64_t inum)
{
	struct printbuf ierr = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	bch_btree_iter_init_range(&iter, c, BTREE_ID_DIRENTS, POS_H(inum, 0), POS_H(inum, UINT64_MAX),
				  &ierr);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k && k->k.p.inode == inum) {
		if (k->k.type == BCH_DIRENT) {
			ret = -ENOTEMPTY;
			break;
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&ierr);
	return ret;
}

/* ---- creating --------------------------------------------------------------- */

static void inode_init(struct bch_fs *c, struct bch_inode_unpacked *u, uint64_t inum,
		       uint32_t gen, unsigned mode, dev_t rdev, const struct bch_creds *cr,
		       const struct bch_inode_unpacked *parent)
{
	uint64_t now = bch_fs_now(c);
	unsigned ma = major(rdev), mi = minor(rdev);

	memset(u, 0, sizeof(*u));
	u->bi_inum	= inum;
	u->bi_hash_seed	= bch_random_u64();
	u->bi_flags	= (uint32_t)(c->str_hash_type & 0xf) << 20;
	u->bi_mode	= (uint16_t)mode;
	u->bi_uid	= cr->uid;
	u->bi_gid	= cr->gid;
	if (S_ISCHR(mode) || S_ISBLK(mode))
		u->bi_dev = (mi & 0xff) | (ma << 8) | ((mi & ~0xffU) << 12);
	u->bi_atime = u->bi_ctime = u->bi_mtime = u->bi_otime = now;
	u->bi_generation = gen;
	if (parent)
		bch_inode_inherit(u, parent);
}

/*
 * The data of a new symlink: the target, zero-padded to the block size
 * (doc/format.md §5.5.7), as extent keys in @t.
 */
static int symlink_data(struct bch_fs *c, struct btree_trans *t, struct bch_inode_unpacked *u,
			const char *target, struct printbuf *err)
{
	size_t len = strlen(target), bs = (size_t)c->block_size * 512;
	size_t bytes = round_up(len, bs);
	struct bulk_keys keys = { 0 };
	struct bch_io_opts o;
	uint8_t *buf;
	int64_t n;

	if (!len)
		return -ENOENT;
	if (len >= 4096)
		return -ENAMETOOLONG;
	buf = xcalloc(1, bytes);
	memcpy(buf, target, len);
	bch_io_opts_get(c, u, &o);
	n = bch_write_extents(c, &o, u->bi_inum, 0, buf, bytes / 512, &keys, err);
	free(buf);
	if (n >= 0 && (uint64_t)n < bytes / 512)
		n = -BCH_ERR_nospc;
	if (n < 0) {
		bulk_keys_exit(&keys);
		return (int)n;
	}
	for (size_t i = 0; i < keys.nr; i++)
		bch_trans_update(t, BTREE_ID_EXTENTS, &keys.k[i].k, keys.k[i].v, keys.k[i].v_bytes);
	u->bi_size = len;
	u->bi_sectors = bytes / 512;
	bulk_keys_exit(&keys);
	return 0;
}

static int fs_create(struct bch_fs *c, uint64_t dir, const char *name, size_t len,
		  unsigned mode, dev_t rdev, const char *symlink,
		  const struct bch_creds *cr, struct bch_inode_unpacked *out,
		  struct printbuf *err)
{
	struct bch_inode_unpacked d, u;
	struct btree_trans t;
	struct hash_desc h;
	uint64_t inum = 0, off, old;
	uint32_t gen;
	int ret;

	if (len > BCH_NAME_MAX)
		return -ENAMETOOLONG;
	if (!name_valid(name, len))
		return -EINVAL;
	if (symlink)
		mode = S_IFLNK | 0777;
	if (!mode_to_dt(mode))
		mode |= S_IFREG;
	ret = inode_read(c, dir, &d, err);
	if (ret)
		return ret;
	if (!is_dir(&d))
		return -ENOTDIR;
	if (S_ISDIR(mode) && d.bi_nlink >= UINT32_MAX - 1)
		return -EMLINK;
	ret = hash_desc_init(&h, BTREE_ID_DIRENTS, &d, err);
	if (ret)
		return ret;

	bch_trans_init(&t, c);
	ret = dirent_find(c, &t, &h, name, len, &off, &old, NULL);
	if (!ret)
		ret = -EEXIST;
	if (ret != -ENOENT)
		goto out;
	ret = inode_alloc(c, &inum, &gen, err);
	if (ret)
		goto out;
	{
		/* setgid directories, default ACLs or the umask (POSIX) */
		struct bch_creds cr2 = *cr;
		uint8_t dacl[ACL_VFS_MAX], aacl[ACL_VFS_MAX];
		ssize_t dn = symlink ? 0 : acl_get(c, &d, BCH_XATTR_INDEX_POSIX_ACL_DEFAULT,
						   dacl, sizeof(dacl));
		unsigned m = mode & 07777;

		if (dn < 0)
			dn = 0;
		if (d.bi_mode & S_ISGID) {
			cr2.gid = d.bi_gid;
			if (S_ISDIR(mode))
				m |= S_ISGID;
		}
		if (dn) {
			memcpy(aacl, dacl, (size_t)dn);
			acl_create_masq(aacl, (size_t)dn, &m);
		} else if (!symlink) {
			m &= ~cr->umask;
		}
		mode = (mode & S_IFMT) | m;
		inode_init(c, &u, inum, gen, mode, rdev, &cr2, &d);
		if (dn) {
			ret = acl_put(c, &t, &u, BCH_XATTR_INDEX_POSIX_ACL_ACCESS, aacl,
				      (size_t)dn, err);
			if (!ret && S_ISDIR(mode))
				ret = acl_put(c, &t, &u, BCH_XATTR_INDEX_POSIX_ACL_DEFAULT, dacl,
					      (size_t)dn, err);
			if (ret)
				goto out;
		}
	}
	if (symlink) {
		ret = symlink_data(c, &t, &u, symlink, err);
		if (ret)
			goto out;
	}
	ret = dirent_create(c, &t, &h, name, len, inum, mode_to_dt(mode));
	if (ret)
		goto out;
	if (S_ISDIR(mode))
		d.bi_nlink++;
	d.bi_mtime = d.bi_ctime = u.bi_ctime;
	trans_inode(&t, &u);
	trans_inode(&t, &d);
	ret = commit_counted(c, &t, 1, err);
	if (!ret && out)
		*out = u;
out:
	bch_trans_exit(&t);
	return ret;
}

int bch_fs_link(struct bch_fs *c, uint64_t inum, uint64_t dir, const char *name,
		size_t len, struct bch_inode_unpacked *out, struct printbuf *err)
{
	struct bch_inode_unpacked d, u;
	struct btree_trans t;
	struct hash_desc h;
	int ret;

	if (len > BCH_NAME_MAX)
		return -ENAMETOOLONG;
	if (!name_valid(name, len))
		return -EINVAL;
	ret = inode_read(c, inum, &u, err);
	if (!ret)
		ret = inode_read(c, dir, &d, err);
	if (ret)
		return ret;
	if (is_dir(&u))
		return -EPERM;
	if (!is_dir(&d))
		return -ENOTDIR;
	if (u.bi_nlink >= UINT32_MAX - 1)
		return -EMLINK;
	ret = hash_desc_init(&h, BTREE_ID_DIRENTS, &d, err);
	if (ret)
		return ret;
	bch_trans_init(&t, c);
	ret = dirent_create(c, &t, &h, name, len, inum, mode_to_dt(u.bi_mode));
	if (!ret) {
		u.bi_nlink++;
		u.bi_ctime = bch_fs_now(c);
		d.bi_mtime = d.bi_ctime = u.bi_ctime;
		trans_inode(&t, &u);
		trans_inode(&t, &d);
		ret = bch_trans_commit(&t, err);
	}
	if (!ret && out)
		*out = u;
	bch_trans_exit(&t);
	return ret;
}

/* ---- removing ---------------------------------------------------------------- */

/*
 * Every key of @inum in hashed btree @btree (entries and whiteouts) goes:
 * the inode itself is being deleted (doc/format.md §5.5.6).
 */
static int hashed_delete_all(struct bch_fs *c, struct btree_trans *t, unsigned btree,
			     uint64_t inum)
{
	struct printbuf ierr = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	bch_btree_iter_init_range(&iter, c, btree, POS_H(inum, 0), POS_H(inum, UINT64_MAX), &ierr);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k && k->k.p.inode == inum) {
		bch_trans_delete(t, btree, k->k.p);
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&ierr);
	return ret;
}

/* The updates that delete inode @u: data, xattrs, dirents, then a generation key. */
static int inode_rm_updates(struct bch_fs *c, struct btree_trans *t,
			    const struct bch_inode_unpacked *u)
{
	uint64_t end = 0, removed;
	int ret = extents_end(c, u->bi_inum, &end);

	if (!ret && end)
		ret = extents_delete(c, t, u->bi_inum, 0, end, &removed);
	if (!ret)
		ret = hashed_delete_all(c, t, BTREE_ID_XATTRS, u->bi_inum);
	if (!ret && is_dir(u))
		ret = hashed_delete_all(c, t, BTREE_ID_DIRENTS, u->bi_inum);
	if (ret)
		return ret;
	if (u->bi_generation + 1U) {
		struct bch_inode_generation g = { .bi_generation = cpu_to_le32(u->bi_generation + 1U) };
		struct bkey_h k = { .type = BCH_INODE_GENERATION, .p = POS_H(u->bi_inum, 0) };

		bch_trans_update(t, BTREE_ID_INODES, &k, &g, sizeof(g));
	} else {
		bch_trans_delete(t, BTREE_ID_INODES, POS_H(u->bi_inum, 0));
	}
	c->inodes_removing++;
	/* a failed commit leaves the inode: inode_alloc() checks the slot */
	inum_free_push(c, u->bi_inum);
	return 0;
}

static int fs_inode_rm(struct bch_fs *c, uint64_t inum, struct printbuf *err)
{
	struct bch_inode_unpacked u;
	struct btree_trans t;
	int ret = inode_read(c, inum, &u, err);

	if (ret)
		return ret;
	c->inodes_removing = 0;
	bch_trans_init(&t, c);
	ret = inode_rm_updates(c, &t, &u);
	if (!ret)
		ret = commit_counted(c, &t, 0, err);
	bch_trans_exit(&t);
	return ret;
}

/*
 * Inode @u loses a link (its dirent is gone in @t): fewer links, or, at
 * the last one, deleted (kept as an orphan while @in_use says so).
 */
static int drop_link(struct bch_fs *c, struct btree_trans *t, struct bch_inode_unpacked *u,
		     uint64_t now, bool (*in_use)(void *, uint64_t), void *arg, uint64_t *orphan)
{
	u->bi_ctime = now;
	if (!is_dir(u) && nlink_dec(u)) {
		trans_inode(t, u);
		return 0;
	}
	if (in_use && in_use(arg, u->bi_inum)) {
		/* stays until it is closed: bch_fs_inode_rm() then */
		if (orphan)
			*orphan = u->bi_inum;
		trans_inode(t, u);
		return 0;
	}
	return inode_rm_updates(c, t, u);
}

static int fs_unlink(struct bch_fs *c, uint64_t dir, const char *name, size_t len,
		  bool rmdir, bool (*in_use)(void *arg, uint64_t inum), void *arg,
		  uint64_t *orphan, struct printbuf *err)
{
	struct bch_inode_unpacked d, u;
	struct btree_trans t;
	struct hash_desc h;
	uint64_t off, inum, now;
	int ret;

	if (orphan)
		*orphan = 0;
	if (len > BCH_NAME_MAX)
		return -ENAMETOOLONG;
	ret = inode_read(c, dir, &d, err);
	if (ret)
		return ret;
	if (!is_dir(&d))
		return -ENOTDIR;
	ret = hash_desc_init(&h, BTREE_ID_DIRENTS, &d, err);
	if (ret)
		return ret;
	bch_trans_init(&t, c);
	ret = dirent_find(c, &t, &h, name, len, &off, &inum, NULL);
	if (!ret)
		ret = inode_read(c, inum, &u, err);
	if (ret)
		goto out;
	if (rmdir && !is_dir(&u)) {
		ret = -ENOTDIR;
		goto out;
	}
	if (!rmdir && is_dir(&u)) {
		ret = -EISDIR;
		goto out;
	}
	if (rmdir) {
		ret = dir_empty(c, inum);
		if (ret)
			goto out;
		if (d.bi_nlink)
			d.bi_nlink--;
	}
	ret = hash_delete(c, &t, &h, off);
	if (ret)
		goto out;
	now = bch_fs_now(c);
	d.bi_mtime = d.bi_ctime = now;
	trans_inode(&t, &d);
	c->inodes_removing = 0;
	ret = drop_link(c, &t, &u, now, in_use, arg, orphan);
	if (!ret)
		ret = commit_counted(c, &t, 0, err);
	c->inodes_removing = 0;
out:
	bch_trans_exit(&t);
	if (ret && orphan)
		*orphan = 0;
	return ret;
}

/* ---- rename --------------------------------------------------------------------- */

static int fs_rename(struct bch_fs *c, uint64_t odir, const char *oname, size_t olen,
		  uint64_t ndir, const char *nname, size_t nlen, unsigned flags,
		  bool (*in_use)(void *arg, uint64_t inum), void *arg,
		  uint64_t *orphan, struct printbuf *err)
{
	struct bch_inode_unpacked od, nd, src, dst;
	struct hash_desc oh, nh;
	struct btree_trans t;
	uint64_t ooff, noff, src_inum, dst_inum = 0, now;
	unsigned src_type, dst_type = 0;
	bool have_dst, same_dir = odir == ndir;
	int ret;

	if (orphan)
		*orphan = 0;
	if ((flags & ~(BCH_RENAME_NOREPLACE | BCH_RENAME_EXCHANGE)) ||
	    (flags & BCH_RENAME_NOREPLACE && flags & BCH_RENAME_EXCHANGE))
		return -EINVAL;
	if (olen > BCH_NAME_MAX || nlen > BCH_NAME_MAX)
		return -ENAMETOOLONG;
	if (!name_valid(nname, nlen))
		return -EINVAL;
	ret = inode_read(c, odir, &od, err);
	if (!ret)
		ret = inode_read(c, ndir, &nd, err);
	if (ret)
		return ret;
	if (!is_dir(&od) || !is_dir(&nd))
		return -ENOTDIR;
	ret = hash_desc_init(&oh, BTREE_ID_DIRENTS, &od, err);
	if (!ret)
		ret = hash_desc_init(&nh, BTREE_ID_DIRENTS, &nd, err);
	if (ret)
		return ret;

	c->inodes_removing = 0;
	bch_trans_init(&t, c);
	ret = dirent_find(c, &t, &oh, oname, olen, &ooff, &src_inum, &src_type);
	if (ret)
		goto out;
	ret = dirent_find(c, &t, &nh, nname, nlen, &noff, &dst_inum, &dst_type);
	if (ret && ret != -ENOENT)
		goto out;
	have_dst = !ret;
	ret = 0;
	if (have_dst && flags & BCH_RENAME_NOREPLACE) {
		ret = -EEXIST;
		goto out;
	}
	if (!have_dst && flags & BCH_RENAME_EXCHANGE) {
		ret = -ENOENT;
		goto out;
	}
	/* the same entry, or two links of one inode: nothing to do (rename(2)) */
	if (have_dst && dst_inum == src_inum)
		goto out;
	ret = inode_read(c, src_inum, &src, err);
	if (!ret && have_dst)
		ret = inode_read(c, dst_inum, &dst, err);
	if (ret)
		goto out;
	now = bch_fs_now(c);

	if (flags & BCH_RENAME_EXCHANGE) {
		/* each entry now names the other inode */
		dirent_put(&t, &oh, ooff, oname, olen, dst_inum, mode_to_dt(dst.bi_mode));
		dirent_put(&t, &nh, noff, nname, nlen, src_inum, mode_to_dt(src.bi_mode));
		if (!same_dir && is_dir(&src) != is_dir(&dst)) {
			if (is_dir(&src)) {
				od.bi_nlink--;
				nd.bi_nlink++;
			} else {
				od.bi_nlink++;
				nd.bi_nlink--;
			}
		}
		src.bi_ctime = dst.bi_ctime = now;
		trans_inode(&t, &src);
		trans_inode(&t, &dst);
	} else {
		if (have_dst) {
			if (is_dir(&src) && !is_dir(&dst)) {
				ret = -ENOTDIR;
				goto out;
			}
			if (!is_dir(&src) && is_dir(&dst)) {
				ret = -EISDIR;
				goto out;
			}
			if (is_dir(&dst)) {
				ret = dir_empty(c, dst_inum);
				if (ret)
					goto out;
				/* the replaced directory's link in its parent goes */
				if (nd.bi_nlink)
					nd.bi_nlink--;
			}
			/* the entry is rewritten in place to name the source */
			dirent_put(&t, &nh, noff, nname, nlen, src_inum, mode_to_dt(src.bi_mode));
			ret = hash_delete(c, &t, &oh, ooff);
			if (ret)
				goto out;
		} else {
			/* out first: the new entry may take the old one's slot */
			ret = hash_delete(c, &t, &oh, ooff);
			if (!ret)
				ret = dirent_create(c, &t, &nh, nname, nlen, src_inum,
						    mode_to_dt(src.bi_mode));
			if (ret)
				goto out;
		}
		if (is_dir(&src) && !same_dir) {
			if (od.bi_nlink)
				od.bi_nlink--;
			nd.bi_nlink++;
		}
		src.bi_ctime = now;
		trans_inode(&t, &src);
		if (have_dst) {
			ret = drop_link(c, &t, &dst, now, in_use, arg, orphan);
			if (ret)
				goto out;
		}
	}
	od.bi_mtime = od.bi_ctime = now;
	nd.bi_mtime = nd.bi_ctime = now;
	if (same_dir) {
		/* one inode: the link count changes (none here) and times */
		trans_inode(&t, &nd);
	} else {
		trans_inode(&t, &od);
		trans_inode(&t, &nd);
	}
	ret = commit_counted(c, &t, 0, err);
out:
	c->inodes_removing = 0;
	bch_trans_exit(&t);
	if (ret && orphan)
		*orphan = 0;
	return ret;
}

/*
 * ---- operations that free space, and the recovery reserve (doc/engine.md §8.6) ----
 *
 * What a user needs to get out of a full filesystem commits in the
 * engine's reserve mode (btree_update.h): unlink, rmdir, rename,
 * setattr (truncate, chmod, times), symlink, xattr removal and the final
 * delete of an inode. Everything else stops short of that reserve.
 */

int bch_fs_create(struct bch_fs *c, uint64_t dir, const char *name, size_t len,
		  unsigned mode, dev_t rdev, const char *symlink,
		  const struct bch_creds *cr, struct bch_inode_unpacked *out,
		  struct printbuf *err)
{
	bool old = symlink ? bch_fs_rw_use_reserve(c, true) : false;
	int ret = fs_create(c, dir, name, len, mode, rdev, symlink, cr, out, err);

	if (symlink)
		bch_fs_rw_use_reserve(c, old);
	return ret;
}

int bch_fs_inode_rm(struct bch_fs *c, uint64_t inum, struct printbuf *err)
{
	bool old = bch_fs_rw_use_reserve(c, true);
	int ret = fs_inode_rm(c, inum, err);

	bch_fs_rw_use_reserve(c, old);
	return ret;
}

int bch_fs_unlink(struct bch_fs *c, uint64_t dir, const char *name, size_t len,
		  bool rmdir, bool (*in_use)(void *arg, uint64_t inum), void *arg,
		  uint64_t *orphan, struct printbuf *err)
{
	bool old = bch_fs_rw_use_reserve(c, true);
	int ret = fs_unlink(c, dir, name, len, rmdir, in_use, arg, orphan, err);

	bch_fs_rw_use_reserve(c, old);
	return ret;
}

int bch_fs_rename(struct bch_fs *c, uint64_t odir, const char *oname, size_t olen,
		  uint64_t ndir, const char *nname, size_t nlen, unsigned flags,
		  bool (*in_use)(void *arg, uint64_t inum), void *arg,
		  uint64_t *orphan, struct printbuf *err)
{
	bool old = bch_fs_rw_use_reserve(c, true);
	int ret = fs_rename(c, odir, oname, olen, ndir, nname, nlen, flags, in_use, arg,
			    orphan, err);

	bch_fs_rw_use_reserve(c, old);
	return ret;
}
