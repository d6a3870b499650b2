// SPDX-License-Identifier: GPL-2.0
/*
 * Filesystem-level reads (see fsread.h): inodes, lookups with the string
 * hash and linear probing (doc/format.md §5.6.3), readdir, file data assembled from
 * extents with holes as zeroes (doc/format.md §5.2), symlinks and xattrs.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "btree/btree.h"
#include "bkey/dirent.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fs/fsread.h"
#include "fs/inode_opts.h"
#include "bkey/inode.h"
#include "fs/io_read.h"
#include "util/util.h"
#include "bkey/xattr.h"

/* ---- inodes ---- */

int bch_inode_get(struct bch_fs *c, uint64_t inum, struct bch_inode_unpacked *inode,
		  struct printbuf *err)
{
	struct printbuf ierr = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	bch_btree_iter_init_range(&iter, c, BTREE_ID_INODES, POS_H(inum, 0), POS_H(inum, 0), &ierr);
	ret = bch_btree_iter_peek(&iter, &k);
	if (ret)
		goto out;
	if (!k || k->k.p.inode != inum || k->k.p.offset != 0 ||
	    k->k.type != BCH_INODE_FS) {
		ret = -ENOENT;
		goto out;
	}
	ret = bch_inode_unpack(k, inode);
	if (ret) {
		pr_buf(err, "inode %" PRIu64 ": cannot unpack: %s\n", inum, bch_err_str(ret));
		goto out;
	}
	inode->bi_inum = inum;
out:
	if (ret && ret != -ENOENT && ierr.pos)
		pr_str(err, printbuf_str(&ierr));
	bch_btree_iter_exit(&iter);
	printbuf_exit(&ierr);
	return ret;
}

struct timespec bch_time_to_timespec(const struct bch_fs *c, uint64_t stored)
{
	int64_t ns = bch_inode_time_to_ns(stored, le64_to_cpu(c->sb->time_base_lo),
					  le32_to_cpu(c->sb->time_precision));
	struct timespec ts;
	int64_t s = ns / 1000000000, r = ns % 1000000000;

	if (r < 0) {
		r += 1000000000;
		s--;
	}
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)r;
	return ts;
}

void bch_inode_stat(const struct bch_fs *c, const struct bch_inode_unpacked *inode,
		    struct bch_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->ino		= inode->bi_inum;
	st->mode	= inode->bi_mode;
	st->nlink	= bch_inode_nlink_get(inode);
	st->uid		= inode->bi_uid;
	st->gid		= inode->bi_gid;
	st->rdev_major	= bch_inode_dev_major(inode->bi_dev);
	st->rdev_minor	= bch_inode_dev_minor(inode->bi_dev);
	st->size	= inode->bi_size;
	st->blocks	= inode->bi_sectors;
	st->atime	= bch_time_to_timespec(c, inode->bi_atime);
	st->mtime	= bch_time_to_timespec(c, inode->bi_mtime);
	st->ctime	= bch_time_to_timespec(c, inode->bi_ctime);
	st->otime	= bch_time_to_timespec(c, inode->bi_otime);
	st->flags	= inode->bi_flags & 0x1f;
}

static bool inode_is_dir(const struct bch_inode_unpacked *inode)
{
	return ((inode->bi_mode >> 12) & 15) == BCH_DT_DIR;
}

/* ---- names ---- */

/* A name we are willing to hand out: 1..255 bytes, no '/', no NUL, not "." or "..". */
static bool name_ok(const uint8_t *name, size_t len)
{
	if (!len || len > BCH_NAME_MAX)
		return false;
	if (memchr(name, '/', len) || memchr(name, 0, len))
		return false;
	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return false;
	return true;
}

static int hash_info(const struct bch_inode_unpacked *inode, struct bch_hash_info *h)
{
	return bch_hash_info_init(h, bch_inode_str_hash(inode), inode->bi_hash_seed);
}

/* Scan every dirent of @dir for @name. */
static int lookup_scan(struct bch_fs *c, uint64_t dir, const char *name, size_t len,
		       uint64_t *inum, unsigned *d_type, struct printbuf *ierr)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	bch_btree_iter_init_range(&iter, c, BTREE_ID_DIRENTS, POS_H(dir, 0), POS_H(dir, UINT64_MAX), ierr);
	while (!(ret = bch_btree_iter_next(&iter, &k)) && k && k->k.p.inode == dir) {
		struct bch_dirent_h d;

		if (k->k.type != BCH_DIRENT || bch_dirent_decode(k, &d))
			continue;
		if (d.name_len == len && !memcmp(d.name, name, len)) {
			*inum = d.d_inum;
			if (d_type)
				*d_type = d.d_type;
			goto out;
		}
	}
	if (!ret)
		ret = -ENOENT;
out:
	bch_btree_iter_exit(&iter);
	return ret;
}

/*
 * Linear probing in hash table @btree of inode @inum from offset @want:
 * the key @match() takes (it keeps what it needs of it), up to the first
 * empty slot. 0 found, -ENOENT not there, or the iterator's error (with
 * its notes in @ierr).
 */
#define HASH_PROBE_WINDOW	32

static int hash_probe(struct bch_fs *c, unsigned btree, uint64_t inum, uint64_t want,
		      bool (*match)(void *arg, const struct bkey_ref *k), void *arg,
		      struct printbuf *ierr)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret = 0;

	/* in windows of slots: a probe run is short, a leaf is long */
	for (;;) {
		uint64_t end = want > UINT64_MAX - (HASH_PROBE_WINDOW - 1)
			? UINT64_MAX : want + HASH_PROBE_WINDOW - 1;
		bool more = false;

		bch_btree_iter_init_range(&iter, c, btree, POS_H(inum, want), POS_H(inum, end), ierr);
		while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
			/* an empty slot (no key at the next offset) ends the probe */
			if (k->k.p.inode != inum || k->k.p.offset != want)
				break;
			if (match(arg, k))
				goto out;
			if (want == UINT64_MAX)
				break;
			more = want == end;
			want++;
			bch_btree_iter_advance(&iter);
		}
		bch_btree_iter_exit(&iter);
		if (ret || !more)
			break;
	}
	return ret ? ret : -ENOENT;
out:
	bch_btree_iter_exit(&iter);
	return ret;
}

struct dirent_match {
	const char		*name;
	size_t			len;
	struct bch_dirent_h	d;
};

static bool dirent_match(void *arg, const struct bkey_ref *k)
{
	struct dirent_match *m = arg;

	return k->k.type == BCH_DIRENT && !bch_dirent_decode(k, &m->d) &&
		m->d.name_len == m->len && !memcmp(m->d.name, m->name, m->len);
}

int bch_lookup(struct bch_fs *c, const struct bch_inode_unpacked *dir,
	       const char *name, size_t len, unsigned flags,
	       uint64_t *inum, unsigned *d_type, struct printbuf *err)
{
	struct printbuf ierr = PRINTBUF;
	struct dirent_match m;
	struct bch_hash_info h;
	int ret;

	if (!inode_is_dir(dir))
		return -ENOTDIR;
	if (len > BCH_NAME_MAX)
		return -ENAMETOOLONG;
	if (!len)
		return -ENOENT;

	ret = hash_info(dir, &h);
	if (ret) {
		pr_buf(err, "directory %" PRIu64 ": invalid string hash type %u\n",
		       dir->bi_inum, bch_inode_str_hash(dir));
		goto scan;
	}
	m.name = name;
	m.len = len;
	ret = hash_probe(c, BTREE_ID_DIRENTS, dir->bi_inum, bch_dirent_hash(&h, name, len),
			 dirent_match, &m, &ierr);
	if (!ret) {
		*inum = m.d.d_inum;
		if (d_type)
			*d_type = m.d.d_type;
	}
	if (ret != -ENOENT)
		goto out;
scan:
	if (flags & BCH_LOOKUP_SCAN)
		ret = lookup_scan(c, dir->bi_inum, name, len, inum, d_type, &ierr);
out:
	if (ret && ret != -ENOENT && ierr.pos)
		pr_str(err, printbuf_str(&ierr));
	printbuf_exit(&ierr);
	return ret;
}

int bch_lookup_path(struct bch_fs *c, const char *path, uint64_t *inum,
		    struct printbuf *err)
{
	struct bch_inode_unpacked dir;
	uint64_t cur = BCACHEFS_ROOT_INO;
	const char *p = path;
	int ret;

	while (1) {
		const char *e;
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		len = (size_t)(e - p);
		if (len == 1 && p[0] == '.') {
			p = e;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			pr_buf(err, "%s: \"..\" in paths is not supported\n", path);
			return -EINVAL;
		}
		ret = bch_inode_get(c, cur, &dir, err);
		if (ret) {
			if (ret == -ENOENT)
				pr_buf(err, "%s: directory inode %" PRIu64 " is missing\n", path, cur);
			return ret;
		}
		ret = bch_lookup(c, &dir, p, len, BCH_LOOKUP_SCAN, &cur, NULL, err);
		if (ret)
			return ret;
		p = e;
	}
	*inum = cur;
	return 0;
}

/*
 * The end of a walk over the keys of one inode (readdir, listxattr):
 * node problems of @iter (noted in @ierr) go to @err and count as bad
 * entries; with none, @ierr's notes go to @err only when the walk failed.
 * Frees @iter and @ierr; returns @ret.
 */
static int walk_end(struct btree_iter *iter, struct printbuf *ierr, struct printbuf *err,
		    unsigned long *nr_bad, int ret)
{
	if (iter->nr_errors && ret >= 0) {
		pr_str(err, printbuf_str(ierr));
		if (nr_bad)
			*nr_bad += iter->nr_errors;
	} else if (ret < 0 && ierr->pos) {
		pr_str(err, printbuf_str(ierr));
	}
	bch_btree_iter_exit(iter);
	printbuf_exit(ierr);
	return ret;
}

int bch_readdir(struct bch_fs *c, uint64_t dir_inum, uint64_t cookie,
		bch_readdir_fn fn, void *arg, unsigned long *nr_bad,
		struct printbuf *err)
{
	struct printbuf ierr = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	char name[BCH_NAME_MAX + 1];
	int ret;

	bch_btree_iter_init_range(&iter, c, BTREE_ID_DIRENTS, POS_H(dir_inum, cookie),
				  POS_H(dir_inum, UINT64_MAX), &ierr);
	while (!(ret = bch_btree_iter_next(&iter, &k)) && k && k->k.p.inode == dir_inum) {
		struct bch_dirent_h d;

		if (k->k.type != BCH_DIRENT)
			continue;
		if (bch_dirent_decode(k, &d) || !name_ok(d.name, d.name_len)) {
			pr_buf(err, "directory %" PRIu64 ": skipping invalid dirent at offset %" PRIu64 "\n",
			       dir_inum, k->k.p.offset);
			if (nr_bad)
				(*nr_bad)++;
			continue;
		}
		memcpy(name, d.name, d.name_len);
		name[d.name_len] = 0;
		ret = fn(arg, name, d.name_len, d.d_inum, d.d_type,
			 k->k.p.offset == UINT64_MAX ? UINT64_MAX : k->k.p.offset + 1);
		if (ret)
			break;
	}
	return walk_end(&iter, &ierr, err, nr_bad, ret);
}

/* ---- file data ---- */

/* Re-use the iterator for reads at most this far ahead (sectors). */
#define FILE_ITER_REUSE_SECTORS	(1U << 16)
/* Largest single read (bytes); larger requests return short counts. */
#define FILE_READ_MAX		(1U << 30)

static void file_iter_drop(struct bch_file *f);
static void file_ahead_drop(struct bch_file *f);

void bch_file_open(struct bch_fs *c, const struct bch_inode_unpacked *inode,
		   struct bch_file *f)
{
	memset(f, 0, sizeof(*f));
	f->c	= c;
	f->inum	= inode->bi_inum;
	f->size	= inode->bi_size;
	f->ov_changes = c->overlay.changes;
	/* the inode's option, else the filesystem's (stored + 1, doc/format.md §5.5.2) */
	f->promote_target = inode->bi_promote_target ? inode->bi_promote_target - 1U
		: c->sb ? (unsigned)BCH_SB_PROMOTE_TARGET(c->sb) : 0;
}

/*
 * @sectors of extent @k were read from device @dev: counted per device
 * (fs usage), and told to promote (c->promote.read_hook, fs/promote.h).
 */
static void file_read_from(struct bch_file *f, const struct bkey_ref *k, unsigned dev,
			   uint64_t sectors)
{
	struct bch_fs *c = f->c;

	if (dev < BCH_FS_MAX_DEVS)
		__atomic_fetch_add(&c->promote.read_sectors[dev], sectors, __ATOMIC_RELAXED);
	if (c->promote.read_hook)
		c->promote.read_hook(c, f->promote_target, k, dev, sectors);
}

void bch_file_reset(struct bch_file *f, uint64_t size)
{
	file_iter_drop(f);
	file_ahead_drop(f);
	f->size = size;
	f->ov_changes = f->c->overlay.changes;
}

static void file_iter_drop(struct bch_file *f)
{
	if (f->iter_live)
		bch_btree_iter_exit(&f->iter);
	f->iter_live = false;
}

static void file_ahead_drop(struct bch_file *f)
{
	if (f->ahead_live)
		bch_btree_iter_exit(&f->ahead_iter);
	f->ahead_live = false;
}

void bch_file_close(struct bch_file *f)
{
	file_iter_drop(f);
	file_ahead_drop(f);
	if (f->ahead_err) {
		printbuf_exit(f->ahead_err);
		free(f->ahead_err);
	}
	if (f->iter_err) {
		printbuf_exit(f->iter_err);
		free(f->iter_err);
	}
	bch_read_cache_exit(&f->rc);
	memset(f, 0, sizeof(*f));
}

/* Position the iterator at the first extent of the file ending after @sector. */
static void file_seek(struct bch_file *f, uint64_t sector)
{
	if (f->iter_live && sector >= f->iter_sector &&
	    sector - f->iter_sector <= FILE_ITER_REUSE_SECTORS)
		return;
	file_iter_drop(f);
	if (!f->iter_err)
		f->iter_err = xcalloc(1, sizeof(*f->iter_err));
	/* this file's keys only: a small file does not read a whole leaf */
	bch_btree_iter_init_range(&f->iter, f->c, BTREE_ID_EXTENTS, POS_H(f->inum, sector),
				  POS_H(f->inum, UINT64_MAX), f->iter_err);
	f->iter_live = true;
	f->iter_sector = sector;
}

/*
 * The key of this file at the iterator that ends after @sector, or NULL
 * when the file has no more keys. Skips keys ending at or before @sector.
 */
static int file_peek(struct bch_file *f, uint64_t sector, struct bkey_ref **k)
{
	int ret;

	while (1) {
		ret = bch_btree_iter_peek(&f->iter, k);
		if (ret || !*k)
			return ret;
		if ((*k)->k.p.inode != f->inum) {
			*k = NULL;
			return 0;
		}
		if ((*k)->k.p.offset > sector)
			return 0;
		f->iter_sector = (*k)->k.p.offset;
		bch_btree_iter_advance(&f->iter);
	}
}

static void file_advance(struct bch_file *f, const struct bkey_ref *k)
{
	f->iter_sector = k->k.p.offset;
	bch_btree_iter_advance(&f->iter);
}

/* Btree problems met by this file's iterator become a read error. */
static int file_check_iter(struct bch_file *f, unsigned long nr_errors_before,
			   bool *partial, struct printbuf *err)
{
	if (f->iter.nr_errors == nr_errors_before)
		return 0;
	pr_buf(err, "inode %" PRIu64 ": extents btree could not be read completely:\n%s",
	       f->inum, printbuf_str(f->iter_err));
	printbuf_reset(f->iter_err);
	if (partial) {
		*partial = true;
		return 0;
	}
	return -EIO;
}

/*
 * Read sectors [a, b) of the file, all inside key @k, to @dst. On error
 * with @partial: zeroes, *partial = true, 0.
 */
static int read_key_sectors(struct bch_file *f, const struct bkey_ref *k,
			    uint64_t a, uint64_t b, void *dst, bool *partial,
			    struct printbuf *err)
{
	uint64_t ks = k->k.p.offset - k->k.size;
	int ret = bch_read_extent(f->c, k, a - ks, (unsigned)(b - a), dst, &f->rc, err);

	if (!ret && bch_extent_has_data(&k->k))
		file_read_from(f, k, f->rc.last_dev, b - a);
	if (ret && partial && ret != -ENOMEM) {
		*partial = true;
		ret = 0;
	}
	if (ret)
		pr_buf(err, "inode %" PRIu64 ": read failed at offset %" PRIu64 "\n",
		       f->inum, a << BCH_SECTOR_SHIFT);
	return ret;
}

/* Called with each key carrying data and the part [a, b) of it to read. */
typedef int (*file_walk_fn)(struct bch_file *f, void *arg, const struct bkey_ref *k,
			    uint64_t a, uint64_t b);

/*
 * The one walk over the file's keys for both kinds of read: @fn gets, in
 * file order, every key over sectors [s_sec, e_sec) that does not read as
 * a hole (bch_extent_reads_as_hole: gaps, reservations, discards and
 * cached extents with no usable copy are skipped). The iterator is left
 * on the last key when it reaches past @e_sec, for the next sequential
 * read. Returns 0, what @fn returned when not 0, or an error.
 */
static int file_walk(struct bch_file *f, uint64_t s_sec, uint64_t e_sec,
		     file_walk_fn fn, void *arg, bool *partial, struct printbuf *err)
{
	unsigned long errs_before;
	struct bkey_ref *k;
	int ret;

	file_seek(f, s_sec);
	errs_before = f->iter.nr_errors;

	while (1) {
		uint64_t ks, a, b;

		ret = file_peek(f, s_sec, &k);
		if (ret) {
			pr_buf(err, "inode %" PRIu64 ": reading extents: %s\n", f->inum,
			       bch_err_str(ret));
			file_iter_drop(f);
			return ret;
		}
		if (!k)
			break;
		ks = k->k.p.offset - k->k.size;
		if (ks >= e_sec)
			break;
		a = max_t(uint64_t, ks, s_sec);
		b = min_t(uint64_t, k->k.p.offset, e_sec);

		if (!bch_extent_reads_as_hole(f->c, k)) {
			ret = fn(f, arg, k, a, b);
			if (ret)
				return ret;
		}
		s_sec = b;
		if (k->k.p.offset > e_sec)
			break;
		file_advance(f, k);
	}
	return file_check_iter(f, errs_before, partial, err);
}

/* bch_file_read: bytes [offset, end) into buf; done = filled up to here */
struct file_read_buf {
	uint64_t	offset, end, done;
	uint8_t		*buf;
	bool		*partial;
	struct printbuf	*err;
};

static int file_read_key(struct bch_file *f, void *arg, const struct bkey_ref *k,
			 uint64_t a, uint64_t b)
{
	struct file_read_buf *r = arg;
	uint64_t first = max_t(uint64_t, a << BCH_SECTOR_SHIFT, r->offset);
	int ret = 0;

	if (first > r->done)		/* a hole before this key */
		memset(r->buf + (r->done - r->offset), 0, (size_t)(first - r->done));

	while (a < b && !ret) {
		uint64_t ab = a << BCH_SECTOR_SHIFT;

		if (ab < r->offset || ab + BCH_SECTOR_SIZE > r->end) {
			/* a first or last sector wanted only in part */
			uint8_t sector[BCH_SECTOR_SIZE];
			uint64_t from = max_t(uint64_t, ab, r->offset);
			uint64_t to = min_t(uint64_t, ab + BCH_SECTOR_SIZE, r->end);

			ret = read_key_sectors(f, k, a, a + 1, sector, r->partial, r->err);
			if (!ret)
				memcpy(r->buf + (from - r->offset), sector + (from - ab),
				       (size_t)(to - from));
			a++;
		} else {
			/* whole sectors straight into the caller's buffer */
			uint64_t n = min_t(uint64_t, b, r->end >> BCH_SECTOR_SHIFT) - a;

			ret = read_key_sectors(f, k, a, a + n, r->buf + (ab - r->offset),
					       r->partial, r->err);
			a += n;
		}
	}
	r->done = min_t(uint64_t, b << BCH_SECTOR_SHIFT, r->end);
	return ret;
}

/* bch_file_read_segs: the reply as pieces, in buf or in the worker's buffers */
struct file_read_segs {
	struct file_read_buf		rd;
	struct bch_read_ahead		*ra;
	struct bch_file_segs		*segs;
};

static void seg_add(struct bch_file_segs *segs, const void *mem, uint64_t len)
{
	struct bch_file_seg *l = segs->nr ? &segs->v[segs->nr - 1] : NULL;

	if (!len)
		return;
	/* one piece for what follows on in the buffer or in memory */
	if (l && !l->mem == !mem &&
	    (!mem || (const uint8_t *)l->mem + l->len == (const uint8_t *)mem)) {
		l->len += len;
		return;
	}
	if (segs->nr == segs->size) {
		segs->size = segs->size ? segs->size * 2 : 16;
		segs->v = xrealloc(segs->v, segs->size * sizeof(*segs->v));
	}
	segs->v[segs->nr++] = (struct bch_file_seg) { .mem = mem, .len = len };
}

static int file_segs_key(struct bch_file *f, void *arg, const struct bkey_ref *k,
			 uint64_t a, uint64_t b)
{
	struct file_read_segs *r = arg;
	uint64_t ks = k->k.p.offset - k->k.size;
	uint64_t done = r->rd.done;
	int ret;

	/* what the worker has, from a on */
	while (r->ra && a < b) {
		uint64_t from = max_t(uint64_t, a << BCH_SECTOR_SHIFT, r->rd.offset), to;
		const void *data = NULL;
		unsigned dev = 0;
		unsigned n = bch_read_extent_locate(f->c, k, a - ks, (unsigned)(b - a), r->ra, &data,
						    &dev);

		if (!n)
			break;
		file_read_from(f, k, dev, n);
		to = min_t(uint64_t, (a + n) << BCH_SECTOR_SHIFT, r->rd.end);
		if (from > done)	/* a hole before */
			memset(r->rd.buf + (done - r->rd.offset), 0, (size_t)(from - done));
		seg_add(r->segs, NULL, from - done);
		seg_add(r->segs, (const uint8_t *)data + (from - (a << BCH_SECTOR_SHIFT)), to - from);
		r->rd.done = done = to;
		a += n;
	}
	if (a >= b)
		return 0;
	ret = file_read_key(f, &r->rd, k, a, b);
	seg_add(r->segs, NULL, r->rd.done - done);
	return ret;
}

static ssize_t file_read(struct bch_file *f, uint64_t offset, void *buf, size_t len,
			 struct bch_read_ahead *ra, struct bch_file_segs *segs,
			 bool *partial, struct printbuf *err)
{
	struct printbuf dummy = PRINTBUF;
	struct file_read_segs r = {
		.rd = { .buf = buf, .partial = partial, .err = err ?: &dummy },
		.ra = ra,
		.segs = segs,
	};
	int ret;

	if (segs)
		segs->nr = 0;
	if (offset >= f->size || !len)
		return 0;
	len = min_t(uint64_t, len, f->size - offset);
	len = min_t(size_t, len, FILE_READ_MAX);
	r.rd.offset = r.rd.done = offset;
	r.rd.end = offset + len;

	ret = file_walk(f, offset >> BCH_SECTOR_SHIFT, DIV_ROUND_UP(r.rd.end, BCH_SECTOR_SIZE),
			segs ? file_segs_key : file_read_key, segs ? (void *)&r : (void *)&r.rd,
			partial, r.rd.err);
	if (!ret && r.rd.end > r.rd.done) {	/* a hole at the end */
		memset(r.rd.buf + (r.rd.done - offset), 0, (size_t)(r.rd.end - r.rd.done));
		if (segs)
			seg_add(segs, NULL, r.rd.end - r.rd.done);
	}
	printbuf_exit(&dummy);
	return ret ? ret : (ssize_t)len;
}

ssize_t bch_file_read(struct bch_file *f, uint64_t offset, void *buf, size_t len,
		      bool *partial, struct printbuf *err)
{
	return file_read(f, offset, buf, len, NULL, NULL, partial, err);
}

ssize_t bch_file_read_segs(struct bch_file *f, uint64_t offset, void *buf, size_t len,
			   struct bch_read_ahead *ra, struct bch_file_segs *segs,
			   struct printbuf *err)
{
	return file_read(f, offset, buf, len, ra, segs, NULL, err);
}

void bch_file_read_ahead(struct bch_file *f, uint64_t offset, uint64_t len,
			 struct bch_read_ahead *ra)
{
	uint64_t s, e, end;
	struct bkey_ref *k;

	if (!ra || offset >= f->size || !len)
		return;
	end = min_t(uint64_t, f->size, offset + min_t(uint64_t, len, f->size));
	s = offset >> BCH_SECTOR_SHIFT;
	e = DIV_ROUND_UP(end, BCH_SECTOR_SIZE);

	/* sequential: on from where the last call stopped; else start over */
	if (!f->ahead_live || f->ahead_sector < s || f->ahead_sector > e) {
		file_ahead_drop(f);
		if (!f->ahead_err)
			f->ahead_err = xcalloc(1, sizeof(*f->ahead_err));
		bch_read_ahead_restart(ra);
		bch_btree_iter_init_range(&f->ahead_iter, f->c, BTREE_ID_EXTENTS,
					  POS_H(f->inum, s), POS_H(f->inum, UINT64_MAX),
					  f->ahead_err);
		f->ahead_live = true;
		f->ahead_sector = s;
	}
	while (f->ahead_sector < e) {
		uint64_t ks, from;

		if (bch_btree_iter_peek(&f->ahead_iter, &k) || !k ||
		    k->k.p.inode != f->inum) {
			f->ahead_sector = e;	/* the end (or trouble: the read reports) */
			break;
		}
		ks = k->k.p.offset - k->k.size;
		if (ks >= e) {
			f->ahead_sector = e;	/* nothing before this key */
			break;
		}
		from = max_t(uint64_t, f->ahead_sector, ks);
		if (k->k.p.offset > from && bch_extent_has_data(&k->k) &&
		    bch_read_extent_ahead(f->c, k, from - ks,
					  min_t(uint64_t, e, k->k.p.offset) - from, ra) == -EAGAIN)
			break;		/* queue full: this key again next time */
		if (k->k.p.offset > e) {
			f->ahead_sector = e;	/* the rest of this key next time */
			break;
		}
		f->ahead_sector = max_t(uint64_t, f->ahead_sector, k->k.p.offset);
		bch_btree_iter_advance(&f->ahead_iter);
	}
	printbuf_reset(f->ahead_err);
}

/* bch_file_read_data: runs of adjacent data gathered in chunk */
struct file_data_runs {
	uint64_t	offset;		/* first byte wanted */
	uint8_t		*chunk;
	uint64_t	max_sectors;	/* of chunk */
	uint64_t	run_start, run_end;	/* sectors in chunk */
	bch_file_data_fn fn;
	void		*arg;
	bool		*partial;
	struct printbuf	*err;
};

static int file_data_flush(struct bch_file *f, struct file_data_runs *r)
{
	uint64_t ob = r->run_start << BCH_SECTOR_SHIFT;
	uint64_t oe = min_t(uint64_t, r->run_end << BCH_SECTOR_SHIFT, f->size);
	uint64_t skip = r->offset > ob ? r->offset - ob : 0;
	bool had = r->run_end > r->run_start;

	r->run_start = r->run_end = 0;
	if (!had || oe <= ob + skip)
		return 0;
	return r->fn(r->arg, ob + skip, r->chunk + skip, (size_t)(oe - ob - skip));
}

static int file_data_key(struct bch_file *f, void *arg, const struct bkey_ref *k,
			 uint64_t a, uint64_t b)
{
	struct file_data_runs *r = arg;
	int ret;

	while (a < b) {
		uint64_t n;

		if (r->run_end != a || r->run_end - r->run_start >= r->max_sectors) {
			ret = file_data_flush(f, r);
			if (ret)
				return ret;
		}
		if (r->run_end == r->run_start)
			r->run_start = r->run_end = a;
		n = min_t(uint64_t, b - a, r->max_sectors - (r->run_end - r->run_start));
		ret = read_key_sectors(f, k, a, a + n,
				       r->chunk + ((r->run_end - r->run_start) << BCH_SECTOR_SHIFT),
				       r->partial, r->err);
		if (ret)
			return ret;
		r->run_end += n;
		a += n;
	}
	return 0;
}

int bch_file_read_data(struct bch_file *f, uint64_t offset, size_t max_chunk,
		       bch_file_data_fn fn, void *arg, bool *partial,
		       struct printbuf *err)
{
	struct printbuf dummy = PRINTBUF;
	struct file_data_runs r = {
		.offset = offset, .fn = fn, .arg = arg,
		.partial = partial, .err = err ?: &dummy,
	};
	int ret;

	if (offset >= f->size)
		return 0;
	max_chunk = max_t(size_t, max_chunk, BCH_SECTOR_SIZE);
	max_chunk = min_t(size_t, max_chunk, FILE_READ_MAX);
	r.max_sectors = max_chunk >> BCH_SECTOR_SHIFT;
	r.chunk = xmalloc(r.max_sectors << BCH_SECTOR_SHIFT);

	ret = file_walk(f, offset >> BCH_SECTOR_SHIFT, DIV_ROUND_UP(f->size, BCH_SECTOR_SIZE),
			file_data_key, &r, partial, r.err);
	if (!ret)
		ret = file_data_flush(f, &r);
	free(r.chunk);
	printbuf_exit(&dummy);
	return ret;
}

ssize_t bch_read(struct bch_fs *c, uint64_t inum, uint64_t offset, void *buf,
		 size_t len, struct printbuf *err)
{
	struct bch_inode_unpacked inode;
	struct bch_file f;
	ssize_t ret;

	ret = bch_inode_get(c, inum, &inode, err);
	if (ret)
		return ret;
	bch_file_open(c, &inode, &f);
	ret = bch_file_read(&f, offset, buf, len, NULL, err);
	bch_file_close(&f);
	return ret;
}

ssize_t bch_readlink(struct bch_fs *c, const struct bch_inode_unpacked *inode,
		     char *buf, size_t size, struct printbuf *err)
{
	struct bch_file f;
	ssize_t ret;

	if (((inode->bi_mode >> 12) & 15) != BCH_DT_LNK)
		return -EINVAL;
	if (inode->bi_size >= PATH_MAX || inode->bi_size >= size)
		return -ENAMETOOLONG;
	bch_file_open(c, inode, &f);
	ret = bch_file_read(&f, 0, buf, (size_t)inode->bi_size, NULL, err);
	bch_file_close(&f);
	if (ret < 0)
		return ret;
	buf[ret] = 0;
	return ret;
}

/* ---- xattrs ---- */

int bch_xattr_full_name(unsigned x_type, const void *name, size_t name_len,
			char *buf, size_t size)
{
	const char *prefix;
	size_t plen;

	switch (x_type) {
	case BCH_XATTR_INDEX_POSIX_ACL_ACCESS:
		prefix = "system.posix_acl_access";
		name_len = 0;
		break;
	case BCH_XATTR_INDEX_POSIX_ACL_DEFAULT:
		prefix = "system.posix_acl_default";
		name_len = 0;
		break;
	default:
		prefix = bch_xattr_prefix(x_type);
		if (!prefix)
			return -EINVAL;
	}
	plen = strlen(prefix);
	if (plen + name_len + 1 > size)
		return -ERANGE;
	memcpy(buf, prefix, plen);
	if (name_len)
		memcpy(buf + plen, name, name_len);
	buf[plen + name_len] = 0;
	return (int)(plen + name_len);
}

int bch_xattr_parse_name(const char *full, unsigned *x_type, const char **name,
			 size_t *name_len)
{
	static const struct {
		const char	*prefix;
		unsigned	type;
		bool		exact;
	} t[] = {
		{ "user.",			BCH_XATTR_INDEX_USER,			false },
		{ "trusted.",			BCH_XATTR_INDEX_TRUSTED,		false },
		{ "security.",			BCH_XATTR_INDEX_SECURITY,		false },
		{ "system.posix_acl_access",	BCH_XATTR_INDEX_POSIX_ACL_ACCESS,	true },
		{ "system.posix_acl_default",	BCH_XATTR_INDEX_POSIX_ACL_DEFAULT,	true },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		size_t l = strlen(t[i].prefix);

		if (strncmp(full, t[i].prefix, l))
			continue;
		if (t[i].exact && full[l])
			continue;
		*x_type = t[i].type;
		*name = full + l;
		*name_len = strlen(full + l);
		return 0;
	}
	return -EOPNOTSUPP;
}

int bch_xattr_list(struct bch_fs *c, uint64_t inum, bch_xattr_fn fn, void *arg,
		   unsigned long *nr_bad, struct printbuf *err)
{
	struct printbuf ierr = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	bch_btree_iter_init_range(&iter, c, BTREE_ID_XATTRS, POS_H(inum, 0), POS_H(inum, UINT64_MAX), &ierr);
	while (!(ret = bch_btree_iter_next(&iter, &k)) && k && k->k.p.inode == inum) {
		struct bch_xattr_h x;

		if (k->k.type != BCH_XATTR)
			continue;
		if (bch_xattr_decode(k, &x) || x.x_type >= 5 ||
		    memchr(x.name, 0, x.name_len)) {
			pr_buf(err, "inode %" PRIu64 ": skipping invalid xattr at offset %" PRIu64 "\n",
			       inum, k->k.p.offset);
			if (nr_bad)
				(*nr_bad)++;
			continue;
		}
		ret = fn(arg, x.x_type, (const char *)x.name, x.name_len, x.val, x.val_len);
		if (ret)
			break;
	}
	return walk_end(&iter, &ierr, err, nr_bad, ret);
}

struct xattr_want {
	unsigned	type;
	const char	*name;
	size_t		name_len;
	void		*buf;
	size_t		size;
	ssize_t		ret;
};

static ssize_t xattr_copy_out(unsigned type, const void *val, size_t val_len,
			      void *buf, size_t size)
{
	if (type == BCH_XATTR_INDEX_POSIX_ACL_ACCESS ||
	    type == BCH_XATTR_INDEX_POSIX_ACL_DEFAULT)
		return bch_acl_to_xattr(val, val_len, size ? buf : NULL, size);
	if (!size)
		return (ssize_t)val_len;
	if (val_len > size)
		return -ERANGE;
	memcpy(buf, val, val_len);
	return (ssize_t)val_len;
}

static int xattr_want_fn(void *arg, unsigned x_type, const char *name,
			 size_t name_len, const void *val, size_t val_len)
{
	struct xattr_want *w = arg;

	if (x_type != w->type || name_len != w->name_len || memcmp(name, w->name, name_len))
		return 0;
	w->ret = xattr_copy_out(x_type, val, val_len, w->buf, w->size);
	return 1;
}

static bool xattr_match(void *arg, const struct bkey_ref *k)
{
	struct xattr_want *w = arg;
	struct bch_xattr_h x;

	if (k->k.type != BCH_XATTR || bch_xattr_decode(k, &x))
		return false;
	return xattr_want_fn(w, x.x_type, (const char *)x.name, x.name_len, x.val, x.val_len);
}

ssize_t bch_xattr_get(struct bch_fs *c, const struct bch_inode_unpacked *inode,
		      const char *full_name, void *buf, size_t size,
		      struct printbuf *err)
{
	struct printbuf ierr = PRINTBUF;
	struct xattr_want w = { .buf = buf, .size = size, .ret = -ENODATA };
	struct bch_hash_info h;
	int ret;

	if (!strncmp(full_name, BCH_INODE_OPT_XATTR_PREFIX, strlen(BCH_INODE_OPT_XATTR_PREFIX)))
		return bch_inode_opt_xattr_get(c, inode, full_name, buf, size);
	ret = bch_xattr_parse_name(full_name, &w.type, &w.name, &w.name_len);
	if (ret)
		return ret;
	if (w.name_len > 255)
		return -ENODATA;

	if (!hash_info(inode, &h)) {
		ret = hash_probe(c, BTREE_ID_XATTRS, inode->bi_inum,
				 bch_xattr_hash(&h, w.type, w.name, w.name_len),
				 xattr_match, &w, &ierr);
		if (ret != -ENOENT) {
			if (ret)
				w.ret = ret;
			goto out;
		}
	}
	/* not where the hash says: scan (damaged tables) */
	ret = bch_xattr_list(c, inode->bi_inum, xattr_want_fn, &w, NULL, &ierr);
	if (ret < 0)
		w.ret = ret;
out:
	if (w.ret < 0 && w.ret != -ENODATA && w.ret != -ERANGE && ierr.pos)
		pr_str(err, printbuf_str(&ierr));
	printbuf_exit(&ierr);
	return w.ret;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

/* POSIX ACL tags (doc/format.md §5.7) */
#define ACL_TAG_USER_OBJ	0x01
#define ACL_TAG_USER		0x02
#define ACL_TAG_GROUP_OBJ	0x04
#define ACL_TAG_GROUP		0x08
#define ACL_TAG_MASK		0x10
#define ACL_TAG_OTHER		0x20

ssize_t bch_acl_to_xattr(const void *val, size_t len, void *out, size_t out_size)
{
	const uint8_t *v = val;
	uint8_t *o = out;
	size_t m, count, pos = 4, i, need;

	if (len < 4 || get_le32_unaligned(v) != 1)
		return -EINVAL;
	m = len - 4;
	if (m < 16) {
		if (m % 4)
			return -EINVAL;
		count = m / 4;
	} else {
		if ((m - 16) % 8)
			return -EINVAL;
		count = 4 + (m - 16) / 8;
	}
	need = 4 + count * 8;
	if (out && need > out_size)
		return -ERANGE;
	if (out)
		put32(o, 2);

	for (i = 0; i < count; i++) {
		unsigned tag, perm;
		uint32_t id = UINT32_MAX;

		if (len - pos < 4)
			return -EINVAL;
		tag = get_le16_unaligned(v + pos);
		perm = get_le16_unaligned(v + pos + 2);
		switch (tag) {
		case ACL_TAG_USER_OBJ:
		case ACL_TAG_GROUP_OBJ:
		case ACL_TAG_MASK:
		case ACL_TAG_OTHER:
			pos += 4;
			break;
		case ACL_TAG_USER:
		case ACL_TAG_GROUP:
			if (len - pos < 8)
				return -EINVAL;
			id = get_le32_unaligned(v + pos + 4);
			pos += 8;
			break;
		default:
			return -EINVAL;
		}
		if (out) {
			put16(o + 4 + i * 8, (uint16_t)tag);
			put16(o + 4 + i * 8 + 2, (uint16_t)perm);
			put32(o + 4 + i * 8 + 4, id);
		}
	}
	if (pos != len)
		return -EINVAL;
	return (ssize_t)need;
}

ssize_t bch_acl_from_xattr(const uint8_t *v, size_t len, unsigned type,
			   uint8_t *out, size_t out_size)
{
	size_t nr, pos = 4, nr_short = 0;

	if (len < 4 || get_le32_unaligned(v) != 2 || (len - 4) % 8)
		return -EINVAL;
	nr = (len - 4) / 8;
	if (!nr || out_size < 4 + nr * 8)
		return nr ? -E2BIG : 0;
	out[0] = 1; out[1] = out[2] = out[3] = 0;
	for (size_t i = 0; i < nr; i++) {
		const uint8_t *e = v + 4 + i * 8;
		unsigned tag = get_le16_unaligned(e);

		switch (tag) {
		case ACL_TAG_USER_OBJ:
		case ACL_TAG_GROUP_OBJ:
		case ACL_TAG_MASK:
		case ACL_TAG_OTHER:
			memcpy(out + pos, e, 4);
			pos += 4;
			nr_short++;
			break;
		case ACL_TAG_USER:
		case ACL_TAG_GROUP:
			memcpy(out + pos, e, 8);
			pos += 8;
			break;
		default:
			return -EINVAL;
		}
	}
	/* the reader counts entries from the size: four short ones with named ones */
	if (pos - 4 >= 16 && nr_short != 4)
		return -EINVAL;
	/* owner, group and other only: the mode says it all (doc/format.md §5.7) */
	if (type == BCH_XATTR_INDEX_POSIX_ACL_ACCESS && nr == 3)
		return 0;
	return (ssize_t)pos;
}
