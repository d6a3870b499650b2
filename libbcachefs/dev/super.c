// SPDX-License-Identifier: GPL-2.0
/*
 * Superblocks: reading one device's copy (doc/format.md §2.12), checksums (doc/format.md §7),
 * validation of the fixed part, the layout and every field (doc/format.md §2.13, §2.5),
 * and writing every copy (doc/format.md §2.14). The names and the field accessors the
 * rest of the tree uses are in sb_fields.c. Every byte is untrusted: sizes are checked
 * before anything is dereferenced.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/checksum.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "format/format.h"
#include "dev/super.h"
#include "util/util.h"

static const uint8_t sb_magic[16] = BCH_SB_MAGIC_BYTES;

/* Bytes read at first: the fixed part (and a little more, as one I/O). */
#define SB_READ_FIRST	4096U

void bch_sb_handle_free(struct bch_sb_handle *h)
{
	free(h->sb);
	memset(h, 0, sizeof(*h));
}

/* ---- the superblock area ------------------------------------------------ */

/* Sectors reserved for each copy, or 0 if the size bits are absurd. */
static uint64_t layout_copy_sectors(const struct bch_sb_layout *l)
{
	return l->sb_max_size_bits < 48 ? (uint64_t)1 << l->sb_max_size_bits : 0;
}

static bool ranges_overlap(uint64_t s1, uint64_t e1, uint64_t s2, uint64_t e2)
{
	return s1 < e2 && s2 < e1;
}

bool bch_sb_range_in_sb_area(const struct bch_sb *sb, uint64_t start, uint64_t end)
{
	const struct bch_sb_layout *l = &sb->layout;
	uint64_t size = layout_copy_sectors(l);
	unsigned i, nr = min_t(unsigned, l->nr_superblocks, BCH_SB_LAYOUT_MAX_SB);

	for (i = 0; i < nr; i++) {
		uint64_t off = le64_to_cpu(l->sb_offset[i]);

		if (off == BCH_SB_SECTOR && ranges_overlap(start, end, 0, BCH_SB_SECTOR))
			return true;
		if (ranges_overlap(start, end, off, off + size < off ? UINT64_MAX : off + size))
			return true;
	}
	return false;
}

/* ---- checksum and one copy ---------------------------------------------- */

int bch_sb_csum(const struct bch_sb *sb, struct bch_csum_val *out)
{
	unsigned type = (unsigned)BCH_SB_CSUM_TYPE(sb);
	const uint8_t *start = (const uint8_t *)sb + sizeof(sb->csum);

	if (!bch_csum_type_valid(type) || bch_csum_type_is_encryption(type)) {
		out->lo = out->hi = 0;
		return -BCH_ERR_sb_bad_csum_type;
	}
	return bch_checksum(type, bch_nonce_make(0, 0, 0, 0), NULL, start,
			    bch_sb_bytes(sb) - sizeof(sb->csum), out);
}

/* Magic, version and size (doc/format.md §2.12 steps 2-4); *@bytes = copy size. */
static int sb_check_header(const struct bch_sb *sb, struct printbuf *err, size_t *bytes)
{
	uint64_t version = le64_to_cpu(sb->version);
	uint64_t max;

	if (memcmp(sb->magic.b, sb_magic, sizeof(sb_magic))) {
		pr_str(err, "not a bcachefs superblock (bad magic)");
		return -BCH_ERR_not_bcachefs;
	}
	if (version < BCH_SB_VERSION_MIN || version > BCH_SB_VERSION_MAX) {
		pr_buf(err, "unsupported version %" PRIu64 " (this tool reads versions %u to %u)",
		       version, BCH_SB_VERSION_MIN, BCH_SB_VERSION_MAX);
		return -BCH_ERR_sb_bad_version;
	}
	*bytes = bch_sb_bytes(sb);
	if (*bytes > BCH_SB_BYTES_MAX) {
		pr_buf(err, "too big: %zu bytes (u64s %u), more than any superblock can be (%u bytes)",
		       *bytes, le32_to_cpu(sb->u64s), BCH_SB_BYTES_MAX);
		return -BCH_ERR_sb_too_big;
	}
	max = layout_copy_sectors(&sb->layout) * BCH_SECTOR_SIZE;
	if (!max || *bytes > max) {
		pr_buf(err, "too big: %zu bytes (u64s %u), its layout reserves %" PRIu64 " bytes per copy (sb_max_size_bits %u)",
		       *bytes, le32_to_cpu(sb->u64s), max, sb->layout.sb_max_size_bits);
		return -BCH_ERR_sb_too_big;
	}
	return 0;
}

int bch_sb_check_copy(const void *buf, size_t len, struct printbuf *err)
{
	const struct bch_sb *sb = buf;
	struct bch_csum_val want, got;
	unsigned type;
	size_t bytes;
	int ret;

	if (len < BCH_SB_FIXED_BYTES) {
		pr_buf(err, "only %zu bytes, a superblock has at least %u", len,
		       BCH_SB_FIXED_BYTES);
		return -BCH_ERR_sb_invalid;
	}
	ret = sb_check_header(sb, err, &bytes);
	if (ret)
		return ret;
	if (bytes > len) {
		pr_buf(err, "%zu bytes long but only %zu bytes are available", bytes, len);
		return -BCH_ERR_sb_invalid;
	}
	type = (unsigned)BCH_SB_CSUM_TYPE(sb);
	if (!bch_csum_type_valid(type)) {
		pr_buf(err, "unknown checksum type %u (valid: 0-6)", type);
		return -BCH_ERR_sb_bad_csum_type;
	}
	if (bch_csum_type_is_encryption(type)) {
		pr_buf(err, "checksum type %u (%s) cannot be verified for a superblock",
		       type, bch_csum_type_name(type));
		return -BCH_ERR_sb_bad_csum_type;
	}
	ret = bch_sb_csum(sb, &got);
	if (ret)
		return ret;
	want = bch_csum_from_bytes(&sb->csum);
	if (!bch_csum_eq(want, got)) {
		pr_buf(err, "bad checksum (%s: stored 0x%" PRIx64 ", computed 0x%" PRIx64 "%s)",
		       bch_csum_type_name(type), want.lo, got.lo,
		       want.hi ? ", high half not zero" : "");
		return -BCH_ERR_sb_bad_csum;
	}
	return 0;
}

/* Do @len bytes at @sector lie on the device? */
static int sb_range_check(struct bch_devio *io, size_t len, uint64_t sector,
			  struct printbuf *err)
{
	if (sector > (io->size >> BCH_SECTOR_SHIFT) ||
	    len > io->size - (sector << BCH_SECTOR_SHIFT)) {
		pr_buf(err, "past the end of the device (%" PRIu64 " bytes)", io->size);
		return -BCH_ERR_dev_too_small;
	}
	return 0;
}

static int sb_pread(struct bch_devio *io, void *buf, size_t len, uint64_t sector,
		    struct printbuf *err)
{
	int ret = sb_range_check(io, len, sector, err);

	if (ret)
		return ret;
	ret = dev_pread(io, buf, len, sector << BCH_SECTOR_SHIFT);
	if (ret)
		pr_buf(err, "read error: %s", bch_err_str(ret));
	return ret;
}

int bch_sb_read_at(struct bch_devio *io, uint64_t sector,
		   struct bch_sb_handle *ret, struct printbuf *err)
{
	struct bch_sb *sb;
	size_t bytes, first = BCH_SB_FIXED_BYTES;
	int r;

	memset(ret, 0, sizeof(*ret));
	sb = xmalloc(first);
	r = sb_pread(io, sb, first, sector, err);
	if (r)
		goto err;
	r = sb_check_header(sb, err, &bytes);
	if (r)
		goto err;
	/* the size is untrusted (u64s is 32 bits): check it before allocating */
	r = sb_range_check(io, bytes, sector, err);
	if (r)
		goto err;
	sb = xrealloc(sb, bytes);
	r = sb_pread(io, sb, bytes, sector, err);
	if (r)
		goto err;
	r = bch_sb_check_copy(sb, bytes, err);
	if (r)
		goto err;
	ret->sb = sb;
	ret->bytes = bytes;
	ret->offset = sector;
	ret->layout = sb->layout;
	return 0;
err:
	free(sb);
	return r;
}

int bch_sb_layout_validate(const struct bch_sb_layout *l, struct printbuf *err)
{
	uint64_t size = layout_copy_sectors(l), prev_end = 0;
	unsigned i;

	if (memcmp(l->magic.b, sb_magic, sizeof(sb_magic))) {
		pr_str(err, "not a bcachefs superblock layout (bad magic)");
		return -BCH_ERR_sb_layout_invalid;
	}
	if (l->layout_type != BCH_SB_LAYOUT_TYPE) {
		pr_buf(err, "invalid layout type %u (must be 0)", l->layout_type);
		return -BCH_ERR_sb_layout_invalid;
	}
	if (!l->nr_superblocks || l->nr_superblocks > BCH_SB_LAYOUT_MAX_SB) {
		pr_buf(err, "invalid number of superblocks %u (1-%u)",
		       l->nr_superblocks, BCH_SB_LAYOUT_MAX_SB);
		return -BCH_ERR_sb_layout_invalid;
	}
	if (!size) {
		pr_buf(err, "invalid superblock size bits %u", l->sb_max_size_bits);
		return -BCH_ERR_sb_layout_invalid;
	}
	for (i = 0; i < l->nr_superblocks; i++) {
		uint64_t off = le64_to_cpu(l->sb_offset[i]);

		if (i && off < prev_end) {
			pr_buf(err, "superblocks overlap: offset[%u] = %" PRIu64 " < offset[%u] + %" PRIu64 " = %" PRIu64,
			       i, off, i - 1, size, prev_end);
			return -BCH_ERR_sb_layout_invalid;
		}
		if (off > UINT64_MAX / BCH_SECTOR_SIZE - size) {
			pr_buf(err, "offset[%u] = %" PRIu64 " is too large", i, off);
			return -BCH_ERR_sb_layout_invalid;
		}
		prev_end = off + size;
	}
	return 0;
}

/*
 * A device taken out of its filesystem by device remove
 * (bch_sb_mark_removed()): each copy keeps its bytes, but its magic (and
 * that of its layout) is zero and its checksum was computed again over the
 * zeroed magic. The 2018 tools and blkid look for the magic first, so none
 * takes it for a member; the checksum, which matches only with that zero
 * magic, tells it from a copy whose magic was damaged or erased by anything
 * else. Is the copy at @sector such a copy? Its external uuid in @uuid.
 */
static bool sb_removed_at(struct bch_devio *io, uint64_t sector, uint8_t uuid[16])
{
	static const uint8_t zero[16];
	struct printbuf why = PRINTBUF;
	struct bch_sb *sb = xmalloc(BCH_SB_FIXED_BYTES), *hdr = NULL;
	struct bch_csum_val got;
	size_t bytes;
	bool removed = false;

	if (sb_pread(io, sb, BCH_SB_FIXED_BYTES, sector, &why) ||
	    memcmp(sb->magic.b, zero, sizeof(zero)))
		goto out;
	/* the header checks of a live copy, on a copy of it with the magic back */
	hdr = xmalloc(BCH_SB_FIXED_BYTES);
	memcpy(hdr, sb, BCH_SB_FIXED_BYTES);
	memcpy(hdr->magic.b, sb_magic, sizeof(sb_magic));
	if (sb_check_header(hdr, &why, &bytes) || sb_range_check(io, bytes, sector, &why))
		goto out;
	sb = xrealloc(sb, bytes);
	if (sb_pread(io, sb, bytes, sector, &why) || bch_sb_csum(sb, &got))
		goto out;
	removed = bch_csum_eq(bch_csum_from_bytes(&sb->csum), got);
	if (removed)
		memcpy(uuid, sb->user_uuid.b, 16);
out:
	free(hdr);
	free(sb);
	printbuf_exit(&why);
	return removed;
}

/*
 * A removed device: its copy at sector 8, else (a migrated layout) the
 * copies its layout at sector 7, magic zeroed too, lists.
 */
static bool sb_removed(struct bch_devio *io, uint8_t uuid[16])
{
	static const uint8_t zero[16];
	struct printbuf why = PRINTBUF;
	struct bch_sb_layout l;
	bool removed = sb_removed_at(io, BCH_SB_SECTOR, uuid);

	if (removed || sb_pread(io, &l, sizeof(l), BCH_SB_LAYOUT_SECTOR, &why) ||
	    memcmp(l.magic.b, zero, sizeof(zero)))
		goto out;
	memcpy(l.magic.b, sb_magic, sizeof(sb_magic));
	if (bch_sb_layout_validate(&l, &why))
		goto out;
	for (unsigned i = 0; i < l.nr_superblocks && !removed; i++)
		if (le64_to_cpu(l.sb_offset[i]) != BCH_SB_SECTOR)
			removed = sb_removed_at(io, le64_to_cpu(l.sb_offset[i]), uuid);
out:
	printbuf_exit(&why);
	return removed;
}

/*
 * The superblock at sector 8, else the copies the layout at sector 7 lists.
 * A migrated filesystem (60-clarifications) has no superblock at sector 8:
 * its layout's first copy is its primary, and using it is not a fallback.
 */
/*
 * One copy for sb_read(): bch_sb_read_at(), and with @validate also the
 * full validation (a copy that reads but is invalid is skipped like one
 * with a bad checksum).
 */
static int sb_read_one(struct bch_devio *io, uint64_t sector, bool validate,
		       struct bch_sb_handle *ret, struct printbuf *why)
{
	int r = bch_sb_read_at(io, sector, ret, why);

	if (!r && validate) {
		r = bch_sb_validate(ret->sb, why);
		if (r)
			bch_sb_handle_free(ret);
	}
	return r;
}

static int sb_read(struct bch_devio *io, struct bch_sb_handle *ret, bool validate,
		   struct printbuf *err)
{
	struct printbuf why = PRINTBUF, msg = PRINTBUF;
	struct bch_sb_layout layout;
	uint8_t removed_uuid[16];
	int r, r_primary;
	unsigned i;

	if (io->size < ((uint64_t)BCH_SB_SECTOR << BCH_SECTOR_SHIFT) + BCH_SB_FIXED_BYTES) {
		/* not even room for the first superblock: no need to say more */
		pr_buf(err, "%s: %s (%" PRIu64 " bytes): not a bcachefs filesystem\n", io->path,
		       io->size ? "too small to hold a superblock" : "empty", io->size);
		return -BCH_ERR_not_bcachefs;
	}

	r = r_primary = sb_read_one(io, BCH_SB_SECTOR, validate, ret, &why);
	if (!r)
		goto out;
	if (r == -BCH_ERR_not_bcachefs && sb_removed(io, removed_uuid)) {
		pr_buf(&msg, "%s: removed from filesystem ", io->path);
		pr_uuid(&msg, removed_uuid);
		pr_str(&msg, ": not a member any more (format it to reuse it)\n");
		r = r_primary = -BCH_ERR_sb_removed;
		goto out;
	}

	pr_buf(&msg, "%s: superblock at sector %u: %s", io->path, BCH_SB_SECTOR,
	       printbuf_str(&why));
	printbuf_reset(&why);

	r = sb_pread(io, &layout, sizeof(layout), BCH_SB_LAYOUT_SECTOR, &why);
	if (!r)
		r = bch_sb_layout_validate(&layout, &why);
	if (r == -BCH_ERR_sb_layout_invalid && r_primary == -BCH_ERR_not_bcachefs &&
	    memcmp(layout.magic.b, sb_magic, sizeof(sb_magic))) {
		/* no trace of bcachefs: one short reason */
		printbuf_reset(&msg);
		pr_buf(&msg, "%s: no bcachefs superblock (no magic at sector %u, no layout at sector %u): "
		       "not a bcachefs filesystem\n", io->path, BCH_SB_SECTOR, BCH_SB_LAYOUT_SECTOR);
		goto out;
	}
	if (r) {
		pr_buf(&msg, "; layout at sector %u: %s; no valid superblock\n",
		       BCH_SB_LAYOUT_SECTOR, printbuf_str(&why));
		goto out;
	}

	r = -BCH_ERR_not_bcachefs;
	for (i = 0; i < layout.nr_superblocks; i++) {
		uint64_t off = le64_to_cpu(layout.sb_offset[i]);

		if (off == BCH_SB_SECTOR)
			continue;
		printbuf_reset(&why);
		r = sb_read_one(io, off, validate, ret, &why);
		if (!r) {
			ret->layout = layout;
			if (i == 0) {
				/* migrated layout: this is the primary */
				printbuf_reset(&msg);
				goto out;
			}
			ret->from_backup = true;
			pr_buf(&msg, "; using the backup at sector %" PRIu64 "\n", off);
			goto out;
		}
		pr_buf(&msg, "; %s at sector %" PRIu64 ": %s", i ? "backup" : "primary",
		       off, printbuf_str(&why));
	}
	pr_str(&msg, "; no valid superblock\n");
out:
	pr_str(err, printbuf_str(&msg));
	printbuf_exit(&msg);
	printbuf_exit(&why);
	/* failing: the primary's reason is the most telling (bad magic...) */
	return r ? r_primary : 0;
}

int bch_sb_read(struct bch_devio *io, struct bch_sb_handle *ret, struct printbuf *err)
{
	return sb_read(io, ret, false, err);
}

int bch_sb_read_valid(struct bch_devio *io, struct bch_sb_handle *ret, struct printbuf *err)
{
	return sb_read(io, ret, true, err);
}

/* ---- validation --------------------------------------------------------- */

#define sb_invalid(err, ...)				\
({							\
	pr_buf(err, "invalid superblock: " __VA_ARGS__); \
	-BCH_ERR_sb_invalid;				\
})

static int validate_replicas_want(const char *what, uint64_t v, struct printbuf *err)
{
	if (v < 1 || v >= BCH_REPLICAS_MAX)
		return sb_invalid(err, "%s is %" PRIu64 " (allowed 1-%u)", what, v,
				  BCH_REPLICAS_MAX - 1);
	return 0;
}

static int validate_options(const struct bch_sb *sb, struct printbuf *err)
{
	uint64_t v;
	int ret;

	if ((ret = validate_replicas_want("metadata_replicas", BCH_SB_META_REPLICAS_WANT(sb), err)) ||
	    (ret = validate_replicas_want("metadata_replicas_required", BCH_SB_META_REPLICAS_REQ(sb), err)) ||
	    (ret = validate_replicas_want("data_replicas", BCH_SB_DATA_REPLICAS_WANT(sb), err)) ||
	    (ret = validate_replicas_want("data_replicas_required", BCH_SB_DATA_REPLICAS_REQ(sb), err)))
		return ret;
	if ((v = BCH_SB_META_CSUM_TYPE(sb)) >= BCH_CSUM_OPT_NR)
		return sb_invalid(err, "metadata checksum type %" PRIu64 " (allowed 0-2)", v);
	if ((v = BCH_SB_DATA_CSUM_TYPE(sb)) >= BCH_CSUM_OPT_NR)
		return sb_invalid(err, "data checksum type %" PRIu64 " (allowed 0-2)", v);
	if ((v = BCH_SB_COMPRESSION_TYPE(sb)) >= BCH_COMPRESSION_OPT_NR)
		return sb_invalid(err, "compression type %" PRIu64 " (allowed 0-3)", v);
	v = BCH_SB_BTREE_NODE_SIZE(sb);
	if (!v)
		return sb_invalid(err, "btree node size not set");
	if (!is_power_of_2(v))
		return sb_invalid(err, "btree node size %" PRIu64 " sectors is not a power of two", v);
	if ((v = BCH_SB_GC_RESERVE(sb)) < 5)
		return sb_invalid(err, "gc reserve %" PRIu64 "%% too small (at least 5%%)", v);
	v = le32_to_cpu(sb->time_precision);
	if (v < 1 || v > 1000000000)
		return sb_invalid(err, "time precision %" PRIu64 " ns (allowed 1-1000000000)", v);
	return 0;
}

static int validate_fixed(const struct bch_sb *sb, struct printbuf *err)
{
	uint64_t version = le64_to_cpu(sb->version);
	unsigned bs = le16_to_cpu(sb->block_size);

	if (version < BCH_SB_VERSION_MIN || version > BCH_SB_VERSION_MAX)
		return sb_invalid(err, "unsupported version %" PRIu64 " (allowed %u-%u)",
				  version, BCH_SB_VERSION_MIN, BCH_SB_VERSION_MAX);
	if (!is_power_of_2(bs) || bs > 8)
		return sb_invalid(err, "bad block size %u sectors (a power of two, at most 8)", bs);
	if (uuid_is_zero(sb->user_uuid.b))
		return sb_invalid(err, "external (user) UUID is zero");
	if (uuid_is_zero(sb->uuid.b))
		return sb_invalid(err, "internal UUID is zero");
	if (!sb->nr_devices || sb->nr_devices > BCH_SB_MEMBERS_MAX)
		return sb_invalid(err, "nr_devices %u (allowed 1-%u)", sb->nr_devices,
				  BCH_SB_MEMBERS_MAX);
	if (sb->dev_idx >= sb->nr_devices)
		return sb_invalid(err, "dev_idx %u is not below nr_devices %u",
				  sb->dev_idx, sb->nr_devices);
	return validate_options(sb, err);
}

static int validate_field_list(const struct bch_sb *sb, struct printbuf *err)
{
	const uint8_t *start = (const uint8_t *)sb->_data, *end = bch_sb_area_end(sb);
	const uint8_t *p = start;
	unsigned n = 0;

	while (p < end) {
		const struct bch_sb_field *f = (const void *)p;

		if ((size_t)(end - p) < sizeof(*f))
			return sb_invalid(err, "field %u at byte %zu: header overruns the field area (%zu bytes left)",
					  n, (size_t)(p - (const uint8_t *)sb), (size_t)(end - p));
		if (!le32_to_cpu(f->u64s))
			return sb_invalid(err, "field %u (type %u) at byte %zu has size 0",
					  n, le32_to_cpu(f->type), (size_t)(p - (const uint8_t *)sb));
		if (bch_sb_field_bytes(f) > (size_t)(end - p))
			return sb_invalid(err, "field %u (type %u) at byte %zu: %zu bytes overrun the field area (%zu bytes left)",
					  n, le32_to_cpu(f->type), (size_t)(p - (const uint8_t *)sb),
					  bch_sb_field_bytes(f), (size_t)(end - p));
		p += bch_sb_field_bytes(f);
		n++;
	}
	return 0;
}

static int validate_member(const struct bch_sb *sb, unsigned i, const struct bch_member *m,
			   struct printbuf *err)
{
	uint64_t nbuckets = le64_to_cpu(m->nbuckets);
	unsigned first = le16_to_cpu(m->first_bucket);
	unsigned bucket_size = le16_to_cpu(m->bucket_size);
	unsigned bs = le16_to_cpu(sb->block_size);
	uint64_t node = BCH_SB_BTREE_NODE_SIZE(sb);

	if (nbuckets > INT64_MAX)
		return sb_invalid(err, "members: device %u: too many buckets (%" PRIu64 ")",
				  i, nbuckets);
	if (nbuckets - first < BCH_MIN_NR_NBUCKETS)
		return sb_invalid(err, "members: device %u: not enough buckets: nbuckets %" PRIu64 " - first_bucket %u, need at least %u",
				  i, nbuckets, first, BCH_MIN_NR_NBUCKETS);
	if (bucket_size < bs)
		return sb_invalid(err, "members: device %u: bucket size %u sectors smaller than block size %u",
				  i, bucket_size, bs);
	if (bucket_size < node)
		return sb_invalid(err, "members: device %u: bucket size %u sectors smaller than btree node size %" PRIu64,
				  i, bucket_size, node);
	if (nbuckets > (UINT64_MAX >> BCH_SECTOR_SHIFT) / bucket_size)
		return sb_invalid(err, "members: device %u: size nbuckets %" PRIu64 " * bucket_size %u overflows",
				  i, nbuckets, bucket_size);
	return 0;
}

int bch_sb_validate_members(const struct bch_sb *sb, struct printbuf *err)
{
	const struct bch_sb_field_members *m = bch_sb_members(sb);
	unsigned i;
	int ret;

	if (!m)
		return sb_invalid(err, "members field missing");
	if (bch_sb_members_nr(m) < sb->nr_devices)
		return sb_invalid(err, "members field holds %zu entries, nr_devices is %u",
				  bch_sb_members_nr(m), sb->nr_devices);
	for (i = 0; i < sb->nr_devices; i++) {
		if (!bch_member_exists(&m->members[i]))
			continue;
		ret = validate_member(sb, i, &m->members[i], err);
		if (ret)
			return ret;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int journal_check_sorted(const struct bch_sb *sb, const struct bch_member *m,
				const uint64_t *b, size_t nr, struct printbuf *err)
{
	uint64_t bucket_size = le16_to_cpu(m->bucket_size);
	size_t i;

	if (!b[0])
		return sb_invalid(err, "journal: bucket 0 (sector 0) in the journal");
	if (b[0] < le16_to_cpu(m->first_bucket))
		return sb_invalid(err, "journal: bucket %" PRIu64 " before the first bucket %u",
				  b[0], le16_to_cpu(m->first_bucket));
	if (b[nr - 1] >= le64_to_cpu(m->nbuckets))
		return sb_invalid(err, "journal: bucket %" PRIu64 " past the end of the device (%" PRIu64 " buckets)",
				  b[nr - 1], le64_to_cpu(m->nbuckets));
	for (i = 0; i < nr; i++) {
		if (i && b[i] == b[i - 1])
			return sb_invalid(err, "journal: bucket %" PRIu64 " listed twice", b[i]);
		if (bch_sb_range_in_sb_area(sb, b[i] * bucket_size, (b[i] + 1) * bucket_size))
			return sb_invalid(err, "journal: bucket %" PRIu64 " (sectors %" PRIu64 "-%" PRIu64 ") overlaps the superblock area",
					  b[i], b[i] * bucket_size, (b[i] + 1) * bucket_size - 1);
	}
	return 0;
}

int bch_sb_validate_journal(const struct bch_sb *sb, struct printbuf *err)
{
	const struct bch_sb_field_journal *j =
		(const void *)bch_sb_field_find(sb, BCH_SB_FIELD_journal);
	const struct bch_member *m;
	size_t i, nr = j ? bch_sb_journal_nr(j) : 0;
	uint64_t *b;
	int ret;

	if (!nr)
		return 0;
	m = bch_sb_member(sb, sb->dev_idx);
	if (!m)
		return sb_invalid(err, "journal: device %u has no member entry", sb->dev_idx);
	b = xmalloc(nr * sizeof(*b));
	for (i = 0; i < nr; i++)
		b[i] = le64_to_cpu(j->buckets[i]);
	qsort(b, nr, sizeof(*b), cmp_u64);
	ret = journal_check_sorted(sb, m, b, nr, err);
	free(b);
	return ret;
}

int bch_sb_validate_crypt(const struct bch_sb *sb, const struct bch_sb_field *f,
			  struct printbuf *err)
{
	const struct bch_sb_field_crypt *c = (const void *)f;

	if (bch_sb_field_bytes(f) != sizeof(*c))
		return sb_invalid(err, "crypt: size %zu bytes (must be %zu)",
				  bch_sb_field_bytes(f), sizeof(*c));
	if (BCH_CRYPT_KDF_TYPE(c))
		return sb_invalid(err, "crypt: kdf type %" PRIu64 " (only 0, scrypt, is known)",
				  BCH_CRYPT_KDF_TYPE(c));
	return 0;
}

/* An entry as (data type, device bitmap), for duplicate detection. */
struct replicas_key {
	unsigned	type;
	uint64_t	devs;
};

static int cmp_replicas_key(const void *a, const void *b)
{
	const struct replicas_key *x = a, *y = b;

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->devs < y->devs ? -1 : x->devs > y->devs;
}

static int validate_replicas_entry(const struct bch_sb *sb, unsigned n,
				   const struct bch_replicas_entry *e,
				   struct replicas_key *k, struct printbuf *err)
{
	unsigned i;

	if (e->data_type >= BCH_DATA_NR)
		return sb_invalid(err, "replicas: entry %u: invalid data type %u (allowed 1-%u)",
				  n, e->data_type, BCH_DATA_NR - 1);
	if (!e->nr)
		return sb_invalid(err, "replicas: entry %u (%s): no devices", n,
				  bch_data_type_name(e->data_type));
	if (e->nr > BCH_REPLICAS_ENTRY_DEVS_MAX)
		return sb_invalid(err, "replicas: entry %u (%s): %u devices (at most %u)", n,
				  bch_data_type_name(e->data_type), e->nr,
				  BCH_REPLICAS_ENTRY_DEVS_MAX);
	k->type = e->data_type;
	k->devs = 0;
	for (i = 0; i < e->nr; i++) {
		if (e->devs[i] >= sb->nr_devices || !bch_sb_member_exists(sb, e->devs[i]))
			return sb_invalid(err, "replicas: entry %u (%s): device %u is not a member (nr_devices %u)",
					  n, bch_data_type_name(e->data_type), e->devs[i],
					  sb->nr_devices);
		k->devs |= 1ULL << e->devs[i];
	}
	return 0;
}

int bch_sb_validate_replicas(const struct bch_sb *sb, const struct bch_sb_field *f,
			     struct printbuf *err)
{
	const uint8_t *p = (const uint8_t *)f + sizeof(*f);
	const uint8_t *end = (const uint8_t *)f + bch_sb_field_bytes(f);
	size_t max = bch_sb_field_bytes(f) / 2 + 1, nr = 0, i;
	struct replicas_key *keys = xcalloc(max, sizeof(*keys));
	int ret = 0;

	while (p < end && *p) {
		const struct bch_replicas_entry *e = (const void *)p;

		if (end - p < 2 || (size_t)(end - p) < bch_replicas_entry_bytes(e)) {
			ret = sb_invalid(err, "replicas: entry %zu at byte %zu overruns the field",
					 nr, (size_t)(p - (const uint8_t *)f));
			goto out;
		}
		ret = validate_replicas_entry(sb, nr, e, &keys[nr], err);
		if (ret)
			goto out;
		nr++;
		p += bch_replicas_entry_bytes(e);
	}
	qsort(keys, nr, sizeof(*keys), cmp_replicas_key);
	for (i = 1; i < nr; i++)
		if (!cmp_replicas_key(&keys[i - 1], &keys[i])) {
			ret = sb_invalid(err, "replicas: duplicate entry (%s, devices %#" PRIx64 ")",
					 bch_data_type_name(keys[i].type), keys[i].devs);
			goto out;
		}
out:
	free(keys);
	return ret;
}

int bch_sb_validate_quota(const struct bch_sb *sb, const struct bch_sb_field *f,
			  struct printbuf *err)
{
	if (bch_sb_field_bytes(f) != sizeof(struct bch_sb_field_quota))
		return sb_invalid(err, "quota: size %zu bytes (must be %zu)",
				  bch_sb_field_bytes(f), sizeof(struct bch_sb_field_quota));
	return 0;
}

static int cmp_disk_group(const void *a, const void *b)
{
	const struct bch_disk_group *x = a, *y = b;
	uint64_t dx = BCH_GROUP_DELETED(x), dy = BCH_GROUP_DELETED(y);
	uint64_t px = BCH_GROUP_PARENT(x), py = BCH_GROUP_PARENT(y);

	if (dx != dy)
		return dx < dy ? -1 : 1;
	if (px != py)
		return px < py ? -1 : 1;
	return strncmp((const char *)x->label, (const char *)y->label, BCH_SB_LABEL_SIZE);
}

static int validate_member_groups(const struct bch_sb *sb,
				  const struct bch_sb_field_disk_groups *g, size_t nr,
				  struct printbuf *err)
{
	const struct bch_sb_field_members *m = bch_sb_members(sb);
	unsigned i;

	for (i = 0; m && i < sb->nr_devices && i < bch_sb_members_nr(m); i++) {
		uint64_t grp = BCH_MEMBER_GROUP(&m->members[i]);

		if (!grp)
			continue;
		if (grp - 1 >= nr)
			return sb_invalid(err, "disk_groups: device %u is in group %" PRIu64 ", only %zu groups exist",
					  i, grp - 1, nr);
		if (BCH_GROUP_DELETED(&g->entries[grp - 1]))
			return sb_invalid(err, "disk_groups: device %u is in deleted group %" PRIu64,
					  i, grp - 1);
	}
	return 0;
}

int bch_sb_validate_disk_groups(const struct bch_sb *sb, const struct bch_sb_field *f,
				struct printbuf *err)
{
	const struct bch_sb_field_disk_groups *g = (const void *)f;
	size_t nr = bch_sb_disk_groups_nr(g), i;
	struct bch_disk_group *sorted;
	int ret;

	ret = validate_member_groups(sb, g, nr, err);
	if (ret)
		return ret;
	for (i = 0; i < nr; i++)
		if (!BCH_GROUP_DELETED(&g->entries[i]) && !g->entries[i].label[0])
			return sb_invalid(err, "disk_groups: group %zu has an empty label", i);
	if (!nr)
		return 0;
	sorted = xmalloc(nr * sizeof(*sorted));
	memcpy(sorted, g->entries, nr * sizeof(*sorted));
	qsort(sorted, nr, sizeof(*sorted), cmp_disk_group);
	for (i = 1; i < nr; i++)
		if (!BCH_GROUP_DELETED(&sorted[i]) &&
		    !cmp_disk_group(&sorted[i - 1], &sorted[i])) {
			ret = sb_invalid(err, "disk_groups: duplicate group '%.32s' (parent %" PRIu64 ")",
					 (const char *)sorted[i].label, BCH_GROUP_PARENT(&sorted[i]));
			break;
		}
	free(sorted);
	return ret;
}

static int validate_field(const struct bch_sb *sb, const struct bch_sb_field *f,
			  struct printbuf *err)
{
	switch (le32_to_cpu(f->type)) {
	case BCH_SB_FIELD_journal:
		return bch_sb_field_find(sb, BCH_SB_FIELD_journal) == f
			? bch_sb_validate_journal(sb, err) : 0;
	case BCH_SB_FIELD_crypt:
		return bch_sb_validate_crypt(sb, f, err);
	case BCH_SB_FIELD_replicas:
		return bch_sb_validate_replicas(sb, f, err);
	case BCH_SB_FIELD_quota:
		return bch_sb_validate_quota(sb, f, err);
	case BCH_SB_FIELD_disk_groups:
		return bch_sb_validate_disk_groups(sb, f, err);
	default:
		return 0;	/* members: done first; unknown types: carried along */
	}
}

int bch_sb_validate(const struct bch_sb *sb, struct printbuf *err)
{
	const struct bch_sb_field *f;
	struct printbuf why = PRINTBUF;
	int ret;

	ret = validate_fixed(sb, err);
	if (ret)
		return ret;
	ret = bch_sb_layout_validate(&sb->layout, &why);
	if (ret) {
		pr_buf(err, "invalid superblock: embedded layout: %s", printbuf_str(&why));
		printbuf_exit(&why);
		return ret;
	}
	printbuf_exit(&why);
	ret = validate_field_list(sb, err);
	if (ret)
		return ret;
	ret = bch_sb_validate_members(sb, err);
	if (ret)
		return ret;
	for_each_sb_field_safe(f, sb) {
		ret = validate_field(sb, f, err);
		if (ret)
			return ret;
	}
	if (le64_to_cpu(sb->version) < BCH_SB_VERSION_EXTENT_NONCE_V1 &&
	    bch_sb_field_find(sb, BCH_SB_FIELD_crypt) && BCH_SB_INITIALIZED(sb))
		return sb_invalid(err, "version %" PRIu64 " encrypted filesystem: incompatible extent nonces",
				  le64_to_cpu(sb->version));
	return 0;
}

void bch_sb_upgrade_in_memory(struct bch_sb *sb)
{
	struct bch_sb_field_members *m;
	unsigned i;

	if (le64_to_cpu(sb->version) >= BCH_SB_VERSION_CURRENT)
		return;
	if (le64_to_cpu(sb->version) < BCH_SB_VERSION_EXTENT_MAX) {
		SET_BCH_SB_ENCODED_EXTENT_MAX_BITS(sb, 7);
		SET_BCH_SB_POSIX_ACL(sb, 1);
		m = (void *)bch_sb_field_find(sb, BCH_SB_FIELD_members);
		for (i = 0; m && i < bch_sb_members_nr(m); i++)
			SET_BCH_MEMBER_DATA_ALLOWED(&m->members[i], 0x1f);
	}
	sb->version = cpu_to_le64(BCH_SB_VERSION_CURRENT);
}

/* ---- writing ------------------------------------------------------------ */

static int sb_write_copy(struct bch_devio *io, struct bch_sb *sb, uint64_t off,
			 struct printbuf *err)
{
	size_t bytes = bch_sb_bytes(sb);
	struct bch_csum_val csum;
	int ret;

	sb->offset = cpu_to_le64(off);
	ret = bch_sb_csum(sb, &csum);
	if (ret) {
		pr_buf(err, "%s: superblock checksum type %" PRIu64 " cannot be written\n",
		       io->path, BCH_SB_CSUM_TYPE(sb));
		return ret;
	}
	bch_csum_to_bytes(csum, &sb->csum);

	if (off == BCH_SB_SECTOR) {
		ret = dev_pwrite(io, &sb->layout, sizeof(sb->layout),
				 (uint64_t)BCH_SB_LAYOUT_SECTOR << BCH_SECTOR_SHIFT);
		if (ret) {
			pr_buf(err, "%s: error writing the layout at sector %u: %s\n",
			       io->path, BCH_SB_LAYOUT_SECTOR, bch_err_str(ret));
			return ret;
		}
	}
	ret = dev_pwrite(io, sb, bytes, off << BCH_SECTOR_SHIFT);
	if (ret)
		pr_buf(err, "%s: error writing the superblock at sector %" PRIu64 ": %s\n",
		       io->path, off, bch_err_str(ret));
	return ret;
}

int bch_sb_write(struct bch_devio *io, struct bch_sb *sb, struct printbuf *err)
{
	struct printbuf why = PRINTBUF;
	uint64_t copy_bytes;
	unsigned i;
	int ret;

	ret = bch_sb_validate(sb, &why);
	if (ret) {
		pr_buf(err, "%s: not writing an invalid superblock: %s\n", io->path,
		       printbuf_str(&why));
		goto out;
	}
	copy_bytes = layout_copy_sectors(&sb->layout) << BCH_SECTOR_SHIFT;
	if (bch_sb_bytes(sb) > copy_bytes) {
		pr_buf(err, "%s: superblock too big: %zu bytes, the layout reserves %" PRIu64 "\n",
		       io->path, bch_sb_bytes(sb), copy_bytes);
		ret = -BCH_ERR_sb_too_big;
		goto out;
	}
	for (i = 0; i < sb->layout.nr_superblocks; i++) {
		uint64_t off = le64_to_cpu(sb->layout.sb_offset[i]);

		if ((off << BCH_SECTOR_SHIFT) + bch_sb_bytes(sb) > io->size) {
			pr_buf(err, "%s: superblock copy at sector %" PRIu64 " does not fit on the device (%" PRIu64 " bytes)\n",
			       io->path, off, io->size);
			ret = -BCH_ERR_dev_too_small;
			goto out;
		}
	}
	/*
	 * One copy at a time on the disk: each is flushed before the next is
	 * written, so a crash can tear at most one of them (a disk that
	 * reorders could otherwise tear them all: no valid superblock left).
	 */
	for (i = 0; i < sb->layout.nr_superblocks && !ret; i++) {
		ret = sb_write_copy(io, sb, le64_to_cpu(sb->layout.sb_offset[i]), err);
		if (!ret)
			ret = dev_flush(io);
	}
out:
	printbuf_exit(&why);
	return ret;
}

/*
 * Every copy @l lists, then the layout at sector 7: see sb_removed_at().
 * A copy that does not read as a superblock any more gets its magic zeroed
 * all the same. Best effort: returns the first write error.
 */
int bch_sb_mark_removed(struct bch_devio *io, const struct bch_sb_layout *l)
{
	static const uint8_t zero[16];
	unsigned nr = min_t(unsigned, l->nr_superblocks, BCH_SB_LAYOUT_MAX_SB);
	int ret = 0, r;

	for (unsigned i = 0; i < nr; i++) {
		uint64_t off = le64_to_cpu(l->sb_offset[i]);
		struct printbuf why = PRINTBUF;
		struct bch_sb_handle h;
		struct bch_csum_val csum;

		if (!off || off >= (io->size >> BCH_SECTOR_SHIFT))
			continue;
		if (!bch_sb_read_at(io, off, &h, &why)) {
			memset(h.sb->magic.b, 0, sizeof(h.sb->magic.b));
			memset(h.sb->layout.magic.b, 0, sizeof(h.sb->layout.magic.b));
			bch_sb_csum(h.sb, &csum);
			bch_csum_to_bytes(csum, &h.sb->csum);
			r = dev_pwrite(io, h.sb, h.bytes, off << BCH_SECTOR_SHIFT);
			bch_sb_handle_free(&h);
		} else {
			r = dev_pwrite(io, zero, sizeof(zero),
				       (off << BCH_SECTOR_SHIFT) + offsetof(struct bch_sb, magic));
		}
		printbuf_exit(&why);
		ret = ret ?: r;
	}
	r = dev_pwrite(io, zero, sizeof(zero), (uint64_t)BCH_SB_LAYOUT_SECTOR << BCH_SECTOR_SHIFT);
	ret = ret ?: r;
	r = dev_flush(io);
	return ret ?: r;
}
