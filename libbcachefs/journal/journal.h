/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Journal, read side (doc/format.md §6, doc/engine.md §2.4): scan the journal buckets of every
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
#include "journal/jset.h"

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
 * does (doc/format.md §6.5) and call @fn for every block that holds a jset
 * (OK, BAD or STALE; not for the empty blocks). @fn may modify the jset
 * but not keep the pointer. A non-zero return of @fn stops the scan and is
 * returned.
 */
typedef int (*journal_scan_fn)(void *ctx, const struct journal_scan_entry *e);
int bch_journal_scan(struct bch_fs *c, journal_scan_fn fn, void *ctx,
		     struct printbuf *err);

#endif
