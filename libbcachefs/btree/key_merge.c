// SPDX-License-Identifier: GPL-2.0
/*
 * Combining sorted runs of keys (key_merge.h): the bsets of a node, and
 * the journal keys laid over a node's keys by the iterators. Newer runs
 * win at equal positions (extents: for the sectors they cover), and
 * adjacent extents merge the way the 2018 read path did (doc/format.md §4.6,
 * doc/format.md §5.2.8, §4.6).
 */
#include <stdlib.h>
#include <string.h>

#include "bkey/bkey_types.h"
#include "bkey/extents.h"
#include "btree/key_merge.h"
#include "format/format.h"
#include "util/util.h"

/* ---- value arena: copies of values that had to change ---- */

struct node_arena {
	struct node_arena	*next;
	size_t			used, size;
	uint64_t		d[];
};

struct node_arena *node_arena_new(void)
{
	struct node_arena *a = xcalloc(1, sizeof(*a));

	return a;
}

void node_arena_free(struct node_arena *a)
{
	while (a) {
		struct node_arena *n = a->next;

		free(a);
		a = n;
	}
}

/* @a is the head (never holds data itself); blocks hang off a->next. */
static void *arena_alloc(struct node_arena *a, size_t bytes)
{
	size_t u64s = DIV_ROUND_UP(bytes, 8);
	struct node_arena *b = a->next;

	if (!b || b->size - b->used < u64s) {
		size_t sz = max_t(size_t, 4096, u64s);

		b = xcalloc(1, sizeof(*b) + sz * 8);
		b->size = sz;
		b->next = a->next;
		a->next = b;
	}
	b->used += u64s;
	return &b->d[b->used - u64s];
}

/* ---- growable key arrays ---- */

void keyvec_push(struct keyvec *v, const struct bkey_ref *k)
{
	if (v->nr == v->size) {
		v->size = v->size ? v->size * 2 : 64;
		v->k = xrealloc(v->k, v->size * sizeof(*v->k));
	}
	v->k[v->nr++] = *k;
}

/* Room for @nr more keys (one allocation instead of doubling copies). */
void keyvec_reserve(struct keyvec *v, size_t nr)
{
	if (v->size - v->nr < nr) {
		v->size = v->nr + nr;
		v->k = xrealloc(v->k, v->size * sizeof(*v->k));
	}
}

/* ---- extents: pieces and merging (doc/format.md §5.2.8, §4.6) ---- */

/* Piece [start, end) of extent @o (same inode), value adjusted for a front cut. */
struct bkey_ref bch_extent_piece(const struct bkey_ref *o, uint64_t start,
				 uint64_t end, struct node_arena *arena)
{
	struct bkey_ref r = *o;
	uint64_t d = start - bkey_start_pos(&o->k).offset;

	r.k.p.offset = end;
	r.k.size = (uint32_t)(end - start);
	if (d && (o->k.type == 128 || o->k.type == 129) && o->v_bytes) {
		uint8_t *v = arena_alloc(arena, o->v_bytes);

		memcpy(v, o->v, o->v_bytes);
		/* an invalid value stays as it is; validation reports it */
		extent_cut_front(v, o->v_bytes, d);
		r.v = v;
	}
	return r;
}

/*
 * extent_can_merge() with a shortcut for the common case, values of
 * pointer entries only (no crc): the same rule, compared word by word.
 */
static bool extents_mergeable(const struct bkey_ref *l, const struct bkey_ref *r,
			      const uint16_t *bucket_size)
{
	unsigned i, nr = l->v_bytes / 8;

	if (l->k.u64s != r->k.u64s || l->k.type != r->k.type ||
	    l->k.version_hi != r->k.version_hi || l->k.version_lo != r->k.version_lo ||
	    !bpos_eq(l->k.p, bkey_start_pos(&r->k)) ||
	    (uint64_t)l->k.size + r->k.size > UINT32_MAX)
		return false;
	if ((l->k.type != BCH_EXTENT && l->k.type != BCH_EXTENT_CACHED) ||
	    !nr || l->v_bytes != r->v_bytes || l->v_bytes % 8 || !l->v || !r->v)
		return extent_can_merge(l, r, bucket_size, BTREE_NODE_MAX_DEVS);

	for (i = 0; i < nr; i++) {
		struct bch_extent_ptr wa, wb;
		struct bch_extent_ptr_unpacked a, b;
		unsigned bs;

		memcpy(&wa, (const uint8_t *)l->v + i * 8, 8);
		memcpy(&wb, (const uint8_t *)r->v + i * 8, 8);
		if (!(le64_to_cpu(wa.w) & 1) || !(le64_to_cpu(wb.w) & 1))
			return extent_can_merge(l, r, bucket_size, BTREE_NODE_MAX_DEVS);
		a = bch_extent_ptr_unpack(&wa);
		b = bch_extent_ptr_unpack(&wb);
		if ((le64_to_cpu(wa.w) & 0xf) != (le64_to_cpu(wb.w) & 0xf) ||
		    a.dev != b.dev || a.gen != b.gen || a.offset + l->k.size != b.offset)
			return false;
		bs = bucket_size && a.dev < BTREE_NODE_MAX_DEVS ? bucket_size[a.dev] : 0;
		if (!bs || a.offset / bs != b.offset / bs)
			return false;
	}
	return true;
}

size_t bch_extents_merge(struct bkey_ref *k, size_t nr, const uint16_t *bucket_size)
{
	size_t i, out = 0;

	for (i = 0; i < nr; i++) {
		if (out && extents_mergeable(&k[out - 1], &k[i], bucket_size)) {
			k[out - 1].k.size += k[i].k.size;
			k[out - 1].k.p = k[i].k.p;
			continue;
		}
		k[out++] = k[i];
	}
	return out;
}

/* ---- combining sorted runs ---- */

static int ref_pos_cmp(const struct bkey_ref *a, const struct bkey_ref *b)
{
	return bpos_cmp(a->k.p, b->k.p);
}

/* Non-extents: the newer run wins at equal positions; whiteouts delete. */
static void overlay_keys(const struct keyvec *old, const struct key_run *run,
			 struct keyvec *out)
{
	size_t i = 0, j = 0;

	while (i < old->nr || j < run->nr) {
		const struct bkey_ref *n;
		int c;

		if (j == run->nr) {
			keyvec_push(out, &old->k[i++]);
			continue;
		}
		n = &run->k[j];
		/* equal positions inside one run: the later key is newer */
		if (j + 1 < run->nr && bpos_eq(n->k.p, run->k[j + 1].k.p)) {
			j++;
			continue;
		}
		c = i < old->nr ? ref_pos_cmp(&old->k[i], n) : 1;
		if (c < 0) {
			keyvec_push(out, &old->k[i++]);
			continue;
		}
		if (!c)
			i++;			/* overridden */
		if (!bkey_is_whiteout(&n->k))
			keyvec_push(out, n);
		j++;
	}
}

/* A key of a newer run that takes part: live, with sectors. */
static bool run_key_live(const struct bkey_ref *k)
{
	return k->k.size && !bkey_is_whiteout(&k->k);
}

/*
 * Piece @piece of an old key goes to @out, after the live keys of @run
 * (from *@li on) that sort before it: the merge of the pieces with the
 * live keys, ties to the piece, done as the pieces come.
 */
static void emit_piece(struct keyvec *out, const struct bkey_ref *piece,
		       const struct key_run *run, size_t *li)
{
	for (; *li < run->nr; (*li)++) {
		if (!run_key_live(&run->k[*li]))
			continue;
		if (ref_pos_cmp(piece, &run->k[*li]) <= 0)
			break;
		keyvec_push(out, &run->k[*li]);
	}
	keyvec_push(out, piece);
}

/*
 * Extents: the newer run decides every sector it covers (doc/format.md §4.6).
 * The pieces of the old keys that no key of the run covers are merged
 * with the run's live keys straight into @out, in one pass: no copy of
 * either list in between (a node's keys are read once and written once).
 */
static void overlay_extents(const struct keyvec *old, const struct key_run *run,
			    struct node_arena *arena, struct keyvec *out)
{
	size_t i, j = 0, li = 0;

	keyvec_reserve(out, old->nr + run->nr);

	for (i = 0; i < old->nr; i++) {
		const struct bkey_ref *o = &old->k[i];
		struct bpos_h ostart = bkey_start_pos(&o->k);
		uint64_t cur = ostart.offset;
		size_t jj;

		while (j < run->nr &&
		       (!run->k[j].k.size || bpos_cmp(run->k[j].k.p, ostart) <= 0))
			j++;

		for (jj = j; jj < run->nr; jj++) {
			const struct bkey_ref *n = &run->k[jj];
			struct bpos_h nstart = bkey_start_pos(&n->k);

			if (!n->k.size)
				continue;
			if (bpos_cmp(nstart, o->k.p) >= 0)
				break;
			/* n overlaps o: same inode */
			if (nstart.offset > cur) {
				struct bkey_ref piece = bch_extent_piece(o, cur, nstart.offset, arena);

				emit_piece(out, &piece, run, &li);
			}
			if (n->k.p.offset > cur)
				cur = n->k.p.offset;
		}
		if (cur == ostart.offset) {
			emit_piece(out, o, run, &li);
		} else if (cur < o->k.p.offset) {
			struct bkey_ref piece = bch_extent_piece(o, cur, o->k.p.offset, arena);

			emit_piece(out, &piece, run, &li);
		}
	}
	for (; li < run->nr; li++)
		if (run_key_live(&run->k[li]))
			keyvec_push(out, &run->k[li]);
}

/*
 * Lay @runs over @cur, oldest first. @cur is owned (its buffer is reused)
 * or borrowed (@owned false: a view of keys that stay where they are).
 */
void bch_keys_overlay_rounds(bool extents, struct keyvec cur, bool owned,
			   const struct key_run *runs, unsigned nr_runs,
			   struct node_arena *arena, struct bkey_ref **out, size_t *nr_out)
{
	struct keyvec next = { 0 };
	unsigned r;

	for (r = 0; r < nr_runs; r++) {
		next.nr = 0;
		if (!extents)
			keyvec_reserve(&next, cur.nr + runs[r].nr);
		if (extents)
			overlay_extents(&cur, &runs[r], arena, &next);
		else
			overlay_keys(&cur, &runs[r], &next);

		struct keyvec t = cur;
		cur = next;
		next = owned ? t : (struct keyvec) { 0 };
		owned = true;
	}
	if (!owned) {
		/* no run to lay over a borrowed list: a copy of it */
		next.nr = 0;
		keyvec_reserve(&next, cur.nr + 1);
		memcpy(next.k, cur.k, cur.nr * sizeof(*cur.k));
		next.nr = cur.nr;
		cur = next;
		next = (struct keyvec) { 0 };
	}
	free(next.k);
	*out = cur.k;
	*nr_out = cur.nr;
}

/*
 * Before each round the current keys move to the end of @k and the merge
 * writes from the front, so it must never write over a key it has not
 * read yet. Non-extents write at most one key per key consumed: the room
 * before the keys read (at least the keys of the runs to come) is never
 * less than what was consumed of the run. Extents also write the pieces
 * of old keys: one more per run key starting inside an old key (old keys
 * do not overlap, so each run key splits at most one), and each run key
 * once: twice the run's keys, plus one, is room enough.
 */
size_t bch_keys_overlay_room(bool extents, size_t nr, const struct key_run *runs,
			     unsigned nr_runs)
{
	size_t rest = 0;

	for (unsigned r = 0; r < nr_runs; r++)
		rest += runs[r].nr;
	return extents ? nr + 2 * rest + 1 : nr + rest;
}

size_t bch_keys_overlay_in_place(bool extents, struct bkey_ref *k, size_t nr, size_t cap,
				 const struct key_run *runs, unsigned nr_runs,
				 struct node_arena *arena)
{
	for (unsigned r = 0; r < nr_runs; r++) {
		struct keyvec old = { .k = k + (cap - nr), .nr = nr, .size = nr };
		struct keyvec out = { .k = k, .size = cap };

		memmove(old.k, k, nr * sizeof(*k));
		if (extents)
			overlay_extents(&old, &runs[r], arena, &out);
		else
			overlay_keys(&old, &runs[r], &out);
		nr = out.nr;
	}
	return nr;
}

/*
 * Lay run @run (@rn keys at k + @start, @start >= @nr) over the keys so
 * far k[0..@nr), as overlay_keys() does (the later of two keys at one
 * position in the run, the run's key over the one so far, no whiteout of
 * the run), without a copy of either: the order is worked out as indices
 * first (@P, @limit = @start + @rn entries; @used, @limit bits), then the
 * keys are moved once each, cycle by cycle, inside k[0..@limit). A copy of
 * the smaller side was a second list of up to half a node's keys (d1's
 * alloc leaf: 170 KiB, every page of it fresh). Returns the keys left.
 */
static size_t overlay_keys_by_index(struct bkey_ref *k, size_t nr, size_t start, size_t rn,
				    uint32_t *P, uint64_t *used)
{
	const struct bkey_ref *run = k + start;
	size_t limit = start + rn, i = 0, j = 0, o = 0, u = 0;

	memset(used, 0, DIV_ROUND_UP(limit, 64) * sizeof(*used));
	while (i < nr || j < rn) {
		int c;

		if (j == rn) {
			P[o++] = (uint32_t)i++;
			continue;
		}
		/* equal positions inside one run: the later key is newer */
		if (j + 1 < rn && bpos_eq(run[j].k.p, run[j + 1].k.p)) {
			j++;
			continue;
		}
		c = i < nr ? ref_pos_cmp(&k[i], &run[j]) : 1;
		if (c < 0) {
			P[o++] = (uint32_t)i++;
			continue;
		}
		if (!c)
			i++;			/* overridden */
		if (!bkey_is_whiteout(&run[j].k))
			P[o++] = (uint32_t)(start + j);
		j++;
	}
	/* the places not taken get the keys not kept: a permutation of k[0..limit) */
	for (size_t x = 0; x < o; x++)
		used[P[x] / 64] |= 1ULL << (P[x] % 64);
	for (size_t x = o; x < limit; x++) {
		while (used[u / 64] & (1ULL << (u % 64)))
			u++;
		P[x] = (uint32_t)u++;
	}
	/* k[x] = old k[P[x]]: each cycle with one key aside (P[x] = x once placed) */
	for (size_t x = 0; x < limit; x++) {
		struct bkey_ref aside;
		size_t cur = x;

		if (P[x] == x)
			continue;
		aside = k[x];
		for (;;) {
			size_t from = P[cur];

			P[cur] = (uint32_t)cur;
			if (from == x) {
				k[cur] = aside;
				break;
			}
			k[cur] = k[from];
			cur = from;
		}
	}
	return o;
}

/*
 * Non-extents, the runs where a node's bsets were read: a run that sorts
 * after every key so far (bsets appended as keys were added in order)
 * is appended where it lies, with the filter of overlay_keys() (the later
 * of two keys at one position, no whiteout); otherwise the two are merged
 * in place (overlay_keys_by_index()). Either way nothing past the run's
 * end is touched, so the runs after it stay intact.
 */
size_t bch_keys_overlay_in_buffer(struct bkey_ref *k, size_t nr, const struct key_run_at *runs,
				  unsigned nr_runs)
{
	uint32_t *P = NULL;
	uint64_t *used = NULL;
	size_t size = 0;

	for (unsigned r = 0; r < nr_runs; r++) {
		struct bkey_ref *run = k + runs[r].start;
		size_t rn = runs[r].nr, limit = runs[r].start + rn;

		if (!rn)
			continue;
		if (!nr || bpos_cmp(k[nr - 1].k.p, run[0].k.p) < 0) {
			for (size_t j = 0; j < rn; j++)
				if (!(j + 1 < rn && bpos_eq(run[j].k.p, run[j + 1].k.p)) &&
				    !bkey_is_whiteout(&run[j].k))
					k[nr++] = run[j];
			continue;
		}
		if (limit > size) {
			size = limit;
			P = xrealloc(P, size * sizeof(*P));
			used = xrealloc(used, DIV_ROUND_UP(size, 64) * sizeof(*used));
		}
		nr = overlay_keys_by_index(k, nr, runs[r].start, rn, P, used);
	}
	free(P);
	free(used);
	return nr;
}

int bch_keys_overlay(bool extents, const struct key_run *runs, unsigned nr_runs,
		     struct node_arena *arena, struct bkey_ref **out, size_t *nr_out)
{
	bch_keys_overlay_rounds(extents, (struct keyvec) { 0 }, true, runs, nr_runs, arena, out, nr_out);
	return 0;
}
