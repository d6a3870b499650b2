// SPDX-License-Identifier: GPL-2.0
/*
 * The superblocks of a running engine: the one place that writes them
 * (every present member, seq + 1, each device's own index, layout and
 * journal field, the allocator's replicas table, CLEAN). See
 * btree_update.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "btree/engine.h"
#include "btree/sb_write.h"
#include "core/bch_fs.h"
#include "dev/super.h"

/* See sb_write.h. */
int bch_rw_sb_write_all(struct bch_fs *c, bool clean, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	struct bch_sb *sbs[BCH_FS_MAX_DEVS] = { NULL };
	uint8_t *replicas = NULL;
	size_t replicas_bytes = bch_replicas_field_build(&rw->a.replicas, &replicas);
	uint64_t seq = le64_to_cpu(c->sb->seq) + 1;
	unsigned i;
	int ret = 0;

	if (!replicas_bytes) {
		pr_str(err, "superblock: a replicas entry has more than 3 devices\n");
		return -EINVAL;
	}
	for (i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *ca = c->devs[i];
		const struct bch_sb_field *jf;
		struct bch_sb *sb;

		if (!ca || !ca->io || !ca->sb)
			continue;
		sb = xmalloc(bch_sb_bytes(c->sb));
		memcpy(sb, c->sb, bch_sb_bytes(c->sb));
		sb->seq = cpu_to_le64(seq);
		SET_BCH_SB_CLEAN(sb, clean);
		sb->dev_idx = ca->sb->dev_idx;
		memcpy(&sb->layout, &ca->sb->layout, sizeof(sb->layout));
		sb->offset = ca->sb->offset;
		jf = bch_sb_field_find(ca->sb, BCH_SB_FIELD_journal);
		if (jf)
			bch_sb_field_replace(&sb, BCH_SB_FIELD_journal, jf, bch_sb_field_bytes(jf));
		else
			bch_sb_field_replace(&sb, BCH_SB_FIELD_journal, NULL, 0);
		bch_sb_field_replace(&sb, BCH_SB_FIELD_replicas, replicas, replicas_bytes);
		sbs[i] = sb;
	}
	ret = bch_fs_sb_write_all(c, sbs, err);
	if (!ret)
		rw->a.replicas.changed = false;
	free(replicas);
	return ret;
}

/* See sb_write.h. */
int bch_rw_mark_unclean(struct bch_fs *c, struct printbuf *err)
{
	struct bch_fs_rw *rw = c->rw;
	int ret;

	if (rw->unclean)
		return 0;
	ret = bch_rw_sb_write_all(c, false, err);
	if (!ret)
		rw->unclean = true;
	return ret;
}

/* See sb_write.h. */
int bch_rw_replicas_sync(struct bch_fs *c, struct printbuf *err)
{
	return c->rw->a.replicas.changed ? bch_rw_sb_write_all(c, !c->rw->unclean, err) : 0;
}

int bch_fs_rw_mark_damaged(struct bch_fs *c, struct printbuf *err)
{
	return c->rw && !c->rw->failed ? bch_rw_mark_unclean(c, err) : 0;
}

int bch_fs_rw_write_sb(struct bch_fs *c, struct printbuf *err)
{
	if (!c->rw || c->rw->failed) {
		pr_str(err, "filesystem is not writable\n");
		return -EROFS;
	}
	return bch_rw_sb_write_all(c, !c->rw->unclean, err);
}
