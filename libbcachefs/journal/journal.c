// SPDX-License-Identifier: GPL-2.0
/*
 * Journal, read side (doc/format.md
 * §6, doc/engine.md §2.4, doc/format.md §6.7).
 *
 * For every journal device, every journal bucket is walked block by block:
 * each jset header is checked (magic, size, checksum type), its checksum or
 * MAC verified, and the entry decrypted (jset.c). Valid entries are offered to the
 * replay list, which keeps one copy per seq from the newest entry's last_seq
 * on. Then the records of the kept entries are validated (and repaired in
 * memory), the btree roots taken from the newest entry, the blacklists
 * collected, gaps reported, and the keys of every entry gathered and sorted
 * for the iterators' overlay.
 *
 * Nothing read from disk is trusted: every size is checked against the
 * bytes actually read before it is used.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dev/dev.h"
#include "util/errcode.h"
#include "core/bch_fs.h"
#include "format/format.h"
#include "journal/journal.h"
#include "util/util.h"

_Static_assert(JOURNAL_MAX_DEVS == BCH_FS_MAX_DEVS, "journal devs");
_Static_assert(JOURNAL_MAX_DEVS <= 64, "dev_mask is 64 bits");

#define JSET_HDR_BYTES		sizeof(struct jset)
#define JOURNAL_READ_AHEAD	(4U << 10)	/* the first read-ahead in a bucket (doubles) */

static const char * const btree_names[] = {
	"extents", "inodes", "dirents", "xattrs", "alloc", "quotas",
};

static const char *btree_str(unsigned id)
{
	return id < ARRAY_SIZE(btree_names) ? btree_names[id] : "(unknown btree)";
}

/* ---- scanning the buckets ------------------------------------------- */

struct jscan {
	struct bch_fs		*c;
	struct printbuf		*err;
	/*
	 * Set by the mount's read: what is wrong with a bad entry goes to the
	 * callback (se.msg) instead of @err, which decides once it knows
	 * whether the entry was still needed.
	 */
	bool			defer_bad;
	journal_scan_fn		fn;
	void			*ctx;

	unsigned		dev;
	struct bch_devio	*io;
	uint64_t		magic;
	size_t			block_bytes;

	uint8_t			*buf;		/* one bucket */
	size_t			bucket_bytes;
	size_t			have;		/* bytes of the bucket read so far */
	size_t			ahead;		/* read past what is asked, doubled at each read */
	uint64_t		bucket_sector;
	uint64_t		bucket;
};

/* Make sure the first @end bytes of the bucket are in the buffer. */
static int bucket_ensure(struct jscan *s, size_t end)
{
	size_t want;
	int ret;

	if (end <= s->have)
		return 0;
	/*
	 * The first read of a bucket is one block: most journal buckets of a
	 * big filesystem are empty, and reading them whole made fsck's cost
	 * follow the device size. A later read takes what is asked and the
	 * block after it (the next entry's header), and reads ahead a
	 * window that doubles at each read: a bucket of one large entry is
	 * read in two reads, not whole (d1: a fifth of its journal was the
	 * unused ends of buckets), one of many small entries in a few.
	 */
	if (!s->have) {
		want = end;
		s->ahead = JOURNAL_READ_AHEAD;
	} else {
		want = max_t(size_t, end + s->block_bytes, s->have + s->ahead);
		s->ahead = min_t(size_t, s->ahead * 2, s->bucket_bytes);
	}
	want = min_t(size_t, round_up(want, 512), s->bucket_bytes);
	ret = dev_pread(s->io, s->buf + s->have, want - s->have,
			s->bucket_sector * 512 + s->have);
	if (ret) {
		pr_buf(s->err, "journal: dev %u bucket %" PRIu64 ": error reading sectors %" PRIu64 "-%" PRIu64 ": %s\n",
		       s->dev, s->bucket, s->bucket_sector + s->have / 512,
		       s->bucket_sector + want / 512 - 1, bch_err_str(ret));
		return ret;
	}
	s->have = want;
	return 0;
}

/* Scan one bucket (doc/format.md §6.5). */
static int scan_bucket(struct jscan *s, unsigned idx, uint64_t *bucket_seq)
{
	struct bch_fs *c = s->c;
	size_t off = 0, bytes;
	bool saw_bad = false;
	int ret;

	s->have = 0;
	while (off + JSET_HDR_BYTES <= s->bucket_bytes) {
		struct journal_scan_entry se = {
			.loc = { s->dev, s->bucket, s->bucket_sector + off / 512 },
			.bucket_idx = idx,
		};
		struct jset *j = (struct jset *)(s->buf + off);
		size_t left = s->bucket_bytes - off;

		ret = bucket_ensure(s, off + s->block_bytes);
		if (ret)
			return ret;

		struct printbuf msg = PRINTBUF;
		struct printbuf *out = s->defer_bad ? &msg : s->err;

		ret = bch_jset_check_header(j, left, s->magic, c->have_key,
					    se.loc, out, &bytes);
		if (ret == JSET_NONE) {
			pr_str(s->err, printbuf_str(&msg));
			printbuf_exit(&msg);
			if (!saw_bad)
				break;
			off += s->block_bytes;
			continue;
		}
		if (ret == JSET_OK) {
			ret = bucket_ensure(s, off + bytes);
			if (!ret)
				ret = bch_jset_verify(j, bytes, &c->key, se.loc, out);
			/*
			 * fsck: an intact entry of another version is a bad
			 * entry like any other (the newest usable prefix of
			 * the journal is replayed); a mount refuses it.
			 */
			if (ret == -BCH_ERR_journal_invalid && c->opts.fsck) {
				ret = JSET_BAD;
				se.intact = true;
			}
			if (ret < 0) {
				pr_str(s->err, printbuf_str(&msg));
				printbuf_exit(&msg);
				return ret;
			}
		}
		if (ret == JSET_BAD) {
			if (!s->defer_bad)
				c->journal.nr_errors++;
			saw_bad = true;
			se.status = JSET_BAD;
			se.j = j;
			se.msg = printbuf_str(&msg);
			ret = s->fn ? s->fn(s->ctx, &se) : 0;
			printbuf_exit(&msg);
			if (ret)
				return ret;
			off += s->block_bytes;
			continue;
		}
		/* deferred (journal_offer): about an entry the replay does not use, noise */
		se.j = j;
		se.bytes = bytes;
		se.status = le64_to_cpu(j->seq) < *bucket_seq ? JSET_STALE : JSET_OK;
		if (se.status == JSET_OK)
			*bucket_seq = le64_to_cpu(j->seq);
		se.msg = s->defer_bad && msg.pos ? printbuf_str(&msg) : NULL;
		/* the callback may repair the records: compute the advance first */
		off += round_up(bytes, s->block_bytes);
		ret = s->fn ? s->fn(s->ctx, &se) : 0;
		printbuf_exit(&msg);
		if (ret)
			return ret;
		if (se.status == JSET_STALE)
			break;
	}
	return 0;
}

/* Does the superblock's replicas table list @dev in a journal entry? */
static int dev_has_journal_replicas(const struct bch_sb *sb, unsigned dev)
{
	const struct bch_sb_field *f = bch_sb_field_get(sb, BCH_SB_FIELD_replicas);
	const uint8_t *p, *end;

	if (!f)
		return -1;
	p = (const uint8_t *)f + sizeof(*f);
	end = (const uint8_t *)f + bch_sb_field_bytes(f);
	while (p + 2 <= end && p[0]) {
		const uint8_t *devs = p + 2;
		unsigned i, nr = p[1];

		if (devs + nr > end)
			break;
		if (p[0] == BCH_DATA_JOURNAL)
			for (i = 0; i < nr; i++)
				if (devs[i] == dev)
					return 1;
		p = devs + nr;
	}
	return 0;
}

/* Is member @dev in a state whose journal is read (RW or RO)? */
static bool dev_state_readable(const struct bch_sb *sb, unsigned dev)
{
	const struct bch_sb_field_members *m = (const void *)
		bch_sb_field_get(sb, BCH_SB_FIELD_members);
	unsigned state;

	if (!m || dev >= bch_sb_members_nr(m))
		return false;
	state = (unsigned)BCH_MEMBER_STATE(&m->members[dev]);
	return state == BCH_MEMBER_STATE_RW || state == BCH_MEMBER_STATE_RO;
}

/* The journal field of a device's own superblock (NULL if none). */
static const struct bch_sb_field_journal *dev_journal_field(const struct bch_member_dev *d)
{
	if (!d->sb || d->sb_bytes < BCH_SB_FIXED_BYTES ||
	    bch_sb_bytes(d->sb) > d->sb_bytes)
		return NULL;
	return (const void *)bch_sb_field_get(d->sb, BCH_SB_FIELD_journal);
}

static bool dev_is_journal_dev(struct bch_fs *c, unsigned i)
{
	struct bch_member_dev *d = c->devs[i];
	const struct bch_sb_field_journal *jf;

	if (!d || !d->io || !c->sb)
		return false;
	jf = dev_journal_field(d);
	if (!jf || !bch_sb_journal_nr(jf))
		return false;
	if (!dev_state_readable(c->sb, d->idx))
		return false;
	/* without a replicas table (never written), read every journal */
	return dev_has_journal_replicas(c->sb, d->idx) != 0;
}

static int scan_dev(struct jscan *s, unsigned i)
{
	struct bch_fs *c = s->c;
	struct bch_member_dev *d = c->devs[i];
	const struct bch_sb_field_journal *jf = dev_journal_field(d);
	struct journal_dev_h *jd = &c->journal.devs[i];
	size_t nr = bch_sb_journal_nr(jf), b;
	int ret = 0;

	s->dev = d->idx;
	s->io = d->io;
	s->bucket_bytes = (size_t)d->bucket_size * 512;
	if (!s->bucket_bytes || s->bucket_bytes < s->block_bytes) {
		pr_buf(s->err, "journal: dev %u: bucket size %u sectors is smaller than a block, journal not read\n",
		       d->idx, d->bucket_size);
		c->journal.nr_errors++;
		return 0;
	}

	free(jd->bucket_seq);
	jd->bucket_seq = xcalloc(nr, sizeof(uint64_t));
	jd->nr_buckets = (unsigned)nr;
	s->buf = xmalloc(s->bucket_bytes);

	for (b = 0; b < nr && !ret; b++) {
		s->bucket = le64_to_cpu(jf->buckets[b]);
		if (s->bucket >= UINT64_MAX / d->bucket_size) {
			pr_buf(s->err, "journal: dev %u: journal bucket %" PRIu64 " out of range, skipped\n",
			       d->idx, s->bucket);
			c->journal.nr_errors++;
			continue;
		}
		s->bucket_sector = s->bucket * d->bucket_size;
		ret = scan_bucket(s, (unsigned)b, &jd->bucket_seq[b]);
	}

	/* ring position of the newest entry (doc/format.md §6.5) */
	for (b = 0; b < nr; b++)
		if (jd->bucket_seq[b] != jd->bucket_seq[(b + 1) % nr] &&
		    jd->bucket_seq[b] >= jd->bucket_seq[jd->cur_idx])
			jd->cur_idx = (unsigned)b;

	free(s->buf);
	s->buf = NULL;
	return ret;
}

static int journal_scan(struct bch_fs *c, journal_scan_fn fn, void *ctx,
			struct printbuf *err, bool defer_bad)
{
	struct jscan s = {
		.c		= c,
		.err		= err,
		.defer_bad	= defer_bad,
		.fn		= fn,
		.ctx		= ctx,
	};
	unsigned i;
	int ret;

	if (!c->sb)
		return -EINVAL;
	s.magic = bch_jset_magic(c->sb);
	s.block_bytes = (size_t)(c->block_size ? c->block_size : 1) * 512;

	for (i = 0; i < BCH_FS_MAX_DEVS; i++) {
		if (!dev_is_journal_dev(c, i))
			continue;
		ret = scan_dev(&s, i);
		if (ret)
			return ret;
	}
	return 0;
}

int bch_journal_scan(struct bch_fs *c, journal_scan_fn fn, void *ctx,
		     struct printbuf *err)
{
	return journal_scan(c, fn, ctx, err, false);
}

/* ---- the replay list (doc/format.md §6.6) ---------------------------------- */

/* messages about journal entries, said or not once the replay window is known */
struct jset_notes {
	struct jset_note { uint64_t seq; char *msg; struct jset_loc loc; bool intact; } *v;
	size_t			nr;
};

static void jset_note_add(struct jset_notes *n, uint64_t seq, const char *msg,
			  struct jset_loc loc)
{
	n->v = xrealloc(n->v, (n->nr + 1) * sizeof(*n->v));
	n->v[n->nr++] = (struct jset_note) { seq, xstrdup(msg), loc, false };
}

static void jset_notes_exit(struct jset_notes *n)
{
	for (size_t i = 0; i < n->nr; i++)
		free(n->v[i].msg);
	free(n->v);
	*n = (struct jset_notes) { 0 };
}

struct jread {
	struct bch_fs		*c;
	struct printbuf		*err;
	/* fsck: intact entries past the newest usable one, not replayed (up to this seq) */
	uint64_t		dropped_end;
	/* bad entries, judged once the replay window is known */
	struct jset_notes	bad;
	/* warnings about valid entries (last_seq > seq), judged the same way */
	struct jset_notes	warn;
};

/*
 * A bad entry is a problem when it was needed: past the newest valid
 * entry (a torn tail), or inside the replay window with no valid entry of
 * its seq. The others were superseded (a torn write the journal went on
 * from, a stale block of a bucket being reused, doc/format.md §6.8).
 */
static bool have_entry(const struct journal_state *j, uint64_t seq)
{
	for (size_t i = 0; i < j->nr_entries; i++)
		if (j->entries[i].seq == seq)
			return true;
	return false;
}

static void report_bad_entries(struct jread *r)
{
	struct journal_state *j = &r->c->journal;
	const struct journal_entry_h *newest = j->nr_entries ? &j->entries[j->nr_entries - 1] : NULL;

	for (size_t i = 0; i < r->bad.nr; i++) {
		uint64_t seq = r->bad.v[i].seq;
		const char *msg = r->bad.v[i].msg;

		if (!newest || seq > newest->seq ||
		    (seq >= newest->last_seq && !have_entry(j, seq))) {
			if (r->c->opts.fsck && newest && seq > newest->seq) {
				/* fsck: said with what is done about it */
				size_t len = strlen(msg);

				if (len && msg[len - 1] == '\n')
					len--;
				pr_buf(r->err, "%.*s (not replayed: the journal is used up to entry seq %" PRIu64
				       ", the newest that can be read)\n", (int)len, msg, newest->seq);
				if (r->bad.v[i].intact && seq > r->dropped_end)
					r->dropped_end = seq;
			} else {
				pr_str(r->err, msg);
			}
			j->nr_errors++;
		}
	}
	jset_notes_exit(&r->bad);

	/* a valid entry's warning matters when the replay uses that entry */
	for (size_t i = 0; i < r->warn.nr; i++) {
		uint64_t seq = r->warn.v[i].seq;

		if (newest && seq >= newest->last_seq && have_entry(j, seq))
			pr_str(r->err, r->warn.v[i].msg);
	}
	jset_notes_exit(&r->warn);
}

static void entry_drop_front(struct journal_state *j, uint64_t last_seq)
{
	size_t n = 0, i;

	while (n < j->nr_entries && j->entries[n].seq < last_seq)
		free(j->entries[n++].data);
	if (!n)
		return;
	for (i = n; i < j->nr_entries; i++)
		j->entries[i - n] = j->entries[i];
	j->nr_entries -= n;
}

static void entry_insert(struct journal_state *j, size_t pos,
			 const struct journal_scan_entry *se)
{
	struct journal_entry_h *e;

	j->entries = xrealloc(j->entries, (j->nr_entries + 1) * sizeof(*j->entries));
	memmove(j->entries + pos + 1, j->entries + pos,
		(j->nr_entries - pos) * sizeof(*j->entries));
	j->nr_entries++;

	e = &j->entries[pos];
	memset(e, 0, sizeof(*e));
	e->seq		= le64_to_cpu(se->j->seq);
	e->last_seq	= le64_to_cpu(se->j->last_seq);
	e->dev		= se->loc.dev;
	e->sector	= se->loc.sector;
	e->bucket	= se->loc.bucket;
	e->bytes	= se->bytes;
	e->data		= NULL;		/* read once the scan is over (entry_load()) */
	e->nr_devs	= 1;
	e->dev_mask	= 1ULL << (se->loc.dev % 64);
}

/*
 * The entries are kept by place during the scan and their bytes read when
 * it is over: a journal of many entries the replay does not use (d1:
 * seven of 90 KiB before the one replayed) cost a copy of each, most of
 * the peak memory of checking a small filesystem. Read again, an entry is
 * verified again (and decrypted): a device written in between is an
 * error, not another journal.
 */
static int entry_load(struct bch_fs *c, struct journal_entry_h *e)
{
	struct jset_loc loc = { e->dev, e->bucket, e->sector };
	struct printbuf scratch = PRINTBUF;	/* (said during the scan already) */
	struct bch_member_dev *d = NULL;
	struct jset *j;
	int ret;

	for (unsigned i = 0; i < BCH_FS_MAX_DEVS && !d; i++)
		if (c->devs[i] && c->devs[i]->idx == e->dev && c->devs[i]->io)
			d = c->devs[i];
	if (!d || e->sector > UINT64_MAX / 512)
		return -EIO;
	j = xmalloc(e->bytes);
	ret = dev_pread(d->io, j, e->bytes, e->sector * 512);
	if (!ret)
		ret = bch_jset_verify(j, e->bytes, &c->key, loc, &scratch) == JSET_OK &&
		      le64_to_cpu(j->seq) == e->seq && le64_to_cpu(j->last_seq) == e->last_seq
			? 0 : -EIO;
	printbuf_exit(&scratch);
	if (ret) {
		free(j);
		return ret;
	}
	e->data = j;
	return 0;
}

static void entry_duplicate(struct jread *r, struct journal_entry_h *e,
			    const struct journal_scan_entry *se)
{
	uint64_t bit = 1ULL << (se->loc.dev % 64);

	if (!e->data)
		entry_load(r->c, e);	/* (not read back: compared as different) */
	if (e->bytes != se->bytes || !e->data || memcmp(e->data, se->j, se->bytes)) {
		bch_jset_loc_to_text(r->err, se->loc);
		pr_buf(r->err, ": found duplicate but non identical journal entries (seq %" PRIu64
		       ", first copy on dev %u sector %" PRIu64 "), keeping the first\n",
		       e->seq, e->dev, e->sector);
		r->c->journal.nr_errors++;
	}
	if (e->dev_mask & bit) {
		bch_jset_loc_to_text(r->err, se->loc);
		pr_buf(r->err, ": duplicate journal entries on same device (seq %" PRIu64 ")\n", e->seq);
		r->c->journal.nr_errors++;
		return;
	}
	e->dev_mask |= bit;
	e->nr_devs++;
}

static int journal_offer(void *ctx, const struct journal_scan_entry *se)
{
	struct jread *r = ctx;
	struct journal_state *j = &r->c->journal;
	uint64_t seq, last_seq, newest_last;
	size_t pos;

	if (se->status == JSET_BAD) {
		jset_note_add(&r->bad, le64_to_cpu(se->j->seq), se->msg ?: "", se->loc);
		r->bad.v[r->bad.nr - 1].intact = se->intact;
		/*
		 * A new journal must start after it (else it is a torn tail
		 * again): unverified, so only a seq that may be one.
		 */
		if (le64_to_cpu(se->j->seq) < (1ULL << 48) && le64_to_cpu(se->j->seq) > j->max_seq_seen)
			j->max_seq_seen = le64_to_cpu(se->j->seq);
		return 0;
	}
	if (se->status != JSET_OK)
		return 0;

	seq = le64_to_cpu(se->j->seq);
	if (seq > j->max_seq_seen)
		j->max_seq_seen = seq;
	/*
	 * A bucket is written in order: a bad entry before this one in its
	 * bucket is older than it, whatever its (unverified) seq says; else
	 * a damaged seq would make it a torn tail that no repair removes.
	 */
	for (size_t i = 0; i < r->bad.nr; i++) {
		struct jset_note *b = &r->bad.v[i];

		if (b->loc.dev == se->loc.dev && b->loc.bucket == se->loc.bucket &&
		    b->loc.sector < se->loc.sector && b->seq >= seq && seq)
			b->seq = seq - 1;
	}
	if (se->msg)
		jset_note_add(&r->warn, seq, se->msg, se->loc);
	last_seq = le64_to_cpu(se->j->last_seq);
	newest_last = j->nr_entries ? j->entries[j->nr_entries - 1].last_seq : 0;
	if (seq < newest_last)
		return 0;

	entry_drop_front(j, last_seq);

	pos = j->nr_entries;
	while (pos && j->entries[pos - 1].seq > seq)
		pos--;
	if (pos && j->entries[pos - 1].seq == seq)
		entry_duplicate(r, &j->entries[pos - 1], se);
	else
		entry_insert(j, pos, se);
	return 0;
}

/* ---- after the scan (doc/format.md §6.6, doc/engine.md §2.4) ----------------------------- */

static struct jset_loc entry_loc(const struct journal_entry_h *e)
{
	return (struct jset_loc) { e->dev, e->bucket, e->sector };
}

static int take_roots(struct bch_fs *c, struct printbuf *err)
{
	struct journal_entry_h *n = &c->journal.entries[c->journal.nr_entries - 1];
	struct jset *j = n->data;
	struct jset_entry *e;
	bool seen[BCH_NR_BTREES] = { 0 };

	for_each_jset_entry(e, j) {
		struct btree_root_h *r;
		const struct bkey *k;

		if (e->type != BCH_JSET_ENTRY_btree_root || e->btree_id >= BCH_NR_BTREES ||
		    seen[e->btree_id])
			continue;
		seen[e->btree_id] = true;

		if (!le16_to_cpu(e->u64s)) {
			bch_jset_loc_to_text(err, entry_loc(n));
			pr_buf(err, ": entry seq %" PRIu64 ": invalid btree root pointer for btree %s\n",
			       n->seq, btree_str(e->btree_id));
			return -BCH_ERR_journal_invalid;
		}

		k = jset_entry_keys_start(e);
		r = &c->roots[e->btree_id];
		memset(r, 0, sizeof(*r));
		memcpy(r->buf, k, (size_t)k->u64s * 8);
		r->key = journal_bkey_ref((const struct bkey *)r->buf);
		r->level = e->level;
		r->present = true;
	}
	return 0;
}

static void add_blacklist(struct journal_state *j, uint64_t start, uint64_t end)
{
	j->blacklist = xrealloc(j->blacklist, (j->nr_blacklist + 1) * sizeof(*j->blacklist));
	j->blacklist[j->nr_blacklist].start = start;
	j->blacklist[j->nr_blacklist].end = end;
	j->nr_blacklist++;
}

static void collect_blacklists(struct journal_state *j)
{
	size_t i;

	for (i = 0; i < j->nr_entries; i++) {
		struct jset_entry *e;

		for_each_jset_entry(e, (struct jset *)j->entries[i].data) {
			if (e->type == BCH_JSET_ENTRY_blacklist) {
				const struct jset_entry_blacklist *bl = (const void *)e;

				add_blacklist(j, le64_to_cpu(bl->seq), le64_to_cpu(bl->seq));
			} else if (e->type == BCH_JSET_ENTRY_blacklist_v2) {
				const struct jset_entry_blacklist_v2 *bl = (const void *)e;

				add_blacklist(j, le64_to_cpu(bl->start), le64_to_cpu(bl->end));
			}
		}
	}
}

static void check_missing(struct bch_fs *c, struct printbuf *err)
{
	struct journal_state *j = &c->journal;
	uint64_t cur = j->last_seq;
	size_t i;

	for (i = 0; i < j->nr_entries; i++) {
		uint64_t seq = j->entries[i].seq;

		while (cur < seq && bch_journal_seq_blacklisted(j, cur))
			cur++;
		if (bch_journal_seq_blacklisted(j, seq)) {
			pr_buf(err, "journal: found blacklisted journal entry %" PRIu64 " (replayed anyway)\n", seq);
			j->nr_errors++;
		}
		if (seq != cur) {
			pr_buf(err, "journal: entries %" PRIu64 "-%" PRIu64 " missing! (replaying %" PRIu64
			       "-%" PRIu64 " with the hole)\n", cur, seq - 1, j->last_seq, j->seq);
			j->nr_errors++;
		}
		cur = seq + 1;
	}
}

int bch_journal_key_cmp(const struct journal_key *l, const struct journal_key *r)
{
	int c;

	if (l->btree_id != r->btree_id)
		return l->btree_id < r->btree_id ? -1 : 1;
	if (l->level != r->level)
		return l->level < r->level ? -1 : 1;
	c = bpos_cmp(l->k.k.p, r->k.k.p);
	if (c)
		return c;
	if (l->seq != r->seq)
		return l->seq < r->seq ? -1 : 1;
	if (l->idx != r->idx)
		return l->idx < r->idx ? -1 : 1;
	return 0;
}

static int journal_key_cmp(const void *l, const void *r)
{
	return bch_journal_key_cmp(l, r);
}

static void collect_keys(struct journal_state *j)
{
	size_t i, nr = 0, alloc = 0;

	for (i = 0; i < j->nr_entries; i++) {
		struct journal_entry_h *je = &j->entries[i];
		struct jset_entry *e;
		unsigned idx = 0;

		for_each_jset_entry(e, (struct jset *)je->data) {
			struct bkey *k;

			if (e->type != BCH_JSET_ENTRY_btree_keys)
				continue;
			for_each_jset_entry_key(k, e) {
				if (nr == alloc) {
					alloc = alloc ? alloc * 2 : 64;
					j->keys = xrealloc(j->keys, alloc * sizeof(*j->keys));
				}
				j->keys[nr] = (struct journal_key) {
					.btree_id	= e->btree_id,
					.level		= e->level,
					.k		= journal_bkey_ref(k),
					.seq		= je->seq,
					.idx		= idx++,
				};
				nr++;
			}
		}
	}
	j->nr_keys = nr;
}

/*
 * The keys to replay, oldest first (entries by seq, keys in entry order),
 * laid over the btrees in memory (overlay.h); then sorted for the record.
 * Interior-node keys (level > 0) are not replayed: no writer of this
 * format journals them.
 */
static void load_overlay(struct bch_fs *c)
{
	struct journal_state *j = &c->journal;

	bch_overlay_clear(&c->overlay);
	for (size_t i = 0; i < j->nr_keys; i++)
		if (!j->keys[i].level)
			bch_overlay_insert(&c->overlay, j->keys[i].btree_id, &j->keys[i].k);
	if (j->nr_keys)
		qsort(j->keys, j->nr_keys, sizeof(*j->keys), journal_key_cmp);
}

static void journal_reset(struct bch_fs *c)
{
	bch_journal_free(&c->journal);
	bch_overlay_clear(&c->overlay);
}

void bch_journal_start_fresh(struct journal_state *j, uint64_t seq)
{
	struct journal_entry_h *e;
	struct jset *js;

	for (size_t i = 0; i < j->nr_entries; i++)
		free(j->entries[i].data);
	j->entries = xrealloc(j->entries, sizeof(*j->entries));
	j->nr_entries = 1;
	e = &j->entries[0];
	memset(e, 0, sizeof(*e));
	js = xcalloc(1, sizeof(*js));
	js->seq = cpu_to_le64(seq);
	js->version = cpu_to_le32(BCH_JSET_VERSION);
	js->last_seq = cpu_to_le64(seq);
	js->read_clock = cpu_to_le16(j->read_clock);
	js->write_clock = cpu_to_le16(j->write_clock);
	e->seq = seq;
	e->last_seq = seq;
	e->data = js;
	e->bytes = sizeof(*js);
	j->seq = seq;
	/* the first entry written needs nothing older (none is on disk) */
	j->last_seq = seq + 1;
}

/*
 * fsck, no usable entry: no roots, a journal that starts afresh after
 * every seq seen (the node scan raises it past the journal seqs of the
 * nodes it finds). Messages and errors as for any read.
 */
static int journal_lost(struct bch_fs *c, struct printbuf *err)
{
	struct journal_state *j = &c->journal;

	pr_str(err, "journal: no valid journal entries found on any device: the btree roots are lost "
	       "(fsck -y recovers them by scanning the devices for btree nodes, and starts a new journal)\n");
	j->nr_errors++;
	for (unsigned i = 0; i < BCH_NR_BTREES; i++)
		c->roots[i].present = false;
	free(j->keys);
	j->keys = NULL;
	j->nr_keys = 0;
	j->lost = true;
	j->read_clock = j->write_clock = 1;
	bch_journal_start_fresh(j, j->max_seq_seen);
	c->nr_errors += j->nr_errors;
	return 0;
}

void bch_journal_keys_add(struct journal_state *j, unsigned btree_id,
			  const struct bkey_ref *keys, size_t nr)
{
	struct journal_key *add, *merged;
	size_t bytes = 0, i, a, b, o;
	uint8_t *mem, *p;

	if (!nr)
		return;
	add = xcalloc(nr, sizeof(*add));
	for (i = 0; i < nr; i++)
		bytes += keys[i].v_bytes;
	p = mem = xmalloc(bytes ?: 1);
	j->added = xrealloc(j->added, (j->nr_added + 1) * sizeof(*j->added));
	j->added[j->nr_added++] = mem;

	for (i = 0; i < nr; i++) {
		add[i] = (struct journal_key) {
			.btree_id	= btree_id,
			.k		= keys[i],
			.seq		= 0,	/* older than anything the journal says */
			.idx		= (unsigned)i,
		};
		add[i].k.v = NULL;
		if (keys[i].v_bytes) {
			memcpy(p, keys[i].v, keys[i].v_bytes);
			add[i].k.v = p;
			p += keys[i].v_bytes;
		}
	}
	qsort(add, nr, sizeof(*add), journal_key_cmp);

	merged = xmalloc((j->nr_keys + nr) * sizeof(*merged));
	for (a = b = o = 0; a < j->nr_keys || b < nr;)
		if (b == nr || (a < j->nr_keys && bch_journal_key_cmp(&j->keys[a], &add[b]) <= 0))
			merged[o++] = j->keys[a++];
		else
			merged[o++] = add[b++];
	free(j->keys);
	free(add);
	j->keys = merged;
	j->nr_keys = o;
}

int bch_journal_read(struct bch_fs *c, struct printbuf *err)
{
	struct journal_state *j = &c->journal;
	struct jread r = { .c = c, .err = err };
	struct journal_entry_h *newest;
	size_t i;
	int ret;

	journal_reset(c);
	if (!c->sb)
		return -EINVAL;
	j->read_done = true;
	if (!BCH_SB_INITIALIZED(c->sb))
		return 0;	/* new filesystem: no journal yet (doc/engine.md §13) */

	ret = journal_scan(c, journal_offer, &r, err, true);
	report_bad_entries(&r);
	if (ret)
		goto err;
	for (i = 0; i < j->nr_entries; i++)
		if (!j->entries[i].data && (ret = entry_load(c, &j->entries[i]))) {
			bch_jset_loc_to_text(err, entry_loc(&j->entries[i]));
			pr_buf(err, ": entry seq %" PRIu64 " reads back different (the device is being written?)\n",
			       j->entries[i].seq);
			goto err;
		}

	for (i = 0; i < j->nr_entries; i++)
		j->nr_errors += bch_jset_validate_entries(j->entries[i].data,
							  entry_loc(&j->entries[i]), err);

	while (1) {
		if (!j->nr_entries) {
			if (c->opts.fsck)
				return journal_lost(c, err);
			pr_str(err, "journal: no valid journal entries found on any device\n");
			ret = -BCH_ERR_journal_empty;
			goto err;
		}
		newest = &j->entries[j->nr_entries - 1];
		j->seq = newest->seq;
		j->last_seq = newest->last_seq;
		j->read_clock = le16_to_cpu(((struct jset *)newest->data)->read_clock);
		j->write_clock = le16_to_cpu(((struct jset *)newest->data)->write_clock);

		ret = take_roots(c, err);
		if (!ret || !c->opts.fsck)
			break;
		/* fsck: the entry before it, if any, gives the roots */
		pr_buf(err, "journal: entry seq %" PRIu64 " not replayed (its btree roots cannot be used)%s\n",
		       newest->seq, j->nr_entries > 1 ? "" : ": no other entry");
		j->nr_errors++;
		if (newest->seq > r.dropped_end)
			r.dropped_end = newest->seq;
		for (i = 0; i < BCH_NR_BTREES; i++)
			c->roots[i].present = false;
		free(newest->data);
		j->nr_entries--;
	}
	if (ret)
		goto err;
	collect_blacklists(j);
	/*
	 * fsck: intact entries after the newest usable one were not replayed;
	 * their seqs are blacklisted (the btree node bsets written with them
	 * are ignored, the next entry written comes after them).
	 */
	if (r.dropped_end > j->seq)
		add_blacklist(j, j->seq + 1, r.dropped_end);
	check_missing(c, err);
	collect_keys(j);
	load_overlay(c);

	if (BCH_SB_CLEAN(c->sb) && (j->nr_keys || j->seq - j->last_seq + 1 > 1)) {
		pr_buf(err, "journal: filesystem marked clean but journal not empty (%zu keys in %" PRIu64 " entries)\n",
		       j->nr_keys, j->seq - j->last_seq + 1);
		j->nr_errors++;
	}
	c->nr_errors += j->nr_errors;
	return 0;
err:
	c->nr_errors += j->nr_errors;
	for (i = 0; i < BCH_NR_BTREES; i++)
		c->roots[i].present = false;
	journal_reset(c);
	j->read_done = true;
	return ret;
}

void bch_journal_read_done_to_text(struct printbuf *out, const struct journal_state *j)
{
	pr_buf(out, "journal read done, %zu keys in %zu entries, seq %" PRIu64,
	       j->nr_keys, j->nr_entries, j->seq);
}

void bch_journal_free(struct journal_state *j)
{
	size_t i;

	for (i = 0; i < j->nr_entries; i++)
		free(j->entries[i].data);
	free(j->entries);
	free(j->keys);
	free(j->blacklist);
	for (i = 0; i < j->nr_added; i++)
		free(j->added[i]);
	free(j->added);
	for (i = 0; i < JOURNAL_MAX_DEVS; i++)
		free(j->devs[i].bucket_seq);
	memset(j, 0, sizeof(*j));
}

bool bch_journal_seq_blacklisted(const struct journal_state *j, uint64_t seq)
{
	size_t i;

	for (i = 0; i < j->nr_blacklist; i++)
		if (seq >= j->blacklist[i].start && seq <= j->blacklist[i].end)
			return true;
	return false;
}
