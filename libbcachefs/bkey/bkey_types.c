// SPDX-License-Identifier: GPL-2.0
/*
 * The key types of every btree: one table with, per btree, the names of
 * its value types and its check / text / JSON operations. Generic types
 * 0-3 are handled here for every btree; interior-node keys are btree
 * pointers (doc/format.md §3.3, §5.4, §5.1, chapter 40, doc/tools.md §4).
 */
#include "format/format.h"
#include "bkey/bkey_types.h"

#include <errno.h>
#include <string.h>

#include "bkey/dirent.h"
#include "util/errcode.h"
#include "bkey/extents.h"
#include "bkey/inode.h"
#include "util/util.h"
#include "bkey/xattr.h"

struct bkey_ops {
	const char	*btree_name;
	const char	*type_names[3];		/* types 128, 129, 130 */
	const char	*(*invalid)(const struct bkey_ref *k, const struct bkey_fs_ctx *fs);
	void		(*to_text)(struct printbuf *out, const struct bkey_ref *k,
				   const struct bkey_fs_ctx *fs);
	void		(*to_json)(struct json *j, const struct bkey_ref *k,
				   const struct bkey_fs_ctx *fs);
};

/* ---- alloc ---- */

/* Bits set in a byte (without -mpopcnt __builtin_popcount is a libgcc call). */
static inline unsigned popcount8(uint8_t x)
{
	static const uint8_t nib[16] = { 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4 };

	return nib[x & 15] + nib[x >> 4];
}

int bch_alloc_decode(const struct bkey_ref *k, struct bch_alloc_h *a)
{
	const uint8_t *v = k->v;
	unsigned need, pos = 2;

	memset(a, 0, sizeof(*a));
	if (!v || k->v_bytes < sizeof(struct bch_alloc))
		return -BCH_ERR_key_invalid;
	a->fields = v[0];
	a->gen	  = v[1];
	need = 2 + BCH_ALLOC_FIELD_BYTES * popcount8(v[0]);
	if (need > k->v_bytes)
		return -BCH_ERR_key_invalid;
	if (a->fields & (1U << BCH_ALLOC_FIELD_READ_TIME)) {
		a->has_read_time = true;
		a->read_time = get_le16_unaligned(v + pos);
		pos += 2;
	}
	if (a->fields & (1U << BCH_ALLOC_FIELD_WRITE_TIME)) {
		a->has_write_time = true;
		a->write_time = get_le16_unaligned(v + pos);
	}
	return 0;
}

static const char *alloc_invalid(const struct bkey_ref *k, const struct bkey_fs_ctx *fs)
{
	struct bch_dev_geom g;
	const uint8_t *v = k->v;

	if (fs && fs->dev_geom &&
	    (k->k.p.inode >= fs->nr_devices ||
	     !fs->dev_geom(fs->priv, (unsigned)k->k.p.inode, &g)))
		return "invalid device";
	if (k->k.type != BCH_ALLOC)
		return "invalid type";
	if (!v || k->v_bytes < sizeof(struct bch_alloc) ||
	    k->v_bytes / 8 != (unsigned)DIV_ROUND_UP(2 + BCH_ALLOC_FIELD_BYTES *
					   popcount8(v[0]), 8))
		return "incorrect value size";
	return NULL;
}

static void alloc_to_text(struct printbuf *out, const struct bkey_ref *k,
			  const struct bkey_fs_ctx *fs)
{
}

static void alloc_to_json(struct json *j, const struct bkey_ref *k,
			  const struct bkey_fs_ctx *fs)
{
	struct bch_alloc_h a;

	if (bch_alloc_decode(k, &a))
		return;
	json_u64(j, "gen", a.gen);
	if (a.has_read_time)
		json_u64(j, "read_time", a.read_time);
	if (a.has_write_time)
		json_u64(j, "write_time", a.write_time);
}

/* ---- quotas ---- */

int bch_quota_decode(const struct bkey_ref *k, struct bch_quota_h *q)
{
	const uint8_t *v = k->v;

	memset(q, 0, sizeof(*q));
	if (!v || k->v_bytes != sizeof(struct bch_quota))
		return -BCH_ERR_key_invalid;
	q->space_hardlimit  = get_le64_unaligned(v);
	q->space_softlimit  = get_le64_unaligned(v + 8);
	q->inodes_hardlimit = get_le64_unaligned(v + 16);
	q->inodes_softlimit = get_le64_unaligned(v + 24);
	return 0;
}

static const char *quota_invalid(const struct bkey_ref *k, const struct bkey_fs_ctx *fs)
{
	if (k->k.p.inode >= QTYP_NR)
		return "invalid quota type";
	if (k->k.type != BCH_QUOTA)
		return "invalid type";
	if (k->v_bytes != sizeof(struct bch_quota))
		return "incorrect value size";
	return NULL;
}

static void quota_to_text(struct printbuf *out, const struct bkey_ref *k,
			  const struct bkey_fs_ctx *fs)
{
	struct bch_quota_h q;

	if (bch_quota_decode(k, &q))
		return;
	/* no separator between the two parts: as 2018 */
	pr_buf(out, "space hardlimit %llu softlimit %llu",
	       (unsigned long long)q.space_hardlimit, (unsigned long long)q.space_softlimit);
	pr_buf(out, "inodes hardlimit %llu softlimit %llu",
	       (unsigned long long)q.inodes_hardlimit, (unsigned long long)q.inodes_softlimit);
}

static void quota_to_json(struct json *j, const struct bkey_ref *k,
			  const struct bkey_fs_ctx *fs)
{
	struct bch_quota_h q;

	if (bch_quota_decode(k, &q))
		return;
	json_u64(j, "space_hardlimit", q.space_hardlimit);
	json_u64(j, "space_softlimit", q.space_softlimit);
	json_u64(j, "inodes_hardlimit", q.inodes_hardlimit);
	json_u64(j, "inodes_softlimit", q.inodes_softlimit);
}

/* ---- adapters for the value modules ---- */

static void extent_to_text(struct printbuf *out, const struct bkey_ref *k,
			   const struct bkey_fs_ctx *fs)
{
	if (k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED)
		extent_entries_to_text(out, k, fs);
}

static void extent_to_json(struct json *j, const struct bkey_ref *k,
			   const struct bkey_fs_ctx *fs)
{
	const struct bch_reservation *r = k->v;

	if (k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED) {
		extent_entries_to_json(j, k, fs);
	} else if (k->k.type == BCH_RESERVATION && k->v_bytes >= sizeof(*r)) {
		json_u64(j, "generation", le32_to_cpu(r->generation));
		json_u64(j, "nr_replicas", r->nr_replicas);
	}
}

static const char *inode_invalid(const struct bkey_ref *k, const struct bkey_fs_ctx *fs)
{
	return bch_inode_invalid(k);
}

static void inode_to_text(struct printbuf *out, const struct bkey_ref *k,
			  const struct bkey_fs_ctx *fs)
{
	bch_inode_to_text(out, k);
}

static void inode_to_json(struct json *j, const struct bkey_ref *k,
			  const struct bkey_fs_ctx *fs)
{
	bch_inode_to_json(j, k);
}

static const char *dirent_invalid(const struct bkey_ref *k, const struct bkey_fs_ctx *fs)
{
	return bch_dirent_invalid(k);
}

static void dirent_to_text(struct printbuf *out, const struct bkey_ref *k,
			   const struct bkey_fs_ctx *fs)
{
	bch_dirent_to_text(out, k);
}

static void dirent_to_json(struct json *j, const struct bkey_ref *k,
			   const struct bkey_fs_ctx *fs)
{
	bch_dirent_to_json(j, k);
}

static const char *xattr_invalid(const struct bkey_ref *k, const struct bkey_fs_ctx *fs)
{
	return bch_xattr_invalid(k);
}

static void xattr_to_text(struct printbuf *out, const struct bkey_ref *k,
			  const struct bkey_fs_ctx *fs)
{
	bch_xattr_to_text(out, k);
}

static void xattr_to_json(struct json *j, const struct bkey_ref *k,
			  const struct bkey_fs_ctx *fs)
{
	bch_xattr_to_json(j, k);
}

static void btree_ptr_to_text(struct printbuf *out, const struct bkey_ref *k,
			      const struct bkey_fs_ctx *fs)
{
	extent_entries_to_text(out, k, fs);
}

/* ---- the table ---- */

static const struct bkey_ops bkey_ops[BKEY_TYPE_BTREE + 1] = {
	[BTREE_ID_EXTENTS] = {
		"extents", { "extent", "extent_cached", "reservation" },
		extent_invalid, extent_to_text, extent_to_json,
	},
	[BTREE_ID_INODES] = {
		"inodes", { "inode", "inode_blockdev", "inode_generation" },
		inode_invalid, inode_to_text, inode_to_json,
	},
	[BTREE_ID_DIRENTS] = {
		"dirents", { "dirent", "whiteout", NULL },
		dirent_invalid, dirent_to_text, dirent_to_json,
	},
	[BTREE_ID_XATTRS] = {
		"xattrs", { "xattr", "whiteout", NULL },
		xattr_invalid, xattr_to_text, xattr_to_json,
	},
	[BTREE_ID_ALLOC] = {
		"alloc", { "alloc", NULL, NULL },
		alloc_invalid, alloc_to_text, alloc_to_json,
	},
	[BTREE_ID_QUOTAS] = {
		"quotas", { "quota", NULL, NULL },
		quota_invalid, quota_to_text, quota_to_json,
	},
	[BKEY_TYPE_BTREE] = {
		"btree", { "btree_ptr", NULL, NULL },
		btree_ptr_invalid, btree_ptr_to_text, extent_entries_to_json,
	},
};

static const char * const generic_type_names[] = {
	"deleted", "discard", "error", "cookie",
};

/* Ops for keys of @btree_id at @level; NULL for an unknown btree. */
static const struct bkey_ops *ops_for(unsigned btree_id, unsigned level)
{
	if (btree_id >= BTREE_ID_NR)
		return NULL;
	return level ? &bkey_ops[BKEY_TYPE_BTREE] : &bkey_ops[btree_id];
}

const char *bch_btree_id_str(unsigned id)
{
	return id < BTREE_ID_NR ? bkey_ops[id].btree_name : "(unknown btree)";
}

int bch_btree_id_parse(const char *name)
{
	unsigned i;

	for (i = 0; i < BTREE_ID_NR; i++)
		if (!strcmp(name, bkey_ops[i].btree_name))
			return i;
	return -EINVAL;
}

const char *bch_bkey_type_str(unsigned btree_id, unsigned level, unsigned type)
{
	const struct bkey_ops *ops = ops_for(btree_id, level);

	if (type < ARRAY_SIZE(generic_type_names))
		return generic_type_names[type];
	if (!ops || type < KEY_TYPE_GENERIC_NR || type >= KEY_TYPE_GENERIC_NR + 3)
		return NULL;
	return ops->type_names[type - KEY_TYPE_GENERIC_NR];
}

/* ---- checks ---- */

const char *bch_bkey_header_invalid(unsigned btree_id, unsigned level, const struct bkey_h *k)
{
	if (btree_id == BTREE_ID_EXTENTS && !level) {
		if ((k->size == 0) != (k->type == KEY_TYPE_DELETED))
			return "bad size field";
		if (k->size > k->p.offset)
			return "extent starts before offset 0";
	} else if (k->size) {
		return "nonzero size field";
	}
	if (k->p.snapshot)
		return "nonzero snapshot";
	if (!level && bpos_eq(k->p, POS_H_MAX))
		return "POS_MAX key";
	return NULL;
}

const char *bch_bkey_val_invalid(unsigned btree_id, unsigned level,
				 const struct bkey_ref *k, const struct bkey_fs_ctx *fs)
{
	const struct bkey_ops *ops = ops_for(btree_id, level);

	if (k->v_bytes && !k->v)
		return "missing value";
	switch (k->k.type) {
	case KEY_TYPE_DELETED:
	case KEY_TYPE_DISCARD:
		return NULL;
	case KEY_TYPE_ERROR:
		return k->v_bytes ? "value size should be zero" : NULL;
	case KEY_TYPE_COOKIE:
		return k->v_bytes != sizeof(struct bch_cookie) ? "incorrect value size" : NULL;
	default:
		if (k->k.type < KEY_TYPE_GENERIC_NR)
			return "invalid type";
		if (!ops)
			return "invalid btree id";
		return ops->invalid(k, fs);
	}
}

int bch_bkey_validate_fs(unsigned btree_id, unsigned level, const struct bkey_ref *k,
			 const struct bkey_fs_ctx *fs, struct printbuf *err)
{
	const char *r = bch_bkey_header_invalid(btree_id, level, &k->k);

	if (!r)
		r = bch_bkey_val_invalid(btree_id, level, k, fs);
	if (!r)
		return 0;
	if (err) {
		pr_buf(err, "%s key ", bch_btree_id_str(btree_id));
		if (level)
			pr_buf(err, "(level %u) ", level);
		bch_bpos_to_text(err, k->k.p);
		pr_buf(err, " (type %u, u64s %u): %s", k->k.type, k->k.u64s, r);
	}
	return -BCH_ERR_key_invalid;
}

int bch_bkey_validate(unsigned btree_id, unsigned level, const struct bkey_ref *k,
		      struct printbuf *err)
{
	return bch_bkey_validate_fs(btree_id, level, k, NULL, err);
}

/* ---- printing ---- */

void bch_bpos_to_text(struct printbuf *out, struct bpos_h p)
{
	if (bpos_eq(p, POS_H_MAX))
		pr_str(out, "POS_MAX");
	else {
		pr_u64(out, p.inode);
		pr_char(out, ':');
		pr_u64(out, p.offset);
	}
}

void bch_bkey_val_to_text(struct printbuf *out, unsigned btree_id, unsigned level,
			  const struct bkey_ref *k, const struct bkey_print_ctx *ctx)
{
	const struct bkey_fs_ctx *fs = ctx ? ctx->fs : NULL;
	const struct bkey_ops *ops;
	const char *invalid;

	if (k->k.type < ARRAY_SIZE(generic_type_names)) {
		pr_buf(out, " %s", generic_type_names[k->k.type]);
		return;
	}
	if (k->k.type < KEY_TYPE_GENERIC_NR)
		return;

	ops = ops_for(btree_id, ctx && ctx->interior_as_leaf ? 0 : level);
	if (!ops)
		return;
	ops->to_text(out, k, fs);

	/* the extents and btree pointer printers append the check's verdict */
	if (ops == &bkey_ops[BTREE_ID_EXTENTS] || ops == &bkey_ops[BKEY_TYPE_BTREE]) {
		invalid = ops->invalid(k, fs);
		if (invalid)
			pr_buf(out, " invalid: %s", invalid);
	}
}

void bch_bkey_to_text(struct printbuf *out, unsigned btree_id, unsigned level,
		      const struct bkey_ref *k, const struct bkey_print_ctx *ctx)
{
	size_t start = out->pos;
	char *nul;

	/* "u64s %u type %u %pos snap %u len %u ver %llu: " (the hottest printer of list) */
	pr_str(out, "u64s ");
	pr_u64(out, k->k.u64s);
	pr_str(out, " type ");
	pr_u64(out, k->k.type);
	pr_char(out, ' ');
	bch_bpos_to_text(out, k->k.p);
	pr_str(out, " snap ");
	pr_u64(out, k->k.p.snapshot);
	pr_str(out, " len ");
	pr_u64(out, k->k.size);
	pr_str(out, " ver ");
	pr_u64(out, k->k.version_lo);
	pr_str(out, ": ");
	bch_bkey_val_to_text(out, btree_id, level, k, ctx);

	/* raw name/value bytes: the 2018 line was a C string */
	nul = memchr(out->buf + start, 0, out->pos - start);
	if (nul)
		out->pos = nul - out->buf;
	if (ctx && ctx->max_len && out->pos - start > ctx->max_len)
		out->pos = start + ctx->max_len;
	out->buf[out->pos] = 0;
}

void bch_bkey_to_json(struct json *j, unsigned btree_id, unsigned level,
		      const struct bkey_ref *k, const struct bkey_print_ctx *ctx)
{
	const struct bkey_fs_ctx *fs = ctx ? ctx->fs : NULL;
	const struct bkey_ops *ops = ops_for(btree_id, level);
	const char *name = bch_bkey_type_str(btree_id, level, k->k.type);
	const char *invalid = bch_bkey_val_invalid(btree_id, level, k, fs);

	json_obj_begin(j, NULL);
	json_u64(j, "u64s", k->k.u64s);
	json_u64(j, "type", k->k.type);
	if (name)
		json_str(j, "type_name", name);
	json_u64(j, "inode", k->k.p.inode);
	json_u64(j, "offset", k->k.p.offset);
	json_u64(j, "snapshot", k->k.p.snapshot);
	json_u64(j, "size", k->k.size);
	json_u64(j, "version_hi", k->k.version_hi);
	json_u64(j, "version_lo", k->k.version_lo);
	if (ops && k->k.type >= KEY_TYPE_GENERIC_NR) {
		json_obj_begin(j, "value");
		ops->to_json(j, k, fs);
		json_obj_end(j);
	}
	if (invalid)
		json_str(j, "invalid", invalid);
	json_obj_end(j);
}
