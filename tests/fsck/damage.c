// SPDX-License-Identifier: GPL-2.0
/*
 * damage: random btree-node damage for the fsck convergence test
 * (tests/fsck/test_fsck_converge.sh).
 *
 *   damage IMAGE SEED [BYTES]
 *	Pick one btree node of the (single-device, unencrypted) filesystem
 *	in IMAGE with a PRNG seeded by SEED, pick one of its bsets that
 *	holds keys, overwrite BYTES (default 1-4, random) random bytes of
 *	that bset's key area (never its header), recompute the bset's
 *	checksum (none / crc32c / crc64, the bset's own type) so the damage
 *	gets past the checksum check and reaches the key checks, and write
 *	the node back. Prints what was damaged, then one machine-readable
 *	line:
 *	    RANGE BTREE MIN_INODE:MIN_OFFSET MAX_INODE:MAX_OFFSET
 *	Exit 0; 77 = nothing to damage (encrypted, multi-device, no node);
 *	1 = error.
 *
 *   damage IMAGE SEED --interior
 *	Damage one random interior node or root (any btree, any level):
 *	a quarter of the seeds zero its magic (the node cannot
 *	be read, and the node scan does not find it); the others overwrite
 *	1-8 random bytes anywhere in its bsets, header included, with the
 *	checksums recomputed (half of the seeds) or not. The leaves stay
 *	intact: after fsck -y every file must be there as before. Prints
 *	what was damaged and a RANGE line as above (the node's range).
 *
 *   damage check ORIG REPAIRED BTREE MIN MAX
 *	Every regular file of ORIG whose inode key and extent keys lie
 *	outside [MIN, MAX] of BTREE (positions INODE:OFFSET; a file is
 *	"touched" when its inode key, or any position (inum, *) of its
 *	extents, can lie in the damaged range) must exist in REPAIRED under
 *	the same inode number, as a regular file with the same size and the
 *	same bytes. Prints one line per lost or changed file and a summary
 *	line "checked N files (M touched, skipped), L lost"; exit 1 if L > 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "codec/checksum.h"
#include "util/errcode.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/fsread.h"
#include "bkey/inode.h"
#include "btree/node.h"
#include "util/util.h"

/* ---- PRNG (splitmix64) ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ---- node collection ---- */

struct node_info {
	unsigned	btree_id, level;
	bool		root;
	unsigned	written;	/* sectors */
	struct bpos_h	min, max;
	unsigned	dev;
	uint64_t	sector;
	unsigned	nr_bsets;
	struct {
		unsigned offset, u64s, csum_type;
	}		bsets[64];
};

struct nodes {
	struct node_info *v;
	size_t		nr, size;
};

static int collect(void *arg, const struct btree_node_visit *v)
{
	struct nodes *ns = arg;
	struct node_info *ni;
	unsigned i, nr = 0;

	if (!v->n)
		return 0;
	for (i = 0; i < v->n->nr_bsets; i++)
		if (v->n->bsets[i].u64s && !v->n->bsets[i].blacklisted)
			nr++;
	if (!nr)
		return 0;
	if (ns->nr == ns->size) {
		ns->size = ns->size ? ns->size * 2 : 16;
		ns->v = realloc(ns->v, ns->size * sizeof(*ns->v));
		if (!ns->v)
			return -ENOMEM;
	}
	ni = &ns->v[ns->nr++];
	memset(ni, 0, sizeof(*ni));
	ni->btree_id = v->btree_id;
	ni->level = v->level;
	ni->min = v->n->min_key;
	ni->max = v->n->max_key;
	ni->dev = v->n->dev;
	ni->sector = v->n->sector;
	ni->root = v->level == v->root_level;
	ni->written = v->n->written;
	for (i = 0; i < v->n->nr_bsets && ni->nr_bsets < 64; i++) {
		const struct btree_bset_info *b = &v->n->bsets[i];

		if (!b->u64s || b->blacklisted)
			continue;
		ni->bsets[ni->nr_bsets].offset = b->offset;
		ni->bsets[ni->nr_bsets].u64s = b->u64s;
		ni->bsets[ni->nr_bsets].csum_type = b->csum_type;
		ni->nr_bsets++;
	}
	return 0;
}

/* Recompute the checksum of every bset of the node at @p that can be found. */
static void resum_node(uint8_t *p, unsigned node_bytes, unsigned block_bytes)
{
	uint64_t seq = get_le64_unaligned(p + offsetof(struct btree_node, keys.seq));
	unsigned off = 0;

	while (off + sizeof(struct btree_node_entry) <= node_bytes) {
		size_t hdr = off ? sizeof(struct btree_node_entry) : sizeof(struct btree_node);
		struct bset *bs = off ? &((struct btree_node_entry *)(p + off))->keys
				      : &((struct btree_node *)p)->keys;
		size_t bytes = hdr + (size_t)le16_to_cpu(bs->u64s) * 8;
		unsigned type = BSET_CSUM_TYPE(bs);
		struct bch_csum_val csum;

		if ((off && le64_to_cpu(bs->seq) != seq) || off + bytes > node_bytes ||
		    bch_checksum(type, bch_nonce_btree(off, le64_to_cpu(bs->seq),
						       le64_to_cpu(bs->journal_seq)),
				 NULL, p + off + 16, bytes - 16, &csum))
			break;
		bch_csum_to_bytes(csum, p + off);
		off += (unsigned)round_up(bytes, block_bytes);
	}
}

/* damage IMAGE SEED --interior (see the top of this file). */
static int do_damage_interior(const char *img, uint64_t seed)
{
	struct bch_fs_opts o = { .read_only = true };
	struct printbuf err = PRINTBUF;
	struct bch_fs *c = NULL;
	struct nodes ns = { 0 };
	struct node_info *ni;
	char *devs[1] = { (char *)img };
	unsigned id, node_bytes, block_bytes, kind, used;
	size_t nr = 0, pick;
	uint64_t start;
	uint8_t *p;
	int fd, ret;

	rng_state = seed * 0x2545F4914F6CDD1DULL + 7;
	ret = bch_fs_open(devs, 1, &o, &c, &err);
	if (ret) {
		fprintf(stderr, "damage: cannot open %s: %s\n%s", img, bch_err_str(ret),
			printbuf_str(&err));
		return 1;
	}
	if (c->encrypted || c->nr_devices != 1) {
		printf("damage: encrypted or multi-device filesystem: skipped\n");
		bch_fs_close(c);
		return 77;
	}
	for (id = 0; id < BTREE_ID_NR; id++)
		bch_btree_walk_nodes(c, id, collect, &ns, &err);
	node_bytes = c->btree_node_size << 9;
	block_bytes = c->block_size << 9;
	bch_fs_close(c);
	printbuf_exit(&err);
	for (size_t i = 0; i < ns.nr; i++)
		if (ns.v[i].level || ns.v[i].root)
			nr++;
	if (!nr) {
		printf("damage: no interior node or root\n");
		return 77;
	}
	pick = rnd_below(nr);
	for (ni = ns.v; !(ni->level || ni->root) || pick--; ni++)
		;
	start = ni->sector << 9;
	used = ni->written ? ni->written << 9 : node_bytes;
	if (used > node_bytes)
		used = node_bytes;

	p = malloc(node_bytes);
	fd = open(img, O_RDWR);
	if (!p || fd < 0 || pread(fd, p, node_bytes, (off_t)start) != (ssize_t)node_bytes) {
		fprintf(stderr, "damage: reading the node at byte %" PRIu64 ": %s\n", start,
			strerror(errno));
		return 1;
	}
	kind = (unsigned)rnd_below(4);
	printf("damaged: btree %s level %u%s min %" PRIu64 ":%" PRIu64 " max %" PRIu64 ":%" PRIu64
	       " dev %u sector %" PRIu64 ": %s\n",
	       bch_btree_id_str(ni->btree_id), ni->level, ni->root ? " (root)" : "",
	       ni->min.inode, ni->min.offset, ni->max.inode, ni->max.offset, ni->dev, ni->sector,
	       !kind ? "magic zeroed" : kind == 1 ? "bytes changed, checksums not recomputed"
					     : "bytes changed, checksums recomputed");
	if (!kind) {
		memset(p + offsetof(struct btree_node, magic), 0, 8);
	} else {
		unsigned nbytes = 1 + (unsigned)rnd_below(8);

		for (unsigned i = 0; i < nbytes; i++) {
			size_t at = 16 + rnd_below(used - 16);
			uint8_t old = p[at];

			p[at] ^= (uint8_t)(1 + rnd_below(255));
			printf("  node byte %zu (image byte %" PRIu64 "): %02x -> %02x\n",
			       at, start + at, old, p[at]);
		}
		if (kind >= 2)
			resum_node(p, node_bytes, block_bytes);
	}
	if (pwrite(fd, p, node_bytes, (off_t)start) != (ssize_t)node_bytes || fsync(fd)) {
		fprintf(stderr, "damage: writing the node: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	printf("RANGE %s %" PRIu64 ":%" PRIu64 " %" PRIu64 ":%" PRIu64 "\n",
	       bch_btree_id_str(ni->btree_id), ni->min.inode, ni->min.offset,
	       ni->max.inode, ni->max.offset);
	free(p);
	free(ns.v);
	return 0;
}

static int do_damage(const char *img, uint64_t seed, unsigned nbytes)
{
	struct bch_fs_opts o = { .read_only = true };
	struct printbuf err = PRINTBUF;
	struct bch_fs *c = NULL;
	struct nodes ns = { 0 };
	struct node_info *ni;
	char *devs[1] = { (char *)img };
	unsigned id, b, i, hdr, node_bytes;
	uint64_t start;
	uint8_t *p;
	int fd, ret;

	rng_state = seed * 0x2545F4914F6CDD1DULL + 1;
	ret = bch_fs_open(devs, 1, &o, &c, &err);
	if (ret) {
		fprintf(stderr, "damage: cannot open %s: %s\n%s", img, bch_err_str(ret),
			printbuf_str(&err));
		return 1;
	}
	if (c->encrypted) {
		printf("damage: encrypted filesystem: skipped\n");
		bch_fs_close(c);
		return 77;
	}
	if (c->nr_devices != 1) {
		printf("damage: %u devices: only single-device images are damaged\n",
		       c->nr_devices);
		bch_fs_close(c);
		return 77;
	}
	for (id = 0; id < BTREE_ID_NR; id++) {
		ret = bch_btree_walk_nodes(c, id, collect, &ns, &err);
		if (ret < 0) {
			fprintf(stderr, "damage: walking btree %s: %s\n%s", bch_btree_id_str(id),
				bch_err_str(ret), printbuf_str(&err));
			bch_fs_close(c);
			return 1;
		}
	}
	node_bytes = c->btree_node_size << 9;
	bch_fs_close(c);
	printbuf_exit(&err);
	if (!ns.nr) {
		printf("damage: no btree node with keys\n");
		return 77;
	}

	ni = &ns.v[rnd_below(ns.nr)];
	b = (unsigned)rnd_below(ni->nr_bsets);
	hdr = ni->bsets[b].offset ? sizeof(struct btree_node_entry) : sizeof(struct btree_node);
	start = ni->sector << 9;

	p = malloc(node_bytes);
	fd = open(img, O_RDWR);
	if (!p || fd < 0 || pread(fd, p, node_bytes, (off_t)start) != (ssize_t)node_bytes) {
		fprintf(stderr, "damage: reading the node at byte %" PRIu64 ": %s\n", start,
			strerror(errno));
		return 1;
	}

	{
		unsigned off = ni->bsets[b].offset;
		struct bset *bs = off ? &((struct btree_node_entry *)(p + off))->keys
				      : &((struct btree_node *)p)->keys;
		unsigned u64s = le16_to_cpu(bs->u64s);
		size_t key_bytes = (size_t)u64s * 8, bytes = hdr + key_bytes;
		unsigned type = BSET_CSUM_TYPE(bs);
		struct bch_csum_val csum;

		if (!u64s || off + bytes > node_bytes) {
			fprintf(stderr, "damage: bset at %u: bad size\n", off);
			return 1;
		}
		if (type == BCH_CHECKSUM_CHACHA20_POLY1305_80 ||
		    type == BCH_CHECKSUM_CHACHA20_POLY1305_128) {
			printf("damage: encrypted bset: skipped\n");
			return 77;
		}
		if (!nbytes)
			nbytes = 1 + (unsigned)rnd_below(4);

		printf("damaged: btree %s level %u min %" PRIu64 ":%" PRIu64
		       " max %" PRIu64 ":%" PRIu64 " dev %u sector %" PRIu64
		       " bset %u (node byte %u, %u u64s, csum %s)\n",
		       bch_btree_id_str(ni->btree_id), ni->level,
		       ni->min.inode, ni->min.offset, ni->max.inode, ni->max.offset,
		       ni->dev, ni->sector, b, off, u64s, bch_csum_type_name(type));
		for (i = 0; i < nbytes; i++) {
			size_t at = off + hdr + rnd_below(key_bytes);
			uint8_t old = p[at], x = (uint8_t)(1 + rnd_below(255));

			p[at] ^= x;
			printf("  key byte %zu (image byte %" PRIu64 "): %02x -> %02x\n",
			       at - off - hdr, start + at, old, p[at]);
		}
		if (bch_checksum(type, bch_nonce_btree(off, le64_to_cpu(bs->seq),
						       le64_to_cpu(bs->journal_seq)),
				 NULL, p + off + 16, bytes - 16, &csum)) {
			fprintf(stderr, "damage: checksum type %u\n", type);
			return 1;
		}
		bch_csum_to_bytes(csum, p + off);
	}

	if (pwrite(fd, p, node_bytes, (off_t)start) != (ssize_t)node_bytes || fsync(fd)) {
		fprintf(stderr, "damage: writing the node: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	printf("RANGE %s %" PRIu64 ":%" PRIu64 " %" PRIu64 ":%" PRIu64 "\n",
	       bch_btree_id_str(ni->btree_id), ni->min.inode, ni->min.offset,
	       ni->max.inode, ni->max.offset);
	free(p);
	free(ns.v);
	return 0;
}

/* ---- check ---- */

static int pos_cmp(struct bpos_h a, struct bpos_h b)
{
	if (a.inode != b.inode)
		return a.inode < b.inode ? -1 : 1;
	if (a.offset != b.offset)
		return a.offset < b.offset ? -1 : 1;
	return 0;
}

static int parse_pos(const char *s, struct bpos_h *p)
{
	char *end;

	p->snapshot = 0;
	p->inode = strtoull(s, &end, 0);
	if (*end != ':')
		return -1;
	p->offset = strtoull(end + 1, &end, 0);
	return *end ? -1 : 0;
}

static int parse_btree(const char *s)
{
	unsigned id;

	for (id = 0; id < BTREE_ID_NR; id++)
		if (!strcmp(s, bch_btree_id_str(id)))
			return (int)id;
	return -1;
}

static struct bch_fs *open_ro(const char *img)
{
	struct bch_fs_opts o = { .read_only = true };
	struct printbuf err = PRINTBUF;
	struct bch_fs *c = NULL;
	char *devs[1] = { (char *)img };
	int ret = bch_fs_open(devs, 1, &o, &c, &err);

	if (ret) {
		fprintf(stderr, "damage check: cannot open %s: %s\n%s", img, bch_err_str(ret),
			printbuf_str(&err));
		exit(2);
	}
	printbuf_exit(&err);
	return c;
}

/* Compare the data of @inum (@size bytes) in both filesystems. */
static int same_data(struct bch_fs *a, struct bch_fs *b, uint64_t inum, uint64_t size,
		     char *why, size_t why_len)
{
	static uint8_t ba[1 << 20], bb[1 << 20];
	struct printbuf err = PRINTBUF;
	uint64_t off = 0;

	while (off < size) {
		size_t len = size - off < sizeof(ba) ? (size_t)(size - off) : sizeof(ba);
		ssize_t ra = bch_read(a, inum, off, ba, len, &err);
		ssize_t rb;

		if (ra < 0) {
			/* unreadable in the original: nothing to hold the repair to */
			printbuf_exit(&err);
			return 1;
		}
		rb = bch_read(b, inum, off, bb, len, &err);
		if (rb < 0) {
			snprintf(why, why_len, "read error at byte %" PRIu64 ": %s", off,
				 bch_err_str((int)rb));
			printbuf_exit(&err);
			return 0;
		}
		if (ra != rb || memcmp(ba, bb, (size_t)ra)) {
			size_t i = 0;

			while (i < (size_t)ra && i < (size_t)rb && ba[i] == bb[i])
				i++;
			snprintf(why, why_len, "data differs at byte %" PRIu64, off + i);
			printbuf_exit(&err);
			return 0;
		}
		if (!ra)
			break;
		off += (uint64_t)ra;
	}
	printbuf_exit(&err);
	return 1;
}

static int do_check(const char *orig, const char *rep, const char *btree,
		    const char *smin, const char *smax)
{
	struct bpos_h min, max;
	int id = parse_btree(btree);
	struct bch_fs *a, *b;
	struct printbuf err = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	unsigned long checked = 0, touched = 0, lost = 0;
	int ret;

	if (id < 0 || parse_pos(smin, &min) || parse_pos(smax, &max)) {
		fprintf(stderr, "damage check: bad btree or range\n");
		return 2;
	}
	a = open_ro(orig);
	b = open_ro(rep);

	bch_btree_iter_init(&iter, a, BTREE_ID_INODES, POS_H_MIN, &err);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
		struct bch_inode_unpacked ia, ib;
		uint64_t inum = k->k.p.inode;
		char why[160];
		int r;

		if (k->k.type != BCH_INODE_FS || bch_inode_unpack(k, &ia) ||
		    !S_ISREG(ia.bi_mode)) {
			bch_btree_iter_advance(&iter);
			continue;
		}
		if ((id == BTREE_ID_INODES &&
		     pos_cmp(min, POS_H(inum, 0)) <= 0 && pos_cmp(POS_H(inum, 0), max) <= 0) ||
		    (id == BTREE_ID_EXTENTS &&
		     pos_cmp(min, POS_H(inum, UINT64_MAX)) <= 0 &&
		     pos_cmp(POS_H(inum, 0), max) <= 0)) {
			touched++;
			bch_btree_iter_advance(&iter);
			continue;
		}
		checked++;
		r = bch_inode_get(b, inum, &ib, NULL);
		if (r) {
			printf("lost: inode %" PRIu64 " (%" PRIu64 " bytes): %s in the repaired image\n",
			       inum, ia.bi_size, r == -ENOENT ? "missing" : bch_err_str(r));
			lost++;
		} else if (!S_ISREG(ib.bi_mode)) {
			printf("lost: inode %" PRIu64 ": mode %o became %o\n", inum,
			       ia.bi_mode, ib.bi_mode);
			lost++;
		} else if (ia.bi_size != ib.bi_size) {
			printf("lost: inode %" PRIu64 ": size %" PRIu64 " became %" PRIu64 "\n",
			       inum, ia.bi_size, ib.bi_size);
			lost++;
		} else if (!same_data(a, b, inum, ia.bi_size, why, sizeof(why))) {
			printf("lost: inode %" PRIu64 ": %s\n", inum, why);
			lost++;
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	if (ret) {
		fprintf(stderr, "damage check: walking the inodes of %s: %s\n%s", orig,
			bch_err_str(ret), printbuf_str(&err));
		lost++;
	}
	printbuf_exit(&err);
	bch_fs_close(a);
	bch_fs_close(b);
	printf("checked %lu files (%lu touched, skipped), %lu lost\n", checked, touched, lost);
	return lost ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "check"))
		return do_check(argv[2], argv[3], argv[4], argv[5], argv[6]);
	if (argc == 4 && !strcmp(argv[3], "--interior"))
		return do_damage_interior(argv[1], strtoull(argv[2], NULL, 0));
	if (argc == 3 || argc == 4)
		return do_damage(argv[1], strtoull(argv[2], NULL, 0),
				 argc == 4 ? (unsigned)strtoul(argv[3], NULL, 0) : 0);
	fprintf(stderr, "usage: damage IMAGE SEED [BYTES]\n"
			"       damage IMAGE SEED --interior\n"
			"       damage check ORIG REPAIRED BTREE MIN MAX\n");
	return 2;
}
