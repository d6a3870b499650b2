// SPDX-License-Identifier: GPL-2.0
/*
 * One journal entry read from disk (jset.h): header, checksum or MAC and
 * decryption, records validated and repaired in memory as the reference
 * does (doc/format.md §6). Nothing read from disk is trusted: every size is
 * checked against the bytes actually read before it is used.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bkey/bkey_types.h"
#include "codec/checksum.h"
#include "codec/crypto.h"
#include "format/format.h"
#include "journal/jset.h"
#include "util/errcode.h"
#include "util/util.h"

#define JSET_HDR_BYTES		sizeof(struct jset)

const char *jset_status_str(enum jset_status s)
{
	switch (s) {
	case JSET_OK:		return "ok";
	case JSET_NONE:		return "none";
	case JSET_BAD:		return "bad";
	case JSET_STALE:	return "stale";
	}
	return "?";
}

const char *jset_entry_type_str(unsigned type)
{
	switch (type) {
#define x(n, v) case v: return #n;
	BCH_JSET_ENTRY_TYPES(x)
#undef x
	}
	return NULL;
}

void bch_jset_loc_to_text(struct printbuf *out, struct jset_loc loc)
{
	pr_buf(out, "journal: dev %u bucket %" PRIu64 " sector %" PRIu64,
	       loc.dev, loc.bucket, loc.sector);
}

int bch_jset_check_header(const struct jset *j, size_t left, uint64_t magic,
			  bool have_key, struct jset_loc loc,
			  struct printbuf *err, size_t *bytes)
{
	unsigned csum_type;
	size_t b;

	*bytes = 0;
	if (left < JSET_HDR_BYTES || le64_to_cpu(j->magic) != magic)
		return JSET_NONE;

	b = jset_bytes(j);
	if (b > left) {
		bch_jset_loc_to_text(err, loc);
		pr_buf(err, ": entry seq %" PRIu64 " too big (%zu bytes, %zu left in the bucket), skipped\n",
		       le64_to_cpu(j->seq), b, left);
		return JSET_BAD;
	}

	csum_type = JSET_CSUM_TYPE(j);
	if (!bch_csum_type_valid(csum_type)) {
		bch_jset_loc_to_text(err, loc);
		pr_buf(err, ": entry seq %" PRIu64 " has unknown checksum type %u, skipped\n",
		       le64_to_cpu(j->seq), csum_type);
		return JSET_BAD;
	}
	if (bch_csum_type_is_encryption(csum_type) && !have_key) {
		bch_jset_loc_to_text(err, loc);
		pr_buf(err, ": entry seq %" PRIu64 " is encrypted and no key is loaded, skipped\n",
		       le64_to_cpu(j->seq));
		return JSET_BAD;
	}

	*bytes = b;
	return JSET_OK;
}

int bch_jset_verify(struct jset *j, size_t bytes, const struct bch_key *key,
		    struct jset_loc loc, struct printbuf *err)
{
	unsigned type = JSET_CSUM_TYPE(j);
	uint64_t seq = le64_to_cpu(j->seq);
	struct bch_nonce nonce = bch_nonce_journal(seq);
	struct bch_csum_val want, got;
	int ret;

	if (bytes < JSET_HDR_BYTES || bytes != jset_bytes(j))
		return JSET_BAD;

	ret = bch_checksum(type, nonce, key, (uint8_t *)j + 16, bytes - 16, &got);
	if (ret) {
		bch_jset_loc_to_text(err, loc);
		pr_buf(err, ": entry seq %" PRIu64 ": cannot compute checksum type %u: %s, skipped\n",
		       seq, type, bch_err_str(ret));
		return JSET_BAD;
	}
	want = bch_csum_from_bytes(&j->csum);
	if (!bch_csum_eq(want, got)) {
		bch_jset_loc_to_text(err, loc);
		pr_buf(err, ": entry seq %" PRIu64 ": checksum bad (type %u, stored %016" PRIx64 "%016" PRIx64
		       ", computed %016" PRIx64 "%016" PRIx64 "), skipped\n",
		       seq, type, want.hi, want.lo, got.hi, got.lo);
		return JSET_BAD;
	}

	if (le32_to_cpu(j->version) != BCH_JSET_VERSION) {
		bch_jset_loc_to_text(err, loc);
		pr_buf(err, ": entry seq %" PRIu64 " has unknown journal entry version %u (expected %u)\n",
		       seq, le32_to_cpu(j->version), BCH_JSET_VERSION);
		return -BCH_ERR_journal_invalid;
	}

	ret = bch_encrypt(type, key, nonce, (uint8_t *)j + JSET_ENCRYPTED_START,
			  bytes - JSET_ENCRYPTED_START);
	if (ret) {
		bch_jset_loc_to_text(err, loc);
		pr_buf(err, ": entry seq %" PRIu64 ": cannot decrypt: %s, skipped\n",
		       seq, bch_err_str(ret));
		return JSET_BAD;
	}

	if (le64_to_cpu(j->last_seq) > seq) {
		bch_jset_loc_to_text(err, loc);
		pr_buf(err, ": entry seq %" PRIu64 " has last_seq %" PRIu64 " > seq, using last_seq = seq\n",
		       seq, le64_to_cpu(j->last_seq));
		j->last_seq = j->seq;
	}
	return JSET_OK;
}

static void entry_loc_msg(struct printbuf *err, const struct jset *j,
			  struct jset_loc loc, const struct jset_entry *e)
{
	bch_jset_loc_to_text(err, loc);
	pr_buf(err, ": entry seq %" PRIu64 " record at byte %zu (type %u btree %u level %u): ",
	       le64_to_cpu(j->seq), (size_t)((const uint8_t *)e - (const uint8_t *)j),
	       e->type, e->btree_id, e->level);
}

/* Turn every u64 of the record's span into an empty record. */
static void entry_make_empty(struct jset_entry *e)
{
	memset(e, 0, sizeof(*e) + (size_t)le16_to_cpu(e->u64s) * 8);
}

/* Remove @n u64s at word @off of the record's payload; the tail becomes empty records. */
static void entry_remove_u64s(struct jset_entry *e, size_t off, size_t n)
{
	uint64_t *d = (uint64_t *)(e + 1);
	size_t u64s = le16_to_cpu(e->u64s);

	memmove(d + off, d + off + n, (u64s - off - n) * 8);
	memset(d + u64s - n, 0, n * 8);
	e->u64s = cpu_to_le16((uint16_t)(u64s - n));
}

/* Type-specific checks of a structurally sound key (bkey_types.h). */
static const char *journal_key_invalid(unsigned btree_id, unsigned level,
				       const struct bkey *k)
{
	struct bkey_ref r = journal_bkey_ref(k);
	const char *why = bch_bkey_header_invalid(btree_id, level, &r.k);

	return why ?: bch_bkey_val_invalid(btree_id, level, &r, NULL);
}

/*
 * Check one key inside a record (the key starts at payload word @off, the
 * record has @u64s payload words). Returns 0 if fine, 1 if the record must
 * be cut before it, 2 if the key must be dropped.
 */
static int journal_key_check(const struct jset_entry *e, size_t off, size_t u64s,
			     const char **why)
{
	const struct bkey *k = (const struct bkey *)((const uint64_t *)(e + 1) + off);

	if (!k->u64s) {
		*why = "k->u64s 0";
		return 1;
	}
	if (off + k->u64s > u64s) {
		*why = "extends past end of journal entry";
		return 1;
	}
	if ((k->fmt & BKEY_FMT_MASK) != KEY_FORMAT_CURRENT) {
		*why = "bad format (journal keys are unpacked)";
		return 2;
	}
	if (k->u64s < BKEY_U64s) {
		*why = "u64s smaller than the key header";
		return 2;
	}
	*why = journal_key_invalid(e->btree_id, e->level, k);
	return *why ? 2 : 0;
}

static unsigned validate_btree_keys(struct jset *j, struct jset_entry *e,
				    struct jset_loc loc, struct printbuf *err)
{
	const char *why;
	unsigned nr = 0;
	size_t off = 0;

	if (e->btree_id >= BTREE_ID_NR || e->level >= BTREE_MAX_DEPTH) {
		entry_loc_msg(err, j, loc, e);
		pr_str(err, "invalid btree id or level, record ignored\n");
		entry_make_empty(e);
		return 1;
	}

	while (off < le16_to_cpu(e->u64s)) {
		size_t u64s = le16_to_cpu(e->u64s);
		const struct bkey *k = (const struct bkey *)((uint64_t *)(e + 1) + off);

		switch (journal_key_check(e, off, u64s, &why)) {
		case 0:
			off += k->u64s;
			continue;
		case 1:
			entry_loc_msg(err, j, loc, e);
			pr_buf(err, "invalid key in journal: %s, record cut at key %zu\n", why, off);
			entry_remove_u64s(e, off, u64s - off);
			return nr + 1;
		default:
			entry_loc_msg(err, j, loc, e);
			pr_buf(err, "invalid key at %zu in journal: %s: key skipped (a repair deletes it)\n", off, why);
			entry_remove_u64s(e, off, k->u64s);
			nr++;
		}
	}
	return nr;
}

static unsigned validate_btree_root(struct jset *j, struct jset_entry *e,
				    struct jset_loc loc, struct printbuf *err)
{
	size_t u64s = le16_to_cpu(e->u64s);
	const struct bkey *k = jset_entry_keys_start(e);
	const char *why = NULL;

	if (e->btree_id >= BTREE_ID_NR) {
		entry_loc_msg(err, j, loc, e);
		pr_str(err, "btree root of an unknown btree, record ignored\n");
		entry_make_empty(e);
		return 1;
	}

	if (!u64s || k->u64s != u64s)
		why = "wrong number of keys";
	else if ((k->fmt & BKEY_FMT_MASK) != KEY_FORMAT_CURRENT)
		why = "bad key format";
	else if (k->u64s <= BKEY_U64s)
		why = "no pointer";
	else if (k->type != BCH_BTREE_PTR)
		why = "not a btree pointer key";
	else if (e->level >= BTREE_MAX_DEPTH)
		why = "level too big";
	else	/* a root is a btree pointer whatever its level: check as level 1 */
		why = journal_key_invalid(e->btree_id, 1, k);
	if (!why)
		return 0;

	entry_loc_msg(err, j, loc, e);
	pr_buf(err, "invalid btree root journal entry: %s, root dropped\n", why);
	/* keep the header with u64s 0: the root is then known to be invalid */
	memset(e + 1, 0, u64s * 8);
	e->u64s = 0;
	return 1;
}

static unsigned validate_blacklist(struct jset *j, struct jset_entry *e,
				   struct jset_loc loc, struct printbuf *err)
{
	const char *why = NULL;

	if (e->type == BCH_JSET_ENTRY_blacklist) {
		if (le16_to_cpu(e->u64s) != 1)
			why = "bad size";
	} else if (le16_to_cpu(e->u64s) != 2) {
		why = "bad size";
	} else {
		const struct jset_entry_blacklist_v2 *bl = (const void *)e;

		if (le64_to_cpu(bl->start) > le64_to_cpu(bl->end))
			why = "start > end";
	}
	if (!why)
		return 0;

	entry_loc_msg(err, j, loc, e);
	pr_buf(err, "invalid journal seq blacklist entry: %s, record ignored\n", why);
	entry_make_empty(e);
	return 1;
}

unsigned bch_jset_validate_entries(struct jset *j, struct jset_loc loc,
				   struct printbuf *err)
{
	uint64_t *start = (uint64_t *)(j + 1);
	size_t n = le32_to_cpu(j->u64s), i = 0;
	unsigned nr = 0;

	while (i < n) {
		struct jset_entry *e = (struct jset_entry *)(start + i);

		if (i + 1 + le16_to_cpu(e->u64s) > n) {
			entry_loc_msg(err, j, loc, e);
			pr_buf(err, "journal entry extends past end of jset, jset cut to %zu u64s\n", i);
			memset(start + i, 0, (n - i) * 8);
			j->u64s = cpu_to_le32((uint32_t)i);
			return nr + 1;
		}

		switch (e->type) {
		case BCH_JSET_ENTRY_btree_keys:
			nr += validate_btree_keys(j, e, loc, err);
			break;
		case BCH_JSET_ENTRY_btree_root:
			nr += validate_btree_root(j, e, loc, err);
			break;
		case BCH_JSET_ENTRY_prio_ptrs:
			break;
		case BCH_JSET_ENTRY_blacklist:
		case BCH_JSET_ENTRY_blacklist_v2:
			nr += validate_blacklist(j, e, loc, err);
			break;
		default:
			entry_loc_msg(err, j, loc, e);
			pr_buf(err, "invalid journal entry type %u, record ignored\n", e->type);
			entry_make_empty(e);
			nr++;
		}
		/* repairs only shrink a record; what they free reads as empty records */
		i += 1 + le16_to_cpu(e->u64s);
	}
	return nr;
}

struct bkey_ref journal_bkey_ref(const struct bkey *k)
{
	struct bkey_ref r;

	memset(&r, 0, sizeof(r));
	bkey_h_from_disk(k, &r.k);
	r.v = (const uint8_t *)k + sizeof(struct bkey);
	r.v_bytes = bkey_val_bytes(k);
	return r;
}
