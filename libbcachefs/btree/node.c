// SPDX-License-Identifier: GPL-2.0
/*
 * Reading one btree node (doc/format.md §4.1-§4.6).
 *
 * A node is a log of bsets at block-aligned offsets. We walk them while
 * their seq matches the first one, verify each checksum over the bytes as
 * stored, decrypt, validate and unpack the keys, and keep every bset (or
 * each of the two runs of a SEPARATE_WHITEOUTS bset) as a sorted run.
 * The runs are then combined oldest first: newer keys win at equal
 * positions (extents: for the sectors they cover), whiteouts are dropped,
 * and adjacent extents are merged the way the 2018 read path did.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/checksum.h"
#include "bkey/bkey_types.h"
#include "codec/crypto.h"
#include "util/errcode.h"
#include "bkey/extents.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "dev/dev.h"
#include "journal/journal.h"
#include "btree/node.h"
#include "util/util.h"

static const char *btree_name(unsigned id)
{
	return bch_btree_id_str(id);
}

static void pr_pos(struct printbuf *out, struct bpos_h p)
{
	bch_bpos_to_text(out, p);
}

/* ---- parsing one node ---- */

struct node_parse {
	const struct btree_node_ctx	*ctx;
	const struct btree_node_expect	*exp;
	struct btree_node_h		*n;
	const char			*where;
	struct printbuf			*err;
	uint8_t				*d;
	size_t				node_bytes;
	struct keyvec			keys;	/* every key of every used run */
	struct { size_t start, nr; }	*runs;
	unsigned			nr_runs, runs_size;
	struct bkey_unpacker		unpacker;	/* of n->format */
};

__printf(3, 4)
static void node_err(struct node_parse *s, int bset_off, const char *fmt, ...)
{
	va_list args;

	s->n->nr_errors++;
	if (!s->err)
		return;
	pr_buf(s->err, "btree node %s (btree %s level %u", s->where,
	       btree_name(s->exp->btree_id), s->exp->level);
	pr_str(s->err, ", key ");
	pr_pos(s->err, s->exp->max_key);
	pr_str(s->err, ")");
	if (bset_off >= 0)
		pr_buf(s->err, ", bset at byte %d (sector %d of the node)",
		       bset_off, bset_off / 512);
	pr_str(s->err, ": ");
	va_start(args, fmt);
	pr_vbuf(s->err, fmt, args);
	va_end(args);
	pr_char(s->err, '\n');
}

static struct bpos_h bpos_from_disk(const uint8_t *p)
{
	struct bpos_h r;

	r.snapshot	= get_le32_unaligned(p);
	r.offset	= get_le64_unaligned(p + 4);
	r.inode		= get_le64_unaligned(p + 12);
	return r;
}

static void run_add(struct node_parse *s, size_t start, size_t nr)
{
	if (!nr)
		return;
	if (s->nr_runs == s->runs_size) {
		s->runs_size = s->runs_size ? s->runs_size * 2 : 16;
		s->runs = xrealloc(s->runs, s->runs_size * sizeof(*s->runs));
	}
	s->runs[s->nr_runs].start = start;
	s->runs[s->nr_runs].nr = nr;
	s->nr_runs++;
}

/* Generic key validity, doc/format.md §3.3 items 1-5; returns a reason or NULL. */
static const char *key_invalid_reason(struct node_parse *s, const struct bkey_h *k)
{
	const char *why;

	if (k->u64s < BKEY_U64S_UNPACKED)
		return "u64s too small";
	why = bch_bkey_header_invalid(s->n->btree_id, s->n->level, k);
	if (why)
		return why;
	if (k->size > k->p.offset)
		return "size larger than offset";
	if (bpos_cmp(bkey_start_pos(k), s->n->min_key) < 0)
		return "key before start of btree node";
	if (bpos_cmp(k->p, s->n->max_key) > 0)
		return "key past end of btree node";
	return NULL;
}

/*
 * Walk the keys of one bset (@p, @bytes: the key area, already decrypted).
 * A key that cannot be used is dropped (its neighbours kept); leaf keys
 * out of order start a new run (sorted by the overlay). Returns 0, or
 * -BCH_ERR_btree_node_invalid for child pointers out of order.
 */
static int bset_keys_read(struct node_parse *s, struct btree_bset_info *bi,
			  uint8_t *p, size_t bytes, bool separate_whiteouts, bool use)
{
	struct bpos_h prev = POS_H_MIN, first_prev = POS_H_MIN, first_next = POS_H_MIN;
	unsigned nr_unordered = 0;
	bool first_run = separate_whiteouts;
	size_t off = 0, run_start = s->keys.nr;

	if (use) {
		/* room for exactly the keys of the bset (a key's first byte is its size) */
		size_t nr = 0;

		for (off = 0; off < bytes && p[off]; off += (size_t)p[off] * 8)
			nr++;
		off = 0;
		keyvec_reserve(&s->keys, nr + 1);
	}
	bkey_unpacker_init(&s->unpacker, &s->n->format);

	while (off < bytes) {
		unsigned u64s = p[off], fmt = p[off + 1] & 0x7f;
		struct printbuf why = PRINTBUF;
		struct bkey_ref k;
		const char *reason;

		if (!u64s) {
			node_err(s, bi->offset, "key with u64s 0 at byte %zu of the bset: %zu bytes of keys ignored",
				 off, bytes - off);
			break;
		}
		if (off + (size_t)u64s * 8 > bytes) {
			node_err(s, bi->offset, "key at byte %zu extends past the end of the bset: rest of the bset ignored",
				 off);
			break;
		}
		if (fmt > 1) {
			node_err(s, bi->offset, "key at byte %zu has invalid format %u: key skipped (a repair deletes it)",
				 off, fmt);
			goto next;
		}
		if (bkey_unpack_prepared(&s->unpacker, p + off, bytes - off, &k, NULL)) {
			/* again, for the reason */
			bkey_unpack_prepared(&s->unpacker, p + off, bytes - off, &k, &why);
			node_err(s, bi->offset, "key at byte %zu cannot be unpacked (%s): key skipped (a repair deletes it)",
				 off, printbuf_str(&why));
			printbuf_exit(&why);
			goto next;
		}
		fmt ? s->n->nr_unpacked++ : s->n->nr_packed++;
		bi->nr_keys++;

		reason = key_invalid_reason(s, &k.k);
		if (reason) {
			struct printbuf pos = PRINTBUF;

			pr_pos(&pos, k.k.p);
			node_err(s, bi->offset, "invalid key %s type %u at byte %zu: %s: key skipped (a repair deletes it)",
				 printbuf_str(&pos), k.k.type, off, reason);
			printbuf_exit(&pos);
			goto next;
		}

		if (first_run &&
		    !(bkey_is_whiteout(&k.k) && bpos_cmp(prev, bkey_start_pos(&k.k)) <= 0)) {
			/* the normal run starts here */
			first_run = false;
			if (use)
				run_add(s, run_start, s->keys.nr - run_start);
			run_start = s->keys.nr;
		} else if (!first_run && bpos_cmp(prev, bkey_start_pos(&k.k)) > 0) {
			if (s->n->level) {
				/*
				 * Child pointers out of order: one of them is
				 * damaged, and following it could reach any
				 * bucket: the node is not used (salvaged).
				 */
				struct printbuf a = PRINTBUF, b = PRINTBUF;

				pr_pos(&a, prev);
				pr_pos(&b, bkey_start_pos(&k.k));
				node_err(s, bi->offset, "keys out of order: %s > %s: node not used",
					 printbuf_str(&a), printbuf_str(&b));
				printbuf_exit(&a);
				printbuf_exit(&b);
				return -BCH_ERR_btree_node_invalid;
			}
			/*
			 * Leaf keys are still readable: the keys from here on
			 * are a run of their own, laid over the ones before
			 * like a newer bset (the later key wins where they
			 * meet), which sorts them and keeps every key.
			 */
			if (!nr_unordered++) {
				first_prev = prev;
				first_next = bkey_start_pos(&k.k);
			}
			if (use)
				run_add(s, run_start, s->keys.nr - run_start);
			run_start = s->keys.nr;
		}
		prev = k.k.p;
		if (use)
			keyvec_push(&s->keys, &k);
next:
		off += (size_t)u64s * 8;
	}
	if (use)
		run_add(s, run_start, s->keys.nr - run_start);
	if (nr_unordered) {
		struct printbuf a = PRINTBUF, b = PRINTBUF;

		pr_pos(&a, first_prev);
		pr_pos(&b, first_next);
		if (nr_unordered > 1)
			node_err(s, bi->offset, "keys out of order at %u places (the first: %s > %s): "
				 "keys sorted, none dropped (the later wins at equal positions)",
				 nr_unordered, printbuf_str(&a), printbuf_str(&b));
		else
			node_err(s, bi->offset, "keys out of order: %s > %s: "
				 "keys sorted, none dropped (the later wins at equal positions)",
				 printbuf_str(&a), printbuf_str(&b));
		printbuf_exit(&a);
		printbuf_exit(&b);
	}
	return 0;
}

static void csum_to_text(struct printbuf *out, struct bch_csum_val v)
{
	if (v.hi)
		pr_buf(out, "%016llx%016llx", (unsigned long long)v.hi,
		       (unsigned long long)v.lo);
	else
		pr_buf(out, "%llx", (unsigned long long)v.lo);
}

/* Checksum of the bset at @off; sets bi->csum_ok. */
static int bset_verify(struct node_parse *s, struct btree_bset_info *bi,
		       size_t end, struct bch_nonce nonce)
{
	struct bch_csum_val want, got;
	int ret;

	want = bch_csum_from_bytes(s->d + bi->offset);
	ret = bch_checksum(bi->csum_type, nonce, s->ctx->key, s->d + bi->offset + 16,
			   end - bi->offset - 16, &got);
	if (ret)
		return ret;
	bi->csum_ok = bch_csum_eq(want, got);
	if (!bi->csum_ok) {
		struct printbuf g = PRINTBUF, w = PRINTBUF;

		s->n->csum_errors = true;
		csum_to_text(&g, got);
		csum_to_text(&w, want);
		node_err(s, bi->offset, "invalid checksum (%s): computed %s, stored %s; "
			 "keys used unless another copy verifies",
			 bch_csum_type_name(bi->csum_type), printbuf_str(&g), printbuf_str(&w));
		printbuf_exit(&g);
		printbuf_exit(&w);
	}
	return 0;
}

static bool bset_blacklisted(struct node_parse *s, uint64_t journal_seq)
{
	const struct journal_state *j = s->ctx->journal;

	if (!j || !journal_seq)
		return false;
	if (j->nr_entries && journal_seq > j->seq)
		return true;
	return bch_journal_seq_blacklisted(j, journal_seq);
}

/* The node header of the first bset (already decrypted). */
static int node_header_read(struct node_parse *s)
{
	struct btree_node bn;
	struct printbuf why = PRINTBUF;
	struct btree_node_h *n = s->n;
	int ret;

	memcpy(&bn, s->d, sizeof(bn));
	n->btree_id	= BTREE_NODE_ID(&bn);
	n->level	= BTREE_NODE_LEVEL(&bn);
	n->node_seq	= BTREE_NODE_SEQ(&bn);
	n->min_key	= bpos_from_disk(s->d + offsetof(struct btree_node, min_key));
	n->max_key	= bpos_from_disk(s->d + offsetof(struct btree_node, max_key));

	if (n->btree_id != s->exp->btree_id) {
		node_err(s, 0, "incorrect btree id %u (want %u)", n->btree_id, s->exp->btree_id);
		return -BCH_ERR_btree_node_invalid;
	}
	if (n->level != s->exp->level) {
		node_err(s, 0, "incorrect level %u (want %u)", n->level, s->exp->level);
		return -BCH_ERR_btree_node_invalid;
	}
	if (!bpos_eq(n->max_key, s->exp->max_key)) {
		struct printbuf a = PRINTBUF;

		pr_pos(&a, n->max_key);
		node_err(s, 0, "incorrect max key %s (the pointer says otherwise)",
			 printbuf_str(&a));
		printbuf_exit(&a);
		return -BCH_ERR_btree_node_invalid;
	}
	if (bpos_cmp(n->min_key, n->max_key) > 0) {
		node_err(s, 0, "min key after max key");
		return -BCH_ERR_btree_node_invalid;
	}
	if (s->exp->check_min && !bpos_eq(n->min_key, s->exp->min_key)) {
		struct printbuf a = PRINTBUF, b = PRINTBUF;

		pr_pos(&a, n->min_key);
		pr_pos(&b, s->exp->min_key);
		node_err(s, 0, "topology: min key %s, expected %s from the parent (node used as it is)",
			 printbuf_str(&a), printbuf_str(&b));
		printbuf_exit(&a);
		printbuf_exit(&b);
	}
	ret = bkey_format_decode(s->d + offsetof(struct btree_node, format), &n->format, &why);
	if (ret) {
		node_err(s, 0, "invalid bkey format: %s", printbuf_str(&why));
		printbuf_exit(&why);
		return -BCH_ERR_btree_node_invalid;
	}
	printbuf_exit(&why);
	return 0;
}

static int bset_decrypt(struct node_parse *s, struct btree_bset_info *bi,
			struct bch_nonce nonce, size_t keys_off, size_t keys_bytes)
{
	int ret;

	if (!bch_csum_type_is_encryption(bi->csum_type))
		return 0;
	if (!bi->offset) {
		ret = bch_encrypt(bi->csum_type, s->ctx->key, nonce,
				  s->d + BTREE_NODE_ENCRYPTED_START,
				  BTREE_NODE_ENCRYPTED_END - BTREE_NODE_ENCRYPTED_START);
		if (ret)
			return ret;
		nonce = bch_nonce_add(nonce, 128);
	}
	return bch_encrypt(bi->csum_type, s->ctx->key, nonce, s->d + keys_off, keys_bytes);
}

/* One bset at s->d + off; *sectors gets its rounded size (0: end of node). */
static int bset_read(struct node_parse *s, size_t off, unsigned *sectors)
{
	size_t hdr = off ? sizeof(struct btree_node_entry) : sizeof(struct btree_node);
	size_t bset_off = off ? off + 16 : offsetof(struct btree_node, keys);
	size_t block_bytes = (size_t)s->ctx->block_sectors * 512;
	struct btree_bset_info *bi;
	struct bset b;
	struct bch_nonce nonce;
	size_t end;
	int ret;

	*sectors = 0;
	if (off + hdr > s->node_bytes)
		return 0;
	memcpy(&b, s->d + bset_off, sizeof(b));
	if (off && le64_to_cpu(b.seq) != s->n->seq)
		return 0;			/* end of the node's log */

	s->n->bsets = xrealloc(s->n->bsets, (s->n->nr_bsets + 1) * sizeof(*s->n->bsets));
	bi = &s->n->bsets[s->n->nr_bsets++];
	memset(bi, 0, sizeof(*bi));
	bi->offset	= off;
	bi->u64s	= le16_to_cpu(b.u64s);
	bi->seq		= le64_to_cpu(b.seq);
	bi->journal_seq	= le64_to_cpu(b.journal_seq);
	bi->csum_type	= BSET_CSUM_TYPE(&b);

	end = off + hdr + (size_t)bi->u64s * 8;
	bi->sectors = round_up(end - off, block_bytes) / 512;
	*sectors = bi->sectors;
	if (off + (size_t)bi->sectors * 512 > s->node_bytes) {
		node_err(s, off, "bset past end of btree node (%u u64s): bset ignored", bi->u64s);
		return 0;
	}
	if (!bch_csum_type_valid(bi->csum_type) ||
	    (bch_csum_type_is_encryption(bi->csum_type) && !s->ctx->key)) {
		node_err(s, off, bch_csum_type_valid(bi->csum_type)
			 ? "encrypted (checksum type %u) and no key is loaded: node not read"
			 : "unknown checksum type %u: node not read", bi->csum_type);
		return bch_csum_type_valid(bi->csum_type) ? -BCH_ERR_no_key
			: -BCH_ERR_btree_node_invalid;
	}

	nonce = bch_nonce_btree(off, bi->seq, bi->journal_seq);
	ret = bset_verify(s, bi, end, nonce);
	if (!ret)
		ret = bset_decrypt(s, bi, nonce, off + hdr, end - off - hdr);
	if (ret) {
		node_err(s, off, "cannot checksum/decrypt: %s", bch_err_str(ret));
		return ret;
	}

	if (!off) {
		ret = node_header_read(s);
		if (ret)
			return ret;
	}
	if (le16_to_cpu(b.version) != BCH_BSET_VERSION) {
		node_err(s, off, "unsupported bset version %u: bset ignored",
			 le16_to_cpu(b.version));
		return 0;
	}
	if (off && !bi->u64s)
		node_err(s, off, "empty bset");
	if (BSET_BIG_ENDIAN(&b)) {
		node_err(s, off, "big-endian bset not supported: bset ignored");
		return 0;
	}

	bi->blacklisted = bset_blacklisted(s, bi->journal_seq);
	if (bi->blacklisted && !off) {
		node_err(s, off, "first bset has blacklisted journal seq %llu (keys used anyway)",
			 (unsigned long long)bi->journal_seq);
		bi->blacklisted = false;
	}
	bi->used = !bi->blacklisted;

	return bset_keys_read(s, bi, s->d + off + hdr, end - off - hdr,
			      BSET_SEPARATE_WHITEOUTS(&b), bi->used);
}

/*
 * Room for the keys of every bset of the node, counted before any is
 * parsed (a key's first byte is its size), so that the list is allocated
 * once: grown bset by bset it was moved (a copy, and a hole the next
 * node's list did not fit: fresh pages). A later bset of an extents leaf
 * also takes the room its laying over the first needs (a key may split
 * one in two: node_combine_in_place()). An estimate only: what it misses
 * (an encrypted node, damage) each bset reserves as it is read.
 */
static size_t node_keys_estimate(const struct node_parse *s)
{
	size_t block_bytes = (size_t)s->ctx->block_sectors * 512, off = 0, total = 0;
	bool extents = s->n->btree_id == BTREE_ID_EXTENTS && !s->n->level;

	while (off < s->node_bytes) {
		size_t hdr = off ? sizeof(struct btree_node_entry) : sizeof(struct btree_node);
		size_t bset_off = off ? off + 16 : offsetof(struct btree_node, keys);
		size_t end, k, nr = 0;
		struct bset b;

		if (off + hdr > s->node_bytes)
			break;
		memcpy(&b, s->d + bset_off, sizeof(b));
		if ((off && le64_to_cpu(b.seq) != s->n->seq) ||
		    bch_csum_type_is_encryption(BSET_CSUM_TYPE(&b)))
			break;
		end = off + hdr + (size_t)le16_to_cpu(b.u64s) * 8;
		if (end > s->node_bytes)
			break;
		for (k = off + hdr; k < end && s->d[k]; k += (size_t)s->d[k] * 8)
			nr++;
		total += off && extents ? 2 * nr + 1 : nr + 1;
		off += round_up(end - off, block_bytes);
	}
	return total;
}

/* Stray bset signatures after the last bset: a lost intermediate write. */
static void node_check_tail(struct node_parse *s)
{
	size_t block_bytes = (size_t)s->ctx->block_sectors * 512;
	size_t off;

	for (off = (size_t)s->n->written * 512; off + 24 <= s->node_bytes; off += block_bytes)
		if (get_le64_unaligned(s->d + off + 16) == s->n->seq) {
			node_err(s, off, "found bset signature after last bset (a write was lost)");
			break;
		}
}

/* Value checks deferred until after the merge (doc/format.md §4.6). */
static bool key_value_ok(struct node_parse *s, const struct bkey_ref *k)
{
	const char *why = bch_bkey_val_invalid(s->n->btree_id, s->n->level, k, NULL);

	if (why) {
		struct printbuf pos = PRINTBUF;

		pr_pos(&pos, k->k.p);
		node_err(s, -1, "invalid key %s type %u: %s: key skipped (a repair deletes it)",
			 printbuf_str(&pos), k->k.type, why);
		printbuf_exit(&pos);
	}
	return !why;
}

/*
 * The first run laid over nothing, in place: what the overlay keeps of it
 * (no whiteout; extents: no empty one; other keys: the later of two at one
 * position). Returns how many keys are left at the front of @k.
 */
static size_t first_run_in_place(struct bkey_ref *k, size_t nr, bool extents)
{
	size_t i, out = 0;

	for (i = 0; i < nr; i++) {
		if (bkey_is_whiteout(&k[i].k))
			continue;
		if (extents ? !k[i].k.size : i + 1 < nr && bpos_eq(k[i].k.p, k[i + 1].k.p))
			continue;
		k[out++] = k[i];
	}
	return out;
}

/*
 * More than one run: the later runs (the bsets appended since the node
 * was written whole) are laid over the first inside the list they were
 * read into, so that parsing a node takes one list of its keys, not two:
 * non-extents where they lie (bch_keys_overlay_in_buffer(): d1's alloc
 * leaf has 2700 keys in its first bset, 4000 in its second), extents
 * copied aside (bch_keys_overlay_in_place(): their pieces need room).
 */
static void node_combine_in_place(struct node_parse *s, size_t first_nr, bool extents)
{
	struct btree_node_h *n = s->n;
	struct key_run *runs;
	struct bkey_ref *rest, *p;
	size_t nr_rest = 0, nr, cap, end = first_nr;
	unsigned r;

	/* non-extents: the runs stay where they are (bch_keys_overlay_in_buffer()) */
	for (r = 1; r < s->nr_runs && !extents; r++) {
		if (s->runs[r].start < end)
			break;
		end = s->runs[r].start + s->runs[r].nr;
	}
	if (!extents && r == s->nr_runs) {
		struct key_run_at *at = xcalloc(s->nr_runs, sizeof(*at));

		for (r = 1; r < s->nr_runs; r++)
			at[r - 1] = (struct key_run_at) { s->runs[r].start, s->runs[r].nr };
		nr = bch_keys_overlay_in_buffer(s->keys.k, first_nr, at, s->nr_runs - 1);
		free(at);
		goto done;
	}

	runs = xcalloc(s->nr_runs, sizeof(*runs));
	for (r = 1; r < s->nr_runs; r++)
		nr_rest += s->runs[r].nr;
	p = rest = xmalloc((nr_rest ?: 1) * sizeof(*rest));
	for (r = 1; r < s->nr_runs; r++) {
		memcpy(p, s->keys.k + s->runs[r].start, s->runs[r].nr * sizeof(*p));
		runs[r - 1].k = p;
		runs[r - 1].nr = s->runs[r].nr;
		p += s->runs[r].nr;
	}
	/* (the room was reserved with the list: node_keys_estimate()) */
	cap = bch_keys_overlay_room(extents, first_nr, runs, s->nr_runs - 1);
	if (cap > s->keys.size)
		s->keys.k = xrealloc(s->keys.k, cap * sizeof(*s->keys.k));
	else
		cap = s->keys.size;
	nr = bch_keys_overlay_in_place(extents, s->keys.k, first_nr, cap, runs, s->nr_runs - 1,
				       n->arena);
	free(rest);
	free(runs);
done:
	/* (shrinking in place gives the tail back to malloc) */
	n->keys = nr ? xrealloc(s->keys.k, nr * sizeof(*n->keys)) : s->keys.k;
	n->nr_keys = nr;
	s->keys = (struct keyvec) { 0 };
}

/*
 * The runs of the node combined (bch_keys_overlay()), without copying the
 * first: it is filtered where it was read, and the later runs are laid over
 * it in the same list (node_combine_in_place()). A node of one run keeps
 * the list it was read into.
 */
static int node_combine(struct node_parse *s)
{
	struct btree_node_h *n = s->n;
	bool extents = n->btree_id == BTREE_ID_EXTENTS && !n->level;
	size_t i, out = 0;
	unsigned r;

	if (s->nr_runs && !s->runs[0].start) {
		size_t first_nr = first_run_in_place(s->keys.k, s->runs[0].nr, extents);

		if (s->nr_runs == 1) {
			n->keys = s->keys.k;
			n->nr_keys = first_nr;
			s->keys = (struct keyvec) { 0 };
		} else {
			node_combine_in_place(s, first_nr, extents);
		}
	} else {
		struct key_run *runs = xcalloc(s->nr_runs + 1, sizeof(*runs));

		for (r = 0; r < s->nr_runs; r++) {
			runs[r].k = s->keys.k + s->runs[r].start;
			runs[r].nr = s->runs[r].nr;
		}
		bch_keys_overlay(extents, runs, s->nr_runs, n->arena, &n->keys, &n->nr_keys);
		free(runs);
	}

	for (i = 0; i < n->nr_keys; i++)
		if (key_value_ok(s, &n->keys[i]))
			n->keys[out++] = n->keys[i];
	n->nr_keys = out;

	if (extents)
		n->nr_keys = bch_extents_merge(n->keys, n->nr_keys, s->ctx->bucket_size);
	for (i = 0; i < n->nr_keys; i++)
		n->live_u64s += n->keys[i].k.u64s;
	return 0;
}

void btree_node_free(struct btree_node_h *n)
{
	if (!n)
		return;
	free(n->keys);
	free(n->bsets);
	free(n->data);
	node_arena_free(n->arena);
	free(n);
}

/*
 * Keep only the bsets: move them to a buffer of their size and give the
 * whole read buffer back to malloc, so that the next node is read into
 * the same (already mapped) memory and the nodes kept in the cache take
 * what they use instead of the node size each.
 */
static void node_shrink(struct btree_node_h *n, bool read_once)
{
	size_t used = (size_t)n->written * 512, i;
	const uint8_t *old = n->data;
	uint8_t *p;

	/*
	 * A node read once and dropped soon after is copied only when less
	 * than half full: the copy of a fuller one cost more (fresh pages
	 * next to its key list: d1's alloc leaf, 106 KiB) than its read
	 * buffer held meanwhile.
	 */
	if (!used || (read_once ? 2 * used >= n->bytes : used + used / 8 >= n->bytes))
		return;
	p = xmalloc(used);
	memcpy(p, old, used);
	for (i = 0; i < n->nr_keys; i++) {
		const uint8_t *v = n->keys[i].v;

		if (v && (uintptr_t)v >= (uintptr_t)old && (uintptr_t)v < (uintptr_t)old + used)
			n->keys[i].v = p + (v - old);
	}
	free(n->data);
	n->data	 = p;
	n->bytes = used;
}

int btree_node_parse(const struct btree_node_ctx *ctx,
		     const struct btree_node_expect *exp,
		     void *data, size_t bytes, const char *where,
		     struct btree_node_h **ret, struct printbuf *err)
{
	struct node_parse s = {
		.ctx = ctx, .exp = exp, .where = where, .err = err,
		.d = data, .node_bytes = (size_t)ctx->node_sectors * 512,
	};
	struct btree_node_h *n = xcalloc(1, sizeof(*n));
	int r = 0;

	*ret = NULL;
	n->data = data;
	n->bytes = bytes;
	n->arena = node_arena_new();
	n->btree_id = exp->btree_id;
	n->level = exp->level;
	n->min_key = exp->min_key;
	n->max_key = exp->max_key;
	s.n = n;

	if (!ctx->block_sectors || !ctx->node_sectors || s.node_bytes > bytes ||
	    s.node_bytes < sizeof(struct btree_node)) {
		node_err(&s, -1, "bad node geometry (%u sectors, block %u, %zu bytes)",
			 ctx->node_sectors, ctx->block_sectors, bytes);
		r = -BCH_ERR_btree_node_invalid;
		goto err;
	}
	if (get_le64_unaligned(s.d + offsetof(struct btree_node, magic)) != ctx->magic) {
		node_err(&s, -1, "bad magic %016llx (not a btree node of this filesystem)",
			 (unsigned long long)get_le64_unaligned(s.d + 16));
		r = -BCH_ERR_btree_node_bad_magic;
		goto err;
	}
	n->seq = get_le64_unaligned(s.d + offsetof(struct btree_node, keys.seq));
	if (!n->seq) {
		node_err(&s, -1, "bad btree header (bset seq 0)");
		r = -BCH_ERR_btree_node_invalid;
		goto err;
	}

	keyvec_reserve(&s.keys, node_keys_estimate(&s));
	while (n->written < ctx->node_sectors) {
		unsigned sectors;

		r = bset_read(&s, (size_t)n->written * 512, &sectors);
		if (r)
			goto err;
		if (!sectors)
			break;
		n->written += sectors;
	}
	if (n->written > ctx->node_sectors)
		n->written = ctx->node_sectors;
	node_check_tail(&s);
	r = node_combine(&s);
	if (!r)
		node_shrink(n, ctx->read_once);
err:
	free(s.keys.k);
	free(s.runs);
	if (r) {
		btree_node_free(n);
		return r;
	}
	*ret = n;
	return 0;
}

void btree_node_ctx_init(struct btree_node_ctx *ctx, struct bch_fs *c)
{
	unsigned i;

	memset(ctx, 0, sizeof(*ctx));
	ctx->magic = c->sb ? bch_bset_magic(c->sb) : 0;
	ctx->block_sectors = c->block_size;
	ctx->node_sectors = c->btree_node_size;
	ctx->key = c->have_key ? &c->key : NULL;
	ctx->journal = &c->journal;
	ctx->read_once = c->nodes_read_once;
	for (i = 0; i < BTREE_NODE_MAX_DEVS && i < BCH_FS_MAX_DEVS; i++)
		if (c->devs[i])
			ctx->bucket_size[i] = c->devs[i]->bucket_size;
}

static void copy_failed(struct printbuf *bad, const char *where)
{
	pr_str(bad, bad->pos ? ", " : "");
	pr_str(bad, where);
}

/* ---- verification of the running filesystem (core/integrity.h) ---- */

/*
 * What fsck checks of a node beyond the parser's own checks: every key
 * valid in this filesystem (pointers inside member devices; staleness is
 * GC's business), and an interior node's children covering its range to
 * its end. False with the reason in @why.
 */
static bool node_keys_verify(struct bch_fs *c, const struct btree_node_h *n,
			     struct printbuf *why)
{
	struct bkey_fs_ctx ctx;

	bch_fs_key_ctx(c, &ctx);
	ctx.bucket_gen = NULL;
	for (size_t i = 0; i < n->nr_keys; i++)
		if (bch_bkey_validate_fs(n->btree_id, n->level, &n->keys[i], &ctx, why))
			return false;
	if (n->level && (!n->nr_keys || !bpos_eq(n->keys[n->nr_keys - 1].k.p, n->max_key))) {
		pr_str(why, "topology: the last child does not end at the node's max key");
		return false;
	}
	return true;
}

/*
 * The reason of a bad copy for the one log line: the first message of
 * the parser without the node it names (the line says it), up to its
 * first "; ".
 */
static void copy_reason(struct printbuf *out, const char *msgs)
{
	const char *p = msgs, *e, *cut;

	for (cut = p; (cut = strchr(cut, ')')); cut++)
		if (cut[1] == ':' || cut[1] == ',') {
			p = cut + 2 + (cut[2] == ' ');
			break;
		}
	e = strchrnul(p, '\n');
	cut = strstr(p, "; ");
	if (cut && cut < e)
		e = cut;
	pr_bytes(out, p, (size_t)(e - p));
}

/* May a bad copy be rewritten from a good one now (a writable mount)? */
static bool may_repair(struct bch_fs *c, unsigned dev)
{
	return c->opts.verify && !c->opts.read_only && c->rw && !bch_fs_writes_stopped(c) &&
	       bch_dev_present(c, dev) && c->devs[dev]->io->rw;
}

struct bad_copy {
	unsigned	dev;
	uint64_t	sector;
	char		why[200];
};

/*
 * Copies @bad[0..@nr) of a node failed to verify and the copy at
 * @good_where did, with bytes @raw as read: each bad one is rewritten
 * with them where the writable mount may (the node is reachable: its
 * buckets are not reused meanwhile), else only said. One line each.
 */
static void copies_repair(struct bch_fs *c, const struct btree_node_expect *exp,
			  const struct bad_copy *bad, unsigned nr, const void *raw,
			  size_t bytes, const char *good_where)
{
	struct printbuf r = PRINTBUF;

	bch_bpos_to_text(&r, exp->min_key);
	pr_str(&r, " - ");
	bch_bpos_to_text(&r, exp->max_key);
	for (unsigned i = 0; i < nr; i++) {
		const char *done = c->opts.read_only
			? "read from %s instead (a read-only mount writes nothing)"
			: bch_fs_writes_stopped(c)
			? "read from %s instead (nothing is written since damage was found)"
			: "read from %s instead (rewritten once the filesystem is writable)";
		char then[160];

		if (raw && may_repair(c, bad[i].dev)) {
			if (!dev_pwrite(c->devs[bad[i].dev]->io, raw, bytes, bad[i].sector << 9)) {
				c->integ.node_copies_repaired++;
				done = "rewritten from %s";
			} else {
				done = "read from %s instead (rewriting it failed)";
			}
		}
		snprintf(then, sizeof(then), done, good_where);
		bch_fs_log(c, "btree %s level %u range %s: copy on dev %u sector %llu fails to verify (%s): %s",
			   btree_name(exp->btree_id), exp->level, printbuf_str(&r), bad[i].dev,
			   (unsigned long long)bad[i].sector, bad[i].why, then);
	}
	printbuf_exit(&r);
}

/* A copy that failed to verify: kept for its repair, its reason added to @why. */
static void bad_copy_note(struct bad_copy *bc, unsigned *nr, const struct btree_ptr_h *p,
			  const char *where, const char *reason, struct printbuf *why)
{
	bc[*nr] = (struct bad_copy) { .dev = p->dev, .sector = p->offset };
	snprintf(bc[(*nr)++].why, sizeof(bc[0].why), "%s", reason);
	pr_buf(why, "%s%s: %s", why->pos ? "; " : "", where, reason);
}

/*
 * With verify: do the keys of copy @n (parsed without a message) pass the
 * checks here too? Why not goes to @msg (the copy's messages) and @all_msg.
 */
static bool copy_keys_ok(struct bch_fs *c, const struct btree_node_expect *exp,
			 struct btree_node_h *n, const char *where, struct printbuf *msg,
			 struct printbuf *all_msg)
{
	struct printbuf kwhy = PRINTBUF;
	bool good = node_keys_verify(c, n, &kwhy);

	if (!good) {
		pr_buf(msg, "btree node %s (btree %s level %u): %s\n", where,
		       btree_name(exp->btree_id), exp->level, printbuf_str(&kwhy));
		pr_buf(all_msg, "btree node %s (btree %s level %u): %s\n", where,
		       btree_name(exp->btree_id), exp->level, printbuf_str(&kwhy));
	}
	printbuf_exit(&kwhy);
	return good;
}

/*
 * Read the node that btree pointer key @ptr points to (60: "which copy"):
 * the first copy on a present device that parses and whose checksums all
 * verify is used; the messages of copies that were not used are dropped
 * and replaced by one note. When every copy has checksum errors the
 * first one that parsed is used, with its messages.
 *
 * With c->opts.verify (the mount) a copy is used only when it passes
 * every check (no message at all, every key valid here); copies that
 * failed before it are rewritten from it; with none, the node is
 * reported (bch_fs_node_bad()) and not used.
 */
static int node_read(struct bch_fs *c, const struct bkey_ref *ptr,
		     const struct btree_node_expect *exp, bool verify,
		     struct btree_node_h **ret, struct printbuf *err)
{
	struct btree_ptr_h ptrs[BCH_REPLICAS_MAX];
	struct btree_node_ctx ctx;
	struct btree_node_h *fallback = NULL;
	struct printbuf fallback_msg = PRINTBUF, all_msg = PRINTBUF, bad = PRINTBUF;
	struct printbuf why = PRINTBUF;
	struct bad_copy bad_copies[BCH_REPLICAS_MAX];
	unsigned nr_bad_copies = 0;
	size_t bytes = (size_t)c->btree_node_size * 512;
	int nr, i, r = -BCH_ERR_btree_node_read;

	*ret = NULL;
	nr = btree_ptr_decode(ptr, ptrs, ARRAY_SIZE(ptrs));
	if (nr < 0) {
		if (err)
			pr_buf(err, "btree %s level %u: bad btree pointer value (%u bytes): node not read\n",
			       btree_name(exp->btree_id), exp->level, ptr->v_bytes);
		if (verify)
			return bch_fs_node_bad(c, exp->btree_id, exp->level, exp->min_key,
					       exp->max_key, "its pointer has a bad value");
		return -BCH_ERR_btree_node_invalid;
	}
	btree_node_ctx_init(&ctx, c);

	for (i = 0; i < nr; i++) {
		struct printbuf msg = PRINTBUF;
		struct btree_node_h *n;
		char where[64];
		void *buf, *raw = NULL;
		bool good;
		int e;

		snprintf(where, sizeof(where), "dev %u sector %llu", ptrs[i].dev,
			 (unsigned long long)ptrs[i].offset);
		if (ptrs[i].dev >= BCH_FS_MAX_DEVS || !c->devs[ptrs[i].dev] ||
		    !c->devs[ptrs[i].dev]->io) {
			/* not a bad copy: the open said the member is missing */
			pr_buf(&all_msg, "btree node %s (btree %s level %u): device missing\n",
			       where, btree_name(exp->btree_id), exp->level);
			continue;
		}
		buf = xmalloc(bytes);
		e = bch_dev_read(c, ptrs[i].dev, buf, bytes, ptrs[i].offset);
		if (e) {
			pr_buf(&all_msg, "btree node %s (btree %s level %u): read error: %s\n",
			       where, btree_name(exp->btree_id), exp->level, bch_err_str(e));
			free(buf);
			r = e;
			copy_failed(&bad, where);
			if (verify) {
				char reason[sizeof(bad_copies[0].why)];

				snprintf(reason, sizeof(reason), "read error: %s", bch_err_str(e));
				bad_copy_note(bad_copies, &nr_bad_copies, &ptrs[i], where, reason, &why);
			}
			continue;
		}
		/* the bytes as read, for the copies that failed before this one */
		if (nr_bad_copies && may_repair(c, bad_copies[0].dev)) {
			raw = xmalloc(bytes);
			memcpy(raw, buf, bytes);
		}
		e = btree_node_parse(&ctx, exp, buf, bytes, where, &n, &msg);
		pr_str(&all_msg, printbuf_str(&msg));
		good = !e && !n->csum_errors;
		if (good && verify && n->nr_errors)
			good = false;
		if (good && verify)
			good = copy_keys_ok(c, exp, n, where, &msg, &all_msg);
		if (!good && verify) {
			struct printbuf one = PRINTBUF;

			copy_reason(&one, msg.pos ? printbuf_str(&msg) : bch_err_str(e));
			bad_copy_note(bad_copies, &nr_bad_copies, &ptrs[i], where, printbuf_str(&one), &why);
			printbuf_exit(&one);
		}
		if (e) {
			r = e;
			copy_failed(&bad, where);
			printbuf_exit(&msg);
			free(raw);
			continue;
		}
		n->dev = ptrs[i].dev;
		n->sector = ptrs[i].offset;
		if (good) {
			btree_node_free(fallback);
			fallback = NULL;
			if (err) {
				if (bad.pos)
					pr_buf(err, "btree %s level %u: node copy %s unusable, read from %s\n",
					       btree_name(exp->btree_id), exp->level,
					       printbuf_str(&bad), where);
				pr_str(err, printbuf_str(&msg));
			}
			if (nr_bad_copies)
				copies_repair(c, exp, bad_copies, nr_bad_copies, raw, bytes, where);
			free(raw);
			printbuf_exit(&msg);
			*ret = n;
			r = 0;
			goto out;
		}
		free(raw);
		copy_failed(&bad, where);
		if (!fallback && !verify) {
			fallback = n;
			fallback_msg = msg;
		} else {
			btree_node_free(n);
			printbuf_exit(&msg);
		}
	}
	if (fallback) {
		/* every copy has checksum errors: use the first one (WANT_RETRY) */
		if (err)
			pr_str(err, printbuf_str(&fallback_msg));
		*ret = fallback;
		r = 0;
	} else {
		if (err)
			pr_str(err, printbuf_str(&all_msg));
		/* damage, not members that are missing: the error action */
		if (verify && nr_bad_copies)
			r = bch_fs_node_bad(c, exp->btree_id, exp->level, exp->min_key,
					    exp->max_key, printbuf_str(&why));
	}
out:
	printbuf_exit(&fallback_msg);
	printbuf_exit(&all_msg);
	printbuf_exit(&bad);
	printbuf_exit(&why);
	return r;
}

int btree_node_read(struct bch_fs *c, const struct bkey_ref *ptr,
		    const struct btree_node_expect *exp,
		    struct btree_node_h **ret, struct printbuf *err)
{
	return node_read(c, ptr, exp, c->opts.verify, ret, err);
}

int btree_node_read_salvage(struct bch_fs *c, const struct bkey_ref *ptr,
			    const struct btree_node_expect *exp, struct btree_node_h **ret)
{
	return node_read(c, ptr, exp, false, ret, NULL);
}

int btree_node_read_clean(struct bch_fs *c, const struct btree_node_ctx *ctx,
			  const struct bkey_ref *ptr, const struct btree_node_expect *exp,
			  struct btree_node_h **ret)
{
	struct btree_ptr_h ptrs[BCH_REPLICAS_MAX];
	size_t bytes = (size_t)ctx->node_sectors * 512;
	int nr = btree_ptr_decode(ptr, ptrs, ARRAY_SIZE(ptrs));

	*ret = NULL;
	for (int i = 0; i < nr; i++) {
		struct printbuf msg = PRINTBUF;
		struct btree_node_h *n;
		char where[64];
		void *buf;
		int e;

		/* node_read() skips the copies on missing members the same way */
		if (ptrs[i].dev >= BCH_FS_MAX_DEVS || !c->devs[ptrs[i].dev] ||
		    !c->devs[ptrs[i].dev]->io)
			continue;
		buf = xmalloc(bytes);
		e = bch_dev_read(c, ptrs[i].dev, buf, bytes, ptrs[i].offset);
		if (e) {
			free(buf);
			return e;
		}
		snprintf(where, sizeof(where), "dev %u sector %llu", ptrs[i].dev,
			 (unsigned long long)ptrs[i].offset);
		e = btree_node_parse(ctx, exp, buf, bytes, where, &n, &msg);
		if (!e && (n->csum_errors || n->nr_errors || msg.pos)) {
			btree_node_free(n);
			e = -BCH_ERR_btree_node_invalid;
		}
		printbuf_exit(&msg);
		if (e)
			return e;
		n->dev = ptrs[i].dev;
		n->sector = ptrs[i].offset;
		*ret = n;
		return 0;
	}
	return -BCH_ERR_btree_node_read;
}
