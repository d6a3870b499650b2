// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: one superblock copy. Input: flags byte, then the copy as it
 * is read at sector 8 (752 bytes of fixed part, then the fields).
 *
 * The copy is checked (magic, version, size, checksum), validated field by
 * field (members, journal, crypt, replicas, quota, disk groups), printed
 * as show-super text and JSON with every field and the layout, walked with
 * every field helper, then upgraded in memory and validated again.
 */
#include <stdlib.h>

#include "fuzz.h"

#include "dev/super.h"
#include "dev/sb_print.h"
#include "util/util.h"

static void helpers(const struct bch_sb *sb)
{
	struct bch_replicas_iter it;
	struct printbuf out = PRINTBUF;
	char label[33];
	size_t i, nr;

	for (unsigned d = 0; d < sb->nr_devices + 1U && d < 256; d++) {
		const struct bch_member *m = bch_sb_member(sb, d);

		bch_sb_member_exists(sb, d);
		bch_sb_dev_has_data(sb, d);
		if (m)
			bch_sb_member_find(sb, m->uuid.b);
	}
	bch_sb_nr_live_members(sb);
	nr = bch_sb_journal_nr_buckets(sb);
	for (i = 0; i < nr && i < 4096; i++)
		bch_sb_journal_bucket(sb, i);
	bch_sb_replicas_iter_init(&it, sb);
	for (i = 0; i < 4096 && bch_sb_replicas_next(&it); i++)
		;
	for (unsigned g = 0; g < 64; g++) {
		if (bch_sb_disk_group_label(sb, g, label))
			break;
		bch_sb_disk_group_path(&out, sb, g);
	}
	bch_sb_range_in_sb_area(sb, 0, 16);
	bch_sb_range_in_sb_area(sb, le64_to_cpu(sb->offset), le64_to_cpu(sb->offset) + 1);
	printbuf_exit(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct printbuf err = PRINTBUF, out = PRINTBUF;
	unsigned flags = fz_u8(&in);
	struct bch_sb *sb;
	size_t len;
	const uint8_t *p = fz_bytes(&in, SIZE_MAX, &len);

	fuzz_csum_any(flags & FUZZ_CSUM_ANY);
	/* exactly the bytes given: reads past them are ASan reports */
	sb = xmalloc(len ? len : 1);
	memcpy(sb, p, len);

	if (len < BCH_SB_FIXED_BYTES)
		goto out;
	bch_sb_layout_validate(&sb->layout, &err);
	if (bch_sb_check_copy(sb, len, &err))
		goto out;

	if (!bch_sb_validate(sb, &err)) {
		helpers(sb);
		bch_sb_upgrade_in_memory(sb);
		bch_sb_validate(sb, &err);
	}
	/* show-super prints copies that passed the check, valid or not */
	bch_sb_to_text(&out, sb, BCH_SB_PRINT_ALL_FIELDS | BCH_SB_PRINT_LAYOUT);
	printbuf_reset(&out);
	bch_sb_to_json(&out, sb, BCH_SB_PRINT_ALL_FIELDS | BCH_SB_PRINT_LAYOUT, true);
out:
	free(sb);
	printbuf_exit(&out);
	printbuf_exit(&err);
	return 0;
}
