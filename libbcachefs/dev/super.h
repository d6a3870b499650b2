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
 * Field helpers (dev/sb_fields.h, included here) never trust the bytes:
 * every accessor stays inside the superblock (sb_bytes of a copy that
 * passed bch_sb_check_copy()).
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
#include "dev/sb_fields.h"

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

/* ---- the superblock area ------------------------------------------------ */

/* Is sector range [start, end) inside a superblock area of @sb's layout? */
bool bch_sb_range_in_sb_area(const struct bch_sb *sb, uint64_t start, uint64_t end);

#endif /* BCH_SUPER_H */
