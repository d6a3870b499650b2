// SPDX-License-Identifier: GPL-2.0
/*
 * migrate and migrate-superblock (doc/tools.md §6). See migrate.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "alloc/alloc.h"
#include "btree/btree.h"
#include "codec/crypto.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "bkey/extents.h"
#include "tools/fiemap.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/init.h"
#include "tools/migrate.h"
#include "fs/mkfs.h"
#include "dev/mounted.h"
#include "btree/node.h"
#include "tools/source.h"
#include "dev/super.h"
#include "util/util.h"

#define SB_MAX_SIZE_BITS	7		/* 64 KiB per copy, as 2018 */
#define SB_AREA_SECTORS		256		/* two copies */
#define SB_MIN_START		(256 * 1024)	/* bytes: never in the first 256 KiB */
#define COPY_BELOW		2048		/* sectors: data in the first MiB is copied */

/* ---- the mount ------------------------------------------------------------ */

/* In place: undo the octal escapes of /proc/self/mountinfo (\040 ...). */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else
			*o++ = *s;
	}
	*o = 0;
}

static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (!strcmp(root, "/"))
		return path[0] == '/' && path[1];
	return !strncmp(path, root, n) && path[n] == '/';
}

/*
 * The mount whose mount point is @m->root (the last one: what is visible),
 * its type and source; no mount below it.
 */
static int find_mount(struct bch_migrate *m, char **source, struct printbuf *err)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *nested = NULL;
	size_t n = 0;
	bool found = false;
	unsigned maj = 0, min = 0;

	if (!f) {
		pr_buf(err, "/proc/self/mountinfo: %s\n", strerror(errno));
		return -errno;
	}
	while (getline(&line, &n, f) > 0) {
		char *fields[16], *save = NULL, *tok, *sep;
		unsigned nr = 0, ma, mi;

		line[strcspn(line, "\n")] = 0;
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = 0;
		for (tok = strtok_r(line, " ", &save); tok && nr < 6; tok = strtok_r(NULL, " ", &save))
			fields[nr++] = tok;
		for (tok = strtok_r(sep + 3, " ", &save); tok && nr < 9; tok = strtok_r(NULL, " ", &save))
			fields[nr++] = tok;
		if (nr < 8 || sscanf(fields[2], "%u:%u", &ma, &mi) != 2)
			continue;
		unescape(fields[4]);
		unescape(fields[7]);
		if (!strcmp(fields[4], m->root)) {
			found = true;
			maj = ma;
			min = mi;
			free(m->fs_type);
			free(*source);
			m->fs_type = xstrdup(fields[6]);
			*source = xstrdup(fields[7]);
		} else if (under(fields[4], m->root) && !nested) {
			nested = xstrdup(fields[4]);
		}
	}
	free(line);
	fclose(f);
	if (!found) {
		pr_buf(err, "%s is not the root of a mounted filesystem\n", m->root);
		free(nested);
		return -EINVAL;
	}
	if (nested) {
		pr_buf(err, "%s is mounted inside %s: unmount it first (every file must be "
		       "on the filesystem being migrated)\n", nested, m->root);
		free(nested);
		return -EINVAL;
	}
	if (makedev(maj, min) != m->st_dev) {
		pr_buf(err, "%s: the mount (device %u:%u) is not what the path shows (%u:%u)\n",
		       m->root, maj, min, major(m->st_dev), minor(m->st_dev));
		return -EINVAL;
	}
	return 0;
}

/* The block device of the mount: /sys/dev/block/MAJ:MIN, else the mount source. */
static int find_dev(struct bch_migrate *m, const char *source, struct printbuf *err)
{
	char link[64], target[PATH_MAX], path[PATH_MAX + 8];
	struct stat st;
	ssize_t r;

	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(m->st_dev), minor(m->st_dev));
	r = readlink(link, target, sizeof(target) - 1);
	if (r > 0) {
		const char *base;

		target[r] = 0;
		base = strrchr(target, '/');
		snprintf(path, sizeof(path), "/dev/%s", base ? base + 1 : target);
		if (!stat(path, &st) && S_ISBLK(st.st_mode) && st.st_rdev == m->st_dev) {
			m->dev_path = xstrdup(path);
			return 0;
		}
	}
	if (source && !stat(source, &st) && S_ISBLK(st.st_mode) && st.st_rdev == m->st_dev) {
		m->dev_path = xstrdup(source);
		return 0;
	}
	pr_buf(err, "%s: no block device %u:%u found (neither %s nor %s): only a filesystem on "
	       "a block device can be migrated\n", m->root, major(m->st_dev), minor(m->st_dev),
	       link, source ?: "the mount source");
	return -ENODEV;
}

/* ---- the old filesystem ---------------------------------------------------- */

static uint32_t le32_at(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/*
 * The new layout goes to sector 7 (readers find a superblock that is not
 * at sector 8 through it). Sector 7 must be space the old filesystem never
 * uses: the rest of block 0 after the superblock of ext2/3/4 with blocks of
 * 4 KiB or more; between the AG headers and block 1 of xfs with 512-byte
 * sectors and blocks of 4 KiB or more. It must hold zeros (or the layout
 * of an earlier attempt).
 */
static int check_sector7(struct bch_migrate *m, struct bch_devio *io, struct printbuf *err)
{
	uint8_t b[4096];
	static const uint8_t layout_magic[16] = BCH_SB_MAGIC_BYTES;
	bool ok = false, zero = true;
	int ret = dev_pread(io, b, sizeof(b), 0);

	if (ret) {
		pr_buf(err, "%s: reading the first 4 KiB: %s\n", m->dev_path, bch_err_str(ret));
		return ret;
	}
	if (b[1080] == 0x53 && b[1081] == 0xef) {
		uint32_t lbs = le32_at(b + 1024 + 24);
		uint64_t bs = lbs < 7 ? 1024ULL << lbs : 0;

		ok = bs >= 4096;
		if (!ok)
			pr_buf(err, "%s: ext2/3/4 with %" PRIu64 "-byte blocks uses sector 7, where the "
			       "new superblock layout must go: only blocks of 4 KiB or more can be "
			       "migrated\n", m->dev_path, bs);
	} else if (!memcmp(b, "XFSB", 4)) {
		uint32_t bs = be32_at(b + 4);
		unsigned ss = (unsigned)b[102] << 8 | b[103];

		ok = ss == 512 && bs >= 4096;
		if (!ok)
			pr_buf(err, "%s: xfs with %u-byte sectors and %u-byte blocks uses sector 7, "
			       "where the new superblock layout must go: only 512-byte sectors and "
			       "blocks of 4 KiB or more can be migrated\n", m->dev_path, ss, bs);
	} else {
		pr_buf(err, "%s: neither ext2/3/4 nor xfs (%s): migrate cannot tell whether sector 7, "
		       "where the new superblock layout must go, is free\n", m->dev_path, m->fs_type);
	}
	if (!ok)
		return -EINVAL;
	for (unsigned i = 7 * 512; i < 8 * 512; i++)
		zero &= !b[i];
	if (!zero && memcmp(b + 7 * 512, layout_magic, 16)) {
		pr_buf(err, "%s: sector 7 is not empty: not overwriting it\n", m->dev_path);
		return -EINVAL;
	}
	return 0;
}

/* ---- the reserved file ----------------------------------------------------- */

static int range_cmp(const void *a, const void *b)
{
	const struct bch_source_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int map_reserved(struct bch_migrate *m, int fd, struct printbuf *err)
{
	const uint32_t bad = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
		FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_ENCRYPTED | FIEMAP_EXTENT_NOT_ALIGNED |
		FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_SHARED;
	uint64_t bs = (uint64_t)m->block_sectors * 512, mapped = 0;
	struct fiemap_ext *e;
	size_t nr, n = 0;
	int ret = bch_fiemap(fd, true, &e, &nr);

	if (ret) {
		pr_buf(err, "%s: cannot map it (FIEMAP): %s\n", m->reserved_path,
		       ret == -EOPNOTSUPP ? "the filesystem does not support it" : strerror(-ret));
		return ret;
	}
	m->reserved = xcalloc(nr + 1, sizeof(*m->reserved));
	for (size_t i = 0; i < nr; i++) {
		if (e[i].flags & bad) {
			pr_buf(err, "%s: extent %zu (flags %#x) has no plain place on the device: "
			       "metadata file not fully mapped\n", m->reserved_path, i, e[i].flags);
			ret = -EINVAL;
			break;
		}
		if (e[i].physical % bs || e[i].length % bs) {
			pr_buf(err, "%s: extent %zu (device byte %" PRIu64 ", %" PRIu64 " bytes) is not "
			       "aligned to %" PRIu64 "-byte blocks: unaligned extents in metadata file\n",
			       m->reserved_path, i, e[i].physical, e[i].length, bs);
			ret = -EINVAL;
			break;
		}
		if (e[i].physical + e[i].length > m->dev_sectors * 512) {
			pr_buf(err, "%s: extent %zu lies past the end of %s\n", m->reserved_path, i,
			       m->dev_path);
			ret = -EINVAL;
			break;
		}
		m->reserved[n++] = (struct bch_source_range) { e[i].physical / 512, e[i].length / 512 };
		mapped += e[i].length;
	}
	free(e);
	if (!ret && mapped < m->reserve_bytes) {
		pr_buf(err, "%s: only %" PRIu64 " of its %" PRIu64 " bytes are mapped: metadata file "
		       "not fully mapped\n", m->reserved_path, mapped, m->reserve_bytes);
		ret = -EINVAL;
	}
	if (ret)
		return ret;
	qsort(m->reserved, n, sizeof(*m->reserved), range_cmp);
	/* one range where extents are contiguous on the device */
	m->nr_reserved = n ? 1 : 0;
	for (size_t i = 1; i < n; i++) {
		struct bch_source_range *last = &m->reserved[m->nr_reserved - 1];

		if (last->start + last->len == m->reserved[i].start)
			last->len += m->reserved[i].len;
		else
			m->reserved[m->nr_reserved++] = m->reserved[i];
	}
	return 0;
}

/*
 * Superblock placement (doc/tools.md §6 step 7): in the first extent with a
 * bucket-aligned 128 KiB at or after 256 KiB.
 */
static int place_sb(struct bch_migrate *m, struct printbuf *err)
{
	uint64_t bucket = (uint64_t)m->bucket_sectors * 512;

	for (size_t i = 0; i < m->nr_reserved; i++) {
		uint64_t start = m->reserved[i].start * 512, end = start + m->reserved[i].len * 512;
		uint64_t s = round_up(start > SB_MIN_START ? start : SB_MIN_START, bucket);
		uint64_t e = end / bucket * bucket;

		if (s + SB_AREA_SECTORS * 512 <= e) {
			m->sb_offset = s / 512;
			return 0;
		}
	}
	pr_buf(err, "%s: no extent holds a whole bucket of %u KiB for the superblock: "
	       "couldn't find a valid location for superblock\n", m->reserved_path,
	       m->bucket_sectors / 2);
	return -ENOSPC;
}

static int create_reserved(struct bch_migrate *m, struct printbuf *err)
{
	struct statvfs vfs;
	struct stat st;
	uint64_t have = 0, avail;
	int fd, ret;

	m->reserved_path = xmalloc(strlen(m->root) + sizeof(BCH_MIGRATE_RESERVED_NAME) + 2);
	sprintf(m->reserved_path, "%s%s%s", m->root, strcmp(m->root, "/") ? "/" : "",
		BCH_MIGRATE_RESERVED_NAME);
	if (!lstat(m->reserved_path, &st)) {
		if (!m->force) {
			pr_buf(err, "Error creating %s for bcachefs metadata: it exists (-F uses it)\n",
			       m->reserved_path);
			return -EEXIST;
		}
		if (!S_ISREG(st.st_mode)) {
			pr_buf(err, "%s is not a regular file\n", m->reserved_path);
			return -EINVAL;
		}
		have = (uint64_t)st.st_blocks * 512;
	}
	if (statvfs(m->root, &vfs)) {
		pr_buf(err, "%s: statvfs: %s\n", m->root, strerror(errno));
		return -errno;
	}
	avail = (uint64_t)vfs.f_bavail * vfs.f_frsize + have;
	if (avail < m->reserve_bytes) {
		pr_buf(err, "%s: %" PRIu64 " MiB free, the new filesystem's metadata needs %" PRIu64
		       " MiB (a fifth of the device): too little free space for the metadata file\n",
		       m->root, avail >> 20, m->reserve_bytes >> 20);
		return -ENOSPC;
	}
	if (m->dry_run)
		return 0;

	fd = open(m->reserved_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (m->force ? 0 : O_EXCL),
		  0600);
	if (fd < 0) {
		pr_buf(err, "Error creating %s for bcachefs metadata: %s\n", m->reserved_path,
		       strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) || st.st_dev != m->st_dev) {
		pr_buf(err, "%s: bcachefs file has incorrect device\n", m->reserved_path);
		ret = -EINVAL;
		goto out;
	}
	m->reserved_ino = st.st_ino;
	if (fallocate(fd, 0, 0, (off_t)m->reserve_bytes)) {
		ret = -errno;
		pr_buf(err, "%s: Error reserving space for bcachefs metadata: %s\n",
		       m->reserved_path, strerror(errno));
		goto out;
	}
	if (fsync(fd)) {
		ret = -errno;
		pr_buf(err, "%s: fsync: %s\n", m->reserved_path, strerror(errno));
		goto out;
	}
	ret = map_reserved(m, fd, err);
	if (!ret)
		ret = place_sb(m, err);
out:
	close(fd);
	return ret;
}

/* ---- dry run ----------------------------------------------------------------- */

static struct bch_migrate *dry_m;
static struct printbuf *dry_err;
static int dry_ret;
static struct { dev_t dev; ino_t ino; } *dry_seen;
static size_t dry_nr_seen, dry_size_seen;

static bool dry_hardlink(const struct stat *st)
{
	for (size_t i = 0; i < dry_nr_seen; i++)
		if (dry_seen[i].dev == st->st_dev && dry_seen[i].ino == st->st_ino)
			return true;
	if (dry_nr_seen == dry_size_seen) {
		dry_size_seen = dry_size_seen ? 2 * dry_size_seen : 64;
		dry_seen = xrealloc(dry_seen, dry_size_seen * sizeof(*dry_seen));
	}
	dry_seen[dry_nr_seen].dev = st->st_dev;
	dry_seen[dry_nr_seen++].ino = st->st_ino;
	return false;
}

static void dry_file(const char *path, const struct stat *st)
{
	struct bch_migrate_counts *c = &dry_m->counts;
	uint64_t bs = (uint64_t)dry_m->block_sectors * 512, limit = round_up((uint64_t)st->st_size, 4096);
	struct fiemap_ext *e;
	size_t nr;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), ret;

	if (fd < 0) {
		pr_buf(dry_err, "%s: %s\n", path, strerror(errno));
		dry_ret = -errno;
		return;
	}
	ret = bch_fiemap(fd, false, &e, &nr);
	close(fd);
	if (ret) {
		pr_buf(dry_err, "%s: cannot map its data (FIEMAP): %s\n", path,
		       ret == -EOPNOTSUPP ? "the filesystem does not support it" : strerror(-ret));
		dry_ret = ret;
		return;
	}
	for (size_t i = 0; i < nr; i++) {
		uint64_t len = e[i].logical >= limit ? 0 :
			min_t(uint64_t, e[i].length, limit - e[i].logical);

		if (!len)
			continue;
		if (e[i].flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)) {
			/* migrate writes it out first, then asks again */
			c->nr_unplaced++;
			c->unplaced_bytes += len;
			continue;
		}
		switch (bch_fiemap_use(&e[i], (uint64_t)max_t(unsigned, COPY_BELOW,
						dry_m->first_bucket * dry_m->bucket_sectors) * 512)) {
		case FIEMAP_USE_HOLE:
			c->hole_bytes += len;
			break;
		case FIEMAP_USE_LINK:
			if (e[i].logical % bs || e[i].physical % bs || len % bs) {
				c->nr_unaligned++;
				pr_buf(dry_err, "%s: unaligned extent (file byte %" PRIu64 ", device byte %"
				       PRIu64 "): migrate would stop here\n", path, e[i].logical,
				       e[i].physical);
			}
			c->nr_linked_extents++;
			c->linked_bytes += len;
			break;
		case FIEMAP_USE_COPY:
			c->nr_copied_extents++;
			c->copied_bytes += round_up(len, bs);
			break;
		}
	}
	free(e);
}

static int dry_visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct bch_migrate_counts *c = &dry_m->counts;

	if (type == FTW_NS || type == FTW_DNR) {
		pr_buf(dry_err, "%s: cannot read it\n", path);
		dry_ret = -EACCES;
		return 0;
	}
	if (st->st_dev != dry_m->st_dev) {
		pr_buf(dry_err, "%s is on another filesystem (a mount inside the one being "
		       "migrated): migrate would stop here\n", path);
		dry_ret = -EXDEV;
		return 0;
	}
	if (!ftw->level)
		return 0;
	if (ftw->level == 1 && !strcmp(path + ftw->base, BCH_MIGRATE_RESERVED_NAME) && dry_m->force)
		return 0;	/* would be reused */
	if (!S_ISDIR(st->st_mode) && st->st_nlink > 1 && dry_hardlink(st)) {
		c->nr_hardlinks++;
		return 0;
	}
	if (S_ISDIR(st->st_mode))
		c->nr_dirs++;
	else if (S_ISLNK(st->st_mode)) {
		c->nr_symlinks++;
		c->nr_copied_extents++;
		c->copied_bytes += round_up((uint64_t)st->st_size, (uint64_t)dry_m->block_sectors * 512);
	} else if (S_ISREG(st->st_mode)) {
		c->nr_files++;
		dry_file(path, st);
	} else
		c->nr_special++;
	return 0;
}

static int dry_run(struct bch_migrate *m, struct printbuf *err)
{
	dry_m = m;
	dry_err = err;
	dry_ret = 0;
	if (nftw(m->root, dry_visit, 64, FTW_PHYS) && !dry_ret)
		dry_ret = -errno;
	free(dry_seen);
	dry_seen = NULL;
	dry_nr_seen = dry_size_seen = 0;
	return dry_ret;
}

/* ---- prepare ---------------------------------------------------------------- */

static int geometry(struct bch_migrate *m, struct mkfs_opts *opts, struct mkfs_dev *d,
		    struct printbuf *err)
{
	struct bch_devio *io;
	unsigned pbs = 0;
	int ret = dev_open(m->dev_path, 0, &io);

	if (ret) {
		pr_buf(err, "%s: cannot open: %s\n", m->dev_path, bch_err_str(ret));
		return ret;
	}
	memset(d, 0, sizeof(*d));
	mkfs_dev_opts_init(&d->opts);
	d->path = m->dev_path;
	d->dev_size = io->size >> 9;
	d->dev_min_block_size = max_t(unsigned, 1, io->block_size >> 9);
	if (ioctl(io->fd, BLKPBSZGET, &pbs) || pbs < 512)
		pbs = io->block_size;
	d->dev_block_size = max_t(unsigned, 1, pbs >> 9);

	ret = check_sector7(m, io, err);
	dev_close(io);
	if (ret)
		return ret;

	mkfs_opts_init(opts);
	/* the layout written by migrate has copies of 64 KiB */
	ret = mkfs_geometry(opts, d, 1, err);
	if (ret) {
		pr_char(err, '\n');
		return ret;
	}
	m->dev_sectors = d->dev_size;
	m->block_sectors = opts->block_size;
	m->bucket_sectors = d->bucket_size;
	m->nbuckets = d->nbuckets;
	/* buckets the superblock at sector 8 will take (migrate-superblock) */
	m->first_bucket = (unsigned)DIV_ROUND_UP(BCH_SB_SECTOR + (1U << SB_MAX_SIZE_BITS),
						 m->bucket_sectors);
	m->reserve_bytes = m->dev_sectors * 512 / 5;
	return 0;
}

int bch_migrate_prepare(struct bch_migrate *m, struct printbuf *err)
{
	struct mkfs_opts opts;
	struct mkfs_dev d;
	struct statvfs vfs;
	struct stat st;
	char real[PATH_MAX], *source = NULL;
	int ret;

	if (!m->fs_root || !realpath(m->fs_root, real)) {
		pr_buf(err, "%s: %s\n", m->fs_root ?: "(none)", strerror(errno));
		return -errno;
	}
	m->root = xstrdup(real);
	if (stat(m->root, &st)) {
		pr_buf(err, "%s: %s\n", m->root, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		pr_buf(err, "%s is not a directory\n", m->root);
		return -ENOTDIR;
	}
	m->st_dev = st.st_dev;
	ret = find_mount(m, &source, err);
	if (!ret && strcmp(m->fs_type, "ext2") && strcmp(m->fs_type, "ext3") &&
	    strcmp(m->fs_type, "ext4") && strcmp(m->fs_type, "xfs")) {
		pr_buf(err, "%s is %s: only ext2/3/4 and xfs can be migrated (FIEMAP, and a sector 7 "
		       "they never use)\n", m->root, m->fs_type);
		ret = -EOPNOTSUPP;
	}
	if (!ret)
		ret = find_dev(m, source, err);
	free(source);
	if (ret)
		return ret;
	ret = geometry(m, &opts, &d, err);
	if (ret)
		return ret;
	if (statvfs(m->root, &vfs)) {
		pr_buf(err, "%s: statvfs: %s\n", m->root, strerror(errno));
		return -errno;
	}
	if (vfs.f_bsize % ((unsigned long)m->block_sectors * 512)) {
		pr_buf(err, "%s: its %lu-byte blocks are smaller than the device's %u-byte blocks: "
		       "its extents cannot be linked\n", m->root, vfs.f_bsize, m->block_sectors * 512);
		return -EINVAL;
	}
	{
		char *p = xmalloc(strlen(m->root) + sizeof(BCH_MIGRATE_OLD_FS_NAME) + 2);
		struct stat ost;

		sprintf(p, "%s/%s", m->root, BCH_MIGRATE_OLD_FS_NAME);
		ret = lstat(p, &ost) ? 0 : -EEXIST;
		if (ret)
			pr_buf(err, "%s exists: the new filesystem needs that name for the old "
			       "filesystem's space; rename it first\n", p);
		free(p);
		if (ret)
			return ret;
	}
	ret = create_reserved(m, err);
	if (!ret && m->dry_run) {
		/* the data would be in place after a sync: count what FIEMAP says now */
		ret = dry_run(m, err);
	}
	return ret;
}

/* ---- run -------------------------------------------------------------------- */

/* init.h prepare hook: only buckets wholly inside the reserved file are used. */
static int keep_old_buckets(struct bch_fs *c, struct bch_allocator *a, void *priv,
			    struct printbuf *err)
{
	struct bch_source_opts *so = priv;
	struct bch_source_link *l = so->link;
	struct bch_dev_alloc *d = a->devs[l->dev];
	size_t r = 0;

	if (!d) {
		pr_buf(err, "member %u has no allocation state\n", l->dev);
		return -EINVAL;
	}
	for (uint64_t b = d->first_bucket; b < d->nbuckets; b++) {
		uint64_t s = b * d->bucket_size, e = s + d->bucket_size;
		struct bucket_h *g;

		while (r < l->nr_reserved && l->reserved[r].start + l->reserved[r].len <= s)
			r++;
		if (r < l->nr_reserved && l->reserved[r].start <= s &&
		    l->reserved[r].start + l->reserved[r].len >= e)
			continue;
		if (bch_alloc_bucket_free(a, l->dev, b))
			d->nr_free--;
		g = bch_bucket_mut(d, b);
		g->owned = true;
	}
	return 0;
}

/* The superblock of the new filesystem: its layout in the reserved file. */
static int build_sb(struct bch_migrate *m, struct bch_sb **ret, struct printbuf *err)
{
	struct mkfs_opts opts;
	struct mkfs_dev d;
	struct bch_sb *sb = NULL;
	struct bch_member *mb;
	int r;

	r = geometry(m, &opts, &d, err);
	if (r)
		return r;
	opts.encrypted = m->encrypted;
	opts.passphrase = m->passphrase;
	opts.passphrase_len = m->passphrase_len;
	r = mkfs_build_sb(&opts, &d, 1, &sb, err);
	if (!r)
		r = mkfs_layout(opts.block_size, m->sb_offset, m->sb_offset + SB_AREA_SECTORS,
				&sb->layout, err);
	if (!r && (sb->layout.sb_max_size_bits != SB_MAX_SIZE_BITS ||
		   le64_to_cpu(sb->layout.sb_offset[0]) != m->sb_offset)) {
		pr_buf(err, "superblock layout at sector %" PRIu64 " came out wrong", m->sb_offset);
		r = -EINVAL;
	}
	if (!r) {
		mb = (struct bch_member *)bch_sb_member(sb, 0);
		mb->first_bucket = cpu_to_le16((uint16_t)m->first_bucket);
		sb->offset = cpu_to_le64(m->sb_offset);
		r = mkfs_check(sb, 1, err);
	}
	if (r) {
		pr_char(err, '\n');
		free(sb);
		return r;
	}
	memcpy(m->user_uuid, sb->user_uuid.b, 16);
	*ret = sb;
	return 0;
}

/* Like unlock: the passphrase's key in the keyring, for mount and the tools. */
static void add_key(struct bch_migrate *m, const struct bch_sb *sb)
{
	const struct bch_sb_field_crypt *cf = bch_sb_crypt(sb);
	struct bch_key wk, master;
	char uuid[37];
	int ret;

	if (!m->passphrase || !cf)
		return;
	bch_uuid_to_str(sb->user_uuid.b, uuid);
	ret = bch_crypt_unlock(cf, sb->uuid.b, m->passphrase, m->passphrase_len, &wk, &master);
	bch_key_wipe(&master);
	if (!ret)
		ret = bch_keyring_add(uuid, &wk);
	bch_key_wipe(&wk);
	if (ret && m->warnings)
		pr_buf(m->warnings, "the key was not added to the keyring (%s): run bcachefs unlock "
		       "%s before mounting\n", bch_err_str(ret), m->dev_path);
}

int bch_migrate_run(struct bch_migrate *m, struct printbuf *err)
{
	struct bch_source_opts so = { .dir = m->root, .progress = m->progress,
				      .progress_priv = m->progress_priv, .link = &m->link };
	struct bch_init_opts io = {
		.populate = bch_source_populate, .prepare = keep_old_buckets,
		.populate_priv = &so, .no_reread = true,
	};
	struct bch_fs_opts fo = { .no_excl = true };
	struct bch_devio *dev = NULL;
	struct bch_sb *sb = NULL;
	struct bch_fs *c = NULL;
	char *paths[1] = { m->dev_path }, pass_path[64];
	int memfd = -1, ret;

	if (m->dry_run || !m->nr_reserved)
		return -EINVAL;
	m->link = (struct bch_source_link) {
		.dev = 0, .st_dev = m->st_dev, .skip_ino = m->reserved_ino,
		.reserved = m->reserved, .nr_reserved = m->nr_reserved,
		.copy_below = max_t(uint64_t, COPY_BELOW,
				    (uint64_t)m->first_bucket * m->bucket_sectors),
		.old_fs_name = BCH_MIGRATE_OLD_FS_NAME,
	};

	ret = build_sb(m, &sb, err);
	if (ret)
		return ret;

	/* the superblocks in the reserved file, the layout at sector 7 */
	ret = dev_open(m->dev_path, DEV_RW, &dev);
	if (ret) {
		pr_buf(err, "%s: cannot open read-write: %s\n", m->dev_path, bch_err_str(ret));
		goto out;
	}
	ret = bch_sb_write(dev, sb, err);
	if (!ret && (ret = dev_pwrite(dev, &sb->layout, sizeof(sb->layout),
				      BCH_SB_LAYOUT_SECTOR * 512ULL)))
		pr_buf(err, "%s: writing the layout at sector 7: %s\n", m->dev_path, bch_err_str(ret));
	if (!ret && (ret = dev_flush(dev)))
		pr_buf(err, "%s: flush: %s\n", m->dev_path, bch_err_str(ret));
	dev_close(dev);
	if (ret)
		goto out;
	add_key(m, sb);

	/* then the filesystem, in one go */
	if (m->passphrase) {
		memfd = memfd_create("bcachefs-passphrase", MFD_CLOEXEC);
		if (memfd < 0 ||
		    write(memfd, m->passphrase, m->passphrase_len) != (ssize_t)m->passphrase_len ||
		    write(memfd, "\n", 1) != 1) {
			ret = -errno;
			pr_str(err, "cannot hand the passphrase to the filesystem open\n");
			goto out;
		}
		snprintf(pass_path, sizeof(pass_path), "/proc/self/fd/%d", memfd);
		fo.passphrase_file = pass_path;
	}
	sync();		/* every file's data in place before FIEMAP is asked */
	ret = bch_fs_open(paths, 1, &fo, &c, err);
	if (!ret && c->devs[0]->sb_offset != m->sb_offset) {
		pr_buf(err, "%s: opened the superblock at sector %" PRIu64 ", not the new one at %"
		       PRIu64 "\n", m->dev_path, c->devs[0]->sb_offset, m->sb_offset);
		ret = -EINVAL;
	}
	if (!ret)
		ret = bch_fs_initialize_opts(c, &io, err);
	m->nr_inodes = so.nr_inodes;
	bch_fs_close(c);
	if (ret && !dev_open(m->dev_path, DEV_RW, &dev)) {
		/* nothing points at the half-built filesystem any more */
		static const uint8_t zero[512];

		if (!dev_pwrite(dev, zero, sizeof(zero), BCH_SB_LAYOUT_SECTOR * 512ULL))
			dev_flush(dev);
		dev_close(dev);
	}
out:
	if (memfd >= 0)
		close(memfd);
	free(sb);
	return ret;
}

void bch_migrate_exit(struct bch_migrate *m)
{
	free(m->root);
	free(m->dev_path);
	free(m->fs_type);
	free(m->reserved_path);
	free(m->reserved);
	m->root = m->dev_path = m->fs_type = m->reserved_path = NULL;
	m->reserved = NULL;
}

/* ---- migrate-superblock ---------------------------------------------------------- */

struct low_use {
	uint64_t	end;		/* sectors [0, end) must be unused */
	struct printbuf	*err;
	int		found;
};

static bool ptr_low(const struct low_use *u, uint64_t offset)
{
	return offset < u->end;
}

static int node_low(void *arg, const struct btree_node_visit *v)
{
	struct low_use *u = arg;
	struct btree_ptr_h p[BCH_REPLICAS_MAX];
	int nr = btree_ptr_decode(v->ptr, p, BCH_REPLICAS_MAX);

	for (int i = 0; i < nr; i++)
		if (!p[i].dev && ptr_low(u, p[i].offset)) {
			pr_buf(u->err, "a btree node of btree %u is at sector %" PRIu64 "\n",
			       v->btree_id, p[i].offset);
			u->found++;
		}
	if (!v->n || v->level || v->btree_id != BTREE_ID_EXTENTS)
		return 0;
	for (size_t k = 0; k < v->n->nr_keys && u->found < 10; k++) {
		struct extent_ptr_iter it;
		struct extent_ptr_decoded d;

		extent_ptr_iter_init(&it, &v->n->keys[k]);
		while (extent_ptr_iter_next(&it, &d) > 0)
			if (!d.ptr.dev && ptr_low(u, d.ptr.offset)) {
				pr_buf(u->err, "inode %" PRIu64 " has data at sector %" PRIu64 "%s\n",
				       v->n->keys[k].k.p.inode, (uint64_t)d.ptr.offset,
				       u->found ? "" : " (old_migrated_filesystem must be deleted first?)");
				u->found++;
			}
	}
	return 0;
}

/*
 * Is anything of the filesystem in sectors [0, @end) of member 0? Its
 * journal buckets, superblock copies, btree nodes and extents (journal
 * keys not yet in nodes included: through the iterator).
 */
static int check_low_sectors(const char *path, uint64_t end, struct printbuf *err)
{
	struct bch_fs_opts fo = { .read_only = true };
	struct low_use u = { .end = end, .err = err };
	struct printbuf e = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	char *paths[1] = { (char *)path };
	struct bch_fs *c;
	int ret;

	ret = bch_fs_open(paths, 1, &fo, &c, &e);
	if (ret) {
		pr_buf(err, "%s: the filesystem does not open, so nothing tells whether sectors 0-%"
		       PRIu64 " are free: %s%s", path, end - 1, bch_err_str(ret),
		       e.pos ? "\n" : "");
		pr_str(err, printbuf_str(&e));
		printbuf_exit(&e);
		return ret;
	}
	printbuf_reset(&e);
	if (!c->devs[0] || !c->devs[0]->sb) {
		pr_buf(err, "%s: not member 0 of its filesystem: not made by migrate\n", path);
		bch_fs_close(c);
		printbuf_exit(&e);
		return -EINVAL;
	}
	for (size_t i = 0; i < bch_sb_journal_nr_buckets(c->devs[0]->sb); i++)
		if (bch_sb_journal_bucket(c->devs[0]->sb, i) * c->devs[0]->bucket_size < end) {
			pr_buf(err, "journal bucket %" PRIu64 " is there\n",
			       bch_sb_journal_bucket(c->devs[0]->sb, i));
			u.found++;
		}
	for (unsigned id = 0; id < BCH_NR_BTREES && !ret; id++)
		ret = bch_btree_walk_nodes(c, id, node_low, &u, &e);
	/* journal keys laid over the nodes */
	bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, POS_H_MIN, &e);
	while (!ret && u.found < 10 && !(ret = bch_btree_iter_next(&iter, &k)) && k) {
		struct extent_ptr_iter it;
		struct extent_ptr_decoded d;

		extent_ptr_iter_init(&it, k);
		while (extent_ptr_iter_next(&it, &d) > 0)
			if (!d.ptr.dev && d.ptr.offset < end) {
				pr_buf(err, "inode %" PRIu64 " has data at sector %" PRIu64 "\n",
				       k->k.p.inode, (uint64_t)d.ptr.offset);
				u.found++;
			}
	}
	bch_btree_iter_exit(&iter);
	if (!ret && c->nr_errors) {
		pr_buf(err, "%s: %lu problem(s) reading the filesystem: run fsck first\n", path,
		       c->nr_errors);
		ret = -BCH_ERR_fsck_errors;
	}
	bch_fs_close(c);
	printbuf_exit(&e);
	if (!ret && u.found) {
		pr_buf(err, "%s: sectors 0-%" PRIu64 ", where the superblock at sector 8 goes, are in "
		       "use (above): not adding it\n", path, end - 1);
		ret = -EBUSY;
	}
	return ret;
}

int bch_migrate_superblock(const char *path, uint64_t offset, struct printbuf *err)
{
	static const uint8_t zeroes[BCH_SB_LAYOUT_SECTOR * 512];
	struct bch_sb_handle h = { 0 };
	struct printbuf why = PRINTBUF;
	struct bch_devio *io = NULL;
	const struct bch_member *mb;
	struct bch_sb_layout *l;
	uint64_t end;
	int ret;

	ret = dev_mounted_check(path);
	if (ret > 0) {
		pr_buf(err, "%s is mounted or in use: unmount it first (the superblock at sector 8 "
		       "overwrites the old filesystem)\n", path);
		return -EBUSY;
	}
	ret = dev_open(path, DEV_RW | DEV_EXCL, &io);
	if (ret) {
		pr_buf(err, "%s: cannot open read-write: %s\n", path, bch_err_str(ret));
		return ret;
	}
	ret = bch_sb_read_at(io, offset, &h, &why);
	if (!ret)
		ret = bch_sb_validate(h.sb, &why);
	if (ret) {
		pr_buf(err, "%s: sector %" PRIu64 ": not a bcachefs superblock (%s)\n", path,
		       offset, printbuf_str(&why));
		goto out;
	}
	l = &h.sb->layout;
	for (unsigned i = 0; i < l->nr_superblocks; i++)
		if (le64_to_cpu(l->sb_offset[i]) == BCH_SB_SECTOR) {
			pr_buf(err, "%s: superblock layout already has default superblock\n", path);
			ret = -EEXIST;
			goto out;
		}
	if (l->nr_superblocks >= BCH_SB_LAYOUT_MAX_SB) {
		pr_buf(err, "%s: can't add superblock: no space left in superblock layout\n", path);
		ret = -ENOSPC;
		goto out;
	}
	if (h.sb->nr_devices != 1) {
		pr_buf(err, "%s: a filesystem of %u devices was not made by migrate\n", path,
		       h.sb->nr_devices);
		ret = -EINVAL;
		goto out;
	}

	/* the new copy and the sectors before it must hold nothing of the filesystem */
	end = BCH_SB_SECTOR + (1ULL << l->sb_max_size_bits);
	mb = bch_sb_member(h.sb, h.sb->dev_idx);
	if (!mb || (uint64_t)le16_to_cpu(mb->first_bucket) * le16_to_cpu(mb->bucket_size) < end) {
		dev_close(io);
		io = NULL;
		ret = check_low_sectors(path, end, err);
		if (!ret)
			ret = dev_open(path, DEV_RW | DEV_EXCL, &io);
		if (ret)
			goto out;
	}

	memmove(&l->sb_offset[1], &l->sb_offset[0], l->nr_superblocks * sizeof(l->sb_offset[0]));
	l->sb_offset[0] = cpu_to_le64(BCH_SB_SECTOR);
	l->nr_superblocks++;
	ret = bch_sb_write(io, h.sb, err);
	if (!ret && (ret = dev_pwrite(io, zeroes, sizeof(zeroes), 0)))
		pr_buf(err, "%s: zeroing sectors 0-6: %s\n", path, bch_err_str(ret));
	if (!ret && (ret = dev_flush(io)))
		pr_buf(err, "%s: flush: %s\n", path, bch_err_str(ret));
out:
	dev_close(io);
	bch_sb_handle_free(&h);
	printbuf_exit(&why);
	return ret;
}
