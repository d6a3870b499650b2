// SPDX-License-Identifier: GPL-2.0
/*
 * First-mount initialisation (doc/engine.md §13, doc/format.md §5.5.6): see init.h
 * for what is written and in which order.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc/alloc.h"
#include "btree/bulk.h"
#include "dev/dev.h"
#include "bkey/dirent.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fs/init.h"
#include "bkey/inode.h"
#include "journal/journal.h"
#include "journal/journal_write.h"
#include "btree/node_write.h"
#include "dev/super.h"
#include "util/util.h"

#define LOST_FOUND		"lost+found"
#define LOST_FOUND_INO		(BCACHEFS_ROOT_INO + 1)
#define DIR_MODE		0040755

/* The btrees whose roots a new filesystem gets, in id order. */
static const unsigned init_btrees[] = { BTREE_ID_INODES, BTREE_ID_DIRENTS, BTREE_ID_ALLOC };

struct init_root {
	unsigned		btree_id;
	struct btree_ptr_h	ptrs[BCH_REPLICAS_MAX];
	unsigned		nr_ptrs;
	struct bkey_ref		key;		/* the root pointer key */
	uint64_t		key_val[BKEY_BTREE_PTR_VAL_U64s_MAX];
	struct btree_node_buf	nb;
	/* keys of the second bset */
	struct bkey_ref		*keys;
	size_t			nr_keys;
};

struct init_state {
	struct bch_fs		*c;
	struct bch_allocator	a;
	struct btree_write_ctx	wctx;
	struct bch_journal_writer jw;
	struct init_root	roots[ARRAY_SIZE(init_btrees)];
	bool			bulk;		/* opts->populate: roots in bulk_roots */
	struct bulk_root	bulk_roots[BCH_NR_BTREES];

	/* values of the inode and dirent keys */
	uint8_t			root_val[BCH_INODE_VAL_BYTES_MAX];
	uint8_t			lf_val[BCH_INODE_VAL_BYTES_MAX];
	uint8_t			dirent_val[64];
	struct bkey_ref		inode_keys[2];
	struct bkey_ref		dirent_key;
	size_t			nr_inodes;
	bool			have_dirent;

	struct bkey_ref		*alloc_keys;
	uint64_t		*alloc_vals;
	size_t			nr_alloc_keys;
};

static struct init_root *root_of(struct init_state *s, unsigned btree_id)
{
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(init_btrees); i++)
		if (s->roots[i].btree_id == btree_id)
			return &s->roots[i];
	return NULL;
}

static uint64_t ptrs_devs(const struct btree_ptr_h *p, unsigned nr)
{
	uint64_t m = 0;
	unsigned i;

	for (i = 0; i < nr; i++)
		m |= 1ULL << p[i].dev;
	return m;
}

/* ---- checks ------------------------------------------------------------- */

static int check_fs(struct bch_fs *c, struct printbuf *err)
{
	unsigned i;

	if (BCH_SB_INITIALIZED(c->sb)) {
		pr_str(err, "filesystem is already initialized\n");
		return -EINVAL;
	}
	if (c->opts.read_only) {
		pr_str(err, "cannot initialize a filesystem opened read-only\n");
		return -BCH_ERR_read_only;
	}
	for (i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++) {
		const struct bch_member *m = bch_sb_member(c->sb, i);

		if (!m || !bch_member_exists(m))
			continue;
		if (!c->devs[i] || !c->devs[i]->io || !c->devs[i]->sb) {
			pr_buf(err, "cannot initialize the filesystem: member device %u is missing\n", i);
			return -BCH_ERR_dev_missing;
		}
		if (!c->devs[i]->io->rw) {
			pr_buf(err, "%s: opened read-only\n", c->devs[i]->io->path);
			return -BCH_ERR_read_only;
		}
	}
	if (!c->btree_node_size || !c->block_size) {
		pr_str(err, "superblock has no btree node size or block size\n");
		return -EINVAL;
	}
	return 0;
}

/* ---- keys --------------------------------------------------------------- */

static int64_t now_ns(const struct bch_init_opts *o)
{
	struct timespec ts;

	if (o->now_ns)
		return o->now_ns;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void inode_new(struct bch_inode_unpacked *u, const struct bch_fs *c, uint64_t inum,
		      uint64_t seed, int64_t ns)
{
	uint64_t t = bch_inode_ns_to_time(ns, le64_to_cpu(c->sb->time_base_lo),
					  le32_to_cpu(c->sb->time_precision));

	memset(u, 0, sizeof(*u));
	u->bi_inum	= inum;
	u->bi_hash_seed	= seed ?: bch_random_u64();
	u->bi_flags	= (uint32_t)(c->str_hash_type & 0xf) << 20;
	u->bi_mode	= DIR_MODE;
	u->bi_atime = u->bi_ctime = u->bi_mtime = u->bi_otime = t;
}

static void inode_key(struct bkey_ref *k, const struct bch_inode_unpacked *u, uint8_t *val)
{
	size_t bytes = bch_inode_pack(u, val);

	memset(k, 0, sizeof(*k));
	k->k.u64s	= (uint8_t)(BKEY_U64S_UNPACKED + bytes / 8);
	k->k.type	= 128;
	k->k.p		= POS_H(u->bi_inum, 0);
	k->v		= val;
	k->v_bytes	= (unsigned)bytes;
}

static int make_fs_keys(struct init_state *s, const struct bch_init_opts *o,
			struct printbuf *err)
{
	struct bch_fs *c = s->c;
	struct bch_inode_unpacked root, lf;
	struct bch_hash_info hi;
	int64_t ns = now_ns(o);
	size_t bytes;
	int ret;

	inode_new(&root, c, BCACHEFS_ROOT_INO, o->root_hash_seed, ns);
	s->nr_inodes = 1;
	if (!o->no_lost_found) {
		/* lost+found inherits the 8 option fields of the root (all 0 here) */
		inode_new(&lf, c, LOST_FOUND_INO, o->lf_hash_seed, ns);
		root.bi_nlink++;		/* one more subdirectory */
		inode_key(&s->inode_keys[1], &lf, s->lf_val);
		s->nr_inodes = 2;

		ret = bch_hash_info_init(&hi, c->str_hash_type, root.bi_hash_seed);
		if (ret) {
			pr_buf(err, "unknown string hash type %u in the superblock\n", c->str_hash_type);
			return ret;
		}
		bytes = bch_dirent_encode(LOST_FOUND_INO, BCH_DT_DIR, LOST_FOUND,
					  strlen(LOST_FOUND), s->dirent_val, sizeof(s->dirent_val));
		if (!bytes)
			return -EINVAL;
		memset(&s->dirent_key, 0, sizeof(s->dirent_key));
		s->dirent_key.k.u64s = (uint8_t)(BKEY_U64S_UNPACKED + bytes / 8);
		s->dirent_key.k.type = 128;
		s->dirent_key.k.p = POS_H(BCACHEFS_ROOT_INO,
					  bch_dirent_hash(&hi, LOST_FOUND, strlen(LOST_FOUND)));
		s->dirent_key.v = s->dirent_val;
		s->dirent_key.v_bytes = (unsigned)bytes;
		s->have_dirent = true;
	}
	inode_key(&s->inode_keys[0], &root, s->root_val);
	return 0;
}

/* ---- nodes -------------------------------------------------------------- */

static int alloc_roots(struct init_state *s, struct printbuf *err)
{
	unsigned i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(init_btrees); i++) {
		struct init_root *r = &s->roots[i];

		r->btree_id = init_btrees[i];
		if (r->btree_id == BTREE_ID_DIRENTS && !s->have_dirent)
			continue;
		if (s->bulk)
			continue;	/* bulk_alloc_btree() and the populate callback */
		ret = bch_alloc_btree_node(&s->a, r->ptrs, &r->nr_ptrs, err);
		if (ret)
			return ret;
		bch_btree_ptr_key(&r->key, r->key_val, POS_H_MAX, r->ptrs, r->nr_ptrs);
		bch_replicas_add(&s->a.replicas, BCH_DATA_BTREE, ptrs_devs(r->ptrs, r->nr_ptrs));
	}
	return 0;
}

/*
 * Each root as the reference creates a btree's first root (doc/engine.md §13):
 * an empty first bset (zero-width format, BTREE_NODE_SEQ 1, journal_seq 0),
 * then the keys appended in a bset with the journal seq that carries them.
 */
static int build_roots(struct init_state *s, uint64_t journal_seq, struct printbuf *err)
{
	unsigned i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(init_btrees); i++) {
		struct init_root *r = &s->roots[i];
		struct btree_node_new n = {
			.btree_id	= r->btree_id,
			.level		= 0,
			.min_key	= POS_H_MIN,
			.max_key	= POS_H_MAX,
			.node_seq	= 1,
			.ptr		= r->ptrs[0],
		};

		if (!r->nr_ptrs)
			continue;
		ret = bch_btree_node_build(&s->wctx, &n, 0, NULL, 0, &r->nb, err);
		if (!ret && r->nr_keys)
			ret = bch_btree_node_append(&s->wctx, &r->nb, journal_seq,
						    r->keys, r->nr_keys, err);
		if (ret) {
			pr_buf(err, "building the root node of btree %u\n", r->btree_id);
			return ret;
		}
		ret = bch_btree_node_write(s->c, &r->nb, 0, r->ptrs, r->nr_ptrs, err);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- journal ------------------------------------------------------------ */

static int add_roots(struct init_state *s, struct jset_builder *b)
{
	int ret = 0;

	for (unsigned id = 0; id < BCH_NR_BTREES && !ret; id++) {
		struct init_root *r = root_of(s, id);

		if (r && r->nr_ptrs)
			ret = jset_add_root(b, id, 0, &r->key);
		else if (s->bulk && s->bulk_roots[id].present)
			ret = jset_add_root(b, id, s->bulk_roots[id].level,
					    &s->bulk_roots[id].key);
	}
	return ret;
}

static int write_journal(struct init_state *s, struct printbuf *err)
{
	struct jset_builder b;
	unsigned i;
	int ret;

	ret = bch_journal_writer_init(&s->jw, s->c, err);
	for (i = 0; i < BCH_ALLOC_MAX_DEVS && !ret; i++)
		if (s->a.devs[i] && s->a.devs[i]->nr_journal)
			ret = bch_journal_writer_set_dev(&s->jw, i, s->a.devs[i]->journal,
							 s->a.devs[i]->nr_journal, err);
	if (ret)
		return ret;

	/* entry 1: the keys, in commit order, then the roots (doc/engine.md §4.3) */
	jset_builder_init(&b);
	if (s->nr_alloc_keys)
		ret = jset_add_keys(&b, BTREE_ID_ALLOC, 0, s->alloc_keys, s->nr_alloc_keys);
	if (!ret && s->nr_inodes)
		ret = jset_add_keys(&b, BTREE_ID_INODES, 0, s->inode_keys, s->nr_inodes);
	if (!ret && s->have_dirent)
		ret = jset_add_keys(&b, BTREE_ID_DIRENTS, 0, &s->dirent_key, 1);
	if (!ret)
		ret = add_roots(s, &b);
	if (!ret)
		ret = bch_journal_write(&s->jw, &b, 1, true, err);
	jset_builder_exit(&b);
	if (ret)
		return ret;
	bch_replicas_add(&s->a.replicas, BCH_DATA_JOURNAL, s->jw.last_devs);

	/* entry 2: roots only, every key is in the nodes: last_seq = seq */
	jset_builder_init(&b);
	ret = add_roots(s, &b);
	if (!ret)
		ret = bch_journal_write(&s->jw, &b, 0, true, err);
	jset_builder_exit(&b);
	if (!ret)
		bch_replicas_add(&s->a.replicas, BCH_DATA_JOURNAL, s->jw.last_devs);
	return ret;
}

/* ---- superblocks -------------------------------------------------------- */

/* The journal field of device @d. */
static void *journal_field(const struct bch_dev_alloc *d, size_t *bytes)
{
	size_t n = d->nr_journal, i;
	uint8_t *f;

	*bytes = 8 * (n + 1);
	f = xcalloc(1, *bytes);
	put_le64_unaligned(f, 0);
	f[0] = (uint8_t)((n + 1) & 0xff);
	f[1] = (uint8_t)((n + 1) >> 8);
	f[2] = (uint8_t)((n + 1) >> 16);
	f[4] = BCH_SB_FIELD_journal;
	for (i = 0; i < n; i++)
		put_le64_unaligned(f + 8 * (i + 1), d->journal[i]);
	return f;
}

/*
 * The filesystem-wide superblock after initialisation: seq + 1,
 * INITIALIZED, CLEAN, last_mount (doc/format.md §2.14, doc/engine.md §13).
 */
static int new_fs_sb(struct init_state *s, struct bch_sb **ret, struct printbuf *err)
{
	struct bch_fs *c = s->c;
	struct bch_sb *sb = xmalloc(bch_sb_bytes(c->sb));
	struct bch_sb_field_members *mf;
	uint64_t now = (uint64_t)time(NULL);
	size_t i;

	memcpy(sb, c->sb, bch_sb_bytes(c->sb));
	sb->seq = cpu_to_le64(le64_to_cpu(sb->seq) + 1);
	SET_BCH_SB_INITIALIZED(sb, 1);
	SET_BCH_SB_CLEAN(sb, 1);

	mf = (struct bch_sb_field_members *)bch_sb_field_find(sb, BCH_SB_FIELD_members);
	for (i = 0; mf && i < sb->nr_devices && i < bch_sb_members_nr(mf); i++)
		if (s->a.devs[i] && bch_member_exists(&mf->members[i]))
			mf->members[i].last_mount = cpu_to_le64(now);

	*ret = sb;
	return 0;
}

/*
 * Device @i's superblock: the filesystem-wide one, its own journal field,
 * then the replicas field (the reference's field order: members, journal,
 * replicas).
 */
static struct bch_sb *dev_sb(struct init_state *s, const struct bch_sb *fs, unsigned i,
			     const void *replicas, size_t replicas_bytes)
{
	const struct bch_sb *own = s->c->devs[i]->sb;
	struct bch_sb *sb = xmalloc(bch_sb_bytes(fs));
	size_t bytes;
	void *jf;

	memcpy(sb, fs, bch_sb_bytes(fs));
	/* the device keeps its own index and layout */
	sb->dev_idx = own->dev_idx;
	memcpy(&sb->layout, &own->layout, sizeof(sb->layout));
	sb->offset = own->offset;
	if (s->a.devs[i] && s->a.devs[i]->nr_journal) {
		jf = journal_field(s->a.devs[i], &bytes);
		bch_sb_field_replace(&sb, BCH_SB_FIELD_journal, jf, bytes);
		free(jf);
	}
	bch_sb_field_replace(&sb, BCH_SB_FIELD_replicas, replicas, replicas_bytes);
	return sb;
}

static int write_sbs(struct init_state *s, struct printbuf *err)
{
	struct bch_fs *c = s->c;
	struct bch_sb *fs, *sbs[BCH_FS_MAX_DEVS] = { NULL };
	unsigned i;
	int ret;

	uint8_t *replicas;
	size_t replicas_bytes = bch_replicas_field_build(&s->a.replicas, &replicas);

	if (!replicas_bytes) {
		pr_str(err, "replicas entry with more than 3 devices\n");
		return -EINVAL;
	}
	ret = new_fs_sb(s, &fs, err);
	if (ret) {
		free(replicas);
		return ret;
	}
	/* one whole image per device, then every device written alike */
	for (i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
		if (c->devs[i] && c->devs[i]->io && c->devs[i]->sb)
			sbs[i] = dev_sb(s, fs, i, replicas, replicas_bytes);
	ret = bch_fs_sb_write_all(c, sbs, err);
	free(fs);
	free(replicas);
	return ret;
}

/* ---- the whole ---------------------------------------------------------- */

static int init_journal_buckets(struct init_state *s, struct printbuf *err)
{
	unsigned i;
	int ret;

	for (i = 0; i < BCH_ALLOC_MAX_DEVS; i++) {
		struct bch_dev_alloc *d = s->a.devs[i];

		if (!d || d->nr_journal)
			continue;
		ret = bch_alloc_journal_buckets(&s->a, i,
				bch_journal_buckets_wanted(d->nbuckets, d->bucket_size), err);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Bulk mode: the alloc btree in as many nodes as its keys need. Its nodes'
 * buckets need alloc keys too, so nodes are taken until they are enough
 * for every dirty bucket including their own; the keys are not journalled.
 */
static int bulk_alloc_btree(struct init_state *s, struct printbuf *err)
{
	struct bulk_pool pool = { 0 };
	struct bkey_ref *keys = NULL;
	uint64_t *vals = NULL;
	size_t nr = 0, size = 0;
	unsigned key_u64s;
	int ret;

	for (;;) {
		free(keys);
		free(vals);
		keys = NULL;
		vals = NULL;
		ret = bch_alloc_dirty_keys(&s->a, &keys, &vals, &nr);
		if (ret)
			goto out;
		key_u64s = 0;
		for (size_t i = 0; i < nr; i++)
			key_u64s = max_t(unsigned, key_u64s, keys[i].k.u64s);
		if (pool.nr && bch_bulk_nodes_for(&s->wctx, 0, nr, key_u64s,
						  5 + pool.nr_ptrs[0]) <= pool.nr)
			break;
		if (pool.nr == size) {
			size = size ? 2 * size : 4;
			pool.ptrs = xrealloc(pool.ptrs, size * sizeof(*pool.ptrs));
			pool.nr_ptrs = xrealloc(pool.nr_ptrs, size * sizeof(*pool.nr_ptrs));
		}
		ret = bch_alloc_btree_node(&s->a, pool.ptrs[pool.nr], &pool.nr_ptrs[pool.nr], err);
		if (ret)
			goto out;
		pool.nr++;
	}
	ret = bch_bulk_build_pool(s->c, &s->wctx, &s->a, BTREE_ID_ALLOC, keys, nr, 0,
				  &pool, &s->bulk_roots[BTREE_ID_ALLOC], err);
	if (!ret && pool.used != pool.nr) {
		pr_buf(err, "alloc btree: %zu of %zu reserved nodes used\n", pool.used, pool.nr);
		ret = -EINVAL;
	}
out:
	free(keys);
	free(vals);
	free(pool.ptrs);
	free(pool.nr_ptrs);
	return ret;
}

static void init_state_exit(struct init_state *s)
{
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(s->roots); i++)
		bch_btree_node_buf_exit(&s->roots[i].nb);
	free(s->alloc_keys);
	free(s->alloc_vals);
	bch_journal_writer_exit(&s->jw);
	bch_alloc_exit(&s->a);
}

int bch_fs_initialize_opts(struct bch_fs *c, const struct bch_init_opts *opts,
			   struct printbuf *err)
{
	struct init_state *s;
	struct init_root *r;
	unsigned i;
	int ret;

	ret = check_fs(c, err);
	if (ret)
		return ret;
	s = xcalloc(1, sizeof(*s));
	s->c = c;
	ret = btree_write_ctx_init(&s->wctx, c, err);
	if (!ret)
		ret = bch_alloc_init(&s->a, c, err);
	if (!ret && opts->prepare)
		ret = opts->prepare(c, &s->a, opts->populate_priv, err);
	if (!ret)
		ret = init_journal_buckets(s, err);
	if (!ret && opts->populate) {
		s->bulk = true;
		ret = opts->populate(c, &s->a, &s->wctx, s->bulk_roots,
				     opts->populate_priv, err);
	} else if (!ret)
		ret = make_fs_keys(s, opts, err);
	if (!ret && s->bulk)
		ret = bulk_alloc_btree(s, err);
	if (!ret)
		ret = alloc_roots(s, err);
	if (ret)
		goto out;

	/* the keys each root gets: alloc keys for every bucket the nodes use */
	if (!s->bulk)
		bch_alloc_dirty_keys(&s->a, &s->alloc_keys, &s->alloc_vals, &s->nr_alloc_keys);
	r = root_of(s, BTREE_ID_ALLOC);
	r->keys = s->alloc_keys;
	r->nr_keys = s->nr_alloc_keys;
	r = root_of(s, BTREE_ID_INODES);
	r->keys = s->inode_keys;
	r->nr_keys = s->nr_inodes;
	if (s->have_dirent) {
		r = root_of(s, BTREE_ID_DIRENTS);
		r->keys = &s->dirent_key;
		r->nr_keys = 1;
	}

	/* nodes (journal_seq 1: the entry that carries their keys), journal, sb */
	ret = build_roots(s, 1, err);
	if (!ret)
		ret = write_journal(s, err);
	if (!ret)
		ret = write_sbs(s, err);
	if (ret)
		goto out;

	/* read back what was written, as every later user of @c expects */
	for (i = 0; i < BCH_NR_BTREES; i++)
		c->roots[i].present = false;
	if (opts->no_reread) {
		/* (format) a journal scan of every bucket would cost more than the rest */
		bch_journal_free(&c->journal);
		goto out;
	}
	ret = bch_journal_read(c, err);
	if (ret)
		pr_str(err, "initialized filesystem: journal cannot be read back\n");
out:
	init_state_exit(s);
	free(s);
	return ret;
}

int bch_fs_initialize(struct bch_fs *c, struct printbuf *err)
{
	struct bch_init_opts opts = { 0 };

	return bch_fs_initialize_opts(c, &opts, err);
}
