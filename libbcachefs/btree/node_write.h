/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing btree nodes (doc/format.md §3.6, §4.1-§4.4, §4.9): choose a new
 * node's key format the way the reference does, pack the keys (unpacked
 * when a key does not fit the format), fill the btree_node header and the
 * bset, encrypt and MAC or checksum, pad to the block size; append later
 * bsets (btree_node_entry) to a node; write the new bytes to every copy.
 *
 * The node is built in memory (struct btree_node_buf) so it can be tested
 * without a device; bch_btree_node_write() adds the I/O. A node is never
 * changed except by appending (doc/format.md §4.9): each build/append returns the
 * sector range that became valid, and only that range is written.
 */
#ifndef BCH_NODE_WRITE_H
#define BCH_NODE_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bkey/bkey.h"
#include "format/format.h"
#include "btree/node.h"

struct bch_fs;
struct bch_key;
struct printbuf;

/* What the writer needs to know about the filesystem. */
struct btree_write_ctx {
	uint64_t		magic;		/* btree_node.magic (format.h bch_bset_magic()) */
	unsigned		block_sectors;
	unsigned		node_sectors;
	unsigned		csum_type;	/* bset checksum type (doc/format.md §4.4), not the option */
	const struct bch_key	*key;		/* master key for types 3/4, else NULL */
};

/*
 * Context of filesystem @c: magic, sizes, checksum type (4 when encrypted,
 * else the metadata checksum option 0/1/2 which equals the type number).
 * Returns 0, or -BCH_ERR_no_key when the filesystem is encrypted but the
 * key is not loaded (reason in @err).
 */
int btree_write_ctx_init(struct btree_write_ctx *ctx, const struct bch_fs *c,
			 struct printbuf *err);

/* ---- choosing a node's format (doc/format.md §3.6) ---- */

struct bkey_format_state {
	uint64_t	min[BKEY_NR_FIELDS_H];
	uint64_t	max[BKEY_NR_FIELDS_H];
};

void bkey_format_state_init(struct bkey_format_state *s);
/* Feed a position (the node's min_key) into fields 0-2. */
void bkey_format_state_add_pos(struct bkey_format_state *s, struct bpos_h p);
/* Feed a key: all six fields and its start offset. Whiteouts are ignored. */
void bkey_format_state_add_key(struct bkey_format_state *s, const struct bkey_h *k);
/* The format: widths, bases, size head-room, byte rounding. Always valid. */
void bkey_format_state_done(const struct bkey_format_state *s, struct bkey_format_h *f);

/* The reference's format for a node with @min_key holding @keys. */
void bch_bkey_format_choose(struct bpos_h min_key, const struct bkey_ref *keys,
			    size_t nr, struct bkey_format_h *f);

/* ---- btree pointer keys (doc/format.md §5.4) ---- */

/* The le64 of one pointer (type bit, cached, offset, dev, gen). */
uint64_t bch_extent_ptr_encode(const struct btree_ptr_h *p);

/*
 * A btree pointer key at @pos with @nr (1..4) pointers: type 128, size 0,
 * version 0, u64s 5 + nr. The value is stored in @val (nr u64s) and
 * @out->v points to it.
 */
void bch_btree_ptr_key(struct bkey_ref *out, uint64_t val[BKEY_BTREE_PTR_VAL_U64s_MAX],
		       struct bpos_h pos, const struct btree_ptr_h *ptrs, unsigned nr);

/* ---- building a node in memory ---- */

/* A new node's identity (doc/format.md §4.9). */
struct btree_node_new {
	unsigned		btree_id;
	unsigned		level;
	struct bpos_h		min_key;
	struct bpos_h		max_key;
	uint32_t		node_seq;	/* BTREE_NODE_SEQ (doc/format.md §4.2) */
	uint64_t		seq;		/* bset seq; 0 = random, non-zero */
	struct btree_ptr_h	ptr;		/* the node's first pointer (header copy) */
	const struct bkey_format_h *format;	/* NULL = bch_bkey_format_choose() */
};

/* A node image: node_sectors * 512 bytes, bsets in [0, written sectors). */
struct btree_node_buf {
	uint8_t			*data;
	size_t			bytes;
	unsigned		written;	/* sectors used by bsets */
	unsigned		last_start;	/* sector where the newest bset starts */
	uint64_t		seq;
	unsigned		btree_id;
	unsigned		level;
	struct bpos_h		min_key;
	struct bpos_h		max_key;
	struct bkey_format_h	format;
	unsigned		nr_packed;	/* keys written packed / unpacked */
	unsigned		nr_unpacked;
};

/*
 * Build a new node whose first bset (btree_node at offset 0) holds @keys
 * (@nr may be 0: the reference writes empty first bsets, doc/engine.md §13),
 * with @journal_seq (0 if the keys are not journalled; always 0 for
 * interior nodes). Keys must be sorted (doc/format.md §4.7), lie inside
 * [min_key, max_key] and be valid headers (u64s = 5 + value u64s). On
 * success @out owns a buffer with written = the first bset's sectors.
 * Errors: -EINVAL (bad input, reason in @err), -ENOSPC (does not fit the
 * node), -ENOKEY.
 */
int bch_btree_node_build(const struct btree_write_ctx *ctx,
			 const struct btree_node_new *n, uint64_t journal_seq,
			 const struct bkey_ref *keys, size_t nr,
			 struct btree_node_buf *out, struct printbuf *err);

/*
 * Append one bset (btree_node_entry) holding @keys (at least one) at
 * written sectors, packed with the node's format where possible. Updates
 * written and last_start. -ENOSPC when it does not fit (the node must be
 * rewritten instead, doc/format.md §4.9), -EINVAL for bad keys; @nb is unchanged
 * on error.
 */
int bch_btree_node_append(const struct btree_write_ctx *ctx, struct btree_node_buf *nb,
			  uint64_t journal_seq, const struct bkey_ref *keys, size_t nr,
			  struct printbuf *err);


void bch_btree_node_buf_exit(struct btree_node_buf *nb);

/*
 * Write sectors [@from, nb->written) of the node to every pointer in
 * @ptrs (the same relative offset on each copy). Writes are not flushed:
 * the caller flushes before anything that makes the node reachable
 * (doc/format.md §4.9, §6.8). -EROFS for a device not open read-write.
 */
int bch_btree_node_write(struct bch_fs *c, const struct btree_node_buf *nb,
			 unsigned from, const struct btree_ptr_h *ptrs, unsigned nr,
			 struct printbuf *err);

/* A random non-zero 64-bit number (bset seqs, hash seeds). */
uint64_t bch_random_u64(void);

#endif
