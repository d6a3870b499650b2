/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading one btree node (doc/format.md §4.1-§4.6): pick a copy that
 * verifies, walk its bsets (checksum, decryption, validation, journal-seq
 * blacklist), unpack every key and combine the bsets into one sorted list
 * of live keys (newest wins; extents resolved per sector and merged).
 *
 * The parser works on raw node bytes and a small context, so it can be
 * tested without a filesystem; btree_node_read() adds the device I/O.
 */
#ifndef BCH_NODE_H
#define BCH_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "bkey/extents.h"
#include "btree/key_merge.h"

struct bch_fs;
struct bch_key;
struct journal_state;
struct printbuf;

/* What the reader needs to know about the filesystem. */
struct btree_node_ctx {
	uint64_t		magic;		/* expected btree_node.magic */
	unsigned		block_sectors;
	unsigned		node_sectors;
	const struct bch_key	*key;		/* NULL: no key (encrypted bsets fail) */
	const struct journal_state *journal;	/* NULL: no blacklist filtering */
	uint16_t		bucket_size[BTREE_NODE_MAX_DEVS]; /* for extent merging; 0 = unknown */
	bool			read_once;	/* bch_fs.nodes_read_once */
};

/* What the parent (or the journal's root entry) says the node is. */
struct btree_node_expect {
	unsigned		btree_id;
	unsigned		level;
	struct bpos_h		min_key;	/* checked: topology error if different */
	struct bpos_h		max_key;	/* = the pointer key's position */
	bool			check_min;
};

/* One bset of a node as found on disk. */
struct btree_bset_info {
	unsigned		offset;		/* bytes from the start of the node */
	unsigned		sectors;	/* rounded size */
	unsigned		u64s;
	uint64_t		seq;
	uint64_t		journal_seq;
	unsigned		csum_type;
	bool			csum_ok;
	bool			blacklisted;	/* keys ignored (journal seq) */
	bool			used;		/* keys took part in the merge */
	unsigned		nr_keys;	/* keys found (before merging) */
};

struct btree_node_h {
	unsigned		btree_id;
	unsigned		level;
	struct bpos_h		min_key;
	struct bpos_h		max_key;
	struct bkey_format_h	format;
	uint64_t		seq;		/* bset seq shared by every bset */
	uint64_t		node_seq;	/* BTREE_NODE_SEQ (informational) */
	unsigned		dev;		/* copy that was used */
	uint64_t		sector;
	unsigned		written;	/* sectors used by bsets */

	/* live keys, sorted; values point into data or the node's arena */
	struct bkey_ref		*keys;
	size_t			nr_keys;

	struct btree_bset_info	*bsets;
	unsigned		nr_bsets;

	unsigned		nr_packed;	/* keys stored packed / unpacked (all bsets) */
	unsigned		nr_unpacked;
	size_t			live_u64s;	/* u64s of the live keys as stored */

	unsigned long		nr_errors;	/* problems reported into err */
	bool			csum_errors;	/* some bset failed its checksum */

	/* owned memory */
	void			*data;		/* the node bytes (decrypted) */
	size_t			bytes;
	struct node_arena	*arena;
};

/*
 * Parse @bytes bytes of node data at @data (taken over by the node: it is
 * freed by btree_node_free(), also on error). @where names the copy in
 * messages ("dev 0 sector 3520"). Returns 0 with *@ret set, or a negative
 * error (the message is in @err). Non-fatal problems are reported into
 * @err and counted in (*ret)->nr_errors.
 */
int btree_node_parse(const struct btree_node_ctx *ctx,
		     const struct btree_node_expect *exp,
		     void *data, size_t bytes, const char *where,
		     struct btree_node_h **ret, struct printbuf *err);

/* Context of filesystem @c (magic, sizes, key, journal, bucket sizes). */
void btree_node_ctx_init(struct btree_node_ctx *ctx, struct bch_fs *c);

/*
 * Read the node that btree pointer key @ptr points to: try each pointer
 * in turn (present device, checksums verify), fall back to the first copy
 * that parsed when every copy has checksum errors.
 *
 * With c->opts.verify (the running filesystem, core/integrity.h) a copy
 * is used only when nothing at all is wrong with it (no message, every
 * key valid in this filesystem, an interior node's children covering its
 * range); the copies that failed before the one used are rewritten from
 * it (a writable mount) and each is logged; with no good copy the node
 * goes to bch_fs_node_bad() and the error is returned: never a node
 * that failed a check.
 */
int btree_node_read(struct bch_fs *c, const struct bkey_ref *ptr,
		    const struct btree_node_expect *exp,
		    struct btree_node_h **ret, struct printbuf *err);
/*
 * The node as fsck's reader takes it (the fallback above, whatever
 * c->opts.verify says), nothing reported: for what a node that failed
 * verification may reference (its buckets stay in use), never to serve.
 */
int btree_node_read_salvage(struct bch_fs *c, const struct bkey_ref *ptr,
			    const struct btree_node_expect *exp, struct btree_node_h **ret);

/*
 * The node as btree_node_read() returns it when its first present copy
 * reads and parses with nothing at all to say (no message, no checksum
 * or key error), else an error and nothing: for read-ahead on another
 * thread (touches only @ctx and the devices), whose caller reads the node
 * the usual way when this fails. Not for c->opts.verify.
 */
int btree_node_read_clean(struct bch_fs *c, const struct btree_node_ctx *ctx,
			  const struct bkey_ref *ptr, const struct btree_node_expect *exp,
			  struct btree_node_h **ret);

void btree_node_free(struct btree_node_h *n);

/* A decoded btree pointer (value of a btree_ptr key). */

#endif
