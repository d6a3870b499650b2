/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing the journal (doc/format.md §6, doc/engine.md §7): build a jset (btree_keys records,
 * btree_root records, blacklist_v2), compact it as the reference does
 * (doc/engine.md §4.3 step 4), fill the header, encrypt and MAC or checksum (doc/format.md §6.4),
 * pad to the block size, and write it at the cursor of the current
 * journal bucket of every device chosen for it (doc/format.md §6.8), with the
 * flush ordering of doc/format.md §6.8: every device flushed before the entry (so the
 * btree nodes it points to are durable), the entry flushed after.
 *
 * seq/last_seq follow the RULE of doc/format.md §6.8 (not the 2018
 * last_seq_ondisk quirk): a bucket is reused only when all its entries are
 * older than the last_seq of the newest durable entry.
 */
#ifndef BCH_JOURNAL_WRITE_H
#define BCH_JOURNAL_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"

struct bch_fs;
struct bch_key;
struct printbuf;

/* ---- building one jset ---- */

struct jset_builder {
	uint64_t	*buf;		/* record area, u64s words */
	size_t		u64s;
	size_t		size;		/* allocated words */
	size_t		last;		/* word offset of the last record (if any) */
	bool		have_last;
};

void jset_builder_init(struct jset_builder *b);
void jset_builder_exit(struct jset_builder *b);

/*
 * Add @keys (unpacked, needs_whiteout cleared) for (@btree_id, @level) as
 * btree_keys records; a record directly following one of the same btree
 * and level is merged into it while it stays <= 65535 u64s (doc/engine.md §4.3).
 * Empty @nr adds nothing. -EINVAL for a bad key header.
 */
int jset_add_keys(struct jset_builder *b, unsigned btree_id, unsigned level,
		  const struct bkey_ref *keys, size_t nr);
/* One btree_root record: the root pointer key @k of a root at @level. */
int jset_add_root(struct jset_builder *b, unsigned btree_id, unsigned level,
		  const struct bkey_ref *k);
/* A blacklist_v2 record [start, end] (must be the first record, doc/engine.md §4.3). */
int jset_add_blacklist_v2(struct jset_builder *b, uint64_t start, uint64_t end);

/* Header values of a jset. */
struct jset_header_h {
	uint64_t		magic;		/* format.h bch_jset_magic() */
	uint64_t		seq;
	uint64_t		last_seq;
	uint16_t		read_clock;
	uint16_t		write_clock;
	unsigned		csum_type;	/* 4 when encrypted, else 0/1/2 */
	const struct bch_key	*key;
};

/*
 * The on-disk bytes of a jset: header, records, encryption, checksum,
 * zero padding to @block_bytes. *@out is malloc'd, *@bytes the padded
 * size. -EINVAL (last_seq > seq, seq 0, bad csum type), -ENOKEY.
 */
int jset_seal(const struct jset_builder *b, const struct jset_header_h *h,
	      unsigned block_bytes, void **out, size_t *bytes, struct printbuf *err);

/* ---- writing entries to the journal buckets ---- */

struct journal_wdev {
	bool		active;		/* present, RW, has journal buckets */
	unsigned	durability;
	unsigned	bucket_size;	/* sectors */
	unsigned	nr;		/* journal buckets */
	uint64_t	*buckets;	/* ring order */
	uint64_t	*bucket_seq;	/* newest seq written per ring index */
	unsigned	cur_idx;
	unsigned	last_idx;	/* oldest ring index still in use */
	bool		have_cursor;	/* a bucket is open for writing */
	uint64_t	cursor;		/* absolute sector of the next write */
	unsigned	sectors_free;	/* left in the open bucket */
};

struct bch_journal_writer {
	struct bch_fs		*c;
	uint64_t		seq;		/* of the newest entry (next = seq + 1) */
	uint64_t		last_seq_ondisk;/* last_seq of the newest durable entry */
	uint16_t		read_clock;
	uint16_t		write_clock;
	unsigned		csum_type;
	unsigned		meta_replicas;
	unsigned		meta_replicas_req;
	unsigned		block_bytes;
	struct journal_wdev	devs[64];
	uint64_t		last_devs;	/* devices the last entry went to */
};

/*
 * Writer for filesystem @c. After a journal read (c->journal.read_done)
 * the ring state, seq (past any blacklist range) and last_seq come from
 * it and every device's journal field; for a new filesystem seq starts
 * at 0 (first entry 1) and devices are added with
 * bch_journal_writer_set_dev(). -BCH_ERR_no_key when encrypted without key.
 */
int bch_journal_writer_init(struct bch_journal_writer *w, struct bch_fs *c,
			    struct printbuf *err);
void bch_journal_writer_exit(struct bch_journal_writer *w);

/*
 * Journal buckets @buckets (ring order) of device @dev that has no entry
 * yet (new journal: cur_idx = last_idx = nr - 1, so the first write goes
 * to ring index 0, doc/format.md §6.1).
 */
int bch_journal_writer_set_dev(struct bch_journal_writer *w, unsigned dev,
			       const uint64_t *buckets, unsigned nr,
			       struct printbuf *err);

/*
 * Write @b as entry seq = w->seq + 1 with @last_seq (0 = the entry's own
 * seq: everything before it is in the btree). Every device is flushed
 * first (what the entry refers to, and the entries before it, are then
 * durable); with @flush the entry itself is flushed after its write (FUA),
 * without it the entry becomes durable with the next flush. Devices are chosen per
 * doc/format.md §6.8 (open cursors first, then devices in index order) until
 * metadata_replicas durability is reached; -EROFS below
 * metadata_replicas_required. On success w->seq is the new seq and
 * w->last_devs the devices written (the caller adds the replicas entry
 * {journal, last_devs}, doc/engine.md §16).
 */
int bch_journal_write(struct bch_journal_writer *w, const struct jset_builder *b,
		      uint64_t last_seq, bool flush, struct printbuf *err);

/*
 * Journal buckets free for new entries (after reclaim), the fewest on any
 * device that takes journal writes; 0 when none does.
 */
unsigned bch_journal_writer_buckets_free(struct bch_journal_writer *w);

#endif
