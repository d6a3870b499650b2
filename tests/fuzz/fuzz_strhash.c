// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the string-hash tables of dirents and xattrs. Input
 * (little-endian):
 *
 *   0  flags (FUZZ_CSUM_ANY: unused here)
 *   1  string hash type of the directory (low 4 bits; 0-2 are valid)
 *   2  hash seed (8)
 *  10  number of keys (at most 64), then per key: btree and inode (bit 0:
 *      xattrs, else dirents; bit 1: the next inode, not the directory),
 *      key type, offset (8), journal seq (1), value u64s (1, at most 32),
 *      the value
 *      then names, separated by NUL bytes
 *
 * The keys are the journal keys of a filesystem without btree roots, so
 * the iterators see just them (newest seq wins at a position, whiteouts
 * hide). Each name is looked up as a dirent of directory 4096 (hash
 * probe, then the scan when the probe misses) and as a full xattr name of
 * inode 4096 (every other one asking just the size); then the directory
 * is listed (readdir) and its xattrs too.
 */
#include <stdlib.h>

#include "fuzz.h"

#include "bkey/dirent.h"
#include "core/bch_fs.h"
#include "journal/journal.h"
#include "fs/fsread.h"
#include "bkey/inode.h"
#include "util/util.h"

#define DIR_INUM	4096U
#define MAX_KEYS	64
#define MAX_VAL_U64S	32
#define MAX_NAME	300

static int jkey_cmp(const void *l, const void *r)
{
	return bch_journal_key_cmp(l, r);
}

static int readdir_fn(void *arg, const char *name, size_t len, uint64_t inum,
		      unsigned d_type, uint64_t cookie)
{
	return 0;
}

static int xattr_fn(void *arg, unsigned x_type, const char *name, size_t name_len,
		    const void *val, size_t val_len)
{
	char full[300];

	bch_xattr_full_name(x_type, name, name_len, full, sizeof(full));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t vals[MAX_KEYS][MAX_VAL_U64S];
	static struct journal_key keys[MAX_KEYS];
	static struct bch_fs c;
	static char xbuf[65536];
	struct fuzz_in in = { data, size };
	struct bch_inode_unpacked dir = { 0 };
	struct printbuf err = PRINTBUF;
	unsigned nr_keys, i, d_type, nr_names = 0;
	unsigned long nr_bad = 0;
	uint64_t inum;

	fuzz_csum_any(fz_u8(&in) & FUZZ_CSUM_ANY);
	dir.bi_inum = DIR_INUM;
	dir.bi_mode = (uint16_t)(BCH_DT_DIR << 12 | 0755);
	dir.bi_flags = (uint32_t)(fz_u8(&in) & 0xf) << 20;
	dir.bi_hash_seed = fz_u64(&in);

	nr_keys = fz_u8(&in) % (MAX_KEYS + 1);
	for (i = 0; i < nr_keys; i++) {
		struct journal_key *jk = &keys[i];
		unsigned sel = fz_u8(&in), val_u64s;
		const uint8_t *p;
		size_t len;

		memset(jk, 0, sizeof(*jk));
		jk->btree_id = sel & 1 ? BTREE_ID_XATTRS : BTREE_ID_DIRENTS;
		jk->k.k.p.inode = DIR_INUM + (sel >> 1 & 1);
		jk->k.k.type = fz_u8(&in);
		jk->k.k.p.offset = fz_u64(&in);
		jk->seq = fz_u8(&in);
		jk->idx = i;
		val_u64s = fz_u8(&in) % (MAX_VAL_U64S + 1);
		p = fz_bytes(&in, val_u64s * 8, &len);
		memset(vals[i], 0, sizeof(vals[i]));
		memcpy(vals[i], p, len);
		jk->k.k.u64s = (uint8_t)(BKEY_U64S_UNPACKED + val_u64s);
		jk->k.v = vals[i];
		jk->k.v_bytes = val_u64s * 8;
	}
	qsort(keys, nr_keys, sizeof(keys[0]), jkey_cmp);
	c.journal.keys = keys;
	c.journal.nr_keys = nr_keys;

	while (in.n) {
		const uint8_t *end = memchr(in.p, 0, in.n);
		size_t len = end ? (size_t)(end - in.p) : in.n;
		char name[MAX_NAME + 1];

		if (len > MAX_NAME)
			len = MAX_NAME;
		memcpy(name, in.p, len);
		name[len] = 0;
		in.p += end ? (size_t)(end - in.p) + 1 : in.n;
		in.n = end ? size - (size_t)(in.p - data) : 0;

		/* the probe, then (on a miss) the scan; xattrs: the size, or the value */
		bch_lookup(&c, &dir, name, len, BCH_LOOKUP_SCAN, &inum, &d_type, &err);
		bch_xattr_get(&c, &dir, name, xbuf, nr_names++ & 1 ? sizeof(xbuf) : 0, &err);
		printbuf_reset(&err);
	}
	bch_readdir(&c, DIR_INUM, 0, readdir_fn, NULL, &nr_bad, &err);
	bch_xattr_list(&c, DIR_INUM, xattr_fn, NULL, &nr_bad, &err);
	printbuf_exit(&err);
	return 0;
}
