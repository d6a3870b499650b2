// SPDX-License-Identifier: GPL-2.0
/*
 * Durability: what a pointer to a member gives now, what an inode wants,
 * and the replicas table rebuilt from the live keys. Shared by the device
 * operations and the data jobs (admin/), and the movers.
 */
#include "alloc/alloc.h"
#include "bkey/extents.h"
#include "bkey/inode.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "core/bch_fs.h"
#include "dev/super.h"
#include "format/format.h"
#include "fs/durability.h"
#include "fs/fsread.h"
#include "util/util.h"

unsigned bch_dev_ptr_durability(struct bch_fs *c, unsigned dev)
{
	const struct bch_member *m = bch_sb_member(c->sb, dev);
	unsigned state;

	if (!m || !bch_member_exists(m) || !bch_dev_present(c, dev))
		return 0;
	state = (unsigned)BCH_MEMBER_STATE(m);
	if (state != BCH_MEMBER_STATE_RW && state != BCH_MEMBER_STATE_RO)
		return 0;
	return bch_member_durability(m);
}

unsigned bch_inode_replicas_want(struct bch_fs *c, uint64_t inum, struct bch_inode_want *cache)
{
	struct bch_inode_unpacked u;
	struct printbuf ignore = PRINTBUF;

	if (cache->valid && cache->inum == inum)
		return cache->want;
	cache->inum = inum;
	cache->valid = true;
	cache->want = (unsigned)BCH_SB_DATA_REPLICAS_WANT(c->sb) ?: 1;
	if (!bch_inode_get(c, inum, &u, &ignore) && u.bi_data_replicas)
		cache->want = u.bi_data_replicas - 1U ?: 1;
	printbuf_exit(&ignore);
	return cache->want;
}

/* ---- replicas GC (doc/engine.md §16) ---- */

static int gc_node(void *arg, const struct btree_node_visit *v)
{
	struct bch_replicas_table *t = arg;
	struct btree_ptr_h p[BCH_REPLICAS_MAX];
	uint64_t devs = 0;
	int nr;

	if (!v->ptr || (nr = btree_ptr_decode(v->ptr, p, BCH_REPLICAS_MAX)) <= 0)
		return 0;
	for (int i = 0; i < nr; i++)
		if (p[i].dev < 64 && !p[i].cached)
			devs |= 1ULL << p[i].dev;
	bch_replicas_add(t, BCH_DATA_BTREE, devs);
	return 0;
}

static int gc_walk(struct bch_fs *c, struct bch_replicas_table *t, void *arg)
{
	struct printbuf err = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret = 0;

	for (unsigned id = 0; id < BCH_NR_BTREES && !ret; id++)
		ret = bch_btree_walk_nodes(c, id, gc_node, t, &err);
	if (!ret) {
		bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, POS_H_MIN, &err);
		while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
			struct extent_ptr_iter pi;
			struct extent_ptr_decoded p;
			uint64_t devs = 0;

			if (k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED) {
				extent_ptr_iter_init(&pi, k);
				while (extent_ptr_iter_next(&pi, &p) > 0) {
					if (p.ptr.dev >= 64)
						continue;
					if (p.ptr.cached || k->k.type == BCH_EXTENT_CACHED)
						bch_replicas_add(t, BCH_DATA_CACHED, 1ULL << p.ptr.dev);
					else
						devs |= 1ULL << p.ptr.dev;
				}
				bch_replicas_add(t, BCH_DATA_USER, devs);
			}
			bch_btree_iter_advance(&iter);
		}
		bch_btree_iter_exit(&iter);
	}
	printbuf_exit(&err);
	return ret;
}

int bch_fs_replicas_gc(struct bch_fs *c, struct printbuf *err)
{
	return bch_fs_rw_replicas_gc(c, gc_walk, NULL, err);
}
