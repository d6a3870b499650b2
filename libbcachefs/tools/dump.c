// SPDX-License-Identifier: GPL-2.0
/*
 * dump: which byte ranges of each member device are metadata, and their
 * qcow2 images. See dump.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "dev/dev.h"
#include "tools/dump.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "journal/journal.h"
#include "btree/node.h"
#include "dev/super.h"
#include "util/util.h"

static bool dev_online(struct bch_fs *c, unsigned dev)
{
	return dev < BCH_FS_MAX_DEVS && c->devs[dev] && c->devs[dev]->io;
}

/* ---- superblocks ---- */

static void collect_sb(struct bch_fs *c, struct bch_dump *d, unsigned dev,
		       struct printbuf *err)
{
	struct bch_member_dev *ca = c->devs[dev];
	struct qcow2_ranges *r = &d->ranges[dev];
	const struct bch_sb_layout *l = &ca->sb->layout;
	uint64_t max_bytes = 512ULL << l->sb_max_size_bits;
	struct bch_sb_layout at7;
	struct printbuf why = PRINTBUF;

	/* sector 7 only when it is what readers will take it for */
	if (!dev_pread(ca->io, &at7, sizeof(at7), BCH_SB_LAYOUT_SECTOR * 512ULL) &&
	    !bch_sb_layout_validate(&at7, &why))
		qcow2_ranges_add(r, BCH_SB_LAYOUT_SECTOR * 512ULL, sizeof(at7), true);
	printbuf_exit(&why);

	for (unsigned i = 0; i < l->nr_superblocks && i < BCH_SB_LAYOUT_MAX_SB; i++) {
		uint64_t off = le64_to_cpu(l->sb_offset[i]), bytes = bch_sb_bytes(ca->sb);
		struct bch_sb hdr;

		/* each copy its own size, when it says one that fits */
		if (!dev_pread(ca->io, &hdr, sizeof(hdr), off * 512) &&
		    !memcmp(hdr.magic.b, ca->sb->magic.b, 16) &&
		    bch_sb_bytes(&hdr) <= max_bytes)
			bytes = bch_sb_bytes(&hdr);
		if (bytes > max_bytes)
			bytes = max_bytes;
		if (off > ca->io->size / 512) {
			pr_buf(err, "%s: superblock copy %u at sector %" PRIu64 " is past the end of the device\n",
			       ca->io->path, i, off);
			continue;
		}
		qcow2_ranges_add(r, off * 512, bytes, true);
		d->nr_sb_copies++;
	}
}

/* ---- journal ---- */

struct jbucket {
	unsigned	dev;
	uint64_t	bucket;
};

struct jcollect {
	struct bch_fs	*c;
	struct bch_dump	*d;
	struct jbucket	*b;
	size_t		nr, size;
};

static int journal_entry_found(void *ctx, const struct journal_scan_entry *e)
{
	struct jcollect *j = ctx;
	struct bch_member_dev *ca;
	uint64_t block = (uint64_t)j->c->block_size * 512, bytes = e->bytes, left;

	if (!dev_online(j->c, e->loc.dev))
		return 0;
	ca = j->c->devs[e->loc.dev];
	if (e->loc.sector >= (e->loc.bucket + 1) * ca->bucket_size)
		return 0;	/* not inside its bucket: nothing sensible to copy */
	left = ((e->loc.bucket + 1) * ca->bucket_size - e->loc.sector) * 512;
	if (e->status == JSET_BAD) {
		/* the size it claims when that fits the bucket, so the same
		 * bytes (and the same checksum failure) are in the image */
		bytes = e->j ? round_up(vstruct_bytes(e->j), block) : block;
		if (bytes > left)
			bytes = block;
	}
	if (!bytes)
		bytes = block;
	if (bytes > left)
		bytes = left;
	qcow2_ranges_add(&j->d->ranges[e->loc.dev], e->loc.sector * 512, bytes, true);
	j->d->nr_jsets++;

	if (!j->nr || j->b[j->nr - 1].dev != e->loc.dev || j->b[j->nr - 1].bucket != e->loc.bucket) {
		if (j->nr == j->size) {
			j->size = j->size ? 2 * j->size : 32;
			j->b = xrealloc(j->b, j->size * sizeof(*j->b));
		}
		j->b[j->nr++] = (struct jbucket) { e->loc.dev, e->loc.bucket };
	}
	return 0;
}

static int collect_journal(struct bch_fs *c, struct bch_dump *d, struct printbuf *err)
{
	struct jcollect j = { .c = c, .d = d };
	int ret = bch_journal_scan(c, journal_entry_found, &j, err);

	/* the buckets' clusters, as the 2018 images have them (zero but the entries) */
	for (size_t i = 0; i < j.nr; i++) {
		unsigned bs = c->devs[j.b[i].dev]->bucket_size;

		qcow2_ranges_add(&d->ranges[j.b[i].dev], j.b[i].bucket * bs * 512,
				 (uint64_t)bs * 512, false);
	}
	d->nr_journal_buckets = j.nr;
	free(j.b);
	if (ret)
		pr_buf(err, "journal: scanning the journal buckets stopped: %s\n", bch_err_str(ret));
	return 0;
}

/* ---- btree nodes ---- */

struct ncollect {
	struct bch_fs	*c;
	struct bch_dump	*d;
	uint64_t	magic;
	struct printbuf	*err;
};

static bool starts_with_magic(struct ncollect *n, unsigned dev, uint64_t sector)
{
	struct btree_node hdr;

	return !dev_pread(n->c->devs[dev]->io, &hdr, sizeof(hdr), sector * 512) &&
	       le64_to_cpu(hdr.magic) == n->magic;
}

static int node_visit(void *arg, const struct btree_node_visit *v)
{
	struct ncollect *n = arg;
	struct btree_ptr_h ptrs[BTREE_NODE_MAX_DEVS];
	int nr = btree_ptr_decode(v->ptr, ptrs, ARRAY_SIZE(ptrs));

	for (int i = 0; i < nr; i++) {
		unsigned dev = ptrs[i].dev;
		uint64_t sectors;

		if (!dev_online(n->c, dev))
			continue;
		if (ptrs[i].offset + n->c->btree_node_size > n->c->devs[dev]->io->size / 512)
			continue;	/* reported by the read already */
		if (v->n) {
			sectors = v->n->written ?: n->c->btree_node_size;
		} else {
			n->d->nr_nodes_unreadable++;
			if (!starts_with_magic(n, dev, ptrs[i].offset)) {
				pr_buf(n->err, "btree %s level %u: node at dev %u sector %" PRIu64
				       " is unreadable and has no btree node magic: not in the image\n",
				       bch_btree_id_str(v->btree_id), v->level, dev, ptrs[i].offset);
				continue;
			}
			pr_buf(n->err, "btree %s level %u: node at dev %u sector %" PRIu64
			       " is unreadable: taken whole, its children are not in the image\n",
			       bch_btree_id_str(v->btree_id), v->level, dev, ptrs[i].offset);
			sectors = n->c->btree_node_size;
		}
		qcow2_ranges_add(&n->d->ranges[dev], ptrs[i].offset * 512, sectors * 512, true);
		n->d->nr_nodes++;
	}
	return 0;
}

static void collect_nodes(struct bch_fs *c, struct bch_dump *d, struct printbuf *err)
{
	struct ncollect n = { .c = c, .d = d, .magic = bch_bset_magic(c->sb), .err = err };

	for (unsigned id = 0; id < BCH_NR_BTREES; id++) {
		int ret;

		if (!c->roots[id].present) {
			d->nr_btrees_without_root++;
			continue;
		}
		ret = bch_btree_walk_nodes(c, id, node_visit, &n, err);
		if (ret)
			pr_buf(err, "btree %s: walk stopped: %s\n", bch_btree_id_str(id),
			       bch_err_str(ret));
	}
}

/* ---- the whole ---- */

int bch_dump_collect(struct bch_fs *c, struct bch_dump *d, struct printbuf *err)
{
	uint64_t cluster = (uint64_t)c->btree_node_size * 512 / 8;

	memset(d, 0, sizeof(*d));
	if ((uint64_t)c->block_size * 512 > cluster)
		cluster = (uint64_t)c->block_size * 512;
	d->cluster_bits = 9;
	while ((1ULL << d->cluster_bits) < cluster && d->cluster_bits < 21)
		d->cluster_bits++;

	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++)
		if (dev_online(c, i) && c->devs[i]->sb)
			collect_sb(c, d, i, err);

	if (!c->journal.read_done) {
		int ret = bch_journal_read(c, err);

		if (ret) {
			d->journal_unreadable = true;
			pr_buf(err, "journal: %s: no btree roots, only the superblocks and the "
			       "journal are dumped\n", bch_err_str(ret));
			for (unsigned i = 0; i < BCH_NR_BTREES; i++)
				c->roots[i].present = false;
		}
	}
	collect_journal(c, d, err);
	if (!d->journal_unreadable)
		collect_nodes(c, d, err);
	return 0;
}

static int dev_read(void *priv, void *buf, size_t len, uint64_t offset)
{
	return dev_pread(priv, buf, len, offset);
}

int bch_dump_write_dev(struct bch_fs *c, struct bch_dump *d, unsigned dev, int fd,
		       struct qcow2_stats *stats, struct printbuf *err)
{
	if (!dev_online(c, dev))
		return -ENXIO;
	return qcow2_write(fd, c->devs[dev]->io->size, d->cluster_bits, &d->ranges[dev],
			   dev_read, c->devs[dev]->io, stats, err);
}

void bch_dump_exit(struct bch_dump *d)
{
	for (unsigned i = 0; i < BCH_DUMP_MAX_DEVS; i++)
		qcow2_ranges_exit(&d->ranges[i]);
}
