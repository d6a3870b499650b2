// SPDX-License-Identifier: GPL-2.0
/*
 * Member devices of a running filesystem (doc/ioctl.md §8, §9, doc/engine.md §16):
 * see admin_dev.h. Every function runs with the engine lock held, on a
 * started engine (read-only mounts get -EROFS).
 *
 * The superblock in memory (c->sb) is changed first, then the engine
 * follows it (bch_fs_rw_member_update()), then the superblocks are
 * written on every present member.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "admin/call.h"
#include "admin/admin_dev.h"
#include "fs/durability.h"
#include "alloc/alloc.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "bkey/extent_edit.h"
#include "bkey/extents.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "fs/fsread.h"
#include "bkey/inode.h"
#include "fs/mkfs.h"
#include "dev/super.h"

/* Does open device @io refer to the same file or block device as @st? */
static bool io_is(const struct bch_devio *io, const struct stat *st)
{
	struct stat s;

	if (!io || fstat(io->fd, &s))
		return false;
	if (S_ISBLK(st->st_mode))
		return S_ISBLK(s.st_mode) && s.st_rdev == st->st_rdev;
	return !S_ISBLK(s.st_mode) && s.st_dev == st->st_dev && s.st_ino == st->st_ino;
}

int bch_fs_member_lookup(struct bch_fs *c, uint32_t flags, uint64_t dev, const char *path,
			 unsigned *idx, struct printbuf *msg)
{
	struct stat st;

	if (flags & BCH_BY_INDEX) {
		if (dev >= c->nr_devices || dev >= BCH_FS_MAX_DEVS ||
		    !bch_sb_member_exists(c->sb, (unsigned)dev)) {
			pr_buf(msg, "no member device with index %" PRIu64 " (the filesystem has %u slots)",
			       dev, c->nr_devices);
			return -EINVAL;
		}
		*idx = (unsigned)dev;
		return 0;
	}
	if (!path || !*path) {
		pr_str(msg, "no device path given");
		return -EFAULT;
	}
	if (stat(path, &st)) {
		int ret = -errno;

		pr_buf(msg, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		pr_buf(msg, "%s: not a block device or image file", path);
		return -ENOTBLK;
	}
	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
		if (c->devs[i] && io_is(c->devs[i]->io, &st)) {
			*idx = i;
			return 0;
		}
	pr_buf(msg, "%s is not an online member of this filesystem", path);
	return -ENOENT;
}

/* ---- helpers -------------------------------------------------------------- */

static struct bch_member *member_mut(struct bch_fs *c, unsigned i)
{
	return (struct bch_member *)bch_sb_member(c->sb, i);
}

static int need_rw(struct bch_fs *c, struct printbuf *msg)
{
	if (bch_fs_rw(c))
		return 0;
	pr_str(msg, c->opts.read_only ? "the filesystem is mounted read-only"
				      : "the filesystem is not writable (an earlier write failed)");
	return -EROFS;
}

/* A device taken out: closed at bch_admin_free() (the read-ahead worker may hold it). */
static void retire_io(struct bch_admin *a, struct bch_devio *io)
{
	if (!io)
		return;
	if (!a->mounted) {
		dev_close(io);
		return;
	}
	pthread_mutex_lock(&a->lock);
	a->retired = xrealloc(a->retired, (a->nr_retired + 1) * sizeof(*a->retired));
	a->retired[a->nr_retired++] = io;
	pthread_mutex_unlock(&a->lock);
}

static void pr_devs(struct printbuf *out, const struct bch_replicas_entry *e)
{
	pr_char(out, '[');
	for (unsigned i = 0; i < e->nr; i++)
		pr_buf(out, "%s%u", i ? " " : "", e->devs[i]);
	pr_char(out, ']');
}

static const char *type_str(unsigned t)
{
	return t == BCH_DATA_JOURNAL ? "journal" : t == BCH_DATA_BTREE ? "metadata" : "data";
}

/*
 * May member @dev stop holding data (go offline, failed, spare, be
 * removed) with @flags (doc/ioctl.md §9 SET_STATE, doc/engine.md §2.2)? With @dev
 * counted as offline, every journal, btree and user replicas entry must
 * keep a copy on a member that is present and neither failed nor spare
 * (unless the LOST flag of its kind), and may keep fewer copies than the
 * replicas wanted only with the DEGRADED flag. (The 2018 kernel called an
 * entry degraded as soon as one of its devices was offline, even when the
 * others held the copies wanted: an entry with an extra copy, e.g. after
 * rereplicate, is not degraded here.) The first entry that forbids it is
 * named in @msg.
 */
static int dev_may_go(struct bch_fs *c, unsigned dev, uint32_t flags, struct printbuf *msg)
{
	unsigned meta_want = (unsigned)BCH_SB_META_REPLICAS_WANT(c->sb) ?: 1;
	unsigned data_want = (unsigned)BCH_SB_DATA_REPLICAS_WANT(c->sb) ?: 1;
	struct bch_replicas_iter it;
	const struct bch_replicas_entry *e;

	bch_sb_replicas_iter_init(&it, c->sb);
	while ((e = bch_sb_replicas_next(&it))) {
		bool meta = e->data_type == BCH_DATA_JOURNAL || e->data_type == BCH_DATA_BTREE;
		uint32_t degraded = meta ? BCH_FORCE_IF_METADATA_DEGRADED : BCH_FORCE_IF_DATA_DEGRADED;
		uint32_t lost = meta ? BCH_FORCE_IF_METADATA_LOST : BCH_FORCE_IF_DATA_LOST;
		unsigned online = 0, before = 0, want = meta ? meta_want : data_want, i;

		if (!meta && e->data_type != BCH_DATA_USER)
			continue;
		for (i = 0; i < e->nr; i++) {
			unsigned d = bch_dev_ptr_durability(c, e->devs[i]);

			before += d;
			if (e->devs[i] != dev)
				online += d;
		}
		if (!online && !(flags & lost)) {
			pr_buf(msg, "the %s kept on devices ", type_str(e->data_type));
			pr_devs(msg, e);
			pr_buf(msg, " would have no copy left without device %u", dev);
			return -EINVAL;
		}
		if (online < before && online < want && !(flags & degraded)) {
			pr_buf(msg, "the %s kept on devices ", type_str(e->data_type));
			pr_devs(msg, e);
			pr_buf(msg, " would lose a copy without device %u; -f keeps %s with fewer copies",
			       dev, meta ? "metadata" : "data");
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- SET_STATE ------------------------------------------------------------------ */

static unsigned nr_rw_others(struct bch_fs *c, unsigned dev)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++) {
		const struct bch_member *m = bch_sb_member(c->sb, i);

		if (i != dev && m && bch_member_exists(m) && bch_dev_present(c, i) &&
		    BCH_MEMBER_STATE(m) == BCH_MEMBER_STATE_RW)
			n += bch_member_durability(m) ? 1 : 0;
	}
	return n;
}

/* Change member @dev's state to @state (checks done) and tell the engine. */
static int apply_state(struct bch_fs *c, unsigned dev, unsigned state, struct printbuf *msg)
{
	struct bch_member *m = member_mut(c, dev);
	unsigned old = (unsigned)BCH_MEMBER_STATE(m);
	int ret;

	/* what was written there is durable before it stops being flushed with the journal */
	if (bch_dev_present(c, dev) && state != BCH_MEMBER_STATE_RW) {
		ret = dev_flush(c->devs[dev]->io);
		if (ret) {
			pr_buf(msg, "%s: flush failed: %s", c->devs[dev]->io->path, bch_err_str(ret));
			return ret;
		}
	}
	SET_BCH_MEMBER_STATE(m, state);
	ret = bch_fs_rw_member_update(c, dev, msg);
	if (!ret)
		ret = bch_fs_rw_write_sb(c, msg);
	if (ret) {
		SET_BCH_MEMBER_STATE(m, old);
		bch_fs_rw_member_update(c, dev, msg);
	}
	return ret;
}

static int set_state(struct bch_admin *a, const struct bch_ioctl_disk_set_state *arg,
		     const char *path, struct printbuf *msg)
{
	struct bch_fs *c = a->c;
	const struct bch_member *m;
	unsigned dev, cur, want = arg->new_state;
	int ret;

	if ((arg->flags & ~(BCH_FORCE_IF_ALL | BCH_BY_INDEX)) || arg->pad[0] || arg->pad[1] ||
	    arg->pad[2]) {
		pr_buf(msg, "SET_STATE: unknown flags %#x or non-zero padding", arg->flags);
		return -EINVAL;
	}
	if (want >= BCH_MEMBER_STATE_NR) {
		pr_buf(msg, "no member state %u (0 readwrite, 1 readonly, 2 failed, 3 spare)", want);
		return -EINVAL;
	}
	ret = need_rw(c, msg) ?: bch_fs_member_lookup(c, arg->flags, arg->dev, path, &dev, msg);
	if (ret)
		return ret;
	m = bch_sb_member(c->sb, dev);
	cur = (unsigned)BCH_MEMBER_STATE(m);
	if (cur == want)
		return 0;
	if (want == BCH_MEMBER_STATE_RO && cur == BCH_MEMBER_STATE_RW) {
		unsigned mr = (unsigned)(arg->flags & BCH_FORCE_IF_METADATA_DEGRADED
					 ? BCH_SB_META_REPLICAS_REQ(c->sb) : BCH_SB_META_REPLICAS_WANT(c->sb));
		unsigned dr = (unsigned)(arg->flags & BCH_FORCE_IF_DATA_DEGRADED
					 ? BCH_SB_DATA_REPLICAS_REQ(c->sb) : BCH_SB_DATA_REPLICAS_WANT(c->sb));
		unsigned need = max_t(unsigned, mr ?: 1, dr ?: 1), have = nr_rw_others(c, dev);

		unsigned need_req = max_t(unsigned, (unsigned)BCH_SB_META_REPLICAS_REQ(c->sb) ?: 1,
					  (unsigned)BCH_SB_DATA_REPLICAS_REQ(c->sb) ?: 1);

		if (have < need) {
			/* -f only helps when the copies required (not wanted) still fit */
			if (have >= need_req)
				pr_buf(msg, "device %u cannot go read-only: %u other read-write device%s, "
				       "%u needed for the replicas wanted; -f writes with fewer copies",
				       dev, have, have == 1 ? "" : "s", need);
			else if (!have)
				pr_buf(msg, "device %u cannot go read-only: it is the only read-write "
				       "device; add another first (device add)", dev);
			else
				pr_buf(msg, "device %u cannot go read-only: %u other read-write device%s, "
				       "%u required; add one first (device add)",
				       dev, have, have == 1 ? "" : "s", need_req);
			return -EINVAL;
		}
	}
	if ((want == BCH_MEMBER_STATE_FAILED || want == BCH_MEMBER_STATE_SPARE) &&
	    (cur == BCH_MEMBER_STATE_RW || cur == BCH_MEMBER_STATE_RO)) {
		ret = dev_may_go(c, dev, arg->flags, msg);
		if (ret)
			return ret;
	}
	return apply_state(c, dev, want, msg);
}

/* ---- RESIZE ------------------------------------------------------------------------ */

static int disk_resize(struct bch_admin *a, const struct bch_ioctl_disk_resize *arg,
		       const char *path, struct printbuf *msg)
{
	struct bch_fs *c = a->c;
	struct bch_member_dev *ca;
	struct bch_member *m;
	uint64_t old, cap;
	unsigned dev;
	int ret;

	if ((arg->flags & ~BCH_BY_INDEX) || arg->pad) {
		pr_buf(msg, "RESIZE: unknown flags %#x or non-zero padding", arg->flags);
		return -EINVAL;
	}
	ret = need_rw(c, msg) ?: bch_fs_member_lookup(c, arg->flags, arg->dev, path, &dev, msg);
	if (ret)
		return ret;
	m = member_mut(c, dev);
	ca = c->devs[dev];
	old = le64_to_cpu(m->nbuckets);
	if (arg->nbuckets < old) {
		pr_buf(msg, "cannot shrink device %u from %" PRIu64 " to %" PRIu64 " buckets: "
		       "shrinking is not supported (evacuate and remove it, then add a smaller one)",
		       dev, old, arg->nbuckets);
		return -EINVAL;
	}
	if (arg->nbuckets == old)
		return 0;
	if (arg->nbuckets > (1ULL << 40)) {
		pr_buf(msg, "%" PRIu64 " buckets is more than this version supports", arg->nbuckets);
		return -EINVAL;
	}
	if (ca && ca->io) {
		ret = dev_refresh_size(ca->io);
		if (ret) {
			pr_buf(msg, "%s: cannot read its size: %s", ca->io->path, bch_err_str(ret));
			return ret;
		}
		cap = ca->io->size >> 9;
		if (cap / le16_to_cpu(m->bucket_size) < arg->nbuckets) {
			pr_buf(msg, "%s holds %" PRIu64 " buckets of %u sectors, not %" PRIu64
			       " (grow the device first)", ca->io->path,
			       cap / le16_to_cpu(m->bucket_size), le16_to_cpu(m->bucket_size),
			       arg->nbuckets);
			return -EINVAL;
		}
	}
	if (ca) {
		if (ca->bucket_gens) {
			uint8_t *g = bch_big_zalloc(arg->nbuckets);

			memcpy(g, ca->bucket_gens, ca->nbuckets);
			bch_big_free(ca->bucket_gens);
			ca->bucket_gens = g;
		}
		ca->nbuckets = arg->nbuckets;
	}
	m->nbuckets = cpu_to_le64(arg->nbuckets);
	ret = bch_fs_rw_member_update(c, dev, msg);
	if (!ret)
		ret = bch_fs_rw_write_sb(c, msg);
	return ret;
}

/* ---- ADD -------------------------------------------------------------------------- */

/* Replace c->sb (held by the member whose superblock it is) with @sb. */
static void sb_replace(struct bch_fs *c, struct bch_sb *sb)
{
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++)
		if (c->devs[i] && c->devs[i]->sb == c->sb) {
			free(c->devs[i]->sb);
			c->devs[i]->sb = sb;
			c->devs[i]->sb_bytes = bch_sb_bytes(sb);
			break;
		}
	c->sb = sb;
	c->sb_bytes = bch_sb_bytes(sb);
}

static struct bch_sb *sb_copy(const struct bch_sb *sb)
{
	struct bch_sb *n = xmalloc(bch_sb_bytes(sb));

	memcpy(n, sb, bch_sb_bytes(sb));
	return n;
}

/*
 * c->sb is held by member @dev, which goes away: another present member
 * holds it from now on (with its own layout, journal field and index).
 */
static void sb_hand_over(struct bch_fs *c, unsigned dev)
{
	for (unsigned i = 0; i < BCH_FS_MAX_DEVS; i++) {
		struct bch_member_dev *o = c->devs[i];
		const struct bch_sb_field *jf;
		struct bch_sb *n;

		if (i == dev || !o || !o->io || !o->sb)
			continue;
		n = sb_copy(c->sb);
		n->dev_idx = o->sb->dev_idx;
		n->offset = o->sb->offset;
		memcpy(&n->layout, &o->sb->layout, sizeof(n->layout));
		jf = bch_sb_field_find(o->sb, BCH_SB_FIELD_journal);
		bch_sb_field_replace(&n, BCH_SB_FIELD_journal, jf, jf ? bch_sb_field_bytes(jf) : 0);
		free(o->sb);
		o->sb = n;
		o->sb_bytes = bch_sb_bytes(n);
		c->sb = n;
		c->sb_bytes = o->sb_bytes;
		return;
	}
}

/* The members field of *@sb with room for @nr slots (new ones empty). */
static void members_grow(struct bch_sb **sb, unsigned nr)
{
	const struct bch_sb_field_members *f = bch_sb_members(*sb);
	size_t have = f ? bch_sb_members_nr(f) : 0, bytes;
	struct bch_sb_field_members *n;

	if (have >= nr)
		return;
	bytes = sizeof(*n) + nr * sizeof(struct bch_member);
	n = xcalloc(1, bytes);
	if (f)
		memcpy(n->members, f->members, have * sizeof(struct bch_member));
	n->field.u64s = cpu_to_le32((uint32_t)(bytes / 8));
	n->field.type = cpu_to_le32(BCH_SB_FIELD_members);
	bch_sb_field_replace(sb, BCH_SB_FIELD_members, n, bytes);
	free(n);
}

/* Journal field of *@sb: @nr buckets. */
static void journal_field_set(struct bch_sb **sb, const uint64_t *buckets, unsigned nr)
{
	size_t bytes = sizeof(struct bch_sb_field_journal) + nr * 8;
	struct bch_sb_field_journal *j = xcalloc(1, bytes);

	j->field.u64s = cpu_to_le32((uint32_t)(bytes / 8));
	j->field.type = cpu_to_le32(BCH_SB_FIELD_journal);
	for (unsigned i = 0; i < nr; i++)
		j->buckets[i] = cpu_to_le64(buckets[i]);
	bch_sb_field_replace(sb, BCH_SB_FIELD_journal, nr ? j : NULL, nr ? bytes : 0);
	free(j);
}

/*
 * May the device of superblock @nsb (open as @io) join @c? Its own member
 * record (*@nm_out), the filesystem's block size, buckets of a btree node
 * at least, the size its superblock says, and not a member already (the
 * same device, or a member of the same uuid).
 */
static int disk_add_check(struct bch_fs *c, struct bch_devio *io, const struct bch_sb *nsb,
			  const char *path, const struct bch_member **nm_out, struct printbuf *msg)
{
	const struct bch_member *nm = bch_sb_member(nsb, nsb->dev_idx);

	if (!nm || !bch_member_exists(nm)) {
		pr_buf(msg, "%s: its superblock has no member record of its own", path);
		return -EINVAL;
	}
	if (le16_to_cpu(nsb->block_size) != c->block_size) {
		pr_buf(msg, "%s: block size %u sectors, the filesystem's is %u", path,
		       le16_to_cpu(nsb->block_size), c->block_size);
		return -EINVAL;
	}
	if (le16_to_cpu(nm->bucket_size) < c->btree_node_size) {
		pr_buf(msg, "%s: bucket size %u sectors is smaller than the btree node size %u", path,
		       le16_to_cpu(nm->bucket_size), c->btree_node_size);
		return -EINVAL;
	}
	if ((unsigned __int128)le64_to_cpu(nm->nbuckets) * le16_to_cpu(nm->bucket_size) >
	    (io->size >> 9)) {
		pr_buf(msg, "%s: smaller than its superblock says", path);
		return -EINVAL;
	}
	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
		if (c->devs[i] && c->devs[i]->io && c->devs[i]->io->fd >= 0) {
			struct stat s1, s2;

			if (!fstat(c->devs[i]->io->fd, &s1) && !fstat(io->fd, &s2) &&
			    s1.st_dev == s2.st_dev && s1.st_ino == s2.st_ino && s1.st_rdev == s2.st_rdev) {
				pr_buf(msg, "%s is already member %u of this filesystem", path, i);
				return -EBUSY;
			}
		}
	if (bch_sb_member_find(c->sb, nm->uuid.b) >= 0) {
		pr_buf(msg, "%s: a member with its uuid is already in this filesystem", path);
		return -EINVAL;
	}
	*nm_out = nm;
	return 0;
}

/*
 * The filesystem's superblock with the new member in @slot (*@out): a copy
 * of *@nm, mounted now, with its label (from @nsb) among the filesystem's
 * disk groups, not its own group index. Why a label failed: @why.
 */
static int disk_add_sb(struct bch_fs *c, const struct bch_sb *nsb, const struct bch_member *nm,
		       unsigned slot, const char *path, struct bch_sb **out,
		       struct printbuf *why, struct printbuf *msg)
{
	struct bch_sb *sb = sb_copy(c->sb);
	struct bch_member *m;

	members_grow(&sb, slot + 1);
	if (slot + 1 > sb->nr_devices)
		sb->nr_devices = (uint8_t)(slot + 1);
	m = (struct bch_member *)bch_sb_member(sb, slot);
	*m = *nm;
	m->last_mount = cpu_to_le64((uint64_t)time(NULL));
	SET_BCH_MEMBER_GROUP(m, 0);
	if (BCH_MEMBER_GROUP(nm)) {
		struct printbuf label = PRINTBUF;
		int g;

		bch_sb_disk_group_path(&label, nsb, (unsigned)BCH_MEMBER_GROUP(nm) - 1);
		g = mkfs_disk_group(&sb, printbuf_str(&label), true, why);
		printbuf_exit(&label);
		if (g < 0) {
			pr_buf(msg, "%s: its label: %s", path, printbuf_str(why));
			free(sb);
			return g;
		}
		m = (struct bch_member *)bch_sb_member(sb, slot);
		SET_BCH_MEMBER_GROUP(m, (unsigned)g + 1);
	}
	*out = sb;
	return 0;
}

/*
 * The member device of @slot over @io, with the superblock of @nsb (taken
 * over: its layout kept, its journal emptied until the allocator gives it
 * buckets). @nm, which points into that superblock, is not valid after.
 */
static struct bch_member_dev *disk_add_dev(unsigned slot, struct bch_devio *io,
					   struct bch_sb_handle *nsb, const struct bch_member *nm)
{
	struct bch_member_dev *ca = xcalloc(1, sizeof(*ca));

	ca->idx		= slot;
	ca->io		= io;
	ca->sb		= nsb->sb;
	ca->sb_bytes	= bch_sb_bytes(nsb->sb);
	ca->sb_offset	= nsb->offset;
	ca->bucket_size	= le16_to_cpu(nm->bucket_size);
	ca->first_bucket = le16_to_cpu(nm->first_bucket);
	ca->nbuckets	= le64_to_cpu(nm->nbuckets);
	nsb->sb = NULL;
	ca->sb->dev_idx = (uint8_t)slot;
	journal_field_set(&ca->sb, NULL, 0);
	return ca;
}

/*
 * The new member @ca of @slot known to the running engine, then its
 * journal buckets (from the allocator, marked there) in its superblock,
 * and the superblocks written.
 */
static int disk_add_journal(struct bch_fs *c, struct bch_member_dev *ca, unsigned slot,
			    struct printbuf *msg)
{
	struct bch_allocator *al;
	unsigned nr_j;
	int ret = bch_fs_rw_member_update(c, slot, msg);

	if (ret)
		return ret;
	al = bch_fs_rw_alloc(c);
	nr_j = bch_journal_buckets_wanted(ca->nbuckets, ca->bucket_size);
	ret = bch_alloc_journal_buckets(al, slot, nr_j, msg);
	if (ret)
		return ret;
	journal_field_set(&ca->sb, al->devs[slot]->journal, al->devs[slot]->nr_journal);
	return bch_fs_rw_member_update(c, slot, msg) ?: bch_fs_rw_write_sb(c, msg);
}

static int disk_add(struct bch_admin *a, const struct bch_ioctl_disk *arg, int fd,
		    const char *path, struct printbuf *msg)
{
	struct bch_fs *c = a->c;
	struct bch_sb_handle nsb = { 0 };
	struct bch_devio *io = NULL;
	struct bch_member_dev *ca = NULL;
	struct bch_sb *sb = NULL, *old_sb = NULL;
	const struct bch_member *nm;
	unsigned slot, old_nr = c->nr_devices;
	struct printbuf why = PRINTBUF;
	int ret;

	if (arg->flags || arg->pad) {
		pr_buf(msg, "DISK_ADD: flags %#x and padding must be 0", arg->flags);
		ret = -EINVAL;
		goto err;
	}
	ret = need_rw(c, msg);
	if (ret)
		goto err;
	if (!path)
		path = "(device)";
	ret = fd >= 0 ? dev_open_fd(fd, path, DEV_RW, &io) : dev_open(path, DEV_RW | DEV_EXCL, &io);
	if (ret) {
		pr_buf(msg, "%s: cannot open: %s", path, bch_err_str(ret));
		goto err;
	}
	fd = -1;
	ret = bch_sb_read_valid(io, &nsb, &why);
	if (ret) {
		pr_buf(msg, "%s: no valid bcachefs superblock (format it first): %s", path,
		       printbuf_str(&why));
		ret = -EINVAL;
		goto err;
	}
	bch_sb_upgrade_in_memory(nsb.sb);
	ret = disk_add_check(c, io, nsb.sb, path, &nm, msg);
	if (ret)
		goto err;
	/* the first free slot */
	for (slot = 0; slot < BCH_FS_MAX_DEVS; slot++)
		if (!bch_sb_member_exists(c->sb, slot) && !c->devs[slot])
			break;
	if (slot == BCH_FS_MAX_DEVS) {
		pr_str(msg, "no slots available: the filesystem has 64 members");
		ret = -ENOSPC;
		goto err;
	}
	ret = disk_add_sb(c, nsb.sb, nm, slot, path, &sb, &why, msg);
	if (ret)
		goto err;
	ca = disk_add_dev(slot, io, &nsb, nm);
	io = NULL;

	old_sb = sb_copy(c->sb);
	sb_replace(c, sb);
	sb = NULL;
	c->devs[slot] = ca;
	c->nr_devices = c->sb->nr_devices;
	ret = disk_add_journal(c, ca, slot, msg);
	if (ret)
		goto undo;
	free(old_sb);
	printbuf_exit(&why);
	return 0;
undo:
	c->devs[slot] = NULL;
	sb_replace(c, old_sb);
	c->nr_devices = old_nr;
	bch_fs_rw_member_update(c, slot, &why);
	io = ca->io;
	free(ca->sb);
	free(ca);
err:
	if (fd >= 0)
		close(fd);
	dev_close(io);
	bch_sb_handle_free(&nsb);
	free(sb);
	printbuf_exit(&why);
	return ret;
}

/* ---- OFFLINE / ONLINE ------------------------------------------------------------- */

static int disk_offline(struct bch_admin *a, const struct bch_ioctl_disk *arg, const char *path,
			struct printbuf *msg)
{
	struct bch_fs *c = a->c;
	struct bch_member_dev *ca;
	unsigned dev;
	int ret;

	if ((arg->flags & ~(BCH_FORCE_IF_ALL | BCH_BY_INDEX)) || arg->pad) {
		pr_buf(msg, "OFFLINE: unknown flags %#x or non-zero padding", arg->flags);
		return -EINVAL;
	}
	ret = need_rw(c, msg) ?: bch_fs_member_lookup(c, arg->flags, arg->dev, path, &dev, msg);
	if (ret)
		return ret;
	ca = c->devs[dev];
	if (!ca || !ca->io) {
		pr_buf(msg, "device %u: already offline", dev);
		return 0;
	}
	ret = dev_may_go(c, dev, arg->flags, msg);
	if (ret) {
		pr_str(msg, "; cannot take it offline");
		return ret;
	}
	ret = dev_flush(ca->io);
	if (ret) {
		pr_buf(msg, "%s: flush failed: %s", ca->io->path, bch_err_str(ret));
		return ret;
	}
	retire_io(a, ca->io);
	ca->io = NULL;
	return bch_fs_rw_member_update(c, dev, msg);
}

static int disk_online(struct bch_admin *a, const struct bch_ioctl_disk *arg, int fd,
		       const char *path, struct printbuf *msg)
{
	struct bch_fs *c = a->c;
	struct bch_sb_handle nsb = { 0 };
	struct printbuf why = PRINTBUF;
	struct bch_devio *io = NULL;
	struct bch_member_dev *ca;
	const struct bch_member *m, *own;
	unsigned idx;
	int ret;

	if (arg->flags || arg->pad) {
		pr_buf(msg, "ONLINE: flags %#x and padding must be 0", arg->flags);
		ret = -EINVAL;
		goto out;
	}
	ret = need_rw(c, msg);
	if (ret)
		goto out;
	if (!path)
		path = "(device)";
	ret = fd >= 0 ? dev_open_fd(fd, path, DEV_RW, &io) : dev_open(path, DEV_RW | DEV_EXCL, &io);
	fd = -1;
	if (ret) {
		pr_buf(msg, "%s: cannot open: %s", path, bch_err_str(ret));
		goto out;
	}
	ret = bch_sb_read_valid(io, &nsb, &why);
	if (ret) {
		pr_buf(msg, "error bringing %s online: no valid superblock: %s", path, printbuf_str(&why));
		ret = -EINVAL;
		goto out;
	}
	bch_sb_upgrade_in_memory(nsb.sb);
	idx = nsb.sb->dev_idx;
	m = bch_sb_member(c->sb, idx);
	own = bch_sb_member(nsb.sb, idx);
	ret = -EINVAL;
	if (memcmp(nsb.sb->uuid.b, c->internal_uuid, 16)) {
		pr_buf(msg, "error bringing %s online: not a member of this filesystem", path);
		goto out;
	}
	if (!m || !own || !bch_member_exists(m) || memcmp(m->uuid.b, own->uuid.b, 16)) {
		pr_buf(msg, "error bringing %s online: device %u has been removed", path, idx);
		goto out;
	}
	if (le16_to_cpu(nsb.sb->block_size) != c->block_size) {
		pr_buf(msg, "error bringing %s online: block size differs", path);
		goto out;
	}
	ca = c->devs[idx];
	if (ca && ca->io) {
		pr_buf(msg, "error bringing %s online: already have device online in slot %u", path, idx);
		goto out;
	}
	if ((unsigned __int128)le64_to_cpu(m->nbuckets) * le16_to_cpu(m->bucket_size) > (io->size >> 9)) {
		pr_buf(msg, "error bringing %s online: device too small", path);
		goto out;
	}
	/* everything its journal may hold is in the btree first: its ring restarts */
	ret = bch_fs_checkpoint(c, msg);
	if (ret)
		goto out;
	if (!ca) {
		ca = xcalloc(1, sizeof(*ca));
		ca->idx = idx;
		c->devs[idx] = ca;
	}
	ca->bucket_size	= le16_to_cpu(m->bucket_size);
	ca->first_bucket = le16_to_cpu(m->first_bucket);
	ca->nbuckets	= le64_to_cpu(m->nbuckets);
	free(ca->sb);
	ca->sb		= nsb.sb;
	ca->sb_bytes	= bch_sb_bytes(nsb.sb);
	ca->sb_offset	= nsb.offset;
	ca->io		= io;
	nsb.sb = NULL;
	io = NULL;
	ret = bch_fs_rw_member_update(c, idx, msg) ?: bch_fs_rw_write_sb(c, msg);
out:
	if (fd >= 0)
		close(fd);
	dev_close(io);
	bch_sb_handle_free(&nsb);
	printbuf_exit(&why);
	return ret;
}

/* ---- REMOVE ----------------------------------------------------------------------- */

struct drop_ctx {
	unsigned	dev;
};

static bool drop_dev(const struct extent_ptr_decoded *p, unsigned i, void *arg)
{
	return p->ptr.dev == ((struct drop_ctx *)arg)->dev;
}

/* Dirty copies of @k that stay when the pointers to @dev go, counted by durability. */
static unsigned copies_without(struct bch_fs *c, const struct bkey_ref *k, unsigned dev,
			       bool *on_dev)
{
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	unsigned n = 0;

	*on_dev = false;
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0) {
		if (p.ptr.dev == dev) {
			*on_dev = true;
			continue;
		}
		if (!p.ptr.cached && k->k.type == BCH_EXTENT)
			n += bch_dev_ptr_durability(c, p.ptr.dev);
	}
	return n;
}

/*
 * Drop every pointer to @dev from the extents (doc/ioctl.md §9 REMOVE step 3):
 * first a count of what would be lost or degraded against @flags (nothing
 * changes when refused), then the keys, a batch per transaction.
 */
static int drop_data(struct bch_fs *c, unsigned dev, uint32_t flags, struct printbuf *msg)
{
	struct bch_inode_want want = { 0 };
	struct printbuf ignore = PRINTBUF;
	struct btree_iter iter;
	struct bkey_ref *k;
	struct bpos_h pos = POS_H_MIN;
	uint64_t lost = 0, degraded = 0, lost_inum = 0, lost_off = 0;
	int ret;

	bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, POS_H_MIN, &ignore);
	while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
		bool on;
		unsigned n;

		if (k->k.type == BCH_EXTENT) {
			n = copies_without(c, k, dev, &on);
			if (on && !n) {
				if (!lost++) {
					lost_inum = k->k.p.inode;
					lost_off = (k->k.p.offset - k->k.size) << 9;
				}
			} else if (on && n < bch_inode_replicas_want(c, k->k.p.inode, &want)) {
				degraded++;
			}
		}
		bch_btree_iter_advance(&iter);
	}
	bch_btree_iter_exit(&iter);
	if (ret)
		goto out;
	if (lost && !(flags & BCH_FORCE_IF_DATA_LOST)) {
		pr_buf(msg, "Cannot remove without losing data: %" PRIu64 " extents have their only copy on "
		       "device %u (the first: inode %" PRIu64 " at byte %" PRIu64 "); move it off with "
		       "device evacuate, or force with -f (their data is lost)",
		       lost, dev, lost_inum, lost_off);
		ret = -EINVAL;
		goto out;
	}
	if (degraded && !(flags & BCH_FORCE_IF_DATA_DEGRADED)) {
		pr_buf(msg, "Cannot remove without degrading data: %" PRIu64 " extents would have fewer "
		       "copies than wanted; run data rereplicate or device evacuate first", degraded);
		ret = -EINVAL;
		goto out;
	}

	for (;;) {
		struct { uint64_t inum, sectors; } lost_in[64];
		unsigned nr_lost_in = 0;
		struct btree_trans t;
		unsigned nr = 0;

		bch_trans_init(&t, c);
		bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, pos, &ignore);
		while (nr < 64 && !(ret = bch_btree_iter_peek(&iter, &k)) && k) {
			uint64_t v[BKEY_EXTENT_VAL_U64s_MAX], devs = 0;
			struct drop_ctx d = { .dev = dev };
			struct extent_ptr_iter it;
			struct extent_ptr_decoded p;
			unsigned bytes, left;
			bool on = false;

			pos = k->k.p;
			if (k->k.type == BCH_EXTENT || k->k.type == BCH_EXTENT_CACHED) {
				copies_without(c, k, dev, &on);
			}
			if (!on) {
				bch_btree_iter_advance(&iter);
				continue;
			}
			bytes = extent_drop_ptrs(k, drop_dev, &d, v, &left);
			if (left == UINT32_MAX) {
				pr_buf(msg, "inode %" PRIu64 ": invalid extent value at %" PRIu64,
				       k->k.p.inode, k->k.p.offset);
				ret = -EINVAL;
				break;
			}
			if (!left && k->k.type == BCH_EXTENT) {
				struct bkey_h e = k->k;

				e.type = KEY_TYPE_ERROR;	/* the data is lost */
				bch_trans_update(&t, BTREE_ID_EXTENTS, &e, NULL, 0);
				/* error keys hold no space: the inode's i_sectors follows (doc/format.md §5.5.7) */
				if (nr_lost_in && lost_in[nr_lost_in - 1].inum == e.p.inode)
					lost_in[nr_lost_in - 1].sectors += e.size;
				else
					lost_in[nr_lost_in++] = (typeof(lost_in[0])) { e.p.inode, e.size };
			} else if (!left) {
				bch_trans_delete_extents(&t, k->k.p.inode, k->k.p.offset - k->k.size,
							 k->k.p.offset);
			} else {
				struct bkey_ref nk = { .k = k->k, .v = v, .v_bytes = bytes };

				extent_ptr_iter_init(&it, &nk);
				while (extent_ptr_iter_next(&it, &p) > 0)
					if (!p.ptr.cached && nk.k.type == BCH_EXTENT && p.ptr.dev < 64)
						devs |= 1ULL << p.ptr.dev;
				ret = bch_fs_rw_replicas_mark(c, BCH_DATA_USER, devs, msg);
				if (ret)
					break;
				bch_trans_update(&t, BTREE_ID_EXTENTS, &k->k, v, bytes);
			}
			nr++;
			bch_btree_iter_advance(&iter);
		}
		bch_btree_iter_exit(&iter);
		for (unsigned i = 0; i < nr_lost_in && !ret; i++) {
			struct bch_inode_unpacked u;
			uint8_t val[BCH_INODE_VAL_BYTES_MAX];
			struct bkey_h ik = { .type = BCH_INODE_FS, .p = POS_H(lost_in[i].inum, 0) };

			if (bch_inode_get(c, lost_in[i].inum, &u, &ignore))
				continue;	/* no inode: fsck's business */
			u.bi_sectors -= min_t(uint64_t, u.bi_sectors, lost_in[i].sectors);
			bch_trans_update(&t, BTREE_ID_INODES, &ik, val, (unsigned)bch_inode_pack(&u, val));
		}
		if (!ret && nr)
			ret = bch_trans_commit(&t, msg);
		bch_trans_exit(&t);
		if (ret || !nr)
			break;
	}
out:
	printbuf_exit(&ignore);
	return ret;
}

struct node_scan {
	unsigned	dev;
	uint64_t	nr, unreadable;
	struct bch_fs	*c;
};

static int node_on_dev(void *arg, const struct btree_node_visit *v)
{
	struct node_scan *s = arg;
	struct btree_ptr_h p[BCH_REPLICAS_MAX];
	int nr;
	bool on = false, other = false;

	if (!v->ptr || (nr = btree_ptr_decode(v->ptr, p, BCH_REPLICAS_MAX)) <= 0)
		return 0;
	for (int i = 0; i < nr; i++) {
		if (p[i].dev == s->dev)
			on = true;
		else if (bch_dev_present(s->c, p[i].dev))
			other = true;
	}
	if (!on)
		return 0;
	s->nr++;
	if (!other && !bch_dev_present(s->c, s->dev))
		s->unreadable++;
	bch_fs_rw_force_rewrite(s->c, v->btree_id, v->level, v->ptr->k.p);
	return 0;
}

/* Every btree node with a copy on @dev goes to new nodes elsewhere at the next checkpoint. */
int bch_fs_rewrite_nodes_on(struct bch_fs *c, unsigned dev, uint64_t *nr, struct printbuf *msg)
{
	struct node_scan s = { .dev = dev, .c = c };
	struct printbuf ignore = PRINTBUF;
	int ret = 0;

	for (unsigned id = 0; id < BCH_NR_BTREES && !ret; id++)
		ret = bch_btree_walk_nodes(c, id, node_on_dev, &s, &ignore);
	printbuf_exit(&ignore);
	if (!ret && s.unreadable) {
		pr_buf(msg, "%" PRIu64 " btree nodes have their only copy on missing device %u", s.unreadable, dev);
		ret = -EINVAL;
	}
	if (nr)
		*nr = s.nr;
	return ret;
}

/*
 * A removed device must no longer look like a member (show-super, mount,
 * fsck, device add, blkid, the 2018 tools) yet say what it was: see
 * bch_sb_mark_removed(). Best effort: the device is out of the filesystem
 * whatever happens here.
 */
static void wipe_sb_magic(struct bch_member_dev *ca)
{
	if (ca->io && ca->sb)
		bch_sb_mark_removed(ca->io, &ca->sb->layout);
}

static int disk_remove(struct bch_admin *a, const struct bch_ioctl_disk *arg, const char *path,
		       struct printbuf *msg)
{
	struct bch_fs *c = a->c;
	struct bch_member_dev *ca;
	struct bch_member *m;
	struct bch_replicas_iter it;
	const struct bch_replicas_entry *e;
	unsigned dev, state;
	int ret;

	if ((arg->flags & ~(BCH_FORCE_IF_ALL | BCH_BY_INDEX)) || arg->pad) {
		pr_buf(msg, "REMOVE: unknown flags %#x or non-zero padding", arg->flags);
		return -EINVAL;
	}
	ret = need_rw(c, msg) ?: bch_fs_member_lookup(c, arg->flags, arg->dev, path, &dev, msg);
	if (ret)
		return ret;
	if (arg->flags & BCH_FORCE_IF_METADATA_LOST) {
		pr_str(msg, "removing a device with the only copy of btree nodes is not supported "
		       "(the filesystem would be lost); drop --force-metadata");
		return -EINVAL;
	}
	if (bch_sb_nr_live_members(c->sb) <= 1) {
		pr_buf(msg, "device %u is the only member of the filesystem", dev);
		return -EINVAL;
	}
	/*
	 * Metadata is moved, not dropped (its nodes are rewritten elsewhere,
	 * the journal goes on elsewhere): it can only end up with fewer copies
	 * than wanted, when too few devices stay. What user data would lose is
	 * counted extent by extent (drop_data()).
	 */
	if (!(arg->flags & BCH_FORCE_IF_METADATA_DEGRADED)) {
		unsigned want = (unsigned)BCH_SB_META_REPLICAS_WANT(c->sb) ?: 1;
		unsigned have = 0;

		for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
			if (i != dev && bch_sb_member_exists(c->sb, i) &&
			    BCH_MEMBER_STATE(bch_sb_member(c->sb, i)) == BCH_MEMBER_STATE_RW)
				have += bch_dev_ptr_durability(c, i);
		if (have < want) {
			if (have)
				pr_buf(msg, "without device %u the metadata would have %u cop%s, %u wanted; "
				       "-f keeps fewer", dev, have, have == 1 ? "y" : "ies", want);
			else
				pr_buf(msg, "without device %u no read-write device would hold the "
				       "metadata; add one first (device add)", dev);
			return -EINVAL;
		}
	}

	/* nothing new goes there: read-only in memory (on disk too if the superblock is written) */
	m = member_mut(c, dev);
	state = (unsigned)BCH_MEMBER_STATE(m);
	if (state == BCH_MEMBER_STATE_RW)
		SET_BCH_MEMBER_STATE(m, BCH_MEMBER_STATE_RO);
	ret = bch_fs_rw_member_update(c, dev, msg);
	if (!ret)
		ret = drop_data(c, dev, arg->flags, msg);
	if (!ret)
		ret = bch_fs_rewrite_nodes_on(c, dev, NULL, msg);
	if (!ret)
		ret = bch_fs_replicas_gc(c, msg);	/* a checkpoint: the nodes move */
	if (!ret) {
		bch_sb_replicas_iter_init(&it, c->sb);
		while ((e = bch_sb_replicas_next(&it)))
			for (unsigned i = 0; i < e->nr; i++)
				if (e->devs[i] == dev) {
					pr_buf(msg, "Remove failed, still has data (%s)",
					       bch_data_type_name(e->data_type) ?: "?");
					ret = -EBUSY;
				}
	}
	if (ret) {
		struct printbuf ignore = PRINTBUF;

		m = member_mut(c, dev);
		SET_BCH_MEMBER_STATE(m, state);
		bch_fs_rw_member_update(c, dev, &ignore);
		printbuf_exit(&ignore);
		return ret;
	}

	/* the slot frees: its alloc keys go with the next checkpoint, before the superblock says so */
	m = member_mut(c, dev);
	memset(m->uuid.b, 0, sizeof(m->uuid.b));
	ca = c->devs[dev];
	ret = bch_fs_rw_member_update(c, dev, msg) ?: bch_fs_checkpoint(c, msg);
	if (ret)
		return ret;
	if (ca) {
		if (ca->sb == c->sb)
			sb_hand_over(c, dev);
		c->devs[dev] = NULL;
	}
	ret = bch_fs_rw_write_sb(c, msg);
	if (ca) {
		/* once the members say it is gone, and not before (a crash between) */
		if (!ret)
			wipe_sb_magic(ca);
		retire_io(a, ca->io);
		free(ca->sb);
		bch_big_free(ca->bucket_gens);
		free(ca);
	}
	return ret;
}

/* ---- the dispatcher ------------------------------------------------------------ */

int bch_admin_dev_ioctl(struct bch_admin *a, const struct bch_admin_call *call,
			struct bch_admin_out *out)
{
	int fd = call->fd;

	if (fd >= 0 && call->nr != BCH_IOCTL_DISK_ADD && call->nr != BCH_IOCTL_DISK_ONLINE) {
		close(fd);
		fd = -1;
	}
	switch (call->nr) {
	case BCH_IOCTL_DISK_ADD:
		return disk_add(a, call->arg, fd, call->path, &out->msg);
	case BCH_IOCTL_DISK_REMOVE:
		return disk_remove(a, call->arg, call->path, &out->msg);
	case BCH_IOCTL_DISK_ONLINE:
		return disk_online(a, call->arg, fd, call->path, &out->msg);
	case BCH_IOCTL_DISK_OFFLINE:
		return disk_offline(a, call->arg, call->path, &out->msg);
	case BCH_IOCTL_DISK_SET_STATE:
		return set_state(a, call->arg, call->path, &out->msg);
	case BCH_IOCTL_DISK_RESIZE:
		return disk_resize(a, call->arg, call->path, &out->msg);
	default:
		if (fd >= 0)
			close(fd);
		return -ENOTTY;
	}
}
