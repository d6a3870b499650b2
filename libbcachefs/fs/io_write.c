// SPDX-License-Identifier: GPL-2.0
/*
 * Writing file data: see io_write.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "btree/btree_update.h"
#include "btree/bulk.h"
#include "codec/checksum.h"
#include "codec/compress.h"
#include "codec/crypto.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "bkey/inode.h"
#include "fs/copygc.h"
#include "fs/io_write.h"
#include "dev/super.h"
#include "util/util.h"

/* ---- options ------------------------------------------------------------ */

/* The on-disk checksum type of data checksum option @opt (doc/format.md §7.1). */
static unsigned data_csum_type(struct bch_fs *c, unsigned opt)
{
	if (c->encrypted)
		return BCH_SB_128_BIT_MACS(c->sb) ? BCH_CHECKSUM_CHACHA20_POLY1305_128
						  : BCH_CHECKSUM_CHACHA20_POLY1305_80;
	return opt == BCH_CSUM_OPT_CRC32C ? BCH_CHECKSUM_CRC32C
	     : opt == BCH_CSUM_OPT_CRC64 ? BCH_CHECKSUM_CRC64
	     : BCH_CHECKSUM_NONE;
}

void bch_io_opts_get(struct bch_fs *c, const struct bch_inode_unpacked *inode,
		     struct bch_io_opts *o)
{
	/* inode option fields hold option + 1, 0 = the filesystem's (doc/format.md §5.5.2) */
	unsigned csum = c->data_csum_type, compr = (unsigned)BCH_SB_COMPRESSION_TYPE(c->sb);
	unsigned replicas = (unsigned)BCH_SB_DATA_REPLICAS_WANT(c->sb);
	unsigned target = (unsigned)BCH_SB_FOREGROUND_TARGET(c->sb);

	/* mount options (-o compression=...) first, then the inode's */
	if (c->opts.data_checksum)
		csum = c->opts.data_checksum - 1U;
	if (c->opts.compression)
		compr = c->opts.compression - 1U;
	if (c->opts.data_replicas)
		replicas = c->opts.data_replicas - 1U;
	if (inode) {
		if (inode->bi_data_checksum)
			csum = inode->bi_data_checksum - 1U;
		if (inode->bi_compression)
			compr = inode->bi_compression - 1U;
		if (inode->bi_data_replicas)
			replicas = inode->bi_data_replicas - 1U;
		if (inode->bi_foreground_target)
			target = inode->bi_foreground_target - 1U;
	}
	memset(o, 0, sizeof(*o));
	o->csum_type		= data_csum_type(c, csum);
	o->compression_type	= bch_compression_opt_to_type(compr);
	o->nr_replicas		= replicas ?: 1;
	o->nr_replicas_req	= (unsigned)BCH_SB_DATA_REPLICAS_REQ(c->sb) ?: 1;
	if (o->nr_replicas_req > o->nr_replicas)
		o->nr_replicas_req = o->nr_replicas;
	o->foreground_target	= target;
	o->extent_max		= 1U << BCH_SB_ENCODED_EXTENT_MAX_BITS(c->sb);
	o->block_sectors	= c->block_size ?: 1;
	o->encrypted		= c->encrypted;
}

/* ---- encoding one extent ------------------------------------------------- */

int bch_extent_encode(struct bch_fs *c, const struct bch_io_opts *o, uint8_t *data,
		      uint64_t sectors, uint64_t space, uint8_t *cbuf, uint64_t version_lo,
		      struct bch_encoded *out, struct printbuf *err)
{
	struct bch_extent_crc_unpacked crc = { .entry_type = -1 };
	struct bch_nonce nonce = bch_nonce_make(0, 0, 0, 0);
	struct bch_csum_val csum = { 0, 0 };
	size_t block_bytes = (size_t)o->block_sectors * 512;
	uint64_t in = sectors, cout;
	uint8_t *payload = data;
	int ret;

	if (o->csum_type != BCH_CHECKSUM_NONE && in > o->extent_max)
		in = o->extent_max;
	if (in > space)
		in = space;
	cout = in;
	if (o->compression_type) {
		size_t used = 0, dst_used = 0;
		uint64_t room = space < sectors ? space : sectors;

		ret = bch_compress_extent(o->compression_type, 0, data, sectors * 512, cbuf,
					  room * 512, (unsigned)block_bytes,
					  (size_t)o->extent_max * 512, &used, &dst_used);
		if (!ret) {
			in = used / 512;
			cout = dst_used / 512;
			payload = cbuf;
			crc.compression_type = (uint8_t)o->compression_type;
		} else if (ret != -E2BIG) {
			pr_buf(err, "compressing: %s\n", bch_err_str(ret));
			return ret;
		}
	}
	if (o->csum_type != BCH_CHECKSUM_NONE || crc.compression_type) {
		crc.csum_type		= (uint8_t)o->csum_type;
		crc.compressed_size	= (uint32_t)cout;
		crc.uncompressed_size	= (uint32_t)in;
		crc.entry_type		= 0;	/* chosen when packed */
	}
	out->version_lo = 0;
	if (o->encrypted) {
		if (!c->have_key) {
			pr_str(err, "the filesystem is encrypted and its key is not loaded\n");
			return -BCH_ERR_no_key;
		}
		out->version_lo = version_lo;
		nonce = bch_nonce_extent(version_lo, 0, crc.compression_type,
					 crc.uncompressed_size, 0);
		ret = bch_encrypt(o->csum_type, &c->key, nonce, payload, cout * 512);
		if (ret) {
			pr_buf(err, "encrypting: %s\n", bch_err_str(ret));
			return ret;
		}
	}
	if (o->csum_type != BCH_CHECKSUM_NONE) {
		ret = bch_checksum(o->csum_type, nonce, o->encrypted ? &c->key : NULL,
				   payload, cout * 512, &csum);
		if (ret)
			return ret;
		crc.csum_lo = csum.lo;
		crc.csum_hi = csum.hi;
		if (o->csum_type == BCH_CHECKSUM_CHACHA20_POLY1305_80)
			crc.csum_hi &= 0xffff;
	}
	out->crc	= crc;
	out->in		= in;
	out->out	= cout;
	out->payload	= payload;
	return 0;
}

unsigned bch_extent_value(const struct bch_encoded *e, const struct bch_extent_ptr_unpacked *ptrs,
			  unsigned nr_ptrs, uint64_t *v)
{
	unsigned n = 0;

	if (e->crc.entry_type >= 0) {
		union bch_extent_entry ent;
		int t = bch_extent_crc_pick_type(&e->crc);

		n = t < 0 ? 0 : bch_extent_crc_pack(&ent, t, &e->crc);
		memcpy(v, &ent, n * 8);
	}
	for (unsigned i = 0; i < nr_ptrs; i++) {
		struct bch_extent_ptr p = { 0 };

		SET_EXTENT_PTR_TYPE(&p, 1);
		SET_EXTENT_PTR_CACHED(&p, ptrs[i].cached);
		SET_EXTENT_PTR_OFFSET(&p, ptrs[i].offset);
		SET_EXTENT_PTR_DEV(&p, ptrs[i].dev);
		SET_EXTENT_PTR_GEN(&p, ptrs[i].gen);
		memcpy(&v[n++], &p, 8);
	}
	return n * 8;
}

/* Rounds of copygc a write waits for before it gives up with ENOSPC. */
#define WRITE_ROOM_TRIES	64

/* ---- the write point ----------------------------------------------------- */

struct wp_slot {
	bool		open;
	unsigned	dev;
	uint64_t	bucket;
	uint8_t		gen;
	unsigned	used;		/* sectors */
	unsigned	bucket_size;
};

/* A write not issued yet: consecutive pieces in memory and on disk join it. */
struct wp_pending {
	const uint8_t	*buf;
	uint64_t	sector;		/* on the device */
	uint64_t	sectors;
	unsigned	dev;
};

struct bch_write_point {
	struct wp_slot	s[BCH_REPLICAS_MAX];
	struct wp_pending pend[BCH_REPLICAS_MAX];
	unsigned	nr;		/* slots in use */
	unsigned long	member_changes;	/* c->member_changes when the slots opened */
	uint64_t	replicas_devs;	/* replicas entry known to be in the superblock */
	uint8_t		*cbuf;
	size_t		cbuf_size;
	/*
	 * Buckets the slots were done with during a call, closed when the
	 * call returns: a bucket closed with none of its sectors counted yet
	 * frees at the next durable journal entry, and the bucket allocations
	 * of a long write commit transactions that can checkpoint (which
	 * writes entries), so it could be taken again under the data of the
	 * same call. From the return to the caller's commit of the keys
	 * nothing is written to the journal (the keys then land in the entry
	 * the close waits for, and count their sectors).
	 */
	struct {
		unsigned	dev;
		uint64_t	bucket;
	}		*retired;
	size_t		nr_retired, size_retired;
};

/* Slot @s is done with its bucket: closed at the end of the call (see above). */
static void wp_retire(struct bch_write_point *wp, struct wp_slot *s)
{
	if (wp->nr_retired == wp->size_retired) {
		wp->size_retired = wp->size_retired ? 2 * wp->size_retired : 8;
		wp->retired = xrealloc(wp->retired, wp->size_retired * sizeof(*wp->retired));
	}
	wp->retired[wp->nr_retired].dev = s->dev;
	wp->retired[wp->nr_retired].bucket = s->bucket;
	wp->nr_retired++;
	s->open = false;
}

static void wp_release(struct bch_fs *c, struct bch_write_point *wp)
{
	for (size_t i = 0; i < wp->nr_retired; i++)
		bch_fs_rw_data_bucket_close(c, wp->retired[i].dev, wp->retired[i].bucket);
	wp->nr_retired = 0;
}

static int pend_issue(struct bch_fs *c, struct wp_pending *p, struct printbuf *err)
{
	struct bch_member_dev *ca;
	int ret;

	if (!p->sectors)
		return 0;
	ca = c->devs[p->dev];
	ret = dev_pwrite(ca->io, p->buf, p->sectors * 512, p->sector * 512);
	if (ret)
		pr_buf(err, "%s: writing data at sector %" PRIu64 ": %s\n",
		       ca->io->path, p->sector, bch_err_str(ret));
	p->sectors = 0;
	return ret;
}

/*
 * Write @sectors of @buf at @sector of slot @i's device: joined to the
 * pending write when it continues it (uncompressed, unencrypted data of a
 * sequential write: one pwrite per run instead of one per extent), else
 * the pending one goes out first. Everything is out after wp_flush().
 */
static int wp_queue(struct bch_fs *c, struct bch_write_point *wp, unsigned i,
		    const uint8_t *buf, uint64_t sectors, uint64_t sector, struct printbuf *err)
{
	struct wp_pending *p = &wp->pend[i];
	int ret;

	if (p->sectors && p->dev == wp->s[i].dev && p->sector + p->sectors == sector &&
	    p->buf + p->sectors * 512 == buf && buf != wp->cbuf) {
		p->sectors += sectors;
		return 0;
	}
	ret = pend_issue(c, p, err);
	if (ret)
		return ret;
	if (buf == wp->cbuf)	/* reused by the next piece: out now */
		return pend_issue(c, &(struct wp_pending) {
			.buf = buf, .sector = sector, .sectors = sectors, .dev = wp->s[i].dev,
		}, err);
	*p = (struct wp_pending) {
		.buf = buf, .sector = sector, .sectors = sectors, .dev = wp->s[i].dev,
	};
	return 0;
}

/* Forget the pending writes (an error: their keys are not committed). */
static void wp_drop(struct bch_write_point *wp)
{
	for (unsigned i = 0; i < BCH_REPLICAS_MAX; i++)
		wp->pend[i].sectors = 0;
}

static int wp_flush(struct bch_fs *c, struct bch_write_point *wp, struct printbuf *err)
{
	int ret = 0;

	for (unsigned i = 0; i < BCH_REPLICAS_MAX; i++) {
		int r = pend_issue(c, &wp->pend[i], err);

		if (r && !ret)
			ret = r;
	}
	return ret;
}

void bch_write_point_free(struct bch_fs *c, struct bch_write_point *wp)
{
	if (!wp)
		return;
	for (unsigned i = 0; i < wp->nr; i++)
		if (wp->s[i].open && c)
			bch_fs_rw_data_bucket_close(c, wp->s[i].dev, wp->s[i].bucket);
	if (c)
		wp_release(c, wp);
	free(wp->retired);
	free(wp->cbuf);
	free(wp);
}

bool bch_dev_in_target(struct bch_fs *c, unsigned dev, unsigned target)
{
	const struct bch_member *m;
	unsigned g, depth;

	if (!target)
		return true;
	if (target <= 256)
		return dev == target - 1;
	m = bch_sb_member(c->sb, dev);
	if (!m)
		return false;
	g = (unsigned)BCH_MEMBER_GROUP(m);
	/* the device's group, or one of its parents (doc/format.md §2.11) */
	for (depth = 0; g && depth < 32; depth++) {
		if (g - 1 == target - 257)
			return true;
		g = bch_sb_disk_group_parent(c->sb, g - 1);
	}
	return false;
}

/*
 * May @dev take user data of a write to @target (0: any device)? A device
 * of durability 0 (a cache device) only when it is in the target: it
 * takes a cached copy, and the write goes on until the durable copies
 * are enough (wp_space()).
 */
static bool dev_usable(struct bch_fs *c, const struct bch_allocator *a, unsigned dev,
		       unsigned target)
{
	const struct bch_dev_alloc *d = dev < BCH_ALLOC_MAX_DEVS ? a->devs[dev] : NULL;

	return d && d->present && d->state == BCH_MEMBER_STATE_RW && (d->durability || target) &&
	       (d->data_allowed & (1U << BCH_DATA_USER)) && bch_dev_in_target(c, dev, target);
}

/*
 * A device for slot @i: usable, not used by another slot, with the most
 * free buckets (data spreads over every device; a full one is skipped).
 * Devices outside the target are taken only when none inside can.
 */
static int wp_pick_dev(struct bch_fs *c, struct bch_write_point *wp, unsigned i,
		       unsigned target, uint64_t full, unsigned *dev)
{
	const struct bch_allocator *a = bch_fs_rw_alloc(c);

	for (int pass = 0; pass < 2; pass++) {
		uint64_t best = 0;
		bool found = false;

		for (unsigned d = 0; d < BCH_ALLOC_MAX_DEVS; d++) {
			uint64_t nfree;
			bool taken = false;

			if ((full & (1ULL << d)) || !dev_usable(c, a, d, pass ? 0 : target))
				continue;
			for (unsigned j = 0; j < wp->nr; j++)
				if (j != i && wp->s[j].open && wp->s[j].dev == d)
					taken = true;
			if (taken)
				continue;
			nfree = bch_alloc_dev_free(a, d);
			if (!found || nfree > best) {
				best = nfree;
				*dev = d;
				found = true;
			}
		}
		if (found)
			return 0;
		if (!target)
			break;
	}
	return -BCH_ERR_nospc;
}

/*
 * Room in every slot (a fresh bucket where one is full): *@space = the
 * smallest room left. Slots are opened until their durability reaches
 * nr_replicas (or no more devices); fewer than nr_replicas_req: -EROFS.
 */
static int wp_space(struct bch_fs *c, struct bch_write_point *wp, const struct bch_io_opts *o,
		    uint64_t *space, struct printbuf *err)
{
	const struct bch_allocator *a = bch_fs_rw_alloc(c);
	unsigned durability = 0, i;
	uint64_t full = 0, devs = 0, cached_devs = 0;
	int ret;

	/* slots beyond the durability wanted (the options changed) close */
	for (i = 0; i < wp->nr; i++) {
		struct wp_slot *s = &wp->s[i];

		if (!s->open)
			continue;
		if (durability >= o->nr_replicas) {
			wp_retire(wp, s);
		} else {
			durability += a->devs[s->dev]->durability;
		}
	}

	*space = UINT64_MAX;
	durability = 0;
	for (i = 0; i < BCH_REPLICAS_MAX && durability < o->nr_replicas; i++) {
		struct wp_slot *s = &wp->s[i];

		if (i >= wp->nr) {
			memset(s, 0, sizeof(*s));
			wp->nr = i + 1;
		}
		while (!s->open || s->used >= s->bucket_size) {
			unsigned dev = 0;

			if (s->open)
				wp_retire(wp, s);
			ret = wp_pick_dev(c, wp, i, o->foreground_target, full, &dev);
			if (ret)
				break;
			ret = bch_fs_rw_data_bucket(c, dev, &s->bucket, &s->gen, err);
			if (ret == -BCH_ERR_nospc) {
				full |= 1ULL << dev;
				continue;
			}
			if (ret)
				return ret;
			s->dev = dev;
			s->open = true;
			s->used = 0;
			s->bucket_size = a->devs[dev]->bucket_size;
			/* its blocks now: fsync's flushes then wait for no host allocation */
			if (c->devs[dev] && c->devs[dev]->io)
				dev_prealloc(c->devs[dev]->io, s->bucket * s->bucket_size << 9,
					     (uint64_t)s->bucket_size << 9, true);
		}
		if (!s->open)
			break;
		if (a->devs[s->dev]->durability) {
			devs |= 1ULL << s->dev;
		} else if (!(cached_devs & (1ULL << s->dev))) {
			/* a cache device's copy is a cached pointer: its own entry (§16) */
			ret = bch_fs_rw_replicas_mark(c, BCH_DATA_CACHED, 1ULL << s->dev, err);
			if (ret)
				return ret;
			cached_devs |= 1ULL << s->dev;
		}
		durability += a->devs[s->dev]->durability;
		if (*space > s->bucket_size - s->used)
			*space = s->bucket_size - s->used;
	}
	/* the slots used are [0, i) */
	for (unsigned j = i; j < wp->nr; j++)
		if (wp->s[j].open)
			wp_retire(wp, &wp->s[j]);
	wp->nr = i;
	if (!wp->nr) {
		pr_str(err, "no space left for data on any device\n");
		return -BCH_ERR_nospc;
	}
	if (durability < o->nr_replicas_req) {
		pr_buf(err, "cannot write %u replicas of the data (%u possible)\n",
		       o->nr_replicas_req, durability);
		return -EROFS;
	}
	/* the replicas entry before any key that needs it (doc/engine.md §16) */
	if (devs != wp->replicas_devs) {
		ret = bch_fs_rw_replicas_mark(c, BCH_DATA_USER, devs, err);
		if (ret)
			return ret;
		wp->replicas_devs = devs;
	}
	return 0;
}

static int64_t write_extents(struct bch_fs *c, const struct bch_io_opts *o, uint64_t inum,
			     uint64_t start, uint8_t *data, uint64_t sectors,
			     struct bulk_keys *keys, struct printbuf *err)
{
	struct bch_write_point *wp;
	struct printbuf nospc = PRINTBUF;
	unsigned room_tries = 0;
	uint64_t done = 0;
	size_t need;
	int ret;

	if (!bch_fs_rw(c))
		return -EROFS;
	if (c->wp && c->wp->member_changes != c->member_changes) {
		/* the members changed: pick the devices again */
		bch_write_point_free(c, c->wp);
		c->wp = NULL;
	}
	if (!c->wp) {
		c->wp = xcalloc(1, sizeof(*c->wp));
		c->wp->member_changes = c->member_changes;
	}
	wp = c->wp;
	need = (size_t)min_t(uint64_t, sectors, o->extent_max) * 512 +
	       (size_t)o->block_sectors * 512;
	if (o->compression_type && wp->cbuf_size < need) {
		free(wp->cbuf);
		wp->cbuf = xmalloc(need);
		wp->cbuf_size = need;
	}

	while (done < sectors) {
		struct bch_extent_ptr_unpacked ptrs[BCH_REPLICAS_MAX];
		uint64_t v[BKEY_EXTENT_VAL_U64s_MAX];
		struct bch_encoded e;
		struct bkey_h k = { 0 };
		uint64_t space;
		unsigned i;

		ret = wp_space(c, wp, o, &space, &nospc);
		/*
		 * No free bucket: emptied buckets waiting for the journal, or
		 * fragmented ones copygc can empty, come free first (each
		 * round frees at least a bucket, or says there is none)
		 */
		if (ret == -BCH_ERR_nospc && room_tries < WRITE_ROOM_TRIES &&
		    bch_copygc_make_room(c, err)) {
			room_tries++;
			printbuf_reset(&nospc);
			continue;
		}
		if (ret) {
			int r = wp_flush(c, wp, err);

			if (err)
				pr_str(err, printbuf_str(&nospc));
			printbuf_exit(&nospc);
			return r ? r : done ? (int64_t)done : ret;
		}
		printbuf_reset(&nospc);
		ret = bch_extent_encode(c, o, data, sectors - done, space, wp->cbuf,
					o->encrypted ? bch_fs_rw_key_version(c) : 0, &e, err);
		if (ret) {
			wp_drop(wp);	/* nothing of this call is committed */
			printbuf_exit(&nospc);
			return ret;
		}
		for (i = 0; i < wp->nr; i++) {
			struct wp_slot *s = &wp->s[i];
			uint64_t sector = s->bucket * s->bucket_size + s->used;

			ret = wp_queue(c, wp, i, e.payload, e.out, sector, err);
			if (ret) {
				wp_drop(wp);
				printbuf_exit(&nospc);
				return ret;
			}
			ptrs[i] = (struct bch_extent_ptr_unpacked) {
				.offset = sector, .dev = (uint8_t)s->dev, .gen = s->gen,
				/* a device of durability 0 holds cached data only */
				.cached = !bch_fs_rw_alloc(c)->devs[s->dev]->durability,
			};
			s->used += (unsigned)e.out;
		}
		k.type		= BCH_EXTENT;
		k.size		= (uint32_t)e.in;
		k.version_lo	= e.version_lo;
		k.p		= POS_H(inum, start + done + e.in);
		bulk_keys_add(keys, &k, v, bch_extent_value(&e, ptrs, wp->nr, v));
		data += e.in * 512;
		done += e.in;
	}
	printbuf_exit(&nospc);
	ret = wp_flush(c, wp, err);
	return ret ? ret : (int64_t)done;
}

int64_t bch_write_extents(struct bch_fs *c, const struct bch_io_opts *o, uint64_t inum,
			  uint64_t start, uint8_t *data, uint64_t sectors,
			  struct bulk_keys *keys, struct printbuf *err)
{
	int64_t n = write_extents(c, o, inum, start, data, sectors, keys, err);

	if (c->wp)
		wp_release(c, c->wp);
	return n;
}
