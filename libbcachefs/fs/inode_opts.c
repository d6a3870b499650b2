// SPDX-License-Identifier: GPL-2.0
/*
 * Per-inode options: names, parsing and text (spec 10 §7.1-7.2).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/bch_fs.h"
#include "dev/dev.h"
#include "dev/super.h"
#include "format/format.h"
#include "fs/inode_opts.h"
#include "util/util.h"

enum opt_kind { OPT_CHOICE, OPT_UINT, OPT_TARGET };

static const char *const csum_names[] = { "none", "crc32c", "crc64", NULL };
static const char *const compr_names[] = { "none", "lz4", "gzip", "zstd", NULL };

static const struct {
	const char		*name;
	enum opt_kind		kind;
	const char *const	*choices;
} opts[BCH_INODE_OPT_NR] = {
	[BCH_INODE_OPT_data_checksum]		= { "data_checksum",		OPT_CHOICE, csum_names },
	[BCH_INODE_OPT_compression]		= { "compression",		OPT_CHOICE, compr_names },
	[BCH_INODE_OPT_background_compression]	= { "background_compression",	OPT_CHOICE, compr_names },
	[BCH_INODE_OPT_data_replicas]		= { "data_replicas",		OPT_UINT,   NULL },
	[BCH_INODE_OPT_promote_target]		= { "promote_target",		OPT_TARGET, NULL },
	[BCH_INODE_OPT_foreground_target]	= { "foreground_target",	OPT_TARGET, NULL },
	[BCH_INODE_OPT_background_target]	= { "background_target",	OPT_TARGET, NULL },
};

/* data_replicas takes [1, 4) as the 2018 option table says (doc/tools.md §2.1) */
#define REPLICAS_OPT_MAX	4

const char *bch_inode_opt_name(unsigned id)
{
	return id < BCH_INODE_OPT_NR ? opts[id].name : NULL;
}

int bch_inode_opt_lookup(const char *name)
{
	for (unsigned i = 0; i < BCH_INODE_OPT_NR; i++)
		if (!strcmp(name, opts[i].name))
			return (int)i;
	return -1;
}

uint64_t bch_inode_opt_get(const struct bch_inode_unpacked *u, unsigned id)
{
	switch (id) {
	case BCH_INODE_OPT_data_checksum:		return u->bi_data_checksum;
	case BCH_INODE_OPT_compression:			return u->bi_compression;
	case BCH_INODE_OPT_background_compression:	return u->bi_background_compression;
	case BCH_INODE_OPT_data_replicas:		return u->bi_data_replicas;
	case BCH_INODE_OPT_promote_target:		return u->bi_promote_target;
	case BCH_INODE_OPT_foreground_target:		return u->bi_foreground_target;
	case BCH_INODE_OPT_background_target:		return u->bi_background_target;
	}
	return 0;
}

void bch_inode_opt_set(struct bch_inode_unpacked *u, unsigned id, uint64_t stored)
{
	switch (id) {
	case BCH_INODE_OPT_data_checksum:
		u->bi_data_checksum = (uint8_t)stored;
		break;
	case BCH_INODE_OPT_compression:
		u->bi_compression = (uint8_t)stored;
		break;
	case BCH_INODE_OPT_background_compression:
		u->bi_background_compression = (uint8_t)stored;
		break;
	case BCH_INODE_OPT_data_replicas:
		u->bi_data_replicas = (uint8_t)stored;
		break;
	case BCH_INODE_OPT_promote_target:
		u->bi_promote_target = (uint16_t)stored;
		break;
	case BCH_INODE_OPT_foreground_target:
		u->bi_foreground_target = (uint16_t)stored;
		break;
	case BCH_INODE_OPT_background_target:
		u->bi_background_target = (uint16_t)stored;
		break;
	}
}

/* ---- targets ---- */

/* Is @path the member device @i (the same name, or the same file or node)? */
static bool path_is_member(struct bch_fs *c, unsigned i, const char *path)
{
	struct stat a, b;

	if (!bch_dev_present(c, i) || !c->devs[i]->io->path)
		return false;
	if (!strcmp(path, c->devs[i]->io->path))
		return true;
	if (stat(path, &a) || stat(c->devs[i]->io->path, &b))
		return false;
	if (S_ISBLK(a.st_mode) && S_ISBLK(b.st_mode))
		return a.st_rdev == b.st_rdev;
	return S_ISREG(a.st_mode) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Group index of path "a.b.c" (each label under the previous), or -1:
 * the path of every live group compared with it (deleted groups print as
 * "invalid group N", which no label path equals).
 */
static int group_lookup(const struct bch_sb *sb, const char *path)
{
	char label[33];
	int ret = -1;

	for (unsigned g = 0; ret < 0 && !bch_sb_disk_group_label(sb, g, label); g++) {
		struct printbuf p = PRINTBUF;

		bch_sb_disk_group_path(&p, sb, g);
		if (!strcmp(printbuf_str(&p), path) && strncmp(path, "invalid group ", 14))
			ret = (int)g;
		printbuf_exit(&p);
	}
	return ret;
}

static int parse_target(struct bch_fs *c, const char *s, uint64_t *v, struct printbuf *err)
{
	int g;

	if (!*s || !strcmp(s, "none")) {
		*v = BCH_TARGET_NONE;
		return 0;
	}
	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
		if (path_is_member(c, i, s)) {
			*v = BCH_TARGET_DEV_START + i;
			return 0;
		}
	g = group_lookup(c->sb, s);
	if (g < 0 || (uint64_t)g + BCH_TARGET_GROUP_START >= UINT16_MAX) {
		pr_buf(err, "bad target '%s': not none, a member device or a disk group", s);
		return -EINVAL;
	}
	*v = BCH_TARGET_GROUP_START + (unsigned)g;
	return 0;
}

static void target_to_text(struct printbuf *out, struct bch_fs *c, uint64_t v)
{
	if (v == BCH_TARGET_NONE) {
		pr_str(out, "none");
	} else if (v < BCH_TARGET_GROUP_START) {
		unsigned i = (unsigned)v - BCH_TARGET_DEV_START;

		if (bch_dev_present(c, i) && c->devs[i]->io->path) {
			/* the path as opened may be relative to where the mount started */
			char *abs = realpath(c->devs[i]->io->path, NULL);

			pr_str(out, abs ?: c->devs[i]->io->path);
			free(abs);
		} else
			pr_buf(out, "offline device %u", i);
	} else {
		bch_sb_disk_group_path(out, c->sb, (unsigned)(v - BCH_TARGET_GROUP_START));
	}
}

/* ---- parse and print ---- */

int bch_inode_opt_parse(struct bch_fs *c, unsigned id, const void *val, size_t len,
			uint64_t *stored, struct printbuf *err)
{
	char s[256];
	uint64_t v = 0;
	int ret = 0;

	if (id >= BCH_INODE_OPT_NR)
		return -EINVAL;
	if (len >= sizeof(s) || (len && memchr(val, 0, len))) {
		pr_buf(err, "%s: value too long or with a NUL byte", opts[id].name);
		return -EINVAL;
	}
	memcpy(s, val, len);
	s[len] = '\0';

	switch (opts[id].kind) {
	case OPT_CHOICE:
		ret = -EINVAL;
		for (unsigned i = 0; opts[id].choices[i]; i++)
			if (!strcmp(s, opts[id].choices[i])) {
				v = i;
				ret = 0;
			}
		if (ret)
			pr_buf(err, "%s: '%s' is not a choice", opts[id].name, s);
		break;
	case OPT_UINT: {
		char *e;

		v = strtoull(s, &e, 10);
		if (!*s || *e || v < 1 || v >= REPLICAS_OPT_MAX) {
			pr_buf(err, "%s: '%s' is not a number from 1 to %u", opts[id].name, s,
			       REPLICAS_OPT_MAX - 1);
			ret = -EINVAL;
		}
		break;
	}
	case OPT_TARGET:
		ret = parse_target(c, s, &v, err);
		break;
	}
	if (!ret)
		*stored = v + 1;
	return ret;
}

void bch_inode_opt_to_text(struct printbuf *out, struct bch_fs *c, unsigned id, uint64_t stored)
{
	uint64_t v = stored - 1;

	if (id >= BCH_INODE_OPT_NR || !stored)
		return;
	switch (opts[id].kind) {
	case OPT_CHOICE: {
		unsigned n = 0;

		while (opts[id].choices[n])
			n++;
		if (v < n)
			pr_str(out, opts[id].choices[v]);
		else
			pr_buf(out, "invalid %llu", (unsigned long long)v);
		break;
	}
	case OPT_UINT:
		pr_u64(out, v);
		break;
	case OPT_TARGET:
		target_to_text(out, c, v);
		break;
	}
}

ssize_t bch_inode_opt_xattr_get(struct bch_fs *c, const struct bch_inode_unpacked *u,
				const char *full_name, void *buf, size_t size)
{
	struct printbuf t = PRINTBUF;
	uint64_t stored;
	ssize_t ret;
	int id;

	if (strncmp(full_name, BCH_INODE_OPT_XATTR_PREFIX, strlen(BCH_INODE_OPT_XATTR_PREFIX)))
		return -EINVAL;
	id = bch_inode_opt_lookup(full_name + strlen(BCH_INODE_OPT_XATTR_PREFIX));
	if (id < 0)
		return -EINVAL;
	stored = bch_inode_opt_get(u, (unsigned)id);
	if (!stored)
		return -ENODATA;
	bch_inode_opt_to_text(&t, c, (unsigned)id, stored);
	ret = (ssize_t)t.pos;
	if (size && t.pos > size)
		ret = -ERANGE;
	else if (size)
		memcpy(buf, printbuf_str(&t), t.pos);
	printbuf_exit(&t);
	return ret;
}

void bch_inode_opts_xattr_list(struct printbuf *out, const struct bch_inode_unpacked *u)
{
	for (unsigned i = 0; i < BCH_INODE_OPT_NR; i++)
		if (bch_inode_opt_get(u, i)) {
			pr_str(out, BCH_INODE_OPT_XATTR_PREFIX);
			pr_bytes(out, opts[i].name, strlen(opts[i].name) + 1);
		}
}
