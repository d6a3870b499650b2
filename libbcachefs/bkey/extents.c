// SPDX-License-Identifier: GPL-2.0
/*
 * Extent values: walking the entry list, pointer checks, printing, the
 * merge rule and front cuts (doc/format.md §5.2, §5.4, §4.5).
 */
#include "bkey/extents.h"

#include <string.h>

#include "bkey/bkey.h"
#include "util/errcode.h"
#include "format/format.h"
#include "util/util.h"

/* ---- walking entries ---- */

void extent_entry_iter_init(struct extent_entry_iter *it, const struct bkey_ref *k)
{
	it->v	  = k->v;
	it->bytes = k->v ? k->v_bytes : 0;
	it->pos	  = 0;
}

/* Decode the crc entry of kind @type at @p (its u64s words are readable). */
static inline void crc_decode(const uint8_t *p, int type, uint64_t w,
			      struct bch_extent_crc_unpacked *c)
{
	c->entry_type = type;
	switch (type) {
	case BCH_EXTENT_ENTRY_crc32:
		c->compressed_size   = (uint32_t)((w >> 2) & 0x7f) + 1;
		c->uncompressed_size = (uint32_t)((w >> 9) & 0x7f) + 1;
		c->offset	     = (uint32_t)((w >> 16) & 0x7f);
		c->nonce	     = 0;
		c->csum_type	     = (uint8_t)((w >> 24) & 0xf);
		c->compression_type  = (uint8_t)((w >> 28) & 0xf);
		c->csum_lo	     = w >> 32;
		c->csum_hi	     = 0;
		break;
	case BCH_EXTENT_ENTRY_crc64:
		c->compressed_size   = (uint32_t)((w >> 3) & 0x1ff) + 1;
		c->uncompressed_size = (uint32_t)((w >> 12) & 0x1ff) + 1;
		c->offset	     = (uint32_t)((w >> 21) & 0x1ff);
		c->nonce	     = (uint32_t)((w >> 30) & 0x3ff);
		c->csum_type	     = (uint8_t)((w >> 40) & 0xf);
		c->compression_type  = (uint8_t)((w >> 44) & 0xf);
		c->csum_lo	     = get_le64_unaligned(p + 8);
		c->csum_hi	     = w >> 48;
		break;
	default:	/* crc128 */
		c->compressed_size   = (uint32_t)((w >> 4) & 0x1fff) + 1;
		c->uncompressed_size = (uint32_t)((w >> 17) & 0x1fff) + 1;
		c->offset	     = (uint32_t)((w >> 30) & 0x1fff);
		c->nonce	     = (uint32_t)((w >> 43) & 0x1fff);
		c->csum_type	     = (uint8_t)((w >> 56) & 0xf);
		c->compression_type  = (uint8_t)(w >> 60);
		c->csum_lo	     = get_le64_unaligned(p + 8);
		c->csum_hi	     = get_le64_unaligned(p + 16);
		break;
	}
}

static inline void ptr_decode(uint64_t w, struct bch_extent_ptr_unpacked *p)
{
	p->offset	 = (w >> 4) & ((1ULL << 44) - 1);
	p->dev		 = (uint8_t)(w >> 48);
	p->gen		 = (uint8_t)(w >> 56);
	p->cached	 = (w >> 1) & 1;
	p->erasure_coded = (w >> 2) & 1;
	p->reservation	 = (w >> 3) & 1;
}

/* Entry kind of first word @w (as bch_extent_entry_type()) and its u64s. */
static inline int entry_type_of(uint64_t w)
{
	int t;

	if (!w)
		return -1;
	t = __builtin_ctzll(w);
	return t < BCH_EXTENT_ENTRY_MAX ? t : -1;
}

static const uint8_t entry_u64s[BCH_EXTENT_ENTRY_MAX] = { 1, 1, 2, 3 };

int extent_entry_iter_next(struct extent_entry_iter *it, struct extent_entry_h *e)
{
	const uint8_t *p;
	uint64_t w;
	int t;

	e->offset    = it->pos;
	e->truncated = false;
	if (it->pos >= it->bytes) {
		e->type = -1;
		e->u64s = 0;
		e->raw	= 0;
		return 0;
	}
	if (it->bytes - it->pos < 8) {
		e->type	     = -1;
		e->u64s	     = 0;
		e->raw	     = 0;
		e->truncated = true;
		it->pos = it->bytes;
		return -BCH_ERR_key_invalid;
	}

	p = it->v + it->pos;
	w = get_le64_unaligned(p);
	t = entry_type_of(w);
	e->raw	= w;
	e->u64s	= t >= 0 ? entry_u64s[t] : 0;
	if (t < 0 || it->bytes - it->pos < e->u64s * 8) {
		e->truncated = t >= 0;
		e->type = -1;
		it->pos = it->bytes;
		return -BCH_ERR_key_invalid;
	}

	e->type = t;
	if (t == BCH_EXTENT_ENTRY_ptr)
		ptr_decode(w, &e->ptr);
	else
		crc_decode(p, t, w, &e->crc);
	it->pos += e->u64s * 8;
	return 1;
}

void extent_ptr_iter_init(struct extent_ptr_iter *it, const struct bkey_ref *k)
{
	extent_entry_iter_init(&it->e, k);
	it->crc = bch_extent_crc_none(k->k.size);
}

int extent_ptr_iter_next(struct extent_ptr_iter *it, struct extent_ptr_decoded *p)
{
	struct extent_entry_h e;
	int ret;

	while ((ret = extent_entry_iter_next(&it->e, &e)) > 0) {
		if (e.type != BCH_EXTENT_ENTRY_ptr) {
			it->crc = e.crc;
			continue;
		}
		p->ptr	  = e.ptr;
		p->crc	  = it->crc;
		p->offset = e.offset;
		return 1;
	}
	return ret;
}

unsigned extent_nr_ptrs(const struct bkey_ref *k)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	unsigned nr = 0;

	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0)
		nr++;
	return nr;
}

bool extent_ptr_stale(const struct bkey_fs_ctx *fs, const struct bch_extent_ptr_unpacked *p)
{
	struct bch_dev_geom g;
	uint8_t gen;

	if (!fs || !fs->bucket_gen || !fs->dev_geom ||
	    !fs->dev_geom(fs->priv, p->dev, &g) || !g.bucket_size)
		return false;
	if (!fs->bucket_gen(fs->priv, p->dev, p->offset / g.bucket_size, &gen))
		return false;
	return gen_after(gen, p->gen);
}

/* ---- validity ---- */

static bool dup_dev(const struct bkey_ref *k, const struct extent_entry_h *ptr)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;

	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0)
		if (p.offset != ptr->offset && p.ptr.dev == ptr->ptr.dev)
			return true;
	return false;
}

/* Pointer checks of doc/format.md §5.2.9 step 5 with on-disk size @size. */
static const char *ptr_invalid(const struct bkey_ref *k, const struct extent_entry_h *e,
			       uint64_t size, const struct bkey_fs_ctx *fs)
{
	const struct bch_extent_ptr_unpacked *p = &e->ptr;
	struct bch_dev_geom g;
	uint64_t bs;

	if (fs && fs->dev_geom &&
	    (p->dev >= fs->nr_devices || !fs->dev_geom(fs->priv, p->dev, &g)))
		return "pointer to invalid device";
	if (dup_dev(k, e))
		return "multiple pointers to same device";
	if (!fs || !fs->dev_geom)
		return NULL;

	bs = g.bucket_size;
	if (!bs)
		return "pointer to invalid device";
	if (p->offset + size > g.nbuckets * bs)
		return "offset past end of device";
	if (p->offset < (uint64_t)g.first_bucket * bs)
		return "offset before first bucket";
	if (p->offset % bs + size > bs)
		return "spans multiple buckets";
	return NULL;
}

static bool csum_type_ok(unsigned type, const struct bkey_fs_ctx *fs)
{
	if (type >= BCH_CSUM_NR)
		return false;
	if (bch_csum_type_is_encryption(type) && fs && !fs->key_unknown)
		return fs->have_key;
	return true;
}

static const char *crc_invalid(const struct bkey_ref *k, const struct bch_extent_crc_unpacked *c,
			       uint64_t *nonce, const struct bkey_fs_ctx *fs)
{
	if ((uint64_t)c->offset + k->k.size > c->uncompressed_size)
		return "checksum offset + key size > uncompressed size";
	if (!csum_type_ok(c->csum_type, fs))
		return "invalid checksum type";
	if (c->compression_type >= BCH_COMPRESSION_NR)
		return "invalid compression type";
	if (bch_csum_type_is_encryption(c->csum_type)) {
		uint64_t n = (uint64_t)c->offset + c->nonce;

		if (*nonce == UINT64_MAX)
			*nonce = n;
		else if (*nonce != n)
			return "incorrect nonce";
	}
	return NULL;
}

static const char *extent_entries_invalid_slow(const struct bkey_ref *k,
					       const struct bkey_fs_ctx *fs)
{
	struct extent_entry_iter it;
	struct extent_entry_h e;
	uint64_t size = k->k.size, nonce = UINT64_MAX;
	const char *r;
	int ret;

	extent_entry_iter_init(&it, k);
	while ((ret = extent_entry_iter_next(&it, &e)) > 0) {
		if (e.type == BCH_EXTENT_ENTRY_ptr) {
			r = ptr_invalid(k, &e, size, fs);
		} else {
			r = crc_invalid(k, &e.crc, &nonce, fs);
			size = e.crc.compressed_size;
		}
		if (r)
			return r;
	}
	if (ret < 0)
		return e.truncated
			? "extent entry extends past end of value"
			: "invalid extent entry type";
	return NULL;
}

/*
 * The same checks in the same order for a value whose entries are all
 * valid kinds inside the value (anything else: the walk above): the
 * pointers are decoded once, the duplicate-device check compares them
 * without walking the value again per pointer.
 */
static const char *extent_entries_invalid(const struct bkey_ref *k,
					  const struct bkey_fs_ctx *fs)
{
	struct bch_extent_ptr_unpacked p[BKEY_EXTENT_VAL_U64s_MAX];
	const uint8_t *v = k->v;
	unsigned bytes = k->v ? k->v_bytes : 0, pos, nr_p = 0, i, j;
	uint64_t size = k->k.size, nonce = UINT64_MAX;
	const char *r;

	if (bytes % 8 || bytes > BKEY_EXTENT_VAL_U64s_MAX * 8)
		return extent_entries_invalid_slow(k, fs);
	for (pos = 0; pos < bytes; ) {
		uint64_t w = get_le64_unaligned(v + pos);
		int t = entry_type_of(w);

		if (t < 0 || bytes - pos < entry_u64s[t] * 8u)
			return extent_entries_invalid_slow(k, fs);
		if (t == BCH_EXTENT_ENTRY_ptr)
			ptr_decode(w, &p[nr_p++]);
		pos += entry_u64s[t] * 8;
	}

	for (pos = 0, i = 0; pos < bytes; ) {
		uint64_t w = get_le64_unaligned(v + pos);
		int t = entry_type_of(w);

		if (t == BCH_EXTENT_ENTRY_ptr) {
			struct bch_dev_geom g;
			uint64_t bs;

			if (fs && fs->dev_geom &&
			    (p[i].dev >= fs->nr_devices || !fs->dev_geom(fs->priv, p[i].dev, &g)))
				return "pointer to invalid device";
			for (j = 0; j < nr_p; j++)
				if (j != i && p[j].dev == p[i].dev)
					return "multiple pointers to same device";
			if (fs && fs->dev_geom) {
				bs = g.bucket_size;
				if (!bs)
					return "pointer to invalid device";
				if (p[i].offset + size > g.nbuckets * bs)
					return "offset past end of device";
				if (p[i].offset < (uint64_t)g.first_bucket * bs)
					return "offset before first bucket";
				if (p[i].offset % bs + size > bs)
					return "spans multiple buckets";
			}
			i++;
		} else {
			struct bch_extent_crc_unpacked c;

			crc_decode(v + pos, t, w, &c);
			r = crc_invalid(k, &c, &nonce, fs);
			if (r)
				return r;
			size = c.compressed_size;
		}
		pos += entry_u64s[t] * 8;
	}
	return NULL;
}

const char *extent_invalid(const struct bkey_ref *k, const struct bkey_fs_ctx *fs)
{
	const struct bch_reservation *r;

	if (k->k.type < BCH_EXTENT || k->k.type > BCH_RESERVATION)
		return "invalid value type";
	if (k->v_bytes > BKEY_EXTENT_VAL_U64s_MAX * 8)
		return "value too big";
	if (!k->k.size)
		return "zero key size";
	if (k->k.type != BCH_RESERVATION)
		return extent_entries_invalid(k, fs);

	if (k->v_bytes != sizeof(struct bch_reservation))
		return "incorrect value size";
	r = k->v;
	if (!r->nr_replicas || r->nr_replicas > BCH_REPLICAS_MAX)
		return "invalid nr_replicas";
	return NULL;
}

const char *btree_ptr_invalid(const struct bkey_ref *k, const struct bkey_fs_ctx *fs)
{
	struct extent_entry_iter it;
	struct extent_entry_h e;
	uint64_t size = fs ? fs->btree_node_size : 0;
	const char *r;
	int ret;

	if (k->k.type == BCH_EXTENT_CACHED)
		return "cached";
	if (k->k.size)
		return "nonzero key size";
	if (k->v_bytes > BKEY_BTREE_PTR_VAL_U64s_MAX * 8)
		return "value too big";
	if (k->k.type != BCH_BTREE_PTR)
		return "invalid value type";

	extent_entry_iter_init(&it, k);
	while ((ret = extent_entry_iter_next(&it, &e)) > 0)
		if (e.type != BCH_EXTENT_ENTRY_ptr)
			return "has crc field";
	if (ret < 0)
		return "invalid extent entry type";
	if (!k->v_bytes)
		return "no pointers";

	extent_entry_iter_init(&it, k);
	while (extent_entry_iter_next(&it, &e) > 0) {
		r = ptr_invalid(k, &e, size, fs);
		if (r)
			return r;
	}
	return NULL;
}

/* ---- printing ---- */

void extent_entries_to_text(struct printbuf *out, const struct bkey_ref *k,
			    const struct bkey_fs_ctx *fs)
{
	struct extent_entry_iter it;
	struct extent_entry_h e;
	bool first = true;
	int ret;

	extent_entry_iter_init(&it, k);
	while ((ret = extent_entry_iter_next(&it, &e)) > 0) {
		if (!first)
			pr_char(out, ' ');
		first = false;
		if (e.type == BCH_EXTENT_ENTRY_ptr) {
			pr_str(out, "ptr: ");
			pr_u64(out, e.ptr.dev);
			pr_char(out, ':');
			pr_u64(out, e.ptr.offset);
			pr_str(out, " gen ");
			pr_u64(out, e.ptr.gen);
			if (e.ptr.cached)
				pr_str(out, " cached");
			if (extent_ptr_stale(fs, &e.ptr))
				pr_str(out, " stale");
		} else {
			pr_buf(out, "crc: c_size %u size %u offset %u nonce %u csum %u compress %u",
			       e.crc.compressed_size, e.crc.uncompressed_size,
			       e.crc.offset, e.crc.nonce, e.crc.csum_type,
			       e.crc.compression_type);
		}
	}
	if (ret < 0) {
		if (!first)
			pr_char(out, ' ');
		pr_buf(out, "(invalid extent entry %.16llx)", (unsigned long long)e.raw);
	}
	if (k->k.type == BCH_EXTENT_CACHED)
		pr_str(out, " cached");
}

void extent_entries_to_json(struct json *j, const struct bkey_ref *k,
			    const struct bkey_fs_ctx *fs)
{
	struct extent_entry_iter it;
	struct extent_entry_h e;
	int ret;

	json_arr_begin(j, "entries");
	extent_entry_iter_init(&it, k);
	while ((ret = extent_entry_iter_next(&it, &e)) > 0) {
		json_obj_begin(j, NULL);
		if (e.type == BCH_EXTENT_ENTRY_ptr) {
			json_str(j, "kind", "ptr");
			json_u64(j, "dev", e.ptr.dev);
			json_u64(j, "offset", e.ptr.offset);
			json_u64(j, "gen", e.ptr.gen);
			json_bool(j, "cached", e.ptr.cached);
			json_bool(j, "stale", extent_ptr_stale(fs, &e.ptr));
		} else {
			json_str(j, "kind", e.type == BCH_EXTENT_ENTRY_crc32 ? "crc32" :
				 e.type == BCH_EXTENT_ENTRY_crc64 ? "crc64" : "crc128");
			json_u64(j, "compressed_size", e.crc.compressed_size);
			json_u64(j, "uncompressed_size", e.crc.uncompressed_size);
			json_u64(j, "offset", e.crc.offset);
			json_u64(j, "nonce", e.crc.nonce);
			json_u64(j, "csum_type", e.crc.csum_type);
			json_u64(j, "compression_type", e.crc.compression_type);
			json_u64(j, "csum_lo", e.crc.csum_lo);
			json_u64(j, "csum_hi", e.crc.csum_hi);
		}
		json_obj_end(j);
	}
	if (ret < 0) {
		json_obj_begin(j, NULL);
		json_str(j, "kind", "invalid");
		json_u64(j, "raw", e.raw);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* ---- merging ---- */

static bool ptrs_mergeable(const struct bkey_ref *l, const struct bkey_ref *r,
			   const uint16_t *bucket_size, unsigned nr_devs)
{
	struct extent_entry_iter li, ri;
	struct extent_entry_h a, b;
	int ret;

	if (l->v_bytes != r->v_bytes)
		return false;
	extent_entry_iter_init(&li, l);
	extent_entry_iter_init(&ri, r);
	while ((ret = extent_entry_iter_next(&li, &a)) > 0) {
		unsigned bs;

		if (extent_entry_iter_next(&ri, &b) <= 0 ||
		    a.type != BCH_EXTENT_ENTRY_ptr || b.type != BCH_EXTENT_ENTRY_ptr)
			return false;
		if ((a.raw & 0xf) != (b.raw & 0xf) ||	/* kind, cached, ec, reservation */
		    a.ptr.dev != b.ptr.dev || a.ptr.gen != b.ptr.gen ||
		    a.ptr.offset + l->k.size != b.ptr.offset)
			return false;
		bs = bucket_size && a.ptr.dev < nr_devs ? bucket_size[a.ptr.dev] : 0;
		if (!bs || a.ptr.offset / bs != b.ptr.offset / bs)
			return false;
	}
	return ret == 0;
}

bool extent_can_merge(const struct bkey_ref *l, const struct bkey_ref *r,
		      const uint16_t *bucket_size, unsigned nr_devs)
{
	const struct bch_reservation *a, *b;

	if (l->k.u64s != r->k.u64s || l->k.type != r->k.type ||
	    l->k.version_hi != r->k.version_hi || l->k.version_lo != r->k.version_lo ||
	    !bpos_eq(l->k.p, bkey_start_pos(&r->k)) ||
	    (uint64_t)l->k.size + r->k.size > UINT32_MAX)
		return false;

	switch (l->k.type) {
	case KEY_TYPE_DELETED:
	case KEY_TYPE_DISCARD:
	case KEY_TYPE_ERROR:
		return true;
	case BCH_EXTENT:
	case BCH_EXTENT_CACHED:
		return ptrs_mergeable(l, r, bucket_size, nr_devs);
	case BCH_RESERVATION:
		if (l->v_bytes < sizeof(*a) || r->v_bytes < sizeof(*b))
			return false;
		a = l->v;
		b = r->v;
		return a->generation == b->generation && a->nr_replicas == b->nr_replicas;
	default:
		return false;
	}
}

/* ---- front cut ---- */

static int crc_cut_front(union bch_extent_entry *u, int type, uint64_t d)
{
	struct bch_extent_crc_unpacked c;

	bch_extent_crc_unpack(u, &c);
	if (c.offset + d > c.uncompressed_size)
		return -BCH_ERR_key_invalid;
	switch (type) {
	case BCH_EXTENT_ENTRY_crc32:
		SET_CRC32_OFFSET(&u->crc32, c.offset + d);
		break;
	case BCH_EXTENT_ENTRY_crc64:
		SET_CRC64_OFFSET(&u->crc64, c.offset + d);
		break;
	default:
		SET_CRC128_OFFSET(&u->crc128, c.offset + d);
		break;
	}
	return 0;
}

int extent_cut_front(void *v, unsigned bytes, uint64_t d)
{
	struct extent_entry_iter it = { .v = v, .bytes = bytes, .pos = 0 };
	struct extent_entry_h e;
	bool seen_crc = false;
	int ret;

	while ((ret = extent_entry_iter_next(&it, &e)) > 0) {
		union bch_extent_entry u;
		uint8_t *p = (uint8_t *)v + e.offset;

		memcpy(&u, p, e.u64s * 8);
		if (e.type == BCH_EXTENT_ENTRY_ptr) {
			if (!seen_crc)
				SET_EXTENT_PTR_OFFSET(&u.ptr, e.ptr.offset + d);
		} else {
			seen_crc = true;
			ret = crc_cut_front(&u, e.type, d);
			if (ret)
				return ret;
		}
		memcpy(p, &u, e.u64s * 8);
	}
	return ret;
}

/* ---- btree pointers ---- */

int btree_ptr_decode(const struct bkey_ref *k, struct btree_ptr_h *ptrs, unsigned max)
{
	unsigned i, nr = k->v_bytes / 8;

	if (k->v_bytes % 8 || !nr || nr > max)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		struct bch_extent_ptr p;

		memcpy(&p, (const uint8_t *)k->v + i * 8, 8);
		if (!EXTENT_PTR_TYPE(&p))	/* not a pointer entry */
			return -EINVAL;
		ptrs[i].dev	= EXTENT_PTR_DEV(&p);
		ptrs[i].offset	= EXTENT_PTR_OFFSET(&p);
		ptrs[i].gen	= EXTENT_PTR_GEN(&p);
		ptrs[i].cached	= EXTENT_PTR_CACHED(&p);
	}
	return nr;
}
