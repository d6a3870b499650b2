// SPDX-License-Identifier: GPL-2.0
/*
 * The seed maker of the fuzz corpus (tests/fuzz/make-corpus.sh):
 *
 *   mkseeds OUTDIR NAME DEVICE...
 *
 * writes, for the filesystem on DEVICE..., the inputs of every fuzz target
 * (encodings in the comments of tests/fuzz/fuzz_*.c) into
 * OUTDIR/<target>/NAME[-what]:
 *
 *   image    the whole filesystem (runs of non-zero sectors), when every
 *            device is at most FUZZ_IMAGE_MAX_SECTORS (and, of several
 *            devices, opened with the first only)
 *   super    the superblock at sector 8 of each device, checksum checked
 *   node     one node per level of every btree, as read from the device
 *   journal  a few journal entries, as read from the device
 *   extent   a few extents with their stored data (pointers moved to
 *            sector 0, encrypted data re-encrypted with the test key)
 *   strhash  the dirents and xattrs of a few inodes, with their names
 *
 * image and super need no working filesystem (damaged images are seeds
 * too); the rest is only written when the filesystem opens.
 *
 *   mkseeds --unpack INPUT PREFIX
 *
 * is the other way round, for debugging what fuzz_image found: writes the
 * devices of whole-image input INPUT to PREFIX0.img (and PREFIX1.img), as
 * the target sees them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "codec/checksum.h"
#include "dev/dev.h"
#include "bkey/dirent.h"
#include "bkey/extents.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/fsread.h"
#include "journal/journal.h"
#include "btree/node.h"
#include "util/util.h"
#include "bkey/xattr.h"

#define PER_KIND	3	/* seeds of one kind (journal entries, inodes...) */

static const char *outdir, *name;

static void out_write(const char *target, const char *what, const void *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s%s%s", outdir, target, name,
		 what ? "-" : "", what ? what : "");
	f = fopen(path, "w");
	if (!f || fwrite(p, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "mkseeds: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* Length without the trailing zero bytes, rounded up to 8. */
static size_t trimmed(const uint8_t *p, size_t len)
{
	while (len && !p[len - 1])
		len--;
	return round_up(len, 8);
}

/* ---- image, super: the raw devices ---- */

static void seed_super(struct bch_devio *io, unsigned dev)
{
	uint8_t fixed[BCH_SB_FIXED_BYTES], *in;
	size_t bytes;
	char what[32];

	if (dev_pread(io, fixed, sizeof(fixed), 8 * 512))
		return;
	bytes = bch_sb_bytes((const struct bch_sb *)fixed);
	if (bytes > (1U << 20))
		return;
	in = xmalloc(1 + bytes);
	in[0] = 0;		/* checksum checked: the seeds carry good ones */
	if (!dev_pread(io, in + 1, bytes, 8 * 512)) {
		snprintf(what, sizeof(what), "dev%u", dev);
		out_write("super", dev ? what : NULL, in, 1 + bytes);
	}
	free(in);
}

struct outbuf {
	uint8_t	*p;
	size_t	len, cap;
};

static uint8_t *outbuf_room(struct outbuf *b, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = max_t(size_t, 2 * b->cap, b->len + n);
		b->p = xrealloc(b->p, b->cap);
	}
	b->len += n;
	return b->p + b->len - n;
}

/* The runs of non-zero sectors of @io (device @dev), at most 127 sectors each. */
static int image_dev(struct outbuf *b, struct bch_devio *io, unsigned dev)
{
	enum { CHUNK = 1 << 20 };
	uint8_t *buf = xmalloc(CHUNK);
	uint64_t off, run_start = 0;
	size_t run = 0;		/* sectors in the current run */
	int ret = 0;

	for (off = 0; off < io->size && !ret; off += CHUNK) {
		size_t n = (size_t)min_t(uint64_t, CHUNK, io->size - off);

		ret = dev_pread(io, buf, n, off);
		for (size_t s = 0; s < n / 512 && !ret; s++) {
			bool nonzero = trimmed(buf + s * 512, 512);
			uint8_t *o;

			if (run && (!nonzero || run == 127)) {
				fz_put(b->p + b->len - run * 512 - 2, run * 512, 2);
				run = 0;
			}
			if (!nonzero)
				continue;
			if (!run) {
				run_start = (off >> 9) + s;
				o = outbuf_room(b, FUZZ_IMAGE_REC_HDR);
				*o++ = (uint8_t)dev;
				fz_put(o, run_start, 4);
			}
			memcpy(outbuf_room(b, 512), buf + s * 512, 512);
			run++;
		}
	}
	if (run)
		fz_put(b->p + b->len - run * 512 - 2, run * 512, 2);
	free(buf);
	return ret;
}

static void seed_image(struct bch_devio **io, unsigned nr)
{
	struct outbuf b = { 0 };
	uint8_t *o;
	unsigned i;

	if (nr > FUZZ_IMAGE_MAX_DEVS)
		return;
	for (i = 0; i < nr; i++)
		if (io[i]->size > (uint64_t)FUZZ_IMAGE_MAX_SECTORS << 9 || io[i]->size % 512)
			return;
	o = outbuf_room(&b, 2 + 4 * nr);
	*o++ = 0;
	*o++ = (uint8_t)(nr - 1);
	for (i = 0; i < nr; i++)
		o = fz_put(o, io[i]->size >> 9, 4);
	for (i = 0; i < nr; i++)
		if (image_dev(&b, io[i], i))
			goto out;
	out_write("image", NULL, b.p, b.len);
	if (nr > 1) {
		/* the same, opened with only the first device (fuzz_image.c) */
		b.p[0] |= 1U << 1;
		out_write("image", "degraded", b.p, b.len);
	}
out:
	free(b.p);
}

/* ---- node ---- */

struct node_seeds {
	struct bch_fs	*c;
	unsigned	nr;
	unsigned	levels;		/* node: bit l = a node of level l was written */
};

static int node_visit(void *arg, const struct btree_node_visit *v)
{
	struct node_seeds *ns = arg;
	struct bch_fs *c = ns->c;
	struct btree_node_ctx ctx;
	struct btree_ptr_h ptr;
	size_t bytes = (size_t)c->btree_node_size << 9, len;
	uint8_t *in, *o;
	char what[64];

	/* one node per level: the first leaf, the first node of each level above */
	if (v->level >= 32 || ns->levels & (1U << v->level) ||
	    btree_ptr_decode(v->ptr, &ptr, 1) < 1)
		return 0;
	btree_node_ctx_init(&ctx, c);
	in = xcalloc(1, 105 + bytes);
	if (bch_dev_read(c, ptr.dev, in + 105, bytes, ptr.offset)) {
		free(in);
		return 0;
	}
	o = in;
	/* range, journal, key when there is one; JSON printing for the golden images' */
	*o++ = FUZZ_CSUM_ANY | (c->have_key ? 1U << 1 : 0) | 1U << 2 | 1U << 4 |
		(!strncmp(name, "golden-", 7) ? 1U << 5 : 0);
	*o++ = (uint8_t)v->btree_id;
	*o++ = (uint8_t)v->level;
	*o++ = (uint8_t)__builtin_ctz(c->btree_node_size);
	*o++ = (uint8_t)__builtin_ctz(c->block_size);
	o = fz_put(o, ctx.magic, 8);
	o = fz_put(o, ctx.bucket_size[0], 2);
	o = fz_put(o, ctx.bucket_size[1], 2);
	o = fz_put(o, 0, 8);			/* min key: POS_MIN */
	o = fz_put(o, 0, 8);
	o = fz_put(o, v->ptr->k.p.inode, 8);	/* max key: the pointer's */
	o = fz_put(o, v->ptr->k.p.offset, 8);
	o = fz_put(o, c->journal.seq, 8);	/* newest journal seq, empty blacklist */
	o = fz_put(o, 0, 8);
	o = fz_put(o, 0, 8);
	memcpy(o, bch_key_cbytes(&c->key), BCH_KEY_BYTES);
	len = 105 + trimmed(in + 105, bytes);
	snprintf(what, sizeof(what), "%s-l%u", bch_btree_id_str(v->btree_id), v->level);
	out_write("node", what, in, len);
	free(in);
	ns->levels |= 1U << v->level;
	return 0;
}

/* ---- journal ---- */

static int journal_visit(void *arg, const struct journal_scan_entry *e)
{
	struct node_seeds *ns = arg;
	struct bch_fs *c = ns->c;
	size_t bytes = round_up(e->bytes, 512);
	uint8_t *in;
	char what[64];

	if (ns->nr >= PER_KIND || e->status != JSET_OK)
		return 0;
	in = xmalloc(41 + bytes);
	if (bch_dev_read(c, e->loc.dev, in + 41, bytes, e->loc.sector)) {
		free(in);
		return 0;
	}
	in[0] = FUZZ_CSUM_ANY | (c->have_key ? 1U << 1 : 0);
	memcpy(in + 1, in + 41 + offsetof(struct jset, magic), 8);
	memcpy(in + 9, bch_key_cbytes(&c->key), BCH_KEY_BYTES);
	snprintf(what, sizeof(what), "%" PRIu64, le64_to_cpu(e->j->seq));
	out_write("journal", what, in, 41 + e->bytes);
	free(in);
	ns->nr++;
	return 0;
}

/* ---- extent ---- */

/* The crc entry in front of the first pointer of @k: offset in the value, or -1. */
static int first_crc_offset(const struct bkey_ref *k)
{
	struct extent_entry_iter it;
	struct extent_entry_h e;
	int crc = -1;

	extent_entry_iter_init(&it, k);
	while (extent_entry_iter_next(&it, &e) > 0) {
		if (e.type == BCH_EXTENT_ENTRY_ptr)
			return crc;
		crc = (int)e.offset;
	}
	return -1;
}

/* Re-encrypt the stored data with the test key and store the new MAC in @val. */
static void reencrypt(struct bch_fs *c, const struct bkey_ref *k,
		      const struct bch_extent_crc_unpacked *crc, uint8_t *val,
		      uint8_t *data, size_t bytes)
{
	struct bch_nonce nonce = bch_nonce_extent(k->k.version_lo, k->k.version_hi,
						  crc->compression_type,
						  crc->uncompressed_size, crc->nonce);
	struct bch_csum_val mac;
	struct bch_key test;
	int off = first_crc_offset(k);
	union bch_extent_entry *e;

	if (off < 0)
		return;
	e = (void *)(val + off);
	fuzz_test_key(&test);
	bch_encrypt(crc->csum_type, &c->key, nonce, data, bytes);
	bch_encrypt(crc->csum_type, &test, nonce, data, bytes);
	bch_checksum(crc->csum_type, nonce, &test, data, bytes, &mac);
	if (crc->entry_type == BCH_EXTENT_ENTRY_crc64) {
		e->crc64.csum_lo = cpu_to_le64(mac.lo);
		SET_CRC64_CSUM_HI(&e->crc64, mac.hi & 0xffff);
	} else if (crc->entry_type == BCH_EXTENT_ENTRY_crc128) {
		e->crc128.csum_lo = cpu_to_le64(mac.lo);
		e->crc128.csum_hi = cpu_to_le64(mac.hi);
	}
}

static bool seed_extent(struct bch_fs *c, const struct bkey_ref *k, unsigned n)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	struct extent_entry_iter ei;
	struct extent_entry_h e;
	uint8_t val[255 * 8], *in, *o, *data;
	size_t sectors, bytes;
	char what[32];
	bool ok = false;

	extent_ptr_iter_init(&it, k);
	if (extent_ptr_iter_next(&it, &p) <= 0 || !c->devs[p.ptr.dev & 63])
		return false;
	sectors = p.crc.csum_type || p.crc.compression_type ? p.crc.compressed_size
							    : p.crc.offset + k->k.size;
	if (!sectors || sectors > 128)
		return false;
	bytes = sectors << 9;

	/* every pointer to sector 0 of device 0 or 1: the data is there */
	memcpy(val, k->v, k->v_bytes);
	extent_entry_iter_init(&ei, k);
	while (extent_entry_iter_next(&ei, &e) > 0)
		if (e.type == BCH_EXTENT_ENTRY_ptr) {
			struct bch_extent_ptr *ptr = (void *)(val + e.offset);

			SET_EXTENT_PTR_OFFSET(ptr, 0);
			SET_EXTENT_PTR_DEV(ptr, EXTENT_PTR_DEV(ptr) & 1);
		}

	in = xcalloc(1, 67 + k->v_bytes + bytes);
	data = in + 67 + k->v_bytes;
	if (bch_dev_read(c, p.ptr.dev, data, bytes, p.ptr.offset))
		goto out;
	if (bch_csum_type_is_encryption(p.crc.csum_type)) {
		if (!c->have_key)
			goto out;
		reencrypt(c, k, &p.crc, val, data, bytes);
	}
	o = in;
	*o++ = bch_csum_type_is_encryption(p.crc.csum_type) ? 1U << 1 : 0;
	*o++ = k->k.type;
	o = fz_put(o, k->k.size, 4);
	o = fz_put(o, k->k.p.inode, 8);
	o = fz_put(o, k->k.p.offset, 8);
	o = fz_put(o, k->k.version_lo, 8);
	o = fz_put(o, k->k.version_hi, 4);
	o = fz_put(o, 0, 4);				/* read from sector 0 */
	o = fz_put(o, k->k.size < 256 ? k->k.size : 256, 2);
	o = fz_put(o, 1, 8);				/* cut one sector */
	o = fz_put(o, c->devs[p.ptr.dev & 63]->bucket_size, 2);
	o += 16;					/* bucket gens: 0 */
	*o++ = (uint8_t)(k->v_bytes / 8);
	memcpy(o, val, k->v_bytes);
	snprintf(what, sizeof(what), "%u", n);
	out_write("extent", what, in, 67 + k->v_bytes + bytes);
	ok = true;
out:
	free(in);
	return ok;
}

static void seed_extents(struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	unsigned n = 0, kinds = 0;

	bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, POS_H_MIN, &err);
	while (n < 2 * PER_KIND && !bch_btree_iter_next(&iter, &k) && k) {
		struct extent_ptr_iter it;
		struct extent_ptr_decoded p;
		unsigned kind;

		if (!bch_extent_has_data(&k->k))
			continue;
		extent_ptr_iter_init(&it, k);
		if (extent_ptr_iter_next(&it, &p) <= 0)
			continue;
		/* one of each (checksum, compression) */
		kind = 1U << ((p.crc.csum_type & 7) * 5 + (p.crc.compression_type & 3));
		if (kinds & kind)
			continue;
		if (seed_extent(c, k, n)) {
			kinds |= kind;
			n++;
		}
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&err);
}

/* ---- strhash ---- */

static uint8_t *put_keys(struct bch_fs *c, unsigned btree, uint64_t inum, uint8_t *o,
			 unsigned *nr, struct printbuf *names)
{
	struct printbuf err = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;

	bch_btree_iter_init(&iter, c, btree, POS_H(inum, 0), &err);
	while (*nr < 64 && !bch_btree_iter_next(&iter, &k) && k && k->k.p.inode == inum) {
		if (k->v_bytes > 32 * 8)
			continue;
		*o++ = btree == BTREE_ID_XATTRS;
		*o++ = k->k.type;
		o = fz_put(o, k->k.p.offset, 8);
		*o++ = 1;
		*o++ = (uint8_t)(k->v_bytes / 8);
		memcpy(o, k->v, k->v_bytes);
		o += k->v_bytes;
		(*nr)++;

		if (btree == BTREE_ID_DIRENTS) {
			struct bch_dirent_h d;

			if (!bch_dirent_decode(k, &d)) {
				pr_bytes(names, d.name, d.name_len);
				pr_char(names, 0);
			}
		} else {
			struct bch_xattr_h x;
			char full[300];
			int l;

			if (!bch_xattr_decode(k, &x) &&
			    (l = bch_xattr_full_name(x.x_type, x.name, x.name_len,
						     full, sizeof(full))) > 0) {
				pr_bytes(names, full, (size_t)l);
				pr_char(names, 0);
			}
		}
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&err);
	return o;
}

static void seed_strhash(struct bch_fs *c)
{
	struct printbuf err = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	unsigned n = 0;

	bch_btree_iter_init(&iter, c, BTREE_ID_INODES, POS_H_MIN, &err);
	while (n < PER_KIND && !bch_btree_iter_next(&iter, &k) && k) {
		struct bch_inode_unpacked u;
		struct printbuf names = PRINTBUF;
		uint8_t *in = xmalloc(16 + 64 * (12 + 256) + 1), *o = in, *nrp;
		unsigned nr = 0;
		char what[32];

		if (k->k.type != BCH_INODE_FS || bch_inode_get(c, k->k.p.inode, &u, &err))
			goto next;
		*o++ = 0;
		*o++ = (uint8_t)bch_inode_str_hash(&u);
		o = fz_put(o, u.bi_hash_seed, 8);
		nrp = o++;
		o = put_keys(c, BTREE_ID_DIRENTS, u.bi_inum, o, &nr, &names);
		o = put_keys(c, BTREE_ID_XATTRS, u.bi_inum, o, &nr, &names);
		*nrp = (uint8_t)nr;
		if (!nr)
			goto next;
		pr_str(&names, "not-there");
		snprintf(what, sizeof(what), "%" PRIu64, u.bi_inum);
		/* the names follow the keys */
		{
			size_t used = (size_t)(o - in);

			in = xrealloc(in, used + names.pos);
			memcpy(in + used, names.buf, names.pos);
			out_write("strhash", what, in, used + names.pos);
		}
		n++;
next:
		printbuf_exit(&names);
		free(in);
	}
	bch_btree_iter_exit(&iter);
	printbuf_exit(&err);
}

/* ---- unpacking a whole-image input ---- */

static int unpack(const char *input, const char *prefix)
{
	struct bch_devio *io;
	struct fuzz_in in;
	uint64_t bytes[FUZZ_IMAGE_MAX_DEVS];
	uint8_t *data;
	int fds[FUZZ_IMAGE_MAX_DEVS];
	unsigned nr, i;

	if (dev_open(input, 0, &io)) {
		fprintf(stderr, "mkseeds: cannot open %s\n", input);
		return 1;
	}
	data = xmalloc(io->size + 1);
	if (dev_pread(io, data, io->size, 0))
		return 1;
	in = (struct fuzz_in) { data, io->size };
	dev_close(io);

	fz_u8(&in);
	nr = 1 + (fz_u8(&in) & 1);
	for (i = 0; i < nr; i++) {
		char path[4096];
		uint32_t sectors = fz_u32(&in);

		sectors = max_t(uint32_t, sectors, FUZZ_IMAGE_MIN_SECTORS);
		sectors = min_t(uint32_t, sectors, FUZZ_IMAGE_MAX_SECTORS);
		bytes[i] = (uint64_t)sectors << 9;
		snprintf(path, sizeof(path), "%s%u.img", prefix, i);
		fds[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fds[i] < 0 || ftruncate(fds[i], (off_t)bytes[i])) {
			fprintf(stderr, "mkseeds: cannot create %s\n", path);
			return 1;
		}
		printf("%s\n", path);
	}
	/* the same clipping as fuzz_image.c */
	while (in.n >= FUZZ_IMAGE_REC_HDR) {
		unsigned dev = fz_u8(&in) & 1;
		uint64_t off = (uint64_t)fz_u32(&in) << 9;
		size_t want = fz_u16(&in), len;
		const uint8_t *p = fz_bytes(&in, want, &len);

		if (dev >= nr || off >= bytes[dev])
			continue;
		len = (size_t)min_t(uint64_t, len, bytes[dev] - off);
		if (pwrite(fds[dev], p, len, (off_t)off) != (ssize_t)len)
			return 1;
	}
	for (i = 0; i < nr; i++)
		close(fds[i]);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	struct bch_fs_opts opts = { .read_only = true, .degraded = true };
	struct printbuf err = PRINTBUF;
	struct bch_devio *io[BCH_FS_MAX_DEVS];
	struct bch_fs *c;
	unsigned nr, i;

	if (argc == 4 && !strcmp(argv[1], "--unpack"))
		return unpack(argv[2], argv[3]);
	if (argc < 4 || argc - 3 > BCH_FS_MAX_DEVS) {
		fprintf(stderr, "Usage: mkseeds OUTDIR NAME DEVICE...\n"
			"       mkseeds --unpack INPUT PREFIX\n");
		return 16;
	}
	outdir = argv[1];
	name = argv[2];
	nr = (unsigned)argc - 3;
	mkdir(outdir, 0755);

	for (i = 0; i < nr; i++) {
		if (dev_open(argv[3 + i], 0, &io[i])) {
			fprintf(stderr, "mkseeds: cannot open %s\n", argv[3 + i]);
			return 1;
		}
		seed_super(io[i], i);
	}
	seed_image(io, nr);
	for (i = 0; i < nr; i++)
		dev_close(io[i]);

	if (bch_fs_open(argv + 3, nr, &opts, &c, &err)) {
		printf("%s: does not open (image and super seeds only)\n", name);
		printbuf_exit(&err);
		return 0;
	}
	for (unsigned b = 0; b < BCH_NR_BTREES; b++) {
		struct node_seeds ns = { c, 0, 0 };

		bch_btree_walk_nodes(c, b, node_visit, &ns, &err);
	}
	{
		struct node_seeds ns = { c, 0, 0 };

		bch_journal_scan(c, journal_visit, &ns, &err);
	}
	seed_extents(c);
	seed_strhash(c);
	bch_fs_close(c);
	printbuf_exit(&err);
	return 0;
}
