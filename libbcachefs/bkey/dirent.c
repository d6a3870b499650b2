// SPDX-License-Identifier: GPL-2.0
/*
 * Dirents and the string hash (doc/format.md §5.6).
 *
 * Hash of the byte strings m1, m2 under an inode's (type, seed):
 *   crc32c: raw CRC-32C from ~0 over seed‖m1‖m2, no final inversion
 *   crc64:  raw CRC-64 from ~0 over seed‖m1‖m2, shifted right by 1
 *   siphash: SipHash-2-4 keyed with SHA-256(seed)[0..15], shifted right
 *            by 1; fed as two update calls with the 2018 buffer quirk.
 */
#include "format/format.h"
#include "bkey/dirent.h"

#include <errno.h>
#include <string.h>
#include <sodium.h>

#include "codec/checksum.h"
#include "util/errcode.h"
#include "util/util.h"

/* ---- SipHash-2-4 with the 2018 incremental-update quirk ---- */

struct siphash_state {
	uint64_t	v[4];
	uint8_t		buf[8];
	uint64_t	total;
};

static uint64_t rotl64(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

static void sip_rounds(uint64_t *v, unsigned n)
{
	while (n--) {
		v[0] += v[1]; v[1] = rotl64(v[1], 13); v[1] ^= v[0]; v[0] = rotl64(v[0], 32);
		v[2] += v[3]; v[3] = rotl64(v[3], 16); v[3] ^= v[2];
		v[0] += v[3]; v[3] = rotl64(v[3], 21); v[3] ^= v[0];
		v[2] += v[1]; v[1] = rotl64(v[1], 17); v[1] ^= v[2]; v[2] = rotl64(v[2], 32);
	}
}

static void sip_block(struct siphash_state *s, uint64_t m)
{
	s->v[3] ^= m;
	sip_rounds(s->v, 2);
	s->v[0] ^= m;
}

static void sip_init(struct siphash_state *s, uint64_t k0, uint64_t k1)
{
	memset(s, 0, sizeof(*s));
	s->v[0] = k0 ^ 0x736f6d6570736575ULL;
	s->v[1] = k1 ^ 0x646f72616e646f6dULL;
	s->v[2] = k0 ^ 0x6c7967656e657261ULL;
	s->v[3] = k1 ^ 0x7465646279746573ULL;
}

/*
 * As the reference: when the call starts with u buffered bytes and
 * completes that block, the leftover tail is stored at buf + u, not buf.
 */
static void sip_update(struct siphash_state *s, const uint8_t *p, size_t len)
{
	unsigned u = s->total % 8;

	s->total += len;
	if (u) {
		size_t take = min_t(size_t, 8 - u, len);

		memcpy(s->buf + u, p, take);
		p += take;
		len -= take;
		if (u + take < 8)
			return;
		sip_block(s, get_le64_unaligned(s->buf));
	}
	for (; len >= 8; p += 8, len -= 8)
		sip_block(s, get_le64_unaligned(p));
	memcpy(s->buf + u, p, len);	/* the quirk: u, not 0 */
}

static uint64_t sip_final(struct siphash_state *s)
{
	unsigned r = s->total % 8;

	memset(s->buf + r, 0, 7 - r);
	s->buf[7] = (uint8_t)s->total;
	sip_block(s, get_le64_unaligned(s->buf));
	s->v[2] ^= 0xff;
	sip_rounds(s->v, 4);
	return s->v[0] ^ s->v[1] ^ s->v[2] ^ s->v[3];
}

uint64_t bch_siphash_2018(uint64_t k0, uint64_t k1, const void *a, size_t alen,
			  const void *b, size_t blen)
{
	struct siphash_state s;

	sip_init(&s, k0, k1);
	sip_update(&s, a, alen);
	if (b)
		sip_update(&s, b, blen);
	return sip_final(&s);
}

/* ---- hash info ---- */

int bch_hash_info_init(struct bch_hash_info *h, unsigned type, uint64_t seed_le64)
{
	uint8_t digest[32];

	memset(h, 0, sizeof(*h));
	if (type >= BCH_STR_HASH_NR)
		return -EINVAL;
	h->type = type;
	put_le64_unaligned(h->seed, seed_le64);
	if (type == BCH_STR_HASH_SIPHASH) {
		crypto_hash_sha256(digest, h->seed, sizeof(h->seed));
		h->sip_k0 = get_le64_unaligned(digest);
		h->sip_k1 = get_le64_unaligned(digest + 8);
	}
	return 0;
}

static uint64_t str_hash(const struct bch_hash_info *h, const void *a, size_t alen,
			 const void *b, size_t blen)
{
	uint32_t c32;
	uint64_t c64;

	switch (h->type) {
	case BCH_STR_HASH_CRC32C:
		c32 = crc32c(~0U, h->seed, sizeof(h->seed));
		c32 = crc32c(c32, a, alen);
		return b ? crc32c(c32, b, blen) : c32;
	case BCH_STR_HASH_CRC64:
		c64 = crc64(~0ULL, h->seed, sizeof(h->seed));
		c64 = crc64(c64, a, alen);
		return (b ? crc64(c64, b, blen) : c64) >> 1;
	default:
		return bch_siphash_2018(h->sip_k0, h->sip_k1, a, alen, b, blen) >> 1;
	}
}

uint64_t bch_dirent_hash(const struct bch_hash_info *h, const void *name, size_t len)
{
	uint64_t v = str_hash(h, name, len, NULL, 0);

	return v < 2 ? 2 : v;
}

uint64_t bch_xattr_hash(const struct bch_hash_info *h, unsigned x_type,
			const void *name, size_t len)
{
	uint8_t t = (uint8_t)x_type;

	return str_hash(h, &t, 1, name ? name : "", len);
}

/* ---- dirent values ---- */

int bch_dirent_decode(const struct bkey_ref *k, struct bch_dirent_h *d)
{
	const struct bch_dirent *v = k->v;

	memset(d, 0, sizeof(*d));
	if (!v || k->v_bytes < sizeof(struct bch_dirent))
		return -BCH_ERR_key_invalid;
	d->d_inum   = le64_to_cpu(v->d_inum);
	d->d_type   = v->d_type;
	d->name	    = v->d_name;
	d->name_len = (unsigned)bch_dirent_name_len(v, k->v_bytes);
	return 0;
}

size_t bch_dirent_encode(uint64_t inum, unsigned d_type, const void *name,
			 size_t len, void *out, size_t out_size)
{
	size_t bytes = (size_t)bch_dirent_val_u64s(len) * 8;
	uint8_t *o = out;

	if (bytes > out_size)
		return 0;
	memset(o, 0, bytes);
	put_le64_unaligned(o, inum);
	o[8] = (uint8_t)d_type;
	memcpy(o + 9, name, len);
	return bytes;
}

const char *bch_dirent_invalid(const struct bkey_ref *k)
{
	struct bch_dirent_h d;

	switch (k->k.type) {
	case BCH_DIRENT:
		if (bch_dirent_decode(k, &d))
			return "value too small";
		if (!d.name_len)
			return "empty name";
		if (k->v_bytes / 8 > bch_dirent_val_u64s(d.name_len))
			return "value too big";
		if (d.name_len > BCH_NAME_MAX)
			return "dirent name too big";
		if (memchr(d.name, '/', d.name_len))
			return "dirent name has invalid characters";
		return NULL;
	case BCH_DIRENT_WHITEOUT:
		return k->v_bytes ? "value size should be zero" : NULL;
	default:
		return "invalid type";
	}
}

void bch_dirent_to_text(struct printbuf *out, const struct bkey_ref *k)
{
	struct bch_dirent_h d;

	switch (k->k.type) {
	case BCH_DIRENT:
		if (bch_dirent_decode(k, &d))
			return;
		pr_bytes(out, d.name, d.name_len);
		pr_buf(out, " -> %llu", (unsigned long long)d.d_inum);
		break;
	case BCH_DIRENT_WHITEOUT:
		pr_str(out, "whiteout");
		break;
	}
}

void bch_dirent_to_json(struct json *j, const struct bkey_ref *k)
{
	struct bch_dirent_h d;

	if (k->k.type != BCH_DIRENT || bch_dirent_decode(k, &d))
		return;
	json_strn(j, "name", (const char *)d.name, d.name_len);
	json_u64(j, "d_inum", d.d_inum);
	json_u64(j, "d_type", d.d_type);
}
