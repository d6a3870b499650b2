// SPDX-License-Identifier: GPL-2.0
/*
 * Administering a running filesystem: the dispatcher and the requests
 * that change nothing (QUERY_UUID, USAGE, READ_SUPER, DISK_GET_IDX, our
 * DEV_NAMES). See admin.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "admin/admin.h"
#include "dev/devstack.h"
#include "admin/admin_dev.h"
#include "alloc/alloc.h"
#include "alloc/space.h"
#include "btree/btree.h"
#include "btree/btree_update.h"
#include "admin/ctl_proto.h"
#include "admin/data_job.h"
#include "fs/copygc.h"
#include "fs/rebalance.h"
#include "fs/promote.h"
#include "dev/dev.h"
#include "util/errcode.h"
#include "bkey/extents.h"
#include "format/format.h"
#include "core/bch_fs.h"
#include "core/integrity.h"
#include "dev/super.h"

struct bch_admin *bch_admin_new(struct bch_fs *c, bool mounted)
{
	struct bch_admin *a = xcalloc(1, sizeof(*a));

	a->c = c;
	a->mounted = mounted;
	pthread_mutex_init(&a->lock, NULL);
	return a;
}

void bch_admin_free(struct bch_admin *a)
{
	if (!a)
		return;
	bch_admin_stop_jobs(a);
	bch_jobs_reap(a, true);
	for (size_t i = 0; i < a->nr_retired; i++)
		dev_close(a->retired[i]);
	free(a->retired);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

void bch_admin_stop_jobs(struct bch_admin *a)
{
	bch_jobs_stop_all(a);
}

/* ---- QUERY_UUID ---------------------------------------------------------- */

int bch_fs_query_uuid(struct bch_fs *c, struct bch_ioctl_query_uuid *u)
{
	memcpy(u->uuid.b, c->user_uuid, 16);
	return 0;
}

/* ---- member lookup (doc/ioctl.md §8) ------------------------------------------ */

/* ---- USAGE ---------------------------------------------------------------- */

/*
 * One accounting (doc/ioctl.md §9.2): the space totals (capacity, used, reserved,
 * available) and the buckets of each type come from the allocator that
 * decides what can be allocated (the running engine's when it runs, so that
 * statfs says the same); the sectors of each kind of data from a walk of
 * every btree node pointer and extent, on disk (compressed) and
 * uncompressed side by side.
 */
struct usage_entry {
	uint8_t		data_type;
	uint64_t	devs;		/* bit d = device d */
	uint64_t	disk;		/* sectors on disk, every copy */
	uint64_t	uncompressed;	/* logical sectors, every copy */
};

struct usage_walk {
	struct bch_fs		*c;
	struct bch_allocator	a;
	struct printbuf		ignore;
	/* sectors on disk and uncompressed, every copy, by type and copies */
	uint64_t		disk[BCH_DATA_NR][BCH_REPLICAS_MAX];
	uint64_t		uncompressed[BCH_DATA_NR][BCH_REPLICAS_MAX];
	uint64_t		persistent_reserved[BCH_REPLICAS_MAX];
	/*
	 * cached data on disk per device: counted apart, as a bucket often
	 * holds dirty data and cached copies together (engine.md §8.5)
	 */
	uint64_t		dev_cached[BCH_FS_MAX_DEVS];
	struct usage_entry	*e;
	size_t			nr_e;
};

static void entry_add(struct usage_walk *w, unsigned data_type, uint64_t devs,
		      uint64_t disk, uint64_t uncompressed)
{
	size_t i;

	if (!devs)
		return;
	for (i = 0; i < w->nr_e; i++)
		if (w->e[i].data_type == data_type && w->e[i].devs == devs)
			break;
	if (i == w->nr_e) {
		w->e = xrealloc(w->e, (w->nr_e + 1) * sizeof(*w->e));
		w->e[w->nr_e++] = (struct usage_entry) { .data_type = (uint8_t)data_type, .devs = devs };
	}
	w->e[i].disk += disk;
	w->e[i].uncompressed += uncompressed;
}

static unsigned replicas_idx(unsigned nr)
{
	return nr < 1 ? 0 : nr > BCH_REPLICAS_MAX ? BCH_REPLICAS_MAX - 1 : nr - 1;
}

static unsigned nr_devs(uint64_t devs)
{
	return (unsigned)__builtin_popcountll(devs);
}

/* The gen bucket @b of @dev has now: the engine's when it runs, else the alloc btree's. */
static bool bucket_gen_now(struct bch_fs *c, unsigned dev, uint64_t b, uint8_t *gen)
{
	struct bch_member_dev *ca = dev < BCH_FS_MAX_DEVS ? c->devs[dev] : NULL;

	if (c->rw)
		return bch_fs_rw_bucket_gen(c, dev, b, gen);
	if (!ca || !ca->bucket_gens || b >= ca->nbuckets)
		return false;
	*gen = ca->bucket_gens[b];
	return true;
}

static int usage_node(void *arg, const struct btree_node_visit *v)
{
	struct usage_walk *w = arg;
	struct btree_ptr_h p[BCH_REPLICAS_MAX];
	uint64_t devs = 0, node = w->c->btree_node_size;
	int nr;

	if (!v->ptr)
		return 0;
	nr = btree_ptr_decode(v->ptr, p, BCH_REPLICAS_MAX);
	if (nr <= 0)
		return 0;
	for (int i = 0; i < nr; i++)
		devs |= p[i].dev < 64 ? 1ULL << p[i].dev : 0;
	entry_add(w, BCH_DATA_BTREE, devs, node * (unsigned)nr, node * (unsigned)nr);
	w->disk[BCH_DATA_BTREE][replicas_idx((unsigned)nr)] += node * (unsigned)nr;
	w->uncompressed[BCH_DATA_BTREE][replicas_idx((unsigned)nr)] += node * (unsigned)nr;
	bch_alloc_mark_btree_ptr(&w->a, v->ptr, &w->ignore);
	return 0;
}

/* Sectors a pointer with @crc takes on disk for @size live sectors (doc/engine.md §8.2). */
static uint64_t disk_sectors(const struct bch_extent_crc_unpacked *crc, uint64_t size)
{
	if (!crc->compression_type || !crc->uncompressed_size)
		return size;
	return max_t(uint64_t, 1, DIV_ROUND_UP(size * crc->compressed_size,
					       crc->uncompressed_size));
}

static void usage_extent(struct usage_walk *w, const struct bkey_ref *k)
{
	struct bch_fs *c = w->c;
	struct extent_ptr_iter it;
	struct extent_ptr_decoded p;
	unsigned dirty = 0;
	uint64_t devs = 0, disk = 0;

	if (k->k.type == BCH_RESERVATION) {
		struct bch_reservation r;

		if (k->v_bytes < sizeof(r))
			return;
		memcpy(&r, k->v, sizeof(r));
		w->persistent_reserved[replicas_idx(r.nr_replicas)] += k->k.size;
		return;
	}
	if (k->k.type != BCH_EXTENT && k->k.type != BCH_EXTENT_CACHED)
		return;
	extent_ptr_iter_init(&it, k);
	while (extent_ptr_iter_next(&it, &p) > 0) {
		struct bch_member_dev *ca = p.ptr.dev < BCH_FS_MAX_DEVS ? c->devs[p.ptr.dev] : NULL;
		bool cached = p.ptr.cached || k->k.type == BCH_EXTENT_CACHED;
		uint64_t b, ds = disk_sectors(&p.crc, k->k.size);
		uint8_t gen;

		if (!ca || !ca->bucket_size)
			continue;
		b = p.ptr.offset / ca->bucket_size;
		if (bucket_gen_now(c, p.ptr.dev, b, &gen) && gen_after(gen, p.ptr.gen)) {
			if (cached)
				continue;	/* stale: its space is not in use */
		} else if (cached) {
			w->dev_cached[p.ptr.dev] += ds;
		} else {
			bch_alloc_mark(&w->a, p.ptr.dev, b, BCH_DATA_USER,
				       (unsigned)min_t(uint64_t, ds, UINT32_MAX), &w->ignore);
			printbuf_reset(&w->ignore);
		}
		if (cached) {
			w->disk[BCH_DATA_CACHED][0] += ds;
			w->uncompressed[BCH_DATA_CACHED][0] += k->k.size;
			entry_add(w, BCH_DATA_CACHED, p.ptr.dev < 64 ? 1ULL << p.ptr.dev : 0,
				  ds, k->k.size);
		} else {
			dirty++;
			disk += ds;
			devs |= p.ptr.dev < 64 ? 1ULL << p.ptr.dev : 0;
		}
	}
	if (!dirty)
		return;
	w->disk[BCH_DATA_USER][replicas_idx(dirty)] += disk;
	w->uncompressed[BCH_DATA_USER][replicas_idx(dirty)] += k->k.size * dirty;
	entry_add(w, BCH_DATA_USER, devs, disk, k->k.size * dirty);
}

/* Walk every btree node pointer and every extent (the allocator of @w: buckets). */
static int usage_walk(struct bch_fs *c, struct usage_walk *w, struct printbuf *msg)
{
	struct btree_iter iter;
	struct bkey_ref *k;
	int ret;

	w->c = c;
	w->ignore = PRINTBUF;
	ret = bch_alloc_init(&w->a, c, msg);
	if (ret)
		return ret;
	for (unsigned id = 0; id < BCH_NR_BTREES && !ret; id++)
		ret = bch_btree_walk_nodes(c, id, usage_node, w, &w->ignore);
	if (!ret) {
		bch_btree_iter_init(&iter, c, BTREE_ID_EXTENTS, POS_H_MIN, &w->ignore);
		while (!(ret = bch_btree_iter_peek(&iter, &k)) && k) {
			usage_extent(w, k);
			bch_btree_iter_advance(&iter);
		}
		bch_btree_iter_exit(&iter);
	}
	if (ret)
		pr_buf(msg, "cannot walk the btrees: %s", bch_err_str(ret));
	return ret;
}

static void usage_walk_exit(struct usage_walk *w)
{
	bch_alloc_exit(&w->a);
	printbuf_exit(&w->ignore);
	free(w->e);
}

/*
 * The allocator whose bucket state says what is free: the running
 * engine's, else the walk's (read-only or not mounted: nothing changes).
 */
static const struct bch_allocator *space_alloc(struct bch_fs *c, const struct usage_walk *w)
{
	const struct bch_allocator *a = bch_fs_rw_alloc(c);

	return a ?: &w->a;
}

int bch_fs_space_walk(struct bch_fs *c, struct bch_space *s, struct printbuf *msg)
{
	struct usage_walk w = { 0 };
	int ret = usage_walk(c, &w, msg);

	if (!ret)
		bch_space_read(space_alloc(c, &w), s);
	usage_walk_exit(&w);
	return ret;
}

static void usage_dev(struct bch_fs *c, const struct usage_walk *w, const struct bch_space *s,
		      unsigned i, struct bch_ioctl_dev_usage *d)
{
	const struct bch_member *m = bch_sb_member(c->sb, i);
	struct bch_member_dev *ca = c->devs[i];
	const struct bch_dev_alloc *da = w->a.devs[i];
	struct stat st;

	memset(d, 0, sizeof(*d));
	d->alive	= 1;
	d->state	= (uint8_t)BCH_MEMBER_STATE(m);
	d->bucket_size	= le16_to_cpu(m->bucket_size);
	d->nr_buckets	= le64_to_cpu(m->nbuckets) > le16_to_cpu(m->first_bucket)
		? le64_to_cpu(m->nbuckets) - le16_to_cpu(m->first_bucket) : 0;
	if (ca && ca->io && !fstat(ca->io->fd, &st) && S_ISBLK(st.st_mode))
		d->dev = (uint32_t)bch_huge_encode_dev(major(st.st_rdev), minor(st.st_rdev));
	if (s->dev[i].present)
		memcpy(d->buckets, s->dev[i].buckets, sizeof(d->buckets));
	else
		d->buckets[BCH_DATA_NONE] = d->nr_buckets;
	if (!da)
		return;
	/* sectors on disk from the walk's marks */
	for (uint64_t ch = 0; ch < da->nr_chunks; ch++) {
		const struct bucket_h *g = da->chunk[ch];

		if (!g)
			continue;
		for (uint64_t j = 0; j < BUCKET_CHUNK && ch * BUCKET_CHUNK + j < da->nbuckets; j++)
			if (g[j].data_type && g[j].data_type < BCH_DATA_NR)
				d->sectors[g[j].data_type] += g[j].dirty_sectors;
	}
	d->sectors[BCH_DATA_CACHED] = i < BCH_FS_MAX_DEVS ? w->dev_cached[i] : 0;
}

int bch_fs_usage(struct bch_fs *c, struct bch_ioctl_usage *u, struct printbuf *msg)
{
	struct usage_walk w = { 0 };
	struct bch_space *s = xcalloc(1, sizeof(*s));
	unsigned i, t, r;
	int ret;

	memset(&u->fs, 0, sizeof(u->fs));
	for (i = 0; i < u->nr_devices; i++) {
		memset(&u->devs[i], 0, sizeof(u->devs[i]));
		u->devs[i].alive = 0;
	}
	for (i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
		if (bch_sb_member_exists(c->sb, i) && i >= u->nr_devices) {
			pr_buf(msg, "member %u does not fit in %u device slots", i, u->nr_devices);
			free(s);
			return -ERANGE;
		}

	ret = usage_walk(c, &w, msg);
	if (ret)
		goto out;
	bch_space_read(space_alloc(c, &w), s);
	/*
	 * capacity and used as df sees them (buckets); sectors[][]: on disk,
	 * one copy (the 2018 tools multiply by the number of copies)
	 */
	u->fs.capacity		= s->capacity;
	u->fs.used		= s->used;
	u->fs.online_reserved	= s->reserve_promised;
	for (t = 0; t < BCH_DATA_NR; t++)
		for (r = 0; r < BCH_REPLICAS_MAX; r++)
			u->fs.sectors[t][r] = w.disk[t][r] / (t == BCH_DATA_CACHED ? 1 : r + 1);
	memcpy(u->fs.persistent_reserved, w.persistent_reserved, sizeof(w.persistent_reserved));
	for (i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++)
		if (bch_sb_member_exists(c->sb, i))
			usage_dev(c, &w, s, i, &u->devs[i]);
out:
	usage_walk_exit(&w);
	free(s);
	return ret ? -bch_err_errno(ret) : 0;
}

int bch_fs_usage_replicas(struct bch_fs *c, struct printbuf *out)
{
	struct usage_walk w = { 0 };
	struct bch_replicas_iter it;
	const struct bch_replicas_entry *e;
	int ret = usage_walk(c, &w, out);

	if (ret) {
		usage_walk_exit(&w);
		return -bch_err_errno(ret);
	}
	/* every entry of the superblock (journal ones have no count), then the others */
	bch_sb_replicas_iter_init(&it, c->sb);
	while ((e = bch_sb_replicas_next(&it))) {
		uint64_t devs = 0, disk = 0, unc = 0;

		for (unsigned i = 0; i < e->nr; i++)
			devs |= e->devs[i] < 64 ? 1ULL << e->devs[i] : 0;
		for (size_t i = 0; i < w.nr_e; i++)
			if (w.e[i].data_type == e->data_type && w.e[i].devs == devs) {
				disk = w.e[i].disk / max_t(unsigned, nr_devs(devs), 1);
				unc = w.e[i].uncompressed / max_t(unsigned, nr_devs(devs), 1);
				w.e[i].data_type = 0xff;	/* printed */
			}
		pr_buf(out, "%u %" PRIx64 " %" PRIu64 " %" PRIu64 "%s\n", e->data_type, devs,
		       disk, unc, e->data_type == BCH_DATA_JOURNAL ? " -" : "");
	}
	for (size_t i = 0; i < w.nr_e; i++)
		if (w.e[i].data_type != 0xff) {
			unsigned n = max_t(unsigned, nr_devs(w.e[i].devs), 1);

			pr_buf(out, "%u %" PRIx64 " %" PRIu64 " %" PRIu64 " unmarked\n",
			       w.e[i].data_type, w.e[i].devs, w.e[i].disk / n,
			       w.e[i].uncompressed / n);
		}
	usage_walk_exit(&w);
	return 0;
}

int bch_fs_usage_space(struct bch_fs *c, struct printbuf *out)
{
	struct usage_walk w = { 0 };
	struct bch_space *s;
	int ret = usage_walk(c, &w, out);

	if (ret) {
		usage_walk_exit(&w);
		return -bch_err_errno(ret);
	}
	s = xcalloc(1, sizeof(*s));
	bch_space_read(space_alloc(c, &w), s);
	pr_buf(out, "capacity %" PRIu64 "\nused %" PRIu64 "\nfree %" PRIu64
	       "\nreserved %" PRIu64 "\nreserve_btree %" PRIu64 "\nreserve_nodata %" PRIu64
	       "\nreserve_promised %" PRIu64 "\navailable %" PRIu64 "\n",
	       s->capacity, s->used, s->free, s->reserved, s->reserve_btree,
	       s->reserve_nodata, s->reserve_promised, s->available);
	for (unsigned t = 0; t < BCH_DATA_NR; t++)
		for (unsigned r = 0; r < BCH_REPLICAS_MAX; r++)
			if (w.disk[t][r] || w.uncompressed[t][r])
				pr_buf(out, "data %u %u %" PRIu64 " %" PRIu64 "\n", t, r + 1,
				       w.disk[t][r], w.uncompressed[t][r]);
	for (unsigned i = 0; i < BCH_ALLOC_MAX_DEVS; i++)
		if (s->dev[i].present)
			pr_buf(out, "dev %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			       i, s->dev[i].capacity, s->dev[i].used, s->dev[i].free,
			       s->dev[i].reserved, s->dev[i].available);
	free(s);
	usage_walk_exit(&w);
	return 0;
}

/* ---- READ_SUPER, DISK_GET_IDX, DEV_NAMES ------------------------------------ */

static int read_super(struct bch_fs *c, const struct bch_ioctl_read_super *arg,
		      const char *path, struct bch_admin_out *out)
{
	const struct bch_sb *sb = c->sb;
	size_t bytes;
	unsigned idx;
	int ret;

	if ((arg->flags & ~(BCH_BY_INDEX | BCH_READ_DEV)) || arg->pad) {
		pr_buf(&out->msg, "READ_SUPER: unknown flags %#x or non-zero padding", arg->flags);
		return -EINVAL;
	}
	if (arg->flags & BCH_READ_DEV) {
		ret = bch_fs_member_lookup(c, arg->flags, arg->dev, path, &idx, &out->msg);
		if (ret)
			return ret;
		if (!c->devs[idx] || !c->devs[idx]->sb) {
			pr_buf(&out->msg, "member %u is offline: its superblock cannot be read", idx);
			return -ENXIO;
		}
		sb = c->devs[idx]->sb;
	}
	bytes = bch_sb_bytes(sb);
	if (arg->size < bytes) {
		pr_buf(&out->msg, "superblock is %zu bytes, the buffer %" PRIu64, bytes, arg->size);
		return -ERANGE;
	}
	out->data = xmalloc(bytes);
	memcpy(out->data, sb, bytes);
	out->bytes = bytes;
	return 0;
}

static int disk_get_idx(struct bch_fs *c, const struct bch_ioctl_disk_get_idx *arg,
			struct printbuf *msg)
{
	unsigned maj = (unsigned)((arg->dev >> 8) & 0xfff);
	unsigned min = (unsigned)((arg->dev & 0xff) | ((arg->dev >> 12) & 0xfff00));
	dev_t want = makedev(maj, min);

	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++) {
		struct stat st;

		if (c->devs[i] && c->devs[i]->io && !fstat(c->devs[i]->io->fd, &st) &&
		    S_ISBLK(st.st_mode) && st.st_rdev == want)
			return (int)i;
	}
	pr_buf(msg, "no online member is block device %u:%u", maj, min);
	return -ENOENT;
}

/* "IDX PATH" of each online member: the file it has open (a relative name
 * given at mount time means nothing to another process) */
static void dev_names(struct bch_fs *c, struct printbuf *out)
{
	for (unsigned i = 0; i < c->nr_devices && i < BCH_FS_MAX_DEVS; i++) {
		char link[64], path[4096];
		ssize_t n;

		if (!c->devs[i] || !c->devs[i]->io)
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", c->devs[i]->io->fd);
		n = readlink(link, path, sizeof(path) - 1);
		if (n > 0 && path[0] == '/') {
			path[n] = 0;
			pr_buf(out, "%u %s\n", i, path);
		} else {
			pr_buf(out, "%u %s\n", i, c->devs[i]->io->path);
		}
	}
}

void bch_fs_integrity_text(struct bch_fs *c, struct printbuf *out)
{
	const struct bch_fs_integrity *in = &c->integ;

	pr_buf(out, "error_action %s\n", bch_fs_error_action_str(in->action));
	pr_buf(out, "read_only %u\n", bch_fs_writes_stopped(c) ? 1 : 0);
	pr_buf(out, "nodes_bad %" PRIu64 "\n", in->nodes_bad);
	pr_buf(out, "node_copies_repaired %" PRIu64 "\n", in->node_copies_repaired);
	pr_buf(out, "data_bad %" PRIu64 "\n", in->data_bad);
	pr_buf(out, "data_copies_repaired %" PRIu64 "\n", in->data_copies_repaired);
}

/* ---- the dispatcher ------------------------------------------------------- */

static bool needs_privilege(uint32_t nr)
{
	return nr != BCH_IOCTL_QUERY_UUID && nr != BCH_IOCTL_USAGE && nr != BCH_CTL_DEV_NAMES &&
	       nr != BCH_CTL_REPLICAS_USAGE && nr != BCH_CTL_SPACE && nr != BCH_CTL_INTEGRITY;
}

/* The argument's size must be what the number says (the transports check it too). */
static bool arg_ok(const struct bch_admin_call *call)
{
	size_t want = bch_ctl_arg_size(call->nr);

	if (call->nr == BCH_IOCTL_USAGE)
		return call->arg_bytes >= want &&
		       call->arg_bytes == want + (size_t)((struct bch_ioctl_usage *)call->arg)->nr_devices *
						 sizeof(struct bch_ioctl_dev_usage);
	return call->arg_bytes == want && (want == 0 || call->arg);
}

/* Copy the argument back (the _IOR / _IOWR ioctls). */
static void out_arg(const struct bch_admin_call *call, struct bch_admin_out *out)
{
	out->data = xmalloc(call->arg_bytes ?: 1);
	memcpy(out->data, call->arg, call->arg_bytes);
	out->bytes = call->arg_bytes;
}

/*
 * DISK_ADD / DISK_ONLINE of a file inside our own mount, or of a loop
 * device (or a device-mapper device...) built on one: refused before the
 * engine is locked (here a stat may still be served by the mount's FUSE
 * thread; under the lock the device's first read would wait for ever). By
 * descriptor, or by path when none came.
 */
static bool inside_own_mount(struct bch_admin *a, const struct bch_admin_call *call,
			     struct printbuf *msg)
{
	struct dev_stack ds;
	bool inside = false;

	if (!a->mount_dev ||
	    (call->nr != BCH_IOCTL_DISK_ADD && call->nr != BCH_IOCTL_DISK_ONLINE) ||
	    (call->fd < 0 && !call->path) ||
	    dev_stack_get(call->path ?: "", call->fd, &ds))
		return false;
	for (unsigned i = 0; i < ds.nr; i++)
		inside |= !ds.v[i].id.blk && ds.v[i].id.dev == a->mount_dev;
	dev_stack_exit(&ds);
	if (inside)
		pr_buf(msg, "%s is a file inside this filesystem's own mount, or built on one; a member "
		       "must live outside the filesystem", call->path ?: "the device");
	return inside;
}

int bch_admin_ioctl(struct bch_admin *a, const struct bch_admin_call *call,
		    struct bch_admin_out *out)
{
	struct bch_fs *c = a->c;
	int ret;

	if (!bch_ctl_known(call->nr)) {
		if (call->fd >= 0)
			close(call->fd);
		return -ENOTTY;
	}
	if (!arg_ok(call)) {
		if (call->fd >= 0)
			close(call->fd);
		pr_str(&out->msg, "argument has the wrong size");
		return -EINVAL;
	}
	if (needs_privilege(call->nr) && !call->privileged) {
		if (call->fd >= 0)
			close(call->fd);
		pr_str(&out->msg, "only root (CAP_SYS_ADMIN) may do this");
		return -EPERM;
	}
	if (inside_own_mount(a, call, &out->msg)) {
		if (call->fd >= 0)
			close(call->fd);
		return -EINVAL;
	}
	/* a job runs in its own thread and takes the engine lock itself */
	if (call->nr == BCH_IOCTL_DATA || call->nr == BCH_IOCTL_DATA_V2) {
		ret = bch_fs_data(a, call->arg, &out->job_fd, &out->msg);
		return ret < 0 ? -bch_err_errno(ret) : ret;
	}

	bch_fs_lock(c);
	switch (call->nr) {
	case BCH_IOCTL_QUERY_UUID:
		ret = bch_fs_query_uuid(c, call->arg);
		if (!ret)
			out_arg(call, out);
		break;
	case BCH_IOCTL_USAGE:
		ret = bch_fs_usage(c, call->arg, &out->msg);
		if (!ret)
			out_arg(call, out);
		break;
	case BCH_IOCTL_READ_SUPER:
		ret = read_super(c, call->arg, call->path, out);
		break;
	case BCH_IOCTL_DISK_GET_IDX:
		ret = disk_get_idx(c, call->arg, &out->msg);
		break;
	case BCH_CTL_DEV_NAMES:
		dev_names(c, &out->msg);
		ret = 0;
		break;
	case BCH_CTL_REPLICAS_USAGE:
		ret = bch_fs_usage_replicas(c, &out->msg);
		break;
	case BCH_CTL_SPACE:
		ret = bch_fs_usage_space(c, &out->msg);
		if (!ret) {
			bch_copygc_text(c, &out->msg);
			bch_rebalance_text(c, &out->msg);
			bch_promote_text(c, &out->msg);
		}
		break;
	case BCH_CTL_JOURNAL_FLUSH:
		ret = bch_journal_flush(c, &out->msg);	/* nothing to do read-only */
		break;
	case BCH_CTL_INTEGRITY:
		bch_fs_integrity_text(c, &out->msg);
		ret = 0;
		break;
	default:
		ret = bch_admin_dev_ioctl(a, call, out);
		break;
	}
	bch_fs_unlock(c);
	/* the kernel's errno values, not our error codes */
	return ret < 0 ? -bch_err_errno(ret) : ret;
}
