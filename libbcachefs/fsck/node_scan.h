/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node scan: find the btree nodes on the member devices without the
 * pointers to them (doc/format.md §4.1-§4.4), for fsck when pointers are lost
 * (a root missing or unreadable, an interior node unreadable, a journal
 * that gives no roots).
 *
 * bch_node_scan() reads every bucket of every present member but its
 * journal buckets, in large sequential reads (the holes of a sparse image
 * are skipped, they hold nothing). Every node-sized slot of a bucket whose
 * magic is this filesystem's and whose first bset verifies (checksum, or
 * MAC when encrypted) is a node: its header (decrypted) names the btree,
 * level and key range; of its later bsets, those that verify and are not
 * blacklisted by the journal give the newest journal seq of its keys.
 * Copies of one node on several devices count once.
 *
 * bch_node_scan_keys() gives the keys of a key range of one btree from the
 * leaves found, newest leaf first: by the highest journal seq of its bsets,
 * then by BTREE_NODE_SEQ (bulk.h stamps both with the journal seq at the
 * write, and a rewrite always comes after a later journal entry), and each
 * leaf gives only the keys of the part of its range that no newer leaf
 * covers. An older copy of a range that was rewritten, still on the disk
 * until its bucket is reused, so gives nothing back.
 */
#ifndef BCH_NODE_SCAN_H
#define BCH_NODE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "btree/btree.h"
#include "format/format.h"

struct bch_fs;
struct bulk_keys;
struct printbuf;

/* One node found. */
struct scanned_node {
	struct bpos_h		min_key;
	struct bpos_h		max_key;
	uint64_t		seq;		/* bset seq */
	uint64_t		journal_seq;	/* newest of its usable bsets */
	uint32_t		node_seq;	/* BTREE_NODE_SEQ */
	uint8_t			btree_id;
	uint8_t			level;
	uint8_t			nr_copies;
	struct {
		uint8_t		dev;
		uint64_t	sector;
	}			copy[BCH_REPLICAS_MAX];
};

struct bch_node_scan {
	struct scanned_node	*n;		/* sorted by btree, level, min_key */
	size_t			nr, size;
	/* nodes found per btree and level */
	unsigned long		found[BTREE_ID_NR][BTREE_ITER_MAX_DEPTH];
	unsigned long		nr_bad;		/* this fs's magic, but no node that verifies */
	unsigned long		nr_no_key;	/* encrypted and the key is not loaded */
	unsigned		nr_devs;	/* devices read */
	uint64_t		bytes_read;
	uint64_t		max_journal_seq; /* over every bset that verified */
	uint64_t		ns;		/* wall-clock time of the scan */
	bool			done;
};

/*
 * Scan every present member of @c. Returns 0, or an I/O error (the
 * message in @err; what was found before stays in @s).
 */
int bch_node_scan(struct bch_fs *c, struct bch_node_scan *s, struct printbuf *err);
void bch_node_scan_exit(struct bch_node_scan *s);

/* What bch_node_scan_keys() did. */
struct node_scan_use {
	unsigned long		leaves;		/* leaves found overlapping the range */
	unsigned long		used;		/* that gave keys */
	unsigned long		older;		/* wholly covered by newer leaves: not read */
	unsigned long		unreadable;	/* found, but could not be read again */
	unsigned long		keys;
	uint64_t		newest_journal_seq;
};

/*
 * The keys of btree @btree_id in [@min, @max] (extents: the sectors from
 * @min to @max) from the leaves found, newest first as above, appended to
 * @out (sorted; extents cut at the range and where a newer leaf starts).
 * Keys are read as the node reader reads them (invalid keys and
 * blacklisted bsets dropped). Returns 0 (@u says what was used) or -ENOMEM
 * style errors.
 */
int bch_node_scan_keys(struct bch_fs *c, const struct bch_node_scan *s, unsigned btree_id,
		       struct bpos_h min, struct bpos_h max, struct bulk_keys *out,
		       struct node_scan_use *u, struct printbuf *err);

/* "K keys from L leaves (the newest of each part of the range; ...)" */
void bch_node_scan_use_to_text(struct printbuf *out, const struct node_scan_use *u);

/* Nodes found of btree @btree_id (every level). */
unsigned long bch_node_scan_nr(const struct bch_node_scan *s, unsigned btree_id);

/* "read N MiB of D devices in T s: N btree nodes found (B more did not verify)" */
void bch_node_scan_to_text(struct printbuf *out, const struct bch_node_scan *s);

#endif
