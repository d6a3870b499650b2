/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Key types of every btree: names, validation and printing (text in the
 * format of the 2018 `list` command, doc/tools.md §4, and JSON).
 *
 * One table per btree (bkey_types.c) gives the type names and three
 * operations: the value check ("invalid" reason or NULL), the text printer
 * and the JSON printer. Keys of interior nodes (level > 0) and of journal
 * btree_root entries are btree pointers whatever the btree.
 */
#ifndef BCH_BKEY_TYPES_H
#define BCH_BKEY_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "bkey/bkey.h"

struct json;
struct printbuf;

struct bkey_print_ctx {
	const struct bkey_fs_ctx *fs;	/* may be NULL */
	/*
	 * 2018 `list -m nodes` printed interior-node keys with the leaf
	 * printer of the btree (so extents pointers showed "invalid: zero
	 * key size"); set this to reproduce it.
	 */
	bool		interior_as_leaf;
	/* Cut the line to this many bytes (the 2018 list used 511); 0 = no limit. */
	unsigned	max_len;
};

/* Btree names: "extents", "inodes", "dirents", "xattrs", "alloc", "quotas". */
const char *bch_btree_id_str(unsigned id);	/* "(unknown btree)" if out of range */
int bch_btree_id_parse(const char *name);	/* id, or -EINVAL */

/* Name of key type @type in @btree_id ("extent", "inode", "deleted", ...), NULL if unknown. */
const char *bch_bkey_type_str(unsigned btree_id, unsigned level, unsigned type);

/*
 * Header checks of doc/format.md §3.3 items 2-4 (size, snapshot, POS_MAX);
 * item 1 is checked by bkey_unpack, item 5 needs the node's range.
 * Returns the reason or NULL.
 */
const char *bch_bkey_header_invalid(unsigned btree_id, unsigned level, const struct bkey_h *k);

/* Value check by type (doc/format.md §3.3 step 6, chapter 40). Reason or NULL. */
const char *bch_bkey_val_invalid(unsigned btree_id, unsigned level,
				 const struct bkey_ref *k, const struct bkey_fs_ctx *fs);

/*
 * Both checks. Returns 0, or -BCH_ERR_key_invalid with
 * "<btree> key <inode>:<offset> (type N): <reason>" in @err (may be NULL).
 */
int bch_bkey_validate(unsigned btree_id, unsigned level, const struct bkey_ref *k,
		      struct printbuf *err);
int bch_bkey_validate_fs(unsigned btree_id, unsigned level, const struct bkey_ref *k,
			 const struct bkey_fs_ctx *fs, struct printbuf *err);

/*
 * The key line of the 2018 `list`:
 * "u64s N type T inode:offset snap S len L ver V: <value>".
 * As in 2018 the line ends at the first NUL byte of the value (dirent
 * names, xattr names and values are copied raw). No newline is added.
 */
void bch_bkey_to_text(struct printbuf *out, unsigned btree_id, unsigned level,
		      const struct bkey_ref *k, const struct bkey_print_ctx *ctx);
/* Just the value text (what follows ": "). */
void bch_bkey_val_to_text(struct printbuf *out, unsigned btree_id, unsigned level,
			  const struct bkey_ref *k, const struct bkey_print_ctx *ctx);

/* The same information as a JSON object with named fields. */
void bch_bkey_to_json(struct json *j, unsigned btree_id, unsigned level,
		      const struct bkey_ref *k, const struct bkey_print_ctx *ctx);

/* Position text as 2018 printed it: "inode:offset", or "POS_MAX". */
void bch_bpos_to_text(struct printbuf *out, struct bpos_h p);

/* ---- small values ---- */

struct bch_alloc_h {
	uint8_t		fields;
	uint8_t		gen;
	bool		has_read_time, has_write_time;
	uint16_t	read_time, write_time;
};

/* Decode an alloc value (btree 4 type 128). 0 or -BCH_ERR_key_invalid. */
int bch_alloc_decode(const struct bkey_ref *k, struct bch_alloc_h *a);

struct bch_quota_h {
	uint64_t	space_hardlimit, space_softlimit;
	uint64_t	inodes_hardlimit, inodes_softlimit;
};

int bch_quota_decode(const struct bkey_ref *k, struct bch_quota_h *q);

#endif
