// SPDX-License-Identifier: GPL-2.0
/*
 * The node scan: see node_scan.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "btree/bulk.h"
#include "codec/checksum.h"
#include "codec/crypto.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "journal/journal.h"
#include "btree/node.h"
#include "fsck/node_scan.h"
#include "dev/super.h"
#include "util/util.h"

/* Bytes per read: large sequential reads, whole buckets. */
#define SCAN_READ_BYTES		(8U << 20)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct bpos_h bpos_at(const uint8_t *p)
{
	return (struct bpos_h) {
		.snapshot	= get_le32_unaligned(p),
		.offset		= get_le64_unaligned(p + 4),
		.inode		= get_le64_unaligned(p + 12),
	};
}

struct scan_dev {
	struct bch_fs		*c;
	struct bch_node_scan	*s;
	unsigned		dev;
	uint64_t		magic;
	size_t			node_bytes;
	size_t			block_bytes;
	const struct bch_key	*key;
	uint64_t		*journal;	/* this device's journal buckets, sorted */
	size_t			nr_journal;
};

/* Would the node reader skip a bset with @journal_seq (doc/format.md §4.5 d)? */
static bool seq_blacklisted(const struct journal_state *j, uint64_t journal_seq)
{
	if (!journal_seq)
		return false;
	if (!j->lost && j->nr_entries && journal_seq > j->seq)
		return true;
	return bch_journal_seq_blacklisted(j, journal_seq);
}

/* Does the bset of @bytes bytes at @p (node byte @off) verify? */
static bool bset_verifies(const struct scan_dev *sd, const uint8_t *p, size_t off,
			  size_t bytes, unsigned type, uint64_t seq, uint64_t journal_seq)
{
	struct bch_csum_val got;

	if (!bch_csum_type_valid(type) ||
	    (bch_csum_type_is_encryption(type) && !sd->key))
		return false;
	if (bch_checksum(type, bch_nonce_btree((uint32_t)off, seq, journal_seq), sd->key,
			 p + 16, bytes - 16, &got))
		return false;
	return bch_csum_eq(got, bch_csum_from_bytes(p));
}

static void node_add(struct bch_node_scan *s, const struct scanned_node *n)
{
	if (s->nr == s->size) {
		s->size = s->size ? 2 * s->size : 256;
		s->n = xrealloc(s->n, s->size * sizeof(*s->n));
	}
	s->n[s->nr++] = *n;
}

/* The node-sized slot at @p (device sector @sector): a node of this filesystem? */
static void check_slot(struct scan_dev *sd, const uint8_t *p, uint64_t sector)
{
	struct bch_node_scan *s = sd->s;
	const struct journal_state *j = &sd->c->journal;
	struct scanned_node n = { 0 };
	uint8_t hdr[BTREE_NODE_ENCRYPTED_END - BTREE_NODE_ENCRYPTED_START];
	uint64_t seq, jseq, flags;
	size_t end, off;
	unsigned type;

	if (get_le64_unaligned(p + offsetof(struct btree_node, magic)) != sd->magic)
		return;
	seq  = get_le64_unaligned(p + offsetof(struct btree_node, keys.seq));
	jseq = get_le64_unaligned(p + offsetof(struct btree_node, keys.journal_seq));
	type = get_le32_unaligned(p + offsetof(struct btree_node, keys.flags)) & 0xf;
	end  = sizeof(struct btree_node) +
		(size_t)get_le16_unaligned(p + offsetof(struct btree_node, keys.u64s)) * 8;
	if (bch_csum_type_is_encryption(type) && !sd->key) {
		s->nr_no_key++;
		return;
	}
	if (!seq || end > sd->node_bytes || !bset_verifies(sd, p, 0, end, type, seq, jseq))
		goto bad;

	/* the header: btree, level, range (encrypted from byte 24 on) */
	memcpy(hdr, p + BTREE_NODE_ENCRYPTED_START, sizeof(hdr));
	if (bch_encrypt(type, sd->key, bch_nonce_btree(0, seq, jseq), hdr, sizeof(hdr)))
		goto bad;
	flags		= get_le64_unaligned(hdr + offsetof(struct btree_node, flags) - BTREE_NODE_ENCRYPTED_START);
	n.btree_id	= flags & 0xf;
	n.level		= (flags >> 4) & 0xf;
	n.node_seq	= (uint32_t)(flags >> 32);
	n.min_key	= bpos_at(hdr + offsetof(struct btree_node, min_key) - BTREE_NODE_ENCRYPTED_START);
	n.max_key	= bpos_at(hdr + offsetof(struct btree_node, max_key) - BTREE_NODE_ENCRYPTED_START);
	if (n.btree_id >= BTREE_ID_NR || n.level >= BTREE_ITER_MAX_DEPTH ||
	    bpos_cmp(n.min_key, n.max_key) > 0)
		goto bad;
	n.seq = seq;
	/* the first bset is used even when blacklisted (doc/format.md §4.5 d) */
	n.journal_seq = jseq;
	if (jseq > s->max_journal_seq)
		s->max_journal_seq = jseq;

	/* later bsets, while their seq is the node's and they fit */
	for (off = round_up(end, sd->block_bytes); off + sizeof(struct btree_node_entry) <= sd->node_bytes;) {
		const uint8_t *b = p + off;
		uint64_t js = get_le64_unaligned(b + offsetof(struct btree_node_entry, keys.journal_seq));
		size_t bytes = sizeof(struct btree_node_entry) +
			(size_t)get_le16_unaligned(b + offsetof(struct btree_node_entry, keys.u64s)) * 8;

		if (get_le64_unaligned(b + offsetof(struct btree_node_entry, keys.seq)) != seq ||
		    off + bytes > sd->node_bytes)
			break;
		type = get_le32_unaligned(b + offsetof(struct btree_node_entry, keys.flags)) & 0xf;
		if (bset_verifies(sd, b, off, bytes, type, seq, js)) {
			if (js > s->max_journal_seq)
				s->max_journal_seq = js;
			if (js > n.journal_seq && !seq_blacklisted(j, js))
				n.journal_seq = js;
		}
		off += round_up(bytes, sd->block_bytes);
	}

	n.nr_copies = 1;
	n.copy[0].dev = (uint8_t)sd->dev;
	n.copy[0].sector = sector;
	node_add(s, &n);
	s->found[n.btree_id][n.level]++;
	return;
bad:
	s->nr_bad++;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_journal_bucket(const struct scan_dev *sd, uint64_t b)
{
	size_t l = 0, r = sd->nr_journal;

	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (sd->journal[m] == b)
			return true;
		if (sd->journal[m] < b)
			l = m + 1;
		else
			r = m;
	}
	return false;
}

static int scan_one_dev(struct scan_dev *sd, struct printbuf *err)
{
	struct bch_fs *c = sd->c;
	struct bch_member_dev *ca = c->devs[sd->dev];
	uint64_t bucket_bytes = (uint64_t)ca->bucket_size * 512;
	unsigned slots = ca->bucket_size / c->btree_node_size;
	uint64_t data_end = 0, b = ca->first_bucket, run_max;
	uint8_t *buf;
	int ret = 0;

	if (!slots || !bucket_bytes)
		return 0;
	sd->nr_journal = ca->sb ? bch_sb_journal_nr_buckets(ca->sb) : 0;
	sd->journal = xcalloc(sd->nr_journal + 1, sizeof(uint64_t));
	for (size_t i = 0; i < sd->nr_journal; i++)
		sd->journal[i] = bch_sb_journal_bucket(ca->sb, i);
	qsort(sd->journal, sd->nr_journal, sizeof(uint64_t), u64_cmp);

	run_max = SCAN_READ_BYTES / bucket_bytes ?: 1;
	buf = xmalloc(run_max * bucket_bytes);
	while (b < ca->nbuckets) {
		uint64_t off = b * bucket_bytes, e, data_start;

		if (off >= data_end) {
			ret = dev_next_data(ca->io, off, &data_start, &data_end);
			if (ret == -ENXIO) {
				ret = 0;
				break;
			}
			if (ret)
				break;
			if (data_start / bucket_bytes > b) {
				b = data_start / bucket_bytes;
				continue;
			}
		}
		if (is_journal_bucket(sd, b)) {
			b++;
			continue;
		}
		/* a run of buckets that hold data, none of the journal */
		for (e = b + 1; e < ca->nbuckets && e - b < run_max &&
		     e * bucket_bytes < data_end && !is_journal_bucket(sd, e); e++)
			;
		ret = dev_pread(ca->io, buf, (e - b) * bucket_bytes, off);
		if (ret) {
			pr_buf(err, "node scan: dev %u: error reading buckets %" PRIu64 "-%" PRIu64
			       " (sectors %" PRIu64 "-%" PRIu64 "): %s\n", sd->dev, b, e - 1,
			       off / 512, e * bucket_bytes / 512 - 1, bch_err_str(ret));
			break;
		}
		sd->s->bytes_read += (e - b) * bucket_bytes;
		for (uint64_t i = b; i < e; i++)
			for (unsigned k = 0; k < slots; k++)
				check_slot(sd, buf + (i - b) * bucket_bytes + (size_t)k * sd->node_bytes,
					   i * ca->bucket_size + (uint64_t)k * c->btree_node_size);
		b = e;
	}
	free(buf);
	free(sd->journal);
	sd->journal = NULL;
	return ret;
}

static int node_cmp(const void *_a, const void *_b)
{
	const struct scanned_node *a = _a, *b = _b;
	int r;

	if (a->btree_id != b->btree_id)
		return a->btree_id < b->btree_id ? -1 : 1;
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	if ((r = bpos_cmp(a->min_key, b->min_key)))
		return r;
	if ((r = bpos_cmp(a->max_key, b->max_key)))
		return r;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->journal_seq != b->journal_seq)
		return a->journal_seq < b->journal_seq ? -1 : 1;
	if (a->copy[0].dev != b->copy[0].dev)
		return a->copy[0].dev < b->copy[0].dev ? -1 : 1;
	return a->copy[0].sector < b->copy[0].sector ? -1 : a->copy[0].sector > b->copy[0].sector;
}

/* Copies of one node (same identity, other device): one node with several copies. */
static void merge_copies(struct bch_node_scan *s)
{
	size_t i, out = 0;

	qsort(s->n, s->nr, sizeof(*s->n), node_cmp);
	for (i = 0; i < s->nr; i++) {
		struct scanned_node *p = out ? &s->n[out - 1] : NULL, *n = &s->n[i];

		if (p && p->btree_id == n->btree_id && p->level == n->level &&
		    p->seq == n->seq && p->journal_seq == n->journal_seq &&
		    bpos_eq(p->min_key, n->min_key) && bpos_eq(p->max_key, n->max_key) &&
		    p->copy[p->nr_copies - 1].dev != n->copy[0].dev) {
			if (p->nr_copies < BCH_REPLICAS_MAX)
				p->copy[p->nr_copies++] = n->copy[0];
			s->found[n->btree_id][n->level]--;
			continue;
		}
		s->n[out++] = *n;
	}
	s->nr = out;
}

int bch_node_scan(struct bch_fs *c, struct bch_node_scan *s, struct printbuf *err)
{
	uint64_t t0 = now_ns();
	int ret = 0;

	bch_node_scan_exit(s);
	if (!c->btree_node_size || !c->block_size || !c->sb)
		return -EINVAL;
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS && !ret; i++) {
		struct scan_dev sd = {
			.c		= c,
			.s		= s,
			.dev		= i,
			.magic		= bch_bset_magic(c->sb),
			.node_bytes	= (size_t)c->btree_node_size * 512,
			.block_bytes	= (size_t)c->block_size * 512,
			.key		= c->have_key ? &c->key : NULL,
		};

		if (!c->devs[i] || !c->devs[i]->io)
			continue;
		ret = scan_one_dev(&sd, err);
		s->nr_devs++;
	}
	merge_copies(s);
	s->ns = now_ns() - t0;
	s->done = true;
	return ret;
}

void bch_node_scan_exit(struct bch_node_scan *s)
{
	free(s->n);
	memset(s, 0, sizeof(*s));
}

unsigned long bch_node_scan_nr(const struct bch_node_scan *s, unsigned btree_id)
{
	unsigned long nr = 0;

	if (btree_id < BTREE_ID_NR)
		for (unsigned l = 0; l < BTREE_ITER_MAX_DEPTH; l++)
			nr += s->found[btree_id][l];
	return nr;
}

void bch_node_scan_to_text(struct printbuf *out, const struct bch_node_scan *s)
{
	pr_buf(out, "read %" PRIu64 " MiB of %u device%s in %" PRIu64 ".%03" PRIu64 " s: %zu btree node%s found",
	       s->bytes_read >> 20, s->nr_devs, s->nr_devs == 1 ? "" : "s",
	       s->ns / 1000000000, s->ns / 1000000 % 1000, s->nr, s->nr == 1 ? "" : "s");
	if (s->nr_bad)
		pr_buf(out, " (%lu more with this filesystem's magic did not verify)", s->nr_bad);
	if (s->nr_no_key)
		pr_buf(out, " (%lu encrypted, the key is not loaded)", s->nr_no_key);
}

void bch_node_scan_use_to_text(struct printbuf *out, const struct node_scan_use *u)
{
	pr_buf(out, "%lu keys from %lu lea%s (the newest of each part of the range; %lu older cop%s not used%s)",
	       u->keys, u->used, u->used == 1 ? "f" : "ves", u->older, u->older == 1 ? "y" : "ies",
	       u->unreadable ? "; some could not be read again" : "");
}

/* ---- the keys of a range, newest leaf first ---- */

/*
 * Ranges already given by newer leaves, sorted and disjoint. Extents:
 * half-open [lo, hi) of sectors (a leaf [min, max] holds the extents
 * from min to max); other btrees: closed [lo, hi] of positions.
 */
struct claimed {
	struct { struct bpos_h lo, hi; } *v;
	size_t	nr, size;
};

/* Index of the first interval whose hi >= @p (extents: > @p). */
static size_t claimed_first(const struct claimed *cl, struct bpos_h p, bool extents)
{
	size_t l = 0, r = cl->nr;

	while (l < r) {
		size_t m = l + (r - l) / 2;
		int c = bpos_cmp(cl->v[m].hi, p);

		if (extents ? c <= 0 : c < 0)
			l = m + 1;
		else
			r = m;
	}
	return l;
}

static bool claimed_has(const struct claimed *cl, struct bpos_h p)
{
	size_t i = claimed_first(cl, p, false);

	return i < cl->nr && bpos_cmp(cl->v[i].lo, p) <= 0;
}

/* Is [lo, hi] (extents: [lo, hi)) wholly inside one claimed interval? */
static bool claimed_covers(const struct claimed *cl, struct bpos_h lo, struct bpos_h hi,
			   bool extents)
{
	size_t i = claimed_first(cl, lo, extents);

	return i < cl->nr && bpos_cmp(cl->v[i].lo, lo) <= 0 && bpos_cmp(hi, cl->v[i].hi) <= 0;
}

static void claimed_add(struct claimed *cl, struct bpos_h lo, struct bpos_h hi)
{
	size_t i = 0, j;

	/* the intervals overlapping or touching [lo, hi] merge with it */
	while (i < cl->nr && bpos_cmp(cl->v[i].hi, lo) < 0)
		i++;
	for (j = i; j < cl->nr && bpos_cmp(cl->v[j].lo, hi) <= 0; j++) {
		if (bpos_cmp(cl->v[j].lo, lo) < 0)
			lo = cl->v[j].lo;
		if (bpos_cmp(cl->v[j].hi, hi) > 0)
			hi = cl->v[j].hi;
	}
	if (j == i) {
		if (cl->nr == cl->size) {
			cl->size = cl->size ? 2 * cl->size : 16;
			cl->v = xrealloc(cl->v, cl->size * sizeof(*cl->v));
		}
		memmove(cl->v + i + 1, cl->v + i, (cl->nr - i) * sizeof(*cl->v));
		cl->nr++;
	} else if (j > i + 1) {
		memmove(cl->v + i + 1, cl->v + j, (cl->nr - j) * sizeof(*cl->v));
		cl->nr -= j - i - 1;
	}
	cl->v[i].lo = lo;
	cl->v[i].hi = hi;
}

static struct bpos_h bpos_max(struct bpos_h a, struct bpos_h b)
{
	return bpos_cmp(a, b) >= 0 ? a : b;
}

static struct bpos_h bpos_min(struct bpos_h a, struct bpos_h b)
{
	return bpos_cmp(a, b) <= 0 ? a : b;
}

/* Newest first: journal seq, then node seq; the rest only to be deterministic. */
static int newest_cmp(const void *_a, const void *_b)
{
	const struct scanned_node *a = *(const struct scanned_node * const *)_a;
	const struct scanned_node *b = *(const struct scanned_node * const *)_b;

	if (a->journal_seq != b->journal_seq)
		return a->journal_seq > b->journal_seq ? -1 : 1;
	if (a->node_seq != b->node_seq)
		return a->node_seq > b->node_seq ? -1 : 1;
	return node_cmp(a, b);
}

/* Read and parse node @sn (any copy that parses, the first that verifies). */
static struct btree_node_h *scanned_read(struct bch_fs *c, const struct scanned_node *sn)
{
	struct btree_node_ctx ctx;
	struct btree_node_expect exp = {
		.btree_id = sn->btree_id, .level = sn->level,
		.min_key = sn->min_key, .max_key = sn->max_key, .check_min = true,
	};
	size_t bytes = (size_t)c->btree_node_size * 512;
	struct btree_node_h *fallback = NULL;

	btree_node_ctx_init(&ctx, c);
	for (unsigned i = 0; i < sn->nr_copies; i++) {
		struct btree_node_h *n;
		void *buf = xmalloc(bytes);

		if (bch_dev_read(c, sn->copy[i].dev, buf, bytes, sn->copy[i].sector)) {
			free(buf);
			continue;
		}
		if (btree_node_parse(&ctx, &exp, buf, bytes, "scan", &n, NULL))	/* takes @buf */
			continue;
		n->dev = sn->copy[i].dev;
		n->sector = sn->copy[i].sector;
		if (!n->csum_errors) {
			btree_node_free(fallback);
			return n;
		}
		if (fallback)
			btree_node_free(n);
		else
			fallback = n;
	}
	return fallback;
}

/* Append the parts of extent @k in [lo, hi) that no newer leaf gave. */
static void extent_take(struct bulk_keys *out, const struct claimed *cl, const struct bkey_ref *k,
			struct bpos_h lo, struct bpos_h hi, struct node_arena *arena,
			unsigned long *nr)
{
	struct bpos_h s = bpos_max(bkey_start_pos(&k->k), lo);
	struct bpos_h e = bpos_min(k->k.p, hi);
	size_t i;

	if (bpos_cmp(s, e) >= 0)
		return;
	/* an extent lies inside one inode: the cut points are offsets in it */
	for (i = claimed_first(cl, s, true); i <= cl->nr; i++) {
		struct bpos_h pe = i < cl->nr ? bpos_min(cl->v[i].lo, e) : e;

		if (bpos_cmp(s, pe) < 0) {
			struct bkey_ref piece = bch_extent_piece(k, s.offset, pe.offset, arena);

			bulk_keys_add(out, &piece.k, piece.v, piece.v_bytes);
			(*nr)++;
		}
		if (i == cl->nr || bpos_cmp(cl->v[i].hi, e) >= 0)
			break;
		s = cl->v[i].hi;
	}
}

int bch_node_scan_keys(struct bch_fs *c, const struct bch_node_scan *s, unsigned btree_id,
		       struct bpos_h min, struct bpos_h max, struct bulk_keys *out,
		       struct node_scan_use *u, struct printbuf *err)
{
	bool extents = btree_id == BTREE_ID_EXTENTS;
	const struct scanned_node **cand = NULL;
	struct claimed cl = { 0 };
	size_t nr = 0, i;

	memset(u, 0, sizeof(*u));
	for (i = 0; i < s->nr; i++) {
		const struct scanned_node *sn = &s->n[i];

		if (sn->btree_id != btree_id || sn->level)
			continue;
		if (extents ? bpos_cmp(sn->min_key, max) >= 0 || bpos_cmp(sn->max_key, min) <= 0
			    : bpos_cmp(sn->min_key, max) > 0 || bpos_cmp(sn->max_key, min) < 0)
			continue;
		cand = xrealloc(cand, (nr + 1) * sizeof(*cand));
		cand[nr++] = sn;
	}
	u->leaves = nr;
	if (nr)
		qsort(cand, nr, sizeof(*cand), newest_cmp);

	for (i = 0; i < nr; i++) {
		const struct scanned_node *sn = cand[i];
		struct bpos_h lo = bpos_max(sn->min_key, min), hi = bpos_min(sn->max_key, max);
		struct node_arena *arena;
		struct btree_node_h *n;
		unsigned long got = 0;

		if (claimed_covers(&cl, lo, hi, extents)) {
			u->older++;
			continue;
		}
		n = scanned_read(c, sn);
		if (!n) {
			/* it covers its range all the same: nothing older comes back */
			u->unreadable++;
			claimed_add(&cl, lo, hi);
			continue;
		}
		arena = node_arena_new();
		for (size_t k = 0; k < n->nr_keys; k++) {
			const struct bkey_ref *key = &n->keys[k];

			if (extents) {
				extent_take(out, &cl, key, lo, hi, arena, &got);
			} else if (bpos_cmp(key->k.p, lo) >= 0 && bpos_cmp(key->k.p, hi) <= 0 &&
				   !claimed_has(&cl, key->k.p)) {
				bulk_keys_add(out, &key->k, key->v, key->v_bytes);
				got++;
			}
		}
		claimed_add(&cl, lo, hi);
		if (got) {
			u->used++;
			u->keys += got;
			if (sn->journal_seq > u->newest_journal_seq)
				u->newest_journal_seq = sn->journal_seq;
		}
		node_arena_free(arena);
		btree_node_free(n);
	}
	bulk_keys_sort(out);
	free(cl.v);
	free(cand);
	return 0;
}
