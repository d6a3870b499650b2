// SPDX-License-Identifier: GPL-2.0
/*
 * Opening a filesystem (doc/format.md §2.12, doc/engine.md §2.1, §2.2, doc/format.md §9):
 *
 *   open every device -> read and validate its superblock -> check they
 *   belong together -> choose the newest superblock -> map devices to
 *   member slots, find the missing ones and decide whether we may start ->
 *   get the encryption key -> read the journal (journal.c).
 *
 * A read-only open opens every device O_RDONLY and never writes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bkey/bkey_types.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "codec/crypto.h"
#include "core/integrity.h"
#include "dev/dev.h"
#include "fs/io_write.h"
#include "util/errcode.h"
#include "format/format.h"
#include "fs/fs.h"
#include "journal/journal.h"
#include "dev/super.h"
#include "util/util.h"

/* A device given on the command line, before it is mapped to a member. */
struct opened_dev {
	const char		*path;
	struct bch_devio	*io;
	struct bch_sb_handle	sb;
	uint64_t		disk_version;	/* before bch_sb_upgrade_in_memory() */
};

static void opened_free(struct opened_dev *d, unsigned nr)
{
	unsigned i;

	for (i = 0; i < nr; i++) {
		if (d[i].io)
			dev_close(d[i].io);
		bch_sb_handle_free(&d[i].sb);
	}
	free(d);
}

static int open_one(struct opened_dev *d, const char *path, unsigned flags,
		    struct printbuf *err)
{
	int ret;

	d->path = path;
	ret = dev_open(path, flags, &d->io);
	if (ret) {
		pr_buf(err, "%s: cannot open: %s\n", path, bch_err_str(ret));
		return ret;
	}
	/*
	 * A copy must read (magic, checksum...) and validate: an invalid
	 * primary falls back to a backup like a bad checksum does (the
	 * message says "using the backup": fsck reports sb_primary_bad).
	 */
	ret = bch_sb_read_valid(d->io, &d->sb, err);
	switch (ret) {
	case 0:
		d->disk_version = le64_to_cpu(d->sb.sb->version);
		bch_sb_upgrade_in_memory(d->sb.sb);
		break;
	case -BCH_ERR_sb_bad_csum:
	case -BCH_ERR_sb_bad_csum_type:
	case -BCH_ERR_sb_too_big:
	case -BCH_ERR_sb_invalid:
	case -BCH_ERR_sb_layout_invalid:
		pr_buf(err, "%s: every superblock copy is damaged or invalid: "
		       "the filesystem cannot be opened (so fsck can neither check nor repair it); `bcachefs show-super -f all -l %s` "
		       "shows what the primary copy holds; restore the device from a backup\n", path, path);
		break;
	}
	return ret;
}

static const uint8_t zero_uuid[16];

static void pr_uuid_str(struct printbuf *out, const uint8_t *u)
{
	pr_uuid(out, u);
}

/* Every device must carry the same internal uuid (doc/format.md §2.12 step 3). */
static int check_same_fs(struct opened_dev *d, unsigned nr, struct printbuf *err)
{
	unsigned i;

	for (i = 1; i < nr; i++) {
		const struct bch_sb *a = d[0].sb.sb, *b = d[i].sb.sb;
		bool ext = memcmp(a->user_uuid.b, b->user_uuid.b, 16) != 0;

		if (!memcmp(a->uuid.b, b->uuid.b, 16))
			continue;
		pr_buf(err, "%s and %s belong to different filesystems: %s uuid ",
		       d[0].path, d[i].path, ext ? "external" : "internal");
		pr_uuid_str(err, ext ? a->user_uuid.b : a->uuid.b);
		pr_str(err, " vs ");
		pr_uuid_str(err, ext ? b->user_uuid.b : b->uuid.b);
		pr_char(err, '\n');
		return -BCH_ERR_fs_mismatch;
	}
	return 0;
}

static unsigned pick_best(struct opened_dev *d, unsigned nr)
{
	unsigned i, best = 0;

	for (i = 1; i < nr; i++)
		if (le64_to_cpu(d[i].sb.sb->seq) > le64_to_cpu(d[best].sb.sb->seq))
			best = i;
	return best;
}

/* Check device @d against the chosen superblock @best (doc/format.md §2.12). */
static int check_member(struct opened_dev *d, const struct bch_sb *best,
			struct printbuf *err)
{
	const struct bch_sb *sb = d->sb.sb;
	unsigned idx = sb->dev_idx;
	const struct bch_sb *newer = le64_to_cpu(best->seq) > le64_to_cpu(sb->seq) ? best : sb;
	const struct bch_member *own = bch_sb_member(sb, idx);
	const struct bch_member *m = bch_sb_member(best, idx);
	unsigned __int128 need;

	if (!bch_sb_member_exists(newer, idx) || !m || !own ||
	    memcmp(m->uuid.b, own->uuid.b, 16)) {
		pr_buf(err, "%s: device %u has been removed from the filesystem (no member with its uuid ",
		       d->path, idx);
		pr_uuid_str(err, own ? own->uuid.b : zero_uuid);
		pr_str(err, ")\n");
		return -BCH_ERR_sb_invalid;
	}
	if (sb->block_size != best->block_size) {
		pr_buf(err, "%s: block size %u sectors differs from the filesystem's %u\n",
		       d->path, le16_to_cpu(sb->block_size), le16_to_cpu(best->block_size));
		return -BCH_ERR_sb_invalid;
	}
	need = (unsigned __int128)le64_to_cpu(m->nbuckets) * le16_to_cpu(m->bucket_size);
	if (need > (d->io->size >> BCH_SECTOR_SHIFT)) {
		pr_buf(err, "%s: device too small: %" PRIu64 " sectors, member %u needs %" PRIu64 " buckets of %u sectors\n",
		       d->path, d->io->size >> BCH_SECTOR_SHIFT, idx,
		       le64_to_cpu(m->nbuckets), le16_to_cpu(m->bucket_size));
		return -BCH_ERR_dev_too_small;
	}
	return 0;
}

static struct bch_member_dev *member_dev_new(const struct bch_sb *sb, unsigned idx)
{
	struct bch_member_dev *ca = xcalloc(1, sizeof(*ca));
	const struct bch_member *m = bch_sb_member(sb, idx);

	ca->idx = idx;
	ca->bucket_size = le16_to_cpu(m->bucket_size);
	ca->first_bucket = le16_to_cpu(m->first_bucket);
	ca->nbuckets = le64_to_cpu(m->nbuckets);
	return ca;
}

/* Move the opened devices into c->devs[] by member index. */
static int attach_devs(struct bch_fs *c, struct opened_dev *d, unsigned nr,
		       unsigned best, struct printbuf *err)
{
	struct bch_sb *best_sb = d[best].sb.sb;	/* moves to its member_dev below */
	unsigned i;
	int ret;

	for (i = 0; i < nr; i++) {
		unsigned idx = d[i].sb.sb->dev_idx;
		struct bch_member_dev *ca;

		ret = check_member(&d[i], best_sb, err);
		if (ret)
			return ret;
		if (c->devs[idx]) {
			pr_buf(err, "%s and %s are the same member device (index %u)\n",
			       c->devs[idx]->io->path, d[i].path, idx);
			return -BCH_ERR_dev_duplicate;
		}
		ca = member_dev_new(best_sb, idx);
		ca->io = d[i].io;
		ca->sb = d[i].sb.sb;
		ca->sb_bytes = d[i].sb.bytes;
		ca->sb_offset = d[i].sb.offset;
		d[i].io = NULL;
		d[i].sb.sb = NULL;
		c->devs[idx] = ca;
		if (i == best) {
			c->sb = ca->sb;
			c->sb_bytes = ca->sb_bytes;
			c->sb_version_disk = d[i].disk_version;
		}
	}
	return 0;
}

static bool dev_online(const struct bch_fs *c, unsigned idx)
{
	return idx < BCH_FS_MAX_DEVS && c->devs[idx] && c->devs[idx]->io;
}

/* Add slots (io NULL) for members that exist but were not given. */
static unsigned note_missing(struct bch_fs *c, struct printbuf *msg)
{
	unsigned i, nr = 0;

	for (i = 0; i < c->nr_devices; i++) {
		const struct bch_member *m = bch_sb_member(c->sb, i);
		unsigned state;

		if (!m || !bch_member_exists(m) || c->devs[i])
			continue;
		c->devs[i] = member_dev_new(c->sb, i);
		state = (unsigned)BCH_MEMBER_STATE(m);
		if (state != BCH_MEMBER_STATE_RW && state != BCH_MEMBER_STATE_RO)
			continue;
		pr_buf(msg, "%s%u (uuid ", nr ? ", " : "", i);
		pr_uuid_str(msg, m->uuid.b);
		pr_char(msg, ')');
		nr++;
	}
	return nr;
}

static const char *data_type_str(unsigned type)
{
	switch (type) {
	case BCH_DATA_JOURNAL:	return "journal";
	case BCH_DATA_BTREE:	return "btree (metadata)";
	case BCH_DATA_USER:	return "file data";
	default:		return bch_data_type_name(type) ?: "data";
	}
}

/* The replicas rule of doc/engine.md §2.2: may we start with these devices? */
static int check_replicas(struct bch_fs *c, struct printbuf *err)
{
	struct bch_replicas_iter it;
	const struct bch_replicas_entry *e;
	unsigned i, online, offline;

	bch_sb_replicas_iter_init(&it, c->sb);
	while ((e = bch_sb_replicas_next(&it))) {
		if (e->data_type != BCH_DATA_JOURNAL && e->data_type != BCH_DATA_BTREE &&
		    e->data_type != BCH_DATA_USER)
			continue;
		for (online = offline = i = 0; i < e->nr; i++)
			dev_online(c, e->devs[i]) ? online++ : offline++;
		if (online && (!offline || c->opts.degraded))
			continue;
		pr_buf(err, "insufficient devices: the %s kept on device%s [", data_type_str(e->data_type),
		       e->nr > 1 ? "s" : "");
		for (i = 0; i < e->nr; i++)
			pr_buf(err, "%s%u", i ? " " : "", e->devs[i]);
		pr_buf(err, "] %s: missing ", online ? "has a missing copy" : "cannot be read");
		for (offline = i = 0; i < e->nr; i++) {
			const struct bch_member *m = bch_sb_member(c->sb, e->devs[i]);

			if (dev_online(c, e->devs[i]))
				continue;
			pr_buf(err, "%smember %u", offline++ ? ", " : "", e->devs[i]);
			if (m) {
				pr_str(err, " (uuid ");
				pr_uuid_str(err, m->uuid.b);
				pr_char(err, ')');
			}
		}
		pr_buf(err, "; give every device of the filesystem (%u member%s)%s\n",
		       bch_sb_nr_live_members(c->sb), bch_sb_nr_live_members(c->sb) == 1 ? "" : "s",
		       online ? ", or open degraded" : "");
		return -BCH_ERR_dev_missing;
	}
	return 0;
}

static int check_devices(struct bch_fs *c, struct printbuf *err)
{
	struct printbuf missing = PRINTBUF;
	unsigned nr = note_missing(c, &missing);
	int ret = 0;

	if (nr && !c->opts.degraded) {
		pr_buf(err, "insufficient devices: %u member device%s missing: %s\n",
		       nr, nr > 1 ? "s are" : " is", printbuf_str(&missing));
		ret = -BCH_ERR_dev_missing;
	}
	printbuf_exit(&missing);
	return ret ?: check_replicas(c, err);
}

static void fill_geometry(struct bch_fs *c)
{
	const struct bch_sb *sb = c->sb;

	memcpy(c->user_uuid, sb->user_uuid.b, 16);
	memcpy(c->internal_uuid, sb->uuid.b, 16);
	c->nr_devices = sb->nr_devices;
	c->block_size = le16_to_cpu(sb->block_size);
	c->btree_node_size = (unsigned)BCH_SB_BTREE_NODE_SIZE(sb);
	c->meta_csum_type = (unsigned)BCH_SB_META_CSUM_TYPE(sb);
	c->data_csum_type = (unsigned)BCH_SB_DATA_CSUM_TYPE(sb);
	c->str_hash_type = (unsigned)BCH_SB_STR_HASH_TYPE(sb);
}

/* ---- the encryption key (doc/format.md §9, doc/tools.md §7) --------------------------- */

static int unwrap_with(struct bch_fs *c, const struct bch_sb_field_crypt *cf,
		       const struct bch_key *wrapping)
{
	return bch_unwrap_master_key((const uint8_t *)&cf->key, wrapping,
				     c->internal_uuid, &c->key);
}

static int key_from_passphrase(struct bch_fs *c, const struct bch_sb_field_crypt *cf,
			       struct printbuf *err)
{
	char *pass = NULL;
	size_t len = 0;
	int ret;

	if (c->opts.passphrase_file)
		ret = bch_read_passphrase_file(c->opts.passphrase_file, &pass, &len);
	else if (c->opts.ask_passphrase && isatty(STDIN_FILENO))
		ret = bch_read_passphrase(STDIN_FILENO,
					  c->opts.passphrase_prompt ?: "Enter passphrase: ",
					  false, &pass, &len);
	else {
		pr_str(err, "filesystem is encrypted and its key is not in the keyring; give the passphrase or run bcachefs unlock\n");
		return -BCH_ERR_no_key;
	}
	if (ret) {
		pr_buf(err, "error reading passphrase%s%s: %s\n",
		       c->opts.passphrase_file ? " from " : "",
		       c->opts.passphrase_file ?: "", bch_err_str(ret));
		return ret;
	}
	ret = bch_crypt_unlock(cf, c->internal_uuid, pass, len, NULL, &c->key);
	bch_passphrase_free(pass, len);
	if (ret == -EKEYREJECTED) {
		pr_str(err, "wrong passphrase: the master key did not decrypt\n");
		return -BCH_ERR_bad_passphrase;
	}
	if (ret)
		pr_buf(err, "scrypt key derivation failed (kdf_flags %#" PRIx64 "): %s\n",
		       le64_to_cpu(cf->kdf_flags), bch_err_str(ret));
	return ret;
}

static int get_key(struct bch_fs *c, struct printbuf *err)
{
	const struct bch_sb_field_crypt *cf = bch_sb_crypt(c->sb);
	struct bch_key wrapping;
	char uuid[37];
	int ret;

	c->encrypted = cf || BCH_SB_ENCRYPTION_TYPE(c->sb);
	if (!c->encrypted)
		return 0;
	if (!cf) {
		pr_str(err, "filesystem is marked encrypted but has no crypt field\n");
		return -BCH_ERR_sb_invalid;
	}
	ret = bch_crypto_init();
	if (ret)
		return ret;
	if (!bch_key_is_encrypted(&cf->key)) {
		ret = bch_master_key_from_clear((const uint8_t *)&cf->key, &c->key);
		goto out;
	}
	bch_uuid_to_str(c->user_uuid, uuid);
	if (!bch_keyring_lookup(uuid, &wrapping)) {
		ret = unwrap_with(c, cf, &wrapping);
		bch_key_wipe(&wrapping);
		if (!ret)
			goto out;
		pr_buf(err, "the key in the keyring (bcachefs:%s) does not decrypt the master key\n", uuid);
	}
	ret = key_from_passphrase(c, cf, err);
out:
	c->have_key = !ret;
	return ret;
}

/* ---- open / close ------------------------------------------------------- */

static int open_devs(struct bch_fs *c, char * const *paths, unsigned nr,
		     struct printbuf *err)
{
	struct opened_dev *d = xcalloc(nr, sizeof(*d));
	unsigned i, best;
	int ret = 0;

	for (i = 0; i < nr && !ret; i++)
		ret = open_one(&d[i], paths[i], c->opts.read_only ? 0 :
			       DEV_RW | (c->opts.no_excl ? 0 : DEV_EXCL), err);
	if (!ret)
		ret = check_same_fs(d, nr, err);
	if (!ret) {
		best = pick_best(d, nr);
		ret = attach_devs(c, d, nr, best, err);
	}
	opened_free(d, nr);
	return ret;
}

int bch_fs_open(char * const *devs, unsigned nr, const struct bch_fs_opts *opts,
		struct bch_fs **ret, struct printbuf *err)
{
	struct bch_fs *c;
	int r;

	*ret = NULL;
	if (!nr || nr > BCH_FS_MAX_DEVS) {
		pr_buf(err, "%u devices given (1-%u allowed)\n", nr, BCH_FS_MAX_DEVS);
		return -EINVAL;
	}
	c = xcalloc(1, sizeof(*c));
	c->opts = *opts;
	pthread_mutex_init(&c->lock, NULL);

	r = open_devs(c, devs, nr, err);
	if (r)
		goto err;
	fill_geometry(c);
	bch_fs_integrity_init(c);
	r = check_devices(c, err);
	if (r)
		goto err;
	r = get_key(c, err);
	if (r)
		goto err;
	if (!opts->no_journal) {
		r = bch_journal_read(c, err);
		if (r == -BCH_ERR_journal_invalid || r == -BCH_ERR_journal_empty ||
		    r == -BCH_ERR_journal_bad_csum)
			pr_str(err, "journal: the btree roots of this format version are kept only in the journal: "
			       "without a usable entry the filesystem cannot be opened; `bcachefs fsck -y` "
			       "rebuilds the btrees from the nodes it finds on the devices\n");
		if (r)
			goto err;
	}
	*ret = c;
	return 0;
err:
	bch_fs_close(c);
	return r;
}

int bch_fs_rw_stop(struct bch_fs *c, struct printbuf *err)
{
	bch_write_point_free(c, c->wp);
	c->wp = NULL;
	return bch_btree_rw_stop(c, err);
}

void bch_fs_close(struct bch_fs *c)
{
	unsigned i;

	if (!c)
		return;
	bch_write_point_free(NULL, c->wp);	/* frees, closes nothing */
	c->wp = NULL;
	bch_btree_rw_free(c);
	printbuf_exit(&c->rw_start_err);
	free(c->inum_free);
	bch_btree_cache_exit(c);
	bch_fs_integrity_exit(c);
	bch_journal_free(&c->journal);
	bch_overlay_clear(&c->overlay);
	for (i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *ca = c->devs[i];

		if (!ca)
			continue;
		if (ca->io)
			dev_close(ca->io);
		free(ca->sb);
		bch_big_free(ca->bucket_gens);
		free(ca);
	}
	bch_key_wipe(&c->key);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
