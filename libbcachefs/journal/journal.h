/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Journal, read side (spec 30 §1-§2): scan the journal buckets of every
 * device, validate entries, pick the newest seq and last_seq, take the
 * btree roots from the newest entry, and keep every key of the entries to
 * replay as an overlay that iterators present over the btree keys.
 */
#ifndef BCH_JOURNAL_H
#define BCH_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/journal_types.h"

struct bch_fs;
struct bch_key;
struct bkey;
struct jset;
struct jset_entry;
struct printbuf;

/* The order of journal_state.keys: btree, level, position, seq, idx. */
int bch_journal_key_cmp(const struct journal_key *l, const struct journal_key *r);

/*
 * Read the journal of every present member of @c. Fills c->journal and
 * c->roots. An empty journal on an initialized filesystem is an error;
 * on a filesystem not yet initialized it is not.
 *
 * Problems that do not stop the read (a corrupt entry skipped, entries
 * missing, a repaired record...) are described in @err, one line each,
 * and counted in c->journal.nr_errors and c->nr_errors; the return value is
 * then 0, so callers should print @err when it is not empty. Errors:
 * -BCH_ERR_journal_empty (no valid entry), -BCH_ERR_journal_invalid
 * (unknown entry version, invalid btree root), -EIO and friends (read
 * errors), -ENOMEM.
 */
int bch_journal_read(struct bch_fs *c, struct printbuf *err);
void bch_journal_free(struct journal_state *j);
/*
 * Lay @nr keys @keys (sorted or not; values are copied) of leaf btree
 * @btree_id over the btrees like journal keys, but older than every key
 * read from the journal (seq 0): what fsck recovers from the node scan is
 * then seen by every iterator, and written into the btrees by the next
 * checkpoint of the update engine (btree_update.h), which takes the
 * journal keys as its overlay.
 */
void bch_journal_keys_add(struct journal_state *j, unsigned btree_id,
			  const struct bkey_ref *keys, size_t nr);

/*
 * Make the journal state of a filesystem whose journal has no usable
 * entry (j->lost) start afresh after @seq: one empty entry seq @seq in
 * memory, last_seq @seq + 1, so that the writer's first entry is @seq + 1
 * and needs nothing older.
 */
void bch_journal_start_fresh(struct journal_state *j, uint64_t seq);

/* Is @seq blacklisted (its btree node bsets must be ignored)? */
bool bch_journal_seq_blacklisted(const struct journal_state *j, uint64_t seq);

/* "journal read done, N keys in M entries, seq S" (no newline). */
void bch_journal_read_done_to_text(struct printbuf *out, const struct journal_state *j);

/* ---- scanning, for list_journal -a and tests ---- */

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

struct journal_scan_entry {
	struct jset_loc		loc;
	unsigned		bucket_idx;	/* ring index */
	enum jset_status	status;
	struct jset		*j;	/* JSET_OK/STALE: decrypted; BAD: raw header */
	const char		*msg;	/* BAD, during the mount's read: what is wrong */
	size_t			bytes;	/* jset_bytes (OK/STALE), else 0 */
	bool			intact;	/* BAD but verified (unknown version): its seq is true */
};

/*
 * Walk every journal bucket of every journal device of @c as the mount
 * does (spec 30 §2.2) and call @fn for every block that holds a jset
 * (OK, BAD or STALE; not for the empty blocks). @fn may modify the jset
 * but not keep the pointer. A non-zero return of @fn stops the scan and is
 * returned.
 */
typedef int (*journal_scan_fn)(void *ctx, const struct journal_scan_entry *e);
int bch_journal_scan(struct bch_fs *c, journal_scan_fn fn, void *ctx,
		     struct printbuf *err);

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
 * reference does (spec 30 §1.4): bad records become empty records, bad
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

#endif
