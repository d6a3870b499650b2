// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: one journal entry (jset). Input: flags byte (FUZZ_CSUM_ANY,
 * JOURNAL_KEY: the key below is loaded), the journal magic the reader
 * expects (le64), the encryption key (32 bytes: seeds of encrypted
 * filesystems carry theirs), then the bytes from the jset to the end of
 * its bucket.
 *
 * The three checks of the read path run in order, as bch_journal_read()
 * runs them: bch_jset_check_header(), bch_jset_verify() (checksum or MAC,
 * version, decryption), bch_jset_validate_entries() (records repaired in
 * place). What they let through is then walked as list_journal walks it:
 * every record, every key validated and printed, root pointers decoded.
 */
#include <stdlib.h>

#include "fuzz.h"

#include "bkey/bkey_types.h"
#include "journal/journal.h"
#include "btree/node.h"
#include "util/util.h"

#define JOURNAL_KEY	(1U << 1)

static void walk(struct jset *j)
{
	struct printbuf out = PRINTBUF;
	struct jset_entry *e;
	struct bkey *k;

	for_each_jset_entry(e, j) {
		const char *type = jset_entry_type_str(e->type);

		if (e->type != BCH_JSET_ENTRY_btree_keys &&
		    e->type != BCH_JSET_ENTRY_btree_root)
			continue;
		pr_str(&out, type ? type : "?");
		for_each_jset_entry_key(k, e) {
			struct bkey_ref r = journal_bkey_ref(k);
			unsigned level = e->type == BCH_JSET_ENTRY_btree_root ? 1 : e->level;

			bch_bkey_validate(e->btree_id, level, &r, &out);
			bch_bkey_to_text(&out, e->btree_id, level, &r, NULL);
			if (level) {
				struct btree_ptr_h ptrs[4];

				btree_ptr_decode(&r, ptrs, 4);
			}
			printbuf_reset(&out);
		}
	}
	printbuf_exit(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct jset_loc loc = { .dev = 0, .bucket = 1, .sector = 8 };
	struct printbuf err = PRINTBUF;
	struct bch_key key;
	unsigned flags = fz_u8(&in);
	uint64_t magic = fz_u64(&in);
	size_t len, bytes;
	const uint8_t *p = fz_bytes(&in, sizeof(key), &len);
	struct jset *j;

	fuzz_csum_any(flags & FUZZ_CSUM_ANY);
	memset(&key, 0, sizeof(key));
	memcpy(&key, p, len);
	p = fz_bytes(&in, SIZE_MAX, &len);
	/* exactly the bytes given, 8-aligned as a jset in a read buffer is */
	j = xmalloc(len ? len : 1);
	memcpy(j, p, len);

	if (bch_jset_check_header(j, len, magic, flags & JOURNAL_KEY, loc, &err,
				  &bytes) == JSET_OK &&
	    bch_jset_verify(j, bytes, flags & JOURNAL_KEY ? &key : NULL, loc, &err) == JSET_OK) {
		bch_jset_validate_entries(j, loc, &err);
		walk(j);
	}
	free(j);
	printbuf_exit(&err);
	return 0;
}
