// SPDX-License-Identifier: GPL-2.0
/*
 * Writing btree nodes: format choice (doc/format.md §3.6), key packing (doc/format.md §3.5),
 * the node header and bsets (doc/format.md §4.1), checksums and encryption (doc/format.md §4.4),
 * and the rules of doc/format.md §4.9 (first bset at 0, appends at the next block, the
 * same seq in every bset, never an empty appended bset, needs_whiteout
 * cleared, SEPARATE_WHITEOUTS on extents leaves).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "bkey/bkey.h"
#include "codec/checksum.h"
#include "codec/crypto.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "btree/node.h"
#include "btree/node_write.h"
#include "util/util.h"

uint64_t bch_random_u64(void)
{
	uint64_t v = 0;

	while (!v) {
		if (getrandom(&v, sizeof(v), 0) != sizeof(v)) {
			/* no entropy source: still never zero, never constant */
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			v = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^
				((uint64_t)getpid() << 16) ^ 0x9e3779b97f4a7c15ULL;
		}
	}
	return v;
}

int btree_write_ctx_init(struct btree_write_ctx *ctx, const struct bch_fs *c,
			 struct printbuf *err)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->magic		= bch_bset_magic(c->sb);
	ctx->block_sectors	= c->block_size;
	ctx->node_sectors	= c->btree_node_size;
	if (c->encrypted) {
		if (!c->have_key) {
			pr_str(err, "cannot write btree nodes: the filesystem is encrypted and its key is not loaded\n");
			return -BCH_ERR_no_key;
		}
		ctx->csum_type = BCH_CHECKSUM_CHACHA20_POLY1305_128;
		ctx->key = &c->key;
	} else {
		/* option values none/crc32c/crc64 are checksum types 0/1/2 */
		ctx->csum_type = c->meta_csum_type <= 2 ? c->meta_csum_type
						       : BCH_CHECKSUM_CRC32C_NONZERO;
	}
	return 0;
}

/* ---- format choice ------------------------------------------------------ */

static void bkey_h_fields(const struct bkey_h *k, uint64_t v[BKEY_NR_FIELDS_H])
{
	v[BKEY_FIELD_INODE]	 = k->p.inode;
	v[BKEY_FIELD_OFFSET]	 = k->p.offset;
	v[BKEY_FIELD_SNAPSHOT]	 = k->p.snapshot;
	v[BKEY_FIELD_SIZE]	 = k->size;
	v[BKEY_FIELD_VERSION_HI] = k->version_hi;
	v[BKEY_FIELD_VERSION_LO] = k->version_lo;
}

static void state_feed(struct bkey_format_state *s, unsigned i, uint64_t v)
{
	if (v < s->min[i])
		s->min[i] = v;
	if (v > s->max[i])
		s->max[i] = v;
}

void bkey_format_state_init(struct bkey_format_state *s)
{
	unsigned i;

	for (i = 0; i < BKEY_NR_FIELDS_H; i++) {
		s->min[i] = UINT64_MAX;
		s->max[i] = 0;
	}
	/* a size of 0 must always be representable */
	s->min[BKEY_FIELD_SIZE] = 0;
}

void bkey_format_state_add_pos(struct bkey_format_state *s, struct bpos_h p)
{
	state_feed(s, BKEY_FIELD_INODE, p.inode);
	state_feed(s, BKEY_FIELD_OFFSET, p.offset);
	state_feed(s, BKEY_FIELD_SNAPSHOT, p.snapshot);
}

void bkey_format_state_add_key(struct bkey_format_state *s, const struct bkey_h *k)
{
	uint64_t v[BKEY_NR_FIELDS_H];
	unsigned i;

	if (bkey_is_whiteout(k))
		return;
	bkey_h_fields(k, v);
	for (i = 0; i < BKEY_NR_FIELDS_H; i++)
		state_feed(s, i, v[i]);
	state_feed(s, BKEY_FIELD_OFFSET, k->p.offset - k->size);
}

static unsigned bits_of(uint64_t v)
{
	return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

static uint64_t clamp_base(uint64_t base, unsigned bits)
{
	uint64_t limit;

	if (bits >= 64)
		return 0;
	limit = 0 - ((uint64_t)1 << bits);	/* 2^64 - 2^bits */
	return base < limit ? base : limit;
}

void bkey_format_state_done(const struct bkey_format_state *s, struct bkey_format_h *f)
{
	unsigned i, total = KEY_PACKED_BITS_START, spare;

	memset(f, 0, sizeof(*f));
	f->nr_fields = BKEY_NR_FIELDS_H;
	for (i = 0; i < BKEY_NR_FIELDS_H; i++) {
		uint64_t min = s->min[i], max = s->max[i];

		if (min > max)
			min = max;
		f->bits[i]   = (uint8_t)bits_of(max - min);
		f->offset[i] = clamp_base(min, f->bits[i]);
	}
	if (f->bits[BKEY_FIELD_SIZE])
		f->bits[BKEY_FIELD_SIZE] += 4;	/* head-room for merging extents */

	for (i = 0; i < BKEY_NR_FIELDS_H; i++)
		total += f->bits[i];
	f->key_u64s = (uint8_t)DIV_ROUND_UP(total, 64);
	spare = f->key_u64s * 64 - total;

	for (i = 0; i < BKEY_NR_FIELDS_H; i++) {
		unsigned r = round_up((unsigned)f->bits[i], 8u) - f->bits[i];

		if (r <= spare) {
			f->bits[i] += (uint8_t)r;
			spare -= r;
			f->offset[i] = clamp_base(f->offset[i], f->bits[i]);
		}
	}
}

void bch_bkey_format_choose(struct bpos_h min_key, const struct bkey_ref *keys,
			    size_t nr, struct bkey_format_h *f)
{
	struct bkey_format_state s;
	size_t i;

	bkey_format_state_init(&s);
	bkey_format_state_add_pos(&s, min_key);
	for (i = 0; i < nr; i++)
		bkey_format_state_add_key(&s, &keys[i].k);
	bkey_format_state_done(&s, f);
}

/* ---- btree pointer keys ------------------------------------------------- */

uint64_t bch_extent_ptr_encode(const struct btree_ptr_h *p)
{
	return 1ULL |
		((uint64_t)(p->cached ? 1 : 0) << 1) |
		((p->offset & ((1ULL << 44) - 1)) << 4) |
		((uint64_t)(p->dev & 0xff) << 48) |
		((uint64_t)p->gen << 56);
}

void bch_btree_ptr_key(struct bkey_ref *out, uint64_t val[BKEY_BTREE_PTR_VAL_U64s_MAX],
		       struct bpos_h pos, const struct btree_ptr_h *ptrs, unsigned nr)
{
	unsigned i;

	if (nr > BKEY_BTREE_PTR_VAL_U64s_MAX)
		nr = BKEY_BTREE_PTR_VAL_U64s_MAX;
	memset(out, 0, sizeof(*out));
	for (i = 0; i < nr; i++)
		val[i] = cpu_to_le64(bch_extent_ptr_encode(&ptrs[i]));
	out->k.u64s	= (uint8_t)(BKEY_U64S_UNPACKED + nr);
	out->k.type	= BCH_BTREE_PTR;
	out->k.p	= pos;
	out->v		= val;
	out->v_bytes	= nr * 8;
}

/* ---- keys into a bset --------------------------------------------------- */

static void pr_pos(struct printbuf *out, struct bpos_h p)
{
	pr_buf(out, "%" PRIu64 ":%" PRIu64, p.inode, p.offset);
	if (p.snapshot)
		pr_buf(out, ":%u", p.snapshot);
}

static bool is_extents_leaf(unsigned btree_id, unsigned level)
{
	return btree_id == BTREE_ID_EXTENTS && level == 0;
}

/*
 * Check @keys against the node: header sizes, ordering (doc/format.md §4.7) and
 * range (doc/format.md §3.3); also returns the bytes they need packed with @f.
 */
static int check_keys(const struct btree_node_buf *nb, const struct bkey_ref *keys,
		      size_t nr, size_t *bytes, struct printbuf *err)
{
	bool extents = is_extents_leaf(nb->btree_id, nb->level);
	size_t i, total = 0;

	for (i = 0; i < nr; i++) {
		const struct bkey_h *k = &keys[i].k;
		uint8_t packed[8 * BKEY_U64S_UNPACKED];
		unsigned val_u64s = keys[i].v_bytes / 8;

		if (keys[i].v_bytes % 8 || k->u64s != BKEY_U64S_UNPACKED + val_u64s ||
		    (val_u64s && !keys[i].v)) {
			pr_buf(err, "key %zu: u64s %u does not match its value of %u bytes\n",
			       i, k->u64s, keys[i].v_bytes);
			return -EINVAL;
		}
		if (k->p.snapshot) {
			pr_buf(err, "key %zu: nonzero snapshot\n", i);
			return -EINVAL;
		}
		if (!extents && k->size) {
			pr_buf(err, "key %zu: nonzero size in a non-extents node\n", i);
			return -EINVAL;
		}
		if (extents && k->size > k->p.offset) {
			pr_buf(err, "key %zu: extent starts before offset 0\n", i);
			return -EINVAL;
		}
		if (!nb->level && bpos_eq(k->p, POS_H_MAX)) {
			pr_str(err, "leaf key at POS_MAX\n");
			return -EINVAL;
		}
		if (bpos_cmp(bkey_start_pos(k), nb->min_key) < 0 ||
		    bpos_cmp(k->p, nb->max_key) > 0) {
			pr_buf(err, "key %zu at ", i);
			pr_pos(err, k->p);
			pr_str(err, " outside the node's range ");
			pr_pos(err, nb->min_key);
			pr_str(err, " - ");
			pr_pos(err, nb->max_key);
			pr_char(err, '\n');
			return -EINVAL;
		}
		if (i) {
			const struct bkey_h *prev = &keys[i - 1].k;
			int c = extents ? bpos_cmp(prev->p, bkey_start_pos(k))
					: bpos_cmp(prev->p, k->p);

			if (extents ? c > 0 : c >= 0) {
				pr_buf(err, "keys out of order: ");
				pr_pos(err, prev->p);
				pr_str(err, extents ? " > start " : " >= ");
				pr_pos(err, extents ? bkey_start_pos(k) : k->p);
				pr_char(err, '\n');
				return -EINVAL;
			}
		}
		if (bkey_pack(&nb->format, k, val_u64s, packed))
			total += (size_t)(nb->format.key_u64s + val_u64s) * 8;
		else
			total += (size_t)k->u64s * 8;
	}
	*bytes = total;
	return 0;
}

/* Store @keys at @out (space checked by check_keys()); needs_whiteout cleared. */
static void store_keys(struct btree_node_buf *nb, const struct bkey_ref *keys,
		       size_t nr, uint8_t *out)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		struct bkey_h k = keys[i].k;
		unsigned val_u64s = keys[i].v_bytes / 8;

		k.needs_whiteout = false;
		if (bkey_pack(&nb->format, &k, val_u64s, out)) {
			out += (size_t)nb->format.key_u64s * 8;
			nb->nr_packed++;
		} else {
			bkey_h_to_disk(&k, out);
			out += BKEY_U64S_UNPACKED * 8;
			nb->nr_unpacked++;
		}
		if (keys[i].v_bytes)
			memcpy(out, keys[i].v, keys[i].v_bytes);
		out += keys[i].v_bytes;
	}
}

static void bset_header(struct bset *i, const struct btree_node_buf *nb,
			unsigned csum_type, uint64_t journal_seq, size_t u64s)
{
	i->seq		= cpu_to_le64(nb->seq);
	i->journal_seq	= cpu_to_le64(journal_seq);
	i->flags	= 0;
	SET_BSET_CSUM_TYPE(i, csum_type);
	SET_BSET_SEPARATE_WHITEOUTS(i, is_extents_leaf(nb->btree_id, nb->level));
	i->version	= cpu_to_le16(BCH_BSET_VERSION);
	i->u64s		= cpu_to_le16((uint16_t)u64s);
}

/*
 * Encrypt (types 3/4) and checksum the bset at node byte @off whose
 * unrounded size is @bytes (doc/format.md §4.4).
 */
static int seal_bset(const struct btree_write_ctx *ctx, struct btree_node_buf *nb,
		     unsigned off, size_t bytes, uint64_t journal_seq,
		     struct printbuf *err)
{
	struct bch_nonce nonce = bch_nonce_btree(off, nb->seq, journal_seq);
	uint8_t *p = nb->data + off;
	struct bch_csum_val csum;
	int ret = 0;

	if (bch_csum_type_is_encryption(ctx->csum_type)) {
		if (!off) {
			ret = bch_encrypt(ctx->csum_type, ctx->key, nonce,
					  p + BTREE_NODE_ENCRYPTED_START,
					  BTREE_NODE_ENCRYPTED_END - BTREE_NODE_ENCRYPTED_START);
			if (!ret)
				ret = bch_encrypt(ctx->csum_type, ctx->key,
						  bch_nonce_add(nonce, 128),
						  p + sizeof(struct btree_node),
						  bytes - sizeof(struct btree_node));
		} else {
			ret = bch_encrypt(ctx->csum_type, ctx->key, nonce,
					  p + sizeof(struct btree_node_entry),
					  bytes - sizeof(struct btree_node_entry));
		}
	}
	if (!ret)
		ret = bch_checksum(ctx->csum_type, nonce, ctx->key, p + 16, bytes - 16, &csum);
	if (ret) {
		pr_buf(err, "cannot checksum btree node bset at offset %u with checksum type %u: %s\n",
		       off, ctx->csum_type, bch_err_str(ret));
		return ret;
	}
	bch_csum_to_bytes(csum, p);
	return 0;
}

static int check_ctx(const struct btree_write_ctx *ctx, struct printbuf *err)
{
	if (!ctx->block_sectors || !ctx->node_sectors ||
	    ctx->node_sectors % ctx->block_sectors ||
	    ctx->node_sectors > (1U << 16)) {
		pr_buf(err, "bad btree node geometry: block %u sectors, node %u sectors\n",
		       ctx->block_sectors, ctx->node_sectors);
		return -EINVAL;
	}
	if (!bch_csum_type_valid(ctx->csum_type) ||
	    (bch_csum_type_is_encryption(ctx->csum_type) && !ctx->key)) {
		pr_buf(err, "cannot write btree nodes with checksum type %u%s\n", ctx->csum_type,
		       bch_csum_type_is_encryption(ctx->csum_type) ? " without the key" : "");
		return bch_csum_type_valid(ctx->csum_type) ? -ENOKEY : -EINVAL;
	}
	return 0;
}

/* Sectors a bset of @bytes occupies, or 0 when it does not fit at @written. */
static unsigned bset_sectors(const struct btree_write_ctx *ctx, unsigned written,
			     size_t bytes, size_t u64s, struct printbuf *err)
{
	size_t block_bytes = (size_t)ctx->block_sectors << BCH_SECTOR_SHIFT;
	size_t rounded = round_up(bytes, block_bytes);

	if (u64s > UINT16_MAX ||
	    ((size_t)written << BCH_SECTOR_SHIFT) + rounded >
	    ((size_t)ctx->node_sectors << BCH_SECTOR_SHIFT)) {
		pr_buf(err, "bset of %zu bytes does not fit in the btree node (%u of %u sectors used)\n",
		       bytes, written, ctx->node_sectors);
		return 0;
	}
	return (unsigned)(rounded >> BCH_SECTOR_SHIFT);
}

static void bpos_to_disk(struct bpos *d, struct bpos_h p)
{
	d->snapshot	= cpu_to_le32(p.snapshot);
	d->offset	= cpu_to_le64(p.offset);
	d->inode	= cpu_to_le64(p.inode);
}

int bch_btree_node_build(const struct btree_write_ctx *ctx,
			 const struct btree_node_new *n, uint64_t journal_seq,
			 const struct bkey_ref *keys, size_t nr,
			 struct btree_node_buf *out, struct printbuf *err)
{
	struct btree_node_buf nb;
	struct btree_node *bn;
	size_t key_bytes, bytes;
	unsigned sectors;
	uint64_t flags;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = check_ctx(ctx, err);
	if (ret)
		return ret;
	if (n->btree_id >= BTREE_ID_NR || n->level >= BTREE_MAX_DEPTH ||
	    bpos_cmp(n->min_key, n->max_key) > 0) {
		pr_buf(err, "bad btree node: btree %u level %u, min key after max key?\n",
		       n->btree_id, n->level);
		return -EINVAL;
	}
	if (n->level && journal_seq) {
		pr_str(err, "interior btree node bsets must have journal_seq 0\n");
		return -EINVAL;
	}

	memset(&nb, 0, sizeof(nb));
	nb.btree_id	= n->btree_id;
	nb.level	= n->level;
	nb.min_key	= n->min_key;
	nb.max_key	= n->max_key;
	nb.seq		= n->seq ?: bch_random_u64();
	if (n->format) {
		if (!bkey_format_valid(n->format, err)) {
			pr_char(err, '\n');
			return -EINVAL;
		}
		nb.format = *n->format;
	} else {
		bch_bkey_format_choose(n->min_key, keys, nr, &nb.format);
	}

	ret = check_keys(&nb, keys, nr, &key_bytes, err);
	if (ret)
		return ret;
	bytes = sizeof(struct btree_node) + key_bytes;
	sectors = bset_sectors(ctx, 0, bytes, key_bytes / 8, err);
	if (!sectors)
		return -ENOSPC;

	nb.bytes = (size_t)ctx->node_sectors << BCH_SECTOR_SHIFT;
	nb.data  = xcalloc(1, nb.bytes);
	bn = (struct btree_node *)nb.data;
	bn->magic = cpu_to_le64(ctx->magic);
	flags = 0;
	flags |= (uint64_t)n->btree_id;
	flags |= (uint64_t)n->level << 4;
	flags |= (uint64_t)n->node_seq << 32;
	bn->flags = cpu_to_le64(flags);
	bpos_to_disk(&bn->min_key, n->min_key);
	bpos_to_disk(&bn->max_key, n->max_key);
	bn->ptr.w = cpu_to_le64(bch_extent_ptr_encode(&n->ptr));
	bkey_format_encode(&nb.format, &bn->format);
	bset_header(&bn->keys, &nb, ctx->csum_type, journal_seq, key_bytes / 8);
	store_keys(&nb, keys, nr, nb.data + sizeof(struct btree_node));

	ret = seal_bset(ctx, &nb, 0, bytes, journal_seq, err);
	if (ret) {
		free(nb.data);
		return ret;
	}
	nb.written = sectors;
	nb.last_start = 0;
	*out = nb;
	return 0;
}

int bch_btree_node_append(const struct btree_write_ctx *ctx, struct btree_node_buf *nb,
			  uint64_t journal_seq, const struct bkey_ref *keys, size_t nr,
			  struct printbuf *err)
{
	struct btree_node_entry *bne;
	size_t key_bytes, bytes, off;
	unsigned sectors, packed = nb->nr_packed, unpacked = nb->nr_unpacked;
	int ret;

	ret = check_ctx(ctx, err);
	if (ret)
		return ret;
	if (!nb->data || nb->bytes != ((size_t)ctx->node_sectors << BCH_SECTOR_SHIFT) ||
	    !nb->written || nb->written % ctx->block_sectors) {
		pr_str(err, "btree node buffer does not match the filesystem geometry\n");
		return -EINVAL;
	}
	if (!nr) {
		pr_str(err, "refusing to append an empty bset (readers report \"empty bset\")\n");
		return -EINVAL;
	}
	if (nb->level && journal_seq) {
		pr_str(err, "interior btree node bsets must have journal_seq 0\n");
		return -EINVAL;
	}
	ret = check_keys(nb, keys, nr, &key_bytes, err);
	if (ret)
		return ret;
	bytes = sizeof(struct btree_node_entry) + key_bytes;
	sectors = bset_sectors(ctx, nb->written, bytes, key_bytes / 8, err);
	if (!sectors)
		return -ENOSPC;

	off = (size_t)nb->written << BCH_SECTOR_SHIFT;
	memset(nb->data + off, 0, (size_t)sectors << BCH_SECTOR_SHIFT);
	bne = (struct btree_node_entry *)(nb->data + off);
	bset_header(&bne->keys, nb, ctx->csum_type, journal_seq, key_bytes / 8);
	store_keys(nb, keys, nr, nb->data + off + sizeof(*bne));

	ret = seal_bset(ctx, nb, (unsigned)off, bytes, journal_seq, err);
	if (ret) {
		memset(nb->data + off, 0, (size_t)sectors << BCH_SECTOR_SHIFT);
		nb->nr_packed = packed;
		nb->nr_unpacked = unpacked;
		return ret;
	}
	nb->last_start = nb->written;
	nb->written += sectors;
	return 0;
}

void bch_btree_node_buf_exit(struct btree_node_buf *nb)
{
	free(nb->data);
	memset(nb, 0, sizeof(*nb));
}

int bch_btree_node_write(struct bch_fs *c, const struct btree_node_buf *nb,
			 unsigned from, const struct btree_ptr_h *ptrs, unsigned nr,
			 struct printbuf *err)
{
	size_t off = (size_t)from << BCH_SECTOR_SHIFT;
	size_t len;
	unsigned i;
	int ret;

	if (from >= nb->written || ((size_t)nb->written << BCH_SECTOR_SHIFT) > nb->bytes)
		return 0;
	len = ((size_t)nb->written << BCH_SECTOR_SHIFT) - off;
	for (i = 0; i < nr; i++) {
		struct bch_member_dev *ca = ptrs[i].dev < BCH_FS_MAX_DEVS ? c->devs[ptrs[i].dev] : NULL;

		if (!ca || !ca->io || !ca->io->rw) {
			pr_buf(err, "cannot write btree node (btree %u level %u) to device %u: %s\n",
			       nb->btree_id, nb->level, ptrs[i].dev,
			       ca && ca->io ? "opened read-only" : "device not present");
			return -EROFS;
		}
		ret = dev_pwrite(ca->io, nb->data + off, len,
				 (ptrs[i].offset + from) << BCH_SECTOR_SHIFT);
		if (ret) {
			pr_buf(err, "%s: error writing btree node (btree %u level %u) at sector %" PRIu64 ": %s\n",
			       ca->io->path, nb->btree_id, nb->level, ptrs[i].offset + from,
			       bch_err_str(ret));
			return ret;
		}
	}
	return 0;
}
