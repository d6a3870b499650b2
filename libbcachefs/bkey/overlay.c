// SPDX-License-Identifier: GPL-2.0
/*
 * The in-memory overlay of keys newer than the btree nodes: see overlay.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bkey/extents.h"
#include "format/format.h"
#include "bkey/overlay.h"
#include "util/util.h"

void bch_overlay_clear(struct bch_overlay *ov)
{
	uint64_t changes = ov->changes, clears = ov->clears;

	for (unsigned id = 0; id < OV_NR_BTREES; id++) {
		struct ov_tree *t = &ov->t[id];

		for (size_t ci = 0; ci < t->nr; ci++) {
			for (unsigned i = 0; i < t->c[ci]->nr; i++)
				free(t->c[ci]->keys[i].v);
			free(t->c[ci]);
		}
		free(t->c);
	}
	memset(ov, 0, sizeof(*ov));
	ov->changes = changes + 1;
	ov->clears = clears + 1;
}

/* ---- positions ---------------------------------------------------------- */

static bool is_extents(unsigned btree_id)
{
	return btree_id == BTREE_ID_EXTENTS;
}

/* Has key position @kp reached @pos (extents: strictly after it)? */
static bool reached(bool extents, struct bpos_h kp, struct bpos_h pos)
{
	int c = bpos_cmp(kp, pos);

	return extents ? c > 0 : c >= 0;
}

/* (ci, i) past the end of a chunk moves to the start of the next one. */
static void it_norm(struct ov_iter *it)
{
	if (it->ci < it->t->nr && it->i >= it->t->c[it->ci]->nr) {
		it->ci++;
		it->i = 0;
	}
}

static void seek_tree(const struct ov_tree *t, bool extents, struct bpos_h pos,
		      struct ov_iter *it)
{
	size_t l = 0, r = t->nr;

	while (l < r) {
		size_t m = l + (r - l) / 2;
		const struct ov_chunk *c = t->c[m];

		if (reached(extents, c->keys[c->nr - 1].k.p, pos))
			r = m;
		else
			l = m + 1;
	}
	it->t = t;
	it->ci = l;
	it->i = 0;
	if (l < t->nr) {
		const struct ov_chunk *c = t->c[l];
		unsigned a = 0, b = c->nr;

		while (a < b) {
			unsigned m = a + (b - a) / 2;

			if (reached(extents, c->keys[m].k.p, pos))
				b = m;
			else
				a = m + 1;
		}
		it->i = a;
	}
}

void bch_overlay_seek(const struct bch_overlay *ov, unsigned btree_id, struct bpos_h pos,
		      struct ov_iter *it)
{
	static const struct ov_tree empty;

	if (btree_id >= OV_NR_BTREES) {
		*it = (struct ov_iter) { .t = &empty };
		return;
	}
	seek_tree(&ov->t[btree_id], is_extents(btree_id), pos, it);
}

const struct ov_key *bch_overlay_peek(const struct ov_iter *it)
{
	if (!it->t || it->ci >= it->t->nr || it->i >= it->t->c[it->ci]->nr)
		return NULL;
	return &it->t->c[it->ci]->keys[it->i];
}

void bch_overlay_next(struct ov_iter *it)
{
	if (!bch_overlay_peek(it))
		return;
	it->i++;
	it_norm(it);
}

/* ---- changing a tree ------------------------------------------------------ */

static size_t key_bytes(const struct ov_key *k)
{
	return sizeof(*k) + k->v_bytes;
}

static void key_set(struct bch_overlay *ov, struct ov_key *dst, const struct bkey_h *k,
		    const void *v, unsigned v_bytes)
{
	dst->k = *k;
	dst->v_bytes = v_bytes;
	dst->v = NULL;
	if (v_bytes) {
		dst->v = xmalloc(v_bytes);
		memcpy(dst->v, v, v_bytes);
	}
	ov->bytes += key_bytes(dst);
}

/*
 * Insert the key @k (taken over: its value is owned already) at (@it->ci,
 * @it->i) of its tree; @it then points at it.
 */
static void ins_at(struct bch_overlay *ov, struct ov_tree *t, struct ov_iter *it,
		   const struct ov_key *k)
{
	struct ov_chunk *c;

	if (!t->nr) {
		if (!t->c) {	/* kept when the tree empties again */
			t->size = 16;
			t->c = xcalloc(t->size, sizeof(*t->c));
		}
		t->c[0] = xcalloc(1, sizeof(*t->c[0]));
		t->nr = 1;
		it->ci = it->i = 0;
	} else if (it->ci >= t->nr) {
		it->ci = t->nr - 1;
		it->i = t->c[it->ci]->nr;
	}
	c = t->c[it->ci];
	if (c->nr == OV_CHUNK) {
		/* split: the upper half goes to a new chunk after this one */
		struct ov_chunk *n = xcalloc(1, sizeof(*n));
		unsigned half = OV_CHUNK / 2;

		memcpy(n->keys, c->keys + half, (OV_CHUNK - half) * sizeof(c->keys[0]));
		n->nr = OV_CHUNK - half;
		c->nr = half;
		if (t->nr == t->size) {
			t->size *= 2;
			t->c = xrealloc(t->c, t->size * sizeof(*t->c));
		}
		memmove(t->c + it->ci + 2, t->c + it->ci + 1,
			(t->nr - it->ci - 1) * sizeof(*t->c));
		t->c[it->ci + 1] = n;
		t->nr++;
		if (it->i > half) {
			it->ci++;
			it->i -= half;
			c = n;
		}
	}
	memmove(c->keys + it->i + 1, c->keys + it->i, (c->nr - it->i) * sizeof(c->keys[0]));
	c->keys[it->i] = *k;
	c->nr++;
	t->nr_keys++;
	ov->nr_keys++;
}

/* Remove the key at @it (its value freed); @it then points at the next key. */
static void del_at(struct bch_overlay *ov, struct ov_tree *t, struct ov_iter *it)
{
	struct ov_chunk *c = t->c[it->ci];

	ov->bytes -= key_bytes(&c->keys[it->i]);
	free(c->keys[it->i].v);
	memmove(c->keys + it->i, c->keys + it->i + 1, (c->nr - it->i - 1) * sizeof(c->keys[0]));
	c->nr--;
	t->nr_keys--;
	ov->nr_keys--;
	if (!c->nr) {
		free(c);
		memmove(t->c + it->ci, t->c + it->ci + 1, (t->nr - it->ci - 1) * sizeof(*t->c));
		t->nr--;
		it->i = 0;
		return;
	}
	it_norm(it);
}

/* Keep only sectors [@start, end) of extent @k (a front cut, doc/format.md §5.2.8). */
static void cut_front(struct ov_key *k, uint64_t start)
{
	uint64_t d = start - bkey_start_pos(&k->k).offset;

	k->k.size -= (uint32_t)d;
	if ((k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED) && k->v_bytes)
		extent_cut_front(k->v, k->v_bytes, d);	/* invalid values stay as they are */
}

/* Keep only sectors [start, @end) of extent @k (a back cut). */
static void cut_back(struct ov_key *k, uint64_t end)
{
	k->k.size -= (uint32_t)(k->k.p.offset - end);
	k->k.p.offset = end;
}

static void insert_extent(struct bch_overlay *ov, struct ov_tree *t, const struct bkey_ref *k)
{
	struct bpos_h s = bkey_start_pos(&k->k);
	uint64_t e = k->k.p.offset;
	struct ov_iter it;
	struct ov_key *o, nk;

	seek_tree(t, true, s, &it);
	while ((o = (struct ov_key *)bch_overlay_peek(&it)) &&
	       bpos_cmp(bkey_start_pos(&o->k), k->k.p) < 0) {
		uint64_t oe = o->k.p.offset;

		if (bpos_cmp(bkey_start_pos(&o->k), s) < 0) {
			if (oe > e) {
				/* the new key lands in the middle of @o: split it */
				struct ov_key back;

				key_set(ov, &back, &o->k, o->v, o->v_bytes);
				cut_front(&back, e);
				cut_back(o, s.offset);
				it.i++;
				ins_at(ov, t, &it, &back);
				break;
			}
			cut_back(o, s.offset);
			it.i++;
			it_norm(&it);
			continue;
		}
		if (oe <= e) {
			del_at(ov, t, &it);
			continue;
		}
		cut_front(o, e);
		break;
	}
	key_set(ov, &nk, &k->k, k->v, k->v_bytes);
	ins_at(ov, t, &it, &nk);
}

int bch_overlay_insert(struct bch_overlay *ov, unsigned btree_id, const struct bkey_ref *k)
{
	struct ov_tree *t;
	struct ov_iter it;
	struct ov_key *o, nk;

	if (btree_id >= OV_NR_BTREES)
		return -EINVAL;
	t = &ov->t[btree_id];
	ov->changes++;

	if (is_extents(btree_id)) {
		if (k->k.size)
			insert_extent(ov, t, k);
		return 0;
	}
	seek_tree(t, false, k->k.p, &it);
	o = (struct ov_key *)bch_overlay_peek(&it);
	if (o && bpos_eq(o->k.p, k->k.p)) {
		ov->bytes -= key_bytes(o);
		free(o->v);
		key_set(ov, o, &k->k, k->v, k->v_bytes);
		return 0;
	}
	key_set(ov, &nk, &k->k, k->v, k->v_bytes);
	ins_at(ov, t, &it, &nk);
	return 0;
}

/*
 * Insert @k as older than everything in the overlay: only where no
 * overlay key is (extents: the pieces of @k over the gaps between overlay
 * extents, cut like any extent).
 */
int bch_overlay_insert_under(struct bch_overlay *ov, unsigned btree_id, const struct bkey_ref *k)
{
	struct ov_iter it;
	const struct ov_key *o;

	if (btree_id >= OV_NR_BTREES)
		return -EINVAL;
	if (!is_extents(btree_id)) {
		bch_overlay_seek(ov, btree_id, k->k.p, &it);
		o = bch_overlay_peek(&it);
		if (o && bpos_eq(o->k.p, k->k.p))
			return 0;
		return bch_overlay_insert(ov, btree_id, k);
	}
	if (!k->k.size)
		return 0;

	struct bpos_h s = bkey_start_pos(&k->k);
	uint64_t cur = s.offset, e = k->k.p.offset;
	uint64_t (*gaps)[2] = NULL;
	size_t nr = 0;

	bch_overlay_seek(ov, btree_id, s, &it);
	for (; (o = bch_overlay_peek(&it)) && cur < e; bch_overlay_next(&it)) {
		struct bpos_h os = bkey_start_pos(&o->k);

		if (os.inode != s.inode || os.offset >= e)
			break;
		if (os.offset > cur) {
			gaps = xrealloc(gaps, (nr + 1) * sizeof(*gaps));
			gaps[nr][0] = cur;
			gaps[nr][1] = os.offset;
			nr++;
		}
		if (o->k.p.offset > cur)
			cur = o->k.p.offset;
	}
	if (cur < e) {
		gaps = xrealloc(gaps, (nr + 1) * sizeof(*gaps));
		gaps[nr][0] = cur;
		gaps[nr][1] = e;
		nr++;
	}
	for (size_t i = 0; i < nr; i++) {
		struct ov_key piece;
		struct bkey_ref r;

		/* a copy of @k cut to the gap, handed to the overlay */
		piece.k = k->k;
		piece.v_bytes = k->v_bytes;
		piece.v = k->v_bytes ? xmalloc(k->v_bytes) : NULL;
		if (k->v_bytes)
			memcpy(piece.v, k->v, k->v_bytes);
		if (gaps[i][0] > s.offset)
			cut_front(&piece, gaps[i][0]);
		if (gaps[i][1] < e)
			cut_back(&piece, gaps[i][1]);
		r = ov_key_ref(&piece);
		bch_overlay_insert(ov, btree_id, &r);
		free(piece.v);
	}
	free(gaps);
	return 0;
}
