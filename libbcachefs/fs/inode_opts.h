/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-inode options (spec 10 §7.2, doc/format.md §5.5.2): data_checksum, compression,
 * background_compression, data_replicas and the three targets, stored in the
 * inode's option fields as value + 1 (0 = unset: the filesystem's option).
 * The 2018 core showed them as the extended attributes "bcachefs.NAME"
 * (doc/format.md §5.7): never stored as xattr keys, they read and write the inode.
 * This module turns option names and text values into field values and
 * back; fsops_attr.c and the mount put them behind the xattr calls.
 */
#ifndef BCH_INODE_OPTS_H
#define BCH_INODE_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bkey/inode.h"

struct bch_fs;
struct printbuf;

#define BCH_INODE_OPT_XATTR_PREFIX	"bcachefs."

/* In the order the inode lays out its fields (and listxattr lists them). */
enum bch_inode_opt {
	BCH_INODE_OPT_data_checksum,
	BCH_INODE_OPT_compression,
	BCH_INODE_OPT_background_compression,
	BCH_INODE_OPT_data_replicas,
	BCH_INODE_OPT_promote_target,
	BCH_INODE_OPT_foreground_target,
	BCH_INODE_OPT_background_target,
	BCH_INODE_OPT_NR,
};

/* "compression" ... ; NULL for an id out of range. */
const char *bch_inode_opt_name(unsigned id);

/* The id of option @name (without the prefix), or -1. */
int bch_inode_opt_lookup(const char *name);

/* The stored field (value + 1, 0 = unset) of option @id. */
uint64_t bch_inode_opt_get(const struct bch_inode_unpacked *u, unsigned id);
void bch_inode_opt_set(struct bch_inode_unpacked *u, unsigned id, uint64_t stored);

/*
 * Parse the text @val (@len bytes, no NUL needed) of option @id as the
 * 2018 option parser did: a name of the choice (none, crc32c, crc64 /
 * none, lz4, gzip, zstd), a count 1..3, or a target ("none" or "", a
 * member device's path, a disk group path such as "ssd" or "ssd.fast").
 * Targets need @c's superblock and members. Sets *@stored to the field
 * value (option + 1). -EINVAL, with the reason in @err, otherwise.
 */
int bch_inode_opt_parse(struct bch_fs *c, unsigned id, const void *val, size_t len,
			uint64_t *stored, struct printbuf *err);

/* The text of stored field @stored (> 0) of option @id, as getxattr gives it. */
void bch_inode_opt_to_text(struct printbuf *out, struct bch_fs *c, unsigned id,
			   uint64_t stored);

/*
 * getxattr of "bcachefs.NAME" (@full_name with the prefix): the option's
 * text into @buf (no NUL), its length; with @size 0 just the length.
 * -EINVAL for an unknown option, -ENODATA when the inode does not set it,
 * -ERANGE when @size is too small.
 */
ssize_t bch_inode_opt_xattr_get(struct bch_fs *c, const struct bch_inode_unpacked *u,
				const char *full_name, void *buf, size_t size);

/* listxattr: "bcachefs.NAME\0" for each option @u sets, appended to @out. */
void bch_inode_opts_xattr_list(struct printbuf *out, const struct bch_inode_unpacked *u);

#endif
