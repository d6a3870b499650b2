// SPDX-License-Identifier: GPL-2.0
/*
 * Journal writing: jset building and compaction (doc/engine.md §4.3), header and
 * seq/last_seq (doc/format.md §6.8), checksum and encryption (doc/format.md §6.4), bucket
 * placement and reclaim (doc/format.md §6.8), flush ordering (doc/format.md §6.8).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "codec/checksum.h"
#include "codec/crypto.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "journal/journal.h"
#include "journal/journal_write.h"
#include "dev/super.h"
#include "util/util.h"

/* ---- building ----------------------------------------------------------- */

void jset_builder_init(struct jset_builder *b)
{
	memset(b, 0, sizeof(*b));
}

void jset_builder_exit(struct jset_builder *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

static uint64_t *builder_reserve(struct jset_builder *b, size_t u64s)
{
	if (b->u64s + u64s > b->size) {
		size_t n = max_t(size_t, b->size * 2, b->u64s + u64s + 64);

		b->buf = xrealloc(b->buf, n * sizeof(uint64_t));
		b->size = n;
	}
	return b->buf + b->u64s;
}

static struct jset_entry *last_entry(struct jset_builder *b)
{
	return b->have_last ? (struct jset_entry *)(b->buf + b->last) : NULL;
}

static void new_entry(struct jset_builder *b, unsigned type, unsigned btree_id,
		      unsigned level)
{
	struct jset_entry *e = (struct jset_entry *)builder_reserve(b, 1);

	memset(e, 0, sizeof(*e));
	e->type = (uint8_t)type;
	e->btree_id = (uint8_t)btree_id;
	e->level = (uint8_t)level;
	b->last = b->u64s;
	b->have_last = true;
	b->u64s++;
}

static void put_key(struct jset_builder *b, const struct bkey_ref *k)
{
	uint64_t *p = builder_reserve(b, k->k.u64s);
	struct bkey_h h = k->k;
	struct jset_entry *e;

	h.needs_whiteout = false;
	bkey_h_to_disk(&h, p);
	if (k->v_bytes)
		memcpy((uint8_t *)p + BKEY_U64S_UNPACKED * 8, k->v, k->v_bytes);
	b->u64s += k->k.u64s;
	e = last_entry(b);
	e->u64s = cpu_to_le16((uint16_t)(le16_to_cpu(e->u64s) + k->k.u64s));
}

static bool key_ok(const struct bkey_ref *k)
{
	return k->v_bytes % 8 == 0 && k->k.u64s == BKEY_U64S_UNPACKED + k->v_bytes / 8 &&
		(!k->v_bytes || k->v);
}

int jset_add_keys(struct jset_builder *b, unsigned btree_id, unsigned level,
		  const struct bkey_ref *keys, size_t nr)
{
	size_t i;

	if (btree_id >= BTREE_ID_NR || level >= BTREE_MAX_DEPTH)
		return -EINVAL;
	for (i = 0; i < nr; i++)
		if (!key_ok(&keys[i]))
			return -EINVAL;
	for (i = 0; i < nr; i++) {
		struct jset_entry *e = last_entry(b);

		if (!e || e->type != BCH_JSET_ENTRY_btree_keys || e->btree_id != btree_id ||
		    e->level != level || le16_to_cpu(e->u64s) + keys[i].k.u64s > UINT16_MAX)
			new_entry(b, BCH_JSET_ENTRY_btree_keys, btree_id, level);
		put_key(b, &keys[i]);
	}
	return 0;
}

int jset_add_root(struct jset_builder *b, unsigned btree_id, unsigned level,
		  const struct bkey_ref *k)
{
	if (btree_id >= BTREE_ID_NR || level >= BTREE_MAX_DEPTH || !key_ok(k))
		return -EINVAL;
	new_entry(b, BCH_JSET_ENTRY_btree_root, btree_id, level);
	put_key(b, k);
	return 0;
}

int jset_add_blacklist_v2(struct jset_builder *b, uint64_t start, uint64_t end)
{
	struct jset_entry *e;
	uint64_t *p;

	if (start > end)
		return -EINVAL;
	new_entry(b, BCH_JSET_ENTRY_blacklist_v2, 0, 0);
	p = builder_reserve(b, 2);
	p[0] = cpu_to_le64(start);
	p[1] = cpu_to_le64(end);
	b->u64s += 2;
	e = last_entry(b);
	e->u64s = cpu_to_le16(2);
	return 0;
}

/* ---- sealing ------------------------------------------------------------ */

int jset_seal(const struct jset_builder *b, const struct jset_header_h *h,
	      unsigned block_bytes, void **out, size_t *bytes, struct printbuf *err)
{
	size_t jbytes = sizeof(struct jset) + b->u64s * 8, padded;
	struct bch_nonce nonce = bch_nonce_journal(h->seq);
	struct bch_csum_val csum;
	struct jset *j;
	int ret;

	*out = NULL;
	*bytes = 0;
	if (!h->seq || h->last_seq > h->seq || !block_bytes || b->u64s > UINT32_MAX ||
	    !bch_csum_type_valid(h->csum_type)) {
		pr_buf(err, "bad journal entry header: seq %" PRIu64 " last_seq %" PRIu64 " csum type %u\n",
		       h->seq, h->last_seq, h->csum_type);
		return -EINVAL;
	}
	if (bch_csum_type_is_encryption(h->csum_type) && !h->key) {
		pr_str(err, "cannot write an encrypted journal entry without the key\n");
		return -ENOKEY;
	}
	padded = round_up(jbytes, (size_t)block_bytes);
	j = xcalloc(1, padded);
	j->magic	= cpu_to_le64(h->magic);
	j->seq		= cpu_to_le64(h->seq);
	j->version	= cpu_to_le32(BCH_JSET_VERSION);
	SET_JSET_CSUM_TYPE(j, h->csum_type);
	j->u64s		= cpu_to_le32((uint32_t)b->u64s);
	j->read_clock	= cpu_to_le16(h->read_clock);
	j->write_clock	= cpu_to_le16(h->write_clock);
	j->last_seq	= cpu_to_le64(h->last_seq);
	if (b->u64s)
		memcpy(j + 1, b->buf, b->u64s * 8);

	ret = bch_encrypt(h->csum_type, h->key, nonce, (uint8_t *)j + JSET_ENCRYPTED_START,
			  jbytes - JSET_ENCRYPTED_START);
	if (!ret)
		ret = bch_checksum(h->csum_type, nonce, h->key, (uint8_t *)j + 16, jbytes - 16,
				   &csum);
	if (ret) {
		pr_buf(err, "cannot checksum journal entry %" PRIu64 ": %s\n", h->seq,
		       bch_err_str(ret));
		free(j);
		return ret;
	}
	bch_csum_to_bytes(csum, &j->csum);
	*out = j;
	*bytes = padded;
	return 0;
}

/* ---- the writer ------------------------------------------------------------ */

void bch_journal_writer_exit(struct bch_journal_writer *w)
{
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(w->devs); i++) {
		free(w->devs[i].buckets);
		free(w->devs[i].bucket_seq);
	}
	memset(w, 0, sizeof(*w));
}

static bool dev_writable(struct bch_fs *c, unsigned i)
{
	const struct bch_member *m = bch_sb_member(c->sb, i);

	return i < BCH_FS_MAX_DEVS && c->devs[i] && c->devs[i]->io && c->devs[i]->io->rw &&
		m && bch_member_exists(m) && BCH_MEMBER_STATE(m) == BCH_MEMBER_STATE_RW;
}

int bch_journal_writer_set_dev(struct bch_journal_writer *w, unsigned dev,
			       const uint64_t *buckets, unsigned nr,
			       struct printbuf *err)
{
	struct journal_wdev *d;
	const struct bch_member *m;

	if (dev >= ARRAY_SIZE(w->devs) || !(m = bch_sb_member(w->c->sb, dev))) {
		pr_buf(err, "journal: no member device %u\n", dev);
		return -ENXIO;
	}
	d = &w->devs[dev];
	free(d->buckets);
	free(d->bucket_seq);
	memset(d, 0, sizeof(*d));
	if (!nr)
		return 0;
	d->buckets = xcalloc(nr, sizeof(uint64_t));
	d->bucket_seq = xcalloc(nr, sizeof(uint64_t));
	memcpy(d->buckets, buckets, nr * sizeof(uint64_t));
	d->nr = nr;
	d->cur_idx = d->last_idx = nr - 1;
	d->bucket_size = le16_to_cpu(m->bucket_size);
	d->durability = bch_member_durability(m);
	d->active = dev_writable(w->c, dev);
	return 0;
}

int bch_journal_writer_init(struct bch_journal_writer *w, struct bch_fs *c,
			    struct printbuf *err)
{
	const struct journal_state *js = &c->journal;
	unsigned i;
	size_t b;
	int ret;

	memset(w, 0, sizeof(*w));
	w->c			= c;
	w->block_bytes		= c->block_size << BCH_SECTOR_SHIFT;
	w->meta_replicas	= (unsigned)BCH_SB_META_REPLICAS_WANT(c->sb) ?: 1;
	w->meta_replicas_req	= (unsigned)BCH_SB_META_REPLICAS_REQ(c->sb) ?: 1;
	w->read_clock = w->write_clock = 1;
	if (c->encrypted) {
		if (!c->have_key) {
			pr_str(err, "cannot write the journal: the filesystem is encrypted and its key is not loaded\n");
			return -BCH_ERR_no_key;
		}
		w->csum_type = BCH_CHECKSUM_CHACHA20_POLY1305_128;
	} else {
		w->csum_type = c->meta_csum_type <= 2 ? c->meta_csum_type
						     : BCH_CHECKSUM_CRC32C_NONZERO;
	}
	if (!js->read_done || !js->nr_entries)
		return 0;

	/* after a mount: doc/format.md §6.8 (skip blacklisted seqs), doc/format.md §6.5 (ring state) */
	w->seq = js->seq;
	for (b = 0; b < js->nr_blacklist; b++)
		if (js->blacklist[b].end > w->seq)
			w->seq = js->blacklist[b].end;
	w->last_seq_ondisk = js->last_seq;
	w->read_clock = js->read_clock;
	w->write_clock = js->write_clock;
	for (i = 0; i < c->nr_devices && i < ARRAY_SIZE(w->devs); i++) {
		const struct journal_dev_h *jd = &js->devs[i];
		struct bch_member_dev *ca = c->devs[i];
		struct journal_wdev *d = &w->devs[i];
		uint64_t *buckets;
		size_t nr;

		if (!ca || !ca->sb || !(nr = bch_sb_journal_nr_buckets(ca->sb)))
			continue;
		buckets = xcalloc(nr, sizeof(uint64_t));
		for (b = 0; b < nr; b++)
			buckets[b] = bch_sb_journal_bucket(ca->sb, b);
		ret = bch_journal_writer_set_dev(w, i, buckets, (unsigned)nr, err);
		free(buckets);
		if (ret)
			return ret;
		if (jd->nr_buckets == nr && jd->bucket_seq) {
			memcpy(d->bucket_seq, jd->bucket_seq, nr * sizeof(uint64_t));
			d->cur_idx = jd->cur_idx < nr ? jd->cur_idx : 0;
			/* the whole ring counts as used until reclaim frees it */
			d->last_idx = (d->cur_idx + 1) % d->nr;
		}
	}
	return 0;
}

/* Free ring slots whose entries are all older than last_seq_ondisk (doc/format.md §6.8). */
static void reclaim(struct bch_journal_writer *w, struct journal_wdev *d)
{
	while (d->last_idx != d->cur_idx &&
	       d->bucket_seq[d->last_idx] < w->last_seq_ondisk)
		d->last_idx = (d->last_idx + 1) % d->nr;
}

static unsigned buckets_available(const struct journal_wdev *d)
{
	unsigned next = (d->cur_idx + 1) % d->nr;

	return (d->last_idx + d->nr - next) % d->nr;
}

unsigned bch_journal_writer_buckets_free(struct bch_journal_writer *w)
{
	unsigned i, min = UINT32_MAX;

	for (i = 0; i < ARRAY_SIZE(w->devs); i++) {
		struct journal_wdev *d = &w->devs[i];

		if (!d->active || !d->nr || !d->durability)
			continue;
		reclaim(w, d);
		if (buckets_available(d) < min)
			min = buckets_available(d);
	}
	return min == UINT32_MAX ? 0 : min;
}

int bch_journal_write(struct bch_journal_writer *w, const struct jset_builder *b,
		      uint64_t last_seq, bool flush, struct printbuf *err)
{
	struct bch_fs *c = w->c;
	struct jset_header_h h;
	uint64_t seq = w->seq + 1, chosen = 0;
	unsigned i, sectors, replicas = 0;
	size_t bytes;
	void *data;
	int ret;

	memset(&h, 0, sizeof(h));
	h.magic		= bch_jset_magic(c->sb);
	h.seq		= seq;
	h.last_seq	= last_seq ?: seq;
	h.read_clock	= w->read_clock;
	h.write_clock	= w->write_clock;
	h.csum_type	= w->csum_type;
	h.key		= bch_csum_type_is_encryption(w->csum_type) ? &c->key : NULL;
	if (h.last_seq < w->last_seq_ondisk) {
		pr_buf(err, "journal entry %" PRIu64 ": last_seq %" PRIu64 " would go back (on disk %" PRIu64 ")\n",
		       seq, h.last_seq, w->last_seq_ondisk);
		return -EINVAL;
	}
	ret = jset_seal(b, &h, w->block_bytes, &data, &bytes, err);
	if (ret)
		return ret;
	sectors = (unsigned)(bytes >> BCH_SECTOR_SHIFT);

	/* 1: keep open buckets with room (an exact fit moves on, doc/format.md §6.8) */
	for (i = 0; i < ARRAY_SIZE(w->devs); i++) {
		struct journal_wdev *d = &w->devs[i];

		if (!d->have_cursor)
			continue;
		if (d->active && d->sectors_free > sectors) {
			chosen |= 1ULL << i;
			replicas += d->durability;
		} else {
			d->have_cursor = false;
		}
	}
	/* 2: open new buckets on more devices until metadata_replicas */
	for (i = 0; i < ARRAY_SIZE(w->devs) && replicas < w->meta_replicas; i++) {
		struct journal_wdev *d = &w->devs[i];

		if (!d->active || !d->nr || !d->durability || d->have_cursor ||
		    d->bucket_size < sectors)
			continue;
		reclaim(w, d);
		if (!buckets_available(d))
			continue;
		d->cur_idx = (d->cur_idx + 1) % d->nr;
		d->have_cursor = true;
		d->cursor = d->buckets[d->cur_idx] * d->bucket_size;
		d->sectors_free = d->bucket_size;
		/* an image file: the bucket's blocks before the entries (dev_prealloc()) */
		dev_prealloc(c->devs[i]->io, d->cursor << BCH_SECTOR_SHIFT,
			     (uint64_t)d->bucket_size << BCH_SECTOR_SHIFT, true);
		chosen |= 1ULL << i;
		replicas += d->durability;
	}
	if (!chosen || replicas < w->meta_replicas_req) {
		pr_buf(err, "unable to write journal entry %" PRIu64 " to sufficient devices (%u of %u replicas)\n",
		       seq, replicas, w->meta_replicas_req);
		ret = -EROFS;
		goto out;
	}

	/*
	 * 3: preflush: everything the entry refers to must be durable first
	 * (doc/engine.md §8.5: no pointer before its data); a device nothing was written
	 * to since its last flush has nothing to make durable
	 */
	for (i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
		if (dev_writable(c, i) && dev_unflushed(c->devs[i]->io)) {
			ret = dev_flush(c->devs[i]->io);
			if (ret) {
				pr_buf(err, "%s: flush before journal entry %" PRIu64 " failed: %s\n",
				       c->devs[i]->io->path, seq, bch_err_str(ret));
				goto out;
			}
		}
	/* 4: the same bytes at each cursor, then flush (FUA) */
	for (i = 0; i < ARRAY_SIZE(w->devs); i++) {
		struct journal_wdev *d = &w->devs[i];
		struct bch_devio *io;

		if (!(chosen & (1ULL << i)))
			continue;
		io = c->devs[i]->io;
		ret = dev_pwrite(io, data, bytes, d->cursor << BCH_SECTOR_SHIFT);
		if (!ret && flush)
			ret = dev_flush(io);
		if (ret) {
			pr_buf(err, "%s: error writing journal entry %" PRIu64 " at sector %" PRIu64 ": %s\n",
			       io->path, seq, d->cursor, bch_err_str(ret));
			goto out;
		}
		d->bucket_seq[d->cur_idx] = seq;
		d->cursor += sectors;
		d->sectors_free -= sectors;
	}
	w->seq = seq;
	w->last_seq_ondisk = h.last_seq;
	w->last_devs = chosen;
out:
	free(data);
	return ret;
}
