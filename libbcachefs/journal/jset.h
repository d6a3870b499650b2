/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One journal entry (jset) read from disk: its header checked, its
 * checksum or MAC verified and the entry decrypted, its records
 * validated and repaired in memory (jset.c). Pure functions over bytes;
 * the journal read (journal.h) walks the buckets and keeps the entries.
 */
#ifndef BCH_JSET_H
#define BCH_JSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"

struct bch_key;
struct bkey;
struct jset;
struct printbuf;

enum jset_status {
	JSET_OK		= 0,	/* valid (decrypted, records validated) */
	JSET_NONE	= 1,	/* no jset here (magic differs) */
	JSET_BAD	= 2,	/* corrupt: too big, bad csum type, bad checksum */
	JSET_STALE	= 3,	/* valid but older than the bucket's entries: ends the bucket */
};

const char *jset_status_str(enum jset_status s);

/* Where a jset was found, for messages. */
struct jset_loc {
	unsigned	dev;
	uint64_t	bucket;
	uint64_t	sector;		/* absolute device sector */
};

/* ---- checking one jset (pure functions over bytes; unit tested) ---- */

/*
 * Check the header of the jset at @j, of which @left bytes up to the end of
 * its bucket are readable (at least 56). Returns JSET_NONE, JSET_BAD (reason
 * in @err) or JSET_OK with *@bytes = jset_bytes. @have_key: an encryption
 * checksum type is acceptable.
 */
int bch_jset_check_header(const struct jset *j, size_t left, uint64_t magic,
			  bool have_key, struct jset_loc loc,
			  struct printbuf *err, size_t *bytes);

/*
 * Verify the checksum/MAC of the @bytes-byte jset at @j, check its version,
 * and decrypt it in place. Returns JSET_OK, JSET_BAD (reason in @err) or
 * -BCH_ERR_journal_invalid for an intact entry of an unknown version. Fixes
 * last_seq > seq (with a message).
 */
int bch_jset_verify(struct jset *j, size_t bytes, const struct bch_key *key,
		    struct jset_loc loc, struct printbuf *err);

/*
 * Validate the records of a verified jset and repair them in place as the
 * reference does (doc/format.md §6.3): bad records become empty records, bad
 * keys are dropped, an overrunning record cuts the jset. Afterwards every
 * record and key lies inside the jset and every key of btree_keys and
 * btree_root records is an unpacked key of at least 5 u64s. Returns the
 * number of problems found (each described in @err).
 */
unsigned bch_jset_validate_entries(struct jset *j, struct jset_loc loc,
				   struct printbuf *err);

/* Name of a record type ("btree_keys", ...), or NULL. */
const char *jset_entry_type_str(unsigned type);

/*
 * Iterate the records of a validated jset, and the keys of a validated
 * btree_keys/btree_root record (as struct bkey pointers).
 */
#define for_each_jset_entry(_e, _j)					\
	for ((_e) = jset_entries_start(_j);				\
	     (_e) < jset_entries_end(_j);				\
	     (_e) = jset_entry_next(_e))

#define for_each_jset_entry_key(_k, _e)					\
	for ((_k) = jset_entry_keys_start(_e);				\
	     (_k) < jset_entry_keys_end(_e);				\
	     (_k) = (struct bkey *)bkey_next((struct bkey_packed *)(_k)))

/* The host-order key at @k (a validated unpacked journal key). */
struct bkey_ref journal_bkey_ref(const struct bkey *k);

/* "journal: dev D bucket B sector S" of @loc, for messages. */
void bch_jset_loc_to_text(struct printbuf *out, struct jset_loc loc);

#endif
