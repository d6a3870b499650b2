// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: reading one btree node. Input (all little-endian):
 *
 *   0  flags: FUZZ_CSUM_ANY, NODE_KEY (the key below is loaded: encrypted
 *      bsets decrypt), NODE_RANGE (expected min/max keys below, else
 *      POS_MIN..POS_MAX), NODE_CHECK_MIN, NODE_JOURNAL (journal seq and a
 *      blacklisted range below, else no blacklist filtering), NODE_JSON
 *      (keys printed as JSON too: a fifth of the time of a run)
 *   1  btree id (0-7: 6 and 7 are not btrees), 2 level (0-3)
 *   3  log2 node sectors (0-9), 4 log2 block sectors (0-3)
 *   5  node magic (8), 13 bucket size of devices 0 and 1 (2 + 2)
 *  17  min key inode, offset; max key inode, offset (4 x 8)
 *  49  journal seq, blacklist start, blacklist end (3 x 8)
 *  73  the encryption key (32: seeds of encrypted filesystems carry theirs)
 * 105  the node bytes (zero-padded to the node size)
 *
 * After the parse every live key goes through the value checks of its
 * type (with a device geometry, so pointers are checked too), and is
 * printed as `list` text (and JSON); pointer values are decoded.
 */
#include <stdlib.h>

#include "fuzz.h"

#include "bkey/bkey_types.h"
#include "journal/journal.h"
#include "btree/node.h"
#include "util/util.h"

#define NODE_KEY	(1U << 1)
#define NODE_RANGE	(1U << 2)
#define NODE_CHECK_MIN	(1U << 3)
#define NODE_JOURNAL	(1U << 4)
#define NODE_JSON	(1U << 5)

static bool geom(void *priv, unsigned dev, struct bch_dev_geom *g)
{
	const struct btree_node_ctx *ctx = priv;

	if (dev >= 2)
		return false;
	g->bucket_size = ctx->bucket_size[dev];
	g->nbuckets = 1024;
	g->first_bucket = 1;
	return true;
}

static bool bucket_gen(void *priv, unsigned dev, uint64_t bucket, uint8_t *gen)
{
	if (dev >= 2 || bucket >= 1024)
		return false;
	*gen = (uint8_t)(bucket & 3);
	return true;
}

static void keys_check(const struct btree_node_h *n, struct btree_node_ctx *ctx, bool json)
{
	struct bkey_fs_ctx fs = {
		.nr_devices = 2, .dev_geom = geom, .bucket_gen = bucket_gen, .priv = ctx,
		.have_key = ctx->key != NULL, .btree_node_size = ctx->node_sectors,
	};
	struct bkey_print_ctx pctx = { .fs = &fs };
	struct printbuf out = PRINTBUF;
	struct json j;

	for (size_t i = 0; i < n->nr_keys; i++) {
		const struct bkey_ref *k = &n->keys[i];

		bch_bkey_validate_fs(n->btree_id, n->level, k, &fs, &out);
		bch_bkey_to_text(&out, n->btree_id, n->level, k, &pctx);
		if (json) {
			json_init(&j, &out, false);
			bch_bkey_to_json(&j, n->btree_id, n->level, k, &pctx);
		}
		if (n->level) {
			struct btree_ptr_h ptrs[4];

			btree_ptr_decode(k, ptrs, 4);
		}
		printbuf_reset(&out);
	}
	printbuf_exit(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct btree_node_ctx ctx = { 0 };
	struct btree_node_expect exp = { 0 };
	struct journal_state j = { 0 };
	struct { uint64_t start, end; } bl;
	struct printbuf err = PRINTBUF;
	struct btree_node_h *n = NULL;
	struct bch_key key;
	unsigned flags = fz_u8(&in);
	size_t bytes, len;
	const uint8_t *p;
	uint8_t *d;

	fuzz_csum_any(flags & FUZZ_CSUM_ANY);
	exp.btree_id	= fz_u8(&in) & 7;
	exp.level	= fz_u8(&in) & 3;
	ctx.node_sectors = 1U << (fz_u8(&in) % 10);
	ctx.block_sectors = 1U << (fz_u8(&in) & 3);
	if (ctx.block_sectors > ctx.node_sectors)
		ctx.block_sectors = ctx.node_sectors;
	ctx.magic	= fz_u64(&in);
	ctx.bucket_size[0] = fz_u16(&in);
	ctx.bucket_size[1] = fz_u16(&in);
	exp.min_key.inode = fz_u64(&in);
	exp.min_key.offset = fz_u64(&in);
	exp.max_key.inode = fz_u64(&in);
	exp.max_key.offset = fz_u64(&in);
	if (!(flags & NODE_RANGE)) {
		exp.min_key = POS_H_MIN;
		exp.max_key = POS_H_MAX;
	}
	exp.check_min = flags & NODE_CHECK_MIN;
	j.seq = fz_u64(&in);
	bl.start = fz_u64(&in);
	bl.end = fz_u64(&in);
	if (flags & NODE_JOURNAL) {
		j.nr_entries = 1;
		j.blacklist = (void *)&bl;
		j.nr_blacklist = 1;
		ctx.journal = &j;
	}
	p = fz_bytes(&in, sizeof(key), &len);
	memset(&key, 0, sizeof(key));
	memcpy(&key, p, len);
	if (flags & NODE_KEY)
		ctx.key = &key;

	bytes = (size_t)ctx.node_sectors << 9;
	d = xcalloc(1, bytes);
	p = fz_bytes(&in, bytes, &len);
	memcpy(d, p, len);

	/* the node takes @d over, also on error */
	if (!btree_node_parse(&ctx, &exp, d, bytes, "fuzz", &n, &err)) {
		keys_check(n, &ctx, flags & NODE_JSON);
		btree_node_free(n);
	}
	printbuf_exit(&err);
	return 0;
}
