/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the journal read leaves in the open filesystem (struct bch_fs's
 * journal): the entries kept, the keys to replay, the per-device rings.
 * Types only, below the journal layer so that the filesystem object
 * (core/bch_fs.h) can hold them; the code is in journal/.
 */
#ifndef BCH_JOURNAL_TYPES_H
#define BCH_JOURNAL_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"

#define JOURNAL_MAX_DEVS	64	/* = BCH_FS_MAX_DEVS */

/* One journal entry (jset) kept in memory, decrypted and validated. */
struct journal_entry_h {
	uint64_t		seq;
	uint64_t		last_seq;
	unsigned		dev;		/* where it was read from */
	uint64_t		sector;
	void			*data;		/* the whole jset (malloc'd) */
	size_t			bytes;
	unsigned		nr_devs;	/* devices holding a copy */
	uint64_t		dev_mask;	/* bit i: a copy is on device i */
	uint64_t		bucket;		/* bucket number of the first copy */
};

/* A key to replay, in the order iterators need them. */
struct journal_key {
	unsigned		btree_id;
	unsigned		level;
	struct bkey_ref		k;		/* points into its entry's data */
	uint64_t		seq;		/* entry seq: higher wins */
	unsigned		idx;		/* position inside the entry: later wins */
};

struct journal_state {
	struct journal_entry_h	*entries;	/* sorted by seq */
	size_t			nr_entries;
	uint64_t		seq;		/* newest seq found */
	uint64_t		last_seq;	/* oldest entry still needed */
	/*
	 * Keys of the entries from last_seq to seq, sorted by
	 * (btree_id, level, pos, seq, idx); for extents by end position.
	 */
	struct journal_key	*keys;
	size_t			nr_keys;
	/* blacklisted seq ranges (start, end inclusive) */
	struct { uint64_t start, end; } *blacklist;
	size_t			nr_blacklist;

	/* bucket clock hands of the newest entry */
	uint16_t		read_clock;
	uint16_t		write_clock;
	/* problems found while reading (each with a line in the err printbuf) */
	unsigned long		nr_errors;
	bool			read_done;	/* bch_journal_read() ran */
	/*
	 * fsck only (bch_fs_opts.fsck): no entry could be used, so the btrees
	 * have no roots; entries[] holds one empty entry made in memory so
	 * that a new journal can start after it (bch_journal_start_fresh()).
	 * The roots are recovered by the node scan (node_scan.h).
	 */
	bool			lost;
	/* newest seq in any entry header seen, usable or bad (below 2^48; 0: none) */
	uint64_t		max_seq_seen;
	/* values of the keys added by bch_journal_keys_add() */
	void			**added;
	size_t			nr_added;

	/* per device ring state, for the writer (doc/format.md §6.5) */
	struct journal_dev_h {
		unsigned	nr_buckets;	/* journal buckets of this device */
		unsigned	cur_idx;	/* ring index holding the newest entry */
		uint64_t	*bucket_seq;	/* newest seq per ring index (0 = none) */
	} devs[JOURNAL_MAX_DEVS];
};

#endif
