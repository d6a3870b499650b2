/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One error space: functions return 0 or a negative error. Errors below
 * BCH_ERR_START are plain errno values; ours extend them, each with a
 * class (an errno) so callers can test bch_err_matches(ret, EINVAL).
 */
#ifndef BCH_ERRCODE_H
#define BCH_ERRCODE_H

#include <errno.h>
#include <stdbool.h>

/*      name                    class           message */
#define BCH_ERRCODES()								\
	x(not_bcachefs,		EINVAL,		"not a bcachefs superblock (bad magic)")	\
	x(sb_bad_version,	EINVAL,		"unsupported superblock version")	\
	x(sb_bad_csum,		EINVAL,		"superblock checksum does not match")	\
	x(sb_bad_csum_type,	EINVAL,		"superblock has an unknown checksum type") \
	x(sb_too_big,		EINVAL,		"superblock larger than its layout allows") \
	x(sb_invalid,		EINVAL,		"superblock is invalid")		\
	x(sb_layout_invalid,	EINVAL,		"superblock layout is invalid")		\
	x(dev_too_small,	EINVAL,		"device smaller than its superblock says") \
	x(format_too_small,	EINVAL,		"device too small to format")	\
	x(fs_mismatch,		EINVAL,		"devices belong to different filesystems") \
	x(dev_missing,		ENXIO,		"member devices are missing")		\
	x(dev_duplicate,	EINVAL,		"the same member device was given twice") \
	x(dev_read_only,	EROFS,		"the device is read-only") \
	x(dev_busy,		EBUSY,		"in use by another process (a mount, or another command that has it open): not opened for writing") \
	x(btree_node_bad_magic,	EIO,		"btree node has a bad magic number")	\
	x(btree_node_bad_csum,	EIO,		"btree node checksum does not match")	\
	x(btree_node_invalid,	EIO,		"btree node is invalid")		\
	x(btree_node_read,	EIO,		"btree node could not be read from any copy") \
	x(btree_node_unverified, EIO,		"no copy of the btree node covering this range verifies (run fsck)") \
	x(journal_bad_csum,	EIO,		"journal entry checksum does not match") \
	x(journal_invalid,	EIO,		"journal entry is invalid")		\
	x(journal_empty,	EIO,		"no valid journal entries found")	\
	x(key_invalid,		EINVAL,		"key is invalid")			\
	x(bad_passphrase,	EKEYREJECTED,	"wrong passphrase")			\
	x(no_passphrase,	ENODATA,	"no passphrase (the input ended before a line was read)") \
	x(no_key,		ENOKEY,		"encryption key not found (run bcachefs unlock, or give the passphrase)") \
	x(not_encrypted,	EINVAL,		"filesystem is not encrypted")		\
	x(csum_mismatch,	EIO,		"data checksum does not match")		\
	x(decompress,		EIO,		"data could not be decompressed")	\
	x(fsck_errors,		EUCLEAN,	"filesystem has errors")		\
	x(read_only,		EROFS,		"filesystem opened read-only")		\
	x(nospc,		ENOSPC,		"no space left on device")	\
	x(sb_removed,		EINVAL,		"removed from its filesystem (device remove): not a member any more")

#define BCH_ERR_START 2048

enum bch_errcode {
	BCH_ERR_first = BCH_ERR_START - 1,
#define x(name, class, msg) BCH_ERR_##name,
	BCH_ERRCODES()
#undef x
	BCH_ERR_MAX
};

/* Message for any error: ours, or strerror() for plain errno values. */
const char *bch_err_str(int err);
/* Does @err (negative or positive) belong to errno class @class? */
bool bch_err_matches(int err, int class);
/* The plain errno an error maps to. */
int bch_err_errno(int err);

#endif
