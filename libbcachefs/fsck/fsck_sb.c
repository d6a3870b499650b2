// SPDX-License-Identifier: GPL-2.0
/*
 * fsck pass: the superblock copies (doc/format.md §2.12, §2.14).
 *
 * The open path (fs.c) read one good copy per device: the primary, or the
 * first backup that reads and validates when the primary does not (that
 * is reported by the open as sb_primary_bad). This pass reads every other
 * copy the device's layout lists and checks that it
 *   - reads: magic, version, size and checksum (bch_sb_check_copy());
 *   - validates (bch_sb_validate());
 *   - holds the same superblock as the copy in use: the copies of one
 *     device differ only in `offset` and `csum` (doc/format.md §2.14; every
 *     write by format or a mounted filesystem writes them all alike).
 * A copy that fails is reported as sb_backup_bad with its device and
 * sector. A valid copy with an older seq is a superblock write cut short
 * between copies (a crash): not a problem, only refreshed when fsck can
 * write.
 *
 * Repair: every copy is rewritten from the superblock in use. That is
 * what a checkpoint of the update engine does (bch_fs_rw_want_checkpoint():
 * the engine's superblock writer writes every copy of every member's
 * layout), the same repair as for the problems found at open.
 */
#include "fsck/fsck_sb.h"

#include "btree/btree_update.h"
#include "dev/dev.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fsck/problems.h"
#include "dev/super.h"
#include "util/util.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

/* The fixed fields of struct bch_sb that must match between copies. */
static const struct {
	const char	*name;
	size_t		off, len;
} sb_fixed_fields[] = {
#define F(_name, _field) { _name, offsetof(struct bch_sb, _field), sizeof(((struct bch_sb *)NULL)->_field) }
	F("version",		version),
	F("magic",		magic),
	F("uuid",		uuid),
	F("user_uuid",		user_uuid),
	F("label",		label),
	F("seq",		seq),
	F("block_size",		block_size),
	F("dev_idx",		dev_idx),
	F("nr_devices",		nr_devices),
	F("u64s",		u64s),
	F("time_base_lo",	time_base_lo),
	F("time_base_hi",	time_base_hi),
	F("time_precision",	time_precision),
	F("flags",		flags),
	F("features",		features),
	F("compat",		compat),
	F("layout",		layout),
#undef F
};

/*
 * What differs between copy @b and the copy in use @a (both passed
 * bch_sb_check_copy()), ignoring offset and csum: a list of field names
 * into @out. False when they are the same.
 */
static bool sb_copies_differ(const struct bch_sb *a, const struct bch_sb *b, struct printbuf *out)
{
	size_t abytes = bch_sb_bytes(a), bbytes = bch_sb_bytes(b);
	unsigned nr = 0;

	for (unsigned i = 0; i < ARRAY_SIZE(sb_fixed_fields); i++)
		if (memcmp((const uint8_t *)a + sb_fixed_fields[i].off,
			   (const uint8_t *)b + sb_fixed_fields[i].off, sb_fixed_fields[i].len))
			pr_buf(out, "%s%s", nr++ ? ", " : "", sb_fixed_fields[i].name);

	if (abytes == bbytes &&
	    !memcmp((const uint8_t *)a + BCH_SB_FIXED_BYTES, (const uint8_t *)b + BCH_SB_FIXED_BYTES,
		    abytes - BCH_SB_FIXED_BYTES))
		return nr != 0;

	/* the variable fields: name those that differ (or are only in one copy) */
	if (bch_sb_fields_ok(a) && bch_sb_fields_ok(b)) {
		unsigned named = 0;

		for (unsigned t = 0; t < BCH_SB_FIELD_NR; t++) {
			const struct bch_sb_field *fa = bch_sb_field_find(a, t);
			const struct bch_sb_field *fb = bch_sb_field_find(b, t);
			const char *name = bch_sb_field_name(t);

			if (!fa && !fb)
				continue;
			if (fa && fb && bch_sb_field_bytes(fa) == bch_sb_field_bytes(fb) &&
			    !memcmp(fa, fb, bch_sb_field_bytes(fa)))
				continue;
			pr_buf(out, "%sfield %s", nr++ ? ", " : "", name ?: "unknown");
			named++;
		}
		if (named)
			return true;
	}
	pr_buf(out, "%svariable fields", nr++ ? ", " : "");
	return true;
}

static int check_dev_copies(struct bch_fs *c, struct fsck_state *s, struct bch_member_dev *ca)
{
	struct bch_sb_handle used = { 0 };
	const struct bch_sb_layout *l;
	struct printbuf why = PRINTBUF;
	unsigned nr_bad = 0, stale = 0;
	int ret;

	/* the copy in use as it is on disk (not upgraded in memory) */
	ret = bch_sb_read_at(ca->io, ca->sb_offset, &used, &why);
	if (ret) {
		printbuf_exit(&why);
		return 0;	/* cannot be: it was read at open */
	}
	l = &used.sb->layout;

	for (unsigned i = 0; i < l->nr_superblocks && i < BCH_SB_LAYOUT_MAX_SB; i++) {
		uint64_t off = le64_to_cpu(l->sb_offset[i]);
		struct bch_sb_handle h = { 0 };
		const char *what = i ? "backup superblock" : "superblock";

		if (off == ca->sb_offset)
			continue;
		/* a primary that could not be used: the open reported it (sb_primary_bad) */
		if (i == 0 && ca->sb_offset != le64_to_cpu(l->sb_offset[0]))
			continue;

		printbuf_reset(&why);
		ret = bch_sb_read_at(ca->io, off, &h, &why);
		if (ret) {
			nr_bad += fsck_fix(s, PROB_sb_backup_bad, "%s: %s at sector %" PRIu64 ": %s",
					   ca->io->path, what, off, printbuf_str(&why));
			continue;
		}
		if (bch_sb_validate(h.sb, &why)) {
			nr_bad += fsck_fix(s, PROB_sb_backup_bad, "%s: %s at sector %" PRIu64 ": %s",
					   ca->io->path, what, off, printbuf_str(&why));
		} else if (le64_to_cpu(h.sb->seq) < le64_to_cpu(used.sb->seq)) {
			/*
			 * An older copy: a superblock write that stopped between
			 * copies (a crash). Not a problem (the copies in use are
			 * consistent); refreshed when the filesystem is written.
			 */
			stale++;
		} else if (sb_copies_differ(used.sb, h.sb, &why)) {
			nr_bad += fsck_fix(s, PROB_sb_backup_bad,
					   "%s: %s at sector %" PRIu64 " differs from the superblock in use (sector %" PRIu64 "): %s",
					   ca->io->path, what, off, ca->sb_offset, printbuf_str(&why));
		}
		bch_sb_handle_free(&h);
	}

	if (stale && !nr_bad && bch_fs_rw(c))
		bch_fs_rw_want_checkpoint(c);
	/* the repair: a checkpoint writes every copy from the superblock in use */
	if (nr_bad) {
		if (bch_fs_rw(c))
			bch_fs_rw_want_checkpoint(c);
		else
			for (; nr_bad; nr_bad--)
				fsck_fix_failed(s, PROB_sb_backup_bad, "the filesystem cannot be written");
	}
	bch_sb_handle_free(&used);
	printbuf_exit(&why);
	return 0;
}

int bch_fsck_sb(struct bch_fs *c, struct fsck_state *s)
{
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *ca = c->devs[i];

		if (ca && ca->io && ca->sb)
			check_dev_copies(c, s, ca);
	}
	return 0;
}
