// SPDX-License-Identifier: GPL-2.0
/*
 * Quotas: usage counted from the inodes, limits from the quotas btree
 * (doc/format.md §5.9). See quota.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bkey/inode.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "core/bch_fs.h"
#include "format/format.h"
#include "fs/fsread.h"
#include "fs/quota.h"
#include "util/util.h"

struct quota_entry {
	uint32_t		id;
	bool			used;
	int64_t			sectors, inodes;
	struct bch_quota_h	lim;
};

/* Open addressing on the id; never shrinks (ids seen stay, at zero). */
struct quota_type_table {
	struct quota_entry	*e;
	size_t			nr, size;	/* size: 0 or a power of two */
};

/* What quotas need of an inode: its ids and sectors (present: it exists). */
struct qinode {
	bool			present;
	uint32_t		id[BCH_QUOTA_NR_TYPES];
	uint64_t		sectors;
};

/*
 * The inodes the hook saw last, direct-mapped by number: a write's commit
 * finds its inode here instead of reading it from the btree (which cost
 * the mount two thirds of its speed on small writes). An entry is filled
 * from the btree or by a commit, and every inode key committed goes
 * through the hook, so a valid entry is the inode as committed.
 */
#define QUOTA_CACHE_NR		4096

struct qcache_entry {
	bool			valid;
	uint64_t		inum;
	struct qinode		qi;
};

struct bch_quota_table {
	unsigned		types;
	struct quota_type_table	t[BCH_QUOTA_NR_TYPES];
	struct qcache_entry	*cache;		/* the running filesystem's */
};

static const char *const type_names[BCH_QUOTA_NR_TYPES] = { "user", "group", "project" };
static const char *const type_short[BCH_QUOTA_NR_TYPES] = { "usr", "grp", "prj" };

const char *bch_quota_type_name(unsigned type)
{
	return type < BCH_QUOTA_NR_TYPES ? type_names[type] : NULL;
}

int bch_quota_type_lookup(const char *name)
{
	for (unsigned i = 0; i < BCH_QUOTA_NR_TYPES; i++)
		if (!strcmp(name, type_names[i]) || !strcmp(name, type_short[i]))
			return (int)i;
	return -1;
}

unsigned bch_quota_sb_types(struct bch_fs *c)
{
	return (BCH_SB_USRQUOTA(c->sb) ? 1U : 0) |
	       (BCH_SB_GRPQUOTA(c->sb) ? 2U : 0) |
	       (BCH_SB_PRJQUOTA(c->sb) ? 4U : 0);
}

/* ---- the table ---- */

static size_t slot_of(uint32_t id, size_t size)
{
	return (size_t)((id * 2654435761U) & (size - 1));
}

static struct quota_entry *entry_find(struct quota_type_table *t, uint32_t id, bool create)
{
	size_t i;

	if (!t->size && !create)
		return NULL;
	if (create && (t->nr + 1) * 2 > t->size) {
		struct quota_type_table n = { .size = t->size ? t->size * 2 : 64 };

		n.e = xcalloc(n.size, sizeof(*n.e));
		for (size_t j = 0; j < t->size; j++)
			if (t->e[j].used) {
				for (i = slot_of(t->e[j].id, n.size); n.e[i].used; i = (i + 1) & (n.size - 1))
					;
				n.e[i] = t->e[j];
				n.nr++;
			}
		free(t->e);
		*t = n;
	}
	for (i = slot_of(id, t->size); t->e[i].used; i = (i + 1) & (t->size - 1))
		if (t->e[i].id == id)
			return &t->e[i];
	if (!create)
		return NULL;
	t->e[i].used = true;
	t->e[i].id = id;
	t->nr++;
	return &t->e[i];
}

static void qinode_of(struct qinode *qi, const struct bch_inode_unpacked *u)
{
	qi->present = true;
	qi->id[0] = u->bi_uid;
	qi->id[1] = u->bi_gid;
	qi->id[2] = u->bi_project;
	qi->sectors = u->bi_sectors;
}

static void account(struct bch_quota_table *q, const struct qinode *qi, int sign)
{
	if (!qi->present)
		return;
	for (unsigned type = 0; type < BCH_QUOTA_NR_TYPES; type++)
		if (q->types & (1U << type)) {
			struct quota_entry *e = entry_find(&q->t[type], qi->id[type], true);

			e->sectors += sign * (int64_t)qi->sectors;
			e->inodes += sign;
		}
}

void bch_quota_free(struct bch_quota_table *q)
{
	if (!q)
		return;
	for (unsigned i = 0; i < BCH_QUOTA_NR_TYPES; i++)
		free(q->t[i].e);
	free(q->cache);
	free(q);
}

int bch_quota_count(struct bch_fs *c, unsigned types, struct bch_quota_table **out,
		    struct printbuf *err)
{
	struct bch_quota_table *q = xcalloc(1, sizeof(*q));
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	q->types = types & 7;
	bch_btree_iter_init(&iter, c, BTREE_ID_INODES, POS_H_MIN, err);
	while (!(ret = bch_btree_iter_next(&iter, &k)) && k) {
		struct bch_inode_unpacked u;
		struct qinode qi;

		/* what the 2018 mount counted: every inode of type 128 that unpacks */
		if (k->k.type == BCH_INODE_FS && !bch_inode_unpack(k, &u)) {
			qinode_of(&qi, &u);
			account(q, &qi, 1);
		}
	}
	bch_btree_iter_exit(&iter);

	if (!ret) {
		bch_btree_iter_init(&iter, c, BTREE_ID_QUOTAS, POS_H_MIN, err);
		while (!(ret = bch_btree_iter_next(&iter, &k)) && k) {
			struct bch_quota_h lim;

			if (k->k.type != BCH_QUOTA || k->k.p.inode >= BCH_QUOTA_NR_TYPES ||
			    k->k.p.offset > UINT32_MAX || bch_quota_decode(k, &lim))
				continue;
			entry_find(&q->t[k->k.p.inode], (uint32_t)k->k.p.offset, true)->lim = lim;
		}
		bch_btree_iter_exit(&iter);
	}
	if (ret) {
		bch_quota_free(q);
		return ret;
	}
	*out = q;
	return 0;
}

/* ---- the running filesystem ---- */

/*
 * Would (@type, @id) go over a hard limit with @sectors and @inodes more?
 * Only growth is refused: a change that frees (or moves nothing) passes.
 */
static bool over_limit(struct bch_quota_table *q, unsigned type, uint32_t id,
		       int64_t sectors, int64_t inodes)
{
	struct quota_entry *e = entry_find(&q->t[type], id, false);

	if (!e)
		return false;
	if (sectors > 0 && e->lim.space_hardlimit &&
	    (uint64_t)(e->sectors + sectors) > e->lim.space_hardlimit)
		return true;
	return inodes > 0 && e->lim.inodes_hardlimit &&
	       (uint64_t)(e->inodes + inodes) > e->lim.inodes_hardlimit;
}

/* Inode @inum as committed: from the cache, or read (and cached). */
static void qinode_committed(struct bch_fs *c, struct bch_quota_table *q, uint64_t inum,
			     struct qinode *qi)
{
	struct qcache_entry *ce = &q->cache[inum % QUOTA_CACHE_NR];
	struct bch_inode_unpacked u;

	if (ce->valid && ce->inum == inum) {
		*qi = ce->qi;
		return;
	}
	memset(qi, 0, sizeof(*qi));
	/* the overlay first: the inode as committed so far */
	if (!bch_inode_get(c, inum, &u, NULL))
		qinode_of(qi, &u);
	ce->valid = true;
	ce->inum = inum;
	ce->qi = *qi;
}

static int quota_hook(struct bch_fs *c, void *arg, const struct bkey_ref *k, bool apply)
{
	struct bch_quota_table *q = arg;
	struct bch_inode_unpacked u;
	struct qinode old, new = { .present = false };

	if (k->k.p.offset)
		return 0;
	qinode_committed(c, q, k->k.p.inode, &old);
	if (k->k.type == BCH_INODE_FS && !bch_inode_unpack(k, &u))
		qinode_of(&new, &u);
	if (apply) {
		struct qcache_entry *ce = &q->cache[k->k.p.inode % QUOTA_CACHE_NR];

		account(q, &old, -1);
		account(q, &new, 1);
		ce->qi = new;	/* (qinode_committed() made it this inode's) */
		return 0;
	}
	if (!new.present)
		return 0;
	for (unsigned type = 0; type < BCH_QUOTA_NR_TYPES; type++) {
		int64_t ds = (int64_t)new.sectors, di = 1;

		if (!(q->types & (1U << type)))
			continue;
		if (old.present && old.id[type] == new.id[type]) {
			ds -= (int64_t)old.sectors;
			di = 0;
		}
		if (over_limit(q, type, new.id[type], ds, di))
			return -EDQUOT;
	}
	return 0;
}

int bch_quota_start(struct bch_fs *c, unsigned types, struct printbuf *err)
{
	struct bch_quota_table *q;
	int ret;

	if (!(types & 7))
		return 0;
	ret = bch_quota_count(c, types, &q, err);
	if (ret)
		return ret;
	q->cache = xcalloc(QUOTA_CACHE_NR, sizeof(*q->cache));
	c->inode_hook_arg = q;
	c->inode_hook = quota_hook;
	return 0;
}

void bch_quota_stop(struct bch_fs *c)
{
	struct bch_quota_table *q = bch_quota_running(c);

	c->inode_hook = NULL;
	c->inode_hook_arg = NULL;
	bch_quota_free(q);
}

struct bch_quota_table *bch_quota_running(struct bch_fs *c)
{
	return c->inode_hook == quota_hook ? c->inode_hook_arg : NULL;
}

/* ---- report and limits ---- */

static int cmp_entry(const void *a, const void *b)
{
	const struct quota_entry *x = *(const struct quota_entry *const *)a;
	const struct quota_entry *y = *(const struct quota_entry *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void pr_used(struct printbuf *out, int64_t used, uint64_t soft)
{
	pr_buf(out, " %" PRId64 "%s", used, soft && used > (int64_t)soft ? "*" : "");
}

void bch_quota_report(struct printbuf *out, const struct bch_quota_table *q)
{
	for (unsigned type = 0; type < BCH_QUOTA_NR_TYPES; type++) {
		const struct quota_type_table *t = &q->t[type];
		const struct quota_entry **v;
		size_t n = 0;

		if (!(q->types & (1U << type)) || !t->nr)
			continue;
		v = xcalloc(t->nr, sizeof(*v));
		for (size_t i = 0; i < t->size; i++) {
			const struct quota_entry *e = &t->e[i];

			if (e->used && (e->sectors || e->inodes || e->lim.space_hardlimit ||
					e->lim.space_softlimit || e->lim.inodes_hardlimit ||
					e->lim.inodes_softlimit))
				v[n++] = e;
		}
		qsort(v, n, sizeof(*v), cmp_entry);
		for (size_t i = 0; i < n; i++) {
			const struct quota_entry *e = v[i];

			pr_buf(out, "%s %" PRIu32 " space", type_names[type], e->id);
			pr_used(out, e->sectors, e->lim.space_softlimit);
			pr_buf(out, " %" PRIu64 " %" PRIu64 " inodes", e->lim.space_softlimit,
			       e->lim.space_hardlimit);
			pr_used(out, e->inodes, e->lim.inodes_softlimit);
			pr_buf(out, " %" PRIu64 " %" PRIu64 "\n", e->lim.inodes_softlimit,
			       e->lim.inodes_hardlimit);
		}
		free(v);
	}
}

int bch_quota_limits_parse(const char *s, struct bch_quota_h *lim)
{
	static const char *const names[] = { "space_hard", "space_soft", "inodes_hard", "inodes_soft" };
	char *copy = xstrdup(s), *save = NULL;
	int ret = 0;

	for (char *t = strtok_r(copy, ",", &save); t && !ret; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), *end;
		unsigned long long v;
		unsigned i;

		ret = -EINVAL;
		if (!eq)
			break;
		*eq = '\0';
		errno = 0;
		v = strtoull(eq + 1, &end, 10);
		if (errno || end == eq + 1 || *end || eq[1] == '-')
			break;
		for (i = 0; i < ARRAY_SIZE(names) && strcmp(t, names[i]); i++)
			;
		switch (i) {
		case 0: lim->space_hardlimit = v; ret = 0; break;
		case 1: lim->space_softlimit = v; ret = 0; break;
		case 2: lim->inodes_hardlimit = v; ret = 0; break;
		case 3: lim->inodes_softlimit = v; ret = 0; break;
		}
	}
	free(copy);
	return ret;
}

void bch_quota_limits_get(const struct bch_quota_table *q, unsigned type, uint32_t id,
			  struct bch_quota_h *lim)
{
	struct quota_entry *e = type < BCH_QUOTA_NR_TYPES
		? entry_find((struct quota_type_table *)&q->t[type], id, false) : NULL;

	if (e)
		*lim = e->lim;
	else
		memset(lim, 0, sizeof(*lim));
}

int bch_quota_limits_set(struct bch_fs *c, unsigned type, uint32_t id,
			 const struct bch_quota_h *lim, struct printbuf *err)
{
	struct bch_quota_table *q = bch_quota_running(c);
	struct bkey_h k = { .type = BCH_QUOTA, .p = POS_H(type, id) };
	uint8_t v[sizeof(struct bch_quota)];
	struct btree_trans t;
	int ret;

	if (type >= BCH_QUOTA_NR_TYPES)
		return -EINVAL;
	put_le64_unaligned(v, lim->space_hardlimit);
	put_le64_unaligned(v + 8, lim->space_softlimit);
	put_le64_unaligned(v + 16, lim->inodes_hardlimit);
	put_le64_unaligned(v + 24, lim->inodes_softlimit);
	bch_trans_init(&t, c);
	if (lim->space_hardlimit || lim->space_softlimit || lim->inodes_hardlimit ||
	    lim->inodes_softlimit)
		bch_trans_update(&t, BTREE_ID_QUOTAS, &k, v, sizeof(v));
	else
		bch_trans_delete(&t, BTREE_ID_QUOTAS, k.p);
	ret = bch_trans_commit(&t, err);
	bch_trans_exit(&t);
	if (!ret && q)
		entry_find(&q->t[type], id, true)->lim = *lim;
	return ret;
}
