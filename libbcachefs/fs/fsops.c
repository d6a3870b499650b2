// SPDX-License-Identifier: GPL-2.0
/*
 * The filesystem operations of the running filesystem: see fsops.h.
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
#include "fs/fsread.h"
#include "fs/inode_opts.h"
#include "bkey/inode.h"
#include "fs/io_read.h"
#include "fs/io_write.h"
#include "btree/node_write.h"
#include "dev/super.h"
#include "util/util.h"
#include "bkey/xattr.h"

#define SLOT_VAL_MAX	(8 * BKEY_MAX_U64S)

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

static bool is_dir(const struct bch_inode_unpacked *u)
{
	return S_ISDIR(u->bi_mode);
}

static unsigned mode_to_dt(unsigned mode)
{
	return (mode >> 12) & 15;
}

static int inode_read(struct bch_fs *c, uint64_t inum, struct bch_inode_unpacked *u,
		      struct printbuf *err)
{
	return bch_inode_get(c, inum, u, err);
}

static void trans_inode(struct btree_trans *t, const struct bch_inode_unpacked *u)
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
static int commit_counted(struct bch_fs *c, struct btree_trans *t, unsigned created,
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

static bool nlink_dec(struct bch_inode_unpacked *u)
{
	if (!u->bi_nlink)
		return false;
	u->bi_nlink--;
	return true;
}

/*
 * A free inode number (doc/format.md §5.5.6): from max(hint, 4096) up, wrapping
 * once to 4096, the first without an inode key (a generation key's slot
 * is free: *@gen is its generation). Below 2^32 with inodes_32bit.
 */
static int inode_alloc(struct bch_fs *c, uint64_t *inum, uint32_t *gen, struct printbuf *err)
{
	uint64_t max = BCH_SB_INODE_32BIT(c->sb) ? UINT32_MAX : UINT64_MAX;
	uint64_t start = c->inode_hint > BCACHEFS_ROOT_INO ? c->inode_hint : BCACHEFS_ROOT_INO;
	struct printbuf ierr = PRINTBUF;
	int ret = -BCH_ERR_nospc;

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
				struct bch_inode_generation g;

				*gen = 0;
				if (k->k.type == BCH_INODE_GENERATION && k->v_bytes >= sizeof(g)) {
					memcpy(&g, k->v, sizeof(g));
					*gen = le32_to_cpu(g.bi_generation);
				}
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

/* ---- hashed btrees: dirents and xattrs ------------------------------------- */

/* One slot of a hash table as the transaction would leave it. */
struct slot {
	unsigned	type;		/* 0: empty */
	struct bkey_h	k;
	uint8_t		v[SLOT_VAL_MAX];
	unsigned	v_bytes;
};

struct hash_desc {
	unsigned		btree;
	uint64_t		inum;
	struct bch_hash_info	info;
};

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

static uint64_t dirent_hash(const struct bch_hash_info *h, const void *name, size_t len)
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
static int hash_find(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
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
static int hash_free_slot(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
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
static int hash_delete(struct bch_fs *c, struct btree_trans *t, const struct hash_desc *h,
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

static int hash_desc_init(struct hash_desc *h, unsigned btree, const struct bch_inode_unpacked *u,
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

/* ---- extents -------------------------------------------------------------- */

static bool extent_counts(const struct bkey_h *k)
{
	return k->type == BCH_EXTENT || k->type == BCH_EXTENT_CACHED ||
		k->type == BCH_RESERVATION;
}

/*
 * Sectors of [@start, @end) of @inum covered by keys that count in
 * bi_sectors (doc/format.md §5.5.7), as the btree is now; *@last (may be NULL): the
 * end of the last key of the inode at or after @start (0 if none).
 */
static int extents_sectors(struct bch_fs *c, uint64_t inum, uint64_t start, uint64_t end,
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

/*
 * Sectors x replicas of [@start, @end) of @inum that fallocate promised
 * (reservation keys): a write there may use them (btree_update.h).
 */
static uint64_t promised_sectors(struct bch_fs *c, uint64_t inum, uint64_t start, uint64_t end)
{
	struct printbuf ierr = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	uint64_t n = 0;

	bch_btree_iter_init_range(&iter, c, BTREE_ID_EXTENTS, POS_H(inum, start),
				  POS_H(inum, end), &ierr);
	while (!bch_btree_iter_peek(&iter, &k) && k) {
		uint64_t ks = bkey_start_pos(&k->k).offset, ke = k->k.p.offset;
		struct bch_reservation r;

		if (k->k.p.inode != inum || ks >= end)
			break;
		if (k->k.type == BCH_RESERVATION && k->v_bytes >= sizeof(r)) {
			uint64_t s = ks > start ? ks : start, e = ke < end ? ke : end;

			memcpy(&r, k->v, sizeof(r));
			if (e > s)
				n += (e - s) * (r.nr_replicas ? r.nr_replicas : 1);
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&ierr);
	return n;
}

/* The end (sector) of the last extent key of @inum. */
static int extents_end(struct bch_fs *c, uint64_t inum, uint64_t *end)
{
	uint64_t sectors;

	return extents_sectors(c, inum, 0, UINT64_MAX, &sectors, end);
}

/* Delete sectors [@start, @end) of @inum; *@removed: sectors that counted. */
static int extents_delete(struct bch_fs *c, struct btree_trans *t, uint64_t inum,
			  uint64_t start, uint64_t end, uint64_t *removed)
{
	int ret = extents_sectors(c, inum, start, end, removed, NULL);

	if (!ret && *removed)
		bch_trans_delete_extents(t, inum, start, end);
	return ret;
}

/*
 * Read the block of @inum holding byte @offset into @buf (a whole block;
 * zeroes for holes and past i_size).
 */
static int block_read(struct bch_fs *c, const struct bch_inode_unpacked *u, uint64_t offset,
		      uint8_t *buf, size_t block_bytes, struct printbuf *err)
{
	uint64_t start = offset / block_bytes * block_bytes;
	struct bch_file f;
	ssize_t n;

	memset(buf, 0, block_bytes);
	if (start >= u->bi_size)
		return 0;
	bch_file_open(c, u, &f);
	n = bch_file_read(&f, start, buf, block_bytes, NULL, err);
	bch_file_close(&f);
	return n < 0 ? (int)n : 0;
}

/* ---- xattrs in a transaction -------------------------------------------------- */

/*
 * Set xattr (@type, @name) of inode @u to @val in @t: in place when it
 * exists, else in the first free slot of its probe run. (*@found: whether
 * it existed; may be NULL.)
 */
static int xattr_put(struct bch_fs *c, struct btree_trans *t, const struct bch_inode_unpacked *u,
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
static int xattr_del(struct bch_fs *c, struct btree_trans *t, const struct bch_inode_unpacked *u,
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

#define ACL_VFS_MAX	(4 + 8 * 64)

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
static ssize_t acl_get(struct bch_fs *c, const struct bch_inode_unpacked *u, unsigned type,
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
static int acl_put(struct bch_fs *c, struct btree_trans *t, const struct bch_inode_unpacked *u,
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
static void acl_create_masq(uint8_t *acl, size_t len, unsigned *mode)
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
static void acl_chmod(uint8_t *acl, size_t len, unsigned mode)
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
	uint64_t inum, off, old;
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

/* ---- data ---------------------------------------------------------------------- */

/*
 * Write the whole blocks [@start, @start + @sectors) of @u from @data
 * (scratch): the extent keys into @t, *@u's bi_sectors adjusted. Returns
 * the sectors written (fewer when space ran out after some) or an error.
 */
static int64_t write_blocks(struct bch_fs *c, struct btree_trans *t,
			    struct bch_inode_unpacked *u, uint64_t start, uint8_t *data,
			    uint64_t sectors, struct printbuf *err)
{
	struct bulk_keys keys = { 0 };
	struct bch_io_opts o;
	uint64_t old;
	int64_t n;
	int ret;

	bch_io_opts_get(c, u, &o);
	n = bch_write_extents(c, &o, u->bi_inum, start, data, sectors, &keys, err);
	if (n <= 0) {
		bulk_keys_exit(&keys);
		return n ? n : -BCH_ERR_nospc;
	}
	ret = extents_sectors(c, u->bi_inum, start, start + (uint64_t)n, &old, NULL);
	if (ret) {
		bulk_keys_exit(&keys);
		return ret;
	}
	for (size_t i = 0; i < keys.nr; i++)
		bch_trans_update(t, BTREE_ID_EXTENTS, &keys.k[i].k, keys.k[i].v, keys.k[i].v_bytes);
	u->bi_sectors = u->bi_sectors + (uint64_t)n - old;
	bulk_keys_exit(&keys);
	return n;
}

ssize_t bch_fs_write(struct bch_fs *c, uint64_t inum, uint64_t offset, const void *buf,
		     size_t len, unsigned flags, struct bch_inode_unpacked *out,
		     struct printbuf *err)
{
	size_t bs = (size_t)c->block_size * 512;
	struct bch_inode_unpacked u;
	struct btree_trans t;
	uint64_t a, b, end;
	uint8_t *data;
	int64_t n;
	ssize_t done = 0;
	int ret;

	ret = inode_read(c, inum, &u, err);
	if (ret)
		return ret;
	if (!S_ISREG(u.bi_mode))
		return is_dir(&u) ? -EISDIR : -EINVAL;
	if (flags & BCH_WRITE_APPEND)
		offset = u.bi_size;
	if (!len)
		return 0;
	if (offset > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - offset)
		return -EFBIG;
	end = offset + len;
	a = offset / bs * bs;
	b = round_up(end, bs);
	if (a == offset && b == end && !c->encrypted) {
		/* whole blocks, written as they are (only encryption writes in place) */
		data = (uint8_t *)buf;
		goto write;
	}
	data = xmalloc(b - a);
	/* partial blocks at the edges: what is there now, around the new bytes */
	if (a < offset) {
		ret = block_read(c, &u, a, data, bs, err);
		if (ret)
			goto free;
	}
	if (b > end && !(b - bs == a && a < offset)) {
		ret = block_read(c, &u, b - bs, data + (b - bs - a), bs, err);
		if (ret)
			goto free;
	}
	memcpy(data + (offset - a), buf, len);
write:
	bch_trans_init(&t, c);
	/* sectors fallocate promised here are this write's, until it commits */
	if (bch_fs_rw_alloc(c) && bch_fs_rw_alloc(c)->reserved_sectors)
		bch_fs_rw_write_credit(c, promised_sectors(c, inum, a / 512, b / 512));
	n = write_blocks(c, &t, &u, a / 512, data, (b - a) / 512, err);
	if (n < 0) {
		ret = (int)n;
		goto exit;
	}
	/* what was written of the caller's bytes */
	done = (ssize_t)min_t(uint64_t, a + (uint64_t)n * 512, end) - (ssize_t)offset;
	if (done <= 0) {
		ret = -BCH_ERR_nospc;
		goto exit;
	}
	if (offset + (uint64_t)done > u.bi_size)
		u.bi_size = offset + (uint64_t)done;
	u.bi_mtime = u.bi_ctime = bch_fs_now(c);
	if (flags & BCH_WRITE_KILL_SUID) {
		u.bi_mode &= (uint16_t)~S_ISUID;
		if (u.bi_mode & S_IXGRP)
			u.bi_mode &= (uint16_t)~S_ISGID;
	}
	trans_inode(&t, &u);
	ret = bch_trans_commit(&t, err);
	if (!ret && out)
		*out = u;
exit:
	bch_fs_rw_write_credit(c, 0);
	bch_trans_exit(&t);
free:
	if (data != buf)
		free(data);
	return ret ? ret : done;
}

/*
 * Zero bytes [@from, @to) of the one block holding them (a partial block
 * keeps the rest), when there is data there: the block is rewritten.
 */
static int zero_partial(struct bch_fs *c, struct btree_trans *t, struct bch_inode_unpacked *u,
			uint64_t from, uint64_t to, struct printbuf *err)
{
	size_t bs = (size_t)c->block_size * 512;
	uint64_t a = from / bs * bs, sectors;
	uint8_t *data;
	int64_t n;
	int ret;

	if (from >= to)
		return 0;
	ret = extents_sectors(c, u->bi_inum, a / 512, (a + bs) / 512, &sectors, NULL);
	if (ret || !sectors)
		return ret;
	data = xmalloc(bs);
	ret = block_read(c, u, a, data, bs, err);
	if (!ret) {
		memset(data + (from - a), 0, (size_t)(to - from));
		n = write_blocks(c, t, u, a / 512, data, bs / 512, err);
		ret = n < 0 ? (int)n : 0;
	}
	free(data);
	return ret;
}

/* Make bytes [@from, @to) a hole: partial blocks zeroed, whole blocks deleted. */
static int punch(struct bch_fs *c, struct btree_trans *t, struct bch_inode_unpacked *u,
		 uint64_t from, uint64_t to, struct printbuf *err)
{
	size_t bs = (size_t)c->block_size * 512;
	uint64_t a = round_up(from, bs), b = to / bs * bs, removed;
	int ret;

	if (from >= to)
		return 0;
	if (a > b) {
		/* inside one block */
		return zero_partial(c, t, u, from, to, err);
	}
	ret = zero_partial(c, t, u, from, a, err);
	if (!ret)
		ret = zero_partial(c, t, u, b, to, err);
	if (!ret && a < b) {
		ret = extents_delete(c, t, u->bi_inum, a / 512, b / 512, &removed);
		if (!ret)
			u->bi_sectors -= min_t(uint64_t, removed, u->bi_sectors);
	}
	return ret;
}

static int truncate_updates(struct bch_fs *c, struct btree_trans *t,
			    struct bch_inode_unpacked *u, uint64_t size, struct printbuf *err)
{
	size_t bs = (size_t)c->block_size * 512;
	uint64_t end = 0, removed, a = round_up(size, bs);
	int ret = 0;

	if (size < u->bi_size) {
		/* the tail of the last block: zeroes from the new end on */
		if (size % bs)
			ret = zero_partial(c, t, u, size, a, err);
		if (!ret)
			ret = extents_end(c, u->bi_inum, &end);
		if (!ret && end > a / 512) {
			ret = extents_delete(c, t, u->bi_inum, a / 512, end, &removed);
			if (!ret)
				u->bi_sectors -= min_t(uint64_t, removed, u->bi_sectors);
		}
	}
	if (!ret)
		u->bi_size = size;
	return ret;
}

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

/*
 * Reservation keys (doc/format.md §5.3) over the holes of sectors [@start, @end)
 * of @u: they read as zeroes and count in bi_sectors.
 */
static int reserve_holes(struct bch_fs *c, struct btree_trans *t, struct bch_inode_unpacked *u,
			 uint64_t start, uint64_t end, unsigned nr_replicas)
{
	struct printbuf ierr = PRINTBUF;
	struct bch_reservation r = { .nr_replicas = (uint8_t)nr_replicas };
	struct btree_iter iter;
	struct bkey_ref *k;
	uint64_t pos = start;
	int ret;

	bch_btree_iter_init_range(&iter, c, BTREE_ID_EXTENTS, POS_H(u->bi_inum, start),
				  POS_H(u->bi_inum, end), &ierr);
	for (;;) {
		uint64_t ks = end, ke = end;

		ret = bch_btree_iter_peek(&iter, &k);
		if (ret)
			break;
		if (k && k->k.p.inode == u->bi_inum && bkey_start_pos(&k->k).offset < end) {
			ks = bkey_start_pos(&k->k).offset;
			ke = k->k.p.offset;
			if (!extent_counts(&k->k)) {
				/* discard or error keys: a hole for this purpose */
				bch_btree_iter_advance(&iter);
				continue;
			}
		}
		if (ks < pos)
			ks = pos;
		while (pos < ks) {
			uint64_t n = min_t(uint64_t, ks - pos, KEY_SIZE_MAX);
			struct bkey_h rk = { .type = BCH_RESERVATION, .size = (uint32_t)n,
					     .p = POS_H(u->bi_inum, pos + n) };

			bch_trans_update(t, BTREE_ID_EXTENTS, &rk, &r, sizeof(r));
			u->bi_sectors += n;
			pos += n;
		}
		if (ks >= end)
			break;
		pos = ke > pos ? ke : pos;
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&ierr);
	return ret;
}

int bch_fs_fallocate(struct bch_fs *c, uint64_t inum, unsigned mode, uint64_t offset,
		     uint64_t len, struct printbuf *err)
{
	size_t bs = (size_t)c->block_size * 512;
	struct bch_inode_unpacked u;
	struct bch_io_opts o;
	struct btree_trans t;
	uint64_t end;
	int ret;

	if (mode & ~(BCH_FALLOC_KEEP_SIZE | BCH_FALLOC_PUNCH_HOLE | BCH_FALLOC_ZERO_RANGE))
		return -EOPNOTSUPP;
	if ((mode & BCH_FALLOC_PUNCH_HOLE) &&
	    (!(mode & BCH_FALLOC_KEEP_SIZE) || (mode & BCH_FALLOC_ZERO_RANGE)))
		return -EOPNOTSUPP;
	if (!len)
		return -EINVAL;
	if (offset > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - offset)
		return -EFBIG;
	ret = inode_read(c, inum, &u, err);
	if (ret)
		return ret;
	if (!S_ISREG(u.bi_mode))
		return is_dir(&u) ? -EISDIR : -ENODEV;
	end = offset + len;
	bch_io_opts_get(c, &u, &o);

	bch_trans_init(&t, c);
	if (mode & (BCH_FALLOC_PUNCH_HOLE | BCH_FALLOC_ZERO_RANGE)) {
		/* past i_size nothing needs punching */
		uint64_t pend = min_t(uint64_t, end, round_up(u.bi_size, bs));

		if (offset < pend)
			ret = punch(c, &t, &u, offset, pend, err);
	}
	if (!ret && !(mode & BCH_FALLOC_PUNCH_HOLE)) {
		uint64_t a = round_up(offset, bs), b = end / bs * bs;

		/* whole blocks reserved; partial edge blocks inside i_size were zeroed */
		if (mode & BCH_FALLOC_ZERO_RANGE) {
			if (a < b)
				ret = reserve_holes(c, &t, &u, a / 512, b / 512, o.nr_replicas);
		} else {
			ret = reserve_holes(c, &t, &u, offset / bs * bs / 512,
					    round_up(end, bs) / 512, o.nr_replicas);
		}
	}
	if (!ret) {
		if (!(mode & BCH_FALLOC_KEEP_SIZE) && end > u.bi_size)
			u.bi_size = end;
		u.bi_mtime = u.bi_ctime = bch_fs_now(c);
		trans_inode(&t, &u);
		ret = bch_trans_commit(&t, err);
	}
	bch_trans_exit(&t);
	return ret;
}

int64_t bch_fs_seek(struct bch_fs *c, uint64_t inum, uint64_t offset, bool data,
		    struct printbuf *err)
{
	struct bch_inode_unpacked u;
	struct printbuf ierr = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	uint64_t pos = offset, sector = offset / 512;
	int ret = inode_read(c, inum, &u, err);

	if (ret)
		return ret;
	if (offset >= u.bi_size)
		return -ENXIO;
	bch_btree_iter_init_range(&iter, c, BTREE_ID_EXTENTS, POS_H(inum, sector),
				  POS_H(inum, UINT64_MAX), &ierr);
	for (;;) {
		uint64_t ks, ke;
		bool has_data;

		ret = bch_btree_iter_peek(&iter, &k);
		if (ret || !k || k->k.p.inode != inum) {
			/* no more keys: the rest is a hole */
			if (!ret && data)
				ret = -ENXIO;
			break;
		}
		ks = bkey_start_pos(&k->k).offset * 512;
		ke = k->k.p.offset * 512;
		has_data = !bch_extent_reads_as_hole(c, k) || k->k.type == BCH_RESERVATION;
		if (data) {
			if (has_data) {
				pos = ks > pos ? ks : pos;
				break;
			}
		} else if (!has_data || ks > pos) {
			break;	/* pos is in a hole */
		} else {
			pos = ke;
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&ierr);
	if (ret)
		return ret;
	if (pos >= u.bi_size)
		return data ? -ENXIO : (int64_t)u.bi_size;
	return (int64_t)pos;
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

/* ---- the rest --------------------------------------------------------------------- */

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

/*
 * ---- operations that free space, and the recovery reserve (issue 25) ----
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
