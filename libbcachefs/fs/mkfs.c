// SPDX-License-Identifier: GPL-2.0
/*
 * Building a new filesystem's superblocks (doc/format.md §2.2, §2.5, doc/tools.md §2, §2.2).
 * See mkfs.h for the order of the steps. Nothing is written to a device
 * before mkfs_write(), and mkfs_check() has checked all it relies on.
 */
#include "fs/mkfs.h"

#include "codec/crypto.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "format/format.h"
#include "dev/mounted.h"
#include "dev/super.h"
#include "util/util.h"

#include <blkid.h>
#include <ctype.h>
#include <errno.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <uuid/uuid.h>

const char * const mkfs_csum_names[] = { "none", "crc32c", "crc64", NULL };
const char * const mkfs_compression_names[] = { "none", "lz4", "gzip", "zstd", NULL };
const char * const mkfs_error_action_names[] = { "continue", "remount-ro", "panic", NULL };
const char * const mkfs_str_hash_names[] = { "crc32c", "crc64", "siphash", NULL };
const char * const mkfs_data_type_names[] = {
	"none", "sb", "journal", "btree", "data", "cached", NULL
};

void mkfs_opts_init(struct mkfs_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->meta_csum		= BCH_CSUM_OPT_CRC32C;
	opts->data_csum		= BCH_CSUM_OPT_CRC32C;
	opts->meta_replicas	= 1;
	opts->data_replicas	= 1;
	opts->meta_replicas_req	= 1;
	opts->data_replicas_req	= 1;
	opts->error_action	= BCH_ON_ERROR_RO;
	opts->str_hash		= BCH_STR_HASH_SIPHASH;
	opts->gc_reserve	= 8;
	opts->acl		= true;
}

void mkfs_dev_opts_init(struct mkfs_dev_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->data_allowed	= MKFS_DATA_ALLOWED_DEFAULT;
	opts->durability	= 1;
}

/* ---- option values ------------------------------------------------------ */

static void pr_bytes_human(struct printbuf *out, uint64_t sectors)
{
	pr_human_sectors(out, (int64_t)sectors);
}

/* A size in bytes that must be a whole number of sectors. */
static int parse_sectors(const char *opt, const char *arg, uint64_t *sectors,
			 bool exact, struct printbuf *err)
{
	uint64_t bytes;
	int ret = parse_size(arg, &bytes);

	if (ret) {
		pr_buf(err, "%s: '%s' is not a size (bytes, with an optional "
		       "k, m, g, t, p or e suffix)", opt, arg);
		return -EINVAL;
	}
	if (exact && (bytes & 511)) {
		pr_buf(err, "%s: '%s' is not a multiple of 512 bytes", opt, arg);
		return -EINVAL;
	}
	*sectors = bytes >> 9;
	return 0;
}

int mkfs_parse_block_size(const char *opt, const char *arg, unsigned *ret,
			  struct printbuf *err)
{
	uint64_t s;
	int r = parse_sectors(opt, arg, &s, true, err);

	if (r)
		return r;
	if (!s || s > MKFS_BLOCK_SIZE_MAX || !is_power_of_2(s)) {
		pr_buf(err, "%s: '%s' is not a valid block size (allowed: 512, 1k, 2k, 4k)",
		       opt, arg);
		return -EINVAL;
	}
	*ret = s;
	return 0;
}

int mkfs_parse_btree_node_size(const char *opt, const char *arg, unsigned *ret,
			       struct printbuf *err)
{
	uint64_t s;
	int r = parse_sectors(opt, arg, &s, true, err);

	if (r)
		return r;
	if (!s || s > MKFS_BTREE_NODE_SIZE_MAX || !is_power_of_2(s)) {
		pr_buf(err, "%s: '%s' is not a valid btree node size "
		       "(allowed: a power of two from 512 to 1M)", opt, arg);
		return -EINVAL;
	}
	*ret = s;
	return 0;
}

int mkfs_parse_bucket_size(const char *opt, const char *arg, unsigned *ret,
			   struct printbuf *err)
{
	uint64_t s;
	int r = parse_sectors(opt, arg, &s, true, err);

	if (r)
		return r;
	if (!s || s > MKFS_BUCKET_SIZE_MAX) {
		pr_buf(err, "%s: '%s' is not a valid bucket size "
		       "(allowed: 512 to 65535 sectors (32M - 512), a multiple of the block size)",
		       opt, arg);
		return -EINVAL;
	}
	*ret = s;
	return 0;
}

int mkfs_parse_fs_size(const char *opt, const char *arg, uint64_t *ret,
		       struct printbuf *err)
{
	/* bytes, truncated to sectors; empty or 0 = the whole device */
	return parse_sectors(opt, arg, ret, false, err);
}

static void pr_choices(struct printbuf *out, const char * const *names)
{
	for (unsigned i = 0; names[i]; i++)
		pr_buf(out, "%s%s", i ? ", " : "", names[i]);
}

/* Exact, case-sensitive match after trimming blanks (doc/format.md §9.2). */
static int parse_choice(const char *opt, const char *arg, const char * const *names,
			unsigned *ret, struct printbuf *err)
{
	const char *s = arg, *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		e--;

	for (unsigned i = 0; names[i]; i++)
		if (strlen(names[i]) == (size_t)(e - s) && !memcmp(names[i], s, e - s)) {
			*ret = i;
			return 0;
		}
	pr_buf(err, "%s: bad value '%s' (allowed: ", opt, arg);
	pr_choices(err, names);
	pr_char(err, ')');
	return -EINVAL;
}

int mkfs_parse_csum(const char *opt, const char *arg, unsigned *ret, struct printbuf *err)
{
	return parse_choice(opt, arg, mkfs_csum_names, ret, err);
}

int mkfs_parse_compression(const char *opt, const char *arg, unsigned *ret,
			   struct printbuf *err)
{
	return parse_choice(opt, arg, mkfs_compression_names, ret, err);
}

int mkfs_parse_error_action(const char *opt, const char *arg, unsigned *ret,
			    struct printbuf *err)
{
	return parse_choice(opt, arg, mkfs_error_action_names, ret, err);
}

int mkfs_parse_str_hash(const char *opt, const char *arg, unsigned *ret,
			struct printbuf *err)
{
	return parse_choice(opt, arg, mkfs_str_hash_names, ret, err);
}

int mkfs_parse_uint(const char *opt, const char *arg, unsigned min, unsigned max,
		    unsigned *ret, struct printbuf *err)
{
	uint64_t v;

	if (parse_u64(arg, &v) || v < min || v > max) {
		pr_buf(err, "%s: bad value '%s' (allowed: %u to %u)", opt, arg, min, max);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

int mkfs_parse_replicas(const char *opt, const char *arg, unsigned *ret,
			struct printbuf *err)
{
	return mkfs_parse_uint(opt, arg, 1, MKFS_REPLICAS_MAX, ret, err);
}

int mkfs_parse_durability(const char *opt, const char *arg, unsigned *ret,
			  struct printbuf *err)
{
	return mkfs_parse_uint(opt, arg, 0, MKFS_DURABILITY_MAX, ret, err);
}

int mkfs_parse_data_allowed(const char *opt, const char *arg, unsigned *ret,
			    struct printbuf *err)
{
	unsigned mask = 0;
	const char *p = arg;

	do {
		const char *e = strchrnul(p, ',');
		size_t len = e - p;
		unsigned i;

		for (i = 0; mkfs_data_type_names[i]; i++)
			if (strlen(mkfs_data_type_names[i]) == len &&
			    !memcmp(mkfs_data_type_names[i], p, len))
				break;
		if (!mkfs_data_type_names[i]) {
			pr_buf(err, "%s: bad data type '%.*s' in '%s' (allowed: a comma-separated list of ",
			       opt, (int)len, p, arg);
			pr_choices(err, mkfs_data_type_names);
			pr_buf(err, ")");
			return -EINVAL;
		}
		if (i >= 5) {
			pr_buf(err, "%s: data type '%s' cannot be stored in a version 9 "
			       "superblock (allowed: none, sb, journal, btree, data)", opt,
			       mkfs_data_type_names[i]);
			return -EINVAL;
		}
		mask |= 1U << i;
		p = *e ? e + 1 : e;
		if (*e && !*p) {
			pr_buf(err, "%s: empty data type at the end of '%s'", opt, arg);
			return -EINVAL;
		}
	} while (*p);

	*ret = mask;
	return 0;
}

int mkfs_parse_uuid(const char *opt, const char *arg, uint8_t uuid[16], struct printbuf *err)
{
	uuid_t u;

	if (strlen(arg) != 36 || uuid_parse(arg, u)) {
		pr_buf(err, "%s: '%s' is not a uuid (allowed: xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hex digits)",
		       opt, arg);
		return -EINVAL;
	}
	if (uuid_is_null(u)) {
		pr_buf(err, "%s: the nil uuid (all zero) is not a filesystem uuid "
		       "(leave %s out for a random one)", opt, opt);
		return -EINVAL;
	}
	memcpy(uuid, u, 16);
	return 0;
}

int mkfs_check_group_path(const char *opt, const char *path, struct printbuf *err)
{
	const char *p = path;
	unsigned depth = 0;

	if (!*path) {
		pr_buf(err, "%s: empty disk group name", opt);
		return -EINVAL;
	}
	while (*p) {
		const char *e = strchrnul(p, '.');
		size_t len = e - p;

		if (!len || len > BCH_SB_LABEL_SIZE) {
			pr_buf(err, "%s: bad disk group '%s': every component between dots "
			       "must be 1 to %u bytes long", opt, path, BCH_SB_LABEL_SIZE);
			return -EINVAL;
		}
		if (++depth > MKFS_GROUP_DEPTH_MAX) {
			pr_buf(err, "%s: disk group '%s' is more than %u levels deep",
			       opt, path, MKFS_GROUP_DEPTH_MAX);
			return -EINVAL;
		}
		p = *e ? e + 1 : e;	/* one trailing '.' is ignored */
	}
	return 0;
}

int mkfs_check_label(const char *opt, const char *label, struct printbuf *err)
{
	if (strlen(label) > BCH_SB_LABEL_SIZE) {
		pr_buf(err, "%s: label '%s' is %zu bytes long (allowed: at most %u bytes)",
		       opt, label, strlen(label), BCH_SB_LABEL_SIZE);
		return -EINVAL;
	}
	return 0;
}

/* ---- the configuration as a whole --------------------------------------- */

int mkfs_check_config(const struct mkfs_opts *opts, const struct mkfs_dev *devs,
		      unsigned nr, struct printbuf *err)
{
	static const struct { unsigned type; const char *what, *name; bool meta; } types[] = {
		{ BCH_DATA_JOURNAL,	"the journal",	"journal",	true },
		{ BCH_DATA_BTREE,	"btree nodes",	"btree",	true },
		{ BCH_DATA_USER,	"file data",	"data",		false },
	};

	for (unsigned t = 0; t < ARRAY_SIZE(types); t++) {
		unsigned want = types[t].meta ? opts->meta_replicas : opts->data_replicas;
		unsigned have = 0, nr_devs = 0;

		for (unsigned i = 0; i < nr; i++)
			if ((devs[i].opts.data_allowed & (1U << types[t].type)) &&
			    devs[i].opts.durability) {
				have += devs[i].opts.durability;
				nr_devs++;
			}
		if (!nr_devs) {
			pr_buf(err, "no device can hold %s: ", types[t].what);
			for (unsigned i = 0; i < nr; i++) {
				pr_buf(err, "%s%s has ", i ? ", " : "", devs[i].path);
				if (!devs[i].opts.durability)
					pr_str(err, "--durability=0 (a cache)");
				else
					pr_buf(err, "--data_allowed without %s", types[t].name);
			}
			return -EINVAL;
		}
		if (have < want) {
			pr_buf(err, "%u %s replicas wanted (--%s), but the device%s that can hold %s "
			       "give%s a durability of %u: add devices, or want fewer replicas",
			       want, types[t].meta ? "metadata" : "data",
			       types[t].meta ? "metadata_replicas or --replicas" : "data_replicas or --replicas",
			       nr_devs == 1 ? "" : "s", types[t].what, nr_devs == 1 ? "s" : "", have);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- devices ------------------------------------------------------------ */

int mkfs_dev_open(struct mkfs_dev *dev, struct printbuf *err)
{
	struct stat st;
	int ret;

	if (stat(dev->path, &st)) {
		ret = -errno;
		pr_buf(err, "error opening %s: %s", dev->path, strerror(errno));
		return ret;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		pr_buf(err, "error opening %s: not a regular file or block device", dev->path);
		return -ENOTBLK;
	}

	ret = dev_mounted_check_wait(dev->path, DEV_UNMOUNT_WAIT_MS);
	if (ret > 0) {
		pr_buf(err, "%s is mounted or in use; refusing to format it", dev->path);
		return -EBUSY;
	}

	ret = dev_open(dev->path, DEV_RW | DEV_EXCL, &dev->io);
	if (ret) {
		if (bch_err_matches(ret, EBUSY))
			pr_buf(err, "%s is in use by another process (mounted, or held open); "
			       "refusing to format it", dev->path);
		else
			pr_buf(err, "error opening %s: %s", dev->path, bch_err_str(ret));
		return ret;
	}

	dev->dev_size = dev->io->size >> 9;
	dev->dev_min_block_size = 1;
	if (dev->io->is_blockdev) {
		unsigned pbs = 0;

		dev->dev_min_block_size = max_t(unsigned, 1, dev->io->block_size >> 9);
		if (ioctl(dev->io->fd, BLKPBSZGET, &pbs) || pbs < 512)
			pbs = dev->io->block_size;
		dev->dev_block_size = max_t(unsigned, 1, pbs >> 9);
	} else {
		struct stat fst;

		dev->dev_block_size = 8;
		if (!fstat(dev->io->fd, &fst) && fst.st_blksize >= 512)
			dev->dev_block_size = fst.st_blksize >> 9;
	}
	return 0;
}

void mkfs_dev_close(struct mkfs_dev *dev)
{
	dev_close(dev->io);
	dev->io = NULL;
}

static const uint8_t sb_magic[16] = BCH_SB_MAGIC_BYTES;

int mkfs_dev_probe(struct mkfs_dev *dev, struct printbuf *what, struct printbuf *err)
{
	const char *type = NULL, *label = NULL, *pttype = NULL;
	uint8_t buf[16];
	blkid_probe pr;
	int ret;

	/* Our own check: libblkid of this time does not know bcachefs. */
	if ((!dev_pread(dev->io, buf, 16, 4096 + 24) && !memcmp(buf, sb_magic, 16)) ||
	    (!dev_pread(dev->io, buf, 16, 3584) && !memcmp(buf, sb_magic, 16))) {
		pr_str(what, "a bcachefs filesystem");
		return 0;
	}

	pr = blkid_new_probe();
	if (!pr) {
		pr_buf(err, "%s: cannot probe for existing filesystems (libblkid)", dev->path);
		return -ENOMEM;
	}
	if (blkid_probe_set_device(pr, dev->io->fd, 0, 0) ||
	    blkid_probe_enable_partitions(pr, true) ||
	    blkid_probe_enable_superblocks(pr, true) ||
	    blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_TYPE)) {
		pr_buf(err, "%s: cannot probe for existing filesystems (libblkid set-up failed)",
		       dev->path);
		ret = -EIO;
		goto out;
	}

	ret = blkid_do_fullprobe(pr);
	if (ret == -2) {
		pr_str(what, "several conflicting filesystem signatures");
		ret = 0;
		goto out;
	}
	if (ret < 0) {
		pr_buf(err, "%s: probing for existing filesystems failed (libblkid)", dev->path);
		ret = -EIO;
		goto out;
	}
	ret = 0;

	blkid_probe_lookup_value(pr, "TYPE", &type, NULL);
	blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
	blkid_probe_lookup_value(pr, "PTTYPE", &pttype, NULL);
	if (type) {
		pr_buf(what, "%s %s filesystem", strchr("aeiouAEIOU", type[0]) ? "an" : "a", type);
		if (label && *label)
			pr_buf(what, " labelled '%s'", label);
	} else if (pttype) {
		pr_buf(what, "%s %s partition table", strchr("aeiouAEIOU", pttype[0]) ? "an" : "a",
		       pttype);
	}
out:
	blkid_free_probe(pr);
	return ret;
}

/*
 * Remove every signature libblkid knows (filesystems, partition tables), so
 * that no old signature outside the area we write is found later.
 */
static int mkfs_dev_wipe(struct mkfs_dev *dev, struct printbuf *err)
{
	blkid_probe pr = blkid_new_probe();
	int ret = 0;

	if (!pr)
		return 0;
	if (blkid_probe_set_device(pr, dev->io->fd, 0, 0) ||
	    blkid_probe_enable_superblocks(pr, true) ||
	    blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_MAGIC) ||
	    blkid_probe_enable_partitions(pr, true) ||
	    blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC))
		goto out;

	while (blkid_do_probe(pr) == 0)
		if (blkid_do_wipe(pr, false)) {
			pr_buf(err, "%s: cannot erase an old signature: %s",
			       dev->path, strerror(errno));
			ret = -EIO;
			break;
		}
out:
	blkid_free_probe(pr);
	return ret;
}

/* ---- geometry ----------------------------------------------------------- */

static unsigned ilog2_u64(uint64_t v)
{
	return v ? 63 - __builtin_clzll(v) : 0;
}

static uint64_t rounddown_pow2(uint64_t v)
{
	return v ? 1ULL << ilog2_u64(v) : 0;
}

/* Automatic bucket size (doc/tools.md §2.2 steps 1-4); 0 if too small. */
static unsigned auto_bucket_size(uint64_t size, unsigned bs, unsigned bns)
{
	uint64_t b = max_t(uint64_t, max_t(uint64_t, bs, bns), 256);

	if (size < 1024ULL * bs)
		return 0;
	if (size >= 1024 * b) {
		uint64_t scale = max_t(uint64_t, 1, ilog2_u64(size / (1024 * b)) / 4);

		scale = rounddown_pow2(scale);
		b = min_t(uint64_t, b * scale, MKFS_BUCKET_SIZE_AUTO_MAX);
	} else {
		do
			b /= 2;
		while (size < 1024 * b);
	}
	return b;
}

int mkfs_geometry(struct mkfs_opts *opts, struct mkfs_dev *devs, unsigned nr,
		  struct printbuf *err)
{
	unsigned bs = opts->block_size, bns = opts->btree_node_size, node;
	unsigned min_bs = 1, min_bucket;

	if (!nr) {
		pr_str(err, "no devices given");
		return -EINVAL;
	}

	for (unsigned i = 0; i < nr; i++)
		min_bs = max_t(unsigned, min_bs, devs[i].dev_min_block_size);
	if (min_bs > MKFS_BLOCK_SIZE_MAX || !is_power_of_2(min_bs)) {
		pr_buf(err, "%s: device block size ", devs[0].path);
		pr_bytes_human(err, min_bs);
		pr_str(err, " is not supported (at most 4k)");
		return -EOPNOTSUPP;
	}

	if (!bs) {
		/* largest preferred block size, capped to what validation accepts */
		bs = min_bs;
		for (unsigned i = 0; i < nr; i++)
			bs = max_t(unsigned, bs, rounddown_pow2(devs[i].dev_block_size));
		bs = min_t(unsigned, bs, MKFS_BLOCK_SIZE_MAX);
	} else if (bs < min_bs) {
		for (unsigned i = 0; i < nr; i++)
			if (devs[i].dev_min_block_size > bs) {
				pr_buf(err, "--block_size: %u bytes is smaller than the logical "
				       "block size of %s (%u bytes)", bs << 9, devs[i].path,
				       devs[i].dev_min_block_size << 9);
				break;
			}
		return -EINVAL;
	}
	if (!is_power_of_2(bs) || bs > MKFS_BLOCK_SIZE_MAX) {
		pr_buf(err, "--block_size: %u bytes is not allowed (allowed: 512, 1k, 2k, 4k)",
		       bs << 9);
		return -EINVAL;
	}
	if (bns && bns < bs) {
		pr_buf(err, "--btree_node_size: %u bytes is smaller than the block size (%u bytes)",
		       bns << 9, bs << 9);
		return -EINVAL;
	}

retry:
	min_bucket = UINT32_MAX;
	for (unsigned i = 0; i < nr; i++) {
		struct mkfs_dev *d = &devs[i];
		uint64_t size = d->opts.fs_size ?: d->dev_size;
		unsigned b = d->opts.bucket_size;

		if (d->opts.fs_size && d->opts.fs_size > d->dev_size) {
			pr_buf(err, "--fs_size: ");
			pr_bytes_human(err, d->opts.fs_size);
			pr_buf(err, " is larger than %s (", d->path);
			pr_bytes_human(err, d->dev_size);
			pr_char(err, ')');
			return -EINVAL;
		}

		if (!b) {
			b = auto_bucket_size(size, bs, bns);
			if (!b) {
				pr_buf(err, "cannot format %s: too small (", d->path);
				pr_bytes_human(err, size);
				pr_str(err, ", need at least ");
				pr_bytes_human(err, 1024ULL * bs);
				pr_buf(err, " with %u byte blocks)", bs << 9);
				return -BCH_ERR_format_too_small;
			}
			if (bns && b < bns) {
				pr_buf(err, "cannot format %s: too small for --btree_node_size ",
				       d->path);
				pr_bytes_human(err, bns);
				pr_str(err, " (its buckets would be ");
				pr_bytes_human(err, b);
				pr_str(err, "; need 1024 buckets of at least the btree node size)");
				return -BCH_ERR_format_too_small;
			}
		} else {
			if (b < bs || b % bs) {
				pr_str(err, "--bucket_size: ");
				pr_bytes_human(err, b);
				pr_buf(err, " for %s is not a multiple of the block size (", d->path);
				pr_bytes_human(err, bs);
				pr_char(err, ')');
				return -EINVAL;
			}
			if (bns && b < bns) {
				pr_str(err, "--bucket_size: ");
				pr_bytes_human(err, b);
				pr_buf(err, " for %s is smaller than the btree node size (", d->path);
				pr_bytes_human(err, bns);
				pr_char(err, ')');
				return -EINVAL;
			}
		}

		d->size		= size;
		d->bucket_size	= b;
		d->nbuckets	= size / b;
		if (d->nbuckets < BCH_MIN_NR_NBUCKETS) {
			pr_buf(err, "cannot format %s: ", d->path);
			pr_bytes_human(err, size);
			pr_buf(err, " holds only %llu buckets of ", (unsigned long long)d->nbuckets);
			pr_bytes_human(err, b);
			pr_buf(err, "; need at least %u (use a smaller --bucket_size)",
			       BCH_MIN_NR_NBUCKETS);
			return -BCH_ERR_format_too_small;
		}
		min_bucket = min_t(unsigned, min_bucket, b);
	}

	node = bns ?: rounddown_pow2(min_t(unsigned, MKFS_BTREE_NODE_SIZE_DEFAULT, min_bucket));
	if (node < MKFS_NODE_MIN_BLOCKS * bs) {
		/* small buckets: smaller blocks, when the block size is ours to choose */
		if (!opts->block_size && bs > min_bs) {
			bs /= 2;
			goto retry;
		}
		pr_str(err, "cannot format: btree nodes of ");
		pr_bytes_human(err, node);
		pr_buf(err, " would hold %u block%s of ", node / bs, node / bs == 1 ? "" : "s");
		pr_bytes_human(err, bs);
		pr_buf(err, " (need at least %u): ", MKFS_NODE_MIN_BLOCKS);
		if (bns)
			pr_str(err, "use a larger --btree_node_size");
		else if (opts->block_size)
			pr_str(err, "use a smaller --block_size, or larger buckets (a larger device or --bucket_size)");
		else
			pr_str(err, "the devices' block size needs larger buckets (a larger device or --bucket_size)");
		return -BCH_ERR_format_too_small;
	}

	opts->block_size = bs;
	opts->btree_node_size = node;
	return 0;
}

int mkfs_layout(unsigned bs, uint64_t start, uint64_t end,
		struct bch_sb_layout *l, struct printbuf *err)
{
	static const struct bch_uuid magic = { BCH_SB_MAGIC_BYTES };
	uint64_t size0, backup, size;

	if (!bs) {
		pr_str(err, "insufficient space for superblocks (block size 0)");
		return -ENOSPC;
	}
	if (start != BCH_SB_SECTOR)
		start = round_up(start, bs);
	end = end / bs * bs;
	if (start >= end)
		goto nospc;

	/* the reference halves start only, not the difference (doc/format.md §2.2) */
	size0 = min_t(uint64_t, 128, end - start / 2);
	backup = min_t(uint64_t, round_up(start + size0, bs), end);
	size = min_t(uint64_t, end - backup, backup - start);
	if (size < 8)
		goto nospc;
	size = rounddown_pow2(size);

	memset(l, 0, sizeof(*l));
	l->magic		= magic;
	l->layout_type		= BCH_SB_LAYOUT_TYPE;
	l->sb_max_size_bits	= ilog2_u64(size);
	l->nr_superblocks	= 2;
	l->sb_offset[0]		= cpu_to_le64(start);
	l->sb_offset[1]		= cpu_to_le64(backup);
	return 0;
nospc:
	pr_buf(err, "insufficient space for superblocks (block size %u bytes, sectors %llu..%llu)",
	       bs << 9, (unsigned long long)start, (unsigned long long)end);
	return -ENOSPC;
}

/* ---- the superblock ----------------------------------------------------- */

/*
 * Resize field @f (a pointer into *@sb) to @u64s, moving the fields after
 * it; new bytes are zero. Returns the field's new address.
 */
static struct bch_sb_field *sb_field_resize(struct bch_sb **sb, struct bch_sb_field *f,
					    unsigned u64s)
{
	size_t old_bytes = bch_sb_bytes(*sb);
	size_t off = (char *)f - (char *)*sb;
	size_t f_old = bch_sb_field_bytes(f), f_new = (size_t)u64s * 8;
	size_t new_bytes = old_bytes - f_old + f_new;
	char *p;

	if (new_bytes > old_bytes) {
		*sb = xrealloc(*sb, new_bytes);
		memset((char *)*sb + old_bytes, 0, new_bytes - old_bytes);
	}
	p = (char *)*sb;
	memmove(p + off + f_new, p + off + f_old, old_bytes - off - f_old);
	if (f_new > f_old)
		memset(p + off + f_old, 0, f_new - f_old);
	f = (struct bch_sb_field *)(p + off);
	f->u64s = cpu_to_le32(u64s);
	(*sb)->u64s = cpu_to_le32((new_bytes - BCH_SB_FIXED_BYTES) / 8);
	return f;
}

static struct bch_sb_field *sb_field_add(struct bch_sb **sb, unsigned type, unsigned u64s)
{
	size_t old_bytes = bch_sb_bytes(*sb);
	struct bch_sb_field *f;

	*sb = xrealloc(*sb, old_bytes + (size_t)u64s * 8);
	f = (struct bch_sb_field *)((char *)*sb + old_bytes);
	memset(f, 0, (size_t)u64s * 8);
	f->u64s = cpu_to_le32(u64s);
	f->type = cpu_to_le32(type);
	(*sb)->u64s = cpu_to_le32(le32_to_cpu((*sb)->u64s) + u64s);
	return f;
}

static struct bch_sb_field_members *sb_members(struct bch_sb *sb)
{
	return (struct bch_sb_field_members *)bch_sb_field_get(sb, BCH_SB_FIELD_members);
}

/* Walk (and with @create, extend) the group tree; doc/format.md §2.11. */
int mkfs_disk_group(struct bch_sb **sb, const char *path, bool create,
		    struct printbuf *err)
{
	const char *p = path;
	unsigned parent = 0;
	int idx = -1;
	int ret = mkfs_check_group_path("disk group", path, err);

	if (ret)
		return ret;

	while (*p) {
		const char *e = strchrnul(p, '.');
		size_t len = e - p;
		struct bch_sb_field_disk_groups *g = (void *)
			bch_sb_field_get(*sb, BCH_SB_FIELD_disk_groups);
		size_t nr = g ? bch_sb_disk_groups_nr(g) : 0;
		size_t i;

		idx = -1;
		for (i = 0; i < nr; i++) {
			struct bch_disk_group *dg = &g->entries[i];

			if (!BCH_GROUP_DELETED(dg) && BCH_GROUP_PARENT(dg) == parent &&
			    strnlen((char *)dg->label, BCH_SB_LABEL_SIZE) == len &&
			    !memcmp(dg->label, p, len)) {
				idx = i;
				break;
			}
		}

		if (idx < 0) {
			struct bch_disk_group *dg;

			if (!create)
				return -ENOENT;
			for (i = 0; i < nr; i++)
				if (BCH_GROUP_DELETED(&g->entries[i]))
					break;
			if (i == nr) {
				if (nr >= MKFS_DISK_GROUPS_MAX) {
					pr_buf(err, "too many disk groups (at most %u)",
					       MKFS_DISK_GROUPS_MAX);
					return -ENOSPC;
				}
				if (!g)
					g = (void *)sb_field_add(sb, BCH_SB_FIELD_disk_groups,
								 1 + 6 * (nr + 1));
				else
					g = (void *)sb_field_resize(sb, &g->field,
								    1 + 6 * (nr + 1));
			}
			dg = &g->entries[i];
			memset(dg, 0, sizeof(*dg));
			memcpy(dg->label, p, len);
			SET_BCH_GROUP_DELETED(dg, 0);
			SET_BCH_GROUP_PARENT(dg, parent);
			SET_BCH_GROUP_DATA_ALLOWED(dg, MKFS_DATA_ALLOWED_MASK);
			idx = i;
		}
		parent = idx + 1;
		p = *e ? e + 1 : e;
	}
	return idx;
}

int mkfs_target(const struct bch_sb *sb, const struct mkfs_dev *devs, unsigned nr,
		const char *name, unsigned *ret, struct printbuf *err)
{
	struct printbuf ignore = PRINTBUF;
	struct bch_sb *copy;
	int idx;

	*ret = BCH_TARGET_NONE;
	if (!name || !*name || !strcmp(name, "none"))
		return 0;

	for (unsigned i = 0; i < nr; i++)
		if (!strcmp(name, devs[i].path)) {
			*ret = BCH_TARGET_DEV_START + i;
			return 0;
		}

	/* lookup only (never creates); a copy keeps @sb const */
	copy = xmalloc(bch_sb_bytes(sb));
	memcpy(copy, sb, bch_sb_bytes(sb));
	idx = mkfs_disk_group(&copy, name, false, &ignore);
	free(copy);
	printbuf_exit(&ignore);
	if (idx < 0) {
		pr_buf(err, "bad target '%s' (allowed: none, a device given on the command "
		       "line, or a disk group given with --group)", name);
		return -EINVAL;
	}
	*ret = BCH_TARGET_GROUP_START + idx;
	return 0;
}

/* mkfs_target() with the option named in the message. */
static int resolve_target(const struct bch_sb *sb, const struct mkfs_dev *devs, unsigned nr,
			  const char *opt, const char *name, unsigned *ret,
			  struct printbuf *err)
{
	struct printbuf msg = PRINTBUF;
	int r = mkfs_target(sb, devs, nr, name, ret, &msg);

	if (r)
		pr_buf(err, "%s: %s", opt, printbuf_str(&msg));
	printbuf_exit(&msg);
	return r;
}

static void random_bytes(void *p, size_t len)
{
	char *b = p;

	while (len) {
		ssize_t r = getrandom(b, len, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* no getrandom(): libuuid's generator still works */
			uuid_t u;
			uuid_generate(u);
			r = min_t(size_t, len, 16);
			memcpy(b, u, r);
		}
		b += r;
		len -= r;
	}
}

static void random_uuid_if_zero(uint8_t uuid[16])
{
	if (uuid_is_zero(uuid))
		uuid_generate_random(uuid);
}

static int build_crypt(struct bch_sb **sb, struct mkfs_opts *opts, struct printbuf *err)
{
	struct bch_sb_field_crypt *c = (void *)
		sb_field_add(sb, BCH_SB_FIELD_crypt, sizeof(*c) / 8);
	struct bch_key master;
	uint8_t blob[BCH_ENCRYPTED_KEY_BYTES];
	int ret;

	ret = bch_crypto_init();
	if (ret) {
		pr_str(err, "cannot initialise the crypto library");
		return ret;
	}

	if (opts->master_key)
		memcpy(&master, opts->master_key, sizeof(master));
	else
		random_bytes(&master, sizeof(master));

	SET_BCH_CRYPT_KDF_TYPE(c, BCH_KDF_SCRYPT);
	if (opts->passphrase) {
		uint64_t kdf_flags = bch_kdf_flags_encode(BCH_KDF_SCRYPT_LOG2_N,
							  BCH_KDF_SCRYPT_LOG2_R,
							  BCH_KDF_SCRYPT_LOG2_P);
		struct bch_key wrap;

		c->kdf_flags = cpu_to_le64(kdf_flags);
		ret = bch_derive_key(opts->passphrase, opts->passphrase_len, kdf_flags, &wrap);
		if (ret) {
			pr_buf(err, "deriving a key from the passphrase failed: %s",
			       bch_err_str(ret));
			bch_key_wipe(&master);
			return ret;
		}
		bch_wrap_master_key(&master, &wrap, (*sb)->uuid.b, blob);
		bch_key_wipe(&wrap);
	} else {
		bch_store_master_key_clear(&master, blob);
	}
	memcpy(&c->key, blob, sizeof(blob));
	memset(blob, 0, sizeof(blob));
	bch_key_wipe(&master);

	SET_BCH_SB_ENCRYPTION_TYPE(*sb, BCH_ENCRYPTION_CHACHA20_POLY1305);
	return 0;
}

int mkfs_build_sb(struct mkfs_opts *opts, struct mkfs_dev *devs, unsigned nr,
		  struct bch_sb **ret, struct printbuf *err)
{
	static const struct bch_uuid magic = { BCH_SB_MAGIC_BYTES };
	struct bch_sb *sb;
	struct bch_sb_field_members *mf;
	unsigned target;
	int r;

	*ret = NULL;
	if (!nr || nr > BCH_SB_MEMBERS_MAX) {
		pr_buf(err, "%u devices given (allowed: 1 to %u)", nr, BCH_SB_MEMBERS_MAX);
		return -EINVAL;
	}
	if (opts->label && (r = mkfs_check_label("--label", opts->label, err)))
		return r;

	sb = xcalloc(1, sizeof(*sb));

	sb->version	= cpu_to_le64(BCH_SB_VERSION_CURRENT);
	sb->magic	= magic;
	random_uuid_if_zero(opts->user_uuid);
	random_uuid_if_zero(opts->uuid);
	memcpy(sb->user_uuid.b, opts->user_uuid, 16);
	memcpy(sb->uuid.b, opts->uuid, 16);
	if (opts->label)
		memcpy(sb->label, opts->label, strlen(opts->label));
	sb->offset	= cpu_to_le64(BCH_SB_SECTOR);
	sb->block_size	= cpu_to_le16(opts->block_size);
	sb->dev_idx	= 0;
	sb->nr_devices	= nr;

	if (!opts->time_base) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		opts->time_base = (uint64_t)now.tv_sec * 1000000000ULL + now.tv_nsec;
	}
	sb->time_base_lo	= cpu_to_le64(opts->time_base);
	sb->time_precision	= cpu_to_le32(1);

	SET_BCH_SB_CSUM_TYPE(sb,		opts->meta_csum);
	SET_BCH_SB_ERROR_ACTION(sb,		opts->error_action);
	SET_BCH_SB_BTREE_NODE_SIZE(sb,		opts->btree_node_size);
	SET_BCH_SB_GC_RESERVE(sb,		opts->gc_reserve);
	SET_BCH_SB_ROOT_RESERVE(sb,		opts->root_reserve);
	SET_BCH_SB_META_CSUM_TYPE(sb,		opts->meta_csum);
	SET_BCH_SB_DATA_CSUM_TYPE(sb,		opts->data_csum);
	SET_BCH_SB_META_REPLICAS_WANT(sb,	opts->meta_replicas);
	SET_BCH_SB_DATA_REPLICAS_WANT(sb,	opts->data_replicas);
	SET_BCH_SB_POSIX_ACL(sb,		opts->acl);
	SET_BCH_SB_USRQUOTA(sb,			opts->usrquota);
	SET_BCH_SB_GRPQUOTA(sb,			opts->grpquota);
	SET_BCH_SB_PRJQUOTA(sb,			opts->prjquota);

	SET_BCH_SB_STR_HASH_TYPE(sb,		opts->str_hash);
	SET_BCH_SB_COMPRESSION_TYPE(sb,		opts->compression);
	SET_BCH_SB_INODE_32BIT(sb,		opts->inodes_32bit);
	SET_BCH_SB_128_BIT_MACS(sb,		opts->wide_macs);
	SET_BCH_SB_ENCODED_EXTENT_MAX_BITS(sb,	7);	/* 128 sectors */
	SET_BCH_SB_META_REPLICAS_REQ(sb,	opts->meta_replicas_req);
	SET_BCH_SB_DATA_REPLICAS_REQ(sb,	opts->data_replicas_req);
	SET_BCH_SB_BACKGROUND_COMPRESSION_TYPE(sb, opts->background_compression);

	r = mkfs_layout(opts->block_size, MKFS_SB_AREA_START, MKFS_SB_AREA_END,
			&sb->layout, err);
	if (r)
		goto err;

	/* members */
	mf = (void *)sb_field_add(&sb, BCH_SB_FIELD_members,
				  1 + nr * sizeof(struct bch_member) / 8);
	for (unsigned i = 0; i < nr; i++) {
		struct bch_member *m = &mf->members[i];
		struct mkfs_dev *d = &devs[i];

		random_uuid_if_zero(d->uuid);
		memcpy(m->uuid.b, d->uuid, 16);
		m->nbuckets	= cpu_to_le64(d->nbuckets);
		m->first_bucket	= 0;
		m->bucket_size	= cpu_to_le16(d->bucket_size);
		SET_BCH_MEMBER_STATE(m,		BCH_MEMBER_STATE_RW);
		SET_BCH_MEMBER_REPLACEMENT(m,	CACHE_REPLACEMENT_LRU);
		SET_BCH_MEMBER_DISCARD(m,	d->opts.discard);
		SET_BCH_MEMBER_DATA_ALLOWED(m,	d->opts.data_allowed & MKFS_DATA_ALLOWED_MASK);
		SET_BCH_MEMBER_DURABILITY(m,	d->opts.durability + 1);
	}

	/* disk groups, in device order */
	for (unsigned i = 0; i < nr; i++) {
		int idx;

		if (!devs[i].opts.group)
			continue;
		idx = mkfs_disk_group(&sb, devs[i].opts.group, true, err);
		if (idx < 0) {
			r = idx;
			goto err;
		}
		SET_BCH_MEMBER_GROUP(&sb_members(sb)->members[i], idx + 1);
	}

	/* targets: foreground, background, promote */
	if ((r = resolve_target(sb, devs, nr, "--foreground_target",
				opts->foreground_target, &target, err)))
		goto err;
	SET_BCH_SB_FOREGROUND_TARGET(sb, target);
	if ((r = resolve_target(sb, devs, nr, "--background_target",
				opts->background_target, &target, err)))
		goto err;
	SET_BCH_SB_BACKGROUND_TARGET(sb, target);
	if ((r = resolve_target(sb, devs, nr, "--promote_target",
				opts->promote_target, &target, err)))
		goto err;
	SET_BCH_SB_PROMOTE_TARGET(sb, target);

	if (opts->encrypted && (r = build_crypt(&sb, opts, err)))
		goto err;

	*ret = sb;
	return 0;
err:
	free(sb);
	return r;
}

int mkfs_check(struct bch_sb *sb, unsigned nr, struct printbuf *err)
{
	size_t max = (size_t)512 << sb->layout.sb_max_size_bits;
	int ret = 0;

	if (bch_sb_bytes(sb) > max) {
		pr_buf(err, "superblock of %zu bytes does not fit its %zu byte area",
		       bch_sb_bytes(sb), max);
		return -BCH_ERR_sb_too_big;
	}
	for (unsigned i = 0; i < nr && !ret; i++) {
		sb->dev_idx = i;
		ret = bch_sb_validate(sb, err);
	}
	sb->dev_idx = 0;
	if (ret) {
		struct printbuf msg = PRINTBUF;

		pr_buf(&msg, "the new superblock is invalid: %s", printbuf_str(err));
		printbuf_reset(err);
		pr_str(err, printbuf_str(&msg));
		printbuf_exit(&msg);
	}
	return ret;
}

int mkfs_write(struct bch_sb *sb, struct mkfs_dev *devs, unsigned nr,
	       struct printbuf *err)
{
	static const uint8_t zeroes[4096];
	int ret = 0;

	for (unsigned i = 0; i < nr; i++) {
		struct mkfs_dev *d = &devs[i];
		struct printbuf e = PRINTBUF;

		sb->dev_idx = i;
		ret = mkfs_dev_wipe(d, &e);
		if (!ret && le64_to_cpu(sb->layout.sb_offset[0]) == BCH_SB_SECTOR &&
		    (ret = dev_pwrite(d->io, zeroes, sizeof(zeroes), 0)))
			pr_buf(&e, "%s", bch_err_str(ret));
		if (!ret)
			ret = bch_sb_write(d->io, sb, &e);
		if (!ret && (ret = dev_flush(d->io)))
			pr_buf(&e, "flush: %s", bch_err_str(ret));
		if (ret) {
			pr_buf(err, "error writing %s: %s", d->path, printbuf_str(&e));
			if (i)
				pr_buf(err, " (%u device%s before it %s already written)",
				       i, i > 1 ? "s" : "", i > 1 ? "were" : "was");
		}
		printbuf_exit(&e);
		if (ret)
			break;
	}
	return ret;
}
