// SPDX-License-Identifier: GPL-2.0
/*
 * The filesystem operations of the running filesystem (fsops.h): the
 * helpers they share (fsops_int.h: inodes in a transaction, the hashed
 * btrees of dirents and xattrs, extents, POSIX ACLs), times, fsync and
 * statfs. The operations themselves: fsops_dir.c (create, link, unlink,
 * rename), fsops_data.c (write, fallocate, seek), fsops_attr.c (setattr,
 * xattrs, atime).
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

/* ---- times ---------------------------------------------------------------- */

uint64_t bch_fs_time(const struct bch_fs *c, const struct timespec *ts)
{
	return bch_inode_ns_to_time((int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec,
				    le64_to_cpu(c->sb->time_base_lo),
				    le32_to_cpu(c->sb->time_precision));
}

uint64_t bch_fs_now(const struct bch_fs *c)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return bch_fs_time(c, &ts);
}

/* ---- inodes --------------------------------------------------------------- */

bool is_dir(const struct bch_inode_unpacked *u)
{
	return S_ISDIR(u->bi_mode);
}

int inode_read(struct bch_fs *c, uint64_t inum, struct bch_inode_unpacked *u,
	       struct printbuf *err)
{
	return bch_inode_get(c, inum, u, err);
}

void trans_inode(struct btree_trans *t, const struct bch_inode_unpacked *u)
{
	uint8_t val[BCH_INODE_VAL_BYTES_MAX];
	size_t bytes = bch_inode_pack(u, val);
	struct bkey_h k = { .type = BCH_INODE_FS, .p = POS_H(u->bi_inum, 0) };

	bch_trans_update(t, BTREE_ID_INODES, &k, val, (unsigned)bytes);
}

/* One link fewer; false when it was the last. */
/*
 * Commit @t, which creates @created inodes and deletes c->inodes_removing
 * (inode_rm_updates()): the inode count follows what was committed.
 */
int commit_counted(struct bch_fs *c, struct btree_trans *t, unsigned created,
		   struct printbuf *err)
{
	int ret = bch_trans_commit(t, err);

	if (!ret && c->nr_inodes_known) {
		c->nr_inodes += created;
		c->nr_inodes = c->nr_inodes > c->inodes_removing ? c->nr_inodes - c->inodes_removing : 0;
	}
	c->inodes_removing = 0;
	return ret;
}

/* ---- hashed btrees: dirents and xattrs ------------------------------------- */

static void slot_set(struct slot *s, const struct bkey_ref *k)
{
	s->type = k->k.type;
	s->k = k->k;
	s->v_bytes = k->v_bytes <= SLOT_VAL_MAX ? k->v_bytes : 0;
	if (s->v_bytes)
		memcpy(s->v, k->v, s->v_bytes);
}

/* The key at (@h->inum, @off): the transaction's own newest update, else the btree's. */
static int slot_get(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
		    uint64_t off, struct slot *s)
{
	struct bpos_h pos = POS_H(h->inum, off);
	struct printbuf ierr = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	for (size_t i = t->nr; i--;)
		if (t->u[i].btree_id == h->btree && bpos_eq(t->u[i].k.k.p, pos)) {
			slot_set(s, &t->u[i].k);
			if (bkey_is_whiteout(&s->k) && s->type != 129)
				s->type = 0;
			return 0;
		}
	s->type = 0;
	bch_btree_iter_init_range(&iter, c, h->btree, pos, pos, &ierr);
	ret = bch_btree_iter_peek(&iter, &k);
	if (!ret && k && bpos_eq(k->k.p, pos))
		slot_set(s, k);
	bch_btree_iter_exit(&iter);
	printbuf_exit(&ierr);
	return ret;
}

static bool slot_live(const struct slot *s)
{
	return s->type == 128;
}

static bool slot_whiteout(const struct slot *s)
{
	return s->type == 129;
}

uint64_t dirent_hash(const struct bch_hash_info *h, const void *name, size_t len)
{
	uint64_t v = bch_dirent_hash(h, name, len);

	return v < 2 ? 2 : v;
}

/* The hash of the live entry in @s, for the delete rule. */
static uint64_t slot_hash(const struct hash_desc *h, const struct slot *s)
{
	struct bkey_ref k = { .k = s->k, .v = s->v, .v_bytes = s->v_bytes };

	if (h->btree == BTREE_ID_DIRENTS) {
		struct bch_dirent_h d;

		if (bch_dirent_decode(&k, &d))
			return 0;
		return dirent_hash(&h->info, d.name, d.name_len);
	} else {
		struct bch_xattr_h x;

		if (bch_xattr_decode(&k, &x))
			return 0;
		return bch_xattr_hash(&h->info, x.x_type, x.name, x.name_len);
	}
}

/* Does the live entry @s have name @name (and, for xattrs, type @x_type)? */
static bool slot_match(const struct hash_desc *h, const struct slot *s, unsigned x_type,
		       const void *name, size_t len)
{
	struct bkey_ref k = { .k = s->k, .v = s->v, .v_bytes = s->v_bytes };

	if (!slot_live(s))
		return false;
	if (h->btree == BTREE_ID_DIRENTS) {
		struct bch_dirent_h d;

		return !bch_dirent_decode(&k, &d) && d.name_len == len && !memcmp(d.name, name, len);
	} else {
		struct bch_xattr_h x;

		return !bch_xattr_decode(&k, &x) && x.x_type == x_type && x.name_len == len &&
			!memcmp(x.name, name, len);
	}
}

/*
 * Find the entry @name from offset @hash (doc/format.md §5.6.3): over live entries
 * and whiteouts, to the first empty slot. *@off and *@s on success.
 */
int hash_find(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
	      uint64_t hash, unsigned x_type, const void *name, size_t len,
	      uint64_t *off, struct slot *s)
{
	for (uint64_t o = hash;; o++) {
		int ret = slot_get(c, t, h, o, s);

		if (ret)
			return ret;
		if (!slot_live(s) && !slot_whiteout(s))
			return -ENOENT;
		if (slot_match(h, s, x_type, name, len)) {
			*off = o;
			return 0;
		}
		if (o == UINT64_MAX)
			return -ENOENT;
	}
}

/* The slot a new entry of hash @hash goes to: the first that is not live. */
int hash_free_slot(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
		   uint64_t hash, uint64_t *off)
{
	struct slot *s = xmalloc(sizeof(*s));
	int ret = 0;

	for (uint64_t o = hash;; o++) {
		ret = slot_get(c, t, h, o, s);
		if (ret)
			break;
		if (!slot_live(s)) {
			*off = o;
			break;
		}
		if (o == UINT64_MAX) {
			ret = -ENOSPC;
			break;
		}
	}
	free(s);
	return ret;
}

/*
 * Delete the entry at @off: a whiteout when a live entry after it in its
 * run of occupied slots hashes to @off or before (its probe passes here),
 * else a plain deletion (doc/format.md §5.6.3).
 */
int hash_delete(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
		uint64_t off)
{
	struct slot *s = xmalloc(sizeof(*s));
	bool whiteout = false;
	int ret = 0;

	for (uint64_t o = off; o < UINT64_MAX && !whiteout;) {
		o++;
		ret = slot_get(c, t, h, o, s);
		if (ret)
			goto out;
		if (!slot_live(s) && !slot_whiteout(s))
			break;
		if (slot_live(s) && slot_hash(h, s) <= off)
			whiteout = true;
	}
	if (whiteout) {
		struct bkey_h k = { .type = 129, .p = POS_H(h->inum, off) };

		bch_trans_update(t, h->btree, &k, NULL, 0);
	} else {
		bch_trans_delete(t, h->btree, POS_H(h->inum, off));
	}
out:
	free(s);
	return ret;
}

int hash_desc_init(struct hash_desc *h, unsigned btree, const struct bch_inode_unpacked *u,
		   struct printbuf *err)
{
	h->btree = btree;
	h->inum = u->bi_inum;
	if (bch_hash_info_init(&h->info, bch_inode_str_hash(u), u->bi_hash_seed)) {
		pr_buf(err, "inode %" PRIu64 ": invalid string hash type %u\n", u->bi_inum,
		       bch_inode_str_hash(u));
		return -EIO;
	}
	return 0;
}

/* ---- extents -------------------------------------------------------------- */

bool extent_counts(const struct bkey_h *k)
{
	return k->type == BCH_EXTENT || k->type == BCH_EXTENT_CACHED ||
		k->type == BCH_RESERVATION;
}

/*
 * Sectors of [@start, @end) of @inum covered by keys that count in
 * bi_sectors (doc/format.md §5.5.7), as the btree is now; *@last (may be NULL): the
 * end of the last key of the inode at or after @start (0 if none).
 */
int extents_sectors(struct bch_fs *c, uint64_t inum, uint64_t start, uint64_t end,
		    uint64_t *sectors, uint64_t *last)
{
	struct printbuf ierr = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	*sectors = 0;
	if (last)
		*last = 0;
	if (start >= end)
		return 0;
	bch_btree_iter_init_range(&iter, c, BTREE_ID_EXTENTS, POS_H(inum, start),
				  POS_H(inum, end), &ierr);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
		uint64_t ks = bkey_start_pos(&k->k).offset, ke = k->k.p.offset;

		if (k->k.p.inode != inum || ks >= end)
			break;
		if (last && ke > *last)
			*last = ke;
		if (extent_counts(&k->k)) {
			uint64_t s = ks > start ? ks : start, e = ke < end ? ke : end;

			if (e > s)
				*sectors += e - s;
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&ierr);
	return ret;
}

/* The end (sector) of the last extent key of @inum. */
int extents_end(struct bch_fs *c, uint64_t inum, uint64_t *end)
{
	uint64_t sectors;

	return extents_sectors(c, inum, 0, UINT64_MAX, &sectors, end);
}

/* Delete sectors [@start, @end) of @inum; *@removed: sectors that counted. */
int extents_delete(struct bch_fs *c, struct btree_trans *t, uint64_t inum,
		   uint64_t start, uint64_t end, uint64_t *removed)
{
	int ret = extents_sectors(c, inum, start, end, removed, NULL);

	if (!ret && *removed)
		bch_trans_delete_extents(t, inum, start, end);
	return ret;
}

/* ---- xattrs in a transaction -------------------------------------------------- */

/*
 * Set xattr (@type, @name) of inode @u to @val in @t: in place when it
 * exists, else in the first free slot of its probe run. (*@found: whether
 * it existed; may be NULL.)
 */
int xattr_put(struct bch_fs *c, struct btree_trans *t, const struct bch_inode_unpacked *u,
	      unsigned type, const char *name, size_t len, const void *val, size_t size,
	      bool *found, struct printbuf *err)
{
	struct hash_desc h;
	struct slot *s;
	size_t bytes = (size_t)bch_xattr_val_u64s(len, size) * 8;
	uint64_t hash, off;
	int ret;

	if (BKEY_U64S_UNPACKED + bytes / 8 > BKEY_MAX_U64S - 1 || size > UINT16_MAX)
		return -E2BIG;
	ret = hash_desc_init(&h, BTREE_ID_XATTRS, u, err);
	if (ret)
		return ret;
	s = xmalloc(sizeof(*s));
	hash = bch_xattr_hash(&h.info, type, name, len);
	ret = hash_find(c, t, &h, hash, type, name, len, &off, s);
	if (found)
		*found = !ret;
	if (ret == -ENOENT)
		ret = hash_free_slot(c, t, &h, hash, &off);
	if (!ret) {
		uint64_t *v = xcalloc(1, bytes);
		size_t vb = bch_xattr_encode(type, name, len, val, size, v, bytes);
		struct bkey_h k = { .type = BCH_XATTR, .p = POS_H(u->bi_inum, off) };

		bch_trans_update(t, BTREE_ID_XATTRS, &k, v, (unsigned)vb);
		free(v);
	}
	free(s);
	return ret;
}

/* Remove xattr (@type, @name) of @u in @t, if it is there. */
int xattr_del(struct bch_fs *c, struct btree_trans *t, const struct bch_inode_unpacked *u,
	      unsigned type, const char *name, size_t len, bool *found, struct printbuf *err)
{
	struct hash_desc h;
	struct slot *s;
	uint64_t off;
	int ret = hash_desc_init(&h, BTREE_ID_XATTRS, u, err);

	if (ret)
		return ret;
	s = xmalloc(sizeof(*s));
	ret = hash_find(c, t, &h, bch_xattr_hash(&h.info, type, name, len), type, name, len,
			&off, s);
	if (found)
		*found = !ret;
	if (!ret)
		ret = hash_delete(c, t, &h, off);
	else if (ret == -ENOENT)
		ret = 0;
	free(s);
	return ret;
}

/* ---- POSIX ACLs (in the VFS form: le32 version 2, 8-byte entries) ---------------- */

enum { ACL_T_USER_OBJ = 1, ACL_T_USER = 2, ACL_T_GROUP_OBJ = 4, ACL_T_GROUP = 8,
       ACL_T_MASK = 0x10, ACL_T_OTHER = 0x20 };

static unsigned acl_perm(const uint8_t *e)
{
	return get_le16_unaligned(e + 2) & 7;
}

static void acl_set_perm(uint8_t *e, unsigned perm)
{
	e[2] = (uint8_t)perm;
	e[3] = 0;
}

/* ACL @type of @u in the VFS form into @buf: its size, 0 when it has none. */
ssize_t acl_get(struct bch_fs *c, const struct bch_inode_unpacked *u, unsigned type,
		uint8_t *buf, size_t size)
{
	ssize_t n;

	if (!BCH_SB_POSIX_ACL(c->sb))
		return 0;
	n = bch_xattr_get(c, u, type == BCH_XATTR_INDEX_POSIX_ACL_ACCESS ? "system.posix_acl_access"
			  : "system.posix_acl_default", buf, size, NULL);
	return n == -ENODATA ? 0 : n;
}

/* Store ACL @type of @u from the VFS form (nothing stored for one the mode says). */
int acl_put(struct bch_fs *c, struct btree_trans *t, const struct bch_inode_unpacked *u,
	    unsigned type, const uint8_t *vfs, size_t len, struct printbuf *err)
{
	uint8_t acl[SLOT_VAL_MAX];
	ssize_t n = bch_acl_from_xattr(vfs, len, type, acl, sizeof(acl));

	if (n < 0)
		return n == -E2BIG ? -E2BIG : -EINVAL;
	if (!n)
		return xattr_del(c, t, u, type, "", 0, NULL, err);
	return xattr_put(c, t, u, type, "", 0, acl, (size_t)n, NULL, err);
}

/*
 * The access ACL of a new inode from its directory's default ACL @acl
 * (POSIX: the ACL's owner, group class and other permissions masked by
 * the mode asked for, and the mode by them); *@mode is updated.
 */
void acl_create_masq(uint8_t *acl, size_t len, unsigned *mode)
{
	uint8_t *group_obj = NULL, *mask = NULL;
	unsigned m = *mode;

	for (size_t i = 4; i + 8 <= len; i += 8) {
		uint8_t *e = acl + i;

		switch (get_le16_unaligned(e)) {
		case ACL_T_USER_OBJ:
			acl_set_perm(e, acl_perm(e) & (m >> 6));
			m &= (acl_perm(e) << 6) | ~0700U;
			break;
		case ACL_T_GROUP_OBJ:
			group_obj = e;
			break;
		case ACL_T_MASK:
			mask = e;
			break;
		case ACL_T_OTHER:
			acl_set_perm(e, acl_perm(e) & m);
			m &= acl_perm(e) | ~0007U;
			break;
		}
	}
	if (mask || group_obj) {
		uint8_t *g = mask ? mask : group_obj;

		acl_set_perm(g, acl_perm(g) & (m >> 3));
		m &= (acl_perm(g) << 3) | ~0070U;
	}
	*mode = m;
}

/* An access ACL follows a chmod (POSIX: owner, group class and other entries). */
void acl_chmod(uint8_t *acl, size_t len, unsigned mode)
{
	uint8_t *group_obj = NULL, *mask = NULL;

	for (size_t i = 4; i + 8 <= len; i += 8) {
		uint8_t *e = acl + i;

		switch (get_le16_unaligned(e)) {
		case ACL_T_USER_OBJ:
			acl_set_perm(e, (mode >> 6) & 7);
			break;
		case ACL_T_GROUP_OBJ:
			group_obj = e;
			break;
		case ACL_T_MASK:
			mask = e;
			break;
		case ACL_T_OTHER:
			acl_set_perm(e, mode & 7);
			break;
		}
	}
	if (mask)
		acl_set_perm(mask, (mode >> 3) & 7);
	else if (group_obj)
		acl_set_perm(group_obj, (mode >> 3) & 7);
}

/* ---- fsync, statfs ---------------------------------------------------------------- */

int bch_fs_fsync(struct bch_fs *c, struct printbuf *err)
{
	return bch_journal_flush(c, err);
}

/* The inodes in use, counted once (then kept by commit_counted()). */
static void inodes_count(struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	uint64_t nr = 0;

	bch_btree_iter_init(&iter, c, BTREE_ID_INODES, POS_H(0, 0), &err);
	while (!bch_btree_iter_peek(&iter, &k) && k) {
		if (k->k.type == BCH_INODE_FS)
			nr++;
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&err);
	c->nr_inodes = nr;
	c->nr_inodes_known = true;
}

uint64_t bch_fs_nr_inodes(struct bch_fs *c)
{
	if (!c->nr_inodes_known)
		inodes_count(c);
	return c->nr_inodes;
}

void bch_fs_statfs(struct bch_fs *c, struct bch_statfs *st)
{
	struct bch_allocator *a = bch_fs_rw_alloc(c);
	struct bch_space s;

	memset(st, 0, sizeof(*st));
	if (!a)
		return;
	bch_space_totals(a, &s);
	st->capacity	= s.capacity;
	st->free	= s.free;
	st->avail	= s.available;
	st->nr_inodes	= bch_fs_nr_inodes(c);
}
