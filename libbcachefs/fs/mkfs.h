/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Building a new filesystem: the superblock(s) `format` writes (doc/tools.md §2,
 * doc/tools.md §2.2, §2.1, §2). In this version format writes superblocks and the layout
 * only; the filesystem is initialised (journal, btree roots, root inode) on
 * first open, so INITIALIZED = 0 (doc/format.md §2.15, doc/engine.md §13).
 *
 * The steps, each usable on its own (tests, migrate):
 *
 *   mkfs_opts_init(), mkfs_dev_opts_init()   defaults (doc/tools.md §2.1)
 *   mkfs_parse_*()                           option values -> numbers
 *   mkfs_dev_open()                          open + size/block size of a device
 *   mkfs_geometry()                          block, bucket, btree node sizes
 *   mkfs_build_sb()                          the superblock, in memory
 *   mkfs_check()                             everything that can fail, before
 *                                            the first byte is written
 *   mkfs_write()                             zero bytes 0..4095, layout, copies
 *
 * Nothing is written before mkfs_write(); everything it needs was checked
 * by mkfs_check(). Errors: 0 or a negative error (errcode.h); the message,
 * one line without newline, naming the device or option and the allowed
 * range, goes to @err. -EINVAL always means "an option value, or a
 * combination of them, is not allowed" (the command makes it a usage
 * error); -BCH_ERR_format_too_small a device too small for the geometry;
 * anything else a failure of the device or the system.
 *
 * Uses super.h for validation (bch_sb_validate) and writing (bch_sb_write),
 * mounted.h to refuse mounted devices, crypto.h for the master key.
 */
#ifndef BCH_MKFS_H
#define BCH_MKFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bch_devio;
struct bch_sb;
struct bch_sb_layout;
struct printbuf;

/* Default DATA_ALLOWED: journal, btree, user data (bits 2, 3, 4). */
#define MKFS_DATA_ALLOWED_DEFAULT	((1U << 2) | (1U << 3) | (1U << 4))
/* Bits DATA_ALLOWED can hold: 5 (none, sb, journal, btree, data). */
#define MKFS_DATA_ALLOWED_MASK		0x1fU

#define MKFS_DURABILITY_MAX		2	/* stored + 1 in a 2-bit field */
#define MKFS_REPLICAS_MAX		3	/* what validation accepts */
#define MKFS_BLOCK_SIZE_MAX		8	/* sectors: validation limit (4 KiB) */
#define MKFS_BTREE_NODE_SIZE_MAX	2048	/* sectors (1 MiB) */
#define MKFS_BTREE_NODE_SIZE_DEFAULT	512	/* sectors (256 KiB), capped by buckets */
#define MKFS_BUCKET_SIZE_MAX		65535	/* sectors: 16-bit member field */
#define MKFS_BUCKET_SIZE_AUTO_MAX	2048	/* sectors (1 MiB) */
/*
 * A btree node holds its header bset and at least one more: a new root is
 * an empty bset, then its keys (doc/engine.md §13), each starting on a block.
 */
#define MKFS_NODE_MIN_BLOCKS		2
#define MKFS_DISK_GROUPS_MAX		255	/* member GROUP is index + 1 in 8 bits */
#define MKFS_GROUP_DEPTH_MAX		32	/* printing follows at most 32 parents */
#define MKFS_SB_AREA_START		8	/* sectors: superblocks live in [8, 264) */
#define MKFS_SB_AREA_END		(8 + 256)

/* Per-device options; they apply to the devices that follow (doc/tools.md §2.1). */
struct mkfs_dev_opts {
	uint64_t	fs_size;	/* sectors to use; 0 = the whole device */
	unsigned	bucket_size;	/* sectors; 0 = automatic (doc/tools.md §2.2) */
	const char	*group;		/* disk group path "a.b"; NULL = none */
	bool		discard;
	unsigned	data_allowed;	/* bit t = data type t (MKFS_DATA_ALLOWED_MASK) */
	unsigned	durability;	/* 0..MKFS_DURABILITY_MAX */
};

/* One device to format. */
struct mkfs_dev {
	const char		*path;		/* as given (targets compare it) */
	struct mkfs_dev_opts	opts;
	uint8_t			uuid[16];	/* member uuid; zero = random */

	/* From the device (mkfs_dev_open(), or set by hand in tests): */
	struct bch_devio	*io;		/* NULL: nothing to write (tests) */
	uint64_t		dev_size;	/* sectors */
	unsigned		dev_block_size;	/* sectors: preferred block size */
	unsigned		dev_min_block_size; /* sectors: logical block size */

	/* From mkfs_geometry(): */
	uint64_t		size;		/* sectors used */
	unsigned		bucket_size;	/* sectors */
	uint64_t		nbuckets;
};

/* Filesystem-wide options (doc/tools.md §2.1). */
struct mkfs_opts {
	unsigned	block_size;		/* sectors; 0 = from the devices */
	unsigned	btree_node_size;	/* sectors; 0 = automatic */
	unsigned	meta_csum;		/* csum option: 0 none, 1 crc32c, 2 crc64 */
	unsigned	data_csum;
	unsigned	compression;		/* 0 none, 1 lz4, 2 gzip, 3 zstd */
	unsigned	background_compression;
	unsigned	meta_replicas;		/* 1..3 */
	unsigned	data_replicas;
	unsigned	meta_replicas_req;
	unsigned	data_replicas_req;
	unsigned	error_action;		/* 0 continue, 1 remount-ro, 2 panic */
	unsigned	str_hash;		/* 0 crc32c, 1 crc64, 2 siphash */
	unsigned	gc_reserve;		/* percent, 5..20 */
	unsigned	root_reserve;		/* percent, 0..99 */
	bool		acl;
	bool		usrquota, grpquota, prjquota;
	bool		inodes_32bit;
	bool		wide_macs;
	const char	*foreground_target;	/* device path or group path; NULL = none */
	const char	*background_target;
	const char	*promote_target;
	const char	*label;			/* at most 32 bytes; NULL = empty */
	uint8_t		user_uuid[16];		/* zero = random */

	bool		encrypted;
	const char	*passphrase;		/* NULL: store the key unencrypted */
	size_t		passphrase_len;

	/* Inputs that are normally random or the clock (zero = generate). */
	uint8_t		uuid[16];		/* internal uuid */
	uint64_t	time_base;		/* ns since the epoch */
	const uint8_t	*master_key;		/* 32 bytes; NULL = random */
};

void mkfs_opts_init(struct mkfs_opts *opts);
void mkfs_dev_opts_init(struct mkfs_dev_opts *opts);

/* ---- option values ------------------------------------------------------ */

/*
 * Parse the value of one option (doc/tools.md §1.2, §2.1). Returns 0 or -EINVAL /
 * -ERANGE with a message in @err naming @opt (e.g. "--block_size") and what
 * is allowed. Sizes are sectors.
 */
int mkfs_parse_block_size(const char *opt, const char *arg, unsigned *ret, struct printbuf *err);
int mkfs_parse_btree_node_size(const char *opt, const char *arg, unsigned *ret, struct printbuf *err);
int mkfs_parse_bucket_size(const char *opt, const char *arg, unsigned *ret, struct printbuf *err);
int mkfs_parse_fs_size(const char *opt, const char *arg, uint64_t *ret, struct printbuf *err);
int mkfs_parse_csum(const char *opt, const char *arg, unsigned *ret, struct printbuf *err);
int mkfs_parse_compression(const char *opt, const char *arg, unsigned *ret, struct printbuf *err);
int mkfs_parse_error_action(const char *opt, const char *arg, unsigned *ret, struct printbuf *err);
int mkfs_parse_str_hash(const char *opt, const char *arg, unsigned *ret, struct printbuf *err);
int mkfs_parse_replicas(const char *opt, const char *arg, unsigned *ret, struct printbuf *err);
int mkfs_parse_durability(const char *opt, const char *arg, unsigned *ret, struct printbuf *err);
int mkfs_parse_data_allowed(const char *opt, const char *arg, unsigned *ret, struct printbuf *err);
/* Decimal in [min, max]. */
int mkfs_parse_uint(const char *opt, const char *arg, unsigned min, unsigned max,
		    unsigned *ret, struct printbuf *err);
/* 36-character uuid text; the nil uuid (all zero) is refused. */
int mkfs_parse_uuid(const char *opt, const char *arg, uint8_t uuid[16], struct printbuf *err);
/* A disk group path: components of 1..32 bytes separated by '.', one
 * trailing '.' allowed, at most MKFS_GROUP_DEPTH_MAX deep. */
int mkfs_check_group_path(const char *opt, const char *path, struct printbuf *err);
/* Label: at most 32 bytes. */
int mkfs_check_label(const char *opt, const char *label, struct printbuf *err);

/*
 * The configuration can hold what it must, checked before any device is
 * opened: for the journal, btree nodes and file data, some device allows
 * it (--data_allowed) with a durability above 0, and the durability of
 * those devices together reaches the wanted replicas (a device counts
 * once, with its durability). -EINVAL (a usage error) saying why.
 */
int mkfs_check_config(const struct mkfs_opts *opts, const struct mkfs_dev *devs,
		      unsigned nr, struct printbuf *err);

/* ---- devices ------------------------------------------------------------ */

/*
 * Open @dev->path for formatting: read-write, exclusive for block devices,
 * never created. Refuses a device that is mounted or in use, and fills
 * dev_size and the block sizes (doc/tools.md §2.2: physical block size of a
 * block device, st_blksize of a regular file).
 */
int mkfs_dev_open(struct mkfs_dev *dev, struct printbuf *err);
void mkfs_dev_close(struct mkfs_dev *dev);

/*
 * What the device already holds: "" when nothing was found, else a
 * description such as "an ext4 filesystem labelled 'x'", "a dos partition
 * table" or "a bcachefs filesystem" (our own check of the superblock magic
 * at sector 8 and of the layout at sector 7, plus libblkid). 0 or an error
 * (the probe failed).
 */
int mkfs_dev_probe(struct mkfs_dev *dev, struct printbuf *what, struct printbuf *err);

/* ---- geometry ----------------------------------------------------------- */

/*
 * Block size (doc/tools.md §2.2), bucket size and nbuckets of each device
 * (doc/tools.md §2.2), btree node size (doc/tools.md §2.2). Fills opts->block_size,
 * opts->btree_node_size (if 0) and dev->size, bucket_size, nbuckets.
 * Errors: a device too small, too few buckets, inconsistent sizes.
 */
int mkfs_geometry(struct mkfs_opts *opts, struct mkfs_dev *devs, unsigned nr,
		  struct printbuf *err);

/*
 * Superblock layout for block size @bs in the sector range [start, end)
 * (doc/format.md §2.2, quirks included). -ENOSPC "insufficient space for
 * superblocks" when it does not fit.
 */
int mkfs_layout(unsigned bs, uint64_t start, uint64_t end,
		struct bch_sb_layout *l, struct printbuf *err);

/* ---- the superblock ----------------------------------------------------- */

/*
 * Build the superblock for @devs (geometry already computed): members,
 * disk groups, targets, crypt (doc/tools.md §2.3). *@ret is malloc'd (free()),
 * with dev_idx 0, offset 8, csum zero; the caller sets dev_idx per device.
 * Fills the zero uuids of @opts and @devs with the random ones used.
 */
int mkfs_build_sb(struct mkfs_opts *opts, struct mkfs_dev *devs, unsigned nr,
		  struct bch_sb **ret, struct printbuf *err);

/*
 * Find a disk group by path (@create: find-or-create, doc/format.md §2.11) in
 * *@sb, which may be reallocated (the disk_groups field is added or grown).
 * Returns the group index (>= 0) or a negative error; -ENOENT when !@create
 * and it does not exist.
 */
int mkfs_disk_group(struct bch_sb **sb, const char *path, bool create,
		    struct printbuf *err);

/*
 * Resolve a target (doc/tools.md §2.3): "" or "none" -> 0; a device path as
 * given -> 1 + index; a group path -> 257 + group index. -EINVAL if none.
 */
int mkfs_target(const struct bch_sb *sb, const struct mkfs_dev *devs, unsigned nr,
		const char *name, unsigned *ret, struct printbuf *err);

/*
 * Everything mkfs_write() relies on: the superblock passes full validation
 * for every device index, and fits its layout. Nothing is written.
 */
int mkfs_check(struct bch_sb *sb, unsigned nr, struct printbuf *err);

/*
 * Write @sb to each device in order (doc/format.md §2.14): zero bytes 0..4095,
 * the layout at sector 7 and every copy with its own offset and checksum,
 * then flush. @sb's dev_idx, offset and csum are changed.
 */
int mkfs_write(struct bch_sb *sb, struct mkfs_dev *devs, unsigned nr,
	       struct printbuf *err);

/* Names of the choices, for messages and help. */
extern const char * const mkfs_csum_names[];		/* none crc32c crc64 */
extern const char * const mkfs_compression_names[];	/* none lz4 gzip zstd */
extern const char * const mkfs_error_action_names[];	/* continue remount-ro panic */
extern const char * const mkfs_str_hash_names[];	/* crc32c crc64 siphash */
extern const char * const mkfs_data_type_names[];	/* none sb journal btree data cached */

#endif /* BCH_MKFS_H */
