// SPDX-License-Identifier: GPL-2.0
/*
 * The file data operations of the running filesystem (fsops.h): write
 * (partial blocks read, modified and written whole), truncate (the
 * extents past the new size), fallocate (allocate, punch hole, zero
 * range) and seek (SEEK_DATA / SEEK_HOLE).
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

/* ---- reading blocks, space promised ------------------------------------------ */

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

int truncate_updates(struct bch_fs *c, struct btree_trans *t,
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
