/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Superblocks (doc/format.md §2, §2.12).
 *
 * Reading: the copy at sector 8 first; if it is bad, the layout at sector 7
 * and every copy it names, first good one wins. A copy is good when its
 * magic, version (7..9), size (against its own layout and the device) and
 * checksum are right; that is all show-super needs. bch_sb_validate() then
 * checks every field (run by the open path before a superblock is used).
 *
 * Writing: bch_sb_write() checksums and writes every copy of the layout.
 *
 * Field helpers never trust the bytes: every accessor stays inside the
 * superblock (sb_bytes of a copy that passed bch_sb_check_copy()).
 *
 * Nothing here prints; problems are described in the @err printbuf, one
 * line each, ending in '\n'.
 */
#ifndef BCH_SUPER_H
#define BCH_SUPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/checksum.h"
#include "format/format.h"

struct bch_devio;
struct printbuf;

/* A superblock read from one device. */
struct bch_sb_handle {
	struct bch_sb	*sb;		/* malloc'd, @bytes long (>= bch_sb_bytes()) */
	size_t		bytes;
	uint64_t	offset;		/* sector it was read from */
	bool		from_backup;	/* the copy at sector 8 was bad */
	struct bch_sb_layout layout;	/* the layout that located it */
};

void bch_sb_handle_free(struct bch_sb_handle *h);

/* ---- reading ------------------------------------------------------------ */

/*
 * Check one copy held in @buf (@len bytes were read at sector @sector):
 * magic, version, size against its layout and @len, checksum type and
 * checksum. Returns 0 or -BCH_ERR_not_bcachefs, -BCH_ERR_sb_bad_version,
 * -BCH_ERR_sb_too_big, -BCH_ERR_sb_bad_csum_type, -BCH_ERR_sb_bad_csum;
 * -BCH_ERR_sb_invalid when @len is shorter than the copy says (the caller
 * reads more and calls again). The reason goes to @err (no newline,
 * no location: the caller says where).
 */
int bch_sb_check_copy(const void *buf, size_t len, struct printbuf *err);

/* Checksum of a superblock copy with its own CSUM_TYPE (CRC types only). */
int bch_sb_csum(const struct bch_sb *sb, struct bch_csum_val *out);

/* Validate a layout (doc/format.md §2.2). Reason in @err (no newline). */
int bch_sb_layout_validate(const struct bch_sb_layout *l, struct printbuf *err);

/*
 * Read and check the copy at @sector of @io into *@ret (the size check
 * against the layout is the copy's own). Reason in @err, no newline.
 */
int bch_sb_read_at(struct bch_devio *io, uint64_t sector,
		   struct bch_sb_handle *ret, struct printbuf *err);

/*
 * Read the superblock of @io as doc/format.md §2.12 says: sector 8, else the
 * layout at sector 7 and its copies. Each failure is described in @err as
 * a full line ("<dev>: superblock at sector 8: bad checksum ...\n"), also
 * when a backup then works (h->from_backup tells). Returns 0 or the error of
 * the last attempt.
 */
int bch_sb_read(struct bch_devio *io, struct bch_sb_handle *ret, struct printbuf *err);
/*
 * (A device removed from its filesystem: -BCH_ERR_sb_removed, and one line
 * "<dev>: removed from filesystem UUID: not a member any more (format it
 * to reuse it)".)
 */

/*
 * The same for a superblock that is to be used (the open path): a copy
 * must also pass bch_sb_validate(), so a primary that reads but is invalid
 * falls back to the backups like one with a bad checksum ("...: invalid
 * superblock: ...; using the backup at sector N").
 */
int bch_sb_read_valid(struct bch_devio *io, struct bch_sb_handle *ret, struct printbuf *err);

/* ---- validation --------------------------------------------------------- */

/*
 * Full validation (doc/format.md §2.13 and doc/format.md §2.5) of a copy that passed
 * bch_sb_check_copy(). First problem wins; it is described in @err as one
 * line without newline: which field, which entry, the value and the
 * allowed range. Returns 0, -BCH_ERR_sb_invalid or -BCH_ERR_sb_layout_invalid.
 */
int bch_sb_validate(const struct bch_sb *sb, struct printbuf *err);

/* Per-field validators (used by bch_sb_validate; exposed for tests). */
int bch_sb_validate_members(const struct bch_sb *sb, struct printbuf *err);
int bch_sb_validate_journal(const struct bch_sb *sb, struct printbuf *err);
int bch_sb_validate_crypt(const struct bch_sb *sb, const struct bch_sb_field *f,
			  struct printbuf *err);
int bch_sb_validate_replicas(const struct bch_sb *sb, const struct bch_sb_field *f,
			     struct printbuf *err);
int bch_sb_validate_quota(const struct bch_sb *sb, const struct bch_sb_field *f,
			  struct printbuf *err);
int bch_sb_validate_disk_groups(const struct bch_sb *sb, const struct bch_sb_field *f,
				struct printbuf *err);

/*
 * The in-memory fix-ups of doc/format.md §2.13 steps 2, 24 and doc/format.md §2.7 for a copy
 * of version 7 or 8 (ENCODED_EXTENT_MAX_BITS, POSIX_ACL, DATA_ALLOWED,
 * version = 9). Only for superblocks that are used, never for printing.
 */
void bch_sb_upgrade_in_memory(struct bch_sb *sb);

/* ---- writing ------------------------------------------------------------ */

/*
 * Write @sb to every copy of its embedded layout on @io: for each offset,
 * set sb->offset, compute the checksum (CSUM_TYPE, CRC types only), write
 * 752 + 8 * u64s bytes; the copy at sector 8 also rewrites the layout at
 * sector 7, each copy flushed before the next is written (a crash tears
 * one copy at most). @sb is modified (offset, csum: those of the last copy).
 * The superblock is validated first; nothing is written if it is invalid.
 */
int bch_sb_write(struct bch_devio *io, struct bch_sb *sb, struct printbuf *err);

/*
 * Mark @io as removed from its filesystem (device remove): in every copy
 * @l lists, the magic and the layout's magic zeroed and the checksum
 * computed again; the layout at sector 7 has its magic zeroed. No tool
 * takes it for a member any more; bch_sb_read() says "removed from
 * filesystem UUID" (-BCH_ERR_sb_removed). Returns the first I/O error.
 */
int bch_sb_mark_removed(struct bch_devio *io, const struct bch_sb_layout *l);

/* ---- field helpers ------------------------------------------------------ */

/* First field of @type whose header and body lie inside the superblock. */
const struct bch_sb_field *bch_sb_field_find(const struct bch_sb *sb, unsigned type);

/* Do all fields lie inside the variable area with u64s != 0? */
bool bch_sb_fields_ok(const struct bch_sb *sb);

const struct bch_sb_field_members *bch_sb_members(const struct bch_sb *sb);
/* Member @idx (< nr_devices and inside the members field) or NULL. */
const struct bch_member *bch_sb_member(const struct bch_sb *sb, unsigned idx);
/* Does member @idx exist (slot present, uuid non-zero)? */
bool bch_sb_member_exists(const struct bch_sb *sb, unsigned idx);
/* Index of the member with uuid @uuid, or -1. */
int bch_sb_member_find(const struct bch_sb *sb, const uint8_t uuid[16]);
/* Members with a non-zero uuid among the first nr_devices. */
unsigned bch_sb_nr_live_members(const struct bch_sb *sb);

/* Journal buckets of this device's superblock: count, and bucket @i. */
size_t bch_sb_journal_nr_buckets(const struct bch_sb *sb);
uint64_t bch_sb_journal_bucket(const struct bch_sb *sb, size_t i);

const struct bch_sb_field_crypt *bch_sb_crypt(const struct bch_sb *sb);

/* Replicas entries, in on-disk order; stops at data_type 0, the end of
 * the field, or an entry that does not fit. */
struct bch_replicas_iter {
	const uint8_t	*p;
	const uint8_t	*end;
};

/* A replicas iterator over the entries of field @f (NULL: none). */
struct bch_sb_field;
void bch_sb_replicas_iter_field(struct bch_replicas_iter *it, const struct bch_sb_field *f);
void bch_sb_replicas_iter_init(struct bch_replicas_iter *it, const struct bch_sb *sb);
const struct bch_replicas_entry *bch_sb_replicas_next(struct bch_replicas_iter *it);
/* Data types (bitmask, bit t = data type t) with entries naming @dev. */
unsigned bch_sb_dev_has_data(const struct bch_sb *sb, unsigned dev);

/*
 * Label of disk group @idx (0-based) into @out (NUL-terminated, at most 32
 * bytes): 0, or -ENOENT when there is no such group.
 */
int bch_sb_disk_group_label(const struct bch_sb *sb, unsigned idx, char out[33]);
/* Parent of group @idx as stored (index + 1; 0 = none, or no such group). */
unsigned bch_sb_disk_group_parent(const struct bch_sb *sb, unsigned idx);
/* Full path "a.b.c" of group @idx, or "invalid group N". */
void bch_sb_disk_group_path(struct printbuf *out, const struct bch_sb *sb, unsigned idx);

/* Is sector range [start, end) inside a superblock area of @sb's layout? */
bool bch_sb_range_in_sb_area(const struct bch_sb *sb, uint64_t start, uint64_t end);

/*
 * Next field after @f (NULL = the first), or NULL at the end of the area
 * or at a field that is empty or overruns it.
 */
const struct bch_sb_field *bch_sb_field_next_safe(const struct bch_sb *sb,
						  const struct bch_sb_field *f);
#define for_each_sb_field_safe(_f, _sb)					\
	for ((_f) = bch_sb_field_next_safe(_sb, NULL); (_f);		\
	     (_f) = bch_sb_field_next_safe(_sb, _f))

/* ---- names -------------------------------------------------------------- */

const char *bch_sb_field_name(unsigned type);		/* NULL if unknown */
int bch_sb_field_type_parse(const char *name);		/* -1 if unknown */
const char *bch_data_type_name(unsigned type);		/* NULL if unknown */
const char *bch_member_state_name(unsigned state);	/* "unknown" */
const char *bch_replacement_name(unsigned r);		/* "unknown" */
const char *bch_error_action_name(unsigned a);		/* "unknown" */
const char *bch_csum_opt_name(unsigned o);		/* "unknown" */
const char *bch_compression_opt_name(unsigned o);	/* "unknown" */
const char *bch_str_hash_name(unsigned h);		/* "unknown" */

#endif /* BCH_SUPER_H */
