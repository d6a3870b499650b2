// SPDX-License-Identifier: GPL-2.0
/*
 * plant: commit precise damage into a filesystem image for the fsck
 * corruption corpus (tests/fsck/make-corpus.sh).
 *
 *   plant [-j] IMAGE OP ARG... [+ OP ARG...]...
 *
 * Every OP is one transaction through the update engine; at the end the
 * engine is stopped (checkpoint: the damage is in the btrees), or with -j
 * the filesystem is closed without a stop (the damage is only in the
 * journal, replayed by every reader).
 *
 * An INUM argument is a number or an absolute path ("/d1/d2") looked up
 * at the time the op runs. Hash offsets: "" = the right one, "+N" = the
 * right one plus N, or a number.
 *
 *   rm-key BTREE INUM OFFSET         whiteout at (INUM, OFFSET)
 *   rm-inode INUM                    delete the inode key
 *   rm-dirent DIR NAME               delete the entry NAME of DIR (wherever it is)
 *   rm-extents INUM                  delete every extent of INUM
 *   dirent DIR NAME INUM DTYPE [OFF] insert a dirent (DTYPE: reg dir lnk chr blk fifo sock or a number)
 *   xattr INUM NAME VALUE [OFF]      insert an xattr: "user.NAME" a user one (index 0),
 *                                    a bare NAME one of index 1 (how the corpus was made)
 *   inode INUM FIELD=VAL...          rewrite an inode: nlink (stored, biased) mode (octal)
 *                                    size sectors flags uid gid str_hash hash_seed,
 *                                    +size_dirty +sectors_dirty (set a flag bit)
 *   new-inode INUM FIELD=VAL...      create an inode (mode=, default 0100644)
 *   extent INUM SECTOR FROM [gen=+N|gen=-N|dev=N|offset=N]...
 *                                    copy the first extent of FROM to INUM at SECTOR,
 *                                    with its first pointer changed as asked
 *   mv-dirent DIR NAME OFF           move the entry NAME of DIR to hash offset OFF
 *   dirent-set DIR NAME [dtype=T] [inum=N]   rewrite the entry NAME of DIR in place
 *
 * Byte-level helpers (no engine; the image is opened read-only for the
 * geometry and patched with pwrite):
 *   resum-node BYTE                  recompute the checksums of every bset of the
 *                                    btree node holding image byte BYTE
 *   node-of BYTE                     print the byte offset of that node
 *   leaf-of BTREE INUM OFFSET        print the byte offset of the live leaf holding
 *                                    the first key at or after that position
 *   resum-jset BYTE                  recompute the checksum of the journal entry at BYTE
 *   resum-sb BYTE                    recompute the checksum of the superblock at BYTE
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btree/btree.h"
#include "btree/btree_update.h"
#include "codec/checksum.h"
#include "bkey/dirent.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/fsread.h"
#include "bkey/inode.h"
#include "btree/node_write.h"
#include "dev/super.h"
#include "util/util.h"
#include "bkey/xattr.h"

static struct bch_fs *c;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "plant: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || end == s)
		die("bad number '%s'", s);
	return v;
}

static uint64_t inum_arg(const char *s)
{
	struct printbuf err = PRINTBUF;
	uint64_t inum;

	if (s[0] != '/')
		return num(s);
	if (bch_lookup_path(c, s, &inum, &err))
		die("lookup %s: %s", s, printbuf_str(&err));
	printbuf_exit(&err);
	return inum;
}

static unsigned btree_arg(const char *s)
{
	static const char * const names[] = { "extents", "inodes", "dirents", "xattrs", "alloc", "quotas" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return i;
	return (unsigned)num(s);
}

static unsigned dtype_arg(const char *s)
{
	static const struct { const char *n; unsigned t; } t[] = {
		{ "reg", BCH_DT_REG }, { "dir", BCH_DT_DIR }, { "lnk", BCH_DT_LNK },
		{ "chr", 2 }, { "blk", 6 }, { "fifo", 1 }, { "sock", 12 },
	};

	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].n))
			return t[i].t;
	return (unsigned)num(s);
}

static void get_inode(uint64_t inum, struct bch_inode_unpacked *u)
{
	struct printbuf err = PRINTBUF;

	if (bch_inode_get(c, inum, u, &err))
		die("inode %" PRIu64 ": %s", inum, printbuf_str(&err));
	printbuf_exit(&err);
}

static void hash_info(uint64_t dir, struct bch_hash_info *hi)
{
	struct bch_inode_unpacked u;

	get_inode(dir, &u);
	if (bch_hash_info_init(hi, bch_inode_str_hash(&u), u.bi_hash_seed))
		die("hash info of %" PRIu64, dir);
}

/* "" / NULL: @h; "+N": @h + N; else a number */
static uint64_t offset_arg(const char *s, uint64_t h)
{
	if (!s || !*s)
		return h;
	if (s[0] == '+')
		return h + num(s + 1);
	if (s[0] == '-')
		return h - num(s + 1);
	return num(s);
}

static void commit(struct btree_trans *t)
{
	struct printbuf err = PRINTBUF;

	if (bch_trans_commit(t, &err))
		die("commit: %s", printbuf_str(&err));
	printbuf_exit(&err);
}

static void put_inode(struct btree_trans *t, const struct bch_inode_unpacked *u)
{
	uint8_t v[BCH_INODE_VAL_BYTES_MAX];
	struct bkey_h k = { .type = BCH_INODE_FS, .p = POS_H(u->bi_inum, 0) };
	size_t bytes = bch_inode_pack(u, v);

	bch_trans_update(t, BTREE_ID_INODES, &k, v, (unsigned)bytes);
}

static void set_fields(struct bch_inode_unpacked *u, char **args, int n)
{
	for (int i = 0; i < n; i++) {
		char *a = args[i], *eq = strchr(a, '=');

		if (!strcmp(a, "+size_dirty")) {
			u->bi_flags |= BCH_INODE_I_SIZE_DIRTY;
			continue;
		}
		if (!strcmp(a, "+sectors_dirty")) {
			u->bi_flags |= BCH_INODE_I_SECTORS_DIRTY;
			continue;
		}
		if (!eq)
			die("bad field '%s'", a);
		*eq = 0;
		const char *v = eq + 1;

		if (!strcmp(a, "nlink"))
			u->bi_nlink = (uint32_t)num(v);
		else if (!strcmp(a, "mode"))
			u->bi_mode = (uint16_t)strtoul(v, NULL, 8);
		else if (!strcmp(a, "size"))
			u->bi_size = num(v);
		else if (!strcmp(a, "sectors"))
			u->bi_sectors = num(v);
		else if (!strcmp(a, "flags"))
			u->bi_flags = (uint32_t)num(v);
		else if (!strcmp(a, "uid"))
			u->bi_uid = (uint32_t)num(v);
		else if (!strcmp(a, "gid"))
			u->bi_gid = (uint32_t)num(v);
		else if (!strcmp(a, "str_hash"))
			u->bi_flags = (u->bi_flags & ~(0xfU << 20)) | ((uint32_t)num(v) << 20);
		else if (!strcmp(a, "hash_seed"))
			u->bi_hash_seed = num(v);
		else
			die("unknown field '%s'", a);
	}
}

/* the first key of @btree at or after (@inum, 0) belonging to @inum, with
 * @match deciding (NULL = any); copies into @out */
struct found {
	struct bkey_h	k;
	uint8_t		v[4096];
	unsigned	v_bytes;
};

static bool find_key(unsigned btree, uint64_t inum,
		     bool (*match)(const struct bkey_ref *, const void *), const void *arg,
		     struct found *out)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	bool ret = false;

	bch_btree_iter_init(&iter, c, btree, POS_H(inum, 0), NULL);
	while (!bch_btree_iter_peek(&iter, &k) && k && k->k.p.inode == inum) {
		if (k->k.type >= KEY_TYPE_GENERIC_NR && (!match || match(k, arg))) {
			out->k = k->k;
			out->v_bytes = k->v_bytes;
			memcpy(out->v, k->v, k->v_bytes);
			ret = true;
			break;
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	return ret;
}

static bool dirent_named(const struct bkey_ref *k, const void *arg)
{
	struct bch_dirent_h d;
	const char *name = arg;

	return !bch_dirent_decode(k, &d) && d.name_len == strlen(name) &&
		!memcmp(d.name, name, d.name_len);
}

static void op(struct btree_trans *t, char **a, int n)
{
	const char *o = a[0];

	if (!strcmp(o, "rm-key") && n == 4) {
		bch_trans_delete(t, btree_arg(a[1]), POS_H(inum_arg(a[2]), num(a[3])));
	} else if (!strcmp(o, "rm-inode") && n == 2) {
		bch_trans_delete(t, BTREE_ID_INODES, POS_H(inum_arg(a[1]), 0));
	} else if (!strcmp(o, "rm-dirent") && n == 3) {
		struct found f;

		if (!find_key(BTREE_ID_DIRENTS, inum_arg(a[1]), dirent_named, a[2], &f))
			die("no dirent %s in %s", a[2], a[1]);
		bch_trans_delete(t, BTREE_ID_DIRENTS, f.k.p);
	} else if (!strcmp(o, "rm-extents") && n == 2) {
		bch_trans_delete_extents(t, inum_arg(a[1]), 0, 1ULL << 40);
	} else if (!strcmp(o, "dirent") && (n == 5 || n == 6)) {
		uint64_t dir = inum_arg(a[1]), target = inum_arg(a[3]);
		struct bch_hash_info hi;
		uint8_t d[512];
		size_t bytes = bch_dirent_encode(target, dtype_arg(a[4]), a[2], strlen(a[2]),
						 d, sizeof(d));
		struct bkey_h k = { .type = BCH_DIRENT };

		if (!bytes)
			die("dirent too long");
		if (!bch_inode_get(c, dir, &(struct bch_inode_unpacked){ 0 }, NULL))
			hash_info(dir, &hi);
		else	/* missing directory: any hash will do */
			bch_hash_info_init(&hi, BCH_STR_HASH_SIPHASH, 0);
		k.p = POS_H(dir, offset_arg(n == 6 ? a[5] : NULL,
					    bch_dirent_hash(&hi, a[2], strlen(a[2]))));
		bch_trans_update(t, BTREE_ID_DIRENTS, &k, d, (unsigned)bytes);
	} else if (!strcmp(o, "xattr") && (n == 4 || n == 5)) {
		uint64_t inum = inum_arg(a[1]);
		struct bch_hash_info hi;
		uint8_t x[1024];
		/* "user.NAME": index 0 (user); a bare NAME: index 1, as the corpus was made */
		unsigned type = strncmp(a[2], "user.", 5) ? 1 : 0;
		const char *name = type ? a[2] : a[2] + 5;
		size_t bytes = bch_xattr_encode(type, name, strlen(name), a[3], strlen(a[3]),
						x, sizeof(x));
		struct bkey_h k = { .type = BCH_XATTR };
		struct bch_inode_unpacked u;

		if (!bytes)
			die("xattr too long");
		if (!bch_inode_get(c, inum, &u, NULL))
			hash_info(inum, &hi);
		else	/* missing inode: any hash will do */
			bch_hash_info_init(&hi, BCH_STR_HASH_SIPHASH, 0);
		k.p = POS_H(inum, offset_arg(n == 5 ? a[4] : NULL,
					     bch_xattr_hash(&hi, type, name, strlen(name))));
		bch_trans_update(t, BTREE_ID_XATTRS, &k, x, (unsigned)bytes);
	} else if (!strcmp(o, "inode") && n >= 3) {
		struct bch_inode_unpacked u;

		get_inode(inum_arg(a[1]), &u);
		set_fields(&u, a + 2, n - 2);
		put_inode(t, &u);
	} else if (!strcmp(o, "new-inode") && n >= 2) {
		struct bch_inode_unpacked u = { 0 };

		u.bi_inum = num(a[1]);
		u.bi_mode = S_IFREG | 0644;
		u.bi_hash_seed = u.bi_inum * 0x9e3779b97f4a7c15ULL;
		u.bi_flags = (uint32_t)BCH_STR_HASH_SIPHASH << 20;
		set_fields(&u, a + 2, n - 2);
		put_inode(t, &u);
	} else if (!strcmp(o, "mv-dirent") && n == 4) {
		struct found f;
		struct bch_hash_info hi;
		uint64_t dir = inum_arg(a[1]);

		if (!find_key(BTREE_ID_DIRENTS, dir, dirent_named, a[2], &f))
			die("no dirent %s in %s", a[2], a[1]);
		hash_info(dir, &hi);
		bch_trans_delete(t, BTREE_ID_DIRENTS, f.k.p);
		f.k.p.offset = offset_arg(a[3], bch_dirent_hash(&hi, a[2], strlen(a[2])));
		bch_trans_update(t, BTREE_ID_DIRENTS, &f.k, f.v, f.v_bytes);
	} else if (!strcmp(o, "dirent-set") && n >= 3) {
		struct found f;
		struct bch_dirent_h d;
		struct bkey_ref r;
		uint64_t inum;
		unsigned dt;

		if (!find_key(BTREE_ID_DIRENTS, inum_arg(a[1]), dirent_named, a[2], &f))
			die("no dirent %s in %s", a[2], a[1]);
		r = (struct bkey_ref){ .k = f.k, .v = f.v, .v_bytes = f.v_bytes };
		bch_dirent_decode(&r, &d);
		inum = d.d_inum;
		dt = d.d_type;
		for (int i = 3; i < n; i++) {
			if (!strncmp(a[i], "dtype=", 6))
				dt = dtype_arg(a[i] + 6);
			else if (!strncmp(a[i], "inum=", 5))
				inum = inum_arg(a[i] + 5);
			else
				die("bad field %s", a[i]);
		}
		f.v_bytes = (unsigned)bch_dirent_encode(inum, dt, a[2], strlen(a[2]), f.v, sizeof(f.v));
		bch_trans_update(t, BTREE_ID_DIRENTS, &f.k, f.v, f.v_bytes);
	} else if (!strcmp(o, "extent") && n >= 4) {
		uint64_t inum = inum_arg(a[1]), sector = num(a[2]), from = inum_arg(a[3]);
		struct found f;
		unsigned pi = 0;
		uint64_t w;

		if (!find_key(BTREE_ID_EXTENTS, from, NULL, NULL, &f))
			die("no extent in %s", a[3]);
		f.k.p = POS_H(inum, sector + f.k.size);
		/* the first ptr entry: skip crc entries */
		for (;;) {
			memcpy(&w, f.v + pi, 8);
			w = le64_to_cpu(w);
			if (w & 1)
				break;
			pi += (w & 2) ? 8 : (w & 4) ? 16 : 24;
			if (pi >= f.v_bytes)
				die("no pointer");
		}
		for (int i = 4; i < n; i++) {
			const char *v = strchr(a[i], '=');
			uint64_t x;

			if (!v)
				die("bad ptr field %s", a[i]);
			v++;
			if (!strncmp(a[i], "gen=", 4)) {
				x = (w >> 56) & 0xff;
				x = v[0] == '+' ? x + num(v + 1) : v[0] == '-' ? x - num(v + 1) : num(v);
				w = (w & ~(0xffULL << 56)) | ((x & 0xff) << 56);
			} else if (!strncmp(a[i], "dev=", 4)) {
				w = (w & ~(0xffULL << 48)) | ((num(v) & 0xff) << 48);
			} else if (!strncmp(a[i], "offset=", 7)) {
				w = (w & ~(((1ULL << 44) - 1) << 4)) | ((num(v) & ((1ULL << 44) - 1)) << 4);
			} else {
				die("bad ptr field %s", a[i]);
			}
		}
		w = cpu_to_le64(w);
		memcpy(f.v + pi, &w, 8);
		bch_trans_update(t, BTREE_ID_EXTENTS, &f.k, f.v, f.v_bytes);
	} else {
		die("bad op '%s' (%d args)", o, n - 1);
	}
	commit(t);
}

/* ---- byte level ---- */

static int img_fd;

static void rd(void *buf, size_t n, uint64_t off)
{
	if (pread(img_fd, buf, n, (off_t)off) != (ssize_t)n)
		die("read at %" PRIu64, off);
}

static void wr(const void *buf, size_t n, uint64_t off)
{
	if (pwrite(img_fd, buf, n, (off_t)off) != (ssize_t)n)
		die("write at %" PRIu64, off);
}

static uint64_t node_start(uint64_t byte)
{
	uint64_t nb = (uint64_t)c->btree_node_size << 9;

	return byte / nb * nb;
}

static void resum_node(uint64_t byte)
{
	uint64_t start = node_start(byte);
	unsigned nbytes = c->btree_node_size << 9, bbytes = c->block_size << 9;
	uint8_t *p = malloc(nbytes);
	struct btree_node *bn = (void *)p;
	uint64_t seq;
	unsigned off = 0;

	rd(p, nbytes, start);
	seq = le64_to_cpu(bn->keys.seq);
	while (off < nbytes) {
		struct bset *i = off ? &((struct btree_node_entry *)(p + off))->keys : &bn->keys;
		size_t bytes = (off ? sizeof(struct btree_node_entry) : sizeof(struct btree_node)) +
			(size_t)le16_to_cpu(i->u64s) * 8;
		struct bch_csum_val csum;

		if (le64_to_cpu(i->seq) != seq || off + bytes > nbytes)
			break;
		if (bch_checksum(BSET_CSUM_TYPE(i),
				 bch_nonce_btree(off, seq, le64_to_cpu(i->journal_seq)),
				 NULL, p + off + 16, bytes - 16, &csum))
			die("checksum type %u", (unsigned)BSET_CSUM_TYPE(i));
		bch_csum_to_bytes(csum, p + off);
		off += (unsigned)((bytes + bbytes - 1) / bbytes * bbytes);
	}
	wr(p, nbytes, start);
	free(p);
}

static void resum_jset(uint64_t byte)
{
	uint8_t *p = malloc(1 << 20);
	struct jset *j = (void *)p;
	struct bch_csum_val csum;
	size_t bytes;

	rd(p, 1 << 20, byte);
	bytes = sizeof(*j) + (size_t)le32_to_cpu(j->u64s) * 8;
	if (bytes > (1 << 20) ||
	    bch_checksum(JSET_CSUM_TYPE(j), bch_nonce_journal(le64_to_cpu(j->seq)), NULL,
			 p + 16, bytes - 16, &csum))
		die("jset csum");
	bch_csum_to_bytes(csum, p);
	wr(p, bytes, byte);
	free(p);
}

static void resum_sb(uint64_t byte)
{
	uint8_t *p = malloc(1 << 20);
	struct bch_sb *sb = (void *)p;
	struct bch_csum_val csum;

	rd(p, 1 << 20, byte);
	if (bch_sb_csum(sb, &csum))
		die("sb csum");
	bch_csum_to_bytes(csum, &sb->csum);
	wr(p, vstruct_bytes(sb), byte);
	free(p);
}

int main(int argc, char **argv)
{
	struct bch_fs_opts o = { 0 };
	struct printbuf err = PRINTBUF;
	struct btree_trans t;
	bool journal_only = false;
	char *devs[1];
	int i = 1;

	if (i < argc && !strcmp(argv[i], "-j")) {
		journal_only = true;
		i++;
	}
	if (argc - i < 2)
		die("usage: plant [-j] IMAGE OP ARG... [+ OP ARG...]");
	devs[0] = argv[i++];

	if (!strcmp(argv[i], "leaf-of") && argc - i == 4) {
		struct btree_iter iter;
		struct bkey_ref *k;

		o.read_only = true;
		if (bch_fs_open(devs, 1, &o, &c, &err))
			die("open: %s", printbuf_str(&err));
		bch_btree_iter_init(&iter, c, btree_arg(argv[i + 1]),
				    POS_H(inum_arg(argv[i + 2]), num(argv[i + 3])), NULL);
		if (bch_btree_iter_peek(&iter, &k) || !k || !iter.leaf)
			die("no key");
		printf("%" PRIu64 "\n", iter.leaf->sector << 9);
		bch_btree_iter_exit(&iter);
		bch_fs_close(c);
		return 0;
	}
	if (!strcmp(argv[i], "resum-node") || !strcmp(argv[i], "node-of") ||
	    !strcmp(argv[i], "resum-sb") || !strcmp(argv[i], "resum-jset")) {
		o.read_only = true;
		o.no_journal = true;
		if (strcmp(argv[i], "resum-sb") && strcmp(argv[i], "resum-jset") &&
		    bch_fs_open(devs, 1, &o, &c, &err))
			die("open: %s", printbuf_str(&err));
		img_fd = open(devs[0], O_RDWR);
		if (img_fd < 0 || argc - i != 2)
			die("open/usage");
		if (!strcmp(argv[i], "resum-node"))
			resum_node(num(argv[i + 1]));
		else if (!strcmp(argv[i], "node-of"))
			printf("%" PRIu64 "\n", node_start(num(argv[i + 1])));
		else if (!strcmp(argv[i], "resum-jset"))
			resum_jset(num(argv[i + 1]));
		else
			resum_sb(num(argv[i + 1]));
		if (c)
			bch_fs_close(c);
		close(img_fd);
		return 0;
	}

	if (bch_fs_open(devs, 1, &o, &c, &err))
		die("open: %s", printbuf_str(&err));
	if (bch_fs_rw_start(c, &err))
		die("rw_start: %s", printbuf_str(&err));
	bch_trans_init(&t, c);
	t.raw = true;	/* damage as planted: no bucket accounting */
	while (i < argc) {
		int j = i;

		while (j < argc && strcmp(argv[j], "+"))
			j++;
		op(&t, argv + i, j - i);
		i = j + 1;
	}
	bch_trans_exit(&t);
	if (!journal_only && bch_fs_rw_stop(c, &err))
		die("rw_stop: %s", printbuf_str(&err));
	bch_fs_close(c);
	printbuf_exit(&err);
	return 0;
}
