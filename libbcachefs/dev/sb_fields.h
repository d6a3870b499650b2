/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Superblock fields and names (doc/format.md §2): the accessors of the
 * fields of a superblock and the names of its enums. Included by
 * dev/super.h; the callers include that.
 *
 * Field helpers never trust the bytes: every accessor stays inside the
 * superblock (sb_bytes of a copy that passed bch_sb_check_copy()).
 */
#ifndef BCH_SB_FIELDS_H
#define BCH_SB_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

struct printbuf;

/* The end of the field area: bch_sb_bytes() after the start of @sb. */
static inline const uint8_t *bch_sb_area_end(const struct bch_sb *sb)
{
	return (const uint8_t *)sb + bch_sb_bytes(sb);
}

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

#endif /* BCH_SB_FIELDS_H */
