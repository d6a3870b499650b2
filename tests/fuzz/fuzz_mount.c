// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the read path of the mount without FUSE. Input:
 * the image encoding of fuzz.h, as fuzz_image (flags byte, devices, runs
 * of bytes); flag bit 1 gives only the first device (degraded), bit 2
 * opens the filesystem read-write.
 *
 * What `bcachefs mount` does, in order: bch_fs_open() with every node
 * verified (c->opts.verify, errors=continue), the check of every root and
 * interior node (bch_btree_verify_interior()), the bucket gens, and
 * read-write the engine started (every node read, damaged leaves marked)
 * unless the damage stopped the writes. Then what the FUSE operations
 * ask, through fsread.h and fsops.h: a walk of the tree from the root
 * (bounded: directories, entries, bytes) with readdir, the hash lookup of
 * every name, the inode, the file data, symlink targets and xattrs; read-
 * write, a file created, written, given an xattr and unlinked, the repairs
 * that reads queued (bch_data_repair()) and the clean stop (a checkpoint).
 * Every error is an answer; only a crash, a hang or a sanitizer report is
 * a finding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#include "admin/data_job.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "core/integrity.h"
#include "format/format.h"
#include "fs/fs.h"
#include "fs/fsops.h"
#include "fs/fsread.h"
#include "util/util.h"

#define IMAGE_DEGRADED	(1U << 1)
#define IMAGE_RW	(1U << 2)

/* bounds of the walk: a damaged image must not cost more than this */
#define WALK_DIRS	32
#define WALK_ENTRIES	256
#define WALK_BYTES	(1U << 20)

static int fds[FUZZ_IMAGE_MAX_DEVS] = { -1, -1 };
static char paths[FUZZ_IMAGE_MAX_DEVS][32];

static void log_fn(void *arg, const char *msg)
{
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "%s\n", msg);
}

struct entry {
	char		name[BCH_NAME_MAX + 1];
	size_t		len;
	uint64_t	inum;
};

struct walk {
	struct bch_fs	*c;
	struct entry	*e;
	size_t		nr;
	uint64_t	dirs[WALK_DIRS];
	unsigned	nr_dirs;
	size_t		bytes;
	const struct bch_inode_unpacked *xinode;	/* whose xattrs are listed */
};

static int readdir_fn(void *arg, const char *name, size_t len, uint64_t inum,
		      unsigned d_type, uint64_t cookie)
{
	struct walk *w = arg;

	if (w->nr == WALK_ENTRIES)
		return 1;
	memcpy(w->e[w->nr].name, name, len);
	w->e[w->nr].name[len] = 0;
	w->e[w->nr].len = len;
	w->e[w->nr].inum = inum;
	w->nr++;
	return 0;
}

static int xattr_fn(void *arg, unsigned x_type, const char *name, size_t name_len,
		    const void *val, size_t val_len)
{
	struct walk *w = arg;
	char full[300], v[64];

	if (bch_xattr_full_name(x_type, name, name_len, full, sizeof(full)) > 0)
		bch_xattr_get(w->c, w->xinode, full, v, sizeof(v), NULL);
	return 0;
}

/* What stat, open/read, readlink and listxattr/getxattr ask of inode @inum. */
static void visit_inode(struct walk *w, uint64_t inum)
{
	struct bch_inode_unpacked inode;
	struct bch_stat st;
	struct printbuf err = PRINTBUF;
	char target[4096];

	if (bch_inode_get(w->c, inum, &inode, &err))
		goto out;
	bch_inode_stat(w->c, &inode, &st);
	if (S_ISREG(inode.bi_mode) && w->bytes < WALK_BYTES) {
		struct bch_file f;
		static uint8_t data[64 << 10];
		uint64_t off = 0;
		ssize_t n;

		bch_file_open(w->c, &inode, &f);
		while (w->bytes < WALK_BYTES &&
		       (n = bch_file_read(&f, off, data, sizeof(data), NULL, &err)) > 0) {
			off += (uint64_t)n;
			w->bytes += (size_t)n;
		}
		bch_file_close(&f);
	} else if (S_ISLNK(inode.bi_mode)) {
		bch_readlink(w->c, &inode, target, sizeof(target), &err);
	}
	w->xinode = &inode;
	bch_xattr_list(w->c, inum, xattr_fn, w, NULL, &err);
out:
	printbuf_exit(&err);
}

static void walk_tree(struct bch_fs *c)
{
	struct walk w = { .c = c };
	struct printbuf err = PRINTBUF;

	w.e = calloc(WALK_ENTRIES, sizeof(*w.e));
	if (!w.e)
		abort();
	w.dirs[w.nr_dirs++] = BCACHEFS_ROOT_INO;
	for (unsigned d = 0; d < w.nr_dirs; d++) {
		struct bch_inode_unpacked dir;
		size_t first = w.nr;

		visit_inode(&w, w.dirs[d]);
		if (bch_inode_get(c, w.dirs[d], &dir, &err) || !S_ISDIR(dir.bi_mode))
			continue;
		bch_readdir(c, w.dirs[d], 0, readdir_fn, &w, NULL, &err);
		for (size_t i = first; i < w.nr; i++) {
			struct bch_inode_unpacked child;
			uint64_t inum;
			unsigned d_type;

			/* the kernel's lookup of each name readdir gave */
			if (bch_lookup(c, &dir, w.e[i].name, w.e[i].len, BCH_LOOKUP_SCAN,
				       &inum, &d_type, &err))
				continue;
			if (bch_inode_get(c, inum, &child, &err))
				continue;
			if (S_ISDIR(child.bi_mode)) {
				bool seen = false;

				for (unsigned j = 0; j < w.nr_dirs; j++)
					seen |= w.dirs[j] == inum;
				if (!seen && w.nr_dirs < WALK_DIRS)
					w.dirs[w.nr_dirs++] = inum;
			} else {
				visit_inode(&w, inum);
			}
		}
		printbuf_reset(&err);
	}
	free(w.e);
	printbuf_exit(&err);
}

/* A few writes where the mount would take them, then the repairs and the stop. */
static void write_some(struct bch_fs *c)
{
	struct bch_creds cr = { .uid = 0, .gid = 0, .umask = 022 };
	struct bch_inode_unpacked ino;
	struct bch_repair_req r;
	struct printbuf err = PRINTBUF;
	static const char data[4096] = "fuzz";

	if (!bch_fs_create(c, BCACHEFS_ROOT_INO, "fuzz", 4, S_IFREG | 0644, 0, NULL, &cr, &ino, &err)) {
		bch_fs_write(c, ino.bi_inum, 0, data, sizeof(data), 0, NULL, &err);
		bch_fs_xattr_set(c, ino.bi_inum, "user.fuzz", "v", 1, 0, &err);
		bch_fs_unlink(c, BCACHEFS_ROOT_INO, "fuzz", 4, false, NULL, NULL, NULL, &err);
	}
	bch_fs_fsync(c, &err);
	while (!bch_fs_writes_stopped(c) && bch_fs_rw(c) && bch_fs_repair_take(c, &r)) {
		printbuf_reset(&err);
		bch_data_repair(c, &r, &err);
		log_fn(NULL, printbuf_str(&err));
	}
	printbuf_reset(&err);
	if (!bch_fs_writes_stopped(c))
		bch_fs_rw_stop(c, &err);
	printbuf_exit(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct bch_fs_opts opts = {
		.degraded = true, .verify = true, .errors = BCH_ON_ERROR_CONTINUE + 1,
	};
	struct printbuf err = PRINTBUF;
	struct bch_fs *c = NULL;
	char *devs[FUZZ_IMAGE_MAX_DEVS];
	uint64_t dev_bytes[FUZZ_IMAGE_MAX_DEVS];
	unsigned flags, nr, i;

	flags = fz_u8(&in);
	fuzz_csum_any(flags & FUZZ_CSUM_ANY);
	opts.read_only = !(flags & IMAGE_RW);
	nr = 1 + (fz_u8(&in) & 1);
	for (i = 0; i < nr; i++) {
		uint32_t sectors = fz_u32(&in);

		if (sectors < FUZZ_IMAGE_MIN_SECTORS)
			sectors = FUZZ_IMAGE_MIN_SECTORS;
		if (sectors > FUZZ_IMAGE_MAX_SECTORS)
			sectors = FUZZ_IMAGE_MAX_SECTORS;
		dev_bytes[i] = (uint64_t)sectors << 9;
		if (fds[i] < 0) {
			fds[i] = memfd_create("fuzz-mount", 0);
			if (fds[i] < 0)
				abort();
			snprintf(paths[i], sizeof(paths[i]), "/proc/self/fd/%d", fds[i]);
		}
		if (ftruncate(fds[i], 0) || ftruncate(fds[i], (off_t)dev_bytes[i]))
			abort();
		devs[i] = paths[i];
	}
	while (in.n >= FUZZ_IMAGE_REC_HDR) {
		unsigned dev = fz_u8(&in) & 1;
		uint64_t off = (uint64_t)fz_u32(&in) << 9;
		size_t want = fz_u16(&in), len;
		const uint8_t *p = fz_bytes(&in, want, &len);

		if (dev >= nr || off >= dev_bytes[dev])
			continue;
		if (len > dev_bytes[dev] - off)
			len = (size_t)(dev_bytes[dev] - off);
		if (pwrite(fds[dev], p, len, (off_t)off) != (ssize_t)len)
			abort();
	}

	if (bch_fs_open(devs, flags & IMAGE_DEGRADED ? 1 : nr, &opts, &c, &err))
		goto out;
	c->integ.log = log_fn;
	if (BCH_SB_INITIALIZED(c->sb) && c->journal.nr_entries) {
		if (bch_btree_verify_interior(c))
			c->opts.read_only = true;	/* as -o ro: what verifies */
		printbuf_reset(&err);
		bch_btree_read_bucket_gens(c, &err);
		if (!c->opts.read_only && !c->integ.panic) {
			printbuf_reset(&err);
			bch_btree_cache_exit(c);	/* (as cmd_mount: read again, repaired) */
			if (!bch_fs_rw_start(c, &err)) {
				if (bch_fs_writes_stopped(c))
					bch_btree_rw_free(c);
				else
					bch_fs_rw_set_batch(c, true);
			}
		}
		walk_tree(c);
		if (c->rw)
			write_some(c);
	}
	bch_fs_close(c);
out:
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "%s", printbuf_str(&err));
	printbuf_exit(&err);
	return 0;
}
