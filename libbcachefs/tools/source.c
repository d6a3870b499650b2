// SPDX-License-Identifier: GPL-2.0
/*
 * format --source: copy a directory tree into a new filesystem, building
 * its btrees in bulk. See source.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fiemap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "alloc/alloc.h"
#include "btree/bulk.h"
#include "codec/checksum.h"
#include "codec/compress.h"
#include "codec/crypto.h"
#include "dev/dev.h"
#include "bkey/dirent.h"
#include "util/errcode.h"
#include "tools/fiemap.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fs/fsread.h"
#include "bkey/inode.h"
#include "fs/io_write.h"
#include "btree/node_write.h"
#include "tools/source.h"
#include "util/util.h"
#include "bkey/xattr.h"

#define LOST_FOUND		"lost+found"
#define COPY_BUF_BYTES		(1U << 20)
#define HL_BUCKETS		4096

struct hardlink {
	struct hardlink		*next;
	dev_t			dev;
	ino_t			ino;
	uint64_t		inum;
};

struct hashed {
	uint64_t	hash;
	struct bkey_h	k;
	uint8_t		*v;
	unsigned	v_bytes;
};

/* Where user data goes next on one device (a write point). */
struct wp {
	unsigned		dev;
	bool			open;
	uint64_t		bucket;
	uint8_t			gen;
	unsigned		used;		/* sectors */
	unsigned		bucket_size;
};

struct src {
	struct bch_fs		*c;
	struct bch_allocator	*a;
	struct bch_source_opts	*o;
	struct printbuf		*err;

	struct bch_inode_unpacked *inodes;	/* [inum - 4096] */
	size_t			nr_inodes, size_inodes;
	struct hardlink		*hl[HL_BUCKETS];

	struct bulk_keys	keys[BCH_NR_BTREES];

	unsigned		block_sectors;
	struct wp		wp[BCH_REPLICAS_MAX];
	unsigned		nr_wp;
	uint64_t		replicas_devs;	/* of the write points now */
	unsigned		cand[BCH_ALLOC_MAX_DEVS]; /* devices for user data */
	unsigned		nr_cand;
	uint64_t		dev_full;	/* bit d: device d has no free bucket */
	uint64_t		dev_buckets[BCH_ALLOC_MAX_DEVS]; /* buckets taken */
	uint8_t			*buf;
	uint8_t			*cbuf;		/* compressed data */
	struct bch_io_opts	io;		/* the encoding of the data (io_write.h) */
	uint64_t		key_version;	/* doc/format.md §9.3 */
	int64_t			now;		/* stored time of "now" */
	uint64_t		last_progress;
	/* made here (lost+found, old_migrated_filesystem): with the root's dirents */
	struct hashed		root_extra[2];
	unsigned		nr_root_extra;
	dev_t			dev_dev[BCH_FS_MAX_DEVS + 1];	/* the devices written to, */
	ino_t			dev_ino[BCH_FS_MAX_DEVS + 1];	/* the reserved file (migrate) */
	unsigned		nr_dev_files;
	bool			acl;		/* POSIX ACLs enabled (sb flag) */

	/* migrate: data linked in place, sorted device sector ranges */
	struct bch_source_link	*link;
	struct bch_source_range	*linked;
	size_t			nr_linked, size_linked;
	bool			link_replicas;	/* {user, link->dev} added */
};

/* ---- inodes ------------------------------------------------------------- */

static uint64_t to_time(const struct src *s, const struct timespec *ts)
{
	return bch_inode_ns_to_time((int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec,
				    le64_to_cpu(s->c->sb->time_base_lo),
				    le32_to_cpu(s->c->sb->time_precision));
}

static uint64_t inode_new(struct src *s)
{
	uint64_t inum = BCACHEFS_ROOT_INO + s->nr_inodes;
	struct bch_inode_unpacked *u;

	if (s->nr_inodes == s->size_inodes) {
		s->size_inodes = s->size_inodes ? 2 * s->size_inodes : 1024;
		s->inodes = xrealloc(s->inodes, s->size_inodes * sizeof(*s->inodes));
	}
	u = &s->inodes[s->nr_inodes++];
	memset(u, 0, sizeof(*u));
	u->bi_inum	= inum;
	u->bi_hash_seed	= bch_random_u64();
	u->bi_flags	= (uint32_t)(s->c->str_hash_type & 0xf) << 20;
	u->bi_atime = u->bi_ctime = u->bi_mtime = u->bi_otime = (uint64_t)s->now;
	return inum;
}

static struct bch_inode_unpacked *ino(struct src *s, uint64_t inum)
{
	return &s->inodes[inum - BCACHEFS_ROOT_INO];
}

static void inode_from_stat(struct src *s, uint64_t inum, const struct stat *st)
{
	struct bch_inode_unpacked *u = ino(s, inum);
	unsigned ma = major(st->st_rdev), mi = minor(st->st_rdev);

	u->bi_mode	= (uint16_t)st->st_mode;
	u->bi_uid	= st->st_uid;
	u->bi_gid	= st->st_gid;
	u->bi_atime	= to_time(s, &st->st_atim);
	u->bi_mtime	= to_time(s, &st->st_mtim);
	u->bi_ctime	= to_time(s, &st->st_ctim);
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		u->bi_dev = (mi & 0xff) | (ma << 8) | ((mi & ~0xffU) << 12);
}

static unsigned mode_to_dt(unsigned mode)
{
	return (mode >> 12) & 15;
}

/* ---- hashed keys (dirents, xattrs): linear probing ---------------------- */

static int hashed_cmp(const void *a, const void *b)
{
	const struct hashed *x = a, *y = b;

	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/*
 * Place the keys of one directory / inode: sorted by hash, each at the
 * first free offset from its hash on (doc/format.md §5.6: linear probing).
 */
static void hashed_emit(struct src *s, unsigned btree_id, uint64_t inum,
			struct hashed *h, size_t nr)
{
	uint64_t next = 0;

	if (nr)
		qsort(h, nr, sizeof(*h), hashed_cmp);
	for (size_t i = 0; i < nr; i++) {
		uint64_t off = i && h[i].hash < next ? next : h[i].hash;

		h[i].k.p = POS_H(inum, off);
		next = off + 1;
		bulk_keys_add(&s->keys[btree_id], &h[i].k, h[i].v, h[i].v_bytes);
		free(h[i].v);
	}
}

/* ---- data --------------------------------------------------------------- */

static int wp_init(struct src *s)
{
	unsigned want = (unsigned)BCH_SB_DATA_REPLICAS_WANT(s->c->sb) ?: 1;

	for (unsigned d = 0; d < BCH_ALLOC_MAX_DEVS; d++) {
		struct bch_dev_alloc *da = s->a->devs[d];

		if (!da || !da->present || da->state != BCH_MEMBER_STATE_RW ||
		    !da->durability || !(da->data_allowed & (1U << BCH_DATA_USER)))
			continue;
		s->cand[s->nr_cand++] = d;
	}
	if (!s->nr_cand) {
		pr_str(s->err, "no device can hold user data\n");
		return -ENOSPC;
	}
	s->nr_wp = want < s->nr_cand ? want : s->nr_cand;
	for (unsigned i = 0; i < s->nr_wp; i++)
		s->wp[i].dev = ~0U;
	return 0;
}

/*
 * The device for a new bucket of write point @i: of the devices that can
 * hold user data and that no other write point is on, the one with the
 * most buckets left (so data is spread over every device and a full device
 * does not stop the copy while others have room).
 */
static int wp_pick_dev(struct src *s, unsigned i, unsigned *dev)
{
	uint64_t best_left = 0;
	bool found = false;

	for (unsigned c = 0; c < s->nr_cand; c++) {
		unsigned d = s->cand[c];
		struct bch_dev_alloc *da = s->a->devs[d];
		uint64_t left;
		bool taken = false;

		if (s->dev_full & (1ULL << d))
			continue;
		for (unsigned j = 0; j < s->nr_wp; j++)
			if (j != i && s->wp[j].dev == d)
				taken = true;
		if (taken)
			continue;
		left = da->nbuckets - da->first_bucket;
		left = left > s->dev_buckets[d] ? left - s->dev_buckets[d] : 0;
		if (!found || left > best_left) {
			best_left = left;
			*dev = d;
			found = true;
		}
	}
	return found ? 0 : -BCH_ERR_nospc;
}

/*
 * Room left in the write points: a fresh bucket where one is full, on the
 * device wp_pick_dev() chooses; the replicas entry of the devices now used.
 */
static int wp_space(struct src *s, uint64_t *space)
{
	uint64_t devs = 0;
	int ret;

	*space = UINT64_MAX;
	for (unsigned i = 0; i < s->nr_wp; i++) {
		struct wp *w = &s->wp[i];

		while (!w->open || w->used >= w->bucket_size) {
			struct printbuf e = PRINTBUF;
			unsigned dev;

			w->open = false;
			ret = wp_pick_dev(s, i, &dev);
			if (ret) {
				pr_buf(s->err, "out of space copying the data (%u of %u "
				       "device%s full)\n", __builtin_popcountll(s->dev_full),
				       s->nr_cand, s->nr_cand > 1 ? "s" : "");
				return ret;
			}
			w->dev = dev;
			ret = bch_alloc_bucket(s->a, dev, BCH_DATA_USER, 0,
					       &w->bucket, &w->gen, &e);
			if (ret == -BCH_ERR_nospc) {
				s->dev_full |= 1ULL << dev;
				w->dev = ~0U;
				printbuf_exit(&e);
				continue;
			}
			if (ret) {
				pr_buf(s->err, "%s", printbuf_str(&e));
				printbuf_exit(&e);
				return ret;
			}
			printbuf_exit(&e);
			s->dev_buckets[dev]++;
			w->bucket_size = s->a->devs[dev]->bucket_size;
			w->open = true;
			w->used = 0;
		}
		devs |= 1ULL << w->dev;
		if (*space > w->bucket_size - w->used)
			*space = w->bucket_size - w->used;
	}
	if (devs != s->replicas_devs) {
		bch_replicas_add(&s->a->replicas, BCH_DATA_USER, devs);
		s->replicas_devs = devs;
	}
	return 0;
}

/*
 * Write @sectors of @data (a whole number of blocks, zero-padded) as the
 * extents of @inum from sector @start (doc/format.md §5.2.10; compressed per
 * doc/format.md §8.3, encrypted with a fresh version per doc/format.md §9.3); adds their sizes
 * to *@i_sectors. @data is used as scratch (encrypted in place).
 */
static int write_data(struct src *s, uint64_t inum, uint64_t start,
		      uint8_t *data, uint64_t sectors, uint64_t *i_sectors)
{
	int ret;

	while (sectors) {
		struct bch_extent_ptr_unpacked ptrs[BCH_REPLICAS_MAX];
		uint64_t v[BKEY_EXTENT_VAL_U64s_MAX];
		struct bkey_h k = { 0 };
		struct bch_encoded e;
		uint64_t space;

		ret = wp_space(s, &space);
		if (ret)
			return ret;
		/* the encoding of the running filesystem's writes (io_write.h) */
		ret = bch_extent_encode(s->c, &s->io, data, sectors, space, s->cbuf,
					s->c->encrypted ? ++s->key_version + 1 : 0, &e, s->err);
		if (ret)
			return ret;
		for (unsigned i = 0; i < s->nr_wp; i++) {
			struct wp *w = &s->wp[i];
			struct bch_member_dev *ca = s->c->devs[w->dev];
			uint64_t sector = w->bucket * w->bucket_size + w->used;

			ret = dev_pwrite(ca->io, e.payload, e.out * 512, sector * 512);
			if (ret) {
				pr_buf(s->err, "%s: writing data at sector %" PRIu64 ": %s\n",
				       ca->io->path, sector, bch_err_str(ret));
				return ret;
			}
			ret = bch_alloc_mark(s->a, w->dev, w->bucket, BCH_DATA_USER,
					     (unsigned)e.out, s->err);
			if (ret)
				return ret;
			ptrs[i] = (struct bch_extent_ptr_unpacked) {
				.offset = sector, .dev = (uint8_t)w->dev, .gen = w->gen,
			};
			w->used += (unsigned)e.out;
		}
		k.type		= 128;
		k.size		= (uint32_t)e.in;
		k.version_lo	= e.version_lo;
		k.p		= POS_H(inum, start + e.in);
		bulk_keys_add(&s->keys[BTREE_ID_EXTENTS], &k, v,
			      bch_extent_value(&e, ptrs, s->nr_wp, v));
		*i_sectors += e.in;
		start += e.in;
		data += e.in * 512;
		sectors -= e.in;
	}
	return 0;
}

/*
 * Read bytes [@a, @b) (whole blocks) of the file open at @fd and write them
 * as extents of @inum (holes in the file read as zeros).
 */
static int copy_range(struct src *s, uint64_t inum, int fd, const char *path,
		      uint64_t a, uint64_t b, uint64_t *i_sectors)
{
	int ret = 0;

	while (a < b && !ret) {
		uint64_t len = b - a;
		ssize_t r;

		if (len > COPY_BUF_BYTES)
			len = COPY_BUF_BYTES;
		memset(s->buf, 0, len);
		r = pread(fd, s->buf, len, (off_t)a);
		if (r < 0) {
			pr_buf(s->err, "%s: read: %s\n", path, strerror(errno));
			return -errno;
		}
		ret = write_data(s, inum, a / 512, s->buf, len / 512, i_sectors);
		s->o->nr_bytes += len;
		a += len;
	}
	return ret;
}

static int link_file(struct src *s, uint64_t inum, const char *path, const struct stat *st);

static int copy_file(struct src *s, uint64_t inum, const char *path, const struct stat *st)
{
	uint64_t bs = (uint64_t)s->block_sectors * 512, next = 0, i_sectors = 0;
	off_t size = st->st_size, pos = 0;
	int fd, ret = 0;

	if (s->link)
		return link_file(s, inum, path, st);

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		pr_buf(s->err, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	while (pos < size && !ret) {
		off_t ds = lseek(fd, pos, SEEK_DATA), de;

		if (ds < 0) {
			if (errno != ENXIO) {	/* ENXIO: only a hole is left */
				pr_buf(s->err, "%s: SEEK_DATA: %s\n", path, strerror(errno));
				ret = -errno;
			}
			break;
		}
		de = lseek(fd, ds, SEEK_HOLE);
		if (de < 0 || de > size)
			de = size;
		/* whole blocks, never overlapping what was written already */
		uint64_t a = (uint64_t)ds / bs * bs, b = ((uint64_t)de + bs - 1) / bs * bs;

		if (a < next)
			a = next;
		ret = copy_range(s, inum, fd, path, a, b, &i_sectors);
		next = b;
		pos = (off_t)b;
	}
	close(fd);
	ino(s, inum)->bi_size = (uint64_t)size;
	ino(s, inum)->bi_sectors = i_sectors;
	return ret;
}

static int copy_symlink(struct src *s, uint64_t inum, const char *path, const struct stat *st)
{
	uint64_t bs = (uint64_t)s->block_sectors * 512, i_sectors = 0;
	ssize_t r;
	int ret;

	memset(s->buf, 0, 4096 + bs);
	r = readlink(path, (char *)s->buf, 4096);
	if (r < 0) {
		pr_buf(s->err, "%s: readlink: %s\n", path, strerror(errno));
		return -errno;
	}
	ret = r ? write_data(s, inum, 0, s->buf, ((uint64_t)r + bs - 1) / bs * bs / 512,
			     &i_sectors) : 0;
	if (s->link && r) {
		s->link->nr_copied_extents++;
		s->link->copied_sectors += i_sectors;
	}
	ino(s, inum)->bi_size = (uint64_t)r;
	ino(s, inum)->bi_sectors = i_sectors;
	return ret;
}

/* ---- data linked in place (migrate) ------------------------------------- */

static void linked_add(struct src *s, uint64_t start, uint64_t len)
{
	struct bch_source_range *l = s->nr_linked ? &s->linked[s->nr_linked - 1] : NULL;

	if (l && l->start + l->len == start) {
		l->len += len;
		return;
	}
	if (s->nr_linked == s->size_linked) {
		s->size_linked = s->size_linked ? 2 * s->size_linked : 1024;
		s->linked = xrealloc(s->linked, s->size_linked * sizeof(*s->linked));
	}
	s->linked[s->nr_linked++] = (struct bch_source_range) { start, len };
}

/*
 * Extents of @inum from file sector @pos pointing at the @sectors sectors
 * of the device from @dev_sector, one per bucket they cross, without a
 * checksum (another filesystem wrote the data); their buckets are marked
 * as holding user data.
 */
static int link_sectors(struct src *s, uint64_t inum, uint64_t pos, uint64_t dev_sector,
			uint64_t sectors, uint64_t *i_sectors)
{
	unsigned dev = s->link->dev;
	struct bch_dev_alloc *da = s->a->devs[dev];
	int ret;

	if (!s->link_replicas) {
		bch_replicas_add(&s->a->replicas, BCH_DATA_USER, 1ULL << dev);
		s->link_replicas = true;
	}
	while (sectors) {
		uint64_t b = dev_sector / da->bucket_size;
		uint64_t n = min_t(uint64_t, (b + 1) * da->bucket_size - dev_sector, sectors);
		struct bch_extent_ptr p = { 0 };
		struct bkey_h k = { 0 };

		if (b < da->first_bucket || b >= da->nbuckets) {
			pr_buf(s->err, "data at device sector %" PRIu64 " lies outside the buckets of "
			       "the new filesystem (%u to %" PRIu64 ")\n", dev_sector,
			       da->first_bucket, da->nbuckets - 1);
			return -ERANGE;
		}
		SET_EXTENT_PTR_TYPE(&p, 1);
		SET_EXTENT_PTR_OFFSET(&p, dev_sector);
		SET_EXTENT_PTR_DEV(&p, dev);
		SET_EXTENT_PTR_GEN(&p, bch_bucket(da, b)->gen);
		ret = bch_alloc_mark(s->a, dev, b, BCH_DATA_USER, (unsigned)n, s->err);
		if (ret)
			return ret;
		/* the gen stays (nothing was invalidated), but the bucket needs its alloc key */
		if (!bch_bucket(da, b)->gen_dirty)
			bch_alloc_set_gen(s->a, dev, b, bch_bucket(da, b)->gen);
		k.type	= 128;
		k.size	= (uint32_t)n;
		k.p	= POS_H(inum, pos + n);
		bulk_keys_add(&s->keys[BTREE_ID_EXTENTS], &k, &p, sizeof(p));
		linked_add(s, dev_sector, n);
		*i_sectors += n;
		pos += n;
		dev_sector += n;
		sectors -= n;
	}
	return 0;
}

/*
 * The data of a regular file, from where FIEMAP says it lies (doc/tools.md
 * §6): extents linked in place where bch_fiemap_use() allows it, copied
 * otherwise, nothing for holes and unwritten extents. Past round_up(size,
 * 4096) nothing is taken (fsck's i_size rule, doc/fsck.md §11).
 */
static int link_file(struct src *s, uint64_t inum, const char *path, const struct stat *st)
{
	struct bch_source_link *l = s->link;
	uint64_t bs = (uint64_t)s->block_sectors * 512, next = 0, i_sectors = 0;
	uint64_t limit = round_up((uint64_t)st->st_size, 4096);
	struct fiemap_ext *e = NULL;
	size_t nr = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		pr_buf(s->err, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	ret = bch_fiemap(fd, false, &e, &nr);
	for (size_t i = 0; i < nr && !ret; i++)
		if (e[i].flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)) {
			/* not placed yet: write it out and ask again */
			free(e);
			ret = bch_fiemap(fd, true, &e, &nr);
			break;
		}
	if (ret)
		pr_buf(s->err, "%s: cannot map its data (FIEMAP): %s\n", path,
		       ret == -EOPNOTSUPP ? "the filesystem does not support it" : strerror(-ret));

	for (size_t i = 0; i < nr && !ret; i++) {
		uint64_t a = e[i].logical, b = e[i].logical + e[i].length;

		if (b > limit)
			b = limit;
		if (a < next)
			a = next;
		if (a >= b)
			continue;
		switch (bch_fiemap_use(&e[i], l->copy_below * 512)) {
		case FIEMAP_USE_HOLE:
			break;
		case FIEMAP_USE_LINK:
			if (e[i].logical % bs || e[i].physical % bs || (b - a) % bs) {
				pr_buf(s->err, "%s: unaligned extent (file byte %" PRIu64 ", device byte %"
				       PRIu64 ", %" PRIu64 " bytes, blocks of %" PRIu64 " bytes): it "
				       "cannot be linked in place\n", path, e[i].logical,
				       e[i].physical, e[i].length, bs);
				ret = -EINVAL;
				break;
			}
			ret = link_sectors(s, inum, a / 512, (e[i].physical + (a - e[i].logical)) / 512,
					   (b - a) / 512, &i_sectors);
			l->nr_linked_extents++;
			l->linked_sectors += (b - a) / 512;
			next = b;
			break;
		case FIEMAP_USE_COPY:
			a = a / bs * bs;
			b = round_up(b, bs);
			if (a < next)
				a = next;
			ret = copy_range(s, inum, fd, path, a, b, &i_sectors);
			l->nr_copied_extents++;
			l->copied_sectors += (b - a) / 512;
			next = b;
			break;
		}
	}
	close(fd);
	free(e);
	ino(s, inum)->bi_size = (uint64_t)st->st_size;
	ino(s, inum)->bi_sectors = i_sectors;
	return ret;
}

static int range_cmp(const void *a, const void *b)
{
	const struct bch_source_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * The file that keeps the old filesystem's space allocated (doc/tools.md §6
 * step 11): every sector of the new filesystem's buckets (from
 * first_bucket) that neither the reserved file nor linked data covers, at
 * the file offset equal to its device sector. Its size is the device's.
 */
static int old_fs_extents(struct src *s, uint64_t inum)
{
	struct bch_source_link *l = s->link;
	struct bch_dev_alloc *da = s->a->devs[l->dev];
	size_t nr = s->nr_linked + l->nr_reserved;
	struct bch_source_range *cov = xmalloc((nr + 1) * sizeof(*cov));
	uint64_t pos = (uint64_t)da->first_bucket * da->bucket_size;
	uint64_t end = da->nbuckets * da->bucket_size, i_sectors = 0;
	int ret = 0;

	memcpy(cov, s->linked, s->nr_linked * sizeof(*cov));
	memcpy(cov + s->nr_linked, l->reserved, l->nr_reserved * sizeof(*cov));
	qsort(cov, nr, sizeof(*cov), range_cmp);
	cov[nr] = (struct bch_source_range) { end, 0 };
	for (size_t i = 0; i <= nr && pos < end && !ret; i++) {
		uint64_t gap_end = cov[i].start < end ? cov[i].start : end;

		if (gap_end > pos)
			ret = link_sectors(s, inum, pos, pos, gap_end - pos, &i_sectors);
		if (cov[i].start + cov[i].len > pos)
			pos = cov[i].start + cov[i].len;
	}
	free(cov);
	l->old_fs_sectors = i_sectors;
	ino(s, inum)->bi_size = end * 512;
	ino(s, inum)->bi_sectors = i_sectors;
	return ret;
}

/* ---- xattrs ------------------------------------------------------------- */

static bool is_acl(unsigned type)
{
	return type == BCH_XATTR_INDEX_POSIX_ACL_ACCESS ||
	       type == BCH_XATTR_INDEX_POSIX_ACL_DEFAULT;
}

static const struct { const char *prefix; unsigned type; } xattr_types[] = {
	{ "user.",	BCH_XATTR_INDEX_USER },
	{ "trusted.",	BCH_XATTR_INDEX_TRUSTED },
	{ "security.",	BCH_XATTR_INDEX_SECURITY },
	{ "system.posix_acl_access",	BCH_XATTR_INDEX_POSIX_ACL_ACCESS },
	{ "system.posix_acl_default",	BCH_XATTR_INDEX_POSIX_ACL_DEFAULT },
};

_Static_assert(BCH_XATTR_NAME_VAL_MAX == (255 - BKEY_U64S_UNPACKED) * 8 - sizeof(struct bch_xattr),
	       "an xattr key: key header, xattr header (counted as 8 bytes), name and value");

static void xattr_too_big(struct src *s, const char *path, const char *name, ssize_t vlen)
{
	s->o->nr_xattrs_too_big++;
	if (!s->o->warnings)
		return;
	pr_buf(s->o->warnings, "%s: xattr %s (", path, name);
	if (vlen >= 0)
		pr_buf(s->o->warnings, "%zd bytes of value", vlen);
	else
		pr_str(s->o->warnings, "value of unknown size");
	pr_buf(s->o->warnings, ") does not fit in a key (at most %u bytes of name and value): not copied\n",
	       BCH_XATTR_NAME_VAL_MAX);
}

static int copy_xattrs(struct src *s, uint64_t inum, const char *path)
{
	struct bch_hash_info hi;
	struct hashed *h = NULL;
	size_t nr = 0;
	ssize_t len = llistxattr(path, NULL, 0);
	char *names, *n;
	int ret = 0;

	if (len <= 0)
		return 0;	/* none, or not supported here */
	names = xmalloc((size_t)len + 1);
	len = llistxattr(path, names, (size_t)len);
	if (len < 0) {
		free(names);
		return 0;
	}
	ret = bch_hash_info_init(&hi, bch_inode_str_hash(ino(s, inum)),
				 ino(s, inum)->bi_hash_seed);
	if (ret)
		goto out;
	h = xcalloc((size_t)len, sizeof(*h));
	for (n = names; n < names + len && !ret; n += strlen(n) + 1) {
		unsigned type = ~0U;
		const char *name = NULL;
		uint8_t val[2048], enc[2048];
		ssize_t vlen;
		size_t bytes;

		for (unsigned i = 0; i < ARRAY_SIZE(xattr_types); i++)
			if (!strncmp(n, xattr_types[i].prefix, strlen(xattr_types[i].prefix))) {
				type = xattr_types[i].type;
				name = n + strlen(xattr_types[i].prefix);
			}
		if (type == ~0U || (is_acl(type) && (*name || !s->acl))) {
			s->o->nr_xattrs_skipped++;
			continue;
		}
		vlen = lgetxattr(path, n, val, sizeof(val));
		if (vlen < 0 && errno == ERANGE) {
			xattr_too_big(s, path, n, lgetxattr(path, n, NULL, 0));
			continue;
		}
		if (vlen < 0) {
			pr_buf(s->err, "%s: xattr %s: %s\n", path, n, strerror(errno));
			ret = -errno;
			break;
		}
		if (is_acl(type)) {
			uint8_t acl[sizeof(val)];
			ssize_t alen = bch_acl_from_xattr(val, (size_t)vlen, type, acl, sizeof(acl));

			if (alen < 0) {
				pr_buf(s->err, "%s: xattr %s: not a valid POSIX ACL\n", path, n);
				ret = (int)alen;
				break;
			}
			if (!alen)
				continue;
			memcpy(val, acl, (size_t)alen);
			vlen = alen;
		}
		bytes = bch_xattr_encode(type, name, strlen(name), val, (size_t)vlen,
					 enc, sizeof(enc));
		if (!bytes || BKEY_U64S_UNPACKED + bytes / 8 > 255) {
			xattr_too_big(s, path, n, vlen);
			continue;
		}
		h[nr].hash = bch_xattr_hash(&hi, type, name, strlen(name));
		h[nr].k.type = 128;
		h[nr].v = xmalloc(bytes);
		memcpy(h[nr].v, enc, bytes);
		h[nr].v_bytes = (unsigned)bytes;
		nr++;
	}
	if (!ret)
		hashed_emit(s, BTREE_ID_XATTRS, inum, h, nr);
	else
		for (size_t i = 0; i < nr; i++)
			free(h[i].v);
out:
	free(h);
	free(names);
	return ret;
}

/* ---- the walk ----------------------------------------------------------- */

static uint64_t *hl_find(struct src *s, const struct stat *st)
{
	struct hardlink *l = s->hl[(st->st_ino ^ st->st_dev) % HL_BUCKETS];

	for (; l; l = l->next)
		if (l->dev == st->st_dev && l->ino == st->st_ino)
			return &l->inum;
	return NULL;
}

static void hl_add(struct src *s, const struct stat *st, uint64_t inum)
{
	struct hardlink *l = xcalloc(1, sizeof(*l));
	unsigned b = (st->st_ino ^ st->st_dev) % HL_BUCKETS;

	l->dev = st->st_dev;
	l->ino = st->st_ino;
	l->inum = inum;
	l->next = s->hl[b];
	s->hl[b] = l;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

static void progress(struct src *s, int done)
{
	if (s->o->progress && (done || s->nr_inodes - s->last_progress >= 100)) {
		s->last_progress = s->nr_inodes;
		s->o->progress(s->o->progress_priv, s->nr_inodes, s->o->nr_bytes, done);
	}
}

static int copy_dir(struct src *s, uint64_t dir_inum, const char *path, dev_t dev);

/*
 * One directory entry @name of @dir at @path: its inode, its dirent.
 * 1 when the entry is skipped (one of the devices being formatted).
 */
static int copy_entry(struct src *s, uint64_t dir, const char *path, const char *name,
		      dev_t dev, struct hashed *h)
{
	struct stat st;
	uint64_t inum, *seen;
	size_t bytes;
	uint8_t val[512];
	int ret = 0;

	if (lstat(path, &st)) {
		pr_buf(s->err, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	for (unsigned i = 0; i < s->nr_dev_files; i++)
		if (st.st_dev == s->dev_dev[i] && st.st_ino == s->dev_ino[i])
			return 1;	/* a device of the new filesystem itself: skipped */
	if (s->link && st.st_dev != (dev_t)s->link->st_dev) {
		pr_buf(s->err, "%s is on another filesystem (a mount inside the one being migrated): "
		       "unmount it first\n", path);
		return -EXDEV;
	}
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && (seen = hl_find(s, &st))) {
		inum = *seen;
		ino(s, inum)->bi_nlink++;
	} else {
		inum = inode_new(s);
		inode_from_stat(s, inum, &st);
		if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
			hl_add(s, &st, inum);
		ret = copy_xattrs(s, inum, path);
		if (!ret) {
			if (S_ISREG(st.st_mode))
				ret = copy_file(s, inum, path, &st);
			else if (S_ISLNK(st.st_mode))
				ret = copy_symlink(s, inum, path, &st);
			else if (S_ISDIR(st.st_mode)) {
				ino(s, dir)->bi_nlink++;	/* the subdirectory's ".." */
				ret = copy_dir(s, inum, path, dev);
			}
		}
		progress(s, 0);
	}
	if (ret)
		return ret;

	bytes = bch_dirent_encode(inum, mode_to_dt(st.st_mode), name, strlen(name),
				  val, sizeof(val));
	if (!bytes) {
		pr_buf(s->err, "%s: name too long\n", path);
		return -ENAMETOOLONG;
	}
	h->k.type = 128;
	h->v = xmalloc(bytes);
	memcpy(h->v, val, bytes);
	h->v_bytes = (unsigned)bytes;
	return 0;
}

/* linux_dirent64 (the <dirent.h> of libc is shadowed by ours) */
struct ldirent64 {
	uint64_t	d_ino;
	int64_t		d_off;
	unsigned short	d_reclen;
	unsigned char	d_type;
	char		d_name[];
};

static int copy_dir(struct src *s, uint64_t dir_inum, const char *path, dev_t dev)
{
	struct bch_hash_info hi;
	struct hashed *h = NULL;
	char **names = NULL, *child = NULL;
	size_t nr = 0, size = 0, nr_h = 0;
	char *dbuf;
	long n;
	int fd, ret;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		pr_buf(s->err, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	dbuf = xmalloc(32768);	/* not on the stack: directories nest deeply */
	while ((n = syscall(SYS_getdents64, fd, dbuf, 32768)) > 0)
		for (long off = 0; off < n; ) {
			struct ldirent64 *de = (struct ldirent64 *)(dbuf + off);

			off += de->d_reclen;
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (nr == size) {
				size = size ? 2 * size : 64;
				names = xrealloc(names, size * sizeof(*names));
			}
			names[nr++] = xstrdup(de->d_name);
		}
	free(dbuf);
	if (n < 0) {
		pr_buf(s->err, "%s: reading the directory: %s\n", path, strerror(errno));
		ret = -errno;
		close(fd);
		for (size_t i = 0; i < nr; i++)
			free(names[i]);
		free(names);
		return ret;
	}
	close(fd);
	if (nr)	/* sorted: the same tree gives the same numbers */
		qsort(names, nr, sizeof(*names), name_cmp);

	ret = bch_hash_info_init(&hi, bch_inode_str_hash(ino(s, dir_inum)),
				 ino(s, dir_inum)->bi_hash_seed);
	h = xcalloc(nr + ARRAY_SIZE(s->root_extra), sizeof(*h));
	for (size_t i = 0; i < nr && !ret; i++) {
		child = xrealloc(child, strlen(path) + strlen(names[i]) + 2);
		sprintf(child, "%s/%s", path, names[i]);
		ret = copy_entry(s, dir_inum, child, names[i], dev, &h[nr_h]);
		if (ret > 0) {
			ret = 0;
			continue;
		}
		if (!ret) {
			h[nr_h].hash = bch_dirent_hash(&hi, names[i], strlen(names[i]));
			nr_h++;
		}
	}
	if (!ret && dir_inum == BCACHEFS_ROOT_INO) {
		for (unsigned i = 0; i < s->nr_root_extra; i++)
			h[nr_h++] = s->root_extra[i];
		s->nr_root_extra = 0;
	}
	if (!ret)
		hashed_emit(s, BTREE_ID_DIRENTS, dir_inum, h, nr_h);
	else
		for (size_t i = 0; i < nr_h; i++)
			free(h[i].v);
	for (size_t i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	free(child);
	free(h);
	return ret;
}

/* ---- the whole ---------------------------------------------------------- */

/*
 * A dirent @name -> @inum (of type @dt) in the root directory, made here
 * rather than copied: placed with the root's other dirents (probing).
 */
static int root_dirent_add(struct src *s, uint64_t inum, const char *name, unsigned dt)
{
	struct bch_hash_info hi;
	struct hashed h = { 0 };
	uint8_t val[64];
	size_t bytes;
	int ret;

	ret = bch_hash_info_init(&hi, s->c->str_hash_type, ino(s, BCACHEFS_ROOT_INO)->bi_hash_seed);
	if (ret)
		return ret;
	bytes = bch_dirent_encode(inum, dt, name, strlen(name), val, sizeof(val));
	if (!bytes || s->nr_root_extra == ARRAY_SIZE(s->root_extra))
		return -EINVAL;
	h.hash = bch_dirent_hash(&hi, name, strlen(name));
	h.k.type = 128;
	h.v = xmalloc(bytes);
	memcpy(h.v, val, bytes);
	h.v_bytes = (unsigned)bytes;
	s->root_extra[s->nr_root_extra++] = h;
	return 0;
}

static int add_lost_found(struct src *s)
{
	uint64_t inum = inode_new(s);	/* 4097 */

	ino(s, inum)->bi_mode = S_IFDIR | 0755;
	ino(s, BCACHEFS_ROOT_INO)->bi_nlink++;
	return root_dirent_add(s, inum, LOST_FOUND, BCH_DT_DIR);
}

int bch_source_populate(struct bch_fs *c, struct bch_allocator *a,
			const struct btree_write_ctx *w, struct bulk_root *roots,
			void *priv, struct printbuf *err)
{
	static const unsigned btrees[] = {
		BTREE_ID_EXTENTS, BTREE_ID_INODES, BTREE_ID_DIRENTS, BTREE_ID_XATTRS,
	};
	struct bch_source_opts *o = priv;
	struct src *s = xcalloc(1, sizeof(*s));
	struct timespec now;
	struct stat st;
	uint64_t lf = 0, old_fs = 0;
	int ret;

	s->c = c;
	s->a = a;
	s->o = o;
	s->err = err;
	s->link = o->link;
	s->block_sectors = c->block_size;
	s->acl = BCH_SB_POSIX_ACL(c->sb);
	/* the filesystem's data options: checksum (a MAC when encrypted),
	 * compression, encoded_extent_max (io_write.h) */
	bch_io_opts_get(c, NULL, &s->io);
	/* a fresh filesystem's counter, + 65536 when encrypted (doc/format.md §9.3) */
	s->key_version = 65536;
	clock_gettime(CLOCK_REALTIME, &now);
	s->now = (int64_t)to_time(s, &now);

	if (c->encrypted && !c->have_key) {
		pr_str(err, "the filesystem is encrypted and its key is not loaded\n");
		ret = -BCH_ERR_no_key;
		goto out;
	}
	if (lstat(o->dir, &st) || !S_ISDIR(st.st_mode)) {
		pr_buf(err, "%s: %s\n", o->dir, errno ? strerror(errno) : "not a directory");
		ret = -ENOTDIR;
		goto out;
	}
	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++) {
		struct stat dst;

		if (c->devs[i] && c->devs[i]->io && !stat(c->devs[i]->io->path, &dst)) {
			s->dev_dev[s->nr_dev_files] = dst.st_dev;
			s->dev_ino[s->nr_dev_files++] = dst.st_ino;
		}
	}
	if (s->link) {
		s->dev_dev[s->nr_dev_files] = (dev_t)s->link->st_dev;
		s->dev_ino[s->nr_dev_files++] = (ino_t)s->link->skip_ino;
	}
	s->buf = xmalloc(COPY_BUF_BYTES + 8192);
	s->cbuf = xmalloc(COPY_BUF_BYTES + 8192);
	ret = wp_init(s);
	if (ret)
		goto out;

	/* the root directory is the source directory; lost+found next to it */
	inode_new(s);
	inode_from_stat(s, BCACHEFS_ROOT_INO, &st);
	ret = copy_xattrs(s, BCACHEFS_ROOT_INO, o->dir);
	if (ret)
		goto out;
	{
		char *p = xmalloc(strlen(o->dir) + sizeof(LOST_FOUND) + 2);
		struct stat lst;

		sprintf(p, "%s/%s", o->dir, LOST_FOUND);
		if (lstat(p, &lst))
			lf = 1;
		free(p);
	}
	if (lf)
		ret = add_lost_found(s);
	if (!ret && s->link) {
		/* root-owned, read-only, one link: its extents come after the walk */
		old_fs = inode_new(s);
		ino(s, old_fs)->bi_mode = S_IFREG | 0400;
		ret = root_dirent_add(s, old_fs, s->link->old_fs_name, BCH_DT_REG);
	}
	if (!ret)
		ret = copy_dir(s, BCACHEFS_ROOT_INO, o->dir, st.st_dev);
	if (!ret && old_fs)
		ret = old_fs_extents(s, old_fs);
	if (ret)
		goto out;
	progress(s, 1);

	for (size_t i = 0; i < s->nr_inodes; i++) {
		uint8_t val[BCH_INODE_VAL_BYTES_MAX];
		size_t bytes = bch_inode_pack(&s->inodes[i], val);
		struct bkey_h k = { .type = 128, .p = POS_H(s->inodes[i].bi_inum, 0) };

		bulk_keys_add(&s->keys[BTREE_ID_INODES], &k, val, (unsigned)bytes);
	}
	o->nr_inodes = s->nr_inodes;

	for (unsigned i = 0; i < ARRAY_SIZE(btrees) && !ret; i++) {
		struct bulk_keys *l = &s->keys[btrees[i]];

		bulk_keys_sort(l);
		ret = bch_bulk_build(c, w, a, btrees[i], l->k, l->nr, 0,
				     &roots[btrees[i]], err);
	}
out:
	for (unsigned i = 0; i < BCH_NR_BTREES; i++)
		bulk_keys_exit(&s->keys[i]);
	for (unsigned i = 0; i < HL_BUCKETS; i++)
		while (s->hl[i]) {
			struct hardlink *n = s->hl[i]->next;

			free(s->hl[i]);
			s->hl[i] = n;
		}
	for (unsigned i = 0; i < s->nr_root_extra; i++)
		free(s->root_extra[i].v);
	free(s->linked);
	free(s->inodes);
	free(s->buf);
	free(s->cbuf);
	free(s);
	bch_compress_thread_exit();
	return ret;
}
