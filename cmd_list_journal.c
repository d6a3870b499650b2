// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs list_journal: print the journal entries and their keys.
 *
 * Default: the entries kept for replay (the newest entry's last_seq to its
 * seq), as the mount uses them. -a: every jset found while walking the
 * journal buckets, in bucket order, including older, stale and corrupt
 * ones (the layout of the header lines follows the dumps of the 2018
 * golden corpus, with the device in front).
 *
 * Exit status: 0 when the journal could be read (problems found on the way,
 * such as a corrupt entry that was skipped, are reported on stderr); 1 when
 * it could not (no valid entry, open failed).
 */
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/format/format.h"
#include "libbcachefs/bkey/bkey.h"
#include "libbcachefs/bkey/bkey_types.h"
#include "libbcachefs/codec/checksum.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/fs/fs.h"
#include "libbcachefs/journal/journal.h"
#include "libbcachefs/util/util.h"

struct lj {
	struct bch_fs	*c;
	bool		json;
	struct json	js;
	struct printbuf	out;
	struct printbuf	err;
};

static void flush_out(struct lj *l)
{
	fputs(printbuf_str(&l->out), stdout);
	printbuf_reset(&l->out);
	if (l->err.pos) {
		fflush(stdout);
		fputs(printbuf_str(&l->err), stderr);
		printbuf_reset(&l->err);
	}
}

/* ---- keys ---- */

/* Keys of btree_root records are btree pointers whatever the root's level. */
static unsigned key_level(const struct jset_entry *e)
{
	return e->type == BCH_JSET_ENTRY_btree_root ? 1 : e->level;
}

static void key_json(struct lj *l, const struct jset_entry *e, const struct bkey *bk)
{
	struct bkey_ref k = journal_bkey_ref(bk);

	bch_bkey_to_json(&l->js, e->btree_id, key_level(e), &k, NULL);
}

/* ---- records ---- */

static void record_text(struct lj *l, const struct jset_entry *e)
{
	struct printbuf *out = &l->out;
	const struct bkey *k;

	pr_buf(out, "   entry type %u btree_id %u level %u u64s %u\n",
	       e->type, e->btree_id, e->level, le16_to_cpu(e->u64s));

	switch (e->type) {
	case BCH_JSET_ENTRY_btree_keys:
	case BCH_JSET_ENTRY_btree_root:
		for_each_jset_entry_key(k, e) {
			struct bkey_ref r = journal_bkey_ref(k);

			pr_str(out, "      ");
			bch_bkey_to_text(out, e->btree_id, key_level(e), &r, NULL);
			pr_char(out, '\n');
		}
		break;
	case BCH_JSET_ENTRY_blacklist: {
		const struct jset_entry_blacklist *bl = (const void *)e;

		pr_buf(out, "      blacklist %" PRIu64 "\n", le64_to_cpu(bl->seq));
		break;
	}
	case BCH_JSET_ENTRY_blacklist_v2: {
		const struct jset_entry_blacklist_v2 *bl = (const void *)e;

		pr_buf(out, "      blacklist %" PRIu64 "-%" PRIu64 "\n",
		       le64_to_cpu(bl->start), le64_to_cpu(bl->end));
		break;
	}
	}
}

static void record_json(struct lj *l, const struct jset_entry *e)
{
	const char *name = jset_entry_type_str(e->type);
	const struct bkey *k;

	json_obj_begin(&l->js, NULL);
	json_u64(&l->js, "type", e->type);
	json_str(&l->js, "type_name", name ? name : "unknown");
	json_u64(&l->js, "btree_id", e->btree_id);
	json_str(&l->js, "btree", bch_btree_id_str(e->btree_id));
	json_u64(&l->js, "level", e->level);
	json_u64(&l->js, "u64s", le16_to_cpu(e->u64s));

	if (e->type == BCH_JSET_ENTRY_btree_keys ||
	    e->type == BCH_JSET_ENTRY_btree_root) {
		json_arr_begin(&l->js, "keys");
		for_each_jset_entry_key(k, e)
			key_json(l, e, k);
		json_arr_end(&l->js);
	} else if (e->type == BCH_JSET_ENTRY_blacklist) {
		const struct jset_entry_blacklist *bl = (const void *)e;

		json_u64(&l->js, "start", le64_to_cpu(bl->seq));
		json_u64(&l->js, "end", le64_to_cpu(bl->seq));
	} else if (e->type == BCH_JSET_ENTRY_blacklist_v2) {
		const struct jset_entry_blacklist_v2 *bl = (const void *)e;

		json_u64(&l->js, "start", le64_to_cpu(bl->start));
		json_u64(&l->js, "end", le64_to_cpu(bl->end));
	}
	json_obj_end(&l->js);
}

/* ---- entries ---- */

static void header_text(struct printbuf *out, const struct jset *j, struct jset_loc loc)
{
	struct bch_csum_val csum = bch_csum_from_bytes(&j->csum);

	pr_buf(out, "dev %u bucket %" PRIu64 " sector %" PRIu64 ": jset magic 0x%016" PRIx64
	       " seq %" PRIu64 " version %u flags 0x%x (csum_type %u) u64s %u"
	       " read_clock %u write_clock %u last_seq %" PRIu64 " csum %016" PRIx64 "%016" PRIx64,
	       loc.dev, loc.bucket, loc.sector, le64_to_cpu(j->magic),
	       le64_to_cpu(j->seq), le32_to_cpu(j->version), le32_to_cpu(j->flags),
	       (unsigned)JSET_CSUM_TYPE(j), le32_to_cpu(j->u64s),
	       le16_to_cpu(j->read_clock), le16_to_cpu(j->write_clock),
	       le64_to_cpu(j->last_seq), csum.hi, csum.lo);
}

static void header_json(struct lj *l, const struct jset *j, struct jset_loc loc)
{
	struct bch_csum_val csum = bch_csum_from_bytes(&j->csum);
	char hex[33];

	snprintf(hex, sizeof(hex), "%016" PRIx64 "%016" PRIx64, csum.hi, csum.lo);
	json_u64(&l->js, "dev", loc.dev);
	json_u64(&l->js, "bucket", loc.bucket);
	json_u64(&l->js, "sector", loc.sector);
	json_u64(&l->js, "magic", le64_to_cpu(j->magic));
	json_u64(&l->js, "seq", le64_to_cpu(j->seq));
	json_u64(&l->js, "last_seq", le64_to_cpu(j->last_seq));
	json_u64(&l->js, "version", le32_to_cpu(j->version));
	json_u64(&l->js, "flags", le32_to_cpu(j->flags));
	json_u64(&l->js, "csum_type", JSET_CSUM_TYPE(j));
	json_u64(&l->js, "u64s", le32_to_cpu(j->u64s));
	json_u64(&l->js, "read_clock", le16_to_cpu(j->read_clock));
	json_u64(&l->js, "write_clock", le16_to_cpu(j->write_clock));
	json_str(&l->js, "csum", hex);
}

static void devs_json(struct lj *l, uint64_t mask)
{
	unsigned i;

	json_arr_begin(&l->js, "devs");
	for (i = 0; i < 64; i++)
		if (mask & (1ULL << i))
			json_u64(&l->js, NULL, i);
	json_arr_end(&l->js);
}

/* One entry; @status JSET_OK for the replay list. */
static void print_jset(struct lj *l, const struct jset *j, struct jset_loc loc,
		       enum jset_status status, uint64_t dev_mask)
{
	const struct jset_entry *e;
	bool records = status == JSET_OK || status == JSET_STALE;

	if (l->json) {
		json_obj_begin(&l->js, NULL);
		header_json(l, j, loc);
		json_str(&l->js, "status", jset_status_str(status));
		devs_json(l, dev_mask);
		json_arr_begin(&l->js, "records");
		if (records)
			for_each_jset_entry(e, j)
				record_json(l, e);
		json_arr_end(&l->js);
		json_obj_end(&l->js);
		return;
	}

	header_text(&l->out, j, loc);
	if (status == JSET_BAD)
		pr_str(&l->out, " BAD (skipped)");
	else if (status == JSET_STALE)
		pr_str(&l->out, " STALE (older than the previous entry of this bucket: end of bucket)");
	pr_char(&l->out, '\n');
	if (dev_mask & (dev_mask - 1)) {
		unsigned i;

		pr_str(&l->out, "   copies on devs");
		for (i = 0; i < 64; i++)
			if (dev_mask & (1ULL << i))
				pr_buf(&l->out, " %u", i);
		pr_char(&l->out, '\n');
	}
	if (records)
		for_each_jset_entry(e, j)
			record_text(l, e);
}

static int print_scanned(void *ctx, const struct journal_scan_entry *se)
{
	struct lj *l = ctx;

	if (se->status != JSET_BAD)
		bch_jset_validate_entries(se->j, se->loc, &l->err);
	print_jset(l, se->j, se->loc, se->status, 1ULL << (se->loc.dev % 64));
	if (!l->json)
		flush_out(l);
	return 0;
}

static int list_all(struct lj *l)
{
	int ret;

	if (l->json)
		json_arr_begin(&l->js, "entries");
	ret = bch_journal_scan(l->c, print_scanned, l, &l->err);
	if (l->json)
		json_arr_end(&l->js);
	return ret;
}

static int list_replay(struct lj *l)
{
	struct journal_state *j = &l->c->journal;
	size_t i;
	int ret;

	ret = bch_journal_read(l->c, &l->err);
	if (ret)
		return ret;

	if (l->json)
		json_arr_begin(&l->js, "entries");
	for (i = 0; i < j->nr_entries; i++) {
		struct journal_entry_h *e = &j->entries[i];
		struct jset_loc loc = { e->dev, e->bucket, e->sector };

		print_jset(l, e->data, loc, JSET_OK, e->dev_mask);
	}
	if (l->json) {
		json_arr_end(&l->js);
		json_u64(&l->js, "seq", j->seq);
		json_u64(&l->js, "last_seq", j->last_seq);
		json_u64(&l->js, "nr_keys", j->nr_keys);
	} else if (j->nr_entries) {
		bch_journal_read_done_to_text(&l->out, j);
		pr_char(&l->out, '\n');
	} else {
		pr_str(&l->out, "journal empty (filesystem not initialized)\n");
	}
	return 0;
}

struct lj_args {
	bool			all, json;
	struct bch_fs_opts	fo;
};

static const struct cmd_opt lj_opts[] = {
	CMD_OPT_BOOL('a', "all", "every jset found in the journal buckets, in bucket\n"
		     "order: also entries older than the replay range,\n"
		     "stale and corrupt ones (default: the entries that\n"
		     "would be replayed)", struct lj_args, all),
	CMD_OPT_DEGRADED("list even when member devices are missing (each is\n"
			 "named; their journal is not read)", struct lj_args, fo),
	CMD_OPT_BOOL(0, "json", "JSON output", struct lj_args, json),
	CMD_OPT_PASSPHRASE_FILE(struct lj_args, fo),
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def lj_def = {
	.name		= "list_journal",
	.args		= "DEVICE...",
	.about		= "List the entries of the journal and their keys.",
	.opts		= lj_opts,
	.footer		= "Exit status: 0 if the journal was read (problems found are reported on\n"
			  "stderr), 1 if it could not be read.\n",
	.min_args	= 1,
	.no_args_msg	= "no device given",
	.help_col	= 28,
};

int cmd_list_journal(int argc, char *argv[])
{
	struct lj_args a = {
		.fo = {
			.read_only	= true,
			.no_journal	= true,
			.ask_passphrase	= true,	/* on a terminal */
		},
	};
	struct bch_fs_opts *opts = &a.fo;
	struct lj l = { .out = PRINTBUF, .err = PRINTBUF };
	int i = cmd_parse(&lj_def, &a, argc, argv), ret;
	char **devs = argv + i;
	unsigned nr = (unsigned)(argc - i);

	l.json = a.json;
	ret = bch_fs_open(devs, nr, opts, &l.c, &l.err);
	if (ret) {
		cmd_open_failed(devs[0], ret, &l.err, cmd_missing_hint(devs, nr, opts, ret, &l.err));
		printbuf_exit(&l.err);
		return EXIT_FAIL;
	}
	cmd_note_missing(l.c);

	if (l.json) {
		json_init(&l.js, &l.out, true);
		json_obj_begin(&l.js, NULL);
	}
	ret = a.all ? list_all(&l) : list_replay(&l);
	if (l.json) {
		json_obj_end(&l.js);
		pr_char(&l.out, '\n');
	}
	flush_out(&l);
	if (ret)
		fprintf(stderr, "bcachefs list_journal: error reading the journal: %s\n",
			bch_err_str(ret));

	bch_fs_close(l.c);
	printbuf_exit(&l.out);
	printbuf_exit(&l.err);
	return ret ? EXIT_FAIL : EXIT_OK;
}
