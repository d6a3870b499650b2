// SPDX-License-Identifier: GPL-2.0
/*
 * bcachefs fs usage (doc/ioctl.md §9.2): space usage of a mounted filesystem
 * through BCH_IOCTL_USAGE, as the 2018 tool printed it (bytes by default,
 * -h human-readable), plus the bytes of each replicas entry; or one JSON
 * object (--json). An unmounted filesystem is opened read-only from its
 * devices (DEV[:DEV...]).
 */
#include <errno.h>
#include <stddef.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "cmd_online.h"
#include "cmd_opts.h"
#include "cmds.h"
#include "libbcachefs/admin/ctl_proto.h"
#include "libbcachefs/format/format.h"
#include "libbcachefs/format/ioctl.h"
#include "libbcachefs/dev/super.h"
#include "libbcachefs/util/util.h"

struct dev_row {
	unsigned			idx;
	char				label[256];
	char				name[4096];
	const struct bch_ioctl_dev_usage *u;
};

static bool human;

static void pr_size(struct printbuf *out, uint64_t sectors)
{
	if (human)
		pr_human_sectors(out, (int64_t)sectors);
	else
		pr_u64(out, sectors << 9);
}

/* "%12s" of a size */
static void col(struct printbuf *out, uint64_t sectors, unsigned width)
{
	struct printbuf s = PRINTBUF;

	pr_size(&s, sectors);
	pr_buf(out, "%*s", width, printbuf_str(&s));
	printbuf_exit(&s);
}

/* /dev/NAME of block device @dev (huge encoding) from /proc/partitions. */
static bool partition_name(uint32_t dev, char *out, size_t size)
{
	unsigned maj = (dev >> 8) & 0xfff, min = (dev & 0xff) | ((dev >> 12) & 0xfff00);
	char line[256], name[200];
	unsigned a, b;
	unsigned long long blocks;
	bool found = false;
	FILE *f = fopen("/proc/partitions", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %u %llu %199s", &a, &b, &blocks, name) == 4 &&
		    a == maj && b == min) {
			snprintf(out, size, "/dev/%s", name);
			found = true;
		}
	fclose(f);
	return found;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct dev_row *a = pa, *b = pb;
	int c = strcmp(a->label, b->label);

	return c ?: (a->idx > b->idx) - (a->idx < b->idx);
}

/* The device names the mount gives (BCH_CTL_DEV_NAMES: "IDX PATH" lines). */
static void dev_names(struct bch_handle *h, struct dev_row *rows, unsigned nr)
{
	const char *p;

	if (bch_ioctl(h, BCH_CTL_DEV_NAMES, NULL) < 0)
		return;
	for (p = printbuf_str(&h->msg); *p;) {
		const char *nl = strchr(p, '\n'), *sp = strchr(p, ' ');
		unsigned long idx = strtoul(p, NULL, 10);

		if (!nl || !sp || sp > nl)
			break;
		for (unsigned i = 0; i < nr; i++)
			if (rows[i].idx == idx)
				snprintf(rows[i].name, sizeof(rows[i].name), "%.*s",
					 (int)(nl - sp - 1), sp + 1);
		p = nl + 1;
	}
}

struct rep_entry {
	unsigned	data_type;
	uint64_t	devs;
	uint64_t	sectors;	/* on disk, one copy */
	uint64_t	uncompressed;	/* before compression, one copy */
	bool		counted;	/* journal entries have no count */
	bool		unmarked;	/* not in the superblock */
};

/* Bytes per replicas entry (BCH_CTL_REPLICAS_USAGE), or the superblock's entries. */
static size_t replicas_entries(struct bch_handle *h, const struct bch_sb *sb,
			       struct rep_entry **ret)
{
	struct rep_entry *e = NULL;
	size_t nr = 0;

	if (bch_ioctl(h, BCH_CTL_REPLICAS_USAGE, NULL) >= 0) {
		const char *p = printbuf_str(&h->msg);

		while (*p) {
			struct rep_entry r = { 0 };
			char tail[16] = "";
			const char *nl = strchr(p, '\n');

			if (!nl || sscanf(p, "%u %" SCNx64 " %" SCNu64 " %" SCNu64 " %15s",
					  &r.data_type, &r.devs, &r.sectors, &r.uncompressed, tail) < 4)
				break;
			r.counted = strcmp(tail, "-") != 0;
			r.unmarked = !strcmp(tail, "unmarked");
			e = xrealloc(e, (nr + 1) * sizeof(*e));
			e[nr++] = r;
			p = nl + 1;
		}
	} else {
		struct bch_replicas_iter it;
		const struct bch_replicas_entry *re;

		bch_sb_replicas_iter_init(&it, sb);
		while ((re = bch_sb_replicas_next(&it))) {
			struct rep_entry r = { .data_type = re->data_type };

			for (unsigned i = 0; i < re->nr; i++)
				r.devs |= re->devs[i] < 64 ? 1ULL << re->devs[i] : 0;
			e = xrealloc(e, (nr + 1) * sizeof(*e));
			e[nr++] = r;
		}
	}
	*ret = e;
	return nr;
}

/* What the mount found and repaired (BCH_CTL_INTEGRITY); have = false when not asked. */
static struct integrity {
	bool		have;
	char		action[32];
	bool		read_only;
	uint64_t	nodes_bad, node_copies_repaired, data_bad, data_copies_repaired;
} integ;

static void integrity_read(struct bch_handle *h, struct integrity *in)
{
	const char *p;

	memset(in, 0, sizeof(*in));
	if (bch_ioctl(h, BCH_CTL_INTEGRITY, NULL) < 0)
		return;
	in->have = true;
	for (p = printbuf_str(&h->msg); *p;) {
		const char *nl = strchrnul(p, '\n');
		char name[32], val[32];
		unsigned v;

		if (sscanf(p, "%31s %31s", name, val) == 2) {
			if (!strcmp(name, "error_action"))
				snprintf(in->action, sizeof(in->action), "%s", val);
			else if (!strcmp(name, "read_only") && sscanf(val, "%u", &v) == 1)
				in->read_only = v;
			else if (!strcmp(name, "nodes_bad"))
				sscanf(val, "%" SCNu64, &in->nodes_bad);
			else if (!strcmp(name, "node_copies_repaired"))
				sscanf(val, "%" SCNu64, &in->node_copies_repaired);
			else if (!strcmp(name, "data_bad"))
				sscanf(val, "%" SCNu64, &in->data_bad);
			else if (!strcmp(name, "data_copies_repaired"))
				sscanf(val, "%" SCNu64, &in->data_copies_repaired);
		}
		p = *nl ? nl + 1 : nl;
	}
}

static void print_integrity_text(struct printbuf *out, const struct integrity *in)
{
	if (!in->have)
		return;
	pr_str(out, "\nDamage found since mounted (errors=");
	pr_str(out, in->action);
	pr_str(out, in->read_only ? ", read-only now):\n" : "):\n");
	pr_buf(out, "  %-34s%12" PRIu64 "\n", "btree nodes with no good copy:", in->nodes_bad);
	pr_buf(out, "  %-34s%12" PRIu64 "\n", "btree node copies repaired:", in->node_copies_repaired);
	pr_buf(out, "  %-34s%12" PRIu64 "\n", "data reads with no good copy:", in->data_bad);
	pr_buf(out, "  %-34s%12" PRIu64 "\n", "data copies repaired on read:", in->data_copies_repaired);
}

static void print_integrity_json(struct json *j, const struct integrity *in)
{
	if (!in->have)
		return;
	json_obj_begin(j, "integrity");
	json_str(j, "error_action", in->action);
	json_bool(j, "read_only", in->read_only);
	json_u64(j, "nodes_bad", in->nodes_bad);
	json_u64(j, "node_copies_repaired", in->node_copies_repaired);
	json_u64(j, "data_bad", in->data_bad);
	json_u64(j, "data_copies_repaired", in->data_copies_repaired);
	json_obj_end(j);
}

/*
 * What the copying GC did (the copygc_* lines of BCH_CTL_SPACE; have =
 * false unless a mount's copygc thread runs).
 */
static struct copygc_usage {
	bool		have;
	uint64_t	passes, buckets, sectors, extents, raced, errors;
} gcu;

/* What rebalance did (the rebalance_* lines; have = its thread runs). */
static struct rebalance_usage {
	bool		have;
	uint64_t	passes, extents, recompressed, sectors, errors;
} rbu;

/*
 * Reads of file data per device and the cached copies they asked for
 * (the promote_* and read_sectors_dev lines; have = a mount answered).
 */
static struct promote_usage {
	bool		have, thread;
	uint64_t	queued, extents, sectors, raced, full, errors, sweeps, swept;
	bool		have_read[BCH_CTL_USAGE_DEVS_MAX];
	uint64_t	read_sectors[BCH_CTL_USAGE_DEVS_MAX];
} pmu;

static void promote_read(const char *msg, struct promote_usage *r)
{
	static const struct { const char *name; size_t off; } f[] = {
		{ "promote_queued",	offsetof(struct promote_usage, queued) },
		{ "promote_extents",	offsetof(struct promote_usage, extents) },
		{ "promote_sectors",	offsetof(struct promote_usage, sectors) },
		{ "promote_raced",	offsetof(struct promote_usage, raced) },
		{ "promote_full",	offsetof(struct promote_usage, full) },
		{ "promote_errors",	offsetof(struct promote_usage, errors) },
		{ "promote_sweeps",	offsetof(struct promote_usage, sweeps) },
		{ "promote_swept",	offsetof(struct promote_usage, swept) },
	};
	const char *p;

	memset(r, 0, sizeof(*r));
	for (p = msg; *p;) {
		const char *nl = strchrnul(p, '\n');
		char name[32];
		uint64_t v, w;
		unsigned i;

		if (sscanf(p, "read_sectors_dev %u %" SCNu64, &i, &v) == 2) {
			if (i < BCH_CTL_USAGE_DEVS_MAX) {
				r->have_read[i] = true;
				r->read_sectors[i] = v;
			}
		} else if (sscanf(p, "%31s %" SCNu64, name, &w) == 2) {
			if (!strcmp(name, "promote_thread")) {
				r->have = true;
				r->thread = w != 0;
			}
			for (i = 0; i < ARRAY_SIZE(f); i++)
				if (!strcmp(name, f[i].name))
					*(uint64_t *)((char *)r + f[i].off) = w;
		}
		p = *nl ? nl + 1 : nl;
	}
}

static void print_promote_text(struct printbuf *out, const struct promote_usage *r)
{
	if (!r->thread || !r->queued)
		return;
	pr_str(out, "\nPromote since mounted:\n");
	pr_buf(out, "  %-34s%12" PRIu64 "\n", "extents asked for by reads:", r->queued);
	pr_buf(out, "  %-34s%12" PRIu64 "\n", "cached copies written:", r->extents);
	pr_buf(out, "  %-34s", "data written:");
	col(out, r->sectors, 12);
	pr_char(out, '\n');
	if (r->full)
		pr_buf(out, "  %-34s%12" PRIu64 "\n", "no room on the target:", r->full);
	if (r->raced + r->errors)
		pr_buf(out, "  %-34s%12" PRIu64 "\n", "not promoted:", r->raced + r->errors);
}

static void print_promote_json(struct json *j, const struct promote_usage *r)
{
	if (!r->have)
		return;
	json_obj_begin(j, "promote");
	json_bool(j, "thread", r->thread);
	json_u64(j, "extents_asked", r->queued);
	json_u64(j, "extents_promoted", r->extents);
	json_u64(j, "bytes_written", r->sectors << 9);
	json_u64(j, "extents_changed_meanwhile", r->raced);
	json_u64(j, "no_room", r->full);
	json_u64(j, "errors", r->errors);
	json_u64(j, "stale_sweeps", r->sweeps);
	json_u64(j, "extents_swept", r->swept);
	json_obj_end(j);
}

static void rebalance_read(const char *msg, struct rebalance_usage *r)
{
	static const struct { const char *name; size_t off; } f[] = {
		{ "rebalance_passes",	offsetof(struct rebalance_usage, passes) },
		{ "rebalance_extents",	offsetof(struct rebalance_usage, extents) },
		{ "rebalance_recompressed", offsetof(struct rebalance_usage, recompressed) },
		{ "rebalance_sectors",	offsetof(struct rebalance_usage, sectors) },
		{ "rebalance_errors",	offsetof(struct rebalance_usage, errors) },
	};
	const char *p;

	memset(r, 0, sizeof(*r));
	for (p = msg; *p;) {
		const char *nl = strchrnul(p, '\n');
		char name[32];
		uint64_t v;

		if (sscanf(p, "%31s %" SCNu64, name, &v) == 2) {
			if (!strcmp(name, "rebalance_thread"))
				r->have = v != 0;
			for (unsigned i = 0; i < ARRAY_SIZE(f); i++)
				if (!strcmp(name, f[i].name))
					*(uint64_t *)((char *)r + f[i].off) = v;
		}
		p = *nl ? nl + 1 : nl;
	}
}

static void print_rebalance_text(struct printbuf *out, const struct rebalance_usage *r)
{
	if (!r->have || !r->passes)
		return;
	pr_str(out, "\nRebalance since mounted:\n");
	pr_buf(out, "  %-34s%12" PRIu64 "\n", "extents moved to their target:",
	       r->extents - r->recompressed);
	pr_buf(out, "  %-34s%12" PRIu64 "\n", "extents compressed:", r->recompressed);
	pr_buf(out, "  %-34s", "data written:");
	col(out, r->sectors, 12);
	pr_buf(out, "\n  %-34s%12" PRIu64 "\n", "passes:", r->passes);
	if (r->errors)
		pr_buf(out, "  %-34s%12" PRIu64 "\n", "extents not moved:", r->errors);
}

static void print_rebalance_json(struct json *j, const struct rebalance_usage *r)
{
	if (!r->have)
		return;
	json_obj_begin(j, "rebalance");
	json_u64(j, "extents_moved", r->extents - r->recompressed);
	json_u64(j, "extents_compressed", r->recompressed);
	json_u64(j, "bytes_written", r->sectors << 9);
	json_u64(j, "passes", r->passes);
	json_u64(j, "extents_not_moved", r->errors);
	json_obj_end(j);
}

static void copygc_read(const char *msg, struct copygc_usage *g)
{
	static const struct { const char *name; size_t off; } f[] = {
		{ "copygc_passes",	offsetof(struct copygc_usage, passes) },
		{ "copygc_buckets",	offsetof(struct copygc_usage, buckets) },
		{ "copygc_sectors",	offsetof(struct copygc_usage, sectors) },
		{ "copygc_extents",	offsetof(struct copygc_usage, extents) },
		{ "copygc_raced",	offsetof(struct copygc_usage, raced) },
		{ "copygc_errors",	offsetof(struct copygc_usage, errors) },
	};
	const char *p;

	memset(g, 0, sizeof(*g));
	for (p = msg; *p;) {
		const char *nl = strchrnul(p, '\n');
		char name[32];
		uint64_t v;

		if (sscanf(p, "%31s %" SCNu64, name, &v) == 2) {
			if (!strcmp(name, "copygc_thread"))
				g->have = v != 0;
			for (unsigned i = 0; i < ARRAY_SIZE(f); i++)
				if (!strcmp(name, f[i].name))
					*(uint64_t *)((char *)g + f[i].off) = v;
		}
		p = *nl ? nl + 1 : nl;
	}
}

static void print_copygc_text(struct printbuf *out, const struct copygc_usage *g)
{
	if (!g->have)
		return;
	pr_str(out, "\nCopying GC since mounted:\n");
	pr_buf(out, "  %-34s%12" PRIu64 "\n", "buckets emptied:", g->buckets);
	pr_buf(out, "  %-34s", "data moved:");
	col(out, g->sectors, 12);
	pr_buf(out, "\n  %-34s%12" PRIu64 "\n", "extents moved:", g->extents);
	pr_buf(out, "  %-34s%12" PRIu64 "\n", "passes:", g->passes);
	if (g->raced || g->errors)
		pr_buf(out, "  %-34s%12" PRIu64 "\n", "extents left (changed, unreadable):",
		       g->raced + g->errors);
}

static void print_copygc_json(struct json *j, const struct copygc_usage *g)
{
	if (!g->have)
		return;
	json_obj_begin(j, "copygc");
	json_u64(j, "buckets_emptied", g->buckets);
	json_u64(j, "bytes_moved", g->sectors << 9);
	json_u64(j, "extents_moved", g->extents);
	json_u64(j, "passes", g->passes);
	json_u64(j, "extents_changed_meanwhile", g->raced);
	json_u64(j, "extents_not_moved", g->errors);
	json_obj_end(j);
}

/*
 * The space accounting (BCH_CTL_SPACE, sectors): the same numbers statfs
 * gives df. A kernel does not answer it: then what BCH_IOCTL_USAGE says.
 */
struct space {
	bool		have;
	uint64_t	capacity, used, free, reserved, available;
	uint64_t	reserve_btree, reserve_nodata, reserve_promised;
	/* every copy, by data type */
	uint64_t	disk[BCH_DATA_NR], uncompressed[BCH_DATA_NR];
	/* one copy, by data type and number of copies */
	uint64_t	unc_copy[BCH_DATA_NR][BCH_REPLICAS_MAX];
	struct {
		bool		have;
		uint64_t	capacity, used, free, reserved, available;
	} dev[BCH_CTL_USAGE_DEVS_MAX];
};

static void space_read(struct bch_handle *h, const struct bch_ioctl_usage *u, struct space *s)
{
	static const struct { const char *name; size_t off; } f[] = {
		{ "capacity",		offsetof(struct space, capacity) },
		{ "used",		offsetof(struct space, used) },
		{ "free",		offsetof(struct space, free) },
		{ "reserved",		offsetof(struct space, reserved) },
		{ "reserve_btree",	offsetof(struct space, reserve_btree) },
		{ "reserve_nodata",	offsetof(struct space, reserve_nodata) },
		{ "reserve_promised",	offsetof(struct space, reserve_promised) },
		{ "available",		offsetof(struct space, available) },
	};
	const char *p;

	memset(s, 0, sizeof(*s));
	if (bch_ioctl(h, BCH_CTL_SPACE, NULL) < 0) {
		/* a kernel: its capacity is what data may take, its used includes reservations */
		s->capacity = u->fs.capacity;
		s->used = u->fs.used;
		s->free = s->available = u->fs.capacity > u->fs.used ? u->fs.capacity - u->fs.used : 0;
		for (unsigned t = 0; t < BCH_DATA_NR; t++)
			for (unsigned r = 0; r < BCH_REPLICAS_MAX; r++) {
				s->disk[t] += u->fs.sectors[t][r] * (r + 1);
				s->uncompressed[t] += u->fs.sectors[t][r] * (r + 1);
				s->unc_copy[t][r] = u->fs.sectors[t][r];
			}
		return;
	}
	s->have = true;
	for (p = printbuf_str(&h->msg); *p;) {
		const char *nl = strchr(p, '\n');
		char name[32];
		uint64_t v[6];
		unsigned t, r, i;

		if (!nl)
			break;
		if (sscanf(p, "data %u %u %" SCNu64 " %" SCNu64, &t, &r, &v[0], &v[1]) == 4) {
			if (t < BCH_DATA_NR && r >= 1 && r <= BCH_REPLICAS_MAX) {
				s->disk[t] += v[0];
				s->uncompressed[t] += v[1];
				s->unc_copy[t][r - 1] = t == BCH_DATA_CACHED ? v[1] : v[1] / r;
			}
		} else if (sscanf(p, "dev %u %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
				  &i, &v[0], &v[1], &v[2], &v[3], &v[4]) == 6) {
			if (i < BCH_CTL_USAGE_DEVS_MAX) {
				s->dev[i].have = true;
				s->dev[i].capacity = v[0];
				s->dev[i].used = v[1];
				s->dev[i].free = v[2];
				s->dev[i].reserved = v[3];
				s->dev[i].available = v[4];
			}
		} else if (sscanf(p, "%31s %" SCNu64, name, &v[0]) == 2) {
			for (i = 0; i < ARRAY_SIZE(f); i++)
				if (!strcmp(name, f[i].name))
					*(uint64_t *)((char *)s + f[i].off) = v[0];
		}
		p = nl + 1;
	}
}

/* The available space of device @d (its row of the accounting, else its free buckets). */
static uint64_t dev_available(const struct space *s, unsigned idx,
			      const struct bch_ioctl_dev_usage *d)
{
	if (s->have && idx < BCH_CTL_USAGE_DEVS_MAX && s->dev[idx].have)
		return s->dev[idx].available;
	return d->buckets[BCH_DATA_NONE] * d->bucket_size;
}

static void pr_devs(struct printbuf *out, uint64_t devs)
{
	bool first = true;

	pr_char(out, '[');
	for (unsigned d = 0; d < 64; d++)
		if (devs & (1ULL << d)) {
			pr_buf(out, "%s%u", first ? "" : " ", d);
			first = false;
		}
	pr_char(out, ']');
}

static const char *type_name(unsigned t)
{
	return bch_data_type_name(t) ?: "unknown";
}

static void print_text(struct printbuf *out, const struct bch_sb *sb,
		       const struct bch_ioctl_usage *u, const struct space *s,
		       struct dev_row *rows, unsigned nr_rows,
		       struct rep_entry *re, size_t nr_re)
{
	static const unsigned fs_types[] = { BCH_DATA_BTREE, BCH_DATA_USER, BCH_DATA_CACHED };
	static const unsigned dev_types[] = {
		BCH_DATA_SB, BCH_DATA_JOURNAL, BCH_DATA_BTREE, BCH_DATA_USER, BCH_DATA_CACHED,
	};
	unsigned i, r;

	pr_str(out, "Filesystem ");
	pr_uuid(out, sb->user_uuid.b);
	pr_str(out, ":\n");
	/* used + reserved + available = size */
	pr_buf(out, "%-20s", "Size:");
	col(out, s->capacity, 12);
	pr_buf(out, "\n%-20s", "Used:");
	col(out, s->used, 12);
	pr_buf(out, "\n%-20s", "Reserved:");
	col(out, s->reserved, 12);
	pr_buf(out, "\n%-20s", "Available:");
	col(out, s->available, 12);
	pr_buf(out, "\n\n%-20s%12s%14s\n", "Data (all copies):", "on disk", "uncompressed");
	for (i = 0; i < ARRAY_SIZE(dev_types); i++) {
		unsigned t = dev_types[i];
		struct printbuf name = PRINTBUF;
		uint64_t disk = s->disk[t], unc = s->uncompressed[t];

		if (t == BCH_DATA_SB || t == BCH_DATA_JOURNAL)
			for (unsigned k = 0; k < nr_rows; k++)
				disk += rows[k].u->sectors[t];
		if (t == BCH_DATA_SB || t == BCH_DATA_JOURNAL)
			unc = disk;
		pr_buf(&name, "  %s:", type_name(t));
		pr_buf(out, "%-20s", printbuf_str(&name));
		printbuf_exit(&name);
		col(out, disk, 12);
		col(out, unc, 14);
		pr_char(out, '\n');
	}
	pr_buf(out, "\n%-20s%12s%12s%12s%12s\n", "By replicas:", "1x", "2x", "3x", "4x");
	for (i = 0; i < ARRAY_SIZE(fs_types); i++) {
		struct printbuf name = PRINTBUF;

		pr_buf(&name, "  %s:", type_name(fs_types[i]));
		pr_buf(out, "%-20s", printbuf_str(&name));
		printbuf_exit(&name);
		for (r = 0; r < BCH_REPLICAS_MAX; r++)
			col(out, u->fs.sectors[fs_types[i]][r], 12);
		pr_char(out, '\n');
	}
	pr_buf(out, "%-20s", "  reserved:");
	for (r = 0; r < BCH_REPLICAS_MAX; r++)
		col(out, u->fs.persistent_reserved[r], 12);
	pr_buf(out, "\n%-20s", "  online reserved:");
	col(out, u->fs.online_reserved, 12);
	pr_char(out, '\n');
	print_integrity_text(out, &integ);
	print_copygc_text(out, &gcu);
	print_rebalance_text(out, &rbu);
	print_promote_text(out, &pmu);

	if (nr_re) {
		pr_buf(out, "\n%-30s%12s%14s\n", "By replicas entry (one copy):", "on disk", "uncompressed");
		for (size_t j = 0; j < nr_re; j++) {
			struct printbuf d = PRINTBUF;

			pr_devs(&d, re[j].devs);
			pr_buf(out, "  %-10s%-18s", type_name(re[j].data_type), printbuf_str(&d));
			if (re[j].counted) {
				col(out, re[j].sectors, 12);
				col(out, re[j].uncompressed, 14);
			} else {
				pr_buf(out, "%12s%14s", "-", "-");
			}
			if (re[j].unmarked)
				pr_str(out, "  (not in the superblock)");
			pr_char(out, '\n');
			printbuf_exit(&d);
		}
	}

	for (i = 0; i < nr_rows; i++) {
		const struct bch_ioctl_dev_usage *d = rows[i].u;
		uint64_t avail = dev_available(s, rows[i].idx, d), frag;
		struct printbuf head = PRINTBUF;

		pr_buf(&head, "%s (device %u):", rows[i].label, rows[i].idx);
		pr_buf(out, "\n%-20s%24s%12s\n", printbuf_str(&head), rows[i].name,
		       bch_member_state_name(d->state));
		printbuf_exit(&head);
		pr_buf(out, "%-20s%12s%12s%12s\n", "", "data", "buckets", "fragmented");
		for (unsigned t = 0; t < ARRAY_SIZE(dev_types); t++) {
			unsigned ty = dev_types[t];
			struct printbuf name = PRINTBUF;

			frag = d->buckets[ty] * d->bucket_size > d->sectors[ty]
				? d->buckets[ty] * d->bucket_size - d->sectors[ty] : 0;
			pr_buf(&name, "  %s:", type_name(ty));
			pr_buf(out, "%-20s", printbuf_str(&name));
			col(out, d->sectors[ty], 12);
			pr_buf(out, "%12" PRIu64, d->buckets[ty]);
			col(out, frag, 12);
			pr_char(out, '\n');
			printbuf_exit(&name);
		}
		pr_buf(out, "%-20s", "  available:");
		col(out, avail, 12);
		pr_buf(out, "%12" PRIu64 "\n%-20s", d->bucket_size ? avail / d->bucket_size : 0,
		       "  capacity:");
		col(out, d->nr_buckets * d->bucket_size, 12);
		pr_buf(out, "%12" PRIu64 "\n", d->nr_buckets);
		if (pmu.thread && rows[i].idx < BCH_CTL_USAGE_DEVS_MAX && pmu.have_read[rows[i].idx]) {
			pr_buf(out, "%-20s", "  read (files):");
			col(out, pmu.read_sectors[rows[i].idx], 12);
			pr_char(out, '\n');
		}
	}
}

static void print_json(struct printbuf *out, const struct bch_sb *sb,
		       const struct bch_ioctl_usage *u, const struct space *s,
		       struct dev_row *rows, unsigned nr_rows,
		       struct rep_entry *re, size_t nr_re)
{
	struct json j;
	unsigned i, r, t;

	json_init(&j, out, true);
	json_obj_begin(&j, NULL);
	json_uuid(&j, "uuid", sb->user_uuid.b);
	json_u64(&j, "capacity", s->capacity << 9);
	json_u64(&j, "used", s->used << 9);
	json_u64(&j, "free", s->free << 9);
	json_u64(&j, "reserved", s->reserved << 9);
	json_u64(&j, "available", s->available << 9);
	json_obj_begin(&j, "reserve");
	json_u64(&j, "btree", s->reserve_btree << 9);
	json_u64(&j, "members_without_data", s->reserve_nodata << 9);
	json_u64(&j, "reservations", s->reserve_promised << 9);
	json_obj_end(&j);
	json_u64(&j, "online_reserved", u->fs.online_reserved << 9);
	json_obj_begin(&j, "data");
	for (t = BCH_DATA_SB; t < BCH_DATA_NR; t++) {
		uint64_t disk = s->disk[t], unc = s->uncompressed[t];

		if (t == BCH_DATA_SB || t == BCH_DATA_JOURNAL) {
			for (i = 0; i < nr_rows; i++)
				disk += rows[i].u->sectors[t];
			unc = disk;
		}
		json_obj_begin(&j, type_name(t));
		json_u64(&j, "bytes", disk << 9);
		json_u64(&j, "uncompressed_bytes", unc << 9);
		json_obj_end(&j);
	}
	json_obj_end(&j);
	json_arr_begin(&j, "by_replicas");
	for (t = 0; t < BCH_DATA_NR; t++)
		for (r = 0; r < BCH_REPLICAS_MAX; r++)
			if (u->fs.sectors[t][r] || s->unc_copy[t][r]) {
				json_obj_begin(&j, NULL);
				json_str(&j, "data_type", type_name(t));
				json_u64(&j, "nr_replicas", r + 1);
				json_u64(&j, "bytes", u->fs.sectors[t][r] << 9);
				json_u64(&j, "uncompressed_bytes", s->unc_copy[t][r] << 9);
				json_obj_end(&j);
			}
	json_arr_end(&j);
	json_arr_begin(&j, "persistent_reserved");
	for (r = 0; r < BCH_REPLICAS_MAX; r++)
		json_u64(&j, NULL, u->fs.persistent_reserved[r] << 9);
	json_arr_end(&j);
	json_arr_begin(&j, "replicas");
	for (size_t k = 0; k < nr_re; k++) {
		json_obj_begin(&j, NULL);
		json_str(&j, "data_type", type_name(re[k].data_type));
		json_arr_begin(&j, "devices");
		for (unsigned d = 0; d < 64; d++)
			if (re[k].devs & (1ULL << d))
				json_u64(&j, NULL, d);
		json_arr_end(&j);
		if (re[k].counted) {
			json_u64(&j, "bytes", re[k].sectors << 9);
			json_u64(&j, "uncompressed_bytes", re[k].uncompressed << 9);
		}
		json_bool(&j, "in_superblock", !re[k].unmarked);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr_begin(&j, "devices");
	for (i = 0; i < nr_rows; i++) {
		const struct bch_ioctl_dev_usage *d = rows[i].u;
		uint64_t avail = dev_available(s, rows[i].idx, d);

		json_obj_begin(&j, NULL);
		json_u64(&j, "index", rows[i].idx);
		json_str(&j, "label", rows[i].label);
		json_str(&j, "device", rows[i].name);
		json_str(&j, "state", bch_member_state_name(d->state));
		json_u64(&j, "bucket_size", (uint64_t)d->bucket_size << 9);
		json_u64(&j, "nr_buckets", d->nr_buckets);
		json_u64(&j, "capacity", d->nr_buckets * d->bucket_size << 9);
		json_u64(&j, "free_buckets", d->buckets[BCH_DATA_NONE]);
		if (rows[i].idx < BCH_CTL_USAGE_DEVS_MAX && s->dev[rows[i].idx].have)
			json_u64(&j, "reserved", s->dev[rows[i].idx].reserved << 9);
		json_u64(&j, "available_buckets", d->bucket_size ? avail / d->bucket_size : 0);
		json_u64(&j, "available", avail << 9);
		/* file data read from it since the mount (a mount answers) */
		if (rows[i].idx < BCH_CTL_USAGE_DEVS_MAX && pmu.have_read[rows[i].idx])
			json_u64(&j, "read_bytes", pmu.read_sectors[rows[i].idx] << 9);
		json_obj_begin(&j, "data");
		for (t = BCH_DATA_SB; t < BCH_DATA_NR; t++) {
			json_obj_begin(&j, type_name(t));
			json_u64(&j, "bytes", d->sectors[t] << 9);
			json_u64(&j, "buckets", d->buckets[t]);
			json_u64(&j, "fragmented", (d->buckets[t] * d->bucket_size > d->sectors[t]
				 ? d->buckets[t] * d->bucket_size - d->sectors[t] : 0) << 9);
			json_obj_end(&j);
		}
		json_obj_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	print_integrity_json(&j, &integ);
	print_copygc_json(&j, &gcu);
	print_rebalance_json(&j, &rbu);
	print_promote_json(&j, &pmu);
	json_obj_end(&j);
	pr_char(out, '\n');
}

/*
 * The superblock, for labels, the uuid and the replicas entries. Reading
 * it needs CAP_SYS_ADMIN (as in the kernel): for anyone else a bare one
 * with the uuid (QUERY_UUID is open) and no members: every label is
 * "none", and the slots grow until USAGE fits.
 */
static struct bch_sb *usage_sb(struct bch_handle *h)
{
	size_t size = 4096;
	struct bch_ioctl_query_uuid q;

	for (;;) {
		void *buf = xcalloc(1, size);
		struct bch_ioctl_read_super rs = { .size = size, .sb = (uint64_t)(uintptr_t)buf };
		long ret = bch_ioctl(h, BCH_IOCTL_READ_SUPER, &rs);
		struct bch_sb *sb;

		if (!ret && bch_sb_bytes(buf) <= size)
			return buf;
		free(buf);
		if (!ret) {
			online_die("the superblock read back is malformed");
		}
		if (ret == -ERANGE && size < (64U << 20)) {
			size *= 2;
			continue;
		}
		if (ret != -EPERM) {
			online_ioctl_err(h, "BCH_IOCTL_READ_SUPER", ret);
			exit(EXIT_FAIL);
		}
		ret = bch_ioctl(h, BCH_IOCTL_QUERY_UUID, &q);
		if (ret) {
			online_ioctl_err(h, "BCH_IOCTL_QUERY_UUID", ret);
			exit(EXIT_FAIL);
		}
		sb = xcalloc(1, sizeof(*sb));
		memcpy(sb->user_uuid.b, q.uuid.b, 16);
		sb->nr_devices = 4;
		return sb;
	}
}

static void fs_usage(const char *arg, bool json)
{
	struct bch_handle *h = online_open(arg, BCH_OPEN_OFFLINE_RO);
	struct bch_sb *sb = usage_sb(h);
	unsigned slots = max_t(unsigned, sb->nr_devices, 1), nr_rows = 0, i;
	struct bch_ioctl_usage *u;
	struct dev_row *rows;
	struct rep_entry *re;
	struct space *space;
	size_t nr_re;
	struct printbuf out = PRINTBUF;
	long ret;

	for (;;) {
		u = xcalloc(1, sizeof(*u) + slots * sizeof(u->devs[0]));
		u->nr_devices = (uint16_t)slots;
		ret = bch_ioctl(h, BCH_IOCTL_USAGE, u);
		if (!ret)
			break;
		free(u);
		/* the kernel says ERANGE (doc/ioctl.md §9.2 bug), the 2018 tool expected ENOSPC */
		if ((ret != -ERANGE && ret != -ENOSPC) || slots >= BCH_CTL_USAGE_DEVS_MAX) {
			online_ioctl_err(h, "BCH_IOCTL_USAGE", ret);
			exit(EXIT_FAIL);
		}
		slots *= 2;
	}
	rows = xcalloc(slots, sizeof(*rows));
	for (i = 0; i < slots; i++) {
		struct dev_row *row = &rows[nr_rows];
		const struct bch_member *m = bch_sb_member(sb, i);
		unsigned g = m ? (unsigned)BCH_MEMBER_GROUP(m) : 0;

		if (!u->devs[i].alive)
			continue;
		row->idx = i;
		row->u = &u->devs[i];
		if (g) {
			struct printbuf l = PRINTBUF;

			bch_sb_disk_group_path(&l, sb, g - 1);
			snprintf(row->label, sizeof(row->label), "%s", printbuf_str(&l));
			printbuf_exit(&l);
		} else {
			strcpy(row->label, "none");
		}
		if (!u->devs[i].dev || !partition_name(u->devs[i].dev, row->name, sizeof(row->name)))
			strcpy(row->name, u->devs[i].dev ? "(device not found)" : "(offline)");
		nr_rows++;
	}
	dev_names(h, rows, nr_rows);
	qsort(rows, nr_rows, sizeof(*rows), row_cmp);
	nr_re = replicas_entries(h, sb, &re);
	space = xcalloc(1, sizeof(*space));
	space_read(h, u, space);
	/* the copygc lines came with the space reply (h->msg until the next call) */
	copygc_read(space->have ? printbuf_str(&h->msg) : "", &gcu);
	rebalance_read(space->have ? printbuf_str(&h->msg) : "", &rbu);
	promote_read(space->have ? printbuf_str(&h->msg) : "", &pmu);
	integrity_read(h, &integ);

	if (json)
		print_json(&out, sb, u, space, rows, nr_rows, re, nr_re);
	else
		print_text(&out, sb, u, space, rows, nr_rows, re, nr_re);
	free(space);
	fputs(printbuf_str(&out), stdout);
	printbuf_exit(&out);
	free(re);
	free(rows);
	free(u);
	free(sb);
	online_close(h);
}

struct fs_usage_args {
	bool	human, json;
};

static const struct cmd_opt fs_usage_opts[] = {
	CMD_OPT_BOOL('h', "human-readable", "sizes with units (K, M, G...) instead of bytes",
		     struct fs_usage_args, human),
	CMD_OPT_BOOL(0, "json", "one JSON object per filesystem (sizes in bytes)",
		     struct fs_usage_args, json),
	{ .name = "help", .help = "display this help and exit", .type = OPT_HELP },
	CMD_OPT_END
};

static const struct cmd_def fs_usage_def = {
	.name		= "fs usage",
	.args		= "[FILESYSTEM]...",
	.about		= "Show the space usage of a filesystem: capacity, used space per data type and\n"
			  "number of replicas, the space of each replicas entry, and per device the\n"
			  "buckets and sectors of each data type.\n"
			  "\n"
			  "FILESYSTEM is the mountpoint or any path inside the mount, the filesystem's\n"
			  "UUID, or the member devices of an unmounted filesystem (DEV[:DEV...]);\n"
			  "default: the current directory.",
	.opts		= fs_usage_opts,
	.help_col	= 24,
};

int cmd_fs_usage(int argc, char *argv[])
{
	struct fs_usage_args a = { 0 };
	int first = cmd_parse(&fs_usage_def, &a, argc, argv);

	human = a.human;
	if (first == argc)
		fs_usage(".", a.json);
	for (int i = first; i < argc; i++)
		fs_usage(argv[i], a.json);
	return EXIT_OK;
}
