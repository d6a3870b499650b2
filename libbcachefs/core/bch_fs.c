// SPDX-License-Identifier: GPL-2.0
/*
 * What every layer of the engine may ask of the open filesystem
 * (core/bch_fs.h): read a member device, the context key checks need,
 * and writing the superblock of every member at once.
 */
#include <errno.h>
#include <stdlib.h>

#include "bkey/bkey_types.h"
#include "core/bch_fs.h"
#include "dev/dev.h"
#include "dev/super.h"
#include "format/format.h"
#include "util/util.h"

static bool fs_dev_geom(void *priv, unsigned dev, struct bch_dev_geom *g)
{
	struct bch_fs *c = priv;
	struct bch_member_dev *d = dev < BCH_FS_MAX_DEVS ? c->devs[dev] : NULL;

	if (!d)
		return false;
	g->nbuckets	= d->nbuckets;
	g->bucket_size	= d->bucket_size;
	g->first_bucket	= d->first_bucket;
	return true;
}

static bool fs_bucket_gen(void *priv, unsigned dev, uint64_t bucket, uint8_t *gen)
{
	struct bch_fs *c = priv;
	struct bch_member_dev *d = dev < BCH_FS_MAX_DEVS ? c->devs[dev] : NULL;

	if (!d || !d->bucket_gens || bucket >= d->nbuckets)
		return false;
	*gen = d->bucket_gens[bucket];
	return true;
}

void bch_fs_key_ctx(struct bch_fs *c, struct bkey_fs_ctx *ctx)
{
	*ctx = (struct bkey_fs_ctx) {
		.nr_devices	 = c->nr_devices,
		.dev_geom	 = fs_dev_geom,
		.bucket_gen	 = fs_bucket_gen,
		.priv		 = c,
		.have_key	 = c->have_key,
		.btree_node_size = c->btree_node_size,
	};
}

int bch_fs_sb_write_all(struct bch_fs *c, struct bch_sb **sbs, struct printbuf *err)
{
	unsigned i;
	int ret = 0;

	/* every image validated before anything is written */
	for (i = 0; i < BCH_FS_MAX_DEVS && !ret; i++) {
		struct printbuf why = PRINTBUF;

		if (!sbs[i])
			continue;
		/* the version on disk is kept unless an upgrade was asked for */
		if (c->sb_version_disk && c->sb_version_disk < le64_to_cpu(sbs[i]->version) &&
		    !c->opts.version_upgrade)
			sbs[i]->version = cpu_to_le64(c->sb_version_disk);
		ret = bch_sb_validate(sbs[i], &why);
		if (ret)
			pr_buf(err, "%s: new superblock is invalid: %s\n", c->devs[i]->io->path,
			       printbuf_str(&why));
		printbuf_exit(&why);
	}
	/* what the superblocks refer to must be durable first */
	for (i = 0; i < BCH_FS_MAX_DEVS && !ret; i++)
		if (sbs[i])
			ret = dev_flush(c->devs[i]->io);
	for (i = 0; i < BCH_FS_MAX_DEVS && !ret; i++)
		if (sbs[i]) {
			ret = bch_sb_write(c->devs[i]->io, sbs[i], err);
			if (!ret)
				ret = dev_flush(c->devs[i]->io);
		}
	if (!ret) {
		for (i = 0; i < BCH_FS_MAX_DEVS; i++) {
			struct bch_member_dev *ca = c->devs[i];

			if (!sbs[i])
				continue;
			if (c->sb == ca->sb)
				c->sb = sbs[i];
			free(ca->sb);
			ca->sb = sbs[i];
			ca->sb_bytes = bch_sb_bytes(sbs[i]);
			sbs[i] = NULL;
		}
		c->sb_bytes = bch_sb_bytes(c->sb);
	}
	for (i = 0; i < BCH_FS_MAX_DEVS; i++) {
		free(sbs[i]);
		sbs[i] = NULL;
	}
	return ret;
}

int bch_dev_read(struct bch_fs *c, unsigned dev, void *buf, size_t bytes, uint64_t sector)
{
	struct bch_member_dev *ca = dev < BCH_FS_MAX_DEVS ? c->devs[dev] : NULL;

	if (!ca || !ca->io)
		return -ENXIO;
	if (sector > (UINT64_MAX >> BCH_SECTOR_SHIFT) ||
	    (sector << BCH_SECTOR_SHIFT) > ca->io->size ||
	    bytes > ca->io->size - (sector << BCH_SECTOR_SHIFT))
		return -ERANGE;
	return dev_pread(ca->io, buf, bytes, sector << BCH_SECTOR_SHIFT);
}
