// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs list: print the keys (or the nodes) of one btree of an
 * unmounted filesystem (doc/tools.md §4). The filesystem is opened read-only;
 * journal keys not yet replayed are shown over the btree keys, as the
 * 2018 tool did after its in-memory replay. Key lines are the 2018 lines.
 */
#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/bkey/bkey.h"
#include "libbcachefs/bkey/bkey_types.h"
#include "libbcachefs/btree/btree.h"
#include "libbcachefs/util/errcode.h"
#include "libbcachefs/bkey/extents.h"
#include "libbcachefs/fs/fs.h"
#include "libbcachefs/btree/node.h"
#include "libbcachefs/util/util.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum list_mode { LIST_KEYS, LIST_FORMATS, LIST_NODES };

struct list_opts {
	unsigned	btree_id;
	struct bpos_h	start, end;
	enum list_mode	mode;
	bool		json;
	struct bch_fs_opts fo;
};

struct list_state {
	struct bch_fs		*c;
	struct list_opts	*o;
	struct bkey_fs_ctx	fs;
	struct json		j;
	struct printbuf		out;
	struct printbuf		*err;
};

/* ---- option parsing ---- */

static int parse_bpos(const char *s, struct bpos_h *p)
{
	char *copy = xstrdup(s), *colon = strchr(copy, ':');
	uint64_t inode, offset = 0;
	int ret;

	if (colon)
		*colon = '\0';
	ret = parse_u64(copy, &inode);
	if (!ret && colon)
		ret = parse_u64(colon + 1, &offset);
	free(copy);
	if (ret)
		return ret;
	*p = POS_H(inode, offset);
	return 0;
}


/* ---- what key printing may know: device geometry and bucket gens ---- */

static void flush_out(struct list_state *s)
{
	fwrite(s->out.buf ? s->out.buf : "", 1, s->out.pos, stdout);
	printbuf_reset(&s->out);
}

static void flush_err(struct list_state *s)
{
	if (s->err->pos)
		fputs(printbuf_str(s->err), stderr);
	printbuf_reset(s->err);
}

/* ---- keys ---- */

static int list_keys(struct list_state *s)
{
	struct bkey_print_ctx pctx = { .fs = &s->fs, .max_len = 511 };
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	if (s->o->json) {
		json_obj_begin(&s->j, NULL);
		json_str(&s->j, "btree", bch_btree_id_str(s->o->btree_id));
		json_arr_begin(&s->j, "keys");
	}

	bch_btree_iter_init(&iter, s->c, s->o->btree_id, s->o->start, s->err);
	while (!(ret = bch_btree_iter_next(&iter, &k)) && k) {
		if (bpos_cmp(k->k.p, s->o->end) > 0)
			break;
		if (s->o->json) {
			bch_bkey_to_json(&s->j, s->o->btree_id, 0, k, &pctx);
		} else {
			bch_bkey_to_text(&s->out, s->o->btree_id, 0, k, &pctx);
			pr_char(&s->out, '\n');
		}
		if (s->out.pos > 65536)
			flush_out(s);
		flush_err(s);
	}
	bch_btree_iter_exit(&iter);

	if (s->o->json) {
		json_arr_end(&s->j);
		json_obj_end(&s->j);
		pr_char(&s->out, '\n');
	}
	flush_out(s);
	return ret;
}

/* ---- formats / nodes ---- */

static void node_header_text(struct list_state *s, const struct btree_node_visit *v)
{
	const struct btree_node_h *n = v->n;
	struct printbuf *out = &s->out;
	unsigned node_bytes = s->c->btree_node_size * 512;
	unsigned avail = node_bytes > 160 ? node_bytes - 160 : 1;
	size_t used = n->live_u64s * 8;

	pr_buf(out, "l %u %llu:%llu - %llu:%llu:\n", n->level,
	       (unsigned long long)n->min_key.inode, (unsigned long long)n->min_key.offset,
	       (unsigned long long)n->max_key.inode, (unsigned long long)n->max_key.offset);
	pr_str(out, "    ptrs: ");
	extent_entries_to_text(out, v->ptr, &s->fs);
	pr_buf(out, "\n    format: u64s %u fields %u %u %u %u %u\n",
	       n->format.key_u64s, n->format.bits[0], n->format.bits[1],
	       n->format.bits[2], n->format.bits[3], n->format.bits[4]);
	pr_buf(out, "    bytes used %zu/%u (%zu%% full)\n", used, avail,
	       used * 100 / avail);
	pr_buf(out, "    bsets %u, written %u/%u sectors, seq %llx, dev %u sector %llu\n",
	       n->nr_bsets, n->written, s->c->btree_node_size,
	       (unsigned long long)n->seq, n->dev, (unsigned long long)n->sector);
	pr_buf(out, "    keys in bsets: %u packed, %u unpacked; %zu live\n",
	       n->nr_packed, n->nr_unpacked, n->nr_keys);
}

static void node_json(struct list_state *s, const struct btree_node_visit *v)
{
	const struct btree_node_h *n = v->n;
	struct bkey_print_ctx pctx = { .fs = &s->fs };
	struct printbuf t = PRINTBUF;
	unsigned i;

	json_obj_begin(&s->j, NULL);
	json_u64(&s->j, "level", v->level);
	bch_bpos_to_text(&t, n->min_key);
	json_str(&s->j, "min_key", printbuf_str(&t));
	printbuf_reset(&t);
	bch_bpos_to_text(&t, n->max_key);
	json_str(&s->j, "max_key", printbuf_str(&t));
	printbuf_exit(&t);
	json_u64(&s->j, "dev", n->dev);
	json_u64(&s->j, "sector", n->sector);
	json_u64(&s->j, "seq", n->seq);
	json_u64(&s->j, "written_sectors", n->written);
	json_arr_begin(&s->j, "format");
	for (i = 0; i < BKEY_NR_FIELDS_H; i++)
		json_u64(&s->j, NULL, n->format.bits[i]);
	json_arr_end(&s->j);
	json_arr_begin(&s->j, "bsets");
	for (i = 0; i < n->nr_bsets; i++) {
		json_obj_begin(&s->j, NULL);
		json_u64(&s->j, "offset", n->bsets[i].offset);
		json_u64(&s->j, "u64s", n->bsets[i].u64s);
		json_u64(&s->j, "journal_seq", n->bsets[i].journal_seq);
		json_bool(&s->j, "csum_ok", n->bsets[i].csum_ok);
		json_bool(&s->j, "used", n->bsets[i].used);
		json_obj_end(&s->j);
	}
	json_arr_end(&s->j);
	if (s->o->mode == LIST_NODES) {
		json_arr_begin(&s->j, "keys");
		for (i = 0; i < n->nr_keys; i++)
			bch_bkey_to_json(&s->j, v->btree_id, v->level, &n->keys[i], &pctx);
		json_arr_end(&s->j);
	}
	json_obj_end(&s->j);
}

static int list_node_visit(void *arg, const struct btree_node_visit *v)
{
	struct list_state *s = arg;
	struct bkey_print_ctx pctx = {
		.fs = &s->fs, .max_len = 4095, .interior_as_leaf = true,
	};
	size_t i;

	if (bpos_cmp(v->ptr->k.p, s->o->end) > 0)
		return 1;
	if (bpos_cmp(v->ptr->k.p, s->o->start) < 0)
		return 0;
	if (!v->n) {
		flush_err(s);
		return 0;		/* reported by the reader */
	}

	if (s->o->json) {
		node_json(s, v);
	} else {
		node_header_text(s, v);
		if (s->o->mode == LIST_FORMATS)
			pr_char(&s->out, '\n');
		else
			for (i = 0; i < v->n->nr_keys; i++) {
				pr_char(&s->out, '\t');
				bch_bkey_to_text(&s->out, v->btree_id, v->level,
						 &v->n->keys[i], &pctx);
				pr_char(&s->out, '\n');
			}
	}
	flush_out(s);
	flush_err(s);
	return 0;
}

static int list_nodes(struct list_state *s)
{
	int ret;

	if (s->o->json) {
		json_obj_begin(&s->j, NULL);
		json_str(&s->j, "btree", bch_btree_id_str(s->o->btree_id));
		json_arr_begin(&s->j, "nodes");
	}
	ret = bch_btree_walk_nodes(s->c, s->o->btree_id, list_node_visit, s, s->err);
	if (ret > 0)
		ret = 0;
	if (s->o->json) {
		json_arr_end(&s->j);
		json_obj_end(&s->j);
		pr_char(&s->out, '\n');
	}
	flush_out(s);
	return ret;
}

/* ---- the command ---- */

static int opt_btree(void *opts, const char *arg, struct printbuf *why)
{
	int id = bch_btree_id_parse(arg);

	if (id < 0) {
		pr_buf(why, "bad btree '%s'", arg);
		return -1;
	}
	((struct list_opts *)opts)->btree_id = id;
	return 0;
}

static int opt_pos(struct bpos_h *p, const char *arg, struct printbuf *why)
{
	if (!parse_bpos(arg, p))
		return 0;
	pr_buf(why, "invalid position '%s' (INODE or INODE:OFFSET)", arg);
	return -1;
}

static int opt_start(void *opts, const char *arg, struct printbuf *why)
{
	return opt_pos(&((struct list_opts *)opts)->start, arg, why);
}

static int opt_end(void *opts, const char *arg, struct printbuf *why)
{
	return opt_pos(&((struct list_opts *)opts)->end, arg, why);
}

static int opt_inode(void *opts, const char *arg, struct printbuf *why)
{
	struct list_opts *o = opts;
	uint64_t inode;

	if (parse_u64(arg, &inode) || inode == UINT64_MAX) {
		pr_buf(why, "invalid inode '%s'", arg);
		return -1;
	}
	o->start = POS_H(inode, 0);
	o->end = POS_H(inode + 1, 0);
	return 0;
}

static int opt_mode(void *opts, const char *arg, struct printbuf *why)
{
	static const char * const modes[] = {
		[LIST_KEYS] = "keys", [LIST_FORMATS] = "formats", [LIST_NODES] = "nodes",
	};

	for (unsigned i = 0; i < ARRAY_SIZE(modes); i++)
		if (!strcmp(arg, modes[i])) {
			((struct list_opts *)opts)->mode = i;
			return 0;
		}
	pr_buf(why, "bad list mode '%s' (keys, formats or nodes)", arg);
	return -1;
}

static int opt_fsck(void *opts, const char *arg, struct printbuf *why)
{
	pr_str(why, "-f (fsck before listing) is not supported: run 'bcachefs fsck' first");
	return -1;
}

static const struct cmd_opt list_opts[] = {
	CMD_OPT_FN('b', "btree", "BTREE",
		   "extents (default), inodes, dirents, xattrs, alloc, quotas", opt_btree),
	CMD_OPT_FN('s', "start", "INODE[:OFFSET]", "first position to list (default 0:0)", opt_start),
	CMD_OPT_FN('e', "end", "INODE[:OFFSET]",
		   "last position to list, inclusive (default: the end)", opt_end),
	CMD_OPT_FN('i', "inode", "INODE", "keys of one inode (start INODE:0, end INODE+1:0)",
		   opt_inode),
	CMD_OPT_FN('m', "mode", "MODE", "keys (default), formats (one block per node),\n"
		   "nodes (each node, then its keys)", opt_mode),
	{ .short_name = 'f', .type = OPT_FN, .fn = opt_fsck, .hidden = true },
	CMD_OPT_COUNT('v', "verbose", "also print the messages of opening the filesystem",
		      struct list_opts, fo.verbose),
	CMD_OPT_DEGRADED("list even when member devices are missing (each is\n"
			 "named; keys only on them are not listed)", struct list_opts, fo),
	CMD_OPT_BOOL(0, "json", "print JSON instead of text", struct list_opts, json),
	CMD_OPT_PASSPHRASE_FILE(struct list_opts, fo),
	CMD_OPT_HELP,
	CMD_OPT_END
};

static const struct cmd_def list_def = {
	.name		= "list",
	.args		= "DEVICE...",
	.about		= "List the keys of one btree of an unmounted filesystem.",
	.opts		= list_opts,
	.footer		= "Problems found in the btree (bad checksums, invalid keys) are reported on\n"
			  "standard error and make the exit status 1; the keys that could be read\n"
			  "are still listed.\n",
	.min_args	= 1,
	.no_args_msg	= "no device given",
};

int cmd_list(int argc, char *argv[])
{
	struct list_opts o = {
		.btree_id = 0, .start = POS_H_MIN, .end = POS_H_MAX, .mode = LIST_KEYS,
		.fo = { .read_only = true, .ask_passphrase = true },
	};
	struct bch_fs_opts *fo = &o.fo;
	struct printbuf err = PRINTBUF;
	struct list_state s = { .o = &o, .err = &err };
	struct bch_fs *c;
	char **devs;
	unsigned nr;
	int i, ret;

	bch_heap_tune();
	i = cmd_parse(&list_def, &o, argc, argv);
	devs = argv + i;
	nr = (unsigned)(argc - i);

	ret = bch_fs_open(devs, nr, fo, &c, &err);
	if (ret) {
		cmd_open_failed(devs[0], ret, &err, cmd_missing_hint(devs, nr, fo, ret, &err));
		printbuf_exit(&err);
		return EXIT_FAIL;
	}
	if (fo->verbose)
		fputs(printbuf_str(&err), stderr);
	printbuf_reset(&err);
	cmd_note_missing(c);

	/* pointers are judged stale against the bucket gens of the alloc btree */
	if (o.btree_id == BTREE_ID_EXTENTS || o.mode != LIST_KEYS) {
		ret = bch_btree_read_bucket_gens(c, &err);
		if (ret)
			fprintf(stderr, "bcachefs list: cannot read bucket generations: %s\n",
				bch_err_str(ret));
		flush_err(&s);
	}

	s.c = c;
	bch_fs_key_ctx(c, &s.fs);
	s.fs.key_unknown = !c->have_key;
	json_init(&s.j, &s.out, false);

	ret = o.mode == LIST_KEYS ? list_keys(&s) : list_nodes(&s);
	flush_err(&s);
	if (ret)
		fprintf(stderr, "bcachefs list: %s btree: %s\n",
			bch_btree_id_str(o.btree_id), bch_err_str(ret));
	else if (c->nr_errors)
		fprintf(stderr, "bcachefs list: %lu problem(s) found while reading\n",
			c->nr_errors);
	if (!ret && c->nr_errors)
		ret = -BCH_ERR_fsck_errors;

	bch_btree_cache_exit(c);
	bch_fs_close(c);
	printbuf_exit(&s.out);
	printbuf_exit(&err);
	return ret ? EXIT_FAIL : EXIT_OK;
}
